//! The UDP input path as a server facing a network: arbitrary and mutated datagrams never
//! panic and never create state; valid handshakes beyond the association limit are refused.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::time::Duration as StdDuration;

use proptest::prelude::*;
use sctp::{Config, Endpoint};
use sctp_udp::{Clock, LocalOptions, UdpDriver};
use simtime::Instant;

const A1: Ipv4Addr = Ipv4Addr::LOCALHOST;

fn server(max_associations: usize) -> UdpDriver {
    let opts = LocalOptions {
        addrs: vec![A1],
        udp_port: 0,
        sctp_port: 5001,
        listening: true,
        max_associations,
        ..LocalOptions::default()
    };
    UdpDriver::new(Config::default(), &opts, Clock::start()).expect("bind")
}

/// A client endpoint's INIT to the server, as bytes.
fn init_packet(seed: u64) -> Vec<u8> {
    let mut c = Endpoint::new(Config::default(), vec![IpAddr::V4(A1)], 40_000, false, seed);
    c.connect(Instant::ZERO, &[IpAddr::V4(A1)], 5001);
    c.poll_transmit(Instant::ZERO).expect("INIT").packet().to_vec()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_datagrams_create_no_state(data in proptest::collection::vec(any::<u8>(), 0..1600)) {
        let mut d = server(4);
        let from: SocketAddr = "127.0.0.1:9".parse().expect("addr");
        let mut buf = data.clone();
        let _ = d.input(0, from, &mut buf);
        d.flush();
        d.handle_timeout();
        prop_assert_eq!(d.endpoint().len(), 0);
        prop_assert_eq!(d.peer_entries(), 0);
    }

    #[test]
    fn mutated_inits_create_no_state(seed in any::<u64>(), flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8), cut in any::<usize>()) {
        let mut d = server(4);
        let from: SocketAddr = "127.0.0.1:9".parse().expect("addr");
        let mut p = init_packet(seed);
        for (at, x) in flips {
            let n = p.len();
            p[at % n] ^= x;
        }
        let len = p.len();
        p.truncate(len - cut % 16);
        let _ = d.input(0, from, &mut p);
        d.flush();
        prop_assert_eq!(d.endpoint().len(), 0);
        prop_assert_eq!(d.peer_entries(), 0);
    }
}

/// Runs one client's handshake against the server through real sockets; returns whether the
/// client's association was established.
fn handshake(d: &mut UdpDriver, seed: u64) -> bool {
    let sock = UdpSocket::bind((A1, 0)).expect("client socket");
    sock.set_read_timeout(Some(StdDuration::from_millis(500))).expect("timeout");
    let me = sock.local_addr().expect("addr");
    let mut c = Endpoint::new(Config::default(), vec![IpAddr::V4(A1)], 40_000 + seed as u16, false, seed);
    let id = c.connect(Instant::ZERO, &[IpAddr::V4(A1)], 5001);
    let mut buf = vec![0u8; 65_536];
    for _ in 0..4 {
        while let Some(out) = c.poll_transmit(Instant::ZERO) {
            let mut p = out.packet().to_vec();
            d.input(0, me, &mut p);
            d.flush();
        }
        while d.take_event().is_some() {}
        let Ok((n, _)) = sock.recv_from(&mut buf) else { break };
        c.handle(Instant::ZERO, IpAddr::V4(A1), IpAddr::V4(A1), &buf[..n]);
    }
    c.association(id).is_some_and(|a| a.state() == sctp::State::Established)
}

#[test]
fn handshakes_beyond_the_limit_are_refused_and_leave_no_state() {
    let mut d = server(3);
    let results: Vec<bool> = (1..=6).map(|seed| handshake(&mut d, seed)).collect();
    assert_eq!(results, [true, true, true, false, false, false]);
    assert_eq!(d.endpoint().len(), 3);
    assert_eq!(d.stats().rejected_over_limit, 3);
    // Each accepted association keeps one peer entry; the refused ones none.
    assert_eq!(d.peer_entries(), 3);
}

#[test]
fn the_encapsulation_port_is_learnt_only_from_packets_that_pass_the_tag_check() {
    let mut d = server(4);
    let sock = UdpSocket::bind((A1, 0)).expect("client socket");
    sock.set_read_timeout(Some(StdDuration::from_millis(500))).expect("timeout");
    let me = sock.local_addr().expect("addr");
    let mut c = Endpoint::new(Config::default(), vec![IpAddr::V4(A1)], 40_100, false, 7);
    let cid = c.connect(Instant::ZERO, &[IpAddr::V4(A1)], 5001);
    let mut buf = vec![0u8; 65_536];
    for _ in 0..4 {
        while let Some(out) = c.poll_transmit(Instant::ZERO) {
            d.input(0, me, &mut out.packet().to_vec());
            d.flush();
        }
        let Ok((n, _)) = sock.recv_from(&mut buf) else { break };
        c.handle(Instant::ZERO, IpAddr::V4(A1), IpAddr::V4(A1), &buf[..n]);
    }
    let id = d.endpoint().ids().next().expect("an association");
    let peer = IpAddr::V4(A1);
    assert_eq!(d.remote_udp_port(id, peer), Some(me.port()));
    // A packet of the association with the wrong verification tag, from another port: its
    // port is not learnt (RFC 6951 §5.4).
    c.send(cid, 0, 0, false, b"hello").expect("send");
    let good = c.poll_transmit(Instant::ZERO).expect("DATA").packet().to_vec();
    let mut bad = good.clone();
    bad[4] ^= 0xff;
    let crc = sctp::wire::packet_checksum(&bad);
    bad[8..12].copy_from_slice(&crc.to_le_bytes());
    let spoofed = SocketAddr::from((A1, 9));
    assert_eq!(d.input(0, spoofed, &mut bad), Some(id));
    d.flush();
    assert_eq!(d.remote_udp_port(id, peer), Some(me.port()));
    // The same packet with the right tag from a new port (a NAT rebinding) moves the port.
    let moved = SocketAddr::from((A1, 10));
    assert_eq!(d.input(0, moved, &mut good.clone()), Some(id));
    d.flush();
    assert_eq!(d.remote_udp_port(id, peer), Some(10));
}
