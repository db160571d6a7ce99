//! Simulation time: integer nanoseconds, never floating point, never the wall clock.
//!
//! `Instant` is a point on the simulation clock (nanoseconds since the start of the run);
//! `Duration` is a span. Both are plain `u64` newtypes so arithmetic is exact and ordering is
//! total; conversions to and from seconds as `f64` exist only for reporting and for models whose
//! parameters are given as real numbers.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A span of simulated time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

/// A point in simulated time: nanoseconds since the start of the simulation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(pub u64);

impl Duration {
    /// Zero length.
    pub const ZERO: Duration = Duration(0);
    /// The largest representable span (about 584 years).
    pub const MAX: Duration = Duration(u64::MAX);

    /// From nanoseconds.
    pub const fn from_nanos(ns: u64) -> Self {
        Duration(ns)
    }
    /// From microseconds.
    pub const fn from_micros(us: u64) -> Self {
        Duration(us * 1_000)
    }
    /// From milliseconds.
    pub const fn from_millis(ms: u64) -> Self {
        Duration(ms * 1_000_000)
    }
    /// From whole seconds.
    pub const fn from_secs(s: u64) -> Self {
        Duration(s * 1_000_000_000)
    }
    /// From seconds as a real number, rounded to the nearest nanosecond (negative values clamp to 0).
    pub fn from_secs_f64(s: f64) -> Self {
        Duration((s * 1e9).round().max(0.0) as u64)
    }
    /// Nanoseconds.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as a real number (for reporting).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// True for the zero span.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
    /// Sum that saturates at `Duration::MAX` instead of overflowing.
    pub fn saturating_add(self, other: Duration) -> Duration {
        Duration(self.0.saturating_add(other.0))
    }
    /// Multiplication that saturates at `Duration::MAX`.
    pub fn saturating_mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
    /// Time to serialise `bytes` at `rate_bps` bits per second, rounded up to the next nanosecond
    /// (a packet is never on the wire for less time than its bits need).
    pub fn transmission(bytes: usize, rate_bps: u64) -> Duration {
        debug_assert!(rate_bps > 0);
        // 64-bit arithmetic whenever it cannot overflow (any packet size): a 128-bit division
        // is a library call, and this runs for every packet on every link.
        match (bytes as u64).checked_mul(8 * 1_000_000_000) {
            Some(bits) => Duration(bits.div_ceil(rate_bps)),
            None => Duration((bytes as u128 * 8 * 1_000_000_000).div_ceil(rate_bps as u128) as u64),
        }
    }
}

/// A fixed data rate, ready to give serialisation times: [`Duration::transmission`] with the
/// rate's common factor with the bits-to-nanoseconds scale (8 x 10^9) taken out once. At the
/// usual rates (multiples of 1 Mbit/s) what is left to divide by is small, often 1, so a
/// packet's time needs no 64-bit divide (tens of cycles on the processors this runs on, for
/// every packet on every link). The same nanoseconds as `Duration::transmission`, always.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineRate {
    rate_bps: u64,
    /// `8e9 / g` and `rate_bps / g`, `g` their greatest common divisor.
    scale: u64,
    divisor: u64,
}

impl LineRate {
    /// `rate_bps` bits per second (positive).
    pub fn new(rate_bps: u64) -> LineRate {
        debug_assert!(rate_bps > 0);
        const SCALE: u64 = 8 * 1_000_000_000;
        let rate = rate_bps.max(1);
        let (mut g, mut b) = (SCALE, rate);
        while b != 0 {
            (g, b) = (b, g % b);
        }
        LineRate { rate_bps, scale: SCALE / g, divisor: rate / g }
    }

    /// The rate in bits per second.
    pub fn bps(self) -> u64 {
        self.rate_bps
    }

    /// Time to serialise `bytes`: exactly `Duration::transmission(bytes, self.bps())`.
    #[inline]
    pub fn transmission(self, bytes: usize) -> Duration {
        match (bytes as u64).checked_mul(self.scale) {
            Some(units) if self.divisor == 1 => Duration(units),
            Some(units) => Duration(units.div_ceil(self.divisor)),
            None => Duration::transmission(bytes, self.rate_bps),
        }
    }
}

impl Instant {
    /// The start of every simulation.
    pub const ZERO: Instant = Instant(0);
    /// The end of time: used as "never".
    pub const MAX: Instant = Instant(u64::MAX);

    /// From nanoseconds since the start.
    pub const fn from_nanos(ns: u64) -> Self {
        Instant(ns)
    }
    /// Nanoseconds since the start.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds since the start as a real number (for reporting).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// The span from `earlier` to `self`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
    /// `self + d`, saturating at `Instant::MAX`.
    pub fn saturating_add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(self.0 + d.0)
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        self.0 += d.0;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, earlier: Instant) -> Duration {
        Duration(self.0 - earlier.0)
    }
}

impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0 + d.0)
    }
}

impl Sub for Duration {
    type Output = Duration;
    fn sub(self, d: Duration) -> Duration {
        Duration(self.0 - d.0)
    }
}

/// Human-readable with the largest unit that keeps an integer, e.g. `30ms`, `1.5s` is `1500ms`.
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        for (unit, scale) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)] {
            if ns != 0 && ns.is_multiple_of(scale) {
                return write!(f, "{}{}", ns / scale, unit);
            }
        }
        write!(f, "{ns}ns")
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_line_rate_gives_the_transmission_times_of_its_rate() {
        let rates = [
            1,
            3,
            7,
            1_000,
            9_600,
            56_000,
            1_000_000,
            10_000_000,
            54_000_000,
            100_000_000,
            155_520_000,
            1_000_000_000,
            2_500_000_000,
            8_000_000_000,
            40_000_000_000,
            1_000_000_007,
            u64::MAX / 3,
            u64::MAX,
        ];
        let sizes = [0usize, 1, 40, 53, 1_500, 9_000, 65_535, 1 << 31, (u64::MAX / 8_000_000_000) as usize, usize::MAX];
        for rate in rates {
            let line = super::LineRate::new(rate);
            assert_eq!(line.bps(), rate);
            for bytes in sizes {
                assert_eq!(
                    line.transmission(bytes),
                    super::Duration::transmission(bytes, rate),
                    "{bytes} B at {rate} bit/s"
                );
            }
        }
    }

    use super::*;

    #[test]
    fn transmission_time_is_exact_and_rounds_up() {
        // 1500 bytes at 1 Gbit/s: 12 us exactly.
        assert_eq!(Duration::transmission(1500, 1_000_000_000), Duration::from_micros(12));
        // 1 byte at 3 bit/s: 8/3 s = 2.666..s, rounded up to the next nanosecond.
        assert_eq!(Duration::transmission(1, 3), Duration(2_666_666_667));
        // Sizes whose bit count times 10^9 overflows 64 bits take the 128-bit path.
        for bytes in [2_305_843_009, 2_305_843_010, 1 << 40] {
            let exact = (bytes as u128 * 8_000_000_000).div_ceil(1_000_000_007) as u64;
            assert_eq!(Duration::transmission(bytes, 1_000_000_007), Duration(exact));
        }
    }

    #[test]
    fn display_picks_largest_exact_unit() {
        assert_eq!(Duration::from_millis(30).to_string(), "30ms");
        assert_eq!(Duration::from_secs(2).to_string(), "2s");
        assert_eq!(Duration(1500).to_string(), "1500ns");
        assert_eq!(Duration::ZERO.to_string(), "0ns");
    }
}
