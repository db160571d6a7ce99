//! WLAN management on whole worlds: beacons at their TBTTs, the association exchange's exact
//! airtime, a station walking from one AP to another (scan below -80 dBm, handover below -90
//! dBm at the instants the propagation model predicts, new address, interface events, traffic
//! on the new address), two interfaces of one node roaming independently, determinism.
#![allow(missing_docs, clippy::unwrap_used)]

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use netsim::agent::{Agent, Ctx};
use netsim::event::IfaceEvent;
use netsim::fault::FaultAction;
use netsim::ids::{IfaceId, NodeId};
use netsim::loss::LossConfig;
use netsim::mobility::{Mobility, Waypoints};
use netsim::network::{ChannelConfig, IfaceAddr, NodeKind};
use netsim::queue::{QueueConfig, QueueLimit};
use netsim::recorder::{EventLog, EventTable};
use netsim::wire::{udp_datagram, Ipv4Fields, Packet, PacketMeta, UdpView, PROTO_UDP};
use netsim::wlan::mgmt::MgmtKind;
use netsim::wlan::sme::{RoamConfig, ScanMode};
use netsim::wlan::{self, phy, Position, RadioConfig, Rate, Role};
use netsim::world::{RunResult, WorldBuilder};
use netsim::{Duration, Instant};

const BEACON: Duration = Duration(102_400_000);

fn wired() -> ChannelConfig {
    ChannelConfig {
        rate_bps: 100_000_000,
        delay: Duration::from_millis(1),
        mtu: 1500,
        queue: QueueConfig::DropTail { limit: QueueLimit::Packets(100) },
        loss: LossConfig::None,
    }
}

fn ap_config(x: f64) -> RadioConfig {
    let mut c = RadioConfig::new(Role::AccessPoint, Position::new(x, 0.0));
    c.beacon_interval = Some(BEACON);
    c
}

/// Interface events seen by an agent on the station's node, and a datagram to the wired host
/// every 100 ms from the interface's current address (if it has one).
#[derive(Default)]
struct Seen {
    events: Vec<(Instant, IfaceId, IfaceEvent)>,
}

struct Mobile {
    seen: Arc<Mutex<Seen>>,
    addr: Option<Ipv4Addr>,
    dst: Ipv4Addr,
}

impl Agent for Mobile {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        ctx.timer_at(Instant::ZERO + Duration::from_millis(100), 0).unwrap();
    }
    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        if let Some(src) = self.addr {
            let seg = udp_datagram(src, self.dst, 5000, 9, &token.to_be_bytes());
            let fields = Ipv4Fields { src, dst: self.dst, protocol: PROTO_UDP, ident: token as u16, ttl: 64 };
            ctx.send(Packet::ipv4(fields, &seg, PacketMeta { flow: 0, uid: token }));
        }
        ctx.timer_at(ctx.now() + Duration::from_millis(100), token + 1).unwrap();
    }
    fn on_iface_event(&mut self, ctx: &mut Ctx<'_>, iface: IfaceId, event: IfaceEvent) {
        match event {
            IfaceEvent::AddressAdded(a) => self.addr = Some(a),
            IfaceEvent::AddressRemoved(_) => self.addr = None,
            _ => {}
        }
        self.seen.lock().unwrap().events.push((ctx.now(), iface, event));
    }
}

/// Records the source address of every datagram received.
struct Sink {
    got: Arc<Mutex<Vec<(Instant, Ipv4Addr)>>>,
}

impl Agent for Sink {
    fn on_packet(&mut self, ctx: &mut Ctx<'_>, pkt: Packet) {
        let Some(ip) = pkt.ip() else { return };
        if UdpView::new(ip.payload()).is_some() {
            self.got.lock().unwrap().push((ctx.now(), ip.src()));
        }
    }
}

fn steps(t: &EventTable, entity: &str, step: &str) -> Vec<f64> {
    (0..t.kind.len())
        .filter(|&i| t.kind[i] == "wlan" && t.entity[i] == entity && t.detail[i].starts_with(&format!("step={step} ")))
        .map(|i| t.time_ns[i] as f64 * 1e-9)
        .collect()
}

/// Distance at which the default channel model (log-distance, exponent 3, free space at 1 m,
/// 16.02 dBm) gives `rss` dBm on channel 1.
fn distance_for(rss: f64) -> f64 {
    let f = 2412e6;
    let l0 = 20.0 * (4.0 * std::f64::consts::PI * f / 299_792_458.0).log10();
    let tx = 10.0 * 40f64.log10();
    10f64.powf((tx - l0 - rss) / 30.0)
}

/// An AP alone with a static station: beacon k (k >= 1) starts exactly at its TBTT k * 102.4 ms
/// (the medium idle, the post-backoff long over), lasts the 71-byte frame at 6 Mbit/s, and the
/// station receives each one at its end. The first goes DIFS after time zero.
#[test]
fn beacons_at_each_tbtt() {
    let mut b = WorldBuilder::new(1, Instant::ZERO + Duration::from_secs(1));
    let ch = b.wlan_channel("c1", wlan::ChannelConfig::default());
    let ap = b.node("ap", NodeKind::Router);
    let ap_if =
        b.wlan_iface(ap, "wlan0", Some(IfaceAddr::new(Ipv4Addr::new(10, 0, 1, 1))), ch, &ap_config(0.0)).unwrap();
    let sta = b.node("sta", NodeKind::Host);
    let cfg = RadioConfig::new(Role::Station { ap: ap_if }, Position::new(10.0, 0.0));
    b.wlan_iface(sta, "wlan0", Some(IfaceAddr::new(Ipv4Addr::new(10, 0, 1, 2))), ch, &cfg).unwrap();
    let mut w = b.build();
    let dur = phy::frame_duration(MgmtKind::Beacon.bytes(), Rate::R6);
    assert_eq!(dur, Duration::from_micros(126));
    let count = |w: &netsim::world::World| {
        let m = &w.network().wlans[0];
        (m.mgmt_counts(0).tx_of(MgmtKind::Beacon), m.mgmt_counts(1).rx_of(MgmtKind::Beacon))
    };
    for k in 1..9u64 {
        let tbtt = Instant(BEACON.0 * k);
        w.run_until(Instant(tbtt.0 - 1)).unwrap();
        assert_eq!(count(&w), (k, k), "before TBTT {k}");
        w.run_until(tbtt).unwrap();
        assert_eq!(count(&w).0, k + 1, "at TBTT {k}");
        w.run_until(Instant((tbtt + dur).0 - 1)).unwrap();
        assert_eq!(count(&w).1, k, "during beacon {k}");
        w.run_until(tbtt + dur).unwrap();
        assert_eq!(count(&w).1, k + 1, "end of beacon {k}");
    }
    let r = w.run().unwrap();
    assert_eq!(r.scalars.get("iface", "ap/wlan0", "mgmt_tx_beacon"), Some(10.0));
}

/// A roaming station with a one-channel passive scan of 50 ms joins the AP at the end of it:
/// with CWmin = 0 (no backoff) the four frames go out DIFS after each other's ACK, so the
/// association completes at exactly
/// 50 ms + AuthReq + SIFS + ACK + DIFS + AuthResp + SIFS + ACK + DIFS + AssocReq + SIFS + ACK
/// + DIFS + AssocResp.
#[test]
fn association_exchange_takes_its_airtime() {
    let mut b = WorldBuilder::new(3, Instant::ZERO + Duration::from_millis(80));
    b.trace(Box::new(EventLog::new(vec!["wlan".into()])));
    let ch = b.wlan_channel("c1", wlan::ChannelConfig::default());
    let ap = b.node("ap", NodeKind::Router);
    let mut apc = ap_config(0.0);
    apc.cw_min = 0;
    b.wlan_iface(ap, "wlan0", Some(IfaceAddr::new(Ipv4Addr::new(10, 0, 1, 1))), ch, &apc).unwrap();
    let sta = b.node("sta", NodeKind::Host);
    let mut cfg = RadioConfig::new(Role::Roaming, Position::new(10.0, 0.0));
    cfg.cw_min = 0;
    let roam = RoamConfig { scan: ScanMode::Passive { dwell: Duration::from_millis(50) }, ..RoamConfig::default() };
    b.roaming_wlan_iface(sta, "wlan0", &[ch], &cfg, roam).unwrap();
    let r = b.build().run().unwrap();
    let t = phy::Timing::default();
    let d = |k: MgmtKind| phy::frame_duration(k.bytes(), Rate::R6);
    let ack = t.sifs + phy::frame_duration(phy::ACK_BYTES, Rate::R6);
    let expect = Duration::from_millis(50)
        + d(MgmtKind::Auth { seq: 1 })
        + ack
        + t.difs
        + d(MgmtKind::Auth { seq: 2 })
        + ack
        + t.difs
        + d(MgmtKind::AssocRequest)
        + ack
        + t.difs
        + d(MgmtKind::AssocResponse);
    let at = steps(&r.events, "sta/wlan0", "associated");
    assert_eq!(at.len(), 1);
    assert!((at[0] - expect.as_secs_f64()).abs() < 1e-12, "{} vs {}", at[0], expect.as_secs_f64());
    assert_eq!(steps(&r.events, "sta/wlan0", "auth"), vec![0.05]);
    let s = |e: &str, m: &str| r.scalars.get("iface", e, m).unwrap_or(0.0);
    assert_eq!(s("sta/wlan0@c1", "mgmt_tx_auth"), 1.0);
    assert_eq!(s("sta/wlan0@c1", "mgmt_tx_assoc_req"), 1.0);
    assert_eq!(s("ap/wlan0", "mgmt_tx_assoc_resp"), 1.0);
    assert_eq!(s("sta/wlan0", "wlan_associations"), 1.0);
}

struct Walk {
    /// APs: (x, channel index, subnet third octet).
    aps: Vec<(f64, usize, u8)>,
    /// The mobile's interfaces, each with its scan list (channel indices).
    ifaces: Vec<Vec<usize>>,
    from: f64,
    to: f64,
    speed: f64,
    seconds: u64,
    seed: u64,
    /// An AP's interface taken down and brought back: (AP index, down at, up at), seconds.
    ap_outage: Option<(usize, f64, f64)>,
}

struct Walked {
    r: RunResult,
    seen: Vec<(Instant, IfaceId, IfaceEvent)>,
    got: Vec<(Instant, Ipv4Addr)>,
    ifaces: Vec<IfaceId>,
}

impl Walk {
    /// APs (routers) each on its own subnet 10.0.<n>.0/24, all wired to one router `core`,
    /// which a wired host `srv` (10.9.0.2) hangs off. The mobile walks along the x axis.
    fn run(&self) -> Walked {
        let mut b = WorldBuilder::new(self.seed, Instant::ZERO + Duration::from_secs(self.seconds));
        b.trace(Box::new(EventLog::new(vec!["wlan".into()])));
        let chans = [b.wlan_channel("c1", wlan::ChannelConfig::default()), {
            let c = wlan::ChannelConfig { channel: 6, ..wlan::ChannelConfig::default() };
            b.wlan_channel("c6", c)
        }];
        let core = b.node("core", NodeKind::Router);
        for (i, &(x, c, net)) in self.aps.iter().enumerate() {
            let ap = b.node(&format!("ap{i}"), NodeKind::Router);
            let addr = IfaceAddr::new(Ipv4Addr::new(10, 0, net, 1));
            let w = b.wlan_iface(ap, "wlan0", Some(addr), chans[c], &ap_config(x)).unwrap();
            if let Some((_, down, up)) = self.ap_outage.filter(|o| o.0 == i) {
                b.fault(Instant::ZERO + Duration::from_secs_f64(down), FaultAction::IfaceDown(w));
                b.fault(Instant::ZERO + Duration::from_secs_f64(up), FaultAction::IfaceUp(w));
            }
            let a = b.iface(ap, "eth0", Ipv4Addr::new(10, 100, i as u8, 1));
            let z = b.iface(core, &format!("eth{i}"), Ipv4Addr::new(10, 100, i as u8, 2));
            b.link(&format!("l{i}"), a, z, wired(), wired(), 1);
        }
        let srv = b.node("srv", NodeKind::Host);
        let s = b.iface(srv, "eth0", Ipv4Addr::new(10, 9, 0, 2));
        let z = b.iface(core, "eth9", Ipv4Addr::new(10, 9, 0, 1));
        b.link("lsrv", s, z, wired(), wired(), 1);
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = b.agent(srv, Box::new(Sink { got: got.clone() }));
        b.bind_port(sink, PROTO_UDP, 9);
        let mob: NodeId = b.node("mob", NodeKind::Host);
        let walk = Waypoints::with_speed(
            Position::new(self.from, 0.0),
            Instant::ZERO,
            &[Position::new(self.to, 0.0)],
            self.speed,
            Duration::ZERO,
        );
        b.mobility(mob, Mobility::Waypoints(walk.unwrap()));
        let seen = Arc::new(Mutex::new(Seen::default()));
        let mut ifaces = Vec::new();
        for (k, list) in self.ifaces.iter().enumerate() {
            let media: Vec<u32> = list.iter().map(|&c| chans[c]).collect();
            let cfg = RadioConfig::new(Role::Roaming, Position::default());
            ifaces.push(b.roaming_wlan_iface(mob, &format!("wlan{k}"), &media, &cfg, RoamConfig::default()).unwrap());
        }
        b.agent(mob, Box::new(Mobile { seen: seen.clone(), addr: None, dst: Ipv4Addr::new(10, 9, 0, 2) }));
        let r = b.build().run().unwrap();
        let seen = std::mem::take(&mut seen.lock().unwrap().events);
        let got = std::mem::take(&mut *got.lock().unwrap());
        Walked { r, seen, got, ifaces }
    }
}

/// A station walks at 2 m/s from 10 m east of AP1 (channel 1, 10.0.1.0/24) towards AP2 (200 m
/// east, channel 6, 10.0.2.0/24). It joins AP1 at the start (active scan of both channels),
/// scans in the background when AP1's signal falls below -80 dBm and hands over to AP2 when
/// it falls below -90 dBm, at the instants the path-loss model gives; its interface goes from
/// 10.0.1.2 to 10.0.2.2, the agents see Down, AddressRemoved then Up, AddressAdded, and its
/// datagrams reach the wired host from the new address.
#[test]
fn walking_station_scans_and_hands_over_at_the_rss_thresholds() {
    let walk = Walk {
        aps: vec![(0.0, 0, 1), (200.0, 1, 2)],
        ifaces: vec![vec![0, 1]],
        from: 10.0,
        to: 190.0,
        speed: 2.0,
        seconds: 90,
        seed: 7,
        ap_outage: None,
    };
    let w = walk.run();
    let e = "mob/wlan0";
    let t_scan = (distance_for(-80.0) - 10.0) / 2.0;
    let t_ho = (distance_for(-90.0) - 10.0) / 2.0;
    let scans = steps(&w.r.events, e, "scan-start");
    let ho = steps(&w.r.events, e, "handover");
    // The first scan at time zero, then the background scan at the -80 dBm crossing (the
    // crossing is computed, so it is exact to the nanosecond), rescans every second.
    assert_eq!(scans[0], 0.0);
    assert!((scans[1] - t_scan).abs() < 1e-6, "scan at {} expected {t_scan}", scans[1]);
    assert!(scans.len() > 10 && (scans[2] - scans[1] - 1.0).abs() < 0.2, "{scans:?}");
    assert_eq!(ho.len(), 1);
    assert!((ho[0] - t_ho).abs() < 1e-6, "handover at {} expected {t_ho}", ho[0]);
    let assoc = steps(&w.r.events, e, "associated");
    assert_eq!(assoc.len(), 2);
    assert!(assoc[0] < 0.2, "{assoc:?}");
    // Leaving, the station tells AP1 with a Disassociation that AP1, at -90 dBm, cannot
    // decode: the short retry limit's 7 attempts, then the station leaves the channel.
    let s = |entity: &str, m: &str| w.r.scalars.get("iface", entity, m).unwrap_or(0.0);
    assert_eq!(s("mob/wlan0@c1", "mgmt_tx_disassoc"), 7.0);
    assert_eq!(s("ap0/wlan0", "mgmt_rx_disassoc"), 0.0);
    let left = steps(&w.r.events, e, "left");
    assert_eq!(left.len(), 1);
    assert!(left[0] > ho[0] && left[0] - ho[0] < 0.05, "{left:?} {ho:?}");
    let auth = steps(&w.r.events, e, "auth");
    assert_eq!(auth.last(), Some(&left[0]), "{auth:?}");
    // Then straight to AP2, found by the last scan: authentication and association are a few ms.
    assert!(assoc[1] > left[0] && assoc[1] - left[0] < 0.01, "{assoc:?} {left:?}");
    let i = w.ifaces[0];
    let evs: Vec<IfaceEvent> = w.seen.iter().filter(|(_, f, _)| *f == i).map(|(_, _, ev)| *ev).collect();
    let a1 = Ipv4Addr::new(10, 0, 1, 2);
    let a2 = Ipv4Addr::new(10, 0, 2, 2);
    use IfaceEvent::*;
    assert_eq!(evs, vec![Up, AddressAdded(a1), Down, AddressRemoved(a1), Up, AddressAdded(a2)]);
    let down_at = w.seen.iter().find(|(_, _, ev)| *ev == Down).unwrap().0;
    assert!((down_at.as_secs_f64() - t_ho).abs() < 1e-6);
    // Traffic: from the first address before the handover (until AP1's signal is too weak to
    // carry it), from the second after.
    assert!(w.got.iter().any(|&(t, a)| a == a1 && t.as_secs_f64() < t_scan));
    assert!(w.got.iter().any(|&(t, a)| a == a2 && t.as_secs_f64() > assoc[1]));
    assert!(w.got.iter().all(|&(t, a)| (a == a1) == (t.as_secs_f64() < t_ho + 0.01)));
    assert_eq!(w.r.scalars.get("iface", e, "wlan_deauthentications"), Some(0.0));
    assert_eq!(w.r.scalars.get("iface", e, "wlan_handovers"), Some(1.0));
    // Determinism: the same seed gives the same run.
    let again = walk.run();
    assert_eq!(again.r.events.time_ns, w.r.events.time_ns);
    assert_eq!(again.r.events.detail, w.r.events.detail);
}

/// A multihomed mobile: wlan0 roams on channel 1 only (APs at 0 and 220 m), wlan1 on channel
/// 6 only (APs at 60 and 280 m). Walking from 10 to 260 m at 5 m/s, each hands over when its
/// own AP falls below -90 dBm, at its own instant, and keeps its own addresses.
#[test]
fn two_interfaces_roam_independently() {
    let walk = Walk {
        aps: vec![(0.0, 0, 1), (220.0, 0, 2), (60.0, 1, 3), (280.0, 1, 4)],
        ifaces: vec![vec![0], vec![1]],
        from: 10.0,
        to: 260.0,
        speed: 5.0,
        seconds: 60,
        seed: 3,
        ap_outage: None,
    };
    let w = walk.run();
    let d = distance_for(-90.0);
    // Channel 6's free-space reference loss is 0.36 dB higher: its crossing is a little closer.
    let f6 = 2437e6f64;
    let d6 = d / 10f64.powf(20.0 * (f6 / 2412e6).log10() / 30.0);
    let ho0 = steps(&w.r.events, "mob/wlan0", "handover");
    let ho1 = steps(&w.r.events, "mob/wlan1", "handover");
    assert_eq!(ho0.len(), 1);
    assert_eq!(ho1.len(), 1);
    assert!((ho0[0] - (d - 10.0) / 5.0).abs() < 1e-6, "{ho0:?}");
    assert!((ho1[0] - (60.0 + d6 - 10.0) / 5.0).abs() < 1e-6, "{ho1:?}");
    let adds = |i: IfaceId| -> Vec<Ipv4Addr> {
        w.seen
            .iter()
            .filter_map(|(_, f, ev)| match ev {
                IfaceEvent::AddressAdded(a) if *f == i => Some(*a),
                _ => None,
            })
            .collect()
    };
    assert_eq!(adds(w.ifaces[0]), vec![Ipv4Addr::new(10, 0, 1, 2), Ipv4Addr::new(10, 0, 2, 2)]);
    assert_eq!(adds(w.ifaces[1]), vec![Ipv4Addr::new(10, 0, 3, 2), Ipv4Addr::new(10, 0, 4, 2)]);
    // Each interface's radio only ever visited its own channel.
    assert!(w.r.scalars.get("iface", "mob/wlan0@c6", "mac_tx_frames").is_none());
    assert!(w.r.scalars.get("iface", "mob/wlan1@c1", "mac_tx_frames").is_none());
}

/// A radio tuned away from its channel hears nothing there: a station scanning passively
/// (110 ms per channel, channel 1 then 6) between an AP on each receives only the beacons sent
/// on the channel it listens to at the time, and joins the AP it heard strongest (the nearer
/// one, on channel 6).
#[test]
fn a_radio_tuned_away_hears_nothing() {
    let mut b = WorldBuilder::new(5, Instant::ZERO + Duration::from_millis(300));
    b.trace(Box::new(EventLog::new(vec!["wlan".into()])));
    let c1 = b.wlan_channel("c1", wlan::ChannelConfig::default());
    let c6 = b.wlan_channel("c6", wlan::ChannelConfig { channel: 6, ..wlan::ChannelConfig::default() });
    for (name, ch, x, net) in [("ap1", c1, 0.0, 1), ("ap6", c6, 15.0, 6)] {
        let ap = b.node(name, NodeKind::Router);
        b.wlan_iface(ap, "wlan0", Some(IfaceAddr::new(Ipv4Addr::new(10, 0, net, 1))), ch, &ap_config(x)).unwrap();
    }
    let sta = b.node("sta", NodeKind::Host);
    let cfg = RadioConfig::new(Role::Roaming, Position::new(10.0, 0.0));
    let roam = RoamConfig { scan: ScanMode::Passive { dwell: Duration::from_millis(110) }, ..RoamConfig::default() };
    b.roaming_wlan_iface(sta, "wlan0", &[c1, c6], &cfg, roam).unwrap();
    let mut w = b.build();
    let beacons = |w: &netsim::world::World, m: usize| w.network().wlans[m].mgmt_counts(1).rx_of(MgmtKind::Beacon);
    // On channel 1 until 110 ms: channel 1's beacons at 0 and 102.4 ms; none of channel 6's.
    w.run_until(Instant::ZERO + Duration::from_millis(109)).unwrap();
    assert_eq!((beacons(&w, 0), beacons(&w, 1)), (2, 0));
    // On channel 6 from 110 to 220 ms: its beacon at 204.8 ms only; channel 1's stop.
    w.run_until(Instant::ZERO + Duration::from_millis(219)).unwrap();
    assert_eq!((beacons(&w, 0), beacons(&w, 1)), (2, 1));
    let r = w.run().unwrap();
    let at = (0..r.events.kind.len()).find(|&i| r.events.detail[i].starts_with("step=associated ")).unwrap();
    assert!(r.events.detail[at].contains("channel=c6 ap=ap6/wlan0 addr=10.0.6.2"), "{}", r.events.detail[at]);
}

/// An AP going out of service: a station 10 m from AP1 (channel 1) and 15 m from AP2 (channel
/// 6) joins AP1. At 2.05 s (between the station's datagrams) a fault takes AP1's interface
/// down: AP1 deauthenticates the station (one individually addressed frame, acknowledged),
/// which leaves and joins AP2, found by its first scan, within a few ms; AP1 sends no beacon
/// until its interface is back at 4 s.
#[test]
fn an_ap_going_down_deauthenticates_its_station_which_joins_another() {
    let walk = Walk {
        aps: vec![(0.0, 0, 1), (25.0, 1, 2)],
        ifaces: vec![vec![0, 1]],
        from: 10.0,
        to: 11.0,
        speed: 0.1,
        seconds: 6,
        seed: 11,
        ap_outage: Some((0, 2.05, 4.0)),
    };
    let w = walk.run();
    let e = "mob/wlan0";
    let s = |entity: &str, m: &str| w.r.scalars.get("iface", entity, m).unwrap_or(0.0);
    assert_eq!(s("ap0/wlan0", "mgmt_tx_deauth"), 1.0);
    assert_eq!(s("mob/wlan0@c1", "mgmt_rx_deauth"), 1.0);
    assert_eq!(s(e, "wlan_deauthentications"), 1.0);
    assert_eq!(s(e, "wlan_handovers"), 0.0);
    assert_eq!(s("mob/wlan0@c1", "mgmt_tx_disassoc"), 0.0);
    let deauth = steps(&w.r.events, e, "deauthenticated");
    assert_eq!(deauth.len(), 1);
    assert!(deauth[0] > 2.05 && deauth[0] < 2.051, "{deauth:?}");
    let assoc = steps(&w.r.events, e, "associated");
    assert_eq!(assoc.len(), 2);
    assert!(assoc[1] > deauth[0] && assoc[1] - deauth[0] < 0.01, "{assoc:?}");
    let i = w.ifaces[0];
    let evs: Vec<IfaceEvent> = w.seen.iter().filter(|(_, f, _)| *f == i).map(|(_, _, ev)| *ev).collect();
    let (a1, a2) = (Ipv4Addr::new(10, 0, 1, 2), Ipv4Addr::new(10, 0, 2, 2));
    use IfaceEvent::*;
    assert_eq!(evs, vec![Up, AddressAdded(a1), Down, AddressRemoved(a1), Up, AddressAdded(a2)]);
    // Beacons at the TBTTs k * 102.4 ms before 2.05 s (k = 0..20) and from 4 s on (k = 40..58).
    assert_eq!(s("ap0/wlan0", "mgmt_tx_beacon"), 40.0);
    // Traffic reaches the server from the new address.
    assert!(w.got.iter().any(|&(t, a)| a == a2 && t.as_secs_f64() > assoc[1]));
    assert!(w.got.iter().all(|&(t, a)| (a == a1) == (t.as_secs_f64() < 2.05)));
}
