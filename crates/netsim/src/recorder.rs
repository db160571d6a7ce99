//! What a run records: typed trace events going to sinks, per-entity counters, sampled time
//! series and the final table of scalars.
//!
//! Counters are plain integers updated in place (they cost next to nothing and are always on).
//! Trace events are built only when at least one sink is attached, so a run that asks for no
//! event log and no capture pays one branch per potential event.

use std::hash::{Hash, Hasher};
use std::net::Ipv4Addr;

use rustc_hash::{FxHashMap, FxHasher};

pub use crate::event::{DropCounts, DropReason, Location, QueueCounts, QueueReason};
use crate::event::{NetEvent, NetObserver, TracedKind};
use crate::ids::FlowId;
use crate::packetlog::PacketLog;
use crate::stats::DelayStats;
use crate::time::Instant;
use crate::wire::Packet;

/// A typed trace event. Borrowed, so building one costs nothing but the branch that decides to.
#[derive(Debug)]
pub enum TraceEvent<'a> {
    /// What the network reported: a packet queued, dequeued, sent, received, dropped or
    /// marked (a mark only with the packet, [`NetEvent::Mark`]'s `pkt` set).
    Net(&'a NetEvent<'a>),
    /// A scheduled fault took effect.
    Fault {
        /// The entity affected (link or interface name).
        entity: &'a str,
        /// What happened (`link-down`, `iface-up`, ...).
        action: &'a str,
    },
    /// A frame started on a WLAN channel that captures its air
    /// ([`crate::wlan::medium::Medium::capture_air`]).
    Air {
        /// The channel's index.
        medium: u32,
        /// Its channel number (1..13).
        channel: u8,
        /// The frame.
        frame: &'a crate::wlan::radiotap::AirFrame,
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
            TraceEvent::Net(NetEvent::Enqueue { .. }) => "enqueue",
            TraceEvent::Net(NetEvent::Dequeue { .. }) => "dequeue",
            TraceEvent::Net(NetEvent::Tx { .. }) => "tx",
            TraceEvent::Net(NetEvent::Rx { .. }) => "rx",
            TraceEvent::Net(NetEvent::Drop { .. }) => "drop",
            TraceEvent::Net(NetEvent::Mark { .. }) => "mark",
            TraceEvent::Fault { .. } => "fault",
            TraceEvent::Air { .. } => "air",
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
    /// WLAN channel names by index.
    pub wlans: Vec<String>,
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
    /// Whether this sink keeps events of `kind` (as [`TraceEvent::kind`] names them); asked
    /// once, when it is attached. The network builds its packet events (`enqueue`,
    /// `dequeue`, `tx`, `rx`, and the packet of a `mark`) only for a sink that keeps them.
    /// True by default.
    fn wants(&self, kind: &str) -> bool {
        let _ = kind;
        true
    }
    /// Flush buffered output; called once at the end of the run.
    fn finish(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    /// Give the event table this sink collected, if it collects one.
    fn take_events(&mut self) -> Option<EventTable> {
        None
    }
    /// Whether this sink may look at packets' transport checksums (a capture writes the
    /// bytes out, to be read by tools that verify them). True unless the sink says otherwise:
    /// while any attached sink may, SCTP endpoints compute their CRC32c
    /// ([`ChecksumPolicy`](crate::world::ChecksumPolicy)).
    fn sees_checksums(&self) -> bool {
        true
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
    fn wants(&self, kind: &str) -> bool {
        self.kinds.iter().any(|k| k == kind)
    }

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
            TraceEvent::Net(NetEvent::Enqueue { iface, pkt, backlog }) => {
                (names.ifaces[iface.index()].clone(), format!("{} backlog={backlog}", pkt_detail(pkt)))
            }
            TraceEvent::Net(
                NetEvent::Dequeue { iface, pkt } | NetEvent::Tx { iface, pkt } | NetEvent::Rx { iface, pkt },
            ) => (names.ifaces[iface.index()].clone(), pkt_detail(pkt)),
            TraceEvent::Net(NetEvent::Drop { reason, at, pkt }) => {
                (names.location(*at), format!("reason={} {}", reason.name(), pkt_detail(pkt)))
            }
            TraceEvent::Net(NetEvent::Mark { iface, reason, pkt: Some(pkt), .. }) => {
                (names.ifaces[iface.index()].clone(), format!("reason={} {}", reason.name(), pkt_detail(pkt)))
            }
            // Marked as it joined its queue: nothing to show (the recorder does not pass these).
            TraceEvent::Net(NetEvent::Mark { pkt: None, .. }) => return,
            TraceEvent::Fault { entity, action } => (entity.to_string(), format!("action={action}")),
            // Frames on the air go to captures only.
            TraceEvent::Air { .. } => return,
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

    /// The rendered events name packets by their size, flow and addresses, never a checksum.
    fn sees_checksums(&self) -> bool {
        false
    }
}

/// The attached trace sinks.
#[derive(Default)]
pub struct Tracer {
    sinks: Vec<Box<dyn TraceSink>>,
    /// The [`TracedKind`]s some sink wants, one bit each (by position in
    /// [`TracedKind::ALL`]).
    wanted: u8,
}

impl Tracer {
    /// Attach a sink.
    pub fn attach(&mut self, sink: Box<dyn TraceSink>) {
        for (i, kind) in TracedKind::ALL.into_iter().enumerate() {
            if sink.wants(kind.name()) {
                self.wanted |= 1 << i;
            }
        }
        self.sinks.push(sink);
    }
    /// True if some attached sink keeps events of `kind` ([`TraceSink::wants`]).
    #[inline]
    pub fn wants(&self, kind: TracedKind) -> bool {
        self.wanted & (1 << kind as u8) != 0
    }
    /// True if any sink is attached: callers test this before building an event.
    #[inline]
    pub fn enabled(&self) -> bool {
        !self.sinks.is_empty()
    }
    /// True if some attached sink may look at packets' checksums ([`TraceSink::sees_checksums`]).
    pub fn sees_checksums(&self) -> bool {
        self.sinks.iter().any(|s| s.sees_checksums())
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

/// What the world records while it runs: the entities' names, the flows' counters and the
/// trace sinks. It hears the network's reports ([`NetObserver`]): a drop or an ECN mark is
/// charged to the packet's flow and traced; other packet events are traced when a sink is
/// attached.
#[derive(Default)]
pub struct Recorder {
    /// Entity names, for rendering events and results.
    pub names: Names,
    /// Flow counters by flow id.
    pub flows: Vec<FlowStats>,
    /// Trace sinks.
    pub tracer: Tracer,
    /// The SCTP packet log, when the run keeps one (`record.packets`).
    pub packets: Option<PacketLog>,
    /// Whether transports must compute their checksums (set when the world is built from its
    /// [`ChecksumPolicy`](crate::world::ChecksumPolicy) and its sinks).
    pub checksums: bool,
}

impl Recorder {
    /// Register a flow for per-flow accounting; its id goes into the packets' metadata.
    pub fn add_flow(&mut self, name: &str) -> FlowId {
        self.flows.push(FlowStats::default());
        self.names.flows.push(name.to_string());
        self.flows.len() as FlowId - 1
    }

    /// Emit a trace event if a sink is attached.
    #[inline]
    pub fn trace(&mut self, now: Instant, event: &TraceEvent<'_>) {
        if self.tracer.enabled() {
            self.tracer.emit(now, event, &self.names);
        }
    }
}

impl NetObserver for Recorder {
    #[inline]
    fn tracing(&self) -> bool {
        self.tracer.enabled()
    }

    #[inline]
    fn traces(&self, kind: TracedKind) -> bool {
        self.tracer.wants(kind)
    }

    fn report(&mut self, now: Instant, event: &NetEvent<'_>) {
        match *event {
            NetEvent::Drop { reason, pkt, .. } => {
                if let Some(flow) = self.flows.get_mut(pkt.meta.flow as usize) {
                    flow.drops.add(reason);
                }
            }
            NetEvent::Mark { reason, flow, .. } => {
                if let Some(flow) = self.flows.get_mut(flow as usize) {
                    flow.marks.add(reason);
                }
            }
            _ => {}
        }
        if !self.tracer.enabled() {
            return;
        }
        if let NetEvent::Mark { pkt: None, .. } = event {
            return;
        }
        self.tracer.emit(now, &TraceEvent::Net(event), &self.names);
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

impl SeriesName {
    fn is(&self, kind: &str, entity: &str, metric: &str, unit: &str) -> bool {
        self.kind == kind && self.entity == entity && self.metric == metric && self.unit == unit
    }
}

/// A registered series of a [`TimeSeries`]: its index in [`TimeSeries::names`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SeriesId(pub u32);

/// Sampled time series in long form: one row per (time, series, value).
///
/// A series is registered once ([`TimeSeries::series`]: its name's strings are allocated
/// then, and only then); a sample is three numbers (time, series id, value) in column vectors.
/// [`TimeSeries::push`] finds the series by its borrowed name without allocating.
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
    /// Series ids by the hash of their name's parts (ids whose names share a hash in one list).
    index: FxHashMap<u64, Vec<u32>>,
}

impl TimeSeries {
    /// The id of the series (kind, entity, metric, unit), registered now if new. Series ids
    /// are assigned in order of first appearance, which is deterministic because sampling
    /// visits entities in a fixed order.
    pub fn series(&mut self, kind: &str, entity: &str, metric: &str, unit: &str) -> SeriesId {
        let mut h = FxHasher::default();
        (kind, entity, metric, unit).hash(&mut h);
        let ids = self.index.entry(h.finish()).or_default();
        if let Some(&id) = ids.iter().find(|&&id| self.names[id as usize].is(kind, entity, metric, unit)) {
            return SeriesId(id);
        }
        let id = self.names.len() as u32;
        ids.push(id);
        self.names.push(SeriesName {
            kind: kind.into(),
            entity: entity.into(),
            metric: metric.into(),
            unit: unit.into(),
        });
        SeriesId(id)
    }

    /// Record `value` for a registered series at `now`.
    #[inline]
    pub fn sample(&mut self, id: SeriesId, now: Instant, value: f64) {
        self.time_ns.push(now.as_nanos());
        self.series.push(id.0);
        self.value.push(value);
    }

    /// Record `value` for the series (kind, entity, metric, unit) at `now`, registering it if
    /// new (see [`TimeSeries::series`]).
    pub fn push(&mut self, now: Instant, kind: &str, entity: &str, metric: &str, unit: &str, value: f64) {
        let id = self.series(kind, entity, metric, unit);
        self.sample(id, now, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_are_registered_once_in_order_of_first_appearance() {
        let mut ts = TimeSeries::default();
        let t = |ms: u64| Instant(ms * 1_000_000);
        ts.push(t(0), "iface", "A/eth0", "queue_packets", "packets", 1.0);
        ts.push(t(0), "iface", "A/eth0", "queue_bytes", "bytes", 2.0);
        // The same parts split differently are another series.
        ts.push(t(0), "iface", "A/eth0q", "ueue_bytes", "bytes", 3.0);
        let id = ts.series("iface", "A/eth0", "queue_bytes", "bytes");
        assert_eq!(id, SeriesId(1));
        ts.sample(id, t(10), 4.0);
        ts.push(t(10), "iface", "A/eth0", "queue_packets", "packets", 5.0);
        assert_eq!(ts.names.len(), 3);
        assert_eq!((ts.names[2].entity.as_str(), ts.names[2].metric.as_str()), ("A/eth0q", "ueue_bytes"));
        assert_eq!(ts.series, [0, 1, 2, 1, 0]);
        assert_eq!(ts.time_ns, [0, 0, 0, 10_000_000, 10_000_000]);
        assert_eq!(ts.value, [1.0, 2.0, 3.0, 4.0, 5.0]);
    }
}
