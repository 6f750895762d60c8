// Spin models (host side: src/spin/gpu.rs; the CPU twins in src/spin/cpu.rs and model.rs
// take the same decisions bit for bit).
//
// A slab's spins are bytes (Potts states 0..q; Ising q = 2) in a field with a ghost plane on
// either side: the spin of local site i (row-major, axis 0 slowest; global index offset + i)
// sits at field[plane + i]. The lattice is periodic: along axis 0 the neighbours are the
// ghost planes' (src/lattice/halo.rs fills them), along the other axes the plane wraps. Every
// random decision compares a counter-based draw's top 53 bits with an integer threshold the
// host computed: no floating point here.

// A state uniform in 0..q from a draw's top 32 bits (model.rs uniform_state).
__device__ __forceinline__ u32 spin_uniform(u64 r, u32 q) { return (u32)(((r >> 32) * q) >> 32); }

// One of the q - 1 states other than s (model.rs proposal).
__device__ __forceinline__ u32 spin_proposal(u32 s, u64 r, u32 q) {
    return (u32)((s + 1 + (((r >> 32) * (q - 1)) >> 32)) % q);
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
// proposes a new state (1 - s for Ising; else drawn at 2g + 1) and takes it when the draw at
// 2g passes table[ΔE + z], ΔE = neighbours equal to the old state - equal to the new one.
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
    // A threshold of 2^53 accepts every draw: no need to make it.
    u64 threshold = table[de + 2 * (int)dim];
    if (threshold >> 53 || (draw(key, 2 * g) >> 11) < threshold) field[plane + i] = (u8)fresh;
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
