//! Random Early Detection (Floyd & Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", IEEE/ACM ToN 1993), with the `gentle` variant (Floyd, "Recommendation on using
//! the gentle variant of RED", 2000) and Adaptive RED (Floyd, Gummadi & Shenker, "Adaptive
//! RED: An Algorithm for Increasing the Robustness of RED's Active Queue Management", 2001).
//!
//! On each arrival the average queue `avg` is updated, `avg <- (1 - w_q) avg + w_q q`, with
//! the instantaneous queue `q` the arrival finds. After an idle period the average decays as if
//! `m` packets of the mean size had arrived to an empty queue, `m` = idle time / the time the
//! link takes to send one (`avg <- (1 - w_q)^(m + 1) avg`, as ns-2 does it). Then:
//! - `avg < min_th`: the packet is queued;
//! - `min_th <= avg < max_th`: it is dropped (or ECN-marked) with probability
//!   `p_b = max_p (avg - min_th) / (max_th - min_th)`, spread by the count of packets since the
//!   last drop (`p_a = p_b / (1 - count p_b)`, or with `wait` the ns-2 rule that makes the gap
//!   between drops uniform between `1/p_b` and `2/p_b` packets);
//! - with `gentle`, `max_th <= avg < 2 max_th`: `p_b` rises linearly from `max_p` to 1;
//! - `avg >= max_th` (`2 max_th` with `gentle`): the packet is dropped (a forced drop);
//! - a packet that does not fit under the hard limit is dropped (`queue_full`).
//!
//! Like ns-2 (`red.cc`), no early drop happens while the queue holds at most one packet (or
//! one byte), and the first arrival after the average crosses `min_th` only starts the count.
//!
//! In byte mode the average, the thresholds and the count are in bytes (thresholds are given
//! in packets of `mean_pktsize` bytes, as ns-2 gives them) and the early-drop probability is
//! scaled by the packet's size over `mean_pktsize`, so large packets are more likely dropped.
//!
//! Adaptive RED changes `max_p` at most once per `interval` to keep the average between
//! `min_th + 0.4 (max_th - min_th)` and `max_th - 0.4 (max_th - min_th)`: additive increase by
//! `min(alpha, max_p / 4)` while above (up to `top`), multiplicative decrease by `beta` while
//! below (down to `bottom`).
//!
//! ECN (RFC 3168 §5): with `ecn` on, a packet picked by the early-drop test is marked instead
//! when it is ECN-capable and `p_b <= mark_p` (ns-2's `mark_p_`, so in the gentle region above
//! `max_p` packets are dropped); forced and overflow drops are always drops (RFC 3168 §7: a
//! router under heavy congestion drops rather than marks).
//!
//! Defaults are ns-2.35's (`tcl/lib/ns-default.tcl`, `Queue/RED`), including its automatic
//! configuration (since 2001) of the thresholds and queue weight from the link, except the
//! hard limit, which is the project's 100 packets for every discipline (ns-2: 50).

use super::droptail::OVERFLOW;
use super::fifo::{happens, Fifo, Tally};
use super::{in_range, positive, Dequeued, Dropped, Enqueued, ParamError, QueueContext, QueueDisc, QueueLimit};
use super::{QueueReason, QueueStat};
use crate::rng::SimRng;
use crate::time::{Duration, Instant};
use crate::wire::Packet;

/// A probabilistic drop while the average is between the thresholds (or in the gentle region).
pub const EARLY: QueueReason = QueueReason("red_early");
/// A drop because the average is at or above `max_th` (`2 max_th` with `gentle`).
pub const FORCED: QueueReason = QueueReason("red_forced");
/// An ECN-capable packet marked Congestion Experienced instead of an early drop.
pub const MARK: QueueReason = QueueReason("red_mark");

/// RED's parameters. Thresholds are in packets (of `mean_pktsize` bytes in byte mode).
#[derive(Clone, Debug, PartialEq)]
pub struct RedConfig {
    /// Hard limit of the buffer. Default 100 packets (ns-2's `Queue set limit_` is 50).
    pub limit: QueueLimit,
    /// Byte mode: average, thresholds and count in bytes, drop probability scaled by size.
    /// Default true (ns-2 `bytes_` and `queue_in_bytes_`, true since 2004).
    pub bytes: bool,
    /// Minimum threshold in packets; `None`: automatic, `max(5, target_delay * C / 2)` for a link
    /// of `C` mean-size packets per second (ns-2 `thresh_ 0`).
    pub min_th: Option<f64>,
    /// Maximum threshold in packets; `None`: `3 min_th` (ns-2 `maxthresh_ 0`).
    pub max_th: Option<f64>,
    /// Queue weight of the average; `None`: automatic, `1 - exp(-1 / (10 rtt C))` with
    /// `rtt = max(100 ms, 3 (delay + 1 / C))` (ns-2 `q_weight_ -1`).
    pub w_q: Option<f64>,
    /// Drop probability at `max_th` (the initial value with `adaptive`). Default 0.1 (ns-2
    /// `linterm_ 10`).
    pub max_p: f64,
    /// Gentle variant. Default true (ns-2 `gentle_`, true since 2001).
    pub gentle: bool,
    /// Spread drops uniformly between `1/p_b` and `2/p_b` packets. Default true (ns-2 `wait_`).
    pub wait: bool,
    /// Mean packet size in bytes: the unit of thresholds in byte mode and of the idle-time
    /// decay. Default 500 (ns-2 `mean_pktsize_`).
    pub mean_pktsize: u32,
    /// Mark ECN-capable packets instead of early-dropping them. Default false (ns-2 `setbit_`).
    pub ecn: bool,
    /// With `ecn`, mark only while `p_b <= mark_p`; drop above. Default 0.1 (ns-2 `mark_p_`,
    /// `use_mark_p_ true`).
    pub mark_p: f64,
    /// Adaptive RED: adapt `max_p`. Default false (ns-2 `adaptive_ 0`).
    pub adaptive: bool,
    /// Target queueing delay of the automatic thresholds. Default 5 ms (ns-2 `targetdelay_`).
    pub target_delay: Duration,
    /// Adaptive RED: time between `max_p` changes. Default 0.5 s (ns-2 `interval_`).
    pub interval: Duration,
    /// Adaptive RED: additive increase of `max_p`. Default 0.01 (ns-2 `alpha_`).
    pub alpha: f64,
    /// Adaptive RED: multiplicative decrease of `max_p`. Default 0.9 (ns-2 `beta_`).
    pub beta: f64,
    /// Adaptive RED: upper bound of `max_p`. Default 0.5 (ns-2 `top_`).
    pub top: f64,
    /// Adaptive RED: lower bound of `max_p`; `None`: `min(0.01, 80 kbit/s / rate)` (ns-2
    /// `bottom_ 0`).
    pub bottom: Option<f64>,
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            limit: QueueLimit::Packets(100),
            bytes: true,
            min_th: None,
            max_th: None,
            w_q: None,
            max_p: 0.1,
            gentle: true,
            wait: true,
            mean_pktsize: 500,
            ecn: false,
            mark_p: 0.1,
            adaptive: false,
            target_delay: Duration::from_millis(5),
            interval: Duration::from_millis(500),
            alpha: 0.01,
            beta: 0.9,
            top: 0.5,
            bottom: None,
        }
    }
}

/// RED's parameters once the automatic ones are derived from the link, thresholds in the
/// queue's unit (bytes or packets).
#[derive(Clone, Debug, PartialEq)]
pub struct RedParams {
    /// Minimum threshold (bytes or packets).
    pub min_th: f64,
    /// Maximum threshold (bytes or packets).
    pub max_th: f64,
    /// Queue weight.
    pub w_q: f64,
    /// Lower bound of `max_p` for Adaptive RED.
    pub bottom: f64,
    /// Mean-size packets the link sends per second.
    pub ptc: f64,
}

impl RedConfig {
    /// Check the parameters and derive the automatic ones for a link of `rate_bps` and `delay`
    /// (ns-2 `REDQueue::initialize_params`).
    pub fn resolve(&self, rate_bps: u64, delay: Duration) -> Result<RedParams, ParamError> {
        if self.mean_pktsize == 0 {
            return Err(ParamError::new("mean_pktsize", "0 must be more than zero"));
        }
        in_range("max_p", self.max_p, 0.0..=1.0)?;
        positive("max_p", self.max_p)?;
        in_range("mark_p", self.mark_p, 0.0..=1.0)?;
        let ptc = rate_bps as f64 / (8.0 * self.mean_pktsize as f64);
        let w_q = match self.w_q {
            Some(w) => {
                in_range("w_q", w, 0.0..=1.0)?;
                positive("w_q", w)?;
                w
            }
            None => {
                let rtt = (3.0 * (delay.as_secs_f64() + 1.0 / ptc)).max(0.1);
                1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
            }
        };
        let min_th = match self.min_th {
            Some(t) => {
                positive("min_th", t)?;
                t
            }
            None => (self.target_delay.as_secs_f64() * ptc / 2.0).max(5.0),
        };
        let max_th = self.max_th.unwrap_or(3.0 * min_th);
        if max_th.is_nan() || max_th <= min_th {
            let key = if self.max_th.is_some() { "max_th" } else { "min_th" };
            return Err(ParamError::new(
                key,
                format!("max_th ({max_th}) must be more than min_th ({min_th}) (packets)"),
            ));
        }
        if self.adaptive {
            positive("interval", self.interval.as_secs_f64())?;
            positive("alpha", self.alpha)?;
            in_range("beta", self.beta, 0.0..=1.0)?;
            positive("beta", self.beta)?;
            in_range("top", self.top, 0.0..=1.0)?;
        }
        let bottom = match self.bottom {
            Some(b) => {
                in_range("bottom", b, 0.0..=1.0)?;
                b
            }
            None => (80_000.0 / rate_bps.max(1) as f64).min(0.01),
        };
        let unit = if self.bytes { self.mean_pktsize as f64 } else { 1.0 };
        Ok(RedParams { min_th: min_th * unit, max_th: max_th * unit, w_q, bottom, ptc })
    }
}

/// A RED queue.
pub struct Red {
    cfg: RedConfig,
    params: RedParams,
    fifo: Fifo,
    rng: SimRng,
    /// The average queue (bytes or packets).
    avg: f64,
    /// Packets (bytes) since the last early drop or mark (ns-2 `count`, `count_bytes`).
    count: u64,
    count_bytes: u64,
    /// The average was at or above `min_th` at the previous arrival (ns-2 `old`).
    above_min: bool,
    /// Since when the link has been idle (the last dequeue found nothing), if it is.
    idle_since: Option<Instant>,
    /// The current `max_p` (adapted by Adaptive RED).
    max_p: f64,
    /// When Adaptive RED last changed `max_p`.
    last_set: Instant,
    tally: Tally,
    /// Sum of the average over arrivals, for its mean.
    avg_sum: f64,
}

impl Red {
    /// Name in the registry.
    pub const KIND: &'static str = "red";

    /// An empty RED queue for the link direction `ctx`. The configuration must pass
    /// [`RedConfig::resolve`] for that link (scenarios check it first); this panics otherwise.
    pub fn new(cfg: &RedConfig, ctx: QueueContext) -> Self {
        let params = match cfg.resolve(ctx.rate_bps, ctx.delay) {
            Ok(p) => p,
            Err(e) => panic!("invalid RED parameters: {e}"),
        };
        Red {
            max_p: cfg.max_p,
            cfg: cfg.clone(),
            params,
            fifo: Fifo::default(),
            rng: ctx.rng,
            avg: 0.0,
            count: 0,
            count_bytes: 0,
            above_min: false,
            idle_since: Some(Instant::ZERO),
            last_set: Instant::ZERO,
            tally: Tally::default(),
            avg_sum: 0.0,
        }
    }

    /// The resolved parameters.
    pub fn params(&self) -> &RedParams {
        &self.params
    }

    /// The current average queue (bytes or packets).
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// The current `max_p`.
    pub fn max_p(&self) -> f64 {
        self.max_p
    }

    /// Update the average for an arrival at `now` (ns-2 `REDQueue::enque` and `estimator`).
    fn update_average(&mut self, now: Instant) {
        // After idling, pretend `m` mean-size packets arrived to the empty queue.
        let m = match self.idle_since.take() {
            Some(since) => (self.params.ptc * now.saturating_since(since).as_secs_f64()).floor(),
            None => 0.0,
        };
        let keep = 1.0 - self.params.w_q;
        let decay = if m == 0.0 { keep } else { keep.powf(m + 1.0) };
        self.avg = self.avg * decay + self.params.w_q * self.fifo.occupancy(self.cfg.bytes);
        if self.cfg.adaptive && now > self.last_set.saturating_add(self.cfg.interval) {
            self.adapt_max_p(now);
        }
    }

    /// Adaptive RED's AIMD step on `max_p` (Floyd, Gummadi & Shenker 2001; ns-2
    /// `REDQueue::updateMaxP`): keep the average in the middle of the band between the thresholds.
    fn adapt_max_p(&mut self, now: Instant) {
        let RedParams { min_th, max_th, bottom, .. } = self.params;
        let part = 0.4 * (max_th - min_th);
        if self.avg < min_th + part && self.max_p > bottom {
            self.max_p *= self.cfg.beta;
            self.last_set = now;
        } else if self.avg > max_th - part && self.cfg.top > self.max_p {
            self.max_p += self.cfg.alpha.min(0.25 * self.max_p);
            self.last_set = now;
        }
    }

    /// `p_b`, the drop probability the average calls for (ns-2 `calculate_p_new`).
    fn base_probability(&self) -> f64 {
        let RedParams { min_th, max_th, .. } = self.params;
        let p = if self.avg >= max_th {
            // Gentle: from max_p at max_th to 1 at 2 max_th (Floyd 2000).
            if self.cfg.gentle {
                self.max_p + (1.0 - self.max_p) * (self.avg - max_th) / max_th
            } else {
                1.0
            }
        } else {
            self.max_p * (self.avg - min_th) / (max_th - min_th)
        };
        p.clamp(0.0, 1.0)
    }

    /// `p_a`: `p_b` spread by the count since the last drop, scaled by size in byte mode (ns-2
    /// `modify_p`).
    fn spread(&self, p_b: f64, size: usize) -> f64 {
        let count = if self.cfg.bytes {
            (self.count_bytes / u64::from(self.cfg.mean_pktsize)) as f64
        } else {
            self.count as f64
        };
        let mut p = if self.cfg.wait {
            if count * p_b < 1.0 {
                0.0
            } else if count * p_b < 2.0 {
                p_b / (2.0 - count * p_b)
            } else {
                1.0
            }
        } else if count * p_b < 1.0 {
            p_b / (1.0 - count * p_b)
        } else {
            1.0
        };
        if self.cfg.bytes && p < 1.0 {
            p = p * size as f64 / f64::from(self.cfg.mean_pktsize);
        }
        p.min(1.0)
    }
}

/// What RED decided for an arrival.
enum Verdict {
    Admit,
    Early { p_b: f64 },
    Forced,
    Overflow,
}

impl QueueDisc for Red {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn enqueue(&mut self, pkt: Packet, now: Instant, _dropped: &mut Dropped) -> Enqueued {
        self.update_average(now);
        self.tally.arrivals += 1;
        self.avg_sum += self.avg;
        self.count += 1;
        self.count_bytes += pkt.len() as u64;
        let RedParams { min_th, max_th, .. } = self.params;
        let mut verdict = Verdict::Admit;
        if self.avg >= min_th && self.fifo.occupancy(self.cfg.bytes) > 1.0 {
            let forced_at = if self.cfg.gentle { 2.0 * max_th } else { max_th };
            if self.avg >= forced_at {
                verdict = Verdict::Forced;
            } else if !self.above_min {
                // The average just crossed min_th: start counting (Floyd & Jacobson 1993).
                self.count = 1;
                self.count_bytes = pkt.len() as u64;
                self.above_min = true;
            } else {
                let p_b = self.base_probability();
                let p_a = self.spread(p_b, pkt.len());
                if happens(&mut self.rng, p_a) {
                    verdict = Verdict::Early { p_b };
                }
            }
        } else {
            self.above_min = false;
        }
        if self.fifo.full_for(self.cfg.limit, &pkt) {
            verdict = Verdict::Overflow;
        }
        match verdict {
            Verdict::Admit => {
                self.fifo.push(pkt);
                Enqueued::Queued { marked: None }
            }
            Verdict::Early { p_b } => {
                self.count = 0;
                self.count_bytes = 0;
                let ecn = self.cfg.ecn && p_b <= self.cfg.mark_p;
                self.fifo.notify(pkt, ecn, &mut self.tally, MARK, EARLY)
            }
            Verdict::Forced | Verdict::Overflow => {
                // ns-2 resets the count after a forced drop too.
                self.count = 0;
                self.count_bytes = 0;
                if matches!(verdict, Verdict::Forced) {
                    self.tally.forced_drops += 1;
                    Enqueued::Dropped(pkt, FORCED)
                } else {
                    self.tally.overflow_drops += 1;
                    Enqueued::Dropped(pkt, OVERFLOW)
                }
            }
        }
    }

    fn dequeue(&mut self, now: Instant, _dropped: &mut Dropped) -> Option<Dequeued> {
        match self.fifo.pop() {
            Some(pkt) => Some(Dequeued::plain(pkt)),
            None => {
                // The link goes idle: the average decays from now (ns-2 `idletime_`).
                self.idle_since.get_or_insert(now);
                None
            }
        }
    }

    fifo_occupancy!(fifo);

    fn stats(&self) -> Vec<QueueStat> {
        let unit = if self.cfg.bytes { "bytes" } else { "packets" };
        let mean = if self.tally.arrivals > 0 { self.avg_sum / self.tally.arrivals as f64 } else { 0.0 };
        let mut out = vec![
            QueueStat { name: "red_avg_queue", value: self.avg, unit },
            QueueStat { name: "red_avg_queue_mean", value: mean, unit },
            QueueStat { name: "red_min_th", value: self.params.min_th, unit },
            QueueStat { name: "red_max_th", value: self.params.max_th, unit },
            QueueStat { name: "red_w_q", value: self.params.w_q, unit: "1" },
            QueueStat { name: "red_max_p", value: self.max_p, unit: "1" },
        ];
        out.extend(tally_stats("red", &self.tally));
        out
    }
}

/// The counters of a [`Tally`] as statistics named `<kind>_arrivals` and so on.
pub(crate) fn tally_stats(kind: &'static str, t: &Tally) -> Vec<QueueStat> {
    let names: [(&str, u64); 5] = [
        ("arrivals", t.arrivals),
        ("early_drops", t.early_drops),
        ("forced_drops", t.forced_drops),
        ("overflow_drops", t.overflow_drops),
        ("marks", t.marks),
    ];
    names
        .into_iter()
        .map(|(what, n)| QueueStat { name: stat_name(kind, what), value: n as f64, unit: "packets" })
        .collect()
}

/// `<kind>_<what>` as a static name (the disciplines' names are few and fixed).
fn stat_name(kind: &'static str, what: &str) -> &'static str {
    macro_rules! names {
        ($($k:literal),*) => {
            match (kind, what) {
                $(
                    ($k, "arrivals") => concat!($k, "_arrivals"),
                    ($k, "early_drops") => concat!($k, "_early_drops"),
                    ($k, "forced_drops") => concat!($k, "_forced_drops"),
                    ($k, "overflow_drops") => concat!($k, "_overflow_drops"),
                    ($k, "marks") => concat!($k, "_marks"),
                )*
                _ => "aqm_counter",
            }
        };
    }
    names!("red", "fred", "blue", "rem", "pi")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::test_support::{context, udp_packet};
    use crate::wire::Ecn;

    fn pkt(len: usize, ecn: Ecn) -> Packet {
        udp_packet(len, 0, 0, ecn)
    }

    fn ctx(rate_bps: u64) -> QueueContext {
        context(rate_bps, Duration::from_millis(10), 3, "q")
    }

    fn packet_mode(min_th: f64, max_th: f64) -> RedConfig {
        RedConfig { bytes: false, min_th: Some(min_th), max_th: Some(max_th), w_q: Some(0.002), ..RedConfig::default() }
    }

    #[test]
    fn automatic_parameters_follow_ns2() {
        // 10 Mbit/s, 500-byte mean packets: C = 2500 packets/s; 5 ms target -> 6.25 packets.
        let p = RedConfig::default().resolve(10_000_000, Duration::from_millis(10)).unwrap();
        assert!((p.ptc - 2500.0).abs() < 1e-9);
        assert!((p.min_th - 6.25 * 500.0).abs() < 1e-9, "{p:?}");
        assert!((p.max_th - 3.0 * 6.25 * 500.0).abs() < 1e-9);
        // rtt = max(0.1, 3 (0.01 + 0.0004)) = 0.1 s -> w_q = 1 - exp(-1/2500).
        assert!((p.w_q - (1.0 - (-1.0f64 / 2500.0).exp())).abs() < 1e-15);
        assert!((p.bottom - 0.008).abs() < 1e-12);
        // A slow link: the thresholds stay at 5 packets at least.
        let slow = RedConfig { bytes: false, ..RedConfig::default() }.resolve(1_000_000, Duration::ZERO).unwrap();
        assert_eq!((slow.min_th, slow.max_th), (5.0, 15.0));
    }

    #[test]
    fn bad_thresholds_name_the_key_and_values() {
        let e = packet_mode(30.0, 10.0).resolve(10_000_000, Duration::ZERO).unwrap_err();
        assert_eq!(e.key, "max_th");
        assert!(e.message.contains("10") && e.message.contains("30"), "{e}");
        let e = RedConfig { min_th: Some(40.0), ..RedConfig::default() }.resolve(1, Duration::ZERO);
        assert!(e.is_ok(), "max_th defaults to 3 min_th");
        let e = RedConfig { w_q: Some(1.5), ..RedConfig::default() }.resolve(1, Duration::ZERO).unwrap_err();
        assert_eq!(e.key, "w_q");
    }

    #[test]
    fn drop_function_is_linear_then_gentle_then_forced() {
        let mut red = Red::new(&packet_mode(10.0, 30.0), ctx(10_000_000));
        let p_at = |red: &mut Red, avg: f64| {
            red.avg = avg;
            red.base_probability()
        };
        assert_eq!(p_at(&mut red, 10.0), 0.0);
        assert!((p_at(&mut red, 20.0) - 0.05).abs() < 1e-12);
        assert!((p_at(&mut red, 30.0) - 0.1).abs() < 1e-12);
        // Gentle: halfway from max_th to 2 max_th is halfway from max_p to 1.
        assert!((p_at(&mut red, 45.0) - 0.55).abs() < 1e-12);
        red.cfg.gentle = false;
        assert_eq!(p_at(&mut red, 30.0), 1.0);
    }

    #[test]
    fn idle_time_decays_the_average() {
        // 1 Mbit/s and 500-byte mean packets: 250 packet times per second.
        let mut red = Red::new(&packet_mode(10.0, 30.0), ctx(1_000_000));
        let mut dropped = Dropped::new();
        red.avg = 20.0;
        red.idle_since = Some(Instant::ZERO);
        red.enqueue(pkt(500, Ecn::NotEct), Instant::ZERO + Duration::from_secs(1), &mut dropped);
        let expected = 20.0 * (1.0f64 - 0.002).powi(251);
        assert!((red.avg - expected).abs() < 1e-9, "{} vs {expected}", red.avg);
        // No idle period: one step of the EWMA over the queue of one packet.
        let before = red.avg;
        red.enqueue(pkt(500, Ecn::NotEct), Instant::ZERO + Duration::from_secs(1), &mut dropped);
        assert!((red.avg - (before * 0.998 + 0.002)).abs() < 1e-12);
        // The link goes idle only once a dequeue finds the queue empty.
        assert!(red.dequeue(Instant::ZERO + Duration::from_secs(1), &mut dropped).is_some());
        assert!(red.dequeue(Instant::ZERO + Duration::from_secs(1), &mut dropped).is_some());
        assert!(red.idle_since.is_none());
        assert!(red.dequeue(Instant::ZERO + Duration::from_secs(2), &mut dropped).is_none());
        assert_eq!(red.idle_since, Some(Instant::ZERO + Duration::from_secs(2)));
    }

    /// Fill the queue to `resident` packets, hold the average at `avg` and offer `n` packets one
    /// at a time (each leaving again), counting the outcomes.
    fn offer_at(cfg: RedConfig, avg: f64, resident: usize, n: usize, ecn: Ecn) -> Tally {
        let mut red = Red::new(&cfg, ctx(10_000_000));
        let mut dropped = Dropped::new();
        for _ in 0..resident {
            red.fifo.push(pkt(500, Ecn::NotEct));
        }
        red.idle_since = None;
        red.above_min = true;
        for _ in 0..n {
            red.avg = avg;
            red.params.w_q = 0.0; // hold the average where the test puts it
            if let Enqueued::Queued { .. } = red.enqueue(pkt(500, ecn), Instant::ZERO, &mut dropped) {
                red.fifo.pop();
            }
        }
        red.tally
    }

    #[test]
    fn early_drop_rate_follows_p_b_and_the_spreading() {
        let n = 200_000;
        // avg 20 between 10 and 30: p_b = 0.05, N = 1/p_b = 20. With `wait` the hazard at the
        // count-th packet is 1/(2N - count) from count N on: gaps uniform on N..2N-1 packets,
        // rate 2 / (3N - 1), about p_b / 1.5.
        let t = offer_at(packet_mode(10.0, 30.0), 20.0, 5, n, Ecn::NotEct);
        let rate = t.early_drops as f64 / n as f64;
        assert!((rate - 2.0 / 59.0).abs() < 0.001, "{rate}");
        assert_eq!((t.forced_drops, t.marks), (0, 0));
        // Without `wait` (Floyd & Jacobson, p_a = p_b / (1 - count p_b)): hazard 1/(N - count),
        // gaps uniform on 1..N-1, rate 2 / N = 2 p_b.
        let t = offer_at(RedConfig { wait: false, ..packet_mode(10.0, 30.0) }, 20.0, 5, n, Ecn::NotEct);
        let rate = t.early_drops as f64 / n as f64;
        assert!((rate - 0.1).abs() < 0.002, "{rate}");
    }

    #[test]
    fn gentle_and_not_differ_above_max_th() {
        let n = 100_000;
        // avg 40 with max_th 30: not gentle -> every packet is a forced drop.
        let hard = offer_at(RedConfig { gentle: false, ..packet_mode(10.0, 30.0) }, 40.0, 5, n, Ecn::NotEct);
        assert_eq!((hard.forced_drops, hard.early_drops), (n as u64, 0));
        // Gentle: p_b = 0.1 + 0.9 * 10/30 = 0.4, spread by `wait`: rate p_b / 1.5 (gaps of 3 or 4
        // packets...), far below 1, and all early drops.
        let gentle = offer_at(packet_mode(10.0, 30.0), 40.0, 5, n, Ecn::NotEct);
        assert_eq!(gentle.forced_drops, 0);
        let rate = gentle.early_drops as f64 / n as f64;
        assert!(rate > 0.2 && rate < 0.4, "{rate}");
        // Gentle at 2 max_th: forced.
        let beyond = offer_at(packet_mode(10.0, 30.0), 60.0, 5, 1000, Ecn::NotEct);
        assert_eq!(beyond.forced_drops, 1000);
    }

    #[test]
    fn ecn_marks_capable_packets_below_mark_p_and_drops_the_rest() {
        let n = 50_000;
        let ecn = RedConfig { ecn: true, ..packet_mode(10.0, 30.0) };
        let t = offer_at(ecn.clone(), 20.0, 5, n, Ecn::Ect0);
        assert!(t.marks > 1000 && t.early_drops == 0, "{t:?}");
        // Not-ECT packets are dropped as without ECN.
        let t = offer_at(ecn.clone(), 20.0, 5, n, Ecn::NotEct);
        assert!(t.marks == 0 && t.early_drops > 1000, "{t:?}");
        // In the gentle region p_b > mark_p: dropped even when capable.
        let t = offer_at(ecn.clone(), 40.0, 5, n, Ecn::Ect1);
        assert!(t.marks == 0 && t.early_drops > 1000, "{t:?}");
        // Forced drops stay drops.
        let t = offer_at(ecn, 70.0, 5, 100, Ecn::Ect0);
        assert_eq!((t.marks, t.forced_drops), (0, 100));
    }

    #[test]
    fn no_early_drop_with_at_most_one_packet_queued_and_hard_limit_overflows() {
        let t = offer_at(packet_mode(10.0, 30.0), 25.0, 1, 10_000, Ecn::NotEct);
        assert_eq!(t.early_drops + t.forced_drops, 0);
        let cfg = RedConfig { limit: QueueLimit::Packets(5), ..packet_mode(10.0, 30.0) };
        let t = offer_at(cfg, 0.0, 5, 10, Ecn::NotEct);
        assert_eq!(t.overflow_drops, 10);
    }

    #[test]
    fn byte_mode_scales_the_probability_by_size() {
        let n = 100_000;
        let cfg = RedConfig { bytes: true, ..packet_mode(10.0, 30.0) };
        // Thresholds in bytes of 500-byte packets: avg 10000 bytes = 20 packets -> p_b 0.05.
        let mut red = Red::new(&cfg, ctx(10_000_000));
        assert_eq!((red.params.min_th, red.params.max_th), (5000.0, 15000.0));
        let mut dropped = Dropped::new();
        for _ in 0..5 {
            red.fifo.push(pkt(500, Ecn::NotEct));
        }
        red.idle_since = None;
        red.above_min = true;
        red.params.w_q = 0.0;
        let mut drops = [0u64; 2];
        for i in 0..n {
            red.avg = 10_000.0;
            let size = if i % 2 == 0 { 250 } else { 1000 };
            if let Enqueued::Dropped(..) = red.enqueue(pkt(size, Ecn::NotEct), Instant::ZERO, &mut dropped) {
                drops[i % 2] += 1;
            } else {
                red.fifo.pop();
            }
        }
        assert!(drops[1] > 3 * drops[0], "{drops:?}");
    }

    #[test]
    fn adaptive_red_moves_max_p_towards_the_target_band() {
        let cfg = RedConfig { adaptive: true, ..packet_mode(10.0, 30.0) };
        let mut red = Red::new(&cfg, ctx(10_000_000));
        // Average high (above max_th - 0.4 (max_th - min_th) = 22): max_p += min(alpha, max_p/4).
        red.avg = 25.0;
        red.adapt_max_p(Instant::ZERO + Duration::from_secs(1));
        assert!((red.max_p - 0.11).abs() < 1e-12);
        // Low (below 18): max_p *= beta.
        red.avg = 12.0;
        red.adapt_max_p(Instant::ZERO + Duration::from_secs(2));
        assert!((red.max_p - 0.099).abs() < 1e-12);
        // In the band: unchanged.
        red.avg = 20.0;
        red.adapt_max_p(Instant::ZERO + Duration::from_secs(3));
        assert!((red.max_p - 0.099).abs() < 1e-12);
        // Bounded by top.
        red.avg = 29.0;
        for s in 4..200 {
            red.adapt_max_p(Instant::ZERO + Duration::from_secs(s));
        }
        assert!(red.max_p <= 0.5 + 0.01 && red.max_p > 0.49, "{}", red.max_p);
    }
}
