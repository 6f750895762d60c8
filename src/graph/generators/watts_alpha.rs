//! Watts' α-model (Watts 1999, "Networks, dynamics, and the small-world phenomenon"; Leist's
//! PhD thesis (2011), Appendix B and §5.1, whose generation chapter times it): M = nk/2 edges added one at a
//! time. In each round every vertex, in a random order, picks a new neighbour j with
//! probability proportional to its propensity R_ij: 0 when i and j are joined already, else
//! with m_ij their common neighbours, 1 when m_ij >= k, (m_ij/k)^α (1-p) + p when 0 < m_ij < k,
//! and p when m_ij = 0, where p is the baseline p_base = 1 / C(n, 2) times a uniform draw per
//! pair and step (as the seed computes it). α near 0 gives "caveman" cliques, large α a
//! random graph.
//!
//! The model is sequential (each edge depends on all before it) and O(n) per edge, O(n²k)
//! in all: every rank builds the whole graph (n at most `MAX_VERTICES`) and hands out its
//! range of it. Only the common-neighbour counts are sparse: the two-hop walk from i touches
//! O(k²) vertices; the propensities of the rest are p. Deterministic for any rank and thread
//! count: every draw is keyed by (step, vertex), and the sums that pick j run over fixed
//! blocks of vertices, added in order.

use super::super::{block_range, Edge, EdgeSource};
use super::{unit, WA_ORDER, WA_PAIR, WA_PICK};
use crate::rng::{draw, stream_key};
use rayon::prelude::*;

/// Largest n (the model is O(n²k); the seed's Table 5.1 goes to 10^5).
pub const MAX_VERTICES: u64 = 100_000;
/// Vertices per block of the propensity sums.
const BLOCK: usize = 4096;

/// Checks n, k and α (the `exponent` key): 2 <= n <= MAX_VERTICES, 1 <= k < n, nk even, α
/// finite and >= 0.
pub fn check(n: u64, k: u64, alpha: f64) -> Result<(), String> {
    if !(2..=MAX_VERTICES).contains(&n) {
        return Err(format!(
            "vertices = {n} must be from 2 to {MAX_VERTICES} (the α-model is O(n²k))"
        ));
    }
    if k == 0 || k >= n || (n * k) % 2 == 1 {
        return Err(format!(
            "k = {k} must be at least 1, less than vertices = {n}, with vertices·k even"
        ));
    }
    if !alpha.is_finite() || alpha < 0.0 {
        return Err(format!("exponent = {alpha} must be a finite number >= 0"));
    }
    Ok(())
}

pub struct WattsAlpha {
    n: u64,
    edges: Vec<Edge>,
    local: std::ops::Range<u64>,
}

impl WattsAlpha {
    /// The α-model graph on n vertices, mean degree k (see `check`).
    pub fn new(n: u64, k: u64, alpha: f64, seed: u64, ranks: usize, rank: usize) -> Self {
        let edges = grow(n, k, alpha, seed);
        WattsAlpha {
            n,
            local: block_range(edges.len() as u64, ranks, rank),
            edges,
        }
    }
}

/// The model's edges, in the order they were added.
fn grow(n: u64, k: u64, alpha: f64, seed: u64) -> Vec<Edge> {
    let (order_key, pick_key, pair_key) = (
        stream_key(seed, WA_ORDER),
        stream_key(seed, WA_PICK),
        stream_key(seed, WA_PAIR),
    );
    let p_base = 2.0 / (n as f64 * (n - 1) as f64);
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    let mut shared = vec![0u32; n as usize];
    let mut order: Vec<u32> = Vec::new();
    let m = n * k / 2;
    let mut edges = Vec::with_capacity(m as usize);
    // A turn is one vertex's chance to add an edge; a vertex already joined to all others
    // passes its turn.
    let mut step = 0u64;
    while (edges.len() as u64) < m {
        let round = step / n;
        if step.is_multiple_of(n) {
            order = (0..n as u32).collect();
            order.sort_by_key(|&v| draw(order_key, round * n + u64::from(v)));
        }
        let i = order[(step % n) as usize] as usize;
        // m_ij by the two-hop walk from i; then i's own neighbours are marked taken.
        for &u in &adj[i] {
            for &j in &adj[u as usize] {
                shared[j as usize] += 1;
            }
        }
        const TAKEN: u32 = u32::MAX;
        for &j in &adj[i] {
            shared[j as usize] = TAKEN;
        }
        shared[i] = TAKEN;
        let propensity = |j: usize| match shared[j] {
            TAKEN => 0.0,
            0 => p_base * unit(draw(pair_key, step * n + j as u64)),
            common if u64::from(common) >= k => 1.0,
            common => {
                let p = p_base * unit(draw(pair_key, step * n + j as u64));
                (f64::from(common) / k as f64).powf(alpha) * (1.0 - p) + p
            }
        };
        let sums: Vec<f64> = (0..n as usize)
            .into_par_iter()
            .step_by(BLOCK)
            .map(|start| {
                (start..(start + BLOCK).min(n as usize))
                    .map(propensity)
                    .sum()
            })
            .collect();
        let total: f64 = sums.iter().sum();
        let j = (total > 0.0).then(|| {
            pick(
                &sums,
                total * unit(draw(pick_key, step)),
                &propensity,
                n as usize,
            )
        });
        for &u in &adj[i] {
            for &w in &adj[u as usize] {
                shared[w as usize] = 0;
            }
            shared[u as usize] = 0;
        }
        shared[i] = 0;
        step += 1;
        let Some(j) = j else { continue };
        adj[i].push(j as u32);
        adj[j].push(i as u32);
        edges.push((i.min(j) as u64, i.max(j) as u64));
    }
    edges
}

/// The vertex at which the running sum of propensities passes `r`: the block first, by the
/// block sums, then the vertex inside it (the last with a positive propensity if rounding
/// leaves r at the very end).
fn pick(sums: &[f64], r: f64, propensity: &dyn Fn(usize) -> f64, n: usize) -> usize {
    let mut acc = 0.0;
    let mut last = None;
    for (b, &s) in sums.iter().enumerate() {
        if acc + s > r {
            let start = b * BLOCK;
            for j in start..(start + BLOCK).min(n) {
                let w = propensity(j);
                if w > 0.0 {
                    last = Some(j);
                    acc += w;
                    if acc > r {
                        return j;
                    }
                }
            }
        } else {
            acc += s;
            if s > 0.0 {
                last = (b * BLOCK..(b * BLOCK + BLOCK).min(n))
                    .rev()
                    .find(|&j| propensity(j) > 0.0);
            }
        }
    }
    last.expect("a positive total has a vertex of positive propensity")
}

impl EdgeSource for WattsAlpha {
    fn num_vertices(&self) -> u64 {
        self.n
    }
    fn num_edges(&self) -> u64 {
        self.edges.len() as u64
    }
    fn local_len(&self) -> u64 {
        self.local.end - self.local.start
    }
    fn local_chunk(&self, start: u64, len: u64, out: &mut Vec<Edge>) {
        let at = (self.local.start + start) as usize;
        out.extend_from_slice(&self.edges[at..at + len as usize]);
    }
}

#[cfg(test)]
mod tests {
    use super::super::global_edges;
    use super::*;
    use std::collections::HashSet;

    fn simple(n: u64, k: u64, list: &[Edge]) {
        assert_eq!(list.len() as u64, n * k / 2);
        let distinct: HashSet<_> = list.iter().collect();
        assert_eq!(distinct.len(), list.len(), "no edge twice");
        assert!(
            list.iter().all(|&(u, v)| u < v && v < n),
            "no loops, ids in range"
        );
    }

    /// Transitivity 3T / wedges of an edge list.
    fn transitivity(n: u64, list: &[Edge]) -> f64 {
        let mut adj = vec![HashSet::new(); n as usize];
        for &(u, v) in list {
            adj[u as usize].insert(v);
            adj[v as usize].insert(u);
        }
        let (mut closed, mut wedges) = (0u64, 0u64);
        for a in &adj {
            let nb: Vec<_> = a.iter().collect();
            for x in 0..nb.len() {
                for y in x + 1..nb.len() {
                    wedges += 1;
                    closed += u64::from(adj[*nb[x] as usize].contains(nb[y]));
                }
            }
        }
        closed as f64 / wedges as f64
    }

    #[test]
    fn every_rank_count_gets_the_same_simple_graph() {
        let (n, k) = (300, 6);
        let list = global_edges(|ranks, rank| WattsAlpha::new(n, k, 1.0, 3, ranks, rank));
        simple(n, k, &list);
    }

    #[test]
    fn alpha_moves_from_caves_to_a_random_graph() {
        // Watts 1999, Fig. 3.6: clustering high for small α, near the random graph's k/n
        // for large α.
        let (n, k) = (400, 8);
        let caves = grow(n, k, 0.5, 1);
        let random = grow(n, k, 20.0, 1);
        simple(n, k, &caves);
        simple(n, k, &random);
        let (c, r) = (transitivity(n, &caves), transitivity(n, &random));
        assert!(c > 0.5, "α = 0.5: transitivity {c}");
        assert!(r < 0.1, "α = 20: transitivity {r}");
    }

    #[test]
    fn check_names_the_rules() {
        assert!(check(10, 3, 1.0).is_ok());
        assert!(check(11, 3, 1.0).unwrap_err().contains("vertices·k even"));
        assert!(check(10, 10, 1.0)
            .unwrap_err()
            .contains("less than vertices"));
        assert!(check(200_000, 4, 1.0).unwrap_err().contains("100000"));
        assert!(check(10, 2, -1.0).unwrap_err().contains("exponent = -1"));
    }
}
