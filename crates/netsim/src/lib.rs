//! `netsim`: the deterministic discrete-event network simulator under sctpsim.
//!
//! Layers, bottom up: [`time`] and [`kernel`] (clock and future-event list), [`ids`] and
//! [`event`] (entity ids, kernel events, drop reasons and what the network reports: leaf
//! modules anything may use), [`rng`] (per-component random streams), [`wire`] (real IPv4/UDP
//! bytes), [`queue`] and [`loss`] (per-direction link behaviour), [`routing`] (prefix routes),
//! [`network`] (nodes, interfaces and what they attach to, links, forwarding; it reports what
//! happens to a [`event::NetObserver`] and knows no agent, recorder or fault plan), [`agent`]
//! (applications and transport drivers living on hosts, seeing only their `Ctx`), [`apps`]
//! (traffic sources and sinks), [`fault`] (scheduled link/interface failures and address
//! changes), [`recorder`] (statistics, time series, events, trace sinks, pcap), [`packetlog`] (the
//! SCTP DATA/SACK log of `record.packets`) and [`world`]
//! (the event loop wiring network, agents, faults and recorder together).
#![deny(unsafe_code)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod agent;
pub mod apps;
pub mod event;
pub mod fault;
pub mod ids;
pub mod kernel;
pub mod loss;
pub mod mobility;
pub mod network;
pub mod packetlog;
pub mod pcap;
pub mod queue;
pub mod recorder;
pub mod rng;
pub mod routing;
pub mod stats;
pub mod transport;
pub use simtime as time;
pub mod wire;
pub mod wlan;
pub mod world;

pub use time::{Duration, Instant};
