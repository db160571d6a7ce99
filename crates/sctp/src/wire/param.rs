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

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::{parse_tlv_list, take_tlv, ErrorCause, Reader, WireError, Writer};

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
    /// Random (RFC 4895 §3.1).
    pub const RANDOM: ParamType = ParamType(0x8002);
    /// Chunk List (RFC 4895 §3.2).
    pub const CHUNK_LIST: ParamType = ParamType(0x8003);
    /// Requested HMAC Algorithm (RFC 4895 §3.3).
    pub const HMAC_ALGO: ParamType = ParamType(0x8004);
    /// Supported Extensions (RFC 5061 §4.2.7).
    pub const SUPPORTED_EXTENSIONS: ParamType = ParamType(0x8008);
    /// Add IP Address (RFC 5061 §4.2.1).
    pub const ADD_IP: ParamType = ParamType(0xC001);
    /// Delete IP Address (RFC 5061 §4.2.2).
    pub const DELETE_IP: ParamType = ParamType(0xC002);
    /// Error Cause Indication (RFC 5061 §4.2.3).
    pub const ERROR_CAUSE_INDICATION: ParamType = ParamType(0xC003);
    /// Set Primary Address (RFC 5061 §4.2.4).
    pub const SET_PRIMARY: ParamType = ParamType(0xC004);
    /// Success Indication (RFC 5061 §4.2.5).
    pub const SUCCESS_INDICATION: ParamType = ParamType(0xC005);
    /// Adaptation Layer Indication (RFC 5061 §4.2.6).
    pub const ADAPTATION_LAYER_INDICATION: ParamType = ParamType(0xC006);
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
    /// Random, type 0x8002 (RFC 4895 §3.1, INIT and INIT ACK): the sender's random number
    /// for the association shared key (32 bytes when this engine sends it).
    Random(Vec<u8>),
    /// Chunk List, type 0x8003 (RFC 4895 §3.2, INIT and INIT ACK): the chunk types the sender
    /// requires to be received authenticated, one byte each.
    ChunkList(Vec<u8>),
    /// Requested HMAC Algorithm, type 0x8004 (RFC 4895 §3.3, INIT and INIT ACK): HMAC
    /// identifiers (1 SHA-1, 3 SHA-256) in the sender's order of preference.
    HmacAlgo(Vec<u16>),
    /// Supported Extensions, type 0x8008 (RFC 5061 §4.2.7, INIT and INIT ACK): the chunk types
    /// of the extensions the sender supports, one byte each.
    SupportedExtensions(Vec<u8>),
    /// Add IP Address, type 0xC001 (RFC 5061 §4.2.1, ASCONF): add `address` to the
    /// association.
    ///
    /// ```text
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |        Type = 0xC001          |    Length = Variable          |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |               ASCONF-Request Correlation ID                   |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |                       Address Parameter                       |
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// ```
    AddIp {
        /// ASCONF-Request Correlation ID, echoed in the answer.
        correlation: u32,
        /// The address (an IPv4 or IPv6 Address parameter on the wire).
        address: IpAddr,
    },
    /// Delete IP Address, type 0xC002 (RFC 5061 §4.2.2, ASCONF); layout as Add IP Address.
    DeleteIp {
        /// ASCONF-Request Correlation ID.
        correlation: u32,
        /// The address to remove.
        address: IpAddr,
    },
    /// Error Cause Indication, type 0xC003 (RFC 5061 §4.2.3, ASCONF-ACK): the request with
    /// this correlation ID failed, for these causes.
    ErrorCauseIndication {
        /// ASCONF-Request Correlation ID of the refused request.
        correlation: u32,
        /// Why (RFC 5061 §5.2 causes, each carrying the refused request's TLV).
        causes: Vec<ErrorCause>,
    },
    /// Set Primary Address, type 0xC004 (RFC 5061 §4.2.4, ASCONF, also INIT / INIT ACK):
    /// the receiver should make `address` its primary destination.
    SetPrimary {
        /// ASCONF-Request Correlation ID.
        correlation: u32,
        /// The address to use as primary.
        address: IpAddr,
    },
    /// Success Indication, type 0xC005 (RFC 5061 §4.2.5, ASCONF-ACK): the request with this
    /// correlation ID succeeded (only sent when a later request failed, §5.2).
    SuccessIndication {
        /// ASCONF-Request Correlation ID.
        correlation: u32,
    },
    /// Adaptation Layer Indication, type 0xC006 (RFC 5061 §4.2.6, INIT / INIT ACK): a
    /// 32-bit code for the upper layer, passed to the peer's application.
    AdaptationLayerIndication(u32),
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
            Parameter::Random(_) => ParamType::RANDOM.0,
            Parameter::ChunkList(_) => ParamType::CHUNK_LIST.0,
            Parameter::HmacAlgo(_) => ParamType::HMAC_ALGO.0,
            Parameter::SupportedExtensions(_) => ParamType::SUPPORTED_EXTENSIONS.0,
            Parameter::AddIp { .. } => ParamType::ADD_IP.0,
            Parameter::DeleteIp { .. } => ParamType::DELETE_IP.0,
            Parameter::ErrorCauseIndication { .. } => ParamType::ERROR_CAUSE_INDICATION.0,
            Parameter::SetPrimary { .. } => ParamType::SET_PRIMARY.0,
            Parameter::SuccessIndication { .. } => ParamType::SUCCESS_INDICATION.0,
            Parameter::AdaptationLayerIndication(_) => ParamType::ADAPTATION_LAYER_INDICATION.0,
            Parameter::Unknown { param_type, .. } => *param_type,
        }
    }

    /// Whether `param_type` is one this module decodes into a named variant.
    pub fn is_known_type(param_type: u16) -> bool {
        matches!(param_type, 1 | 5..=9 | 11 | 12 | 0x8000 | 0x8002..=0x8004 | 0x8008 | 0xC001..=0xC006)
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
            ParamType::RANDOM => Parameter::Random(value.to_vec()),
            ParamType::CHUNK_LIST => Parameter::ChunkList(value.to_vec()),
            ParamType::HMAC_ALGO => {
                if !value.len().is_multiple_of(2) {
                    return Err(bad("Requested HMAC Algorithm parameter"));
                }
                let mut r = Reader::new(value, "Requested HMAC Algorithm parameter");
                Parameter::HmacAlgo((0..value.len() / 2).map(|_| r.u16()).collect::<Result<_, _>>()?)
            }
            ParamType::SUPPORTED_EXTENSIONS => Parameter::SupportedExtensions(value.to_vec()),
            ParamType::ADD_IP | ParamType::DELETE_IP | ParamType::SET_PRIMARY => {
                let mut r = Reader::new(value, "ASCONF address parameter");
                let correlation = r.u32()?;
                let address = parse_address(r.rest())?;
                match ParamType(param_type) {
                    ParamType::ADD_IP => Parameter::AddIp { correlation, address },
                    ParamType::DELETE_IP => Parameter::DeleteIp { correlation, address },
                    _ => Parameter::SetPrimary { correlation, address },
                }
            }
            ParamType::ERROR_CAUSE_INDICATION => {
                let mut r = Reader::new(value, "Error Cause Indication parameter");
                let correlation = r.u32()?;
                Parameter::ErrorCauseIndication { correlation, causes: ErrorCause::parse_list(r.rest())? }
            }
            ParamType::SUCCESS_INDICATION => {
                let a: [u8; 4] = value.try_into().map_err(|_| bad("Success Indication parameter"))?;
                Parameter::SuccessIndication { correlation: u32::from_be_bytes(a) }
            }
            ParamType::ADAPTATION_LAYER_INDICATION => {
                let a: [u8; 4] = value.try_into().map_err(|_| bad("Adaptation Layer Indication parameter"))?;
                Parameter::AdaptationLayerIndication(u32::from_be_bytes(a))
            }
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
            | Parameter::Random(v)
            | Parameter::ChunkList(v)
            | Parameter::SupportedExtensions(v)
            | Parameter::Unknown { value: v, .. } => v.len(),
            Parameter::Ipv4Address(_)
            | Parameter::CookiePreservative { .. }
            | Parameter::SuccessIndication { .. }
            | Parameter::AdaptationLayerIndication(_) => 4,
            Parameter::Ipv6Address(_) => 16,
            Parameter::SupportedAddressTypes(t) | Parameter::HmacAlgo(t) => 2 * t.len(),
            Parameter::EcnCapable => 0,
            Parameter::AddIp { address, .. }
            | Parameter::DeleteIp { address, .. }
            | Parameter::SetPrimary { address, .. } => 4 + address_param_len(address),
            Parameter::ErrorCauseIndication { causes, .. } => {
                4 + causes.iter().map(ErrorCause::buffer_len).sum::<usize>()
            }
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
            | Parameter::Random(v)
            | Parameter::ChunkList(v)
            | Parameter::SupportedExtensions(v)
            | Parameter::Unknown { value: v, .. } => w.bytes(v),
            Parameter::Ipv4Address(a) => w.bytes(&a.octets()),
            Parameter::Ipv6Address(a) => w.bytes(&a.octets()),
            Parameter::CookiePreservative { increment_ms } => w.u32(*increment_ms),
            Parameter::SupportedAddressTypes(types) | Parameter::HmacAlgo(types) => {
                types.iter().for_each(|t| w.u16(*t))
            }
            Parameter::EcnCapable => {}
            Parameter::AddIp { correlation, address }
            | Parameter::DeleteIp { correlation, address }
            | Parameter::SetPrimary { correlation, address } => {
                w.u32(*correlation);
                Parameter::from(*address).emit(w);
            }
            Parameter::ErrorCauseIndication { correlation, causes } => {
                w.u32(*correlation);
                causes.iter().for_each(|c| c.emit(w));
            }
            Parameter::SuccessIndication { correlation } => w.u32(*correlation),
            Parameter::AdaptationLayerIndication(code) => w.u32(*code),
        }
        w.end_tlv(start);
    }
}

impl From<IpAddr> for Parameter {
    /// The IPv4 or IPv6 Address parameter (§3.3.2.1) naming `a`.
    fn from(a: IpAddr) -> Self {
        match a {
            IpAddr::V4(v4) => Parameter::Ipv4Address(v4),
            IpAddr::V6(v6) => Parameter::Ipv6Address(v6),
        }
    }
}

impl Parameter {
    /// The address of an IPv4 or IPv6 Address parameter.
    pub fn address(&self) -> Option<IpAddr> {
        match self {
            Parameter::Ipv4Address(a) => Some(IpAddr::V4(*a)),
            Parameter::Ipv6Address(a) => Some(IpAddr::V6(*a)),
            _ => None,
        }
    }
}

/// Bytes of the Address Parameter naming `a` (8 for IPv4, 20 for IPv6).
pub(crate) fn address_param_len(a: &IpAddr) -> usize {
    if a.is_ipv4() {
        8
    } else {
        20
    }
}

/// One Address Parameter (IPv4 or IPv6, §3.3.2.1) filling `buf` exactly, as RFC 5061 §4.2
/// places one after a correlation ID or a serial number.
pub(crate) fn parse_address(mut buf: &[u8]) -> Result<IpAddr, WireError> {
    let length = buf.len();
    let ([t0, t1], value) = take_tlv(&mut buf, "Address Parameter")?;
    if !buf.is_empty() {
        return Err(WireError::BadLength { what: "Address Parameter", length });
    }
    Parameter::parse(u16::from_be_bytes([t0, t1]), value)?
        .address()
        .ok_or(WireError::BadLength { what: "Address Parameter", length })
}
