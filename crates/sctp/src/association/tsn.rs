//! Serial-number arithmetic for 32-bit TSNs (RFC 9260 §1.6, RFC 1982).

/// `a < b` in serial arithmetic.
#[inline]
pub(crate) fn tsn_lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// `a <= b` in serial arithmetic.
#[inline]
pub(crate) fn tsn_le(a: u32, b: u32) -> bool {
    a == b || tsn_lt(a, b)
}

/// `a > b` in serial arithmetic.
#[inline]
pub(crate) fn tsn_gt(a: u32, b: u32) -> bool {
    tsn_lt(b, a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_wrap() {
        assert!(tsn_lt(u32::MAX, 0));
        assert!(tsn_gt(3, u32::MAX - 3));
        assert!(tsn_le(7, 7));
        assert!(!tsn_lt(7, 7));
    }
}
