// Euler circuits on one GPU (host side: src/euler/gpu.rs; the CPU path, whose results these
// kernels reproduce exactly: src/euler/darts.rs, jump.rs, forest.rs, splice.rs).
//
// Slots are the darts sorted by (vertex, class | order, dart) with u32 indices (2m < 2^32):
// vertex_start[x] .. vertex_start[x + 1] are vertex x's. A vertex's work (sorting its darts,
// pairing, its trails' links, the splice) is one thread's, which suits the low degrees of
// the Eulerian generators; the rest is one thread per slot, node or link. NIL ends a list.

#define NIL 0xffffffffu
#define NO_BEST 0xffffffffffffffffULL

// The pairing's sort key of a dart (darts::Darts::pair): class (a digraph's tails after its
// heads) in the top bit above the order. pairing: 0 adjacency, 1 random, 2 straight.
__device__ __forceinline__ u64 pair_key(u32 dart, u32 directed, u32 pairing, u64 key,
                                        u64 axes) {
    u64 order = pairing == 0 ? (u64)dart
                             : (pairing == 1 ? draw(key, dart) >> 1 : (u64)(dart / 2) % axes);
    u64 cls = (directed && dart % 2 == 0) ? 1ULL << 63 : 0;
    return cls | order;
}

// ---- Phase 1: pair ----------------------------------------------------------------------

// Darts per vertex.
extern "C" __global__ void euler_count(const u32 *end_vertex, u64 count, u32 *degree) {
    u64 k = thread_index();
    if (k < count) atomicAdd(&degree[end_vertex[k]], 1u);
}

// Each dart into a free slot of its vertex (cursor starts at vertex_start).
extern "C" __global__ void euler_place(const u32 *end_vertex, const u32 *end_dart, u64 count,
                                       u32 *cursor, u32 *dart) {
    u64 k = thread_index();
    if (k < count) dart[atomicAdd(&cursor[end_vertex[k]], 1u)] = end_dart[k];
}

// Per vertex: sort its slots by (key, dart), record their vertex, pair them (consecutive
// slots for a graph, the i-th head with the i-th tail for a digraph), and note each dart's
// slot.
extern "C" __global__ void euler_pair(const u32 *vertex_start, u32 n, u32 directed,
                                      u32 pairing, u64 key, u64 axes, u32 *dart, u32 *vertex,
                                      u32 *partner, u32 *slot_of) {
    u64 x = thread_index();
    if (x >= n) return;
    u32 lo = vertex_start[x], hi = vertex_start[x + 1];
    for (u32 i = lo + 1; i < hi; i++) {
        u32 d = dart[i];
        u64 k = pair_key(d, directed, pairing, key, axes);
        u32 j = i;
        while (j > lo) {
            u32 e = dart[j - 1];
            u64 ke = pair_key(e, directed, pairing, key, axes);
            if (ke < k || (ke == k && e < d)) break;
            dart[j] = e;
            j--;
        }
        dart[j] = d;
    }
    u32 half = (hi - lo) / 2;
    for (u32 j = 0; j < half; j++) {
        u32 a = directed ? lo + j : lo + 2 * j;
        u32 b = directed ? lo + half + j : lo + 2 * j + 1;
        partner[a] = b;
        partner[b] = a;
    }
    for (u32 i = lo; i < hi; i++) {
        vertex[i] = (u32)x;
        slot_of[dart[i]] = i;
    }
}

// The slot of the other end of each slot's edge.
extern "C" __global__ void euler_mate(const u32 *dart, const u32 *slot_of, u64 slots,
                                      u32 *mate) {
    u64 s = thread_index();
    if (s < slots) mate[s] = slot_of[dart[s] ^ 1u];
}

// ---- Phases 2 and 5: pointer jumping over next = mate[partner] ---------------------------

// next[s] = mate[partner[s]], with the successors `cut_a` and `cut_b` replaced by NIL (pass
// NIL to cut nothing); value[s] = the slot's edge (for the cycle minima).
extern "C" __global__ void euler_next(const u32 *mate, const u32 *partner, const u32 *dart,
                                      u64 slots, u32 cut_a, u32 cut_b, u32 *next,
                                      u32 *value) {
    u64 s = thread_index();
    if (s >= slots) return;
    u32 t = mate[partner[s]];
    next[s] = (t == cut_a || t == cut_b) ? NIL : t;
    value[s] = dart[s] / 2;
}

// One round of cycle minima (Wyllie): value = min(value, value[next]), next = next[next],
// into the other buffers; counts the values that fell.
extern "C" __global__ void euler_min_round(const u32 *next, const u32 *value, u64 slots,
                                           u32 *next_out, u32 *value_out, u64 *changed) {
    u64 s = thread_index();
    u64 fell = 0;
    if (s < slots) {
        u32 t = next[s];
        u32 v = value[s], w = value[t];
        value_out[s] = w < v ? w : v;
        next_out[s] = next[t];
        fell = w < v;
    }
    const int index[1] = {0};
    const u64 add[1] = {fell};
    block_add(changed, index, add);
}

// List ranking set-up: dist = steps to the next slot (0 at a list's end), end = the slot
// itself at a list's end.
extern "C" __global__ void euler_rank_init(const u32 *next, u64 slots, u32 *dist, u32 *end) {
    u64 s = thread_index();
    if (s >= slots) return;
    dist[s] = next[s] == NIL ? 0 : 1;
    end[s] = (u32)s;
}

// One round of list ranking (Wyllie): slots whose successor is not the end add its distance
// and jump; counts the slots still jumping.
extern "C" __global__ void euler_rank_round(const u32 *next, const u32 *dist, const u32 *end,
                                            u64 slots, u32 *next_out, u32 *dist_out,
                                            u32 *end_out, u64 *active) {
    u64 s = thread_index();
    u64 jumping = 0;
    if (s < slots) {
        u32 t = next[s];
        if (t == NIL) {
            next_out[s] = NIL;
            dist_out[s] = dist[s];
            end_out[s] = end[s];
        } else {
            next_out[s] = next[t];
            dist_out[s] = dist[s] + dist[t];
            end_out[s] = end[t];
            jumping = next[t] != NIL;
        }
    }
    const int index[1] = {0};
    const u64 add[1] = {jumping};
    block_add(active, index, add);
}

// Slots at which a trail's smallest edge sits (two per trail: one per direction).
extern "C" __global__ void euler_trail_starts(const u32 *label, const u32 *dart, u64 slots,
                                              u64 *count) {
    u64 s = thread_index();
    u64 start = s < slots && label[s] == dart[s] / 2;
    const int index[1] = {0};
    const u64 add[1] = {start};
    block_add(count, index, add);
}

// ---- Phases 3 and 4: the trails at a vertex ----------------------------------------------
// A pair is named by its smaller slot; a trail's link at vertex x is its smallest pair there
// (splice::trail_links). The links of x in label order, by repeated selection (O(degree ×
// trails) per vertex): the smallest (label, slot) above `after`.

__device__ __forceinline__ bool next_link(const u32 *partner, const u32 *label, u32 lo, u32 hi,
                                          u64 after, u64 &found) {
    u64 best = NO_BEST;
    for (u32 s = lo; s < hi; s++) {
        if (s > partner[s]) continue;
        if (after != NO_BEST && label[s] <= (u32)(after >> 32)) continue;
        u64 k = (u64)label[s] << 32 | s;
        if (k < best) best = k;
    }
    found = best;
    return best != NO_BEST;
}

// The links after the first (t1) as offers (t1, t, link slot) for the spanning forest; with
// `write` 0 only counted.
extern "C" __global__ void euler_offers(const u32 *vertex_start, u32 n, const u32 *partner,
                                        const u32 *label, u32 write, u32 *offers, u64 *count) {
    u64 x = thread_index();
    if (x >= n) return;
    u32 lo = vertex_start[x], hi = vertex_start[x + 1];
    u64 link, first;
    if (!next_link(partner, label, lo, hi, NO_BEST, first)) return;
    link = first;
    while (next_link(partner, label, lo, hi, link, link)) {
        u64 at = atomicAdd(count, 1ULL);
        if (write) {
            offers[3 * at] = (u32)(first >> 32);
            offers[3 * at + 1] = (u32)(link >> 32);
            offers[3 * at + 2] = (u32)link;
        }
    }
}

// Phase 4 at every vertex at once: the joined links (the first, and those the forest chose)
// re-paired cyclically in label order, (a_j, b_(j+1)); for a digraph a is the head slot. Reads
// `partner`, writes `repaired` (a copy of it beforehand).
extern "C" __global__ void euler_splice(const u32 *vertex_start, u32 n, const u32 *partner,
                                        const u32 *label, const u8 *joined, const u32 *dart,
                                        u32 directed, u32 *repaired) {
    u64 x = thread_index();
    if (x >= n) return;
    u32 lo = vertex_start[x], hi = vertex_start[x + 1];
    u64 link = NO_BEST;
    u32 first_b = 0, prev_a = 0, k = 0;
    bool first_link = true;
    while (next_link(partner, label, lo, hi, link, link)) {
        u32 s = (u32)link;
        bool take = first_link || joined[s];
        first_link = false;
        if (!take) continue;
        u32 p = partner[s];
        bool swap = directed && dart[s] % 2 == 0;
        u32 a = swap ? p : s, b = swap ? s : p;
        if (k == 0) {
            first_b = b;
        } else {
            repaired[prev_a] = b;
            repaired[b] = prev_a;
        }
        prev_a = a;
        k++;
    }
    if (k >= 2) {
        repaired[prev_a] = first_b;
        repaired[first_b] = prev_a;
    }
}

// ---- Phase 3: the spanning forest of the trail graph (forest::spanning_forest) -----------

// Every trail its own root, with no offer yet.
extern "C" __global__ void euler_forest_init(u32 *root, u64 *best, u64 nodes) {
    u64 i = thread_index();
    if (i >= nodes) return;
    root[i] = (u32)i;
    best[i] = NO_BEST;
}

// Each offer between two trees offers its larger root the smaller, with the link id.
extern "C" __global__ void euler_forest_offer(const u32 *offers, u64 count, const u32 *root,
                                              u64 *best) {
    u64 k = thread_index();
    if (k >= count) return;
    u32 ra = root[offers[3 * k]], rb = root[offers[3 * k + 1]];
    if (ra == rb) return;
    u32 hi = ra > rb ? ra : rb, lo = ra > rb ? rb : ra;
    atomicMin(&best[hi], (u64)lo << 32 | offers[3 * k + 2]);
}

// Each root with an offer hooks under the smallest offered root; its link joins the tree.
extern "C" __global__ void euler_forest_hook(u64 *best, u64 nodes, u32 *root, u8 *joined,
                                             u64 *hooked) {
    u64 i = thread_index();
    u64 hook = 0;
    if (i < nodes && best[i] != NO_BEST) {
        root[i] = (u32)(best[i] >> 32);
        joined[(u32)best[i]] = 1;
        best[i] = NO_BEST;
        hook = 1;
    }
    const int index[1] = {0};
    const u64 add[1] = {hook};
    block_add(hooked, index, add);
}

// One shortcut step: root = root[root]; counts the changes.
extern "C" __global__ void euler_forest_jump(u32 *root, u64 nodes, u64 *changed) {
    u64 i = thread_index();
    u64 moved = 0;
    if (i < nodes) {
        u32 r = root[i], up = root[r];
        if (up != r) {
            root[i] = up;
            moved = 1;
        }
    }
    const int index[1] = {0};
    const u64 add[1] = {moved};
    block_add(changed, index, add);
}

// ---- The circuit ----------------------------------------------------------------------------

// Slots on the list that ends at `last` at position m - 1 - dist: (edge << 1 | forward) and
// the vertex arrived at.
extern "C" __global__ void euler_place_circuit(const u32 *dist, const u32 *end, const u32 *dart,
                                               const u32 *vertex, u64 slots, u32 last, u64 m,
                                               u64 *code, u32 *arrive, u64 *placed) {
    u64 s = thread_index();
    u64 on = 0;
    if (s < slots && end[s] == last && dist[s] < m) {
        u64 p = m - 1 - dist[s];
        u32 d = dart[s];
        code[p] = (u64)(d / 2) << 1 | (d & 1);
        arrive[p] = vertex[s];
        on = 1;
    }
    const int index[1] = {0};
    const u64 add[1] = {on};
    block_add(placed, index, add);
}
