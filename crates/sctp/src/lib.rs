//! Sans-IO SCTP (RFC 9260) for sctpsim: the packet format ([`wire`]), associations with
//! multihoming, failover, the potentially-failed state of RFC 7829 and pluggable congestion
//! control ([`association`], [`congestion`]), the multipath seams ([`cmt`]: path scheduler,
//! retransmission-destination policy), and the [`Endpoint`] that owns associations
//! on one port. Nothing here does I/O or reads a clock: drivers (the simulator's hosts, a
//! UDP socket driver) pass datagrams and time in and take datagrams and timeouts out.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod association;
pub mod auth;
pub mod cmt;
pub mod config;
pub mod congestion;
pub mod endpoint;
pub mod plugin;
pub mod random;
pub mod wire;

pub use association::{
    AddressRequest, AsconfError, AssocStats, Association, BufferSplitting, CloseReason, Event, Generator, Message,
    Path, PathId, PathState, PathStats, Paths, PathsIter, SendError, SplitCounts, SplitShare, State, Timer, Transmit,
};
pub use config::{Config, Preset};
pub use congestion::{CongestionConfig, Controller};
pub use endpoint::{AssocId, Datagram, Endpoint, EndpointStats};
pub use plugin::Plugin;
pub use random::Entropy;
pub use wire::Checksum;
