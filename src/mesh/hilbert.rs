//! The 3D Hilbert index (Skilling, "Programming the Hilbert curve", AIP Conf. Proc. 707,
//! 2004: axes to transpose, then the bits interleaved), 21 bits per axis.

const BITS: u32 = 21;

/// The Hilbert index of integer coordinates below 2^21. Branch-free (the partitioner keys
/// every node: data-dependent branches on random bits cost more than the arithmetic); the
/// same index as Skilling's loops, kept in the tests as the reference.
pub fn index(mut x: [u32; 3]) -> u64 {
    // Inverse undo of excess work: at each level q, for each axis, invert the low bits of
    // x[0] where the axis has bit q, else exchange the low bits of x[0] and x[i].
    let mut q = 1u32 << (BITS - 1);
    while q > 1 {
        let p = q - 1;
        for i in 0..3 {
            let set = u32::from(x[i] & q != 0).wrapping_neg();
            let t = (x[0] ^ x[i]) & p & !set;
            x[0] ^= (p & set) | t;
            x[i] ^= t;
        }
        q >>= 1;
    }
    // Gray encode.
    x[1] ^= x[0];
    x[2] ^= x[1];
    // t: bit b is the parity of x[2]'s bits above b (Skilling's loop over q).
    let mut s = x[2];
    for shift in [1, 2, 4, 8, 16] {
        s ^= s >> shift;
    }
    let t = s >> 1;
    // Interleave the transposed bits, most significant first: x[0]'s bit b at 3b + 2.
    (spread(x[0] ^ t) << 2) | (spread(x[1] ^ t) << 1) | spread(x[2] ^ t)
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

/// The Hilbert index of a point in the box [lo, hi].
pub fn of_point(p: [f64; 3], lo: [f64; 3], hi: [f64; 3]) -> u64 {
    let max = ((1u32 << BITS) - 1) as f64;
    index(std::array::from_fn(|d| {
        let span = (hi[d] - lo[d]).max(f64::MIN_POSITIVE);
        ((p[d] - lo[d]) / span * max).clamp(0.0, max) as u32
    }))
}

#[cfg(test)]
mod tests {
    /// Skilling's loops as he wrote them: the reference of the branch-free `index`.
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

    /// The branch-free index against Skilling's loops, on random and extreme coordinates.
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
