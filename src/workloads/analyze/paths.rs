//! Sampled shortest paths: the mean distance over reachable pairs and a lower bound on the
//! diameter, from k BFS sources.
//!
//! Each source is one run of the existing BFS (`bfs::search::bfs`, on whichever device's
//! `Frontiers` the caller passes), and the trick is that nothing more is needed: the global
//! vertex count of level i is the number of vertices at distance i, so the per-level
//! frontier counts are the source's distance histogram. Summed over the sources they give
//! Σ d(s, t) and the reachable pairs (s, t ≠ s), hence the mean distance (pairs in other
//! components do not count), and the deepest level seen is a lower bound on the diameter.
//! That bound is raised by one more search (the "double sweep" of Magnien, Latapy & Habib,
//! 2009) from a farthest vertex of the source whose eccentricity was largest: the lowest id
//! at maximal depth in that search's tree, whose depths `validate::tree_levels` derives
//! from the parents. Sources are drawn as the BFS roots are (`graph::roots::pick_roots`), so the
//! same sources come out for every rank count and device.

use crate::bfs::search::{bfs, Frontiers, Params};
use crate::bfs::validate::tree_levels;
use crate::comm::{Op, World};
use crate::error::Result;
use crate::graph::roots::pick_roots;
use crate::graph::{DistGraph, Vid};
use crate::progress::Progress;

/// What one BFS source saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceRow {
    pub source: Vid,
    /// Vertices reached, the source included.
    pub reached: u64,
    /// The largest distance reached.
    pub eccentricity: u64,
    /// Σ d(source, t) over the reached t.
    pub distance_sum: u64,
}

impl SourceRow {
    /// The row of `source` from its level counts (`level_counts[d]`: vertices at distance d).
    pub fn from_levels(source: Vid, level_counts: &[u64]) -> Self {
        SourceRow {
            source,
            reached: level_counts.iter().sum(),
            eccentricity: level_counts.len().saturating_sub(1) as u64,
            distance_sum: (0..).zip(level_counts).map(|(d, &c)| d * c).sum(),
        }
    }
}

/// What the sampled searches found.
#[derive(Clone, Debug, PartialEq)]
pub struct PathStats {
    /// One row per sampled source, in the order drawn.
    pub sources: Vec<SourceRow>,
    /// Entry d: (source, vertex) pairs at distance d over the sampled sources (d = 0 counts
    /// the sources themselves).
    pub distance_histogram: Vec<u64>,
    /// Reachable pairs (s, t ≠ s) over the sampled sources.
    pub pairs: u64,
    /// Σ d(s, t) over those pairs.
    pub distance_sum: u64,
    /// distance_sum / pairs (0 without pairs).
    pub mean_distance: f64,
    /// The largest eccentricity seen, the extra sweep's included.
    pub diameter_lower_bound: u64,
    /// The extra search from a farthest vertex of the deepest source (None when no source
    /// reached another vertex); not part of the sample above.
    pub sweep: Option<SourceRow>,
}

/// Search from up to `count` sources drawn with `seed`, then sweep once more from a farthest
/// vertex of the deepest one (collective; identical on every rank).
pub fn sample_paths(
    world: &World,
    g: &DistGraph,
    frontiers: &mut dyn Frontiers,
    params: &Params,
    seed: u64,
    count: usize,
) -> Result<PathStats> {
    let mut rows = Vec::new();
    let mut histogram = Vec::new();
    let mut deepest: Option<SourceRow> = None;
    let mut deepest_parents = vec![-1i64; g.local_n()];
    let sources = pick_roots(world, g, seed, count)?;
    let mut progress = Progress::new(world.is_root(), "paths", sources.len());
    for (i, &source) in sources.iter().enumerate() {
        let level_counts = search(world, g, frontiers, params, source)?;
        add_levels(&mut histogram, &level_counts);
        let row = SourceRow::from_levels(source, &level_counts);
        log::info!(
            "paths: source {}/{} ({source}): {} reached, eccentricity {}",
            i + 1,
            sources.len(),
            row.reached,
            row.eccentricity
        );
        progress.step();
        if deepest.is_none_or(|d| row.eccentricity > d.eccentricity) {
            frontiers.parents(&mut deepest_parents)?;
            deepest = Some(row);
        }
        rows.push(row);
    }
    progress.finish();
    let sweep = match deepest.filter(|d| d.eccentricity > 0) {
        Some(d) => {
            let far = farthest_vertex(world, g, d.source, &deepest_parents)?;
            let level_counts = search(world, g, frontiers, params, far)?;
            Some(SourceRow::from_levels(far, &level_counts))
        }
        None => None,
    };
    Ok(summarize(rows, histogram, sweep))
}

/// One BFS from `source`: the number of vertices at each distance.
fn search(
    world: &World,
    g: &DistGraph,
    frontiers: &mut dyn Frontiers,
    params: &Params,
    source: Vid,
) -> Result<Vec<u64>> {
    let levels = bfs(world, g.n(), g.num_entries, frontiers, source, params)?;
    Ok(levels.iter().map(|l| l.frontier_vertices).collect())
}

/// The lowest id at the largest depth of the search tree `parent` rooted at `root`
/// (collective).
fn farthest_vertex(world: &World, g: &DistGraph, root: Vid, parent: &[i64]) -> Result<Vid> {
    let depths = tree_levels(world, g, root, parent)?;
    let deepest = world.allreduce(depths.iter().copied().max().unwrap_or(-1), Op::Max);
    let mine = depths
        .iter()
        .position(|&d| d == deepest)
        .map_or(Vid::MAX, |l| g.part.global(l));
    Ok(world.allreduce(mine, Op::Min))
}

/// Add one source's level counts to the distance histogram.
fn add_levels(histogram: &mut Vec<u64>, level_counts: &[u64]) {
    if histogram.len() < level_counts.len() {
        histogram.resize(level_counts.len(), 0);
    }
    histogram
        .iter_mut()
        .zip(level_counts)
        .for_each(|(h, c)| *h += c);
}

/// The statistics of the sampled rows, their distance histogram and the extra sweep.
fn summarize(
    sources: Vec<SourceRow>,
    distance_histogram: Vec<u64>,
    sweep: Option<SourceRow>,
) -> PathStats {
    let pairs = sources.iter().map(|r| r.reached - 1).sum();
    let distance_sum = sources.iter().map(|r| r.distance_sum).sum();
    let diameter_lower_bound = sources
        .iter()
        .chain(&sweep)
        .map(|r| r.eccentricity)
        .max()
        .unwrap_or(0);
    PathStats {
        sources,
        distance_histogram,
        pairs,
        distance_sum,
        mean_distance: if pairs > 0 {
            distance_sum as f64 / pairs as f64
        } else {
            0.0
        },
        diameter_lower_bound,
        sweep,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Level counts of a sequential BFS from `source` over `neighbours`.
    fn level_counts(n: u64, neighbours: impl Fn(u64) -> Vec<u64>, source: u64) -> Vec<u64> {
        let mut depth = vec![u64::MAX; n as usize];
        depth[source as usize] = 0;
        let mut queue = VecDeque::from([source]);
        let mut counts = Vec::new();
        while let Some(u) = queue.pop_front() {
            let d = depth[u as usize];
            if counts.len() <= d as usize {
                counts.push(0);
            }
            counts[d as usize] += 1;
            for v in neighbours(u) {
                if depth[v as usize] == u64::MAX {
                    depth[v as usize] = d + 1;
                    queue.push_back(v);
                }
            }
        }
        counts
    }

    /// Summarise searches from `sources` as `sample_paths` does.
    fn sampled(counts_of: impl Fn(u64) -> Vec<u64>, sources: &[u64]) -> PathStats {
        let mut histogram = Vec::new();
        let rows = sources
            .iter()
            .map(|&s| {
                let counts = counts_of(s);
                add_levels(&mut histogram, &counts);
                SourceRow::from_levels(s, &counts)
            })
            .collect();
        summarize(rows, histogram, None)
    }

    #[test]
    fn rows_of_a_path_and_a_ring() {
        let path = |u: u64| {
            [u.wrapping_sub(1), u + 1]
                .into_iter()
                .filter(|&v| v < 5)
                .collect()
        };
        let end = SourceRow::from_levels(0, &level_counts(5, path, 0));
        let expected = SourceRow {
            source: 0,
            reached: 5,
            eccentricity: 4,
            distance_sum: 10,
        };
        assert_eq!(end, expected);
        let ring = |u: u64| vec![(u + 1) % 8, (u + 7) % 8];
        assert_eq!(level_counts(8, ring, 3), vec![1, 2, 2, 2, 1]);
        let row = SourceRow::from_levels(3, &[1, 2, 2, 2, 1]);
        assert_eq!(
            (row.reached, row.eccentricity, row.distance_sum),
            (8, 4, 16)
        );
        assert_eq!(SourceRow::from_levels(9, &[1]).eccentricity, 0);
    }

    #[test]
    fn torus_mean_distance_and_diameter() {
        let l = 6u64;
        let torus = |u: u64| {
            let (x, y) = (u % l, u / l);
            vec![
                (x + 1) % l + y * l,
                (x + l - 1) % l + y * l,
                x + (y + 1) % l * l,
                x + (y + l - 1) % l * l,
            ]
        };
        let stats = sampled(|s| level_counts(l * l, torus, s), &[0, 7, 35]);
        let n = (l * l) as f64;
        let expected = (l as f64 / 2.0) * n / (n - 1.0);
        assert!((stats.mean_distance - expected).abs() < 1e-12, "{stats:?}");
        assert_eq!(stats.diameter_lower_bound, l);
        assert_eq!(stats.pairs, 3 * (l * l - 1));
        assert_eq!(stats.distance_histogram[0], 3);
        assert_eq!(stats.distance_histogram.iter().sum::<u64>(), 3 * l * l);
    }

    #[test]
    fn sweep_raises_the_bound_and_components_stay_apart() {
        // Two paths, 0-1-2-3-4 and 5-6: sources 2 and 5.
        let counts = |s: u64| if s == 2 { vec![1, 2, 2] } else { vec![1, 1] };
        let mut stats = sampled(counts, &[2, 5]);
        assert_eq!(stats.distance_histogram, vec![2, 3, 2]);
        assert_eq!((stats.pairs, stats.distance_sum), (5, 7));
        assert_eq!(stats.diameter_lower_bound, 2);
        let sweep = SourceRow::from_levels(0, &[1, 1, 1, 1, 1]);
        stats = summarize(stats.sources, stats.distance_histogram, Some(sweep));
        assert_eq!(stats.diameter_lower_bound, 4);
        assert_eq!(stats.mean_distance, 7.0 / 5.0);
        assert_eq!(summarize(Vec::new(), Vec::new(), None).mean_distance, 0.0);
    }
}
