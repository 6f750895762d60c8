// Mesh smoothing on the GPU (host side: src/mesh/smooth/gpu.rs; the CPU twins:
// src/mesh/geometry.rs, src/mesh/smooth/l2v.rs and laplace.rs, which these follow operation
// by operation). Positions are three arrays x, y, z; cells a flat corner list (`corners` = 4
// for tets, 3 for triangles); the node-to-cell CSR lists slots (cell * corners + corner) in
// ascending cell order, so every node sums its cells' contributions in the CPU's order: no
// atomics, the same sums.
//
// mesh_l2v_node: each active node's gradient and Hessian block of F, summed over its corners'
// terms of f = S / (6V) in slot order, each from the corner's view of its cell (W = 6V linear
// and S quadratic in the node's move: src/mesh/corner.rs), computed where it is summed (the
// CPU does the same in its node loop), then its step -P^-1 g (scalar: half the block's
// trace; block: the 3x3 solve, scalar where not positive definite), halved up to 4 times
// until none of its cells inverts and their worst mean ratio does not fall, else zero; the
// trials come from the views.
// mesh_laplace_node: each active node's move to its neighbours' centroid (smart: only when
// its worst mean ratio rises).
// The rest keeps the whole iteration on the device (src/mesh/smooth/gpu.rs; the CPU twins in
// src/mesh/smooth/guard.rs and quality.rs): mesh_apply moves the nodes from their saved
// positions, mesh_guard_pass flags the moved corners of cells that inverted or fell below the
// floor and mesh_undo sends them back; the same pass reduces the quality sums (F and the η
// sum as 128-bit integers of 2^-32 units, exact in any order, as src/mesh/exact.rs does) and
// the largest move, which are the iteration's once a round sends nothing back (mesh_summary
// takes the sums alone); mesh_pack and mesh_unpack carry ghost positions.
// mesh_opt_class: opt-colour's moves of one colour class, in place (src/mesh/smooth/optimise.rs).
// This file is compiled without FMA contraction (src/device/kernel.rs), so every +, * and /
// rounds as on the CPU.
//
// The geometry is templated on the corner count N (4 or 3; each kernel picks it once from
// its `n`): with N known every loop unrolls and every array index is a constant, so the
// corners and gradients stay in registers (a runtime corner count or a runtime corner index
// put them in local memory, a round trip through L1/L2 for every access). A corner chosen at
// run time is read or written through mesh_place/mesh_pick, selects over the N corners.

struct Corners {
    double p[4][3];
};

template <u32 N>
__device__ __forceinline__ Corners mesh_corners(const double *x, const double *y,
                                                const double *z, const u32 *cells, u64 c) {
    Corners q;
#pragma unroll
    for (u32 k = 0; k < 4; k++) {
        u32 n = k < N ? cells[c * N + k] : 0;
        q.p[k][0] = k < N ? x[n] : 0.0;
        q.p[k][1] = k < N ? y[n] : 0.0;
        q.p[k][2] = k < N ? z[n] : 0.0;
    }
    return q;
}

// Corner k (< N, known at run time only) of q moved to `at`.
template <u32 N>
__device__ __forceinline__ void mesh_place(Corners &q, u32 k, const double *at) {
#pragma unroll
    for (u32 j = 0; j < N; j++)
        if (j == k) {
            q.p[j][0] = at[0];
            q.p[j][1] = at[1];
            q.p[j][2] = at[2];
        }
}

// Row k (< N, known at run time only) of a 4 x 3 array into out.
template <u32 N>
__device__ __forceinline__ void mesh_pick(const double (&rows)[4][3], u32 k, double *out) {
    out[0] = out[1] = out[2] = 0.0;
#pragma unroll
    for (u32 j = 0; j < N; j++)
        if (j == k) {
            out[0] = rows[j][0];
            out[1] = rows[j][1];
            out[2] = rows[j][2];
        }
}

__device__ __forceinline__ void mesh_sub(const double *a, const double *b, double *d) {
    d[0] = a[0] - b[0];
    d[1] = a[1] - b[1];
    d[2] = a[2] - b[2];
}

__device__ __forceinline__ void mesh_cross(const double *a, const double *b, double *c) {
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

__device__ __forceinline__ double mesh_dot(const double *a, const double *b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

template <u32 N>
__device__ __forceinline__ double mesh_volume(const Corners &q) {
    double e1[3], e2[3];
    mesh_sub(q.p[1], q.p[0], e1);
    mesh_sub(q.p[2], q.p[0], e2);
    if (N == 4) {
        double e3[3], c[3];
        mesh_sub(q.p[3], q.p[0], e3);
        mesh_cross(e2, e3, c);
        return mesh_dot(e1, c) / 6.0;
    }
    return 0.5 * (e1[0] * e2[1] - e1[1] * e2[0]);
}

template <u32 N>
__device__ __forceinline__ double mesh_edge_sum(const Corners &q) {
    double s = 0.0;
#pragma unroll
    for (u32 i = 0; i < N; i++)
#pragma unroll
        for (u32 j = i + 1; j < N; j++) {
            double e[3];
            mesh_sub(q.p[i], q.p[j], e);
            s += mesh_dot(e, e);
        }
    return s;
}

template <u32 N>
__device__ __forceinline__ double mesh_mean_ratio_of(double v, double s) {
    if (v <= 0.0 || s <= 0.0) return 0.0;
    if (N == 4) {
        double t = cbrt(3.0 * v);
        return 12.0 * t * t / s;
    }
    return 4.0 * sqrt(3.0) * v / s;
}

// η³ without the cube root (geometry::mean_ratio_cubed_of): orders cells as η does; l2v's
// safeguard compares cells by it.
template <u32 N>
__device__ __forceinline__ double mesh_mean_ratio_cubed_of(double v, double s) {
    if (v <= 0.0 || s <= 0.0) return 0.0;
    if (N == 4) return 15552.0 * v * v / (s * s * s);
    double e = 4.0 * sqrt(3.0) * v / s;
    return e * e * e;
}

// Node positions packed as (x, y, z, unused) for the l2v node kernel: a corner is two loads
// from one 32-byte sector (from the three arrays x, y, z: three sectors, three loads).
struct __align__(32) Point {
    double x, y, z, unused;
};

extern "C" __global__ void mesh_pack_points(const double *x, const double *y, const double *z,
                                            u32 nodes, Point *xyz) {
    u64 i = thread_index();
    if (i >= nodes) return;
    xyz[i] = Point{x[i], y[i], z[i], 0.0};
}

// Cell c's node ids (a tet's four are one 16-byte load).
template <u32 N>
__device__ __forceinline__ void mesh_cell_ids(const u32 *__restrict__ cells, u64 c, u32 (&id)[4]) {
    id[0] = id[1] = id[2] = id[3] = 0;
    if (N == 4) {
        uint4 v = __ldg(reinterpret_cast<const uint4 *>(cells) + c);
        id[0] = v.x, id[1] = v.y, id[2] = v.z, id[3] = v.w;
    } else {
#pragma unroll
        for (u32 k = 0; k < N; k++) id[k] = __ldg(cells + c * N + k);
    }
}

// The corners of nodes id[0..N] from the packed positions.
template <u32 N>
__device__ __forceinline__ Corners mesh_corners_of(const Point *__restrict__ xyz, const u32 (&id)[4]) {
    Corners q;
#pragma unroll
    for (u32 k = 0; k < 4; k++) {
        double2 xy = k < N ? __ldg(reinterpret_cast<const double2 *>(xyz + id[k])) : double2{0.0, 0.0};
        q.p[k][0] = xy.x;
        q.p[k][1] = xy.y;
        q.p[k][2] = k < N ? __ldg(&xyz[id[k]].z) : 0.0;
    }
    return q;
}

// Cell c's corners from the packed positions.
template <u32 N>
__device__ __forceinline__ Corners mesh_corners_packed(const Point *__restrict__ xyz,
                                                       const u32 *__restrict__ cells, u64 c) {
    u32 id[4];
    mesh_cell_ids<N>(cells, c, id);
    return mesh_corners_of<N>(xyz, id);
}

// Corner k's view of cell c (src/mesh/corner.rs, the same operations in the same order):
// W = 6V, A = dW/dP, S and g = dS/dP as functions of the corner's position P (the node's
// own), with the other corners taken in the order that keeps the orientation: for a tet
// (j, k, l) = (1, 2, 3), (0, 3, 2), (0, 1, 3), (0, 2, 1), W = (P - x_j).A,
// A = -(x_k - x_j) x (x_l - x_j); for a triangle (j, k) = (1, 2), (2, 0), (0, 1),
// A = 3 (-u_y, u_x, 0), u = x_k - x_j. W is linear and S quadratic in P's move, so the
// safeguard's trials need only these 8 numbers.
struct View {
    double w, a[3], s, g[3];
};

__device__ __forceinline__ void mesh_load_point(const Point *__restrict__ xyz, u32 id, double *p) {
    double2 xy = __ldg(reinterpret_cast<const double2 *>(xyz + id));
    p[0] = xy.x;
    p[1] = xy.y;
    p[2] = __ldg(&xyz[id].z);
}

// The view of the corner at P with the other corners xj, xk, xl (xl unused for triangles)
// in the order that keeps the orientation.
template <u32 N>
__device__ __forceinline__ View mesh_view_from(const double *P, const double *xj,
                                               const double *xk, const double *xl) {
    View v;
    if (N == 4) {
        double dj[3], dk[3], dl[3], u[3], w[3], vu[3], cr[3];
        mesh_sub(P, xj, dj);
        mesh_sub(P, xk, dk);
        mesh_sub(P, xl, dl);
        mesh_sub(xk, xj, u);
        mesh_sub(xl, xj, w);
        mesh_cross(u, w, cr);
#pragma unroll
        for (int d = 0; d < 3; d++) v.a[d] = -cr[d];
        mesh_sub(w, u, vu);
        double own = mesh_dot(dj, dj) + mesh_dot(dk, dk) + mesh_dot(dl, dl);
        double face = mesh_dot(u, u) + mesh_dot(w, w) + mesh_dot(vu, vu);
        v.w = mesh_dot(dj, v.a);
        v.s = own + face;
#pragma unroll
        for (int d = 0; d < 3; d++) v.g[d] = 2.0 * (dj[d] + dk[d] + dl[d]);
    } else {
        double dj[3], dk[3], u[3];
        mesh_sub(P, xj, dj);
        mesh_sub(P, xk, dk);
        mesh_sub(xk, xj, u);
        v.a[0] = -(3.0 * u[1]);
        v.a[1] = 3.0 * u[0];
        v.a[2] = 0.0;
        v.w = mesh_dot(dj, v.a);
        v.s = mesh_dot(dj, dj) + mesh_dot(dk, dk) + mesh_dot(u, u);
#pragma unroll
        for (int d = 0; d < 3; d++) v.g[d] = 2.0 * (dj[d] + dk[d]);
    }
    return v;
}

// The view of corner `slot` of its cell with the corner at P (the other corners loaded).
template <u32 N>
__device__ __forceinline__ View mesh_corner_view(const Point *__restrict__ xyz,
                                                 const u32 *__restrict__ cells, u32 slot,
                                                 const double *P) {
    u32 c = slot / N, k = slot % N;
    double xj[3], xk[3], xl[3] = {0.0, 0.0, 0.0};
    if (N == 4) {
        uint4 id = __ldg(reinterpret_cast<const uint4 *>(cells) + c);
        u32 j = k == 0 ? id.y : id.x;
        u32 kk = k == 0 ? id.z : k == 1 ? id.w : k == 2 ? id.y : id.z;
        u32 l = k == 0 ? id.w : k == 1 ? id.z : k == 2 ? id.w : id.y;
        mesh_load_point(xyz, j, xj);
        mesh_load_point(xyz, kk, xk);
        mesh_load_point(xyz, l, xl);
    } else {
        u32 id0 = __ldg(cells + c * N), id1 = __ldg(cells + c * N + 1), id2 = __ldg(cells + c * N + 2);
        mesh_load_point(xyz, k == 0 ? id1 : k == 1 ? id2 : id0, xj);
        mesh_load_point(xyz, k == 0 ? id2 : k == 1 ? id0 : id1, xk);
    }
    return mesh_view_from<N>(P, xj, xk, xl);
}

// Corner k's view of the cell with corners q (corner.rs's view): the same selection of the
// other corners as mesh_corner_view, from corners already loaded.
template <u32 N>
__device__ __forceinline__ View mesh_view_of(const Corners &q, u32 k) {
    double P[3], xj[3], xk[3], xl[3] = {0.0, 0.0, 0.0};
#pragma unroll
    for (int d = 0; d < 3; d++) {
        if (N == 4) {
            P[d] = k == 0 ? q.p[0][d] : k == 1 ? q.p[1][d] : k == 2 ? q.p[2][d] : q.p[3][d];
            xj[d] = k == 0 ? q.p[1][d] : q.p[0][d];
            xk[d] = k == 0 ? q.p[2][d] : k == 1 ? q.p[3][d] : k == 2 ? q.p[1][d] : q.p[2][d];
            xl[d] = k == 0 ? q.p[3][d] : k == 1 ? q.p[2][d] : k == 2 ? q.p[3][d] : q.p[1][d];
        } else {
            P[d] = k == 0 ? q.p[0][d] : k == 1 ? q.p[1][d] : q.p[2][d];
            xj[d] = k == 0 ? q.p[1][d] : k == 1 ? q.p[2][d] : q.p[0][d];
            xk[d] = k == 0 ? q.p[2][d] : k == 1 ? q.p[0][d] : q.p[1][d];
        }
    }
    return mesh_view_from<N>(P, xj, xk, xl);
}

// eta^3 = K W^p / S^3 (corner.rs: 432 W^2 / S^3 for tets, (2/sqrt 3)^3 W^3 / S^3 for triangles).
#define MESH_TET_ETA3 432.0
#define MESH_TRIANGLE_ETA3 1.539600717839002

// eta^3 of a cell from its W (> 0) and S (corner::eta_cubed).
template <u32 N>
__device__ __forceinline__ double mesh_eta_cubed(double w, double s) {
    double s3 = s * s * s;
    if (N == 4) return MESH_TET_ETA3 * w * w / s3;
    return MESH_TRIANGLE_ETA3 * w * w * w / s3;
}

template <u32 N>
__device__ __forceinline__ double mesh_view_eta_cubed(const View &v) {
    return mesh_eta_cubed<N>(v.w, v.s);
}

// The view's l2v terms (CornerView::terms): the gradient t[0..3] of f = S / W and the
// Hessian block t[3..9] (xx yy zz xy xz yz; the diagonal t[3..6] only unless `block`).
template <u32 N>
__device__ __forceinline__ void mesh_view_terms(const View &v, u32 block, double *t) {
    double r = 1.0 / v.w;
    double f = v.s * r, rr = r * r;
    double diag = 2.0 * ((double)N - 1.0) * r;
#pragma unroll
    for (int d = 0; d < 3; d++) t[d] = (v.g[d] - f * v.a[d]) * r;
    const int rows[6] = {0, 1, 2, 0, 0, 1}, cols[6] = {0, 1, 2, 1, 2, 2};
#pragma unroll
    for (int e = 0; e < 6; e++) {
        if (e >= 3 && !block) break;
        int j = rows[e], k = cols[e];
        double h = rr * (2.0 * f * v.a[j] * v.a[k] - (v.g[j] * v.a[k] + v.a[j] * v.g[k]));
        t[3 + e] = e < 3 ? diag + h : h;
    }
}

// Whether the view's cell stays valid with eta^3 >= floor when the corner moves by t * step
// (CornerView::passes; t a power of two; along = (A.step, g.step, (n - 1)|step|^2)).
template <u32 N>
__device__ __forceinline__ bool mesh_view_passes(const View &v, double t, const double *along,
                                                 double floor) {
    double w = v.w + t * along[0];
    double s = v.s + t * along[1] + t * t * along[2];
    double s3 = s * s * s;
    double q = N == 4 ? MESH_TET_ETA3 * w * w : MESH_TRIANGLE_ETA3 * w * w * w;
    return w > 0.0 && q >= floor * s3;
}

template <u32 N>
__device__ __forceinline__ void mesh_view_along(const View &v, const double *step, double *along) {
    along[0] = mesh_dot(v.a, step);
    along[1] = mesh_dot(v.g, step);
    along[2] = ((double)N - 1.0) * mesh_dot(step, step);
}

// The worst mean ratio of node i's cells with i at `at`; -1 when one would invert.
template <u32 N>
__device__ __forceinline__ double mesh_worst_around(const double *x, const double *y,
                                                    const double *z, const u32 *cells,
                                                    const u64 *off, const u32 *slots, u32 i,
                                                    const double *at) {
    double worst = 1.0 / 0.0;
    for (u64 k = off[i]; k < off[i + 1]; k++) {
        u32 slot = slots[k];
        Corners q = mesh_corners<N>(x, y, z, cells, slot / N);
        mesh_place<N>(q, slot % N, at);
        double v = mesh_volume<N>(q);
        if (v <= 0.0) return -1.0;
        worst = fmin(worst, mesh_mean_ratio_of<N>(v, mesh_edge_sum<N>(q)));
    }
    return worst;
}

__device__ __forceinline__ bool mesh_solve_spd3(const double *h, const double *r, double *out) {
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

// Node i's step: its corners' terms summed in slot order (each from its view of the cell,
// computed where it is summed: src/mesh/smooth/l2v.rs's gather), with the lowest eta^3 of
// its cells as they stand, the preconditioned step, then the safeguard: the first of the
// scales 1, 1/2, .., 1/16 at which every cell passes (safeguard_scale). The full step is
// tried first, stopping at the first failing cell; only if it fails are the four halvings
// tried together in one more pass (a bit each), so no lane repeats a pass per halving.
template <u32 N>
__device__ __forceinline__ void mesh_l2v_step(const Point *__restrict__ xyz,
                                              const u32 *__restrict__ cells, const u64 *off,
                                              const u32 *slots, u32 i, u32 block, double *m) {
    Point own = xyz[i];
    const double P[3] = {own.x, own.y, own.z};
    double g[3] = {0.0, 0.0, 0.0}, h[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    double worst = 1.0 / 0.0;
    u64 begin = off[i], end = off[i + 1];
    for (u64 k = begin; k < end; k++) {
        View v = mesh_corner_view<N>(xyz, cells, slots[k], P);
        if (v.w <= 0.0) return;
        worst = fmin(worst, mesh_view_eta_cubed<N>(v));
        double t[9];
        mesh_view_terms<N>(v, block, t);
#pragma unroll
        for (int d = 0; d < 3; d++) g[d] += t[d];
#pragma unroll
        for (int d = 0; d < 6; d++)
            if (d < 3 || block) h[d] += t[3 + d];
    }
    double mg[3] = {-g[0], -g[1], -g[2]}, step[3];
    if (!(block && mesh_solve_spd3(h, mg, step))) {
        double p = 0.5 * (h[0] + h[1] + h[2]);
#pragma unroll
        for (int d = 0; d < 3; d++) step[d] = p > 0.0 ? mg[d] / p : 0.0;
    }
    bool whole = true;
    for (u64 k = begin; k < end && whole; k++) {
        View v = mesh_corner_view<N>(xyz, cells, slots[k], P);
        double along[3];
        mesh_view_along<N>(v, step, along);
        whole = mesh_view_passes<N>(v, 1.0, along, worst);
    }
    double scale = 1.0;
    if (!whole) {
        u32 alive = 0xf;  // bit b: the scale 2^-(b + 1)
        for (u64 k = begin; k < end && alive; k++) {
            View v = mesh_corner_view<N>(xyz, cells, slots[k], P);
            double along[3];
            mesh_view_along<N>(v, step, along);
#pragma unroll
            for (u32 b = 0; b < 4; b++)
                if ((alive >> b & 1) && !mesh_view_passes<N>(v, 1.0 / (double)(2u << b), along, worst))
                    alive &= ~(1u << b);
        }
        if (!alive) return;
        scale = 1.0 / (double)(2u << (__ffs(alive) - 1));
    }
    m[0] = scale * step[0];
    m[1] = scale * step[1];
    m[2] = scale * step[2];
}

extern "C" __global__ void mesh_l2v_node(const Point *xyz, const u32 *cells, u32 n,
                                         const u64 *off, const u32 *slots, const u8 *active,
                                         u32 nodes, u32 block, double *moves) {
    u64 i = thread_index();
    if (i >= nodes) return;
    double *m = moves + 3 * i;
    m[0] = m[1] = m[2] = 0.0;
    if (!active[i]) return;
    if (n == 4)
        mesh_l2v_step<4>(xyz, cells, off, slots, (u32)i, block, m);
    else
        mesh_l2v_step<3>(xyz, cells, off, slots, (u32)i, block, m);
}

// Node i's move to its neighbours' centroid, into d (laplace::centroid_move).
__device__ __forceinline__ void mesh_centroid_move(const double *x, const double *y,
                                                   const double *z, const u64 *goff,
                                                   const u32 *adj, u32 i, double *d) {
    double c[3] = {0.0, 0.0, 0.0};
    for (u64 k = goff[i]; k < goff[i + 1]; k++) {
        u32 j = adj[k];
        c[0] += x[j];
        c[1] += y[j];
        c[2] += z[j];
    }
    double deg = (double)(goff[i + 1] - goff[i]);
    d[0] = c[0] / deg - x[i];
    d[1] = c[1] / deg - y[i];
    d[2] = c[2] / deg - z[i];
}

template <u32 N>
__device__ __forceinline__ void mesh_laplace_move(const double *x, const double *y,
                                                  const double *z, const u32 *cells,
                                                  const u64 *off, const u32 *slots,
                                                  const u64 *goff, const u32 *adj, u32 i,
                                                  u32 smart, double *m) {
    double d[3];
    mesh_centroid_move(x, y, z, goff, adj, i, d);
    if (smart) {
        double here[3] = {x[i], y[i], z[i]};
        double at[3] = {here[0] + d[0], here[1] + d[1], here[2] + d[2]};
        double now = mesh_worst_around<N>(x, y, z, cells, off, slots, i, here);
        double then = mesh_worst_around<N>(x, y, z, cells, off, slots, i, at);
        if (now < 0.0 || then < 0.0 || !(then > now)) return;
    }
    m[0] = d[0];
    m[1] = d[1];
    m[2] = d[2];
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
    if (n == 4)
        mesh_laplace_move<4>(x, y, z, cells, off, slots, goff, adj, (u32)i, smart, m);
    else
        mesh_laplace_move<3>(x, y, z, cells, off, slots, goff, adj, (u32)i, smart, m);
}

// ---- The device-resident iteration ----------------------------------------------------

// The largest of `v` over the 32 lanes of a full warp, in every lane.
__device__ __forceinline__ u64 mesh_warp_max(u64 v) {
    for (int s = WARP / 2; s > 0; s /= 2) v = max(v, (u64)__shfl_xor_sync(FULL, v, s));
    return v;
}

// *best = max(*best, v) over the launch, one atomic per warp (one per thread on the same
// address serialises at L2: ~25 ms for 10M nodes). Every lane of the warp must call.
__device__ __forceinline__ void mesh_max_into(u64 *best, u64 v) {
    v = mesh_warp_max(v);
    if (lane_id() == 0 && v) atomicMax(best, v);
}

// Nodes that move (active, non-zero move) to `old + scale * move`, every other node to `old`
// (in x, y, z and the packed xyz); `moved` marks the movers.
extern "C" __global__ void mesh_apply(const double *xo, const double *yo, const double *zo,
                                      const double *moves, const u8 *active, u32 nodes,
                                      double scale, double *x, double *y, double *z,
                                      Point *xyz, u8 *moved) {
    u64 i = thread_index();
    if (i >= nodes) return;
    const double *m = moves + 3 * i;
    bool go = active[i] && (m[0] != 0.0 || m[1] != 0.0 || m[2] != 0.0);
    moved[i] = go;
    x[i] = go ? xo[i] + scale * m[0] : xo[i];
    y[i] = go ? yo[i] + scale * m[1] : yo[i];
    z[i] = go ? zo[i] + scale * m[2] : zo[i];
    xyz[i] = Point{x[i], y[i], z[i], 0.0};
}

// Flagged nodes back to `old`, no longer moved; counts them (one atomic per warp).
extern "C" __global__ void mesh_undo(const double *xo, const double *yo, const double *zo,
                                     u32 nodes, u8 *moved, u8 *flag, double *x, double *y,
                                     double *z, Point *xyz, u64 *count) {
    u64 i = thread_index();
    u64 undone = 0;
    if (i < nodes && flag[i]) {
        flag[i] = 0;
        moved[i] = 0;
        x[i] = xo[i];
        y[i] = yo[i];
        z[i] = zo[i];
        xyz[i] = Point{xo[i], yo[i], zo[i], 0.0};
        undone = 1;
    }
    undone = warp_sum(undone);
    if (lane_id() == 0 && undone) atomicAdd(count, undone);
}

// A 128-bit two's-complement integer as two words.
struct Wide {
    u64 hi, lo;
};

__device__ __forceinline__ Wide wide_add(Wide a, Wide b) {
    Wide r;
    r.lo = a.lo + b.lo;
    r.hi = a.hi + b.hi + (r.lo < a.lo);
    return r;
}

// round(value * 2^32) as src/mesh/exact.rs's ExactSum::of (value >= 0; saturates at the
// largest value, NaN gives 0).
__device__ __forceinline__ Wide mesh_fixed(double value) {
    const double two64 = 18446744073709551616.0;
    double r = round(value * 4294967296.0);
    if (!(r >= 0.0)) return Wide{0, 0};
    if (isinf(r) || r >= 0.5 * two64 * two64) return Wide{0x7fffffffffffffffull, ~0ull};
    if (r < two64) return Wide{0, (u64)r};
    double hi = floor(r / two64);
    return Wide{(u64)hi, (u64)(r - hi * two64)};
}

__device__ __forceinline__ Wide warp_wide_sum(Wide a) {
    for (int s = WARP / 2; s > 0; s /= 2) {
        Wide b{__shfl_xor_sync(FULL, a.hi, s), __shfl_xor_sync(FULL, a.lo, s)};
        a = wide_add(a, b);
    }
    return a;
}

// *w (hi, lo) += v, exact in any order: the low word's carry goes to the high word.
__device__ __forceinline__ void wide_atomic_add(u64 *w, Wide v) {
    u64 old = atomicAdd(&w[1], v.lo);
    u64 hi = v.hi + (old + v.lo < old);
    if (hi) atomicAdd(&w[0], hi);
}

// One thread's part of the quality sums (grid-stride over the cells).
struct Sums {
    Wide eta_sum, f_sum;
    u64 inverted;
    double min_eta;
};

// Cell c's mean ratio, F term and inversion into the thread's sums (quality::summarize).
__device__ __forceinline__ void mesh_add_cell(Sums &t, double v, double s, double eta) {
    t.eta_sum = wide_add(t.eta_sum, mesh_fixed(eta));
    if (v > 0.0)
        t.f_sum = wide_add(t.f_sum, mesh_fixed(s / (6.0 * v)));
    else
        t.inverted++;
    t.min_eta = fmin(t.min_eta, eta);
}

// The sums of the counted cells (grid-stride) and, with GUARD, the guard's flags: the moved
// corners of every cell with a moved corner that inverted or (has_floor) has η below `floor`
// (guard::bad_nodes). A cell's corners, V, S and η are taken once for both.
template <u32 N, bool GUARD>
__device__ __forceinline__ Sums mesh_cell_pass(const Point *__restrict__ xyz,
                                               const u32 *__restrict__ cells, u64 ncells,
                                               const u8 *counted, const u8 *moved, double floor,
                                               u32 has_floor, u8 *flag) {
    Sums t{{0, 0}, {0, 0}, 0, 1.0 / 0.0};
    for (u64 c = thread_index(); c < ncells; c += grid_threads()) {
        bool count = counted[c] != 0, any = false;
        u32 id[4];
        mesh_cell_ids<N>(cells, c, id);
        if (GUARD) {
#pragma unroll
            for (u32 k = 0; k < N; k++) any |= moved[id[k]] != 0;
        }
        if (!any && !count) continue;
        Corners q = mesh_corners_of<N>(xyz, id);
        double v = mesh_volume<N>(q), s = mesh_edge_sum<N>(q);
        double eta = mesh_mean_ratio_of<N>(v, s);
        if (any && (v <= 0.0 || (has_floor && eta < floor))) {
#pragma unroll
            for (u32 k = 0; k < N; k++)
                if (moved[id[k]]) flag[id[k]] = 1;
        }
        if (count) mesh_add_cell(t, v, s, eta);
    }
    return t;
}

// The launch's sums into words[0..6]: [0..2] the η sum, [2..4] F (hi, lo; only cells with
// V > 0), [4] inverted cells, [5] the minimum η as bits (the caller sets it to +inf). Every
// thread of the launch must call.
__device__ __forceinline__ void mesh_sums_into(u64 *words, Sums t) {
    Wide eta_sum = warp_wide_sum(t.eta_sum);
    Wide f_sum = warp_wide_sum(t.f_sum);
    u64 inverted = warp_sum(t.inverted);
    double min_eta = t.min_eta;
    for (int s = WARP / 2; s > 0; s /= 2) min_eta = fmin(min_eta, __shfl_xor_sync(FULL, min_eta, s));
    if (lane_id() != 0) return;
    wide_atomic_add(words, eta_sum);
    wide_atomic_add(words + 2, f_sum);
    if (inverted) atomicAdd(&words[4], inverted);
    atomicMin(&words[5], (u64)__double_as_longlong(min_eta));
}

// The quality sums of the counted cells into words[0..6] (mesh_sums_into). Grid-stride.
extern "C" __global__ void mesh_summary(const Point *xyz, const u32 *cells, u64 ncells, u32 n,
                                        const u8 *counted, u64 *words) {
    Sums t = n == 4 ? mesh_cell_pass<4, false>(xyz, cells, ncells, counted, 0, 0.0, 0, 0)
                    : mesh_cell_pass<3, false>(xyz, cells, ncells, counted, 0, 0.0, 0, 0);
    mesh_sums_into(words, t);
}

// One round of the guard's checks (then mesh_undo sends the flagged nodes back): the flags
// of the bad cells' moved corners, and, of the positions as they stand, the quality sums
// into words[0..6] and the largest move of a moved node from `old` into words[6] (bits of a
// double >= 0). When the round sends no node back on any rank, the positions stay as this
// pass saw them, so these are the iteration's summary and largest move: no further pass
// over the cells or the nodes. Grid-stride.
extern "C" __global__ void mesh_guard_pass(const Point *xyz, const double *xo, const double *yo,
                                           const double *zo, const u32 *cells, u64 ncells,
                                           u32 n, u32 nodes, const u8 *counted,
                                           const u8 *moved, double floor, u32 has_floor,
                                           u8 *flag, u64 *words) {
    Sums t = n == 4 ? mesh_cell_pass<4, true>(xyz, cells, ncells, counted, moved, floor,
                                              has_floor, flag)
                    : mesh_cell_pass<3, true>(xyz, cells, ncells, counted, moved, floor,
                                              has_floor, flag);
    mesh_sums_into(words, t);
    u64 most = 0;
    for (u64 i = thread_index(); i < nodes; i += grid_threads()) {
        if (!moved[i]) continue;
        double a[3], b[3] = {xo[i], yo[i], zo[i]}, d[3];
        mesh_load_point(xyz, i, a);
        mesh_sub(a, b, d);
        most = max(most, (u64)__double_as_longlong(sqrt(mesh_dot(d, d))));
    }
    mesh_max_into(words + 6, most);
}

// Ghost positions: the listed nodes' x, y, z into buf (3 per node) and back (into x, y, z and
// the packed xyz).
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
                                       double *x, double *y, double *z, Point *xyz) {
    u64 k = thread_index();
    if (k >= count) return;
    u32 i = list[k];
    x[i] = buf[3 * k];
    y[i] = buf[3 * k + 1];
    z[i] = buf[3 * k + 2];
    xyz[i] = Point{buf[3 * k], buf[3 * k + 1], buf[3 * k + 2], 0.0};
}

// ---- opt-colour (src/mesh/smooth/optimise.rs) ------------------------------------------

// A node's group of lanes in opt-colour: `size` lanes (a power of two, at most a warp)
// share the node's cells, `rank` is this lane's place in the group, `mask` the group's lanes.
// Lanes of a group go the same way (every decision is taken on values reduced over the
// group); groups of a warp need not.
struct Group {
    u32 size, rank, mask;
};

__device__ __forceinline__ Group mesh_group(u32 size) {
    u32 lane = lane_id();
    u32 mask = size == WARP ? FULL : ((1u << size) - 1u) << (lane & ~(size - 1u));
    return Group{size, lane % size, mask};
}

// The lowest of the group's lanes' values, in every lane of the group. A lane that met an
// inverted cell holds -1 (below any eta^3), so the group's lowest is -1 then.
__device__ __forceinline__ double mesh_group_min(Group g, double v) {
    for (u32 s = g.size / 2; s > 0; s /= 2) {
        double o = __shfl_xor_sync(g.mask, v, s);
        if (o < v) v = o;
    }
    return v;
}

// The least of the group's lanes' values, in every lane of the group.
__device__ __forceinline__ u32 mesh_group_least(Group g, u32 v) {
    for (u32 s = g.size / 2; s > 0; s /= 2) v = min(v, __shfl_xor_sync(g.mask, v, s));
    return v;
}

// A lane's part of one trial of the view search: its lowest eta^3 (-1 once a cell inverts)
// and where (the cell's offset in the node's CSR row; the first on ties).
struct Trial {
    double worst;
    u32 where;
};

// One cell's trial: W and S with the corner moved by delta (CornerView::moved), then its
// eta^3 against the lane's lowest.
template <u32 N>
__device__ __forceinline__ void mesh_view_trial(const View &v, const double *delta, double gamma,
                                                u32 k, Trial &t) {
    double w = v.w + mesh_dot(v.a, delta);
    double s = v.s + mesh_dot(v.g, delta) + gamma;
    if (!(w > 0.0)) {
        t.worst = -1.0;
        return;
    }
    double eta3 = mesh_eta_cubed<N>(w, s);
    if (eta3 < t.worst) {
        t.worst = eta3;
        t.where = k;
    }
}

// A trial of the view search (optimise::worst_of): node i moved by delta from `start`; the
// lane's part (mesh_opt_worst_of and mesh_opt_place_of reduce it). Lane `rank` of the group
// holds the views of the cells off[i] + rank + m size, m < M, in registers; a node with more
// cells has the rest's views taken again from the corners (the same numbers).
template <u32 N, u32 M>
__device__ __forceinline__ Trial mesh_opt_trial(const View (&views)[M],
                                                const Point *__restrict__ xyz,
                                                const u32 *__restrict__ cells, u64 first,
                                                u64 end, const u32 *slots, const double *start,
                                                const double *delta, Group g) {
    double gamma = ((double)N - 1.0) * mesh_dot(delta, delta);
    Trial t{1.0 / 0.0, ~0u};
#pragma unroll
    for (u32 m = 0; m < M; m++) {
        u32 k = g.rank + m * g.size;
        if (first + k < end) mesh_view_trial<N>(views[m], delta, gamma, k, t);
    }
    for (u32 k = g.rank + M * g.size; first + k < end; k += g.size)
        mesh_view_trial<N>(mesh_corner_view<N>(xyz, cells, slots[first + k], start), delta, gamma,
                           k, t);
    return t;
}

// A trial's worst eta^3 over the group (-1 when a cell would invert), in every lane.
__device__ __forceinline__ double mesh_opt_worst_of(Group g, const Trial &t) {
    return mesh_group_min(g, t.worst);
}

// Where the trial's worst (`worst`, from mesh_opt_worst_of) is: the CSR index of the first
// of the node's cells that has it, as the serial loop finds it.
__device__ __forceinline__ u64 mesh_opt_place_of(Group g, const Trial &t, double worst, u64 first) {
    return first + mesh_group_least(g, t.worst == worst ? t.where : ~0u);
}

// The worst η³ of node i's cells with i at `at` from the cells' V and S
// (optimise::worst_around), -1 when one would invert; with VIEWS (`at` the node's own
// position, which the loaded corners hold) also the views of the lane's first M cells
// (mesh_opt_trial), in the same pass over their corners. The group's lanes take every
// size-th cell, then reduce. A lane's first M cells are loaded stage by stage (their slots,
// then their node ids, then their corners), so that their loads overlap; the rest one at a
// time. Corners come from the packed positions.
template <u32 N, u32 M, bool VIEWS>
__device__ __forceinline__ double mesh_opt_cells(const Point *__restrict__ xyz,
                                                 const u32 *__restrict__ cells, u64 first,
                                                 u64 end, const u32 *__restrict__ slots,
                                                 const double *at, Group g, View (&views)[M]) {
    double worst = 1.0 / 0.0;
    u32 slot[M], id[M][4];
#pragma unroll
    for (u32 m = 0; m < M; m++) {
        u64 k = first + g.rank + (u64)m * g.size;
        slot[m] = k < end ? __ldg(slots + k) : 0;
    }
#pragma unroll
    for (u32 m = 0; m < M; m++)
        if (first + g.rank + (u64)m * g.size < end) mesh_cell_ids<N>(cells, slot[m] / N, id[m]);
#pragma unroll
    for (u32 m = 0; m < M; m++) {
        if (first + g.rank + (u64)m * g.size >= end) continue;
        Corners q = mesh_corners_of<N>(xyz, id[m]);
        if (!VIEWS) mesh_place<N>(q, slot[m] % N, at);
        double v = mesh_volume<N>(q);
        worst = v <= 0.0 ? -1.0 : fmin(worst, mesh_mean_ratio_cubed_of<N>(v, mesh_edge_sum<N>(q)));
        if (VIEWS) views[m] = mesh_view_of<N>(q, slot[m] % N);
    }
    for (u64 k = first + g.rank + (u64)M * g.size; k < end && worst >= 0.0; k += g.size) {
        u32 s = __ldg(slots + k);
        Corners q = mesh_corners_packed<N>(xyz, cells, s / N);
        mesh_place<N>(q, s % N, at);
        double v = mesh_volume<N>(q);
        worst = v <= 0.0 ? -1.0 : fmin(worst, mesh_mean_ratio_cubed_of<N>(v, mesh_edge_sum<N>(q)));
    }
    return mesh_group_min(g, worst);
}

// Node i's new position (optimise::optimise_node), from `here` (its position, `start`): the
// worst eta^3 at the start from the cells (the final check's mark) and the views of its cells
// (M a lane) in one pass, then every trial from the views: its neighbours' centroid if that
// raises its worst eta^3, then up to 4 ascent steps along its worst cell's ∇η (the cell of
// the last kept trial), each halved up to 5 times until the worst eta^3 rises; the end
// stands only if the cells' own worst eta^3 there beats the start's. Every lane of the group
// computes the same (the centroid and the reach are sums in the CPU's order).
template <u32 N, u32 M>
__device__ __forceinline__ void mesh_optimise_node(const Point *__restrict__ xyz,
                                                   const u32 *__restrict__ cells,
                                                   const u64 *off, const u32 *slots,
                                                   const u64 *goff, const u32 *adj, u32 i,
                                                   Group g, double *here) {
    u64 first = off[i], end = off[i + 1];
    // A node in no cell stays (the CPU's search finds nothing to climb).
    if (first == end) return;
    double start[3] = {here[0], here[1], here[2]};
    View views[M];
    double exact = mesh_opt_cells<N, M, true>(xyz, cells, first, end, slots, here, g, views);
    if (exact < 0.0) return;
    const double zero[3] = {0.0, 0.0, 0.0};
    Trial t = mesh_opt_trial<N, M>(views, xyz, cells, first, end, slots, start, zero, g);
    double worst = mesh_opt_worst_of(g, t);
    if (worst < 0.0) return;
    u64 place = mesh_opt_place_of(g, t, worst, first);
    double c[3] = {0.0, 0.0, 0.0};
    for (u64 k = goff[i]; k < goff[i + 1]; k++) {
        const Point *p = xyz + adj[k];
        double2 pxy = __ldg(reinterpret_cast<const double2 *>(p));
        c[0] += pxy.x;
        c[1] += pxy.y;
        c[2] += __ldg(&p->z);
    }
    double deg = (double)(goff[i + 1] - goff[i]), centroid[3], delta[3];
#pragma unroll
    for (int k = 0; k < 3; k++) centroid[k] = here[k] + (c[k] / deg - here[k]);
    mesh_sub(centroid, start, delta);
    t = mesh_opt_trial<N, M>(views, xyz, cells, first, end, slots, start, delta, g);
    double w = mesh_opt_worst_of(g, t);
    if (w >= 0.0 && w > worst) {
#pragma unroll
        for (int k = 0; k < 3; k++) here[k] = centroid[k];
        worst = w;
        place = mesh_opt_place_of(g, t, w, first);
    }
    double reach = 0.0;
    for (u64 k = goff[i]; k < goff[i + 1]; k++) {
        const Point *p = xyz + adj[k];
        double2 pxy = __ldg(reinterpret_cast<const double2 *>(p));
        double e[3] = {here[0] - pxy.x, here[1] - pxy.y, here[2] - __ldg(&p->z)};
        reach += sqrt(mesh_dot(e, e));
    }
    reach /= fmax(deg, 1.0);
    // The ascent as one loop of trials, a step's direction formed as the step begins: the
    // groups of a warp, each at its own step and halving, take their trials together (nested
    // loops of steps and halvings made every group wait at each step for the warp's longest).
    double grad[3], scale = 0.0;
    // A step starts at the halvings of the last kept trial (optimise.rs: `first`).
    int steps = 0, halvings = 0, from = 0;
    bool begin = true;
    while (true) {
        if (begin) {
            // The worst cell's view (CornerView::ascent): W, S and ∇S with the corner moved.
            View v = mesh_corner_view<N>(xyz, cells, slots[place], start);
            mesh_sub(here, start, delta);
            double gamma = ((double)N - 1.0) * mesh_dot(delta, delta);
            double wm = v.w + mesh_dot(v.a, delta);
            double sm = v.s + mesh_dot(v.g, delta) + gamma;
            double power = N == 4 ? 2.0 / 3.0 : 1.0, twice = 2.0 * ((double)N - 1.0);
#pragma unroll
            for (int d = 0; d < 3; d++)
                grad[d] = power * v.a[d] / wm - (v.g[d] + twice * delta[d]) / sm;
            double norm = sqrt(mesh_dot(grad, grad));
            if (norm == 0.0) break;
            scale = 0.1 * reach / norm;
            for (halvings = 0; halvings < from; halvings++) scale *= 0.5;
            begin = false;
        }
        double at[3];
#pragma unroll
        for (int k = 0; k < 3; k++) at[k] = here[k] + scale * grad[k];
        mesh_sub(at, start, delta);
        t = mesh_opt_trial<N, M>(views, xyz, cells, first, end, slots, start, delta, g);
        double wa = mesh_opt_worst_of(g, t);
        if (wa >= 0.0 && wa > worst) {
#pragma unroll
            for (int k = 0; k < 3; k++) here[k] = at[k];
            worst = wa;
            place = mesh_opt_place_of(g, t, wa, first);
            from = halvings;
            if (++steps == 4) break;
            begin = true;
        } else {
            if (++halvings == 5) break;
            scale *= 0.5;
        }
    }
    bool moved = here[0] != start[0] || here[1] != start[1] || here[2] != start[2];
    if (!moved || !(mesh_opt_cells<N, M, false>(xyz, cells, first, end, slots, here, g, views) > exact)) {
#pragma unroll
        for (int k = 0; k < 3; k++) here[k] = start[k];
    }
}

// One colour class: its nodes, list[start .. start + count) (active nodes of the class, in
// ascending order, so every group of a warp has work), a group of `lanes` lanes per node
// (lanes: a power of two, at most 32), each node to its optimised position, in place in x, y,
// z and the packed xyz (nodes of a class share no cell, so none reads another's position,
// and the group's lanes have read the node's last before its first lane writes it); the
// largest move as bits in *best. N corners a cell, M views held a lane (mesh_opt_trial).
template <u32 N, u32 M>
__device__ __forceinline__ void mesh_opt_class(double *x, double *y, double *z, Point *xyz,
                                               const u32 *cells, const u64 *off, const u32 *slots,
                                               const u64 *goff, const u32 *adj, const u32 *list,
                                               u64 start, u64 count, u32 lanes, u64 *best) {
    Group g = mesh_group(lanes);
    u64 k = thread_index() / lanes;
    u64 bits = 0;
    if (k < count) {
        u32 i = list[start + k];
        double2 xy = __ldg(reinterpret_cast<const double2 *>(xyz + i));
        double was[3] = {xy.x, xy.y, __ldg(&xyz[i].z)}, p[3] = {was[0], was[1], was[2]}, d[3];
        mesh_optimise_node<N, M>(xyz, cells, off, slots, goff, adj, i, g, p);
        mesh_sub(p, was, d);
        bits = (u64)__double_as_longlong(sqrt(mesh_dot(d, d)));
        if (g.rank == 0) {
            x[i] = p[0];
            y[i] = p[1];
            z[i] = p[2];
            xyz[i] = Point{p[0], p[1], p[2], 0.0};
        }
    }
    mesh_max_into(best, bits);
}

// The class kernels, one entry per corner count and views a lane holds, so that each gets
// the registers its own search needs (one entry with three searches behind a branch was
// allocated for the largest: 996 bytes spilled a thread where the 8-lane search alone spills
// 200). src/mesh/smooth/gpu.rs `opt_class_kernel` picks one: tets M = 24 / lanes rounded up,
// at most 6 (a Kuhn box's node has 24 cells: 6 a lane at 4 lanes, 1 at 32), triangles M = 4.
// At most 128 registers a thread (two blocks of 256 an SM): the search is bound by the
// latency of its dependent arithmetic, and more resident warps hide more of it than the few
// values spilled cost.
#define MESH_OPT_CLASS(NAME, N, M)                                                              \
    extern "C" __global__ void __launch_bounds__(256, 2)                                        \
        NAME(double *x, double *y, double *z, Point *xyz, const u32 *cells, const u64 *off,    \
             const u32 *slots, const u64 *goff, const u32 *adj, const u32 *list, u64 start,   \
             u64 count, u32 lanes, u64 *best) {                                                 \
        mesh_opt_class<N, M>(x, y, z, xyz, cells, off, slots, goff, adj, list, start, count,   \
                             lanes, best);                                                      \
    }
MESH_OPT_CLASS(mesh_opt_class_tet6, 4, 6)
MESH_OPT_CLASS(mesh_opt_class_tet3, 4, 3)
MESH_OPT_CLASS(mesh_opt_class_tet2, 4, 2)
MESH_OPT_CLASS(mesh_opt_class_tet1, 4, 1)
MESH_OPT_CLASS(mesh_opt_class_tri4, 3, 4)
