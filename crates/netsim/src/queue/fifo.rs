//! What drop-tail and the classic AQMs (RED, FRED, BLUE, REM, PI) share: a FIFO with a hard limit, the
//! choice between marking and dropping a packet picked for congestion notification, and a
//! uniform draw.

use std::collections::VecDeque;

use rand::Rng;

use super::{Enqueued, QueueLimit, QueueReason};
use crate::rng::SimRng;
use crate::wire::Packet;

/// First in, first out, with its occupancy in packets and bytes.
#[derive(Debug, Default)]
pub(crate) struct Fifo {
    packets: VecDeque<Packet>,
    bytes: usize,
}

impl Fifo {
    /// Packets waiting.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.packets.len()
    }

    /// True if nothing waits.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    /// Bytes waiting.
    #[inline]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The occupancy in the unit an AQM measures: bytes or packets.
    #[inline]
    pub(crate) fn occupancy(&self, bytes: bool) -> f64 {
        if bytes {
            self.bytes as f64
        } else {
            self.packets.len() as f64
        }
    }

    /// True if `pkt` does not fit under `limit` now (as drop-tail decides).
    #[inline]
    pub(crate) fn full_for(&self, limit: QueueLimit, pkt: &Packet) -> bool {
        match limit {
            QueueLimit::Packets(n) => self.packets.len() >= n,
            QueueLimit::Bytes(n) => self.bytes + pkt.len() > n,
        }
    }

    /// Append a packet.
    #[inline]
    pub(crate) fn push(&mut self, pkt: Packet) {
        self.bytes += pkt.len();
        self.packets.push_back(pkt);
    }

    /// Take the oldest packet.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<Packet> {
        let pkt = self.packets.pop_front()?;
        self.bytes -= pkt.len();
        Some(pkt)
    }

    /// Take the newest packet (tests).
    #[cfg(test)]
    pub(crate) fn pop_back(&mut self) -> Option<Packet> {
        let pkt = self.packets.pop_back()?;
        self.bytes -= pkt.len();
        Some(pkt)
    }

    /// Take every packet.
    pub(crate) fn flush(&mut self) -> Vec<Packet> {
        self.bytes = 0;
        self.packets.drain(..).collect()
    }

    /// Queue an arrival that fits, unless a draw with probability `p` picks it for congestion
    /// notification ([`Fifo::notify`]): how BLUE, REM and PI admit.
    pub(crate) fn admit(
        &mut self,
        pkt: Packet,
        p: f64,
        rng: &mut SimRng,
        ecn: bool,
        tally: &mut Tally,
        (mark, early): (QueueReason, QueueReason),
    ) -> Enqueued {
        if happens(rng, p) {
            return self.notify(pkt, ecn, tally, mark, early);
        }
        self.push(pkt);
        Enqueued::Queued { marked: None }
    }

    /// Congestion notification for an arrival the AQM picked (see [`mark_or_drop`]): marked
    /// and queued, or dropped early; counted in `tally` either way.
    pub(crate) fn notify(
        &mut self,
        mut pkt: Packet,
        ecn: bool,
        tally: &mut Tally,
        mark: QueueReason,
        early: QueueReason,
    ) -> Enqueued {
        match mark_or_drop(&mut pkt, ecn, mark) {
            Some(mark) => {
                tally.marks += 1;
                self.push(pkt);
                Enqueued::Queued { marked: Some(mark) }
            }
            None => {
                tally.early_drops += 1;
                Enqueued::Dropped(pkt, early)
            }
        }
    }
}

/// A packet-mode probability applied in byte mode: scaled by the packet's size against the
/// mean packet size (ns-2's byte mode for REM and PI), at most 1.
#[inline]
pub(crate) fn byte_scaled(p: f64, bytes: bool, len: usize, mean_pktsize: u32) -> f64 {
    if bytes {
        (p * len as f64 / f64::from(mean_pktsize)).min(1.0)
    } else {
        p
    }
}

/// Congestion notification for a packet an AQM picked: with `ecn` on, an ECN-capable packet is
/// marked Congestion Experienced and kept (RFC 3168 §5); otherwise, and for a Not-ECT packet,
/// it is to be dropped. Returns the reason the packet was marked, or `None` if it must be
/// dropped.
#[inline]
pub(crate) fn mark_or_drop(pkt: &mut Packet, ecn: bool, mark: QueueReason) -> Option<QueueReason> {
    (ecn && pkt.mark_ce()).then_some(mark)
}

/// A uniform draw in [0, 1): an event of probability `p` happens when the draw is below `p`
/// (never for 0, always for 1).
#[inline]
pub(crate) fn happens(rng: &mut SimRng, p: f64) -> bool {
    p > 0.0 && rng.random::<f64>() < p
}

/// Counters every classic AQM keeps, reported as statistics.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tally {
    /// Packets offered.
    pub(crate) arrivals: u64,
    /// Probabilistic (early) drops.
    pub(crate) early_drops: u64,
    /// Deterministic drops the algorithm decided while the buffer had room.
    pub(crate) forced_drops: u64,
    /// Drops because the buffer was full.
    pub(crate) overflow_drops: u64,
    /// Packets marked Congestion Experienced.
    pub(crate) marks: u64,
}

/// A periodic update (REM's price, PI's probability) run lazily: the discipline asks, at each
/// arrival or departure, how many update instants (`interval`, `2 interval`, ...) have passed
/// since it last asked. Between two calls nothing reaches the queue, so updates computed late
/// see exactly the state a timer would have seen, with no event per update in the kernel.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ticker {
    interval: u64,
    next: u64,
}

impl Ticker {
    /// Updates every `interval` (nanoseconds, at least 1), the first one `interval` after zero.
    pub(crate) fn new(interval: crate::time::Duration) -> Self {
        let interval = interval.as_nanos().max(1);
        Ticker { interval, next: interval }
    }

    /// The number of update instants at or before `now` not yet counted.
    #[inline]
    pub(crate) fn due(&mut self, now: crate::time::Instant) -> u64 {
        let now = now.as_nanos();
        if now < self.next {
            return 0;
        }
        let n = (now - self.next) / self.interval + 1;
        self.next = self.next.saturating_add(n.saturating_mul(self.interval));
        n
    }
}
