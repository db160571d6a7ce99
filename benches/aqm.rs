//! Forwarding through each queue discipline: packet-hops per second with the traffic of
//! `benches/forwarding.rs` (a 1 Gbit/s UDP CBR flow of 1000-byte datagrams through
//! H0 - R1 - R2 - R3 - H1 over 10 Gbit/s links for one simulated second, 4 hops per packet),
//! every link's queue the discipline under test. The queues stay short, so this measures what a
//! discipline adds to every packet that passes it, drop-tail being the reference. A second
//! variant (`congested`) makes the last link, R3 -> H1, 950 Mbit/s: the 1,028 Mbit/s of
//! datagrams build a standing queue there, which each discipline controls its own way (drops);
//! packet-hops are then the transmissions on all links.
//!
//! `AQM_BENCH_ONCE=<name>` (or `<name>/congested`) runs that world once and exits, for
//! instruction counts under callgrind (`valgrind --tool=callgrind <bench binary>` with the
//! variable set), which do not depend on the machine's load.
#![allow(missing_docs)] // criterion generates the entry points
use std::net::Ipv4Addr;

use criterion::{Criterion, Throughput};
use netsim::apps::udp::{CbrConfig, UdpCbr, UdpSink};
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::{CodelConfig, FqCodelConfig, PieConfig, QueueConfig, QueueLimit};
use netsim::wire::PROTO_UDP;
use netsim::world::WorldBuilder;
use netsim::{Duration, Instant};

/// The disciplines measured, by name.
fn disciplines() -> Vec<(&'static str, QueueConfig)> {
    vec![
        ("droptail", QueueConfig::DropTail { limit: QueueLimit::Packets(100) }),
        ("codel", QueueConfig::CoDel(CodelConfig::default())),
        ("fq-codel", QueueConfig::FqCodel(FqCodelConfig::default())),
        ("pie", QueueConfig::Pie(PieConfig::default())),
    ]
}

fn world(queue: &QueueConfig, congested: bool) -> WorldBuilder {
    let mut b = WorldBuilder::new(1, Instant(1_000_000_000));
    let ch = ChannelConfig {
        rate_bps: 10_000_000_000,
        delay: Duration::from_millis(1),
        mtu: 1500,
        queue: queue.clone(),
        loss: LossConfig::None,
    };
    let names = ["H0", "R1", "R2", "R3", "H1"];
    let nodes: Vec<_> = names
        .iter()
        .enumerate()
        .map(|(i, n)| b.node(n, if i == 0 || i == 4 { NodeKind::Host } else { NodeKind::Router }))
        .collect();
    let mut addr = 0u8;
    let mut next_addr = || {
        addr += 1;
        Ipv4Addr::new(10, 0, 0, addr)
    };
    let (mut h0_addr, mut h1_addr) = (Ipv4Addr::UNSPECIFIED, Ipv4Addr::UNSPECIFIED);
    for w in 0..4 {
        let a = b.iface(nodes[w], &format!("eth{}", w.min(1)), next_addr());
        let z = b.iface(nodes[w + 1], "eth0", next_addr());
        if w == 0 {
            h0_addr = b.network().ifaces[a.index()].addr().unwrap_or(h0_addr);
        }
        if w == 3 {
            h1_addr = b.network().ifaces[z.index()].addr().unwrap_or(h1_addr);
        }
        let last = ChannelConfig { rate_bps: 950_000_000, ..ch.clone() };
        let forward = if congested && w == 3 { last } else { ch.clone() };
        b.link(&format!("l{w}"), a, z, forward, ch.clone(), 1);
    }
    let flow = b.flow("cbr");
    let cfg = CbrConfig {
        src: h0_addr,
        src_port: 1000,
        dst: h1_addr,
        dst_port: 9,
        rate_bps: 1_000_000_000,
        payload: 1000,
        start: Instant::ZERO,
        stop: Instant::MAX,
    };
    b.agent(nodes[0], Box::new(UdpCbr::new(cfg, flow)));
    let sink = b.agent(nodes[4], Box::new(UdpSink::new("sink")));
    b.bind_port(sink, PROTO_UDP, 9);
    b
}

/// Packet-hops of one run through `queue`: transmissions on every link.
fn packet_hops(queue: &QueueConfig, congested: bool) -> u64 {
    let r = world(queue, congested).build().run().expect("run");
    r.scalars.rows.iter().filter(|s| s.kind == "iface" && s.metric == "tx_packets").map(|s| s.value).sum::<f64>() as u64
}

fn aqm(c: &mut Criterion) {
    let mut g = c.benchmark_group("aqm");
    g.sample_size(10);
    for congested in [false, true] {
        for (name, queue) in disciplines() {
            let hops = packet_hops(&queue, congested);
            assert!(hops > 3 * 100_000, "{name}: {hops}");
            g.throughput(Throughput::Elements(hops));
            let variant = if congested { "congested_" } else { "" };
            g.bench_function(format!("{variant}cbr_3_routers_packet_hops/{name}"), |b| {
                b.iter(|| world(&queue, congested).build().run().expect("run"))
            });
        }
    }
    g.finish();
}

fn main() {
    if let Ok(which) = std::env::var("AQM_BENCH_ONCE") {
        let (name, congested) = match which.strip_suffix("/congested") {
            Some(name) => (name.to_string(), true),
            None => (which.clone(), false),
        };
        let (_, queue) = disciplines().into_iter().find(|(n, _)| *n == name).expect("a discipline of the list");
        println!("{which}: {} packet-hops", packet_hops(&queue, congested));
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    aqm(&mut c);
    c.final_summary();
}
