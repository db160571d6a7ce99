//! The network's forwarding path, through the public API: routers forward (TTL decremented,
//! checksum kept valid), every drop is charged to its reason, its location and its flow, link
//! and interface failures discard exactly what they should, and events of a discarded
//! transmission or wire (generation counters) are ignored after the link comes back.
#![allow(missing_docs, clippy::unwrap_used)]

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use netsim::agent::{Agent, Ctx};
use netsim::fault::FaultAction;
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::recorder::EventLog;
use netsim::routing::StaticRoute;
use netsim::wire::{udp_datagram, Ipv4Fields, Packet, PacketMeta, PROTO_UDP};
use netsim::world::{RunResult, WorldBuilder};
use netsim::{Duration, Instant};

/// 8 Mbit/s: a 1,000-byte datagram takes exactly 1 ms to serialise.
const RATE: u64 = 8_000_000;

fn ms(v: u64) -> Instant {
    Instant::ZERO + Duration::from_millis(v)
}

fn ch(queue: usize, mtu: usize, loss: LossConfig) -> ChannelConfig {
    ChannelConfig {
        rate_bps: RATE,
        delay: Duration::from_millis(1),
        mtu,
        queue: QueueConfig::DropTail { limit: QueueLimit::Packets(queue) },
        loss,
    }
}

/// One datagram to send: when, to where, TTL, total IP length.
#[derive(Clone, Copy)]
struct Send {
    at: Instant,
    dst: Ipv4Addr,
    port: u16,
    ttl: u8,
    len: usize,
}

fn send(at_ms: u64, dst: Ipv4Addr) -> Send {
    Send { at: ms(at_ms), dst, port: 9, ttl: 64, len: 1000 }
}

/// Sends its schedule from `src`, all in flow `flow`.
struct Probe {
    src: Ipv4Addr,
    flow: u32,
    sends: Vec<Send>,
}

impl Agent for Probe {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        for (i, s) in self.sends.iter().enumerate() {
            ctx.timer_at(s.at, i as u64).unwrap();
        }
    }
    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        let s = self.sends[token as usize];
        let payload = vec![0u8; s.len - 28];
        let seg = udp_datagram(self.src, s.dst, 5000, s.port, &payload);
        let fields = Ipv4Fields { src: self.src, dst: s.dst, protocol: PROTO_UDP, ident: token as u16, ttl: s.ttl };
        let pkt = Packet::ipv4(fields, &seg, PacketMeta { flow: self.flow, uid: token });
        if let Some(f) = ctx.flow_mut(self.flow) {
            f.tx_packets += 1;
        }
        ctx.send(pkt);
    }
}

/// What a sink saw: arrival time, IP identification, TTL, checksum valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seen {
    at: Instant,
    ident: u16,
    ttl: u8,
    checksum_ok: bool,
}

struct Sink(Arc<Mutex<Vec<Seen>>>);

impl Agent for Sink {
    fn on_packet(&mut self, ctx: &mut Ctx<'_>, pkt: Packet) {
        let ip = pkt.ip().unwrap();
        let ident = u16::from_be_bytes([pkt.bytes[4], pkt.bytes[5]]);
        self.0.lock().unwrap().push(Seen { at: ctx.now(), ident, ttl: ip.ttl(), checksum_ok: ip.checksum_ok() });
    }
}

const H0: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);
const R1_0: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 2);
const R1_1: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 1);
const R2_0: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 2);
const R2_1: Ipv4Addr = Ipv4Addr::new(10, 0, 3, 1);
const H3: Ipv4Addr = Ipv4Addr::new(10, 0, 3, 2);

/// Knobs of the chain H0 — R1 — R2 — H3.
struct Chain {
    sends: Vec<Send>,
    faults: Vec<(Instant, &'static str)>,
    /// Queue limit of H0's transmitter.
    h0_queue: usize,
    /// MTU of the R1 — R2 link.
    core_mtu: usize,
    /// Loss on R1 → R2.
    core_loss: LossConfig,
    /// Explicit routes: (node name, prefix, len, interface index on that node).
    routes: Vec<(&'static str, Ipv4Addr, u8, usize)>,
    stop: Instant,
}

impl Default for Chain {
    fn default() -> Self {
        Chain {
            sends: Vec::new(),
            faults: Vec::new(),
            h0_queue: 100,
            core_mtu: 1500,
            core_loss: LossConfig::None,
            routes: Vec::new(),
            stop: ms(100),
        }
    }
}

/// Runs the chain; returns the results and what the sink on H3 (UDP port 9) saw.
fn run(chain: Chain) -> (RunResult, Vec<Seen>) {
    let mut b = WorldBuilder::new(1, chain.stop);
    let h0 = b.node("H0", NodeKind::Host);
    let r1 = b.node("R1", NodeKind::Router);
    let r2 = b.node("R2", NodeKind::Router);
    let h3 = b.node("H3", NodeKind::Host);
    let i_h0 = b.iface(h0, "eth0", H0);
    let i_r1_0 = b.iface(r1, "eth0", R1_0);
    let i_r1_1 = b.iface(r1, "eth1", R1_1);
    let i_r2_0 = b.iface(r2, "eth0", R2_0);
    let i_r2_1 = b.iface(r2, "eth1", R2_1);
    let i_h3 = b.iface(h3, "eth0", H3);
    let none = LossConfig::None;
    let l0 = b.link("H0-R1", i_h0, i_r1_0, ch(chain.h0_queue, 1500, none), ch(100, 1500, none), 1);
    let l1 =
        b.link("R1-R2", i_r1_1, i_r2_0, ch(100, chain.core_mtu, chain.core_loss), ch(100, chain.core_mtu, none), 1);
    let l2 = b.link("R2-H3", i_r2_1, i_h3, ch(100, 1500, none), ch(100, 1500, none), 1);
    let nodes = [("H0", h0, vec![i_h0]), ("R1", r1, vec![i_r1_0, i_r1_1]), ("R2", r2, vec![i_r2_0, i_r2_1])];
    for (node, prefix, len, via) in chain.routes {
        let (_, n, ifaces) = nodes.iter().find(|(name, _, _)| *name == node).unwrap();
        b.route(*n, StaticRoute { prefix, len, iface: ifaces[via] });
    }
    let flow = b.flow("probe");
    b.agent(h0, Box::new(Probe { src: H0, flow, sends: chain.sends }));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = b.agent(h3, Box::new(Sink(seen.clone())));
    assert!(b.bind_port(sink, PROTO_UDP, 9));
    for (at, what) in chain.faults {
        let action = match what {
            "core-down" => FaultAction::LinkDown(l1),
            "core-up" => FaultAction::LinkUp(l1),
            "h0-down" => FaultAction::IfaceDown(i_h0),
            "h0-up" => FaultAction::IfaceUp(i_h0),
            "h3-down" => FaultAction::IfaceDown(i_h3),
            "h3-up" => FaultAction::IfaceUp(i_h3),
            "r1-out-down" => FaultAction::IfaceDown(i_r1_1),
            "r1-out-up" => FaultAction::IfaceUp(i_r1_1),
            other => panic!("unknown fault {other}"),
        };
        b.fault(at, action);
    }
    let _ = (l0, l2);
    b.trace(Box::new(EventLog::new(vec!["drop".into()])));
    let result = b.build().run().unwrap();
    let seen = seen.lock().unwrap().clone();
    (result, seen)
}

fn scalar(r: &RunResult, kind: &str, entity: &str, metric: &str) -> f64 {
    r.scalars.get(kind, entity, metric).unwrap_or(0.0)
}

/// Every drop of the run as (entity, reason) from the event log, in order.
fn drops(r: &RunResult) -> Vec<(String, String)> {
    (0..r.events.kind.len())
        .filter(|&i| r.events.kind[i] == "drop")
        .map(|i| {
            let reason = r.events.detail[i].split(' ').next().unwrap().trim_start_matches("reason=").to_string();
            (r.events.entity[i].clone(), reason)
        })
        .collect()
}

#[test]
fn routers_forward_decrementing_ttl_with_a_valid_checksum() {
    let (r, seen) = run(Chain { sends: vec![send(0, H3)], ..Chain::default() });
    // Three hops of 1 ms serialisation + 1 ms propagation each.
    assert_eq!(seen, vec![Seen { at: ms(6), ident: 0, ttl: 62, checksum_ok: true }]);
    assert_eq!(scalar(&r, "iface", "H3/eth0", "rx_packets"), 1.0);
    assert_eq!(scalar(&r, "iface", "H3/eth0", "rx_bytes"), 1000.0);
    assert_eq!(scalar(&r, "iface", "R1/eth1", "tx_packets"), 1.0);
    assert_eq!(scalar(&r, "flow", "probe", "drops"), 0.0);
    assert!(drops(&r).is_empty());
}

#[test]
fn a_packet_whose_ttl_would_reach_zero_is_dropped_at_that_router() {
    // TTL 2: R1 forwards it with TTL 1, R2 discards it (RFC 1812 §5.3.1).
    let sends = vec![Send { ttl: 2, ..send(0, H3) }, Send { ttl: 3, ..send(10, H3) }];
    let (r, seen) = run(Chain { sends, ..Chain::default() });
    assert_eq!(drops(&r), vec![("R2".to_string(), "ttl_expired".to_string())]);
    assert_eq!(scalar(&r, "node", "R2", "drops_ttl_expired"), 1.0);
    assert_eq!(scalar(&r, "flow", "probe", "drops_ttl_expired"), 1.0);
    assert_eq!(seen.len(), 1);
    assert_eq!((seen[0].ttl, seen[0].checksum_ok), (1, true));
}

#[test]
fn no_route_is_charged_to_the_node_without_one() {
    // H0 has no route at all to 10.9.0.1; R1 gets it by an explicit route of H0 and has none.
    let far = Ipv4Addr::new(10, 9, 0, 1);
    let (r, seen) = run(Chain { sends: vec![send(0, far)], ..Chain::default() });
    assert_eq!(drops(&r), vec![("H0".to_string(), "no_route".to_string())]);
    assert!(seen.is_empty());
    let routes = vec![("H0", Ipv4Addr::new(10, 9, 0, 0), 16, 0)];
    let (r, _) = run(Chain { sends: vec![send(0, far)], routes, ..Chain::default() });
    assert_eq!(drops(&r), vec![("R1".to_string(), "no_route".to_string())]);
    assert_eq!(scalar(&r, "node", "R1", "drops_no_route"), 1.0);
    assert_eq!(scalar(&r, "flow", "probe", "drops_no_route"), 1.0);
    assert_eq!(scalar(&r, "flow", "probe", "loss_rate"), 1.0);
}

#[test]
fn hosts_do_not_forward_and_unbound_ports_are_unreachable() {
    // R1 and R2 send 10.9/16 towards H3, which does not own it and does not forward.
    let far = Ipv4Addr::new(10, 9, 0, 1);
    let routes = vec![("H0", Ipv4Addr::new(10, 9, 0, 0), 16, 0), ("R1", far, 32, 1), ("R2", far, 32, 1)];
    let sends = vec![send(0, far), Send { port: 10, ..send(10, H3) }];
    let (r, seen) = run(Chain { sends, routes, ..Chain::default() });
    assert_eq!(
        drops(&r),
        vec![("H3".to_string(), "not_for_this_host".to_string()), ("H3".to_string(), "port_unreachable".to_string()),]
    );
    assert!(seen.is_empty());
    assert_eq!(scalar(&r, "flow", "probe", "drops"), 2.0);
}

#[test]
fn a_full_queue_drops_arrivals_at_the_sending_interface() {
    // Queue of 2 behind the transmitter: of 5 simultaneous packets, one is sent at once,
    // two wait, two are dropped.
    let sends = (0..5).map(|_| send(0, H3)).collect();
    let (r, seen) = run(Chain { sends, h0_queue: 2, ..Chain::default() });
    assert_eq!(seen.len(), 3);
    assert_eq!(seen.iter().map(|s| s.at).collect::<Vec<_>>(), vec![ms(6), ms(7), ms(8)]);
    assert_eq!(scalar(&r, "iface", "H0/eth0", "drops_queue_full"), 2.0);
    assert_eq!(scalar(&r, "flow", "probe", "drops_queue_full"), 2.0);
    assert_eq!(drops(&r), vec![("H0/eth0".to_string(), "queue_full".to_string()); 2]);
}

#[test]
fn a_packet_larger_than_the_mtu_is_dropped_where_it_would_leave() {
    let sends = vec![Send { len: 1200, ..send(0, H3) }, Send { len: 1000, ..send(10, H3) }];
    let (r, seen) = run(Chain { sends, core_mtu: 1100, ..Chain::default() });
    assert_eq!(seen.len(), 1);
    assert_eq!(drops(&r), vec![("R1/eth1".to_string(), "mtu_exceeded".to_string())]);
    assert_eq!(scalar(&r, "iface", "R1/eth1", "drops_mtu_exceeded"), 1.0);
    assert_eq!(scalar(&r, "flow", "probe", "drops_mtu_exceeded"), 1.0);
}

#[test]
fn random_loss_is_charged_to_the_link_direction() {
    let sends = (0..3).map(|i| send(10 * i, H3)).collect();
    let (r, seen) = run(Chain { sends, core_loss: LossConfig::Bernoulli { p: 1.0 }, ..Chain::default() });
    assert!(seen.is_empty());
    assert_eq!(drops(&r), vec![("R1-R2:R1/eth1".to_string(), "link_loss".to_string()); 3]);
    assert_eq!(scalar(&r, "iface", "R1/eth1", "drops_link_loss"), 3.0);
    assert_eq!(scalar(&r, "flow", "probe", "drops_link_loss"), 3.0);
}

#[test]
fn a_failed_link_loses_what_it_holds_and_what_is_offered_until_repaired() {
    // Four packets leave H0 back to back (0-1, 1-2, 2-3, 3-4 ms) and R1 sends them on the core
    // link 2-3, 3-4, 4-5, 5-6 ms. At 4.5 ms the link fails: the first has arrived, the second
    // is on the wire, the third being sent; the fourth is offered at 5 ms while it is down.
    // After the repair at 10 ms traffic flows again.
    let sends = vec![send(0, H3), send(0, H3), send(0, H3), send(0, H3), send(20, H3)];
    let faults = vec![(ms(4) + Duration::from_micros(500), "core-down"), (ms(10), "core-up")];
    let (r, seen) = run(Chain { sends, faults, ..Chain::default() });
    assert_eq!(seen.iter().map(|s| (s.ident, s.at)).collect::<Vec<_>>(), vec![(0, ms(6)), (4, ms(26))]);
    assert_eq!(scalar(&r, "iface", "R1/eth1", "drops_link_down"), 3.0);
    assert_eq!(scalar(&r, "flow", "probe", "drops_link_down"), 3.0);
    assert_eq!(drops(&r), vec![("R1-R2:R1/eth1".to_string(), "link_down".to_string()); 3]);
}

#[test]
fn a_packet_on_a_wire_that_failed_and_came_back_is_not_delivered() {
    // The first packet is on the core wire from 3 ms to 4 ms; the link fails at 3.5 ms and is
    // back at 3.7 ms. A small second packet is on that wire from 3.9 ms to 4.9 ms: the first
    // packet's arrival event at 4 ms is stale and must not deliver it early.
    let us = Duration::from_micros;
    let faults = vec![(ms(3) + us(500), "core-down"), (ms(3) + us(700), "core-up")];
    let sends = vec![send(0, H3), Send { at: ms(2) + us(700), len: 100, ..send(0, H3) }];
    let (r, seen) = run(Chain { sends, faults, ..Chain::default() });
    // H0 2.7-2.8, R1 3.8-3.9, wire until 4.9, R2 4.9-5.0, H3 at 6.0 ms.
    assert_eq!(seen.iter().map(|s| (s.ident, s.at)).collect::<Vec<_>>(), vec![(1, ms(6))]);
    assert_eq!(scalar(&r, "iface", "R1/eth1", "drops_link_down"), 1.0);
    assert_eq!(scalar(&r, "iface", "R2/eth0", "rx_packets"), 1.0);
}

#[test]
fn a_stale_end_of_transmission_does_not_cut_the_next_packet_short() {
    // R1 sends the first packet on the core link from 2 ms to 3 ms; the link fails at 2.2 ms
    // and is back at 2.4 ms. The second packet (600 bytes) is sent there from 2.6 ms to
    // 3.2 ms: the first packet's end of transmission at 3 ms is stale.
    let us = Duration::from_micros;
    let sends = vec![send(0, H3), Send { at: ms(1), len: 600, ..send(0, H3) }];
    let faults = vec![(ms(2) + us(200), "core-down"), (ms(2) + us(400), "core-up")];
    let (r, seen) = run(Chain { sends, faults, ..Chain::default() });
    // Wire 3.2-4.2, R2 4.2-4.8, H3 at 5.8 ms.
    assert_eq!(seen.iter().map(|s| (s.ident, s.at)).collect::<Vec<_>>(), vec![(1, ms(5) + us(800))]);
    assert_eq!(scalar(&r, "iface", "R1/eth1", "drops_link_down"), 1.0);
    assert_eq!(scalar(&r, "iface", "R1/eth1", "tx_packets"), 2.0);
}

#[test]
fn a_down_interface_loses_its_queue_and_neither_sends_nor_receives() {
    // H0's queue holds two packets when it goes down at 0.5 ms: the one being sent and the
    // queued one are lost (iface_down at H0/eth0); one offered while down is lost too.
    let sends = vec![send(0, H3), send(0, H3), send(1, H3), send(20, H3)];
    let faults = vec![(ms(0) + Duration::from_micros(500), "h0-down"), (ms(10), "h0-up")];
    let (r, seen) = run(Chain { sends, faults, ..Chain::default() });
    assert_eq!(seen.iter().map(|s| s.ident).collect::<Vec<_>>(), vec![3]);
    assert_eq!(scalar(&r, "iface", "H0/eth0", "drops_iface_down"), 3.0);
    assert_eq!(scalar(&r, "flow", "probe", "drops_iface_down"), 3.0);

    // A packet already on the wire keeps travelling; a receiving interface that is down
    // drops it on arrival (charged to that interface).
    let sends = vec![send(0, H3), send(30, H3)];
    let faults = vec![(ms(1), "h3-down"), (ms(20), "h3-up")];
    let (r, seen) = run(Chain { sends, faults, ..Chain::default() });
    assert_eq!(seen.iter().map(|s| s.ident).collect::<Vec<_>>(), vec![1]);
    assert_eq!(drops(&r), vec![("H3/eth0".to_string(), "iface_down".to_string())]);
    assert_eq!(scalar(&r, "iface", "H3/eth0", "drops_iface_down"), 1.0);
    assert_eq!(scalar(&r, "iface", "R2/eth1", "tx_packets"), 2.0);
}

#[test]
fn an_interface_that_fails_while_sending_loses_only_the_packet_being_sent() {
    // Nothing waits behind the packet H0 sends from 0 to 1 ms, so the end of its
    // transmission is not an event of its own: the failure at 0.5 ms must still find it
    // being sent, lose it, and its arrival must not happen.
    let us = Duration::from_micros;
    let sends = vec![send(0, H3), send(20, H3)];
    let faults = vec![(ms(0) + us(500), "h0-down"), (ms(10), "h0-up")];
    let (r, seen) = run(Chain { sends, faults, ..Chain::default() });
    assert_eq!(seen.iter().map(|s| (s.ident, s.at)).collect::<Vec<_>>(), vec![(1, ms(26))]);
    assert_eq!(drops(&r), vec![("H0/eth0".to_string(), "iface_down".to_string())]);

    // The first packet is on the wire (1-2 ms) when the second is being sent (1.2-2.2 ms)
    // and H0 fails at 1.5 ms: the second is lost, the first arrives.
    let sends = vec![send(0, H3), Send { at: ms(1) + us(200), ..send(0, H3) }];
    let faults = vec![(ms(1) + us(500), "h0-down")];
    let (r, seen) = run(Chain { sends, faults, ..Chain::default() });
    assert_eq!(seen.iter().map(|s| (s.ident, s.at)).collect::<Vec<_>>(), vec![(0, ms(6))]);
    assert_eq!(drops(&r), vec![("H0/eth0".to_string(), "iface_down".to_string())]);

    // A failure at the very instant the transmission ends: simultaneous events keep the
    // order in which they were placed, and the failure was planned before the packet
    // started, so the packet is still being sent and is lost.
    let sends = vec![send(0, H3)];
    let faults = vec![(ms(1), "h0-down")];
    let (r, seen) = run(Chain { sends, faults, ..Chain::default() });
    assert!(seen.is_empty());
    assert_eq!(drops(&r), vec![("H0/eth0".to_string(), "iface_down".to_string())]);
}

#[test]
fn a_packet_that_finds_every_transmitter_idle_costs_one_event_per_hop() {
    // Packets 10 ms apart never wait: each is one timer and one arrival per hop (three), the
    // end of a transmission being an event only when a packet waits for it.
    let events = |n: u64| {
        let sends = (0..n).map(|i| send(10 * i, H3)).collect();
        let (r, seen) = run(Chain { sends, ..Chain::default() });
        assert_eq!(seen.len() as u64, n);
        scalar(&r, "run", "run", "events")
    };
    assert_eq!(events(9) - events(1), 8.0 * 4.0);
    // Two back to back: the second waits at H0 and at R1 and R2 (it arrives as the first
    // finishes there), so those three transmitters' ends are events too.
    let sends = vec![send(0, H3), send(0, H3)];
    let (r, seen) = run(Chain { sends, ..Chain::default() });
    assert_eq!(seen.iter().map(|s| (s.ident, s.at)).collect::<Vec<_>>(), vec![(0, ms(6)), (1, ms(7))]);
    assert_eq!(scalar(&r, "run", "run", "events") - events(1), 4.0 + 3.0);
}

#[test]
fn a_router_interface_down_and_up_is_a_transient_failure() {
    // R1's outgoing interface is down from 1 ms to 5 ms: the packet reaching it at 2 ms is
    // lost there; routing is static, so the next one goes the same way and arrives.
    let sends = vec![send(0, H3), send(10, H3)];
    let faults = vec![(ms(1), "r1-out-down"), (ms(5), "r1-out-up")];
    let (r, seen) = run(Chain { sends, faults, ..Chain::default() });
    assert_eq!(seen.iter().map(|s| (s.ident, s.at)).collect::<Vec<_>>(), vec![(1, ms(16))]);
    assert_eq!(drops(&r), vec![("R1/eth1".to_string(), "iface_down".to_string())]);
}

#[test]
fn a_node_finds_the_interface_owning_an_address_among_many() {
    use netsim::network::{IfaceAddr, Network};
    // A router with 300 interfaces numbered out of order, two sharing an address, and
    // addresses added and removed later: each address maps to the first interface (in
    // declaration order) that has it, and an address no interface has to none.
    let mut net = Network::new();
    let r = net.add_node(NodeKind::Router);
    let addr = |k: u32| Ipv4Addr::from(0x0a00_0000 + (k * 7919) % 65_521);
    let ifaces: Vec<_> = (0..300).map(|k| net.add_iface(r, Some(IfaceAddr::new(addr(k))))).collect();
    let shared = net.add_iface(r, Some(IfaceAddr::new(addr(150))));
    for (k, &i) in ifaces.iter().enumerate() {
        assert_eq!(net.iface_with_addr(r, addr(k as u32)), Some(i), "address {k}");
    }
    assert_ne!(net.iface_with_addr(r, addr(150)), Some(shared));
    assert_eq!(net.iface_with_addr(r, addr(300)), None);
    assert!(net.add_address(ifaces[3], IfaceAddr::new(addr(300))));
    assert_eq!(net.iface_with_addr(r, addr(300)), Some(ifaces[3]));
    assert!(net.remove_address(ifaces[150], addr(150)));
    assert_eq!(net.iface_with_addr(r, addr(150)), Some(shared));
    assert!(net.remove_address(ifaces[3], addr(3)));
    assert_eq!(net.iface_with_addr(r, addr(3)), None);
    assert_eq!(net.iface_with_addr(r, addr(300)), Some(ifaces[3]));
}
