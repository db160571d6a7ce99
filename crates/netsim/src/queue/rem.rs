//! Random Exponential Marking (Athuraliya, Li, Low & Yin, "REM: Active Queue Management",
//! IEEE Network 15(3), 2001).
//!
//! A link price `p` is updated every `interval` from the backlog mismatch and the rate
//! mismatch,
//!
//! ```text
//! p <- max(0, p + gamma (alpha (b - b_ref) + x - c))
//! ```
//!
//! with `b` the backlog at the update, `x` the input in the last interval (low-pass filtered
//! with weight `inw`) and `c` what the link can send in an interval, all in packets of
//! `mean_pktsize` bytes in byte mode and in packets otherwise. Every arriving packet is
//! dropped, or with `ecn` marked when ECN-capable, with probability `1 - phi^(-p)`, scaled by
//! the packet's size over `mean_pktsize` in byte mode. A packet that does not fit under the hard
//! limit is dropped (`queue_full`).
//!
//! The updates are those of ns-2's `REMQueue::run_updaterule` (ns-2.35 `queue/rem.cc`, with
//! `alpha` fixed at 0.1 there), computed lazily at the next arrival or departure rather than by
//! a timer: nothing reaches the queue in between, so the result is the same. Defaults are
//! ns-2's (`tcl/lib/ns-default.tcl`, `Queue/REM`): `gamma` 0.001, `phi` 1.001, `b_ref` 20
//! packets, `interval` 2 ms, `inw` 1, `mean_pktsize` 1000, packet mode, no ECN; the hard limit
//! is the project's 100 packets. Two differences from ns-2: the decision (drop or mark) is
//! taken at enqueue for every packet (ns-2 marks at dequeue in ECN mode and leaves Not-ECT
//! packets alone there; RFC 3168 §5 asks that they be dropped), and the hard limit is drop-tail's
//! (ns-2 drops when the queue reaches its limit after the arrival, one packet short).

use super::droptail::OVERFLOW;
use super::fifo::{byte_scaled, Fifo, Tally, Ticker};
use super::red::tally_stats;
use super::{in_range, positive, Dequeued, Dropped, Enqueued, ParamError, QueueContext, QueueDisc, QueueLimit};
use super::{QueueReason, QueueStat};
use crate::rng::SimRng;
use crate::time::{Duration, Instant};
use crate::wire::Packet;

/// A packet dropped with the marking probability `1 - phi^(-price)`.
pub const EARLY: QueueReason = QueueReason("rem_early");
/// An ECN-capable packet marked instead.
pub const MARK: QueueReason = QueueReason("rem_mark");

/// REM's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct RemConfig {
    /// Hard limit of the buffer. Default 100 packets.
    pub limit: QueueLimit,
    /// Step size of the price update. Default 0.001 (ns-2 `gamma_`).
    pub gamma: f64,
    /// Base of the marking function, more than 1. Default 1.001 (ns-2 `phi_`).
    pub phi: f64,
    /// Weight of the backlog mismatch. Default 0.1 (fixed in ns-2's update rule).
    pub alpha: f64,
    /// Target backlog in packets. Default 20 (ns-2 `pbo_`).
    pub b_ref: f64,
    /// Time between price updates. Default 2 ms (ns-2 `pupdtime_`).
    pub interval: Duration,
    /// Weight of the newest interval in the filtered input rate. Default 1 (ns-2 `inw_`).
    pub inw: f64,
    /// Mean packet size in bytes, the unit of backlog, input and capacity in byte mode and of
    /// the capacity always. Default 1000 (ns-2 `mean_pktsize_`).
    pub mean_pktsize: u32,
    /// Byte mode: count bytes, scale the probability by size. Default false (ns-2 `qib_`).
    pub bytes: bool,
    /// Mark ECN-capable packets instead of dropping them. Default false (ns-2 `markpkts_`).
    pub ecn: bool,
}

impl Default for RemConfig {
    fn default() -> Self {
        RemConfig {
            limit: QueueLimit::Packets(100),
            gamma: 0.001,
            phi: 1.001,
            alpha: 0.1,
            b_ref: 20.0,
            interval: Duration::from_millis(2),
            inw: 1.0,
            mean_pktsize: 1000,
            bytes: false,
            ecn: false,
        }
    }
}

impl RemConfig {
    /// Check the parameters.
    pub fn check(&self) -> Result<(), ParamError> {
        positive("gamma", self.gamma)?;
        if !(self.phi > 1.0 && self.phi.is_finite()) {
            return Err(ParamError::new("phi", format!("{} must be more than 1", self.phi)));
        }
        in_range("alpha", self.alpha, 0.0..=f64::MAX)?;
        in_range("b_ref", self.b_ref, 0.0..=f64::MAX)?;
        positive("interval", self.interval.as_secs_f64())?;
        in_range("inw", self.inw, 0.0..=1.0)?;
        positive("inw", self.inw)?;
        if self.mean_pktsize == 0 {
            return Err(ParamError::new("mean_pktsize", "0 must be more than zero"));
        }
        Ok(())
    }
}

/// A REM queue.
pub struct Rem {
    cfg: RemConfig,
    fifo: Fifo,
    rng: SimRng,
    ticker: Ticker,
    /// Mean-size packets the link sends per update interval (`c`).
    capacity: f64,
    /// The link price.
    price: f64,
    /// The marking probability, `1 - phi^(-price)`.
    prob: f64,
    /// Input in the current interval (bytes or packets).
    input: f64,
    /// Filtered input per interval, in packets (of the mean size in byte mode).
    input_avg: f64,
    tally: Tally,
}

impl Rem {
    /// Name in the registry.
    pub const KIND: &'static str = "rem";

    /// An empty REM queue. The configuration must pass [`RemConfig::check`] (scenarios check
    /// it first).
    pub fn new(cfg: &RemConfig, ctx: QueueContext) -> Self {
        let ptc = ctx.rate_bps as f64 / (8.0 * f64::from(cfg.mean_pktsize.max(1)));
        Rem {
            capacity: cfg.interval.as_secs_f64() * ptc,
            ticker: Ticker::new(cfg.interval),
            cfg: cfg.clone(),
            fifo: Fifo::default(),
            rng: ctx.rng,
            price: 0.0,
            prob: 0.0,
            input: 0.0,
            input_avg: 0.0,
            tally: Tally::default(),
        }
    }

    /// The link price.
    pub fn price(&self) -> f64 {
        self.price
    }

    /// The marking probability.
    pub fn probability(&self) -> f64 {
        self.prob
    }

    /// Run the price updates due by `now`.
    #[inline]
    fn catch_up(&mut self, now: Instant) {
        let n = self.ticker.due(now);
        if n > 0 {
            self.update(n);
        }
    }

    /// `n` price updates (ns-2 `REMQueue::run_updaterule`); the queue did not change between
    /// them and nothing arrived after the first.
    fn update(&mut self, n: u64) {
        let unit = if self.cfg.bytes { f64::from(self.cfg.mean_pktsize) } else { 1.0 };
        let backlog = self.fifo.occupancy(self.cfg.bytes) / unit;
        let keep = 1.0 - self.cfg.inw;
        // Price change per update apart from the input: alpha (b - b_ref) - c.
        let rest = self.cfg.alpha * (backlog - self.cfg.b_ref) - self.capacity;
        // The first update sees this interval's input.
        self.input_avg = self.input_avg * keep + self.cfg.inw * self.input / unit;
        self.input = 0.0;
        self.price = (self.price + self.cfg.gamma * (self.input_avg + rest)).max(0.0);
        // The others see no input: the filtered input decays geometrically, so the changes
        // decrease; the price, once it reaches zero on the way down, stays there. Summing them
        // and clamping once gives what clamping at every step gives.
        let k = n - 1;
        if k > 0 {
            let decayed = keep.powf(k as f64);
            let inputs = if keep == 0.0 { 0.0 } else { self.input_avg * keep * (1.0 - decayed) / (1.0 - keep) };
            self.price = (self.price + self.cfg.gamma * (inputs + k as f64 * rest)).max(0.0);
            self.input_avg *= decayed;
        }
        self.prob = 1.0 - self.cfg.phi.powf(-self.price);
    }
}

impl QueueDisc for Rem {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn enqueue(&mut self, pkt: Packet, now: Instant, _dropped: &mut Dropped) -> Enqueued {
        self.catch_up(now);
        self.tally.arrivals += 1;
        // ns-2 counts every arrival as input, dropped or not.
        self.input += if self.cfg.bytes { pkt.len() as f64 } else { 1.0 };
        if self.fifo.full_for(self.cfg.limit, &pkt) {
            self.tally.overflow_drops += 1;
            return Enqueued::Dropped(pkt, OVERFLOW);
        }
        let p = byte_scaled(self.prob, self.cfg.bytes, pkt.len(), self.cfg.mean_pktsize);
        self.fifo.admit(pkt, p, &mut self.rng, self.cfg.ecn, &mut self.tally, (MARK, EARLY))
    }

    fn dequeue(&mut self, now: Instant, _dropped: &mut Dropped) -> Option<Dequeued> {
        self.catch_up(now);
        self.fifo.pop().map(Dequeued::plain)
    }

    fifo_occupancy!(fifo);

    fn stats(&self) -> Vec<QueueStat> {
        let mut out = vec![
            QueueStat { name: "rem_price", value: self.price, unit: "1" },
            QueueStat { name: "rem_probability", value: self.prob, unit: "1" },
        ];
        out.extend(tally_stats("rem", &self.tally));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::test_support::{context, udp_packet};
    use crate::wire::Ecn;

    fn pkt(ecn: Ecn) -> Packet {
        udp_packet(1000, 0, 0, ecn)
    }

    /// 4 Mbit/s with 1000-byte mean packets: 500 packets/s, c = 1 packet per 2 ms interval.
    fn rem(cfg: RemConfig) -> Rem {
        Rem::new(&cfg, context(4_000_000, Duration::ZERO, 9, "rem"))
    }

    fn at_us(us: u64) -> Instant {
        Instant::ZERO + Duration::from_micros(us)
    }

    #[test]
    fn price_follows_the_update_rule_under_overload() {
        let mut q = rem(RemConfig { limit: QueueLimit::Packets(10_000), ..RemConfig::default() });
        assert!((q.capacity - 1.0).abs() < 1e-12);
        let mut dropped = Dropped::new();
        // Three arrivals per 2 ms interval, nothing leaves: input 3, capacity 1, backlog grows.
        let mut expected_price = 0.0f64;
        for i in 0..50u64 {
            for j in 0..3u64 {
                q.enqueue(pkt(Ecn::NotEct), at_us(i * 2000 + 100 + j), &mut dropped);
            }
            // The update at the end of the interval, seen at the next arrival.
            q.catch_up(at_us((i + 1) * 2000));
            let backlog = q.fifo.len() as f64;
            expected_price = (expected_price + 0.001 * (3.0 + 0.1 * (backlog - 20.0) - 1.0)).max(0.0);
            assert!((q.price() - expected_price).abs() < 1e-9, "interval {i}: {} vs {expected_price}", q.price());
        }
        assert!(q.price() > 0.0);
        assert!((q.probability() - (1.0 - 1.001f64.powf(-q.price()))).abs() < 1e-15);
    }

    #[test]
    fn idle_link_brings_the_price_down_by_the_rule() {
        let mut q = rem(RemConfig::default());
        q.price = 0.05;
        let mut dropped = Dropped::new();
        // Empty queue, no input for 10 intervals: each takes gamma (0.1 (0 - 20) - 1) = -0.003.
        q.catch_up(at_us(10 * 2000));
        assert!((q.price() - (0.05 - 10.0 * 0.003)).abs() < 1e-12, "{}", q.price());
        // Long enough and it stops at zero.
        q.dequeue(at_us(1_000_000), &mut dropped);
        assert_eq!(q.price(), 0.0);
        assert_eq!(q.probability(), 0.0);
    }

    #[test]
    fn lazy_updates_match_step_by_step_updates_with_filtered_input() {
        let cfg = RemConfig { inw: 0.3, ..RemConfig::default() };
        let (mut lazy, mut steps) = (rem(cfg.clone()), rem(cfg));
        for q in [&mut lazy, &mut steps] {
            q.price = 0.02;
            q.input_avg = 40.0;
            q.input = 7.0;
            for _ in 0..30 {
                q.fifo.push(pkt(Ecn::NotEct));
            }
        }
        lazy.update(25);
        for _ in 0..25 {
            steps.update(1);
        }
        assert!((lazy.price() - steps.price()).abs() < 1e-12, "{} vs {}", lazy.price(), steps.price());
        assert!((lazy.input_avg - steps.input_avg).abs() < 1e-9);
    }

    #[test]
    fn drops_or_marks_with_the_probability() {
        let n = 100_000;
        let mut q = rem(RemConfig { ecn: true, ..RemConfig::default() });
        let mut dropped = Dropped::new();
        q.price = 693.5; // 1 - 1.001^-693.5 = 0.5
        q.prob = 1.0 - q.cfg.phi.powf(-q.price);
        let (mut marked, mut early) = (0, 0);
        for i in 0..n {
            let ecn = if i % 2 == 0 { Ecn::Ect0 } else { Ecn::NotEct };
            match q.enqueue(pkt(ecn), Instant::ZERO, &mut dropped) {
                Enqueued::Queued { marked: Some(MARK) } => marked += 1,
                Enqueued::Dropped(_, EARLY) => early += 1,
                _ => {}
            }
            q.fifo.pop();
        }
        // Half the packets are capable: each kind is hit with probability 0.5.
        for count in [marked, early] {
            let rate = count as f64 / (n / 2) as f64;
            assert!((rate - 0.5).abs() < 0.01, "{marked} {early}");
        }
    }

    #[test]
    fn check_names_the_bad_key() {
        assert_eq!(RemConfig { phi: 1.0, ..RemConfig::default() }.check().unwrap_err().key, "phi");
        assert_eq!(RemConfig { inw: 0.0, ..RemConfig::default() }.check().unwrap_err().key, "inw");
    }
}
