//! The queue contract seen from the channel: disciplines defined here (not shipped) drop at
//! dequeue, mark ECN-capable packets Congestion Experienced, and drop a resident packet to admit
//! an arrival; the channel must deliver, count, charge and trace each outcome. Drop-tail keeps
//! its behaviour: a packet that finds the transmitter idle is not counted or traced as waiting.
//!
//! Topology: H0 --(1 Gbit/s, 1 us)-- R --(10 Mbit/s, 1 us, the discipline under test)-- H1.
//! Datagrams are 1000 bytes on the wire: 8 us to serialise on the first link, 800 us on the
//! second, so everything H0 sends within a few hundred microseconds queues at R behind the first
//! packet, which found R's transmitter idle.
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::VecDeque;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use netsim::agent::{Agent, Ctx};
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::{
    CustomQueue, Dequeued, Dropped, Enqueued, QueueConfig, QueueContext, QueueDisc, QueueLimit, QueueReason, QueueStat,
};
use netsim::recorder::EventLog;
use netsim::wire::{udp_datagram, Ecn, Packet, UdpView, PROTO_UDP};
use netsim::world::{RunResult, WorldBuilder};
use netsim::{Duration, Instant};

const H0: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const H1: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 2);
/// UDP payload that makes a 1000-byte datagram.
const PAYLOAD: usize = 1000 - 20 - 8;

// ---------------------------------------------------------------------------------------------
// Test disciplines
// ---------------------------------------------------------------------------------------------

/// A FIFO the test disciplines share.
#[derive(Default)]
struct Fifo {
    packets: VecDeque<Packet>,
    bytes: usize,
}

impl Fifo {
    fn push(&mut self, pkt: Packet) {
        self.bytes += pkt.len();
        self.packets.push_back(pkt);
    }
    fn pop(&mut self) -> Option<Packet> {
        let pkt = self.packets.pop_front()?;
        self.bytes -= pkt.len();
        Some(pkt)
    }
}

/// Takes everything; at dequeue drops every `every`-th packet it takes out and sends the next.
struct DropAtDequeue {
    fifo: Fifo,
    every: u64,
    taken: u64,
}

const DEQUEUE_DROP: QueueReason = QueueReason("test_dequeue_drop");

impl QueueDisc for DropAtDequeue {
    fn kind(&self) -> &'static str {
        "drop-at-dequeue"
    }
    fn enqueue(&mut self, pkt: Packet, _now: Instant, _dropped: &mut Dropped) -> Enqueued {
        self.fifo.push(pkt);
        Enqueued::Queued { marked: None }
    }
    fn dequeue(&mut self, _now: Instant, dropped: &mut Dropped) -> Option<Dequeued> {
        loop {
            let pkt = self.fifo.pop()?;
            self.taken += 1;
            if self.taken.is_multiple_of(self.every) {
                dropped.push((pkt, DEQUEUE_DROP));
            } else {
                return Some(Dequeued::plain(pkt));
            }
        }
    }
    fn len_packets(&self) -> usize {
        self.fifo.packets.len()
    }
    fn len_bytes(&self) -> usize {
        self.fifo.bytes
    }
    fn flush(&mut self) -> Vec<Packet> {
        self.fifo.bytes = 0;
        self.fifo.packets.drain(..).collect()
    }
    fn stats(&self) -> Vec<QueueStat> {
        vec![QueueStat { name: "test_taken", value: self.taken as f64, unit: "packets" }]
    }
}

/// Marks every ECN-capable packet CE, at enqueue or at dequeue (RFC 3168 §5: a Not-ECT packet
/// is left alone).
struct MarkCe {
    fifo: Fifo,
    at_dequeue: bool,
}

const CE_MARK: QueueReason = QueueReason("test_ce");

impl QueueDisc for MarkCe {
    fn kind(&self) -> &'static str {
        "mark-ce"
    }
    fn enqueue(&mut self, mut pkt: Packet, _now: Instant, _dropped: &mut Dropped) -> Enqueued {
        let marked = (!self.at_dequeue && pkt.mark_ce()).then_some(CE_MARK);
        self.fifo.push(pkt);
        Enqueued::Queued { marked }
    }
    fn dequeue(&mut self, _now: Instant, _dropped: &mut Dropped) -> Option<Dequeued> {
        let mut pkt = self.fifo.pop()?;
        let marked = (self.at_dequeue && pkt.mark_ce()).then_some(CE_MARK);
        Some(Dequeued { pkt, marked })
    }
    fn len_packets(&self) -> usize {
        self.fifo.packets.len()
    }
    fn len_bytes(&self) -> usize {
        self.fifo.bytes
    }
    fn flush(&mut self) -> Vec<Packet> {
        self.fifo.bytes = 0;
        self.fifo.packets.drain(..).collect()
    }
}

/// Holds at most `limit` packets; when full, drops the oldest resident to admit the arrival.
struct HeadDrop {
    fifo: Fifo,
    limit: usize,
}

const HEAD_DROP: QueueReason = QueueReason("test_head_drop");

impl QueueDisc for HeadDrop {
    fn kind(&self) -> &'static str {
        "head-drop"
    }
    fn enqueue(&mut self, pkt: Packet, _now: Instant, dropped: &mut Dropped) -> Enqueued {
        if self.fifo.packets.len() >= self.limit {
            if let Some(oldest) = self.fifo.pop() {
                dropped.push((oldest, HEAD_DROP));
            }
        }
        self.fifo.push(pkt);
        Enqueued::Queued { marked: None }
    }
    fn dequeue(&mut self, _now: Instant, _dropped: &mut Dropped) -> Option<Dequeued> {
        self.fifo.pop().map(Dequeued::plain)
    }
    fn len_packets(&self) -> usize {
        self.fifo.packets.len()
    }
    fn len_bytes(&self) -> usize {
        self.fifo.bytes
    }
    fn flush(&mut self) -> Vec<Packet> {
        self.fifo.bytes = 0;
        self.fifo.packets.drain(..).collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Test agents
// ---------------------------------------------------------------------------------------------

/// One datagram to send: when, accounted to which flow (index into the flows the world
/// registers), with which ECN codepoint.
#[derive(Clone, Copy)]
struct Sending {
    at_us: u64,
    flow: usize,
    ecn: Ecn,
}

/// Sends a script of datagrams from H0 to H1, port 9.
struct Script {
    sends: Vec<Sending>,
    flows: Vec<u32>,
}

impl Agent for Script {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        for (i, s) in self.sends.iter().enumerate() {
            ctx.timer_at(Instant::ZERO + Duration::from_micros(s.at_us), i as u64).unwrap();
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        let s = self.sends[token as usize];
        let flow = self.flows[s.flow];
        let seg = udp_datagram(H0, H1, 1000, 9, &[0; PAYLOAD]);
        let mut pkt = ctx.packet(H0, H1, PROTO_UDP, &seg, flow);
        pkt.set_ecn(s.ecn).unwrap();
        let now = ctx.now();
        let f = ctx.flow_mut(flow).unwrap();
        f.tx_packets += 1;
        f.first_tx.get_or_insert(now);
        ctx.send(pkt);
    }
}

/// What the receiver saw of one packet.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Seen {
    uid: u64,
    flow: u32,
    ecn: Ecn,
    ttl: u8,
    checksum_ok: bool,
}

/// Keeps what it receives on port 9 of H1.
struct Capture(Arc<Mutex<Vec<Seen>>>);

impl Agent for Capture {
    fn on_packet(&mut self, ctx: &mut Ctx<'_>, pkt: Packet) {
        let ip = pkt.ip().unwrap();
        assert_eq!(UdpView::new(ip.payload()).unwrap().dst_port(), 9);
        let seen = Seen {
            uid: pkt.meta.uid,
            flow: pkt.meta.flow,
            ecn: ip.ecn(),
            ttl: ip.ttl(),
            checksum_ok: ip.checksum_ok(),
        };
        let now = ctx.now();
        if let Some(f) = ctx.flow_mut(pkt.meta.flow) {
            f.rx_packets += 1;
            f.last_rx = Some(now);
        }
        self.0.lock().unwrap().push(seen);
    }
}

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

fn channel(rate_bps: u64, queue: QueueConfig) -> ChannelConfig {
    ChannelConfig { rate_bps, delay: Duration::from_micros(1), mtu: 1500, queue, loss: LossConfig::None }
}

fn custom(kind: &'static str, build: impl Fn() -> Box<dyn QueueDisc> + Send + Sync + 'static) -> QueueConfig {
    QueueConfig::Custom(CustomQueue::new(kind, move |ctx: QueueContext| {
        // Built with the direction's rate and MTU.
        assert_eq!((ctx.rate_bps, ctx.mtu), (10_000_000, 1500));
        build()
    }))
}

struct Outcome {
    result: RunResult,
    seen: Vec<Seen>,
}

impl Outcome {
    fn scalar(&self, kind: &str, entity: &str, metric: &str) -> Option<f64> {
        self.result.scalars.get(kind, entity, metric)
    }
    fn events(&self, kind: &str) -> Vec<(u64, String, String)> {
        let e = &self.result.events;
        (0..e.kind.len())
            .filter(|&i| e.kind[i] == kind)
            .map(|i| (e.time_ns[i], e.entity[i].clone(), e.detail[i].clone()))
            .collect()
    }
}

/// The kinds of events the runs keep.
const KINDS: [&str; 5] = ["enqueue", "dequeue", "drop", "mark", "tx"];

/// Run `sends` (flows named "a", "b", ...) through R's egress queue `queue` for 1 s.
fn run(queue: QueueConfig, flows: usize, sends: Vec<Sending>) -> Outcome {
    run_keeping(queue, flows, sends, &KINDS)
}

/// As [`run`], the event log keeping the events of `kinds` only.
fn run_keeping(queue: QueueConfig, flows: usize, sends: Vec<Sending>, kinds: &[&str]) -> Outcome {
    let mut b = WorldBuilder::new(7, Instant::ZERO + Duration::from_secs(1));
    let h0 = b.node("H0", NodeKind::Host);
    let r = b.node("R", NodeKind::Router);
    let h1 = b.node("H1", NodeKind::Host);
    let h0_eth0 = b.iface(h0, "eth0", H0);
    let r_eth0 = b.iface(r, "eth0", Ipv4Addr::new(10, 0, 0, 2));
    let r_eth1 = b.iface(r, "eth1", Ipv4Addr::new(10, 0, 1, 1));
    let h1_eth0 = b.iface(h1, "eth0", H1);
    let fast = channel(1_000_000_000, QueueConfig::DropTail { limit: QueueLimit::Packets(1000) });
    b.link("l0", h0_eth0, r_eth0, fast.clone(), fast.clone(), 1);
    b.link("l1", r_eth1, h1_eth0, channel(10_000_000, queue), fast, 1);
    let flows: Vec<u32> = (0..flows).map(|i| b.flow(&((b'a' + i as u8) as char).to_string())).collect();
    b.agent(h0, Box::new(Script { sends, flows }));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = b.agent(h1, Box::new(Capture(seen.clone())));
    assert!(b.bind_port(sink, PROTO_UDP, 9));
    b.trace(Box::new(EventLog::new(kinds.iter().map(|k| k.to_string()).collect())));
    let result = b.build().run().unwrap();
    let seen = seen.lock().unwrap().clone();
    Outcome { result, seen }
}

/// `n` datagrams of flow 0 sent back to back at time zero with codepoint `ecn(i)`.
fn burst(n: u64, ecn: impl Fn(u64) -> Ecn) -> Vec<Sending> {
    (0..n).map(|i| Sending { at_us: 0, flow: 0, ecn: ecn(i) }).collect()
}

const IFACE: &str = "R/eth1";

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[test]
fn a_packet_dropped_at_dequeue_is_counted_with_its_reason_and_charged_to_its_flow() {
    let q = custom("drop-at-dequeue", || Box::new(DropAtDequeue { fifo: Fifo::default(), every: 2, taken: 0 }));
    let o = run(q, 1, burst(10, |_| Ecn::NotEct));
    // Taken out 1..10; the even ones are dropped, the next one goes instead. The first packet
    // found the transmitter idle and still passed the discipline (it was taken out first).
    let delivered: Vec<u64> = o.seen.iter().map(|s| s.uid).collect();
    assert_eq!(delivered, vec![1, 3, 5, 7, 9]);
    for (kind, entity) in [("flow", "a"), ("iface", IFACE)] {
        assert_eq!(o.scalar(kind, entity, "drops"), Some(5.0), "{kind} {entity}");
        assert_eq!(o.scalar(kind, entity, "drops_test_dequeue_drop"), Some(5.0), "{kind} {entity}");
    }
    assert_eq!(o.scalar("flow", "a", "loss_rate"), Some(0.5));
    assert_eq!(o.scalar("iface", IFACE, "tx_packets"), Some(5.0));
    // The discipline's own statistic is reported with the interface.
    assert_eq!(o.scalar("iface", IFACE, "test_taken"), Some(10.0));
    // Each drop is traced at the interface, with the reason and the packet.
    let drops = o.events("drop");
    let uids: Vec<&str> = drops.iter().map(|(_, _, d)| d.split(' ').nth(1).unwrap()).collect();
    assert_eq!(uids, vec!["uid=2", "uid=4", "uid=6", "uid=8", "uid=10"]);
    assert!(drops.iter().all(|(_, at, d)| at == IFACE && d.starts_with("reason=test_dequeue_drop ")), "{drops:?}");
    // The packet taken instead starts at once: transmissions stay back to back at 800 us.
    let tx: Vec<u64> = o.events("tx").into_iter().filter(|(_, at, _)| at == IFACE).map(|(t, _, _)| t).collect();
    let first = tx[0];
    assert_eq!(tx, (0..5).map(|k| first + k * 800_000).collect::<Vec<_>>());
}

#[test]
fn ecn_capable_packets_are_delivered_marked_ce_with_a_valid_checksum() {
    for at_dequeue in [false, true] {
        let q = custom("mark-ce", move || Box::new(MarkCe { fifo: Fifo::default(), at_dequeue }));
        // ECT(0), ECT(1), Not-ECT, ECT(0), ... ; the first (ECT(0)) finds the link idle.
        let ecn = |i: u64| [Ecn::Ect0, Ecn::Ect1, Ecn::NotEct][i as usize % 3];
        let o = run(q, 1, burst(9, ecn));
        assert_eq!(o.seen.len(), 9, "marking drops nothing");
        for (i, s) in o.seen.iter().enumerate() {
            let expected = if ecn(i as u64) == Ecn::NotEct { Ecn::NotEct } else { Ecn::Ce };
            assert_eq!(s.ecn, expected, "packet {i}, marking at dequeue: {at_dequeue}");
            assert!(s.checksum_ok, "packet {i}: the incremental update keeps the checksum valid");
            assert_eq!(s.ttl, 63, "R forwarded it");
        }
        for (kind, entity) in [("flow", "a"), ("iface", IFACE)] {
            assert_eq!(o.scalar(kind, entity, "marks"), Some(6.0), "{kind} {entity}");
            assert_eq!(o.scalar(kind, entity, "marks_test_ce"), Some(6.0), "{kind} {entity}");
            assert_eq!(o.scalar(kind, entity, "drops"), Some(0.0));
        }
        // No marks anywhere else: the rows exist only where marks happened.
        assert_eq!(o.scalar("iface", "H0/eth0", "marks"), None);
        let marks = o.events("mark");
        assert_eq!(marks.len(), 6, "{marks:?}");
        assert!(marks.iter().all(|(_, at, d)| at == IFACE && d.starts_with("reason=test_ce uid=")), "{marks:?}");
        assert!(marks[0].2.starts_with("reason=test_ce uid=1 "), "the packet that found the link idle: {marks:?}");
    }
}

#[test]
fn a_log_keeping_one_kind_of_event_gets_exactly_those_of_a_log_keeping_all() {
    // The network builds only the packet events (and the marked packets' copies) some sink
    // keeps: each kind alone comes out as it does beside the others.
    for at_dequeue in [false, true] {
        let q = || custom("mark-ce", move || Box::new(MarkCe { fifo: Fifo::default(), at_dequeue }));
        let ecn = |i: u64| [Ecn::Ect0, Ecn::Ect1, Ecn::NotEct][i as usize % 3];
        let all = run(q(), 1, burst(9, ecn));
        for kind in KINDS {
            let alone = run_keeping(q(), 1, burst(9, ecn), &[kind]);
            assert_eq!(alone.events(kind), all.events(kind), "{kind}, marking at dequeue: {at_dequeue}");
            assert_eq!(alone.result.events.kind.len(), all.events(kind).len(), "{kind}: nothing else");
        }
        assert_eq!(all.events("mark").len(), 6);
    }
}

#[test]
fn a_discipline_can_drop_a_resident_packet_to_admit_an_arrival() {
    let q = custom("head-drop", || Box::new(HeadDrop { fifo: Fifo::default(), limit: 4 }));
    // a1..a5 at 0 us, b1..b5 at 100 us: all reach R while a1 (800 us) is being sent.
    let mut sends = burst(5, |_| Ecn::NotEct);
    sends.extend((0..5).map(|_| Sending { at_us: 100, flow: 1, ecn: Ecn::NotEct }));
    let o = run(q, 2, sends);
    // a2..a5 fill the queue; each of b1..b5 evicts the oldest: a2, a3, a4, a5, then b1.
    let delivered: Vec<(u32, u64)> = o.seen.iter().map(|s| (s.flow, s.uid)).collect();
    assert_eq!(delivered, vec![(0, 1), (1, 7), (1, 8), (1, 9), (1, 10)]);
    assert_eq!(o.scalar("flow", "a", "drops_test_head_drop"), Some(4.0));
    assert_eq!(o.scalar("flow", "b", "drops_test_head_drop"), Some(1.0));
    assert_eq!(o.scalar("iface", IFACE, "drops_test_head_drop"), Some(5.0));
    assert_eq!(o.scalar("iface", IFACE, "queue_max_packets"), Some(4.0));
    // Every arrival after a1 waited (was accepted while the transmitter was busy).
    assert_eq!(o.scalar("iface", IFACE, "enqueued"), Some(9.0));
    let evicted: Vec<String> =
        o.events("drop").iter().map(|(_, _, d)| d.split(' ').take(3).collect::<Vec<_>>().join(" ")).collect();
    assert_eq!(
        evicted,
        [
            "reason=test_head_drop uid=2 flow=a",
            "reason=test_head_drop uid=3 flow=a",
            "reason=test_head_drop uid=4 flow=a",
            "reason=test_head_drop uid=5 flow=a",
            "reason=test_head_drop uid=6 flow=b",
        ]
    );
}

#[test]
fn drop_tail_passes_an_idle_link_straight_through_and_drops_overflow_as_before() {
    let q = QueueConfig::DropTail { limit: QueueLimit::Packets(4) };
    let mut sends = burst(5, |_| Ecn::Ect0);
    sends.extend((0..5).map(|_| Sending { at_us: 100, flow: 1, ecn: Ecn::NotEct }));
    let o = run(q, 2, sends);
    // a1 found the transmitter idle, a2..a5 filled the queue, b1..b5 overflowed it.
    let delivered: Vec<u64> = o.seen.iter().map(|s| s.uid).collect();
    assert_eq!(delivered, vec![1, 2, 3, 4, 5]);
    assert!(o.seen.iter().all(|s| s.ecn == Ecn::Ect0 && s.checksum_ok), "drop-tail never marks");
    assert_eq!(o.scalar("flow", "b", "drops_queue_full"), Some(5.0));
    assert_eq!(o.scalar("iface", IFACE, "drops_queue_full"), Some(5.0));
    assert_eq!(o.scalar("iface", IFACE, "marks"), None);
    // Only the packets that waited count as enqueued and are traced as entering and leaving
    // the queue; the one that found the link idle starts at once, 1 us after it arrived.
    assert_eq!(o.scalar("iface", IFACE, "enqueued"), Some(4.0));
    assert_eq!(o.events("enqueue").iter().filter(|(_, at, _)| at == IFACE).count(), 4);
    assert_eq!(o.events("dequeue").iter().filter(|(_, at, _)| at == IFACE).count(), 4);
    let first_tx = o.events("tx").into_iter().find(|(_, at, _)| at == IFACE).unwrap();
    assert_eq!(first_tx.0, 8_000 + 1_000, "serialised on l0 (8 us) and propagated (1 us)");
    // The links that never queued report an empty queue.
    assert_eq!(o.scalar("iface", "H1/eth0", "queue_max_packets"), Some(0.0));
    assert_eq!(o.scalar("iface", "H1/eth0", "enqueued"), Some(0.0));
}
