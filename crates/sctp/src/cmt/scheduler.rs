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

/// Concurrent Multipath Transfer's sender (the CMT paper): every usable destination (active
/// and confirmed) in turn, each filled to its own cwnd and Max.Burst, bundling kept. The turn
/// starts at the destination after the one that last took new data and goes round once, as
/// the University of Delaware ns-2 module does (`SctpCMTAgent::SendMuch`, "RR scheduling:
/// start sending to the dest next to the one last sent to"), so the first place rotates from
/// one transmission opportunity to the next. With no usable destination it falls back to
/// [`Primary::select`] (a potentially failed one, RFC 7829's dormant state).
#[derive(Clone, Copy, Debug, Default)]
pub struct RoundRobin;

impl PathScheduler for RoundRobin {
    fn name(&self) -> &'static str {
        "round-robin"
    }
    fn schedule(&mut self, paths: &PathsView<'_>, out: &mut Vec<PathId>) {
        let last = paths.data_path();
        out.extend(paths.after(last).filter(|&p| paths.is_usable(p)));
        if paths.is_usable(last) {
            out.push(last);
        }
        if out.is_empty() {
            out.push(Primary::select(paths));
        }
    }
}

/// Every usable destination, the one with the most cwnd room (cwnd less flight size) first,
/// then the others by decreasing room; equal rooms in id order. Falls back to
/// [`Primary::select`] as [`RoundRobin`] does.
#[derive(Clone, Copy, Debug, Default)]
pub struct LargestCwnd;

impl PathScheduler for LargestCwnd {
    fn name(&self) -> &'static str {
        "largest-cwnd"
    }
    fn schedule(&mut self, paths: &PathsView<'_>, out: &mut Vec<PathId>) {
        out.extend(paths.iter().filter(|(_, p)| p.is_usable()).map(|(id, _)| id));
        let room = |id: PathId| paths.get(id).map_or(0, |p| p.cc.cwnd.saturating_sub(p.flight_size));
        // A stable sort keeps id order among equal rooms.
        out.sort_by_key(|&id| std::cmp::Reverse(room(id)));
        if out.is_empty() {
            out.push(Primary::select(paths));
        }
    }
}

/// Which [`PathScheduler`] an association uses.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum SchedulerConfig {
    /// [`Primary`] (`"primary"`, the default).
    #[default]
    Primary,
    /// [`RoundRobin`] (`"round-robin"`): CMT's sender.
    RoundRobin,
    /// [`LargestCwnd`] (`"largest-cwnd"`).
    LargestCwnd,
    /// A scheduler supplied by the embedding code.
    Custom(Plugin<dyn PathScheduler>),
}

impl SchedulerConfig {
    /// Registry names of the built-in schedulers, in documentation order.
    pub const NAMES: [&'static str; 3] = ["primary", "round-robin", "largest-cwnd"];

    /// Looks a built-in scheduler up by name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "primary" => Some(SchedulerConfig::Primary),
            "round-robin" => Some(SchedulerConfig::RoundRobin),
            "largest-cwnd" => Some(SchedulerConfig::LargestCwnd),
            _ => None,
        }
    }
    /// The registry name (a plugin's own name for [`SchedulerConfig::Custom`]).
    pub fn name(&self) -> &'static str {
        match self {
            SchedulerConfig::Primary => "primary",
            SchedulerConfig::RoundRobin => "round-robin",
            SchedulerConfig::LargestCwnd => "largest-cwnd",
            SchedulerConfig::Custom(p) => p.name(),
        }
    }
    /// A fresh scheduler for one association.
    pub fn build(&self) -> Box<dyn PathScheduler> {
        match self {
            SchedulerConfig::Primary => Box::new(Primary),
            SchedulerConfig::RoundRobin => Box::new(RoundRobin),
            SchedulerConfig::LargestCwnd => Box::new(LargestCwnd),
            SchedulerConfig::Custom(p) => p.build(),
        }
    }
}
