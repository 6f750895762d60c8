//! Occupations as bond masks, the labelling's input: one byte per site, bit `a` set when the
//! bond from the site to its neighbour one step up along axis `a` is open, bit 7 (`VACANT`)
//! set when the site itself is empty (site percolation; it then has no bonds and no label).
//! A mask never opens a bond past the end of an open lattice, nor one to or from a vacant site.
//!
//! The draws are counter-based (`rng::draw`), keyed by the caller's stream key and the global
//! site index (site percolation: one number per site, a bond is open when both its sites are
//! occupied) or the global bond index `site * dim + axis` (bond percolation), so a mask is the
//! same for every rank count and on the GPU (kernels/lattice.cu draws bit for bit the same).
//! A draw's top 53 bits below `threshold(p)` mean "occupied": exactly p = 0 and p = 1 too.

use super::{Lattice, Slab};
use crate::rng::draw;
use rayon::prelude::*;

/// Bit 7 of a mask: the site is empty.
pub const VACANT: u8 = 0x80;

/// The label of a vacant site.
pub const NO_LABEL: u64 = u64::MAX;

/// The mask bit of the bond up along `axis`.
pub const fn bond_bit(axis: usize) -> u8 {
    1 << axis
}

/// What is occupied at random.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Occupation {
    /// Sites, each with probability p; bonds join occupied neighbours.
    Site,
    /// Bonds, each open with probability p; every site takes part.
    Bond,
}

/// The integer a draw's top 53 bits are compared with for probability `p` in [0, 1].
pub fn threshold(p: f64) -> u64 {
    (p * (1u64 << 53) as f64).round() as u64
}

/// Whether item `index` of the stream `key` is occupied at `threshold`.
#[inline]
pub fn occupied(key: u64, index: u64, threshold: u64) -> bool {
    draw(key, index) >> 11 < threshold
}

/// The mask of global site `site`.
pub fn site_mask(lattice: &Lattice, kind: Occupation, key: u64, threshold: u64, site: u64) -> u8 {
    let d = lattice.dim as u64;
    match kind {
        Occupation::Site if !occupied(key, site, threshold) => VACANT,
        Occupation::Site => (0..lattice.dim)
            .filter(|&a| {
                lattice
                    .up(site, a)
                    .is_some_and(|n| occupied(key, n, threshold))
            })
            .fold(0, |m, a| m | bond_bit(a)),
        Occupation::Bond => (0..lattice.dim)
            .filter(|&a| {
                lattice.up(site, a).is_some() && occupied(key, site * d + a as u64, threshold)
            })
            .fold(0, |m, a| m | bond_bit(a)),
    }
}

/// The masks of a slab's sites, drawn on the CPU (as `site_mask`, a row at a time: along
/// the slow axes a row's sites share their neighbours' offsets).
pub fn draw_mask(slab: &Slab, kind: Occupation, key: u64, threshold: u64) -> Vec<u8> {
    let lattice = slab.lattice;
    let (l, d) = (lattice.l, lattice.dim as u64);
    let fast = lattice.dim - 1;
    let mut mask = vec![0u8; slab.sites()];
    mask.par_chunks_mut(l as usize)
        .with_min_len(crate::grain::min_rows(l as usize))
        .enumerate()
        .for_each(|(row, masks)| {
            let start = slab.global(row * l as usize);
            // Per axis, the neighbour up of the row's first site (none past an open end).
            let up: Vec<Option<u64>> = (0..lattice.dim).map(|a| lattice.up(start, a)).collect();
            for (x, m) in (0..l).zip(masks.iter_mut()) {
                let site = start + x;
                let neighbour = |a: usize| -> Option<u64> {
                    if a != fast {
                        up[a].map(|n| n + x)
                    } else if x + 1 < l {
                        Some(site + 1)
                    } else {
                        lattice.periodic.then_some(start)
                    }
                };
                *m = match kind {
                    Occupation::Site if !occupied(key, site, threshold) => VACANT,
                    Occupation::Site => (0..lattice.dim)
                        .filter(|&a| neighbour(a).is_some_and(|n| occupied(key, n, threshold)))
                        .fold(0, |m, a| m | bond_bit(a)),
                    Occupation::Bond => (0..lattice.dim)
                        .filter(|&a| {
                            neighbour(a).is_some() && occupied(key, site * d + a as u64, threshold)
                        })
                        .fold(0, |m, a| m | bond_bit(a)),
                };
            }
        });
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_probabilities_are_exact_and_open_ends_have_no_bonds() {
        let lattice = Lattice::new(2, 5, false).unwrap();
        let slab = Slab::new(lattice, 1, 0).unwrap();
        for kind in [Occupation::Site, Occupation::Bond] {
            let full = draw_mask(&slab, kind, 7, threshold(1.0));
            for (i, &m) in full.iter().enumerate() {
                let mut want = 0;
                if i / 5 < 4 {
                    want |= bond_bit(0);
                }
                if i % 5 < 4 {
                    want |= bond_bit(1);
                }
                assert_eq!(m, want, "{kind:?} site {i}");
            }
            let empty = draw_mask(&slab, kind, 7, threshold(0.0));
            let none = if kind == Occupation::Site { VACANT } else { 0 };
            assert!(empty.iter().all(|&m| m == none));
        }
    }

    #[test]
    fn the_row_wise_draw_is_site_mask_at_every_site() {
        for (dim, l, periodic) in [(2, 7, true), (2, 6, false), (3, 4, true), (3, 5, false)] {
            let lattice = Lattice::new(dim, l, periodic).unwrap();
            let slab = Slab::new(lattice, 3, 1).unwrap();
            for kind in [Occupation::Site, Occupation::Bond] {
                let mask = draw_mask(&slab, kind, 11, threshold(0.6));
                for (i, &m) in mask.iter().enumerate() {
                    let want = site_mask(&lattice, kind, 11, threshold(0.6), slab.global(i));
                    assert_eq!(
                        m, want,
                        "{dim}D L={l} periodic={periodic} {kind:?} site {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_slab_draws_the_whole_lattice_draw_for_its_sites() {
        let lattice = Lattice::new(3, 5, true).unwrap();
        let whole = draw_mask(
            &Slab::new(lattice, 1, 0).unwrap(),
            Occupation::Site,
            3,
            threshold(0.4),
        );
        let slab = Slab::new(lattice, 3, 1).unwrap();
        let part = draw_mask(&slab, Occupation::Site, 3, threshold(0.4));
        assert_eq!(part[..], whole[slab.offset() as usize..][..slab.sites()]);
    }
}
