//! The 3D Hilbert index (Skilling, "Programming the Hilbert curve", AIP Conf. Proc. 707,
//! 2004: axes to transpose, then the bits interleaved), 21 bits per axis, by a state table.
//!
//! Skilling's transform walks the bit levels from the top. At level q it reads bit q of
//! each axis as the levels above left it, then inverts the low bits of axis 0 (where axis i
//! has bit q) or exchanges the low bits of axes 0 and i (where it has not), i = 0, 1, 2 in
//! turn: so the low bits are always the input's with the axes permuted and some inverted.
//! The output bits of level q are the Gray code of the level's three bits, each XORed with
//! the parity of the Gray-coded axis 2 bits of the levels above. So the index is a walk of
//! a state machine over the levels: a state is (permutation, inverted axes, parity), 6 × 8 × 2
//! = 96 states, and `TABLE` takes two levels (6 input bits, the Morton interleave of the
//! coordinates) at a time to 6 output bits and the next state, built at compile time from
//! those rules. The tests keep Skilling's loops as the reference.

pub const BITS: u32 = 21;
/// The largest coordinate on an axis.
pub const AXIS_MAX: u32 = (1 << BITS) - 1;
/// States: permutation (0..6) × inverted axes (0..8) × parity (0..2).
const STATES: usize = 96;
/// The six permutations of the three axes.
const PERMS: [[usize; 3]; 6] = super::AXIS_ORDERS;

const fn perm_index(p: [usize; 3]) -> usize {
    let mut k = 0;
    while k < 6 {
        if PERMS[k][0] == p[0] && PERMS[k][1] == p[1] && PERMS[k][2] == p[2] {
            return k;
        }
        k += 1;
    }
    panic!("not a permutation")
}

/// One level from `state` with the input's bits `bits` (axis 0 at bit 2): the level's 3
/// output bits (axis 0 at bit 2) and the next state.
const fn level(state: usize, bits: usize) -> (usize, usize) {
    let mut perm = PERMS[state / 16];
    let mut flip = [
        (state / 8) % 2 == 1,
        (state / 4) % 2 == 1,
        (state / 2) % 2 == 1,
    ];
    let parity = state % 2;
    // Axis d of the transformed coordinates is input axis perm[d], inverted where flip[d].
    let mut y = [0usize; 3];
    let mut d = 0;
    while d < 3 {
        y[d] = ((bits >> (2 - perm[d])) & 1) ^ (flip[d] as usize);
        d += 1;
    }
    let mut i = 0;
    while i < 3 {
        if y[i] == 1 {
            flip[0] = !flip[0];
        } else {
            let (p, f) = (perm[0], flip[0]);
            perm[0] = perm[i];
            flip[0] = flip[i];
            perm[i] = p;
            flip[i] = f;
        }
        i += 1;
    }
    let g = [y[0], y[0] ^ y[1], y[0] ^ y[1] ^ y[2]];
    let out = ((g[0] ^ parity) << 2) | ((g[1] ^ parity) << 1) | (g[2] ^ parity);
    let next = perm_index(perm) * 16
        + (flip[0] as usize) * 8
        + (flip[1] as usize) * 4
        + (flip[2] as usize) * 2
        + (parity ^ g[2]);
    (out, next)
}

/// Two levels at once: entry state * 64 + the 6 input bits (the upper level in the high 3)
/// holds the 6 output bits and, above them, the next state.
static TABLE: [u16; STATES * 64] = {
    let mut t = [0u16; STATES * 64];
    let mut state = 0;
    while state < STATES {
        let mut bits = 0;
        while bits < 64 {
            let (high, mid) = level(state, bits >> 3);
            let (low, next) = level(mid, bits & 7);
            t[state * 64 + bits] = ((next << 6) | (high << 3) | low) as u16;
            bits += 1;
        }
        state += 1;
    }
    t
};

/// The Hilbert index of integer coordinates below 2^21 (Skilling's, checked against his
/// loops in the tests): the top level alone, then two levels a step through `TABLE`.
pub fn index(x: [u32; 3]) -> u64 {
    let morton = (spread(x[0]) << 2) | (spread(x[1]) << 1) | spread(x[2]);
    let (top, mut state) = level(0, (morton >> 60) as usize);
    let mut h = top as u64;
    for step in (0..10).rev() {
        let e = TABLE[state * 64 + ((morton >> (6 * step)) & 63) as usize];
        h = (h << 6) | u64::from(e & 63);
        state = usize::from(e >> 6);
    }
    h
}

/// The 21 low bits of v, bit b moved to bit 3b.
fn spread(v: u32) -> u64 {
    let mut x = u64::from(v) & 0x1f_ffff;
    x = (x | x << 32) & 0x001f_0000_0000_ffff;
    x = (x | x << 16) & 0x001f_0000_ff00_00ff;
    x = (x | x << 8) & 0x100f_00f0_0f00_f00f;
    x = (x | x << 4) & 0x10c3_0c30_c30c_30c3;
    x = (x | x << 2) & 0x1249_2492_4924_9249;
    x
}

#[cfg(test)]
mod tests {
    /// Skilling's loops as he wrote them: the reference of the table-driven `index`.
    fn reference(mut x: [u32; 3]) -> u64 {
        let m = 1u32 << (super::BITS - 1);
        // Inverse undo of excess work.
        let mut q = m;
        while q > 1 {
            let p = q - 1;
            for i in 0..3 {
                if x[i] & q != 0 {
                    x[0] ^= p;
                } else {
                    let t = (x[0] ^ x[i]) & p;
                    x[0] ^= t;
                    x[i] ^= t;
                }
            }
            q >>= 1;
        }
        // Gray encode.
        for i in 1..3 {
            x[i] ^= x[i - 1];
        }
        let mut t = 0;
        let mut q = m;
        while q > 1 {
            if x[2] & q != 0 {
                t ^= q - 1;
            }
            q >>= 1;
        }
        for v in x.iter_mut() {
            *v ^= t;
        }
        // Interleave the transposed bits, most significant first.
        let mut h = 0u64;
        for b in (0..super::BITS).rev() {
            for v in x {
                h = (h << 1) | u64::from(v >> b & 1);
            }
        }
        h
    }

    /// The table-driven index against Skilling's loops, on random and extreme coordinates.
    #[test]
    fn index_is_skillings() {
        let max = (1u32 << super::BITS) - 1;
        let mut cases: Vec<[u32; 3]> = (0..20000u64)
            .map(|i| std::array::from_fn(|d| crate::rng::draw(3, 3 * i + d as u64) as u32 & max))
            .collect();
        cases.extend([
            [0, 0, 0],
            [max, max, max],
            [max, 0, 0],
            [0, max, 1],
            [1, 2, 3],
        ]);
        for x in cases {
            assert_eq!(super::index(x), reference(x), "{x:?}");
        }
    }

    /// On a 4x4x4 grid the curve visits every cell once, each step to a face neighbour.
    #[test]
    fn consecutive_indices_are_neighbours() {
        let mut cells: Vec<(u64, [u32; 3])> = Vec::new();
        for x in 0..4u32 {
            for y in 0..4u32 {
                for z in 0..4u32 {
                    let scale = 1 << (super::BITS - 2);
                    cells.push((super::index([x * scale, y * scale, z * scale]), [x, y, z]));
                }
            }
        }
        cells.sort();
        for w in cells.windows(2) {
            let d: u32 = (0..3).map(|k| w[0].1[k].abs_diff(w[1].1[k])).sum();
            assert_eq!(d, 1, "{:?} -> {:?}", w[0], w[1]);
        }
    }
}
