//! The SCTP packet log (`record.packets`): one row per DATA chunk an association sends and per
//! SACK chunk it receives, in typed columns, for time-sequence graphs (TSN against time, as
//! Wireshark's and tcptrace's stream graphs draw them).
//!
//! The SCTP driver ([`crate::transport::sctp`]) reads the chunks out of the packets it sends
//! and receives ([`PacketLog::scan_sent`], [`PacketLog::scan_received`]); the engine is not
//! asked. A row costs eight numbers, no string: associations are named once
//! (`PacketLog::association`) and rows carry the name's index.
//!
//! A DATA chunk is a retransmission when its TSN is not beyond the highest TSN the association
//! sent before (TSNs are assigned in sending order, RFC 9260 §6.1, and compared in serial
//! number arithmetic, §1.6 / RFC 1982).

use sctp::wire::{Chunk, ChunkType, DataRef, HeaderView};

use crate::time::Instant;

/// What a row records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PacketKind {
    /// A DATA chunk sent (RFC 9260 §3.3.1).
    Data = 0,
    /// A SACK chunk received (§3.3.4).
    Sack = 1,
}

/// A path index for a row whose path the association does not know (a SACK from an address
/// that is not one of the peer's).
pub const NO_PATH: u32 = u32::MAX;

/// The packet log: column vectors of equal length, one row per DATA chunk sent or SACK chunk
/// received. Columns that do not apply to a row's kind hold 0.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PacketLog {
    /// Association names (as in results: the application's name, `<name>/assoc<k>`); a row's
    /// `assoc` indexes this list.
    pub assoc_names: Vec<String>,
    /// Time of each row in nanoseconds.
    pub time_ns: Vec<u64>,
    /// Association of each row (index into `assoc_names`).
    pub assoc: Vec<u32>,
    /// Path of each row: the `sctp::PathId` index (as in `<name>/path<i>`), [`NO_PATH`] if
    /// unknown. A DATA chunk's path is its destination, a SACK's the address it came from.
    pub path: Vec<u32>,
    /// [`PacketKind`] of each row, as its `u8` value.
    pub kind: Vec<u8>,
    /// DATA: the chunk's TSN; SACK: its Cumulative TSN Ack.
    pub tsn: Vec<u32>,
    /// DATA: the TSN was sent before (a retransmission); SACK: false.
    pub retransmission: Vec<bool>,
    /// DATA: user data bytes in the chunk; SACK: 0.
    pub length: Vec<u32>,
    /// SACK: the advertised receiver window credit (a_rwnd) in bytes; DATA: 0.
    pub a_rwnd: Vec<u32>,
    /// SACK: the highest TSN it reports received (the end of its last Gap Ack Block, or the
    /// Cumulative TSN Ack when it has none); DATA: the chunk's TSN.
    pub highest_tsn: Vec<u32>,
}

/// Per association state of the log: its name's index and the highest TSN it sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AssocLog {
    index: Option<u32>,
    highest_sent: Option<u32>,
}

impl PacketLog {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    /// True if no row was recorded.
    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// The index of association `name` for [`AssocLog`], registered on first use.
    fn association(&mut self, state: &mut AssocLog, name: &str) -> u32 {
        *state.index.get_or_insert_with(|| {
            self.assoc_names.push(name.to_string());
            self.assoc_names.len() as u32 - 1
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn row(
        &mut self,
        now: Instant,
        assoc: u32,
        path: u32,
        kind: PacketKind,
        tsn: u32,
        retransmission: bool,
        length: u32,
        a_rwnd: u32,
        highest_tsn: u32,
    ) {
        self.time_ns.push(now.as_nanos());
        self.assoc.push(assoc);
        self.path.push(path);
        self.kind.push(kind as u8);
        self.tsn.push(tsn);
        self.retransmission.push(retransmission);
        self.length.push(length);
        self.a_rwnd.push(a_rwnd);
        self.highest_tsn.push(highest_tsn);
    }

    /// Logs the DATA chunks of an SCTP packet association `name` sends to `path` at `now`.
    /// Malformed bytes end the scan (the engine built them, so they are not expected).
    pub fn scan_sent(&mut self, now: Instant, state: &mut AssocLog, name: &str, path: u32, packet: &[u8]) {
        let Ok(header) = HeaderView::new_checked(packet) else { return };
        for view in header.chunks() {
            let Ok(view) = view else { return };
            let Some(data) = DataRef::from_view(&view) else { continue };
            let tsn = data.tsn;
            let retransmission = state.highest_sent.is_some_and(|h| !tsn_after(tsn, h));
            if !retransmission {
                state.highest_sent = Some(tsn);
            }
            let assoc = self.association(state, name);
            let length = u32::try_from(data.user_data.len()).unwrap_or(u32::MAX);
            self.row(now, assoc, path, PacketKind::Data, tsn, retransmission, length, 0, tsn);
        }
    }

    /// Logs the SACK chunks of an SCTP packet association `name` received from `path` at
    /// `now`. Malformed chunks are skipped (the engine answers them, not the log).
    pub fn scan_received(&mut self, now: Instant, state: &mut AssocLog, name: &str, path: u32, packet: &[u8]) {
        let Ok(header) = HeaderView::new_checked(packet) else { return };
        for view in header.chunks() {
            let Ok(view) = view else { return };
            if view.chunk_type != ChunkType::SACK {
                continue;
            }
            let Ok(Chunk::Sack(sack)) = Chunk::parse(&view) else { continue };
            let cum = sack.cumulative_tsn_ack;
            // §3.3.4: Gap Ack Block offsets are relative to the Cumulative TSN Ack.
            let highest = sack.gap_ack_blocks.iter().map(|b| cum.wrapping_add(u32::from(b.end))).fold(cum, |h, t| {
                if tsn_after(t, h) {
                    t
                } else {
                    h
                }
            });
            let assoc = self.association(state, name);
            self.row(now, assoc, path, PacketKind::Sack, cum, false, 0, sack.a_rwnd, highest);
        }
    }
}

/// `a` comes after `b` in serial number arithmetic (RFC 9260 §1.6, RFC 1982).
fn tsn_after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use sctp::wire::{CommonHeader, DataChunk, GapAckBlock, Packet, SackChunk};

    fn packet(chunks: Vec<Chunk>) -> Vec<u8> {
        Packet { header: CommonHeader { src_port: 1, dst_port: 2, verification_tag: 3 }, chunks }.emit()
    }

    fn data(tsn: u32, len: usize) -> Chunk {
        Chunk::Data(DataChunk { tsn, user_data: vec![0; len], beginning: true, ending: true, ..Default::default() })
    }

    #[test]
    fn data_rows_flag_retransmissions_across_the_tsn_wrap() {
        let mut log = PacketLog::default();
        let mut a = AssocLog::default();
        let t = |ms: u64| Instant(ms * 1_000_000);
        log.scan_sent(t(1), &mut a, "up", 0, &packet(vec![data(u32::MAX, 100), data(0, 50)]));
        log.scan_sent(t(2), &mut a, "up", 1, &packet(vec![data(u32::MAX, 100), data(1, 10)]));
        assert_eq!(log.assoc_names, ["up"]);
        assert_eq!(log.tsn, [u32::MAX, 0, u32::MAX, 1]);
        assert_eq!(log.retransmission, [false, false, true, false]);
        assert_eq!(log.path, [0, 0, 1, 1]);
        assert_eq!(log.length, [100, 50, 100, 10]);
        assert_eq!(log.time_ns, [1_000_000, 1_000_000, 2_000_000, 2_000_000]);
        assert!(log.kind.iter().all(|&k| k == PacketKind::Data as u8));
    }

    #[test]
    fn sack_rows_carry_the_cumulative_ack_window_and_highest_gap_acked_tsn() {
        let mut log = PacketLog::default();
        let (mut a, mut b) = (AssocLog::default(), AssocLog::default());
        let sack = |cum: u32, gaps: Vec<GapAckBlock>| {
            Chunk::Sack(SackChunk { cumulative_tsn_ack: cum, a_rwnd: 9000, gap_ack_blocks: gaps, ..Default::default() })
        };
        let gaps = vec![GapAckBlock { start: 2, end: 3 }, GapAckBlock { start: 5, end: 9 }];
        log.scan_received(Instant(5), &mut a, "up", 1, &packet(vec![sack(100, gaps)]));
        // A DATA chunk in a received packet is not logged; a second association gets its own
        // index.
        log.scan_received(Instant(6), &mut b, "other", NO_PATH, &packet(vec![data(7, 10), sack(u32::MAX, vec![])]));
        assert_eq!(log.assoc_names, ["up", "other"]);
        assert_eq!(log.assoc, [0, 1]);
        assert_eq!(log.tsn, [100, u32::MAX]);
        assert_eq!(log.highest_tsn, [109, u32::MAX]);
        assert_eq!(log.a_rwnd, [9000, 9000]);
        assert_eq!(log.path, [1, NO_PATH]);
        assert_eq!(log.kind, [PacketKind::Sack as u8; 2]);
    }

    #[test]
    fn malformed_bytes_log_nothing() {
        let mut log = PacketLog::default();
        let mut a = AssocLog::default();
        log.scan_sent(Instant(0), &mut a, "up", 0, &[1, 2, 3]);
        log.scan_received(Instant(0), &mut a, "up", 0, &[0; 12 + 3]);
        assert!(log.is_empty());
        assert!(log.assoc_names.is_empty());
    }
}
