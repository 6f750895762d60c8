// Triangle counting on the degree-oriented graph (host side and the algorithm's outline:
// src/workloads/analyze/triangles_gpu.rs). Each undirected edge is kept once, from its lower end to its
// higher end in the order (degree, id), so every triangle a < b < c is found exactly once:
// at its edge (a, b), as the vertex c common to the out-rows N+(a) and N+(b). Out-rows are
// sorted by id and at most sqrt(2m) long.
//
// Work is binned by the out-degree of the row's vertex u, as in TRUST (Pandey et al., 2021):
//   triangles_warp:  one warp per vertex of the short bin; for each out-neighbour v the
//                    lanes stride over the shorter of N+(u), N+(v) and binary-search the other.
//   triangles_block: one block per vertex of the long bin; N+(u) goes into a shared-memory
//                    hash table (linear probing, load at most 1/2), one warp per out-neighbour
//                    v probes it with the lanes striding over N+(v). A row too long for the
//                    table is searched as in triangles_warp.
// Each triangle found adds one to t[] at all three corners (the common vertex through the
// prelude's warp-aggregated warp_add, the edge's two ends once per edge) and one to total[0].
//
// CORNERS 0 (a specialised build) counts the triangles alone, without t[]: the figure the
// spec's target and GAP's tc measure; the default build also counts the corners.
//
// Layout: offsets[n + 1] (u64) index adj (u32 vertex ids, n < 2^32); vertices[count] (u32)
// the bin's vertices; t[n] (u64) per-vertex triangle counts; total[1] (u64) triangles.

// The table: slots per block, so rows of up to HASH_SLOTS / 2 entries are hashed.
#define HASH_SLOTS 4096
#ifndef CORNERS
#define CORNERS 1
#endif
#define EMPTY_SLOT 0xffffffffu

// Whether the sorted row[0..len) holds w.
__device__ __forceinline__ bool row_holds(const u32 *row, u64 len, u32 w) {
    u64 lo = 0, hi = len;
    while (lo < hi) {
        u64 mid = (lo + hi) / 2;
        if (row[mid] < w) lo = mid + 1;
        else hi = mid;
    }
    return lo < len && row[lo] == w;
}

// |a ∩ b| for sorted rows, by a whole warp: lanes stride over the shorter row and search the
// longer; each common vertex gets its corner in t. Returns the count in every lane.
__device__ u64 warp_intersect(const u32 *a, u64 la, const u32 *b, u64 lb, u64 *t) {
    if (la > lb) {
        const u32 *r = a; a = b; b = r;
        u64 l = la; la = lb; lb = l;
    }
    u64 found = 0;
    for (u64 base = 0; base < la; base += WARP) {
        u64 i = base + lane_id();
        bool hit = i < la && row_holds(b, lb, a[i]);
        if (hit) {
            if (CORNERS) warp_add(&t[a[i]], 1);
            found++;
        }
    }
    return warp_sum(found);
}

// The end of the triangles of edge (u, v): `found` of them, known to every lane.
__device__ __forceinline__ void edge_done(u64 *t, u32 v, u64 found) {
    if (CORNERS && lane_id() == 0 && found) atomicAdd(&t[v], found);
}

// Short rows (out-degree below SHORT_ROW), a warp per vertex u: N+(u) is staged in the
// warp's slice of shared memory. Each out-neighbour v costs min(|N+(u)|, |N+(v)|) probes:
// the entries of the shorter row, each looked up in the other (in shared memory when that
// is N+(u), by binary search in global memory when it is N+(v)). The lanes take the probes
// of all of u's out-neighbours together, 32 at a time (a warp prefix sum of the costs tells
// each lane which v its probe belongs to), so no lane idles on a short row.
#define SHORT_ROW 128 // = BLOCK_DEGREE in src/workloads/analyze/triangles_gpu.rs
#define WARPS_PER_BLOCK 8 // THREADS / WARP (src/device/kernel.rs)
extern "C" __global__ void triangles_warp(const u64 *offsets, const u32 *adj,
                                          const u32 *vertices, u64 count, u64 *t,
                                          u64 *total) {
    __shared__ u32 rows[WARPS_PER_BLOCK][SHORT_ROW];
    __shared__ u64 row_start[WARPS_PER_BLOCK][WARP];
    __shared__ u32 pairs_before[WARPS_PER_BLOCK][WARP];
    __shared__ u32 row_vertex[WARPS_PER_BLOCK][WARP];
    __shared__ u32 row_len[WARPS_PER_BLOCK][WARP];
    u64 warp = thread_index() / WARP;
    u32 slot = threadIdx.x / WARP, lane = lane_id();
    u64 mine = 0;
    if (warp < count) {
        u32 u = vertices[warp];
        u32 du = (u32)(offsets[u + 1] - offsets[u]);
        u32 *nu = rows[slot];
        for (u32 i = lane; i < du; i += WARP) nu[i] = adj[offsets[u] + i];
        for (u32 j0 = 0; j0 < du; j0 += WARP) {
            u32 j = j0 + lane;
            u32 v = j < du ? nu[j] : 0;
            u64 start = j < du ? offsets[v] : 0;
            u32 len = j < du ? (u32)(offsets[v + 1] - start) : 0;
            u32 cost = min(len, du);
            u32 incl = cost;
            for (u32 d = 1; d < WARP; d *= 2) {
                u32 x = __shfl_up_sync(FULL, incl, d);
                if (lane >= d) incl += x;
            }
            u32 pairs = __shfl_sync(FULL, incl, WARP - 1);
            row_start[slot][lane] = start;
            pairs_before[slot][lane] = incl - cost;
            row_vertex[slot][lane] = v;
            row_len[slot][lane] = len;
            __syncwarp();
            u32 rows_here = min(du - j0, (u32)WARP);
            for (u32 p = lane; p < pairs; p += WARP) {
                // The last row k whose pairs start at or before p (rows may be empty).
                u32 lo = 0, hi = rows_here - 1;
                while (lo < hi) {
                    u32 mid = (lo + hi + 1) / 2;
                    if (pairs_before[slot][mid] <= p) lo = mid;
                    else hi = mid - 1;
                }
                u32 at = p - pairs_before[slot][lo], lv = row_len[slot][lo];
                const u32 *nv = adj + row_start[slot][lo];
                // The shorter row's entry, and whether the longer row holds it.
                u32 w = lv <= du ? nv[at] : nu[at];
                bool hit = lv <= du ? row_holds(nu, du, w) : row_holds(nv, lv, w);
                if (hit) {
                    mine++;
                    if (CORNERS) {
                        warp_add(&t[w], 1);
                        warp_add(&t[row_vertex[slot][lo]], 1);
                    }
                }
            }
            __syncwarp();
        }
        u64 found = warp_sum(mine);
        if (CORNERS && lane == 0 && found) atomicAdd(&t[u], found);
    }
    const int index[1] = {0};
    const u64 value[1] = {mine};
    block_add(total, index, value);
}

__device__ __forceinline__ u32 slot_of(u32 w, u32 mask) {
    u32 h = w * 0x9e3779b1u;
    return (h ^ (h >> 15)) & mask;
}

// N+(u) into the block's table of mask + 1 slots. All threads of the block must call.
__device__ void fill_table(u32 *table, u32 mask, const u32 *nu, u64 du) {
    for (u32 s = threadIdx.x; s <= mask; s += blockDim.x) table[s] = EMPTY_SLOT;
    __syncthreads();
    for (u64 i = threadIdx.x; i < du; i += blockDim.x) {
        u32 s = slot_of(nu[i], mask);
        while (atomicCAS(&table[s], EMPTY_SLOT, nu[i]) != EMPTY_SLOT) s = (s + 1) & mask;
    }
    __syncthreads();
}

__device__ __forceinline__ bool table_holds(const u32 *table, u32 mask, u32 w) {
    for (u32 s = slot_of(w, mask);; s = (s + 1) & mask) {
        u32 x = table[s];
        if (x == w) return true;
        if (x == EMPTY_SLOT) return false;
    }
}

// |N+(u) ∩ row| by a whole warp probing the table of N+(u); as warp_intersect otherwise.
__device__ u64 warp_probe(const u32 *table, u32 mask, const u32 *row, u64 len, u64 *t) {
    u64 found = 0;
    for (u64 base = 0; base < len; base += WARP) {
        u64 i = base + lane_id();
        bool hit = i < len && table_holds(table, mask, row[i]);
        if (hit) {
            if (CORNERS) warp_add(&t[row[i]], 1);
            found++;
        }
    }
    return warp_sum(found);
}

// Slots for a row of `len` entries: a power of two at least twice as many, at least a warp.
__device__ __forceinline__ u32 table_slots(u64 len) {
    u32 slots = WARP;
    while (slots < 2 * len) slots *= 2;
    return slots;
}

extern "C" __global__ void triangles_block(const u64 *offsets, const u32 *adj,
                                           const u32 *vertices, u64 count, u64 *t,
                                           u64 *total) {
    __shared__ u32 table[HASH_SLOTS];
    u64 mine = 0;
    for (u64 k = blockIdx.x; k < count; k += gridDim.x) {
        u32 u = vertices[k];
        const u32 *nu = adj + offsets[u];
        u64 du = offsets[u + 1] - offsets[u];
        bool hashed = 2 * du <= HASH_SLOTS;
        u32 mask = hashed ? table_slots(du) - 1 : 0;
        if (hashed) fill_table(table, mask, nu, du);
        u64 for_u = 0;
        for (u64 j = threadIdx.x / WARP; j < du; j += blockDim.x / WARP) {
            u32 v = nu[j];
            const u32 *nv = adj + offsets[v];
            u64 dv = offsets[v + 1] - offsets[v];
            u64 found = hashed ? warp_probe(table, mask, nv, dv, t)
                               : warp_intersect(nu, du, nv, dv, t);
            edge_done(t, v, found);
            for_u += found;
        }
        if (lane_id() == 0 && for_u) {
            if (CORNERS) atomicAdd(&t[u], for_u);
            mine += for_u;
        }
        // The table is refilled for the next vertex only once every warp is done with it.
        __syncthreads();
    }
    const int index[1] = {0};
    const u64 value[1] = {mine};
    block_add(total, index, value);
}
