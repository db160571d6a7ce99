//! The world starts each agent exactly once, however `run_until` is called.
#![allow(missing_docs, clippy::unwrap_used)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use netsim::agent::{Agent, Ctx};
use netsim::network::NodeKind;
use netsim::world::WorldBuilder;
use netsim::{Duration, Instant};

/// Counts its starts and sets no timer, so the first `run_until` processes no event.
struct CountStarts(Arc<AtomicU32>);

impl Agent for CountStarts {
    fn start(&mut self, _ctx: &mut Ctx<'_>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn repeated_run_until_at_time_zero_starts_agents_once() {
    let starts = Arc::new(AtomicU32::new(0));
    let mut b = WorldBuilder::new(1, Instant::ZERO + Duration::from_secs(1));
    let h = b.node("H", NodeKind::Host);
    b.agent(h, Box::new(CountStarts(starts.clone())));
    let mut world = b.build();
    world.run_until(Instant::ZERO).unwrap();
    world.run_until(Instant::ZERO).unwrap();
    world.run_until(Instant::ZERO + Duration::from_millis(500)).unwrap();
    assert_eq!(starts.load(Ordering::Relaxed), 1);
}
