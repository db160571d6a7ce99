//! The send side: the application's bytes not yet acknowledged, and the segments in flight
//! with their SACK scoreboard (RFC 6675 §3).
//!
//! Positions are unwrapped offsets from the initial send sequence number: the SYN occupies
//! offset 0, the application's byte `k` offset `1 + k`, and the FIN the offset after the last
//! byte. Each transmitted segment is remembered until cumulatively acknowledged, with whether
//! it was SACKed, is considered lost, was retransmitted, and counts in `pipe`. Segment
//! boundaries are kept on retransmission, so the scoreboard is per segment rather than per
//! byte.

use std::collections::VecDeque;

use simtime::Instant;

/// A transmitted, not yet cumulatively acknowledged, segment.
#[derive(Clone, Copy, Debug)]
pub(super) struct Segment {
    /// First offset.
    pub(super) start: u64,
    /// One past the last offset (SYN and FIN count one each).
    pub(super) end: u64,
    /// Carries the SYN.
    pub(super) syn: bool,
    /// Carries the FIN.
    pub(super) fin: bool,
    /// Time of the latest transmission.
    pub(super) sent_at: Instant,
    /// Number of transmissions.
    pub(super) transmissions: u32,
    /// Covered by a SACK block.
    pub(super) sacked: bool,
    /// Considered lost and awaiting retransmission (not in `pipe`).
    pub(super) lost: bool,
    /// Retransmitted since the loss episode began (RFC 6675's HighRxt, per segment).
    pub(super) retx: bool,
    /// Counted in `pipe` (RFC 6675 §4 SetPipe, kept incrementally).
    pub(super) in_pipe: bool,
}

impl Segment {
    fn len(&self) -> u64 {
        self.end - self.start
    }
}

/// Unacknowledged and unsent bytes plus the scoreboard.
#[derive(Debug)]
pub(super) struct SendQueue {
    /// Application bytes from offset `data_base` on.
    data: VecDeque<u8>,
    data_base: u64,
    capacity: usize,
    /// Segments sent and not cumulatively acknowledged, in sequence order.
    pub(super) segs: VecDeque<Segment>,
    /// How many of `segs` are marked lost. The sender asks for the first lost segment before
    /// every segment it builds, and usually none is: the count answers without walking the
    /// scoreboard (that walk was 3 % of the TCP dumbbell's instructions).
    lost: usize,
    /// SND.UNA: oldest unacknowledged offset.
    pub(super) una: u64,
    /// SND.NXT for new data: the offset after the highest segment ever sent (HighData + 1).
    pub(super) nxt: u64,
    /// Bytes in flight per RFC 6675's pipe (sent, not SACKed, not lost; retransmissions count).
    pub(super) pipe: u64,
    /// The application closed: a FIN follows the last byte.
    pub(super) fin_queued: bool,
}

impl SendQueue {
    pub(super) fn new(capacity: usize) -> Self {
        SendQueue {
            data: VecDeque::new(),
            data_base: 1,
            capacity,
            segs: VecDeque::new(),
            lost: 0,
            una: 0,
            nxt: 0,
            pipe: 0,
            fin_queued: false,
        }
    }

    /// Room for more application bytes.
    pub(super) fn free(&self) -> usize {
        self.capacity.saturating_sub(self.data.len())
    }

    /// Queue up to `len` application bytes (as many as fit), zeroed, then written in place by
    /// `fill` (the new bytes as two slices, in order; either may be empty). Returns how many.
    pub(super) fn write_with(&mut self, len: usize, fill: impl FnOnce(&mut [u8], &mut [u8])) -> usize {
        let n = len.min(self.free());
        let old = self.data.len();
        self.data.resize(old + n, 0);
        let (a, b) = self.data.as_mut_slices();
        // The new bytes are the last `n`: from `old` in the first slice on, or in the second.
        if old <= a.len() {
            fill(&mut a[old..], b);
        } else {
            fill(&mut [], &mut b[old - a.len()..]);
        }
        n
    }

    /// Offset one past the last application byte written.
    pub(super) fn data_end(&self) -> u64 {
        self.data_base + self.data.len() as u64
    }

    /// Offset of the FIN, if the application closed.
    pub(super) fn fin_offset(&self) -> Option<u64> {
        self.fin_queued.then(|| self.data_end())
    }

    /// Application bytes not yet sent even once.
    pub(super) fn unsent(&self) -> u64 {
        self.data_end().saturating_sub(self.nxt.max(self.data_base))
    }

    /// Application bytes written and not yet acknowledged.
    pub(super) fn buffered(&self) -> usize {
        self.data.len()
    }

    /// How many application bytes `[start, end)` holds (clipped to the data): the length of
    /// what [`SendQueue::slices`] gives, without finding the ring's parts.
    pub(super) fn data_len(&self, start: u64, end: u64) -> usize {
        end.min(self.data_end()).saturating_sub(start.max(self.data_base)) as usize
    }

    /// The application bytes of `[start, end)` (clipped to the data) where they lie in the
    /// ring: two slices, in order (either may be empty). A segment is built from them
    /// without a copy in between.
    pub(super) fn slices(&self, start: u64, end: u64) -> (&[u8], &[u8]) {
        let s = start.max(self.data_base).saturating_sub(self.data_base) as usize;
        let e = (end.min(self.data_end()).saturating_sub(self.data_base) as usize).max(s);
        let (a, b) = self.data.as_slices();
        let cut = |sl: &[u8], off: usize, s: usize, e: usize| -> std::ops::Range<usize> {
            let lo = s.clamp(off, off + sl.len()) - off;
            let hi = e.clamp(off, off + sl.len()) - off;
            lo..hi
        };
        (&a[cut(a, 0, s, e)], &b[cut(b, a.len(), s, e)])
    }

    /// Record a first transmission of `[start, end)`.
    pub(super) fn sent_new(&mut self, start: u64, end: u64, syn: bool, fin: bool, now: Instant) {
        debug_assert_eq!(start, self.nxt);
        self.segs.push_back(Segment {
            start,
            end,
            syn,
            fin,
            sent_at: now,
            transmissions: 1,
            sacked: false,
            lost: false,
            retx: false,
            in_pipe: true,
        });
        self.pipe += end - start;
        self.nxt = end;
    }

    /// Record a retransmission of segment `i`.
    pub(super) fn sent_again(&mut self, i: usize, now: Instant) {
        let Some(s) = self.segs.get_mut(i) else {
            return;
        };
        s.sent_at = now;
        s.transmissions += 1;
        self.lost -= s.lost as usize;
        s.lost = false;
        s.retx = true;
        if !s.in_pipe {
            s.in_pipe = true;
            self.pipe += s.len();
        }
    }

    /// Process a cumulative acknowledgment of everything below `ack`. Returns (bytes newly
    /// acknowledged, send time of the newest fully acknowledged segment that was sent only
    /// once: Karn's rule, RFC 6298 §3).
    pub(super) fn ack(&mut self, ack: u64) -> (u64, Option<Instant>) {
        if ack <= self.una {
            return (0, None);
        }
        let acked = ack - self.una;
        self.una = ack;
        let (mut rtt_from, mut ambiguous) = (None, false);
        while let Some(front) = self.segs.front_mut() {
            if front.end <= ack {
                if front.in_pipe {
                    self.pipe -= front.len();
                }
                // Karn: an ACK covering a retransmission is ambiguous; a SACKed segment's ACK
                // came earlier, so its send time would overstate the RTT.
                ambiguous |= front.transmissions > 1;
                if !front.sacked {
                    rtt_from = Some(front.sent_at);
                }
                self.lost -= front.lost as usize;
                self.segs.pop_front();
            } else {
                if front.start < ack {
                    // Partially acknowledged (a window probe or a peer with another MSS).
                    if front.in_pipe {
                        self.pipe -= ack - front.start;
                    }
                    front.start = ack;
                    front.syn = false;
                }
                break;
            }
        }
        // Drop acknowledged application bytes (the SYN and FIN are not in `data`).
        let drop = (ack.min(self.data_end()).saturating_sub(self.data_base)) as usize;
        self.data.drain(..drop.min(self.data.len()));
        self.data_base += drop as u64;
        (acked, if ambiguous { None } else { rtt_from })
    }

    /// Mark segments inside `[left, right)` as SACKed. Returns bytes newly SACKed.
    pub(super) fn sack(&mut self, left: u64, right: u64) -> u64 {
        if right <= self.una || left >= self.nxt {
            return 0;
        }
        let mut newly = 0;
        // Segments are in order; start from the first that can be covered.
        let first = self.segs.partition_point(|s| s.start < left);
        for s in self.segs.iter_mut().skip(first) {
            if s.end > right {
                break;
            }
            if !s.sacked {
                s.sacked = true;
                newly += s.len();
                if s.in_pipe {
                    s.in_pipe = false;
                    self.pipe -= s.len();
                }
                self.lost -= s.lost as usize;
                s.lost = false;
            }
        }
        newly
    }

    /// Mark segment `i` lost: it leaves `pipe` and awaits retransmission.
    pub(super) fn mark_lost(&mut self, i: usize) {
        let Some(s) = self.segs.get_mut(i) else {
            return;
        };
        if s.sacked || s.lost {
            return;
        }
        s.lost = true;
        self.lost += 1;
        if s.in_pipe {
            s.in_pipe = false;
            self.pipe -= s.len();
        }
    }

    /// RFC 6675 §4 IsLost over the whole scoreboard: a segment not yet retransmitted in this
    /// episode is lost when at least `dupthresh` SACKed segments, or more than
    /// `(dupthresh - 1) * smss` SACKed bytes, lie above it. Returns how many were newly marked.
    pub(super) fn detect_losses(&mut self, dupthresh: u64, smss: u64) -> usize {
        let (mut count, mut bytes, mut marked) = (0u64, 0u64, 0);
        let mut lost = Vec::new();
        for (i, s) in self.segs.iter().enumerate().rev() {
            if s.sacked {
                count += 1;
                bytes += s.len();
            } else if !s.lost && !s.retx && (count >= dupthresh || bytes > (dupthresh - 1) * smss) {
                lost.push(i);
            }
        }
        for i in lost {
            self.mark_lost(i);
            marked += 1;
        }
        marked
    }

    /// True if the first unacknowledged segment is lost by [`Self::detect_losses`]'s rule.
    pub(super) fn first_is_lost(&self, dupthresh: u64, smss: u64) -> bool {
        let (mut count, mut bytes) = (0u64, 0u64);
        for s in self.segs.iter().skip(1) {
            if s.sacked {
                count += 1;
                bytes += s.len();
            }
        }
        self.segs.front().is_some_and(|s| !s.sacked) && (count >= dupthresh || bytes > (dupthresh - 1) * smss)
    }

    /// After a retransmission timeout: every segment not SACKed is lost, and the episode
    /// starts over (RFC 6675 §5.1; the SACK information is kept, RFC 2018 §8 receivers do not
    /// renege in this model).
    pub(super) fn mark_all_lost(&mut self) {
        for i in 0..self.segs.len() {
            if let Some(s) = self.segs.get_mut(i) {
                s.retx = false;
            }
            self.mark_lost(i);
        }
    }

    /// End of a loss episode: retransmissions become ordinary segments again.
    pub(super) fn end_episode(&mut self) {
        for s in &mut self.segs {
            s.retx = false;
        }
    }

    /// Index of the lowest segment awaiting retransmission.
    pub(super) fn first_lost(&self) -> Option<usize> {
        if self.lost == 0 {
            return None;
        }
        self.segs.iter().position(|s| s.lost)
    }

    /// Bytes between SND.UNA and the highest offset sent (RFC 5681 FlightSize).
    pub(super) fn flight_size(&self) -> u64 {
        self.nxt - self.una
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A queue of `capacity` bytes whose SYN is sent and acknowledged: data starts at 1.
    fn after_syn(capacity: usize) -> SendQueue {
        let mut q = SendQueue::new(capacity);
        q.sent_new(0, 1, true, false, Instant::ZERO);
        q.ack(1);
        q
    }

    /// Bytes written and acknowledged in pieces of every size, so that the ring buffer wraps:
    /// `write_with` hands over exactly the new bytes, zeroed, and they are what is sent.
    #[test]
    fn write_with_fills_the_new_bytes_across_the_ring_wrap() {
        let now = Instant::ZERO;
        let mut q = after_syn(3_000);
        let (mut written, mut acked, mut wrapped) = (0u64, 0u64, false);
        for round in 0..400u64 {
            let len = 1 + (round * 37 % 1_400) as usize;
            let n = q.write_with(len, |a, b| {
                wrapped |= !a.is_empty() && !b.is_empty();
                assert!(a.iter().chain(b.iter()).all(|&v| v == 0));
                for (k, v) in a.iter_mut().chain(b.iter_mut()).enumerate() {
                    *v = ((written + k as u64) % 251) as u8;
                }
            });
            assert_eq!(n, len.min(3_000 - (written - acked) as usize));
            let (a, b) = q.slices(1 + written, 1 + written + n as u64);
            let out = [a, b].concat();
            assert_eq!(out.len(), n);
            // `data_len` agrees with the slices' length for ranges that stick out either side.
            for (s, e) in [(0, 5_000), (1 + acked, 1 + written + n as u64 + 9), (2 + written, 1 + written)] {
                let (a, b) = q.slices(s, e);
                assert_eq!(q.data_len(s, e), a.len() + b.len());
            }
            assert!(out.iter().enumerate().all(|(k, &v)| v == ((written + k as u64) % 251) as u8), "round {round}");
            q.sent_new(1 + written, 1 + written + n as u64, false, false, now);
            written += n as u64;
            // Acknowledge some of what is out.
            acked += (written - acked) * (1 + round % 3) / 4;
            q.ack(1 + acked);
        }
        assert!(wrapped, "no write saw both parts of the ring");
    }

    #[test]
    fn scoreboard_counts_pipe_and_losses() {
        let now = Instant::ZERO;
        let mut q = after_syn(100_000);
        assert_eq!(q.write_with(10_000, |a, b| a.iter_mut().chain(b).for_each(|v| *v = 1)), 10_000);
        for k in 0..10 {
            q.sent_new(1 + k * 1000, 1 + (k + 1) * 1000, false, false, now);
        }
        assert_eq!(q.pipe, 10_000);
        // Segments 1..=3 SACKed: segment 0 is lost (3 SACKed segments above it).
        assert_eq!(q.sack(1001, 4001), 3000);
        assert!(q.first_is_lost(3, 1000));
        assert_eq!(q.detect_losses(3, 1000), 1);
        assert_eq!(q.pipe, 6000);
        assert_eq!(q.first_lost(), Some(0));
        q.sent_again(0, now);
        assert_eq!(q.pipe, 7000);
        let (acked, rtt) = q.ack(4001);
        assert_eq!((acked, rtt), (4000, None)); // covers a retransmission: no RTT sample
        let (a, b) = q.slices(4001, 4011);
        assert_eq!([a, b].concat(), vec![1u8; 10]);
        assert_eq!(q.pipe, 6000);
    }

    /// The count of lost segments follows the scoreboard through every operation that marks
    /// or clears a loss (random sends, cumulative ACKs, SACKs, loss marks, retransmissions,
    /// timeouts): `first_lost` answers as a walk over the scoreboard would.
    #[test]
    fn lost_count_follows_the_scoreboard() {
        let now = Instant::ZERO;
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let mut q = after_syn(1 << 20);
        for step in 0..5_000 {
            match next(8) {
                0 | 1 => {
                    let len = 1 + next(3_000) as usize;
                    let n = q.write_with(len, |_, _| {}) as u64;
                    let start = q.nxt;
                    if n > 0 {
                        q.sent_new(start, start + n.min(1_000), false, false, now);
                    }
                }
                2 => {
                    let ack = q.una + next(q.nxt - q.una + 1);
                    q.ack(ack);
                }
                3 => {
                    let l = q.una + next(q.nxt - q.una + 1);
                    let r = l + next(q.nxt - l + 1);
                    q.sack(l, r);
                }
                4 if !q.segs.is_empty() => q.mark_lost(next(q.segs.len() as u64) as usize),
                5 => {
                    if let Some(i) = q.first_lost() {
                        q.sent_again(i, now);
                    }
                }
                6 => {
                    q.detect_losses(3, 1_000);
                }
                7 if next(10) == 0 => q.mark_all_lost(),
                _ => {}
            }
            let scan = q.segs.iter().position(|s| s.lost);
            assert_eq!(q.lost, q.segs.iter().filter(|s| s.lost).count(), "step {step}");
            assert_eq!(q.first_lost(), scan, "step {step}");
        }
    }
}
