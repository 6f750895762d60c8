//! Square (L x L) and simple cubic (L x L x L) lattices, periodic or open, cut into slabs along
//! the slowest axis, one slab per rank; axis 0 may be longer or shorter than the others (a
//! strip L_0 x L in 2D, a bar L_0 x L x L in 3D: weak scaling that keeps the plane the slabs
//! meet at fixed).
//!
//! Site (x0, x1[, x2]) has the global index x0 L^(d-1) + x1 L^(d-2) [+ x2]: row-major, axis 0
//! slowest (0 <= x0 < L_0). A slab is a block of whole planes of axis 0 (the ranges of `graph::Block1D`'s kind:
//! the first L mod P ranks one plane thicker), so it is one contiguous range of global indices
//! and a local index is the global one less the slab's offset. Bond (site, axis) joins a site
//! to its neighbour one step up along `axis`; on an open lattice the top sites of an axis have
//! no bond along it, on a periodic one it wraps to the bottom.

use serde::{Deserialize, Serialize};

/// The lattice a deck names: square ("2d") or simple cubic ("3d").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
pub enum LatticeKind {
    #[serde(rename = "2d")]
    #[value(name = "2d")]
    Square,
    #[serde(rename = "3d")]
    #[value(name = "3d")]
    Cubic,
}

impl LatticeKind {
    /// Number of axes.
    pub fn dim(self) -> usize {
        match self {
            LatticeKind::Square => 2,
            LatticeKind::Cubic => 3,
        }
    }
}

/// Sides from 2 (a periodic side of 2 joins two sites by two bonds, which percolation counts
/// as a wrap, as it is one).
pub const MIN_SIDE: u64 = 2;

/// A lattice: dimension, sides and boundary conditions (the same on every axis).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lattice {
    pub dim: usize,
    /// Sites along axis 0, the axis the slabs cut (L_0).
    pub length: u64,
    /// Sites along each other axis (L).
    pub l: u64,
    pub periodic: bool,
}

impl Lattice {
    /// A `dim`-dimensional lattice of side `l` on every axis (dim 2 or 3, l at least 2, at
    /// most 2^48 sites).
    pub fn new(dim: usize, l: u64, periodic: bool) -> Result<Lattice, String> {
        Lattice::with_length(dim, l, l, periodic)
    }

    /// A lattice of `length` sites along axis 0 and `l` along the others (both at least 2,
    /// at most 2^48 sites).
    pub fn with_length(dim: usize, length: u64, l: u64, periodic: bool) -> Result<Lattice, String> {
        if !(2..=3).contains(&dim) {
            return Err(format!("a lattice has 2 or 3 dimensions, not {dim}"));
        }
        if l < MIN_SIDE {
            return Err(format!("l = {l}: the side must be at least {MIN_SIDE}"));
        }
        if length < MIN_SIDE {
            return Err(format!(
                "length = {length}: the side must be at least {MIN_SIDE}"
            ));
        }
        let sites = l
            .checked_pow(dim as u32 - 1)
            .and_then(|plane| plane.checked_mul(length));
        match sites {
            Some(n) if n <= 1 << 48 => Ok(Lattice {
                dim,
                length,
                l,
                periodic,
            }),
            _ if length == l => Err(format!("l = {l} gives more than 2^48 sites in {dim}D")),
            _ => Err(format!(
                "length = {length} and l = {l} give more than 2^48 sites in {dim}D"
            )),
        }
    }

    pub fn sites(&self) -> u64 {
        self.length * self.plane()
    }

    /// The sides as a report names them: "L = 64", or "L_0 = 256, L = 64" for a strip or bar.
    pub fn sides(&self) -> String {
        if self.length == self.l {
            format!("L = {}", self.l)
        } else {
            format!("L_0 = {}, L = {}", self.length, self.l)
        }
    }

    /// Sites along `axis`: L_0 along axis 0, L along the others.
    pub fn side(&self, axis: usize) -> u64 {
        if axis == 0 {
            self.length
        } else {
            self.l
        }
    }

    /// Sites of one plane of axis 0.
    pub fn plane(&self) -> u64 {
        self.l.pow(self.dim as u32 - 1)
    }

    /// Index distance between neighbours along `axis`: L^(d-1-axis).
    pub fn stride(&self, axis: usize) -> u64 {
        self.l.pow((self.dim - 1 - axis) as u32)
    }

    /// Coordinate of a global site along `axis`.
    pub fn coord(&self, site: u64, axis: usize) -> u64 {
        site / self.stride(axis) % self.side(axis)
    }

    /// The neighbour one step up along `axis`: wrapped on a periodic lattice, none past the
    /// top of an open one.
    pub fn up(&self, site: u64, axis: usize) -> Option<u64> {
        let (stride, side) = (self.stride(axis), self.side(axis));
        if self.coord(site, axis) + 1 < side {
            Some(site + stride)
        } else if self.periodic {
            Some(site - (side - 1) * stride)
        } else {
            None
        }
    }

    /// The neighbour one step down along `axis` (as `up`).
    pub fn down(&self, site: u64, axis: usize) -> Option<u64> {
        let (stride, side) = (self.stride(axis), self.side(axis));
        if self.coord(site, axis) > 0 {
            Some(site - stride)
        } else if self.periodic {
            Some(site + (side - 1) * stride)
        } else {
            None
        }
    }
}

/// One rank's slab: planes `first .. first + thickness` of axis 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slab {
    pub lattice: Lattice,
    pub rank: usize,
    pub ranks: usize,
    /// First plane (x0) of the slab.
    pub first: u64,
    /// Planes in the slab (at least 1).
    pub thickness: u64,
}

impl Slab {
    /// Rank `rank`'s slab of `ranks`; every rank needs at least one plane.
    pub fn new(lattice: Lattice, ranks: usize, rank: usize) -> Result<Slab, String> {
        if ranks as u64 > lattice.length {
            let side = if lattice.length == lattice.l {
                "l"
            } else {
                "length"
            };
            return Err(format!(
                "{side} = {} gives fewer planes than the {ranks} ranks: every rank needs a plane of the lattice",
                lattice.length
            ));
        }
        let at = |r: usize| (lattice.length as u128 * r as u128 / ranks as u128) as u64;
        Ok(Slab {
            lattice,
            rank,
            ranks,
            first: at(rank),
            thickness: at(rank + 1) - at(rank),
        })
    }

    /// Sites in the slab.
    pub fn sites(&self) -> usize {
        (self.thickness * self.lattice.plane()) as usize
    }

    /// Sites of one plane (of a ghost layer too).
    pub fn plane(&self) -> usize {
        self.lattice.plane() as usize
    }

    /// Global index of local site 0.
    pub fn offset(&self) -> u64 {
        self.first * self.lattice.plane()
    }

    pub fn global(&self, local: usize) -> u64 {
        self.offset() + local as u64
    }

    /// The local index of a global site, if it lies in this slab.
    pub fn local(&self, global: u64) -> Option<usize> {
        let local = global.checked_sub(self.offset())?;
        (local < self.sites() as u64).then_some(local as usize)
    }

    /// The rank whose slab lies above this one's (wrapping from the last to the first).
    pub fn above(&self) -> usize {
        (self.rank + 1) % self.ranks
    }

    /// The rank whose slab lies below this one's (wrapping from the first to the last).
    pub fn below(&self) -> usize {
        (self.rank + self.ranks - 1) % self.ranks
    }

    pub fn is_bottom(&self) -> bool {
        self.rank == 0
    }

    pub fn is_top(&self) -> bool {
        self.rank + 1 == self.ranks
    }

    /// Whether the bond up along `axis` from local site `local` joins two sites of this slab
    /// without wrapping (the bonds the local labelling unites; the others are cut bonds).
    pub fn bond_inside(&self, local: usize, axis: usize) -> bool {
        let l = self.lattice.l as usize;
        if axis == 0 {
            (local / self.plane()) as u64 + 1 < self.thickness
        } else {
            local / self.lattice.stride(axis) as usize % l + 1 < l
        }
    }

    /// The neighbours of a local site along `axis` (down, up) as global indices: the way to
    /// reach sites of the ghost layers (see `halo`) and the wrap.
    pub fn neighbours(&self, local: usize, axis: usize) -> (Option<u64>, Option<u64>) {
        let site = self.global(local);
        (self.lattice.down(site, axis), self.lattice.up(site, axis))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slabs_cover_the_planes_in_order_and_take_the_remainder_first() {
        let lattice = Lattice::new(3, 10, true).unwrap();
        let slabs: Vec<Slab> = (0..4).map(|r| Slab::new(lattice, 4, r).unwrap()).collect();
        assert_eq!(
            slabs.iter().map(|s| s.thickness).collect::<Vec<_>>(),
            [2, 3, 2, 3]
        );
        let mut next = 0;
        for s in &slabs {
            assert_eq!(s.offset(), next);
            next += s.sites() as u64;
        }
        assert_eq!(next, lattice.sites());
        assert_eq!(slabs[1].local(slabs[1].global(7)), Some(7));
        assert_eq!(slabs[1].local(0), None);
        assert!(Slab::new(lattice, 11, 0).is_err());
    }

    #[test]
    fn neighbours_wrap_on_a_torus_and_end_on_an_open_lattice() {
        let torus = Lattice::new(2, 4, true).unwrap();
        assert_eq!(torus.up(3, 1), Some(0));
        assert_eq!(torus.up(13, 0), Some(1));
        assert_eq!(torus.down(1, 0), Some(13));
        let open = Lattice {
            periodic: false,
            ..torus
        };
        assert_eq!(open.up(3, 1), None);
        assert_eq!(open.down(1, 0), None);
        assert_eq!(open.up(5, 0), Some(9));
        assert!(Lattice::new(2, 1, true).is_err());
        assert!(Lattice::new(4, 4, true).is_err());
    }

    #[test]
    fn a_strip_wraps_axis_0_at_its_length_and_slabs_cut_its_planes() {
        // 6 x 4: site (x0, x1) is 4 x0 + x1.
        let strip = Lattice::with_length(2, 6, 4, true).unwrap();
        assert_eq!((strip.sites(), strip.plane()), (24, 4));
        assert_eq!(strip.coord(22, 0), 5);
        assert_eq!(strip.coord(22, 1), 2);
        assert_eq!(strip.up(22, 0), Some(2));
        assert_eq!(strip.down(2, 0), Some(22));
        assert_eq!(strip.up(7, 1), Some(4));
        let slabs: Vec<Slab> = (0..4).map(|r| Slab::new(strip, 4, r).unwrap()).collect();
        assert_eq!(
            slabs.iter().map(|s| s.thickness).collect::<Vec<_>>(),
            [1, 2, 1, 2]
        );
        assert!(Slab::new(strip, 5, 0).is_ok());
        assert!(Slab::new(strip, 7, 0).is_err());
        let bar = Lattice::with_length(3, 3, 5, false).unwrap();
        assert_eq!(
            (bar.sites(), bar.up(74, 0), bar.up(70, 0)),
            (75, None, None)
        );
        assert_eq!(bar.up(49, 0), Some(74));
        assert!(Lattice::with_length(2, 1, 4, true).is_err());
        assert!(Lattice::with_length(3, 1 << 40, 1 << 5, true).is_err());
        assert_eq!(strip.sides(), "L_0 = 6, L = 4");
    }
}
