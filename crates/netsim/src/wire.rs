//! Real packet bytes: IPv4 (RFC 791) and UDP (RFC 768) headers.
//!
//! Every simulated packet carries a genuine IPv4 header and genuine transport bytes, so a
//! capture of the simulation opens in Wireshark like a capture of a real network. Only the few
//! fields the simulator acts on (length, ECN, TTL, protocol, addresses, ports) are read; reading
//! never panics on short or malformed input. Routers change a header in place (TTL, ECN) with
//! the RFC 1624 incremental checksum update.

use std::net::Ipv4Addr;

/// Length of an IPv4 header without options.
pub const IPV4_HEADER_LEN: usize = 20;
/// Length of a UDP header.
pub const UDP_HEADER_LEN: usize = 8;
/// IP protocol number of UDP.
pub const PROTO_UDP: u8 = 17;
/// IP protocol number of TCP.
pub const PROTO_TCP: u8 = 6;
/// IP protocol number of SCTP.
pub const PROTO_SCTP: u8 = 132;
/// Default TTL of packets a host originates.
pub const DEFAULT_TTL: u8 = 64;

/// Simulation-only bookkeeping that travels with a packet but is not part of its bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketMeta {
    /// Flow the packet belongs to (index into the network's flow table), for per-flow
    /// drop accounting; `u32::MAX` for packets of no registered flow.
    pub flow: u32,
    /// Unique id of the packet in this run (assigned when the packet enters the network).
    pub uid: u64,
}

/// A packet: IPv4 header plus payload, as bytes, with simulation metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// The IPv4 datagram, header first.
    pub bytes: Vec<u8>,
    /// Bookkeeping that is not on the wire.
    pub meta: PacketMeta,
}

/// An IPv4 header without options (RFC 791) for `transport_len` bytes of payload, with
/// its checksum.
fn ipv4_header(fields: Ipv4Fields, transport_len: usize) -> [u8; IPV4_HEADER_LEN] {
    let total = (IPV4_HEADER_LEN + transport_len).min(usize::from(u16::MAX)) as u16;
    let mut h = [0u8; IPV4_HEADER_LEN];
    h[0] = 0x45;
    h[2..4].copy_from_slice(&total.to_be_bytes());
    h[4..6].copy_from_slice(&fields.ident.to_be_bytes());
    h[6] = 0x40; // flags: DF; fragment offset 0
    h[8] = fields.ttl;
    h[9] = fields.protocol;
    h[12..16].copy_from_slice(&fields.src.octets());
    h[16..20].copy_from_slice(&fields.dst.octets());
    // The header checksum (RFC 791, RFC 1071) from the fields' 16-bit words, the checksum
    // field counting as zero: what `internet_checksum(&h, 0)` gives, without a loop over
    // the bytes (every packet a host sends pays for it).
    let (src, dst) = (u32::from(fields.src), u32::from(fields.dst));
    let mut sum = 0x4500
        + u32::from(total)
        + u32::from(fields.ident)
        + 0x4000
        + (u32::from(fields.ttl) << 8 | u32::from(fields.protocol))
        + (src >> 16)
        + (src & 0xffff)
        + (dst >> 16)
        + (dst & 0xffff);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    h[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    h
}

/// Flow id of packets that belong to no registered flow.
pub const NO_FLOW: u32 = u32::MAX;

/// Fields of an IPv4 header that a host fills in when it originates a datagram.
#[derive(Clone, Copy, Debug)]
pub struct Ipv4Fields {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// Transport protocol number.
    pub protocol: u8,
    /// Identification (per-host counter).
    pub ident: u16,
    /// Time to live.
    pub ttl: u8,
}

impl Packet {
    /// Build an IPv4 datagram around `transport` (a complete transport-layer segment).
    /// The Don't Fragment bit is set: transports are expected to respect the path MTU.
    pub fn ipv4(fields: Ipv4Fields, transport: &[u8], meta: PacketMeta) -> Packet {
        let mut bytes = Vec::with_capacity(IPV4_HEADER_LEN + transport.len());
        bytes.extend_from_slice(&ipv4_header(fields, transport.len()));
        bytes.extend_from_slice(transport);
        Packet { bytes, meta }
    }

    /// As [`Packet::ipv4`], taking the transport bytes by value and putting the header in
    /// front of them in the same buffer: no second buffer, and no allocation at all when the
    /// transport left [`IPV4_HEADER_LEN`] bytes of spare capacity.
    pub fn ipv4_around(fields: Ipv4Fields, mut transport: Vec<u8>, meta: PacketMeta) -> Packet {
        let len = transport.len();
        transport.resize(IPV4_HEADER_LEN + len, 0);
        transport.copy_within(..len, IPV4_HEADER_LEN);
        transport[..IPV4_HEADER_LEN].copy_from_slice(&ipv4_header(fields, len));
        Packet { bytes: transport, meta }
    }

    /// As [`Packet::ipv4_around`], for transport bytes that start `headroom` bytes into
    /// `buf`: with exactly [`IPV4_HEADER_LEN`] bytes of headroom the header is written there
    /// and nothing moves (an engine that builds its packets after that much room saves a
    /// copy of each); otherwise the transport bytes are moved to follow the header.
    pub fn ipv4_in_headroom(fields: Ipv4Fields, mut buf: Vec<u8>, headroom: usize, meta: PacketMeta) -> Packet {
        if headroom != IPV4_HEADER_LEN || buf.len() < IPV4_HEADER_LEN {
            buf.drain(..headroom.min(buf.len()));
            return Self::ipv4_around(fields, buf, meta);
        }
        let header = ipv4_header(fields, buf.len() - IPV4_HEADER_LEN);
        buf[..IPV4_HEADER_LEN].copy_from_slice(&header);
        Packet { bytes: buf, meta }
    }

    /// Length on the wire in bytes (IP header included).
    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True for a packet with no bytes at all.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// A checked view of the IPv4 header, or `None` if the bytes are not a valid IPv4 header.
    #[inline]
    pub fn ip(&self) -> Option<Ipv4View<'_>> {
        Ipv4View::new(&self.bytes)
    }

    /// Decrement the TTL when a router forwards the packet, updating the header checksum
    /// incrementally. Returns the new TTL, or `None` if the header is malformed.
    pub fn decrement_ttl(&mut self) -> Option<u8> {
        Ipv4View::new(&self.bytes)?;
        let ttl = self.bytes[8];
        if ttl == 0 {
            return Some(0);
        }
        // TTL shares its 16-bit word with the protocol number.
        let protocol = self.bytes[9];
        set_header_word(&mut self.bytes, 8, [ttl - 1, protocol]);
        Some(ttl - 1)
    }

    /// The ECN codepoint of the IPv4 header (RFC 3168 §5), or `None` if the header is malformed.
    #[inline]
    pub fn ecn(&self) -> Option<Ecn> {
        Some(self.ip()?.ecn())
    }

    /// Set the ECN codepoint (a sender declaring an ECN-capable transport, RFC 3168 §5),
    /// updating the header checksum incrementally. Returns `None` if the header is malformed.
    pub fn set_ecn(&mut self, ecn: Ecn) -> Option<()> {
        Ipv4View::new(&self.bytes)?;
        // The ECN field is the low two bits of the octet after version and IHL (RFC 3168 §5);
        // the DSCP above them is kept.
        let (version_ihl, tos) = (self.bytes[0], (self.bytes[1] & !ECN_MASK) | ecn as u8);
        set_header_word(&mut self.bytes, 0, [version_ihl, tos]);
        Some(())
    }

    /// Congestion Experienced, set by a router's queue instead of a drop (RFC 3168 §5): only an
    /// ECN-capable packet (ECT(0) or ECT(1)) is marked; a CE packet stays CE. Returns true if
    /// the packet now carries CE, false for a Not-ECT packet (which the queue must drop instead
    /// if it wants to signal congestion) or a malformed header.
    pub fn mark_ce(&mut self) -> bool {
        match self.ecn() {
            Some(Ecn::Ect0 | Ecn::Ect1) => self.set_ecn(Ecn::Ce).is_some(),
            Some(Ecn::Ce) => true,
            Some(Ecn::NotEct) | None => false,
        }
    }
}

/// Replace the 16-bit header word at `offset` (even, inside a checked header) by `new` and
/// update the header checksum incrementally (RFC 1624, eqn. 3: `HC' = ~(~HC + ~m + m')`), so
/// a router never sums the whole header again.
#[inline]
fn set_header_word(header: &mut [u8], offset: usize, new: [u8; 2]) {
    let old_word = u16::from_be_bytes([header[offset], header[offset + 1]]);
    let new_word = u16::from_be_bytes(new);
    header[offset..offset + 2].copy_from_slice(&new);
    let old_csum = u16::from_be_bytes([header[10], header[11]]);
    let mut sum = (!old_csum as u32) + (!old_word as u32) + new_word as u32;
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    header[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

/// Mask of the ECN field in the IPv4 TOS octet (RFC 3168 §5).
const ECN_MASK: u8 = 0b11;

/// The ECN codepoint of an IP header (RFC 3168 §5): two bits, `00` to `11`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Ecn {
    /// `00`: the transport is not ECN-capable (the default of every packet here).
    NotEct = 0b00,
    /// `01`: ECN-capable transport, ECT(1).
    Ect1 = 0b01,
    /// `10`: ECN-capable transport, ECT(0).
    Ect0 = 0b10,
    /// `11`: Congestion Experienced, set by a router.
    Ce = 0b11,
}

impl Ecn {
    /// The codepoint in the low two bits of `tos`.
    #[inline]
    pub fn from_tos(tos: u8) -> Ecn {
        match tos & ECN_MASK {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// True for ECT(0) and ECT(1), which routers treat alike (RFC 3168 §5).
    pub fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }
}

/// A checked, read-only view of an IPv4 header. Once constructed, no accessor panics.
#[derive(Clone, Copy, Debug)]
pub struct Ipv4View<'a> {
    bytes: &'a [u8],
    header_len: usize,
}

impl<'a> Ipv4View<'a> {
    /// Check that `bytes` starts with a plausible IPv4 header (version 4, IHL within the
    /// buffer) and return a view of it.
    #[inline]
    pub fn new(bytes: &'a [u8]) -> Option<Self> {
        let first = *bytes.first()?;
        let header_len = ((first & 0x0f) as usize) * 4;
        if first >> 4 != 4 || header_len < IPV4_HEADER_LEN || bytes.len() < header_len {
            return None;
        }
        Some(Ipv4View { bytes, header_len })
    }
    /// Source address.
    pub fn src(&self) -> Ipv4Addr {
        Ipv4Addr::new(self.bytes[12], self.bytes[13], self.bytes[14], self.bytes[15])
    }
    /// Destination address.
    #[inline]
    pub fn dst(&self) -> Ipv4Addr {
        Ipv4Addr::new(self.bytes[16], self.bytes[17], self.bytes[18], self.bytes[19])
    }
    /// The ECN codepoint (RFC 3168 §5).
    #[inline]
    pub fn ecn(&self) -> Ecn {
        Ecn::from_tos(self.bytes[1])
    }
    /// Time to live.
    pub fn ttl(&self) -> u8 {
        self.bytes[8]
    }
    /// Transport protocol number.
    pub fn protocol(&self) -> u8 {
        self.bytes[9]
    }
    /// The transport-layer bytes after the header.
    pub fn payload(&self) -> &'a [u8] {
        &self.bytes[self.header_len..]
    }
    /// Length of the header (where the payload starts).
    pub fn header_len(&self) -> usize {
        self.header_len
    }
    /// True if the header checksum verifies.
    pub fn checksum_ok(&self) -> bool {
        internet_checksum(&self.bytes[..self.header_len], 0) == 0
    }
}

/// A checked view of a UDP header and its payload.
#[derive(Clone, Copy, Debug)]
pub struct UdpView<'a> {
    bytes: &'a [u8],
}

impl<'a> UdpView<'a> {
    /// Check that `bytes` holds at least a UDP header.
    pub fn new(bytes: &'a [u8]) -> Option<Self> {
        (bytes.len() >= UDP_HEADER_LEN).then_some(UdpView { bytes })
    }
    /// Source port.
    pub fn src_port(&self) -> u16 {
        u16::from_be_bytes([self.bytes[0], self.bytes[1]])
    }
    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        u16::from_be_bytes([self.bytes[2], self.bytes[3]])
    }
    /// The datagram's payload.
    pub fn payload(&self) -> &'a [u8] {
        &self.bytes[UDP_HEADER_LEN..]
    }
}

/// Build a UDP datagram (header + payload) with its checksum over the IPv4 pseudo-header.
pub fn udp_datagram(src: Ipv4Addr, dst: Ipv4Addr, sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut seg = Vec::with_capacity(UDP_HEADER_LEN + payload.len());
    seg.extend_from_slice(&[0; UDP_HEADER_LEN]);
    seg.extend_from_slice(payload);
    write_udp_header(&mut seg, src, dst, sport, dport);
    seg
}

/// Fill in the header of the UDP datagram `seg` (its first [`UDP_HEADER_LEN`] bytes, the
/// payload following them), checksum over the IPv4 pseudo-header included (RFC 768), so a
/// datagram can be built where it will be sent from.
pub fn write_udp_header(seg: &mut [u8], src: Ipv4Addr, dst: Ipv4Addr, sport: u16, dport: u16) {
    let len = seg.len();
    seg[0..2].copy_from_slice(&sport.to_be_bytes());
    seg[2..4].copy_from_slice(&dport.to_be_bytes());
    seg[4..6].copy_from_slice(&(len as u16).to_be_bytes());
    seg[6..8].copy_from_slice(&[0, 0]);
    let csum = match internet_checksum(seg, pseudo_header_sum(src, dst, PROTO_UDP, len)) {
        0 => 0xffff, // RFC 768: a computed zero is sent as all ones
        c => c,
    };
    seg[6..8].copy_from_slice(&csum.to_be_bytes());
}

/// Sum of the IPv4 pseudo-header used by UDP and TCP checksums.
pub fn pseudo_header_sum(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, len: usize) -> u32 {
    let s = src.octets();
    let d = dst.octets();
    [
        u16::from_be_bytes([s[0], s[1]]),
        u16::from_be_bytes([s[2], s[3]]),
        u16::from_be_bytes([d[0], d[1]]),
        u16::from_be_bytes([d[2], d[3]]),
        protocol as u16,
        len as u16,
    ]
    .iter()
    .map(|&w| w as u32)
    .sum()
}

/// The Internet checksum (RFC 1071) of `data`, starting from a partial sum: the TCP engine's,
/// which every IPv4 header and UDP datagram here shares.
pub use tcp::wire::internet_checksum;

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> Ipv4Fields {
        Ipv4Fields {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 1, 2),
            protocol: PROTO_UDP,
            ident: 7,
            ttl: 64,
        }
    }

    #[test]
    fn ipv4_header_round_trips_with_valid_checksum() {
        let p = Packet::ipv4(fields(), &[1, 2, 3], PacketMeta::default());
        assert_eq!(p.len(), 23);
        let ip = p.ip().unwrap();
        assert_eq!((ip.src(), ip.dst(), ip.protocol(), ip.ttl()), (fields().src, fields().dst, 17, 64));
        assert_eq!(ip.payload(), &[1, 2, 3]);
        assert!(ip.checksum_ok());
        // Static bytes of the header as RFC 791 lays them out.
        assert_eq!(&p.bytes[..10], &[0x45, 0, 0, 23, 0, 7, 0x40, 0, 64, 17]);
    }

    #[test]
    fn header_in_front_of_an_owned_segment_gives_the_same_bytes() {
        let seg: Vec<u8> = (0..100).collect();
        let mut roomy = Vec::with_capacity(seg.len() + IPV4_HEADER_LEN);
        roomy.extend_from_slice(&seg);
        let expected = Packet::ipv4(fields(), &seg, PacketMeta::default());
        assert_eq!(Packet::ipv4_around(fields(), seg, PacketMeta::default()), expected);
        assert_eq!(Packet::ipv4_around(fields(), roomy, PacketMeta::default()), expected);
    }

    #[test]
    fn header_in_the_headroom_gives_the_same_bytes() {
        let seg: Vec<u8> = (0..100).collect();
        let expected = Packet::ipv4(fields(), &seg, PacketMeta::default());
        for headroom in [0, 8, IPV4_HEADER_LEN, 32] {
            let mut buf = vec![0xee; headroom];
            buf.extend_from_slice(&seg);
            let ptr = buf.as_ptr();
            let p = Packet::ipv4_in_headroom(fields(), buf, headroom, PacketMeta::default());
            assert_eq!(p, expected, "headroom {headroom}");
            if headroom == IPV4_HEADER_LEN {
                assert_eq!(p.bytes.as_ptr(), ptr, "written in place");
            }
        }
    }

    #[test]
    fn ttl_decrement_keeps_checksum_valid() {
        let mut p = Packet::ipv4(fields(), &[0; 100], PacketMeta::default());
        for expected in (0..64).rev() {
            assert_eq!(p.decrement_ttl(), Some(expected));
            assert!(p.ip().unwrap().checksum_ok(), "ttl {expected}");
        }
    }

    #[test]
    fn the_header_checksum_from_the_fields_is_the_checksum_of_the_bytes() {
        let mut x: u32 = 0x9e37_79b9;
        for i in 0..2000u32 {
            x = x.rotate_left(7) ^ x.wrapping_mul(0x85eb_ca6b) ^ i;
            let f = Ipv4Fields {
                src: Ipv4Addr::from(x),
                dst: Ipv4Addr::from(x.rotate_left(13) ^ 0xffff_0000),
                protocol: (x >> 3) as u8,
                ident: (x >> 11) as u16,
                ttl: (x >> 19) as u8,
            };
            let h = ipv4_header(f, (x % 70_000) as usize);
            let mut zeroed = h;
            zeroed[10..12].fill(0);
            assert_eq!(&h[10..12], &internet_checksum(&zeroed, 0).to_be_bytes(), "{f:?}");
            assert_eq!(internet_checksum(&h, 0), 0);
        }
    }

    #[test]
    fn ecn_codepoints_are_read_and_ce_is_set_with_a_valid_checksum() {
        let mut p = Packet::ipv4(fields(), &[0; 40], PacketMeta::default());
        // Every packet starts Not-ECT, and a router may not mark it (RFC 3168 §5).
        assert_eq!(p.ecn(), Some(Ecn::NotEct));
        assert!(!p.mark_ce());
        assert_eq!(p.ecn(), Some(Ecn::NotEct));
        for ect in [Ecn::Ect0, Ecn::Ect1] {
            p.set_ecn(ect).unwrap();
            assert_eq!((p.ecn(), p.ip().unwrap().checksum_ok()), (Some(ect), true));
            assert!(p.mark_ce());
            assert_eq!(p.ecn(), Some(Ecn::Ce));
            assert!(p.ip().unwrap().checksum_ok(), "{ect:?} -> CE");
            // Same header as one built with CE from the start (full checksum).
            let mut full = p.bytes[..IPV4_HEADER_LEN].to_vec();
            full[10..12].fill(0);
            let csum = internet_checksum(&full, 0);
            assert_eq!(&p.bytes[10..12], &csum.to_be_bytes());
            // CE stays CE.
            assert!(p.mark_ce());
            assert_eq!(p.ecn(), Some(Ecn::Ce));
        }
        // The DSCP bits beside the ECN field are kept.
        p.bytes[1] = 0b1011_1000;
        p.bytes[10..12].fill(0);
        let csum = internet_checksum(&p.bytes[..IPV4_HEADER_LEN], 0);
        p.bytes[10..12].copy_from_slice(&csum.to_be_bytes());
        p.set_ecn(Ecn::Ect0).unwrap();
        assert!(p.mark_ce());
        assert_eq!(p.bytes[1], 0b1011_1011);
        assert!(p.ip().unwrap().checksum_ok());
        // TTL and ECN updates interleave without breaking the checksum.
        assert_eq!(p.decrement_ttl(), Some(63));
        assert!(p.ip().unwrap().checksum_ok());
        assert_eq!(Packet { bytes: vec![0x45], meta: PacketMeta::default() }.ecn(), None);
        assert!(!Packet { bytes: vec![0x45; 3], meta: PacketMeta::default() }.mark_ce());
    }

    #[test]
    fn udp_checksum_verifies() {
        let (s, d) = (Ipv4Addr::new(1, 2, 3, 4), Ipv4Addr::new(5, 6, 7, 8));
        let seg = udp_datagram(s, d, 1000, 2000, b"hello");
        assert_eq!(internet_checksum(&seg, pseudo_header_sum(s, d, PROTO_UDP, seg.len())), 0);
        let v = UdpView::new(&seg).unwrap();
        assert_eq!((v.src_port(), v.dst_port(), v.payload()), (1000, 2000, &b"hello"[..]));
    }

    #[test]
    fn malformed_headers_are_rejected_not_panicking() {
        for bytes in [&[][..], &[0x45][..], &[0x65; 40][..], &[0x4f; 20][..], &[0x44; 30][..]] {
            assert!(Ipv4View::new(bytes).is_none(), "{bytes:?}");
        }
        assert!(UdpView::new(&[0; 7]).is_none());
        let mut p = Packet { bytes: vec![1, 2], meta: PacketMeta::default() };
        assert_eq!(p.decrement_ttl(), None);
    }

    #[test]
    fn random_bytes_never_panic_the_parsers() {
        use rand::{Rng, RngCore};
        let mut rng = crate::rng::RngTree::new(9).stream("fuzz");
        for _ in 0..200_000 {
            let len = rng.random_range(0..80);
            let mut bytes = vec![0u8; len];
            rng.fill_bytes(&mut bytes);
            if rng.random::<bool>() && len > 0 {
                bytes[0] = 0x40 | (bytes[0] & 0x0f); // often a plausible version nibble
            }
            if let Some(ip) = Ipv4View::new(&bytes) {
                let _ = (ip.src(), ip.dst(), ip.ttl(), ip.protocol(), ip.checksum_ok());
                if let Some(udp) = UdpView::new(ip.payload()) {
                    let _ = (udp.src_port(), udp.dst_port(), udp.payload().len());
                }
            }
            let mut p = Packet { bytes, meta: PacketMeta::default() };
            let _ = p.decrement_ttl();
            let _ = (p.ecn(), p.mark_ce());
        }
    }
}
