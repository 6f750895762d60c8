//! opt-colour: each free node maximises the worst η of its cells (after Freitag, Jones and
//! Plassmann), one colour class at a time: nodes of a class share no cell, so they move at
//! once without conflict, and ghosts are refreshed between classes. A node first tries its
//! neighbours' centroid, then climbs the gradient of its worst cell's η with a halving step;
//! a move is kept only if the worst η rises, so the minimum η never falls and no cell
//! inverts. Cells are compared by η³ (no cube root per cell, as l2v's safeguard does); η
//! itself is taken only for the worst cell's gradient.

use super::super::geometry;
use super::super::patch::{Exchange, Patch};
use super::super::quality::Summary;
use super::guard::worst_by;
use super::laplace::centroid_move;
use super::{global_summary, Clock};
use rayon::prelude::*;

const ASCENT_STEPS: usize = 4;
const HALVINGS: usize = 5;

/// The worst η³ of node i's cells with i at `at`; None when one would invert.
fn worst_around(patch: &Patch, i: usize, at: [f64; 3]) -> Option<f64> {
    worst_by(patch, i, at, geometry::mean_ratio_cubed_of)
}

/// The incident cell (slot) with the worst η (the first of the lowest η³) with node i at
/// `at`: its corner of i and its corners.
fn worst_slot(patch: &Patch, i: usize, at: [f64; 3]) -> (usize, geometry::Corners) {
    let m = &patch.mesh;
    let n = m.corners();
    let mut best = (f64::INFINITY, 0, [[0.0; 3]; 4]);
    for &slot in patch.n2c.row(i) {
        let (c, k) = (slot as usize / n, slot as usize % n);
        let mut p = m.cell_points(c);
        p[k] = at;
        let eta =
            geometry::mean_ratio_cubed_of(geometry::volume(&p, n), geometry::edge_sum(&p, n), n);
        if eta < best.0 {
            best = (eta, k, p);
        }
    }
    (best.1, best.2)
}

/// Node i's new position (its current one when nothing raises its worst η).
pub fn optimise_node(patch: &Patch, i: usize) -> [f64; 3] {
    let n = patch.mesh.corners();
    let mut here = patch.mesh.point(i);
    let Some(mut worst) = worst_around(patch, i, here) else {
        return here;
    };
    let d = centroid_move(patch, i);
    let centroid = std::array::from_fn(|k| here[k] + d[k]);
    if let Some(w) = worst_around(patch, i, centroid).filter(|&w| w > worst) {
        (here, worst) = (centroid, w);
    }
    let row = patch.graph.row(i);
    let reach = row
        .iter()
        .map(|&j| geometry::dist(&here, &patch.mesh.point(j as usize)))
        .sum::<f64>()
        / row.len().max(1) as f64;
    for _ in 0..ASCENT_STEPS {
        let (k, p) = worst_slot(patch, i, here);
        let g = geometry::mean_ratio_gradient(&p, n, k);
        let norm = geometry::dot(&g, &g).sqrt();
        if norm == 0.0 {
            break;
        }
        let mut t = 0.1 * reach / norm;
        let mut raised = false;
        for _ in 0..HALVINGS {
            let at = std::array::from_fn(|q| here[q] + t * g[q]);
            if let Some(w) = worst_around(patch, i, at).filter(|&w| w > worst) {
                (here, worst, raised) = (at, w, true);
                break;
            }
            t *= 0.5;
        }
        if !raised {
            break;
        }
    }
    here
}

pub fn iteration(
    patch: &mut Patch,
    ex: &dyn Exchange,
    colours: &[u32],
    clock: &mut Clock,
) -> (Summary, f64) {
    let local_max = colours
        .iter()
        .filter(|&&c| c != u32::MAX)
        .max()
        .map_or(-1.0, |&c| c as f64);
    let classes = (ex.max(local_max) + 1.0) as u32;
    let mut largest: f64 = 0.0;
    for class in 0..classes {
        let moved: Vec<(usize, [f64; 3])> = Clock::time(&mut clock.node, || {
            (0..patch.mesh.num_nodes())
                .into_par_iter()
                .filter(|&i| patch.active(i) && colours[i] == class)
                .map(|i| (i, optimise_node(patch, i)))
                .collect()
        });
        let m = &mut patch.mesh;
        for (i, p) in moved {
            largest = largest.max(geometry::dist(&p, &m.point(i)));
            (m.x[i], m.y[i], m.z[i]) = (p[0], p[1], p[2]);
        }
        Clock::time(&mut clock.exchange, || ex.ghosts(&mut patch.mesh));
    }
    let largest = Clock::time(&mut clock.exchange, || ex.max(largest));
    let after = Clock::time(&mut clock.cell, || global_summary(patch, ex));
    (after, largest)
}
