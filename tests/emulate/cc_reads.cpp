// Host emulation of kernels/cc.cu's giant skip listing on one rank, as
// src/graph/components/gpu.rs `skip_giants` drives it: cc_list_reads (a warp at a time,
// warp_fibers.h: long rows go through the warp's lanes together), cc_list_flagged,
// cc_ghost_kinds over the read masks it set, and cc_apply_masks over masks come in from the
// asking ranks. Checked against the listing's definition, written here: every cut edge of a
// vertex outside the giant is read, and of the giant's only those to a ghost whose owner has a
// giant of another class; a root is a boundary component iff a read edge leaves it; a ghost's
// mask bit is set iff a read edge reaches it, and then it takes its owner's giant kind, else
// none; a plan entry is sent (and listed among its asking rank's live entries) iff that rank's
// mask has its bit and its vertex is outside the giant. 2 to 4 ranks, short rows and rows of up to 300 cut edges (hubs, in the giant and
// out), giants of the same, of another or of no class. Run by scripts/emulate-kernels.
#include <algorithm>
#include <cstdio>
#include <random>
#include <set>
typedef unsigned char u8;
#include "warp_fibers.h"
inline u64 atomicAdd(u64 *a, u64 v) { u64 old = *a; *a += v; return old; }
inline u64 atomicOr(u64 *a, u64 v) { u64 old = *a; *a |= v; return old; }
// Blocks of one warp: block_slots' shared words are statics, its barriers the warp's.
struct Dim { u32 x; };
#define threadIdx (Dim{lane_id()})
static const Dim blockDim{WARP};
#define __shared__ static
#define __syncthreads() __syncwarp()
#include "cc_reads_kernels.h"  // the prelude's warp sums, cc.cu's defines and listing section

static int run_case(u32 ranks, u32 me, u32 n, u32 hubs, bool others, u64 seed) {
    std::mt19937_64 rng(seed);
    // Ghosts by owner (none of our own), kinds per owner.
    std::vector<u64> ghost_at(ranks + 1), word_at(ranks + 1);
    std::vector<u8> kinds(ranks, 0);
    for (u32 s = 0; s < ranks; s++) {
        u64 count = s == me ? 0 : rng() % 150;
        ghost_at[s + 1] = ghost_at[s] + count;
        word_at[s + 1] = word_at[s] + (count + 63) / 64;
        u32 pick = rng() % 3;
        if (count) kinds[s] = pick == 0 ? 0 : pick == 1 || !others ? SAME_GIANT : OTHER_GIANT;
    }
    u64 ghosts = ghost_at[ranks];
    if (!ghosts) return 0;
    u32 any_other = std::count(kinds.begin(), kinds.end(), OTHER_GIANT) > 0;
    // A compressed forest: the giant rooted at 0, the rest in small trees.
    std::vector<u32> parent(n);
    u32 giant = 0;
    for (u32 v = 0; v < n; v++) parent[v] = v == 0 || rng() % 10 < 6 ? giant : (rng() % 3 ? v : parent[rng() % v]);
    for (u32 v = 0; v < n; v++) parent[v] = parent[parent[v]];
    std::vector<u64> cut_at(n + 1);
    std::vector<u32> cut_ghost;
    for (u32 v = 0; v < n; v++) {
        u64 len = v < hubs ? 33 + rng() % 270 : rng() % 5;
        if (rng() % 7 == 0) len = 32 + rng() % 3;  // at the warp's threshold
        for (u64 e = 0; e < len; e++) cut_ghost.push_back(rng() % ghosts);
        cut_at[v + 1] = cut_ghost.size();
    }
    if (hubs) std::swap(parent[hubs / 2], parent[n - 1]);  // a hub outside the giant, maybe
    std::vector<u8> flags(n, 0);
    std::vector<u64> words(word_at[ranks], 0);
    std::vector<u32> own(cut_ghost.size() + 1), ghost(cut_ghost.size() + 1);
    u64 tail = 0, flagged = 0;
    std::vector<u32> roots(n + 1);
    launch_warps(n, [&] { cc_list_reads(cut_at.data(), cut_ghost.data(), n, kinds.data(), ghost_at.data(), word_at.data(), ranks, giant, any_other, parent.data(), flags.data(), words.data(), own.data(), ghost.data(), &tail); });
    launch_warps(n, [&] { cc_list_flagged(flags.data(), n, roots.data(), &flagged); });
    std::vector<u8> ghost_giant(ghosts, 9);
    launch_warps(ghosts, [&] { cc_ghost_kinds(words.data(), kinds.data(), ghost_at.data(), word_at.data(), ranks, ghosts, ghost_giant.data()); });
    // The definition.
    auto owner = [&](u64 g) { u32 s = 0; while (ghost_at[s + 1] <= g) s++; return s; };
    std::multiset<std::pair<u32, u32>> want, got;
    std::set<u32> want_roots, got_roots(roots.begin(), roots.begin() + flagged);
    std::vector<bool> read(ghosts, false);
    for (u32 v = 0; v < n; v++)
        for (u64 e = cut_at[v]; e < cut_at[v + 1]; e++) {
            u32 g = cut_ghost[e];
            if (parent[v] == giant && kinds[owner(g)] != OTHER_GIANT) continue;
            want.insert({v, g});
            want_roots.insert(parent[v]);
            read[g] = true;
        }
    for (u64 i = 0; i < tail; i++) got.insert({own[i], ghost[i]});
    int failures = 0;
    if (got != want) {
        failures++;
        printf("  %u ranks, n %u: %llu edges listed, %zu expected (or others)\n", ranks, n, tail, want.size());
    }
    if (got_roots != want_roots || flagged != want_roots.size()) {
        failures++;
        printf("  %u ranks, n %u: %llu boundary roots, %zu expected\n", ranks, n, flagged, want_roots.size());
    }
    for (u64 g = 0; g < ghosts; g++) {
        u32 s = owner(g);
        u64 j = g - ghost_at[s];
        bool bit = (words[word_at[s] + j / 64] >> (j % 64)) & 1;
        u8 kind = read[g] ? kinds[s] : 0;
        if (bit != read[g] || ghost_giant[g] != kind) {
            if (failures++ < 5) printf("  ghost %llu: bit %d kind %d, expected %d and %d\n", g, bit, ghost_giant[g], (int)read[g], kind);
        }
    }
    // The plan's side: entries grouped by asking rank, masks come in from each.
    std::vector<u64> send_at(ranks + 1), in_at(ranks + 1);
    for (u32 s = 0; s < ranks; s++) {
        u64 count = s == me ? 0 : rng() % 200;
        send_at[s + 1] = send_at[s] + count;
        in_at[s + 1] = in_at[s] + (count + 63) / 64;
    }
    u64 sends = send_at[ranks];
    std::vector<u64> inbox(in_at[ranks]);
    for (auto &w : inbox) w = rng() & rng();
    std::vector<u32> send_local(sends);
    for (auto &u : send_local) u = rng() % n;
    std::vector<u64> sent(sends, 5), live_counts(ranks, 0);
    std::vector<u32> live(sends + 1, ~0u);
    launch_warps(sends, [&] { cc_apply_masks(inbox.data(), send_at.data(), in_at.data(), ranks, sends, send_local.data(), parent.data(), giant, sent.data(), live.data(), live_counts.data()); });
    for (u32 s = 0; s < ranks; s++) {
        std::set<u32> want_live, got_live;
        for (u64 i = send_at[s]; i < send_at[s + 1]; i++) {
            u64 j = i - send_at[s];
            bool asked = (inbox[in_at[s] + j / 64] >> (j % 64)) & 1;
            u64 expect = asked && parent[send_local[i]] != giant ? 0 : NEVER_SENT;
            if (sent[i] != expect && failures++ < 5) printf("  plan entry %llu: %llu, expected %llu\n", i, sent[i], expect);
            if (expect == 0) want_live.insert(i);
        }
        for (u64 k = 0; k < live_counts[s] && k < send_at[s + 1] - send_at[s]; k++) got_live.insert(live[send_at[s] + k]);
        if (live_counts[s] != want_live.size() || got_live != want_live) {
            failures++;
            printf("  rank %u's live entries: %llu listed, %zu expected (or others)\n", s, live_counts[s], want_live.size());
        }
    }
    return failures;
}

int main() {
    int failures = 0, cases = 0;
    for (u32 ranks = 2; ranks <= 4; ranks++)
        for (u32 n : {31u, 200u, 1000u})
            for (u32 hubs : {0u, 3u, 40u})
                for (bool others : {false, true})
                    for (u64 seed = 1; seed <= 2; seed++) {
                        failures += run_case(ranks, (u32)(seed % ranks), n, std::min(hubs, n / 2), others, seed * 104729 + n * 13 + hubs + ranks);
                        cases++;
                    }
    printf("%s (%d skip listings on 2 to 4 ranks)\n", failures ? "DIFFERENT" : "all equal", cases);
    return failures ? 1 : 0;
}
