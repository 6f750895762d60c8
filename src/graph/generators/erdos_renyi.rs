//! Erdős–Rényi G(n, m): exactly m distinct pairs u < v drawn uniformly from the n(n-1)/2
//! possible ones, as KaGen does it (Funke, Lamm, Meyer, Penschuck, Sanders, Schulz, Strash &
//! von Looz 2019, "Communication-free massively distributed graph generation").
//!
//! The pair space, slot s = v(v-1)/2 + u for u < v, is cut into 2^c chunks of (nearly)
//! equal size, c fixed by m alone (about `CHUNK_EDGES` edges a chunk). A binary tree over the
//! chunks splits the m edges: a node holding k edges over a slot range of size N, of which
//! the left child covers N_L, gives its left child a hypergeometric(N, N_L, k) count, drawn
//! exactly by inversion with the uniform keyed by the tree node. Each chunk then draws its
//! count of distinct slots (uniform draws keyed by chunk and draw number, sorted, repeats
//! redrawn; the complement when the chunk is more than half full). Edge e is the e-th slot
//! in this order (chunks in turn, slots ascending within one), so a rank only descends the
//! tree into the chunks its edge range touches.

use super::super::{block_range, Edge, EdgeSource};
use super::{below, unit, ER_SLOTS, ER_SPLIT};
use crate::rng::{draw, stream_key};
use rayon::prelude::*;

/// Expected edges a chunk (the chunk count is the power of two that gets closest above).
const CHUNK_EDGES: u64 = 1 << 12;

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

/// A leaf of the split tree: `count` edges from global edge index `first`.
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
    /// The chunks this rank's edges fall in, in order.
    chunks: Vec<Chunk>,
}

impl ErdosRenyi {
    /// m distinct edges on n vertices (see `check`).
    pub fn new(n: u64, m: u64, seed: u64, ranks: usize, rank: usize) -> Self {
        let mut g = ErdosRenyi {
            n,
            m,
            pairs: pair_count(n),
            levels: m.div_ceil(CHUNK_EDGES).next_power_of_two().trailing_zeros(),
            split_key: stream_key(seed, ER_SPLIT),
            slot_key: stream_key(seed, ER_SLOTS),
            local: block_range(m, ranks, rank),
            chunks: Vec::new(),
        };
        g.chunks = g.descend(0, 0, m, 0);
        g
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

    /// The chunks under node (`level`, `index`), holding `count` edges from global index
    /// `first`, that overlap this rank's range.
    fn descend(&self, level: u32, index: u64, count: u64, first: u64) -> Vec<Chunk> {
        if count == 0 || first >= self.local.end || first + count <= self.local.start {
            return Vec::new();
        }
        if level == self.levels {
            return vec![Chunk {
                id: index,
                first,
                count,
            }];
        }
        let u = unit(draw(self.split_key, (1u64 << level) + index));
        let left = hypergeometric(
            u,
            self.span(level, index),
            self.span(level + 1, 2 * index),
            count as u128,
        ) as u64;
        let (mut chunks, right) = rayon::join(
            || self.descend(level + 1, 2 * index, left, first),
            || self.descend(level + 1, 2 * index + 1, count - left, first + left),
        );
        chunks.extend(right);
        chunks
    }

    /// The chunk's edges as sorted global slots.
    fn slots(&self, chunk: &Chunk) -> Vec<u128> {
        let base = self.boundary(chunk.id);
        let key = draw(self.slot_key, chunk.id);
        let cap = self.span(self.levels, chunk.id);
        let mut slots = sorted_distinct(key, chunk.count, cap);
        slots.iter_mut().for_each(|s| *s += base);
        slots
    }
}

/// `k` distinct values of [0, cap), sorted: uniform draws, sorted, repeats redrawn until k
/// are distinct (the stopping rule depends on the number of distinct values only, so the
/// set is a uniform k-subset); the complement of a (cap - k)-subset when k > cap / 2.
fn sorted_distinct(key: u64, k: u64, cap: u128) -> Vec<u128> {
    if 2 * k as u128 > cap {
        let mut skip = sorted_distinct(key, (cap - k as u128) as u64, cap).into_iter().peekable();
        return (0..cap)
            .filter(|&s| skip.next_if_eq(&s).is_none())
            .collect();
    }
    let mut values = Vec::with_capacity(k as usize);
    let mut counter = 0;
    while (values.len() as u64) < k {
        while (values.len() as u64) < k {
            values.push(uniform_below(key, counter, cap));
            counter += 1;
        }
        values.sort_unstable();
        values.dedup();
    }
    values
}

/// Draw `counter` of stream `key` as a value in [0, cap).
fn uniform_below(key: u64, counter: u64, cap: u128) -> u128 {
    match u64::try_from(cap) {
        Ok(cap) => below(draw(key, counter), cap) as u128,
        Err(_) => ((draw(key, 2 * counter) as u128) << 64 | draw(key, 2 * counter + 1) as u128) % cap,
    }
}

/// The pair (u, v), u < v, of slot s = v(v-1)/2 + u.
fn pair(s: u128) -> Edge {
    let tri = |v: u128| v * (v - 1) / 2;
    let mut v = ((1.0 + (1.0 + 8.0 * s as f64).sqrt()) / 2.0) as u128;
    v = v.max(1);
    while tri(v) > s {
        v -= 1;
    }
    while tri(v + 1) <= s {
        v += 1;
    }
    ((s - tri(v)) as u64, v as u64)
}

/// A hypergeometric variate by inversion of `u` in [0, 1): of `draws` items taken without
/// replacement from `total`, `good` of them good, how many are good. The probabilities are
/// enumerated from the mode outwards, largest first, by their ratios (no factorials), and
/// normalised by their sum; the tails are cut where a term falls below 2^-64 of the sum.
fn hypergeometric(u: f64, total: u128, good: u128, draws: u128) -> u128 {
    let walk = HyperWalk::new(total, good, draws);
    let sum: f64 = walk.clone().map(|(_, w)| w).sum();
    let target = u * sum;
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

/// The support of a hypergeometric law in decreasing order of probability, with the
/// probabilities relative to the mode's.
#[derive(Clone)]
struct HyperWalk {
    good: u128,
    bad: u128,
    draws: u128,
    lo: u128,
    hi: u128,
    mode: u128,
    /// The visited range and the weights at its ends; `sum` of the visited weights.
    down: (u128, f64),
    up: (u128, f64),
    sum: f64,
}

impl HyperWalk {
    fn new(total: u128, good: u128, draws: u128) -> Self {
        let bad = total - good;
        let (lo, hi) = (draws.saturating_sub(bad), draws.min(good));
        let mode = ((draws as f64 + 1.0) * ((good as f64 + 1.0) / (total as f64 + 2.0))) as u128;
        let mode = mode.clamp(lo, hi);
        HyperWalk {
            good,
            bad,
            draws,
            lo,
            hi,
            mode,
            down: (mode, 1.0),
            up: (mode, 1.0),
            sum: 0.0,
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
        let (a, wa) = self.down;
        let (b, wb) = self.up;
        // P(x - 1) / P(x) and P(x + 1) / P(x).
        let below = if a > self.lo {
            wa * (a as f64 * (self.bad + a - self.draws) as f64)
                / ((self.good - a + 1) as f64 * (self.draws - a + 1) as f64)
        } else {
            0.0
        };
        let above = if b < self.hi {
            wb * ((self.good - b) as f64 * (self.draws - b) as f64)
                / ((b + 1) as f64 * (self.bad + b + 1 - self.draws) as f64)
        } else {
            0.0
        };
        let w = below.max(above);
        if w < self.sum * f64::powi(2.0, -64) {
            return None;
        }
        self.sum += w;
        if above >= below {
            self.up = (b + 1, above);
            Some((b + 1, above))
        } else {
            self.down = (a - 1, below);
            Some((a - 1, below))
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
    fn local_chunk(&self, start: u64, len: u64, out: &mut Vec<Edge>) {
        let (from, to) = (self.local.start + start, self.local.start + start + len);
        let a = self.chunks.partition_point(|c| c.first + c.count <= from);
        let b = self.chunks.partition_point(|c| c.first < to);
        let parts: Vec<Vec<Edge>> = self.chunks[a..b]
            .par_iter()
            .map(|c| {
                let slots = self.slots(c);
                let lo = from.saturating_sub(c.first) as usize;
                let hi = (to - c.first).min(c.count) as usize;
                slots[lo..hi].iter().map(|&s| pair(s)).collect()
            })
            .collect();
        parts.into_iter().for_each(|p| out.extend(p));
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
        // One chunk sparse and full; 2^5 and 2^7 chunks, sparse and more than half full.
        for (n, m) in [(300, 2000), (40, 780), (2000, 100_000), (700, 200_000)] {
            assert_exact(n, m, &edges(n, m, 4));
        }
        assert_exact(1 << 40, 50_000, &edges(1 << 40, 50_000, 4));
    }

    #[test]
    fn pairs_are_spread_uniformly() {
        let (n, m) = (1000u64, 100_000u64);
        let list = edges(n, m, 8);
        // Pairs with v < n/√2 are half the pair space: Binomial-like count, sd < √m/2.
        let cut = (n as f64 / 2f64.sqrt()) as u64;
        let low = list.iter().filter(|&&(_, v)| v < cut).count() as f64;
        let half = pair_count(cut) as f64 / pair_count(n) as f64 * m as f64;
        assert!((low - half).abs() < 5.0 * (m as f64).sqrt() / 2.0, "{low} vs {half}");
        let mut deg = vec![0u64; n as usize];
        list.iter().for_each(|&(u, v)| [u, v].iter().for_each(|&x| deg[x as usize] += 1));
        // Degrees ~ Binomial(999, 0.2): mean 200, sd 12.6.
        assert!(deg.iter().all(|&d| (120..=280).contains(&d)));
    }

    #[test]
    fn slots_map_to_pairs_in_order() {
        let all: Vec<Edge> = (0..15).map(pair).collect();
        let mut want = Vec::new();
        (1..6).for_each(|v| (0..v).for_each(|u| want.push((u, v))));
        assert_eq!(all, want);
        let v = 1u128 << 47;
        assert_eq!(pair(v * (v - 1) / 2 + 5), (5, v as u64));
        assert_eq!(pair(v * (v + 1) / 2 - 1), (v as u64 - 1, v as u64));
    }

    /// Inversion on a fine grid of u reproduces the probabilities (exact ones computed
    /// directly for a small law; mean and variance for a large one).
    #[test]
    fn hypergeometric_inversion_is_exact() {
        let (total, good, draws) = (50u128, 20u128, 12u128);
        let choose = |a: u128, b: u128| (0..b).fold(1.0, |c, i| c * (a - i) as f64 / (i + 1) as f64);
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
        let grid = 20_000;
        let xs: Vec<f64> = (0..grid)
            .map(|i| hypergeometric((i as f64 + 0.5) / grid as f64, total, good, draws) as f64)
            .collect();
        let mean = xs.iter().sum::<f64>() / grid as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / grid as f64;
        assert!((mean - (1 << 18) as f64).abs() < 0.5, "{mean}");
        assert!((var / (0.1875 * (1 << 20) as f64) - 1.0).abs() < 0.01, "{var}");
    }

    #[test]
    fn check_names_the_rule() {
        assert!(check(100, 4950).is_ok());
        let e = check(100, 4951).unwrap_err();
        assert!(e.contains("edges = 4951") && e.contains("= 4950"), "{e}");
    }
}
