// Triangle counting on the degree-oriented graph (the work's layout:
// src/workloads/analyze/triangle_plan.rs; the host side: triangles_gpu.rs). Each undirected
// edge is kept once, from its lower end to its higher end in the order (degree, id), so
// every triangle a < b < c is found exactly once: at its edge (a, b), as the vertex c common
// to the out-rows N+(a) and N+(b). Out-rows are sorted by id and at most sqrt(2m) long.
//
// The host gives each such edge to the endpoint with the longer out-row, its owner; the
// other end is one of the owner's partners, and items are runs of one owner's partners.
// An item costs at most the sum of its partners' out-degrees in probes: each entry w of the
// partner's row is looked up in the owner's row, kept in shared memory, so every edge
// costs at most min(|N+(u)|, |N+(v)|) probes of O(1) each; fewer, as a partner's entries
// below the owner row's first are skipped (partner_row).
//   triangles_warp:  a warp per item of an owner with at most SHORT_ROW out-neighbours; the
//                    row is staged in the warp's slice of shared memory and binary-searched.
//   triangles_block: a block per item of a longer owner; its row goes into a bitmap over
//                    the range of its ids in shared memory where the range fits (one
//                    shared load a probe, no probing chain: the relabelled ids of a hub's
//                    out-row lie among the few ids above it), else into a shared-memory
//                    hash table (linear probing, load at most 1/2, 1/8 where it fits). A
//                    row too long for the table is binary-searched in global memory.
// In both, the item's threads (the warp, the block) take the probes of as many partners
// together (a prefix sum of the row lengths tells each thread which partner its probe
// belongs to), so no thread idles on a short row and consecutive threads read consecutive
// entries; each thread loads IN_FLIGHT entries before it looks any up.
//
// t_v without an atomic per triangle: a hit adds one to the owner-row entry's counter in
// shared memory and to the partner's counter in shared memory; the counters go to t[] once
// per item (entries), once per partner (partners) and once per warp (the owner). The
// kernels also count the triangles themselves, which checks the corners: their sum must be
// three times that count.
//
// CORNERS 0 (a specialised build) counts the triangles alone, without t[]: the figure the
// spec's target and GAP's tc measure; its hash table is then twice as large.
//
// Layout: offsets[n + 1] (u64) index adj (u32 vertex ids, n < 2^32); partners (u32) the
// owners' partner lists; owners[count] (u32) and spans[2 count] (u64: begin, end in
// partners) the bin's items; t[n] (u64) per-vertex triangle counts; total[1] (u64) triangles.

#ifndef CORNERS
#define CORNERS 1
#endif
#define SHORT_ROW 128     // = SHORT_ROW in src/workloads/analyze/triangle_plan.rs
#define WARPS_PER_BLOCK 8 // THREADS / WARP (src/device/kernel.rs)
// Hash slots per block: rows of up to TABLE_SLOTS / 2 entries are hashed (the host
// emulation, tests/emulate/triangle_items.cpp, sets it smaller to reach the other path).
#ifndef TABLE_SLOTS
#define TABLE_SLOTS (CORNERS ? 4096 : 8192)
#endif
// The block's shared table, in words: the hash table's keys (and with the corners a hit
// counter a slot), or a row's bitmap (with the corners, after it each word's first entry and
// a hit counter an entry).
#define SPACE_WORDS (CORNERS ? 2 * TABLE_SLOTS : TABLE_SLOTS)
// Bitmap words at most (the host emulation sets it smaller to reach the hash table).
#ifndef BITMAP_WORDS
#define BITMAP_WORDS SPACE_WORDS
#endif
#define EMPTY_SLOT 0xffffffffu
// Entries a thread loads before it looks any up (probe_partners): latency hidden, as the
// block kernel fits only 5-6 blocks a multiprocessor (4: 0.149 s at SCALE 24 on an H200
// with the smaller block below, against 0.182 s with 2 and the larger block).
#define IN_FLIGHT 4

// The threads that probe one item's partners together: a warp (the warp kernel's items) or
// the whole block (the block kernel's, so that an item of a few long partner rows still
// keeps every warp busy). SIZE partners are taken at a time, one a thread.
struct WarpTeam {
    static constexpr u32 SIZE = WARP;
    __device__ u32 rank() const { return lane_id(); }
    __device__ void sync() const { __syncwarp(); }
    // The exclusive prefix sum of `len` over the team, and its total in every thread.
    __device__ u32 before(u32 len, u32 &total) const {
        u32 incl = len;
        for (u32 d = 1; d < WARP; d *= 2) {
            u32 x = __shfl_up_sync(FULL, incl, d);
            if (lane_id() >= d) incl += x;
        }
        total = __shfl_sync(FULL, incl, WARP - 1);
        return incl - len;
    }
};

struct BlockTeam {
    static constexpr u32 SIZE = WARPS_PER_BLOCK * WARP;
    u32 *warp_totals; // WARPS_PER_BLOCK of them, in shared memory
    __device__ u32 rank() const { return threadIdx.x; }
    __device__ void sync() const { __syncthreads(); }
    __device__ u32 before(u32 len, u32 &total) const {
        u32 in_warp = WarpTeam().before(len, total);
        if (lane_id() == 0) warp_totals[threadIdx.x / WARP] = total;
        __syncthreads();
        u32 below = 0;
        total = 0;
        for (u32 w = 0; w < WARPS_PER_BLOCK; w++) {
            if (w < threadIdx.x / WARP) below += warp_totals[w];
            total += warp_totals[w];
        }
        return below + in_warp;
    }
};

// A team's view of the partners it probes at a time.
template <u32 SIZE>
struct Partners {
    u64 base[SIZE];   // where each partner's row starts in adj, less `before` (mod 2^64)
    u32 before[SIZE]; // probes of the partners before it (exclusive prefix sum)
    // Only with the corners: without them the block kernel's 36 KB fit six blocks a
    // multiprocessor (H100/H200: 228 KB, 1 KB reserved a block), with them five.
    u32 vertex[CORNERS ? SIZE : 1];
    u32 found[CORNERS ? SIZE : 1]; // triangles of the edge (owner, partner) so far
};

// Position of w in the sorted row[0..len), or -1.
__device__ __forceinline__ int find_in_row(const u32 *row, u32 len, u32 w) {
    u32 lo = 0, hi = len;
    while (lo < hi) {
        u32 mid = (lo + hi) / 2;
        if (row[mid] < w) lo = mid + 1;
        else hi = mid;
    }
    return lo < len && row[lo] == w ? (int)lo : -1;
}

// The last of the partners before[0..here) (ascending) whose probes start at or before q,
// from k on (before[k] <= q): a gallop, as a thread's next probe is mostly in the same
// partner or the next (a binary search over the whole group cost eight dependent
// shared-memory loads a probe).
__device__ __forceinline__ u32 partner_of(const u32 *before, u32 here, u32 k, u32 q) {
    if (k + 1 >= here || before[k + 1] > q) return k;
    u32 lo = k + 1, step = 1, hi = lo + 1;
    while (hi < here && before[hi] <= q) {
        lo = hi;
        step *= 2;
        hi = lo + step;
    }
    hi = min(hi, here);
    while (hi - lo > 1) { // before[lo] <= q < before[hi] (or hi = here)
        u32 mid = (lo + hi) / 2;
        if (before[mid] <= q) lo = mid;
        else hi = mid;
    }
    return lo;
}

// The first position in adj[lo..hi) (sorted) whose entry is at least w (hi if none).
__device__ __forceinline__ u64 first_at_least(const u32 *adj, u64 lo, u64 hi, u32 w) {
    while (lo < hi) {
        u64 mid = (lo + hi) / 2;
        if (adj[mid] < w) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// The part of a partner's row that can meet the owner's, adj[start, start + len): from its
// first entry at least `least`, the owner row's first. Entries below it cannot be in the
// sorted owner row; the owner, the endpoint with the longer out-row, mostly has the
// larger id (the ids are ordered by degree), so its row starts above many of the partner's
// entries: the search saves a third of the block bin's probes at Kronecker SCALE 22 (31%;
// 29% at SCALE 20, on the host).
__device__ __forceinline__ u64 partner_row(const u64 *offsets, const u32 *adj, u32 p, u32 least,
                                           u32 &len) {
    u64 start = offsets[p], stop = offsets[p + 1];
    if (start < stop && adj[start] < least) start = first_at_least(adj, start + 1, stop, least);
    len = (u32)(stop - start);
    return start;
}

// The probes of partners[begin..end) by `team`, Team::SIZE partners at a time, from the
// owner row's first entry `least` on. `lookup(w)` tells whether the owner's row holds w (and
// counts w's corner). Adds each edge's triangles
// to t[partner]; returns the thread's hits. Every thread of the team must call.
template <class Team, class Lookup>
__device__ u64 probe_partners(const u64 *offsets, const u32 *adj, const u32 *partners,
                              u64 begin, u64 end, u32 least, const Team &team,
                              Partners<Team::SIZE> &g, const Lookup &lookup, u64 *t) {
    u32 me = team.rank();
    u64 mine = 0;
    for (u64 j0 = begin; j0 < end; j0 += Team::SIZE) {
        u64 j = j0 + me;
        u32 p = j < end ? partners[j] : 0;
        u32 len = 0;
        u64 start = j < end ? partner_row(offsets, adj, p, least, len) : 0;
        u32 probes;
        u32 before = team.before(len, probes);
        g.before[me] = before;
        g.base[me] = start - before;
        if (CORNERS) {
            g.vertex[me] = p;
            g.found[me] = 0;
        }
        team.sync();
        u32 here = (u32)min(end - j0, (u64)Team::SIZE);
        // IN_FLIGHT probes a step, every entry loaded before any is looked up. k, the last
        // partner whose probes start at or before q, only moves on.
        u32 k = 0;
        for (u32 q0 = me; q0 < probes; q0 += IN_FLIGHT * Team::SIZE) {
            u32 ks[IN_FLIGHT], ws[IN_FLIGHT];
#pragma unroll
            for (u32 i = 0; i < IN_FLIGHT; i++) {
                u32 q = q0 + i * Team::SIZE;
                if (q < probes) {
                    k = partner_of(g.before, here, k, q);
                    ks[i] = k;
                    ws[i] = adj[g.base[k] + q];
                }
            }
#pragma unroll
            for (u32 i = 0; i < IN_FLIGHT; i++) {
                if (q0 + i * Team::SIZE < probes && lookup(ws[i])) {
                    mine++;
                    if (CORNERS) atomicAdd(&g.found[ks[i]], 1u);
                }
            }
        }
        team.sync();
        if (CORNERS && me < here && g.found[me]) atomicAdd(&t[g.vertex[me]], (u64)g.found[me]);
    }
    return mine;
}

// The owner's row staged in shared memory (a warp's slice), with a hit counter per entry.
struct StagedRow {
    const u32 *row;
    u32 len;
    u32 *hits;
    __device__ bool operator()(u32 w) const {
        int at = find_in_row(row, len, w);
        if (at < 0) return false;
        if (CORNERS) atomicAdd(&hits[at], 1u);
        return true;
    }
};

// Items of owners with short rows, a warp each.
extern "C" __global__ void triangles_warp(const u64 *offsets, const u32 *adj,
                                          const u32 *partners, const u32 *owners,
                                          const u64 *spans, u64 count, u64 *t, u64 *total) {
    __shared__ u32 rows[WARPS_PER_BLOCK][SHORT_ROW];
    __shared__ u32 hits[WARPS_PER_BLOCK][SHORT_ROW];
    __shared__ Partners<WARP> groups[WARPS_PER_BLOCK];
    u64 item = thread_index() / WARP;
    u32 slot = threadIdx.x / WARP, lane = lane_id();
    u64 mine = 0;
    if (item < count) {
        u32 o = owners[item];
        u64 first = offsets[o];
        u32 len = (u32)(offsets[o + 1] - first);
        for (u32 i = lane; i < len; i += WARP) {
            rows[slot][i] = adj[first + i];
            hits[slot][i] = 0;
        }
        __syncwarp();
        StagedRow lookup{rows[slot], len, hits[slot]};
        mine = probe_partners(offsets, adj, partners, spans[2 * item], spans[2 * item + 1],
                              rows[slot][0], WarpTeam(), groups[slot], lookup, t);
        __syncwarp();
        if (CORNERS) {
            for (u32 i = lane; i < len; i += WARP)
                if (hits[slot][i]) atomicAdd(&t[rows[slot][i]], (u64)hits[slot][i]);
            u64 found = warp_sum(mine);
            if (lane == 0 && found) atomicAdd(&t[o], found);
        }
    }
    const int index[1] = {0};
    const u64 value[1] = {mine};
    block_add(total, index, value);
}

__device__ __forceinline__ u32 slot_of(u32 w, u32 mask) {
    u32 h = w * 0x9e3779b1u;
    return (h ^ (h >> 15)) & mask;
}

// The owner's row in the block's hash table of mask + 1 slots, a hit counter per slot.
struct HashedRow {
    const u32 *keys;
    u32 mask;
    u32 *hits;
    __device__ bool operator()(u32 w) const {
        for (u32 s = slot_of(w, mask);; s = (s + 1) & mask) {
            u32 x = keys[s];
            if (x == w) {
                if (CORNERS) atomicAdd(&hits[s], 1u);
                return true;
            }
            if (x == EMPTY_SLOT) return false;
        }
    }
};

// The owner's row in global memory (too long for the table); corners go straight to t[].
struct GlobalRow {
    const u32 *row;
    u32 len;
    u64 *t;
    __device__ bool operator()(u32 w) const {
        int at = find_in_row(row, len, w);
        if (at < 0) return false;
        if (CORNERS) warp_add(&t[w], 1);
        return true;
    }
};

// The owner's row as a bitmap over its ids' range [lo, lo + range): bit w - lo is set for each
// entry w. With the corners, the entry's index (for its hit counter) is the index of its
// word's first entry plus the set bits below it in the word.
struct BitmapRow {
    const u32 *bits;
    u32 lo, range;
    const unsigned short *first;
    u32 *hits;
    __device__ bool operator()(u32 w) const {
        u32 x = w - lo; // ids below lo wrap past the range
        if (x >= range) return false;
        u32 word = bits[x / 32], below = (1u << (x % 32)) - 1;
        if (!((word >> (x % 32)) & 1)) return false;
        if (CORNERS) atomicAdd(&hits[first[x / 32] + __popc(word & below)], 1u);
        return true;
    }
};

// Whether a row of `len` entries whose ids span `range` fits the shared table as a bitmap.
__device__ __forceinline__ bool bitmap_fits(u32 range, u32 len) {
    u32 words = (range + 31) / 32;
    if (words > BITMAP_WORDS) return false;
    // With the corners: the words, their first entries (16 bits each) and the hit counters.
    return !CORNERS || words + (words + 1) / 2 + len <= SPACE_WORDS;
}

// The sorted row into a bitmap of `words` words at `bits` (with the corners: each word's first
// entry into `first`, hit counters cleared). All threads of the block must call.
__device__ void fill_bitmap(u32 *bits, u32 words, unsigned short *first, u32 *hits,
                            const u32 *row, u32 len) {
    for (u32 i = threadIdx.x; i < words; i += blockDim.x) bits[i] = 0;
    __syncthreads();
    u32 lo = row[0];
    for (u32 i = threadIdx.x; i < len; i += blockDim.x) {
        u32 x = row[i] - lo;
        atomicOr(&bits[x / 32], 1u << (x % 32));
        if (CORNERS) {
            hits[i] = 0;
            // Words without entries are never read: their bits are all clear.
            if (i == 0 || (row[i - 1] - lo) / 32 != x / 32) first[x / 32] = (unsigned short)i;
        }
    }
    __syncthreads();
}

// Slots for a row of `len` entries (at most TABLE_SLOTS / 2): a power of two at least eight
// times as many where the table has them (most probes miss, and a miss ends at the first
// empty slot), else TABLE_SLOTS; at least a warp.
__device__ __forceinline__ u32 table_slots(u32 len) {
    u32 slots = WARP;
    while (slots < 8 * len && slots < TABLE_SLOTS) slots *= 2;
    return slots;
}

// The row into keys[0..=mask] (hits cleared). All threads of the block must call.
__device__ void fill_table(u32 *keys, u32 *hits, u32 mask, const u32 *row, u32 len) {
    for (u32 s = threadIdx.x; s <= mask; s += blockDim.x) {
        keys[s] = EMPTY_SLOT;
        if (CORNERS) hits[s] = 0;
    }
    __syncthreads();
    for (u32 i = threadIdx.x; i < len; i += blockDim.x) {
        u32 s = slot_of(row[i], mask);
        while (atomicCAS(&keys[s], EMPTY_SLOT, row[i]) != EMPTY_SLOT) s = (s + 1) & mask;
    }
    __syncthreads();
}

// Items of owners with long rows, a block each (a grid-stride loop over the items).
extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * WARP, 6)
triangles_block(const u64 *offsets, const u32 *adj, const u32 *partners, const u32 *owners,
                const u64 *spans, u64 count, u64 *t, u64 *total) {
    __shared__ u32 space[SPACE_WORDS];
    __shared__ Partners<BlockTeam::SIZE> group;
    __shared__ u32 warp_totals[WARPS_PER_BLOCK];
    BlockTeam team{warp_totals};
    u64 mine = 0;
    for (u64 item = blockIdx.x; item < count; item += gridDim.x) {
        u32 o = owners[item];
        const u32 *row = adj + offsets[o];
        u32 len = (u32)(offsets[o + 1] - offsets[o]);
        u64 begin = spans[2 * item], end = spans[2 * item + 1];
        u32 range = row[len - 1] - row[0] + 1; // rows are sorted
        bool bitmap = bitmap_fits(range, len);
        bool hashed = !bitmap && 2 * len <= TABLE_SLOTS;
        u32 mask = hashed ? table_slots(len) - 1 : 0;
        u32 words = (range + 31) / 32;
        u32 *keys = space, *hits = bitmap ? space + words + (words + 1) / 2 : space + TABLE_SLOTS;
        u64 for_item;
        if (bitmap) {
            auto first = (unsigned short *)(space + words);
            fill_bitmap(space, words, first, hits, row, len);
            BitmapRow lookup{space, row[0], range, first, hits};
            for_item = probe_partners(offsets, adj, partners, begin, end, row[0], team, group,
                                      lookup, t);
        } else if (hashed) {
            fill_table(keys, hits, mask, row, len);
            HashedRow lookup{keys, mask, hits};
            for_item = probe_partners(offsets, adj, partners, begin, end, row[0], team, group,
                                      lookup, t);
        } else {
            GlobalRow lookup{row, len, t};
            for_item = probe_partners(offsets, adj, partners, begin, end, row[0], team, group,
                                      lookup, t);
        }
        mine += for_item;
        if (CORNERS) {
            u64 found = warp_sum(for_item);
            if (lane_id() == 0 && found) atomicAdd(&t[o], found);
        }
        // Every warp's hits are in before they are flushed, and the table is refilled for the
        // next item only once they are.
        __syncthreads();
        if (CORNERS && hashed)
            for (u32 s = threadIdx.x; s <= mask; s += blockDim.x)
                if (hits[s]) atomicAdd(&t[keys[s]], (u64)hits[s]);
        if (CORNERS && bitmap)
            for (u32 i = threadIdx.x; i < len; i += blockDim.x)
                if (hits[i]) atomicAdd(&t[row[i]], (u64)hits[i]);
        __syncthreads();
    }
    const int index[1] = {0};
    const u64 value[1] = {mine};
    block_add(total, index, value);
}
