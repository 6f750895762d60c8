// Connected components on the GPU (host side: src/graph/components/gpu.rs; the CPU twin:
// src/graph/components/cpu.rs).
// Compiled at start by NVRTC.
//
// Local step, ECL-CC style with Afforest's sampling (Sutton et al. 2018): `parent` is the
// prelude's union-find forest over the rank's own vertices (every root the smallest index of
// its tree). Afforest: first link every vertex to its first SAMPLE neighbours and
// compress; then the most frequent root (the giant component, found from a sample) is known,
// and only vertices outside it link their remaining neighbours. An edge between the giant
// and another vertex is still linked, from that vertex's side, since every edge is in both
// rows.
//
// Rounds across ranks: `cut_min` gives each local component (by its root) the smallest
// ghost label over its cut edges, `relabel` hands that to its vertices and counts changes.

extern "C" __global__ void cc_init(u32 n, u32 *parent) {
    u64 v = thread_index();
    if (v < n) parent[v] = (u32)v;
}

// Link each vertex to its neighbour number `k` (rows shorter than k + 1 skip).
extern "C" __global__ void cc_link_nth(const u64 *offsets, const u32 *adj, u32 n, u32 k,
                                       u32 *parent) {
    u64 v = thread_index();
    if (v >= n) return;
    u64 at = offsets[v] + k;
    if (at < offsets[v + 1]) uf_unite(parent, (u32)v, adj[at]);
}

// Link each vertex outside the component rooted at `giant` to its neighbours from number
// `from` on.
extern "C" __global__ void cc_link_rest(const u64 *offsets, const u32 *adj, u32 n, u32 from,
                                        u32 giant, u32 *parent) {
    u64 v = thread_index();
    if (v >= n || uf_find(parent, (u32)v) == giant) return;
    for (u64 at = offsets[v] + from; at < offsets[v + 1]; at++) uf_unite(parent, (u32)v, adj[at]);
}

// Point every vertex straight at its root.
extern "C" __global__ void cc_compress(u32 n, u32 *parent) {
    u64 v = thread_index();
    if (v < n) parent[v] = uf_root(parent, (u32)v);
}

// The roots of `count` vertices spread over 0..n (Knuth's multiplicative hash of the
// sample number), from which the host takes the most frequent.
extern "C" __global__ void cc_sample_roots(const u32 *parent, u32 n, u32 count, u32 *out) {
    u64 i = thread_index();
    if (i < count) out[i] = parent[(u32)((i * 2654435761ull) % n)];
}

// Labels from the compressed forest: the global id of each vertex's root (`first` is the
// rank's first vertex); `comp_min` starts as the label (read at roots only).
extern "C" __global__ void cc_label(u32 n, u64 first, const u32 *parent, u64 *labels,
                                    u64 *comp_min) {
    u64 v = thread_index();
    if (v >= n) return;
    u64 label = first + parent[v];
    labels[v] = label;
    comp_min[v] = label;
}

// The labels of the own vertices other ranks hold as ghosts, in the order they ask.
extern "C" __global__ void cc_gather(const u32 *send_local, u64 count, const u64 *labels,
                                     u64 *send) {
    u64 i = thread_index();
    if (i < count) send[i] = labels[send_local[i]];
}

// Marks the ghosts whose label changed since it was last absorbed (`absorbed`: that label
// plus one, 0 for none yet; it takes the new one): the others' cut edges have nothing new.
extern "C" __global__ void cc_changed_ghosts(const u64 *ghost_labels, u64 ghosts, u64 *absorbed,
                                             u8 *changed) {
    u64 g = thread_index();
    if (g >= ghosts) return;
    bool differs = ghost_labels[g] + 1 != absorbed[g];
    if (differs) absorbed[g] = ghost_labels[g] + 1;
    changed[g] = differs;
}

// Each cut edge to a changed ghost lowers its own vertex's component label to the ghost's.
extern "C" __global__ void cc_cut_min(const u32 *cut_own, const u32 *cut_ghost, u64 count,
                                      const u8 *changed, const u32 *parent,
                                      const u64 *ghost_labels, u64 *comp_min) {
    u64 i = thread_index();
    if (i >= count || !changed[cut_ghost[i]]) return;
    u32 root = parent[cut_own[i]];
    u64 label = ghost_labels[cut_ghost[i]];
    if (label < comp_min[root]) atomicMin(&comp_min[root], label);
}

extern "C" __global__ void cc_relabel(u32 n, const u32 *parent, const u64 *comp_min,
                                      u64 *labels, u64 *changed) {
    u64 v = thread_index();
    if (v >= n) return;
    u64 label = comp_min[parent[v]];
    bool differs = label != labels[v];
    if (differs) labels[v] = label;
    warp_add(changed, differs ? 1u : 0u);
}

// Shiloach-Vishkin steps across ranks (src/graph/components/mod.rs): the component labels of some own
// vertices, and lowering them.
extern "C" __global__ void cc_component_labels(const u32 *vertices, u64 count, const u32 *parent,
                                               const u64 *comp_min, u64 *out) {
    u64 i = thread_index();
    if (i < count) out[i] = comp_min[parent[vertices[i]]];
}

extern "C" __global__ void cc_lower(const u32 *vertices, const u64 *labels, u64 count,
                                    const u32 *parent, u64 *comp_min) {
    u64 i = thread_index();
    if (i >= count) return;
    u32 root = parent[vertices[i]];
    if (labels[i] < comp_min[root]) atomicMin(&comp_min[root], labels[i]);
}

// The roots of the local components with a cut edge: flagged, then listed (in no particular
// order; the host sorts them).
extern "C" __global__ void cc_mark_boundary(const u32 *cut_own, u64 count, const u32 *parent,
                                            u32 *flags) {
    u64 i = thread_index();
    if (i < count) flags[parent[cut_own[i]]] = 1;
}

extern "C" __global__ void cc_list_flagged(const u32 *flags, u32 n, u32 *out, u64 *count) {
    u64 v = thread_index();
    bool take = v < n && flags[v];
    u64 at = warp_slot(take, count);
    if (take) out[at] = (u32)v;
}
