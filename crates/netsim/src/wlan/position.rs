//! Where a radio is. Positions are in metres on a plane ([`crate::mobility::Position`]). A
//! radio stands where its configuration puts it unless its node has a mobility model
//! ([`crate::mobility::Mobility`]), which then says where it is at each instant; every position
//! is read through `Positions::at`.

pub use crate::mobility::Position;

use std::cell::Cell;

use crate::mobility::{Mobility, Segment};
use crate::time::Instant;

/// The positions of a channel's radios.
#[derive(Clone, Debug, Default)]
pub(crate) struct Positions {
    fixed: Vec<Position>,
    moving: Vec<Option<Mobility>>,
    /// Per radio, the segment of its motion last looked up: a channel asks for a moving
    /// radio's position at every frame, nearly always on the same segment, which is then
    /// used without asking the model (the segment covering an instant is unique, so the
    /// position is the one the model gives).
    recent: Vec<Cell<Segment>>,
    /// The radios with a mobility model, in order.
    movers: Vec<usize>,
}

const ORIGIN: Position = Position { x: 0.0, y: 0.0 };
/// A segment covering no instant (before any lookup).
const NO_SEGMENT: Segment = Segment { start: Instant::MAX, end: Instant::ZERO, from: ORIGIN, to: ORIGIN };

impl Positions {
    /// Add a radio standing at `p`.
    pub(crate) fn push(&mut self, p: Position) {
        self.fixed.push(p);
        self.moving.push(None);
        self.recent.push(Cell::new(NO_SEGMENT));
    }

    /// Radio `i` moves as `m` says from now on (a stationary model just places it).
    pub(crate) fn set_mobility(&mut self, i: usize, m: Mobility) {
        if let Mobility::Stationary(p) = m {
            self.fixed[i] = p;
            self.moving[i] = None;
        } else {
            self.moving[i] = Some(m);
        }
        self.movers = (0..self.moving.len()).filter(|&k| self.moving[k].is_some()).collect();
        self.recent[i].set(NO_SEGMENT);
    }

    /// True if some radio moves (received powers then change with time).
    #[inline]
    pub(crate) fn any_moving(&self) -> bool {
        !self.movers.is_empty()
    }

    /// The radios with a mobility model, in increasing order.
    #[inline]
    pub(crate) fn movers(&self) -> &[usize] {
        &self.movers
    }

    /// True if radio `i` has a mobility model (its received powers change with time).
    #[inline]
    pub(crate) fn is_moving(&self, i: usize) -> bool {
        self.moving[i].is_some()
    }

    /// Where radio `i` is at `t`.
    #[inline]
    pub(crate) fn at(&self, i: usize, t: Instant) -> Position {
        match &self.moving[i] {
            Some(m) => {
                let mut s = self.recent[i].get();
                // The cover test of `Mobility::segment_at`.
                if !(s.start <= t && (t < s.end || s.end == Instant::MAX)) {
                    s = m.segment_at(t);
                    self.recent[i].set(s);
                }
                s.position_at(t)
            }
            None => self.fixed[i],
        }
    }

    /// The first instant after `after` at which the distance between radios `i` and `j`
    /// crosses `d` metres ([`Mobility::next_crossing`]; a radio without a model stands still).
    pub(crate) fn next_crossing(&self, i: usize, j: usize, after: Instant, d: f64) -> crate::mobility::Crossing {
        let still = |k: usize| Mobility::Stationary(self.fixed[k]);
        let (a, b) =
            (self.moving[i].clone().unwrap_or_else(|| still(i)), self.moving[j].clone().unwrap_or_else(|| still(j)));
        b.next_crossing(&a, after, d)
    }
}
