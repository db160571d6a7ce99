//! `lia`: the Linked Increases Algorithm of RFC 6356 (Raiciu, Handley, Wischik, "Coupled
//! Congestion Control for Multipath Transport Protocols"), as MPTCP uses it, applied to the
//! destinations of an SCTP association.
//!
//! RFC 6356 §3: for each ACK on subflow i, increase cwnd_i by
//! min(alpha * bytes_acked * MSS_i / cwnd_total, bytes_acked * MSS_i / cwnd_i), with (§4)
//! alpha = cwnd_total * max_i(cwnd_i / rtt_i²) / (Σ_i cwnd_i / rtt_i)². Per cwnd_i of
//! acknowledged data that is min(alpha * cwnd_i / cwnd_total, 1) MTU, which [`CaStep`]
//! applies in SCTP's byte-counted congestion avoidance (§7.2.2). Slow start, fast retransmit
//! and timeout stay RFC 9260's (RFC 6356 §3: "only applies to the increase phase of the
//! congestion avoidance state"; the decrease is the single-path one).
//!
//! Choices: cwnd and RTT are the destinations' cwnd (bytes) and SRTT (§6.3.1), alpha is
//! computed on every SACK from the [`GroupView`] (RFC 6356 §4 allows per ACK or per loss);
//! the sums run over the coupled destinations ([`super::PathSnapshot::is_coupled`]: active,
//! confirmed, RTT measured). A destination outside them (no RTT yet) grows as RFC 9260. INET
//! (`SctpCcFunctions.cc`, `CCCV_CMT_LIA`) also couples slow start and uses a floor of
//! `rpMinCwnd` MTUs instead of 4 MTU on a loss; here RFC 6356 is followed.

use super::coupled::{CaStep, Coupled, CoupledRule};
use super::GroupView;

/// RFC 6356 Linked Increases.
pub type Lia = Coupled<LiaRule>;

/// LIA's increase (the rest is RFC 9260's).
#[derive(Clone, Copy, Debug, Default)]
pub struct LiaRule;

impl Lia {
    /// LIA applying its increase per `step`.
    pub fn new(step: CaStep) -> Self {
        Coupled::with_rule(step, LiaRule)
    }

    /// RFC 6356 §4's alpha for `group` (1 when it cannot be computed).
    pub fn alpha(group: &GroupView) -> f64 {
        let c = group.coupling();
        if c.total_rate <= 0.0 || c.total_cwnd == 0 {
            return 1.0;
        }
        c.total_cwnd as f64 * c.max_cwnd_per_srtt_squared / (c.total_rate * c.total_rate)
    }

    /// The increase per cwnd of acknowledged data on the destination `group` is shown to, in
    /// bytes: min(alpha * cwnd_i / cwnd_total, 1) * MTU (RFC 6356 §3, summed over a window).
    pub fn increase_per_window(mtu: u32, group: &GroupView) -> f64 {
        let mtu = f64::from(mtu);
        let Some(own) = group.own().filter(|o| o.is_coupled()) else { return mtu };
        let total = group.coupling().total_cwnd as f64;
        if total <= 0.0 {
            return mtu;
        }
        (Self::alpha(group) * f64::from(own.cwnd) / total).min(1.0) * mtu
    }
}

impl CoupledRule for LiaRule {
    const NAME: &'static str = "lia";
    fn per_window(&self, mtu: u32, group: &GroupView) -> f64 {
        Lia::increase_per_window(mtu, group)
    }
}

#[cfg(test)]
mod tests {
    use super::super::coupled::fixtures::{ack, grow_one_window, own_state, path, two_paths, MTU};
    use super::*;
    use crate::association::PathId;
    use crate::congestion::{CongestionState, Controller};

    #[test]
    fn alpha_and_increase_follow_rfc_6356_for_two_paths() {
        // cwnd/rtt²: 30,000/0.02² = 75e6 (max), 15,000/0.04² = 9.375e6; Σ cwnd/rtt =
        // 1.5e6 + 0.375e6 = 1.875e6; alpha = 45,000 * 75e6 / 1.875e6² = 0.96.
        let view = two_paths(0);
        assert!((Lia::alpha(&view) - 0.96).abs() < 1e-12, "{}", Lia::alpha(&view));
        // Path 0: 0.96 * 30,000 / 45,000 = 0.64 MTU = 960 bytes per window.
        assert!((Lia::increase_per_window(MTU, &view) - 960.0).abs() < 1e-9);
        let view = two_paths(1);
        // Path 1: 0.96 * 15,000 / 45,000 = 0.32 MTU = 480 bytes per window.
        assert!((Lia::increase_per_window(MTU, &view) - 480.0).abs() < 1e-9);
    }

    #[test]
    fn congestion_avoidance_grows_by_the_coupled_increase_per_window() {
        for (own, expected) in [(0, 960), (1, 480)] {
            let view = two_paths(own);
            let mut s = own_state(&view);
            let mut cc = Lia::new(CaStep::Window);
            assert_eq!(grow_one_window(&mut cc, &mut s, &view), expected, "path {own}");
            // Per SACK: the same per window, spread over the SACKs.
            let mut s = own_state(&view);
            let mut cc = Lia::new(CaStep::Sack);
            // (cwnd grows during the window, so each SACK's share shrinks a little.)
            let got = grow_one_window(&mut cc, &mut s, &view);
            assert!(got <= expected && got >= expected * 97 / 100, "path {own}: {got}");
        }
    }

    #[test]
    fn the_per_ack_cap_keeps_a_path_at_most_at_the_uncoupled_increase() {
        // Equal RTTs, one dominant window: alpha = cwnd_max / cwnd_total < 1 but a path whose
        // share of the total is small still gets no more than one MTU per window.
        let view = GroupView::from_snapshots(vec![path(0, 90_000, 1, 20), path(1, 3_000, 1, 20)], PathId::new(0));
        let inc = Lia::increase_per_window(MTU, &view);
        assert!(inc < f64::from(MTU) && inc > 0.9 * f64::from(MTU), "{inc}");
    }

    #[test]
    fn slow_start_and_a_destination_without_rtt_grow_as_rfc_9260() {
        let view = two_paths(0);
        let mut s = CongestionState { cwnd: 4380, ssthresh: 100_000, partial_bytes_acked: 0, mtu: MTU };
        Lia::new(CaStep::Window).on_ack(&mut s, &ack(3000, 4380), &view);
        assert_eq!(s.cwnd, 4380 + MTU);
        let mut lone = path(2, 30_000, 20_000, 20);
        lone.srtt = None;
        let view = GroupView::from_snapshots(vec![path(0, 30_000, 20_000, 20), lone], PathId::new(2));
        assert_eq!(Lia::increase_per_window(MTU, &view), f64::from(MTU));
    }
}
