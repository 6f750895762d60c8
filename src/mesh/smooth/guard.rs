//! The guard every smoothing step passes: proposed moves are applied at once, then any cell
//! that inverted (or, with a floor, fell below the previous global minimum η) sends the
//! moved nodes it has back to where they were, until no such cell is left (each round
//! restores at least one node, and the old positions are valid, so it ends). Ranks decide on
//! the same cells because their ghosts hold the owners' positions.

use super::super::geometry;
use super::super::patch::{Exchange, Patch};
use super::Clock;
use rayon::prelude::*;

/// Node positions of a patch, saved before a step.
pub type Positions = (Vec<f64>, Vec<f64>, Vec<f64>);

pub fn save(patch: &Patch) -> Positions {
    let m = &patch.mesh;
    (m.x.clone(), m.y.clone(), m.z.clone())
}

pub fn restore(patch: &mut Patch, old: &Positions) {
    patch.mesh.x.clone_from(&old.0);
    patch.mesh.y.clone_from(&old.1);
    patch.mesh.z.clone_from(&old.2);
}

/// Move each active node i from `old` by `scale * moves[i]`, refresh ghosts, and undo moves
/// until every cell has V > 0 and, with `floor`, η ≥ floor. Returns the largest move kept
/// (over all ranks).
pub fn apply(
    patch: &mut Patch,
    ex: &dyn Exchange,
    old: &Positions,
    moves: &[[f64; 3]],
    scale: f64,
    floor: Option<f64>,
    clock: &mut Clock,
) -> f64 {
    let mut moved: Vec<bool> = (0..moves.len())
        .map(|i| patch.active(i) && moves[i] != [0.0; 3])
        .collect();
    let m = &mut patch.mesh;
    for i in 0..moves.len() {
        if moved[i] {
            m.x[i] = old.0[i] + scale * moves[i][0];
            m.y[i] = old.1[i] + scale * moves[i][1];
            m.z[i] = old.2[i] + scale * moves[i][2];
        }
    }
    Clock::time(&mut clock.exchange, || ex.ghosts(&mut patch.mesh));
    let ghosts: Vec<usize> = (0..moves.len()).filter(|&i| !patch.owned[i]).collect();
    // The first round checks every cell; later rounds the cells of nodes that went back.
    let mut cells: Option<Vec<usize>> = None;
    loop {
        let undo = Clock::time(&mut clock.cell, || {
            bad_nodes(patch, &moved, floor, cells.as_deref())
        });
        for &i in &undo {
            moved[i] = false;
            patch.mesh.x[i] = old.0[i];
            patch.mesh.y[i] = old.1[i];
            patch.mesh.z[i] = old.2[i];
        }
        let before: Vec<[f64; 3]> = ghosts.iter().map(|&g| patch.mesh.point(g)).collect();
        let again = Clock::time(&mut clock.exchange, || {
            ex.ghosts(&mut patch.mesh);
            ex.any(!undo.is_empty())
        });
        if !again {
            break;
        }
        let mut changed = undo;
        changed.extend(
            ghosts
                .iter()
                .zip(&before)
                .filter(|(&g, p)| patch.mesh.point(g) != **p)
                .map(|(&g, _)| g),
        );
        cells = Some(cells_of(patch, &changed));
    }
    let largest = (0..moves.len())
        .filter(|&i| moved[i])
        .map(|i| {
            let m = &patch.mesh;
            geometry::dist(&m.point(i), &[old.0[i], old.1[i], old.2[i]])
        })
        .fold(0.0, f64::max);
    Clock::time(&mut clock.exchange, || ex.max(largest))
}

/// The cells at `nodes`, ascending.
fn cells_of(patch: &Patch, nodes: &[usize]) -> Vec<usize> {
    let n = patch.mesh.corners();
    let mut cells: Vec<usize> = nodes
        .iter()
        .flat_map(|&i| patch.n2c.row(i).iter().map(move |&slot| slot as usize / n))
        .collect();
    cells.sort_unstable();
    cells.dedup();
    cells
}

/// The moved active nodes of cells (all, or those listed) that broke the rule, ascending.
fn bad_nodes(
    patch: &Patch,
    moved: &[bool],
    floor: Option<f64>,
    cells: Option<&[usize]>,
) -> Vec<usize> {
    let m = &patch.mesh;
    let n = m.corners();
    let breaks = |c: usize| {
        let p = m.cell_points(c);
        let v = geometry::volume(&p, n);
        m.cell(c).iter().any(|&i| moved[i as usize])
            && (v <= 0.0 || floor.is_some_and(|f| geometry::mean_ratio(&p, n) < f))
    };
    let corners = |c: usize| m.cell(c).iter().map(|&i| i as usize);
    let mut nodes: Vec<usize> = match cells {
        None => (0..m.num_cells())
            .into_par_iter()
            .filter(|&c| breaks(c))
            .flat_map_iter(corners)
            .collect(),
        Some(list) => list
            .par_iter()
            .copied()
            .filter(|&c| breaks(c))
            .flat_map_iter(corners)
            .collect(),
    };
    nodes.retain(|&i| moved[i]);
    nodes.sort_unstable();
    nodes.dedup();
    nodes
}

/// The worst η of node i's cells with i at `at` (the others where they are); `None` when
/// one of them would invert.
pub fn worst_around(patch: &Patch, i: usize, at: [f64; 3]) -> Option<f64> {
    worst_by(patch, i, at, geometry::mean_ratio_of)
}

/// The worst `quality(V, S, corners)` of node i's cells with i at `at`; `None` when one of
/// them would invert.
pub fn worst_by(
    patch: &Patch,
    i: usize,
    at: [f64; 3],
    quality: fn(f64, f64, usize) -> f64,
) -> Option<f64> {
    let m = &patch.mesh;
    let n = m.corners();
    let mut worst = f64::INFINITY;
    for &slot in patch.n2c.row(i) {
        let (c, k) = (slot as usize / n, slot as usize % n);
        let mut p = m.cell_points(c);
        p[k] = at;
        let v = geometry::volume(&p, n);
        if v <= 0.0 {
            return None;
        }
        worst = worst.min(quality(v, geometry::edge_sum(&p, n), n));
    }
    Some(worst)
}
