//! A trajectory generated segment by segment, on demand.
//!
//! The random models cannot list their segments in advance (a run has no fixed end for
//! them), so a [`Track`] asks its [`SegmentSource`] for the next segment only when a query
//! reaches past the last one made, and keeps the few most recent. The source draws every
//! segment from its own random stream in one fixed order, whatever the queries were, so
//! positions depend on the seed alone: asking every second or every millisecond gives the
//! same positions at common instants. Queries at increasing instants cost O(1) amortised (a
//! new segment is made once and found at the back). A query earlier than the kept segments
//! (rare: callers go forward in time) replays the source from its initial state, which gives
//! the same segments again, at a cost linear in their number.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt::Debug;

use super::segment::Segment;
use crate::time::Instant;

/// How many recent segments a [`Track`] keeps (a query may go back this far cheaply).
const KEEP: usize = 8;

/// Makes a trajectory's segments one after another.
pub(crate) trait SegmentSource: Clone + Debug + Send {
    /// The next segment: the first starts at [`Instant::ZERO`], each later one where and when
    /// the previous one ended. Each must end no earlier than it starts, and time must advance
    /// over a bounded number of calls.
    fn next_segment(&mut self) -> Segment;
}

/// A lazily generated trajectory.
#[derive(Clone, Debug)]
pub(crate) struct Track<S> {
    initial: S,
    state: RefCell<TrackState<S>>,
}

#[derive(Clone, Debug)]
struct TrackState<S> {
    source: S,
    recent: VecDeque<Segment>,
}

impl<S: SegmentSource> Track<S> {
    /// A trajectory whose segments `source` makes.
    pub(crate) fn new(source: S) -> Self {
        let state = TrackState { source: source.clone(), recent: VecDeque::with_capacity(KEEP + 1) };
        Track { initial: source, state: RefCell::new(state) }
    }

    /// The segment in force at `t` (`start <= t < end`).
    pub(crate) fn segment_at(&self, t: Instant) -> Segment {
        let mut st = self.state.borrow_mut();
        if st.recent.front().is_none_or(|s| t < s.start) {
            st.source = self.initial.clone();
            st.recent.clear();
            let first = st.source.next_segment();
            st.recent.push_back(first);
        }
        while st.recent.back().is_some_and(|s| s.end <= t) {
            let next = st.source.next_segment();
            st.recent.push_back(next);
            if st.recent.len() > KEEP {
                st.recent.pop_front();
            }
        }
        // The kept segments are contiguous, the first starts at or before `t` and the last
        // ends after it, so one of them covers `t` (zero-length ones cover nothing).
        let found = st.recent.iter().rev().find(|s| s.start <= t && t < s.end).copied();
        found.unwrap_or_else(|| {
            debug_assert!(false, "no segment covers {t}");
            Segment::still(st.recent.back().map(|s| s.to).unwrap_or_default(), t, Instant::MAX)
        })
    }
}
