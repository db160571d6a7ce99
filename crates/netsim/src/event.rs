//! What happens in the simulator, as values: the kernel's events (small `Copy` ids), why and
//! where packets are dropped, and the events the network reports while it forwards packets.
//! A leaf module: it uses only ids, time and packets, so the network, the agents, the
//! recorder and the world can all speak it without depending on one another.

use std::net::Ipv4Addr;

use crate::ids::{AgentId, FlowId, IfaceId, LinkId, NodeId};
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
    /// A WLAN channel's event ([`crate::wlan::medium`]).
    Wlan {
        /// The channel (index in the network's channels).
        medium: u32,
        /// What.
        timer: WlanTimer,
        /// A transmission or a radio, by the timer.
        arg: u32,
        /// Generation when scheduled (stale events are ignored).
        gen: u32,
    },
    /// A WLAN management timer ([`crate::wlan::sme`]).
    WlanMgmt {
        /// The AP (for `Tbtt`) or roaming station (otherwise), by index.
        who: u32,
        /// What.
        timer: MgmtTimer,
        /// Generation when scheduled (stale events are ignored).
        gen: u32,
    },
}

/// The management timers of WLAN APs and stations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MgmtTimer {
    /// An AP's target beacon transmission time.
    Tbtt,
    /// A station's current step ends: a scan's dwell on a channel, a request's timeout, the
    /// wait before scanning again.
    Phase,
    /// The signal strength of a station's AP may cross a threshold now.
    Crossing,
}

/// The events of a WLAN channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WlanTimer {
    /// The earliest backoff end: radios whose counter reaches zero send.
    Access,
    /// A transmission (`arg`) ends.
    TxEnd,
    /// A radio (`arg`) sends its response (ACK, CTS, or DATA after CTS) SIFS after a frame.
    Respond,
    /// A radio's (`arg`) ACK or CTS timeout.
    Timeout,
}

/// Why a queue discipline dropped or marked a packet: a name the discipline defines (see
/// [`crate::queue`]).
///
/// The name is the key in results (`drops_<name>`, `marks_<name>` scalars; `reason=<name>` in
/// events), so it must read well there and be unique to its meaning: a discipline reuses another's
/// name only for the same cause (several disciplines overflow their buffer: `queue_full`) and
/// otherwise prefixes its own (`red_early`, `red_forced`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QueueReason(pub &'static str);

impl QueueReason {
    /// The name used in results.
    #[inline]
    pub fn name(self) -> &'static str {
        self.0
    }
}

/// Why a packet was dropped. Every drop in the simulator carries one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// A queue discipline dropped it, for a reason of its own (drop-tail: the queue was full).
    Queue(QueueReason),
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
    /// A WLAN MAC gave up on the frame after its retry limit (IEEE 802.11-2020 §10.3.4.4).
    RetryLimit,
}

impl DropReason {
    /// Every reason outside the queue disciplines (whose reasons are an open set), in reporting
    /// order.
    pub const NETWORK: [DropReason; 10] = [
        DropReason::LinkDown,
        DropReason::IfaceDown,
        DropReason::NoRoute,
        DropReason::TtlExpired,
        DropReason::MtuExceeded,
        DropReason::LinkLoss,
        DropReason::NotForThisHost,
        DropReason::PortUnreachable,
        DropReason::Malformed,
        DropReason::RetryLimit,
    ];

    /// The name used in results (`drops_<name>` scalars, event details).
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Queue(reason) => reason.name(),
            DropReason::LinkDown => "link_down",
            DropReason::IfaceDown => "iface_down",
            DropReason::NoRoute => "no_route",
            DropReason::TtlExpired => "ttl_expired",
            DropReason::MtuExceeded => "mtu_exceeded",
            DropReason::LinkLoss => "link_loss",
            DropReason::NotForThisHost => "not_for_this_host",
            DropReason::PortUnreachable => "port_unreachable",
            DropReason::Malformed => "malformed",
            DropReason::RetryLimit => "retry_limit",
        }
    }

    /// Position in [`DropReason::NETWORK`]; `None` for a queue discipline's reason.
    fn network_index(self) -> Option<usize> {
        match self {
            DropReason::Queue(_) => None,
            DropReason::LinkDown => Some(0),
            DropReason::IfaceDown => Some(1),
            DropReason::NoRoute => Some(2),
            DropReason::TtlExpired => Some(3),
            DropReason::MtuExceeded => Some(4),
            DropReason::LinkLoss => Some(5),
            DropReason::NotForThisHost => Some(6),
            DropReason::PortUnreachable => Some(7),
            DropReason::Malformed => Some(8),
            DropReason::RetryLimit => Some(9),
        }
    }
}

/// Counters by queue-discipline reason, an open set: only the reasons that occurred are held,
/// in name order (so results list them the same way whatever order they happened in).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueCounts(Vec<(QueueReason, u64)>);

impl QueueCounts {
    /// Count one occurrence of `reason`.
    #[inline]
    pub fn add(&mut self, reason: QueueReason) {
        match self.0.binary_search_by(|(r, _)| r.name().cmp(reason.name())) {
            Ok(i) => self.0[i].1 += 1,
            Err(i) => self.0.insert(i, (reason, 1)),
        }
    }
    /// Occurrences of one reason.
    pub fn get(&self, reason: QueueReason) -> u64 {
        self.iter().find(|&(r, _)| r == reason).map_or(0, |(_, n)| n)
    }
    /// Occurrences of every reason.
    pub fn total(&self) -> u64 {
        self.0.iter().map(|(_, n)| n).sum()
    }
    /// The reasons that occurred with their counts, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (QueueReason, u64)> + '_ {
        self.0.iter().copied()
    }
}

/// Drop counters by reason.
#[derive(Clone, Debug, Default)]
pub struct DropCounts {
    queue: QueueCounts,
    network: [u64; DropReason::NETWORK.len()],
}

impl DropCounts {
    /// Count one drop.
    #[inline]
    pub fn add(&mut self, reason: DropReason) {
        match reason {
            DropReason::Queue(r) => self.queue.add(r),
            _ => {
                if let Some(i) = reason.network_index() {
                    self.network[i] += 1;
                }
            }
        }
    }
    /// Drops for one reason.
    pub fn get(&self, reason: DropReason) -> u64 {
        match reason {
            DropReason::Queue(r) => self.queue.get(r),
            _ => reason.network_index().map_or(0, |i| self.network[i]),
        }
    }
    /// All drops.
    pub fn total(&self) -> u64 {
        self.queue.total() + self.network.iter().sum::<u64>()
    }
    /// The reasons that occurred with their counts, in reporting order: the queue
    /// disciplines' reasons by name, then the network's in [`DropReason::NETWORK`] order.
    pub fn iter(&self) -> impl Iterator<Item = (DropReason, u64)> + '_ {
        let queue = self.queue.iter().map(|(r, n)| (DropReason::Queue(r), n));
        let network = DropReason::NETWORK.into_iter().zip(self.network).filter(|&(_, n)| n > 0);
        queue.chain(network)
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
    /// A queue discipline set Congestion Experienced on a packet instead of dropping it
    /// (RFC 3168 §5). Always reported: flows count their marks.
    Mark {
        /// The interface whose queue it is.
        iface: IfaceId,
        /// Why.
        reason: QueueReason,
        /// The packet's flow.
        flow: FlowId,
        /// The packet as marked, when the observer is tracing (a packet marked as it joins a
        /// queue is inside the queue by then: only a traced run pays for a copy of it).
        pkt: Option<&'a Packet>,
    },
}

/// Who hears what the network reports: the world's recorder (flow statistics, trace sinks),
/// or a test. The network counts drops per location itself; everything else is the
/// observer's business.
pub trait NetObserver {
    /// True if packet events other than drops and marks are wanted (a trace sink is attached):
    /// the network reports [`NetEvent::Enqueue`], `Dequeue`, `Tx` and `Rx` only then.
    fn tracing(&self) -> bool;
    /// True if events of `kind` are wanted: the network reports an event of that kind (and
    /// copies a packet for an `Enqueue` or a `Mark` event) only then. By default whenever
    /// [`NetObserver::tracing`] is; an observer whose sinks keep some kinds only says which.
    #[inline]
    fn traces(&self, kind: TracedKind) -> bool {
        let _ = kind;
        self.tracing()
    }
    /// Something happened at `now`.
    fn report(&mut self, now: Instant, event: &NetEvent<'_>);
}

/// The packet events the network builds only for an observer that wants them
/// ([`NetObserver::traces`]); `Mark` stands for a marked packet's copy in a [`NetEvent::Mark`],
/// which is reported in any case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TracedKind {
    /// [`NetEvent::Enqueue`].
    Enqueue,
    /// [`NetEvent::Dequeue`].
    Dequeue,
    /// [`NetEvent::Tx`].
    Tx,
    /// [`NetEvent::Rx`].
    Rx,
    /// The packet in a [`NetEvent::Mark`].
    Mark,
}

impl TracedKind {
    /// Every kind.
    pub const ALL: [TracedKind; 5] =
        [TracedKind::Enqueue, TracedKind::Dequeue, TracedKind::Tx, TracedKind::Rx, TracedKind::Mark];

    /// The kind's name in trace events (`TraceEvent::kind`, `record.events`).
    pub fn name(self) -> &'static str {
        match self {
            TracedKind::Enqueue => "enqueue",
            TracedKind::Dequeue => "dequeue",
            TracedKind::Tx => "tx",
            TracedKind::Rx => "rx",
            TracedKind::Mark => "mark",
        }
    }
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
