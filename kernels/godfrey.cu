// Godfrey's sum for Langford pairings, L(2,n): the GPU twin of src/workloads/langford/godfrey.rs (read
// its module comment first). One launch walks one task: the outer positions are fixed, thread
// t fixes the other free positions to the bits of t (the LOW lowest bits to FIRST..Q, the
// rest above Q+WALK) and walks the WALK positions from Q in Gray-code order. The host compiles this file for each run with the defines below
// set (n, the task split, the words of the sum), so every shift and mask of a flip at a known
// position is a constant.
//
// The odd-i S_i sit in byte lanes of 32-bit words, biased by 128, updated at every flip:
// they decide whether a point is skipped. Positions are split by parity into two 32-bit
// classes (and their bit reversals), so the neighbours that move the lanes of one flip are
// consecutive bits of one class. The even-i S_i are needed only for points whose product is
// formed (a minority at large n), so they are not walked: each is recomputed from the classes
// by two popcounts when the product is due.
//
// Positions Q and Q+1 are not walked. They belong to different classes, so neither moves the
// odd lanes' neighbours of the other: each step of the walk over Q+2.. gives four points,
// from the lanes kept with x_Q = x_{Q+1} = +1 (biased by 120) plus each position's flip
// delta (d0 for Q, d1 for Q+1, biased by 4 per lane), in six word additions. A walked flip
// changes one lane of one delta by 4 (it is a neighbour of Q or Q+1 at a known distance).
//
// Pruning (PRUNE 1; the host then puts Q at n-1, the middle). Before each block of 2^UNROLL
// steps (4·2^UNROLL points: positions Q..Q+UNROLL+1 free) a thread tests the rule of
// godfrey.rs: some odd S_i is 0 at the block's points, no two free positions lie i+1 apart,
// and every free position's partners at distance i+1 cancel (for Q and Q+1: their delta lane
// is 4; for the walked ones: from the classes). The block is skipped when every thread of the
// warp finds its block prunable (the warp runs in lock step: one thread skipping alone saves
// nothing); the skipped points are counted and returned with the block sums.

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
#define WALK 12       // free positions per thread: Q, Q+1 and the Gray-walked ones above
#endif
#ifndef UNROLL
#define UNROLL 5      // low Gray-walked positions whose flips are unrolled (constant positions)
#endif
#ifndef FIRST
#define FIRST Q       // first free position of the task
#endif
#ifndef LOW
#define LOW 0         // thread bits below Q (on positions FIRST..Q-1)
#endif
#ifndef PRUNE
#define PRUNE 0       // skip blocks whose points all have a zero odd factor (see above)
#endif

#define G (Q + 2)         // first Gray-walked position
#define GRAY (WALK - 2)   // Gray-walked positions

#define ODD_LANES ((N + 1) / 2)
#define ODD_WORDS ((ODD_LANES + 3) / 4)
#ifndef THREADS
#define THREADS 256   // threads per block (godfrey_gpu.rs; the host emulation uses one warp)
#endif

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

#define ONES 0x01010101u

struct State {
    u32 cls[2];   // bit h of cls[c]: position 2h+c holds -1 (positions Q, Q+1: +1)
    u32 rev[2];   // cls[c] reversed within N bits
    u32 odd[ODD_WORDS];  // odd-i S_i + 120 per lane, with x_Q = x_{Q+1} = +1
    u32 d0[ODD_WORDS];   // change of each odd S_i when x_Q flips to -1, + 4 per lane
    u32 d1[ODD_WORDS];   // the same for x_{Q+1}
};

// A wide value, returned by value so that no accumulator's address escapes into local memory.
struct Wide {
    u64 w[WORDS];
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
    // Selects, not s.cls[c]: a runtime index would move the arrays to local memory.
    const u32 same = c ? s.cls[1] : s.cls[0], same_rev = c ? s.rev[1] : s.rev[0];
    move_lanes(s.odd, shr32(same, h + 1) & odd_up_valid, shr32(same_rev, N - h) & odd_down_valid,
               odd_up_valid, odd_down_valid, plus);
    if (c) {
        s.cls[1] ^= 1u << h;
        s.rev[1] ^= 1u << (N - 1 - h);
    } else {
        s.cls[0] ^= 1u << h;
        s.rev[0] ^= 1u << (N - 1 - h);
    }
    // p is the upward neighbour, at distance 2(l+1), of Q or Q+1 (whichever shares its class):
    // the neighbour's sign in that delta's lane l turns over, which moves the lane by 4 y_p.
    // (Branches, not a pointer to s.d0 or s.d1, which would move them to local memory.)
    const int l = ((p - Q) >> 1) - 1;
    if (l < ODD_LANES) {
        const u32 step = 4u << (8 * (l & 3));
        const bool second = (p - Q) & 1;
#pragma unroll
        for (int w = 0; w < ODD_WORDS; ++w) {
            if (w != (l >> 2)) continue;
            if (second) s.d1[w] = plus ? s.d1[w] + step : s.d1[w] - step;
            else s.d0[w] = plus ? s.d0[w] + step : s.d0[w] - step;
        }
    }
}

// S_2l from the classes: pairs (2a, 2a+2l+1) match class 0 bit a with class 1 bit a+l, and
// pairs (2a+1, 2a+2l+2) class 1 bit a with class 0 bit a+l+1; each differing pair counts -1.
__device__ __forceinline__ int even_correlation(u32 c0, u32 c1, int l) {
    const u32 first = (1u << (N - l)) - 1u;  // l >= 1
    const u32 second = (1u << (N - 1 - l)) - 1u;
    const int differ = __popc((c0 ^ (c1 >> l)) & first) + __popc((c1 ^ (c0 >> (l + 1))) & second);
    return 2 * N - 2 * l - 1 - 2 * differ;
}

__device__ __forceinline__ int lane_value(const u32 *words, int l) {
    return (int)((words[l >> 2] >> (8 * (l & 3))) & 0xffu) - 128;
}

// A point whose product is due, parked in the warp's buffer: odd lanes, then both classes.
#define ENTRY (ODD_WORDS + 2)
#define WARPS (THREADS / WARP)

// p *= m modulo 2^(64 WORDS).
__device__ __forceinline__ void multiply_wide(u64 (&p)[WORDS], u64 m) {
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
}

// (Π x_k) Π S_i of a parked point, modulo 2^(64 WORDS). Factors are multiplied five at a time
// in 32 bits (|S_i| < 64), two such magnitudes into 64 bits, and those into the wide product
// (whose first 64-bit factor is simply stored).
__device__ __noinline__ Wide product(const u32 *entry) {
    const u32 *odd = entry, c0 = entry[ODD_WORDS], c1 = entry[ODD_WORDS + 1];
    u64 p[WORDS];
#pragma unroll
    for (int w = 0; w < WORDS; ++w) p[w] = 0;
    // Π x_k is -1 when an odd number of positions hold -1.
    bool negative = (__popc(c0) + __popc(c1)) & 1;
    int group = 1;
    u64 pair = 1;
#pragma unroll
    for (int i = 1; i <= N; ++i) {
        group *= (i & 1) ? lane_value(odd, (i - 1) / 2) : even_correlation(c0, c1, i / 2);
        if (i % 5 == 0 || i == N) {
            // Group k = (i-1)/5 closes; odd k and the last close a pair (all constants).
            const int k = (i - 1) / 5;
            negative ^= group < 0;
            pair *= (u32)(group < 0 ? -group : group);
            if (k % 2 == 1 || i == N) {
                if (k < 2) p[0] = pair; else multiply_wide(p, pair);
                pair = 1;
            }
            group = 1;
        }
    }
    // Two's complement negation, with carries across the words.
    Wide r;
    u64 carry = negative ? 1 : 0;
#pragma unroll
    for (int w = 0; w < WORDS; ++w) {
        u64 v = (negative ? ~p[w] : p[w]) + carry;
        carry = (negative && v < carry) ? 1 : 0;
        r.w[w] = v;
    }
    return r;
}

// acc += x modulo 2^(64 WORDS).
__device__ __forceinline__ void add_to(Wide &acc, const Wide &x) {
    u64 c = 0;
#pragma unroll
    for (int w = 0; w < WORDS; ++w) {
        u64 a = acc.w[w] + x.w[w];
        u64 c1 = a < x.w[w];
        a += c;
        c = c1 | (a < c);
        acc.w[w] = a;
    }
}

// Points whose product is due, per warp: lanes park them here and the warp multiplies 32 at
// a time, one per lane, so a few lanes needing a product do not hold up the other 31.
struct Parked {
    u32 *buffer;  // this warp's PARKED entries
    int fill;     // the same in every lane
    u32 lane;
    bool active;  // false for threads past the task's end: they walk but never park
    Wide acc;     // this lane's share of the task's sum
};

// Entries a warp's buffer holds: fewer than 32 left over, and up to four points from each lane.
#define PARKED (32 + 4 * WARP)

struct Odd {
    u32 w[ODD_WORDS];
};

// Whether no odd S_i is zero (no lane equals the bias 128): else the point is skipped.
__device__ __forceinline__ bool nonzero(const Odd &odd) {
    u32 zero = 0;
#pragma unroll
    for (int w = 0; w < ODD_WORDS; ++w) {
        const int lanes = min_int(4, ODD_LANES - 4 * w);
        const u32 high = (lanes >= 4 ? 0xffffffffu : (1u << (8 * lanes)) - 1u) & 0x80808080u;
        u32 v = odd.w[w] ^ 0x80808080u;
        zero |= (v - ONES) & ~v & high;
    }
    return zero == 0;
}

__device__ __forceinline__ void park_entry(u32 *e, const Odd &odd, u32 c0, u32 c1) {
#pragma unroll
    for (int w = 0; w < ODD_WORDS; ++w) e[w] = odd.w[w];
    e[ODD_WORDS] = c0;
    e[ODD_WORDS + 1] = c1;
}

// The warp's parking step for the due points of one walk position (out of line: the walk
// inlines `evaluate4` many times; inlined, this measured 2.6% faster at n = 20 but slower at
// n = 23, its copies stalling the instruction fetch, more so at larger n). `slot` is this
// lane's first entry, `total` the warp's due points.
__device__ __noinline__ void park4(Parked &q, Odd plain, Odd first, Odd second, Odd both, u32 c0,
                                   u32 c1, u32 due, int slot, int total) {
    // Bits of positions Q and Q+1 in their classes.
    const u32 bq = 1u << (Q >> 1), bq1 = 1u << ((Q + 1) >> 1);
    u32 *e = q.buffer + slot * ENTRY;
    if (due & 1) park_entry(e, plain, c0, c1), e += ENTRY;
    if (due & 2) park_entry(e, first, (Q & 1) ? c0 : c0 ^ bq, (Q & 1) ? c1 ^ bq : c1), e += ENTRY;
    if (due & 4)
        park_entry(e, second, ((Q + 1) & 1) ? c0 : c0 ^ bq1, ((Q + 1) & 1) ? c1 ^ bq1 : c1), e += ENTRY;
    if (due & 8) park_entry(e, both, c0 ^ ((Q & 1) ? bq1 : bq), c1 ^ ((Q & 1) ? bq : bq1));
    q.fill += total;
#pragma unroll 1
    while (q.fill >= 32) {
        __syncwarp();
        q.fill -= 32;
        add_to(q.acc, product(q.buffer + (q.fill + q.lane) * ENTRY));
        __syncwarp();
    }
}

// The four points x_Q, x_{Q+1} = ±1 of the current walk position (biases: 120 + 4 + 4): the
// due ones are parked, all four of a lane in one step. Each lane's count (0 to 4) goes to the
// warp as three ballots, its bits, which give every lane its first slot and the warp its total
// (one parking step for four points: nearly every point finds some lane of its warp due, and
// a ballot and a parking call per point had cost a tenth more instructions).
__device__ __forceinline__ void evaluate4(const State &s, Parked &q) {
    Odd plain, first, second, both;
#pragma unroll
    for (int w = 0; w < ODD_WORDS; ++w) {
        const u32 a = s.odd[w] + s.d0[w], b = s.odd[w] + 4 * ONES;
        plain.w[w] = b + 4 * ONES;
        first.w[w] = a + 4 * ONES;
        second.w[w] = b + s.d1[w];
        both.w[w] = a + s.d1[w];
    }
    const u32 due = q.active ? (u32)nonzero(plain) | (u32)nonzero(first) << 1 |
                                   (u32)nonzero(second) << 2 | (u32)nonzero(both) << 3
                             : 0u;
    const u32 count = __popc(due);
    const u32 ones = __ballot_sync(FULL, count & 1), twos = __ballot_sync(FULL, count & 2),
              fours = __ballot_sync(FULL, count & 4);
    if ((ones | twos | fours) == 0) return;
    const u32 before = (1u << q.lane) - 1u;
    const int slot = q.fill + __popc(ones & before) + 2 * __popc(twos & before) +
                     4 * __popc(fours & before);
    const int total = __popc(ones) + 2 * __popc(twos) + 4 * __popc(fours);
    park4(q, plain, first, second, both, s.cls[0], s.cls[1], due, slot, total);
}

// The 2^UNROLL walk positions of one block: flips of positions G..G+UNROLL-1 in ruler order.
// The k-th flip of position G+j (j < UNROLL-1) finds it at k mod 2; position G+UNROLL-1
// flips once per block, from the value `top` it has at the block's start.
template <int R>
struct Block {
    static __device__ __forceinline__ void run(State &s, Parked &q, bool top) {
        Block<R - 1>::run(s, q, top);
        constexpr int j = ctz_const(R);
        if (j == UNROLL - 1) {
            if (top) flip(s, G + j, false); else flip(s, G + j, true);
        } else {
            flip(s, G + j, ((R >> (j + 1)) & 1) == 0);
        }
        evaluate4(s, q);
    }
};
template <>
struct Block<0> {
    static __device__ __forceinline__ void run(State &s, Parked &q, bool) { evaluate4(s, q); }
};

#define ALL_LANES ((1u << ODD_LANES) - 1u)
// Lanes with no two of the block's free positions (UNROLL + 2 consecutive ones) i+1 apart.
#define NO_FREE_PAIRS (ALL_LANES & ~((1u << ((UNROLL + 1) / 2)) - 1u))

// Bit l set where byte lane l of words[] (plus `add` per word) equals `value`.
__device__ __forceinline__ u32 lanes_equal(const u32 *words, u32 add, u32 value) {
    u32 bits = 0;
#pragma unroll
    for (int w = 0; w < ODD_WORDS; ++w) {
        const u32 v = (words[w] + add) ^ (value * ONES);
        const u32 zero = ~(((v & 0x7f7f7f7fu) + 0x7f7f7f7fu) | v) & 0x80808080u;
        bits |= (((zero >> 7) * 0x10204080u) >> 28) << (4 * w);
    }
    return bits & ALL_LANES;
}

// Lanes l where walked position p's partners at distance 2l+2 cancel: both exist with opposite
// signs, or neither exists (p constant: the masks fold).
__device__ __forceinline__ u32 partners_cancel(const State &s, int p) {
    const int c = p & 1, h = p >> 1;
    const u32 up_valid = lanes_below(min_int(ODD_LANES, N - h - 1));
    const u32 down_valid = lanes_below(min_int(ODD_LANES, h));
    const u32 same = c ? s.cls[1] : s.cls[0], same_rev = c ? s.rev[1] : s.rev[0];
    const u32 up = shr32(same, h + 1) & up_valid, down = shr32(same_rev, N - h) & down_valid;
    return (up_valid & down_valid & (up ^ down)) | (ALL_LANES & ~up_valid & ~down_valid);
}

// Whether some odd S_i is 0 at every point of the block about to be walked.
__device__ __forceinline__ bool block_prunable(const State &s) {
    u32 lanes = lanes_equal(s.odd, 8 * ONES, 128) & NO_FREE_PAIRS;
    lanes &= lanes_equal(s.d0, 0, 4) & lanes_equal(s.d1, 0, 4);
#pragma unroll
    for (int j = 0; j < UNROLL; ++j) lanes &= partners_cancel(s, G + j);
    return lanes != 0;
}

extern "C" __global__ void __launch_bounds__(THREADS)
godfrey_walk(u64 outer, u64 threads, u64 *partial) {
    __shared__ u32 parked[WARPS][PARKED * ENTRY];
    const u64 t = thread_index();
    Parked q;
    q.buffer = parked[threadIdx.x / WARP];
    q.fill = 0;
    q.lane = lane_id();
    q.active = t < threads;
#pragma unroll
    for (int w = 0; w < WORDS; ++w) q.acc.w[w] = 0;
    State s;
    // Threads past the end (a task smaller than a warp) walk thread 0's points unparked, so
    // that every lane of a warp takes part in its ballots.
    const u64 bits = q.active ? t : 0;
    const u64 x = outer | ((bits & ((1ull << LOW) - 1)) << FIRST) | ((bits >> LOW) << (Q + WALK));
    u64 skipped = 0;
    s.cls[0] = s.cls[1] = 0;
    for (int p = 0; p < 2 * N; ++p) s.cls[p & 1] |= (u32)((x >> p) & 1) << (p >> 1);
    s.rev[0] = __brev(s.cls[0]) >> (32 - N);
    s.rev[1] = __brev(s.cls[1]) >> (32 - N);
#pragma unroll
    for (int w = 0; w < ODD_WORDS; ++w) s.odd[w] = s.d0[w] = s.d1[w] = 0;
#pragma unroll
    for (int i = 1; i <= N; i += 2) {
        const int terms = 2 * N - i - 1;
        const u64 differ = (x ^ (x >> (i + 1))) & ((1ull << terms) - 1);
        const u32 biased = (u32)(terms - 2 * __popcll(differ) + 120);
        const int l = (i - 1) / 2;
        s.odd[l >> 2] |= biased << (8 * (l & 3));
        // Flipping position p changes S_i by -2 (y_{p+i+1} + y_{p-i-1}) (from y_p = +1).
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const int p = Q + k;
            const int up = p + i + 1 < 2 * N ? 1 - 2 * (int)((x >> (p + i + 1)) & 1) : 0;
            const int down = p - i - 1 >= 0 ? 1 - 2 * (int)((x >> (p - i - 1)) & 1) : 0;
            const u32 delta = (u32)(-2 * (up + down) + 4) << (8 * (l & 3));
            if (k) s.d1[l >> 2] |= delta; else s.d0[l >> 2] |= delta;
        }
    }
    for (u64 block = 0; block < (1ull << (GRAY - UNROLL)); ++block) {
        if (block) {
            const int p = G + UNROLL + __ffsll((long long)block) - 1;
            const u32 cls = (p & 1) ? s.cls[1] : s.cls[0];
            flip(s, p, ((cls >> (p >> 1)) & 1) == 0);
        }
#if PRUNE
        if (__all_sync(FULL, !q.active || block_prunable(s))) {
            // The block's net effect: its top position flips once (see Block).
#if UNROLL > 0
            if (block & 1) flip(s, G + UNROLL - 1, false); else flip(s, G + UNROLL - 1, true);
#endif
            if (q.active) skipped += 4ull << UNROLL;
            continue;
        }
#endif
        Block<(1 << UNROLL) - 1>::run(s, q, UNROLL > 0 && (block & 1));
    }
    // Products still parked.
    __syncwarp();
    if ((int)q.lane < q.fill) add_to(q.acc, product(q.buffer + q.lane * ENTRY));
    // Block sum of the accumulators, by one thread, carries included; then the points skipped.
    __shared__ u64 sums[THREADS][WORDS + 1];
#pragma unroll
    for (int w = 0; w < WORDS; ++w) sums[threadIdx.x][w] = q.acc.w[w];
    sums[threadIdx.x][WORDS] = skipped;
    __syncthreads();
    if (threadIdx.x == 0) {
        u64 total[WORDS];
        u64 skipped_total = 0;
#pragma unroll
        for (int w = 0; w < WORDS; ++w) total[w] = 0;
        for (int k = 0; k < blockDim.x; ++k) {
            skipped_total += sums[k][WORDS];
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
        for (int w = 0; w < WORDS; ++w) partial[(u64)blockIdx.x * (WORDS + 1) + w] = total[w];
        partial[(u64)blockIdx.x * (WORDS + 1) + WORDS] = skipped_total;
    }
}
