//! Two hosts joined by two parallel links, each its own subnet: a datagram to the far host's
//! address on a subnet crosses the link that carries that subnet (the connected route), so
//! its one-way delay is that link's, whichever source address it carries.
#![allow(missing_docs, clippy::unwrap_used)]

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use netsim::agent::{Agent, Ctx};
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::wire::{udp_datagram, Ipv4Fields, Packet, PacketMeta, PROTO_UDP};
use netsim::world::WorldBuilder;
use netsim::{Duration, Instant};

const A1: Ipv4Addr = Ipv4Addr::new(10, 1, 1, 2);
const A2: Ipv4Addr = Ipv4Addr::new(10, 2, 1, 2);
const B1: Ipv4Addr = Ipv4Addr::new(10, 1, 1, 1);
const B2: Ipv4Addr = Ipv4Addr::new(10, 2, 1, 1);

/// 8 Mbit/s: a 1,000-byte datagram takes exactly 1 ms to serialise.
fn ch(delay_ms: u64) -> ChannelConfig {
    ChannelConfig {
        rate_bps: 8_000_000,
        delay: Duration::from_millis(delay_ms),
        mtu: 1500,
        queue: QueueConfig::DropTail { limit: QueueLimit::Packets(100) },
        loss: LossConfig::None,
    }
}

/// Sends one 1,000-byte datagram per (source, destination) at time zero, token = index.
struct Probe(Vec<(Ipv4Addr, Ipv4Addr)>);

impl Agent for Probe {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        for i in 0..self.0.len() {
            ctx.timer_at(Instant::ZERO, i as u64).unwrap();
        }
    }
    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        let (src, dst) = self.0[token as usize];
        let seg = udp_datagram(src, dst, 5000, 9, &[0u8; 972]);
        let fields = Ipv4Fields { src, dst, protocol: PROTO_UDP, ident: token as u16, ttl: 64 };
        ctx.send(Packet::ipv4(fields, &seg, PacketMeta { flow: 0, uid: token }));
    }
}

/// Records (destination, arrival time in ms) of every datagram.
struct Sink(Arc<Mutex<Vec<(Ipv4Addr, u64)>>>);

impl Agent for Sink {
    fn on_packet(&mut self, ctx: &mut Ctx<'_>, pkt: Packet) {
        let dst = pkt.ip().unwrap().dst();
        let at = (ctx.now() - Instant::ZERO).as_nanos() / 1_000_000;
        self.0.lock().unwrap().push((dst, at));
    }
}

/// A -- B over link 1 (5 ms, cost 1) and link 2 (20 ms, cost `cost2`); what B's sink saw.
fn run(cost2: u64, sends: Vec<(Ipv4Addr, Ipv4Addr)>) -> Vec<(Ipv4Addr, u64)> {
    let mut b = WorldBuilder::new(1, Instant::ZERO + Duration::from_millis(100));
    let a = b.node("A", NodeKind::Host);
    let h = b.node("B", NodeKind::Host);
    let (a0, a1) = (b.iface(a, "eth0", A1), b.iface(a, "eth1", A2));
    let (b0, b1) = (b.iface(h, "eth0", B1), b.iface(h, "eth1", B2));
    b.link("L1", a0, b0, ch(5), ch(5), 1);
    b.link("L2", a1, b1, ch(20), ch(20), cost2);
    b.agent(a, Box::new(Probe(sends)));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = b.agent(h, Box::new(Sink(seen.clone())));
    assert!(b.bind_port(sink, PROTO_UDP, 9));
    b.build().run().unwrap();
    let mut seen = seen.lock().unwrap().clone();
    seen.sort();
    seen
}

#[test]
fn each_subnet_of_parallel_links_is_reached_over_its_own_link() {
    // Source on link 1, destination on link 2: it must still leave by eth1 (20 ms + 1 ms),
    // not by eth0 (5 ms + 1 ms); and the other way round.
    for cost2 in [1, 10] {
        let seen = run(cost2, vec![(A1, B2), (A2, B1)]);
        assert_eq!(seen, vec![(B1, 6), (B2, 21)], "cost of link 2: {cost2}");
    }
}
