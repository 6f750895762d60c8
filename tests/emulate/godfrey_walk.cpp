// Host emulation of kernels/godfrey.cu: godfrey_walk on every signature of the outer positions
// (two at each end), a block of one warp at a time, its lanes as fibers (warp_fibers.h), the
// zero-mask tables, the parked products and the block sums as on the GPU. Checked against the whole Godfrey sum,
// 2^(2n+1) L(2,n) modulo 2^(64 WORDS) for the known L(2,n), and each signature's sum against a direct evaluation of (Π x_k) Π S_i over its points. The
// configuration (N, WORDS, WALK, UNROLL, Q, LOW) comes from scripts/emulate-kernels,
// as godfrey_gpu.rs would set it. Prints "all equal" or the differences.
#include <cstdio>
#include <cstring>
#include "warp_fibers.h"
#define THREADS 32
struct D3 { u32 x; };
#define threadIdx (D3{(u32)(emu_thread % THREADS)})
#define blockIdx (D3{(u32)(emu_thread / THREADS)})
#define blockDim (D3{THREADS})
#define __shared__ static
#define __noinline__
#define __launch_bounds__(t)
inline void __syncthreads() { __syncwarp(); }
inline int __popcll(u64 x) { return __builtin_popcountll(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline u32 __brev(u32 x) {
    u32 r = 0;
    for (int b = 0; b < 32; b++) r |= ((x >> b) & 1u) << (31 - b);
    return r;
}
inline u64 __umul64hi(u64 a, u64 b) { return (u64)(((unsigned __int128)a * b) >> 64); }
typedef unsigned short u16;
struct uint2 { u32 x, y; };
inline uint2 make_uint2(u32 x, u32 y) { return uint2{x, y}; }
template <class T> inline T __ldg(const T *p) { return *p; }
#define FIRST 2
#include "godfrey_kernel.h"  // kernels/godfrey.cu, written by scripts/emulate-kernels

typedef __int128 i128;

// (Π x_k) Π S_i summed directly over the fibre of `outer` (positions FIRST..2N-FIRST-1 free).
static i128 direct(u64 outer) {
    const int free = 2 * N - 2 * FIRST;
    i128 sum = 0;
    for (u64 bits = 0; bits < (1ull << free); bits++) {
        const u64 x = outer | (bits << FIRST);  // bit p set: x_p = -1
        i128 term = (__builtin_popcountll(x) & 1) ? -1 : 1;
        for (int i = 1; i <= N; i++) {
            const int terms = 2 * N - i - 1;
            term *= terms - 2 * __builtin_popcountll((x ^ (x >> (i + 1))) & ((1ull << terms) - 1));
        }
        sum += term;
    }
    return sum;
}

// A signed value as the kernel's wrap-around words (sign-extended past the 128 bits).
static Wide to_wide(i128 v) {
    Wide r;
    for (int w = 0; w < WORDS; w++) r.w[w] = w < 2 ? (u64)(v >> (64 * w)) : (v < 0 ? ~0ull : 0);
    return r;
}

static bool equal(const Wide &a, const Wide &b) { return memcmp(a.w, b.w, sizeof(a.w)) == 0; }

// The kernel's sum over one fibre, modulo 2^(64 WORDS) (the blocks' partial sums added with
// the kernel's own add_to), and the points it skipped.
static Wide kernel_sum(u64 outer, u64 &skipped) {
    const u64 threads = 1ull << (2 * N - 2 * FIRST - WALK);
    const u64 blocks = (threads + THREADS - 1) / THREADS;
    std::vector<u64> partial(blocks * (WORDS + 1));
    launch_warps(blocks * THREADS, [&] { godfrey_walk(outer, threads, partial.data()); });
    Wide sum = to_wide(0);
    skipped = 0;
    for (u64 b = 0; b < blocks; b++) {
        Wide block;
        memcpy(block.w, &partial[b * (WORDS + 1)], sizeof(block.w));
        add_to(sum, block);
        skipped += partial[b * (WORDS + 1) + WORDS];
    }
    return sum;
}

int main() {
    const u64 known[] = {0, 0, 0, 1, 1, 0, 0, 26, 150, 0, 0, 17792, 108144};
    const int outer_positions[4] = {0, 1, 2 * N - 2, 2 * N - 1};
    Wide total = to_wide(0);
    int bad = 0;
    for (u64 sig = 0; sig < 16; sig++) {
        u64 outer = 0;
        for (int b = 0; b < 4; b++) outer |= ((sig >> b) & 1) << outer_positions[b];
        u64 skipped;
        const Wide sum = kernel_sum(outer, skipped);
        const i128 want = direct(outer);
        if (!equal(sum, to_wide(want))) {
            printf("  n %d q %d outer %llx: kernel %llx:%llx, direct %llx:%llx\n", N, Q, outer,
                   sum.w[WORDS > 1 ? 1 : 0], sum.w[0], (u64)(want >> 64), (u64)want);
            bad++;
        }
        if (skipped) bad++, printf("  skipped %llu points of a fibre\n", skipped);
        add_to(total, sum);
    }
    // 2^(2n+1) L(2,n), with 2n+1 <= 25 here: within the first two words.
    if (!equal(total, to_wide((i128)known[N] << (2 * N + 1))))
        printf("  n %d q %d: whole sum is not 2^%d L(2,%d) = 2^%d * %llu\n", N, Q, 2 * N + 1, N, 2 * N + 1, known[N]), bad++;
    printf("  n %d words %d q %d walk %d unroll %d: %s\n", N, WORDS, Q, WALK, UNROLL, bad ? "DIFFER" : "all equal");
    return bad ? 1 : 0;
}
