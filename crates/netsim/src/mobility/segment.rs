//! Straight-line pieces of a trajectory, and when a distance crosses a threshold on them.
//!
//! Every mobility model describes a node's path as a sequence of [`Segment`]s: over
//! `[start, end)` the node moves in a straight line from `from` to `to` at constant speed
//! (a pause is a segment with `from == to`). Within one segment a position is a linear
//! function of time, so the distance between two nodes (or a node and a fixed point) over
//! the time both are on their current segments is the square root of a quadratic in time:
//! [`first_crossing`] solves it for the instant the distance crosses a threshold, which is
//! how a receiver's signal strength crossing a level (a scan or handover threshold) is
//! found without sampling positions.

use super::position::Position;
use crate::time::{Duration, Instant};

/// One straight, constant-speed piece of a trajectory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    /// When the node is at `from`.
    pub start: Instant,
    /// When it reaches `to`; [`Instant::MAX`] for a segment that lasts for ever (then
    /// `from == to`).
    pub end: Instant,
    /// Where it is at `start`.
    pub from: Position,
    /// Where it is at `end`.
    pub to: Position,
}

impl Segment {
    /// Standing still at `at` from `start` until `end`.
    pub fn still(at: Position, start: Instant, end: Instant) -> Self {
        Segment { start, end, from: at, to: at }
    }

    /// True if the node does not move on this segment.
    pub fn is_still(&self) -> bool {
        self.from == self.to || self.end == Instant::MAX || self.end <= self.start
    }

    /// Length of the segment in time.
    pub fn duration(&self) -> Duration {
        self.end.saturating_since(self.start)
    }

    /// Position at `t`, which is clamped into `[start, end]`: exactly `from` at `start` and
    /// exactly `to` at `end`, linear in between.
    pub fn position_at(&self, t: Instant) -> Position {
        if self.is_still() || t <= self.start {
            return self.from;
        }
        if t >= self.end {
            return self.to;
        }
        let f = (t.as_nanos() - self.start.as_nanos()) as f64 / (self.end.as_nanos() - self.start.as_nanos()) as f64;
        self.from.lerp(&self.to, f)
    }

    /// Velocity in metres per second, `(vx, vy)`; zero on a still segment.
    pub fn velocity(&self) -> (f64, f64) {
        if self.is_still() {
            return (0.0, 0.0);
        }
        let secs = self.duration().as_secs_f64();
        ((self.to.x - self.from.x) / secs, (self.to.y - self.from.y) / secs)
    }

    /// Speed in metres per second (zero on a still segment).
    pub fn speed(&self) -> f64 {
        let (vx, vy) = self.velocity();
        vx.hypot(vy)
    }
}

/// The first instant `t` in `(after, min(a.end, b.end)]` at which the distance between a
/// node on segment `a` and one on segment `b` is on the other side of `threshold` than at
/// `after` ("inside" means strictly closer than `threshold`), or `None` if it stays on its side
/// until one of the segments ends. `after` must lie in both segments (it is clamped into them).
///
/// The relative position `p(s) = p0 + v s` (`s` seconds after `after`) is linear, so
/// `|p(s)|² = threshold²` is a quadratic `A s² + B s + C = 0` with `A = v·v`,
/// `B = 2 p0·v`, `C = p0·p0 − threshold²`. Inside (`C < 0`) the roots bracket zero and the
/// node leaves at the larger; outside it enters at the smaller root if that is not in the
/// past. A tangent path (one double root) touches the circle without crossing it. The root
/// is rounded up to the nanosecond and then checked against the positions [`Segment`]
/// reports, so the answer is the first nanosecond on the new side as the rest of the
/// simulator sees positions (a check at `t - 1ns` gives the old side).
pub fn first_crossing(a: &Segment, b: &Segment, after: Instant, threshold: f64) -> Option<Instant> {
    let window_end = a.end.min(b.end);
    let side = |t: Instant| a.position_at(t).distance(&b.position_at(t)) < threshold;
    let inside = side(after);
    let pa = a.position_at(after);
    let pb = b.position_at(after);
    let (vax, vay) = a.velocity();
    let (vbx, vby) = b.velocity();
    let (px, py) = (pa.x - pb.x, pa.y - pb.y);
    let (vx, vy) = (vax - vbx, vay - vby);
    let qa = vx * vx + vy * vy;
    if qa == 0.0 || window_end <= after {
        return None;
    }
    let qb = 2.0 * (px * vx + py * vy);
    let qc = px * px + py * py - threshold * threshold;
    let disc = qb * qb - 4.0 * qa * qc;
    if disc <= 0.0 {
        return None;
    }
    // Numerically stable roots (no cancellation between -B and the square root).
    let q = -0.5 * (qb + qb.signum() * disc.sqrt());
    let (r1, r2) = if q == 0.0 {
        let r = (-qc / qa).sqrt();
        (-r, r)
    } else {
        let (x, y) = (q / qa, qc / q);
        (x.min(y), x.max(y))
    };
    let s = if inside { r2 } else { r1 };
    if !s.is_finite() || s < 0.0 {
        return None;
    }
    let span = window_end.as_nanos() - after.as_nanos();
    let ns = (s * 1e9).ceil();
    if ns > span as f64 + 2.0 {
        return None;
    }
    let mut t = Instant::from_nanos(after.as_nanos() + (ns as u64).clamp(1, span));
    // The root is exact to a few units in the last place; settle it on the nanosecond grid
    // against the positions themselves.
    for _ in 0..8 {
        if side(t) != inside || t >= window_end {
            break;
        }
        t = Instant::from_nanos(t.as_nanos() + 1);
    }
    if side(t) == inside {
        return None;
    }
    for _ in 0..8 {
        let earlier = Instant::from_nanos(t.as_nanos() - 1);
        if earlier <= after || side(earlier) == inside {
            break;
        }
        t = earlier;
    }
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Instant {
        Instant::from_nanos((s * 1e9).round() as u64)
    }

    fn moving(x0: f64, y0: f64, x1: f64, y1: f64, t0: f64, t1: f64) -> Segment {
        Segment { start: secs(t0), end: secs(t1), from: Position::new(x0, y0), to: Position::new(x1, y1) }
    }

    #[test]
    fn position_is_linear_and_exact_at_the_ends() {
        let s = moving(0.0, 0.0, 10.0, -20.0, 1.0, 3.0);
        assert_eq!(s.position_at(secs(1.0)), Position::new(0.0, 0.0));
        assert_eq!(s.position_at(secs(2.0)), Position::new(5.0, -10.0));
        assert_eq!(s.position_at(secs(3.0)), Position::new(10.0, -20.0));
        assert_eq!(s.position_at(secs(0.0)), Position::new(0.0, 0.0));
        assert_eq!(s.position_at(secs(9.0)), Position::new(10.0, -20.0));
        assert_eq!(s.velocity(), (5.0, -10.0));
    }

    #[test]
    fn crossing_of_a_circle_is_found_entering_and_leaving() {
        // From (-100, 0) to (100, 0) at 10 m/s; a point at the origin, threshold 50 m:
        // inside from s = 5 to s = 15.
        let walk = moving(-100.0, 0.0, 100.0, 0.0, 0.0, 20.0);
        let ap = Segment::still(Position::new(0.0, 0.0), Instant::ZERO, Instant::MAX);
        assert_eq!(first_crossing(&walk, &ap, Instant::ZERO, 50.0), Some(secs(5.0) + Duration(1)));
        assert_eq!(first_crossing(&walk, &ap, secs(6.0), 50.0), Some(secs(15.0)));
        assert_eq!(first_crossing(&walk, &ap, secs(15.0), 50.0), None);
        // Symmetric roles give the same answer.
        assert_eq!(first_crossing(&ap, &walk, secs(6.0), 50.0), Some(secs(15.0)));
        // A path passing 60 m away never comes within 50 m; a tangent path touches only.
        let far = moving(-100.0, 60.0, 100.0, 60.0, 0.0, 20.0);
        assert_eq!(first_crossing(&far, &ap, Instant::ZERO, 50.0), None);
        let tangent = moving(-100.0, 50.0, 100.0, 50.0, 0.0, 20.0);
        assert_eq!(first_crossing(&tangent, &ap, Instant::ZERO, 50.0), None);
        // A crossing after the segment ends is not reported.
        let short = moving(-100.0, 0.0, -60.0, 0.0, 0.0, 4.0);
        assert_eq!(first_crossing(&short, &ap, Instant::ZERO, 50.0), None);
    }

    #[test]
    fn crossing_matches_brute_force_sampling() {
        // Two moving nodes on arbitrary segments; sample the side every 100 us and compare
        // with the computed instant at nanosecond resolution around it.
        let cases = [
            (moving(3.0, -7.0, 250.0, 120.0, 0.5, 40.0), moving(90.0, 80.0, 10.0, 15.0, 0.0, 35.0), 42.5),
            (
                moving(0.0, 0.0, 400.0, 300.0, 0.0, 100.0),
                Segment::still(Position::new(200.0, 160.0), Instant::ZERO, Instant::MAX),
                77.7,
            ),
            (moving(600.0, 400.0, 1.0, 2.0, 2.0, 80.0), moving(300.0, 10.0, 310.0, 390.0, 0.0, 90.0), 123.4),
        ];
        for (a, b, r) in cases {
            let mut after = a.start.max(b.start);
            let end = a.end.min(b.end);
            let side = |t: Instant| a.position_at(t).distance(&b.position_at(t)) < r;
            let mut found = 0;
            loop {
                let got = first_crossing(&a, &b, after, r);
                // Brute force: the first sample on the other side, then bisect to the ns.
                let step = 100_000u64;
                let mut t = after.as_nanos();
                let want = loop {
                    if t >= end.as_nanos() {
                        break if side(end) != side(after) { Some(end) } else { None };
                    }
                    let next = (t + step).min(end.as_nanos());
                    if side(Instant::from_nanos(next)) != side(after) {
                        let (mut lo, mut hi) = (t, next);
                        while hi - lo > 1 {
                            let mid = lo + (hi - lo) / 2;
                            if side(Instant::from_nanos(mid)) != side(after) {
                                hi = mid;
                            } else {
                                lo = mid;
                            }
                        }
                        break Some(Instant::from_nanos(hi));
                    }
                    t = next;
                };
                assert_eq!(got, want, "after {after}");
                match got {
                    Some(t) => {
                        found += 1;
                        after = t;
                    }
                    None => break,
                }
            }
            assert!(found >= 1, "each case crosses at least once");
        }
    }
}
