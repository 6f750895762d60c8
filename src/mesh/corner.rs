//! One corner's view of its cell, for l2v and opt-colour (kernels/mesh.cu's `mesh_corner_view`,
//! `mesh_trial_passes` and `mesh_opt_view_worst` do the same operations in the same order, so
//! the CPU and the GPU take the same decisions bit for bit).
//!
//! With the other corners fixed, W = 6V is linear and S (the sum of squared edge lengths)
//! quadratic in the corner's position P: for a move δ,
//!   W(P + δ) = W + A·δ,  S(P + δ) = S + g·δ + (n − 1)|δ|²,
//! with A = ∂W/∂P and g = ∂S/∂P = 2 Σ_m (P − x_m) over the other corners m. So the l2v terms
//! of the corner (∂f/∂P and ∂²f/∂P², f = S/W) and the safeguard's trials of a step at every
//! halving come from these 8 numbers (W, A, S, g): a trial needs no corner and no division.
//!
//! The other corners are taken in an order that keeps the orientation: for a tet
//! W = (P − x_j)·A, A = −(x_k − x_j) × (x_l − x_j) with (j, k, l) = (1, 2, 3), (0, 3, 2),
//! (0, 1, 3), (0, 2, 1) for corners 0..3; for a triangle (z = 0) W = 3 (P − x_j)·(−u_y, u_x),
//! u = x_k − x_j, with (j, k) = (1, 2), (2, 0), (0, 1).

use super::geometry::{cross, dot, sub, Corners};

/// The other corners of corner i, in the order that keeps the orientation.
const TET_OTHERS: [[usize; 3]; 4] = [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]];
const TRIANGLE_OTHERS: [[usize; 2]; 3] = [[1, 2], [2, 0], [0, 1]];

/// η³ = K W^p / S³ with W = 6V: for tets 15552 V² / S³ = 432 W² / S³, for triangles
/// (η = 4√3 A / S = (2/√3) W / S) (2/√3)³ W³ / S³. The same literals in kernels/mesh.cu.
const TET_ETA3: f64 = 432.0;
const TRIANGLE_ETA3: f64 = 1.539600717839002;

/// η³ of a cell from its W (> 0) and S.
pub fn eta_cubed(n: usize, w: f64, s: f64) -> f64 {
    let s3 = s * s * s;
    if n == 4 {
        TET_ETA3 * w * w / s3
    } else {
        TRIANGLE_ETA3 * w * w * w / s3
    }
}

/// Corner P's view of its cell (see the module note).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CornerView {
    pub w: f64,
    pub a: [f64; 3],
    pub s: f64,
    pub g: [f64; 3],
}

/// The gradient of f = S/W at a corner and its Hessian block (xx, yy, zz, xy, xz, yz).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CornerTerms {
    pub grad: [f64; 3],
    pub hess: [f64; 6],
}

/// Corner i's view of cell p (n = 4 corners, or 3 for a triangle in z = 0).
pub fn view(p: &Corners, n: usize, i: usize) -> CornerView {
    let at = p[i];
    if n == 4 {
        let [j, k, l] = TET_OTHERS[i];
        let (dj, dk, dl) = (sub(&at, &p[j]), sub(&at, &p[k]), sub(&at, &p[l]));
        let (u, v) = (sub(&p[k], &p[j]), sub(&p[l], &p[j]));
        let a = cross(&u, &v).map(|c| -c);
        let vu = sub(&v, &u);
        let own = dot(&dj, &dj) + dot(&dk, &dk) + dot(&dl, &dl);
        let face = dot(&u, &u) + dot(&v, &v) + dot(&vu, &vu);
        CornerView {
            w: dot(&dj, &a),
            a,
            s: own + face,
            g: std::array::from_fn(|d| 2.0 * (dj[d] + dk[d] + dl[d])),
        }
    } else {
        let [j, k] = TRIANGLE_OTHERS[i];
        let (dj, dk) = (sub(&at, &p[j]), sub(&at, &p[k]));
        let u = sub(&p[k], &p[j]);
        let a = [-(3.0 * u[1]), 3.0 * u[0], 0.0];
        CornerView {
            w: dot(&dj, &a),
            a,
            s: dot(&dj, &dj) + dot(&dk, &dk) + dot(&u, &u),
            g: std::array::from_fn(|d| 2.0 * (dj[d] + dk[d])),
        }
    }
}

impl CornerView {
    /// ∂f/∂P and ∂²f/∂P² of f = S/W (W > 0), with r = 1/W and f = S r: one division:
    /// ∂f/∂P = (g − f A) r, ∂²f/∂P² = 2(n−1) r I + r² (2 f A Aᵀ − g Aᵀ − A gᵀ).
    pub fn terms(&self, n: usize) -> CornerTerms {
        let (a, g) = (self.a, self.g);
        let r = 1.0 / self.w;
        let (f, rr) = (self.s * r, r * r);
        let diag = 2.0 * (n as f64 - 1.0) * r;
        let h = |r: usize, c: usize| rr * (2.0 * f * a[r] * a[c] - (g[r] * a[c] + a[r] * g[c]));
        CornerTerms {
            grad: std::array::from_fn(|d| (g[d] - f * a[d]) * r),
            hess: [
                diag + h(0, 0),
                diag + h(1, 1),
                diag + h(2, 2),
                h(0, 1),
                h(0, 2),
                h(1, 2),
            ],
        }
    }

    /// η³ of the cell as it stands (W > 0): the safeguard's floor is the node's lowest.
    pub fn eta_cubed(&self, n: usize) -> f64 {
        eta_cubed(n, self.w, self.s)
    }

    /// W and S of the cell with the corner moved by δ, given γ = (n − 1)|δ|² (the same for
    /// all of a node's cells): W + A·δ and S + g·δ + γ.
    pub fn moved(&self, delta: &[f64; 3], gamma: f64) -> (f64, f64) {
        (
            self.w + dot(&self.a, delta),
            self.s + dot(&self.g, delta) + gamma,
        )
    }

    /// The direction of ∇η at the corner moved by δ (W > 0 there): ∇η / η = p A / W − ∇S / S
    /// with p = 2/3 for tets (η ∝ W^(2/3) / S) and 1 for triangles, ∇S = g + 2(n − 1)δ.
    pub fn ascent(&self, n: usize, delta: &[f64; 3]) -> [f64; 3] {
        let (w, s) = self.moved(delta, (n as f64 - 1.0) * dot(delta, delta));
        let power = if n == 4 { 2.0 / 3.0 } else { 1.0 };
        let twice = 2.0 * (n as f64 - 1.0);
        std::array::from_fn(|d| power * self.a[d] / w - (self.g[d] + twice * delta[d]) / s)
    }

    /// Whether the cell stays valid with η³ ≥ `floor` when the corner moves by t·δ, given
    /// α = A·δ, β = g·δ and γ = (n − 1)|δ|² (t a power of two, so t·α, t·β and t²·γ are
    /// exact). Compared as K W^p ≥ floor · S³: no division.
    pub fn passes(&self, n: usize, t: f64, [alpha, beta, gamma]: [f64; 3], floor: f64) -> bool {
        let w = self.w + t * alpha;
        let s = self.s + t * beta + t * t * gamma;
        let s3 = s * s * s;
        let q = if n == 4 {
            TET_ETA3 * w * w
        } else {
            TRIANGLE_ETA3 * w * w * w
        };
        w > 0.0 && q >= floor * s3
    }

    /// α = A·δ, β = g·δ and γ = (n − 1)|δ|² of a move δ, for `passes`.
    pub fn along(&self, n: usize, step: &[f64; 3]) -> [f64; 3] {
        let gamma = (n as f64 - 1.0) * dot(step, step);
        [dot(&self.a, step), dot(&self.g, step), gamma]
    }
}

#[cfg(test)]
mod tests {
    use super::super::geometry::{edge_sum, l2v, mean_ratio, skewed_tet, volume};
    use super::*;

    fn skewed_triangle() -> Corners {
        [[0.0, 0.1, 0.0], [1.3, 0.2, 0.0], [0.4, 0.8, 0.0], [0.0; 3]]
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
    }

    /// Each corner's W, S and η³ are the cell's 6V, S and η³, and a moved corner's W and S
    /// from the view are those of the moved cell (W linear, S quadratic: exact up to rounding).
    #[test]
    fn views_give_the_cell_and_its_moves() {
        for (p, n) in [(skewed_tet(), 4), (skewed_triangle(), 3)] {
            let dims = if n == 4 { 3 } else { 2 };
            for i in 0..n {
                let v = view(&p, n, i);
                assert!(close(v.w, 6.0 * volume(&p, n), 1e-14), "{n} {i}: W {}", v.w);
                assert!(close(v.s, edge_sum(&p, n), 1e-14));
                assert!(close(v.eta_cubed(n), mean_ratio(&p, n).powi(3), 1e-12));
                let delta: [f64; 3] =
                    std::array::from_fn(|d| if d < dims { 0.1 - 0.07 * d as f64 } else { 0.0 });
                let mut q = p;
                q[i] = std::array::from_fn(|d| p[i][d] + delta[d]);
                let [alpha, beta, gamma] = v.along(n, &delta);
                assert!(close(v.w + alpha, 6.0 * volume(&q, n), 1e-13));
                assert!(close(v.s + beta + gamma, edge_sum(&q, n), 1e-13));
                let eta3 = mean_ratio(&q, n).powi(3);
                assert!(v.passes(n, 1.0, [alpha, beta, gamma], eta3 * (1.0 - 1e-9)));
                assert!(!v.passes(n, 1.0, [alpha, beta, gamma], eta3 * (1.0 + 1e-9)));
            }
        }
    }

    /// A corner that crosses its opposite face inverts the cell: the trial fails at any floor.
    #[test]
    fn crossing_the_face_fails_the_trial() {
        let p = skewed_tet();
        let v = view(&p, 4, 3);
        let down = [0.0, 0.0, -2.0];
        assert!(!v.passes(4, 1.0, v.along(4, &down), 0.0));
        assert!(v.passes(4, 1.0 / 16.0, v.along(4, &down), 0.0));
    }

    /// The ascent direction of a moved corner against central differences of ln η (∇η / η)
    /// of the moved cell, for a tet and a triangle.
    #[test]
    fn ascent_is_the_mean_ratio_gradient_over_eta() {
        for (p, n, dims) in [(skewed_tet(), 4, 3), (skewed_triangle(), 3, 2)] {
            let h = 1e-7;
            for i in 0..n {
                let v = view(&p, n, i);
                let delta: [f64; 3] = std::array::from_fn(|d| {
                    if d < dims {
                        0.03 - 0.02 * d as f64
                    } else {
                        0.0
                    }
                });
                let dir = v.ascent(n, &delta);
                let ln_eta = |shift: [f64; 3]| {
                    let mut q = p;
                    q[i] = std::array::from_fn(|d| p[i][d] + delta[d] + shift[d]);
                    mean_ratio(&q, n).ln()
                };
                for (d, &g) in dir.iter().enumerate() {
                    let e: [f64; 3] = std::array::from_fn(|k| if k == d { h } else { 0.0 });
                    let fd = (ln_eta(e) - ln_eta(e.map(|c| -c))) / (2.0 * h);
                    assert!(
                        (fd - g).abs() < 1e-6 * (1.0 + g.abs()),
                        "{n} {i} {d}: {fd} vs {g}"
                    );
                }
            }
        }
    }

    /// f's gradient and Hessian block at each corner against central differences of f, for
    /// a tet and a triangle (the seed's printed equations have sign slips; this is the truth).
    #[test]
    fn l2v_derivatives_match_finite_differences() {
        for (p, n, dims) in [(skewed_tet(), 4, 3), (skewed_triangle(), 3, 2)] {
            let h = 1e-6;
            for i in 0..n {
                let terms = view(&p, n, i).terms(n);
                for d in 0..dims {
                    let shifted = |t: f64| {
                        let mut q = p;
                        q[i][d] += t;
                        q
                    };
                    let fd = (l2v(&shifted(h), n) - l2v(&shifted(-h), n)) / (2.0 * h);
                    let g = terms.grad[d];
                    assert!(
                        (fd - g).abs() < 1e-6 * (1.0 + g.abs()),
                        "grad {i} {d}: {fd} vs {g}"
                    );
                    for e in 0..dims {
                        let grad_at = |t: f64| view(&shifted(t), n, i).terms(n).grad[e];
                        let fd2 = (grad_at(h) - grad_at(-h)) / (2.0 * h);
                        let idx = [[0, 3, 4], [3, 1, 5], [4, 5, 2]][d][e];
                        let hv = terms.hess[idx];
                        assert!(
                            (fd2 - hv).abs() < 1e-5 * (1.0 + hv.abs()),
                            "hess {i} {d}{e}"
                        );
                    }
                }
            }
        }
    }
}
