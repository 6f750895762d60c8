//! The boundary graph: how the local clusters of all slabs join into clusters of the whole
//! lattice, and which of them wrap or span it.
//!
//! After the local labelling (no bond that wraps or leaves the slab), every local cluster that
//! touches a face of the slab (its bottom or top plane, or a side x_a = 0 or L-1 of axis a >= 1)
//! becomes a node, named by its root's global index (the smallest in it); every open bond that
//! was left out (a cut bond: to the slab above, or the periodic wrap of any axis) becomes an
//! edge, carrying the winding it adds: +1 along the axis it wraps, else 0. Each rank finds the
//! roots across its top plane with one shift (`halo::from_above`), rank 0 gathers the graph
//! (nodes arrive sorted, slabs being ranges of the global order) and solves it with a
//! union-find that tracks displacements in units of L (Machta et al.; Newman & Ziff 2001): a
//! node's offset is its position relative to its root in the unwrapped lattice, and a bond
//! that closes a cycle whose offsets disagree by a non-zero vector w closes a loop winding w.
//! So wrapping is found exactly, whatever the winding (a (1, 2) spiral included): a cluster
//! wraps axis a iff a cycle of it winds along a, and the fundamental cycles of the union-find's
//! forest generate all cycles. Open lattices span axis a where a cluster touches both of its
//! end faces. Roots are always the smallest node, so each cluster's label is its smallest
//! site. Rank 0 sends every rank the labels of its nodes.

use super::{halo, Slab};
use crate::comm::World;
use crate::error::Result;
use std::ops::Range;

/// A face site's root when the site is vacant.
pub const NO_ROOT: u32 = u32::MAX;

/// A node's id (a global root index) when there is none.
const NO_ID: u64 = u64::MAX;

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
fn touches_low(axis: usize) -> u8 {
    1 << (2 * axis)
}

/// What a rank contributes: its nodes (sorted local roots, with the ends of an open lattice
/// they touch) and its cut bonds as (from, to, winding axis + 1 or 0) in global ids.
pub struct SlabBoundary {
    pub roots: Vec<u32>,
    touches: Vec<u8>,
    edges: Vec<u64>,
}

/// The rank's part of the boundary graph from the roots and masks of its face sites, as
/// `Faces` orders them (collective: one shift of the bottom plane's roots).
pub fn slab_boundary(
    world: &World,
    slab: &Slab,
    faces: &Faces,
    roots: &[u32],
    masks: &[u8],
) -> SlabBoundary {
    let lattice = slab.lattice;
    let id = |slot: usize| match roots[slot] {
        NO_ROOT => NO_ID,
        r => slab.global(r as usize),
    };
    let bottom: Vec<u64> = faces.bottom().map(id).collect();
    let above = halo::from_above(world, slab, &bottom);
    let mut edges = Vec::new();
    let mut edge = |from: u64, to: u64, winding: u64| {
        if from != NO_ID && to != NO_ID {
            edges.extend([from, to, winding]);
        }
    };
    if lattice.periodic || !slab.is_top() {
        let winding = if slab.is_top() { 1 } else { 0 };
        for (j, slot) in faces.top().enumerate() {
            if masks[slot] & 1 != 0 {
                edge(id(slot), above[j], winding);
            }
        }
    }
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
        let low = faces.low(axis);
        for slot in low.clone() {
            let high = slot + faces.side;
            touch(slot, touches_low(axis));
            touch(high, touches_low(axis) << 1);
            if lattice.periodic && masks[high] & (1 << axis) != 0 {
                edge(id(high), id(slot), 1 + axis as u64);
            }
        }
    }
    let mut triples: Vec<[u64; 3]> = edges.chunks(3).map(|e| [e[0], e[1], e[2]]).collect();
    triples.sort_unstable();
    triples.dedup();
    touching.sort_unstable();
    let (mut roots, mut touches) = (Vec::new(), Vec::new());
    for (root, flag) in touching {
        if roots.last() == Some(&root) {
            *touches.last_mut().unwrap() |= flag;
        } else {
            roots.push(root);
            touches.push(flag);
        }
    }
    SlabBoundary {
        roots,
        touches,
        edges: triples.concat(),
    }
}

/// The solved boundary graph, on rank 0: every rank's nodes in rank order.
pub struct Solution {
    /// Each node's cluster, as the index of its root node.
    pub cluster: Vec<u32>,
    /// Global id of each node (its local root's index).
    pub ids: Vec<u64>,
    /// Per root node: bit a set when its cluster wraps (periodic) or spans (open) axis a.
    pub percolates: Vec<u8>,
}

/// Gather the boundary graph on rank 0, solve it there, and return this rank's node labels
/// in the order of `part.roots` (with the solution on rank 0). Collective.
pub fn solve(
    world: &World,
    slab: &Slab,
    part: &SlabBoundary,
) -> Result<(Vec<u64>, Option<Solution>)> {
    let counts: Vec<usize> = world
        .allgather(part.roots.len() as u64)
        .into_iter()
        .map(|c| c as usize)
        .collect();
    let nodes: Vec<u64> = part
        .roots
        .iter()
        .zip(&part.touches)
        .flat_map(|(&r, &t)| [slab.global(r as usize), u64::from(t)])
        .collect();
    let nodes = world.gatherv_root(&nodes)?;
    let edges = world.gatherv_root(&part.edges)?;
    let solution = world.is_root().then(|| {
        let ids: Vec<u64> = nodes.iter().step_by(2).copied().collect();
        let touches: Vec<u8> = nodes.iter().skip(1).step_by(2).map(|&t| t as u8).collect();
        solve_graph(slab, ids, touches, &edges)
    });
    let (send, send_counts) = match &solution {
        Some(s) => (
            s.cluster.iter().map(|&c| s.ids[c as usize]).collect(),
            counts,
        ),
        None => (Vec::new(), vec![0; world.size()]),
    };
    let labels = world.alltoallv(&send, &send_counts)?;
    Ok((labels, solution))
}

/// Union-find over the nodes with each node's offset from its parent, in units of L.
struct Windings {
    parent: Vec<u32>,
    offset: Vec<[i64; 3]>,
    touches: Vec<u8>,
    wraps: Vec<u8>,
}

fn add(a: [i64; 3], b: [i64; 3]) -> [i64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn sub(a: [i64; 3], b: [i64; 3]) -> [i64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

impl Windings {
    /// The root of `x` and x's offset from it; compresses the path.
    fn find(&mut self, x: u32) -> (u32, [i64; 3]) {
        let mut path = Vec::new();
        let mut root = x;
        while self.parent[root as usize] != root {
            path.push(root);
            root = self.parent[root as usize];
        }
        let mut to_root = [0; 3];
        for &v in path.iter().rev() {
            to_root = add(self.offset[v as usize], to_root);
            self.offset[v as usize] = to_root;
            self.parent[v as usize] = root;
        }
        let offset = if x == root {
            [0; 3]
        } else {
            self.offset[x as usize]
        };
        (root, offset)
    }

    /// A bond with b at a's position plus `w`.
    fn unite(&mut self, a: u32, b: u32, w: [i64; 3]) {
        let (ra, oa) = self.find(a);
        let (rb, ob) = self.find(b);
        let rb_from_ra = sub(add(oa, w), ob);
        if ra == rb {
            for (axis, &c) in rb_from_ra.iter().enumerate() {
                if c != 0 {
                    self.wraps[ra as usize] |= 1 << axis;
                }
            }
            return;
        }
        let (lo, hi, offset) = if ra < rb {
            (ra, rb, rb_from_ra)
        } else {
            (rb, ra, sub([0; 3], rb_from_ra))
        };
        self.parent[hi as usize] = lo;
        self.offset[hi as usize] = offset;
        self.touches[lo as usize] |= self.touches[hi as usize];
        self.wraps[lo as usize] |= self.wraps[hi as usize];
    }
}

/// Solve the gathered graph: `ids` sorted (slabs are ranges of the global order), `edges` as
/// (from, to, winding) triples.
fn solve_graph(slab: &Slab, ids: Vec<u64>, touches: Vec<u8>, edges: &[u64]) -> Solution {
    let n = ids.len();
    let mut w = Windings {
        parent: (0..n as u32).collect(),
        offset: vec![[0; 3]; n],
        touches,
        wraps: vec![0; n],
    };
    let node = |id: u64| ids.binary_search(&id).expect("a cut bond's end is a node") as u32;
    for e in edges.chunks(3) {
        let mut winding = [0; 3];
        if e[2] > 0 {
            winding[e[2] as usize - 1] = 1;
        }
        w.unite(node(e[0]), node(e[1]), winding);
    }
    let cluster: Vec<u32> = (0..n as u32).map(|x| w.find(x).0).collect();
    let lattice = slab.lattice;
    let percolates = (0..n)
        .map(|x| {
            (0..lattice.dim).fold(0u8, |bits, axis| {
                let low = touches_low(axis);
                let spans = w.touches[x] & (low | low << 1) == low | low << 1;
                let wraps = w.wraps[x] & (1 << axis) != 0;
                bits | (u8::from(if lattice.periodic { wraps } else { spans }) << axis)
            })
        })
        .collect();
    Solution {
        cluster,
        ids,
        percolates,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lattice::Lattice;

    fn windings(n: usize) -> Windings {
        Windings {
            parent: (0..n as u32).collect(),
            offset: vec![[0; 3]; n],
            touches: vec![0; n],
            wraps: vec![0; n],
        }
    }

    #[test]
    fn a_loop_wraps_only_the_axes_its_winding_moves() {
        // Four nodes in a ring with windings (1, 0) and (0, 2) on the way round: wraps both.
        let mut w = windings(4);
        w.unite(3, 2, [0, 1, 0]);
        w.unite(2, 1, [1, 0, 0]);
        w.unite(1, 0, [0, 1, 0]);
        assert_eq!(w.wraps[0], 0);
        w.unite(0, 3, [-1, -2, 0]);
        assert_eq!(w.wraps[0], 0, "the loop closes without winding");
        let mut w = windings(3);
        w.unite(2, 1, [0, 1, 0]);
        w.unite(1, 0, [0, 1, 0]);
        w.unite(0, 2, [0, 0, 0]);
        assert_eq!(w.wraps[0], 0b10, "winding (0, 2) wraps axis 1 only");
        assert!((0..3).all(|x| w.find(x).0 == 0));
    }

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
