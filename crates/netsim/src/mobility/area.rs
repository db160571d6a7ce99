//! The rectangle a random model keeps a node in.

use rand::Rng;

use super::position::Position;
use super::MobilityError;
use crate::rng::SimRng;

/// An axis-aligned rectangle `[x0, x1] × [y0, y1]`, metres, with positive width and height.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Area {
    /// Lowest x.
    pub x0: f64,
    /// Lowest y.
    pub y0: f64,
    /// Highest x.
    pub x1: f64,
    /// Highest y.
    pub y1: f64,
}

impl Area {
    /// The rectangle with corners `(x0, y0)` and `(x1, y1)`, `x0 < x1` and `y0 < y1`, all finite.
    pub fn new(x0: f64, y0: f64, x1: f64, y1: f64) -> Result<Self, MobilityError> {
        let finite = [x0, y0, x1, y1].iter().all(|v| v.is_finite());
        if !finite || x0 >= x1 || y0 >= y1 {
            return Err(MobilityError::EmptyArea { x0, y0, x1, y1 });
        }
        Ok(Area { x0, y0, x1, y1 })
    }

    /// The rectangle `[0, width] × [0, height]`.
    pub fn sized(width: f64, height: f64) -> Result<Self, MobilityError> {
        Area::new(0.0, 0.0, width, height)
    }

    /// Width (x extent), metres.
    pub fn width(&self) -> f64 {
        self.x1 - self.x0
    }

    /// Height (y extent), metres.
    pub fn height(&self) -> f64 {
        self.y1 - self.y0
    }

    /// True if `p` lies in the rectangle (borders included).
    pub fn contains(&self, p: &Position) -> bool {
        (self.x0..=self.x1).contains(&p.x) && (self.y0..=self.y1).contains(&p.y)
    }

    /// The point of the rectangle nearest to `p` (`p` itself if inside).
    pub fn clamp(&self, p: Position) -> Position {
        Position::new(p.x.clamp(self.x0, self.x1), p.y.clamp(self.y0, self.y1))
    }

    /// The point at fractions `(u, v)` of the width and height, each in `[0, 1)`: a uniform draw
    /// when `u` and `v` are.
    pub fn at_fraction(&self, u: f64, v: f64) -> Position {
        Position::new(self.x0 + u * self.width(), self.y0 + v * self.height())
    }

    /// Where a random model starts a node: at `start`, which must lie in the area, or without
    /// one at a point drawn uniformly from `rng`.
    pub(crate) fn start(&self, start: Option<Position>, rng: &mut SimRng) -> Result<Position, MobilityError> {
        match start {
            Some(p) if !self.contains(&p) => Err(MobilityError::OutsideArea(p)),
            Some(p) => Ok(p),
            None => Ok(self.at_fraction(rng.random(), rng.random())),
        }
    }
}
