//! CUBIC (RFC 9438): a window that grows as a cubic function of the time since the last
//! congestion event, with a Reno-friendly region and fast convergence.

use simtime::{Duration, Instant};

use super::{AckInfo, Controller};

/// RFC 9438 §5.1: C = 0.4.
const C: f64 = 0.4;
/// RFC 9438 §4.6: beta_cubic = 0.7.
const BETA: f64 = 0.7;

/// The CUBIC controller. Windows are kept in segments as `f64` (as RFC 9438 writes them).
#[derive(Debug, Clone)]
pub struct Cubic {
    smss: f64,
    /// Congestion window in segments.
    cwnd: f64,
    /// Slow-start threshold in segments (infinite before the first event).
    ssthresh: f64,
    /// W_max: the window just before the last reduction (§4.2).
    w_max: f64,
    /// Previous W_max, for fast convergence (§4.7).
    w_last_max: f64,
    /// K: time to climb back to W_max (§4.2, eq. 2), seconds.
    k: f64,
    /// Start of the current congestion-avoidance epoch.
    epoch_start: Option<Instant>,
    /// W_est: the Reno-friendly estimate (§4.3), segments.
    w_est: f64,
    /// cwnd at the start of the epoch (for W_est's starting point).
    cwnd_epoch: f64,
}

impl Cubic {
    /// Initial window `iw` bytes, sender MSS `smss`.
    pub fn new(smss: u64, iw: u64) -> Self {
        let smss = smss as f64;
        Cubic {
            smss,
            cwnd: (iw as f64 / smss).max(1.0),
            ssthresh: f64::INFINITY,
            w_max: 0.0,
            w_last_max: 0.0,
            k: 0.0,
            epoch_start: None,
            w_est: 0.0,
            cwnd_epoch: 0.0,
        }
    }

    fn reduce(&mut self, flight: u64) {
        // §4.6: the reduction is computed from cwnd (RFC 9438 allows flight size too; cwnd is
        // what Linux and ns-3 use). §4.7 fast convergence.
        let _ = flight;
        self.w_max = if self.cwnd < self.w_last_max { self.cwnd * (1.0 + BETA) / 2.0 } else { self.cwnd };
        self.w_last_max = self.w_max;
        self.ssthresh = (self.cwnd * BETA).max(2.0);
        self.epoch_start = None;
    }

    fn w_cubic(&self, t: f64) -> f64 {
        C * (t - self.k).powi(3) + self.w_max
    }
}

impl Controller for Cubic {
    fn window(&self) -> u64 {
        (self.cwnd * self.smss) as u64
    }
    fn ssthresh(&self) -> u64 {
        if self.ssthresh.is_finite() {
            (self.ssthresh * self.smss) as u64
        } else {
            u64::MAX
        }
    }
    fn on_ack(&mut self, ack: &AckInfo) {
        let acked = ack.acked as f64 / self.smss;
        if self.cwnd < self.ssthresh {
            // §4.10: slow start as RFC 5681 (at most one SMSS per ACK).
            self.cwnd += acked.min(1.0);
            return;
        }
        let epoch = *self.epoch_start.get_or_insert_with(|| {
            // §4.2: a new epoch; K from eq. (2) with cwnd_epoch the window now.
            self.cwnd_epoch = self.cwnd;
            self.k = if self.w_max > self.cwnd { ((self.w_max - self.cwnd) / C).cbrt() } else { 0.0 };
            if self.w_max < self.cwnd {
                self.w_max = self.cwnd;
            }
            self.w_est = self.cwnd;
            ack.now
        });
        let t = ack.now.saturating_since(epoch).as_secs_f64();
        let rtt = ack.srtt.unwrap_or(Duration::from_millis(100)).as_secs_f64();
        // §4.3: Reno-friendly estimate, alpha_cubic = 3 (1 - beta) / (1 + beta).
        let alpha = 3.0 * (1.0 - BETA) / (1.0 + BETA);
        self.w_est += alpha * acked / self.cwnd;
        // §4.4 / §4.5: target = W_cubic(t + RTT), clamped to [cwnd, 1.5 cwnd].
        let target = self.w_cubic(t + rtt).clamp(self.cwnd, 1.5 * self.cwnd);
        if self.w_cubic(t) < self.w_est {
            self.cwnd = self.cwnd.max(self.w_est);
        } else {
            self.cwnd += (target - self.cwnd) / self.cwnd * acked;
        }
    }
    fn on_congestion_event(&mut self, _now: Instant, flight: u64) {
        self.reduce(flight);
        self.cwnd = self.ssthresh;
    }
    fn on_timeout(&mut self, _now: Instant, flight: u64, reduce: bool) {
        // §4.8: ssthresh as for a congestion event, cwnd = 1 SMSS, new epoch afterwards.
        if reduce {
            self.reduce(flight);
        }
        self.epoch_start = None;
        self.cwnd = 1.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduction_and_regrowth_follow_the_cubic() {
        let mut c = Cubic::new(1000, 100_000);
        c.ssthresh = 50.0; // in congestion avoidance
        c.on_congestion_event(Instant::ZERO, 100_000);
        assert_eq!(c.window(), 70_000);
        assert_eq!(c.ssthresh(), 70_000);
        // K = cbrt(100 * 0.3 / 0.4) = cbrt(75) = 4.217 s: the window is back near W_max then.
        let mut now = Instant::ZERO;
        while now < Instant::from_nanos(4_217_000_000) {
            now += Duration::from_millis(10);
            let acked = c.window() / 10; // a window per 100 ms RTT, ACKs every 10 ms
            c.on_ack(&AckInfo { now, acked, srtt: Some(Duration::from_millis(100)), min_rtt: None, in_flight: 0 });
        }
        let w = c.window() as f64 / 1000.0;
        assert!((95.0..=106.0).contains(&w), "{w}");
    }
}
