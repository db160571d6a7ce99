//! Queue disciplines: the output queue of each link direction.
//!
//! A discipline decides what to do with an arriving packet (accept or drop) and which packet
//! leaves next. Disciplines implement [`QueueDisc`]; the configuration type [`QueueConfig`]
//! builds them by name, so scenario files choose one with `queue.kind`. This module provides
//! drop-tail; active queue management (RED and friends) plugs in behind the same trait.

use std::collections::VecDeque;

use crate::rng::SimRng;
use crate::time::Instant;
use crate::wire::Packet;

/// Why a queue refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueDrop {
    /// The queue was at its limit.
    Full,
    /// An active queue management decision dropped it early.
    Early,
}

/// A queue discipline.
///
/// Occupancy accessors must be O(1): they are read on every enqueue for statistics.
pub trait QueueDisc: Send {
    /// Offer a packet; on refusal the packet is handed back with the reason.
    fn enqueue(&mut self, pkt: Packet, now: Instant, rng: &mut SimRng) -> Result<(), (Packet, QueueDrop)>;
    /// The next packet to transmit, if any.
    fn dequeue(&mut self, now: Instant) -> Option<Packet>;
    /// Packets waiting.
    fn len_packets(&self) -> usize;
    /// Bytes waiting.
    fn len_bytes(&self) -> usize;
    /// Remove and return every waiting packet (a link or interface went down).
    fn flush(&mut self) -> Vec<Packet>;
}

/// The capacity of a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    /// At most this many packets.
    Packets(usize),
    /// At most this many bytes (a packet that would exceed it is dropped).
    Bytes(usize),
}

/// Which discipline to build and with what parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueConfig {
    /// First in, first out; arrivals to a full queue are dropped.
    DropTail {
        /// Capacity.
        limit: QueueLimit,
    },
}

impl QueueConfig {
    /// Build a fresh, empty queue.
    pub fn build(&self) -> Box<dyn QueueDisc> {
        match *self {
            QueueConfig::DropTail { limit } => Box::new(DropTail::new(limit)),
        }
    }
}

/// First in, first out with a limit in packets or bytes.
#[derive(Debug)]
pub struct DropTail {
    limit: QueueLimit,
    packets: VecDeque<Packet>,
    bytes: usize,
}

impl DropTail {
    /// An empty queue with the given capacity.
    pub fn new(limit: QueueLimit) -> Self {
        DropTail { limit, packets: VecDeque::new(), bytes: 0 }
    }
}

impl QueueDisc for DropTail {
    fn enqueue(&mut self, pkt: Packet, _now: Instant, _rng: &mut SimRng) -> Result<(), (Packet, QueueDrop)> {
        let full = match self.limit {
            QueueLimit::Packets(n) => self.packets.len() >= n,
            QueueLimit::Bytes(n) => self.bytes + pkt.len() > n,
        };
        if full {
            return Err((pkt, QueueDrop::Full));
        }
        self.bytes += pkt.len();
        self.packets.push_back(pkt);
        Ok(())
    }

    fn dequeue(&mut self, _now: Instant) -> Option<Packet> {
        let pkt = self.packets.pop_front()?;
        self.bytes -= pkt.len();
        Some(pkt)
    }

    fn len_packets(&self) -> usize {
        self.packets.len()
    }

    fn len_bytes(&self) -> usize {
        self.bytes
    }

    fn flush(&mut self) -> Vec<Packet> {
        self.bytes = 0;
        self.packets.drain(..).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RngTree;
    use crate::wire::PacketMeta;

    fn pkt(len: usize, uid: u64) -> Packet {
        Packet { bytes: vec![0; len], meta: PacketMeta { flow: 0, uid } }
    }

    #[test]
    fn packet_limit_drops_the_arrival_beyond_it() {
        let mut rng = RngTree::new(1).stream("q");
        let mut q = QueueConfig::DropTail { limit: QueueLimit::Packets(3) }.build();
        for i in 0..3 {
            q.enqueue(pkt(100, i), Instant::ZERO, &mut rng).unwrap();
        }
        let (refused, why) = q.enqueue(pkt(100, 3), Instant::ZERO, &mut rng).unwrap_err();
        assert_eq!((refused.meta.uid, why), (3, QueueDrop::Full));
        assert_eq!((q.len_packets(), q.len_bytes()), (3, 300));
        // FIFO order out.
        let out: Vec<u64> = std::iter::from_fn(|| q.dequeue(Instant::ZERO)).map(|p| p.meta.uid).collect();
        assert_eq!(out, vec![0, 1, 2]);
        assert_eq!((q.len_packets(), q.len_bytes()), (0, 0));
    }

    #[test]
    fn byte_limit_counts_bytes_exactly() {
        let mut rng = RngTree::new(1).stream("q");
        let mut q = DropTail::new(QueueLimit::Bytes(1000));
        q.enqueue(pkt(600, 0), Instant::ZERO, &mut rng).unwrap();
        q.enqueue(pkt(400, 1), Instant::ZERO, &mut rng).unwrap(); // exactly full
        assert!(q.enqueue(pkt(1, 2), Instant::ZERO, &mut rng).is_err());
        q.dequeue(Instant::ZERO);
        // 600 bytes free now: a 601-byte packet still does not fit, 600 does.
        assert!(q.enqueue(pkt(601, 3), Instant::ZERO, &mut rng).is_err());
        q.enqueue(pkt(600, 4), Instant::ZERO, &mut rng).unwrap();
        assert_eq!(q.len_bytes(), 1000);
        assert_eq!(q.flush().len(), 2);
        assert_eq!(q.len_bytes(), 0);
    }
}
