//! The space-filling curve of the Hilbert split, fitted to the mesh's bounding box: the box
//! is cut into a row (or grid) of near-cubes along its long axes, visited in serpentine
//! order (consecutive cubes share a face), with a Hilbert curve inside each. One Hilbert
//! curve over the box's enclosing cube leaves most of its keys unused on a long bar (a
//! 1 × 1 × 4 bar fills 1/16 of the cube): the split's key groups are then few and large,
//! so the run search sorts most of the nodes, and the curve wanders in and out of the bar,
//! so the initial runs are less compact and the seeds take more iterations to balance (40M
//! nodes of a 1 × 1 × 4 bar in 256 parts: 9 iterations against 5, the run search 0.49 s
//! against 0.03 s). A box within a factor 1.5 of a cube is one cube: the plain curve, and
//! the same parts as before the curve was fitted.

use crate::mesh::hilbert;

/// At most this many cubes along an axis (so at most 16^3 in all, 12 bits of the key).
const MAX_CUBES: usize = 16;

pub struct Curve {
    cubes: [usize; 3],
    /// Cubes per unit length along each axis (0 on a flat axis).
    density: [f64; 3],
    /// Key bits taken by the cube's place in the serpentine order (0: one cube).
    bits: u32,
}

impl Curve {
    /// The curve of points in [0, extent[0]] × [0, extent[1]] × [0, extent[2]].
    pub fn new(extent: [f64; 3]) -> Curve {
        let longest = extent.iter().copied().fold(0.0, f64::max);
        // The cubes' side: the shortest extent that is not flat (a plane has no thickness),
        // but at least 1/MAX_CUBES of the longest.
        let side = extent
            .iter()
            .copied()
            .filter(|&e| e > 0.0)
            .fold(longest, f64::min)
            .max(longest / MAX_CUBES as f64);
        let cubes: [usize; 3] = std::array::from_fn(|d| {
            if side > 0.0 {
                ((extent[d] / side).round() as usize).clamp(1, MAX_CUBES)
            } else {
                1
            }
        });
        let total = cubes.iter().product::<usize>();
        Curve {
            cubes,
            density: std::array::from_fn(|d| {
                if extent[d] > 0.0 {
                    cubes[d] as f64 / extent[d]
                } else {
                    0.0
                }
            }),
            bits: usize::BITS - (total - 1).leading_zeros(),
        }
    }

    /// The point's key (63 bits): its cube's place in the serpentine order in the top bits,
    /// the Hilbert index within the cube below.
    pub fn key(&self, p: [f64; 3]) -> u64 {
        let max = hilbert::AXIS_MAX as f64;
        let q: [f64; 3] = std::array::from_fn(|d| p[d] * self.density[d]);
        if self.bits == 0 {
            return hilbert::index(std::array::from_fn(|d| (q[d] * max).clamp(0.0, max) as u32));
        }
        // Each axis in units of 2^-21 cubes: the cube is the high bits, the place in it
        // the low 21 (one float conversion an axis, as for one cube).
        let unit = f64::from(hilbert::AXIS_MAX + 1);
        let mut at = [0usize; 3];
        let inside = hilbert::index(std::array::from_fn(|d| {
            let v = (q[d] * unit) as u32;
            at[d] = (v >> hilbert::BITS).min(self.cubes[d] as u32 - 1) as usize;
            (v - ((at[d] as u32) << hilbert::BITS)).min(hilbert::AXIS_MAX)
        }));
        let place = self.place(at);
        ((place as u64) << (63 - self.bits)) | (inside >> self.bits)
    }

    /// A cube's place in the serpentine order: z slowest, then y, then x, each layer and
    /// row walked back and forth so that the next cube is a face neighbour.
    fn place(&self, at: [usize; 3]) -> usize {
        let [nx, ny, _] = self.cubes;
        let y = if at[2].is_multiple_of(2) {
            at[1]
        } else {
            ny - 1 - at[1]
        };
        let row = at[2] * ny + y;
        let x = if row.is_multiple_of(2) {
            at[0]
        } else {
            nx - 1 - at[0]
        };
        row * nx + x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(i: u64) -> [f64; 3] {
        std::array::from_fn(|d| {
            (crate::rng::draw(11, 3 * i + d as u64) >> 11) as f64 / 2f64.powi(53)
        })
    }

    /// A near-cube is one cube: the Hilbert index of the point scaled to [0, 1]^3.
    #[test]
    fn a_near_cube_gets_the_plain_hilbert_curve() {
        let extent = [1.0, 0.8, 1.2];
        let curve = Curve::new(extent);
        assert_eq!(curve.cubes, [1, 1, 1]);
        let max = hilbert::AXIS_MAX as f64;
        for i in 0..1000 {
            let p: [f64; 3] = std::array::from_fn(|d| point(i)[d] * extent[d]);
            let scaled = std::array::from_fn(|d| (p[d] / extent[d] * max) as u32);
            assert_eq!(curve.key(p), hilbert::index(scaled));
        }
    }

    /// The cubes of 1 × 2 × 3, 3 × 2 × 1 and 2 × 1 × 3 grids in key order: each a face
    /// neighbour of the one before, every point's key inside its cube's range, and the points
    /// of one cube in Hilbert order.
    #[test]
    fn cubes_follow_a_serpentine_of_face_neighbours() {
        for cubes in [[1, 2, 3], [3, 2, 1], [2, 1, 3]] {
            let curve = Curve::new(cubes.map(|c| c as f64));
            assert_eq!((curve.cubes, curve.bits), (cubes, 3));
            let mut order: Vec<(usize, [usize; 3])> = (0..6)
                .map(|c| {
                    [
                        c % cubes[0],
                        c / cubes[0] % cubes[1],
                        c / (cubes[0] * cubes[1]),
                    ]
                })
                .map(|at| (curve.place(at), at))
                .collect();
            order.sort_unstable();
            assert_eq!(
                order.iter().map(|o| o.0).collect::<Vec<_>>(),
                (0..6).collect::<Vec<_>>()
            );
            for pair in order.windows(2) {
                let steps: usize = (0..3).map(|d| pair[0].1[d].abs_diff(pair[1].1[d])).sum();
                assert_eq!(steps, 1, "cubes {:?} then {:?}", pair[0].1, pair[1].1);
            }
            let unit = f64::from(hilbert::AXIS_MAX + 1);
            for i in 0..2000 {
                let p: [f64; 3] = std::array::from_fn(|d| point(i)[d] * cubes[d] as f64);
                let at: [usize; 3] = std::array::from_fn(|d| p[d] as usize);
                let key = curve.key(p);
                assert_eq!(key >> 60, curve.place(at) as u64, "point {p:?}");
                let inside = std::array::from_fn(|d| ((p[d] - at[d] as f64) * unit) as u32);
                assert_eq!(
                    key & ((1 << 60) - 1),
                    hilbert::index(inside) >> 3,
                    "point {p:?}"
                );
            }
        }
    }

    /// A flat plate (no thickness) and a long bar: cubes along the long axes only, at most
    /// MAX_CUBES on each, and points on the far faces in the last cube.
    #[test]
    fn flat_and_long_boxes() {
        assert_eq!(Curve::new([1.0, 4.0, 0.0]).cubes, [1, 4, 1]);
        assert_eq!(Curve::new([0.1, 0.1, 1.0]).cubes, [1, 1, 10]);
        assert_eq!(Curve::new([0.001, 0.001, 1.0]).cubes, [1, 1, 16]);
        assert_eq!(Curve::new([0.0; 3]).key([0.0; 3]), 0);
        let bar = Curve::new([0.25, 0.25, 1.0]);
        assert_eq!(bar.key([0.25, 0.25, 1.0]) >> 61, 3);
        assert_eq!(bar.key([0.0; 3]), 0);
    }
}
