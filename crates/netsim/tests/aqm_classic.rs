//! The classic AQMs (RED, FRED, BLUE, REM, PI) at a bottleneck shared by long-lived TCP flows
//! (and a UDP flow that does not respond to loss): each must do what its algorithm says.
//!
//! Topology: H0..H(n-1) --(100 Mbit/s, 5 ms)-- R --(10 Mbit/s, 20 ms, the discipline)-- D.
#![allow(clippy::unwrap_used, missing_docs)]

use std::net::Ipv4Addr;

use netsim::apps::tcp::{BulkConfig, SinkConfig, TcpBulk, TcpSink};
use netsim::apps::udp::{CbrConfig, UdpCbr, UdpSink};
use netsim::ids::IfaceId;
use netsim::loss::LossConfig;
use netsim::network::{ChannelConfig, NodeKind};
use netsim::queue::{FredConfig, PiConfig, QueueConfig, QueueLimit, QueueStat, RedConfig};
use netsim::wire::{PROTO_TCP, PROTO_UDP};
use netsim::world::{World, WorldBuilder};
use netsim::{Duration, Instant};

const BOTTLENECK: u64 = 10_000_000;

fn ch(rate: u64, delay_ms: u64, queue: QueueConfig) -> ChannelConfig {
    ChannelConfig { rate_bps: rate, delay: Duration::from_millis(delay_ms), mtu: 1500, queue, loss: LossConfig::None }
}

/// `n` TCP uploads (and a UDP CBR flow of `udp_bps` if given) to D through R; the R -> D
/// direction runs `queue`. Returns the world and R's interface towards D.
fn dumbbell(queue: QueueConfig, n: usize, udp_bps: Option<u64>, secs: u64, seed: u64) -> (World, IfaceId) {
    let mut b = WorldBuilder::new(seed, Instant::ZERO + Duration::from_secs(secs));
    let r = b.node("R", NodeKind::Router);
    let d = b.node("D", NodeKind::Host);
    let r_out = b.iface(r, "eth0", Ipv4Addr::new(10, 9, 0, 1));
    let d_in = b.iface(d, "eth0", Ipv4Addr::new(10, 9, 0, 2));
    let drop_tail = QueueConfig::DropTail { limit: QueueLimit::Packets(1000) };
    b.link("R-D", r_out, d_in, ch(BOTTLENECK, 20, queue), ch(BOTTLENECK, 20, drop_tail.clone()), 1);
    let sink = b.agent(
        d,
        Box::new(TcpSink::new(
            SinkConfig { port: 5001, tcp: tcp::Config::default(), drain_rate: None, seed: 7 },
            "sink",
        )),
    );
    b.bind_port(sink, PROTO_TCP, 5001);
    let hosts = n + usize::from(udp_bps.is_some());
    for i in 0..hosts {
        let h = b.node(&format!("H{i}"), NodeKind::Host);
        let a = Ipv4Addr::new(10, 1, i as u8, 1);
        let hi = b.iface(h, "eth0", a);
        let ri = b.iface(r, &format!("eth{}", i + 1), Ipv4Addr::new(10, 1, i as u8, 2));
        let access = ch(100_000_000, 5 + i as u64, drop_tail.clone());
        b.link(&format!("H{i}-R"), hi, ri, access.clone(), access, 1);
        if i < n {
            let name = format!("tcp{i}");
            let flow = b.flow(&name);
            let cfg = BulkConfig {
                src: a,
                src_port: 40000,
                dst: Ipv4Addr::new(10, 9, 0, 2),
                dst_port: 5001,
                bytes: None,
                start: Instant::ZERO + Duration::from_millis(i as u64 * 37),
                tcp: tcp::Config { cc: tcp::CcAlgorithm::from_name("sack").unwrap(), ..tcp::Config::default() },
                seed: i as u64,
            };
            let agent = b.agent(h, Box::new(TcpBulk::new(cfg, flow, &name)));
            b.bind_port(agent, PROTO_TCP, 40000);
        } else if let Some(rate_bps) = udp_bps {
            let flow = b.flow("udp");
            let cfg = CbrConfig {
                src: a,
                src_port: 1000,
                dst: Ipv4Addr::new(10, 9, 0, 2),
                dst_port: 9,
                rate_bps,
                payload: 1000 - 28,
                start: Instant::ZERO,
                stop: Instant::MAX,
            };
            b.agent(h, Box::new(UdpCbr::new(cfg, flow)));
            let sink = b.agent(d, Box::new(UdpSink::new("udp-sink")));
            b.bind_port(sink, PROTO_UDP, 9);
        }
    }
    (b.build(), r_out)
}

fn stats(world: &World, iface: IfaceId) -> Vec<QueueStat> {
    world.network().tx_channel(iface).unwrap().queue().stats()
}

fn stat(stats: &[QueueStat], name: &str) -> f64 {
    stats.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no statistic {name}: {stats:?}")).value
}

#[test]
fn red_average_settles_between_the_thresholds_and_drops_follow_its_drop_function() {
    let (min_th, max_th, max_p) = (15.0, 45.0, 0.1);
    let cfg = RedConfig {
        bytes: false,
        min_th: Some(min_th),
        max_th: Some(max_th),
        w_q: Some(0.002),
        max_p,
        limit: QueueLimit::Packets(200),
        ..RedConfig::default()
    };
    let (mut world, r_out) = dumbbell(QueueConfig::Red(cfg), 8, None, 60, 1);
    // One-second windows after the start (slow start, the average climbing from zero). In each
    // the mean of the average over its arrivals, and the early drops against what RED's drop
    // function says for that average: p_b, spread by `wait` (gaps uniform between 1/p_b and
    // 2/p_b packets), a drop every 1.5/p_b - 0.5 packets.
    world.run_until(Instant::ZERO + Duration::from_secs(10)).unwrap();
    let mut before = stats(&world, r_out);
    let (mut windows, mut settled) = (0, 0);
    let (mut early, mut expected, mut arrivals) = (0.0, 0.0, 0.0);
    for t in 11..=60 {
        world.run_until(Instant::ZERO + Duration::from_secs(t)).unwrap();
        let now = stats(&world, r_out);
        let diff = |name: &str| stat(&now, name) - stat(&before, name);
        let n = diff("red_arrivals");
        let sum = |s: &[QueueStat]| stat(s, "red_avg_queue_mean") * stat(s, "red_arrivals");
        let avg = (sum(&now) - sum(&before)) / n;
        windows += 1;
        // A window with a forced or overflow drop is a transient (a burst of a sender's); the
        // average left the band there.
        if avg > min_th && avg < max_th && diff("red_forced_drops") + diff("red_overflow_drops") == 0.0 {
            settled += 1;
            let p_b = max_p * (avg - min_th) / (max_th - min_th);
            expected += n / (1.5 / p_b - 0.5);
            early += diff("red_early_drops");
            arrivals += n;
        }
        before = now;
    }
    assert!(settled * 10 >= windows * 7, "the average was between the thresholds in {settled} of {windows} windows");
    assert!(
        (early / expected - 1.0).abs() < 0.15,
        "{early} early drops of {arrivals} arrivals vs {expected:.0} from RED's drop function"
    );
    // The TCP flows kept the link busy.
    let r = world.run().unwrap();
    let util = r.scalars.get("iface", "R/eth0", "utilization").unwrap();
    assert!(util > 0.9, "{util}");
}

#[test]
fn adaptive_red_moves_max_p_until_the_average_sits_in_its_target_band() {
    let (min_th, max_th) = (15.0, 45.0);
    // max_p far too small for 8 flows: plain RED's average rises towards the gentle region.
    let cfg = |adaptive| RedConfig {
        bytes: false,
        min_th: Some(min_th),
        max_th: Some(max_th),
        w_q: Some(0.002),
        max_p: 0.005,
        adaptive,
        limit: QueueLimit::Packets(300),
        ..RedConfig::default()
    };
    let late_average = |adaptive| {
        let (mut world, r_out) = dumbbell(QueueConfig::Red(cfg(adaptive)), 8, None, 60, 4);
        world.run_until(Instant::ZERO + Duration::from_secs(30)).unwrap();
        let a = stats(&world, r_out);
        world.run_until(Instant::ZERO + Duration::from_secs(60)).unwrap();
        let b = stats(&world, r_out);
        let sum = |s: &[QueueStat]| stat(s, "red_avg_queue_mean") * stat(s, "red_arrivals");
        ((sum(&b) - sum(&a)) / (stat(&b, "red_arrivals") - stat(&a, "red_arrivals")), stat(&b, "red_max_p"))
    };
    let (plain, plain_max_p) = late_average(false);
    let (adapted, max_p) = late_average(true);
    // Adaptive RED's target: the middle fifth of the band, 27..33 packets.
    let (low, high) = (min_th + 0.4 * (max_th - min_th), max_th - 0.4 * (max_th - min_th));
    assert_eq!(plain_max_p, 0.005);
    assert!(plain > high + 3.0, "plain RED: average {plain:.1}");
    assert!(max_p > 0.005, "max_p {max_p}");
    assert!(adapted > low - 3.0 && adapted < high + 3.0, "adaptive RED: average {adapted:.1} (max_p {max_p:.4})");
}

#[test]
fn pi_queue_converges_to_its_reference() {
    let q_ref = 60.0;
    let cfg = PiConfig { q_ref, limit: QueueLimit::Packets(300), ..PiConfig::default() };
    let (mut world, r_out) = dumbbell(QueueConfig::Pi(cfg), 20, None, 120, 2);
    // Mean of the controller's samples of the queue over [from, to) seconds.
    let mut at = |t: u64| {
        world.run_until(Instant::ZERO + Duration::from_secs(t)).unwrap();
        let s = stats(&world, r_out);
        (stat(&s, "pi_sampled_queue_mean") * stat(&s, "pi_samples"), stat(&s, "pi_samples"), stat(&s, "pi_probability"))
    };
    let (s10, n10, p10) = at(10);
    let (s60, n60, _) = at(60);
    let (s120, n120, p120) = at(120);
    let first = s10 / n10;
    let last = (s120 - s60) / (n120 - n60);
    // Slow start fills the buffer far beyond the reference; the integral action then raises the
    // drop probability until the queue sits at q_ref.
    assert!(first > 2.0 * q_ref, "first 10 s: {first:.1}");
    assert!((last - q_ref).abs() < 0.15 * q_ref, "last 60 s: queue {last:.1} vs reference {q_ref}");
    assert!(p120 > p10, "{p10} -> {p120}");
}

/// UDP goodput of a 5 Mbit/s CBR flow beside 4 TCP flows on 10 Mbit/s (fair share 2 Mbit/s).
fn udp_share(queue: QueueConfig) -> f64 {
    let (world, _) = dumbbell(queue, 4, Some(5_000_000), 40, 3);
    let r = world.run().unwrap();
    r.scalars.get("flow", "udp", "goodput").unwrap()
}

#[test]
fn fred_holds_a_non_responsive_flow_near_its_fair_share_where_red_does_not() {
    let fair = BOTTLENECK as f64 / 5.0;
    let red = RedConfig {
        bytes: false,
        min_th: Some(10.0),
        max_th: Some(30.0),
        w_q: Some(0.002),
        max_p: 0.02,
        ..RedConfig::default()
    };
    let with_red = udp_share(QueueConfig::Red(red));
    let with_fred = udp_share(QueueConfig::Fred(FredConfig::default()));
    assert!(with_red > 2.0 * fair, "RED: UDP got {with_red:.0} bit/s, fair share {fair:.0}");
    assert!(with_fred < 1.5 * fair, "FRED: UDP got {with_fred:.0} bit/s, fair share {fair:.0}");
}

#[test]
fn same_seed_gives_identical_statistics() {
    let kinds = [
        QueueConfig::Red(RedConfig::default()),
        QueueConfig::Fred(FredConfig::default()),
        QueueConfig::Blue(Default::default()),
        QueueConfig::Rem(Default::default()),
        QueueConfig::Pi(PiConfig::default()),
    ];
    for q in kinds {
        let run = || {
            let (mut world, r_out) = dumbbell(q.clone(), 4, Some(3_000_000), 5, 11);
            world.run_until(Instant::ZERO + Duration::from_secs(5)).unwrap();
            let s = stats(&world, r_out);
            let r = world.run().unwrap();
            (format!("{s:?}"), format!("{:?}", r.scalars))
        };
        let (a, b) = (run(), run());
        assert_eq!(a, b, "{}", q.kind());
        // Something happened: packets were dropped early or marked.
        assert!(a.0.contains("early_drops") && !a.0.contains("early_drops\", value: 0.0"), "{}: {}", q.kind(), a.0);
    }
}
