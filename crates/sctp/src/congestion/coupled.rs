//! What the coupled multipath controllers (`lia`, `olia`, `rp-v1`, `rp-v2`) share: one
//! controller, [`Coupled`], with RFC 9260's §7.2.1 / §7.2.2 structure and each algorithm's
//! own increases and decreases (its [`CoupledRule`]), and the two ways of spreading a
//! congestion-avoidance increase over SACKs.
//!
//! The multipath papers state their increases per ACK of one packet (RFC 6356 §3, OLIA) or
//! per window (CMT/RPv1, CMT/RPv2 as INET implements them). SCTP counts cwnd in bytes and
//! grows it in congestion avoidance by one MTU per cwnd of acknowledged data (§7.2.2). Every
//! coupled controller here states its increase as "bytes per cwnd of acknowledged data" (per
//! RTT while the window is fully used) and [`CaStep`] applies it, capped at one MTU per RTT
//! as §7.2.2 caps the uncoupled increase.

use std::fmt;

use super::{AckInfo, CongestionState, Controller, GroupView, Rfc9260, Rules};

/// What one coupled algorithm changes in RFC 9260's congestion control, given the
/// destination's view of the association ([`GroupView`]). The defaults are RFC 9260's.
pub trait CoupledRule: Clone + fmt::Debug + Send {
    /// The registry name.
    const NAME: &'static str;
    /// The slow-start growth for one SACK, given min(bytes acked, MTU) (§7.2.1 grows by it).
    fn slow_start(&self, acked: u32, _group: &GroupView) -> u32 {
        acked
    }
    /// The congestion-avoidance increase per cwnd of acknowledged data, in bytes (§7.2.2:
    /// one MTU).
    fn per_window(&self, mtu: u32, group: &GroupView) -> f64;
    /// After a loss (`timeout`: a T3-rtx expiry, else a fast retransmit), the new
    /// (ssthresh, cwnd), or `None` for RFC 9260's reduction (§7.2.3).
    fn reduce(&self, _s: &CongestionState, _group: &GroupView, _timeout: bool) -> Option<(u32, u32)> {
        None
    }
}

/// A coupled multipath controller: RFC 9260's per-destination congestion control with the
/// increases and decreases of the rule `R`, its congestion-avoidance increase applied per
/// [`CaStep`].
#[derive(Clone, Debug)]
pub struct Coupled<R> {
    base: Rfc9260,
    stepper: Stepper,
    rule: R,
}

impl<R: CoupledRule> Coupled<R> {
    /// The controller of `rule`, applying its congestion-avoidance increase per `step`.
    pub fn with_rule(step: CaStep, rule: R) -> Self {
        Coupled { base: Rfc9260::new(Rules::Rfc9260), stepper: Stepper::new(step), rule }
    }

    fn on_loss(&mut self, s: &mut CongestionState, group: &GroupView, timeout: bool) {
        self.stepper.reset();
        match self.rule.reduce(s, group, timeout) {
            Some((ssthresh, cwnd)) => {
                s.ssthresh = ssthresh;
                s.cwnd = cwnd;
                s.partial_bytes_acked = 0;
            }
            None if timeout => self.base.on_timeout(s, group),
            None => self.base.on_fast_retransmit(s, group),
        }
    }
}

impl<R: CoupledRule> Controller for Coupled<R> {
    fn name(&self) -> &'static str {
        R::NAME
    }
    fn init(&mut self, s: &mut CongestionState) {
        self.base.init(s);
    }
    fn reads_group_view(&self) -> bool {
        true
    }
    fn on_ack(&mut self, s: &mut CongestionState, ack: &AckInfo, group: &GroupView) {
        let (mtu, rule) = (s.mtu, &self.rule);
        self.stepper.on_ack(s, ack, |acked| rule.slow_start(acked, group), || rule.per_window(mtu, group));
    }
    fn on_fast_retransmit(&mut self, s: &mut CongestionState, group: &GroupView) {
        self.on_loss(s, group, false);
    }
    fn on_timeout(&mut self, s: &mut CongestionState, group: &GroupView) {
        self.on_loss(s, group, true);
    }
    fn on_idle(&mut self, s: &mut CongestionState, rtos: u32) {
        self.base.on_idle(s, rtos);
    }
}

/// How a coupled controller applies its congestion-avoidance increase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CaStep {
    /// As RFC 9260 §7.2.2 and INET: partial_bytes_acked counts acknowledged bytes, and each
    /// time it reaches cwnd (with the window fully used) cwnd grows by the whole per-window
    /// increase, rounded to the nearest byte (INET rounds up). The default.
    #[default]
    Window,
    /// As RFC 6356 §3 states it: every SACK adds its share, `increase * bytes_acked / cwnd`,
    /// while the window is fully used; fractions of a byte carry over to the next SACK.
    Sack,
}

/// The per-destination state of a coupled controller: how it steps, and the fraction of a
/// byte [`CaStep::Sack`] carries between SACKs.
#[derive(Clone, Debug, Default)]
pub(super) struct Stepper {
    step: CaStep,
    carry: f64,
}

impl Stepper {
    pub(super) fn new(step: CaStep) -> Self {
        Stepper { step, carry: 0.0 }
    }

    /// RFC 9260 §7.2.1 / §7.2.2 for one SACK, with the slow-start growth `slow_start`
    /// (given min(bytes acked, MTU), the §7.2.1 growth) and the congestion-avoidance increase
    /// per cwnd of acknowledged data `per_window` (bytes; negative shrinks cwnd, never below
    /// one MTU; capped at one MTU). Growth only when the window was fully used and not in
    /// Fast Recovery (RFC 9260); in slow start only when the cumulative TSN ack advanced.
    pub(super) fn on_ack(
        &mut self,
        s: &mut CongestionState,
        ack: &AckInfo,
        slow_start: impl FnOnce(u32) -> u32,
        per_window: impl FnOnce() -> f64,
    ) {
        let fully_used = ack.flight_before >= s.cwnd;
        let growth_allowed = fully_used && !ack.in_fast_recovery;
        if s.cwnd <= s.ssthresh {
            if ack.cum_advanced && growth_allowed {
                s.cwnd = s.cwnd.saturating_add(slow_start(ack.bytes_acked.min(s.mtu)));
            }
        } else {
            match self.step {
                CaStep::Window => {
                    s.partial_bytes_acked = s.partial_bytes_acked.saturating_add(ack.bytes_acked);
                    if !fully_used && s.partial_bytes_acked > s.cwnd {
                        s.partial_bytes_acked = s.cwnd;
                    }
                    if s.partial_bytes_acked >= s.cwnd && growth_allowed {
                        s.partial_bytes_acked -= s.cwnd;
                        let inc = per_window().min(f64::from(s.mtu)).round();
                        s.cwnd = add_bytes(s.cwnd, inc, s.mtu);
                    }
                }
                CaStep::Sack => {
                    if growth_allowed && s.cwnd > 0 {
                        let share = f64::from(ack.bytes_acked) / f64::from(s.cwnd);
                        self.carry += per_window().min(f64::from(s.mtu)) * share;
                        let whole = self.carry.trunc();
                        self.carry -= whole;
                        s.cwnd = add_bytes(s.cwnd, whole, s.mtu);
                    }
                }
            }
        }
        // §7.2.2: when all data sent has been acknowledged, partial_bytes_acked is reset.
        if ack.all_acked {
            s.partial_bytes_acked = 0;
        }
    }

    /// Forgets the carried fraction (after a window reduction).
    pub(super) fn reset(&mut self) {
        self.carry = 0.0;
    }
}

/// `x` rounded up to a whole byte, as INET rounds its resource-pooling formulas, ignoring
/// floating-point noise (a ratio such as 0.2 is not exact in binary).
pub(super) fn ceil_bytes(x: f64) -> f64 {
    (x - 1e-6).ceil()
}

/// `cwnd + inc` (whole bytes, possibly negative), never below one MTU.
fn add_bytes(cwnd: u32, inc: f64, mtu: u32) -> u32 {
    let v = f64::from(cwnd) + inc;
    if v <= f64::from(mtu) {
        mtu
    } else {
        v.min(f64::from(u32::MAX)) as u32
    }
}

/// Group states for the controllers' unit tests.
#[cfg(test)]
pub(super) mod fixtures {
    use simtime::Duration;

    use super::super::{AckInfo, CongestionState, GroupView, PathSnapshot};
    use crate::association::{PathId, PathState};

    pub(crate) const MTU: u32 = 1500;

    /// A coupled destination `id` with `cwnd`, `ssthresh` and SRTT `rtt_ms`.
    pub(crate) fn path(id: u32, cwnd: u32, ssthresh: u32, rtt_ms: u64) -> PathSnapshot {
        PathSnapshot {
            id: PathId::new(id),
            state: PathState::Active,
            confirmed: true,
            cwnd,
            ssthresh,
            srtt: Some(Duration::from_millis(rtt_ms)),
            flight_size: cwnd,
            acked_since_loss: 0,
            acked_between_losses: 0,
        }
    }

    /// Path 0: cwnd 30,000 bytes, SRTT 20 ms; path 1: cwnd 15,000 bytes, SRTT 40 ms; both in
    /// congestion avoidance (ssthresh 20,000 and 10,000), seen by the controller of `own`.
    pub(crate) fn two_paths(own: u32) -> GroupView {
        GroupView::from_snapshots(vec![path(0, 30_000, 20_000, 20), path(1, 15_000, 10_000, 40)], PathId::new(own))
    }

    /// The congestion state `view` shows for its own destination.
    pub(crate) fn own_state(view: &GroupView) -> CongestionState {
        let own = view.own().copied().unwrap_or_else(|| path(9, 0, 0, 1));
        CongestionState { cwnd: own.cwnd, ssthresh: own.ssthresh, partial_bytes_acked: 0, mtu: MTU }
    }

    /// A SACK acknowledging `bytes` of a fully used window, advancing the cumulative ack.
    pub(crate) fn ack(bytes: u32, flight_before: u32) -> AckInfo {
        AckInfo {
            bytes_acked: bytes,
            flight_before,
            cum_advanced: true,
            in_fast_recovery: false,
            all_acked: false,
            srtt: None,
        }
    }

    /// Acknowledges one whole window of `s` in MTU-sized SACKs, the window fully used;
    /// returns the growth.
    pub(crate) fn grow_one_window(
        cc: &mut dyn super::super::Controller,
        s: &mut CongestionState,
        view: &GroupView,
    ) -> i64 {
        let (start, mut acked) = (s.cwnd, 0);
        while acked < start {
            let n = MTU.min(start - acked);
            cc.on_ack(s, &ack(n, u32::MAX), view);
            acked += n;
        }
        i64::from(s.cwnd) - i64::from(start)
    }
}
