//! `rp-v2`: CMT/RPv2, the second resource-pooling congestion control for CMT-SCTP
//! (T. Dreibholz, M. Becke, H. Adhari, E. P. Rathgeb, "On the Impact of Congestion Control
//! for Concurrent Multipath Transfer on the Transport Layer", ConTEL 2011), as INET implements
//! it (`SctpCcFunctions.cc`, `CCCV_CMTRPv2`): shares by bandwidth (cwnd / SRTT) instead of
//! ssthresh, and a loss gives up half of the association's total bandwidth.
//!
//! With bw_i = cwnd_i / SRTT_i and share_i = bw_i / Σ bw (sums over the coupled
//! destinations, [`super::PathSnapshot::is_coupled`], from the [`GroupView`]):
//! - slow start (§7.2.1 conditions): cwnd_i += ⌈min(bytes acked, MTU) * share_i⌉;
//! - congestion avoidance (§7.2.2 conditions): MTU * share_i per cwnd of acknowledged data,
//!   applied by [`CaStep`];
//! - fast retransmit: with f = max(1/2, (Σ bw / 2) / bw_i), ssthresh_i =
//!   max(⌈cwnd_i - f * cwnd_i⌉, MTU), cwnd_i = ssthresh_i;
//! - T3-rtx expiry: ssthresh_i as on a fast retransmit, cwnd_i = MTU.
//!
//! INET's floor `rpMinCwnd` is 1 MTU by default, used here; its optional path blocking is
//! not modelled. A destination outside the coupled ones (no RTT yet) behaves as RFC 9260.

use super::coupled::{ceil_bytes, CaStep, Coupled, CoupledRule};
use super::{CongestionState, GroupView};

/// CMT/RPv2.
pub type RpV2 = Coupled<RpV2Rule>;

/// CMT/RPv2's increases and decreases.
#[derive(Clone, Copy, Debug, Default)]
pub struct RpV2Rule;

impl RpV2 {
    /// CMT/RPv2 applying its congestion-avoidance increase per `step`.
    pub fn new(step: CaStep) -> Self {
        Coupled::with_rule(step, RpV2Rule)
    }

    /// bw_i / Σ bw for the destination `group` is shown to, if it is coupled.
    pub fn share(group: &GroupView) -> Option<f64> {
        let rate = group.own().filter(|o| o.is_coupled())?.rate()?;
        let total = group.coupling().total_rate;
        (total > 0.0).then(|| rate / total)
    }

    /// The reduced ssthresh after a loss: max(⌈cwnd_i - f * cwnd_i⌉, MTU) with
    /// f = max(1/2, 1 / (2 share_i)).
    fn reduced(s: &CongestionState, share: f64) -> u32 {
        let f = (0.5 / share).max(0.5);
        let cwnd = f64::from(s.cwnd);
        ceil_bytes(cwnd - f * cwnd).max(f64::from(s.mtu)) as u32
    }
}

impl CoupledRule for RpV2Rule {
    const NAME: &'static str = "rp-v2";
    fn slow_start(&self, acked: u32, group: &GroupView) -> u32 {
        let share = RpV2::share(group).unwrap_or(1.0);
        ceil_bytes(f64::from(acked) * share) as u32
    }
    fn per_window(&self, mtu: u32, group: &GroupView) -> f64 {
        f64::from(mtu) * RpV2::share(group).unwrap_or(1.0)
    }
    /// Fast retransmit: cwnd = ssthresh; T3-rtx expiry: cwnd = MTU.
    fn reduce(&self, s: &CongestionState, group: &GroupView, timeout: bool) -> Option<(u32, u32)> {
        let ssthresh = RpV2::reduced(s, RpV2::share(group)?);
        Some((ssthresh, if timeout { s.mtu } else { ssthresh }))
    }
}

#[cfg(test)]
mod tests {
    use super::super::coupled::fixtures::{ack, grow_one_window, own_state, two_paths, MTU};
    use super::*;
    use crate::congestion::Controller;

    #[test]
    fn increases_follow_the_bandwidth_share() {
        // bw: 1.5e6 and 0.375e6 bytes/s: shares 0.8 and 0.2.
        let view = two_paths(0);
        assert!((RpV2::share(&view).unwrap() - 0.8).abs() < 1e-12);
        let mut s = own_state(&view);
        assert_eq!(grow_one_window(&mut RpV2::new(CaStep::Window), &mut s, &view), 1200);
        let view = two_paths(1);
        let mut s = own_state(&view);
        assert_eq!(grow_one_window(&mut RpV2::new(CaStep::Window), &mut s, &view), 300);
        // Slow start: ⌈1,500 * 0.2⌉ = 300 per SACK.
        let mut s = CongestionState { cwnd: 4380, ssthresh: 10_000, partial_bytes_acked: 0, mtu: MTU };
        RpV2::new(CaStep::Window).on_ack(&mut s, &ack(3000, 4380), &view);
        assert_eq!(s.cwnd, 4680);
    }

    #[test]
    fn a_loss_gives_up_half_the_total_bandwidth() {
        // Path 0 has 0.8 of the bandwidth: f = max(0.5, 0.5/0.8) = 0.625; 30,000 * 0.375.
        let view = two_paths(0);
        let mut s = own_state(&view);
        RpV2::new(CaStep::Window).on_fast_retransmit(&mut s, &view);
        assert_eq!((s.cwnd, s.ssthresh), (11_250, 11_250));
        // Path 1 has 0.2: f = 2.5, below zero: the floor, one MTU.
        let view = two_paths(1);
        let mut s = own_state(&view);
        RpV2::new(CaStep::Window).on_fast_retransmit(&mut s, &view);
        assert_eq!((s.cwnd, s.ssthresh), (MTU, MTU));
        let view = two_paths(0);
        let mut s = own_state(&view);
        RpV2::new(CaStep::Window).on_timeout(&mut s, &view);
        assert_eq!((s.cwnd, s.ssthresh), (MTU, 11_250));
    }
}
