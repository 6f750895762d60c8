//! Jones–Plassmann colouring of the free nodes: in each round, every uncoloured node whose
//! priority beats all its uncoloured neighbours takes the smallest colour its coloured
//! neighbours lack. Priorities are hash(seed, global id), so the classes do not depend on
//! the rank count (the result equals greedy colouring in priority order).

use super::adjacency::Csr;
use super::patch::{Exchange, Patch};
use crate::rng::{draw, stream_key};
use rayon::prelude::*;

/// Stream tag of the colouring priorities.
const PRIORITY_STREAM: u64 = 0x006d_6573_6801;

pub const UNCOLOURED: u32 = u32::MAX;

/// A colour per node of `graph` (u32::MAX for nodes not in `take`).
pub fn jones_plassmann(graph: &Csr, take: &[bool], seed: u64) -> Vec<u32> {
    let key = stream_key(seed, PRIORITY_STREAM);
    let priority = |i: usize| (draw(key, i as u64), i);
    let mut colour = vec![UNCOLOURED; graph.rows()];
    let mut left: Vec<usize> = (0..graph.rows()).filter(|&i| take[i]).collect();
    while !left.is_empty() {
        let chosen: Vec<(usize, u32)> = left
            .par_iter()
            .filter(|&&i| {
                graph.row(i).iter().all(|&j| {
                    let j = j as usize;
                    !take[j] || colour[j] != UNCOLOURED || priority(j) < priority(i)
                })
            })
            .map(|&i| (i, smallest_free(graph, &colour, i)))
            .collect();
        for &(i, c) in &chosen {
            colour[i] = c;
        }
        left.retain(|&i| colour[i] == UNCOLOURED);
    }
    colour
}

/// `jones_plassmann` of the free nodes of the whole mesh, on the ranks' patches: each rank
/// colours its owned nodes (their graph rows are complete in the patch) and refreshes its
/// ghosts' colours after every round. The colour of a node is the smallest one its
/// higher-priority neighbours lack, whoever computes it, so the colours are the serial ones.
/// Returns a colour per local node (ghosts included).
pub fn of_patch(patch: &Patch, ex: &dyn Exchange, seed: u64) -> Vec<u32> {
    let key = stream_key(seed, PRIORITY_STREAM);
    let graph = &patch.graph;
    let take = |i: usize| !patch.mesh.fixed[i];
    let priority = |i: usize| (draw(key, patch.global[i]), patch.global[i]);
    let mut colour = vec![UNCOLOURED; graph.rows()];
    let mut left: Vec<usize> = (0..graph.rows())
        .filter(|&i| patch.owned[i] && take(i))
        .collect();
    loop {
        ex.ghost_labels(&mut colour);
        if !ex.any(!left.is_empty()) {
            return colour;
        }
        let chosen: Vec<(usize, u32)> = left
            .par_iter()
            .filter(|&&i| {
                graph.row(i).iter().all(|&j| {
                    let j = j as usize;
                    !take(j) || colour[j] != UNCOLOURED || priority(j) < priority(i)
                })
            })
            .map(|&i| (i, smallest_free(graph, &colour, i)))
            .collect();
        for &(i, c) in &chosen {
            colour[i] = c;
        }
        left.retain(|&i| colour[i] == UNCOLOURED);
    }
}

fn smallest_free(graph: &Csr, colour: &[u32], i: usize) -> u32 {
    let mut used: Vec<u32> = graph
        .row(i)
        .iter()
        .map(|&j| colour[j as usize])
        .filter(|&c| c != UNCOLOURED)
        .collect();
    used.sort_unstable();
    used.dedup();
    used.iter()
        .enumerate()
        .find(|&(k, &c)| c != k as u32)
        .map_or(used.len() as u32, |(k, _)| k as u32)
}
