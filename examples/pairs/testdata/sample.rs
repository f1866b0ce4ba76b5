// SPDX-License-Identifier: MIT

/// A point in the plane with integer coordinates.
#[derive(Debug, Clone)]
pub struct Point {
    pub x: i64,
    pub y: i64,
}

impl Point {
    /// Manhattan distance between two points.
    pub fn manhattan(&self, other: &Point) -> i64 {
        // sum the absolute differences of both axes
        let dx = (self.x - other.x).abs();
        let dy = (self.y - other.y).abs();
        dx + dy
    }

    pub fn origin() -> Point {
        Point { x: 0, y: 0 }
    }
}
