//! Forwarding throughput: packet-hops per second through a chain of 3 routers under CBR load.
//! A 1 Gbit/s UDP CBR flow of 1000-byte datagrams crosses H0 - R1 - R2 - R3 - H1 (4 links,
//! 4 hops per packet) on 10 Gbit/s links for one simulated second.
#![allow(missing_docs)] // criterion generates the entry points
#[path = "support/cbr_chain.rs"]
mod cbr_chain;

use cbr_chain::cbr_chain;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::world::WorldBuilder;

const HOPS: u64 = 4;

/// The chain with drop-tail queues of 100 packets and 10 Gbit/s links throughout.
fn world() -> WorldBuilder {
    cbr_chain(&QueueConfig::DropTail { limit: QueueLimit::Packets(100) }, 10_000_000_000)
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
