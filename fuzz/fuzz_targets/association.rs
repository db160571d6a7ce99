//! An established association receives arbitrary chunks: the input becomes the chunk bytes
//! of a packet with the right ports, verification tag and CRC32c, so it passes the
//! endpoint's checks (RFC 9260 §8.5) and reaches the association's state machine, which
//! must never panic, whatever it does with the chunks. Time then runs on so timers fire;
//! after each `handle_timeout(now)` no deadline may be at or before `now`.
//!
//! The input's first byte picks variations: bit 0 puts tag 0 in the header (so an INIT
//! reaches the handling of an INIT for an existing association, §5.2), bit 1 restarts the
//! client first (a fresh client endpoint connects again, §5.2.4 A) and sends the chunks under
//! the restarted association's tag, bit 2 turns ECN on at both ends (RFC 9260 Appendix A:
//! the chunks may include ECNE and CWR), bit 3 delivers the packet with the CE codepoint, bit 4
//! turns AUTH and ASCONF on at both ends (RFC 4895, RFC 5061: AUTH, ASCONF and ASCONF-ACK
//! chunks reach the association, which must drop the unauthenticated ones) and bit 5 has the
//! client ask to add an address and make it the primary before the chunks arrive, so an
//! ASCONF is outstanding and T4-RTO runs.
#![no_main]

use std::net::{IpAddr, Ipv4Addr};

use libfuzzer_sys::fuzz_target;
use sctp::wire::packet_checksum;
use sctp::{AddressRequest, Config, Endpoint};
use simtime::{Duration, Instant};

const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
const SERVER: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));

/// Delivers every pending datagram between the two endpoints until both are quiet; returns
/// the last packet the client sent to the server.
fn exchange(now: Instant, client: &mut Endpoint, server: &mut Endpoint) -> Option<Vec<u8>> {
    let mut last = None;
    for _ in 0..64 {
        let mut moved = false;
        while let Some(d) = client.poll_transmit(now) {
            server.handle(now, CLIENT, SERVER, &d.payload);
            last = Some(d.payload);
            moved = true;
        }
        while let Some(d) = server.poll_transmit(now) {
            client.handle(now, SERVER, CLIENT, &d.payload);
            moved = true;
        }
        if !moved {
            break;
        }
    }
    last
}

fuzz_target!(|input: &[u8]| {
    let Some((&mode, data)) = input.split_first() else { return };
    let mut now = Instant::ZERO;
    let extensions = mode & 16 != 0;
    let config = Config { ecn: mode & 4 != 0, auth: extensions, asconf: extensions, ..Config::default() };
    let mut client = Endpoint::new(config.clone(), vec![CLIENT], 5001, false, 1);
    let mut server = Endpoint::new(config.clone(), vec![SERVER], 5000, true, 2);
    let id = client.connect(now, &[SERVER], 5000);
    let Some(mut header_from) = exchange(now, &mut client, &mut server) else { return };
    if let Some(a) = client.association_mut(id) {
        let _ = a.send(0, 0, false, &[7; 3000]);
    }
    exchange(now, &mut client, &mut server);
    if mode & 32 != 0 {
        if let Some(a) = client.association_mut(id) {
            let new = IpAddr::V4(Ipv4Addr::new(10, 0, 1, 1));
            let _ = a.request_address_change(now, AddressRequest::Add(new));
            let _ = a.request_address_change(now, AddressRequest::SetPrimary(new));
        }
        // The ASCONF stays outstanding: the server never sees it.
        while client.poll_transmit(now).is_some() {}
    }
    if mode & 2 != 0 {
        client = Endpoint::new(config.clone(), vec![CLIENT], 5001, false, 3);
        let id = client.connect(now, &[SERVER], 5000);
        let Some(last) = exchange(now, &mut client, &mut server) else { return };
        header_from = last;
        if let Some(a) = client.association_mut(id) {
            let _ = a.send(0, 0, false, &[7; 3000]);
        }
        exchange(now, &mut client, &mut server);
    }

    // The client's packets carry the server's verification tag: reuse its common header.
    let mut packet = header_from[..12].to_vec();
    packet.extend_from_slice(data);
    if mode & 1 != 0 {
        packet[4..8].copy_from_slice(&[0; 4]);
    }
    packet[8..12].copy_from_slice(&[0; 4]);
    let crc = packet_checksum(&packet);
    packet[8..12].copy_from_slice(&crc.to_le_bytes());
    let ecn = if mode & 8 != 0 { 3 } else { 0 };
    server.handle_in_place_ecn(now, CLIENT, SERVER, &mut packet, ecn);
    for _ in 0..32 {
        exchange(now, &mut client, &mut server);
        let Some(next) = server.poll_timeout().into_iter().chain(client.poll_timeout()).min() else { break };
        now = next.max(now + Duration::from_millis(1));
        server.handle_timeout(now);
        client.handle_timeout(now);
        // The timer-table invariant: after handle_timeout(now) nothing is due at `now`.
        for ep in [&server, &client] {
            assert!(ep.poll_timeout().is_none_or(|t| t > now), "a deadline at or before {now:?} after handle_timeout");
        }
    }
});
