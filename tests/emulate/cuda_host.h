// CUDA's qualifiers and thread index on the host, for the emulations whose lanes run as
// fibers (warp_fibers.h in lock step, group_fibers.h in groups): `emu_thread` is the thread
// the running fiber stands for.
#pragma once
#include <cstdint>
typedef unsigned long long u64; typedef unsigned int u32; typedef long long i64;
#define __device__
#define __forceinline__ inline
#define __global__
#define WARP 32
#define FULL 0xffffffffu
static u64 emu_thread;
inline u64 thread_index() { return emu_thread; }
inline u32 lane_id() { return emu_thread % WARP; }
