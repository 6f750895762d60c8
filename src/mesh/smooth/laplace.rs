//! Laplacian smoothing: every free node to the centroid of its neighbours, all at once
//! (Jacobi). Plain: only the inversion guard, so it converges to the discrete harmonic
//! positions. Smart: a node moves only where its worst η rises, and the guard keeps the
//! global minimum η.

use super::super::patch::{Exchange, Patch};
use super::super::quality::Summary;
use super::guard::{self, worst_around};
use super::{global_summary, Clock};
use rayon::prelude::*;

/// Node i's move to its neighbours' centroid.
pub fn centroid_move(patch: &Patch, i: usize) -> [f64; 3] {
    let m = &patch.mesh;
    let row = patch.graph.row(i);
    let mut c = [0.0; 3];
    for &j in row {
        let p = m.point(j as usize);
        for d in 0..3 {
            c[d] += p[d];
        }
    }
    let here = m.point(i);
    std::array::from_fn(|d| c[d] / row.len() as f64 - here[d])
}

/// Whether moving node i by `d` raises the worst η of its cells.
pub fn improves(patch: &Patch, i: usize, d: [f64; 3]) -> bool {
    let here = patch.mesh.point(i);
    let at = std::array::from_fn(|k| here[k] + d[k]);
    match (worst_around(patch, i, here), worst_around(patch, i, at)) {
        (Some(now), Some(then)) => then > now,
        _ => false,
    }
}

/// Every active node's proposed move (zero where smart declines).
pub fn moves(patch: &Patch, smart: bool) -> Vec<[f64; 3]> {
    (0..patch.mesh.num_nodes())
        .into_par_iter()
        .map(|i| {
            if !patch.active(i) {
                return [0.0; 3];
            }
            let d = centroid_move(patch, i);
            if !smart || improves(patch, i, d) {
                d
            } else {
                [0.0; 3]
            }
        })
        .collect()
}

/// Apply the moves through the guard (smart: keeping the minimum η).
pub fn apply(
    patch: &mut Patch,
    ex: &dyn Exchange,
    moves: &[[f64; 3]],
    smart: bool,
    before: &Summary,
    clock: &mut Clock,
) -> (Summary, f64) {
    let old = guard::save(patch);
    let floor = smart.then_some(before.min_eta);
    let largest = guard::apply(patch, ex, &old, moves, 1.0, floor, clock);
    let after = Clock::time(&mut clock.cell, || global_summary(patch, ex));
    (after, largest)
}
