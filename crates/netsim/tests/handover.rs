//! An SCTP application's handover policy driven by its node's interface events (RFC 5061
//! ADD-IP, SET-PRIMARY, DELETE-IP): a two-homed client whose first address is replaced by a
//! scripted change keeps its association and its transfer with make-before-break (and with
//! break-before-make), and without a policy falls back to its other address.
#![allow(missing_docs, clippy::unwrap_used)]

use std::net::Ipv4Addr;

use netsim::apps::handover::HandoverPolicy;
use netsim::apps::sctp::{SctpAppConfig, SctpRole};
use netsim::fault::FaultAction;
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, IfaceAddr, NodeKind};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::recorder::EventLog;
use netsim::world::{RunResult, WorldBuilder};
use netsim::{Duration, Instant};

const OLD: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 2);
const SECOND: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 2);
const NEW: Ipv4Addr = Ipv4Addr::new(10, 0, 4, 2);
const SERVER: Ipv4Addr = Ipv4Addr::new(10, 0, 9, 2);

fn ch(delay_ms: u64) -> ChannelConfig {
    ChannelConfig {
        rate_bps: 10_000_000,
        delay: Duration::from_millis(delay_ms),
        mtu: 1500,
        queue: QueueConfig::DropTail { limit: QueueLimit::Packets(50) },
        loss: LossConfig::None,
    }
}

fn at(ms: u64) -> Instant {
    Instant::ZERO + Duration::from_millis(ms)
}

/// MC (eth0 10.0.1.2, eth1 10.0.2.2) — R — S (10.0.9.2), 6 s. MC uploads 4 MB to S. Its
/// eth0 gets 10.0.4.2 at `add_at` and loses 10.0.1.2 at 3 s.
fn run(policy: HandoverPolicy, add_at: u64) -> RunResult {
    let mut b = WorldBuilder::new(3, at(6000));
    let mc = b.node("MC", NodeKind::Host);
    let r = b.node("R", NodeKind::Router);
    let s = b.node("S", NodeKind::Host);
    let mc0 = b.iface(mc, "eth0", OLD);
    let mc1 = b.iface(mc, "eth1", SECOND);
    let r0 = b.iface(r, "eth0", Ipv4Addr::new(10, 0, 1, 1));
    let r1 = b.iface(r, "eth1", Ipv4Addr::new(10, 0, 2, 1));
    let r9 = b.iface(r, "eth9", Ipv4Addr::new(10, 0, 9, 1));
    let s0 = b.iface(s, "eth0", SERVER);
    b.link("MC-R0", mc0, r0, ch(5), ch(5), 1);
    b.link("MC-R1", mc1, r1, ch(20), ch(20), 1);
    b.link("R-S", r9, s0, ch(5), ch(5), 1);
    let config = sctp::Config { auth: true, asconf: true, ..sctp::Config::default() };
    let sink = SctpRole::Sink { drain_rate: None };
    let mut server = SctpAppConfig::new("server", vec![SERVER], 5000, config.clone(), sink, 1);
    server.handover = policy;
    server.install(&mut b, s).unwrap();
    let up = SctpRole::Bulk {
        peer: vec![SERVER],
        more_peers: Vec::new(),
        peer_port: 5000,
        start: at(0),
        bytes: Some(4_000_000),
        message_size: 1000,
        streams: 1,
        unordered: false,
    };
    let mut client = SctpAppConfig::new("mc", vec![OLD, SECOND], 5001, config, up, 2);
    client.handover = policy;
    client.install(&mut b, mc).unwrap();
    b.fault(at(add_at), FaultAction::AddressAdd(mc0, IfaceAddr { addr: NEW, prefix_len: 24 }));
    b.fault(at(3000), FaultAction::AddressRemove(mc0, OLD));
    b.trace(Box::new(EventLog::new(vec!["sctp".into()])));
    b.build().run().unwrap()
}

fn scalar(r: &RunResult, kind: &str, entity: &str, metric: &str) -> Option<f64> {
    r.scalars.get(kind, entity, metric)
}

#[test]
fn make_before_break_keeps_the_association_and_the_transfer() {
    let r = run(HandoverPolicy::MakeBeforeBreak, 2000);
    assert_eq!(scalar(&r, "sctp", "server", "delivered_bytes"), Some(4_000_000.0));
    assert!(scalar(&r, "sctp", "mc", "completion_time").is_some());
    assert_eq!(scalar(&r, "sctp", "mc", "closed"), Some(0.0));
    assert_eq!(scalar(&r, "sctp", "mc", "handovers"), Some(1.0));
    let delay = scalar(&r, "sctp_handover", "mc/handover0", "handover_delay").unwrap();
    let rtt = scalar(&r, "sctp_handover", "mc/handover0", "asconf_rtt").unwrap();
    assert_eq!(scalar(&r, "sctp_handover", "mc/handover0", "requested_at"), Some(2.0));
    // The ADD-IP + SET-PRIMARY round trip (20 ms of links, plus queueing behind the upload),
    // then the first DATA leaves from the new address: the delay is at least the round trip.
    assert!((0.02..0.5).contains(&rtt), "{rtt}");
    assert!(delay >= rtt && delay < rtt + 0.1, "{delay} {rtt}");
    assert!(scalar(&r, "sctp_handover", "mc/handover0", "l2_handover_time").is_none());
    // The DELETE-IP of the old address went through at 3 s: the server has two paths left.
    let deleted = r.events.detail.iter().any(|d| d.contains("PeerAddressRemoved") && d.contains("10.0.1.2"));
    assert!(deleted);
}

#[test]
fn break_before_make_waits_for_the_old_address_to_go() {
    let r = run(HandoverPolicy::BreakBeforeMake, 2000);
    assert_eq!(scalar(&r, "sctp", "server", "delivered_bytes"), Some(4_000_000.0));
    assert_eq!(scalar(&r, "sctp", "mc", "handovers"), Some(1.0));
    // Requested when the old address went, not when the new one came.
    assert_eq!(scalar(&r, "sctp_handover", "mc/handover0", "requested_at"), Some(3.0));
    assert!(scalar(&r, "sctp_handover", "mc/handover0", "handover_delay").is_some());
}

#[test]
fn without_a_policy_the_client_falls_back_to_its_other_address() {
    let r = run(HandoverPolicy::None, 2000);
    assert!(scalar(&r, "sctp", "mc", "handovers").is_none());
    // No ASCONF: the server never learns the new address, and the client never sends from
    // it (RFC 5061 §4.1: an address is used once the peer acknowledged it). When the old
    // address goes, eth0 reaches the server only from the unknown new address, so the
    // client's packets leave from its other known address (eth1, the slower link): plain
    // multihoming, and the transfer completes, later than with a handover.
    assert!(!r.events.detail.iter().any(|d| d.contains("PeerAddressAdded")));
    assert_eq!(scalar(&r, "sctp", "server", "delivered_bytes"), Some(4_000_000.0));
    let plain = scalar(&r, "sctp", "mc", "completion_time").unwrap();
    let handover = scalar(&run(HandoverPolicy::MakeBeforeBreak, 2000), "sctp", "mc", "completion_time").unwrap();
    assert!(plain > handover, "{plain} {handover}");
}
