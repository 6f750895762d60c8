//! Graph500 validation of a BFS parent array (spec step 5), distributed over the 1D partition.
//!
//! Rules are checked in the order `Rule` lists them; after each phase the ranks agree on the
//! lowest-numbered vertex that broke it, so every rank reports the same failure. Levels are
//! derived by following parents towards the root, one round per tree level, so a tree edge
//! joins levels that differ by exactly one by construction; what can break that is a cycle or
//! a chain into an unreached vertex, which the `TreeLevels` rule rejects. Input edges are the
//! CSR's (the input without self-loops and duplicates, which cannot break any rule).

use crate::comm::{Op, World};
use crate::error::{Error, Result, Rule};
use crate::graph::{DistGraph, Vid};
use rayon::prelude::*;
use std::sync::atomic::{AtomicI32, Ordering::Relaxed};

/// Adjacency entries checked per rank per round of the edge-level phase (bounds memory).
const EDGE_BATCH: u64 = 1 << 24;

/// A rule broken at `vertex`; `a` and `b` carry rule-specific values for the message.
#[derive(Clone, Copy, Debug)]
pub(super) struct Failure {
    pub vertex: u64,
    pub a: i64,
    pub b: i64,
}

/// How the edge-level check learns the levels of other ranks' vertices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemoteLevels {
    /// Every rank gathers all N levels once: one collective, 4 bytes per vertex on each rank.
    Gather,
    /// Each rank asks the owners for the far ends of its edges, in batches: memory bounded by
    /// the batch, but the keys and answers of every cut edge cross the network.
    Query,
}

impl RemoteLevels {
    /// Gather while all N levels take at most half the smallest rank's CSR (so a rank's
    /// memory grows by at most half), else query. The same on every rank (collective).
    pub fn choose(world: &World, g: &DistGraph) -> Self {
        let fits = 4 * g.n() <= g.csr_bytes() / 2;
        if world.allreduce(u64::from(fits), Op::Min) == 1 {
            RemoteLevels::Gather
        } else {
            RemoteLevels::Query
        }
    }
}

/// Check every rule; on success return the BFS level of each local vertex (-1: unreached).
pub fn validate(world: &World, g: &DistGraph, root: Vid, parent: &[i64]) -> Result<Vec<i32>> {
    validate_with(world, g, root, parent, RemoteLevels::choose(world, g))
}

/// `validate`, with the far ends' levels fetched as `remote` says.
pub fn validate_with(
    world: &World,
    g: &DistGraph,
    root: Vid,
    parent: &[i64],
    remote: RemoteLevels,
) -> Result<Vec<i32>> {
    let part = g.part;
    let n = g.n() as i64;
    let root_local = part.is_local(root).then(|| part.local(root));
    let scan = |bad: &(dyn Fn(usize, i64) -> bool + Sync)| {
        lowest_par(parent.par_iter().enumerate().filter_map(|(l, &p)| {
            bad(l, p).then_some(Failure {
                vertex: part.global(l),
                a: p,
                b: 0,
            })
        }))
    };
    let check = |rule, failure| agree(world, root, n, rule, failure);

    check(Rule::ParentRange, scan(&|_, p| p < -1 || p >= n))?;
    check(
        Rule::RootSelfParent,
        scan(&|l, p| Some(l) == root_local && p != root as i64),
    )?;
    check(
        Rule::OtherSelfParent,
        scan(&|l, p| Some(l) != root_local && p == part.global(l) as i64),
    )?;
    let levels = tree_levels(world, g, root, parent)?;
    check(
        Rule::ParentIsEdge,
        scan(&|l, p| {
            Some(l) != root_local && p >= 0 && g.row(l).binary_search(&(p as u64)).is_err()
        }),
    )?;
    let found = match remote {
        RemoteLevels::Gather => edge_levels_gathered(world, g, &levels)?,
        RemoteLevels::Query => edge_levels_queried(world, g, &levels)?,
    };
    agree(world, root, g.n() as i64, Rule::EdgeLevelGap, found.gap)?;
    agree(world, root, g.n() as i64, Rule::Spanning, found.span)?;
    Ok(levels)
}

/// Levels of the local vertices, found by following parents: a vertex gets its parent's level
/// plus one once the parent's level is known. One round per tree level; a round in which no
/// rank resolves anything while vertices remain means a cycle or a chain that never reaches
/// the root. Also used to report depths when validation is off.
pub fn tree_levels(world: &World, g: &DistGraph, root: Vid, parent: &[i64]) -> Result<Vec<i32>> {
    let part = g.part;
    let levels: Vec<AtomicI32> = (0..part.local_n())
        .into_par_iter()
        .map(|_| AtomicI32::new(-1))
        .collect();
    let root_local = part.is_local(root).then(|| part.local(root));
    if let Some(l) = root_local {
        levels[l].store(0, Relaxed);
    }
    let mut pending: Vec<u32> = (0..part.local_n() as u32)
        .into_par_iter()
        .filter(|&l| parent[l as usize] >= 0 && Some(l as usize) != root_local)
        .collect();
    loop {
        if world.allreduce(pending.len() as u64, Op::Sum) == 0 {
            return Ok(levels.into_iter().map(AtomicI32::into_inner).collect());
        }
        let keys: Vec<u64> = pending
            .par_iter()
            .map(|&l| parent[l as usize] as u64)
            .collect();
        let parent_levels = world.query(
            &keys,
            |k| part.owner(k),
            |k| levels[part.local(k)].load(Relaxed),
        )?;
        // Levels set in this round are read in the next one only (the query above has
        // already read this round's), so the result does not depend on thread timing.
        let before = pending.len();
        pending = pending
            .par_iter()
            .zip(&parent_levels)
            .filter_map(|(&l, &pl)| {
                if pl >= 0 {
                    levels[l as usize].store(pl + 1, Relaxed);
                    None
                } else {
                    Some(l)
                }
            })
            .collect();
        let stuck = pending.len() == before;
        if world.allreduce(u64::from(!stuck), Op::Max) == 0 {
            let failure = lowest(pending.iter().map(|&l| Failure {
                vertex: part.global(l as usize),
                a: parent[l as usize],
                b: 0,
            }));
            agree(world, root, g.n() as i64, Rule::TreeLevels, failure)?;
        }
    }
}

/// Every CSR edge (v, w) with w > v: levels must differ by at most one, and both ends must be
/// reached or both unreached. With every level gathered, each rank checks its rows alone.
fn edge_levels_gathered(world: &World, g: &DistGraph, levels: &[i32]) -> Result<EdgeFailures> {
    // The ranks' blocks in rank order: index = global id.
    let all = world.allgatherv(levels)?;
    Ok((0..g.local_n())
        .into_par_iter()
        .fold(EdgeFailures::default, |mut found, l| {
            let v = g.part.global(l);
            for &w in g.row(l).iter().filter(|&&w| w > v) {
                found.check(v, levels[l], w, all[w as usize]);
            }
            found
        })
        .reduce(EdgeFailures::default, EdgeFailures::merge))
}

/// The same check in batches of rows: edges whose far end is local are checked on the spot;
/// the far ends' levels of the others are fetched from their owners.
fn edge_levels_queried(world: &World, g: &DistGraph, levels: &[i32]) -> Result<EdgeFailures> {
    let part = g.part;
    let batches = row_batches(g);
    let rounds = world.allreduce(batches.len() as u64, Op::Max) as usize;
    let mut found = EdgeFailures::default();
    for round in 0..rounds {
        let rows = batches.get(round).cloned().unwrap_or(0..0);
        let (local_found, remote) = rows
            .into_par_iter()
            .fold(
                || (EdgeFailures::default(), Vec::new()),
                |(mut found, mut remote), l| {
                    let v = part.global(l);
                    for &w in g.row(l).iter().filter(|&&w| w > v) {
                        if part.is_local(w) {
                            found.check(v, levels[l], w, levels[part.local(w)]);
                        } else {
                            remote.push((l as u32, w));
                        }
                    }
                    (found, remote)
                },
            )
            .reduce(
                || (EdgeFailures::default(), Vec::new()),
                |(a, mut ra), (b, rb)| {
                    ra.extend_from_slice(&rb);
                    (a.merge(b), ra)
                },
            );
        found = found.merge(local_found);
        let keys: Vec<u64> = remote.iter().map(|&(_, w)| w).collect();
        let far = world.query(&keys, |k| part.owner(k), |k| levels[part.local(k)])?;
        for (&(l, w), &lw) in remote.iter().zip(&far) {
            found.check(part.global(l as usize), levels[l as usize], w, lw);
        }
    }
    Ok(found)
}

/// The lowest-numbered edge failures seen so far, per rule.
#[derive(Default)]
pub(super) struct EdgeFailures {
    pub gap: Option<Failure>,
    pub span: Option<Failure>,
}

impl EdgeFailures {
    pub fn check(&mut self, v: Vid, lv: i32, w: Vid, lw: i32) {
        let failure = Some(Failure {
            vertex: v,
            a: w as i64,
            b: ((lv as i64) << 32) | (lw as u32 as i64),
        });
        if (lv < 0) != (lw < 0) {
            self.span = lowest(self.span.into_iter().chain(failure));
        } else if (lv - lw).abs() > 1 {
            self.gap = lowest(self.gap.into_iter().chain(failure));
        }
    }

    pub fn merge(self, other: EdgeFailures) -> EdgeFailures {
        EdgeFailures {
            gap: lowest(self.gap.into_iter().chain(other.gap)),
            span: lowest(self.span.into_iter().chain(other.span)),
        }
    }
}

/// Consecutive row ranges of about `EDGE_BATCH` adjacency entries each.
fn row_batches(g: &DistGraph) -> Vec<std::ops::Range<usize>> {
    let mut batches = Vec::new();
    let mut start = 0;
    for l in 0..g.local_n() {
        if g.offsets[l + 1] - g.offsets[start] >= EDGE_BATCH {
            batches.push(start..l + 1);
            start = l + 1;
        }
    }
    if start < g.local_n() {
        batches.push(start..g.local_n());
    }
    batches
}

pub(super) fn lowest(failures: impl IntoIterator<Item = Failure>) -> Option<Failure> {
    failures.into_iter().min_by_key(|f| f.vertex)
}

pub(super) fn lowest_par(failures: impl ParallelIterator<Item = Failure>) -> Option<Failure> {
    failures.min_by_key(|f| f.vertex)
}

/// Collective: if any rank has a failure for `rule`, every rank returns the same error, for the
/// lowest failing vertex.
fn agree(world: &World, root: Vid, n: i64, rule: Rule, failure: Option<Failure>) -> Result<()> {
    agree_with(world, root, rule, failure, &|vertex, a, b| {
        detail(n, rule, vertex, a, b)
    })
}

/// `agree`, the message's detail made by `detail(vertex, a, b)`.
pub(super) fn agree_with(
    world: &World,
    root: Vid,
    rule: Rule,
    failure: Option<Failure>,
    detail: &dyn Fn(u64, i64, i64) -> String,
) -> Result<()> {
    let mine = failure.map_or([u64::MAX, 0, 0], |f| [f.vertex, f.a as u64, f.b as u64]);
    let all = world.allgatherv(&mine)?;
    let worst = all.chunks(3).min_by_key(|c| c[0]).unwrap();
    if worst[0] == u64::MAX {
        return Ok(());
    }
    let vertex = worst[0];
    Err(Error::Validation {
        root,
        rule,
        vertex,
        detail: detail(vertex, worst[1] as i64, worst[2] as i64),
    })
}

/// What the message says of `rule` broken at `vertex` (`a`, `b`: the failure's values; `n`
/// vertices).
pub(super) fn detail(n: i64, rule: Rule, vertex: u64, a: i64, b: i64) -> String {
    match rule {
        Rule::ParentRange => format!("parent is {a}, outside [-1, {n})"),
        Rule::RootSelfParent => format!("the root's parent is {a}"),
        Rule::OtherSelfParent => "a vertex other than the root is its own parent".to_string(),
        Rule::TreeLevels => format!(
            "following parents from here (parent {a}) never reaches the root: a cycle, or a chain into an unreached vertex"
        ),
        Rule::ParentIsEdge => format!("({vertex}, {a}) is not an edge of the input"),
        Rule::EdgeLevelGap | Rule::Spanning => format!(
            "edge ({vertex}, {a}) joins levels {} and {} (-1: unreached)",
            b >> 32,
            b as i32
        ),
    }
}
