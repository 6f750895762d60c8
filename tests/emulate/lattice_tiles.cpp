// Host emulation of kernels/lattice.cu's local labelling: lattice_tile (a warp per tile, its
// lanes as fibers: warp_fibers.h), lattice_seams (lattice_seams_2d in 2D),
// lattice_compress_roots and lattice_compress, on random 2D and 3D slabs with partial tiles, site and bond masks. The
// roots must be every site's smallest connected site, as a sequential search finds them.
// Then the relabelling (lattice_mark, lattice_remap) with the roots of the first row's sites
// as nodes: each site must take its node's label, else offset + its root, NO_LABEL if vacant.
// Run by scripts/emulate-kernels (needs g++ with C++20).
#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>
#include "warp_fibers.h"
typedef unsigned char u8;
#define __shared__ static
struct uint4 { u32 x, y, z, w; };
struct ulonglong2 { u64 x, y; };
inline ulonglong2 make_ulonglong2(u64 x, u64 y) { return {x, y}; }
// Lanes take turns only at the warp's collectives, so an atomic is a plain read and write.
inline u32 atomicCAS(u32 *a, u32 cmp, u32 v) {
    u32 old = *a;
    if (old == cmp) *a = v;
    return old;
}
inline int __clz(u32 x) { return x ? __builtin_clz(x) : 32; }
template <class T> T __shfl_down_sync(u32, T x, u32 d) {
    u32 l = lane_id();
    return (T)exchange((u64)x, l + d < WARP ? l + d : l);
}
using std::max; using std::min;
#include "lattice_labels.h"  // written by scripts/emulate-kernels

// Smallest site connected to each site (vacant sites: themselves), by a flood fill over the
// masks' bonds that stay in the slab without wrapping.
std::vector<u32> reference(const std::vector<u8> &mask, u32 dim, u32 l, u32 thickness) {
    u32 n = mask.size(), plane = n / thickness;
    std::vector<u32> root(n, UINT32_MAX);
    std::vector<std::vector<u32>> adj(n);
    for (u32 i = 0; i < n; i++)
        for (u32 a = 0; a < dim; a++)
            if ((mask[i] & ~VACANT & (1 << a)) && bond_inside(i, a, dim, l, plane, thickness)) {
                u32 j = i + local_stride(a, dim, l, plane);
                adj[i].push_back(j); adj[j].push_back(i);
            }
    for (u32 s = 0; s < n; s++) {
        if (root[s] != UINT32_MAX) continue;
        std::vector<u32> stack{s};
        root[s] = s;
        while (!stack.empty()) {
            u32 v = stack.back(); stack.pop_back();
            for (u32 w : adj[v]) if (root[w] == UINT32_MAX) { root[w] = s; stack.push_back(w); }
        }
    }
    return root;
}

int main() {
    std::mt19937_64 g(11);
    int bad = 0, cases = 0;
    // dim, l, thickness, p (site occupation, or bond probability when bonds)
    struct Case { u32 dim, l, thickness; double p; bool bonds; };
    for (Case c : std::vector<Case>{{2, 70, 45, 0.59, false}, {2, 64, 64, 0.8, false}, {2, 33, 100, 0.5, true},
                                    {2, 96, 7, 0.7, false}, {3, 20, 9, 0.31, false}, {3, 33, 5, 0.5, true},
                                    {2, 50, 40, 1.0, false}, {3, 12, 12, 0.7, false}, {2, 256, 160, 0.62, false},
                                    {3, 40, 40, 0.35, false}}) {
        u32 plane = c.dim == 2 ? c.l : c.l * c.l, n = plane * c.thickness;
        std::vector<u8> mask(n);
        std::uniform_real_distribution<double> u(0, 1);
        std::vector<bool> occ(n);
        for (u32 i = 0; i < n; i++) occ[i] = c.bonds || u(g) < c.p;
        for (u32 i = 0; i < n; i++) {
            if (!occ[i]) { mask[i] = VACANT; continue; }
            u8 m = 0;
            for (u32 a = 0; a < c.dim; a++) {
                // Some bonds leave the slab or wrap: the kernels must ignore them.
                bool inside = bond_inside(i, a, c.dim, c.l, plane, c.thickness);
                u32 j = inside ? i + local_stride(a, c.dim, c.l, plane) : i;
                bool open = c.bonds ? u(g) < c.p : (!inside || occ[j]);
                if (open) m |= 1 << a;
            }
            mask[i] = m;
        }
        std::vector<u32> parent(n, 0xdeadbeef);
        u32 across = (c.l + TILE - 1) / TILE, tiles = across * ((n / c.l + TILE - 1) / TILE);
        u64 tile_threads = (u64)(tiles + TILE_WARPS - 1) / TILE_WARPS * TILE_WARPS * WARP;
        std::vector<u32> marks(tiles * TILE, 0xdeadbeef);
        launch_warps(tile_threads, [&] {
            lattice_tile(mask.data(), parent.data(), marks.data(), n, c.dim, c.l, plane, c.thickness);
        });
        // One thread at a time, in a random order (a GPU's is arbitrary; the chains the seams
        // leave depend on it).
        auto each = [&](u64 threads, auto kernel) {
            std::vector<u64> order(threads);
            for (u64 t = 0; t < threads; t++) order[t] = t;
            std::shuffle(order.begin(), order.end(), g);
            for (u64 t : order) {
                emu_thread = t;
                kernel();
            }
        };
        if (c.dim == 2) {
            u32 rows = n / c.l;
            u64 border = (u64)rows * ((c.l - 1) / TILE) + (u64)(rows / TILE) * c.l;
            each(border, [&] { lattice_seams_2d(mask.data(), parent.data(), n, c.l, plane, c.thickness); });
        } else {
            each(n, [&] { lattice_seams(mask.data(), parent.data(), n, c.dim, c.l, plane, c.thickness); });
        }
        u32 words = marks.size();
        each(words, [&] { lattice_compress_roots(parent.data(), marks.data(), words, c.l); });
        each((n + 3) / 4, [&] { lattice_compress(parent.data(), n); });
        std::vector<u32> want = reference(mask, c.dim, c.l, c.thickness);
        u32 wrong = 0;
        for (u32 i = 0; i < n; i++) wrong += !(mask[i] & VACANT) && parent[i] != want[i];
        // Nodes: the roots of the first row's occupied sites, labelled 7 + 3k.
        std::vector<u32> roots;
        for (u32 x = 0; x < c.l; x++)
            if (!(mask[x] & VACANT) && std::find(roots.begin(), roots.end(), want[x]) == roots.end())
                roots.push_back(want[x]);
        std::vector<u64> table(roots.size()), labels(n, 0xdeadbeef);
        for (u32 k = 0; k < roots.size(); k++) table[k] = 7 + 3 * k;
        u32 count = roots.size();
        u64 offset = 1000000;
        each(count, [&] { lattice_mark(parent.data(), roots.data(), count); });
        each((n + 3) / 4, [&] { lattice_remap(mask.data(), parent.data(), table.data(), labels.data(), n, offset); });
        for (u32 i = 0; i < n; i++) {
            auto node = std::find(roots.begin(), roots.end(), want[i]);
            u64 label = (mask[i] & VACANT) ? NO_LABEL
                        : node != roots.end() ? table[node - roots.begin()] : offset + want[i];
            wrong += labels[i] != label;
        }
        cases++;
        bad += wrong != 0;
        printf("  %uD l=%u thickness=%u %s p=%.2f: %s (%u of %u sites wrong)\n", c.dim, c.l, c.thickness,
               c.bonds ? "bonds" : "sites", c.p, wrong ? "DIFFERENT" : "equal", wrong, n);
    }
    printf("%s\n", bad ? "lattice: DIFFERENCES" : "lattice: all equal");
    return bad != 0;
}
