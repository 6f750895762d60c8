//! The CPU's local labelling: every bond inside the slab (none that wraps or leaves it) united
//! in a lock-free union-find over rayon threads, then every parent compressed to its root.
//!
//! As ECL-CC (Jaiganesh & Burtscher 2018): a root is hooked under another by compare-and-swap,
//! always the larger index under the smaller, so a root is the smallest index of its tree and,
//! once all bonds are in, of its cluster: the canonical label for free. Finds halve paths with
//! plain stores, which race harmlessly (any value written is an ancestor). The one trick: a
//! bond along a slow axis is skipped when the pair to its left is bonded the same way and both
//! rows are bonded across (the four sites are joined already), which drops most unions in a
//! dense lattice; and each run of bonds along the fast axis is hung from its first site before
//! any union (rows belong to one thread), so those bonds need none. kernels/lattice.cu does
//! the same on the GPU, its runs cut at warp boundaries.

use super::occupation::bond_bit;
use super::Slab;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// The root of `x`, halving the path on the way.
fn find(parent: &[AtomicU32], x: u32) -> u32 {
    let mut prev = x;
    let mut cur = parent[x as usize].load(Relaxed);
    loop {
        let next = parent[cur as usize].load(Relaxed);
        if next == cur {
            return cur;
        }
        parent[prev as usize].store(next, Relaxed);
        prev = cur;
        cur = next;
    }
}

/// Join the trees of `a` and `b`, the larger root under the smaller.
fn unite(parent: &[AtomicU32], a: u32, b: u32) {
    let (mut a, mut b) = (find(parent, a), find(parent, b));
    while a != b {
        let (lo, hi) = (a.min(b), a.max(b));
        match parent[hi as usize].compare_exchange(hi, lo, Relaxed, Relaxed) {
            Ok(_) => return,
            Err(now) => (a, b) = (find(parent, lo), find(parent, now)),
        }
    }
}

/// Whether the slow-axis bond (i, i + stride) is implied by the bonds of the pair to its left.
fn implied(mask: &[u8], i: usize, stride: usize, axis_bit: u8, fast_bit: u8) -> bool {
    let left = mask[i - 1];
    left & axis_bit != 0 && left & fast_bit != 0 && mask[i - 1 + stride] & fast_bit != 0
}

/// Parents of the slab's sites after uniting the bonds inside it, compressed: each site holds
/// the smallest local index of its cluster within the slab (a vacant site, itself).
pub fn label_box(slab: &Slab, mask: &[u8]) -> Vec<u32> {
    assert_eq!(mask.len(), slab.sites(), "a mask per site of the slab");
    let lattice = slab.lattice;
    let l = lattice.l as usize;
    let fast = lattice.dim - 1;
    let fast_bit = bond_bit(fast);
    let parent: Vec<AtomicU32> = (0..slab.sites())
        .into_par_iter()
        .with_min_len(crate::grain::MIN_ITEMS)
        .map(|_| AtomicU32::new(0))
        .collect();
    let rows = || {
        (0..slab.sites() / l)
            .into_par_iter()
            .with_min_len(crate::grain::min_rows(l))
    };
    // Each run of fast-axis bonds hangs from its first site: those bonds need no union.
    rows().for_each(|row| {
        let mut run = row * l;
        for i in row * l..(row + 1) * l {
            if i == row * l || mask[i - 1] & fast_bit == 0 {
                run = i;
            }
            parent[i].store(run as u32, Relaxed);
        }
    });
    rows().for_each(|row| {
        let start = row * l;
        // Along a slow axis every site of a row has the same coordinate: one check a row.
        let slow: Vec<(u8, usize)> = (0..fast)
            .filter(|&a| slab.bond_inside(start, a))
            .map(|a| (bond_bit(a), lattice.stride(a) as usize))
            .collect();
        for (x, i) in (start..start + l).enumerate() {
            let m = mask[i];
            for &(bit, stride) in &slow {
                if m & bit != 0 && !(x > 0 && implied(mask, i, stride, bit, fast_bit)) {
                    unite(&parent, i as u32, (i + stride) as u32);
                }
            }
        }
    });
    (0..parent.len())
        .into_par_iter()
        .with_min_len(crate::grain::MIN_ITEMS)
        .map(|i| find(&parent, i as u32))
        .collect()
}
