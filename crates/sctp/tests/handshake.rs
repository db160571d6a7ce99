//! Two-endpoint tests of the handshake: INIT parameters the receiver does not know
//! (RFC 9260 §3.2.1, §3.2.2) and the destinations INIT and COOKIE ECHO retransmissions
//! take (§6.4).
#![allow(clippy::unwrap_used)]

mod harness;

use harness::{ms, Harness, CLIENT, SERVER};
use sctp::wire::{Chunk, Packet, Parameter};
use sctp::{Config, State};
use simtime::Duration;

/// A two-address client and server whose client's INIT carries `extra` ahead of its
/// addresses; run until the handshake is over (45 ms: before the client's first packet from
/// its second address, which a server that ignored the address treats as out of the blue).
fn handshake_with_init_params(extra: Vec<Parameter>) -> Harness {
    let mut h = Harness::new(Config::default(), Config::default(), 2, ms(10), 3);
    h.mangle = Some(Box::new(move |bytes: &mut Vec<u8>| {
        let Ok(mut p) = Packet::parse(bytes) else { return };
        if let Some(Chunk::Init(init)) = p.chunks.first_mut() {
            assert_eq!(init.params.len(), 2, "the client lists its two addresses");
            init.params.splice(0..0, extra.iter().cloned());
            *bytes = p.emit();
        }
    }));
    h.connect();
    h.run_for(ms(45));
    h
}

/// The INIT ACKs the server sent.
fn init_acks(h: &Harness) -> Vec<sctp::wire::InitChunk> {
    h.sent
        .iter()
        .filter(|(_, side, _, _)| *side == SERVER)
        .filter_map(|(_, _, _, bytes)| match Packet::parse(bytes).unwrap().chunks.into_iter().next() {
            Some(Chunk::InitAck(a)) => Some(a),
            _ => None,
        })
        .collect()
}

/// The Unrecognized Parameter contents of an INIT ACK.
fn unrecognized(ack: &sctp::wire::InitChunk) -> Vec<Vec<u8>> {
    ack.params
        .iter()
        .filter_map(|p| match p {
            Parameter::UnrecognizedParameter(v) => Some(v.clone()),
            _ => None,
        })
        .collect()
}

/// The TLV bytes of an unknown parameter, as an Unrecognized Parameter carries them.
fn tlv(param_type: u16, value: &[u8]) -> Vec<u8> {
    Parameter::emit_list(&[Parameter::Unknown { param_type, value: value.to_vec() }])
}

#[test]
fn an_unknown_init_parameter_with_upper_bits_00_stops_processing_without_abort() {
    // §3.2.1 `00`: stop processing this parameter and do not process any further parameter of
    // the chunk; report nothing. The INIT is answered (no ABORT), and the addresses listed
    // after the parameter are not used: the server knows the client by its source only.
    let h = handshake_with_init_params(vec![Parameter::Unknown { param_type: 0x0123, value: vec![1, 2, 3, 4] }]);
    let acks = init_acks(&h);
    assert_eq!(acks.len(), 1);
    assert_eq!(unrecognized(&acks[0]), Vec::<Vec<u8>>::new());
    assert_eq!(h.assoc_ref(CLIENT).state(), State::Established);
    assert_eq!(h.assoc_ref(SERVER).state(), State::Established);
    assert_eq!(h.assoc_ref(SERVER).paths().len(), 1);
}

#[test]
fn an_unknown_init_parameter_with_upper_bits_01_stops_and_is_reported_in_the_init_ack() {
    // §3.2.1 `01`: stop as for `00`, and report it in the INIT ACK (§3.2.2). A `11` parameter
    // after it is not processed, so not reported either.
    let h = handshake_with_init_params(vec![
        Parameter::Unknown { param_type: 0x4123, value: vec![9; 5] },
        Parameter::Unknown { param_type: 0xc00f, value: vec![7; 4] },
    ]);
    let acks = init_acks(&h);
    assert_eq!(acks.len(), 1);
    assert_eq!(unrecognized(&acks[0]), vec![tlv(0x4123, &[9; 5])]);
    assert_eq!(h.assoc_ref(SERVER).state(), State::Established);
    assert_eq!(h.assoc_ref(SERVER).paths().len(), 1);
}

#[test]
fn unknown_init_parameters_with_upper_bit_1_are_skipped_and_those_with_11_reported() {
    // §3.2.1 `10` skip, `11` skip and report: processing goes on, so a `01` after them is
    // reported too and the client's addresses after it are ignored.
    let h = handshake_with_init_params(vec![
        Parameter::Unknown { param_type: 0x8000, value: vec![] },
        Parameter::Unknown { param_type: 0xc00f, value: vec![7; 4] },
        Parameter::Unknown { param_type: 0x4002, value: vec![] },
    ]);
    let acks = init_acks(&h);
    assert_eq!(acks.len(), 1);
    // §3.3.3.1: one Unrecognized Parameter per parameter reported.
    assert_eq!(unrecognized(&acks[0]), vec![tlv(0xc00f, &[7; 4]), tlv(0x4002, &[])]);
    assert_eq!(h.assoc_ref(SERVER).paths().len(), 1);
    // With only skipped parameters, the addresses count.
    let h = handshake_with_init_params(vec![Parameter::Unknown { param_type: 0x8000, value: vec![] }]);
    assert_eq!(h.assoc_ref(SERVER).state(), State::Established);
    assert_eq!(h.assoc_ref(SERVER).paths().len(), 2);
}

#[test]
fn an_unknown_init_ack_parameter_to_report_goes_in_an_error_bundled_with_the_cookie_echo() {
    // §3.2.2: the receiver of an INIT ACK reports unrecognized parameters in an ERROR chunk
    // bundled with its COOKIE ECHO (COOKIE ECHO first, §5.1).
    let mut h = Harness::new(Config::default(), Config::default(), 1, ms(10), 3);
    h.mangle = Some(Box::new(|bytes: &mut Vec<u8>| {
        let Ok(mut p) = Packet::parse(bytes) else { return };
        if let Some(Chunk::InitAck(ack)) = p.chunks.first_mut() {
            ack.params.push(Parameter::Unknown { param_type: 0x4777, value: vec![5; 3] });
            *bytes = p.emit();
        }
    }));
    h.connect();
    h.run_for(ms(100));
    assert_eq!(h.assoc_ref(CLIENT).state(), State::Established);
    let echo = h
        .sent
        .iter()
        .map(|(_, _, _, bytes)| Packet::parse(bytes).unwrap())
        .find(|p| matches!(p.chunks.first(), Some(Chunk::CookieEcho { .. })))
        .unwrap();
    assert_eq!(echo.chunks.len(), 2);
    let cause = sctp::wire::ErrorCause::UnrecognizedParameters { params: tlv(0x4777, &[5; 3]) };
    assert_eq!(echo.chunks[1], Chunk::Error { causes: vec![cause] });
}

/// The links the client's packets whose first chunk satisfies `f` went out on, in order.
fn client_links(h: &Harness, f: impl Fn(&Chunk) -> bool) -> Vec<usize> {
    h.sent
        .iter()
        .filter(|(_, side, _, bytes)| *side == CLIENT && Packet::parse(bytes).unwrap().chunks.first().is_some_and(&f))
        .map(|(_, _, link, _)| *link)
        .collect()
}

#[test]
fn init_retransmissions_rotate_over_the_peer_addresses_so_a_dead_primary_does_not_fail_the_handshake() {
    // §6.4 allows retransmitting to another destination; Linux and FreeBSD send the T1-init
    // retransmissions to the peer's other addresses in turn. The primary's link is down from
    // the start: the second INIT takes the other address and the association comes up.
    let mut h = Harness::new(Config::default(), Config::default(), 2, ms(10), 5);
    h.set_link(0, false);
    h.connect();
    h.run_for(Duration::from_secs(10));
    assert_eq!(h.assoc_ref(CLIENT).state(), State::Established);
    assert_eq!(h.assoc_ref(SERVER).state(), State::Established);
    assert_eq!(client_links(&h, |c| matches!(c, Chunk::Init(_))), vec![0, 1]);
    // The COOKIE ECHO goes where the INIT ACK came from.
    assert_eq!(client_links(&h, |c| matches!(c, Chunk::CookieEcho { .. })), vec![1]);
    // The address that never answered is not confirmed by the INIT ACK.
    let confirmed: Vec<bool> = h.assoc_ref(CLIENT).paths().values().map(|p| p.confirmed).collect();
    assert_eq!(confirmed, vec![false, true]);
    // Data flows (over the alternate, once the primary fails).
    h.apps[CLIENT] = harness::App { to_send: 10_000, msg_size: 1000, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(60));
    assert_eq!(h.apps[SERVER].received_bytes, 10_000);
}

#[test]
fn cookie_echo_retransmissions_rotate_over_the_peer_addresses() {
    // The primary answers the INIT, then its link breaks with the COOKIE ECHO on it: the
    // T1-cookie retransmission takes the other address.
    let mut h = Harness::new(Config::default(), Config::default(), 2, ms(10), 5);
    h.connect();
    h.run_for(ms(25));
    h.set_link(0, false);
    h.run_for(Duration::from_secs(10));
    assert_eq!(h.assoc_ref(CLIENT).state(), State::Established);
    assert_eq!(client_links(&h, |c| matches!(c, Chunk::Init(_))), vec![0]);
    assert_eq!(client_links(&h, |c| matches!(c, Chunk::CookieEcho { .. })), vec![0, 1]);
}
