//! Drop-tail: first in, first out; an arrival that would exceed the limit is dropped.

use super::fifo::Fifo;
use super::{Dequeued, Dropped, Enqueued, Passed, QueueDisc, QueueLimit, QueueReason};
use crate::time::Instant;
use crate::wire::Packet;

/// The arrival did not fit under the queue's limit.
pub const OVERFLOW: QueueReason = QueueReason("queue_full");

/// First in, first out with a limit in packets or bytes.
#[derive(Debug)]
pub struct DropTail {
    limit: QueueLimit,
    fifo: Fifo,
}

impl DropTail {
    /// Name in the registry.
    pub const KIND: &'static str = "droptail";

    /// An empty queue with the given capacity.
    pub fn new(limit: QueueLimit) -> Self {
        DropTail { limit, fifo: Fifo::default() }
    }
}

impl QueueDisc for DropTail {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    #[inline(always)]
    fn enqueue(&mut self, pkt: Packet, _now: Instant, _dropped: &mut Dropped) -> Enqueued {
        if self.fifo.full_for(self.limit, &pkt) {
            return Enqueued::Dropped(pkt, OVERFLOW);
        }
        self.fifo.push(pkt);
        Enqueued::Queued { marked: None }
    }

    #[inline(always)]
    fn dequeue(&mut self, _now: Instant, _dropped: &mut Dropped) -> Option<Dequeued> {
        self.fifo.pop().map(Dequeued::plain)
    }

    /// The arrival, unless it alone exceeds the limit, is the next packet out: hand it straight
    /// back rather than through the deque.
    #[inline(always)]
    fn enqueue_dequeue(&mut self, pkt: Packet, now: Instant, dropped: &mut Dropped) -> Passed {
        if !self.fifo.is_empty() {
            // Not idle after all: the general case.
            let arrival = self.enqueue(pkt, now, dropped);
            return Passed::Otherwise(arrival, self.dequeue(now, dropped));
        }
        if self.fifo.full_for(self.limit, &pkt) {
            return Passed::Otherwise(Enqueued::Dropped(pkt, OVERFLOW), None);
        }
        Passed::Through(pkt)
    }

    fifo_occupancy!(fifo);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{QueueConfig, QueueContext};
    use crate::rng::RngTree;
    use crate::time::Duration;
    use crate::wire::PacketMeta;

    fn pkt(len: usize, uid: u64) -> Packet {
        Packet { bytes: vec![0; len], meta: PacketMeta { flow: 0, uid } }
    }

    fn accepted(outcome: Enqueued) -> bool {
        matches!(outcome, Enqueued::Queued { marked: None })
    }

    #[test]
    fn packet_limit_drops_the_arrival_beyond_it() {
        let ctx =
            QueueContext { rate_bps: 1_000_000, delay: Duration::ZERO, mtu: 1500, rng: RngTree::new(1).stream("q") };
        let mut q = QueueConfig::DropTail { limit: QueueLimit::Packets(3) }.build(ctx);
        assert_eq!(q.kind(), "droptail");
        let mut dropped = Dropped::new();
        for i in 0..3 {
            assert!(accepted(q.enqueue(pkt(100, i), Instant::ZERO, &mut dropped)));
        }
        let Enqueued::Dropped(refused, why) = q.enqueue(pkt(100, 3), Instant::ZERO, &mut dropped) else {
            panic!("a fourth packet fits under a limit of three")
        };
        assert_eq!((refused.meta.uid, why, why.name()), (3, OVERFLOW, "queue_full"));
        assert!(dropped.is_empty(), "drop-tail never drops a resident packet");
        assert_eq!((q.len_packets(), q.len_bytes()), (3, 300));
        // FIFO order out, nothing marked or dropped on the way.
        let out: Vec<u64> = std::iter::from_fn(|| q.dequeue(Instant::ZERO, &mut dropped))
            .map(|d| {
                assert_eq!(d.marked, None);
                d.pkt.meta.uid
            })
            .collect();
        assert_eq!(out, vec![0, 1, 2]);
        assert!(dropped.is_empty());
        assert_eq!((q.len_packets(), q.len_bytes()), (0, 0));
        assert!(q.stats().is_empty());
    }

    #[test]
    fn the_idle_shortcut_matches_enqueue_then_dequeue() {
        let limits = [QueueLimit::Packets(1), QueueLimit::Packets(3), QueueLimit::Bytes(500), QueueLimit::Bytes(1000)];
        for limit in limits {
            for resident in [0, 1, 2] {
                for len in [100, 500, 501, 1000] {
                    let (mut a, mut b) = (DropTail::new(limit), DropTail::new(limit));
                    let (mut da, mut db) = (Dropped::new(), Dropped::new());
                    for i in 0..resident {
                        a.enqueue(pkt(100, 100 + i), Instant::ZERO, &mut da);
                        b.enqueue(pkt(100, 100 + i), Instant::ZERO, &mut db);
                    }
                    let passed = a.enqueue_dequeue(pkt(len, 1), Instant::ZERO, &mut da);
                    let arrival_b = b.enqueue(pkt(len, 1), Instant::ZERO, &mut db);
                    let next_b = b.dequeue(Instant::ZERO, &mut db);
                    let case = format!("{limit:?}, {resident} resident, {len} bytes");
                    let (arrival, next) = match passed {
                        Passed::Through(p) => {
                            assert_eq!(resident, 0, "{case}: only an empty queue passes the arrival through");
                            (Enqueued::Queued { marked: None }, Some(Dequeued::plain(p)))
                        }
                        Passed::Otherwise(arrival, next) => (arrival, next),
                    };
                    assert_eq!(format!("{arrival:?}"), format!("{arrival_b:?}"), "{case}");
                    assert_eq!(format!("{next:?}"), format!("{next_b:?}"), "{case}");
                    assert_eq!((a.len_packets(), a.len_bytes()), (b.len_packets(), b.len_bytes()), "{case}");
                    assert!(da.is_empty() && db.is_empty());
                }
            }
        }
    }

    #[test]
    fn byte_limit_counts_bytes_exactly() {
        let mut dropped = Dropped::new();
        let mut q = DropTail::new(QueueLimit::Bytes(1000));
        assert!(accepted(q.enqueue(pkt(600, 0), Instant::ZERO, &mut dropped)));
        assert!(accepted(q.enqueue(pkt(400, 1), Instant::ZERO, &mut dropped))); // exactly full
        assert!(!accepted(q.enqueue(pkt(1, 2), Instant::ZERO, &mut dropped)));
        q.dequeue(Instant::ZERO, &mut dropped);
        // 600 bytes free now: a 601-byte packet still does not fit, 600 does.
        assert!(!accepted(q.enqueue(pkt(601, 3), Instant::ZERO, &mut dropped)));
        assert!(accepted(q.enqueue(pkt(600, 4), Instant::ZERO, &mut dropped)));
        assert_eq!(q.len_bytes(), 1000);
        assert_eq!(q.flush().len(), 2);
        assert_eq!(q.len_bytes(), 0);
    }
}
