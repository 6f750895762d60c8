// Host emulation of kernels/mesh.cu's opt-colour class kernels (mesh_opt_class_*), driven as
// src/mesh/smooth/gpu.rs drives them: one launch per colour class of the kernel it picks for
// the corners and lanes (opt_class_kernel), a group of `lanes` lanes per node (1 to 32), the warp's lanes as fibers whose groups go their own ways
// (group_fibers.h). Checked bit for bit, class after class, against a sequential search
// written here from src/mesh/smooth/optimise.rs and src/mesh/corner.rs (the CPU path):
// each node's start and end checks from the cells' V and S, its trials from its corner
// views, one halving after another. Jittered and stretched Kuhn boxes (tets) and
// triangulated squares (triangles), boundary nodes fixed, a greedy colouring (nodes of a
// class share no cell), three iterations: every position, and each class's largest move,
// must equal the reference's; nodes must move (the check is not vacuous), some after an
// ascent. Run by scripts/emulate-kernels.
#include <math.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include "group_fibers.h"
typedef unsigned char u8;
struct double2 { double x, y; };
struct uint4 { u32 x, y, z, w; };
struct EmuDim { u32 x; };
#define threadIdx (EmuDim{(u32)(emu_thread % 256)})
#define blockDim (EmuDim{256u})
#define __shared__ static
#define __align__(n) alignas(n)
#define __launch_bounds__(threads, blocks)
template <class T> T __ldg(const T *p) { return *p; }
inline long long __double_as_longlong(double x) { return from_word<long long>(to_word(x)); }
inline u64 atomicAdd(u64 *a, u64 v) { u64 old = *a; *a += v; return old; }
inline u64 atomicMin(u64 *a, u64 v) { u64 old = *a; *a = std::min(old, v); return old; }
inline u64 atomicMax(u64 *a, u64 v) { u64 old = *a; *a = std::max(old, v); return old; }
inline int __ffs(u32 x) { return __builtin_ffs(x); }
inline u32 min(u32 a, u32 b) { return a < b ? a : b; }
inline u64 max(u64 a, u64 b) { return a > b ? a : b; }
inline u64 grid_threads() { return 0; }  // the grid-stride kernels are not run here
inline u64 warp_sum(u64 v) {
    for (int s = WARP / 2; s > 0; s /= 2) v += __shfl_xor_sync(FULL, v, s);
    return v;
}
#include "mesh_kernels.h"  // kernels/mesh.cu, written by scripts/emulate-kernels

typedef std::array<double, 3> P3;

struct Csr {
    std::vector<u64> off{0};
    std::vector<u32> items;
    void row(const std::vector<u32> &r) { items.insert(items.end(), r.begin(), r.end()); off.push_back(items.size()); }
};

struct Mesh {
    u32 n;  // corners per cell
    std::vector<double> x, y, z;
    std::vector<u32> cells;
    std::vector<bool> active;
    Csr n2c, graph;
    P3 point(u32 i) const { return {x[i], y[i], z[i]}; }
};

// ---- The sequential reference (optimise.rs, corner.rs, geometry.rs, laplace.rs) --------

static P3 sub(const P3 &a, const P3 &b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
static double dot(const P3 &a, const P3 &b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static P3 cross(const P3 &a, const P3 &b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
typedef std::array<P3, 4> Cell;

static double volume(const Cell &p, u32 n) {
    P3 e1 = sub(p[1], p[0]), e2 = sub(p[2], p[0]);
    if (n == 4) return dot(e1, cross(e2, sub(p[3], p[0]))) / 6.0;
    return 0.5 * (e1[0] * e2[1] - e1[1] * e2[0]);
}
static double edge_sum(const Cell &p, u32 n) {
    double s = 0.0;
    for (u32 i = 0; i < n; i++)
        for (u32 j = i + 1; j < n; j++) { P3 e = sub(p[i], p[j]); s += dot(e, e); }
    return s;
}
static double ratio_cubed(double v, double s, u32 n) {
    if (v <= 0.0 || s <= 0.0) return 0.0;
    if (n == 4) return 15552.0 * v * v / (s * s * s);
    double e = 4.0 * sqrt(3.0) * v / s;
    return e * e * e;
}
static Cell cell_points(const Mesh &m, u32 c) {
    Cell p{};
    for (u32 k = 0; k < m.n; k++) p[k] = m.point(m.cells[c * m.n + k]);
    return p;
}
// worst_around: None (false) when a cell would invert.
static bool worst_around(const Mesh &m, u32 i, const P3 &at, double &worst) {
    worst = INFINITY;
    for (u64 k = m.n2c.off[i]; k < m.n2c.off[i + 1]; k++) {
        u32 slot = m.n2c.items[k];
        Cell p = cell_points(m, slot / m.n);
        p[slot % m.n] = at;
        double v = volume(p, m.n);
        if (v <= 0.0) return false;
        worst = std::min(worst, ratio_cubed(v, edge_sum(p, m.n), m.n));  // f64::min
    }
    return true;
}
struct CView { double w; P3 a; double s; P3 g; };
static CView view(const Cell &p, u32 n, u32 i) {
    static const u32 tet[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
    static const u32 tri[3][2] = {{1, 2}, {2, 0}, {0, 1}};
    P3 at = p[i];
    CView v;
    if (n == 4) {
        u32 j = tet[i][0], k = tet[i][1], l = tet[i][2];
        P3 dj = sub(at, p[j]), dk = sub(at, p[k]), dl = sub(at, p[l]);
        P3 u = sub(p[k], p[j]), w = sub(p[l], p[j]);
        P3 c = cross(u, w);
        v.a = {-c[0], -c[1], -c[2]};
        P3 vu = sub(w, u);
        double own = dot(dj, dj) + dot(dk, dk) + dot(dl, dl);
        double face = dot(u, u) + dot(w, w) + dot(vu, vu);
        v.w = dot(dj, v.a);
        v.s = own + face;
        for (int d = 0; d < 3; d++) v.g[d] = 2.0 * (dj[d] + dk[d] + dl[d]);
    } else {
        u32 j = tri[i][0], k = tri[i][1];
        P3 dj = sub(at, p[j]), dk = sub(at, p[k]), u = sub(p[k], p[j]);
        v.a = {-(3.0 * u[1]), 3.0 * u[0], 0.0};
        v.w = dot(dj, v.a);
        v.s = dot(dj, dj) + dot(dk, dk) + dot(u, u);
        for (int d = 0; d < 3; d++) v.g[d] = 2.0 * (dj[d] + dk[d]);
    }
    return v;
}
static double eta_cubed(u32 n, double w, double s) {
    double s3 = s * s * s;
    return n == 4 ? 432.0 * w * w / s3 : 1.539600717839002 * w * w * w / s3;
}
// worst_of: false when a cell would invert (or W is not a number).
static bool worst_of(const std::vector<CView> &views, u32 n, const P3 &delta, double &worst, size_t &place) {
    double gamma = ((double)n - 1.0) * dot(delta, delta);
    worst = INFINITY, place = 0;
    for (size_t k = 0; k < views.size(); k++) {
        const CView &v = views[k];
        double w = v.w + dot(v.a, delta), s = v.s + dot(v.g, delta) + gamma;
        if (std::isnan(w) || w <= 0.0) return false;
        double e = eta_cubed(n, w, s);
        if (e < worst) worst = e, place = k;
    }
    return true;
}
static P3 ascent(const CView &v, u32 n, const P3 &delta) {
    double gamma = ((double)n - 1.0) * dot(delta, delta);
    double w = v.w + dot(v.a, delta), s = v.s + dot(v.g, delta) + gamma;
    double power = n == 4 ? 2.0 / 3.0 : 1.0, twice = 2.0 * ((double)n - 1.0);
    P3 r;
    for (int d = 0; d < 3; d++) r[d] = power * v.a[d] / w - (v.g[d] + twice * delta[d]) / s;
    return r;
}
static long ascents = 0;  // kept ascent steps, over the whole run: the check is not vacuous
static P3 optimise_node(const Mesh &m, u32 i) {
    u32 n = m.n;
    P3 start = m.point(i);
    double exact;
    if (!worst_around(m, i, start, exact)) return start;
    std::vector<CView> views;
    for (u64 k = m.n2c.off[i]; k < m.n2c.off[i + 1]; k++) {
        u32 slot = m.n2c.items[k];
        views.push_back(view(cell_points(m, slot / n), n, slot % n));
    }
    double worst, w;
    size_t place, pw;
    if (!worst_of(views, n, {0.0, 0.0, 0.0}, worst, place)) return start;
    P3 here = start, c{0.0, 0.0, 0.0};
    u64 g0 = m.graph.off[i], g1 = m.graph.off[i + 1];
    for (u64 k = g0; k < g1; k++) {
        P3 p = m.point(m.graph.items[k]);
        for (int d = 0; d < 3; d++) c[d] += p[d];
    }
    P3 centroid;
    for (int d = 0; d < 3; d++) centroid[d] = here[d] + (c[d] / (double)(g1 - g0) - here[d]);
    if (worst_of(views, n, sub(centroid, start), w, pw) && w > worst) here = centroid, worst = w, place = pw;
    double reach = 0.0;
    for (u64 k = g0; k < g1; k++) { P3 e = sub(here, m.point(m.graph.items[k])); reach += sqrt(dot(e, e)); }
    reach /= std::max((double)(g1 - g0), 1.0);
    int first = 0;  // halvings at which an ascent step starts: those of the last kept one
    for (int step = 0; step < 4; step++) {
        P3 g = ascent(views[place], n, sub(here, start));
        double norm = sqrt(dot(g, g));
        if (norm == 0.0) break;
        bool raised = false;
        for (int h = first; h < 5; h++) {
            double t = 0.1 * reach / norm * std::ldexp(1.0, -h);
            P3 at{here[0] + t * g[0], here[1] + t * g[1], here[2] + t * g[2]};
            if (worst_of(views, n, sub(at, start), w, pw) && w > worst) {
                here = at, worst = w, place = pw, raised = true, first = h;
                ascents++;
                break;
            }
        }
        if (!raised) break;
    }
    double end;
    if (here != start && worst_around(m, i, here, end) && end > exact) return here;
    return start;
}

// ---- Meshes ------------------------------------------------------------------------------

// The CSRs (slots in ascending cell order; neighbours ascending) and a greedy colouring.
static void connect(Mesh &m, std::vector<std::vector<u32>> &classes) {
    u32 nodes = m.x.size(), cells = m.cells.size() / m.n;
    std::vector<std::vector<u32>> slots(nodes), nb(nodes);
    for (u32 c = 0; c < cells; c++)
        for (u32 k = 0; k < m.n; k++) {
            u32 a = m.cells[c * m.n + k];
            slots[a].push_back(c * m.n + k);
            for (u32 l = 0; l < m.n; l++)
                if (l != k) nb[a].push_back(m.cells[c * m.n + l]);
        }
    std::vector<u32> colour(nodes, ~0u);
    for (u32 i = 0; i < nodes; i++) {
        std::sort(nb[i].begin(), nb[i].end());
        nb[i].erase(std::unique(nb[i].begin(), nb[i].end()), nb[i].end());
        m.n2c.row(slots[i]);
        m.graph.row(nb[i]);
        if (!m.active[i]) continue;
        u32 c = 0;
        while (std::any_of(nb[i].begin(), nb[i].end(), [&](u32 j) { return colour[j] == c; })) c++;
        colour[i] = c;
        if (classes.size() <= c) classes.resize(c + 1);
        classes[c].push_back(i);
    }
}

// A Kuhn box of c^3 cubes (6 tets each), z stretched 3x, interior nodes jittered by up to
// `jitter` of a cube in each direction; or (tets false) c^2 squares of 2 triangles.
static Mesh box(u32 c, bool tets, double jitter, u32 seed) {
    Mesh m;
    m.n = tets ? 4 : 3;
    u32 s = c + 1, depth = tets ? s : 1;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-jitter, jitter);
    for (u32 k = 0; k < depth; k++)
        for (u32 j = 0; j < s; j++)
            for (u32 i = 0; i < s; i++) {
                bool inner = i > 0 && j > 0 && i < c && j < c && (!tets || (k > 0 && k < c));
                m.active.push_back(inner);
                m.x.push_back(i + (inner ? u(rng) : 0.0));
                m.y.push_back(j + (inner ? u(rng) : 0.0));
                m.z.push_back(tets ? 3.0 * (k + (inner ? u(rng) : 0.0)) : 0.0);
            }
    auto id = [&](u32 i, u32 j, u32 k) { return i + s * (j + s * k); };
    for (u32 k = 0; k < (tets ? c : 1); k++)
        for (u32 j = 0; j < c; j++)
            for (u32 i = 0; i < c; i++) {
                if (!tets) {
                    u32 t[2][3] = {{id(i, j, 0), id(i + 1, j, 0), id(i + 1, j + 1, 0)},
                                   {id(i, j, 0), id(i + 1, j + 1, 0), id(i, j + 1, 0)}};
                    for (auto &r : t) m.cells.insert(m.cells.end(), r, r + 3);
                    continue;
                }
                int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
                for (auto &p : perm) {
                    u32 at[3] = {i, j, k}, v[4];
                    v[0] = id(at[0], at[1], at[2]);
                    for (int q = 0; q < 3; q++) { at[p[q]]++; v[q + 1] = id(at[0], at[1], at[2]); }
                    Cell pts{m.point(v[0]), m.point(v[1]), m.point(v[2]), m.point(v[3])};
                    if (volume(pts, 4) < 0.0) std::swap(v[2], v[3]);
                    m.cells.insert(m.cells.end(), v, v + 4);
                }
            }
    for (u32 cell = 0; cell < m.cells.size() / m.n; cell++)
        if (volume(cell_points(m, cell), m.n) <= 0.0) { fprintf(stderr, "inverted cell %u: lower the jitter\n", cell); exit(2); }
    return m;
}

// ---- The comparison ----------------------------------------------------------------------

// The class kernel src/mesh/smooth/gpu.rs `opt_class_kernel` picks for n corners and `lanes`.
typedef void ClassKernel(double *, double *, double *, Point *, const u32 *, const u64 *, const u32 *,
                         const u64 *, const u32 *, const u32 *, u64, u64, u32, u64 *);
static ClassKernel *class_kernel(u32 n, u32 lanes) {
    if (n == 3) return mesh_opt_class_tri4;
    return lanes == 32 ? mesh_opt_class_tet1 : lanes == 16 ? mesh_opt_class_tet2
                                             : lanes == 8  ? mesh_opt_class_tet3
                                                           : mesh_opt_class_tet6;
}

static bool same(double a, double b) { return to_word(a) == to_word(b); }

// Three iterations of every class on the reference and through the kernel at `lanes` lanes
// a node; false at the first difference. Adds the nodes moved to *moved.
static bool compare(const Mesh &start, const std::vector<std::vector<u32>> &classes, u32 lanes, long *moved) {
    Mesh ref = start;
    std::vector<double> x = start.x, y = start.y, z = start.z, xyz(4 * x.size());
    for (size_t i = 0; i < x.size(); i++) xyz[4 * i] = x[i], xyz[4 * i + 1] = y[i], xyz[4 * i + 2] = z[i];
    std::vector<u32> list;
    std::vector<u64> first;
    for (auto &c : classes) first.push_back(list.size()), list.insert(list.end(), c.begin(), c.end());
    for (int it = 0; it < 3; it++)
        for (size_t c = 0; c < classes.size(); c++) {
            double most = 0.0;
            std::vector<P3> next;
            for (u32 i : classes[c]) next.push_back(optimise_node(ref, i));
            for (size_t q = 0; q < next.size(); q++) {
                u32 i = classes[c][q];
                P3 d = sub(next[q], ref.point(i));
                most = std::max(most, sqrt(dot(d, d)));
                *moved += next[q] != ref.point(i);
                ref.x[i] = next[q][0], ref.y[i] = next[q][1], ref.z[i] = next[q][2];
            }
            u64 best = 0, count = classes[c].size();
            ClassKernel *kernel = class_kernel(start.n, lanes);
            launch_group_warps(count * lanes, [&] {
                kernel(x.data(), y.data(), z.data(), (Point *)xyz.data(), start.cells.data(), start.n2c.off.data(),
                       start.n2c.items.data(), start.graph.off.data(), start.graph.items.data(), list.data(),
                       first[c], count, lanes, &best);
            });
            for (size_t i = 0; i < x.size(); i++)
                if (!same(x[i], ref.x[i]) || !same(y[i], ref.y[i]) || !same(z[i], ref.z[i]) ||
                    !same(xyz[4 * i], x[i]) || !same(xyz[4 * i + 1], y[i]) || !same(xyz[4 * i + 2], z[i])) {
                    printf("  %u corners, %u lanes, iteration %d, class %zu: node %zu at (%.17g, %.17g, %.17g), "
                           "the reference's (%.17g, %.17g, %.17g)\n", start.n, lanes, it, c, i, x[i], y[i], z[i],
                           ref.x[i], ref.y[i], ref.z[i]);
                    return false;
                }
            if (best != to_word(most)) {
                printf("  %u corners, %u lanes, iteration %d, class %zu: largest move %.17g, the reference's %.17g\n",
                       start.n, lanes, it, c, from_word<double>(best), most);
                return false;
            }
        }
    return true;
}

int main() {
    bool ok = true;
    struct Case { u32 cubes; bool tets; double jitter; u32 seed; };
    for (Case k : {Case{5, true, 0.15, 1}, Case{4, true, 0.2, 2}, Case{10, false, 0.25, 3}}) {
        Mesh m = box(k.cubes, k.tets, k.jitter, k.seed);
        std::vector<std::vector<u32>> classes;
        connect(m, classes);
        for (u32 lanes : {1u, 2u, 4u, 8u, 16u, 32u}) {
            long moved = 0;
            ascents = 0;
            bool good = compare(m, classes, lanes, &moved);
            ok &= good && moved > 0 && ascents > 0;
            if (lanes == 8 || !good)
                printf("  %s %u^%d, %zu nodes, %zu classes, %u lanes: %s (%ld moves, %ld ascent steps)\n",
                       k.tets ? "tets" : "triangles", k.cubes, k.tets ? 3 : 2, m.x.size(), classes.size(), lanes,
                       good ? "equal" : "DIFFERENT", moved, ascents);
        }
    }
    printf(ok ? "all equal\n" : "DIFFERENCES\n");
    return ok ? 0 : 1;
}
