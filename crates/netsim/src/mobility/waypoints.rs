//! Constant velocity along a list of waypoints (as ns-3's `WaypointMobilityModel` and
//! ns-2's `setdest` commands): the node moves in a straight line from each point to the
//! next, at a given speed or so as to be at each point at a given instant, and stays at the
//! last point.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::position::Position;
use super::segment::Segment;
use super::MobilityError;
use crate::time::{Duration, Instant};

/// A trajectory fixed in advance: its segments, the last lasting for ever.
#[derive(Debug)]
pub struct Waypoints {
    /// Contiguous segments from [`Instant::ZERO`]; the last ends at [`Instant::MAX`].
    segments: Vec<Segment>,
    /// The segment the last query found (queries at increasing instants find theirs at or
    /// just after it: O(1) amortised). Atomic only so that a scenario holding waypoints can
    /// be shared between threads; the simulation itself runs on one.
    cursor: AtomicUsize,
}

impl Clone for Waypoints {
    fn clone(&self) -> Self {
        Waypoints { segments: self.segments.clone(), cursor: AtomicUsize::new(self.cursor.load(Ordering::Relaxed)) }
    }
}

/// Two trajectories are equal when their segments are (the cursor is a cache).
impl PartialEq for Waypoints {
    fn eq(&self, other: &Self) -> bool {
        self.segments == other.segments
    }
}

impl Waypoints {
    /// From `start`, leaving it at `depart`, to each of `points` in turn at `speed` m/s,
    /// pausing `pause` at each point reached before the last.
    pub fn with_speed(
        start: Position,
        depart: Instant,
        points: &[Position],
        speed: f64,
        pause: Duration,
    ) -> Result<Self, MobilityError> {
        if !(speed.is_finite() && speed > 0.0) {
            return Err(MobilityError::Speed(speed));
        }
        check_finite(start)?;
        let mut segments = Vec::with_capacity(2 * points.len() + 2);
        let mut now = Instant::ZERO;
        let mut at = start;
        let mut hold = depart.saturating_since(now);
        for &p in points {
            check_finite(p)?;
            if !hold.is_zero() {
                segments.push(Segment::still(at, now, now.saturating_add(hold)));
                now = now.saturating_add(hold);
            }
            let end = now.saturating_add(Duration::from_secs_f64(at.distance(&p) / speed));
            segments.push(Segment { start: now, end, from: at, to: p });
            (now, at, hold) = (end, p, pause);
        }
        segments.push(Segment::still(at, now, Instant::MAX));
        Ok(Waypoints::from_segments(segments))
    }

    /// At `start` (or the first point if `None`) at [`Instant::ZERO`], then at each point at its
    /// instant, moving linearly in between. Instants must not decrease; two points at the same
    /// instant make the node jump.
    pub fn timed(start: Option<Position>, points: &[(Instant, Position)]) -> Result<Self, MobilityError> {
        let Some(&(_, first)) = points.first() else {
            return Err(MobilityError::NoWaypoints);
        };
        let mut at = start.unwrap_or(first);
        check_finite(at)?;
        let mut now = Instant::ZERO;
        let mut segments = Vec::with_capacity(points.len() + 1);
        for (i, &(t, p)) in points.iter().enumerate() {
            check_finite(p)?;
            if t < now {
                return Err(MobilityError::TimeGoesBack { index: i });
            }
            if start.is_none() && i == 0 {
                segments.push(Segment::still(at, now, t));
            } else {
                segments.push(Segment { start: now, end: t, from: at, to: p });
            }
            (now, at) = (t, p);
        }
        segments.push(Segment::still(at, now, Instant::MAX));
        Ok(Waypoints::from_segments(segments))
    }

    fn from_segments(mut segments: Vec<Segment>) -> Self {
        // Zero-length segments cover no instant (jumps, a point at the start instant).
        segments.retain(|s| s.end > s.start);
        Waypoints { segments, cursor: AtomicUsize::new(0) }
    }

    /// The segment in force at `t`.
    pub fn segment_at(&self, t: Instant) -> Segment {
        let covers =
            |i: usize| self.segments.get(i).filter(|s| s.start <= t && (t < s.end || s.end == Instant::MAX)).copied();
        let c = self.cursor.load(Ordering::Relaxed);
        for i in [c, c + 1] {
            if let Some(s) = covers(i) {
                self.cursor.store(i, Ordering::Relaxed);
                return s;
            }
        }
        let i = self.segments.partition_point(|s| s.end <= t);
        self.cursor.store(i, Ordering::Relaxed);
        covers(i).unwrap_or_else(|| {
            debug_assert!(false, "waypoint segments cover all time");
            Segment::still(Position::default(), t, Instant::MAX)
        })
    }
}

fn check_finite(p: Position) -> Result<(), MobilityError> {
    if p.x.is_finite() && p.y.is_finite() {
        Ok(())
    } else {
        Err(MobilityError::NotFinite(p))
    }
}
