//! Headroom: an endpoint asked to leave room in front of its packets (for a driver's
//! lower-layer headers) sends exactly the packets it would send without, each behind that
//! many zero bytes; stateless replies have none.

use std::net::{IpAddr, Ipv4Addr};

use sctp::{Config, Datagram, Endpoint};
use simtime::{Duration, Instant};

const A: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
const B: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));

/// Every datagram of a handshake and a 20 kB transfer in 1000-byte messages, in the order
/// sent, with the side that sent it; the bytes delivered to the server.
fn exchange(headroom: usize) -> (Vec<(usize, Datagram)>, usize) {
    let mut eps = [
        Endpoint::new(Config::default(), vec![A], 5000, false, 1),
        Endpoint::new(Config::default(), vec![B], 6000, true, 2),
    ];
    // The client's association exists before the setting, the server's comes after it.
    let mut now = Instant::ZERO;
    let id = eps[0].connect(now, &[B], 6000);
    for ep in &mut eps {
        ep.set_headroom(headroom);
    }
    let addrs = [A, B];
    let (mut sent, mut delivered, mut queued) = (Vec::new(), 0, 0);
    for _ in 0..200 {
        now += Duration::from_millis(1);
        while queued < 20 && eps[0].send(id, 0, 0, false, &[7; 1000]).is_ok() {
            queued += 1;
        }
        for side in 0..2 {
            while let Some(d) = eps[side].poll_transmit(now) {
                eps[1 - side].handle(now, addrs[side], addrs[1 - side], d.packet());
                sent.push((side, d));
            }
            eps[side].handle_timeout(now);
        }
        let server: Vec<_> = eps[1].ids().collect();
        for s in server {
            while let Some(m) = eps[1].read(s) {
                delivered += m.data.len();
            }
        }
    }
    (sent, delivered)
}

#[test]
fn packets_built_after_headroom_are_the_same_packets() {
    let (plain, plain_delivered) = exchange(0);
    let (roomy, roomy_delivered) = exchange(20);
    assert_eq!((plain_delivered, roomy_delivered), (20_000, 20_000));
    assert_eq!(plain.len(), roomy.len());
    assert!(plain.iter().all(|(_, d)| d.headroom == 0));
    for ((side, p), (_, r)) in plain.iter().zip(&roomy) {
        assert_eq!(p.packet(), r.packet(), "same packet from side {side}");
        // The INIT ACK is a stateless reply of the server's endpoint: no headroom.
        let expected = if r.assoc.is_some() { 20 } else { 0 };
        assert_eq!(r.headroom, expected);
        assert!(r.payload[..r.headroom].iter().all(|&b| b == 0));
    }
}
