//! Traffic sources and sinks that run as agents on hosts.

pub mod udp;
