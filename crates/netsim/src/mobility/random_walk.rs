//! Random walk in a rectangle with reflection at the borders, as ns-3's
//! `RandomWalk2dMobilityModel`: each step the node draws a speed uniformly in
//! `[speed_min, speed_max]` and a direction uniformly in `[0, 2π)` and walks for a fixed
//! time or a fixed distance (the step's mode); a node reaching a border is reflected like a
//! billiard ball (the velocity component across that border changes sign) and walks on for
//! the rest of the step. At a corner both components change sign (ns-3 flips only the one of
//! the side it finds nearest, which sends the node out along the other border). There is no pause. The initial position is given
//! or drawn uniformly in the area. Draws per step, in this order: speed, direction.
//!
//! Each straight piece between a step start, a reflection and a step end is one segment.

use std::f64::consts::TAU;

use rand::Rng;

use super::area::Area;
use super::position::Position;
use super::random_waypoint::{check_speeds, draw_speed};
use super::segment::Segment;
use super::track::SegmentSource;
use super::MobilityError;
use crate::rng::SimRng;
use crate::time::{Duration, Instant};

/// How long a random-walk step lasts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WalkStep {
    /// A new speed and direction every this long (ns-3 mode `Time`, default 1 s there).
    Time(Duration),
    /// A new speed and direction after walking this many metres (ns-3 mode `Distance`).
    Distance(f64),
}

/// Parameters of the random walk.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandomWalkConfig {
    /// The rectangle the node stays in.
    pub area: Area,
    /// Lowest speed, m/s (positive).
    pub speed_min: f64,
    /// Highest speed, m/s (at least `speed_min`).
    pub speed_max: f64,
    /// When the node draws a new speed and direction.
    pub step: WalkStep,
}

impl RandomWalkConfig {
    /// Checks the speeds and the step.
    pub fn check(&self) -> Result<(), MobilityError> {
        check_speeds(self.speed_min, self.speed_max)?;
        match self.step {
            WalkStep::Time(d) if d.is_zero() => Err(MobilityError::Step(0.0)),
            WalkStep::Distance(m) if !(m.is_finite() && m > 0.0) => Err(MobilityError::Step(m)),
            _ => Ok(()),
        }
    }
}

/// The random walk's segment maker.
#[derive(Clone, Debug)]
pub(crate) struct RandomWalkSource {
    config: RandomWalkConfig,
    rng: SimRng,
    at: Position,
    now: Instant,
    /// Velocity of the current step, m/s.
    velocity: (f64, f64),
    /// What is left of the current step (zero: draw a new one).
    left: Duration,
}

impl RandomWalkSource {
    /// A node starting at `start` (or at a point drawn from `rng`), walking as `config` says.
    pub(crate) fn new(
        config: RandomWalkConfig,
        start: Option<Position>,
        mut rng: SimRng,
    ) -> Result<Self, MobilityError> {
        config.check()?;
        let at = config.area.start(start, &mut rng)?;
        Ok(RandomWalkSource { config, rng, at, now: Instant::ZERO, velocity: (0.0, 0.0), left: Duration::ZERO })
    }

    fn new_step(&mut self) {
        let speed = draw_speed(&mut self.rng, self.config.speed_min, self.config.speed_max);
        let angle = self.rng.random::<f64>() * TAU;
        self.velocity = (speed * angle.cos(), speed * angle.sin());
        let secs = match self.config.step {
            WalkStep::Time(d) => d.as_secs_f64(),
            WalkStep::Distance(m) => m / speed,
        };
        self.left = Duration::from_secs_f64(secs).max(Duration(1));
    }
}

/// Seconds until a coordinate at `x` moving at `v` reaches `lo` or `hi` (infinite if `v` is 0).
fn time_to_border(x: f64, v: f64, lo: f64, hi: f64) -> f64 {
    if v > 0.0 {
        ((hi - x) / v).max(0.0)
    } else if v < 0.0 {
        ((lo - x) / v).max(0.0)
    } else {
        f64::INFINITY
    }
}

impl SegmentSource for RandomWalkSource {
    fn next_segment(&mut self) -> Segment {
        if self.left.is_zero() {
            self.new_step();
        }
        let a = self.config.area;
        let (vx, vy) = self.velocity;
        let tx = time_to_border(self.at.x, vx, a.x0, a.x1);
        let ty = time_to_border(self.at.y, vy, a.y0, a.y1);
        let hit = tx.min(ty);
        let start = self.now;
        let (dt, secs, reflect) = if hit >= self.left.as_secs_f64() {
            (self.left, self.left.as_secs_f64(), false)
        } else {
            (Duration::from_secs_f64(hit).min(self.left), hit, true)
        };
        let mut to = a.clamp(Position::new(self.at.x + vx * secs, self.at.y + vy * secs));
        if reflect {
            // Exactly on the border hit, whatever the rounding of `secs * v`.
            if tx <= ty {
                to.x = if vx > 0.0 { a.x1 } else { a.x0 };
            }
            if ty <= tx {
                to.y = if vy > 0.0 { a.y1 } else { a.y0 };
            }
        }
        let seg = Segment { start, end: start.saturating_add(dt), from: self.at, to };
        if reflect {
            // ns-3 `RandomWalk2dMobilityModel::Rebound`: flip the component across the
            // border hit (both at a corner).
            if tx <= ty {
                self.velocity.0 = -vx;
            }
            if ty <= tx {
                self.velocity.1 = -vy;
            }
        }
        self.left = self.left - dt;
        self.now = seg.end;
        self.at = to;
        seg
    }
}
