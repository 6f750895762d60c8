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
// Rounds across ranks: only changed labels that another rank reads travel (`list_reads`,
// `ghost_kinds` and `apply_masks` before the rounds; `send_changed`, `receive_labels`), the
// giant's vertices never (their giant's label stands for them: `giant_ghosts`); `cut_min`
// gives each local component (by its root) the smallest label of a ghost that came in over
// its cut edges read; tree hooking and shortcutting below; `relabel` hands the components'
// labels to their vertices and counts changes.

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

// The roots of `count` own vertices (for the giant component's sample, and its probes across
// ranks).
extern "C" __global__ void cc_roots_of(const u32 *vertices, u64 count, const u32 *parent,
                                       u32 *out) {
    u64 i = thread_index();
    if (i < count) out[i] = uf_root(parent, vertices[i]);
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

// Labels travel across ranks packed in one u64: (target << 32) | label (graphs of fewer than
// 2^32 vertices on the GPU path across ranks).
#define LOW32 0xffffffffull

// A `sent` entry never sent: an own vertex in the giant (its giant's label stands for it), or
// one the asking rank does not read.
#define NEVER_SENT 0xffffffffffffffffull

// The own labels of rank `dest`'s live entries of the ghost plan (live[from .. to): entries
// of its run, which starts at `from`) that changed since last sent (`sent`: that label plus
// one, 0 for none yet, NEVER_SENT for never), as (the receiver's ghost index << 32 | label),
// compacted at out[from + slot] with the slots counted in tails[dest].
extern "C" __global__ void cc_send_changed(const u32 *send_local, const u32 *targets,
                                           const u32 *live, u64 from, u64 to, u32 dest,
                                           const u64 *labels, u64 *sent, u64 *out, u64 *tails) {
    u64 k = from + thread_index();
    u64 i = k < to ? live[k] : 0;
    bool take = false;
    u64 label = 0;
    if (k < to && sent[i] != NEVER_SENT) {
        label = labels[send_local[i]];
        take = label + 1 != sent[i];
        if (take) sent[i] = label + 1;
    }
    u64 at = warp_slot(take, &tails[dest]);
    if (take) out[from + at] = ((u64)targets[i] << 32) | label;
}

// Received (ghost << 32 | label): the ghost's label, marked as come in this round; a ghost a
// label came for is in no giant (the first refresh sends all others).
extern "C" __global__ void cc_receive_labels(const u64 *items, u64 count, u64 *ghost_labels,
                                             u8 *changed, u8 *ghost_giant) {
    u64 i = thread_index();
    if (i >= count) return;
    u32 g = (u32)(items[i] >> 32);
    ghost_labels[g] = items[i] & LOW32;
    changed[g] = 1;
    ghost_giant[g] = 0;
}

// The giant's skip across ranks (src/graph/components/mod.rs, `skip_giants`). `ghost_giant`
// per ghost: SAME_GIANT (in the giant of a rank whose giant is joined to this rank's),
// OTHER_GIANT, or 0.
#define SAME_GIANT 2
#define OTHER_GIANT 1

// The ghosts [from, to) (one owner's) in its giant take its giant's label, marked as come in.
extern "C" __global__ void cc_giant_ghosts(const u8 *ghost_giant, u64 from, u64 to, u64 label,
                                           u64 *ghost_labels, u8 *changed) {
    u64 g = from + thread_index();
    if (g >= to || !ghost_giant[g]) return;
    ghost_labels[g] = label;
    changed[g] = 1;
}

__device__ __forceinline__ void lower_to(u64 *comp_min, u32 root, u64 label) {
    if (label < comp_min[root]) atomicMin(&comp_min[root], label);
}

// Runs of items grouped by rank (ghosts by owner, plan entries by asking rank): rank s's run
// starts at starts[s]; the rank whose run holds item i (the last whose run starts at or before
// it).
__device__ __forceinline__ u32 run_of(const u64 *starts, u32 ranks, u64 i) {
    u32 lo = 0, hi = ranks - 1;
    while (lo < hi) {
        u32 mid = (lo + hi + 1) / 2;
        if (starts[mid] <= i) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

// Whether bit j of rank s's mask run (words from word_at[s] on) is set, for item i of its run
// of items (from starts[s]).
__device__ __forceinline__ bool mask_bit(const u64 *words, const u64 *starts, const u64 *word_at,
                                         u32 s, u64 i) {
    u64 j = i - starts[s];
    return (words[word_at[s] + j / 64] >> (j % 64)) & 1;
}

// Ghost g as read: its bit in its owner's mask run (ghosts from ghost_at[s], words from
// word_at[s]).
__device__ __forceinline__ void mark_read(u64 *words, const u64 *ghost_at, const u64 *word_at,
                                          u32 ranks, u32 g) {
    u32 s = run_of(ghost_at, ranks, g);
    u64 j = g - ghost_at[s];
    u64 *word = &words[word_at[s] + j / 64];
    u64 bit = 1ull << (j % 64);
    if (!(*word & bit)) atomicOr(word, bit);
}

// Whether the giant reads its cut edge to ghost g: g's owner has a giant of another class
// (`kinds`: per rank, SAME_GIANT, OTHER_GIANT or 0 for none).
__device__ __forceinline__ bool other_giant(const u8 *kinds, const u64 *ghost_at, u32 ranks,
                                            u32 g) {
    return kinds[run_of(ghost_at, ranks, g)] == OTHER_GIANT;
}

// Cut rows longer than this that are read go through a warp's lanes together.
#define LONG_ROW WARP

// The cut edges read from now on (`skip_giants`), a thread per own vertex (its cut edges at
// cut_at[v] .. cut_at[v + 1]), before the first refresh: the giant's are not read, but those
// to a ghost of a rank whose giant is of another class (`any_other`: whether this rank has
// such ghosts; without, a giant row is not even looked at); every other edge is listed in
// (active_own, active_ghost), flags its root as a boundary component and sets its ghost's bit
// in the read masks (`words`, a run per owner). Rows of vertices outside the giant are few
// and short on the graphs with a giant, so this reads a word or two per vertex where a pass
// over the cut edges reads them all; a row longer than LONG_ROW that is read (a hub's) is
// counted and listed by the whole warp, a lane an edge, rather than by its own thread.
extern "C" __global__ void cc_list_reads(const u64 *cut_at, const u32 *cut_ghost, u32 n,
                                         const u8 *kinds, const u64 *ghost_at,
                                         const u64 *word_at, u32 ranks, u32 giant,
                                         u32 any_other, const u32 *parent, u8 *flags,
                                         u64 *words, u32 *active_own, u32 *active_ghost,
                                         u64 *tail) {
    u64 v = thread_index();
    u64 from = 0, to = 0, take = 0;
    u32 root = giant;
    if (v < n) {
        from = cut_at[v];
        to = cut_at[v + 1];
        if (from < to) root = parent[v];
    }
    bool whole = root != giant;
    bool long_row = (whole || any_other) && to - from > LONG_ROW;
    if (whole) {
        take = to - from;
    } else if (any_other && !long_row) {
        for (u64 e = from; e < to; e++) take += other_giant(kinds, ghost_at, ranks, cut_ghost[e]);
    }
    // The giant's long rows, counted by the warp.
    for (u32 rows = __ballot_sync(FULL, long_row && !whole); rows; rows &= rows - 1) {
        int l = __ffs(rows) - 1;
        u64 f = __shfl_sync(FULL, from, l), t = __shfl_sync(FULL, to, l);
        u64 c = 0;
        for (u64 e = f + lane_id(); e < t; e += WARP) c += other_giant(kinds, ghost_at, ranks, cut_ghost[e]);
        c = warp_sum(c);
        if (lane_id() == l) take = c;
    }
    u64 at = block_slots(take, tail);
    if (take && !flags[root]) flags[root] = 1;
    if (take && !long_row) {
        for (u64 e = from; e < to; e++) {
            u32 g = cut_ghost[e];
            if (!whole && !other_giant(kinds, ghost_at, ranks, g)) continue;
            active_own[at] = (u32)v;
            active_ghost[at] = g;
            at++;
            mark_read(words, ghost_at, word_at, ranks, g);
        }
    }
    // The long rows, listed by the warp in order: each lane an edge, its slot after the kept
    // edges of the lanes below it.
    for (u32 rows = __ballot_sync(FULL, take && long_row); rows; rows &= rows - 1) {
        int l = __ffs(rows) - 1;
        u64 f = __shfl_sync(FULL, from, l), t = __shfl_sync(FULL, to, l);
        u64 base = __shfl_sync(FULL, at, l);
        u32 row = __shfl_sync(FULL, (u32)v, l);
        bool all = __shfl_sync(FULL, (u32)whole, l);
        for (u64 e0 = f; e0 < t; e0 += WARP) {
            u64 e = e0 + lane_id();
            u32 g = 0;
            bool keep = false;
            if (e < t) {
                g = cut_ghost[e];
                keep = all || other_giant(kinds, ghost_at, ranks, g);
            }
            u32 kept = __ballot_sync(FULL, keep);
            if (keep) {
                u64 slot = base + __popc(kept & lanes_before());
                active_own[slot] = row;
                active_ghost[slot] = g;
                mark_read(words, ghost_at, word_at, ranks, g);
            }
            base += __popc(kept);
        }
    }
}

// Per ghost, after the listing: its giant kind (`kinds[owner]`) where a listed edge reads it,
// else 0 (a ghost not read takes no giant label).
extern "C" __global__ void cc_ghost_kinds(const u64 *words, const u8 *kinds, const u64 *ghost_at,
                                          const u64 *word_at, u32 ranks, u64 ghosts,
                                          u8 *ghost_giant) {
    u64 g = thread_index();
    if (g >= ghosts) return;
    u32 s = run_of(ghost_at, ranks, g);
    ghost_giant[g] = mask_bit(words, ghost_at, word_at, s, g) ? kinds[s] : 0;
}

// Per entry i of the ghost plan (asking rank s's run from send_at[s], whose read mask came in
// at words[in_at[s] ..]): never sent where s does not read it or its vertex is in this rank's
// giant (rooted at `giant`; u32::MAX for none: its giant's label stands for it), else not sent
// yet and listed among s's live entries (live[send_at[s] ..], counted in live_counts[s], in
// no particular order), which the refresh goes through instead of the whole plan.
extern "C" __global__ void cc_apply_masks(const u64 *words, const u64 *send_at, const u64 *in_at,
                                          u32 ranks, u64 count, const u32 *send_local,
                                          const u32 *parent, u32 giant, u64 *sent, u32 *live,
                                          u64 *live_counts) {
    u64 i = thread_index();
    u32 s = ranks;
    bool take = false;
    if (i < count) {
        s = run_of(send_at, ranks, i);
        take = mask_bit(words, send_at, in_at, s, i) && parent[send_local[i]] != giant;
        sent[i] = take ? 0 : NEVER_SENT;
    }
    u32 active = __activemask();
    u32 same = __match_any_sync(active, take ? s : ranks);
    int leader = __ffs(same) - 1;
    u64 base = 0;
    if (take && lane_id() == leader) base = atomicAdd(&live_counts[s], (u64)__popc(same));
    base = __shfl_sync(active, base, leader);
    if (take) live[send_at[s] + base + __popc(same & lanes_before())] = (u32)i;
}

// Reports for the giants whose cut edges are not read: per rank s (ghosts of s from
// run_starts[s] on), the smallest label of a component with a listed cut edge to a ghost in
// s's giant whose label is lower than that ghost's.
extern "C" __global__ void cc_giant_reports(const u32 *cut_own, const u32 *cut_ghost, u64 count,
                                            const u8 *ghost_giant, const u64 *run_starts,
                                            u32 ranks, const u32 *parent, const u64 *comp_min,
                                            const u64 *ghost_labels, u64 *reports) {
    u64 i = thread_index();
    if (i >= count) return;
    u32 g = cut_ghost[i];
    if (!ghost_giant[g]) return;
    u64 label = comp_min[parent[cut_own[i]]];
    if (label >= ghost_labels[g]) return;
    u32 s = run_of(run_starts, ranks, g);
    if (label < reports[s]) atomicMin(&reports[s], label);
}

// Each listed cut edge to a changed ghost lowers its own vertex's component label to the
// ghost's; `*fell` set where a label fell.
extern "C" __global__ void cc_cut_min(const u32 *cut_own, const u32 *cut_ghost, u64 count,
                                      const u8 *changed, const u32 *parent,
                                      const u64 *ghost_labels, u64 *comp_min, u64 *fell) {
    u64 i = thread_index();
    if (i >= count || !changed[cut_ghost[i]]) return;
    u32 root = parent[cut_own[i]];
    u64 label = ghost_labels[cut_ghost[i]];
    if (label < comp_min[root]) {
        atomicMin(&comp_min[root], label);
        *fell = 1;
    }
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

// Shiloach-Vishkin steps across ranks (src/graph/components/mod.rs) over the boundary
// components (`roots`: the local roots with a cut edge). Labels of own vertices are those in
// first .. first + local_n; `parent` is compressed (every vertex points at its root).

// The boundary components' labels before the round's absorb: their roots' vertex labels,
// which only `cc_relabel` changes.
extern "C" __global__ void cc_boundary_labels(const u32 *roots, u64 count, const u64 *labels,
                                              u64 *out) {
    u64 i = thread_index();
    if (i < count) out[i] = labels[roots[i]];
}

// Tree hooking: a component whose label fell from b to a lowers the component of vertex b to
// a: here if this rank owns b, else as (b << 32 | a) for b's owner.
extern "C" __global__ void cc_hooks(const u32 *roots, u64 count, const u64 *before, u64 first,
                                    u64 local_n, const u32 *parent, u64 *comp_min, u64 *out,
                                    u64 *tail) {
    u64 i = thread_index();
    bool take = false;
    u64 item = 0;
    if (i < count) {
        u64 a = comp_min[roots[i]], b = before[i];
        if (a < b && b != first + roots[i]) {
            if (b - first < local_n) {
                lower_to(comp_min, parent[b - first], a);
            } else {
                take = true;
                item = (b << 32) | a;
            }
        }
    }
    u64 at = warp_slot(take, tail);
    if (take) out[at] = item;
}

// Hooks that arrived: (b << 32 | a) lowers the component of own vertex b to a.
extern "C" __global__ void cc_apply_hooks(const u64 *items, u64 count, u64 first,
                                          const u32 *parent, u64 *comp_min) {
    u64 i = thread_index();
    if (i < count) lower_to(comp_min, parent[(items[i] >> 32) - first], items[i] & LOW32);
}

// Shortcutting: pointer jumping over the labels, a label l naming vertex l, whose own label
// (that of l's component) is l's parent; a root labels itself. Roots stay roots through the
// shortcutting, which lowers labels only to their ancestors. A step is a function of the
// labels and `done` flags before it: each boundary component not yet done follows its label's
// chain through this rank's vertices (`chain_end`) to a root here, or to a vertex r of another
// rank, final where the last component passed is done (its label is a root); final, it takes
// the end and is done; else it asks r's owner, once per distinct r however many components
// point at it (most point at a few labels, a giant's). The owner follows r's chain through its
// own vertices likewise and answers where it ends, and whether that is final; the asker takes
// the answer (done where final). So chains within a rank cost no exchange, a step at least
// doubles the cross-rank hops a chain took, and the shortcutting ends when no rank asks. Only
// `cc_take_answers` writes labels and flags (after every read of the step, on every rank).
// The remote labels asked meet in `table` (open addressing over `mask + 1` slots, key r + 1,
// 0 empty): each component notes its slot in `slots` (NO_SLOT: not asking, its end in `ends`),
// and the one lane that filled a slot sends (r << 32 | slot). Lanes of a warp asking for one r
// look it up once.
#define NO_SLOT 0xffffffffu
// In an answer (label << 32 | slot): the label is final (slots stay below 2^31); in a label
// (an end, a table slot answered), the same as its top bit.
#define FINAL_ANSWER 0x80000000ull
#define FINAL_LABEL 0x8000000000000000ull

// Where the label chain from vertex l leaves this rank's vertices (first .. first + local_n),
// or the root it ends at here; FINAL_LABEL set where that is a root (here, or after a
// component whose `done` flag is set, by its root).
__device__ __forceinline__ u64 chain_end(u64 first, u64 local_n, const u32 *parent,
                                         const u64 *comp_min, const u8 *done, u64 l) {
    bool final = false;
    while (l - first < local_n) {
        u32 root = parent[l - first];
        u64 next = comp_min[root];
        if (next == l) return l | FINAL_LABEL;
        final = done[root];
        l = next;
    }
    return final ? l | FINAL_LABEL : l;
}

// The slot of `key` (not 0) in `table`, filled if the key is new (`*filled`: by this call).
__device__ __forceinline__ u32 table_slot(u64 *table, u64 mask, u64 key, bool *filled) {
    u64 h = key * 0x9e3779b97f4a7c15ull;
    h = (h ^ (h >> 29)) & mask;
    for (;;) {
        u64 seen = ((volatile u64 *)table)[h];
        if (seen == 0) seen = atomicCAS(&table[h], 0ull, key);
        if (seen == 0 || seen == key) {
            *filled = seen == 0;
            return (u32)h;
        }
        h = (h + 1) & mask;
    }
}

extern "C" __global__ void cc_queries(const u32 *roots, u64 count, u64 first, u64 local_n,
                                      const u32 *parent, const u64 *comp_min, const u8 *done,
                                      u64 *ends, u64 *table, u64 mask, u32 *slots, u64 *out,
                                      u64 *tail) {
    u64 i = thread_index();
    bool filled = false;
    u64 key = 0;
    if (i < count) {
        u32 root = roots[i];
        u64 end = done[root] ? comp_min[root] | FINAL_LABEL
                             : chain_end(first, local_n, parent, comp_min, done, comp_min[root]);
        ends[i] = end;
        if (!(end & FINAL_LABEL)) key = end + 1;
    }
    u32 active = __activemask();
    u32 same = __match_any_sync(active, key);
    int leader = __ffs(same) - 1;
    u32 slot = NO_SLOT;
    if (key && lane_id() == leader) slot = table_slot(table, mask, key, &filled);
    slot = __shfl_sync(active, slot, leader);
    if (i < count) slots[i] = slot;
    u64 at = warp_slot(filled, tail);
    if (filled) out[at] = ((key - 1) << 32) | slot;
}

// Queries that arrived, answered in place: (r << 32 | slot) becomes (end << 32 | slot), `end`
// where r's chain leaves this rank's vertices or its root here, FINAL_ANSWER where final.
extern "C" __global__ void cc_answer(u64 *items, u64 count, u64 first, u64 local_n,
                                     const u32 *parent, const u64 *comp_min, const u8 *done) {
    u64 i = thread_index();
    if (i >= count) return;
    u64 end = chain_end(first, local_n, parent, comp_min, done, items[i] >> 32);
    u64 final = end & FINAL_LABEL ? FINAL_ANSWER : 0;
    items[i] = ((end & ~FINAL_LABEL) << 32) | final | (items[i] & LOW32);
}

// Answers that came back: each slot of `table` asked holds its label's chain end from now on
// (FINAL_LABEL set where final).
extern "C" __global__ void cc_store_answers(const u64 *items, u64 count, u64 *table) {
    u64 i = thread_index();
    if (i >= count) return;
    u64 item = items[i];
    u64 final = item & FINAL_ANSWER ? FINAL_LABEL : 0;
    table[item & (LOW32 & ~FINAL_ANSWER)] = (item >> 32) | final;
}

// Each boundary component takes its end, or the answer in its slot, where lower, and is done
// where that is final.
extern "C" __global__ void cc_take_answers(const u32 *slots, u64 count, const u32 *roots,
                                           const u64 *ends, const u64 *table, u64 *comp_min,
                                           u8 *done) {
    u64 i = thread_index();
    if (i >= count) return;
    u32 root = roots[i];
    u64 end = slots[i] == NO_SLOT ? ends[i] : table[slots[i]];
    u64 label = end & ~FINAL_LABEL;
    if (label < comp_min[root]) comp_min[root] = label;
    if (end & FINAL_LABEL) done[root] = 1;
}

// A new round's trees: no boundary component is known to point at a root.
extern "C" __global__ void cc_undone(const u32 *roots, u64 count, u8 *done) {
    u64 i = thread_index();
    if (i < count) done[roots[i]] = 0;
}

// The roots of the local components with a cut edge read: flagged by `cc_list_reads`, then
// listed (in no particular order).
extern "C" __global__ void cc_list_flagged(const u8 *flags, u32 n, u32 *out, u64 *count) {
    u64 v = thread_index();
    bool take = v < n && flags[v];
    u64 at = block_slots(take, count);
    if (take) out[at] = (u32)v;
}
