// Exclusive prefix sums in place, of u64 or u32 items (host side: src/device/scan.rs): CSR row
// offsets from row lengths (SSCA#2 kernel 1, betweenness), Euler slot starts from degrees, the
// local/cut split's ghost numbers and row offsets. Compiled at start by NVRTC.
//
// A warp scans a tile of `rounds` times a warp's width items, a warp's width at a time in
// order, so no block barrier is needed; each tile's sum goes to sums[tile]. The host scans the
// tiles' sums the same way, tile sums of tile sums until one tile holds them, and `scan_add`
// adds them back level by level.

template <typename T>
__device__ __forceinline__ void scan_tiles(T *a, u64 len, u32 rounds, T *sums) {
    u64 tile_len = (u64)rounds * WARP, tile = thread_index() / WARP;
    T carry = 0;
    // Whole warps: a warp past the last tile returns whole.
    if (tile * tile_len >= len) return;
    for (u32 round = 0; round < rounds; round++) {
        u64 e = tile * tile_len + round * WARP + lane_id();
        T x = e < len ? a[e] : 0, inclusive = x;
        for (u32 d = 1; d < WARP; d *= 2) {
            T below = __shfl_up_sync(FULL, inclusive, d);
            if (lane_id() >= d) inclusive += below;
        }
        if (e < len) a[e] = carry + inclusive - x;
        carry += __shfl_sync(FULL, inclusive, WARP - 1);
    }
    if (lane_id() == 0) sums[tile] = carry;
}

// Each item of `a` (`len`) plus its tile's exclusive sum (`sums` scanned, tiles of `tile_len`
// items): the whole scan.
template <typename T>
__device__ __forceinline__ void scan_add(T *a, u64 len, u64 tile_len, const T *sums) {
    u64 e = thread_index();
    if (e < len) a[e] += sums[e / tile_len];
}

#define SCAN_KERNELS(T)                                                                        \
    extern "C" __global__ void scan_tiles_##T(T *a, u64 len, u32 rounds, T *sums) {           \
        scan_tiles(a, len, rounds, sums);                                                      \
    }                                                                                          \
    extern "C" __global__ void scan_add_##T(T *a, u64 len, u64 tile_len, const T *sums) {     \
        scan_add(a, len, tile_len, sums);                                                      \
    }

SCAN_KERNELS(u64)
SCAN_KERNELS(u32)
