// Graph500 BFS on one rank's rows of the 1D-partitioned CSR (see src/workloads/bfs/search.rs for the
// algorithm and src/workloads/bfs/gpu.rs for the host side). Compiled at start by NVRTC.
//
// Layout: offsets[local_n + 1] (u64) index adj (u32 global neighbour ids: the GPU path needs
// N <= 2^32); parent[local_n] (i64, -1 = unvisited); frontier bitmaps as u64 words, bit l of
// word l/64 for local vertex l (global bitmaps: bit v for global vertex v); queues of local
// ids (u32). Pairs (vertex, parent) for other ranks travel packed in one u64, vertex in the
// high half (both ids are below 2^32), and are put into runs by owner rank by
// kernels/exchange.cu. counters: [0] next frontier vertices, [1] their edges, [2] entries
// inspected, [3] remote pairs written, [4] heavy frontier vertices.
//
// Counters are summed per block in shared memory and added to global memory once per block:
// one global atomic per warp on the same address serialises at L2 and cost more than the
// scans themselves at SCALE 26.

__device__ __forceinline__ bool claim(i64 *parent, u64 l, u64 p) {
    if (parent[l] != -1) return false;
    return atomicCAS((u64 *)&parent[l], (u64)-1LL, p) == (u64)-1LL;
}

__device__ __forceinline__ void push_next(bool take, u64 l, u32 *next_queue, u64 *tail) {
    u64 at = warp_slot(take, tail);
    if (take) next_queue[at] = (u32)l;
}

// depth[local_n] (i32, -1 = unreached): the level at which the search reached each own
// vertex, the validator's witness (src/workloads/bfs/validate_gpu.rs).
extern "C" __global__ void bfs_start(i64 *parent, i32 *depth, u64 local_n, i64 root_local,
                                     u64 root) {
    u64 i = thread_index();
    if (i >= local_n) return;
    parent[i] = (i64)i == root_local ? (i64)root : -1;
    depth[i] = (i64)i == root_local ? 0 : -1;
}

// The depth of the frontier that has just become current (a queue of local ids, or bits).
extern "C" __global__ void bfs_depth_queue(const u32 *queue, u64 len, i32 *depth, i32 level) {
    u64 i = thread_index();
    if (i < len) depth[queue[i]] = level;
}

// A thread per word, each warp walking its 32 words together: a non-zero word's vertices are
// written by the warp's lanes, a line at a time (a thread writing its own word's vertices
// wrote 64 lines apart and cost up to a millisecond on the middle levels' frontiers of 2.5e7
// vertices at SCALE 26; a thread per vertex cost 0.1 ms on the sparse ones after them).
extern "C" __global__ void bfs_depth_bits(const u64 *bits, u64 words, u64 local_n, i32 *depth,
                                          i32 level) {
    u64 w = thread_index();
    u64 mine = w < words ? bits[w] : 0;
    u64 first = w / WARP * WARP;
    for (int j = 0; j < WARP; j++) {
        u64 word = __shfl_sync(FULL, mine, j);
        if (!word) continue;
        for (int half = 0; half < 64; half += WARP) {
            u64 l = (first + j) * 64 + half + lane_id();
            if ((word >> (half + lane_id())) & 1 && l < local_n) depth[l] = level;
        }
    }
}

// True for the one thread that first marks global vertex v in `sent` during this search.
__device__ __forceinline__ bool first_send(u64 *sent, u64 v) {
    u64 bit = 1ULL << (v % 64);
    if (sent[v / 64] & bit) return false;
    return !(atomicOr(&sent[v / 64], bit) & bit);
}

// One neighbour v of frontier vertex ug, where `on` (every lane of the warp calls, `on` or
// not, as the ballots and matches below need the whole warp): claim it if local, else put the
// pair in the run of v's owner unless v was already sent in this search (its owner has
// claimed it, or will with the parent sent first: one parent per vertex is all a search
// needs). The runs lie in `remote` in rank order without `me`, `run_capacity` pairs each, as
// the exchange sends them (no bucketing pass); counters[5 + owner] counts each run, the lanes
// of a warp with the same owner sharing one atomic.
__device__ __forceinline__ void visit(bool on, u64 v, u64 ug, u64 first, u64 local_n,
                                      i64 *parent, const u64 *offsets, u32 *next_queue,
                                      u64 *counters, u64 *remote, u64 run_capacity, u64 block,
                                      u64 me, u64 *sent, u64 &edges) {
    u64 l = v - first;  // wraps for v < first
    bool local = on && l < local_n;
    bool took = local && claim(parent, l, ug);
    if (took) edges += offsets[l + 1] - offsets[l];
    push_next(took, l, next_queue, &counters[0]);
    bool send = on && !local && first_send(sent, v);
    u64 owner = send ? v / block : ~0ULL;
    u32 same = __match_any_sync(FULL, owner);
    int leader = __ffs(same) - 1;
    u64 base = 0;
    if (send && lane_id() == leader) base = atomicAdd(&counters[5 + owner], (u64)__popc(same));
    base = __shfl_sync(FULL, base, leader);
    u64 at = base + __popc(same & lanes_before());
    u64 run = owner - (owner > me);
    if (send && at < run_capacity) remote[run * run_capacity + at] = v << 32 | ug;
}

// The rows of the frontier queue, `per_warp` queue entries (1, 2, 4, ... 32) per warp step,
// a grid-stride loop. With more than 1 (long queues): rows shorter than a warp a lane each,
// the lanes stepping together, and longer ones the whole warp, one row after another. With 1
// (queues no longer than the grid's warps): every row the whole warp, as a warp then has no
// other work and a row's entries must not wait for another row's. Rows of `heavy_degree` or
// more go to the heavy list (counters[4]) instead, for scan_heavy_rows. visit(on, v, u, edges) for
// each neighbour v of row u, by every lane at once (`on` where the lane has an entry). Adds
// the entries read to `inspected`. A warp per entry left 31 lanes idle on the long queues of
// low-degree vertices of the last levels, and its per-warp atomics cost more than the scan.
template <typename Visit>
__device__ __forceinline__ void scan_rows(const u64 *offsets, const u32 *adj, const u32 *queue,
                                          u64 queue_len, u32 *heavy, u64 *counters,
                                          u64 &edges, u64 &inspected, u64 per_warp,
                                          u64 heavy_degree, Visit visit) {
    u64 step = grid_threads() / WARP * per_warp;
    u64 lane_rows = per_warp > 1 ? WARP : 1;  // rows shorter than this go a lane each
    for (u64 base = thread_index() / WARP * per_warp; base < queue_len; base += step) {
        u64 k = base + lane_id();
        bool has = lane_id() < per_warp && k < queue_len;
        u64 u = has ? queue[k] : 0;
        u64 begin = has ? offsets[u] : 0;
        u64 degree = has ? offsets[u + 1] - begin : 0;
        bool is_heavy = degree >= heavy_degree;
        if (is_heavy) heavy[atomicAdd(&counters[4], 1ULL)] = (u32)u;
        else inspected += degree;
        u64 short_row = degree < lane_rows ? degree : 0;
        for (u64 i = 0; __ballot_sync(FULL, i < short_row); i++)
            visit(i < short_row, i < short_row ? adj[begin + i] : 0, u, edges);
        u32 longer = __ballot_sync(FULL, degree >= lane_rows && !is_heavy);
        for (; longer; longer &= longer - 1) {
            int owner = __ffs(longer) - 1;
            u64 row = __shfl_sync(FULL, u, owner);
            u64 from = __shfl_sync(FULL, begin, owner);
            u64 end = from + __shfl_sync(FULL, degree, owner);
            for (u64 e = from + lane_id(); e - lane_id() < end; e += WARP)
                visit(e < end, e < end ? adj[e] : 0, row, edges);
        }
    }
}

// The rows of the heavy list, each spread over every thread of the grid.
template <typename Visit>
__device__ __forceinline__ void scan_heavy_rows(const u64 *offsets, const u32 *adj,
                                                const u32 *heavy, u64 *counters, u64 &edges,
                                                u64 &inspected, Visit visit) {
    u64 heavy_count = counters[4];
    u64 stride = grid_threads();
    for (u64 h = 0; h < heavy_count; h++) {
        u64 u = heavy[h];
        u64 begin = offsets[u], end = offsets[u + 1];
        if (blockIdx.x == 0 && threadIdx.x == 0) inspected += end - begin;
        // Whole warps step together so the visits' ballots and matches see every lane.
        for (u64 base = begin + thread_index() / WARP * WARP; base < end; base += stride) {
            u64 e = base + lane_id();
            visit(e < end, e < end ? adj[e] : 0, u, edges);
        }
    }
}

// The top-down scans (1D and 2D, light and heavy) compiled to fit SCAN_MIN_BLOCKS blocks of 256
// threads a multiprocessor, the registers capped to match, where the measurement switch
// TESSERA_BFS_MIN_BLOCKS defines it (src/workloads/bfs/gpu.rs `scan_kernel`); else as the
// compiler chooses (bfs_top_down takes 48 registers a thread: 5 blocks).
#ifdef SCAN_MIN_BLOCKS
#define SCAN_BOUNDS __launch_bounds__(256, SCAN_MIN_BLOCKS)
#else
#define SCAN_BOUNDS
#endif

// Top-down: the rows of the frontier queue (local ids), heavy ones left to
// bfs_top_down_heavy.
extern "C" __global__ void SCAN_BOUNDS bfs_top_down(const u64 *offsets, const u32 *adj, i64 *parent,
                                        const u32 *queue, u64 queue_len, u64 first,
                                        u64 local_n, u32 *next_queue, u64 *counters,
                                        u64 *remote, u64 run_capacity, u64 block, u64 me,
                                        u64 *sent, u32 *heavy, u64 per_warp,
                                        u64 heavy_degree) {
    u64 edges = 0, inspected = 0;
    scan_rows(offsets, adj, queue, queue_len, heavy, counters, edges, inspected, per_warp,
              heavy_degree, [&](bool on, u64 v, u64 u, u64 &edges) {
                  visit(on, v, first + u, first, local_n, parent, offsets, next_queue,
                        counters, remote, run_capacity, block, me, sent, edges);
              });
    const int index[2] = {1, 2};
    u64 value[2] = {edges, inspected};
    block_add(counters, index, value);
}

// The heavy rows bfs_top_down left (its arguments, so that one argument list serves both;
// the queue, per_warp and heavy_degree are not read).
extern "C" __global__ void SCAN_BOUNDS bfs_top_down_heavy(const u64 *offsets, const u32 *adj, i64 *parent,
                                              const u32 *, u64, u64 first, u64 local_n,
                                              u32 *next_queue, u64 *counters, u64 *remote,
                                              u64 run_capacity, u64 block, u64 me, u64 *sent,
                                              const u32 *heavy, u64, u64) {
    u64 edges = 0, inspected = 0;
    scan_heavy_rows(offsets, adj, heavy, counters, edges, inspected,
                    [&](bool on, u64 v, u64 u, u64 &edges) {
                        visit(on, v, first + u, first, local_n, parent, offsets, next_queue,
                              counters, remote, run_capacity, block, me, sent, edges);
                    });
    const int index[2] = {1, 2};
    u64 value[2] = {edges, inspected};
    block_add(counters, index, value);
}

// Vertices discovered by other ranks: packed pairs (global vertex, parent).
extern "C" __global__ void bfs_claim(const u64 *pairs, u64 count, u64 first, i64 *parent,
                                     const u64 *offsets, u32 *next_queue, u64 *counters) {
    u64 i = thread_index();
    bool took = false;
    u64 l = 0, edges = 0;
    if (i < count) {
        l = (pairs[i] >> 32) - first;
        took = claim(parent, l, pairs[i] & 0xffffffffULL);
        if (took) edges = offsets[l + 1] - offsets[l];
    }
    push_next(took, l, next_queue, &counters[0]);
    const int index[1] = {1};
    u64 value[1] = {edges};
    block_add(counters, index, value);
}

// Bottom-up: a grid-stride loop in which each warp covers 32 consecutive vertices, one per
// lane, so its ballot is one 32-bit half of a next-frontier word (little-endian halves).
extern "C" __global__ void bfs_bottom_up(const u64 *offsets, const u32 *adj, i64 *parent,
                                         const u64 *frontier, u64 local_n, u32 *next_bits,
                                         u64 *counters) {
    u64 stride = grid_threads();
    u64 found_count = 0, edges = 0, inspected = 0;
    for (u64 base = thread_index() / WARP * WARP; base < local_n;
         base += stride) {
        u64 l = base + lane_id();
        bool found = false;
        if (l < local_n && parent[l] == -1) {
            u64 begin = offsets[l], end = offsets[l + 1];
            for (u64 e = begin; e < end; e++) {
                u64 v = adj[e];
                inspected++;
                if ((frontier[v / 64] >> (v % 64)) & 1) {
                    parent[l] = (i64)v;
                    found = true;
                    edges += end - begin;
                    break;
                }
            }
        }
        u32 ballot = __ballot_sync(FULL, found);
        if (lane_id() == 0) next_bits[base / WARP] = ballot;
        found_count += found;
    }
    const int index[3] = {0, 1, 2};
    u64 value[3] = {found_count, edges, inspected};
    block_add(counters, index, value);
}

extern "C" __global__ void bfs_queue_to_bits(const u32 *queue, u64 len, u64 *bits) {
    u64 i = thread_index();
    if (i < len) atomicOr(&bits[queue[i] / 64], 1ULL << (queue[i] % 64));
}

// One thread per word; the queue order is not deterministic, which no result depends on.
extern "C" __global__ void bfs_bits_to_queue(const u64 *bits, u64 words, u32 *queue,
                                             u64 *counters) {
    u64 w = thread_index();
    u64 word = w < words ? bits[w] : 0;
    if (!word) return;
    u64 at = atomicAdd(&counters[0], (u64)__popcll(word));
    while (word) {
        int i = __ffsll(word) - 1;
        queue[at++] = (u32)(w * 64 + i);
        word &= word - 1;
    }
}

// The parents as u32 for the copy to the host (-1 becomes 0xffffffff; the host widens them
// back). Only used where every vertex id is below 0xffffffff.
extern "C" __global__ void bfs_narrow_parents(const i64 *parent, u64 local_n, u32 *out) {
    u64 i = thread_index();
    if (i < local_n) out[i] = (u32)parent[i];
}

// ---- 2D partition (src/workloads/bfs/gpu2d.rs; graph::block2d for the layout) -----------------
//
// The block A(i, j) twice: by column index of u (out_offsets, out_adj: row indices of v) and
// by row index of v (in_offsets, in_adj: column indices of u). Found vertices travel as pairs
// (row index of v) << 32 | global u, so kernels/exchange.cu buckets them by the rank of the
// process row that owns v (row index / block) and bfs_claim takes them with first = j·block.

// Global id of column index c in process column j (Layout2D::col_vertex).
__device__ __forceinline__ u64 column_vertex(u64 c, u64 block, u64 cols, u64 j) {
    return (c / block * cols + j) * block + c % block;
}

// The own frontier queue (local ids) as column indices (own vertex l is i·block + l).
extern "C" __global__ void bfs2d_column_queue(const u32 *queue, u64 len, u64 offset, u32 *out) {
    u64 k = thread_index();
    if (k < len) out[k] = (u32)(queue[k] + offset);
}

// Row vertex v, found from global u: packed for its owner unless this rank sent v before in
// this search (`sent`: a bitmap over the process row).
__device__ __forceinline__ void found_2d(bool hit, u64 v, u64 ug, u64 *found, u64 capacity,
                                         u64 *counters) {
    u64 at = warp_slot(hit, &counters[3]);
    if (hit && at < capacity) found[at] = v << 32 | ug;
}

// One entry (u, v) of the block in a top-down scan, where `on` (every lane of the warp calls):
// v (a row index) is claimed if it is own (l = v - own_first below local_n), else packed for
// its owner unless sent before.
__device__ __forceinline__ void visit_2d(bool on, u64 v, u64 ug, u64 own_first, u64 local_n,
                                         i64 *parent, const u64 *degrees, u32 *next_queue,
                                         u64 *sent, u64 *found, u64 capacity, u64 *counters,
                                         u64 &edges) {
    u64 l = v - own_first;  // wraps for v < own_first
    bool local = on && l < local_n;
    bool took = local && claim(parent, l, ug);
    if (took) edges += degrees[l + 1] - degrees[l];
    push_next(took, l, next_queue, &counters[0]);
    found_2d(on && !local && first_send(sent, v), v, ug, found, capacity, counters);
}

// Top-down over the block: the rows of the column's frontier (column indices).
extern "C" __global__ void SCAN_BOUNDS bfs2d_top_down(const u64 *out_offsets, const u32 *out_adj,
                                          const u32 *queue, u64 queue_len, u64 block, u64 cols,
                                          u64 j, i64 *parent, u64 local_n, const u64 *degrees,
                                          u32 *next_queue, u64 *sent, u64 *found, u64 capacity,
                                          u64 *counters, u32 *heavy, u64 per_warp,
                                          u64 heavy_degree) {
    u64 edges = 0, inspected = 0;
    scan_rows(out_offsets, out_adj, queue, queue_len, heavy, counters, edges, inspected,
              per_warp, heavy_degree, [&](bool on, u64 v, u64 u, u64 &edges) {
                  visit_2d(on, v, column_vertex(u, block, cols, j), j * block, local_n,
                           parent, degrees, next_queue, sent, found, capacity, counters,
                           edges);
              });
    const int index[2] = {1, 2};
    u64 value[2] = {edges, inspected};
    block_add(counters, index, value);
}

// The heavy rows bfs2d_top_down left (its arguments; the queue, per_warp and heavy_degree
// are not read).
extern "C" __global__ void SCAN_BOUNDS bfs2d_top_down_heavy(const u64 *out_offsets, const u32 *out_adj,
                                                const u32 *, u64, u64 block, u64 cols, u64 j,
                                                i64 *parent, u64 local_n, const u64 *degrees,
                                                u32 *next_queue, u64 *sent, u64 *found,
                                                u64 capacity, u64 *counters,
                                                const u32 *heavy, u64, u64) {
    u64 edges = 0, inspected = 0;
    scan_heavy_rows(out_offsets, out_adj, heavy, counters, edges, inspected,
                    [&](bool on, u64 v, u64 u, u64 &edges) {
                        visit_2d(on, v, column_vertex(u, block, cols, j), j * block, local_n,
                                 parent, degrees, next_queue, sent, found, capacity, counters,
                                 edges);
                    });
    const int index[2] = {1, 2};
    u64 value[2] = {edges, inspected};
    block_add(counters, index, value);
}

// Bits of the own vertices without a parent, as 32-bit halves of the segment's words.
extern "C" __global__ void bfs2d_unvisited(const i64 *parent, u64 local_n, u64 block,
                                           u32 *segment) {
    u64 l = thread_index();
    if (l >= block) return;
    u32 ballot = __ballot_sync(__activemask(), l < local_n && parent[l] == -1);
    if (lane_id() == 0) segment[l / WARP] = ballot;
}

// Bottom-up over the block for the segment of process-row rank k (row indices seg_first =
// k·block onwards): each vertex still in `segment` looks for a neighbour in the column's
// frontier bitmap; found ones leave the segment. In the own segment (OWN: k = j) they take
// their parent and join the next frontier's bitmap at once (as the 1D bfs_bottom_up does);
// in the others they are packed into `found` for their owner, their slots taken with one
// atomic per block step (block_slots): one per warp serialised at the counter, about 2 ms of
// the 2.8 of a middle level on 2 x 2 H200 at SCALE 26 a GPU. A grid-stride loop whose steps
// every thread of a block takes alike, a warp covering 32 consecutive vertices, so its ballot
// is one half-word of either bitmap. Two kernels, so that each carries only its own branch.
template <bool OWN>
__device__ __forceinline__ void scan_segment(const u64 *in_offsets, const u32 *in_adj,
                                             const u64 *frontier, u32 *segment, u64 seg_first,
                                             u64 block, u64 cols, u64 j, i64 *parent,
                                             const u64 *degrees, u32 *next_bits, u64 *found,
                                             u64 capacity, u64 *counters) {
    u64 stride = grid_threads();
    u64 found_own = 0, edges = 0, inspected = 0;
    for (u64 step = blockIdx.x * (u64)blockDim.x; step < block; step += stride) {
        u64 base = step + threadIdx.x / WARP * WARP;
        u32 word = base < block ? segment[base / WARP] : 0;
        u64 x = base + lane_id();
        bool hit = false;
        u64 u = 0;
        if ((word >> lane_id()) & 1) {
            for (u64 e = in_offsets[seg_first + x], end = in_offsets[seg_first + x + 1];
                 e < end; e++) {
                u = in_adj[e];
                inspected++;
                if ((frontier[u / 64] >> (u % 64)) & 1) {
                    hit = true;
                    break;
                }
            }
        }
        u32 ballot = __ballot_sync(FULL, hit);
        if (lane_id() == 0 && ballot) segment[base / WARP] = word & ~ballot;
        if (OWN) {
            if (hit) {
                parent[x] = (i64)column_vertex(u, block, cols, j);
                found_own++;
                edges += degrees[x + 1] - degrees[x];
            }
            if (lane_id() == 0 && base < block) next_bits[base / WARP] = ballot;
        } else {
            u64 at = block_slots(hit, &counters[3]);
            u64 ug = hit ? column_vertex(u, block, cols, j) : 0;
            if (hit && at < capacity) found[at] = (seg_first + x) << 32 | ug;
        }
    }
    const int index[3] = {0, 1, 2};
    u64 value[3] = {found_own, edges, inspected};
    block_add(counters, index, value);
}

#define SCAN_SEGMENT_ARGS                                                                    \
    const u64 *in_offsets, const u32 *in_adj, const u64 *frontier, u32 *segment,            \
        u64 seg_first, u64 block, u64 cols, u64 j, i64 *parent, const u64 *degrees,         \
        u32 *next_bits, u64 *found, u64 capacity, u64 *counters
#define SCAN_SEGMENT_CALL                                                                    \
    in_offsets, in_adj, frontier, segment, seg_first, block, cols, j, parent, degrees,      \
        next_bits, found, capacity, counters

extern "C" __global__ void bfs2d_bottom_up_own(SCAN_SEGMENT_ARGS) {
    scan_segment<true>(SCAN_SEGMENT_CALL);
}

extern "C" __global__ void bfs2d_bottom_up_remote(SCAN_SEGMENT_ARGS) {
    scan_segment<false>(SCAN_SEGMENT_CALL);
}

// Pairs other ranks of the process row found for own vertices in a bottom-up level (each
// vertex once: a found vertex leaves the segment that travels on): parents, and bits of
// the next frontier.
extern "C" __global__ void bfs2d_claim_bits(const u64 *pairs, u64 count, u64 key_first,
                                            i64 *parent, const u64 *degrees, u64 *next_bits,
                                            u64 *counters) {
    u64 k = thread_index();
    u64 took = 0, edges = 0;
    if (k < count) {
        u64 l = (pairs[k] >> 32) - key_first;
        parent[l] = (i64)(pairs[k] & 0xffffffffULL);
        atomicOr(&next_bits[l / 64], 1ULL << (l % 64));
        took = 1;
        edges = degrees[l + 1] - degrees[l];
    }
    const int index[2] = {0, 1};
    u64 value[2] = {took, edges};
    block_add(counters, index, value);
}

// ---- Validation on the device (src/workloads/bfs/validate_gpu.rs) --------------------------
//
// The Graph500 rules over the own rows, with the search's depths as a witness: all_depth holds
// every vertex's depth (gathered once), so each check reads only the own rows. failures[r] is
// the lowest global vertex breaking rule r (validate.rs's Rule order: 0 parent range, 1 root
// its own parent, 2 no other self-parent, 3 tree levels: depth(parent) = depth - 1 >= 0 and a
// parent exactly where a depth, 4 parent edge in the input, 5 level gap, 6 spanning); slot 7
// sums the input tuple ends of the reached own vertices (twice nedge's share).

__device__ __forceinline__ void broken(u64 *failures, int rule, u64 v) {
    atomicMin((unsigned long long *)&failures[rule], (unsigned long long)v);
}

// Whether the sorted row adj[begin, end) holds w.
__device__ __forceinline__ bool row_holds(const u32 *adj, u64 begin, u64 end, u64 w) {
    u64 lo = begin, hi = end;
    while (lo < hi) {
        u64 mid = lo + (hi - lo) / 2;
        if (adj[mid] < w) lo = mid + 1;
        else hi = mid;
    }
    return lo < end && adj[lo] == w;
}

// The rules that concern own vertex v alone (its parent p and depth d).
__device__ __forceinline__ void check_vertex(const u32 *adj, u64 begin, u64 end, i64 p, i32 d,
                                             const i32 *all_depth, u64 v, u64 n, u64 root,
                                             u64 *failures) {
    if (p < -1 || p >= (i64)n) {
        broken(failures, 0, v);
        return;
    }
    if (v == root) {
        if (p != (i64)root) broken(failures, 1, v);
        if (d != 0) broken(failures, 3, v);
        return;
    }
    if (p == (i64)v) broken(failures, 2, v);
    if (p < 0) {
        if (d >= 0) broken(failures, 3, v);
        return;
    }
    if (d < 1 || all_depth[p] != d - 1) broken(failures, 3, v);
    if (!row_holds(adj, begin, end, (u64)p)) broken(failures, 4, v);
}

// A warp per own vertex (grid-stride): lane 0 checks the vertex, the lanes its edges (v, w)
// with w > v, each undirected edge once.
extern "C" __global__ void bfs_validate(const u64 *offsets, const u32 *adj, const i64 *parent,
                                        const i32 *depth, const i32 *all_depth,
                                        const u64 *tuple_ends, u64 first, u64 local_n, u64 n,
                                        u64 root, u64 *failures) {
    u64 warps = grid_threads() / WARP;
    u64 ends = 0;
    for (u64 l = thread_index() / WARP; l < local_n; l += warps) {
        u64 v = first + l;
        i64 p = parent[l];
        i32 d = depth[l];
        u64 begin = offsets[l], end = offsets[l + 1];
        if (lane_id() == 0) {
            check_vertex(adj, begin, end, p, d, all_depth, v, n, root, failures);
            if (p >= 0) ends += tuple_ends[l];
        }
        bool gap = false, span = false;
        for (u64 e = begin + lane_id(); e < end; e += WARP) {
            u64 w = adj[e];
            if (w <= v) continue;
            i32 dw = all_depth[w];
            span |= (d < 0) != (dw < 0);
            gap |= (d >= 0) == (dw >= 0) && (d - dw > 1 || dw - d > 1);
        }
        if (gap) broken(failures, 5, v);
        if (span) broken(failures, 6, v);
    }
    const int index[1] = {7};
    u64 value[1] = {ends};
    block_add(failures, index, value);
}
