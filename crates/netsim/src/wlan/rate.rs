//! Rate control: which rate a station sends its data frames at.
//!
//! - Fixed: always the configured rate.
//! - ARF (Auto Rate Fallback; Kamerman and Monteban, Bell Labs Technical Journal, 1997): after
//!   10 successive acknowledged frames, try the next faster rate; after 2 successive failures,
//!   or a failure of the first frame at a newly tried rate, fall back one rate.
//! - AARF (Adaptive ARF; Lacage, Manshaei and Turletti, MSWiM 2004): as ARF, but a failed probe
//!   doubles the number of successes needed before the next one (up to 50), and falling back
//!   after two failures resets it to 10.

use crate::wlan::phy::Rate;

/// How a station picks its data rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateControl {
    /// Always this rate.
    Fixed(Rate),
    /// Auto Rate Fallback, starting at this rate.
    Arf(Rate),
    /// Adaptive Auto Rate Fallback, starting at this rate.
    Aarf(Rate),
}

impl Default for RateControl {
    fn default() -> Self {
        RateControl::Fixed(Rate::R54)
    }
}

/// Successes before ARF probes a faster rate.
const ARF_SUCCESSES: u32 = 10;
/// Failures in a row before ARF falls back.
const ARF_FAILURES: u32 = 2;
/// AARF's largest success threshold.
const AARF_MAX_SUCCESSES: u32 = 50;

/// A station's rate-control state.
#[derive(Clone, Debug)]
pub struct RateState {
    control: RateControl,
    rate: Rate,
    successes: u32,
    failures: u32,
    /// The current rate is being probed (the previous frame raised it).
    probing: bool,
    /// Successes needed before the next probe.
    threshold: u32,
}

impl RateState {
    /// The initial state of `control`.
    pub fn new(control: RateControl) -> Self {
        let rate = match control {
            RateControl::Fixed(r) | RateControl::Arf(r) | RateControl::Aarf(r) => r,
        };
        RateState { control, rate, successes: 0, failures: 0, probing: false, threshold: ARF_SUCCESSES }
    }

    /// The rate of the next data frame.
    #[inline]
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// A data frame was acknowledged.
    #[inline]
    pub fn on_success(&mut self) {
        if matches!(self.control, RateControl::Fixed(_)) {
            return;
        }
        self.failures = 0;
        self.probing = false;
        self.successes += 1;
        if self.successes >= self.threshold {
            if let Some(faster) = self.rate.faster() {
                self.rate = faster;
                self.probing = true;
            }
            self.successes = 0;
        }
    }

    /// A data frame (or its RTS) went unacknowledged.
    #[inline]
    pub fn on_failure(&mut self) {
        if matches!(self.control, RateControl::Fixed(_)) {
            return;
        }
        self.successes = 0;
        self.failures += 1;
        let adaptive = matches!(self.control, RateControl::Aarf(_));
        if self.probing {
            // The probe failed: back to the rate that worked.
            self.probing = false;
            self.failures = 0;
            self.rate = self.rate.slower().unwrap_or(self.rate);
            if adaptive {
                self.threshold = (self.threshold * 2).min(AARF_MAX_SUCCESSES);
            }
        } else if self.failures >= ARF_FAILURES {
            self.failures = 0;
            self.rate = self.rate.slower().unwrap_or(self.rate);
            if adaptive {
                self.threshold = ARF_SUCCESSES;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_never_moves() {
        let mut s = RateState::new(RateControl::Fixed(Rate::R36));
        (0..100).for_each(|_| s.on_failure());
        assert_eq!(s.rate(), Rate::R36);
    }

    #[test]
    fn arf_climbs_after_ten_and_falls_after_two() {
        let mut s = RateState::new(RateControl::Arf(Rate::R24));
        (0..9).for_each(|_| s.on_success());
        assert_eq!(s.rate(), Rate::R24);
        s.on_success();
        assert_eq!(s.rate(), Rate::R36);
        s.on_failure(); // the probe fails at once
        assert_eq!(s.rate(), Rate::R24);
        s.on_failure();
        assert_eq!(s.rate(), Rate::R24);
        s.on_failure();
        assert_eq!(s.rate(), Rate::R18);
    }

    #[test]
    fn aarf_doubles_the_threshold_after_a_failed_probe() {
        let mut s = RateState::new(RateControl::Aarf(Rate::R24));
        (0..10).for_each(|_| s.on_success());
        s.on_failure();
        assert_eq!(s.rate(), Rate::R24);
        (0..19).for_each(|_| s.on_success());
        assert_eq!(s.rate(), Rate::R24, "20 successes are needed now");
        s.on_success();
        assert_eq!(s.rate(), Rate::R36);
    }
}
