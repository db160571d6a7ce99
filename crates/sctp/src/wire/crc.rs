//! CRC32c (Castagnoli) for packet-sized buffers (RFC 9260 §6.8, Appendix A).
//!
//! The `crc32c` crate runs the SSE 4.2 `crc32` instruction on three interleaved streams only
//! for blocks of 768 bytes or more and one stream (bound by the instruction's 3-cycle
//! latency) for the rest, so most of a 1,500-byte packet went through the slow path; the CRC
//! was a quarter of the simulator's time in a bulk transfer. Here every buffer of 64 bytes
//! or more is split into three equal lanes computed side by side, and the lanes are joined
//! with two carry-less multiplications (PCLMULQDQ); shorter ones (the common header, a
//! SACK) go through one stream without the crate's per-call set-up. On other CPUs the
//! `crc32c` crate does the work; both give the same value.

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
        _mm_clmulepi64_si128, _mm_crc32_u64, _mm_crc32_u8, _mm_cvtsi128_si64, _mm_cvtsi64_si128,
    };

    /// Shorter buffers take one stream: joining lanes costs about as much as it saves.
    const MIN_LEN: usize = 64;
    /// Longest lane, in 8-byte words; longer buffers are taken 3 x `MAX_WORDS` words at a time.
    const MAX_WORDS: usize = 128;

    /// The CRC32c polynomial without its x^32 term, bit-reflected (bit 31 is x^0).
    const POLY: u32 = 0x82F6_3B78;

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
    pub(super) fn crc32c_append(crc: u32, data: &[u8]) -> u32 {
        let mut r = u64::from(!crc);
        let mut rest = data;
        while rest.len() >= MIN_LEN {
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
}

#[cfg(test)]
mod tests {
    use rand::{RngCore, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    use super::crc32c_append;

    #[test]
    fn matches_the_crc32c_crate_for_every_length_offset_and_start() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9260);
        let mut buf = vec![0u8; 8 * 1024];
        rng.fill_bytes(&mut buf);
        let lengths = (0..2100).chain([3071, 3072, 3073, 3 * 1024 + 24, 6144, 8000]);
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
