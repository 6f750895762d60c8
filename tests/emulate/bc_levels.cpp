// Host emulation of kernels/bc.cu: a batch of sources swept level by level as
// src/graph/betweenness/gpu.rs drives it (bc_sources, then bc_expand and bc_forward per
// level while the next level is not empty, bc_backward from the deepest level up,
// bc_accumulate), each kernel run thread by thread, threads in reverse order (the kernels may
// not depend on the order); bc_forward and bc_backward, whose warps read rows together
// (ballots and shuffles), a warp at a time (in reverse order), its 32 threads as fibers
// that take turns at each ballot and shuffle. Checked bit for bit (δ of the reached lanes, the fixed-point sums) against a sequential Brandes written here:
// per source a BFS by levels, σ(v) summed over the in-row in row order, δ(v) over the
// out-row in row order, as the CPU path sums them. Random directed and undirected multigraphs
// with parallel arcs, isolated vertices and repeated sources; rows longer than a trial's
// chunk (2 to 9 entries here, CHUNK in gpu.rs) go to the `_chunks` kernels a piece a warp and
// bc_combine, and the reference sums the same pieces in the same order. Then the same batches on the
// 1D partition over 2 to 4 emulated ranks, as gpu.rs and gpu_ghosts.rs drive it
// (bc_discover for the next level, each level's σ (forward) or u in σ's place (backward)
// in the level's lanes, their places found by the prelude's scan (scan_host.h) and packed
// by bc_pack, moved as GpuExchange::alltoallv_runs moves them, stored by bc_unpack):
// every rank's δ of its own
// vertices and its fixed-point sums equal the whole graph's bit for bit. σ and δ start as NaN
// (gpu.rs does not clear them between batches): only lanes a batch wrote may be read.
// Run by scripts/emulate-kernels.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <random>
#include "warp_fibers.h"
inline u64 atomicOr(u64 *a, u64 v) { u64 old = *a; *a |= v; return old; }
inline u32 atomicAdd(u32 *a, u32 v) { u32 old = *a; *a += v; return old; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline int __popcll(u64 x) { return __builtin_popcountll(x); }
inline u64 __double2ull_rz(double x) { return (u64)x; }
inline double __ull2double_rn(u64 x) { return (double)x; }
inline u64 min(u64 a, u64 b) { return a < b ? a : b; }
#include "bc_kernels.h"  // the prelude's scan and kernels/bc.cu, written by scripts/emulate-kernels
#include "scan_host.h"

template <class F> void launch(u64 threads, F f) {
    for (u64 t = threads; t-- > 0;) { emu_thread = t; f(); }
}

// bc_forward's and bc_backward's threads for `count` vertices: a warp each (gpu.rs `spread`).
inline u64 level_threads(u32 count) { return (u64)count * WARP; }

struct Rows { std::vector<u64> off; std::vector<u32> adj; };

// The trial's piece length (gpu.rs CHUNK).
static u64 chunk = 1024;

// The pieces of the rows of vertices 0..n longer than `chunk`, as gpu_pieces.rs lists them.
struct Pieces {
    std::vector<u32> rows, first, row_of, rank;
    Pieces(const Rows &r, u32 n) {
        for (u32 v = 0; v < n; v++) {
            u64 len = r.off[v + 1] - r.off[v];
            if (len <= chunk) continue;
            rows.push_back(v);
            first.push_back(row_of.size());
            for (u32 i = 0; i < (len + chunk - 1) / chunk; i++) { row_of.push_back(v); rank.push_back(i); }
        }
        first.push_back(row_of.size());
    }
    u32 count() const { return row_of.size(); }
    u32 longs() const { return rows.size(); }
};

// Forward and backward on a level as gpu.rs launches them: the level's list, then the long
// rows' pieces and their sums combined into σ (forward) or δ (backward).
static void forward_launches(const Rows &inc, const Pieces &p, const std::vector<u32> &list, u32 count, u32 lanes, const u64 *current, const u64 *next, u64 *reached, double *sigma) {
    launch_warps(level_threads(count), [&] { bc_forward(inc.off.data(), inc.adj.data(), list.data(), count, lanes, chunk, current, next, reached, sigma); });
    if (!p.count()) return;
    std::vector<double> partial((u64)p.count() * lanes, -1.0);  // never read where not written
    launch_warps(level_threads(p.count()), [&] { bc_forward_chunks(inc.off.data(), inc.adj.data(), p.row_of.data(), p.rank.data(), p.count(), chunk, lanes, current, next, sigma, partial.data()); });
    launch((u64)p.longs() * lanes, [&] { bc_combine(p.rows.data(), p.first.data(), p.longs(), lanes, 0, next, partial.data(), sigma, nullptr); });
}

static void backward_launches(const Rows &out, const Pieces &p, const std::vector<u32> &list, u32 count, u32 lanes, const u64 *here, const u64 *deeper, double *sigma, double *delta) {
    launch_warps(level_threads(count), [&] { bc_backward(out.off.data(), out.adj.data(), list.data(), count, lanes, chunk, here, deeper, sigma, delta); });
    if (!p.count()) return;
    std::vector<double> partial((u64)p.count() * lanes, -1.0);
    launch_warps(level_threads(p.count()), [&] { bc_backward_chunks(out.off.data(), out.adj.data(), p.row_of.data(), p.rank.data(), p.count(), chunk, lanes, here, deeper, sigma, partial.data()); });
    launch((u64)p.longs() * lanes, [&] { bc_combine(p.rows.data(), p.first.data(), p.longs(), lanes, 1, here, partial.data(), sigma, delta); });
}

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
    // NaN: what an earlier batch left (gpu.rs clears neither between batches); a read of a
    // lane this batch did not write would show in δ or the sums.
    std::vector<double> sigma((u64)n * lanes, NAN), delta((u64)n * lanes, NAN);
    std::vector<u64> reached(n);
    std::vector<std::vector<u64>> levels(1, std::vector<u64>(n));
    std::vector<std::vector<u32>> lists(1, std::vector<u32>(n));
    std::vector<u32> counts;
    Pieces out_pieces(out, n), in_pieces(inc, n);
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
        launch((u64)count * WARP, [&] { bc_expand(out.off.data(), out.adj.data(), lists[level].data(), count, chunk, levels[level].data(), reached.data(), levels[level + 1].data(), lists[level + 1].data(), &next); });
        const Pieces &p = out_pieces;
        launch((u64)p.count() * WARP, [&] { bc_expand_chunks(out.off.data(), out.adj.data(), p.row_of.data(), p.rank.data(), p.count(), chunk, levels[level].data(), reached.data(), levels[level + 1].data(), lists[level + 1].data(), &next); });
        if (next == 0) break;
        forward_launches(inc, in_pieces, lists[level + 1], next, lanes, levels[level].data(), levels[level + 1].data(), reached.data(), sigma.data());
        counts.push_back(next);
        level++;
    }
    for (size_t at = level + 1; at-- > 0;) {  // the deepest level too (u = 1/σ there)
        u32 count = counts[at];
        backward_launches(out, out_pieces, lists[at], count, lanes, levels[at].data(), levels[at + 1].data(), sigma.data(), delta.data());
    }
    launch(n, [&] { bc_accumulate(n, lanes, reached.data(), levels[0].data(), delta.data(), lo, hi); });
    return delta;
}

// Σ of row v's terms (`term`: negative where a neighbour has none) in row order, a row longer
// than `chunk` in pieces of `chunk` from its start, the pieces' sums added in order; with
// `carry`, each piece's adds' rounding errors (TwoSum) summed beside and added at its end.
template <class Term> static double piecewise(const Rows &r, u32 v, bool carry, Term term) {
    double total = 0.0;
    for (u64 begin = r.off[v]; begin < r.off[v + 1]; begin += chunk) {
        double sum = 0.0, carried = 0.0;
        for (u64 e = begin; e < std::min(begin + chunk, r.off[v + 1]); e++)
            if (double t = term(r.adj[e]); t >= 0.0) {
                double next = sum + t, t_part = next - sum, sum_part = next - t_part;
                carried += (sum - sum_part) + (t - t_part);
                sum = next;
            }
        total += carry ? sum + carried : sum;
    }
    return total;
}

// Sequential Brandes for one source: δ of every vertex (NaN where unreached), δ(v) = σ(v)·ρ(v),
// ρ(v) the sum of u(w) = 1/σ(w) + ρ(w) over its successors w (the kernels' rounding).
static std::vector<double> brandes(u32 n, const Rows &out, const Rows &inc, u32 s) {
    std::vector<i64> depth(n, -1);
    std::vector<std::vector<u32>> by_level{{s}};
    depth[s] = 0;
    std::vector<double> sigma(n, 0.0), delta(n, 0.0), u(n, 0.0);
    sigma[s] = 1.0;
    for (size_t d = 0; !by_level[d].empty(); d++) {
        std::vector<u32> next;
        for (u32 v : by_level[d])
            for (u64 e = out.off[v]; e < out.off[v + 1]; e++)
                if (depth[out.adj[e]] < 0) { depth[out.adj[e]] = d + 1; next.push_back(out.adj[e]); }
        for (u32 w : next)
            sigma[w] = piecewise(inc, w, false, [&](u32 x) { return depth[x] == (i64)d ? sigma[x] : -1.0; });
        by_level.push_back(next);
    }
    for (size_t d = by_level.size(); d-- > 0;)
        for (u32 v : by_level[d]) {
            double rho = piecewise(out, v, true, [&](u32 w) { return depth[w] == (i64)d + 1 ? u[w] : -1.0; });
            delta[v] = sigma[v] * rho;
            u[v] = 1.0 / sigma[v] + rho;
        }
    for (u32 v = 0; v < n; v++)
        if (depth[v] < 0) delta[v] = NAN;
    return delta;
}

// One emulated rank of the 1D partition: its own vertices [first, first + n), its rows in
// value-space columns (own vertices, then ghosts by ascending global id), its ghost plan.
struct Part {
    u32 first, n;
    std::vector<u32> ghosts;  // global ids, ascending
    Rows out, inc;
    std::vector<u32> send_local, dest;
    std::vector<u64> before;       // per destination rank: plan entries before its group (ranks + 1)
    std::vector<u64> ghost_first;  // per owner rank: its first ghost (ranks + 1)
    u32 slots() const { return n + ghosts.size(); }
    u32 column(u32 v) const {
        if (v >= first && v < first + n) return v - first;
        return n + (std::lower_bound(ghosts.begin(), ghosts.end(), v) - ghosts.begin());
    }
};

static Rows local_rows(const Part &p, const Rows &whole) {
    Rows r{{0}, {}};
    for (u32 v = p.first; v < p.first + p.n; v++) {
        for (u64 e = whole.off[v]; e < whole.off[v + 1]; e++) r.adj.push_back(p.column(whole.adj[e]));
        r.off.push_back(r.adj.size());
    }
    return r;
}

static std::vector<Part> partition(u32 n, u32 ranks, const Rows &out, const Rows &inc) {
    std::vector<Part> parts(ranks);
    u32 block = (n + ranks - 1) / ranks;
    for (u32 r = 0; r < ranks; r++) {
        Part &p = parts[r];
        p.first = std::min(n, r * block);
        p.n = std::min(n, p.first + block) - p.first;
        for (const Rows *w : {&out, &inc})
            for (u64 e = w->off[p.first]; e < w->off[p.first + p.n]; e++)
                if (w->adj[e] < p.first || w->adj[e] >= p.first + p.n) p.ghosts.push_back(w->adj[e]);
        std::sort(p.ghosts.begin(), p.ghosts.end());
        p.ghosts.erase(std::unique(p.ghosts.begin(), p.ghosts.end()), p.ghosts.end());
        p.out = local_rows(p, out);
        p.inc = local_rows(p, inc);
    }
    for (u32 r = 0; r < ranks; r++)  // owner r sends to each asking rank q, in q's ghost order
        for (u32 q = 0; q < ranks; q++) {
            parts[r].before.push_back(parts[r].send_local.size());
            for (u32 i = 0; i < parts[q].ghosts.size(); i++) {
                u32 v = parts[q].ghosts[i];
                if (v < parts[r].first || v >= parts[r].first + parts[r].n) continue;
                parts[r].send_local.push_back(v - parts[r].first);
                parts[r].dest.push_back(q);
            }
        }
    for (u32 q = 0; q < ranks; q++) {
        parts[q].before.push_back(parts[q].send_local.size());
        for (u32 r = 0; r <= ranks; r++) {
            u32 from = r < ranks ? parts[r].first : n;
            auto &g = parts[q].ghosts;
            parts[q].ghost_first.push_back(std::lower_bound(g.begin(), g.end(), from) - g.begin());
        }
    }
    return parts;
}

// A rank's device values for a batch.
struct RankState {
    std::vector<double> sigma, delta;
    std::vector<u64> reached;
    std::vector<std::vector<u64>> levels;
    std::vector<std::vector<u32>> lists;
    std::vector<u32> counts;
};

// Every rank packs `values` of its own vertices in `level(rank)` in the level's lanes (with
// their masks where masks_sent), as gpu_ghosts.rs drives bc_pack_words, the scan, bc_pack_totals
// and bc_pack; the runs travel as the all-to-all moves them (to rank q: each rank's run for q,
// in rank order); each rank unpacks what it received (bc_unpack_words, the scan, bc_unpack).
template <class Level, class Values>
static void push(std::vector<Part> &parts, u32 lanes, u32 masks_sent, Level level, Values values) {
    u32 ranks = parts.size();
    std::vector<std::vector<u64>> inbox(ranks);
    std::vector<std::vector<u64>> came(ranks, std::vector<u64>(ranks));
    for (u32 r = 0; r < ranks; r++) {
        Part &p = parts[r];
        u32 entries = p.send_local.size();
        std::vector<u64> out(entries * (1 + lanes) + 1, ~0ull), words(entries + 1, ~0ull), totals(ranks);
        launch(grid(entries), [&] { bc_pack_words(p.send_local.data(), entries, level(r).data(), words.data()); });
        exclusive_scan(words.data(), entries + 1, 16);
        launch(grid(ranks), [&] { bc_pack_totals(p.before.data(), ranks, words.data(), totals.data()); });
        launch(grid(entries), [&] { bc_pack(p.send_local.data(), p.dest.data(), entries, p.before.data(), lanes, masks_sent, level(r).data(), (const u64 *)values(r).data(), words.data(), out.data()); });
        for (u32 q = 0; q < ranks; q++) {
            u64 count = totals[q] ? totals[q] + masks_sent * (p.before[q + 1] - p.before[q]) : 0;
            auto at = out.begin() + p.before[q] * (1 + lanes);
            inbox[q].insert(inbox[q].end(), at, at + count);
            came[q][r] = count;
        }
    }
    for (u32 q = 0; q < ranks; q++) {
        Part &p = parts[q];
        std::vector<u64> runs(2 * ranks);
        for (u32 r = 0, at = 0; r < ranks; at += came[q][r], r++) runs[r] = at, runs[ranks + r] = came[q][r];
        u32 ghosts = p.ghosts.size();
        std::vector<u64> words(ghosts + 1, ~0ull);
        launch(grid(ghosts), [&] { bc_unpack_words(inbox[q].data(), runs.data(), p.ghost_first.data(), ranks, ghosts, p.n, masks_sent, level(q).data(), words.data()); });
        exclusive_scan(words.data(), ghosts + 1, 16);
        launch(grid(ghosts), [&] { bc_unpack(inbox[q].data(), runs.data(), p.ghost_first.data(), ranks, ghosts, p.n, lanes, masks_sent, level(q).data(), words.data(), (u64 *)values(q).data()); });
    }
}

// The batch on the partition, every rank in step as gpu.rs runs them: per rank its δ.
static std::vector<RankState> partitioned_batch(std::vector<Part> &parts, const std::vector<u64> &batch, u32 lanes, std::vector<std::vector<u64>> &lo, std::vector<std::vector<u64>> &hi) {
    u32 ranks = parts.size(), kb = batch.size();
    std::vector<RankState> st(ranks);
    for (u32 r = 0; r < ranks; r++) {
        Part &p = parts[r];
        RankState &s = st[r];
        s.sigma.assign((u64)p.slots() * lanes, NAN);  // as in kernels_batch
        s.delta.assign((u64)p.slots() * lanes, NAN);
        s.reached.assign(p.slots(), 0);
        s.levels.assign(1, std::vector<u64>(p.slots()));
        s.lists.assign(1, std::vector<u32>(p.n + 1));
        std::vector<u64> own;
        std::vector<u32> first;
        for (u64 v : batch) {
            bool mine = v >= p.first && v < p.first + p.n;
            own.push_back(mine ? v - p.first : ~0ull);
            if (mine) first.push_back(v - p.first);
        }
        launch(kb, [&] { bc_sources(own.data(), kb, lanes, s.sigma.data(), s.levels[0].data(), s.reached.data()); });
        std::sort(first.begin(), first.end());
        first.erase(std::unique(first.begin(), first.end()), first.end());
        std::copy(first.begin(), first.end(), s.lists[0].begin());
        s.counts.push_back(first.size());
    }
    push(parts, lanes, 1, [&](u32 r) -> std::vector<u64> & { return st[r].levels[0]; }, [&](u32 r) -> std::vector<double> & { return st[r].sigma; });
    size_t level = 0;
    for (;;) {
        bool found = false;
        std::vector<u32> next(ranks);
        for (u32 r = 0; r < ranks; r++) {
            Part &p = parts[r];
            RankState &s = st[r];
            s.levels.emplace_back(p.slots());
            s.lists.emplace_back(p.n + 1);
            u32 n = p.n;
            launch((u64)n * WARP, [&] { bc_discover(p.inc.off.data(), p.inc.adj.data(), n, chunk, s.levels[level].data(), s.reached.data(), s.levels[level + 1].data(), s.lists[level + 1].data(), &next[r]); });
            Pieces q(p.inc, n);
            launch((u64)q.count() * WARP, [&] { bc_discover_chunks(p.inc.off.data(), p.inc.adj.data(), q.row_of.data(), q.rank.data(), q.count(), chunk, s.levels[level].data(), s.reached.data(), s.levels[level + 1].data(), s.lists[level + 1].data(), &next[r]); });
            if (next[r] > 0)
                forward_launches(p.inc, Pieces(p.inc, n), s.lists[level + 1], next[r], lanes, s.levels[level].data(), s.levels[level + 1].data(), s.reached.data(), s.sigma.data());
            found |= next[r] > 0;
        }
        push(parts, lanes, 1, [&](u32 r) -> std::vector<u64> & { return st[r].levels[level + 1]; }, [&](u32 r) -> std::vector<double> & { return st[r].sigma; });
        if (!found) break;
        for (u32 r = 0; r < ranks; r++) st[r].counts.push_back(next[r]);
        level++;
    }
    for (size_t at = level + 1; at-- > 0;) {
        for (u32 r = 0; r < ranks; r++) {
            Part &p = parts[r];
            RankState &s = st[r];
            u32 count = s.counts[at];
            backward_launches(p.out, Pieces(p.out, p.n), s.lists[at], count, lanes, s.levels[at].data(), s.levels[at + 1].data(), s.sigma.data(), s.delta.data());
        }
        if (at > 0) push(parts, lanes, 0, [&](u32 r) -> std::vector<u64> & { return st[r].levels[at]; }, [&](u32 r) -> std::vector<double> & { return st[r].sigma; });
    }
    for (u32 r = 0; r < ranks; r++) {
        u32 n = parts[r].n;
        launch(n, [&] { bc_accumulate(n, lanes, st[r].reached.data(), st[r].levels[0].data(), st[r].delta.data(), lo[r].data(), hi[r].data()); });
    }
    return st;
}

// The partitioned batch on `ranks` emulated ranks against the whole graph's δ and sums:
// the number of values that differ.
static int partitioned_differences(u32 n, const Rows &out, const Rows &inc, const std::vector<u64> &batch, u32 lanes, u32 ranks, const std::vector<double> &delta, const std::vector<u64> &lo, const std::vector<u64> &hi) {
    auto parts = partition(n, ranks, out, inc);
    std::vector<std::vector<u64>> plo(ranks), phi(ranks);
    for (u32 r = 0; r < ranks; r++) { plo[r].assign(parts[r].n, 0); phi[r].assign(parts[r].n, 0); }
    auto st = partitioned_batch(parts, batch, lanes, plo, phi);
    int diff = 0;
    for (u32 r = 0; r < ranks; r++)
        for (u32 l = 0; l < parts[r].n; l++) {
            u32 v = parts[r].first + l;
            diff += plo[r][l] != lo[v] || phi[r][l] != hi[v];
            for (u32 s = 0; s < batch.size(); s++)
                diff += std::memcmp(&st[r].delta[(u64)l * lanes + s], &delta[(u64)v * lanes + s], 8) != 0;
        }
    return diff;
}

int main() {
    std::mt19937_64 g(11);
    int bad = 0;
    for (int trial = 0; trial < 12; trial++) {
        u32 n = 20 + g() % 300, m = n * (1 + g() % 6);
        bool directed = trial % 2;
        u32 lanes = (trial % 3 == 0) ? 64 : 1 + g() % 63;
        chunk = 2 + g() % 8;
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
        // δ of every reached (vertex, lane) bit for bit, and each vertex's fixed-point sum
        // over the lanes where it is reached and not the source (bc_accumulate's).
        int diff = 0;
        std::vector<u64> want_lo(n), want_hi(n);
        for (u32 s = 0; s < k; s++) {
            auto want = brandes(n, out, inc, batch[s]);
            for (u32 v = 0; v < n; v++) {
                if (std::isnan(want[v])) continue;
                if (std::memcmp(&want[v], &delta[(u64)v * lanes + s], 8) != 0) diff++;
                if (v == batch[s]) continue;
                u64 whole = (u64)want[v];
                u64 bits = (u64)((want[v] - (double)whole) * 18446744073709551616.0);
                want_lo[v] += bits;
                want_hi[v] += whole + (want_lo[v] < bits ? 1 : 0);
            }
        }
        for (u32 v = 0; v < n; v++) diff += lo[v] != want_lo[v] || hi[v] != want_hi[v];
        Pieces pieces(out, n);
        printf("n %u arcs %zu %s lanes %u sources %u chunk %llu (%u long rows): %s", n, arcs.size(), directed ? "directed" : "undirected", lanes, k, chunk, pieces.longs(), diff ? "DIFFERENT" : "same");
        bad += diff != 0;
        u32 ranks = 2 + trial % 3;
        int pdiff = partitioned_differences(n, out, inc, batch, lanes, ranks, delta, lo, hi);
        printf("; partitioned over %u ranks: %s\n", ranks, pdiff ? "DIFFERENT" : "same");
        bad += pdiff != 0;
    }
    printf(bad ? "FAIL\n" : "all equal\n");
    return bad != 0;
}
