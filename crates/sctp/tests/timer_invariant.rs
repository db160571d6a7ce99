//! Property: after `handle_timeout(now)`, `poll_timeout()` is `None` or later than `now`, for
//! every association, whatever happened before: random traffic with loss, random chunks from
//! the peer (DATA, SACK, SHUTDOWN, SHUTDOWN ACK, HEARTBEAT, ERROR, ABORT, unknown types) under
//! the right tag, application sends, reads, shutdowns and aborts, and timeouts at random
//! instants. Seeded, so a failure reproduces.

use std::net::IpAddr;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use sctp::wire::packet_checksum;
use sctp::{Config, Endpoint};
use simtime::{Duration, Instant};

const PORTS: [u16; 2] = [5000, 6000];

fn addr(side: usize) -> IpAddr {
    IpAddr::from([10, 0, 0, side as u8 + 1])
}

/// A chunk with random contents near what the association expects.
fn random_chunk(rng: &mut Xoshiro256PlusPlus, tsn_base: u32, ack_base: u32) -> Vec<u8> {
    let near = |rng: &mut Xoshiro256PlusPlus, base: u32| base.wrapping_add(rng.random_range(0..24)).wrapping_sub(8);
    let (kind, flags, value): (u8, u8, Vec<u8>) = match rng.random_range(0..12) {
        0..=2 => {
            let mut v = near(rng, tsn_base).to_be_bytes().to_vec();
            v.extend_from_slice(&[0, rng.random_range(0..2), 0, 0, 0, 0, 0, 0]);
            v.extend(std::iter::repeat_n(7, rng.random_range(1..300)));
            (0, rng.random_range(0..16), v)
        }
        3 | 4 => {
            let mut v = near(rng, ack_base).to_be_bytes().to_vec();
            v.extend_from_slice(&rng.random_range(0..200_000u32).to_be_bytes());
            let gaps = rng.random_range(0..3u16);
            v.extend_from_slice(&gaps.to_be_bytes());
            v.extend_from_slice(&0u16.to_be_bytes());
            for _ in 0..gaps {
                let start = rng.random_range(1..10u16);
                v.extend_from_slice(&start.to_be_bytes());
                v.extend_from_slice(&(start + rng.random_range(0..4u16)).to_be_bytes());
            }
            (3, 0, v)
        }
        5 => (7, 0, near(rng, ack_base).to_be_bytes().to_vec()),
        6 => (8, 0, Vec::new()),
        7 => (4, 0, [0, 1, 0, 8, 1, 2, 3, 4].to_vec()),
        8 => (5, 0, [0, 1, 0, 36].iter().copied().chain(std::iter::repeat_n(0, 32)).collect()),
        9 => (9, 0, [0, 3, 0, 8, 0, 0, 1, 0].to_vec()),
        10 => (rng.random_range(64..255), rng.random(), vec![1, 2, 3]),
        _ => (if rng.random_bool(0.2) { 6 } else { 14 }, 0, Vec::new()),
    };
    let mut chunk = vec![kind, flags];
    chunk.extend_from_slice(&((value.len() + 4) as u16).to_be_bytes());
    chunk.extend_from_slice(&value);
    chunk.resize(chunk.len().next_multiple_of(4), 0);
    chunk
}

/// A packet from `from` to the other side, under `tag`, with `chunks` and a valid CRC32c.
fn packet(from: usize, tag: u32, chunks: &[Vec<u8>]) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&PORTS[from].to_be_bytes());
    p.extend_from_slice(&PORTS[1 - from].to_be_bytes());
    p.extend_from_slice(&tag.to_be_bytes());
    p.extend_from_slice(&[0; 4]);
    for c in chunks {
        p.extend_from_slice(c);
    }
    let crc = packet_checksum(&p);
    p[8..12].copy_from_slice(&crc.to_le_bytes());
    p
}

/// Checks the invariant for every association of `ep` after `handle_timeout(now)`.
fn check(ep: &mut Endpoint, now: Instant, seed: u64, step: usize) {
    for (id, a) in ep.associations() {
        let next = a.poll_timeout();
        assert!(
            next.is_none_or(|t| t > now),
            "seed {seed} step {step}: association {id} in {:?} has deadline {next:?} at or before {now:?}",
            a.state()
        );
    }
    assert!(ep.poll_timeout().is_none_or(|t| t > now), "seed {seed} step {step}");
}

fn run(seed: u64) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let config = Config { sack_freq: rng.random_range(1..4), ..Config::default() };
    let mut eps = [
        Endpoint::new(config.clone(), vec![addr(0)], PORTS[0], false, seed),
        Endpoint::new(config, vec![addr(1)], PORTS[1], true, seed + 1),
    ];
    let mut now = Instant::ZERO;
    let mut wire: Vec<(Instant, usize, Vec<u8>)> = Vec::new();
    let loss = rng.random_range(0.0..0.3);
    for step in 0..400 {
        if eps[0].is_empty() || rng.random_bool(0.01) {
            eps[0].connect(now, &[addr(1)], PORTS[1]);
        }
        // The application on each side.
        for ep in &mut eps {
            let ids: Vec<_> = ep.ids().collect();
            for id in ids {
                let Some(a) = ep.association_mut(id) else { continue };
                match rng.random_range(0..40) {
                    0..=14 => {
                        let _ = a.send(0, 0, rng.random_bool(0.3), &vec![1; rng.random_range(1..4000)]);
                    }
                    15..=20 => while a.read().is_some() {},
                    // A message that stayed in its datagram starts after the headers.
                    21..=25 => {
                        while let Some((m, start)) = a.read_in_place() {
                            assert!(start < m.data.len(), "seed {seed} step {step}");
                        }
                    }
                    26 => a.shutdown(now),
                    27 if rng.random_bool(0.1) => a.abort(now),
                    _ => {}
                }
            }
        }
        // A chunk from the peer under the right tag, now and then.
        if rng.random_bool(0.3) {
            let to = rng.random_range(0..2);
            let peer = eps[1 - to].associations().next().map(|(_, a)| a.highest_tsn_sent().wrapping_add(1));
            let target = eps[to].associations().next().map(|(_, a)| (a.local_tag(), a.highest_tsn_sent()));
            if let Some((tag, highest)) = target {
                let chunks: Vec<Vec<u8>> =
                    (0..rng.random_range(1..4)).map(|_| random_chunk(&mut rng, peer.unwrap_or(0), highest)).collect();
                let p = packet(1 - to, tag, &chunks);
                deliver(&mut rng, &mut eps[to], now, to, p);
            }
        }
        // Outputs onto the wire (lossy, 5-15 ms), events and finished associations taken.
        for (side, ep) in eps.iter_mut().enumerate() {
            while let Some(d) = ep.poll_transmit(now) {
                if !rng.random_bool(loss) {
                    wire.push((now + Duration::from_millis(rng.random_range(5..15)), 1 - side, d.payload));
                }
            }
            let ids: Vec<_> = ep.ids().collect();
            for id in ids {
                if let Some(a) = ep.association_mut(id) {
                    while a.poll_event().is_some() {}
                }
            }
            while ep.poll_closed().is_some() {}
        }
        // Time moves to the next packet, the next deadline, or a random instant.
        let next_packet = wire.iter().map(|w| w.0).min();
        let next_timer = eps.iter_mut().filter_map(Endpoint::poll_timeout).min();
        let target = match rng.random_range(0..4) {
            0 => now + Duration::from_millis(rng.random_range(0..3000)),
            _ => [next_packet, next_timer].into_iter().flatten().min().unwrap_or(now + Duration::from_millis(100)),
        };
        now = now.max(target);
        let (due, later): (Vec<_>, Vec<_>) = wire.drain(..).partition(|w| w.0 <= now);
        wire = later;
        for (_, to, p) in due {
            deliver(&mut rng, &mut eps[to], now, to, p);
        }
        for ep in &mut eps {
            if ep.poll_timeout().is_some_and(|t| t <= now) {
                ep.handle_timeout(now);
                check(ep, now, seed, step);
            }
        }
    }
}

/// Hands packet `p` to side `to`: borrowed, or handed over in a datagram after a few bytes of
/// other headers (`Endpoint::handle_datagram`: a message may stay in it).
fn deliver(rng: &mut Xoshiro256PlusPlus, ep: &mut Endpoint, now: Instant, to: usize, p: Vec<u8>) {
    if rng.random_bool(0.5) {
        ep.handle(now, addr(1 - to), addr(to), &p);
    } else {
        let start = rng.random_range(0..40);
        let mut datagram = vec![0xEE; start];
        datagram.extend_from_slice(&p);
        ep.handle_datagram(now, addr(1 - to), addr(to), datagram, start, 0);
    }
}

#[test]
fn after_handle_timeout_no_deadline_is_at_or_before_now() {
    for seed in 0..150 {
        run(seed);
    }
}
