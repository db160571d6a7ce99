//! Property: an endpoint's polls (`poll_transmit`, `poll_any_event`, `poll_timeout`,
//! `handle_timeout`, `read_any`) see everything a look at every association would, though they
//! visit only the associations changed since they last had nothing. A server with many
//! associations exchanges random traffic with its clients over a lossy wire: sends and reads
//! through the endpoint, shutdowns, aborts, timeouts at random instants. At random steps,
//! after the driver has drained the endpoint (and the application read everything), every
//! association is asked directly: none may have a packet, an event or a message left, and the
//! endpoint's earliest timer is theirs. Seeded, so a failure reproduces.

use std::net::{IpAddr, Ipv4Addr};

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use sctp::{AssocId, Config, Endpoint};
use simtime::{Duration, Instant};

const SERVER_PORT: u16 = 5000;
const CLIENTS: usize = 12;

fn addr(host: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, host as u8 + 1))
}

/// Endpoint `i`: 0 is the server, the others its clients.
struct Net {
    eps: Vec<Endpoint>,
    /// (arrival, from, to, packet)
    wire: Vec<(Instant, usize, usize, Vec<u8>)>,
    now: Instant,
    rng: Xoshiro256PlusPlus,
    loss: f64,
}

impl Net {
    /// Drains endpoint `i` as a driver does after an input: packets, then events, then
    /// finished associations.
    fn drain(&mut self, i: usize) {
        while let Some(d) = self.eps[i].poll_transmit(self.now) {
            let to = match d.remote {
                IpAddr::V4(a) => a.octets()[3] as usize - 1,
                IpAddr::V6(_) => unreachable!("IPv4 only"),
            };
            if !self.rng.random_bool(self.loss) {
                let at = self.now + Duration::from_millis(self.rng.random_range(1..20));
                self.wire.push((at, i, to, d.payload));
            }
        }
        while self.eps[i].poll_any_event().is_some() {}
        while self.eps[i].poll_closed().is_some() {}
    }

    /// Asks every association of endpoint `i` directly for what the endpoint's polls said it
    /// had none of.
    fn check_drained(&mut self, i: usize, seed: u64, step: usize) {
        let expected = self.eps[i].associations().filter_map(|(_, a)| a.poll_timeout()).min();
        assert_eq!(self.eps[i].poll_timeout(), expected, "seed {seed} step {step}: endpoint {i}'s earliest timer");
        let now = self.now;
        for (id, a) in self.eps[i].associations_mut() {
            assert!(a.poll_transmit(now).is_none(), "seed {seed} step {step}: {id} of endpoint {i} had a packet left");
            assert!(a.poll_event().is_none(), "seed {seed} step {step}: {id} of endpoint {i} had an event left");
            assert!(a.read().is_none(), "seed {seed} step {step}: {id} of endpoint {i} had a message left");
        }
    }
}

fn run(seed: u64) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let config = Config { sack_freq: rng.random_range(1..4), ..Config::default() };
    let mut eps = vec![Endpoint::new(config.clone(), vec![addr(0)], SERVER_PORT, true, seed)];
    for c in 1..=CLIENTS {
        eps.push(Endpoint::new(config.clone(), vec![addr(c)], 6000, false, seed + c as u64));
    }
    let loss = rng.random_range(0.0..0.2);
    let mut net = Net { eps, wire: Vec::new(), now: Instant::ZERO, rng, loss };
    let (mut most, mut checks, mut delivered) = (0, 0, 0);
    for step in 0..600 {
        // A client with no association opens one, now and then.
        let c = net.rng.random_range(1..=CLIENTS);
        if net.eps[c].is_empty() && net.rng.random_bool(0.3) {
            net.eps[c].connect(net.now, &[addr(0)], SERVER_PORT);
        }
        // The applications: a few calls on random associations, through the endpoint.
        for _ in 0..net.rng.random_range(0..4) {
            let rng = &mut net.rng;
            let i = rng.random_range(0..=CLIENTS);
            let ids: Vec<AssocId> = net.eps[i].ids().collect();
            if ids.is_empty() {
                continue;
            }
            let id = ids[rng.random_range(0..ids.len())];
            let now = net.now;
            match rng.random_range(0..50) {
                0..=24 => {
                    let _ = net.eps[i].send(id, 0, 0, rng.random_bool(0.3), &vec![7; rng.random_range(1..3000)]);
                }
                25..=45 => {
                    while net.eps[i].read(id).is_some() {
                        delivered += 1;
                    }
                }
                46 => net.eps[i].association_mut(id).into_iter().for_each(|a| a.shutdown(now)),
                47 if rng.random_bool(0.2) => net.eps[i].association_mut(id).into_iter().for_each(|a| a.abort(now)),
                48 | 49 => {
                    while net.eps[i].read_any().is_some() {
                        delivered += 1;
                    }
                }
                _ => {}
            }
            net.drain(i);
        }
        // Time moves to the next packet or deadline, or to a random instant.
        let next_packet = net.wire.iter().map(|w| w.0).min();
        let next_timer = net.eps.iter_mut().filter_map(Endpoint::poll_timeout).min();
        let target = match net.rng.random_range(0..5) {
            0 => net.now + Duration::from_millis(net.rng.random_range(0..2000)),
            _ => [next_packet, next_timer].into_iter().flatten().min().unwrap_or(net.now + Duration::from_millis(50)),
        };
        net.now = net.now.max(target);
        let now = net.now;
        let (due, later): (Vec<_>, Vec<_>) = net.wire.drain(..).partition(|w| w.0 <= now);
        net.wire = later;
        for (_, from, to, p) in due {
            net.eps[to].handle(now, addr(from), addr(to), &p);
            net.drain(to);
        }
        for i in 0..net.eps.len() {
            if net.eps[i].poll_timeout().is_some_and(|t| t <= now) {
                net.eps[i].handle_timeout(now);
                net.drain(i);
            }
        }
        most = most.max(net.eps[0].len());
        if net.rng.random_bool(0.05) {
            while net.eps[0].read_any().is_some() {
                delivered += 1;
            }
            net.drain(0);
            net.check_drained(0, seed, step);
            checks += 1;
        }
    }
    // Not vacuous: the server held many associations at once, and messages went through.
    assert!(
        most >= 4 && checks >= 10 && delivered > 0,
        "seed {seed}: {most} associations, {checks} checks, {delivered} messages"
    );
}

#[test]
fn polls_see_every_change_of_every_association() {
    for seed in 0..24 {
        run(seed);
    }
}
