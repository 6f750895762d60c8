// Host emulation of kernels/triangles.cu: triangles_warp and triangles_block run on items laid
// out as src/workloads/analyze/triangle_plan.rs lays them out (each oriented edge with two
// non-empty out-rows given to the endpoint with the longer one), against t_v counted by
// brute force over every triple. Each CUDA thread of a block is a host thread; a warp's
// shuffles and __syncwarp meet at the warp's barrier, __syncthreads at the block's. Four
// builds of the kernels: with the corners (t_v), without (the count alone), both with the long
// rows in bitmaps where their ranges fit; with bitmaps of one word (the hash table); and with
// a hash table too small for the long rows (the binary search in global memory). The clique
// of 302 gives a block item of 300 partners: two rounds of the block.
// Run by scripts/emulate-kernels (needs g++ with C++20).
#include <algorithm>
#include <barrier>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <thread>
#include <vector>
typedef unsigned long long u64; typedef unsigned int u32;
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(...)
#define __shared__ static
struct D3 { u32 x, y, z; };
thread_local D3 threadIdx, blockIdx;
D3 blockDim, gridDim;
using std::min;
static std::barrier<> *block_barrier;
static std::barrier<> *warp_barrier[8];
static u64 exchange[8][32];
inline void __syncthreads() { block_barrier->arrive_and_wait(); }
inline void __syncwarp(u32 = 0) { warp_barrier[threadIdx.x / 32]->arrive_and_wait(); }
// Lane `src`'s value of v (a whole warp calls).
template <class T> T shuffle_from(T v, u32 src, bool own) {
    u32 w = threadIdx.x / 32, lane = threadIdx.x % 32;
    exchange[w][lane] = (u64)v;
    __syncwarp();
    T r = own ? v : (T)exchange[w][src];
    __syncwarp();
    return r;
}
template <class T> T __shfl_sync(u32, T v, int src) { return shuffle_from(v, (u32)src, false); }
template <class T> T __shfl_up_sync(u32, T v, u32 d) { u32 l = threadIdx.x % 32; return shuffle_from(v, l - d, l < d); }
template <class T> T __shfl_xor_sync(u32, T v, int s) { return shuffle_from(v, (threadIdx.x % 32) ^ (u32)s, false); }
inline u32 __activemask() { return 0xffffffffu; }
inline u32 __ballot_sync(u32, bool) { return 0; } // warp_slot only, which triangles.cu does not call
inline int __ffs(u32 x) { return __builtin_ffs(x); }
inline int __popc(u32 x) { return __builtin_popcount(x); }
template <class T> T atomicAdd(T *a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_RELAXED); }
inline u32 atomicOr(u32 *a, u32 v) { return __atomic_fetch_or(a, v, __ATOMIC_RELAXED); }
inline u32 atomicCAS(u32 *a, u32 cmp, u32 v) {
    __atomic_compare_exchange_n(a, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return cmp;
}
#include "prelude_sections.h" // the prelude's indices and warp helpers (scripts/emulate-kernels)

namespace corners {
#define CORNERS 1
#include "triangles_kernels.h"
}
#undef CORNERS
#undef TABLE_SLOTS
namespace alone {
#define CORNERS 0
#include "triangles_kernels.h"
}
#undef CORNERS
#undef TABLE_SLOTS
#undef BITMAP_WORDS
namespace hashed {
#define CORNERS 1
#define BITMAP_WORDS 1
#include "triangles_kernels.h"
}
#undef CORNERS
#undef TABLE_SLOTS
#undef BITMAP_WORDS
namespace searched {
#define CORNERS 1
#define TABLE_SLOTS 64
#define BITMAP_WORDS 1
#include "triangles_kernels.h"
}


typedef void Kernel(const u64 *, const u32 *, const u32 *, const u32 *, const u64 *, u64, u64 *, u64 *);

// `blocks` blocks of 256 host threads, one block at a time.
static void launch(Kernel *k, u32 blocks, const std::function<void(Kernel *)> &call) {
    blockDim = {256, 1, 1};
    gridDim = {blocks, 1, 1};
    for (u32 b = 0; b < blocks; b++) {
        std::barrier<> bar(256);
        std::vector<std::unique_ptr<std::barrier<>>> warps;
        for (int w = 0; w < 8; w++) warps.emplace_back(new std::barrier<>(32)), warp_barrier[w] = warps.back().get();
        block_barrier = &bar;
        std::vector<std::thread> ts;
        for (u32 t = 0; t < 256; t++) ts.emplace_back([&, t, b] { blockIdx = {b, 0, 0}; threadIdx = {t, 0, 0}; call(k); });
        for (auto &t : ts) t.join();
    }
}

struct Graph { u64 n; std::vector<u64> offsets; std::vector<u32> adj; }; // oriented, relabelled

// Orient by (degree, id) and relabel, as triangles::orient.
static Graph orient(u64 n, const std::vector<std::pair<u32, u32>> &edges) {
    std::vector<std::vector<u32>> rows(n);
    for (auto [u, v] : edges) if (u != v) rows[u].push_back(v), rows[v].push_back(u);
    for (auto &r : rows) std::sort(r.begin(), r.end()), r.erase(std::unique(r.begin(), r.end()), r.end());
    std::vector<u32> order(n), rank(n);
    for (u32 v = 0; v < n; v++) order[v] = v;
    std::sort(order.begin(), order.end(), [&](u32 a, u32 b) { return std::make_pair(rows[a].size(), a) < std::make_pair(rows[b].size(), b); });
    for (u32 r = 0; r < n; r++) rank[order[r]] = r;
    Graph g{n, {0}, {}};
    for (u32 r = 0; r < n; r++) {
        std::vector<u32> out;
        for (u32 w : rows[order[r]]) if (rank[w] > r) out.push_back(rank[w]);
        std::sort(out.begin(), out.end());
        g.adj.insert(g.adj.end(), out.begin(), out.end());
        g.offsets.push_back(g.adj.size());
    }
    return g;
}

struct Bin { std::vector<u32> owners; std::vector<u64> spans; };

// The plan: (owner, partner) pairs grouped by owner, cut every `cap` probes, binned at 128.
static void plan(const Graph &g, u64 cap, std::vector<u32> &partners, Bin &short_bin, Bin &long_bin) {
    auto d = [&](u32 x) { return g.offsets[x + 1] - g.offsets[x]; };
    std::vector<std::pair<u32, u32>> pairs;
    for (u32 u = 0; u < g.n; u++)
        for (u64 i = g.offsets[u]; i < g.offsets[u + 1]; i++) {
            u32 v = g.adj[i];
            if (d(v) > 0) pairs.push_back(d(v) > d(u) ? std::make_pair(v, u) : std::make_pair(u, v));
        }
    std::sort(pairs.begin(), pairs.end());
    for (u64 i = 0; i < pairs.size();) {
        u32 o = pairs[i].first;
        Bin &bin = d(o) <= 128 ? short_bin : long_bin;
        u64 begin = i, probes = 0;
        for (; i < pairs.size() && pairs[i].first == o; i++) {
            partners.push_back(pairs[i].second);
            probes += d(pairs[i].second);
            if (probes >= cap) bin.owners.push_back(o), bin.spans.insert(bin.spans.end(), {begin, i + 1}), begin = i + 1, probes = 0;
        }
        if (begin < i) bin.owners.push_back(o), bin.spans.insert(bin.spans.end(), {begin, i});
    }
}

// t_v (relabelled) by every triple.
static std::vector<u64> brute_force(const Graph &g) {
    auto adjacent = [&](u32 a, u32 b) { return std::binary_search(g.adj.begin() + g.offsets[a], g.adj.begin() + g.offsets[a + 1], b); };
    std::vector<u64> t(g.n);
    for (u32 a = 0; a < g.n; a++)
        for (u64 i = g.offsets[a]; i < g.offsets[a + 1]; i++)
            for (u64 j = i + 1; j < g.offsets[a + 1]; j++)
                if (adjacent(g.adj[i], g.adj[j])) t[a]++, t[g.adj[i]]++, t[g.adj[j]]++;
    return t;
}

// Both kernels of one build on every item; returns {t, total}.
static std::pair<std::vector<u64>, u64> run(Kernel *warp, Kernel *block, const Graph &g, const std::vector<u32> &partners, const Bin &s, const Bin &l) {
    std::vector<u64> t(g.n);
    u64 total = 0;
    u64 ns = s.owners.size(), nl = l.owners.size();
    if (ns) launch(warp, (u32)((ns * 32 + 255) / 256), [&](Kernel *k) { k(g.offsets.data(), g.adj.data(), partners.data(), s.owners.data(), s.spans.data(), ns, t.data(), &total); });
    if (nl) launch(block, (u32)std::min<u64>(nl, 3), [&](Kernel *k) { k(g.offsets.data(), g.adj.data(), partners.data(), l.owners.data(), l.spans.data(), nl, t.data(), &total); });
    return {t, total};
}

int main() {
    std::mt19937_64 rng(11);
    int bad = 0;
    struct Case { u64 n, m, clique, cap; };
    for (Case c : {Case{30, 120, 0, 1000}, Case{40, 200, 0, 5}, Case{136, 40, 131, 2000}, Case{302, 0, 302, 100000}, Case{3000, 9000, 140, 3000}}) {
        std::vector<std::pair<u32, u32>> edges;
        for (u32 u = 0; u < c.clique; u++) for (u32 v = 0; v < u; v++) edges.push_back({u, v});
        for (u64 i = 0; i < c.m; i++) edges.push_back({(u32)(rng() % c.n), (u32)(rng() % c.n)});
        Graph g = orient(c.n, edges);
        std::vector<u32> partners;
        Bin s, l;
        plan(g, c.cap, partners, s, l);
        std::vector<u64> expected = brute_force(g);
        u64 triangles = 0;
        for (u64 x : expected) triangles += x;
        triangles /= 3;
        auto [t1, total1] = run(corners::triangles_warp, corners::triangles_block, g, partners, s, l);
        auto [t0, total0] = run(alone::triangles_warp, alone::triangles_block, g, partners, s, l);
        auto [t2, total2] = run(searched::triangles_warp, searched::triangles_block, g, partners, s, l);
        auto [t3, total3] = run(hashed::triangles_warp, hashed::triangles_block, g, partners, s, l);
        bool ok = t1 == expected && t2 == expected && t3 == expected && total0 == triangles && total1 == triangles &&
                  total2 == triangles && total3 == triangles &&
                  t0 == std::vector<u64>(g.n);
        printf("n %llu, clique %llu, %zu warp and %zu block items: %llu triangles, %s\n", c.n, c.clique, s.owners.size(), l.owners.size(), triangles, ok ? "equal" : "DIFFERENT");
        bad += !ok;
    }
    printf(bad ? "FAIL\n" : "all equal\n");
    return bad != 0;
}
