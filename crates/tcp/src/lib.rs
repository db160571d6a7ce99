//! `tcp`: a sans-IO TCP model for sctpsim's comparison and cross traffic.
//!
//! The engine never reads a clock, opens a socket or draws from a global random generator: a
//! driver hands a [`Connection`] segments and the current time, and pulls out segments to send
//! and the next instant it wants to be woken. The simulator's host driver (in `netsim`) and the
//! tests' two-endpoint harness are two such drivers.
//!
//! * [`wire`]: the TCP header and options (RFC 9293 §3.1, RFC 7323, RFC 2018) as a checked
//!   view and a typed representation, with the pseudo-header checksum.
//! * [`connection`]: the per-connection state machine, send and receive buffers, the SACK
//!   scoreboard, the retransmission timer (RFC 6298), delayed ACKs and loss recovery
//!   (RFC 5681, RFC 6582, RFC 6675).
//! * [`congestion`]: the [`congestion::Controller`] trait and its implementations, NewReno
//!   (RFC 5681) and CUBIC (RFC 9438), chosen by name through [`congestion::CcAlgorithm`].
#![deny(unsafe_code)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod congestion;
pub mod connection;
pub mod seq;
pub mod wire;

pub use congestion::CcAlgorithm;
pub use connection::{Config, Connection, Event, State, Stats};
pub use simtime::{Duration, Instant};
