//! TCP throughput of the simulator: 30 bulk TCP flows (NewReno, SACK option on) from 30 hosts
//! behind router R share a 100 Mbit/s, 10 ms bottleneck (100-packet drop-tail queue) to host D
//! for 5 simulated seconds. Throughput counts packets: every TCP segment (data or ACK) that a
//! host sends, each once, per second of wall time; each crosses two links (four kernel events).
#![allow(missing_docs)] // criterion generates the entry points
use std::net::Ipv4Addr;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netsim::apps::tcp::{BulkConfig, SinkConfig, TcpBulk, TcpSink};
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::wire::PROTO_TCP;
use netsim::world::{RunResult, WorldBuilder};
use netsim::{Duration, Instant};

const FLOWS: usize = 30;

fn ch(rate: u64, delay_ms: u64, queue: usize) -> ChannelConfig {
    ChannelConfig {
        rate_bps: rate,
        delay: Duration::from_millis(delay_ms),
        mtu: 1500,
        queue: QueueConfig::DropTail { limit: QueueLimit::Packets(queue) },
        loss: LossConfig::None,
    }
}

fn run() -> RunResult {
    let mut b = WorldBuilder::new(1, Instant::ZERO + Duration::from_secs(5));
    let r = b.node("R", NodeKind::Router);
    let d = b.node("D", NodeKind::Host);
    let r_out = b.iface(r, "core", Ipv4Addr::new(10, 9, 0, 1));
    let d_in = b.iface(d, "eth0", Ipv4Addr::new(10, 9, 0, 2));
    b.link("bottleneck", r_out, d_in, ch(100_000_000, 10, 100), ch(100_000_000, 10, 100), 1);
    let sink = b.agent(
        d,
        Box::new(TcpSink::new(
            SinkConfig { port: 5001, tcp: tcp::Config::default(), drain_rate: None, seed: 1 },
            "sink",
        )),
    );
    b.bind_port(sink, PROTO_TCP, 5001);
    for i in 0..FLOWS {
        let h = b.node(&format!("H{i}"), NodeKind::Host);
        let a = Ipv4Addr::new(10, 1, i as u8, 1);
        let hi = b.iface(h, "eth0", a);
        let ri = b.iface(r, &format!("h{i}"), Ipv4Addr::new(10, 1, i as u8, 2));
        b.link(&format!("H{i}-R"), hi, ri, ch(1_000_000_000, 1, 1000), ch(1_000_000_000, 1, 1000), 1);
        let flow = b.flow(&format!("tcp{i}"));
        let cfg = BulkConfig {
            src: a,
            src_port: 40000,
            dst: Ipv4Addr::new(10, 9, 0, 2),
            dst_port: 5001,
            bytes: None,
            start: Instant::ZERO + Duration::from_millis(i as u64),
            tcp: tcp::Config::default(),
            seed: i as u64,
        };
        let agent = b.agent(h, Box::new(TcpBulk::new(cfg, flow, &format!("tcp{i}"))));
        b.bind_port(agent, PROTO_TCP, 40000);
    }
    b.build().run().expect("run")
}

fn packets_sent_by_hosts(r: &RunResult) -> u64 {
    r.scalars
        .rows
        .iter()
        .filter(|s| {
            s.kind == "iface" && s.metric == "tx_packets" && (s.entity.starts_with('H') || s.entity.starts_with("D/"))
        })
        .map(|s| s.value as u64)
        .sum()
}

fn tcp_flows(c: &mut Criterion) {
    let packets = packets_sent_by_hosts(&run());
    assert!(packets > 50_000, "{packets}");
    let mut g = c.benchmark_group("tcp");
    g.sample_size(10);
    g.throughput(Throughput::Elements(packets));
    g.bench_function("bulk_30_flows_packets", |b| b.iter(run));
    g.finish();
}

criterion_group!(benches, tcp_flows);
criterion_main!(benches);
