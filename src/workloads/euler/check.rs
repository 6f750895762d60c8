//! Before any work: is the graph Eulerian? Degrees at the vertices' owners (even; for a
//! digraph, out-degree = in-degree) and connectivity of the vertices that have edges (the
//! spanning forest of `forest` over the vertex graph; a balanced, weakly connected digraph
//! is strongly connected). Also `eulerize`, which adds the edges that make any graph
//! Eulerian, and the virtual edge of `--trail`.

use super::forest::spanning_forest;
use crate::comm::ranges::Ranges;
use crate::comm::{Op, Pair, Triple, World};
use crate::error::{Error, Result};
use crate::graph::{Block1D, Edge};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// How many vertices or components a message names.
const NAMED: usize = 3;

/// The own vertices whose degree is odd (digraph: unbalanced), as (vertex, out - in).
fn unbalanced(part: &Block1D, deg: &[i64], directed: bool) -> Vec<Pair> {
    deg.iter()
        .enumerate()
        .filter(|&(_, &d)| if directed { d != 0 } else { d % 2 != 0 })
        .map(|(i, &d)| Pair(part.global(i), d as u64))
        .collect()
}

/// All unbalanced vertices of the graph, in id order, on every rank (collective).
pub fn all_unbalanced(
    world: &World,
    part: &Block1D,
    deg: &[i64],
    directed: bool,
) -> Result<Vec<Pair>> {
    world.allgatherv(&unbalanced(part, deg, directed))
}

/// The degree rule, or the one-line reason it fails (collective). `trail` accepts two odd
/// (unbalanced by one) vertices, returned as (start, end) of the trail.
pub fn degrees_ok(
    world: &World,
    part: &Block1D,
    deg: &[i64],
    directed: bool,
    trail: bool,
) -> Result<Option<(u64, u64)>> {
    let mine = unbalanced(part, deg, directed);
    let count = world.allreduce(mine.len() as u64, Op::Sum);
    if count == 0 {
        return Ok(None);
    }
    if trail && count == 2 {
        let two = world.allgatherv(&mine)?;
        let (a, b) = (two[0], two[1]);
        if !directed {
            return Ok(Some((a.0, b.0)));
        }
        // A directed trail starts where out-degree exceeds in-degree by one.
        match (a.1 as i64, b.1 as i64) {
            (1, -1) => return Ok(Some((a.0, b.0))),
            (-1, 1) => return Ok(Some((b.0, a.0))),
            _ => {}
        }
    }
    if directed {
        // The largest imbalance, the smallest vertex among equals.
        let best = mine
            .iter()
            .map(|p| (p.1 as i64).unsigned_abs())
            .max()
            .unwrap_or(0);
        let at = mine.iter().find(|p| (p.1 as i64).unsigned_abs() == best);
        let local = at.map_or(Triple(0, u64::MAX, 0), |p| {
            Triple(best, u64::MAX - p.0, p.1)
        });
        let all = world.allgather(local);
        let top = all.iter().max_by_key(|t| (t.0, t.1)).expect("one rank");
        return Err(Error::NotEulerian(format!(
            "in-degree != out-degree at {count} vertices (largest {:+} at {})",
            top.2 as i64,
            u64::MAX - top.1
        )));
    }
    let firsts: Vec<u64> = mine.iter().take(NAMED).map(|p| p.0).collect();
    let smallest = world.allgatherv(&firsts)?;
    Err(Error::NotEulerian(format!(
        "{count} of {} vertices have odd degree (smallest: {}); a trail needs 0 or 2",
        part.n,
        list(&smallest[..smallest.len().min(NAMED)])
    )))
}

/// Components of the vertex graph (collective): each own vertex's root (its component's
/// smallest vertex), from the links Triple(u, v, edge id).
pub fn components(world: &World, vertices: &Ranges, links: &[Triple]) -> Result<Vec<u64>> {
    Ok(spanning_forest(world, vertices, links)?.root)
}

/// The connectivity rule, or the one-line reason it fails (collective): the components
/// holding edges, their edge counts and smallest vertices.
pub fn connected_ok(world: &World, vertices: &Ranges, links: &[Triple]) -> Result<()> {
    let root = components(world, vertices, links)?;
    let ends: Vec<u64> = links.iter().map(|t| t.0).collect();
    let roots = world.query(&ends, |v| vertices.owner(v), |v| root[vertices.local(v)])?;
    let mut counts: BTreeMap<u64, u64> = BTreeMap::new();
    for r in roots {
        *counts.entry(r).or_default() += 1;
    }
    let counts: Vec<Pair> = counts.into_iter().map(|(r, c)| Pair(r, c)).collect();
    let counts = world.route(&counts, |p| vertices.owner(p.0))?;
    let mut sizes: BTreeMap<u64, u64> = BTreeMap::new();
    for p in counts {
        *sizes.entry(p.0).or_default() += p.1;
    }
    let total = world.allreduce(sizes.len() as u64, Op::Sum);
    if total <= 1 {
        return Ok(());
    }
    let firsts: Vec<Pair> = sizes
        .into_iter()
        .take(NAMED)
        .map(|(r, c)| Pair(r, c))
        .collect();
    let named = world.allgatherv(&firsts)?;
    let named = &named[..named.len().min(NAMED)];
    Err(Error::NotEulerian(format!(
        "edges lie in {total} components (edges: {}; smallest vertex: {})",
        list(&named.iter().map(|p| p.1).collect::<Vec<_>>()),
        list(&named.iter().map(|p| p.0).collect::<Vec<_>>())
    )))
}

fn list(xs: &[u64]) -> String {
    xs.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

/// The edges `eulerize` adds (the same list on every rank; collective): the odd vertices
/// paired in id order, then a cycle through the smallest vertices of the components that
/// hold edges (two parallel edges for two components).
pub fn eulerize(
    world: &World,
    part: &Block1D,
    vertices: &Ranges,
    deg: &[i64],
    links: &[Triple],
) -> Result<Vec<Edge>> {
    let odd = all_unbalanced(world, part, deg, false)?;
    let mut added: Vec<Edge> = odd.chunks(2).map(|p| (p[0].0, p[1].0)).collect();
    // Links of the pairs, spread over the ranks, their ids after the graph's.
    let share = crate::graph::block_range(added.len() as u64, world.size(), world.rank());
    let mut all_links = links.to_vec();
    all_links.extend(share.map(|i| Triple(added[i as usize].0, added[i as usize].1, u64::MAX - i)));
    let root = components(world, vertices, &all_links)?;
    let has_edges: Vec<bool> = deg_positive(world, vertices, &all_links)?;
    let roots: Vec<u64> = (0..root.len())
        .filter(|&i| has_edges[i] && root[i] == vertices.first() + i as u64)
        .map(|i| root[i])
        .collect();
    let roots = world.allgatherv(&roots)?;
    if roots.len() > 1 {
        added.extend((0..roots.len()).map(|i| (roots[i], roots[(i + 1) % roots.len()])));
    }
    Ok(added)
}

/// For each own vertex: true when an edge ends there (collective).
fn deg_positive(world: &World, vertices: &Ranges, links: &[Triple]) -> Result<Vec<bool>> {
    let ends: Vec<u64> = links.par_iter().flat_map_iter(|t| [t.0, t.1]).collect();
    let ends = world.route(&ends, |&v| vertices.owner(v))?;
    let mut has = vec![false; vertices.local_len()];
    for v in ends {
        has[vertices.local(v)] = true;
    }
    Ok(has)
}
