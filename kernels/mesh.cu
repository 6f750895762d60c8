// Mesh smoothing on the GPU (host side: src/mesh/smooth/gpu.rs; the CPU twins:
// src/mesh/geometry.rs, src/mesh/smooth/l2v.rs and laplace.rs, which these follow operation
// by operation). Positions are three arrays x, y, z; cells a flat corner list (`corners` = 4
// for tets, 3 for triangles); the node-to-cell CSR lists slots (cell * corners + corner) in
// ascending cell order, so every node sums its cells' contributions in the CPU's order: no
// atomics, the same sums.
//
// mesh_l2v_cell: each cell's 4 corner terms of f = S / (6V): gradient (3) and diagonal
// Hessian block (xx yy zz xy xz yz), `stride` doubles per slot: 9, or 6 (the block's
// diagonal only) for the scalar preconditioner, which needs no more.
// mesh_l2v_node: each active node's step -P^-1 g (scalar: half the block's trace; block: the
// 3x3 solve, scalar where not positive definite), halved up to 4 times until none of its
// cells inverts and their worst mean ratio does not fall, else zero.
// mesh_laplace_node: each active node's move to its neighbours' centroid (smart: only when
// its worst mean ratio rises).
// The rest keeps the whole iteration on the device (src/mesh/smooth/gpu.rs; the CPU twins in
// src/mesh/smooth/guard.rs and quality.rs): mesh_apply moves the nodes from their saved
// positions, mesh_flag_bad and mesh_undo send back the moved nodes of cells that inverted or
// fell below the floor, mesh_max_move and mesh_summary reduce the largest move and the
// quality sums (F and the η sum as 128-bit integers of 2^-32 units, exact in any order, as
// src/mesh/exact.rs does), mesh_pack and mesh_unpack carry ghost positions.
// mesh_opt_class: opt-colour's moves of one colour class, in place (src/mesh/smooth/optimise.rs).
// This file is compiled without FMA contraction (src/device/kernel.rs), so every +, * and /
// rounds as on the CPU.

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
                                         const u32 *cells, u64 ncells, u32 n, u32 stride,
                                         double *terms) {
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
        double g[3], *t = terms + stride * (c * n + i);
        for (int d = 0; d < 3; d++) g[d] = 2.0 * ((double)n * q.p[i][d] - sum[d]);
        for (int d = 0; d < 3; d++) t[d] = g[d] / v6 - s * a[i][d] / v6v;
        const int rows[6] = {0, 1, 2, 0, 0, 1}, cols[6] = {0, 1, 2, 1, 2, 2};
        for (int e = 0; e < (int)stride - 3; e++) {
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
                                         u32 block, u32 stride, const double *terms,
                                         double *moves) {
    u64 i = thread_index();
    if (i >= nodes) return;
    double *m = moves + 3 * i;
    m[0] = m[1] = m[2] = 0.0;
    if (!active[i]) return;
    double g[3] = {0.0, 0.0, 0.0}, h[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    for (u64 k = off[i]; k < off[i + 1]; k++) {
        const double *t = terms + stride * (u64)slots[k];
        for (int d = 0; d < 3; d++) g[d] += t[d];
        for (int d = 0; d < (int)stride - 3; d++) h[d] += t[3 + d];
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

// ---- The device-resident iteration ----------------------------------------------------

// Nodes that move (active, non-zero move) to `old + scale * move`, every other node to `old`;
// `moved` marks the movers.
extern "C" __global__ void mesh_apply(const double *xo, const double *yo, const double *zo,
                                      const double *moves, const u8 *active, u32 nodes,
                                      double scale, double *x, double *y, double *z,
                                      u8 *moved) {
    u64 i = thread_index();
    if (i >= nodes) return;
    const double *m = moves + 3 * i;
    bool go = active[i] && (m[0] != 0.0 || m[1] != 0.0 || m[2] != 0.0);
    moved[i] = go;
    x[i] = go ? xo[i] + scale * m[0] : xo[i];
    y[i] = go ? yo[i] + scale * m[1] : yo[i];
    z[i] = go ? zo[i] + scale * m[2] : zo[i];
}

// Flag the moved corners of every cell with a moved corner that inverted or (has_floor) has
// η below `floor`.
extern "C" __global__ void mesh_flag_bad(const double *x, const double *y, const double *z,
                                         const u32 *cells, u64 ncells, u32 n, const u8 *moved,
                                         double floor, u32 has_floor, u8 *flag) {
    u64 c = thread_index();
    if (c >= ncells) return;
    bool any = false;
    for (u32 k = 0; k < n; k++) any |= moved[cells[c * n + k]] != 0;
    if (!any) return;
    Corners q = mesh_corners(x, y, z, cells, c, n);
    double v = mesh_volume(q, n);
    bool bad = v <= 0.0 || (has_floor && mesh_mean_ratio_of(v, mesh_edge_sum(q, n), n) < floor);
    if (!bad) return;
    for (u32 k = 0; k < n; k++) {
        u32 i = cells[c * n + k];
        if (moved[i]) flag[i] = 1;
    }
}

// Flagged nodes back to `old`, no longer moved; counts them.
extern "C" __global__ void mesh_undo(const double *xo, const double *yo, const double *zo,
                                     u32 nodes, u8 *moved, u8 *flag, double *x, double *y,
                                     double *z, u64 *count) {
    u64 i = thread_index();
    if (i >= nodes || !flag[i]) return;
    flag[i] = 0;
    moved[i] = 0;
    x[i] = xo[i];
    y[i] = yo[i];
    z[i] = zo[i];
    atomicAdd(count, 1ull);
}

// The largest distance a moved node went from `old`, as the bits of a double (>= 0, so the
// bits order as the values do) in *best.
extern "C" __global__ void mesh_max_move(const double *xo, const double *yo, const double *zo,
                                         const double *x, const double *y, const double *z,
                                         const u8 *moved, u32 nodes, u64 *best) {
    u64 i = thread_index();
    if (i >= nodes || !moved[i]) return;
    double a[3] = {x[i], y[i], z[i]}, b[3] = {xo[i], yo[i], zo[i]}, d[3];
    mesh_sub(a, b, d);
    atomicMax(best, (u64)__double_as_longlong(sqrt(mesh_dot(d, d))));
}

// A 128-bit two's-complement integer as two words.
struct Wide {
    u64 hi, lo;
};

__device__ Wide wide_add(Wide a, Wide b) {
    Wide r;
    r.lo = a.lo + b.lo;
    r.hi = a.hi + b.hi + (r.lo < a.lo);
    return r;
}

// round(value * 2^32) as src/mesh/exact.rs's ExactSum::of (value >= 0; saturates at the
// largest value, NaN gives 0).
__device__ Wide mesh_fixed(double value) {
    const double two64 = 18446744073709551616.0;
    double r = round(value * 4294967296.0);
    if (!(r >= 0.0)) return Wide{0, 0};
    if (isinf(r) || r >= 0.5 * two64 * two64) return Wide{0x7fffffffffffffffull, ~0ull};
    if (r < two64) return Wide{0, (u64)r};
    double hi = floor(r / two64);
    return Wide{(u64)hi, (u64)(r - hi * two64)};
}

__device__ Wide warp_wide_sum(Wide a) {
    for (int s = WARP / 2; s > 0; s /= 2) {
        Wide b{__shfl_xor_sync(FULL, a.hi, s), __shfl_xor_sync(FULL, a.lo, s)};
        a = wide_add(a, b);
    }
    return a;
}

// *w (hi, lo) += v, exact in any order: the low word's carry goes to the high word.
__device__ void wide_atomic_add(u64 *w, Wide v) {
    u64 old = atomicAdd(&w[1], v.lo);
    u64 hi = v.hi + (old + v.lo < old);
    if (hi) atomicAdd(&w[0], hi);
}

// The quality sums of the counted cells: words[0..2] the η sum, [2..4] F (hi, lo; only cells
// with V > 0), [4] inverted cells, [5] the minimum η as bits (the caller sets it to +inf).
// Grid-stride; every thread of the launch reaches the warp sums.
extern "C" __global__ void mesh_summary(const double *x, const double *y, const double *z,
                                        const u32 *cells, u64 ncells, u32 n,
                                        const u8 *counted, u64 *words) {
    Wide eta_sum{0, 0}, f_sum{0, 0};
    u64 inverted = 0;
    double min_eta = 1.0 / 0.0;
    for (u64 c = thread_index(); c < ncells; c += grid_threads()) {
        if (!counted[c]) continue;
        Corners q = mesh_corners(x, y, z, cells, c, n);
        double v = mesh_volume(q, n), s = mesh_edge_sum(q, n);
        double eta = mesh_mean_ratio_of(v, s, n);
        eta_sum = wide_add(eta_sum, mesh_fixed(eta));
        if (v > 0.0)
            f_sum = wide_add(f_sum, mesh_fixed(s / (6.0 * v)));
        else
            inverted++;
        min_eta = fmin(min_eta, eta);
    }
    eta_sum = warp_wide_sum(eta_sum);
    f_sum = warp_wide_sum(f_sum);
    inverted = warp_sum(inverted);
    for (int s = WARP / 2; s > 0; s /= 2) min_eta = fmin(min_eta, __shfl_xor_sync(FULL, min_eta, s));
    if (lane_id() != 0) return;
    wide_atomic_add(words, eta_sum);
    wide_atomic_add(words + 2, f_sum);
    if (inverted) atomicAdd(&words[4], inverted);
    atomicMin(&words[5], (u64)__double_as_longlong(min_eta));
}

// Ghost positions: the listed nodes' x, y, z into buf (3 per node) and back.
extern "C" __global__ void mesh_pack(const double *x, const double *y, const double *z,
                                     const u32 *list, u64 count, double *buf) {
    u64 k = thread_index();
    if (k >= count) return;
    u32 i = list[k];
    buf[3 * k] = x[i];
    buf[3 * k + 1] = y[i];
    buf[3 * k + 2] = z[i];
}

extern "C" __global__ void mesh_unpack(const double *buf, const u32 *list, u64 count,
                                       double *x, double *y, double *z) {
    u64 k = thread_index();
    if (k >= count) return;
    u32 i = list[k];
    x[i] = buf[3 * k];
    y[i] = buf[3 * k + 1];
    z[i] = buf[3 * k + 2];
}

// ---- opt-colour (src/mesh/smooth/optimise.rs) ------------------------------------------

// ∇η of corner i (geometry::mean_ratio_gradient).
__device__ void mesh_mean_ratio_gradient(const Corners &q, u32 n, u32 i, double *out) {
    double a[4][3];
    double v = mesh_volume_gradient(q, n, a);
    double s = mesh_edge_sum(q, n);
    double eta = mesh_mean_ratio_of(v, s, n);
    out[0] = out[1] = out[2] = 0.0;
    if (eta == 0.0) return;
    double power = n == 4 ? 2.0 / 3.0 : 1.0;
    double g[3] = {0.0, 0.0, 0.0};
    for (u32 k = 0; k < n; k++)
        for (int d = 0; d < 3; d++) g[d] += 2.0 * (q.p[i][d] - q.p[k][d]);
    for (int d = 0; d < 3; d++) out[d] = eta * (power * a[i][d] / v - g[d] / s);
}

// The corners of node i's worst cell (first of the lowest η) with i at `at`; *corner: i's
// place in it.
__device__ Corners mesh_worst_cell(const double *x, const double *y, const double *z,
                                   const u32 *cells, u32 n, const u64 *off, const u32 *slots,
                                   u32 i, const double *at, u32 *corner) {
    double best = 1.0 / 0.0;
    Corners worst;
    for (int k = 0; k < 4; k++) worst.p[k][0] = worst.p[k][1] = worst.p[k][2] = 0.0;
    *corner = 0;
    for (u64 k = off[i]; k < off[i + 1]; k++) {
        u32 slot = slots[k];
        Corners q = mesh_corners(x, y, z, cells, slot / n, n);
        for (int d = 0; d < 3; d++) q.p[slot % n][d] = at[d];
        double eta = mesh_mean_ratio_of(mesh_volume(q, n), mesh_edge_sum(q, n), n);
        if (eta < best) {
            best = eta;
            worst = q;
            *corner = slot % n;
        }
    }
    return worst;
}

// Node i's new position (optimise::optimise_node): its neighbours' centroid if that raises
// its worst η, then up to 4 ascent steps along its worst cell's ∇η, each halved up to 5
// times until the worst η rises.
__device__ void mesh_optimise_node(const double *x, const double *y, const double *z,
                                   const u32 *cells, u32 n, const u64 *off, const u32 *slots,
                                   const u64 *goff, const u32 *adj, u32 i, double *here) {
    here[0] = x[i];
    here[1] = y[i];
    here[2] = z[i];
    double worst = mesh_worst_around(x, y, z, cells, n, off, slots, i, here);
    if (worst < 0.0) return;
    double c[3] = {0.0, 0.0, 0.0};
    for (u64 k = goff[i]; k < goff[i + 1]; k++) {
        u32 j = adj[k];
        c[0] += x[j];
        c[1] += y[j];
        c[2] += z[j];
    }
    double deg = (double)(goff[i + 1] - goff[i]), centroid[3];
    for (int d = 0; d < 3; d++) centroid[d] = here[d] + (c[d] / deg - here[d]);
    double w = mesh_worst_around(x, y, z, cells, n, off, slots, i, centroid);
    if (w >= 0.0 && w > worst) {
        for (int d = 0; d < 3; d++) here[d] = centroid[d];
        worst = w;
    }
    double reach = 0.0;
    for (u64 k = goff[i]; k < goff[i + 1]; k++) {
        u32 j = adj[k];
        double p[3] = {x[j], y[j], z[j]}, e[3];
        mesh_sub(here, p, e);
        reach += sqrt(mesh_dot(e, e));
    }
    reach /= fmax(deg, 1.0);
    for (int step = 0; step < 4; step++) {
        u32 corner;
        Corners q = mesh_worst_cell(x, y, z, cells, n, off, slots, i, here, &corner);
        double g[3];
        mesh_mean_ratio_gradient(q, n, corner, g);
        double norm = sqrt(mesh_dot(g, g));
        if (norm == 0.0) return;
        double t = 0.1 * reach / norm;
        bool raised = false;
        for (int h = 0; h < 5; h++) {
            double at[3] = {here[0] + t * g[0], here[1] + t * g[1], here[2] + t * g[2]};
            double wa = mesh_worst_around(x, y, z, cells, n, off, slots, i, at);
            if (wa >= 0.0 && wa > worst) {
                for (int d = 0; d < 3; d++) here[d] = at[d];
                worst = wa;
                raised = true;
                break;
            }
            t *= 0.5;
        }
        if (!raised) return;
    }
}

// One colour class: every active node of colour `cls` to its optimised position, in place
// (nodes of a class share no cell, so none reads another's position); the largest move as
// bits in *best.
extern "C" __global__ void mesh_opt_class(double *x, double *y, double *z, const u32 *cells,
                                          u32 n, const u64 *off, const u32 *slots,
                                          const u64 *goff, const u32 *adj, const u8 *active,
                                          const u32 *colour, u32 cls, u32 nodes, u64 *best) {
    u64 i = thread_index();
    if (i >= nodes || !active[i] || colour[i] != cls) return;
    double p[3];
    mesh_optimise_node(x, y, z, cells, n, off, slots, goff, adj, (u32)i, p);
    double here[3] = {x[i], y[i], z[i]}, d[3];
    mesh_sub(p, here, d);
    atomicMax(best, (u64)__double_as_longlong(sqrt(mesh_dot(d, d))));
    x[i] = p[0];
    y[i] = p[1];
    z[i] = p[2];
}
