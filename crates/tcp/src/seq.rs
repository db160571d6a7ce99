//! TCP sequence numbers: 32-bit values compared modulo 2^32 (RFC 9293 §3.4).
//!
//! Inside the engine every position is an unwrapped `u64` offset from the initial sequence
//! number, so comparisons are plain integer comparisons; only the wire sees 32-bit values.
//! [`unwrap`] maps a wire value back to the offset nearest a reference offset.

/// A 32-bit TCP sequence number as carried on the wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SeqNumber(pub u32);

impl SeqNumber {
    /// `self + n` modulo 2^32.
    pub fn plus(self, n: u64) -> SeqNumber {
        SeqNumber(self.0.wrapping_add(n as u32))
    }
    /// Signed distance from `other` to `self` (positive when `self` is later), modulo 2^32.
    pub fn diff(self, other: SeqNumber) -> i64 {
        self.0.wrapping_sub(other.0) as i32 as i64
    }
}

/// The unwrapped offset (relative to `base`, the sequence number of offset 0) of `seq`, chosen
/// as the one nearest `reference`. `None` if it would lie before offset 0.
pub fn unwrap(base: SeqNumber, seq: SeqNumber, reference: u64) -> Option<u64> {
    let reference_seq = base.plus(reference);
    let delta = seq.diff(reference_seq);
    let off = reference as i64 + delta;
    (off >= 0).then_some(off as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwrap_crosses_the_wrap_point() {
        let base = SeqNumber(u32::MAX - 10);
        assert_eq!(unwrap(base, base.plus(5), 0), Some(5));
        assert_eq!(unwrap(base, base.plus(20), 15), Some(20));
        assert_eq!(unwrap(base, SeqNumber(base.0.wrapping_sub(1)), 0), None);
        assert_eq!(unwrap(base, base.plus(5_000_000_000), 5_000_000_100), Some(5_000_000_000));
        assert!(SeqNumber(1).diff(SeqNumber(u32::MAX)) == 2);
    }
}
