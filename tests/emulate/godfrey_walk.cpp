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
#define __launch_bounds__(...)
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
#ifndef FIRST
#define FIRST 2
#endif
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

#ifdef FIELD_CHECK
// For n too large to sum directly: the walk's state against a direct evaluation. From random
// points (J and the walked positions at +1), init_state and the kernel's flips of the walked
// positions in Gray-code order, and after each flip, for J's 16 points: the OR of the odd lanes'
// zero masks (as evaluate16 forms it) against the odd S_i computed directly, the classes and
// the sign against the point, and (every 7th step) each due point's product as parked and
// formed against (Π x_k) Π S_i computed directly. Prints "all equal" or the differences.
// (Π x_k) Π S_i of the point y, directly, as three 64-bit words modulo 2^192.
static void direct_product(u64 y, u64 (&w)[3]) {
    w[0] = 1, w[1] = w[2] = 0;
    bool negative = __builtin_popcountll(y) & 1;
    for (int i = 1; i <= N; i++) {
        const int terms = 2 * N - i - 1;
        const int s = terms - 2 * __builtin_popcountll((y ^ (y >> (i + 1))) & ((1ull << terms) - 1));
        negative ^= s < 0;
        unsigned __int128 carry = 0;
        for (int j = 0; j < 3; j++) {
            carry += (unsigned __int128)w[j] * (u64)(s < 0 ? -s : s);
            w[j] = (u64)carry;
            carry >>= 64;
        }
    }
    if (negative) {
        u64 c = 1;
        for (int j = 0; j < 3; j++) w[j] = ~w[j] + c, c = c && w[j] == 0;
    }
}

int main() {
    for (emu_thread = 0; emu_thread < THREADS; emu_thread++) build_tables<0>(zero_masks);
    uint2 inner[16];
    for (u32 k = 0; k < 16; k++) inner[point_index(1u << k)] = inner_point(k);
    int products = 0;
    u64 r = 0x9e3779b97f4a7c15ull;
    int bad = 0, steps = 0;
    const int walked = GRAY < 12 ? GRAY : 12;
    for (int trial = 0; trial < 24; trial++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        u64 x = r & ((2 * N == 64 ? 0ull : 1ull << 2 * N) - 1);
        x &= ~(((1ull << (INNER + walked)) - 1) << Q);
        State s;
        init_state(s, x);
        for (u64 step = 0; step < (1ull << walked); step++, steps++) {
            if (step) {
                const int p = G + __builtin_ctzll(step);
                flip(s, p, !((x >> p) & 1));
                x ^= 1ull << p;
            }
            u32 zero = 0;
            for (int w = 0; w < FIELD_WORDS; ++w) {
                zero |= table_mask(zero_masks, s.field[w] & 0xffffu);
                if (w + FIELD_WORDS < LANES) zero |= table_mask(zero_masks, s.field[w] >> 16);
            }
            u32 want = 0;
            for (u32 k = 0; k < 16; k++) {
                const u64 y = x | (u64)k << Q;
                for (int i = 1; i <= N; i += 2) {
                    const int terms = 2 * N - i - 1;
                    if (terms == 2 * __builtin_popcountll((y ^ (y >> (i + 1))) & ((1ull << terms) - 1))) want |= 1u << k;
                }
            }
            u32 cls[2] = {0, 0};
            for (int p = 0; p < 2 * N; ++p) cls[p & 1] |= (u32)((x >> p) & 1) << (p >> 1);
            const bool state_ok = cls[0] == s.cls[0] && cls[1] == s.cls[1] && s.parity == (u32)(__builtin_popcountll(x) & 1);
            if ((zero & 0xffffu) != want || !state_ok) {
                if (bad++ < 5) printf("  n %d x %llx: zero points %04x, direct %04x%s\n", N, x, zero & 0xffffu, want, state_ok ? "" : ", state differs");
            }
            // The products of the due points (every 7th step), as parked and formed.
            for (u32 k = 0; k < 16 && step % 7 == 0; k++) {
                if ((want >> k) & 1) continue;
                u64 direct[3];
                direct_product(x | (u64)k << Q, direct);
                const Wide got = entry_product(entry(s, 1u << k, inner), inner);
                products++;
                if (memcmp(got.w, direct, sizeof(got.w)) != 0 && bad++ < 5)
                    printf("  n %d x %llx k %u: product %llx:%llx, direct %llx:%llx\n", N, x, k, got.w[1], got.w[0], direct[1], direct[0]);
            }
        }
    }
    printf("  n %d q %d walk %d: fields of %d steps, %d products %s\n", N, Q, WALK, steps, products, bad ? "DIFFER" : "all equal");
    return bad ? 1 : 0;
}
#else
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
#endif
