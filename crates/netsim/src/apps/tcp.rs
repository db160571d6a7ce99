//! TCP applications: a bulk sender ("FTP upload of N bytes", or unlimited) and a sink.
//!
//! The sender writes the byte stream as records of [`RECORD_LEN`] bytes, each starting with
//! its index and the instant the application handed it to TCP (both big-endian u64). It keeps
//! no more than two congestion windows of data queued beyond what is in flight (as Linux's
//! send-buffer autotuning and `TCP_NOTSENT_LOWAT` do), so the connection never starves and
//! the measured delay is not dominated by a deep send buffer. The sink reads the stream, finds the record headers by their
//! offset, and records each record's end-to-end delay (delivery to the application minus
//! hand-over by the sending application) in the flow's delay statistics. Bytes count as
//! received when the application reads them, so the flow's goodput is what the receiving
//! application got. The sink reads at once, or at `drain_rate` bit/s (a slow reader: the
//! receive buffer fills and the advertised window shrinks).

use std::net::{Ipv4Addr, SocketAddrV4};

use tcp::connection::Event;
use tcp::wire::{Flags, TcpView};
use tcp::Connection;

use crate::agent::{Agent, Ctx};
use crate::recorder::{Scalars, TimeSeries};
use crate::time::{Duration, Instant};
use crate::transport::tcp::TcpSocket;
use crate::wire::{Packet, NO_FLOW};

/// Bytes per application record in a bulk stream (header: index and send time).
pub const RECORD_LEN: u64 = 1000;
const RECORD_HEADER: usize = 16;

/// The parts of the record headers that fall into stream bytes `lo..hi`, in order: for each
/// record, its start and the stream range `from..to` of the header bytes inside `lo..hi`.
fn header_parts(lo: u64, hi: u64) -> impl Iterator<Item = (u64, u64, u64)> {
    (lo / RECORD_LEN..hi.div_ceil(RECORD_LEN))
        .map(move |k| {
            let rec = k * RECORD_LEN;
            (rec, rec.max(lo), (rec + RECORD_HEADER as u64).min(hi))
        })
        .filter(|&(_, from, to)| from < to)
}

/// Where `len` bytes from offset `at` of the byte string that slices of lengths `a_len` then
/// `b_len` make lie: the range in the first slice and the range in the second (a ring
/// buffer's two parts).
fn split_at_ring(a_len: usize, at: usize, len: usize) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
    let in_a = a_len.saturating_sub(at).min(len);
    let b_from = (at + in_a).saturating_sub(a_len);
    (at.min(a_len)..at.min(a_len) + in_a, b_from..b_from + len - in_a)
}

/// Where a whole record header (`len` is `RECORD_HEADER`) at offset `at` lies in a buffer's
/// (or a ring buffer's first) part of `a_len` bytes, if it lies there: the sender writes and
/// the sink reads it as one 16-byte array, where copying a part of a length known only at run
/// time is a call to `memcpy` (one per record).
fn whole_header(a_len: usize, at: usize, len: u64) -> Option<std::ops::Range<usize>> {
    (len == RECORD_HEADER as u64 && at + RECORD_HEADER <= a_len).then_some(at..at + RECORD_HEADER)
}

/// The bytes of a bulk stream from offset `lo` into `out` (zeroed), for records handed over to
/// TCP at `sent` (nanoseconds): the parts of the record headers that fall there. TCP calls it
/// for each segment it builds ([`Connection::write_generated`]), with the time the records
/// were written.
fn records(lo: u64, sent: u64, out: &mut [u8]) {
    for (rec, from, to) in header_parts(lo, lo + out.len() as u64) {
        let (seq, sent) = ((rec / RECORD_LEN).to_be_bytes(), sent.to_be_bytes());
        let at = (from - lo) as usize;
        if let Some(whole) = whole_header(out.len(), at, to - from) {
            // Written straight from the two words (no header put together on the stack).
            let (s, t) = out[whole].split_at_mut(8);
            s.copy_from_slice(&seq);
            t.copy_from_slice(&sent);
            continue;
        }
        let mut header = [0u8; RECORD_HEADER];
        header[..8].copy_from_slice(&seq);
        header[8..].copy_from_slice(&sent);
        out[at..at + (to - from) as usize].copy_from_slice(&header[(from - rec) as usize..(to - rec) as usize]);
    }
}

/// Parameters of a bulk sender.
#[derive(Clone, Debug, PartialEq)]
pub struct BulkConfig {
    /// Source address (selects the interface on a multihomed host).
    pub src: Ipv4Addr,
    /// Source port.
    pub src_port: u16,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// Destination port (a [`TcpSink`] listens there).
    pub dst_port: u16,
    /// Bytes to upload, then close; `None` sends until the end of the run.
    pub bytes: Option<u64>,
    /// When to open the connection.
    pub start: Instant,
    /// TCP parameters.
    pub tcp: tcp::Config,
    /// Seed of the connection's initial sequence number.
    pub seed: u64,
}

/// A bulk-transfer source over TCP.
pub struct TcpBulk {
    config: BulkConfig,
    flow: u32,
    name: String,
    socket: Option<TcpSocket>,
    written: u64,
    connected_at: Option<Instant>,
    /// When the last byte was acknowledged (the upload's completion).
    completed_at: Option<Instant>,
    closed: bool,
    events: Vec<Event>,
}

const START: u64 = 0;
const SOCKET: u64 = 1;

impl TcpBulk {
    /// A sender reported as `name`, whose segments are accounted to `flow`.
    pub fn new(config: BulkConfig, flow: u32, name: &str) -> Self {
        TcpBulk {
            config,
            flow,
            name: name.to_string(),
            socket: None,
            written: 0,
            connected_at: None,
            completed_at: None,
            closed: false,
            events: Vec::new(),
        }
    }

    /// Keep the send buffer full with records; close when everything is written. Returns
    /// whether it wrote or closed anything (else the connection is as it was).
    fn fill(&mut self, now: Instant) -> bool {
        let Some(s) = self.socket.as_mut() else { return false };
        let before = self.written;
        loop {
            let queued = s.conn.send_buffered() as u64;
            let target = s.conn.in_flight() + 2 * s.conn.cwnd().max(4 * s.conn.smss());
            let room = (s.conn.send_space() as u64).min(target.saturating_sub(queued));
            let left = self.config.bytes.map_or(u64::MAX, |b| b - self.written);
            let n = room.min(left).min(64 * RECORD_LEN);
            if n == 0 {
                break;
            }
            // The records are not stored: TCP makes their bytes (zeros, and the record headers
            // stamped with this hand-over time) into each segment as it builds it.
            let w = s.conn.write_generated(n as usize, now.as_nanos(), records) as u64;
            self.written += w;
            if w < n {
                break;
            }
        }
        if !self.closed && self.config.bytes == Some(self.written) && s.conn.state() == tcp::State::Established {
            s.conn.close();
            self.closed = true;
            return true;
        }
        self.written > before
    }

    fn after_input(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        self.fill(now);
        let Some(s) = self.socket.as_mut() else { return };
        let sent = s.flush(ctx, &mut self.events);
        for e in self.events.drain(..) {
            match e {
                Event::Connected => self.connected_at = Some(now),
                Event::StateChanged {
                    to: tcp::State::FinWait2 | tcp::State::TimeWait | tcp::State::Closed, ..
                } if self.completed_at.is_none() && self.closed && s.conn.send_buffered() == 0 => {
                    self.completed_at = Some(now);
                }
                _ => {}
            }
        }
        // Writing may have become possible after the segments just sent (the data kept queued
        // follows what is in flight). Unless some were sent, the connection is as the first
        // fill left it, which a second would find again; unless it writes, the connection is
        // as the flush left it, with nothing to send (the repeats were 0.5 % of the TCP
        // dumbbell's instructions).
        if sent > 0 && self.config.bytes.is_none_or(|b| self.written < b) && self.fill(now) {
            if let Some(s) = self.socket.as_mut() {
                s.flush(ctx, &mut self.events);
                self.events.clear();
            }
        }
    }
}

impl Agent for TcpBulk {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        let at = self.config.start.max(ctx.now());
        let _ = ctx.timer_at(at, START);
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        match token {
            START if self.socket.is_none() => {
                let c = &self.config;
                let conn = Connection::connect(
                    c.tcp.clone(),
                    SocketAddrV4::new(c.src, c.src_port),
                    SocketAddrV4::new(c.dst, c.dst_port),
                    c.seed,
                    ctx.now(),
                );
                self.socket = Some(TcpSocket::new(ctx, conn, self.flow, SOCKET, &self.name));
            }
            SOCKET => {
                if let Some(s) = self.socket.as_mut() {
                    s.on_timer(ctx);
                }
            }
            _ => return,
        }
        self.after_input(ctx);
    }

    fn on_packet(&mut self, ctx: &mut Ctx<'_>, pkt: Packet) {
        if let Some(s) = self.socket.as_mut() {
            s.on_packet(ctx, pkt);
            self.after_input(ctx);
        }
    }

    fn report(&self, _now: Instant, out: &mut Scalars) {
        let Some(s) = self.socket.as_ref() else { return };
        let st = s.conn.stats();
        let n = &self.name;
        out.push("tcp", n, "segments_sent", st.segments_sent as f64, "packets");
        out.push("tcp", n, "retransmissions", st.retransmissions as f64, "packets");
        out.push("tcp", n, "fast_retransmits", st.fast_retransmits as f64, "events");
        out.push("tcp", n, "timeouts", st.timeouts as f64, "events");
        out.push("tcp", n, "bytes_sent", st.bytes_sent as f64, "bytes");
        out.push("tcp", n, "bytes_retransmitted", st.bytes_retransmitted as f64, "bytes");
        out.push("tcp", n, "bytes_acked", st.bytes_acked as f64, "bytes");
        out.push("tcp", n, "malformed", st.malformed as f64, "packets");
        out.push("tcp", n, "srtt", s.conn.srtt().map_or(f64::NAN, |d| d.as_secs_f64()), "s");
        out.push("tcp", n, "min_rtt", s.conn.min_rtt().map_or(f64::NAN, |d| d.as_secs_f64()), "s");
        out.push("tcp", n, "cwnd", s.conn.cwnd() as f64, "bytes");
        let done = match (self.connected_at, self.completed_at) {
            (Some(_), Some(t)) => t.saturating_since(self.config.start).as_secs_f64(),
            _ => f64::NAN,
        };
        out.push("tcp", n, "completion_time", done, "s");
        s.report_ecn(out);
    }

    fn sample(&self, now: Instant, out: &mut TimeSeries) {
        if let Some(s) = self.socket.as_ref() {
            s.sample(now, out);
        }
    }
}

/// Parameters of a sink.
#[derive(Clone, Debug, PartialEq)]
pub struct SinkConfig {
    /// Port it listens on.
    pub port: u16,
    /// TCP parameters of accepted connections (the receive buffer matters most).
    pub tcp: tcp::Config,
    /// Application read rate in bit/s; `None` reads everything at once.
    pub drain_rate: Option<u64>,
    /// Seed for the accepted connections' initial sequence numbers.
    pub seed: u64,
}

struct Accepted {
    socket: TcpSocket,
    /// Flow of the sender (learnt from its packets' metadata).
    flow: u32,
    /// Stream offset of the next byte the application reads.
    offset: u64,
    /// Header bytes of the record being read.
    header: [u8; RECORD_HEADER],
}

/// A TCP sink: accepts connections on a port, reads and measures what arrives.
pub struct TcpSink {
    config: SinkConfig,
    name: String,
    conns: Vec<Accepted>,
    /// Each connection's position in `conns` by its peer's address and port as one key
    /// ([`peer_key`]), sorted: looked up for every segment, and a binary search over integers
    /// costs a fraction of a tree's walk over tuples.
    by_peer: Vec<(u64, usize)>,
    rx_bytes: u64,
    /// Read allowance in bytes under `drain_rate`, and when it was last topped up.
    credit: f64,
    credit_at: Instant,
    drain_armed: bool,
    events: Vec<Event>,
    /// The delays of the records one read completes (kept, emptied, reused).
    delays: Vec<Duration>,
}

/// Timer token of the drain tick (sockets use their index).
const DRAIN: u64 = u64::MAX;
/// Period of the drain tick under a finite read rate.
const DRAIN_TICK: Duration = Duration::from_millis(1);

impl TcpSink {
    /// A sink reported as `name`.
    pub fn new(config: SinkConfig, name: &str) -> Self {
        TcpSink {
            config,
            name: name.to_string(),
            conns: Vec::new(),
            by_peer: Vec::new(),
            rx_bytes: 0,
            credit: 0.0,
            credit_at: Instant::ZERO,
            drain_armed: false,
            events: Vec::new(),
            delays: Vec::new(),
        }
    }

    /// Read from connection `i` as the read rate allows, and account what was read.
    fn drain(&mut self, ctx: &mut Ctx<'_>, i: usize) {
        let now = ctx.now();
        let max = match self.config.drain_rate {
            None => usize::MAX,
            Some(rate) => {
                let cap = self.config.tcp.recv_buffer as f64;
                self.credit =
                    (self.credit + now.saturating_since(self.credit_at).as_secs_f64() * rate as f64 / 8.0).min(cap);
                self.credit_at = now;
                self.credit as usize
            }
        };
        let c = &mut self.conns[i];
        // Record headers: collect the first RECORD_HEADER bytes of every record in the range
        // read, visiting only the header positions, where the bytes lie in the receive buffer.
        let mut delays = std::mem::take(&mut self.delays);
        delays.clear();
        let lo = c.offset;
        let header = &mut c.header;
        let n = c.socket.conn.read_with(max, |a, b| {
            for (rec, from, to) in header_parts(lo, lo + (a.len() + b.len()) as u64) {
                let at = (from - lo) as usize;
                let whole = whole_header(a.len(), at, to - from);
                if let Some(whole) = whole.and_then(|r| <&[u8; RECORD_HEADER]>::try_from(&a[r]).ok()) {
                    *header = *whole;
                } else {
                    let part = &mut header[(from - rec) as usize..(to - rec) as usize];
                    let (in_a, in_b) = split_at_ring(a.len(), at, part.len());
                    let (pa, pb) = part.split_at_mut(in_a.len());
                    pa.copy_from_slice(&a[in_a]);
                    pb.copy_from_slice(&b[in_b]);
                }
                if to == rec + RECORD_HEADER as u64 {
                    let sent = u64::from_be_bytes(header[8..16].try_into().unwrap_or_default());
                    if sent <= now.as_nanos() {
                        delays.push(now - Instant(sent));
                    }
                }
            }
        });
        if n == 0 {
            self.delays = delays;
            return;
        }
        if self.config.drain_rate.is_some() {
            self.credit -= n as f64;
        }
        self.rx_bytes += n as u64;
        c.offset = lo + n as u64;
        if c.flow != NO_FLOW {
            if let Some(f) = ctx.flow_mut(c.flow) {
                f.rx_bytes += n as u64;
                f.last_rx = Some(now);
                for &d in &delays {
                    f.delay.record(d);
                }
            }
        }
        self.delays = delays;
        if c.socket.conn.readable() > 0 && self.config.drain_rate.is_some() {
            self.arm_drain(ctx);
        }
    }

    fn arm_drain(&mut self, ctx: &mut Ctx<'_>) {
        if !self.drain_armed {
            self.drain_armed = true;
            ctx.timer_in(DRAIN_TICK, DRAIN);
        }
    }

    fn service(&mut self, ctx: &mut Ctx<'_>, i: usize) {
        self.drain(ctx, i);
        let c = &mut self.conns[i];
        c.socket.flush(ctx, &mut self.events);
        // The peer's FIN is answered by ours; only then has this flush left anything to send.
        let peer_closed = self.events.contains(&Event::PeerClosed);
        self.events.clear();
        if peer_closed {
            c.socket.conn.close();
            c.socket.flush(ctx, &mut self.events);
            self.events.clear();
        }
    }
}

/// A peer's address and port as one sortable key.
fn peer_key(addr: Ipv4Addr, port: u16) -> u64 {
    u64::from(u32::from(addr)) << 16 | u64::from(port)
}

impl Agent for TcpSink {
    fn on_packet(&mut self, ctx: &mut Ctx<'_>, pkt: Packet) {
        let Some(ip) = pkt.ip() else { return };
        let Ok(seg) = TcpView::new(ip.payload()) else { return };
        let peer = (ip.src(), seg.src_port());
        let key = peer_key(peer.0, peer.1);
        let i = match self.by_peer.binary_search_by_key(&key, |&(k, _)| k) {
            Ok(at) => self.by_peer[at].1,
            Err(at) => {
                // Only a SYN opens a connection; anything else for an unknown peer is ignored
                // (there is no RST for it in this model).
                if !seg.flags().has(Flags::SYN) || seg.flags().has(Flags::ACK) {
                    return;
                }
                let i = self.conns.len();
                let local = SocketAddrV4::new(ip.dst(), self.config.port);
                let seed = self.config.seed
                    ^ ((u32::from(peer.0) as u64) << 16 | peer.1 as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                let conn = Connection::accept(
                    self.config.tcp.clone(),
                    local,
                    SocketAddrV4::new(peer.0, peer.1),
                    seed,
                    ctx.now(),
                );
                let name = format!("{}/{}:{}", self.name, peer.0, peer.1);
                self.conns.push(Accepted {
                    socket: TcpSocket::new(ctx, conn, NO_FLOW, i as u64, &name),
                    flow: pkt.meta.flow,
                    offset: 0,
                    header: [0; RECORD_HEADER],
                });
                self.by_peer.insert(at, (key, i));
                i
            }
        };
        let flow = self.conns[i].flow;
        if flow != NO_FLOW && !seg.payload().is_empty() {
            if let Some(f) = ctx.flow_mut(flow) {
                f.rx_packets += 1; // data segments that reached the sink
            }
        }
        self.conns[i].socket.on_packet(ctx, pkt);
        self.service(ctx, i);
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        if token == DRAIN {
            self.drain_armed = false;
            for i in 0..self.conns.len() {
                if self.conns[i].socket.conn.readable() > 0 {
                    self.service(ctx, i);
                }
            }
            return;
        }
        let i = token as usize;
        if i < self.conns.len() {
            self.conns[i].socket.on_timer(ctx);
            self.service(ctx, i);
        }
    }

    fn report(&self, _now: Instant, out: &mut Scalars) {
        out.push("app", &self.name, "rx_bytes", self.rx_bytes as f64, "bytes");
        out.push("app", &self.name, "connections", self.conns.len() as f64, "connections");
        // The receiving side of ECN (CE marks, ECE echoes) per accepted connection.
        for c in &self.conns {
            c.socket.report_ecn(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `records` makes, for any range of the stream, what writing the records there would:
    /// zeros, and every header byte in the range from its record's index and the range's
    /// hand-over time (a header cut by the range's ends included).
    #[test]
    fn records_make_the_header_bytes_of_any_range() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let lo = (x >> 20) % 50_000;
            let len = (x >> 45) as usize % 3_000;
            let sent = x >> 3;
            let mut out = vec![0u8; len];
            records(lo, sent, &mut out);
            for (k, &v) in out.iter().enumerate() {
                let o = lo + k as u64;
                let (rec, at) = (o / RECORD_LEN, (o % RECORD_LEN) as usize);
                let header = [rec.to_be_bytes(), sent.to_be_bytes()].concat();
                let want = if at < RECORD_HEADER { header[at] } else { 0 };
                assert_eq!(v, want, "offset {o} of {lo}..{}", lo + len as u64);
            }
        }
    }
}
