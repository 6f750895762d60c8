// Host emulation of kernels/generators.cu's SSCA#2 edges (ssca2_edge) and of its checksum
// kernel (redrawn_checksum, whose warps queue the redraws; lanes as fibers, warp_fibers.h),
// built and run by the unit test generators::ssca2::tests, which writes ssca2_kernel.h (the
// prelude's draw, the file's scramble, SSCA#2 and redrawn-checksum sections) beside this file
// and compares the edges and the checksums with the host's.
// stdin: the parameter count, the parameters (`device_edges`), then first edge and count;
// stdout: "u v" of each edge, then the checksum as grids of 1, 3 and 9 warps make it.
#include <cstdio>
#include <vector>
#include "warp_fibers.h"
inline u32 __umulhi(u32 a, u32 b) { return (u32)(((u64)a * b) >> 32); }
// The low word of hi:lo shifted right by shift mod 32 (CUDA's wrap mode).
inline u32 __funnelshift_r(u32 lo, u32 hi, u32 shift) {
    return (u32)((((u64)hi << 32) | lo) >> (shift & 31));
}
// The high word of hi:lo shifted left by shift mod 32.
inline u32 __funnelshift_l(u32 lo, u32 hi, u32 shift) {
    return (u32)(((((u64)hi << 32) | lo) << (shift & 31)) >> 32);
}
// One block's warps share the kernel's queues; the warps run one at a time, each to its end.
#define __shared__ static
struct Index { u32 x; };
#define threadIdx (Index{(u32)(emu_thread % 256)})
static u64 emu_grid_threads;
inline u64 grid_threads() { return emu_grid_threads; }
template <int K> void block_add(u64 *sums, const int (&index)[K], const u64 (&value)[K]) {
    for (int k = 0; k < K; k++) sums[index[k]] += value[k];
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
    for (u64 warps : {1, 3, 9}) {
        u64 sum = 0;
        emu_grid_threads = warps * WARP;
        launch_warps(emu_grid_threads, [&] { redrawn_checksum<ssca2_attempt>(p.data(), first, edges, &sum); });
        printf("checksum %llu\n", sum);
    }
    return 0;
}
