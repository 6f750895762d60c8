//! The initial seeds from each rank's share of the nodes: the centroids of k equal runs of
//! all nodes in Hilbert order (by key, then global id), found without moving any node. Run j
//! starts at global position ⌊j N / k⌋; the key there is found by a 16-way search on the key,
//! counting keys below 15 guesses per run on every rank (one reduction of 15 k counts a
//! round, 16 rounds), and nodes of that very key are taken in global id order, which is
//! rank order.

use super::{Ranks, FIXED};
use crate::mesh::hilbert;
use rayon::prelude::*;

/// Hilbert keys have 63 bits (21 per axis).
const KEY_END: u64 = 1 << 63;
/// Pieces a run's key interval is cut into per round (16: 4 bits a round, 16 reductions).
const FAN: u64 = 16;

/// The k initial seeds (fixed-point centroids, as the iterations' seeds), this rank's nodes
/// (share indices) in Hilbert order, and their points in that order.
#[allow(clippy::type_complexity)]
pub fn hilbert_seeds(
    points: &[[f64; 3]],
    n: usize,
    k: usize,
    ranks: &dyn Ranks,
) -> (Vec<[f64; 3]>, Vec<u32>, Vec<[f64; 3]>) {
    let clock = std::time::Instant::now();
    let keyed: Vec<(u64, u32)> = points
        .par_iter()
        .enumerate()
        .map(|(i, &p)| (hilbert::of_point(p, [0.0; 3], [1.0; 3]), i as u32))
        .collect();
    let keys_at = clock.elapsed().as_secs_f64();
    let keyed = sorted_keys(keyed);
    let sort_at = clock.elapsed().as_secs_f64();
    let cuts = run_cuts(&keyed, n, k, ranks);
    let cuts_at = clock.elapsed().as_secs_f64();
    let order: Vec<u32> = keyed.into_par_iter().map(|(_, i)| i).collect();
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
        "mesh: partition split: keys {keys_at:.3} s, sort {:.3} s, run cuts {:.3} s, order and seeds {:.3} s",
        sort_at - keys_at,
        cuts_at - sort_at,
        clock.elapsed().as_secs_f64() - cuts_at
    );
    (seeds, order, sorted)
}

/// Top bits of the key that pick a pair's bucket in `sorted_keys` (4096 buckets: a few
/// thousand pairs each at 10M nodes, sorted in cache).
const BUCKET_BITS: u32 = 12;
/// Pairs per chunk of `sorted_keys`' counting pass.
const BUCKET_CHUNK: usize = 1 << 16;

/// A chunk's pairs grouped by bucket, and where each group starts (buckets + 1).
type Grouped = (Vec<(u64, u32)>, Vec<usize>);

fn bucket(key: u64) -> usize {
    (key >> (63 - BUCKET_BITS)) as usize
}

/// `keyed` sorted (the same list as `par_sort_unstable`, faster on many cores): each chunk
/// grouped by the keys' top bits (a counting sort), then each bucket gathered from the chunks
/// into its place and sorted there, the buckets in parallel.
pub fn sorted_keys(keyed: Vec<(u64, u32)>) -> Vec<(u64, u32)> {
    let buckets = 1usize << BUCKET_BITS;
    let grouped: Vec<Grouped> = keyed
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
    let mut sorted = vec![(0, 0); keyed.len()];
    drop(keyed);
    let mut places = Vec::with_capacity(buckets);
    let mut rest = &mut sorted[..];
    for b in 0..buckets {
        let size = grouped.iter().map(|(_, s)| s[b + 1] - s[b]).sum();
        let (place, tail) = rest.split_at_mut(size);
        places.push(place);
        rest = tail;
    }
    places.into_par_iter().enumerate().for_each(|(b, place)| {
        let mut at = 0;
        for (pairs, start) in &grouped {
            let group = &pairs[start[b]..start[b + 1]];
            place[at..at + group.len()].copy_from_slice(group);
            at += group.len();
        }
        place.sort_unstable();
    });
    sorted
}

/// Where each of the k runs starts in this rank's sorted `(key, index)` list, and where the
/// last ends (k + 1 cuts). `order` is sorted, and share indices ascend with global ids.
pub fn run_cuts(order: &[(u64, u32)], n: usize, k: usize, ranks: &dyn Ranks) -> Vec<usize> {
    let position: Vec<i64> = (0..k).map(|j| (j * n / k) as i64).collect();
    let below = |key: u64| order.partition_point(|&(h, _)| h < key);
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
        let mut count: Vec<i64> = guesses.iter().map(|&key| below(key) as i64).collect();
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
    cuts.push(order.len());
    cuts
}
