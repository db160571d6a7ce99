//! One destination transport address of the peer and everything kept per destination:
//! reachability state, error counter, RTO estimator, congestion state and counters (its
//! timers, T3-rtx and heartbeat, are in the association's timer table)
//! (RFC 9260 §6.3, §7.2, §8.2, §8.3; RFC 7829). Multihoming is choosing and updating paths.

use std::net::IpAddr;

use simtime::{Duration, Instant};

use crate::cmt::RtxKind;
use crate::config::Config;
use crate::congestion::{CongestionState, Controller};

/// Reachability of a destination (§8.2; RFC 7829 adds potentially failed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathState {
    /// Reachable; data may be sent to it.
    Active,
    /// RFC 7829: the error counter exceeded PotentiallyFailed.Max.Retrans; no data while an
    /// active destination exists, heartbeats once per RTO.
    PotentiallyFailed,
    /// The error counter exceeded Path.Max.Retrans (§8.2).
    Inactive,
}

impl PathState {
    /// Name used in results and events.
    pub fn name(self) -> &'static str {
        match self {
            PathState::Active => "active",
            PathState::PotentiallyFailed => "pf",
            PathState::Inactive => "inactive",
        }
    }
    /// Numeric code for time series: 0 active, 1 PF, 2 inactive.
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// The §6.3.1 RTO estimator of one destination.
#[derive(Clone, Debug, PartialEq)]
pub struct RtoEstimator {
    /// Smoothed RTT, once measured.
    pub srtt: Option<Duration>,
    /// RTT variation.
    pub rttvar: Duration,
    /// Current RTO, backoff included.
    pub rto: Duration,
}

impl RtoEstimator {
    fn new(config: &Config) -> Self {
        RtoEstimator { srtt: None, rttvar: Duration::ZERO, rto: config.rto_initial.min(config.rto_max) }
    }

    /// §6.3.1 C1–C3 with a new measurement `r`; the result is clamped to [RTO.Min, RTO.Max].
    pub fn on_measurement(&mut self, r: Duration, config: &Config) {
        let r_ns = r.as_nanos() as f64;
        let (srtt, rttvar) = match self.srtt {
            // C1: SRTT = R, RTTVAR = R/2.
            None => (r_ns, r_ns / 2.0),
            // C2: RTTVAR = (1 - beta) RTTVAR + beta |SRTT - R'|, then SRTT = (1 - alpha) SRTT + alpha R'.
            Some(srtt) => {
                let srtt = srtt.as_nanos() as f64;
                let rttvar = self.rttvar.as_nanos() as f64;
                let rttvar = (1.0 - config.rto_beta) * rttvar + config.rto_beta * (srtt - r_ns).abs();
                (((1.0 - config.rto_alpha) * srtt + config.rto_alpha * r_ns), rttvar)
            }
        };
        // C3: RTTVAR is never below the clock granularity G.
        let rttvar = Duration::from_nanos(rttvar.round() as u64).max(config.clock_granularity);
        let srtt = Duration::from_nanos(srtt.round() as u64);
        self.srtt = Some(srtt);
        self.rttvar = rttvar;
        self.rto = srtt.saturating_add(rttvar.saturating_mul(4)).clamp(config.rto_min, config.rto_max);
    }

    /// §6.3.3 E2 / §8.3: RTO = min(2 * RTO, RTO.Max).
    pub fn back_off(&mut self, config: &Config) {
        self.rto = self.rto.saturating_mul(2).min(config.rto_max);
    }
}

/// Per-destination counters that reach results.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathStats {
    /// DATA chunks sent for the first time.
    pub data_chunks_sent: u64,
    /// User-data bytes sent for the first time.
    pub bytes_sent: u64,
    /// User-data bytes retransmitted to this destination.
    pub bytes_retransmitted: u64,
    /// User-data bytes sent to this destination and acknowledged.
    pub bytes_acked: u64,
    /// Fast retransmissions (chunks) sent to this destination.
    pub fast_retransmissions: u64,
    /// Timer-based retransmissions (chunks) sent to this destination.
    pub timeout_retransmissions: u64,
    /// T3-rtx expirations of this destination.
    pub t3_timeouts: u64,
    /// Times this destination entered the potentially-failed state (RFC 7829, CMT-PF).
    pub pf_episodes: u64,
    /// HEARTBEATs sent.
    pub heartbeats_sent: u64,
    /// HEARTBEAT ACKs accepted.
    pub heartbeat_acks: u64,
    /// Heartbeats that went unanswered for an RTO.
    pub heartbeat_timeouts: u64,
    /// SCTP packets sent to this destination.
    pub packets_sent: u64,
    /// Window reductions for an ECNE about data sent here (RFC 9260 Appendix A).
    pub ecn_reductions: u64,
}

/// One destination transport address and its state.
#[derive(Debug)]
pub struct Path {
    /// The peer's address.
    pub remote: IpAddr,
    /// Reachability.
    pub state: PathState,
    /// §5.4: confirmed by a HEARTBEAT ACK (or the address the handshake used).
    pub confirmed: bool,
    /// Consecutive unacknowledged retransmission timeouts or heartbeats (§8.2).
    pub error_count: u32,
    /// RTO estimator.
    pub rto: RtoEstimator,
    /// cwnd, ssthresh, partial_bytes_acked, MTU.
    pub cc: CongestionState,
    /// The congestion-control algorithm.
    pub controller: Box<dyn Controller>,
    /// User-data bytes sent to this destination and not yet acknowledged or marked for
    /// retransmission.
    pub flight_size: u32,
    /// A HEARTBEAT is outstanding (sent, no ACK yet).
    pub hb_outstanding: bool,
    /// Data were sent to this destination since the heartbeat timer was last armed.
    pub data_since_hb: bool,
    /// Nonce carried in this path's HEARTBEATs (§5.4 path verification).
    pub hb_nonce: u64,
    /// TSN whose acknowledgment will give an RTT sample, and when it was sent (§6.3.1: one
    /// measurement per round trip, never on a retransmitted chunk).
    pub rtt_probe: Option<(u32, Instant)>,
    /// Fast Recovery exit point (§7.2.4), kept per destination.
    pub fast_recovery_exit: Option<u32>,
    /// The highest TSN sent when this destination's window was last reduced (ECN, fast
    /// retransmit or T3-rtx): an ECNE for a TSN at or below it is not reacted to (one
    /// reduction per window, RFC 3168 §6.1.2).
    pub ecn_recover: Option<u32>,
    /// One packet of retransmissions goes here at the next transmission opportunity even if
    /// cwnd is full, and why: a T3-rtx expiry (§6.3.3 E3: that one packet only) or a fast
    /// retransmit (§7.2.4 step 3). Cleared once packets are built.
    pub force_packet: Option<RtxKind>,
    /// Last instant data was sent here (for the §7.2.1 idle rule).
    pub last_data_sent: Option<Instant>,
    /// The loss rate of the path to this destination as the driver declares it (a fraction,
    /// 0 when undeclared), for the ideal RTX-LOSSRATE policy
    /// ([`crate::Association::set_loss_rate_hint`]). Nothing else reads it.
    pub loss_rate_hint: f64,
    /// User-data bytes last sent here and not yet covered by the cumulative TSN ack (gap
    /// acknowledged or not): this destination's share of the send buffer, which buffer
    /// splitting limits ([`crate::BufferSplitting`]).
    pub queued_bytes: u32,
    /// Bytes acknowledged on this destination since its last loss (fast retransmit or T3-rtx
    /// expiry); OLIA's loss intervals ([`crate::congestion::PathSnapshot::loss_interval`]).
    pub acked_since_loss: u64,
    /// Bytes acknowledged on this destination between its last two losses.
    pub acked_between_losses: u64,
    /// CMT's cwnd update (CUC): a TSN below which every chunk sent here once is
    /// acknowledged, where the search for this destination's pseudo-cumack resumes (`None`:
    /// from the cumulative ack). It only moves up, so the searches cost, over a transfer,
    /// one pass over the TSNs.
    pub(crate) pseudo_cumack_scan: Option<u32>,
    /// CMT's split fast retransmit: a TSN below which every chunk last sent here is
    /// acknowledged (`None`: the cumulative ack), so the search for chunks that may take
    /// miss indications starts there. It moves up as chunks are acknowledged and down
    /// when a lower TSN is retransmitted here.
    pub(crate) miss_floor: Option<u32>,
    /// Counters.
    pub stats: PathStats,
}

impl Path {
    /// A path to `remote`, with the initial RTO and congestion window. `peer_rwnd` is the
    /// initial ssthresh (§7.2.1: "arbitrarily high", the peer's a_rwnd).
    pub fn new(remote: IpAddr, config: &Config, peer_rwnd: u32, hb_nonce: u64) -> Self {
        let mut controller = config.congestion.build();
        let mut cc = CongestionState { cwnd: 0, ssthresh: peer_rwnd.max(1), partial_bytes_acked: 0, mtu: config.pmtu };
        controller.init(&mut cc);
        Path {
            remote,
            state: PathState::Active,
            confirmed: false,
            error_count: 0,
            rto: RtoEstimator::new(config),
            cc,
            controller,
            flight_size: 0,
            hb_outstanding: false,
            data_since_hb: false,
            hb_nonce,
            rtt_probe: None,
            fast_recovery_exit: None,
            ecn_recover: None,
            force_packet: None,
            last_data_sent: None,
            loss_rate_hint: 0.0,
            queued_bytes: 0,
            acked_since_loss: 0,
            acked_between_losses: 0,
            pseudo_cumack_scan: None,
            miss_floor: None,
            stats: PathStats::default(),
        }
    }

    /// True if data may be sent here while some active destination exists.
    pub fn is_usable(&self) -> bool {
        self.state == PathState::Active && self.confirmed
    }

    /// §6.1 rule B: a chunk of `len` bytes may be sent if the flight stays below
    /// cwnd + PMTU - 1.
    pub fn cwnd_allows(&self, len: u32) -> bool {
        self.window_allows(len, u32::MAX)
    }

    /// A loss was detected here: the loss intervals move on.
    pub(crate) fn note_loss(&mut self) {
        self.acked_between_losses = std::mem::take(&mut self.acked_since_loss);
    }

    /// As [`Path::cwnd_allows`] with the window capped at `limit` (Max.Burst, §6.1 D).
    pub fn window_allows(&self, len: u32, limit: u32) -> bool {
        self.flight_size + len < self.cc.cwnd.min(limit) + self.cc.mtu
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rto_follows_rfc_9260_formulas() {
        let config = Config { rto_min: Duration::from_millis(10), ..Config::default() };
        let mut e = RtoEstimator::new(&config);
        assert_eq!(e.rto, Duration::from_secs(1));
        e.on_measurement(Duration::from_millis(100), &config);
        // SRTT 100 ms, RTTVAR 50 ms, RTO 300 ms.
        assert_eq!(e.rto, Duration::from_millis(300));
        e.on_measurement(Duration::from_millis(200), &config);
        // RTTVAR = 0.75*50 + 0.25*100 = 62.5; SRTT = 0.875*100 + 0.125*200 = 112.5; RTO = 362.5.
        assert_eq!(e.srtt, Some(Duration::from_micros(112_500)));
        assert_eq!(e.rto, Duration::from_micros(362_500));
        for _ in 0..10 {
            e.back_off(&config);
        }
        assert_eq!(e.rto, Duration::from_secs(60));
    }

    #[test]
    fn rto_is_clamped_to_min() {
        let config = Config::default();
        let mut e = RtoEstimator::new(&config);
        e.on_measurement(Duration::from_millis(20), &config);
        assert_eq!(e.rto, Duration::from_secs(1));
        assert_eq!(e.rttvar, Duration::from_millis(10));
    }
}
