//! SCTP throughput of the simulator: one bulk association from H0 to H1 through router R over
//! 1 Gbit/s, 1 ms links, for 1 simulated second. The sender keeps its send buffer full with
//! 1452-byte messages (one DATA chunk per packet at a 1500-byte MTU); the sink reads at once.
//! Both buffers are 1 MiB, about twice the bandwidth-delay product (~4 ms x 1 Gbit/s), so the
//! link stays busy: the standing queue (at H0's own interface, ~360 packets) fits the
//! 1,000-packet drop-tail queue and nothing is lost. Throughput counts packets: every packet
//! an endpoint sends (DATA from H0, SACKs from H1, and the four handshake packets), each once,
//! per second of wall time; each crosses two links.
//!
//! `cmt_bulk_1gbps_packets` is the same transfer with Concurrent Multipath Transfer over two
//! such paths (H0 – R – H1 and H0 – R2 – H1, disjoint): round-robin scheduler, SFR, CUC and
//! DAC, the same 1 MiB buffers (about the two paths' bandwidth-delay product, so the standing
//! queues stay short), twice the packets in the simulated second. Its cost per packet
//! depends on the reordering between the paths: SACKs carry a gap block per run of TSNs
//! that overtook another path's (about 10 per SACK here; with 2 MiB buffers, longer queues
//! and about 40, +41 % instructions per packet).
//!
//! No capture is attached, so the endpoints skip SCTP's CRC32c (`ChecksumPolicy::Auto`, as a
//! scenario without `record.capture`); with `SCTPSIM_BENCH_CHECKSUMS=always` in the
//! environment they compute and verify it on every packet (`record.checksums = "always"`), to
//! measure what it costs. The simulated packets are the same either way.
#![allow(missing_docs)] // criterion generates the entry points
use std::net::Ipv4Addr;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netsim::apps::sctp::{SctpApp, SctpAppConfig, SctpRole};
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::wire::PROTO_SCTP;
use netsim::world::{ChecksumPolicy, RunResult, WorldBuilder};
use netsim::{Duration, Instant};

const RATE_BPS: u64 = 1_000_000_000;
const SIM_SECONDS: u64 = 1;
/// Largest DATA payload at a 1500-byte MTU: 1500 - 20 (IPv4) - 12 (common header) - 16.
const MESSAGE_SIZE: usize = 1452;
const BUFFER: u32 = 1 << 20;

fn ch() -> ChannelConfig {
    ChannelConfig {
        rate_bps: RATE_BPS,
        delay: Duration::from_millis(1),
        mtu: 1500,
        queue: QueueConfig::DropTail { limit: QueueLimit::Packets(1000) },
        loss: LossConfig::None,
    }
}

fn run() -> RunResult {
    run_paths(1)
}

fn run_cmt() -> RunResult {
    run_paths(2)
}

/// The bulk transfer over `paths` disjoint paths H0 – R – H1, H0 – R2 – H1, ... (path `i`
/// numbered 10.i.0.0/24 and 10.i.1.0/24), with CMT when there are several.
fn run_paths(paths: u8) -> RunResult {
    let mut b = WorldBuilder::new(1, Instant::ZERO + Duration::from_secs(SIM_SECONDS));
    let h0 = b.node("H0", NodeKind::Host);
    let names: Vec<String> = (0..paths).map(|i| if i == 0 { "R".into() } else { format!("R{}", i + 1) }).collect();
    let routers: Vec<_> = names.iter().map(|n| b.node(n, NodeKind::Router)).collect();
    let h1 = b.node("H1", NodeKind::Host);
    let (mut src, mut dst) = (Vec::new(), Vec::new());
    for (i, (&r, name)) in routers.iter().zip(&names).enumerate() {
        let net = i as u8;
        let (a0, a1) = (Ipv4Addr::new(10, net, 0, 1), Ipv4Addr::new(10, net, 1, 1));
        let h0_if = b.iface(h0, &format!("eth{i}"), a0);
        let r0 = b.iface(r, "eth0", Ipv4Addr::new(10, net, 0, 2));
        let r1 = b.iface(r, "eth1", Ipv4Addr::new(10, net, 1, 2));
        let h1_if = b.iface(h1, &format!("eth{i}"), a1);
        b.link(&format!("H0-{name}"), h0_if, r0, ch(), ch(), 1);
        b.link(&format!("{name}-H1"), r1, h1_if, ch(), ch(), 1);
        src.push(a0);
        dst.push(a1);
    }
    let base = if paths > 1 { sctp::Config::default().with_cmt() } else { sctp::Config::default() };
    let config = sctp::Config { recv_buffer: BUFFER, send_buffer: BUFFER, ..base };
    let sink = SctpAppConfig {
        name: "sink".into(),
        addrs: dst.clone(),
        port: 5000,
        config: config.clone(),
        role: SctpRole::Sink { drain_rate: None },
        seed: 2,
        flows: Vec::new(),
        handover: Default::default(),
        handover_trigger: Default::default(),
    };
    let bulk = SctpAppConfig {
        name: "bulk".into(),
        addrs: src,
        port: 5000,
        config,
        role: SctpRole::Bulk {
            peer: dst,
            more_peers: Vec::new(),
            peer_port: 5000,
            start: Instant::ZERO,
            bytes: None,
            message_size: MESSAGE_SIZE,
            streams: 1,
            unordered: false,
        },
        seed: 1,
        flows: Vec::new(),
        handover: Default::default(),
        handover_trigger: Default::default(),
    };
    let agent = b.agent(h1, Box::new(SctpApp::new(sink)));
    b.bind_port(agent, PROTO_SCTP, 5000);
    let agent = b.agent(h0, Box::new(SctpApp::new(bulk)));
    b.bind_port(agent, PROTO_SCTP, 5000);
    if std::env::var_os("SCTPSIM_BENCH_CHECKSUMS").is_some_and(|v| v == "always") {
        b.checksums(ChecksumPolicy::Always);
    }
    b.build().run().expect("run")
}

fn scalar(r: &RunResult, kind: &str, entity: &str, metric: &str) -> f64 {
    r.scalars.get(kind, entity, metric).unwrap_or_else(|| panic!("no {kind} {entity} {metric}"))
}

fn sctp_bulk(c: &mut Criterion) {
    let r = run();
    let data = scalar(&r, "iface", "H0/eth0", "tx_packets") as u64;
    let sacks = scalar(&r, "iface", "H1/eth0", "tx_packets") as u64;
    // The run must carry real data at close to line rate: 1452 of every 1500 bytes on the
    // wire are user data, so the payload ceiling is about 968 Mbit/s; slow start costs a few
    // tens of milliseconds of the second.
    let goodput = scalar(&r, "sctp", "sink", "goodput");
    assert!(goodput > 0.9 * RATE_BPS as f64 * MESSAGE_SIZE as f64 / 1500.0, "goodput {goodput}");
    assert!(scalar(&r, "sctp", "bulk", "t3_timeouts") == 0.0 && scalar(&r, "iface", "H0/eth0", "drops") == 0.0);
    // Delayed SACKs (§6.2): one SACK for every second DATA packet.
    assert!(data > 75_000 && sacks > data / 3, "data {data} sacks {sacks}");
    eprintln!("sctp bulk: {data} packets from H0, {sacks} from H1, goodput {:.1} Mbit/s", goodput / 1e6);
    let mut g = c.benchmark_group("sctp");
    g.sample_size(20);
    g.throughput(Throughput::Elements(data + sacks));
    g.bench_function("bulk_1gbps_packets", |b| b.iter(run));
    g.finish();
}

fn sctp_cmt_bulk(c: &mut Criterion) {
    let r = run_cmt();
    let data: u64 = (0..2).map(|i| scalar(&r, "iface", &format!("H0/eth{i}"), "tx_packets") as u64).sum();
    let sacks: u64 = (0..2).map(|i| scalar(&r, "iface", &format!("H1/eth{i}"), "tx_packets") as u64).sum();
    // Both paths busy: close to twice the single path's payload ceiling.
    let goodput = scalar(&r, "sctp", "sink", "goodput");
    assert!(goodput > 1.8 * RATE_BPS as f64 * MESSAGE_SIZE as f64 / 1500.0, "goodput {goodput}");
    assert!(scalar(&r, "sctp", "bulk", "t3_timeouts") == 0.0);
    assert!(data > 150_000 && sacks > data / 3, "data {data} sacks {sacks}");
    eprintln!("sctp cmt bulk: {data} packets from H0, {sacks} from H1, goodput {:.1} Mbit/s", goodput / 1e6);
    let mut g = c.benchmark_group("sctp");
    g.sample_size(20);
    g.throughput(Throughput::Elements(data + sacks));
    g.bench_function("cmt_bulk_1gbps_packets", |b| b.iter(run_cmt));
    g.finish();
}

criterion_group!(benches, sctp_bulk, sctp_cmt_bulk);
criterion_main!(benches);
