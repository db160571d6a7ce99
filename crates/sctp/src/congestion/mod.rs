//! Congestion control per destination (RFC 9260 §7), behind the [`Controller`] trait.
//!
//! The association keeps one [`CongestionState`] per path and calls the path's controller at
//! the moments §7.2 names: on every SACK that acknowledges new data sent to that path, on a
//! fast retransmit, on a T3-rtx timeout and after idle periods; and when the path comes back
//! from potentially failed (RFC 7829). Every method has a no-op default, so a variant
//! overrides only what it changes.
//!
//! On a SACK a controller gets its own path's SRTT ([`AckInfo::srtt`]) and a read-only
//! [`GroupView`] of every path of the association, taken once per SACK (when some controller
//! asks for it with [`Controller::reads_group_view`]), so coupled multipath controllers (LIA,
//! RFC 6356; OLIA; resource pooling) are ordinary controllers.
//!
//! Choosing one: [`CongestionConfig`] is the registry; scenarios name it
//! (`congestion = "rfc9260"`). Adding a variant takes three steps: write a type implementing
//! [`Controller`] (usually wrapping [`Rfc9260`] and changing one method), add a
//! [`CongestionConfig`] variant that builds it, and add its name to
//! [`CongestionConfig::NAMES`] and [`CongestionConfig::from_name`]. Code embedding the
//! engine can also supply its own through [`CongestionConfig::Custom`].

mod group;
mod standard;

pub use group::{GroupView, PathSnapshot};
pub use standard::{CaShrink, Rfc9260, Rules};

use simtime::Duration;

use crate::plugin::Plugin;

/// The congestion variables of one destination (§7.2), in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CongestionState {
    /// Congestion window.
    pub cwnd: u32,
    /// Slow-start threshold.
    pub ssthresh: u32,
    /// partial_bytes_acked (§7.2.2).
    pub partial_bytes_acked: u32,
    /// The destination's path MTU (the "MTU" of §7.2's formulas).
    pub mtu: u32,
}

/// What a SACK did for one destination, handed to [`Controller::on_ack`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckInfo {
    /// Bytes of user data newly acknowledged on this destination, by the cumulative TSN ack
    /// and by gap ack blocks.
    pub bytes_acked: u32,
    /// Bytes outstanding to this destination before the SACK arrived (for "cwnd fully
    /// utilized").
    pub flight_before: u32,
    /// The SACK advanced the cumulative TSN ack point; with CMT's cwnd update (CUC,
    /// [`crate::cmt::CmtConfig::cuc`]) this destination's pseudo-cumack instead.
    pub cum_advanced: bool,
    /// The destination is in Fast Recovery (§7.2.4).
    pub in_fast_recovery: bool,
    /// Nothing remains outstanding to this destination.
    pub all_acked: bool,
    /// The destination's smoothed RTT (§6.3.1), once measured; updated by this SACK first.
    pub srtt: Option<Duration>,
}

/// A congestion-control algorithm for one destination. Defaults do nothing.
pub trait Controller: Send + std::fmt::Debug {
    /// The registry name (what scenarios write).
    fn name(&self) -> &'static str;
    /// Sets the initial window before any data is sent.
    fn init(&mut self, state: &mut CongestionState) {
        let _ = state;
    }
    /// True if [`Controller::on_ack`] reads its `group` argument (coupled multipath
    /// controllers). The association takes the group view on a SACK only if one of its
    /// controllers says so; otherwise `group` is empty. Default false.
    fn reads_group_view(&self) -> bool {
        false
    }
    /// A SACK acknowledged new data sent to this destination. `group` shows every
    /// destination of the association (this one included) as the SACK left them, before
    /// any controller reacted to it (empty unless [`Controller::reads_group_view`]).
    fn on_ack(&mut self, state: &mut CongestionState, ack: &AckInfo, group: &GroupView) {
        let _ = (state, ack, group);
    }
    /// Loss detected by miss indications; entering Fast Recovery (§7.2.4).
    fn on_fast_retransmit(&mut self, state: &mut CongestionState) {
        let _ = state;
    }
    /// The T3-rtx timer of this destination expired (§7.2.3).
    fn on_timeout(&mut self, state: &mut CongestionState) {
        let _ = state;
    }
    /// The destination sent no data for `rtos` whole RTOs (§7.2.1, last paragraph).
    fn on_idle(&mut self, state: &mut CongestionState, rtos: u32) {
        let _ = (state, rtos);
    }
    /// The destination left the potentially-failed state for active (RFC 7829 §4: a
    /// HEARTBEAT ACK or an acknowledged chunk). `cwnd` is the configured
    /// [`crate::Config::pf_return_cwnd`]. RFC 7829 leaves the congestion state alone, as the
    /// default does when `cwnd` is `None`; CMT-PF (Natarajan et al.) restarts such a
    /// destination at 1 or 2 MTU, which the default applies when `cwnd` is given.
    fn on_pf_exit(&mut self, state: &mut CongestionState, cwnd: Option<u32>) {
        if let Some(cwnd) = cwnd {
            state.cwnd = cwnd;
        }
    }
}

/// Which controller every destination of an association uses.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum CongestionConfig {
    /// RFC 9260 §7.2 (`"rfc9260"`, the default).
    #[default]
    Rfc9260,
    /// RFC 4960 §7.2 rules, before the errata RFC 9260 folded in (`"rfc4960"`).
    Rfc4960,
    /// RFC 9260 plus the extra stage of the "new stage" study (paper 000, figure 9): after
    /// each congestion-avoidance update, while cwnd > ssthresh, cwnd -= factor * cwnd
    /// (`"ca-shrink"`, factor 0.144 by default).
    CaShrink {
        /// Fraction of cwnd removed per SACK while cwnd > ssthresh.
        factor: f64,
    },
    /// A controller supplied by the embedding code, built once per destination.
    Custom(Plugin<dyn Controller>),
}

impl CongestionConfig {
    /// Registry names, in documentation order.
    pub const NAMES: [&'static str; 3] = ["rfc9260", "rfc4960", "ca-shrink"];
    /// Default factor of `ca-shrink` (paper 000, figure 9).
    pub const DEFAULT_SHRINK_FACTOR: f64 = 0.144;

    /// The RFC 4960 rules.
    pub fn rfc4960() -> Self {
        CongestionConfig::Rfc4960
    }

    /// Looks a controller up by name; `factor` is used by `ca-shrink` (default 0.144).
    pub fn from_name(name: &str, factor: Option<f64>) -> Option<Self> {
        Some(match name {
            "rfc9260" => CongestionConfig::Rfc9260,
            "rfc4960" => CongestionConfig::Rfc4960,
            "ca-shrink" => CongestionConfig::CaShrink { factor: factor.unwrap_or(Self::DEFAULT_SHRINK_FACTOR) },
            _ => return None,
        })
    }

    /// The registry name (a plugin's own name for [`CongestionConfig::Custom`]).
    pub fn name(&self) -> &'static str {
        match self {
            CongestionConfig::Rfc9260 => "rfc9260",
            CongestionConfig::Rfc4960 => "rfc4960",
            CongestionConfig::CaShrink { .. } => "ca-shrink",
            CongestionConfig::Custom(p) => p.name(),
        }
    }

    /// The shrink factor, for variants that have one.
    pub fn shrink_factor(&self) -> Option<f64> {
        match self {
            CongestionConfig::CaShrink { factor } => Some(*factor),
            _ => None,
        }
    }

    /// A fresh controller for one destination.
    pub fn build(&self) -> Box<dyn Controller> {
        match self {
            CongestionConfig::Rfc9260 => Box::new(Rfc9260::new(Rules::Rfc9260)),
            CongestionConfig::Rfc4960 => Box::new(Rfc9260::new(Rules::Rfc4960)),
            CongestionConfig::CaShrink { factor } => Box::new(CaShrink::new(*factor)),
            CongestionConfig::Custom(p) => p.build(),
        }
    }
}
