//! WLAN throughput: MAC frames (data and ACK) per second of wall time with 30 saturated
//! stations at 54 Mbit/s uploading 1500-byte UDP datagrams through one AP to a wired sink for
//! 5 simulated seconds (IEEE 802.11g DCF, no RTS/CTS, drop-tail 50 interface queues).
#![allow(missing_docs)] // criterion generates the entry points
use std::net::Ipv4Addr;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netsim::apps::udp::{CbrConfig, UdpCbr, UdpSink};
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, IfaceAddr, NodeKind};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::wire::PROTO_UDP;
use netsim::wlan::{self, Position, RadioConfig, Rate, RateControl, Role};
use netsim::world::{RunResult, WorldBuilder};
use netsim::{Duration, Instant};

const STATIONS: usize = 30;

fn world() -> WorldBuilder {
    let mut b = WorldBuilder::new(1, Instant(5_000_000_000));
    let ch = b.wlan_channel("bss", wlan::ChannelConfig::default());
    let ap = b.node("ap", NodeKind::Router);
    let sink = b.node("sink", NodeKind::Host);
    let ap_radio = RadioConfig::new(Role::AccessPoint, Position::default());
    let ap_if = b.wlan_iface(ap, "wlan0", Some(IfaceAddr::new(Ipv4Addr::new(10, 0, 1, 1))), ch, &ap_radio).expect("AP");
    let wired = ChannelConfig {
        rate_bps: 1_000_000_000,
        delay: Duration::from_micros(100),
        mtu: 1500,
        queue: QueueConfig::DropTail { limit: QueueLimit::Packets(1000) },
        loss: LossConfig::None,
    };
    let a = b.iface(ap, "eth0", Ipv4Addr::new(10, 0, 2, 1));
    let s = b.iface(sink, "eth0", Ipv4Addr::new(10, 0, 2, 2));
    b.link("uplink", a, s, wired.clone(), wired, 1);
    let sink_agent = b.agent(sink, Box::new(UdpSink::new("sink")));
    b.bind_port(sink_agent, PROTO_UDP, 9);
    for i in 0..STATIONS {
        let node = b.node(&format!("sta{i}"), NodeKind::Host);
        let addr = Ipv4Addr::new(10, 0, 1, 10 + i as u8);
        let angle = i as f64 * std::f64::consts::TAU / STATIONS as f64;
        let mut radio =
            RadioConfig::new(Role::Station { ap: ap_if }, Position::new(5.0 * angle.cos(), 5.0 * angle.sin()));
        radio.rate = RateControl::Fixed(Rate::R54);
        b.wlan_iface(node, "wlan0", Some(IfaceAddr::new(addr)), ch, &radio).expect("station");
        let flow = b.flow(&format!("up{i}"));
        // 1.2 Mbit/s each, 36 Mbit/s in all: half again the channel's saturation throughput
        // (about 23 Mbit/s), so every queue stays full.
        let cfg = CbrConfig {
            src: addr,
            src_port: 1000,
            dst: Ipv4Addr::new(10, 0, 2, 2),
            dst_port: 9,
            rate_bps: 1_200_000,
            payload: 1472,
            start: Instant::ZERO,
            stop: Instant::MAX,
        };
        b.agent(node, Box::new(UdpCbr::new(cfg, flow)));
    }
    b
}

/// MAC frames sent on the channel (every data frame, including retransmissions, and every ACK).
fn frames(r: &RunResult) -> u64 {
    r.scalars.get("wlan", "bss", "frames").expect("channel frames") as u64
}

fn wlan(c: &mut Criterion) {
    let r = world().build().run().expect("run");
    let n = frames(&r);
    let acked: f64 =
        (0..STATIONS).map(|i| r.scalars.get("iface", &format!("sta{i}/wlan0"), "mac_tx_acked").unwrap_or(0.0)).sum();
    assert!(n > 10_000 && acked > 3_000.0, "{n} frames, {acked} acknowledged");
    eprintln!(
        "wlan: {n} MAC frames ({acked} data frames acknowledged), {} events: {:.2} events per frame",
        r.events_processed,
        r.events_processed as f64 / n as f64
    );
    let mut g = c.benchmark_group("wlan");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n));
    g.bench_function("saturated_30_stations_54mbps_frames", |b| b.iter(|| world().build().run().expect("run")));
    g.finish();
}

criterion_group!(benches, wlan);
criterion_main!(benches);
