//! The seed's smoother (001 §2.1): x ← x − P⁻¹ ∇F for all free nodes at once. Each node sums
//! its corners' gradient and Hessian block of f = S/(6V) over its cells in CSR order (each
//! from the corner's view of its cell, mesh::corner) and solves with the scalar (half the
//! trace) or block preconditioner. Safeguard (not in the seed): a node's step is halved up to
//! 4 times until none of its cells inverts and their worst η does not fall, else the node
//! stays; the trials come from the views (W linear, S quadratic in the node's move). Then the
//! guard, and the whole step is halved until F does not rise. kernels/mesh.cu's
//! mesh_l2v_node does the same operations in the same order.

use super::super::corner::{self, CornerView};
use super::super::geometry;
use super::super::patch::{Exchange, Patch};
use super::super::quality::Summary;
use super::guard;
use super::{global_summary, Clock, Preconditioner};
use rayon::prelude::*;

/// Halvings of a node's own step, and of the whole step while F rises.
const NODE_HALVINGS: usize = 4;
pub const GLOBAL_HALVINGS: u32 = 8;

/// The step scale of each trial: 1, 1/2, .., 2^-NODE_HALVINGS.
const TRIAL_SCALES: [f64; NODE_HALVINGS + 1] = [1.0, 0.5, 0.25, 0.125, 0.0625];

/// Node i's views of its cells in CSR order (into `views`), the sums of their terms and the
/// lowest η³; `None` when one of the cells is not valid (the node stays).
fn gather(
    patch: &Patch,
    i: usize,
    views: &mut Vec<CornerView>,
) -> Option<([f64; 3], [f64; 6], f64)> {
    let m = &patch.mesh;
    let n = m.corners();
    let (mut g, mut h, mut worst) = ([0.0; 3], [0.0; 6], f64::INFINITY);
    views.clear();
    for &slot in patch.n2c.row(i) {
        let v = corner::view(&m.cell_points(slot as usize / n), n, slot as usize % n);
        if v.w <= 0.0 {
            return None;
        }
        worst = worst.min(v.eta_cubed(n));
        let t = v.terms(n);
        for (gd, td) in g.iter_mut().zip(&t.grad) {
            *gd += td;
        }
        for (hd, td) in h.iter_mut().zip(&t.hess) {
            *hd += td;
        }
        views.push(v);
    }
    Some((g, h, worst))
}

/// The preconditioned step −P⁻¹ g.
fn precondition(g: [f64; 3], h: [f64; 6], pre: Preconditioner) -> [f64; 3] {
    let minus_g = g.map(|v| -v);
    if pre == Preconditioner::Block {
        if let Some(d) = geometry::solve_spd3(&h, &minus_g) {
            return d;
        }
    }
    let p = 0.5 * (h[0] + h[1] + h[2]);
    if p > 0.0 {
        minus_g.map(|v| v / p)
    } else {
        [0.0; 3]
    }
}

/// The first of the step's scales at which every cell stays valid with η³ ≥ `worst`
/// (`None`: none does).
fn safeguard_scale(views: &[CornerView], n: usize, step: &[f64; 3], worst: f64) -> Option<f64> {
    let along: Vec<[f64; 3]> = views.iter().map(|v| v.along(n, step)).collect();
    TRIAL_SCALES.into_iter().find(|&t| {
        views
            .iter()
            .zip(&along)
            .all(|(v, &a)| v.passes(n, t, a, worst))
    })
}

/// Node i's move: its step after the safeguard (zero where no halving keeps its cells).
fn node_move(
    patch: &Patch,
    i: usize,
    pre: Preconditioner,
    views: &mut Vec<CornerView>,
) -> [f64; 3] {
    let n = patch.mesh.corners();
    let Some((g, h, worst)) = gather(patch, i, views) else {
        return [0.0; 3];
    };
    let step = precondition(g, h, pre);
    match safeguard_scale(views, n, &step, worst) {
        Some(t) => step.map(|v| t * v),
        None => [0.0; 3],
    }
}

/// The proposed moves of one l2v iteration (the node kernel with the safeguard).
pub fn moves(patch: &Patch, pre: Preconditioner, clock: &mut Clock) -> Vec<[f64; 3]> {
    Clock::time(&mut clock.node, || {
        (0..patch.mesh.num_nodes())
            .into_par_iter()
            .map_init(Vec::new, |views, i| {
                if patch.active(i) {
                    node_move(patch, i, pre, views)
                } else {
                    [0.0; 3]
                }
            })
            .collect()
    })
}

/// Apply the moves through the guard, halving the whole step until F does not rise; returns
/// the new global summary and the largest move.
pub fn apply(
    patch: &mut Patch,
    ex: &dyn Exchange,
    moves: &[[f64; 3]],
    before: &Summary,
    clock: &mut Clock,
) -> (Summary, f64) {
    let old = guard::save(patch);
    let mut scale = 1.0;
    for _ in 0..=GLOBAL_HALVINGS {
        let largest = guard::apply(patch, ex, &old, moves, scale, Some(before.min_eta), clock);
        let after = Clock::time(&mut clock.cell, || global_summary(patch, ex));
        if after.deformation <= before.deformation {
            return (after, largest);
        }
        scale *= 0.5;
    }
    guard::restore(patch, &old);
    Clock::time(&mut clock.exchange, || ex.ghosts(&mut patch.mesh));
    (before.clone(), 0.0)
}
