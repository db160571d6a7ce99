//! Two-endpoint tests of the association engine: handshake, data transfer, loss recovery,
//! flow control, shutdown, abort, failover timing, PF and switch-back, and INITs and
//! COOKIE ECHOs for associations that exist (collision, restart, duplicates: RFC 9260 §5.2).
#![allow(clippy::unwrap_used)]

mod harness;

use harness::{addr, ms, Harness, CLIENT, PORTS, SERVER};
use sctp::wire::{Chunk, CommonHeader, ErrorCause, InitChunk, Packet, Parameter};
use sctp::{AssocId, CloseReason, Config, Endpoint, Event, PathId, PathState, State, Timer};
use simtime::{Duration, Instant};
use std::net::IpAddr;

const P0: PathId = PathId::new(0);
const P1: PathId = PathId::new(1);

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
    assert!(
        c.paths().values().all(|p| p.confirmed),
        "{:?}",
        c.paths().values().map(|p| p.confirmed).collect::<Vec<_>>()
    );
    assert!(h.assoc(SERVER).paths().values().all(|p| p.confirmed));
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
    let stats: u64 = h.assoc_ref(CLIENT).paths().values().map(|p| p.stats.fast_retransmissions).sum();
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

/// The bytes of test message `tag[0]` from offset `at` (a function of both, as a generator
/// must be): byte `b` is `b * 7 + i`.
fn test_message_bytes(tag: [u64; 2], at: usize, out: &mut [u8]) {
    assert!(out.iter().all(|&x| x == 0), "made into zeros");
    for (k, b) in out.iter_mut().enumerate() {
        *b = ((at + k) * 7 + tag[0] as usize) as u8;
    }
}

/// `send_generated` (a message made as it is sent, again for each retransmission) sends the
/// same packets and delivers the same messages as `send` with the same bytes, for messages
/// of one chunk, exactly one full chunk, and several fragments, on two streams, with loss;
/// and refuses what `send` refuses.
#[test]
fn send_generated_sends_what_send_sends() {
    let max = Config::default().max_fragment();
    let sizes = [1, 700, max, max + 1, 5000];
    let message = |i: usize| -> Vec<u8> {
        let mut m = vec![0; sizes[i % sizes.len()]];
        test_message_bytes([i as u64, 0], 0, &mut m);
        m
    };
    let run = |generated: bool| {
        let mut h = Harness::new(Config::default(), Config::default(), 1, ms(5), 3);
        h.links[0].loss = 0.05;
        h.connect();
        h.run_for(ms(100));
        h.apps[SERVER].reading = true;
        for i in 0..60 {
            let (m, stream) = (message(i), (i % 2) as u16);
            let a = h.assoc(CLIENT);
            let sent = if generated {
                a.send_generated(stream, 9, false, m.len(), [i as u64, 0], test_message_bytes)
            } else {
                a.send(stream, 9, false, &m)
            };
            sent.unwrap();
            h.run_for(ms(20));
        }
        h.run_for(Duration::from_secs(10));
        let received: Vec<(u16, Vec<u8>)> =
            h.apps[SERVER].received.iter().map(|m| (m.stream, m.data.clone())).collect();
        let rtx: u64 = h.assoc_ref(CLIENT).paths().values().map(|p| p.stats.bytes_retransmitted).sum();
        (h.sent, received, rtx)
    };
    let (sent, received, rtx) = run(false);
    assert!(rtx > 0, "some data is retransmitted");
    assert_eq!(received.len(), 60);
    let mut by_stream: Vec<Vec<u8>> = received.iter().filter(|(s, _)| *s == 0).map(|(_, d)| d.clone()).collect();
    assert_eq!(by_stream, (0..60).step_by(2).map(message).collect::<Vec<_>>());
    by_stream = received.iter().filter(|(s, _)| *s == 1).map(|(_, d)| d.clone()).collect();
    assert_eq!(by_stream, (1..60).step_by(2).map(message).collect::<Vec<_>>());
    let (sent_generated, received_generated, _) = run(true);
    assert_eq!(received_generated, received);
    assert!(sent_generated == sent, "the packets differ");

    let mut h = connected(1, Config::default());
    let a = h.assoc(CLIENT);
    let make = test_message_bytes;
    assert_eq!(a.send_generated(0, 0, false, 0, [0; 2], make), Err(sctp::SendError::Empty));
    let n = a.outbound_streams();
    assert_eq!(a.send_generated(n, 0, false, 10, [0; 2], make), Err(sctp::SendError::InvalidStream(n)));
    while a.send_buffer_space() >= max {
        a.send_generated(0, 0, false, max, [0; 2], make).unwrap();
    }
    assert_eq!(a.send_generated(0, 0, false, max, [0; 2], make), Err(sctp::SendError::BufferFull));
    let now = h.now;
    h.assoc(CLIENT).shutdown(now);
    let a = h.assoc(CLIENT);
    assert_eq!(a.send_generated(0, 0, false, 10, [0; 2], make), Err(sctp::SendError::NotOpen(State::ShutdownPending)));
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
        assert_eq!(h.event_times(side, |e| *e == Event::Closed { reason: CloseReason::Shutdown }).len(), 1);
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
    let p = &h.assoc_ref(CLIENT).paths()[P0];
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
    let inactive =
        h.event_times(CLIENT, |e| matches!(e, Event::PathStateChanged { path: P0, to: PathState::Inactive, .. }));
    assert_eq!(inactive, vec![expected], "pmr {pmr}, rto_max {rto_max_s}");
    // New data goes to the alternate from then on (once the retransmissions marked at that
    // timeout have left, cwnd permitting).
    let moved = h.event_times(CLIENT, |e| matches!(e, Event::DataPathChanged { from: P0, to: P1 }));
    assert_eq!(moved.len(), 1);
    assert!(moved[0] >= expected && moved[0] - expected < Duration::from_secs(1));
    // The first retransmission went to the alternate at the first timeout.
    let first_rtx = h.event_times(CLIENT, |e| matches!(e, Event::RetransmitOnAlternate { from: P0, to: P1 }));
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
    let config = Config { rto_min: Duration::from_secs(1), pf_max_retrans: Some(0), ..Config::default() };
    let mut h = unlimited_upload(sender_config(config.clone()), receiver_config(config), 23);
    h.run_until(secs(5));
    h.set_link(0, false);
    h.run_for(Duration::from_secs(30));
    let last_sack = h.last_delivery(CLIENT, 0, secs(5)).unwrap();
    let expected = last_sack + Duration::from_secs(1);
    let pf = h.event_times(CLIENT, |e| {
        matches!(e, Event::PathStateChanged { path: P0, to: PathState::PotentiallyFailed, .. })
    });
    assert_eq!(pf, vec![expected]);
    let moved = h.event_times(CLIENT, |e| matches!(e, Event::DataPathChanged { from: P0, to: P1 }));
    assert_eq!(moved.len(), 1, "data stays on the alternate while the primary is PF");
    assert!(moved[0] >= expected && moved[0] - expected < Duration::from_secs(1));
    // With PF off, the same break keeps new data on the primary for 63 s (see above).
}

fn switchback_run(switchback: bool) -> Harness {
    let config =
        Config { path_max_retrans: 1, hb_interval: Some(Duration::from_secs(2)), switchback, ..Config::default() };
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
    let back = h.event_times(CLIENT, |e| matches!(e, Event::DataPathChanged { from: P1, to: P0 }));
    let acks: Vec<Instant> = h
        .event_times(CLIENT, |e| matches!(e, Event::HeartbeatAcked { path: P0, .. }))
        .into_iter()
        .filter(|&t| t > secs(20))
        .collect();
    let active =
        h.event_times(CLIENT, |e| matches!(e, Event::PathStateChanged { path: P0, to: PathState::Active, .. }));
    assert_eq!(active, vec![acks[0]], "the primary is active again at the first HEARTBEAT ACK");
    // New data returns to it with the next new data after that instant (within one RTT).
    assert_eq!(back.len(), 1);
    assert!(back[0] >= acks[0] && back[0] - acks[0] < ms(20), "{:?} vs {:?}", back[0], acks[0]);
    assert_eq!(h.assoc_ref(CLIENT).primary(), P0);
}

#[test]
fn without_switch_back_the_alternate_stays_primary() {
    let h = switchback_run(false);
    assert_eq!(h.assoc_ref(CLIENT).primary(), P1);
    assert!(h.event_times(CLIENT, |e| matches!(e, Event::DataPathChanged { from: P1, to: P0 })).is_empty());
    assert_eq!(h.assoc_ref(CLIENT).paths()[P0].state, PathState::Active, "the old primary recovered");
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
    // Packets borrowed by the endpoint, and datagrams handed over whose messages are read
    // where they arrived.
    for hand_over in [false, true] {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
        let mut h = Harness::new(Config::default(), Config::default(), 2, ms(3), 31);
        h.hand_over = hand_over;
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
        assert_eq!(h.apps[SERVER].read_in_datagram > 0, hand_over);
    }
}

#[test]
fn out_of_the_blue_packets_get_abort_with_the_t_bit() {
    use sctp::wire::SackChunk;
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
    // and the client starts over from INIT (§5.2.6), then gives up after Max.Init.Retransmits
    // (8) of them: the ninth error, one every 40 ms, closes it at 360 ms.
    let server = Config { valid_cookie_life: ms(5), ..Config::default() };
    let mut h = Harness::new(Config::default(), server, 1, ms(10), 3);
    h.connect();
    h.run_for(Duration::from_secs(1000));
    assert_eq!(h.eps[SERVER].stats().stale_cookies, 9);
    assert!(h.eps[SERVER].associations().all(|(_, a)| a.state() != State::Established));
    // The ERROR chunk (type 9) with cause 3 went out.
    assert!(h.sent.iter().any(|(_, side, _, p)| *side == SERVER && p.get(12) == Some(&9)));
    let closed = h.event_times(CLIENT, |e| *e == Event::Closed { reason: CloseReason::InitFailed });
    assert_eq!(closed, vec![Instant::ZERO + ms(9 * 40)]);
    // Every INIT, the first and the eight after a Stale Cookie error, has tag 0 (§8.5.1 A).
    let inits = sent_by(&h, CLIENT, Instant::ZERO)
        .into_iter()
        .filter(|(_, p)| matches!(p.chunks[..], [Chunk::Init(_)]))
        .map(|(_, p)| p.header.verification_tag)
        .collect::<Vec<_>>();
    assert_eq!(inits, vec![0; 9]);
}

// ----- INIT and COOKIE ECHO for an association that exists (§5.2) -----

/// Every packet `side` sent at or after `from`, parsed, with the time it was sent.
fn sent_by(h: &Harness, side: usize, from: Instant) -> Vec<(Instant, Packet)> {
    h.sent
        .iter()
        .filter(|(t, s, ..)| *s == side && *t >= from)
        .map(|(t, _, _, p)| (*t, Packet::parse(p).unwrap()))
        .collect()
}

/// The times of the packets in `packets` whose first chunk satisfies `f`.
fn times_of(packets: &[(Instant, Packet)], f: impl Fn(&Chunk) -> bool) -> Vec<Instant> {
    packets.iter().filter(|(_, p)| p.chunks.first().is_some_and(&f)).map(|(t, _)| *t).collect()
}

/// The State Cookie of an INIT ACK.
fn cookie_of(init_ack: &InitChunk) -> Vec<u8> {
    init_ack
        .params
        .iter()
        .find_map(|p| match p {
            Parameter::StateCookie(c) => Some(c.clone()),
            _ => None,
        })
        .unwrap()
}

/// A packet from the client's port to the server's, emitted with its CRC32c.
fn to_server(tag: u32, chunk: Chunk) -> Vec<u8> {
    let header = CommonHeader { src_port: PORTS[CLIENT], dst_port: PORTS[SERVER], verification_tag: tag };
    Packet { header, chunks: vec![chunk] }.emit()
}

/// A packet from the server's port to the client's, emitted with its CRC32c.
fn to_client(tag: u32, chunk: Chunk) -> Vec<u8> {
    let header = CommonHeader { src_port: PORTS[SERVER], dst_port: PORTS[CLIENT], verification_tag: tag };
    Packet { header, chunks: vec![chunk] }.emit()
}

/// Every packet `side`'s endpoint has to send at `now`, parsed.
fn replies(h: &mut Harness, side: usize, now: Instant) -> Vec<Packet> {
    std::iter::from_fn(|| h.eps[side].poll_transmit(now)).map(|d| Packet::parse(&d.payload).unwrap()).collect()
}

/// An INIT with tag `tag`, 10 streams each way, listing `addrs`.
fn init_chunk(tag: u32, addrs: &[std::net::Ipv4Addr]) -> InitChunk {
    InitChunk {
        initiate_tag: tag,
        a_rwnd: 65_536,
        outbound_streams: 10,
        inbound_streams: 10,
        initial_tsn: 1000,
        params: addrs.iter().map(|&a| Parameter::Ipv4Address(a)).collect(),
    }
}

/// Both sides send and read 20 kB; true if all of it arrived.
fn data_flows_both_ways(h: &mut Harness) -> bool {
    for side in [CLIENT, SERVER] {
        h.apps[side] = harness::App { to_send: 20_000, msg_size: 1000, reading: true, ..Default::default() };
    }
    h.run_for(Duration::from_secs(5));
    h.apps[CLIENT].received_bytes == 20_000 && h.apps[SERVER].received_bytes == 20_000
}

fn collision_at_once(server_listens: bool) {
    let mut h = Harness::new(Config::default(), Config::default(), 1, ms(10), 21);
    if !server_listens {
        let ep = Endpoint::new(Config::default(), vec![addr(SERVER, 0)], PORTS[SERVER], false, 22);
        h.replace_endpoint(SERVER, ep);
    }
    h.connect_from(CLIENT);
    h.connect_from(SERVER);
    h.run_for(ms(100));
    for side in [CLIENT, SERVER] {
        assert_eq!(h.eps[side].len(), 1, "side {side}");
        assert_eq!(h.assoc_ref(side).state(), State::Established);
        // INITs cross (10 ms), INIT ACKs cross (20 ms), then the COOKIE ECHOs, and each finds
        // both its tags (§5.2.4 D) at 30 ms; the COOKIE ACKs arriving later are discarded.
        assert_eq!(h.event_times(side, |e| *e == Event::Connected), vec![Instant::ZERO + ms(30)]);
        // §5.2.1: each INIT ACK carries the Initiate Tag of its sender's own INIT.
        let own_tag = h.assoc_ref(side).local_tag();
        let acks: Vec<u32> = sent_by(&h, side, Instant::ZERO)
            .iter()
            .filter_map(|(_, p)| match p.chunks.first() {
                Some(Chunk::InitAck(a)) => Some(a.initiate_tag),
                _ => None,
            })
            .collect();
        assert_eq!(acks, vec![own_tag]);
    }
    let (c, s) = (h.assoc_ref(CLIENT), h.assoc_ref(SERVER));
    assert_eq!(c.peer_tag(), s.local_tag());
    assert_eq!(s.peer_tag(), c.local_tag());
    assert!(data_flows_both_ways(&mut h));
}

#[test]
fn init_collision_gives_one_association_per_side() {
    collision_at_once(true);
    collision_at_once(false);
}

#[test]
fn init_collision_after_a_stateless_init_ack_takes_the_peer_tag_from_the_cookie() {
    // The server answers the client's INIT statelessly (10 ms), then connects itself (15 ms).
    // The client, in COOKIE-ECHOED with the stateless INIT ACK's tag, answers that INIT with
    // its own tag (§5.2.1); the server's TCB, in COOKIE-WAIT, finds no row for the cookie of
    // the stateless INIT ACK (30 ms) and discards it. The client's cookie comes back (45 ms)
    // with the client's tag and a new peer tag: action B, the client takes the server's INIT
    // from the cookie and is ESTABLISHED; the server on the COOKIE ACK (55 ms).
    let mut h = Harness::new(Config::default(), Config::default(), 2, ms(10), 23);
    h.connect_from(CLIENT);
    h.run_for(ms(15));
    h.connect_from(SERVER);
    h.run_for(ms(100));
    let stateless_tag = match sent_by(&h, SERVER, Instant::ZERO)[0].1.chunks[0] {
        Chunk::InitAck(ref a) => a.initiate_tag,
        ref other => panic!("{other:?}"),
    };
    assert_eq!(h.event_times(CLIENT, |e| *e == Event::Connected), vec![Instant::ZERO + ms(45)]);
    assert_eq!(h.event_times(SERVER, |e| *e == Event::Connected), vec![Instant::ZERO + ms(55)]);
    for side in [CLIENT, SERVER] {
        assert_eq!(h.eps[side].len(), 1);
        assert_eq!(h.assoc_ref(side).paths().len(), 2);
    }
    let (c, s) = (h.assoc_ref(CLIENT), h.assoc_ref(SERVER));
    assert_ne!(s.local_tag(), stateless_tag);
    assert_eq!(c.peer_tag(), s.local_tag());
    assert_eq!(s.peer_tag(), c.local_tag());
    // The client took the server's initial TSN from the cookie too: data arrives both ways.
    assert!(data_flows_both_ways(&mut h));
}

#[test]
fn a_restarted_peer_restarts_the_association() {
    let mut h = connected(1, Config::default());
    h.apps[CLIENT] = harness::App { to_send: 20_000, msg_size: 1000, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(1));
    assert_eq!(h.apps[SERVER].received_bytes, 20_000);
    let old = (h.assoc_ref(SERVER).local_tag(), h.assoc_ref(SERVER).peer_tag());

    // The client host restarts while nothing is in flight, and connects again from the same
    // address and port.
    let fresh = Endpoint::new(Config::default(), vec![addr(CLIENT, 0)], PORTS[CLIENT], false, 99);
    h.replace_endpoint(CLIENT, fresh);
    h.apps[CLIENT] = harness::App { to_send: 30_000, msg_size: 1000, reading: true, ..Default::default() };
    let t = h.now;
    h.connect();
    h.run_for(ms(100));
    // INIT at t + 10 ms: INIT ACK with a new tag (§5.2.2); COOKIE ECHO at t + 30 ms: both tags
    // new, Tie-Tags ours: the peer restarted (§5.2.4 A).
    assert_eq!(h.event_times(SERVER, |e| matches!(e, Event::Restarted { .. })), vec![t + ms(30)]);
    assert!(h.events[SERVER].iter().any(|(_, e)| *e == Event::Restarted { discarded_bytes: 0 }));
    assert!(h.event_times(SERVER, |e| matches!(e, Event::Closed { .. })).is_empty());
    assert_eq!(h.event_times(SERVER, |e| *e == Event::Connected).len(), 1);
    let client_connected: Vec<Instant> =
        h.event_times(CLIENT, |e| *e == Event::Connected).into_iter().filter(|&x| x >= t).collect();
    assert_eq!(client_connected, vec![t + ms(40)]);
    assert_eq!(h.eps[SERVER].len(), 1, "the old association is reused, not duplicated");
    let (c, s) = (h.assoc_ref(CLIENT), h.assoc_ref(SERVER));
    assert_eq!(s.state(), State::Established);
    assert_eq!((s.local_tag(), s.peer_tag()), (c.peer_tag(), c.local_tag()));
    assert!(s.local_tag() != old.0 && s.peer_tag() != old.1);

    // Fresh TSN state both ways: the server sends from the INIT ACK's initial TSN and
    // acknowledges from the new INIT's.
    h.apps[SERVER].to_send = 10_000;
    h.apps[SERVER].msg_size = 1000;
    h.run_for(Duration::from_secs(5));
    assert_eq!(h.apps[SERVER].received_bytes, 20_000 + 30_000);
    assert_eq!(h.apps[CLIENT].received_bytes, 10_000);
    let client_init_tsn = match sent_by(&h, CLIENT, t)[0].1.chunks[0] {
        Chunk::Init(ref i) => i.initial_tsn,
        ref other => panic!("{other:?}"),
    };
    let server = sent_by(&h, SERVER, t);
    let server_init_tsn = match server[0].1.chunks[0] {
        Chunk::InitAck(ref a) => a.initial_tsn,
        ref other => panic!("{other:?}"),
    };
    let last_cum_ack = server
        .iter()
        .flat_map(|(_, p)| &p.chunks)
        .filter_map(|c| match c {
            Chunk::Sack(s) => Some(s.cumulative_tsn_ack),
            _ => None,
        })
        .next_back();
    assert_eq!(last_cum_ack, Some(client_init_tsn.wrapping_add(29)));
    assert_eq!(h.assoc_ref(SERVER).highest_tsn_sent(), server_init_tsn.wrapping_add(9));
}

#[test]
fn a_restart_with_new_addresses_is_aborted_and_the_association_kept() {
    let mut h = connected(1, Config::default());
    let old = (h.assoc_ref(SERVER).local_tag(), h.assoc_ref(SERVER).peer_tag());
    let new_addr: std::net::Ipv4Addr = "10.9.0.1".parse().unwrap();
    let fresh = Endpoint::new(Config::default(), vec![addr(CLIENT, 0), new_addr.into()], PORTS[CLIENT], false, 99);
    h.replace_endpoint(CLIENT, fresh);
    let t = h.now;
    h.connect();
    h.run_for(ms(100));
    // §5.2.2: ABORT under the INIT's Initiate Tag, listing the address the INIT adds.
    let new_tag = h.assoc_ref(CLIENT).local_tag();
    let server = sent_by(&h, SERVER, t);
    assert_eq!(server.len(), 1);
    assert_eq!(server[0].0, t + ms(10));
    assert_eq!(server[0].1.header.verification_tag, new_tag);
    let cause =
        ErrorCause::RestartWithNewAddresses { addresses: Parameter::emit_list(&[Parameter::Ipv4Address(new_addr)]) };
    assert_eq!(server[0].1.chunks, vec![Chunk::Abort { t_bit: false, causes: vec![cause] }]);
    assert_eq!(h.event_times(CLIENT, |e| *e == Event::Closed { reason: CloseReason::AbortedByPeer }), vec![t + ms(20)]);
    // The association is untouched.
    assert_eq!(h.eps[SERVER].len(), 1);
    let s = h.assoc_ref(SERVER);
    assert_eq!(s.state(), State::Established);
    assert_eq!((s.local_tag(), s.peer_tag()), old);
    assert!(h.event_times(SERVER, |e| matches!(e, Event::Restarted { .. })).is_empty());
}

#[test]
fn an_init_in_shutdown_ack_sent_gets_the_shutdown_ack_again() {
    let mut h = connected(1, Config::default());
    // The client's SHUTDOWN COMPLETE, its second packet from now, is lost.
    h.drop_nth.push((CLIENT, h.sent_count[CLIENT] + 2));
    let now = h.now;
    h.assoc(CLIENT).shutdown(now);
    h.run_for(ms(25));
    assert_eq!(h.assoc_ref(CLIENT).state(), State::Closed);
    assert_eq!(h.assoc_ref(SERVER).state(), State::ShutdownAckSent);
    let t = h.now;
    h.connect();
    h.run_for(ms(100));
    // §9.2: the INIT (t + 10 ms) is discarded and the SHUTDOWN ACK repeated at once, long
    // before T2-shutdown (1 s). The client's new association, in COOKIE-WAIT, treats it as
    // out of the blue (§8.5.1 E): SHUTDOWN COMPLETE with the T bit closes the server's.
    let server = sent_by(&h, SERVER, t);
    assert_eq!(times_of(&server, |c| *c == Chunk::ShutdownAck), vec![t + ms(10)]);
    assert!(times_of(&server, |c| matches!(c, Chunk::InitAck(_))).is_empty());
    assert_eq!(h.event_times(SERVER, |e| *e == Event::Closed { reason: CloseReason::Shutdown }), vec![t + ms(30)]);
    // T1-init repeats the INIT at t + 1 s; now out of the blue, it sets up a new association.
    h.run_for(Duration::from_secs(2));
    assert_eq!(h.event_times(CLIENT, |e| *e == Event::Connected).last(), Some(&(t + Duration::from_secs(1) + ms(40))));
    // The closed association has left the endpoint (its events were taken); the new one has
    // a new id.
    let states: Vec<(AssocId, State)> = h.all_assocs(SERVER).iter().map(|(id, a)| (*id, a.state())).collect();
    assert_eq!(states, vec![(AssocId::new(0), State::Closed), (AssocId::new(1), State::Established)]);
    assert_eq!(h.eps[SERVER].ids().collect::<Vec<_>>(), vec![AssocId::new(1)]);
    assert_eq!(h.any_assoc(SERVER, AssocId::new(1)).unwrap().peer_tag(), h.assoc_ref(CLIENT).local_tag());
}

#[test]
fn a_lost_cookie_ack_is_sent_again_for_the_repeated_cookie_echo() {
    let mut h = Harness::new(Config::default(), Config::default(), 1, ms(10), 7);
    // The server's second packet, the COOKIE ACK, is lost.
    h.drop_nth.push((SERVER, 2));
    h.connect();
    h.run_for(Duration::from_secs(2));
    // T1-cookie (1 s after the COOKIE ECHO at 20 ms) repeats the COOKIE ECHO; both tags match
    // (§5.2.4 D): COOKIE ACK again, no second association.
    let acks = times_of(&sent_by(&h, SERVER, Instant::ZERO), |c| *c == Chunk::CookieAck);
    assert_eq!(acks, vec![Instant::ZERO + ms(30), Instant::ZERO + ms(1030)]);
    assert_eq!(h.event_times(CLIENT, |e| *e == Event::Connected), vec![Instant::ZERO + ms(1040)]);
    assert_eq!(h.event_times(SERVER, |e| *e == Event::Connected), vec![Instant::ZERO + ms(30)]);
    assert_eq!(h.eps[SERVER].len(), 1);
}

#[test]
fn a_late_cookie_from_an_earlier_init_ack_is_discarded() {
    let mut h = Harness::new(Config::default(), Config::default(), 1, ms(10), 7);
    // The first INIT ACK is lost; T1-init repeats the INIT at 1 s and the second INIT ACK,
    // with another tag, sets the association up.
    h.drop_nth.push((SERVER, 1));
    h.connect();
    h.run_for(Duration::from_secs(2));
    assert_eq!(h.event_times(CLIENT, |e| *e == Event::Connected), vec![Instant::ZERO + ms(1040)]);
    let first = match sent_by(&h, SERVER, Instant::ZERO)[0].1.chunks[0] {
        Chunk::InitAck(ref a) => a.clone(),
        ref other => panic!("{other:?}"),
    };
    let before = (h.assoc_ref(SERVER).local_tag(), h.assoc_ref(SERVER).peer_tag());
    assert_ne!(before.0, first.initiate_tag);
    // Its cookie now arrives: a new local tag, the peer's tag, no Tie-Tags (§5.2.4 C).
    let now = h.now;
    let echo = to_server(first.initiate_tag, Chunk::CookieEcho { cookie: cookie_of(&first) });
    h.eps[SERVER].handle(now, addr(CLIENT, 0), addr(SERVER, 0), &echo);
    assert_eq!(h.eps[SERVER].poll_transmit(now), None, "silently discarded");
    assert_eq!(h.eps[SERVER].len(), 1);
    let s = h.eps[SERVER].association_mut(AssocId::new(0)).unwrap();
    assert_eq!((s.local_tag(), s.peer_tag(), s.state()), (before.0, before.1, State::Established));
    assert_eq!(s.poll_event(), None);
    assert_eq!((h.eps[SERVER].stats().invalid_cookies, h.eps[SERVER].stats().stale_cookies), (0, 0));
}

/// A restarted client's INIT, built by hand, delivered to the server of `h`; returns the
/// INIT ACK.
fn restart_init(h: &mut Harness, tag: u32, now: Instant) -> InitChunk {
    let init = init_chunk(tag, &[]);
    h.eps[SERVER].handle(now, addr(CLIENT, 0), addr(SERVER, 0), &to_server(0, Chunk::Init(init)));
    let reply = Packet::parse(&h.eps[SERVER].poll_transmit(now).unwrap().payload).unwrap();
    assert_eq!(reply.header.verification_tag, tag);
    match reply.chunks.as_slice() {
        [Chunk::InitAck(a)] => a.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn restart_cookies_are_authenticated_and_checked_for_staleness() {
    let mut h = connected(1, Config::default());
    let old = (h.assoc_ref(SERVER).local_tag(), h.assoc_ref(SERVER).peer_tag());
    let now = h.now;
    let ack = restart_init(&mut h, 0x1234_5678, now);
    assert_ne!(ack.initiate_tag, old.0, "§5.2.2: a new Initiate Tag");
    let cookie = cookie_of(&ack);
    let echo =
        |ack: &InitChunk, cookie: &[u8]| to_server(ack.initiate_tag, Chunk::CookieEcho { cookie: cookie.to_vec() });
    let (c, s) = (addr(CLIENT, 0), addr(SERVER, 0));
    let tags = |h: &Harness| (h.assoc_ref(SERVER).local_tag(), h.assoc_ref(SERVER).peer_tag());

    // A cookie that fails the MAC is discarded silently (§5.1.5).
    let mut forged = cookie.clone();
    forged[30] ^= 1;
    h.eps[SERVER].handle(now, c, s, &echo(&ack, &forged));
    assert_eq!(h.eps[SERVER].poll_transmit(now), None);
    assert_eq!(h.eps[SERVER].stats().invalid_cookies, 1);

    // 61 s later (Valid.Cookie.Life is 60 s) the cookie has expired, and its tags are not the
    // association's: Stale Cookie error under the cookie's peer tag (§5.2.4 step 3), no
    // restart.
    let late = now + Duration::from_secs(61);
    h.run_until(late);
    h.eps[SERVER].handle(late, c, s, &echo(&ack, &cookie));
    let reply = Packet::parse(&h.eps[SERVER].poll_transmit(late).unwrap().payload).unwrap();
    assert_eq!(reply.header.verification_tag, 0x1234_5678);
    let stale = ErrorCause::StaleCookie { staleness_us: 1_000_000 };
    assert_eq!(reply.chunks, vec![Chunk::Error { causes: vec![stale] }]);
    assert_eq!(tags(&h), old);

    // A new INIT, and its cookie in time: the peer restarted (§5.2.4 A). Data the server's
    // application queued and that was never acknowledged goes with the old association.
    let ack = restart_init(&mut h, 0x1234_5678, late);
    let cookie = cookie_of(&ack);
    h.assoc(SERVER).send(0, 0, false, &[7; 500]).unwrap();
    h.eps[SERVER].handle(late, c, s, &echo(&ack, &cookie));
    let reply = Packet::parse(&h.eps[SERVER].poll_transmit(late).unwrap().payload).unwrap();
    assert_eq!(reply.header.verification_tag, 0x1234_5678);
    assert_eq!(reply.chunks, vec![Chunk::CookieAck]);
    assert_eq!(h.eps[SERVER].poll_transmit(late), None);
    assert_eq!(tags(&h), (ack.initiate_tag, 0x1234_5678));
    assert_eq!(h.assoc(SERVER).poll_event(), Some(Event::Restarted { discarded_bytes: 500 }));
    assert_eq!(h.assoc_ref(SERVER).buffered_bytes(), 0);

    // The same cookie once more, 61 s later, expired: both tags match (D), so it is still
    // good.
    let later = late + Duration::from_secs(61);
    h.eps[SERVER].handle(later, c, s, &echo(&ack, &cookie));
    let reply = Packet::parse(&h.eps[SERVER].poll_transmit(later).unwrap().payload).unwrap();
    assert_eq!(reply.chunks, vec![Chunk::CookieAck]);
    assert_eq!(h.eps[SERVER].stats().stale_cookies, 1);
}

#[test]
fn a_restart_cookie_in_shutdown_ack_sent_gets_the_shutdown_ack_and_an_error() {
    let mut h = connected(1, Config::default());
    let old = (h.assoc_ref(SERVER).local_tag(), h.assoc_ref(SERVER).peer_tag());
    let now = h.now;
    // The INIT ACK comes from ESTABLISHED; by the time its cookie returns, the association is
    // in SHUTDOWN-ACK-SENT (the client's SHUTDOWN COMPLETE lost).
    let ack = restart_init(&mut h, 0x1234_5678, now);
    h.drop_nth.push((CLIENT, h.sent_count[CLIENT] + 2));
    h.assoc(CLIENT).shutdown(now);
    h.run_for(ms(25));
    assert_eq!(h.assoc_ref(SERVER).state(), State::ShutdownAckSent);
    let now = h.now;
    let echo = to_server(ack.initiate_tag, Chunk::CookieEcho { cookie: cookie_of(&ack) });
    h.eps[SERVER].handle(now, addr(CLIENT, 0), addr(SERVER, 0), &echo);
    // §5.2.4 A: no restart; SHUTDOWN ACK again with "Cookie Received While Shutting Down".
    let reply = Packet::parse(&h.eps[SERVER].poll_transmit(now).unwrap().payload).unwrap();
    assert_eq!(reply.header.verification_tag, old.1);
    let error = Chunk::Error { causes: vec![ErrorCause::CookieReceivedWhileShuttingDown] };
    assert_eq!(reply.chunks, vec![Chunk::ShutdownAck, error]);
    let s = h.assoc_ref(SERVER);
    assert_eq!((s.local_tag(), s.peer_tag(), s.state()), (old.0, old.1, State::ShutdownAckSent));
    assert!(h.event_times(SERVER, |e| matches!(e, Event::Restarted { .. })).is_empty());
}

/// (time, TSN) of the DATA chunks in the packets `side` sent, in the order they went out.
fn data_tsns_sent(h: &Harness, side: usize) -> Vec<(Instant, u32)> {
    let mut tsns = Vec::new();
    for (t, from, _, p) in &h.sent {
        let Ok(header) = sctp::wire::HeaderView::new_checked(p) else { continue };
        if *from != side {
            continue;
        }
        for chunk in header.chunks().flatten() {
            if let Ok(sctp::wire::Chunk::Data(d)) = sctp::wire::Chunk::parse(&chunk) {
                tsns.push((*t, d.tsn));
            }
        }
    }
    tsns
}

#[test]
fn retransmissions_after_a_timeout_go_lowest_tsn_first_even_when_a_later_chunk_is_smaller() {
    // 2,500-byte messages make alternating 1,452- and 1,048-byte chunks. An outage ends in
    // T3 timeouts that mark the whole window; while the cwnd regrows from one MTU, a smaller
    // later chunk must not overtake a larger earlier one that does not fit yet (§6.1 C,
    // §6.3.3 E3).
    let mut h = connected(1, Config::default());
    h.links[0].rate_bps = 100_000_000;
    h.apps[CLIENT] = harness::App { to_send: 2_000_000, msg_size: 2500, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(ms(300));
    h.set_link(0, false);
    h.run_for(ms(2500));
    h.set_link(0, true);
    h.run_for(Duration::from_secs(30));
    assert_eq!(h.apps[SERVER].received_bytes, 2_000_000);
    let timeouts = h.event_times(CLIENT, |e| matches!(e, Event::T3Timeout { .. }));
    assert!(timeouts.len() >= 2, "{timeouts:?}");
    // Between two timeouts, a TSN not above the highest sent so far is a retransmission;
    // each must be above the one retransmitted before it.
    let tsns = data_tsns_sent(&h, CLIENT);
    let mut highest = tsns[0].1;
    let mut last_rtx: Option<u32> = None;
    let mut retransmissions = 0;
    for &(t, tsn) in &tsns[1..] {
        if timeouts.contains(&t) {
            last_rtx = None; // a timeout marks everything outstanding again
        }
        if tsn.wrapping_sub(highest) as i32 > 0 {
            highest = tsn;
            continue;
        }
        retransmissions += 1;
        if let Some(prev) = last_rtx {
            assert!(tsn.wrapping_sub(prev) as i32 > 0, "at {t:?}: TSN {tsn} retransmitted after {prev}");
        }
        last_rtx = Some(tsn);
    }
    assert!(retransmissions >= 10, "{retransmissions}");
}

#[test]
fn an_init_with_tag_zero_is_discarded_and_one_without_streams_is_aborted() {
    // §3.3.2: an INIT whose Initiate Tag is 0 is silently discarded; one announcing no outbound
    // or no inbound streams gets ABORT under its Initiate Tag. Either way an association the
    // INIT reaches is left as it is.
    let mut h = connected(1, Config::default());
    let before = (h.assoc_ref(SERVER).local_tag(), h.assoc_ref(SERVER).peer_tag());
    let now = h.now;
    let s = addr(SERVER, 0);
    // From the association's peer, and out of the blue.
    for from in [addr(CLIENT, 0), "10.7.0.1".parse().unwrap()] {
        h.eps[SERVER].handle(now, from, s, &to_server(0, Chunk::Init(init_chunk(0, &[]))));
        assert_eq!(replies(&mut h, SERVER, now), vec![], "from {from}");
        for (os, mis) in [(0, 10), (10, 0)] {
            let init = InitChunk { outbound_streams: os, inbound_streams: mis, ..init_chunk(0x77, &[]) };
            h.eps[SERVER].handle(now, from, s, &to_server(0, Chunk::Init(init)));
            let reply = replies(&mut h, SERVER, now);
            assert_eq!(reply.len(), 1, "from {from}");
            assert_eq!(reply[0].header.verification_tag, 0x77);
            let abort = Chunk::Abort { t_bit: false, causes: vec![ErrorCause::InvalidMandatoryParameter] };
            assert_eq!(reply[0].chunks, vec![abort]);
        }
    }
    let a = h.assoc_ref(SERVER);
    assert_eq!((a.local_tag(), a.peer_tag(), a.state()), (before.0, before.1, State::Established));
    assert_eq!(h.eps[SERVER].len(), 1);

    // In SHUTDOWN-ACK-SENT an INIT makes the association repeat its SHUTDOWN ACK (§9.2); an
    // invalid one does not.
    h.drop_nth.push((CLIENT, h.sent_count[CLIENT] + 2));
    h.assoc(CLIENT).shutdown(now);
    h.run_for(ms(25));
    assert_eq!(h.assoc_ref(SERVER).state(), State::ShutdownAckSent);
    let now = h.now;
    h.eps[SERVER].handle(now, addr(CLIENT, 0), s, &to_server(0, Chunk::Init(init_chunk(0, &[]))));
    assert_eq!(replies(&mut h, SERVER, now), vec![]);
}

#[test]
fn an_init_to_an_endpoint_that_does_not_listen_gets_an_abort_under_its_initiate_tag() {
    // §8.4 3: the ABORT answering an INIT carries the INIT's Initiate Tag, T bit clear; the
    // client's association accepts it under its own tag and closes.
    let mut h = Harness::new(Config::default(), Config::default(), 1, ms(10), 7);
    let ep = Endpoint::new(Config::default(), vec![addr(SERVER, 0)], PORTS[SERVER], false, 22);
    h.replace_endpoint(SERVER, ep);
    h.connect();
    h.run_for(ms(100));
    let tag = h.assoc_ref(CLIENT).local_tag();
    let server = sent_by(&h, SERVER, Instant::ZERO);
    assert_eq!(server.len(), 1);
    assert_eq!(server[0].1.header.verification_tag, tag);
    assert_eq!(server[0].1.chunks, vec![Chunk::Abort { t_bit: false, causes: vec![] }]);
    let closed = h.event_times(CLIENT, |e| *e == Event::Closed { reason: CloseReason::AbortedByPeer });
    assert_eq!(closed, vec![Instant::ZERO + ms(20)]);
}

#[test]
fn an_abort_in_cookie_wait_needs_the_association_tag() {
    // §8.5.1 B: an ABORT with the T bit carries the tag its sender found in our packet, the
    // peer's tag, which COOKIE-WAIT does not know yet: there, only an ABORT under our own tag
    // (T bit clear) counts. Tag 0 with the T bit would let anyone end the handshake.
    let mut h = Harness::new(Config::default(), Config::default(), 1, ms(10), 7);
    h.drop_nth.push((CLIENT, 1));
    h.connect();
    h.run_for(ms(5));
    assert_eq!(h.assoc_ref(CLIENT).state(), State::CookieWait);
    let now = h.now;
    let (s, c) = (addr(SERVER, 0), addr(CLIENT, 0));
    h.eps[CLIENT].handle(now, s, c, &to_client(0, Chunk::Abort { t_bit: true, causes: vec![] }));
    assert_eq!(h.assoc_ref(CLIENT).state(), State::CookieWait);
    assert_eq!(h.assoc_ref(CLIENT).stats().bad_verification_tag, 1);
    let tag = h.assoc_ref(CLIENT).local_tag();
    h.eps[CLIENT].handle(now, s, c, &to_client(tag, Chunk::Abort { t_bit: false, causes: vec![] }));
    assert_eq!(h.assoc_ref(CLIENT).state(), State::Closed);
    assert_eq!(h.assoc(CLIENT).poll_event(), Some(Event::Closed { reason: CloseReason::AbortedByPeer }));
}

#[test]
fn an_init_from_a_new_address_listing_a_known_one_reaches_the_association() {
    // The association is found by any address the INIT gives, not only its source: the new
    // address is refused (§5.2.2) instead of opening a second, overlapping association.
    let mut h = connected(1, Config::default());
    let old = (h.assoc_ref(SERVER).local_tag(), h.assoc_ref(SERVER).peer_tag());
    let now = h.now;
    let new_addr: std::net::Ipv4Addr = "10.9.0.1".parse().unwrap();
    let known: std::net::Ipv4Addr = "10.0.0.1".parse().unwrap();
    assert_eq!(IpAddr::from(known), addr(CLIENT, 0));
    let init = init_chunk(0x1234_5678, &[known]);
    h.eps[SERVER].handle(now, new_addr.into(), addr(SERVER, 0), &to_server(0, Chunk::Init(init)));
    let reply = replies(&mut h, SERVER, now);
    assert_eq!(reply.len(), 1);
    assert_eq!(reply[0].header.verification_tag, 0x1234_5678);
    let cause =
        ErrorCause::RestartWithNewAddresses { addresses: Parameter::emit_list(&[Parameter::Ipv4Address(new_addr)]) };
    assert_eq!(reply[0].chunks, vec![Chunk::Abort { t_bit: false, causes: vec![cause] }]);
    assert_eq!(h.eps[SERVER].len(), 1);
    let s = h.assoc_ref(SERVER);
    assert_eq!((s.local_tag(), s.peer_tag(), s.state()), (old.0, old.1, State::Established));
}

#[test]
fn a_cookie_echo_from_a_new_address_reaches_the_association_its_cookie_names() {
    // A restarted peer's INIT came from the known address; its COOKIE ECHO comes from another
    // one. The cookie's addresses name the association, which restarts (§5.2.4 A); no second
    // association is made from the cookie.
    let mut h = connected(1, Config::default());
    let now = h.now;
    let ack = restart_init(&mut h, 0x1234_5678, now);
    let echo = to_server(ack.initiate_tag, Chunk::CookieEcho { cookie: cookie_of(&ack) });
    h.eps[SERVER].handle(now, "10.9.0.1".parse().unwrap(), addr(SERVER, 0), &echo);
    let reply = replies(&mut h, SERVER, now);
    assert_eq!(reply.len(), 1);
    assert_eq!((reply[0].header.verification_tag, &reply[0].chunks), (0x1234_5678, &vec![Chunk::CookieAck]));
    assert_eq!(h.eps[SERVER].len(), 1);
    let s = h.eps[SERVER].association_mut(AssocId::new(0)).unwrap();
    assert_eq!((s.local_tag(), s.peer_tag()), (ack.initiate_tag, 0x1234_5678));
    assert_eq!(s.poll_event(), Some(Event::Restarted { discarded_bytes: 0 }));
}

/// Every packet `side`'s endpoint has to send at `now`.
fn outputs(h: &mut Harness, side: usize, now: Instant) -> Vec<Vec<u8>> {
    std::iter::from_fn(|| h.eps[side].poll_transmit(now)).map(|d| d.payload).collect()
}

/// Hands `packet` from `from`'s first address to the other side's endpoint at `now`; returns
/// what that endpoint sends then.
fn deliver(h: &mut Harness, from: usize, packet: &[u8], now: Instant) -> Vec<Vec<u8>> {
    let to = 1 - from;
    h.eps[to].handle(now, addr(from, 0), addr(to, 0), packet);
    outputs(h, to, now)
}

/// The chunks of each packet.
fn chunks_of(packets: &[Vec<u8>]) -> Vec<Vec<Chunk>> {
    packets.iter().map(|p| Packet::parse(p).unwrap().chunks).collect()
}

/// The chunk of `packets`, which must be one packet of one chunk.
fn only_chunk(packets: &[Vec<u8>]) -> Chunk {
    let mut chunks = chunks_of(packets);
    assert!(chunks.len() == 1 && chunks[0].len() == 1, "{chunks:?}");
    chunks.remove(0).remove(0)
}

#[test]
fn a_collision_after_a_stale_cookie_error_establishes_the_association() {
    // Packets are handed over by hand, one-way delay 10 ms. The server's cookies live 5 ms.
    let server = Config { valid_cookie_life: ms(5), ..Config::default() };
    let mut h = Harness::new(Config::default(), server, 1, ms(10), 31);
    let t = |v: u64| Instant::ZERO + ms(v);
    h.connect_from(CLIENT);
    h.connect_from(SERVER);
    let c_init = outputs(&mut h, CLIENT, t(0)).remove(0);
    let s_init = outputs(&mut h, SERVER, t(0)).remove(0);
    // The server's INIT reaches the client, whose INIT ACK (its own tag, §5.2.1) is lost.
    assert!(matches!(only_chunk(&deliver(&mut h, SERVER, &s_init, t(10))), Chunk::InitAck(_)));
    // The client's INIT gets the server's INIT ACK; the client echoes its cookie.
    let s_ack = deliver(&mut h, CLIENT, &c_init, t(10));
    let c_echo = deliver(&mut h, SERVER, &s_ack[0], t(20));
    assert_eq!(h.assoc_ref(CLIENT).state(), State::CookieEchoed);
    // The server, still in COOKIE-WAIT, finds the cookie 15 ms past its life: Stale Cookie
    // (§5.2.4 step 3). The client starts again from INIT (§5.2.6), which is lost.
    let error = deliver(&mut h, CLIENT, &c_echo[0], t(30));
    assert!(matches!(only_chunk(&error), Chunk::Error { .. }));
    let c_init2 = deliver(&mut h, SERVER, &error[0], t(40));
    assert!(matches!(only_chunk(&c_init2), Chunk::Init(_)));
    assert_eq!(h.assoc_ref(CLIENT).state(), State::CookieWait);
    // The server's INIT comes again and the client, in COOKIE-WAIT, answers with its own tag;
    // the server echoes that cookie. It has the client's tag and the server's: action B
    // (§5.2.4), the client takes the server's INIT from it and is ESTABLISHED. Had COOKIE-WAIT
    // kept the peer tag of the stale handshake (the server's), both tags would have matched
    // (D), which only acknowledges, and the client would have stayed in COOKIE-WAIT.
    let c_ack = deliver(&mut h, SERVER, &s_init, t(50));
    let s_echo = deliver(&mut h, CLIENT, &c_ack[0], t(60));
    assert_eq!(h.assoc_ref(SERVER).state(), State::CookieEchoed);
    let c_cookie_ack = deliver(&mut h, SERVER, &s_echo[0], t(70));
    assert_eq!(chunks_of(&c_cookie_ack), vec![vec![Chunk::CookieAck]]);
    assert_eq!(h.assoc_ref(CLIENT).state(), State::Established);
    assert!(deliver(&mut h, CLIENT, &c_cookie_ack[0], t(80)).is_empty());
    assert_eq!(h.assoc_ref(SERVER).state(), State::Established);
    let (c, s) = (h.assoc_ref(CLIENT), h.assoc_ref(SERVER));
    assert_eq!((c.peer_tag(), s.peer_tag()), (s.local_tag(), c.local_tag()));
    let events: Vec<Event> = std::iter::from_fn(|| h.assoc(CLIENT).poll_event()).collect();
    assert_eq!(events, vec![Event::PeerError { causes: vec![3] }, Event::Connected]);
    h.now = t(80);
    assert!(data_flows_both_ways(&mut h));
}

#[test]
fn a_cookie_ack_leads_its_packet_even_ahead_of_a_sack() {
    // The client's COOKIE ECHO, with a DATA chunk bundled after it (§5.1 D), arrives twice
    // (its COOKIE ACK was lost). The second time the DATA is a duplicate and a SACK is due at
    // once (§6.2), but the COOKIE ACK must still be the first chunk of its packet (§5.1 D).
    let mut h = Harness::new(Config::default(), Config::default(), 1, ms(10), 7);
    let t = |v: u64| Instant::ZERO + ms(v);
    h.connect();
    let init = outputs(&mut h, CLIENT, t(0)).remove(0);
    let Chunk::Init(ref init_chunk) = only_chunk(std::slice::from_ref(&init)) else { panic!() };
    let tsn = init_chunk.initial_tsn;
    let init_ack = deliver(&mut h, CLIENT, &init, t(10)).remove(0);
    let mut echo = Packet::parse(&deliver(&mut h, SERVER, &init_ack, t(20))[0]).unwrap();
    echo.chunks.push(Chunk::Data(sctp::wire::DataChunk {
        immediate: false,
        unordered: false,
        beginning: true,
        ending: true,
        tsn,
        stream_id: 0,
        ssn: 0,
        ppid: 0,
        user_data: vec![7; 100],
    }));
    let echo = echo.emit();
    assert_eq!(chunks_of(&deliver(&mut h, CLIENT, &echo, t(30))), vec![vec![Chunk::CookieAck]]);
    let again = chunks_of(&deliver(&mut h, CLIENT, &echo, t(40)));
    assert_eq!(again.len(), 1, "{again:?}");
    assert_eq!(again[0].len(), 2, "{again:?}");
    assert_eq!(again[0][0], Chunk::CookieAck);
    let Chunk::Sack(ref sack) = again[0][1] else { panic!("{again:?}") };
    assert_eq!((sack.cumulative_tsn_ack, &sack.duplicate_tsns), (tsn, &vec![tsn]));
    assert_eq!(h.eps[SERVER].len(), 1);
}

#[test]
fn a_restart_keeps_the_path_ids_and_the_primary() {
    // The restarted client sends its INIT to the server's second address, from its own
    // second address, so the INIT's addresses come in the other order: [C1, C0]. The server
    // keeps its paths in their old order (a PathId keeps naming one address) and C0 primary.
    let mut h = connected(2, Config::default());
    let remotes = |h: &Harness| h.assoc_ref(SERVER).paths().values().map(|p| p.remote).collect::<Vec<_>>();
    let (c0, c1) = (addr(CLIENT, 0), addr(CLIENT, 1));
    assert_eq!((remotes(&h), h.assoc_ref(SERVER).primary()), (vec![c0, c1], P0));
    let fresh = Endpoint::new(Config::default(), h.addrs[CLIENT].clone(), PORTS[CLIENT], false, 99);
    h.replace_endpoint(CLIENT, fresh);
    let t = h.now;
    let id = h.eps[CLIENT].connect(t, &[addr(SERVER, 1), addr(SERVER, 0)], PORTS[SERVER]);
    h.assoc[CLIENT] = Some(id);
    h.run_for(ms(35));
    assert_eq!(h.event_times(SERVER, |e| matches!(e, Event::Restarted { .. })), vec![t + ms(30)]);
    let s = h.assoc_ref(SERVER);
    assert_eq!((remotes(&h), s.primary(), s.data_path()), (vec![c0, c1], P0, P0));
    // As for a new association, the address the INIT came from is confirmed (§5.4); the
    // other one is probed at once.
    assert_eq!(s.paths().values().map(|p| p.confirmed).collect::<Vec<_>>(), vec![false, true]);
    assert!(h.event_times(SERVER, |e| matches!(e, Event::PrimaryChanged { .. })).is_empty());
    h.run_for(ms(100));
    assert!(h.assoc_ref(SERVER).paths().values().all(|p| p.confirmed));
    assert!(data_flows_both_ways(&mut h));
    assert_eq!(h.assoc_ref(SERVER).data_path(), P0);
}

#[test]
fn an_init_for_an_established_association_is_answered_with_its_streams_and_window() {
    // §5.2.2: the INIT ACK answering an INIT for an existing association copies the
    // association's parameters: its stream counts (3 out, 5 in, negotiated with a client that
    // asked for 5 and accepts 3) and its window (the receive buffer less 5000 unread bytes).
    let client = Config { outbound_streams: 5, max_inbound_streams: 3, ..Config::default() };
    let mut h = Harness::new(client, Config::default(), 1, ms(10), 7);
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: 5000, msg_size: 1000, ..Default::default() };
    h.run_for(Duration::from_secs(1));
    let s = h.assoc_ref(SERVER);
    assert_eq!((s.outbound_streams(), s.inbound_streams(), s.receive_buffer_used()), (3, 5, 5000));
    let now = h.now;
    let ack = restart_init(&mut h, 0x1234_5678, now);
    let recv_buffer = Config::default().recv_buffer;
    assert_eq!((ack.outbound_streams, ack.inbound_streams, ack.a_rwnd), (3, 5, recv_buffer - 5000));
}

#[test]
fn a_restart_keeps_unread_messages_and_advertises_the_space_they_leave() {
    let mut h = connected(1, Config::default());
    h.apps[CLIENT] = harness::App { to_send: 5000, msg_size: 1000, ..Default::default() };
    h.run_for(Duration::from_secs(1));
    assert_eq!(h.assoc_ref(SERVER).receive_buffer_used(), 5000);
    let fresh = Endpoint::new(Config::default(), vec![addr(CLIENT, 0)], PORTS[CLIENT], false, 99);
    h.replace_endpoint(CLIENT, fresh);
    let t = h.now;
    h.connect();
    h.run_for(ms(100));
    assert_eq!(h.event_times(SERVER, |e| matches!(e, Event::Restarted { .. })), vec![t + ms(30)]);
    // The INIT ACK offered the free space (§5.2.2), and the association still holds the five
    // messages and advertises what they leave.
    let recv_buffer = Config::default().recv_buffer;
    let init_ack = match sent_by(&h, SERVER, t)[0].1.chunks[0] {
        Chunk::InitAck(ref a) => a.clone(),
        ref other => panic!("{other:?}"),
    };
    assert_eq!(init_ack.a_rwnd, recv_buffer - 5000);
    let s = h.assoc_ref(SERVER);
    assert_eq!((s.receive_buffer_used(), s.a_rwnd()), (5000, recv_buffer - 5000));
    // Reading them frees 5000 bytes, more than an MTU: a SACK tells the peer at once, with
    // the whole buffer and the cumulative TSN just below the new INIT's initial TSN.
    let t_read = h.now;
    h.apps[SERVER].reading = true;
    h.run_for(ms(1));
    let seqs: Vec<u64> =
        h.apps[SERVER].received.iter().map(|m| u64::from_be_bytes(m.data[..8].try_into().unwrap())).collect();
    assert_eq!(seqs, vec![0, 1, 2, 3, 4]);
    let client_init_tsn = match sent_by(&h, CLIENT, t)[0].1.chunks[0] {
        Chunk::Init(ref i) => i.initial_tsn,
        ref other => panic!("{other:?}"),
    };
    let sacks: Vec<(Instant, u32, u32)> = sent_by(&h, SERVER, t_read)
        .iter()
        .flat_map(|(at, p)| p.chunks.iter().map(move |c| (*at, c)))
        .filter_map(|(at, c)| match c {
            Chunk::Sack(s) => Some((at, s.cumulative_tsn_ack, s.a_rwnd)),
            _ => None,
        })
        .collect();
    assert_eq!(sacks, vec![(t_read, client_init_tsn.wrapping_sub(1), recv_buffer)]);
}

#[test]
fn a_restart_with_data_in_flight_starts_every_path_afresh() {
    let mut h = connected(1, Config::default());
    let initial = |h: &Harness| {
        let a = h.assoc_ref(SERVER);
        sctp::Path::new(a.paths()[P0].remote, a.config(), Config::default().recv_buffer, 0)
    };
    // A first transfer grows the server's cwnd; one lost packet makes a fast retransmit
    // lower its ssthresh.
    h.drop_nth.push((SERVER, h.sent_count[SERVER] + 10));
    h.apps[SERVER] = harness::App { to_send: 200_000, msg_size: 1000, ..Default::default() };
    h.apps[CLIENT].reading = true;
    h.run_for(Duration::from_secs(5));
    assert_eq!(h.apps[CLIENT].received_bytes, 200_000);
    let p = &h.assoc_ref(SERVER).paths()[P0];
    assert!(p.stats.fast_retransmissions > 0);
    assert!(p.cc.cwnd > initial(&h).cc.cwnd && p.cc.ssthresh < initial(&h).cc.ssthresh, "{:?}", p.cc);
    assert!(p.rto.srtt.is_some());

    // 50 kB more are queued, and a window of it is in flight when the client restarts; the
    // DATA reaches the new client, which discards it (wrong tag).
    h.apps[SERVER].to_send = 50_000;
    let fresh = Endpoint::new(Config::default(), vec![addr(CLIENT, 0)], PORTS[CLIENT], false, 99);
    h.replace_endpoint(CLIENT, fresh);
    let t = h.now;
    h.connect();
    h.run_until(t + ms(29));
    let p = &h.assoc_ref(SERVER).paths()[P0];
    let t3 = h.assoc_ref(SERVER).timer(Timer::T3Rtx(P0));
    assert!(p.flight_size > 0 && t3.is_some(), "{} {:?}", p.flight_size, t3);
    // The COOKIE ECHO at t + 30 ms restarts the association: nothing outstanding or queued,
    // T3-rtx stopped, the path as new: RTO, cwnd and ssthresh at their initial values.
    h.run_until(t + ms(30));
    assert_eq!(h.event_times(SERVER, |e| matches!(e, Event::Restarted { .. })), vec![t + ms(30)]);
    assert!(h.events[SERVER].iter().any(|(_, e)| *e == Event::Restarted { discarded_bytes: 50_000 }));
    let s = h.assoc_ref(SERVER);
    assert_eq!((s.outstanding_chunks(), s.buffered_bytes(), s.error_count()), (0, 0, 0));
    let p = &s.paths()[P0];
    let fresh = initial(&h);
    assert_eq!((p.flight_size, s.timer(Timer::T3Rtx(P0)), p.state, p.error_count), (0, None, PathState::Active, 0));
    assert_eq!((p.cc, &p.rto), (fresh.cc, &fresh.rto));
    assert!(p.stats.fast_retransmissions > 0, "counters go on");
}

/// The client of a one-path harness, in COOKIE-ECHOED (25 ms after connecting).
fn client_in_cookie_echoed() -> Harness {
    let mut h = Harness::new(Config::default(), Config::default(), 1, ms(10), 7);
    h.connect();
    h.run_for(ms(25));
    assert_eq!(h.assoc_ref(CLIENT).state(), State::CookieEchoed);
    h
}

#[test]
fn an_init_adding_an_address_in_cookie_echoed_is_aborted_and_the_handshake_goes_on() {
    // §5.2.1: in COOKIE-ECHOED the peer's addresses are known; an INIT adding one gets ABORT
    // with the new address (§5.2.2), and the association goes on as it was.
    let mut h = client_in_cookie_echoed();
    let (now, timeout) = (h.now, h.eps[CLIENT].poll_timeout());
    assert_eq!(timeout, Some(Instant::ZERO + ms(1020)), "T1-cookie");
    let tags = (h.assoc_ref(CLIENT).local_tag(), h.assoc_ref(CLIENT).peer_tag());
    let new_addr: std::net::Ipv4Addr = "10.9.0.2".parse().unwrap();
    let init = to_client(0, Chunk::Init(init_chunk(0x4321, &[new_addr])));
    h.eps[CLIENT].handle(now, addr(SERVER, 0), addr(CLIENT, 0), &init);
    let reply = replies(&mut h, CLIENT, now);
    assert_eq!(reply.len(), 1);
    assert_eq!(reply[0].header.verification_tag, 0x4321);
    let cause =
        ErrorCause::RestartWithNewAddresses { addresses: Parameter::emit_list(&[Parameter::Ipv4Address(new_addr)]) };
    assert_eq!(reply[0].chunks, vec![Chunk::Abort { t_bit: false, causes: vec![cause] }]);
    let c = h.assoc_ref(CLIENT);
    assert_eq!((c.state(), c.local_tag(), c.peer_tag()), (State::CookieEchoed, tags.0, tags.1));
    assert_eq!(h.eps[CLIENT].poll_timeout(), timeout);
    h.run_for(ms(100));
    assert_eq!(h.event_times(CLIENT, |e| *e == Event::Connected), vec![Instant::ZERO + ms(40)]);
}

#[test]
fn an_init_in_cookie_wait_or_cookie_echoed_leaves_t1_running() {
    // §5.2.1: the INIT ACK answering an INIT in COOKIE-WAIT or COOKIE-ECHOED changes nothing
    // in the association; T1 goes on as it was. The client's first INIT is lost, so T1-init
    // repeats it at 1 s.
    let mut h = Harness::new(Config::default(), Config::default(), 1, ms(10), 7);
    h.drop_nth.push((CLIENT, 1));
    h.connect();
    let (s, c) = (addr(SERVER, 0), addr(CLIENT, 0));
    let mut init_ack_tags = Vec::new();
    for (at, state, t1) in [(5, State::CookieWait, 1000), (1025, State::CookieEchoed, 2020)] {
        h.run_until(Instant::ZERO + ms(at));
        assert_eq!(h.assoc_ref(CLIENT).state(), state);
        let timeout = h.eps[CLIENT].poll_timeout();
        assert_eq!(timeout, Some(Instant::ZERO + ms(t1)));
        let now = h.now;
        h.eps[CLIENT].handle(now, s, c, &to_client(0, Chunk::Init(init_chunk(0x4321, &[]))));
        let reply = replies(&mut h, CLIENT, now);
        assert_eq!(reply.len(), 1);
        let [Chunk::InitAck(ref ack)] = reply[0].chunks[..] else { panic!("{reply:?}") };
        init_ack_tags.push((reply[0].header.verification_tag, ack.initiate_tag));
        assert_eq!((h.assoc_ref(CLIENT).state(), h.eps[CLIENT].poll_timeout()), (state, timeout));
    }
    let own = h.assoc_ref(CLIENT).local_tag();
    assert_eq!(init_ack_tags, vec![(0x4321, own), (0x4321, own)]);
    h.run_for(ms(100));
    assert_eq!(h.event_times(CLIENT, |e| *e == Event::Connected), vec![Instant::ZERO + ms(1040)]);
}

#[test]
fn a_collision_cookie_in_established_only_changes_the_peer_tag() {
    // An INIT reaches the client in COOKIE-ECHOED (as if the server had connected too, with
    // tag 0x4321): INIT ACK with the client's own tag (§5.2.1). The client is ESTABLISHED by
    // the time that cookie comes back: our tag and a new peer tag, action B (§5.2.4). The
    // association takes the new peer tag, and nothing else, and acknowledges under it.
    let mut h = client_in_cookie_echoed();
    let (s, c) = (addr(SERVER, 0), addr(CLIENT, 0));
    let now = h.now;
    h.eps[CLIENT].handle(now, s, c, &to_client(0, Chunk::Init(init_chunk(0x4321, &[]))));
    let reply = replies(&mut h, CLIENT, now);
    let [Chunk::InitAck(ref ack)] = reply[0].chunks[..] else { panic!("{reply:?}") };
    let ack = ack.clone();
    h.run_for(ms(100));
    let snapshot = |h: &Harness| {
        let a = h.assoc_ref(CLIENT);
        let paths: Vec<_> = a.paths().values().map(|p| (p.remote, p.confirmed, p.state, p.cc)).collect();
        (
            a.state(),
            a.local_tag(),
            a.outbound_streams(),
            a.inbound_streams(),
            a.highest_tsn_sent(),
            a.peer_rwnd(),
            paths,
        )
    };
    let before = snapshot(&h);
    assert_eq!(before.0, State::Established);
    assert_ne!(h.assoc_ref(CLIENT).peer_tag(), 0x4321);
    let events = h.events[CLIENT].len();
    let now = h.now;
    let echo = to_client(ack.initiate_tag, Chunk::CookieEcho { cookie: cookie_of(&ack) });
    h.eps[CLIENT].handle(now, s, c, &echo);
    let reply = replies(&mut h, CLIENT, now);
    assert_eq!(reply.len(), 1);
    assert_eq!((reply[0].header.verification_tag, &reply[0].chunks), (0x4321, &vec![Chunk::CookieAck]));
    assert_eq!(h.assoc_ref(CLIENT).peer_tag(), 0x4321);
    assert_eq!(snapshot(&h), before);
    assert_eq!(h.assoc(CLIENT).poll_event(), None);
    assert_eq!(h.events[CLIENT].len(), events);
}

#[test]
fn a_shutdown_ack_in_cookie_echoed_is_out_of_the_blue() {
    // §8.5.1 E: in COOKIE-WAIT or COOKIE-ECHOED a SHUTDOWN ACK is out of the blue (§8.4 5):
    // SHUTDOWN COMPLETE with the T bit, tag reflected; the handshake goes on.
    let mut h = client_in_cookie_echoed();
    let (now, timeout) = (h.now, h.eps[CLIENT].poll_timeout());
    h.eps[CLIENT].handle(now, addr(SERVER, 0), addr(CLIENT, 0), &to_client(0x4321, Chunk::ShutdownAck));
    let reply = replies(&mut h, CLIENT, now);
    assert_eq!(reply.len(), 1);
    assert_eq!(reply[0].header.verification_tag, 0x4321);
    assert_eq!(reply[0].chunks, vec![Chunk::ShutdownComplete { t_bit: true }]);
    assert_eq!((h.assoc_ref(CLIENT).state(), h.eps[CLIENT].poll_timeout()), (State::CookieEchoed, timeout));
    h.run_for(ms(100));
    assert_eq!(h.event_times(CLIENT, |e| *e == Event::Connected), vec![Instant::ZERO + ms(40)]);
}

#[test]
fn a_restart_during_shutdown_pending_reestablishes_and_drops_the_shutdown() {
    // The client reads nothing through a small window, so the server's data stays queued
    // and its shutdown waits in SHUTDOWN-PENDING when the client host restarts.
    let client = Config { recv_buffer: 4000, ..Config::default() };
    let mut h = Harness::new(client, Config::default(), 1, ms(10), 7);
    h.connect();
    h.run_for(ms(100));
    h.apps[SERVER] = harness::App { to_send: 20_000, msg_size: 1000, ..Default::default() };
    h.run_for(Duration::from_secs(1));
    let now = h.now;
    h.assoc(SERVER).shutdown(now);
    assert_eq!(h.assoc_ref(SERVER).state(), State::ShutdownPending);

    let fresh = Endpoint::new(Config::default(), vec![addr(CLIENT, 0)], PORTS[CLIENT], false, 99);
    h.replace_endpoint(CLIENT, fresh);
    h.apps[CLIENT] = harness::App { reading: true, ..Default::default() };
    h.connect();
    h.run_for(ms(100));
    // §5.2.4 A: the association starts over, ESTABLISHED; the data the old peer never got
    // is discarded and so is the shutdown request (Event::Restarted says so).
    let restarted: Vec<u32> = h.events[SERVER]
        .iter()
        .filter_map(|(_, e)| match e {
            Event::Restarted { discarded_bytes } => Some(*discarded_bytes),
            _ => None,
        })
        .collect();
    assert_eq!(restarted.len(), 1);
    assert!(restarted[0] > 0 && restarted[0] < 20_000, "{restarted:?}");
    assert_eq!(h.assoc_ref(SERVER).state(), State::Established);
    // The shutdown guard timer (T5, 5 x RTO.Max) is gone with the shutdown: the association
    // is still up long after it would have fired, and carries new data.
    h.run_for(Duration::from_secs(400));
    assert!(h.event_times(SERVER, |e| matches!(e, Event::Closed { .. })).is_empty());
    assert_eq!(h.assoc_ref(SERVER).state(), State::Established);
    h.apps[SERVER].to_send = 5_000;
    h.apps[SERVER].sent_msgs = 0;
    h.run_for(Duration::from_secs(5));
    assert_eq!(h.apps[CLIENT].received_bytes, 5_000);
}
