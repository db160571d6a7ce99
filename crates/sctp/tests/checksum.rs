//! The checksum setting: with `Checksum::Skip` an endpoint sends its packets with zero in the
//! checksum field, otherwise the same packets, and accepts received packets whatever their
//! checksum field holds; with `Checksum::Compute` (the default, RFC 9260 §6.8) every packet
//! carries its CRC32c and a packet whose checksum does not match is discarded.

use std::net::{IpAddr, Ipv4Addr};

use sctp::wire::{packet_checksum, HeaderView};
use sctp::{Checksum, Config, Datagram, Endpoint};
use simtime::{Duration, Instant};

const A: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
const B: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));

/// What went on the wire and what arrived.
struct Exchange {
    /// Every datagram in the order sent, with the side that sent it, as sent.
    sent: Vec<(usize, Datagram)>,
    /// Bytes delivered to the server.
    delivered: usize,
    /// Packets each side discarded for a bad checksum.
    bad_checksum: [u64; 2],
}

/// A handshake and a 20 kB transfer in 1000-byte messages between two endpoints set to
/// `checksum`; `tamper` changes every packet on its way (after it is recorded as sent). The
/// client hands packets to [`Endpoint::handle`], the server to [`Endpoint::handle_in_place`].
fn exchange(checksum: Checksum, tamper: fn(&mut [u8])) -> Exchange {
    let mut eps = [
        Endpoint::new(Config::default(), vec![A], 5000, false, 1),
        Endpoint::new(Config::default(), vec![B], 6000, true, 2),
    ];
    // The client's association exists before the setting, the server's comes after it.
    let mut now = Instant::ZERO;
    let id = eps[0].connect(now, &[B], 6000);
    for ep in &mut eps {
        ep.set_checksum(checksum);
        assert_eq!(ep.checksum(), checksum);
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
                let mut bytes = d.packet().to_vec();
                tamper(&mut bytes);
                if side == 0 {
                    eps[1].handle_in_place(now, addrs[0], addrs[1], &mut bytes);
                } else {
                    eps[0].handle(now, addrs[1], addrs[0], &bytes);
                }
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
    let bad_checksum = [eps[0].stats().bad_checksum, eps[1].stats().bad_checksum];
    Exchange { sent, delivered, bad_checksum }
}

fn untouched(_: &mut [u8]) {}

/// Puts a wrong, non-zero value in the checksum field.
fn wrong_checksum(bytes: &mut [u8]) {
    let wrong = (packet_checksum(bytes) ^ 0x5A5A_5A5A) | 1;
    bytes[8..12].copy_from_slice(&wrong.to_le_bytes());
}

/// Zero in the checksum field.
fn zero_checksum(bytes: &mut [u8]) {
    bytes[8..12].fill(0);
}

/// The checksum field of a datagram's packet (`u32::MAX` if it has no common header).
fn stored(d: &Datagram) -> u32 {
    HeaderView::new_checked(d.packet()).map_or(u32::MAX, |v| v.checksum())
}

#[test]
fn compute_is_the_default_and_every_packet_carries_its_crc32c() {
    let ep = Endpoint::new(Config::default(), vec![A], 5000, false, 1);
    assert_eq!(ep.checksum(), Checksum::Compute);
    let run = exchange(Checksum::Compute, untouched);
    assert_eq!(run.delivered, 20_000);
    assert!(run.sent.len() > 20);
    for (side, d) in &run.sent {
        let view = HeaderView::new_checked(d.packet()).unwrap();
        assert!(view.checksum_ok(), "packet from side {side}");
        assert_ne!(view.checksum(), 0);
    }
}

#[test]
fn skip_sends_the_same_packets_with_zero_in_the_checksum_field() {
    let computed = exchange(Checksum::Compute, untouched);
    let skipped = exchange(Checksum::Skip, untouched);
    assert_eq!((computed.delivered, skipped.delivered), (20_000, 20_000));
    assert_eq!(computed.sent.len(), skipped.sent.len());
    // The INIT ACK (a stateless reply of the server's endpoint) is among them.
    assert!(skipped.sent.iter().any(|(side, d)| *side == 1 && d.assoc.is_none()));
    for ((side, c), (_, s)) in computed.sent.iter().zip(&skipped.sent) {
        assert_eq!(stored(s), 0, "packet from side {side}");
        let mut with_crc = s.packet().to_vec();
        let crc = packet_checksum(&with_crc);
        with_crc[8..12].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(with_crc, c.packet(), "the same packet from side {side}");
    }
}

#[test]
fn skip_accepts_packets_whatever_their_checksum_field_holds() {
    for tamper in [zero_checksum, wrong_checksum] {
        let run = exchange(Checksum::Skip, tamper);
        assert_eq!(run.delivered, 20_000);
        assert_eq!(run.bad_checksum, [0, 0]);
    }
}

#[test]
fn compute_discards_packets_with_a_wrong_or_zero_checksum() {
    for tamper in [zero_checksum, wrong_checksum] {
        let run = exchange(Checksum::Compute, tamper);
        assert_eq!(run.delivered, 0);
        // The server discards every INIT, so the client never hears back.
        assert!(run.bad_checksum[1] > 0);
        assert!(run.sent.iter().all(|(side, _)| *side == 0));
    }
}
