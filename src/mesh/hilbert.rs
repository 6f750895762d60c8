//! The 3D Hilbert index (Skilling, "Programming the Hilbert curve", AIP Conf. Proc. 707,
//! 2004: axes to transpose, then the bits interleaved), 21 bits per axis.

const BITS: u32 = 21;

/// The Hilbert index of integer coordinates below 2^21.
pub fn index(mut x: [u32; 3]) -> u64 {
    let m = 1u32 << (BITS - 1);
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
    for b in (0..BITS).rev() {
        for v in x {
            h = (h << 1) | u64::from(v >> b & 1);
        }
    }
    h
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
