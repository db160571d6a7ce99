//! The wired network: nodes (hosts and routers), interfaces with IPv4 addresses (changeable
//! at run time), full-duplex point-to-point links, and the forwarding path a packet takes
//! through them. What happens to packets (drops, and when traced, queue and wire events) is
//! reported to a [`NetObserver`] passed in by the caller; drops are also counted here, at
//! their location.
//!
//! A link has one [`Channel`] per direction. A channel is the transmitter of the interface at
//! its sending end: an output queue, a serialiser (rate), a propagation delay, an MTU and a loss
//! model. Every packet passes the queue discipline (see [`crate::queue`] for the contract): it
//! is offered, and the transmitter takes the discipline's next packet whenever it is free, at once
//! if it was idle. A packet leaves the queue, occupies the transmitter for `len * 8 / rate`
//! (rounded up to the nanosecond), then travels `delay` and arrives whole at the far interface. Because delay is
//! constant per direction, packets in flight arrive in the order sent; they wait in a FIFO and
//! each arrival event carries only ids, never the packet.
//!
//! Both the end of a transmission and the arrival are decided when the transmission starts,
//! and take their places among simultaneous events then (kernel tickets, one after the
//! other). The arrival is always an event; the end of the transmission is one only when
//! something waits for it: a packet queued behind it, or a discipline that must see every
//! departure ([`Queue::wants_every_departure`]). A packet that finds the transmitters idle
//! thus costs one event per hop, not two; the transmitter is known to be free again when the
//! end's place has gone by ([`Scheduler::is_ahead`]).
//!
//! Failures: when a link goes down, everything queued, being transmitted or in flight on it is
//! dropped (reason `link_down`), as is anything offered while it is down. When an interface goes
//! down, its queue and the packet it is transmitting are dropped, packets it would send or
//! receive while down are dropped (`iface_down`); packets already on the wire keep travelling.

use std::collections::VecDeque;
use std::net::Ipv4Addr;

use rustc_hash::FxHashMap;

use crate::event::{
    DropCounts, DropReason, Event, Location, NetEvent, NetObserver, QueueCounts, QueueReason, TracedKind, WlanTimer,
};
use crate::ids::{AgentId, FlowId};
pub use crate::ids::{IfaceId, LinkId, NodeId};
use crate::kernel::{Scheduler, Ticket};
use crate::loss::{LossConfig, LossModel};
use crate::mobility::{Mobility, Position};
use crate::queue::{Dequeued, Dropped, Enqueued, Passed, Queue, QueueConfig, QueueContext, QueueDisc};
use crate::rng::SimRng;
use crate::routing::{Graph, RoutedAddr, RoutingTable};
use crate::stats::TimeAverage;
use crate::time::{Duration, Instant, LineRate};
use crate::wire::{Packet, PacketMeta, UdpView, PROTO_SCTP, PROTO_TCP, PROTO_UDP};
use crate::wlan::medium::{Medium, Output as WlanOutput};
use crate::wlan::sme::Sme;

mod roaming;
use crate::wlan::{RadioConfig, Role};
pub use roaming::WlanNotice;

/// Why a radio could not be attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WlanError {
    /// There is no WLAN channel with this index.
    #[error("no WLAN channel {0}")]
    NoSuchChannel(u32),
    /// A station's AP interface is not an AP radio on the station's channel.
    #[error("interface {0:?} is not an access point on the station's channel")]
    NotAnAp(IfaceId),
    /// A roaming station's radios are attached with `Network::attach_roaming`.
    #[error("interface {0:?} roams: attach it with attach_roaming")]
    Roaming(IfaceId),
}

/// Hosts originate and consume traffic; routers forward it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// An end system: runs agents, never forwards.
    Host,
    /// Forwards packets by its routing table, decrementing the TTL.
    Router,
}

/// A host or router.
#[derive(Debug)]
pub struct Node {
    /// Host or router.
    pub kind: NodeKind,
    /// Its interfaces, in declaration order.
    pub ifaces: Vec<IfaceId>,
    /// Forwarding table.
    pub routes: RoutingTable,
    /// Drops that happened in this node (routing, delivery).
    pub drops: DropCounts,
    /// Agents bound to (protocol, port).
    ports: FxHashMap<(u8, u16), AgentId>,
    /// Agents that take every packet of a protocol (a transport driver).
    protocols: FxHashMap<u8, AgentId>,
    ip_ident: u16,
    /// Every address of its interfaces with the interface owning it, sorted by address (a
    /// copy of what the interfaces hold, kept in one place for the per-packet "is it mine?"
    /// test).
    local: Vec<(Ipv4Addr, IfaceId)>,
    /// Where the node is over time (`None`: it has no place, as wired-only nodes).
    pub mobility: Option<Mobility>,
}

/// Prefix length an address gets when none is given: one /24 per link, as scenarios number
/// their links. Links whose addresses share a /24 with another link's still route exactly
/// (see [`crate::routing`]).
pub const DEFAULT_PREFIX_LEN: u8 = 24;

/// An address of an interface, with the length of its subnet's prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IfaceAddr {
    /// The address.
    pub addr: Ipv4Addr,
    /// Prefix length of its subnet, 0..=32.
    pub prefix_len: u8,
}

impl IfaceAddr {
    /// `addr` with the [`DEFAULT_PREFIX_LEN`].
    pub fn new(addr: Ipv4Addr) -> Self {
        IfaceAddr { addr, prefix_len: DEFAULT_PREFIX_LEN }
    }
}

/// What an interface is attached to. Forwarding dispatches on it: a packet leaves through the
/// attachment's transmitter and reaches whoever the attachment connects: the far end of a
/// point-to-point link, or on a shared medium (a WLAN channel) the radio the MAC addresses
/// (a station's AP; for an AP, the station owning the destination).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attachment {
    /// One end of a full-duplex point-to-point link.
    Link {
        /// The link.
        link: LinkId,
        /// Which end (0 or 1): the interface transmits on `dirs[side]`.
        side: u8,
    },
    /// A radio on a WLAN channel.
    Wlan {
        /// The channel (index in [`Network::wlans`]).
        medium: u32,
        /// The radio (index in the channel).
        radio: u32,
    },
}

/// Attachment keys of WLAN BSSs in the routing graph (link keys are link ids, below this).
const WLAN_KEY: u32 = 1 << 31;

/// A network interface: its addresses (possibly none) and what it is attached to.
#[derive(Debug)]
pub struct Iface {
    /// Owning node.
    pub node: NodeId,
    /// Its addresses, first = the source address of packets leaving by it unbound (changed
    /// only through [`Network::add_address`] and [`Network::remove_address`]).
    addrs: Vec<IfaceAddr>,
    /// Administrative state.
    pub up: bool,
    /// What it is attached to (`None`: unattached, it can neither send nor receive).
    pub attachment: Option<Attachment>,
    /// Packets received.
    pub rx_packets: u64,
    /// Bytes received (IP datagrams).
    pub rx_bytes: u64,
}

impl Iface {
    /// Its addresses, first = the source address of packets leaving by it unbound.
    #[inline]
    pub fn addrs(&self) -> &[IfaceAddr] {
        &self.addrs
    }

    /// Its first address, if it has one.
    #[inline]
    pub fn addr(&self) -> Option<Ipv4Addr> {
        self.addrs.first().map(|a| a.addr)
    }

    /// True if `addr` is one of its addresses.
    #[inline]
    pub fn has_addr(&self, addr: Ipv4Addr) -> bool {
        self.addrs.iter().any(|a| a.addr == addr)
    }

    /// The link and end it is attached to, if it is attached to a link.
    #[inline]
    pub fn link(&self) -> Option<(LinkId, usize)> {
        match self.attachment? {
            Attachment::Link { link, side } => Some((link, side as usize)),
            Attachment::Wlan { .. } => None,
        }
    }

    /// The channel and radio it is, if it is a WLAN interface.
    #[inline]
    pub fn wlan(&self) -> Option<(u32, u32)> {
        match self.attachment? {
            Attachment::Wlan { medium, radio } => Some((medium, radio)),
            Attachment::Link { .. } => None,
        }
    }
}

/// Parameters of one link direction.
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelConfig {
    /// Data rate in bit/s.
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Largest IP datagram accepted, in bytes.
    pub mtu: usize,
    /// Output queue discipline.
    pub queue: QueueConfig,
    /// Random loss process.
    pub loss: LossConfig,
}

/// Counters of one link direction (and of the output queue of its sending interface).
#[derive(Clone, Debug, Default)]
pub struct ChannelStats {
    /// Packets whose transmission started.
    pub tx_packets: u64,
    /// Bytes whose transmission started.
    pub tx_bytes: u64,
    /// Time the transmitter was busy.
    pub busy: Duration,
    /// Packets the queue accepted while the transmitter was busy, that is packets that waited.
    /// A packet that finds the transmitter idle passes the discipline and leaves it at once; it
    /// is not counted here.
    pub enqueued: u64,
    /// Drops in the queue, the transmitter or on the wire, by reason.
    pub drops: DropCounts,
    /// Congestion Experienced marks the queue discipline set, by reason.
    pub marks: QueueCounts,
    /// Queue length in packets over time.
    pub backlog_packets: TimeAverage,
    /// Queue length in bytes over time.
    pub backlog_bytes: TimeAverage,
}

/// A packet on the wire and its `Arrive` event, decided when it left the transmitter.
struct OnWire {
    pkt: Packet,
    at: Instant,
    ticket: Ticket,
}

/// One direction of a link.
pub struct Channel {
    /// Its parameters.
    pub config: ChannelConfig,
    /// Its counters.
    pub stats: ChannelStats,
    queue: Queue,
    /// Resident packets the discipline dropped during the current call (kept, emptied, reused).
    queue_dropped: Dropped,
    loss: LossModel,
    loss_rng: SimRng,
    /// `config.rate_bps`, ready to give each packet's serialisation time.
    line: LineRate,
    /// Where the packet being sent ends: the instant, and the place among simultaneous events
    /// its `TxDone` holds. Until then the packet is the newest in `in_flight`: its arrival is
    /// decided when it starts.
    tx_end: Option<(Instant, Ticket)>,
    /// Whether that `TxDone` is in the event list. It is put there only when something waits
    /// for the transmitter (a queued packet, or a discipline that must see every departure:
    /// [`Queue::wants_every_departure`]); otherwise the transmitter is simply free from
    /// `tx_end` on, and the packet costs no event but its arrival.
    tx_event: bool,
    /// Packets on the wire (the newest possibly still being sent), oldest first. Only the
    /// oldest has its `Arrive` event in the event list; each of the others waits here with the
    /// place among simultaneous events it took when it started, and is scheduled when the one
    /// before it arrives.
    in_flight: VecDeque<OnWire>,
    /// Bumped when the packet being sent is discarded: stale `TxDone` events are ignored.
    tx_gen: u32,
    /// Bumped when the packets on the wire are discarded: stale `Arrive` events are ignored.
    wire_gen: u32,
}

impl Channel {
    /// A channel in its initial state; `queue_rng` and `loss_rng` are the queue discipline's and
    /// the loss model's streams.
    pub fn new(config: ChannelConfig, queue_rng: SimRng, loss_rng: SimRng) -> Self {
        let ctx = QueueContext { rate_bps: config.rate_bps, delay: config.delay, mtu: config.mtu, rng: queue_rng };
        Channel {
            queue: config.queue.build(ctx),
            queue_dropped: Dropped::new(),
            loss: LossModel::new(config.loss),
            line: LineRate::new(config.rate_bps),
            config,
            stats: ChannelStats::default(),
            loss_rng,
            tx_end: None,
            tx_event: false,
            in_flight: VecDeque::new(),
            tx_gen: 0,
            wire_gen: 0,
        }
    }

    /// Packets waiting in the output queue.
    pub fn backlog_packets(&self) -> usize {
        self.queue.len_packets()
    }

    /// Bytes waiting in the output queue.
    pub fn backlog_bytes(&self) -> usize {
        self.queue.len_bytes()
    }

    /// The output queue's discipline (for its kind and statistics).
    pub fn queue(&self) -> &dyn QueueDisc {
        &self.queue
    }

    /// Whether the transmitter is still sending a packet at the event being handled.
    #[inline(always)]
    fn busy(&self, sched: &Scheduler<Event>) -> bool {
        self.tx_end.is_some_and(|(at, ticket)| sched.is_ahead(at, ticket))
    }

    /// Puts the end of the packet being sent in the event list (once), in the place it took
    /// when the packet started, if something waits for the transmitter: a queued packet, or
    /// a discipline that must see every departure.
    #[inline(always)]
    fn await_tx_end(&mut self, link: LinkId, side: usize, sched: &mut Scheduler<Event>) {
        if self.tx_event || (self.queue.len_packets() == 0 && !self.queue.wants_every_departure()) {
            return;
        }
        if let Some((at, ticket)) = self.tx_end {
            self.tx_event = true;
            let placed = sched.schedule_ticket(at, ticket, Event::TxDone { link, side: side as u8, gen: self.tx_gen });
            debug_assert!(placed.is_ok(), "the transmitter is busy, so its end is ahead");
        }
    }

    /// Stops the transmitter (its link or interface failed): a pending `TxDone` goes stale,
    /// and the packet it was sending, if any, is taken off the wire and returned.
    fn abort_tx(&mut self, sched: &Scheduler<Event>) -> Option<Packet> {
        let busy = self.busy(sched);
        self.tx_gen += 1;
        self.tx_end = None;
        self.tx_event = false;
        if !busy {
            return None;
        }
        let sending = self.in_flight.pop_back().map(|w| w.pkt);
        if self.in_flight.is_empty() {
            self.wire_gen += 1; // it was the oldest: its `Arrive` event goes stale
        }
        sending
    }

    #[inline(always)]
    fn note_backlog(&mut self, now: Instant) {
        self.stats.backlog_packets.set(now, self.queue.len_packets() as u64);
        self.stats.backlog_bytes.set(now, self.queue.len_bytes() as u64);
    }
}

/// A full-duplex point-to-point link between two interfaces.
pub struct Link {
    /// The two interfaces; `dirs[i]` carries packets from `ends[i]` to `ends[1 - i]`.
    pub ends: [IfaceId; 2],
    /// The two directions.
    pub dirs: [Channel; 2],
    /// Whether the link is up.
    pub up: bool,
    /// Routing cost.
    pub cost: u64,
}

/// The whole network and its counters.
pub struct Network {
    /// Nodes by id.
    pub nodes: Vec<Node>,
    /// Interfaces by id.
    pub ifaces: Vec<Iface>,
    /// Links by id.
    pub links: Vec<Link>,
    /// WLAN channels.
    pub wlans: Vec<Medium>,
    /// What the last WLAN event produced (kept, emptied, reused).
    wlan_out: Vec<WlanOutput>,
    /// Management frames of the last WLAN event.
    wlan_mgmt: Vec<WlanOutput>,
    /// Management of APs and roaming stations.
    sme: Sme,
    /// What management decided, to apply (kept, emptied, reused).
    wlan_actions: Vec<crate::wlan::sme::Action>,
    /// What management did, for the world.
    notices: Vec<WlanNotice>,
    /// Per roaming interface (by index): layer-2 timing of its last association.
    l2: Vec<L2Timing>,
    next_uid: u64,
}

/// Layer-2 timing of a roaming interface (kept by the network from its management steps).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct L2Timing {
    /// When its last scan started.
    pub scan_started: Option<Instant>,
    /// When it last left an AP.
    pub left_at: Option<Instant>,
    /// Its last association: when the layer-2 handover started (the later of the start of
    /// the scan that preceded it and the loss of the previous AP) and when it associated.
    pub joined: Option<(Instant, Instant)>,
}

impl L2Timing {
    /// The layer-2 handover time of the last association: from the later of the start of
    /// the scan before it and the loss of the previous AP, to the association (scan,
    /// authentication and association, IEEE 802.11-2020 §11.1.4, §11.3).
    pub fn handover_time(&self) -> Option<Duration> {
        self.joined.map(|(from, at)| at.saturating_since(from))
    }
}

impl Network {
    /// An empty network.
    pub fn new() -> Self {
        Network {
            nodes: Vec::new(),
            ifaces: Vec::new(),
            links: Vec::new(),
            wlans: Vec::new(),
            wlan_out: Vec::new(),
            wlan_mgmt: Vec::new(),
            sme: Sme::default(),
            wlan_actions: Vec::new(),
            notices: Vec::new(),
            l2: Vec::new(),
            next_uid: 0,
        }
    }

    /// Add a node.
    pub fn add_node(&mut self, kind: NodeKind) -> NodeId {
        self.nodes.push(Node {
            kind,
            ifaces: Vec::new(),
            routes: RoutingTable::default(),
            drops: DropCounts::default(),
            ports: FxHashMap::default(),
            protocols: FxHashMap::default(),
            ip_ident: 0,
            local: Vec::new(),
            mobility: None,
        });
        NodeId(self.nodes.len() as u32 - 1)
    }

    /// Add an interface with address `addr` (`None`: no address yet) to `node`.
    pub fn add_iface(&mut self, node: NodeId, addr: Option<IfaceAddr>) -> IfaceId {
        let id = IfaceId(self.ifaces.len() as u32);
        let addrs = addr.into_iter().collect();
        self.ifaces.push(Iface { node, addrs, up: true, attachment: None, rx_packets: 0, rx_bytes: 0 });
        self.nodes[node.index()].ifaces.push(id);
        self.refresh_local(node);
        id
    }

    /// Connect two interfaces with a link; `dirs[0]` carries `a -> b`.
    pub fn add_link(&mut self, a: IfaceId, b: IfaceId, dirs: [Channel; 2], cost: u64) -> LinkId {
        let id = LinkId(self.links.len() as u32);
        self.ifaces[a.index()].attachment = Some(Attachment::Link { link: id, side: 0 });
        self.ifaces[b.index()].attachment = Some(Attachment::Link { link: id, side: 1 });
        self.links.push(Link { ends: [a, b], dirs, up: true, cost });
        id
    }

    /// Add a WLAN channel (built with its index, [`Network::next_wlan`]).
    pub fn add_wlan(&mut self, medium: Medium) -> u32 {
        self.wlans.push(medium);
        self.wlans.len() as u32 - 1
    }

    /// The index the next WLAN channel gets.
    pub fn next_wlan(&self) -> u32 {
        self.wlans.len() as u32
    }

    /// Attach `iface` to WLAN channel `medium` as a radio. A station names its AP's interface,
    /// which must already be a radio on the same channel. Returns the radio's index.
    pub fn attach_radio(
        &mut self,
        iface: IfaceId,
        medium: u32,
        config: &RadioConfig,
        rng: SimRng,
        queue_rng: SimRng,
    ) -> Result<u32, WlanError> {
        let m = self.wlans.get(medium as usize).ok_or(WlanError::NoSuchChannel(medium))?;
        let ap = match config.role {
            Role::AccessPoint => None,
            Role::Roaming => return Err(WlanError::Roaming(iface)),
            Role::Station { ap } => match self.ifaces.get(ap.index()).and_then(Iface::wlan) {
                Some((am, ar)) if am == medium && m.ap_of(ar).is_none() => Some(ar),
                _ => return Err(WlanError::NotAnAp(ap)),
            },
        };
        let radio = self.wlans[medium as usize].add_radio(iface, config, ap, rng, queue_rng);
        if config.role == Role::AccessPoint {
            self.sme.add_ap(medium, radio, config.beacon_interval);
        }
        self.ifaces[iface.index()].attachment = Some(Attachment::Wlan { medium, radio });
        self.refresh_radio_addrs(iface);
        Ok(radio)
    }

    /// Tell a WLAN interface's channel its addresses.
    fn refresh_radio_addrs(&mut self, iface: IfaceId) {
        let i = &self.ifaces[iface.index()];
        if let Some((m, r)) = i.wlan() {
            let addrs = i.addrs.iter().map(|a| a.addr).collect();
            self.wlans[m as usize].set_addrs(r, addrs);
        }
    }

    /// A WLAN channel's event: run it and settle what it produced (deliveries, drops).
    /// Returns the agent to deliver a packet to, if one reached its destination host.
    #[allow(clippy::too_many_arguments)]
    pub fn on_wlan<O: NetObserver + ?Sized>(
        &mut self,
        medium: u32,
        timer: WlanTimer,
        arg: u32,
        gen: u32,
        now: Instant,
        sched: &mut Scheduler<Event>,
        obs: &mut O,
    ) -> Option<(AgentId, Packet)> {
        let m = &mut self.wlans[medium as usize];
        m.on_event(timer, arg, gen, now, sched);
        self.settle_wlan(medium, now, sched, obs)
    }

    /// Account for what a WLAN channel produced: drops, and the packet delivered, if any
    /// (at most one per event), which is received by its node.
    #[inline]
    fn settle_wlan<O: NetObserver + ?Sized>(
        &mut self,
        medium: u32,
        now: Instant,
        sched: &mut Scheduler<Event>,
        obs: &mut O,
    ) -> Option<(AgentId, Packet)> {
        if !self.wlans[medium as usize].has_outputs() {
            // Most channel events deliver and drop nothing.
            return None;
        }
        self.settle_wlan_outputs(medium, now, sched, obs)
    }

    fn settle_wlan_outputs<O: NetObserver + ?Sized>(
        &mut self,
        medium: u32,
        now: Instant,
        sched: &mut Scheduler<Event>,
        obs: &mut O,
    ) -> Option<(AgentId, Packet)> {
        let mut out = std::mem::take(&mut self.wlan_out);
        self.wlans[medium as usize].take_outputs(&mut out);
        let mut delivered = None;
        for o in out.drain(..) {
            match o {
                WlanOutput::Drop(radio, pkt, reason) => {
                    let iface = self.wlans[medium as usize].iface(radio);
                    self.drop(pkt, reason, Location::Iface(iface), now, obs);
                }
                WlanOutput::Deliver(radio, pkt) => {
                    let to = self.wlans[medium as usize].iface(radio);
                    let iface = &mut self.ifaces[to.index()];
                    if !iface.up {
                        self.drop(pkt, DropReason::IfaceDown, Location::Iface(to), now, obs);
                        continue;
                    }
                    iface.rx_packets += 1;
                    iface.rx_bytes += pkt.len() as u64;
                    let node = iface.node;
                    if obs.traces(TracedKind::Rx) {
                        obs.report(now, &NetEvent::Rx { iface: to, pkt: &pkt });
                    }
                    delivered = delivered.or(self.receive(node, pkt, now, sched, obs));
                }
                mgmt @ (WlanOutput::Mgmt { .. } | WlanOutput::MgmtDone { .. }) => self.wlan_mgmt.push(mgmt),
            }
        }
        self.wlan_out = out;
        if !self.wlan_mgmt.is_empty() {
            let mut frames = std::mem::take(&mut self.wlan_mgmt);
            self.on_mgmt_frames(medium, &mut frames, now, sched, obs);
            self.wlan_mgmt = frames;
        }
        delivered
    }

    /// Give `node` a place in the world that changes over time as `mobility` says.
    pub fn set_mobility(&mut self, node: NodeId, mobility: Mobility) {
        self.nodes[node.index()].mobility = Some(mobility);
    }

    /// Where `node` is at `t`, if it has a place in the world.
    pub fn position_at(&self, node: NodeId, t: Instant) -> Option<Position> {
        self.nodes[node.index()].mobility.as_ref().map(|m| m.position_at(t))
    }

    /// Bind `agent` to (protocol, port) on `node`. Returns false if already taken.
    pub fn bind_port(&mut self, node: NodeId, protocol: u8, port: u16, agent: AgentId) -> bool {
        let ports = &mut self.nodes[node.index()].ports;
        if ports.contains_key(&(protocol, port)) {
            return false;
        }
        ports.insert((protocol, port), agent);
        true
    }

    /// Give every packet of `protocol` arriving at `node` to `agent` (a transport driver that
    /// does its own demultiplexing). Returns false if already taken.
    pub fn bind_protocol(&mut self, node: NodeId, protocol: u8, agent: AgentId) -> bool {
        let protocols = &mut self.nodes[node.index()].protocols;
        if protocols.contains_key(&protocol) {
            return false;
        }
        protocols.insert(protocol, agent);
        true
    }

    /// The interface of `node` that owns `addr`, if any.
    pub fn iface_with_addr(&self, node: NodeId, addr: Ipv4Addr) -> Option<IfaceId> {
        let local = &self.nodes[node.index()].local;
        let k = local.partition_point(|(a, _)| *a < addr);
        local.get(k).filter(|(a, _)| *a == addr).map(|&(_, i)| i)
    }

    /// The links and interfaces (both ends of each hop) a packet from `node` with source
    /// `src` to `dst` crosses on its static route; `None` if a hop has no route or no link.
    pub fn route_elements(&self, node: NodeId, src: Ipv4Addr, dst: Ipv4Addr) -> Option<(Vec<LinkId>, Vec<IfaceId>)> {
        let (mut links, mut ifaces) = (Vec::new(), Vec::new());
        let mut at = node;
        let mut preferred = self.iface_with_addr(node, src);
        for _ in 0..64 {
            let out = self.nodes[at.index()].routes.lookup(dst, preferred)?;
            let (link, side) = self.ifaces[out.index()].link()?;
            let far = self.links[link.index()].ends[1 - side];
            links.push(link);
            ifaces.extend([out, far]);
            let far_iface = &self.ifaces[far.index()];
            if far_iface.has_addr(dst) || self.nodes[far_iface.node.index()].kind != NodeKind::Router {
                break;
            }
            at = far_iface.node;
            preferred = None;
        }
        Some((links, ifaces))
    }

    /// Long-run loss probability of the static route from `node` (source `src`) to `dst`
    /// from the configured random loss of each link direction it crosses: 1 - the product of
    /// (1 - mean loss) ([`LossConfig::mean_loss`]). Queue drops and breaks are not counted.
    /// `None` if there is no route.
    pub fn configured_loss_on_route(&self, node: NodeId, src: Ipv4Addr, dst: Ipv4Addr) -> Option<f64> {
        let (_, ifaces) = self.route_elements(node, src, dst)?;
        let mut delivered = 1.0;
        // `ifaces` holds (leaving, arriving) pairs, one per hop.
        for out in ifaces.iter().step_by(2) {
            let (link, side) = self.ifaces[out.index()].link()?;
            delivered *= 1.0 - self.links[link.index()].dirs[side].config.loss.mean_loss();
        }
        Some(1.0 - delivered)
    }

    /// Next IPv4 identification value of `node`.
    pub fn next_ip_ident(&mut self, node: NodeId) -> u16 {
        let n = &mut self.nodes[node.index()];
        n.ip_ident = n.ip_ident.wrapping_add(1);
        n.ip_ident
    }

    /// Next packet uid.
    pub fn next_uid(&mut self) -> u64 {
        self.next_uid += 1;
        self.next_uid
    }

    /// The interface a packet from `node` to `dst` leaves by: the one owning `src` when it
    /// reaches the destination, otherwise the best route.
    pub fn route_from(&self, node: NodeId, src: Option<Ipv4Addr>, dst: Ipv4Addr) -> Option<IfaceId> {
        let preferred = src.and_then(|a| self.iface_with_addr(node, a));
        self.nodes[node.index()].routes.lookup(dst, preferred)
    }

    /// A host originates `pkt`: route it by its addresses ([`Network::route_from`]) and
    /// transmit.
    pub fn send_from<O: NetObserver + ?Sized>(
        &mut self,
        node: NodeId,
        pkt: Packet,
        now: Instant,
        sched: &mut Scheduler<Event>,
        obs: &mut O,
    ) {
        let Some(ip) = pkt.ip() else {
            return self.drop(pkt, DropReason::Malformed, Location::Node(node), now, obs);
        };
        match self.route_from(node, Some(ip.src()), ip.dst()) {
            Some(out) => self.transmit(out, pkt, now, sched, obs),
            None => self.drop(pkt, DropReason::NoRoute, Location::Node(node), now, obs),
        }
    }

    /// Hand `pkt` to interface `out` for transmission: through its queue discipline, and on to
    /// the transmitter at once if it is idle.
    pub fn transmit<O: NetObserver + ?Sized>(
        &mut self,
        out: IfaceId,
        pkt: Packet,
        now: Instant,
        sched: &mut Scheduler<Event>,
        obs: &mut O,
    ) {
        let iface = &self.ifaces[out.index()];
        if !iface.up {
            return self.drop(pkt, DropReason::IfaceDown, Location::Iface(out), now, obs);
        }
        let (link_id, side) = match iface.attachment {
            Some(Attachment::Link { link, side }) => (link, side as usize),
            Some(Attachment::Wlan { medium, radio }) => {
                if obs.traces(TracedKind::Tx) {
                    obs.report(now, &NetEvent::Tx { iface: out, pkt: &pkt });
                }
                self.wlans[medium as usize].send(radio, pkt, now, sched);
                // A packet given to a MAC is delivered by a later event, never at once.
                let delivered = self.settle_wlan(medium, now, sched, obs);
                debug_assert!(delivered.is_none());
                return;
            }
            None => return self.drop(pkt, DropReason::LinkDown, Location::Iface(out), now, obs),
        };
        let link = &mut self.links[link_id.index()];
        if !link.up {
            return self.drop(pkt, DropReason::LinkDown, Location::Link(link_id, out), now, obs);
        }
        let ch = &mut link.dirs[side];
        if pkt.len() > ch.config.mtu {
            return self.drop(pkt, DropReason::MtuExceeded, Location::Iface(out), now, obs);
        }
        let meta = pkt.meta;
        if !ch.busy(sched) {
            // The transmitter is idle, so the queue is empty (disciplines are work-conserving):
            // the packet is offered and the next one taken at once. It is neither counted as
            // enqueued nor traced as waiting, exactly like a packet that never waited.
            return match ch.queue.enqueue_dequeue(pkt, now, &mut ch.queue_dropped) {
                Passed::Through(pkt) => self.start_tx(link_id, side, pkt, now, sched, obs),
                Passed::Otherwise(arrival, next) => {
                    self.settle_idle(link_id, side, out, meta, arrival, next, now, sched, obs)
                }
            };
        }
        // Only a run that traces enqueues or marks pays for the copy those events show after
        // the queue took the packet.
        let enqueues = obs.traces(TracedKind::Enqueue);
        let traced = (enqueues || obs.traces(TracedKind::Mark)).then(|| pkt.clone());
        let arrival = ch.queue.enqueue(pkt, now, &mut ch.queue_dropped);
        ch.await_tx_end(link_id, side, sched);
        if matches!(arrival, Enqueued::Queued { marked: None }) && ch.queue_dropped.is_empty() {
            ch.stats.enqueued += 1;
            ch.note_backlog(now);
            if let Some(pkt) = traced.filter(|_| enqueues) {
                let backlog = ch.queue.len_packets();
                obs.report(now, &NetEvent::Enqueue { iface: out, pkt: &pkt, backlog });
            }
            return;
        }
        self.settle_busy(link_id, side, out, meta, arrival, traced, now, obs);
    }

    /// What the discipline of (`link`, `side`) did with an arrival (`meta`, offered through
    /// `out`) to an idle transmitter, beyond releasing it untouched: drops, marks, or keeping
    /// something back. `next` is what it released.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn settle_idle<O: NetObserver + ?Sized>(
        &mut self,
        link_id: LinkId,
        side: usize,
        out: IfaceId,
        meta: PacketMeta,
        arrival: Enqueued,
        next: Option<Dequeued>,
        now: Instant,
        sched: &mut Scheduler<Event>,
        obs: &mut O,
    ) {
        let ch = &mut self.links[link_id.index()].dirs[side];
        if ch.queue.len_packets() != 0 {
            ch.note_backlog(now); // the discipline kept something back
        }
        self.drop_resident(link_id, side, now, obs);
        match arrival {
            Enqueued::Dropped(pkt, reason) => self.drop(pkt, DropReason::Queue(reason), Location::Iface(out), now, obs),
            Enqueued::Queued { marked: Some(reason) } => {
                // The queue was empty: the packet released, if any, is the arrival, as marked.
                let pkt = next.as_ref().map(|d| &d.pkt).filter(|p| p.meta.uid == meta.uid);
                self.mark(link_id, side, out, meta.flow, reason, pkt, now, obs);
            }
            Enqueued::Queued { marked: None } => {}
        }
        self.release(link_id, side, next, false, now, sched, obs);
    }

    /// What the discipline of (`link`, `side`) did with an arrival (`meta`, offered through
    /// `out`) while the transmitter was busy, beyond queueing it untouched: drops and marks.
    /// `traced` is the copy of the arrival a traced run keeps.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn settle_busy<O: NetObserver + ?Sized>(
        &mut self,
        link_id: LinkId,
        side: usize,
        out: IfaceId,
        meta: PacketMeta,
        arrival: Enqueued,
        mut traced: Option<Packet>,
        now: Instant,
        obs: &mut O,
    ) {
        self.links[link_id.index()].dirs[side].note_backlog(now);
        self.drop_resident(link_id, side, now, obs);
        let marked = match arrival {
            Enqueued::Dropped(pkt, reason) => {
                return self.drop(pkt, DropReason::Queue(reason), Location::Iface(out), now, obs);
            }
            Enqueued::Queued { marked } => marked,
        };
        self.links[link_id.index()].dirs[side].stats.enqueued += 1;
        if let Some(reason) = marked {
            if let Some(pkt) = traced.as_mut() {
                pkt.mark_ce(); // the copy shows the packet as the queue holds it
            }
            self.mark(link_id, side, out, meta.flow, reason, traced.as_ref(), now, obs);
        }
        if let Some(pkt) = traced.filter(|_| obs.traces(TracedKind::Enqueue)) {
            let backlog = self.links[link_id.index()].dirs[side].queue.len_packets();
            obs.report(now, &NetEvent::Enqueue { iface: out, pkt: &pkt, backlog });
        }
    }

    /// Start sending `next`, the packet the discipline of (`link`, `side`) released, if any;
    /// `waited` tells a packet that waited in the queue from one that has just arrived to an
    /// idle transmitter.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn release<O: NetObserver + ?Sized>(
        &mut self,
        link_id: LinkId,
        side: usize,
        next: Option<Dequeued>,
        waited: bool,
        now: Instant,
        sched: &mut Scheduler<Event>,
        obs: &mut O,
    ) {
        let Some(Dequeued { pkt, marked }) = next else { return };
        let from = self.links[link_id.index()].ends[side];
        if waited && obs.traces(TracedKind::Dequeue) {
            obs.report(now, &NetEvent::Dequeue { iface: from, pkt: &pkt });
        }
        if let Some(reason) = marked {
            self.mark(link_id, side, from, pkt.meta.flow, reason, Some(&pkt), now, obs);
        }
        self.start_tx(link_id, side, pkt, now, sched, obs);
    }

    /// Account for the resident packets the discipline of (`link`, `side`) has just dropped.
    #[cold]
    fn drop_resident<O: NetObserver + ?Sized>(&mut self, link_id: LinkId, side: usize, now: Instant, obs: &mut O) {
        let link = &mut self.links[link_id.index()];
        let from = link.ends[side];
        let mut dropped = std::mem::take(&mut link.dirs[side].queue_dropped);
        for (pkt, reason) in dropped.drain(..) {
            self.drop(pkt, DropReason::Queue(reason), Location::Iface(from), now, obs);
        }
        // Hand the (empty) list back, so its capacity is reused.
        self.links[link_id.index()].dirs[side].queue_dropped = dropped;
    }

    /// Count a Congestion Experienced mark the discipline of (`link`, `side`) (the queue of
    /// `iface`) set on a packet of `flow`, and report it (the observer charges the flow).
    #[allow(clippy::too_many_arguments)]
    #[cold]
    fn mark<O: NetObserver + ?Sized>(
        &mut self,
        link_id: LinkId,
        side: usize,
        iface: IfaceId,
        flow: FlowId,
        reason: QueueReason,
        pkt: Option<&Packet>,
        now: Instant,
        obs: &mut O,
    ) {
        self.links[link_id.index()].dirs[side].stats.marks.add(reason);
        obs.report(now, &NetEvent::Mark { iface, reason, flow, pkt });
    }

    /// Puts `pkt` on the transmitter of (`link`, `side`): its end and its arrival decided now.
    /// Inlined into its callers (an idle transmitter, the end of a transmission), like
    /// [`Network::receive`]: the packet is not handed over through the stack.
    #[inline(always)]
    fn start_tx<O: NetObserver + ?Sized>(
        &mut self,
        link_id: LinkId,
        side: usize,
        pkt: Packet,
        now: Instant,
        sched: &mut Scheduler<Event>,
        obs: &mut O,
    ) {
        let link = &mut self.links[link_id.index()];
        let from = link.ends[side];
        let ch = &mut link.dirs[side];
        let tx_time = ch.line.transmission(pkt.len());
        ch.stats.tx_packets += 1;
        ch.stats.tx_bytes += pkt.len() as u64;
        ch.stats.busy = ch.stats.busy + tx_time;
        let end = now.saturating_add(tx_time);
        // The transmission's end and the arrival take their places among simultaneous events
        // now, one after the other.
        ch.tx_end = Some((end, sched.ticket()));
        ch.tx_event = false;
        let (at, ticket) = (end.saturating_add(ch.config.delay), sched.ticket());
        if ch.in_flight.is_empty() {
            let scheduled =
                sched.schedule_ticket(at, ticket, Event::Arrive { link: link_id, side: side as u8, gen: ch.wire_gen });
            debug_assert!(scheduled.is_ok(), "a fresh ticket for now or later");
        }
        // The packet moves into its place on the wire straight from the argument: no copy of
        // it on the stack in between.
        ch.in_flight.push_back(OnWire { pkt, at, ticket });
        if obs.traces(TracedKind::Tx) {
            let pkt = ch.in_flight.back().map(|w| &w.pkt).expect("just pushed");
            obs.report(now, &NetEvent::Tx { iface: from, pkt });
        }
        ch.await_tx_end(link_id, side, sched);
    }

    /// The transmitter of (`link`, `side`) finished serialising its packet (already on the
    /// wire): start the next one.
    pub fn on_tx_done<O: NetObserver + ?Sized>(
        &mut self,
        link_id: LinkId,
        side: usize,
        gen: u32,
        now: Instant,
        sched: &mut Scheduler<Event>,
        obs: &mut O,
    ) {
        let ch = &mut self.links[link_id.index()].dirs[side];
        if gen != ch.tx_gen {
            return; // the packet was discarded by a failure meanwhile
        }
        ch.tx_end = None;
        ch.tx_event = false;
        let next = ch.queue.dequeue(now, &mut ch.queue_dropped);
        if next.is_none() && ch.queue_dropped.is_empty() {
            return;
        }
        ch.note_backlog(now);
        if !ch.queue_dropped.is_empty() {
            self.drop_resident(link_id, side, now, obs);
        }
        self.release(link_id, side, next, true, now, sched, obs);
    }

    /// The oldest packet on the wire of (`link`, `side`) arrives at the far interface.
    /// Returns the agent to deliver it to, if it reached its destination host.
    pub fn on_arrive<O: NetObserver + ?Sized>(
        &mut self,
        link_id: LinkId,
        side: usize,
        gen: u32,
        now: Instant,
        sched: &mut Scheduler<Event>,
        obs: &mut O,
    ) -> Option<(AgentId, Packet)> {
        let link = &mut self.links[link_id.index()];
        let (from, to) = (link.ends[side], link.ends[1 - side]);
        let ch = &mut link.dirs[side];
        if gen != ch.wire_gen {
            return None;
        }
        let pkt = ch.in_flight.pop_front()?.pkt;
        if let Some(next) = ch.in_flight.front() {
            // It arrives later than this one, or at the same instant with a later ticket.
            let scheduled =
                sched.schedule_ticket(next.at, next.ticket, Event::Arrive { link: link_id, side: side as u8, gen });
            debug_assert!(scheduled.is_ok(), "wire order is arrival order");
        }
        if !ch.loss.is_none() && ch.loss.lose(&mut ch.loss_rng) {
            self.drop(pkt, DropReason::LinkLoss, Location::Link(link_id, from), now, obs);
            return None;
        }
        let iface = &mut self.ifaces[to.index()];
        if !iface.up {
            self.drop(pkt, DropReason::IfaceDown, Location::Iface(to), now, obs);
            return None;
        }
        iface.rx_packets += 1;
        iface.rx_bytes += pkt.len() as u64;
        let node = iface.node;
        if obs.traces(TracedKind::Rx) {
            obs.report(now, &NetEvent::Rx { iface: to, pkt: &pkt });
        }
        self.receive(node, pkt, now, sched, obs)
    }

    /// A packet arrived at `node`: forward it (router) or find its agent (host).
    ///
    /// Inlined into its callers (the arrival, and so the event loop): called, it assembled
    /// the packet it hands back on its own stack and copied it out with wider loads than the
    /// stores that wrote it, loads that wait for every earlier store to reach the cache.
    #[inline(always)]
    fn receive<O: NetObserver + ?Sized>(
        &mut self,
        node_id: NodeId,
        mut pkt: Packet,
        now: Instant,
        sched: &mut Scheduler<Event>,
        obs: &mut O,
    ) -> Option<(AgentId, Packet)> {
        let Some(ip) = pkt.ip() else {
            self.drop(pkt, DropReason::Malformed, Location::Node(node_id), now, obs);
            return None;
        };
        let dst = ip.dst();
        let protocol = ip.protocol();
        let local = self.iface_with_addr(node_id, dst).is_some();
        let node = &self.nodes[node_id.index()];
        if local {
            let agent = node.protocols.get(&protocol).copied().or_else(|| match protocol {
                PROTO_UDP | PROTO_TCP | PROTO_SCTP => {
                    // The destination port sits at the same offset in UDP, TCP and SCTP.
                    let port = UdpView::new(ip.payload())?.dst_port();
                    node.ports.get(&(protocol, port)).copied()
                }
                _ => None,
            });
            match agent {
                Some(a) => return Some((a, pkt)),
                None => {
                    self.drop(pkt, DropReason::PortUnreachable, Location::Node(node_id), now, obs);
                    return None;
                }
            }
        }
        if node.kind == NodeKind::Host {
            self.drop(pkt, DropReason::NotForThisHost, Location::Node(node_id), now, obs);
            return None;
        }
        // RFC 1812 §5.3.1: a router discards a datagram whose TTL would reach zero.
        if ip.ttl() <= 1 {
            self.drop(pkt, DropReason::TtlExpired, Location::Node(node_id), now, obs);
            return None;
        }
        match node.routes.lookup(dst, None) {
            Some(out) => {
                pkt.decrement_ttl();
                self.transmit(out, pkt, now, sched, obs);
            }
            None => self.drop(pkt, DropReason::NoRoute, Location::Node(node_id), now, obs),
        }
        None
    }

    /// Account for a dropped packet at its location, and report it (the observer charges its
    /// flow and traces it).
    pub fn drop<O: NetObserver + ?Sized>(
        &mut self,
        pkt: Packet,
        reason: DropReason,
        at: Location,
        now: Instant,
        obs: &mut O,
    ) {
        match at {
            Location::Node(n) => self.nodes[n.index()].drops.add(reason),
            Location::Iface(i) | Location::Link(_, i) => match self.ifaces[i.index()].attachment {
                Some(Attachment::Link { link, side }) => {
                    self.links[link.index()].dirs[side as usize].stats.drops.add(reason)
                }
                Some(Attachment::Wlan { medium, radio }) => {
                    self.wlans[medium as usize].radio_drops_mut(radio).add(reason)
                }
                None => self.nodes[self.ifaces[i.index()].node.index()].drops.add(reason),
            },
        }
        obs.report(now, &NetEvent::Drop { reason, at, pkt: &pkt });
    }

    /// Take a link down: everything queued, being sent or on the wire is lost.
    pub fn link_down<O: NetObserver + ?Sized>(
        &mut self,
        link_id: LinkId,
        now: Instant,
        sched: &Scheduler<Event>,
        obs: &mut O,
    ) {
        let link = &mut self.links[link_id.index()];
        link.up = false;
        let mut lost = Vec::new();
        for side in 0..2 {
            let from = link.ends[side];
            let ch = &mut link.dirs[side];
            let sending = ch.abort_tx(sched);
            ch.wire_gen += 1;
            lost.extend(
                sending
                    .into_iter()
                    .chain(ch.in_flight.drain(..).map(|w| w.pkt))
                    .chain(ch.queue.flush())
                    .map(|p| (from, p)),
            );
            ch.note_backlog(now);
        }
        for (from, pkt) in lost {
            self.drop(pkt, DropReason::LinkDown, Location::Link(link_id, from), now, obs);
        }
    }

    /// Bring a link back up (idle, empty).
    pub fn link_up(&mut self, link_id: LinkId) {
        self.links[link_id.index()].up = true;
    }

    /// Take an interface down: its queue and the packet it is sending are lost. An AP's WLAN
    /// interface deauthenticates its stations first ([`crate::wlan::sme::Sme`]).
    pub fn iface_down<O: NetObserver + ?Sized>(
        &mut self,
        iface_id: IfaceId,
        now: Instant,
        sched: &mut Scheduler<Event>,
        obs: &mut O,
    ) {
        let iface = &mut self.ifaces[iface_id.index()];
        iface.up = false;
        if let Some((m, r)) = iface.wlan() {
            self.wlans[m as usize].flush(r, DropReason::IfaceDown, now);
            self.set_ap_up(m, r, false, now, sched);
            self.settle_media_drops(now, obs);
            return;
        }
        let Some((link_id, side)) = iface.link() else { return };
        let ch = &mut self.links[link_id.index()].dirs[side];
        let lost: Vec<Packet> = ch.abort_tx(sched).into_iter().chain(ch.queue.flush()).collect();
        ch.note_backlog(now);
        for pkt in lost {
            self.drop(pkt, DropReason::IfaceDown, Location::Iface(iface_id), now, obs);
        }
    }

    /// Bring an interface back up (an AP's WLAN interface beacons and admits stations again).
    pub fn iface_up(&mut self, iface_id: IfaceId, now: Instant, sched: &mut Scheduler<Event>) {
        let iface = &mut self.ifaces[iface_id.index()];
        iface.up = true;
        if let Some((m, r)) = iface.wlan() {
            self.set_ap_up(m, r, true, now, sched);
        }
    }

    /// Give `iface` another address; routes are recomputed. False if it already has it.
    pub fn add_address(&mut self, iface: IfaceId, addr: IfaceAddr) -> bool {
        let i = &mut self.ifaces[iface.index()];
        if i.has_addr(addr.addr) {
            return false;
        }
        i.addrs.push(addr);
        let node = i.node;
        self.refresh_local(node);
        self.refresh_radio_addrs(iface);
        self.recompute_routes();
        true
    }

    /// Take `addr` from `iface`; routes are recomputed. False if it did not have it.
    pub fn remove_address(&mut self, iface: IfaceId, addr: Ipv4Addr) -> bool {
        let i = &mut self.ifaces[iface.index()];
        let before = i.addrs.len();
        i.addrs.retain(|a| a.addr != addr);
        if i.addrs.len() == before {
            return false;
        }
        let node = i.node;
        self.refresh_local(node);
        self.refresh_radio_addrs(iface);
        self.recompute_routes();
        true
    }

    /// Rebuild a node's list of local addresses from its interfaces.
    fn refresh_local(&mut self, node: NodeId) {
        let n = &self.nodes[node.index()];
        let mut local: Vec<(Ipv4Addr, IfaceId)> =
            n.ifaces.iter().flat_map(|&i| self.ifaces[i.index()].addrs.iter().map(move |a| (a.addr, i))).collect();
        // By address (a stable sort: an address two interfaces share goes to the first), so
        // the per-packet "is it mine?" test is a binary search: a router with a link to each
        // of 1,000 hosts would otherwise compare 1,000 addresses for every packet it forwards.
        local.sort_by_key(|&(a, _)| a);
        self.nodes[node.index()].local = local;
    }

    /// Recompute every node's automatic routes from the current topology and addresses
    /// (explicit routes stay). Link and interface state play no part: see [`crate::routing`].
    pub fn recompute_routes(&mut self) {
        let tables = self.routing_graph().shortest_paths();
        for (node, table) in self.nodes.iter_mut().zip(tables) {
            node.routes.set_auto(table);
        }
    }

    /// The graph routing is computed on.
    fn routing_graph(&self) -> Graph {
        let far_end = |iface: &Iface| {
            let (l, side) = iface.link()?;
            let link = &self.links[l.index()];
            Some((l.0, self.ifaces[link.ends[1 - side].index()].node.index(), link.cost))
        };
        // A WLAN interface reaches its BSS: a station its AP, an AP each of its stations
        // (cost 1 per hop). Only a station's addresses are reached through the BSS: an AP's
        // own address on its WLAN side is not routed (it bridges).
        let bss_neighbours = |id: IfaceId| -> Vec<(u32, usize, u64)> {
            let Some((m, r)) = self.ifaces[id.index()].wlan() else { return Vec::new() };
            let medium = &self.wlans[m as usize];
            let node_of = |i: IfaceId| self.ifaces[i.index()].node.index();
            match medium.ap_of(r) {
                Some(ap) => vec![(WLAN_KEY | (m << 16) | ap, node_of(medium.iface(ap)), 1)],
                None => medium.stations_of(r).map(|s| (WLAN_KEY | (m << 16) | r, node_of(s), 1)).collect(),
            }
        };
        let station_end = |id: IfaceId| {
            let (m, r) = self.ifaces[id.index()].wlan()?;
            let medium = &self.wlans[m as usize];
            let ap = medium.ap_of(r)?;
            Some((WLAN_KEY | (m << 16) | ap, (self.ifaces[medium.iface(ap).index()].node.index(), 1)))
        };
        Graph {
            transit: self.nodes.iter().map(|n| n.kind == NodeKind::Router).collect(),
            adjacency: self
                .nodes
                .iter()
                .map(|n| {
                    n.ifaces
                        .iter()
                        .flat_map(|&i| {
                            let wired = far_end(&self.ifaces[i.index()]).map(|(l, nb, cost)| (i, nb, cost, l));
                            let wireless = bss_neighbours(i).into_iter().map(move |(key, nb, cost)| (i, nb, cost, key));
                            wired.into_iter().chain(wireless)
                        })
                        .collect()
                })
                .collect(),
            addresses: self
                .nodes
                .iter()
                .map(|n| {
                    n.ifaces
                        .iter()
                        .flat_map(|&i| {
                            let iface = &self.ifaces[i.index()];
                            let attached =
                                far_end(iface).map(|(l, nb, cost)| (l, (nb, cost))).or_else(|| station_end(i));
                            iface.addrs.iter().map(move |a| RoutedAddr {
                                addr: a.addr,
                                prefix_len: a.prefix_len,
                                attached,
                            })
                        })
                        .collect()
                })
                .collect(),
        }
    }

    /// The channel whose transmitter is `iface`, if it is attached to a link.
    pub fn tx_channel(&self, iface: IfaceId) -> Option<&Channel> {
        let (l, side) = self.ifaces[iface.index()].link()?;
        Some(&self.links[l.index()].dirs[side])
    }
}

impl Default for Network {
    fn default() -> Self {
        Self::new()
    }
}
