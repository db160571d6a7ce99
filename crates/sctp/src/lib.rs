//! Sans-IO SCTP (RFC 9260) for sctpsim.
//!
//! This crate will hold the SCTP association engine, driven by netsim agents and by a
//! UDP driver; it never does I/O itself. For now it contains only [`wire`]: the packet
//! format (common header, chunks, parameters, error causes) as checked zero-copy views
//! plus a typed representation with `parse`/`emit`.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod wire;
