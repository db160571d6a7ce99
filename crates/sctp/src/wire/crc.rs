//! CRC32c (Castagnoli) for packet-sized buffers (RFC 9260 §6.8, Appendix A).
//!
//! The `crc32c` crate runs the SSE 4.2 `crc32` instruction on three interleaved streams only
//! for blocks of 768 bytes or more and one stream (bound by the instruction's 3-cycle
//! latency) for the rest, so most of a 1,500-byte packet went through the slow path; the CRC
//! was a quarter of the simulator's time in a bulk transfer. On x86_64 with PCLMULQDQ this
//! module does better for every length:
//!
//! * From 224 bytes, a buffer is cut in two parts computed in the same loop: one is folded
//!   with carry-less multiplications into four 128-bit accumulators (as in Intel's white
//!   paper "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ Instruction"), the
//!   other runs through three `crc32` streams. The two instructions use different execution
//!   ports, so together they go about twice as fast as either alone.
//! * From 64 bytes, three `crc32` streams.
//! * Below, one stream, without the crate's per-call set-up (the common header, a SACK).
//!
//! Parts are joined by advancing a CRC register over the bytes after it (a carry-less
//! multiplication by x^(8 n) mod P, reduced by `crc32`). On other CPUs the `crc32c` crate
//! does the work; both give the same value.

/// CRC32c of `data` continuing from `crc` (the CRC of the bytes before it; 0 to start), as
/// `crc32c::crc32c_append` computes it.
#[cfg(test)]
pub(crate) fn crc32c_append(crc: u32, data: &[u8]) -> u32 {
    crc32c_parts(crc, &[data])
}

/// CRC32c of the concatenation of `parts`, continuing from `crc` (0 to start).
pub(crate) fn crc32c_parts(crc: u32, parts: &[&[u8]]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("sse4.2") && std::arch::is_x86_feature_detected!("pclmulqdq") {
        // SAFETY: the CPU supports both instruction sets the function is compiled for
        // (checked just above).
        return parts.iter().fold(crc, |crc, part| unsafe { x86::crc32c_append(crc, part) });
    }
    parts.iter().fold(crc, |crc, part| crc32c::crc32c_append(crc, part))
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m128i, _mm_clmulepi64_si128, _mm_crc32_u64, _mm_crc32_u8, _mm_cvtsi128_si64, _mm_cvtsi64_si128,
        _mm_extract_epi64, _mm_set_epi64x, _mm_xor_si128,
    };

    /// The CRC32c polynomial without its x^32 term, bit-reflected (bit 31 is x^0).
    const POLY: u32 = 0x82F6_3B78;
    /// The same in normal bit order (bit 0 is x^0).
    const POLY_NORMAL: u32 = 0x1EDC_6F41;

    /// Shorter buffers take one stream: joining lanes costs about as much as it saves.
    const MIN_LANES: usize = 64;
    /// Longest lane, in 8-byte words; longer buffers are taken 3 x `MAX_WORDS` words at a time.
    const MAX_WORDS: usize = 128;

    /// Words each `crc32` stream takes per step of the combined loop, beside 64 folded bytes.
    const WORDS_PER_STEP: usize = 2;
    /// Bytes per step of the combined loop: 64 folded, 3 x 16 through `crc32`.
    const STEP: usize = 64 + 3 * 8 * WORDS_PER_STEP;
    /// Steps per round at most, so that joining stays within [`SHIFT`].
    const MAX_STEPS: usize = 2 * MAX_WORDS / (3 * WORDS_PER_STEP);

    /// `SHIFT[n]` = x^(64 n - 33) mod P, bit-reflected: multiplying a CRC register by it
    /// (carry-less) and reducing with `crc32` (which multiplies by x^33 in this bit order)
    /// advances the register over 8 n zero bytes. Entry 0 is unused.
    static SHIFT: [u32; 2 * MAX_WORDS + 1] = shift_table();

    const fn shift_table() -> [u32; 2 * MAX_WORDS + 1] {
        let mut t = [0u32; 2 * MAX_WORDS + 1];
        // Start from x^0 (bit 31) and multiply by x one bit at a time, recording
        // x^(64 n - 33) on the way.
        let mut v: u32 = 1 << 31;
        let mut power = 0;
        let mut n = 1;
        while n < t.len() {
            while power < 64 * n - 33 {
                // Multiply by x: bit j moves to bit j - 1; x^32 (leaving bit 0) reduces by P.
                v = if v & 1 == 1 { (v >> 1) ^ POLY } else { v >> 1 };
                power += 1;
            }
            t[n] = v;
            n += 1;
        }
        t
    }

    /// Folding constant ((x^n mod P) << 32)' << 1 of the white paper (' is 64-bit bit
    /// reflection). Folding an accumulator over d bits multiplies its low half by the
    /// constant for n = d + 32 and its high half by the one for n = d - 32.
    const fn fold_constant(n: u32) -> i64 {
        let mut v: u64 = 1;
        let mut i = 0;
        while i < n {
            v <<= 1;
            if v & (1 << 32) != 0 {
                v ^= (1 << 32) | POLY_NORMAL as u64;
            }
            i += 1;
        }
        ((v << 32).reverse_bits() << 1) as i64
    }
    /// Fold an accumulator over 4 x 128 bits (the other three accumulators' blocks).
    const FOLD_4: (i64, i64) = (fold_constant(4 * 128 + 32), fold_constant(4 * 128 - 32));
    /// Fold an accumulator over 128 bits (into the next one).
    const FOLD_1: (i64, i64) = (fold_constant(128 + 32), fold_constant(128 - 32));

    /// Advances CRC register `r` over `8 * words` zero bytes (`1 <= words <= 2 * MAX_WORDS`).
    #[target_feature(enable = "sse4.2,pclmulqdq")]
    fn shift(r: u64, words: usize) -> u64 {
        let k = SHIFT[words];
        let product = _mm_clmulepi64_si128::<0>(_mm_cvtsi64_si128(r as i64), _mm_cvtsi64_si128(i64::from(k)));
        _mm_crc32_u64(0, _mm_cvtsi128_si64(product) as u64)
    }

    fn word(bytes: &[u8]) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(bytes);
        u64::from_le_bytes(w)
    }

    #[target_feature(enable = "sse4.2,pclmulqdq")]
    fn block(bytes: &[u8]) -> __m128i {
        _mm_set_epi64x(word(&bytes[8..16]) as i64, word(&bytes[..8]) as i64)
    }

    /// `acc` moved along by `keys` (see [`fold_constant`]), plus `next`.
    #[target_feature(enable = "sse4.2,pclmulqdq")]
    fn fold(acc: __m128i, next: __m128i, keys: (i64, i64)) -> __m128i {
        let keys = _mm_set_epi64x(keys.1, keys.0);
        let low = _mm_clmulepi64_si128::<0x00>(acc, keys);
        let high = _mm_clmulepi64_si128::<0x11>(acc, keys);
        _mm_xor_si128(_mm_xor_si128(next, low), high)
    }

    #[target_feature(enable = "sse4.2,pclmulqdq")]
    pub(super) fn crc32c_append(crc: u32, data: &[u8]) -> u32 {
        let mut r = u64::from(!crc);
        let mut rest = data;
        while rest.len() >= 2 * STEP {
            let steps = (rest.len() / STEP).min(MAX_STEPS);
            let (round, tail) = rest.split_at(STEP * steps);
            r = folded_and_lanes(r, round, steps);
            rest = tail;
        }
        while rest.len() >= MIN_LANES {
            // Three lanes of `n` words: a continues the register, b and c start from zero;
            // then r = a x^(128 n) + b x^(64 n) + c, i.e. a shifted over b and c, b over c.
            let n = (rest.len() / 24).min(MAX_WORDS);
            let (lanes, tail) = rest.split_at(24 * n);
            let (a, bc) = lanes.split_at(8 * n);
            let (b, c) = bc.split_at(8 * n);
            let (mut ra, mut rb, mut rc) = (r, 0u64, 0u64);
            for ((wa, wb), wc) in a.chunks_exact(8).zip(b.chunks_exact(8)).zip(c.chunks_exact(8)) {
                ra = _mm_crc32_u64(ra, word(wa));
                rb = _mm_crc32_u64(rb, word(wb));
                rc = _mm_crc32_u64(rc, word(wc));
            }
            r = shift(ra, 2 * n) ^ shift(rb, n) ^ rc;
            rest = tail;
        }
        let mut words = rest.chunks_exact(8);
        for w in &mut words {
            r = _mm_crc32_u64(r, word(w));
        }
        let mut r = r as u32;
        for &byte in words.remainder() {
            r = _mm_crc32_u8(r, byte);
        }
        !r
    }

    /// The register after `round` (`steps * STEP` bytes), starting from `r`: the first
    /// 64 x `steps` bytes are folded, the rest runs through three `crc32` lanes, step by
    /// step in one loop.
    #[target_feature(enable = "sse4.2,pclmulqdq")]
    fn folded_and_lanes(r: u64, round: &[u8], steps: usize) -> u64 {
        let lane = 8 * WORDS_PER_STEP * steps;
        let (folded, lanes) = round.split_at(64 * steps);
        let (a, bc) = lanes.split_at(lane);
        let (b, c) = bc.split_at(lane);
        // The register goes into the first four bytes (a reflected CRC of a message is the
        // CRC from zero of the message with its first 32 bits xored with the register).
        let mut acc = [
            _mm_xor_si128(block(&folded[..16]), _mm_cvtsi64_si128(r as i64)),
            block(&folded[16..32]),
            block(&folded[32..48]),
            block(&folded[48..64]),
        ];
        let (mut ra, mut rb, mut rc) = (0u64, 0u64, 0u64);
        for step in 0..steps {
            if step > 0 {
                let blocks = &folded[64 * step..64 * step + 64];
                for (i, x) in acc.iter_mut().enumerate() {
                    *x = fold(*x, block(&blocks[16 * i..16 * i + 16]), FOLD_4);
                }
            }
            for w in 0..WORDS_PER_STEP {
                let at = 8 * (WORDS_PER_STEP * step + w);
                ra = _mm_crc32_u64(ra, word(&a[at..at + 8]));
                rb = _mm_crc32_u64(rb, word(&b[at..at + 8]));
                rc = _mm_crc32_u64(rc, word(&c[at..at + 8]));
            }
        }
        // The four accumulators into one, which stands for the folded part: its CRC from a
        // zero register is the folded part's.
        let x = fold(fold(fold(acc[0], acc[1], FOLD_1), acc[2], FOLD_1), acc[3], FOLD_1);
        let rf = _mm_crc32_u64(_mm_crc32_u64(0, _mm_cvtsi128_si64(x) as u64), _mm_extract_epi64::<1>(x) as u64);
        let words = WORDS_PER_STEP * steps;
        shift(rf, 3 * words) ^ shift(ra, 2 * words) ^ shift(rb, words) ^ rc
    }
}

#[cfg(test)]
mod tests {
    use rand::{RngCore, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    use super::crc32c_append;

    #[test]
    fn matches_the_crc32c_crate_for_every_length_offset_and_start() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9260);
        let mut buf = vec![0u8; 24 * 1024];
        rng.fill_bytes(&mut buf);
        // Every length up to two rounds of the combined loop and beyond, then lengths around
        // its round boundaries and a few long ones.
        let lengths = (0..3200).chain([4703, 4704, 4705, 9407, 9408, 9409, 12000, 20000]);
        for len in lengths {
            for offset in [0, 1, 5] {
                let data = &buf[offset..offset + len];
                let start = rng.next_u32();
                assert_eq!(crc32c_append(0, data), crc32c::crc32c(data), "length {len}, offset {offset}");
                assert_eq!(crc32c_append(start, data), crc32c::crc32c_append(start, data), "length {len}");
            }
        }
    }

    #[test]
    fn check_value_of_the_catalogue() {
        // CRC-32/ISCSI check value (the CRC of "123456789"), and the same over a long buffer.
        assert_eq!(crc32c_append(0, b"123456789"), 0xE306_9283);
        let long: Vec<u8> = b"123456789".iter().copied().cycle().take(9 * 100).collect();
        assert_eq!(crc32c_append(0, &long), crc32c::crc32c(&long));
    }
}
