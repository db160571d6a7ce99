//! TCP segment format (RFC 9293 §3.1) with the options sctpsim models: MSS (RFC 9293 §3.2),
//! window scale and timestamps (RFC 7323), SACK-permitted and SACK (RFC 2018).
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |          Source Port          |       Destination Port        |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                        Sequence Number                        |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                    Acknowledgment Number                      |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |  Data |       |C|E|U|A|P|R|S|F|                               |
//! | Offset| Rsrvd |W|C|R|C|S|S|Y|I|            Window             |
//! |       |       |R|E|G|K|H|T|N|N|                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |           Checksum            |         Urgent Pointer        |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                           [Options]                           |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                                                               :
//! :                             Data                              :
//! :                                                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! Two levels, as in smoltcp: [`TcpView`] checks the lengths once and then reads fields
//! without panicking; [`TcpRepr`] is the typed segment with [`TcpRepr::parse`],
//! [`TcpRepr::emit`] and [`TcpRepr::buffer_len`]. The checksum covers the IPv4 pseudo-header
//! (RFC 9293 §3.1), so parse and emit take the two addresses.

use std::net::Ipv4Addr;

use crate::seq::SeqNumber;

/// Length of the TCP header without options.
pub const HEADER_LEN: usize = 20;
/// Most option bytes a header can carry (data offset 15 words).
pub const MAX_OPTIONS_LEN: usize = 40;
/// IP protocol number of TCP.
pub const PROTO_TCP: u8 = 6;

/// Why bytes are not a valid TCP segment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Fewer bytes than the fixed header or the data offset needs.
    #[error("segment truncated: need {need} bytes, have {have}")]
    Truncated {
        /// Bytes needed.
        need: usize,
        /// Bytes available.
        have: usize,
    },
    /// The data offset is below 5 words.
    #[error("data offset {0} words is below the minimum of 5")]
    BadDataOffset(u8),
    /// An option's length byte is inconsistent with its kind or runs past the header.
    #[error("option kind {kind} has bad length {length}")]
    BadOption {
        /// Option kind.
        kind: u8,
        /// Its length byte (0 when missing).
        length: u8,
    },
    /// The checksum over the pseudo-header and segment does not verify.
    #[error("checksum mismatch")]
    Checksum,
}

/// Control bits (RFC 9293 §3.1, with CWR and ECE from RFC 3168 §6.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags(pub u8);

impl Flags {
    /// No more data from sender.
    pub const FIN: u8 = 0x01;
    /// Synchronize sequence numbers.
    pub const SYN: u8 = 0x02;
    /// Reset the connection.
    pub const RST: u8 = 0x04;
    /// Push function.
    pub const PSH: u8 = 0x08;
    /// Acknowledgment field is significant.
    pub const ACK: u8 = 0x10;
    /// Urgent pointer field is significant.
    pub const URG: u8 = 0x20;
    /// ECN-Echo (RFC 3168 §6.1): in a SYN, ECN-capable; otherwise, a CE mark was received.
    pub const ECE: u8 = 0x40;
    /// Congestion Window Reduced (RFC 3168 §6.1.2).
    pub const CWR: u8 = 0x80;

    /// True if every bit of `bits` is set.
    pub fn has(self, bits: u8) -> bool {
        self.0 & bits == bits
    }
}

/// The ECN field of the IP header that carries a segment (RFC 3168 §5): the driver reads it
/// on arrival ([`crate::Connection::handle_segment_ecn`]) and writes it on departure
/// ([`crate::Connection::poll_transmit_ecn`]). The discriminants are the field's two bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum Ecn {
    /// Not ECN-Capable Transport (`00`).
    #[default]
    NotEct = 0b00,
    /// ECN-Capable Transport, ECT(1) (`01`).
    Ect1 = 0b01,
    /// ECN-Capable Transport, ECT(0) (`10`).
    Ect0 = 0b10,
    /// Congestion Experienced (`11`).
    Ce = 0b11,
}

impl Ecn {
    /// The codepoint in the low two bits of `bits` (the IPv4 TOS byte or the bare field).
    pub fn from_bits(bits: u8) -> Ecn {
        match bits & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
}

/// A checked view of a TCP segment. Once built, no accessor panics.
#[derive(Clone, Copy, Debug)]
pub struct TcpView<'a> {
    bytes: &'a [u8],
    header_len: usize,
}

impl<'a> TcpView<'a> {
    /// Check the fixed header and the data offset against the buffer length.
    pub fn new(bytes: &'a [u8]) -> Result<Self, WireError> {
        if bytes.len() < HEADER_LEN {
            return Err(WireError::Truncated { need: HEADER_LEN, have: bytes.len() });
        }
        let offset = bytes[12] >> 4;
        if offset < 5 {
            return Err(WireError::BadDataOffset(offset));
        }
        let header_len = offset as usize * 4;
        if bytes.len() < header_len {
            return Err(WireError::Truncated { need: header_len, have: bytes.len() });
        }
        Ok(TcpView { bytes, header_len })
    }
    /// Source port.
    pub fn src_port(&self) -> u16 {
        u16::from_be_bytes([self.bytes[0], self.bytes[1]])
    }
    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        u16::from_be_bytes([self.bytes[2], self.bytes[3]])
    }
    /// Sequence number.
    pub fn seq(&self) -> SeqNumber {
        SeqNumber(u32::from_be_bytes([self.bytes[4], self.bytes[5], self.bytes[6], self.bytes[7]]))
    }
    /// Acknowledgment number (meaningful only with ACK set).
    pub fn ack(&self) -> SeqNumber {
        SeqNumber(u32::from_be_bytes([self.bytes[8], self.bytes[9], self.bytes[10], self.bytes[11]]))
    }
    /// Control bits.
    pub fn flags(&self) -> Flags {
        Flags(self.bytes[13])
    }
    /// Window field (unscaled).
    pub fn window(&self) -> u16 {
        u16::from_be_bytes([self.bytes[14], self.bytes[15]])
    }
    /// Checksum field.
    pub fn checksum(&self) -> u16 {
        u16::from_be_bytes([self.bytes[16], self.bytes[17]])
    }
    /// Option bytes.
    pub fn options(&self) -> &'a [u8] {
        &self.bytes[HEADER_LEN..self.header_len]
    }
    /// Data after the header.
    pub fn payload(&self) -> &'a [u8] {
        &self.bytes[self.header_len..]
    }
    /// True if the checksum verifies for a segment from `src` to `dst`.
    pub fn checksum_ok(&self, src: Ipv4Addr, dst: Ipv4Addr) -> bool {
        internet_checksum(self.bytes, pseudo_header_sum(src, dst, self.bytes.len())) == 0
    }
}

/// The options sctpsim reads and writes. Unknown options are skipped on parse.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpOptions {
    /// Maximum segment size (RFC 9293 §3.7.1), only in SYNs.
    pub mss: Option<u16>,
    /// Window scale shift count (RFC 7323 §2.2), only in SYNs.
    pub window_scale: Option<u8>,
    /// SACK-permitted (RFC 2018 §2), only in SYNs.
    pub sack_permitted: bool,
    /// Timestamps: (TSval, TSecr) (RFC 7323 §3.2).
    pub timestamps: Option<(u32, u32)>,
    /// SACK blocks (left edge, right edge) (RFC 2018 §3); `sack_len` of them are valid.
    pub sack: [(SeqNumber, SeqNumber); 4],
    /// Number of valid entries in `sack`.
    pub sack_len: u8,
}

impl TcpOptions {
    /// The valid SACK blocks.
    pub fn sack_blocks(&self) -> &[(SeqNumber, SeqNumber)] {
        &self.sack[..self.sack_len.min(4) as usize]
    }

    /// Parse the option bytes of a header (RFC 9293 §3.2: kind 0 ends the list, kind 1 is
    /// padding, every other kind has a length byte counting kind and length).
    pub fn parse(mut bytes: &[u8]) -> Result<TcpOptions, WireError> {
        let mut o = TcpOptions::default();
        while let Some(&kind) = bytes.first() {
            match kind {
                0 => break,
                1 => {
                    bytes = &bytes[1..];
                    continue;
                }
                _ => {}
            }
            let length = *bytes.get(1).ok_or(WireError::BadOption { kind, length: 0 })?;
            let len = length as usize;
            if len < 2 || len > bytes.len() {
                return Err(WireError::BadOption { kind, length });
            }
            let body = &bytes[2..len];
            let bad = WireError::BadOption { kind, length };
            match kind {
                2 => o.mss = Some(u16::from_be_bytes(body.try_into().map_err(|_| bad)?)),
                3 => {
                    let [shift] = body else { return Err(bad) };
                    o.window_scale = Some(*shift);
                }
                4 if body.is_empty() => o.sack_permitted = true,
                4 => return Err(bad),
                5 => {
                    if body.is_empty() || !body.len().is_multiple_of(8) || body.len() > 32 {
                        return Err(bad);
                    }
                    for (i, b) in body.chunks_exact(8).enumerate() {
                        let l = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                        let r = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
                        o.sack[i] = (SeqNumber(l), SeqNumber(r));
                    }
                    o.sack_len = (body.len() / 8) as u8;
                }
                8 => {
                    if body.len() != 8 {
                        return Err(bad);
                    }
                    let v = u32::from_be_bytes([body[0], body[1], body[2], body[3]]);
                    let e = u32::from_be_bytes([body[4], body[5], body[6], body[7]]);
                    o.timestamps = Some((v, e));
                }
                _ => {} // unknown: skipped (RFC 9293 §3.2, "MUST be prepared to handle an illegal option length")
            }
            bytes = &bytes[len..];
        }
        Ok(o)
    }

    /// Bytes these options take when emitted, padded to a multiple of four.
    pub fn buffer_len(&self) -> usize {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        if self.window_scale.is_some() {
            n += 4; // NOP + 3
        }
        if self.timestamps.is_some() {
            n += 12; // (NOP NOP | SACK-permitted) + 10
        } else if self.sack_permitted {
            n += 4; // NOP NOP + 2
        }
        if self.sack_len > 0 {
            n += 4 + 8 * self.sack_len.min(4) as usize; // NOP NOP + 2 + blocks
        }
        n
    }

    /// Write the options into `out` (exactly `buffer_len()` bytes), in the layout common
    /// stacks use so that every option is 4-byte aligned.
    pub fn emit(&self, out: &mut Vec<u8>) {
        if let Some(mss) = self.mss {
            out.extend_from_slice(&[2, 4]);
            out.extend_from_slice(&mss.to_be_bytes());
        }
        if let Some(shift) = self.window_scale {
            out.extend_from_slice(&[1, 3, 3, shift]);
        }
        if let Some((v, e)) = self.timestamps {
            out.extend_from_slice(if self.sack_permitted { &[4, 2] } else { &[1, 1] });
            out.extend_from_slice(&[8, 10]);
            out.extend_from_slice(&v.to_be_bytes());
            out.extend_from_slice(&e.to_be_bytes());
        } else if self.sack_permitted {
            out.extend_from_slice(&[1, 1, 4, 2]);
        }
        if self.sack_len > 0 {
            let blocks = self.sack_blocks();
            out.extend_from_slice(&[1, 1, 5, 2 + 8 * blocks.len() as u8]);
            for (l, r) in blocks {
                out.extend_from_slice(&l.0.to_be_bytes());
                out.extend_from_slice(&r.0.to_be_bytes());
            }
        }
    }
}

/// A typed TCP segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpRepr<'a> {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: SeqNumber,
    /// Acknowledgment number; `Some` exactly when the ACK bit is set.
    pub ack: Option<SeqNumber>,
    /// Control bits other than ACK (SYN, FIN, RST, PSH, ...).
    pub flags: Flags,
    /// Window field (unscaled, as on the wire).
    pub window: u16,
    /// Options.
    pub options: TcpOptions,
    /// Data.
    pub payload: &'a [u8],
}

impl<'a> TcpRepr<'a> {
    /// Parse and verify the checksum of a segment sent from `src` to `dst`.
    pub fn parse(bytes: &'a [u8], src: Ipv4Addr, dst: Ipv4Addr) -> Result<TcpRepr<'a>, WireError> {
        let v = TcpView::new(bytes)?;
        if !v.checksum_ok(src, dst) {
            return Err(WireError::Checksum);
        }
        Self::parse_view(&v)
    }

    /// Parse without verifying the checksum.
    pub fn parse_unchecked(bytes: &'a [u8]) -> Result<TcpRepr<'a>, WireError> {
        Self::parse_view(&TcpView::new(bytes)?)
    }

    /// Parse a checked view without verifying the checksum.
    pub fn parse_view(v: &TcpView<'a>) -> Result<TcpRepr<'a>, WireError> {
        let flags = v.flags();
        Ok(TcpRepr {
            src_port: v.src_port(),
            dst_port: v.dst_port(),
            seq: v.seq(),
            ack: flags.has(Flags::ACK).then(|| v.ack()),
            flags: Flags(flags.0 & !Flags::ACK),
            window: v.window(),
            options: TcpOptions::parse(v.options())?,
            payload: v.payload(),
        })
    }

    /// Header length (with options) in bytes.
    pub fn header_len(&self) -> usize {
        HEADER_LEN + self.options.buffer_len()
    }

    /// Length of the emitted segment.
    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.payload.len()
    }

    /// Sequence space the segment occupies: data plus one each for SYN and FIN.
    pub fn segment_len(&self) -> usize {
        self.payload.len() + self.flags.has(Flags::SYN) as usize + self.flags.has(Flags::FIN) as usize
    }

    /// The segment's bytes, checksum computed for `src` to `dst`. The buffer has
    /// [`IPV4_HEADROOM`] bytes of spare capacity, so a driver can put an IPv4 header in front
    /// of the segment without a second allocation.
    pub fn emit(&self, src: Ipv4Addr, dst: Ipv4Addr) -> Vec<u8> {
        self.emit_after(src, dst, 0)
    }

    /// As [`TcpRepr::emit`], the segment starting after `headroom` zero bytes in the buffer,
    /// where a driver writes the lower layers' headers in place (with [`IPV4_HEADROOM`] an
    /// IPv4 header without options fits, and nothing is moved).
    pub fn emit_after(&self, src: Ipv4Addr, dst: Ipv4Addr, headroom: usize) -> Vec<u8> {
        self.emit_with(src, dst, headroom, true)
    }

    /// As [`TcpRepr::emit_after`]; with `checksum` false the checksum field stays zero (for a
    /// network that alters no bytes and shows them to no one: a simulation without a capture,
    /// whose receiver skips the check too).
    pub fn emit_with(&self, src: Ipv4Addr, dst: Ipv4Addr, headroom: usize, checksum: bool) -> Vec<u8> {
        self.emit_into(Vec::new(), &[], src, dst, headroom, checksum)
    }

    /// As [`TcpRepr::emit_with`], built in `out` (emptied first), the data being `payload`
    /// followed by `rest`: a sender whose bytes lie in a ring buffer hands over both parts,
    /// so the segment is built without copying them into one slice first, and one that keeps
    /// the buffers of segments it has received saves an allocation per segment it sends.
    pub fn emit_into(
        &self,
        out: Vec<u8>,
        rest: &[u8],
        src: Ipv4Addr,
        dst: Ipv4Addr,
        headroom: usize,
        checksum: bool,
    ) -> Vec<u8> {
        let payload = |out: &mut Vec<u8>| {
            out.extend_from_slice(self.payload);
            out.extend_from_slice(rest);
        };
        self.emit_parts(out, self.payload.len() + rest.len(), payload, src, dst, headroom, checksum)
    }

    /// As [`TcpRepr::emit_into`] with `len` bytes of data after `self.payload` (which should be
    /// empty) that `fill` writes in place, zeroed before: a sender that makes its data as it
    /// sends it writes it straight into the segment.
    #[allow(clippy::too_many_arguments)]
    pub fn emit_generated(
        &self,
        out: Vec<u8>,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
        src: Ipv4Addr,
        dst: Ipv4Addr,
        headroom: usize,
        checksum: bool,
    ) -> Vec<u8> {
        let payload = |out: &mut Vec<u8>| {
            out.extend_from_slice(self.payload);
            let at = out.len();
            out.resize(at + len, 0);
            fill(&mut out[at..]);
        };
        self.emit_parts(out, self.payload.len() + len, payload, src, dst, headroom, checksum)
    }

    /// The segment built in `out`, its `len` bytes of data appended by `payload`.
    #[allow(clippy::too_many_arguments)]
    fn emit_parts(
        &self,
        mut out: Vec<u8>,
        len: usize,
        payload: impl FnOnce(&mut Vec<u8>),
        src: Ipv4Addr,
        dst: Ipv4Addr,
        headroom: usize,
        checksum: bool,
    ) -> Vec<u8> {
        const ZEROS: [u8; IPV4_HEADROOM] = [0; IPV4_HEADROOM];
        let header_len = self.header_len();
        debug_assert!(header_len <= HEADER_LEN + MAX_OPTIONS_LEN);
        let spare = IPV4_HEADROOM.saturating_sub(headroom);
        out.clear();
        out.reserve(spare + headroom + header_len + len);
        match ZEROS.get(..headroom) {
            Some(zeros) => out.extend_from_slice(zeros),
            None => out.resize(headroom, 0),
        }
        out.extend_from_slice(&self.src_port.to_be_bytes());
        out.extend_from_slice(&self.dst_port.to_be_bytes());
        out.extend_from_slice(&self.seq.0.to_be_bytes());
        out.extend_from_slice(&self.ack.unwrap_or_default().0.to_be_bytes());
        let flags = self.flags.0 | if self.ack.is_some() { Flags::ACK } else { 0 };
        out.extend_from_slice(&[((header_len / 4) as u8) << 4, flags]);
        out.extend_from_slice(&self.window.to_be_bytes());
        out.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
        self.options.emit(&mut out);
        payload(&mut out);
        if checksum {
            let segment = &out[headroom..];
            let csum = internet_checksum(segment, pseudo_header_sum(src, dst, segment.len()));
            out[headroom + 16..headroom + 18].copy_from_slice(&csum.to_be_bytes());
        }
        out
    }
}

/// Spare capacity [`TcpRepr::emit`] leaves in a segment's buffer: an IPv4 header without
/// options.
pub const IPV4_HEADROOM: usize = 20;

/// Sum of the IPv4 pseudo-header (RFC 9293 §3.1) for a TCP segment of `len` bytes.
pub fn pseudo_header_sum(src: Ipv4Addr, dst: Ipv4Addr, len: usize) -> u32 {
    let (s, d) = (src.octets(), dst.octets());
    [[s[0], s[1]], [s[2], s[3]], [d[0], d[1]], [d[2], d[3]], [0, PROTO_TCP]]
        .iter()
        .map(|w| u16::from_be_bytes(*w) as u32)
        .sum::<u32>()
        + (len as u32 & 0xffff)
}

/// The Internet checksum (RFC 1071) of `data`, starting from a partial sum.
///
/// Summed 32 bits at a time: the ones'-complement sum does not depend on the word size as
/// long as the carries are folded back at the end (RFC 1071 §2(C)), and wide words are much
/// faster on the segments the simulator checks for every packet.
pub fn internet_checksum(data: &[u8], initial: u32) -> u16 {
    let mut sum = initial as u64;
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        sum += u32::from_be_bytes([w[0], w[1], w[2], w[3]]) as u64;
    }
    let mut chunks = words.remainder().chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [last] = chunks.remainder() {
        sum += (*last as u64) << 8;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const B: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 2);

    /// A SYN as Linux sends it: MSS 1460, SACK-permitted, timestamps, window scale 7.
    const SYN: [u8; 40] = [
        0xc3, 0x50, 0x13, 0x89, // ports 50000 -> 5001
        0x00, 0x00, 0x03, 0xe8, // seq 1000
        0x00, 0x00, 0x00, 0x00, // ack
        0xa0, 0x02, 0xff, 0xff, // offset 10 words, SYN, window 65535
        0x00, 0x00, 0x00, 0x00, // checksum (filled below), urgent
        0x02, 0x04, 0x05, 0xb4, // MSS 1460
        0x01, 0x03, 0x03, 0x07, // NOP, WS 7
        0x04, 0x02, 0x08, 0x0a, // SACK-permitted, TS
        0x00, 0x00, 0x00, 0x2a, // TSval 42
        0x00, 0x00, 0x00, 0x00, // TSecr 0
    ];

    fn with_checksum(mut bytes: Vec<u8>) -> Vec<u8> {
        bytes[16..18].copy_from_slice(&[0, 0]);
        let c = internet_checksum(&bytes, pseudo_header_sum(A, B, bytes.len()));
        bytes[16..18].copy_from_slice(&c.to_be_bytes());
        bytes
    }

    #[test]
    fn syn_round_trips_through_static_bytes() {
        let bytes = with_checksum(SYN.to_vec());
        let r = TcpRepr::parse(&bytes, A, B).unwrap();
        assert_eq!((r.src_port, r.dst_port, r.seq, r.ack, r.window), (50000, 5001, SeqNumber(1000), None, 65535));
        assert!(r.flags.has(Flags::SYN));
        assert_eq!(r.options.mss, Some(1460));
        assert_eq!(r.options.window_scale, Some(7));
        assert!(r.options.sack_permitted);
        assert_eq!(r.options.timestamps, Some((42, 0)));
        assert_eq!(r.segment_len(), 1);
        assert_eq!(r.emit(A, B), bytes);
        assert_eq!(r.buffer_len(), bytes.len());
    }

    #[test]
    fn a_segment_after_headroom_is_the_same_segment_behind_zero_bytes() {
        let bytes = with_checksum(SYN.to_vec());
        let r = TcpRepr::parse(&bytes, A, B).unwrap();
        for headroom in [0, 8, IPV4_HEADROOM, 40] {
            let out = r.emit_after(A, B, headroom);
            assert!(out[..headroom].iter().all(|&b| b == 0), "headroom {headroom}");
            assert_eq!(&out[headroom..], &bytes[..], "headroom {headroom}");
            assert!(out.capacity() >= IPV4_HEADROOM.max(headroom) + bytes.len());
        }
    }

    #[test]
    fn data_segment_with_sack_blocks_round_trips() {
        let payload = [7u8; 33];
        let mut options = TcpOptions { timestamps: Some((1, 2)), ..Default::default() };
        options.sack[0] = (SeqNumber(100), SeqNumber(200));
        options.sack[1] = (SeqNumber(u32::MAX - 5), SeqNumber(10));
        options.sack_len = 2;
        let r = TcpRepr {
            src_port: 1,
            dst_port: 2,
            seq: SeqNumber(5),
            ack: Some(SeqNumber(9)),
            flags: Flags(Flags::PSH | Flags::FIN),
            window: 512,
            options,
            payload: &payload,
        };
        let bytes = r.emit(A, B);
        assert_eq!(bytes.len(), r.buffer_len());
        assert_eq!(bytes.len(), 20 + 12 + 20 + 33);
        assert_eq!(TcpRepr::parse(&bytes, A, B).unwrap(), r);
        assert_eq!(r.segment_len(), 34);
        // Another address fails the pseudo-header checksum.
        assert_eq!(TcpRepr::parse(&bytes, A, Ipv4Addr::new(10, 0, 1, 3)), Err(WireError::Checksum));
        // The same data in two parts (a ring buffer's wrap) gives the same bytes.
        for cut in [0, 1, 20, 33] {
            let split = TcpRepr { payload: &payload[..cut], ..r };
            assert_eq!(split.emit_into(Vec::new(), &payload[cut..], A, B, 20, true)[20..], bytes[..], "cut {cut}");
            // And so does a used buffer, whatever it held.
            let used = vec![0xAA; 3000];
            assert_eq!(split.emit_into(used, &payload[cut..], A, B, 0, true), bytes, "cut {cut}");
        }
    }

    #[test]
    fn wide_checksum_matches_the_16_bit_definition() {
        let narrow = |data: &[u8], init: u32| {
            let mut sum = init as u64;
            for c in data.chunks(2) {
                sum += (u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])) as u64;
            }
            while sum >> 16 != 0 {
                sum = (sum & 0xffff) + (sum >> 16);
            }
            !(sum as u16)
        };
        let data: Vec<u8> = (0..1500u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        for len in [0, 1, 2, 3, 5, 7, 20, 21, 1499, 1500] {
            assert_eq!(internet_checksum(&data[..len], 12345), narrow(&data[..len], 12345), "{len}");
        }
    }

    #[test]
    fn malformed_options_and_headers_are_errors() {
        assert!(matches!(TcpView::new(&[0; 19]), Err(WireError::Truncated { .. })));
        let mut short_offset = SYN.to_vec();
        short_offset[12] = 0x40;
        assert_eq!(TcpView::new(&short_offset).err(), Some(WireError::BadDataOffset(4)));
        let mut long_offset = SYN.to_vec();
        long_offset[12] = 0xf0;
        assert!(matches!(TcpView::new(&long_offset), Err(WireError::Truncated { need: 60, .. })));
        for opts in [
            &[2u8, 3, 0][..],
            &[2, 4, 5],
            &[8, 9, 0, 0, 0, 0, 0, 0, 0],
            &[5, 2],
            &[5, 9, 0, 0, 0, 0, 0, 0, 0],
            &[3, 1],
            &[4, 3, 0],
            &[99],
        ] {
            assert!(TcpOptions::parse(opts).is_err(), "{opts:?}");
        }
        // Unknown kinds are skipped, EOL ends the list.
        let o = TcpOptions::parse(&[30, 4, 0, 0, 1, 2, 4, 5, 0xb4, 0, 99]).unwrap();
        assert_eq!(o.mss, Some(1460));
    }
}
