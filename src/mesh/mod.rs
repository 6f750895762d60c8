//! Unstructured simplex meshes: tetrahedra in 3D, triangles in 2D (spec: mesh.md). The mesh
//! is held as a structure of arrays (coordinates per axis, a flat corner list per cell, a
//! fixed flag per node); readers, the box generator, per-cell geometry and quality, the
//! node-to-cell CSR, the geometric partitioner and the smoothers build on it. A lower layer:
//! it knows `comm` (for the distributed smoothers) and nothing of workloads or decks.

pub mod adjacency;
pub mod boundary;
pub mod colour;
pub mod corner;
pub mod distributed;
pub mod exact;
pub mod generate;
pub mod geometry;
pub mod hilbert;
pub mod partition;
pub mod patch;
pub mod quality;
pub mod ranks;
pub mod readers;
pub mod smooth;

use rayon::prelude::*;

/// The six orders of the three axes, in lexicographic order (the Kuhn split's six tets and
/// the Hilbert index's permutation states both number them this way).
pub(crate) const AXIS_ORDERS: [[usize; 3]; 6] = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 2, 0],
    [2, 0, 1],
    [2, 1, 0],
];

/// A node or cell index (meshes up to 2^32 - 1 nodes and cells).
pub type Index = u32;

/// A simplex mesh. Cells list their corners (`corners()` per cell, 4 for tets, 3 for
/// triangles) positively oriented: every cell of a valid mesh has a positive signed volume.
#[derive(Debug, Clone, PartialEq)]
pub struct Mesh {
    /// 3 (tetrahedra) or 2 (triangles, z = 0).
    pub dim: usize,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub z: Vec<f64>,
    /// Corners of cell c at `cells[c * corners .. (c + 1) * corners]`.
    pub cells: Vec<Index>,
    /// Nodes the smoothers never move (the boundary, unless freed).
    pub fixed: Vec<bool>,
}

impl Mesh {
    pub fn corners(&self) -> usize {
        self.dim + 1
    }

    pub fn num_nodes(&self) -> usize {
        self.x.len()
    }

    pub fn num_cells(&self) -> usize {
        self.cells.len() / self.corners()
    }

    /// The corners of cell `c`.
    pub fn cell(&self, c: usize) -> &[Index] {
        let k = self.corners();
        &self.cells[c * k..(c + 1) * k]
    }

    pub fn point(&self, i: usize) -> [f64; 3] {
        [self.x[i], self.y[i], self.z[i]]
    }

    /// The corner positions of cell `c` (unused corners of a triangle stay zero).
    pub fn cell_points(&self, c: usize) -> [[f64; 3]; 4] {
        let mut p = [[0.0; 3]; 4];
        for (k, &n) in self.cell(c).iter().enumerate() {
            p[k] = self.point(n as usize);
        }
        p
    }

    /// Mean edge length (the scale for tolerances and test bounds): sums over fixed blocks
    /// of cells in parallel, added in block order, so the same for any thread count.
    pub fn mean_edge_length(&self) -> f64 {
        const BLOCK: usize = 1 << 14;
        let k = self.corners();
        let cells = self.num_cells();
        let block_sum = |b: usize| {
            let mut sum = 0.0;
            for c in b * BLOCK..((b + 1) * BLOCK).min(cells) {
                let p = self.cell_points(c);
                for a in 0..k {
                    for q in a + 1..k {
                        sum += geometry::dist(&p[a], &p[q]);
                    }
                }
            }
            sum
        };
        let sums: Vec<f64> = (0..cells.div_ceil(BLOCK))
            .into_par_iter()
            .map(block_sum)
            .collect();
        let count = cells * k * (k - 1) / 2;
        sums.iter().sum::<f64>() / count.max(1) as f64
    }
}
