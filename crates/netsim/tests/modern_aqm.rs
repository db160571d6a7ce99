//! CoDel, FQ-CoDel and PIE against long-lived TCP flows: each holds the queueing delay near
//! its target where drop-tail lets it grow to the buffer's size, FQ-CoDel keeps a sparse flow's
//! delay low beside the bulk flows, and the same seed gives the same statistics.
//!
//! Topology: `n` TCP senders H0..H(n-1) and a probe host P, each on a 100 Mbit/s, 5 ms access
//! link to router R; R -> D is the 10 Mbit/s, 40 ms bottleneck whose queue is under test (90 ms
//! round trip: about 75 full-size packets in flight fill the pipe). The
//! probe sends 100 small UDP datagrams per second (a sparse flow, far below its fair share)
//! from 5 s on, after the senders have filled the pipe, so its one-way delay minus the 45 ms of
//! propagation (and 0.1 ms of serialisation) is the queueing delay at R.
#![allow(missing_docs, clippy::unwrap_used)]

use std::net::Ipv4Addr;

use netsim::apps::tcp::{BulkConfig, SinkConfig, TcpBulk, TcpSink};
use netsim::apps::udp::{CbrConfig, UdpCbr, UdpSink};
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::{CodelConfig, FqCodelConfig, PieConfig, PieDelay, QueueConfig, QueueLimit};
use netsim::wire::{PROTO_TCP, PROTO_UDP};
use netsim::world::{RunResult, WorldBuilder};
use netsim::{Duration, Instant};

const BOTTLENECK: &str = "R/eth0";
/// Propagation and serialisation of a probe datagram from P to D with empty queues.
const PROBE_BASE_S: f64 = 0.045 + 0.000_11;

fn ch(rate: u64, delay_ms: u64, queue: QueueConfig) -> ChannelConfig {
    ChannelConfig { rate_bps: rate, delay: Duration::from_millis(delay_ms), mtu: 1500, queue, loss: LossConfig::None }
}

fn droptail(n: usize) -> QueueConfig {
    QueueConfig::DropTail { limit: QueueLimit::Packets(n) }
}

/// Run `n` bulk TCP uploads (congestion control `cc`) and the probe through `queue` for `secs`
/// seconds with `seed`.
fn bottleneck(queue: QueueConfig, n: usize, cc: &str, secs: u64, seed: u64) -> RunResult {
    let mut b = WorldBuilder::new(seed, Instant::ZERO + Duration::from_secs(secs));
    let r = b.node("R", NodeKind::Router);
    let d = b.node("D", NodeKind::Host);
    let r_out = b.iface(r, "eth0", Ipv4Addr::new(10, 9, 0, 1));
    let d_in = b.iface(d, "eth0", Ipv4Addr::new(10, 9, 0, 2));
    b.link("R-D", r_out, d_in, ch(10_000_000, 40, queue), ch(10_000_000, 40, droptail(1000)), 1);
    let sink = TcpSink::new(SinkConfig { port: 5001, tcp: tcp::Config::default(), drain_rate: None, seed: 7 }, "sink");
    let sink = b.agent(d, Box::new(sink));
    b.bind_port(sink, PROTO_TCP, 5001);
    let access = || ch(100_000_000, 5, droptail(1000));
    for i in 0..n {
        let h = b.node(&format!("H{i}"), NodeKind::Host);
        let a = Ipv4Addr::new(10, 1, i as u8, 1);
        let hi = b.iface(h, "eth0", a);
        let ri = b.iface(r, &format!("eth{}", i + 1), Ipv4Addr::new(10, 1, i as u8, 2));
        b.link(&format!("H{i}-R"), hi, ri, access(), access(), 1);
        let name = format!("tcp{i}");
        let flow = b.flow(&name);
        let cfg = BulkConfig {
            src: a,
            src_port: 40000,
            dst: Ipv4Addr::new(10, 9, 0, 2),
            dst_port: 5001,
            bytes: None,
            start: Instant::ZERO + Duration::from_millis(i as u64 * 13),
            tcp: tcp::Config { cc: tcp::CcAlgorithm::from_name(cc).unwrap(), ..tcp::Config::default() },
            seed: i as u64,
        };
        let agent = b.agent(h, Box::new(TcpBulk::new(cfg, flow, &name)));
        b.bind_port(agent, PROTO_TCP, 40000);
    }
    let p = b.node("P", NodeKind::Host);
    let pa = Ipv4Addr::new(10, 2, 0, 1);
    let pi = b.iface(p, "eth0", pa);
    let ri = b.iface(r, &format!("eth{}", n + 1), Ipv4Addr::new(10, 2, 0, 2));
    b.link("P-R", pi, ri, access(), access(), 1);
    let probe = b.flow("probe");
    let cbr = CbrConfig {
        src: pa,
        src_port: 7000,
        dst: Ipv4Addr::new(10, 9, 0, 2),
        dst_port: 9,
        rate_bps: 100 * 100 * 8,
        payload: 100,
        start: Instant::ZERO + Duration::from_secs(5),
        stop: Instant::MAX,
    };
    b.agent(p, Box::new(UdpCbr::new(cbr, probe)));
    let udp_sink = b.agent(d, Box::new(UdpSink::new("probe-sink")));
    b.bind_port(udp_sink, PROTO_UDP, 9);
    b.build().run().unwrap()
}

fn get(r: &RunResult, kind: &str, entity: &str, metric: &str) -> f64 {
    r.scalars.get(kind, entity, metric).unwrap_or_else(|| panic!("no scalar {kind} {entity} {metric}"))
}

/// The probe's median queueing delay at the bottleneck, in seconds.
fn probe_queueing(r: &RunResult) -> f64 {
    get(r, "flow", "probe", "delay_p50") - PROBE_BASE_S
}

/// Goodput of all TCP flows together, bit/s.
fn tcp_goodput(r: &RunResult, n: usize) -> f64 {
    (0..n).map(|i| get(r, "flow", &format!("tcp{i}"), "goodput")).sum()
}

#[test]
fn codel_holds_the_standing_queue_near_its_target_where_drop_tail_does_not() {
    let n = 4;
    let tail = bottleneck(droptail(300), n, "sack", 20, 1);
    let codel = bottleneck(QueueConfig::CoDel(CodelConfig::default()), n, "sack", 20, 1);
    let (qt, qc) = (probe_queueing(&tail), probe_queueing(&codel));
    let sojourn = get(&codel, "iface", BOTTLENECK, "codel_sojourn_mean");
    eprintln!("queueing delay p50: drop-tail {qt:.4} s, codel {qc:.4} s (mean sojourn {sojourn:.4} s)");
    // Drop-tail's 300 packets take 360 ms to drain; TCP keeps them mostly full.
    assert!(qt > 0.150, "drop-tail {qt}");
    // CoDel: the standing queue converges near its 5 ms target (the sojourn time oscillates
    // about it: the median the probe sees and the mean over every packet sent).
    assert!(qc > 0.001 && qc < 0.010, "codel {qc}");
    assert!(sojourn > 0.0025 && sojourn < 0.010, "mean sojourn {sojourn}");
    assert!(get(&codel, "iface", BOTTLENECK, "codel_drops") > 10.0);
    // ... while the TCP flows still fill most of the link.
    let g = tcp_goodput(&codel, n);
    assert!(g > 0.8 * 10e6, "codel goodput {g}");
}

#[test]
fn pie_holds_the_queueing_delay_near_its_reference() {
    // Eight NewReno flows (with the RFC 6675 SACK recovery of this TCP, PIE's early drops in
    // slow start's overshoot lead to retransmission timeouts and bursts that defeat any AQM).
    let n = 8;
    let tail = bottleneck(droptail(300), n, "newreno", 20, 1);
    for delay in [PieDelay::DepartureRate, PieDelay::Timestamp] {
        let pie = bottleneck(QueueConfig::Pie(PieConfig { delay, ..PieConfig::default() }), n, "newreno", 20, 1);
        let q = probe_queueing(&pie);
        let sojourn = get(&pie, "iface", BOTTLENECK, "pie_sojourn_mean");
        let prob = get(&pie, "iface", BOTTLENECK, "pie_prob_mean");
        eprintln!("{delay:?}: queueing delay p50 {q:.4} s, mean sojourn {sojourn:.4} s, mean p {prob:.5}");
        // Near the 15 ms reference, where drop-tail's is over ten times as long.
        assert!(q > 0.005 && q < 0.030, "{delay:?}: {q}");
        assert!(sojourn > 0.007 && sojourn < 0.030, "{delay:?}: mean sojourn {sojourn}");
        assert!(probe_queueing(&tail) > 10.0 * q);
        assert!(get(&pie, "iface", BOTTLENECK, "pie_early_drops") > 10.0);
        assert_eq!(
            get(&pie, "iface", BOTTLENECK, "drops_pie_early"),
            get(&pie, "iface", BOTTLENECK, "pie_early_drops")
        );
        assert!(prob > 0.0 && prob < 0.1, "{prob}");
        let g = tcp_goodput(&pie, n);
        assert!(g > 0.8 * 10e6, "{delay:?}: goodput {g}");
    }
}

#[test]
fn fq_codel_keeps_a_sparse_flow_fast_beside_bulk_flows() {
    let n = 4;
    let tail = bottleneck(droptail(300), n, "sack", 20, 1);
    let codel = bottleneck(QueueConfig::CoDel(CodelConfig::default()), n, "sack", 20, 1);
    let fq = bottleneck(QueueConfig::FqCodel(FqCodelConfig::default()), n, "sack", 20, 1);
    let mean = |r: &RunResult| get(r, "flow", "probe", "delay_mean") - PROBE_BASE_S;
    let p95 = |r: &RunResult| get(r, "flow", "probe", "delay_p95") - PROBE_BASE_S;
    let (t, c, f) = (mean(&tail), mean(&codel), mean(&fq));
    eprintln!(
        "probe queueing delay mean (p95): drop-tail {t:.4} ({:.4}), codel {c:.4} ({:.4}), fq-codel {f:.4} ({:.4})",
        p95(&tail),
        p95(&codel),
        p95(&fq)
    );
    // The probe's packets wait at most for the packet being sent (1.2 ms at 10 Mbit/s) and a
    // bulk quantum, not behind the bulk flows' queue as with one FIFO, CoDel or not.
    assert!(f < 0.002, "fq-codel {f}");
    assert!(p95(&fq) < 0.005, "fq-codel p95 {}", p95(&fq));
    assert!(c > 2.0 * f && p95(&codel) > 0.010, "codel {c}, p95 {}", p95(&codel));
    assert!(t > 0.150, "drop-tail {t}");
    // Nothing of the probe is lost, and the bulk flows still fill the link.
    assert_eq!(get(&fq, "flow", "probe", "drops"), 0.0);
    let g = tcp_goodput(&fq, n);
    assert!(g > 0.8 * 10e6, "fq-codel goodput {g}");
    assert!(get(&fq, "iface", BOTTLENECK, "fq_codel_drops") > 10.0);
}

#[test]
fn the_same_seed_gives_identical_statistics() {
    let configs = [
        QueueConfig::CoDel(CodelConfig::default()),
        QueueConfig::FqCodel(FqCodelConfig::default()),
        QueueConfig::Pie(PieConfig::default()),
    ];
    for q in configs {
        let (a, b) = (bottleneck(q.clone(), 3, "newreno", 8, 5), bottleneck(q.clone(), 3, "newreno", 8, 5));
        // (Compared as text: an empty delay statistic is NaN, which equals nothing.)
        assert_eq!(format!("{:?}", a.scalars), format!("{:?}", b.scalars), "{}", q.kind());
        // Another seed changes PIE's random drops, and so the run.
        if q.kind() == "pie" {
            let c = bottleneck(q.clone(), 3, "newreno", 8, 6);
            assert_ne!(format!("{:?}", a.scalars), format!("{:?}", c.scalars));
        }
    }
}
