//! Interfaces that change while a run goes on: going down and up, and getting a new address
//! mid-transfer (a host moving to another subnet). The agents on the node are told, and the
//! routes follow the addresses.
#![allow(missing_docs, clippy::unwrap_used)]

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use netsim::agent::{Agent, Ctx};
use netsim::event::IfaceEvent;
use netsim::fault::FaultAction;
use netsim::ids::IfaceId;
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, IfaceAddr, NodeKind};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::wire::{udp_datagram, Ipv4Fields, Packet, PacketMeta, UdpView, PROTO_UDP};
use netsim::world::{World, WorldBuilder};
use netsim::{Duration, Instant};

fn ms(v: u64) -> Instant {
    Instant::ZERO + Duration::from_millis(v)
}

fn ch() -> ChannelConfig {
    ChannelConfig {
        rate_bps: 8_000_000,
        delay: Duration::from_millis(1),
        mtu: 1500,
        queue: QueueConfig::DropTail { limit: QueueLimit::Packets(100) },
        loss: LossConfig::None,
    }
}

/// Sends one 100-byte datagram per millisecond from `from` to `to`, to `dst` (read at each
/// send, so the test can retarget it).
struct Cbr {
    src: Ipv4Addr,
    dst: Arc<Mutex<Ipv4Addr>>,
    from: Instant,
    to: Instant,
    flow: u32,
}

impl Agent for Cbr {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        ctx.timer_at(self.from, 0).unwrap();
    }
    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        let dst = *self.dst.lock().unwrap();
        let seg = udp_datagram(self.src, dst, 5000, 9, &token.to_be_bytes());
        let fields = Ipv4Fields { src: self.src, dst, protocol: PROTO_UDP, ident: token as u16, ttl: 64 };
        if let Some(f) = ctx.flow_mut(self.flow) {
            f.tx_packets += 1;
        }
        ctx.send(Packet::ipv4(fields, &seg, PacketMeta { flow: self.flow, uid: token }));
        let next = ctx.now() + Duration::from_millis(1);
        if next < self.to {
            ctx.timer_at(next, token + 1).unwrap();
        }
    }
}

/// Logs the datagrams it receives (time, destination address, sequence) and the interface
/// events of its node.
#[derive(Default)]
struct Log {
    rx: Vec<(Instant, Ipv4Addr, u64)>,
    events: Vec<(Instant, IfaceId, IfaceEvent)>,
}

struct Sink(Arc<Mutex<Log>>);

impl Agent for Sink {
    fn on_packet(&mut self, ctx: &mut Ctx<'_>, pkt: Packet) {
        let ip = pkt.ip().unwrap();
        let udp = UdpView::new(ip.payload()).unwrap();
        let seq = u64::from_be_bytes(udp.payload().try_into().unwrap());
        self.0.lock().unwrap().rx.push((ctx.now(), ip.dst(), seq));
    }
    fn on_iface_event(&mut self, ctx: &mut Ctx<'_>, iface: IfaceId, event: IfaceEvent) {
        // What the agent sees through its context agrees with the event.
        let addrs: Vec<Ipv4Addr> = ctx.iface_addrs(iface).iter().map(|a| a.addr).collect();
        match event {
            IfaceEvent::AddressAdded(a) => assert!(addrs.contains(&a)),
            IfaceEvent::AddressRemoved(a) => assert!(!addrs.contains(&a)),
            IfaceEvent::Up | IfaceEvent::Down => {}
        }
        self.0.lock().unwrap().events.push((ctx.now(), iface, event));
    }
}

const H0: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);
const OLD: Ipv4Addr = Ipv4Addr::new(10, 0, 3, 2);
const NEW: Ipv4Addr = Ipv4Addr::new(10, 0, 4, 2);

struct Setup {
    world: World,
    dst: Arc<Mutex<Ipv4Addr>>,
    log: Arc<Mutex<Log>>,
    h3_if: IfaceId,
}

/// H0 — R — H3; a CBR from H0 to H3 from 0 to 100 ms; `faults` scheduled.
fn setup(faults: impl Fn(IfaceId) -> Vec<(Instant, FaultAction)>) -> Setup {
    let mut b = WorldBuilder::new(1, ms(200));
    let h0 = b.node("H0", NodeKind::Host);
    let r = b.node("R", NodeKind::Router);
    let h3 = b.node("H3", NodeKind::Host);
    let a = b.iface(h0, "eth0", H0);
    let r0 = b.iface(r, "eth0", Ipv4Addr::new(10, 0, 1, 2));
    let r1 = b.iface(r, "eth1", Ipv4Addr::new(10, 0, 3, 1));
    let h3_if = b.iface(h3, "eth0", OLD);
    b.link("H0-R", a, r0, ch(), ch(), 1);
    b.link("R-H3", r1, h3_if, ch(), ch(), 1);
    let flow = b.flow("cbr");
    let dst = Arc::new(Mutex::new(OLD));
    b.agent(h0, Box::new(Cbr { src: H0, dst: dst.clone(), from: ms(0), to: ms(100), flow }));
    let log = Arc::new(Mutex::new(Log::default()));
    let sink = b.agent(h3, Box::new(Sink(log.clone())));
    assert!(b.bind_port(sink, PROTO_UDP, 9));
    for (at, action) in faults(h3_if) {
        b.fault(at, action);
    }
    Setup { world: b.build(), dst, log, h3_if }
}

#[test]
fn an_address_change_mid_transfer_is_told_to_the_agents_and_routes_follow_it() {
    let Setup { mut world, dst, log, h3_if } = setup(|_| Vec::new());
    world.run_until(Instant(50_000_000 - 1)).unwrap();
    // H3 moves to 10.0.4.2/24, a subnet that did not exist: it must be routed to.
    assert!(world.change_address(h3_if, OLD, IfaceAddr { addr: NEW, prefix_len: 24 }));
    assert!(!world.change_address(h3_if, OLD, IfaceAddr { addr: NEW, prefix_len: 24 }));
    assert_eq!(world.network().nodes[0].routes.candidates(NEW), vec![IfaceId(0)]);
    // The datagram past the router is refused by H3; the one before it and later ones have no
    // route (the old subnet now holds only the router's own address). From 60 ms the source
    // uses the new address.
    world.run_until(Instant(60_000_000 - 1)).unwrap();
    *dst.lock().unwrap() = NEW;
    let result = world.run().unwrap();

    let log = log.lock().unwrap();
    let at = Instant(50_000_000 - 1);
    assert_eq!(
        log.events,
        vec![(at, h3_if, IfaceEvent::AddressRemoved(OLD)), (at, h3_if, IfaceEvent::AddressAdded(NEW))]
    );
    // Sent at 0..=47 ms reach H3 (each takes 2.2 ms); the one sent at 48 ms is on its way
    // when the address goes.
    let old: Vec<u64> = log.rx.iter().filter(|r| r.1 == OLD).map(|r| r.2).collect();
    assert_eq!(old, (0..48).collect::<Vec<_>>());
    let new: Vec<u64> = log.rx.iter().filter(|r| r.1 == NEW).map(|r| r.2).collect();
    assert_eq!(new, (60..100).collect::<Vec<_>>());
    assert_eq!(result.scalars.get("node", "H3", "drops_not_for_this_host"), Some(1.0));
    assert_eq!(result.scalars.get("node", "R", "drops_no_route"), Some(1.0));
    assert_eq!(result.scalars.get("node", "H0", "drops_no_route"), Some(10.0));
    assert_eq!(result.scalars.get("flow", "cbr", "drops"), Some(12.0));
}

#[test]
fn interface_faults_and_address_changes_are_told_to_the_agents_on_the_node() {
    let Setup { world, log, h3_if, .. } = setup(|i| {
        vec![
            (ms(10), FaultAction::IfaceDown(i)),
            (ms(20), FaultAction::IfaceUp(i)),
            (ms(30), FaultAction::AddressAdd(i, IfaceAddr { addr: NEW, prefix_len: 24 })),
            (ms(40), FaultAction::AddressRemove(i, OLD)),
            // Removing an address it no longer has changes nothing and tells no one.
            (ms(41), FaultAction::AddressRemove(i, OLD)),
        ]
    });
    let result = world.run().unwrap();
    let log = log.lock().unwrap();
    assert_eq!(
        log.events,
        vec![
            (ms(10), h3_if, IfaceEvent::Down),
            (ms(20), h3_if, IfaceEvent::Up),
            (ms(30), h3_if, IfaceEvent::AddressAdded(NEW)),
            (ms(40), h3_if, IfaceEvent::AddressRemoved(OLD)),
        ]
    );
    // While down (10–20 ms) datagrams are lost at H3's interface; from 40 ms the old
    // address is not H3's any more.
    assert!(result.scalars.get("iface", "H3/eth0", "drops_iface_down").unwrap() > 0.0);
    assert!(log.rx.iter().all(|r| r.0 < ms(10) + Duration::from_micros(2200) || r.0 > ms(20)));
    assert!(log.rx.iter().all(|r| r.0 <= ms(40) + Duration::from_micros(2200)));
}
