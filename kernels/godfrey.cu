// Godfrey's sum for Langford pairings, L(2,n): the GPU twin of src/workloads/langford/godfrey.rs (read
// its module comment first). One launch walks one task: the outer positions are fixed, thread
// t fixes the other free positions to the bits of t (the LOW lowest bits to FIRST..Q, the
// rest above Q+WALK) and covers the WALK positions from Q. The host compiles this file for each
// run with the defines below set (n, the task split, the words of the sum), so every shift and
// mask of a flip at a known position is a constant.
//
// Inner block. Positions Q..Q+3 (J, "inner") are not walked: each step of the Gray-code walk
// over the positions above them (G..) covers the 16 points of J at once. For odd i (distance
// d = i+1, lane l = (i-1)/2) split S_i at a step into its terms:
//
//   S_i = (2α - T) + Σ_{j ∈ J} x_j (2 c_j - m_j) + [i = 1] (x_Q x_{Q+2} + x_{Q+1} x_{Q+3}),
//
// T the terms whose two positions are both outside J, α those of them equal to +1, m_j the
// partners of j at distance d outside J (0, 1 or 2) and c_j those of them holding +1 (J's
// pairs lie 1, 2 or 3 apart, so only S_1 has terms inside J). Lanes with the same m (and S_1
// alone) form a category: which of the 16 points have S_i = 0 is a function of (α, c) per
// category, tabulated as a 16-bit mask (in global memory, read through the L1 cache; every
// block writes the tables before it reads them, the same values, so no block waits for another).
// A lane's state is the table index of its category, α and its c_j (in base 3), kept as a
// 16-bit field (a byte offset), two fields a word; a walked flip moves α of the lanes whose
// partners it has (by one per partner: the packed update below) and one c_j where it is
// J's partner. A step is then a table read per odd lane: the OR of the masks is the points
// with a zero odd factor, skipped; the others are parked for their product.
//
// Points whose product is due are parked per warp, each lane's in a row, and the warp forms
// 32 products at once, one per lane; a product recomputes every S_i from the point's two
// parity classes by popcounts.

#ifndef N
#define N 16          // n
#endif
#ifndef Q
#define Q 2           // first inner position
#endif
#ifndef WORDS
#define WORDS 2       // 64-bit words of the wrap-around sum
#endif
#ifndef WALK
#define WALK 12       // free positions per thread: the four of J and the Gray-walked ones above
#endif
#ifndef UNROLL
#define UNROLL 3      // low Gray-walked positions whose flips are unrolled (constant positions)
#endif
#ifndef FIRST
#define FIRST Q       // first free position of the task
#endif
#ifndef LOW
#define LOW 0         // thread bits below Q (on positions FIRST..Q-1)
#endif
#ifndef THREADS
#define THREADS 256   // threads per block (godfrey_gpu.rs; the host emulation uses one warp)
#endif
// Blocks per SM the registers must allow: 4 blocks of 256 threads = 64 registers a thread
// (more registers would leave 3 blocks, a quarter fewer warps to hide the latencies).
#define BLOCKS_PER_SM 4

#define INNER 4              // |J| (pow3 covers 3^0..3^3)
#define G (Q + INNER)        // first Gray-walked position
#define GRAY (WALK - INNER)  // Gray-walked positions
#define LANES ((N + 1) / 2)  // odd i = 2l+1
#define FIELD_WORDS ((LANES + 1) / 2)  // lane l: word l % FIELD_WORDS, half l / FIELD_WORDS
#define CODES 81             // 3^INNER values of (c_j)
#define WARPS (THREADS / WARP)
#define PARKED (32 + 16 * WARP)  // entries a warp's buffer holds: fewer than 32 left, 16 a lane

__device__ __forceinline__ constexpr int ctz_const(int r) { return (r & 1) ? 0 : 1 + ctz_const(r >> 1); }
__device__ __forceinline__ constexpr u32 shr32(u32 x, int s) { return s >= 32 ? 0u : x >> s; }
__device__ __forceinline__ constexpr u32 lanes_below(int k) {
    return k <= 0 ? 0u : (k >= 16 ? 0xffffu : (1u << k) - 1u);
}
__device__ __forceinline__ constexpr int min_int(int a, int b) { return a < b ? a : b; }
// 3^j for j < INNER (a closed form: the recursive one was left as a runtime loop in one flip).
__device__ __forceinline__ constexpr int pow3(int j) { return j <= 0 ? 1 : j == 1 ? 3 : j == 2 ? 9 : 27; }

// ---- Lanes and categories (compile-time) ------------------------------------------------

__device__ __forceinline__ constexpr bool is_inner(int p) { return p >= Q && p < Q + INNER; }
// A position that exists and is not in J.
__device__ __forceinline__ constexpr bool outside(int p) { return p >= 0 && p < 2 * N && !is_inner(p); }
__device__ __forceinline__ constexpr int distance(int l) { return 2 * l + 2; }
// m_j of lane l: partners of Q+j at the lane's distance outside J.
__device__ __forceinline__ constexpr int partners(int l, int j) {
    return (int)outside(Q + j - distance(l)) + (int)outside(Q + j + distance(l));
}
// T of lane l: its terms with both positions outside J.
__device__ __forceinline__ constexpr int outer_terms(int l) {
    int t = 0;
    for (int k = 0; k + distance(l) < 2 * N; ++k) t += outside(k) && outside(k + distance(l));
    return t;
}
// Bit k set where term (k, k+d) of lane l has both positions outside J.
__device__ __forceinline__ constexpr u64 outer_term_mask(int l) {
    u64 m = 0;
    for (int k = 0; k + distance(l) < 2 * N; ++k)
        if (outside(k) && outside(k + distance(l))) m |= 1ull << k;
    return m;
}
// A lane's category: S_1 alone (it has J's pairs), else its m_j in base 3.
__device__ __forceinline__ constexpr int category(int l) {
    return l == 0 ? -1 : partners(l, 0) + 3 * partners(l, 1) + 9 * partners(l, 2) + 27 * partners(l, 3);
}
// The first lane of l's category: it names the category's table.
__device__ __forceinline__ constexpr int leader(int l) {
    for (int k = 0; k < l; ++k)
        if (category(k) == category(l)) return k;
    return l;
}
// Largest T of the category led by c: its table has rows α' = 0..T_c.
__device__ __forceinline__ constexpr int category_terms(int c) {
    int t = 0;
    for (int k = 0; k < LANES; ++k)
        if (leader(k) == c && outer_terms(k) > t) t = outer_terms(k);
    return t;
}
// First table entry of the category led by c (the categories' tables one after another).
__device__ __forceinline__ constexpr int table_offset(int c) {
    int e = 0;
    for (int k = 0; k < c; ++k)
        if (leader(k) == k) e += (category_terms(k) + 1) * CODES;
    return e;
}
#define TABLE_ENTRIES table_offset(LANES)
static_assert(2 * TABLE_ENTRIES < 65536, "table offsets must fit 16-bit fields");

// The table entry of lane L's category for row b (α' = b / CODES, the c_j as digits of
// b % CODES): bit k set where point k of J (bit j of k set: x_{Q+j} = -1) has S_i = 0.
template <int L>
__device__ __forceinline__ u16 zero_mask(int e) {
    const int row = e / CODES, code = e % CODES;
    int v[INNER];
#pragma unroll
    for (int j = 0; j < INNER; ++j) {
        const int c = (code / pow3(j)) % 3, m = partners(L, j);
        if (c > m) return 0;  // no lane reaches this entry
        v[j] = 2 * c - m;
    }
    u32 mask = 0;
    for (int k = 0; k < (1 << INNER); ++k) {
        int s = 2 * row - category_terms(L);
#pragma unroll
        for (int j = 0; j < INNER; ++j) s += ((k >> j) & 1) ? -v[j] : v[j];
        if (L == 0) {
            const int x0 = 1 - 2 * (k & 1), x1 = 1 - 2 * ((k >> 1) & 1);
            const int x2 = 1 - 2 * ((k >> 2) & 1), x3 = 1 - 2 * ((k >> 3) & 1);
            s += x0 * x2 + x1 * x3;
        }
        if (s == 0) mask |= 1u << k;
    }
    return (u16)mask;
}

// Each block fills the tables of all categories (the leaders' lanes L, L+1, ...).
template <int L>
__device__ __forceinline__ void build_tables(u16 *table) {
    if constexpr (L < LANES) {
        if constexpr (leader(L) == L) {
            constexpr int base = table_offset(L), size = (category_terms(L) + 1) * CODES;
            for (int e = threadIdx.x; e < size; e += THREADS) table[base + e] = zero_mask<L>(e);
        }
        build_tables<L + 1>(table);
    }
}

struct State {
    u32 cls[2];   // bit h of cls[c]: position 2h+c holds -1 (positions of J: +1)
    u32 rev[2];   // cls[c] reversed within N bits
    u32 field[FIELD_WORDS];  // lane l's table byte offset, in half l / FIELD_WORDS of word l % FIELD_WORDS
    u32 first[FIELD_WORDS];  // the fields' change when G turns +1 (G flips every other step)
    u32 parity;   // Π x_k is -1 (an odd number of positions at -1): each flip toggles it
};

// Lane L's field for the point x (J at +1), shifted to its half of the word.
template <int L>
__device__ __forceinline__ u32 initial_field(u64 x) {
    constexpr int c = leader(L);
    static_assert((category_terms(c) - outer_terms(L)) % 2 == 0, "a category's T share a parity");
    const int alpha = __popcll(~(x ^ (x >> distance(L))) & outer_term_mask(L));
    int code = 0;
#pragma unroll
    for (int j = 0; j < INNER; ++j) {
        const int down = Q + j - distance(L), up = Q + j + distance(L);
        const int plus = (outside(down) && !((x >> down) & 1)) + (outside(up) && !((x >> up) & 1));
        code += pow3(j) * plus;
    }
    const int row = alpha + (category_terms(c) - outer_terms(L)) / 2;
    return (u32)(2 * (table_offset(c) + row * CODES + code)) << (16 * (L / FIELD_WORDS));
}

template <int L>
__device__ __forceinline__ void init_fields(State &s, u64 x) {
    if constexpr (L < LANES) {
        s.field[L % FIELD_WORDS] += initial_field<L>(x);
        init_fields<L + 1>(s, x);
    }
}

// Bits of lanes w and w + FIELD_WORDS (0 or 1 each) in the two 16-bit fields of word w, from
// `spread`, the lanes' bits with a copy FIELD_WORDS lanes up at bit 16: lane w + FIELD_WORDS
// lands on bit 16 + w, so both are one shift and mask away.
__device__ __forceinline__ constexpr u32 spread(u32 lanes) { return lanes | lanes << (16 - FIELD_WORDS); }
__device__ __forceinline__ constexpr u32 word_bits(u32 spread_lanes, int w) { return (spread_lanes >> w) & 0x00010001u; }

// Lanes where walked position p (above J) has its partner p - d in J.
__device__ __forceinline__ constexpr u32 inner_partners(int p) {
    u32 lanes = 0;
    for (int j = 0; j < INNER; ++j) {
        const int t = p - Q - j;
        if (t >= 2 && t % 2 == 0 && t / 2 - 1 < LANES) lanes |= 1u << (t / 2 - 1);
    }
    return lanes;
}

// Flip walked position p (above J) to `minus` (-1 if true). With constant arguments every shift
// and mask folds. Each lane's α moves by one for each partner outside J: up when the two
// agree after the flip; and where p is a partner of Q+j, that c_j moves by one.
// Per lane: partners of p outside J less twice those at -1 = the change of α when p turns +1
// (its negation when p turns -1), 81 entries (162 bytes) a unit; packed as the fields.
__device__ __forceinline__ u32 alpha_change(const State &s, int p, int w) {
    const int c = p & 1, h = p >> 1;
    // Odd i = 2l+1 (lane l): partners p ± (2l+2), same class, index h ± (l+1).
    const u32 up_valid = lanes_below(min_int(LANES, N - h - 1));
    const u32 down_valid = lanes_below(min_int(LANES, h)) & ~inner_partners(p);
    // Selects, not s.cls[c]: a runtime index would move the arrays to local memory.
    const u32 same = c ? s.cls[1] : s.cls[0], same_rev = c ? s.rev[1] : s.rev[0];
    const u32 up = shr32(same, h + 1) & up_valid, down = shr32(same_rev, N - h) & down_valid;
    const u32 valid = word_bits(spread(up_valid), w) + word_bits(spread(down_valid), w);
    const u32 minus_ones = word_bits(spread(up), w) + word_bits(spread(down), w);
    return (valid - 2 * minus_ones) * (2 * CODES);
}

// Add `step` to lane l's field in `words` (selects over the words: l may be a runtime value).
__device__ __forceinline__ void add_to_lane(u32 (&words)[FIELD_WORDS], int l, u32 step, bool minus) {
    const u32 shifted = step << (16 * (l / FIELD_WORDS));
#pragma unroll
    for (int w = 0; w < FIELD_WORDS; ++w) {
        if (w != l % FIELD_WORDS) continue;
        words[w] = minus ? words[w] - shifted : words[w] + shifted;
    }
}

// Flip walked position p (above J) to `minus` (-1 if true). With constant arguments every shift
// and mask folds. Each lane's α moves by one for each partner outside J: up when the two
// agree after the flip; and where p is a partner of Q+j, that c_j moves by one. G's own
// change is kept (`first`), moved by the flips of its partners.
__device__ __forceinline__ void flip(State &s, int p, bool minus) {
#pragma unroll
    for (int w = 0; w < FIELD_WORDS; ++w) {
        const u32 delta = p == G ? s.first[w] : alpha_change(s, p, w);
        s.field[w] = minus ? s.field[w] - delta : s.field[w] + delta;
    }
    const int c = p & 1, h = p >> 1;
    s.parity ^= 1u;
    if (c) {
        s.cls[1] ^= 1u << h;
        s.rev[1] ^= 1u << (N - 1 - h);
    } else {
        s.cls[0] ^= 1u << h;
        s.rev[0] ^= 1u << (N - 1 - h);
    }
    // p as the upward partner of Q+j at distance 2l+2: c_j counts it while it holds +1.
#pragma unroll
    for (int j = 0; j < INNER; ++j) {
        const int t = p - Q - j;
        if (t >= 2 && t % 2 == 0 && t / 2 - 1 < LANES) add_to_lane(s.field, t / 2 - 1, 2 * pow3(j), minus);
    }
    // p as G's partner at distance 2l+2: one more (or one fewer) partner at -1 there.
    const int t = p - G;
    if (t >= 2 && t % 2 == 0 && t / 2 - 1 < LANES) add_to_lane(s.first, t / 2 - 1, 4 * CODES, minus);
}

// The walk's state at point x (J and the walked positions at +1).
__device__ __forceinline__ void init_state(State &s, u64 x) {
    s.cls[0] = s.cls[1] = 0;
    for (int p = 0; p < 2 * N; ++p) s.cls[p & 1] |= (u32)((x >> p) & 1) << (p >> 1);
    s.rev[0] = __brev(s.cls[0]) >> (32 - N);
    s.rev[1] = __brev(s.cls[1]) >> (32 - N);
    s.parity = __popcll(x) & 1;
#pragma unroll
    for (int w = 0; w < FIELD_WORDS; ++w) s.field[w] = 0;
    init_fields<0>(s, x);
#pragma unroll
    for (int w = 0; w < FIELD_WORDS; ++w) s.first[w] = alpha_change(s, G, w);
}

// popc(a) + popc(b) for a below 2^bits_a, b below 2^bits_b (constants): one popcount where
// both fit a word (popcounts issue at a quarter of the rate of other integer instructions).
__device__ __forceinline__ int popc2(u32 a, u32 b, int bits_a, int bits_b) {
    return bits_a + bits_b <= 32 ? __popc(a | b << bits_a) : __popc(a) + __popc(b);
}

// S_2l from the classes: pairs (2a, 2a+2l+1) match class 0 bit a with class 1 bit a+l, and
// pairs (2a+1, 2a+2l+2) class 1 bit a with class 0 bit a+l+1; each differing pair counts -1.
__device__ __forceinline__ int even_correlation(u32 c0, u32 c1, int l) {
    const u32 first = (1u << (N - l)) - 1u;  // l >= 1
    const u32 second = (1u << (N - 1 - l)) - 1u;
    const int differ = popc2((c0 ^ (c1 >> l)) & first, (c1 ^ (c0 >> (l + 1))) & second, N - l, N - 1 - l);
    return 2 * N - 2 * l - 1 - 2 * differ;
}

// S_{2l+1} from the classes: pairs (k, k+2l+2) lie in one class, bits a and a+l+1.
__device__ __forceinline__ int odd_correlation(u32 c0, u32 c1, int l) {
    const u32 terms = (1u << (N - l - 1)) - 1u;
    const int differ = popc2((c0 ^ (c0 >> (l + 1))) & terms, (c1 ^ (c1 >> (l + 1))) & terms, N - l - 1, N - l - 1);
    return 2 * (N - l - 1) - 2 * differ;
}

// A wide value, returned by value so that no accumulator's address escapes into local memory.
struct Wide {
    u64 w[WORDS];
};

// p *= m modulo 2^(64 WORDS), m signed: p times m's low word unsigned, then, where m < 0 (its
// higher words all ones), minus p << 64.
__device__ __forceinline__ void multiply_wide(u64 (&p)[WORDS], i64 m) {
    u64 shifted[WORDS];
#pragma unroll
    for (int w = 0; w < WORDS; ++w) shifted[w] = w == 0 || m >= 0 ? 0 : p[w - 1];
    u64 carry = 0;
#pragma unroll
    for (int w = 0; w < WORDS; ++w) {
        u64 lo = p[w] * (u64)m;
        u64 hi = __umul64hi(p[w], (u64)m);
        lo += carry;
        hi += lo < carry;
        p[w] = lo;
        carry = hi;
    }
    u64 borrow = 0;
#pragma unroll
    for (int w = 1; w < WORDS; ++w) {
        const u64 d = p[w] - shifted[w];
        const u64 b = p[w] < shifted[w];
        p[w] = d - borrow;
        borrow = b | (d < borrow);
    }
}

// (Π x_k) Π S_i of a parked point (its classes; `negative`: Π x_k = -1), modulo
// 2^(64 WORDS). Signed throughout (two's complement is exact modulo 2^(64 WORDS)): the
// factors five at a time in 32 bits (|S_i| < 64, the first group starting from Π x_k), two
// such groups into 64 bits, and those into the wide product (the first simply stored,
// sign-extended).
__device__ __noinline__ Wide product(u32 c0, u32 c1, bool negative) {
    Wide r;
    int group = negative ? -1 : 1;
    int held = 1;  // a closed group waiting for the next to form a pair
#pragma unroll
    for (int i = 1; i <= N; ++i) {
        group *= (i & 1) ? odd_correlation(c0, c1, (i - 1) / 2) : even_correlation(c0, c1, i / 2);
        if (i % 5 == 0 || i == N) {
            // Group k = (i-1)/5 closes; odd k and the last close a pair (all constants).
            const int k = (i - 1) / 5;
            if (k % 2 == 1 || i == N) {
                const i64 pair = (i64)held * group;
                if (k < 2) {
#pragma unroll
                    for (int w = 0; w < WORDS; ++w) r.w[w] = w == 0 ? (u64)pair : (pair < 0 ? ~0ull : 0ull);
                } else {
                    multiply_wide(r.w, pair);
                }
                held = 1;
            } else {
                held = group;
            }
            group = 1;
        }
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
    uint2 *buffer;     // this warp's PARKED entries: a point's two classes
    const u16 *table;  // the zero masks (byte offsets: the fields)
    const uint2 *inner;  // J's points (inner_point) in point_index order
    int fill;          // the same in every lane
    u32 lane;
    bool active;  // false for threads past the task's end: they walk but never park
    Wide acc;     // this lane's share of the task's sum
};

// J's point k as bits of the two classes: Q+j is bit (Q+j)/2 of class (Q+j)&1, so j = 0, 2
// are consecutive bits of class Q&1 and j = 1, 3 of the other.
__device__ __forceinline__ u32 inner_bits(u32 k, int c) {
    return c == (Q & 1) ? ((k & 1u) | ((k >> 1) & 2u)) << (Q >> 1)
                        : (((k >> 1) & 1u) | ((k >> 2) & 2u)) << ((Q + 1) >> 1);
}

__device__ __forceinline__ u32 table_mask(const u16 *table, u32 offset) {
    return *(const u16 *)((const char *)table + offset);
}

// J's point k as a 4-bit index from `low` = 1 << k, by a de Bruijn multiply: bits 12..15 of
// 0x0F65 << k differ for k = 0..15. (No __ffs: its BREV and FLO issue on the XU pipe, the one
// the products' popcounts keep busy.) The table of J's points (`inner`) is kept in this order.
#define DE_BRUIJN16 0x0F65u
__device__ __forceinline__ u32 point_index(u32 low) { return (low * DE_BRUIJN16) >> 12 & 15u; }

// The point of J whose bit is `low` (a due mask's lowest bit) at the current walk position, as
// a parked entry (its two classes).
// (Up to n = 28 a class has 4 bits to spare: the entry is the step's classes and the point's
// index, with the step's parity in the top bit of class 1, and the product, formed once for
// 32 entries, applies the point.)
__device__ __forceinline__ uint2 entry(const State &s, u32 low, const uint2 *inner) {
#if N <= 28
    // point_index(low) << 28 in one multiply: the index bits land on bits 28..31.
    return make_uint2(s.cls[0] | (low * (DE_BRUIJN16 << 16) & 0xf0000000u), s.cls[1] | s.parity << 31);
#else
    const uint2 m = inner[point_index(low)];
    return make_uint2(s.cls[0] ^ m.x, s.cls[1] ^ (m.y & 0x7fffffffu));
#endif
}

// Point k of J: its bits in the two classes, and the sign of Π x_j over J (popc(k) positions
// at -1; 0x6996 holds the parities of 0..15) in bit 31 of the second word.
__device__ __forceinline__ uint2 inner_point(u32 k) {
    return make_uint2(inner_bits(k, 0), inner_bits(k, 1) | ((0x6996u >> k) & 1u) << 31);
}

// A parked entry's product (`inner`: inner_point(k) at point_index(1 << k), in shared memory).
__device__ __forceinline__ Wide entry_product(uint2 e, const uint2 *inner) {
#if N <= 28
    const uint2 m = inner[e.x >> 28];
    const u32 c1 = e.y ^ m.y;  // bit 31: the step's sign times J's
    return product((e.x & 0x0fffffffu) ^ m.x, c1 & 0x7fffffffu, c1 >> 31);
#else
    // Π x_k is -1 when an odd number of positions hold -1 (the parity of c0 ^ c1's bits).
    return product(e.x, e.y, __popc(e.x ^ e.y) & 1);
#endif
}

// The 16 points of the current walk position: those with no zero odd factor are parked, each
// lane's in a row (every lane's first slot from a scan of the lanes' counts by shuffles: no
// popcounts, which the products need), and while 32 or more are parked the warp forms 32
// products.
__device__ __forceinline__ void evaluate16(const State &s, Parked &q) {
    u32 zero = 0;
#pragma unroll
    for (int w = 0; w < FIELD_WORDS; ++w) {
        zero |= table_mask(q.table, s.field[w] & 0xffffu);
        if (w + FIELD_WORDS < LANES) zero |= table_mask(q.table, s.field[w] >> 16);
    }
    u32 due = q.active ? ~zero & 0xffffu : 0u;
    const u32 count = __popc(due);
    u32 upto = count;  // the counts of lanes 0..this one
#pragma unroll
    for (int d = 1; d < WARP; d *= 2) {
        const u32 below = __shfl_up_sync(FULL, upto, d);
        if (q.lane >= (u32)d) upto += below;
    }
    const int total = __shfl_sync(FULL, upto, WARP - 1);
    if (total == 0) return;
    int slot = q.fill + (int)(upto - count);
#pragma unroll 1
    for (; due; due &= due - 1) q.buffer[slot++] = entry(s, due & (0u - due), q.inner);
    q.fill += total;
#pragma unroll 1
    while (q.fill >= 32) {
        __syncwarp();
        q.fill -= 32;
        add_to(q.acc, entry_product(q.buffer[q.fill + q.lane], q.inner));
        __syncwarp();
    }
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
        evaluate16(s, q);
    }
};
template <>
struct Block<0> {
    static __device__ __forceinline__ void run(State &s, Parked &q, bool) { evaluate16(s, q); }
};

// Flip position G+UNROLL+k (k = K, K+1, ...: the positions above the unrolled ones, a constant
// position in each case, so that every lane and word index folds) to the other sign.
template <int K>
__device__ __forceinline__ void flip_above(State &s, int k) {
    if constexpr (K < GRAY - UNROLL) {
        constexpr int p = G + UNROLL + K;
        if (k == K) {
            const u32 cls = (p & 1) ? s.cls[1] : s.cls[0];
            flip(s, p, ((cls >> (p >> 1)) & 1) == 0);
        } else {
            flip_above<K + 1>(s, k);
        }
    }
}

// The zero masks, in global memory (read through the L1 cache): every block writes the same
// values before reading them, so a block never waits for another.
__device__ u16 zero_masks[TABLE_ENTRIES];

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
godfrey_walk(u64 outer, u64 threads, u64 *partial) {
    __shared__ uint2 parked[WARPS][PARKED];
    __shared__ uint2 inner[1 << INNER];
    build_tables<0>(zero_masks);
    if (threadIdx.x < (1 << INNER)) inner[point_index(1u << threadIdx.x)] = inner_point(threadIdx.x);
    __syncthreads();
    const u64 t = thread_index();
    Parked q;
    q.buffer = parked[threadIdx.x / WARP];
    q.table = zero_masks;
    q.inner = inner;
    q.fill = 0;
    q.lane = lane_id();
    q.active = t < threads;
#pragma unroll
    for (int w = 0; w < WORDS; ++w) q.acc.w[w] = 0;
    State s;
    // Threads past the end (a task smaller than a warp) walk thread 0's points unparked, so
    // that every lane of a warp takes part in its ballots.
    const u64 bits = q.active ? t : 0;
    init_state(s, outer | ((bits & ((1ull << LOW) - 1)) << FIRST) | ((bits >> LOW) << (Q + WALK)));
    for (u64 block = 0; block < (1ull << (GRAY - UNROLL)); ++block) {
        if (block) flip_above<0>(s, __ffsll((long long)block) - 1);
        Block<(1 << UNROLL) - 1>::run(s, q, UNROLL > 0 && (block & 1));
    }
    // Products still parked.
    __syncwarp();
    if ((int)q.lane < q.fill) {
        add_to(q.acc, entry_product(q.buffer[q.lane], q.inner));
    }

    // Block sum of the accumulators, by one thread, carries included; then the points skipped
    // (none: every point is tested).
    __shared__ u64 sums[THREADS][WORDS];
#pragma unroll
    for (int w = 0; w < WORDS; ++w) sums[threadIdx.x][w] = q.acc.w[w];
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
        for (int w = 0; w < WORDS; ++w) partial[(u64)blockIdx.x * (WORDS + 1) + w] = total[w];
        partial[(u64)blockIdx.x * (WORDS + 1) + WORDS] = 0;
    }
}
