// The cortex (src/workloads/cortex): phase 1 updates each neuron of a slab, phase 2 counts
// each neuron's firing sources and deposits them into its synapses; the same arithmetic as
// the CPU's (src/workloads/cortex/model.rs, slab.rs) operation by operation: every f64 and
// f32 operation is spelt with its round-to-nearest intrinsic, so that NVRTC contracts none
// into a fused multiply-add, and the normal deviates come from the same software logarithm.
//
// Layout of a slab of n = rows * L neurons: per-neuron arrays indexed by the local id; the
// state bytes (bit 0 fired, bit 1 inhibitory) as `[r ghost rows | rows | r ghost rows]`; the
// sources interleaved, j * n + i, one (dx, dy) pair of signed bytes each; the `exp` ring of
// 16 packed counts (e | i << 16) per neuron and its two traces; the `table` ring of 75 f32.

#define EXP_SLOTS 16
#define TABLE_SLOTS 75
#define V_SCALE 16777216.0
#define PEAK 30.0
#define LN2 0.6931471805599453
#define SQRT2 1.4142135623730951
#define POLAR_TRIES 64
#define INHIBITORY 2
#define BOOST_CURRENT 10.0

__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }

// model.rs soft_ln.
__device__ double soft_ln(double x) {
    u64 bits = (u64)__double_as_longlong(x);
    i64 e = (i64)((bits >> 52) & 0x7ff) - 1023;
    double m = __longlong_as_double((i64)((bits & ((1ULL << 52) - 1)) | (1023ULL << 52)));
    if (m > SQRT2) {
        m = mul(m, 0.5);
        e += 1;
    }
    double t = __ddiv_rn(sub(m, 1.0), add(m, 1.0));
    double t2 = mul(t, t);
    double p = __ddiv_rn(1.0, 23.0);
    for (int k = 10; k >= 0; k--) p = add(mul(p, t2), __ddiv_rn(1.0, (double)(2 * k + 1)));
    return add(mul(mul(2.0, t), p), mul((double)e, LN2));
}

__device__ __forceinline__ double signed_unit(u32 bits) {
    return sub(mul(add((double)bits, 0.5), 1.0 / 2147483648.0), 1.0);
}

// model.rs normal_pair, first deviate.
__device__ double normal_first(u64 key, u64 counter) {
    for (u64 t = 0; t < POLAR_TRIES; t++) {
        u64 bits = draw(key, counter * POLAR_TRIES + t);
        double x = signed_unit((u32)(bits >> 32));
        double y = signed_unit((u32)bits);
        double s = add(mul(x, x), mul(y, y));
        if (s < 1.0) return mul(x, __dsqrt_rn(__ddiv_rn(mul(-2.0, soft_ln(s)), s)));
    }
    return 0.0;
}

__device__ __forceinline__ double unit(u64 bits) { return (double)(bits >> 11) * (1.0 / 9007199254740992.0); }

__device__ __forceinline__ double dv(double v, double u, double i) {
    return add(sub(add(add(mul(mul(0.04, v), v), mul(5.0, v)), 140.0), u), i);
}

// model.rs step: scheme 0 seed, 1 half-step, n >= 2 substeps.
__device__ bool izhikevich(u32 scheme, double a, double b, double c, double d, double &v, double &u, bool fired,
                           double i, double syn) {
    if (scheme == 0) {
        if (fired) { v = c; u = add(u, d); }
        double dvv = dv(v, u, i);
        double du = mul(a, sub(mul(b, v), u));
        double nv = add(add(v, dvv), syn);
        v = nv > PEAK ? PEAK : nv;
        u = add(u, du);
        return v >= PEAK;
    }
    if (scheme == 1) {
        if (fired) { v = c; u = add(u, d); }
        double it = add(i, syn);
        v = add(v, mul(0.5, dv(v, u, it)));
        v = add(v, mul(0.5, dv(v, u, it)));
        u = add(u, mul(a, sub(mul(b, v), u)));
        bool spike = v >= PEAK;
        if (spike) v = PEAK;
        return spike;
    }
    double h = __ddiv_rn(1.0, (double)scheme);
    double it = add(i, syn);
    bool spike = false;
    for (u32 s = 0; s < scheme; s++) {
        double dvv = dv(v, u, it);
        double du = mul(a, sub(mul(b, v), u));
        v = add(v, mul(h, dvv));
        u = add(u, mul(h, du));
        if (v >= PEAK) { v = c; u = add(u, d); spike = true; }
    }
    return spike;
}

struct Step {
    u64 step, noise_key, boost_key;
    double base_i[2], noise[2], boost_fraction, amplitude[2], decay[2];
    u32 scheme, clamp, table, w;
};

// Phase 1: neuron i's delayed input, external current and step; its state byte; the block's
// sums of the step added to sums[3 * (step % 512) ..]: excitatory potentials (fixed point,
// two's complement), excitatory and inhibitory spikes.
extern "C" __global__ void phase1(Step s, u64 n, u64 gid0, const double *c_or_a, const double *d_or_b,
                                  const u8 *delay, double *v, double *u, u8 *state, u32 *ring, double *trace,
                                  float *table, u64 *sums) {
    u64 acc[3] = {0, 0, 0};
    for (u64 i = thread_index(); i < n; i += grid_threads()) {
        u8 st = state[i];
        bool inh = (st & INHIBITORY) != 0;
        int t = inh ? 1 : 0;
        double syn;
        if (s.table) {
            u64 at = ((s.step % TABLE_SLOTS + TABLE_SLOTS - delay[i]) % TABLE_SLOTS) * n + i;
            syn = (double)table[at];
            table[at] = 0.0f;
        } else {
            u32 cnt = ring[(s.step % EXP_SLOTS) * n + i];
            double t0 = add(mul(trace[2 * i], s.decay[0]), mul((double)(cnt & 0xffff), s.amplitude[0]));
            double t1 = add(mul(trace[2 * i + 1], s.decay[1]), mul((double)(cnt >> 16), s.amplitude[1]));
            trace[2 * i] = t0;
            trace[2 * i + 1] = t1;
            syn = add(t0, t1);
        }
        u64 gid = gid0 + i;
        double cur = add(s.base_i[t], mul(s.noise[t], normal_first(s.noise_key, gid)));
        if (s.boost_fraction > 0.0 && unit(draw(s.boost_key, gid)) < s.boost_fraction) cur = add(cur, BOOST_CURRENT);
        if (s.clamp && cur < 0.0) cur = 0.0;
        double a = inh ? c_or_a[i] : 0.02, b = inh ? d_or_b[i] : 0.2;
        double c = inh ? -65.0 : c_or_a[i], d = inh ? 2.0 : d_or_b[i];
        double vi = v[i], ui = u[i];
        bool spike = izhikevich(s.scheme, a, b, c, d, vi, ui, (st & 1) != 0, cur, syn);
        v[i] = vi;
        u[i] = ui;
        state[i] = (inh ? INHIBITORY : 0) | (spike ? 1 : 0);
        if (inh) {
            acc[2] += spike;
        } else {
            acc[1] += spike;
            acc[0] += (u64)__double2ll_rn(mul(vi, V_SCALE));
        }
    }
    u64 slot = 3 * (s.step % 512);
    const int index[3] = {(int)slot, (int)slot + 1, (int)slot + 2};
    block_add<3>(sums, index, acc);
}

// Neuron i's firing sources of this step (e excitatory, inh inhibitory) deposited into its
// ring: the `exp` slot of its arrival step, or the next w `table` slots times the washout
// table (pairs e, i).
__device__ __forceinline__ void deposit(const Step &s, u64 n, u64 i, u32 e, u32 inh, const u8 *delay,
                                        u32 *ring, float *table, const float *washout) {
    u32 c = e | (inh << 16);
    if (!s.table) {
        ring[((s.step + 1 + delay[i]) % EXP_SLOTS) * n + i] = c;
    } else if (c) {
        float fe = (float)e, fi = (float)inh;
        for (u32 m = 0; m < s.w; m++) {
            u64 at = ((s.step + 1 + m) % TABLE_SLOTS) * n + i;
            table[at] = __fadd_rn(__fadd_rn(table[at], __fmul_rn(fe, washout[2 * m])), __fmul_rn(fi, washout[2 * m + 1]));
        }
    }
}

// The state byte of row yy (-r <= yy < rows + r: ghost rows below and above the slab's) and
// column sx.
__device__ __forceinline__ u8 state_at(i64 yy, u64 sx, u64 l, u64 r, i64 rows, const u8 *state,
                                       const u8 *below, const u8 *above) {
    return yy < 0 ? below[(u64)(yy + (i64)r) * l + sx]
                  : (yy >= rows ? above[(u64)(yy - rows) * l + sx] : state[(u64)yy * l + sx]);
}

// Phase 2 on local rows [row0, row1), a thread per neuron: the firing sources of each neuron
// (from the slab's state bytes and the r ghost rows below and above it, apart so that the
// inner core's pass reads no buffer the exchange writes), deposited. For radii whose window
// does not fit phase2_tiled's shared memory.
extern "C" __global__ void phase2(Step s, u64 n, u64 l, u64 r, u32 k, u64 row0, u64 row1, const u16 *offsets,
                                  const u8 *state, const u8 *below, const u8 *above, const u8 *delay, u32 *ring,
                                  float *table, const float *washout) {
    u64 first = row0 * l, count = (row1 - row0) * l;
    i64 rows = (i64)(n / l);
    for (u64 q = thread_index(); q < count; q += grid_threads()) {
        u64 i = first + q;
        i64 x = (i64)(i % l), y = (i64)(i / l);
        u32 e = 0, inh = 0;
        for (u32 j = 0; j < k; j++) {
            u16 o = offsets[(u64)j * n + i];
            i64 dx = (signed char)(o & 0xff), dy = (signed char)(o >> 8);
            u64 sx = (u64)((x + dx + (i64)l) % (i64)l);
            u8 st = state_at(y + dy, sx, l, r, rows, state, below, above);
            u32 f = st & 1;
            if (st & INHIBITORY) inh += f; else e += f;
        }
        deposit(s, n, i, e, inh, delay, ring, table, washout);
    }
}

// Phase 2 by tiles of TILE x TILE neurons of rows [row0, row1), a block each (blockIdx.x the
// tile's column, blockIdx.y its row): the block copies the (TILE + 2r)^2 state bytes that its
// neurons' sources can lie in into shared memory (wrapped along the lattice's x; rows beyond
// the slab from the ghost rows; only rows within r of the launch's rows, so the inner core's
// pass still reads no ghost row), then each neuron gathers its k sources from the copy: a
// global read per window byte (from L2: the slab's state bytes are a byte per neuron) instead
// of a 32-byte sector per source. The same counts as phase2, and integer sums, so the same
// deposits. Dynamic shared memory: (TILE + 2r)^2 bytes.
#define TILE 32
extern "C" __global__ void phase2_tiled(Step s, u64 n, u64 l, u64 r, u32 k, u64 row0, u64 row1,
                                        const u16 *offsets, const u8 *state, const u8 *below,
                                        const u8 *above, const u8 *delay, u32 *ring, float *table,
                                        const float *washout) {
    extern __shared__ u8 window[];
    const u32 width = TILE + 2 * (u32)r;
    const i64 rows = (i64)(n / l);
    const u64 x0 = (u64)blockIdx.x * TILE;
    const i64 y0 = (i64)row0 + (i64)blockIdx.y * TILE;
    const i64 y_end = min(y0 + TILE, (i64)row1);
    // Column of the window's first byte, in [0, l).
    const u64 xs = (u64)((((i64)x0 - (i64)r) % (i64)l + (i64)l) % (i64)l);
    const u32 lane = threadIdx.x % WARP, warps = blockDim.x / WARP;
    for (u32 wy = threadIdx.x / WARP; wy < width; wy += warps) {
        i64 yy = y0 - (i64)r + wy;
        if (yy >= y_end + (i64)r) break;  // no neuron of the launch reaches it
        for (u32 wx = lane; wx < width; wx += WARP) {
            u64 sx = xs + wx;
            while (sx >= l) sx -= l;
            window[wy * width + wx] = state_at(yy, sx, l, r, rows, state, below, above);
        }
    }
    __syncthreads();
    const u32 tx = threadIdx.x % TILE;
    const u64 x = x0 + tx;
    for (u32 ty = threadIdx.x / TILE; ty < TILE; ty += blockDim.x / TILE) {
        i64 y = y0 + ty;
        if (x >= l || y >= y_end) continue;
        u64 i = (u64)y * l + x;
        const u8 *centre = window + (ty + (u32)r) * width + (tx + (u32)r);
        u32 e = 0, inh = 0;
        for (u32 j = 0; j < k; j++) {
            u16 o = offsets[(u64)j * n + i];
            int dx = (signed char)(o & 0xff), dy = (signed char)(o >> 8);
            u8 st = centre[dy * (int)width + dx];
            u32 f = st & 1;
            if (st & INHIBITORY) inh += f; else e += f;
        }
        deposit(s, n, i, e, inh, delay, ring, table, washout);
    }
}

// model.rs normal_pair, both deviates.
__device__ void normal_pair(u64 key, u64 counter, double &zx, double &zy) {
    for (u64 t = 0; t < POLAR_TRIES; t++) {
        u64 bits = draw(key, counter * POLAR_TRIES + t);
        double x = signed_unit((u32)(bits >> 32));
        double y = signed_unit((u32)bits);
        double s = add(mul(x, x), mul(y, y));
        if (s < 1.0) {
            double f = __dsqrt_rn(__ddiv_rn(mul(-2.0, soft_ln(s)), s));
            zx = mul(x, f);
            zy = mul(y, f);
            return;
        }
    }
    zx = 0.0;
    zy = 0.0;
}

#define SOURCE_TRIES 16

// network.rs source (or all_source when `all`), for every (j, i) of the slab:
// offsets[j * n + i].
extern "C" __global__ void sources(u64 key, u64 n, u64 gid0, u32 k, u32 r, u64 l, u32 all, u16 *offsets) {
    double sigma = __ddiv_rn((double)r, 3.0);
    i64 r2 = (i64)r * (i64)r;
    for (u64 q = thread_index(); q < n * k; q += grid_threads()) {
        u64 j = q / n, i = q % n;
        if (all) {
            i64 h = (i64)(l / 2);
            u64 centre = (u64)(h * (i64)l + h), w = j < centre ? j : j + 1;
            offsets[q] = (u16)((u8)(signed char)((i64)(w % l) - h)) | ((u16)((u8)(signed char)((i64)(w / l) - h)) << 8);
            continue;
        }
        u64 base = ((gid0 + i) * k + j) * SOURCE_TRIES;
        u16 packed = 1;
        for (u64 t = 0; t < SOURCE_TRIES; t++) {
            double x, y;
            normal_pair(key, base + t, x, y);
            i64 dx = (i64)round(mul(x, sigma)), dy = (i64)round(mul(y, sigma));
            if ((dx != 0 || dy != 0) && dx * dx + dy * dy <= r2) {
                packed = (u16)((u8)(signed char)dx) | ((u16)((u8)(signed char)dy) << 8);
                break;
            }
        }
        offsets[q] = packed;
    }
}

// network.rs Neuron::draw for the slab's neurons: type bits, varying constants, v and u at
// the start, delays (from delay_min, delay_span values).
extern "C" __global__ void neurons(u64 key, u64 n, u64 gid0, double ratio, u32 delay_min, double delay_span,
                                   u8 *state, double *c_or_a,
                                   double *d_or_b, double *v, double *u, u8 *delay) {
    for (u64 i = thread_index(); i < n; i += grid_threads()) {
        u64 gid = gid0 + i;
        bool inh = unit(draw(key, gid * 4)) >= ratio;
        double r = unit(draw(key, gid * 4 + 1));
        double p0, p1;
        if (inh) {
            p0 = add(0.02, mul(0.08, r));
            p1 = sub(0.25, mul(0.05, r));
        } else {
            p0 = add(-65.0, mul(15.0, mul(r, r)));
            p1 = sub(8.0, mul(6.0, mul(r, r)));
        }
        double v0 = sub(30.0, mul(unit(draw(key, gid * 4 + 2)), 95.0));
        double b = inh ? p1 : 0.2;
        state[i] = inh ? INHIBITORY : 0;
        c_or_a[i] = p0;
        d_or_b[i] = p1;
        v[i] = v0;
        u[i] = mul(b, v0);
        delay[i] = (u8)(delay_min + (u32)mul(unit(draw(key, gid * 4 + 3)), delay_span));
    }
}
