// Host emulation of kernels/euler.cu's ruling set across ranks (the section "Several ranks:
// the ruling set over the run heads"), driven as src/workloads/euler/gpu_ruling.rs drives it:
// every rank's arrays in one process, each all-to-all done on host vectors, each kernel's
// threads run one at a time in a random order (single-lane warps). Against sequential
// references: each head's cycle minimum, and each head's steps to its list's end and that
// end's slot, on 1 to 4 ranks of uneven sizes (one empty), with cycles and lists of one head
// up to thousands (so some walkers outrun their 4 * EVERY rounds and stop, and some lists hold no
// sampled ruler). Then the circuit's order (the section "Several ranks: the circuit's
// order"): the cut slots found and each slot placed, as gpu_ranks.rs `rank` does. Run by
// scripts/emulate-kernels euler.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>
typedef unsigned long long u64; typedef unsigned int u32; typedef unsigned char u8;
#define __device__
#define __forceinline__ inline
#define __global__
using std::min;
using std::vector;
static u64 emu_thread;
inline u64 thread_index() { return emu_thread; }
inline u32 lane_id() { return 0; }
inline u32 lanes_before() { return 0; }
inline u32 __activemask() { return 1; }
inline u32 __match_any_sync(u32, u32) { return 1; }
inline int __ffs(u32 x) { return __builtin_ffs(x); }
inline int __popc(u32 x) { return __builtin_popcount(x); }
template <class T> T __shfl_sync(u32, T v, int) { return v; }
inline u64 atomicAdd(u64 *a, u64 v) { u64 old = *a; *a += v; return old; }
inline u64 atomicMin(u64 *a, u64 v) { u64 old = *a; *a = std::min(old, v); return old; }
inline u32 atomicMin(u32 *a, u32 v) { u32 old = *a; *a = std::min(old, v); return old; }
inline u64 atomicCAS(u64 *a, u64 cmp, u64 v) { u64 old = *a; if (old == cmp) *a = v; return old; }
inline u64 warp_slot(bool take, u64 *tail) { return take ? (*tail)++ : 0; }
inline void warp_add(u64 *a, u32 v) { *a += v; }
template <int K> void block_add(u64 *c, const int (&index)[K], const u64 (&value)[K]) {
    for (int k = 0; k < K; k++) c[index[k]] += value[k];
}
#include "euler_ruling.h" // the prelude's mix64, euler.cu's NIL, NO_BEST and the several ranks' sections

static std::mt19937_64 rng(7);
// One head in EVERY a sampled ruler; walkers stop after 4 * EVERY rounds (gpu_ruling.rs).
static u32 EVERY = 8;

// A kernel's `n` threads, one at a time, in a random order.
template <class F> void launch(u64 n, F kernel) {
    vector<u64> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    for (u64 t : order) {
        emu_thread = t;
        kernel();
    }
}

struct Rank {
    u32 first, here;
    vector<u32> heads, next, weight, end, ruler_of, before;
};

struct World {
    vector<Rank> ranks;
    vector<u64> starts;
    u32 size() const { return (u32)ranks.size(); }
};

struct Routed {
    vector<u32> sent, arrived;
    vector<size_t> sent_counts, recv_counts;
    u64 count;
};

// Router::route on every rank at once.
vector<Routed> route(World &w, vector<vector<u32>> &items, const vector<u64> &count, u32 width) {
    u32 P = w.size();
    vector<Routed> out(P);
    for (u32 r = 0; r < P; r++) {
        vector<u64> counts(P, 0);
        launch(count[r], [&] { euler_owner_count(items[r].data(), count[r], width, w.starts.data(), P, counts.data()); });
        vector<u64> cursor(P, 0);
        for (u32 d = 1; d < P; d++) cursor[d] = cursor[d - 1] + counts[d - 1];
        out[r].sent.assign(count[r] * width + 1, 0);
        launch(count[r], [&] {
            euler_owner_scatter(items[r].data(), count[r], width, w.starts.data(), P, cursor.data(), out[r].sent.data());
        });
        for (u32 d = 0; d < P; d++) out[r].sent_counts.push_back(counts[d] * width);
    }
    for (u32 d = 0; d < P; d++) {
        for (u32 s = 0; s < P; s++) {
            size_t at = 0;
            for (u32 x = 0; x < d; x++) at += out[s].sent_counts[x];
            size_t c = out[s].sent_counts[d];
            out[d].arrived.insert(out[d].arrived.end(), out[s].sent.begin() + at, out[s].sent.begin() + at + c);
            out[d].recv_counts.push_back(c);
        }
        out[d].count = out[d].arrived.size() / width;
        out[d].arrived.push_back(0);
    }
    return out;
}

// Router::ask on every rank: asks[r] holds asked[r] (slot, entry) pairs; tables[r][j] rank
// r's tables.
u64 ask(World &w, vector<vector<u32>> &asks, vector<u64> &asked, vector<std::array<u32 *, 3>> tables, u32 width,
        vector<vector<u32>> &out) {
    u32 P = w.size();
    u64 total = 0;
    for (u64 a : asked) total += a;
    if (total == 0) return 0;
    vector<Routed> q = route(w, asks, asked, 2);
    vector<vector<u32>> answer(P);
    for (u32 r = 0; r < P; r++) {
        answer[r].assign(q[r].count * width + 1, 0);
        launch(q[r].count, [&] {
            euler_answer(q[r].arrived.data(), q[r].count, w.ranks[r].first, tables[r][0], tables[r][1], tables[r][2],
                         width, answer[r].data());
        });
    }
    // Back along the runs: rank r's answers for rank s lie in r's arrival order.
    for (u32 s = 0; s < P; s++) {
        vector<u32> back;
        for (u32 r = 0; r < P; r++) {
            size_t at = 0;
            for (u32 x = 0; x < s; x++) at += q[r].recv_counts[x] / 2 * width;
            size_t c = q[r].recv_counts[s] / 2 * width;
            back.insert(back.end(), answer[r].begin() + at, answer[r].begin() + at + c);
        }
        back.push_back(0);
        launch(asked[s], [&] { euler_answered(q[s].sent.data(), back.data(), asked[s], width, out[s].data()); });
    }
    return total;
}

// Router::query on every rank: tables by number (0 weight, 1 next, 2 end, 3 ruler_of).
u64 query(World &w, vector<vector<u32>> &list, vector<u64> &count, int table, const int (&tables)[3],
          u32 width, vector<vector<u32>> &out) {
    u32 P = w.size();
    auto pick = [&](Rank &k, int t) -> vector<u32> & {
        return t == 0 ? k.weight : t == 1 ? k.next : t == 2 ? k.end : k.ruler_of;
    };
    vector<vector<u32>> asks(P);
    vector<u64> asked(P, 0);
    vector<std::array<u32 *, 3>> t(P);
    for (u32 r = 0; r < P; r++) {
        Rank &k = w.ranks[r];
        asks[r].assign(2 * count[r] + 1, 0);
        launch(count[r], [&] { euler_ask(list[r].data(), count[r], pick(k, table).data(), asks[r].data(), &asked[r]); });
        t[r] = {pick(k, tables[0]).data(), pick(k, tables[1]).data(), pick(k, tables[2]).data()};
    }
    return ask(w, asks, asked, t, width, out);
}

// gpu_ruling::walk.
size_t walk(World &w, bool sum) {
    u32 P = w.size();
    vector<vector<u32>> items(P);
    vector<u64> moving(P, 0);
    for (u32 r = 0; r < P; r++) {
        Rank &k = w.ranks[r];
        u64 n = k.heads.size(), c = 0;
        launch(n, [&] { euler_walk_start(k.heads.data(), n, k.first, EVERY, k.next.data(), k.weight.data(), 0, nullptr, &c); });
        items[r].assign(ITEM * c + 1, 0);
        launch(n, [&] { euler_walk_start(k.heads.data(), n, k.first, EVERY, k.next.data(), k.weight.data(), 1, items[r].data(), &moving[r]); });
    }
    size_t rounds = 0;
    for (;;) {
        u64 total = 0;
        for (u64 m : moving) total += m;
        if (total == 0) return rounds;
        rounds++;
        vector<Routed> arrived = route(w, items, moving, ITEM);
        u32 go_on = rounds <= 4 * EVERY;
        for (u32 r = 0; r < P; r++) {
            Rank &k = w.ranks[r];
            u64 n = arrived[r].count;
            items[r].assign(ITEM * n + 1, 0);
            moving[r] = 0;
            launch(n, [&] {
                euler_walk(arrived[r].arrived.data(), n, k.first, k.here, EVERY, sum, go_on, k.next.data(), k.weight.data(),
                           k.end.data(), k.ruler_of.data(), k.before.data(), items[r].data(), &moving[r]);
            });
        }
    }
}

// gpu_ruling::jump: false where some list has no end.
bool jump(World &w, bool sum) {
    u32 P = w.size();
    for (Rank &k : w.ranks) {
        k.ruler_of.assign(k.here + 1, NIL);
        k.before.assign(k.here + 1, 0);
    }
    walk(w, sum);
    vector<vector<u32>> rulers(P), got(P);
    vector<u64> ruler_count(P, 0), head_count(P);
    for (u32 r = 0; r < P; r++) {
        Rank &k = w.ranks[r];
        head_count[r] = k.heads.size();
        rulers[r].assign(k.heads.size() + 1, 0);
        launch(head_count[r], [&] { euler_walk_rulers(k.heads.data(), head_count[r], k.ruler_of.data(), rulers[r].data(), &ruler_count[r]); });
        got[r].assign(3 * ruler_count[r] + 1, 0);
    }
    if (sum) {
        u64 total = 0;
        for (Rank &k : w.ranks) total += k.here;
        size_t limit = 66 - __builtin_clzll(std::max<u64>(total, 1)), round = 0;
        for (; round < limit; round++) {
            if (query(w, rulers, ruler_count, 1, {0, 1, 2}, 3, got) == 0) break;
            for (u32 r = 0; r < P; r++) {
                Rank &k = w.ranks[r];
                launch(ruler_count[r], [&] { euler_rule_rank(rulers[r].data(), ruler_count[r], got[r].data(), k.weight.data(), k.next.data(), k.end.data()); });
            }
        }
        if (round == limit) return false;
    } else {
        while (query(w, rulers, ruler_count, 1, {0, 1, 1}, 2, got) > 0) {
            u64 changed = 0;
            for (u32 r = 0; r < P; r++) {
                Rank &k = w.ranks[r];
                launch(ruler_count[r], [&] { euler_rule_min(rulers[r].data(), ruler_count[r], got[r].data(), k.weight.data(), k.next.data(), &changed); });
            }
            if (changed == 0) break;
        }
    }
    vector<vector<u32>> heads(P), answers(P);
    for (u32 r = 0; r < P; r++) {
        heads[r] = w.ranks[r].heads;
        answers[r].assign(2 * head_count[r] + 1, 0);
    }
    query(w, heads, head_count, 3, {0, 2, 2}, 2, answers);
    for (u32 r = 0; r < P; r++) {
        Rank &k = w.ranks[r];
        launch(head_count[r], [&] {
            euler_rule_spread(k.heads.data(), head_count[r], k.ruler_of.data(), k.before.data(), answers[r].data(), sum, k.weight.data(), k.end.data());
        });
    }
    return true;
}

// Global slots cut into `P` uneven blocks (rank 1 empty where P > 2); every slot a head.
World split(const vector<u32> &next, const vector<u32> &weight, const vector<u32> &end, u32 P) {
    World w;
    u64 N = next.size();
    w.starts.push_back(0);
    for (u32 r = 1; r < P; r++) w.starts.push_back(P > 2 && r == 2 ? w.starts.back() : N * r * r / (P * P));
    w.starts.push_back(N);
    for (u32 r = 0; r < P; r++) {
        Rank k;
        k.first = (u32)w.starts[r];
        k.here = (u32)(w.starts[r + 1] - w.starts[r]);
        for (u32 i = 0; i < k.here; i++) k.heads.push_back(i);
        std::shuffle(k.heads.begin(), k.heads.end(), rng);
        k.next.assign(next.begin() + k.first, next.begin() + k.first + k.here);
        k.weight.assign(weight.begin() + k.first, weight.begin() + k.first + k.here);
        k.end.assign(end.begin() + k.first, end.begin() + k.first + k.here);
        k.next.push_back(0), k.weight.push_back(0), k.end.push_back(0);
        w.ranks.push_back(k);
    }
    return w;
}

// Pieces of random lengths (1, short, or thousands) over a random order of N slots.
vector<vector<u32>> pieces(u64 N) {
    vector<u32> order(N);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    vector<vector<u32>> out;
    for (u64 at = 0; at < N;) {
        u64 kind = rng() % 4, len = kind == 0 ? 1 : kind == 1 ? 1 + rng() % 40 : 1 + rng() % 9000;
        len = std::min<u64>(len, N - at);
        out.emplace_back(order.begin() + at, order.begin() + at + len);
        at += len;
    }
    return out;
}

int check(u32 P, u64 N) {
    int bad = 0;
    vector<vector<u32>> parts = pieces(N);
    vector<u32> next(N), weight(N), end(N), want(N), want_end(N);
    // Cycle minima.
    for (auto &c : parts) {
        u32 m = NIL;
        for (size_t i = 0; i < c.size(); i++) {
            next[c[i]] = c[(i + 1) % c.size()];
            weight[c[i]] = (u32)(rng() % 1000000);
            m = std::min(m, weight[c[i]]);
        }
        for (u32 s : c) want[s] = m;
    }
    World w = split(next, weight, end, P);
    jump(w, false);
    for (auto &k : w.ranks)
        for (u32 i = 0; i < k.here; i++) bad += k.weight[i] != want[k.first + i];
    // List ranking: steps from each head through its list's end, and the last head's `end`.
    for (auto &c : parts) {
        u32 d = 0;
        for (size_t i = c.size(); i-- > 0;) {
            next[c[i]] = i + 1 < c.size() ? c[i + 1] : NIL;
            weight[c[i]] = 1 + (u32)(rng() % 5);
            end[c[i]] = (u32)(rng() % N);
            d += weight[c[i]];
            want[c[i]] = d;
            want_end[c[i]] = end[c.back()];
        }
    }
    w = split(next, weight, end, P);
    bool ended = jump(w, true);
    for (auto &k : w.ranks)
        for (u32 i = 0; i < k.here; i++)
            bad += k.weight[i] != want[k.first + i] || k.end[i] != want_end[k.first + i];
    // One list closed into a cycle: no end.
    std::vector<u32> c = parts[0];
    bool refused = true;
    if (c.size() > 1) {
        next[c.back()] = c[0];
        w = split(next, weight, end, P);
        refused = !jump(w, true);
    }
    printf("  %u rank(s), %llu heads, %zu pieces, 1 ruler in %u: %s\n", P, N, parts.size(), EVERY,
           bad == 0 && ended && refused ? "all equal" : "DIFFERENT");
    return bad + !ended + !refused;
}

// Blocks of N nodes (slots) over P ranks: even, or uneven with rank 2 empty.
World blocks(u64 N, u32 P, bool even) {
    World w;
    for (u32 r = 0; r <= P; r++) {
        u64 at = even ? N * r / P : (r == P ? N : (P > 2 && r == 2 ? N * (r - 1) * (r - 1) / (P * P) : N * r * r / (P * P)));
        w.starts.push_back(at);
    }
    for (u32 r = 0; r < P; r++) {
        Rank k;
        k.first = (u32)w.starts[r];
        k.here = (u32)(w.starts[r + 1] - w.starts[r]);
        w.ranks.push_back(k);
    }
    return w;
}

// gpu_forest::join over links (a, b, slot) held by the rank of the slot: the chosen slots
// and the rounds.
std::pair<vector<u32>, size_t> forest(u64 trails_n, u64 slots_n, const vector<std::array<u32, 3>> &links, u32 P) {
    World slots = blocks(slots_n, P, false), trails = blocks(trails_n, P, true);
    vector<vector<u32>> offers(P), root(P), chosen(P);
    vector<vector<u64>> best(P);
    vector<u64> count(P, 0), chosen_count(P, 0);
    for (auto &l : links) {
        u32 r = 0;
        while (slots.starts[r + 1] <= l[2]) r++;
        offers[r].insert(offers[r].end(), {l[0], l[1], l[2] - slots.ranks[r].first});
        count[r]++;
    }
    // gpu_forest.rs `distinct`: each rank keeps, of its offers between the same two trails,
    // the one with the smallest link.
    for (u32 r = 0; r < P; r++) {
        u64 capacity = 1;
        while (capacity < 2 * count[r]) capacity *= 2;
        vector<u64> keys(capacity, 0);
        vector<u32> table_links(capacity, NIL), kept(3 * count[r] + 1, 0);
        u64 kept_count = 0;
        launch(count[r], [&] { euler_offer_insert(offers[r].data(), count[r], capacity - 1, keys.data(), table_links.data()); });
        launch(capacity, [&] { euler_offer_take(keys.data(), table_links.data(), capacity, kept.data(), &kept_count); });
        offers[r] = kept, count[r] = kept_count;
    }
    for (u32 r = 0; r < P; r++) {
        u64 n = trails.ranks[r].here;
        root[r].assign(n + 1, 0), best[r].assign(n + 1, 0), chosen[r].assign(n + 1, 0);
        launch(n, [&] { euler_forest_start(root[r].data(), best[r].data(), n, trails.ranks[r].first); });
    }
    size_t rounds = 0;
    for (;;) {
        rounds++;
        vector<vector<u32>> asks(P), roots(P), between(P);
        vector<u64> asked(P), between_count(P, 0), hooked(P);
        vector<std::array<u32 *, 3>> t(P);
        for (u32 r = 0; r < P; r++) {
            asks[r].assign(4 * count[r] + 1, 0);
            launch(count[r], [&] { euler_forest_ask(offers[r].data(), count[r], asks[r].data()); });
            asked[r] = 2 * count[r];
            roots[r].assign(2 * count[r] + 1, 0);
            t[r] = {root[r].data(), root[r].data(), root[r].data()};
        }
        ask(trails, asks, asked, t, 1, roots);
        for (u32 r = 0; r < P; r++) {
            between[r].assign(3 * count[r] + 1, 0);
            launch(count[r], [&] {
                euler_forest_between(offers[r].data(), count[r], roots[r].data(), slots.ranks[r].first, between[r].data(),
                                     &between_count[r]);
            });
        }
        vector<Routed> arrived = route(trails, between, between_count, 3);
        u64 any = 0;
        for (u32 r = 0; r < P; r++) {
            u64 n = trails.ranks[r].here;
            launch(arrived[r].count, [&] {
                euler_forest_best(arrived[r].arrived.data(), arrived[r].count, trails.ranks[r].first, best[r].data());
            });
            u64 before = chosen_count[r];
            launch(n, [&] { euler_forest_hooks(best[r].data(), n, root[r].data(), chosen[r].data(), &chosen_count[r]); });
            any += chosen_count[r] - before;
        }
        if (any == 0) break;
        // The shortcut: the moved nodes ask their roots' roots until nothing changes.
        vector<vector<u32>> moved(P), up(P);
        vector<u64> moved_count(P, 0);
        for (u32 r = 0; r < P; r++) {
            u64 n = trails.ranks[r].here;
            moved[r].assign(n + 1, 0);
            launch(n, [&] { euler_forest_moved(root[r].data(), n, trails.ranks[r].first, moved[r].data(), &moved_count[r]); });
            up[r].assign(moved_count[r] + 1, 0);
        }
        for (;;) {
            vector<vector<u32>> qs(P);
            vector<u64> qn(P, 0);
            for (u32 r = 0; r < P; r++) {
                qs[r].assign(2 * moved_count[r] + 1, 0);
                launch(moved_count[r], [&] { euler_ask(moved[r].data(), moved_count[r], root[r].data(), qs[r].data(), &qn[r]); });
                t[r] = {root[r].data(), root[r].data(), root[r].data()};
            }
            ask(trails, qs, qn, t, 1, up);
            u64 changed = 0;
            for (u32 r = 0; r < P; r++)
                launch(moved_count[r], [&] { euler_forest_up(moved[r].data(), moved_count[r], up[r].data(), root[r].data(), &changed); });
            if (changed == 0) break;
        }
    }
    vector<u64> n(P);
    for (u32 r = 0; r < P; r++) n[r] = chosen_count[r];
    vector<Routed> arrived = route(slots, chosen, n, 1);
    vector<u8> joined(slots_n + 1, 0);
    for (u32 r = 0; r < P; r++)
        launch(arrived[r].count, [&] {
            euler_forest_joined(arrived[r].arrived.data(), arrived[r].count, slots.ranks[r].first, joined.data() + slots.ranks[r].first);
        });
    vector<u32> out;
    for (u32 s = 0; s < slots_n; s++)
        if (joined[s]) out.push_back(s);
    return {out, rounds};
}

// forest.rs's hooking rounds, one node at a time.
std::pair<vector<u32>, size_t> forest_reference(u64 trails_n, const vector<std::array<u32, 3>> &links) {
    vector<u32> root(trails_n);
    std::iota(root.begin(), root.end(), 0);
    vector<u32> chosen;
    for (size_t rounds = 1;; rounds++) {
        vector<u64> best(trails_n, NO_BEST);
        for (auto &l : links) {
            u32 a = root[l[0]], b = root[l[1]];
            if (a != b) best[std::max(a, b)] = std::min(best[std::max(a, b)], (u64)std::min(a, b) << 32 | l[2]);
        }
        bool hooked = false;
        for (u64 i = 0; i < trails_n; i++)
            if (best[i] != NO_BEST) root[i] = (u32)(best[i] >> 32), chosen.push_back((u32)best[i]), hooked = true;
        if (!hooked) {
            std::sort(chosen.begin(), chosen.end());
            return {chosen, rounds};
        }
        for (bool changed = true; changed;) {
            changed = false;
            for (u64 i = 0; i < trails_n; i++) changed |= root[i] != root[root[i]], root[i] = root[root[i]];
        }
    }
}

// `few` trails: links between few pairs of trails, each pair offered many times over (as
// every vertex of a graph of two trails offers the same pair), which `distinct` thins out.
int check_forest(u32 P, bool few) {
    // Trails labelled by some of the node ids, links between random pairs of them (some
    // repeated, a few pieces apart), each on its own slot.
    u64 trails_n = 5000, slots_n = 40000;
    vector<u32> labels;
    for (u32 i = 0; i < trails_n; i++)
        if (rng() % (few ? 500 : 3) == 0) labels.push_back(i);
    vector<u32> slot(slots_n);
    std::iota(slot.begin(), slot.end(), 0);
    std::shuffle(slot.begin(), slot.end(), rng);
    vector<std::array<u32, 3>> links;
    for (u32 k = 0; k < 3000; k++) {
        u32 a = labels[rng() % labels.size()], b = labels[rng() % labels.size()];
        if (a == b || a % 97 == 1 || b % 97 == 1) continue; // some trails stay apart
        links.push_back({std::min(a, b), std::max(a, b), slot[k]});
    }
    auto got = forest(trails_n, slots_n, links, P);
    auto want = forest_reference(trails_n, links);
    bool same = got == want;
    printf("  forest, %u rank(s), %zu trails, %zu links: %zu chosen in %zu rounds: %s\n", P, labels.size(), links.size(),
           want.first.size(), want.second, same ? "all equal" : "DIFFERENT");
    return !same;
}

// gpu_ranks.rs `rank`'s finds and placement over slots in P blocks: two cycles of m slots
// (a circuit's two directions) in random slot order with random darts; the head (cycle A's
// first slot, by its dart), the last slot (whose successor is the head), and after the cut
// (A from the head, B from its first slot) the lists' distances and ends as the ranking gives
// them; cycle A's slots must land at positions 0 .. m-1 in walking order, B's nowhere.
int check_order(u32 P, u64 m) {
    u64 N = 2 * m;
    World w = blocks(N, P, P % 2 == 0);
    vector<u32> perm(N), dart(N), gnext(N), dist(N), end(N);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::iota(dart.begin(), dart.end(), 0);
    std::shuffle(dart.begin(), dart.end(), rng);
    for (u64 i = 0; i < m; i++) {
        gnext[perm[i]] = perm[(i + 1) % m], gnext[perm[m + i]] = perm[m + (i + 1) % m];
        dist[perm[i]] = (u32)(m - 1 - i), end[perm[i]] = perm[m - 1];
        dist[perm[m + i]] = (u32)(m - 1 - i), end[perm[m + i]] = perm[2 * m - 1];
    }
    auto find = [&](const vector<u32> &a, u32 value) {
        u32 global = NIL;
        for (auto &k : w.ranks) {
            u32 found = NIL;
            launch(k.here, [&] { euler_find(a.data() + k.first, k.here, value, k.first, &found); });
            global = std::min(global, found);
        }
        return global;
    };
    u32 head = find(dart, dart[perm[0]]), last = find(gnext, head);
    int bad = head != perm[0] || last != perm[m - 1] || find(dart, (u32)N) != NIL;
    vector<u64> pos(N), code(N);
    u64 placed = 0;
    for (auto &k : w.ranks)
        launch(k.here, [&] {
            euler_slot_place(dist.data() + k.first, end.data() + k.first, dart.data() + k.first, k.here, last, m,
                             pos.data() + k.first, code.data() + k.first, &placed);
        });
    for (u64 i = 0; i < m; i++)
        bad += pos[perm[i]] != i || code[perm[i]] != dart[perm[i]] || pos[perm[m + i]] != ~0ull;
    bad += placed != m;
    printf("  order, %u rank(s), %llu slots: %s\n", P, N, bad ? "DIFFERENT" : "all equal");
    return bad;
}

int main() {
    int bad = 0;
    // The rulers' density changes the rounds, never the result: sparse (walks cut at
    // their round limit, many unreached heads ruling) and dense.
    for (u32 every : {32u, 8u, 2u}) {
        EVERY = every;
        for (u32 P = 1; P <= 4; P++) bad += check(P, 30000);
    }
    for (bool few : {false, true})
        for (u32 P = 1; P <= 4; P++) bad += check_forest(P, few);
    for (u32 P = 1; P <= 4; P++) bad += check_order(P, 5000);
    return bad ? 1 : 0;
}
