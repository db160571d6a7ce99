//! The standard SCTP congestion control (RFC 9260 §7.2, optionally with RFC 4960's rules)
//! and the `ca-shrink` variant.

use super::{AckInfo, CongestionState, Controller, GroupView};

/// Which edition of the §7.2 rules to follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    /// RFC 9260: no window growth in Fast Recovery; partial_bytes_acked is capped at cwnd
    /// when the window was not fully used (RFC 4960 errata folded into RFC 9260 §7.2.2).
    Rfc9260,
    /// RFC 4960 as published: growth also during Fast Recovery, no cap.
    Rfc4960,
}

/// RFC 9260 §7.2 slow start, congestion avoidance, fast-retransmit and timeout reactions.
#[derive(Clone, Debug)]
pub struct Rfc9260 {
    rules: Rules,
}

impl Rfc9260 {
    /// A controller following `rules`.
    pub fn new(rules: Rules) -> Self {
        Rfc9260 { rules }
    }
}

impl Controller for Rfc9260 {
    fn name(&self) -> &'static str {
        match self.rules {
            Rules::Rfc9260 => "rfc9260",
            Rules::Rfc4960 => "rfc4960",
        }
    }

    /// §7.2.1: initial cwnd = min(4*MTU, max(2*MTU, 4380 bytes)).
    fn init(&mut self, s: &mut CongestionState) {
        s.cwnd = (4 * s.mtu).min((2 * s.mtu).max(4380));
        s.partial_bytes_acked = 0;
    }

    fn on_ack(&mut self, s: &mut CongestionState, ack: &AckInfo, _group: &GroupView) {
        let growth_allowed = self.rules == Rules::Rfc4960 || !ack.in_fast_recovery;
        let fully_used = ack.flight_before >= s.cwnd;
        if s.cwnd <= s.ssthresh {
            // §7.2.1 slow start: only when the SACK advances the cumulative TSN ack, the
            // window was fully utilised and (RFC 9260) we are not in Fast Recovery; grow by at
            // most one MTU per SACK.
            if ack.cum_advanced && fully_used && growth_allowed {
                s.cwnd = s.cwnd.saturating_add(ack.bytes_acked.min(s.mtu));
            }
        } else {
            // §7.2.2 congestion avoidance: count every newly acknowledged byte; one MTU of
            // growth per cwnd of acknowledged data while the window is fully used.
            s.partial_bytes_acked = s.partial_bytes_acked.saturating_add(ack.bytes_acked);
            if self.rules == Rules::Rfc9260 && !fully_used && s.partial_bytes_acked > s.cwnd {
                s.partial_bytes_acked = s.cwnd;
            }
            if s.partial_bytes_acked >= s.cwnd && fully_used && growth_allowed {
                s.partial_bytes_acked -= s.cwnd;
                s.cwnd = s.cwnd.saturating_add(s.mtu);
            }
        }
        // §7.2.2: when all data sent has been acknowledged, partial_bytes_acked is reset.
        if ack.all_acked {
            s.partial_bytes_acked = 0;
        }
    }

    /// §7.2.4 step 2: ssthresh = max(cwnd/2, 4*MTU), cwnd = ssthresh.
    fn on_fast_retransmit(&mut self, s: &mut CongestionState, _group: &GroupView) {
        s.ssthresh = (s.cwnd / 2).max(4 * s.mtu);
        s.cwnd = s.ssthresh;
        s.partial_bytes_acked = 0;
    }

    /// §7.2.3: ssthresh = max(cwnd/2, 4*MTU), cwnd = 1 MTU.
    fn on_timeout(&mut self, s: &mut CongestionState, _group: &GroupView) {
        s.ssthresh = (s.cwnd / 2).max(4 * s.mtu);
        s.cwnd = s.mtu;
        s.partial_bytes_acked = 0;
    }

    /// §7.2.1: after idle, cwnd = max(cwnd/2, 4*MTU) per RTO without transmission.
    fn on_idle(&mut self, s: &mut CongestionState, rtos: u32) {
        for _ in 0..rtos.min(32) {
            s.cwnd = (s.cwnd / 2).max(4 * s.mtu);
        }
    }
}

/// RFC 9260 plus the "new stage" of paper 000 (figure 9): after every congestion-avoidance
/// update, while cwnd > ssthresh, cwnd -= factor * cwnd (never below one MTU). Everything
/// else (initial window, fast retransmit, timeout) is RFC 9260's, not the OMNeT++ defaults
/// the paper's pseudo-code also shows (2*MTU initial window, 4 duplicate SACKs).
#[derive(Clone, Debug)]
pub struct CaShrink {
    base: Rfc9260,
    factor: f64,
}

impl CaShrink {
    /// The variant removing `factor` of cwnd per SACK above ssthresh.
    pub fn new(factor: f64) -> Self {
        CaShrink { base: Rfc9260::new(Rules::Rfc9260), factor }
    }
}

impl Controller for CaShrink {
    fn name(&self) -> &'static str {
        "ca-shrink"
    }
    fn init(&mut self, s: &mut CongestionState) {
        self.base.init(s);
    }
    fn on_ack(&mut self, s: &mut CongestionState, ack: &AckInfo, group: &GroupView) {
        self.base.on_ack(s, ack, group);
        if s.cwnd > s.ssthresh {
            let cut = (f64::from(s.cwnd) * self.factor) as u32;
            s.cwnd = s.cwnd.saturating_sub(cut).max(s.mtu);
        }
    }
    fn on_fast_retransmit(&mut self, s: &mut CongestionState, group: &GroupView) {
        self.base.on_fast_retransmit(s, group);
    }
    fn on_timeout(&mut self, s: &mut CongestionState, group: &GroupView) {
        self.base.on_timeout(s, group);
    }
    fn on_idle(&mut self, s: &mut CongestionState, rtos: u32) {
        self.base.on_idle(s, rtos);
    }
    fn on_pf_exit(&mut self, s: &mut CongestionState, cwnd: Option<u32>) {
        self.base.on_pf_exit(s, cwnd);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(cwnd: u32, ssthresh: u32) -> CongestionState {
        CongestionState { cwnd, ssthresh, partial_bytes_acked: 0, mtu: 1500 }
    }

    fn ack(bytes: u32, flight_before: u32) -> AckInfo {
        AckInfo {
            bytes_acked: bytes,
            flight_before,
            cum_advanced: true,
            in_fast_recovery: false,
            all_acked: false,
            srtt: None,
        }
    }

    #[test]
    fn initial_window_is_min_4mtu_max_2mtu_4380() {
        let mut s = state(0, 100_000);
        Rfc9260::new(Rules::Rfc9260).init(&mut s);
        assert_eq!(s.cwnd, 4380);
        let mut s = CongestionState { mtu: 9000, ..s };
        Rfc9260::new(Rules::Rfc9260).init(&mut s);
        assert_eq!(s.cwnd, 18000);
    }

    #[test]
    fn slow_start_grows_by_at_most_one_mtu_and_only_when_fully_used() {
        let mut cc = Rfc9260::new(Rules::Rfc9260);
        let mut s = state(4380, 100_000);
        cc.on_ack(&mut s, &ack(2904, 4380), &GroupView::default());
        assert_eq!(s.cwnd, 5880);
        cc.on_ack(&mut s, &ack(1000, 4000), &GroupView::default()); // window not fully used
        assert_eq!(s.cwnd, 5880);
        let in_fr = AckInfo { in_fast_recovery: true, ..ack(1452, 6000) };
        cc.on_ack(&mut s, &in_fr, &GroupView::default());
        assert_eq!(s.cwnd, 5880, "RFC 9260: no growth in fast recovery");
        Rfc9260::new(Rules::Rfc4960).on_ack(&mut s, &in_fr, &GroupView::default());
        assert_eq!(s.cwnd, 7332, "RFC 4960: growth in fast recovery");
    }

    #[test]
    fn congestion_avoidance_adds_one_mtu_per_window() {
        let mut cc = Rfc9260::new(Rules::Rfc9260);
        let mut s = state(15000, 10000);
        for _ in 0..9 {
            cc.on_ack(&mut s, &ack(1500, 15000), &GroupView::default());
        }
        assert_eq!((s.cwnd, s.partial_bytes_acked), (15000, 13500));
        cc.on_ack(&mut s, &ack(1500, 15000), &GroupView::default());
        assert_eq!((s.cwnd, s.partial_bytes_acked), (16500, 0));
    }

    #[test]
    fn loss_reactions() {
        let mut cc = Rfc9260::new(Rules::Rfc9260);
        let mut s = state(30000, 100_000);
        cc.on_fast_retransmit(&mut s, &GroupView::default());
        assert_eq!((s.cwnd, s.ssthresh), (15000, 15000));
        let mut s = state(8000, 100_000);
        cc.on_timeout(&mut s, &GroupView::default());
        assert_eq!((s.cwnd, s.ssthresh), (1500, 6000));
        let mut s = state(40000, 100_000);
        cc.on_idle(&mut s, 2);
        assert_eq!(s.cwnd, 10000);
    }

    #[test]
    fn ca_shrink_cuts_above_ssthresh_only() {
        let mut cc = CaShrink::new(0.144);
        let mut s = state(9500, 5000);
        cc.on_ack(&mut s, &ack(100, 9500), &GroupView::default());
        assert_eq!(s.cwnd, 9500 - 1368);
        let mut s = state(4380, 5000);
        cc.on_ack(&mut s, &ack(1452, 4380), &GroupView::default());
        assert_eq!(s.cwnd, 5832 - 839, "slow start overshoots ssthresh, then the cut applies");
    }
}
