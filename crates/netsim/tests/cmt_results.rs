//! The SCTP results that describe Concurrent Multipath Transfer: per path, the share of new
//! data, fast retransmissions, PF episodes and, when the primary's route breaks, when the path
//! stopped and resumed carrying new data; per association, the TSNs the receiver got out of
//! order and the time the sender was blocked by the peer's receiver window. The topology is
//! two disjoint 10 Mbit/s paths of 20 ms and 40 ms round-trip time, as in `tests/cmt.rs`.
#![allow(missing_docs, clippy::unwrap_used)]

use std::net::Ipv4Addr;

use netsim::apps::sctp::{SctpAppConfig, SctpRole};
use netsim::fault::FaultAction;
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::world::{RunResult, WorldBuilder};
use netsim::{Duration, Instant};

const A0: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 1);
const B0: Ipv4Addr = Ipv4Addr::new(10, 1, 1, 1);
const A1: Ipv4Addr = Ipv4Addr::new(10, 2, 0, 1);
const B1: Ipv4Addr = Ipv4Addr::new(10, 2, 1, 1);

/// A 10 Mbit/s link of `one_way_ms` delay with a 100-packet drop-tail queue.
fn ch(one_way_ms: u64) -> ChannelConfig {
    ChannelConfig {
        rate_bps: 10_000_000,
        delay: Duration::from_millis(one_way_ms),
        mtu: 1500,
        queue: QueueConfig::DropTail { limit: QueueLimit::Packets(100) },
        loss: LossConfig::None,
    }
}

/// An unlimited upload from A to B for `stop` seconds over A – R1 – B (path 0, 20 ms RTT) and
/// A – R2 – B (path 1, 40 ms), with `buffer` bytes of send and receive buffer. With `outage`,
/// the link A – R1 is down over that interval (seconds).
fn upload(config: sctp::Config, buffer: u32, stop: f64, outage: Option<(f64, f64)>) -> RunResult {
    let mut b = WorldBuilder::new(1, Instant::ZERO + Duration::from_secs_f64(stop));
    let a = b.node("A", NodeKind::Host);
    let z = b.node("B", NodeKind::Host);
    let (a0, a1) = (b.iface(a, "eth0", A0), b.iface(a, "eth1", A1));
    let (b0, b1) = (b.iface(z, "eth0", B0), b.iface(z, "eth1", B1));
    let mut first = None;
    for (i, (from, to, one_way_ms)) in [(a0, b0, 5), (a1, b1, 10)].into_iter().enumerate() {
        let r = b.node(&format!("R{}", i + 1), NodeKind::Router);
        let net = 1 + i as u8;
        let ra = b.iface(r, "eth0", Ipv4Addr::new(10, net, 0, 2));
        let rb = b.iface(r, "eth1", Ipv4Addr::new(10, net, 1, 2));
        let l = b.link(&format!("A-R{}", i + 1), from, ra, ch(one_way_ms), ch(one_way_ms), 1);
        first.get_or_insert(l);
        b.link(&format!("R{}-B", i + 1), rb, to, ch(one_way_ms), ch(one_way_ms), 1);
    }
    if let (Some((down, up)), Some(l)) = (outage, first) {
        b.fault(Instant::ZERO + Duration::from_secs_f64(down), FaultAction::LinkDown(l));
        b.fault(Instant::ZERO + Duration::from_secs_f64(up), FaultAction::LinkUp(l));
    }
    let config = sctp::Config { recv_buffer: buffer, send_buffer: 4 << 20, ..config };
    let sink_role = SctpRole::Sink { drain_rate: None };
    SctpAppConfig::new("sink", vec![B0, B1], 5000, config.clone(), sink_role, 1).install(&mut b, z);
    let role = SctpRole::bulk(vec![B0, B1], 5000, Instant::ZERO + Duration::from_millis(100), 1452);
    SctpAppConfig::new("up", vec![A0, A1], 5001, config, role, 2).install(&mut b, a);
    b.build().run().unwrap()
}

fn path(r: &RunResult, p: usize, metric: &str) -> Option<f64> {
    r.scalars.get("sctp_path", &format!("up/path{p}"), metric)
}

#[test]
fn new_data_share_splits_across_paths_under_cmt_and_stays_on_the_primary_without() {
    let r = upload(sctp::Config::default().with_cmt(), 4 << 20, 5.0, None);
    let shares = [path(&r, 0, "new_data_share").unwrap(), path(&r, 1, "new_data_share").unwrap()];
    assert!((shares[0] + shares[1] - 1.0).abs() < 1e-9, "{shares:?}");
    assert!(shares.iter().all(|&s| s > 0.3), "{shares:?}");
    let r = upload(sctp::Config::default(), 4 << 20, 5.0, None);
    assert_eq!(path(&r, 0, "new_data_share"), Some(1.0));
    assert_eq!(path(&r, 1, "new_data_share"), Some(0.0));
}

#[test]
fn reordering_across_paths_is_counted_at_the_receiver() {
    // A window the single path never fills past its queue: no loss, so no reordering.
    let single = upload(sctp::Config::default(), 64 << 10, 5.0, None);
    assert_eq!(single.scalars.get("sctp", "up", "fast_retransmissions"), Some(0.0));
    assert_eq!(single.scalars.get("sctp", "sink", "reordered_tsns"), Some(0.0));
    // CMT over paths of 20 and 40 ms: chunks sent later on the short path overtake earlier
    // ones on the long path.
    let cmt = upload(sctp::Config::default().with_cmt(), 64 << 10, 5.0, None);
    let reordered = cmt.scalars.get("sctp", "sink", "reordered_tsns").unwrap();
    assert!(reordered > 100.0, "{reordered} TSNs out of order");
}

#[test]
fn a_small_receive_buffer_blocks_the_cmt_sender() {
    let blocked = |buffer| {
        let r = upload(sctp::Config::default().with_cmt(), buffer, 5.0, None);
        r.scalars.get("sctp", "up", "rwnd_blocked_time").unwrap()
    };
    let (small, large) = (blocked(16 << 10), blocked(4 << 20));
    assert!(small > 1.0, "blocked {small} s with a 16 KiB buffer");
    assert!(large < 0.1 * small, "blocked {large} s with a 4 MiB buffer, {small} s with 16 KiB");
}

#[test]
fn a_path_outage_under_cmt_pf_is_counted_on_that_path_with_when_new_data_stopped_and_resumed() {
    // Path 0 is down from 2 s to 4 s; the association runs CMT-PF2 (PF at the first timeout).
    let config = sctp::Config { hb_interval: Some(Duration::from_secs(1)), ..sctp::Config::default() };
    let r = upload(config.with_cmt().with_cmt_pf(2), 4 << 20, 8.0, Some((2.0, 4.0)));
    let s = &r.scalars;
    assert_eq!(s.get("sctp", "up", "primary_break_at"), Some(2.0));
    assert!(path(&r, 0, "pf_episodes").unwrap() >= 1.0);
    assert_eq!(path(&r, 1, "pf_episodes"), Some(0.0));
    assert!(path(&r, 0, "t3_timeouts").unwrap() >= 1.0);
    // The chunks lost with the link are reported missing by SACKs of path 1's data (SFR) and
    // fast-retransmitted: the retransmission policy sends them to path 1, not the lost one.
    let fast: Vec<f64> = (0..2).map(|p| path(&r, p, "fast_retransmissions").unwrap()).collect();
    assert_eq!(fast.iter().sum::<f64>(), s.get("sctp", "up", "fast_retransmissions").unwrap());
    // New data stopped on path 0 at the break (its last new data left just before the link
    // went down) and resumed once it answered heartbeats again, after the repair at 4 s.
    let stopped = path(&r, 0, "new_data_stopped_time").unwrap();
    let resumed = path(&r, 0, "new_data_resumed_time").unwrap();
    assert!(stopped < 0.05, "stopped {stopped} s after the break");
    assert!((2.0..4.0).contains(&resumed), "resumed {resumed} s after the break");
    // Path 1 never stopped.
    assert_eq!(path(&r, 1, "new_data_stopped_time"), None);
}
