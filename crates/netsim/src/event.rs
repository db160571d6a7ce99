//! What happens in the simulator, as values: the kernel's events (small `Copy` ids), why and
//! where packets are dropped, and the events the network reports while it forwards packets.
//! A leaf module: it uses only ids, time and packets, so the network, the agents, the
//! recorder and the world can all speak it without depending on one another.

use std::net::Ipv4Addr;

use crate::ids::{AgentId, IfaceId, LinkId, NodeId};
use crate::time::Instant;
use crate::wire::Packet;

/// Everything that can happen. Ids only: a future-event list of small `Copy` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The transmitter of a link direction finished a packet.
    TxDone {
        /// Link.
        link: LinkId,
        /// Direction (index of the sending end).
        side: u8,
        /// Transmitter generation when scheduled.
        gen: u32,
    },
    /// The oldest packet on a link direction reaches the far end.
    Arrive {
        /// Link.
        link: LinkId,
        /// Direction (index of the sending end).
        side: u8,
        /// Wire generation when scheduled.
        gen: u32,
    },
    /// An agent's timer.
    Timer {
        /// Whose.
        agent: AgentId,
        /// Agent-defined token.
        token: u64,
    },
    /// A scheduled fault (index into the fault list).
    Fault(u32),
    /// Time-series sampling instant.
    Sample,
}

/// Why a packet was dropped. Every drop in the simulator carries one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// The output queue was full.
    QueueFull,
    /// An active queue management algorithm dropped it early.
    QueueEarly,
    /// The link was down (queued, being transmitted, in flight, or offered while down).
    LinkDown,
    /// The sending or receiving interface was administratively down.
    IfaceDown,
    /// The node had no route to the destination.
    NoRoute,
    /// The TTL reached zero at a router.
    TtlExpired,
    /// Larger than the link MTU (the simulator never fragments).
    MtuExceeded,
    /// Lost by the link's random loss model (bit errors, channel loss).
    LinkLoss,
    /// Reached a host that does not own the destination address (hosts do not forward).
    NotForThisHost,
    /// No application or transport endpoint bound to the destination port / protocol.
    PortUnreachable,
    /// The IP header could not be parsed.
    Malformed,
}

impl DropReason {
    /// Every reason, in reporting order.
    pub const ALL: [DropReason; 11] = [
        DropReason::QueueFull,
        DropReason::QueueEarly,
        DropReason::LinkDown,
        DropReason::IfaceDown,
        DropReason::NoRoute,
        DropReason::TtlExpired,
        DropReason::MtuExceeded,
        DropReason::LinkLoss,
        DropReason::NotForThisHost,
        DropReason::PortUnreachable,
        DropReason::Malformed,
    ];

    /// The name used in results (`drops_<name>` scalars, event details).
    pub fn name(self) -> &'static str {
        match self {
            DropReason::QueueFull => "queue_full",
            DropReason::QueueEarly => "queue_early",
            DropReason::LinkDown => "link_down",
            DropReason::IfaceDown => "iface_down",
            DropReason::NoRoute => "no_route",
            DropReason::TtlExpired => "ttl_expired",
            DropReason::MtuExceeded => "mtu_exceeded",
            DropReason::LinkLoss => "link_loss",
            DropReason::NotForThisHost => "not_for_this_host",
            DropReason::PortUnreachable => "port_unreachable",
            DropReason::Malformed => "malformed",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Drop counters by reason.
#[derive(Clone, Copy, Debug, Default)]
pub struct DropCounts([u64; DropReason::ALL.len()]);

impl DropCounts {
    /// Count one drop.
    #[inline]
    pub fn add(&mut self, reason: DropReason) {
        self.0[reason.index()] += 1;
    }
    /// Drops for one reason.
    pub fn get(&self, reason: DropReason) -> u64 {
        self.0[reason.index()]
    }
    /// All drops.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
}

/// Where in the network something happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// In a node (routing, delivery).
    Node(NodeId),
    /// At an interface: its output queue, its transmitter, its receiver.
    Iface(IfaceId),
    /// On a link, in the direction whose transmitter is the given interface.
    Link(LinkId, IfaceId),
}

/// What the network reports while it forwards packets. Borrowed, so reporting one costs
/// nothing but the branch that decides to (see [`NetObserver::tracing`]).
#[derive(Debug)]
pub enum NetEvent<'a> {
    /// A packet entered an output queue; `backlog` is the queue length after it.
    Enqueue {
        /// The interface whose queue it is.
        iface: IfaceId,
        /// The packet.
        pkt: &'a Packet,
        /// Packets in the queue afterwards.
        backlog: usize,
    },
    /// A packet left an output queue to be transmitted.
    Dequeue {
        /// The interface whose queue it is.
        iface: IfaceId,
        /// The packet.
        pkt: &'a Packet,
    },
    /// A packet started transmission on an interface.
    Tx {
        /// Sending interface.
        iface: IfaceId,
        /// The packet.
        pkt: &'a Packet,
    },
    /// A packet was fully received on an interface.
    Rx {
        /// Receiving interface.
        iface: IfaceId,
        /// The packet.
        pkt: &'a Packet,
    },
    /// A packet was dropped (always reported: flows count their drops).
    Drop {
        /// Why.
        reason: DropReason,
        /// Where.
        at: Location,
        /// The packet.
        pkt: &'a Packet,
    },
}

/// Who hears what the network reports: the world's recorder (flow statistics, trace sinks),
/// or a test. The network counts drops per location itself; everything else is the
/// observer's business.
pub trait NetObserver {
    /// True if packet events other than drops are wanted (a trace sink is attached): the
    /// network reports [`NetEvent::Enqueue`], `Dequeue`, `Tx` and `Rx` only then.
    fn tracing(&self) -> bool;
    /// Something happened at `now`.
    fn report(&mut self, now: Instant, event: &NetEvent<'_>);
}

/// An observer that ignores everything (for code paths that report nothing, and tests).
#[derive(Clone, Copy, Debug, Default)]
pub struct Ignore;

impl NetObserver for Ignore {
    fn tracing(&self) -> bool {
        false
    }
    fn report(&mut self, _now: Instant, _event: &NetEvent<'_>) {}
}

/// A change to an interface, told to every agent on its node
/// ([`crate::agent::Agent::on_iface_event`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IfaceEvent {
    /// The interface came up: it sends and receives again.
    Up,
    /// The interface went down: what it held is lost, it neither sends nor receives.
    Down,
    /// The interface got this address (routes now reach it).
    AddressAdded(Ipv4Addr),
    /// The interface lost this address (packets to it no longer arrive).
    AddressRemoved(Ipv4Addr),
}
