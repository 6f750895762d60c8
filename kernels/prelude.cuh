// The prelude of every kernel file: src/device/mod.rs puts this text before each file in
// kernels/ (after the run's #defines, if any) and compiles the two with NVRTC as one
// program; a #line directive after it keeps the compiler's line numbers those of the file.
// Kernel files therefore do not #include it. Names here must not clash with the #defines
// that specialised kernels take (godfrey.cu: N, Q, G, WORDS, WALK, UNROLL, THREADS).
//
// Contents: fixed-width integer types, thread and warp indices, warp-aggregated atomics,
// block-wide counter sums, a block-wide sort in shared memory, tiled prefix sums, a lock-free
// union-find, and the
// counter-based random numbers of src/rng.rs.

#ifndef TESSERA_PRELUDE
#define TESSERA_PRELUDE

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;
typedef int i32;
typedef unsigned short u16;
typedef unsigned char u8;

#define WARP 32
#define FULL 0xffffffffu

// ---- Indices ---------------------------------------------------------------------------

// This thread's index in a one-dimensional grid.
__device__ __forceinline__ u64 thread_index() { return blockIdx.x * (u64)blockDim.x + threadIdx.x; }

// Threads in the grid, the stride of a grid-stride loop.
__device__ __forceinline__ u64 grid_threads() { return (u64)gridDim.x * blockDim.x; }

// This thread's lane in its warp.
__device__ __forceinline__ u32 lane_id() { return threadIdx.x % WARP; }

// Lanes below this one, as a mask.
__device__ __forceinline__ u32 lanes_before() { return (1u << lane_id()) - 1u; }

// ---- Warp-aggregated atomics -------------------------------------------------------------

// A slot at `*tail` for each lane that has `take`, with one global atomic per warp; the
// result is meaningful only where `take` holds. Every active lane must call.
__device__ __forceinline__ u64 warp_slot(bool take, u64 *tail) {
    u32 active = __activemask();
    u32 mask = __ballot_sync(active, take);
    if (!mask) return 0;
    int leader = __ffs(mask) - 1;
    u64 base = 0;
    if (lane_id() == leader) base = atomicAdd(tail, (u64)__popc(mask));
    base = __shfl_sync(active, base, leader);
    return base + __popc(mask & lanes_before());
}

// `*addr += value`, with one atomic per distinct address among the warp's active lanes:
// lanes aiming at the same counter (a hub vertex, a shared total) add their sum once. The
// sum is taken in 16-bit halves so that 32 lanes of any u32 value cannot overflow it.
__device__ __forceinline__ void warp_add(u64 *addr, u32 value) {
#if __CUDA_ARCH__ >= 800
    u32 same = __match_any_sync(__activemask(), (u64)addr);
    u64 low = __reduce_add_sync(same, value & 0xffffu);
    u64 high = __reduce_add_sync(same, value >> 16);
    if (lane_id() == __ffs(same) - 1 && (low | high)) atomicAdd(addr, low + (high << 16));
#else
    if (value) atomicAdd(addr, (u64)value);
#endif
}

// Sum of `v` over the 32 lanes of a full warp, in every lane.
__device__ __forceinline__ u64 warp_sum(u64 v) {
    for (int s = WARP / 2; s > 0; s /= 2) v += __shfl_xor_sync(FULL, v, s);
    return v;
}

// Block-wide sums of per-thread counts, added to counters[index[k]] with one global atomic
// per counter per block (one per warp on the same address serialises at L2). Every thread
// of the block must call, with a block of whole warps.
template <int K>
__device__ void block_add(u64 *counters, const int (&index)[K], const u64 (&value)[K]) {
    __shared__ u64 sums[K];
    if (threadIdx.x < K) sums[threadIdx.x] = 0;
    __syncthreads();
    for (int k = 0; k < K; k++) {
        u64 v = warp_sum(value[k]);
        if (lane_id() == 0 && v) atomicAdd(&sums[k], v);
    }
    __syncthreads();
    if (threadIdx.x < K && sums[threadIdx.x]) atomicAdd(&counters[index[threadIdx.x]], sums[threadIdx.x]);
}

// ---- Block-wide sort in shared memory (kernels/csr.cu, kernels/generators.cu) ---------------

// Sort s[0..len) ascending by the whole block: padded with `top` (no smaller than any value)
// to p, the least power of two >= max(len, 64), then a bitonic network with a barrier per
// stage. s must hold p items; every thread of the block calls, after writing its share of
// s[0..len) (the barrier after the padding makes those writes visible).
template <typename T>
__device__ void block_sort(T *s, u32 len, T top) {
    u32 p = 2 * WARP;
    while (p < len) p <<= 1;
    for (u32 i = len + threadIdx.x; i < p; i += blockDim.x) s[i] = top;
    __syncthreads();
    for (u32 k = 2; k <= p; k <<= 1) {
        for (u32 j = k >> 1; j > 0; j >>= 1) {
            for (u32 i = threadIdx.x; i < p; i += blockDim.x) {
                u32 partner = i ^ j;
                if (partner > i) {
                    T a = s[i], b = s[partner];
                    if ((a > b) == ((i & k) == 0)) {
                        s[i] = b;
                        s[partner] = a;
                    }
                }
            }
            __syncthreads();
        }
    }
}

// ---- Exclusive prefix sums in tiles (src/device/scan.rs; kernels/csr.cu, euler.cu, ghosts.cu) --
// In place, of u64 or u32 items. A warp scans a tile of `rounds` times a warp's width items, a
// warp's width at a time in order, so no block barrier is needed; each tile's sum goes to
// sums[tile]. The host scans the tiles' sums the same way, tile sums of tile sums until one tile
// holds them, and `scan_add` adds them back level by level.

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

// The two entries for items of type T, in the file that scans them (src/device/scan.rs
// launches `scan_tiles_T` and `scan_add_T` from that file's module, compiled with its other
// kernels, not apart at first use).
#define SCAN_KERNELS(T)                                                                        \
    extern "C" __global__ void scan_tiles_##T(T *a, u64 len, u32 rounds, T *sums) {           \
        scan_tiles(a, len, rounds, sums);                                                      \
    }                                                                                          \
    extern "C" __global__ void scan_add_##T(T *a, u64 len, u64 tile_len, const T *sums) {     \
        scan_add(a, len, tile_len, sums);                                                      \
    }

// ---- Block-aggregated slots (kernels/cc.cu, kernels/bfs.cu) ----------------------------------

// Slots at `*tail` for `count` items per thread, one global atomic per block: the first slot
// of this thread's. (One atomic per warp serialised at the counter where most warps take
// some: 2^21 warps for 2^26 vertices.) Every thread of the block must call, once per launch
// or once per step of a loop that every thread of the block takes alike.
__device__ __forceinline__ u64 block_slots(u64 count, u64 *tail) {
    __shared__ u64 warp_base[WARP];
    __shared__ u64 block_base;
    u64 upto = count;
    for (u32 d = 1; d < WARP; d *= 2) {
        u64 below = __shfl_up_sync(FULL, upto, d);
        if (lane_id() >= d) upto += below;
    }
    u32 warp = threadIdx.x / WARP;
    __syncwarp();  // the warp's lanes have read the previous call's base
    if (lane_id() == WARP - 1) warp_base[warp] = upto;
    __syncthreads();
    if (threadIdx.x == 0) {
        u64 sum = 0;
        for (u32 w = 0; w < blockDim.x / WARP; w++) {
            u64 c = warp_base[w];
            warp_base[w] = sum;
            sum += c;
        }
        block_base = sum ? atomicAdd(tail, sum) : 0;
    }
    __syncthreads();
    return block_base + warp_base[warp] + upto - count;
}

// ---- Union-find (kernels/cc.cu, kernels/lattice.cu) -----------------------------------------

// A forest over 0..n in which a root is only ever hooked under a smaller root, so that
// parent[v] <= v and every root is the smallest index of its tree (ECL-CC, Jaiganesh &
// Burtscher 2018). uf_find follows parents and points each vertex passed at its grandparent
// (intermediate pointer jumping); uf_unite hooks the larger root under the smaller with one
// compare-and-swap, retrying from the new roots when another thread hooked first.
__device__ __forceinline__ u32 uf_find(u32 *parent, u32 v) {
    volatile u32 *p = parent;
    u32 cur = p[v];
    if (cur == v) return v;
    u32 prev = v, next;
    while (cur > (next = p[cur])) {
        p[prev] = next;
        prev = cur;
        cur = next;
    }
    return cur;
}

__device__ __forceinline__ void uf_unite(u32 *parent, u32 a, u32 b) {
    u32 ra = uf_find(parent, a), rb = uf_find(parent, b);
    while (ra != rb) {
        u32 high = max(ra, rb), low = min(ra, rb);
        u32 seen = atomicCAS(&parent[high], high, low);
        if (seen == high) return;
        ra = uf_find(parent, seen);
        rb = uf_find(parent, low);
    }
}

// The root of v by a walk that writes nothing: what a compress step stores. (A find that
// jumped pointers could overwrite another thread's stored root with a mere ancestor.)
__device__ __forceinline__ u32 uf_root(const u32 *parent, u32 v) {
    const volatile u32 *p = parent;
    u32 next;
    while ((next = p[v]) != v) v = next;
    return v;
}

// ---- Counter-based random numbers (src/rng.rs, bit for bit) -------------------------------

#define RNG_GOLDEN 0x9e3779b97f4a7c15ULL

// SplitMix64's finaliser.
__device__ __forceinline__ u64 mix64(u64 z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// 64 random bits for position `counter` of the stream named by `key`.
__device__ __forceinline__ u64 draw(u64 key, u64 counter) {
    return mix64(key + (counter + 1) * RNG_GOLDEN);
}

// A stream key from a user seed and a purpose tag (the host usually passes the key itself).
__device__ __forceinline__ u64 stream_key(u64 seed, u64 purpose) {
    return mix64(mix64(seed ^ 0x7e55e7a000000000ULL) ^ purpose * RNG_GOLDEN);
}

#endif
