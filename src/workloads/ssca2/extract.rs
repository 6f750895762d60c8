//! SSCA#2 kernels 2 and 3 on the 1D-partitioned arc graph of kernel 1.
//!
//! Kernel 2 (classify large sets): every arc of the largest weight, parallel arcs each
//! counted. Kernel 3 (graph extraction): for each of them, its start vertex and every vertex
//! within `SUBGRAPH_HOPS` out-hops of its end vertex, by a depth-limited breadth-first
//! search whose frontier travels to its owners each level (as the reference code and
//! McGuinness's thesis, §2.3.4, extract them).

use crate::comm::{bucket_by_rank, Op, Triple, World};
use crate::error::Result;
use crate::graph::arcs::ArcGraph;
use crate::graph::Vid;
use rayon::prelude::*;
use std::cmp::Ordering;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Out-hops from a maximum-weight arc's end vertex.
pub const SUBGRAPH_HOPS: u32 = 3;

/// Arcs a task of kernel 2's pass reads.
const WEIGHT_CHUNK: usize = 1 << 16;

/// Every maximum-weight arc (start, end, weight), ordered by (start, end), on every rank
/// (collective).
pub fn max_weight_arcs(world: &World, g: &ArcGraph) -> Result<Vec<Triple>> {
    // One pass over the weights: each chunk keeps its largest weight and the arcs that carry
    // it (a running maximum changes a handful of times a chunk), so the weights, a gigabyte
    // at SCALE 24, are read once rather than once for the maximum and again for its arcs.
    let (local_max, at) = g
        .out
        .weights
        .par_chunks(WEIGHT_CHUNK)
        .enumerate()
        .map(|(c, ws)| {
            let (mut max, mut at) = (0, Vec::new());
            for (i, &w) in ws.iter().enumerate() {
                if w >= max {
                    if w > max {
                        max = w;
                        at.clear();
                    }
                    at.push(c * WEIGHT_CHUNK + i);
                }
            }
            (max, at)
        })
        .reduce(|| (0, Vec::new()), heavier);
    let max = world.allreduce(local_max, Op::Max);
    let offsets = &g.out.offsets;
    let mine: Vec<Triple> = at
        .into_iter()
        .filter(|_| local_max == max)
        .map(|i| {
            let l = offsets.partition_point(|&o| o <= i as u64) - 1;
            Triple(g.part.global(l), g.out.adj[i].into(), max.into())
        })
        .collect();
    // Arcs are in row order, rows in vertex order on each rank, ranks in vertex order: already
    // sorted by (start, end).
    world.allgatherv(&mine)
}

/// The heavier of two chunks' (largest weight, arcs carrying it), both where they tie; `a`
/// comes before `b`, so the arcs stay in order.
fn heavier(a: (u32, Vec<usize>), b: (u32, Vec<usize>)) -> (u32, Vec<usize>) {
    match a.0.cmp(&b.0) {
        Ordering::Greater => a,
        Ordering::Less => b,
        Ordering::Equal => {
            let (max, mut at) = a;
            at.extend(b.1);
            (max, at)
        }
    }
}

/// The size of each arc's subgraph: its start vertex and the vertices within
/// `SUBGRAPH_HOPS` out-hops of its end (collective).
pub fn subgraph_sizes(world: &World, g: &ArcGraph, arcs: &[Triple]) -> Result<Vec<u64>> {
    // One mark per own vertex for all the arcs, unmarked through the list of those marked:
    // a fresh vector per arc (16 MB at SCALE 24) cost its page faults and a full count.
    let reached: Vec<AtomicBool> = (0..g.local_n())
        .into_par_iter()
        .map(|_| AtomicBool::new(false))
        .collect();
    arcs.iter()
        .map(|&Triple(start, end, _)| {
            let marked = within_hops(world, g, end, SUBGRAPH_HOPS, &reached)?;
            let start_reached = world.query(&[start], |v| g.part.owner(v), |v| {
                reached[g.part.local(v)].load(Relaxed) as u8
            })?[0];
            let count = world.allreduce(marked.len() as u64, Op::Sum);
            marked.par_iter().for_each(|&l| reached[l].store(false, Relaxed));
            Ok(count + u64::from(start_reached == 0))
        })
        .collect()
}

/// Marks in `reached` (all unmarked on entry) the own vertices within `hops` out-hops of
/// `from`, and lists their local indices (collective).
pub fn within_hops(
    world: &World,
    g: &ArcGraph,
    from: Vid,
    hops: u32,
    reached: &[AtomicBool],
) -> Result<Vec<usize>> {
    let part = g.part;
    // The first to mark a vertex takes it into the next frontier (the threads race for it).
    let mark = |v: Vid| {
        let l = part.local(v);
        (!reached[l].load(Relaxed) && !reached[l].swap(true, Relaxed)).then_some(l)
    };
    let mut frontier: Vec<usize> = Vec::new();
    if part.is_local(from) {
        frontier.extend(mark(from));
    }
    let mut marked = frontier.clone();
    for _ in 0..hops {
        // Own neighbours are marked where they are found, in parallel; only the others travel
        // to their owners.
        let (mut next, away) = frontier
            .par_iter()
            .fold(
                || (Vec::new(), Vec::new()),
                |(mut next, mut away): (Vec<usize>, Vec<Vid>), &l| {
                    for &w in g.out.row(l) {
                        let v = Vid::from(w);
                        if !part.is_local(v) {
                            away.push(v);
                        } else if let Some(l) = mark(v) {
                            next.push(l);
                        }
                    }
                    (next, away)
                },
            )
            .reduce(|| (Vec::new(), Vec::new()), |a, b| (concat(a.0, b.0), concat(a.1, b.1)));
        let (send, counts) = bucket_by_rank(world.size(), &away, |&v| part.owner(v));
        let arrived = world.alltoallv(&send, &counts)?;
        next.par_extend(arrived.par_iter().filter_map(|&v| mark(v)));
        marked.extend_from_slice(&next);
        frontier = next;
    }
    Ok(marked)
}

fn concat<T>(mut a: Vec<T>, b: Vec<T>) -> Vec<T> {
    a.extend(b);
    a
}
