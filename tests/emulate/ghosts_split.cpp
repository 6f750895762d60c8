// Host emulation of kernels/ghosts.cu, the local/cut split of a rank's rows, driven as
// src/graph/ghosts_gpu.rs `split` drives it: split_mark over a small grid (so that its
// grid-stride loop turns), split_count and split_scatter a warp at a time (warp_fibers.h: rows
// longer than a warp go through its lanes together), with the host's steps between them (the
// ghosts numbered by a popcount scan of the bitmap's words, the counts turned into offsets).
// Checked against the split's definition, as src/graph/ghosts.rs `LocalRows::split` writes
// it: the ghosts are the distinct remote endpoints in ascending id; each row's local entries
// are its own neighbours' local indices and its cut entries its other neighbours' ghost
// indices, both in the row's order. Random symmetric graphs with hubs (rows of 0 to a few
// thousand entries, rows of exactly 32 and 33, several long rows in one warp) cut into 1 to
// 4 ranks' blocks. Run by scripts/emulate-kernels.
#include <algorithm>
#include <cstdio>
#include <random>
#include <set>
#include "warp_fibers.h"
static u64 emu_grid_threads;
inline u64 grid_threads() { return emu_grid_threads; }
inline int __popcll(u64 x) { return __builtin_popcountll(x); }
inline u64 atomicOr(u64 *a, u64 v) { u64 old = *a; *a |= v; return old; }
#include "ghosts_kernels.h"  // the prelude's warp_sum, ghosts.cu

// A symmetric graph of n vertices as sorted, duplicate-free rows: random edges, the first
// `hubs` vertices joined to many others, and rows padded to 32 or 33 entries here and there.
static std::vector<std::set<u32>> random_graph(u32 n, u32 hubs, std::mt19937_64 &rng) {
    std::vector<std::set<u32>> rows(n);
    auto join = [&](u32 a, u32 b) {
        if (a == b) return;
        rows[a].insert(b);
        rows[b].insert(a);
    };
    for (u32 e = 0; e < 2 * n; e++) join(rng() % n, rng() % n);
    for (u32 h = 0; h < hubs; h++)
        for (u32 k = 0, d = 40 + rng() % (n / 2); k < d; k++) join(h * 7 % n, rng() % n);
    for (u32 v = 0; v < n; v += 1 + rng() % 97) {
        u32 want = 32 + rng() % 2;
        while (rows[v].size() < std::min(want, n - 1)) join(v, rng() % n);
    }
    return rows;
}

// Rank `me` of `ranks` (blocks of ceil(n / ranks) vertices) splits its rows; returns the
// failures.
static int run_case(const std::vector<std::set<u32>> &graph, u32 ranks, u32 me, u64 threads) {
    u64 n_all = graph.size(), block = (n_all + ranks - 1) / ranks;
    u64 first = std::min<u64>(me * block, n_all), own = std::min<u64>(block, n_all - first);
    u32 n = own;
    std::vector<u64> offsets(own + 1, 0);
    std::vector<u32> adj;
    for (u64 u = 0; u < own; u++) {
        adj.insert(adj.end(), graph[first + u].begin(), graph[first + u].end());
        offsets[u + 1] = adj.size();
    }
    u64 entries = adj.size(), word_count = (n_all + 63) / 64;
    // The kernels, and the host's steps between them.
    std::vector<u64> words(word_count, 0);
    emu_grid_threads = threads;
    launch_warps(threads, [&] { split_mark(adj.data(), entries, first, own, words.data()); });
    std::vector<u32> local_len(own + 1, ~0u);
    launch_warps(own, [&] { split_count(offsets.data(), adj.data(), n, first, local_len.data()); });
    std::vector<u64> before(word_count + 1, 0), ids;
    for (u64 w = 0; w < word_count; w++) {
        before[w + 1] = before[w] + __builtin_popcountll(words[w]);
        for (u64 bits = words[w]; bits; bits &= bits - 1) ids.push_back(w * 64 + __builtin_ctzll(bits));
    }
    std::vector<u64> local_at(own + 1, 0), cut_at(own + 1, 0);
    for (u64 u = 0; u < own; u++) {
        local_at[u + 1] = local_at[u] + local_len[u];
        cut_at[u + 1] = cut_at[u] + (offsets[u + 1] - offsets[u] - local_len[u]);
    }
    std::vector<u32> local_adj(local_at[own], ~0u), cut_ghost(cut_at[own], ~0u);
    launch_warps(own, [&] {
        split_scatter(offsets.data(), adj.data(), n, first, words.data(), before.data(), local_at.data(),
                      cut_at.data(), local_adj.data(), cut_ghost.data());
    });
    // The definition.
    std::set<u32> remote;
    for (u32 v : adj)
        if (v < first || v >= first + own) remote.insert(v);
    std::vector<u64> want_ids(remote.begin(), remote.end());
    std::vector<u64> want_local_at{0}, want_cut_at{0};
    std::vector<u32> want_local, want_cut;
    for (u64 u = 0; u < own; u++) {
        for (u64 e = offsets[u]; e < offsets[u + 1]; e++) {
            u32 v = adj[e];
            if (v >= first && v < first + own) want_local.push_back(v - first);
            else want_cut.push_back(std::lower_bound(want_ids.begin(), want_ids.end(), v) - want_ids.begin());
        }
        want_local_at.push_back(want_local.size());
        want_cut_at.push_back(want_cut.size());
    }
    int failures = 0;
    auto expect = [&](bool same, const char *what) {
        if (!same && failures++ < 5)
            printf("  %llu vertices, rank %u of %u: %s differ\n", n_all, me, ranks, what);
    };
    expect(ids == want_ids, "ghost ids");
    expect(local_at == want_local_at, "row offsets");
    expect(cut_at == want_cut_at, "cut edge offsets");
    expect(local_adj == want_local, "local edges");
    expect(cut_ghost == want_cut, "cut edges' ghosts");
    return failures;
}

int main() {
    int failures = 0, cases = 0;
    for (u32 n : {40u, 300u, 3000u})
        for (u32 hubs : {0u, 2u, 9u})
            for (u64 seed = 1; seed <= 2; seed++) {
                std::mt19937_64 rng(seed * 7919 + n + hubs);
                auto graph = random_graph(n, hubs, rng);
                for (u32 ranks = 1; ranks <= 4; ranks++)
                    for (u32 me = 0; me < ranks; me++) {
                        failures += run_case(graph, ranks, me, 32 * (1 + seed));
                        cases++;
                    }
            }
    printf("%s (%d splits of 1 to 4 ranks)\n", failures ? "DIFFERENT" : "all equal", cases);
    return failures ? 1 : 0;
}
