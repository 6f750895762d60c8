// Euler circuits on GPUs (host side: src/workloads/euler/gpu.rs, one rank; gpu_ranks.rs,
// gpu_mates.rs, gpu_ruling.rs and gpu_forest.rs, several; the CPU path, whose results these
// kernels reproduce exactly: src/workloads/euler/darts.rs, jump.rs, ruling.rs, forest.rs,
// splice.rs).
//
// Slots are a rank's darts sorted by (vertex, class | order, dart) with u32 indices
// (2m < 2^32): vertex_start[x] .. vertex_start[x + 1] are own vertex x's. A vertex's work (sorting its darts,
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

// Each dart into a free slot of its vertex (cursor starts at vertex_start); with `identity`
// edge-end k is dart k (one rank's endpoint array: dart d's vertex is ends[d]).
extern "C" __global__ void euler_place(const u32 *end_vertex, const u32 *end_dart,
                                       u32 identity, u64 count, u32 *cursor, u32 *dart) {
    u64 k = thread_index();
    if (k < count) dart[atomicAdd(&cursor[end_vertex[k]], 1u)] = identity ? (u32)k : end_dart[k];
}

// The slot starts from the degrees (src/device/scan.rs).
SCAN_KERNELS(u32)

// Per vertex: sort its slots by (key, dart), pair them (consecutive slots for a graph, the
// i-th head with the i-th tail for a digraph), and with `note` note each dart's slot.
extern "C" __global__ void euler_pair(const u32 *vertex_start, u32 n, u32 directed,
                                      u32 pairing, u64 key, u64 axes, u32 note, u32 *dart,
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
    if (note)
        for (u32 i = lo; i < hi; i++) slot_of[dart[i]] = i;
}

// Each slot's (rank-local) vertex, from the slot starts.
extern "C" __global__ void euler_vertices(const u32 *vertex_start, u32 n, u32 *vertex) {
    u64 x = thread_index();
    if (x >= n) return;
    for (u32 i = vertex_start[x]; i < vertex_start[x + 1]; i++) vertex[i] = (u32)x;
}

// The slot of the other end of each slot's edge.
extern "C" __global__ void euler_mate(const u32 *dart, const u32 *slot_of, u64 slots,
                                      u32 *mate) {
    u64 s = thread_index();
    if (s < slots) mate[s] = slot_of[dart[s] ^ 1u];
}

// Several ranks (src/workloads/euler/gpu_mates.rs): each dart's *home* rank holds the darts
// home_first .. home_first + block (block even, so both darts of an edge share a home). Each
// slot asks its dart's home, Pair(dart, local slot) packed high/low; the home notes where each
// of its darts arrived, and answers every arrival with Pair(asker's local slot, global slot
// of dart ^ 1): that global slot is the sender's first slot (`slot_first` by rank, found from
// the runs received, `run_start`, ranks + 1 of them) plus the local slot it sent.
extern "C" __global__ void euler_mate_ask(const u32 *dart, u64 slots, u64 *ask) {
    u64 s = thread_index();
    if (s < slots) ask[s] = ((u64)dart[s] << 32) | s;
}

extern "C" __global__ void euler_mate_note(const u64 *got, u64 count, u64 home_first,
                                           u32 *arrived) {
    u64 i = thread_index();
    if (i < count) arrived[(got[i] >> 32) - home_first] = (u32)i;
}

extern "C" __global__ void euler_mate_answer(const u64 *got, u64 count, u64 home_first,
                                             const u32 *arrived, const u64 *run_start,
                                             const u64 *slot_first, u32 ranks, u64 *answer) {
    u64 i = thread_index();
    if (i >= count) return;
    u64 j = arrived[((got[i] >> 32) ^ 1ULL) - home_first];
    u32 r = 0;
    while (r + 1 < ranks && run_start[r + 1] <= j) r++;
    answer[i] = ((got[i] & 0xffffffffULL) << 32) | (slot_first[r] + (got[j] & 0xffffffffULL));
}

extern "C" __global__ void euler_mate_store(const u64 *answer, u64 count, u32 *mate) {
    u64 i = thread_index();
    if (i < count) mate[answer[i] >> 32] = (u32)answer[i];
}

// ---- Phases 2 and 5: cycle minima and list ranking over next = mate[partner] -------------

// next[s] = mate[partner[s]], with the successors `cut_a` and `cut_b` replaced by NIL (pass
// NIL to cut nothing). The cycle minima are over each slot's edge, dart / 2.
extern "C" __global__ void euler_next(const u32 *mate, const u32 *partner, u64 slots,
                                      u32 cut_a, u32 cut_b, u32 *next) {
    u64 s = thread_index();
    if (s >= slots) return;
    u32 t = mate[partner[s]];
    next[s] = (t == cut_a || t == cut_b) ? NIL : t;
}

// The local successors of global ones: NIL where another rank's slot (or none) follows.
extern "C" __global__ void euler_local_next(const u32 *gnext, u64 slots, u32 first, u32 *next) {
    u64 s = thread_index();
    if (s >= slots) return;
    u32 t = gnext[s];
    next[s] = t != NIL && (u64)(t - first) < slots ? t - first : NIL;
}

// Cycle minima and list ranking collapse runs first (as the CPU path's jump.rs does): about one
// slot in SPLIT_EVERY, chosen by a hash of the slot, is a splitter, and (for lists) so is
// every list's first slot; each run from a head to the next is walked by one thread, pointer
// jumping runs over the heads only, and a second walk hands each slot its head's result. So
// the jumping rounds follow log2(heads), the work the slots.
#define SPLIT_EVERY 256

__device__ __forceinline__ bool splitter(u32 s) { return mix64(s) % SPLIT_EVERY == 0; }

// Whether a run goes on to slot t: not past a list's end or another rank's slot (NIL), nor a
// splitter. (The other heads, the slots no local slot points at, are never a successor.)
__device__ __forceinline__ bool run_goes_on(u32 t) { return t != NIL && !splitter(t); }

// The heads, in no particular order: splitters, the slots `first_a` and `first_b` (NIL: none),
// and with `lists` every slot no slot points at (`pointed` 0); with `write` 0 only counted (so
// that `heads` is allocated to fit).
extern "C" __global__ void euler_heads(u64 slots, u32 first_a, u32 first_b, u32 lists,
                                       const u8 *pointed, u32 write, u32 *heads, u64 *count) {
    u64 s = thread_index();
    if (s >= slots) return;
    bool head = splitter((u32)s) || s == first_a || s == first_b || (lists && !pointed[s]);
    u64 at = warp_slot(head, count);
    if (head && write) heads[at] = (u32)s;
}

// Marks the slots some slot points at.
extern "C" __global__ void euler_pointed(const u32 *next, u64 slots, u8 *pointed) {
    u64 s = thread_index();
    if (s < slots && next[s] != NIL) pointed[next[s]] = 1;
}

// Each head's run (it and the slots up to the next head): its smallest edge, the next head
// (NIL: another rank's slot follows) and, with `open`, its last slot.
extern "C" __global__ void euler_min_walk(const u32 *heads, u64 count, const u32 *next,
                                          const u32 *dart, u32 open, u32 *run_min,
                                          u32 *run_next, u32 *run_end) {
    u64 k = thread_index();
    if (k >= count) return;
    u32 h = heads[k], m = dart[h] / 2, last = h, t = next[h];
    while (run_goes_on(t)) {
        m = min(m, dart[t] / 2);
        last = t;
        t = next[t];
    }
    run_min[h] = m;
    run_next[h] = t;
    if (open) run_end[h] = last;
}

// One jumping round over the splitters, read into `out` (min, next per head index) and
// written back by euler_min_store, so that no read sees a value of this round (read in place,
// a head could take a successor's new pointer with its old minimum); counts the minima that
// fell.
extern "C" __global__ void euler_min_jump(const u32 *heads, u64 count, const u32 *run_min,
                                          const u32 *run_next, u32 *out, u64 *changed) {
    u64 k = thread_index();
    u64 fell = 0;
    if (k < count) {
        u32 h = heads[k], t = run_next[h];
        u32 m = run_min[t] < run_min[h] ? run_min[t] : run_min[h];
        fell = m < run_min[h];
        out[2 * k] = m;
        out[2 * k + 1] = run_next[t];
    }
    const int index[1] = {0};
    const u64 add[1] = {fell};
    block_add(changed, index, add);
}

extern "C" __global__ void euler_min_store(const u32 *heads, u64 count, const u32 *out,
                                           u32 *run_min, u32 *run_next) {
    u64 k = thread_index();
    if (k >= count) return;
    u32 h = heads[k];
    run_min[h] = out[2 * k];
    run_next[h] = out[2 * k + 1];
}

// Each head's run takes its cycle's minimum.
extern "C" __global__ void euler_min_spread(const u32 *heads, u64 count, const u32 *next,
                                            const u32 *run_min, u32 *label) {
    u64 k = thread_index();
    if (k >= count) return;
    u32 h = heads[k], m = run_min[h], t = next[h];
    label[h] = m;
    while (run_goes_on(t)) {
        label[t] = m;
        t = next[t];
    }
}

// Cycles without a splitter (label still NIL; at most a few hundred slots, and most short:
// a random-cycles graph has about 10^8 of them at 2^30 edges). The cycle's smallest slot labels
// it: every slot walks until it is back (it is the smallest) or meets a smaller slot (that one
// labels), so a cycle of L slots costs about L ln L steps, not the L^2 of every slot walking.
extern "C" __global__ void euler_min_short(const u32 *next, const u32 *dart, u64 slots,
                                           u32 *label) {
    u64 s = thread_index();
    if (s >= slots || label[s] != NIL) return;
    u32 m = dart[s] / 2;
    for (u32 t = next[s]; t != (u32)s; t = next[t]) {
        if (t < (u32)s) return;
        m = min(m, dart[t] / 2);
    }
    label[s] = m;
    for (u32 t = next[s]; t != (u32)s; t = next[t]) label[t] = m;
}

// Each head's run: its steps to the next head (or, ending the list, to its last slot), the
// next head (NIL at the end, or where another rank's slot follows) and its last slot; counts
// the slots the runs hold (all of them, unless some lie on a cycle).
extern "C" __global__ void euler_rank_walk(const u32 *heads, u64 count, const u32 *next,
                                           u32 *run_dist, u32 *run_next, u32 *run_end,
                                           u64 *visited) {
    u64 k = thread_index();
    u64 seen = 0;
    if (k < count) {
        u32 h = heads[k], last = h, steps = 0, t = next[h];
        while (run_goes_on(t)) {
            last = t;
            steps++;
            t = next[t];
        }
        run_dist[h] = t == NIL ? steps : steps + 1;
        run_next[h] = t;
        run_end[h] = last;
        seen = steps + 1;
    }
    const int index[1] = {0};
    const u64 add[1] = {seen};
    block_add(visited, index, add);
}

// One jumping round over the heads (Wyllie), read into `out` (dist, next, end per head
// index) and written back by euler_rank_store, so that no read sees a value of this round;
// counts the heads still jumping.
extern "C" __global__ void euler_rank_jump(const u32 *heads, u64 count, const u32 *run_dist,
                                           const u32 *run_next, const u32 *run_end, u32 *out,
                                           u64 *active) {
    u64 k = thread_index();
    u64 jumping = 0;
    if (k < count) {
        u32 h = heads[k], t = run_next[h];
        u32 d = run_dist[h], n = t, e = run_end[h];
        if (t != NIL) {
            d += run_dist[t];
            n = run_next[t];
            e = run_end[t];
            jumping = n != NIL;
        }
        out[3 * k] = d;
        out[3 * k + 1] = n;
        out[3 * k + 2] = e;
    }
    const int index[1] = {0};
    const u64 add[1] = {jumping};
    block_add(active, index, add);
}

extern "C" __global__ void euler_rank_store(const u32 *heads, u64 count, const u32 *out,
                                            u32 *run_dist, u32 *run_next, u32 *run_end) {
    u64 k = thread_index();
    if (k >= count) return;
    u32 h = heads[k];
    run_dist[h] = out[3 * k];
    run_next[h] = out[3 * k + 1];
    run_end[h] = out[3 * k + 2];
}

// Each head's run takes its distances to the list's end and that end.
extern "C" __global__ void euler_rank_spread(const u32 *heads, u64 count, const u32 *next,
                                             const u32 *run_dist, const u32 *run_end,
                                             u32 *dist, u32 *end) {
    u64 k = thread_index();
    if (k >= count) return;
    u32 h = heads[k], d = run_dist[h], e = run_end[h], t = next[h];
    dist[h] = d;
    end[h] = e;
    while (run_goes_on(t)) {
        dist[t] = --d;
        end[t] = e;
        t = next[t];
    }
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
        u64 at = warp_slot(true, count);
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
    // Many vertices offer the same pair of trails (two trails meet at most vertices): read
    // first, so that only offers that can still win contend for the atomic.
    u64 offer = (u64)lo << 32 | offers[3 * k + 2];
    if (offer < best[hi]) atomicMin(&best[hi], offer);
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

// One rank: each ranked run on the list that ends at `last` puts its slots at position
// m - 1 - dist, (edge << 1 | forward) and the vertex arrived at, walking its run (the writes
// of one run are consecutive; the other list's runs are skipped); counts the slots placed.
extern "C" __global__ void euler_rank_place(const u32 *heads, u64 count, const u32 *next,
                                            const u32 *run_dist, const u32 *run_end,
                                            const u32 *dart, const u32 *vertex, u32 last, u64 m,
                                            u64 *code, u32 *arrive, u64 *placed) {
    u64 k = thread_index();
    u64 on = 0;
    if (k < count && run_end[heads[k]] == last) {
        u32 t = heads[k];
        for (u64 d = run_dist[t];; d--) {
            if (d < m) {
                u64 p = m - 1 - d;
                u32 x = dart[t];
                code[p] = (u64)(x / 2) << 1 | (x & 1);
                arrive[p] = vertex[t];
                on++;
            }
            t = next[t];
            if (!run_goes_on(t)) break;
        }
    }
    const int index[1] = {0};
    const u64 add[1] = {on};
    block_add(placed, index, add);
}

// ---- The connectivity check (check::connected_ok decides the message when it fails) -------

// One rank's graph is its endpoint array: edge e is (ends[2e], ends[2e + 1]), dart d sits at
// vertex ends[d].

// Per vertex: its degree, or for a digraph out-degree minus in-degree.
extern "C" __global__ void euler_degrees(const u32 *ends, u64 darts, u32 directed, int *degree) {
    u64 d = thread_index();
    if (d < darts) atomicAdd(&degree[ends[d]], directed && d % 2 == 1 ? -1 : 1);
}

// Vertices of odd degree (digraph: unbalanced).
extern "C" __global__ void euler_uneven(const int *degree, u64 n, u32 directed, u64 *count) {
    u64 x = thread_index();
    u64 bad = x < n && (directed ? degree[x] != 0 : (degree[x] & 1) != 0);
    const int index[1] = {0};
    const u64 add[1] = {bad};
    block_add(count, index, add);
}

// Several ranks (gpu_spread.rs): each of this rank's `edges` tuples (u, v), edge i's id
// first + i, gives its two ends as packed pairs (vertex << 32 | dart) for their vertices'
// owners (OwnerBuckets); the owner splits what arrives into local vertices and darts and
// counts the degrees there.
extern "C" __global__ void euler_end_pairs(const u32 *tuples, u64 edges, u64 first, u64 *pairs) {
    u64 d = thread_index();
    if (d < 2 * edges) pairs[d] = (u64)tuples[d] << 32 | (2 * first + d);
}

extern "C" __global__ void euler_end_split(const u64 *pairs, u64 count, u64 first_vertex,
                                           u32 *vertex, u32 *dart) {
    u64 k = thread_index();
    if (k >= count) return;
    vertex[k] = (u32)((pairs[k] >> 32) - first_vertex);
    dart[k] = (u32)pairs[k];
}

extern "C" __global__ void euler_end_degrees(const u32 *vertex, const u32 *dart, u64 count,
                                             u32 directed, int *degree) {
    u64 k = thread_index();
    if (k < count) atomicAdd(&degree[vertex[k]], directed && dart[k] % 2 == 1 ? -1 : 1);
}

// Unite the two ends of each edge (the prelude's union-find; cc.cu's cc_init and cc_compress
// set up and flatten the forest).
extern "C" __global__ void euler_link(const u32 *ends, u64 edges, u32 *parent) {
    u64 e = thread_index();
    if (e < edges) uf_unite(parent, ends[2 * e], ends[2 * e + 1]);
}

// Edge-ends whose vertex is not in the component of vertex `first` (after cc_compress).
extern "C" __global__ void euler_apart(const u32 *vertex, u64 count, const u32 *parent,
                                       u32 first, u64 *apart) {
    u64 k = thread_index();
    u64 out = k < count && parent[vertex[k]] != parent[first];
    const int index[1] = {0};
    const u64 add[1] = {out};
    block_add(apart, index, add);
}

extern "C" __global__ void euler_fill(u32 *a, u64 count, u32 value) {
    u64 i = thread_index();
    if (i < count) a[i] = value;
}

// ---- Several ranks: the ruling set over the run heads (gpu_ruling.rs; ruling.rs on the CPU) --
//
// The same walk as the CPU's: a walker leaves every sampled ruler and follows the heads
// after it until the next ruler or the list's end, recording at each head passed its ruler
// and the combined weight before it; each round moves all walkers in one all-to-all. Items
// crossing ranks are 5 u32: (slot, kind, a, b, c), sent to the owner of `slot`. A walker:
// (head it arrives at, WALKER, ruler, combined weight, 0). A finish: (ruler, FINISH, ruler
// or NIL reached, combined weight, list's last slot). Per local slot, the heads' arrays
// `hnext` (the head the run leads to, global, NIL at a list's end), `hweight` and `hlast`
// become the rulers' (their segments') in place: a walker reads them only at heads that are
// no sampled ruler, and a finish writes them only at a sampled ruler.

#define RULER_SALT 0x72756c657273ULL
#define WALKER 0u
#define FINISH 1u
#define ITEM 5

// About one head in `every` is sampled (gpu_ruling.rs `RULER_EVERY`).
__device__ __forceinline__ bool sampled_ruler(u32 slot, u32 every) {
    return mix64((u64)slot ^ RULER_SALT) % every == 0;
}

// The rank holding global slot s, of `ranks` whose first slots are starts[0..=ranks].
__device__ __forceinline__ u32 slot_owner(const u64 *starts, u32 ranks, u32 s) {
    u32 lo = 0, hi = ranks;
    while (hi - lo > 1) {
        u32 mid = (lo + hi) / 2;
        if (starts[mid] <= s) lo = mid; else hi = mid;
    }
    return lo;
}

// Items of `width` u32 (the first a global slot) counted per owner rank.
extern "C" __global__ void euler_owner_count(const u32 *items, u64 count, u32 width,
                                             const u64 *starts, u32 ranks, u64 *counts) {
    u64 i = thread_index();
    if (i >= count) return;
    warp_add(&counts[slot_owner(starts, ranks, items[i * width])], 1);
}

// The items into runs by owner rank, each at its run's cursor.
extern "C" __global__ void euler_owner_scatter(const u32 *items, u64 count, u32 width,
                                               const u64 *starts, u32 ranks, u64 *cursor,
                                               u32 *out) {
    u64 i = thread_index();
    if (i >= count) return;
    u32 r = slot_owner(starts, ranks, items[i * width]);
    u32 same = __match_any_sync(__activemask(), r);
    int leader = __ffs(same) - 1;
    u64 base = 0;
    if ((int)lane_id() == leader) base = atomicAdd(&cursor[r], (u64)__popc(same));
    base = __shfl_sync(same, base, leader);
    u64 at = base + __popc(same & lanes_before());
    for (u32 j = 0; j < width; j++) out[at * width + j] = items[i * width + j];
}

// Each head's state for the walk: `hnext` the head (global) its run leads to, NIL at a
// list's end; with `lists`, the weight takes the step to another rank's slot and `run_end`
// becomes global.
extern "C" __global__ void euler_head_state(const u32 *heads, u64 count, const u32 *gnext,
                                            u32 first, u32 lists, const u32 *run_next,
                                            u32 *run_weight, u32 *run_end, u32 *hnext) {
    u64 k = thread_index();
    if (k >= count) return;
    u32 h = heads[k], rn = run_next[h];
    u32 after = rn != NIL ? first + rn : gnext[run_end[h]];
    hnext[h] = after;
    if (lists) {
        if (rn == NIL && after != NIL) run_weight[h] += 1;
        run_end[h] = first + run_end[h];
    }
}

__device__ __forceinline__ void put_item(u32 *out, u64 at, const u32 (&o)[ITEM]) {
    for (int j = 0; j < ITEM; j++) out[ITEM * at + j] = o[j];
}

__device__ __forceinline__ void set_item(u32 (&o)[ITEM], u32 a, u32 b, u32 c, u32 d, u32 e) {
    o[0] = a;
    o[1] = b;
    o[2] = c;
    o[3] = d;
    o[4] = e;
}

// The walkers leaving this rank's sampled rulers (a ruler whose run ends its list is done);
// with `write` 0 only counted (so that `out` is allocated to fit).
extern "C" __global__ void euler_walk_start(const u32 *heads, u64 count, u32 first, u32 every,
                                            const u32 *hnext, const u32 *hweight, u32 write,
                                            u32 *out, u64 *out_count) {
    u64 k = thread_index();
    if (k >= count) return;
    u32 h = heads[k];
    bool walks = sampled_ruler(first + h, every) && hnext[h] != NIL;
    u64 at = warp_slot(walks, out_count);
    if (walks && write) put_item(out, at, {hnext[h], WALKER, first + h, hweight[h], 0});
}

// One round at this rank's `count` arrived items: a finish is stored at its ruler; a walker
// goes on along this rank's heads (or, past the rounds, `go_on` 0, stops before its head)
// and leaves one item for the next round. `sum`: weights add (lists), else the smallest.
extern "C" __global__ void euler_walk(const u32 *in, u64 count, u32 first, u32 here, u32 every,
                                      u32 sum, u32 go_on, u32 *hnext, u32 *hweight, u32 *hlast,
                                      u32 *ruler_of, u32 *before, u32 *out, u64 *out_count) {
    u64 i = thread_index();
    if (i >= count) return;
    const u32 *w = in + ITEM * i;
    u32 key = w[0], ruler = w[2], acc = w[3];
    u32 o[ITEM] = {ruler, FINISH, key, acc, NIL};
    bool emit = w[1] == WALKER;
    if (!emit) {
        u32 k = key - first;
        hnext[k] = w[2];
        hweight[k] = w[3];
        hlast[k] = w[4];
    } else if (go_on) {
        u32 at = key;
        while (!sampled_ruler(at, every)) {
            u32 k = at - first, nx = hnext[k];
            ruler_of[k] = ruler;
            before[k] = acc;
            acc = sum ? acc + hweight[k] : min(acc, hweight[k]);
            if (nx == NIL) {
                set_item(o, ruler, FINISH, NIL, acc, hlast[k]);
                break;
            }
            at = nx;
            if ((u64)nx - first >= here) {
                set_item(o, nx, WALKER, ruler, acc, 0);
                break;
            }
        }
        // Stopped at a ruler: that ruler is the segment's end.
        if (sampled_ruler(at, every) && o[1] == FINISH) set_item(o, ruler, FINISH, at, acc, NIL);
    }
    u64 at = warp_slot(emit, out_count);
    if (emit) put_item(out, at, o);
}

// The rulers once the walk is over: the sampled ones and the heads no walker reached (their
// own one-head segments, already in place).
extern "C" __global__ void euler_walk_rulers(const u32 *heads, u64 count, const u32 *ruler_of,
                                             u32 *rulers,
                                             u64 *ruler_count) {
    u64 k = thread_index();
    if (k >= count) return;
    u32 h = heads[k];
    bool rules = ruler_of[h] == NIL;
    u64 at = warp_slot(rules, ruler_count);
    if (rules) rulers[at] = h;
}

// Questions (the global slot table[list[i]], i) for the entries where it is not NIL.
extern "C" __global__ void euler_ask(const u32 *list, u64 count, const u32 *table, u32 *out,
                                     u64 *out_count) {
    u64 i = thread_index();
    if (i >= count) return;
    u32 key = table[list[i]];
    bool ask = key != NIL;
    u64 at = warp_slot(ask, out_count);
    if (ask) {
        out[2 * at] = key;
        out[2 * at + 1] = (u32)i;
    }
}

// The answers to the arrived questions: the first `width` of the tables t0, t1, t2 at each
// asked (own) slot.
extern "C" __global__ void euler_answer(const u32 *got, u64 count, u32 first, const u32 *t0,
                                        const u32 *t1, const u32 *t2, u32 width, u32 *answer) {
    u64 i = thread_index();
    if (i >= count) return;
    u32 k = got[2 * i] - first;
    const u32 *tables[3] = {t0, t1, t2};
    for (u32 j = 0; j < width; j++) answer[width * i + j] = tables[j][k];
}

// The answers, back in the order the questions went, to their askers' entries.
extern "C" __global__ void euler_answered(const u32 *asked, const u32 *answer, u64 count,
                                          u32 width, u32 *out) {
    u64 i = thread_index();
    if (i >= count) return;
    u32 o = asked[2 * i + 1];
    for (u32 j = 0; j < width; j++) out[width * o + j] = answer[width * i + j];
}

// One round of plain minima over the rulers (jump.rs `plain_minima`): got[2i..] holds the
// weight and next of ruler i's next ruler; counts the minima that fell.
extern "C" __global__ void euler_rule_min(const u32 *rulers, u64 count, const u32 *got,
                                          u32 *weight, u32 *next, u64 *changed) {
    u64 i = thread_index();
    u64 fell = 0;
    if (i < count) {
        u32 r = rulers[i];
        if (next[r] != NIL) {
            next[r] = got[2 * i + 1];
            fell = got[2 * i] < weight[r];
            if (fell) weight[r] = got[2 * i];
        }
    }
    const int index[1] = {0};
    const u64 add[1] = {fell};
    block_add(changed, index, add);
}

// One round of Wyllie's ranking over the rulers (jump.rs `plain_ranks`): got[3i..] holds
// the steps, next and last slot of ruler i's next ruler.
extern "C" __global__ void euler_rule_rank(const u32 *rulers, u64 count, const u32 *got,
                                           u32 *dist, u32 *next, u32 *end) {
    u64 i = thread_index();
    if (i >= count) return;
    u32 r = rulers[i];
    if (next[r] == NIL) return;
    dist[r] += got[3 * i];
    next[r] = got[3 * i + 1];
    end[r] = got[3 * i + 2];
}

// Each reached head takes its ruler's result (got[2k..]: weight, last slot), for lists less
// its steps from the ruler; a ruler keeps its own.
extern "C" __global__ void euler_rule_spread(const u32 *heads, u64 count, const u32 *ruler_of,
                                             const u32 *before, const u32 *got, u32 sum,
                                             u32 *weight, u32 *end) {
    u64 k = thread_index();
    if (k >= count) return;
    u32 h = heads[k];
    if (ruler_of[h] == NIL) return;
    weight[h] = sum ? got[2 * k] - before[h] : got[2 * k];
    if (sum) end[h] = got[2 * k + 1];
}

// ---- Several ranks: the spanning forest of the trail graph (gpu_forest.rs; forest.rs) -----
//
// forest.rs's min-label hooking with the trails (nodes, by label) in even blocks over the
// ranks: each round the offers ask their trails' roots of the trails' owners, each offer
// between two trees goes to its larger root's owner, every root with offers hooks under the
// smallest (root, link), and the nodes that moved jump to their roots by questions too.
// Before the rounds each rank keeps, of its offers between the same two trails, only the one
// with the smallest link (forest.rs `distinct`: the others can never be chosen), through a
// hash table of (t1, t) keys with linear probing.

// Each offer (t1, t, link) into the table (keys 0 when empty: t1 < t, so no key is 0; links
// NIL): its key's entry keeps the smallest link. It reads before each atomic, so the many
// offers of one pair (every vertex of a graph of two trails offers the same one) mostly read
// one cached entry.
extern "C" __global__ void euler_offer_insert(const u32 *offers, u64 count, u64 mask, u64 *keys,
                                              u32 *links) {
    u64 k = thread_index();
    if (k >= count) return;
    u64 key = (u64)offers[3 * k] << 32 | offers[3 * k + 1];
    u32 link = offers[3 * k + 2];
    for (u64 h = mix64(key) & mask;; h = (h + 1) & mask) {
        u64 held = keys[h];
        if (held == 0) held = atomicCAS(&keys[h], 0ull, key);
        if (held == 0 || held == key) {
            if (link < links[h]) atomicMin(&links[h], link);
            return;
        }
    }
}

// The table's entries as offers (t1, t, link), appended.
extern "C" __global__ void euler_offer_take(const u64 *keys, const u32 *links, u64 capacity,
                                            u32 *offers, u64 *count) {
    u64 h = thread_index();
    bool held = h < capacity && keys[h] != 0;
    u64 at = warp_slot(held, count);
    if (held) {
        offers[3 * at] = (u32)(keys[h] >> 32);
        offers[3 * at + 1] = (u32)keys[h];
        offers[3 * at + 2] = links[h];
    }
}

extern "C" __global__ void euler_forest_start(u32 *root, u64 *best, u64 nodes, u32 first) {
    u64 i = thread_index();
    if (i >= nodes) return;
    root[i] = first + (u32)i;
    best[i] = NO_BEST;
}

// Questions for the roots of both trails of each offer: (trail, 2k + side).
extern "C" __global__ void euler_forest_ask(const u32 *offers, u64 count, u32 *out) {
    u64 k = thread_index();
    if (k >= count) return;
    out[4 * k] = offers[3 * k];
    out[4 * k + 1] = (u32)(2 * k);
    out[4 * k + 2] = offers[3 * k + 1];
    out[4 * k + 3] = (u32)(2 * k + 1);
}

// Each offer between two trees: (larger root, smaller root, link's global slot).
extern "C" __global__ void euler_forest_between(const u32 *offers, u64 count, const u32 *roots,
                                                u32 slot_first, u32 *out, u64 *out_count) {
    u64 k = thread_index();
    if (k >= count) return;
    u32 ra = roots[2 * k], rb = roots[2 * k + 1];
    bool between = ra != rb;
    u64 at = warp_slot(between, out_count);
    if (between) {
        out[3 * at] = ra > rb ? ra : rb;
        out[3 * at + 1] = ra > rb ? rb : ra;
        out[3 * at + 2] = slot_first + offers[3 * k + 2];
    }
}

// The offers arrived at their larger root's owner: the smallest (root, link) per root.
extern "C" __global__ void euler_forest_best(const u32 *items, u64 count, u32 first, u64 *best) {
    u64 i = thread_index();
    if (i >= count) return;
    u32 hi = items[3 * i] - first;
    u64 offer = (u64)items[3 * i + 1] << 32 | items[3 * i + 2];
    if (offer < best[hi]) atomicMin(&best[hi], offer);
}

// Each own root with an offer hooks under it; its link joins `chosen` (appended).
extern "C" __global__ void euler_forest_hooks(u64 *best, u64 nodes, u32 *root, u32 *chosen,
                                              u64 *chosen_count) {
    u64 i = thread_index();
    if (i >= nodes) return;
    bool hook = best[i] != NO_BEST;
    u64 at = warp_slot(hook, chosen_count);
    if (hook) {
        root[i] = (u32)(best[i] >> 32);
        chosen[at] = (u32)best[i];
        best[i] = NO_BEST;
    }
}

// The own nodes that are no root (local indices).
extern "C" __global__ void euler_forest_moved(const u32 *root, u64 nodes, u32 first, u32 *moved,
                                              u64 *count) {
    u64 i = thread_index();
    if (i >= nodes) return;
    bool off = root[i] != first + (u32)i;
    u64 at = warp_slot(off, count);
    if (off) moved[at] = (u32)i;
}

// One shortcut step: each moved node takes its root's root (got); counts the changes.
extern "C" __global__ void euler_forest_up(const u32 *moved, u64 count, const u32 *got,
                                           u32 *root, u64 *changed) {
    u64 k = thread_index();
    u64 change = 0;
    if (k < count) {
        u32 i = moved[k];
        change = got[k] != root[i];
        root[i] = got[k];
    }
    const int index[1] = {0};
    const u64 add[1] = {change};
    block_add(changed, index, add);
}

// The chosen links, arrived at their slots' owner, mark their slots.
extern "C" __global__ void euler_forest_joined(const u32 *links, u64 count, u32 first,
                                               u8 *joined) {
    u64 i = thread_index();
    if (i < count) joined[links[i] - first] = 1;
}

// ---- Several ranks: the circuit's order (gpu_ranks.rs `rank`) --------------------------

// The smallest index first + s with a[s] == value, into *found (set to NIL before).
extern "C" __global__ void euler_find(const u32 *a, u64 count, u32 value, u32 first, u32 *found) {
    u64 s = thread_index();
    if (s < count && a[s] == value) atomicMin(found, first + (u32)s);
}

// Several ranks: each slot on the list that ends at `last` gets its circuit position
// m - 1 - dist (the others ~0) and its code (edge << 1 | forward), as euler_rank_place
// puts them; counts the slots placed.
extern "C" __global__ void euler_slot_place(const u32 *dist, const u32 *end, const u32 *dart,
                                            u64 slots, u32 last, u64 m, u64 *pos, u64 *code,
                                            u64 *placed) {
    u64 s = thread_index();
    bool on = s < slots && end[s] == last && dist[s] < m;
    if (s < slots) {
        u32 x = dart[s];
        pos[s] = on ? m - 1 - dist[s] : ~(u64)0;
        code[s] = (u64)(x / 2) << 1 | (x & 1);
    }
    const int index[1] = {0};
    const u64 add[1] = {on ? 1ull : 0ull};
    block_add(placed, index, add);
}
