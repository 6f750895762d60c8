//! Phases 3 and 4: a spanning tree of the trail–vertex graph, and the splice that joins the
//! trails along it.
//!
//! A pair (two partnered slots at a vertex) is named by its smaller global slot. At vertex
//! x, each trail through x has a *link*: its smallest pair there. With t_1 the smallest
//! trail label at x, x offers the trail graph the links (t_1, t_i) for its other trails t_i,
//! named by t_i's link. A spanning forest of that trail graph (`forest`) becomes a spanning
//! tree of the bipartite trail–vertex graph by joining x to t_1 and to every t_i whose link
//! the forest chose (a star t_1 — t_i is the path t_1 — x — t_i). Splicing then re-pairs, at
//! every vertex at once, the joined trails' links (a_i, b_i), in label order, as
//! (a_i, b_(i+1)) cyclically; along a tree this leaves one closed trail.

use super::darts::Darts;
use super::forest::spanning_forest;
use crate::comm::ranges::Ranges;
use crate::comm::{Triple, World};
use crate::error::Result;
use rayon::prelude::*;

/// The links of the trails at own vertex i: (trail label, link's local slot), by label.
fn trail_links(darts: &Darts, label: &[u64], i: usize) -> Vec<(u64, usize)> {
    let mut pairs: Vec<(u64, usize)> = darts
        .at_vertex(i)
        .filter(|&s| s < darts.partner[s])
        .map(|s| (label[s], s))
        .collect();
    pairs.sort_unstable();
    pairs.dedup_by_key(|p| p.0);
    pairs
}

/// Phase 3 (collective): for each local slot, true when it names a pair that the tree
/// joins to its vertex (t_1's link at every vertex, and the links the forest chose).
/// `trails` is the layout of the trail labels (edge ids). Returns it with the forest's rounds
/// and the links it chose on all ranks.
pub fn spanning_tree(
    world: &World,
    darts: &Darts,
    label: &[u64],
    trails: &Ranges,
) -> Result<(Vec<bool>, usize, u64)> {
    let first = darts.slots.first();
    let offers: Vec<Triple> = (0..darts.vertices())
        .into_par_iter()
        .flat_map_iter(|i| {
            let links = trail_links(darts, label, i);
            let t1 = links.first().map_or(0, |l| l.0);
            links
                .into_iter()
                .skip(1)
                .map(move |(t, s)| Triple(t1, t, first + s as u64))
        })
        .collect();
    join(world, &darts.slots, &offers, trails)
}

/// The spanning forest of the trail graph from every vertex's offers Triple(t_1, t_i, global
/// slot of t_i's link), made on either device (collective): for each local slot, true when
/// the forest chose the link it names; with the forest's rounds and the links chosen on all
/// ranks (the trails form one tree, the graph is connected, when that is the trails less one).
pub fn join(
    world: &World,
    slots: &Ranges,
    offers: &[Triple],
    trails: &Ranges,
) -> Result<(Vec<bool>, usize, u64)> {
    let forest = spanning_forest(world, trails, offers)?;
    let links = world.allreduce(forest.chosen.len() as u64, crate::comm::Op::Sum);
    let chosen = world.route(&forest.chosen, |&s| slots.owner(s))?;
    let mut joined = vec![false; slots.local_len()];
    for s in chosen {
        joined[slots.local(s)] = true;
    }
    Ok((joined, forest.rounds, links))
}

/// Phase 4: re-pair the joined links at every own vertex (local; no communication).
pub fn splice(darts: &mut Darts, label: &[u64], joined: &[bool]) {
    let plans: Vec<Vec<(usize, usize)>> = (0..darts.vertices())
        .into_par_iter()
        .map(|i| {
            let links = trail_links(darts, label, i);
            // (a, b) of each joined link; for a digraph a is the head slot, so every new
            // pair is again a head with a tail.
            let ends: Vec<(usize, usize)> = links
                .iter()
                .enumerate()
                .filter(|&(j, &(_, s))| j == 0 || joined[s])
                .map(|(_, &(_, s))| {
                    let p = darts.partner[s];
                    if darts.directed && darts.dart[s].is_multiple_of(2) {
                        (p, s)
                    } else {
                        (s, p)
                    }
                })
                .collect();
            let k = ends.len();
            if k < 2 {
                return Vec::new();
            }
            (0..k).map(|j| (ends[j].0, ends[(j + 1) % k].1)).collect()
        })
        .collect();
    for (a, b) in plans.into_iter().flatten() {
        darts.partner[a] = b;
        darts.partner[b] = a;
    }
}
