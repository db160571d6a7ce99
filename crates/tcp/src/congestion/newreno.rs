//! RFC 5681 window management (the "Reno" in NewReno; RFC 6582 recovery is the connection's).

use simtime::Instant;

use super::{AckInfo, Controller};

/// RFC 5681 slow start and congestion avoidance, with byte counting.
#[derive(Debug, Clone)]
pub struct NewReno {
    smss: u64,
    cwnd: u64,
    ssthresh: u64,
    /// Bytes acknowledged since cwnd last grew in congestion avoidance.
    acked_in_ca: u64,
}

impl NewReno {
    /// Initial window `iw` bytes, sender MSS `smss`.
    pub fn new(smss: u64, iw: u64) -> Self {
        NewReno { smss, cwnd: iw.max(smss), ssthresh: u64::MAX, acked_in_ca: 0 }
    }

    fn halve(&mut self, flight: u64) {
        // RFC 5681 §3.1, eq. (4): ssthresh = max(FlightSize / 2, 2*SMSS).
        self.ssthresh = (flight / 2).max(2 * self.smss);
        self.acked_in_ca = 0;
    }
}

impl Controller for NewReno {
    fn window(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn on_ack(&mut self, ack: &AckInfo) {
        if self.cwnd < self.ssthresh {
            // RFC 5681 §3.1, eq. (2): cwnd += min(N, SMSS) per ACK in slow start.
            self.cwnd += ack.acked.min(self.smss);
        } else {
            // RFC 5681 §3.1: one SMSS per window of acknowledged bytes (byte counting,
            // RFC 3465), the recommended alternative to eq. (3).
            self.acked_in_ca += ack.acked;
            if self.acked_in_ca >= self.cwnd {
                self.acked_in_ca -= self.cwnd;
                self.cwnd += self.smss;
            }
        }
    }
    fn on_congestion_event(&mut self, _now: Instant, flight: u64) {
        self.halve(flight);
        // RFC 6582 §3.2 step 2 / RFC 6675 §5 step 4.2: cwnd = ssthresh (the connection adds
        // the NewReno inflation of 3*SMSS itself).
        self.cwnd = self.ssthresh;
    }
    fn on_recovery_exit(&mut self, _now: Instant, flight: u64) {
        // RFC 6582 §3.2 step 3, option (1): cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS).
        self.cwnd = self.ssthresh.min(flight.max(self.smss) + self.smss);
    }
    fn on_timeout(&mut self, _now: Instant, flight: u64, reduce: bool) {
        // RFC 5681 §3.1: ssthresh per eq. (4), then cwnd = loss window = 1 SMSS.
        if reduce {
            self.halve(flight);
        }
        self.acked_in_ca = 0;
        self.cwnd = self.smss;
    }
}
