//! The datagrams the engine hands its driver keep a destination's IPv4 address within one
//! 8-byte word (`Transmit` and `Datagram` are `repr(C)` for it): a driver reads the address
//! as one 4-byte value right after the engine wrote the datagram, and a load across a word
//! boundary cannot be served from the pending stores (BENCHMARKS.md, "Values moved where
//! the stores can hand them over").

use std::net::{IpAddr, Ipv4Addr};

use sctp::{Datagram, PathId, Transmit};

const DST: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));

/// Where the octets of `addr`, an IPv4 address inside `outer`, start in it.
fn octets_offset<T>(outer: &T, addr: &IpAddr) -> usize {
    let IpAddr::V4(v4) = addr else { panic!("an IPv4 address") };
    v4 as *const Ipv4Addr as usize - outer as *const T as usize
}

fn in_one_word(offset: usize) -> bool {
    offset / 8 == (offset + 3) / 8
}

#[test]
fn an_ipv4_destination_lies_within_one_word() {
    let t = Transmit { payload: Vec::new(), headroom: 0, remote: DST, local: None, ecn: 0, path: PathId::default() };
    let d = Datagram { payload: Vec::new(), headroom: 0, remote: DST, local: None, ecn: 0, assoc: None };
    assert!(in_one_word(octets_offset(&t, &t.remote)), "Transmit::remote at {}", octets_offset(&t, &t.remote));
    assert!(in_one_word(octets_offset(&d, &d.remote)), "Datagram::remote at {}", octets_offset(&d, &d.remote));
    assert!(!in_one_word(37), "the check tells a crossing address");
}
