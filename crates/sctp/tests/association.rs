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
