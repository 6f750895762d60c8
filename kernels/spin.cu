// Spin models (host side: src/workloads/spin/gpu.rs; the CPU twins in src/workloads/spin/cpu.rs and model.rs
// take the same decisions bit for bit).
//
// A slab's spins are bytes (Potts states 0..q; Ising q = 2) in a field with a ghost plane on
// either side: the spin of local site i (row-major, axis 0 slowest; global index offset + i)
// sits at field[plane + i]. The lattice is periodic: along axis 0 the neighbours are the
// ghost planes' (src/lattice/halo.rs fills them), along the other axes the plane wraps. Every
// random decision compares a 53-bit uniform from counter-based draws with an integer threshold the
// host computed: no floating point here.

// A state uniform in 0..q from a draw's top 32 bits (model.rs uniform_state).
__device__ __forceinline__ u32 spin_uniform(u64 r, u32 q) { return (u32)(((r >> 32) * q) >> 32); }

// One of the q - 1 states other than s (model.rs proposal).
__device__ __forceinline__ u32 spin_proposal(u32 s, u64 r, u32 q) {
    return (u32)((s + 1 + (((r >> 32) * (q - 1)) >> 32)) % q);
}

// ---- Bit-sliced Metropolis uniforms (model.rs metropolis_accept, bit for bit) ----------------
//
// The 32 sites of one row at positions x = 2j + o (one parity), j in 32w..32w+31, share an
// acceptance word, numbered (row·2 + o)·⌈L/64⌉ + x/64 (the packed kernel's word); site j's
// 53-bit uniform is bit j of the word's planes 0..53, most significant first, planes 2m and
// 2m + 1 the low and high halves of draw(key, 2(32·word + m)).

#define SPIN_PLANES 53

__device__ __forceinline__ u64 spin_planes(u64 key, u64 word, u32 m) {
    return draw(key, 2 * (32 * word + m));
}

// Whether site g (lattice side l) takes its proposal: its uniform is below `threshold`
// (2^53 accepts every site), decided at the first bit that differs from the threshold's.
__device__ bool spin_accept(u64 key, u64 g, u64 l, u64 threshold) {
    if (threshold >> SPIN_PLANES) return true;
    u64 x = g % l;
    u64 word = (g / l * 2 + (x & 1)) * ((l + 63) / 64) + x / 64;
    u32 lane = (u32)(x >> 1) & 31;
    for (u32 m = 0; 2 * m < SPIN_PLANES; m++) {
        u64 r = spin_planes(key, word, m);
        for (u32 h = 0; h < 2 && 2 * m + h < SPIN_PLANES; h++) {
            u32 bit = (u32)(r >> (32 * h + lane)) & 1;
            u32 wanted = (u32)(threshold >> (SPIN_PLANES - 1 - (2 * m + h))) & 1;
            if (bit != wanted) return bit < wanted;
        }
    }
    return false;
}

// Field index of the neighbour of local site i one step up (dir 1) or down (dir 0) along
// `axis`.
__device__ __forceinline__ u64 spin_neighbour(u64 i, u32 axis, u32 dir, u32 dim, u64 l, u64 plane) {
    u64 f = plane + i;
    if (axis == 0) return dir ? f + plane : f - plane;
    u64 stride = axis + 1 == dim ? 1 : l;
    u64 x = i / stride % l;
    if (dir) return x + 1 < l ? f + stride : f - (l - 1) * stride;
    return x > 0 ? f - stride : f + (l - 1) * stride;
}

// Cold or hot start: state 0 (key 0 and q 1 give it) or uniform from draw(key, global site).
extern "C" __global__ void spin_start(u8 *field, u64 n, u64 plane, u64 offset, u64 key, u32 q) {
    u64 i = thread_index();
    if (i < n) field[plane + i] = (u8)spin_uniform(draw(key, offset + i), q);
}

// One checkerboard half-sweep: a thread per site of colour `colour` (L even, so each row of
// L sites holds L/2 of each colour, at every other position from the row's first). The site
// proposes a new state (1 - s for Ising; else drawn at 2g + 1) and takes it when its uniform
// passes table[ΔE + z] (spin_accept), ΔE = neighbours equal to the old state - to the new one.
extern "C" __global__ void spin_metropolis(u8 *field, u64 half, u32 dim, u64 l, u64 plane,
                                           u64 first, u32 colour, u64 key, const u64 *table,
                                           u32 q) {
    u64 t = thread_index();
    if (t >= half) return;
    u64 row = t / (l / 2);
    u64 rows_per_plane = plane / l;
    // The colour of the row's first site: the parity of its global coordinates.
    u64 parity = first + row / rows_per_plane + (dim == 3 ? row % l : 0);
    u64 x = 2 * (t % (l / 2)) + ((parity + colour) & 1);
    u64 i = row * l + x;
    u64 g = first * plane + i;
    u32 s = field[plane + i];
    u32 fresh = q == 2 ? 1 - s : spin_proposal(s, draw(key, 2 * g + 1), q);
    int de = 0;
    for (u32 a = 0; a < dim; a++) {
        for (u32 dir = 0; dir < 2; dir++) {
            u32 v = field[spin_neighbour(i, a, dir, dim, l, plane)];
            de += (int)(v == s) - (int)(v == fresh);
        }
    }
    if (spin_accept(key, g, l, table[de + 2 * (int)dim])) field[plane + i] = (u8)fresh;
}

// Swendsen-Wang bonds: bit a of mask[i] is set when the bond up along a joins equal spins
// and its draw at g*dim + a passes `threshold` (p = 1 - exp(-K)); src/lattice's mask format.
extern "C" __global__ void spin_bonds(const u8 *field, u8 *mask, u64 n, u32 dim, u64 l,
                                      u64 plane, u64 offset, u64 key, u64 threshold) {
    u64 i = thread_index();
    if (i >= n) return;
    u8 s = field[plane + i];
    u64 g = offset + i;
    u8 m = 0;
    for (u32 a = 0; a < dim; a++) {
        if (field[spin_neighbour(i, a, 1, dim, l, plane)] == s && (draw(key, g * dim + a) >> 11) < threshold)
            m |= 1 << a;
    }
    mask[i] = m;
}

// Swendsen-Wang: each site takes the state drawn at its cluster's canonical label.
extern "C" __global__ void spin_clusters(u8 *field, const u64 *labels, u64 n, u64 plane, u64 key,
                                         u32 q) {
    u64 i = thread_index();
    if (i < n) field[plane + i] = (u8)spin_uniform(draw(key, labels[i]), q);
}

// counts[0] += satisfied bonds (counted from their lower site), counts[1 + s] += sites in
// state s (q <= 256). A grid-stride loop; sums in shared memory, one atomic per counter and
// block.
extern "C" __global__ void spin_tally(const u8 *field, u64 n, u32 dim, u64 l, u64 plane, u32 q,
                                      u64 *counts) {
    __shared__ u64 sums[257];
    for (u32 k = threadIdx.x; k <= q; k += blockDim.x) sums[k] = 0;
    __syncthreads();
    u64 satisfied = 0;
    for (u64 i = thread_index(); i < n; i += grid_threads()) {
        u8 s = field[plane + i];
        for (u32 a = 0; a < dim; a++) satisfied += field[spin_neighbour(i, a, 1, dim, l, plane)] == s;
        warp_add(&sums[1 + s], 1);
    }
    satisfied = warp_sum(satisfied);
    if (lane_id() == 0 && satisfied) atomicAdd(&sums[0], satisfied);
    __syncthreads();
    for (u32 k = threadIdx.x; k <= q; k += blockDim.x)
        if (sums[k]) atomicAdd(&counts[k], sums[k]);
}

// ---- Multi-spin coded Ising Metropolis (host side: src/workloads/spin/msc.rs) ------------------------
//
// One bit per Ising spin (the byte state 0 or 1), 32 spins of one colour per word. Row ρ of
// the slab (L sites along the fast axis; ρ counts the slow coordinates, axis 0 slowest) keeps
// its L/2 sites of colour c, at positions x = 2j + o (o = (parity of the row's slow
// coordinates + c) & 1), as bits j & 31 of words j >> 5, in the `wr` = L/64 words at
// ((ρ + rpp)·2 + c)·wr: the colours of a row side by side, and a ghost plane of rpp rows
// (L^(d-2)) on either side, exchanged like the byte field's (lattice::halo). A site's
// neighbours along the slow axes sit at the same j in the other colour's word of the
// neighbouring rows; along the fast axis at j and at j - 1 (o = 0) or j + 1 (o = 1) of the
// other colour's row, a one-bit shift with the carry from the next word.
//
// The decisions are the byte kernel's bit for bit: with e of the z = 2d neighbours equal to
// the spin, ΔE = 2e - z; a site with ΔE <= 0 flips, any other flips when its uniform under
// the colour's key passes table[2e] (the same thresholds). The word is its sites' acceptance
// word: the lanes that draw compare their uniforms with their thresholds one plane at a time,
// all together, until every lane is decided (about 6 planes, 3 draws, for 32 sites).

__device__ __forceinline__ u64 msc_word(u32 frow, u32 colour, u32 wr, u32 w) {
    return ((u64)frow * 2 + colour) * wr + w;
}

// a + b + c of one-bit lanes: sum bit and carry.
__device__ __forceinline__ void full_add(u32 a, u32 b, u32 c, u32 &sum, u32 &carry) {
    u32 t = a ^ b;
    sum = t ^ c;
    carry = (a & b) | (t & c);
}

// Geometry of a packed slab (the kernels take it as the parameters MSC_SLAB names).
struct MscSlab {
    u32 rows, wr, l, rpp, first_parity;
    u64 offset;  // global index of the slab's first site
};
#define MSC_SLAB u32 rows, u32 wr, u32 l, u32 rpp, u32 first_parity, u64 offset
#define MSC_GEOMETRY MscSlab{rows, wr, l, rpp, first_parity, offset}

// Word w of row ρ (colour c): its spins, its neighbour words n (the neighbours' spins bit
// for bit), and o, the position of its first site along the row.
template <int DIM>
__device__ __forceinline__ u32 msc_neighbours(const u32 *words, const MscSlab &g, u32 rho, u32 w,
                                              u32 colour, u32 (&n)[2 * DIM], u32 &o) {
    u32 frow = rho + g.rpp, other = colour ^ 1;
    u32 r = DIM == 3 ? rho % g.l : 0;  // the row's axis-1 coordinate
    u32 x0 = DIM == 3 ? rho / g.l : rho;  // its axis-0 coordinate less the slab's first
    o = (g.first_parity + x0 + r + colour) & 1;
    u32 same = words[msc_word(frow, other, g.wr, w)];
    n[0] = same;
    if (o == 0) {
        u32 before = words[msc_word(frow, other, g.wr, w ? w - 1 : g.wr - 1)];
        n[1] = (same << 1) | (before >> 31);
    } else {
        u32 after = words[msc_word(frow, other, g.wr, w + 1 < g.wr ? w + 1 : 0)];
        n[1] = (same >> 1) | (after << 31);
    }
    n[2] = words[msc_word(frow - g.rpp, other, g.wr, w)];
    n[3] = words[msc_word(frow + g.rpp, other, g.wr, w)];
    if (DIM == 3) {
        n[4] = words[msc_word(r > 0 ? frow - 1 : frow + g.l - 1, other, g.wr, w)];
        n[5] = words[msc_word(r + 1 < g.l ? frow + 1 : frow + 1 - g.l, other, g.wr, w)];
    }
    return words[msc_word(frow, colour, g.wr, w)];
}

// One half-sweep of colour `colour`: a thread per word of that colour (rows·wr of them).
// The count e of equal neighbours is summed bit-sliced (e2 e1 e0 in every bit lane).
template <int DIM>
__device__ void msc_metropolis(u32 *words, MscSlab g, u32 colour, u64 key, const u64 *table) {
    u64 t = thread_index();
    if (t >= (u64)g.rows * g.wr) return;
    u32 rho = (u32)t / g.wr, w = (u32)t % g.wr, o;
    u32 n[2 * DIM];
    u32 s = msc_neighbours<DIM>(words, g, rho, w, colour, n, o);
    u32 eq[2 * DIM];
    for (int i = 0; i < 2 * DIM; i++) eq[i] = ~(s ^ n[i]);
    u32 a, ka, e0, e1, e2;
    full_add(eq[0], eq[1], eq[2], a, ka);
    u32 lanes[3];  // the lanes that draw, by threshold
    u64 thresholds[3];
    if (DIM == 2) {
        // e = a + eq3 + 2 ka; draws at e = 3 (table[6]) and e = 4 (table[8]).
        e0 = a ^ eq[3];
        u32 kb = a & eq[3];
        e1 = ka ^ kb;
        e2 = ka & kb;
        lanes[0] = e1 & e0 & ~e2;
        lanes[1] = e2;
        lanes[2] = 0;
        thresholds[0] = table[6];
        thresholds[1] = table[8];
        thresholds[2] = 0;
    } else {
        u32 b, kb, kc;
        full_add(eq[3], eq[4], eq[5], b, kb);
        e0 = a ^ b;
        kc = a & b;
        full_add(ka, kb, kc, e1, e2);
        // Draws at e = 4, 5, 6 (e2 set; e1 e0 = 00, 01, 10): table[8], [10], [12].
        lanes[0] = e2 & ~e1 & ~e0;
        lanes[1] = e2 & ~e1 & e0;
        lanes[2] = e2 & e1;
        thresholds[0] = table[8];
        thresholds[1] = table[10];
        thresholds[2] = table[12];
    }
    u32 undecided = lanes[0] | lanes[1] | lanes[2];
    u32 flip = ~undecided;
    // The acceptance word ((offset/L + ρ)·2 + o)·wr + w, with 2·wr = L/32 (L a multiple of 64):
    // the slab's first row contributes offset/32, a shift where a 64-bit division would cost
    // as much as the rest of the word's update.
    u64 word = (g.offset >> 5) + ((u64)rho * 2 + o) * g.wr + w;
    // The loop is unrolled so that each plane's threshold bit sits at a constant position
    // (the kernel is bound by its integer-logic issue rate, and a variable 64-bit shift per
    // plane cost a fifth of it); with m constant the compiler also turns each draw's counter
    // product into one add.
#pragma unroll
    for (u32 m = 0; 2 * m < SPIN_PLANES; m++) {
        if (!undecided) break;
        u64 r = spin_planes(key, word, m);
#pragma unroll
        for (u32 h = 0; h < 2 && 2 * m + h < SPIN_PLANES; h++) {
            const u32 bit = SPIN_PLANES - 1 - (2 * m + h);
            u32 wanted = 0;
#pragma unroll
            for (int c = 0; c < 3; c++) wanted |= (thresholds[c] >> bit) & 1 ? lanes[c] : 0;
            u32 differ = ((u32)(r >> (32 * h)) ^ wanted) & undecided;
            flip |= differ & wanted;
            undecided &= ~differ;
        }
    }
    words[msc_word(rho + g.rpp, colour, g.wr, w)] = s ^ flip;
}

extern "C" __global__ void spin_msc_metropolis_2d(u32 *words, MSC_SLAB, u32 colour, u64 key,
                                                  const u64 *table) {
    msc_metropolis<2>(words, MSC_GEOMETRY, colour, key, table);
}

extern "C" __global__ void spin_msc_metropolis_3d(u32 *words, MSC_SLAB, u32 colour, u64 key,
                                                  const u64 *table) {
    msc_metropolis<3>(words, MSC_GEOMETRY, colour, key, table);
}

// Cold (hot = 0) or hot start: a thread per word of either colour (rows·2·wr), each site's
// state from draw(key, g) as spin_start (the top bit: uniform in 0..2).
extern "C" __global__ void spin_msc_start(u32 *words, MSC_SLAB, u64 key, u32 hot) {
    MscSlab g = MSC_GEOMETRY;
    u64 t = thread_index();
    if (t >= (u64)g.rows * 2 * g.wr) return;
    u32 rho = (u32)(t / (2 * g.wr)), colour = (u32)(t / g.wr) & 1, w = (u32)(t % g.wr);
    u32 x0 = rho / g.rpp, r = rho % g.l;
    u32 o = (g.first_parity + x0 + (g.rpp > 1 ? r : 0) + colour) & 1;
    u32 bits = 0;
    if (hot) {
        u64 site = g.offset + (u64)rho * g.l + 64ull * w + o;
        for (u32 k = 0; k < 32; k++) bits |= (u32)(draw(key, site + 2 * k) >> 63) << k;
    }
    words[msc_word(rho + g.rpp, colour, g.wr, w)] = bits;
}

// As spin_tally for q = 2, from the packed spins: a thread per word of colour 0 (every bond
// has one end of colour 0, so its four or six neighbour words count each satisfied bond once)
// and the word of colour 1 beside it. counts: satisfied, sites in state 0, in state 1.
template <int DIM>
__device__ void msc_tally(const u32 *words, MscSlab g, u64 *counts) {
    u64 t = thread_index();
    u64 tally[3] = {0, 0, 0};
    if (t < (u64)g.rows * g.wr) {
        u32 rho = (u32)t / g.wr, w = (u32)t % g.wr, o;
        u32 n[2 * DIM];
        u32 s = msc_neighbours<DIM>(words, g, rho, w, 0, n, o);
        for (int i = 0; i < 2 * DIM; i++) tally[0] += __popc(~(s ^ n[i]));
        tally[2] = __popc(s) + __popc(words[msc_word(rho + g.rpp, 1, g.wr, w)]);
        tally[1] = 64 - tally[2];
    }
    const int index[3] = {0, 1, 2};
    block_add<3>(counts, index, tally);
}

extern "C" __global__ void spin_msc_tally_2d(const u32 *words, MSC_SLAB, u64 *counts) {
    msc_tally<2>(words, MSC_GEOMETRY, counts);
}

extern "C" __global__ void spin_msc_tally_3d(const u32 *words, MSC_SLAB, u64 *counts) {
    msc_tally<3>(words, MSC_GEOMETRY, counts);
}

// ---- Wolff cluster growth (host side: src/workloads/spin/wolff_gpu.rs) -------------------------------
//
// The cluster is the seed's component of the active bonds between sites in the old state; a
// bond (b, a) (site b to its neighbour up along axis a) is active when draw(key, b·d + a)
// passes `threshold`, a pure function of the bond, so the cluster does not depend on the
// order of growth (the CPU's src/workloads/spin/cpu.rs grows it a level at a time too). A level: a
// thread per frontier site tries its 2d bonds; a neighbour in the slab that is still in the
// old state is claimed (old -> new, by compare-and-swap: one thread wins it) and joins the
// next frontier; a neighbour beyond the slab's faces goes to the outbox of the rank below
// (out[0..]) or above (out[plane..]) as a global index, claimed there by spin_wolff_receive.

// Set field[i] from `old` to `fresh` unless another thread did: a compare-and-swap on the
// aligned word that holds the byte (the field is allocated to a multiple of 4 bytes).
__device__ __forceinline__ bool spin_claim(u8 *field, u64 i, u32 old, u32 fresh) {
    u32 *word = (u32 *)(field + (i & ~3ull));
    u32 shift = 8 * (u32)(i & 3);
    u32 seen = *(volatile u32 *)word;
    for (;;) {
        if (((seen >> shift) & 0xff) != old) return false;
        u32 want = (seen & ~(0xffu << shift)) | (fresh << shift);
        u32 was = atomicCAS(word, seen, want);
        if (was == seen) return true;
        seen = was;
    }
}

// One level. counts: [next frontier, to the rank below, to the rank above].
extern "C" __global__ void spin_wolff_grow(u8 *field, const u64 *frontier, u64 size, u64 *next,
                                           u64 *out, u64 *counts, u32 dim, u64 l, u64 plane,
                                           u64 offset, u64 sites, u64 lattice_sites, u64 key,
                                           u64 threshold, u32 old, u32 fresh) {
    u64 t = thread_index();
    if (t >= size) return;
    u64 g = offset + frontier[t];
    for (u32 a = 0; a < dim; a++) {
        u64 stride = a == 0 ? lattice_sites / l : (a + 1 == dim ? 1 : l);
        u64 x = g / stride % l;
        u64 up = x + 1 < l ? g + stride : g - (l - 1) * stride;
        u64 down = x > 0 ? g - stride : g + (l - 1) * stride;
        for (u32 dir = 0; dir < 2; dir++) {
            u64 n = dir ? up : down, bond = dir ? g : down;
            if ((draw(key, bond * dim + a) >> 11) >= threshold) continue;
            u64 j = n - offset;  // wraps to a huge value below the slab
            if (j < sites) {
                if (spin_claim(field, plane + j, old, fresh)) next[atomicAdd(&counts[0], 1ull)] = j;
            } else {
                out[dir * plane + atomicAdd(&counts[1 + dir], 1ull)] = n;
            }
        }
    }
}

// The sites other ranks sent (global indices in this slab): claim them as spin_wolff_grow
// does its own.
extern "C" __global__ void spin_wolff_receive(u8 *field, const u64 *got, u64 size, u64 *next,
                                              u64 *counts, u64 plane, u64 offset, u32 old,
                                              u32 fresh) {
    u64 t = thread_index();
    if (t >= size) return;
    u64 j = got[t] - offset;
    if (spin_claim(field, plane + j, old, fresh)) next[atomicAdd(&counts[0], 1ull)] = j;
}
