//! A point on the simulated plane.

/// A point on the plane, in metres. Every node that has a place in the world (a WLAN
/// station, an access point) has one at every instant; wired-only nodes need none.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Position {
    /// East-west coordinate, metres.
    pub x: f64,
    /// North-south coordinate, metres.
    pub y: f64,
}

impl Position {
    /// The point `(x, y)`.
    pub const fn new(x: f64, y: f64) -> Self {
        Position { x, y }
    }

    /// Euclidean distance to `other`, metres.
    pub fn distance(&self, other: &Position) -> f64 {
        (self.x - other.x).hypot(self.y - other.y)
    }

    /// The point a fraction `f` of the way from `self` to `to` (`f = 0`: `self` exactly,
    /// `f = 1`: `to` exactly).
    pub fn lerp(&self, to: &Position, f: f64) -> Position {
        if f >= 1.0 {
            return *to;
        }
        Position { x: self.x + (to.x - self.x) * f, y: self.y + (to.y - self.y) * f }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_is_euclidean_and_symmetric() {
        let a = Position::new(0.0, 0.0);
        let b = Position::new(3.0, 4.0);
        assert_eq!(a.distance(&b), 5.0);
        assert_eq!(b.distance(&a), 5.0);
        assert_eq!(a.distance(&a), 0.0);
    }

    #[test]
    fn lerp_hits_both_ends_exactly() {
        let a = Position::new(0.1, 0.7);
        let b = Position::new(123.456, -9.87);
        assert_eq!(a.lerp(&b, 0.0), a);
        assert_eq!(a.lerp(&b, 1.0), b);
        let mid = a.lerp(&b, 0.5);
        assert!(mid.distance(&Position::new((0.1 + 123.456) / 2.0, (0.7 - 9.87) / 2.0)) < 1e-12);
    }
}
