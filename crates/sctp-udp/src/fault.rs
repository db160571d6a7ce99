//! Fault injection on one machine: packets dropped on a local address from a given time, in
//! both directions, so that failover can be exercised over loopback (where there is no netem).
//!
//! A fault names one of the driver's local addresses, a start time (engine time, from the
//! driver's start) and the share of packets to drop (1.0: all). Every packet the driver sends
//! from that address, and every packet it receives on it, is dropped with that probability
//! once the time has come, before the engine or the wire sees it: to both ends the address
//! looks as if its link had failed (or become lossy).

use std::net::Ipv4Addr;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use simtime::Instant;

/// Packets dropped on one local address from a given time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fault {
    /// The local address.
    pub addr: Ipv4Addr,
    /// From when (engine time since the driver started).
    pub at: Instant,
    /// Share of packets dropped, 0..=1 (1: every packet).
    pub drop: f64,
}

impl Fault {
    /// Parses `ADDR@TIME[:SHARE]`, e.g. `127.0.0.1@2s` (all packets from 2 s) or
    /// `127.0.0.2@0.5s:0.1` (10 % from 0.5 s). TIME takes `s` or `ms`.
    pub fn parse(text: &str) -> Result<Fault, String> {
        let (addr, rest) = text.split_once('@').ok_or_else(|| format!("{text:?}: expected ADDR@TIME[:SHARE]"))?;
        let addr: Ipv4Addr = addr.trim().parse().map_err(|_| format!("{addr:?} is not an IPv4 address"))?;
        let (time, share) = match rest.split_once(':') {
            Some((t, s)) => (t, s.trim().parse::<f64>().map_err(|_| format!("{s:?} is not a number"))?),
            None => (rest, 1.0),
        };
        if !(0.0..=1.0).contains(&share) {
            return Err(format!("drop share {share} is not between 0 and 1"));
        }
        let time = time.trim();
        let secs = if let Some(ms) = time.strip_suffix("ms") {
            ms.parse::<f64>().map(|v| v / 1000.0)
        } else {
            time.strip_suffix('s').unwrap_or(time).parse::<f64>()
        }
        .map_err(|_| format!("{time:?} is not a time (e.g. 2s, 500ms)"))?;
        if !(secs.is_finite() && secs >= 0.0) {
            return Err(format!("{time:?} is not a time (e.g. 2s, 500ms)"));
        }
        Ok(Fault { addr, at: Instant((secs * 1e9) as u64), drop: share })
    }
}

/// The faults of one driver, with the random stream that decides partial drops.
#[derive(Debug)]
pub struct FaultPlan {
    faults: Vec<Fault>,
    rng: Xoshiro256PlusPlus,
    /// Packets dropped on receipt.
    pub dropped_rx: u64,
    /// Packets dropped before sending.
    pub dropped_tx: u64,
}

impl FaultPlan {
    /// A plan of `faults`; `seed` drives partial drops.
    pub fn new(faults: Vec<Fault>, seed: u64) -> Self {
        FaultPlan { faults, rng: Xoshiro256PlusPlus::seed_from_u64(seed), dropped_rx: 0, dropped_tx: 0 }
    }

    /// The faults.
    pub fn faults(&self) -> &[Fault] {
        &self.faults
    }

    /// True if a packet through local address `addr` at `now` is to be dropped.
    #[inline]
    pub fn drops(&mut self, addr: Ipv4Addr, now: Instant, sending: bool) -> bool {
        if self.faults.is_empty() {
            return false;
        }
        let share = self.faults.iter().filter(|f| f.addr == addr && now >= f.at).map(|f| f.drop).fold(0.0, f64::max);
        let drop = share >= 1.0 || (share > 0.0 && self.rng.random::<f64>() < share);
        if drop {
            if sending {
                self.dropped_tx += 1;
            } else {
                self.dropped_rx += 1;
            }
        }
        drop
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_applies() {
        let f = Fault::parse("127.0.0.1@2s").expect("valid");
        assert_eq!(f, Fault { addr: Ipv4Addr::LOCALHOST, at: Instant(2_000_000_000), drop: 1.0 });
        let g = Fault::parse("127.0.0.2@500ms:0.5").expect("valid");
        assert_eq!(g.at, Instant(500_000_000));
        assert!(Fault::parse("127.0.0.1").is_err());
        assert!(Fault::parse("x@1s").is_err());
        assert!(Fault::parse("127.0.0.1@1s:2").is_err());
        let mut plan = FaultPlan::new(vec![f, g], 1);
        assert!(!plan.drops(Ipv4Addr::LOCALHOST, Instant(1_999_999_999), true));
        assert!(plan.drops(Ipv4Addr::LOCALHOST, Instant(2_000_000_000), true));
        let other = Ipv4Addr::new(127, 0, 0, 2);
        let n = (0..10_000).filter(|_| plan.drops(other, Instant(600_000_000), false)).count();
        assert!((4_000..6_000).contains(&n), "{n}");
        assert_eq!(plan.dropped_tx, 1);
        assert_eq!(plan.dropped_rx, n as u64);
    }
}
