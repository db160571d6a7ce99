//! Streaming statistics: exact mean/variance (Welford) and percentiles (HDR histogram),
//! and time-weighted averages for occupancy-like quantities.

use hdrhistogram::Histogram;

use crate::time::{Duration, Instant};

/// Count, mean, variance, min and max of a stream of samples, plus percentiles with three
/// significant digits (HDR histogram over nanoseconds, up to one hour).
#[derive(Clone, Debug)]
pub struct DelayStats {
    n: u64,
    mean: f64,
    m2: f64,
    min: u64,
    max: u64,
    hist: Option<Histogram<u32>>,
}

/// Largest delay the histogram tells apart: one hour, in nanoseconds; longer ones count as it.
const HIST_MAX_NS: u64 = 3_600_000_000_000;

/// An empty histogram with 1 ns resolution at the bottom and three significant digits that
/// grows to the largest sample recorded. Its buckets are those of one built for the whole
/// [1 ns, 1 h] range (they depend only on the lowest value and the precision), so every
/// quantile is the same; but a flow whose delays stay below 10 ms holds 15,360 counters
/// instead of 32,768, and one in a data centre (tens of microseconds) a few thousand. Every
/// flow and association has one, so this is most of the memory a simulation with thousands
/// of them takes; hence 32-bit counters (60 KiB for those 15,360 instead of 120 KiB): a
/// bucket would need over four billion samples to overflow, and would then saturate (the
/// total count is kept apart, in 64 bits).
fn new_histogram() -> Histogram<u32> {
    let mut h = Histogram::new_with_bounds(1, 2, 3).expect("static histogram bounds are valid");
    h.auto(true);
    h
}

impl Default for DelayStats {
    fn default() -> Self {
        DelayStats { n: 0, mean: 0.0, m2: 0.0, min: u64::MAX, max: 0, hist: None }
    }
}

impl DelayStats {
    /// Add one delay sample. Always inlined: sinks record one per packet or message.
    #[inline(always)]
    pub fn record(&mut self, d: Duration) {
        let x = d.as_nanos();
        self.n += 1;
        let delta = x as f64 - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x as f64 - self.mean);
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        let hist = self.hist.get_or_insert_with(new_histogram);
        // Clamped to [1 ns, 1 h] as a histogram built with those bounds would clamp it; the
        // histogram grows to the largest sample (it cannot fail to on a 64-bit target, and
        // falls back to clamping at its current top if it ever did).
        let x = x.clamp(1, HIST_MAX_NS);
        if hist.record(x).is_err() {
            hist.saturating_record(x);
        }
    }
    /// Adds `other`'s samples, as if each had been recorded here: counts, extremes and the
    /// histogram exactly; mean and variance by Chan et al.'s pairwise update (equal to
    /// recording them one by one up to rounding).
    pub fn merge(&mut self, other: &DelayStats) {
        if other.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = other.clone();
            return;
        }
        let n = self.n + other.n;
        let delta = other.mean - self.mean;
        self.mean += delta * other.n as f64 / n as f64;
        self.m2 += other.m2 + delta * delta * (self.n as f64 * other.n as f64 / n as f64);
        self.n = n;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        if let (Some(h), Some(o)) = (self.hist.as_mut(), other.hist.as_ref()) {
            // Same bounds on both sides, so adding cannot fail; saturate if it ever did.
            let _ = h.add(o);
        }
    }
    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.n
    }
    /// Mean in seconds (NaN when empty).
    pub fn mean_s(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.mean * 1e-9
        }
    }
    /// Sample standard deviation in seconds (NaN with fewer than two samples).
    pub fn stdev_s(&self) -> f64 {
        if self.n < 2 {
            f64::NAN
        } else {
            (self.m2 / (self.n - 1) as f64).sqrt() * 1e-9
        }
    }
    /// Smallest sample in seconds (NaN when empty).
    pub fn min_s(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.min as f64 * 1e-9
        }
    }
    /// Largest sample in seconds (NaN when empty).
    pub fn max_s(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.max as f64 * 1e-9
        }
    }
    /// Every statistic as (metric name, seconds), as results report them.
    pub fn summary(&self) -> [(&'static str, f64); 7] {
        [
            ("delay_mean", self.mean_s()),
            ("delay_stdev", self.stdev_s()),
            ("delay_min", self.min_s()),
            ("delay_p50", self.quantile_s(0.50)),
            ("delay_p95", self.quantile_s(0.95)),
            ("delay_p99", self.quantile_s(0.99)),
            ("delay_max", self.max_s()),
        ]
    }
    /// The `q`-quantile (0..=1) in seconds (NaN when empty): the middle of the histogram
    /// bucket holding it (within 0.1 %), clamped to the exact [min, max] so that a quantile
    /// never lies outside the samples.
    pub fn quantile_s(&self, q: f64) -> f64 {
        match &self.hist {
            Some(h) if self.n > 0 => {
                let v = h.median_equivalent(h.value_at_quantile(q));
                v.clamp(self.min, self.max) as f64 * 1e-9
            }
            _ => f64::NAN,
        }
    }
}

/// Time-weighted average and maximum of a piecewise-constant quantity (a queue length).
#[derive(Clone, Copy, Debug, Default)]
pub struct TimeAverage {
    value: u64,
    since: Instant,
    area: u128,
    max: u64,
}

impl TimeAverage {
    /// The quantity changes to `value` at `now`.
    #[inline]
    pub fn set(&mut self, now: Instant, value: u64) {
        self.area += self.value as u128 * now.saturating_since(self.since).as_nanos() as u128;
        self.since = now;
        self.value = value;
        self.max = self.max.max(value);
    }
    /// Average over [0, now].
    pub fn mean(&self, now: Instant) -> f64 {
        if now.as_nanos() == 0 {
            return self.value as f64;
        }
        let area = self.area + self.value as u128 * now.saturating_since(self.since).as_nanos() as u128;
        area as f64 / now.as_nanos() as f64
    }
    /// Largest value seen.
    pub fn max(&self) -> u64 {
        self.max
    }
    /// Current value.
    pub fn current(&self) -> u64 {
        self.value
    }
}

/// Jain's fairness index, `(sum x)^2 / (n * sum x^2)`: 1 when all values are equal, `1/n`
/// when one takes everything. NaN for an empty list or all zeros.
pub fn jain_index(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let squares: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || squares == 0.0 {
        return f64::NAN;
    }
    sum * sum / (xs.len() as f64 * squares)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_bounds() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0]), 1.0);
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert!(jain_index(&[]).is_nan());
    }

    #[test]
    fn delay_stats_match_direct_computation() {
        let mut s = DelayStats::default();
        let samples = [10u64, 20, 30, 40, 1000];
        for x in samples {
            s.record(Duration::from_millis(x));
        }
        let mean = samples.iter().sum::<u64>() as f64 / 5.0;
        let var = samples.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / 4.0;
        assert!((s.mean_s() - mean / 1e3).abs() < 1e-12);
        assert!((s.stdev_s() - var.sqrt() / 1e3).abs() < 1e-9);
        assert_eq!((s.min_s(), s.max_s()), (0.010, 1.0));
        assert!((s.quantile_s(0.5) - 0.030).abs() < 0.030 * 1e-3);
        assert_eq!(s.quantile_s(1.0), s.max_s());
        assert_eq!(s.quantile_s(0.0), s.min_s());
        // A constant stream: every quantile is exactly the value.
        let mut c = DelayStats::default();
        for _ in 0..100 {
            c.record(Duration(15_082_240));
        }
        assert_eq!(c.quantile_s(0.95), c.max_s());
        assert!(DelayStats::default().mean_s().is_nan());
    }

    #[test]
    fn growing_histogram_gives_the_quantiles_of_a_full_range_one_in_less_memory() {
        // A spread of delays from nanoseconds to beyond the one-hour top (which both clamp).
        let samples: Vec<u64> =
            (0..5000u64).map(|i| (i * 7919 % 5000 + 1) * (1 << (i % 23))).chain([HIST_MAX_NS + 5, 3, 1]).collect();
        let mut full = Histogram::<u64>::new_with_bounds(1, HIST_MAX_NS, 3).unwrap();
        let mut s = DelayStats::default();
        for &x in &samples {
            full.saturating_record(x);
            s.record(Duration(x));
        }
        let h = s.hist.as_ref().unwrap();
        for q in [0.0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0] {
            assert_eq!(h.value_at_quantile(q), full.value_at_quantile(q), "q {q}");
        }
        // Millisecond delays keep the histogram at under half the full range's counters.
        let mut small = DelayStats::default();
        for i in 1..1000u64 {
            small.record(Duration::from_micros(10 * i));
        }
        let len = small.hist.as_ref().unwrap().distinct_values();
        assert!(len * 2 < full.distinct_values(), "{len} vs {}", full.distinct_values());
    }

    #[test]
    fn time_average_integrates_exactly() {
        let mut q = TimeAverage::default();
        q.set(Instant(0), 2); // 2 for 10 ns
        q.set(Instant(10), 6); // 6 for 30 ns
        q.set(Instant(40), 0); // 0 for 60 ns
        assert_eq!(q.mean(Instant(100)), (2.0 * 10.0 + 6.0 * 30.0) / 100.0);
        assert_eq!(q.max(), 6);
    }

    #[test]
    fn merged_delay_stats_equal_one_stream_of_every_sample() {
        let samples: Vec<u64> = (1..=200).map(|i| (i * 7919) % 1000 + 1).collect();
        let mut all = DelayStats::default();
        let (mut a, mut b) = (DelayStats::default(), DelayStats::default());
        for (i, &x) in samples.iter().enumerate() {
            all.record(Duration::from_nanos(x * 1000));
            if i % 3 == 0 { &mut a } else { &mut b }.record(Duration::from_nanos(x * 1000));
        }
        let mut merged = DelayStats::default();
        merged.merge(&a);
        merged.merge(&DelayStats::default());
        merged.merge(&b);
        assert_eq!(merged.count(), all.count());
        for ((name, m), (_, x)) in merged.summary().into_iter().zip(all.summary()) {
            assert!((m - x).abs() <= 1e-12 * x.abs().max(1e-9), "{name}: {m} vs {x}");
        }
    }
}
