//! A capture of the packets the driver sent and received, as they were on the wire: IPv4,
//! UDP (RFC 6951 encapsulation) and the SCTP packet, in the classic pcap format with
//! nanosecond timestamps and link type RAW (as the simulator's captures), so Wireshark and
//! tshark decode them (`tshark -d udp.port==9899,sctp` when the port is not 9899's default
//! heuristic).
//!
//! The IPv4 and UDP headers are written by the driver, not read from the kernel: they carry
//! the addresses and ports the packet was sent from and to, the UDP checksum zero (allowed
//! for IPv4, RFC 768) and a correct IPv4 header checksum.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::SocketAddrV4;
use std::path::{Path, PathBuf};

/// Magic number of a pcap file with nanosecond timestamps.
const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_RAW: packets begin with an IPv4 header.
const LINKTYPE_RAW: u32 = 101;
/// Largest packet stored whole.
const SNAPLEN: u32 = 65_535;
/// IPv4 header (no options) and UDP header.
pub(crate) const HEADERS_LEN: usize = 28;

/// Writes one pcap file.
pub struct PcapWriter {
    w: BufWriter<File>,
    path: PathBuf,
    error: Option<std::io::Error>,
    ip_id: u16,
}

impl std::fmt::Debug for PcapWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PcapWriter").field("path", &self.path).finish()
    }
}

impl PcapWriter {
    /// Creates the file and writes its header.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        let mut w = BufWriter::with_capacity(1 << 16, File::create(path)?);
        w.write_all(&MAGIC_NANOS.to_le_bytes())?;
        w.write_all(&2u16.to_le_bytes())?; // version 2.4
        w.write_all(&4u16.to_le_bytes())?;
        w.write_all(&0i32.to_le_bytes())?; // thiszone
        w.write_all(&0u32.to_le_bytes())?; // sigfigs
        w.write_all(&SNAPLEN.to_le_bytes())?;
        w.write_all(&LINKTYPE_RAW.to_le_bytes())?;
        Ok(PcapWriter { w, path: path.to_path_buf(), error: None, ip_id: 0 })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records an SCTP packet sent from `src` to `dst` over UDP at `epoch_ns` (nanoseconds
    /// since the Unix epoch).
    pub fn record(&mut self, epoch_ns: u64, src: SocketAddrV4, dst: SocketAddrV4, sctp: &[u8]) {
        if self.error.is_some() {
            return;
        }
        let mut headers = [0u8; HEADERS_LEN];
        self.ip_id = self.ip_id.wrapping_add(1);
        write_headers(&mut headers, src, dst, sctp.len(), self.ip_id);
        let len = HEADERS_LEN + sctp.len();
        let caplen = len.min(SNAPLEN as usize);
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&((epoch_ns / 1_000_000_000) as u32).to_le_bytes());
        rec[4..8].copy_from_slice(&((epoch_ns % 1_000_000_000) as u32).to_le_bytes());
        rec[8..12].copy_from_slice(&(caplen as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&(len as u32).to_le_bytes());
        let body = &sctp[..caplen - HEADERS_LEN];
        if let Err(e) =
            self.w.write_all(&rec).and_then(|()| self.w.write_all(&headers)).and_then(|()| self.w.write_all(body))
        {
            self.error = Some(e);
        }
    }

    /// Flushes the file; reports the first write error, if any.
    pub fn finish(&mut self) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.w.flush()
    }
}

/// Writes an IPv4 header (no options, TTL 64, protocol UDP, checksum computed) and a UDP
/// header (checksum zero) for a payload of `payload_len` bytes into `out`.
fn write_headers(out: &mut [u8; HEADERS_LEN], src: SocketAddrV4, dst: SocketAddrV4, payload_len: usize, id: u16) {
    let total = (HEADERS_LEN + payload_len).min(usize::from(u16::MAX)) as u16;
    out[0] = 0x45;
    out[2..4].copy_from_slice(&total.to_be_bytes());
    out[4..6].copy_from_slice(&id.to_be_bytes());
    out[6] = 0x40; // don't fragment
    out[8] = 64;
    out[9] = 17;
    out[12..16].copy_from_slice(&src.ip().octets());
    out[16..20].copy_from_slice(&dst.ip().octets());
    let sum = ipv4_checksum(&out[..20]);
    out[10..12].copy_from_slice(&sum.to_be_bytes());
    out[20..22].copy_from_slice(&src.port().to_be_bytes());
    out[22..24].copy_from_slice(&dst.port().to_be_bytes());
    let udp_len = (8 + payload_len).min(usize::from(u16::MAX)) as u16;
    out[24..26].copy_from_slice(&udp_len.to_be_bytes());
}

/// The RFC 1071 checksum of an IPv4 header whose checksum field is zero.
fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header.chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]))).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn header_checksum_verifies() {
        let mut h = [0u8; HEADERS_LEN];
        let a = SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 1), 9899);
        let b = SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 2), 9900);
        write_headers(&mut h, a, b, 100, 7);
        // A header with its checksum in place sums to zero.
        assert_eq!(ipv4_checksum(&h[..20]), 0);
        assert_eq!(u16::from_be_bytes([h[2], h[3]]), 128);
        assert_eq!(u16::from_be_bytes([h[24], h[25]]), 108);
        assert_eq!(u16::from_be_bytes([h[22], h[23]]), 9900);
    }
}
