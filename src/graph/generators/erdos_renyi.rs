//! Erdős–Rényi G(n, m): exactly m distinct pairs u < v drawn uniformly from the n(n-1)/2
//! possible ones, as KaGen does it (Funke, Lamm, Meyer, Penschuck, Sanders, Schulz, Strash &
//! von Looz 2019, "Communication-free massively distributed graph generation").
//!
//! The pair space, slot s = v(v-1)/2 + u for u < v, is cut into 2^c chunks of (nearly)
//! equal size, c fixed by n and m, not the rank count (about `CHUNK_EDGES` edges and at most
//! 2^63 slots a chunk). A binary tree over the
//! chunks splits the m edges: a node holding k edges over a slot range of size N, of which
//! the left child covers N_L, gives its left child a hypergeometric(N, N_L, k) count, drawn
//! by inversion of the uniform keyed by the tree node: the probabilities walked from the mode
//! outwards by their ratios to the mode's, and the mode's in closed form by Loader's
//! saddle-point method (C. Loader 2000, "Fast and Accurate Computation of Binomial
//! Probabilities"), good to about 1e-14, so no walk over the whole support to normalise them.
//! Each chunk then draws its count of distinct slots (uniform draws keyed by chunk and draw
//! number, sorted, repeats redrawn; the complement when the chunk is more than half full).
//! Edge e is the e-th slot in this order (chunks in turn, slots ascending within one), so a
//! rank only descends the tree into the chunks its edge range touches (its window of each
//! level). A GPU run descends the top levels here and the rest on the GPU
//! (`erdos_renyi_gpu`), whose draws are these bit for bit.

use super::super::{block_range, DeviceEdges, Edge, EdgeSource};
use super::{below, unit, ER_SLOTS, ER_SPLIT};
use super::{erdos_renyi_gpu, portable_math};
use crate::device::Gpu;
use crate::error;
use crate::rng::{draw, stream_key};
use cudarc::driver::CudaSlice;
use rayon::prelude::*;
use std::sync::OnceLock;

/// Most expected edges a chunk (the chunk count is the least power of two giving that).
const CHUNK_EDGES: u64 = 1 << 11;
/// Nodes of a rank's window from which the GPU carries on the descent: the host draws the
/// top levels, whose walks are long (about the square root of a node's edges) and few, the
/// GPU the many short ones below, where a thread's serial walk costs no more than the
/// host's. 1024 was the best of 64 to 4096 (one H200 and its 16 cores, 2^26 and 2^28
/// edges, 2026-12-04: 4.6-4.7 ms at 2^26 edges against 5.6 ms with 64).
const DEVICE_WINDOW: usize = 1024;

/// Checks that m distinct pairs fit among the n(n-1)/2.
pub fn check(n: u64, m: u64) -> Result<(), String> {
    let pairs = pair_count(n);
    if m as u128 > pairs {
        return Err(format!(
            "edges = {m} must be at most vertices·(vertices-1)/2 = {pairs}"
        ));
    }
    Ok(())
}

fn pair_count(n: u64) -> u128 {
    n as u128 * n.saturating_sub(1) as u128 / 2
}

/// A node of the split tree, `id` its index in its level (a chunk at the last level):
/// `count` edges from global edge index `first`.
struct Chunk {
    id: u64,
    first: u64,
    count: u64,
}

pub struct ErdosRenyi {
    n: u64,
    m: u64,
    pairs: u128,
    levels: u32,
    split_key: u64,
    slot_key: u64,
    local: std::ops::Range<u64>,
    /// The chunks that hold this rank's edges, in order (those between that hold none
    /// included), found on the first need of them: a GPU run finds them on the GPU.
    chunks: OnceLock<Vec<Chunk>>,
}

impl ErdosRenyi {
    /// m distinct edges on n vertices (see `check`).
    pub fn new(n: u64, m: u64, seed: u64, ranks: usize, rank: usize) -> Self {
        ErdosRenyi {
            n,
            m,
            pairs: pair_count(n),
            levels: chunk_levels(m, pair_count(n)),
            split_key: stream_key(seed, ER_SPLIT),
            slot_key: stream_key(seed, ER_SLOTS),
            local: block_range(m, ranks, rank),
            chunks: OnceLock::new(),
        }
    }

    /// First slot of chunk `i` (i ≤ 2^levels), ⌊pairs·i / 2^levels⌋ without overflow.
    fn boundary(&self, i: u64) -> u128 {
        let mask = (1u128 << self.levels) - 1;
        (self.pairs >> self.levels) * i as u128 + (((self.pairs & mask) * i as u128) >> self.levels)
    }

    /// Slots under tree node `index` of `level`.
    fn span(&self, level: u32, index: u64) -> u128 {
        let shift = self.levels - level;
        self.boundary((index + 1) << shift) - self.boundary(index << shift)
    }

    /// Whether node `c` holds any of this rank's edges.
    fn overlaps(&self, c: &Chunk) -> bool {
        c.count > 0 && c.first < self.local.end && c.first + c.count > self.local.start
    }

    /// This rank's window of the tree's root level: the root, or nothing on a rank without
    /// edges.
    fn root_window(&self) -> Vec<Chunk> {
        let root = Chunk {
            id: 0,
            first: 0,
            count: self.m,
        };
        [root].into_iter().filter(|c| self.overlaps(c)).collect()
    }

    /// The window of the level below `level`'s `window` (consecutive nodes, the first and
    /// last holding edges of this rank): every child, less one at either end that holds
    /// none (only one can). Its nodes are drawn in parallel, one pass a level.
    fn children(&self, level: u32, window: &[Chunk]) -> Vec<Chunk> {
        let mut next: Vec<Chunk> = window
            .par_iter()
            .flat_map_iter(|c| {
                let u = unit(draw(self.split_key, (1u64 << level) + c.id));
                let left = hypergeometric(
                    u,
                    self.span(level, c.id),
                    self.span(level + 1, 2 * c.id),
                    c.count as u128,
                ) as u64;
                [
                    (2 * c.id, c.first, left),
                    (2 * c.id + 1, c.first + left, c.count - left),
                ]
                .map(|(id, first, count)| Chunk { id, first, count })
            })
            .collect();
        if next.last().is_some_and(|c| !self.overlaps(c)) {
            next.pop();
        }
        if next.first().is_some_and(|c| !self.overlaps(c)) {
            next.remove(0);
        }
        next
    }

    /// The chunks of this rank's edges, the tree descended on the host.
    fn chunks(&self) -> &[Chunk] {
        self.chunks.get_or_init(|| {
            (0..self.levels).fold(self.root_window(), |w, level| self.children(level, &w))
        })
    }

    /// (first edge, edges) of each of this rank's chunks, as the host finds them.
    #[cfg(test)]
    pub(super) fn chunk_counts(&self) -> Vec<(u64, u64)> {
        self.chunks().iter().map(|c| (c.first, c.count)).collect()
    }

    /// The edges `skip .. skip + out.len()` of a chunk, into `out`.
    fn chunk_edges(&self, chunk: &Chunk, skip: usize, out: &mut [Edge]) {
        let base = self.boundary(chunk.id);
        let cap = self.span(self.levels, chunk.id) as u64;
        let slots = sorted_distinct(draw(self.slot_key, chunk.id), chunk.count, cap);
        let mut row = Row::default();
        for (edge, &s) in out.iter_mut().zip(&slots[skip..]) {
            *edge = row.pair(base + s as u128);
        }
    }
}

/// The tree depth: chunks of about `CHUNK_EDGES` edges, and of at most 2^63 slots.
fn chunk_levels(m: u64, pairs: u128) -> u32 {
    let by_edges = m.div_ceil(CHUNK_EDGES).next_power_of_two().trailing_zeros();
    by_edges.max((128 - pairs.leading_zeros()).saturating_sub(63))
}

/// `k` distinct values of [0, cap), sorted: uniform draws, sorted, repeats redrawn until k
/// are distinct (the stopping rule depends on the number of distinct values only, so the
/// set is a uniform k-subset); the complement of a (cap - k)-subset when k > cap / 2.
fn sorted_distinct(key: u64, k: u64, cap: u64) -> Vec<u64> {
    if 2 * k as u128 > cap as u128 {
        let mut skip = sorted_distinct(key, cap - k, cap).into_iter().peekable();
        return (0..cap)
            .filter(|&s| skip.next_if_eq(&s).is_none())
            .collect();
    }
    let mut values = Vec::with_capacity(k as usize);
    let mut counter = 0;
    while (values.len() as u64) < k {
        while (values.len() as u64) < k {
            values.push(below(draw(key, counter), cap));
            counter += 1;
        }
        values = sort_uniform(values, cap);
        values.dedup();
    }
    values
}

/// Sorts values spread uniformly over [0, cap) in linear expected time: a counting sort on
/// their top bits into about one bucket a value, then insertion sort (a value moves only
/// within its bucket).
fn sort_uniform(values: Vec<u64>, cap: u64) -> Vec<u64> {
    let bits = 64 - cap.leading_zeros();
    let shift = bits.saturating_sub(values.len().max(1).ilog2());
    let mut start = vec![0usize; (cap >> shift) as usize + 2];
    values
        .iter()
        .for_each(|&v| start[(v >> shift) as usize + 1] += 1);
    (1..start.len()).for_each(|b| start[b] += start[b - 1]);
    let mut sorted = vec![0u64; values.len()];
    for &v in &values {
        let slot = &mut start[(v >> shift) as usize];
        sorted[*slot] = v;
        *slot += 1;
    }
    for i in 1..sorted.len() {
        let (v, mut j) = (sorted[i], i);
        while j > 0 && sorted[j - 1] > v {
            sorted[j] = sorted[j - 1];
            j -= 1;
        }
        sorted[j] = v;
    }
    sorted
}

/// A cursor over the rows of the pair space: row v holds the slots v(v-1)/2 + u, u < v.
/// Sorted slots mostly stay in a row or move a few rows on, so the square root is rare.
#[derive(Default)]
struct Row {
    v: u128,
    start: u128,
}

impl Row {
    /// The pair (u, v), u < v, of slot s.
    fn pair(&mut self, s: u128) -> Edge {
        if s >= self.start && s < self.start + 4 * self.v {
            while s >= self.start + self.v {
                (self.start, self.v) = (self.start + self.v, self.v + 1);
            }
        } else {
            let tri = |v: u128| v * (v - 1) / 2;
            let mut v = (((1.0 + (1.0 + 8.0 * s as f64).sqrt()) / 2.0) as u128).max(1);
            while tri(v) > s {
                v -= 1;
            }
            while tri(v + 1) <= s {
                v += 1;
            }
            (self.v, self.start) = (v, tri(v));
        }
        ((s - self.start) as u64, self.v as u64)
    }
}

/// A hypergeometric variate by inversion of `u` in [0, 1): of `draws` items taken without
/// replacement from `total`, `good` of them good, how many are good. The probabilities are
/// enumerated from the mode outwards, largest first, by their ratios to the mode's (no
/// factorials), until their running sum passes u / P(mode), P(mode) in closed form
/// (`probability`): about as many terms as the variate's distance from the mode, where a
/// normalising sum would take every term down to 2^-54 of the largest (17 standard
/// deviations). One method for every law, small ones too: P(mode) is good to about 1e-14,
/// as the summed normaliser was, so either can only move a u within that of a boundary of
/// the cumulative sums. Should the walk end first (its tails cut at 2^-64 of the sum), only
/// possible for such a u, the last value visited is taken.
fn hypergeometric(u: f64, total: u128, good: u128, draws: u128) -> u128 {
    let walk = HyperWalk::new(total, good, draws);
    if walk.room == (0, 0) {
        return walk.mode;
    }
    let target = u / probability(total, good, draws, walk.mode);
    let mut acc = 0.0;
    let mut last = walk.mode;
    for (x, w) in walk {
        acc += w;
        last = x;
        if target < acc {
            break;
        }
    }
    last
}

/// P(X = x) for X hypergeometric as in `hypergeometric`, x in its support, the law not a
/// single value (so no margin below is 0). Loader's saddle-point method (C. Loader 2000,
/// "Fast and Accurate Computation of Binomial Probabilities"; R's dbinom and dhyper), over the
/// 2×2 table of good/bad × drawn/left: with ln k! = k ln k - k + ½ ln(2πk) + stirlerr(k)
/// (k ≥ 1) for the four margins, the total and the four cells, the k ln k - k terms sum to
/// -Σ bd0(cell, expected cell), expected cell = row·column / total. Every cell is off its
/// expected value by ±d, d taken at the cell of least expected value (the smallest margins),
/// where its absolute error, a few ulps of that value, is small against the variance, which
/// is at least a quarter of it: so no term cancels, for totals up to 2^128 (f64 products of
/// up to five of them stay below 2^1024). ln and exp are `portable_math`'s, which the GPU
/// repeats bit for bit (kernels/generators.cu `er_probability`), as it does the rest.
fn probability(total: u128, good: u128, draws: u128, x: u128) -> f64 {
    let bad = total - good;
    let (rows, cols) = ([good, bad], [draws, total - draws]);
    // Cells (good, drawn), (good, left), (bad, drawn), (bad, left), and the signs of their
    // deviations from the expected values.
    let cells = [x, good - x, draws - x, bad - (draws - x)];
    let signs = [1.0, -1.0, -1.0, 1.0];
    let expected = [0, 1, 2, 3].map(|c| rows[c / 2] as f64 * cols[c % 2] as f64 / total as f64);
    let small = 2 * (rows[1] < rows[0]) as usize + (cols[1] < cols[0]) as usize;
    let d = signs[small] * (cells[small] as f64 - expected[small]);
    let margins = [good, bad, draws, total - draws];
    let mut exponent = margins.iter().map(|&k| stirlerr(k)).sum::<f64>() - stirlerr(total);
    let (mut ratio, mut filled) = (1.0 / total as f64, 0usize);
    for (&k, &m) in cells.iter().zip(&margins) {
        ratio *= m as f64;
        if k > 0 {
            ratio /= k as f64;
            filled += 1;
        }
    }
    for c in 0..4 {
        exponent -= stirlerr(cells[c]) + bd0(cells[c], signs[c] * d, expected[c]);
    }
    (ratio * TWO_PI_POWERS[filled]).sqrt() * portable_math::exp(exponent)
}

/// (2π)^(3 - f), f = 0..4: ½ ln(2π) for each margin, less the total's and the f filled
/// cells' (correctly rounded).
const TWO_PI_POWERS: [f64; 5] = [
    248.05021344239856,
    39.47841760435743,
    std::f64::consts::TAU,
    1.0,
    0.15915494309189535,
];

/// ln k! - (k ln k - k + ½ ln(2πk)), Stirling's series' remainder, 0 at k = 0 (whose cell
/// has no ½ ln(2πk) term either): exact to f64 up to 15 (from 50-digit logarithms), and the
/// series 1/12k - 1/360k³ + 1/1260k⁵ - 1/1680k⁷ + 1/1188k⁹ above, whose next term is under
/// 1.2e-16 there.
fn stirlerr(k: u128) -> f64 {
    const EXACT: [f64; 16] = [
        0.0,
        0.08106146679532726,
        0.0413406959554093,
        0.02767792568499834,
        0.020790672103765093,
        0.016644691189821193,
        0.013876128823070748,
        0.01189670994589177,
        0.010411265261972096,
        0.009255462182712733,
        0.00833056343336287,
        0.007573675487951841,
        0.00694284010720953,
        0.006408994188004207,
        0.0059513701127588475,
        0.005554733551962801,
    ];
    if k < 16 {
        return EXACT[k as usize];
    }
    let r = 1.0 / k as f64;
    let r2 = r * r;
    let series = 1.0 / 1260.0 - r2 * (1.0 / 1680.0 - r2 * (1.0 / 1188.0));
    r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 * series))
}

/// Loader's deviance term bd0(k, e) = k ln(k/e) + e - k for a count k and its expected
/// value e, also given as the deviation k - e (better than the difference of the two where
/// they are huge and close): then by the series (k - e)·v + 2k·Σ v^(2j+1)/(2j+1),
/// v = (k - e)/(k + e), whose terms fall by v² each; far apart (|v| ≥ 0.1) by the formula.
fn bd0(k: u128, dev: f64, e: f64) -> f64 {
    if k == 0 {
        return e;
    }
    let k = k as f64;
    let v = dev / (2.0 * k - dev);
    if v.abs() >= 0.1 {
        return k * portable_math::ln(k / e) + e - k;
    }
    let (v2, mut term, mut sum) = (v * v, 2.0 * k * v, dev * v);
    for j in 1.. {
        term *= v2;
        let next = sum + term / (2 * j + 1) as f64;
        if next == sum {
            break;
        }
        sum = next;
    }
    sum
}

/// The support of a hypergeometric law in decreasing order of probability, with the
/// probabilities relative to the mode's. The ratio of neighbouring terms is a product of
/// four factors linear in the distance from the mode: their values at the mode are taken
/// exactly in integers, then as f64, so no step converts or cancels large integers.
#[derive(Clone)]
struct HyperWalk {
    mode: u128,
    /// Steps the walk may take below and above the mode.
    room: (u128, u128),
    /// mode, good - mode, draws - mode and bad - draws + mode.
    at_mode: [f64; 4],
    /// Steps taken below and above the mode, and the weights there.
    down: (u128, f64),
    up: (u128, f64),
    /// Sum of the weights visited (0 before the mode).
    sum: f64,
    /// The next weights below and above as last computed, while their side has not moved.
    next: (Option<f64>, Option<f64>),
}

impl HyperWalk {
    fn new(total: u128, good: u128, draws: u128) -> Self {
        let bad = total - good;
        let (lo, hi) = (draws.saturating_sub(bad), draws.min(good));
        let mode = ((draws as f64 + 1.0) * ((good as f64 + 1.0) / (total as f64 + 2.0))) as u128;
        let mode = mode.clamp(lo, hi);
        HyperWalk {
            mode,
            room: (mode - lo, hi - mode),
            at_mode: [mode, good - mode, draws - mode, bad + mode - draws].map(|v| v as f64),
            down: (0, 1.0),
            up: (0, 1.0),
            sum: 0.0,
            next: (None, None),
        }
    }
}

impl Iterator for HyperWalk {
    type Item = (u128, f64);

    fn next(&mut self) -> Option<(u128, f64)> {
        if self.sum == 0.0 {
            self.sum = 1.0;
            return Some((self.mode, 1.0));
        }
        let [m, g, d, c] = self.at_mode;
        let ((i, wi), (j, wj)) = (self.down, self.up);
        let (fi, fj) = (i as f64, j as f64);
        // P(x - 1) / P(x) at x = mode - i: x (bad - draws + x) / ((good - x + 1)(draws - x + 1)).
        let below = self.next.0.take().unwrap_or_else(|| match i < self.room.0 {
            true => wi * ((m - fi) * (c - fi)) / ((g + fi + 1.0) * (d + fi + 1.0)),
            false => 0.0,
        });
        // P(x + 1) / P(x) at x = mode + j: (good - x)(draws - x) / ((x + 1)(bad - draws + x + 1)).
        let above = self.next.1.take().unwrap_or_else(|| match j < self.room.1 {
            true => wj * ((g - fj) * (d - fj)) / ((m + fj + 1.0) * (c + fj + 1.0)),
            false => 0.0,
        });
        let w = below.max(above);
        if w < self.sum * f64::powi(2.0, -64) {
            return None;
        }
        self.sum += w;
        // The side not taken keeps its weight for the next step.
        if above >= below {
            self.up = (j + 1, above);
            self.next.0 = Some(below);
            Some((self.mode + j + 1, above))
        } else {
            self.down = (i + 1, below);
            self.next.1 = Some(above);
            Some((self.mode - i - 1, below))
        }
    }
}

impl EdgeSource for ErdosRenyi {
    fn num_vertices(&self) -> u64 {
        self.n
    }
    fn num_edges(&self) -> u64 {
        self.m
    }
    fn local_len(&self) -> u64 {
        self.local.end - self.local.start
    }
    /// The split tree's top levels descended on the host, until this rank's window has
    /// `DEVICE_WINDOW` nodes, as the GPU carries on from them (`device_params`); None where
    /// a slot needs more than 64 bits (n > 2^32).
    fn device_edges(&self) -> Option<DeviceEdges> {
        if self.n > 1 << 32 {
            return None;
        }
        let (mut level, mut window) = (0, self.root_window());
        while level < self.levels && window.len() < DEVICE_WINDOW {
            window = self.children(level, &window);
            level += 1;
        }
        let params = erdos_renyi_gpu::Descent {
            levels: self.levels,
            level,
            pairs: self.pairs as u64,
            split_key: self.split_key,
            slot_key: self.slot_key,
            local: self.local.clone(),
            lo: window.first().map_or(0, |c| c.id),
            window: window.iter().map(|c| (c.first, c.count)).collect(),
        }
        .params();
        Some(DeviceEdges {
            kernel: "er",
            params,
            first_edge: self.local.start,
        })
    }

    /// The rest of the descent on the GPU, into the chunk list the "er" kernels read (5
    /// numbers a chunk: first edge, edges, slots, first slot, key); None where, far out in
    /// the tail, a chunk draws more than a block holds.
    fn device_params(
        &self,
        gpu: &Gpu,
        edges: &DeviceEdges,
    ) -> error::Result<Option<CudaSlice<u64>>> {
        erdos_renyi_gpu::descend(gpu, &edges.params)
    }

    fn local_chunk(&self, start: u64, len: u64, out: &mut Vec<Edge>) {
        let (from, to) = (self.local.start + start, self.local.start + start + len);
        let a = self.chunks().partition_point(|c| c.first + c.count <= from);
        let b = self.chunks().partition_point(|c| c.first < to);
        let at = out.len();
        out.resize(at + len as usize, (0, 0));
        // Each chunk's part of the range, with the slice of `out` it fills.
        let mut rest = &mut out[at..];
        let mut work = Vec::with_capacity(b - a);
        for c in &self.chunks()[a..b] {
            let skip = from.saturating_sub(c.first);
            let part;
            (part, rest) = rest.split_at_mut(((to - c.first).min(c.count) - skip) as usize);
            work.push((c, skip as usize, part));
        }
        work.into_par_iter()
            .for_each(|(c, skip, part)| self.chunk_edges(c, skip, part));
    }
}

#[cfg(test)]
mod tests {
    use super::super::global_edges;
    use super::*;

    fn edges(n: u64, m: u64, seed: u64) -> Vec<Edge> {
        global_edges(|ranks, rank| ErdosRenyi::new(n, m, seed, ranks, rank))
    }

    /// Exactly m distinct pairs u < v < n.
    fn assert_exact(n: u64, m: u64, list: &[Edge]) {
        assert_eq!(list.len() as u64, m);
        assert!(list.iter().all(|&(u, v)| u < v && v < n));
        let mut pairs = list.to_vec();
        pairs.sort_unstable();
        pairs.dedup();
        assert_eq!(pairs.len() as u64, m, "n = {n}, m = {m}: repeated pairs");
    }

    #[test]
    fn exactly_m_distinct_pairs() {
        // One chunk sparse and full; 2^5 and 2^6 chunks, sparse and more than half full.
        for (n, m) in [(300, 2000), (40, 780), (2000, 100_000), (700, 200_000)] {
            assert_exact(n, m, &edges(n, m, 4));
        }
        assert_exact(1 << 40, 50_000, &edges(1 << 40, 50_000, 4));
    }

    #[test]
    fn pairs_are_spread_uniformly() {
        let (n, m) = (1000u64, 100_000u64);
        let list = edges(n, m, 8);
        // Pairs with v < n/√2, about half the pair space: a hypergeometric count.
        let (cut, all) = ((n as f64 / 2f64.sqrt()) as u64, pair_count(n) as f64);
        let low = list.iter().filter(|&&(_, v)| v < cut).count() as f64;
        let q = pair_count(cut) as f64 / all;
        let sd = (m as f64 * q * (1.0 - q) * (all - m as f64) / (all - 1.0)).sqrt();
        assert!((low - q * m as f64).abs() < 5.0 * sd, "{low} of {m}");
        let mut deg = vec![0u64; n as usize];
        list.iter()
            .for_each(|&(u, v)| [u, v].iter().for_each(|&x| deg[x as usize] += 1));
        // Degrees ~ Binomial(999, 0.2): mean 200, sd 12.6.
        assert!(deg.iter().all(|&d| (120..=280).contains(&d)));
    }

    #[test]
    fn slots_map_to_pairs_in_order() {
        let mut row = Row::default();
        let all: Vec<Edge> = (0..15).map(|s| row.pair(s)).collect();
        let mut want = Vec::new();
        (1..6).for_each(|v| (0..v).for_each(|u| want.push((u, v))));
        assert_eq!(all, want);
        let v = 1u128 << 47;
        assert_eq!(row.pair(v * (v - 1) / 2 + 5), (5, v as u64));
        assert_eq!(row.pair(v * (v + 1) / 2 - 1), (v as u64 - 1, v as u64));
        assert_eq!(row.pair(3), (0, 3));
    }

    /// Inversion on a fine grid of u reproduces the probabilities (exact ones computed
    /// directly for a small law; mean and variance for a large one).
    #[test]
    fn hypergeometric_inversion_is_exact() {
        let (total, good, draws) = (50u128, 20u128, 12u128);
        let choose =
            |a: u128, b: u128| (0..b).fold(1.0, |c, i| c * (a - i) as f64 / (i + 1) as f64);
        let grid = 1_000_000;
        let mut count = [0u32; 13];
        for i in 0..grid {
            let x = hypergeometric((i as f64 + 0.5) / grid as f64, total, good, draws);
            count[x as usize] += 1;
        }
        for (x, &c) in count.iter().enumerate() {
            let x = x as u128;
            let p = choose(good, x) * choose(total - good, draws - x) / choose(total, draws);
            assert!((c as f64 / grid as f64 - p).abs() < 2e-6, "x = {x}");
        }
        let (total, good, draws) = (1u128 << 80, 1u128 << 78, 1u128 << 20);
        let grid = 10_000;
        let xs: Vec<f64> = (0..grid)
            .map(|i| hypergeometric((i as f64 + 0.5) / grid as f64, total, good, draws) as f64)
            .collect();
        let mean = xs.iter().sum::<f64>() / grid as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / grid as f64;
        assert!((mean - (1 << 18) as f64).abs() < 1.0, "{mean}");
        assert!(
            (var / (0.1875 * (1 << 20) as f64) - 1.0).abs() < 0.01,
            "{var}"
        );
    }

    /// P(mode) in closed form against 1 / (the sum of the walk's weights, every one, relative
    /// to the mode's), and for small laws against products of binomial coefficients: huge
    /// totals, and good or draws near 0 or the total. (The walk's mode is taken in f64, so
    /// the laws keep it below 2^53, as the tree's do, its draws being edges; at
    /// (2^100, 2^99, 2^100 - 40) it is the end of the support, 20 from the mode: P(x) holds
    /// off the mode too.)
    #[test]
    fn probability_of_the_mode_is_accurate() {
        let choose =
            |a: u128, b: u128| (0..b).fold(1.0, |c, i| c * (a - i) as f64 / (i + 1) as f64);
        let p = |k: u32| 1u128 << k;
        let laws = [
            (50, 20, 12),
            (10, 1, 1),
            (10, 9, 9),
            (40, 20, 20),
            (1000, 3, 500),
            (1_000_000, 300_000, 500_000),
            (p(40), p(39) + 12_345, 2048),
            (p(60), p(59) + 1, p(20)),
            (p(60), p(59), p(60) - 3),
            (p(64), p(63) + 1, p(64) - 1),
            (p(100), p(99), p(16)),
            (p(100), p(99) - 7, 3 * p(18)),
            (p(100), 5, p(99)),
            (p(100), p(100) - 3, p(52)),
            (p(100), 7, p(100) - p(97)),
            (p(100), p(99), 40),
            (p(100), p(99), p(100) - 40),
            (p(100), p(60), p(41)),
            (p(52), p(52) - p(30), p(52) - p(25)),
            (p(100), 1, 1),
            (p(100), p(100) - 1, p(100) - 1),
        ];
        for (total, good, draws) in laws {
            let walk = HyperWalk::new(total, good, draws);
            let x = walk.mode;
            let want = 1.0 / walk.map(|(_, w)| w).sum::<f64>();
            let got = probability(total, good, draws, x);
            let law = format!("total {total} good {good} draws {draws} x {x}");
            assert!((got / want - 1.0).abs() < 1e-12, "{law}: {got} vs {want}");
            if total <= 1_000 {
                let exact =
                    choose(good, x) * choose(total - good, draws - x) / choose(total, draws);
                assert!((got / exact - 1.0).abs() < 1e-12, "{law}: {got} vs {exact}");
            }
        }
    }

    #[test]
    fn check_names_the_rule() {
        assert!(check(100, 4950).is_ok());
        let e = check(100, 4951).unwrap_err();
        assert!(e.contains("edges = 4951") && e.contains("= 4950"), "{e}");
    }
}
