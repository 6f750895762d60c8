//! This rank's piece of the `/VTKHDF` UnstructuredGrid: some cells of the mesh it holds and
//! the nodes they use, numbered within the piece, with the global ids that put the pieces
//! back together. Every cell of the whole mesh is in exactly one piece; a node shared by
//! pieces is in each of them.

use crate::comm::World;
use crate::mesh::{geometry, Index, Mesh};

pub struct Piece {
    /// The piece's nodes (final positions, fixed flags) and cells (piece numbering).
    pub mesh: Mesh,
    /// Final minus input position, 3 per node.
    pub displacement: Vec<f64>,
    pub node_global: Vec<u64>,
    pub node_part: Vec<u32>,
    pub cell_global: Vec<u64>,
    /// The part of each cell's smallest global node id.
    pub cell_part: Vec<u32>,
    /// Nodes and cells of every rank's piece, in rank order (`place`).
    pub sizes: Vec<[u64; 2]>,
}

/// The piece of `cells` (local cell numbers, ascending) of `mesh`, whose input positions
/// `input` holds in the same numbering; `global` and `cell_global` map local node and cell
/// numbers to the whole mesh's, `part` gives a local node's part.
pub fn cut(
    mesh: &Mesh,
    input: &Mesh,
    cells: &[usize],
    global: impl Fn(usize) -> u64,
    cell_global: impl Fn(usize) -> u64,
    part: impl Fn(usize) -> u32,
) -> Piece {
    const UNUSED: Index = Index::MAX;
    let mut local = vec![UNUSED; mesh.num_nodes()];
    for &c in cells {
        for &v in mesh.cell(c) {
            local[v as usize] = 0;
        }
    }
    // Nodes in ascending local order.
    let nodes: Vec<usize> = (0..mesh.num_nodes()).filter(|&i| local[i] != UNUSED).collect();
    for (j, &i) in nodes.iter().enumerate() {
        local[i] = j as Index;
    }
    let pick = |a: &[f64]| nodes.iter().map(|&i| a[i]).collect::<Vec<f64>>();
    let smallest = |c: usize| *mesh.cell(c).iter().min_by_key(|&&v| global(v as usize)).unwrap();
    Piece {
        mesh: Mesh {
            dim: mesh.dim,
            x: pick(&mesh.x),
            y: pick(&mesh.y),
            z: pick(&mesh.z),
            cells: cells
                .iter()
                .flat_map(|&c| mesh.cell(c).iter().map(|&v| local[v as usize]))
                .collect(),
            fixed: nodes.iter().map(|&i| mesh.fixed[i]).collect(),
        },
        displacement: nodes
            .iter()
            .flat_map(|&i| geometry::sub(&mesh.point(i), &input.point(i)))
            .collect(),
        node_global: nodes.iter().map(|&i| global(i)).collect(),
        node_part: nodes.iter().map(|&i| part(i)).collect(),
        cell_global: cells.iter().map(|&c| cell_global(c)).collect(),
        cell_part: cells.iter().map(|&c| part(smallest(c) as usize)).collect(),
        sizes: Vec::new(),
    }
}

/// Learn every rank's piece sizes (collective).
pub fn place(world: &World, piece: &mut Piece) {
    let mine = [piece.mesh.num_nodes() as u64, piece.mesh.num_cells() as u64];
    let mut all = vec![0u64; 2 * world.size()];
    world.allgather_into(&mine, &mut all);
    piece.sizes = all.chunks(2).map(|s| [s[0], s[1]]).collect();
}
