//! The seed's smoother (001 §2.1): x ← x − P⁻¹ ∇F for all free nodes at once. The cell kernel
//! stores each corner's gradient and Hessian block of f = S/(6V); the node kernel sums them
//! over the node's cells in CSR order and solves with the scalar (half the trace) or block
//! preconditioner. Safeguard (not in the seed): a node's step is halved up to 4 times until
//! none of its cells inverts and their worst η does not fall, else the node stays; then the
//! guard, and the whole step is halved until F does not rise.

use super::super::geometry::{self, CornerTerms};
use super::super::patch::{Exchange, Patch};
use super::super::quality::Summary;
use super::guard::{self, keeps, worst_by};
use super::{global_summary, Clock, Preconditioner};
use rayon::prelude::*;

/// Halvings of a node's own step, and of the whole step while F rises.
const NODE_HALVINGS: u32 = 4;
pub const GLOBAL_HALVINGS: u32 = 8;

/// The cell kernel: every corner's terms, at `slot = cell * corners + corner`.
pub fn cell_kernel(patch: &Patch) -> Vec<CornerTerms> {
    let m = &patch.mesh;
    let n = m.corners();
    (0..m.num_cells())
        .into_par_iter()
        .flat_map_iter(|c| {
            let terms = geometry::l2v_terms(&m.cell_points(c), n);
            terms.into_iter().take(n)
        })
        .collect()
}

/// The node kernel: node i's preconditioned step −P⁻¹ g (zero for inactive nodes).
pub fn node_step(patch: &Patch, terms: &[CornerTerms], i: usize, pre: Preconditioner) -> [f64; 3] {
    let (mut g, mut h) = ([0.0; 3], [0.0; 6]);
    for &slot in patch.n2c.row(i) {
        let t = &terms[slot as usize];
        for (gd, td) in g.iter_mut().zip(&t.grad) {
            *gd += td;
        }
        for (hd, td) in h.iter_mut().zip(&t.hess) {
            *hd += td;
        }
    }
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

/// Node i's step after the safeguard: halved until its cells stay valid and their worst η
/// does not fall, else zero. The cells are compared by η³, which orders them as η does
/// without a cube root per cell (kernels/mesh.cu does the same).
fn safeguarded(patch: &Patch, i: usize, step: [f64; 3]) -> [f64; 3] {
    let here = patch.mesh.point(i);
    let Some(worst) = worst_by(patch, i, here, geometry::mean_ratio_cubed_of) else {
        return [0.0; 3];
    };
    let mut d = step;
    for _ in 0..=NODE_HALVINGS {
        let at = std::array::from_fn(|k| here[k] + d[k]);
        if keeps(patch, i, at, worst) {
            return d;
        }
        d = d.map(|v| 0.5 * v);
    }
    [0.0; 3]
}

/// The proposed moves of one l2v iteration (cell kernel, then node kernel with the
/// safeguard).
pub fn moves(patch: &Patch, pre: Preconditioner, clock: &mut Clock) -> Vec<[f64; 3]> {
    let terms = Clock::time(&mut clock.cell, || cell_kernel(patch));
    Clock::time(&mut clock.node, || {
        (0..patch.mesh.num_nodes())
            .into_par_iter()
            .map(|i| {
                if patch.active(i) {
                    safeguarded(patch, i, node_step(patch, &terms, i, pre))
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
