// Graph500 BFS on one rank's rows of the 1D-partitioned CSR (see src/algo/bfs.rs for the
// algorithm and src/algo/bfs_gpu.rs for the host side). Compiled at start by NVRTC.
//
// Layout: offsets[local_n + 1] (u64) index adj (u32 global neighbour ids: the GPU path needs
// N <= 2^32); parent[local_n] (i64, -1 = unvisited); frontier bitmaps as u64 words, bit l of
// word l/64 for local vertex l (global bitmaps: bit v for global vertex v); queues of local
// ids (u32). counters: [0] next frontier vertices, [1] their edges, [2] entries inspected,
// [3] remote pairs written.

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

#define WARP 32

// Claim local vertex l for parent p; true for the one thread that wins.
__device__ __forceinline__ bool claim(i64 *parent, u64 l, u64 p) {
    if (parent[l] != -1) return false;
    return atomicCAS((u64 *)&parent[l], (u64)-1LL, p) == (u64)-1LL;
}

__device__ __forceinline__ void push_next(u64 l, const u64 *offsets, u32 *next_queue,
                                          u64 *counters) {
    u64 at = atomicAdd(&counters[0], 1ULL);
    next_queue[at] = (u32)l;
    atomicAdd(&counters[1], offsets[l + 1] - offsets[l]);
}

extern "C" __global__ void bfs_start(i64 *parent, u64 local_n, i64 root_local, u64 root) {
    u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (i < local_n) parent[i] = (i64)i == root_local ? (i64)root : -1;
}

// Top-down: one warp per frontier vertex, lanes striding over its row (rows of high degree
// are read by 32 lanes at once; the warps of a block share nothing).
extern "C" __global__ void bfs_top_down(const u64 *offsets, const u32 *adj, i64 *parent,
                                        const u32 *queue, u64 queue_len, u64 first,
                                        u64 local_n, u32 *next_queue, u64 *counters,
                                        u64 *remote, u64 remote_capacity) {
    u64 warp = (blockIdx.x * (u64)blockDim.x + threadIdx.x) / WARP;
    u32 lane = threadIdx.x % WARP;
    if (warp >= queue_len) return;
    u64 u = queue[warp];
    u64 ug = first + u;
    u64 begin = offsets[u], end = offsets[u + 1];
    for (u64 e = begin + lane; e < end; e += WARP) {
        u64 v = adj[e];
        u64 l = v - first;  // wraps for v < first
        if (l < local_n) {
            if (claim(parent, l, ug)) push_next(l, offsets, next_queue, counters);
        } else {
            u64 at = atomicAdd(&counters[3], 1ULL);
            if (at < remote_capacity) {
                remote[2 * at] = v;
                remote[2 * at + 1] = ug;
            }
        }
    }
    if (lane == 0) atomicAdd(&counters[2], end - begin);
}

// Vertices discovered by other ranks: pairs (global vertex, parent).
extern "C" __global__ void bfs_claim(const u64 *pairs, u64 count, u64 first, i64 *parent,
                                     const u64 *offsets, u32 *next_queue, u64 *counters) {
    u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (i >= count) return;
    u64 l = pairs[2 * i] - first;
    if (claim(parent, l, pairs[2 * i + 1])) push_next(l, offsets, next_queue, counters);
}

// Bottom-up: one thread per local vertex; a warp covers 32 consecutive vertices, so its
// ballot is one 32-bit half of a next-frontier word (little-endian halves of the u64 words).
extern "C" __global__ void bfs_bottom_up(const u64 *offsets, const u32 *adj, i64 *parent,
                                         const u64 *frontier, u64 local_n, u32 *next_bits,
                                         u64 *counters) {
    u64 l = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    bool found = false;
    u64 inspected = 0, degree = 0;
    if (l < local_n && parent[l] == -1) {
        u64 begin = offsets[l], end = offsets[l + 1];
        degree = end - begin;
        for (u64 e = begin; e < end; e++) {
            u64 v = adj[e];
            inspected++;
            if ((frontier[v / 64] >> (v % 64)) & 1) {
                parent[l] = (i64)v;
                found = true;
                break;
            }
        }
    }
    u32 ballot = __ballot_sync(0xffffffff, found);
    u64 edges = found ? degree : 0;
    for (int s = WARP / 2; s > 0; s /= 2) {
        inspected += __shfl_down_sync(0xffffffff, inspected, s);
        edges += __shfl_down_sync(0xffffffff, edges, s);
    }
    if (threadIdx.x % WARP == 0 && l < local_n) {
        u64 word = l / WARP;
        next_bits[word] = ballot;
        if (ballot) {
            atomicAdd(&counters[0], (u64)__popc(ballot));
            atomicAdd(&counters[1], edges);
        }
        if (inspected) atomicAdd(&counters[2], inspected);
    }
}

extern "C" __global__ void bfs_queue_to_bits(const u32 *queue, u64 len, u64 *bits) {
    u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (i < len) atomicOr(&bits[queue[i] / 64], 1ULL << (queue[i] % 64));
}

// One thread per word; the queue order is not deterministic, which no result depends on.
extern "C" __global__ void bfs_bits_to_queue(const u64 *bits, u64 words, u32 *queue,
                                             u64 *counters) {
    u64 w = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (w >= words) return;
    u64 word = bits[w];
    if (!word) return;
    u64 at = atomicAdd(&counters[0], (u64)__popcll(word));
    while (word) {
        int i = __ffsll(word) - 1;
        queue[at++] = (u32)(w * 64 + i);
        word &= word - 1;
    }
}
