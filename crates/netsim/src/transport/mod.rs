//! Transport drivers: netsim agents that run a sans-IO protocol engine on a host, hand it
//! the packets addressed to it and the current time, and send what it produces.

pub mod sctp;
