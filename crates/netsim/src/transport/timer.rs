//! One engine timer in the simulator's event list.
//!
//! A protocol engine moves its deadline on almost every packet (a retransmission timer
//! restarted by each acknowledgement, a delayed-ACK timer) and simulator timers cannot be
//! cancelled. So the timer goes into the event list only when no pending one of this engine
//! comes earlier; an earlier one that fires puts it in then. The [`Ticket`] taken when the
//! deadline was set keeps its place among simultaneous events as if it had been scheduled at
//! once: the engine is woken exactly when, and in the order, it would be if every deadline
//! were scheduled, with at most a few entries per engine in the list.

use crate::agent::Ctx;
use crate::kernel::Ticket;
use crate::time::Instant;

/// The timer of one engine, firing the owning agent's `on_timer(token)`.
#[derive(Debug)]
pub struct EngineTimer {
    token: u64,
    /// The engine's deadline as last polled, the instant the timer fires (not before the
    /// poll) and the ticket taken when it was set.
    deadline: Option<(Instant, Instant, Ticket)>,
    /// This engine's entries in the event list, as (instant, ticket), earliest first: the
    /// kernel serves them in this order, so the one that fires is always the first.
    armed: Vec<(Instant, Ticket)>,
}

impl EngineTimer {
    /// A timer whose events carry `token`.
    pub fn new(token: u64) -> Self {
        EngineTimer { token, deadline: None, armed: Vec::new() }
    }

    /// Follows the engine's next deadline `next` (polled after every input).
    pub fn update(&mut self, ctx: &mut Ctx<'_>, next: Option<Instant>) {
        if next != self.deadline.map(|(t, _, _)| t) {
            let now = ctx.now();
            self.deadline = next.map(|t| (t, t.max(now), ctx.ticket()));
            self.arm(ctx);
        }
    }

    /// A timer event with this token fired. True if it is the engine's current deadline
    /// (the caller hands the engine its timeout); false for one since postponed or dropped
    /// (the current deadline, if any, is put in the list instead).
    pub fn fired(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let fired = (!self.armed.is_empty()).then(|| self.armed.remove(0));
        if fired.is_none() || self.deadline.map(|(_, at, ticket)| (at, ticket)) != fired {
            self.arm(ctx);
            return false;
        }
        self.deadline = None;
        true
    }

    /// Puts the deadline's timer in the event list unless a pending one comes first.
    fn arm(&mut self, ctx: &mut Ctx<'_>) {
        let Some((_, at, ticket)) = self.deadline else { return };
        if self.armed.first().is_some_and(|&first| first <= (at, ticket)) {
            return;
        }
        // The place is still ahead: the ticket is fresh, or an earlier pending timer fires now.
        let scheduled = ctx.timer_ticket(at, ticket, self.token);
        debug_assert!(scheduled.is_ok(), "engine timer place gone by");
        if scheduled.is_ok() {
            self.armed.insert(0, (at, ticket));
        }
    }
}
