// Graph generators and kernel 1 on the GPU (host side: src/graph/csr_gpu.rs). Compiled at
// start by NVRTC.
//
// One __device__ edge function per generator, each a line-by-line port of its Rust reference
// (src/graph/kronecker.rs, src/graph/generators/*.rs): the same counter-based draws (the
// prelude's `draw`), the same integer arithmetic, so edge e of the global list is the CPU's
// bit for bit. `p` is the generator's parameter array, packed by its `device_edges` in Rust
// (the layout is stated above each function). The GENERATOR macro makes two kernels of each
// edge function, over this rank's edges first_edge .. first_edge + count:
//   NAME_messages: each tuple (u, v) as two directed messages packed in one u64, source in
//     the high half (the GPU path needs N <= 2^32): u->v and v->u;
//   NAME_checksum: the order-independent edge checksum, sum of mix64(mix64(u) ^ v) (wrapping;
//     src/graph/build.rs `edge_checksum`), added into *sum: generation timed on the GPU.
// csr_count and csr_fill are kernel 1's two passes over the messages, for every generator. A
// self-loop's two messages count towards its vertex's tuple endpoints but are not stored.

// x from 64 random bits, uniform in [0, n): the multiply-high of generators/mod.rs `below`.
__device__ __forceinline__ u64 below(u64 bits, u64 n) { return __umul64hi(bits, n); }

// Kronecker's seeded bijection on [0, 2^bits) (`Scramble`, src/graph/kronecker.rs).
// s: [0] mask, [1] shift, [2..4) multipliers, [4..6) addends.
__device__ __forceinline__ u64 scramble(const u64 *s, u64 x) {
    for (int round = 0; round < 2; round++) {
        x = (x * s[2 + round] + s[4 + round]) & s[0];
        x ^= x >> s[1];
    }
    return x;
}

// ---- Graph500 Kronecker (src/graph/kronecker.rs) -----------------------------------------
// p: [0] edge stream key, [1..7) scramble, [7] SCALE, [8] row threshold, [9] column threshold
// (top row), [10] column threshold (bottom row); thresholds apply to 16-bit uniform draws.
__device__ void kron_edge(const u64 *p, u64 e, u64 &u, u64 &v) {
    u32 scale = (u32)p[7];
    u16 row_t = (u16)p[8], col_top = (u16)p[9], col_bottom = (u16)p[10];
    u64 draws = (scale + 1) / 2, bits = 0;
    u = 0;
    v = 0;
    for (u32 level = 0; level < scale; level++) {
        if (level % 2 == 0) bits = draw(p[0], e * draws + level / 2);
        u32 r = (u32)bits;
        bool row = (u16)r >= row_t;
        bool col = (u16)(r >> 16) >= (row ? col_bottom : col_top);
        bits >>= 32;
        u = (u << 1) | row;
        v = (v << 1) | col;
    }
    u = scramble(p + 1, u);
    v = scramble(p + 1, v);
}

// ---- SSCA#2 (src/graph/generators/ssca2.rs) ----------------------------------------------
// p: [0] edge stream key, [1..7) scramble, [7] SCALE, [8..8+SCALE) the level keys of attempt
// 0 (draw(p[0], level)).

// The noisy initiator of `quadrant` in integers, scaled by 16. Entry i weighs its hundredth
// h_i (ssca2.rs INITIATOR) times (38912 + x_i), x_i bits 12i .. 12i + 12 of the level's draw,
// and t is the top 16 bits times the weights' sum over 2^16. A test t >= w against an integer
// w holds exactly when 16 t' >= 16 w, t' the top 16 bits times 16 x the sum over 2^16, so
// the weights are kept times 16 (below 2^27): each x_i then comes from its bits with one
// mask, the shift folded into the multiplier (x_1 << 12 by a multiply-high). The running sum
// starts at the constant part of the whole sum, and BEFORE[j] (that of entries 0 .. j, less
// the whole, less 1) turns it into 16 (w_0 + .. + w_j) - 1 - t.
#define SSCA2_H0 55u
#define SSCA2_H1 10u
#define SSCA2_H2 10u
#define SSCA2_H3 25u
#define SSCA2_UNIT (16u * 38912u)
#define SSCA2_CONSTANT (SSCA2_UNIT * (SSCA2_H0 + SSCA2_H1 + SSCA2_H2 + SSCA2_H3))
#define SSCA2_BEFORE(SUM) (SSCA2_UNIT * (SUM) - SSCA2_CONSTANT - 1u)

// One level of the R-MAT descent: the quadrant 64 random bits choose, its row bit shifted
// into `rows` and its column bit into `cols`. The same integers as `quadrant`, whose q =
// [t >= w0] + [t >= w0 + w1] + [t >= w0 + w1 + w2] rises with t, so the row bit is the
// middle test and q's parity the three tests' exclusive or. Each test is the sign bit of
// 16 w - 1 - 16 t (|.| < 2^28), which a funnel shift moves into the ids.
__device__ __forceinline__ void ssca2_level(u64 bits, u32 &rows, u32 &cols) {
    u32 lo = (u32)bits, hi = (u32)(bits >> 32);
    u32 sum = (lo & 0xfffu) * (16u * SSCA2_H0) + SSCA2_CONSTANT;
    u32 w0 = sum + SSCA2_BEFORE(SSCA2_H0);
    sum += __umulhi(lo & 0xfff000u, SSCA2_H1 << 24);
    u32 a = sum + SSCA2_BEFORE(SSCA2_H0 + SSCA2_H1);
    sum += (__funnelshift_r(lo, hi, 24) & 0xfffu) * (16u * SSCA2_H2);
    u32 b = sum + SSCA2_BEFORE(SSCA2_H0 + SSCA2_H1 + SSCA2_H2);
    sum += (hi & 0xfff0u) * SSCA2_H3;
    u32 t = __umulhi(hi & 0xffff0000u, sum);
    u32 row = a - t;
    rows = __funnelshift_l(row, rows, 1);
    cols = __funnelshift_l((w0 - t) ^ row ^ (b - t), cols, 1);
}

// Attempt `attempt` at edge e: false for a self-loop, which is redrawn whole with the next
// attempt number (attempt 0 has its level keys in p). The GPU path's N <= 2^32 (SCALE <= 32):
// the ids are built in 32-bit words.
__device__ bool ssca2_attempt(const u64 *p, u64 e, u64 attempt, u64 &u, u64 &v) {
    u32 scale = (u32)p[7];
    u32 rows = 0, cols = 0;
    if (attempt == 0) {
        for (u32 level = 0; level < scale; level++)
            ssca2_level(draw(p[8 + level], e), rows, cols);
    } else {
        for (u32 level = 0; level < scale; level++)
            ssca2_level(draw(draw(p[0], 64 * attempt + level), e), rows, cols);
    }
    if (rows == cols) return false;
    u = scramble(p + 1, rows);
    v = scramble(p + 1, cols);
    return true;
}

__device__ void ssca2_edge(const u64 *p, u64 e, u64 &u, u64 &v) {
    u64 attempt = 0;
    while (!ssca2_attempt(p, e, attempt, u, v)) attempt++;
}

// ---- Barabási-Albert (src/graph/generators/barabasi_albert.rs) ---------------------------
// p: [0] target stream key, [1] d. Edge j: its copy slot r resolved while odd.
__device__ void ba_edge(const u64 *p, u64 j, u64 &u, u64 &v) {
    u64 r = 2 * j + 1;
    while (r % 2 == 1) r = below(draw(p[0], r), r);
    u = j / p[1];
    v = r / (2 * p[1]);
}

// ---- Lattices (src/graph/generators/lattice.rs) ------------------------------------------
// p: [0] periodic (1) or open (0), [1] dimensions (2 or 3), [2..5) sides (1 past the last).

__device__ __forceinline__ u64 lattice_stride(const u64 *p, u32 dir) {
    u64 stride = 1;
    for (u32 i = 0; i < dir; i++) stride *= p[2 + i];
    return stride;
}

__device__ __forceinline__ u64 lattice_coord(const u64 *p, u64 site, u32 dir) {
    return site / lattice_stride(p, dir) % p[2 + dir];
}

__device__ __forceinline__ bool lattice_has_edge(const u64 *p, u64 site, u32 dir) {
    return p[0] || lattice_coord(p, site, dir) + 1 < p[2 + dir];
}

// The site one step from `site` in direction `dir` (wrapping around).
__device__ __forceinline__ u64 lattice_step(const u64 *p, u64 site, u32 dir) {
    u64 x = lattice_coord(p, site, dir), stride = lattice_stride(p, dir);
    return x + 1 == p[2 + dir] ? site - x * stride : site + stride;
}

// Edges of the sites before `site`.
__device__ u64 lattice_edges_before(const u64 *p, u64 site) {
    if (p[0]) return site * p[1];
    u64 sum = 0;
    for (u32 dir = 0; dir < p[1]; dir++) {
        u64 stride = lattice_stride(p, dir), block = stride * p[2 + dir];
        sum += site / block * (block - stride) + min(site % block, block - stride);
    }
    return sum;
}

__device__ void lattice_edge(const u64 *p, u64 e, u64 &u, u64 &v) {
    u64 site = e / p[1];
    u32 dir = (u32)(e % p[1]);
    if (!p[0]) {
        // The last site with at most e edges before it owns edge e.
        u64 lo = 0, hi = p[2] * p[3] * p[4];
        while (hi - lo > 1) {
            u64 mid = lo + (hi - lo) / 2;
            if (lattice_edges_before(p, mid) <= e) lo = mid;
            else hi = mid;
        }
        u64 skip = e - lattice_edges_before(p, lo);
        site = lo;
        for (dir = 0; dir < p[1]; dir++) {
            if (!lattice_has_edge(p, site, dir)) continue;
            if (skip == 0) break;
            skip--;
        }
    }
    u = site;
    v = lattice_step(p, site, dir);
}

// True when sites a and b are joined by a lattice edge.
__device__ bool lattice_adjacent(const u64 *p, u64 a, u64 b) {
    u32 differing = 0;
    for (u32 dir = 0; dir < p[1]; dir++) {
        u64 x = lattice_coord(p, a, dir), y = lattice_coord(p, b, dir);
        u64 gap = x > y ? x - y : y - x;
        if (gap == 0) continue;
        if (gap != 1 && !(p[0] && gap == p[2 + dir] - 1)) return false;
        differing++;
    }
    return differing == 1;
}

// ---- Watts-Strogatz (src/graph/generators/watts_strogatz.rs) -----------------------------
// p: [0] n, [1] base edges per source, [2] rewiring threshold on 53-bit draws (p·2^53),
// [3] rewiring stream key, [4] target stream key, [5] candidates per rewired edge, [6] ring
// (1) or periodic lattice (0), [7..12) that lattice, as lattice_edge's p.

__device__ __forceinline__ void ws_base(const u64 *p, u64 e, u64 &u, u64 &v) {
    if (p[6]) {
        u = e / p[1];
        v = (u + e % p[1] + 1) % p[0];
    } else {
        lattice_edge(p + 7, e, u, v);
    }
}

__device__ __forceinline__ bool ws_adjacent(const u64 *p, u64 u, u64 v) {
    if (!p[6]) return lattice_adjacent(p + 7, u, v);
    u64 gap = u > v ? u - v : v - u;
    return gap != 0 && min(gap, p[0] - gap) <= p[1];
}

__device__ __forceinline__ bool ws_rewired(const u64 *p, u64 e) {
    return draw(p[3], e) >> 11 < p[2];
}

__device__ __forceinline__ u64 ws_candidate(const u64 *p, u64 e, u64 attempt) {
    return below(draw(p[4], e * p[5] + attempt), p[0]);
}

// True when a rewired edge e' < e with source s has t among its candidates.
__device__ bool ws_earlier_may_pair(const u64 *p, u64 e, u64 s, u64 t) {
    u64 h = p[1];
    for (u64 other = s * h; other < min(s * h + h, e); other++) {
        if (!ws_rewired(p, other)) continue;
        for (u64 attempt = 0; attempt < p[5]; attempt++)
            if (ws_candidate(p, other, attempt) == t) return true;
    }
    return false;
}

__device__ void ws_edge(const u64 *p, u64 e, u64 &u, u64 &v) {
    ws_base(p, e, u, v);
    if (!ws_rewired(p, e)) return;
    for (u64 attempt = 0; attempt < p[5]; attempt++) {
        u64 c = ws_candidate(p, e, attempt);
        if (c != u && !ws_adjacent(p, u, c) && !ws_earlier_may_pair(p, e, u, c) &&
            !ws_earlier_may_pair(p, e, c, u)) {
            v = c;
            return;
        }
    }
}

// ---- The kernels of every generator ------------------------------------------------------

typedef void (*EdgeFn)(const u64 *, u64, u64 &, u64 &);

template <EdgeFn EDGE>
__device__ __forceinline__ void messages(const u64 *p, u64 first_edge, u64 count, u64 *out) {
    u64 i = thread_index();
    if (i >= count) return;
    u64 u, v;
    EDGE(p, first_edge + i, u, v);
    out[2 * i] = (u << 32) | v;
    out[2 * i + 1] = (v << 32) | u;
}

// A grid-stride loop; every thread of every block reaches the block sum.
template <EdgeFn EDGE>
__device__ __forceinline__ void checksum(const u64 *p, u64 first_edge, u64 count, u64 *sum) {
    u64 h = 0;
    for (u64 i = thread_index(); i < count; i += grid_threads()) {
        u64 u, v;
        EDGE(p, first_edge + i, u, v);
        h += mix64(mix64(u) ^ v);
    }
    const int at[1] = {0};
    const u64 value[1] = {h};
    block_add<1>(sum, at, value);
}

#define MESSAGES(NAME)                                                                      \
    extern "C" __global__ void NAME##_messages(const u64 *p, u64 first_edge, u64 count,     \
                                               u64 *out) {                                  \
        messages<NAME##_edge>(p, first_edge, count, out);                                   \
    }
#define GENERATOR(NAME)                                                                     \
    MESSAGES(NAME)                                                                          \
    extern "C" __global__ void NAME##_checksum(const u64 *p, u64 first_edge, u64 count,     \
                                               u64 *sum) {                                  \
        checksum<NAME##_edge>(p, first_edge, count, sum);                                   \
    }

// The checksum of a generator whose edges redraw: the edges whose attempt fails wait in
// their warp's queue (in shared memory) and are redrawn 32 at a time, each lane one, so a
// redraw does not run with the other 31 lanes idle (at SSCA#2's SCALE 23 one warp's step in
// six has a self-loop). The sum does not depend on the order.
#define REDRAW_THREADS 256  // the launch's blocks (THREADS, src/device/kernel.rs)
typedef bool (*AttemptFn)(const u64 *, u64, u64, u64 &, u64 &);

template <AttemptFn ATTEMPT>
__device__ __forceinline__ void redrawn_checksum(const u64 *p, u64 first_edge, u64 count,
                                                 u64 *sum) {
    // Fewer than WARP wait between rounds, so one round leaves fewer than 2 WARP.
    __shared__ u64 edges[REDRAW_THREADS / WARP][2 * WARP];
    __shared__ u32 attempts[REDRAW_THREADS / WARP][2 * WARP];
    u64 *queue = edges[threadIdx.x / WARP];
    u32 *next = attempts[threadIdx.x / WARP];
    u32 waiting = 0;
    u64 h = 0;
    // Lane `lane_id()` tries (e, attempt) when `have`; a failure joins the queue.
    auto attempt = [&](bool have, u64 e, u32 a) {
        u64 u, v;
        bool again = have && !ATTEMPT(p, e, a, u, v);
        if (have && !again) h += mix64(mix64(u) ^ v);
        u32 failed = __ballot_sync(FULL, again);
        if (again) {
            u32 slot = waiting + __popc(failed & lanes_before());
            queue[slot] = e;
            next[slot] = a + 1;
        }
        waiting += __popc(failed);
        __syncwarp();
    };
    // Redraw a warp's worth (or, at the end, what waits) from the top of the queue.
    auto redraw = [&](u32 take) {
        waiting -= take;
        bool have = lane_id() < take;
        u64 e = have ? queue[waiting + lane_id()] : 0;
        u32 a = have ? next[waiting + lane_id()] : 0;
        __syncwarp();
        attempt(have, e, a);
    };
    u64 warp_first = thread_index() - lane_id();
    for (u64 i = warp_first; i < count; i += grid_threads()) {
        u64 mine = i + lane_id();
        attempt(mine < count, first_edge + mine, 0);
        while (waiting >= WARP) redraw(WARP);
    }
    while (waiting > 0) redraw(waiting);
    const int at[1] = {0};
    const u64 value[1] = {h};
    block_add<1>(sum, at, value);
}

GENERATOR(kron)
MESSAGES(ssca2)
extern "C" __global__ void ssca2_checksum(const u64 *p, u64 first_edge, u64 count, u64 *sum) {
    redrawn_checksum<ssca2_attempt>(p, first_edge, count, sum);
}
GENERATOR(ba)
GENERATOR(lattice)
GENERATOR(ws)

// ---- Erdős–Rényi G(n, m) (src/graph/generators/erdos_renyi.rs) -------------------------
// Not an edge function: a chunk's edges are its sorted distinct slots, made together, so a
// block makes a chunk (in shared memory) and writes the edges of it that the call's range
// holds. p: [0] chunks, then 5 per chunk: first edge, edges, slots (cap), first slot, key.
// The slots of every chunk fit in 64 bits (N <= 2^32).

#define ER_MOST 4096
#define ER_THREADS 256

#define ER_PER (ER_MOST / ER_THREADS)
// Buckets of the counting sort: the values' top 11 bits, about one value a bucket.
#define ER_BUCKET_BITS 11
#define ER_BUCKETS (1u << ER_BUCKET_BITS)

// a[0..len) (len a multiple of ER_THREADS, at most ER_THREADS * ER_PER) replaced by its
// exclusive prefix sums; returns the total. Every thread of the block calls.
__device__ u32 er_exclusive_scan(u32 *a, u32 len) {
    __shared__ u32 warps[ER_THREADS / WARP];
    u32 per = len / ER_THREADS, first = threadIdx.x * per, mine = 0;
    for (u32 t = 0; t < per; t++) mine += a[first + t];
    u32 before = mine;  // inclusive within the warp, then exclusive over the block
    for (u32 d = 1; d < WARP; d <<= 1) {
        u32 other = __shfl_up_sync(FULL, before, d);
        if (lane_id() >= d) before += other;
    }
    if (lane_id() == WARP - 1) warps[threadIdx.x / WARP] = before;
    __syncthreads();
    u32 total = 0;
    for (u32 w = 0; w < ER_THREADS / WARP; w++) {
        u32 c = warps[w];
        if (w < threadIdx.x / WARP) before += c;
        total += c;
    }
    before -= mine;
    for (u32 t = 0; t < per; t++) {
        u32 c = a[first + t];
        a[first + t] = before;
        before += c;
    }
    __syncthreads();
    return total;
}

// Sort s[0..k) (k <= ER_MOST), values of [0, cap) drawn uniformly: a counting sort by
// their top bits (bucket = value >> shift < ER_BUCKETS), then each bucket's few values by
// insertion. The order within a bucket before the insertion depends on the atomics, the
// result does not.
__device__ void er_sort(u64 *s, u32 k, u64 cap) {
    __shared__ u32 start[ER_BUCKETS];
    u32 bits = 64 - __clzll(cap);
    u32 shift = bits > ER_BUCKET_BITS ? bits - ER_BUCKET_BITS : 0;
    for (u32 b = threadIdx.x; b < ER_BUCKETS; b += blockDim.x) start[b] = 0;
    __syncthreads();
    u64 mine[ER_PER];
    u32 at[ER_PER];
    for (u32 t = 0; t < ER_PER; t++) {
        u32 i = threadIdx.x + t * ER_THREADS;
        mine[t] = i < k ? s[i] : 0;
        at[t] = i < k ? atomicAdd(&start[mine[t] >> shift], 1u) : 0;
    }
    __syncthreads();
    er_exclusive_scan(start, ER_BUCKETS);
    for (u32 t = 0; t < ER_PER; t++)
        if (threadIdx.x + t * ER_THREADS < k) s[start[mine[t] >> shift] + at[t]] = mine[t];
    __syncthreads();
    for (u32 b = threadIdx.x; b < ER_BUCKETS; b += blockDim.x) {
        u32 from = start[b], to = b + 1 < ER_BUCKETS ? start[b + 1] : k;
        for (u32 i = from + 1; i < to; i++) {
            u64 v = s[i];
            u32 j = i;
            for (; j > from && s[j - 1] > v; j--) s[j] = s[j - 1];
            s[j] = v;
        }
    }
    __syncthreads();
}

// Drop repeats from the sorted s[0..k); returns how many distinct values remain.
__device__ u32 er_dedup(u64 *s, u32 k) {
    __shared__ u32 counts[ER_THREADS];
    u64 mine[ER_PER];
    u32 kept = 0, first = threadIdx.x * ER_PER;
    for (u32 t = 0; t < ER_PER; t++) {
        u32 i = first + t;
        mine[t] = i < k && (i == 0 || s[i] != s[i - 1]) ? s[i] : ~0ULL;
        kept += mine[t] != ~0ULL;
    }
    counts[threadIdx.x] = kept;
    __syncthreads();
    u32 distinct = er_exclusive_scan(counts, ER_THREADS);
    u32 at = counts[threadIdx.x];
    for (u32 t = 0; t < ER_PER; t++)
        if (mine[t] != ~0ULL) s[at++] = mine[t];
    __syncthreads();
    return distinct;
}

// `sorted_distinct` for k <= ER_MOST: k distinct values of [0, cap), sorted, into s.
__device__ void er_distinct(u64 *s, u64 key, u32 k, u64 cap) {
    u32 have = 0;
    u64 counter = 0;
    while (have < k) {
        u32 need = k - have;
        for (u32 t = threadIdx.x; t < need; t += blockDim.x) s[have + t] = below(draw(key, counter + t), cap);
        counter += need;
        __syncthreads();
        er_sort(s, k, cap);
        have = er_dedup(s, k);
    }
}

// The pair (u, v), u < v, of slot x = v(v-1)/2 + u (`Row::pair`).
__device__ void er_pair(u64 x, u64 &u, u64 &v) {
    u64 r = (u64)((1.0 + sqrt(1.0 + 8.0 * (double)x)) / 2.0);
    r = r < 1 ? 1 : r;
    while (r * (r - 1) / 2 > x) r--;
    while ((r + 1) * r / 2 <= x) r++;
    u = x - r * (r - 1) / 2;
    v = r;
}

// The chunks' edges in first_edge .. first_edge + count, as the messages of `messages`
// (out) or the checksum of `checksum` (sum), whichever is not null.
__device__ void er_edges(const u64 *p, u64 first_edge, u64 count, u64 *out, u64 *sum) {
    __shared__ u64 s[ER_MOST];
    u64 chunks = p[0], end = first_edge + count, h = 0;
    const u64 *c = p + 1;
    u64 lo = 0, hi = chunks;  // the first chunk that ends after first_edge
    while (lo < hi) {
        u64 mid = (lo + hi) / 2;
        if (c[5 * mid] + c[5 * mid + 1] <= first_edge) lo = mid + 1; else hi = mid;
    }
    for (u64 i = lo + blockIdx.x; i < chunks && c[5 * i] < end; i += gridDim.x) {
        u64 first = c[5 * i], k = c[5 * i + 1], cap = c[5 * i + 2], base = c[5 * i + 3];
        u64 key = c[5 * i + 4];
        // More than half full: the complement of a (cap - k)-subset.
        bool complement = 2 * k > cap;
        u32 drawn = (u32)(complement ? cap - k : k);
        er_distinct(s, key, drawn, cap);
        u64 from = max(first, first_edge), to = min(first + k, end);
        for (u64 e = from + threadIdx.x; e < to; e += blockDim.x) {
            u64 j = e - first, slot;
            if (complement) {
                // The j-th value of [0, cap) not in s: j + (skipped values at or below it).
                u32 a = 0, b = drawn;
                while (a < b) {
                    u32 m = (a + b) / 2;
                    if (s[m] - m <= j) a = m + 1; else b = m;
                }
                slot = j + a;
            } else {
                slot = s[j];
            }
            u64 u, v;
            er_pair(base + slot, u, v);
            if (out) {
                out[2 * (e - first_edge)] = (u << 32) | v;
                out[2 * (e - first_edge) + 1] = (v << 32) | u;
            } else {
                h += mix64(mix64(u) ^ v);
            }
        }
        __syncthreads();
    }
    if (sum) {
        const int at[1] = {0};
        const u64 value[1] = {h};
        block_add<1>(sum, at, value);
    }
}

extern "C" __global__ void __launch_bounds__(ER_THREADS) er_messages(const u64 *p, u64 first_edge, u64 count, u64 *out) {
    er_edges(p, first_edge, count, out, nullptr);
}

extern "C" __global__ void __launch_bounds__(ER_THREADS) er_checksum(const u64 *p, u64 first_edge, u64 count, u64 *sum) {
    er_edges(p, first_edge, count, nullptr, sum);
}

// ---- Erdős–Rényi split tree (src/graph/generators/erdos_renyi_gpu.rs) ------------------
// The host's hypergeometric draw (erdos_renyi.rs `hypergeometric`, `probability`,
// `stirlerr`, `bd0`, `HyperWalk`; portable_math.rs `ln`, `exp`) operation for operation:
// this file compiles without FMA contraction and every operation here is IEEE-rounded as
// the host's is, so each node's count is the host's bit for bit. All numbers fit in 64 bits
// (N <= 2^32: fewer than 2^63 slots).

__device__ __forceinline__ double er_pow2(long long k) {
    return __longlong_as_double((k + 1023) << 52);
}

__device__ double er_exp(double x) {
    const double INVERSE_FACTORIALS[14] = {
        1.0, 1.0, 0.5, 0.16666666666666666, 0.041666666666666664, 0.008333333333333333,
        0.001388888888888889, 0.0001984126984126984, 2.48015873015873e-05,
        2.7557319223985893e-06, 2.755731922398589e-07, 2.505210838544172e-08,
        2.08767569878681e-09, 1.6059043836821613e-10};
    if (isnan(x)) return x;
    if (x > 709.8) return __longlong_as_double(0x7ff0000000000000LL);
    if (x < -745.2) return 0.0;
    double k = floor(x * 1.4426950408889634 + 0.5);
    double r = (x - k * 0.6931471803691238) - k * 1.9082149292705877e-10;
    double p = INVERSE_FACTORIALS[13];
    for (int i = 12; i >= 0; i--) p = p * r + INVERSE_FACTORIALS[i];
    long long kk = (long long)k, half = kk / 2;
    return p * er_pow2(half) * er_pow2(kk - half);
}

// ln x for x > 0 finite (the only arguments here: ratios of counts).
__device__ double er_ln(double x) {
    const double ODD_RECIPROCALS[11] = {
        1.0, 0.3333333333333333, 0.2, 0.14285714285714285, 0.1111111111111111,
        0.09090909090909091, 0.07692307692307693, 0.06666666666666667, 0.058823529411764705,
        0.05263157894736842, 0.047619047619047616};
    u64 bits = (u64)__double_as_longlong(x);
    long long e = 0;
    if (bits < (1ULL << 52)) {
        bits = (u64)__double_as_longlong(x * 18014398509481984.0);
        e = -54;
    }
    e += (long long)(bits >> 52) - 1023;
    double m = __longlong_as_double((long long)((bits & ((1ULL << 52) - 1)) | (1023ULL << 52)));
    if (m > 1.4142135623730951) {
        m *= 0.5;
        e += 1;
    }
    double s = (m - 1.0) / (m + 1.0), s2 = s * s, p = ODD_RECIPROCALS[10];
    for (int j = 9; j >= 0; j--) p = p * s2 + ODD_RECIPROCALS[j];
    double ef = (double)e;
    return ef * 0.6931471803691238 + (ef * 1.9082149292705877e-10 + 2.0 * s * p);
}

__device__ double er_stirlerr(u64 k) {
    const double EXACT[16] = {
        0.0, 0.08106146679532726, 0.0413406959554093, 0.02767792568499834,
        0.020790672103765093, 0.016644691189821193, 0.013876128823070748,
        0.01189670994589177, 0.010411265261972096, 0.009255462182712733,
        0.00833056343336287, 0.007573675487951841, 0.00694284010720953,
        0.006408994188004207, 0.0059513701127588475, 0.005554733551962801};
    if (k < 16) return EXACT[k];
    double r = 1.0 / (double)k, r2 = r * r;
    double series = 1.0 / 1260.0 - r2 * (1.0 / 1680.0 - r2 * (1.0 / 1188.0));
    return r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 * series));
}

__device__ double er_bd0(u64 count, double dev, double e) {
    if (count == 0) return e;
    double k = (double)count, v = dev / (2.0 * k - dev);
    if (fabs(v) >= 0.1) return k * er_ln(k / e) + e - k;
    double v2 = v * v, term = 2.0 * k * v, sum = dev * v;
    for (u64 j = 1;; j++) {
        term *= v2;
        double next = sum + term / (double)(2 * j + 1);
        if (next == sum) break;
        sum = next;
    }
    return sum;
}

__device__ double er_probability(u64 total, u64 good, u64 draws, u64 x) {
    const double TWO_PI_POWERS[5] = {248.05021344239856, 39.47841760435743, 6.283185307179586,
                                     1.0, 0.15915494309189535};
    u64 bad = total - good;
    u64 rows[2] = {good, bad}, cols[2] = {draws, total - draws};
    u64 cells[4] = {x, good - x, draws - x, bad - (draws - x)};
    const double signs[4] = {1.0, -1.0, -1.0, 1.0};
    double expected[4];
    for (int c = 0; c < 4; c++) expected[c] = (double)rows[c / 2] * (double)cols[c % 2] / (double)total;
    int small = 2 * (rows[1] < rows[0]) + (cols[1] < cols[0]);
    double d = signs[small] * ((double)cells[small] - expected[small]);
    u64 margins[4] = {good, bad, draws, total - draws};
    double exponent = -0.0;
    for (int c = 0; c < 4; c++) exponent = exponent + er_stirlerr(margins[c]);
    exponent -= er_stirlerr(total);
    double ratio = 1.0 / (double)total;
    int filled = 0;
    for (int c = 0; c < 4; c++) {
        ratio *= (double)margins[c];
        if (cells[c] > 0) {
            ratio /= (double)cells[c];
            filled++;
        }
    }
    for (int c = 0; c < 4; c++) exponent -= er_stirlerr(cells[c]) + er_bd0(cells[c], signs[c] * d, expected[c]);
    return sqrt(ratio * TWO_PI_POWERS[filled]) * er_exp(exponent);
}

// The hypergeometric variate of u: the support walked from the mode outwards, largest
// probability first (`HyperWalk`), until the running sum passes u / P(mode).
__device__ u64 er_hypergeometric(double u, u64 total, u64 good, u64 draws) {
    u64 bad = total - good;
    u64 lo = draws > bad ? draws - bad : 0, hi = min(draws, good);
    u64 mode = (u64)(((double)draws + 1.0) * (((double)good + 1.0) / ((double)total + 2.0)));
    mode = min(max(mode, lo), hi);
    u64 room_down = mode - lo, room_up = hi - mode;
    if (room_down == 0 && room_up == 0) return mode;
    double target = u / er_probability(total, good, draws, mode);
    double m = (double)mode, g = (double)(good - mode), d = (double)(draws - mode);
    double c = (double)(bad + mode - draws);
    double acc = 1.0, sum = 1.0, wi = 1.0, wj = 1.0, kept_below = 0.0, kept_above = 0.0;
    u64 i = 0, j = 0, last = mode;
    bool have_below = false, have_above = false;
    if (target < acc) return last;
    for (;;) {
        double fi = (double)i, fj = (double)j, below, above;
        if (have_below) below = kept_below;
        else below = i < room_down ? wi * ((m - fi) * (c - fi)) / ((g + fi + 1.0) * (d + fi + 1.0)) : 0.0;
        if (have_above) above = kept_above;
        else above = j < room_up ? wj * ((g - fj) * (d - fj)) / ((m + fj + 1.0) * (c + fj + 1.0)) : 0.0;
        have_below = have_above = false;
        double w = fmax(below, above);
        if (w < sum * 5.421010862427522e-20) return last;  // 2^-64
        sum += w;
        if (above >= below) {
            j++;
            wj = above;
            kept_below = below;
            have_below = true;
            last = mode + j;
        } else {
            i++;
            wi = below;
            kept_above = above;
            have_above = true;
            last = mode - i;
        }
        acc += w;
        if (target < acc) return last;
    }
}

// head: [0] levels, [1] the host's last level, [2] pairs, [3] split key, [4] slot key,
// [5] first and [6] end of this rank's edges (src/graph/generators/erdos_renyi_gpu.rs).
// windows: 4 per level: first node and width before trimming (the children of the level
// above's window), then 1 where its first node, and 1 where its last node, holds none of
// this rank's edges (so it is trimmed). nodes: (first edge, edges) of each untrimmed node.

// First slot of chunk i, floor(pairs * i / 2^levels).
__device__ u64 er_boundary(const u64 *head, u64 i) {
    u64 levels = head[0], pairs = head[2];
    if (levels == 0) return pairs * i;
    u64 mask = (1ULL << levels) - 1, r = pairs & mask;
    // The 128-bit product r * i shifted right by levels (1 to 53: m < 2^64).
    u64 lo = r * i, hi = __umul64hi(r, i);
    return (pairs >> levels) * i + ((lo >> levels) | (hi << (64 - levels)));
}

__device__ u64 er_span(const u64 *head, u64 level, u64 index) {
    u64 shift = head[0] - level;
    return er_boundary(head, (index + 1) << shift) - er_boundary(head, index << shift);
}

// A level's window after trimming: its first node's id, width, and offset in `nodes`.
__device__ void er_window(const u64 *w, u64 &lo, u64 &width, u64 &offset) {
    offset = w[2];
    lo = w[0] + w[2];
    width = w[1] - w[2] - w[3];
}

// A thread a node of `level`'s window: its two children into `below` (the next level's
// untrimmed window, in order); the window's first and last threads say whether the
// children at the ends hold any of this rank's edges.
extern "C" __global__ void er_split(const u64 *head, u32 level, u64 *windows, const u64 *above,
                                    u64 *below) {
    u64 lo, width, offset;
    er_window(windows + 4 * level, lo, width, offset);
    u64 t = thread_index();
    if (t >= width) return;
    u64 id = lo + t, first = above[2 * (offset + t)], count = above[2 * (offset + t) + 1];
    u64 bits = draw(head[3], (1ULL << level) + id);
    double u = (double)(bits >> 11) * (1.0 / 9007199254740992.0);
    u64 left = er_hypergeometric(u, er_span(head, level, id), er_span(head, level + 1, 2 * id), count);
    below[4 * t] = first;
    below[4 * t + 1] = left;
    below[4 * t + 2] = first + left;
    below[4 * t + 3] = count - left;
    u64 *next = windows + 4 * (level + 1), from = head[5], to = head[6];
    if (t == 0) {
        next[0] = 2 * lo;
        next[1] = 2 * width;
        next[2] = !(left > 0 && first + left > from);
    }
    if (t == width - 1) next[3] = !(count - left > 0 && first + left < to);
}

// The leaves' window as the "er" kernels' parameters: [0] chunks, then per chunk its first
// edge, edges, slots, first slot and key; `too_big` set where a chunk draws more than
// ER_MOST slots.
extern "C" __global__ void er_chunks(const u64 *head, const u64 *windows, const u64 *leaves,
                                     u64 *p, u64 *too_big) {
    u64 lo, width, offset;
    er_window(windows + 4 * head[0], lo, width, offset);
    u64 t = thread_index();
    if (t == 0) p[0] = width;
    if (t >= width) return;
    u64 id = lo + t, first = leaves[2 * (offset + t)], count = leaves[2 * (offset + t) + 1];
    u64 base = er_boundary(head, id), cap = er_boundary(head, id + 1) - base;
    u64 *c = p + 1 + 5 * t;
    c[0] = first;
    c[1] = count;
    c[2] = cap;
    c[3] = base;
    c[4] = draw(head[4], id);
    if (min(count, cap - count) > ER_MOST) atomicOr((unsigned long long *)too_big, 1ULL);
}

// ---- Kernel 1's passes over the messages (first = the first local vertex id) -------------

// Pass 1: tuple endpoints and row lengths of the local vertices.
extern "C" __global__ void csr_count(const u64 *msgs, u64 count, u64 first, u64 *ends,
                                     u64 *lengths) {
    u64 i = thread_index();
    if (i >= count) return;
    u64 a = msgs[i] >> 32, b = msgs[i] & 0xffffffffULL;
    atomicAdd(&ends[a - first], 1ULL);
    if (a != b) atomicAdd(&lengths[a - first], 1ULL);
}

// Pass 2: each entry into the next free slot of its row (cursor starts at the row offsets);
// rows are sorted and de-duplicated afterwards, so the order within a row does not matter.
extern "C" __global__ void csr_fill(const u64 *msgs, u64 count, u64 first, u64 *cursor,
                                    u32 *adj) {
    u64 i = thread_index();
    if (i >= count) return;
    u64 a = msgs[i] >> 32, b = msgs[i] & 0xffffffffULL;
    if (a != b) adj[atomicAdd(&cursor[a - first], 1ULL)] = (u32)b;
}

// ---- Kernel 1 of arc graphs (src/graph/arcs_gpu.rs) --------------------------------------
// Over the messages of `count` tuples, tuple i being edge first_edge + i (2i: u -> v, row u;
// 2i + 1: v -> u, row v), the arcs of the rows first .. first + local_n: `take` bit 0 keeps
// the even messages (out-arcs), bit 1 the odd ones (in-arcs; with bit 0, an undirected
// graph's both arcs). Self-loops are not stored.

// The row of message i among this rank's, or ~0 where `take` does not keep it.
__device__ __forceinline__ u64 arc_row(u64 msg, u64 i, u32 take, u64 first, u64 local_n) {
    u64 row = (msg >> 32) - first;
    return (take >> (i & 1) & 1) && row < local_n ? row : ~0ULL;
}

__device__ __forceinline__ bool is_loop(u64 msg) { return msg >> 32 == (msg & 0xffffffffULL); }

// Pass 1: the rows' lengths; self-loops (each once: its even message) counted into *loops.
extern "C" __global__ void arcs_count(const u64 *msgs, u64 count, u32 take, u64 first,
                                      u64 local_n, u64 *lengths, u64 *loops) {
    u64 i = thread_index();
    if (i >= 2 * count) return;
    u64 msg = msgs[i], row = arc_row(msg, i, take, first, local_n);
    if (row == ~0ULL) return;
    if (!is_loop(msg)) atomicAdd(&lengths[row], 1ULL);
    else if (i % 2 == 0) atomicAdd(loops, 1ULL);
}

// Pass 2: each arc's key, neighbour << 32 | weight, into the next free slot of its row
// (cursor starts at the row offsets; the rows are sorted afterwards). The weight of edge e:
// 1 + below(draw(weight_key, e), weight_range), as the generator's `weight` (0 where
// weight_range is 0: unweighted).
extern "C" __global__ void arcs_fill(const u64 *msgs, u64 count, u32 take, u64 first,
                                     u64 local_n, u64 first_edge, u64 weight_key,
                                     u64 weight_range, u64 *cursor, u64 *keys) {
    u64 i = thread_index();
    if (i >= 2 * count) return;
    u64 msg = msgs[i], row = arc_row(msg, i, take, first, local_n);
    if (row == ~0ULL || is_loop(msg)) return;
    u64 w = weight_range ? 1 + below(draw(weight_key, first_edge + i / 2), weight_range) : 0;
    keys[atomicAdd(&cursor[row], 1ULL)] = (msg & 0xffffffffULL) << 32 | w;
}

// ---- Kernel 1 of the 2D partition (src/graph/block2d_gpu.rs) ------------------------------
// Each message (u, v) received here is an entry of this rank's block A(i, j): u's column
// index (u's block among the column's, then its place in it) and v's row index (v less the
// row's first vertex, row_first = i·C·block). Self-loops are not stored.

__device__ __forceinline__ u64 column_index(u64 u, u64 block, u64 cols) {
    return u / block / cols * block + u % block;
}

// Pass 1: the lengths of the block's rows by u and by v.
extern "C" __global__ void csr2d_count(const u64 *msgs, u64 count, u64 block, u64 cols,
                                       u64 row_first, u64 *out_lengths, u64 *in_lengths) {
    u64 k = thread_index();
    if (k >= count) return;
    u64 u = msgs[k] >> 32, v = msgs[k] & 0xffffffffULL;
    if (u == v) return;
    atomicAdd(&out_lengths[column_index(u, block, cols)], 1ULL);
    atomicAdd(&in_lengths[v - row_first], 1ULL);
}

// Pass 2: each entry into the next free slot of its row in both orientations.
extern "C" __global__ void csr2d_fill(const u64 *msgs, u64 count, u64 block, u64 cols,
                                      u64 row_first, u64 *out_cursor, u32 *out_adj,
                                      u64 *in_cursor, u32 *in_adj) {
    u64 k = thread_index();
    if (k >= count) return;
    u64 u = msgs[k] >> 32, v = msgs[k] & 0xffffffffULL;
    if (u == v) return;
    u64 c = column_index(u, block, cols), r = v - row_first;
    out_adj[atomicAdd(&out_cursor[c], 1ULL)] = (u32)r;
    in_adj[atomicAdd(&in_cursor[r], 1ULL)] = (u32)c;
}

// The block's share of the CSR checksum (src/graph/block2d.rs entry_checksum): the sum of
// mix64(mix64(u) ^ v) over its entries by u, a warp per row; u's global id from its column
// index (column j of the grid).
extern "C" __global__ void csr2d_checksum(const u64 *offsets, const u32 *adj, u64 rows,
                                          u64 block, u64 cols, u64 j, u64 row_first,
                                          u64 *sum) {
    u64 c = thread_index() / WARP;
    u64 h = 0;
    if (c < rows) {
        u64 u = (c / block * cols + j) * block + c % block;
        u64 mu = mix64(u);
        for (u64 e = offsets[c] + lane_id(); e < offsets[c + 1]; e += WARP)
            h += mix64(mu ^ (row_first + adj[e]));
    }
    const int at[1] = {0};
    const u64 value[1] = {h};
    block_add<1>(sum, at, value);
}
