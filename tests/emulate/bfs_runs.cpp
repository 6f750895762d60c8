// Host emulation of kernels/bfs.cu's 1D top-down visit (the neighbour step of bfs_top_down
// and bfs_top_down_heavy), a warp at a time (warp_fibers.h): each lane visits one adjacency
// entry (v, parent) of random frontier rows on one of 2 to 4 emulated ranks. Checked against
// the visit's definition, written here: every own neighbour is claimed once into the next
// queue with a parent that has it as a neighbour; every other rank's neighbour is sent to its
// owner exactly once per search (the `sent` bitmap), in the owner's run of the send buffer
// (the other ranks' runs in rank order, `run_capacity` pairs each, the counters after the
// five others counting them), and no pair lands outside its run. Run by scripts/emulate-kernels.
#include <cstdio>
#include <random>
#include <set>
#include "warp_fibers.h"
typedef int i32;
inline u64 atomicAdd(u64 *a, u64 v) { u64 old = *a; *a += v; return old; }
inline u64 atomicOr(u64 *a, u64 v) { u64 old = *a; *a |= v; return old; }
inline u64 atomicCAS(u64 *a, u64 cmp, u64 v) { u64 old = *a; if (old == cmp) *a = v; return old; }
#include "bfs_visit.h"  // the prelude's warp_slot, bfs.cu's claim, push_next, first_send, visit

// One case: rank `me` of `ranks` ranks of `block` vertices scans `entries` random entries
// (local rows of random frontier vertices, neighbours anywhere; whole warps, as the
// emulated warp needs every lane at its ballots and matches). Returns the failures.
static int run_case(u32 ranks, u32 me, u64 block, u64 entries, u64 seed) {
    std::mt19937_64 rng(seed);
    u64 n = ranks * block, first = me * block, local_n = block;
    std::vector<u64> u(entries), v(entries), offsets(local_n + 1, 0);
    for (u64 e = 0; e < entries; e++) {
        u[e] = first + rng() % local_n;
        // Mostly a few hot vertices (repeats within a warp), else any.
        v[e] = rng() % 2 ? rng() % 8 * (n / 8) + rng() % 3 : rng() % n;
    }
    std::vector<i64> parent(local_n, -1);
    std::vector<u32> next_queue(local_n);
    std::vector<u64> counters(5 + ranks, 0), sent((n + 63) / 64, 0);
    u64 run_capacity = block, runs = ranks - 1;
    std::vector<u64> remote(run_capacity * runs, ~0ULL);
    launch_warps(entries, [&] {
        u64 e = thread_index(), edges = 0;
        if (e < entries)
            visit(v[e], u[e], first, local_n, parent.data(), offsets.data(), next_queue.data(),
                  counters.data(), remote.data(), run_capacity, block, me, sent.data(), edges);
    });
    int bad = 0;
    std::set<std::pair<u64, u64>> edge_set;
    std::set<u64> own_seen, remote_seen;
    for (u64 e = 0; e < entries; e++) {
        edge_set.insert({u[e], v[e]});
        (v[e] / block == me ? own_seen : remote_seen).insert(v[e]);
    }
    // Own neighbours: each claimed once into the queue, by a frontier vertex next to it.
    std::set<u64> queued(next_queue.begin(), next_queue.begin() + counters[0]);
    if (queued.size() != counters[0] || queued.size() != own_seen.size()) bad++;
    for (u64 w : own_seen)
        if (!queued.count(w - first) || !edge_set.count({(u64)parent[w - first], w})) bad++;
    // Remote neighbours: each once, in its owner's run.
    std::set<u64> got;
    u64 total = 0;
    for (u32 r = 0; r < ranks; r++) {
        if (r == me) { bad += counters[5 + r] != 0; continue; }
        u64 run = r - (r > me);
        total += counters[5 + r];
        for (u64 i = 0; i < run_capacity; i++) {
            u64 pair = remote[run * run_capacity + i];
            if (i >= counters[5 + r]) { bad += pair != ~0ULL; continue; }
            u64 w = pair >> 32, p = pair & 0xffffffffULL;
            bad += w / block != r || !edge_set.count({p, w}) || !got.insert(w).second;
        }
    }
    bad += total != remote_seen.size() || got != remote_seen;
    return bad;
}

int main() {
    int bad = 0, cases = 0;
    for (u32 ranks = 2; ranks <= 4; ranks++)
        for (u32 me = 0; me < ranks; me++)
            for (u64 entries : {32, 224, 3008}) {
                bad += run_case(ranks, me, 1024, entries, 1000 * ranks + 10 * me + entries) != 0;
                cases++;
            }
    if (bad) printf("  %d of %d cases DIFFER\n", bad, cases);
    else printf("  top-down visit, 2-4 ranks, %d cases: all equal\n", cases);
    return bad != 0;
}
