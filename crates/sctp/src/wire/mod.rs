//! SCTP packet format (RFC 9260 §3), in two levels as smoltcp does it.
//!
//! * Checked zero-copy views ([`HeaderView`], [`ChunkView`], [`ChunkIter`]) read fields
//!   straight out of a byte slice. Construction checks every length once, so no accessor
//!   can panic afterwards. The engine uses them for cheap demultiplexing (ports, tag,
//!   first chunk type) before paying for a full parse.
//! * A typed representation ([`Packet`], [`Chunk`], [`Parameter`], [`ErrorCause`]) with
//!   `parse` and `emit`. Parsing never panics: malformed input becomes a [`WireError`].
//!
//! Unknown chunk and parameter types are kept (`Unknown` variants) rather than dropped,
//! because what to do with them depends on the upper two bits of the type (§3.2, §3.2.1)
//! and may require an ERROR chunk back; see [`unknown_chunk_action`] and
//! [`unknown_parameter_action`]. That decision belongs to the engine.
//!
//! Padding (§3.2): every chunk, parameter and error cause is padded with zero bytes to a
//! multiple of four. Length fields never count a TLV's own padding, and a chunk's length
//! also excludes the padding of its *last* parameter (that padding is the chunk's
//! padding). The parser accepts a missing final padding; the emitter always writes it.

mod cause;
mod chunk;
mod crc;
mod param;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_ext;
#[cfg(test)]
mod tests_random;

pub use cause::ErrorCause;
pub use chunk::{Chunk, ChunkIter, ChunkType, ChunkView, DataChunk, DataRef, GapAckBlock, InitChunk, SackChunk};
pub use param::{ParamType, Parameter};

/// Length of the SCTP common header in bytes (RFC 9260 §3.1).
pub const COMMON_HEADER_LEN: usize = 12;

/// Length of an IPv4 header without options (RFC 791): the lower layers' usual overhead
/// ([`Config::lower_layer_overhead`](crate::Config::lower_layer_overhead)'s default) and the
/// usual headroom a driver asks for.
pub(crate) const IPV4_HEADER_LEN: usize = 20;

/// Why bytes could not be parsed as SCTP (or a typed value could not be emitted).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Fewer bytes than a fixed-size header or field needs.
    #[error("{what} truncated: need {need} bytes, have {have}")]
    Truncated {
        /// The structure being read.
        what: &'static str,
        /// Bytes needed.
        need: usize,
        /// Bytes available.
        have: usize,
    },
    /// A length field (or a count) is inconsistent with what the type requires.
    #[error("{what} has bad length {length}")]
    BadLength {
        /// The structure being read.
        what: &'static str,
        /// The offending length in bytes.
        length: usize,
    },
    /// A length field points past the end of the enclosing buffer.
    #[error("{what} length {length} runs past the end ({available} bytes available)")]
    LengthPastEnd {
        /// The structure being read.
        what: &'static str,
        /// The length field's value.
        length: usize,
        /// Bytes actually available.
        available: usize,
    },
    /// The CRC32c in the common header does not match the packet (RFC 9260 §6.8).
    #[error("bad checksum: header has {received:#010x}, computed {computed:#010x}")]
    BadChecksum {
        /// Checksum carried in the header.
        received: u32,
        /// Checksum computed over the packet.
        computed: u32,
    },
    /// The packet has a common header but no chunks (RFC 9260 §3: one or more chunks).
    #[error("packet has no chunks")]
    NoChunks,
    /// A HEARTBEAT or HEARTBEAT ACK does not carry exactly one Heartbeat Info parameter
    /// (RFC 9260 §3.3.5, §3.3.6).
    #[error("heartbeat chunk without exactly one Heartbeat Info parameter")]
    MissingHeartbeatInfo,
    /// A typed value is too long for a 16-bit length or count field (emit only).
    #[error("value too long for a 16-bit length field")]
    TooLong,
}

/// What to do with a chunk or parameter of a type this implementation does not know,
/// chosen by the two highest-order bits of the type (RFC 9260 §3.2, §3.2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnknownAction {
    /// `00`: stop processing this packet (chunk) or the rest of the chunk (parameter),
    /// discard it, report nothing.
    Stop,
    /// `01`: stop and discard as for `Stop`, and report it: an "Unrecognized Chunk Type"
    /// error cause in an ERROR chunk, or an "Unrecognized Parameter" (in INIT ACK or
    /// ERROR).
    StopAndReport,
    /// `10`: skip it and continue processing.
    Skip,
    /// `11`: skip it, continue processing, and report it as for `StopAndReport`.
    SkipAndReport,
}

impl UnknownAction {
    fn from_bits(bits: u8) -> Self {
        match bits & 0b11 {
            0b00 => UnknownAction::Stop,
            0b01 => UnknownAction::StopAndReport,
            0b10 => UnknownAction::Skip,
            _ => UnknownAction::SkipAndReport,
        }
    }
}

/// Action for an unrecognized chunk type: its upper two bits (RFC 9260 §3.2).
pub fn unknown_chunk_action(chunk_type: u8) -> UnknownAction {
    UnknownAction::from_bits(chunk_type >> 6)
}

/// Action for an unrecognized parameter type: its upper two bits (RFC 9260 §3.2.1).
pub fn unknown_parameter_action(param_type: u16) -> UnknownAction {
    UnknownAction::from_bits((param_type >> 14) as u8)
}

/// CRC32c (Castagnoli) of an SCTP packet as RFC 9260 Appendix A defines it: computed over
/// the whole packet with the checksum field taken as zero.
///
/// The value is the plain CRC32c (as in iSCSI, RFC 3720); on the wire it is stored in
/// the byte order Appendix A prescribes, which is least significant byte first (see
/// [`HeaderView::checksum`]). Buffers shorter than the common header are summed as is.
pub fn packet_checksum(packet: &[u8]) -> u32 {
    match packet.split_first_chunk::<COMMON_HEADER_LEN>() {
        // A received packet: its common header with the field zeroed, then the chunks (two
        // pieces, not three: every piece costs a call into the CRC code).
        Some((header, chunks)) if header[8..] != [0; 4] => {
            let mut zeroed = *header;
            zeroed[8..].fill(0);
            crc::crc32c_parts(&[&zeroed, chunks])
        }
        // A packet being built has a zero checksum field: one pass over the whole buffer.
        _ => crc::crc32c_parts(&[packet]),
    }
}

/// Whether the checksum field of `packet` holds its CRC32c (§6.8), computed in one pass over
/// the packet with the field zeroed in place and then restored (the packet is unchanged
/// afterwards). False for a buffer shorter than the common header.
pub fn checksum_ok_in_place(packet: &mut [u8]) -> bool {
    let Some(field) = packet.get_mut(8..COMMON_HEADER_LEN) else { return false };
    let stored = [field[0], field[1], field[2], field[3]];
    field.fill(0);
    let computed = crc::crc32c_parts(&[packet]);
    packet[8..COMMON_HEADER_LEN].copy_from_slice(&stored);
    u32::from_le_bytes(stored) == computed
}

/// Whether packets carry and are checked against their CRC32c.
///
/// RFC 9260 §6.8 makes the checksum mandatory on the wire: every packet sent carries the
/// CRC32c of Appendix A and a receiver discards a packet whose checksum does not match.
/// [`Checksum::Skip`] exists for a simulator only: when nothing in the model can alter a
/// packet's bytes (errors are modelled as whole-packet losses) and no packet leaves the
/// process (no capture, no real network), the checksum detects nothing, yet computing it at
/// both ends is a large share of the per-packet work. The closest standard precedent is
/// RFC 9653 (Zero Checksum for SCTP): when another method already guarantees integrity
/// (there: DTLS), a sender may put zero in the field and the receiver need not compute it.
/// Unlike RFC 9653, `Skip` is not negotiated (no Zero Checksum Acceptable parameter in
/// INIT / INIT ACK) and the receiver verifies nothing, so **`Skip` must never be used on a
/// real network**: both ends of every association must be simulated endpoints set alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Checksum {
    /// Compute the CRC32c on every packet sent and verify it on every packet received
    /// (RFC 9260 §6.8). The default.
    #[default]
    Compute,
    /// Send zero in the checksum field without computing it; accept received packets
    /// whatever their checksum field holds. Simulation only (see above).
    Skip,
}

/// The SCTP common header, typed (RFC 9260 §3.1). The checksum is not stored: `emit`
/// computes it and `parse` verifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommonHeader {
    /// Source port number.
    pub src_port: u16,
    /// Destination port number.
    pub dst_port: u16,
    /// Verification tag (§8.5).
    pub verification_tag: u32,
}

/// A checked zero-copy view of an SCTP packet's common header (RFC 9260 §3.1).
///
/// ```text
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |     Source Port Number        |     Destination Port Number   |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                      Verification Tag                         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                           Checksum                            |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
#[derive(Debug, Clone, Copy)]
pub struct HeaderView<'a> {
    header: &'a [u8; COMMON_HEADER_LEN],
    packet: &'a [u8],
}

impl<'a> HeaderView<'a> {
    /// Checks that `packet` holds at least a common header.
    pub fn new_checked(packet: &'a [u8]) -> Result<Self, WireError> {
        let header = packet.first_chunk::<COMMON_HEADER_LEN>().ok_or(WireError::Truncated {
            what: "common header",
            need: COMMON_HEADER_LEN,
            have: packet.len(),
        })?;
        Ok(HeaderView { header, packet })
    }

    /// Source port number.
    pub fn src_port(&self) -> u16 {
        u16::from_be_bytes([self.header[0], self.header[1]])
    }

    /// Destination port number.
    pub fn dst_port(&self) -> u16 {
        u16::from_be_bytes([self.header[2], self.header[3]])
    }

    /// Verification tag.
    pub fn verification_tag(&self) -> u32 {
        u32::from_be_bytes([self.header[4], self.header[5], self.header[6], self.header[7]])
    }

    /// Checksum field, decoded as Appendix A stores it (least significant byte first).
    pub fn checksum(&self) -> u32 {
        u32::from_le_bytes([self.header[8], self.header[9], self.header[10], self.header[11]])
    }

    /// Whether the checksum field matches the CRC32c of the packet.
    pub fn checksum_ok(&self) -> bool {
        self.checksum() == packet_checksum(self.packet)
    }

    /// The typed header fields.
    pub fn fields(&self) -> CommonHeader {
        CommonHeader { src_port: self.src_port(), dst_port: self.dst_port(), verification_tag: self.verification_tag() }
    }

    /// The bytes after the common header (the chunks, with padding).
    pub fn chunk_bytes(&self) -> &'a [u8] {
        self.packet.get(COMMON_HEADER_LEN..).unwrap_or_default()
    }

    /// Iterator over the chunks as checked views.
    pub fn chunks(&self) -> ChunkIter<'a> {
        ChunkIter::new(self.chunk_bytes())
    }
}

/// An SCTP packet, typed: common header plus one or more chunks (RFC 9260 §3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// Common header (the checksum is computed on emit, verified on parse).
    pub header: CommonHeader,
    /// Chunks in order of appearance.
    pub chunks: Vec<Chunk>,
}

impl Packet {
    /// Parses and checks a whole packet: header, CRC32c, every chunk.
    pub fn parse(bytes: &[u8]) -> Result<Packet, WireError> {
        let view = HeaderView::new_checked(bytes)?;
        let computed = packet_checksum(bytes);
        if view.checksum() != computed {
            return Err(WireError::BadChecksum { received: view.checksum(), computed });
        }
        Self::parse_unchecked_crc(bytes)
    }

    /// Parses a packet without verifying the checksum (for captures with offloaded or
    /// zeroed checksums, and for tests).
    pub fn parse_unchecked_crc(bytes: &[u8]) -> Result<Packet, WireError> {
        let view = HeaderView::new_checked(bytes)?;
        let chunks = view.chunks().map(|c| c.and_then(|c| Chunk::parse(&c))).collect::<Result<Vec<_>, _>>()?;
        if chunks.is_empty() {
            return Err(WireError::NoChunks);
        }
        Ok(Packet { header: view.fields(), chunks })
    }

    /// Bytes `emit` will produce.
    pub fn buffer_len(&self) -> usize {
        COMMON_HEADER_LEN + self.chunks.iter().map(Chunk::buffer_len).sum::<usize>()
    }

    /// Serializes the packet and fills in the CRC32c.
    ///
    /// A field longer than its 16-bit length or count allows is written with a saturated
    /// length (garbage on the wire); use [`Packet::try_emit`] where that can happen.
    pub fn emit(&self) -> Vec<u8> {
        self.emit_inner().0
    }

    /// As [`Packet::emit`], but fails with [`WireError::TooLong`] instead of writing a
    /// saturated length.
    pub fn try_emit(&self) -> Result<Vec<u8>, WireError> {
        match self.emit_inner() {
            (bytes, false) => Ok(bytes),
            (_, true) => Err(WireError::TooLong),
        }
    }

    fn emit_inner(&self) -> (Vec<u8>, bool) {
        let mut builder = PacketBuilder::new(self.header, self.buffer_len());
        for chunk in &self.chunks {
            builder.chunk(chunk);
        }
        let overflow = builder.w.overflow;
        (builder.finish(), overflow)
    }
}

/// The 16-byte header of a DATA chunk with the fields of `d` and `len` bytes of data, if its
/// length fits the chunk's 16-bit length field.
#[inline(always)]
fn data_header(d: &DataRef<'_>, len: usize) -> Option<[u8; 16]> {
    let length16 = u16::try_from(16 + len).ok()?;
    let mut header = [0u8; 16];
    header[1] = d.flags();
    header[2..4].copy_from_slice(&length16.to_be_bytes());
    header[4..8].copy_from_slice(&d.tsn.to_be_bytes());
    header[8..10].copy_from_slice(&d.stream_id.to_be_bytes());
    header[10..12].copy_from_slice(&d.ssn.to_be_bytes());
    header[12..16].copy_from_slice(&d.ppid.to_be_bytes());
    Some(header)
}

/// Builds one packet chunk by chunk (the send hot path): DATA chunks are written straight
/// from borrowed user data, other chunks through their typed form. `finish` fills in the
/// CRC32c.
///
/// The packet may start after some headroom in its buffer ([`PacketBuilder::with_headroom`]):
/// bytes a driver fills with the lower layers' headers in place, rather than moving the
/// packet along to make room for them.
pub struct PacketBuilder {
    w: Writer,
    /// Where the packet starts in the buffer (the headroom before it).
    start: usize,
}

impl PacketBuilder {
    /// Starts a packet with this common header; `capacity` is a size hint (the path MTU).
    pub fn new(header: CommonHeader, capacity: usize) -> Self {
        Self::with_buffer(header, Vec::with_capacity(capacity))
    }

    /// As [`PacketBuilder::new`], building in `buf` (cleared first) to reuse its allocation.
    pub fn with_buffer(header: CommonHeader, buf: Vec<u8>) -> Self {
        Self::with_headroom(header, buf, 0)
    }

    /// As [`PacketBuilder::with_buffer`], the packet starting after `headroom` zero bytes:
    /// [`PacketBuilder::finish`] returns them in front of it.
    #[inline]
    pub fn with_headroom(header: CommonHeader, mut buf: Vec<u8>, headroom: usize) -> Self {
        // Ports and verification tag as one word, the checksum field zero until `finish`.
        let ports = u64::from(header.src_port) << 48 | u64::from(header.dst_port) << 32;
        let first = ports | u64::from(header.verification_tag);
        buf.clear();
        // Written from registers: a copy of a header put together on the stack would load
        // it back from stores not yet in the cache, and wait for every store before them
        // (the previous packet's zeros) to get there. The usual headroom is room for an
        // IPv4 header without options: with the common header, two 16-byte words.
        if headroom == IPV4_HEADER_LEN {
            buf.reserve(IPV4_HEADER_LEN + COMMON_HEADER_LEN);
            buf.extend_from_slice(&[0; 16]);
            buf.extend_from_slice(&(u128::from(first) << 32).to_be_bytes());
        } else {
            buf.resize(headroom, 0);
            buf.extend_from_slice(&first.to_be_bytes());
            buf.extend_from_slice(&[0; 4]);
        }
        PacketBuilder { w: Writer::new(buf), start: headroom }
    }

    /// Bytes of the packet written so far (padding included; the headroom is not counted).
    pub fn len(&self) -> usize {
        self.w.buf.len().saturating_sub(self.start)
    }

    /// True if no chunk has been added.
    pub fn is_empty(&self) -> bool {
        self.len() <= COMMON_HEADER_LEN
    }

    /// The packet written so far (after the headroom), e.g. to sign it (RFC 4895 §6.2).
    pub fn packet_mut(&mut self) -> &mut [u8] {
        let start = self.start.min(self.w.buf.len());
        &mut self.w.buf[start..]
    }

    /// Appends a typed chunk.
    pub fn chunk(&mut self, chunk: &Chunk) {
        chunk.emit(&mut self.w);
    }

    /// Appends a DATA chunk (§3.3.1) without building a [`DataChunk`].
    pub fn data(&mut self, d: &DataRef<'_>) {
        // The usual chunk: its 16-byte header as one array, then the data and the padding
        // (every DATA packet is built here). The bytes are those of the TLV path below.
        if let Some(header) = data_header(d, d.user_data.len()) {
            self.put_data(&header, d.user_data.len(), |buf| buf.extend_from_slice(d.user_data));
            return;
        }
        let start = self.w.begin_tlv([0, d.flags()]);
        self.w.u32(d.tsn);
        self.w.u16(d.stream_id);
        self.w.u16(d.ssn);
        self.w.u32(d.ppid);
        self.w.bytes(d.user_data);
        self.w.end_tlv(start);
    }

    /// A DATA chunk with the header fields of `d` (its `user_data` is not read) and `len`
    /// bytes of data that `fill` writes into zeros in place: data made as the packet is built
    /// ([`crate::Generator`]), the same bytes [`PacketBuilder::data`] puts there for data
    /// held.
    pub fn data_generated(&mut self, d: &DataRef<'_>, len: usize, fill: impl FnOnce(&mut [u8])) {
        if let Some(header) = data_header(d, len) {
            self.put_data(&header, len, |buf| {
                let at = buf.len();
                buf.resize(at + len, 0);
                fill(&mut buf[at..]);
            });
            return;
        }
        let mut data = vec![0; len];
        fill(&mut data);
        self.data(&DataRef { user_data: &data, ..*d });
    }

    /// A DATA chunk's header, its data (`put` appends `len` bytes) and padding.
    #[inline(always)]
    fn put_data(&mut self, header: &[u8; 16], len: usize, put: impl FnOnce(&mut Vec<u8>)) {
        let length = 16 + len;
        let pad = pad4(length) - length;
        let buf = &mut self.w.buf;
        buf.reserve(length + pad);
        buf.extend_from_slice(header);
        put(buf);
        buf.extend_from_slice(&[0; 3][..pad]);
        self.w.trailing_pad = pad;
    }

    /// The finished packet with its checksum (§6.8), after the headroom.
    pub fn finish(self) -> Vec<u8> {
        self.finish_with(Checksum::Compute)
    }

    /// The finished packet, after the headroom, with its checksum computed
    /// ([`Checksum::Compute`], as [`PacketBuilder::finish`]) or left zero ([`Checksum::Skip`]).
    pub fn finish_with(mut self, checksum: Checksum) -> Vec<u8> {
        self.take_finished(checksum)
    }

    /// As [`PacketBuilder::finish_with`], leaving the builder empty, without a buffer: the
    /// packet leaves without the builder being moved.
    pub(crate) fn take_finished(&mut self, checksum: Checksum) -> Vec<u8> {
        let (mut buf, start) = (std::mem::take(&mut self.w.buf), self.start);
        if checksum == Checksum::Skip {
            // The field was written as zero with the common header.
            return buf;
        }
        let crc = packet_checksum(buf.get(start..).unwrap_or_default());
        if let Some(field) = buf.get_mut(start + 8..start + COMMON_HEADER_LEN) {
            field.copy_from_slice(&crc.to_le_bytes());
        }
        buf
    }
}

/// Rounds up to a multiple of four (RFC 9260 §3.2 padding).
pub(crate) fn pad4(len: usize) -> usize {
    len.div_ceil(4) * 4
}

/// Splits one type-length-value item (chunk, parameter or error cause: all have a 2-byte
/// type area and a 2-byte length that counts the 4-byte header but not the padding) off
/// the front of `buf`. Returns the 2 type bytes and the value; advances `buf` past the
/// padding, tolerating a missing padding at the very end.
pub(crate) fn take_tlv<'a>(buf: &mut &'a [u8], what: &'static str) -> Result<([u8; 2], &'a [u8]), WireError> {
    let have = buf.len();
    let Some(([t0, t1, l0, l1], _)) = buf.split_first_chunk::<4>().map(|(h, r)| (*h, r)) else {
        return Err(WireError::Truncated { what, need: 4, have });
    };
    let length = usize::from(u16::from_be_bytes([l0, l1]));
    if length < 4 {
        return Err(WireError::BadLength { what, length });
    }
    let Some(value) = buf.get(4..length) else {
        return Err(WireError::LengthPastEnd { what, length, available: have });
    };
    *buf = buf.get(pad4(length)..).unwrap_or_default();
    Ok(([t0, t1], value))
}

/// Parses every TLV filling `buf` with `parse(type, value)`: the lists of parameters (INIT,
/// INIT ACK) and of error causes (ABORT, ERROR) share this layout (RFC 9260 §3.2.1, §3.3.10).
pub(crate) fn parse_tlv_list<T>(
    mut buf: &[u8],
    what: &'static str,
    parse: impl Fn(u16, &[u8]) -> Result<T, WireError>,
) -> Result<Vec<T>, WireError> {
    let mut out = Vec::new();
    while !buf.is_empty() {
        let (t, value) = take_tlv(&mut buf, what)?;
        out.push(parse(u16::from_be_bytes(t), value)?);
    }
    Ok(out)
}

/// Big-endian cursor over a byte slice; every read is checked.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], what: &'static str) -> Self {
        Reader { buf, what }
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let (head, rest) = self.buf.split_first_chunk::<N>().ok_or(WireError::Truncated {
            what: self.what,
            need: N,
            have: self.buf.len(),
        })?;
        self.buf = rest;
        Ok(*head)
    }

    pub(crate) fn u16(&mut self) -> Result<u16, WireError> {
        self.array().map(u16::from_be_bytes)
    }

    pub(crate) fn u32(&mut self) -> Result<u32, WireError> {
        self.array().map(u32::from_be_bytes)
    }

    /// Everything not yet read.
    pub(crate) fn rest(self) -> &'a [u8] {
        self.buf
    }
}

/// Output buffer that writes TLVs with the §3.2 length and padding rules and remembers
/// whether any length overflowed 16 bits.
pub(crate) struct Writer {
    buf: Vec<u8>,
    /// Padding bytes at the end of `buf` that the enclosing TLV's length must not count
    /// (the padding of the last nested TLV, §3.2).
    trailing_pad: usize,
    overflow: bool,
}

impl Writer {
    /// A writer appending to `buf`.
    pub(crate) fn new(buf: Vec<u8>) -> Self {
        Writer { buf, trailing_pad: 0, overflow: false }
    }

    /// The bytes written.
    pub(crate) fn into_inner(self) -> Vec<u8> {
        self.buf
    }

    pub(crate) fn u16(&mut self, v: u16) {
        self.bytes(&v.to_be_bytes());
    }

    pub(crate) fn u32(&mut self, v: u32) {
        self.bytes(&v.to_be_bytes());
    }

    pub(crate) fn bytes(&mut self, v: &[u8]) {
        self.buf.extend_from_slice(v);
        self.trailing_pad = 0;
    }

    /// A 16-bit count (e.g. gap ack blocks); saturates and flags overflow.
    pub(crate) fn count16(&mut self, n: usize) {
        let v = u16::try_from(n).unwrap_or_else(|_| {
            self.overflow = true;
            u16::MAX
        });
        self.u16(v);
    }

    /// Starts a TLV with the given two type bytes; returns its start offset for `end_tlv`.
    pub(crate) fn begin_tlv(&mut self, type_bytes: [u8; 2]) -> usize {
        let start = self.buf.len();
        self.bytes(&type_bytes);
        self.bytes(&[0, 0]);
        start
    }

    /// Fills in the length of the TLV begun at `start` and pads it to four bytes.
    pub(crate) fn end_tlv(&mut self, start: usize) {
        let total = self.buf.len().saturating_sub(start);
        let length = total.saturating_sub(self.trailing_pad);
        let length = u16::try_from(length).unwrap_or_else(|_| {
            self.overflow = true;
            u16::MAX
        });
        if let Some(field) = self.buf.get_mut(start + 2..start + 4) {
            field.copy_from_slice(&length.to_be_bytes());
        }
        let pad = pad4(total) - total;
        self.buf.resize(self.buf.len() + pad, 0);
        self.trailing_pad += pad;
    }
}
