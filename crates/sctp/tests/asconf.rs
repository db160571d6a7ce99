//! AUTH (RFC 4895) and dynamic address reconfiguration (RFC 5061) between two endpoints:
//! signed chunks, ADD-IP + SET-PRIMARY moving traffic, refusals, T4-RTO retransmission, data
//! moved off a deleted destination, and unauthenticated or forged chunks discarded.
#![allow(clippy::unwrap_used)]

mod harness;

use harness::{addr, ms, Harness, CLIENT, PORTS, SERVER};
use sctp::wire::{Chunk, ChunkType, CommonHeader, HeaderView, Packet};
use sctp::{AddressRequest, Config, Endpoint, Event, PathId};
use simtime::Duration;

fn auth_config() -> Config {
    Config { auth: true, asconf: true, ..Config::default() }
}

/// A single-homed server reachable over both links, and a client with an interface on each
/// link of which only address 0 is in the association (address 1 is the one a handover
/// adds); the client uploads without end once connected.
fn single_homed_client(cfg: Config) -> Harness {
    let mut h = Harness::new(cfg.clone(), cfg.clone(), 2, ms(10), 5);
    for l in &mut h.links {
        l.rate_bps = 10_000_000;
    }
    h.replace_endpoint(CLIENT, Endpoint::new(cfg.clone(), vec![addr(CLIENT, 0)], PORTS[CLIENT], false, 5));
    h.replace_endpoint(SERVER, Endpoint::new(cfg, vec![addr(SERVER, 0)], PORTS[SERVER], true, 6));
    // The server's one address is at the end of both links: the client reaches it over
    // link 0, and its packets to the client's address 1 go over link 1.
    h.addrs[SERVER] = vec![addr(SERVER, 0), addr(SERVER, 0)];
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: u64::MAX, msg_size: 1000, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(ms(500));
    h
}

/// The chunk types of a packet, in order.
fn chunk_types(bytes: &[u8]) -> Vec<ChunkType> {
    HeaderView::new_checked(bytes).unwrap().chunks().flatten().map(|c| c.chunk_type).collect()
}

#[test]
fn auth_signs_the_listed_chunks_and_a_forged_packet_is_discarded() {
    let cfg = Config { auth: true, auth_chunks: vec![0, 3], ..Config::default() };
    let mut h = Harness::new(cfg.clone(), cfg, 1, ms(10), 3);
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: 200_000, msg_size: 1000, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(5));
    assert_eq!(h.apps[SERVER].received_bytes, 200_000);
    let mut signed = 0;
    for (_, _, _, bytes) in &h.sent {
        let types = chunk_types(bytes);
        for (i, t) in types.iter().enumerate() {
            if *t == ChunkType::DATA || *t == ChunkType::SACK {
                assert!(types[..i].contains(&ChunkType::AUTH), "{t:?} without AUTH before it: {types:?}");
                signed += 1;
            }
        }
    }
    assert!(signed > 200, "{signed}");
    assert_eq!(h.assoc_ref(SERVER).stats().auth_failures, 0);
    // Flip one byte of user data after the AUTH: the HMAC no longer matches (§6.3).
    h.mangle = Some(Box::new(|b: &mut Vec<u8>| {
        if chunk_types(b).first() == Some(&ChunkType::AUTH) && b.len() > 100 {
            let n = b.len() - 1;
            b[n] ^= 0x55;
            let crc = sctp::wire::packet_checksum(b);
            b[8..12].copy_from_slice(&crc.to_le_bytes());
        }
    }));
    h.apps[CLIENT].to_send = 50_000;
    let before = h.apps[SERVER].received_bytes;
    h.run_for(Duration::from_secs(2));
    assert_eq!(h.apps[SERVER].received_bytes, before, "forged DATA must not be delivered");
    assert!(h.assoc_ref(SERVER).stats().auth_failures > 0);
    // Every corrupted packet was dropped and repaired by retransmission: all 200 kB arrive.
    assert_eq!(h.apps[SERVER].received_bytes, 200_000);
    assert_eq!(h.assoc_ref(CLIENT).state(), sctp::State::Established);
}

#[test]
fn without_auth_no_auth_chunk_is_sent() {
    let mut h = Harness::new(Config::default(), Config::default(), 1, ms(10), 3);
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: 20_000, msg_size: 1000, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(2));
    assert!(h.sent.iter().all(|(_, _, _, b)| !chunk_types(b).contains(&ChunkType::AUTH)));
    assert!(!h.assoc_ref(CLIENT).asconf_enabled());
}

#[test]
fn add_ip_then_set_primary_moves_the_peers_traffic_to_the_new_address() {
    let mut h = single_homed_client(auth_config());
    // A download: the server sends to its primary destination, the client's address 0.
    h.apps[CLIENT] = harness::App { reading: true, ..Default::default() };
    h.apps[SERVER] = harness::App { to_send: u64::MAX, msg_size: 1000, ..Default::default() };
    h.run_for(ms(300));
    assert!(h.assoc_ref(CLIENT).asconf_enabled() && h.assoc_ref(SERVER).asconf_enabled());
    assert_eq!(h.assoc_ref(SERVER).paths().len(), 1);
    let new = addr(CLIENT, 1);
    let t0 = h.now;
    let now = h.now;
    h.assoc(CLIENT).request_address_change(now, AddressRequest::Add(new)).unwrap();
    h.assoc(CLIENT).request_address_change(now, AddressRequest::SetPrimary(new)).unwrap();
    // Not used before the peer acknowledges it (§4.1).
    assert!(!h.assoc_ref(CLIENT).local_addrs().contains(&new));
    assert_eq!(h.assoc_ref(CLIENT).local_source(), None);
    h.run_for(ms(500));
    assert!(h.assoc_ref(CLIENT).local_addrs().contains(&new));
    // Its packets now name the new address as their source.
    assert_eq!(h.assoc_ref(CLIENT).local_source(), Some(new));
    let acked: Vec<_> = h.events[CLIENT]
        .iter()
        .filter_map(|(_, e)| match e {
            Event::AsconfAcked { request, round_trip } => Some((*request, *round_trip)),
            _ => None,
        })
        .collect();
    assert_eq!(acked.len(), 2, "{acked:?}");
    assert_eq!(acked[0].0, AddressRequest::Add(new));
    // One 20 ms round trip plus the wait behind the upload's queued packets.
    assert!(acked[0].1 >= ms(20) && acked[0].1 < Duration::from_secs(1), "{:?}", acked[0].1);
    let server = h.assoc_ref(SERVER);
    assert_eq!(server.paths().len(), 2);
    let new_path = server.path_of(new).unwrap();
    assert_eq!(server.primary(), new_path);
    assert!(h.events[SERVER]
        .iter()
        .any(|(_, e)| matches!(e, Event::PeerAddressAdded { address, .. } if *address == new)));
    assert!(h.events[SERVER].iter().any(|(_, e)| matches!(e, Event::PeerPrimaryRequested { .. })));
    // The server's DATA now goes to the new address (link 1), and the download goes on.
    let late = t0 + ms(400);
    h.run_for(ms(500));
    let data_on = |l: usize| {
        h.sent
            .iter()
            .filter(|(t, side, link, b)| {
                *t > late && *side == SERVER && *link == l && chunk_types(b).contains(&ChunkType::DATA)
            })
            .count()
    };
    assert!(data_on(1) > 100, "{}", data_on(1));
    assert_eq!(data_on(0), 0);
    let received = h.apps[CLIENT].received_bytes;
    h.run_for(ms(200));
    assert!(h.apps[CLIENT].received_bytes > received + 100_000);
}

#[test]
fn deleting_the_last_address_is_refused() {
    let mut h = single_homed_client(auth_config());
    let now = h.now;
    h.assoc(CLIENT).request_address_change(now, AddressRequest::Delete(addr(CLIENT, 0))).unwrap();
    h.run_for(ms(300));
    let failed: Vec<_> = h.events[CLIENT]
        .iter()
        .filter_map(|(_, e)| match e {
            Event::AsconfFailed { request, cause } => Some((*request, *cause)),
            _ => None,
        })
        .collect();
    assert_eq!(failed, vec![(AddressRequest::Delete(addr(CLIENT, 0)), sctp::association::CAUSE_DELETE_LAST_ADDRESS)]);
    assert_eq!(h.assoc_ref(SERVER).paths().len(), 1);
    assert!(h.assoc_ref(CLIENT).local_addrs().contains(&addr(CLIENT, 0)));
    // A second request after the refusal: deleting an address the peer does not know.
    let now = h.now;
    h.assoc(CLIENT).request_address_change(now, AddressRequest::Delete(addr(CLIENT, 1))).unwrap();
    h.run_for(ms(300));
    assert!(h.events[CLIENT].iter().any(|(_, e)| matches!(e,
        Event::AsconfFailed { cause, .. } if *cause == sctp::association::CAUSE_UNRESOLVABLE_ADDRESS)));
}

#[test]
fn a_lost_asconf_is_retransmitted_on_t4_with_backoff() {
    let mut h = single_homed_client(auth_config());
    h.apps[CLIENT].to_send = 0;
    h.run_for(Duration::from_secs(2));
    let now = h.now;
    h.set_link(0, false);
    h.set_link(1, false);
    // Through the endpoint this time.
    let id = h.assoc[CLIENT].unwrap();
    h.eps[CLIENT].request_address_change(now, id, AddressRequest::Add(addr(CLIENT, 1))).unwrap();
    h.run_for(Duration::from_millis(3500));
    h.set_link(0, true);
    h.set_link(1, true);
    h.run_for(Duration::from_secs(5));
    let rtos: Vec<Duration> = h.events[CLIENT]
        .iter()
        .filter_map(|(_, e)| match e {
            Event::AsconfRetransmitted { rto, .. } => Some(*rto),
            _ => None,
        })
        .collect();
    assert!(rtos.len() >= 2, "{rtos:?}");
    assert!(rtos[1] > rtos[0], "T4 backs off: {rtos:?}");
    let t = h.event_times(CLIENT, |e| matches!(e, Event::AsconfRetransmitted { .. }));
    assert!(t[1] - t[0] >= rtos[0] - ms(1), "{t:?} {rtos:?}");
    // Counted against the association; acknowledged once the links are back.
    assert!(h.events[CLIENT].iter().any(|(_, e)| matches!(e, Event::AsconfAcked { .. })));
    assert_eq!(h.assoc_ref(CLIENT).error_count(), 0, "cleared by the ASCONF-ACK");
    assert_eq!(h.assoc_ref(SERVER).paths().len(), 2);
}

#[test]
fn data_outstanding_to_a_deleted_address_is_retransmitted_to_another() {
    let cfg = auth_config();
    let mut h = Harness::new(cfg.clone(), cfg, 2, ms(10), 9);
    for l in &mut h.links {
        l.rate_bps = 10_000_000;
    }
    h.connect();
    // The server sends to the client's address 0 (its primary).
    h.apps[SERVER] = harness::App { to_send: 400_000, msg_size: 1000, ..Default::default() };
    h.apps[CLIENT].reading = true;
    h.run_for(ms(200));
    // Link 0 breaks with data in flight on it; the client, reachable on address 1, deletes
    // address 0 (its ASCONF goes over link 1).
    h.set_link(0, false);
    h.assoc(CLIENT).set_primary(PathId::new(1));
    let now = h.now;
    h.assoc(CLIENT).request_address_change(now, AddressRequest::Delete(addr(CLIENT, 0))).unwrap();
    h.run_for(Duration::from_secs(10));
    assert!(h.events[SERVER].iter().any(|(_, e)| matches!(e, Event::PeerAddressRemoved { .. })));
    assert_eq!(h.assoc_ref(SERVER).paths().len(), 1);
    assert_eq!(h.apps[CLIENT].received_bytes, 400_000, "everything arrives over link 1");
    // No T3 timeout was needed on the deleted destination: its data was moved at once.
    assert!(!h.events[SERVER].iter().any(|(_, e)| matches!(e, Event::T3Timeout { path, .. } if path.get() == 0)));
}

#[test]
fn an_unauthenticated_asconf_is_discarded() {
    let mut h = single_homed_client(auth_config());
    let server_tag = h.assoc_ref(SERVER).local_tag();
    let before = h.assoc_ref(SERVER).stats().unauthenticated_discarded;
    let packet = Packet {
        header: CommonHeader { src_port: PORTS[CLIENT], dst_port: PORTS[SERVER], verification_tag: server_tag },
        chunks: vec![Chunk::Asconf {
            serial: 0,
            address: addr(CLIENT, 0),
            params: vec![sctp::wire::Parameter::AddIp { correlation: 1, address: "10.9.9.9".parse().unwrap() }],
        }],
    }
    .emit();
    let now = h.now;
    for serial_guess in 0..3u32 {
        let mut p = packet.clone();
        p[16..20].copy_from_slice(&serial_guess.to_be_bytes());
        let crc = sctp::wire::packet_checksum(&p);
        p[8..12].copy_from_slice(&crc.to_le_bytes());
        h.eps[SERVER].handle(now, addr(CLIENT, 0), addr(SERVER, 0), &p);
    }
    h.run_for(ms(100));
    let server = h.assoc_ref(SERVER);
    assert_eq!(server.stats().unauthenticated_discarded, before + 3);
    assert!(server.path_of("10.9.9.9".parse().unwrap()).is_none());
    assert!(!h.events[SERVER].iter().any(|(_, e)| matches!(e, Event::PeerAddressAdded { .. })));
}

#[test]
fn corrupted_packets_with_a_valid_crc_are_caught_by_auth_and_never_panic() {
    use rand::{Rng, SeedableRng};
    // DATA, SACK, ASCONF and ASCONF-ACK authenticated; packets are corrupted and their CRC32c
    // recomputed, so only AUTH stands between the corruption and the association.
    let cfg = Config { auth_chunks: vec![0, 3], ..auth_config() };
    let mut h = Harness::new(cfg.clone(), cfg, 2, ms(3), 31);
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
    h.mangle = Some(Box::new(move |bytes: &mut Vec<u8>| {
        if bytes.len() > 16 && rng.random::<f64>() < 0.1 {
            let i = rng.random_range(12..bytes.len());
            bytes[i] ^= 1 << rng.random_range(0..8);
            let crc = sctp::wire::packet_checksum(bytes);
            bytes[8..12].copy_from_slice(&crc.to_le_bytes());
        }
    }));
    h.connect();
    h.apps[CLIENT] = harness::App { to_send: 200_000, msg_size: 1000, ..Default::default() };
    h.apps[SERVER].reading = true;
    h.run_for(Duration::from_secs(2));
    for k in 0..6u8 {
        let now = h.now;
        let a = std::net::IpAddr::from([10, 7, 0, k]);
        let _ = h.assoc(CLIENT).request_address_change(now, AddressRequest::Add(a));
        let _ = h.assoc(CLIENT).request_address_change(now, AddressRequest::SetPrimary(addr(CLIENT, 1)));
        h.run_for(Duration::from_secs(3));
    }
    h.run_for(Duration::from_secs(60));
    for m in &h.apps[SERVER].received {
        let seq = u64::from_be_bytes(m.data[..8].try_into().unwrap());
        assert!(m.data[8..].iter().all(|&b| b == (seq % 251) as u8), "corrupted DATA delivered");
    }
    assert!(h.assoc_ref(SERVER).stats().auth_failures > 0);
    // Every corrupted packet was dropped and repaired by retransmission: all 200 kB arrive.
    assert_eq!(h.apps[SERVER].received_bytes, 200_000);
    assert_eq!(h.assoc_ref(CLIENT).state(), sctp::State::Established);
}
