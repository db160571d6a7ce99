//! Congestion control per destination (RFC 9260 §7), behind the [`Controller`] trait.
//!
//! The association keeps one [`CongestionState`] per path and calls the path's controller at
//! the moments §7.2 names: on every SACK that acknowledges new data sent to that path, on a
//! fast retransmit, on a T3-rtx timeout and after idle periods. Every method has a no-op
//! default, so a variant overrides only what it changes.
//!
//! Choosing one: [`CongestionConfig`] is the registry; scenarios name it
//! (`congestion = "rfc9260"`). Adding a variant takes three steps: write a type implementing
//! [`Controller`] (usually wrapping [`Rfc9260`] and changing one method), add a
//! [`CongestionConfig`] variant that builds it, and add its name to
//! [`CongestionConfig::NAMES`] and [`CongestionConfig::from_name`].

mod standard;

pub use standard::{CaShrink, Rfc9260, Rules};

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
    /// The SACK advanced the cumulative TSN ack point.
    pub cum_advanced: bool,
    /// The destination is in Fast Recovery (§7.2.4).
    pub in_fast_recovery: bool,
    /// Nothing remains outstanding to this destination.
    pub all_acked: bool,
}

/// A congestion-control algorithm for one destination. Defaults do nothing.
pub trait Controller: Send + std::fmt::Debug {
    /// The registry name (what scenarios write).
    fn name(&self) -> &'static str;
    /// Sets the initial window before any data is sent.
    fn init(&mut self, state: &mut CongestionState) {
        let _ = state;
    }
    /// A SACK acknowledged new data sent to this destination.
    fn on_ack(&mut self, state: &mut CongestionState, ack: &AckInfo) {
        let _ = (state, ack);
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
}

/// Which controller every destination of an association uses.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
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

    /// The registry name.
    pub fn name(&self) -> &'static str {
        match self {
            CongestionConfig::Rfc9260 => "rfc9260",
            CongestionConfig::Rfc4960 => "rfc4960",
            CongestionConfig::CaShrink { .. } => "ca-shrink",
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
        match *self {
            CongestionConfig::Rfc9260 => Box::new(Rfc9260::new(Rules::Rfc9260)),
            CongestionConfig::Rfc4960 => Box::new(Rfc9260::new(Rules::Rfc4960)),
            CongestionConfig::CaShrink { factor } => Box::new(CaShrink::new(factor)),
        }
    }
}
