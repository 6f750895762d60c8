//! A debug aid (not a deck key): with `TESSERA_BFS_CORRUPT=<kind>` in the environment, the
//! first search's parent array is broken on purpose where it lies (GPU or host), after the
//! search and before its validation, so a run shows that its validator rejects it
//! (scripts/gpu-check-bfs.sh, tests/cli/bfs_validate.rs). For the lowest vertex v (over all
//! ranks) where the kind applies, v being reached and not the root:
//! - `cycle`: v's parent p (not the root) gets v as its parent, a cycle of two;
//! - `depth`: v's parent becomes a neighbour w (owned by v's rank) that is reached but not
//!   one level above v: a wrong depth;
//! - `edge`: v's parent becomes the root, which is not a neighbour of v;
//! - `unreached`: v loses its parent, leaving a vertex of the component unreached.

use super::search::Frontiers;
use crate::comm::World;
use crate::error::{config_error, Error, Result};
use crate::graph::{DistGraph, Vid};

pub const VARIABLE: &str = "TESSERA_BFS_CORRUPT";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corruption {
    Cycle,
    Depth,
    Edge,
    Unreached,
}

/// The corruption the environment asks for, if any; a value that names none is an error.
pub fn from_env() -> Result<Option<Corruption>> {
    let Ok(value) = std::env::var(VARIABLE) else {
        return Ok(None);
    };
    Ok(Some(match value.as_str() {
        "cycle" => Corruption::Cycle,
        "depth" => Corruption::Depth,
        "edge" => Corruption::Edge,
        "unreached" => Corruption::Unreached,
        other => {
            return Err(config_error(
                VARIABLE,
                &format!("{other:?} is not a corruption: expected cycle, depth, edge or unreached"),
            ))
        }
    }))
}

/// Break the parents of the search from `root` in `frontiers` as `kind` says. Collective.
pub fn apply(
    world: &World,
    g: &DistGraph,
    root: Vid,
    frontiers: &mut (dyn Frontiers + '_),
    kind: Corruption,
) -> Result<()> {
    let mut parent = vec![-1; g.local_n()];
    let mut depth = vec![-1; g.local_n()];
    frontiers.parents(&mut parent)?;
    frontiers.depths(&mut depth)?;
    let mine = (0..g.local_n())
        .find_map(|l| write_for(kind, g, root, l, &parent, &depth))
        .map_or([u64::MAX, 0, 0], |(v, target, p)| [v, target, p as u64]);
    let all = world.allgatherv(&mine)?;
    let chosen = all.chunks(3).min_by_key(|c| c[0]).expect("one rank at least");
    if chosen[0] == u64::MAX {
        return Err(Error::Unavailable(format!(
            "{VARIABLE}={kind:?}: no vertex of the search from root {root} can be corrupted that way"
        )));
    }
    let (target, p) = (chosen[1], chosen[2] as i64);
    if world.is_root() {
        log::warn!(
            "{VARIABLE}={kind:?}: the parent of vertex {target} set to {p} on purpose (debug); validation must fail"
        );
    }
    if g.part.is_local(target) {
        frontiers.set_parent(g.part.local(target), p)?;
    }
    Ok(())
}

/// The write (v, target vertex, new parent) that `kind` makes at own vertex `l`, if it applies.
fn write_for(
    kind: Corruption,
    g: &DistGraph,
    root: Vid,
    l: usize,
    parent: &[i64],
    depth: &[i32],
) -> Option<(Vid, Vid, i64)> {
    let (v, p, d) = (g.part.global(l), parent[l], depth[l]);
    if v == root || p < 0 {
        return None;
    }
    match kind {
        Corruption::Cycle => (p as u64 != root).then_some((v, p as u64, v as i64)),
        Corruption::Unreached => Some((v, v, -1)),
        Corruption::Edge => g
            .row(l)
            .binary_search(&root)
            .is_err()
            .then_some((v, v, root as i64)),
        Corruption::Depth => g
            .row(l)
            .iter()
            .filter(|&&w| g.part.is_local(w))
            .find(|&&w| {
                let dw = depth[g.part.local(w)];
                dw >= 0 && dw != d - 1
            })
            .map(|&w| (v, v, w as i64)),
    }
}
