// The local/cut split of a rank's rows on its GPU (host side: src/graph/ghosts_gpu.rs; the
// CPU twin, entry for entry: `LocalRows::split` in src/graph/ghosts.rs). The rows are the
// CSR the GPU build left there (global ids as u32); own vertices are first .. first + local_n.
// Ghosts (the distinct remote endpoints) are numbered in global id order through a bitmap
// over all vertices, bit v % 64 of word v / 64: a remote vertex's index is the number of
// marked vertices below it (`before[w]`, the marks of the words below w, plus those below it
// in its word).

// Per own row u: how many entries are own vertices (local) and how many are not (cut); each
// remote entry marked.
extern "C" __global__ void ghosts_count(const u64 *offsets, const u32 *adj, u32 n, u64 first,
                                        u64 local_n, u64 *local_len, u64 *cut_len, u64 *marks) {
    u64 u = thread_index();
    if (u >= n) return;
    u64 local = 0, cut = 0;
    for (u64 e = offsets[u]; e < offsets[u + 1]; e++) {
        u64 v = adj[e];
        if (v - first < local_n) {
            local++;
            continue;
        }
        cut++;
        u64 bit = 1ull << (v % 64);
        if (!(marks[v / 64] & bit)) atomicOr(&marks[v / 64], bit);
    }
    local_len[u] = local;
    cut_len[u] = cut;
}

// The marks of each bitmap word.
extern "C" __global__ void ghosts_word_counts(const u64 *marks, u64 words, u64 *counts) {
    u64 w = thread_index();
    if (w < words) counts[w] = __popcll(marks[w]);
}

// The ghosts' global ids, ascending: word w's marked vertices at ids[before[w] ..].
extern "C" __global__ void ghosts_ids(const u64 *marks, const u64 *before, u64 words, u64 *ids) {
    u64 w = thread_index();
    if (w >= words) return;
    u64 bits = marks[w], at = before[w];
    while (bits) {
        ids[at++] = w * 64 + (__ffsll((long long)bits) - 1);
        bits &= bits - 1;
    }
}

// Each own row's entries in row order: an own vertex's local index to the local rows from
// local_at[u], a remote one as (u, its ghost index) to the cut edges from cut_at[u].
extern "C" __global__ void ghosts_fill(const u64 *offsets, const u32 *adj, u32 n, u64 first,
                                       u64 local_n, const u64 *local_at, const u64 *cut_at,
                                       const u64 *marks, const u64 *before, u32 *local_adj,
                                       u32 *cut_own, u32 *cut_ghost) {
    u64 u = thread_index();
    if (u >= n) return;
    u64 l = local_at[u], c = cut_at[u];
    for (u64 e = offsets[u]; e < offsets[u + 1]; e++) {
        u64 v = adj[e];
        if (v - first < local_n) {
            local_adj[l++] = (u32)(v - first);
            continue;
        }
        u64 below = marks[v / 64] & ((1ull << (v % 64)) - 1);
        cut_own[c] = (u32)u;
        cut_ghost[c++] = (u32)(before[v / 64] + __popcll(below));
    }
}
