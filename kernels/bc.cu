// Betweenness centrality sweeps for a batch of sources (host side:
// src/graph/betweenness/gpu.rs; the CPU twin, step for step: src/graph/betweenness/sweep.rs).
// Compiled at start by NVRTC.
//
// Values are per (vertex, lane), lane = source of the batch, at vertex * lanes + lane, so a
// warp's threads are the lanes of one vertex: they read its row once between them (the same
// addresses) and their own lanes' values side by side. Each thread pulls over its vertex's
// row in row order; every f64 operation is written as its round-to-nearest intrinsic so that
// none is fused into an FMA: the results are those of the CPU, bit for bit.

#define UNREACHED 0xffffffffu

// Every lane unreached, σ and δ zero.
extern "C" __global__ void bc_reset(u64 len, u32 *dist, double *sigma, double *delta) {
    for (u64 i = thread_index(); i < len; i += grid_threads()) {
        dist[i] = UNREACHED;
        sigma[i] = 0.0;
        delta[i] = 0.0;
    }
}

// Source s of the batch at level 0 with σ = 1 in lane s.
extern "C" __global__ void bc_sources(const u64 *sources, u32 k, u32 lanes, u32 *dist,
                                      double *sigma) {
    u64 s = thread_index();
    if (s >= k) return;
    u64 i = sources[s] * lanes + s;
    dist[i] = 0;
    sigma[i] = 1.0;
}

// Level + 1: an unreached (vertex, lane) sums σ over its predecessors at `level` (in-rows);
// `found` is set when any is reached.
extern "C" __global__ void bc_forward(const u64 *offsets, const u32 *adj, u32 n, u32 lanes,
                                      u32 k, u32 level, u32 *dist, double *sigma, u32 *found) {
    u64 t = thread_index();
    u64 v = t / lanes;
    u32 s = (u32)(t % lanes);
    if (v >= n || s >= k) return;
    u64 i = v * lanes + s;
    if (dist[i] != UNREACHED) return;
    double sum = 0.0;
    for (u64 e = offsets[v]; e < offsets[v + 1]; e++) {
        u64 j = (u64)adj[e] * lanes + s;
        if (dist[j] == level) sum = __dadd_rn(sum, sigma[j]);
    }
    if (sum > 0.0) {
        dist[i] = level + 1;
        sigma[i] = sum;
        *found = 1;
    }
}

// δ of a (vertex, lane) at `level`: the sum over its successors one level deeper (out-rows)
// of σ(v)/σ(w)·(1 + δ(w)).
extern "C" __global__ void bc_backward(const u64 *offsets, const u32 *adj, u32 n, u32 lanes,
                                       u32 k, u32 level, const u32 *dist, const double *sigma,
                                       double *delta) {
    u64 t = thread_index();
    u64 v = t / lanes;
    u32 s = (u32)(t % lanes);
    if (v >= n || s >= k) return;
    u64 i = v * lanes + s;
    if (dist[i] != level) return;
    double sv = sigma[i];
    double sum = 0.0;
    for (u64 e = offsets[v]; e < offsets[v + 1]; e++) {
        u64 j = (u64)adj[e] * lanes + s;
        if (dist[j] == level + 1) {
            double ratio = __ddiv_rn(sv, sigma[j]);
            sum = __dadd_rn(sum, __dmul_rn(ratio, __dadd_rn(1.0, delta[j])));
        }
    }
    delta[i] = sum;
}

// Each vertex's δ over its lanes where it is reached and not the source, added to its
// 128-bit fixed-point sum (hi, lo): the integer part and the fraction · 2^64, both
// truncated, as src/graph/betweenness/mod.rs `to_fixed`.
extern "C" __global__ void bc_accumulate(u32 n, u32 lanes, u32 k, const u32 *dist,
                                         const double *delta, u64 *lo, u64 *hi) {
    u64 v = thread_index();
    if (v >= n) return;
    u64 l = lo[v], h = hi[v];
    for (u32 s = 0; s < k; s++) {
        u64 i = v * lanes + s;
        u32 d = dist[i];
        if (d == UNREACHED || d == 0) continue;
        double x = delta[i];
        u64 whole = __double2ull_rz(x);
        double fraction = __dsub_rn(x, __ull2double_rn(whole));
        u64 bits = __double2ull_rz(__dmul_rn(fraction, 18446744073709551616.0));
        l += bits;
        h += whole + (l < bits ? 1 : 0);
    }
    lo[v] = l;
    hi[v] = h;
}
