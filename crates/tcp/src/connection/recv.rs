//! The receive side: bytes delivered in order and waiting for the application, out-of-order
//! bytes held for reassembly, and the SACK blocks that describe them (RFC 2018 §4).
//!
//! Offsets are unwrapped from the peer's initial sequence number: its SYN is offset 0, so the
//! first data byte is offset 1. The buffer holds at most `capacity` bytes, in-order and
//! out-of-order together; the advertised window is the room that is left.

use std::collections::{BTreeMap, VecDeque};

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
    /// In-order bytes the application has not read.
    data: VecDeque<u8>,
    /// Out-of-order ranges: start offset -> bytes; disjoint, not adjacent, all above `nxt`.
    ooo: BTreeMap<u64, Vec<u8>>,
    ooo_bytes: usize,
    /// RCV.NXT as an offset.
    pub(super) nxt: u64,
    capacity: usize,
    /// Start of the block holding the most recently received out-of-order data (RFC 2018 §4:
    /// the first SACK block reports it).
    latest: Option<u64>,
}

impl RecvBuffer {
    pub(super) fn new(capacity: usize) -> Self {
        RecvBuffer { data: VecDeque::new(), ooo: BTreeMap::new(), ooo_bytes: 0, nxt: 0, capacity, latest: None }
    }

    /// Room left: the receive window in bytes.
    pub(super) fn window(&self) -> u64 {
        self.capacity.saturating_sub(self.data.len()) as u64
    }

    /// Capacity in bytes.
    pub(super) fn capacity(&self) -> usize {
        self.capacity
    }

    /// In-order bytes waiting for the application.
    pub(super) fn readable(&self) -> usize {
        self.data.len()
    }

    /// True if out-of-order data is held.
    pub(super) fn has_gaps(&self) -> bool {
        !self.ooo.is_empty()
    }

    /// Move up to `max` in-order bytes into `out`.
    pub(super) fn read(&mut self, out: &mut Vec<u8>, max: usize) -> usize {
        let n = max.min(self.data.len());
        let (a, b) = self.data.as_slices();
        let first = n.min(a.len());
        out.extend_from_slice(&a[..first]);
        out.extend_from_slice(&b[..n - first]);
        self.data.drain(..n);
        n
    }

    /// Insert `bytes` starting at offset `start`, clipped to the window.
    pub(super) fn insert(&mut self, start: u64, bytes: &[u8]) -> Inserted {
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
        if start_clip == self.nxt {
            r.filled_gap = !self.ooo.is_empty();
            self.data.extend(slice);
            self.nxt = end;
            r.advanced = slice.len() as u64;
            // Pull in held ranges that are now contiguous.
            while let Some(entry) = self.ooo.first_entry() {
                let s = *entry.key();
                if s > self.nxt {
                    break;
                }
                let held = entry.remove();
                self.ooo_bytes -= held.len();
                let e = s + held.len() as u64;
                if e > self.nxt {
                    let tail = &held[(self.nxt - s) as usize..];
                    self.data.extend(tail);
                    r.advanced += tail.len() as u64;
                    self.nxt = e;
                }
            }
            if self.latest.is_some_and(|l| l < self.nxt) {
                self.latest = None;
            }
        } else {
            r.out_of_order = true;
            self.hold(start_clip, slice);
        }
        r
    }

    /// Merge `[s, s+len)` into the out-of-order map, coalescing overlapping and adjacent ranges.
    fn hold(&mut self, s: u64, bytes: &[u8]) {
        let e = s + bytes.len() as u64;
        let (mut lo, mut hi) = (s, e);
        let touching: Vec<u64> =
            self.ooo.range(..=e).rev().take_while(|(k, v)| *k + v.len() as u64 >= s).map(|(k, _)| *k).collect();
        let mut parts = Vec::with_capacity(touching.len());
        for k in touching {
            if let Some(v) = self.ooo.remove(&k) {
                self.ooo_bytes -= v.len();
                lo = lo.min(k);
                hi = hi.max(k + v.len() as u64);
                parts.push((k, v));
            }
        }
        let mut merged = vec![0u8; (hi - lo) as usize];
        for (k, v) in &parts {
            let o = (k - lo) as usize;
            merged[o..o + v.len()].copy_from_slice(v);
        }
        let o = (s - lo) as usize;
        merged[o..o + bytes.len()].copy_from_slice(bytes);
        self.ooo_bytes += merged.len();
        self.ooo.insert(lo, merged);
        self.latest = Some(lo);
    }

    /// Up to `max` SACK blocks as offset ranges: the block with the latest arrival first,
    /// then the others from the highest down (RFC 2018 §4).
    pub(super) fn sack_blocks(&self, max: usize) -> Vec<(u64, u64)> {
        let mut out = Vec::with_capacity(max);
        let block = |k: &u64, v: &Vec<u8>| (*k, *k + v.len() as u64);
        if let Some((k, v)) = self.latest.and_then(|l| self.ooo.get_key_value(&l)) {
            out.push(block(k, v));
        }
        for (k, v) in self.ooo.iter().rev() {
            if out.len() >= max {
                break;
            }
            if Some(*k) != self.latest {
                out.push(block(k, v));
            }
        }
        out.truncate(max);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(r.read(&mut out, 1000), 500);
        assert_eq!(&out[95..105], &[1, 1, 1, 1, 1, 2, 2, 2, 2, 2]);
        assert!(r.insert(1, &[0; 10]).duplicate);
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
