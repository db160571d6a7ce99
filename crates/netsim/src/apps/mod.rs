//! Traffic sources and sinks that run as agents on hosts.
//!
//! * [`udp`]: constant bit rate source and a measuring sink.
//! * [`vbr`]: variable bit rate UDP source (random packet sizes and gaps).
//! * [`onoff`]: exponential on/off UDP source.
//! * [`tcp`]: bulk transfer over TCP and a TCP sink.
//! * [`sctp`]: bulk transfer, sink and request/response over SCTP sockets.

pub mod handover;
pub mod onoff;
pub mod sctp;
pub mod tcp;
pub mod udp;
pub mod vbr;
