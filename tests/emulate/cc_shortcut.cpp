// Host emulation of kernels/cc.cu's shortcutting across ranks, as src/graph/components/gpu.rs
// `shortcut` drives it, step after step until no rank asks: on every emulated rank
// cc_queries (a warp at a time, warp_fibers.h), the queries moved to the labels' owners as
// GpuExchange::alltoallv_runs moves them, cc_answer there, the answers moved back,
// cc_store_answers and cc_take_answers. Each step is checked against its definition, written
// here over the labels as they stood before it: a boundary component not done follows its
// label's chain (label l names vertex l, whose label is l's component's) through its rank's
// vertices; ending at a root there it takes it and is done; else at another rank's vertex r,
// which it asks of r's owner once per distinct r, and takes where r's chain leaves the
// owner's vertices (done if at a root of the owner's). At the end every boundary component
// labels with the root its chain ends at, across all ranks. 2 to 4 ranks, boundary components
// pointing at a few hub labels (as Kronecker graphs' point at the giant's) or spread, a table
// exactly twice their count.
// Run by scripts/emulate-kernels.
#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include "warp_fibers.h"
typedef unsigned char u8;
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
    std::vector<std::vector<u64>> start_labels(ranks);
    for (u32 r = 0; r < ranks; r++) start_labels[r] = rk[r].comp_min;
    // The label of vertex l (its component's), over labels `cm`.
    auto label_of = [&](const std::vector<std::vector<u64>> &cm, u64 l) {
        const Rank &o = rk[l / block];
        return cm[l / block][o.parent[l - o.first]];
    };
    // Where a chain from l leaves rank r's vertices, or its root there; whether that is a root
    // (there, or after a component flagged done).
    auto chain_end = [&](const std::vector<std::vector<u64>> &cm, const std::vector<std::vector<u8>> &dn,
                         u32 r, u64 l) {
        bool final = false;
        while (l / block == r) {
            u32 root = rk[r].parent[l - rk[r].first];
            if (cm[r][root] == l) return std::pair<u64, bool>{l, true};
            final = dn[r][root];
            l = cm[r][root];
        }
        return std::pair<u64, bool>{l, final};
    };
    std::vector<std::vector<u8>> done(ranks);
    for (u32 r = 0; r < ranks; r++) done[r].assign(block, 0);
    int failures = 0;
    for (u32 step = 1;; step++) {
        std::vector<std::vector<u64>> before(ranks);
        for (u32 r = 0; r < ranks; r++) before[r] = rk[r].comp_min;
        std::vector<std::vector<u8>> done_before = done;
        std::vector<std::vector<u64>> table(ranks), items(ranks), ends(ranks);
        std::vector<std::vector<u32>> slots(ranks);
        std::vector<u64> asked(ranks, 0);
        u64 asked_all = 0;
        for (u32 r = 0; r < ranks; r++) {
            Rank &k = rk[r];
            u64 count = k.roots.size(), local_n = block;
            u64 size = 1;  // gpu.rs table_slots: 2 * count rounded up to a power of two
            while (size < 2 * count) size *= 2;
            table[r].assign(std::max<u64>(2, size), 0);
            u64 mask = table[r].size() - 1;
            slots[r].assign(count, 7);
            items[r].assign(count, 0);
            ends[r].assign(count, 0);
            launch_warps(count, [&] { cc_queries(k.roots.data(), count, k.first, local_n, k.parent.data(), k.comp_min.data(), done[r].data(), ends[r].data(), table[r].data(), mask, slots[r].data(), items[r].data(), &asked[r]); });
            asked_all += asked[r];
        }
        // Queries to the owners (in source order), answered there, back to the askers.
        std::vector<std::vector<std::pair<u32, u64>>> inbox(ranks);  // (asking rank, item)
        for (u32 r = 0; r < ranks; r++)
            for (u64 i = 0; i < asked[r]; i++) inbox[(items[r][i] >> 32) / block].push_back({r, items[r][i]});
        std::vector<std::vector<u64>> replies(ranks);
        for (u32 o = 0; o < ranks; o++) {
            std::vector<u64> got;
            for (auto &p : inbox[o]) got.push_back(p.second);
            u64 total = got.size();
            launch(total, [&] { cc_answer(got.data(), total, rk[o].first, block, rk[o].parent.data(), rk[o].comp_min.data(), done[o].data()); });
            for (u64 i = 0; i < total; i++) replies[inbox[o][i].first].push_back(got[i]);
        }
        for (u32 r = 0; r < ranks; r++) {
            Rank &k = rk[r];
            u64 count = k.roots.size(), got = replies[r].size();
            launch(got, [&] { cc_store_answers(replies[r].data(), got, table[r].data()); });
            launch_warps(count, [&] { cc_take_answers(slots[r].data(), count, k.roots.data(), ends[r].data(), table[r].data(), k.comp_min.data(), done[r].data()); });
        }
        // The definition, over the labels and flags before the step.
        for (u32 r = 0; r < ranks; r++) {
            Rank &k = rk[r];
            std::set<u64> remote;
            for (u32 root : k.roots) {
                u64 want = before[r][root];
                bool want_done = done_before[r][root];
                if (!want_done) {
                    auto [end, final] = chain_end(before, done_before, r, want);
                    if (!final) {
                        remote.insert(end);
                        std::tie(end, final) = chain_end(before, done_before, (u32)(end / block), end);
                    }
                    want = std::min(want, end);
                    want_done = final;
                }
                if (k.comp_min[root] != want || (bool)done[r][root] != want_done) {
                    if (failures++ < 5) printf("  step %u rank %u component %u: label %llu done %d, expected %llu done %d\n", step, r, root, k.comp_min[root], done[r][root], want, want_done);
                }
            }
            std::set<u64> sent;
            for (u64 i = 0; i < asked[r]; i++) sent.insert(items[r][i] >> 32);
            if (asked[r] != remote.size() || sent != remote) {
                failures++;
                printf("  step %u rank %u: %llu queries for %zu distinct remote labels\n", step, r, asked[r], remote.size());
            }
        }
        if (!asked_all) break;
        if (step > 64) {
            printf("  no end after %u steps\n", step);
            return failures + 1;
        }
    }
    // The end: every boundary component labels with a root, the one its chain ends at.
    for (u32 r = 0; r < ranks; r++)
        for (u64 i = 0; i < rk[r].roots.size(); i++) {
            u64 l = rk[r].comp_min[rk[r].roots[i]], want = start_labels[r][rk[r].roots[i]];
            while (label_of(start_labels, want) != want) want = label_of(start_labels, want);
            if (l != want || label_of(start_labels, l) != l) {
                if (failures++ < 5) printf("  rank %u component %u: label %llu, root %llu\n", r, rk[r].roots[i], l, want);
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
    printf("%s (%d shortcuttings on 2 to 4 ranks)\n", failures ? "DIFFERENT" : "all equal", cases);
    return failures ? 1 : 0;
}
