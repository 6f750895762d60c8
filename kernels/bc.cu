// Betweenness centrality sweeps for a batch of sources (host side:
// src/graph/betweenness/gpu.rs; the CPU twin, step for step: src/graph/betweenness/sweep.rs).
// Compiled at start by NVRTC.
//
// σ and δ are per (vertex, lane), lane = source of the batch, at vertex * lanes + lane, so a
// warp's threads are lanes of one vertex (thread t: lanes t and t + 32): they read its row
// once between them and their own lanes' values side by side. Per vertex and level a 64-bit mask
// says which lanes have it at that level (`reached`: at any level so far), so a neighbour
// costs one broadcast load unless it matters to the lane. Each level also keeps the list of
// its vertices, so the sweeps touch only the vertices of the level at hand (the work of a
// frontier-driven BFS, not the whole graph per level). Each thread pulls over its vertex's
// row in row order; every f64 operation is written as its round-to-nearest intrinsic so that
// none is fused into an FMA: the results are the CPU's, bit for bit.
//
// Backward, a vertex's δ is σ(v)·ρ(v), ρ(v) the sum of u(w) over its successors w one level
// deeper, where u(w) = 1/σ(w) + ρ(w) = (1 + δ(w))/σ(w) is worked out once per (vertex, lane)
// when its δ is final and kept in σ's place (σ(w) is read by no one after that): a DAG arc
// costs one load and an add, no division. Each piece's sum carries its rounding errors
// (`two_sum`) and adds them back at its end (why this form: sweep.rs `backward_level`).
//
// A row longer than `chunk` entries (a hub's) is not read by one warp: it is cut into pieces
// of `chunk` entries from its start, a warp sums each piece in row order (the `_chunks`
// kernels, over every long row, a warp per piece), and `bc_combine` adds the pieces' sums in
// order. The CPU sums the same pieces in the same order (src/graph/betweenness/sweep.rs),
// and a row of at most `chunk` entries is one piece: its sum is the row-order sum.

// Source s of the batch at level 0 with σ = 1 in lane s (its value index; all ones where
// another rank owns it).
extern "C" __global__ void bc_sources(const u64 *sources, u32 k, u32 lanes, double *sigma,
                                      u64 *level0, u64 *reached) {
    u64 s = thread_index();
    if (s >= k) return;
    u64 v = sources[s];
    if (v == ~0ull) return;
    sigma[v * lanes + s] = 1.0;
    atomicOr(&level0[v], 1ull << s);
    atomicOr(&reached[v], 1ull << s);
}

// Level d's frontier (list[count]: the vertices with a lane in `current`) pushed along the
// out-rows, WARP threads per frontier vertex striding over its row: each unreached (w, lane)
// that a frontier vertex reaches in that lane joins the next level's mask, and w joins the
// next level's list the first time it gains a lane. Integer atomics only: the masks do not
// depend on the order, and the list's order changes nothing (each vertex pulls its own σ).
// Rows longer than `chunk` are left to `bc_expand_chunks`.
__device__ __forceinline__ void expand_range(const u32 *adj, u64 begin, u64 end, u64 lanes,
                                             const u64 *reached, u64 *next, u32 *next_list,
                                             u32 *next_count) {
    for (u64 e = begin + lane_id(); e < end; e += WARP) {
        u32 w = adj[e];
        // A plain load of `next` first: most arcs of a busy level reach a vertex that already
        // has their lanes there, and skip the atomic (a stale load only shows fewer lanes).
        u64 fresh = lanes & ~reached[w] & ~next[w];
        if (fresh && atomicOr(&next[w], fresh) == 0) next_list[atomicAdd(next_count, 1u)] = w;
    }
}

extern "C" __global__ void bc_expand(const u64 *offsets, const u32 *adj, const u32 *list, u32 count,
                                     u64 chunk, const u64 *current, const u64 *reached, u64 *next,
                                     u32 *next_list, u32 *next_count) {
    u64 f = thread_index() / WARP;
    if (f >= count) return;
    u32 v = list[f];
    if (offsets[v + 1] - offsets[v] > chunk) return;
    expand_range(adj, offsets[v], offsets[v + 1], current[v], reached, next, next_list, next_count);
}

// Piece `c` of the long rows (`chunk_row[c]`: the row, `chunk_rank[c]`: which piece of it):
// its row `v` and its entries [begin, end), `chunk` of them from the row's start (fewer in
// the row's last piece).
struct Piece {
    u64 v, begin, end;
};
__device__ __forceinline__ Piece piece_of(const u64 *offsets, const u32 *chunk_row,
                                          const u32 *chunk_rank, u64 c, u64 chunk) {
    u64 v = chunk_row[c];
    u64 begin = offsets[v] + chunk_rank[c] * chunk;
    return Piece{v, begin, min(begin + chunk, offsets[v + 1])};
}

// The pieces of the long rows, a warp per piece: `bc_expand` for the rows in the current
// level.
extern "C" __global__ void bc_expand_chunks(const u64 *offsets, const u32 *adj,
                                            const u32 *chunk_row, const u32 *chunk_rank,
                                            u32 chunks, u64 chunk, const u64 *current,
                                            const u64 *reached, u64 *next, u32 *next_list,
                                            u32 *next_count) {
    u64 c = thread_index() / WARP;
    if (c >= chunks) return;
    Piece p = piece_of(offsets, chunk_row, chunk_rank, c, chunk);
    u64 lanes = current[p.v];
    if (!lanes) return;
    expand_range(adj, p.begin, p.end, lanes, reached, next, next_list, next_count);
}

// The next level on a rank's part of a partitioned graph, where a frontier vertex may be a
// ghost whose out-row another rank holds: each own vertex with unreached lanes (WARP threads
// striding over its in-row) gathers the lanes its predecessors have in the current level
// (own or ghost masks) into its next-level mask, and joins the next level's list the first
// time the mask gains a lane. The masks are those `bc_expand` makes (ORs, in any order).
// Rows longer than `chunk`: `bc_discover_chunks`.
__device__ __forceinline__ void discover_range(const u32 *adj, u64 begin, u64 end, u64 v,
                                               const u64 *current, const u64 *reached, u64 *next,
                                               u32 *next_list, u32 *next_count) {
    u64 open = ~reached[v];
    if (!open) return;
    u64 hit = 0;
    for (u64 e = begin + lane_id(); e < end; e += WARP) hit |= current[adj[e]];
    hit &= open;
    if (hit && atomicOr(&next[v], hit) == 0) next_list[atomicAdd(next_count, 1u)] = (u32)v;
}

extern "C" __global__ void bc_discover(const u64 *offsets, const u32 *adj, u32 n, u64 chunk,
                                       const u64 *current, const u64 *reached, u64 *next,
                                       u32 *next_list, u32 *next_count) {
    u64 v = thread_index() / WARP;
    if (v >= n || offsets[v + 1] - offsets[v] > chunk) return;
    discover_range(adj, offsets[v], offsets[v + 1], v, current, reached, next, next_list,
                   next_count);
}

// `bc_discover` over each piece of the long in-rows, WARP threads a piece (the first piece
// whose OR gives the vertex a lane lists it).
extern "C" __global__ void bc_discover_chunks(const u64 *offsets, const u32 *adj,
                                              const u32 *chunk_row, const u32 *chunk_rank,
                                              u32 chunks, u64 chunk, const u64 *current,
                                              const u64 *reached, u64 *next, u32 *next_list,
                                              u32 *next_count) {
    u64 c = thread_index() / WARP;
    if (c >= chunks) return;
    Piece p = piece_of(offsets, chunk_row, chunk_rank, c, chunk);
    discover_range(adj, p.begin, p.end, p.v, current, reached, next, next_list, next_count);
}

// bc_forward and bc_backward give each vertex of a level's list one warp, whose thread t
// serves lanes t and t + 32 (its two `halves`). The warp reads the row 32 neighbours at a
// time, each thread one neighbour and its mask (coalesced, in parallel), keeps only the
// neighbours that matter to one of the vertex's lanes (a ballot), and walks those in row
// order, each lane adding its terms as a thread scanning the whole row would: the same sums
// in the same order, with a fraction of the loads, and each row and mask read once for all
// 64 lanes.
#define HALVES 2

// Whether the thread serves lane t + 32·h of `mask` (h < HALVES).
__device__ __forceinline__ bool serves(u64 mask, int h) {
    return mask >> (lane_id() + WARP * h) & 1;
}

// Neighbours whose values a thread loads before adding them: the loads of a group go out
// together, so a warp waits one memory latency per group instead of one per neighbour (a
// hub's row, scanned by one warp, is otherwise a chain of latencies). A run may set it
// (src/graph/betweenness/gpu.rs, `TESSERA_BC_AHEAD`); measured on an H100, 16 and 32 were
// slower than 8 (docs/benchmarks.md).
#ifndef AHEAD
#define AHEAD 8
#endif

// a + b = total + error exactly (Knuth's TwoSum, any order of magnitudes), as sweep.rs
// `two_sum`.
__device__ __forceinline__ void two_sum(double a, double b, double &total, double &error) {
    total = __dadd_rn(a, b);
    double b_part = __dsub_rn(total, a);
    double a_part = __dsub_rn(total, b_part);
    error = __dadd_rn(__dsub_rn(a, a_part), __dsub_rn(b, b_part));
}

// Per half h, Σ over the row entries [begin, end) (row order) of `values` (forward σ,
// backward u) of each neighbour w whose `masks` bit s is set, s = t + 32·h the thread's lane,
// among the lanes `open` (the vertex's lanes); `carry` (backward): the adds' rounding errors
// summed beside and added at the end. Loads run ahead of the adds, the adds keep the row
// order: the sums are the CPU's, bit for bit.
__device__ __forceinline__ void row_sums(const u32 *adj, u64 begin, u64 end, const u64 *masks,
                                         u64 open, const double *values, u32 lanes, bool carry,
                                         double sum[HALVES]) {
    double carried[HALVES];
    for (int h = 0; h < HALVES; h++) sum[h] = carried[h] = 0.0;
    for (u64 base = begin; base < end; base += WARP) {
        u64 e = base + lane_id();
        u32 w = 0;
        u64 hit = 0;
        if (e < end) {
            w = adj[e];
            hit = masks[w] & open;
        }
        u32 ballot = __ballot_sync(FULL, hit != 0);
        while (ballot) {  // the same on every thread of the warp
            double got[AHEAD][HALVES];
            bool use[AHEAD][HALVES];
#pragma unroll
            for (int i = 0; i < AHEAD; i++) {
                for (int h = 0; h < HALVES; h++) use[i][h] = false;
                if (ballot) {
                    int j = __ffs(ballot) - 1;
                    ballot &= ballot - 1;
                    u64 lanes_j = __shfl_sync(FULL, hit, j);
                    u32 wj = __shfl_sync(FULL, w, j);
#pragma unroll
                    for (int h = 0; h < HALVES; h++) {
                        use[i][h] = serves(lanes_j, h);
                        if (use[i][h]) got[i][h] = values[(u64)wj * lanes + lane_id() + WARP * h];
                    }
                }
            }
#pragma unroll
            for (int i = 0; i < AHEAD; i++)
#pragma unroll
                for (int h = 0; h < HALVES; h++) {
                    if (!use[i][h]) continue;
                    if (carry) {
                        double error;
                        two_sum(sum[h], got[i][h], sum[h], error);
                        carried[h] = __dadd_rn(carried[h], error);
                    } else {
                        sum[h] = __dadd_rn(sum[h], got[i][h]);
                    }
                }
        }
    }
    if (carry)
        for (int h = 0; h < HALVES; h++) sum[h] = __dadd_rn(sum[h], carried[h]);
}

// The thread's piece of the long rows (a warp per piece) among `chunks`: its index `c`, or
// false where there is none.
__device__ __forceinline__ bool piece_warp(const u64 *offsets, const u32 *chunk_row,
                                           const u32 *chunk_rank, u32 chunks, u64 chunk, u64 &c,
                                           Piece &p) {
    c = thread_index() / WARP;
    if (c >= chunks) return false;
    p = piece_of(offsets, chunk_row, chunk_rank, c, chunk);
    return true;
}

// The next level's σ: each (vertex, lane) of its list whose lane is in its `next` mask sums σ
// over its predecessors (in-rows, in row order) in the current level's mask; `reached` gains
// the vertex's new lanes. The same sums as a pull over every unreached vertex: exactly these
// pairs have a predecessor in the current level. Rows longer than `chunk`: `bc_forward_chunks`.
extern "C" __global__ void bc_forward(const u64 *offsets, const u32 *adj, const u32 *list, u32 count,
                                      u32 lanes, u64 chunk, const u64 *current, const u64 *next,
                                      u64 *reached, double *sigma) {
    u64 f = thread_index() / WARP;
    if (f >= count) return;  // the whole warp leaves together
    u64 v = list[f];
    u64 open = next[v];
    if (lane_id() == 0) reached[v] |= open;  // one writer per vertex; no thread here reads it
    if (offsets[v + 1] - offsets[v] > chunk) return;  // the whole warp
    double sum[HALVES];
    row_sums(adj, offsets[v], offsets[v + 1], current, open, sigma, lanes, false, sum);
    for (int h = 0; h < HALVES; h++)
        if (serves(open, h)) sigma[v * lanes + lane_id() + WARP * h] = sum[h];
}

// `bc_forward`'s sums over each piece of the long rows whose vertex is in the next level, a
// warp per piece, into `partial` (piece · lanes + lane).
extern "C" __global__ void bc_forward_chunks(const u64 *offsets, const u32 *adj,
                                             const u32 *chunk_row, const u32 *chunk_rank,
                                             u32 chunks, u64 chunk, u32 lanes,
                                             const u64 *current, const u64 *next,
                                             const double *sigma, double *partial) {
    u64 c;
    Piece p;
    if (!piece_warp(offsets, chunk_row, chunk_rank, chunks, chunk, c, p)) return;
    u64 open = next[p.v];
    if (!open) return;  // the whole warp
    double sum[HALVES];
    row_sums(adj, p.begin, p.end, current, open, sigma, lanes, false, sum);
    for (int h = 0; h < HALVES; h++)
        if (serves(open, h)) partial[c * lanes + lane_id() + WARP * h] = sum[h];
}

// (vertex, lane) `j`'s δ = σ·ρ stored, ρ the sum of its successors' u, and its σ (in σ's
// place) replaced by its own u = 1/σ + ρ, which the level above sums.
__device__ __forceinline__ void finish_delta(u64 j, double rho, double *sigma, double *delta) {
    double sv = sigma[j];
    delta[j] = __dmul_rn(sv, rho);
    sigma[j] = __dadd_rn(__ddiv_rn(1.0, sv), rho);
}

// Each long row's pieces' sums added in piece order: a thread per (long row i, lane) whose
// lane is in the row's vertex's `masks` (the next level forward, its own level backward)
// stores the sum as σ (forward) or finishes δ with it (`backward`).
// `first[i]..first[i + 1]`: row i's pieces.
extern "C" __global__ void bc_combine(const u32 *rows, const u32 *first, u32 count, u32 lanes,
                                      u32 backward, const u64 *masks, const double *partial,
                                      double *sigma, double *delta) {
    u64 t = thread_index();
    u64 i = t / lanes;
    u32 s = (u32)(t % lanes);
    if (i >= count) return;
    u64 v = rows[i];
    if (!(masks[v] >> s & 1)) return;
    double sum = 0.0;
    for (u32 c = first[i]; c < first[i + 1]; c++) sum = __dadd_rn(sum, partial[(u64)c * lanes + s]);
    if (backward)
        finish_delta(v * lanes + s, sum, sigma, delta);
    else
        sigma[v * lanes + s] = sum;
}

// δ of each (vertex, lane) of level d's list whose lane is in its mask (`here`): σ(v)·ρ, ρ
// the sum over its successors in the next level's mask (`deeper`, out-rows, in row order)
// of their u (in `sigma`); then v's own u in its σ's place. Rows longer than `chunk`:
// `bc_backward_chunks`.
extern "C" __global__ void bc_backward(const u64 *offsets, const u32 *adj, const u32 *list, u32 count,
                                       u32 lanes, u64 chunk, const u64 *here, const u64 *deeper,
                                       double *sigma, double *delta) {
    u64 f = thread_index() / WARP;
    if (f >= count) return;  // the whole warp leaves together
    u64 v = list[f];
    if (offsets[v + 1] - offsets[v] > chunk) return;  // the whole warp
    u64 open = here[v];
    double sum[HALVES];
    row_sums(adj, offsets[v], offsets[v + 1], deeper, open, sigma, lanes, true, sum);
    for (int h = 0; h < HALVES; h++)
        if (serves(open, h)) finish_delta(v * lanes + lane_id() + WARP * h, sum[h], sigma, delta);
}

// `bc_backward`'s sums over each piece of the long rows whose vertex is in level d, a
// warp per piece, into `partial` (piece · lanes + lane).
extern "C" __global__ void bc_backward_chunks(const u64 *offsets, const u32 *adj,
                                              const u32 *chunk_row, const u32 *chunk_rank,
                                              u32 chunks, u64 chunk, u32 lanes, const u64 *here,
                                              const u64 *deeper, const double *sigma,
                                              double *partial) {
    u64 c;
    Piece p;
    if (!piece_warp(offsets, chunk_row, chunk_rank, chunks, chunk, c, p)) return;
    u64 open = here[p.v];
    if (!open) return;  // the whole warp
    double sum[HALVES];
    row_sums(adj, p.begin, p.end, deeper, open, sigma, lanes, true, sum);
    for (int h = 0; h < HALVES; h++)
        if (serves(open, h)) partial[c * lanes + lane_id() + WARP * h] = sum[h];
}

// Each vertex's δ over its lanes where it is reached and not the source (level 0), added to
// its 128-bit fixed-point sum (hi, lo): the integer part and the fraction · 2^64, both
// truncated, as src/graph/betweenness/mod.rs `to_fixed`.
extern "C" __global__ void bc_accumulate(u32 n, u32 lanes, const u64 *reached,
                                         const u64 *level0, const double *delta, u64 *lo,
                                         u64 *hi) {
    u64 v = thread_index();
    if (v >= n) return;
    u64 l = lo[v], h = hi[v];
    u64 counted = reached[v] & ~level0[v];
    while (counted) {
        u32 s = __ffsll((long long)counted) - 1;
        counted &= counted - 1;
        double x = delta[v * lanes + s];
        u64 whole = __double2ull_rz(x);
        double fraction = __dsub_rn(x, __ull2double_rn(whole));
        u64 bits = __double2ull_rz(__dmul_rn(fraction, 18446744073709551616.0));
        l += bits;
        h += whole + (l < bits ? 1 : 0);
    }
    lo[v] = l;
    hi[v] = h;
}

// ---- Ghost pushes (src/graph/betweenness/gpu_ghosts.rs; the CPU's: sweep.rs `push`) ----------
// A level's values of the own vertices that other ranks hold as ghosts, in the level's lanes
// only. To each rank, its ghosts' in its ghost order (the plan's entries for it, from
// before[d]): where `masks_sent` (forward: σ) a mask word per ghost, then the set lanes'
// words, ghost after ghost, lane after lane; else (backward: u in σ's place) the words alone,
// since the receiver's ghosts hold their masks from the forward push. Where an entry's and a
// ghost's words go: the exclusive scan of their lane counts (`words`, src/device/scan.rs).

// Entry i's words: its vertex's lanes at the level.
extern "C" __global__ void bc_pack_words(const u32 *send_local, u32 entries, const u64 *level,
                                         u64 *words) {
    u64 i = thread_index();
    if (i < entries) words[i] = __popcll(level[send_local[i]]);
}

// Per destination rank, the words of its entries' lanes (`starts`: `words` scanned).
extern "C" __global__ void bc_pack_totals(const u64 *before, u32 ranks, const u64 *starts,
                                          u64 *totals) {
    u64 d = thread_index();
    if (d < ranks) totals[d] = starts[before[d + 1]] - starts[before[d]];
}

// Entry i's mask (where `masks_sent`) and words, in the run for rank dest[i], which starts at
// before[dest[i]] · (1 + lanes) words (room for every entry's mask and lanes).
extern "C" __global__ void bc_pack(const u32 *send_local, const u32 *dest, u32 entries,
                                   const u64 *before, u32 lanes, u32 masks_sent, const u64 *level,
                                   const u64 *values, const u64 *starts, u64 *out) {
    u64 i = thread_index();
    if (i >= entries) return;
    u64 first = before[dest[i]], v = send_local[i], mask = level[v];
    u64 *run = out + first * (1 + lanes);
    if (masks_sent) run[i - first] = mask;
    u64 *w = run + (masks_sent ? before[dest[i] + 1] - first : 0) + starts[i] - starts[first];
    for (; mask; mask &= mask - 1) *w++ = values[v * lanes + __ffsll(mask) - 1];
}

// The rank that owns ghost j (ghost_first: each rank's first ghost, ranks + 1 items).
__device__ __forceinline__ u32 owner_of(const u64 *ghost_first, u32 ranks, u64 j) {
    u32 q = 0;
    while (q + 1 < ranks && j >= ghost_first[q + 1]) q++;
    return q;
}

// Ghost j's words: its lanes at the level, none where its owner sent nothing. Where
// `masks_sent` the mask comes in the owner's run (at runs[q], runs[ranks + q] words long) and
// becomes the ghost's level mask; else the ghost's level mask is it.
extern "C" __global__ void bc_unpack_words(const u64 *in, const u64 *runs, const u64 *ghost_first,
                                           u32 ranks, u32 ghosts, u32 local_n, u32 masks_sent,
                                           u64 *level, u64 *words) {
    u64 j = thread_index();
    if (j >= ghosts) return;
    u32 q = owner_of(ghost_first, ranks, j);
    u64 mask = 0;
    if (runs[ranks + q]) {
        if (masks_sent) level[local_n + j] = in[runs[q] + j - ghost_first[q]];
        mask = level[local_n + j];
    }
    words[j] = __popcll(mask);
}

// Ghost j's words stored in its level's lanes (`starts`: `bc_unpack_words`' counts scanned).
extern "C" __global__ void bc_unpack(const u64 *in, const u64 *runs, const u64 *ghost_first,
                                     u32 ranks, u32 ghosts, u32 local_n, u32 lanes,
                                     u32 masks_sent, const u64 *level, const u64 *starts,
                                     u64 *values) {
    u64 j = thread_index();
    if (j >= ghosts) return;
    u32 q = owner_of(ghost_first, ranks, j);
    if (!runs[ranks + q]) return;
    u64 first = ghost_first[q], slot = local_n + j, mask = level[slot];
    const u64 *w = in + runs[q] + (masks_sent ? ghost_first[q + 1] - first : 0) + starts[j] -
                   starts[first];
    for (; mask; mask &= mask - 1) values[slot * lanes + __ffsll(mask) - 1] = *w++;
}

SCAN_KERNELS(u64)
