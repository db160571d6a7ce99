//! Agents: the applications and transport drivers that live on hosts.
//!
//! An agent is driven by the world through four inputs — `start` (once, at time zero),
//! `on_timer` (a timer it set fired), `on_packet` (a packet addressed to it arrived) and
//! `on_iface_event` (an interface of its node went up or down, got or lost an address) — and
//! acts through its [`Ctx`]: read the clock, send packets, set timers, update flow counters,
//! emit trace events. Timers cannot be cancelled; an agent ignores tokens it no longer expects
//! (a spurious timer is harmless). At the end of the run the world asks each agent for its
//! scalars, and at every sampling instant for its time-series samples.

use std::net::Ipv4Addr;

use crate::event::{Event, IfaceEvent};
use crate::fault::Fault;
pub use crate::ids::AgentId;
use crate::ids::{FlowId, IfaceId, NodeId};
use crate::kernel::{ScheduleInPast, Scheduler, Ticket};
use crate::network::{IfaceAddr, Network};
use crate::packetlog::PacketLog;
use crate::recorder::{FlowStats, Recorder, Scalars, TimeSeries, TraceEvent};
use crate::time::{Duration, Instant};
use crate::wire::{Ipv4Fields, Packet, PacketMeta, DEFAULT_TTL};

/// An application or transport driver on a host.
pub trait Agent: Send {
    /// Called once at time zero, in the order agents were added.
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        let _ = ctx;
    }
    /// A timer set with `token` fired.
    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        let _ = (ctx, token);
    }
    /// A packet for this agent arrived (IPv4 header included).
    fn on_packet(&mut self, ctx: &mut Ctx<'_>, pkt: Packet) {
        let _ = (ctx, pkt);
    }
    /// An interface of this agent's node changed (went up or down, got or lost an address).
    fn on_iface_event(&mut self, ctx: &mut Ctx<'_>, iface: IfaceId, event: IfaceEvent) {
        let _ = (ctx, iface, event);
    }
    /// Append end-of-run scalars.
    fn report(&self, now: Instant, out: &mut Scalars) {
        let _ = (now, out);
    }
    /// Append time-series samples at a sampling instant.
    fn sample(&self, now: Instant, out: &mut TimeSeries) {
        let _ = (now, out);
    }
}

/// Where a packet leaves its node, from [`Ctx::route`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    /// The outgoing interface.
    pub iface: IfaceId,
    /// The source address the packet carries.
    pub src: Ipv4Addr,
}

/// What an agent may do while handling an input.
pub struct Ctx<'a> {
    pub(crate) now: Instant,
    pub(crate) node: NodeId,
    pub(crate) me: AgentId,
    pub(crate) net: &'a mut Network,
    pub(crate) sched: &'a mut Scheduler<Event>,
    pub(crate) rec: &'a mut Recorder,
    pub(crate) faults: &'a [Fault],
}

impl Ctx<'_> {
    /// Current simulation time.
    #[inline]
    pub fn now(&self) -> Instant {
        self.now
    }

    /// The node this agent runs on.
    pub fn node(&self) -> NodeId {
        self.node
    }

    /// The interfaces of this node, in declaration order.
    pub fn ifaces(&self) -> &[IfaceId] {
        &self.net.nodes[self.node.index()].ifaces
    }

    /// The addresses of an interface (first = the source of packets leaving by it unbound).
    pub fn iface_addrs(&self, iface: IfaceId) -> &[IfaceAddr] {
        self.net.ifaces[iface.index()].addrs()
    }

    /// Build an IPv4 packet originated by this node around a transport segment.
    pub fn packet(&mut self, src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, transport: &[u8], flow: u32) -> Packet {
        let ident = self.net.next_ip_ident(self.node);
        let uid = self.net.next_uid();
        Packet::ipv4(Ipv4Fields { src, dst, protocol, ident, ttl: DEFAULT_TTL }, transport, PacketMeta { flow, uid })
    }

    /// As [`Ctx::packet`], taking the segment by value: the IPv4 header goes in front of it in
    /// the same buffer (see [`Packet::ipv4_around`]).
    pub fn packet_around(
        &mut self,
        src: Ipv4Addr,
        dst: Ipv4Addr,
        protocol: u8,
        transport: Vec<u8>,
        flow: u32,
    ) -> Packet {
        let ident = self.net.next_ip_ident(self.node);
        let uid = self.net.next_uid();
        Packet::ipv4_around(
            Ipv4Fields { src, dst, protocol, ident, ttl: DEFAULT_TTL },
            transport,
            PacketMeta { flow, uid },
        )
    }

    /// As [`Ctx::packet_around`], for a segment that starts `headroom` bytes into `buf`
    /// (see [`Packet::ipv4_in_headroom`]: with room for the IPv4 header, nothing is copied).
    pub fn packet_in_headroom(
        &mut self,
        src: Ipv4Addr,
        dst: Ipv4Addr,
        protocol: u8,
        buf: Vec<u8>,
        headroom: usize,
        flow: u32,
    ) -> Packet {
        let ident = self.net.next_ip_ident(self.node);
        let uid = self.net.next_uid();
        Packet::ipv4_in_headroom(
            Ipv4Fields { src, dst, protocol, ident, ttl: DEFAULT_TTL },
            buf,
            headroom,
            PacketMeta { flow, uid },
        )
    }

    /// Send a packet from this node.
    pub fn send(&mut self, pkt: Packet) {
        self.net.send_from(self.node, pkt, self.now, self.sched, self.rec);
    }

    /// Fire `on_timer(token)` at `at`.
    pub fn timer_at(&mut self, at: Instant, token: u64) -> Result<(), ScheduleInPast> {
        self.sched.schedule_at(at, Event::Timer { agent: self.me, token })
    }

    /// A place among simultaneous events for a timer decided now and scheduled later with
    /// [`Ctx::timer_ticket`] (see [`crate::kernel::Ticket`]).
    pub fn ticket(&mut self) -> Ticket {
        self.sched.ticket()
    }

    /// Fire `on_timer(token)` at `at`, in the place `ticket` took among events at `at`.
    pub fn timer_ticket(&mut self, at: Instant, ticket: Ticket, token: u64) -> Result<(), ScheduleInPast> {
        self.sched.schedule_ticket(at, ticket, Event::Timer { agent: self.me, token })
    }

    /// Fire `on_timer(token)` after `delay`.
    pub fn timer_in(&mut self, delay: Duration, token: u64) {
        self.sched.schedule_in(delay, Event::Timer { agent: self.me, token });
    }

    /// The first scheduled failure on the route from this node (source `src`) to `dst`.
    /// (A link-down or interface-down of the fault plan on a link or interface the static
    /// route crosses, leaving by the interface that owns `src` when it reaches `dst`.)
    pub fn first_break_on_route(&self, src: Ipv4Addr, dst: Ipv4Addr) -> Option<Instant> {
        let (links, ifaces) = self.net.route_elements(self.node, src, dst)?;
        self.faults
            .iter()
            .filter(|f| match f.action.breaks() {
                Some(Ok(l)) => links.contains(&l),
                Some(Err(i)) => ifaces.contains(&i),
                None => false,
            })
            .map(|f| f.at)
            .min()
    }

    /// The configured loss probability of the route from this node (source `src`) to `dst`
    /// ([`crate::network::Network::configured_loss_on_route`]): what an ideal policy that
    /// "knows" its paths' loss rates reads, as ns-2's RTX-LOSSRATE does.
    pub fn configured_loss_on_route(&self, src: Ipv4Addr, dst: Ipv4Addr) -> Option<f64> {
        self.net.configured_loss_on_route(self.node, src, dst)
    }

    /// Layer-2 timing of one of this node's roaming WLAN interfaces: its last scan, the loss
    /// of its last AP, its last association ([`crate::network::L2Timing`]).
    pub fn l2_timing(&self, iface: IfaceId) -> Option<crate::network::L2Timing> {
        self.net.l2_timing(iface).copied()
    }

    /// The route a packet from this node to `dst` takes: the interface it leaves by and
    /// the source address it carries (`src` if given, else that interface's address).
    pub fn route(&self, src: Option<Ipv4Addr>, dst: Ipv4Addr) -> Option<Route> {
        let iface = self.net.route_from(self.node, src, dst)?;
        Some(Route { iface, src: src.or_else(|| self.net.ifaces[iface.index()].addr())? })
    }

    /// Send a packet this node built on a route from [`Ctx::route`] (one route lookup per
    /// packet instead of two, for drivers that must know the source address first).
    pub fn send_on(&mut self, route: Route, pkt: Packet) {
        self.net.transmit(route.iface, pkt, self.now, self.sched, self.rec);
    }

    /// Counters of a registered flow.
    pub fn flow_mut(&mut self, flow: FlowId) -> Option<&mut FlowStats> {
        self.rec.flows.get_mut(flow as usize)
    }

    /// True if a trace sink is attached (check before formatting an event's detail).
    pub fn tracing(&self) -> bool {
        self.rec.tracer.enabled()
    }

    /// Emit an agent event (`kind` is what `record.events` selects on).
    pub fn trace(&mut self, kind: &str, entity: &str, detail: &str) {
        self.rec.trace(self.now, &TraceEvent::Agent { kind, entity, detail });
    }

    /// Whether transports must put correct checksums in their packets and verify received
    /// ones: true when a capture (or another sink that may read them) is attached or the
    /// world was told to ([`ChecksumPolicy`](crate::world::ChecksumPolicy)). When false,
    /// nothing can see or alter a packet's bytes (the network models bit errors as losses of
    /// whole packets, and routers rewrite only the IPv4 header), so the checksum can be skipped.
    pub fn checksums_needed(&self) -> bool {
        self.rec.checksums
    }

    /// The SCTP packet log, if the run keeps one (`record.packets`).
    #[inline]
    pub fn packet_log(&mut self) -> Option<&mut PacketLog> {
        self.rec.packets.as_mut()
    }
}
