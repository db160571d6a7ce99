//! Routing at scale: a k = 16 fat-tree (1,024 hosts, 320 switches acting as routers, 3,072
//! links, one /24 subnet per link) built and routed. The time is the whole world build: nodes,
//! interfaces, links with their queues and random streams, and every node's routing table
//! (shortest paths over routers, one entry per subnet per node).
#![allow(missing_docs)] // criterion generates the entry points
use criterion::{criterion_group, criterion_main, Criterion};
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::world::{World, WorldBuilder};
use netsim::{Duration, Instant};

#[path = "support/fat_tree.rs"]
mod fat_tree;
use fat_tree::fat_tree;

/// The k-ary fat-tree of `support/fat_tree.rs` on 10 Gbit/s, 1 us links with 100-packet
/// drop-tail queues.
fn fat_tree_world(k: usize) -> World {
    let mut b = WorldBuilder::new(1, Instant(1_000_000_000));
    let ch = ChannelConfig {
        rate_bps: 10_000_000_000,
        delay: Duration::from_micros(1),
        mtu: 1500,
        queue: QueueConfig::DropTail { limit: QueueLimit::Packets(100) },
        loss: LossConfig::None,
    };
    fat_tree(&mut b, k, &ch);
    b.build()
}

fn routing(c: &mut Criterion) {
    let world = fat_tree_world(16);
    let net = world.network();
    assert_eq!(net.nodes.iter().filter(|n| n.kind == NodeKind::Host).count(), 1024);
    assert_eq!(net.links.len(), 3072);
    // Every host reaches every other host's subnet: a host's table has one entry per subnet
    // other than its own link's.
    assert!(net.nodes.iter().all(|n| n.routes.reachable() >= 3071));
    let mut g = c.benchmark_group("routing");
    g.sample_size(10);
    g.bench_function("fat_tree_k16_build", |b| b.iter(|| fat_tree_world(16)));
    g.finish();
}

criterion_group!(benches, routing);
criterion_main!(benches);
