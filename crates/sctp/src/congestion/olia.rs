//! `olia`: the Opportunistic Linked Increases Algorithm (R. Khalili, N. Gast, M. Popovic,
//! J.-Y. Le Boudec, "MPTCP is not Pareto-optimal: performance issues and a possible
//! solution", CoNEXT 2012 and IEEE/ACM ToN 21(5), 2013; draft-khalili-mptcp-congestion-control
//! §3), applied to the destinations of an SCTP association.
//!
//! For each ACK on path r, OLIA increases w_r (packets) by
//! (w_r / rtt_r²) / (Σ_p w_p / rtt_p)² + α_r / w_r, where, with R the paths, M the paths of
//! largest window, B the "best" paths (those a single-path flow would do best on, by l_r,
//! the bytes carried between the last two losses or since the last loss, whichever is
//! larger, and rtt_r; see [`OliaBest`]) and C = B \ M:
//! α_r = 1 / (|R| |C|) for r in C; α_r = -1 / (|R| |M|) for r in M when C is not empty;
//! α_r = 0 otherwise. Over one window (w_r packets acknowledged) that is
//! ((w_r / rtt_r)² / (Σ_p w_p / rtt_p)² + α_r) packets; here, in bytes, that many MTUs per
//! cwnd of acknowledged data, applied by [`CaStep`] in SCTP's byte-counted congestion
//! avoidance (§7.2.2) and capped at one MTU. A negative increase (a largest-window path while
//! a better one has a smaller window) shrinks cwnd, never below one MTU. Slow start, fast
//! retransmit and timeout are RFC 9260's (OLIA changes only the increase).
//!
//! Choices: w and rtt are cwnd (bytes) and SRTT; l_r counts bytes acknowledged on the
//! destination ([`super::PathSnapshot::loss_interval`], as the authors' Linux MPTCP
//! implementation, `mptcp_olia.c`, counts acknowledged sequence space); R is the coupled
//! destinations ([`super::PathSnapshot::is_coupled`]); a destination outside them grows as
//! RFC 9260. The sources disagree on the measure of the best paths: the Linux implementation
//! takes the largest l_r / rtt_r² (a TCP flow's rate goes as √l_r / rtt_r, so this ranks paths
//! by the rate a single-path flow would get), INET's `recalculateOLIABasis` (following the
//! draft's wording) the largest l_r² / rtt_r; the first is the default, the second
//! [`OliaBest::LossSquaredOverRtt`]. INET's `updateOLIA` (`SctpCcFunctions.cc`) also differs
//! in that its l_r (`oliaSentBytes`) is only ever reset, never counted, and its path sets are
//! built incrementally; here the sets are the paper's.

use super::coupled::{CaStep, Coupled, CoupledRule};
use super::{GroupView, PathSnapshot};

/// Which measure picks OLIA's "best" paths B.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OliaBest {
    /// The largest l_r / rtt_r², as the authors' Linux implementation (`mptcp_olia.c`). The
    /// default.
    #[default]
    LossOverRttSquared,
    /// The largest l_r² / rtt_r, as INET (`recalculateOLIABasis`).
    LossSquaredOverRtt,
}

impl OliaBest {
    /// The measure of `p` (only compared between destinations).
    fn quality(self, p: &PathSnapshot) -> f64 {
        let l = p.loss_interval() as f64;
        let rtt = p.srtt.map_or(1, |d| d.as_nanos().max(1)) as f64;
        match self {
            OliaBest::LossOverRttSquared => l / (rtt * rtt),
            OliaBest::LossSquaredOverRtt => l * l / rtt,
        }
    }
}

/// OLIA.
pub type Olia = Coupled<OliaRule>;

/// OLIA's increase (the rest is RFC 9260's), its best paths chosen by the measure it holds.
#[derive(Clone, Copy, Debug, Default)]
pub struct OliaRule(OliaBest);

impl Olia {
    /// OLIA applying its increase per `step`, its best paths by `best`.
    pub fn new(step: CaStep, best: OliaBest) -> Self {
        Coupled::with_rule(step, OliaRule(best))
    }

    /// OLIA's α_r for the destination `group` is shown to (0 outside the coupled ones), the
    /// best paths chosen by `best`.
    pub fn alpha(group: &GroupView, best: OliaBest) -> f64 {
        let Some(own) = group.own().filter(|o| o.is_coupled()) else { return 0.0 };
        let coupled = || group.paths().iter().filter(|p| p.is_coupled());
        let max_w = coupled().map(|p| p.cwnd).max().unwrap_or(0);
        let top = coupled().map(|p| best.quality(p)).fold(f64::NEG_INFINITY, f64::max);
        let in_m = |p: &PathSnapshot| p.cwnd == max_w;
        let in_c = |p: &PathSnapshot| best.quality(p) == top && !in_m(p);
        let n = coupled().count() as f64;
        let m = coupled().filter(|p| in_m(p)).count() as f64;
        let c = coupled().filter(|p| in_c(p)).count() as f64;
        if in_c(own) {
            1.0 / (n * c)
        } else if in_m(own) && c > 0.0 {
            -1.0 / (n * m)
        } else {
            0.0
        }
    }

    /// The increase per cwnd of acknowledged data on the destination `group` is shown to, in
    /// bytes: ((w_r / rtt_r)² / (Σ_p w_p / rtt_p)² + α_r) * MTU.
    pub fn increase_per_window(mtu: u32, group: &GroupView, best: OliaBest) -> f64 {
        let mtu = f64::from(mtu);
        let Some(rate) = group.own().filter(|o| o.is_coupled()).and_then(PathSnapshot::rate) else { return mtu };
        let total = group.coupling().total_rate;
        if total <= 0.0 {
            return mtu;
        }
        ((rate / total).powi(2) + Self::alpha(group, best)) * mtu
    }
}

impl CoupledRule for OliaRule {
    const NAME: &'static str = "olia";
    fn per_window(&self, mtu: u32, group: &GroupView) -> f64 {
        Olia::increase_per_window(mtu, group, self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::coupled::fixtures::{grow_one_window, own_state, path, two_paths, MTU};
    use super::*;
    use crate::association::PathId;
    use crate::congestion::CongestionState;

    const B: OliaBest = OliaBest::LossOverRttSquared;

    /// The two paths of [`two_paths`] with loss intervals `l0` and `l1`, seen by `own`.
    fn with_losses(own: u32, l0: u64, l1: u64) -> GroupView {
        let mut p0 = path(0, 30_000, 20_000, 20);
        let mut p1 = path(1, 15_000, 10_000, 40);
        (p0.acked_since_loss, p1.acked_between_losses) = (l0, l1);
        GroupView::from_snapshots(vec![p0, p1], PathId::new(own))
    }

    #[test]
    fn without_collected_paths_the_increase_is_the_rate_share_squared() {
        // Equal loss intervals: path 0 (20 ms) is best and has the largest window, so no
        // path is collected: α = 0. (cwnd/rtt)/Σ: 1.5e6/1.875e6 = 0.8 and 0.2.
        let view = with_losses(0, 100_000, 100_000);
        assert_eq!(Olia::alpha(&view, B), 0.0);
        assert!((Olia::increase_per_window(MTU, &view, B) - 0.64 * 1500.0).abs() < 1e-9);
        let view = with_losses(1, 100_000, 100_000);
        assert_eq!(Olia::alpha(&view, B), 0.0);
        assert!((Olia::increase_per_window(MTU, &view, B) - 0.04 * 1500.0).abs() < 1e-9);
    }

    #[test]
    fn a_best_path_with_a_small_window_takes_window_from_the_largest() {
        // Path 1 carried far more between losses: l²/rtt 1e12/40 > 1e10/20, so B = {1},
        // M = {0}, C = {1}: α_1 = 1/(2*1) = 0.5, α_0 = -1/(2*1) = -0.5.
        let view = with_losses(1, 100_000, 1_000_000);
        assert_eq!(Olia::alpha(&view, B), 0.5);
        assert!((Olia::increase_per_window(MTU, &view, B) - (0.04 + 0.5) * 1500.0).abs() < 1e-9);
        let mut s = own_state(&view);
        assert_eq!(grow_one_window(&mut Olia::new(CaStep::Window, B), &mut s, &view), 810);
        let view = with_losses(0, 100_000, 1_000_000);
        assert_eq!(Olia::alpha(&view, B), -0.5);
        // 0.64 - 0.5 = 0.14 MTU = 210 bytes per window.
        let mut s = own_state(&view);
        assert_eq!(grow_one_window(&mut Olia::new(CaStep::Window, B), &mut s, &view), 210);
    }

    #[test]
    fn the_two_measures_of_the_best_paths_can_disagree() {
        // l/rtt²: 100,000/20² = 250 > 300,000/40² = 187.5: path 0 is best and has the
        // largest window, nothing is collected. l²/rtt: 1e10/20 < 9e10/40: path 1 is best.
        let view = with_losses(1, 100_000, 300_000);
        assert_eq!(Olia::alpha(&view, OliaBest::LossOverRttSquared), 0.0);
        assert_eq!(Olia::alpha(&view, OliaBest::LossSquaredOverRtt), 0.5);
    }

    #[test]
    fn a_negative_increase_shrinks_the_window_but_never_below_one_mtu() {
        // Three equal-RTT paths; path 0 has the largest window, path 1 the best interval:
        // rate shares 0.5, 0.25, 0.25; α_0 = -1/3: 0.25 - 0.333 < 0.
        let mut p1 = path(1, 2_000, 1, 20);
        p1.acked_since_loss = 1_000_000;
        let paths = vec![path(0, 4_000, 1, 20), p1, path(2, 2_000, 1, 20)];
        let view = GroupView::from_snapshots(paths, PathId::new(0));
        let inc = Olia::increase_per_window(MTU, &view, B);
        assert!((inc - (0.25 - 1.0 / 3.0) * 1500.0).abs() < 1e-9, "{inc}");
        let mut s = own_state(&view);
        assert_eq!(grow_one_window(&mut Olia::new(CaStep::Window, B), &mut s, &view), -125);
        let mut s = CongestionState { cwnd: 1_550, ..own_state(&view) };
        grow_one_window(&mut Olia::new(CaStep::Window, B), &mut s, &view);
        assert_eq!(s.cwnd, MTU);
    }

    #[test]
    fn one_path_alone_grows_one_mtu_per_window() {
        let view = GroupView::from_snapshots(vec![path(0, 30_000, 1, 20)], PathId::new(0));
        let mut s = own_state(&view);
        assert_eq!(grow_one_window(&mut Olia::new(CaStep::Window, B), &mut s, &view), 1500);
        let view = two_paths(0);
        assert!(Olia::increase_per_window(MTU, &view, B) < 1500.0);
    }
}
