//! opt-colour: each free node maximises the worst η of its cells (after Freitag, Jones and
//! Plassmann), one colour class at a time: nodes of a class share no cell, so they move at
//! once without conflict, and ghosts are refreshed between classes. A node first tries its
//! neighbours' centroid, then climbs the gradient of its worst cell's η with a halving step,
//! each ascent step starting at the length that raised the worst η in the step before (a
//! step seldom takes a longer one than its predecessor did: on a jittered 40^3 box the same
//! quality an iteration in 7.8 trials a node instead of 12.0); a move is kept only if the
//! worst η rises, so the minimum η never falls and no cell inverts. Cells are compared by η³
//! (no cube root per cell, as l2v's safeguard does).
//!
//! Every trial comes from the node's corner views of its cells (`corner`: W linear and S
//! quadratic in the node's move), taken once at its start: a trial reads no corner. The
//! views round differently from a cell's own V and S, so the search's end is checked once
//! with those (as the summary takes η): the node moves only if its worst η³ rises there too.
//! kernels/mesh.cu's `mesh_opt_class` takes the same steps in the same order
//! (`scripts/emulate-kernels` runs it on the host against a transcription of this search,
//! bit for bit).

use super::super::corner::{self, CornerView};
use super::super::geometry::{self, dot, sub};
use super::super::patch::{Exchange, Patch};
use super::super::quality::Summary;
use super::guard::worst_by;
use super::laplace::centroid_move;
use super::{global_summary, Clock};
use rayon::prelude::*;

const ASCENT_STEPS: usize = 4;
const HALVINGS: usize = 5;

/// The worst η³ of node i's cells with i at `at`, from the cells' V and S; None when one
/// would invert.
fn worst_around(patch: &Patch, i: usize, at: [f64; 3]) -> Option<f64> {
    worst_by(patch, i, at, geometry::mean_ratio_cubed_of)
}

/// Node i's views of its cells, in slot order, at its current position.
fn views_of(patch: &Patch, i: usize) -> Vec<CornerView> {
    let m = &patch.mesh;
    let n = m.corners();
    patch
        .n2c
        .row(i)
        .iter()
        .map(|&slot| corner::view(&m.cell_points(slot as usize / n), n, slot as usize % n))
        .collect()
}

/// The worst η³ of the views' cells with their corner moved by δ and its place (the first
/// of the lowest); None when one would invert (or W is not a number).
fn worst_of(views: &[CornerView], n: usize, delta: &[f64; 3]) -> Option<(f64, usize)> {
    let gamma = (n as f64 - 1.0) * dot(delta, delta);
    let mut best = (f64::INFINITY, 0);
    for (k, v) in views.iter().enumerate() {
        let (w, s) = v.moved(delta, gamma);
        if w.is_nan() || w <= 0.0 {
            return None;
        }
        let eta3 = corner::eta_cubed(n, w, s);
        if eta3 < best.0 {
            best = (eta3, k);
        }
    }
    Some(best)
}

/// Node i's new position (its current one when nothing raises its worst η).
pub fn optimise_node(patch: &Patch, i: usize) -> [f64; 3] {
    let n = patch.mesh.corners();
    let start = patch.mesh.point(i);
    let Some(exact) = worst_around(patch, i, start) else {
        return start;
    };
    let views = views_of(patch, i);
    let Some((mut worst, mut place)) = worst_of(&views, n, &[0.0; 3]) else {
        return start;
    };
    let mut here = start;
    let d = centroid_move(patch, i);
    let centroid = std::array::from_fn(|k| here[k] + d[k]);
    if let Some(w) = worst_of(&views, n, &sub(&centroid, &start)).filter(|w| w.0 > worst) {
        (here, (worst, place)) = (centroid, w);
    }
    let row = patch.graph.row(i);
    let reach = row
        .iter()
        .map(|&j| geometry::dist(&here, &patch.mesh.point(j as usize)))
        .sum::<f64>()
        / row.len().max(1) as f64;
    // Halvings of the step length 0.1 reach at which an ascent step starts.
    let mut first = 0;
    for _ in 0..ASCENT_STEPS {
        let g = views[place].ascent(n, &sub(&here, &start));
        let norm = dot(&g, &g).sqrt();
        if norm == 0.0 {
            break;
        }
        let kept = (first..HALVINGS).find_map(|halvings| {
            let t = 0.1 * reach / norm * 0.5f64.powi(halvings as i32);
            let at = std::array::from_fn(|q| here[q] + t * g[q]);
            let w = worst_of(&views, n, &sub(&at, &start)).filter(|w| w.0 > worst)?;
            Some((at, w, halvings))
        });
        let Some((at, w, halvings)) = kept else {
            break;
        };
        (here, (worst, place), first) = (at, w, halvings);
    }
    if here != start && worst_around(patch, i, here).is_some_and(|w| w > exact) {
        here
    } else {
        start
    }
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
