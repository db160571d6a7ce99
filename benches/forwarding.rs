//! Forwarding throughput: packet-hops per second through a chain of 3 routers under CBR load.
//! A 1 Gbit/s UDP CBR flow of 1000-byte datagrams crosses H0 - R1 - R2 - R3 - H1 (4 links,
//! 4 hops per packet) on 10 Gbit/s links for one simulated second.
#![allow(missing_docs)] // criterion generates the entry points
use std::net::Ipv4Addr;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netsim::apps::udp::{CbrConfig, UdpCbr, UdpSink};
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::wire::PROTO_UDP;
use netsim::world::WorldBuilder;
use netsim::{Duration, Instant};

const HOPS: u64 = 4;

fn world() -> WorldBuilder {
    let mut b = WorldBuilder::new(1, Instant(1_000_000_000));
    let ch = ChannelConfig {
        rate_bps: 10_000_000_000,
        delay: Duration::from_millis(1),
        mtu: 1500,
        queue: QueueConfig::DropTail { limit: QueueLimit::Packets(100) },
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
        b.link(&format!("l{w}"), a, z, ch.clone(), ch.clone(), 1);
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

fn forwarding(c: &mut Criterion) {
    let packets = world().build().run().expect("run").scalars.get("flow", "cbr", "rx_packets").expect("flow") as u64;
    assert!(packets > 100_000);
    let mut g = c.benchmark_group("forwarding");
    g.sample_size(10);
    g.throughput(Throughput::Elements(packets * HOPS));
    g.bench_function("cbr_3_routers_packet_hops", |b| b.iter(|| world().build().run().expect("run")));
    g.finish();
}

criterion_group!(benches, forwarding);
criterion_main!(benches);
