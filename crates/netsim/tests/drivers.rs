//! The transport drivers (`transport::tcp`, `transport::sctp`) between two hosts: what the
//! engines send leaves as IPv4 packets with the right addresses, protocol and flow; what
//! arrives reaches the engine; the engines' timeouts are driven (a handshake lost to a link
//! that is down at first is retransmitted when the engine's timer says).
#![allow(missing_docs, clippy::unwrap_used)]

use std::net::Ipv4Addr;

use netsim::apps::sctp::{SctpApp, SctpAppConfig, SctpRole};
use netsim::apps::tcp::{BulkConfig, SinkConfig, TcpBulk, TcpSink};
use netsim::fault::FaultAction;
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, LinkId, NodeId, NodeKind};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::recorder::{EventLog, EventTable};
use netsim::routing::StaticRoute;
use netsim::wire::{PROTO_SCTP, PROTO_TCP};
use netsim::world::{RunResult, WorldBuilder};
use netsim::{Duration, Instant};

const A0: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const B0: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
const A1: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);
const B1: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 2);

fn ch() -> ChannelConfig {
    ChannelConfig {
        rate_bps: 10_000_000,
        delay: Duration::from_millis(5),
        mtu: 1500,
        queue: QueueConfig::DropTail { limit: QueueLimit::Packets(100) },
        loss: LossConfig::None,
    }
}

fn secs(s: f64) -> Instant {
    Instant::ZERO + Duration::from_secs_f64(s)
}

/// Hosts A and B joined by two links (A/eth0 – B/eth0 and A/eth1 – B/eth1), with every `tx`,
/// `drop`, `tcp` and `sctp` event logged.
struct Pair {
    b: WorldBuilder,
    a: NodeId,
    z: NodeId,
    link0: LinkId,
}

fn pair(stop: f64) -> Pair {
    let mut b = WorldBuilder::new(3, secs(stop));
    let a = b.node("A", NodeKind::Host);
    let z = b.node("B", NodeKind::Host);
    let a0 = b.iface(a, "eth0", A0);
    let a1 = b.iface(a, "eth1", A1);
    let b0 = b.iface(z, "eth0", B0);
    let b1 = b.iface(z, "eth1", B1);
    let link0 = b.link("L0", a0, b0, ch(), ch(), 1);
    b.link("L1", a1, b1, ch(), ch(), 1);
    b.trace(Box::new(EventLog::new(["tx", "drop", "tcp", "sctp"].map(String::from).to_vec())));
    Pair { b, a, z, link0 }
}

impl Pair {
    /// Link 0 is down from 0 s until `t`.
    fn down_until(&mut self, t: f64) {
        self.b.fault(Instant::ZERO, FaultAction::LinkDown(self.link0));
        self.b.fault(secs(t), FaultAction::LinkUp(self.link0));
    }
}

/// `(time s, detail)` of the events of `kind` about `entity`.
fn events<'a>(t: &'a EventTable, kind: &str, entity: &str) -> Vec<(f64, &'a str)> {
    (0..t.kind.len())
        .filter(|&i| t.kind[i] == kind && t.entity[i] == entity)
        .map(|i| (t.time_ns[i] as f64 / 1e9, t.detail[i].as_str()))
        .collect()
}

/// The value of `key=` in a `key=value ...` detail.
fn field<'a>(detail: &'a str, key: &str) -> &'a str {
    detail.split(' ').find_map(|kv| kv.strip_prefix(key).and_then(|v| v.strip_prefix('='))).unwrap_or("")
}

// ----- TCP -----

fn tcp_pair(bytes: u64, down_until: Option<f64>) -> RunResult {
    let mut p = pair(20.0);
    if let Some(t) = down_until {
        p.down_until(t);
    }
    let sink = p.b.agent(
        p.z,
        Box::new(TcpSink::new(SinkConfig { port: 80, tcp: tcp::Config::default(), drain_rate: None, seed: 1 }, "sink")),
    );
    p.b.bind_port(sink, PROTO_TCP, 80);
    let flow = p.b.flow("up");
    let cfg = BulkConfig {
        src: A0,
        src_port: 4000,
        dst: B0,
        dst_port: 80,
        bytes: Some(bytes),
        start: secs(0.1),
        tcp: tcp::Config::default(),
        seed: 2,
    };
    let up = p.b.agent(p.a, Box::new(TcpBulk::new(cfg, flow, "up")));
    p.b.bind_port(up, PROTO_TCP, 4000);
    p.b.build().run().unwrap()
}

#[test]
fn tcp_segments_leave_with_the_connection_addresses_and_the_senders_flow() {
    let r = tcp_pair(100_000, None);
    let s = &r.scalars;
    assert_eq!(s.get("app", "sink", "rx_bytes"), Some(100_000.0));
    let sent = events(&r.events, "tx", "A/eth0");
    assert!(!sent.is_empty());
    for (_, d) in &sent {
        assert_eq!((field(d, "src"), field(d, "dst"), field(d, "flow")), ("10.0.0.1", "10.0.0.2", "up"), "{d}");
    }
    // Every segment the sender sent counts in its flow; the sink's ACKs belong to no flow.
    assert_eq!(s.get("flow", "up", "tx_packets"), Some(sent.len() as f64));
    assert_eq!(s.get("tcp", "up", "segments_sent"), Some(sent.len() as f64));
    assert_eq!(s.get("flow", "up", "rx_bytes"), Some(100_000.0));
    let acks = events(&r.events, "tx", "B/eth0");
    assert!(!acks.is_empty());
    for (_, d) in &acks {
        assert_eq!((field(d, "src"), field(d, "dst"), field(d, "flow")), ("10.0.0.2", "10.0.0.1", "-"), "{d}");
    }
    assert!(events(&r.events, "tx", "A/eth1").is_empty(), "the connection is bound to eth0");
    assert_eq!(s.get("tcp", "up", "timeouts"), Some(0.0));
}

#[test]
fn tcp_retransmission_timeouts_are_driven() {
    // The SYN at 0.1 s is lost on the down link; RFC 6298 §2.1: the initial RTO is 1 s.
    let r = tcp_pair(100_000, Some(0.5));
    assert_eq!(r.scalars.get("app", "sink", "rx_bytes"), Some(100_000.0));
    let drops = events(&r.events, "drop", "L0:A/eth0");
    assert_eq!(drops.len(), 1, "{drops:?}");
    assert!((drops[0].0 - 0.1).abs() < 1e-9 && field(drops[0].1, "flow") == "up", "{drops:?}");
    let first = events(&r.events, "tx", "A/eth0")[0].0;
    assert!((first - 1.1).abs() < 1e-9, "{first}");
    assert!(r.scalars.get("tcp", "up", "completion_time").unwrap() > 1.0);
}

// ----- SCTP -----

fn sctp_pair(bytes: Option<u64>, down_until: Option<f64>, stop: f64) -> RunResult {
    sctp_streams(bytes, down_until, stop, 1, 10)
}

/// As [`sctp_pair`], the sender using `streams` streams and the sink accepting `inbound`. The
/// sender's association is accounted to the flow `up`.
fn sctp_streams(bytes: Option<u64>, down_until: Option<f64>, stop: f64, streams: u16, inbound: u16) -> RunResult {
    let sink = sctp::Config { max_inbound_streams: inbound, ..sctp::Config::default() };
    sctp_transfer(bytes, down_until, stop, streams, 1000, sink)
}

/// An upload of `bytes` (unlimited if `None`) in `message_size`-byte messages over `streams`
/// streams from A to an SCTP sink on B configured by `sink`, until `stop`, with every link
/// down until `down_until`. The sender's association is accounted to the flow `up`.
fn sctp_transfer(
    bytes: Option<u64>,
    down_until: Option<f64>,
    stop: f64,
    streams: u16,
    message_size: usize,
    sink: sctp::Config,
) -> RunResult {
    let mut p = pair(stop);
    if let Some(t) = down_until {
        p.down_until(t);
    }
    let config = sctp::Config::default();
    let sink = SctpAppConfig {
        name: "sink".into(),
        addrs: vec![B0, B1],
        port: 5000,
        config: sink,
        role: SctpRole::Sink { drain_rate: None },
        seed: 1,
        flows: Vec::new(),
        handover: Default::default(),
        handover_trigger: Default::default(),
    };
    let flow = p.b.flow("up");
    let up = SctpAppConfig {
        name: "up".into(),
        addrs: vec![A0, A1],
        port: 5001,
        config,
        role: SctpRole::Bulk {
            peer: vec![B0, B1],
            more_peers: Vec::new(),
            peer_port: 5000,
            start: secs(0.1),
            bytes,
            message_size,
            streams,
            unordered: false,
        },
        seed: 2,
        flows: vec![flow],
        handover: Default::default(),
        handover_trigger: Default::default(),
    };
    let s = p.b.agent(p.z, Box::new(SctpApp::new(sink)));
    p.b.bind_port(s, PROTO_SCTP, 5000);
    let u = p.b.agent(p.a, Box::new(SctpApp::new(up)));
    p.b.bind_port(u, PROTO_SCTP, 5001);
    p.b.build().run().unwrap()
}

#[test]
fn sctp_packets_leave_with_their_interface_address_to_the_peer() {
    let r = sctp_pair(Some(200_000), None, 40.0);
    let s = &r.scalars;
    assert_eq!(s.get("sctp", "sink", "delivered_bytes"), Some(200_000.0));
    assert_eq!(s.get("sctp", "sink", "delivered_messages"), Some(200.0));
    assert_eq!(s.get("sctp", "up", "closed"), Some(0.0));
    // Every packet leaves with the address of the interface it leaves by, to an address of
    // the peer; data goes to the primary B0 (so by eth0) and heartbeats probe B1 too.
    for (iface, src, peer) in
        [("A/eth0", A0, [B0, B1]), ("A/eth1", A1, [B0, B1]), ("B/eth0", B0, [A0, A1]), ("B/eth1", B1, [A0, A1])]
    {
        for (_, d) in &events(&r.events, "tx", iface) {
            assert_eq!(field(d, "src"), src.to_string(), "{iface}: {d}");
            assert!(peer.iter().any(|a| field(d, "dst") == a.to_string()), "{iface}: {d}");
        }
    }
    let to_b0 = events(&r.events, "tx", "A/eth0").iter().filter(|(_, d)| field(d, "dst") == "10.0.0.2").count();
    assert!(to_b0 >= 200, "{to_b0}");
    let to_b1 = |iface| events(&r.events, "tx", iface).iter().filter(|(_, d)| field(d, "dst") == "10.0.1.2").count();
    // Heartbeats to B1 leave by eth1, the interface on B1's subnet, never by eth0.
    assert!(to_b1("A/eth1") > 0);
    assert_eq!(to_b1("A/eth0"), 0);
    let data_packets = s.get("sctp_path", "up/path0", "packets_sent").unwrap();
    assert!(data_packets >= 200.0, "{data_packets}");
    assert!(s.get("sctp_path", "up/path1", "packets_sent").unwrap() >= 1.0, "heartbeats on path 1");
    assert_eq!(s.get("sctp_path", "up/path1", "bytes_sent"), Some(0.0));
    assert!(s.get("sctp", "up", "completion_time").unwrap() > 0.0);
    assert!(events(&r.events, "sctp", "up").iter().any(|(_, d)| *d == "Connected"));
    assert!(events(&r.events, "sctp", "sink").iter().any(|(_, d)| *d == "Connected"));
}

#[test]
fn sctp_init_retransmission_is_driven_by_the_engine_timer() {
    // The INIT at 0.1 s goes to the primary over the down link and is lost; T1-init
    // (RTO.Initial 1 s, RFC 9260 §5.1 A / §16) sends it again at 1.1 s, to the other address
    // B1 (RFC 9260 §6.4: a retransmission goes to another active destination), over that
    // address's own link L1.
    let r = sctp_pair(Some(50_000), Some(0.5), 20.0);
    assert_eq!(r.scalars.get("sctp", "sink", "delivered_bytes"), Some(50_000.0));
    let drops = events(&r.events, "drop", "L0:A/eth0");
    assert_eq!(drops.len(), 1, "{drops:?}");
    assert!((drops[0].0 - 0.1).abs() < 1e-9 && field(drops[0].1, "reason") == "link_down", "{drops:?}");
    let (first, init) = events(&r.events, "tx", "A/eth1")[0];
    assert!((first - 1.1).abs() < 1e-9 && field(init, "dst") == B1.to_string(), "{first} {init}");
    assert!(events(&r.events, "tx", "A/eth0")[0].0 > 1.1);
    let connected = events(&r.events, "sctp", "up").into_iter().find(|(_, d)| *d == "Connected").unwrap().0;
    assert!(connected > 1.1 && connected < 1.2, "{connected}");
}

#[test]
fn an_unlimited_sctp_sender_runs_until_the_end_and_reports_per_path() {
    let r = sctp_pair(None, None, 5.0);
    let delivered = r.scalars.get("sctp", "sink", "delivered_bytes").unwrap();
    // 10 Mbit/s for ~4.9 s at most.
    assert!(delivered > 3e6 && delivered < 6.2e6, "{delivered}");
    assert_eq!(r.scalars.get("sctp", "up", "completion_time"), None);
    for path in ["up/path0", "up/path1"] {
        assert_eq!(r.scalars.get("sctp_path", path, "state"), Some(0.0));
    }
}

#[test]
fn a_sender_uses_no_more_streams_than_its_association_negotiated() {
    // 8 streams asked for, 4 accepted by the peer (RFC 9260 §5.1.1): the sender goes round
    // the 4, with an event, and the transfer runs at full speed.
    let r = sctp_streams(Some(400_000), None, 10.0, 8, 4);
    let s = &r.scalars;
    assert_eq!(s.get("sctp", "sink", "delivered_bytes"), Some(400_000.0));
    assert_eq!(s.get("sctp", "up", "streams_negotiated"), Some(4.0));
    let clamped = events(&r.events, "sctp", "up");
    assert!(clamped.iter().any(|(_, d)| *d == "StreamsClamped { requested: 8, negotiated: 4 }"), "{clamped:?}");
    // Messages handed over before the association was up went on stream 0; the rest round
    // the four.
    let per_stream: Vec<f64> =
        (0..4).map(|i| s.get("sctp", &format!("sink/stream{i}"), "delivered_messages").unwrap()).collect();
    assert_eq!(per_stream.iter().sum::<f64>(), 400.0);
    assert!(per_stream[1] > 0.0 && per_stream[1..].iter().all(|&n| (n - per_stream[1]).abs() <= 1.0), "{per_stream:?}");
    assert_eq!(s.get("sctp", "sink/stream4", "delivered_messages"), None);
    // As fast as over one stream (a sender stalled on a closed stream takes far longer).
    let one = sctp_streams(Some(400_000), None, 10.0, 1, 4).scalars.get("sctp", "up", "completion_time").unwrap();
    let t = s.get("sctp", "up", "completion_time").unwrap();
    assert!(t < 1.05 * one, "{t} s, over one stream {one} s");
    // Within the negotiated count nothing is clamped and nothing extra is reported.
    let r = sctp_streams(Some(400_000), None, 5.0, 4, 4);
    assert_eq!(r.scalars.get("sctp", "up", "streams_negotiated"), None);
    assert!(r.scalars.get("sctp", "sink/stream3", "delivered_messages").unwrap() > 0.0);
}

#[test]
fn an_sctp_association_is_accounted_to_its_flow() {
    // The INIT lost on the down link is a drop of the association's flow; every packet the
    // sender sent counts in it, the sink's packets in none; what the sink read is the flow's
    // received bytes, with the messages' delays.
    let r = sctp_pair(Some(50_000), Some(0.5), 20.0);
    let s = &r.scalars;
    let sent = events(&r.events, "tx", "A/eth0").len() + events(&r.events, "tx", "A/eth1").len();
    assert_eq!(s.get("flow", "up", "tx_packets"), Some(sent as f64 + 1.0), "sent and the lost INIT");
    assert_eq!(s.get("flow", "up", "drops"), Some(1.0));
    assert_eq!(s.get("flow", "up", "drops_link_down"), Some(1.0));
    // Each message's user data once (no loss after the handshake).
    assert_eq!(s.get("flow", "up", "tx_bytes"), Some(50_000.0));
    assert_eq!(s.get("flow", "up", "rx_bytes"), Some(50_000.0));
    assert!(s.get("flow", "up", "delay_min").unwrap() >= 0.005);
    assert!(s.get("flow", "up", "goodput").unwrap() > 0.0);
    for (_, d) in events(&r.events, "tx", "B/eth0") {
        assert_eq!(field(d, "flow"), "-", "{d}");
    }
    for (_, d) in events(&r.events, "tx", "A/eth0") {
        assert_eq!(field(d, "flow"), "up", "{d}");
    }
}

/// A sink whose receive buffer is smaller than each message gets the messages in parts
/// (RFC 9260 §6.9 partial delivery): it counts each message once, at its last part, and takes
/// its delay from the send instant stamped in the first part.
#[test]
fn a_sink_counts_a_message_delivered_in_parts_once_with_its_delay() {
    let sink = sctp::Config { recv_buffer: 4096, ..sctp::Config::default() };
    let r = sctp_transfer(Some(50_000), None, 40.0, 1, 10_000, sink);
    let s = &r.scalars;
    assert_eq!(s.get("sctp", "sink", "delivered_bytes"), Some(50_000.0));
    assert_eq!(s.get("sctp", "sink", "delivered_messages"), Some(5.0));
    // Five messages over two 10 Mbit/s, 5 ms paths: each arrives well within a second of
    // being handed over (a delay read from a later part's payload would be its arrival time).
    let max = s.get("sctp", "sink", "delay_max").unwrap();
    assert!(max > 0.0 && max < 1.0, "delay_max {max}");
    assert_eq!(s.get("flow", "up", "rx_bytes"), Some(50_000.0));
    // A chunk larger than the window left is kept while the window is open (§6.2), so no
    // chunk waits for a T3 timeout.
    assert_eq!(s.get("sctp", "up", "t3_timeouts"), Some(0.0));
}

#[test]
fn the_ideal_lossrate_policy_reads_the_configured_loss_of_each_route() {
    // Link 0 loses 2 % of what A sends, link 1 nothing (the configured rates the driver
    // declares to the association). New data goes to the primary B0 over link 0; RTX-LOSSRATE sends every retransmission to B1 (the loss-free route), the
    // default sends fast retransmissions back to B0.
    let run = |retransmit: sctp::cmt::RetransmitConfig| {
        let mut b = WorldBuilder::new(3, secs(20.0));
        let a = b.node("A", NodeKind::Host);
        let z = b.node("B", NodeKind::Host);
        let (a0, a1) = (b.iface(a, "eth0", A0), b.iface(a, "eth1", A1));
        let (b0, b1) = (b.iface(z, "eth0", B0), b.iface(z, "eth1", B1));
        let lossy = ChannelConfig { loss: LossConfig::Bernoulli { p: 0.02 }, ..ch() };
        b.link("L0", a0, b0, lossy, ch(), 1);
        b.link("L1", a1, b1, ch(), ch(), 1);
        // Each peer address over its own link (both links reach host B otherwise).
        for (node, net, via) in
            [(a, [10, 0, 0, 0], a0), (a, [10, 0, 1, 0], a1), (z, [10, 0, 0, 0], b0), (z, [10, 0, 1, 0], b1)]
        {
            b.route(node, StaticRoute { prefix: Ipv4Addr::from(net), len: 24, iface: via });
        }
        let sink = SctpAppConfig {
            name: "sink".into(),
            addrs: vec![B0, B1],
            port: 5000,
            config: sctp::Config::default(),
            role: SctpRole::Sink { drain_rate: None },
            seed: 1,
            flows: Vec::new(),
            handover: Default::default(),
            handover_trigger: Default::default(),
        };
        let up = SctpAppConfig {
            name: "up".into(),
            addrs: vec![A0, A1],
            port: 5001,
            config: sctp::Config { retransmit, ..sctp::Config::default() },
            role: SctpRole::Bulk {
                peer: vec![B0, B1],
                more_peers: Vec::new(),
                peer_port: 5000,
                start: secs(0.1),
                bytes: Some(2_000_000),
                message_size: 1000,
                streams: 1,
                unordered: false,
            },
            seed: 2,
            flows: Vec::new(),
            handover: Default::default(),
            handover_trigger: Default::default(),
        };
        let s = b.agent(z, Box::new(SctpApp::new(sink)));
        b.bind_port(s, PROTO_SCTP, 5000);
        let u = b.agent(a, Box::new(SctpApp::new(up)));
        b.bind_port(u, PROTO_SCTP, 5001);
        let r = b.build().run().unwrap();
        assert_eq!(r.scalars.get("sctp", "sink", "delivered_bytes"), Some(2_000_000.0));
        let rtx = |p: &str| r.scalars.get("sctp_path", &format!("up/{p}"), "bytes_retransmitted").unwrap();
        (rtx("path0"), rtx("path1"))
    };
    let (on_lossy, on_clean) = run(sctp::cmt::RetransmitConfig::LossRate);
    assert_eq!(on_lossy, 0.0);
    assert!(on_clean > 10_000.0, "{on_clean}");
    let (on_lossy, _) = run(sctp::cmt::RetransmitConfig::Alternate);
    assert!(on_lossy > 10_000.0, "{on_lossy}");
}
