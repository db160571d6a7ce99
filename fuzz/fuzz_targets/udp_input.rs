//! The real-mode driver's UDP input path as a server facing a network: any sequence of
//! datagrams, from a few source addresses and ports, handled with their outputs and timers,
//! never panics and keeps the driver's state bounded (no association without a valid COOKIE
//! ECHO, which random bytes cannot forge; never more than the association limit).
#![no_main]

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::Mutex;

use libfuzzer_sys::fuzz_target;
use sctp_udp::{Clock, LocalOptions, UdpDriver};

static DRIVER: Mutex<Option<UdpDriver>> = Mutex::new(None);

fuzz_target!(|data: &[u8]| {
    let mut guard = DRIVER.lock().unwrap_or_else(|e| e.into_inner());
    let d = guard.get_or_insert_with(|| {
        let opts = LocalOptions {
            addrs: vec![Ipv4Addr::LOCALHOST],
            udp_port: 0,
            listening: true,
            max_associations: 4,
            ..LocalOptions::default()
        };
        UdpDriver::new(sctp::Config::default(), &opts, Clock::start()).expect("bind")
    });
    // Each datagram: a byte choosing the source (port 9 + n, on the discard port's
    // neighbours: nothing listens), a length byte, the bytes.
    let mut rest = data;
    while let [src, len, tail @ ..] = rest {
        let n = usize::from(*len).min(tail.len());
        let mut datagram = tail[..n].to_vec();
        let from = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 9 + u16::from(*src % 4)));
        d.input(0, from, &mut datagram);
        d.flush();
        d.handle_timeout();
        while d.take_event().is_some() {}
        while d.take_closed().is_some() {}
        rest = &tail[n..];
    }
    assert!(d.endpoint().len() <= 4);
    assert!(d.peer_entries() <= 4 * 64);
});
