//! Scale runs: one world per scenario, built and run once, with its wall time, kernel events,
//! events per second and the process's peak resident set printed. Not a criterion benchmark:
//! each scenario is one long run, and its figures are meant to be compared across sizes to
//! find anything that grows faster than linearly.
//!
//! ```sh
//! cargo run --release -p netsim --example scale -- tcp 1000          # flows through one bottleneck
//! cargo run --release -p netsim --example scale -- sctp 10000 100    # associations between hosts
//! cargo run --release -p netsim --example scale -- fattree 10000     # k = 16 fat-tree, TCP flows
//! ```
//!
//! The peak resident set is read from `/proc/self/status` (`VmHWM`, Linux only); run under
//! `/usr/bin/time -v` for the same figure from outside.
#![allow(missing_docs)]
use std::net::Ipv4Addr;
use std::time::Instant as WallClock;

use netsim::apps::sctp::{SctpApp, SctpAppConfig, SctpRole};
use netsim::apps::tcp::{BulkConfig, SinkConfig, TcpBulk, TcpSink};
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::wire::{PROTO_SCTP, PROTO_TCP};
use netsim::world::{RunResult, WorldBuilder};
use netsim::{Duration, Instant};

#[path = "support/fat_tree.rs"]
mod fat_tree;
use fat_tree::fat_tree;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, default: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default);
    let scenario = args.first().map(String::as_str).unwrap_or("");
    let (label, build_ms, result, wall) = match scenario {
        "tcp" => timed(|| tcp_dumbbell(num(1, 1000), num(2, 10))),
        "sctp" => timed(|| sctp_mesh(num(1, 10_000), num(2, 100), num(3, 10))),
        "fattree" => timed(|| fat_tree_flows(16, num(1, 10_000), num(2, 1))),
        _ => {
            eprintln!("usage: scale tcp FLOWS [SECONDS] | sctp ASSOCIATIONS HOSTS [SECONDS] | fattree FLOWS [SECONDS]");
            std::process::exit(2);
        }
    };
    let events = result.events_processed;
    let hwm = peak_rss_kib();
    println!("scenario: {label}");
    println!("build: {build_ms:.1} ms");
    println!("build+run wall: {:.3} s", wall);
    println!("events: {events}");
    println!("events/s (build+run): {:.0}", events as f64 / wall);
    println!("host packets sent: {}", host_tx_packets(&result));
    println!("peak RSS (VmHWM): {hwm} KiB");
}

/// Runs `f` (which builds a world, reporting its build time, and runs it) and measures it.
fn timed(f: impl FnOnce() -> (String, f64, RunResult)) -> (String, f64, RunResult, f64) {
    let t = WallClock::now();
    let (label, build_ms, r) = f();
    (label, build_ms, r, t.elapsed().as_secs_f64())
}

fn ch(rate: u64, delay: Duration, queue: usize) -> ChannelConfig {
    ChannelConfig {
        rate_bps: rate,
        delay,
        mtu: 1500,
        queue: QueueConfig::DropTail { limit: QueueLimit::Packets(queue) },
        loss: LossConfig::None,
    }
}

/// Host `i`'s access-link subnet 10.(1 + i / 256).(i % 256).0/24: the host is .1, the router .2.
fn access(i: usize, end: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 1 + (i / 256) as u8, (i % 256) as u8, end)
}

/// `flows` TCP NewReno bulk uploads (SACK and timestamps, the defaults), one per host, from
/// hosts behind router R to host D over a 1 Gbit/s, 10 ms bottleneck with a 1,000-packet
/// drop-tail queue (1 Gbit/s, 1 ms access links), starting 1 ms apart.
fn tcp_dumbbell(flows: usize, seconds: usize) -> (String, f64, RunResult) {
    let t = WallClock::now();
    let mut b = WorldBuilder::new(1, Instant::ZERO + Duration::from_secs(seconds as u64));
    let r = b.node("R", NodeKind::Router);
    let d = b.node("D", NodeKind::Host);
    let r_out = b.iface(r, "core", Ipv4Addr::new(10, 0, 0, 1));
    let d_in = b.iface(d, "eth0", Ipv4Addr::new(10, 0, 0, 2));
    let bottleneck = ch(1_000_000_000, Duration::from_millis(10), 1000);
    b.link("bottleneck", r_out, d_in, bottleneck.clone(), bottleneck, 1);
    let sink_cfg = SinkConfig { port: 5001, tcp: tcp::Config::default(), drain_rate: None, seed: 1 };
    let sink = b.agent(d, Box::new(TcpSink::new(sink_cfg, "sink")));
    b.bind_port(sink, PROTO_TCP, 5001);
    let access_ch = ch(1_000_000_000, Duration::from_millis(1), 1000);
    for i in 0..flows {
        let h = b.node(&format!("H{i}"), NodeKind::Host);
        let hi = b.iface(h, "eth0", access(i, 1));
        let ri = b.iface(r, &format!("h{i}"), access(i, 2));
        b.link(&format!("H{i}-R"), hi, ri, access_ch.clone(), access_ch.clone(), 1);
        let flow = b.flow(&format!("tcp{i}"));
        let cfg = BulkConfig {
            src: access(i, 1),
            src_port: 40000,
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dst_port: 5001,
            bytes: None,
            start: Instant::ZERO + Duration::from_millis(i as u64 % 1000),
            tcp: tcp::Config::default(),
            seed: i as u64,
        };
        let agent = b.agent(h, Box::new(TcpBulk::new(cfg, flow, &format!("tcp{i}"))));
        b.bind_port(agent, PROTO_TCP, 40000);
    }
    let world = b.build();
    let build_ms = t.elapsed().as_secs_f64() * 1e3;
    (format!("tcp dumbbell, {flows} flows, {seconds} s"), build_ms, world.run().expect("run"))
}

/// `assocs` SCTP associations between `hosts` hosts on one router (1 Gbit/s, 1 ms links):
/// every host runs a sink on port 5000 and opens `assocs / hosts` associations to the hosts
/// after it (wrapping around), from as many bulk applications (ports 5001, ...) as it takes
/// to reach each peer once per application. Each association sends 10 messages of 1,000
/// bytes, then stays established (heartbeats) until the end; associations start 1 ms apart
/// per host.
fn sctp_mesh(assocs: usize, hosts: usize, seconds: usize) -> (String, f64, RunResult) {
    let t = WallClock::now();
    let mut b = WorldBuilder::new(1, Instant::ZERO + Duration::from_secs(seconds as u64));
    let r = b.node("R", NodeKind::Router);
    let access_ch = ch(1_000_000_000, Duration::from_millis(1), 1000);
    let nodes: Vec<_> = (0..hosts)
        .map(|i| {
            let h = b.node(&format!("H{i}"), NodeKind::Host);
            let hi = b.iface(h, "eth0", access(i, 1));
            let ri = b.iface(r, &format!("h{i}"), access(i, 2));
            b.link(&format!("H{i}-R"), hi, ri, access_ch.clone(), access_ch.clone(), 1);
            h
        })
        .collect();
    let per_host = assocs / hosts;
    let peers = hosts - 1;
    for (i, &h) in nodes.iter().enumerate() {
        let sink = SctpAppConfig {
            name: format!("sink{i}"),
            addrs: vec![access(i, 1)],
            port: 5000,
            config: sctp::Config::default(),
            role: SctpRole::Sink { drain_rate: None },
            seed: 2 * i as u64,
            flows: Vec::new(),
            handover: Default::default(),
            handover_trigger: Default::default(),
        };
        let agent = b.agent(h, Box::new(SctpApp::new(sink)));
        b.bind_port(agent, PROTO_SCTP, 5000);
        let mut j = 0;
        let mut app = 0;
        while j < per_host {
            let n = (per_host - j).min(peers);
            let mut to: Vec<Vec<Ipv4Addr>> = (0..n).map(|k| vec![access((i + 1 + k) % hosts, 1)]).collect();
            let first = to.remove(0);
            let bulk = SctpAppConfig {
                name: format!("bulk{i}.{app}"),
                addrs: vec![access(i, 1)],
                port: 5001 + app as u16,
                config: sctp::Config::default(),
                role: SctpRole::Bulk {
                    peer: first,
                    more_peers: to,
                    peer_port: 5000,
                    start: Instant::ZERO + Duration::from_millis((i + app * hosts) as u64),
                    bytes: Some(10_000),
                    message_size: 1000,
                    streams: 1,
                    unordered: false,
                },
                seed: 2 * i as u64 + 1 + 1000 * app as u64,
                flows: Vec::new(),
                handover: Default::default(),
                handover_trigger: Default::default(),
            };
            let agent = b.agent(h, Box::new(SctpApp::new(bulk)));
            b.bind_port(agent, PROTO_SCTP, 5001 + app as u16);
            j += n;
            app += 1;
        }
    }
    let world = b.build();
    let build_ms = t.elapsed().as_secs_f64() * 1e3;
    let label = format!("sctp mesh, {} associations, {hosts} hosts, {seconds} s", per_host * hosts);
    (label, build_ms, world.run().expect("run"))
}

/// The k-ary fat-tree of `support/fat_tree.rs` (as `benches/routing.rs`: 10 Gbit/s, 1 us links) with
/// `flows` TCP transfers of 64 KiB: flow `f` from host `f % H` to host `(f * 37 + H / 2) % H`
/// (another pod for most), starting `f` microseconds in; every host runs a sink on port 5001.
fn fat_tree_flows(k: usize, flows: usize, seconds: usize) -> (String, f64, RunResult) {
    let t = WallClock::now();
    let mut b = WorldBuilder::new(1, Instant::ZERO + Duration::from_secs(seconds as u64));
    let link_ch = ch(10_000_000_000, Duration::from_micros(1), 100);
    let hosts = fat_tree(&mut b, k, &link_ch);
    let n = hosts.len();
    for (i, &(h, _)) in hosts.iter().enumerate() {
        let cfg = SinkConfig { port: 5001, tcp: tcp::Config::default(), drain_rate: None, seed: i as u64 };
        let sink = b.agent(h, Box::new(TcpSink::new(cfg, &format!("sink{i}"))));
        b.bind_port(sink, PROTO_TCP, 5001);
    }
    for f in 0..flows {
        let (src, dst) = (f % n, (f * 37 + n / 2) % n);
        let dst = if dst == src { (dst + 1) % n } else { dst };
        let port = 40000 + (f / n) as u16;
        let flow = b.flow(&format!("tcp{f}"));
        let cfg = BulkConfig {
            src: hosts[src].1,
            src_port: port,
            dst: hosts[dst].1,
            dst_port: 5001,
            bytes: Some(64 * 1024),
            start: Instant::ZERO + Duration::from_micros(f as u64),
            tcp: tcp::Config::default(),
            seed: f as u64,
        };
        let agent = b.agent(hosts[src].0, Box::new(TcpBulk::new(cfg, flow, &format!("tcp{f}"))));
        b.bind_port(agent, PROTO_TCP, port);
    }
    let world = b.build();
    let build_ms = t.elapsed().as_secs_f64() * 1e3;
    (
        format!("fat-tree k={k}, {n} hosts, {flows} TCP flows of 64 KiB, {seconds} s"),
        build_ms,
        world.run().expect("run"),
    )
}

/// Packets sent by hosts' interfaces (every segment or packet an endpoint sends, once).
fn host_tx_packets(r: &RunResult) -> u64 {
    r.scalars
        .rows
        .iter()
        .filter(|s| {
            let node = s.entity.split('/').next().unwrap_or("");
            s.kind == "iface"
                && s.metric == "tx_packets"
                && (node.starts_with('H') || node == "D" || (node.starts_with('p') && node.contains('h')))
        })
        .map(|s| s.value as u64)
        .sum()
}

/// The process's peak resident set in KiB (`VmHWM`), 0 where `/proc` is missing.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}
