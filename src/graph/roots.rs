//! Graph500 search keys (spec step 3): distinct vertices with at least one edge other than a
//! self-loop, drawn with a seeded counter-based generator so every rank count picks the same.

use crate::comm::{Op, World};
use crate::error::Result;
use crate::graph::{Block1D, DistGraph, Vid};
use crate::rng::{draw, stream_key};

/// Candidates examined per collective round while sampling.
const BATCH: usize = 256;

/// Up to `count` roots. When the graph has no more than `count` eligible vertices, all of them
/// are returned (in a seeded random order); the caller reports the shortfall. When eligible
/// vertices are too rare for sampling to find them quickly, they are listed and shuffled.
pub fn pick_roots(world: &World, g: &DistGraph, seed: u64, count: usize) -> Result<Vec<Vid>> {
    pick_vertices(world, &g.part, &|l| g.degree(l) > 0, seed, count)
}

/// Up to `count` distinct vertices that `has_edges` (of a local index) accepts, drawn as
/// `pick_roots` draws roots: the same for every rank count.
pub fn pick_vertices(
    world: &World,
    part: &Block1D,
    has_edges: &dyn Fn(usize) -> bool,
    seed: u64,
    count: usize,
) -> Result<Vec<Vid>> {
    let eligible = |v: Vid| part.is_local(v) && has_edges(part.local(v));
    let local_eligible = (0..part.local_n()).filter(|&l| has_edges(l)).count() as u64;
    let total = world.allreduce(local_eligible, Op::Sum);
    let key = stream_key(seed, 3);
    if total <= count as u64 || total.saturating_mul(4096) < part.n {
        let mine: Vec<u64> = (0..part.local_n())
            .filter(|&l| has_edges(l))
            .map(|l| part.global(l))
            .collect();
        let mut all = world.allgatherv(&mine)?;
        all.sort_by_key(|&v| draw(key, v));
        all.truncate(count);
        return Ok(all);
    }
    // Rejection sampling: draw candidates in batches; the owner says which are eligible.
    let mut roots: Vec<Vid> = Vec::with_capacity(count);
    let mut next = 0u64;
    while roots.len() < count {
        let candidates: Vec<Vid> = (next..next + BATCH as u64)
            .map(|i| draw(key, i) % part.n)
            .collect();
        next += BATCH as u64;
        let mut flags: Vec<u8> = candidates.iter().map(|&v| eligible(v) as u8).collect();
        world.allreduce_slice(&mut flags, Op::Max);
        for (&v, &ok) in candidates.iter().zip(&flags) {
            if ok == 1 && roots.len() < count && !roots.contains(&v) {
                roots.push(v);
            }
        }
    }
    Ok(roots)
}
