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
//! Coupled multipath controllers, for associations that send over several destinations at
//! once (CMT): `lia` (RFC 6356), `olia` (Khalili et al.), `rp-v1` and `rp-v2` (Dreibholz et
//! al.'s resource pooling, as INET implements it); `uncoupled` names the default RFC 9260
//! controller run independently per destination, as CMT-SCTP (Iyengar et al.) does.
//!
//! Choosing one: [`CongestionConfig`] is the registry; scenarios name it
//! (`congestion = "rfc9260"`). Adding a variant takes three steps: write a type implementing
//! [`Controller`] (usually wrapping [`Rfc9260`] and changing one method), add a
//! [`CongestionConfig`] variant that builds it, and add its name to
//! [`CongestionConfig::NAMES`] and [`CongestionConfig::from_name`]. Code embedding the
//! engine can also supply its own through [`CongestionConfig::Custom`].

mod coupled;
mod group;
mod lia;
mod olia;
mod rp_v1;
mod rp_v2;
mod standard;

pub use coupled::{CaStep, Coupled, CoupledRule};
pub use group::{Coupling, GroupView, PathSnapshot};
pub use lia::{Lia, LiaRule};
pub use olia::{Olia, OliaBest, OliaRule};
pub use rp_v1::{RpV1, RpV1Rule};
pub use rp_v2::{RpV2, RpV2Rule};
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
    /// Loss detected by miss indications; entering Fast Recovery (§7.2.4). `group` is the
    /// view of the SACK that reported the loss (empty unless
    /// [`Controller::reads_group_view`]).
    fn on_fast_retransmit(&mut self, state: &mut CongestionState, group: &GroupView) {
        let _ = (state, group);
    }
    /// An ECNE reported a CE mark on data sent to this destination (RFC 9260 Appendix A,
    /// RFC 3168 §6.1.2): reduce the window as for a loss, without Fast Recovery. The
    /// association calls it at most once per window of the destination. By default the
    /// reduction of [`Controller::on_fast_retransmit`] (§7.2.4: ssthresh = max(cwnd/2,
    /// 4*MTU), cwnd = ssthresh).
    fn on_ecn_echo(&mut self, state: &mut CongestionState, group: &GroupView) {
        self.on_fast_retransmit(state, group);
    }
    /// The T3-rtx timer of this destination expired (§7.2.3). `group` is taken at the
    /// expiry, before any reaction (empty unless [`Controller::reads_group_view`]).
    fn on_timeout(&mut self, state: &mut CongestionState, group: &GroupView) {
        let _ = (state, group);
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
    /// RFC 6356 Linked Increases (`"lia"`), see [`Lia`].
    Lia {
        /// How the congestion-avoidance increase is applied (default per window).
        step: CaStep,
    },
    /// Khalili et al.'s Opportunistic Linked Increases (`"olia"`), see [`Olia`].
    Olia {
        /// How the congestion-avoidance increase is applied (default per window).
        step: CaStep,
        /// How the best paths are chosen (default as the authors' implementation).
        best: OliaBest,
    },
    /// CMT/RPv1 resource pooling (`"rp-v1"`), see [`RpV1`].
    RpV1 {
        /// How the congestion-avoidance increase is applied (default per window).
        step: CaStep,
    },
    /// CMT/RPv2 resource pooling (`"rp-v2"`), see [`RpV2`].
    RpV2 {
        /// How the congestion-avoidance increase is applied (default per window).
        step: CaStep,
    },
    /// A controller supplied by the embedding code, built once per destination.
    Custom(Plugin<dyn Controller>),
}

impl CongestionConfig {
    /// Registry names, in documentation order. `uncoupled` is another name of `rfc9260`
    /// (each destination on its own, as CMT-SCTP without coupling runs).
    pub const NAMES: [&'static str; 8] =
        ["rfc9260", "rfc4960", "ca-shrink", "uncoupled", "lia", "olia", "rp-v1", "rp-v2"];
    /// True for the names of coupled multipath controllers.
    pub fn is_coupled_name(name: &str) -> bool {
        matches!(name, "lia" | "olia" | "rp-v1" | "rp-v2")
    }
    /// Default factor of `ca-shrink` (paper 000, figure 9).
    pub const DEFAULT_SHRINK_FACTOR: f64 = 0.144;

    /// The RFC 4960 rules.
    pub fn rfc4960() -> Self {
        CongestionConfig::Rfc4960
    }

    /// Looks a controller up by name; `factor` is used by `ca-shrink` (default 0.144).
    pub fn from_name(name: &str, factor: Option<f64>) -> Option<Self> {
        Some(match name {
            "rfc9260" | "uncoupled" => CongestionConfig::Rfc9260,
            "rfc4960" => CongestionConfig::Rfc4960,
            "ca-shrink" => CongestionConfig::CaShrink { factor: factor.unwrap_or(Self::DEFAULT_SHRINK_FACTOR) },
            "lia" => CongestionConfig::Lia { step: CaStep::default() },
            "olia" => CongestionConfig::Olia { step: CaStep::default(), best: OliaBest::default() },
            "rp-v1" => CongestionConfig::RpV1 { step: CaStep::default() },
            "rp-v2" => CongestionConfig::RpV2 { step: CaStep::default() },
            _ => return None,
        })
    }

    /// The registry name (a plugin's own name for [`CongestionConfig::Custom`]).
    pub fn name(&self) -> &'static str {
        match self {
            CongestionConfig::Rfc9260 => "rfc9260",
            CongestionConfig::Rfc4960 => "rfc4960",
            CongestionConfig::CaShrink { .. } => "ca-shrink",
            CongestionConfig::Lia { .. } => "lia",
            CongestionConfig::Olia { .. } => "olia",
            CongestionConfig::RpV1 { .. } => "rp-v1",
            CongestionConfig::RpV2 { .. } => "rp-v2",
            CongestionConfig::Custom(p) => p.name(),
        }
    }

    /// The congestion-avoidance step of a coupled controller.
    pub fn ca_step(&self) -> Option<CaStep> {
        match self {
            CongestionConfig::Lia { step }
            | CongestionConfig::Olia { step, .. }
            | CongestionConfig::RpV1 { step }
            | CongestionConfig::RpV2 { step } => Some(*step),
            _ => None,
        }
    }

    /// This configuration with the congestion-avoidance step `step`, if it is a coupled
    /// controller (others are returned unchanged).
    pub fn with_ca_step(self, step: CaStep) -> Self {
        match self {
            CongestionConfig::Lia { .. } => CongestionConfig::Lia { step },
            CongestionConfig::Olia { best, .. } => CongestionConfig::Olia { step, best },
            CongestionConfig::RpV1 { .. } => CongestionConfig::RpV1 { step },
            CongestionConfig::RpV2 { .. } => CongestionConfig::RpV2 { step },
            other => other,
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
            CongestionConfig::Lia { step } => Box::new(Lia::new(*step)),
            CongestionConfig::Olia { step, best } => Box::new(Olia::new(*step, *best)),
            CongestionConfig::RpV1 { step } => Box::new(RpV1::new(*step)),
            CongestionConfig::RpV2 { step } => Box::new(RpV2::new(*step)),
            CongestionConfig::Custom(p) => p.build(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::coupled::fixtures::{grow_one_window, own_state, path, MTU};
    use super::*;
    use crate::association::PathId;

    /// Two-path group states: (cwnd, SRTT in ms) per path.
    const STATES: [[(u32, u64); 2]; 4] = [
        [(30_000, 20), (15_000, 40)],
        [(10_000, 20), (40_000, 20)],
        [(20_000, 50), (20_000, 10)],
        [(40_000, 10), (50_000, 100)],
    ];

    /// How fast `config` makes the association's throughput grow in congestion avoidance in
    /// the group state `state`: Σ_i (growth of cwnd_i per RTT_i) / RTT_i², in bytes/s².
    fn throughput_growth(config: &CongestionConfig, state: [(u32, u64); 2]) -> f64 {
        let snapshots = |_: ()| {
            state.iter().enumerate().map(|(i, &(cwnd, rtt))| path(i as u32, cwnd, cwnd / 2, rtt)).collect::<Vec<_>>()
        };
        let mut sum = 0.0;
        for (i, &(_, rtt)) in state.iter().enumerate() {
            let view = GroupView::from_snapshots(snapshots(()), PathId::new(i as u32));
            let mut s = own_state(&view);
            let growth = grow_one_window(config.build().as_mut(), &mut s, &view) as f64;
            let rtt = rtt as f64 / 1000.0;
            sum += growth / (rtt * rtt);
        }
        sum
    }

    #[test]
    fn coupled_controllers_grow_no_faster_than_one_flow_on_the_best_path() {
        // RFC 6356 §2, goal 2 ("do no harm"): all subflows together take no more capacity
        // than a single-path flow on the best of the paths, whose throughput grows by one
        // MTU per RTT, i.e. MTU / RTT² per second. Uncoupled flows grow about twice as fast.
        for state in STATES {
            let best = state.iter().map(|&(_, rtt)| f64::from(MTU) / (rtt as f64 / 1000.0).powi(2)).fold(0.0, f64::max);
            for name in ["lia", "olia", "rp-v1", "rp-v2"] {
                for step in [CaStep::Window, CaStep::Sack] {
                    let config = CongestionConfig::from_name(name, None).unwrap().with_ca_step(step);
                    assert_eq!(config.ca_step(), Some(step));
                    let g = throughput_growth(&config, state);
                    assert!(g <= best * 1.0001, "{name} {step:?} {state:?}: {g} > {best}");
                }
            }
            let uncoupled = CongestionConfig::from_name("uncoupled", None).unwrap();
            let all: f64 = state.iter().map(|&(_, rtt)| f64::from(MTU) / (rtt as f64 / 1000.0).powi(2)).sum();
            let g = throughput_growth(&uncoupled, state);
            assert!((g - all).abs() <= 1e-6 * all, "uncoupled {state:?}: {g} vs {all}");
            assert!(g > best * 1.009, "uncoupled {state:?}: {g} vs {best}");
        }
    }

    #[test]
    fn with_equal_rtts_the_coupled_increase_sums_to_at_most_one_mtu_per_rtt() {
        let state = [(10_000, 20), (40_000, 20)];
        for name in ["lia", "olia", "rp-v1", "rp-v2", "uncoupled"] {
            let config = CongestionConfig::from_name(name, None).unwrap();
            let rtt2 = 0.02f64 * 0.02;
            let per_rtt = throughput_growth(&config, state) * rtt2;
            if name == "uncoupled" {
                assert!((per_rtt - 3000.0).abs() < 1e-6, "{per_rtt}");
            } else {
                assert!(per_rtt <= 1500.5 && per_rtt > 0.0, "{name}: {per_rtt}");
            }
        }
    }

    #[test]
    fn registry_names_build_their_controllers() {
        for name in CongestionConfig::NAMES {
            let config = CongestionConfig::from_name(name, None).unwrap();
            let built = config.build().name();
            let expected = if name == "uncoupled" { "rfc9260" } else { name };
            assert_eq!((config.name(), built), (expected, expected));
            assert_eq!(config.build().reads_group_view(), CongestionConfig::is_coupled_name(name), "{name}");
        }
        assert!(CongestionConfig::from_name("reno", None).is_none());
    }
}
