//! The initial seeds from each rank's share of the nodes: the centroids of k equal runs of
//! all nodes in Hilbert order (by key, then global id), found without moving any node. Run j
//! starts at global position ⌊j N / k⌋; the key there is found by a 16-way search on the key,
//! counting keys below 15 guesses per run on every rank (one reduction of 15 k counts a
//! round, 16 rounds), and nodes of that very key are taken in global id order, which is
//! rank order.
//!
//! The keys are grouped by their top 12 bits (a counting sort), not sorted: the search's
//! first three rounds guess only at the groups' edges (4 bits a round), later ones look
//! inside the group that holds a run's start, and only such groups (at most k) are sorted.
//! A run is then a contiguous stretch of the grouped list, which is all that the sums and
//! the partitioner's iterations need (their results do not depend on the order).

use super::curve::Curve;
use super::{Ranks, FIXED};
use rayon::prelude::*;

/// Hilbert keys have 63 bits (21 per axis).
const KEY_END: u64 = 1 << 63;
/// Pieces a run's key interval is cut into per round (16: 4 bits a round, 16 reductions).
const FAN: u64 = 16;

/// The k initial seeds (fixed-point centroids, as the iterations' seeds), this rank's nodes
/// (share indices) in grouped Hilbert order (each run contiguous), and their points in that
/// order.
#[allow(clippy::type_complexity)]
pub fn hilbert_seeds(
    points: &[[f64; 3]],
    curve: &Curve,
    n: usize,
    k: usize,
    ranks: &dyn Ranks,
) -> (Vec<[f64; 3]>, Vec<u32>, Vec<[f64; 3]>) {
    let clock = std::time::Instant::now();
    let keyed: Vec<(u64, u32)> = points
        .par_iter()
        .enumerate()
        .map(|(i, &p)| (curve.key(p), i as u32))
        .collect();
    let keys_at = clock.elapsed().as_secs_f64();
    let mut keyed = Grouped::new(keyed);
    let sort_at = clock.elapsed().as_secs_f64();
    let cuts = run_cuts(&mut keyed, n, k, ranks);
    let cuts_at = clock.elapsed().as_secs_f64();
    let order: Vec<u32> = keyed.pairs.into_par_iter().map(|(_, i)| i).collect();
    let sorted: Vec<[f64; 3]> = order.par_iter().map(|&i| points[i as usize]).collect();
    // Each run is a contiguous slice of the sorted points.
    let mut sums: Vec<i64> = (0..k)
        .into_par_iter()
        .flat_map_iter(|j| {
            let mut s = [0i64; 4];
            for p in &sorted[cuts[j]..cuts[j + 1]] {
                s[0] += 1;
                for d in 0..3 {
                    s[d + 1] += (p[d] * FIXED) as i64;
                }
            }
            s
        })
        .collect();
    ranks.sum(&mut sums);
    let seeds = (0..k)
        .map(|j| {
            let count = sums[4 * j].max(1) as f64;
            std::array::from_fn(|d| sums[4 * j + d + 1] as f64 / FIXED / count)
        })
        .collect();
    log::info!(
        "mesh: partition split: keys {keys_at:.3} s, grouping {:.3} s, run cuts {:.3} s, order and seeds {:.3} s",
        sort_at - keys_at,
        cuts_at - sort_at,
        clock.elapsed().as_secs_f64() - cuts_at
    );
    (seeds, order, sorted)
}

/// Top bits of the key that pick a pair's group (4096 groups: a few thousand pairs each at
/// 10M nodes). Three rounds of the search (4 bits each) end on a group's edges.
const BUCKET_BITS: u32 = 12;
/// Keys below this are a group's first (`bucket_start`).
const BUCKET_LOW: u64 = (1 << (63 - BUCKET_BITS)) - 1;
/// Pairs per chunk of the grouping's counting pass.
const BUCKET_CHUNK: usize = 1 << 16;

fn bucket(key: u64) -> usize {
    (key >> (63 - BUCKET_BITS)) as usize
}

/// A chunk's pairs grouped by bucket, and where each group starts (buckets + 1).
type Chunk = (Vec<(u64, u32)>, Vec<usize>);

/// This rank's (key, share index) pairs grouped by the keys' top bits, the groups in key
/// order, each in index order until a search looks inside it (`sort_inside`).
pub struct Grouped {
    pub pairs: Vec<(u64, u32)>,
    /// Where each group starts (groups + 1).
    start: Vec<usize>,
    sorted: Vec<bool>,
}

impl Grouped {
    /// Each chunk grouped by the keys' top bits (a counting sort), then each group gathered
    /// from the chunks into its place, the groups in parallel.
    pub fn new(keyed: Vec<(u64, u32)>) -> Grouped {
        let buckets = 1usize << BUCKET_BITS;
        let grouped: Vec<Chunk> = keyed
            .par_chunks(BUCKET_CHUNK)
            .map(|chunk| {
                let mut start = vec![0usize; buckets + 1];
                for &(key, _) in chunk {
                    start[bucket(key) + 1] += 1;
                }
                for b in 0..buckets {
                    start[b + 1] += start[b];
                }
                let mut fill = start.clone();
                let mut out = vec![(0, 0); chunk.len()];
                for &pair in chunk {
                    let b = bucket(pair.0);
                    out[fill[b]] = pair;
                    fill[b] += 1;
                }
                (out, start)
            })
            .collect();
        let mut start = vec![0usize; buckets + 1];
        for b in 0..buckets {
            start[b + 1] = start[b] + grouped.iter().map(|(_, s)| s[b + 1] - s[b]).sum::<usize>();
        }
        let mut pairs = vec![(0, 0); keyed.len()];
        drop(keyed);
        let places = split_groups(&mut pairs, &start);
        places.into_par_iter().enumerate().for_each(|(b, place)| {
            let mut at = 0;
            for (chunk, s) in &grouped {
                let group = &chunk[s[b]..s[b + 1]];
                place[at..at + group.len()].copy_from_slice(group);
                at += group.len();
            }
        });
        Grouped {
            pairs,
            start,
            sorted: vec![false; buckets],
        }
    }

    /// Sort the groups that hold one of `keys` past their first key (in parallel).
    pub fn sort_inside(&mut self, keys: &[u64]) {
        let mut wanted = vec![false; self.sorted.len()];
        for &key in keys {
            if key < KEY_END && key & BUCKET_LOW != 0 && !self.sorted[bucket(key)] {
                wanted[bucket(key)] = true;
            }
        }
        let places = split_groups(&mut self.pairs, &self.start);
        places
            .into_par_iter()
            .zip(&wanted)
            .filter(|(_, &w)| w)
            .for_each(|(place, _)| place.sort_unstable());
        for (s, w) in self.sorted.iter_mut().zip(wanted) {
            *s |= w;
        }
    }

    /// Pairs with a key below `key` (at most 2^63); a key inside a group needs the group
    /// sorted (`sort_inside`).
    pub fn below(&self, key: u64) -> usize {
        if key >= KEY_END {
            return self.pairs.len();
        }
        let b = bucket(key);
        if key & BUCKET_LOW == 0 {
            return self.start[b];
        }
        assert!(self.sorted[b], "key {key:#x} inside an unsorted group");
        let group = &self.pairs[self.start[b]..self.start[b + 1]];
        self.start[b] + group.partition_point(|&(h, _)| h < key)
    }
}

/// `pairs` cut into its groups' slices.
fn split_groups<'a>(pairs: &'a mut [(u64, u32)], start: &[usize]) -> Vec<&'a mut [(u64, u32)]> {
    let mut places = Vec::with_capacity(start.len() - 1);
    let mut rest = pairs;
    for b in 0..start.len() - 1 {
        let (place, tail) = rest.split_at_mut(start[b + 1] - start[b]);
        places.push(place);
        rest = tail;
    }
    places
}

/// Where each of the k runs starts in this rank's grouped `(key, index)` list, and where the
/// last ends (k + 1 cuts); the groups a run starts in end up sorted. Share indices ascend
/// with global ids.
pub fn run_cuts(order: &mut Grouped, n: usize, k: usize, ranks: &dyn Ranks) -> Vec<usize> {
    let position: Vec<i64> = (0..k).map(|j| (j * n / k) as i64).collect();
    // Per run: keys with at most `position` nodes below them on all ranks (lo), and keys
    // with more (hi); the run's first node has the key lo when they meet. Each round counts
    // below FAN - 1 keys spread over (lo, hi) and keeps the piece holding the start.
    let mut lo = vec![0u64; k];
    let mut hi = vec![KEY_END; k];
    while lo.iter().zip(&hi).any(|(l, h)| h - l > 1) {
        let guess =
            |j: usize, g: u64| lo[j] + ((hi[j] - lo[j]) as u128 * g as u128 / FAN as u128) as u64;
        let guesses: Vec<u64> = (0..k)
            .flat_map(|j| (1..FAN).map(move |g| (j, g)))
            .map(|(j, g)| guess(j, g))
            .collect();
        order.sort_inside(&guesses);
        let mut count: Vec<i64> = guesses.iter().map(|&key| order.below(key) as i64).collect();
        ranks.sum(&mut count);
        for j in 0..k {
            let piece = (j * (FAN as usize - 1))..((j + 1) * (FAN as usize - 1));
            for (&key, &c) in guesses[piece.clone()].iter().zip(&count[piece]) {
                if c <= position[j] {
                    lo[j] = lo[j].max(key);
                } else {
                    hi[j] = hi[j].min(key);
                }
            }
        }
    }
    // Nodes of key lo[j] below the run's start: those of the earlier ranks first.
    let edges: Vec<u64> = lo.iter().flat_map(|&key| [key, key + 1]).collect();
    order.sort_inside(&edges);
    let below = |key: u64| order.below(key);
    let mut under: Vec<i64> = lo.iter().map(|&key| below(key) as i64).collect();
    ranks.sum(&mut under);
    let equal: Vec<i64> = lo
        .iter()
        .map(|&key| (below(key + 1) - below(key)) as i64)
        .collect();
    let earlier = ranks.before(&equal);
    let mut cuts: Vec<usize> = (0..k)
        .map(|j| {
            let take = (position[j] - under[j] - earlier[j]).clamp(0, equal[j]);
            below(lo[j]) + take as usize
        })
        .collect();
    cuts.push(order.pairs.len());
    cuts
}
