//! Frame errors from the signal-to-interference-plus-noise ratio: the NIST OFDM error-rate
//! model (G. Pei and T. R. Henderson, "Validation of OFDM error rate model in ns-3", Boeing,
//! 2010; as ns-3's `NistErrorRateModel`).
//!
//! For a rate's subcarrier modulation, the uncoded bit error probability at SINR `s` (linear)
//! is
//!
//! ```text
//! BPSK    p = 1/2 erfc(sqrt(s))
//! QPSK    p = 1/2 erfc(sqrt(s / 2))
//! 16-QAM  p = 3/4 * 1/2 erfc(sqrt(s / 10))
//! 64-QAM  p = 7/12 * 1/2 erfc(sqrt(s / 42))
//! ```
//!
//! and the coded bit error probability after Viterbi decoding is bounded by the union bound
//! over the code's distance spectrum, with the Bhattacharyya parameter `D = sqrt(4 p (1-p))`:
//! `Pb <= 1/(2b) sum_d c_d D^d`, with `b = 1` and the spectrum of the rate-1/2 K = 7 code for
//! coding rate 1/2, and the punctured codes' spectra for 2/3 (`b = 2`) and 3/4 (`b = 3`)
//! (Haccoun and Begin, IEEE Trans. Commun. 37(11), 1989; the first ten terms). A frame of `n`
//! bits is received whole with probability `(1 - Pb)^n`.

use crate::wlan::phy::{CodeRate, Modulation, Rate};

/// Probability that `bits` bits sent at `rate` arrive without error at linear SINR `sinr`.
pub fn success_probability(rate: Rate, sinr: f64, bits: u64) -> f64 {
    frame_success(coded_ber(rate, sinr), bits)
}

/// Probability that `bits` bits arrive without error at coded bit error probability `ber`:
/// `(1 - ber)^bits`, exactly 1 when `1 - ber` rounds to 1 (no power is computed then).
#[inline]
pub fn frame_success(ber: f64, bits: u64) -> f64 {
    let keep = 1.0 - ber;
    if keep >= 1.0 {
        return 1.0;
    }
    keep.powf(bits as f64)
}

/// Coded bit error probability at `rate` and linear SINR `sinr` (at most 1).
pub fn coded_ber(rate: Rate, sinr: f64) -> f64 {
    let p = uncoded_ber(rate.modulation(), sinr.max(0.0));
    if p <= 0.0 {
        return 0.0;
    }
    let d = (4.0 * p * (1.0 - p)).sqrt();
    let (b, first, spectrum): (f64, i32, &[f64]) = match rate.code_rate() {
        // Rate 1/2, free distance 10, even distances only.
        CodeRate::Half => (1.0, 10, &HALF),
        CodeRate::TwoThirds => (2.0, 6, &TWO_THIRDS),
        CodeRate::ThreeQuarters => (3.0, 5, &THREE_QUARTERS),
    };
    let step = if rate.code_rate() == CodeRate::Half { 2 } else { 1 };
    // d, d^2, d^4, d^8, d^16: every power the spectra need (up to d^26) is a product of them.
    let mut squares = [d; 5];
    for k in 1..squares.len() {
        squares[k] = squares[k - 1] * squares[k - 1];
    }
    let mut sum = 0.0;
    for (i, c) in spectrum.iter().enumerate() {
        sum += c * powi(&squares, (first + step * i as i32) as u32);
    }
    (sum / (2.0 * b)).min(1.0)
}

/// `d^n` from `squares = [d, d^2, d^4, d^8, d^16]` (n < 32), multiplied in the order of
/// exponentiation by squaring from the lowest bit, as `f64::powi` does at run time
/// (compiler-rt's `__powidf2`): the same value to the last bit, without the call and the
/// squarings each power would repeat.
#[inline]
fn powi(squares: &[f64; 5], n: u32) -> f64 {
    debug_assert!(n < 32);
    let mut r = 1.0;
    for (k, s) in squares.iter().enumerate() {
        if n & (1 << k) != 0 {
            r *= s;
        }
    }
    r
}

/// The lowest linear SINR from which every frame at `rate` arrives whole for certain:
/// `coded_ber` is below 1e-30 from there on, so `1 - ber` rounds to exactly 1 and
/// [`frame_success`] is exactly 1 for any length. A receiver at or above it needs neither the
/// error model nor a random draw, with the same outcome.
pub fn certain_sinr(rate: Rate) -> f64 {
    // coded_ber falls monotonically with the SINR; bisect in decibels between 0 and 100 dB,
    // then step up past the last wobble of the floating point.
    let below = |db: f64| coded_ber(rate, 10f64.powf(db / 10.0)) < 1e-30;
    let (mut lo, mut hi) = (0.0_f64, 100.0_f64);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if below(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    10f64.powf((hi + 0.1) / 10.0)
}

/// Distance spectrum of the rate-1/2 code (d = 10, 12, ..., 26).
const HALF: [f64; 9] = [36.0, 211.0, 1404.0, 11633.0, 77433.0, 502690.0, 3322763.0, 21292910.0, 134365911.0];
/// Distance spectrum of the punctured rate-2/3 code (d = 6, 7, ..., 15).
const TWO_THIRDS: [f64; 10] = [3.0, 70.0, 285.0, 1276.0, 6160.0, 27128.0, 117019.0, 498860.0, 2103891.0, 8784123.0];
/// Distance spectrum of the punctured rate-3/4 code (d = 5, 6, ..., 14).
const THREE_QUARTERS: [f64; 10] =
    [42.0, 201.0, 1492.0, 10469.0, 62935.0, 379644.0, 2253373.0, 13073811.0, 75152755.0, 428005675.0];

/// Uncoded bit error probability of a subcarrier modulation at linear SNR `s`.
pub fn uncoded_ber(m: Modulation, s: f64) -> f64 {
    match m {
        Modulation::Bpsk => 0.5 * erfc(s.sqrt()),
        Modulation::Qpsk => 0.5 * erfc((s / 2.0).sqrt()),
        Modulation::Qam16 => 0.75 * 0.5 * erfc((s / 10.0).sqrt()),
        Modulation::Qam64 => 7.0 / 12.0 * 0.5 * erfc((s / 42.0).sqrt()),
    }
}

/// The complementary error function, with a fractional error below 1.2e-7 everywhere
/// (Chebyshev fit of Press et al., Numerical Recipes, 2nd ed., §6.2, `erfcc`).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(x: f64) -> f64 {
        10f64.powf(x / 10.0)
    }

    #[test]
    fn erfc_matches_reference_values() {
        // Abramowitz and Stegun, Table 7.1.
        for (x, want) in
            [(0.0, 1.0), (0.5, 0.479_500_122), (1.0, 0.157_299_207), (2.0, 0.004_677_735), (3.0, 2.209_05e-5)]
        {
            assert!((erfc(x) - want).abs() / want < 2e-7, "erfc({x}) = {}", erfc(x));
        }
        assert!((erfc(-1.0) - (2.0 - 0.157_299_207)).abs() < 1e-7);
    }

    #[test]
    fn uncoded_bpsk_at_ten_db() {
        // 1/2 erfc(sqrt(10)) = 3.872e-6.
        let p = uncoded_ber(Modulation::Bpsk, 10.0);
        assert!((p - 3.872e-6).abs() < 1e-8, "{p}");
    }

    #[test]
    fn faster_rates_need_more_snr() {
        // A 1500-byte frame: nearly always through at 25 dB for every rate; at 10 dB only the
        // robust rates get it through, and each faster rate needs more SNR.
        let bits = 1536 * 8;
        for r in Rate::ALL {
            assert!(success_probability(r, db(25.0), bits) > 0.99, "{r:?}");
        }
        assert!(success_probability(Rate::R6, db(10.0), bits) > 0.99);
        assert!(success_probability(Rate::R54, db(10.0), bits) < 1e-6);
        let threshold =
            |r: Rate| (0..400).map(|i| i as f64 / 10.0).find(|&s| success_probability(r, db(s), bits) > 0.9);
        let needed: Vec<f64> = Rate::ALL.into_iter().filter_map(threshold).collect();
        assert_eq!(needed.len(), 8);
        assert!(needed.windows(2).all(|w| w[0] < w[1]), "{needed:?}");
    }

    /// The reference: `f64::powi` for each power.
    fn coded_ber_with_powi(rate: Rate, sinr: f64) -> f64 {
        let p = uncoded_ber(rate.modulation(), sinr.max(0.0));
        if p <= 0.0 {
            return 0.0;
        }
        let d = (4.0 * p * (1.0 - p)).sqrt();
        let (b, first, step, spectrum): (f64, i32, i32, &[f64]) = match rate.code_rate() {
            CodeRate::Half => (1.0, 10, 2, &HALF),
            CodeRate::TwoThirds => (2.0, 6, 1, &TWO_THIRDS),
            CodeRate::ThreeQuarters => (3.0, 5, 1, &THREE_QUARTERS),
        };
        let sum: f64 = spectrum.iter().enumerate().map(|(i, c)| c * d.powi(first + step * i as i32)).sum();
        (sum / (2.0 * b)).min(1.0)
    }

    #[test]
    fn powers_from_squares_match_powi_bit_for_bit() {
        for r in Rate::ALL {
            for i in 0..4000 {
                let sinr = db(-10.0 + i as f64 * 0.0137);
                assert_eq!(coded_ber(r, sinr).to_bits(), coded_ber_with_powi(r, sinr).to_bits(), "{r:?} {sinr}");
            }
        }
    }

    #[test]
    fn above_the_certain_sinr_every_frame_arrives() {
        for r in Rate::ALL {
            let s = certain_sinr(r);
            // Not far above where frames start to fail, and exactly 1 from there on.
            assert!(success_probability(r, s / db(10.0), 12_288) < 1.0, "{r:?} {s}");
            for i in 0..20_000 {
                let sinr = s * db(i as f64 * 0.005);
                assert_eq!(success_probability(r, sinr, 1 << 20), 1.0, "{r:?} {sinr}");
            }
        }
    }

    #[test]
    fn strong_signals_give_certain_success() {
        // No random draw is needed: exactly 1.
        assert_eq!(success_probability(Rate::R54, db(40.0), 12_288), 1.0);
        assert_eq!(success_probability(Rate::R6, 0.0, 100), (1.0 - coded_ber(Rate::R6, 0.0)).powf(100.0));
    }
}
