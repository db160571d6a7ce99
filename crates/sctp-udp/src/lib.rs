//! The sans-IO SCTP engine ([`sctp`]) over real UDP sockets: SCTP over UDP (RFC 6951).
//!
//! What the simulator drives with virtual time and simulated links, this crate drives with
//! the monotonic clock and UDP sockets, unchanged: the same [`sctp::Endpoint`], the same
//! associations, the same configuration and presets.
//!
//! * [`UdpDriver`] is the driver: one UDP socket per local address, each bound on its own
//!   address (so the socket a packet arrives on tells the local address, and with it the
//!   path); the encapsulation port of each peer address is learnt from the packets it sends
//!   (RFC 6951 §5.4); the engine's time is [`simtime::Instant`], converted from
//!   [`std::time::Instant`] in one place ([`Clock`]); CRC32c computed and verified (a real
//!   network); the cookie secret, verification tags and initial TSNs from the OS CSPRNG
//!   ([`sctp::Entropy::Os`]). As a server it keeps no state for an INIT (the engine answers
//!   statelessly with a signed cookie), frees closed associations, and bounds their number:
//!   an INIT or COOKIE ECHO that would open one more is answered with an ABORT carrying
//!   "Out of Resource" (RFC 9260 §3.3.10.4) and counted.
//! * [`FaultPlan`]: packet loss injected on one local address from a given time, in both
//!   directions, so failover can be exercised on one machine (loopback has no netem here).
//! * [`run_send`] and [`run_sink`]: a bulk sender and a sink, with results in the
//!   simulator's shape ([`RealResult`]: scalars, time series, events; a pcap capture on
//!   request), so the same summaries and files serve both.
//!
//! # Why mio
//!
//! The loop is single-threaded and owns everything: the engine is sans-IO and wants a
//! datagram, the time, and a deadline — nothing more. `mio` is exactly readiness polling
//! (epoll on Linux) with a timeout, a small, widely used and maintained crate (the base of
//! tokio) with no runtime, no task scheduler and no allocation per wake-up. An async runtime
//! (tokio's current-thread scheduler) would add futures, wakers and a timer wheel around a
//! state machine that already has its own timer table, and would make the per-packet path
//! (receive, hand to the engine, send what it polls out) longer without buying anything.
//!
//! # The loop
//!
//! ```text
//! loop:
//!   application step (queue messages / read messages), engine outputs sent
//!   wait for readiness, at most until the engine's deadline or the next check-in
//!   for each datagram received: fault filter, admission check, Endpoint::handle_in_place,
//!       application step for that association, engine outputs sent
//!   Endpoint::handle_timeout when the deadline has passed, outputs sent
//!   every 100 ms: samples, the caller's check-in (progress, stop request)
//! ```

mod app;
mod batch;
mod clock;
mod driver;
mod fault;
mod pcap;
mod report;

pub use app::{run_send, run_sink, CheckMode, Control, NoControl, Progress, SendOptions, SinkOptions};
pub use clock::Clock;
pub use driver::{DriverError, DriverStats, LocalOptions, UdpDriver, DEFAULT_UDP_PORT, UDP_OVERHEAD};
pub use fault::{Fault, FaultPlan, FaultStart};
pub use pcap::PcapWriter;
pub use report::RealResult;
/// SCTP's CRC32c handling, for [`LocalOptions::checksum`].
pub use sctp::Checksum;
