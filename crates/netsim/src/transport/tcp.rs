//! The TCP driver: one [`tcp::Connection`] inside the simulator.
//!
//! [`TcpSocket`] follows the engine's driving contract: after every input it drains
//! `poll_transmit` into IPv4 packets (protocol 6), surfaces `poll_event`, and follows
//! `poll_timeout` with an [`EngineTimer`] (one event-list entry per deadline that comes
//! earlier, each in its exact place among simultaneous events).
//!
//! Accounting: every segment the socket sends counts in its flow (`tx_packets`, and the
//! payload in `tx_bytes`), so drops of the flow's packets are comparable with what it sent.
//! Pure ACKs of a receiving socket belong to no flow.
//!
//! ECN (RFC 3168): the engine's codepoint for each segment goes into the IPv4 header it
//! leaves in (written only when not Not-ECT, so runs without ECN build the same bytes), and
//! the codepoint a segment arrives with (CE after a marking queue) goes to the engine.

use std::net::SocketAddrV4;

use tcp::connection::{Event, LossKind};
use tcp::wire::{Ecn as TcpEcn, TcpView};
use tcp::Connection;

use crate::agent::Ctx;
use crate::recorder::{Scalars, TimeSeries};
use crate::time::Instant;
use crate::transport::timer::EngineTimer;
use crate::wire::{Ecn, Packet, IPV4_HEADER_LEN, NO_FLOW, PROTO_TCP};

// The engine builds segments after room for the IPv4 header, which
// `Ctx::packet_in_headroom` writes there in place.
const _: () = assert!(tcp::wire::IPV4_HEADROOM == IPV4_HEADER_LEN);

/// A TCP connection driven by the simulator.
#[derive(Debug)]
pub struct TcpSocket {
    /// The engine.
    pub conn: Connection,
    /// Flow its segments are accounted to (`NO_FLOW` for none).
    flow: u32,
    /// Name used in trace events and time series.
    name: String,
    /// The engine's timer; its events carry the token the owning agent routes back to
    /// [`TcpSocket::on_timer`].
    timer: EngineTimer,
}

impl TcpSocket {
    /// Wrap `conn`; its timers fire with `token`. The Internet checksum is computed and
    /// verified only when something may see or alter packets ([`Ctx::checksums_needed`], as
    /// SCTP's CRC32c): results are the same either way.
    pub fn new(ctx: &Ctx<'_>, mut conn: Connection, flow: u32, token: u64, name: &str) -> Self {
        conn.set_headroom(IPV4_HEADER_LEN);
        conn.set_checksums(ctx.checksums_needed());
        TcpSocket { conn, flow, name: name.to_string(), timer: EngineTimer::new(token) }
    }

    /// Local address and port.
    pub fn local(&self) -> SocketAddrV4 {
        self.conn.local()
    }

    /// Name in results.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A packet for this connection arrived: hand the segment to the engine, with its buffer
    /// (in-order data may be read from it where it lies).
    pub fn on_packet(&mut self, ctx: &mut Ctx<'_>, pkt: Packet) {
        let arrival = pkt.ip().map(|ip| (ip.header_len(), TcpEcn::from_bits(ip.ecn() as u8)));
        let unkept = match arrival {
            Some((at, ecn)) => self.conn.handle_segment_in(ctx.now(), pkt.bytes, at, ecn),
            None => Some(pkt.bytes),
        };
        if let Some(buf) = unkept {
            // The engine builds later segments in the buffer.
            self.conn.recycle(buf);
        }
    }

    /// A timer with this socket's token fired.
    pub fn on_timer(&mut self, ctx: &mut Ctx<'_>) {
        if self.timer.fired(ctx) {
            self.conn.handle_timeout(ctx.now());
        }
    }

    /// Send what the engine wants to send, collect its events into `events` (tracing the
    /// interesting ones), and arm the next timer. Call after every input and command.
    /// Returns how many segments it sent.
    pub fn flush(&mut self, ctx: &mut Ctx<'_>, events: &mut Vec<Event>) -> usize {
        let now = ctx.now();
        let mut sent = 0;
        let (local, remote) = (self.conn.local(), self.conn.remote());
        while let Some((seg, ecn)) = self.conn.poll_transmit_ecn(now) {
            // The engine leaves room for the IPv4 header in front of the segment.
            let mut pkt = ctx.packet_in_headroom(*local.ip(), *remote.ip(), PROTO_TCP, seg, IPV4_HEADER_LEN, self.flow);
            if ecn != TcpEcn::NotEct {
                pkt.set_ecn(Ecn::from_tos(ecn as u8));
            }
            if self.flow != NO_FLOW {
                // The payload's length counts in the flow only (a sink's ACKs have none).
                let segment = pkt.bytes.get(IPV4_HEADER_LEN..).unwrap_or_default();
                let payload = TcpView::new(segment).map_or(0, |v| v.payload().len());
                if let Some(f) = ctx.flow_mut(self.flow) {
                    f.tx_packets += 1;
                    f.tx_bytes += payload as u64;
                    f.first_tx.get_or_insert(now);
                }
            }
            ctx.send(pkt);
            sent += 1;
        }
        while let Some(e) = self.conn.poll_event() {
            if ctx.tracing() {
                let detail = match e {
                    Event::StateChanged { from, to } => Some(format!("state={} from={}", to.name(), from.name())),
                    Event::Loss { kind, cwnd, ssthresh } => {
                        let how = if kind == LossKind::Timeout { "timeout" } else { "fast-retransmit" };
                        Some(format!("loss={how} cwnd={cwnd} ssthresh={ssthresh}"))
                    }
                    Event::EcnReduction { cwnd, ssthresh } => Some(format!("ecn-echo cwnd={cwnd} ssthresh={ssthresh}")),
                    Event::Reset => Some("reset".to_string()),
                    Event::TimedOut => Some("timed-out".to_string()),
                    _ => None,
                };
                if let Some(d) = detail {
                    ctx.trace("tcp", &self.name, &d);
                }
            }
            events.push(e);
        }
        self.timer.update(ctx, self.conn.poll_timeout());
        sent
    }

    /// The connection's ECN counters (RFC 3168), when `ecn` is configured: whether it was
    /// negotiated, CE marks received, ECE and CWR sent, window reductions on ECE.
    pub fn report_ecn(&self, out: &mut Scalars) {
        if !self.conn.config().ecn {
            return;
        }
        let (n, st) = (&self.name, self.conn.stats());
        out.push("tcp", n, "ecn_negotiated", f64::from(u8::from(self.conn.ecn_negotiated())), "bool");
        out.push("tcp", n, "ecn_ce_received", st.ce_received as f64, "packets");
        out.push("tcp", n, "ecn_ece_sent", st.ece_sent as f64, "packets");
        out.push("tcp", n, "ecn_cwr_sent", st.cwr_sent as f64, "packets");
        out.push("tcp", n, "ecn_reductions", st.ecn_reductions as f64, "events");
    }

    /// Window, threshold and RTT samples (the flow's time series).
    pub fn sample(&self, now: Instant, out: &mut TimeSeries) {
        let c = &self.conn;
        out.push(now, "tcp", &self.name, "cwnd", "bytes", c.cwnd() as f64);
        let ssthresh = c.ssthresh();
        out.push(
            now,
            "tcp",
            &self.name,
            "ssthresh",
            "bytes",
            if ssthresh == u64::MAX { f64::NAN } else { ssthresh as f64 },
        );
        out.push(now, "tcp", &self.name, "srtt", "s", c.srtt().map_or(f64::NAN, |d| d.as_secs_f64()));
        out.push(now, "tcp", &self.name, "rto", "s", c.rto().as_secs_f64());
        out.push(now, "tcp", &self.name, "in_flight", "bytes", c.in_flight() as f64);
    }
}
