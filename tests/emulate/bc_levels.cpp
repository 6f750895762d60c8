// Host emulation of kernels/bc.cu: a batch of sources swept level by level as
// src/graph/betweenness/gpu.rs drives it (bc_sources, then bc_expand and bc_forward per
// level while the next level is not empty, bc_backward from the deepest level up,
// bc_accumulate), each kernel run thread by thread, threads in reverse order (the kernels may
// not depend on the order). Checked bit for bit against a sequential Brandes written here:
// per source a BFS by levels, σ(v) summed over the in-row in row order, δ(v) over the
// out-row in row order, as the CPU path sums them. Random directed and undirected multigraphs
// with parallel arcs, isolated vertices and repeated sources. Run by scripts/emulate-kernels.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>
typedef unsigned long long u64; typedef unsigned int u32; typedef long long i64;
#define __device__
#define __forceinline__ inline
#define __global__
#define WARP 32
static u64 emu_thread;
inline u64 thread_index() { return emu_thread; }
inline u64 atomicOr(u64 *a, u64 v) { u64 old = *a; *a |= v; return old; }
inline u32 atomicAdd(u32 *a, u32 v) { u32 old = *a; *a += v; return old; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline u64 __double2ull_rz(double x) { return (u64)x; }
inline double __ull2double_rn(u64 x) { return (double)x; }
#include "bc_kernels.h"  // kernels/bc.cu, written by scripts/emulate-kernels

template <class F> void launch(u64 threads, F f) {
    for (u64 t = threads; t-- > 0;) { emu_thread = t; f(); }
}

struct Rows { std::vector<u64> off; std::vector<u32> adj; };

static Rows rows_of(u32 n, const std::vector<std::pair<u32, u32>> &arcs, bool reverse) {
    Rows r{std::vector<u64>(n + 1, 0), {}};
    for (auto [a, b] : arcs) r.off[(reverse ? b : a) + 1]++;
    for (u32 v = 0; v < n; v++) r.off[v + 1] += r.off[v];
    std::vector<std::vector<u32>> lists(n);
    for (auto [a, b] : arcs) lists[reverse ? b : a].push_back(reverse ? a : b);
    for (auto &l : lists) { std::sort(l.begin(), l.end()); r.adj.insert(r.adj.end(), l.begin(), l.end()); }
    return r;
}

// The kernels' batch, as gpu.rs runs it: per lane δ of every vertex.
static std::vector<double> kernels_batch(u32 n, const Rows &out, const Rows &inc, const std::vector<u64> &batch, u32 lanes, u64 *lo, u64 *hi) {
    u32 kb = batch.size();
    std::vector<double> sigma((u64)n * lanes), delta((u64)n * lanes);
    std::vector<u64> reached(n);
    std::vector<std::vector<u64>> levels(1, std::vector<u64>(n));
    std::vector<std::vector<u32>> lists(1, std::vector<u32>(n));
    std::vector<u32> counts;
    launch(kb, [&] { bc_sources(batch.data(), kb, lanes, sigma.data(), levels[0].data(), reached.data()); });
    std::vector<u32> first(batch.begin(), batch.end());
    std::sort(first.begin(), first.end());
    first.erase(std::unique(first.begin(), first.end()), first.end());
    std::copy(first.begin(), first.end(), lists[0].begin());
    counts.push_back(first.size());
    size_t level = 0;
    for (;;) {
        levels.emplace_back(n);
        lists.emplace_back(n);
        u32 count = counts[level], next = 0;
        launch((u64)count * WARP, [&] { bc_expand(out.off.data(), out.adj.data(), lists[level].data(), count, levels[level].data(), reached.data(), levels[level + 1].data(), lists[level + 1].data(), &next); });
        if (next == 0) break;
        launch((u64)next * lanes, [&] { bc_forward(inc.off.data(), inc.adj.data(), lists[level + 1].data(), next, lanes, levels[level].data(), levels[level + 1].data(), reached.data(), sigma.data()); });
        counts.push_back(next);
        level++;
    }
    for (size_t at = level; at-- > 0;) {
        u32 count = counts[at];
        launch((u64)count * lanes, [&] { bc_backward(out.off.data(), out.adj.data(), lists[at].data(), count, lanes, levels[at].data(), levels[at + 1].data(), sigma.data(), delta.data()); });
    }
    launch(n, [&] { bc_accumulate(n, lanes, reached.data(), levels[0].data(), delta.data(), lo, hi); });
    return delta;
}

// Sequential Brandes for one source: δ of every vertex (0 where unreached).
static std::vector<double> brandes(u32 n, const Rows &out, const Rows &inc, u32 s) {
    std::vector<i64> depth(n, -1);
    std::vector<std::vector<u32>> by_level{{s}};
    depth[s] = 0;
    std::vector<double> sigma(n, 0.0), delta(n, 0.0);
    sigma[s] = 1.0;
    for (size_t d = 0; !by_level[d].empty(); d++) {
        std::vector<u32> next;
        for (u32 v : by_level[d])
            for (u64 e = out.off[v]; e < out.off[v + 1]; e++)
                if (depth[out.adj[e]] < 0) { depth[out.adj[e]] = d + 1; next.push_back(out.adj[e]); }
        for (u32 w : next) {
            double sum = 0.0;
            for (u64 e = inc.off[w]; e < inc.off[w + 1]; e++)
                if (depth[inc.adj[e]] == (i64)d) sum += sigma[inc.adj[e]];
            sigma[w] = sum;
        }
        by_level.push_back(next);
    }
    for (size_t d = by_level.size(); d-- > 0;)
        for (u32 v : by_level[d]) {
            double sum = 0.0;
            for (u64 e = out.off[v]; e < out.off[v + 1]; e++) {
                u32 w = out.adj[e];
                if (depth[w] == (i64)d + 1) sum += sigma[v] / sigma[w] * (1.0 + delta[w]);
            }
            delta[v] = sum;
        }
    return delta;
}

int main() {
    std::mt19937_64 g(11);
    int bad = 0;
    for (int trial = 0; trial < 12; trial++) {
        u32 n = 20 + g() % 300, m = n * (1 + g() % 6);
        bool directed = trial % 2;
        u32 lanes = (trial % 3 == 0) ? 64 : 1 + g() % 63;
        std::vector<std::pair<u32, u32>> arcs;
        for (u32 i = 0; i < m; i++) {
            u32 a = g() % (n - 5), b = g() % (n - 5);  // the last five vertices stay isolated
            if (a == b) continue;
            arcs.push_back({a, b});
            if (g() % 8 == 0) arcs.push_back({a, b});  // a parallel arc
            if (!directed) arcs.push_back({b, a});
        }
        Rows out = rows_of(n, arcs, false), inc = rows_of(n, arcs, true);
        std::vector<u64> batch;
        u32 k = 1 + g() % lanes;
        for (u32 i = 0; i < k; i++) batch.push_back(g() % n);
        std::vector<u64> lo(n), hi(n);
        auto delta = kernels_batch(n, out, inc, batch, lanes, lo.data(), hi.data());
        int diff = 0;
        for (u32 s = 0; s < k; s++) {
            auto want = brandes(n, out, inc, batch[s]);
            for (u32 v = 0; v < n; v++)
                if (std::memcmp(&want[v], &delta[(u64)v * lanes + s], 8) != 0) diff++;
        }
        printf("n %u arcs %zu %s lanes %u sources %u: %s\n", n, arcs.size(), directed ? "directed" : "undirected", lanes, k, diff ? "DIFFERENT" : "same");
        bad += diff != 0;
    }
    printf(bad ? "FAIL\n" : "all equal\n");
    return bad != 0;
}
