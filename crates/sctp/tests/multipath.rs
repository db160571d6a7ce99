//! Two-path tests of the multipath seams: a path scheduler spreading new data over both
//! destinations, a congestion controller reading the group view, the cwnd a destination
//! returns from potentially failed with, and one packet of retransmissions at a T3-rtx
//! expiry (RFC 9260 §6.3.3 E3).
#![allow(clippy::unwrap_used)]

mod harness;

use std::sync::{Arc, Mutex};

use harness::{ms, Harness, CLIENT, SERVER};
use sctp::cmt::{PathScheduler, PathsView, SchedulerConfig};
use sctp::congestion::{AckInfo, CongestionState, Controller, GroupView, Rfc9260, Rules};
use sctp::wire::{Chunk, HeaderView};
use sctp::{Config, CongestionConfig, Event, PathId, PathState, Plugin};
use simtime::{Duration, Instant};

const P0: PathId = PathId::new(0);
const P1: PathId = PathId::new(1);

/// Two 10 Mbit/s paths, 10 ms each way; the client uploads `bytes` (`u64::MAX`: without
/// end) in 1,400-byte messages, the server reads.
fn upload(config: Config, bytes: u64) -> Harness {
    let mut h = Harness::new(config.clone(), config, 2, ms(10), 11);
    for l in &mut h.links {
        l.rate_bps = 10_000_000;
    }
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: bytes, msg_size: 1400, ..Default::default() };
    h.apps[SERVER].reading = true;
    h
}

/// New data to one usable destination per transmission opportunity, taking turns.
#[derive(Debug, Default)]
struct Alternating {
    turn: usize,
}

impl PathScheduler for Alternating {
    fn name(&self) -> &'static str {
        "alternating"
    }
    fn schedule(&mut self, paths: &PathsView<'_>, out: &mut Vec<PathId>) {
        let usable: Vec<PathId> = paths.iter().filter(|(_, p)| p.is_usable()).map(|(id, _)| id).collect();
        if usable.is_empty() {
            out.push(paths.primary());
            return;
        }
        self.turn = self.turn.wrapping_add(1);
        out.push(usable[self.turn % usable.len()]);
    }
}

fn alternating() -> SchedulerConfig {
    SchedulerConfig::Custom(Plugin::new("alternating", || -> Box<dyn PathScheduler> {
        Box::new(Alternating::default())
    }))
}

#[test]
fn a_scheduler_that_alternates_sends_new_data_over_both_destinations() {
    let mut h = upload(Config { scheduler: alternating(), ..Config::default() }, 2_000_000);
    h.run_for(Duration::from_secs(20));
    assert_eq!(h.apps[SERVER].received_bytes, 2_000_000);
    let paths = h.assoc_ref(CLIENT).paths();
    let sent: Vec<u64> = paths.values().map(|p| p.stats.data_chunks_sent).collect();
    assert!(sent.iter().all(|&n| n > 200), "new DATA chunks per path: {sent:?}");
    let changes = h.event_times(CLIENT, |e| matches!(e, Event::DataPathChanged { .. }));
    assert!(changes.len() > 10, "{changes:?}");

    // The default keeps every new chunk on the primary.
    let mut h = upload(Config::default(), 2_000_000);
    h.run_for(Duration::from_secs(20));
    assert_eq!(h.apps[SERVER].received_bytes, 2_000_000);
    assert_eq!(h.assoc_ref(CLIENT).paths()[P1].stats.data_chunks_sent, 0);
}

/// What a controller saw on one SACK.
#[derive(Clone, Debug)]
struct Seen {
    own_cwnd: u32,
    own_srtt: Option<Duration>,
    group: GroupView,
}

/// RFC 9260 congestion control that records the group view of every SACK.
#[derive(Debug)]
struct Recording {
    base: Rfc9260,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Controller for Recording {
    fn name(&self) -> &'static str {
        "recording"
    }
    fn init(&mut self, s: &mut CongestionState) {
        self.base.init(s);
    }
    fn reads_group_view(&self) -> bool {
        true
    }
    fn on_ack(&mut self, s: &mut CongestionState, ack: &AckInfo, group: &GroupView) {
        let seen = Seen { own_cwnd: s.cwnd, own_srtt: ack.srtt, group: group.clone() };
        self.seen.lock().unwrap().push(seen);
        self.base.on_ack(s, ack, group);
    }
    fn on_fast_retransmit(&mut self, s: &mut CongestionState, group: &GroupView) {
        self.base.on_fast_retransmit(s, group);
    }
    fn on_timeout(&mut self, s: &mut CongestionState, group: &GroupView) {
        self.base.on_timeout(s, group);
    }
    fn on_idle(&mut self, s: &mut CongestionState, rtos: u32) {
        self.base.on_idle(s, rtos);
    }
}

#[test]
fn a_controller_sees_every_path_of_the_association_on_each_sack() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let congestion = CongestionConfig::Custom(Plugin::new("recording", move || -> Box<dyn Controller> {
        Box::new(Recording { base: Rfc9260::new(Rules::Rfc9260), seen: Arc::clone(&log) })
    }));
    let config = Config { scheduler: alternating(), congestion, ..Config::default() };
    let mut h = upload(config, 1_000_000);
    // The link of path 1 is slower, so the two SRTTs differ.
    h.links[1].delay = ms(30);
    h.run_for(Duration::from_secs(20));
    assert_eq!(h.apps[SERVER].received_bytes, 1_000_000);

    let seen = seen.lock().unwrap();
    assert!(seen.len() > 100, "{} calls", seen.len());
    for s in seen.iter() {
        let view = &s.group;
        assert_eq!(view.paths().len(), 2);
        assert_eq!(view.paths()[0].id, P0);
        assert_eq!(view.paths()[1].id, P1);
        let cwnds: u64 = view.paths().iter().map(|p| u64::from(p.cwnd)).sum();
        assert_eq!(view.total_cwnd(), cwnds);
        let rate: f64 = view.paths().iter().filter_map(|p| p.rate()).sum();
        assert!((view.total_rate() - rate).abs() <= 1e-9 * rate.max(1.0));
        // Before it reacts, the controller's own window is the one its path shows.
        let own = view.own().unwrap();
        assert_eq!((own.cwnd, own.srtt), (s.own_cwnd, s.own_srtt), "{s:?}");
    }
    // Both destinations carried acknowledged data, with their own RTTs.
    let last = &seen.last().unwrap().group;
    let srtts: Vec<Duration> = last.paths().iter().map(|p| p.srtt.unwrap()).collect();
    assert!(srtts[1] > srtts[0] + ms(20), "{srtts:?}");
    let max = last
        .paths()
        .iter()
        .map(|p| f64::from(p.cwnd) * 1e18 / (p.srtt.unwrap().as_nanos() as f64).powi(2))
        .fold(0.0, f64::max);
    assert!((last.max_cwnd_per_srtt_squared() - max).abs() <= 1e-9 * max);
}

/// Steps `h` a millisecond at a time until `side` has an event matching `f`; its time.
fn run_until_event(h: &mut Harness, side: usize, limit: Duration, f: impl Fn(&Event) -> bool) -> Instant {
    let end = h.now + limit;
    while h.now < end {
        if let Some(t) = h.event_times(side, &f).first() {
            return *t;
        }
        h.run_for(ms(1));
    }
    panic!("no such event before {end:?}");
}

fn cwnd_after_pf_exit(pf_return_cwnd: Option<u32>) -> u32 {
    let config = Config { pf_max_retrans: Some(0), pf_return_cwnd, ..Config::default() };
    let mut h = upload(config, u64::MAX);
    h.run_for(Duration::from_secs(2));
    h.set_link(0, false);
    let to_pf = |e: &Event| matches!(e, Event::PathStateChanged { path: P0, to: PathState::PotentiallyFailed, .. });
    run_until_event(&mut h, CLIENT, Duration::from_secs(10), to_pf);
    h.set_link(0, true);
    let back = |e: &Event| {
        matches!(e, Event::PathStateChanged { path: P0, from: PathState::PotentiallyFailed, to: PathState::Active })
    };
    run_until_event(&mut h, CLIENT, Duration::from_secs(10), back);
    // Nothing sent since has been acknowledged yet (the round trip is 20 ms).
    h.assoc_ref(CLIENT).paths()[P0].cc.cwnd
}

#[test]
fn a_destination_returning_from_pf_gets_the_configured_cwnd() {
    assert_eq!(cwnd_after_pf_exit(Some(3000)), 3000);
    // By default the window stays where the timeout left it: one MTU.
    assert_eq!(cwnd_after_pf_exit(None), 1500);
}

/// DATA packets `side` sent over link `l` at `t`.
fn data_packets_at(h: &Harness, side: usize, l: usize, t: Instant) -> usize {
    h.sent
        .iter()
        .filter(|(at, s, link, _)| *at == t && *s == side && *link == l)
        .filter(|(.., p)| {
            let Ok(header) = HeaderView::new_checked(p) else { return false };
            header.chunks().flatten().any(|c| matches!(Chunk::parse(&c), Ok(Chunk::Data(_))))
        })
        .count()
}

#[test]
fn a_t3_expiry_sends_one_packet_of_retransmissions_and_the_rest_when_cwnd_allows() {
    // §6.3.3 E3: the earliest chunks that fit in one packet go to the alternate at once;
    // the others wait for cwnd, normally the SACK of that packet. With PF the primary is
    // left at that timeout, so new data goes to the alternate too, but not ahead of the
    // retransmissions waiting there (§6.1 C).
    // The receiver's window (1 MiB) leaves room for new data at the timeout.
    for pf_max_retrans in [None, Some(0)] {
        t3_expiry_case(Config { pf_max_retrans, recv_buffer: 1 << 20, ..Config::default() });
    }
}

fn t3_expiry_case(config: Config) {
    let mut h = upload(config, u64::MAX);
    h.run_for(ms(300));
    h.set_link(0, false);
    let t3 = |e: &Event| matches!(e, Event::T3Timeout { path: P0, .. });
    let t = run_until_event(&mut h, CLIENT, Duration::from_secs(10), t3);
    h.run_for(ms(200));
    assert_eq!(data_packets_at(&h, CLIENT, 1, t), 1);
    let rtx: Vec<Instant> = h
        .event_times(CLIENT, |e| matches!(e, Event::RetransmitOnAlternate { from: P0, to: P1 }))
        .into_iter()
        .filter(|&at| at > t)
        .collect();
    // The SACK of the first retransmission arrives a round trip later and opens the window.
    assert!(rtx.first().is_some_and(|&at| at >= t + ms(20)), "{t:?}: {rtx:?}");
    // The association's count of DATA bytes sent is the paths' new and retransmitted bytes.
    let a = h.assoc_ref(CLIENT);
    let per_path: Vec<(u64, u64)> =
        a.paths().values().map(|p| (p.stats.bytes_sent, p.stats.bytes_retransmitted)).collect();
    assert!(per_path.iter().any(|&(_, r)| r > 0), "{per_path:?}");
    assert_eq!(a.stats().data_bytes_sent, per_path.iter().map(|&(s, r)| s + r).sum::<u64>(), "{per_path:?}");
}

#[test]
fn every_coupled_controller_carries_a_two_path_transfer_to_the_end() {
    for name in ["lia", "olia", "rp-v1", "rp-v2"] {
        let congestion = CongestionConfig::from_name(name, None).unwrap();
        let mut h = upload(Config { scheduler: alternating(), congestion, ..Config::default() }, 2_000_000);
        h.links[1].delay = ms(30);
        h.run_for(Duration::from_secs(30));
        assert_eq!(h.apps[SERVER].received_bytes, 2_000_000, "{name}");
        let paths = h.assoc_ref(CLIENT).paths();
        let sent: Vec<u64> = paths.values().map(|p| p.stats.data_chunks_sent).collect();
        let cc: Vec<_> = paths.values().map(|p| (p.cc, p.stats.t3_timeouts, p.stats.fast_retransmissions)).collect();
        // (CMT/RPv1 leaves a path that lost with a small ssthresh and so a small share of
        // the growth: it may carry little.)
        assert!(sent.iter().all(|&n| n > 20), "{name}: {sent:?} {cc:?}");
        assert!(paths.values().all(|p| p.controller.name() == name), "{name}");
    }
}

#[test]
fn a_destination_reported_unreachable_keeps_no_flight_of_the_chunks_moved_off_it() {
    // The lower layer reports the primary unreachable with a window in flight there: the
    // chunks go to the alternate, so none of their bytes may stay counted on the primary
    // (a stale flight size there would shrink the peer's rwnd as the sender tracks it, and
    // keep new data off the primary once it is reachable again).
    let mut h = upload(Config::default(), u64::MAX);
    h.run_for(ms(500));
    let now = h.now;
    let queued = |h: &mut Harness, p| h.assoc(CLIENT).paths()[p].queued_bytes;
    let total_queued = queued(&mut h, P0) + queued(&mut h, P1);
    assert!(h.assoc(CLIENT).paths()[P0].flight_size > 0, "a window in flight on the primary");
    assert!(h.assoc(CLIENT).report_unreachable(now, P0));
    assert_eq!(h.assoc(CLIENT).paths()[P0].flight_size, 0);
    // The chunks' share of the send buffer moves with them (buffer splitting counts it).
    assert_eq!((queued(&mut h, P0), queued(&mut h, P1)), (0, total_queued));
    h.run_for(ms(2000));
    assert_eq!(h.assoc(CLIENT).paths()[P0].flight_size, 0, "nothing new was sent to the primary");
    assert_eq!(queued(&mut h, P0), 0);
}
