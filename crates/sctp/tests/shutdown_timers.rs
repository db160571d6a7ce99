//! Timers around the shutdown (RFC 9260 §9.2): a delayed SACK pending when the association
//! enters SHUTDOWN-ACK-SENT, a SHUTDOWN received in SHUTDOWN-PENDING, T2-shutdown expiries
//! counted against the destination.

mod harness;

use harness::{addr, connected, ms, Harness, CLIENT, PORTS, SERVER};
use sctp::wire::{Chunk, CommonHeader, Packet};
use sctp::{Config, Event, PathId, PathState, State, Timer};
use simtime::{Duration, Instant};

const P0: PathId = PathId::new(0);

/// A packet from `from`'s port to the other side's, under `tag`, with one chunk.
fn packet(from: usize, tag: u32, chunk: Chunk) -> Vec<u8> {
    let header = CommonHeader { src_port: PORTS[from], dst_port: PORTS[1 - from], verification_tag: tag };
    Packet { header, chunks: vec![chunk] }.emit()
}

/// Hands `packet` from `from`'s first address to the other side at `now`; returns the chunks
/// of what that side sends then.
fn deliver(h: &mut Harness, from: usize, packet: &[u8], now: Instant) -> Vec<Chunk> {
    let to = 1 - from;
    h.eps[to].handle(now, addr(from, 0), addr(to, 0), packet);
    sent_now(h, to, now)
}

/// The chunks of every packet `side` has to send at `now`.
fn sent_now(h: &mut Harness, side: usize, now: Instant) -> Vec<Chunk> {
    std::iter::from_fn(|| h.eps[side].poll_transmit(now))
        .flat_map(|d| Packet::parse(&d.payload).expect("a valid packet").chunks)
        .collect()
}

#[test]
fn a_delayed_sack_pending_in_shutdown_ack_sent_does_not_leave_a_deadline_in_the_past() {
    let mut h = connected(1);
    // One DATA packet: the server delays its SACK (200 ms, §6.2).
    let now = h.now;
    h.assoc(CLIENT).send(0, 0, false, &[1; 100]).unwrap();
    h.run_for(ms(15));
    assert_eq!(h.assoc_ref(SERVER).delivered_messages() + h.assoc_ref(SERVER).receive_buffer_used() as u64 / 100, 1);
    assert!(h.assoc_ref(SERVER).timer(Timer::DelayedSack).is_some_and(|t| t > h.now));
    // The client's SHUTDOWN arrives before the SACK went out: nothing of the server's is
    // outstanding, so it answers with SHUTDOWN ACK at once (§9.2).
    let t = now + ms(20);
    let tag = h.assoc_ref(SERVER).local_tag();
    let cum = h.assoc_ref(SERVER).highest_tsn_sent();
    let sent = deliver(&mut h, CLIENT, &packet(CLIENT, tag, Chunk::Shutdown { cumulative_tsn_ack: cum }), t);
    assert!(sent.contains(&Chunk::ShutdownAck), "{sent:?}");
    assert_eq!(h.assoc_ref(SERVER).state(), State::ShutdownAckSent);
    // Every timer left is in the future after each timeout handled, so a driver never spins.
    let mut at = t;
    for _ in 0..20 {
        let Some(next) = h.eps[SERVER].poll_timeout() else { break };
        assert!(next > at, "deadline {next:?} not after {at:?}");
        at = next;
        h.eps[SERVER].handle_timeout(at);
        sent_now(&mut h, SERVER, at);
        while h.assoc(SERVER).poll_event().is_some() {}
    }
}

#[test]
fn a_shutdown_in_shutdown_pending_is_answered_with_shutdown_ack_alone() {
    let mut h = connected(1);
    let now = h.now;
    h.assoc(CLIENT).send(0, 0, false, &[1; 100]).unwrap();
    let data = sent_now(&mut h, CLIENT, now);
    assert!(matches!(data.as_slice(), [Chunk::Data(_)]), "{data:?}");
    h.assoc(CLIENT).shutdown(now);
    assert_eq!(h.assoc_ref(CLIENT).state(), State::ShutdownPending);
    // The server shuts down too, and its SHUTDOWN acknowledges the client's data: the client
    // enters SHUTDOWN-RECEIVED (§9.2), finds everything acknowledged and sends SHUTDOWN ACK;
    // never a SHUTDOWN of its own, and no T5-shutdown-guard (only the SHUTDOWN sender runs
    // it).
    let tag = h.assoc_ref(CLIENT).local_tag();
    let cum = h.assoc_ref(CLIENT).highest_tsn_sent();
    let t = now + ms(20);
    let sent = deliver(&mut h, SERVER, &packet(SERVER, tag, Chunk::Shutdown { cumulative_tsn_ack: cum }), t);
    assert_eq!(sent, vec![Chunk::ShutdownAck]);
    let c = h.assoc_ref(CLIENT);
    assert_eq!(c.state(), State::ShutdownAckSent);
    assert_eq!(c.timer(Timer::T5), None);
    assert!(c.timer(Timer::T2).is_some());
}

#[test]
fn t2_shutdown_expiries_count_against_the_destination() {
    // Two paths; the server's SHUTDOWN ACKs are lost on path 0 (the primary): each T2 expiry
    // counts one error on that destination as well as on the association (§9.2, §8.2), so
    // after Path.Max.Retrans + 1 of them it is inactive and the SHUTDOWN ACK goes to the
    // other one, which completes the shutdown.
    let config = Config { path_max_retrans: 2, ..Config::default() };
    let mut h = Harness::new(config.clone(), config, 2, ms(10), 7);
    h.connect();
    h.run_for(ms(200));
    assert_eq!(h.assoc_ref(SERVER).primary(), P0);
    h.set_link(0, false);
    let now = h.now;
    let tag = h.assoc_ref(SERVER).local_tag();
    let cum = h.assoc_ref(SERVER).highest_tsn_sent();
    let sent = deliver(&mut h, CLIENT, &packet(CLIENT, tag, Chunk::Shutdown { cumulative_tsn_ack: cum }), now);
    assert_eq!(sent, vec![Chunk::ShutdownAck]);
    assert_eq!(h.assoc_ref(SERVER).state(), State::ShutdownAckSent);
    // The client is not told (its association stays ESTABLISHED and answers nothing); only
    // the server's counters matter here. Let time run.
    h.run_for(Duration::from_secs(30));
    let s = h.assoc_ref(SERVER);
    let inactive =
        h.event_times(SERVER, |e| matches!(e, Event::PathStateChanged { path: P0, to: PathState::Inactive, .. }));
    assert_eq!(inactive.len(), 1, "{:?}", h.events[SERVER]);
    assert_eq!(s.paths()[P0].state, PathState::Inactive);
    assert!(s.paths()[P0].error_count >= 3, "{}", s.paths()[P0].error_count);
    let p1_acks = h.sent.iter().filter(|(t, side, link, p)| {
        *t > now && *side == SERVER && *link == 1 && Packet::parse(p).unwrap().chunks.contains(&Chunk::ShutdownAck)
    });
    assert!(p1_acks.count() > 0, "the SHUTDOWN ACK went to the other destination");
}

#[test]
fn after_a_failover_the_shutdown_ack_answers_over_the_path_the_shutdown_came_on() {
    // The client fails over from path 0 (broken both ways) to path 1 and then shuts down:
    // its SHUTDOWN comes over path 1. The server, which only acknowledges data and so has
    // not found its primary (path 0) broken, answers over path 1 too (§6.4: a reply goes to
    // the address the chunk it answers came from), and both ends close at once. Sent to the
    // primary, the SHUTDOWN ACK would be lost until path 0 had failed Path.Max.Retrans + 1
    // T2-shutdown expiries (a minute with the RFC's timers).
    let fast = Config { rto_initial: ms(100), rto_min: ms(100), path_max_retrans: 1, ..Config::default() };
    let mut h = Harness::new(fast, Config::default(), 2, ms(10), 7);
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: 300_000, msg_size: 1000, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(ms(20));
    h.set_link(0, false);
    h.run_for(Duration::from_secs(10));
    assert_eq!(h.assoc_ref(CLIENT).paths()[P0].state, PathState::Inactive);
    assert_eq!(h.apps[SERVER].received_bytes, 300_000, "everything arrived over path 1");
    assert_eq!(h.assoc_ref(SERVER).primary(), P0);
    let now = h.now;
    h.assoc(CLIENT).shutdown(now);
    h.run_for(ms(500));
    for side in [CLIENT, SERVER] {
        let closed = h.event_times(side, |e| *e == Event::Closed { reason: sctp::CloseReason::Shutdown });
        assert_eq!(closed.len(), 1, "side {side}: {:?}", h.events[side].last());
    }
}
