// Host emulation of kernels/ghosts.cu, driven as src/graph/ghosts_gpu.rs drives it (counts and
// marks, the host scans of the row lengths and of the bitmap's word counts, the ghost ids, the
// fill), each kernel thread by thread in reverse order; checked entry for entry against the
// split written here as `LocalRows::split` does it: per row in row order, an own vertex's local
// index to the local rows, a remote one as (row, index of it among the rank's distinct remote
// endpoints in global id order). Random rows with repeated and self entries, hub rows, empty
// rows and ranks, over 1 to 4 emulated ranks. Run by scripts/emulate-kernels.
#include <algorithm>
#include <cstdio>
#include <random>
#include "warp_fibers.h"
inline u64 atomicOr(u64 *a, u64 v) { u64 old = *a; *a |= v; return old; }
inline int __popcll(u64 x) { return __builtin_popcountll(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
#include "ghosts_kernels.h"  // kernels/ghosts.cu, written by scripts/emulate-kernels

template <class F> void launch(u64 threads, F f) {
    for (u64 t = threads; t-- > 0;) { emu_thread = t; f(); }
}

static std::vector<u64> scan(const std::vector<u64> &lengths) {
    std::vector<u64> at(1, 0);
    for (u64 l : lengths) at.push_back(at.back() + l);
    return at;
}

struct Split { std::vector<u64> offsets, cut_offsets, ids; std::vector<u32> adj, cut_own, cut_ghost; };

static Split kernels_split(const std::vector<u64> &off, const std::vector<u32> &adj, u32 n, u64 first, u64 vertices) {
    u64 words = (vertices + 63) / 64, local_n = n;
    std::vector<u64> marks(words, 0), local_len(n), cut_len(n), counts(words);
    launch(n, [&] { ghosts_count(off.data(), adj.data(), n, first, local_n, local_len.data(), cut_len.data(), marks.data()); });
    Split s;
    s.offsets = scan(local_len);
    s.cut_offsets = scan(cut_len);
    launch(words, [&] { ghosts_word_counts(marks.data(), words, counts.data()); });
    std::vector<u64> before = scan(counts);
    s.ids.assign(before[words], 0);
    launch(words, [&] { ghosts_ids(marks.data(), before.data(), words, s.ids.data()); });
    s.adj.assign(s.offsets[n], 7);
    s.cut_own.assign(s.cut_offsets[n], 7);
    s.cut_ghost.assign(s.cut_offsets[n], 7);
    launch(n, [&] { ghosts_fill(off.data(), adj.data(), n, first, local_n, s.offsets.data(), s.cut_offsets.data(), marks.data(), before.data(), s.adj.data(), s.cut_own.data(), s.cut_ghost.data()); });
    return s;
}

static Split reference_split(const std::vector<u64> &off, const std::vector<u32> &adj, u32 n, u64 first) {
    Split s;
    for (u64 v : adj) if (v - first >= n) s.ids.push_back(v);
    std::sort(s.ids.begin(), s.ids.end());
    s.ids.erase(std::unique(s.ids.begin(), s.ids.end()), s.ids.end());
    s.offsets.push_back(0);
    s.cut_offsets.push_back(0);
    for (u32 u = 0; u < n; u++) {
        for (u64 e = off[u]; e < off[u + 1]; e++) {
            u64 v = adj[e];
            if (v - first < n) {
                s.adj.push_back(v - first);
            } else {
                s.cut_own.push_back(u);
                s.cut_ghost.push_back(std::lower_bound(s.ids.begin(), s.ids.end(), v) - s.ids.begin());
            }
        }
        s.offsets.push_back(s.adj.size());
        s.cut_offsets.push_back(s.cut_own.size());
    }
    return s;
}

int main() {
    std::mt19937_64 rng(42);
    int cases = 0, failures = 0;
    for (u32 ranks = 1; ranks <= 4; ranks++)
        for (u64 vertices : {1ull, 63ull, 64ull, 200ull, 1000ull})
            for (int seed = 0; seed < 3; seed++) {
                u64 block = (vertices + ranks - 1) / ranks;
                for (u32 r = 0; r < ranks; r++) {
                    u64 first = std::min(vertices, r * block), last = std::min(vertices, first + block);
                    u32 n = last - first;
                    std::vector<u64> off(1, 0);
                    std::vector<u32> adj;
                    for (u32 u = 0; u < n; u++) {
                        u64 degree = rng() % 5 == 0 ? 0 : rng() % (u % 17 == 0 ? 60 : 6);
                        for (u64 k = 0; k < degree; k++) adj.push_back(rng() % 3 == 0 ? first + u : rng() % vertices);
                        off.push_back(adj.size());
                    }
                    Split got = kernels_split(off, adj, n, first, vertices), want = reference_split(off, adj, n, first);
                    bool same = got.offsets == want.offsets && got.cut_offsets == want.cut_offsets && got.ids == want.ids &&
                                got.adj == want.adj && got.cut_own == want.cut_own && got.cut_ghost == want.cut_ghost;
                    cases++;
                    if (!same && failures++ < 5)
                        printf("  %llu vertices, rank %u of %u: the split differs (%zu/%zu local, %zu/%zu cut, %zu/%zu ghosts)\n",
                               vertices, r, ranks, got.adj.size(), want.adj.size(), got.cut_own.size(), want.cut_own.size(),
                               got.ids.size(), want.ids.size());
                }
            }
    printf("%s (%d ranks' rows split)\n", failures ? "DIFFERENT" : "all equal", cases);
    return failures ? 1 : 0;
}
