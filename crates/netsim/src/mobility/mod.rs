//! Node mobility: where a node is, as a function of simulated time.
//!
//! A node that has a place in the world (a WLAN station, an access point) carries a
//! [`Mobility`] in [`crate::network::Node::mobility`]; wired-only nodes carry none. A model
//! describes the node's path as straight, constant-speed [`Segment`]s and answers three
//! questions, all with time as an argument and none needing a periodic tick:
//!
//! - [`Mobility::position_at`]: the position at an instant;
//! - [`Mobility::next_change`]: the end of the segment in force after an instant, the only
//!   instant at which the motion changes (the kernel needs an event there only if something
//!   depends on the motion);
//! - [`Mobility::next_crossing`]: the first instant the distance to another node (moving or
//!   not) crosses a threshold, solved exactly within the current segments (see
//!   [`first_crossing`]), or when to ask again. A receiver's signal strength is a decreasing
//!   function of distance under every propagation model in use, so an RSS threshold is a
//!   distance threshold, and the WLAN layer finds scan and handover instants this way.
//!
//! Models (one file each): [`Mobility::Stationary`]; [`Waypoints`], constant velocity along
//! a list of points at a speed or at given instants; [`RandomWaypoint`] (area, speed range,
//! pause); [`RandomWalk`] (ns-3's `RandomWalk2d`: area, speed range, a new direction every
//! step of a fixed time or distance, reflection at the borders). The random models draw from
//! the node's own stream ([`stream_name`]), so adding or moving a node changes no other
//! component's numbers, and they make their segments lazily, in one fixed order, so positions
//! depend on the seed alone and never on when or how often they are asked for (see
//! the `track` module).

mod area;
mod position;
mod random_walk;
mod random_waypoint;
mod segment;
mod track;
mod waypoints;

pub use area::Area;
pub use position::Position;
pub use random_walk::{RandomWalkConfig, WalkStep};
pub use random_waypoint::RandomWaypointConfig;
pub use segment::{first_crossing, Segment};
pub use waypoints::Waypoints;

use random_walk::RandomWalkSource;
use random_waypoint::RandomWaypointSource;
use track::Track;

use crate::rng::SimRng;
use crate::time::Instant;

/// The name of the random stream a node's mobility draws from (see [`crate::rng`]).
pub fn stream_name(node: &str) -> String {
    format!("node/{node}/mobility")
}

/// Why a mobility model cannot be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MobilityError {
    /// A speed is not a positive finite number of m/s.
    #[error("speed must be a positive number of m/s, not {0}")]
    Speed(f64),
    /// The highest speed is below the lowest.
    #[error("highest speed {max} m/s is below the lowest {min} m/s")]
    SpeedRange {
        /// Lowest speed.
        min: f64,
        /// Highest speed.
        max: f64,
    },
    /// The area has no width or no height.
    #[error("area [[{x0}, {y0}], [{x1}, {y1}]] must have a positive width and height")]
    EmptyArea {
        /// Lowest x given.
        x0: f64,
        /// Lowest y given.
        y0: f64,
        /// Highest x given.
        x1: f64,
        /// Highest y given.
        y1: f64,
    },
    /// The initial position lies outside the area.
    #[error("position [{}, {}] is outside the area", .0.x, .0.y)]
    OutsideArea(Position),
    /// A coordinate is not finite.
    #[error("position [{}, {}] is not finite", .0.x, .0.y)]
    NotFinite(Position),
    /// A waypoint list is empty.
    #[error("at least one waypoint is needed")]
    NoWaypoints,
    /// A timed waypoint comes before the one preceding it.
    #[error("waypoint {index} comes before the one preceding it")]
    TimeGoesBack {
        /// Index of the offending waypoint.
        index: usize,
    },
    /// A random-walk step is not positive.
    #[error("a random-walk step must be positive, not {0}")]
    Step(f64),
}

/// How a node moves.
#[derive(Clone, Debug)]
pub enum Mobility {
    /// Never moves.
    Stationary(Position),
    /// Along a list of waypoints.
    Waypoints(Waypoints),
    /// Random waypoint.
    RandomWaypoint(RandomWaypoint),
    /// Random walk with reflection at the borders.
    RandomWalk(RandomWalk),
}

/// A random waypoint trajectory (see [`RandomWaypointConfig`] and the model's module).
#[derive(Clone, Debug)]
pub struct RandomWaypoint {
    config: RandomWaypointConfig,
    track: Track<RandomWaypointSource>,
}

impl RandomWaypoint {
    /// The parameters.
    pub fn config(&self) -> &RandomWaypointConfig {
        &self.config
    }
}

/// A random walk trajectory (see [`RandomWalkConfig`] and the model's module).
#[derive(Clone, Debug)]
pub struct RandomWalk {
    config: RandomWalkConfig,
    track: Track<RandomWalkSource>,
}

impl RandomWalk {
    /// The parameters.
    pub fn config(&self) -> &RandomWalkConfig {
        &self.config
    }
}

/// The answer of [`Mobility::next_crossing`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crossing {
    /// The distance is on the other side of the threshold from this instant on.
    At(Instant),
    /// No crossing before this instant, where one of the two nodes changes its motion: ask
    /// again then.
    NotBefore(Instant),
    /// Neither node will ever move again and the distance stays on its side.
    Never,
}

impl Mobility {
    /// A node standing at `(x, y)` for ever.
    pub fn stationary(x: f64, y: f64) -> Self {
        Mobility::Stationary(Position::new(x, y))
    }

    /// Random waypoint from `start` (or a point drawn uniformly in the area), drawing from
    /// `rng` (the node's stream, [`stream_name`]).
    pub fn random_waypoint(
        config: RandomWaypointConfig,
        start: Option<Position>,
        rng: SimRng,
    ) -> Result<Self, MobilityError> {
        let track = Track::new(RandomWaypointSource::new(config, start, rng)?);
        Ok(Mobility::RandomWaypoint(RandomWaypoint { config, track }))
    }

    /// Random walk from `start` (or a point drawn uniformly in the area), drawing from `rng`
    /// (the node's stream, [`stream_name`]).
    pub fn random_walk(config: RandomWalkConfig, start: Option<Position>, rng: SimRng) -> Result<Self, MobilityError> {
        let track = Track::new(RandomWalkSource::new(config, start, rng)?);
        Ok(Mobility::RandomWalk(RandomWalk { config, track }))
    }

    /// True if the node never moves.
    pub fn is_stationary(&self) -> bool {
        matches!(self, Mobility::Stationary(_))
    }

    /// Where the node is at `t`. Queries may come in any order; answering in increasing
    /// order of time is O(1) amortised. A random model makes every segment up to `t`, so `t`
    /// should be an instant the run reaches (not [`Instant::MAX`] as "never").
    pub fn position_at(&self, t: Instant) -> Position {
        self.segment_at(t).position_at(t)
    }

    /// The segment the node is on at `t` (the one with `start <= t < end`).
    pub fn segment_at(&self, t: Instant) -> Segment {
        match self {
            Mobility::Stationary(p) => Segment::still(*p, Instant::ZERO, Instant::MAX),
            Mobility::Waypoints(w) => w.segment_at(t),
            Mobility::RandomWaypoint(m) => m.track.segment_at(t),
            Mobility::RandomWalk(m) => m.track.segment_at(t),
        }
        .clamped_to(t)
    }

    /// The instant after `after` at which the node's motion next changes (the end of the
    /// segment in force at `after`), or `None` if it never will.
    pub fn next_change(&self, after: Instant) -> Option<Instant> {
        let end = self.segment_at(after).end;
        (end != Instant::MAX).then_some(end)
    }

    /// The first instant after `after` at which the distance between this node and `other`
    /// is on the other side of `threshold` (metres; "inside" is strictly closer) than at
    /// `after`, looking only as far as both nodes keep their current segments. A caller
    /// tracking a threshold keeps asking: at the returned crossing, or at `NotBefore`.
    pub fn next_crossing(&self, other: &Mobility, after: Instant, threshold: f64) -> Crossing {
        let a = self.segment_at(after);
        let b = other.segment_at(after);
        if let Some(t) = first_crossing(&a, &b, after, threshold) {
            return Crossing::At(t);
        }
        match a.end.min(b.end) {
            Instant::MAX => Crossing::Never,
            end => Crossing::NotBefore(end),
        }
    }
}

impl Segment {
    /// `self`, which must cover `t`; a debug check that a model answered with the right one.
    fn clamped_to(self, t: Instant) -> Segment {
        debug_assert!(self.start <= t && (t < self.end || self.end == Instant::MAX), "{self:?} does not cover {t}");
        self
    }
}

#[cfg(test)]
mod tests;
