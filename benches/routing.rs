//! Routing at scale: a k = 16 fat-tree (1,024 hosts, 320 switches acting as routers, 3,072
//! links, one /24 subnet per link) built and routed. The time is the whole world build: nodes,
//! interfaces, links with their queues and random streams, and every node's routing table
//! (shortest paths over routers, one entry per subnet per node).
#![allow(missing_docs)] // criterion generates the entry points
use std::net::Ipv4Addr;

use criterion::{criterion_group, criterion_main, Criterion};
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::world::{World, WorldBuilder};
use netsim::{Duration, Instant};

/// A k-ary fat-tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge and k/2 aggregation
/// switches, (k/2)² core switches, k/2 hosts per edge switch. Link `i` is 10.a.b.0/24 with
/// a.b = i, its ends .1 and .2.
fn fat_tree(k: usize) -> World {
    let mut b = WorldBuilder::new(1, Instant(1_000_000_000));
    let ch = ChannelConfig {
        rate_bps: 10_000_000_000,
        delay: Duration::from_micros(1),
        mtu: 1500,
        queue: QueueConfig::DropTail { limit: QueueLimit::Packets(100) },
        loss: LossConfig::None,
    };
    let half = k / 2;
    let mut links = 0u32;
    let mut connect = |b: &mut WorldBuilder, x, y| {
        let net = 0x0a00_0000 | (links << 8);
        let a = b.iface(x, &format!("l{links}"), Ipv4Addr::from(net | 1));
        let z = b.iface(y, &format!("l{links}"), Ipv4Addr::from(net | 2));
        b.link(&format!("l{links}"), a, z, ch.clone(), ch.clone(), 1);
        links += 1;
    };
    let core: Vec<_> = (0..half * half).map(|c| b.node(&format!("core{c}"), NodeKind::Router)).collect();
    for p in 0..k {
        let agg: Vec<_> = (0..half).map(|a| b.node(&format!("p{p}a{a}"), NodeKind::Router)).collect();
        for (a, &agg_node) in agg.iter().enumerate() {
            for c in 0..half {
                connect(&mut b, agg_node, core[a * half + c]);
            }
        }
        for e in 0..half {
            let edge = b.node(&format!("p{p}e{e}"), NodeKind::Router);
            for &agg_node in &agg {
                connect(&mut b, edge, agg_node);
            }
            for h in 0..half {
                let host = b.node(&format!("p{p}e{e}h{h}"), NodeKind::Host);
                connect(&mut b, host, edge);
            }
        }
    }
    b.build()
}

fn routing(c: &mut Criterion) {
    let world = fat_tree(16);
    let net = world.network();
    assert_eq!(net.nodes.iter().filter(|n| n.kind == NodeKind::Host).count(), 1024);
    assert_eq!(net.links.len(), 3072);
    // Every host reaches every other host's subnet: a host's table has one entry per subnet
    // other than its own link's.
    assert!(net.nodes.iter().all(|n| n.routes.reachable() >= 3071));
    let mut g = c.benchmark_group("routing");
    g.sample_size(10);
    g.bench_function("fat_tree_k16_build", |b| b.iter(|| fat_tree(16)));
    g.finish();
}

criterion_group!(benches, routing);
criterion_main!(benches);
