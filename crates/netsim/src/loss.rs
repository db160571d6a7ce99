//! Random loss on a link direction: Bernoulli and Gilbert–Elliott.
//!
//! Each link direction owns a [`LossModel`] and its own random stream; the model is asked once
//! per packet that crosses the link.

use rand::Rng;

use crate::rng::SimRng;

/// Configuration of a loss process.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LossConfig {
    /// No random loss.
    None,
    /// Each packet is lost independently with probability `p`.
    Bernoulli {
        /// Loss probability per packet, in [0, 1].
        p: f64,
    },
    /// Two-state Markov chain (Gilbert–Elliott): in state Good packets are lost with
    /// probability `loss_good`, in state Bad with `loss_bad`; after each packet the state moves
    /// Good→Bad with probability `p_good_bad` and Bad→Good with `p_bad_good`. The chain starts
    /// in Good. Mean loss = (p_gb·loss_bad + p_bg·loss_good) / (p_gb + p_bg).
    GilbertElliott {
        /// Probability of moving from Good to Bad after a packet.
        p_good_bad: f64,
        /// Probability of moving from Bad to Good after a packet.
        p_bad_good: f64,
        /// Loss probability in Good.
        loss_good: f64,
        /// Loss probability in Bad.
        loss_bad: f64,
    },
}

impl LossConfig {
    /// Long-run mean loss probability of the process.
    pub fn mean_loss(&self) -> f64 {
        match *self {
            LossConfig::None => 0.0,
            LossConfig::Bernoulli { p } => p,
            LossConfig::GilbertElliott { p_good_bad, p_bad_good, loss_good, loss_bad } => {
                let denom = p_good_bad + p_bad_good;
                if denom == 0.0 {
                    loss_good
                } else {
                    (p_good_bad * loss_bad + p_bad_good * loss_good) / denom
                }
            }
        }
    }
}

/// A loss process with its state.
#[derive(Clone, Debug)]
pub struct LossModel {
    config: LossConfig,
    bad: bool,
}

impl LossModel {
    /// A fresh process (Gilbert–Elliott starts in Good).
    pub fn new(config: LossConfig) -> Self {
        LossModel { config, bad: false }
    }

    /// True if there is no random loss at all (lets the caller skip drawing numbers).
    pub fn is_none(&self) -> bool {
        matches!(self.config, LossConfig::None)
    }

    /// Decide the fate of one packet: `true` means lost.
    pub fn lose(&mut self, rng: &mut SimRng) -> bool {
        match self.config {
            LossConfig::None => false,
            LossConfig::Bernoulli { p } => rng.random::<f64>() < p,
            LossConfig::GilbertElliott { p_good_bad, p_bad_good, loss_good, loss_bad } => {
                let lost = rng.random::<f64>() < if self.bad { loss_bad } else { loss_good };
                let flip = if self.bad { p_bad_good } else { p_good_bad };
                if rng.random::<f64>() < flip {
                    self.bad = !self.bad;
                }
                lost
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RngTree;

    fn rate(config: LossConfig, n: usize) -> f64 {
        let mut m = LossModel::new(config);
        let mut rng = RngTree::new(42).stream("loss");
        (0..n).filter(|_| m.lose(&mut rng)).count() as f64 / n as f64
    }

    #[test]
    fn bernoulli_rate_matches_p() {
        for p in [0.001, 0.01, 0.1, 0.5] {
            let r = rate(LossConfig::Bernoulli { p }, 1_000_000);
            // 5 binomial standard deviations.
            let tol = 5.0 * (p * (1.0 - p) / 1e6f64).sqrt();
            assert!((r - p).abs() < tol, "p={p} measured {r}");
        }
        assert_eq!(rate(LossConfig::Bernoulli { p: 0.0 }, 10_000), 0.0);
        assert_eq!(rate(LossConfig::Bernoulli { p: 1.0 }, 10_000), 1.0);
    }

    #[test]
    fn gilbert_elliott_rate_and_burstiness() {
        let cfg = LossConfig::GilbertElliott { p_good_bad: 0.01, p_bad_good: 0.2, loss_good: 0.0, loss_bad: 0.8 };
        let expected = cfg.mean_loss();
        assert!((expected - 0.01 * 0.8 / 0.21).abs() < 1e-12);
        let r = rate(cfg, 2_000_000);
        assert!((r - expected).abs() < 0.004, "expected {expected}, measured {r}");
        // Losses come in bursts: P(loss | previous lost) is far above the mean.
        let mut m = LossModel::new(cfg);
        let mut rng = RngTree::new(3).stream("loss");
        let (mut after_loss, mut both) = (0u32, 0u32);
        let mut prev = false;
        for _ in 0..1_000_000 {
            let l = m.lose(&mut rng);
            if prev {
                after_loss += 1;
                both += l as u32;
            }
            prev = l;
        }
        assert!(both as f64 / after_loss as f64 > 0.5);
    }
}
