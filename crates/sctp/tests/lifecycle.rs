//! Stable identities: a PathId keeps naming its address when another address goes, and an
//! AssocId is never reused; closed associations leave their endpoint.

mod harness;

use harness::{addr, connected, ms, CLIENT, PORTS, SERVER};
use sctp::{AssocId, Config, Endpoint, Event, PathId};
use simtime::Duration;

const P0: PathId = PathId::new(0);
const P1: PathId = PathId::new(1);
const P2: PathId = PathId::new(2);

#[test]
fn a_restart_that_drops_an_address_moves_no_other_path() {
    let mut h = connected(3);
    h.apps[CLIENT].msg_size = 1000;
    h.apps[CLIENT].to_send = 20_000;
    h.apps[SERVER].reading = true;
    h.run_for(ms(200));
    h.assoc(SERVER).set_primary(P2);
    let sent_before = h.assoc_ref(SERVER).paths()[P2].stats.packets_sent;
    assert!(sent_before > 0);
    // The client comes back with only its first and third addresses: the new INIT lists
    // [C0, C2], so the server's path to C1 goes (§5.2.4 A).
    let (c0, c2) = (addr(CLIENT, 0), addr(CLIENT, 2));
    let fresh = Endpoint::new(Config::default(), vec![c0, c2], PORTS[CLIENT], false, 99);
    h.replace_endpoint(CLIENT, fresh);
    let t = h.now;
    let servers = h.addrs[SERVER].clone();
    let id = h.eps[CLIENT].connect(t, &servers, PORTS[SERVER]);
    h.assoc[CLIENT] = Some(id);
    h.run_for(ms(35));
    assert_eq!(h.event_times(SERVER, |e| matches!(e, Event::Restarted { .. })), vec![t + ms(30)]);
    let s = h.assoc_ref(SERVER);
    assert_eq!(s.paths().ids().collect::<Vec<_>>(), vec![P0, P2], "C1's id is left unused");
    assert!(s.paths().get(P1).is_none());
    assert_eq!((s.paths()[P0].remote, s.paths()[P2].remote), (c0, c2));
    assert_eq!(s.primary(), P2, "the primary stays on its path");
    assert!(s.paths()[P2].stats.packets_sent >= sent_before, "its counters go on");
    assert_eq!(s.path_of(c2), Some(P2));
    // Data flows again.
    h.apps[SERVER].msg_size = 500;
    h.apps[SERVER].to_send = 5_000;
    h.apps[CLIENT].reading = true;
    h.run_for(Duration::from_secs(2));
    assert_eq!(h.apps[CLIENT].received_bytes, 5_000);
    let s = h.assoc_ref(SERVER);
    assert!(s.paths().contains(s.data_path()));
    assert_eq!(
        s.paths().values().map(|p| p.stats.bytes_acked).sum::<u64>(),
        s.paths().values().map(|p| p.stats.bytes_sent).sum::<u64>()
    );
    assert_eq!(s.paths().id_bound(), 3);
}

#[test]
fn a_closed_association_leaves_the_endpoint_and_ids_are_never_reused() {
    let mut h = connected(1);
    assert_eq!(h.assoc[CLIENT], Some(AssocId::new(0)));
    let tag = h.assoc_ref(SERVER).local_tag();
    assert_eq!(h.eps[SERVER].association_by_tag(tag), Some(AssocId::new(0)));
    let now = h.now;
    h.assoc(CLIENT).shutdown(now);
    h.run_for(ms(100));
    assert_eq!(h.eps[SERVER].association_by_tag(tag), None);
    for side in [CLIENT, SERVER] {
        assert!(h.eps[side].is_empty(), "side {side}: the closed association was removed");
        assert!(h.eps[side].association(AssocId::new(0)).is_none());
        assert_eq!(h.closed[side].keys().copied().collect::<Vec<_>>(), vec![AssocId::new(0)]);
        assert_eq!(h.eps[side].poll_timeout(), None);
    }
    // A new association gets a new id on both sides; the old one is not found again.
    h.connect();
    h.assoc[SERVER] = None;
    h.run_for(ms(100));
    assert_eq!(h.assoc[CLIENT], Some(AssocId::new(1)));
    assert_eq!(h.assoc[SERVER], Some(AssocId::new(1)));
    assert_eq!(h.eps[SERVER].ids().collect::<Vec<_>>(), vec![AssocId::new(1)]);
    assert_eq!(h.assoc_ref(SERVER).state(), sctp::State::Established);
}

#[test]
fn a_finished_association_the_driver_does_not_take_is_dropped_at_the_next_input() {
    let mut h = connected(1);
    let now = h.now;
    h.assoc(CLIENT).abort(now);
    // Drain the client's output and events by hand, without taking the association.
    let abort = h.eps[CLIENT].poll_transmit(now).expect("the ABORT");
    assert_eq!(h.eps[CLIENT].poll_transmit(now), None);
    let a = h.eps[CLIENT].association_mut(AssocId::new(0)).expect("still there");
    while a.poll_event().is_some() {}
    assert!(a.is_finished());
    assert_eq!(h.eps[CLIENT].len(), 1, "readable until the next input");
    h.eps[CLIENT].handle_timeout(now);
    assert!(h.eps[CLIENT].is_empty());
    // The server's association, aborted, leaves its endpoint the same way; a packet from the
    // old peer address is now out of the blue.
    h.eps[SERVER].handle(now, addr(CLIENT, 0), addr(SERVER, 0), &abort.payload);
    let a = h.eps[SERVER].association_mut(AssocId::new(0)).expect("still there");
    while a.poll_event().is_some() {}
    assert_eq!(h.eps[SERVER].poll_transmit(now), None);
    assert!(h.eps[SERVER].poll_closed().is_some());
    assert!(h.eps[SERVER]
        .association_by_tag(abort.payload[4..8].iter().fold(0, |t, &b| t << 8 | u32::from(b)))
        .is_none());
}

/// Real sockets take the cookie secret, tags and initial TSNs from the OS CSPRNG: two
/// endpoints built alike pick different tags, and their associations still work.
#[test]
fn endpoints_with_os_entropy_choose_unpredictable_tags() {
    use sctp::Entropy;
    use simtime::Instant;
    let addr: std::net::IpAddr = "10.0.0.1".parse().unwrap();
    let peer: std::net::IpAddr = "10.0.0.2".parse().unwrap();
    let tag_of = |entropy| {
        let mut ep = Endpoint::with_entropy(Config::default(), vec![addr], 5000, false, entropy);
        let id = ep.connect(Instant::ZERO, &[peer], 5001);
        ep.association(id).unwrap().local_tag()
    };
    assert_eq!(tag_of(Entropy::Seeded(5)), tag_of(Entropy::Seeded(5)));
    // Two 32-bit tags from the OS collide with probability 2^-32 per try; three tries in a row
    // is 2^-96.
    assert!((0..3).any(|_| tag_of(Entropy::Os) != tag_of(Entropy::Os)));
}
