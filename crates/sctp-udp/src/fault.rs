//! Fault injection on one machine: packets dropped on a local address from a given time, in
//! both directions, so that failover can be exercised over loopback (where there is no netem).
//!
//! A fault names one of the driver's local addresses, when it starts and the share of packets
//! to drop (1.0: all). Every packet the driver sends from that address, and every packet it
//! receives on it, is dropped with that probability once the time has come, before the engine
//! or the wire sees it: to both ends the address looks as if its link had failed (or become
//! lossy).
//!
//! The start is counted either from the driver's start ([`FaultStart::At`], `ADDR@2s`) or
//! from the moment the driver's first association reached ESTABLISHED
//! ([`FaultStart::AfterEstablished`], `ADDR@established+500ms`). The second does not depend on
//! how long the peer took to start and to set the association up (a loaded machine, a slow
//! peer process), so a fault meant to strike a running transfer does: a test against another
//! stack can place the fault at a known point of that stack's timers (see
//! `tests/test_real_usrsctp.py`, which needs the fault before usrsctp's first T3-rtx can
//! expire).

use std::fmt;
use std::net::Ipv4Addr;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use simtime::{Duration, Instant};

/// The word that makes a fault's time count from the first association's establishment.
const ESTABLISHED: &str = "established+";

/// When a fault starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultStart {
    /// At this engine time (since the driver started).
    At(Instant),
    /// This long after the driver's first association reached ESTABLISHED (the engine's
    /// [`sctp::Event::Connected`]); not before one has.
    AfterEstablished(Duration),
}

impl fmt::Display for FaultStart {
    /// As [`Fault::parse`] reads it: `2s`, `established+0.5s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultStart::At(t) => write!(f, "{}s", t.as_secs_f64()),
            FaultStart::AfterEstablished(d) => write!(f, "{ESTABLISHED}{}s", d.as_secs_f64()),
        }
    }
}

/// Packets dropped on one local address from a given time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fault {
    /// The local address.
    pub addr: Ipv4Addr,
    /// From when.
    pub start: FaultStart,
    /// Share of packets dropped, 0..=1 (1: every packet).
    pub drop: f64,
}

impl Fault {
    /// Parses `ADDR@TIME[:SHARE]`, e.g. `127.0.0.1@2s` (all packets from 2 s after the start),
    /// `127.0.0.2@0.5s:0.1` (10 % from 0.5 s) or `127.0.0.1@established+500ms` (all packets
    /// from 0.5 s after the first association was established). TIME takes `s` or `ms`.
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
        let (after_established, offset) = match time.strip_prefix(ESTABLISHED) {
            Some(t) => (true, t.trim()),
            None => (false, time),
        };
        let bad = || format!("{time:?} is not a time (e.g. 2s, 500ms, {ESTABLISHED}500ms)");
        let secs = if let Some(ms) = offset.strip_suffix("ms") {
            ms.parse::<f64>().map(|v| v / 1000.0)
        } else {
            offset.strip_suffix('s').unwrap_or(offset).parse::<f64>()
        }
        .map_err(|_| bad())?;
        if !(secs.is_finite() && secs >= 0.0) {
            return Err(bad());
        }
        let ns = (secs * 1e9) as u64;
        let start = if after_established {
            FaultStart::AfterEstablished(Duration::from_nanos(ns))
        } else {
            FaultStart::At(Instant(ns))
        };
        Ok(Fault { addr, start, drop: share })
    }
}

impl fmt::Display for Fault {
    /// As [`Fault::parse`] reads it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}:{}", self.addr, self.start, self.drop)
    }
}

/// The faults of one driver, with the random stream that decides partial drops.
#[derive(Debug)]
pub struct FaultPlan {
    faults: Vec<Fault>,
    /// When the driver's first association was established, once it has been.
    established: Option<Instant>,
    rng: Xoshiro256PlusPlus,
    /// Packets dropped on receipt.
    pub dropped_rx: u64,
    /// Packets dropped before sending.
    pub dropped_tx: u64,
}

impl FaultPlan {
    /// A plan of `faults`; `seed` drives partial drops.
    pub fn new(faults: Vec<Fault>, seed: u64) -> Self {
        FaultPlan {
            faults,
            established: None,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            dropped_rx: 0,
            dropped_tx: 0,
        }
    }

    /// The faults, as configured.
    pub fn faults(&self) -> &[Fault] {
        &self.faults
    }

    /// An association of the driver reached ESTABLISHED at `now`: the faults counted from the
    /// first one are placed.
    pub fn on_established(&mut self, now: Instant) {
        self.established.get_or_insert(now);
    }

    /// When `f` starts (engine time), once that is known.
    pub fn start_of(&self, f: &Fault) -> Option<Instant> {
        match f.start {
            FaultStart::At(t) => Some(t),
            FaultStart::AfterEstablished(d) => self.established.map(|t| t.saturating_add(d)),
        }
    }

    /// The faults whose start is known, each with its start.
    pub fn scheduled(&self) -> Vec<(Fault, Instant)> {
        self.faults.iter().filter_map(|f| Some((*f, self.start_of(f)?))).collect()
    }

    /// True if a packet through local address `addr` at `now` is to be dropped.
    #[inline]
    pub fn drops(&mut self, addr: Ipv4Addr, now: Instant, sending: bool) -> bool {
        if self.faults.is_empty() {
            return false;
        }
        let share = self
            .faults
            .iter()
            .filter(|f| f.addr == addr && self.start_of(f).is_some_and(|t| now >= t))
            .map(|f| f.drop)
            .fold(0.0, f64::max);
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
        assert_eq!(f, Fault { addr: Ipv4Addr::LOCALHOST, start: FaultStart::At(Instant(2_000_000_000)), drop: 1.0 });
        let g = Fault::parse("127.0.0.2@500ms:0.5").expect("valid");
        assert_eq!(g.start, FaultStart::At(Instant(500_000_000)));
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

    #[test]
    fn a_fault_after_establishment_waits_for_the_first_association() {
        let f = Fault::parse("127.0.0.1@established+500ms").expect("valid");
        assert_eq!(f.start, FaultStart::AfterEstablished(Duration::from_millis(500)));
        assert_eq!(Fault::parse(&f.to_string()), Ok(f), "{f}");
        assert_eq!(Fault::parse("127.0.0.1@established+2s:0.25").map(|g| g.drop), Ok(0.25));
        assert!(Fault::parse("127.0.0.1@established+").is_err());
        assert!(Fault::parse("127.0.0.1@established-1s").is_err());
        let a = Ipv4Addr::LOCALHOST;
        let mut plan = FaultPlan::new(vec![f], 1);
        // Nothing is dropped, however late, before an association is up.
        assert!(!plan.drops(a, Instant(60_000_000_000), false));
        assert!(plan.scheduled().is_empty());
        plan.on_established(Instant(3_000_000_000));
        // A later association does not move it.
        plan.on_established(Instant(9_000_000_000));
        assert_eq!(plan.scheduled(), vec![(f, Instant(3_500_000_000))]);
        assert!(!plan.drops(a, Instant(3_499_999_999), false));
        assert!(plan.drops(a, Instant(3_500_000_000), true));
        assert_eq!((plan.dropped_rx, plan.dropped_tx), (0, 1));
    }
}
