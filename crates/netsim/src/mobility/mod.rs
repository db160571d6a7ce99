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
//! Models: [`Mobility::Stationary`].

mod position;
mod segment;

pub use position::Position;
pub use segment::{first_crossing, Segment};

use crate::time::Instant;

/// How a node moves.
#[derive(Clone, Debug)]
pub enum Mobility {
    /// Never moves.
    Stationary(Position),
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

    /// Where the node is at `t`. Queries may come in any order; answering in increasing
    /// order of time is O(1) amortised.
    pub fn position_at(&self, t: Instant) -> Position {
        self.segment_at(t).position_at(t)
    }

    /// The segment the node is on at `t` (the one with `start <= t < end`).
    pub fn segment_at(&self, t: Instant) -> Segment {
        match self {
            Mobility::Stationary(p) => Segment::still(*p, Instant::ZERO, Instant::MAX),
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
mod tests {
    use super::*;
    use crate::time::Duration;

    #[test]
    fn stationary_is_where_it_was_put_for_ever() {
        let m = Mobility::stationary(12.5, -3.0);
        for t in [Instant::ZERO, Instant::from_nanos(1), Instant::ZERO + Duration::from_secs(1_000_000)] {
            assert_eq!(m.position_at(t), Position::new(12.5, -3.0));
            assert_eq!(m.next_change(t), None);
        }
        let other = Mobility::stationary(0.0, 1.0);
        assert_eq!(m.next_crossing(&other, Instant::ZERO, 100.0), Crossing::Never);
    }
}
