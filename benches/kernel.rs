//! Kernel throughput: events per second through the future-event list under a trivial load
//! (1,000 self-rescheduling timers with spread-out periods, so the heap holds 1,000 entries).
#![allow(missing_docs)] // criterion generates the entry points
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netsim::kernel::Scheduler;
use netsim::{Duration, Instant};

const TIMERS: u64 = 1_000;
const EVENTS: u64 = 1_000_000;

fn run() -> u64 {
    let mut s: Scheduler<u32> = Scheduler::new();
    for i in 0..TIMERS {
        s.schedule_in(Duration(i), i as u32);
    }
    let mut n = 0;
    while let Some((_, e)) = s.next_before(Instant::MAX) {
        n += 1;
        if n >= EVENTS {
            break;
        }
        s.schedule_in(Duration(1_000 + (e as u64 * 7919) % 1_000), e);
    }
    n
}

fn kernel(c: &mut Criterion) {
    let mut g = c.benchmark_group("kernel");
    g.throughput(Throughput::Elements(EVENTS));
    g.bench_function("events_1000_timers", |b| b.iter(run));
    g.finish();
}

criterion_group!(benches, kernel);
criterion_main!(benches);
