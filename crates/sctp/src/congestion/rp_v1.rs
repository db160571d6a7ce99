//! `rp-v1`: CMT/RPv1, the first resource-pooling congestion control for CMT-SCTP
//! (T. Dreibholz, M. Becke, J. Pulinthanath, E. P. Rathgeb, "Applying TCP-Friendly Congestion
//! Control to Concurrent Multipath Transfer", AINA 2010; compared as CMT/RPv1 in T. Dreibholz,
//! M. Becke, H. Adhari, E. P. Rathgeb, "On the Impact of Congestion Control for Concurrent
//! Multipath Transfer on the Transport Layer", ConTEL 2011), as INET implements
//! it (`SctpCcFunctions.cc`, `CCCV_CMTRPv1`): every destination grows in proportion to its
//! share of the association's total ssthresh, and a loss takes half of the association's
//! total window from the destination that lost.
//!
//! With ratio_i = ssthresh_i / Σ ssthresh (the sums over the coupled destinations,
//! [`super::PathSnapshot::is_coupled`], from the [`GroupView`]):
//! - slow start (§7.2.1 conditions): cwnd_i += ⌈min(bytes acked, MTU) * ratio_i⌉;
//! - congestion avoidance (§7.2.2 conditions): MTU * ratio_i per cwnd of acknowledged data,
//!   applied by [`CaStep`];
//! - fast retransmit: ssthresh_i = max(cwnd_i - Σ cwnd / 2, MTU, ⌈MTU * ratio_i⌉),
//!   cwnd_i = ssthresh_i;
//! - T3-rtx expiry: ssthresh_i as on a fast retransmit, cwnd_i = max(MTU, ⌈MTU * ratio_i⌉)
//!   (one MTU).
//!
//! INET's floor `rpMinCwnd` is 1 MTU by default, used here; its optional path blocking
//! (`rpPathBlocking`, off by default) is not modelled. A destination outside the coupled ones
//! (no RTT yet) behaves as RFC 9260. The initial window is RFC 9260's (INET divides it by the
//! number of paths).

use super::coupled::{ceil_bytes, CaStep, Coupled, CoupledRule};
use super::{CongestionState, GroupView};

/// CMT/RPv1.
pub type RpV1 = Coupled<RpV1Rule>;

/// CMT/RPv1's increases and decreases.
#[derive(Clone, Copy, Debug, Default)]
pub struct RpV1Rule;

impl RpV1 {
    /// CMT/RPv1 applying its congestion-avoidance increase per `step`.
    pub fn new(step: CaStep) -> Self {
        Coupled::with_rule(step, RpV1Rule)
    }

    /// ssthresh_i / Σ ssthresh for the destination `group` is shown to, if it is coupled.
    pub fn ratio(group: &GroupView) -> Option<f64> {
        let own = group.own().filter(|o| o.is_coupled())?;
        let total = group.coupling().total_ssthresh;
        (total > 0).then(|| f64::from(own.ssthresh) / total as f64)
    }

    /// The reduced ssthresh after a loss: max(cwnd_i - Σ cwnd / 2, MTU, ⌈MTU * ratio_i⌉).
    fn reduced(s: &CongestionState, group: &GroupView, ratio: f64) -> u32 {
        let half_total = (group.coupling().total_cwnd as f64 * 0.5).round();
        let reduced = f64::from(s.cwnd) - half_total;
        let floor = ceil_bytes(f64::from(s.mtu) * ratio).max(f64::from(s.mtu));
        reduced.max(floor) as u32
    }
}

impl CoupledRule for RpV1Rule {
    const NAME: &'static str = "rp-v1";
    fn slow_start(&self, acked: u32, group: &GroupView) -> u32 {
        let ratio = RpV1::ratio(group).unwrap_or(1.0);
        ceil_bytes(f64::from(acked) * ratio) as u32
    }
    fn per_window(&self, mtu: u32, group: &GroupView) -> f64 {
        f64::from(mtu) * RpV1::ratio(group).unwrap_or(1.0)
    }
    /// Fast retransmit: cwnd = ssthresh; T3-rtx expiry: cwnd = max(MTU, ⌈MTU * ratio_i⌉).
    fn reduce(&self, s: &CongestionState, group: &GroupView, timeout: bool) -> Option<(u32, u32)> {
        let ratio = RpV1::ratio(group)?;
        let ssthresh = RpV1::reduced(s, group, ratio);
        let cwnd = if timeout { (ceil_bytes(f64::from(s.mtu) * ratio) as u32).max(s.mtu) } else { ssthresh };
        Some((ssthresh, cwnd))
    }
}

#[cfg(test)]
mod tests {
    use super::super::coupled::fixtures::{ack, grow_one_window, own_state, path, two_paths, MTU};
    use super::*;
    use crate::association::PathId;
    use crate::congestion::Controller;

    #[test]
    fn increases_follow_the_ssthresh_share() {
        // ssthresh 20,000 and 10,000: shares 2/3 and 1/3.
        let view = two_paths(0);
        assert!((RpV1::ratio(&view).unwrap() - 2.0 / 3.0).abs() < 1e-12);
        let mut s = own_state(&view);
        assert_eq!(grow_one_window(&mut RpV1::new(CaStep::Window), &mut s, &view), 1000);
        let view = two_paths(1);
        let mut s = own_state(&view);
        assert_eq!(grow_one_window(&mut RpV1::new(CaStep::Window), &mut s, &view), 500);
        // Slow start: ⌈1,500 * 1/3⌉ = 500 per SACK.
        let mut s = CongestionState { cwnd: 4380, ssthresh: 10_000, partial_bytes_acked: 0, mtu: MTU };
        RpV1::new(CaStep::Window).on_ack(&mut s, &ack(3000, 4380), &view);
        assert_eq!(s.cwnd, 4880);
    }

    #[test]
    fn a_loss_takes_half_the_total_window_from_the_path_that_lost() {
        // Σ cwnd = 45,000: path 0 keeps 30,000 - 22,500 = 7,500.
        let view = two_paths(0);
        let mut s = own_state(&view);
        RpV1::new(CaStep::Window).on_fast_retransmit(&mut s, &view);
        assert_eq!((s.cwnd, s.ssthresh), (7_500, 7_500));
        // Path 1 would go below zero: the floor, one MTU.
        let view = two_paths(1);
        let mut s = own_state(&view);
        RpV1::new(CaStep::Window).on_fast_retransmit(&mut s, &view);
        assert_eq!((s.cwnd, s.ssthresh), (MTU, MTU));
        // A timeout: the same ssthresh, cwnd one MTU.
        let view = two_paths(0);
        let mut s = own_state(&view);
        RpV1::new(CaStep::Window).on_timeout(&mut s, &view);
        assert_eq!((s.cwnd, s.ssthresh), (MTU, 7_500));
    }

    #[test]
    fn a_destination_without_rtt_behaves_as_rfc_9260() {
        let mut lone = path(1, 30_000, 10_000, 40);
        lone.srtt = None;
        let view = GroupView::from_snapshots(vec![path(0, 30_000, 20_000, 20), lone], PathId::new(1));
        let mut s = own_state(&view);
        RpV1::new(CaStep::Window).on_fast_retransmit(&mut s, &view);
        assert_eq!((s.cwnd, s.ssthresh), (15_000, 15_000));
    }
}
