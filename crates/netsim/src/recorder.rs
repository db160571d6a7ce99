//! What a run records: typed trace events going to sinks, per-entity counters, sampled time
//! series and the final table of scalars.
//!
//! Counters are plain integers updated in place (they cost next to nothing and are always on).
//! Trace events are built only when at least one sink is attached, so a run that asks for no
//! event log and no capture pays one branch per potential event.

use std::net::Ipv4Addr;

use rustc_hash::FxHashMap;

use crate::network::{IfaceId, LinkId, NodeId};
use crate::queue::QueueReason;
use crate::stats::DelayStats;
use crate::time::Instant;
use crate::wire::Packet;

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
}

impl DropReason {
    /// Every reason outside the queue disciplines (whose reasons are an open set), in reporting
    /// order.
    pub const NETWORK: [DropReason; 9] = [
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

/// A typed trace event. Borrowed, so building one costs nothing but the branch that decides to.
#[derive(Debug)]
pub enum TraceEvent<'a> {
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
    /// A packet was dropped.
    Drop {
        /// Why.
        reason: DropReason,
        /// Where.
        at: Location,
        /// The packet.
        pkt: &'a Packet,
    },
    /// A queue discipline set Congestion Experienced on a packet instead of dropping it
    /// (RFC 3168 §5).
    Mark {
        /// The interface whose queue it is.
        iface: IfaceId,
        /// Why.
        reason: QueueReason,
        /// The packet, as marked.
        pkt: &'a Packet,
    },
    /// A scheduled fault took effect.
    Fault {
        /// The entity affected (link or interface name).
        entity: &'a str,
        /// What happened (`link-down`, `iface-up`, ...).
        action: &'a str,
    },
    /// An event from an agent (application or transport), already rendered.
    Agent {
        /// Event kind (for filtering), e.g. `path-state`.
        kind: &'a str,
        /// The entity it concerns.
        entity: &'a str,
        /// Free-form detail, `key=value` pairs.
        detail: &'a str,
    },
}

impl TraceEvent<'_> {
    /// The kind name used to select events in scenarios (`record.events`).
    pub fn kind(&self) -> &str {
        match self {
            TraceEvent::Enqueue { .. } => "enqueue",
            TraceEvent::Dequeue { .. } => "dequeue",
            TraceEvent::Tx { .. } => "tx",
            TraceEvent::Rx { .. } => "rx",
            TraceEvent::Drop { .. } => "drop",
            TraceEvent::Mark { .. } => "mark",
            TraceEvent::Fault { .. } => "fault",
            TraceEvent::Agent { kind, .. } => kind,
        }
    }
}

/// Names of the network's entities, for rendering events.
#[derive(Clone, Debug, Default)]
pub struct Names {
    /// Node names by id.
    pub nodes: Vec<String>,
    /// Interface names (`node/iface`) by id.
    pub ifaces: Vec<String>,
    /// Link names by id.
    pub links: Vec<String>,
    /// Flow names by id.
    pub flows: Vec<String>,
}

impl Names {
    /// Name of a location.
    pub fn location(&self, at: Location) -> String {
        match at {
            Location::Node(n) => self.nodes[n.index()].clone(),
            Location::Iface(i) => self.ifaces[i.index()].clone(),
            Location::Link(l, from) => format!("{}:{}", self.links[l.index()], self.ifaces[from.index()]),
        }
    }

    fn flow(&self, flow: u32) -> &str {
        self.flows.get(flow as usize).map_or("-", |s| s.as_str())
    }
}

/// A consumer of trace events.
pub trait TraceSink: Send {
    /// Handle one event at time `now`.
    fn record(&mut self, now: Instant, event: &TraceEvent<'_>, names: &Names);
    /// Flush buffered output; called once at the end of the run.
    fn finish(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    /// Give the event table this sink collected, if it collects one.
    fn take_events(&mut self) -> Option<EventTable> {
        None
    }
}

/// Event rows: time, kind, entity, detail.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventTable {
    /// Time of each event in nanoseconds.
    pub time_ns: Vec<u64>,
    /// Kind of each event.
    pub kind: Vec<String>,
    /// Entity each event concerns.
    pub entity: Vec<String>,
    /// Detail of each event (`key=value` pairs separated by spaces).
    pub detail: Vec<String>,
}

/// A sink that keeps the events of the selected kinds as a table.
pub struct EventLog {
    kinds: Vec<String>,
    table: EventTable,
}

impl EventLog {
    /// Log events whose kind is in `kinds`.
    pub fn new(kinds: Vec<String>) -> Self {
        EventLog { kinds, table: EventTable::default() }
    }
}

impl TraceSink for EventLog {
    fn record(&mut self, now: Instant, event: &TraceEvent<'_>, names: &Names) {
        let kind = event.kind();
        if !self.kinds.iter().any(|k| k == kind) {
            return;
        }
        let pkt_detail = |pkt: &Packet| {
            let (src, dst) = pkt.ip().map_or((Ipv4Addr::UNSPECIFIED, Ipv4Addr::UNSPECIFIED), |ip| (ip.src(), ip.dst()));
            format!("uid={} flow={} len={} src={} dst={}", pkt.meta.uid, names.flow(pkt.meta.flow), pkt.len(), src, dst)
        };
        let (entity, detail) = match event {
            TraceEvent::Enqueue { iface, pkt, backlog } => {
                (names.ifaces[iface.index()].clone(), format!("{} backlog={backlog}", pkt_detail(pkt)))
            }
            TraceEvent::Dequeue { iface, pkt } | TraceEvent::Tx { iface, pkt } | TraceEvent::Rx { iface, pkt } => {
                (names.ifaces[iface.index()].clone(), pkt_detail(pkt))
            }
            TraceEvent::Drop { reason, at, pkt } => {
                (names.location(*at), format!("reason={} {}", reason.name(), pkt_detail(pkt)))
            }
            TraceEvent::Mark { iface, reason, pkt } => {
                (names.ifaces[iface.index()].clone(), format!("reason={} {}", reason.name(), pkt_detail(pkt)))
            }
            TraceEvent::Fault { entity, action } => (entity.to_string(), format!("action={action}")),
            TraceEvent::Agent { entity, detail, .. } => (entity.to_string(), detail.to_string()),
        };
        self.table.time_ns.push(now.as_nanos());
        self.table.kind.push(kind.to_string());
        self.table.entity.push(entity);
        self.table.detail.push(detail);
    }

    fn take_events(&mut self) -> Option<EventTable> {
        Some(std::mem::take(&mut self.table))
    }
}

/// The attached trace sinks.
#[derive(Default)]
pub struct Tracer {
    sinks: Vec<Box<dyn TraceSink>>,
}

impl Tracer {
    /// Attach a sink.
    pub fn attach(&mut self, sink: Box<dyn TraceSink>) {
        self.sinks.push(sink);
    }
    /// True if any sink is attached: callers test this before building an event.
    #[inline]
    pub fn enabled(&self) -> bool {
        !self.sinks.is_empty()
    }
    /// Deliver an event to every sink.
    pub fn emit(&mut self, now: Instant, event: &TraceEvent<'_>, names: &Names) {
        for s in &mut self.sinks {
            s.record(now, event, names);
        }
    }
    /// Finish every sink; collect the event table (the first sink that has one) and the first
    /// I/O error, if any.
    pub fn finish(&mut self) -> (EventTable, std::io::Result<()>) {
        let mut table = None;
        let mut result = Ok(());
        for s in &mut self.sinks {
            if let Err(e) = s.finish() {
                if result.is_ok() {
                    result = Err(e);
                }
            }
            if table.is_none() {
                table = s.take_events();
            }
        }
        (table.unwrap_or_default(), result)
    }
}

/// Per-flow counters and delay statistics. A flow is registered by its source; drops anywhere
/// in the network are charged to the flow named in the packet's metadata.
#[derive(Clone, Debug, Default)]
pub struct FlowStats {
    /// Packets the source sent.
    pub tx_packets: u64,
    /// Application bytes the source sent.
    pub tx_bytes: u64,
    /// Packets the sink received.
    pub rx_packets: u64,
    /// Application bytes the sink received.
    pub rx_bytes: u64,
    /// Drops of this flow's packets, by reason.
    pub drops: DropCounts,
    /// Congestion Experienced marks set on this flow's packets by queue disciplines, by reason.
    pub marks: QueueCounts,
    /// One-way delay of received packets.
    pub delay: DelayStats,
    /// When the first packet was sent.
    pub first_tx: Option<Instant>,
    /// When the last packet was received.
    pub last_rx: Option<Instant>,
}

/// Rows of scalar results: (kind, entity, metric, value, unit).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scalars {
    /// The rows, in a deterministic order.
    pub rows: Vec<Scalar>,
}

/// One scalar result.
#[derive(Clone, Debug, PartialEq)]
pub struct Scalar {
    /// Entity kind: `flow`, `iface`, `node`, `link`, `run`, or an agent's kind.
    pub kind: String,
    /// Entity name.
    pub entity: String,
    /// Metric name.
    pub metric: String,
    /// Value (NaN when undefined, e.g. a delay of a flow that delivered nothing).
    pub value: f64,
    /// Unit (`packets`, `bytes`, `s`, `bit/s`, `1` for ratios).
    pub unit: String,
}

impl Scalars {
    /// Add a row.
    pub fn push(&mut self, kind: &str, entity: &str, metric: &str, value: f64, unit: &str) {
        self.rows.push(Scalar {
            kind: kind.into(),
            entity: entity.into(),
            metric: metric.into(),
            value,
            unit: unit.into(),
        });
    }
    /// Look a value up (for tests and summaries).
    pub fn get(&self, kind: &str, entity: &str, metric: &str) -> Option<f64> {
        self.rows.iter().find(|r| r.kind == kind && r.entity == entity && r.metric == metric).map(|r| r.value)
    }
}

/// Identity of a time series: (kind, entity, metric, unit).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SeriesName {
    /// Entity kind.
    pub kind: String,
    /// Entity name.
    pub entity: String,
    /// Metric name.
    pub metric: String,
    /// Unit.
    pub unit: String,
}

/// Sampled time series in long form: one row per (time, series, value).
#[derive(Clone, Debug, Default)]
pub struct TimeSeries {
    /// Series identities; a row's `series` indexes this list.
    pub names: Vec<SeriesName>,
    /// Sample times in nanoseconds.
    pub time_ns: Vec<u64>,
    /// Series index of each sample.
    pub series: Vec<u32>,
    /// Sample values.
    pub value: Vec<f64>,
    index: FxHashMap<SeriesName, u32>,
}

impl TimeSeries {
    /// Record `value` for the series (kind, entity, metric) at `now`. Series ids are assigned
    /// in order of first appearance, which is deterministic because sampling visits entities
    /// in a fixed order.
    pub fn push(&mut self, now: Instant, kind: &str, entity: &str, metric: &str, unit: &str, value: f64) {
        let name = SeriesName { kind: kind.into(), entity: entity.into(), metric: metric.into(), unit: unit.into() };
        let next = self.names.len() as u32;
        let id = *self.index.entry(name.clone()).or_insert_with(|| next);
        if id == next {
            self.names.push(name);
        }
        self.time_ns.push(now.as_nanos());
        self.series.push(id);
        self.value.push(value);
    }
}
