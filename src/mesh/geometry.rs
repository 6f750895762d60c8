//! One cell's geometry and its derivatives, for tetrahedra (4 corners) and triangles (3
//! corners in the plane z = 0): signed volume V (area for triangles), the sum of squared
//! edge lengths S, the L2V deformation f = S / (6V) of the seed (001 §2.1.1), the mean ratio
//! η (1 for a regular cell). The gradient and diagonal Hessian blocks of f at a corner are
//! computed from that corner's view of the cell (`super::corner`).
//!
//! Derivation (the seed's equations 3-13 carry sign slips; this is derived from f and checked
//! against finite differences in super::corner's tests). With a_i = ∂V/∂x_i and g_i = ∂S/∂x_i:
//!   g_i = 2 Σ_j (x_i - x_j) = 2 (n x_i - Σ_j x_j)             (n corners)
//!   tet:  a_1 = e2×e3/6, a_2 = e3×e1/6, a_3 = e1×e2/6, a_0 = -(a_1 + a_2 + a_3), e_k = x_k - x_0
//!   ∂f/∂x_i = g_i / (6V) - S a_i / (6V²)
//!   ∂²f/∂x_i² = 2(n-1) I / (6V) - (g_i a_iᵀ + a_i g_iᵀ) / (6V²) + 2 S a_i a_iᵀ / (6V³)
//! (V is linear in each x_i alone, so ∂²V/∂x_i² = 0 and ∂²S/∂x_i² = 2(n-1) I.)

/// A cell's corner positions; a triangle leaves the fourth zero.
pub type Corners = [[f64; 3]; 4];

pub fn sub(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

pub fn dist(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    let d = sub(a, b);
    dot(&d, &d).sqrt()
}

/// Signed volume (tets) or area (triangles).
pub fn volume(p: &Corners, n: usize) -> f64 {
    let e1 = sub(&p[1], &p[0]);
    let e2 = sub(&p[2], &p[0]);
    if n == 4 {
        dot(&e1, &cross(&e2, &sub(&p[3], &p[0]))) / 6.0
    } else {
        0.5 * (e1[0] * e2[1] - e1[1] * e2[0])
    }
}

/// Sum of the squared edge lengths.
pub fn edge_sum(p: &Corners, n: usize) -> f64 {
    let mut s = 0.0;
    for i in 0..n {
        for j in i + 1..n {
            let e = sub(&p[i], &p[j]);
            s += dot(&e, &e);
        }
    }
    s
}

/// Mean ratio η: 12 (3V)^(2/3) / S for tets, 4√3 A / S for triangles; 0 when V ≤ 0.
pub fn mean_ratio(p: &Corners, n: usize) -> f64 {
    mean_ratio_of(volume(p, n), edge_sum(p, n), n)
}

pub fn mean_ratio_of(v: f64, s: f64, n: usize) -> f64 {
    if v <= 0.0 || s <= 0.0 {
        0.0
    } else if n == 4 {
        // (3V)^(2/3) as cbrt(3V)^2: cbrt is cheaper than powf, and kernels/mesh.cu does the same.
        let t = (3.0 * v).cbrt();
        12.0 * t * t / s
    } else {
        4.0 * 3f64.sqrt() * v / s
    }
}

/// η³ without η's cube root (15552 V² / S³ for tets, η³ for triangles; 0 when V ≤ 0): it
/// orders cells as η does, and l2v's safeguard compares cells by it.
pub fn mean_ratio_cubed_of(v: f64, s: f64, n: usize) -> f64 {
    if v <= 0.0 || s <= 0.0 {
        0.0
    } else if n == 4 {
        15552.0 * v * v / (s * s * s)
    } else {
        let e = 4.0 * 3f64.sqrt() * v / s;
        e * e * e
    }
}

/// The L2V deformation f = S / (6V) (infinite when V ≤ 0).
pub fn l2v(p: &Corners, n: usize) -> f64 {
    let v = volume(p, n);
    if v <= 0.0 {
        f64::INFINITY
    } else {
        edge_sum(p, n) / (6.0 * v)
    }
}

/// Solve the symmetric 3x3 system H d = r (H as xx, yy, zz, xy, xz, yz) by Cholesky; `None`
/// unless H is positive definite.
pub fn solve_spd3(h: &[f64; 6], r: &[f64; 3]) -> Option<[f64; 3]> {
    let [a, d, f, b, c, e] = *h;
    let l11 = a.sqrt();
    if a <= 0.0 || !l11.is_finite() {
        return None;
    }
    let l21 = b / l11;
    let l31 = c / l11;
    let t22 = d - l21 * l21;
    if t22 <= 0.0 {
        return None;
    }
    let l22 = t22.sqrt();
    let l32 = (e - l31 * l21) / l22;
    let t33 = f - l31 * l31 - l32 * l32;
    if t33 <= 0.0 {
        return None;
    }
    let l33 = t33.sqrt();
    let y1 = r[0] / l11;
    let y2 = (r[1] - l21 * y1) / l22;
    let y3 = (r[2] - l31 * y1 - l32 * y2) / l33;
    let x3 = y3 / l33;
    let x2 = (y2 - l32 * x3) / l22;
    let x1 = (y1 - l21 * x2 - l31 * x3) / l11;
    Some([x1, x2, x3])
}

/// A tetrahedron far from regular, positively oriented: the geometry tests' common case.
#[cfg(test)]
pub(super) fn skewed_tet() -> Corners {
    [
        [0.1, 0.0, 0.05],
        [1.2, 0.1, -0.1],
        [0.3, 0.9, 0.2],
        [0.2, 0.3, 1.1],
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_cells_have_mean_ratio_one() {
        let s = 3f64.sqrt();
        let tri = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.5, s / 2.0, 0.0],
            [0.0; 3],
        ];
        assert!((mean_ratio(&tri, 3) - 1.0).abs() < 1e-12);
        let tet = [
            [1.0, 1.0, 1.0],
            [1.0, -1.0, -1.0],
            [-1.0, 1.0, -1.0],
            [-1.0, -1.0, 1.0],
        ];
        let v = volume(&tet, 4);
        let t = if v < 0.0 {
            [tet[1], tet[0], tet[2], tet[3]]
        } else {
            tet
        };
        assert!((mean_ratio(&t, 4) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn spd_solve_inverts_the_block() {
        let h = [4.0, 3.0, 2.0, 1.0, 0.5, 0.25];
        let r = [1.0, -2.0, 0.5];
        let d = solve_spd3(&h, &r).unwrap();
        let back = [
            h[0] * d[0] + h[3] * d[1] + h[4] * d[2],
            h[3] * d[0] + h[1] * d[1] + h[5] * d[2],
            h[4] * d[0] + h[5] * d[1] + h[2] * d[2],
        ];
        for k in 0..3 {
            assert!((back[k] - r[k]).abs() < 1e-12);
        }
        assert!(solve_spd3(&[1.0, -1.0, 1.0, 0.0, 0.0, 0.0], &r).is_none());
    }
}
