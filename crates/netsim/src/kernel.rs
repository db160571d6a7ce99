//! The discrete-event kernel: a future-event list ordered by (time, insertion sequence).
//!
//! Ties at the same instant are served first-in first-out, so the order in which a model
//! schedules simultaneous events is the order in which they happen — the property that makes a
//! run reproducible without relying on any container's iteration order. Scheduling an event in
//! the past is an error, not a silent reordering. A `Scheduler` is an ordinary value: any number
//! of simulations can live in one process.
//!
//! A model may also decide an event now and put it in the list later: a [`Ticket`] taken at
//! the decision holds the event's place among simultaneous events, so scheduling it later
//! with [`Scheduler::schedule_ticket`] orders it exactly as scheduling it at once would have.
//! That keeps the list short where events are decided long before they are due (one arrival
//! per packet on a long wire, a timer that is postponed again and again) without changing
//! the order of anything.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::{Duration, Instant};

/// An attempt to schedule an event before the current simulation time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("event scheduled in the past: at {at}, but the clock is already at {now}")]
pub struct ScheduleInPast {
    /// When the event was asked to happen.
    pub at: Instant,
    /// The clock when it was asked.
    pub now: Instant,
}

struct Entry<E> {
    /// (time, sequence) as one number, time in the high half: comparing one 128-bit integer
    /// is cheaper than comparing a pair, and sifting through the heap does little else.
    key: u128,
    event: E,
}

impl<E> Entry<E> {
    fn new(at: Instant, seq: u64, event: E) -> Self {
        Entry { key: (u128::from(at.0) << 64) | u128::from(seq), event }
    }
    fn at(&self) -> Instant {
        Instant((self.key >> 64) as u64)
    }
    fn seq(&self) -> u64 {
        self.key as u64
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    // BinaryHeap is a max-heap: reverse so the earliest (time, seq) is on top.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// A place in the order of simultaneous events, taken when an event is decided (see the
/// module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticket(u64);

impl Ticket {
    /// The position, for models that carry it in an event payload.
    pub fn get(self) -> u64 {
        self.0
    }
}

/// The future-event list and the simulation clock.
///
/// `E` is the model's event type; keep it small and `Copy` (ids, not payloads) so the heap
/// moves little memory.
pub struct Scheduler<E> {
    heap: BinaryHeap<Entry<E>>,
    /// The first event scheduled since the last one was handed out, kept out of the heap:
    /// the next [`Scheduler::next_before`] either hands it out at once (it is the earliest)
    /// or puts it in the heap's top place as it takes the top out, one sift instead of the
    /// two of a push and a pop. Handling an event mostly schedules one or two. Its key and
    /// event are kept apart (the event is `None` when nothing is held), so that holding and
    /// handing it out moves little.
    next_key: u128,
    next_event: Option<E>,
    seq: u64,
    now: Instant,
    /// Sequence number of the event being handled (of the last one handed out).
    current_seq: Option<u64>,
    processed: u64,
}

impl<E: Copy> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> Scheduler<E> {
    /// An empty event list with the clock at zero.
    pub fn new() -> Self {
        Scheduler {
            heap: BinaryHeap::new(),
            next_key: 0,
            next_event: None,
            seq: 0,
            now: Instant::ZERO,
            current_seq: None,
            processed: 0,
        }
    }

    /// The current simulation time (the time of the event being handled).
    #[inline]
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Number of events handed out by [`Scheduler::next_before`] so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Number of events waiting.
    pub fn pending(&self) -> usize {
        self.heap.len() + usize::from(self.next_event.is_some())
    }

    /// Schedule `event` at absolute time `at` (which may equal `now`).
    #[inline]
    pub fn schedule_at(&mut self, at: Instant, event: E) -> Result<(), ScheduleInPast> {
        if at < self.now {
            return Err(ScheduleInPast { at, now: self.now });
        }
        self.insert(Entry::new(at, self.seq, event));
        self.seq += 1;
        Ok(())
    }

    /// Schedule `event` after `delay` from now; never in the past, so it cannot fail.
    /// Saturates at `Instant::MAX` (an event that never comes).
    #[inline]
    pub fn schedule_in(&mut self, delay: Duration, event: E) {
        let at = self.now.saturating_add(delay);
        self.insert(Entry::new(at, self.seq, event));
        self.seq += 1;
    }

    /// Takes the next place in the order of simultaneous events for an event to be scheduled
    /// later with [`Scheduler::schedule_ticket`]. Scheduling consumes places the same way,
    /// so taking a ticket does not change the order of other events.
    #[inline]
    pub fn ticket(&mut self) -> Ticket {
        let t = Ticket(self.seq);
        self.seq += 1;
        t
    }

    /// Schedules `event` at `at` in the place `ticket` holds: it runs after the events at `at`
    /// scheduled before the ticket was taken, and before those scheduled after. An error if
    /// that place has already gone by (`at` before now, or at now but before the event being
    /// handled).
    #[inline]
    pub fn schedule_ticket(&mut self, at: Instant, ticket: Ticket, event: E) -> Result<(), ScheduleInPast> {
        if !self.is_ahead(at, ticket) {
            return Err(ScheduleInPast { at, now: self.now });
        }
        self.insert(Entry::new(at, ticket.0, event));
        Ok(())
    }

    /// Whether an event placed at (`at`, `ticket`) would still be ahead of the one being
    /// handled: later, or at this instant with a later ticket. A model that decided an event
    /// without scheduling it asks this to know whether it has happened yet.
    #[inline]
    pub fn is_ahead(&self, at: Instant, ticket: Ticket) -> bool {
        at > self.now || (at == self.now && self.current_seq.is_none_or(|c| ticket.0 > c))
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Instant> {
        let next = self.next_event.is_some().then_some(Instant((self.next_key >> 64) as u64));
        match (next, self.heap.peek()) {
            (Some(n), Some(top)) => Some(n.min(top.at())),
            (n, top) => n.or(top.map(Entry::at)),
        }
    }

    /// Remove the earliest event if it is due at or before `stop`, advancing the clock to it.
    /// Returns `None` (clock unchanged) when no event is left before `stop`.
    #[inline]
    pub fn next_before(&mut self, stop: Instant) -> Option<(Instant, E)> {
        let entry = match self.next_event {
            Some(event) => {
                let next = Entry { key: self.next_key, event };
                match self.heap.peek_mut() {
                    // The heap's top is earlier: it leaves, the held event takes its place.
                    Some(mut top) if top.key < next.key => {
                        if top.at() > stop {
                            return None;
                        }
                        self.next_event = None;
                        std::mem::replace(&mut *top, next)
                    }
                    _ => {
                        if next.at() > stop {
                            return None;
                        }
                        self.next_event = None;
                        next
                    }
                }
            }
            None => {
                if self.heap.peek()?.at() > stop {
                    return None;
                }
                self.heap.pop()?
            }
        };
        self.now = entry.at();
        self.current_seq = Some(entry.seq());
        self.processed += 1;
        Some((entry.at(), entry.event))
    }

    /// Adds an event: held apart if nothing is, otherwise into the heap.
    #[inline]
    fn insert(&mut self, entry: Entry<E>) {
        if self.next_event.is_none() {
            self.next_key = entry.key;
            self.next_event = Some(entry.event);
        } else {
            self.heap.push(entry);
        }
    }

    /// Move the clock forward to `t` without an event (used when a run stops at its end time
    /// with events still pending, so that final statistics integrate up to the stop time).
    /// A run that stops at `t` has handled everything placed at `t` so far: the places of
    /// the tickets already taken count as gone by ([`Scheduler::is_ahead`]), as if the last
    /// one had just been handled.
    pub fn advance_to(&mut self, t: Instant) {
        if t > self.now {
            self.now = t;
            self.current_seq = self.seq.checked_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(s: &mut Scheduler<u32>) -> Vec<(u64, u32)> {
        std::iter::from_fn(|| s.next_before(Instant::MAX)).map(|(t, e)| (t.0, e)).collect()
    }

    #[test]
    fn orders_by_time_then_fifo() {
        let mut s = Scheduler::new();
        s.schedule_at(Instant(5), 1).unwrap();
        s.schedule_at(Instant(3), 2).unwrap();
        s.schedule_at(Instant(5), 3).unwrap();
        s.schedule_at(Instant(3), 4).unwrap();
        s.schedule_at(Instant(0), 5).unwrap();
        assert_eq!(drain(&mut s), vec![(0, 5), (3, 2), (3, 4), (5, 1), (5, 3)]);
    }

    #[test]
    fn fifo_ties_hold_for_many_simultaneous_events() {
        let mut s = Scheduler::new();
        for i in 0..1000 {
            s.schedule_at(Instant(7), i).unwrap();
        }
        let order: Vec<u32> = drain(&mut s).into_iter().map(|(_, e)| e).collect();
        assert_eq!(order, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn scheduling_in_the_past_is_an_error() {
        let mut s = Scheduler::new();
        s.schedule_at(Instant(10), 1).unwrap();
        assert_eq!(s.next_before(Instant::MAX), Some((Instant(10), 1)));
        let err = s.schedule_at(Instant(9), 2).unwrap_err();
        assert_eq!(err, ScheduleInPast { at: Instant(9), now: Instant(10) });
        // Scheduling at "now" is allowed and runs after what is already due now.
        s.schedule_at(Instant(10), 3).unwrap();
        assert_eq!(s.next_before(Instant::MAX), Some((Instant(10), 3)));
    }

    #[test]
    fn after_advancing_the_clock_earlier_places_are_behind_and_new_ones_ahead() {
        let mut s: Scheduler<u32> = Scheduler::new();
        s.schedule_at(Instant(50), 1).unwrap();
        let early = s.ticket();
        assert_eq!(s.next_before(Instant(20)), None);
        s.advance_to(Instant(20));
        // An event decided before the stop for the stop's instant would have run in it.
        assert!(!s.is_ahead(Instant(20), early));
        assert!(s.is_ahead(Instant(21), early));
        let fresh = s.ticket();
        assert!(s.is_ahead(Instant(20), fresh));
        s.schedule_ticket(Instant(20), fresh, 2).unwrap();
        assert_eq!(s.next_before(Instant::MAX), Some((Instant(20), 2)));
    }

    #[test]
    fn stops_at_stop_time_and_keeps_later_events() {
        let mut s = Scheduler::new();
        s.schedule_at(Instant(1), 1).unwrap();
        s.schedule_at(Instant(10), 2).unwrap();
        assert!(s.next_before(Instant(5)).is_some());
        assert!(s.next_before(Instant(5)).is_none());
        assert_eq!(s.now(), Instant(1));
        assert_eq!(s.pending(), 1);
        assert_eq!(s.next_before(Instant(10)), Some((Instant(10), 2)));
    }

    #[test]
    fn events_scheduled_while_handling_are_ordered_correctly() {
        // A handler at t=2 schedules for t=2 (runs after already-queued t=2 events) and t=3.
        let mut s = Scheduler::new();
        s.schedule_at(Instant(2), 0).unwrap();
        s.schedule_at(Instant(2), 1).unwrap();
        let mut seen = vec![];
        while let Some((t, e)) = s.next_before(Instant::MAX) {
            seen.push((t.0, e));
            if e == 0 {
                s.schedule_in(Duration(0), 10);
                s.schedule_in(Duration(1), 11);
            }
        }
        assert_eq!(seen, vec![(2, 0), (2, 1), (2, 10), (3, 11)]);
    }

    #[test]
    fn a_ticket_keeps_the_place_it_was_taken_in() {
        // Event 1 is decided first but scheduled last; it still runs before event 2, which
        // was scheduled for the same instant in between, and after event 0.
        let mut s = Scheduler::new();
        s.schedule_at(Instant(5), 0).unwrap();
        let t = s.ticket();
        s.schedule_at(Instant(5), 2).unwrap();
        s.schedule_at(Instant(1), 9).unwrap();
        assert_eq!(s.next_before(Instant::MAX), Some((Instant(1), 9)));
        s.schedule_ticket(Instant(5), t, 1).unwrap();
        assert_eq!(drain(&mut s), vec![(5, 0), (5, 1), (5, 2)]);
    }

    #[test]
    fn a_ticket_whose_place_has_gone_by_is_refused() {
        let mut s = Scheduler::new();
        let early = s.ticket();
        s.schedule_at(Instant(3), 1).unwrap();
        assert_eq!(s.next_before(Instant::MAX), Some((Instant(3), 1)));
        // At 3, after the event being handled: gone. Before 3: gone. Later: fine.
        assert!(s.schedule_ticket(Instant(3), early, 2).is_err());
        assert!(s.schedule_ticket(Instant(2), early, 2).is_err());
        s.schedule_ticket(Instant(4), early, 2).unwrap();
        let late = s.ticket();
        s.schedule_ticket(Instant(3), late, 3).unwrap();
        assert_eq!(drain(&mut s), vec![(3, 3), (4, 2)]);
    }

    #[test]
    fn many_events_interleaved_leave_in_time_then_fifo_order() {
        // Scheduling and handing out interleaved, with many ties and stops, against a
        // sorted reference.
        let mut s = Scheduler::new();
        let mut reference = std::collections::BTreeSet::new();
        let mut x: u64 = 12345;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut id = 0u32;
        let (mut seen, mut expected) = (Vec::new(), Vec::new());
        for round in 0..4000 {
            for _ in 0..(next() % 4) {
                let at = s.now().0 + next() % 50;
                s.schedule_at(Instant(at), id).unwrap();
                reference.insert((at, id));
                id += 1;
            }
            assert_eq!(s.pending(), reference.len());
            assert_eq!(s.peek_time(), reference.first().map(|&(t, _)| Instant(t)));
            let stop = Instant(s.now().0 + next() % 20);
            if round % 5 != 0 {
                match s.next_before(stop) {
                    Some((t, e)) => {
                        seen.push((t.0, e));
                        expected.push(reference.pop_first().unwrap());
                    }
                    None => assert!(reference.first().is_none_or(|&(t, _)| Instant(t) > stop)),
                }
            }
        }
        seen.extend(drain(&mut s));
        expected.extend(reference);
        assert!(expected.len() > 2000);
        assert_eq!(seen, expected);
    }

    #[test]
    fn independent_simulations_coexist() {
        let mut a = Scheduler::new();
        let mut b = Scheduler::new();
        a.schedule_at(Instant(1), 1).unwrap();
        b.schedule_at(Instant(2), 2).unwrap();
        assert_eq!(a.next_before(Instant::MAX), Some((Instant(1), 1)));
        assert_eq!(b.next_before(Instant::MAX), Some((Instant(2), 2)));
        assert_eq!((a.now(), b.now()), (Instant(1), Instant(2)));
    }
}
