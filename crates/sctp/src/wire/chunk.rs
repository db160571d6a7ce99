//! Chunks (RFC 9260 §3.2, §3.3): a checked view over one chunk and the typed [`Chunk`].
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |   Chunk Type  | Chunk  Flags  |        Chunk Length           |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! \                                                               \
//! /                          Chunk Value                          /
//! \                                                               \
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! Chunk Length counts type, flags, length and value, not the padding (§3.2).

use std::net::IpAddr;

use super::{take_tlv, ErrorCause, Parameter, Reader, WireError, Writer};

/// A chunk type code (§3.2), with a name for each type RFC 9260 defines. Any other value is
/// a type this engine does not know, handled by its upper two bits
/// ([`ChunkType::unknown_action`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ChunkType(pub u8);

impl ChunkType {
    /// Payload Data (DATA), §3.3.1.
    pub const DATA: ChunkType = ChunkType(0);
    /// Initiation (INIT), §3.3.2.
    pub const INIT: ChunkType = ChunkType(1);
    /// Initiation Acknowledgement (INIT ACK), §3.3.3.
    pub const INIT_ACK: ChunkType = ChunkType(2);
    /// Selective Acknowledgement (SACK), §3.3.4.
    pub const SACK: ChunkType = ChunkType(3);
    /// Heartbeat Request (HEARTBEAT), §3.3.5.
    pub const HEARTBEAT: ChunkType = ChunkType(4);
    /// Heartbeat Acknowledgement (HEARTBEAT ACK), §3.3.6.
    pub const HEARTBEAT_ACK: ChunkType = ChunkType(5);
    /// Abort (ABORT), §3.3.7.
    pub const ABORT: ChunkType = ChunkType(6);
    /// Shutdown Association (SHUTDOWN), §3.3.8.
    pub const SHUTDOWN: ChunkType = ChunkType(7);
    /// Shutdown Acknowledgement (SHUTDOWN ACK), §3.3.9.
    pub const SHUTDOWN_ACK: ChunkType = ChunkType(8);
    /// Operation Error (ERROR), §3.3.10.
    pub const ERROR: ChunkType = ChunkType(9);
    /// State Cookie (COOKIE ECHO), §3.3.11.
    pub const COOKIE_ECHO: ChunkType = ChunkType(10);
    /// Cookie Acknowledgement (COOKIE ACK), §3.3.12.
    pub const COOKIE_ACK: ChunkType = ChunkType(11);
    /// Explicit Congestion Notification Echo (ECNE), RFC 9260 Appendix A.
    pub const ECNE: ChunkType = ChunkType(12);
    /// Congestion Window Reduced (CWR), RFC 9260 Appendix A.
    pub const CWR: ChunkType = ChunkType(13);
    /// Shutdown Complete (SHUTDOWN COMPLETE), §3.3.13.
    pub const SHUTDOWN_COMPLETE: ChunkType = ChunkType(14);
    /// Authentication (AUTH), RFC 4895 §4.1.
    pub const AUTH: ChunkType = ChunkType(0x0F);
    /// Address Configuration Acknowledgment (ASCONF-ACK), RFC 5061 §5.2.
    pub const ASCONF_ACK: ChunkType = ChunkType(0x80);
    /// Address Configuration Change (ASCONF), RFC 5061 §5.1.
    pub const ASCONF: ChunkType = ChunkType(0xC1);

    /// Whether [`Chunk`] decodes this type into a named variant.
    pub fn is_known(self) -> bool {
        matches!(self.0, 0..=15 | 0x80 | 0xC1)
    }

    /// What to do with a chunk of this type if it is unknown: its upper two bits (§3.2).
    pub fn unknown_action(self) -> super::UnknownAction {
        super::unknown_chunk_action(self.0)
    }
}

/// A checked view of one chunk inside a packet. All fields are already bounds-checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkView<'a> {
    /// Chunk type (§3.2).
    pub chunk_type: ChunkType,
    /// Chunk flags; meaning depends on the type.
    pub flags: u8,
    /// Chunk value: `Chunk Length - 4` bytes, padding excluded.
    pub value: &'a [u8],
}

/// Iterator over the chunks following a common header, as [`ChunkView`]s. Yields an error
/// (and then stops) at the first chunk whose header or length is malformed.
#[derive(Debug, Clone)]
pub struct ChunkIter<'a> {
    rest: &'a [u8],
    failed: bool,
}

impl<'a> ChunkIter<'a> {
    /// Iterates over `bytes` (everything after the common header).
    pub fn new(bytes: &'a [u8]) -> Self {
        ChunkIter { rest: bytes, failed: false }
    }

    /// The chunks before the first malformed one, for a reader that stops there either way.
    /// Without the error beside each view, a view is handed over in registers rather than
    /// through a result assembled on the stack (every chunk a receiver processes).
    pub fn well_formed(self) -> impl Iterator<Item = ChunkView<'a>> {
        self.map_while(Result::ok)
    }
}

impl<'a> Iterator for ChunkIter<'a> {
    type Item = Result<ChunkView<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() || self.failed {
            return None;
        }
        match take_tlv(&mut self.rest, "chunk") {
            Ok(([chunk_type, flags], value)) => Some(Ok(ChunkView { chunk_type: ChunkType(chunk_type), flags, value })),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// DATA chunk, type 0 (§3.3.1; I bit from RFC 7053).
///
/// ```text
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |   Type = 0    |  Res  |I|U|B|E|           Length              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                              TSN                              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |      Stream Identifier S      |   Stream Sequence Number n    |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                  Payload Protocol Identifier                  |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// \                                                               \
/// /                 User Data (seq n of Stream S)                 /
/// \                                                               \
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// Empty user data parses (the engine must answer it with a No User Data ABORT, §6.2).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DataChunk {
    /// I bit (RFC 7053): the receiver should SACK immediately.
    pub immediate: bool,
    /// U bit: unordered.
    pub unordered: bool,
    /// B bit: first fragment of a user message.
    pub beginning: bool,
    /// E bit: last fragment of a user message.
    pub ending: bool,
    /// Transmission sequence number.
    pub tsn: u32,
    /// Stream identifier.
    pub stream_id: u16,
    /// Stream sequence number.
    pub ssn: u16,
    /// Payload protocol identifier (opaque to SCTP; big-endian on the wire).
    pub ppid: u32,
    /// User data.
    pub user_data: Vec<u8>,
}

/// A DATA chunk read in place (the receive hot path): the same fields as [`DataChunk`] but
/// the user data borrowed from the packet, so nothing is copied until the engine keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataRef<'a> {
    /// I bit (RFC 7053).
    pub immediate: bool,
    /// U bit: unordered.
    pub unordered: bool,
    /// B bit: first fragment.
    pub beginning: bool,
    /// E bit: last fragment.
    pub ending: bool,
    /// Transmission sequence number.
    pub tsn: u32,
    /// Stream identifier.
    pub stream_id: u16,
    /// Stream sequence number.
    pub ssn: u16,
    /// Payload protocol identifier.
    pub ppid: u32,
    /// User data, borrowed.
    pub user_data: &'a [u8],
}

impl<'a> DataRef<'a> {
    /// Reads a DATA chunk (type 0) from a checked view; `None` for another type or a value
    /// shorter than the 12 fixed bytes.
    pub fn from_view(view: &ChunkView<'a>) -> Option<Self> {
        if view.chunk_type != ChunkType::DATA {
            return None;
        }
        let (fixed, user_data) = view.value.split_first_chunk::<12>()?;
        let [t0, t1, t2, t3, s0, s1, n0, n1, p0, p1, p2, p3] = *fixed;
        Some(DataRef {
            immediate: view.flags & FLAG_I != 0,
            unordered: view.flags & FLAG_U != 0,
            beginning: view.flags & FLAG_B != 0,
            ending: view.flags & FLAG_E != 0,
            tsn: u32::from_be_bytes([t0, t1, t2, t3]),
            stream_id: u16::from_be_bytes([s0, s1]),
            ssn: u16::from_be_bytes([n0, n1]),
            ppid: u32::from_be_bytes([p0, p1, p2, p3]),
            user_data,
        })
    }

    /// The chunk flags byte these bits make.
    pub fn flags(&self) -> u8 {
        data_flags(self.immediate, self.unordered, self.beginning, self.ending)
    }
}

/// The DATA chunk flags byte (§3.3.1; I bit from RFC 7053).
pub(crate) fn data_flags(immediate: bool, unordered: bool, beginning: bool, ending: bool) -> u8 {
    (if immediate { FLAG_I } else { 0 })
        | (if unordered { FLAG_U } else { 0 })
        | (if beginning { FLAG_B } else { 0 })
        | (if ending { FLAG_E } else { 0 })
}

/// INIT (type 1, §3.3.2) and INIT ACK (type 2, §3.3.3) share this layout.
///
/// ```text
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |   Type = 1    |  Chunk Flags  |      Chunk Length             |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                         Initiate Tag                          |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |           Advertised Receiver Window Credit (a_rwnd)          |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  Number of Outbound Streams   |   Number of Inbound Streams   |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                          Initial TSN                          |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// \                                                               \
/// /              Optional/Variable-Length Parameters              /
/// \                                                               \
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// Zero tags or stream counts parse; rejecting them (§3.3.2) is the engine's job.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InitChunk {
    /// Initiate tag: the verification tag the peer must use towards the sender.
    pub initiate_tag: u32,
    /// Advertised receiver window credit, bytes.
    pub a_rwnd: u32,
    /// Number of outbound streams (OS).
    pub outbound_streams: u16,
    /// Maximum number of inbound streams (MIS).
    pub inbound_streams: u16,
    /// Initial TSN.
    pub initial_tsn: u32,
    /// Optional / variable-length parameters, in order.
    pub params: Vec<Parameter>,
}

/// One gap ack block of a SACK (§3.3.4): offsets relative to the cumulative TSN ack;
/// TSNs `cum + start ..= cum + end` were received.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GapAckBlock {
    /// Gap ack block start offset.
    pub start: u16,
    /// Gap ack block end offset.
    pub end: u16,
}

/// SACK chunk, type 3 (§3.3.4).
///
/// ```text
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |   Type = 3    |  Chunk Flags  |         Chunk Length          |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                      Cumulative TSN Ack                       |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |          Advertised Receiver Window Credit (a_rwnd)           |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// | Number of Gap Ack Blocks = N  |  Number of Duplicate TSNs = M |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |    Gap Ack Block #1 Start     |     Gap Ack Block #1 End      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// /                                                               /
/// \                              ...                              \
/// /                                                               /
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |    Gap Ack Block #N Start     |     Gap Ack Block #N End      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                        Duplicate TSN 1                        |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// /                                                               /
/// \                              ...                              \
/// /                                                               /
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                        Duplicate TSN M                        |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// The counts must match the chunk length exactly, otherwise parsing fails.
///
/// The chunk flags are kept on parse and written back on emit: RFC 9260 reserves them (sent
/// as zero, ignored on receipt), but Concurrent Multipath Transfer's delayed ack for CMT
/// (DAC, Iyengar et al.) carries in them how many packets the SACK acknowledges.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SackChunk {
    /// Chunk flags (reserved by RFC 9260; zero unless an extension sets them).
    pub flags: u8,
    /// Cumulative TSN ack.
    pub cumulative_tsn_ack: u32,
    /// Advertised receiver window credit, bytes.
    pub a_rwnd: u32,
    /// Gap ack blocks, in order.
    pub gap_ack_blocks: Vec<GapAckBlock>,
    /// Duplicate TSNs received since the last SACK.
    pub duplicate_tsns: Vec<u32>,
}

/// A typed chunk (RFC 9260 §3.3). Chunk flags that the RFC says to ignore on receipt are
/// dropped on parse and written as zero on emit, except a SACK's (see [`SackChunk`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chunk {
    /// DATA, type 0 (§3.3.1).
    Data(DataChunk),
    /// INIT, type 1 (§3.3.2).
    Init(InitChunk),
    /// INIT ACK, type 2 (§3.3.3); carries a State Cookie parameter.
    InitAck(InitChunk),
    /// SACK, type 3 (§3.3.4).
    Sack(SackChunk),
    /// HEARTBEAT, type 4 (§3.3.5).
    ///
    /// ```text
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |   Type = 4    | Chunk  Flags  |      Heartbeat Length         |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// \                                                               \
    /// /          Heartbeat Information TLV (Variable-Length)          /
    /// \                                                               \
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// ```
    Heartbeat {
        /// Value of the Heartbeat Info parameter (type 1), opaque.
        info: Vec<u8>,
    },
    /// HEARTBEAT ACK, type 5 (§3.3.6): same layout, echoing the HEARTBEAT's info.
    HeartbeatAck {
        /// Value of the Heartbeat Info parameter (type 1), opaque.
        info: Vec<u8>,
    },
    /// ABORT, type 6 (§3.3.7).
    ///
    /// ```text
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |   Type = 6    |  Reserved   |T|           Length              |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// \                                                               \
    /// /                   zero or more Error Causes                   /
    /// \                                                               \
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// ```
    Abort {
        /// T bit: the sender used the peer's tag reflected (no TCB), §8.5.1.
        t_bit: bool,
        /// Error causes.
        causes: Vec<ErrorCause>,
    },
    /// SHUTDOWN, type 7 (§3.3.8).
    ///
    /// ```text
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |   Type = 7    | Chunk  Flags  |      Length = 8               |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |                      Cumulative TSN Ack                       |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// ```
    Shutdown {
        /// Cumulative TSN ack.
        cumulative_tsn_ack: u32,
    },
    /// SHUTDOWN ACK, type 8 (§3.3.9): header only, length 4.
    ShutdownAck,
    /// OPERATION ERROR, type 9 (§3.3.10): one or more error causes, same layout as ABORT
    /// without the T bit.
    Error {
        /// Error causes.
        causes: Vec<ErrorCause>,
    },
    /// COOKIE ECHO, type 10 (§3.3.11): the State Cookie from the INIT ACK.
    ///
    /// ```text
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |   Type = 10   | Chunk  Flags  |         Length                |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// /                     Cookie                                    /
    /// \                                                               \
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// ```
    CookieEcho {
        /// The cookie, opaque.
        cookie: Vec<u8>,
    },
    /// COOKIE ACK, type 11 (§3.3.12): header only, length 4.
    CookieAck,
    /// ECN Echo (ECNE), type 12 (RFC 9260 Appendix A): the receiver saw the CE codepoint on
    /// a packet whose lowest TSN is `lowest_tsn`, and repeats this until a CWR covers it.
    ///
    /// ```text
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// | Chunk Type=12 | Flags=00000000|    Chunk Length = 8           |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |                      Lowest TSN Number                        |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// ```
    Ecne {
        /// The lowest TSN of the CE-marked packet.
        lowest_tsn: u32,
    },
    /// Congestion Window Reduced (CWR), type 13 (RFC 9260 Appendix A): the sender reacted to
    /// the ECNE carrying `lowest_tsn` (same layout as ECNE, type 13).
    Cwr {
        /// The TSN of the ECNE answered.
        lowest_tsn: u32,
    },
    /// SHUTDOWN COMPLETE, type 14 (§3.3.13): header only, T bit as in ABORT.
    ShutdownComplete {
        /// T bit (§8.5.1).
        t_bit: bool,
    },
    /// AUTH, type 0x0F (RFC 4895 §4.1): the HMAC over this chunk (HMAC field zeroed) and
    /// every chunk after it in the packet.
    ///
    /// ```text
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// | Type = 0x0F   |   Flags=0     |             Length            |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |     Shared Key Identifier     |   HMAC Identifier             |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// \                             HMAC                              /
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// ```
    Auth {
        /// Shared Key Identifier (§4.1): which endpoint pair shared key.
        key_id: u16,
        /// HMAC Identifier (§3.3): 1 SHA-1, 3 SHA-256.
        hmac_id: u16,
        /// The HMAC (20 bytes for SHA-1, 32 for SHA-256).
        hmac: Vec<u8>,
    },
    /// ASCONF, type 0xC1 (RFC 5061 §5.1): address configuration requests.
    ///
    /// ```text
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// | Type = 0xC1   |  Chunk Flags  |      Chunk Length             |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |                       Sequence Number                         |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |                    Address Parameter                          |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |                     ASCONF Parameter #1                       |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// /                             ....                              /
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// ```
    Asconf {
        /// Sequence (serial) number (§5.1.1 rule A1).
        serial: u32,
        /// An address of the sender (§5.1: used to find the association when the packet
        /// comes from a new source address).
        address: IpAddr,
        /// The requests (Add IP, Delete IP, Set Primary, ...), in order.
        params: Vec<Parameter>,
    },
    /// ASCONF-ACK, type 0x80 (RFC 5061 §5.2): the answers to the ASCONF with this serial.
    AsconfAck {
        /// The serial number of the ASCONF answered.
        serial: u32,
        /// Success and Error Cause Indications.
        params: Vec<Parameter>,
    },
    /// Any other chunk type. Handle with [`super::unknown_chunk_action`].
    Unknown {
        /// Chunk type.
        chunk_type: u8,
        /// Chunk flags.
        flags: u8,
        /// Chunk value (without header and padding).
        value: Vec<u8>,
    },
}

const FLAG_T: u8 = 0x01;
const FLAG_E: u8 = 0x01;
const FLAG_B: u8 = 0x02;
const FLAG_U: u8 = 0x04;
const FLAG_I: u8 = 0x08;

impl Chunk {
    /// Whether `chunk_type` is one this module decodes into a named variant.
    pub fn is_known_type(chunk_type: u8) -> bool {
        ChunkType(chunk_type).is_known()
    }

    /// Chunk type code.
    pub fn chunk_type(&self) -> ChunkType {
        match self {
            Chunk::Data(_) => ChunkType::DATA,
            Chunk::Init(_) => ChunkType::INIT,
            Chunk::InitAck(_) => ChunkType::INIT_ACK,
            Chunk::Sack(_) => ChunkType::SACK,
            Chunk::Heartbeat { .. } => ChunkType::HEARTBEAT,
            Chunk::HeartbeatAck { .. } => ChunkType::HEARTBEAT_ACK,
            Chunk::Abort { .. } => ChunkType::ABORT,
            Chunk::Shutdown { .. } => ChunkType::SHUTDOWN,
            Chunk::ShutdownAck => ChunkType::SHUTDOWN_ACK,
            Chunk::Error { .. } => ChunkType::ERROR,
            Chunk::CookieEcho { .. } => ChunkType::COOKIE_ECHO,
            Chunk::CookieAck => ChunkType::COOKIE_ACK,
            Chunk::Ecne { .. } => ChunkType::ECNE,
            Chunk::Cwr { .. } => ChunkType::CWR,
            Chunk::ShutdownComplete { .. } => ChunkType::SHUTDOWN_COMPLETE,
            Chunk::Auth { .. } => ChunkType::AUTH,
            Chunk::Asconf { .. } => ChunkType::ASCONF,
            Chunk::AsconfAck { .. } => ChunkType::ASCONF_ACK,
            Chunk::Unknown { chunk_type, .. } => ChunkType(*chunk_type),
        }
    }

    /// Decodes a checked chunk view.
    pub fn parse(view: &ChunkView<'_>) -> Result<Chunk, WireError> {
        let ChunkView { chunk_type, flags, value } = *view;
        let length = value.len() + 4;
        let exact = |n: usize, what| {
            if value.len() == n {
                Ok(())
            } else {
                Err(WireError::BadLength { what, length })
            }
        };
        Ok(match chunk_type {
            ChunkType::DATA => {
                let mut r = Reader::new(value, "DATA chunk");
                let tsn = r.u32()?;
                let stream_id = r.u16()?;
                let ssn = r.u16()?;
                let ppid = r.u32()?;
                Chunk::Data(DataChunk {
                    immediate: flags & FLAG_I != 0,
                    unordered: flags & FLAG_U != 0,
                    beginning: flags & FLAG_B != 0,
                    ending: flags & FLAG_E != 0,
                    tsn,
                    stream_id,
                    ssn,
                    ppid,
                    user_data: r.rest().to_vec(),
                })
            }
            ChunkType::INIT => Chunk::Init(parse_init(value, "INIT chunk")?),
            ChunkType::INIT_ACK => Chunk::InitAck(parse_init(value, "INIT ACK chunk")?),
            ChunkType::SACK => Chunk::Sack(parse_sack(flags, value)?),
            ChunkType::HEARTBEAT => Chunk::Heartbeat { info: parse_heartbeat(value)? },
            ChunkType::HEARTBEAT_ACK => Chunk::HeartbeatAck { info: parse_heartbeat(value)? },
            ChunkType::ABORT => Chunk::Abort { t_bit: flags & FLAG_T != 0, causes: ErrorCause::parse_list(value)? },
            ChunkType::SHUTDOWN => {
                exact(4, "SHUTDOWN chunk")?;
                Chunk::Shutdown { cumulative_tsn_ack: Reader::new(value, "SHUTDOWN chunk").u32()? }
            }
            ChunkType::SHUTDOWN_ACK => {
                exact(0, "SHUTDOWN ACK chunk")?;
                Chunk::ShutdownAck
            }
            ChunkType::ERROR => Chunk::Error { causes: ErrorCause::parse_list(value)? },
            ChunkType::COOKIE_ECHO => Chunk::CookieEcho { cookie: value.to_vec() },
            ChunkType::COOKIE_ACK => {
                exact(0, "COOKIE ACK chunk")?;
                Chunk::CookieAck
            }
            ChunkType::ECNE => {
                exact(4, "ECNE chunk")?;
                Chunk::Ecne { lowest_tsn: Reader::new(value, "ECNE chunk").u32()? }
            }
            ChunkType::CWR => {
                exact(4, "CWR chunk")?;
                Chunk::Cwr { lowest_tsn: Reader::new(value, "CWR chunk").u32()? }
            }
            ChunkType::SHUTDOWN_COMPLETE => {
                exact(0, "SHUTDOWN COMPLETE chunk")?;
                Chunk::ShutdownComplete { t_bit: flags & FLAG_T != 0 }
            }
            ChunkType::AUTH => {
                let mut r = Reader::new(value, "AUTH chunk");
                let key_id = r.u16()?;
                let hmac_id = r.u16()?;
                Chunk::Auth { key_id, hmac_id, hmac: r.rest().to_vec() }
            }
            ChunkType::ASCONF => {
                let mut r = Reader::new(value, "ASCONF chunk");
                let serial = r.u32()?;
                let mut rest = r.rest();
                let whole = rest.len();
                let ([t0, t1], addr) = take_tlv(&mut rest, "ASCONF address")?;
                let address = Parameter::parse(u16::from_be_bytes([t0, t1]), addr)?
                    .address()
                    .ok_or(WireError::BadLength { what: "ASCONF address", length: whole })?;
                Chunk::Asconf { serial, address, params: Parameter::parse_list(rest)? }
            }
            ChunkType::ASCONF_ACK => {
                let mut r = Reader::new(value, "ASCONF-ACK chunk");
                let serial = r.u32()?;
                Chunk::AsconfAck { serial, params: Parameter::parse_list(r.rest())? }
            }
            ChunkType(other) => Chunk::Unknown { chunk_type: other, flags, value: value.to_vec() },
        })
    }

    /// Bytes this chunk takes on the wire, padding included.
    pub fn buffer_len(&self) -> usize {
        let value = match self {
            Chunk::Data(d) => 12 + d.user_data.len(),
            Chunk::Init(i) | Chunk::InitAck(i) => 16 + i.params.iter().map(Parameter::buffer_len).sum::<usize>(),
            Chunk::Sack(s) => 12 + 4 * s.gap_ack_blocks.len() + 4 * s.duplicate_tsns.len(),
            Chunk::Heartbeat { info } | Chunk::HeartbeatAck { info } => 4 + info.len(),
            Chunk::Abort { causes, .. } | Chunk::Error { causes } => causes.iter().map(ErrorCause::buffer_len).sum(),
            Chunk::Shutdown { .. } | Chunk::Ecne { .. } | Chunk::Cwr { .. } => 4,
            Chunk::ShutdownAck | Chunk::CookieAck | Chunk::ShutdownComplete { .. } => 0,
            Chunk::CookieEcho { cookie: v } | Chunk::Unknown { value: v, .. } => v.len(),
            Chunk::Auth { hmac, .. } => 4 + hmac.len(),
            Chunk::Asconf { address, params, .. } => {
                4 + super::param::address_param_len(address) + params.iter().map(Parameter::buffer_len).sum::<usize>()
            }
            Chunk::AsconfAck { params, .. } => 4 + params.iter().map(Parameter::buffer_len).sum::<usize>(),
        };
        super::pad4(4 + value)
    }

    pub(crate) fn emit(&self, w: &mut Writer) {
        let flags = match self {
            Chunk::Data(d) => data_flags(d.immediate, d.unordered, d.beginning, d.ending),
            Chunk::Abort { t_bit: true, .. } | Chunk::ShutdownComplete { t_bit: true } => FLAG_T,
            Chunk::Sack(s) => s.flags,
            Chunk::Unknown { flags, .. } => *flags,
            _ => 0,
        };
        let start = w.begin_tlv([self.chunk_type().0, flags]);
        match self {
            Chunk::Data(d) => {
                w.u32(d.tsn);
                w.u16(d.stream_id);
                w.u16(d.ssn);
                w.u32(d.ppid);
                w.bytes(&d.user_data);
            }
            Chunk::Init(i) | Chunk::InitAck(i) => {
                w.u32(i.initiate_tag);
                w.u32(i.a_rwnd);
                w.u16(i.outbound_streams);
                w.u16(i.inbound_streams);
                w.u32(i.initial_tsn);
                i.params.iter().for_each(|p| p.emit(w));
            }
            Chunk::Sack(s) => {
                w.u32(s.cumulative_tsn_ack);
                w.u32(s.a_rwnd);
                w.count16(s.gap_ack_blocks.len());
                w.count16(s.duplicate_tsns.len());
                for b in &s.gap_ack_blocks {
                    w.u16(b.start);
                    w.u16(b.end);
                }
                s.duplicate_tsns.iter().for_each(|t| w.u32(*t));
            }
            Chunk::Heartbeat { info } | Chunk::HeartbeatAck { info } => {
                // Cloning keeps Parameter the single place that writes TLVs.
                Parameter::HeartbeatInfo(info.clone()).emit(w);
            }
            Chunk::Abort { causes, .. } | Chunk::Error { causes } => {
                causes.iter().for_each(|c| c.emit(w));
            }
            Chunk::Shutdown { cumulative_tsn_ack } => w.u32(*cumulative_tsn_ack),
            Chunk::Ecne { lowest_tsn } | Chunk::Cwr { lowest_tsn } => w.u32(*lowest_tsn),
            Chunk::ShutdownAck | Chunk::CookieAck | Chunk::ShutdownComplete { .. } => {}
            Chunk::CookieEcho { cookie: v } | Chunk::Unknown { value: v, .. } => w.bytes(v),
            Chunk::Auth { key_id, hmac_id, hmac } => {
                w.u16(*key_id);
                w.u16(*hmac_id);
                w.bytes(hmac);
            }
            Chunk::Asconf { serial, address, params } => {
                w.u32(*serial);
                Parameter::from(*address).emit(w);
                params.iter().for_each(|p| p.emit(w));
            }
            Chunk::AsconfAck { serial, params } => {
                w.u32(*serial);
                params.iter().for_each(|p| p.emit(w));
            }
        }
        w.end_tlv(start);
    }
}

fn parse_init(value: &[u8], what: &'static str) -> Result<InitChunk, WireError> {
    let mut r = Reader::new(value, what);
    Ok(InitChunk {
        initiate_tag: r.u32()?,
        a_rwnd: r.u32()?,
        outbound_streams: r.u16()?,
        inbound_streams: r.u16()?,
        initial_tsn: r.u32()?,
        params: Parameter::parse_list(r.rest())?,
    })
}

#[inline]
fn parse_sack(flags: u8, value: &[u8]) -> Result<SackChunk, WireError> {
    let mut sack = SackChunk::default();
    sack.parse_into(flags, value)?;
    Ok(sack)
}

impl SackChunk {
    /// Decodes the value of a SACK chunk with these flags (what [`Chunk::parse`] does for
    /// one, without the general chunk on the way).
    pub fn parse(flags: u8, value: &[u8]) -> Result<SackChunk, WireError> {
        parse_sack(flags, value)
    }

    /// Reads the value of a SACK chunk with `flags` into `self`, reusing its vectors' room
    /// (the association's receive path parses every SACK into one it keeps: no allocation
    /// once its vectors have grown, however many gap blocks SACKs carry). On error `self`
    /// holds partial contents.
    pub fn parse_into(&mut self, flags: u8, value: &[u8]) -> Result<(), WireError> {
        let what = "SACK chunk";
        let mut r = Reader::new(value, what);
        let cumulative_tsn_ack = r.u32()?;
        let a_rwnd = r.u32()?;
        let gaps = usize::from(r.u16()?);
        let dups = usize::from(r.u16()?);
        if value.len() != 12 + 4 * gaps + 4 * dups {
            return Err(WireError::BadLength { what, length: value.len() + 4 });
        }
        self.flags = flags;
        self.cumulative_tsn_ack = cumulative_tsn_ack;
        self.a_rwnd = a_rwnd;
        // The counts are checked against the chunk's length above, so the vectors are sized
        // once (collecting through `Result` would grow them step by step).
        self.gap_ack_blocks.clear();
        self.gap_ack_blocks.reserve(gaps);
        for _ in 0..gaps {
            self.gap_ack_blocks.push(GapAckBlock { start: r.u16()?, end: r.u16()? });
        }
        self.duplicate_tsns.clear();
        self.duplicate_tsns.reserve(dups);
        for _ in 0..dups {
            self.duplicate_tsns.push(r.u32()?);
        }
        Ok(())
    }
}

fn parse_heartbeat(value: &[u8]) -> Result<Vec<u8>, WireError> {
    match Parameter::parse_list(value)?.as_mut_slice() {
        [Parameter::HeartbeatInfo(info)] => Ok(std::mem::take(info)),
        _ => Err(WireError::MissingHeartbeatInfo),
    }
}
