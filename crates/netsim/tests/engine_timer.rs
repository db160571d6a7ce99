//! `transport::timer::EngineTimer` in a running world: a deadline set, moved earlier or later,
//! or dropped fires exactly once at the last instant it was given (or never), and takes its
//! place among simultaneous events from the moment it was set, as if every deadline were
//! scheduled at once.
#![allow(missing_docs, clippy::unwrap_used)]

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use netsim::agent::{Agent, Ctx};
use netsim::network::NodeKind;
use netsim::transport::timer::EngineTimer;
use netsim::world::WorldBuilder;
use netsim::{Duration, Instant};

/// (instant in µs, who) of every wake-up, in the order the world delivered them.
type Log = Arc<Mutex<Vec<(u64, &'static str)>>>;

const ENGINE: u64 = u64::MAX;

fn ms(t: f64) -> Instant {
    Instant::ZERO + Duration::from_nanos((t * 1e6) as u64)
}

/// An engine whose deadline follows a script: at each `(at, deadline)` the engine's deadline
/// becomes `deadline` (None: no timer). When its timer fires it logs `name` and has no
/// deadline until the script gives one.
struct Engine {
    name: &'static str,
    script: Vec<(f64, Option<f64>)>,
    timer: EngineTimer,
    log: Log,
}

impl Agent for Engine {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        for (i, &(at, _)) in self.script.iter().enumerate() {
            ctx.timer_at(ms(at), i as u64).unwrap();
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        if token == ENGINE {
            if self.timer.fired(ctx) {
                self.log.lock().unwrap().push((ctx.now().as_nanos() / 1000, self.name));
                self.timer.update(ctx, None);
            }
            return;
        }
        let deadline = self.script[token as usize].1.map(ms);
        self.timer.update(ctx, deadline);
    }
}

/// Plain timers: at `set` a timer for `fire` is scheduled; it logs `name` when it fires.
struct Plain {
    name: &'static str,
    timers: Vec<(f64, f64)>,
    log: Log,
}

impl Agent for Plain {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        for (i, &(set, _)) in self.timers.iter().enumerate() {
            ctx.timer_at(ms(set), 2 * i as u64).unwrap();
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        let i = (token / 2) as usize;
        if token.is_multiple_of(2) {
            ctx.timer_at(ms(self.timers[i].1), token + 1).unwrap();
        } else {
            self.log.lock().unwrap().push((ctx.now().as_nanos() / 1000, self.name));
        }
    }
}

/// Runs one engine (added first) and plain timers on one host for 100 ms.
fn run(engine: Vec<(f64, Option<f64>)>, plain: Vec<(f64, f64)>) -> Vec<(u64, &'static str)> {
    let log = Log::default();
    let mut b = WorldBuilder::new(1, ms(100.0));
    let h = b.node("H", NodeKind::Host);
    b.iface(h, "eth0", Ipv4Addr::new(10, 0, 0, 1));
    b.agent(h, Box::new(Engine { name: "engine", script: engine, timer: EngineTimer::new(ENGINE), log: log.clone() }));
    b.agent(h, Box::new(Plain { name: "plain", timers: plain, log: log.clone() }));
    b.build().run().unwrap();
    let out = log.lock().unwrap().clone();
    out
}

#[test]
fn a_deadline_fires_once_at_its_instant() {
    assert_eq!(run(vec![(0.0, Some(10.0))], vec![]), [(10000, "engine")]);
}

#[test]
fn a_deadline_moved_earlier_then_later_fires_once_at_the_last_instant() {
    let log = run(vec![(0.0, Some(10.0)), (2.0, Some(5.0)), (3.0, Some(20.0)), (4.0, Some(15.0))], vec![]);
    assert_eq!(log, [(15000, "engine")]);
}

#[test]
fn a_deadline_moved_earlier_fires_at_the_earlier_instant_only() {
    let log = run(vec![(0.0, Some(30.0)), (1.0, Some(8.0))], vec![]);
    assert_eq!(log, [(8000, "engine")]);
}

#[test]
fn a_dropped_deadline_never_fires() {
    assert_eq!(run(vec![(0.0, Some(10.0)), (1.0, None)], vec![]), []);
    // Dropped, then given again: only the new one fires.
    assert_eq!(run(vec![(0.0, Some(10.0)), (1.0, None), (2.0, Some(12.0))], vec![]), [(12000, "engine")]);
}

#[test]
fn a_deadline_fires_again_after_it_fired() {
    let log = run(vec![(0.0, Some(5.0)), (6.0, Some(9.0)), (7.0, Some(9.0))], vec![]);
    assert_eq!(log, [(5000, "engine"), (9000, "engine")], "the same deadline polled twice fires once");
}

#[test]
fn a_deadline_in_the_past_fires_at_once() {
    assert_eq!(run(vec![(5.0, Some(1.0))], vec![]), [(5000, "engine")]);
}

#[test]
fn simultaneous_timers_keep_the_order_in_which_they_were_set() {
    // The engine's deadline for 10 ms is set before the plain timer for 10 ms: engine first.
    assert_eq!(run(vec![(0.0, Some(10.0))], vec![(1.0, 10.0)]), [(10000, "engine"), (10000, "plain")]);
    // Set after it (moved there from later): plain first.
    assert_eq!(
        run(vec![(0.0, Some(20.0)), (2.0, Some(10.0))], vec![(1.0, 10.0)]),
        [(10000, "plain"), (10000, "engine")]
    );
    // Moved away from 10 ms and back after the plain timer was set: its place is the new
    // one, although its first entry in the event list is still ahead of the plain timer's.
    assert_eq!(
        run(vec![(0.0, Some(10.0)), (1.0, Some(30.0)), (3.0, Some(10.0))], vec![(2.0, 10.0)]),
        [(10000, "plain"), (10000, "engine")]
    );
    // Postponed to an instant a plain timer set later also has: the plain timer was set
    // after the deadline's ticket was taken, so the engine goes first.
    assert_eq!(
        run(vec![(0.0, Some(10.0)), (1.0, Some(15.0))], vec![(2.0, 15.0)]),
        [(15000, "engine"), (15000, "plain")]
    );
}
