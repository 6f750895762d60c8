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

/// Out-hops from a maximum-weight arc's end vertex.
pub const SUBGRAPH_HOPS: u32 = 3;

/// Every maximum-weight arc (start, end, weight), ordered by (start, end), on every rank
/// (collective).
pub fn max_weight_arcs(world: &World, g: &ArcGraph) -> Result<Vec<Triple>> {
    let local_max = g.out.weights.par_iter().copied().max().unwrap_or(0);
    let max = world.allreduce(local_max, Op::Max);
    let mine: Vec<Triple> = (0..g.local_n())
        .into_par_iter()
        .flat_map_iter(|l| {
            let u = g.part.global(l);
            g.out
                .row(l)
                .iter()
                .zip(g.out.row_weights(l))
                .filter(move |(_, &w)| w == max)
                .map(move |(&v, &w)| Triple(u, v.into(), w.into()))
        })
        .collect();
    // Rows are in vertex order on each rank, ranks in vertex order: already sorted.
    world.allgatherv(&mine)
}

/// The size of each arc's subgraph: its start vertex and the vertices within
/// `SUBGRAPH_HOPS` out-hops of its end (collective).
pub fn subgraph_sizes(world: &World, g: &ArcGraph, arcs: &[Triple]) -> Result<Vec<u64>> {
    // One mark per own vertex for all the arcs, unmarked through the list of those marked:
    // a fresh vector per arc (16 MB at SCALE 24) cost its page faults and a full count.
    let mut reached = vec![false; g.local_n()];
    arcs.iter()
        .map(|&Triple(start, end, _)| {
            let marked = within_hops(world, g, end, SUBGRAPH_HOPS, &mut reached)?;
            let start_reached = world.query(&[start], |v| g.part.owner(v), |v| {
                reached[g.part.local(v)] as u8
            })?[0];
            let count = world.allreduce(marked.len() as u64, Op::Sum);
            for l in marked {
                reached[l] = false;
            }
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
    reached: &mut [bool],
) -> Result<Vec<usize>> {
    let part = g.part;
    let mut marked = Vec::new();
    let mut frontier: Vec<Vid> = Vec::new();
    if part.is_local(from) {
        reached[part.local(from)] = true;
        marked.push(part.local(from));
        frontier.push(from);
    }
    for _ in 0..hops {
        let next: Vec<Vid> = frontier
            .par_iter()
            .flat_map_iter(|&v| g.out.row(part.local(v)).iter().map(|&w| Vid::from(w)))
            .collect();
        let (send, counts) = bucket_by_rank(world.size(), &next, |&v| part.owner(v));
        let arrived = world.alltoallv(&send, &counts)?;
        frontier.clear();
        for v in arrived {
            let l = part.local(v);
            if !reached[l] {
                reached[l] = true;
                marked.push(l);
                frontier.push(v);
            }
        }
    }
    Ok(marked)
}
