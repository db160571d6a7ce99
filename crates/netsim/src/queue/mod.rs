//! Queue disciplines: the output queue of each link direction.
//!
//! # The contract
//!
//! Every packet a channel transmits passes its discipline: the channel offers it
//! ([`QueueDisc::enqueue`]) and takes the next packet to send ([`QueueDisc::dequeue`]) whenever
//! its transmitter is free. A packet that finds the transmitter idle is offered and the next
//! packet taken at once, at the same instant ([`QueueDisc::enqueue_dequeue`]); with drop-tail this
//! is exactly a packet that never waited.
//!
//! A discipline may, at enqueue and at dequeue,
//! - drop the arriving packet ([`Enqueued::Dropped`]) or any resident packet (pushed onto the
//!   `dropped` list the channel hands in),
//! - set Congestion Experienced on an ECN-capable packet ([`crate::wire::Packet::mark_ce`],
//!   RFC 3168 §5) and say so ([`Enqueued::Queued::marked`], [`Dequeued::marked`]).
//!
//! Every drop and mark carries a [`QueueReason`] the discipline defines (drop-tail:
//! [`droptail::OVERFLOW`]; an AQM adds its own, such as an early and a forced drop). Reasons are an
//! open set: the recorder counts them per interface, that is per discipline instance, and per
//! flow, under the reason's name. A discipline may also report statistics of its own
//! ([`QueueDisc::stats`]).
//!
//! A discipline is built by [`QueueConfig::build`] with the link direction's rate, propagation
//! delay and MTU and its own random stream ([`QueueContext`]), derived from a stable name
//! (`link/<link>/<iface>/queue`), so adding a discipline never changes another component's
//! numbers. Scenario files choose a discipline by name (`queue.kind`, one of [`KINDS`]).
//!
//! Disciplines are work-conserving: while packets are resident, `dequeue` returns one unless it
//! drops them all.

/// The [`QueueDisc`] methods that only count or empty a discipline's FIFO (its field `$fifo`,
/// a [`fifo::Fifo`]): drop-tail and the classic AQMs keep their packets in one and differ
/// only in what they admit.
macro_rules! fifo_occupancy {
    ($fifo:ident) => {
        #[inline(always)]
        fn len_packets(&self) -> usize {
            self.$fifo.len()
        }

        #[inline(always)]
        fn len_bytes(&self) -> usize {
            self.$fifo.bytes()
        }

        fn flush(&mut self) -> Vec<Packet> {
            self.$fifo.flush()
        }
    };
}

pub mod blue;
pub mod codel;
pub mod droptail;
mod fifo;
pub mod fq_codel;
pub mod fred;
pub mod pi;
pub mod pie;
pub mod red;
pub mod rem;

pub use blue::{Blue, BlueConfig};
pub use codel::{CoDel, CodelConfig, CodelParams};
pub use droptail::DropTail;
pub use fq_codel::{FqCodel, FqCodelConfig};
pub use fred::{Fred, FredConfig};
pub use pi::{Pi, PiConfig};
pub use pie::{Pie, PieConfig, PieDelay};
pub use red::{Red, RedConfig};
pub use rem::{Rem, RemConfig};

use std::sync::Arc;

pub use crate::event::QueueReason;
use crate::rng::SimRng;
use crate::time::{Duration, Instant};
use crate::wire::Packet;

/// What became of an offered packet.
#[derive(Debug)]
pub enum Enqueued {
    /// The packet joined the queue.
    Queued {
        /// Set when the discipline marked it Congestion Experienced, with the reason.
        marked: Option<QueueReason>,
    },
    /// The packet was refused; it is handed back with the reason.
    Dropped(Packet, QueueReason),
}

/// The packet a discipline releases for transmission.
#[derive(Debug)]
pub struct Dequeued {
    /// The packet.
    pub pkt: Packet,
    /// Set when the discipline marked it Congestion Experienced on its way out, with the reason.
    pub marked: Option<QueueReason>,
}

impl Dequeued {
    /// A packet released unmarked.
    #[inline]
    pub fn plain(pkt: Packet) -> Self {
        Dequeued { pkt, marked: None }
    }
}

/// What became of a packet offered to an idle transmitter ([`QueueDisc::enqueue_dequeue`]).
#[derive(Debug)]
pub enum Passed {
    /// The arrival itself is the packet to send, unmarked, and nothing else happened: nothing
    /// dropped, nothing kept back.
    Through(Packet),
    /// Anything else: what became of the arrival, and the packet released, if any.
    Otherwise(Enqueued, Option<Dequeued>),
}

/// Resident packets a discipline dropped during one call, with their reasons, in the order
/// dropped. The channel owns the list and reuses it, so dropping allocates nothing once warm.
pub type Dropped = Vec<(Packet, QueueReason)>;

/// A named statistic a discipline reports at the end of a run (an `iface` scalar).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueStat {
    /// Metric name; prefixed by the discipline (`red_avg_queue`).
    pub name: &'static str,
    /// Value.
    pub value: f64,
    /// Unit (`packets`, `bytes`, `1`...).
    pub unit: &'static str,
}

/// A queue discipline.
///
/// Occupancy accessors must be O(1): they are read on every enqueue for statistics.
pub trait QueueDisc: Send {
    /// The discipline's name in the registry (one of [`KINDS`]).
    fn kind(&self) -> &'static str;
    /// Offer a packet arriving at `now`. Resident packets the discipline drops to admit it (or
    /// for any other reason) go onto `dropped`.
    fn enqueue(&mut self, pkt: Packet, now: Instant, dropped: &mut Dropped) -> Enqueued;
    /// The next packet to transmit, if any. Packets dropped on the way out (rather than sent)
    /// go onto `dropped`.
    fn dequeue(&mut self, now: Instant, dropped: &mut Dropped) -> Option<Dequeued>;
    /// Offer a packet that arrives while the transmitter is idle (so the queue is empty) and
    /// release the packet to send at once: exactly [`QueueDisc::enqueue`] followed by
    /// [`QueueDisc::dequeue`] at the same instant, which is what the default does. A discipline
    /// may override it to do both in one step (drop-tail hands the arrival straight back).
    #[inline]
    fn enqueue_dequeue(&mut self, pkt: Packet, now: Instant, dropped: &mut Dropped) -> Passed {
        let arrival = self.enqueue(pkt, now, dropped);
        let next = self.dequeue(now, dropped);
        match (arrival, next) {
            (Enqueued::Queued { marked: None }, Some(Dequeued { pkt, marked: None }))
                if dropped.is_empty() && self.len_packets() == 0 =>
            {
                Passed::Through(pkt)
            }
            (arrival, next) => Passed::Otherwise(arrival, next),
        }
    }
    /// Packets waiting.
    fn len_packets(&self) -> usize;
    /// Bytes waiting.
    fn len_bytes(&self) -> usize;
    /// Remove and return every waiting packet (a link or interface went down).
    fn flush(&mut self) -> Vec<Packet>;
    /// Statistics of the discipline's own, reported at the end of a run; none by default.
    fn stats(&self) -> Vec<QueueStat> {
        Vec::new()
    }
}

/// A built discipline, as a channel holds it: drop-tail by value, so the per-packet path calls
/// it directly (and the compiler sees through it); any other boxed.
pub enum Queue {
    /// Drop-tail.
    DropTail(DropTail),
    /// Any other discipline.
    Boxed(Box<dyn QueueDisc>),
}

impl Queue {
    /// Whether the discipline must be asked for a packet every time the transmitter frees,
    /// even with nothing queued: an AQM's dequeue from an empty queue updates its state
    /// (BLUE's idle time, PIE's catch-up, CoDel leaving its dropping state). Drop-tail's does
    /// nothing, so its transmitter's end is an event only when a packet waits for it.
    #[inline(always)]
    pub fn wants_every_departure(&self) -> bool {
        matches!(self, Queue::Boxed(_))
    }
}

macro_rules! delegate {
    ($self:ident, $q:ident => $call:expr) => {
        match $self {
            Queue::DropTail($q) => $call,
            Queue::Boxed($q) => $call,
        }
    };
}

impl QueueDisc for Queue {
    #[inline(always)]
    fn kind(&self) -> &'static str {
        delegate!(self, q => q.kind())
    }
    #[inline(always)]
    fn enqueue(&mut self, pkt: Packet, now: Instant, dropped: &mut Dropped) -> Enqueued {
        delegate!(self, q => q.enqueue(pkt, now, dropped))
    }
    #[inline(always)]
    fn dequeue(&mut self, now: Instant, dropped: &mut Dropped) -> Option<Dequeued> {
        delegate!(self, q => q.dequeue(now, dropped))
    }
    #[inline(always)]
    fn enqueue_dequeue(&mut self, pkt: Packet, now: Instant, dropped: &mut Dropped) -> Passed {
        delegate!(self, q => q.enqueue_dequeue(pkt, now, dropped))
    }
    #[inline(always)]
    fn len_packets(&self) -> usize {
        delegate!(self, q => q.len_packets())
    }
    #[inline(always)]
    fn len_bytes(&self) -> usize {
        delegate!(self, q => q.len_bytes())
    }
    fn flush(&mut self) -> Vec<Packet> {
        delegate!(self, q => q.flush())
    }
    fn stats(&self) -> Vec<QueueStat> {
        delegate!(self, q => q.stats())
    }
}

/// What a discipline is built with: the link direction it serves and its random stream.
#[derive(Clone, Debug)]
pub struct QueueContext {
    /// The direction's data rate in bit/s.
    pub rate_bps: u64,
    /// The direction's one-way propagation delay (RED's automatic queue weight uses it).
    pub delay: Duration,
    /// The direction's MTU in bytes (largest packet the queue will see).
    pub mtu: usize,
    /// The discipline's own random stream (`link/<link>/<iface>/queue`).
    pub rng: SimRng,
}

/// The capacity of a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    /// At most this many packets.
    Packets(usize),
    /// At most this many bytes (a packet that would exceed it is dropped).
    Bytes(usize),
}

/// The registry: the name of every discipline a scenario can choose (`queue.kind`).
pub const KINDS: &[&str] =
    &[DropTail::KIND, Red::KIND, Fred::KIND, Blue::KIND, Rem::KIND, Pi::KIND, CoDel::KIND, FqCodel::KIND, Pie::KIND];

/// Which discipline to build and with what parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueConfig {
    /// First in, first out; arrivals to a full queue are dropped.
    DropTail {
        /// Capacity.
        limit: QueueLimit,
    },
    /// Random Early Detection (Floyd & Jacobson 1993), gentle and adaptive variants.
    Red(RedConfig),
    /// Flow Random Early Drop (Lin & Morris 1997).
    Fred(FredConfig),
    /// BLUE (Feng et al. 2002).
    Blue(BlueConfig),
    /// Random Exponential Marking (Athuraliya, Low et al. 2001).
    Rem(RemConfig),
    /// The PI controller (Hollot, Misra, Towsley, Gong 2002).
    Pi(PiConfig),
    /// CoDel (RFC 8289): drops or marks at the head once the sojourn time has stayed above
    /// target for an interval ([`codel`]).
    CoDel(CodelConfig),
    /// FQ-CoDel (RFC 8290): flow queues served by deficit round robin, new flows first, each
    /// under its own CoDel ([`fq_codel`]).
    FqCodel(FqCodelConfig),
    /// PIE (RFC 8033): early drops at enqueue with a probability a PI controller sets from the
    /// queueing delay ([`pie`]).
    Pie(PieConfig),
    /// A discipline defined outside this crate (an experiment, a test), built by a function.
    /// Scenario files cannot name it; the Rust API can.
    Custom(CustomQueue),
}

/// How to build a discipline defined outside this crate.
#[derive(Clone)]
pub struct CustomQueue {
    kind: &'static str,
    build: Arc<dyn Fn(QueueContext) -> Box<dyn QueueDisc> + Send + Sync>,
}

impl CustomQueue {
    /// A discipline called `kind`, built by `build` for each link direction that uses it.
    pub fn new(kind: &'static str, build: impl Fn(QueueContext) -> Box<dyn QueueDisc> + Send + Sync + 'static) -> Self {
        CustomQueue { kind, build: Arc::new(build) }
    }
}

impl std::fmt::Debug for CustomQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CustomQueue").field("kind", &self.kind).finish_non_exhaustive()
    }
}

/// Two custom configurations are equal when they share the kind and the very same builder.
impl PartialEq for CustomQueue {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && Arc::ptr_eq(&self.build, &other.build)
    }
}

impl QueueConfig {
    /// The discipline's name (in the registry, [`KINDS`], unless custom).
    pub fn kind(&self) -> &'static str {
        match self {
            QueueConfig::DropTail { .. } => DropTail::KIND,
            QueueConfig::Red(_) => Red::KIND,
            QueueConfig::Fred(_) => Fred::KIND,
            QueueConfig::Blue(_) => Blue::KIND,
            QueueConfig::Rem(_) => Rem::KIND,
            QueueConfig::Pi(_) => Pi::KIND,
            QueueConfig::CoDel(_) => CoDel::KIND,
            QueueConfig::FqCodel(_) => FqCodel::KIND,
            QueueConfig::Pie(_) => Pie::KIND,
            QueueConfig::Custom(c) => c.kind,
        }
    }

    /// Check the parameters for a link direction of `rate_bps` and `delay` (some defaults are
    /// derived from them). [`QueueConfig::build`] expects a configuration that passes.
    pub fn check(&self, rate_bps: u64, delay: Duration) -> Result<(), ParamError> {
        match self {
            QueueConfig::DropTail { .. } | QueueConfig::Custom(_) => Ok(()),
            QueueConfig::Red(c) => c.resolve(rate_bps, delay).map(|_| ()),
            QueueConfig::Fred(c) => c.check(),
            QueueConfig::Blue(c) => c.check(),
            QueueConfig::Rem(c) => c.check(),
            QueueConfig::Pi(c) => c.check(),
            QueueConfig::CoDel(c) => c.params.check(),
            QueueConfig::FqCodel(c) => c.check(),
            QueueConfig::Pie(c) => c.check(),
        }
    }

    /// Build a fresh, empty queue for the link direction described by `ctx`.
    pub fn build(&self, ctx: QueueContext) -> Queue {
        match self {
            QueueConfig::DropTail { limit } => {
                let _ = ctx; // drop-tail needs neither the rate nor a random stream
                Queue::DropTail(DropTail::new(*limit))
            }
            QueueConfig::Red(c) => Queue::Boxed(Box::new(Red::new(c, ctx))),
            QueueConfig::Fred(c) => Queue::Boxed(Box::new(Fred::new(c, ctx))),
            QueueConfig::Blue(c) => Queue::Boxed(Box::new(Blue::new(c, ctx))),
            QueueConfig::Rem(c) => Queue::Boxed(Box::new(Rem::new(c, ctx))),
            QueueConfig::Pi(c) => Queue::Boxed(Box::new(Pi::new(c, ctx))),
            QueueConfig::CoDel(c) => Queue::Boxed(Box::new(CoDel::new(c.params, c.limit, ctx.mtu))),
            QueueConfig::FqCodel(c) => Queue::Boxed(Box::new(FqCodel::new(*c, ctx.mtu, ctx.rng))),
            QueueConfig::Pie(c) => Queue::Boxed(Box::new(Pie::new(*c, ctx.mtu, ctx.rng))),
            QueueConfig::Custom(c) => Queue::Boxed((c.build)(ctx)),
        }
    }
}

/// A parameter of a discipline that is out of range or inconsistent with another.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct ParamError {
    /// The parameter's name, as a scenario spells it (`max_th`).
    pub key: &'static str,
    /// What is wrong, with the offending value.
    pub message: String,
}

impl ParamError {
    /// An error about `key`.
    pub fn new(key: &'static str, message: impl Into<String>) -> Self {
        ParamError { key, message: message.into() }
    }
}

/// `Ok` if `value` lies in `range`, else an error naming `key` and the value.
pub(crate) fn in_range(key: &'static str, value: f64, range: std::ops::RangeInclusive<f64>) -> Result<(), ParamError> {
    if range.contains(&value) {
        Ok(())
    } else {
        Err(ParamError::new(key, format!("{value} is out of range (expected {} to {})", range.start(), range.end())))
    }
}

/// `Ok` if `value` is more than zero (and finite), else an error naming `key` and the value.
pub(crate) fn positive(key: &'static str, value: f64) -> Result<(), ParamError> {
    if value > 0.0 && value.is_finite() {
        Ok(())
    } else {
        Err(ParamError::new(key, format!("{value} must be more than zero")))
    }
}

/// Packets and link contexts for the disciplines' unit tests.
#[cfg(test)]
pub(crate) mod test_support {
    use std::net::Ipv4Addr;

    use super::QueueContext;
    use crate::rng::RngTree;
    use crate::time::Duration;
    use crate::wire::{Ecn, Ipv4Fields, Packet, PacketMeta, PROTO_UDP};

    /// A UDP packet of `len` bytes (IPv4 header included) from 10.0.0.1 to 10.0.0.2 with
    /// the given flow, uid and ECN codepoint.
    pub(crate) fn udp_packet(len: usize, flow: u32, uid: u64, ecn: Ecn) -> Packet {
        let fields = Ipv4Fields {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            protocol: PROTO_UDP,
            ident: 0,
            ttl: 64,
        };
        let mut p = Packet::ipv4(fields, &vec![0; len - 20], PacketMeta { flow, uid });
        p.set_ecn(ecn).expect("an IPv4 packet takes an ECN codepoint");
        p
    }

    /// A link direction of `rate_bps` and `delay`, MTU 1500, with the stream `name` of a tree
    /// seeded with `seed`.
    pub(crate) fn context(rate_bps: u64, delay: Duration, seed: u64, name: &str) -> QueueContext {
        QueueContext { rate_bps, delay, mtu: 1500, rng: RngTree::new(seed).stream(name) }
    }
}
