//! The seed's geometric partitioner (001 §2.2) and a label-propagation refinement.
//! k seeds start at the centroids of k equal runs of the nodes along a Hilbert curve fitted
//! to the bounding box (`curve`: on a long bar, a row of cubes each with its own); each node
//! joins the seed minimising distance × weight (ties: the smaller part number); seeds move to
//! their parts' centroids, and weights rise for parts above N/k and fall for those below,
//! until the largest part is within the bound (1.02 N/k). A greedy pass then moves boundary
//! nodes out of parts still too full, and `refine` moves boundary nodes to the neighbouring
//! part most of their neighbours are in, within the bound.
//!
//! Distributed: each rank holds only its own run of the nodes (`Share`) and partitions them.
//! The bounding box is one reduction, the Hilbert split a distributed selection of the k
//! run boundaries (`split`), each iteration one reduction of k × 4 sums, and the greedy pass
//! takes its moves in global node order by counts summed over the ranks (`balance`). Every
//! sum is an integer (coordinates in fixed point), so the parts do not depend on how the
//! nodes are split between ranks or threads.

mod balance;
mod curve;
mod split;
#[cfg(test)]
mod tests;

use super::adjacency::Csr;
use super::Mesh;
use rayon::prelude::*;
use std::ops::Range;

const MAX_ITERATIONS: usize = 200;
/// Fixed-point scale of coordinates normalised to the bounding box (2^30).
const FIXED: f64 = 1073741824.0;

pub use super::ranks::{Ranks, Serial};

/// This rank's run of the nodes: global ids `first..first + len`, their coordinates and
/// their node-graph rows (global ids): `graph.row(graph_first + i)` for the run's node i
/// (a rank-local graph has `graph_first` 0, the whole mesh's graph `first`).
pub struct Share<'a> {
    /// Nodes on all ranks together.
    pub n: usize,
    pub first: usize,
    pub coords: [&'a [f64]; 3],
    pub graph: &'a Csr,
    pub graph_first: usize,
}

impl<'a> Share<'a> {
    /// `range` of the whole `mesh` and its node graph.
    pub fn of_mesh(mesh: &'a Mesh, graph: &'a Csr, range: Range<usize>) -> Share<'a> {
        Share {
            n: mesh.num_nodes(),
            first: range.start,
            coords: [
                &mesh.x[range.clone()],
                &mesh.y[range.clone()],
                &mesh.z[range.clone()],
            ],
            graph,
            graph_first: range.start,
        }
    }

    fn len(&self) -> usize {
        self.coords[0].len()
    }

    fn row(&self, i: usize) -> &[super::Index] {
        self.graph.row(self.graph_first + i)
    }
}

/// The largest part size allowed: 1.02 N/k, at least ⌈N/k⌉.
pub fn bound(n: usize, k: usize) -> usize {
    ((1.02 * n as f64 / k as f64).floor() as usize).max(n.div_ceil(k))
}

/// The share's coordinates moved to the global bounding box's low corner and scaled by its
/// longest side, into [0, 1]^3 with the shape kept (one scale for every axis: scaling each
/// axis to [0, 1] would squash a long bar into a cube and cut it across its long faces).
fn normalised(share: &Share, ranks: &dyn Ranks) -> (Vec<[f64; 3]>, [f64; 3]) {
    // Maxima of -x and x: the low and high corners in one reduction.
    let mut ends: Vec<f64> = (0..6)
        .map(|e| {
            let sign = if e < 3 { -1.0 } else { 1.0 };
            share.coords[e % 3]
                .par_iter()
                .map(|&v| sign * v)
                .reduce(|| f64::NEG_INFINITY, f64::max)
        })
        .collect();
    ranks.max(&mut ends);
    let lo: [f64; 3] = std::array::from_fn(|d| -ends[d]);
    let scale = (0..3)
        .map(|d| ends[d + 3] - lo[d])
        .fold(f64::MIN_POSITIVE, f64::max);
    let points = (0..share.len())
        .into_par_iter()
        .map(|i| std::array::from_fn(|d| (share.coords[d][i] - lo[d]) / scale))
        .collect();
    (
        points,
        std::array::from_fn(|d| (ends[d + 3] - lo[d]) / scale),
    )
}

/// The nearest seed by distance × weight (ties: the smaller part).
fn nearest(p: &[f64; 3], seeds: &[[f64; 3]], weights: &[f64]) -> u32 {
    let mut best = (f64::INFINITY, 0);
    for (j, s) in seeds.iter().enumerate() {
        let d = ((p[0] - s[0]).powi(2) + (p[1] - s[1]).powi(2) + (p[2] - s[2]).powi(2)).sqrt();
        let score = d * weights[j];
        if score < best.0 {
            best = (score, j as u32);
        }
    }
    best.1
}

/// Nodes per block of the nearest-seed search: the seeds that can win anywhere in a block
/// are found once from its bounding box.
const SEED_BLOCK: usize = 512;

/// The nearest seed (`nearest`) of every point, by blocks of consecutive points: a seed whose
/// smallest score over the block's bounding box exceeds the smallest of the seeds' largest
/// scores over it can win, or tie, at no point of the block, so only the others are tried, in
/// ascending order: the same winner as trying all. `geometric` passes the points in Hilbert
/// order, so a block is compact and few of the k seeds stay. Also the k parts' sums
/// (`part_sums`), taken in the same pass.
fn nearest_all(points: &[[f64; 3]], seeds: &[[f64; 3]], weights: &[f64]) -> (Vec<u32>, Vec<i64>) {
    let k = seeds.len();
    let mut labels = vec![0u32; points.len()];
    let sums = labels
        .par_chunks_mut(SEED_BLOCK)
        .zip(points.par_chunks(SEED_BLOCK))
        .fold(
            || vec![0i64; 4 * k],
            |mut sums, (out, block)| {
                let (kept, ids) = candidates(block, seeds, weights);
                for (l, p) in out.iter_mut().zip(block) {
                    *l = ids[nearest(p, &kept.0, &kept.1) as usize];
                    add_point(&mut sums, p, *l);
                }
                sums
            },
        )
        .reduce(|| vec![0i64; 4 * k], add_sums);
    (labels, sums)
}

/// The seeds (with their weights, and their part numbers) that can be nearest somewhere in
/// the bounding box of `block`.
#[allow(clippy::type_complexity)]
fn candidates(
    block: &[[f64; 3]],
    seeds: &[[f64; 3]],
    weights: &[f64],
) -> ((Vec<[f64; 3]>, Vec<f64>), Vec<u32>) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in block {
        for d in 0..3 {
            lo[d] = lo[d].min(p[d]);
            hi[d] = hi[d].max(p[d]);
        }
    }
    let reach = |s: &[f64; 3], far: bool| {
        let sq = (0..3)
            .map(|d| {
                let (a, b) = (s[d] - lo[d], hi[d] - s[d]);
                let gap = if far {
                    a.abs().max(b.abs())
                } else {
                    a.min(b).min(0.0).abs()
                };
                gap * gap
            })
            .sum::<f64>();
        sq.sqrt()
    };
    let best_far = (0..seeds.len())
        .map(|j| reach(&seeds[j], true) * weights[j])
        .fold(f64::INFINITY, f64::min);
    // The margin covers the roundings of the bounds and of the scores (relative 1e-15).
    let cut = best_far * (1.0 + 1e-9) + 1e-300;
    let mut kept = (Vec::new(), Vec::new());
    let mut ids = Vec::new();
    for j in 0..seeds.len() {
        if reach(&seeds[j], false) * weights[j] <= cut {
            kept.0.push(seeds[j]);
            kept.1.push(weights[j]);
            ids.push(j as u32);
        }
    }
    (kept, ids)
}

/// Point p counted into part j's sums: its node count and coordinate sums in fixed point
/// (integers: the same in any order, so the threads may split the nodes as they like).
fn add_point(sums: &mut [i64], p: &[f64; 3], j: u32) {
    let s = &mut sums[4 * j as usize..4 * j as usize + 4];
    s[0] += 1;
    for d in 0..3 {
        s[d + 1] += (p[d] * FIXED) as i64;
    }
}

fn add_sums(a: Vec<i64>, b: Vec<i64>) -> Vec<i64> {
    a.iter().zip(&b).map(|(x, y)| x + y).collect()
}

/// The geometric partition into k parts of the whole `mesh` (every rank holds it): a part
/// per node, and the iterations taken. Each rank computes its block of the nodes'
/// (`geometric_share`), then all are gathered.
pub fn geometric(mesh: &Mesh, graph: &Csr, k: usize, ranks: &dyn Ranks) -> (Vec<u32>, usize) {
    let share = Share::of_mesh(mesh, graph, ranks.range(mesh.num_nodes()));
    let (labels, iterations) = geometric_share(&share, k, ranks);
    (ranks.gather(&labels), iterations)
}

/// The geometric partition into k parts from each rank's share of the nodes: the parts of
/// this rank's nodes, and the iterations taken (collective).
pub fn geometric_share(share: &Share, k: usize, ranks: &dyn Ranks) -> (Vec<u32>, usize) {
    let n = share.n;
    let clock = std::time::Instant::now();
    let (points, extent) = normalised(share, ranks);
    let curve = curve::Curve::new(extent);
    // This rank's nodes in Hilbert order: the seed search's blocks are then compact (in node
    // order a block of a layer-numbered mesh is a strip across it), and the sums do not care.
    let (mut seeds, order, local) = split::hilbert_seeds(&points, &curve, n, k, ranks);
    let split_seconds = clock.elapsed().as_secs_f64();
    let mut weights = vec![1.0; k];
    let target = n as f64 / k as f64;
    let limit = bound(n, k);
    let mut found = Vec::new();
    let mut iterations = 0;
    for it in 0..MAX_ITERATIONS {
        iterations = it + 1;
        let mut sums;
        (found, sums) = nearest_all(&local, &seeds, &weights);
        ranks.sum(&mut sums);
        log::debug!(
            "mesh: partition iteration {iterations}: {}",
            balance(&sums, target, limit)
        );
        if (0..k).all(|j| sums[4 * j] as usize <= limit) {
            break;
        }
        for j in 0..k {
            let count = sums[4 * j] as f64;
            if count > 0.0 {
                seeds[j] = std::array::from_fn(|d| sums[4 * j + d + 1] as f64 / FIXED / count);
            }
            weights[j] *= (count.max(0.5 * target) / target).powf(0.3);
        }
    }
    let mut labels = vec![0u32; share.len()];
    for (&i, &l) in order.iter().zip(&found) {
        labels[i as usize] = l;
    }
    let iterate_seconds = clock.elapsed().as_secs_f64() - split_seconds;
    balance::greedy(share, &mut labels, k, limit, ranks);
    log::info!(
        "mesh: partition phases: box, keys and split {split_seconds:.3} s, {iterations} iterations {iterate_seconds:.3} s, greedy {:.3} s",
        clock.elapsed().as_secs_f64() - split_seconds - iterate_seconds
    );
    (labels, iterations)
}

/// How far the parts of an iteration's `sums` are from N/k (`target`), for the log.
fn balance(sums: &[i64], target: f64, limit: usize) -> String {
    let ratios: Vec<f64> = sums.iter().step_by(4).map(|&c| c as f64 / target).collect();
    let largest = ratios.iter().copied().fold(0.0, f64::max);
    let smallest = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let over = sums
        .iter()
        .step_by(4)
        .filter(|&&c| c as usize > limit)
        .count();
    let rms = (ratios.iter().map(|r| (r - 1.0).powi(2)).sum::<f64>() / ratios.len() as f64).sqrt();
    format!("parts {smallest:.4} to {largest:.4} of N/k (rms deviation {rms:.4}), {over} above the bound")
}

/// Nodes per part, counted in parallel by chunks (no smaller than k: each has its k counts).
fn counts(labels: &[u32], k: usize) -> Vec<i64> {
    let add = |a: Vec<i64>, b: Vec<i64>| a.iter().zip(&b).map(|(x, y)| x + y).collect();
    labels
        .par_chunks((1 << 16).max(k))
        .map(|chunk| {
            let mut s = vec![0i64; k];
            for &p in chunk {
                s[p as usize] += 1;
            }
            s
        })
        .reduce(|| vec![0i64; k], add)
}

fn sizes(parts: &[u32], k: usize) -> Vec<usize> {
    let mut s = vec![0; k];
    for &p in parts {
        s[p as usize] += 1;
    }
    s
}

/// Label propagation: each node (in node order, `rounds` times) moves to the neighbouring
/// part holding most of its neighbours when that beats its own part and the target stays
/// within `limit`. Returns the moves made.
pub fn refine(graph: &Csr, parts: &mut [u32], k: usize, limit: usize, rounds: usize) -> usize {
    let mut size = sizes(parts, k);
    let mut moves = 0;
    let mut count = vec![0usize; k];
    for _ in 0..rounds {
        let before = moves;
        for i in 0..parts.len() {
            let p = parts[i] as usize;
            for &j in graph.row(i) {
                count[parts[j as usize] as usize] += 1;
            }
            let best = graph
                .row(i)
                .iter()
                .map(|&j| parts[j as usize] as usize)
                .filter(|&q| q != p && size[q] < limit && size[p] > 1)
                .max_by_key(|&q| (count[q], std::cmp::Reverse(q)));
            if let Some(q) = best.filter(|&q| count[q] > count[p]) {
                parts[i] = q as u32;
                size[p] -= 1;
                size[q] += 1;
                moves += 1;
            }
            for &j in graph.row(i) {
                count[parts[j as usize] as usize] = 0;
            }
            count[p] = 0;
        }
        if moves == before {
            break;
        }
    }
    moves
}

/// A partition's measures.
#[derive(Debug, Clone, PartialEq)]
pub struct Measures {
    pub sizes: Vec<u64>,
    pub edge_cut: u64,
    pub communication_volume: u64,
    pub imbalance: f64,
    pub disconnected_parts: u64,
    /// Per part: nodes of other parts adjacent to it.
    pub halo: Vec<u64>,
}

pub fn measure(graph: &Csr, parts: &[u32], k: usize) -> Measures {
    let n = parts.len();
    let sizes: Vec<u64> = sizes(parts, k).into_iter().map(|s| s as u64).collect();
    let mut edge_cut = 0;
    let mut volume = 0;
    let mut halo_nodes: Vec<(u32, u32)> = Vec::new();
    for i in 0..n {
        let mut others: Vec<u32> = Vec::new();
        for &j in graph.row(i) {
            if parts[j as usize] != parts[i] {
                edge_cut += u64::from((j as usize) > i);
                others.push(parts[j as usize]);
            }
        }
        others.sort_unstable();
        others.dedup();
        volume += others.len() as u64;
        halo_nodes.extend(others.iter().map(|&q| (q, i as u32)));
    }
    let mut halo = vec![0u64; k];
    for (q, _) in halo_nodes {
        halo[q as usize] += 1;
    }
    let largest = sizes.iter().copied().max().unwrap_or(0) as f64;
    Measures {
        imbalance: largest / (n as f64 / k as f64),
        disconnected_parts: disconnected(graph, parts, k),
        sizes,
        edge_cut,
        communication_volume: volume,
        halo,
    }
}

/// Parts whose nodes form more than one connected piece.
fn disconnected(graph: &Csr, parts: &[u32], k: usize) -> u64 {
    let mut seen = vec![false; parts.len()];
    let mut pieces = vec![0u32; k];
    let mut stack = Vec::new();
    for s in 0..parts.len() {
        if seen[s] {
            continue;
        }
        pieces[parts[s] as usize] += 1;
        seen[s] = true;
        stack.push(s);
        while let Some(i) = stack.pop() {
            for &j in graph.row(i) {
                let j = j as usize;
                if !seen[j] && parts[j] == parts[s] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
    }
    pieces.iter().filter(|&&p| p > 1).count() as u64
}
