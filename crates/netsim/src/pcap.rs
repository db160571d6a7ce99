//! Packet capture in the classic pcap format (nanosecond timestamps), which Wireshark and
//! tshark open directly. [`PcapSink`]: one file per captured interface (link type RAW =
//! IPv4), holding packets sent (at the start of transmission) and received (at the end of
//! reception) there, like a capture taken on that interface of a real host. [`RadiotapSink`]:
//! one file per captured WLAN channel (link type IEEE 802.11 + radiotap), every frame on its
//! air at the start of its transmission, like a monitor-mode capture on that channel.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::event::NetEvent;
use crate::ids::IfaceId;
use crate::recorder::{Names, TraceEvent, TraceSink};
use crate::time::Instant;
use crate::wlan::radiotap::{encode, LINKTYPE_IEEE802_11_RADIOTAP};

/// Magic number of a pcap file with nanosecond timestamps.
const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_RAW: packets begin with an IPv4 or IPv6 header.
const LINKTYPE_RAW: u32 = 101;
/// Largest packet stored whole.
const SNAPLEN: u32 = 65_535;

/// A pcap file: its header written, then one record per packet.
struct PcapFile {
    w: BufWriter<File>,
}

impl PcapFile {
    fn create(path: &Path, linktype: u32) -> std::io::Result<Self> {
        let mut w = BufWriter::with_capacity(1 << 16, File::create(path)?);
        let mut header = Vec::with_capacity(24);
        header.extend_from_slice(&MAGIC_NANOS.to_le_bytes());
        header.extend_from_slice(&2u16.to_le_bytes()); // version 2.4
        header.extend_from_slice(&4u16.to_le_bytes());
        header.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        header.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        header.extend_from_slice(&SNAPLEN.to_le_bytes());
        header.extend_from_slice(&linktype.to_le_bytes());
        w.write_all(&header)?;
        Ok(PcapFile { w })
    }

    fn write(&mut self, now: Instant, bytes: &[u8]) -> std::io::Result<()> {
        let ns = now.as_nanos();
        let caplen = bytes.len().min(SNAPLEN as usize);
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        rec[4..8].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        rec[8..12].copy_from_slice(&(caplen as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
        self.w.write_all(&rec)?;
        self.w.write_all(&bytes[..caplen])
    }
}

/// Pcap files indexed by an entity's id (an interface, a WLAN channel), and the first write
/// error (reported at the end of the run).
struct PcapFiles {
    files: Vec<Option<PcapFile>>,
    paths: Vec<PathBuf>,
    error: Option<std::io::Error>,
}

impl PcapFiles {
    fn create(targets: &[(usize, PathBuf)], n: usize, linktype: u32) -> std::io::Result<Self> {
        let mut files: Vec<Option<PcapFile>> = (0..n).map(|_| None).collect();
        let mut paths = Vec::new();
        for (i, path) in targets {
            files[*i] = Some(PcapFile::create(path, linktype)?);
            paths.push(path.clone());
        }
        Ok(PcapFiles { files, paths, error: None })
    }

    fn write(&mut self, now: Instant, i: usize, bytes: &[u8]) {
        let Some(Some(f)) = self.files.get_mut(i) else { return };
        if self.error.is_none() {
            if let Err(e) = f.write(now, bytes) {
                self.error = Some(e);
            }
        }
    }

    fn finish(&mut self) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        for f in self.files.iter_mut().flatten() {
            f.w.flush()?;
        }
        Ok(())
    }
}

/// Writes one pcap file per selected interface.
pub struct PcapSink(PcapFiles);

impl PcapSink {
    /// Create the files: `(interface, path)` pairs; `n_ifaces` is the number of interfaces
    /// in the network.
    pub fn create(targets: &[(IfaceId, PathBuf)], n_ifaces: usize) -> std::io::Result<Self> {
        let targets: Vec<_> = targets.iter().map(|(i, p)| (i.index(), p.clone())).collect();
        Ok(PcapSink(PcapFiles::create(&targets, n_ifaces, LINKTYPE_RAW)?))
    }

    /// Paths of the files this sink writes.
    pub fn paths(&self) -> &[PathBuf] {
        &self.0.paths
    }
}

impl TraceSink for PcapSink {
    fn wants(&self, kind: &str) -> bool {
        kind == "tx" || kind == "rx"
    }

    fn record(&mut self, now: Instant, event: &TraceEvent<'_>, _names: &Names) {
        if let TraceEvent::Net(NetEvent::Tx { iface, pkt } | NetEvent::Rx { iface, pkt }) = event {
            self.0.write(now, iface.index(), &pkt.bytes);
        }
    }

    fn finish(&mut self) -> std::io::Result<()> {
        self.0.finish()
    }
}

/// Writes one pcap file per selected WLAN channel: every frame on its air, with a radiotap
/// header ([`crate::wlan::radiotap`]), as a monitor-mode capture on that channel would.
pub struct RadiotapSink(PcapFiles);

impl RadiotapSink {
    /// Create the files: `(channel index, path)` pairs; `n_channels` is the number of WLAN
    /// channels in the network. The channels must capture their air
    /// ([`crate::world::WorldBuilder::capture_air`]).
    pub fn create(targets: &[(u32, PathBuf)], n_channels: usize) -> std::io::Result<Self> {
        let targets: Vec<_> = targets.iter().map(|(m, p)| (*m as usize, p.clone())).collect();
        Ok(RadiotapSink(PcapFiles::create(&targets, n_channels, LINKTYPE_IEEE802_11_RADIOTAP)?))
    }
}

impl TraceSink for RadiotapSink {
    fn wants(&self, kind: &str) -> bool {
        kind == "air"
    }

    fn record(&mut self, now: Instant, event: &TraceEvent<'_>, _names: &Names) {
        if let TraceEvent::Air { medium, channel, frame } = event {
            self.0.write(now, *medium as usize, &encode(frame, *medium, *channel));
        }
    }

    fn finish(&mut self) -> std::io::Result<()> {
        self.0.finish()
    }
}
