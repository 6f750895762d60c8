//! The boundary graph of one slab: how its local clusters meet the faces through which the
//! slabs and the periodic wraps join them (`merge` joins the slabs' parts).
//!
//! After the local labelling (no bond that wraps or leaves the slab), every local cluster that
//! touches a face of the slab (its bottom or top plane, or a side x_a = 0 or L-1 of axis a >= 1)
//! becomes a node, named by its root's global index (the smallest in it), with the ends of an
//! open lattice it touches. The bonds that wrap a side axis stay inside the slab and are
//! listed here as node pairs; the bonds across the top plane (to the slab above, or across
//! the wrap of axis 0) are kept as the top plane's nodes and up-bonds, the bottom plane's
//! nodes being where the slab below lands.

use super::Slab;
use std::ops::Range;

/// A face site's root when the site is vacant.
pub const NO_ROOT: u32 = u32::MAX;

/// The face sites of a slab (local indices), in groups where partners sit at the same
/// position: the bottom plane, the top plane, then for each axis a >= 1 its low side (x_a = 0)
/// and its high side (x_a = L-1). A site may sit in several groups.
pub struct Faces {
    pub sites: Vec<u32>,
    plane: usize,
    side: usize,
}

impl Faces {
    pub fn new(slab: &Slab) -> Faces {
        let lattice = slab.lattice;
        let (plane, n) = (slab.plane(), slab.sites());
        let side = n / lattice.l as usize;
        let mut sites: Vec<u32> = (0..plane).chain(n - plane..n).map(|i| i as u32).collect();
        for axis in 1..lattice.dim {
            let stride = lattice.stride(axis) as usize;
            let low = |m: usize| (m / stride * stride * lattice.l as usize + m % stride) as u32;
            let high = (lattice.l as usize - 1) * stride;
            sites.extend((0..side).map(low));
            sites.extend((0..side).map(|m| low(m) + high as u32));
        }
        Faces { sites, plane, side }
    }

    fn bottom(&self) -> Range<usize> {
        0..self.plane
    }

    fn top(&self) -> Range<usize> {
        self.plane..2 * self.plane
    }

    /// The low side of axis `axis` >= 1; its high side follows it.
    fn low(&self, axis: usize) -> Range<usize> {
        let start = 2 * self.plane + 2 * (axis - 1) * self.side;
        start..start + self.side
    }
}

/// Flag of a node touching the low (x_a = 0) end of an open lattice along axis a; the high
/// end's flag is the next bit.
pub fn touches_low(axis: usize) -> u8 {
    1 << (2 * axis)
}

/// What a rank contributes: its nodes (sorted local roots, with the ends of an open lattice
/// they touch), the bonds that wrap a side axis inside the slab, and the nodes of its bottom
/// and top planes (with whether each top site bonds to the plane above).
pub struct SlabBoundary {
    pub roots: Vec<u32>,
    pub touches: Vec<u8>,
    /// Side wraps as (from, to, axis): node `to` at node `from`'s position plus one L along
    /// `axis` (>= 1), as indices into `roots`.
    pub wraps: Vec<(u32, u32, usize)>,
    /// Per site of the bottom plane, its node (an index into `roots`), or `NO_NODE`.
    pub bottom: Vec<u32>,
    pub top: Vec<u32>,
    /// Per site of the top plane, whether it bonds to the plane above (the slab above's
    /// bottom; the lattice's bottom plane, across the wrap, for the top slab of a periodic
    /// lattice; never for that of an open one).
    pub up: Vec<bool>,
}

/// A face site's node when the site is vacant.
pub const NO_NODE: u32 = u32::MAX;

/// The rank's part of the boundary graph from the roots and masks of its face sites, as
/// `Faces` orders them.
pub fn slab_boundary(slab: &Slab, faces: &Faces, roots: &[u32], masks: &[u8]) -> SlabBoundary {
    let lattice = slab.lattice;
    let mut touching: Vec<(u32, u8)> = Vec::with_capacity(faces.sites.len());
    let mut touch = |slot: usize, flag: u8| {
        if roots[slot] != NO_ROOT {
            touching.push((roots[slot], if lattice.periodic { 0 } else { flag }));
        }
    };
    for slot in faces.bottom() {
        touch(slot, if slab.is_bottom() { touches_low(0) } else { 0 });
    }
    for slot in faces.top() {
        touch(
            slot,
            if slab.is_top() {
                touches_low(0) << 1
            } else {
                0
            },
        );
    }
    for axis in 1..lattice.dim {
        for slot in faces.low(axis) {
            touch(slot, touches_low(axis));
            touch(slot + faces.side, touches_low(axis) << 1);
        }
    }
    touching.sort_unstable();
    let (mut nodes, mut touches) = (Vec::new(), Vec::new());
    for (root, flag) in touching {
        if nodes.last() == Some(&root) {
            *touches.last_mut().unwrap() |= flag;
        } else {
            nodes.push(root);
            touches.push(flag);
        }
    }
    let node = |slot: usize| match roots[slot] {
        NO_ROOT => NO_NODE,
        r => nodes
            .binary_search(&r)
            .expect("a face site's root is a node") as u32,
    };
    let mut wraps = Vec::new();
    if lattice.periodic {
        for axis in 1..lattice.dim {
            for slot in faces.low(axis) {
                let high = slot + faces.side;
                let (from, to) = (node(high), node(slot));
                if masks[high] & (1 << axis) != 0 && from != NO_NODE && to != NO_NODE {
                    wraps.push((from, to, axis));
                }
            }
        }
    }
    wraps.sort_unstable();
    wraps.dedup();
    let bonds_up = lattice.periodic || !slab.is_top();
    SlabBoundary {
        bottom: faces.bottom().map(node).collect(),
        top: faces.top().map(node).collect(),
        up: faces
            .top()
            .map(|slot| bonds_up && masks[slot] & 1 != 0)
            .collect(),
        roots: nodes,
        touches,
        wraps,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lattice::Lattice;

    #[test]
    fn faces_pair_each_low_site_with_its_high_partner() {
        let slab = Slab::new(Lattice::new(3, 4, true).unwrap(), 2, 1).unwrap();
        let faces = Faces::new(&slab);
        let l = 4usize;
        for axis in 1..3 {
            let stride = slab.lattice.stride(axis) as usize;
            for slot in faces.low(axis) {
                let (lo, hi) = (
                    faces.sites[slot] as usize,
                    faces.sites[slot + faces.side] as usize,
                );
                assert_eq!(lo / stride % l, 0);
                assert_eq!(hi, lo + (l - 1) * stride);
            }
        }
        assert_eq!(faces.sites.len(), 2 * 16 + 2 * 2 * 8);
    }
}
