//! TCP through the simulator: N senders behind one router share a drop-tail bottleneck.
#![allow(missing_docs, clippy::unwrap_used)]

use std::net::Ipv4Addr;

use netsim::apps::tcp::{BulkConfig, SinkConfig, TcpBulk, TcpSink};
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::wire::PROTO_TCP;
use netsim::world::{RunResult, WorldBuilder};
use netsim::{Duration, Instant};

fn ch(rate: u64, delay_ms: u64, queue: usize) -> ChannelConfig {
    ChannelConfig {
        rate_bps: rate,
        delay: Duration::from_millis(delay_ms),
        mtu: 1500,
        queue: QueueConfig::DropTail { limit: QueueLimit::Packets(queue) },
        loss: LossConfig::None,
    }
}

fn dumbbell(n: usize, bottleneck: u64, secs: u64, cc: &str, bytes: Option<u64>) -> RunResult {
    let mut b = WorldBuilder::new(1, Instant::ZERO + Duration::from_secs(secs));
    let r = b.node("R", NodeKind::Router);
    let d = b.node("D", NodeKind::Host);
    let r_out = b.iface(r, "eth0", Ipv4Addr::new(10, 9, 0, 1));
    let d_in = b.iface(d, "eth0", Ipv4Addr::new(10, 9, 0, 2));
    b.link("R-D", r_out, d_in, ch(bottleneck, 10, 100), ch(bottleneck, 10, 100), 1);
    let sink = b.agent(
        d,
        Box::new(TcpSink::new(
            SinkConfig { port: 5001, tcp: tcp::Config::default(), drain_rate: None, seed: 7 },
            "sink",
        )),
    );
    b.bind_port(sink, PROTO_TCP, 5001);
    let mut flows = Vec::new();
    for i in 0..n {
        let h = b.node(&format!("H{i}"), NodeKind::Host);
        let a = Ipv4Addr::new(10, 1, i as u8, 1);
        let hi = b.iface(h, "eth0", a);
        let ri = b.iface(r, &format!("eth{}", i + 1), Ipv4Addr::new(10, 1, i as u8, 2));
        b.link(&format!("H{i}-R"), hi, ri, ch(10 * bottleneck, 5, 1000), ch(10 * bottleneck, 5, 1000), 1);
        let name = format!("tcp{i}");
        let flow = b.flow(&name);
        flows.push(flow);
        let cfg = BulkConfig {
            src: a,
            src_port: 40000,
            dst: Ipv4Addr::new(10, 9, 0, 2),
            dst_port: 5001,
            bytes,
            start: Instant::ZERO + Duration::from_millis(i as u64 * 7),
            tcp: tcp::Config { cc: tcp::CcAlgorithm::from_name(cc).unwrap(), ..tcp::Config::default() },
            seed: i as u64,
        };
        let agent = b.agent(h, Box::new(TcpBulk::new(cfg, flow, &name)));
        b.bind_port(agent, PROTO_TCP, 40000);
    }
    b.group("all", flows);
    b.sample_every(Duration::from_millis(100));
    b.build().run().unwrap()
}

#[test]
fn one_flow_through_the_driver_fills_the_bottleneck() {
    let r = dumbbell(1, 10_000_000, 30, "sack", None);
    let g = r.scalars.get("flow", "tcp0", "goodput").unwrap();
    assert!(g > 0.93 * 10e6, "{g}");
    assert_eq!(r.scalars.get("tcp", "tcp0", "malformed"), Some(0.0));
    assert!(r.scalars.get("tcp", "tcp0", "min_rtt").unwrap() >= 0.030);
    // The sink measured record delays: at least the one-way propagation of 15 ms.
    assert!(r.scalars.get("flow", "tcp0", "delay_min").unwrap() >= 0.015);
    let names: Vec<_> = r.timeseries.names.iter().filter(|n| n.kind == "tcp").map(|n| n.metric.as_str()).collect();
    assert_eq!(names, ["cwnd", "ssthresh", "srtt", "rto", "in_flight"]);
}

#[test]
fn finite_upload_completes_and_reports_its_completion_time() {
    let r = dumbbell(3, 10_000_000, 30, "cubic", Some(2_000_000));
    for i in 0..3 {
        let name = format!("tcp{i}");
        assert_eq!(r.scalars.get("flow", &name, "rx_bytes"), Some(2_000_000.0), "{name}");
        let done = r.scalars.get("tcp", &name, "completion_time").unwrap();
        // Three flows of 16 Mbit share 10 Mbit/s: about 4.8 s for all.
        assert!(done > 1.6 && done < 8.0, "{name}: {done}");
    }
    assert_eq!(r.scalars.get("group", "all", "flows"), Some(3.0));
    assert_eq!(r.scalars.get("app", "sink", "connections"), Some(3.0));
}
