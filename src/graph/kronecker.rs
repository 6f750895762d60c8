//! Graph500 stochastic Kronecker (R-MAT) generator (spec step 1).
//!
//! Edge tuple e (0 <= e < M) is a pure function of (seed, e): at each of SCALE levels 32
//! random bits pick a quadrant of the initiator [[A, B], [C, D]] (16 bits for the row bit, 16
//! for the column bit given the row; probabilities resolved to 2^-16), so one 64-bit draw
//! serves two levels. Because the tuples are independent and identically
//! distributed, their order is already a uniform shuffle. Vertex ids are then scrambled by a
//! seeded bijection on [0, 2^SCALE) so that ids carry no locality. Each rank generates its
//! own contiguous range of tuple indices, so the graph is identical for every rank count.

use super::{block_range, DeviceEdges, Edge, EdgeSource};
use crate::lanes::{self, Lanes};
use crate::rng::{draw, stream_key};

pub const A: f64 = 0.57;
pub const B: f64 = 0.19;
pub const C: f64 = 0.19;

pub struct Kronecker {
    pub scale: u32,
    pub edgefactor: u64,
    edge_key: u64,
    scramble: Scramble,
    local: std::ops::Range<u64>,
    // Thresholds on 16-bit uniform draws: P(row bit) = C + D; P(col bit | row) from the initiator.
    row_threshold: u16,
    col_threshold_top: u16,
    col_threshold_bottom: u16,
}

fn threshold(p: f64) -> u16 {
    (p * 65536.0).round().min(u16::MAX as f64) as u16
}

impl Kronecker {
    pub fn new(scale: u32, edgefactor: u64, seed: u64, ranks: usize, rank: usize) -> Self {
        let m = edgefactor << scale;
        Kronecker {
            scale,
            edgefactor,
            edge_key: stream_key(seed, 1),
            scramble: Scramble::new(scale, stream_key(seed, 2)),
            local: block_range(m, ranks, rank),
            row_threshold: threshold(A + B),
            col_threshold_top: threshold(A / (A + B)),
            col_threshold_bottom: threshold(C / (1.0 - A - B)),
        }
    }

    /// The initiator quadrant (row bit, column bit) chosen by the low 32 of 64 random bits:
    /// the low 16 for the row, the next 16 for the column given the row. (In 64-bit words
    /// throughout, so that a batch's lanes stay one width.)
    #[inline(always)]
    fn quadrant(&self, bits: u64) -> (bool, bool) {
        let row = bits & 0xffff >= self.row_threshold as u64;
        let col_t = if row {
            self.col_threshold_bottom
        } else {
            self.col_threshold_top
        };
        (row, (bits >> 16) & 0xffff >= col_t as u64)
    }
}

/// Edge tuples `first ..= first + L - 1` of the global list, a lane each. Tuple e takes
/// draws e·⌈SCALE/2⌉ + j, each serving two levels (its low 32 bits, then its high 32).
impl Lanes for Kronecker {
    type Item = Edge;
    #[inline(always)]
    fn batch<const L: usize>(&self, first: u64, out: &mut [Edge; L]) {
        let draws_per_edge = self.scale.div_ceil(2) as u64;
        let (mut u, mut v) = ([0u64; L], [0u64; L]);
        for j in 0..draws_per_edge {
            let mut bits = [0u64; L];
            for (l, b) in bits.iter_mut().enumerate() {
                *b = draw(self.edge_key, (first + l as u64) * draws_per_edge + j);
            }
            let levels = (self.scale as u64 - 2 * j).min(2);
            for _ in 0..levels {
                for l in 0..L {
                    let (row, col) = self.quadrant(bits[l]);
                    bits[l] >>= 32;
                    u[l] = (u[l] << 1) | row as u64;
                    v[l] = (v[l] << 1) | col as u64;
                }
            }
        }
        for l in 0..L {
            out[l] = (self.scramble.apply(u[l]), self.scramble.apply(v[l]));
        }
    }
}

impl EdgeSource for Kronecker {
    fn num_vertices(&self) -> u64 {
        1u64 << self.scale
    }
    fn num_edges(&self) -> u64 {
        self.edgefactor << self.scale
    }
    fn local_len(&self) -> u64 {
        self.local.end - self.local.start
    }
    /// kernels/generators.cu `kron_edge`.
    fn device_edges(&self) -> Option<DeviceEdges> {
        let mut params = vec![self.edge_key];
        params.extend(self.scramble.params());
        params.extend([
            self.scale as u64,
            self.row_threshold as u64,
            self.col_threshold_top as u64,
            self.col_threshold_bottom as u64,
        ]);
        Some(DeviceEdges {
            kernel: "kron",
            params,
            first_edge: self.local.start,
        })
    }
    fn local_chunk(&self, start: u64, len: u64, out: &mut Vec<Edge>) {
        lanes::append(self, self.local.start + start, len, out);
    }
}

/// A seeded bijection on [0, 2^bits): two rounds of odd multiply + add (bijective mod 2^bits,
/// moves information up) and xor-shift right (bijective, moves it down).
pub(crate) struct Scramble {
    mask: u64,
    shift: u32,
    mul: [u64; 2],
    add: [u64; 2],
}

impl Scramble {
    pub(crate) fn new(bits: u32, key: u64) -> Self {
        Scramble {
            mask: if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            },
            shift: bits.div_ceil(2).max(1),
            mul: [draw(key, 0) | 1, draw(key, 1) | 1],
            add: [draw(key, 2), draw(key, 3)],
        }
    }

    /// The bijection as kernels/generators.cu's `scramble` takes it: mask, shift,
    /// multipliers, addends.
    pub(crate) fn params(&self) -> [u64; 6] {
        let (mul, add) = (&self.mul, &self.add);
        [self.mask, self.shift as u64, mul[0], mul[1], add[0], add[1]]
    }

    #[inline(always)]
    pub(crate) fn apply(&self, mut x: u64) -> u64 {
        for round in 0..2 {
            x = x
                .wrapping_mul(self.mul[round])
                .wrapping_add(self.add[round])
                & self.mask;
            x ^= x >> self.shift;
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scramble_is_a_bijection() {
        for bits in [1, 2, 5, 12] {
            let s = Scramble::new(bits, 42);
            let mut seen = vec![false; 1 << bits];
            for x in 0..(1u64 << bits) {
                let y = s.apply(x) as usize;
                assert!(!seen[y], "bits {bits}: {x} collides");
                seen[y] = true;
            }
        }
    }

    /// Every vector unit gives the same tuples, at an odd SCALE (the last draw serves one
    /// level) and an even one.
    #[test]
    fn every_vector_unit_gives_the_same_edges() {
        for scale in [11, 12] {
            let g = Kronecker::new(scale, 4, 5, 1, 0);
            let mut want = Vec::new();
            lanes::append_with(lanes::Unit::Base, &g, 77, 1000, &mut want);
            for unit in lanes::Unit::available() {
                let mut got = Vec::new();
                lanes::append_with(unit, &g, 77, 1000, &mut got);
                assert!(got == want, "SCALE {scale}, {unit:?}");
            }
        }
    }

    #[test]
    fn graph_is_independent_of_rank_count() {
        let whole = Kronecker::new(8, 16, 7, 1, 0);
        let mut all = Vec::new();
        whole.local_chunk(0, whole.local_len(), &mut all);
        for ranks in 2..=4 {
            let mut joined = Vec::new();
            for r in 0..ranks {
                let part = Kronecker::new(8, 16, 7, ranks, r);
                part.local_chunk(0, part.local_len(), &mut joined);
            }
            assert_eq!(all, joined);
        }
    }

    /// kernels/generators.cu `kron_edge`'s layout: key, scramble (mask, shift, multipliers,
    /// addends), SCALE, the three thresholds.
    #[test]
    fn device_params_follow_the_kernels_layout() {
        let g = Kronecker::new(10, 16, 9, 3, 1);
        let d = g.device_edges().unwrap();
        assert_eq!((d.kernel, d.first_edge), ("kron", g.local.start));
        let s = &g.scramble;
        let want = vec![
            stream_key(9, 1),
            (1 << 10) - 1,
            5,
            s.mul[0],
            s.mul[1],
            s.add[0],
            s.add[1],
            10,
            g.row_threshold as u64,
            g.col_threshold_top as u64,
            g.col_threshold_bottom as u64,
        ];
        assert_eq!(d.params, want);
    }

    #[test]
    fn quadrant_frequencies_match_the_initiator() {
        let g = Kronecker::new(1, 1 << 16, 3, 1, 0);
        let mut raw = [0u64; 4];
        for e in 0..g.num_edges() {
            let (row, col) = g.quadrant(draw(g.edge_key, e));
            raw[(row as usize) * 2 + col as usize] += 1;
        }
        let m = g.num_edges() as f64;
        for (count, p) in raw.iter().zip([A, B, C, 1.0 - A - B - C]) {
            assert!((*count as f64 / m - p).abs() < 0.01, "{raw:?}");
        }
    }
}
