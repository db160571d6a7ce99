//! An endpoint with many associations keeps track of which may have a packet, an event or a
//! timer (`Endpoint::set_track_above`) instead of asking every one after each input: the
//! packets, events and timers must be exactly those of the plain scan, in the same order.
//! Twenty-four clients (one endpoint and association each) talk to one server endpoint over a
//! lossy network, sending messages of random sizes at random times; some shut down or abort
//! midway, so associations leave the server's table while others keep running. The whole
//! transcript (every datagram with its time and sender, every event, every close) of the run
//! with tracking must equal the one with the plain scan, for several seeds.
#![allow(missing_docs, clippy::unwrap_used)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::{IpAddr, Ipv4Addr};

use sctp::{Config, Endpoint};
use simtime::{Duration, Instant};

const CLIENTS: usize = 24;

/// A small deterministic generator (xorshift64*), so the test needs no RNG crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn client_addr(i: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 1, i as u8 + 1))
}

/// A datagram in flight: arrival, sequence number, receiving endpoint, source and destination
/// addresses, bytes.
type InFlight = (Instant, u64, usize, IpAddr, IpAddr, Vec<u8>);

const SERVER: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));

fn transcript(seed: u64, track_above: usize) -> Vec<String> {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut server = Endpoint::new(Config::default(), vec![SERVER], 5000, true, seed);
    server.set_track_above(track_above);
    let mut eps: Vec<Endpoint> = vec![server];
    let mut ids = Vec::new();
    let mut now = Instant::ZERO;
    for i in 0..CLIENTS {
        let mut c = Endpoint::new(Config::default(), vec![client_addr(i)], 4000 + i as u16, false, seed + 1 + i as u64);
        ids.push(c.connect(now, &[SERVER], 5000));
        eps.push(c);
    }
    let mut net: BinaryHeap<Reverse<InFlight>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut log = Vec::new();
    let end = Instant::ZERO + Duration::from_secs(20);
    let mut next_app = Instant::ZERO + Duration::from_millis(10);
    let endpoint_of = |addr: IpAddr| -> usize {
        match addr {
            IpAddr::V4(a) if a.octets()[2] == 1 => a.octets()[3] as usize,
            _ => 0,
        }
    };
    loop {
        // Drain every endpoint: packets, events, closes.
        for (k, ep) in eps.iter_mut().enumerate() {
            while let Some(d) = ep.poll_transmit(now) {
                log.push(format!("{} tx {k} {:?} {}", now.as_nanos(), d.assoc, hex(d.packet())));
                seq += 1;
                if rng.below(100) >= 3 {
                    let delay = Duration::from_micros(500 + rng.below(1000));
                    let to = endpoint_of(d.remote);
                    let from = d.local.unwrap_or(if k == 0 { SERVER } else { client_addr(k - 1) });
                    net.push(Reverse((now + delay, seq, to, from, d.remote, d.packet().to_vec())));
                }
            }
            while let Some((id, e)) = ep.poll_any_event() {
                log.push(format!("{} ev {k} {id:?} {e:?}", now.as_nanos()));
            }
            while let Some((id, a)) = ep.poll_closed() {
                log.push(format!("{} closed {k} {id:?} {:?}", now.as_nanos(), a.state()));
            }
        }
        let timers = eps.iter_mut().filter_map(|e| e.poll_timeout()).min();
        let next = [net.peek().map(|r| r.0 .0), timers, Some(next_app)].into_iter().flatten().min().unwrap();
        if next > end {
            break;
        }
        now = next.max(now);
        if now >= next_app {
            // The applications: clients send, shut down or abort; the server reads only
            // sometimes, so most of its associations stay quiet between inputs.
            next_app = now + Duration::from_millis(10);
            for (i, &id) in ids.iter().enumerate() {
                let c = &mut eps[i + 1];
                match rng.below(400) {
                    0 if i % 3 == 0 => {
                        if let Some(a) = c.association_mut(id) {
                            a.shutdown(now);
                        }
                    }
                    1 if i % 5 == 0 => {
                        if let Some(a) = c.association_mut(id) {
                            a.abort(now);
                        }
                    }
                    n if n < 40 => {
                        let len = 1 + rng.below(4000) as usize;
                        let _ = c.send(id, (n % 2) as u16, 0, false, &vec![i as u8; len]);
                    }
                    _ => {}
                }
            }
            if rng.below(4) == 0 {
                let server_ids: Vec<_> = eps[0].ids().collect();
                for id in server_ids.into_iter().filter(|_| rng.below(2) == 0) {
                    while let Some(m) = eps[0].read(id) {
                        log.push(format!("{} read {id:?} {} {}", now.as_nanos(), m.stream, m.data.len()));
                    }
                }
            }
        }
        while let Some(Reverse((at, ..))) = net.peek() {
            if *at > now {
                break;
            }
            let Reverse((_, _, to, from, dst, bytes)) = net.pop().unwrap();
            eps[to].handle(now, from, dst, &bytes);
        }
        for e in eps.iter_mut() {
            if e.poll_timeout().is_some_and(|t| t <= now) {
                e.handle_timeout(now);
            }
        }
    }
    log
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn tracking_gives_the_plain_scans_packets_events_and_timers() {
    for seed in 1..=6 {
        let plain = transcript(seed, usize::MAX);
        let tracked = transcript(seed, 8);
        // Tracked from the start (one association already exceeds 0).
        let always = transcript(seed, 0);
        assert!(plain.len() > 2_000, "seed {seed}: {} lines", plain.len());
        assert!(plain.iter().any(|l| l.contains(" closed 0 ")), "seed {seed}: no association left the server");
        for (name, other) in [("track_above 8", &tracked), ("track_above 0", &always)] {
            let first = plain.iter().zip(other.iter()).position(|(a, b)| a != b);
            assert!(first.is_none() && plain.len() == other.len(), "seed {seed} {name}: differs at line {first:?}");
        }
    }
}
