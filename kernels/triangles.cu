// Triangle counting on the degree-oriented graph (host side and the algorithm's outline:
// src/analyze/triangles_gpu.rs). Each undirected edge is kept once, from its lower end to its
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
// Layout: offsets[n + 1] (u64) index adj (u32 vertex ids, n < 2^32); vertices[count] (u32)
// the bin's vertices; t[n] (u64) per-vertex triangle counts; total[1] (u64) triangles.

// The table: slots per block, so rows of up to HASH_SLOTS / 2 entries are hashed.
#define HASH_SLOTS 4096
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
            warp_add(&t[a[i]], 1);
            found++;
        }
    }
    return warp_sum(found);
}

// The end of the triangles of edge (u, v): `found` of them, known to every lane.
__device__ __forceinline__ void edge_done(u64 *t, u32 v, u64 found) {
    if (lane_id() == 0 && found) atomicAdd(&t[v], found);
}

extern "C" __global__ void triangles_warp(const u64 *offsets, const u32 *adj,
                                          const u32 *vertices, u64 count, u64 *t,
                                          u64 *total) {
    u64 warp = thread_index() / WARP;
    u64 mine = 0;
    if (warp < count) {
        u32 u = vertices[warp];
        const u32 *nu = adj + offsets[u];
        u64 du = offsets[u + 1] - offsets[u];
        for (u64 j = 0; j < du; j++) {
            u32 v = nu[j];
            u64 found = warp_intersect(nu, du, adj + offsets[v], offsets[v + 1] - offsets[v], t);
            edge_done(t, v, found);
            mine += found;
        }
        if (lane_id() == 0 && mine) atomicAdd(&t[u], mine);
    }
    const int index[1] = {0};
    const u64 value[1] = {lane_id() == 0 ? mine : 0};
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
            warp_add(&t[row[i]], 1);
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
            atomicAdd(&t[u], for_u);
            mine += for_u;
        }
        // The table is refilled for the next vertex only once every warp is done with it.
        __syncthreads();
    }
    const int index[1] = {0};
    const u64 value[1] = {mine};
    block_add(total, index, value);
}
