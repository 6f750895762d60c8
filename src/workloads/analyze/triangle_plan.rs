//! The GPU triangle count's work, laid out on the host (kernels/triangles.cu runs it).
//!
//! A triangle of the degree-oriented graph (`triangles::orient`) is found at one oriented
//! edge (u, v) as a common entry of the out-rows N+(u) and N+(v). The cheapest way to
//! intersect two sorted rows of such different lengths is to look each entry of the shorter
//! one up in the longer: min(|N+(u)|, |N+(v)|) probes, the spec's count (about 275 an edge at
//! Kronecker SCALE 24). A probe is cheap only when the longer row sits in shared memory, so
//! each edge goes to the endpoint with the longer out-row, its *owner* (u on a tie), and the
//! other endpoint becomes one of the owner's *partners*: the GPU puts the owner's row in
//! shared memory once and streams every partner's row past it. Edges with an empty out-row at
//! either end close no triangle and are left out.
//!
//! The partners are cut into items of bounded probes (hubs own hundreds of thousands of
//! edges) and binned by the owner's out-degree: up to `SHORT_ROW` a warp per item (the row
//! staged in the warp's slice of shared memory), above it a block per item (the row in a
//! shared-memory bitmap over its ids' range, or a hash table where the range is too wide).
//! Each bin lists its items most probes first, and ranks take every size-th item of each bin.

use super::triangles::Oriented;
use rayon::prelude::*;

/// Out-rows up to this long are owned by a warp (as `SHORT_ROW` in kernels/triangles.cu).
pub const SHORT_ROW: u64 = 128;

/// Probes an item of the warp bin and of the block bin takes at most (one partner more may
/// pass it): enough to pay for staging the owner's row, few enough to keep every SM busy
/// to the end.
const WARP_PROBES: u64 = 1 << 12;
const BLOCK_PROBES: u64 = 1 << 17;

/// A run of one owner's partners: `partners[begin..end]` of the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    pub owner: u32,
    pub begin: u64,
    pub end: u64,
    /// Σ of the partners' out-degrees.
    pub probes: u64,
}

/// Every oriented edge with two non-empty out-rows, as (owner, partner), and the items.
pub struct Plan {
    /// Each owner's partners, owner after owner, ascending.
    pub partners: Vec<u32>,
    /// Items of owners with out-rows up to `SHORT_ROW` (a warp each).
    pub short: Vec<Item>,
    /// Items of the longer owners (a block each).
    pub long: Vec<Item>,
}

impl Plan {
    /// Lay out the work of counting the triangles of `oriented`.
    pub fn new(oriented: &Oriented) -> Plan {
        let degree = |x: u32| oriented.degree(x.into());
        let (partners, starts) = group_by_owner(oriented);
        let items: Vec<Item> = (0..oriented.n() as usize)
            .into_par_iter()
            .filter(|&o| starts[o] < starts[o + 1])
            .flat_map_iter(|o| {
                let cap = match degree(o as u32) <= SHORT_ROW {
                    true => WARP_PROBES,
                    false => BLOCK_PROBES,
                };
                let range = starts[o] as usize..starts[o + 1] as usize;
                cut(o as u32, range, cap, &partners, &degree)
            })
            .collect();
        let (mut short, mut long): (Vec<Item>, Vec<Item>) = items
            .into_par_iter()
            .partition(|item| degree(item.owner) <= SHORT_ROW);
        for bin in [&mut short, &mut long] {
            bin.par_sort_unstable_by_key(|item| (std::cmp::Reverse(item.probes), item.begin));
        }
        Plan {
            partners,
            short,
            long,
        }
    }

    /// Probes of the whole count: Σ over edges of min(|N+(u)|, |N+(v)|).
    pub fn probes(&self) -> u64 {
        self.short.iter().chain(&self.long).map(|i| i.probes).sum()
    }

    /// The share of the block bin's probes whose owner's row the block kernel keeps as a
    /// bitmap (its ids' range fits the shared table; as `bitmap_fits` in
    /// kernels/triangles.cu), counting alone and with the corners: a figure for the log.
    pub fn bitmap_shares(&self, oriented: &Oriented) -> [f64; 2] {
        let all: u64 = self.long.iter().map(|i| i.probes).sum();
        [false, true].map(|corners| {
            let fitting: u64 = (self.long.par_iter())
                .filter(|i| {
                    let row = oriented.row(i.owner.into());
                    let words = (u64::from(row[row.len() - 1] - row[0]) + 32) / 32;
                    let len = row.len() as u64;
                    words <= SPACE_WORDS && (!corners || words + words.div_ceil(2) + len <= SPACE_WORDS)
                })
                .map(|i| i.probes)
                .sum();
            fitting as f64 / all.max(1) as f64
        })
    }
}

/// Words of the block kernel's shared table (`SPACE_WORDS` in kernels/triangles.cu, with the
/// corners and without).
const SPACE_WORDS: u64 = 8192;

/// Owners per bucket of `group_by_owner`'s second pass (a bucket's counters stay in cache).
const BUCKET_BITS: u32 = 16;

/// Every oriented edge with two non-empty out-rows, as a partner of its owner (the end with
/// the longer out-row, u of (u, v) on a tie): the partners, owner after owner, each owner's
/// ascending, and where each owner's starts (n + 1 offsets).
///
/// A two-pass stable radix sort of the (owner, partner) pairs without shared counters (the
/// hubs own most edges: atomic counters per owner, and before them a sort of all the pairs,
/// took seconds at SCALE 24): chunks of rows count their pairs per bucket of 2^16 owners and
/// write them to their own slice of each bucket; then each bucket is counting-sorted by
/// owner. Rows are read in order, so an owner's partners come out ascending: those below it
/// (edges into it, row by row) before its own row's.
fn group_by_owner(oriented: &Oriented) -> (Vec<u32>, Vec<u64>) {
    let n = oriented.n() as usize;
    let buckets = (n >> BUCKET_BITS) + 1;
    let chunks = row_chunks(oriented, 4 * rayon::current_num_threads());
    let counts: Vec<Vec<usize>> = chunks
        .par_iter()
        .map(|rows| {
            let mut count = vec![0; buckets];
            rows.clone()
                .for_each(|u| owned_pairs(oriented, u).for_each(|(o, _)| count[bucket(o)] += 1));
            count
        })
        .collect();
    // Each chunk's slice of each bucket, bucket after bucket, chunk after chunk.
    let mut pairs = vec![0u64; counts.iter().flatten().sum()];
    let mut slices: Vec<Vec<&mut [u64]>> = chunks.iter().map(|_| Vec::new()).collect();
    let mut bucket_pairs = Vec::with_capacity(buckets);
    let mut rest = &mut pairs[..];
    for b in 0..buckets {
        let mut total = 0;
        for (c, count) in counts.iter().enumerate() {
            let (slice, tail) = rest.split_at_mut(count[b]);
            slices[c].push(slice);
            rest = tail;
            total += count[b];
        }
        bucket_pairs.push(total);
    }
    chunks.par_iter().zip(slices).for_each(|(rows, mut slices)| {
        let mut at = vec![0; buckets];
        rows.clone().for_each(|u| {
            owned_pairs(oriented, u).for_each(|(o, p)| {
                let b = bucket(o);
                slices[b][at[b]] = u64::from(o) << 32 | u64::from(p);
                at[b] += 1;
            })
        });
    });
    sort_buckets(n, &pairs, &bucket_pairs)
}

/// The bucket of owner `o` in `group_by_owner`.
fn bucket(o: u32) -> usize {
    (o >> BUCKET_BITS) as usize
}

/// Row ranges of about equal entries, `parts` of them at most.
fn row_chunks(oriented: &Oriented, parts: usize) -> Vec<std::ops::Range<u64>> {
    let (n, entries) = (oriented.n(), oriented.adj.len() as u64);
    let first_row_at = |e: u64| oriented.offsets.partition_point(|&o| o < e) as u64;
    let bounds: Vec<u64> = (0..=parts as u64)
        .map(|k| first_row_at(entries * k / parts as u64).min(n))
        .chain([n])
        .collect();
    let mut chunks: Vec<_> = bounds.windows(2).map(|w| w[0]..w[1]).collect();
    chunks.retain(|r| !r.is_empty());
    chunks
}

/// Row u's edges with two non-empty out-rows, as (owner, partner).
fn owned_pairs(oriented: &Oriented, u: u64) -> impl Iterator<Item = (u32, u32)> + '_ {
    let degree = |x: u32| oriented.degree(x.into());
    let du = oriented.degree(u);
    let u = u as u32;
    oriented
        .row(u.into())
        .iter()
        .filter(move |&&v| degree(v) > 0)
        .map(move |&v| if degree(v) > du { (v, u) } else { (u, v) })
}

/// The pairs (owner << 32 | partner), bucket after bucket (`sizes` pairs each), counting
/// sorted by owner within each bucket, stably: the partners and each owner's start.
fn sort_buckets(n: usize, pairs: &[u64], sizes: &[usize]) -> (Vec<u32>, Vec<u64>) {
    let mut partners = vec![0u32; pairs.len()];
    let mut starts = vec![0u64; n + 1];
    starts[n] = pairs.len() as u64;
    let mut jobs = Vec::with_capacity(sizes.len());
    let (mut input, mut output, mut begin) = (pairs, &mut partners[..], 0);
    for (&size, owner_starts) in sizes.iter().zip(starts[..n].chunks_mut(1 << BUCKET_BITS)) {
        let (bucket_in, rest_in) = input.split_at(size);
        let (bucket_out, rest_out) = output.split_at_mut(size);
        jobs.push((bucket_in, bucket_out, owner_starts, begin));
        (input, output, begin) = (rest_in, rest_out, begin + size as u64);
    }
    jobs.into_par_iter()
        .for_each(|(input, output, owner_starts, begin)| {
            let low = |pair: u64| (pair >> 32) as usize & ((1 << BUCKET_BITS) - 1);
            let mut at = vec![0usize; owner_starts.len()];
            input.iter().for_each(|&pair| at[low(pair)] += 1);
            let mut sum = 0;
            for (a, start) in at.iter_mut().zip(owner_starts.iter_mut()) {
                *start = begin + sum as u64;
                (*a, sum) = (sum, sum + *a);
            }
            for &pair in input {
                output[at[low(pair)]] = pair as u32;
                at[low(pair)] += 1;
            }
        });
    (partners, starts)
}

/// The items of `rank` among `parts`: every parts-th of `bin`, from its rank-th on.
pub fn rank_items(bin: &[Item], parts: usize, rank: usize) -> Vec<Item> {
    bin.iter().skip(rank).step_by(parts).copied().collect()
}

/// One owner's partners `range` cut into items that stop at the first partner taking them
/// to `cap` probes.
fn cut(
    owner: u32,
    range: std::ops::Range<usize>,
    cap: u64,
    partners: &[u32],
    degree: &impl Fn(u32) -> u64,
) -> Vec<Item> {
    let mut items = Vec::new();
    let mut item = Item {
        owner,
        begin: range.start as u64,
        end: range.start as u64,
        probes: 0,
    };
    for i in range {
        item.end = i as u64 + 1;
        item.probes += degree(partners[i]);
        if item.probes >= cap {
            items.push(item);
            item.begin = item.end;
            item.probes = 0;
        }
    }
    if item.end > item.begin {
        items.push(item);
    }
    items
}

#[cfg(test)]
mod tests {
    use super::super::triangles::{count_range, orient, HostCsr};
    use super::*;

    /// t_v (relabelled) from the items as the kernels take them: each partner's row looked
    /// up in its owner's, every hit a triangle at the owner, the partner and the entry.
    fn count_items(oriented: &Oriented, plan: &Plan, items: &[Item]) -> Vec<u64> {
        let mut t = vec![0; oriented.n() as usize];
        for item in items {
            let owner_row = oriented.row(item.owner.into());
            for &p in &plan.partners[item.begin as usize..item.end as usize] {
                for &w in oriented.row(p.into()) {
                    if owner_row.binary_search(&w).is_ok() {
                        [item.owner, p, w].iter().for_each(|&x| t[x as usize] += 1);
                    }
                }
            }
        }
        t
    }

    /// Random graphs (xorshift), a clique with a star and a long hub row among them.
    fn graphs() -> Vec<HostCsr> {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        // The last two span several buckets of `group_by_owner` (n a multiple of 2^16, and not).
        let sizes = [
            (1, 0),
            (2, 1),
            (12, 30),
            (40, 100),
            (60, 900),
            (1 << 17, 100_000),
            ((1 << 17) + 3, 100_000),
        ];
        let mut graphs: Vec<HostCsr> = sizes
            .iter()
            .map(|&(n, m)| {
                let edges: Vec<(u64, u64)> = (0..m).map(|_| (next() % n, next() % n)).collect();
                HostCsr::from_edges(n, &edges)
            })
            .collect();
        // A clique on 0..=150 (out-rows past SHORT_ROW: block items, cut by probes) with a
        // star of 400 leaves on vertex 0 and random chords.
        let mut edges: Vec<(u64, u64)> =
            (0..=150).flat_map(|u| (0..u).map(move |v| (u, v))).collect();
        edges.extend((151..551).map(|v| (0, v)));
        edges.extend((0..2000).map(|_| (next() % 551, next() % 551)));
        graphs.push(HostCsr::from_edges(551, &edges));
        graphs
    }

    #[test]
    fn the_items_count_what_the_cpu_counts_on_any_rank_count() {
        for csr in graphs() {
            let oriented = orient(&csr).unwrap();
            let plan = Plan::new(&oriented);
            let expected = count_range(&oriented, 0..oriented.n());
            for parts in 1..=4 {
                let mut t = vec![0; oriented.n() as usize];
                for rank in 0..parts {
                    for bin in [&plan.short, &plan.long] {
                        let counts = count_items(&oriented, &plan, &rank_items(bin, parts, rank));
                        t.iter_mut().zip(counts).for_each(|(a, b)| *a += b);
                    }
                }
                assert_eq!(t, expected, "n {} on {parts} ranks", csr.n());
            }
        }
    }

    #[test]
    fn each_edge_is_probed_from_its_shorter_row_in_bounded_items() {
        for csr in graphs() {
            let oriented = orient(&csr).unwrap();
            let plan = Plan::new(&oriented);
            // Every oriented edge with two non-empty rows once, as (owner, partner).
            let mut pairs: Vec<(u32, u32)> = plan
                .short
                .iter()
                .chain(&plan.long)
                .flat_map(|i| {
                    let range = i.begin as usize..i.end as usize;
                    plan.partners[range].iter().map(move |&p| (i.owner, p))
                })
                .collect();
            pairs.sort_unstable();
            let degree = |x: u32| oriented.degree(x.into());
            let mut expected = Vec::new();
            let mut min_sum = 0;
            for u in 0..oriented.n() as u32 {
                for &v in oriented.row(u.into()) {
                    let (du, dv) = (degree(u), degree(v));
                    if dv > 0 {
                        expected.push(if dv > du { (v, u) } else { (u, v) });
                        min_sum += du.min(dv);
                    }
                }
            }
            expected.sort_unstable();
            assert_eq!(pairs, expected);
            assert_eq!(plan.probes(), min_sum);
            for (bin, short) in [(&plan.short, true), (&plan.long, false)] {
                let cap = if short { WARP_PROBES } else { BLOCK_PROBES };
                assert!(bin.windows(2).all(|w| w[0].probes >= w[1].probes));
                for item in bin.iter() {
                    assert_eq!(degree(item.owner) <= SHORT_ROW, short);
                    let range = item.begin as usize..item.end as usize;
                    assert!(plan.partners[range].windows(2).all(|w| w[0] < w[1]));
                    let last = degree(plan.partners[item.end as usize - 1]);
                    assert!(item.probes < cap + last && item.begin < item.end);
                }
            }
        }
        // The clique's out-rows pass SHORT_ROW: the block bin is used, its rows' ids within
        // 551 of each other (bitmaps of 18 words, with 2 x 9 words of first entries and
        // 151 hit counters).
        let oriented = orient(&graphs().pop().unwrap()).unwrap();
        let plan = Plan::new(&oriented);
        assert!(!plan.long.is_empty());
        assert_eq!(plan.bitmap_shares(&oriented), [1.0, 1.0]);
    }

    #[test]
    fn an_owners_partners_are_cut_at_the_cap() {
        // Partners 0..5 of owner 9 with out-degrees 3, 1, 4, 1, 5 (by id), cap 4.
        let degree = |x: u32| [3, 1, 4, 1, 5][x as usize];
        let items = cut(9, 0..5, 4, &[0, 1, 2, 3, 4], &degree);
        let spans: Vec<(u64, u64, u64)> = items.iter().map(|i| (i.begin, i.end, i.probes)).collect();
        assert_eq!(spans, vec![(0, 2, 4), (2, 3, 4), (3, 5, 6)]);
        assert!(items.iter().all(|i| i.owner == 9));
        assert_eq!(cut(9, 2..3, 100, &[0, 1, 2], &degree).len(), 1);
    }
}


