//! The world: network, agents, faults and recorder driven by one event loop.
//!
//! Build one with [`WorldBuilder`] (nodes, interfaces, links, routes, flows, agents, faults,
//! recording), then [`World::run`] it to the stop time. Events are small ids (`Copy`); the
//! state they refer to lives in the network's tables. A run lasts until its stop time, even
//! when no event is left before it, so that time averages do not depend on what is recorded.

use std::net::Ipv4Addr;

use crate::agent::{Agent, Ctx};
pub use crate::event::Event;
use crate::event::{DropCounts, IfaceEvent, QueueCounts};
use crate::fault::{Fault, FaultAction};
use crate::ids::{AgentId, FlowId, IfaceId, LinkId, NodeId};
use crate::kernel::{ScheduleInPast, Scheduler};
use crate::mobility::Mobility;
use crate::network::{Channel, ChannelConfig, IfaceAddr, Network, NodeKind, WlanError, WlanNotice};
use crate::packetlog::PacketLog;
use crate::recorder::{EventTable, Recorder, Scalars, TimeSeries, TraceEvent, TraceSink};
use crate::rng::RngTree;
use crate::routing::StaticRoute;
use crate::time::{Duration, Instant};
use crate::wlan::mgmt::MgmtKind;
use crate::wlan::{ChannelConfig as WlanChannelConfig, Medium, RadioConfig, Role};

/// Errors a run can end with.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A component scheduled an event in the past (a model bug).
    #[error(transparent)]
    Schedule(#[from] ScheduleInPast),
    /// A trace sink could not write its output.
    #[error("writing results: {0}")]
    Io(#[from] std::io::Error),
}

/// What a run produced.
#[derive(Debug)]
pub struct RunResult {
    /// End-of-run scalars.
    pub scalars: Scalars,
    /// Sampled time series.
    pub timeseries: TimeSeries,
    /// Logged events.
    pub events: EventTable,
    /// The SCTP packet log, if asked for ([`WorldBuilder::record_packets`]).
    pub packets: Option<PacketLog>,
    /// Simulated time at the end.
    pub end: Instant,
    /// Number of events processed.
    pub events_processed: u64,
}

struct AgentSlot {
    node: NodeId,
    agent: Box<dyn Agent>,
}

/// Assembles a world.
pub struct WorldBuilder {
    net: Network,
    rec: Recorder,
    rng: RngTree,
    agents: Vec<AgentSlot>,
    faults: Vec<Fault>,
    statics: Vec<(NodeId, StaticRoute)>,
    stop: Instant,
    sample_interval: Option<Duration>,
    groups: Vec<(String, Vec<u32>)>,
    checksums: ChecksumPolicy,
    record_positions: bool,
    record_rss: bool,
}

/// When transports compute the checksums of their packets (SCTP's CRC32c, RFC 9260 §6.8;
/// TCP's Internet checksum, RFC 9293 §3.1).
///
/// Nothing in the simulated network alters a packet's bytes: bit errors and channel loss
/// drop whole packets ([`crate::loss`]), faults take links and interfaces down, and routers
/// rewrite only the IPv4 header's TTL, checksum and ECN field, which neither checksum covers
/// (TCP's pseudo-header takes only the addresses, protocol and length). A checksum then
/// detects nothing, and results are the same with or without it; only a capture, whose
/// packets tools such as Wireshark verify, needs it to be right.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChecksumPolicy {
    /// Compute checksums when some trace sink may see them (a pcap capture), skip them
    /// otherwise ([`sctp::Checksum::Skip`], [`tcp::Connection::set_checksums`]). The default.
    #[default]
    Auto,
    /// Always compute and verify them.
    Always,
}

impl WorldBuilder {
    /// A builder for a run with master seed `seed` that stops at `stop`.
    pub fn new(seed: u64, stop: Instant) -> Self {
        WorldBuilder {
            net: Network::new(),
            rec: Recorder::default(),
            rng: RngTree::new(seed),
            agents: Vec::new(),
            faults: Vec::new(),
            statics: Vec::new(),
            stop,
            sample_interval: None,
            groups: Vec::new(),
            checksums: ChecksumPolicy::Auto,
            record_positions: false,
            record_rss: false,
        }
    }

    /// The random-stream tree (agents derive their streams from it).
    pub fn rng(&self) -> RngTree {
        self.rng
    }

    /// The network being built (read-only).
    pub fn network(&self) -> &Network {
        &self.net
    }

    /// Add a node.
    pub fn node(&mut self, name: &str, kind: NodeKind) -> NodeId {
        self.rec.names.nodes.push(name.to_string());
        self.net.add_node(kind)
    }

    /// Give `node` a place in the world, moving as `mobility` says.
    pub fn mobility(&mut self, node: NodeId, mobility: Mobility) {
        self.net.set_mobility(node, mobility);
    }

    /// Add an interface called `name` (shown as `node/name`) with `addr` in a subnet of the
    /// default prefix length ([`crate::network::DEFAULT_PREFIX_LEN`]).
    pub fn iface(&mut self, node: NodeId, name: &str, addr: Ipv4Addr) -> IfaceId {
        self.iface_with(node, name, Some(IfaceAddr::new(addr)))
    }

    /// Add an interface called `name` with an address of a given prefix length, or with none
    /// yet (`None`: it gets one at run time, see [`World::apply`]).
    pub fn iface_with(&mut self, node: NodeId, name: &str, addr: Option<IfaceAddr>) -> IfaceId {
        let names = &mut self.rec.names;
        names.ifaces.push(format!("{}/{}", names.nodes[node.index()], name));
        self.net.add_iface(node, addr)
    }

    /// Connect `a` and `b`; `ab` configures a→b and `ba` b→a. Each direction's queue and loss
    /// model draw from streams named after the link and the sending interface.
    pub fn link(
        &mut self,
        name: &str,
        a: IfaceId,
        b: IfaceId,
        ab: ChannelConfig,
        ba: ChannelConfig,
        cost: u64,
    ) -> LinkId {
        let stream = |iface: IfaceId, what: &str| {
            self.rng.stream(&format!("link/{name}/{}/{what}", self.rec.names.ifaces[iface.index()]))
        };
        let dirs = [
            Channel::new(ab, stream(a, "queue"), stream(a, "loss")),
            Channel::new(ba, stream(b, "queue"), stream(b, "loss")),
        ];
        self.rec.names.links.push(name.to_string());
        self.net.add_link(a, b, dirs, cost)
    }

    /// Add a WLAN channel called `name`; its shadowing draws from `wlan/<name>/shadowing`.
    pub fn wlan_channel(&mut self, name: &str, config: WlanChannelConfig) -> u32 {
        let id = self.net.next_wlan();
        let medium = Medium::new(id, config, self.rng.stream(&format!("wlan/{name}/shadowing")));
        self.rec.names.wlans.push(name.to_string());
        self.net.add_wlan(medium)
    }

    /// Add a WLAN interface called `name` on `node`, a radio on channel `medium` (a station's
    /// AP must have been added first). Its MAC draws from `wlan/<channel>/<iface>/mac` and its
    /// queue from `wlan/<channel>/<iface>/queue`.
    pub fn wlan_iface(
        &mut self,
        node: NodeId,
        name: &str,
        addr: Option<IfaceAddr>,
        medium: u32,
        config: &RadioConfig,
    ) -> Result<IfaceId, WlanError> {
        if medium as usize >= self.rec.names.wlans.len() {
            return Err(WlanError::NoSuchChannel(medium));
        }
        if let Role::Station { ap } = config.role {
            let ok = self.net.ifaces.get(ap.index()).and_then(|i| i.wlan()).is_some_and(|(m, _)| m == medium);
            if !ok {
                return Err(WlanError::NotAnAp(ap));
            }
        }
        let iface = self.iface_with(node, name, addr);
        self.attach_wlan(iface, medium, config)?;
        Ok(iface)
    }

    /// Add a roaming WLAN interface called `name` on `node` ([`Role::Roaming`], see
    /// [`crate::wlan::sme`]): a radio on each channel of `media`, its scan list in scan
    /// order. It starts down, without address, and gets one from the AP it associates with.
    /// Its radio on channel `c` draws from `wlan/<c>/<iface>/mac` and `wlan/<c>/<iface>/queue`.
    pub fn roaming_wlan_iface(
        &mut self,
        node: NodeId,
        name: &str,
        media: &[u32],
        config: &RadioConfig,
        roam: crate::wlan::sme::RoamConfig,
    ) -> Result<IfaceId, WlanError> {
        if let Some(&bad) = media.iter().find(|&&m| m as usize >= self.rec.names.wlans.len()) {
            return Err(WlanError::NoSuchChannel(bad));
        }
        let iface = self.iface_with(node, name, None);
        self.attach_roaming(iface, media, config, roam)?;
        Ok(iface)
    }

    /// Make an existing (unattached) interface a roaming station (see
    /// [`WorldBuilder::roaming_wlan_iface`]); any address it has is taken away (it gets one
    /// when it associates).
    pub fn attach_roaming(
        &mut self,
        iface: IfaceId,
        media: &[u32],
        config: &RadioConfig,
        roam: crate::wlan::sme::RoamConfig,
    ) -> Result<(), WlanError> {
        if let Some(&bad) = media.iter().find(|&&m| m as usize >= self.rec.names.wlans.len()) {
            return Err(WlanError::NoSuchChannel(bad));
        }
        let held: Vec<_> = self.net.ifaces[iface.index()].addrs().iter().map(|a| a.addr).collect();
        for a in held {
            self.net.remove_address(iface, a);
        }
        let full = self.rec.names.ifaces[iface.index()].clone();
        let rngs = media
            .iter()
            .map(|&m| {
                let channel = &self.rec.names.wlans[m as usize];
                (
                    self.rng.stream(&format!("wlan/{channel}/{full}/mac")),
                    self.rng.stream(&format!("wlan/{channel}/{full}/queue")),
                )
            })
            .collect();
        self.net.attach_roaming(iface, media, config, roam, rngs)
    }

    /// Record every frame on the air of WLAN channel `medium` for the trace sinks
    /// ([`TraceEvent::Air`]; [`crate::pcap::RadiotapSink`] writes them).
    pub fn capture_air(&mut self, medium: u32) {
        self.net.wlans[medium as usize].capture_air();
    }

    /// Sample the signal strength of each roaming station's AP at each sampling interval
    /// (time series kind `iface`, metric `rss`, dBm; only while associated).
    pub fn record_rss(&mut self) {
        self.record_rss = true;
    }

    /// Make an existing (unattached) interface a radio on channel `medium` (see
    /// [`WorldBuilder::wlan_iface`]).
    pub fn attach_wlan(&mut self, iface: IfaceId, medium: u32, config: &RadioConfig) -> Result<(), WlanError> {
        let channel = self.rec.names.wlans.get(medium as usize).cloned().ok_or(WlanError::NoSuchChannel(medium))?;
        let full = &self.rec.names.ifaces[iface.index()];
        let rng = self.rng.stream(&format!("wlan/{channel}/{full}/mac"));
        let queue_rng = self.rng.stream(&format!("wlan/{channel}/{full}/queue"));
        self.net.attach_radio(iface, medium, config, rng, queue_rng)?;
        Ok(())
    }

    /// Radios of nodes with a mobility model are where it says ([`crate::wlan::position`]).
    fn place_radios(&mut self) {
        for m in 0..self.net.wlans.len() {
            for radio in 0..self.net.wlans[m].radios() as u32 {
                let node = self.net.ifaces[self.net.wlans[m].iface(radio).index()].node;
                if let Some(mobility) = self.net.nodes[node.index()].mobility.clone() {
                    self.net.wlans[m].set_mobility(radio, mobility);
                }
            }
        }
    }

    /// Add an explicit route on `node`.
    pub fn route(&mut self, node: NodeId, route: StaticRoute) {
        self.statics.push((node, route));
    }

    /// Register a flow for accounting.
    pub fn flow(&mut self, name: &str) -> FlowId {
        self.rec.add_flow(name)
    }

    /// Report `flows` together as a group: total and mean goodput and Jain's fairness index.
    pub fn group(&mut self, name: &str, flows: Vec<u32>) {
        self.groups.push((name.to_string(), flows));
    }

    /// Add an agent on `node`.
    pub fn agent(&mut self, node: NodeId, agent: Box<dyn Agent>) -> AgentId {
        self.agents.push(AgentSlot { node, agent });
        AgentId(self.agents.len() as u32 - 1)
    }

    /// Bind an agent to a (protocol, port) on its node; false if taken.
    pub fn bind_port(&mut self, agent: AgentId, protocol: u8, port: u16) -> bool {
        let node = self.agents[agent.0 as usize].node;
        self.net.bind_port(node, protocol, port, agent)
    }

    /// Give all packets of `protocol` on the agent's node to it; false if taken.
    pub fn bind_protocol(&mut self, agent: AgentId, protocol: u8) -> bool {
        let node = self.agents[agent.0 as usize].node;
        self.net.bind_protocol(node, protocol, agent)
    }

    /// Schedule a fault.
    pub fn fault(&mut self, at: Instant, action: FaultAction) {
        self.faults.push(Fault { at, action });
    }

    /// Sample time series every `interval` (from time zero).
    pub fn sample_every(&mut self, interval: Duration) {
        self.sample_interval = Some(interval);
    }

    /// Attach a trace sink.
    pub fn trace(&mut self, sink: Box<dyn TraceSink>) {
        self.rec.tracer.attach(sink);
    }

    /// When transports compute their packets' checksums ([`ChecksumPolicy::Auto`] unless set).
    pub fn checksums(&mut self, policy: ChecksumPolicy) {
        self.checksums = policy;
    }

    /// Keep the SCTP packet log: each DATA chunk sent and SACK chunk received
    /// ([`crate::packetlog`]).
    pub fn record_packets(&mut self) {
        self.rec.packets.get_or_insert_with(PacketLog::default);
    }

    /// Sample the position of every node that has one at each sampling interval (time
    /// series kind `node`, metrics `x` and `y` in metres).
    pub fn record_positions(&mut self) {
        self.record_positions = true;
    }

    /// Compute routes and produce a world ready to run.
    pub fn build(mut self) -> World {
        self.rec.checksums = self.checksums == ChecksumPolicy::Always || self.rec.tracer.sees_checksums();
        self.net.recompute_routes();
        self.place_radios();
        for (node, route) in self.statics {
            self.net.nodes[node.index()].routes.add_static(route);
        }
        let mut sched = Scheduler::new();
        self.net.start_wlan_mgmt(&mut sched);
        for (i, f) in self.faults.iter().enumerate() {
            sched.schedule_in(Duration(f.at.as_nanos()), Event::Fault(i as u32));
        }
        if self.sample_interval.is_some() {
            sched.schedule_in(Duration::ZERO, Event::Sample);
        }
        let n_ifaces = self.net.ifaces.len();
        let n_flows = self.rec.flows.len();
        let captures_air = self.net.wlans.iter().any(Medium::captures_air);
        World {
            sched,
            net: self.net,
            rec: self.rec,
            agents: self.agents,
            faults: self.faults,
            stop: self.stop,
            sample_interval: self.sample_interval,
            series: TimeSeries::default(),
            last_tx_bytes: vec![0; n_ifaces],
            last_flow_bytes: vec![(0, 0); n_flows],
            groups: self.groups,
            record_positions: self.record_positions,
            record_rss: self.record_rss,
            captures_air,
            air: Vec::new(),
            started: false,
        }
    }
}

/// A simulation ready to run (or finished).
pub struct World {
    sched: Scheduler<Event>,
    net: Network,
    rec: Recorder,
    agents: Vec<AgentSlot>,
    faults: Vec<Fault>,
    stop: Instant,
    sample_interval: Option<Duration>,
    series: TimeSeries,
    last_tx_bytes: Vec<u64>,
    last_flow_bytes: Vec<(u64, u64)>,
    groups: Vec<(String, Vec<u32>)>,
    /// Whether node positions are sampled.
    record_positions: bool,
    /// Whether roaming stations' RSS is sampled.
    record_rss: bool,
    /// Whether a WLAN channel records its air for the trace sinks.
    captures_air: bool,
    /// Frames taken from a channel's air, reused.
    air: Vec<crate::wlan::radiotap::AirFrame>,
    /// Whether the agents have been started (by the first `run_until`).
    started: bool,
}

impl World {
    /// The network (for inspection).
    pub fn network(&self) -> &Network {
        &self.net
    }

    /// Current simulation time.
    pub fn now(&self) -> Instant {
        self.sched.now()
    }

    /// Run until the stop time and collect the results (see [`World::finish_at_stop`]).
    pub fn run(mut self) -> Result<RunResult, SimError> {
        self.run_until(self.stop)?;
        self.finish_at_stop()
    }

    /// [`World::run`], asking `go_on` after every [`World::INTERRUPT_BATCH`] events whether to
    /// carry on (for a user's Ctrl-C): `Ok(None)` when it says no. The events and results are
    /// those of [`World::run`].
    pub fn run_interruptible(mut self, mut go_on: impl FnMut() -> bool) -> Result<Option<RunResult>, SimError> {
        while !self.run_some(self.stop, Self::INTERRUPT_BATCH)? {
            if !go_on() {
                return Ok(None);
            }
        }
        self.finish_at_stop().map(Some)
    }

    /// Events between two questions of [`World::run_interruptible`]: a few hundredths of a
    /// second of work at a few million events per second.
    pub const INTERRUPT_BATCH: u64 = 1 << 17;

    /// Process every event up to and including `until` (may be called repeatedly).
    pub fn run_until(&mut self, until: Instant) -> Result<(), SimError> {
        self.run_some(until, u64::MAX).map(drop)
    }

    /// Processes at most `budget` events up to and including `until`; true when it got there
    /// (no event is left before `until`).
    fn run_some(&mut self, until: Instant, budget: u64) -> Result<bool, SimError> {
        // Agents start once, at the first call, whatever it processed.
        if !self.started {
            self.started = true;
            self.start_agents();
            self.wlan_notices(self.sched.now());
        }
        let until = until.min(self.stop);
        let mut left = budget;
        while left > 0 {
            let Some((now, event)) = self.sched.next_before(until) else {
                // Stopped by the clock: statistics integrate up to the stop time. Stopped
                // because no event is left: the clock stays at the last event.
                if self.sched.pending() > 0 {
                    self.sched.advance_to(until);
                }
                return Ok(true);
            };
            self.dispatch(now, event)?;
            left -= 1;
        }
        Ok(false)
    }

    /// Collects the results at the stop time. The run lasts until then even if no event is
    /// left before it (without periodic sampling, the last event may come well before): the
    /// time averages (utilization, mean queue) are over the whole run, the same whatever is
    /// recorded. A world without a stop time ends at its last event.
    fn finish_at_stop(mut self) -> Result<RunResult, SimError> {
        if self.stop != Instant::MAX {
            self.sched.advance_to(self.stop);
        }
        self.finish()
    }

    /// Apply a change now (between runs): take a link or interface down or up, add or remove
    /// an interface address. It is traced as a `fault` event; the agents on the interface's
    /// node are told ([`crate::agent::Agent::on_iface_event`]); address changes recompute the
    /// routes.
    pub fn apply(&mut self, action: FaultAction) {
        self.apply_at(self.sched.now(), action);
    }

    /// Give `iface` the address `new` in place of `old`: the agents on its node are told
    /// `AddressRemoved(old)` then `AddressAdded(new)`. False (and nothing done) if the
    /// interface does not have `old`.
    pub fn change_address(&mut self, iface: IfaceId, old: Ipv4Addr, new: IfaceAddr) -> bool {
        if !self.net.ifaces[iface.index()].has_addr(old) {
            return false;
        }
        self.apply(FaultAction::AddressRemove(iface, old));
        self.apply(FaultAction::AddressAdd(iface, new));
        true
    }

    fn apply_at(&mut self, now: Instant, action: FaultAction) {
        if self.rec.tracer.enabled() {
            let entity = action.target_name(&self.rec.names);
            self.rec.tracer.emit(now, &TraceEvent::Fault { entity, action: action.name() }, &self.rec.names);
        }
        if let Some((iface, event)) = action.apply(&mut self.net, now, &mut self.sched, &mut self.rec) {
            self.notify_iface(now, iface, event);
        }
        if self.net.has_wlan_notices() {
            self.wlan_notices(now);
        }
    }

    /// Hand the frames channel `medium` started to the trace sinks. Frames start only in the
    /// channel's own events (an access or a response), so each is traced at its instant.
    fn trace_air(&mut self, medium: u32) {
        let m = &mut self.net.wlans[medium as usize];
        m.take_air(&mut self.air);
        let channel = m.config().channel;
        for frame in self.air.drain(..) {
            let event = TraceEvent::Air { medium, channel, frame: &frame };
            self.rec.tracer.emit(frame.at, &event, &self.rec.names);
        }
    }

    /// Tell every agent on the interface's node, in the order they were added.
    fn notify_iface(&mut self, now: Instant, iface: IfaceId, event: IfaceEvent) {
        let node = self.net.ifaces[iface.index()].node;
        for i in 0..self.agents.len() {
            if self.agents[i].node == node {
                self.with_agent(now, AgentId(i as u32), |agent, ctx| agent.on_iface_event(ctx, iface, event));
            }
        }
    }

    /// Pass on what WLAN management did: steps to the trace (kind `wlan`), interface events
    /// to the agents of the interface's node.
    fn wlan_notices(&mut self, now: Instant) {
        let mut notices = Vec::new();
        self.net.take_wlan_notices(&mut notices);
        for n in notices {
            match n {
                WlanNotice::Iface(iface, event) => self.notify_iface(now, iface, event),
                WlanNotice::Step { iface, what, ap, detail } => {
                    if self.rec.tracer.enabled() {
                        let names = &self.rec.names;
                        let entity = &names.ifaces[iface.index()];
                        let detail = match ap {
                            Some((m, ap)) => format!(
                                "step={what} channel={} ap={} {detail}",
                                names.wlans[m as usize],
                                names.ifaces[ap.index()]
                            ),
                            None => format!("step={what} {detail}"),
                        };
                        let event = TraceEvent::Agent { kind: "wlan", entity, detail: &detail };
                        self.rec.tracer.emit(now, &event, &self.rec.names);
                    }
                }
            }
        }
    }

    fn start_agents(&mut self) {
        let now = self.sched.now();
        for i in 0..self.agents.len() {
            self.with_agent(now, AgentId(i as u32), |agent, ctx| agent.start(ctx));
        }
    }

    /// Runs `f` on `agent` with the context it sees at `now`.
    #[inline]
    fn with_agent(&mut self, now: Instant, agent: AgentId, f: impl FnOnce(&mut dyn Agent, &mut Ctx<'_>)) {
        let slot = &mut self.agents[agent.0 as usize];
        let mut ctx = Ctx {
            now,
            node: slot.node,
            me: agent,
            net: &mut self.net,
            sched: &mut self.sched,
            rec: &mut self.rec,
            faults: &self.faults,
        };
        f(slot.agent.as_mut(), &mut ctx);
    }

    #[inline]
    fn dispatch(&mut self, now: Instant, event: Event) -> Result<(), SimError> {
        match event {
            Event::TxDone { link, side, gen } => {
                self.net.on_tx_done(link, side as usize, gen, now, &mut self.sched, &mut self.rec)
            }
            Event::Arrive { link, side, gen } => {
                if let Some((agent, pkt)) =
                    self.net.on_arrive(link, side as usize, gen, now, &mut self.sched, &mut self.rec)
                {
                    self.with_agent(now, agent, |a, ctx| a.on_packet(ctx, pkt));
                }
            }
            Event::Wlan { medium, timer, arg, gen } => {
                let delivered = self.net.on_wlan(medium, timer, arg, gen, now, &mut self.sched, &mut self.rec);
                if self.captures_air {
                    self.trace_air(medium);
                }
                if self.net.has_wlan_notices() {
                    self.wlan_notices(now);
                }
                if let Some((agent, pkt)) = delivered {
                    self.with_agent(now, agent, |a, ctx| a.on_packet(ctx, pkt));
                }
            }
            Event::WlanMgmt { who, timer, gen } => {
                self.net.on_wlan_mgmt(who, timer, gen, now, &mut self.sched, &mut self.rec);
                self.wlan_notices(now);
            }
            Event::Timer { agent, token } => self.with_agent(now, agent, |a, ctx| a.on_timer(ctx, token)),
            Event::Fault(i) => self.apply_at(now, self.faults[i as usize].action),
            Event::Sample => {
                self.sample(now);
                if let Some(dt) = self.sample_interval {
                    self.sched.schedule_at(now + dt, Event::Sample)?;
                }
            }
        }
        Ok(())
    }

    fn sample(&mut self, now: Instant) {
        let interval = self.sample_interval.unwrap_or(Duration::ZERO).as_secs_f64();
        let rate = |bytes: u64| if interval > 0.0 { bytes as f64 * 8.0 / interval } else { f64::NAN };
        let (net, rec) = (&self.net, &self.rec);
        for (i, name) in rec.names.ifaces.iter().enumerate() {
            let Some(ch) = net.tx_channel(IfaceId(i as u32)) else { continue };
            self.series.push(now, "iface", name, "queue_packets", "packets", ch.backlog_packets() as f64);
            self.series.push(now, "iface", name, "queue_bytes", "bytes", ch.backlog_bytes() as f64);
            let sent = ch.stats.tx_bytes - std::mem::replace(&mut self.last_tx_bytes[i], ch.stats.tx_bytes);
            if now > Instant::ZERO {
                self.series.push(now, "iface", name, "tx_rate", "bit/s", rate(sent));
            }
        }
        for ((f, name), last) in rec.flows.iter().zip(&rec.names.flows).zip(&mut self.last_flow_bytes) {
            let (tx, rx) = (f.tx_bytes - last.0, f.rx_bytes - last.1);
            *last = (f.tx_bytes, f.rx_bytes);
            if now > Instant::ZERO {
                self.series.push(now, "flow", name, "tx_rate", "bit/s", rate(tx));
                self.series.push(now, "flow", name, "rx_rate", "bit/s", rate(rx));
            }
        }
        if self.record_rss {
            for (iface, rss) in net.sme().rss_at(&net.wlans, now) {
                self.series.push(now, "iface", &rec.names.ifaces[iface.index()], "rss", "dBm", rss);
            }
        }
        if self.record_positions {
            for (node, name) in net.nodes.iter().zip(&rec.names.nodes) {
                if let Some(p) = node.mobility.as_ref().map(|m| m.position_at(now)) {
                    self.series.push(now, "node", name, "x", "m", p.x);
                    self.series.push(now, "node", name, "y", "m", p.y);
                }
            }
        }
        for slot in &self.agents {
            slot.agent.sample(now, &mut self.series);
        }
    }

    fn finish(mut self) -> Result<RunResult, SimError> {
        let now = self.sched.now();
        let mut out = Scalars::default();
        out.push("run", "run", "sim_time", now.as_secs_f64(), "s");
        out.push("run", "run", "events", self.sched.processed() as f64, "events");
        self.report_flows(now, &mut out);
        self.report_groups(&mut out);
        self.report_ifaces(now, &mut out);
        self.report_wlans(now, &mut out);
        for (node, name) in self.net.nodes.iter().zip(&self.rec.names.nodes) {
            push_drops(&mut out, "node", name, &node.drops);
        }
        for slot in &self.agents {
            slot.agent.report(now, &mut out);
        }
        let (events, io) = self.rec.tracer.finish();
        io?;
        Ok(RunResult {
            scalars: out,
            timeseries: self.series,
            events,
            packets: self.rec.packets.take(),
            end: now,
            events_processed: self.sched.processed(),
        })
    }

    fn report_flows(&self, _now: Instant, out: &mut Scalars) {
        for (f, name) in self.rec.flows.iter().zip(&self.rec.names.flows) {
            let row = |out: &mut Scalars, metric: &str, v: f64, unit: &str| out.push("flow", name, metric, v, unit);
            row(out, "tx_packets", f.tx_packets as f64, "packets");
            row(out, "tx_bytes", f.tx_bytes as f64, "bytes");
            row(out, "rx_packets", f.rx_packets as f64, "packets");
            row(out, "rx_bytes", f.rx_bytes as f64, "bytes");
            push_drops(out, "flow", name, &f.drops);
            push_marks(out, "flow", name, &f.marks);
            let loss = if f.tx_packets > 0 { f.drops.total() as f64 / f.tx_packets as f64 } else { f64::NAN };
            row(out, "loss_rate", loss, "1");
            row(out, "goodput", flow_goodput(f), "bit/s");
            for (metric, value) in f.delay.summary() {
                row(out, metric, value, "s");
            }
        }
    }

    /// Per group: goodput total, mean, min, max, and Jain's fairness index over its flows
    /// (a flow that delivered nothing counts as zero).
    fn report_groups(&self, out: &mut Scalars) {
        for (name, flows) in &self.groups {
            let goodputs: Vec<f64> = flows
                .iter()
                .map(|&f| flow_goodput(&self.rec.flows[f as usize]))
                .map(|g| if g.is_nan() { 0.0 } else { g })
                .collect();
            let n = goodputs.len() as f64;
            let sum: f64 = goodputs.iter().sum();
            out.push("group", name, "flows", n, "flows");
            out.push("group", name, "goodput_sum", sum, "bit/s");
            out.push("group", name, "goodput_mean", if n > 0.0 { sum / n } else { f64::NAN }, "bit/s");
            out.push("group", name, "goodput_min", goodputs.iter().copied().fold(f64::NAN, f64::min), "bit/s");
            out.push("group", name, "goodput_max", goodputs.iter().copied().fold(f64::NAN, f64::max), "bit/s");
            out.push("group", name, "jain_index", crate::stats::jain_index(&goodputs), "1");
        }
    }

    fn report_ifaces(&self, now: Instant, out: &mut Scalars) {
        for (i, name) in self.rec.names.ifaces.iter().enumerate() {
            let iface = &self.net.ifaces[i];
            let row = |out: &mut Scalars, metric: &str, v: f64, unit: &str| out.push("iface", name, metric, v, unit);
            row(out, "rx_packets", iface.rx_packets as f64, "packets");
            row(out, "rx_bytes", iface.rx_bytes as f64, "bytes");
            let Some(ch) = self.net.tx_channel(IfaceId(i as u32)) else { continue };
            let s = &ch.stats;
            row(out, "tx_packets", s.tx_packets as f64, "packets");
            row(out, "tx_bytes", s.tx_bytes as f64, "bytes");
            let util = if now > Instant::ZERO { s.busy.as_secs_f64() / now.as_secs_f64() } else { 0.0 };
            row(out, "utilization", util.min(1.0), "1");
            row(out, "enqueued", s.enqueued as f64, "packets");
            row(out, "queue_mean_packets", s.backlog_packets.mean(now), "packets");
            row(out, "queue_max_packets", s.backlog_packets.max() as f64, "packets");
            row(out, "queue_mean_bytes", s.backlog_bytes.mean(now), "bytes");
            row(out, "queue_max_bytes", s.backlog_bytes.max() as f64, "bytes");
            push_drops(out, "iface", name, &s.drops);
            push_marks(out, "iface", name, &s.marks);
            for stat in ch.queue().stats() {
                row(out, stat.name, stat.value, stat.unit);
            }
        }
    }
}

impl World {
    /// Per WLAN interface its MAC's counters, per channel its utilisation (only when the
    /// network has WLAN channels).
    fn report_wlans(&self, now: Instant, out: &mut Scalars) {
        for (m, (medium, name)) in self.net.wlans.iter().zip(&self.rec.names.wlans).enumerate() {
            let row = |out: &mut Scalars, metric: &str, v: f64, unit: &str| out.push("wlan", name, metric, v, unit);
            row(out, "channel", medium.config().channel as f64, "1");
            row(out, "radios", medium.radios() as f64, "radios");
            row(out, "frames", medium.stats.frames as f64, "frames");
            row(out, "collisions", medium.stats.collisions as f64, "frames");
            let util = if now > Instant::ZERO { medium.stats.busy.as_secs_f64() / now.as_secs_f64() } else { 0.0 };
            row(out, "utilization", util.min(1.0), "1");
            for radio in 0..medium.radios() as u32 {
                let iface = medium.iface(radio);
                let roaming = self.net.sme().is_station_radio(m as u32, radio);
                // A roaming station has a radio per channel: each reported as iface@channel.
                let full;
                let name = if roaming {
                    full = format!("{}@{}", self.rec.names.ifaces[iface.index()], name);
                    &full
                } else {
                    &self.rec.names.ifaces[iface.index()]
                };
                let s = medium.radio_stats(radio);
                let row =
                    |out: &mut Scalars, metric: &str, v: f64, unit: &str| out.push("iface", name, metric, v, unit);
                row(out, "mac_tx_data", s.tx_data as f64, "frames");
                row(out, "mac_tx_acked", s.tx_acked as f64, "frames");
                row(out, "mac_retries", s.retries as f64, "frames");
                row(out, "mac_tx_failed", s.tx_failed as f64, "frames");
                row(out, "mac_tx_collisions", s.tx_collisions as f64, "frames");
                row(out, "mac_tx_rts", s.tx_rts as f64, "frames");
                row(out, "mac_tx_cts", s.tx_cts as f64, "frames");
                row(out, "mac_tx_ack", s.tx_ack as f64, "frames");
                row(out, "mac_tx_frames", s.tx_frames as f64, "frames");
                row(out, "mac_rx_data", s.rx_data as f64, "frames");
                row(out, "mac_rx_duplicates", s.rx_duplicates as f64, "frames");
                row(out, "mac_rx_ok", s.rx_ok as f64, "frames");
                row(out, "mac_rx_collisions", s.rx_collisions as f64, "frames");
                row(out, "mac_rx_errors", s.rx_errors as f64, "frames");
                row(out, "mac_retry_limit_drops", s.retry_limit_drops as f64, "frames");
                row(out, "mac_rate", medium.radio_rate(radio).mbps() as f64 * 1e6, "bit/s");
                row(out, "queue_packets", medium.backlog(radio) as f64, "packets");
                if s.mac_delay.count() > 0 {
                    for (metric, value) in s.mac_delay.summary() {
                        row(out, &format!("mac_{metric}"), value, "s");
                    }
                }
                push_drops(out, "iface", name, &s.drops);
                let mgmt = medium.mgmt_counts(radio);
                for kind in MgmtKind::ALL {
                    for (dir, n) in [("tx", mgmt.tx_of(kind)), ("rx", mgmt.rx_of(kind))] {
                        if n > 0 {
                            out.push("iface", name, &format!("mgmt_{dir}_{}", kind.name()), n as f64, "frames");
                        }
                    }
                }
            }
        }
        for st in self.net.sme().stations() {
            let name = &self.rec.names.ifaces[st.iface.index()];
            let row = |out: &mut Scalars, metric: &str, v: u64| out.push("iface", name, metric, v as f64, "1");
            row(out, "wlan_scans", st.stats.scans);
            row(out, "wlan_associations", st.stats.associations);
            row(out, "wlan_handovers", st.stats.handovers);
            row(out, "wlan_timeouts", st.stats.timeouts);
            row(out, "wlan_deauthentications", st.stats.deauthentications);
        }
    }
}

/// goodput: application bytes delivered / (last delivery - first send) (README.md, "Metric definitions").
fn flow_goodput(f: &crate::recorder::FlowStats) -> f64 {
    match (f.first_tx, f.last_rx) {
        (Some(a), Some(b)) if b > a => f.rx_bytes as f64 * 8.0 / (b - a).as_secs_f64(),
        _ => f64::NAN,
    }
}

/// `drops` (total) always, and `drops_<reason>` for each reason that occurred: the queue
/// disciplines' reasons by name, then the network's.
fn push_drops(out: &mut Scalars, kind: &str, entity: &str, drops: &DropCounts) {
    out.push(kind, entity, "drops", drops.total() as f64, "packets");
    for (reason, n) in drops.iter() {
        out.push(kind, entity, &format!("drops_{}", reason.name()), n as f64, "packets");
    }
}

/// `marks` (total) and `marks_<reason>` per reason, only when a queue discipline marked
/// packets Congestion Experienced.
fn push_marks(out: &mut Scalars, kind: &str, entity: &str, marks: &QueueCounts) {
    let total = marks.total();
    if total == 0 {
        return;
    }
    out.push(kind, entity, "marks", total as f64, "packets");
    for (reason, n) in marks.iter() {
        out.push(kind, entity, &format!("marks_{}", reason.name()), n as f64, "packets");
    }
}
