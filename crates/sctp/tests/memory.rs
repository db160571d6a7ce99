//! Memory an association holds, measured with a counting allocator: an idle association, and
//! each small message queued, must cost about the bytes they hold, not a path MTU per chunk.
#![allow(clippy::unwrap_used)]

mod harness;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use harness::{Harness, CLIENT, SERVER};
use sctp::Config;
use simtime::Duration;

/// The system allocator, counting the bytes live on each thread.
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn add(n: isize) {
    // `try_with`: a thread being torn down no longer counts.
    let _ = LIVE.try_with(|l| l.set(l.get() + n));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        add(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> isize {
    LIVE.with(Cell::get)
}

/// Bytes held by the two endpoints of an established, idle association (everything the
/// harness logs is dropped), by each of 1,000 queued 100-byte messages, and by the idle
/// association once they and 1 MB of bulk data have been delivered and read.
fn measure() -> (isize, isize, isize) {
    let before = live();
    let mut h = Harness::new(Config::default(), Config::default(), 1, Duration::from_millis(10), 3);
    let harness_only = live() - before;
    h.connect();
    h.run_for(Duration::from_millis(200));
    h.sent = Vec::new();
    h.delivered = Vec::new();
    h.events = [Vec::new(), Vec::new()];
    let idle = live() - before - harness_only;
    let queued = live();
    for _ in 0..1000 {
        h.assoc(CLIENT).send(0, 0, false, &[5; 100]).unwrap();
    }
    let per_message = (live() - queued) / 1000;
    h.apps[SERVER] = harness::App { reading: true, ..Default::default() };
    h.apps[CLIENT] = harness::App { to_send: 1_000_000, msg_size: 1452, ..Default::default() };
    h.run_for(Duration::from_secs(10));
    assert_eq!(h.apps[SERVER].received_bytes, 100_000 + 1_000_000);
    h.apps[SERVER].received = Vec::new();
    h.sent = Vec::new();
    h.delivered = Vec::new();
    h.events = [Vec::new(), Vec::new()];
    // A heartbeat interval (30 s, with jitter) later, idle, it has let its spare buffers go.
    h.run_for(Duration::from_secs(60));
    h.sent = Vec::new();
    h.delivered = Vec::new();
    h.events = [Vec::new(), Vec::new()];
    let after = live() - before - harness_only;
    (idle / 2, per_message, after / 2)
}

#[test]
fn a_small_queued_message_costs_about_its_size() {
    let (idle, per_message, after) = measure();
    println!(
        "idle association (with its endpoint): {idle} bytes; per queued 100-byte message: \
         {per_message} bytes; idle after a transfer: {after} bytes"
    );
    // 100 bytes of data, the fragment's bookkeeping and its queue slot; an MTU-sized buffer
    // (1,500 bytes) per message would be far above.
    assert!(per_message <= 256, "{per_message} bytes per queued 100-byte message");
    // The endpoint's association table (a B-tree leaf with room for 11 associations, about
    // 12 KB) is most of an idle association's figure; 32 spare MTU-sized buffers (48 KB)
    // kept after a transfer would be far above.
    assert!(idle <= 24 * 1024, "{idle} bytes per idle association");
    assert!(after <= 24 * 1024, "{after} bytes per idle association after a transfer");
}
