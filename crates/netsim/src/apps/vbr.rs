//! UDP variable-bit-rate source, after the ns-2 VBR generator that paper 003 loads (its
//! Table 1: `rate_` 448 kbit/s, `minSize_` 100 B, `maxSize_` 200 B, `random_` 0).
//!
//! Each datagram's payload size is drawn uniformly from `[min_size, max_size]`; the gap to the
//! next datagram is that size at `rate` (so the long-run rate is `rate`), multiplied by a
//! uniform factor in [0.5, 1.5) when `random` is set (as ns-2's `random_` flag dithers
//! departures). Table 1's `intervaltime_` has no documented meaning in the generator's
//! description and is not modelled. Payloads start with the sequence number and send time,
//! like the CBR source's, so [`super::udp::UdpSink`] measures their delay.

use std::net::Ipv4Addr;

use rand::Rng;

use crate::agent::{Agent, Ctx};
use crate::apps::udp::CBR_HEADER_LEN;
use crate::rng::SimRng;
use crate::time::{Duration, Instant};
use crate::wire::{udp_datagram, PROTO_UDP};

/// Parameters of a VBR source.
#[derive(Clone, Debug, PartialEq)]
pub struct VbrConfig {
    /// Source address.
    pub src: Ipv4Addr,
    /// Source port.
    pub src_port: u16,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// Destination port.
    pub dst_port: u16,
    /// Mean application rate in bit/s.
    pub rate_bps: u64,
    /// Smallest payload in bytes (at least [`CBR_HEADER_LEN`]).
    pub min_size: usize,
    /// Largest payload in bytes.
    pub max_size: usize,
    /// Dither each gap by a uniform factor in [0.5, 1.5).
    pub random: bool,
    /// First send.
    pub start: Instant,
    /// No sends at or after this instant.
    pub stop: Instant,
}

/// A UDP VBR source.
pub struct UdpVbr {
    config: VbrConfig,
    flow: u32,
    rng: SimRng,
    sent: u64,
}

impl UdpVbr {
    /// A source accounted to `flow`, drawing from `rng`.
    pub fn new(config: VbrConfig, flow: u32, rng: SimRng) -> Self {
        UdpVbr { config, flow, rng, sent: 0 }
    }
}

impl Agent for UdpVbr {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        if self.config.start < self.config.stop {
            let _ = ctx.timer_at(self.config.start.max(ctx.now()), 0);
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, _token: u64) {
        let now = ctx.now();
        let c = &self.config;
        let size = self.rng.random_range(c.min_size..=c.max_size.max(c.min_size));
        send_stamped(ctx, c.src, c.dst, c.src_port, c.dst_port, size, self.sent, self.flow);
        self.sent += 1;
        let mut gap = Duration::transmission(size, c.rate_bps).as_nanos() as f64;
        if c.random {
            gap *= self.rng.random_range(0.5..1.5);
        }
        let next = now.saturating_add(Duration(gap.max(1.0) as u64));
        if next < self.config.stop {
            let _ = ctx.timer_at(next, 0);
        }
    }
}

/// Send one UDP datagram whose payload of `size` bytes starts with `seq` and the send time,
/// and account it to `flow`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn send_stamped(
    ctx: &mut Ctx<'_>,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    sport: u16,
    dport: u16,
    size: usize,
    seq: u64,
    flow: u32,
) {
    let now = ctx.now();
    let mut payload = vec![0u8; size.max(CBR_HEADER_LEN)];
    payload[..8].copy_from_slice(&seq.to_be_bytes());
    payload[8..16].copy_from_slice(&now.as_nanos().to_be_bytes());
    let seg = udp_datagram(src, dst, sport, dport, &payload);
    let pkt = ctx.packet(src, dst, PROTO_UDP, &seg, flow);
    if let Some(f) = ctx.flow_mut(flow) {
        f.tx_packets += 1;
        f.tx_bytes += payload.len() as u64;
        f.first_tx.get_or_insert(now);
    }
    ctx.send(pkt);
}
