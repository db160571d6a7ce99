//! The PI controller (Hollot, Misra, Towsley & Gong, "Analysis and Design of Controllers for
//! AQM Routers Supporting TCP Flows", IEEE Trans. Automatic Control 47(6), 2002).
//!
//! The drop probability is the output of a discrete proportional-integral controller on the
//! queue length, sampled `w` times a second:
//!
//! ```text
//! p(k) = a (q(k) - q_ref) - b (q(k-1) - q_ref) + p(k-1),   clamped to [0, 1]
//! ```
//!
//! so that in steady state the queue sits at `q_ref`. Every arriving packet is dropped (or with
//! `ecn` marked when ECN-capable) with probability `p`, scaled by the packet's size over
//! `mean_pktsize` in byte mode (where the queue is counted in mean-size packets). A packet that
//! does not fit under the hard limit is dropped (`queue_full`).
//!
//! The samples are ns-2's `PIQueue::calculate_p` (ns-2.35 `queue/pi.cc`), computed lazily at
//! the next arrival or departure instead of by a timer: between two of those the queue does not
//! change, so the samples are the same. Defaults are ns-2's (`tcl/lib/ns-default.tcl`,
//! `Queue/PI`): `a` = 1.822e-5, `b` = 1.816e-5 (the paper's design for its example network),
//! `w` = 170 Hz, `q_ref` = 50 packets, `mean_pktsize` 500, packet mode, no ECN; the hard limit
//! is the project's 100 packets (ns-2's 50 would leave no room above the reference).

use super::droptail::OVERFLOW;
use super::fifo::{byte_scaled, Fifo, Tally, Ticker};
use super::red::tally_stats;
use super::{in_range, positive, Dequeued, Dropped, Enqueued, ParamError, QueueContext, QueueDisc, QueueLimit};
use super::{QueueReason, QueueStat};
use crate::rng::SimRng;
use crate::time::{Duration, Instant};
use crate::wire::Packet;

/// A packet dropped with the controller's probability.
pub const EARLY: QueueReason = QueueReason("pi_early");
/// An ECN-capable packet marked instead.
pub const MARK: QueueReason = QueueReason("pi_mark");

/// The PI controller's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct PiConfig {
    /// Hard limit of the buffer. Default 100 packets.
    pub limit: QueueLimit,
    /// Coefficient of the current error. Default 1.822e-5 (ns-2 `a_`).
    pub a: f64,
    /// Coefficient of the previous error. Default 1.816e-5 (ns-2 `b_`).
    pub b: f64,
    /// Sampling frequency in Hz. Default 170 (ns-2 `w_`).
    pub w: f64,
    /// Reference queue length in packets (of `mean_pktsize` bytes in byte mode). Default 50
    /// (ns-2 `qref_`).
    pub q_ref: f64,
    /// Mean packet size in bytes (byte mode). Default 500 (ns-2 `mean_pktsize_`).
    pub mean_pktsize: u32,
    /// Byte mode: queue in bytes, probability scaled by size. Default false (ns-2 `bytes_`,
    /// `queue_in_bytes_`).
    pub bytes: bool,
    /// Mark ECN-capable packets instead of dropping them. Default false (ns-2 `setbit_`).
    pub ecn: bool,
}

impl Default for PiConfig {
    fn default() -> Self {
        PiConfig {
            limit: QueueLimit::Packets(100),
            a: 1.822e-5,
            b: 1.816e-5,
            w: 170.0,
            q_ref: 50.0,
            mean_pktsize: 500,
            bytes: false,
            ecn: false,
        }
    }
}

impl PiConfig {
    /// Check the parameters.
    pub fn check(&self) -> Result<(), ParamError> {
        in_range("a", self.a, 0.0..=1.0)?;
        in_range("b", self.b, 0.0..=1.0)?;
        positive("w", self.w)?;
        in_range("w", self.w, 0.0..=1e9)?;
        in_range("q_ref", self.q_ref, 0.0..=f64::MAX)?;
        if self.mean_pktsize == 0 {
            return Err(ParamError::new("mean_pktsize", "0 must be more than zero"));
        }
        Ok(())
    }
}

/// A queue managed by the PI controller.
pub struct Pi {
    cfg: PiConfig,
    fifo: Fifo,
    rng: SimRng,
    ticker: Ticker,
    /// The drop probability.
    prob: f64,
    /// The queue length at the previous sample (in the controller's unit).
    q_old: f64,
    tally: Tally,
    /// Sum of the sampled queue lengths and their number, for the mean.
    q_sum: f64,
    samples: u64,
}

impl Pi {
    /// Name in the registry.
    pub const KIND: &'static str = "pi";

    /// An empty PI queue. The configuration must pass [`PiConfig::check`].
    pub fn new(cfg: &PiConfig, ctx: QueueContext) -> Self {
        Pi {
            ticker: Ticker::new(Duration::from_secs_f64(1.0 / cfg.w)),
            cfg: cfg.clone(),
            fifo: Fifo::default(),
            rng: ctx.rng,
            prob: 0.0,
            q_old: 0.0,
            tally: Tally::default(),
            q_sum: 0.0,
            samples: 0,
        }
    }

    /// The drop probability.
    pub fn probability(&self) -> f64 {
        self.prob
    }

    /// Run the samples due by `now`.
    #[inline]
    fn catch_up(&mut self, now: Instant) {
        let n = self.ticker.due(now);
        if n > 0 {
            self.sample(n);
        }
    }

    /// `n` samples of an unchanged queue. After the first, each adds the same
    /// `(a - b) (q - q_ref)`, so the clamped sum is the clamped result of stepping.
    fn sample(&mut self, n: u64) {
        let unit = if self.cfg.bytes { f64::from(self.cfg.mean_pktsize) } else { 1.0 };
        let q = self.fifo.occupancy(self.cfg.bytes) / unit;
        let (a, b, q_ref) = (self.cfg.a, self.cfg.b, self.cfg.q_ref);
        let mut p = a * (q - q_ref) - b * (self.q_old - q_ref) + self.prob;
        p = p.clamp(0.0, 1.0);
        if n > 1 {
            p = (p + (n - 1) as f64 * (a - b) * (q - q_ref)).clamp(0.0, 1.0);
        }
        self.prob = p;
        self.q_old = q;
        self.q_sum += q * n as f64;
        self.samples += n;
    }
}

impl QueueDisc for Pi {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn enqueue(&mut self, pkt: Packet, now: Instant, _dropped: &mut Dropped) -> Enqueued {
        self.catch_up(now);
        self.tally.arrivals += 1;
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
        let unit = if self.cfg.bytes { "bytes" } else { "packets" };
        let scale = if self.cfg.bytes { f64::from(self.cfg.mean_pktsize) } else { 1.0 };
        let mean = if self.samples > 0 { self.q_sum / self.samples as f64 * scale } else { 0.0 };
        let mut out = vec![
            QueueStat { name: "pi_probability", value: self.prob, unit: "1" },
            QueueStat { name: "pi_sampled_queue_mean", value: mean, unit },
            QueueStat { name: "pi_samples", value: self.samples as f64, unit: "1" },
        ];
        out.extend(tally_stats("pi", &self.tally));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::test_support::{context, udp_packet};
    use crate::wire::Ecn;

    fn pkt() -> Packet {
        udp_packet(500, 0, 0, Ecn::Ect0)
    }

    fn pi(cfg: PiConfig) -> Pi {
        Pi::new(&cfg, context(1_000_000, Duration::ZERO, 2, "pi"))
    }

    #[test]
    fn samples_follow_the_difference_equation() {
        let mut q = pi(PiConfig { a: 0.01, b: 0.008, ..PiConfig::default() });
        let mut dropped = Dropped::new();
        for _ in 0..80 {
            q.fifo.push(pkt());
        }
        // First sample: a (80 - 50) - b (0 - 50) + 0 = 0.3 + 0.4 = 0.7.
        q.catch_up(Instant::ZERO + Duration::from_secs_f64(1.0 / 170.0));
        assert!((q.probability() - 0.7).abs() < 1e-12, "{}", q.probability());
        // Next: + (a - b)(80 - 50) = 0.06 per sample; three more: 0.88.
        q.catch_up(Instant::ZERO + Duration::from_secs_f64(4.0 / 170.0));
        assert!((q.probability() - 0.88).abs() < 1e-9, "{}", q.probability());
        // Queue below the reference: the probability falls, not below zero.
        while q.fifo.len() > 10 {
            q.dequeue(Instant::ZERO + Duration::from_secs_f64(4.5 / 170.0), &mut dropped);
        }
        q.catch_up(Instant::ZERO + Duration::from_secs(100));
        assert_eq!(q.probability(), 0.0);
    }

    #[test]
    fn lazy_samples_match_stepping() {
        let cfg = PiConfig { a: 0.01, b: 0.008, ..PiConfig::default() };
        let (mut lazy, mut steps) = (pi(cfg.clone()), pi(cfg));
        for q in [&mut lazy, &mut steps] {
            for _ in 0..70 {
                q.fifo.push(pkt());
            }
            q.prob = 0.1;
            q.q_old = 60.0;
        }
        lazy.sample(7);
        for _ in 0..7 {
            steps.sample(1);
        }
        assert!((lazy.probability() - steps.probability()).abs() < 1e-12);
        // Clamped at 1 either way.
        lazy.sample(1000);
        for _ in 0..1000 {
            steps.sample(1);
        }
        assert_eq!((lazy.probability(), steps.probability()), (1.0, 1.0));
    }

    #[test]
    fn marks_capable_packets_when_ecn_is_on() {
        let mut q = pi(PiConfig { ecn: true, ..PiConfig::default() });
        q.prob = 1.0;
        let mut dropped = Dropped::new();
        assert!(matches!(q.enqueue(pkt(), Instant::ZERO, &mut dropped), Enqueued::Queued { marked: Some(MARK) }));
        let mut plain = pkt();
        plain.set_ecn(Ecn::NotEct).unwrap();
        assert!(matches!(q.enqueue(plain, Instant::ZERO, &mut dropped), Enqueued::Dropped(_, EARLY)));
    }

    #[test]
    fn check_names_the_bad_key() {
        assert_eq!(PiConfig { w: 0.0, ..PiConfig::default() }.check().unwrap_err().key, "w");
        assert_eq!(PiConfig { a: -1.0, ..PiConfig::default() }.check().unwrap_err().key, "a");
    }
}
