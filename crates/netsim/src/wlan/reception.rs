//! Whether a frame arrives whole: the draw against the NIST frame success probability
//! ([`crate::wlan::error`]), decided most of the time without evaluating the model.
//!
//! The decision is `p >= 1 || u < p` with `p = success_probability(rate, sinr, bits)` and `u`
//! a uniform draw made only when `p < 1`. [`Reception::arrives`] gives the same answer and
//! makes the same draws, bit for bit, but evaluates the model (an `erfc`, a square root, about
//! twenty multiplications and a `powf`) only where it must. Receivers that hear a moving
//! radio need it for nearly every frame otherwise, since their power changes frame by frame.
//!
//! SINRs are binned on a logarithmic grid taken from the bits of the `f64` itself: a cell is
//! every value with the same exponent and the same top `MANTISSA_BITS` bits of mantissa,
//! 128 cells per octave (about 0.024 dB each). The coded bit error rate falls with the SINR,
//! so across a cell it lies between its values at the cell's two ends, widened by
//! `BER_MARGIN`; the success probability of a frame of `bits` bits then lies between two
//! bounds `lo <= p <= hi`, kept per rate, length and cell once first needed. A draw below `lo`
//! arrives, one at or above `hi` does not, and only a draw in between (rarely: the bounds of
//! a cell are close) takes the model. Cells where `p` is exactly 1 throughout need no draw;
//! the one or two cells where `p` may or may not round to 1 always take the model, as do SINRs
//! outside the table (48 dB below the rate's [`certain_sinr`]).
//!
//! Why the margin holds: `erfc` is evaluated with a fit whose fractional error stays below
//! 1.2e-7 (`erfcc`), so where erfc falls the fit can rise by at most about 2.4e-7 of its
//! value; the uncoded error rate carries that to the Bhattacharyya parameter `D` at most
//! unchanged, and the union bound's highest power, `D^26`, multiplies it by 26: about 6e-6,
//! plus the rounding of some fifty operations (1e-14). `BER_MARGIN` is 1e-4.

use crate::wlan::error::{certain_sinr, coded_ber, frame_success, success_probability};
use crate::wlan::phy::Rate;

/// Mantissa bits that pick a cell within an octave of SINR.
const MANTISSA_BITS: u32 = 7;
/// How far right an `f64`'s bits are shifted to give its cell's index.
const SHIFT: u32 = 52 - MANTISSA_BITS;
/// Octaves of SINR below [`certain_sinr`] the table covers.
const OCTAVES: u64 = 16;
/// Cells per rate and frame length.
const CELLS: usize = (OCTAVES << MANTISSA_BITS) as usize;
/// The most (rate, frame length) pairs kept; frames of others take the model. A cell is 12
/// bytes, a pair's table 24 KiB: at most 6 MiB per channel.
const MAX_FRAMES: usize = 256;
/// Relative widening of the coded bit error rate at a cell's ends (see the module's text).
const BER_MARGIN: f64 = 1e-4;
/// Relative raise of the certain SINRs for the test without a division ([`Reception::arrives_at`]).
const CERTAIN_MARGIN: f64 = 1.0 / (1u64 << 40) as f64;
/// Absolute widening of a cell's probability bounds: covers `powf`'s rounding (under one ulp).
const PROB_MARGIN: f64 = 1e-12;

/// What a cell of SINR says about frames of one rate and length.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Cell {
    /// Not worked out yet.
    Unknown,
    /// The probability is exactly 1: the frame arrives, nothing is drawn.
    Certain,
    /// The probability may or may not be exactly 1: the model decides.
    Model,
    /// The probability is below 1 and within `[lo, hi]` (rounded outwards to `f32`): a draw
    /// is made and compared.
    Between(f32, f32),
}

/// The coded bit error rate at every cell boundary of one rate (NaN until needed).
#[derive(Debug)]
struct RateGrid {
    /// Index (shifted `f64` bits) of the table's lowest cell.
    first: u64,
    /// At the `CELLS + 1` cell boundaries; empty until the rate is first seen.
    ber: Vec<f64>,
}

/// The cells of one rate and frame length.
#[derive(Debug)]
struct Frames {
    rate: Rate,
    bits: u64,
    cells: Vec<Cell>,
}

/// Decides receptions on one channel (see the module's text).
#[derive(Debug)]
pub struct Reception {
    /// Per rate, the linear SINR from which every frame arrives ([`certain_sinr`]).
    certain: [f64; 8],
    /// `certain`, raised by a relative `2^-40`: see [`Reception::arrives_at`].
    certain_above: [f64; 8],
    grids: [RateGrid; 8],
    /// Every (rate, length) seen, sorted by it.
    frames: Vec<Frames>,
    /// The position in `frames` of the last one asked for: every radio that hears a frame
    /// asks for the same.
    last: usize,
}

impl Default for Reception {
    fn default() -> Self {
        Self::new()
    }
}

impl Reception {
    /// An empty table (nothing is computed before it is needed, but the certain SINRs).
    pub fn new() -> Self {
        let certain = Rate::ALL.map(certain_sinr);
        // The cell holding the certain SINR is the table's last.
        let grids = certain.map(|c| RateGrid { first: (c.to_bits() >> SHIFT) + 1 - CELLS as u64, ber: Vec::new() });
        let certain_above = certain.map(|c| c * (1.0 + CERTAIN_MARGIN));
        Reception { certain, certain_above, grids, frames: Vec::new(), last: 0 }
    }

    /// Whether a frame of `bits` bits at `rate`, received at linear SINR `sinr`, arrives
    /// whole: `p >= 1 || draw() < p` for the NIST success probability `p`, calling `draw` (a
    /// uniform draw in `[0, 1)`) exactly when that expression would.
    #[inline]
    pub fn arrives(&mut self, rate: Rate, sinr: f64, bits: u64, draw: impl FnOnce() -> f64) -> bool {
        // Most receptions, in most networks: kept apart from the rest, which stays out of the
        // caller's loop.
        sinr >= self.certain[rate as usize] || self.below_certain(rate, sinr, bits, draw)
    }

    /// [`Reception::arrives`] for a frame received at `signal_mw` over `noise_mw` of noise and
    /// interference, that is at SINR `signal_mw / noise_mw`, with the same answer and draws.
    ///
    /// Most frames arrive for certain, and that is seen without the division (a divide is
    /// slow, and every radio that hears a frame asks): with `c` the certain SINR and `c'` it
    /// raised by `2^-40`, rounded, `signal_mw > fl(c' * noise_mw)` means `signal_mw > c *
    /// noise_mw` exactly (two roundings lose at most `2^-52` of the raise, while the product
    /// is a normal number: the channel's noise floor keeps it far from the subnormals), so
    /// the quotient exceeds `c` and, `c` being an `f64`, so does its rounding. Otherwise
    /// (close to `c`, below it, or a product that is not finite) the SINR is divided out as
    /// before.
    #[inline]
    pub fn arrives_at(
        &mut self,
        rate: Rate,
        signal_mw: f64,
        noise_mw: f64,
        bits: u64,
        draw: impl FnOnce() -> f64,
    ) -> bool {
        signal_mw > self.certain_above[rate as usize] * noise_mw || self.arrives(rate, signal_mw / noise_mw, bits, draw)
    }

    #[inline(never)]
    fn below_certain(&mut self, rate: Rate, sinr: f64, bits: u64, draw: impl FnOnce() -> f64) -> bool {
        let r = rate as usize;
        // NaN and negative SINRs have the sign or the whole exponent set: far out of range.
        let i = (sinr.to_bits() >> SHIFT).wrapping_sub(self.grids[r].first) as usize;
        if i >= CELLS || bits == 0 {
            return by_model(rate, sinr, bits, draw);
        }
        let Some(f) = self.frames_of(rate, bits) else {
            return by_model(rate, sinr, bits, draw);
        };
        let cell = match self.frames[f].cells[i] {
            Cell::Unknown => {
                let c = self.work_out(rate, bits, i);
                self.frames[f].cells[i] = c;
                c
            }
            known => known,
        };
        match cell {
            Cell::Certain => true,
            Cell::Between(lo, hi) => {
                let u = draw();
                if u < f64::from(lo) {
                    true
                } else if u >= f64::from(hi) {
                    false
                } else {
                    u < success_probability(rate, sinr, bits)
                }
            }
            Cell::Model | Cell::Unknown => by_model(rate, sinr, bits, draw),
        }
    }

    /// The position in `frames` of (rate, bits), added if new (`None`: no room).
    #[inline]
    fn frames_of(&mut self, rate: Rate, bits: u64) -> Option<usize> {
        if self.frames.get(self.last).is_some_and(|f| f.rate == rate && f.bits == bits) {
            return Some(self.last);
        }
        let key = (rate as u8, bits);
        self.last = match self.frames.binary_search_by_key(&key, |f| (f.rate as u8, f.bits)) {
            Ok(f) => f,
            Err(_) if self.frames.len() == MAX_FRAMES => return None,
            Err(f) => {
                self.frames.insert(f, Frames { rate, bits, cells: vec![Cell::Unknown; CELLS] });
                f
            }
        };
        Some(self.last)
    }

    /// Cell `i` of frames of `bits` bits at `rate`.
    fn work_out(&mut self, rate: Rate, bits: u64, i: usize) -> Cell {
        let grid = &mut self.grids[rate as usize];
        if grid.ber.is_empty() {
            grid.ber = vec![f64::NAN; CELLS + 1];
        }
        let mut ber_at = |k: usize| {
            if grid.ber[k].is_nan() {
                grid.ber[k] = coded_ber(rate, f64::from_bits((grid.first + k as u64) << SHIFT));
            }
            grid.ber[k]
        };
        // The lower end has the higher error rate.
        let worst = (ber_at(i) * (1.0 + BER_MARGIN)).min(1.0);
        let best = ber_at(i + 1) * (1.0 - BER_MARGIN);
        let lowest = frame_success(worst, bits);
        if lowest >= 1.0 {
            // `1 - ber` rounds to 1 for the worst rate in the cell, so for all of them.
            Cell::Certain
        } else if 1.0 - best >= 1.0 {
            Cell::Model
        } else {
            // `1 - ber` is below 1 for the best rate in the cell, so for all of them: p < 1.
            Cell::Between(round_down(lowest - PROB_MARGIN), round_up(frame_success(best, bits) + PROB_MARGIN))
        }
    }
}

/// The largest `f32` at or below `x`.
fn round_down(x: f64) -> f32 {
    let y = x as f32;
    if f64::from(y) > x {
        y.next_down()
    } else {
        y
    }
}

/// The smallest `f32` at or above `x`.
fn round_up(x: f64) -> f32 {
    let y = x as f32;
    if f64::from(y) < x {
        y.next_up()
    } else {
        y
    }
}

/// The decision with the model itself.
fn by_model(rate: Rate, sinr: f64, bits: u64, draw: impl FnOnce() -> f64) -> bool {
    let p = success_probability(rate, sinr, bits);
    p >= 1.0 || draw() < p
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// The decision and the number of draws, with `draw` answering `u`.
    fn decide(f: impl FnOnce(&mut dyn FnMut() -> f64) -> bool, u: f64) -> (bool, u32) {
        let mut draws = 0;
        let mut draw = || {
            draws += 1;
            u
        };
        let ok = f(&mut draw);
        (ok, draws)
    }

    /// Every rate and a spread of lengths, at SINRs on and beside cell boundaries and all over
    /// the table and beyond it, with draws just below, at and just above the exact
    /// probability and spread over `[0, 1)`: the table agrees with the model every time, and
    /// draws exactly when it does.
    #[test]
    fn decides_as_the_model_does() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut table = Reception::new();
        let mut between = 0;
        for rate in Rate::ALL {
            let certain = certain_sinr(rate);
            let top = certain.to_bits() >> SHIFT;
            for bits in [8, 112, 304, 1_000, 4_000, 12_288, 100_000] {
                for step in 0..4_000u64 {
                    // Cells from 2 octaves above the certain SINR to 2 below the table.
                    let cell = top + (2 << MANTISSA_BITS) - step * ((OCTAVES + 4) << MANTISSA_BITS) / 4_000;
                    let edge = cell << SHIFT;
                    let inside = edge + rng.random_range(0..1u64 << SHIFT);
                    for s in [edge, edge - 1, edge + 1, inside].map(f64::from_bits) {
                        let p = success_probability(rate, s, bits);
                        let mut us = vec![rng.random::<f64>(), 0.0, 0.999_999_999_999, p];
                        if p > 0.0 && p < 1.0 {
                            us.extend([f64::from_bits(p.to_bits() - 1), f64::from_bits(p.to_bits() + 1)]);
                        }
                        for u in us {
                            let want = decide(|d| by_model(rate, s, bits, d), u);
                            let got = decide(|d| table.arrives(rate, s, bits, d), u);
                            assert_eq!(got, want, "{rate:?} {bits} bits, sinr {s:e}, u {u}, p {p}");
                        }
                    }
                }
                let f = table.frames_of(rate, bits).unwrap();
                between += table.frames[f].cells.iter().filter(|c| matches!(c, Cell::Between(..))).count();
            }
        }
        // The table did decide most of those: it is not all "ask the model".
        assert!(between > 10_000, "{between}");
    }

    /// `arrives_at` gives `arrives`'s answer at the divided SINR, with the same draws, for
    /// signals on both sides of the certain SINR and right at it (the products and quotients
    /// that round onto it), over noise from the thermal floor to far above it, and for zero
    /// and infinite noise.
    #[test]
    fn arrives_at_decides_as_the_divided_sinr() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let (mut table, mut reference) = (Reception::new(), Reception::new());
        let mut checked = 0;
        for rate in Rate::ALL {
            let certain = certain_sinr(rate);
            for _ in 0..20_000 {
                let noise = 10f64.powf(rng.random_range(-13.0..-3.0));
                let at = certain * noise;
                let ratio = 10f64.powf(rng.random_range(-0.5..0.5));
                let mut signals = vec![at * ratio, at, at.next_up(), at.next_down()];
                // Signals whose quotient rounds to the certain SINR or next to it.
                let mut s = at.next_down().next_down();
                for _ in 0..5 {
                    signals.push(s);
                    s = s.next_up();
                }
                for signal in signals {
                    let u = rng.random::<f64>();
                    let want = decide(|d| reference.arrives(rate, signal / noise, 304, d), u);
                    let got = decide(|d| table.arrives_at(rate, signal, noise, 304, d), u);
                    assert_eq!(got, want, "{rate:?}: {signal:e} mW over {noise:e} mW, u {u}");
                    checked += 1;
                }
            }
            for (signal, noise) in [(1e-9, 0.0), (0.0, 0.0), (1e-9, f64::INFINITY), (f64::MIN_POSITIVE, 1e-300)] {
                let want = decide(|d| reference.arrives(rate, signal / noise, 304, d), 0.5);
                assert_eq!(decide(|d| table.arrives_at(rate, signal, noise, 304, d), 0.5), want, "{signal} / {noise}");
            }
        }
        assert_eq!(checked, 8 * 20_000 * 9);
    }

    /// The bounds are close: a cell's width is the share of its draws that take the model,
    /// and the widths of adjacent cells add up to about the whole rise of the probability,
    /// from 0 to 1, so the margins widen them by very little.
    #[test]
    fn bounds_are_tight() {
        let mut table = Reception::new();
        let (rate, bits) = (Rate::R54, 12_288);
        let widths: Vec<f64> = (0..CELLS)
            .filter_map(|i| match table.work_out(rate, bits, i) {
                Cell::Between(lo, hi) => Some(f64::from(hi) - f64::from(lo)),
                _ => None,
            })
            .collect();
        let widest = widths.iter().copied().fold(0.0, f64::max);
        let sum: f64 = widths.iter().sum();
        // The steepest cell: the probability rises by about 3 % across 0.024 dB.
        assert!(widest > 0.0 && widest < 0.05, "{widest}");
        assert!(sum > 0.99 && sum < 1.01, "{sum}");
    }

    /// Past [`MAX_FRAMES`] lengths, new ones take the model, with the same answers.
    #[test]
    fn lengths_beyond_the_limit_take_the_model() {
        let mut table = Reception::new();
        let rate = Rate::R54;
        for sinr in [certain_sinr(rate) / 20.0, certain_sinr(rate) / 2.0] {
            for bytes in 1..MAX_FRAMES as u64 + 20 {
                for u in [0.1, 0.5, 0.9] {
                    let bits = 8 * bytes;
                    let want = decide(|d| by_model(rate, sinr, bits, d), u);
                    assert_eq!(decide(|d| table.arrives(rate, sinr, bits, d), u), want, "{bytes} bytes");
                }
            }
        }
        assert_eq!(table.frames.len(), MAX_FRAMES);
    }

    #[test]
    fn bounds_round_outwards() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        for x in (0..10_000).map(|_| rng.random::<f64>()).chain([0.0, 1.0, 0.5, 1e-30, 1.0 - 1e-12]) {
            let (lo, hi) = (round_down(x), round_up(x));
            assert!(f64::from(lo) <= x && x <= f64::from(hi), "{x}");
            assert!(hi == lo || hi == lo.next_up(), "{x}");
        }
    }
}
