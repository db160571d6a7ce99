//! ECN end to end through the simulator (RFC 3168): the transports' codepoints go into the IP
//! header, a marking bottleneck marks them CE, the receiving transport sees the mark and the
//! sender reduces its window instead of losing packets.
//!
//! Topology: H --(100 Mbit/s, 5 ms)-- R --(10 Mbit/s, 10 ms, threshold discipline)-- D. The
//! discipline (defined here) marks an ECN-capable arrival CE when 20 or more packets wait and
//! drops a Not-ECT one then, like a RED queue in marking mode whose thresholds meet; 200
//! packets is the hard limit.
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::VecDeque;
use std::net::Ipv4Addr;

use netsim::apps::sctp::{SctpAppConfig, SctpRole};
use netsim::apps::tcp::{BulkConfig, SinkConfig, TcpBulk, TcpSink};
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::{CustomQueue, Dequeued, Dropped, Enqueued, QueueConfig, QueueDisc, QueueLimit, QueueReason};
use netsim::wire::{Packet, PROTO_TCP};
use netsim::world::{RunResult, WorldBuilder};
use netsim::{Duration, Instant};

const H: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const D: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 2);
const THRESHOLD: usize = 20;

/// Marks ECT arrivals CE (drops Not-ECT ones) from `THRESHOLD` queued packets on.
struct Threshold {
    packets: VecDeque<Packet>,
    bytes: usize,
}

const MARK: QueueReason = QueueReason("threshold_mark");
const EARLY: QueueReason = QueueReason("threshold_drop");
const FULL: QueueReason = QueueReason("queue_full");

impl QueueDisc for Threshold {
    fn kind(&self) -> &'static str {
        "threshold"
    }
    fn enqueue(&mut self, mut pkt: Packet, _now: Instant, _dropped: &mut Dropped) -> Enqueued {
        if self.packets.len() >= 200 {
            return Enqueued::Dropped(pkt, FULL);
        }
        let mut marked = None;
        if self.packets.len() >= THRESHOLD {
            if !pkt.mark_ce() {
                return Enqueued::Dropped(pkt, EARLY);
            }
            marked = Some(MARK);
        }
        self.bytes += pkt.len();
        self.packets.push_back(pkt);
        Enqueued::Queued { marked }
    }
    fn dequeue(&mut self, _now: Instant, _dropped: &mut Dropped) -> Option<Dequeued> {
        let pkt = self.packets.pop_front()?;
        self.bytes -= pkt.len();
        Some(Dequeued::plain(pkt))
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

fn ch(rate: u64, delay_ms: u64, queue: QueueConfig) -> ChannelConfig {
    ChannelConfig { rate_bps: rate, delay: Duration::from_millis(delay_ms), mtu: 1500, queue, loss: LossConfig::None }
}

fn drop_tail(n: usize) -> QueueConfig {
    QueueConfig::DropTail { limit: QueueLimit::Packets(n) }
}

fn threshold() -> QueueConfig {
    QueueConfig::Custom(CustomQueue::new("threshold", |_| Box::new(Threshold { packets: VecDeque::new(), bytes: 0 })))
}

/// The topology with the bottleneck from R to D; returns the builder, H and D.
fn topology(secs: u64) -> (WorldBuilder, netsim::ids::NodeId, netsim::ids::NodeId) {
    let mut b = WorldBuilder::new(1, Instant::ZERO + Duration::from_secs(secs));
    let h = b.node("H", NodeKind::Host);
    let r = b.node("R", NodeKind::Router);
    let d = b.node("D", NodeKind::Host);
    let h0 = b.iface(h, "eth0", H);
    let r0 = b.iface(r, "eth0", Ipv4Addr::new(10, 0, 0, 2));
    let r1 = b.iface(r, "eth1", Ipv4Addr::new(10, 0, 1, 1));
    let d0 = b.iface(d, "eth0", D);
    b.link("H-R", h0, r0, ch(100_000_000, 5, drop_tail(1000)), ch(100_000_000, 5, drop_tail(1000)), 1);
    b.link("R-D", r1, d0, ch(10_000_000, 10, threshold()), ch(10_000_000, 10, drop_tail(1000)), 1);
    (b, h, d)
}

fn tcp_run(cc: &str, ecn: bool) -> RunResult {
    let (mut b, h, d) = topology(20);
    let tcp = tcp::Config { cc: tcp::CcAlgorithm::from_name(cc).unwrap(), ecn, ..tcp::Config::default() };
    let sink = b.agent(
        d,
        Box::new(TcpSink::new(SinkConfig { port: 5001, tcp: tcp.clone(), drain_rate: None, seed: 7 }, "sink")),
    );
    b.bind_port(sink, PROTO_TCP, 5001);
    let flow = b.flow("up");
    let cfg =
        BulkConfig { src: H, src_port: 40000, dst: D, dst_port: 5001, bytes: None, start: Instant::ZERO, tcp, seed: 3 };
    let up = b.agent(h, Box::new(TcpBulk::new(cfg, flow, "up")));
    b.bind_port(up, PROTO_TCP, 40000);
    b.build().run().unwrap()
}

#[test]
fn tcp_with_ecn_is_marked_instead_of_dropped() {
    for cc in ["newreno", "sack", "cubic"] {
        let r = tcp_run(cc, true);
        let s = |kind: &str, entity: &str, metric: &str| r.scalars.get(kind, entity, metric).unwrap();
        let marks = s("flow", "up", "marks");
        assert!(marks > 10.0, "{cc}: {marks} marks");
        assert_eq!(s("flow", "up", "drops"), 0.0, "{cc}");
        assert_eq!(s("tcp", "up", "retransmissions"), 0.0, "{cc}");
        assert_eq!(s("tcp", "up", "ecn_negotiated"), 1.0, "{cc}");
        // The sink's connection saw every mark and echoed them; the sender reacted at most
        // once per window (fewer reductions than marks) and said so with CWR.
        let conn = format!("sink/{H}:40000");
        assert_eq!(s("tcp", &conn, "ecn_ce_received"), marks, "{cc}");
        assert!(s("tcp", &conn, "ecn_ece_sent") >= 1.0, "{cc}");
        let reductions = s("tcp", "up", "ecn_reductions");
        assert!(reductions >= 5.0 && reductions < marks, "{cc}: {reductions} reductions for {marks} marks");
        assert!(s("tcp", "up", "ecn_cwr_sent") >= reductions, "{cc}");
        assert!(s("flow", "up", "goodput") > 0.85 * 10e6, "{cc}");
        // The queue stays near the threshold.
        assert!(s("iface", "R/eth1", "queue_max_packets") < 60.0, "{cc}");
    }
}

#[test]
fn tcp_without_ecn_loses_packets_at_the_same_queue() {
    for cc in ["newreno", "sack", "cubic"] {
        let r = tcp_run(cc, false);
        let s = |kind: &str, entity: &str, metric: &str| r.scalars.get(kind, entity, metric);
        assert!(s("flow", "up", "drops").unwrap() > 0.0, "{cc}");
        assert!(s("tcp", "up", "retransmissions").unwrap() > 0.0, "{cc}");
        assert_eq!(s("flow", "up", "marks"), None, "{cc}");
        // Without ECN configured the counters are not reported at all.
        assert_eq!(s("tcp", "up", "ecn_reductions"), None, "{cc}");
    }
}

fn sctp_run(ecn: bool) -> RunResult {
    let (mut b, h, d) = topology(20);
    let config = sctp::Config { ecn, ..sctp::Config::default() };
    let sink = SctpRole::Sink { drain_rate: None };
    SctpAppConfig::new("sink", vec![D], 5000, config.clone(), sink, 1).install(&mut b, d).unwrap();
    let flow = b.flow("up");
    let mut up = SctpAppConfig::new("up", vec![H], 5001, config, SctpRole::bulk(vec![D], 5000, Instant::ZERO, 1400), 2);
    up.flows = vec![flow];
    up.install(&mut b, h).unwrap();
    b.build().run().unwrap()
}

#[test]
fn sctp_with_ecn_is_marked_instead_of_dropped() {
    let r = sctp_run(true);
    let s = |kind: &str, entity: &str, metric: &str| r.scalars.get(kind, entity, metric).unwrap();
    let marks = s("flow", "up", "marks");
    assert!(marks > 10.0, "{marks} marks");
    assert_eq!(s("flow", "up", "drops"), 0.0);
    assert_eq!(s("sctp", "up", "fast_retransmissions"), 0.0);
    assert_eq!(s("sctp", "up", "ecn_negotiated"), 1.0);
    assert_eq!(s("sctp", "sink", "ecn_ce_received"), marks);
    assert!(s("sctp", "sink", "ecn_ecne_sent") >= 1.0);
    let reductions = s("sctp", "up", "ecn_reductions");
    assert!(reductions >= 5.0 && reductions < marks, "{reductions} reductions for {marks} marks");
    assert_eq!(s("sctp_path", "up/path0", "ecn_reductions"), reductions);
    assert!(s("sctp", "up", "ecn_cwr_sent") >= 1.0);
    assert!(s("flow", "up", "goodput") > 0.85 * 10e6);
    assert!(s("iface", "R/eth1", "queue_max_packets") < 60.0);
}

#[test]
fn sctp_without_ecn_loses_packets_at_the_same_queue() {
    let r = sctp_run(false);
    let s = |kind: &str, entity: &str, metric: &str| r.scalars.get(kind, entity, metric);
    assert!(s("flow", "up", "drops").unwrap() > 0.0);
    assert!(s("sctp", "up", "fast_retransmissions").unwrap() > 0.0);
    assert_eq!(s("flow", "up", "marks"), None);
    assert_eq!(s("sctp", "up", "ecn_reductions"), None);
}
