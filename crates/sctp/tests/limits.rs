//! Two-endpoint tests at the engine's limits: path MTUs below what a scenario accepts, and
//! messages larger than the peer's receive buffer.
#![allow(clippy::unwrap_used)]

mod harness;

use harness::{App, Harness, CLIENT, SERVER};
use sctp::config::MIN_PMTU;
use sctp::{Config, State};
use simtime::Duration;

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

#[test]
fn the_path_mtu_floor_is_validated_with_the_value() {
    let at = |pmtu| Config { pmtu, ..Config::default() }.validate();
    assert_eq!(at(MIN_PMTU), Ok(()));
    assert_eq!(at(300), Err("pmtu: 300 is below the minimum of 576 bytes".to_string()));
}

#[test]
fn a_small_path_mtu_that_skipped_validation_does_not_underflow() {
    // Between 112 and 303 bytes the SACK's room for gap blocks was negative: the packet
    // builder underflowed (a panic with overflow checks, a huge block count without). A
    // driver that does not validate its configuration still gets a working association,
    // with SACKs carrying at least one gap block.
    for pmtu in [112u32, 200, 303] {
        let c = Config { pmtu, ..Config::default() };
        let mut h = Harness::new(c.clone(), c, 1, ms(10), 3);
        h.links[0].loss = 0.05;
        h.connect();
        h.apps[CLIENT] = App { to_send: 50_000, msg_size: 1000, ..Default::default() };
        h.apps[SERVER].reading = true;
        h.run_for(Duration::from_secs(60));
        assert_eq!(h.assoc_ref(CLIENT).state(), State::Established, "pmtu {pmtu}");
        assert_eq!(h.apps[SERVER].received_bytes, 50_000, "pmtu {pmtu}");
    }
}
