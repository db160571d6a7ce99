//! Random waypoint (Johnson and Maltz, "Dynamic Source Routing in Ad Hoc Wireless
//! Networks", 1996; Broch et al., MobiCom 1998; ns-2 `setdest`, ns-3
//! `RandomWaypointMobilityModel`): the node pauses, then picks a destination uniformly in
//! the area and a speed uniformly in `[speed_min, speed_max]`, moves there in a straight
//! line, pauses again, and so on for ever.
//!
//! As in ns-3 and the original description, the node starts with a pause at its initial
//! position (given, or drawn uniformly in the area from the node's stream before anything
//! else). Draws per leg, in this order: destination x, destination y, speed. The model's
//! average speed decays over time when `speed_min` is small (Yoon, Liu and Noble, "Random
//! Waypoint Considered Harmful", INFOCOM 2003), so `speed_min` must be positive.

use rand::Rng;

use super::area::Area;
use super::position::Position;
use super::segment::Segment;
use super::track::SegmentSource;
use super::MobilityError;
use crate::rng::SimRng;
use crate::time::{Duration, Instant};

/// Parameters of the random waypoint model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandomWaypointConfig {
    /// Where destinations are drawn (uniformly).
    pub area: Area,
    /// Lowest speed, m/s (positive).
    pub speed_min: f64,
    /// Highest speed, m/s (at least `speed_min`; equal for a fixed speed).
    pub speed_max: f64,
    /// Pause at the start and at each destination.
    pub pause: Duration,
}

impl RandomWaypointConfig {
    /// Checks the speeds.
    pub fn check(&self) -> Result<(), MobilityError> {
        check_speeds(self.speed_min, self.speed_max)
    }
}

/// Checks a speed range `min..=max` in m/s: finite, `0 < min <= max`.
pub(crate) fn check_speeds(min: f64, max: f64) -> Result<(), MobilityError> {
    if !(min.is_finite() && min > 0.0) {
        return Err(MobilityError::Speed(min));
    }
    if !(max.is_finite() && max >= min) {
        return Err(MobilityError::SpeedRange { min, max });
    }
    Ok(())
}

/// Draws a speed uniformly in `[min, max]` (one draw even when they are equal, so the
/// stream's use does not depend on the values).
pub(crate) fn draw_speed(rng: &mut SimRng, min: f64, max: f64) -> f64 {
    let u: f64 = rng.random();
    (min + u * (max - min)).clamp(min, max)
}

/// The random waypoint model's segment maker.
#[derive(Clone, Debug)]
pub(crate) struct RandomWaypointSource {
    config: RandomWaypointConfig,
    rng: SimRng,
    at: Position,
    now: Instant,
    /// True when the next segment is a pause.
    pausing: bool,
}

impl RandomWaypointSource {
    /// A node starting at `start` (or at a point drawn from `rng`), moving as `config` says.
    pub(crate) fn new(
        config: RandomWaypointConfig,
        start: Option<Position>,
        mut rng: SimRng,
    ) -> Result<Self, MobilityError> {
        config.check()?;
        let at = config.area.start(start, &mut rng)?;
        Ok(RandomWaypointSource { config, rng, at, now: Instant::ZERO, pausing: true })
    }
}

impl SegmentSource for RandomWaypointSource {
    fn next_segment(&mut self) -> Segment {
        let start = self.now;
        let seg = if self.pausing {
            Segment::still(self.at, start, start.saturating_add(self.config.pause))
        } else {
            let to = self.config.area.at_fraction(self.rng.random(), self.rng.random());
            let speed = draw_speed(&mut self.rng, self.config.speed_min, self.config.speed_max);
            // At least a nanosecond, so time always advances.
            let travel = Duration::from_secs_f64(self.at.distance(&to) / speed).max(Duration(1));
            Segment { start, end: start.saturating_add(travel), from: self.at, to }
        };
        self.pausing = !self.pausing;
        self.now = seg.end;
        self.at = seg.to;
        seg
    }
}
