//! The CMT retransmission policies of Iyengar et al. (ICON 2004; paper 004 §2.2):
//!
//! - **RTX-SAME** ([`Same`]): "once a new data chunk is scheduled and sent to a destination,
//!   all retransmissions of the chunk thereafter are sent to the same destination".
//! - **RTX-ASAP** ([`Asap`]): "to any destination for which the sender has cwnd space
//!   available at the time the retransmission needs to be sent"; several: one at random.
//! - **RTX-CWND**, **RTX-SSTHRESH** ([`BestBy`]): to the destination with the largest cwnd,
//!   respectively ssthresh; a tie broken at random.
//! - **RTX-LOSSRATE** ([`BestBy`]): to the destination whose path has the lowest loss rate,
//!   ties at random. The paper calls it "an ideal case since the loss rate is known, and not
//!   measured": ns-2 reads each destination's configured rate (`fLossrate`). No real stack
//!   can implement it; here the driver declares each path's rate
//!   ([`crate::Association::set_loss_rate_hint`]; undeclared rates are 0, so without hints
//!   every destination ties).
//!
//! Where the ns-2 module (sctp/sctp-cmt.cc, `SelectRtxDest`) and these differ:
//!
//! - Every policy here considers only usable destinations (active and confirmed) while one
//!   exists, as the [`super::RetransmitPolicy`] contract asks: potentially-failed ones are
//!   excluded by every policy (ns-2 excludes them only in RTX-CWND and RTX-SSTHRESH, the two
//!   it recommends with CMT-PF, and not in RTX-LOSSRATE or RTX-SAME). RTX-SAME moves to the
//!   next usable destination when its own is not usable (ns-2: when it is inactive).
//! - With no usable destination at all (every destination potentially failed or inactive),
//!   each falls back to the potentially-failed destination with the fewest errors, as
//!   ns-2's `SelectFromPFDests` does (its second criterion, the most recent to become PF,
//!   is replaced by preferring the chunk's own destination), else to the chunk's own.
//! - ns-2 returns no destination when the chosen one has no cwnd room, and the chunk waits;
//!   here the association does the same with the destination returned (§6.1 B). For
//!   RTX-ASAP with no destination having room, the chunk's own destination (or the next
//!   usable one) is returned and waits there.
//! - Ties are broken uniformly with the association's seeded stream; ns-2 flips a coin per
//!   candidate (`Random::random() & 1`), which favours later destinations.

use crate::association::{Path, PathId, PathState};

use super::retransmit::{RetransmitPolicy, RtxKind, TieBreaker};
use super::PathsView;

/// RTX-SAME: the destination the chunk was last sent to (under this policy, the one its
/// first transmission went to) while it is usable; else the next usable one.
#[derive(Clone, Copy, Debug, Default)]
pub struct Same;

impl RetransmitPolicy for Same {
    fn name(&self) -> &'static str {
        "same"
    }
    fn destination(&mut self, paths: &PathsView<'_>, last: PathId, _: RtxKind, _: &mut TieBreaker<'_>) -> PathId {
        if paths.is_usable(last) {
            return last;
        }
        next_usable_or_fallback(paths, last)
    }
}

/// RTX-ASAP: a usable destination with cwnd room now (its flight below its cwnd, or the
/// one packet a T3-rtx expiry sends at once, §6.3.3 E3, as ns-2's `RTX_LIMIT_ONE_PACKET`),
/// chosen at random among several. Without one, as [`Same`] (the chunk waits there for
/// room).
#[derive(Clone, Copy, Debug, Default)]
pub struct Asap;

impl Asap {
    fn has_room(p: &Path) -> bool {
        p.force_packet == Some(RtxKind::Timeout) || p.flight_size < p.cc.cwnd
    }
}

impl RetransmitPolicy for Asap {
    fn name(&self) -> &'static str {
        "asap"
    }
    fn destination(&mut self, paths: &PathsView<'_>, last: PathId, kind: RtxKind, ties: &mut TieBreaker<'_>) -> PathId {
        let n = usable(paths).filter(|(_, p)| Asap::has_room(p)).count();
        if n == 0 {
            return Same.destination(paths, last, kind, ties);
        }
        let k = ties.pick(n);
        usable(paths).filter(|(_, p)| Asap::has_room(p)).nth(k).map_or(last, |(id, _)| id)
    }
}

/// The usable destination with the highest score (RTX-CWND: cwnd; RTX-SSTHRESH: ssthresh;
/// RTX-LOSSRATE: the lowest loss rate), chosen at random among equals.
#[derive(Clone, Copy, Debug)]
pub struct BestBy {
    name: &'static str,
    score: fn(&Path) -> f64,
}

impl BestBy {
    /// RTX-CWND.
    pub fn cwnd() -> Self {
        BestBy { name: "cwnd", score: |p| f64::from(p.cc.cwnd) }
    }
    /// RTX-SSTHRESH.
    pub fn ssthresh() -> Self {
        BestBy { name: "ssthresh", score: |p| f64::from(p.cc.ssthresh) }
    }
    /// RTX-LOSSRATE.
    pub fn loss_rate() -> Self {
        BestBy { name: "lossrate", score: |p| -p.loss_rate_hint }
    }
}

impl RetransmitPolicy for BestBy {
    fn name(&self) -> &'static str {
        self.name
    }
    fn destination(&mut self, paths: &PathsView<'_>, last: PathId, _: RtxKind, ties: &mut TieBreaker<'_>) -> PathId {
        let score = self.score;
        let Some(best) = usable(paths).map(|(_, p)| score(p)).reduce(f64::max) else {
            return fallback(paths, last);
        };
        let n = usable(paths).filter(|(_, p)| score(p) == best).count();
        let k = ties.pick(n);
        usable(paths).filter(|(_, p)| score(p) == best).nth(k).map_or(last, |(id, _)| id)
    }
}

/// The usable destinations, in id order.
fn usable<'a>(paths: &PathsView<'a>) -> impl Iterator<Item = (PathId, &'a Path)> + 'a {
    paths.iter().filter(|(_, p)| p.is_usable())
}

/// The first usable destination after `last` (§6.4 order), else [`fallback`].
fn next_usable_or_fallback(paths: &PathsView<'_>, last: PathId) -> PathId {
    paths.after(last).find(|&q| paths.is_usable(q)).unwrap_or_else(|| fallback(paths, last))
}

/// No destination is usable: the confirmed potentially-failed destination with the fewest
/// errors (`last` first among equals, then id order), as ns-2's `SelectFromPFDests`; else
/// `last`.
fn fallback(paths: &PathsView<'_>, last: PathId) -> PathId {
    paths
        .iter()
        .filter(|(_, p)| p.confirmed && p.state == PathState::PotentiallyFailed)
        .min_by_key(|(id, p)| (p.error_count, *id != last))
        .map_or(last, |(id, _)| id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::association::Paths;
    use crate::cmt::RetransmitConfig;
    use crate::config::Config;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    const MTU: u32 = 1500;

    /// One destination: (cwnd, ssthresh, flight, loss rate) in MTUs and fractions.
    #[derive(Clone, Copy)]
    struct Dest {
        cwnd: u32,
        ssthresh: u32,
        flight: u32,
        loss: f64,
        state: PathState,
    }

    fn d(cwnd: u32, ssthresh: u32, flight: u32, loss: f64) -> Dest {
        Dest { cwnd, ssthresh, flight, loss, state: PathState::Active }
    }

    fn paths(dests: &[Dest]) -> Paths {
        let config = Config::default();
        let mut paths = Paths::new();
        for (i, x) in dests.iter().enumerate() {
            let mut p = Path::new([10, i as u8, 0, 2].into(), &config, 1 << 20, 0);
            p.confirmed = true;
            p.cc.cwnd = x.cwnd * MTU;
            p.cc.ssthresh = x.ssthresh * MTU;
            p.flight_size = x.flight * MTU;
            p.loss_rate_hint = x.loss;
            p.state = x.state;
            paths.push(p);
        }
        paths
    }

    /// What policy `name` picks for a chunk last sent to `last`, with seed `seed`.
    fn pick(name: &str, ps: &Paths, last: u32, kind: RtxKind, seed: u64) -> u32 {
        let view = PathsView::new(ps, PathId::new(0), PathId::new(0));
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut ties = TieBreaker::new(&mut rng);
        let mut policy = RetransmitConfig::from_name(name).unwrap().build();
        assert_eq!(policy.name(), name);
        policy.destination(&view, PathId::new(last), kind, &mut ties).get()
    }

    /// Every destination the policy picks over 64 seeds.
    fn picks(name: &str, ps: &Paths, last: u32, kind: RtxKind) -> Vec<u32> {
        let mut all: Vec<u32> = (0..64).map(|s| pick(name, ps, last, kind, s)).collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// Four destinations on which the policies disagree: 0 is where the chunk was sent
    /// (full); 1 has the largest cwnd (full); 2 the largest ssthresh (full); 3 the lowest
    /// loss rate, and the only cwnd room.
    fn disagreeing() -> Paths {
        paths(&[d(4, 4, 4, 0.05), d(40, 8, 40, 0.05), d(8, 40, 8, 0.05), d(8, 8, 2, 0.01)])
    }

    #[test]
    fn each_policy_picks_its_own_destination() {
        let ps = disagreeing();
        for kind in [RtxKind::Fast, RtxKind::Timeout] {
            assert_eq!(picks("same", &ps, 0, kind), [0]);
            assert_eq!(picks("cwnd", &ps, 0, kind), [1]);
            assert_eq!(picks("ssthresh", &ps, 0, kind), [2]);
            assert_eq!(picks("lossrate", &ps, 0, kind), [3]);
            assert_eq!(picks("asap", &ps, 0, kind), [3]);
        }
        // The default: fast retransmissions where they were sent, timeouts to the next.
        assert_eq!(picks("alternate", &ps, 0, RtxKind::Fast), [0]);
        assert_eq!(picks("alternate", &ps, 0, RtxKind::Timeout), [1]);
    }

    #[test]
    fn ties_are_broken_by_the_seed() {
        // Destinations 1 and 2 tie on cwnd, ssthresh and loss rate; 0 and 3 are worse. ASAP:
        // 1, 2 and 3 have room.
        let ps = paths(&[d(2, 2, 2, 0.1), d(8, 8, 0, 0.0), d(8, 8, 0, 0.0), d(4, 4, 0, 0.1)]);
        for name in ["cwnd", "ssthresh", "lossrate"] {
            assert_eq!(picks(name, &ps, 0, RtxKind::Fast), [1, 2], "{name}");
            // The same seed, the same choice.
            for seed in 0..8 {
                assert_eq!(pick(name, &ps, 0, RtxKind::Fast, seed), pick(name, &ps, 0, RtxKind::Fast, seed));
            }
        }
        assert_eq!(picks("asap", &ps, 0, RtxKind::Fast), [1, 2, 3]);
    }

    #[test]
    fn a_tie_breaker_draws_only_among_several() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let before = rng.clone();
        let mut ties = TieBreaker::new(&mut rng);
        assert_eq!(ties.pick(1), 0);
        assert_eq!(ties.pick(0), 0);
        assert_eq!(rng, before);
        let mut ties = TieBreaker::new(&mut rng);
        let mut seen = [0u32; 3];
        for _ in 0..300 {
            seen[ties.pick(3)] += 1;
        }
        assert!(seen.iter().all(|&n| n > 50), "{seen:?}");
    }

    #[test]
    fn potentially_failed_and_inactive_destinations_are_never_chosen_while_one_is_usable() {
        // The best destination by every measure is potentially failed, the next inactive.
        let mut dests = [d(2, 2, 2, 0.1), d(50, 50, 0, 0.0), d(40, 40, 0, 0.0), d(4, 4, 3, 0.05)];
        dests[1].state = PathState::PotentiallyFailed;
        dests[2].state = PathState::Inactive;
        let ps = paths(&dests);
        for kind in [RtxKind::Fast, RtxKind::Timeout] {
            assert_eq!(picks("cwnd", &ps, 0, kind), [3]);
            assert_eq!(picks("ssthresh", &ps, 0, kind), [3]);
            assert_eq!(picks("lossrate", &ps, 0, kind), [3]);
            assert_eq!(picks("asap", &ps, 0, kind), [3]);
            // A chunk last sent to the PF destination goes to the next usable one.
            assert_eq!(picks("same", &ps, 1, kind), [3]);
        }
    }

    #[test]
    fn with_every_destination_down_the_pf_one_with_fewest_errors_is_chosen() {
        let mut dests = [d(2, 2, 0, 0.0), d(2, 2, 0, 0.0), d(2, 2, 0, 0.0)];
        dests[0].state = PathState::Inactive;
        dests[1].state = PathState::PotentiallyFailed;
        dests[2].state = PathState::PotentiallyFailed;
        let mut ps = paths(&dests);
        ps[PathId::new(1)].error_count = 2;
        ps[PathId::new(2)].error_count = 1;
        for name in ["same", "asap", "cwnd", "ssthresh", "lossrate"] {
            assert_eq!(picks(name, &ps, 0, RtxKind::Timeout), [2], "{name}");
        }
        // Equal errors: the chunk's own destination.
        ps[PathId::new(2)].error_count = 2;
        for name in ["same", "cwnd", "lossrate"] {
            assert_eq!(picks(name, &ps, 1, RtxKind::Timeout), [1], "{name}");
        }
    }

    #[test]
    fn asap_counts_a_forced_packet_as_room() {
        // Every window is full, but destination 2 owes one packet after a loss (§6.3.3 E3).
        let mut ps = paths(&[d(4, 4, 4, 0.0), d(4, 4, 4, 0.0), d(4, 4, 4, 0.0)]);
        assert_eq!(picks("asap", &ps, 1, RtxKind::Timeout), [1]);
        ps[PathId::new(2)].force_packet = Some(RtxKind::Timeout);
        assert_eq!(picks("asap", &ps, 1, RtxKind::Timeout), [2]);
    }

    #[test]
    fn the_registry_knows_every_policy() {
        for name in RetransmitConfig::NAMES {
            assert_eq!(RetransmitConfig::from_name(name).unwrap().name(), name);
        }
        assert_eq!(RetransmitConfig::from_name("fastest"), None);
    }
}
