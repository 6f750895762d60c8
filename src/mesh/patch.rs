//! The part of a mesh one rank smooths: every cell that touches a node it owns (so its owned
//! nodes see all their cells), the nodes of those cells (owned ones and one ghost layer), and
//! their local numbering. A single rank's patch is the whole mesh. What crosses patches goes
//! through an `Exchange`: ghost positions from their owners, and global reductions that do
//! not depend on the rank count.

use super::adjacency::{self, Csr};
use super::exact::ExactSum;
use super::quality::Summary;
use super::{Index, Mesh};
use rayon::prelude::*;
use std::ops::Range;

pub struct Patch {
    /// The patch's own mesh, local numbering (cells keep their corner order).
    pub mesh: Mesh,
    /// Global id of each local node.
    pub global: Vec<u64>,
    /// The nodes this rank owns (and moves, unless fixed).
    pub owned: Vec<bool>,
    /// The cells this rank counts in global sums (each cell counted by exactly one rank).
    pub counted: Vec<bool>,
    /// Global id (position in the whole mesh) of each local cell.
    pub cell_global: Vec<u64>,
    pub n2c: Csr,
    pub graph: Csr,
}

impl Patch {
    /// The whole mesh as one rank's patch.
    pub fn whole(mesh: Mesh) -> Patch {
        let n = mesh.num_nodes();
        let cells = mesh.num_cells();
        Patch::new(
            mesh,
            (0..n as u64).collect(),
            vec![true; n],
            (vec![true; cells], (0..cells as u64).collect()),
        )
    }

    /// `whole`, with the mesh's node-to-cell CSR and node graph (rows ascending) at hand.
    pub fn whole_with(mesh: Mesh, n2c: Csr, graph: Csr) -> Patch {
        let (n, cells) = (mesh.num_nodes(), mesh.num_cells());
        Patch {
            mesh,
            global: (0..n as u64).collect(),
            owned: vec![true; n],
            counted: vec![true; cells],
            cell_global: (0..cells as u64).collect(),
            n2c,
            graph,
        }
    }

    /// A patch from its mesh, its nodes' global ids and owned flags, and its cells' counted
    /// flags and global ids.
    pub fn new(
        mesh: Mesh,
        global: Vec<u64>,
        owned: Vec<bool>,
        (counted, cell_global): (Vec<bool>, Vec<u64>),
    ) -> Patch {
        let n2c = adjacency::node_to_cell(&mesh.cells, mesh.num_nodes());
        let mut graph = adjacency::node_graph(&mesh, &n2c);
        // Rows in global id order, so sums over neighbours (laplace's centroid) add in the
        // same order on every rank count.
        for i in 0..graph.rows() {
            let (a, b) = (graph.offsets[i], graph.offsets[i + 1]);
            graph.items[a..b].sort_unstable_by_key(|&j| global[j as usize]);
        }
        Patch {
            mesh,
            global,
            owned,
            counted,
            cell_global,
            n2c,
            graph,
        }
    }

    /// The patch of the nodes with `owner[i] == rank`: the cells touching them, and the
    /// ghost nodes those cells add. A cell is counted by the owner of its smallest node id.
    pub fn of_rank(mesh: &Mesh, owner: &[u32], rank: u32) -> Patch {
        let mine = |n: &Index| owner[*n as usize] == rank;
        // The cells are found in parallel; the serial numbering below visits only them.
        let kept: Vec<usize> = (0..mesh.num_cells())
            .into_par_iter()
            .filter(|&c| mesh.cell(c).iter().any(mine))
            .collect();
        let counted = kept
            .par_iter()
            .map(|&c| mine(mesh.cell(c).iter().min().unwrap()))
            .collect();
        let cell_global = kept.iter().map(|&c| c as u64).collect();
        let mut local = vec![Index::MAX; mesh.num_nodes()];
        let mut global = Vec::new();
        let mut cells = Vec::with_capacity(kept.len() * mesh.corners());
        for &c in &kept {
            for &n in mesh.cell(c) {
                if local[n as usize] == Index::MAX {
                    local[n as usize] = global.len() as Index;
                    global.push(n as u64);
                }
                cells.push(local[n as usize]);
            }
        }
        let pick = |a: &[f64]| global.iter().map(|&g| a[g as usize]).collect::<Vec<_>>();
        let part = Mesh {
            dim: mesh.dim,
            x: pick(&mesh.x),
            y: pick(&mesh.y),
            z: pick(&mesh.z),
            cells,
            fixed: global.iter().map(|&g| mesh.fixed[g as usize]).collect(),
        };
        let owned = global.iter().map(|&g| owner[g as usize] == rank).collect();
        Patch::new(part, global, owned, (counted, cell_global))
    }

    /// The patch of a mesh made of a run of the whole mesh's nodes, local node i being
    /// global `first + i`, of which this rank owns the global ids `owned`; its cells, the
    /// run of the whole mesh's cells from `first_cell` on, are every cell touching an owned
    /// node. A cell is counted by the owner of its smallest node id, as in `of_rank`.
    pub fn of_block(mesh: Mesh, (first, first_cell): (u64, u64), owned: Range<u64>) -> Patch {
        let global: Vec<u64> = (first..first + mesh.num_nodes() as u64).collect();
        let counted = mesh
            .cells
            .par_chunks(mesh.corners())
            .map(|c| owned.contains(&(first + u64::from(*c.iter().min().unwrap()))))
            .collect();
        let owned = global.par_iter().map(|g| owned.contains(g)).collect();
        let cell_global = (first_cell..first_cell + mesh.num_cells() as u64).collect();
        Patch::new(mesh, global, owned, (counted, cell_global))
    }

    /// True for the nodes this rank moves.
    pub fn active(&self, i: usize) -> bool {
        self.owned[i] && !self.mesh.fixed[i]
    }
}

/// What crosses patches: ghost positions and global reductions.
pub trait Exchange {
    /// Refresh the ghost nodes' positions from their owners.
    fn ghosts(&self, mesh: &mut Mesh);
    /// Refresh the ghost nodes' labels (one per local node) from their owners.
    fn ghost_labels(&self, labels: &mut [u32]);
    /// The sum over all ranks.
    fn sum(&self, mine: ExactSum) -> ExactSum;
    /// The summary over all ranks.
    fn summary(&self, mine: Summary) -> Summary;
    fn max(&self, mine: f64) -> f64;
    fn any(&self, mine: bool) -> bool;
}

/// The exchange of a patch that is the whole mesh.
pub struct Alone;

impl Exchange for Alone {
    fn ghosts(&self, _mesh: &mut Mesh) {}
    fn ghost_labels(&self, _labels: &mut [u32]) {}
    fn sum(&self, mine: ExactSum) -> ExactSum {
        mine
    }
    fn summary(&self, mine: Summary) -> Summary {
        mine
    }
    fn max(&self, mine: f64) -> f64 {
        mine
    }
    fn any(&self, mine: bool) -> bool {
        mine
    }
}
