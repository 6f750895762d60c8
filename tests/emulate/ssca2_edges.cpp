// Host emulation of kernels/generators.cu's SSCA#2 edge function (ssca2_edge), built and run
// by the unit test generators::ssca2::tests, which writes ssca2_kernel.h (the prelude's draw,
// the file's scramble and SSCA#2 sections) beside this file and compares the edges with the
// host's.
// stdin: the parameter count, the parameters (`device_edges`), then first edge and count;
// stdout: "u v" of each edge.
#include <cstdint>
#include <cstdio>
#include <vector>
typedef unsigned long long u64;
typedef unsigned int u32;
#define __device__
#define __forceinline__ inline
inline u32 __umulhi(u32 a, u32 b) { return (u32)(((u64)a * b) >> 32); }
// The low word of hi:lo shifted right by shift mod 32 (CUDA's wrap mode).
inline u32 __funnelshift_r(u32 lo, u32 hi, u32 shift) {
    return (u32)((((u64)hi << 32) | lo) >> (shift & 31));
}
// The high word of hi:lo shifted left by shift mod 32.
inline u32 __funnelshift_l(u32 lo, u32 hi, u32 shift) {
    return (u32)(((((u64)hi << 32) | lo) << (shift & 31)) >> 32);
}
#include "ssca2_kernel.h"

int main() {
    u64 count;
    if (scanf("%llu", &count) != 1) return 1;
    std::vector<u64> p(count);
    for (u64 &x : p)
        if (scanf("%llu", &x) != 1) return 1;
    u64 first, edges;
    if (scanf("%llu %llu", &first, &edges) != 2) return 1;
    for (u64 e = first; e < first + edges; e++) {
        u64 u, v;
        ssca2_edge(p.data(), e, u, v);
        printf("%llu %llu\n", u, v);
    }
    return 0;
}
