//! Round-trip time estimation and the retransmission timeout (RFC 6298).

use simtime::Duration;

/// RFC 6298 §2: SRTT, RTTVAR and RTO.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    min_rtt: Option<Duration>,
    latest: Option<Duration>,
    rto: Duration,
    /// Multiplier from exponential backoff (§5.5), reset by a new RTT sample.
    backoff: u32,
    min_rto: Duration,
    max_rto: Duration,
    /// Clock granularity G.
    granularity: Duration,
}

impl RttEstimator {
    /// RTO starts at `initial` (§2.1), and stays within [`min_rto`, `max_rto`] (§2.4, §2.5).
    pub fn new(initial: Duration, min_rto: Duration, max_rto: Duration) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            min_rtt: None,
            latest: None,
            rto: initial,
            backoff: 0,
            min_rto,
            max_rto,
            granularity: Duration::from_millis(1),
        }
    }

    /// Take a measurement (§2.2 first, §2.3 later ones; alpha = 1/8, beta = 1/4).
    pub fn sample(&mut self, r: Duration) {
        self.latest = Some(r);
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Duration(r.0 / 2);
            }
            Some(srtt) => {
                let err = srtt.0.abs_diff(r.0);
                self.rttvar = Duration((3 * self.rttvar.0 + err) / 4);
                self.srtt = Some(Duration((7 * srtt.0 + r.0) / 8));
            }
        }
        let srtt = self.srtt.unwrap_or(r);
        self.rto = srtt.saturating_add(self.granularity.max(Duration(4 * self.rttvar.0)));
        // §5.7 note: a new sample after backoff lets the RTO collapse to the computed value.
        self.backoff = 0;
    }

    /// Double the timer (§5.5), up to the maximum.
    pub fn back_off(&mut self) {
        self.backoff = (self.backoff + 1).min(30);
    }

    /// The current RTO, backoff applied and clamped.
    pub fn rto(&self) -> Duration {
        self.rto.max(self.min_rto).saturating_mul(1 << self.backoff).min(self.max_rto)
    }

    /// Smoothed RTT.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }
    /// RTT variation.
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }
    /// Smallest sample.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }
    /// Most recent sample.
    pub fn latest(&self) -> Option<Duration> {
        self.latest
    }
    /// Consecutive backoffs.
    pub fn backoffs(&self) -> u32 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc6298_formulae() {
        let mut e = RttEstimator::new(Duration::from_secs(1), Duration::from_millis(200), Duration::from_secs(60));
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.sample(Duration::from_millis(100));
        // SRTT = 100 ms, RTTVAR = 50 ms, RTO = 100 + 4*50 = 300 ms.
        assert_eq!(e.rto(), Duration::from_millis(300));
        e.sample(Duration::from_millis(100));
        // RTTVAR = 3/4 * 50 = 37.5 ms; RTO = 100 + 150 = 250 ms.
        assert_eq!(e.rto(), Duration::from_millis(250));
        e.back_off();
        e.back_off();
        assert_eq!(e.rto(), Duration::from_millis(1000));
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
    }
}
