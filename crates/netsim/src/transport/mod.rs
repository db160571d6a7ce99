//! Transport drivers: agents that run a sans-IO protocol engine inside the simulator.
//!
//! A driver owns engine state, hands it the packets that arrive and the timer instants it
//! asked for, and turns what the engine wants to send into IPv4 packets. Applications
//! ([`crate::apps`]) sit on top of a driver.

pub mod sctp;
pub mod sctp_report;
pub mod tcp;
pub mod timer;
