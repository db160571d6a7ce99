//! Concurrent Multipath Transfer in the simulator: an SCTP upload between two hosts joined by
//! two disjoint routed 10 Mbit/s paths of 20 ms and 40 ms round-trip time (as in
//! `examples/failover.toml`). With CMT (round-robin
//! scheduler, SFR, CUC, DAC) and buffers large enough for the reordering, the goodput is
//! close to the sum of the two paths; single-path SCTP gets one path's worth.
#![allow(missing_docs, clippy::unwrap_used)]

use std::net::Ipv4Addr;

use netsim::apps::sctp::{SctpAppConfig, SctpRole};
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::world::{RunResult, WorldBuilder};
use netsim::{Duration, Instant};

const A0: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 1);
const B0: Ipv4Addr = Ipv4Addr::new(10, 1, 1, 1);
const A1: Ipv4Addr = Ipv4Addr::new(10, 2, 0, 1);
const B1: Ipv4Addr = Ipv4Addr::new(10, 2, 1, 1);
const RATE_BPS: u64 = 10_000_000;
/// Simulated seconds; the upload starts at 0.1 s.
const STOP: f64 = 30.0;

/// A 10 Mbit/s link of `one_way_ms` delay with a 100-packet drop-tail queue.
fn ch(one_way_ms: u64) -> ChannelConfig {
    ChannelConfig {
        rate_bps: RATE_BPS,
        delay: Duration::from_millis(one_way_ms),
        mtu: 1500,
        queue: QueueConfig::DropTail { limit: QueueLimit::Packets(100) },
        loss: LossConfig::None,
    }
}

/// An unlimited upload from A to B over A – R1 – B (5 ms per link one way) and A – R2 – B
/// (10 ms per link), both ends configured by `config` with 4 MiB buffers.
fn upload(config: sctp::Config) -> RunResult {
    let mut b = WorldBuilder::new(1, Instant::ZERO + Duration::from_secs_f64(STOP));
    let a = b.node("A", NodeKind::Host);
    let z = b.node("B", NodeKind::Host);
    let (a0, a1) = (b.iface(a, "eth0", A0), b.iface(a, "eth1", A1));
    let (b0, b1) = (b.iface(z, "eth0", B0), b.iface(z, "eth1", B1));
    for (i, (from, to, one_way_ms)) in [(a0, b0, 5), (a1, b1, 10)].into_iter().enumerate() {
        let r = b.node(&format!("R{}", i + 1), NodeKind::Router);
        let net = 1 + i as u8;
        let ra = b.iface(r, "eth0", Ipv4Addr::new(10, net, 0, 2));
        let rb = b.iface(r, "eth1", Ipv4Addr::new(10, net, 1, 2));
        b.link(&format!("A-R{}", i + 1), from, ra, ch(one_way_ms), ch(one_way_ms), 1);
        b.link(&format!("R{}-B", i + 1), rb, to, ch(one_way_ms), ch(one_way_ms), 1);
    }
    let config = sctp::Config { recv_buffer: 4 << 20, send_buffer: 4 << 20, ..config };
    let sink_role = SctpRole::Sink { drain_rate: None };
    SctpAppConfig::new("sink", vec![B0, B1], 5000, config.clone(), sink_role, 1).install(&mut b, z);
    let role = SctpRole::bulk(vec![B0, B1], 5000, Instant::ZERO + Duration::from_millis(100), 1452);
    SctpAppConfig::new("up", vec![A0, A1], 5001, config, role, 2).install(&mut b, a);
    b.build().run().unwrap()
}

#[test]
fn cmt_over_two_disjoint_paths_gets_their_sum_and_single_path_sctp_one_path() {
    let sum = 2.0 * RATE_BPS as f64;
    let r = upload(sctp::Config::default().with_cmt());
    let s = &r.scalars;
    let cmt = s.get("sctp", "sink", "goodput").unwrap();
    let per_path: Vec<f64> =
        ["up/path0", "up/path1"].iter().map(|p| s.get("sctp_path", p, "bytes_sent").unwrap()).collect();
    assert!(cmt >= 0.9 * sum, "CMT goodput {:.2} Mbit/s of {:.0}; bytes per path {per_path:?}", cmt / 1e6, sum / 1e6);
    // Both paths carry their share of new data.
    assert!(per_path.iter().all(|&b| b > 0.4 * per_path.iter().sum::<f64>()), "{per_path:?}");

    let r = upload(sctp::Config::default());
    let single = r.scalars.get("sctp", "sink", "goodput").unwrap();
    assert_eq!(r.scalars.get("sctp_path", "up/path1", "bytes_sent"), Some(0.0));
    assert!(
        single > 0.85 * RATE_BPS as f64 && single <= RATE_BPS as f64,
        "single-path goodput {:.2} Mbit/s",
        single / 1e6
    );
}
