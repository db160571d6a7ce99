//! Where a radio is. Positions are in metres on a plane. Radios stand still for now: every
//! position is read through [`Positions::at`], the one place that will ask a node's mobility
//! model (`position_at(t)`) once nodes move.

use crate::time::Instant;

/// A point on the plane, in metres.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Position {
    /// East, metres.
    pub x: f64,
    /// North, metres.
    pub y: f64,
}

impl Position {
    /// Euclidean distance in metres.
    pub fn distance(self, other: Position) -> f64 {
        (self.x - other.x).hypot(self.y - other.y)
    }
}

/// The positions of a channel's radios.
#[derive(Clone, Debug, Default)]
pub(crate) struct Positions(Vec<Position>);

impl Positions {
    /// Add a radio standing at `p`.
    pub(crate) fn push(&mut self, p: Position) {
        self.0.push(p);
    }

    /// Where radio `i` is at `t` (stationary: where it was put).
    #[inline]
    pub(crate) fn at(&self, i: usize, _t: Instant) -> Position {
        self.0[i]
    }
}
