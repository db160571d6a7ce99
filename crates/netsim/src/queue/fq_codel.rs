//! FQ-CoDel, the FlowQueue-CoDel packet scheduler and AQM (RFC 8290): packets are hashed by
//! their 5-tuple into `flows` queues, each managed by its own CoDel control loop (the one of
//! [`super::codel`]), and served by deficit round robin with a byte `quantum`, flows that have
//! just become active (the new list) before the others (the old list).
//!
//! In RFC 8290's terms:
//! - Classification (§4.1): source and destination address, protocol, and for TCP,
//!   UDP and SCTP the two ports, hashed with a perturbation drawn once from the queue's random
//!   stream (so flows collide the same way in every run with the same seed, and differently
//!   under another seed); a packet whose header cannot be read is hashed by its flow id.
//! - Enqueue (§4.1): the packet joins its flow's queue, stamped with its arrival time; a flow
//!   that was in neither list joins the tail of the new list with a deficit of one quantum.
//!   When the queue then holds more than `limit` packets, packets are dropped from the head of
//!   the flow with the most bytes (§4.1's overload handling). As Linux does, a batch is dropped
//!   at once: packets from that flow's head until half its bytes are gone, at most
//!   `drop_batch` of them (1 drops a single packet, the RFC's basic behaviour). Their reason is
//!   [`OVERFLOW`].
//! - Dequeue (§4.2): the first flow of the new list, else of the old list; a flow whose
//!   deficit is used up gets another quantum and moves to the tail of the old list; otherwise
//!   its CoDel hands out a packet (dropping or marking as it does for a single queue, reasons
//!   [`super::codel::DROP`] and [`super::codel::MARK`]) and the deficit shrinks by the packet's
//!   length. A flow found empty leaves the new list for the tail of the old list if the old
//!   list has flows (so a flow cannot stay new by emptying its queue), and otherwise leaves
//!   the lists.
//! - CoDel per flow: target 5 ms, interval 100 ms; its MTU exemption counts the bytes left in
//!   that flow's queue (Linux counts the whole queue's). ECN marking is on by default, as in
//!   Linux's `fq_codel`: Not-ECT packets are dropped as before.

use std::collections::VecDeque;
#[cfg(test)]
use std::net::Ipv4Addr;

use rand::RngCore;

use super::codel::{CodelCounters, Controller, TimedFifo};
use super::{CodelParams, Dequeued, Dropped, Enqueued, QueueDisc, QueueReason, QueueStat};
use crate::rng::SimRng;
use crate::time::Instant;
use crate::wire::Packet;

/// Dropped from the head of the fattest flow because the queue held more than its limit.
pub const OVERFLOW: QueueReason = QueueReason("fq_codel_overflow");

/// FQ-CoDel's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FqCodelConfig {
    /// Packets the whole queue holds before it drops from the fattest flow (RFC 8290 §5.2.3 and
    /// Linux: 10,240).
    pub limit: usize,
    /// Number of flow queues (RFC 8290 §5.2.5 and Linux: 1,024).
    pub flows: usize,
    /// Bytes a flow may send per round (RFC 8290 §5.2.4: 1,514, an Ethernet MTU with its header).
    pub quantum: usize,
    /// Most packets dropped from the fattest flow at once on overflow (Linux: 64).
    pub drop_batch: usize,
    /// Each flow's CoDel (RFC 8290 §5.2.1, §5.2.2: interval 100 ms, target 5 ms; ECN on, §5.2.6
    /// and Linux).
    pub codel: CodelParams,
}

impl FqCodelConfig {
    /// Check the parameters: counts and quantum at least one, CoDel's durations positive.
    pub fn check(&self) -> Result<(), super::ParamError> {
        super::in_range("limit", self.limit as f64, 1.0..=f64::from(1u32 << 30))?;
        super::in_range("flows", self.flows as f64, 1.0..=65536.0)?;
        super::in_range("quantum", self.quantum as f64, 1.0..=f64::from(u32::MAX))?;
        super::in_range("drop_batch", self.drop_batch as f64, 1.0..=65536.0)?;
        self.codel.check()
    }
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        FqCodelConfig {
            limit: 10_240,
            flows: 1024,
            quantum: 1514,
            drop_batch: 64,
            codel: CodelParams { ecn: true, ..CodelParams::default() },
        }
    }
}

/// Which list a flow queue is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

/// One flow queue: its packets, its CoDel, its deficit.
#[derive(Debug)]
struct FlowQueue {
    fifo: TimedFifo,
    control: Controller,
    deficit: i64,
    list: List,
}

impl Default for FlowQueue {
    fn default() -> Self {
        FlowQueue { fifo: TimedFifo::default(), control: Controller::default(), deficit: 0, list: List::None }
    }
}

/// FQ-CoDel.
#[derive(Debug)]
pub struct FqCodel {
    cfg: FqCodelConfig,
    mtu: usize,
    perturbation: u64,
    queues: Vec<FlowQueue>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    packets: usize,
    bytes: usize,
    counters: CodelCounters,
    overflow_drops: u64,
    new_flow_count: u64,
}

impl FqCodel {
    /// Name in the registry.
    pub const KIND: &'static str = "fq-codel";

    /// An empty scheduler for a link direction whose largest packet is `mtu` bytes; the hash
    /// perturbation is drawn from `rng`.
    pub fn new(cfg: FqCodelConfig, mtu: usize, mut rng: SimRng) -> Self {
        let flows = cfg.flows.max(1);
        FqCodel {
            cfg: FqCodelConfig { flows, limit: cfg.limit.max(1), quantum: cfg.quantum.max(1), ..cfg },
            mtu,
            perturbation: rng.next_u64(),
            queues: (0..flows).map(|_| FlowQueue::default()).collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            packets: 0,
            bytes: 0,
            counters: CodelCounters::default(),
            overflow_drops: 0,
            new_flow_count: 0,
        }
    }

    /// The flow queue `pkt` belongs to.
    fn classify(&self, pkt: &Packet) -> usize {
        let h = match pkt.ip() {
            Some(ip) => {
                let ports = match ip.protocol() {
                    6 | 17 | 132 => ip.payload().get(..4).map_or(0, |p| u32::from_be_bytes([p[0], p[1], p[2], p[3]])),
                    _ => 0,
                };
                let addrs = (u64::from(u32::from(ip.src())) << 32) | u64::from(u32::from(ip.dst()));
                mix(addrs ^ self.perturbation, (u64::from(ip.protocol()) << 32) | u64::from(ports))
            }
            None => mix(self.perturbation, u64::from(pkt.meta.flow)),
        };
        // Scale the 64-bit hash onto the queues without a division's bias towards low indices.
        ((u128::from(h) * self.queues.len() as u128) >> 64) as usize
    }

    /// The queue `addrs`/`ports` would use (for tests and diagnostics).
    #[cfg(test)]
    fn queue_of(&self, src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, sport: u16, dport: u16) -> usize {
        let addrs = (u64::from(u32::from(src)) << 32) | u64::from(u32::from(dst));
        let ports = (u32::from(sport) << 16) | u32::from(dport);
        let h = mix(addrs ^ self.perturbation, (u64::from(protocol) << 32) | u64::from(ports));
        ((u128::from(h) * self.queues.len() as u128) >> 64) as usize
    }

    /// Drop a batch from the head of the flow with the most bytes (RFC 8290 §4.1, Linux's
    /// batch): until half its bytes are gone or `drop_batch` packets. Returns the arrival
    /// (`uid`) if it was among them, removed from `dropped`.
    fn drop_from_fattest(&mut self, uid: u64, dropped: &mut Dropped) -> Option<Packet> {
        let (fattest, backlog) = self
            .queues
            .iter()
            .enumerate()
            .map(|(i, q)| (i, q.fifo.bytes()))
            .fold((0, 0), |best, cur| if cur.1 > best.1 { cur } else { best });
        let threshold = backlog / 2;
        let q = &mut self.queues[fattest];
        let (mut gone, mut count) = (0, 0);
        let mut arrival = None;
        while let Some((pkt, _)) = q.fifo.pop() {
            gone += pkt.len();
            count += 1;
            self.packets -= 1;
            self.bytes -= pkt.len();
            self.overflow_drops += 1;
            if pkt.meta.uid == uid {
                arrival = Some(pkt);
            } else {
                dropped.push((pkt, OVERFLOW));
            }
            if count >= self.cfg.drop_batch.max(1) || gone >= threshold {
                break;
            }
        }
        arrival
    }
}

/// A 64-bit mix of two words (SplitMix64's finaliser over their combination).
#[inline]
fn mix(a: u64, b: u64) -> u64 {
    let mut z = a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.rotate_left(29);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl QueueDisc for FqCodel {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn enqueue(&mut self, pkt: Packet, now: Instant, dropped: &mut Dropped) -> Enqueued {
        let idx = self.classify(&pkt);
        let uid = pkt.meta.uid;
        self.packets += 1;
        self.bytes += pkt.len();
        let q = &mut self.queues[idx];
        q.fifo.push(pkt, now);
        if q.list == List::None {
            // A newly active flow: the new list, with a fresh quantum (§4.1).
            q.list = List::New;
            q.deficit = self.cfg.quantum as i64;
            self.new_flows.push_back(idx as u32);
            self.new_flow_count += 1;
        }
        if self.packets > self.cfg.limit {
            if let Some(pkt) = self.drop_from_fattest(uid, dropped) {
                return Enqueued::Dropped(pkt, OVERFLOW);
            }
        }
        Enqueued::Queued { marked: None }
    }

    fn dequeue(&mut self, now: Instant, dropped: &mut Dropped) -> Option<Dequeued> {
        loop {
            let (idx, from_new) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (i as usize, true),
                (None, Some(&i)) => (i as usize, false),
                (None, None) => return None,
            };
            let q = &mut self.queues[idx];
            if q.deficit <= 0 {
                // Used its quantum: another one, at the back of the old list (§4.2).
                q.deficit += self.cfg.quantum as i64;
                q.list = List::Old;
                if from_new {
                    self.new_flows.pop_front()
                } else {
                    self.old_flows.pop_front()
                };
                self.old_flows.push_back(idx as u32);
                continue;
            }
            let (packets, bytes) = (q.fifo.len(), q.fifo.bytes());
            let out = q.control.dequeue(&mut q.fifo, &self.cfg.codel, self.mtu, now, dropped, &mut self.counters);
            self.packets -= packets - q.fifo.len();
            self.bytes -= bytes - q.fifo.bytes();
            match out {
                Some(d) => {
                    q.deficit -= d.pkt.len() as i64;
                    return Some(d);
                }
                None => {
                    // Empty (§4.2): a new flow goes to the old list if that has flows, so it
                    // cannot stay new; otherwise the flow leaves the lists.
                    if from_new {
                        self.new_flows.pop_front();
                        if self.old_flows.is_empty() {
                            q.list = List::None;
                        } else {
                            q.list = List::Old;
                            self.old_flows.push_back(idx as u32);
                        }
                    } else {
                        self.old_flows.pop_front();
                        q.list = List::None;
                    }
                }
            }
        }
    }

    fn len_packets(&self) -> usize {
        self.packets
    }

    fn len_bytes(&self) -> usize {
        self.bytes
    }

    fn flush(&mut self) -> Vec<Packet> {
        let mut out = Vec::with_capacity(self.packets);
        for q in &mut self.queues {
            out.extend(q.fifo.drain());
            q.list = List::None;
        }
        self.new_flows.clear();
        self.old_flows.clear();
        self.packets = 0;
        self.bytes = 0;
        out
    }

    fn stats(&self) -> Vec<QueueStat> {
        let c = &self.counters;
        vec![
            QueueStat { name: "fq_codel_drops", value: c.drops as f64, unit: "packets" },
            QueueStat { name: "fq_codel_marks", value: c.marks as f64, unit: "packets" },
            QueueStat { name: "fq_codel_overflow_drops", value: self.overflow_drops as f64, unit: "packets" },
            QueueStat { name: "fq_codel_new_flows", value: self.new_flow_count as f64, unit: "1" },
            QueueStat { name: "fq_codel_sojourn_mean", value: c.sojourn_mean_s(), unit: "s" },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RngTree;
    use crate::time::Duration;
    use crate::wire::{udp_datagram, Ipv4Fields, PacketMeta};

    const DST: Ipv4Addr = Ipv4Addr::new(10, 9, 0, 2);

    /// A UDP datagram of `len` bytes from 10.0.0.`host`, port `sport`.
    fn pkt(host: u8, sport: u16, len: usize, uid: u64) -> Packet {
        let src = Ipv4Addr::new(10, 0, 0, host);
        let seg = udp_datagram(src, DST, sport, 9, &vec![0; len - 28]);
        let fields = Ipv4Fields { src, dst: DST, protocol: 17, ttl: 64, ident: 0 };
        Packet::ipv4(fields, &seg, PacketMeta { flow: u32::from(host), uid })
    }

    fn fq(cfg: FqCodelConfig, seed: u64) -> FqCodel {
        FqCodel::new(cfg, 1500, RngTree::new(seed).stream("fq"))
    }

    fn ms(v: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(v)
    }

    #[test]
    fn a_new_flow_is_served_before_the_backlogged_ones() {
        let mut q = fq(FqCodelConfig::default(), 1);
        let mut dropped = Dropped::new();
        for i in 0..50 {
            q.enqueue(pkt(1, 1000, 1000, i), ms(0), &mut dropped);
        }
        // The bulk flow sends its quantum (two 1000-byte packets), then goes to the old list.
        let out: Vec<u64> = (0..3).map(|_| q.dequeue(ms(1), &mut dropped).unwrap().pkt.meta.uid).collect();
        assert_eq!(out, [0, 1, 2]);
        // A sparse flow's packet arrives: it is next, ahead of 47 bulk packets.
        q.enqueue(pkt(2, 2000, 200, 100), ms(2), &mut dropped);
        assert_eq!(q.dequeue(ms(2), &mut dropped).unwrap().pkt.meta.uid, 100);
        assert_eq!(q.dequeue(ms(2), &mut dropped).unwrap().pkt.meta.uid, 3);
        // Once empty, the sparse flow left the new list (for the old one, behind the bulk).
        assert!(q.new_flows.is_empty());
        assert_eq!(q.stats()[3].value, 2.0, "two flows became active");
        assert!(dropped.is_empty());
    }

    #[test]
    fn deficit_round_robin_shares_bytes_not_packets() {
        let mut q = fq(FqCodelConfig::default(), 1);
        let mut dropped = Dropped::new();
        // Flow a: 1500-byte packets; flow b: 300-byte packets; both always backlogged.
        for i in 0..400 {
            q.enqueue(pkt(1, 1, 1500, i), ms(0), &mut dropped);
            q.enqueue(pkt(2, 2, 300, 1000 + i), ms(0), &mut dropped);
        }
        let (mut a, mut b) = (0usize, 0usize);
        for _ in 0..300 {
            let d = q.dequeue(ms(0), &mut dropped).unwrap();
            if d.pkt.meta.flow == 1 {
                a += d.pkt.len();
            } else {
                b += d.pkt.len();
            }
        }
        // Equal bytes within a quantum or so, though b sends five times as many packets.
        assert!(a.abs_diff(b) <= 2 * 1514, "a {a} b {b}");
    }

    #[test]
    fn overflow_drops_a_batch_from_the_fattest_flow_head() {
        let cfg = FqCodelConfig { limit: 40, ..FqCodelConfig::default() };
        let mut q = fq(cfg, 1);
        let mut dropped = Dropped::new();
        for i in 0..30 {
            q.enqueue(pkt(1, 1, 1000, i), ms(0), &mut dropped); // fat: 30,000 bytes
        }
        for i in 0..10 {
            q.enqueue(pkt(2, 2, 500, 100 + i), ms(0), &mut dropped); // thin
        }
        assert!(dropped.is_empty());
        // The 41st packet (thin flow's) overflows: half the fat flow's bytes go from its head.
        assert!(matches!(q.enqueue(pkt(2, 2, 500, 200), ms(0), &mut dropped), Enqueued::Queued { marked: None }));
        let uids: Vec<u64> = dropped.iter().map(|(p, _)| p.meta.uid).collect();
        assert_eq!(uids, (0..15).collect::<Vec<_>>());
        assert!(dropped.iter().all(|(_, why)| *why == OVERFLOW));
        assert_eq!(q.len_packets(), 26);
        assert_eq!(q.len_bytes(), 15 * 1000 + 11 * 500);
        // With a batch of one, exactly one packet goes.
        let mut q = fq(FqCodelConfig { limit: 40, drop_batch: 1, ..FqCodelConfig::default() }, 1);
        dropped.clear();
        for i in 0..30 {
            q.enqueue(pkt(1, 1, 1000, i), ms(0), &mut dropped);
        }
        for i in 0..11 {
            q.enqueue(pkt(2, 2, 500, 100 + i), ms(0), &mut dropped);
        }
        assert_eq!(dropped.iter().map(|(p, _)| p.meta.uid).collect::<Vec<_>>(), [0]);
        assert_eq!(q.stats()[2].value, 1.0);
    }

    #[test]
    fn each_flow_has_its_own_codel() {
        let mut q = fq(FqCodelConfig { codel: CodelParams::default(), ..FqCodelConfig::default() }, 1);
        let mut dropped = Dropped::new();
        // A standing 100-packet bulk flow (sojourn 100 ms) and a sparse flow of one packet a
        // millisecond: only the bulk flow is dropped from.
        let mut uid = 0;
        for _ in 0..100 {
            q.enqueue(pkt(1, 1, 1000, uid), ms(0), &mut dropped);
            uid += 1;
        }
        for t in 1..2000 {
            q.enqueue(pkt(1, 1, 1000, uid), ms(t), &mut dropped);
            q.enqueue(pkt(2, 2, 100, 1_000_000 + t), ms(t), &mut dropped);
            uid += 1;
            q.dequeue(ms(t), &mut dropped);
            q.dequeue(ms(t), &mut dropped);
        }
        assert!(dropped.len() > 10);
        assert!(dropped.iter().all(|(p, why)| p.meta.flow == 1 && *why == super::super::codel::DROP));
    }

    #[test]
    fn hashing_is_deterministic_and_the_perturbation_comes_from_the_seed() {
        let (a, b, c) =
            (fq(FqCodelConfig::default(), 1), fq(FqCodelConfig::default(), 1), fq(FqCodelConfig::default(), 2));
        let tuples: Vec<(u8, u16)> = (1..=200).map(|i| (i as u8, 1000 + i)).collect();
        let of = |q: &FqCodel| -> Vec<usize> {
            tuples.iter().map(|&(h, p)| q.queue_of(Ipv4Addr::new(10, 0, 0, h), DST, 17, p, 9)).collect()
        };
        assert_eq!(of(&a), of(&b));
        assert_ne!(of(&a), of(&c));
        // The queue a packet goes to is its 5-tuple's.
        let p = pkt(7, 1007, 500, 0);
        assert_eq!(a.classify(&p), a.queue_of(Ipv4Addr::new(10, 0, 0, 7), DST, 17, 1007, 9));
        // 200 flows over 1,024 queues: few collisions (about 18 expected).
        let mut seen = of(&a);
        seen.sort_unstable();
        seen.dedup();
        assert!(seen.len() > 170, "{}", seen.len());
    }

    #[test]
    fn ecn_capable_flows_are_marked_and_the_others_dropped() {
        use crate::wire::Ecn;
        // Default: ECN on (RFC 8290 §5.2.6). Two standing bulk flows, one ECT(0), one Not-ECT,
        // each with a 100-packet backlog kept up: each flow's CoDel signals congestion, by a
        // CE mark in the first flow and by a drop in the second.
        let marked = |host: u8, uid: u64, ecn: Ecn| {
            let mut p = pkt(host, u16::from(host), 1000, uid);
            p.set_ecn(ecn).unwrap();
            p
        };
        for ecn_on in [true, false] {
            let codel = CodelParams { ecn: ecn_on, ..CodelParams::default() };
            let mut q = fq(FqCodelConfig { codel, ..FqCodelConfig::default() }, 1);
            let mut dropped = Dropped::new();
            let (mut uid, mut marks, mut drops) = (0u64, [0usize; 2], [0usize; 2]);
            for _ in 0..100 {
                q.enqueue(marked(1, uid, Ecn::Ect0), ms(0), &mut dropped);
                q.enqueue(marked(2, uid + 1, Ecn::NotEct), ms(0), &mut dropped);
                uid += 2;
            }
            for t in 1..3000 {
                q.enqueue(marked(1, uid, Ecn::Ect0), ms(t), &mut dropped);
                q.enqueue(marked(2, uid + 1, Ecn::NotEct), ms(t), &mut dropped);
                uid += 2;
                for _ in 0..2 {
                    let Some(d) = q.dequeue(ms(t), &mut dropped) else { continue };
                    let f = d.pkt.meta.flow as usize - 1;
                    if d.marked.is_some() {
                        assert_eq!(d.marked, Some(super::super::codel::MARK));
                        assert_eq!(d.pkt.ecn(), Some(Ecn::Ce));
                        marks[f] += 1;
                    }
                }
                for (p, why) in dropped.drain(..) {
                    assert_eq!(why, super::super::codel::DROP);
                    drops[p.meta.flow as usize - 1] += 1;
                }
            }
            if ecn_on {
                assert!(marks[0] > 10 && drops[0] == 0, "ECT flow: {marks:?} marks, {drops:?} drops");
            } else {
                assert!(marks[0] == 0 && drops[0] > 10, "ECN off: {marks:?} marks, {drops:?} drops");
            }
            assert!(marks[1] == 0 && drops[1] > 10, "Not-ECT flow: {marks:?} marks, {drops:?} drops");
            assert_eq!(q.stats()[1].value, (marks[0] + marks[1]) as f64, "fq_codel_marks");
            assert_eq!(q.stats()[0].value, (drops[0] + drops[1]) as f64, "fq_codel_drops");
        }
    }
}
