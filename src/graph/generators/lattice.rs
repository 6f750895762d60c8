//! Regular 2D (L1 x L2) and 3D (L1 x L2 x L3) lattices, periodic (torus) or open.
//!
//! Site (x, y, z) has id x + L1 * (y + L2 * z): row-major with x fastest, the lattice
//! workloads' site order. The edges are listed site by site, each site's +x, +y (and +z)
//! edges in that order; an open lattice has no edge leaving its upper face in a direction.
//! Edge e is a pure function of e: periodic lattices index it directly (site e / d,
//! direction e mod d); open ones find its site by bisection on the number of edges before a
//! site, which has a closed form. Periodic sides are at least 3 (a side of 2 would join two
//! sites twice, a side of 1 make loops); open sides at least 2. No randomness: the seed is
//! taken only for a constructor like the other generators'.

use super::super::{block_range, DeviceEdges, Edge, EdgeSource};
use rayon::prelude::*;

/// Edges one parallel task produces after locating its first edge.
const PIECE: usize = 1 << 14;

/// Most sites of a lattice (the 48-bit vertex id limit).
const MAX_SITES: u64 = 1 << 48;

/// Checks lattice sides: 2 or 3 of them, each at least 3 if `periodic` (else 2), at most
/// 2^48 sites in all.
pub fn check(dims: &[u64], periodic: bool) -> Result<(), String> {
    if !(2..=3).contains(&dims.len()) {
        return Err(format!(
            "dims = {dims:?} must give 2 or 3 lattice sides, got {}",
            dims.len()
        ));
    }
    let least = if periodic { 3 } else { 2 };
    if dims.iter().any(|&side| side < least) {
        return Err(format!(
            "dims = {dims:?}: every side must be at least {least} ({})",
            if periodic {
                "a periodic side of 2 would join two sites twice"
            } else {
                "a side of 1 adds no dimension"
            }
        ));
    }
    let sites = dims
        .iter()
        .try_fold(1u64, |acc, &side| acc.checked_mul(side));
    match sites {
        Some(n) if n <= MAX_SITES => Ok(()),
        _ => Err(format!("dims = {dims:?} give more than 2^48 sites")),
    }
}

pub struct Lattice {
    sides: [u64; 3],
    dim: usize,
    periodic: bool,
    n: u64,
    m: u64,
    local: std::ops::Range<u64>,
}

impl Lattice {
    /// A lattice with sides `dims` (2 or 3 of them; see `check`), periodic or open.
    pub fn new(dims: Vec<u64>, periodic: bool, _seed: u64, ranks: usize, rank: usize) -> Self {
        let mut sides = [1u64; 3];
        sides[..dims.len()].copy_from_slice(&dims);
        let mut lattice = Lattice {
            sides,
            dim: dims.len(),
            periodic,
            n: dims.iter().product(),
            m: 0,
            local: 0..0,
        };
        lattice.m = lattice.edges_before(lattice.n);
        lattice.local = block_range(lattice.m, ranks, rank);
        lattice
    }

    /// Number of edge directions a site has (2 or 3).
    pub(super) fn dim(&self) -> usize {
        self.dim
    }

    /// Edge number `e` of the global list.
    pub(super) fn edge(&self, e: u64) -> Edge {
        let (site, dir) = self.locate(e);
        (site, self.step(site, dir))
    }

    /// True when sites `u` and `v` are joined by a lattice edge.
    pub(super) fn adjacent(&self, u: u64, v: u64) -> bool {
        let mut differing = 0;
        for dir in 0..self.dim {
            let (a, b) = (self.coord(u, dir), self.coord(v, dir));
            let gap = a.abs_diff(b);
            if gap == 0 {
                continue;
            }
            if gap != 1 && !(self.periodic && gap == self.sides[dir] - 1) {
                return false;
            }
            differing += 1;
        }
        differing == 1
    }

    /// The lattice as kernels/generators.cu `lattice_edge` takes it: periodic, dimensions,
    /// three sides (1 past the last).
    pub(super) fn device_params(&self) -> [u64; 5] {
        let s = &self.sides;
        [self.periodic as u64, self.dim as u64, s[0], s[1], s[2]]
    }

    fn stride(&self, dir: usize) -> u64 {
        self.sides[..dir].iter().product()
    }

    /// The checkerboard colour of a site (its coordinates' sum mod 2), proper on a periodic
    /// lattice of even sides.
    pub(super) fn colour(&self, site: u64) -> u64 {
        (0..self.dim).map(|dir| self.coord(site, dir)).sum::<u64>() % 2
    }

    fn coord(&self, site: u64, dir: usize) -> u64 {
        site / self.stride(dir) % self.sides[dir]
    }

    fn has_edge(&self, site: u64, dir: usize) -> bool {
        self.periodic || self.coord(site, dir) + 1 < self.sides[dir]
    }

    /// The site one step from `site` in direction `dir` (wrapping around).
    fn step(&self, site: u64, dir: usize) -> u64 {
        let (x, stride) = (self.coord(site, dir), self.stride(dir));
        if x + 1 == self.sides[dir] {
            site - x * stride
        } else {
            site + stride
        }
    }

    /// Number of edges of the sites before `site`: per direction, the sites before it that
    /// are not on the upper face (all of them if periodic).
    fn edges_before(&self, site: u64) -> u64 {
        if self.periodic {
            return site * self.dim as u64;
        }
        (0..self.dim)
            .map(|dir| {
                let stride = self.stride(dir);
                let block = stride * self.sides[dir];
                site / block * (block - stride) + (site % block).min(block - stride)
            })
            .sum()
    }

    /// The site and direction of edge `e`.
    fn locate(&self, e: u64) -> (u64, usize) {
        if self.periodic {
            return (e / self.dim as u64, (e % self.dim as u64) as usize);
        }
        // The last site with at most e edges before it owns edge e.
        let (mut lo, mut hi) = (0, self.n);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.edges_before(mid) <= e {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let skip = (e - self.edges_before(lo)) as usize;
        let dir = (0..self.dim)
            .filter(|&dir| self.has_edge(lo, dir))
            .nth(skip)
            .expect("edge index below the edge count");
        (lo, dir)
    }

    /// Edges `first ..` into `piece`, walking from the first one's site.
    fn fill_from(&self, first: u64, piece: &mut [Edge]) {
        let (mut site, mut dir) = self.locate(first);
        for slot in piece {
            *slot = (site, self.step(site, dir));
            loop {
                dir += 1;
                if dir == self.dim {
                    (site, dir) = (site + 1, 0);
                }
                if self.has_edge(site, dir) {
                    break;
                }
            }
        }
    }
}

impl EdgeSource for Lattice {
    fn num_vertices(&self) -> u64 {
        self.n
    }
    fn num_edges(&self) -> u64 {
        self.m
    }
    fn local_len(&self) -> u64 {
        self.local.end - self.local.start
    }
    fn local_chunk(&self, start: u64, len: u64, out: &mut Vec<Edge>) {
        let first = self.local.start + start;
        let at = out.len();
        out.resize(at + len as usize, (0, 0));
        out[at..]
            .par_chunks_mut(PIECE)
            .enumerate()
            .for_each(|(i, piece)| self.fill_from(first + (i * PIECE) as u64, piece));
    }
    /// kernels/generators.cu `lattice_edge`.
    fn device_edges(&self) -> Option<DeviceEdges> {
        Some(DeviceEdges {
            kernel: "lattice",
            params: self.device_params().to_vec(),
            first_edge: self.local.start,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{degrees, global_edges};
    use super::*;

    fn edges(dims: &[u64], periodic: bool) -> (u64, Vec<Edge>) {
        let list =
            global_edges(|ranks, rank| Lattice::new(dims.to_vec(), periodic, 0, ranks, rank));
        (dims.iter().product(), list)
    }

    /// Every edge joins lattice neighbours, and no pair appears twice.
    fn assert_simple(dims: &[u64], periodic: bool, list: &[Edge]) {
        let g = Lattice::new(dims.to_vec(), periodic, 0, 1, 0);
        let mut pairs: Vec<Edge> = list.iter().map(|&(u, v)| (u.min(v), u.max(v))).collect();
        assert!(list.iter().all(|&(u, v)| g.adjacent(u, v)));
        pairs.sort_unstable();
        pairs.dedup();
        assert_eq!(pairs.len(), list.len(), "{dims:?} has a repeated edge");
    }

    #[test]
    fn periodic_lattices_are_regular() {
        for dims in [&[5u64, 4][..], &[3, 3], &[4, 3, 5]] {
            let (n, list) = edges(dims, true);
            assert_eq!(list.len() as u64, n * dims.len() as u64);
            let want = 2 * dims.len() as u64;
            assert!(degrees(n, &list).iter().all(|&d| d == want), "{dims:?}");
            assert_simple(dims, true, &list);
        }
    }

    #[test]
    fn open_lattices_have_boundary_degrees() {
        let (n, list) = edges(&[7, 5], false);
        let mut count = [0usize; 5];
        degrees(n, &list)
            .iter()
            .for_each(|&d| count[d as usize] += 1);
        assert_eq!(count, [0, 0, 4, 2 * 5 + 2 * 3, 5 * 3]);
        assert_simple(&[7, 5], false, &list);
        let (n, list) = edges(&[4, 2, 3], false);
        assert_eq!(list.len(), 3 * 2 * 3 + 4 * 3 + 4 * 2 * 2);
        let mut count = [0usize; 7];
        degrees(n, &list)
            .iter()
            .for_each(|&d| count[d as usize] += 1);
        // A site's degree: per direction 1 on a face, 2 inside.
        assert_eq!(count, [0, 0, 0, 8, 8 + 4, 4, 0]);
        assert_simple(&[4, 2, 3], false, &list);
    }

    #[test]
    fn site_order_is_x_fastest_with_each_sites_edges_in_turn() {
        let (_, list) = edges(&[3, 3], true);
        assert_eq!(&list[..4], &[(0, 1), (0, 3), (1, 2), (1, 4)]);
        assert_eq!(list[5], (2, 5));
        assert_eq!(list[17], (8, 2));
        let (_, list) = edges(&[3, 2, 2], false);
        assert_eq!(&list[..4], &[(0, 1), (0, 3), (0, 6), (1, 2)]);
    }

    #[test]
    fn device_params_follow_the_kernels_layout() {
        let open = Lattice::new(vec![7, 5], false, 0, 2, 1);
        let d = open.device_edges().unwrap();
        assert_eq!((d.kernel, d.first_edge), ("lattice", open.m / 2));
        assert_eq!(d.params, [0, 2, 7, 5, 1]);
        let torus = Lattice::new(vec![4, 3, 5], true, 0, 1, 0);
        assert_eq!(torus.device_params(), [1, 3, 4, 3, 5]);
    }

    #[test]
    fn check_names_the_rule() {
        assert!(check(&[3, 3], true).is_ok());
        assert!(check(&[2, 2, 2], false).is_ok());
        assert!(check(&[2, 4], true).unwrap_err().contains("at least 3"));
        assert!(check(&[1, 4], false).unwrap_err().contains("at least 2"));
        assert!(check(&[4], false).unwrap_err().contains("2 or 3"));
        assert!(check(&[1 << 30, 1 << 30], false)
            .unwrap_err()
            .contains("2^48"));
    }
}
