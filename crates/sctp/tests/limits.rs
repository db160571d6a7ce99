//! Two-endpoint tests at the engine's limits: path MTUs below what a scenario accepts, and
//! messages larger than the peer's receive buffer.
#![allow(clippy::unwrap_used)]

mod harness;

use harness::{ms, App, Harness, CLIENT, SERVER};
use sctp::config::MIN_PMTU;
use sctp::{Config, State};
use simtime::Duration;

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

#[test]
fn a_message_larger_than_the_receive_buffer_is_handed_over_in_parts() {
    // §6.9: a receiver that runs out of buffer space while waiting for the rest of a message
    // dispatches part of it through the partial delivery API, so the rest can arrive. Without
    // it the buffer fills with fragments it cannot deliver, the window stays shut and the
    // association stalls until it fails. The sender keeps probing with one chunk while the
    // window is zero and nothing is in flight (§6.1 A).
    let server = Config { recv_buffer: 4000, ..Config::default() };
    let mut h = Harness::new(Config::default(), server, 1, ms(10), 3);
    h.connect();
    h.run_for(ms(100));
    h.apps[CLIENT] = App { to_send: 20_000 + 3000, msg_size: 20_000, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(30));
    assert_eq!(h.assoc_ref(CLIENT).state(), State::Established);
    assert_eq!(h.apps[SERVER].received_bytes, 23_000);
    let got = &h.apps[SERVER].received;
    assert!(got.len() > 2, "the big message arrives in several parts");
    let ends: Vec<bool> = got.iter().map(|m| m.end_of_message).collect();
    let n = ends.len();
    assert!(ends[..n - 2].iter().all(|e| !e) && ends[n - 2] && ends[n - 1], "{ends:?}");
    // The parts make up the message the client sent: its number in the first 8 bytes, then
    // its fill byte.
    let big: Vec<u8> = got[..n - 1].iter().flat_map(|m| m.data.iter().copied()).collect();
    let mut expected = vec![0u8; 20_000];
    expected[..8].copy_from_slice(&0u64.to_be_bytes());
    assert_eq!(big, expected);
    assert_eq!(got[n - 1].data.len(), 3000);
    assert_eq!(h.assoc_ref(SERVER).delivered_messages(), 2);
}
