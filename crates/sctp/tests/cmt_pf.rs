//! CMT-PF (Natarajan et al., NETWORKING 2008; paper 003 §5.1) in whole associations: no
//! chunk goes to a destination after its first timeout, heartbeats probe it with a backed-off
//! RTO, the HEARTBEAT ACK brings it back at k MTU, an acknowledged retransmission does not,
//! and Path.Max.Retrans further timeouts make it inactive.
#![allow(clippy::unwrap_used)]

mod harness;

use harness::{addr, ms, Harness, CLIENT, SERVER};
use sctp::cmt::{PfVariant, RetransmitConfig};
use sctp::wire::{Chunk, HeaderView};
use sctp::{Config, Event, PathId, PathState};
use simtime::{Duration, Instant};

const P0: PathId = PathId::new(0);

/// `paths` 10 Mbit/s paths, 10 ms each way; the client uploads without end in 1,400-byte
/// messages, the server reads.
fn upload(config: Config, paths: usize) -> Harness {
    let mut h = Harness::new(config, Config::default(), paths, ms(10), 11);
    for l in &mut h.links {
        l.rate_bps = 10_000_000;
    }
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: u64::MAX, msg_size: 1400, ..Default::default() };
    h.apps[SERVER].reading = true;
    h
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

fn to_pf(e: &Event) -> bool {
    matches!(e, Event::PathStateChanged { path: P0, to: PathState::PotentiallyFailed, .. })
}

fn pf_exit(e: &Event) -> bool {
    matches!(e, Event::PathStateChanged { path: P0, from: PathState::PotentiallyFailed, to: PathState::Active })
}

/// The chunks of a packet.
fn chunks(bytes: &[u8]) -> Vec<Chunk> {
    let Ok(header) = HeaderView::new_checked(bytes) else { return Vec::new() };
    header.chunks().flatten().filter_map(|c| Chunk::parse(&c).ok()).collect()
}

/// Times the client sent a packet with a chunk matching `f` over link `l`, within `from..to`.
fn client_sends(h: &Harness, l: usize, from: Instant, to: Instant, f: impl Fn(&Chunk) -> bool) -> Vec<Instant> {
    h.sent
        .iter()
        .filter(|(at, side, link, _)| *side == CLIENT && *link == l && *at >= from && *at < to)
        .filter(|(.., p)| chunks(p).iter().any(&f))
        .map(|(at, ..)| *at)
        .collect()
}

fn is_data(c: &Chunk) -> bool {
    matches!(c, Chunk::Data(_))
}

#[test]
fn after_one_timeout_no_data_goes_to_the_destination_until_its_heartbeat_ack() {
    // Every policy, including those that would choose destination 0 (RTX-SAME for chunks
    // sent there, RTX-LOSSRATE because its path is declared loss-free), with new data on the
    // primary or (CMT) on every destination.
    for (policy, cmt) in RetransmitConfig::NAMES.into_iter().flat_map(|p| [(p, false), (p, true)]) {
        let config = Config { retransmit: RetransmitConfig::from_name(policy).unwrap(), ..Config::default() };
        let config = if cmt { config.with_cmt() } else { config };
        let policy = format!("{policy}{}", if cmt { " with CMT" } else { "" });
        let mut h = upload(config.with_cmt_pf(2), 3);
        h.run_for(ms(500));
        for (i, loss) in [0.0, 0.05, 0.1].into_iter().enumerate() {
            h.assoc(CLIENT).set_loss_rate_hint(addr(SERVER, i), loss);
        }
        h.set_link(0, false);
        let pf = run_until_event(&mut h, CLIENT, Duration::from_secs(10), to_pf);
        let t3 = h.event_times(CLIENT, |e| matches!(e, Event::T3Timeout { path: P0, .. }));
        assert_eq!(t3, [pf], "{policy}: PF at the first timeout");
        h.run_for(Duration::from_secs(2));
        h.set_link(0, true);
        let back = run_until_event(&mut h, CLIENT, Duration::from_secs(30), pf_exit);
        assert_eq!(client_sends(&h, 0, pf, back, is_data), [], "{policy}: DATA to a PF destination");
        // Meanwhile the data went elsewhere, retransmissions included.
        let paths = h.assoc_ref(CLIENT).paths();
        let rtx: u64 = paths.values().skip(1).map(|p| p.stats.timeout_retransmissions).sum();
        assert!(rtx > 0, "{policy}");
        assert!(
            !client_sends(&h, 1, pf, back, is_data).is_empty() || !client_sends(&h, 2, pf, back, is_data).is_empty()
        );
        // Afterwards destination 0 carries data again (the primary).
        h.run_for(ms(500));
        assert!(!client_sends(&h, 0, back, h.now, is_data).is_empty(), "{policy}");
    }
}

#[test]
fn a_pf_destination_is_probed_with_a_backed_off_rto_and_fails_after_path_max_retrans_more() {
    let config = Config { hb_interval: None, ..Config::default() }.with_cmt_pf(2);
    let pmr = config.path_max_retrans;
    let mut h = upload(config, 2);
    h.run_for(ms(500));
    h.set_link(0, false);
    let pf = run_until_event(&mut h, CLIENT, Duration::from_secs(10), to_pf);
    let inactive = |e: &Event| matches!(e, Event::PathStateChanged { path: P0, to: PathState::Inactive, .. });
    let dead = run_until_event(&mut h, CLIENT, Duration::from_secs(300), inactive);
    let path = &h.assoc_ref(CLIENT).paths()[P0];
    assert_eq!(path.stats.t3_timeouts, 1);
    assert_eq!(path.stats.heartbeat_timeouts, u64::from(pmr), "PF after one timeout, inactive after PMR more");
    let hbs = client_sends(&h, 0, pf, dead, |c| matches!(c, Chunk::Heartbeat { .. }));
    assert_eq!(hbs.len(), pmr as usize, "{hbs:?}");
    assert_eq!(hbs[0], pf, "the first probe at once");
    // Each unanswered probe doubles the RTO (up to RTO.Max): 2 s after the T3-rtx expiry.
    let gaps: Vec<Duration> = hbs.windows(2).map(|w| w[1] - w[0]).collect();
    let want: Vec<Duration> = (1..pmr).map(|k| Duration::from_secs(1 << k).min(Duration::from_secs(60))).collect();
    assert_eq!(gaps, want);
}

/// The client's cwnd on destination 0 when it leaves PF, which must be on a HEARTBEAT ACK.
fn cwnd_on_return(config: Config) -> u32 {
    let mut h = upload(config, 2);
    h.run_for(Duration::from_secs(2));
    h.set_link(0, false);
    run_until_event(&mut h, CLIENT, Duration::from_secs(10), to_pf);
    h.set_link(0, true);
    let back = run_until_event(&mut h, CLIENT, Duration::from_secs(10), pf_exit);
    let events: Vec<&(Instant, Event)> = h.events[CLIENT].iter().filter(|(t, _)| *t == back).collect();
    let i = events.iter().position(|(_, e)| pf_exit(e)).unwrap();
    assert!(i > 0 && matches!(events[i - 1].1, Event::HeartbeatAcked { path: P0, .. }), "{events:?}");
    // Nothing sent since has been acknowledged yet (the round trip is 20 ms).
    let cc = &h.assoc_ref(CLIENT).paths()[P0].cc;
    assert!(cc.cwnd <= cc.ssthresh, "slow start: {cc:?}");
    cc.cwnd
}

#[test]
fn the_heartbeat_ack_brings_a_pf_destination_back_at_k_mtu() {
    for k in 1..=4 {
        assert_eq!(cwnd_on_return(Config::default().with_cmt_pf(k)), k * 1500, "CMT-PF{k}");
    }
    // CMT-PF2 by default.
    let cmt = Config { pf_variant: PfVariant::Cmt, pf_max_retrans: Some(0), ..Config::default() };
    assert_eq!(cwnd_on_return(cmt), 3000);
    // RFC 7829 leaves the window where the timeout put it (1 MTU).
    assert_eq!(cwnd_on_return(Config { pf_max_retrans: Some(0), ..Config::default() }), 1500);
}

/// One destination (so every destination is PF and retransmissions go to it): the link
/// fails until PF, then comes back. Returns the harness at the PF exit and the bytes
/// acknowledged on the destination when the link came back.
fn single_destination_outage(config: Config) -> (Harness, u64) {
    let mut h = upload(config, 1);
    h.run_for(ms(500));
    h.set_link(0, false);
    run_until_event(&mut h, CLIENT, Duration::from_secs(10), to_pf);
    h.run_for(ms(1500));
    h.set_link(0, true);
    let acked = h.assoc_ref(CLIENT).paths()[P0].stats.bytes_acked;
    run_until_event(&mut h, CLIENT, Duration::from_secs(30), pf_exit);
    (h, acked)
}

/// The client's events at the instant destination 0 left PF, up to that change.
fn events_at_exit(h: &Harness) -> (Instant, Vec<Event>) {
    let back = h.event_times(CLIENT, pf_exit)[0];
    let events: Vec<Event> = h.events[CLIENT].iter().filter(|(t, _)| *t == back).map(|(_, e)| e.clone()).collect();
    let i = events.iter().position(pf_exit).unwrap();
    (back, events[..=i].to_vec())
}

#[test]
fn an_acknowledged_retransmission_does_not_bring_a_pf_destination_back() {
    // RFC 7829: the SACK of the retransmission sent to the PF destination brings it back,
    // ahead of the HEARTBEAT ACK bundled after it.
    let (h, acked) = single_destination_outage(Config { pf_max_retrans: Some(0), ..Config::default() });
    let (back, events) = events_at_exit(&h);
    assert!(!events.iter().any(|e| matches!(e, Event::HeartbeatAcked { .. })), "{events:?}");
    let path = &h.assoc_ref(CLIENT).paths()[P0];
    assert!(path.stats.timeout_retransmissions > 0);
    assert!(path.stats.bytes_acked > acked);

    // CMT-PF: the same packet acknowledges the same retransmission, and the destination
    // stays PF until the HEARTBEAT ACK behind it in that packet.
    let cmt = Config::default().with_cmt_pf(2);
    let (h, acked) = single_destination_outage(cmt);
    let (at, events) = events_at_exit(&h);
    assert_eq!(at, back);
    assert!(matches!(events[events.len() - 2], Event::HeartbeatAcked { path: P0, .. }), "{events:?}");
    let path = &h.assoc_ref(CLIENT).paths()[P0];
    assert!(path.stats.timeout_retransmissions > 0);
    assert!(path.stats.bytes_acked > acked, "the retransmission was acknowledged");
    assert_eq!(h.assoc_ref(CLIENT).paths()[P0].cc.cwnd, 3000);
}
