// The local/cut split of a rank's rows on its GPU (host side: src/graph/ghosts_gpu.rs; the
// host split, its reference and the CPU path: src/graph/ghosts.rs `LocalRows::split`).
// Compiled at start by NVRTC.
//
// The rows are the rank's CSR (global ids in 32 bits); own vertices are first .. first + n.
// `split_mark` sets a bit per remote endpoint (the ghosts); `split_word_counts` and an
// exclusive scan number them (a ghost's index: the marks below it), and `split_ghost_ids`
// lists them in ascending global id for the host (the ghost plan); `split_count` counts each
// row's local entries, whose exclusive scan gives the local row offsets, and
// `split_cut_offsets` the cut ones; `split_scatter` writes each row's local entries (as local
// indices) and its cut entries (as ghost indices), each in the row's CSR order. Rows are a
// thread's each, but rows longer than LONG_ROW (a Kronecker graph's hubs, which would hold one
// thread for millions of entries) go through the whole warp, one after another: its lanes take
// 32 entries at a time, and a ballot orders the local and the cut ones among them (each lane's
// slot after those of the lanes below it). `split_cut_edges` reads picked cut edges back (own
// vertex and ghost) for the labelling's probe of the giants (src/graph/components/gpu.rs).
//
// The scans are the prelude's (SCAN_KERNELS).

#define LONG_ROW WARP

// The ghosts' numbers and the local row offsets (src/device/scan.rs).
SCAN_KERNELS(u64)

// Whether global id v is an own vertex (ids below `first` wrap past n).
__device__ __forceinline__ bool own_vertex(u64 v, u64 first, u64 n) { return v - first < n; }

// Set the bit of every remote endpoint among the `entries` entries of `adj` (a grid-stride
// loop over the entries: no row is any thread's alone). A bit already set is not set again,
// which spares the atomics of the many entries that reach one hub.
extern "C" __global__ void split_mark(const u32 *adj, u64 entries, u64 first, u64 n, u64 *words) {
    for (u64 e = thread_index(); e < entries; e += grid_threads()) {
        u64 v = adj[e];
        u64 bit = 1ull << (v % 64);
        if (!own_vertex(v, first, n) && !(words[v / 64] & bit)) atomicOr(&words[v / 64], bit);
    }
}

// Row u's entries, from .. to (empty past the last row, so that every lane of a warp takes
// part in the long rows' ballots).
__device__ __forceinline__ void row_bounds(const u64 *offsets, u64 u, u32 n, u64 *from, u64 *to) {
    *from = u < n ? offsets[u] : 0;
    *to = u < n ? offsets[u + 1] : 0;
}

// Per own vertex, how many entries of its row are local (the rest are cut), into local_len
// (n + 1 items, the last one left 0, so that its exclusive scan ends with the total).
extern "C" __global__ void split_count(const u64 *offsets, const u32 *adj, u32 n, u64 first,
                                       u64 *local_len) {
    u64 u = thread_index(), from, to;
    row_bounds(offsets, u, n, &from, &to);
    bool long_row = to - from > LONG_ROW;
    u64 count = 0;
    if (!long_row)
        for (u64 e = from; e < to; e++) count += own_vertex(adj[e], first, n);
    for (u32 rows = __ballot_sync(FULL, long_row); rows; rows &= rows - 1) {
        int l = __ffs(rows) - 1;
        u64 f = __shfl_sync(FULL, from, l), t = __shfl_sync(FULL, to, l);
        u64 c = 0;
        for (u64 e = f + lane_id(); e < t; e += WARP) c += own_vertex(adj[e], first, n);
        c = warp_sum(c);
        if (lane_id() == l) count = c;
    }
    if (u < n) local_len[u] = count;
}

// Per bitmap word (`count` of them), its marks, into marks (count + 1 items, the last left 0).
extern "C" __global__ void split_word_counts(const u64 *words, u64 count, u64 *marks) {
    u64 w = thread_index();
    if (w < count) marks[w] = __popcll(words[w]);
}

// Each own vertex's cut entries start (and all of them end: u = n) after the entries of the
// rows before it that are not local: cut_at[u] = offsets[u] - offsets[0] - local_at[u].
extern "C" __global__ void split_cut_offsets(const u64 *offsets, const u64 *local_at, u32 n,
                                             u64 *cut_at) {
    u64 u = thread_index();
    if (u <= n) cut_at[u] = offsets[u] - offsets[0] - local_at[u];
}

// The marked vertices of each bitmap word (`count` words, `before` their exclusive scan of
// marks) at their indices in ids: the ghosts' global ids, ascending.
extern "C" __global__ void split_ghost_ids(const u64 *words, u64 count, const u64 *before,
                                           u64 *ids) {
    u64 w = thread_index();
    if (w >= count) return;
    u64 at = before[w];
    for (u64 bits = words[w]; bits; bits &= bits - 1) ids[at++] = w * 64 + __ffsll((long long)bits) - 1;
}

// Ghost index of remote vertex v: the marked vertices below it (`before`: the marks in the
// words before each word).
__device__ __forceinline__ u32 ghost_index(const u64 *words, const u64 *before, u64 v) {
    u64 below = words[v / 64] & ((1ull << (v % 64)) - 1);
    return (u32)(before[v / 64] + __popcll(below));
}

// Each row's local entries to local_adj from local_at[u] on, as local indices, and its cut
// entries to cut_ghost from cut_at[u] on, as ghost indices, both in the row's order.
extern "C" __global__ void split_scatter(const u64 *offsets, const u32 *adj, u32 n, u64 first,
                                         const u64 *words, const u64 *before,
                                         const u64 *local_at, const u64 *cut_at,
                                         u32 *local_adj, u32 *cut_ghost) {
    u64 u = thread_index(), from, to;
    row_bounds(offsets, u, n, &from, &to);
    bool long_row = to - from > LONG_ROW;
    if (!long_row && from < to) {
        u64 l = local_at[u], c = cut_at[u];
        for (u64 e = from; e < to; e++) {
            u64 v = adj[e];
            if (own_vertex(v, first, n)) local_adj[l++] = (u32)(v - first);
            else cut_ghost[c++] = ghost_index(words, before, v);
        }
    }
    for (u32 rows = __ballot_sync(FULL, long_row); rows; rows &= rows - 1) {
        int l = __ffs(rows) - 1;
        u64 f = __shfl_sync(FULL, from, l), t = __shfl_sync(FULL, to, l), row = __shfl_sync(FULL, u, l);
        u64 local = local_at[row], cut = cut_at[row];
        for (u64 base = f; base < t; base += WARP) {
            u64 e = base + lane_id();
            u64 v = e < t ? adj[e] : first;
            bool mine = e < t && own_vertex(v, first, n);
            u32 locals = __ballot_sync(FULL, mine), cuts = __ballot_sync(FULL, e < t && !mine);
            if (mine) local_adj[local + __popc(locals & lanes_before())] = (u32)(v - first);
            else if (e < t) cut_ghost[cut + __popc(cuts & lanes_before())] = ghost_index(words, before, v);
            local += __popc(locals);
            cut += __popc(cuts);
        }
    }
}

// The cut edges `picks` (`count` indices among the cut edges, ascending or not): each one's
// own vertex (the last row u < n whose cut edges start at or before it: a binary search of
// cut_at) and ghost.
extern "C" __global__ void split_cut_edges(const u64 *picks, u64 count, const u64 *cut_at, u32 n,
                                           const u32 *cut_ghost, u32 *own, u32 *ghost) {
    u64 k = thread_index();
    if (k >= count) return;
    u64 i = picks[k];
    u32 low = 0, high = n;
    while (high - low > 1) {
        u32 mid = low + (high - low) / 2;
        if (cut_at[mid] <= i) low = mid;
        else high = mid;
    }
    own[k] = low;
    ghost[k] = cut_ghost[i];
}
