//! Variable-length parameters of INIT and INIT ACK, and the Heartbeat Info parameter
//! (RFC 9260 §3.2.1, §3.3.2.1, §3.3.3.1, §3.3.5).
//!
//! Every parameter is a TLV:
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |        Parameter Type         |       Parameter Length        |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! \                                                               \
//! /                       Parameter Value                         /
//! \                                                               \
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! Parameter Length counts the 4-byte header and the value, not the padding.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::{parse_tlv_list, Reader, WireError, Writer};

/// A parameter type code (§3.2.1), with a name for each type RFC 9260 defines. Any other
/// value is a type this engine does not know, handled by its upper two bits
/// ([`super::unknown_parameter_action`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ParamType(pub u16);

impl ParamType {
    /// Heartbeat Info, §3.3.5.
    pub const HEARTBEAT_INFO: ParamType = ParamType(1);
    /// IPv4 Address, §3.3.2.1.1.
    pub const IPV4_ADDRESS: ParamType = ParamType(5);
    /// IPv6 Address, §3.3.2.1.2.
    pub const IPV6_ADDRESS: ParamType = ParamType(6);
    /// State Cookie, §3.3.3.1.
    pub const STATE_COOKIE: ParamType = ParamType(7);
    /// Unrecognized Parameter, §3.3.3.1.
    pub const UNRECOGNIZED_PARAMETER: ParamType = ParamType(8);
    /// Cookie Preservative, §3.3.2.1.3.
    pub const COOKIE_PRESERVATIVE: ParamType = ParamType(9);
    /// Host Name Address (deprecated), §3.3.2.1.4.
    pub const HOST_NAME_ADDRESS: ParamType = ParamType(11);
    /// Supported Address Types, §3.3.2.1.5.
    pub const SUPPORTED_ADDRESS_TYPES: ParamType = ParamType(12);
    /// ECN Capable (RFC 9260 Appendix A).
    pub const ECN_CAPABLE: ParamType = ParamType(0x8000);
}

/// A parameter in INIT / INIT ACK (and the Heartbeat Info parameter of HEARTBEAT).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parameter {
    /// Heartbeat Info, type 1 (§3.3.5): opaque sender-specific information, echoed back
    /// unchanged in HEARTBEAT ACK.
    HeartbeatInfo(Vec<u8>),
    /// IPv4 Address, type 5 (§3.3.2.1.1): 4-byte address.
    ///
    /// ```text
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |        Type = 5               |      Length = 8               |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |                        IPv4 Address                           |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// ```
    Ipv4Address(Ipv4Addr),
    /// IPv6 Address, type 6 (§3.3.2.1.2): 16-byte address, length 20.
    Ipv6Address(Ipv6Addr),
    /// State Cookie, type 7 (§3.3.3.1, INIT ACK only): opaque to the receiver.
    StateCookie(Vec<u8>),
    /// Unrecognized Parameter, type 8 (§3.3.3.1, INIT ACK only): the complete
    /// unrecognized parameter TLV(s) copied from the INIT, kept as raw bytes.
    UnrecognizedParameter(Vec<u8>),
    /// Cookie Preservative, type 9 (§3.3.2.1.3, INIT only): requested extra cookie
    /// lifetime.
    ///
    /// ```text
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |          Type = 9             |          Length = 8           |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |         Suggested Cookie Life-Span Increment (msec.)          |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// ```
    CookiePreservative {
        /// Suggested cookie life-span increment in milliseconds.
        increment_ms: u32,
    },
    /// Host Name Address, type 11 (§3.3.2.1.4): deprecated by RFC 9260; the engine must
    /// not send it and answers it with an Unresolvable Address error. Kept as the raw
    /// (NUL-terminated) host name bytes.
    HostNameAddress(Vec<u8>),
    /// Supported Address Types, type 12 (§3.3.2.1.5, INIT only): list of parameter types
    /// (5 = IPv4, 6 = IPv6) the sender can use.
    ///
    /// ```text
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |          Type = 12            |          Length               |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |        Address Type #1        |        Address Type #2        |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |                            ......                             |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// ```
    SupportedAddressTypes(Vec<u16>),
    /// ECN Capable, type 0x8000 (RFC 9260 Appendix A, INIT and INIT ACK): the sender supports
    /// ECN. No value; length 4.
    ///
    /// ```text
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |     Parameter Type=32768      |     Parameter Length=4        |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// ```
    EcnCapable,
    /// Any other type, to be handled by
    /// [`super::unknown_parameter_action`].
    Unknown {
        /// Parameter type.
        param_type: u16,
        /// Parameter value (without header and padding).
        value: Vec<u8>,
    },
}

impl Parameter {
    /// Parameter type code.
    pub fn param_type(&self) -> u16 {
        match self {
            Parameter::HeartbeatInfo(_) => ParamType::HEARTBEAT_INFO.0,
            Parameter::Ipv4Address(_) => ParamType::IPV4_ADDRESS.0,
            Parameter::Ipv6Address(_) => ParamType::IPV6_ADDRESS.0,
            Parameter::StateCookie(_) => ParamType::STATE_COOKIE.0,
            Parameter::UnrecognizedParameter(_) => ParamType::UNRECOGNIZED_PARAMETER.0,
            Parameter::CookiePreservative { .. } => ParamType::COOKIE_PRESERVATIVE.0,
            Parameter::HostNameAddress(_) => ParamType::HOST_NAME_ADDRESS.0,
            Parameter::SupportedAddressTypes(_) => ParamType::SUPPORTED_ADDRESS_TYPES.0,
            Parameter::EcnCapable => ParamType::ECN_CAPABLE.0,
            Parameter::Unknown { param_type, .. } => *param_type,
        }
    }

    /// Whether `param_type` is one this module decodes into a named variant.
    pub fn is_known_type(param_type: u16) -> bool {
        matches!(param_type, 1 | 5..=9 | 11 | 12 | 0x8000)
    }

    /// Parses one parameter from its type and value.
    pub fn parse(param_type: u16, value: &[u8]) -> Result<Parameter, WireError> {
        let bad = |what| WireError::BadLength { what, length: value.len() + 4 };
        Ok(match ParamType(param_type) {
            ParamType::HEARTBEAT_INFO => Parameter::HeartbeatInfo(value.to_vec()),
            ParamType::IPV4_ADDRESS => {
                let a: [u8; 4] = value.try_into().map_err(|_| bad("IPv4 Address parameter"))?;
                Parameter::Ipv4Address(Ipv4Addr::from(a))
            }
            ParamType::IPV6_ADDRESS => {
                let a: [u8; 16] = value.try_into().map_err(|_| bad("IPv6 Address parameter"))?;
                Parameter::Ipv6Address(Ipv6Addr::from(a))
            }
            ParamType::STATE_COOKIE => Parameter::StateCookie(value.to_vec()),
            ParamType::UNRECOGNIZED_PARAMETER => Parameter::UnrecognizedParameter(value.to_vec()),
            ParamType::COOKIE_PRESERVATIVE => {
                let a: [u8; 4] = value.try_into().map_err(|_| bad("Cookie Preservative parameter"))?;
                Parameter::CookiePreservative { increment_ms: u32::from_be_bytes(a) }
            }
            ParamType::HOST_NAME_ADDRESS => Parameter::HostNameAddress(value.to_vec()),
            ParamType::SUPPORTED_ADDRESS_TYPES => {
                if !value.len().is_multiple_of(2) {
                    return Err(bad("Supported Address Types parameter"));
                }
                let mut r = Reader::new(value, "Supported Address Types parameter");
                let types = (0..value.len() / 2).map(|_| r.u16()).collect::<Result<_, _>>()?;
                Parameter::SupportedAddressTypes(types)
            }
            ParamType::ECN_CAPABLE if value.is_empty() => Parameter::EcnCapable,
            ParamType::ECN_CAPABLE => return Err(bad("ECN Capable parameter")),
            _ => Parameter::Unknown { param_type, value: value.to_vec() },
        })
    }

    /// Parses a list of parameters filling `buf` (the tail of an INIT, for example).
    pub fn parse_list(buf: &[u8]) -> Result<Vec<Parameter>, WireError> {
        parse_tlv_list(buf, "parameter", Parameter::parse)
    }

    /// The parameters as consecutive TLVs (the inverse of [`Parameter::parse_list`]), e.g.
    /// for error causes that carry parameters (§3.3.10.11).
    pub fn emit_list(params: &[Parameter]) -> Vec<u8> {
        let mut w = Writer::new(Vec::with_capacity(params.iter().map(Parameter::buffer_len).sum()));
        for p in params {
            p.emit(&mut w);
        }
        w.into_inner()
    }

    /// Bytes this parameter takes on the wire, padding included.
    pub fn buffer_len(&self) -> usize {
        let value = match self {
            Parameter::HeartbeatInfo(v)
            | Parameter::StateCookie(v)
            | Parameter::UnrecognizedParameter(v)
            | Parameter::HostNameAddress(v)
            | Parameter::Unknown { value: v, .. } => v.len(),
            Parameter::Ipv4Address(_) | Parameter::CookiePreservative { .. } => 4,
            Parameter::Ipv6Address(_) => 16,
            Parameter::SupportedAddressTypes(t) => 2 * t.len(),
            Parameter::EcnCapable => 0,
        };
        super::pad4(4 + value)
    }

    pub(crate) fn emit(&self, w: &mut Writer) {
        let start = w.begin_tlv(self.param_type().to_be_bytes());
        match self {
            Parameter::HeartbeatInfo(v)
            | Parameter::StateCookie(v)
            | Parameter::UnrecognizedParameter(v)
            | Parameter::HostNameAddress(v)
            | Parameter::Unknown { value: v, .. } => w.bytes(v),
            Parameter::Ipv4Address(a) => w.bytes(&a.octets()),
            Parameter::Ipv6Address(a) => w.bytes(&a.octets()),
            Parameter::CookiePreservative { increment_ms } => w.u32(*increment_ms),
            Parameter::SupportedAddressTypes(types) => types.iter().for_each(|t| w.u16(*t)),
            Parameter::EcnCapable => {}
        }
        w.end_tlv(start);
    }
}
