//! SCTP on simulated hosts: one [`SctpApp`] agent per application owns an
//! [`sctp::Endpoint`] on the host's addresses and runs one of the applications: a bulk
//! sender, a sink that reads at a configured rate, or a request/response client (with the
//! sink answering each request).
//!
//! Every message starts with its sequence number and the instant the application handed
//! it over (big-endian u64 each), so the receiving side measures end-to-end delay per
//! message and the first send time for goodput (DESIGN.md metric definitions).

use std::net::{IpAddr, Ipv4Addr};

use sctp::{AssocId, Association, Endpoint, Event, PathState, SendError};

use crate::agent::{Agent, Ctx};
use crate::recorder::{Scalars, TimeSeries};
use crate::stats::DelayStats;
use crate::time::{Duration, Instant};
use crate::transport::timer::EngineTimer;
use crate::wire::{Packet, PROTO_SCTP};

/// Bytes at the start of every message: sequence number and hand-over time.
pub const MESSAGE_HEADER_LEN: usize = 16;

/// What the application does.
#[derive(Clone, Debug, PartialEq)]
pub enum SctpRole {
    /// Opens an association and sends `bytes` (or without end) in messages.
    Bulk {
        /// The peer's addresses; the first is the primary.
        peer: Vec<Ipv4Addr>,
        /// The peer's port.
        peer_port: u16,
        /// When to connect.
        start: Instant,
        /// Bytes to send; `None` sends until the end of the run.
        bytes: Option<u64>,
        /// User message size, bytes.
        message_size: usize,
        /// Messages go round-robin over this many streams.
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
    /// Accepts associations and reads; `drain_rate` in bytes per second (`None`: at once).
    /// Requests (ppid 1) are answered.
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
}

const TOKEN_START: u64 = 0;
const TOKEN_READ: u64 = 1;
const TOKEN_SEND: u64 = 2;
const TOKEN_ENGINE: u64 = 3;

const PPID_DATA: u32 = 0;
const PPID_REQUEST: u32 = 1;
const PPID_RESPONSE: u32 = 2;

/// An SCTP application and its endpoint on one host.
pub struct SctpApp {
    cfg: SctpAppConfig,
    ep: Endpoint,
    assoc: Option<AssocId>,
    /// The engine's timer (all its associations' deadlines, as the endpoint reports them).
    timer: EngineTimer,
    read_pending: bool,
    // Sending side.
    next_seq: u64,
    bytes_queued: u64,
    /// The bytes of the last message sent, reused for the next.
    message_buf: Vec<u8>,
    // Receiving side.
    rx_messages: u64,
    rx_bytes: u64,
    first_sent_seen: Option<Instant>,
    first_delivery: Option<Instant>,
    last_delivery: Option<Instant>,
    /// When every byte of a finite bulk transfer was acknowledged.
    completed_at: Option<Instant>,
    delay: DelayStats,
    response_delay: DelayStats,
    // Failover bookkeeping (sending side).
    primary_break: Option<Instant>,
    primary_inactive_at: Option<Instant>,
    primary_pf_at: Option<Instant>,
    first_alt_rtx_at: Option<Instant>,
    data_moved_at: Option<Instant>,
    switched_back_at: Option<Instant>,
    path_changes: u64,
    closed: Option<String>,
    /// The reported association once it has finished and left the endpoint (its final
    /// counters and state).
    finished: Option<Association>,
    /// Association ids, reused between flushes.
    ids: Vec<AssocId>,
}

impl SctpApp {
    /// An application; its packets are bound by the caller to protocol 132 on the host.
    pub fn new(cfg: SctpAppConfig) -> Self {
        let addrs = cfg.addrs.iter().map(|a| IpAddr::V4(*a)).collect();
        let listening = matches!(cfg.role, SctpRole::Sink { .. });
        let ep = Endpoint::new(cfg.config.clone(), addrs, cfg.port, listening, cfg.seed);
        SctpApp {
            cfg,
            ep,
            assoc: None,
            timer: EngineTimer::new(TOKEN_ENGINE),
            read_pending: false,
            next_seq: 0,
            bytes_queued: 0,
            message_buf: Vec::new(),
            rx_messages: 0,
            rx_bytes: 0,
            first_sent_seen: None,
            first_delivery: None,
            last_delivery: None,
            completed_at: None,
            delay: DelayStats::default(),
            response_delay: DelayStats::default(),
            primary_break: None,
            primary_inactive_at: None,
            primary_pf_at: None,
            first_alt_rtx_at: None,
            data_moved_at: None,
            switched_back_at: None,
            path_changes: 0,
            closed: None,
            finished: None,
            ids: Vec::new(),
        }
    }

    fn association(&mut self) -> Option<&mut Association> {
        self.ep.association_mut(self.assoc?)
    }

    /// The association results are reported for, in the endpoint or finished.
    fn reported(&self) -> Option<&Association> {
        self.assoc.and_then(|id| self.ep.association(id)).or(self.finished.as_ref())
    }

    /// The ids of the endpoint's associations, in `self.ids` (taken back by the caller).
    fn take_ids(&mut self) -> Vec<AssocId> {
        let mut ids = std::mem::take(&mut self.ids);
        ids.clear();
        ids.extend(self.ep.ids());
        ids
    }

    /// Hands the association one message of `size` bytes (at least the header): sequence
    /// number and hand-over time, then zeros. The bytes are written into a buffer kept
    /// between calls (the engine copies them), so a message costs no allocation here.
    fn send_message(
        &mut self,
        now: Instant,
        stream: u16,
        ppid: u32,
        unordered: bool,
        size: usize,
    ) -> Result<(), SendError> {
        let mut m = std::mem::take(&mut self.message_buf);
        // Only the header is ever written, so the rest of the buffer stays zero.
        m.resize(size.max(MESSAGE_HEADER_LEN), 0);
        m[..8].copy_from_slice(&self.next_seq.to_be_bytes());
        m[8..16].copy_from_slice(&now.as_nanos().to_be_bytes());
        self.next_seq += 1;
        let sent = match self.association() {
            Some(a) => a.send(stream, ppid, unordered, &m),
            None => Err(SendError::NotOpen(sctp::State::Closed)),
        };
        self.message_buf = m;
        sent
    }

    /// Keeps the bulk sender's send buffer full.
    fn refill(&mut self, now: Instant) {
        let SctpRole::Bulk { bytes, message_size, streams, unordered, .. } = self.cfg.role else { return };
        loop {
            let remaining = bytes.map_or(u64::MAX, |b| b.saturating_sub(self.bytes_queued));
            if remaining == 0 {
                return;
            }
            let size = (message_size as u64).min(remaining) as usize;
            let Some(a) = self.association() else { return };
            if a.send_buffer_space() < size.max(MESSAGE_HEADER_LEN) {
                return;
            }
            let stream = (self.next_seq % u64::from(streams.max(1))) as u16;
            if self.send_message(now, stream, PPID_DATA, unordered, size).is_err() {
                return;
            }
            self.bytes_queued += size.max(MESSAGE_HEADER_LEN) as u64;
        }
    }

    /// Reads what the application may read now (all of it, or as the read rate allows).
    fn read(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        let rate = match self.cfg.role {
            SctpRole::Sink { drain_rate } => drain_rate,
            _ => None,
        };
        if rate.is_some() && self.read_pending {
            return;
        }
        let mut replies = Vec::new();
        let ids = self.take_ids();
        for &id in &ids {
            let Some(a) = self.ep.association_mut(id) else { continue };
            while let Some(m) = a.read() {
                let sent_at = m.data.get(8..16).and_then(|b| b.try_into().ok()).map(|b| Instant(u64::from_be_bytes(b)));
                match m.ppid {
                    PPID_REQUEST => replies.push((id, m.data.clone())),
                    PPID_RESPONSE => {
                        if let Some(t) = sent_at.filter(|&t| t <= now) {
                            self.response_delay.record(now - t);
                        }
                    }
                    _ => {}
                }
                let len = m.data.len();
                // The association builds later chunks in the buffer.
                a.recycle(m.data);
                self.rx_messages += 1;
                self.rx_bytes += len as u64;
                self.first_delivery.get_or_insert(now);
                self.last_delivery = Some(now);
                if let Some(t) = sent_at.filter(|&t| t <= now) {
                    self.first_sent_seen.get_or_insert(t);
                    self.delay.record(now - t);
                }
                if let Some(r) = rate {
                    // The next read waits for this message's share of the read rate.
                    let wait = Duration::from_nanos((len as u128 * 1_000_000_000 / u128::from(r.max(1))) as u64);
                    self.read_pending = true;
                    ctx.timer_in(wait, TOKEN_READ);
                    break;
                }
            }
        }
        self.ids = ids;
        for (id, data) in replies {
            if let Some(a) = self.ep.association_mut(id) {
                let _ = a.send(0, PPID_RESPONSE, false, &data);
            }
        }
    }

    /// Sends everything the engine produced, records its events and re-arms the timer.
    fn flush(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        self.refill(now);
        self.read(ctx);
        if let SctpRole::Bulk { bytes: Some(total), .. } = self.cfg.role {
            if self.completed_at.is_none()
                && self.bytes_queued >= total
                && self.reported().is_some_and(|a| a.all_acked())
            {
                self.completed_at = Some(now);
            }
        }
        while let Some(d) = self.ep.poll_transmit(now) {
            let IpAddr::V4(dst) = d.remote else { continue };
            let src = match d.local {
                Some(IpAddr::V4(a)) => Some(a),
                _ => None,
            };
            let Some(route) = ctx.route(src, dst) else { continue };
            let pkt = ctx.packet_around(route.src, dst, PROTO_SCTP, d.payload, u32::MAX);
            ctx.send_on(route, pkt);
        }
        let ids = self.take_ids();
        for &id in &ids {
            while let Some(e) = self.ep.association_mut(id).and_then(Association::poll_event) {
                self.on_event(ctx, id, e);
            }
        }
        self.ids = ids;
        // A finished association leaves the endpoint; the reported one's final state is kept.
        while let Some((id, a)) = self.ep.poll_closed() {
            if Some(id) == self.assoc {
                self.finished = Some(a);
            }
        }
        self.timer.update(ctx, self.ep.poll_timeout());
    }

    fn on_event(&mut self, ctx: &mut Ctx<'_>, id: AssocId, e: Event) {
        let now = ctx.now();
        let primary = self.ep.association(id).map(|a| a.primary());
        match &e {
            Event::Connected => {
                if self.assoc.is_none() {
                    self.assoc = Some(id);
                }
                if let (SctpRole::Bulk { peer, .. } | SctpRole::Requests { peer, .. }, Some(&p0)) =
                    (&self.cfg.role, self.cfg.addrs.first())
                {
                    if let Some(&dst) = peer.first() {
                        let src = ctx.route(None, dst).map_or(p0, |r| r.src);
                        self.primary_break = ctx.first_break_on_route(src, dst);
                    }
                }
            }
            Event::PathStateChanged { path, to, .. } => {
                self.path_changes += 1;
                if Some(*path) == primary {
                    let after_break = self.primary_break.is_some_and(|b| now >= b);
                    if *to == PathState::Inactive && after_break {
                        self.primary_inactive_at.get_or_insert(now);
                    }
                    if *to == PathState::PotentiallyFailed && after_break {
                        self.primary_pf_at.get_or_insert(now);
                    }
                }
            }
            Event::RetransmitOnAlternate { .. } if self.primary_break.is_some_and(|b| now >= b) => {
                self.first_alt_rtx_at.get_or_insert(now);
            }
            Event::DataPathChanged { to, .. } if self.primary_break.is_some_and(|b| now >= b) => {
                if Some(*to) == primary && self.data_moved_at.is_some() {
                    self.switched_back_at.get_or_insert(now);
                } else {
                    self.data_moved_at.get_or_insert(now);
                }
            }
            Event::Closed { reason } => self.closed = Some(format!("{reason:?}")),
            _ => {}
        }
        if ctx.tracing() {
            ctx.trace("sctp", &self.cfg.name, &format!("{e:?}"));
        }
    }

    fn schedule_request(&mut self, ctx: &mut Ctx<'_>) {
        if let SctpRole::Requests { rate, .. } = self.cfg.role {
            ctx.timer_in(Duration::from_secs_f64(1.0 / rate.max(1e-9)), TOKEN_SEND);
        }
    }
}

impl Agent for SctpApp {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
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
                let (peer, port) = match &self.cfg.role {
                    SctpRole::Bulk { peer, peer_port, .. } | SctpRole::Requests { peer, peer_port, .. } => {
                        (peer.iter().map(|a| IpAddr::V4(*a)).collect::<Vec<_>>(), *peer_port)
                    }
                    SctpRole::Sink { .. } => return,
                };
                self.assoc = Some(self.ep.connect(now, &peer, port));
                self.schedule_request(ctx);
            }
            TOKEN_READ => self.read_pending = false,
            TOKEN_SEND => {
                if let SctpRole::Requests { message_size, .. } = self.cfg.role {
                    let _ = self.send_message(now, 0, PPID_REQUEST, false, message_size);
                }
                self.schedule_request(ctx);
            }
            TOKEN_ENGINE => {
                if !self.timer.fired(ctx) {
                    return; // woken for a deadline since postponed or dropped
                }
                self.ep.handle_timeout(now);
            }
            _ => return,
        }
        self.flush(ctx);
    }

    fn on_packet(&mut self, ctx: &mut Ctx<'_>, pkt: Packet) {
        let Some(ip) = pkt.ip() else { return };
        let (src, dst) = (IpAddr::V4(ip.src()), IpAddr::V4(ip.dst()));
        let now = ctx.now();
        let id = self.ep.handle(now, src, dst, ip.payload());
        if self.assoc.is_none() {
            self.assoc = id;
        }
        // The association builds later packets in the datagram's buffer.
        if let Some(a) = id.and_then(|id| self.ep.association_mut(id)) {
            a.recycle(pkt.bytes);
        }
        self.flush(ctx);
    }

    fn report(&self, now: Instant, out: &mut Scalars) {
        let name = &self.cfg.name;
        if self.rx_messages > 0 {
            out.push("sctp", name, "delivered_bytes", self.rx_bytes as f64, "bytes");
            out.push("sctp", name, "delivered_messages", self.rx_messages as f64, "messages");
            if let (Some(first), Some(last)) = (self.first_sent_seen, self.last_delivery) {
                let span = last.saturating_since(first).as_secs_f64();
                if span > 0.0 {
                    out.push("sctp", name, "goodput", self.rx_bytes as f64 * 8.0 / span, "bit/s");
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
            if self.response_delay.count() > 0 {
                out.push("sctp", name, "response_time_mean", self.response_delay.mean_s(), "s");
                out.push("sctp", name, "response_time_p99", self.response_delay.quantile_s(0.99), "s");
            }
        }
        let Some(a) = self.reported() else { return };
        let break_at = self.primary_break;
        let since_break = |t: Option<Instant>| t.zip(break_at).map(|(t, b)| t.saturating_since(b).as_secs_f64());
        if let Some(b) = break_at {
            out.push("sctp", name, "primary_break_at", b.as_secs_f64(), "s");
        }
        for (metric, t) in [
            ("failover_time", since_break(self.primary_inactive_at)),
            ("pf_time", since_break(self.primary_pf_at)),
            ("first_alternate_rtx_time", since_break(self.first_alt_rtx_at)),
            ("data_moved_time", since_break(self.data_moved_at)),
            ("switch_back_time", since_break(self.switched_back_at)),
        ] {
            if let Some(v) = t {
                out.push("sctp", name, metric, v, "s");
            }
        }
        if let (SctpRole::Bulk { start, .. }, Some(done)) = (&self.cfg.role, self.completed_at) {
            out.push("sctp", name, "completion_time", done.saturating_since(*start).as_secs_f64(), "s");
        }
        let sum = |f: fn(&sctp::PathStats) -> u64| a.paths().values().map(|p| f(&p.stats)).sum::<u64>() as f64;
        if matches!(self.cfg.role, SctpRole::Bulk { .. } | SctpRole::Requests { .. }) {
            out.push("sctp", name, "sent_bytes", sum(|s| s.bytes_sent), "bytes");
            out.push("sctp", name, "fast_retransmissions", sum(|s| s.fast_retransmissions), "chunks");
            out.push("sctp", name, "timeout_retransmissions", sum(|s| s.timeout_retransmissions), "chunks");
            out.push("sctp", name, "retransmitted_bytes", sum(|s| s.bytes_retransmitted), "bytes");
            out.push("sctp", name, "t3_timeouts", sum(|s| s.t3_timeouts), "events");
        }
        out.push("sctp", name, "heartbeats_sent", sum(|s| s.heartbeats_sent), "chunks");
        out.push("sctp", name, "path_state_changes", self.path_changes as f64, "events");
        out.push("sctp", name, "closed", f64::from(u8::from(self.closed.is_some())), "bool");
        for (i, p) in a.paths() {
            let entity = format!("{name}/path{i}");
            out.push("sctp_path", &entity, "bytes_sent", p.stats.bytes_sent as f64, "bytes");
            out.push("sctp_path", &entity, "bytes_retransmitted", p.stats.bytes_retransmitted as f64, "bytes");
            out.push("sctp_path", &entity, "bytes_acked", p.stats.bytes_acked as f64, "bytes");
            out.push("sctp_path", &entity, "t3_timeouts", p.stats.t3_timeouts as f64, "events");
            out.push("sctp_path", &entity, "packets_sent", p.stats.packets_sent as f64, "packets");
            out.push("sctp_path", &entity, "state", f64::from(p.state.code()), "0=active,1=pf,2=inactive");
        }
        let _ = now;
    }

    fn sample(&self, now: Instant, out: &mut TimeSeries) {
        let Some(a) = self.reported() else { return };
        let name = &self.cfg.name;
        for (i, p) in a.paths() {
            let entity = format!("{name}/path{i}");
            out.push(now, "sctp_path", &entity, "cwnd", "bytes", f64::from(p.cc.cwnd));
            out.push(now, "sctp_path", &entity, "ssthresh", "bytes", f64::from(p.cc.ssthresh));
            out.push(now, "sctp_path", &entity, "flight_size", "bytes", f64::from(p.flight_size));
            out.push(now, "sctp_path", &entity, "rto", "s", p.rto.rto.as_secs_f64());
            if let Some(srtt) = p.rto.srtt {
                out.push(now, "sctp_path", &entity, "srtt", "s", srtt.as_secs_f64());
            }
            out.push(now, "sctp_path", &entity, "state", "0=active,1=pf,2=inactive", f64::from(p.state.code()));
        }
        out.push(now, "sctp", name, "a_rwnd", "bytes", f64::from(a.a_rwnd()));
        out.push(now, "sctp", name, "peer_rwnd", "bytes", f64::from(a.peer_rwnd()));
        out.push(now, "sctp", name, "delivered_bytes", "bytes", self.rx_bytes as f64);
    }
}
