// Kernel 1 on the GPU for Graph500 Kronecker graphs (host side: src/graph/csr_gpu.rs).
// Compiled at start by NVRTC.
//
// kron_messages reproduces src/graph/kronecker.rs bit for bit (same counter-based draws, the
// prelude's `draw`; quadrant thresholds and id scrambling), so a graph built here equals the
// CPU's. Each edge tuple (u, v) becomes two directed messages packed in one u64, source in
// the high half (the GPU path needs N <= 2^32): u->v and v->u. A self-loop's two messages
// count towards its vertex's tuple endpoints but are not stored.
//
// params: [0] edge stream key, [1] id mask, [2] scramble shift, [3..5) scramble multipliers,
// [5..7) scramble addends, [7] SCALE, [8] row threshold, [9] column threshold (top row),
// [10] column threshold (bottom row); thresholds apply to 16-bit uniform draws.

__device__ __forceinline__ u64 scramble(const u64 *p, u64 x) {
    for (int round = 0; round < 2; round++) {
        x = (x * p[3 + round] + p[5 + round]) & p[1];
        x ^= x >> p[2];
    }
    return x;
}

extern "C" __global__ void kron_messages(const u64 *p, u64 first_edge, u64 count, u64 *out) {
    u64 i = thread_index();
    if (i >= count) return;
    u32 scale = (u32)p[7];
    u16 row_t = (u16)p[8], col_top = (u16)p[9], col_bottom = (u16)p[10];
    u64 e = first_edge + i, draws = (scale + 1) / 2, bits = 0, u = 0, v = 0;
    for (u32 level = 0; level < scale; level++) {
        if (level % 2 == 0) bits = draw(p[0], e * draws + level / 2);
        u32 r = (u32)bits;
        bool row = (u16)r >= row_t;
        bool col = (u16)(r >> 16) >= (row ? col_bottom : col_top);
        bits >>= 32;
        u = (u << 1) | row;
        v = (v << 1) | col;
    }
    u = scramble(p, u);
    v = scramble(p, v);
    out[2 * i] = (u << 32) | v;
    out[2 * i + 1] = (v << 32) | u;
}

// Pass 1: tuple endpoints and row lengths of the local vertices (first = first local id).
extern "C" __global__ void kron_count(const u64 *msgs, u64 count, u64 first, u64 *ends,
                                      u64 *lengths) {
    u64 i = thread_index();
    if (i >= count) return;
    u64 a = msgs[i] >> 32, b = msgs[i] & 0xffffffffULL;
    atomicAdd(&ends[a - first], 1ULL);
    if (a != b) atomicAdd(&lengths[a - first], 1ULL);
}

// Pass 2: each entry into the next free slot of its row (cursor starts at the row offsets);
// rows are sorted and de-duplicated afterwards, so the order within a row does not matter.
extern "C" __global__ void kron_fill(const u64 *msgs, u64 count, u64 first, u64 *cursor,
                                     u32 *adj) {
    u64 i = thread_index();
    if (i >= count) return;
    u64 a = msgs[i] >> 32, b = msgs[i] & 0xffffffffULL;
    if (a != b) adj[atomicAdd(&cursor[a - first], 1ULL)] = (u32)b;
}
