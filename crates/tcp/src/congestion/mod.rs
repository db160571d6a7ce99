//! Congestion control: the [`Controller`] trait and its implementations, chosen by name.
//!
//! A controller owns the congestion window and the slow-start threshold and reacts to
//! acknowledgments, congestion events and timeouts. Loss *detection and recovery* (which
//! segment to retransmit, when recovery ends) belong to the connection; the controller only
//! says how large the window is. [`CcAlgorithm`] is the registry: a name in a scenario picks a
//! controller and a loss-recovery algorithm.
//!
//! | name | window growth and reduction | loss recovery |
//! |---|---|---|
//! | `newreno` | RFC 5681 slow start and congestion avoidance | RFC 6582 NewReno |
//! | `sack` | RFC 5681 | RFC 6675 (SACK scoreboard, pipe) when SACK is negotiated, else RFC 6582 |
//! | `cubic` | RFC 9438 CUBIC | RFC 6675 when SACK is negotiated, else RFC 6582 |

mod cubic;
mod newreno;

pub use cubic::Cubic;
pub use newreno::NewReno;

use simtime::{Duration, Instant};

/// What an acknowledgment tells the controller.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    /// When the ACK arrived.
    pub now: Instant,
    /// Bytes newly acknowledged (cumulatively).
    pub acked: u64,
    /// Smoothed round-trip time, if measured yet.
    pub srtt: Option<Duration>,
    /// Smallest round-trip time seen.
    pub min_rtt: Option<Duration>,
    /// Bytes in flight before this ACK.
    pub in_flight: u64,
}

/// A congestion controller. Every reaction has a no-op default, so a controller implements
/// only what it changes.
pub trait Controller: Send + std::fmt::Debug {
    /// Congestion window in bytes.
    fn window(&self) -> u64;
    /// Slow-start threshold in bytes (`u64::MAX` before the first congestion event).
    fn ssthresh(&self) -> u64;
    /// New data was cumulatively acknowledged outside loss recovery.
    fn on_ack(&mut self, ack: &AckInfo) {
        let _ = ack;
    }
    /// Loss was detected by duplicate ACKs or SACK (fast retransmit): reduce the window.
    /// `flight` is FlightSize (RFC 5681 §3.1, eq. 4).
    fn on_congestion_event(&mut self, now: Instant, flight: u64) {
        let _ = (now, flight);
    }
    /// An ECN-Echo arrived (RFC 3168 §6.1.2): reduce the window as for a loss, without
    /// retransmitting or entering loss recovery. The connection calls this at most once per
    /// window of data. By default the reduction of [`Controller::on_congestion_event`]
    /// (NewReno: ssthresh = max(FlightSize / 2, 2*SMSS), cwnd = ssthresh; CUBIC: RFC 9438
    /// §4.6, the same multiplicative decrease as for a loss).
    fn on_ecn_echo(&mut self, now: Instant, flight: u64) {
        self.on_congestion_event(now, flight);
    }
    /// Loss recovery ended (a full acknowledgment); `flight` is FlightSize then.
    fn on_recovery_exit(&mut self, now: Instant, flight: u64) {
        let _ = (now, flight);
    }
    /// The retransmission timer expired; `flight` is FlightSize before the timeout. With
    /// `reduce` false the loss was already reacted to (a repeated timeout of the same data,
    /// RFC 5681 §3.1 note on eq. (4), or a timeout during fast recovery): ssthresh stays.
    fn on_timeout(&mut self, now: Instant, flight: u64, reduce: bool) {
        let _ = (now, flight, reduce);
    }
}

/// Which loss recovery the connection runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// RFC 6582 NewReno: partial ACKs drive retransmissions, dupACKs inflate the window.
    NewReno,
    /// RFC 6675: SACK scoreboard, `pipe` and `NextSeg()` (needs SACK negotiated).
    Sack,
}

/// The congestion-control algorithms, by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CcAlgorithm {
    /// RFC 5681 window, RFC 6582 recovery.
    #[default]
    NewReno,
    /// RFC 5681 window, RFC 6675 SACK-based recovery.
    Sack,
    /// RFC 9438 CUBIC window, RFC 6675 recovery.
    Cubic,
}

impl CcAlgorithm {
    /// Every algorithm name, as scenarios write them.
    pub const NAMES: [&'static str; 3] = ["newreno", "sack", "cubic"];

    /// The algorithm called `name`.
    pub fn from_name(name: &str) -> Option<CcAlgorithm> {
        match name {
            "newreno" => Some(CcAlgorithm::NewReno),
            "sack" => Some(CcAlgorithm::Sack),
            "cubic" => Some(CcAlgorithm::Cubic),
            _ => None,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            CcAlgorithm::NewReno => "newreno",
            CcAlgorithm::Sack => "sack",
            CcAlgorithm::Cubic => "cubic",
        }
    }

    /// A fresh controller for sender MSS `smss` and initial window `iw` bytes.
    pub fn build(self, smss: u64, iw: u64) -> Box<dyn Controller> {
        match self {
            CcAlgorithm::NewReno | CcAlgorithm::Sack => Box::new(NewReno::new(smss, iw)),
            CcAlgorithm::Cubic => Box::new(Cubic::new(smss, iw)),
        }
    }

    /// The loss recovery to run when SACK was (or was not) negotiated.
    pub fn recovery(self, sack_negotiated: bool) -> Recovery {
        match self {
            CcAlgorithm::NewReno => Recovery::NewReno,
            _ if sack_negotiated => Recovery::Sack,
            _ => Recovery::NewReno,
        }
    }
}

/// RFC 6928 §2: the initial window, `min(10*MSS, max(2*MSS, 14600))` bytes.
pub fn rfc6928_initial_window(smss: u64) -> u64 {
    (10 * smss).min((2 * smss).max(14600))
}
