// Sorting and de-duplicating on the GPU the rows that kernel 1 filled there (host side:
// src/graph/csr_sort.rs), so that the CSR the GPU built stays on the GPU. Rows hold u32
// neighbour ids (the CSR), or u64 keys (neighbour << 32 | weight: the arc graph's rows,
// src/graph/arcs_gpu.rs), in any order (self-loops were never stored). Each kernel is a
// template over the key with two entry points, NAME (u32) and NAME_64 (u64); keys of one id
// are duplicates (`same_id`: the u64 key's high half), the first of them kept. Rows are sorted by length class:
//   2..=32 entries: a warp per row, a bitonic sort in registers (csr_sort_warp);
//   up to SORT_TILE entries, and each SORT_TILE chunk of longer rows: a block per segment,
//     a bitonic sort in shared memory (csr_sort_tile);
//   longer rows: their sorted chunks merged pairwise, one launch per doubling of the run
//     width, each thread placing MERGE_ITEMS outputs after a merge-path search (csr_merge).
// Then csr_unique_count counts each row's distinct ids and csr_compact copies them to the
// final rows at offsets the host summed from those counts.

#define SORT_TILE 4096
#define MERGE_ITEMS 16

// The key above every key, padding the sorts.
template <typename K> __device__ __forceinline__ K top_key() { return (K)~(K)0; }

// Keys of the same neighbour: a u32 key is the id; a u64 key holds it in its high half.
__device__ __forceinline__ bool same_id(u32 a, u32 b) { return a == b; }
__device__ __forceinline__ bool same_id(u64 a, u64 b) { return (a >> 32) == (b >> 32); }

// Rows of 2..=32 entries, one warp each: rows[w] names warp w's row.
template <typename K>
__device__ void sort_warp(K *adj, const u64 *offsets, const u32 *rows, u64 count) {
    u64 w = thread_index() / WARP;
    if (w >= count) return;  // the whole warp leaves together
    u32 r = rows[w];
    u64 start = offsets[r];
    u32 len = (u32)(offsets[r + 1] - start), lane = lane_id();
    K x = lane < len ? adj[start + lane] : top_key<K>();
    for (u32 k = 2; k <= WARP; k <<= 1) {
        for (u32 j = k >> 1; j > 0; j >>= 1) {
            K y = __shfl_xor_sync(FULL, x, j);
            // Lanes whose bit k is clear sort ascending; the lower lane of a pair keeps the
            // smaller value there.
            bool ascending = (lane & k) == 0, lower = (lane & j) == 0;
            x = lower == ascending ? min(x, y) : max(x, y);
        }
    }
    if (lane < len) adj[start + lane] = x;
}

// Segments of at most SORT_TILE entries, a block each: segment b starts at starts[b] and
// holds lens[b] entries. Padded with the top key to a power of two, sorted in shared memory.
template <typename K> __device__ void sort_tile(K *adj, const u64 *starts, const u32 *lens) {
    __shared__ K s[SORT_TILE];
    u64 start = starts[blockIdx.x];
    u32 len = lens[blockIdx.x];
    for (u32 i = threadIdx.x; i < len; i += blockDim.x) s[i] = adj[start + i];
    block_sort(s, len, top_key<K>());
    for (u32 i = threadIdx.x; i < len; i += blockDim.x) adj[start + i] = s[i];
}

// One merge round over the long rows, whose entries are numbered 0..total in row order
// (row r's are flat[r]..flat[r + 1]): in each row, sorted runs of `width` merge pairwise
// into runs of 2 * width, from src (row r at src + src_base[r]) to dst (dst + dst_base[r]).
// A width at least the row's length copies it.
template <typename K>
__device__ void merge(const K *src, K *dst, const u64 *src_base, const u64 *dst_base,
                      const u64 *flat, u32 rows, u64 total, u64 width) {
    u64 pos = thread_index() * MERGE_ITEMS;
    if (pos >= total) return;
    u64 end = min(pos + MERGE_ITEMS, total);
    u32 lo = 0, hi = rows;  // flat[lo] <= pos < flat[hi]
    while (hi - lo > 1) {
        u32 mid = (lo + hi) / 2;
        if (flat[mid] <= pos) lo = mid; else hi = mid;
    }
    for (u32 r = lo; pos < end;) {
        while (pos >= flat[r + 1]) r++;
        u64 len = flat[r + 1] - flat[r], i = pos - flat[r];
        const K *a = src + src_base[r];
        K *d = dst + dst_base[r];
        u64 pair = i / (2 * width) * (2 * width);
        u64 la = min(width, len - pair), lb = min(2 * width, len - pair) - la;
        const K *b = a + pair + la;
        a += pair;
        // Merge path: the largest x (outputs before k taken from a) with a[x-1] <= b[k-x].
        u64 k = i - pair, xlo = k > lb ? k - lb : 0, xhi = min(k, la);
        while (xlo < xhi) {
            u64 x = (xlo + xhi + 1) / 2;
            if (a[x - 1] <= b[k - x]) xlo = x; else xhi = x - 1;
        }
        u64 x = xlo, y = k - xlo, stop = min(end - flat[r], pair + la + lb);
        for (; i < stop; i++) d[i] = y >= lb || (x < la && a[x] <= b[y]) ? a[x++] : b[y++];
        pos = flat[r] + i;
    }
}

// counts[r] = distinct ids in sorted row r, a warp per row.
template <typename K>
__device__ void unique_count(const K *adj, const u64 *offsets, u64 n, u64 *counts) {
    u64 r = thread_index() / WARP;
    if (r >= n) return;
    u64 start = offsets[r], end = offsets[r + 1];
    u32 kept = 0;
    for (u64 base = start; base < end; base += WARP) {
        u64 i = base + lane_id();
        bool keep = i < end && (i == start || !same_id(adj[i], adj[i - 1]));
        kept += __popc(__ballot_sync(FULL, keep));
    }
    if (lane_id() == 0) counts[r] = kept;
}

// The first key of each distinct id of sorted row r to out + fresh[r], a warp per row.
template <typename K>
__device__ void compact(const K *adj, const u64 *offsets, const u64 *fresh, u64 n, K *out) {
    u64 r = thread_index() / WARP;
    if (r >= n) return;
    u64 start = offsets[r], end = offsets[r + 1], at = fresh[r];
    for (u64 base = start; base < end; base += WARP) {
        u64 i = base + lane_id();
        bool keep = i < end && (i == start || !same_id(adj[i], adj[i - 1]));
        u32 mask = __ballot_sync(FULL, keep);
        if (keep) out[at + __popc(mask & lanes_before())] = adj[i];
        at += __popc(mask);
    }
}

// The entry points, for u32 ids (NAME) and u64 keys (NAME_64).
#define SORT_KERNELS(SUFFIX, K)                                                               \
    extern "C" __global__ void csr_sort_warp##SUFFIX(K *adj, const u64 *offsets,              \
                                                     const u32 *rows, u64 count) {            \
        sort_warp<K>(adj, offsets, rows, count);                                              \
    }                                                                                         \
    extern "C" __global__ void csr_sort_tile##SUFFIX(K *adj, const u64 *starts,               \
                                                     const u32 *lens) {                       \
        sort_tile<K>(adj, starts, lens);                                                      \
    }                                                                                         \
    extern "C" __global__ void csr_merge##SUFFIX(const K *src, K *dst, const u64 *src_base,   \
                                                 const u64 *dst_base, const u64 *flat,        \
                                                 u32 rows, u64 total, u64 width) {            \
        merge<K>(src, dst, src_base, dst_base, flat, rows, total, width);                     \
    }                                                                                         \
    extern "C" __global__ void csr_unique_count##SUFFIX(const K *adj, const u64 *offsets,     \
                                                        u64 n, u64 *counts) {                 \
        unique_count<K>(adj, offsets, n, counts);                                             \
    }                                                                                         \
    extern "C" __global__ void csr_compact##SUFFIX(const K *adj, const u64 *offsets,          \
                                                   const u64 *fresh, u64 n, K *out) {         \
        compact<K>(adj, offsets, fresh, n, out);                                              \
    }

SORT_KERNELS(, u32)
SORT_KERNELS(_64, u64)

// Row offsets from row lengths (src/graph/scan_gpu.rs).
SCAN_KERNELS(u64)
