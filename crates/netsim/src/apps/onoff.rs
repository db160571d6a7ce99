//! Exponential on/off UDP source (ns-2's `Application/Traffic/Exponential`).
//!
//! The source alternates between ON periods, during which it sends `packet_size`-byte
//! datagrams at `rate`, and silent OFF periods. Both period lengths are exponentially
//! distributed with means `on_mean` and `off_mean`; an ON period sends at least one datagram.
//! The long-run rate is `rate * on_mean / (on_mean + off_mean)`. Payloads carry the sequence
//! number and send time for the sink's delay measurement.

use std::net::Ipv4Addr;

use rand::Rng;

use crate::agent::{Agent, Ctx};
use crate::apps::vbr::send_stamped;
use crate::rng::SimRng;
use crate::time::{Duration, Instant};

/// Parameters of an on/off source.
#[derive(Clone, Debug, PartialEq)]
pub struct OnOffConfig {
    /// Source address.
    pub src: Ipv4Addr,
    /// Source port.
    pub src_port: u16,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// Destination port.
    pub dst_port: u16,
    /// Sending rate during ON periods, bit/s of payload.
    pub rate_bps: u64,
    /// Payload bytes per datagram.
    pub packet_size: usize,
    /// Mean ON period.
    pub on_mean: Duration,
    /// Mean OFF period.
    pub off_mean: Duration,
    /// First ON period begins.
    pub start: Instant,
    /// No sends at or after this instant.
    pub stop: Instant,
}

/// An exponential on/off source.
pub struct UdpOnOff {
    config: OnOffConfig,
    flow: u32,
    rng: SimRng,
    sent: u64,
    /// End of the current ON period.
    on_until: Instant,
}

impl UdpOnOff {
    /// A source accounted to `flow`, drawing from `rng`.
    pub fn new(config: OnOffConfig, flow: u32, rng: SimRng) -> Self {
        UdpOnOff { config, flow, rng, sent: 0, on_until: Instant::ZERO }
    }

    fn exp(&mut self, mean: Duration) -> Duration {
        // Inverse transform: -mean * ln(U), U in (0, 1].
        let u: f64 = 1.0 - self.rng.random::<f64>();
        Duration::from_secs_f64(-mean.as_secs_f64() * u.ln())
    }
}

impl Agent for UdpOnOff {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        if self.config.start < self.config.stop {
            let at = self.config.start.max(ctx.now());
            self.on_until = at.saturating_add(self.exp(self.config.on_mean));
            let _ = ctx.timer_at(at, 0);
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, _token: u64) {
        let now = ctx.now();
        let c = self.config.clone();
        send_stamped(ctx, c.src, c.dst, c.src_port, c.dst_port, c.packet_size, self.sent, self.flow);
        self.sent += 1;
        let mut next = now + Duration::transmission(c.packet_size, c.rate_bps);
        if next >= self.on_until {
            // The ON period is over: stay silent, then begin the next one.
            next = next.max(self.on_until).saturating_add(self.exp(c.off_mean));
            self.on_until = next.saturating_add(self.exp(c.on_mean));
        }
        if next < c.stop {
            let _ = ctx.timer_at(next, 0);
        }
    }
}
