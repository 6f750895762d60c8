//! The seed's geometric partitioner (001 §2.2) and a label-propagation refinement.
//! k seeds start at the centroids of k equal runs of the nodes in Hilbert order; each node
//! joins the seed minimising distance × weight (ties: the smaller part number); seeds move to
//! their parts' centroids, and weights rise for parts above N/k and fall for those below,
//! until the largest part is within the bound (1.02 N/k). Each iteration is one reduction of
//! k × 4 sums, in fixed point so that it does not depend on how nodes are split between
//! ranks. A greedy pass then moves boundary nodes out of parts still too full, and `refine`
//! moves boundary nodes to the neighbouring part most of their neighbours are in, within the
//! bound.

use super::adjacency::Csr;
use super::{hilbert, Mesh};
use rayon::prelude::*;
use std::ops::Range;

const MAX_ITERATIONS: usize = 200;
/// Fixed-point scale of coordinates normalised to the bounding box (2^30).
const FIXED: f64 = 1073741824.0;

/// What the partitioner needs of the ranks: sums and the gathering of labels.
pub trait Ranks {
    /// The nodes whose part this rank computes.
    fn range(&self, n: usize) -> Range<usize>;
    fn sum(&self, values: &mut [i64]);
    /// Every rank's labels concatenated in rank order.
    fn gather(&self, mine: &[u32]) -> Vec<u32>;
}

/// One rank computing everything.
pub struct Serial;

impl Ranks for Serial {
    fn range(&self, n: usize) -> Range<usize> {
        0..n
    }
    fn sum(&self, _values: &mut [i64]) {}
    fn gather(&self, mine: &[u32]) -> Vec<u32> {
        mine.to_vec()
    }
}

/// The largest part size allowed: 1.02 N/k, at least ⌈N/k⌉.
pub fn bound(n: usize, k: usize) -> usize {
    ((1.02 * n as f64 / k as f64).floor() as usize).max(n.div_ceil(k))
}

/// Coordinates moved to the bounding box's low corner and scaled by its longest side, into
/// [0, 1]^3 with the shape kept (one scale for every axis: scaling each axis to [0, 1] would
/// squash a long bar into a cube and cut it across its long faces).
fn normalised(mesh: &Mesh) -> Vec<[f64; 3]> {
    let axes = [&mesh.x, &mesh.y, &mesh.z];
    let lo = axes.map(|a| a.iter().copied().fold(f64::INFINITY, f64::min));
    let hi = axes.map(|a| a.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    let scale = (0..3)
        .map(|d| hi[d] - lo[d])
        .fold(f64::MIN_POSITIVE, f64::max);
    (0..mesh.num_nodes())
        .into_par_iter()
        .map(|i| std::array::from_fn(|d| (axes[d][i] - lo[d]) / scale))
        .collect()
}

/// Initial seeds: centroids of k equal runs of the nodes in Hilbert order; and that order.
fn hilbert_seeds(points: &[[f64; 3]], k: usize) -> (Vec<[f64; 3]>, Vec<u32>) {
    let mut order: Vec<(u64, u32)> = points
        .par_iter()
        .enumerate()
        .map(|(i, &p)| (hilbert::of_point(p, [0.0; 3], [1.0; 3]), i as u32))
        .collect();
    order.par_sort_unstable();
    let n = points.len();
    let seeds = (0..k)
        .map(|j| {
            let run = &order[j * n / k..(j + 1) * n / k];
            let mut c = [0.0; 3];
            for &(_, i) in run {
                for d in 0..3 {
                    c[d] += points[i as usize][d];
                }
            }
            c.map(|v| v / run.len().max(1) as f64)
        })
        .collect();
    (seeds, order.into_iter().map(|(_, i)| i).collect())
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
/// order, so a block is compact and few of the k seeds stay.
fn nearest_all(points: &[[f64; 3]], seeds: &[[f64; 3]], weights: &[f64]) -> Vec<u32> {
    let mut labels = vec![0u32; points.len()];
    labels
        .par_chunks_mut(SEED_BLOCK)
        .zip(points.par_chunks(SEED_BLOCK))
        .for_each(|(out, block)| {
            let (kept, ids) = candidates(block, seeds, weights);
            for (l, p) in out.iter_mut().zip(block) {
                *l = ids[nearest(p, &kept.0, &kept.1) as usize];
            }
        });
    labels
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

/// Per part: its node count and coordinate sums in fixed point (integers: the same in any
/// order, so the threads may split the nodes as they like).
fn part_sums(points: &[[f64; 3]], labels: &[u32], k: usize) -> Vec<i64> {
    let add = |a: Vec<i64>, b: Vec<i64>| a.iter().zip(&b).map(|(x, y)| x + y).collect();
    points
        .par_iter()
        .zip(labels)
        .fold(
            || vec![0i64; 4 * k],
            |mut sums, (p, &j)| {
                let s = &mut sums[4 * j as usize..4 * j as usize + 4];
                s[0] += 1;
                for d in 0..3 {
                    s[d + 1] += (p[d] * FIXED) as i64;
                }
                sums
            },
        )
        .reduce(|| vec![0i64; 4 * k], add)
}

/// The geometric partition into k parts: a part per node, and the iterations taken.
pub fn geometric(mesh: &Mesh, graph: &Csr, k: usize, ranks: &dyn Ranks) -> (Vec<u32>, usize) {
    let n = mesh.num_nodes();
    let points = normalised(mesh);
    let (mut seeds, order) = hilbert_seeds(&points, k);
    let mut weights = vec![1.0; k];
    let target = n as f64 / k as f64;
    let limit = bound(n, k);
    let mine = ranks.range(n);
    // This rank's nodes in Hilbert order: the seed search's blocks are then compact (in node
    // order a block of a layer-numbered mesh is a strip across it), and the sums do not care.
    let ids: Vec<u32> = order
        .into_par_iter()
        .filter(|&i| mine.contains(&(i as usize)))
        .collect();
    let local: Vec<[f64; 3]> = ids.par_iter().map(|&i| points[i as usize]).collect();
    let mut found = Vec::new();
    let mut iterations = 0;
    for it in 0..MAX_ITERATIONS {
        iterations = it + 1;
        found = nearest_all(&local, &seeds, &weights);
        let mut sums = part_sums(&local, &found, k);
        ranks.sum(&mut sums);
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
    let mut labels = vec![0u32; mine.len()];
    for (&i, &l) in ids.iter().zip(&found) {
        labels[i as usize - mine.start] = l;
    }
    let mut parts = ranks.gather(&labels);
    greedy_balance(graph, &mut parts, k, limit);
    (parts, iterations)
}

fn sizes(parts: &[u32], k: usize) -> Vec<usize> {
    let mut s = vec![0; k];
    for &p in parts {
        s[p as usize] += 1;
    }
    s
}

/// Move boundary nodes out of parts above `limit` into their smallest neighbouring part
/// below it, in node order, until every part fits or a pass moves nothing.
pub fn greedy_balance(graph: &Csr, parts: &mut [u32], k: usize, limit: usize) {
    let mut size = sizes(parts, k);
    loop {
        let mut moved = false;
        for i in 0..parts.len() {
            let p = parts[i] as usize;
            if size[p] <= limit {
                continue;
            }
            let to = graph
                .row(i)
                .iter()
                .map(|&j| parts[j as usize] as usize)
                .filter(|&q| q != p && size[q] < limit)
                .min_by_key(|&q| (size[q], q));
            if let Some(q) = to {
                parts[i] = q as u32;
                size[p] -= 1;
                size[q] += 1;
                moved = true;
            }
        }
        if !moved || size.iter().all(|&s| s <= limit) {
            return;
        }
    }
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

#[cfg(test)]
mod tests {
    use super::super::{adjacency, generate};
    use super::*;

    /// The block-wise search against trying every seed at every point: scattered points,
    /// clustered ones (small blocks, most seeds pruned), seeds on points and equal weights
    /// (ties go to the smaller part in both).
    #[test]
    fn pruned_nearest_seed_is_the_full_search() {
        let r = |i: u64| (crate::rng::draw(11, i) >> 11) as f64 / (1u64 << 53) as f64;
        let scattered: Vec<[f64; 3]> = (0..3000)
            .map(|i| [r(3 * i), r(3 * i + 1), r(3 * i + 2)])
            .collect();
        let mut sorted = scattered.clone();
        sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
        for (k, points) in [(7, &scattered), (64, &sorted), (33, &sorted)] {
            let mut seeds: Vec<[f64; 3]> = (0..k as u64)
                .map(|j| [r(9000 + 3 * j), r(9001 + 3 * j), r(9002 + 3 * j)])
                .collect();
            seeds[0] = points[5];
            for equal in [false, true] {
                let weights: Vec<f64> = (0..k as u64)
                    .map(|j| if equal { 1.0 } else { 0.5 + r(20000 + j) })
                    .collect();
                let full: Vec<u32> = points
                    .iter()
                    .map(|p| nearest(p, &seeds, &weights))
                    .collect();
                assert_eq!(nearest_all(points, &seeds, &weights), full, "k = {k}");
            }
        }
    }

    #[test]
    fn every_node_in_one_part_within_the_bound() {
        let mesh = generate::kuhn_box([12, 9, 7], [1.0, 1.0, 1.0]);
        let n2c = adjacency::node_to_cell(&mesh.cells, mesh.num_nodes());
        let graph = adjacency::node_graph(&mesh, &n2c);
        for k in [2, 5, 8] {
            let (mut parts, _) = geometric(&mesh, &graph, k, &Serial);
            let limit = bound(mesh.num_nodes(), k);
            let before = measure(&graph, &parts, k);
            refine(&graph, &mut parts, k, limit, 4);
            let after = measure(&graph, &parts, k);
            for m in [&before, &after] {
                assert_eq!(parts.len(), mesh.num_nodes());
                assert!(parts.iter().all(|&p| (p as usize) < k));
                assert_eq!(m.sizes.iter().sum::<u64>(), mesh.num_nodes() as u64);
                assert!(
                    m.imbalance <= 1.02 + 1e-12,
                    "k={k} imbalance {}",
                    m.imbalance
                );
            }
            assert!(after.edge_cut <= before.edge_cut);
        }
    }
}
