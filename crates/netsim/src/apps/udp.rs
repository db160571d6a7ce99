//! UDP constant-bit-rate source and a measuring sink.
//!
//! The source sends `payload` application bytes per datagram at `rate` (application bytes per
//! second, as ns-2's CBR counts them) from `start` until `stop`. Send instants are computed
//! from the packet index (`start + k * payload * 8 / rate`, in integer nanoseconds), so the rate
//! is exact over any horizon with no accumulated rounding. Each payload begins with the
//! sequence number and the send time (both big-endian u64), which the sink reads back to measure
//! one-way delay; the rest is zeros.

use std::net::Ipv4Addr;

use crate::agent::{Agent, Ctx};
use crate::recorder::Scalars;
use crate::time::{Duration, Instant};
use crate::wire::{write_udp_header, UdpView, IPV4_HEADER_LEN, PROTO_UDP, UDP_HEADER_LEN};

/// Bytes at the start of each CBR payload: sequence number and send time.
pub const CBR_HEADER_LEN: usize = 16;

/// Parameters of a CBR source.
#[derive(Clone, Debug, PartialEq)]
pub struct CbrConfig {
    /// Source address (selects the interface on a multihomed host).
    pub src: Ipv4Addr,
    /// Source port.
    pub src_port: u16,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// Destination port.
    pub dst_port: u16,
    /// Application bytes per second.
    pub rate_bps: u64,
    /// Application bytes per datagram (at least [`CBR_HEADER_LEN`]).
    pub payload: usize,
    /// First send.
    pub start: Instant,
    /// No sends at or after this instant.
    pub stop: Instant,
}

/// A UDP constant-bit-rate source.
pub struct UdpCbr {
    config: CbrConfig,
    flow: u32,
    sent: u64,
}

impl UdpCbr {
    /// A source whose packets are accounted to `flow`.
    pub fn new(config: CbrConfig, flow: u32) -> Self {
        UdpCbr { config, flow, sent: 0 }
    }

    fn send_time(&self, k: u64) -> Instant {
        let bits = self.config.payload as u128 * 8;
        let offset = (k as u128 * bits * 1_000_000_000) / self.config.rate_bps as u128;
        self.config.start.saturating_add(Duration(offset.min(u64::MAX as u128) as u64))
    }
}

impl Agent for UdpCbr {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        let first = self.send_time(0);
        if first < self.config.stop {
            ctx.timer_at(first.max(ctx.now()), 0).expect("start time is not in the past");
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, _token: u64) {
        let now = ctx.now();
        let c = &self.config;
        // Built in place: the IPv4 header goes in the room left in front of the datagram.
        let mut buf = vec![0u8; IPV4_HEADER_LEN + UDP_HEADER_LEN + c.payload];
        let seg = &mut buf[IPV4_HEADER_LEN..];
        let payload = &mut seg[UDP_HEADER_LEN..];
        payload[..8].copy_from_slice(&self.sent.to_be_bytes());
        payload[8..16].copy_from_slice(&now.as_nanos().to_be_bytes());
        write_udp_header(seg, c.src, c.dst, c.src_port, c.dst_port);
        let pkt = ctx.packet_in_headroom(c.src, c.dst, PROTO_UDP, buf, IPV4_HEADER_LEN, self.flow);
        if let Some(f) = ctx.flow_mut(self.flow) {
            f.tx_packets += 1;
            f.tx_bytes += c.payload as u64;
            f.first_tx.get_or_insert(now);
        }
        ctx.send(pkt);
        self.sent += 1;
        let next = self.send_time(self.sent);
        if next < self.config.stop {
            ctx.timer_at(next, 0).expect("send times increase");
        }
    }
}

/// A UDP sink: counts what arrives and measures one-way delay per flow.
#[derive(Default)]
pub struct UdpSink {
    name: String,
    rx_packets: u64,
    rx_bytes: u64,
}

impl UdpSink {
    /// A sink reported under `name`.
    pub fn new(name: &str) -> Self {
        UdpSink { name: name.to_string(), ..Default::default() }
    }
}

impl Agent for UdpSink {
    fn on_packet(&mut self, ctx: &mut Ctx<'_>, pkt: crate::wire::Packet) {
        let Some(udp) = pkt.ip().and_then(|ip| UdpView::new(ip.payload())) else { return };
        let payload = udp.payload();
        self.rx_packets += 1;
        self.rx_bytes += payload.len() as u64;
        let now = ctx.now();
        let sent_at = payload.get(8..16).and_then(|b| b.try_into().ok()).map(|b| Instant(u64::from_be_bytes(b)));
        if let Some(f) = ctx.flow_mut(pkt.meta.flow) {
            f.rx_packets += 1;
            f.rx_bytes += payload.len() as u64;
            f.last_rx = Some(now);
            if let Some(t) = sent_at.filter(|&t| t <= now) {
                f.delay.record(now - t);
            }
        }
    }

    fn report(&self, _now: Instant, out: &mut Scalars) {
        out.push("app", &self.name, "rx_packets", self.rx_packets as f64, "packets");
        out.push("app", &self.name, "rx_bytes", self.rx_bytes as f64, "bytes");
    }
}
