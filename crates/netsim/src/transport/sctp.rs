//! The SCTP driver: an [`sctp::Endpoint`] on a simulated host, behind the socket surface
//! ([`SctpSocketApi`]) that applications ([`crate::apps::sctp`]) are written against.
//!
//! [`SctpSocket`] follows the endpoint's driving contract: the owning agent hands it the
//! packets that arrive ([`SctpSocket::on_packet`]) and its timer events
//! ([`SctpSocket::on_timer`]); after every input and application command,
//! [`SctpSocket::flush`] sends what the engine polls out (the source address is whatever
//! interface the route leaves by, unless the engine names one), surfaces each association's
//! events (traced as `sctp` events) and follows the endpoint's deadline with an
//! [`EngineTimer`].
//!
//! Per association it keeps: the flow its packets are accounted to (one flow per association,
//! so drops of an association's packets are charged to it like any flow's; stateless replies
//! and the packets of an accepted association belong to no flow, as a TCP sink's ACKs), the
//! flow of the peer's packets (learnt from their metadata, for the receiving side's
//! accounting), and the failover bookkeeping of an association it opened: failover times are
//! measured from the first scheduled link/interface failure on the static route to the primary
//! address (`Ctx::first_break_on_route`).
//!
//! Associations are named in results by the order in which the socket met them: the first
//! under the socket's name, the next ones as `<name>/assoc<k>` (k = 1, 2, ...), so a socket with
//! one association reports exactly as it always did.
//!
//! The surface, [`SctpSocketApi`], is what an application needs from an SCTP socket and
//! nothing of the simulator: it uses only the `sctp` engine's and `simtime`'s types, so the
//! real-socket driver (SCTP over UDP, RFC 6951) implements the same trait and runs the same
//! applications (`sctp_udp::UdpDriver`). It lives here, beside the simulator's implementation.

use std::borrow::Cow;
use std::net::{IpAddr, Ipv4Addr};

use sctp::cmt::RetransmitConfig;
use sctp::{AssocId, Association, Checksum, Endpoint, Event, Message, PathState, SendError};

use crate::agent::{Ctx, Route};
use crate::packetlog::{AssocLog, NO_PATH};
use crate::recorder::{Scalars, TimeSeries};
use crate::time::{Duration, Instant};
use crate::transport::sctp_report::{
    association_sample, association_scalars, failover_scalars, path_entity, AssocFacts, FailoverTimes,
};
use crate::transport::timer::EngineTimer;
use crate::wire::{Ecn, Packet, IPV4_HEADER_LEN, NO_FLOW, PROTO_SCTP};

/// An [`SctpSocket`] index entry for an association it has no record of.
const NO_RECORD: usize = usize::MAX;

/// What an application does with an SCTP socket: open associations, send and read messages on
/// their streams, shut them down, and look at their state. Events come from the driver (for
/// the simulator: [`SctpSocket::flush`]), one `(association, event)` at a time.
pub trait SctpSocketApi {
    /// The engine the socket drives; the defaults below go straight to it.
    fn endpoint_mut(&mut self) -> &mut Endpoint;
    /// Opens an association to `peer` (the first address is the primary) on `peer_port`; its
    /// packets are accounted to `flow` ([`NO_FLOW`] for none).
    fn connect(&mut self, now: Instant, peer: &[IpAddr], peer_port: u16, flow: u32) -> AssocId;
    /// Queues one message on `stream` of `assoc` (RFC 9260 §6.1).
    fn send(&mut self, assoc: AssocId, stream: u16, ppid: u32, unordered: bool, data: &[u8]) -> Result<(), SendError> {
        self.endpoint_mut().send(assoc, stream, ppid, unordered, data)
    }
    /// The next message `assoc` delivers, if any (§6.6).
    fn read(&mut self, assoc: AssocId) -> Option<Message> {
        self.endpoint_mut().read(assoc)
    }
    /// The next message of any association, lowest association first.
    fn read_any(&mut self) -> Option<(AssocId, Message)> {
        self.endpoint_mut().read_any()
    }
    /// Gives a buffer back (a read message's data) for the engine to build in.
    fn recycle(&mut self, assoc: AssocId, buf: Vec<u8>) {
        self.endpoint_mut().recycle(assoc, buf);
    }
    /// Starts a graceful shutdown of `assoc` (§9.2).
    fn shutdown(&mut self, now: Instant, assoc: AssocId) {
        if let Some(a) = self.endpoint_mut().association_mut(assoc) {
            a.shutdown(now);
        }
    }
    /// The associations, in the order the socket met them.
    fn associations(&self) -> &[AssocId];
    /// One association's state and counters.
    fn association(&self, assoc: AssocId) -> Option<&Association>;
}

/// What the socket keeps about one association.
#[derive(Debug)]
struct AssocRecord {
    /// Name in results and events.
    entity: String,
    /// Names of its paths in results (`<entity>/path<i>`), kept as the paths come so that
    /// sampling formats none.
    paths: Vec<String>,
    /// Flow this side's packets are accounted to.
    flow: u32,
    /// Flow of the peer's packets (from their metadata).
    peer_flow: u32,
    /// User bytes sent (new and retransmitted) when the last packet was accounted.
    tx_bytes: u64,
    /// The primary address of an association this side opened.
    primary_addr: Option<Ipv4Addr>,
    /// Its state in the packet log (`record.packets`).
    log: AssocLog,
    // Failover bookkeeping (the side that opened the association).
    primary_break: Option<Instant>,
    primary_inactive_at: Option<Instant>,
    primary_pf_at: Option<Instant>,
    first_alt_rtx_at: Option<Instant>,
    data_moved_at: Option<Instant>,
    switched_back_at: Option<Instant>,
    path_changes: u64,
    /// Per path (by [`sctp::PathId`] index), when it stopped and resumed carrying new data;
    /// kept only when the primary's route is known to break.
    new_data: Vec<NewDataTimes>,
    closed: Option<String>,
    /// The association once it has finished and left the endpoint (its final counters and
    /// state, for results).
    finished: Option<Box<Association>>,
}

/// When one path stopped and resumed carrying new data after the primary's route broke (the
/// failover metrics' meaning under CMT, where every path carries new data at once).
#[derive(Debug, Default)]
struct NewDataTimes {
    /// The path's first-transmission bytes when the last packet was accounted.
    bytes_sent: u64,
    /// The path's T3-rtx expirations when the break came (None before it).
    t3_at_break: Option<u64>,
    /// The last time new data went to the path.
    last_new_at: Option<Instant>,
    /// The last new data before the path was found failing (its first T3-rtx expiry after
    /// the break, or it left the active state).
    stopped_at: Option<Instant>,
    /// The first new data to it after that, while it was active.
    resumed_at: Option<Instant>,
}

impl NewDataTimes {
    /// A packet left at `now` (`after_break`: at or after the break); the path has sent
    /// `bytes_sent` new bytes and had `t3` expirations in all, and is in `state`.
    fn note(&mut self, now: Instant, after_break: bool, bytes_sent: u64, t3: u64, state: PathState) {
        if after_break {
            let base = *self.t3_at_break.get_or_insert(t3);
            if self.stopped_at.is_none() && (t3 > base || state != PathState::Active) {
                self.stopped_at = Some(self.last_new_at.unwrap_or(now));
            }
        }
        if bytes_sent > self.bytes_sent {
            self.bytes_sent = bytes_sent;
            if self.stopped_at.is_some() && self.resumed_at.is_none() && state == PathState::Active {
                self.resumed_at = Some(now);
            }
            self.last_new_at = Some(now);
        }
    }
}

/// An SCTP endpoint driven by the simulator.
pub struct SctpSocket {
    ep: Endpoint,
    name: String,
    /// The first local address (the source assumed when no route is known).
    local: Option<Ipv4Addr>,
    /// The engine's timer (all its associations' deadlines, as the endpoint reports them).
    timer: EngineTimer,
    /// Associations in the order met, with their ids alongside for [`SctpSocketApi`].
    records: Vec<AssocRecord>,
    ids: Vec<AssocId>,
    /// Position of each association's record, by [`AssocId`] (ids are dense and never
    /// reused); [`NO_RECORD`] for an association not met.
    index: Vec<usize>,
    /// Handovers waiting for their first DATA from a new address: (association, address,
    /// when it was first seen leaving from it). Empty unless a handover policy runs.
    data_watch: Vec<(AssocId, Ipv4Addr, Option<Instant>)>,
}

impl SctpSocket {
    /// An endpoint on `addrs`:`port`, reported as `name`; its timer events carry `token`.
    /// `listening` accepts associations; `seed` feeds the endpoint's RNG.
    pub fn new(
        name: &str,
        config: sctp::Config,
        addrs: &[Ipv4Addr],
        port: u16,
        listening: bool,
        seed: u64,
        token: u64,
    ) -> Self {
        let local = addrs.first().copied();
        let addrs = addrs.iter().map(|a| IpAddr::V4(*a)).collect();
        let mut ep = Endpoint::new(config, addrs, port, listening, seed);
        // Packets are built after room for the IPv4 header, which goes there in place.
        ep.set_headroom(IPV4_HEADER_LEN);
        SctpSocket {
            ep,
            name: name.to_string(),
            local,
            timer: EngineTimer::new(token),
            records: Vec::new(),
            ids: Vec::new(),
            index: Vec::new(),
            data_watch: Vec::new(),
        }
    }

    /// Asks the peer of `assoc` for an address change (RFC 5061 ADD-IP, DELETE-IP,
    /// SET-PRIMARY); see [`sctp::Association::request_address_change`].
    pub fn request_address_change(
        &mut self,
        now: Instant,
        assoc: AssocId,
        req: sctp::AddressRequest,
    ) -> Result<(), sctp::AsconfError> {
        let a = self.ep.association_mut(assoc).ok_or(sctp::AsconfError::NotEnabled)?;
        a.request_address_change(now, req)
    }

    /// The local addresses new associations start with (the node's addresses now, on a
    /// host whose addresses come and go); existing associations change theirs by ASCONF.
    pub fn set_local_addrs(&mut self, addrs: &[Ipv4Addr]) {
        self.local = addrs.first().copied();
        self.ep.set_local_addrs(addrs.iter().map(|a| IpAddr::V4(*a)).collect());
    }

    /// Sends a HEARTBEAT from `assoc` to its destination `remote` now (RFC 9260 §10.1 O,
    /// REQUESTHEARTBEAT); false if it names no destination of an established `assoc`.
    pub fn request_heartbeat(&mut self, now: Instant, assoc: AssocId, remote: Ipv4Addr) -> bool {
        let Some(a) = self.ep.association_mut(assoc) else { return false };
        let Some(path) = a.paths().find(IpAddr::V4(remote)) else { return false };
        a.request_heartbeat(now, path)
    }

    /// Makes the destination `remote` the primary of `assoc` (RFC 9260 §6.4: the upper layer
    /// may change the primary at any time); false if it names no destination of `assoc`.
    pub fn set_primary_destination(&mut self, assoc: AssocId, remote: Ipv4Addr) -> bool {
        let Some(a) = self.ep.association_mut(assoc) else { return false };
        let Some(path) = a.paths().find(IpAddr::V4(remote)) else { return false };
        a.set_primary(path);
        true
    }

    /// Watches for the first packet of `assoc` carrying DATA that leaves from `addr` by the
    /// interface holding it (the handover delay's end, README.md's metric definitions: the first
    /// DATA on the new primary path); [`SctpSocket::first_data_from`] tells when.
    pub fn watch_first_data(&mut self, assoc: AssocId, addr: Ipv4Addr) {
        self.data_watch.retain(|w| (w.0, w.1) != (assoc, addr));
        self.data_watch.push((assoc, addr, None));
    }

    /// When the first packet of `assoc` carrying DATA left from `addr` since
    /// [`SctpSocket::watch_first_data`], if it has.
    pub fn first_data_from(&self, assoc: AssocId, addr: Ipv4Addr) -> Option<Instant> {
        self.data_watch.iter().find(|w| (w.0, w.1) == (assoc, addr)).and_then(|w| w.2)
    }

    /// A packet of `assoc` leaves from `src`: the first with DATA from a watched address.
    #[inline(never)]
    fn note_watched(&mut self, now: Instant, assoc: AssocId, src: Ipv4Addr, packet: &[u8]) {
        let Some(w) = self.data_watch.iter_mut().find(|w| w.0 == assoc && w.1 == src && w.2.is_none()) else {
            return;
        };
        let Ok(h) = sctp::wire::HeaderView::new_checked(packet) else { return };
        if h.chunks().flatten().any(|c| c.chunk_type == sctp::wire::ChunkType::DATA) {
            w.2 = Some(now);
        }
    }

    /// Sets the engine's checksum handling for this world, before any packet: the CRC32c is
    /// skipped when nothing can see or alter packets ([`Ctx::checksums_needed`]); results are
    /// the same either way. Called from the owning agent's `start`.
    pub fn start(&mut self, ctx: &Ctx<'_>) {
        let checksum = if ctx.checksums_needed() { Checksum::Compute } else { Checksum::Skip };
        self.ep.set_checksum(checksum);
    }

    /// Name in results.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name association `assoc` is reported under.
    pub fn entity(&self, assoc: AssocId) -> &str {
        self.record(assoc).map_or(&self.name, |r| &r.entity)
    }

    /// The endpoint, for the application commands the socket does not wrap
    /// (`Endpoint::send_generated`, `Endpoint::read_any_in_place`); [`SctpSocket::flush`] follows
    /// every input as usual.
    pub fn endpoint_mut(&mut self) -> &mut Endpoint {
        &mut self.ep
    }

    /// Where `assoc` is in [`SctpSocketApi::associations`], which it joins now if the socket
    /// had not met it.
    #[inline]
    pub fn position(&mut self, assoc: AssocId) -> usize {
        match self.index.get(assoc.get() as usize) {
            Some(&i) if i != NO_RECORD => i,
            _ => self.new_record(assoc),
        }
    }

    fn record(&self, assoc: AssocId) -> Option<&AssocRecord> {
        self.records.get(*self.index.get(assoc.get() as usize)?)
    }

    /// The record of `assoc`, created when the socket meets it. Inlined: every packet
    /// looks its association's record up.
    #[inline]
    fn record_mut(&mut self, assoc: AssocId) -> &mut AssocRecord {
        let i = self.position(assoc);
        &mut self.records[i]
    }

    /// Creates the record of an association met for the first time; returns its position.
    #[inline(never)]
    fn new_record(&mut self, assoc: AssocId) -> usize {
        let k = self.records.len();
        let entity = if k == 0 { self.name.clone() } else { format!("{}/assoc{k}", self.name) };
        self.records.push(AssocRecord {
            entity,
            paths: Vec::new(),
            flow: NO_FLOW,
            peer_flow: NO_FLOW,
            tx_bytes: 0,
            primary_addr: None,
            log: AssocLog::default(),
            primary_break: None,
            primary_inactive_at: None,
            primary_pf_at: None,
            first_alt_rtx_at: None,
            data_moved_at: None,
            switched_back_at: None,
            path_changes: 0,
            new_data: Vec::new(),
            closed: None,
            finished: None,
        });
        self.ids.push(assoc);
        let slot = assoc.get() as usize;
        if self.index.len() <= slot {
            self.index.resize(slot + 1, NO_RECORD);
        }
        self.index[slot] = k;
        k
    }

    /// A packet for this endpoint arrived: hand it to the engine. Returns the association it
    /// went to.
    pub fn on_packet(&mut self, ctx: &mut Ctx<'_>, mut pkt: Packet) -> Option<AssocId> {
        let ip = pkt.ip()?;
        let (src, dst, start) = (IpAddr::V4(ip.src()), IpAddr::V4(ip.dst()), ip.header_len());
        // The IP header's ECN field goes with it (a CE mark is echoed, RFC 9260 Appendix A).
        let ecn = ip.ecn() as u8;
        let flow = pkt.meta.flow;
        // The datagram is ours: the engine checks the CRC32c in place, and keeps the datagram
        // (a message stays in it, or the association builds later packets in it); the packet
        // log reads the packet after the engine, so the engine then only borrows it.
        let id = if ctx.packet_log().is_some() {
            let id = self.ep.handle_in_place_ecn(ctx.now(), src, dst, pkt.bytes.get_mut(start..)?, ecn)?;
            self.log_received(ctx, id, src, pkt.bytes.get(start..).unwrap_or_default());
            self.ep.recycle(id, pkt.bytes);
            id
        } else {
            self.ep.handle_datagram(ctx.now(), src, dst, pkt.bytes, start, ecn)?
        };
        let rec = self.record_mut(id);
        if rec.peer_flow == NO_FLOW && flow != NO_FLOW {
            rec.peer_flow = flow;
        }
        if flow != NO_FLOW {
            if let Some(f) = ctx.flow_mut(flow) {
                f.rx_packets += 1;
            }
        }
        Some(id)
    }

    /// Logs the SACK chunks of a packet `assoc` received from `src` (`record.packets`).
    fn log_received(&mut self, ctx: &mut Ctx<'_>, assoc: AssocId, src: IpAddr, packet: &[u8]) {
        let path = self.path_of(assoc, src);
        let now = ctx.now();
        let rec = self.record_mut(assoc);
        if let Some(log) = ctx.packet_log() {
            log.scan_received(now, &mut rec.log, &rec.entity, path, packet);
        }
    }

    /// Logs the DATA chunks of a packet `assoc` sends to `dst` (`record.packets`).
    fn log_sent(&mut self, ctx: &mut Ctx<'_>, assoc: AssocId, dst: IpAddr, packet: &[u8]) {
        let path = self.path_of(assoc, dst);
        let now = ctx.now();
        let rec = self.record_mut(assoc);
        if let Some(log) = ctx.packet_log() {
            log.scan_sent(now, &mut rec.log, &rec.entity, path, packet);
        }
    }

    /// The number of the path to or from the peer's address `remote`, [`NO_PATH`] if none.
    fn path_of(&self, assoc: AssocId, remote: IpAddr) -> u32 {
        self.association(assoc).and_then(|a| a.path_of(remote)).map_or(NO_PATH, |p| p.get())
    }

    /// Names the paths of `assoc` (the peer's addresses are learnt from its INIT or INIT ACK),
    /// by [`sctp::PathId`], which is never reused.
    fn name_paths(&mut self, assoc: AssocId) {
        let n = self.ep.association(assoc).map_or(0, |a| a.paths().id_bound());
        let rec = self.record_mut(assoc);
        for i in rec.paths.len()..n {
            let name = path_entity(&rec.entity, sctp::PathId::new(i as u32));
            rec.paths.push(name);
        }
    }

    /// A timer with this socket's token fired.
    pub fn on_timer(&mut self, ctx: &mut Ctx<'_>) {
        if self.timer.fired(ctx) {
            self.ep.handle_timeout(ctx.now());
        }
        // else: woken for a deadline since postponed or dropped
    }

    /// The application read `len` bytes of `assoc`, handed over `delay` before: the peer's
    /// flow received them.
    pub fn delivered(&self, ctx: &mut Ctx<'_>, assoc: AssocId, len: usize, delay: Option<Duration>) {
        let Some(flow) = self.record(assoc).map(|r| r.peer_flow).filter(|&f| f != NO_FLOW) else { return };
        let now = ctx.now();
        if let Some(f) = ctx.flow_mut(flow) {
            f.rx_bytes += len as u64;
            f.last_rx = Some(now);
            if let Some(d) = delay {
                f.delay.record(d);
            }
        }
    }

    /// Sends everything the engine produced, collects each association's events into
    /// `events` (tracing them and keeping the failover bookkeeping), and re-arms the timer.
    /// Call after every input and application command.
    pub fn flush(&mut self, ctx: &mut Ctx<'_>, events: &mut Vec<(AssocId, Event)>) {
        let now = ctx.now();
        while let Some(d) = self.ep.poll_transmit(now) {
            let IpAddr::V4(dst) = d.remote else { continue };
            let src = match d.local {
                Some(IpAddr::V4(a)) => Some(a),
                _ => None,
            };
            let flow = d.assoc.and_then(|id| self.record(id)).map_or(NO_FLOW, |r| r.flow);
            if let Some(id) = d.assoc {
                self.account_tx(ctx, id, flow);
            }
            if let (Some(id), true) = (d.assoc, ctx.packet_log().is_some()) {
                self.log_sent(ctx, id, d.remote, d.packet());
            }
            let Some(mut route) = ctx.route(src, dst) else {
                self.unreachable(now, d.assoc, dst);
                continue;
            };
            if let (None, Some(id)) = (src, d.assoc) {
                // The outgoing interface's address must be one of the association's (RFC 5061
                // §4.1: a new address is used only once the peer acknowledged its ADD-IP; the
                // peer would treat a packet from an unknown address as out of the blue), but
                // for an ASCONF, which the peer finds by its Address Parameter (§5.2): it may
                // leave from the address it adds.
                match self.ep.association(id).map(|a| a.local_addrs()) {
                    Some(addrs) if !addrs.contains(&IpAddr::V4(route.src)) && !carries_asconf(d.packet()) => {
                        match source_route(ctx, addrs, dst) {
                            Some(r) => route = r,
                            None => {
                                self.unreachable(now, d.assoc, dst);
                                continue;
                            }
                        }
                    }
                    _ => {}
                }
            }
            if let (Some(id), false) = (d.assoc, self.data_watch.is_empty()) {
                // The new primary path: the packet leaves from the watched address by its own
                // interface.
                if ctx.iface_addrs(route.iface).iter().any(|a| a.addr == route.src) {
                    self.note_watched(now, id, route.src, d.packet());
                }
            }
            let mut pkt = ctx.packet_in_headroom(route.src, dst, PROTO_SCTP, d.payload, d.headroom, flow);
            if d.ecn != 0 {
                // ECT(0) on DATA when ECN was agreed; written only then, so runs without ECN
                // build the same bytes.
                pkt.set_ecn(Ecn::from_tos(d.ecn));
            }
            ctx.send_on(route, pkt);
        }
        // In id order, each association's events in turn (handling one creates none).
        while let Some((id, e)) = self.ep.poll_any_event() {
            self.on_event(ctx, id, &e);
            events.push((id, e));
        }
        // A finished association leaves the endpoint; its final state stays for results.
        while let Some((id, a)) = self.ep.poll_closed() {
            if let Some(rec) = self.index.get(id.get() as usize).and_then(|&i| self.records.get_mut(i)) {
                rec.finished = Some(Box::new(a));
            }
        }
        self.timer.update(ctx, self.ep.poll_timeout());
    }

    /// No route from the association's addresses reaches `dst`: its destination is
    /// unreachable ([`sctp::Association::report_unreachable`]); what the engine does about it
    /// goes out with the rest of this flush.
    #[inline(never)]
    fn unreachable(&mut self, now: Instant, assoc: Option<AssocId>, dst: Ipv4Addr) {
        let Some(a) = assoc.and_then(|id| self.ep.association_mut(id)) else { return };
        if let Some(p) = a.paths().find(IpAddr::V4(dst)) {
            a.report_unreachable(now, p);
        }
    }

    /// A packet of `id` accounted to `flow` leaves: one packet, and the user bytes it
    /// carries (what the association's bytes sent grew by since the last one), for the flow
    /// (if any) and, when the primary's route breaks, each path's new-data times.
    fn account_tx(&mut self, ctx: &mut Ctx<'_>, id: AssocId, flow: u32) {
        let now = ctx.now();
        if flow == NO_FLOW && self.record(id).is_none_or(|r| r.primary_break.is_none()) {
            return;
        }
        let i = self.position(id);
        let rec = &mut self.records[i];
        let mut sent = rec.tx_bytes;
        if let Some(a) = self.ep.association(id) {
            sent = a.stats().data_bytes_sent;
            // When the primary's route breaks, each path's new data is followed too.
            if let Some(b) = rec.primary_break {
                let after_break = now >= b;
                for (p, path) in a.paths() {
                    if rec.new_data.len() <= p.index() {
                        rec.new_data.resize_with(p.index() + 1, NewDataTimes::default);
                    }
                    rec.new_data[p.index()].note(
                        now,
                        after_break,
                        path.stats.bytes_sent,
                        path.stats.t3_timeouts,
                        path.state,
                    );
                }
            }
        }
        let bytes = sent.saturating_sub(rec.tx_bytes);
        rec.tx_bytes = sent;
        if flow == NO_FLOW {
            return;
        }
        if let Some(f) = ctx.flow_mut(flow) {
            f.tx_packets += 1;
            f.tx_bytes += bytes;
            f.first_tx.get_or_insert(now);
        }
    }

    /// Failover bookkeeping and tracing of one event.
    fn on_event(&mut self, ctx: &mut Ctx<'_>, id: AssocId, e: &Event) {
        // Paths are learnt in the handshake and a restart, which end in events; naming them
        // here, not per packet, keeps the names current at no cost per packet.
        self.name_paths(id);
        let now = ctx.now();
        let primary = self.ep.association(id).map(|a| a.primary());
        let local = self.local;
        let rec = self.record_mut(id);
        let after_break = rec.primary_break.is_some_and(|b| now >= b);
        match e {
            Event::Connected => {
                if let (Some(dst), Some(p0)) = (rec.primary_addr, local) {
                    let src = ctx.route(None, dst).map_or(p0, |r| r.src);
                    rec.primary_break = ctx.first_break_on_route(src, dst);
                }
                self.declare_loss_rates(ctx, id);
            }
            Event::PathStateChanged { path, to, .. } => {
                rec.path_changes += 1;
                if Some(*path) == primary {
                    if *to == PathState::Inactive && after_break {
                        rec.primary_inactive_at.get_or_insert(now);
                    }
                    if *to == PathState::PotentiallyFailed && after_break {
                        rec.primary_pf_at.get_or_insert(now);
                    }
                }
            }
            Event::RetransmitOnAlternate { .. } if after_break => {
                rec.first_alt_rtx_at.get_or_insert(now);
            }
            Event::DataPathChanged { to, .. } if after_break => {
                if Some(*to) == primary && rec.data_moved_at.is_some() {
                    rec.switched_back_at.get_or_insert(now);
                } else {
                    rec.data_moved_at.get_or_insert(now);
                }
            }
            Event::Closed { reason } => rec.closed = Some(format!("{reason:?}")),
            _ => {}
        }
        if ctx.tracing() {
            let entity = &self.record_mut(id).entity;
            ctx.trace("sctp", entity, &format!("{e:?}"));
        }
    }

    /// For the ideal RTX-LOSSRATE policy (and only for it), tells the association the
    /// configured loss rate of the route to each destination it has when it is established
    /// (destinations added later get none). The rates are not updated afterwards: a link's
    /// configured loss never changes during a run (faults only take links and interfaces
    /// down and up, which the policy sees through the destinations' states), but a route
    /// that moves to other links after a fault keeps the rate of the route it had. ns-2
    /// likewise holds whatever rate its script set (`set-destination-lossrate`, sctp.cc),
    /// normally once at the start.
    fn declare_loss_rates(&mut self, ctx: &Ctx<'_>, id: AssocId) {
        let Some(a) = self.ep.association_mut(id) else { return };
        if a.config().retransmit != RetransmitConfig::LossRate {
            return;
        }
        let remotes: Vec<IpAddr> = a.paths().values().map(|p| p.remote).collect();
        for remote in remotes {
            let IpAddr::V4(dst) = remote else { continue };
            let Some(route) = ctx.route(None, dst) else { continue };
            if let Some(rate) = ctx.configured_loss_on_route(route.src, dst) {
                a.set_loss_rate_hint(remote, rate);
            }
        }
    }

    /// An application event about `assoc` (kind `sctp`, under the association's name).
    pub fn trace(&self, ctx: &mut Ctx<'_>, assoc: AssocId, detail: &str) {
        if ctx.tracing() {
            ctx.trace("sctp", self.entity(assoc), detail);
        }
    }

    /// The failover scalars of `assoc` (under its name) at the end of the run, `now`
    /// ([`failover_scalars`]).
    pub fn report_failover(&self, now: Instant, assoc: AssocId, out: &mut Scalars) {
        let Some(rec) = self.record(assoc) else { return };
        let times = FailoverTimes {
            break_at: rec.primary_break,
            pf_at: rec.primary_pf_at,
            inactive_at: rec.primary_inactive_at,
            alt_rtx_at: rec.first_alt_rtx_at,
            moved_at: rec.data_moved_at,
            back_at: rec.switched_back_at,
        };
        failover_scalars(now, &rec.entity, &times, out);
    }

    /// The transport scalars of `assoc` at `now`: retransmission counters and time blocked by
    /// the peer's window (a `sender`'s), TSNs received out of order, heartbeats, path state
    /// changes, whether it closed, and one row set per path (`<name>/path<i>`): new data and
    /// its share, retransmissions, timeouts, PF episodes and, after a break of the primary's
    /// route, when the path stopped and resumed carrying new data.
    pub fn report_transport(&self, now: Instant, assoc: AssocId, sender: bool, out: &mut Scalars) {
        let (Some(rec), Some(a)) = (self.record(assoc), self.association(assoc)) else { return };
        let facts =
            AssocFacts { name: &rec.entity, sender, path_changes: rec.path_changes, closed: rec.closed.is_some() };
        let since_break =
            |t: Option<Instant>| t.zip(rec.primary_break).map(|(t, b)| t.saturating_since(b).as_secs_f64());
        association_scalars(now, a, &facts, out, |i, entity, out| {
            if let Some(t) = rec.new_data.get(i.index()) {
                if let Some(v) = since_break(t.stopped_at) {
                    out.push("sctp_path", entity, "new_data_stopped_time", v, "s");
                }
                if let Some(v) = since_break(t.resumed_at) {
                    out.push("sctp_path", entity, "new_data_resumed_time", v, "s");
                }
            }
        });
    }

    /// Samples of `assoc`: per path window, flight size, RTO, SRTT and state, then the
    /// association's advertised and peer windows.
    pub fn sample(&self, now: Instant, assoc: AssocId, out: &mut TimeSeries) {
        let (Some(rec), Some(a)) = (self.record(assoc), self.association(assoc)) else { return };
        let name = &rec.entity;
        let entity_of = |i: sctp::PathId| match rec.paths.get(i.index()) {
            Some(e) => Cow::Borrowed(e.as_str()),
            None => Cow::Owned(path_entity(name, i)),
        };
        association_sample(now, a, name, entity_of, out);
    }
}

/// Whether an SCTP packet carries an ASCONF chunk.
#[inline(never)]
fn carries_asconf(packet: &[u8]) -> bool {
    sctp::wire::HeaderView::new_checked(packet)
        .is_ok_and(|h| h.chunks().flatten().any(|c| c.chunk_type == sctp::wire::ChunkType::ASCONF))
}

/// A route to `dst` from one of `addrs` that leaves by the interface holding that address
/// (the first such, in the association's order); `None` if no address of the association
/// reaches `dst` from its own interface.
fn source_route(ctx: &Ctx<'_>, addrs: &[IpAddr], dst: Ipv4Addr) -> Option<Route> {
    addrs.iter().find_map(|a| {
        let IpAddr::V4(a) = *a else { return None };
        let r = ctx.route(Some(a), dst)?;
        ctx.iface_addrs(r.iface).iter().any(|x| x.addr == a).then_some(r)
    })
}

impl SctpSocketApi for SctpSocket {
    fn endpoint_mut(&mut self) -> &mut Endpoint {
        &mut self.ep
    }

    fn connect(&mut self, now: Instant, peer: &[IpAddr], peer_port: u16, flow: u32) -> AssocId {
        let id = self.ep.connect(now, peer, peer_port);
        let rec = self.record_mut(id);
        rec.flow = flow;
        rec.primary_addr = match peer.first() {
            Some(IpAddr::V4(a)) => Some(*a),
            _ => None,
        };
        self.name_paths(id);
        id
    }

    fn associations(&self) -> &[AssocId] {
        &self.ids
    }

    /// In the endpoint, or finished (its final state).
    fn association(&self, assoc: AssocId) -> Option<&Association> {
        self.ep.association(assoc).or_else(|| self.record(assoc)?.finished.as_deref())
    }
}
