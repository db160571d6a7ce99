//! SCTP applications on an [`SctpSocket`]: a bulk sender (one association to its peer and one
//! to each further peer), a sink that reads at a configured rate (answering requests), and a
//! request/response client.
//!
//! The applications use the socket only through its surface ([`SctpSocketApi`]: connect,
//! send, read, associations) plus the driver's inputs (`on_packet`, `on_timer`, `flush`); the
//! socket owns the endpoint, its timer, routing, flow accounting and the association's
//! transport results, the application what it sent and read.
//!
//! Every message starts with its sequence number and the instant the application handed
//! it over (big-endian u64 each), so the receiving side measures end-to-end delay per
//! message and the first send time for goodput (README.md's metric definitions).
//!
//! Results: the application's totals under its name (`delivered_bytes`, `goodput`, delays,
//! `completion_time`, ...) with the first association's transport scalars, as always. With
//! more than one association, each association `k` also reports what was read from it under
//! `<name>/assoc<k>` (k = 0, 1, ...; the transport scalars of associations after the first are
//! there too), and an association that delivered on more than one stream reports messages and
//! bytes per stream under `<association>/stream<s>`.

use std::net::{IpAddr, Ipv4Addr};

use sctp::{AssocId, Event, Message, SendError};

use crate::agent::{Agent, Ctx};
use crate::apps::handover::{Handover, HandoverPolicy, HandoverTrigger};
use crate::event::IfaceEvent;
use crate::ids::IfaceId;
use crate::ids::{AgentId, NodeId};
use crate::recorder::{Scalars, TimeSeries};
use crate::stats::DelayStats;
use crate::time::{Duration, Instant};
use crate::transport::sctp::{SctpSocket, SctpSocketApi};
use crate::wire::{Packet, NO_FLOW, PROTO_SCTP};
use crate::world::WorldBuilder;

/// Bytes at the start of every message: sequence number and hand-over time.
pub const MESSAGE_HEADER_LEN: usize = 16;

/// The bytes from offset `at` on of the message with `tag` = [sequence number, hand-over
/// time in nanoseconds]: those two, big-endian, in its first [`MESSAGE_HEADER_LEN`] bytes,
/// then zeros (`out` comes zeroed). The engine makes a message's bytes with it as it sends
/// them (`sctp::Association::send_generated`).
fn message_bytes(tag: [u64; 2], at: usize, out: &mut [u8]) {
    if at >= MESSAGE_HEADER_LEN {
        return;
    }
    if let (0, Some(header)) = (at, out.get_mut(..MESSAGE_HEADER_LEN)) {
        // The whole header (every message's first part): the two words stored straight into
        // the packet. Copied from an array on the stack, it would be a 16-byte load of two
        // 8-byte stores, which waits for every store before it (the packet's fresh zeros) to
        // reach the cache.
        header[..8].copy_from_slice(&tag[0].to_be_bytes());
        header[8..].copy_from_slice(&tag[1].to_be_bytes());
        return;
    }
    let mut header = [0u8; MESSAGE_HEADER_LEN];
    header[..8].copy_from_slice(&tag[0].to_be_bytes());
    header[8..].copy_from_slice(&tag[1].to_be_bytes());
    let n = (MESSAGE_HEADER_LEN - at).min(out.len());
    out[..n].copy_from_slice(&header[at..at + n]);
}

/// What the application does.
#[derive(Clone, Debug, PartialEq)]
pub enum SctpRole {
    /// Opens an association and sends `bytes` (or without end) in messages; and one more,
    /// carrying as much, to each of `more_peers`.
    Bulk {
        /// The peer's addresses; the first is the primary.
        peer: Vec<Ipv4Addr>,
        /// Further peers (their addresses, the primary first), on the same port: one more
        /// association to each.
        more_peers: Vec<Vec<Ipv4Addr>>,
        /// The peer's port.
        peer_port: u16,
        /// When to connect.
        start: Instant,
        /// Bytes to send; `None` sends until the end of the run.
        bytes: Option<u64>,
        /// User message size, bytes.
        message_size: usize,
        /// Messages go round-robin over this many streams (at most as many as the association
        /// negotiated: fewer are used, with an event, if it negotiated fewer).
        streams: u16,
        /// Unordered delivery.
        unordered: bool,
    },
    /// Opens an association and sends one `message_size` request every 1/`rate` seconds;
    /// the sink answers each with a message of the same size.
    Requests {
        /// The peer's addresses; the first is the primary.
        peer: Vec<Ipv4Addr>,
        /// The peer's port.
        peer_port: u16,
        /// When to connect.
        start: Instant,
        /// Request size, bytes.
        message_size: usize,
        /// Requests per second.
        rate: f64,
    },
    /// Accepts associations and reads; `drain_rate` in bytes per second (`None`: at once),
    /// shared by all its associations. Requests (ppid 1) are answered.
    Sink {
        /// Application read rate, bytes per second.
        drain_rate: Option<u64>,
    },
}

/// Parameters of one SCTP application.
#[derive(Clone, Debug, PartialEq)]
pub struct SctpAppConfig {
    /// Name in results.
    pub name: String,
    /// Local addresses (all the host's interfaces).
    pub addrs: Vec<Ipv4Addr>,
    /// Local port.
    pub port: u16,
    /// Association parameters.
    pub config: sctp::Config,
    /// The application.
    pub role: SctpRole,
    /// Seed of the endpoint's RNG.
    pub seed: u64,
    /// Flows the packets of the associations it opens are accounted to, in the order it opens
    /// them (`NO_FLOW`, or none given: not accounted).
    pub flows: Vec<u32>,
    /// What it does when its node's addresses change ([`HandoverPolicy::None`]: nothing).
    pub handover: HandoverPolicy,
    /// When a make-before-break handover moves the primary.
    pub handover_trigger: HandoverTrigger,
}

impl SctpRole {
    /// A bulk sender that connects to `peer` (the first address is the primary) on
    /// `peer_port` at `start` and sends `message_size`-byte messages on one ordered stream
    /// until the end of the run.
    pub fn bulk(peer: Vec<Ipv4Addr>, peer_port: u16, start: Instant, message_size: usize) -> Self {
        SctpRole::Bulk {
            peer,
            more_peers: Vec::new(),
            peer_port,
            start,
            bytes: None,
            message_size,
            streams: 1,
            unordered: false,
        }
    }
}

impl SctpAppConfig {
    /// Application `name` on `addrs` and `port`, its endpoint seeded with `seed`; the
    /// packets of its associations are accounted to no flow.
    pub fn new(name: &str, addrs: Vec<Ipv4Addr>, port: u16, config: sctp::Config, role: SctpRole, seed: u64) -> Self {
        SctpAppConfig {
            name: name.into(),
            addrs,
            port,
            config,
            role,
            seed,
            flows: Vec::new(),
            handover: HandoverPolicy::None,
            handover_trigger: HandoverTrigger::NewAddress,
        }
    }

    /// Adds the application to `node` of the world `b` builds, bound to its SCTP port;
    /// `None` if the port is taken on that node.
    pub fn install(self, b: &mut WorldBuilder, node: NodeId) -> Option<AgentId> {
        let port = self.port;
        let agent = b.agent(node, Box::new(SctpApp::new(self)));
        b.bind_port(agent, PROTO_SCTP, port).then_some(agent)
    }
}

const TOKEN_START: u64 = 0;
const TOKEN_READ: u64 = 1;
const TOKEN_SEND: u64 = 2;
const TOKEN_SOCKET: u64 = 3;

const PPID_DATA: u32 = 0;
const PPID_REQUEST: u32 = 1;
const PPID_RESPONSE: u32 = 2;

/// What the application read (in total, or from one association).
#[derive(Clone, Debug, Default)]
struct Received {
    /// Name in results of one association's (`<app>/assoc<k>`), made when it first delivers.
    name: String,
    messages: u64,
    bytes: u64,
    first_sent_seen: Option<Instant>,
    first_delivery: Option<Instant>,
    last_delivery: Option<Instant>,
    delay: DelayStats,
    /// Messages and bytes per stream, by stream id (a stream nothing came on has zeros).
    streams: Vec<(u64, u64)>,
    /// A message being delivered in parts (RFC 9260 §6.9): the send instant stamped in its
    /// first part and, for a request, the bytes so far (it is answered whole).
    partial: Option<(Option<Instant>, Vec<u8>)>,
}

impl Received {
    /// `len` bytes read at `now`: a whole message, or a part of one delivered in parts
    /// (RFC 9260 §6.9 partial delivery). A message counts, with its delay, at its last part;
    /// `sent_at` is always the instant stamped in its first part.
    fn record(&mut self, now: Instant, stream: u16, len: usize, sent_at: Option<Instant>, end: bool) {
        self.count(now, len, sent_at, end);
        let i = usize::from(stream);
        if self.streams.len() <= i {
            self.streams.resize(i + 1, (0, 0));
        }
        let s = &mut self.streams[i];
        s.1 += len as u64;
        if end {
            s.0 += 1;
            if let Some(t) = sent_at {
                self.delay.record(now - t);
            }
        }
    }

    /// As [`Received::record`] without the per-stream counts and the delay: the
    /// application's totals, whose delays are its associations' merged at report time (one
    /// histogram update per message, not two).
    fn count(&mut self, now: Instant, len: usize, sent_at: Option<Instant>, end: bool) {
        self.bytes += len as u64;
        self.first_delivery.get_or_insert(now);
        self.last_delivery = Some(now);
        if let Some(t) = sent_at {
            self.first_sent_seen.get_or_insert(t);
        }
        if end {
            self.messages += 1;
        }
    }

    /// Delivered bytes and messages, goodput, delivery instants and delays (README.md's metric definitions).
    fn report(&self, name: &str, out: &mut Scalars) {
        out.push("sctp", name, "delivered_bytes", self.bytes as f64, "bytes");
        out.push("sctp", name, "delivered_messages", self.messages as f64, "messages");
        if let (Some(first), Some(last)) = (self.first_sent_seen, self.last_delivery) {
            let span = last.saturating_since(first).as_secs_f64();
            if span > 0.0 {
                out.push("sctp", name, "goodput", self.bytes as f64 * 8.0 / span, "bit/s");
            }
        }
        if let (Some(first), Some(last)) = (self.first_delivery, self.last_delivery) {
            out.push("sctp", name, "first_delivery_at", first.as_secs_f64(), "s");
            out.push("sctp", name, "last_delivery_at", last.as_secs_f64(), "s");
        }
        if self.delay.count() > 0 {
            for (metric, value) in self.delay.summary() {
                out.push("sctp", name, metric, value, "s");
            }
        }
    }

    /// Messages and bytes per stream, if more than one stream delivered.
    fn report_streams(&self, name: &str, out: &mut Scalars) {
        let used = || self.streams.iter().enumerate().filter(|(_, &(m, b))| m > 0 || b > 0);
        if used().count() < 2 {
            return;
        }
        for (s, (messages, bytes)) in used() {
            let entity = format!("{name}/stream{s}");
            out.push("sctp", &entity, "delivered_messages", *messages as f64, "messages");
            out.push("sctp", &entity, "delivered_bytes", *bytes as f64, "bytes");
        }
    }
}

/// An association the application opened (bulk, requests), and what it queued on it.
#[derive(Debug)]
struct Opened {
    id: AssocId,
    /// User bytes queued.
    queued: u64,
    /// Streams the bulk sender uses: as configured, or what the association negotiated if
    /// that is fewer.
    streams: u16,
    /// The negotiated stream count, when it was lower than the configured one.
    clamped: Option<u16>,
    /// The association reached ESTABLISHED (its stream count is negotiated).
    established: bool,
}

/// An SCTP application and its socket on one host.
pub struct SctpApp {
    cfg: SctpAppConfig,
    socket: SctpSocket,
    /// The associations this application opened, in order (the first to `peer`).
    opened: Vec<Opened>,
    read_pending: bool,
    /// Under a read rate, the association (by position) the next read starts with.
    next_read: usize,
    // Sending side.
    next_seq: u64,
    // Receiving side.
    received: Received,
    /// What each association delivered, by its position in the socket's list; `None` for
    /// one that has delivered nothing.
    per_assoc: Vec<Option<Received>>,
    response_delay: DelayStats,
    /// When every byte of a finite bulk transfer was acknowledged.
    completed_at: Option<Instant>,
    events: Vec<(AssocId, Event)>,
    /// The handover policy's state.
    handover: Handover,
}

impl SctpApp {
    /// An application; its packets are bound by the caller to protocol 132 on the host.
    pub fn new(cfg: SctpAppConfig) -> Self {
        let listening = matches!(cfg.role, SctpRole::Sink { .. });
        let socket =
            SctpSocket::new(&cfg.name, cfg.config.clone(), &cfg.addrs, cfg.port, listening, cfg.seed, TOKEN_SOCKET);
        SctpApp {
            socket,
            opened: Vec::new(),
            read_pending: false,
            next_read: 0,
            next_seq: 0,
            received: Received::default(),
            per_assoc: Vec::new(),
            response_delay: DelayStats::default(),
            completed_at: None,
            events: Vec::new(),
            handover: Handover::with_trigger(cfg.handover, cfg.handover_trigger),
            cfg,
        }
    }

    /// Hands the association one message of `size` bytes (at least the header): sequence
    /// number and hand-over time, then zeros, made as it is sent ([`message_bytes`]).
    fn send_message(
        &mut self,
        now: Instant,
        assoc: Option<AssocId>,
        stream: u16,
        ppid: u32,
        unordered: bool,
        size: usize,
    ) -> Result<(), SendError> {
        let seq = self.next_seq;
        self.next_seq += 1;
        let Some(id) = assoc else { return Err(SendError::NotOpen(sctp::State::Closed)) };
        let (len, tag) = (size.max(MESSAGE_HEADER_LEN), [seq, now.as_nanos()]);
        self.socket.endpoint_mut().send_generated(id, stream, ppid, unordered, len, tag, message_bytes)
    }

    /// Keeps the bulk sender's send buffers full, one association after the other.
    fn refill(&mut self, now: Instant) {
        let SctpRole::Bulk { bytes, message_size, unordered, .. } = self.cfg.role else { return };
        for i in 0..self.opened.len() {
            loop {
                let o = &self.opened[i];
                let remaining = bytes.map_or(u64::MAX, |b| b.saturating_sub(o.queued));
                if remaining == 0 {
                    break;
                }
                let size = (message_size as u64).min(remaining) as usize;
                let Some(a) = self.socket.association(o.id) else { break };
                if a.send_buffer_space() < size.max(MESSAGE_HEADER_LEN) {
                    break;
                }
                // Until the peer's INIT ACK is processed the number of streams is unknown, and
                // a DATA chunk on a stream the peer does not have is discarded (RFC 9260
                // §5.1.1, §6.5): messages handed over before the association is up go on
                // stream 0.
                let streams = if o.established { o.streams } else { 1 };
                let stream = (self.next_seq % u64::from(streams)) as u16;
                let id = o.id;
                if self.send_message(now, Some(id), stream, PPID_DATA, unordered, size).is_err() {
                    break;
                }
                self.opened[i].queued += size.max(MESSAGE_HEADER_LEN) as u64;
            }
        }
    }

    /// Reads what the application may read now: everything, or under a read rate one
    /// message, after which the next read waits for that message's share of the rate. The
    /// rate is the application's, whatever the number of associations: reads under it go
    /// round the associations, one message at a time.
    fn read(&mut self, ctx: &mut Ctx<'_>) {
        let rate = match self.cfg.role {
            SctpRole::Sink { drain_rate } => drain_rate,
            _ => None,
        };
        let mut replies = Vec::new();
        match rate {
            // Everything, lowest association first (only those with something are visited).
            None => {
                while let Some((id, m, start)) = self.socket.endpoint_mut().read_any_in_place() {
                    let k = self.socket.position(id);
                    self.deliver(ctx, k, id, m, start, &mut replies);
                }
            }
            Some(_) if self.read_pending => return,
            Some(r) => {
                let n = self.socket.associations().len();
                let start = if n > 0 { self.next_read % n } else { 0 };
                for j in 0..n {
                    let k = if start + j < n { start + j } else { start + j - n };
                    let id = self.socket.associations()[k];
                    let Some(m) = self.socket.read(id) else { continue };
                    let len = self.deliver(ctx, k, id, m, 0, &mut replies);
                    let wait = Duration::from_nanos((len as u128 * 1_000_000_000 / u128::from(r.max(1))) as u64);
                    self.read_pending = true;
                    ctx.timer_in(wait, TOKEN_READ);
                    self.next_read = k + 1;
                    break;
                }
            }
        }
        for (id, data) in replies {
            let _ = self.socket.send(id, 0, PPID_RESPONSE, false, &data);
        }
    }

    /// Takes in message `m` (its data `m.data[start..]`) of association `id`, the `k`th of the
    /// socket: counted for the
    /// application and the association, a whole request queued in `replies` for its answer, a
    /// response's delay recorded. Returns its length.
    fn deliver(
        &mut self,
        ctx: &mut Ctx<'_>,
        k: usize,
        id: AssocId,
        m: Message,
        start: usize,
        replies: &mut Vec<(AssocId, Vec<u8>)>,
    ) -> usize {
        let data = m.data.get(start..).unwrap_or_default();
        let now = ctx.now();
        if self.per_assoc.len() <= k {
            self.per_assoc.resize_with(k + 1, || None);
        }
        let app = &self.cfg.name;
        let rx = self.per_assoc[k]
            .get_or_insert_with(|| Received { name: format!("{app}/assoc{k}"), ..Received::default() });
        // The send instant is stamped in a message's first bytes: for a part after the first,
        // it was taken from the first part.
        let stamped = || data.get(8..16).and_then(|b| b.try_into().ok()).map(|b| Instant(u64::from_be_bytes(b)));
        let (sent_at, mut request) = match rx.partial.take() {
            Some((sent_at, request)) => (sent_at, request),
            None => (stamped().filter(|&t| t <= now), Vec::new()),
        };
        let end = m.end_of_message;
        match m.ppid {
            PPID_REQUEST => {
                request.extend_from_slice(data);
                if end {
                    replies.push((id, std::mem::take(&mut request)));
                }
            }
            PPID_RESPONSE if end => {
                if let Some(t) = sent_at {
                    self.response_delay.record(now - t);
                }
            }
            _ => {}
        }
        if !end {
            rx.partial = Some((sent_at, request));
        }
        let (len, stream) = (data.len(), m.stream);
        // The association builds later chunks in the buffer (a datagram's, if the message
        // stayed in it).
        self.socket.recycle(id, m.data);
        self.received.count(now, len, sent_at, end);
        rx.record(now, stream, len, sent_at, end);
        self.socket.delivered(ctx, id, len, sent_at.filter(|_| end).map(|t| now - t));
        len
    }

    /// Runs the application, then the socket (sends, events, timer). After every input.
    fn flush(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        self.refill(now);
        self.read(ctx);
        if let SctpRole::Bulk { bytes: Some(total), .. } = self.cfg.role {
            if self.completed_at.is_none()
                && !self.opened.is_empty()
                && self
                    .opened
                    .iter()
                    .all(|o| o.queued >= total && self.socket.association(o.id).is_some_and(|a| a.all_acked()))
            {
                self.completed_at = Some(now);
            }
        }
        self.socket.flush(ctx, &mut self.events);
        loop {
            if self.handover.active() {
                self.handover.update(&self.socket);
            }
            if self.events.is_empty() {
                return;
            }
            // The handover policy may change an association (its primary destination) on an
            // event: what that changes goes out now, and its events are handled in turn.
            let mut changed = false;
            for (id, e) in std::mem::take(&mut self.events) {
                if self.handover.active() {
                    changed |= self.handover.on_event(ctx, &mut self.socket, id, &e);
                }
                if e == Event::Connected {
                    if let Some(i) = self.opened.iter().position(|o| o.id == id) {
                        self.opened[i].established = true;
                        self.clamp_streams(ctx, i);
                    }
                }
            }
            if !changed {
                return;
            }
            self.socket.flush(ctx, &mut self.events);
        }
    }

    /// A bulk sender uses no more streams than its association negotiated (RFC 9260 §5.1.1:
    /// the outbound streams are at most the peer's MIS); fewer than configured is reported
    /// (a `StreamsClamped` event and the `streams_negotiated` scalar).
    fn clamp_streams(&mut self, ctx: &mut Ctx<'_>, i: usize) {
        let SctpRole::Bulk { streams, .. } = self.cfg.role else { return };
        let o = &mut self.opened[i];
        let id = o.id;
        let Some(negotiated) = self.socket.association(id).map(|a| a.outbound_streams()) else { return };
        if negotiated >= o.streams || negotiated == 0 {
            return;
        }
        o.streams = negotiated;
        o.clamped = Some(negotiated);
        self.socket.trace(ctx, id, &format!("StreamsClamped {{ requested: {streams}, negotiated: {negotiated} }}"));
    }

    fn schedule_request(&mut self, ctx: &mut Ctx<'_>) {
        if let SctpRole::Requests { rate, .. } = self.cfg.role {
            ctx.timer_in(Duration::from_secs_f64(1.0 / rate.max(1e-9)), TOKEN_SEND);
        }
    }
}

impl Agent for SctpApp {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        self.socket.start(ctx);
        self.handover.start(ctx, &mut self.socket);
        let start = match &self.cfg.role {
            SctpRole::Bulk { start, .. } | SctpRole::Requests { start, .. } => *start,
            SctpRole::Sink { .. } => return,
        };
        let _ = ctx.timer_at(start.max(ctx.now()), TOKEN_START);
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        let now = ctx.now();
        match token {
            TOKEN_START => {
                let (peers, port, streams) = match &self.cfg.role {
                    SctpRole::Bulk { peer, more_peers, peer_port, streams, .. } => {
                        (std::iter::once(peer).chain(more_peers).cloned().collect::<Vec<_>>(), *peer_port, *streams)
                    }
                    SctpRole::Requests { peer, peer_port, .. } => (vec![peer.clone()], *peer_port, 1),
                    SctpRole::Sink { .. } => return,
                };
                for (i, peer) in peers.iter().enumerate() {
                    let peer: Vec<IpAddr> = peer.iter().map(|a| IpAddr::V4(*a)).collect();
                    let flow = self.cfg.flows.get(i).copied().unwrap_or(NO_FLOW);
                    let id = self.socket.connect(now, &peer, port, flow);
                    self.opened.push(Opened {
                        id,
                        queued: 0,
                        streams: streams.max(1),
                        clamped: None,
                        established: false,
                    });
                }
                self.schedule_request(ctx);
            }
            TOKEN_READ => self.read_pending = false,
            TOKEN_SEND => {
                if let SctpRole::Requests { message_size, .. } = self.cfg.role {
                    let first = self.opened.first().map(|o| o.id);
                    let _ = self.send_message(now, first, 0, PPID_REQUEST, false, message_size);
                }
                self.schedule_request(ctx);
            }
            TOKEN_SOCKET => self.socket.on_timer(ctx),
            _ => return,
        }
        self.flush(ctx);
    }

    fn on_packet(&mut self, ctx: &mut Ctx<'_>, pkt: Packet) {
        self.socket.on_packet(ctx, pkt);
        self.flush(ctx);
    }

    fn on_iface_event(&mut self, ctx: &mut Ctx<'_>, iface: IfaceId, event: IfaceEvent) {
        if !self.handover.active() {
            return; // no policy: today's behaviour
        }
        self.handover.on_iface_event(ctx, &mut self.socket, iface, event);
        self.flush(ctx);
    }

    fn report(&self, now: Instant, out: &mut Scalars) {
        let name = self.socket.name();
        self.handover.report(&self.socket, name, out);
        if self.received.messages > 0 {
            let mut all = self.per_assoc.iter().flatten();
            let first = all.next().map(|rx| rx.delay.clone()).unwrap_or_default();
            let delay = all.fold(first, |mut d, rx| {
                d.merge(&rx.delay);
                d
            });
            Received { delay, ..self.received.clone() }.report(name, out);
            if self.response_delay.count() > 0 {
                out.push("sctp", name, "response_time_mean", self.response_delay.mean_s(), "s");
                out.push("sctp", name, "response_time_p99", self.response_delay.quantile_s(0.99), "s");
            }
        }
        let ids = self.socket.associations();
        let Some(&first) = ids.first() else { return };
        let sender = matches!(self.cfg.role, SctpRole::Bulk { .. } | SctpRole::Requests { .. });
        self.socket.report_failover(now, first, out);
        if let (SctpRole::Bulk { start, .. }, Some(done)) = (&self.cfg.role, self.completed_at) {
            out.push("sctp", name, "completion_time", done.saturating_since(*start).as_secs_f64(), "s");
        }
        self.socket.report_transport(now, first, sender, out);
        for (k, &id) in ids.iter().enumerate() {
            if k > 0 {
                self.socket.report_failover(now, id, out);
                self.socket.report_transport(now, id, sender, out);
            }
            let Some(rx) = self.per_assoc.get(k).and_then(Option::as_ref) else { continue };
            let entity = if ids.len() > 1 { rx.name.as_str() } else { name };
            if ids.len() > 1 {
                rx.report(entity, out);
            }
            rx.report_streams(entity, out);
        }
        for o in &self.opened {
            if let Some(n) = o.clamped {
                out.push("sctp", self.socket.entity(o.id), "streams_negotiated", f64::from(n), "streams");
            }
        }
    }

    fn sample(&self, now: Instant, out: &mut TimeSeries) {
        let ids = self.socket.associations();
        let Some(&first) = ids.first() else { return };
        let name = self.socket.name();
        self.socket.sample(now, first, out);
        out.push(now, "sctp", name, "delivered_bytes", "bytes", self.received.bytes as f64);
        if ids.len() < 2 {
            return;
        }
        for &id in &ids[1..] {
            self.socket.sample(now, id, out);
        }
        // Associations that delivered something (the others have no series yet).
        for rx in self.per_assoc.iter().flatten() {
            out.push(now, "sctp", &rx.name, "delivered_bytes", "bytes", rx.bytes as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `message_bytes` makes, for any part of a message, what the whole message holds there:
    /// the sequence number and hand-over time, then zeros.
    #[test]
    fn message_bytes_makes_any_part_of_a_message() {
        let tag: [u64; 2] = [0x0102_0304_0506_0708, 0x1112_1314_1516_1718];
        let mut whole = [0u8; 40];
        whole[..8].copy_from_slice(&tag[0].to_be_bytes());
        whole[8..16].copy_from_slice(&tag[1].to_be_bytes());
        for at in 0..whole.len() {
            for end in at..=whole.len() {
                let mut part = vec![0u8; end - at];
                message_bytes(tag, at, &mut part);
                assert_eq!(part, whole[at..end], "{at}..{end}");
            }
        }
    }
}
