// Godfrey's sum for Langford pairings, L(2,n): the GPU twin of src/langford/godfrey.rs (read
// its module comment first). One launch walks one task: the outer positions are fixed, thread
// t fixes the top THREAD_BITS free positions to the bits of t and walks the WALK positions
// above Q in Gray-code order. The host compiles this file for each run with the defines below
// set (n, the task split, the words of the sum), so every shift and mask of a flip at a known
// position is a constant.
//
// S_i values sit in byte lanes of 32-bit words, biased by 128: odd i in `odd`, even i in
// `even`. Positions are split by parity into two 32-bit classes (and their bit reversals), so
// the neighbours that move the lanes of one flip are consecutive bits of one class.

#ifndef N
#define N 16          // n
#endif
#ifndef Q
#define Q 2           // first free position (outer positions fixed per task on each end)
#endif
#ifndef WORDS
#define WORDS 2       // 64-bit words of the wrap-around sum
#endif
#ifndef WALK
#define WALK 12       // positions walked by each thread
#endif
#ifndef UNROLL
#define UNROLL 5      // low walked positions whose flips are unrolled (constant positions)
#endif

typedef unsigned int u32;
typedef unsigned long long u64;

#define ODD_LANES ((N + 1) / 2)
#define EVEN_LANES (N / 2)
#define ODD_WORDS ((ODD_LANES + 3) / 4)
#define EVEN_WORDS ((EVEN_LANES + 3) / 4)
#define THREADS 256

__device__ __forceinline__ constexpr int ctz_const(int r) { return (r & 1) ? 0 : 1 + ctz_const(r >> 1); }
__device__ __forceinline__ constexpr u32 shr32(u32 x, int s) { return s >= 32 ? 0u : x >> s; }
__device__ __forceinline__ constexpr u32 lanes_below(int k) {
    return k <= 0 ? 0u : (k >= 16 ? 0xffffu : (1u << k) - 1u);
}
__device__ __forceinline__ constexpr int min_int(int a, int b) { return a < b ? a : b; }
// Four bits to four byte lanes (0 or 1): the shifted copies never overlap, so no carries.
__device__ __forceinline__ constexpr u32 expand4(u32 nibble) {
    return (nibble * 0x00204081u) & 0x01010101u;
}

struct State {
    u32 cls[2];   // bit h of cls[c]: position 2h+c holds -1
    u32 rev[2];   // cls[c] reversed within N bits
    u32 odd[ODD_WORDS > 0 ? ODD_WORDS : 1];
    u32 even[EVEN_WORDS > 0 ? EVEN_WORDS : 1];
    bool negative;  // product of all x_k is -1
    u64 acc[WORDS];
};

// Update `lanes` for one parity of i: S_i += -2 y_old (c_up + c_down), c = ±1 for neighbours
// that exist and 0 past the ends; in lanes T += ±(4 E(up) + 4 E(down) - 2 E(present)).
template <int WORDS_N>
__device__ __forceinline__ void move_lanes(u32 (&lanes)[WORDS_N], u32 up, u32 down,
                                           u32 up_valid, u32 down_valid, bool plus) {
#pragma unroll
    for (int w = 0; w < WORDS_N; ++w) {
        u32 moved = (expand4((up >> (4 * w)) & 15u) + expand4((down >> (4 * w)) & 15u)) << 2;
        u32 present = (expand4((up_valid >> (4 * w)) & 15u) +
                       expand4((down_valid >> (4 * w)) & 15u)) << 1;
        lanes[w] = plus ? lanes[w] + moved - present : lanes[w] + present - moved;
    }
}

// Flip position p; `plus` says it held +1. With constant arguments every shift and mask folds.
__device__ __forceinline__ void flip(State &s, int p, bool plus) {
    const int c = p & 1, h = p >> 1;
    // Odd i = 2l+1 (lane l): neighbours p ± (2l+2), same class, index h ± (l+1).
    const u32 odd_up_valid = lanes_below(min_int(ODD_LANES, N - h - 1));
    const u32 odd_down_valid = lanes_below(min_int(ODD_LANES, h));
    const u32 same = s.cls[c], same_rev = s.rev[c];
    move_lanes(s.odd, shr32(same, h + 1) & odd_up_valid, shr32(same_rev, N - h) & odd_down_valid,
               odd_up_valid, odd_down_valid, plus);
    // Even i = 2l (lane l-1): neighbours p ± (2l+1), other class, index h+l+c and h-l-1+c.
    const u32 even_up_valid = lanes_below(min_int(EVEN_LANES, N - h - 1 - c));
    const u32 even_down_valid = lanes_below(min_int(EVEN_LANES, h + c - 1));
    const u32 other = s.cls[1 - c], other_rev = s.rev[1 - c];
    move_lanes(s.even, shr32(other, h + 1 + c) & even_up_valid,
               shr32(other_rev, N + 1 - h - c) & even_down_valid, even_up_valid,
               even_down_valid, plus);
    s.cls[c] ^= 1u << h;
    s.rev[c] ^= 1u << (N - 1 - h);
    s.negative = !s.negative;
}

__device__ __forceinline__ int lane_value(const u32 *words, int l) {
    return (int)((words[l >> 2] >> (8 * (l & 3))) & 0xffu) - 128;
}

// acc += (-1)^negative * Π S_i, modulo 2^(64 WORDS). Factors are multiplied five at a time
// in 32 bits (|S_i| < 64), then into the wide product by magnitude.
__device__ __forceinline__ void add_product(State &s) {
    u64 p[WORDS];
    p[0] = 1;
#pragma unroll
    for (int w = 1; w < WORDS; ++w) p[w] = 0;
    bool negative = s.negative;
    int group = 1;
#pragma unroll
    for (int i = 1; i <= N; ++i) {
        group *= (i & 1) ? lane_value(s.odd, (i - 1) / 2) : lane_value(s.even, i / 2 - 1);
        if (i % 5 == 0 || i == N) {
            negative ^= group < 0;
            u64 m = (u64)(group < 0 ? -group : group);
            u64 carry = 0;
#pragma unroll
            for (int w = 0; w < WORDS; ++w) {
                u64 lo = p[w] * m;
                u64 hi = __umul64hi(p[w], m);
                lo += carry;
                hi += lo < carry;
                p[w] = lo;
                carry = hi;
            }
            group = 1;
        }
    }
    // Two's complement negation, then add, both with carries across the words.
    u64 carry = negative ? 1 : 0;
#pragma unroll
    for (int w = 0; w < WORDS; ++w) {
        u64 v = (negative ? ~p[w] : p[w]) + carry;
        carry = (negative && v < carry) ? 1 : 0;
        p[w] = v;
    }
    u64 c = 0;
#pragma unroll
    for (int w = 0; w < WORDS; ++w) {
        u64 a = s.acc[w] + p[w];
        u64 c1 = a < p[w];
        a += c;
        c = c1 | (a < c);
        s.acc[w] = a;
    }
}

// Skip the point when an odd S_i is zero (lane equal to the bias); else add its product.
__device__ __forceinline__ void evaluate(State &s) {
    u32 zero = 0;
#pragma unroll
    for (int w = 0; w < ODD_WORDS; ++w) {
        const int lanes = min_int(4, ODD_LANES - 4 * w);
        const u32 high = (lanes >= 4 ? 0xffffffffu : (1u << (8 * lanes)) - 1u) & 0x80808080u;
        u32 v = s.odd[w] ^ 0x80808080u;
        zero |= (v - 0x01010101u) & ~v & high;
    }
    if (zero == 0) add_product(s);
}

// The 2^UNROLL points of one block: flips of positions Q..Q+UNROLL-1 in ruler order. The
// k-th flip of position Q+j (j < UNROLL-1) finds it at k mod 2; position Q+UNROLL-1 flips
// once per block, from the value `top` it has at the block's start.
template <int R>
struct Block {
    static __device__ __forceinline__ void run(State &s, bool top) {
        Block<R - 1>::run(s, top);
        constexpr int j = ctz_const(R);
        if (j == UNROLL - 1) {
            if (top) flip(s, Q + j, false); else flip(s, Q + j, true);
        } else {
            flip(s, Q + j, ((R >> (j + 1)) & 1) == 0);
        }
        evaluate(s);
    }
};
template <>
struct Block<0> {
    static __device__ __forceinline__ void run(State &s, bool) { evaluate(s); }
};

extern "C" __global__ void __launch_bounds__(THREADS)
godfrey_walk(u64 outer, u64 threads, u64 *partial) {
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    State s;
#pragma unroll
    for (int w = 0; w < WORDS; ++w) s.acc[w] = 0;
    if (t < threads) {
        const u64 x = outer | (t << (Q + WALK));
        s.cls[0] = s.cls[1] = 0;
        for (int p = 0; p < 2 * N; ++p) s.cls[p & 1] |= (u32)((x >> p) & 1) << (p >> 1);
        s.rev[0] = __brev(s.cls[0]) >> (32 - N);
        s.rev[1] = __brev(s.cls[1]) >> (32 - N);
        s.negative = __popcll(x) & 1;
#pragma unroll
        for (int w = 0; w < ODD_WORDS; ++w) s.odd[w] = 0;
#pragma unroll
        for (int w = 0; w < EVEN_WORDS; ++w) s.even[w] = 0;
        for (int i = 1; i <= N; ++i) {
            const int terms = 2 * N - i - 1;
            const u64 differ = (x ^ (x >> (i + 1))) & ((1ull << terms) - 1);
            const u32 biased = (u32)(terms - 2 * __popcll(differ) + 128);
            const int l = (i - 1) / 2;
            if (i & 1) s.odd[l >> 2] |= biased << (8 * (l & 3));
            else s.even[l >> 2] |= biased << (8 * (l & 3));
        }
        for (u64 block = 0; block < (1ull << (WALK - UNROLL)); ++block) {
            if (block) {
                const int p = Q + UNROLL + __ffsll((long long)block) - 1;
                const int c = p & 1, h = p >> 1;
                flip(s, p, ((s.cls[c] >> h) & 1) == 0);
            }
            Block<(1 << UNROLL) - 1>::run(s, UNROLL > 0 && (block & 1));
        }
    }
    // Block sum of the accumulators, by one thread, carries included.
    __shared__ u64 sums[THREADS][WORDS];
#pragma unroll
    for (int w = 0; w < WORDS; ++w) sums[threadIdx.x][w] = s.acc[w];
    __syncthreads();
    if (threadIdx.x == 0) {
        u64 total[WORDS];
#pragma unroll
        for (int w = 0; w < WORDS; ++w) total[w] = 0;
        for (int k = 0; k < blockDim.x; ++k) {
            u64 c = 0;
#pragma unroll
            for (int w = 0; w < WORDS; ++w) {
                u64 a = total[w] + sums[k][w];
                u64 c1 = a < sums[k][w];
                a += c;
                c = c1 | (a < c);
                total[w] = a;
            }
        }
#pragma unroll
        for (int w = 0; w < WORDS; ++w) partial[(u64)blockIdx.x * WORDS + w] = total[w];
    }
}
