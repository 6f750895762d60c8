//! The SSCA#2 v2.2 scalable data generator (Bader & Madduri's HPCS SSCA#2 specification;
//! McGuinness, "Parallel Mesh Adaptation and Graph Analysis Using Graphics Processing Units",
//! MSc thesis, UMass Amherst, 2011, §2.3.1): N = 2^SCALE vertices, M = 8N directed edges (u -> v) with integer
//! weights uniform in [1, 2^SCALE].
//!
//! Edge e is R-MAT: at each of SCALE levels one quadrant of the initiator a, b, c, d =
//! 0.55, 0.1, 0.1, 0.25 is chosen after each probability is scaled by its own U(0.95, 1.05)
//! noise and the four renormalised, all keyed by (e, level, attempt). One 64-bit draw serves
//! a level: four 12-bit noise values and a 16-bit choice (probabilities resolved to 2^-16, as
//! the Kronecker generator's; the arithmetic is in integers). A self-loop is redrawn whole with the next attempt number;
//! parallel edges are kept, as the benchmark allows. Vertex ids are then scrambled by a keyed
//! bijection on [0, 2^SCALE) (the Kronecker generator's construction), so that ids carry no
//! locality. Weights come from their own stream, keyed by e.

use super::{below, fill, SSCA2_EDGE, SSCA2_SCRAMBLE, SSCA2_WEIGHT};
use crate::graph::kronecker::Scramble;
use crate::graph::{block_range, DeviceEdges, DeviceWeights, Edge, EdgeSource};
use crate::lanes::{self, Lanes};
use crate::rng::{draw, draw_at, stream_key, weyl};

/// The initiator a, b, c, d = 0.55, 0.1, 0.1, 0.25, in hundredths (kernels/generators.cu
/// has them as SSCA2_H0 .. SSCA2_H3, constants its level arithmetic folds).
const INITIATOR: [u64; 4] = [55, 10, 10, 25];

/// Largest SCALE: 8·2^SCALE edges fit in 64 bits.
const MAX_SCALE: u32 = 60;

/// Checks SCALE: 1 ≤ SCALE ≤ 60 (at SCALE 0 every edge would be a loop).
pub fn check(scale: u32) -> Result<(), String> {
    if !(1..=MAX_SCALE).contains(&scale) {
        return Err(format!("scale = {scale} must be between 1 and {MAX_SCALE}"));
    }
    Ok(())
}

pub struct Ssca2 {
    scale: u32,
    edge_key: u64,
    /// The level keys of attempt 0 (a level's key is draw(edge_key, 64·attempt + level)).
    first_keys: Vec<u64>,
    weight_key: u64,
    scramble: Scramble,
    local: std::ops::Range<u64>,
}

impl Ssca2 {
    /// The SSCA#2 graph of SCALE `scale` (see `check`).
    pub fn new(scale: u32, seed: u64, ranks: usize, rank: usize) -> Self {
        let edge_key = stream_key(seed, SSCA2_EDGE);
        Ssca2 {
            scale,
            edge_key,
            first_keys: (0..scale as u64).map(|l| draw(edge_key, l)).collect(),
            weight_key: stream_key(seed, SSCA2_WEIGHT),
            scramble: Scramble::new(scale, stream_key(seed, SSCA2_SCRAMBLE)),
            local: block_range(8u64 << scale, ranks, rank),
        }
    }

    /// The unscrambled pair of edge `e` after its attempt 0 gave a self-loop: the first of
    /// attempts 1, 2, ... that gives none.
    fn redrawn(&self, e: u64) -> Edge {
        (1..)
            .map(|attempt| {
                let (mut u, mut v) = (0, 0);
                for level in 0..self.scale as u64 {
                    let key = draw(self.edge_key, 64 * attempt + level);
                    descend(&mut u, &mut v, draw(key, e));
                }
                (u, v)
            })
            .find(|(u, v)| u != v)
            .expect("an endless search ends")
    }

    fn weight(&self, e: u64) -> u64 {
        1 + below(draw(self.weight_key, e), self.weight_range())
    }

    fn weight_range(&self) -> u64 {
        1 << self.scale
    }
}

/// Edges `first ..= first + L - 1` of the global list, a lane each: attempt 0 of every lane
/// at once, the few self-loops (a fraction (a + d)^SCALE) redrawn one at a time.
impl Lanes for Ssca2 {
    type Item = Edge;
    #[inline(always)]
    fn batch<const L: usize>(&self, first: u64, out: &mut [Edge; L]) {
        let weyls: [u64; L] = std::array::from_fn(|l| weyl(first + l as u64));
        let (mut u, mut v) = ([0u64; L], [0u64; L]);
        for &key in &self.first_keys {
            for l in 0..L {
                descend(&mut u[l], &mut v[l], draw_at(key, weyls[l]));
            }
        }
        for l in 0..L {
            let (u, v) = match (u[l], v[l]) {
                (u, v) if u == v => self.redrawn(first + l as u64),
                pair => pair,
            };
            out[l] = (self.scramble.apply(u), self.scramble.apply(v));
        }
    }
}

/// One level of R-MAT: the quadrant `bits` choose appends its row bit to u, its column bit
/// to v.
#[inline(always)]
fn descend(u: &mut u64, v: &mut u64, bits: u64) {
    let (row, col) = quadrant(bits);
    *u = (*u << 1) | row;
    *v = (*v << 1) | col;
}

/// The quadrant (row bit, column bit) 64 random bits choose, in integers: bits 12i ..
/// 12i + 12 (x) scale initiator entry i by (38912 + x) / 40960, in [0.95, 1.05); the top 16
/// bits pick among the four in proportion: t = top · (w_0 + .. + w_3) / 2^16, and the
/// quadrant is the number q of the sums w_0, w_0 + w_1, w_0 + w_1 + w_2 at or below t. q
/// rises with t, so the row bit (q >= 2) is the middle test and the column bit (q odd) the
/// three tests' exclusive or; each test is the sign bit of sum - 1 - t (all below 2^40), so
/// a batch's lanes compute it without branches or masks.
#[inline(always)]
fn quadrant(bits: u64) -> (u64, u64) {
    let weight = |i: usize| INITIATOR[i] * (38912 + ((bits >> (12 * i)) & 0xfff));
    let w0 = weight(0);
    let w01 = w0 + weight(1);
    let w012 = w01 + weight(2);
    let t = ((bits >> 48) * (w012 + weight(3))) >> 16;
    let at_or_below = |sum: u64| sum.wrapping_sub(1).wrapping_sub(t);
    let row = at_or_below(w01) >> 63;
    let col = (at_or_below(w0) ^ at_or_below(w01) ^ at_or_below(w012)) >> 63;
    (row, col)
}

impl EdgeSource for Ssca2 {
    fn num_vertices(&self) -> u64 {
        1u64 << self.scale
    }
    fn num_edges(&self) -> u64 {
        8u64 << self.scale
    }
    fn local_len(&self) -> u64 {
        self.local.end - self.local.start
    }
    fn local_chunk(&self, start: u64, len: u64, out: &mut Vec<Edge>) {
        lanes::append(self, self.local.start + start, len, out);
    }
    fn is_directed(&self) -> bool {
        true
    }
    fn is_weighted(&self) -> bool {
        true
    }
    fn local_weights(&self, start: u64, len: u64, out: &mut Vec<u64>) {
        fill(out, self.local.start + start, len, |e| self.weight(e));
    }
    /// kernels/generators.cu `ssca2_edge` (the edges only: the weights are `device_weights`),
    /// which builds the ids in 32-bit words: up to SCALE 32, as the GPU's CSR holds them.
    fn device_edges(&self) -> Option<DeviceEdges> {
        if self.scale > 32 {
            return None;
        }
        let mut params = vec![self.edge_key];
        params.extend(self.scramble.params());
        params.push(self.scale as u64);
        params.extend(&self.first_keys);
        Some(DeviceEdges {
            kernel: "ssca2",
            params,
            first_edge: self.local.start,
        })
    }
    fn device_weights(&self) -> Option<DeviceWeights> {
        Some(DeviceWeights {
            key: self.weight_key,
            range: self.weight_range(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{emulate, global_edges, section};
    use super::*;
    use crate::rng::mix64;

    #[test]
    fn edges_weights_and_ids_are_in_range() {
        let scale = 10;
        let list = global_edges(|ranks, rank| Ssca2::new(scale, 6, ranks, rank));
        assert_eq!(list.len(), 8 << scale);
        assert!(list
            .iter()
            .all(|&(u, v)| u != v && u < 1 << scale && v < 1 << scale));
        let g = Ssca2::new(scale, 6, 1, 0);
        assert!(g.is_directed() && g.is_weighted());
        let mut weights = Vec::new();
        g.local_weights(0, g.local_len(), &mut weights);
        assert_eq!(weights.len(), list.len());
        assert!(weights.iter().all(|&w| (1..=1 << scale).contains(&w)));
        assert!(weights.contains(&1) && weights.contains(&(1 << scale)));
        let mut split = Vec::new();
        for rank in 0..3 {
            let part = Ssca2::new(scale, 6, 3, rank);
            part.local_weights(0, part.local_len(), &mut split);
        }
        assert_eq!(weights, split);
    }

    #[test]
    fn quadrant_frequencies_match_the_initiator() {
        let key = stream_key(1, SSCA2_EDGE);
        let trials = 1 << 18;
        let mut count = [0u32; 4];
        for i in 0..trials {
            let (row, col) = quadrant(draw(key, i));
            count[2 * row as usize + col as usize] += 1;
        }
        for (c, p) in count.iter().zip(INITIATOR.map(|p| p as f64 / 100.0)) {
            let sd = (trials as f64 * p * (1.0 - p)).sqrt();
            // Noise moves each probability by well under 0.1%.
            assert!((*c as f64 - p * trials as f64).abs() < 5.0 * sd + 0.001 * trials as f64);
        }
    }

    /// kernels/generators.cu `ssca2_edge`'s layout: key, scramble, SCALE, the attempt-0
    /// level keys (each the draw `rmat` makes for attempt 0); the initiator is the file's.
    #[test]
    fn device_params_follow_the_kernels_layout() {
        let g = Ssca2::new(7, 4, 2, 1);
        let d = g.device_edges().unwrap();
        assert_eq!((d.kernel, d.first_edge), ("ssca2", 8 << 6));
        assert_eq!(d.params[0], stream_key(4, SSCA2_EDGE));
        assert_eq!(d.params[1..7], g.scramble.params());
        assert_eq!(d.params[7], 7);
        let keys: Vec<u64> = (0..7).map(|l| draw(d.params[0], l)).collect();
        assert_eq!(d.params[8..], keys);
        let kernels = include_str!("../../../kernels/generators.cu");
        for (i, h) in INITIATOR.iter().enumerate() {
            let line = format!("\n#define SSCA2_H{i} {h}u\n");
            assert!(kernels.contains(&line), "generators.cu lacks {line:?}");
        }
    }

    /// kernels/generators.cu `ssca2_edge`, run on the host by tests/emulate/ssca2_edges.cpp
    /// (g++), makes every edge as `edge` does: all of SCALE 10 (self-loops redrawn), a range
    /// of a rank of three at SCALE 20, and SCALE 32, the largest the kernel takes; and its
    /// checksum kernel, whose warps queue the redraws, sums them as the host does on grids of
    /// 1, 3 and 9 warps.
    #[test]
    fn the_kernel_emulated_makes_the_hosts_edges() {
        let prelude = include_str!("../../../kernels/prelude.cuh");
        let kernels = include_str!("../../../kernels/generators.cu");
        let header = section(prelude, "#define RNG_GOLDEN", "// A stream key")
            + &section(kernels, "// Kronecker's seeded", "// ---- Graph500")
            + &section(kernels, "// ---- SSCA#2", "// ---- Barabási-Albert")
            + &section(
                kernels,
                "// The checksum of a generator whose",
                "GENERATOR(kron)",
            );
        let emulation = |file: &'static str, text: &str| (file, text.to_string());
        let files = [
            ("ssca2_kernel.h", header),
            emulation(
                "ssca2_edges.cpp",
                include_str!("../../../tests/emulate/ssca2_edges.cpp"),
            ),
            emulation(
                "warp_fibers.h",
                include_str!("../../../tests/emulate/warp_fibers.h"),
            ),
            emulation(
                "cuda_host.h",
                include_str!("../../../tests/emulate/cuda_host.h"),
            ),
        ];
        for (scale, ranks, rank, count) in
            [(10, 1, 0, 8 << 10), (20, 3, 1, 50_000), (32, 1, 0, 20_000)]
        {
            let g = Ssca2::new(scale, 7, ranks, rank);
            let d = g.device_edges().unwrap();
            let mut input = format!("{} ", d.params.len());
            input.extend(d.params.iter().map(|p| format!("{p} ")));
            input += &format!("{} {count}\n", d.first_edge);
            let out = emulate("ssca2_edges", &files, &input);
            let (edges, sums) = out.split_at(out.find("checksum").unwrap());
            let mut want = Vec::new();
            g.local_chunk(0, count, &mut want);
            let got: Vec<Edge> = edges
                .lines()
                .map(|l| {
                    let (u, v) = l.split_once(' ').unwrap();
                    (u.parse().unwrap(), v.parse().unwrap())
                })
                .collect();
            assert!(got == want, "SCALE {scale}: the kernel's edges differ");
            let hash = want
                .iter()
                .fold(0u64, |h, &(u, v)| h.wrapping_add(mix64(mix64(u) ^ v)));
            let sum = format!("checksum {hash}");
            assert_eq!(sums.lines().collect::<Vec<_>>(), [&sum; 3], "SCALE {scale}");
        }
        assert!(Ssca2::new(33, 7, 1, 0).device_edges().is_none());
    }

    /// kernels/generators.cu `arcs_fill` makes edge e's weight as 1 + below(draw(key, e),
    /// range) from `device_weights`: the generator's weights, on any rank.
    #[test]
    fn device_weights_follow_the_kernels_formula() {
        let g = Ssca2::new(9, 3, 3, 2);
        let w = g.device_weights().unwrap();
        let mut weights = Vec::new();
        g.local_weights(0, g.local_len(), &mut weights);
        let first = g.device_edges().unwrap().first_edge;
        for (i, &weight) in weights.iter().enumerate() {
            let e = first + i as u64;
            assert_eq!(weight, 1 + below(draw(w.key, e), w.range));
        }
        assert!(w.range < 1 << 32, "weights fit the low half of a key");
    }

    #[test]
    fn check_names_the_rule() {
        assert!(check(1).is_ok() && check(60).is_ok());
        assert!(check(0).unwrap_err().contains("scale = 0"));
        assert!(check(61).is_err());
    }
}
