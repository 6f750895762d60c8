//! Triangles and clustering on a CSR copied to every rank (`replicate = full`: McGuinness's
//! (2011) full-graph version): per-vertex triangle counts t_v, the total T, local clustering
//! C_v = 2 t_v / (d_v (d_v - 1)) (0 when d_v < 2) with its mean and histogram, and the
//! transitivity 3T / Σ_v C(d_v, 2).
//!
//! Counting is the degree-ordered "forward" algorithm (Schank & Wagner 2005; GAP `tc`):
//! each edge is oriented towards the endpoint with the larger (degree, id), so each vertex
//! keeps N+(u), its neighbours above it, at most O(√m) of them; vertices are relabelled in
//! that order (see `Oriented`). A triangle a < b < c is found once, at a: b ∈ N+(a) and
//! c ∈ N+(a) ∩ N+(b), tested against N+(a) marked in a per-task slot array. The hits are
//! summed per a, per (a, b) and per (a, c) before they reach the shared counters of t_b and
//! t_c (see `count_range`).
//!
//! Ranks split the vertices a into contiguous ranges of equal merge work (Σ over N+(a) of
//! |N+(a)| + |N+(b)|), count there, and one element-wise sum over ranks gives every rank all
//! t_v. Everything summed is an integer, and the mean of C_v is summed in fixed chunks, so
//! the results are the same for every rank count and thread count.

use crate::comm::{Op, World};
use crate::error::{Error, Result};
use crate::graph::{block_range, DistGraph};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// Bins of the local clustering histogram over [0, 1] (C_v = 1 falls in the last).
pub const CLUSTERING_BINS: usize = 20;

/// Words gathered or reduced per collective call (MPI counts are 32-bit; bounds the buffers).
const ROUND_WORDS: u64 = 1 << 26;

/// Vertices whose C_v are summed in order by one task: fixed, so the sum is too.
const SUM_CHUNK: usize = 1 << 12;

/// A whole graph's CSR, on one host: row v is `adj[offsets[v]..offsets[v + 1]]`, sorted
/// unique global ids (for `replicate`, the undirected graph without self-loops).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostCsr {
    pub offsets: Vec<u64>,
    pub adj: Vec<u64>,
}

impl HostCsr {
    /// Number of vertices.
    pub fn n(&self) -> u64 {
        self.offsets.len().saturating_sub(1) as u64
    }

    pub fn row(&self, v: u64) -> &[u64] {
        &self.adj[self.offsets[v as usize] as usize..self.offsets[v as usize + 1] as usize]
    }

    pub fn degree(&self, v: u64) -> u64 {
        self.offsets[v as usize + 1] - self.offsets[v as usize]
    }

    /// The undirected graph of `edges` on `n` vertices (rows sorted, repeats and self-loops
    /// dropped), for tests.
    #[cfg(test)]
    pub fn from_edges(n: u64, edges: &[(u64, u64)]) -> Self {
        let mut rows = vec![Vec::new(); n as usize];
        for &(u, v) in edges.iter().filter(|(u, v)| u != v) {
            rows[u as usize].push(v);
            rows[v as usize].push(u);
        }
        let mut csr = HostCsr {
            offsets: vec![0],
            adj: Vec::new(),
        };
        for mut row in rows {
            row.sort_unstable();
            row.dedup();
            csr.adj.extend(row);
            csr.offsets.push(csr.adj.len() as u64);
        }
        csr
    }
}

/// What the triangle count finds.
#[derive(Clone, Debug, PartialEq)]
pub struct TriangleStats {
    pub triangles: u64,
    /// Σ_v C(d_v, 2): paths of length two (connected triples).
    pub wedges: u128,
    /// 3T / wedges (0 without wedges).
    pub transitivity: f64,
    /// Mean of C_v over all vertices (those with d_v < 2 count as 0, as networkx does).
    pub mean_local_clustering: f64,
    /// `CLUSTERING_BINS` counts of C_v over all vertices; bin ⌊C_v · bins⌋, C_v = 1 in the last.
    pub clustering_histogram: Vec<u64>,
    /// t_v: the triangles through each vertex.
    pub per_vertex: Vec<u64>,
}

/// Copy the distributed CSR to every rank (collective): the ranks' rows in rank order are
/// the whole graph's, since the 1D partition gives each rank a contiguous block of ids.
pub fn replicate(world: &World, g: &DistGraph) -> Result<HostCsr> {
    let degrees: Vec<u64> = (0..g.local_n()).map(|l| g.degree(l)).collect();
    let degrees = gather_all(world, &degrees)?;
    let mut offsets = Vec::with_capacity(degrees.len() + 1);
    offsets.push(0);
    for d in degrees {
        offsets.push(offsets.last().unwrap() + d);
    }
    let adj = gather_all(world, &g.adj[..g.offsets[g.local_n()] as usize])?;
    Ok(HostCsr { offsets, adj })
}

/// Count triangles and clustering on the replicated graph, the vertices split over ranks
/// (collective; identical on every rank).
pub fn count_triangles(world: &World, csr: &HostCsr) -> Result<TriangleStats> {
    let oriented = orient(csr)?;
    let range = rank_vertices(&oriented, world.size(), world.rank());
    let mut per_vertex = count_range(&oriented, range);
    sum_over_ranks(world, &mut per_vertex);
    Ok(triangle_stats(csr, oriented.unrelabel(&per_vertex)))
}

/// The degree-oriented graph, relabelled: vertex r is the r-th in (degree, id) order, and row
/// r is N+(r), its neighbours later in that order (so all above r), sorted, as 32-bit ids.
/// Relabelling puts the hubs, whose rows every count reads, side by side at the end (as
/// GAP's `tc` does), and 32-bit ids halve the bytes read: together 1.5x faster at SCALE 20.
pub struct Oriented {
    pub offsets: Vec<u64>,
    pub adj: Vec<u32>,
    /// `order[r]`: the original id of vertex r.
    pub order: Vec<u64>,
}

impl Oriented {
    pub fn n(&self) -> u64 {
        self.order.len() as u64
    }

    #[inline]
    pub fn row(&self, r: u64) -> &[u32] {
        &self.adj[self.offsets[r as usize] as usize..self.offsets[r as usize + 1] as usize]
    }

    #[inline]
    pub fn degree(&self, r: u64) -> u64 {
        self.offsets[r as usize + 1] - self.offsets[r as usize]
    }

    /// Per-vertex values of the relabelled graph, in original ids.
    pub fn unrelabel(&self, values: &[u64]) -> Vec<u64> {
        let mut out = vec![0; values.len()];
        for (&v, &x) in self.order.iter().zip(values) {
            out[v as usize] = x;
        }
        out
    }
}

/// Orient and relabel the graph (see `Oriented`); ids must fit in 32 bits.
pub fn orient(csr: &HostCsr) -> Result<Oriented> {
    if csr.n() > u32::MAX as u64 {
        return Err(Error::Unavailable(format!(
            "triangle counting stores vertex ids in 32 bits (below 2^32 - 1); this graph has {} vertices",
            csr.n()
        )));
    }
    // (degree, id) packed in one word (both below 2^32): a sort of plain integers.
    let mut keys: Vec<u64> = (0..csr.n())
        .into_par_iter()
        .map(|v| csr.degree(v) << 32 | v)
        .collect();
    keys.par_sort_unstable();
    let order: Vec<u64> = keys.into_par_iter().map(|k| k & u64::from(u32::MAX)).collect();
    let rank: Vec<AtomicU32> = order.par_iter().map(|_| AtomicU32::new(0)).collect();
    order
        .par_iter()
        .enumerate()
        .for_each(|(r, &v)| rank[v as usize].store(r as u32, Relaxed));
    let rank: Vec<u32> = rank.into_par_iter().map(AtomicU32::into_inner).collect();
    let later = |r: usize| {
        let v = order[r];
        csr.row(v)
            .iter()
            .map(|&w| rank[w as usize])
            .filter(move |&w| w as usize > r)
    };
    let out_degrees: Vec<u64> = (0..order.len())
        .into_par_iter()
        .map(|r| later(r).count() as u64)
        .collect();
    let mut offsets = Vec::with_capacity(out_degrees.len() + 1);
    offsets.push(0);
    for d in out_degrees {
        offsets.push(offsets.last().unwrap() + d);
    }
    let mut adj = vec![0; *offsets.last().unwrap() as usize];
    let mut rows = Vec::with_capacity(order.len());
    let mut rest = &mut adj[..];
    for w in offsets.windows(2) {
        let (row, tail) = rest.split_at_mut((w[1] - w[0]) as usize);
        rows.push(row);
        rest = tail;
    }
    rows.into_par_iter().enumerate().for_each(|(r, out)| {
        out.iter_mut().zip(later(r)).for_each(|(slot, w)| *slot = w);
        out.sort_unstable();
    });
    Ok(Oriented {
        offsets,
        adj,
        order,
    })
}

/// The vertices `rank` of `parts` counts at: contiguous ranges of about equal merge work,
/// vertex u weighing Σ_{v ∈ N+(u)} (|N+(u)| + |N+(v)|).
pub fn rank_vertices(oriented: &Oriented, parts: usize, rank: usize) -> Range<u64> {
    let weights: Vec<u64> = (0..oriented.n())
        .into_par_iter()
        .map(|u| {
            let row = oriented.row(u);
            row.iter()
                .map(|&v| row.len() as u64 + oriented.degree(v.into()))
                .sum()
        })
        .collect();
    // work_before[u]: the weight of the vertices before u.
    let mut work_before = Vec::with_capacity(weights.len());
    let mut total = 0u64;
    for w in weights {
        work_before.push(total);
        total += w;
    }
    let share = block_range(total, parts, rank);
    let first_at = |work: u64| work_before.partition_point(|&before| before < work) as u64;
    let start = if rank == 0 { 0 } else { first_at(share.start) };
    let end = if rank + 1 == parts {
        oriented.n()
    } else {
        first_at(share.end)
    };
    start..end
}

/// Per-vertex counts (n entries) of the triangles found at the vertices in `range`.
///
/// For each u, N+(u) is marked in a per-task slot array (slot of w: 1 + its position in
/// N+(u)), so each w ∈ N+(v) is tested in O(1) instead of merging N+(u) again for every v,
/// and a triangle's hits are summed in place: per u, per (u, v) and per (u, w). Only those
/// sums go to the shared counters, one atomic add per oriented edge instead of three per
/// triangle (hubs, in many triangles, would otherwise serialise the threads on their
/// counters).
pub fn count_range(oriented: &Oriented, range: Range<u64>) -> Vec<u64> {
    let counts: Vec<AtomicU64> = (0..oriented.n()).map(|_| AtomicU64::new(0)).collect();
    let n = oriented.n() as usize;
    // A slot array per rayon job (not per vertex): jobs of at least 256 vertices keep them few.
    let range = range.start as usize..range.end as usize;
    range.into_par_iter().with_min_len(256).for_each_init(
        || Marks {
            slot: vec![0; n],
            hits: Vec::new(),
        },
        |marks, u| {
            let at_u = marks.count_at(oriented, u as u64, &counts);
            if at_u > 0 {
                counts[u].fetch_add(at_u, Relaxed);
            }
        },
    );
    counts.into_iter().map(AtomicU64::into_inner).collect()
}

/// One task's scratch space for `count_range`.
struct Marks {
    /// 1 + the position of w in the current N+(u), 0 for vertices not in it.
    slot: Vec<u32>,
    /// Triangles found through each w of N+(u), by position.
    hits: Vec<u64>,
}

impl Marks {
    /// Count the triangles at u (its lowest vertex): add the middle and top vertices' shares
    /// to `counts`, return u's.
    fn count_at(&mut self, oriented: &Oriented, u: u64, counts: &[AtomicU64]) -> u64 {
        let out_u = oriented.row(u);
        self.hits.clear();
        self.hits.resize(out_u.len(), 0);
        for (i, &w) in out_u.iter().enumerate() {
            self.slot[w as usize] = i as u32 + 1;
        }
        let mut at_u = 0;
        for &v in out_u {
            let mut at_v = 0;
            for &w in oriented.row(v.into()) {
                let slot = self.slot[w as usize];
                if slot > 0 {
                    self.hits[slot as usize - 1] += 1;
                    at_v += 1;
                }
            }
            if at_v > 0 {
                counts[v as usize].fetch_add(at_v, Relaxed);
                at_u += at_v;
            }
        }
        for (&w, &hits) in out_u.iter().zip(&self.hits) {
            self.slot[w as usize] = 0;
            if hits > 0 {
                counts[w as usize].fetch_add(hits, Relaxed);
            }
        }
        at_u
    }
}

/// Element-wise sum of `values` over ranks, in place, in bounded rounds (collective).
pub fn sum_over_ranks(world: &World, values: &mut [u64]) {
    if world.size() > 1 {
        for piece in values.chunks_mut(ROUND_WORDS as usize) {
            world.allreduce_slice(piece, Op::Sum);
        }
    }
}

/// C_v of a vertex with `triangles` triangles and degree `degree`.
pub fn local_clustering(triangles: u64, degree: u64) -> f64 {
    if degree < 2 {
        0.0
    } else {
        2.0 * triangles as f64 / (degree as f64 * (degree - 1) as f64)
    }
}

/// The statistics from every vertex's triangle count `per_vertex` (t_v, all ranks summed).
pub fn triangle_stats(csr: &HostCsr, per_vertex: Vec<u64>) -> TriangleStats {
    let corners: u128 = per_vertex.par_iter().map(|&t| u128::from(t)).sum();
    let wedges: u128 = (0..csr.n())
        .into_par_iter()
        .map(|v| u128::from(csr.degree(v)) * u128::from(csr.degree(v).saturating_sub(1)) / 2)
        .sum();
    let empty = || (0.0, vec![0u64; CLUSTERING_BINS]);
    let chunks: Vec<(f64, Vec<u64>)> = per_vertex
        .par_chunks(SUM_CHUNK)
        .enumerate()
        .map(|(k, ts)| {
            ts.iter()
                .enumerate()
                .fold(empty(), |(sum, mut bins), (i, &t)| {
                    let c = local_clustering(t, csr.degree((k * SUM_CHUNK + i) as u64));
                    bins[((c * CLUSTERING_BINS as f64) as usize).min(CLUSTERING_BINS - 1)] += 1;
                    (sum + c, bins)
                })
        })
        .collect();
    let (sum, histogram) = chunks.into_iter().fold(empty(), |(sum, mut bins), (s, b)| {
        bins.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        (sum + s, bins)
    });
    let triangles = (corners / 3) as u64;
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    TriangleStats {
        triangles,
        wedges,
        transitivity: ratio(3.0 * triangles as f64, wedges as f64),
        mean_local_clustering: ratio(sum, csr.n() as f64),
        clustering_histogram: histogram,
        per_vertex,
    }
}

/// Every rank's `local` concatenated in rank order, on every rank (collective), gathered in
/// rounds of at most about `ROUND_WORDS` words in all.
fn gather_all(world: &World, local: &[u64]) -> Result<Vec<u64>> {
    if world.size() == 1 {
        // No MPI: one copy on all cores, not rounds of allgatherv through temporary buffers.
        return Ok(local.par_iter().copied().collect());
    }
    let lens = world.allgather(local.len() as u64);
    let piece = (ROUND_WORDS / world.size() as u64).max(1);
    let rounds = lens.iter().max().unwrap_or(&0).div_ceil(piece);
    let clip = |len: u64, round: u64| (round * piece).min(len)..((round + 1) * piece).min(len);
    let mut starts = Vec::with_capacity(lens.len());
    let mut all = Vec::new();
    for &len in &lens {
        starts.push(all.len());
        all.resize(all.len() + len as usize, 0);
    }
    for round in 0..rounds {
        let mine = clip(local.len() as u64, round);
        let got = world.allgatherv(&local[mine.start as usize..mine.end as usize])?;
        let mut at = 0;
        for (&len, &start) in lens.iter().zip(&starts) {
            let part = clip(len, round);
            let n = (part.end - part.start) as usize;
            all[start + part.start as usize..][..n].copy_from_slice(&got[at..at + n]);
            at += n;
        }
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Zachary's karate club (networkx `karate_club_graph`, 0-based), 78 edges.
    const KARATE: [(u64, &[u64]); 26] = [
        (0, &[1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 17, 19, 21, 31]),
        (1, &[2, 3, 7, 13, 17, 19, 21, 30]),
        (2, &[3, 7, 8, 9, 13, 27, 28, 32]),
        (3, &[7, 12, 13]),
        (4, &[6, 10]),
        (5, &[6, 10, 16]),
        (6, &[16]),
        (8, &[30, 32, 33]),
        (9, &[33]),
        (13, &[33]),
        (14, &[32, 33]),
        (15, &[32, 33]),
        (18, &[32, 33]),
        (19, &[33]),
        (20, &[32, 33]),
        (22, &[32, 33]),
        (23, &[25, 27, 29, 32, 33]),
        (24, &[25, 27, 31]),
        (25, &[31]),
        (26, &[29, 33]),
        (27, &[33]),
        (28, &[31, 33]),
        (29, &[32, 33]),
        (30, &[32, 33]),
        (31, &[32, 33]),
        (32, &[33]),
    ];

    /// Counts as `count_triangles` gives them, on `parts` emulated ranks.
    fn stats_on(csr: &HostCsr, parts: usize) -> TriangleStats {
        let oriented = orient(csr).unwrap();
        let mut per_vertex = vec![0; csr.n() as usize];
        let mut covered = 0;
        for rank in 0..parts {
            let range = rank_vertices(&oriented, parts, rank);
            assert_eq!(range.start, covered, "ranges are contiguous");
            covered = range.end;
            let counts = count_range(&oriented, range);
            per_vertex.iter_mut().zip(counts).for_each(|(t, c)| *t += c);
        }
        assert_eq!(covered, csr.n());
        triangle_stats(csr, oriented.unrelabel(&per_vertex))
    }

    /// t_v by checking every triple.
    fn brute_force(csr: &HostCsr) -> Vec<u64> {
        let n = csr.n();
        let adjacent = |u: u64, v: u64| csr.row(u).binary_search(&v).is_ok();
        let mut t = vec![0; n as usize];
        for a in 0..n {
            for b in a + 1..n {
                for c in b + 1..n {
                    if adjacent(a, b) && adjacent(b, c) && adjacent(a, c) {
                        [a, b, c].iter().for_each(|&v| t[v as usize] += 1);
                    }
                }
            }
        }
        t
    }

    #[test]
    fn complete_graph() {
        let edges: Vec<(u64, u64)> = (0..7).flat_map(|u| (0..u).map(move |v| (u, v))).collect();
        let s = stats_on(&HostCsr::from_edges(7, &edges), 3);
        assert_eq!((s.triangles, s.wedges), (35, 7 * 15));
        assert_eq!(s.per_vertex, vec![15; 7]);
        assert_eq!((s.transitivity, s.mean_local_clustering), (1.0, 1.0));
        assert_eq!(s.clustering_histogram[CLUSTERING_BINS - 1], 7);
    }

    #[test]
    fn karate_club() {
        let edges: Vec<(u64, u64)> = KARATE
            .iter()
            .flat_map(|&(u, vs)| vs.iter().map(move |&v| (u, v)))
            .collect();
        assert_eq!(edges.len(), 78);
        let csr = HostCsr::from_edges(34, &edges);
        let whole = stats_on(&csr, 1);
        assert_eq!(whole.triangles, 45);
        assert!((whole.transitivity - 0.255682).abs() < 1e-6, "{whole:?}");
        assert!((whole.mean_local_clustering - 0.570638).abs() < 1e-6);
        assert_eq!(whole.per_vertex, brute_force(&csr));
        assert_eq!(whole.clustering_histogram.iter().sum::<u64>(), 34);
        for parts in 2..=5 {
            assert_eq!(stats_on(&csr, parts), whole, "{parts} ranks");
        }
    }

    #[test]
    fn random_graphs_match_brute_force() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for (n, m) in [(1, 0), (2, 1), (12, 30), (30, 200), (40, 100), (25, 300)] {
            let edges: Vec<(u64, u64)> = (0..m).map(|_| (next() % n, next() % n)).collect();
            let csr = HostCsr::from_edges(n, &edges);
            let whole = stats_on(&csr, 1);
            assert_eq!(whole.per_vertex, brute_force(&csr), "n {n} m {m}");
            let t: u64 = whole.per_vertex.iter().sum();
            assert_eq!(3 * whole.triangles, t);
            for parts in [2, 3, 4, 7] {
                assert_eq!(stats_on(&csr, parts), whole, "n {n} m {m}, {parts} ranks");
            }
        }
    }

    #[test]
    fn no_triangles() {
        // A path and an isolated vertex: wedges but no triangles.
        let csr = HostCsr::from_edges(5, &[(0, 1), (1, 2), (2, 3)]);
        let s = stats_on(&csr, 2);
        assert_eq!((s.triangles, s.wedges), (0, 2));
        assert_eq!((s.transitivity, s.mean_local_clustering), (0.0, 0.0));
        assert_eq!(s.clustering_histogram[0], 5);
        assert_eq!(local_clustering(3, 3), 1.0);
        assert_eq!(local_clustering(0, 1), 0.0);
    }

    #[test]
    fn orientation_keeps_each_edge_once() {
        let csr = HostCsr::from_edges(5, &[(0, 1), (0, 2), (0, 3), (3, 4), (1, 2)]);
        let oriented = orient(&csr).unwrap();
        // Degrees 3, 2, 2, 2, 1: (degree, id) order 4, 1, 2, 3, 0, so 4 -> 3, 1 -> 2 and 0,
        // 2 -> 0, 3 -> 0 become 0 -> 3, 1 -> 2, 4, 2 -> 4, 3 -> 4; vertex 0 (last) has none.
        assert_eq!(oriented.order, vec![4, 1, 2, 3, 0]);
        assert_eq!(oriented.offsets, vec![0, 1, 3, 4, 5, 5]);
        assert_eq!(oriented.adj, vec![3, 2, 4, 4, 4]);
    }
}
