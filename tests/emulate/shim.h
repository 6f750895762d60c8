// Host emulation of the CUDA constructs the spin.cu sections use: one "thread" at a time.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cstring>
typedef unsigned long long u64; typedef long long i64; typedef unsigned int u32; typedef int i32;
typedef unsigned short u16; typedef unsigned char u8;
#define __device__
#define __forceinline__ inline
#define __global__
static u64 emu_thread;
inline u64 thread_index() { return emu_thread; }
inline int __ffs(u32 x) { return __builtin_ffs(x); }
inline int __popc(u32 x) { return __builtin_popcount(x); }
template <int K> void block_add(u64 *c, const int (&index)[K], const u64 (&value)[K]) {
    for (int k = 0; k < K; k++) c[index[k]] += value[k];
}
inline u32 atomicCAS(u32 *a, u32 cmp, u32 v) { u32 old = *a; if (old == cmp) *a = v; return old; }
inline u64 atomicAdd(u64 *a, u64 v) { u64 old = *a; *a += v; return old; }
