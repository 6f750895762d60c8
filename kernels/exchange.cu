// Bucketing for the GPU exchanges (host side: OwnerBuckets in src/comm/gpu.rs): packed pairs,
// a key in the high half, put into runs by owner rank, as an all-to-all sends them. With
// cols = 0 the owner is key / divisor (a 1D block partition); else the pair is an entry (u, v)
// of a 2D grid of `cols` columns over those blocks, held by the rank in the process row of
// v's block and the process column of u's (graph::block2d::Layout2D::entry_rank). Two passes: count per owner, then scatter to
// cursors set on the device to each owner's run start (no host round trip between). The lanes of a warp with the same owner
// share one atomic (the order inside a run is not deterministic, which no result depends on).

__device__ __forceinline__ u32 pair_owner(const u64 *pairs, u64 i, u64 count, u64 divisor,
                                          u64 cols) {
    if (i >= count) return 0xffffffffu;
    u64 u_block = (pairs[i] >> 32) / divisor;
    if (!cols) return (u32)u_block;
    u64 v_block = (pairs[i] & 0xffffffffULL) / divisor;
    return (u32)(v_block / cols * cols + u_block % cols);
}

extern "C" __global__ void exchange_count_owners(const u64 *pairs, u64 count, u64 divisor,
                                                 u64 cols, u64 *counts) {
    u64 i = thread_index();
    u32 owner = pair_owner(pairs, i, count, divisor, cols);
    u32 same = __match_any_sync(FULL, owner);
    if (i < count && lane_id() == __ffs(same) - 1) atomicAdd(&counts[owner], (u64)__popc(same));
}

// counts[0 .. ranks): the pairs per owner; their run starts (exclusive prefix sums) go to
// counts[ranks .. 2 ranks), the scatter's cursors. One thread: `ranks` is small.
extern "C" __global__ void exchange_owner_cursors(u64 *counts, u32 ranks) {
    if (thread_index() != 0) return;
    u64 at = 0;
    for (u32 r = 0; r < ranks; r++) {
        counts[ranks + r] = at;
        at += counts[r];
    }
}

extern "C" __global__ void exchange_scatter_owners(const u64 *pairs, u64 count, u64 divisor,
                                                   u64 cols, u64 *cursor, u64 *out) {
    u64 i = thread_index();
    u32 owner = pair_owner(pairs, i, count, divisor, cols);
    u32 same = __match_any_sync(FULL, owner);
    int leader = __ffs(same) - 1;
    u64 base = 0;
    if (i < count && lane_id() == leader) base = atomicAdd(&cursor[owner], (u64)__popc(same));
    base = __shfl_sync(FULL, base, leader);
    if (i < count) out[base + __popc(same & lanes_before())] = pairs[i];
}
