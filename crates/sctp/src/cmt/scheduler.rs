//! Path schedulers: the destinations new data goes to in one transmission opportunity.

use std::fmt;

use crate::association::{PathId, PathState};
use crate::plugin::Plugin;

use super::PathsView;

/// Chooses the destinations of new DATA chunks. At every transmission opportunity with data
/// queued, the association asks [`PathScheduler::schedule`] for destinations and fills each in
/// turn, in the order given, up to that destination's cwnd and Max.Burst (§6.1 B, D) and the
/// peer's rwnd (§6.1 A), before going to the next. Retransmissions are not scheduled here
/// (see [`super::RetransmitPolicy`]).
///
/// A scheduler that names every usable destination, rotating the first one each time,
/// spreads new data over all of them, each filled to its own window (CMT's sender).
pub trait PathScheduler: Send + fmt::Debug {
    /// The registry name.
    fn name(&self) -> &'static str;
    /// Appends to `out` (empty on entry) the destinations to fill now, in order. Ids that
    /// name no destination are skipped; a destination may appear once.
    fn schedule(&mut self, paths: &PathsView<'_>, out: &mut Vec<PathId>);
}

/// RFC 9260 §6.4 single-path sending: the primary while it is usable (active and
/// confirmed); else the first usable destination after it; else, every destination being
/// potentially failed or inactive (RFC 7829 §4, the dormant state), the confirmed PF
/// destination with the fewest errors (the primary on a tie), or else the primary.
#[derive(Clone, Copy, Debug, Default)]
pub struct Primary;

impl Primary {
    /// The destination new data goes to.
    pub fn select(paths: &PathsView<'_>) -> PathId {
        let primary = paths.primary();
        if paths.is_usable(primary) {
            return primary;
        }
        if let Some(p) = paths.after(primary).find(|&p| paths.is_usable(p)) {
            return p;
        }
        paths
            .iter()
            .filter(|(_, p)| p.confirmed && p.state == PathState::PotentiallyFailed)
            .min_by_key(|(i, p)| (p.error_count, *i != primary))
            .map_or(primary, |(i, _)| i)
    }
}

impl PathScheduler for Primary {
    fn name(&self) -> &'static str {
        "primary"
    }
    fn schedule(&mut self, paths: &PathsView<'_>, out: &mut Vec<PathId>) {
        out.push(Primary::select(paths));
    }
}

/// Which [`PathScheduler`] an association uses.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum SchedulerConfig {
    /// [`Primary`] (`"primary"`, the default).
    #[default]
    Primary,
    /// A scheduler supplied by the embedding code.
    Custom(Plugin<dyn PathScheduler>),
}

impl SchedulerConfig {
    /// Registry names of the built-in schedulers, in documentation order.
    pub const NAMES: [&'static str; 1] = ["primary"];

    /// Looks a built-in scheduler up by name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "primary" => Some(SchedulerConfig::Primary),
            _ => None,
        }
    }
    /// The registry name (a plugin's own name for [`SchedulerConfig::Custom`]).
    pub fn name(&self) -> &'static str {
        match self {
            SchedulerConfig::Primary => "primary",
            SchedulerConfig::Custom(p) => p.name(),
        }
    }
    /// A fresh scheduler for one association.
    pub fn build(&self) -> Box<dyn PathScheduler> {
        match self {
            SchedulerConfig::Primary => Box::new(Primary),
            SchedulerConfig::Custom(p) => p.build(),
        }
    }
}
