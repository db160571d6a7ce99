//! The receiving half of an association: TSN bookkeeping (cumulative TSN, gaps, duplicates),
//! reassembly of fragments, per-stream ordering, the receive buffer behind a_rwnd, and the
//! SACK policy (RFC 9260 §6.2, §6.5, §6.6, §6.7, §6.9).

use std::collections::{BTreeMap, VecDeque};

use crate::cmt::dac_flags;
use crate::wire::{DataRef, GapAckBlock, SackChunk};

use super::buffers::BufferPool;
use super::outbound::Fragment;
use super::tsn::{tsn_gt, tsn_le};

/// A user message, or a part of one, ready for the application.
///
/// A message is handed over whole, except when the receive buffer fills with the first
/// fragments of a message that cannot be completed without more room: then the receiver
/// hands its received beginning over early (partial delivery, RFC 9260 §6.9), and the rest
/// follows in further parts, in order, with no other message of its stream in between. The
/// last (or only) part has `end_of_message` set (`MSG_EOR` in the sockets API, RFC 6458).
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
    /// True for a whole message and for the last part of a partially delivered one.
    pub end_of_message: bool,
}

/// A message ready for the application, its data `msg.data[start..]`: all of it, or what
/// follows the headers of the datagram it stayed in ([`Inbound::keep_in`]).
#[derive(Debug)]
struct Ready {
    msg: Message,
    start: usize,
}

impl Ready {
    fn whole(msg: Message) -> Self {
        Ready { msg, start: 0 }
    }

    fn len(&self) -> usize {
        self.msg.data.len().saturating_sub(self.start)
    }
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
    /// Go-back-N (`Config::go_back_n`): above the next expected TSN, discarded
    /// unacknowledged.
    OutOfOrder,
}

/// A message being handed over in parts (§6.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PartialDelivery {
    stream: u16,
    ssn: u16,
    unordered: bool,
    /// Position (64-bit TSN) of the next fragment to hand over.
    next: u64,
}

#[derive(Debug, Default)]
struct InStream {
    next_ssn: u16,
    /// Complete ordered messages waiting for earlier SSNs.
    waiting: Waiting,
}

impl InStream {
    /// The next message in order if it is waiting (the SSN advances past it). A waiting
    /// message whose SSN the stream has already passed (a peer repeating an SSN) can never
    /// be delivered in order: it is dropped, and its size returned in `dropped`.
    fn take_next(&mut self, dropped: &mut u32) -> Option<Message> {
        loop {
            let &(ssn, _) = self.waiting.0.front()?;
            let offset = ssn.wrapping_sub(self.next_ssn);
            if offset >= 0x8000 {
                if let Some((_, stale)) = self.waiting.0.pop_front() {
                    *dropped += stale.data.len() as u32;
                }
                continue;
            }
            if offset != 0 {
                return None;
            }
            self.next_ssn = self.next_ssn.wrapping_add(1);
            return self.waiting.0.pop_front().map(|(_, m)| m);
        }
    }
}

/// Complete ordered messages of one stream waiting for an earlier SSN, in SSN order counted
/// from the stream's next SSN (serial-number order over the 16-bit SSN). Behind a missing
/// message the others mostly arrive in SSN order (with several paths, one path's messages
/// overtake the other's), so they are appended at the back and taken from the front.
#[derive(Debug, Default)]
struct Waiting(VecDeque<(u16, Message)>);

impl Waiting {
    /// Adds `msg` with `ssn` to a stream whose next SSN is `next`; a message with the same
    /// SSN is replaced.
    fn insert(&mut self, next: u16, ssn: u16, msg: Message) {
        let offset = ssn.wrapping_sub(next);
        if self.0.back().is_none_or(|&(s, _)| s.wrapping_sub(next) < offset) {
            self.0.push_back((ssn, msg));
            return;
        }
        let i = self.0.partition_point(|&(s, _)| s.wrapping_sub(next) < offset);
        match self.0.get_mut(i) {
            Some(e) if e.0 == ssn => e.1 = msg,
            _ => self.0.insert(i, (ssn, msg)),
        }
    }
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
    /// The message being handed over in parts, if any.
    partial: Option<PartialDelivery>,
    ready: VecDeque<Ready>,
    /// While a datagram handed over whole is processed ([`Inbound::lend`]): the address of
    /// its packet's first byte and the packet's length, until a whole message that can be
    /// read at once stays in it.
    lend_base: Option<(usize, usize)>,
    /// That message: its place in `ready`, and its data's offset in the datagram and length
    /// (it gets the datagram in [`Inbound::keep_in`]).
    lent: Option<(usize, usize, usize)>,
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
    /// New TSNs that arrived after a higher TSN had (reordering across paths, and
    /// retransmissions filling a hole, both count).
    pub(crate) reordered_tsns: u64,
    /// Room for the next SACK's gap ack blocks (given back once the SACK is in a packet).
    spare_blocks: Vec<GapAckBlock>,
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
            partial: None,
            ready: VecDeque::new(),
            lend_base: None,
            lent: None,
            held: 0,
            capacity,
            last_advertised: capacity,
            packets_since_sack: 0,
            sack_now: false,
            delivered_bytes: 0,
            delivered_messages: 0,
            reordered_tsns: 0,
            spare_blocks: Vec::new(),
        }
    }

    /// Takes over from the receiver of a restarted association (§5.2.4 action A) the messages
    /// ready for the application and not read yet (complete and, on ordered streams, in
    /// order), and the delivery counters. Fragments, and complete messages waiting for an
    /// earlier one, are dropped: the old peer will not send what they lack. The window last
    /// advertised is the space the inherited messages leave (what the INIT ACK offered,
    /// §5.2.2), so reading them makes a window update due (§6.2.1).
    pub(crate) fn inherit_unread(&mut self, old: Inbound) {
        self.held = old.ready.iter().map(|r| r.len() as u32).sum();
        self.ready = old.ready;
        self.last_advertised = self.a_rwnd();
        self.delivered_bytes = old.delivered_bytes;
        self.delivered_messages = old.delivered_messages;
        self.reordered_tsns = old.reordered_tsns;
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
        // New data lands above everything received (no need to look through the gaps, of
        // which reordering between paths leaves many).
        if tsn_gt(tsn, self.highest) {
            return false;
        }
        tsn_le(tsn, self.cum_tsn) || self.gaps.iter().any(|&(a, b)| tsn_le(a, tsn) && tsn_le(tsn, b))
    }

    /// Takes one DATA chunk (stream id already validated), copying its data into a buffer
    /// from `buffers`. With `dac` (CMT's delayed ack), reordering does not make a SACK due.
    /// With `go_back_n`, a chunk above the next expected TSN is discarded (see
    /// `Config::go_back_n`).
    pub(crate) fn on_data(
        &mut self,
        d: &DataRef<'_>,
        buffers: &mut BufferPool,
        dac: bool,
        go_back_n: bool,
    ) -> DataOutcome {
        if self.is_received(d.tsn) {
            if self.dups.len() < 64 {
                self.dups.push(d.tsn);
            }
            self.sack_now = true;
            return DataOutcome::Duplicate;
        }
        if go_back_n && d.tsn != self.cum_tsn.wrapping_add(1) {
            // Paper 002's go-back-N receiver keeps no out-of-order data: the chunk is
            // dropped and, like out-of-order DATA under §6.7, acknowledged at once (the
            // duplicate SACK the sender's go-back rule counts) unless the SACK frequency
            // is kept under reordering.
            if !dac {
                self.sack_now = true;
            }
            return DataOutcome::OutOfOrder;
        }
        let len = d.user_data.len() as u32;
        // §6.2: when the advertised window is 0, drop new chunks beyond the highest TSN
        // received so far. While it is open a chunk is kept even if it overshoots the buffer:
        // §6.1 A lets the sender send whenever rwnd > 0, so a chunk larger than the window
        // left is normal and dropping it would cost a T3 timeout. If the room is taken by
        // fragments of messages the application cannot read yet, part of a message is handed
        // over (§6.9), so reading it opens the window again.
        if self.held >= self.capacity && tsn_gt(d.tsn, self.highest) {
            self.start_partial_delivery();
            return DataOutcome::NoSpace;
        }
        let had_gaps = !self.gaps.is_empty();
        // The 64-bit position is taken before the cumulative TSN moves past this TSN.
        let pos = self.position(d.tsn);
        self.record_tsn(d.tsn);
        if tsn_gt(d.tsn, self.highest) {
            self.highest = d.tsn;
        } else {
            // A new TSN below the highest one received: it arrived out of order.
            self.reordered_tsns += 1;
        }
        // §6.7: out-of-order arrival, or a chunk filling a gap, is acknowledged at once.
        // CMT's delayed ack (DAC; the CMT paper, side-effect 3) keeps delaying SACKs then:
        // reordering is the normal course when paths of different delay carry one
        // association's data, and the SACK's packet count lets the sender count miss
        // indications instead (as FreeBSD's sctp_indata.c and ns-2's sctp-cmt.cc do; both
        // still acknowledge duplicates at once, as here).
        if d.immediate || (!dac && (had_gaps || !self.gaps.is_empty())) {
            self.sack_now = true;
        }
        if usize::from(d.stream_id) >= self.streams.len() {
            return DataOutcome::InvalidStream;
        }
        self.held += len;
        if d.beginning && d.ending {
            // Read at once, it stays in the datagram, which it gets in `keep_in`, as the
            // ready message it is about to become (if its data lies in the packet lent).
            let lent = self.lend_base.and_then(|(base, packet_len)| {
                let offset = (d.user_data.as_ptr() as usize).checked_sub(base)?;
                let inside = offset.checked_add(d.user_data.len())? <= packet_len;
                (inside && self.deliverable_now(d.stream_id, d.ssn, d.unordered)).then_some(offset)
            });
            let data = match lent {
                Some(offset) => {
                    self.lend_base = None;
                    self.lent = Some((self.ready.len(), offset, d.user_data.len()));
                    Vec::new()
                }
                None => buffers.copy_of(d.user_data),
            };
            let msg = Message { stream: d.stream_id, ppid: d.ppid, unordered: d.unordered, data, end_of_message: true };
            self.complete(msg, d.ssn);
        } else {
            self.fragments.insert(pos, Fragment::from_data(d, buffers));
            if self.partial.is_some_and(|p| p.next == pos) {
                self.continue_partial_delivery();
            } else {
                self.try_reassemble(pos);
            }
            if self.a_rwnd() == 0 {
                self.start_partial_delivery();
            }
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
        let msg =
            Message { stream: head.stream, ppid: head.ppid, unordered: head.unordered, data, end_of_message: true };
        self.complete(msg, head.ssn);
    }

    /// §6.9: when the receive buffer is full, the application has nothing to read and the
    /// next message it may read (the lowest one that is unordered or next in its stream's
    /// order) lacks only fragments beyond the highest TSN received, which there is no room
    /// for, hands over the received beginning of that message, so that reading it makes room
    /// for the rest.
    fn start_partial_delivery(&mut self) {
        if self.partial.is_some() || !self.ready.is_empty() {
            return;
        }
        let next = self.fragments.iter().find(|(_, f)| {
            f.beginning && (f.unordered || self.streams.get(usize::from(f.stream)).is_some_and(|s| s.next_ssn == f.ssn))
        });
        let Some((&pos, f)) = next else { return };
        // Only a message whose every fragment up to the highest TSN received is here is
        // stuck: a hole below the highest TSN is filled by a retransmission, which is
        // accepted whatever the room (§6.2).
        let highest = self.position(self.highest);
        if highest < pos || (pos..=highest).any(|p| !self.fragments.contains_key(&p)) {
            return;
        }
        self.partial = Some(PartialDelivery { stream: f.stream, ssn: f.ssn, unordered: f.unordered, next: pos });
        self.continue_partial_delivery();
    }

    /// Hands over the fragments of the message in partial delivery that follow what was
    /// handed over, as one part; the last fragment ends the partial delivery and lets the
    /// messages that waited behind it on its stream through (§6.6).
    fn continue_partial_delivery(&mut self) {
        let Some(mut pd) = self.partial else { return };
        let mut part: Option<Message> = None;
        let mut ended = false;
        while let Some(f) = self.fragments.remove(&pd.next) {
            pd.next += 1;
            ended = f.ending;
            match part.as_mut() {
                Some(m) => m.data.extend_from_slice(&f.data),
                None => {
                    part = Some(Message {
                        stream: f.stream,
                        ppid: f.ppid,
                        unordered: f.unordered,
                        data: f.data,
                        end_of_message: false,
                    })
                }
            }
            if ended {
                break;
            }
        }
        let Some(mut part) = part else { return };
        part.end_of_message = ended;
        self.ready.push_back(Ready::whole(part));
        if !ended {
            self.partial = Some(pd);
            return;
        }
        self.partial = None;
        if pd.unordered {
            return;
        }
        let Some(stream) = self.streams.get_mut(usize::from(pd.stream)) else { return };
        stream.next_ssn = pd.ssn.wrapping_add(1);
        let mut dropped = 0;
        while let Some(next) = stream.take_next(&mut dropped) {
            self.ready.push_back(Ready::whole(next));
        }
        self.held = self.held.saturating_sub(dropped);
    }

    /// True if a whole message with `ssn` on `stream` is ready at once: unordered, or next in
    /// its stream's order (§6.6), which a message partially delivered holds until its last
    /// part.
    #[inline(always)]
    fn deliverable_now(&self, stream: u16, ssn: u16, unordered: bool) -> bool {
        if unordered {
            return true;
        }
        let in_partial = self.partial.is_some_and(|p| !p.unordered && p.stream == stream);
        self.streams.get(usize::from(stream)).is_some_and(|s| s.next_ssn == ssn) && !in_partial
    }

    /// A whole message: unordered ones are ready at once, ordered ones in SSN order (§6.6).
    #[inline(always)]
    fn complete(&mut self, msg: Message, ssn: u16) {
        let (unordered, s) = (msg.unordered, usize::from(msg.stream));
        if !self.deliverable_now(msg.stream, ssn, unordered) {
            if let Some(stream) = self.streams.get_mut(s) {
                stream.waiting.insert(stream.next_ssn, ssn, msg);
            }
            return;
        }
        self.ready.push_back(Ready::whole(msg));
        if unordered {
            return;
        }
        let Some(stream) = self.streams.get_mut(s) else { return };
        stream.next_ssn = stream.next_ssn.wrapping_add(1);
        // In order, as in a bulk transfer without loss: nothing waits.
        if stream.waiting.0.is_empty() {
            return;
        }
        let mut dropped = 0;
        while let Some(next) = stream.take_next(&mut dropped) {
            self.ready.push_back(Ready::whole(next));
        }
        self.held = self.held.saturating_sub(dropped);
    }

    /// True if a message is ready for the application.
    pub(crate) fn readable(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Hands the next ready message to the application and frees its buffer space: the
    /// message, and where its data begins in `data` (0 unless it stayed in its datagram).
    pub(crate) fn read_in_place(&mut self) -> Option<(Message, usize)> {
        let r = self.ready.pop_front()?;
        let len = r.len() as u32;
        self.held = self.held.saturating_sub(len);
        self.delivered_bytes += u64::from(len);
        if r.msg.end_of_message {
            self.delivered_messages += 1;
        }
        Some((r.msg, r.start))
    }

    /// As [`Inbound::read_in_place`], the data moved to the front of its buffer.
    #[cfg(test)]
    pub(crate) fn read(&mut self) -> Option<Message> {
        let (mut msg, start) = self.read_in_place()?;
        msg.data.drain(..start);
        Some(msg)
    }

    /// Size of the next ready message.
    pub(crate) fn peek_len(&self) -> Option<usize> {
        self.ready.front().map(Ready::len)
    }

    /// The packet of `len` bytes at address `base`, in a datagram handed over whole, is
    /// being processed: the first whole message in it that is ready at once stays in it.
    pub(crate) fn lend(&mut self, base: usize, len: usize) {
        self.lend_base = Some((base, len));
    }

    /// The datagram lent with [`Inbound::lend`], its packet at `start`: the message that
    /// stayed in it takes it (without the bytes after its data); otherwise it comes back.
    pub(crate) fn keep_in(&mut self, mut datagram: Vec<u8>, start: usize) -> Option<Vec<u8>> {
        self.lend_base = None;
        let Some((i, offset, len)) = self.lent.take() else { return Some(datagram) };
        // The message is where it was put: nothing reads while a packet is processed. (A
        // DATA chunk without data is refused, §6.2, so only this message has none.)
        let Some(r) = self.ready.get_mut(i).filter(|r| r.msg.data.is_empty()) else { return Some(datagram) };
        // The datagram is the one lent, so the packet lies at `start` in it.
        debug_assert!(start + offset + len <= datagram.len(), "not the datagram lent");
        datagram.truncate(start + offset + len);
        r.msg.data = datagram;
        r.start = start + offset;
        None
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
    /// blocks are reported (the lowest ones). With `dac` (CMT's delayed ack) the chunk flags
    /// carry the number of DATA packets received since the previous SACK, at most 2.
    pub(crate) fn make_sack(&mut self, max_blocks: usize, dac: bool) -> SackChunk {
        let cum = self.cum_tsn;
        let mut gap_ack_blocks = std::mem::take(&mut self.spare_blocks);
        gap_ack_blocks.clear();
        gap_ack_blocks.reserve(self.gaps.len().min(max_blocks));
        gap_ack_blocks.extend(self.gaps.iter().take(max_blocks).filter_map(|&(a, b)| {
            let start = u16::try_from(a.wrapping_sub(cum)).ok()?;
            let end = u16::try_from(b.wrapping_sub(cum)).ok()?;
            Some(GapAckBlock { start, end })
        }));
        let flags = if dac { dac_flags(self.packets_since_sack) } else { 0 };
        self.packets_since_sack = 0;
        self.sack_now = false;
        self.last_advertised = self.a_rwnd();
        SackChunk {
            flags,
            cumulative_tsn_ack: cum,
            a_rwnd: self.last_advertised,
            gap_ack_blocks,
            duplicate_tsns: std::mem::take(&mut self.dups),
        }
    }

    /// Takes back the vectors of a SACK [`Inbound::make_sack`] built, once it is in a packet:
    /// with several paths SACKs carry many gap blocks, and this saves an allocation each.
    pub(crate) fn recycle_sack(&mut self, sack: SackChunk) {
        self.spare_blocks = sack.gap_ack_blocks;
        if self.dups.capacity() == 0 {
            let mut dups = sack.duplicate_tsns;
            dups.clear();
            self.dups = dups;
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
        r.on_data(d, &mut BufferPool::new(1500), false, false)
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
    fn a_message_stays_in_the_datagram_lent_only_if_its_data_lies_in_the_packet() {
        let mut r = Inbound::new(10, 1, 100_000);
        // Headers, then a packet whose data is "hello" (the chunk header is left out here).
        let datagram = b"IPHDR-SCTP-hello-trailer".to_vec();
        let start = 6;
        let packet = &datagram[start..];
        r.lend(packet.as_ptr() as usize, packet.len());
        on_data(&mut r, &data(10, 0, true, true, &packet[5..10]));
        assert_eq!(r.keep_in(datagram.clone(), start), None, "the message took the datagram");
        let (m, at) = r.read_in_place().unwrap();
        assert_eq!((&m.data[at..], at), (&b"hello"[..], 11));
        // Data that is not in the packet lent (here: after its end) is copied; the datagram
        // comes back.
        let packet = &datagram[start..start + 8];
        r.lend(packet.as_ptr() as usize, packet.len());
        on_data(&mut r, &data(11, 1, true, true, &datagram[start + 5..start + 10]));
        assert!(r.keep_in(datagram.clone(), start).is_some());
        assert_eq!(r.read_in_place().map(|(m, at)| (m.data, at)), Some((b"hello".to_vec(), 0)));
        // A message behind a missing one waits, copied.
        r.lend(packet.as_ptr() as usize, packet.len());
        on_data(&mut r, &data(13, 3, true, true, &packet[0..3]));
        assert!(r.keep_in(datagram.clone(), start).is_some());
        assert_eq!(r.held(), 3);
    }

    #[test]
    fn gaps_duplicates_and_cumulative_tsn_across_the_wrap() {
        let first = u32::MAX - 2;
        let mut r = Inbound::new(first, 1, 100_000);
        assert_eq!(on_data(&mut r, &data(first, 0, true, true, b"a")), DataOutcome::Accepted);
        assert_eq!(on_data(&mut r, &data(first.wrapping_add(2), 2, true, true, b"c")), DataOutcome::Accepted);
        assert_eq!(on_data(&mut r, &data(first.wrapping_add(4), 4, true, true, b"e")), DataOutcome::Accepted);
        assert_eq!(on_data(&mut r, &data(first, 0, true, true, b"a")), DataOutcome::Duplicate);
        let sack = r.make_sack(16, false);
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
    fn go_back_n_discards_data_above_the_next_expected_tsn_and_reports_no_gaps() {
        let mut r = Inbound::new(100, 1, 100_000);
        let mut pool = BufferPool::new(1500);
        let mut take = |r: &mut Inbound, tsn: u32, ssn: u16, b: &[u8]| {
            r.on_data(&data(tsn, ssn, true, true, b), &mut pool, false, true)
        };
        assert_eq!(take(&mut r, 100, 0, b"a"), DataOutcome::Accepted);
        r.make_sack(16, false);
        // 101 is lost: 102 and 103 are discarded, each making a SACK due at once.
        assert_eq!(take(&mut r, 102, 2, b"c"), DataOutcome::OutOfOrder);
        assert!(r.sack_due());
        let sack = r.make_sack(16, false);
        assert_eq!((sack.cumulative_tsn_ack, sack.gap_ack_blocks.len()), (100, 0));
        assert_eq!(take(&mut r, 103, 3, b"d"), DataOutcome::OutOfOrder);
        assert_eq!(r.make_sack(16, false).gap_ack_blocks.len(), 0);
        assert_eq!(r.held(), 1);
        // The sender goes back: 101, 102, 103 again, all accepted in order.
        for (tsn, ssn, b) in [(101, 1, b"b"), (102, 2, b"c"), (103, 3, b"d")] {
            assert_eq!(take(&mut r, tsn, ssn, b), DataOutcome::Accepted);
        }
        assert_eq!(r.cum_tsn, 103);
        let got: Vec<u8> = std::iter::from_fn(|| r.read()).flat_map(|m| m.data).collect();
        assert_eq!(got, b"abcd");
        // Without the mode the same arrivals are kept and reported in a gap block.
        let mut s = Inbound::new(100, 1, 100_000);
        assert_eq!(on_data(&mut s, &data(100, 0, true, true, b"a")), DataOutcome::Accepted);
        assert_eq!(on_data(&mut s, &data(102, 2, true, true, b"c")), DataOutcome::Accepted);
        assert_eq!(s.make_sack(16, false).gap_ack_blocks, vec![GapAckBlock { start: 2, end: 2 }]);
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
    fn messages_overtaking_a_missing_one_wait_in_ssn_order_across_the_wrap() {
        let mut r = Inbound::new(1, 1, 100_000);
        r.streams[0].next_ssn = u16::MAX - 1;
        // SSNs 65534, 65535, 0, 1 in TSNs 1..4; 65534 arrives last, the others out of order.
        on_data(&mut r, &data(4, 1, true, true, b"d"));
        on_data(&mut r, &data(2, u16::MAX, true, true, b"b"));
        on_data(&mut r, &data(3, 0, true, true, b"c"));
        assert!(!r.readable());
        on_data(&mut r, &data(1, u16::MAX - 1, true, true, b"a"));
        let got: Vec<u8> = std::iter::from_fn(|| r.read()).flat_map(|m| m.data).collect();
        assert_eq!(got, b"abcd");
        assert_eq!(r.streams[0].next_ssn, 2);
        // A peer repeating an SSN already delivered: the message can never come in order; it
        // is dropped when its stream moves on, and the buffer room it took is given back.
        on_data(&mut r, &data(6, 3, true, true, b"f"));
        on_data(&mut r, &data(7, 1, true, true, b"x"));
        on_data(&mut r, &data(5, 2, true, true, b"e"));
        let got: Vec<u8> = std::iter::from_fn(|| r.read()).flat_map(|m| m.data).collect();
        assert_eq!(got, b"ef");
        assert_eq!(r.held(), 0);
    }

    #[test]
    fn a_closed_window_drops_new_tsns_beyond_the_highest() {
        let mut r = Inbound::new(1, 1, 1500);
        let big = vec![0u8; 1000];
        assert_eq!(on_data(&mut r, &data(1, 0, true, true, &big)), DataOutcome::Accepted);
        // §6.1 A: the window (500) is open, so the sender may send a larger chunk; it is kept.
        assert_eq!(on_data(&mut r, &data(2, 1, true, true, &big)), DataOutcome::Accepted);
        assert_eq!(r.a_rwnd(), 0);
        // §6.2: with the window at 0, a new TSN beyond the highest is dropped.
        assert_eq!(on_data(&mut r, &data(3, 2, true, true, &big)), DataOutcome::NoSpace);
        r.read();
        assert_eq!(r.a_rwnd(), 500);
        r.read();
        assert_eq!(r.a_rwnd(), 1500);
        assert!(r.window_update_due(1500) || r.last_advertised == 1500);
    }

    #[test]
    fn a_full_buffer_of_fragments_is_handed_over_in_parts_and_the_stream_waits_for_the_last() {
        // §6.9: 1500 bytes of buffer, a 3200-byte message in 800-byte fragments (TSN 1..4)
        // and a one-chunk message behind it (TSN 5, SSN 1).
        let mut r = Inbound::new(1, 1, 1500);
        let part = vec![7u8; 800];
        assert_eq!(on_data(&mut r, &data(1, 0, true, false, &part)), DataOutcome::Accepted);
        assert!(!r.readable());
        // The second fragment closes the window: the message so far is handed over.
        assert_eq!(on_data(&mut r, &data(2, 0, false, false, &part)), DataOutcome::Accepted);
        assert_eq!(r.a_rwnd(), 0);
        assert_eq!(on_data(&mut r, &data(3, 0, false, false, &part)), DataOutcome::NoSpace);
        assert_eq!(r.read().map(|m| (m.data.len(), m.end_of_message)), Some((1600, false)));
        // The next fragments follow as parts of their own as they arrive.
        assert_eq!(on_data(&mut r, &data(3, 0, false, false, &part)), DataOutcome::Accepted);
        assert_eq!(r.read().map(|m| (m.data.len(), m.end_of_message)), Some((800, false)));
        // The message behind it waits for the last part.
        assert_eq!(on_data(&mut r, &data(5, 1, true, true, b"next")), DataOutcome::Accepted);
        assert!(!r.readable());
        assert_eq!(on_data(&mut r, &data(4, 0, false, true, &part)), DataOutcome::Accepted);
        assert_eq!(r.read().map(|m| (m.data.len(), m.end_of_message)), Some((800, true)));
        assert_eq!(r.read().map(|m| (m.data, m.end_of_message)), Some((b"next".to_vec(), true)));
        assert_eq!(r.delivered_messages, 2);
        assert_eq!(r.held(), 0);
    }
}
