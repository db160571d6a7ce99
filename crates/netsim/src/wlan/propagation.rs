//! Radio propagation: path loss between two positions, optional log-normal shadowing, and the
//! unit conversions between dBm and mW.
//!
//! - Free space (Friis): `L(d) = 20 log10(4 pi d f / c)` dB.
//! - Log-distance: `L(d) = L(d0) + 10 n log10(d / d0)` dB for `d >= d0` (and `L(d0)` closer),
//!   with `L(d0)` the free-space loss at the reference distance `d0` unless given (as ns-3's
//!   `LogDistancePropagationLossModel`, whose defaults are `n = 3`, `d0 = 1 m`).
//! - Shadowing: a zero-mean normal variable of standard deviation `sigma` dB added to the loss
//!   of each (transmitter, receiver) pair, drawn once per pair from the channel's named random
//!   stream (`wlan/<channel>/shadowing`): slow fading that does not change while nodes stand
//!   still.

use rand_distr::{Distribution, Normal};

use crate::rng::SimRng;
use crate::wlan::position::Position;

/// Speed of light in m/s.
pub const SPEED_OF_LIGHT: f64 = 299_792_458.0;

/// Centre frequency in Hz of a 2.4 GHz channel 1..=13 (§17.3.8.4.2 for OFDM in 2.4 GHz, as
/// 802.11g uses the DSSS channel plan, §15.4.4.3: 2407 + 5 n MHz).
pub fn channel_frequency_hz(channel: u8) -> f64 {
    (2407.0 + 5.0 * channel as f64) * 1e6
}

/// dBm to milliwatts.
#[inline]
pub fn dbm_to_mw(dbm: f64) -> f64 {
    10f64.powf(dbm / 10.0)
}

/// Milliwatts to dBm.
#[inline]
pub fn mw_to_dbm(mw: f64) -> f64 {
    10.0 * mw.log10()
}

/// How path loss grows with distance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PathLoss {
    /// Friis free-space loss at the channel's frequency.
    FreeSpace,
    /// Log-distance loss.
    LogDistance {
        /// Path-loss exponent `n` (2 in free space, 2.7..3.5 indoors and in cities).
        exponent: f64,
        /// Reference distance `d0` in metres.
        reference_distance: f64,
        /// Loss at `d0` in dB; `None`: free-space loss at `d0`.
        reference_loss_db: Option<f64>,
    },
}

impl Default for PathLoss {
    /// Log-distance with exponent 3 from free space at 1 m.
    fn default() -> Self {
        PathLoss::LogDistance { exponent: 3.0, reference_distance: 1.0, reference_loss_db: None }
    }
}

/// Free-space loss in dB at distance `d` metres and frequency `f` Hz (distances below 1 cm
/// count as 1 cm, so co-located nodes get a finite loss).
pub fn free_space_db(d: f64, f: f64) -> f64 {
    let d = d.max(0.01);
    20.0 * (4.0 * std::f64::consts::PI * d * f / SPEED_OF_LIGHT).log10()
}

impl PathLoss {
    /// The distance in metres at which the loss reaches `loss_db` at `f` Hz (the inverse of
    /// [`PathLoss::loss_db`]; for log-distance a loss at or below the reference loss gives the
    /// reference distance, and free space counts distances from 1 cm as `loss_db` does).
    pub fn distance_for_loss(&self, loss_db: f64, f: f64) -> f64 {
        match *self {
            PathLoss::FreeSpace => {
                (SPEED_OF_LIGHT / (4.0 * std::f64::consts::PI * f) * 10f64.powf(loss_db / 20.0)).max(0.01)
            }
            PathLoss::LogDistance { exponent, reference_distance, reference_loss_db } => {
                let d0 = reference_distance.max(0.01);
                let l0 = reference_loss_db.unwrap_or_else(|| free_space_db(d0, f));
                if loss_db <= l0 || exponent <= 0.0 {
                    d0
                } else {
                    d0 * 10f64.powf((loss_db - l0) / (10.0 * exponent))
                }
            }
        }
    }

    /// The same model with the reference loss at `f` Hz worked out once (log-distance without
    /// a given `L(d0)`): every loss and distance is the same to the last bit, one logarithm
    /// cheaper.
    pub fn at_frequency(self, f: f64) -> PathLoss {
        match self {
            PathLoss::FreeSpace => self,
            PathLoss::LogDistance { exponent, reference_distance, reference_loss_db } => PathLoss::LogDistance {
                exponent,
                reference_distance,
                reference_loss_db: Some(
                    reference_loss_db.unwrap_or_else(|| free_space_db(reference_distance.max(0.01), f)),
                ),
            },
        }
    }

    /// Loss in dB over `d` metres at `f` Hz.
    pub fn loss_db(&self, d: f64, f: f64) -> f64 {
        match *self {
            PathLoss::FreeSpace => free_space_db(d, f),
            PathLoss::LogDistance { exponent, reference_distance, reference_loss_db } => {
                let d0 = reference_distance.max(0.01);
                let l0 = reference_loss_db.unwrap_or_else(|| free_space_db(d0, f));
                if d <= d0 {
                    l0
                } else {
                    l0 + 10.0 * exponent * (d / d0).log10()
                }
            }
        }
    }
}

/// The propagation model of a channel.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Propagation {
    /// Path loss.
    pub path_loss: PathLoss,
    /// Standard deviation of log-normal shadowing in dB (0: none).
    pub shadowing_sigma_db: f64,
}

impl Propagation {
    /// Received power in dBm of a transmission at `tx_dbm` from `a` to `b` on frequency `f`,
    /// plus a shadowing term drawn from `rng` when shadowing is on.
    pub fn rx_dbm(&self, tx_dbm: f64, a: Position, b: Position, f: f64, rng: &mut SimRng) -> f64 {
        tx_dbm - self.path_loss.loss_db(a.distance(&b), f) - self.shadowing_db(rng)
    }

    /// One shadowing draw in dB (0 without shadowing: nothing is drawn then).
    pub fn shadowing_db(&self, rng: &mut SimRng) -> f64 {
        if self.shadowing_sigma_db <= 0.0 {
            return 0.0;
        }
        match Normal::new(0.0, self.shadowing_sigma_db) {
            Ok(n) => n.sample(rng),
            Err(_) => 0.0, // a non-finite sigma: no shadowing
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RngTree;

    #[test]
    fn friis_at_one_metre_on_channel_1() {
        // 20 log10(4 pi * 2.412e9 / c) = 40.09 dB.
        let l = free_space_db(1.0, channel_frequency_hz(1));
        assert!((l - 40.094).abs() < 0.01, "{l}");
        assert!((free_space_db(10.0, channel_frequency_hz(1)) - l - 20.0).abs() < 1e-9);
        assert_eq!(channel_frequency_hz(6), 2.437e9);
        assert_eq!(channel_frequency_hz(13), 2.472e9);
    }

    #[test]
    fn log_distance_grows_by_ten_n_per_decade() {
        let f = channel_frequency_hz(1);
        let model = PathLoss::LogDistance { exponent: 3.0, reference_distance: 1.0, reference_loss_db: Some(46.6777) };
        assert!((model.loss_db(10.0, f) - 76.6777).abs() < 1e-9);
        assert!((model.loss_db(100.0, f) - 106.6777).abs() < 1e-9);
        assert_eq!(model.loss_db(0.5, f), 46.6777);
        let default = PathLoss::default();
        assert!((default.loss_db(10.0, f) - (free_space_db(1.0, f) + 30.0)).abs() < 1e-9);
        let resolved = default.at_frequency(f);
        for d in [0.001, 0.5, 1.0, 7.3, 254.0, 1e4] {
            assert_eq!(resolved.loss_db(d, f).to_bits(), default.loss_db(d, f).to_bits());
            let l = 40.0 + d.min(100.0);
            assert_eq!(resolved.distance_for_loss(l, f).to_bits(), default.distance_for_loss(l, f).to_bits());
        }
    }

    #[test]
    fn power_conversions() {
        assert!((dbm_to_mw(20.0) - 100.0).abs() < 1e-9);
        assert!((mw_to_dbm(1.0)).abs() < 1e-12);
        assert!((mw_to_dbm(dbm_to_mw(-93.7)) + 93.7).abs() < 1e-9);
    }

    #[test]
    fn shadowing_draws_only_when_on() {
        let mut rng = RngTree::new(1).stream("s");
        let (a, b) = (Position { x: 0.0, y: 0.0 }, Position { x: 10.0, y: 0.0 });
        let f = channel_frequency_hz(1);
        let plain = Propagation::default();
        assert_eq!(plain.rx_dbm(16.0, a, b, f, &mut rng), 16.0 - plain.path_loss.loss_db(10.0, f));
        let shadowed = Propagation { shadowing_sigma_db: 4.0, ..plain };
        let draws: Vec<f64> = (0..2000).map(|_| shadowed.shadowing_db(&mut rng)).collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let sd = (draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / draws.len() as f64).sqrt();
        assert!(mean.abs() < 0.3 && (sd - 4.0).abs() < 0.3, "{mean} {sd}");
    }
}
