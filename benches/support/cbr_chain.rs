//! The forwarding workload shared by `benches/forwarding.rs` and `benches/aqm.rs`: a 1 Gbit/s
//! UDP CBR flow of 1000-byte datagrams from H0 across routers R1, R2, R3 to H1 (4 links of
//! 1 ms, 4 packet-hops per datagram) for one simulated second.
use std::net::Ipv4Addr;

use netsim::apps::udp::{CbrConfig, UdpCbr, UdpSink};
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::QueueConfig;
use netsim::wire::PROTO_UDP;
use netsim::world::WorldBuilder;
use netsim::{Duration, Instant};

/// Links before the last run at 10 Gbit/s; the last (R3 - H1) at `last_rate_bps`; every
/// link's queue is `queue`.
pub(crate) fn cbr_chain(queue: &QueueConfig, last_rate_bps: u64) -> WorldBuilder {
    let mut b = WorldBuilder::new(1, Instant(1_000_000_000));
    let ch = |rate_bps| ChannelConfig {
        rate_bps,
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
        let rate = if w == 3 { last_rate_bps } else { 10_000_000_000 };
        b.link(&format!("l{w}"), a, z, ch(rate), ch(rate), 1);
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
