// Host emulation of kernels/bfs.cu's 1D top-down scan (scan_rows with the neighbour step
// `visit` of bfs_top_down), a warp at a time (warp_fibers.h), on one of 2 to 4 emulated ranks:
// the rows of a random frontier queue (degrees 0 to a few hundred, some heavy), 32, 8 or 2
// entries a warp step (a lane per short row, a warp per longer one) and 1 (a warp per row),
// with the heavy bound of long queues and of short ones, over a small grid so that the
// grid-stride loop turns.
// Checked against the scan's and the visit's definitions, written here: every entry of every
// row below the heavy bound is visited once and counted as inspected, every heavy row is listed
// once and not visited; every own neighbour is claimed once into the next queue with a parent
// that has it as a neighbour; every other rank's neighbour is sent to its owner exactly once
// per search (the `sent` bitmap), in the owner's run of the send buffer (the other ranks' runs
// in rank order, `run_capacity` pairs each, the counters after the five others counting
// them), and no pair lands outside its run. Run by scripts/emulate-kernels.
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include "warp_fibers.h"
typedef int i32;
static u64 emu_grid_threads;
inline u64 grid_threads() { return emu_grid_threads; }
inline u64 atomicAdd(u64 *a, u64 v) { u64 old = *a; *a += v; return old; }
inline u64 atomicOr(u64 *a, u64 v) { u64 old = *a; *a |= v; return old; }
inline u64 atomicCAS(u64 *a, u64 cmp, u64 v) { u64 old = *a; if (old == cmp) *a = v; return old; }
#include "bfs_visit.h"  // warp_slot, bfs.cu's claim, push_next, first_send, visit, scan_rows

// The heavy bounds the host passes (src/workloads/bfs/gpu.rs): long queues', short ones'.
static const u64 HEAVY_DEGREE = 4096, SHORT_HEAVY_DEGREE = 256;

// A random degree: mostly short rows, some a few warps long, a few heavy.
static u64 random_degree(std::mt19937_64 &rng) {
    u64 r = rng() % 100;
    if (r < 70) return rng() % 8;
    if (r < 90) return rng() % 40;
    if (r < 98) return 32 + rng() % 300;
    return HEAVY_DEGREE + rng() % 100;
}

// One case: rank `me` of `ranks` ranks of `block` vertices scans a queue of `queue_len`
// random own rows (neighbours mostly a few hot vertices, else any) with `threads` threads.
// Returns the failures.
static int run_case(u32 ranks, u32 me, u64 block, u64 queue_len, u64 threads, u64 per_warp,
                    u64 heavy_degree, u64 seed) {
    std::mt19937_64 rng(seed);
    u64 n = ranks * block, first = me * block, local_n = block;
    std::vector<u64> offsets(local_n + 1, 0);
    for (u64 l = 0; l < local_n; l++) offsets[l + 1] = offsets[l] + random_degree(rng);
    std::vector<u32> adj(offsets[local_n]);
    for (u32 &v : adj) v = rng() % 2 ? rng() % 8 * (n / 8) + rng() % 3 : rng() % n;
    std::vector<u32> queue(queue_len);
    for (u32 &u : queue) u = rng() % local_n;  // repeats too, as a bitmap's queue never has
    std::vector<i64> parent(local_n, -1);
    std::vector<u32> next_queue(local_n), heavy(queue_len + 1);
    std::vector<u64> counters(5 + ranks, 0), sent((n + 63) / 64, 0);
    u64 run_capacity = block, runs = ranks - 1;
    std::vector<u64> remote(run_capacity * runs, ~0ULL);
    std::map<std::pair<u64, u64>, int> visited;  // (row, entry index) -> visits
    u64 inspected = 0;
    emu_grid_threads = threads;
    launch_warps(threads, [&] {
        u64 edges = 0, mine = 0;
        scan_rows(offsets.data(), adj.data(), queue.data(), queue_len, heavy.data(),
                  counters.data(), edges, mine, per_warp, heavy_degree, [&](bool on, u64 v, u64 u, u64 &edges) {
                      if (on) visited[{u, v}]++;
                      visit(on, v, first + u, first, local_n, parent.data(), offsets.data(),
                            next_queue.data(), counters.data(), remote.data(), run_capacity,
                            block, me, sent.data(), edges);
                  });
        inspected += mine;
    });
    int bad = 0;
    // The scan: each light row's entries visited once per queue entry, heavy rows listed.
    std::map<std::pair<u64, u64>, int> expected;
    std::multiset<u64> heavy_rows;
    u64 light_entries = 0;
    std::set<std::pair<u64, u64>> edge_set;
    std::set<u64> own_seen, remote_seen;
    for (u64 u : queue) {
        if (offsets[u + 1] - offsets[u] >= heavy_degree) { heavy_rows.insert(u); continue; }
        for (u64 e = offsets[u]; e < offsets[u + 1]; e++) {
            expected[{u, adj[e]}]++;
            edge_set.insert({first + u, adj[e]});
            (adj[e] / block == me ? own_seen : remote_seen).insert(adj[e]);
            light_entries++;
        }
    }
    bad += visited != expected || inspected != light_entries;
    bad += std::multiset<u64>(heavy.begin(), heavy.begin() + counters[4]) != heavy_rows;
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
            for (u64 queue_len : {1, 45, 700})
                for (u64 per_warp : {1, 2, 8, 32}) {
                    // Each heavy bound with a warp an entry or two and with several.
                    bool short_bound = per_warp == 1 || per_warp == 8;
                    u64 heavy_degree = short_bound ? SHORT_HEAVY_DEGREE : HEAVY_DEGREE;
                    u64 seed = 1000 * ranks + 10 * me + queue_len + per_warp;
                    bad += run_case(ranks, me, 1024, queue_len, 64, per_warp, heavy_degree,
                                    seed) != 0;
                    cases++;
                }
    if (bad) printf("  %d of %d cases DIFFER\n", bad, cases);
    else printf("  top-down scan and visit, 2-4 ranks, %d cases: all equal\n", cases);
    return bad != 0;
}
