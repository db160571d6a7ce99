//! Every timer of an association in one table keyed by [`Timer`] (RFC 9260 §4, §5.1, §6.2,
//! §6.3, §8.3, §9.2; RFC 5061 §5 for T4-RTO): association timers and, per destination,
//! T3-rtx and the heartbeat timer. `poll_timeout` is the earliest entry; `handle_timeout`
//! fires the entries that are due. A state change stops the timers the new state has no use
//! for ([`Timer::serves`]).

use simtime::Instant;

use super::{PathId, State};

/// One timer of an association.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Timer {
    /// T1-init or T1-cookie: retransmits INIT or COOKIE ECHO (§5.1).
    T1,
    /// T2-shutdown: retransmits SHUTDOWN or SHUTDOWN ACK (§9.2).
    T2,
    /// T4-RTO: retransmits ASCONF (RFC 5061 §5). Reserved: nothing arms it yet.
    T4,
    /// T5-shutdown-guard: bounds the whole shutdown (§9.2).
    T5,
    /// Delayed SACK (§6.2): a SACK is due when it expires.
    DelayedSack,
    /// T3-rtx of a destination (§6.3.2).
    T3Rtx(PathId),
    /// Heartbeat timer of a destination (§8.3; RFC 7829 §4 for PF destinations).
    Heartbeat(PathId),
}

impl Timer {
    /// The association timers, in the order `handle_timeout` fires them.
    pub(crate) const ASSOCIATION: [Timer; 5] = [Timer::T1, Timer::T2, Timer::T5, Timer::T4, Timer::DelayedSack];

    /// True if the timer has a use in `state`; a state change stops the others.
    pub fn serves(self, state: State) -> bool {
        use State::*;
        match self {
            Timer::T1 => matches!(state, CookieWait | CookieEchoed),
            // T5 only guards a shutdown we started by sending SHUTDOWN (§9.2).
            Timer::T2 | Timer::T5 => matches!(state, ShutdownSent | ShutdownAckSent),
            Timer::T4 | Timer::Heartbeat(_) => {
                matches!(state, Established | ShutdownPending | ShutdownSent | ShutdownReceived | ShutdownAckSent)
            }
            // DATA flows (and is acknowledged) until both sides' data is acknowledged; in
            // SHUTDOWN-ACK-SENT and CLOSED no SACK goes out any more.
            Timer::DelayedSack | Timer::T3Rtx(_) => {
                matches!(state, Established | ShutdownPending | ShutdownSent | ShutdownReceived)
            }
        }
    }

    fn slot(self) -> Slot {
        match self {
            Timer::T1 => Slot::Assoc(0),
            Timer::T2 => Slot::Assoc(1),
            Timer::T4 => Slot::Assoc(2),
            Timer::T5 => Slot::Assoc(3),
            Timer::DelayedSack => Slot::Assoc(4),
            Timer::T3Rtx(p) => Slot::Path(p.index(), 0),
            Timer::Heartbeat(p) => Slot::Path(p.index(), 1),
        }
    }
}

enum Slot {
    Assoc(usize),
    Path(usize, usize),
}

/// A timer that does not run, in [`TimerTable`]'s nanoseconds.
const OFF: u64 = u64::MAX;

/// The deadlines of every [`Timer`] of one association, in nanoseconds ([`OFF`] when it does
/// not run: the earliest is then a plain minimum).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TimerTable {
    assoc: [u64; 5],
    /// T3-rtx and heartbeat per destination, by [`PathId::index`].
    paths: Vec<[u64; 2]>,
}

impl Default for TimerTable {
    fn default() -> Self {
        TimerTable { assoc: [OFF; 5], paths: Vec::new() }
    }
}

fn deadline(ns: u64) -> Option<Instant> {
    (ns != OFF).then_some(Instant::from_nanos(ns))
}

fn nanos(at: Option<Instant>) -> u64 {
    at.map_or(OFF, Instant::as_nanos)
}

impl TimerTable {
    /// When `timer` expires, if it runs.
    pub(crate) fn get(&self, timer: Timer) -> Option<Instant> {
        match timer.slot() {
            Slot::Assoc(i) => deadline(self.assoc[i]),
            Slot::Path(p, i) => self.paths.get(p).and_then(|t| deadline(t[i])),
        }
    }

    /// True if `timer` runs.
    pub(crate) fn is_armed(&self, timer: Timer) -> bool {
        self.get(timer).is_some()
    }

    /// True if `timer` runs and expires at or before `now`.
    pub(crate) fn is_due(&self, timer: Timer, now: Instant) -> bool {
        self.get(timer).is_some_and(|t| t <= now)
    }

    /// Starts (or restarts) `timer` to expire at `at`.
    pub(crate) fn set(&mut self, timer: Timer, at: Instant) {
        self.put(timer, Some(at));
    }

    /// Starts or stops `timer`.
    pub(crate) fn put(&mut self, timer: Timer, at: Option<Instant>) {
        let at = nanos(at);
        match timer.slot() {
            Slot::Assoc(i) => self.assoc[i] = at,
            Slot::Path(p, i) => {
                if p >= self.paths.len() {
                    if at == OFF {
                        return;
                    }
                    self.paths.resize(p + 1, [OFF; 2]);
                }
                self.paths[p][i] = at;
            }
        }
    }

    /// Stops `timer`.
    pub(crate) fn stop(&mut self, timer: Timer) {
        self.put(timer, None);
    }

    /// Stops both timers of destination `p`.
    pub(crate) fn stop_path(&mut self, p: PathId) {
        if let Some(t) = self.paths.get_mut(p.index()) {
            *t = [OFF; 2];
        }
    }

    /// Stops every timer.
    pub(crate) fn clear(&mut self) {
        self.assoc = [OFF; 5];
        self.paths.clear();
    }

    /// Stops the timers that have no use in `state`.
    pub(crate) fn keep_serving(&mut self, state: State) {
        for t in Timer::ASSOCIATION {
            if !t.serves(state) {
                self.stop(t);
            }
        }
        let keep = [Timer::T3Rtx(PathId::default()).serves(state), Timer::Heartbeat(PathId::default()).serves(state)];
        for entry in &mut self.paths {
            for (deadline, keep) in entry.iter_mut().zip(keep) {
                if !keep {
                    *deadline = OFF;
                }
            }
        }
    }

    /// The earliest deadline. Called after every packet, so a plain minimum over the table.
    pub(crate) fn earliest(&self) -> Option<Instant> {
        let assoc = self.assoc.iter().fold(OFF, |m, &t| m.min(t));
        deadline(self.paths.iter().fold(assoc, |m, t| m.min(t[0]).min(t[1])))
    }

    /// Moves every deadline at or before `now` to the next nanosecond.
    pub(crate) fn postpone_due(&mut self, now: Instant) {
        let now = now.as_nanos();
        let slots = self.assoc.iter_mut().chain(self.paths.iter_mut().flat_map(|t| t.iter_mut()));
        for deadline in slots {
            if *deadline <= now {
                *deadline = now + 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_keeps_one_deadline_per_timer_and_reports_the_earliest() {
        let at = |ms: u64| Instant::from_nanos(ms * 1_000_000);
        let mut t = TimerTable::default();
        assert_eq!(t.earliest(), None);
        t.set(Timer::T3Rtx(PathId::new(2)), at(30));
        t.set(Timer::Heartbeat(PathId::new(0)), at(20));
        t.set(Timer::T5, at(40));
        assert_eq!(t.earliest(), Some(at(20)));
        assert_eq!(t.get(Timer::T3Rtx(PathId::new(1))), None);
        t.stop_path(PathId::new(0));
        assert_eq!(t.earliest(), Some(at(30)));
        // SHUTDOWN-ACK-SENT keeps T5 but no T3-rtx.
        t.keep_serving(State::ShutdownAckSent);
        assert_eq!(t.earliest(), Some(at(40)));
        t.postpone_due(at(40));
        assert_eq!(t.get(Timer::T5), Some(at(40) + simtime::Duration::from_nanos(1)));
        t.keep_serving(State::Closed);
        assert_eq!(t.earliest(), None);
    }
}
