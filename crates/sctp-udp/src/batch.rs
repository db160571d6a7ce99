//! Fewer system calls per packet on Linux: UDP generic segmentation offload on send
//! (`UDP_SEGMENT`, Linux 4.18) and generic receive offload (`UDP_GRO`, Linux 5.0).
//!
//! With a path MTU of 1500 a bulk transfer is a stream of equal-sized datagrams to one peer
//! address, and the cost of a datagram on loopback is mostly the system call and the
//! kernel's per-call work, not the bytes. Consecutive datagrams from one local address to one
//! destination, all of one size but the last (which may be shorter), leave in one
//! `sendmsg` carrying a `UDP_SEGMENT` control message: the kernel cuts them apart again, so
//! the peer receives ordinary datagrams (any SCTP-over-UDP stack can read them). A socket
//! with `UDP_GRO` receives such a train, when it arrives whole, in one `recvmsg` with the
//! segment size in a control message; the driver cuts it apart before the engine sees
//! anything. Where the kernel refuses either option, the driver sends and receives one
//! datagram per call as before. (QUIC stacks do the same: quinn-udp, msquic.)

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::RawFd;

/// `UDP_SEGMENT` and `UDP_GRO` (linux/udp.h).
const UDP_SEGMENT: libc::c_int = 103;
const UDP_GRO: libc::c_int = 104;

/// Most segments in one send (the kernel's limit, `UDP_MAX_SEGMENTS`, is 64 before Linux
/// 6.9 and 128 since).
pub(crate) const MAX_SEGMENTS: usize = 64;
/// Most bytes in one send: an IPv4 datagram's length field less the IPv4 and UDP headers.
pub(crate) const MAX_BYTES: usize = 65_535 - 20 - 8;

/// Datagrams waiting to leave together.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    /// Local address index and destination, when not empty.
    pub(crate) key: Option<(usize, SocketAddrV4)>,
    /// Segment size: the length of the first datagram.
    pub(crate) segment: usize,
    /// The datagrams, back to back.
    pub(crate) bytes: Vec<u8>,
    /// Datagrams in `bytes`.
    pub(crate) count: usize,
}

impl Batch {
    /// Whether a datagram of `len` bytes from `local` to `to` can join: same local address
    /// and destination, no longer than the segment size, the last one so far not shorter
    /// (only the final segment may be), within the limits.
    pub(crate) fn takes(&self, local: usize, to: SocketAddrV4, len: usize) -> bool {
        self.key == Some((local, to))
            && len <= self.segment
            && self.bytes.len() == self.count * self.segment
            && self.count < MAX_SEGMENTS
            && self.bytes.len() + len <= MAX_BYTES
    }

    /// Starts over with one datagram.
    pub(crate) fn start(&mut self, local: usize, to: SocketAddrV4, packet: &[u8]) {
        self.key = Some((local, to));
        self.segment = packet.len();
        self.bytes.clear();
        self.bytes.extend_from_slice(packet);
        self.count = 1;
    }

    /// Adds a datagram ([`Batch::takes`] said it may).
    pub(crate) fn push(&mut self, packet: &[u8]) {
        self.bytes.extend_from_slice(packet);
        self.count += 1;
    }

    /// The datagrams, one slice each.
    pub(crate) fn segments(&self) -> impl Iterator<Item = &[u8]> {
        self.bytes.chunks(self.segment.max(1))
    }

    /// Empties it (keeping the buffer).
    pub(crate) fn clear(&mut self) {
        self.key = None;
        self.bytes.clear();
        self.count = 0;
    }
}

/// Turns on receive offload and checks that segmentation offload is available; false if
/// the kernel refuses either (then the socket is used one datagram per call).
pub(crate) fn enable(fd: RawFd) -> bool {
    let one: libc::c_int = 1;
    let zero: libc::c_int = 0;
    let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `fd` is an open UDP socket; each option value is a c_int that outlives the
    // call, and `len` is its size.
    unsafe {
        libc::setsockopt(fd, libc::SOL_UDP, UDP_SEGMENT, std::ptr::from_ref(&zero).cast(), len) == 0
            && libc::setsockopt(fd, libc::SOL_UDP, UDP_GRO, std::ptr::from_ref(&one).cast(), len) == 0
    }
}

fn sockaddr(to: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: to.port().to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(to.ip().octets()) },
        sin_zero: [0; 8],
    }
}

/// Sends `bytes` to `to` as datagrams of `segment` bytes (the last may be shorter) in one
/// call.
pub(crate) fn send(fd: RawFd, to: SocketAddrV4, bytes: &[u8], segment: usize) -> io::Result<usize> {
    let mut addr = sockaddr(to);
    let mut iov = libc::iovec { iov_base: bytes.as_ptr().cast_mut().cast(), iov_len: bytes.len() };
    let seg = u16::try_from(segment).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // Room for one control message with a u16, aligned as the kernel wants it.
    let mut control = [0u64; 4];
    // SAFETY: every pointer in `msg` refers to a live local of the right size for the
    // call; CMSG_* compute offsets within `control`, which CMSG_SPACE(2) fits.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_name = std::ptr::from_mut(&mut addr).cast();
        msg.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(2) as usize;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_UDP;
        (*cmsg).cmsg_type = UDP_SEGMENT;
        (*cmsg).cmsg_len = libc::CMSG_LEN(2) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<u16>(), seg);
        let n = libc::sendmsg(fd, &msg, 0);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(n as usize)
    }
}

/// Receives into `buf`: the length, the sender, and the segment size if the kernel
/// coalesced several datagrams (`UDP_GRO`).
pub(crate) fn recv(fd: RawFd, buf: &mut [u8]) -> io::Result<(usize, SocketAddrV4, Option<usize>)> {
    // SAFETY: as in `send`; the kernel writes at most `msg_namelen` bytes of address and
    // `msg_controllen` bytes of control data, and the control messages are read only through
    // CMSG_* within what it reported.
    unsafe {
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
        let mut control = [0u64; 8];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_name = std::ptr::from_mut(&mut addr).cast();
        msg.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control);
        let n = libc::recvmsg(fd, &mut msg, 0);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut segment = None;
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_UDP && (*cmsg).cmsg_type == UDP_GRO {
                let size = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::c_int>());
                segment = usize::try_from(size).ok().filter(|&s| s > 0);
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
        let from = SocketAddrV4::new(Ipv4Addr::from(u32::from_be(addr.sin_addr.s_addr)), u16::from_be(addr.sin_port));
        Ok((n as usize, from, segment))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_takes_equal_segments_and_one_shorter_last() {
        let to = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 9);
        let mut b = Batch::default();
        b.start(0, to, &[1; 100]);
        assert!(b.takes(0, to, 100) && !b.takes(1, to, 100) && !b.takes(0, to, 101));
        b.push(&[2; 100]);
        assert!(b.takes(0, to, 40));
        b.push(&[3; 40]);
        assert!(!b.takes(0, to, 40), "nothing after a shorter segment");
        let lens: Vec<usize> = b.segments().map(<[u8]>::len).collect();
        assert_eq!(lens, vec![100, 100, 40]);
    }
}
