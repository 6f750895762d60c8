// Mesh smoothing on the GPU (host side: src/mesh/smooth/gpu.rs; the CPU twins:
// src/mesh/geometry.rs, src/mesh/smooth/l2v.rs and laplace.rs, which these follow operation
// by operation). Positions are three arrays x, y, z; cells a flat corner list (`corners` = 4
// for tets, 3 for triangles); the node-to-cell CSR lists slots (cell * corners + corner) in
// ascending cell order, so every node sums its cells' contributions in the CPU's order: no
// atomics, the same sums.
//
// mesh_l2v_cell: each cell's 4 corner terms of f = S / (6V): gradient (3) and diagonal
// Hessian block (xx yy zz xy xz yz), 9 doubles per slot.
// mesh_l2v_node: each active node's step -P^-1 g (scalar: half the block's trace; block: the
// 3x3 solve, scalar where not positive definite), halved up to 4 times until none of its
// cells inverts and their worst mean ratio does not fall, else zero.
// mesh_laplace_node: each active node's move to its neighbours' centroid (smart: only when
// its worst mean ratio rises).
// The host applies the moves and runs the guard (src/mesh/smooth/guard.rs).

struct Corners {
    double p[4][3];
};

__device__ Corners mesh_corners(const double *x, const double *y, const double *z,
                                const u32 *cells, u64 c, u32 corners) {
    Corners q;
    for (u32 k = 0; k < 4; k++) {
        u32 n = k < corners ? cells[c * corners + k] : 0;
        q.p[k][0] = k < corners ? x[n] : 0.0;
        q.p[k][1] = k < corners ? y[n] : 0.0;
        q.p[k][2] = k < corners ? z[n] : 0.0;
    }
    return q;
}

__device__ void mesh_sub(const double *a, const double *b, double *d) {
    d[0] = a[0] - b[0];
    d[1] = a[1] - b[1];
    d[2] = a[2] - b[2];
}

__device__ void mesh_cross(const double *a, const double *b, double *c) {
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

__device__ double mesh_dot(const double *a, const double *b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

// Signed volume (area for triangles) and its gradient per corner.
__device__ double mesh_volume_gradient(const Corners &q, u32 n, double a[4][3]) {
    double e1[3], e2[3];
    mesh_sub(q.p[1], q.p[0], e1);
    mesh_sub(q.p[2], q.p[0], e2);
    for (int k = 0; k < 4; k++) a[k][0] = a[k][1] = a[k][2] = 0.0;
    double v;
    if (n == 4) {
        double e3[3], c23[3];
        mesh_sub(q.p[3], q.p[0], e3);
        mesh_cross(e2, e3, c23);
        mesh_cross(e3, e1, a[2]);
        mesh_cross(e1, e2, a[3]);
        for (int d = 0; d < 3; d++) {
            a[1][d] = c23[d] / 6.0;
            a[2][d] = a[2][d] / 6.0;
            a[3][d] = a[3][d] / 6.0;
        }
        v = mesh_dot(e1, c23) / 6.0;
    } else {
        a[1][0] = 0.5 * e2[1];
        a[1][1] = -0.5 * e2[0];
        a[2][0] = -0.5 * e1[1];
        a[2][1] = 0.5 * e1[0];
        v = 0.5 * (e1[0] * e2[1] - e1[1] * e2[0]);
    }
    for (int d = 0; d < 3; d++) a[0][d] = -(a[1][d] + a[2][d] + a[3][d]);
    return v;
}

__device__ double mesh_volume(const Corners &q, u32 n) {
    double e1[3], e2[3];
    mesh_sub(q.p[1], q.p[0], e1);
    mesh_sub(q.p[2], q.p[0], e2);
    if (n == 4) {
        double e3[3], c[3];
        mesh_sub(q.p[3], q.p[0], e3);
        mesh_cross(e2, e3, c);
        return mesh_dot(e1, c) / 6.0;
    }
    return 0.5 * (e1[0] * e2[1] - e1[1] * e2[0]);
}

__device__ double mesh_edge_sum(const Corners &q, u32 n) {
    double s = 0.0;
    for (u32 i = 0; i < n; i++)
        for (u32 j = i + 1; j < n; j++) {
            double e[3];
            mesh_sub(q.p[i], q.p[j], e);
            s += mesh_dot(e, e);
        }
    return s;
}

__device__ double mesh_mean_ratio_of(double v, double s, u32 n) {
    if (v <= 0.0 || s <= 0.0) return 0.0;
    if (n == 4) {
        double t = cbrt(3.0 * v);
        return 12.0 * t * t / s;
    }
    return 4.0 * sqrt(3.0) * v / s;
}

extern "C" __global__ void mesh_l2v_cell(const double *x, const double *y, const double *z,
                                         const u32 *cells, u64 ncells, u32 n, double *terms) {
    u64 c = thread_index();
    if (c >= ncells) return;
    Corners q = mesh_corners(x, y, z, cells, c, n);
    double a[4][3];
    double v = mesh_volume_gradient(q, n, a);
    double s = mesh_edge_sum(q, n);
    double sum[3] = {0.0, 0.0, 0.0};
    for (u32 k = 0; k < n; k++)
        for (int d = 0; d < 3; d++) sum[d] += q.p[k][d];
    double v6 = 6.0 * v, v6v = 6.0 * v * v;
    double diag = 2.0 * ((double)n - 1.0) / v6;
    for (u32 i = 0; i < n; i++) {
        double g[3], *t = terms + 9 * (c * n + i);
        for (int d = 0; d < 3; d++) g[d] = 2.0 * ((double)n * q.p[i][d] - sum[d]);
        for (int d = 0; d < 3; d++) t[d] = g[d] / v6 - s * a[i][d] / v6v;
        const int rows[6] = {0, 1, 2, 0, 0, 1}, cols[6] = {0, 1, 2, 1, 2, 2};
        for (int e = 0; e < 6; e++) {
            int r = rows[e], k = cols[e];
            double h = -(g[r] * a[i][k] + a[i][r] * g[k]) / v6v + 2.0 * s * a[i][r] * a[i][k] / (v6v * v);
            t[3 + e] = e < 3 ? diag + h : h;
        }
    }
}

// The worst mean ratio of node i's cells with i at `at`; -1 when one would invert.
__device__ double mesh_worst_around(const double *x, const double *y, const double *z,
                                    const u32 *cells, u32 n, const u64 *off, const u32 *slots,
                                    u32 i, const double *at) {
    double worst = 1.0 / 0.0;
    for (u64 k = off[i]; k < off[i + 1]; k++) {
        u32 slot = slots[k];
        Corners q = mesh_corners(x, y, z, cells, slot / n, n);
        for (int d = 0; d < 3; d++) q.p[slot % n][d] = at[d];
        double v = mesh_volume(q, n);
        if (v <= 0.0) return -1.0;
        worst = fmin(worst, mesh_mean_ratio_of(v, mesh_edge_sum(q, n), n));
    }
    return worst;
}

__device__ bool mesh_solve_spd3(const double *h, const double *r, double *out) {
    double a = h[0], d = h[1], f = h[2], b = h[3], c = h[4], e = h[5];
    double l11 = sqrt(a);
    if (a <= 0.0 || !isfinite(l11)) return false;
    double l21 = b / l11, l31 = c / l11;
    double t22 = d - l21 * l21;
    if (t22 <= 0.0) return false;
    double l22 = sqrt(t22);
    double l32 = (e - l31 * l21) / l22;
    double t33 = f - l31 * l31 - l32 * l32;
    if (t33 <= 0.0) return false;
    double l33 = sqrt(t33);
    double y1 = r[0] / l11, y2 = (r[1] - l21 * y1) / l22, y3 = (r[2] - l31 * y1 - l32 * y2) / l33;
    out[2] = y3 / l33;
    out[1] = (y2 - l32 * out[2]) / l22;
    out[0] = (y1 - l21 * out[1] - l31 * out[2]) / l11;
    return true;
}

extern "C" __global__ void mesh_l2v_node(const double *x, const double *y, const double *z,
                                         const u32 *cells, u32 n, const u64 *off,
                                         const u32 *slots, const u8 *active, u32 nodes,
                                         u32 block, const double *terms, double *moves) {
    u64 i = thread_index();
    if (i >= nodes) return;
    double *m = moves + 3 * i;
    m[0] = m[1] = m[2] = 0.0;
    if (!active[i]) return;
    double g[3] = {0.0, 0.0, 0.0}, h[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    for (u64 k = off[i]; k < off[i + 1]; k++) {
        const double *t = terms + 9 * (u64)slots[k];
        for (int d = 0; d < 3; d++) g[d] += t[d];
        for (int d = 0; d < 6; d++) h[d] += t[3 + d];
    }
    double mg[3] = {-g[0], -g[1], -g[2]}, step[3];
    if (!(block && mesh_solve_spd3(h, mg, step))) {
        double p = 0.5 * (h[0] + h[1] + h[2]);
        for (int d = 0; d < 3; d++) step[d] = p > 0.0 ? mg[d] / p : 0.0;
    }
    double here[3] = {x[i], y[i], z[i]};
    double worst = mesh_worst_around(x, y, z, cells, n, off, slots, (u32)i, here);
    if (worst < 0.0) return;
    for (int halving = 0; halving <= 4; halving++) {
        double at[3] = {here[0] + step[0], here[1] + step[1], here[2] + step[2]};
        double w = mesh_worst_around(x, y, z, cells, n, off, slots, (u32)i, at);
        if (w >= 0.0 && w >= worst) {
            m[0] = step[0];
            m[1] = step[1];
            m[2] = step[2];
            return;
        }
        for (int d = 0; d < 3; d++) step[d] = 0.5 * step[d];
    }
}

extern "C" __global__ void mesh_laplace_node(const double *x, const double *y, const double *z,
                                             const u32 *cells, u32 n, const u64 *off,
                                             const u32 *slots, const u64 *goff,
                                             const u32 *adj, const u8 *active, u32 nodes,
                                             u32 smart, double *moves) {
    u64 i = thread_index();
    if (i >= nodes) return;
    double *m = moves + 3 * i;
    m[0] = m[1] = m[2] = 0.0;
    if (!active[i]) return;
    double c[3] = {0.0, 0.0, 0.0};
    for (u64 k = goff[i]; k < goff[i + 1]; k++) {
        u32 j = adj[k];
        c[0] += x[j];
        c[1] += y[j];
        c[2] += z[j];
    }
    double deg = (double)(goff[i + 1] - goff[i]);
    double here[3] = {x[i], y[i], z[i]}, d[3];
    for (int k = 0; k < 3; k++) d[k] = c[k] / deg - here[k];
    if (smart) {
        double at[3] = {here[0] + d[0], here[1] + d[1], here[2] + d[2]};
        double now = mesh_worst_around(x, y, z, cells, n, off, slots, (u32)i, here);
        double then = mesh_worst_around(x, y, z, cells, n, off, slots, (u32)i, at);
        if (now < 0.0 || then < 0.0 || !(then > now)) return;
    }
    m[0] = d[0];
    m[1] = d[1];
    m[2] = d[2];
}
