//! Packet capture in the classic pcap format (nanosecond timestamps, link type RAW = IPv4),
//! which Wireshark and tshark open directly. One file per captured interface, holding packets
//! sent (at the start of transmission) and received (at the end of reception) there, like a
//! capture taken on that interface of a real host.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use crate::event::NetEvent;
use crate::ids::IfaceId;
use crate::recorder::{Names, TraceEvent, TraceSink};
use crate::time::Instant;

/// Magic number of a pcap file with nanosecond timestamps.
const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_RAW: packets begin with an IPv4 or IPv6 header.
const LINKTYPE_RAW: u32 = 101;
/// Largest packet stored whole.
const SNAPLEN: u32 = 65_535;

/// Writes one pcap file per selected interface.
pub struct PcapSink {
    /// Writer per interface id (None for interfaces not captured).
    writers: Vec<Option<BufWriter<File>>>,
    /// Paths written, in capture order.
    paths: Vec<PathBuf>,
    error: Option<std::io::Error>,
}

impl PcapSink {
    /// Create the files: `(interface, path)` pairs; `n_ifaces` is the number of interfaces
    /// in the network.
    pub fn create(targets: &[(IfaceId, PathBuf)], n_ifaces: usize) -> std::io::Result<Self> {
        let mut writers: Vec<Option<BufWriter<File>>> = (0..n_ifaces).map(|_| None).collect();
        let mut paths = Vec::new();
        for (iface, path) in targets {
            let mut w = BufWriter::with_capacity(1 << 16, File::create(path)?);
            let mut header = Vec::with_capacity(24);
            header.extend_from_slice(&MAGIC_NANOS.to_le_bytes());
            header.extend_from_slice(&2u16.to_le_bytes()); // version 2.4
            header.extend_from_slice(&4u16.to_le_bytes());
            header.extend_from_slice(&0i32.to_le_bytes()); // thiszone
            header.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
            header.extend_from_slice(&SNAPLEN.to_le_bytes());
            header.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
            w.write_all(&header)?;
            writers[iface.index()] = Some(w);
            paths.push(path.clone());
        }
        Ok(PcapSink { writers, paths, error: None })
    }

    /// Paths of the files this sink writes.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    fn write(&mut self, now: Instant, iface: IfaceId, bytes: &[u8]) {
        let Some(Some(w)) = self.writers.get_mut(iface.index()) else { return };
        if self.error.is_some() {
            return;
        }
        let ns = now.as_nanos();
        let caplen = bytes.len().min(SNAPLEN as usize);
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        rec[4..8].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        rec[8..12].copy_from_slice(&(caplen as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
        if let Err(e) = w.write_all(&rec).and_then(|_| w.write_all(&bytes[..caplen])) {
            self.error = Some(e);
        }
    }
}

impl TraceSink for PcapSink {
    fn record(&mut self, now: Instant, event: &TraceEvent<'_>, _names: &Names) {
        if let TraceEvent::Net(NetEvent::Tx { iface, pkt } | NetEvent::Rx { iface, pkt }) = event {
            self.write(now, *iface, &pkt.bytes);
        }
    }

    fn finish(&mut self) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        for w in self.writers.iter_mut().flatten() {
            w.flush()?;
        }
        Ok(())
    }
}
