//! Two-endpoint tests of the association engine: handshake, data transfer, loss recovery,
//! flow control, shutdown, abort, failover timing, PF and switch-back.
#![allow(clippy::unwrap_used)]

mod harness;

use harness::{Harness, CLIENT, SERVER};
use sctp::{CloseReason, Config, Event, PathState, State};
use simtime::{Duration, Instant};

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}
#[allow(dead_code)]
fn secs(v: u64) -> Instant {
    Instant::from_nanos(v * 1_000_000_000)
}

fn connected(paths: usize, config: Config) -> Harness {
    let mut h = Harness::new(config.clone(), config, paths, ms(10), 7);
    h.connect();
    h.run_for(ms(100));
    h
}

#[test]
fn four_way_handshake_and_path_confirmation() {
    let mut h = connected(2, Config::default());
    assert_eq!(h.assoc_ref(CLIENT).state(), State::Established);
    assert_eq!(h.assoc_ref(SERVER).state(), State::Established);
    // INIT, INIT ACK, COOKIE ECHO, COOKIE ACK: established after two round trips (40 ms).
    let t = h.event_times(CLIENT, |e| *e == Event::Connected);
    assert_eq!(t, vec![Instant::ZERO + ms(40)]);
    assert_eq!(h.event_times(SERVER, |e| *e == Event::Connected), vec![Instant::ZERO + ms(30)]);
    let (c, s) = (h.assoc_ref(CLIENT), h.assoc_ref(SERVER));
    assert_eq!(c.peer_tag(), s.local_tag());
    assert_eq!(s.peer_tag(), c.local_tag());
    assert_eq!(c.paths().len(), 2);
    assert_eq!(s.paths().len(), 2);
    // The second address of each side is confirmed by a heartbeat round trip.
    assert!(c.paths().iter().all(|p| p.confirmed), "{:?}", c.paths().iter().map(|p| p.confirmed).collect::<Vec<_>>());
    assert!(h.assoc(SERVER).paths().iter().all(|p| p.confirmed));
}

#[test]
fn ordered_transfer_with_loss_delivers_every_message_once_in_stream_order() {
    let mut h = Harness::new(Config::default(), Config::default(), 1, ms(10), 11);
    h.links[0].loss = 0.02;
    h.links[0].rate_bps = 20_000_000;
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: 2_000_000, msg_size: 1000, streams: 3, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(60));
    let app = &h.apps[SERVER];
    assert_eq!(app.received_bytes, 2_000_000);
    assert_eq!(app.received.len(), 2000);
    for stream in 0..3u16 {
        let seqs: Vec<u64> = app
            .received
            .iter()
            .filter(|m| m.stream == stream)
            .map(|m| u64::from_be_bytes(m.data[..8].try_into().unwrap()))
            .collect();
        let mut sorted = seqs.clone();
        sorted.sort();
        assert_eq!(seqs, sorted, "stream {stream} out of order");
    }
    let stats: u64 = h.assoc_ref(CLIENT).paths().iter().map(|p| p.stats.fast_retransmissions).sum();
    assert!(stats > 0, "losses should have been repaired by fast retransmit");
}

#[test]
fn large_messages_fragment_and_reassemble_across_the_tsn_wrap() {
    let config = Config { initial_tsn: Some(u32::MAX - 20), ..Config::default() };
    let mut h = Harness::new(config.clone(), config, 1, ms(5), 3);
    h.links[0].loss = 0.01;
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: 500_000, msg_size: 10_000, streams: 2, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(60));
    let app = &h.apps[SERVER];
    assert_eq!(app.received.len(), 50);
    for m in &app.received {
        let seq = u64::from_be_bytes(m.data[..8].try_into().unwrap());
        assert_eq!(m.data.len(), 10_000);
        assert!(m.data[8..].iter().all(|&b| b == (seq % 251) as u8), "message {seq} corrupted");
    }
    assert!(h.assoc_ref(CLIENT).highest_tsn_sent() < 1000, "TSNs wrapped past 2^32");
}

#[test]
fn unordered_messages_are_all_delivered() {
    let mut h = Harness::new(Config::default(), Config::default(), 1, ms(5), 5);
    h.links[0].loss = 0.05;
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: 300_000, msg_size: 1000, unordered: true, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(60));
    let app = &h.apps[SERVER];
    let mut seqs: Vec<u64> = app.received.iter().map(|m| u64::from_be_bytes(m.data[..8].try_into().unwrap())).collect();
    assert!(app.received.iter().all(|m| m.unordered));
    let in_order = seqs.windows(2).all(|w| w[0] < w[1]);
    seqs.sort();
    assert_eq!(seqs, (0..300).collect::<Vec<_>>());
    assert!(!in_order, "with 5% loss some unordered messages overtake others");
}

#[test]
fn graceful_shutdown_closes_both_sides_after_all_data_is_acknowledged() {
    let mut h = connected(1, Config::default());
    h.apps[CLIENT] = harness::App { to_send: 100_000, msg_size: 1000, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(ms(5));
    let now = h.now;
    h.assoc(CLIENT).shutdown(now);
    assert_eq!(h.assoc_ref(CLIENT).state(), State::ShutdownPending);
    assert!(h.assoc(CLIENT).send(0, 0, false, b"late").is_err());
    h.run_for(Duration::from_secs(10));
    assert_eq!(h.apps[SERVER].received_bytes, 100_000);
    for side in [CLIENT, SERVER] {
        assert_eq!(h.assoc_ref(side).state(), State::Closed);
        assert_eq!(
            h.event_times(side, |e| *e == Event::Closed { reason: CloseReason::Shutdown }).len(),
            1
        );
    }
    assert_eq!(h.eps[SERVER].poll_timeout(), None, "no timers left");
}

#[test]
fn abort_closes_the_peer() {
    let mut h = connected(1, Config::default());
    let now = h.now;
    h.assoc(CLIENT).abort(now);
    h.run_for(ms(50));
    assert_eq!(h.event_times(SERVER, |e| *e == Event::Closed { reason: CloseReason::AbortedByPeer }).len(), 1);
    assert_eq!(h.assoc_ref(SERVER).state(), State::Closed);
}

#[test]
fn single_loss_is_repaired_by_one_fast_retransmit() {
    let mut h = connected(1, Config::default());
    let base = h.sent_count[CLIENT];
    h.drop_nth.push((CLIENT, base + 10));
    h.apps[CLIENT] = harness::App { to_send: 200_000, msg_size: 1000, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(5));
    assert_eq!(h.apps[SERVER].received_bytes, 200_000);
    let p = &h.assoc_ref(CLIENT).paths()[0];
    assert_eq!(p.stats.fast_retransmissions, 1);
    assert_eq!(p.stats.t3_timeouts, 0);
    assert_eq!(h.event_times(CLIENT, |e| matches!(e, Event::FastRetransmit { .. })).len(), 1);
}

#[test]
fn init_gives_up_after_max_init_retransmits_with_exponential_backoff() {
    let mut h = Harness::new(Config::default(), Config::default(), 1, ms(10), 1);
    h.set_link(0, false);
    h.connect();
    h.run_for(Duration::from_secs(1000));
    // RTO.Initial 1 s doubling to RTO.Max 60 s: the 8th retransmission's timer expires at
    // 1 + 2 + 4 + 8 + 16 + 32 + 60 + 60 + 60 = 243 s.
    let closed = h.event_times(CLIENT, |e| *e == Event::Closed { reason: CloseReason::InitFailed });
    assert_eq!(closed, vec![Instant::ZERO + Duration::from_secs(243)]);
    assert_eq!(h.sent_count[CLIENT], 9);
}

#[test]
fn small_receive_buffer_limits_goodput_to_rwnd_per_rtt() {
    let server = Config { recv_buffer: 16_384, ..Config::default() };
    let mut h = Harness::new(Config::default(), server, 1, ms(50), 9);
    h.links[0].rate_bps = 100_000_000;
    h.connect();
    h.run_for(ms(200));
    h.apps[CLIENT] = harness::App { to_send: u64::MAX, msg_size: 1024, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(5));
    let start = h.apps[SERVER].received_bytes;
    h.run_for(Duration::from_secs(10));
    let rate = (h.apps[SERVER].received_bytes - start) as f64 / 10.0;
    let expected = 16_384.0 / 0.1;
    assert!((rate / expected - 1.0).abs() < 0.1, "goodput {rate:.0} B/s, a_rwnd/RTT {expected:.0} B/s");
}

#[test]
fn flow_control_stops_the_sender_while_the_receiver_does_not_read() {
    let server = Config { recv_buffer: 8_000, ..Config::default() };
    let mut h = Harness::new(Config::default(), server, 1, ms(10), 9);
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: 50_000, msg_size: 500, ..Default::default() };
    h.run_for(Duration::from_secs(3));
    let held = h.assoc_ref(SERVER).receive_buffer_used();
    assert!((7_000..=8_000).contains(&held), "receiver holds {held}");
    assert_eq!(h.assoc_ref(SERVER).a_rwnd(), 8_000 - held);
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(30));
    assert_eq!(h.apps[SERVER].received_bytes, 50_000);
}

/// A send buffer much larger than the receiver's window keeps new data queued, so new data
/// is ready at every timeout (otherwise T3 restarts only when the buffer refills).
fn sender_config(c: Config) -> Config {
    Config { send_buffer: 1 << 20, ..c }
}
fn receiver_config(c: Config) -> Config {
    Config { recv_buffer: 64 * 1024, ..c }
}

/// Two 10 Mbit/s paths, 10 ms each way; the client uploads without end, the server reads.
fn unlimited_upload(client: Config, server: Config, seed: u64) -> Harness {
    let mut h = Harness::new(client, server, 2, ms(10), seed);
    h.links[0].rate_bps = 10_000_000;
    h.links[1].rate_bps = 10_000_000;
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: u64::MAX, msg_size: 1400, ..Default::default() };
    h.apps[SERVER].reading = true;
    h
}

/// Failover timing: the primary breaks; its T3-rtx was last restarted by the last SACK that
/// crossed the primary link, and from then on each timeout doubles the RTO (capped at
/// RTO.Max) until the error counter exceeds Path.Max.Retrans (RFC 9260 §6.3.3, §8.2).
fn failover_case(pmr: u32, rto_max_s: u64) {
    let config = Config {
        rto_initial: Duration::from_secs(1),
        rto_min: Duration::from_secs(1),
        rto_max: Duration::from_secs(rto_max_s),
        path_max_retrans: pmr,
        assoc_max_retrans: 100,
        ..Config::default()
    };
    let mut h = unlimited_upload(sender_config(config.clone()), receiver_config(config), 21);
    let t_break = secs(5);
    h.run_until(t_break);
    h.set_link(0, false);
    h.run_for(Duration::from_secs(400));
    let last_sack = h.last_delivery(CLIENT, 0, t_break).unwrap();
    let mut expected = last_sack;
    let mut rto = Duration::from_secs(1);
    for _ in 0..=pmr {
        expected += rto;
        rto = rto.saturating_mul(2).min(Duration::from_secs(rto_max_s));
    }
    let inactive = h.event_times(CLIENT, |e| {
        matches!(e, Event::PathStateChanged { path: 0, to: PathState::Inactive, .. })
    });
    assert_eq!(inactive, vec![expected], "pmr {pmr}, rto_max {rto_max_s}");
    // New data goes to the alternate from then on (once the retransmissions marked at that
    // timeout have left, cwnd permitting).
    let moved = h.event_times(CLIENT, |e| matches!(e, Event::DataPathChanged { from: 0, to: 1 }));
    assert_eq!(moved.len(), 1);
    assert!(moved[0] >= expected && moved[0] - expected < Duration::from_secs(1));
    // The first retransmission went to the alternate at the first timeout.
    let first_rtx = h.event_times(CLIENT, |e| matches!(e, Event::RetransmitOnAlternate { from: 0, to: 1 }));
    assert_eq!(first_rtx.first(), Some(&(last_sack + Duration::from_secs(1))));
}

#[test]
fn failover_time_follows_the_backoff_rules() {
    failover_case(5, 60);
    failover_case(2, 4);
    failover_case(0, 60);
    failover_case(4, 3);
    failover_case(1, 2);
}

#[test]
fn potentially_failed_moves_data_after_the_first_timeout() {
    let config = Config {
        rto_min: Duration::from_secs(1),
        pf_max_retrans: Some(0),
        ..Config::default()
    };
    let mut h = unlimited_upload(sender_config(config.clone()), receiver_config(config), 23);
    h.run_until(secs(5));
    h.set_link(0, false);
    h.run_for(Duration::from_secs(30));
    let last_sack = h.last_delivery(CLIENT, 0, secs(5)).unwrap();
    let expected = last_sack + Duration::from_secs(1);
    let pf = h.event_times(CLIENT, |e| matches!(e, Event::PathStateChanged { path: 0, to: PathState::PotentiallyFailed, .. }));
    assert_eq!(pf, vec![expected]);
    let moved = h.event_times(CLIENT, |e| matches!(e, Event::DataPathChanged { from: 0, to: 1 }));
    assert_eq!(moved.len(), 1, "data stays on the alternate while the primary is PF");
    assert!(moved[0] >= expected && moved[0] - expected < Duration::from_secs(1));
    // With PF off, the same break keeps new data on the primary for 63 s (see above).
}

fn switchback_run(switchback: bool) -> Harness {
    let config = Config {
        path_max_retrans: 1,
        hb_interval: Some(Duration::from_secs(2)),
        switchback,
        ..Config::default()
    };
    let mut h = unlimited_upload(config.clone(), config, 25);
    h.run_until(secs(5));
    h.set_link(0, false);
    h.run_until(secs(20));
    h.set_link(0, true);
    h.run_until(secs(60));
    h
}

#[test]
fn switch_back_happens_on_the_first_heartbeat_ack() {
    let h = switchback_run(true);
    let back = h.event_times(CLIENT, |e| matches!(e, Event::DataPathChanged { from: 1, to: 0 }));
    let acks: Vec<Instant> = h
        .event_times(CLIENT, |e| matches!(e, Event::HeartbeatAcked { path: 0, .. }))
        .into_iter()
        .filter(|&t| t > secs(20))
        .collect();
    let active = h.event_times(CLIENT, |e| matches!(e, Event::PathStateChanged { path: 0, to: PathState::Active, .. }));
    assert_eq!(active, vec![acks[0]], "the primary is active again at the first HEARTBEAT ACK");
    // New data returns to it with the next new data after that instant (within one RTT).
    assert_eq!(back.len(), 1);
    assert!(back[0] >= acks[0] && back[0] - acks[0] < ms(20), "{:?} vs {:?}", back[0], acks[0]);
    assert_eq!(h.assoc_ref(CLIENT).primary(), 0);
}

#[test]
fn without_switch_back_the_alternate_stays_primary() {
    let h = switchback_run(false);
    assert_eq!(h.assoc_ref(CLIENT).primary(), 1);
    assert!(h.event_times(CLIENT, |e| matches!(e, Event::DataPathChanged { from: 1, to: 0 })).is_empty());
    assert_eq!(h.assoc_ref(CLIENT).paths()[0].state, PathState::Active, "the old primary recovered");
}

#[test]
fn same_seed_same_packets() {
    let run = || {
        let mut h = Harness::new(Config::default(), Config::default(), 2, ms(7), 99);
        h.links[0].loss = 0.03;
        h.connect();
        h.apps[CLIENT] = harness::App { to_send: 100_000, msg_size: 700, ..Default::default() };
        h.apps[SERVER].reading = true;
        h.run_for(Duration::from_secs(20));
        h.sent
    };
    assert_eq!(run(), run());
}

#[test]
fn mangled_packets_never_panic_and_never_corrupt_delivered_data() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
    let mut h = Harness::new(Config::default(), Config::default(), 2, ms(3), 31);
    h.mangle = Some(Box::new(move |bytes: &mut Vec<u8>| {
        if rng.random::<f64>() < 0.2 {
            let i = rng.random_range(0..bytes.len());
            bytes[i] ^= 1 << rng.random_range(0..8);
        }
        if rng.random::<f64>() < 0.05 {
            let n = rng.random_range(0..bytes.len());
            bytes.truncate(n);
        }
    }));
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: 100_000, msg_size: 1000, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(120));
    // CRC32c rejects every corrupted packet; what arrives is intact.
    for m in &h.apps[SERVER].received {
        let seq = u64::from_be_bytes(m.data[..8].try_into().unwrap());
        assert!(m.data[8..].iter().all(|&b| b == (seq % 251) as u8));
    }
    assert!(h.eps[SERVER].stats().bad_checksum > 0);
}

#[test]
fn out_of_the_blue_packets_get_abort_with_the_t_bit() {
    use sctp::wire::{Chunk, CommonHeader, Packet, SackChunk};
    let mut ep = sctp::Endpoint::new(Config::default(), vec!["10.0.0.2".parse().unwrap()], 6000, true, 1);
    let sack = Packet {
        header: CommonHeader { src_port: 5000, dst_port: 6000, verification_tag: 0x1234 },
        chunks: vec![Chunk::Sack(SackChunk::default())],
    };
    let from = "10.0.0.1".parse().unwrap();
    ep.handle(Instant::ZERO, from, "10.0.0.2".parse().unwrap(), &sack.emit());
    let reply = ep.poll_transmit(Instant::ZERO).unwrap();
    let parsed = Packet::parse(&reply.payload).unwrap();
    assert_eq!(parsed.header.verification_tag, 0x1234);
    assert_eq!(parsed.chunks, vec![Chunk::Abort { t_bit: true, causes: vec![] }]);
    // An OOTB ABORT is never answered (§8.4 2).
    let abort = Packet { header: sack.header, chunks: vec![Chunk::Abort { t_bit: false, causes: vec![] }] };
    ep.handle(Instant::ZERO, from, "10.0.0.2".parse().unwrap(), &abort.emit());
    assert_eq!(ep.poll_transmit(Instant::ZERO), None);
}



#[test]
fn association_fails_when_the_error_count_exceeds_association_max_retrans() {
    // One path, so every T3-rtx timeout counts against the association (§8.1) as well as the
    // path; the association closes at the timeout that takes its count past
    // Association.Max.Retrans (3): the 4th, after 1 + 2 + 4 + 8 s of backed-off RTOs.
    let config = Config { assoc_max_retrans: 3, ..Config::default() };
    let mut h = Harness::new(sender_config(config.clone()), receiver_config(config), 1, ms(10), 5);
    h.links[0].rate_bps = 10_000_000;
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: u64::MAX, msg_size: 1400, ..Default::default() };
    h.apps[SERVER].reading = true;
    let t_break = secs(5);
    h.run_until(t_break);
    h.set_link(0, false);
    h.run_for(Duration::from_secs(100));
    let timeouts = h.event_times(CLIENT, |e| matches!(e, Event::T3Timeout { .. }));
    let closed = h.event_times(CLIENT, |e| *e == Event::Closed { reason: CloseReason::AssociationFailure });
    assert_eq!(timeouts.len(), 4, "{timeouts:?}");
    assert!(timeouts[0] > t_break && timeouts[0] - t_break <= Duration::from_secs(1));
    assert_eq!(closed, vec![timeouts[0] + Duration::from_secs(2 + 4 + 8)]);
    assert_eq!(h.assoc_ref(CLIENT).state(), State::Closed);
    assert_eq!(h.eps[CLIENT].poll_timeout(), None, "a failed association keeps no timers");
}

/// The SACK chunks the server sent, with the times they were sent.
fn server_sacks(h: &Harness) -> Vec<Instant> {
    h.sent.iter().filter(|(_, side, _, p)| *side == SERVER && p.get(12) == Some(&3)).map(|(t, ..)| *t).collect()
}

#[test]
fn sacks_are_delayed_by_sack_delay_and_sent_at_once_on_every_second_packet() {
    // §6.2: a packet with DATA is acknowledged within SACK.Delay (200 ms), and at least every
    // second packet with DATA is acknowledged at once.
    let mut h = connected(1, Config::default());
    h.run_for(Duration::from_secs(1));
    let before = server_sacks(&h).len();
    let now = h.now;
    h.assoc(CLIENT).send(0, 0, false, &[1; 100]).unwrap();
    h.run_for(Duration::from_secs(1));
    let sacks = server_sacks(&h);
    assert_eq!(sacks.len(), before + 1);
    // One-way delay 10 ms, then the delayed-ACK timer.
    assert_eq!(sacks[before], now + ms(10) + ms(200));

    // Two packets' worth at once: the second arrival is acknowledged immediately.
    let now = h.now;
    h.assoc(CLIENT).send(0, 0, false, &[2; 1400]).unwrap();
    h.assoc(CLIENT).send(0, 0, false, &[3; 1400]).unwrap();
    h.run_for(Duration::from_secs(1));
    let sacks = server_sacks(&h);
    assert_eq!(sacks.len(), before + 2);
    assert_eq!(sacks[before + 1], now + ms(10), "no link rate: both packets arrive together");
    assert_eq!(h.apps[SERVER].received.len(), 0, "the server app does not read; data stays buffered");
}

#[test]
fn a_stale_cookie_is_reported_and_the_handshake_starts_again() {
    // Valid.Cookie.Life shorter than the time the cookie spends in flight (20 ms round trip
    // from INIT ACK to COOKIE ECHO): the server answers with a Stale Cookie error (§5.1.5),
    // and the client starts over from INIT (§5.2.6), then gives up after Max.Init.Retransmits.
    let server = Config { valid_cookie_life: ms(5), ..Config::default() };
    let mut h = Harness::new(Config::default(), server, 1, ms(10), 3);
    h.connect();
    h.run_for(Duration::from_secs(1000));
    assert!(h.eps[SERVER].stats().stale_cookies >= 1);
    assert!(h.eps[SERVER].associations().iter().all(|a| a.state() != State::Established));
    // The ERROR chunk (type 9) with cause 3 went out.
    assert!(h.sent.iter().any(|(_, side, _, p)| *side == SERVER && p.get(12) == Some(&9)));
    assert!(h.assoc_ref(CLIENT).state() == State::Closed);
}
