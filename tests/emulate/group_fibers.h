// A CUDA warp on the host whose lanes split into groups that go their own ways (kernels/
// mesh.cu's opt-colour: a group of lanes per node, each group as many trials as its node
// needs): the warp's 32 threads as fibers taking turns, and each shuffle or vote waits, as
// CUDA's *_sync do, for the lanes its mask names only. A lane's k-th sync with mask M posts
// its word under (lane, M, k) and passes the turn on until every lane of M has posted its
// k-th with M; then it reads theirs. Words are never overwritten, so lanes of other groups,
// or of the same group a sync ahead, disturb nothing. A sync that cannot complete (a lane of
// its mask finished, or waits elsewhere for ever) is reported and stops the program.
// (warp_fibers.h is the lock-step form, for kernels whose lanes all reach each sync.)
// Used by mesh_opt.cpp.
#pragma once
#include <ucontext.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <tuple>
#include <vector>
#include "cuda_host.h"

struct GroupWarp {
    ucontext_t host, lane[WARP];
    std::vector<char> stack[WARP];
    bool done[WARP];
    u64 first_thread;
    const std::function<void()> *job;
    std::map<std::tuple<u32, u32, u64>, u64> posted;  // (lane, mask, k) -> word
    std::map<std::pair<u32, u32>, u64> syncs;         // (lane, mask) -> syncs done
};
static GroupWarp emu_group;

// The turn to the next lane that has not finished (none: stay).
inline void take_turns() {
    u32 l = lane_id();
    for (u32 d = 1; d < WARP; d++) {
        u32 next = (l + d) % WARP;
        if (!emu_group.done[next]) {
            swapcontext(&emu_group.lane[l], &emu_group.lane[next]);
            break;
        }
    }
    emu_thread = emu_group.first_thread + l;
}

// This lane's next sync with `mask`, posting `word`; returns its index k once every lane
// of the mask has posted its k-th (their words: posted_word).
inline u64 group_sync(u32 mask, u64 word) {
    u32 l = lane_id();
    if (!(mask >> l & 1)) { fprintf(stderr, "lane %u syncs with mask %08x that leaves it out\n", l, mask); exit(2); }
    u64 k = emu_group.syncs[{l, mask}]++;
    emu_group.posted[{l, mask, k}] = word;
    for (u64 turns = 0;; turns++) {
        bool all = true;
        for (u32 j = 0; j < WARP && all; j++)
            all = !(mask >> j & 1) || emu_group.posted.count({j, mask, k});
        if (all) return k;
        if (turns > 100000) {
            fprintf(stderr, "thread %llu: sync %llu with mask %08x never completes\n", emu_thread, k, mask);
            exit(2);
        }
        take_turns();
    }
}
inline u64 posted_word(u32 lane, u32 mask, u64 k) {
    if (!(mask >> lane & 1)) { fprintf(stderr, "read of lane %u outside mask %08x\n", lane, mask); exit(2); }
    return emu_group.posted.at({lane, mask, k});
}
template <class T> u64 to_word(T x) { static_assert(sizeof(T) <= 8); u64 w = 0; memcpy(&w, &x, sizeof(T)); return w; }
template <class T> T from_word(u64 w) { T x; memcpy(&x, &w, sizeof(T)); return x; }
template <class T> T __shfl_xor_sync(u32 mask, T x, int m) {
    u64 k = group_sync(mask, to_word(x));
    return from_word<T>(posted_word(lane_id() ^ m, mask, k));
}
template <class T> T __shfl_sync(u32 mask, T x, int from) {
    u64 k = group_sync(mask, to_word(x));
    return from_word<T>(posted_word(from % WARP, mask, k));
}
inline u32 __ballot_sync(u32 mask, bool p) {
    u64 k = group_sync(mask, p);
    u32 ballot = 0;
    for (u32 j = 0; j < WARP; j++)
        if (mask >> j & 1) ballot |= (u32)(posted_word(j, mask, k) != 0) << j;
    return ballot;
}
inline bool __any_sync(u32 mask, bool p) { return __ballot_sync(mask, p) != 0; }
inline bool __all_sync(u32 mask, bool p) { return __ballot_sync(mask, p) == mask; }

static void group_lane_entry(int l) {
    emu_thread = emu_group.first_thread + l;
    (*emu_group.job)();
    emu_group.done[l] = true;
    for (u32 d = 1; d < WARP; d++)  // on to a lane still running; it never comes back here
        if (!emu_group.done[(l + d) % WARP]) swapcontext(&emu_group.lane[l], &emu_group.lane[(l + d) % WARP]);
    swapcontext(&emu_group.lane[l], &emu_group.host);
}

// `threads` rounded up to whole warps, a warp at a time (in reverse order), its lanes as fibers.
template <class F> void launch_group_warps(u64 threads, F f) {
    std::function<void()> job = f;
    emu_group.job = &job;
    for (u64 w = (threads + WARP - 1) / WARP; w-- > 0;) {
        emu_group.first_thread = w * WARP;
        emu_group.posted.clear();
        emu_group.syncs.clear();
        for (int l = 0; l < WARP; l++) {
            emu_group.done[l] = false;
            emu_group.stack[l].resize(1 << 17);
            getcontext(&emu_group.lane[l]);
            emu_group.lane[l].uc_stack.ss_sp = emu_group.stack[l].data();
            emu_group.lane[l].uc_stack.ss_size = emu_group.stack[l].size();
            emu_group.lane[l].uc_link = nullptr;
            makecontext(&emu_group.lane[l], (void (*)())group_lane_entry, 1, l);
        }
        swapcontext(&emu_group.host, &emu_group.lane[0]);
    }
}
