//! Nothing derived from a segment can panic the engine: random bytes, mutated valid segments
//! and valid-looking segments with random fields, given as bytes or handed over in a buffer,
//! are dropped or handled, never unwrapped.
#![allow(missing_docs, clippy::unwrap_used)]

mod common;

use common::{Harness, Path, A_ADDR, B_ADDR};
use rand::{Rng, RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use tcp::seq::SeqNumber;
use tcp::wire::{Flags, TcpOptions, TcpRepr, TcpView};
use tcp::{Config, Connection, Duration, Instant};

#[test]
fn random_and_mutated_segments_never_panic() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(77);
    // Connections in several states: listening, connecting, established with data in flight.
    let mut h = Harness::new(Config::default(), Config::default(), Path::default(), 1).transfer(u64::MAX / 2);
    h.run(Instant::ZERO + Duration::from_millis(300));
    let mut conns = [
        Connection::accept(Config::default(), B_ADDR, A_ADDR, 1, Instant::ZERO),
        Connection::connect(Config::default(), A_ADDR, B_ADDR, 2, Instant::ZERO),
        h.a,
        h.b,
    ];
    let mut now = Instant::ZERO + Duration::from_millis(300);
    let mut valid = Vec::new();
    for c in conns.iter_mut() {
        while let Some(s) = c.poll_transmit(now) {
            valid.push(s);
        }
    }
    for i in 0..200_000u32 {
        now += Duration::from_micros(50);
        let bytes = match i % 3 {
            0 => {
                let mut b = vec![0u8; rng.random_range(0..80)];
                rng.fill_bytes(&mut b);
                b
            }
            1 => {
                // A valid segment with a few bytes flipped (checksum then usually fails) ...
                let mut b = valid[rng.random_range(0..valid.len())].clone();
                for _ in 0..rng.random_range(1..4) {
                    let k = rng.random_range(0..b.len());
                    b[k] ^= 1 << rng.random_range(0..8);
                }
                b
            }
            _ => {
                // ... or random header fields and options with a correct checksum.
                let mut options = TcpOptions {
                    mss: rng.random::<bool>().then(|| rng.random()),
                    window_scale: rng.random::<bool>().then(|| rng.random()),
                    ..Default::default()
                };
                options.sack_permitted = rng.random();
                options.timestamps = rng.random::<bool>().then(|| (rng.random(), rng.random()));
                options.sack_len = rng.random_range(0..3);
                for k in 0..options.sack_len as usize {
                    options.sack[k] = (SeqNumber(rng.random()), SeqNumber(rng.random()));
                }
                let payload = vec![0u8; rng.random_range(0..100)];
                let (src, dst) = if rng.random::<bool>() { (A_ADDR, B_ADDR) } else { (B_ADDR, A_ADDR) };
                let repr = TcpRepr {
                    src_port: src.port(),
                    dst_port: dst.port(),
                    seq: SeqNumber(rng.random()),
                    ack: rng.random::<bool>().then(|| SeqNumber(rng.random())),
                    flags: Flags(rng.random::<u8>() & 0x2f),
                    window: rng.random(),
                    options,
                    payload: &payload,
                };
                repr.emit(*src.ip(), *dst.ip())
            }
        };
        if let Ok(v) = TcpView::new(&bytes) {
            let _ = (
                v.src_port(),
                v.dst_port(),
                v.seq(),
                v.ack(),
                v.flags(),
                v.window(),
                v.checksum(),
                v.options(),
                v.payload(),
            );
            let _ = TcpRepr::parse_view(&v);
        }
        let c = &mut conns[i as usize % 4];
        if i % 2 == 0 {
            c.handle_segment(now, &bytes);
        } else {
            // Handed over with its buffer, after a prefix of random length (the kept path);
            // a start past the end is refused, not a panic.
            let at = rng.random_range(0..24);
            let mut buf = vec![0xee; at.min(20)];
            buf.extend_from_slice(&bytes);
            if let Some(back) = c.handle_segment_in(now, buf, at, tcp::wire::Ecn::NotEct) {
                c.recycle(back);
            }
        }
        c.handle_timeout(now);
        c.write(&[1, 2, 3]);
        let mut sink = Vec::new();
        c.read(&mut sink, 100);
        let mut guard = 0;
        while c.poll_transmit(now).is_some() && guard < 10_000 {
            guard += 1;
        }
        while c.poll_event().is_some() {}
    }
    assert!(conns.iter().map(|c| c.stats().malformed).sum::<u64>() > 100_000);
}
