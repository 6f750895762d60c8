// Host emulation of kernels/ghosts.cu (with the prelude's scan), the local/cut split of a rank's rows, driven as
// src/graph/ghosts_gpu.rs `split` drives it: split_mark over a small grid (so that its
// grid-stride loop turns), the others a warp at a time over whole blocks of 256 threads
// (warp_fibers.h: rows longer than a warp go through its lanes together), the ghosts numbered
// and the rows' counts turned into offsets by the GPU's exclusive scan (a warp per tile, the
// tiles' sums scanned the same way, level by level, and added back), the ghost ids listed, the
// cut offsets derived, the entries scattered, and picked cut edges read back by a binary
// search (split_cut_edges). Checked against the split's definition, as src/graph/ghosts.rs
// `LocalRows::split` writes it: the ghosts are the distinct remote endpoints in ascending id;
// each row's local entries are its own neighbours' local indices and its cut entries its other
// neighbours' ghost indices, both in the row's order. Random symmetric graphs with hubs (rows of
// 0 to a few thousand entries, rows of exactly 32 and 33, several long rows in one warp) cut
// into 1 to 4 ranks' blocks. The scan alone too, on tiles of 1, 2 and 16 rounds (one to four
// levels) and lengths about the tiles' edges, against a sequential one. Run by
// scripts/emulate-kernels.
#include <algorithm>
#include <cstdio>
#include <random>
#include <set>
#include "warp_fibers.h"
static u64 emu_grid_threads;
inline u64 grid_threads() { return emu_grid_threads; }
inline int __popcll(u64 x) { return __builtin_popcountll(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline u64 atomicOr(u64 *a, u64 v) { u64 old = *a; *a |= v; return old; }
#include "ghosts_kernels.h"  // the prelude's warp_sum and scan, ghosts.cu (its SCAN_KERNELS(u64))
SCAN_KERNELS(u32)             // as euler.cu declares them
#include "scan_host.h"

// The scan on random items of type T, against a sequential one (u64: some items large, so that
// sums pass 2^32; u32: small items, as degrees are).
template <typename T>
static int scan_cases(const char *type) {
    int failures = 0;
    std::mt19937_64 rng(31);
    for (u32 rounds : {1u, 2u, 16u})
        for (u64 len : {1ull, 31ull, 32ull, 33ull, 64ull, 65ull, 511ull, 512ull, 513ull, 1024ull, 1025ull,
                        2049ull, 5000ull}) {
            std::vector<T> a(len), want(len);
            for (auto &x : a) x = sizeof(T) == 8 && rng() % 4 == 0 ? (T)(rng() >> 34) : (T)(rng() % 40);
            T sum = 0;
            for (u64 i = 0; i < len; sum += a[i], i++) want[i] = sum;
            exclusive_scan(a.data(), len, rounds);
            if (a != want && failures++ < 5)
                printf("  %s scan of %llu items, %u rounds: differs\n", type, len, rounds);
        }
    return failures;
}

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
    std::vector<u64> local_at(own + 1, ~0ull);
    local_at[own] = 0;  // zeroed by the host, as the rest
    launch_warps(grid(own), [&] { split_count(offsets.data(), adj.data(), n, first, local_at.data()); });
    std::vector<u64> before(word_count + 1, ~0ull);
    before[word_count] = 0;
    launch_warps(grid(word_count), [&] { split_word_counts(words.data(), word_count, before.data()); });
    exclusive_scan(before.data(), word_count + 1, 16);
    std::vector<u64> ids(before[word_count], ~0ull);
    launch_warps(grid(word_count), [&] { split_ghost_ids(words.data(), word_count, before.data(), ids.data()); });
    exclusive_scan(local_at.data(), own + 1, 16);
    std::vector<u64> cut_at(own + 1, ~0ull);
    launch_warps(grid(own + 1), [&] { split_cut_offsets(offsets.data(), local_at.data(), n, cut_at.data()); });
    std::vector<u32> local_adj(local_at[own], ~0u), cut_ghost(cut_at[own], ~0u);
    launch_warps(grid(own), [&] {
        split_scatter(offsets.data(), adj.data(), n, first, words.data(), before.data(), local_at.data(),
                      cut_at.data(), local_adj.data(), cut_ghost.data());
    });
    // Picked cut edges read back (src/graph/components/mod.rs `probe_giants` spreads up to 64;
    // here every one where there are few, else every seventh, the last among them).
    u64 cuts = cut_at[own];
    std::vector<u64> picks;
    for (u64 i = 0; i < cuts; i += cuts < 200 ? 1 : 7) picks.push_back(i);
    if (cuts) picks.push_back(cuts - 1);
    std::vector<u32> pick_own(picks.size(), ~0u), pick_ghost(picks.size(), ~0u);
    launch_warps(grid(picks.size()), [&] {
        split_cut_edges(picks.data(), picks.size(), cut_at.data(), n, cut_ghost.data(), pick_own.data(),
                        pick_ghost.data());
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
    bool picks_right = true;
    for (size_t k = 0; k < picks.size(); k++) {
        u64 i = picks[k], u = pick_own[k];
        picks_right = picks_right && u < own && want_cut_at[u] <= i && i < want_cut_at[u + 1] &&
                      pick_ghost[k] == want_cut[i];
    }
    expect(picks_right, "picked cut edges");
    return failures;
}

int main() {
    int failures = scan_cases<u64>("u64") + scan_cases<u32>("u32"), cases = 0;
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
    printf("%s (%d splits of 1 to 4 ranks, 78 scans of u64 and u32)\n", failures ? "DIFFERENT" : "all equal", cases);
    return failures ? 1 : 0;
}
