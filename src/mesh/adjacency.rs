//! Node-to-cell and node-to-node CSR of a mesh. The node-to-cell lists are in ascending cell
//! order (a counting sort), which fixes the order in which the node kernels sum the cell
//! kernels' contributions: the sums, hence the smoothed mesh, do not depend on threads or
//! ranks.

use super::{Index, Mesh};
use rayon::prelude::*;

/// Compressed rows: row i is `items[offsets[i] .. offsets[i + 1]]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Csr {
    pub offsets: Vec<usize>,
    pub items: Vec<Index>,
}

impl Csr {
    pub fn row(&self, i: usize) -> &[Index] {
        &self.items[self.offsets[i]..self.offsets[i + 1]]
    }

    pub fn rows(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }
}

/// Node-to-cell incidence: row i lists `slot = cell * corners + corner` for every corner of
/// every cell at node i, cells ascending.
pub fn node_to_cell(cells: &[Index], num_nodes: usize) -> Csr {
    let mut offsets = vec![0usize; num_nodes + 1];
    for &n in cells {
        offsets[n as usize + 1] += 1;
    }
    for i in 0..num_nodes {
        offsets[i + 1] += offsets[i];
    }
    let mut next = offsets.clone();
    let mut items = vec![0 as Index; cells.len()];
    for (slot, &n) in cells.iter().enumerate() {
        items[next[n as usize]] = slot as Index;
        next[n as usize] += 1;
    }
    Csr { offsets, items }
}

/// Node-to-node adjacency (nodes sharing a cell), each row sorted.
pub fn node_graph(mesh: &Mesh, n2c: &Csr) -> Csr {
    let k = mesh.corners();
    let rows: Vec<Vec<Index>> = (0..mesh.num_nodes())
        .into_par_iter()
        .map(|i| {
            let mut row: Vec<Index> = n2c
                .row(i)
                .iter()
                .flat_map(|&slot| mesh.cell(slot as usize / k).iter().copied())
                .filter(|&j| j as usize != i)
                .collect();
            row.sort_unstable();
            row.dedup();
            row
        })
        .collect();
    let mut offsets = Vec::with_capacity(rows.len() + 1);
    offsets.push(0);
    for r in &rows {
        offsets.push(offsets.last().unwrap() + r.len());
    }
    Csr {
        offsets,
        items: rows.concat(),
    }
}
