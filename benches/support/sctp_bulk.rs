//! The SCTP bulk workload shared by `benches/sctp.rs` and `benches/sctp_once.rs`: one bulk
//! association (or, with several paths, a CMT one) from H0 to H1 over 1 Gbit/s, 1 ms links for
//! one simulated second. See `benches/sctp.rs` for what it measures.
use std::net::Ipv4Addr;

use netsim::apps::sctp::{SctpApp, SctpAppConfig, SctpRole};
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::wire::PROTO_SCTP;
use netsim::world::{ChecksumPolicy, RunResult, WorldBuilder};
use netsim::{Duration, Instant};

pub(crate) const RATE_BPS: u64 = 1_000_000_000;
const SIM_SECONDS: u64 = 1;
/// Largest DATA payload at a 1500-byte MTU: 1500 - 20 (IPv4) - 12 (common header) - 16.
pub(crate) const MESSAGE_SIZE: usize = 1452;
const BUFFER: u32 = 1 << 20;

fn ch() -> ChannelConfig {
    ChannelConfig {
        rate_bps: RATE_BPS,
        delay: Duration::from_millis(1),
        mtu: 1500,
        queue: QueueConfig::DropTail { limit: QueueLimit::Packets(1000) },
        loss: LossConfig::None,
    }
}

/// The bulk transfer over `paths` disjoint paths H0 – R – H1, H0 – R2 – H1, ... (path `i`
/// numbered 10.i.0.0/24 and 10.i.1.0/24), with CMT when there are several.
pub(crate) fn run_paths(paths: u8) -> RunResult {
    let mut b = WorldBuilder::new(1, Instant::ZERO + Duration::from_secs(SIM_SECONDS));
    let h0 = b.node("H0", NodeKind::Host);
    let names: Vec<String> = (0..paths).map(|i| if i == 0 { "R".into() } else { format!("R{}", i + 1) }).collect();
    let routers: Vec<_> = names.iter().map(|n| b.node(n, NodeKind::Router)).collect();
    let h1 = b.node("H1", NodeKind::Host);
    let (mut src, mut dst) = (Vec::new(), Vec::new());
    for (i, (&r, name)) in routers.iter().zip(&names).enumerate() {
        let net = i as u8;
        let (a0, a1) = (Ipv4Addr::new(10, net, 0, 1), Ipv4Addr::new(10, net, 1, 1));
        let h0_if = b.iface(h0, &format!("eth{i}"), a0);
        let r0 = b.iface(r, "eth0", Ipv4Addr::new(10, net, 0, 2));
        let r1 = b.iface(r, "eth1", Ipv4Addr::new(10, net, 1, 2));
        let h1_if = b.iface(h1, &format!("eth{i}"), a1);
        b.link(&format!("H0-{name}"), h0_if, r0, ch(), ch(), 1);
        b.link(&format!("{name}-H1"), r1, h1_if, ch(), ch(), 1);
        src.push(a0);
        dst.push(a1);
    }
    let base = if paths > 1 { sctp::Config::default().with_cmt() } else { sctp::Config::default() };
    let config = sctp::Config { recv_buffer: BUFFER, send_buffer: BUFFER, ..base };
    let sink = SctpAppConfig {
        name: "sink".into(),
        addrs: dst.clone(),
        port: 5000,
        config: config.clone(),
        role: SctpRole::Sink { drain_rate: None },
        seed: 2,
        flows: Vec::new(),
        handover: Default::default(),
        handover_trigger: Default::default(),
    };
    let bulk = SctpAppConfig {
        name: "bulk".into(),
        addrs: src,
        port: 5000,
        config,
        role: SctpRole::Bulk {
            peer: dst,
            more_peers: Vec::new(),
            peer_port: 5000,
            start: Instant::ZERO,
            bytes: None,
            message_size: MESSAGE_SIZE,
            streams: 1,
            unordered: false,
        },
        seed: 1,
        flows: Vec::new(),
        handover: Default::default(),
        handover_trigger: Default::default(),
    };
    let agent = b.agent(h1, Box::new(SctpApp::new(sink)));
    b.bind_port(agent, PROTO_SCTP, 5000);
    let agent = b.agent(h0, Box::new(SctpApp::new(bulk)));
    b.bind_port(agent, PROTO_SCTP, 5000);
    if std::env::var_os("SCTPSIM_BENCH_CHECKSUMS").is_some_and(|v| v == "always") {
        b.checksums(ChecksumPolicy::Always);
    }
    b.build().run().expect("run")
}
