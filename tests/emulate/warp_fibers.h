// A CUDA warp on the host, for the emulations whose kernels talk across lanes (ballots,
// shuffles, matches): `launch_warps` runs the threads a warp at a time (warps in reverse
// order), its 32 threads as fibers on the host thread, taking turns in lane order: at a
// ballot, shuffle or match each posts its word and passes to the next lane, then, once all
// have posted, each reads and passes on again, so no word is overwritten before every lane
// has read it. (The kernels reach each of these with the whole warp, as CUDA needs.)
// Used by bc_levels.cpp, cc_shortcut.cpp, cc_reads.cpp and godfrey_walk.cpp.
#pragma once
#include <ucontext.h>
#include <functional>
#include <vector>
#include "cuda_host.h"
inline u32 lanes_before() { return (1u << lane_id()) - 1u; }
inline int __ffs(u32 x) { return __builtin_ffs(x); }
inline int __popc(u32 x) { return __builtin_popcount(x); }
struct Warp {
    ucontext_t host, lane[WARP];
    u64 words[WARP];
    const std::function<void()> *job;
    u64 first_thread;
};
static Warp emu_warp;
static std::vector<char> emu_stacks[WARP];
inline void pass_on() {
    u32 l = lane_id();
    swapcontext(&emu_warp.lane[l], &emu_warp.lane[(l + 1) % WARP]);
    emu_thread = emu_warp.first_thread + l;  // back in this lane
}
inline u64 exchange(u64 mine, int from) {
    emu_warp.words[lane_id()] = mine;
    pass_on();
    u64 got = emu_warp.words[from];
    pass_on();
    return got;
}
inline u32 __activemask() { return FULL; }
template <class T> T __shfl_sync(u32, T x, int from) { return (T)exchange((u64)x, from); }
template <class T> T __shfl_up_sync(u32, T x, u32 d) {
    u32 l = lane_id();
    return (T)exchange((u64)x, l >= d ? l - d : l);
}
template <class T> T __shfl_xor_sync(u32, T x, int m) { return (T)exchange((u64)x, lane_id() ^ m); }
inline u32 __ballot_sync(u32, bool p) {
    emu_warp.words[lane_id()] = p;
    pass_on();
    u32 ballot = 0;
    for (int j = 0; j < WARP; j++) ballot |= (u32)(emu_warp.words[j] != 0) << j;
    pass_on();
    return ballot;
}
// The lanes whose value equals this lane's.
inline u32 __match_any_sync(u32, u64 value) {
    emu_warp.words[lane_id()] = value;
    pass_on();
    u32 same = 0;
    for (int j = 0; j < WARP; j++) same |= (u32)(emu_warp.words[j] == value) << j;
    pass_on();
    return same;
}
// A lane's whole run; the last lane to finish hands back to the host.
static void lane_entry(int l) {
    emu_thread = emu_warp.first_thread + l;
    (*emu_warp.job)();
    swapcontext(&emu_warp.lane[l], l + 1 < WARP ? &emu_warp.lane[l + 1] : &emu_warp.host);
}

// `threads` rounded up to whole warps, a warp at a time (in reverse order), its lanes as fibers.
template <class F> void launch_warps(u64 threads, F f) {
    std::function<void()> job = f;
    emu_warp.job = &job;
    for (u64 w = (threads + WARP - 1) / WARP; w-- > 0;) {
        emu_warp.first_thread = w * WARP;
        for (int l = 0; l < WARP; l++) {
            emu_stacks[l].resize(1 << 16);
            getcontext(&emu_warp.lane[l]);
            emu_warp.lane[l].uc_stack.ss_sp = emu_stacks[l].data();
            emu_warp.lane[l].uc_stack.ss_size = emu_stacks[l].size();
            emu_warp.lane[l].uc_link = nullptr;
            makecontext(&emu_warp.lane[l], (void (*)())lane_entry, 1, l);
        }
        swapcontext(&emu_warp.host, &emu_warp.lane[0]);
    }
}
// Every lane reaches the barrier before any goes on: one turn round the ring (the last lane
// to arrive hands to lane 0, which resumes only then).
inline void __syncwarp(u32 = FULL) { pass_on(); }
inline bool __all_sync(u32, bool p) { return __ballot_sync(FULL, p) == FULL; }
