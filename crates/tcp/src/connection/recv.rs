//! The receive side: bytes delivered in order and waiting for the application, out-of-order
//! bytes held for reassembly, and the SACK blocks that describe them (RFC 2018 §4).
//!
//! Offsets are unwrapped from the peer's initial sequence number: its SYN is offset 0, so the
//! first data byte is offset 1. The buffer holds at most `capacity` bytes, in-order and
//! out-of-order together; the advertised window is the room that is left.
//!
//! Out-of-order bytes are written into the ring at their place, after the in-order bytes and
//! a hole for the missing ones (zeros until they come): when a gap is filled, RCV.NXT moves
//! over the held bytes where they lie, and nothing is copied or allocated per held range.
//!
//! In-order bytes that arrive with nothing else waiting for the application may stay in the
//! buffer of the segment that brought them, when the caller hands that buffer over
//! ([`RecvBuffer::insert_keeping`], [`RecvBuffer::adopt`]): an application that reads after
//! every segment then reads them where they lie, and they are never copied. They move into
//! the ring only if more bytes, in order or not, come before they are read.

use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound::{Excluded, Included};
use std::ops::Range;

/// Memory a ring read empty keeps. Out-of-order data makes the ring span from the first
/// unread byte to the highest held one, holes included (a slow-start overshoot's loss spreads
/// it over a large window); kept whole, that memory would stay with the connection: the TCP
/// dumbbell's peak RSS was 33.3 MB before held bytes went into the ring, 34.9 MB after, and
/// 30.8 MB with this bound, at the same instruction count.
const RING_KEPT: usize = 64 * 1024;

/// What inserting a segment's data did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Inserted {
    /// Bytes that became deliverable in order.
    pub(super) advanced: u64,
    /// The data lay above RCV.NXT (a gap remains).
    pub(super) out_of_order: bool,
    /// The data filled (part of) a gap below held out-of-order data.
    pub(super) filled_gap: bool,
    /// Some of the data was a duplicate or outside the window.
    pub(super) duplicate: bool,
}

/// Reassembly buffer.
#[derive(Debug)]
pub(super) struct RecvBuffer {
    /// Stream bytes from offset `base` on: first the `in_ring` in-order bytes the application
    /// has not read, then, while data is held out of order, holes and held ranges up to the
    /// end of the highest held range.
    data: VecDeque<u8>,
    /// Offset of `data[0]` (set again when bytes go into an empty ring).
    base: u64,
    /// In-order bytes at the front of `data`.
    in_ring: usize,
    /// Out-of-order ranges held in `data`: start offset -> end offset; disjoint, not
    /// adjacent, all above `nxt`.
    held: BTreeMap<u64, u64>,
    /// RCV.NXT as an offset.
    pub(super) nxt: u64,
    capacity: usize,
    /// Start of the range holding the most recently received out-of-order data (RFC 2018 §4:
    /// the first SACK block reports it).
    latest: Option<u64>,
    /// The oldest in-order bytes, still in the buffer of the segment that brought them
    /// (`buffer[range]`); only while `data` is empty.
    pending: Option<(Vec<u8>, Range<usize>)>,
    /// The in-order bytes not in `data`: `pending`'s, or those kept by the last insert whose
    /// buffer is not adopted yet. Derivable from the two, but the window is read on every
    /// insert and every ACK: deriving it each time cost 0.6 % more instructions in the TCP
    /// dumbbell.
    pending_len: usize,
    /// What [`RecvBuffer::insert_keeping`] kept of its bytes, until [`RecvBuffer::adopt`].
    kept: Option<Range<usize>>,
    /// A segment buffer whose bytes moved into `data`, for the caller to reuse.
    pub(super) released: Option<Vec<u8>>,
}

impl RecvBuffer {
    pub(super) fn new(capacity: usize) -> Self {
        RecvBuffer {
            data: VecDeque::new(),
            base: 0,
            in_ring: 0,
            held: BTreeMap::new(),
            nxt: 0,
            capacity,
            latest: None,
            pending: None,
            pending_len: 0,
            kept: None,
            released: None,
        }
    }

    /// Room left: the receive window in bytes.
    pub(super) fn window(&self) -> u64 {
        self.capacity.saturating_sub(self.readable()) as u64
    }

    /// Capacity in bytes.
    pub(super) fn capacity(&self) -> usize {
        self.capacity
    }

    /// In-order bytes waiting for the application.
    pub(super) fn readable(&self) -> usize {
        self.in_ring + self.pending_len
    }

    /// True if out-of-order data is held.
    pub(super) fn has_gaps(&self) -> bool {
        !self.held.is_empty()
    }

    /// Hand up to `max` in-order bytes to `visit` where they lie (two slices, in order; the
    /// second may be empty), then drop them. Returns how many, and the buffer of a segment
    /// whose kept bytes were all read (for the caller to reuse).
    pub(super) fn read_with(&mut self, max: usize, visit: impl FnOnce(&[u8], &[u8])) -> (usize, Option<Vec<u8>>) {
        // One call of `visit` (so that it is inlined) on the kept bytes, which are the oldest
        // when there are any (`data` is then empty), or on the ring.
        let n = max.min(self.readable());
        let (a, b): (&[u8], &[u8]) = match &self.pending {
            Some((buffer, range)) => (&buffer[range.start..range.start + n], &[]),
            None => {
                let (a, b) = self.data.as_slices();
                let first = n.min(a.len());
                (&a[..first], &b[..n - first])
            }
        };
        visit(a, b);
        let Some((_, range)) = &mut self.pending else {
            self.data.drain(..n);
            self.base += n as u64;
            self.in_ring -= n;
            if self.data.is_empty() && self.data.capacity() > RING_KEPT {
                // Read empty after a wide span: most of that memory goes back.
                self.data.shrink_to(RING_KEPT);
            }
            return (n, None);
        };
        range.start += n;
        self.pending_len -= n;
        let emptied = range.start == range.end;
        (n, if emptied { self.pending.take().map(|(b, _)| b) } else { None })
    }

    /// Insert `bytes` starting at offset `start`, clipped to the window.
    pub(super) fn insert(&mut self, start: u64, bytes: &[u8]) -> Inserted {
        self.insert_with(start, bytes, false)
    }

    /// As [`RecvBuffer::insert`], for bytes whose buffer the caller hands over afterwards
    /// ([`RecvBuffer::adopt`]): in-order bytes arriving with nothing else waiting are kept
    /// there instead of copied.
    pub(super) fn insert_keeping(&mut self, start: u64, bytes: &[u8]) -> Inserted {
        self.insert_with(start, bytes, true)
    }

    /// Takes over the buffer of the last [`RecvBuffer::insert_keeping`], whose bytes lay at
    /// `buffer[at..]`; gives it back if nothing of it was kept.
    pub(super) fn adopt(&mut self, buffer: Vec<u8>, at: usize) -> Option<Vec<u8>> {
        match self.kept.take() {
            Some(r) => {
                self.pending = Some((buffer, at + r.start..at + r.end));
                None
            }
            None => Some(buffer),
        }
    }

    /// Moves kept bytes into the ring (empty while they are kept), before more bytes go there.
    fn spill(&mut self) {
        debug_assert!(self.kept.is_none(), "a kept segment's buffer is adopted before the next insert");
        if let Some((buffer, range)) = self.pending.take() {
            debug_assert!(self.data.is_empty());
            self.base = self.nxt - self.pending_len as u64;
            self.data.extend(&buffer[range]);
            self.in_ring = self.pending_len;
            self.pending_len = 0;
            self.released = Some(buffer);
        }
    }

    /// Writes `bytes` into the ring at offset `at` (not below RCV.NXT): over a hole or held
    /// bytes (the new bytes win) and on past the ring's end, zeros filling any hole before.
    fn put(&mut self, at: u64, bytes: &[u8]) {
        if self.data.is_empty() {
            self.base = self.nxt;
        }
        let pos = (at - self.base) as usize;
        let len = self.data.len();
        if pos > len {
            self.data.resize(pos, 0);
        }
        let over = self.data.len().saturating_sub(pos).min(bytes.len());
        if over > 0 {
            // The ring's two parts: what falls into the first, then the rest into the second.
            let (a, b) = self.data.as_mut_slices();
            let a_len = a.len();
            let in_a = a_len.saturating_sub(pos).min(over);
            let (first, second) = bytes[..over].split_at(in_a);
            let a_from = pos.min(a_len);
            a[a_from..a_from + in_a].copy_from_slice(first);
            let b_from = (pos + in_a).saturating_sub(a_len);
            b[b_from..b_from + second.len()].copy_from_slice(second);
        }
        self.data.extend(&bytes[over..]);
    }

    fn insert_with(&mut self, start: u64, bytes: &[u8], may_keep: bool) -> Inserted {
        let mut r = Inserted::default();
        let limit = self.nxt + self.window();
        let end = (start + bytes.len() as u64).min(limit);
        let start_clip = start.max(self.nxt);
        if start_clip >= end {
            r.duplicate = !bytes.is_empty();
            return r;
        }
        r.duplicate = start_clip > start || end < start + bytes.len() as u64;
        let slice = &bytes[(start_clip - start) as usize..(end - start) as usize];
        if start_clip != self.nxt {
            r.out_of_order = true;
            self.spill();
            self.put(start_clip, slice);
            self.hold(start_clip, end);
            return r;
        }
        r.filled_gap = !self.held.is_empty();
        if may_keep && self.readable() == 0 && self.held.is_empty() {
            // Nothing waits and no held range can follow: kept where it lies.
            let at = (start_clip - start) as usize;
            self.kept = Some(at..at + slice.len());
            self.pending_len = slice.len();
            self.nxt = end;
            r.advanced = slice.len() as u64;
            return r;
        }
        self.spill();
        self.put(start_clip, slice);
        let from = self.nxt;
        self.nxt = end;
        // Held ranges now contiguous lie in the ring already: RCV.NXT moves over them.
        while let Some(entry) = self.held.first_entry() {
            if *entry.key() > self.nxt {
                break;
            }
            self.nxt = self.nxt.max(entry.remove());
        }
        r.advanced = self.nxt - from;
        self.in_ring += r.advanced as usize;
        if self.latest.is_some_and(|l| l < self.nxt) {
            self.latest = None;
        }
        r
    }

    /// Merge `[s, e)`, just written into the ring, into the held ranges, coalescing
    /// overlapping and adjacent ones.
    fn hold(&mut self, s: u64, e: u64) {
        // The range starting at or below `s` that reaches it (ranges are disjoint and not
        // adjacent, so only the highest such start can), or a new range at `s`.
        let below = self.held.range(..=s).next_back().filter(|(_, end)| **end >= s);
        let (lo, mut hi) = below.map_or((s, e), |(k, end)| (*k, e.max(*end)));
        // Ranges starting in (s, hi] touch the new bytes: they join.
        while let Some((k, end)) = self.held.range((Excluded(s), Included(hi))).next().map(|(k, v)| (*k, *v)) {
            self.held.remove(&k);
            hi = hi.max(end);
        }
        self.held.insert(lo, hi);
        self.latest = Some(lo);
    }

    /// Up to `max` SACK blocks as offset ranges: the block with the latest arrival first,
    /// then the others from the highest down (RFC 2018 §4).
    pub(super) fn sack_blocks(&self, max: usize) -> Vec<(u64, u64)> {
        let mut out = Vec::with_capacity(max);
        if let Some((k, end)) = self.latest.and_then(|l| self.held.get_key_value(&l)) {
            out.push((*k, *end));
        }
        for (k, end) in self.held.iter().rev() {
            if out.len() >= max {
                break;
            }
            if Some(*k) != self.latest {
                out.push((*k, *end));
            }
        }
        out.truncate(max);
        out
    }

    /// The held ranges with their bytes (tests).
    #[cfg(test)]
    fn held_bytes(&self) -> Vec<(u64, Vec<u8>)> {
        let at = |o: u64| (o - self.base) as usize;
        self.held.iter().map(|(s, e)| (*s, self.data.range(at(*s)..at(*e)).copied().collect())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Everything `read_with` hands over, appended to `out`.
    fn read(r: &mut RecvBuffer, out: &mut Vec<u8>, max: usize) -> usize {
        r.read_with(max, |a, b| {
            out.extend_from_slice(a);
            out.extend_from_slice(b);
        })
        .0
    }

    /// In-order data read back in pieces of every size, so that the ring buffer's two parts
    /// both hold some of what is read: the bytes come out as they went in.
    #[test]
    fn read_with_hands_over_the_bytes_in_order_across_the_ring_wrap() {
        let mut r = RecvBuffer::new(3_000);
        r.nxt = 1;
        let (mut sent, mut got, mut wrapped) = (0u64, Vec::new(), false);
        for round in 0..400u64 {
            let len = 1 + (round * 37) % 1_400;
            let bytes: Vec<u8> = (sent..sent + len).map(|o| (o % 251) as u8).collect();
            let room = r.window() as usize;
            let accepted = len.min(room as u64);
            r.insert(1 + sent, &bytes);
            sent += accepted;
            let max = 1 + (round * 53 % 2_000) as usize;
            let before = got.len();
            let (n, _) = r.read_with(max, |a, b| {
                wrapped |= !a.is_empty() && !b.is_empty();
                got.extend_from_slice(a);
                got.extend_from_slice(b);
            });
            assert_eq!(n, got.len() - before);
        }
        read(&mut r, &mut got, usize::MAX);
        assert!(wrapped, "no read saw both parts of the ring");
        assert_eq!(got.len() as u64, sent);
        assert!(got.iter().enumerate().all(|(o, &v)| v == (o % 251) as u8));
    }

    #[test]
    fn reassembles_and_reports_sack_blocks() {
        let mut r = RecvBuffer::new(10_000);
        r.nxt = 1;
        assert_eq!(r.insert(1, &[1; 100]).advanced, 100);
        let a = r.insert(201, &[3; 100]);
        assert!(a.out_of_order && a.advanced == 0);
        r.insert(401, &[5; 100]);
        assert_eq!(r.sack_blocks(4), vec![(401, 501), (201, 301)]);
        r.insert(301, &[4; 100]); // joins the two held ranges
        assert_eq!(r.sack_blocks(4), vec![(201, 501)]);
        let f = r.insert(101, &[2; 100]);
        assert!(f.filled_gap);
        assert_eq!((f.advanced, r.nxt), (400, 501));
        assert!(!r.has_gaps());
        let mut out = Vec::new();
        assert_eq!(read(&mut r, &mut out, 1000), 500);
        assert_eq!(&out[95..105], &[1, 1, 1, 1, 1, 2, 2, 2, 2, 2]);
        assert!(r.insert(1, &[0; 10]).duplicate);
    }

    /// Random segments (overlapping, duplicated, out of order, each with its own byte value)
    /// against a byte-per-offset model: at or above RCV.NXT the latest bytes win, below it
    /// nothing changes; the held blocks are the model's runs above RCV.NXT.
    #[test]
    fn holds_what_a_byte_model_holds() {
        let mut next = crate::connection::test_rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..200 {
            let mut r = RecvBuffer::new(1 << 20);
            r.nxt = 1;
            let mut model: Vec<Option<u8>> = vec![None; 4_000];
            let (mut model_nxt, mut delivered) = (1usize, Vec::new());
            for i in 0..60 {
                let start = 1 + next(3_000);
                let len = 1 + next(if round % 2 == 0 { 200 } else { 20 });
                let value = (i + 1) as u8;
                r.insert(start, &vec![value; len as usize]);
                for o in start..start + len {
                    if o as usize >= model_nxt {
                        model[o as usize] = Some(value);
                    }
                }
                while model[model_nxt].is_some() {
                    model_nxt += 1;
                }
                if next(4) == 0 {
                    read(&mut r, &mut delivered, usize::MAX);
                }
                assert_eq!(r.nxt, model_nxt as u64);
                let mut blocks = Vec::new();
                let mut o = model_nxt;
                while o < model.len() {
                    if model[o].is_some() {
                        let b = o;
                        while model[o].is_some() {
                            o += 1;
                        }
                        blocks.push((b as u64, model[b..o].iter().map(|v| v.unwrap()).collect::<Vec<u8>>()));
                    }
                    o += 1;
                }
                assert_eq!(r.held_bytes(), blocks, "round {round}, segment {i}");
            }
            read(&mut r, &mut delivered, usize::MAX);
            let want: Vec<u8> = model[1..model_nxt].iter().map(|v| v.unwrap()).collect();
            assert_eq!(delivered, want, "round {round}");
        }
    }

    /// Segments of a byte stream in random order, overlapping, some handed over with their
    /// buffer, read in random amounts from a small buffer, so that held bytes are written
    /// across the ring's wrap and kept bytes spill behind or before held ones: the
    /// application reads the stream as sent, and the held ranges always show the stream's
    /// bytes at their offsets.
    #[test]
    fn held_bytes_across_the_ring_wrap_are_read_as_sent() {
        let mut next = crate::connection::test_rng(0x9e37_79b9_7f4a_7c15);
        let byte = |o: u64| (o % 251) as u8;
        let (mut got, mut wrapped) = (Vec::new(), false);
        let mut r = RecvBuffer::new(3_000);
        r.nxt = 1;
        for _ in 0..20_000 {
            let start = r.nxt.saturating_sub(200) + next(3_400);
            let len = 1 + next(700);
            let segment: Vec<u8> = (start..start + len).map(byte).collect();
            if next(2) == 0 {
                let mut buf = vec![0xee; 5];
                buf.extend_from_slice(&segment);
                r.insert_keeping(start, &buf[5..]);
                let _ = r.adopt(buf, 5);
            } else {
                r.insert(start, &segment);
            }
            let _ = r.released.take();
            wrapped |= r.has_gaps() && !r.data.as_slices().1.is_empty();
            for (s, bytes) in r.held_bytes() {
                assert!(s > r.nxt && bytes.iter().zip(s..).all(|(&v, o)| v == byte(o)));
            }
            if next(3) == 0 {
                let before = got.len();
                let max = next(2_500) as usize;
                let (n, _) = r.read_with(max, |a, b| {
                    got.extend_from_slice(a);
                    got.extend_from_slice(b);
                });
                assert_eq!(n, got.len() - before);
            }
        }
        read(&mut r, &mut got, usize::MAX);
        assert!(wrapped, "no held bytes lay across the ring's wrap");
        assert_eq!(got.len() as u64, r.nxt - 1);
        assert!(got.iter().zip(1u64..).all(|(&v, o)| v == byte(o)));
    }

    /// A ring that spanned a wide out-of-order range keeps at most `RING_KEPT` bytes of
    /// memory once it is read empty.
    #[test]
    fn a_ring_read_empty_gives_back_a_wide_span() {
        let mut r = RecvBuffer::new(1 << 20);
        r.nxt = 1;
        r.insert(500_001, &[7; 1_000]);
        assert!(r.data.capacity() >= 501_000);
        r.insert(1, &vec![1; 500_000]);
        assert_eq!(r.readable(), 501_000);
        let mut out = Vec::new();
        read(&mut r, &mut out, 400_000);
        assert!(r.data.capacity() >= 101_000, "not empty yet: kept");
        read(&mut r, &mut out, usize::MAX);
        assert!(r.data.capacity() <= RING_KEPT);
        assert_eq!(&out[499_999..500_001], &[1, 7]);
    }

    /// In-order bytes kept in their segment's buffer count as received at once, are read
    /// from that buffer (which is then given back), and move into the ring when more
    /// in-order bytes come first; out-of-order bytes are never kept.
    #[test]
    fn kept_bytes_are_read_in_place_or_move_behind_later_ones() {
        let mut r = RecvBuffer::new(1_000);
        r.nxt = 1;
        let segment = |value: u8, len: usize| {
            let mut buf = vec![0xee; 7];
            buf.extend(std::iter::repeat_n(value, len));
            buf
        };
        let first = segment(1, 100);
        assert_eq!(r.insert_keeping(1, &first[7..]).advanced, 100);
        assert_eq!((r.readable(), r.window(), r.nxt), (100, 900, 101));
        assert!(r.adopt(first, 7).is_none(), "in order with nothing waiting: kept");
        let mut out = Vec::new();
        let (n, emptied) = r.read_with(60, |a, b| {
            out.extend_from_slice(a);
            out.extend_from_slice(b);
        });
        assert_eq!((n, emptied.is_some(), r.readable()), (60, false, 40));
        // More in-order bytes before the rest is read: the kept ones go first, into the ring.
        let second = segment(2, 50);
        r.insert_keeping(101, &second[7..]);
        assert_eq!(r.released.take().map(|b| b.len()), Some(107), "the first buffer is released");
        assert!(r.adopt(second, 7).is_some(), "behind other bytes: copied, not kept");
        // Out of order: held, not kept; nor the bytes that fill the gap below held ones.
        let third = segment(3, 10);
        assert!(r.insert_keeping(171, &third[7..]).out_of_order);
        assert!(r.adopt(third, 7).is_some());
        read(&mut r, &mut out, usize::MAX);
        let fourth = segment(4, 20);
        assert!(r.insert_keeping(151, &fourth[7..]).filled_gap);
        assert!(r.adopt(fourth, 7).is_some());
        read(&mut r, &mut out, usize::MAX);
        let want: Vec<u8> = [vec![1; 100], vec![2; 50], vec![4; 20], vec![3; 10]].concat();
        assert_eq!(out, want);
        // Read to the end, a kept segment's buffer comes back.
        let fifth = segment(5, 20);
        r.insert_keeping(181, &fifth[7..]);
        assert!(r.adopt(fifth, 7).is_none());
        let (n, emptied) = r.read_with(usize::MAX, |a, _| assert_eq!(a, &[5; 20]));
        assert_eq!((n, emptied.map(|b| b.len())), (20, Some(27)));
        assert_eq!(r.readable(), 0);
    }

    #[test]
    fn window_limits_what_is_accepted() {
        let mut r = RecvBuffer::new(100);
        r.nxt = 1;
        let i = r.insert(1, &[0; 150]);
        assert_eq!((i.advanced, i.duplicate, r.window()), (100, true, 0));
        assert!(r.insert(101, &[0; 10]).duplicate);
    }
}
