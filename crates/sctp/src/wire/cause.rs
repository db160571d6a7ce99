//! Error causes carried by ABORT and ERROR chunks (RFC 9260 §3.3.10).
//!
//! Each cause is a TLV padded like a parameter:
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |           Cause Code          |       Cause Length            |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! /                    Cause-Specific Information                 /
//! \                                                               \
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! Causes whose information is itself a TLV or a chunk copied from the peer (Unresolvable
//! Address, Unrecognized Chunk Type, Unrecognized Parameters, Restart with New Addresses)
//! keep it as raw bytes: the engine copies them, it does not need them decoded.

use super::{parse_tlv_list, Reader, WireError, Writer};

/// One error cause (RFC 9260 §3.3.10.1 – §3.3.10.13).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorCause {
    /// Cause 1, Invalid Stream Identifier (§3.3.10.1): DATA sent to a nonexistent stream.
    ///
    /// ```text
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |     Cause Code = 1            |      Cause Length = 8         |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |        Stream Identifier      |         (Reserved)            |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// ```
    InvalidStreamIdentifier {
        /// The offending stream identifier (the reserved half is ignored on receipt).
        stream_id: u16,
    },
    /// Cause 2, Missing Mandatory Parameter (§3.3.10.2): INIT / INIT ACK lacks parameters.
    ///
    /// ```text
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |     Cause Code = 2            |      Cause Length = 8 + N * 2 |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |                   Number of missing params = N                |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |   Missing Param Type #1       |   Missing Param Type #2       |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |   Missing Param Type #N-1     |   Missing Param Type #N       |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// ```
    MissingMandatoryParameter {
        /// Types of the missing parameters.
        missing: Vec<u16>,
    },
    /// Cause 3, Stale Cookie Error (§3.3.10.3).
    ///
    /// ```text
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |     Cause Code = 3            |       Cause Length = 8        |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |                 Measure of Staleness (usec.)                  |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// ```
    StaleCookie {
        /// How long past expiry the cookie was, in microseconds.
        staleness_us: u32,
    },
    /// Cause 4, Out of Resource (§3.3.10.4); no information.
    OutOfResource,
    /// Cause 5, Unresolvable Address (§3.3.10.5): the complete address parameter TLV.
    UnresolvableAddress {
        /// The address parameter as received (raw TLV bytes).
        address: Vec<u8>,
    },
    /// Cause 6, Unrecognized Chunk Type (§3.3.10.6): the unrecognized chunk (type, flags,
    /// length and value) as received.
    UnrecognizedChunkType {
        /// The chunk's raw bytes.
        chunk: Vec<u8>,
    },
    /// Cause 7, Invalid Mandatory Parameter (§3.3.10.7); no information.
    InvalidMandatoryParameter,
    /// Cause 8, Unrecognized Parameters (§3.3.10.8): the unrecognized parameter TLVs.
    UnrecognizedParameters {
        /// The parameters' raw bytes.
        params: Vec<u8>,
    },
    /// Cause 9, No User Data (§3.3.10.9): a DATA chunk had no user data.
    ///
    /// ```text
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |     Cause Code = 9            |      Cause Length = 8         |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// /                  TSN value                                    /
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// ```
    NoUserData {
        /// TSN of the empty DATA chunk.
        tsn: u32,
    },
    /// Cause 10, Cookie Received While Shutting Down (§3.3.10.10); no information.
    CookieReceivedWhileShuttingDown,
    /// Cause 11, Restart of an Association with New Addresses (§3.3.10.11): the address
    /// TLVs that were added.
    RestartWithNewAddresses {
        /// The new address parameters' raw bytes.
        addresses: Vec<u8>,
    },
    /// Cause 12, User-Initiated Abort (§3.3.10.12): upper-layer reason, opaque.
    UserInitiatedAbort {
        /// Upper-layer abort reason.
        reason: Vec<u8>,
    },
    /// Cause 13, Protocol Violation (§3.3.10.13): additional information, opaque.
    ProtocolViolation {
        /// Additional information.
        info: Vec<u8>,
    },
    /// Any other cause code.
    Unknown {
        /// Cause code.
        code: u16,
        /// Cause-specific information (without header and padding).
        value: Vec<u8>,
    },
}

impl ErrorCause {
    /// Cause code.
    pub fn code(&self) -> u16 {
        match self {
            ErrorCause::InvalidStreamIdentifier { .. } => 1,
            ErrorCause::MissingMandatoryParameter { .. } => 2,
            ErrorCause::StaleCookie { .. } => 3,
            ErrorCause::OutOfResource => 4,
            ErrorCause::UnresolvableAddress { .. } => 5,
            ErrorCause::UnrecognizedChunkType { .. } => 6,
            ErrorCause::InvalidMandatoryParameter => 7,
            ErrorCause::UnrecognizedParameters { .. } => 8,
            ErrorCause::NoUserData { .. } => 9,
            ErrorCause::CookieReceivedWhileShuttingDown => 10,
            ErrorCause::RestartWithNewAddresses { .. } => 11,
            ErrorCause::UserInitiatedAbort { .. } => 12,
            ErrorCause::ProtocolViolation { .. } => 13,
            ErrorCause::Unknown { code, .. } => *code,
        }
    }

    /// Parses one cause from its code and information bytes.
    pub fn parse(code: u16, info: &[u8]) -> Result<ErrorCause, WireError> {
        let what = "error cause";
        let exact = |n: usize| {
            if info.len() == n {
                Ok(())
            } else {
                Err(WireError::BadLength { what, length: info.len() + 4 })
            }
        };
        let mut r = Reader::new(info, what);
        Ok(match code {
            1 => {
                exact(4)?;
                ErrorCause::InvalidStreamIdentifier { stream_id: r.u16()? }
            }
            2 => {
                let n = r.u32()?;
                let rest = r.rest();
                if usize::try_from(n).ok().and_then(|n| n.checked_mul(2)) != Some(rest.len()) {
                    return Err(WireError::BadLength { what, length: info.len() + 4 });
                }
                let mut r = Reader::new(rest, what);
                let missing = (0..rest.len() / 2).map(|_| r.u16()).collect::<Result<_, _>>()?;
                ErrorCause::MissingMandatoryParameter { missing }
            }
            3 => {
                exact(4)?;
                ErrorCause::StaleCookie { staleness_us: r.u32()? }
            }
            4 => {
                exact(0)?;
                ErrorCause::OutOfResource
            }
            5 => ErrorCause::UnresolvableAddress { address: info.to_vec() },
            6 => ErrorCause::UnrecognizedChunkType { chunk: info.to_vec() },
            7 => {
                exact(0)?;
                ErrorCause::InvalidMandatoryParameter
            }
            8 => ErrorCause::UnrecognizedParameters { params: info.to_vec() },
            9 => {
                exact(4)?;
                ErrorCause::NoUserData { tsn: r.u32()? }
            }
            10 => {
                exact(0)?;
                ErrorCause::CookieReceivedWhileShuttingDown
            }
            11 => ErrorCause::RestartWithNewAddresses { addresses: info.to_vec() },
            12 => ErrorCause::UserInitiatedAbort { reason: info.to_vec() },
            13 => ErrorCause::ProtocolViolation { info: info.to_vec() },
            _ => ErrorCause::Unknown { code, value: info.to_vec() },
        })
    }

    /// Parses the list of causes filling `buf` (the value of an ABORT or ERROR chunk).
    pub fn parse_list(buf: &[u8]) -> Result<Vec<ErrorCause>, WireError> {
        parse_tlv_list(buf, "error cause", ErrorCause::parse)
    }

    /// Bytes this cause takes on the wire, padding included.
    pub fn buffer_len(&self) -> usize {
        let info = match self {
            ErrorCause::InvalidStreamIdentifier { .. }
            | ErrorCause::StaleCookie { .. }
            | ErrorCause::NoUserData { .. } => 4,
            ErrorCause::MissingMandatoryParameter { missing } => 4 + 2 * missing.len(),
            ErrorCause::OutOfResource
            | ErrorCause::InvalidMandatoryParameter
            | ErrorCause::CookieReceivedWhileShuttingDown => 0,
            ErrorCause::UnresolvableAddress { address: v }
            | ErrorCause::UnrecognizedChunkType { chunk: v }
            | ErrorCause::UnrecognizedParameters { params: v }
            | ErrorCause::RestartWithNewAddresses { addresses: v }
            | ErrorCause::UserInitiatedAbort { reason: v }
            | ErrorCause::ProtocolViolation { info: v }
            | ErrorCause::Unknown { value: v, .. } => v.len(),
        };
        super::pad4(4 + info)
    }

    pub(crate) fn emit(&self, w: &mut Writer) {
        let start = w.begin_tlv(self.code().to_be_bytes());
        match self {
            ErrorCause::InvalidStreamIdentifier { stream_id } => {
                w.u16(*stream_id);
                w.u16(0);
            }
            ErrorCause::MissingMandatoryParameter { missing } => {
                w.u32(u32::try_from(missing.len()).unwrap_or(u32::MAX));
                missing.iter().for_each(|t| w.u16(*t));
            }
            ErrorCause::StaleCookie { staleness_us } => w.u32(*staleness_us),
            ErrorCause::NoUserData { tsn } => w.u32(*tsn),
            ErrorCause::OutOfResource
            | ErrorCause::InvalidMandatoryParameter
            | ErrorCause::CookieReceivedWhileShuttingDown => {}
            ErrorCause::UnresolvableAddress { address: v }
            | ErrorCause::UnrecognizedChunkType { chunk: v }
            | ErrorCause::UnrecognizedParameters { params: v }
            | ErrorCause::RestartWithNewAddresses { addresses: v }
            | ErrorCause::UserInitiatedAbort { reason: v }
            | ErrorCause::ProtocolViolation { info: v }
            | ErrorCause::Unknown { value: v, .. } => w.bytes(v),
        }
        w.end_tlv(start);
    }
}
