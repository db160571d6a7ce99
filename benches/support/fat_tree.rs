//! The k-ary fat-tree shared by `benches/routing.rs` and `benches/scale.rs`.
use std::net::Ipv4Addr;

use netsim::network::{ChannelConfig, NodeId, NodeKind};
use netsim::world::WorldBuilder;

/// Adds a k-ary fat-tree (Al-Fares et al., SIGCOMM 2008) to `b`: k pods of k/2 edge and k/2
/// aggregation switches (routers), (k/2)² core switches, k/2 hosts per edge switch, every link
/// on `ch`. Link `i` is 10.a.b.0/24 with a.b = i, its ends .1 and .2 (a host is the .1 of its
/// link). Returns the hosts with their addresses, pod by pod.
pub(crate) fn fat_tree(b: &mut WorldBuilder, k: usize, ch: &ChannelConfig) -> Vec<(NodeId, Ipv4Addr)> {
    let half = k / 2;
    let mut links = 0u32;
    let mut hosts = Vec::new();
    let mut connect = |b: &mut WorldBuilder, x, y| {
        let net = 0x0a00_0000 | (links << 8);
        let a = b.iface(x, &format!("l{links}"), Ipv4Addr::from(net | 1));
        let z = b.iface(y, &format!("l{links}"), Ipv4Addr::from(net | 2));
        b.link(&format!("l{links}"), a, z, ch.clone(), ch.clone(), 1);
        links += 1;
        Ipv4Addr::from(net | 1)
    };
    let core: Vec<_> = (0..half * half).map(|c| b.node(&format!("core{c}"), NodeKind::Router)).collect();
    for p in 0..k {
        let agg: Vec<_> = (0..half).map(|a| b.node(&format!("p{p}a{a}"), NodeKind::Router)).collect();
        for (a, &agg_node) in agg.iter().enumerate() {
            for c in 0..half {
                connect(b, agg_node, core[a * half + c]);
            }
        }
        for e in 0..half {
            let edge = b.node(&format!("p{p}e{e}"), NodeKind::Router);
            for &agg_node in &agg {
                connect(b, edge, agg_node);
            }
            for h in 0..half {
                let host = b.node(&format!("p{p}e{e}h{h}"), NodeKind::Host);
                let addr = connect(b, host, edge);
                hosts.push((host, addr));
            }
        }
    }
    hosts
}
