// Host emulation of kernels/cc.cu's shortcut step across ranks, as
// src/graph/components/gpu.rs `shortcut` drives it: on every emulated rank cc_queries (a
// warp at a time, warp_fibers.h), the queries moved to the labels' owners as
// GpuExchange::alltoallv_runs moves them, cc_answer there, the answers moved back,
// cc_store_answers and cc_take_answers. Checked against the step's definition, written here:
// each boundary component whose label l is another rank's vertex takes the label of l's
// component at its owner (as it stood when the queries had been made) where that is lower;
// each rank asks each distinct remote label exactly once; `lowered` counts the components
// whose label fell. 2 to 4 ranks, boundary components pointing at a few hub labels (as
// Kronecker graphs' point at the giant's) or spread, a table exactly twice their count.
// Run by scripts/emulate-kernels.
#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include "warp_fibers.h"
inline u64 atomicAdd(u64 *a, u64 v) { u64 old = *a; *a += v; return old; }
inline u64 atomicMin(u64 *a, u64 v) { u64 old = *a; if (v < old) *a = v; return old; }
inline u64 atomicCAS(u64 *a, u64 cmp, u64 v) { u64 old = *a; if (old == cmp) *a = v; return old; }
#include "cc_shortcut_kernels.h"  // the prelude's warp atomics, cc.cu's shortcut section

template <class F> void launch(u64 threads, F f) {
    for (u64 t = threads; t-- > 0;) { emu_thread = t; f(); }
}

struct Rank {
    u64 first;
    std::vector<u32> parent;  // compressed: every vertex points at its root
    std::vector<u64> comp_min;
    std::vector<u32> roots;  // the boundary components
};

// One case: `ranks` ranks of `block` vertices; labels drawn from `hubs` hub vertices with
// probability `hub_share`, else any vertex at or below the root. Returns the failures.
static int run_case(u32 ranks, u32 block, u32 hubs, double hub_share, u64 seed) {
    std::mt19937_64 rng(seed);
    std::vector<Rank> rk(ranks);
    u64 n = (u64)ranks * block;
    std::vector<u64> hub(hubs);
    for (auto &h : hub) h = rng() % n;
    for (u32 r = 0; r < ranks; r++) {
        Rank &k = rk[r];
        k.first = (u64)r * block;
        k.parent.resize(block);
        k.comp_min.resize(block);
        for (u32 v = 0; v < block; v++) {
            bool root = v == 0 || rng() % 3 == 0;
            k.parent[v] = root ? v : k.parent[rng() % v];
        }
        for (u32 v = 0; v < block; v++) {
            if (k.parent[v] != v) continue;
            u64 self = k.first + v;
            u64 label = rng() % 4 == 0 ? self : rng() % (self + 1);
            if ((double)(rng() % 1000) < 1000 * hub_share) label = std::min(self, hub[rng() % hubs]);
            k.comp_min[v] = label;
            if (rng() % 4 != 0) k.roots.push_back(v);
        }
        std::shuffle(k.roots.begin(), k.roots.end(), rng);
    }
    std::vector<std::vector<u64>> before(ranks);
    for (u32 r = 0; r < ranks; r++) before[r] = rk[r].comp_min;
    // The kernels, step by step over the ranks as the exchanges order them.
    std::vector<std::vector<u64>> table(ranks), items(ranks);
    std::vector<std::vector<u32>> slots(ranks);
    std::vector<u64> lowered(ranks, 0), asked(ranks, 0);
    for (u32 r = 0; r < ranks; r++) {
        Rank &k = rk[r];
        u64 count = k.roots.size(), local_n = block;
        u64 size = 1;  // gpu.rs table_slots: 2 * count rounded up to a power of two
        while (size < 2 * count) size *= 2;
        table[r].assign(std::max<u64>(2, size), 0);
        u64 mask = table[r].size() - 1;
        slots[r].assign(count, 7);
        items[r].assign(count, 0);
        launch_warps(count, [&] { cc_queries(k.roots.data(), count, k.first, local_n, k.parent.data(), k.comp_min.data(), table[r].data(), mask, slots[r].data(), items[r].data(), &asked[r], &lowered[r]); });
    }
    std::vector<std::vector<u64>> snapshot(ranks);
    for (u32 r = 0; r < ranks; r++) snapshot[r] = rk[r].comp_min;
    // Queries to the owners (in source order), answered there, back to the askers.
    std::vector<std::vector<std::pair<u32, u64>>> inbox(ranks);  // (asking rank, item)
    for (u32 r = 0; r < ranks; r++)
        for (u64 i = 0; i < asked[r]; i++) inbox[(items[r][i] >> 32) / block].push_back({r, items[r][i]});
    std::vector<std::vector<u64>> replies(ranks);
    for (u32 o = 0; o < ranks; o++) {
        std::vector<u64> got;
        for (auto &p : inbox[o]) got.push_back(p.second);
        u64 total = got.size();
        launch(total, [&] { cc_answer(got.data(), total, rk[o].first, rk[o].parent.data(), rk[o].comp_min.data()); });
        for (u64 i = 0; i < total; i++) replies[inbox[o][i].first].push_back(got[i]);
    }
    int failures = 0;
    for (u32 r = 0; r < ranks; r++) {
        Rank &k = rk[r];
        u64 count = k.roots.size(), got = replies[r].size();
        launch(got, [&] { cc_store_answers(replies[r].data(), got, table[r].data()); });
        launch_warps(count, [&] { cc_take_answers(slots[r].data(), count, k.roots.data(), table[r].data(), k.comp_min.data(), &lowered[r]); });
        // The definition: each remote label asked once, each asker takes its label's label.
        std::set<u64> remote;
        u64 fell = 0;
        for (u64 i = 0; i < count; i++) {
            u32 root = k.roots[i];
            // A label of this rank's jumps here (cc_queries, as before the table): the
            // definition is checked for the remote ones.
            u64 l = before[r][root], self = k.first + root, want = snapshot[r][root];
            bool own = l - k.first < block;
            if (l != self && !own) {
                remote.insert(l);
                Rank &o = rk[l / block];
                want = std::min(want, snapshot[l / block][o.parent[l - o.first]]);
            }
            fell += k.comp_min[root] < before[r][root];
            if (k.comp_min[root] != want) {
                if (failures++ < 5) printf("  rank %u component %u: label %llu, expected %llu\n", r, root, k.comp_min[root], want);
            }
        }
        std::set<u64> sent;
        for (u64 i = 0; i < asked[r]; i++) sent.insert(items[r][i] >> 32);
        if (asked[r] != remote.size() || sent != remote) {
            failures++;
            printf("  rank %u: %llu queries for %zu distinct remote labels\n", r, asked[r], remote.size());
        }
        if (lowered[r] != fell) {
            failures++;
            printf("  rank %u: lowered %llu, %llu labels fell\n", r, lowered[r], fell);
        }
    }
    return failures;
}

int main() {
    int failures = 0, cases = 0;
    for (u32 ranks = 2; ranks <= 4; ranks++)
        for (u32 block : {40u, 300u, 2000u})
            for (auto [hubs, share] : {std::pair<u32, double>{1, 0.9}, {3, 0.7}, {50, 0.3}, {1, 0.0}})
                for (u64 seed = 1; seed <= 3; seed++) {
                    failures += run_case(ranks, block, hubs, share, seed * 7919 + ranks * 31 + block);
                    cases++;
                }
    printf("%s (%d shortcut steps on 2 to 4 ranks)\n", failures ? "DIFFERENT" : "all equal", cases);
    return failures ? 1 : 0;
}
