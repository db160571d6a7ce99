//! PIE, Proportional Integral controller Enhanced (RFC 8033): arrivals are dropped early with
//! a probability that a PI controller updates every `t_update` from the queueing delay's
//! distance to its reference and its trend.
//!
//! What is implemented, in RFC 8033's terms:
//! - Random dropping at enqueue (§4.1), skipped while burst allowance remains, while the
//!   delay is below half the reference with a low probability, or with at most two packets
//!   (here: two MTUs of bytes, the RFC's `2 * MEAN_PKTSIZE`) queued.
//! - The drop probability calculation (§4.2) with its auto-tuning of `alpha` and `beta` by the
//!   range the probability is in (the increment divided by 2048, 512, 128, 32, 8 or 2 below
//!   0.0001 %, 0.001 %, 0.01 %, 0.1 %, 1 %, 10 %), the exponential decay by 2 % per update
//!   while the delay is zero, and bounds 0..1; the Cap Drop Adjustment (§5.5: above 10 %
//!   the probability rises by at most 2 % per update), on by default.
//! - Latency (§4.3): by default from the departure rate (Little's law: queued bytes over the
//!   measured dequeue rate, measured over cycles of `dq_threshold` bytes that start when at
//!   least that many are queued, §5.2; weight 1/4 on the newest cycle, the pseudocode's
//!   `dq_threshold / 2^16`); or from timestamps (the sojourn time of the last packet to leave,
//!   zero once the queue is empty, as Linux and ns-3 do), [`PieDelay::Timestamp`].
//! - Burst tolerance (§4.4): `max_burst` of allowance at start and again whenever the
//!   probability is zero and the delay (now and at the last update) below half the reference;
//!   it runs down by `t_update` per update.
//! - ECN (§5.1): with `ecn`, an ECN-capable packet picked for an early drop is marked instead
//!   while the probability is below `mark_ecnth` (10 %); above, it is dropped.
//! - De-randomization (§5.4), off by default: the probabilities of arrivals accumulate; none is
//!   dropped below 0.85, one always at 8.5.
//!
//! Not implemented: the active/inactive switch (§5.3; PIE is always active) and byte mode.
//!
//! The periodic update needs no event of its own: it runs at `t_update, 2 t_update, ...` from
//! time zero, and every call (enqueue or dequeue) first performs the updates due at or before
//! its instant. Between calls nothing it reads changes (queue length, departure rate, last
//! sojourn time), so the result is the same as a timer's; a long idle stretch, once the
//! probability and both delays are zero, is skipped in one step.

use rand::Rng;

use super::codel::TimedFifo;
use super::{Dequeued, Dropped, Enqueued, Passed, QueueDisc, QueueLimit, QueueReason, QueueStat};
use crate::rng::SimRng;
use crate::time::{Duration, Instant};
use crate::wire::Packet;

/// An arrival dropped early by PIE's random drop.
pub const EARLY: QueueReason = QueueReason("pie_early");
/// An ECN-capable arrival picked for an early drop and marked Congestion Experienced instead.
pub const MARK: QueueReason = QueueReason("pie_mark");

/// How PIE estimates the queueing delay (RFC 8033 §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PieDelay {
    /// Queued bytes over the measured departure rate (§4.3, §5.2): the RFC's design.
    DepartureRate,
    /// The sojourn time of the last packet to leave (§4.3's alternative, Linux's default).
    Timestamp,
}

/// PIE's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieConfig {
    /// Hard capacity; arrivals beyond it are dropped as [`super::droptail::OVERFLOW`] (default
    /// 1,000 packets, Linux's; the RFC sets none).
    pub limit: QueueLimit,
    /// Reference queueing delay `QDELAY_REF` (RFC 8033 §4.2: 15 ms).
    pub target: Duration,
    /// Interval of the probability update `T_UPDATE` (§4.2: 15 ms).
    pub t_update: Duration,
    /// Weight of the delay's distance to the reference, per second (§4.2: 0.125).
    pub alpha: f64,
    /// Weight of the delay's change since the last update, per second (§4.2: 1.25).
    pub beta: f64,
    /// Burst allowance `MAX_BURST` (§4.4: 150 ms).
    pub max_burst: Duration,
    /// Delay estimator (default [`PieDelay::DepartureRate`]).
    pub delay: PieDelay,
    /// Bytes per departure-rate measurement cycle (§5.2: 16 KiB).
    pub dq_threshold: usize,
    /// Mark ECN-capable packets instead of dropping them below `mark_ecnth` (§5.1; default off).
    pub ecn: bool,
    /// Probability above which even ECN-capable packets are dropped (§5.1: 10 %).
    pub mark_ecnth: f64,
    /// Cap the increase at 2 % per update above 10 % (§5.5: on).
    pub cap_drop_adjustment: bool,
    /// De-randomize drops (§5.4: off).
    pub derandomize: bool,
}

impl PieConfig {
    /// Check the parameters: durations, weights and the cycle size positive, `mark_ecnth` a
    /// probability.
    pub fn check(&self) -> Result<(), super::ParamError> {
        super::positive("target", self.target.as_secs_f64())?;
        super::positive("t_update", self.t_update.as_secs_f64())?;
        super::positive("alpha", self.alpha)?;
        super::positive("beta", self.beta)?;
        super::positive("dq_threshold", self.dq_threshold as f64)?;
        super::in_range("mark_ecnth", self.mark_ecnth, 0.0..=1.0)
    }
}

impl Default for PieConfig {
    fn default() -> Self {
        PieConfig {
            limit: QueueLimit::Packets(1000),
            target: Duration::from_millis(15),
            t_update: Duration::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Duration::from_millis(150),
            delay: PieDelay::DepartureRate,
            dq_threshold: 16 * 1024,
            ecn: false,
            mark_ecnth: 0.1,
            cap_drop_adjustment: true,
            derandomize: false,
        }
    }
}

/// Counters behind [`Pie`]'s statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct PieCounters {
    early: u64,
    marks: u64,
    forced: u64,
    updates: u64,
    prob_sum: f64,
    prob_max: f64,
    qdelay_sum_s: f64,
    released: u64,
    sojourn_ns: u128,
}

/// PIE on one FIFO.
#[derive(Debug)]
pub struct Pie {
    cfg: PieConfig,
    mtu: usize,
    rng: SimRng,
    fifo: TimedFifo,
    /// The drop probability.
    drop_prob: f64,
    /// Timestamp mode: the sojourn time of the last packet to leave (zero once empty).
    last_sojourn: Duration,
    /// The delay at the last update.
    qdelay_old: Duration,
    burst_allowance: Duration,
    /// De-randomization's accumulated probability.
    accu_prob: f64,
    next_update: Instant,
    /// Departure-rate measurement: in a cycle since `dq_start`, `dq_count` bytes so far.
    in_measurement: bool,
    dq_start: Instant,
    dq_count: usize,
    /// Length of the packet that left last.
    prev_len: usize,
    /// Average time to send `dq_threshold` bytes, in seconds (0: no measurement yet).
    avg_dq_time: f64,
    counters: PieCounters,
}

impl Pie {
    /// Name in the registry.
    pub const KIND: &'static str = "pie";

    /// An empty queue for a link direction whose largest packet is `mtu` bytes, drawing from
    /// `rng`.
    pub fn new(cfg: PieConfig, mtu: usize, rng: SimRng) -> Self {
        Pie {
            cfg,
            mtu,
            rng,
            fifo: TimedFifo::default(),
            drop_prob: 0.0,
            last_sojourn: Duration::ZERO,
            qdelay_old: Duration::ZERO,
            burst_allowance: cfg.max_burst,
            accu_prob: 0.0,
            next_update: Instant::ZERO.saturating_add(cfg.t_update.max(Duration::from_nanos(1))),
            in_measurement: false,
            dq_start: Instant::ZERO,
            dq_count: 0,
            prev_len: 0,
            avg_dq_time: 0.0,
            counters: PieCounters::default(),
        }
    }

    /// The drop probability now.
    pub fn drop_prob(&self) -> f64 {
        self.drop_prob
    }

    /// The current queueing delay estimate (§4.3).
    fn current_qdelay(&self) -> Duration {
        match self.cfg.delay {
            PieDelay::Timestamp => self.last_sojourn,
            PieDelay::DepartureRate if self.avg_dq_time > 0.0 => {
                Duration::from_secs_f64(self.fifo.bytes() as f64 * self.avg_dq_time / self.cfg.dq_threshold as f64)
            }
            PieDelay::DepartureRate => Duration::ZERO,
        }
    }

    /// Perform the probability updates due at or before `now`.
    #[inline]
    fn catch_up(&mut self, now: Instant) {
        while self.next_update <= now {
            if self.drop_prob == 0.0 && self.qdelay_old.is_zero() && self.current_qdelay().is_zero() {
                // Every further update until `now` leaves the probability and the delays at
                // zero and only runs the burst allowance down: do them at once.
                let step = self.cfg.t_update.as_nanos().max(1);
                let k = (now.as_nanos() - self.next_update.as_nanos()) / step + 1;
                self.burst_allowance = Duration(self.burst_allowance.as_nanos().saturating_sub(k.saturating_mul(step)));
                self.counters.updates += k;
                self.next_update = Instant(self.next_update.as_nanos().saturating_add(k.saturating_mul(step)));
                return;
            }
            self.update();
            self.next_update = self.next_update.saturating_add(self.cfg.t_update.max(Duration::from_nanos(1)));
        }
    }

    /// One update of the drop probability (RFC 8033 §4.2, §4.4, §5.5).
    fn update(&mut self) {
        let qdelay = self.current_qdelay();
        let (q, old, reference) = (qdelay.as_secs_f64(), self.qdelay_old.as_secs_f64(), self.cfg.target.as_secs_f64());
        let mut p = self.cfg.alpha * (q - reference) + self.cfg.beta * (q - old);
        // Auto-tuning: smaller steps while the probability is small (§4.2).
        let prob = self.drop_prob;
        p /= if prob < 0.000_001 {
            2048.0
        } else if prob < 0.000_01 {
            512.0
        } else if prob < 0.000_1 {
            128.0
        } else if prob < 0.001 {
            32.0
        } else if prob < 0.01 {
            8.0
        } else if prob < 0.1 {
            2.0
        } else {
            1.0
        };
        if self.cfg.cap_drop_adjustment && prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        let mut next = prob + p;
        if qdelay.is_zero() && self.qdelay_old.is_zero() {
            next *= 0.98; // the queue is idle: decay (§4.2)
        }
        self.drop_prob = next.clamp(0.0, 1.0);
        self.qdelay_old = qdelay;
        self.burst_allowance = self.burst_allowance.saturating_sub_dur(self.cfg.t_update);
        let c = &mut self.counters;
        c.updates += 1;
        c.prob_sum += self.drop_prob;
        c.prob_max = c.prob_max.max(self.drop_prob);
        c.qdelay_sum_s += q;
    }

    /// RFC 8033 §4.1 `drop_early`, with de-randomization (§5.4) when configured: true if the
    /// arrival `pkt` is picked for a drop (or a mark).
    fn drop_early(&mut self) -> bool {
        if !self.burst_allowance.is_zero() {
            return false;
        }
        let reference = self.cfg.target;
        if (self.qdelay_old < Duration(reference.as_nanos() / 2) && self.drop_prob < 0.2)
            || self.fifo.bytes() <= 2 * self.mtu
        {
            return false;
        }
        if self.cfg.derandomize {
            if self.drop_prob == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += self.drop_prob;
            if self.accu_prob < 0.85 {
                return false;
            }
            if self.accu_prob >= 8.5 {
                return true;
            }
        }
        self.rng.random::<f64>() < self.drop_prob
    }

    #[inline]
    fn full_for(&self, pkt: &Packet) -> bool {
        match self.cfg.limit {
            QueueLimit::Packets(n) => self.fifo.len() >= n,
            QueueLimit::Bytes(n) => self.fifo.bytes() + pkt.len() > n,
        }
    }

    /// The departure-rate measurement (§5.2) as a packet of `len` bytes starts to leave at
    /// `now`: a cycle runs from one departure to the first at which `dq_threshold` bytes have
    /// left since (the packets sent between, each counted when the next one starts).
    fn measure_departure(&mut self, len: usize, now: Instant) {
        let threshold = self.cfg.dq_threshold;
        if self.in_measurement {
            self.dq_count += self.prev_len;
            if self.dq_count >= threshold {
                self.in_measurement = false;
                let elapsed = now.saturating_since(self.dq_start).as_secs_f64();
                if elapsed > 0.0 {
                    // Time to send dq_threshold bytes at the rate just measured, averaged with
                    // weight dq_threshold / 2^16 on the newest.
                    let dq_time = elapsed * threshold as f64 / self.dq_count as f64;
                    let weight = (threshold as f64 / 65536.0).min(1.0);
                    self.avg_dq_time = if self.avg_dq_time == 0.0 {
                        dq_time
                    } else {
                        dq_time * weight + self.avg_dq_time * (1.0 - weight)
                    };
                }
            }
        }
        if !self.in_measurement && self.fifo.bytes() >= threshold {
            self.in_measurement = true;
            self.dq_count = 0;
            self.dq_start = now;
        }
        self.prev_len = len;
    }
}

/// `Duration` subtraction that stops at zero.
trait SaturatingSub {
    fn saturating_sub_dur(self, other: Duration) -> Duration;
}

impl SaturatingSub for Duration {
    #[inline]
    fn saturating_sub_dur(self, other: Duration) -> Duration {
        Duration(self.as_nanos().saturating_sub(other.as_nanos()))
    }
}

impl QueueDisc for Pie {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn enqueue(&mut self, mut pkt: Packet, now: Instant, _dropped: &mut Dropped) -> Enqueued {
        self.catch_up(now);
        if self.full_for(&pkt) {
            self.accu_prob = 0.0;
            self.counters.forced += 1;
            return Enqueued::Dropped(pkt, super::droptail::OVERFLOW);
        }
        let mut marked = None;
        if self.drop_early() {
            self.accu_prob = 0.0;
            if self.cfg.ecn && self.drop_prob < self.cfg.mark_ecnth && pkt.mark_ce() {
                self.counters.marks += 1;
                marked = Some(MARK);
            } else {
                self.counters.early += 1;
                return Enqueued::Dropped(pkt, EARLY);
            }
        }
        // Burst tolerance (§4.4): a calm queue regains its allowance.
        let half = Duration(self.cfg.target.as_nanos() / 2);
        if self.drop_prob == 0.0 && self.current_qdelay() < half && self.qdelay_old < half {
            self.burst_allowance = self.cfg.max_burst;
        }
        self.fifo.push(pkt, now);
        Enqueued::Queued { marked }
    }

    fn dequeue(&mut self, now: Instant, _dropped: &mut Dropped) -> Option<Dequeued> {
        self.catch_up(now);
        let (pkt, at) = self.fifo.pop()?;
        let sojourn = now.saturating_since(at);
        match self.cfg.delay {
            PieDelay::Timestamp => {
                self.last_sojourn = if self.fifo.is_empty() { Duration::ZERO } else { sojourn };
            }
            PieDelay::DepartureRate => self.measure_departure(pkt.len(), now),
        }
        self.counters.released += 1;
        self.counters.sojourn_ns += sojourn.as_nanos() as u128;
        Some(Dequeued::plain(pkt))
    }

    /// An arrival to an empty queue: the same decisions as `enqueue` (an early drop needs more
    /// than two MTUs queued, so none happens), and it leaves at once.
    fn enqueue_dequeue(&mut self, pkt: Packet, now: Instant, dropped: &mut Dropped) -> Passed {
        if !self.fifo.is_empty() || self.full_for(&pkt) {
            let arrival = self.enqueue(pkt, now, dropped);
            return Passed::Otherwise(arrival, self.dequeue(now, dropped));
        }
        self.catch_up(now);
        let half = Duration(self.cfg.target.as_nanos() / 2);
        if self.drop_prob == 0.0 && self.qdelay_old < half && self.current_qdelay() < half {
            self.burst_allowance = self.cfg.max_burst;
        }
        // With derandomization an early-drop check still accumulates nothing here: it returns
        // before that with at most two MTUs queued.
        if self.cfg.delay == PieDelay::Timestamp {
            self.last_sojourn = Duration::ZERO;
        }
        self.counters.released += 1;
        Passed::Through(pkt)
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> usize {
        self.fifo.bytes()
    }

    fn flush(&mut self) -> Vec<Packet> {
        // A departure-rate measurement cannot span the gap.
        self.in_measurement = false;
        self.fifo.drain().collect()
    }

    fn stats(&self) -> Vec<QueueStat> {
        let c = &self.counters;
        let per_update = |sum: f64| if c.updates == 0 { 0.0 } else { sum / c.updates as f64 };
        let sojourn = if c.released == 0 { 0.0 } else { c.sojourn_ns as f64 / c.released as f64 / 1e9 };
        vec![
            QueueStat { name: "pie_early_drops", value: c.early as f64, unit: "packets" },
            QueueStat { name: "pie_marks", value: c.marks as f64, unit: "packets" },
            QueueStat { name: "pie_forced_drops", value: c.forced as f64, unit: "packets" },
            QueueStat { name: "pie_prob_mean", value: per_update(c.prob_sum), unit: "1" },
            QueueStat { name: "pie_prob_max", value: c.prob_max, unit: "1" },
            QueueStat { name: "pie_qdelay_mean", value: per_update(c.qdelay_sum_s), unit: "s" },
            QueueStat { name: "pie_sojourn_mean", value: sojourn, unit: "s" },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::test_support::udp_packet;
    use crate::rng::RngTree;
    use crate::wire::Ecn;

    fn pkt(len: usize, uid: u64, ecn: Ecn) -> Packet {
        udp_packet(len, 0, uid, ecn)
    }

    fn ms(v: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(v)
    }

    fn pie(cfg: PieConfig) -> Pie {
        Pie::new(cfg, 1500, RngTree::new(1).stream("pie"))
    }

    #[test]
    fn the_probability_update_follows_the_pi_law_and_its_auto_tuning() {
        // Timestamp mode: the delay is the last sojourn time, set here directly.
        let cfg = PieConfig { delay: PieDelay::Timestamp, ..PieConfig::default() };
        let mut q = pie(cfg);
        // 45 ms of delay at the first update, 0 before: alpha*(0.045-0.015) + beta*0.045,
        // divided by 2048 since the probability is below 0.0001 %.
        q.last_sojourn = Duration::from_millis(45);
        q.catch_up(ms(15));
        let step1 = (0.125 * 0.030 + 1.25 * 0.045) / 2048.0;
        assert!((q.drop_prob - step1).abs() < 1e-15, "{} vs {step1}", q.drop_prob);
        // Next update: the delay stays: only alpha's term, divided by 128 (p is 2.9e-5).
        q.catch_up(ms(30));
        let step2 = 0.125 * 0.030 / 128.0;
        assert!((q.drop_prob - (step1 + step2)).abs() < 1e-15);
        // From 10 % on, no division, and the Cap Drop Adjustment limits a rise to 2 %.
        q.drop_prob = 0.15;
        q.last_sojourn = Duration::from_millis(200);
        q.catch_up(ms(45));
        assert!((q.drop_prob - 0.17).abs() < 1e-12, "{}", q.drop_prob);
        // Without the cap the full step applies: 0.125*0.185 + 1.25*0 = 0.023125.
        let mut q = pie(PieConfig { cap_drop_adjustment: false, ..cfg });
        q.drop_prob = 0.15;
        q.qdelay_old = Duration::from_millis(200);
        q.last_sojourn = Duration::from_millis(200);
        q.catch_up(ms(15));
        assert!((q.drop_prob - (0.15 + 0.125 * 0.185)).abs() < 1e-12, "{}", q.drop_prob);
        // Delay below the reference lowers it; with both delays zero it decays by 2 %.
        q.last_sojourn = Duration::ZERO;
        q.qdelay_old = Duration::ZERO;
        let before = q.drop_prob;
        q.catch_up(ms(30));
        assert!((q.drop_prob - (before - 0.125 * 0.015) * 0.98).abs() < 1e-12);
    }

    #[test]
    fn burst_allowance_runs_down_per_update_and_returns_when_calm() {
        let mut q = pie(PieConfig { delay: PieDelay::Timestamp, ..PieConfig::default() });
        assert_eq!(q.burst_allowance, Duration::from_millis(150));
        q.last_sojourn = Duration::from_millis(40);
        q.catch_up(ms(60)); // four updates
        assert_eq!(q.burst_allowance, Duration::from_millis(90));
        q.catch_up(ms(300));
        assert!(q.burst_allowance.is_zero() && q.drop_prob > 0.0);
        // While allowance remains, nothing is dropped early however high the probability.
        let mut fresh = pie(PieConfig::default());
        fresh.drop_prob = 1.0;
        let mut dropped = Dropped::new();
        for i in 0..50 {
            assert!(matches!(fresh.enqueue(pkt(1500, i, Ecn::NotEct), ms(1), &mut dropped), Enqueued::Queued { .. }));
        }
    }

    #[test]
    fn early_drops_happen_at_the_probability_and_ecn_marks_below_the_threshold() {
        for (prob, ecn) in [(0.05, false), (0.3, false), (0.05, true), (0.3, true)] {
            let mut q = pie(PieConfig { ecn, ..PieConfig::default() });
            q.burst_allowance = Duration::ZERO;
            q.qdelay_old = Duration::from_millis(30);
            let mut dropped = Dropped::new();
            // Keep 10 packets queued; offer 20,000 ECT arrivals at the same instant (no update).
            for i in 0..10 {
                q.fifo.push(pkt(1500, i, Ecn::Ect0), ms(1));
            }
            let (mut early, mut marks) = (0, 0);
            for i in 0..20_000u64 {
                q.drop_prob = prob;
                match q.enqueue(pkt(1500, 100 + i, Ecn::Ect0), ms(1), &mut dropped) {
                    Enqueued::Dropped(_, why) => {
                        assert_eq!(why, EARLY);
                        early += 1;
                    }
                    Enqueued::Queued { marked: Some(why) } => {
                        assert_eq!(why, MARK);
                        marks += 1;
                        q.fifo.pop();
                    }
                    Enqueued::Queued { marked: None } => {
                        q.fifo.pop();
                    }
                }
            }
            let picked = (early + marks) as f64 / 20_000.0;
            assert!((picked - prob).abs() < 0.01, "p {prob}: picked {picked}");
            if ecn && prob < 0.1 {
                assert_eq!(early, 0, "below mark_ecnth ECN-capable packets are marked");
            } else {
                assert_eq!(marks, 0, "above mark_ecnth (or without ECN) they are dropped");
            }
        }
    }

    #[test]
    fn derandomization_spaces_drops_by_accumulated_probability() {
        let mut q = pie(PieConfig { derandomize: true, ..PieConfig::default() });
        q.burst_allowance = Duration::ZERO;
        q.qdelay_old = Duration::from_millis(30);
        for i in 0..10 {
            q.fifo.push(pkt(1500, i, Ecn::NotEct), ms(1));
        }
        q.drop_prob = 0.25;
        let mut dropped = Dropped::new();
        let mut gaps = Vec::new();
        let mut since = 0;
        for i in 0..400u64 {
            since += 1;
            if let Enqueued::Dropped(..) = q.enqueue(pkt(1500, 100 + i, Ecn::NotEct), ms(1), &mut dropped) {
                gaps.push(since);
                since = 0;
            } else {
                q.fifo.pop();
            }
        }
        // No drop before the accumulated probability reaches 0.85 (4 arrivals at 0.25).
        assert!(gaps.iter().all(|&g| g >= 4), "{gaps:?}");
        assert!(gaps.len() > 40, "{gaps:?}");
    }

    #[test]
    fn departure_rate_estimate_gives_the_delay_by_littles_law() {
        let mut q = pie(PieConfig::default());
        let mut dropped = Dropped::new();
        // 100 packets of 1000 bytes queued; the link sends one every 0.8 ms (10 Mbit/s).
        for i in 0..100 {
            q.enqueue(pkt(1000, i, Ecn::NotEct), ms(0), &mut dropped);
        }
        let mut t = Instant::ZERO;
        for _ in 0..60 {
            q.dequeue(t, &mut dropped);
            t = t.saturating_add(Duration::from_micros(800));
        }
        // 40,000 bytes at 1.25 MB/s: 32 ms.
        let d = q.current_qdelay().as_secs_f64();
        assert!((d - 0.032).abs() < 0.0005, "{d}");
    }

    #[test]
    fn an_idle_stretch_is_skipped_with_the_same_result_as_every_update() {
        let cfg = PieConfig { delay: PieDelay::Timestamp, ..PieConfig::default() };
        let mut a = pie(cfg);
        a.catch_up(ms(1_000_000));
        let mut b = pie(cfg);
        let mut t = 15;
        while t <= 1_000_000 {
            b.update();
            t += 15;
        }
        assert_eq!(a.counters.updates, b.counters.updates);
        assert_eq!((a.drop_prob, a.burst_allowance, a.qdelay_old), (b.drop_prob, b.burst_allowance, b.qdelay_old));
        assert_eq!(a.next_update, ms(1_000_005));
    }
}
