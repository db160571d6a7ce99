//! The receiving half of an association: TSN bookkeeping (cumulative TSN, gaps, duplicates),
//! reassembly of fragments, per-stream ordering, the receive buffer behind a_rwnd, and the
//! SACK policy (RFC 9260 §6.2, §6.5, §6.6, §6.7, §6.9).

use std::collections::{BTreeMap, VecDeque};

use crate::wire::{DataRef, GapAckBlock, SackChunk};

use super::buffers::BufferPool;
use super::outbound::Fragment;
use super::tsn::{tsn_gt, tsn_le};

/// A complete user message, ready for the application.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Stream identifier.
    pub stream: u16,
    /// Payload protocol identifier.
    pub ppid: u32,
    /// Delivered without regard to stream order.
    pub unordered: bool,
    /// The user data.
    pub data: Vec<u8>,
}

/// What happened to one received DATA chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DataOutcome {
    /// New, kept.
    Accepted,
    /// Already received (reported in the next SACK's duplicate TSNs).
    Duplicate,
    /// No buffer space and beyond the highest TSN received (§6.2): dropped unacknowledged.
    NoSpace,
    /// Stream identifier not negotiated (§6.5): acknowledged, data discarded.
    InvalidStream,
}

#[derive(Debug, Default)]
struct InStream {
    next_ssn: u16,
    /// Complete ordered messages waiting for earlier SSNs.
    waiting: BTreeMap<u16, Message>,
}

/// Receiver state.
#[derive(Debug)]
pub(crate) struct Inbound {
    /// Cumulative TSN: every TSN up to it has arrived.
    pub(crate) cum_tsn: u32,
    /// 64-bit position of `cum_tsn` (TSNs wrap at 2^32; reassembly keys must not).
    cum_pos: u64,
    /// Received TSN ranges above cum_tsn + 1: sorted, disjoint, not adjacent.
    gaps: Vec<(u32, u32)>,
    /// Duplicate TSNs since the last SACK (§6.2, at most a packet's worth).
    dups: Vec<u32>,
    /// Highest TSN received.
    highest: u32,
    streams: Vec<InStream>,
    fragments: BTreeMap<u64, Fragment>,
    ready: VecDeque<Message>,
    /// User-data bytes held (fragments, waiting and ready messages).
    held: u32,
    capacity: u32,
    /// a_rwnd in the last SACK sent.
    last_advertised: u32,
    // SACK policy (§6.2).
    packets_since_sack: u32,
    sack_now: bool,
    /// Bytes delivered to the application so far.
    pub(crate) delivered_bytes: u64,
    /// Messages delivered to the application so far.
    pub(crate) delivered_messages: u64,
}

impl Inbound {
    /// Receiver for a peer whose first TSN is `initial_tsn`, with `streams` inbound streams
    /// and a receive buffer of `capacity` bytes.
    pub(crate) fn new(initial_tsn: u32, streams: u16, capacity: u32) -> Self {
        let cum_tsn = initial_tsn.wrapping_sub(1);
        Inbound {
            cum_tsn,
            cum_pos: u64::from(u32::MAX),
            gaps: Vec::new(),
            dups: Vec::new(),
            highest: cum_tsn,
            streams: (0..streams).map(|_| InStream::default()).collect(),
            fragments: BTreeMap::new(),
            ready: VecDeque::new(),
            held: 0,
            capacity,
            last_advertised: capacity,
            packets_since_sack: 0,
            sack_now: false,
            delivered_bytes: 0,
            delivered_messages: 0,
        }
    }

    /// Takes over from the receiver of a restarted association (§5.2.4 action A) the messages
    /// ready for the application and not read yet (complete and, on ordered streams, in
    /// order), and the delivery counters. Fragments, and complete messages waiting for an
    /// earlier one, are dropped: the old peer will not send what they lack. The window last
    /// advertised is the space the inherited messages leave (what the INIT ACK offered,
    /// §5.2.2), so reading them makes a window update due (§6.2.1).
    pub(crate) fn inherit_unread(&mut self, old: Inbound) {
        self.held = old.ready.iter().map(|m| m.data.len() as u32).sum();
        self.ready = old.ready;
        self.last_advertised = self.a_rwnd();
        self.delivered_bytes = old.delivered_bytes;
        self.delivered_messages = old.delivered_messages;
    }

    /// Number of inbound streams.
    pub(crate) fn stream_count(&self) -> u16 {
        self.streams.len() as u16
    }

    /// Current a_rwnd (§6.2.1): buffer space not held by undelivered data.
    pub(crate) fn a_rwnd(&self) -> u32 {
        self.capacity.saturating_sub(self.held)
    }

    /// Bytes held for the application.
    pub(crate) fn held(&self) -> u32 {
        self.held
    }

    fn is_received(&self, tsn: u32) -> bool {
        tsn_le(tsn, self.cum_tsn) || self.gaps.iter().any(|&(a, b)| tsn_le(a, tsn) && tsn_le(tsn, b))
    }

    /// Takes one DATA chunk (stream id already validated), copying its data into a buffer
    /// from `buffers`.
    pub(crate) fn on_data(&mut self, d: &DataRef<'_>, buffers: &mut BufferPool) -> DataOutcome {
        if self.is_received(d.tsn) {
            if self.dups.len() < 64 {
                self.dups.push(d.tsn);
            }
            self.sack_now = true;
            return DataOutcome::Duplicate;
        }
        let len = d.user_data.len() as u32;
        // §6.2: with no room, drop new chunks beyond the highest TSN received so far.
        if self.held + len > self.capacity && tsn_gt(d.tsn, self.highest) {
            return DataOutcome::NoSpace;
        }
        let had_gaps = !self.gaps.is_empty();
        // The 64-bit position is taken before the cumulative TSN moves past this TSN.
        let pos = self.position(d.tsn);
        self.record_tsn(d.tsn);
        if tsn_gt(d.tsn, self.highest) {
            self.highest = d.tsn;
        }
        // §6.7: out-of-order arrival, or a chunk filling a gap, is acknowledged at once.
        if had_gaps || !self.gaps.is_empty() || d.immediate {
            self.sack_now = true;
        }
        if usize::from(d.stream_id) >= self.streams.len() {
            return DataOutcome::InvalidStream;
        }
        self.held += len;
        let frag = Fragment::from_data(d, buffers);
        if d.beginning && d.ending {
            self.complete(
                Message { stream: frag.stream, ppid: frag.ppid, unordered: frag.unordered, data: frag.data },
                frag.ssn,
            );
        } else {
            self.fragments.insert(pos, frag);
            self.try_reassemble(pos);
        }
        DataOutcome::Accepted
    }

    /// 64-bit position of a TSN at or above the cumulative TSN.
    fn position(&self, tsn: u32) -> u64 {
        self.cum_pos.wrapping_add(u64::from(tsn.wrapping_sub(self.cum_tsn)))
    }

    fn record_tsn(&mut self, tsn: u32) {
        if tsn == self.cum_tsn.wrapping_add(1) {
            self.advance_cum(tsn);
            while let Some(&(a, b)) = self.gaps.first() {
                if a != self.cum_tsn.wrapping_add(1) {
                    break;
                }
                self.advance_cum(b);
                self.gaps.remove(0);
            }
            return;
        }
        // Insert into the sorted range list, merging neighbours. Gaps are few; scan from the
        // end, where new TSNs usually land.
        let mut i = self.gaps.len();
        while i > 0 && tsn_gt(self.gaps[i - 1].0, tsn) {
            i -= 1;
        }
        let joins_prev = i > 0 && self.gaps[i - 1].1.wrapping_add(1) == tsn;
        let joins_next = i < self.gaps.len() && tsn.wrapping_add(1) == self.gaps[i].0;
        match (joins_prev, joins_next) {
            (true, true) => {
                self.gaps[i - 1].1 = self.gaps[i].1;
                self.gaps.remove(i);
            }
            (true, false) => self.gaps[i - 1].1 = tsn,
            (false, true) => self.gaps[i].0 = tsn,
            (false, false) => self.gaps.insert(i, (tsn, tsn)),
        }
    }

    fn advance_cum(&mut self, to: u32) {
        self.cum_pos = self.position(to);
        self.cum_tsn = to;
    }

    /// Assembles the message around the fragment at `pos` if all its fragments are here
    /// (§6.9: fragments of one message carry consecutive TSNs, B on the first, E on the last).
    fn try_reassemble(&mut self, pos: u64) {
        let mut first = pos;
        loop {
            match self.fragments.get(&first) {
                Some(f) if f.beginning => break,
                Some(_) if first > 0 && self.fragments.contains_key(&(first - 1)) => first -= 1,
                _ => return,
            }
        }
        let mut last = pos;
        loop {
            match self.fragments.get(&last) {
                Some(f) if f.ending => break,
                Some(_) if self.fragments.contains_key(&(last + 1)) => last += 1,
                _ => return,
            }
        }
        let mut parts = (first..=last).filter_map(|p| self.fragments.remove(&p));
        let Some(head) = parts.next() else { return };
        let mut data = head.data;
        for part in parts {
            data.extend_from_slice(&part.data);
        }
        self.complete(Message { stream: head.stream, ppid: head.ppid, unordered: head.unordered, data }, head.ssn);
    }

    /// A whole message: unordered ones are ready at once, ordered ones in SSN order (§6.6).
    fn complete(&mut self, msg: Message, ssn: u16) {
        if msg.unordered {
            self.ready.push_back(msg);
            return;
        }
        let Some(stream) = self.streams.get_mut(usize::from(msg.stream)) else { return };
        if ssn != stream.next_ssn {
            stream.waiting.insert(ssn, msg);
            return;
        }
        self.ready.push_back(msg);
        stream.next_ssn = stream.next_ssn.wrapping_add(1);
        while let Some(next) = stream.waiting.remove(&stream.next_ssn) {
            self.ready.push_back(next);
            stream.next_ssn = stream.next_ssn.wrapping_add(1);
        }
    }

    /// True if a message is ready for the application.
    pub(crate) fn readable(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Hands the next ready message to the application and frees its buffer space.
    pub(crate) fn read(&mut self) -> Option<Message> {
        let msg = self.ready.pop_front()?;
        let len = msg.data.len() as u32;
        self.held = self.held.saturating_sub(len);
        self.delivered_bytes += u64::from(len);
        self.delivered_messages += 1;
        Some(msg)
    }

    /// Size of the next ready message.
    pub(crate) fn peek_len(&self) -> Option<usize> {
        self.ready.front().map(|m| m.data.len())
    }

    /// Notes a received packet that carried DATA; returns true if a SACK is due now
    /// (§6.2: at least every second packet, at once on gaps and duplicates); otherwise the
    /// association runs its delayed-SACK timer.
    pub(crate) fn on_data_packet(&mut self, sack_freq: u32) -> bool {
        self.packets_since_sack += 1;
        if self.packets_since_sack >= sack_freq {
            self.sack_now = true;
        }
        self.sack_now
    }

    /// True if a SACK should go out with the next packet (the delayed-SACK timer aside).
    pub(crate) fn sack_due(&self) -> bool {
        self.sack_now
    }

    /// Asks for a SACK at the next transmission (window updates, SHUTDOWN handling).
    pub(crate) fn request_sack(&mut self) {
        self.sack_now = true;
    }

    /// A window update is worth sending: the window grew by at least min(one MTU, half the
    /// buffer) since it was last advertised (receiver-side silly-window avoidance).
    pub(crate) fn window_update_due(&self, mtu: u32) -> bool {
        self.a_rwnd() >= self.last_advertised + mtu.min(self.capacity / 2)
    }

    /// Builds the SACK (§3.3.4) and resets the SACK policy. At most `max_blocks` gap ack
    /// blocks are reported (the lowest ones).
    pub(crate) fn make_sack(&mut self, max_blocks: usize) -> SackChunk {
        let cum = self.cum_tsn;
        let gap_ack_blocks = self
            .gaps
            .iter()
            .take(max_blocks)
            .filter_map(|&(a, b)| {
                let start = u16::try_from(a.wrapping_sub(cum)).ok()?;
                let end = u16::try_from(b.wrapping_sub(cum)).ok()?;
                Some(GapAckBlock { start, end })
            })
            .collect();
        self.packets_since_sack = 0;
        self.sack_now = false;
        self.last_advertised = self.a_rwnd();
        SackChunk {
            cumulative_tsn_ack: cum,
            a_rwnd: self.last_advertised,
            gap_ack_blocks,
            duplicate_tsns: std::mem::take(&mut self.dups),
        }
    }

    /// True if nothing is missing below the highest TSN received.
    #[cfg(test)]
    pub(crate) fn in_order(&self) -> bool {
        self.gaps.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes a chunk with a fresh buffer pool.
    fn on_data(r: &mut Inbound, d: &DataRef<'_>) -> DataOutcome {
        r.on_data(d, &mut BufferPool::new(1500))
    }

    fn data(tsn: u32, ssn: u16, b: bool, e: bool, payload: &[u8]) -> DataRef<'_> {
        DataRef {
            immediate: false,
            unordered: false,
            beginning: b,
            ending: e,
            tsn,
            stream_id: 0,
            ssn,
            ppid: 0,
            user_data: payload,
        }
    }

    #[test]
    fn gaps_duplicates_and_cumulative_tsn_across_the_wrap() {
        let first = u32::MAX - 2;
        let mut r = Inbound::new(first, 1, 100_000);
        assert_eq!(on_data(&mut r, &data(first, 0, true, true, b"a")), DataOutcome::Accepted);
        assert_eq!(on_data(&mut r, &data(first.wrapping_add(2), 2, true, true, b"c")), DataOutcome::Accepted);
        assert_eq!(on_data(&mut r, &data(first.wrapping_add(4), 4, true, true, b"e")), DataOutcome::Accepted);
        assert_eq!(on_data(&mut r, &data(first, 0, true, true, b"a")), DataOutcome::Duplicate);
        let sack = r.make_sack(16);
        assert_eq!(sack.cumulative_tsn_ack, first);
        assert_eq!(sack.gap_ack_blocks, vec![GapAckBlock { start: 2, end: 2 }, GapAckBlock { start: 4, end: 4 }]);
        assert_eq!(sack.duplicate_tsns, vec![first]);
        on_data(&mut r, &data(first.wrapping_add(1), 1, true, true, b"b"));
        on_data(&mut r, &data(first.wrapping_add(3), 3, true, true, b"d"));
        assert_eq!(r.cum_tsn, first.wrapping_add(4));
        assert!(r.in_order());
        let got: Vec<u8> = std::iter::from_fn(|| r.read()).flat_map(|m| m.data).collect();
        assert_eq!(got, b"abcde");
    }

    #[test]
    fn reassembles_fragments_in_any_order_and_orders_by_ssn() {
        let mut r = Inbound::new(10, 1, 100_000);
        on_data(&mut r, &data(13, 1, true, true, b"X"));
        on_data(&mut r, &data(12, 0, false, true, b"3"));
        on_data(&mut r, &data(10, 0, true, false, b"1"));
        assert!(!r.readable());
        on_data(&mut r, &data(11, 0, false, false, b"2"));
        assert_eq!(r.read().map(|m| m.data), Some(b"123".to_vec()));
        assert_eq!(r.read().map(|m| m.data), Some(b"X".to_vec()));
        assert_eq!(r.held(), 0);
    }

    #[test]
    fn full_buffer_drops_new_tsns_beyond_the_highest() {
        let mut r = Inbound::new(1, 1, 1500);
        let big = vec![0u8; 1000];
        assert_eq!(on_data(&mut r, &data(1, 0, true, true, &big)), DataOutcome::Accepted);
        assert_eq!(on_data(&mut r, &data(2, 1, true, true, &big)), DataOutcome::NoSpace);
        assert_eq!(r.a_rwnd(), 500);
        r.read();
        assert_eq!(r.a_rwnd(), 1500);
        assert!(r.window_update_due(1500) || r.last_advertised == 1500);
    }
}
