//! The checkerboard colouring: site (x0, x1[, x2]) has colour (x0 + x1 [+ x2]) mod 2, so that
//! no bond joins two sites of one colour where the colouring is proper (an open lattice, or a
//! periodic one of even side), and all sites of one colour can be updated at once.
//!
//! Rows (L sites along the fast axis, the last) alternate colours, so a row holds L/2 sites of
//! each colour (L even) at every other position from `row_first`.

use super::{Lattice, Slab};

/// Whether no bond joins two sites of one colour.
pub fn is_proper(lattice: &Lattice) -> bool {
    !lattice.periodic || lattice.l.is_multiple_of(2)
}

/// The colour (0 or 1) of a global site.
pub fn colour(lattice: &Lattice, site: u64) -> u8 {
    ((0..lattice.dim)
        .map(|a| lattice.coord(site, a))
        .sum::<u64>()
        % 2) as u8
}

/// The position along its row (0 or 1) of the first site of colour `colour` in local row
/// `row` of the slab; the row's other sites of that colour follow every second position.
pub fn row_first(slab: &Slab, row: usize, colour: u8) -> usize {
    let start = slab.global(row * slab.lattice.l as usize);
    usize::from(self::colour(&slab.lattice, start) != colour)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_differ_in_colour_and_rows_start_where_said() {
        for (dim, l) in [(2, 6), (3, 4)] {
            let lattice = Lattice::new(dim, l, true).unwrap();
            assert!(is_proper(&lattice));
            for site in 0..lattice.sites() {
                for axis in 0..dim {
                    let up = lattice.up(site, axis).unwrap();
                    assert_ne!(colour(&lattice, site), colour(&lattice, up));
                }
            }
            let slab = Slab::new(lattice, 3, 1).unwrap();
            for row in 0..slab.sites() / l as usize {
                for c in 0..2 {
                    let x = row_first(&slab, row, c);
                    let site = slab.global(row * l as usize + x);
                    assert_eq!(colour(&lattice, site), c);
                }
            }
        }
        assert!(!is_proper(&Lattice::new(2, 5, true).unwrap()));
    }
}
