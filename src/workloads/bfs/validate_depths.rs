//! Graph500 validation with one exchange per root: the search's depths are a witness, and the
//! rules become local checks once every rank knows the depths of the far ends of its edges
//! and of its vertices' parents (one all-gather). The checks, per own vertex v with parent p
//! and depth d (D: every vertex's depth):
//! - p in [-1, N); the root is its own parent at depth 0; no other vertex is its own parent;
//! - tree levels: p = -1 exactly where d = -1, and otherwise d >= 1 and D(p) = d - 1;
//! - (v, p) is an input edge;
//! - every input edge (v, w): |d - D(w)| <= 1, and both reached or both unreached.
//!
//! Why that is the whole of the rules: depths fall by one along every parent chain, so each
//! chain ends, at a vertex of depth 0, which can only be the root (no cycle); the edge rule
//! then makes d the BFS distance, and the reached set closed under edges is the root's
//! component. A witness that does not come from the search of these parents can only make
//! a valid tree fail, never an invalid one pass; the search's own depths are its tree's
//! levels, so on valid parents this check and the host's (`validate`) agree, and on invalid
//! ones both fail. The GPU runs the same checks as one kernel (`validate_gpu`); this is its
//! CPU twin, the CPU's default, and the GPU's explanation of a failure it found.

use super::search::Frontiers;
use super::validate::{agree_with, detail, lowest, Failure, EdgeFailures};
use crate::comm::{Op, World};
use crate::error::{Error, Result, Rule};
use crate::graph::{DistGraph, Vid};
use rayon::prelude::*;

/// The rules in the order they are reported (the kernel's failure slots).
pub const RULES: [Rule; 7] = [
    Rule::ParentRange,
    Rule::RootSelfParent,
    Rule::OtherSelfParent,
    Rule::TreeLevels,
    Rule::ParentIsEdge,
    Rule::EdgeLevelGap,
    Rule::Spanning,
];

/// The lowest failure of each rule of `RULES` on one rank.
#[derive(Default)]
struct Found([Option<Failure>; 7]);

impl Found {
    fn put(&mut self, rule: usize, vertex: Vid, a: i64, b: i64) {
        let f = Failure { vertex, a, b };
        self.0[rule] = lowest(self.0[rule].into_iter().chain([f]));
    }

    fn merge(mut self, other: Found) -> Found {
        for (mine, theirs) in self.0.iter_mut().zip(other.0) {
            *mine = lowest(mine.iter().copied().chain(theirs));
        }
        self
    }
}

/// Depths `d` and `dp` in one value for the message (as `EdgeFailures` packs levels).
fn pack(d: i32, dp: i32) -> i64 {
    (i64::from(d) << 32) | i64::from(dp as u32)
}

/// Check every rule of the search from `root` on the host: `parent` and `depth` the own
/// vertices'. Collective; the same error on every rank where a rule is broken.
pub fn validate_depths(
    world: &World,
    g: &DistGraph,
    root: Vid,
    parent: &[i64],
    depth: &[i32],
) -> Result<()> {
    // The one exchange: the ranks' blocks in rank order, index = global id.
    let all = world.allgatherv(depth)?;
    let found = (0..g.local_n())
        .into_par_iter()
        .fold(Found::default, |found, l| {
            check_vertex(g, root, l, (parent[l], depth[l]), &all, found)
        })
        .reduce(Found::default, Found::merge);
    agree_all(world, g.n() as i64, root, found)
}

/// The rules at own vertex `l` with parent `p` and depth `d`, its edges (v, w > v) included.
fn check_vertex(
    g: &DistGraph,
    root: Vid,
    l: usize,
    (p, d): (i64, i32),
    all: &[i32],
    mut found: Found,
) -> Found {
    let v = g.part.global(l);
    if p < -1 || p >= g.n() as i64 {
        found.put(0, v, p, 0);
    } else if v == root {
        if p != root as i64 {
            found.put(1, v, p, 0);
        }
        if d != 0 {
            found.put(3, v, p, pack(d, d));
        }
    } else {
        if p == v as i64 {
            found.put(2, v, p, 0);
        }
        if p < 0 && d >= 0 {
            found.put(3, v, p, pack(d, -1));
        }
        if p >= 0 {
            let dp = all[p as usize];
            if d < 1 || dp != d - 1 {
                found.put(3, v, p, pack(d, dp));
            }
            if g.row(l).binary_search(&(p as u64)).is_err() {
                found.put(4, v, p, 0);
            }
        }
    }
    let mut edges = EdgeFailures::default();
    for &w in g.row(l).iter().filter(|&&w| w > v) {
        edges.check(v, d, w, all[w as usize]);
    }
    let edge_rules = [(5, edges.gap), (6, edges.span)];
    for (rule, f) in edge_rules.into_iter().filter_map(|(r, f)| Some((r, f?))) {
        found.put(rule, f.vertex, f.a, f.b);
    }
    found
}

/// Collective: Ok where no rank found a failure; else every rank returns the error of the
/// first rule (in `RULES` order) broken anywhere, at its lowest vertex.
fn agree_all(world: &World, n: i64, root: Vid, found: Found) -> Result<()> {
    let any = found.0.iter().any(Option::is_some);
    if world.allreduce(u64::from(any), Op::Max) == 0 {
        return Ok(());
    }
    for (rule, failure) in RULES.into_iter().zip(found.0) {
        agree_with(world, root, rule, failure, &|vertex, a, b| match rule {
            Rule::TreeLevels => format!(
                "parent {a} is at depth {}, the vertex at depth {} (-1: not reached): a parent is one level above its child, and only the root is at depth 0",
                b as i32,
                b >> 32
            ),
            _ => detail(n, rule, vertex, a, b),
        })?;
    }
    unreachable!("a rank found a failure, so one rule's agreement failed")
}

/// What the device validator found on this rank: per rule of `RULES` the lowest vertex that
/// breaks it (u64::MAX: none), and the input tuple ends of the reached own vertices.
pub struct DeviceVerdict {
    pub failures: [u64; 7],
    pub tuple_ends: u64,
}

/// Validate the search from `root` where it ran, and return its nedge (collective): on a
/// GPU by `Frontiers::check_on_device` (the parents stay there; they come to `parent` only
/// to explain a failure), on the CPU by `validate_depths`.
pub fn validate_where_searched(
    world: &World,
    g: &DistGraph,
    root: Vid,
    frontiers: &mut (dyn Frontiers + '_),
    parent: &mut [i64],
) -> Result<u64> {
    let Some(verdict) = frontiers.check_on_device(g, root)? else {
        host_check(world, g, root, frontiers, parent)?;
        return Ok(super::component_edges(world, g, parent));
    };
    let broken = verdict.failures.iter().any(|&v| v != u64::MAX);
    if world.allreduce(u64::from(broken), Op::Max) == 1 {
        return Err(explain(world, g, root, frontiers, parent, verdict));
    }
    Ok(world.allreduce(verdict.tuple_ends, Op::Sum) / 2)
}

/// `validate_depths` on the parents and depths fetched from `frontiers` into host memory.
fn host_check(
    world: &World,
    g: &DistGraph,
    root: Vid,
    frontiers: &mut (dyn Frontiers + '_),
    parent: &mut [i64],
) -> Result<()> {
    let mut depth = vec![-1; g.local_n()];
    frontiers.parents(parent)?;
    frontiers.depths(&mut depth)?;
    validate_depths(world, g, root, parent, &depth)
}

/// The error for a failure the device found: the host's check of the same parents and
/// depths, which must name the same rule and vertex (else an error saying they disagree).
fn explain(
    world: &World,
    g: &DistGraph,
    root: Vid,
    frontiers: &mut (dyn Frontiers + '_),
    parent: &mut [i64],
    verdict: DeviceVerdict,
) -> Error {
    let mut first = verdict.failures;
    world.allreduce_slice(&mut first, Op::Min);
    let device = RULES
        .into_iter()
        .zip(first)
        .find(|&(_, v)| v != u64::MAX);
    match host_check(world, g, root, frontiers, parent) {
        Err(e @ Error::Validation { rule, vertex, .. }) if device == Some((rule, vertex)) => e,
        other => Error::Gpu(format!(
            "root {root}: the device validator found {device:?} broken (rule, vertex), the same check on the host found {}",
            match other {
                Ok(()) => "nothing".to_string(),
                Err(e) => e.to_string(),
            }
        )),
    }
}
