// Lattice clusters (host side: src/lattice/gpu.rs; the CPU twins in src/lattice/occupation.rs,
// unionfind.rs and cpu.rs give the same masks and labels bit for bit).
//
// Masks: one byte per site, bit a = bond up along axis a open, VACANT = empty site. A slab is
// n = thickness * plane local sites, row-major with axis 0 slowest; local index + offset is
// the global index. Local labelling is the prelude's union-find (ECL-CC): every root is the
// smallest index of its tree. Tiles of 32 x 32 sites are labelled first, a warp sweeping a
// tile's rows with its union-find in shared memory (lattice_tile), so that only the bonds
// between tiles go through global memory (lattice_seams). Two tricks cut the unions: each run
// of bonded sites along the fast axis within a tile row takes one root through a ballot and a
// segmented minimum (no atomics), and in the seams a slow-axis bond whose left pair is bonded
// the same way, with both rows bonded across, is implied and skipped.

#define VACANT 0x80
#define ROOT_FLAG 0x80000000u
#define NO_ROOT 0xffffffffu
#define NO_LABEL 0xffffffffffffffffULL

// ---- Occupations (src/lattice/occupation.rs) -----------------------------------------------

__device__ __forceinline__ bool occupied(u64 key, u64 index, u64 threshold) {
    return (draw(key, index) >> 11) < threshold;
}

// Index distance between neighbours along `axis` on the whole lattice: l^(dim-1-axis).
__device__ __forceinline__ u64 global_stride(u32 axis, u32 dim, u64 l) {
    return axis + 1 == dim ? 1 : (axis + 2 == dim ? l : l * l);
}

// The neighbour one step up along `axis` (length sites along axis 0, l along the others),
// wrapped when periodic; NO_LABEL past an open end.
__device__ __forceinline__ u64 up_site(u64 g, u32 axis, u32 dim, u64 length, u64 l,
                                       u32 periodic) {
    u64 s = global_stride(axis, dim, l), side = axis == 0 ? length : l;
    if (g / s % side + 1 < side) return g + s;
    return periodic ? g - (side - 1) * s : NO_LABEL;
}

// Site percolation: a site is occupied with probability threshold / 2^53; bond a is open
// when the site and its neighbour up along a are both occupied.
extern "C" __global__ void lattice_draw_sites(u8 *mask, u32 n, u64 offset, u32 dim, u64 length,
                                              u64 l, u32 periodic, u64 key, u64 threshold) {
    u64 i = thread_index();
    if (i >= n) return;
    u64 g = offset + i;
    u8 m = 0;
    if (!occupied(key, g, threshold)) {
        m = VACANT;
    } else {
        for (u32 a = 0; a < dim; a++) {
            u64 up = up_site(g, a, dim, length, l, periodic);
            if (up != NO_LABEL && occupied(key, up, threshold)) m |= 1 << a;
        }
    }
    mask[i] = m;
}

// Bond percolation: bond (g, a) is open with probability threshold / 2^53, drawn at g*dim + a.
extern "C" __global__ void lattice_draw_bonds(u8 *mask, u32 n, u64 offset, u32 dim, u64 length,
                                              u64 l, u32 periodic, u64 key, u64 threshold) {
    u64 i = thread_index();
    if (i >= n) return;
    u64 g = offset + i;
    u8 m = 0;
    for (u32 a = 0; a < dim; a++) {
        if (up_site(g, a, dim, length, l, periodic) != NO_LABEL &&
            occupied(key, g * dim + a, threshold))
            m |= 1 << a;
    }
    mask[i] = m;
}

// ---- Local labelling (src/lattice/unionfind.rs) ---------------------------------------------

// Index distance between neighbours along `axis` in the slab.
__device__ __forceinline__ u32 local_stride(u32 axis, u32 dim, u32 l, u32 plane) {
    return axis == 0 ? plane : (axis + 1 == dim ? 1 : l);
}

// Whether the bond up along `axis` from local site i stays in the slab without wrapping.
__device__ __forceinline__ bool bond_inside(u32 i, u32 axis, u32 dim, u32 l, u32 plane,
                                            u32 thickness) {
    if (axis == 0) return i / plane + 1 < thickness;
    return i / local_stride(axis, dim, l, plane) % l + 1 < l;
}

// The slab as rows of l sites along the fast axis (row = local index / l: in 2D the slow
// axis, in 3D the two slower ones), cut into tiles of TILE x TILE sites: TILE rows of TILE
// sites, the last tiles of each direction partial. A tile is labelled by one warp
// (lattice_tile), then the bonds between tiles, and those along the axes below the
// tile's plane (3D's slowest), are united in global memory (lattice_seams).
#define TILE 32

// Tiles per block of lattice_tile (a warp per tile).
#define TILE_WARPS 4
#define NONE 0xffffffffu

// Label one tile per warp (lane = column), sweeping its rows in order, with the tile's
// union-find in shared memory (the warp's own: no block barriers): each run of fast-axis
// bonds within a row is found by one ballot; the run takes the smallest root among the sites
// bonded to it from the row before (a segmented minimum over the run's lanes), or its first
// site when none; a run that touches several roots unites them (rare). Every site then holds
// its run's root, and a last pass walks each site to its final root and stores that root's
// local index in the slab. A tile's roots are the smallest sites of their pieces (roots are
// only hooked under smaller ones), so the global union-find keeps its smallest-index roots.
// The occupied roots are also marked in `roots`: word TILE * tile + r, bit x, for the site
// of the tile's row r and column x (lattice_compress_roots).
extern "C" __global__ void lattice_tile(const u8 *mask, u32 *parent, u32 *roots, u32 n, u32 dim,
                                        u32 l, u32 plane, u32 thickness) {
    __shared__ u32 tile_par[TILE_WARPS][TILE * TILE];
    __shared__ u8 tile_mask[TILE_WARPS][TILE * TILE];
    u64 tile = thread_index() / WARP, rows = n / l;
    u32 across = (l + TILE - 1) / TILE, tx = lane_id(), x0 = (u32)(tile % across) * TILE;
    u64 row0 = tile / across * TILE;
    if (row0 >= rows) return;  // the whole warp
    u32 *par = tile_par[tile % TILE_WARPS];
    u8 *masks = tile_mask[tile % TILE_WARPS];
    u32 x = x0 + tx;
    u32 height = rows - row0 < TILE ? (u32)(rows - row0) : TILE;
    // All the tile's loads in flight at once.
#pragma unroll
    for (u32 r = 0; r < TILE; r++)
        masks[r * TILE + tx] = x < l && r < height ? mask[(row0 + r) * l + x] : 0;
    __syncwarp();
    u8 fast = 1 << (dim - 1), up = 1 << (dim - 2);
    u32 above = NONE;  // the root of the site below this lane's when their bond is open
    for (u32 r = 0; r < height; r++) {
        u8 m = masks[r * TILE + tx];
        u8 left_mask = __shfl_up_sync(FULL, m, 1);
        u32 linked = __ballot_sync(FULL, tx > 0 && x < l && (left_mask & fast));
        u32 upto = tx == TILE - 1 ? FULL : (2u << tx) - 1u;
        u32 start = TILE - 1 - __clz(~linked & upto);
        u32 end = __ffs(~(linked >> 1) & ~((1u << tx) - 1u)) - 1;
        // The run's smallest root below (a suffix minimum within the run, read at its start).
        u32 low = above;
        for (u32 d = 1; d < WARP; d *= 2) {
            u32 other = __shfl_down_sync(FULL, low, d);
            if (tx + d <= end) low = min(low, other);
        }
        low = __shfl_sync(FULL, low, start);
        if (above != NONE && above != low) uf_unite(par, above, low);
        __syncwarp();
        u32 root = low == NONE ? r * TILE + start : uf_root(par, low);
        par[r * TILE + tx] = root;
        u32 i = (u32)((row0 + r) * l + x);
        bool bonded = x < l && r + 1 < height && (m & up) &&
                      bond_inside(i, dim - 2, dim, l, plane, thickness);
        above = bonded ? root : NONE;
        __syncwarp();
    }
    u32 word = 0;  // lane r's: the roots of row r
    for (u32 r = 0; r < height; r++) {
        u32 k = r * TILE + tx, root = uf_root(par, k);
        if (x < l) parent[(row0 + r) * l + x] = (u32)((row0 + root / TILE) * l + x0 + root % TILE);
        u32 marks = __ballot_sync(FULL, x < l && root == k && !(masks[k] & VACANT));
        if (tx == r) word = marks;
    }
    roots[tile * TILE + tx] = word;
}

// Whether the bond `bit` from site i (x > 0 along the fast axis) up to site j is implied: its
// left neighbour has the same bond and both rows are bonded across from the left.
__device__ __forceinline__ bool bond_implied(const u8 *mask, u32 i, u32 j, u32 x, u8 bit,
                                             u8 fast) {
    if (x == 0) return false;
    u8 left = mask[i - 1];
    return (left & bit) && (left & fast) && (mask[j - 1] & fast);
}

// Unite the bonds lattice_tile left: fast-axis bonds from a tile's last column to the next
// tile, bonds from a tile's last row to the next row, and every bond along the axes below
// the tile's plane; a bond along a slow axis is skipped where its left neighbour has the
// same bond and both rows are bonded across (implied).
extern "C" __global__ void lattice_seams(const u8 *mask, u32 *parent, u32 n, u32 dim, u32 l,
                                         u32 plane, u32 thickness) {
    u64 i64 = thread_index();
    if (i64 >= n) return;
    u32 i = (u32)i64;
    u8 m = mask[i] & ~VACANT;
    if (!m) return;
    u32 fast_axis = dim - 1;
    u8 fast = 1 << fast_axis;
    u32 x = i % l;
    if ((m & fast) && x + 1 < l && (x + 1) % TILE == 0) uf_unite(parent, i, i + 1);
    bool last_row = (i / l) % TILE == TILE - 1;
    for (u32 a = 0; a < fast_axis; a++) {
        u8 bit = 1 << a;
        if (!(m & bit) || (a + 2 == dim && !last_row) ||
            !bond_inside(i, a, dim, l, plane, thickness))
            continue;
        u32 j = i + local_stride(a, dim, l, plane);
        if (!bond_implied(mask, i, j, x, bit, fast)) uf_unite(parent, i, j);
    }
}

// lattice_seams in 2D, where only tile borders have bonds left: a thread per site of a
// tile's last column (the fast-axis bond to the next tile; `cols` of them a row), then a
// thread per site of a tile's last row (the slow-axis bond to the next row), so that the
// other 15 of 16 sites are not read at all.
extern "C" __global__ void lattice_seams_2d(const u8 *mask, u32 *parent, u32 n, u32 l, u32 plane,
                                            u32 thickness) {
    const u8 slow = 1, fast = 2;  // the bits of axes 0 and 1
    u64 t = thread_index();
    u32 rows = n / l, cols = (l - 1) / TILE;
    u64 column_sites = (u64)rows * cols;
    if (t < column_sites) {
        u32 i = (u32)(t / cols) * l + (u32)(t % cols) * TILE + TILE - 1;
        if ((mask[i] & (VACANT | fast)) == fast) uf_unite(parent, i, i + 1);
        return;
    }
    t -= column_sites;
    if (t >= (u64)(rows / TILE) * l) return;
    u32 x = (u32)(t % l), i = ((u32)(t / l) * TILE + TILE - 1) * l + x;
    if ((mask[i] & (VACANT | slow)) != slow || !bond_inside(i, 0, 2, l, plane, thickness)) return;
    u32 j = i + local_stride(0, 2, l, plane);
    if (!bond_implied(mask, i, j, x, slow, fast)) uf_unite(parent, i, j);
}

// Every root that lattice_tile marked pointed straight at its root after the seams, a thread
// per word of marks (a tile's row). The seams hooked only such roots, and every parent is now
// one of them (or the site itself), so after this each site's root is at most two steps away.
extern "C" __global__ void lattice_compress_roots(u32 *parent, const u32 *roots, u32 words,
                                                  u32 l) {
    u64 t = thread_index();
    if (t >= words) return;
    u32 across = (l + TILE - 1) / TILE, tile = (u32)(t / TILE), r = (u32)(t % TILE);
    u32 first = (tile / across * TILE + r) * l + tile % across * TILE;
    for (u32 bits = roots[t]; bits; bits &= bits - 1) {
        u32 i = first + __ffs(bits) - 1, p = parent[i];
        if (p == i) continue;
        u32 root = uf_root(parent, p);
        if (root != p) parent[i] = root;
    }
}

// Site i pointed at its root, given its parent p (after lattice_compress_roots: the root is
// p's parent).
__device__ __forceinline__ void compress_site(u32 *parent, u32 i, u32 p) {
    if (p == i) return;
    u32 root = parent[p];
    if (root != p) parent[i] = root;
}

// Every site pointed straight at its root, four consecutive sites a thread (their parents in
// one 16-byte load); a site already pointing there is not written (vacant sites, and the
// sites of clusters inside one tile: most of them).
extern "C" __global__ void lattice_compress(u32 *parent, u32 n) {
    u64 first = 4 * thread_index();
    if (first >= n) return;
    u32 i = (u32)first;
    if (n - i >= 4) {
        uint4 p = reinterpret_cast<const uint4 *>(parent)[i / 4];
        compress_site(parent, i, p.x);
        compress_site(parent, i + 1, p.y);
        compress_site(parent, i + 2, p.z);
        compress_site(parent, i + 3, p.w);
        return;
    }
    for (; i < n; i++) compress_site(parent, i, parent[i]);
}

// ---- Boundary graph and relabelling (src/lattice/engine.rs) --------------------------------

// The root and mask of each face site.
extern "C" __global__ void lattice_faces(const u8 *mask, const u32 *parent, const u32 *sites,
                                         u32 count, u32 *roots, u8 *masks) {
    u64 k = thread_index();
    if (k >= count) return;
    u32 s = sites[k];
    u8 m = mask[s];
    masks[k] = m;
    roots[k] = (m & VACANT) ? NO_ROOT : parent[s];
}

// The root of node k points at ROOT_FLAG | k.
extern "C" __global__ void lattice_mark(u32 *parent, const u32 *roots, u32 count) {
    u64 k = thread_index();
    if (k < count) parent[roots[k]] = ROOT_FLAG | (u32)k;
}

// The root of site i with parent p after lattice_mark.
__device__ __forceinline__ u32 root_given(u32 i, u32 p) { return (p & ROOT_FLAG) ? i : p; }

// The root of site i after lattice_mark.
__device__ __forceinline__ u32 root_of(const u32 *parent, u32 i) {
    return root_given(i, parent[i]);
}

// The final label of occupied site i with parent p after lattice_mark.
__device__ __forceinline__ u64 site_label(const u32 *parent, const u64 *table, u32 i, u32 p,
                                          u64 offset) {
    u32 root = root_given(i, p);
    u32 q = parent[root];
    return (q & ROOT_FLAG) ? table[q & ~ROOT_FLAG] : offset + root;
}

// Every site's label, four consecutive sites a thread (16 bytes of parents and 4 of masks
// loaded, 32 bytes of labels stored at once).
extern "C" __global__ void lattice_remap(const u8 *mask, const u32 *parent, const u64 *table,
                                         u64 *labels, u32 n, u64 offset) {
    u64 first = 4 * thread_index();
    if (first >= n) return;
    u32 i = (u32)first;
    if (n - i >= 4) {
        u32 m = reinterpret_cast<const u32 *>(mask)[i / 4];
        uint4 p = reinterpret_cast<const uint4 *>(parent)[i / 4];
        u32 ps[4] = {p.x, p.y, p.z, p.w};
        u64 out[4];
#pragma unroll
        for (u32 k = 0; k < 4; k++)
            out[k] = (m >> (8 * k) & VACANT) ? NO_LABEL
                                              : site_label(parent, table, i + k, ps[k], offset);
        ulonglong2 *to = reinterpret_cast<ulonglong2 *>(labels) + i / 2;
        to[0] = make_ulonglong2(out[0], out[1]);
        to[1] = make_ulonglong2(out[2], out[3]);
        return;
    }
    for (; i < n; i++)
        labels[i] = (mask[i] & VACANT) ? NO_LABEL : site_label(parent, table, i, parent[i], offset);
}

// ---- Cluster sizes (src/lattice/clusters.rs) ------------------------------------------------

// size[root] = occupied sites under the root; lanes of a warp with one root add once.
extern "C" __global__ void lattice_sizes(const u8 *mask, const u32 *parent, u32 *size, u32 n) {
    u64 i = thread_index();
    bool occ = i < n && !(mask[i] & VACANT);
    u32 root = occ ? root_of(parent, (u32)i) : NO_ROOT;
    u32 same = __match_any_sync(FULL, root);
    if (occ && lane_id() == __ffs(same) - 1) atomicAdd(&size[root], (u32)__popc(same));
}

// The interior clusters (unflagged roots): totals = {clusters, sites, sum of squared sizes},
// histogram[k] = clusters of 2^k .. 2^(k+1)-1 sites, largest = max of (size << 32 | ~root).
extern "C" __global__ void lattice_tally(const u8 *mask, const u32 *parent, const u32 *size,
                                         u32 n, u64 *totals, u64 *histogram, u64 *largest) {
    __shared__ u64 bins[64];
    for (u32 k = threadIdx.x; k < 64; k += blockDim.x) bins[k] = 0;
    __syncthreads();
    u64 i = thread_index();
    bool root = i < n && !(mask[i] & VACANT) && parent[i] == (u32)i;
    u64 s = root ? size[i] : 0;
    if (root) atomicAdd(&bins[63 - __clzll(s)], 1ULL);
    u64 key = root ? (s << 32) | (u64)(NO_ROOT - (u32)i) : 0;
    for (int d = WARP / 2; d > 0; d /= 2) {
        u64 other = __shfl_xor_sync(FULL, key, d);
        key = other > key ? other : key;
    }
    if (lane_id() == 0 && key) atomicMax(largest, key);
    const int index[3] = {0, 1, 2};
    const u64 value[3] = {root ? 1ULL : 0ULL, s, s * s};
    block_add<3>(totals, index, value);
    __syncthreads();
    for (u32 k = threadIdx.x; k < 64; k += blockDim.x)
        if (bins[k]) atomicAdd(&histogram[k], bins[k]);
}

// The local size of each node root.
extern "C" __global__ void lattice_node_sizes(const u32 *size, const u32 *roots, u32 count,
                                              u64 *out) {
    u64 k = thread_index();
    if (k < count) out[k] = size[roots[k]];
}
