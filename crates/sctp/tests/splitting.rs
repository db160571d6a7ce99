//! Buffer splitting (each destination limited to its share of the send buffer or of the
//! peer's receive window) and the time new data waits for the peer's receiver window.
#![allow(clippy::unwrap_used)]

mod harness;

use harness::{ms, Harness, CLIENT, SERVER};
use sctp::{BufferSplitting, Config};
use simtime::Duration;

/// Two 10 Mbit/s paths, 10 ms and 100 ms each way; the client uploads without end in
/// 1,400-byte messages over both with CMT (round-robin, SFR, CUC, DAC), the server reads.
fn asymmetric(client: Config, server: Config) -> Harness {
    let client = client.with_cmt();
    let mut h = Harness::new(client, server, 2, ms(10), 5);
    for l in &mut h.links {
        l.rate_bps = 10_000_000;
    }
    h.links[1].delay = ms(100);
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: u64::MAX, msg_size: 1400, ..Default::default() };
    h.apps[SERVER].reading = true;
    h
}

/// Runs `h` for a second (the second destination is confirmed by a heartbeat meanwhile),
/// then for `d` a millisecond at a time; the largest bytes-on-path (sent, not yet
/// cumulatively acknowledged) seen per destination then, and the bytes delivered.
fn largest_queued(h: &mut Harness, d: Duration) -> ([u32; 2], u64) {
    h.run_for(Duration::from_secs(1));
    assert!(h.assoc_ref(CLIENT).paths().values().all(|p| p.is_usable()));
    let mut max = [0u32; 2];
    let end = h.now + d;
    while h.now < end {
        h.run_for(ms(1));
        for (id, p) in h.assoc_ref(CLIENT).paths() {
            let i = id.index();
            max[i] = max[i].max(p.queued_bytes);
        }
    }
    (max, h.apps[SERVER].received_bytes)
}

#[test]
fn sender_side_splitting_holds_each_destination_to_half_the_send_buffer() {
    let send_buffer = 64 * 1024;
    let sender = BufferSplitting { sender: true, ..BufferSplitting::default() };
    let split = Config { send_buffer, buffer_splitting: sender, ..Config::default() };
    let (max, delivered) = largest_queued(&mut asymmetric(split, Config::default()), Duration::from_secs(5));
    assert!(max.iter().all(|&m| m <= send_buffer / 2), "{max:?}");
    assert!(max.iter().all(|&m| m > send_buffer / 4), "both destinations used: {max:?}");
    assert!(delivered > 1_000_000, "{delivered}");
    // Without splitting, one destination takes more than its half.
    let plain = Config { send_buffer, ..Config::default() };
    let (max, _) = largest_queued(&mut asymmetric(plain, Config::default()), Duration::from_secs(5));
    assert!(max.iter().any(|&m| m > send_buffer / 2), "{max:?}");
}

#[test]
fn receiver_side_splitting_holds_each_destination_to_half_the_peer_window() {
    let recv_buffer = 64 * 1024;
    let server = Config { recv_buffer, ..Config::default() };
    let receiver = BufferSplitting { receiver: true, ..BufferSplitting::default() };
    let split = Config { send_buffer: 1 << 20, buffer_splitting: receiver, ..Config::default() };
    let (max, delivered) = largest_queued(&mut asymmetric(split, server.clone()), Duration::from_secs(5));
    // Half the window, plus the one MTU of overbooking INET allows.
    assert!(max.iter().all(|&m| m <= recv_buffer / 2 + 1500), "{max:?}");
    assert!(delivered > 1_000_000, "{delivered}");
    let plain = Config { send_buffer: 1 << 20, ..Config::default() };
    let (max, _) = largest_queued(&mut asymmetric(plain, server), Duration::from_secs(5));
    assert!(max.iter().any(|&m| m > recv_buffer / 2 + 1500), "{max:?}");
}

#[test]
fn time_blocked_by_the_peer_rwnd_counts_only_while_the_window_is_full() {
    // One path; the server reads nothing for 2 s, so its 256 KiB fill in about 0.2 s and the
    // client waits for the window until the server starts reading.
    let mut h = Harness::new(Config::default(), Config::default(), 1, ms(10), 3);
    h.links[0].rate_bps = 10_000_000;
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: u64::MAX, msg_size: 1400, ..Default::default() };
    let start = h.now;
    h.run_for(Duration::from_secs(2));
    let blocked = h.assoc_ref(CLIENT).rwnd_blocked_time(h.now);
    assert!(blocked > ms(1_500) && blocked < ms(2_000), "{blocked:?}");
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(2));
    let after = h.assoc_ref(CLIENT).rwnd_blocked_time(h.now);
    // Reading opens the window; the 20 ms path is then limited by cwnd, not rwnd.
    assert!(after - blocked < ms(100), "{blocked:?} then {after:?} since {start:?}");
    assert!(h.apps[SERVER].received_bytes > 1_000_000);

    // A server that always reads never blocks the client.
    let mut h = Harness::new(Config::default(), Config::default(), 1, ms(10), 3);
    h.links[0].rate_bps = 10_000_000;
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: u64::MAX, msg_size: 1400, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(4));
    assert_eq!(h.assoc_ref(CLIENT).rwnd_blocked_time(h.now), Duration::ZERO);
}

#[test]
fn reordering_across_paths_of_different_delay_blocks_a_small_receive_window() {
    // CMT over 10 ms and 100 ms paths with 0.1 % loss (so cwnd, not the window, limits a
    // large buffer): chunks sent over the fast path wait in the receiver for those sent
    // earlier over the slow one, so a 64 KiB receive buffer stays full and the sender waits
    // for the window almost all the time; a 4 MiB one almost never. Measured over 5 s after
    // 5 s of warm-up.
    let blocked = |recv_buffer: u32| {
        let server = Config { recv_buffer, ..Config::default() };
        let mut h = asymmetric(Config { send_buffer: 8 << 20, ..Config::default() }, server);
        for l in &mut h.links {
            l.loss = 0.001;
        }
        h.run_for(Duration::from_secs(5));
        let (before, bytes) = (h.assoc_ref(CLIENT).rwnd_blocked_time(h.now), h.apps[SERVER].received_bytes);
        h.run_for(Duration::from_secs(5));
        (h.assoc_ref(CLIENT).rwnd_blocked_time(h.now) - before, h.apps[SERVER].received_bytes - bytes)
    };
    let (small, small_bytes) = blocked(64 * 1024);
    let (large, large_bytes) = blocked(4 << 20);
    assert!(small > ms(4_500), "64 KiB: blocked {small:?} of 5 s");
    assert!(large < ms(500), "4 MiB: blocked {large:?} of 5 s");
    assert!(large_bytes > 3 * small_bytes, "delivered {small_bytes} and {large_bytes} bytes");
}
