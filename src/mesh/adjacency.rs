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

/// Node-to-node adjacency (nodes sharing a cell), each row sorted. Rows are made in blocks
/// of consecutive nodes, one buffer per block (not one allocation per row, which made this
/// the slowest step of a large mesh's set-up), and the blocks joined in order.
pub fn node_graph(mesh: &Mesh, n2c: &Csr) -> Csr {
    const BLOCK: usize = 1 << 12;
    let k = mesh.corners();
    let n = mesh.num_nodes();
    let block = |b: usize| {
        let mut items: Vec<Index> = Vec::new();
        let mut lengths = Vec::with_capacity(BLOCK);
        for i in b * BLOCK..((b + 1) * BLOCK).min(n) {
            let start = items.len();
            for &slot in n2c.row(i) {
                let cell = mesh.cell(slot as usize / k);
                items.extend(cell.iter().copied().filter(|&j| j as usize != i));
            }
            items[start..].sort_unstable();
            let mut len = 0;
            for r in start..items.len() {
                if len == 0 || items[start + len - 1] != items[r] {
                    items[start + len] = items[r];
                    len += 1;
                }
            }
            items.truncate(start + len);
            lengths.push(len);
        }
        (items, lengths)
    };
    let blocks: Vec<(Vec<Index>, Vec<usize>)> =
        (0..n.div_ceil(BLOCK)).into_par_iter().map(block).collect();
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0);
    for (_, lengths) in &blocks {
        for &len in lengths {
            offsets.push(offsets.last().unwrap() + len);
        }
    }
    let items = blocks.into_iter().flat_map(|(items, _)| items).collect();
    Csr { offsets, items }
}

#[cfg(test)]
mod tests {
    use super::super::generate;
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn node_graph_lists_each_neighbour_once_in_order() {
        // More nodes than one block of rows.
        let mesh = generate::kuhn_box([17, 16, 15], [1.0; 3]);
        let n = mesh.num_nodes();
        let graph = node_graph(&mesh, &node_to_cell(&mesh.cells, n));
        let mut truth = vec![BTreeSet::new(); n];
        for c in 0..mesh.num_cells() {
            for &a in mesh.cell(c) {
                truth[a as usize].extend(mesh.cell(c).iter().filter(|&&b| b != a));
            }
        }
        assert_eq!(graph.rows(), n);
        for (i, row) in truth.iter().enumerate() {
            assert_eq!(
                graph.row(i),
                row.iter().copied().collect::<Vec<_>>(),
                "node {i}"
            );
        }
    }
}
