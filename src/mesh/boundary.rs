//! Boundary nodes found without tags: the corners of faces (triangles of tets, edges of
//! triangles) that belong to exactly one cell.

use super::Mesh;
use std::collections::HashMap;

/// Faces of a simplex with `corners` corners, as corner positions.
fn faces(corners: usize) -> &'static [&'static [usize]] {
    if corners == 4 {
        &[&[1, 2, 3], &[0, 2, 3], &[0, 1, 3], &[0, 1, 2]]
    } else {
        &[&[1, 2], &[0, 2], &[0, 1]]
    }
}

/// A flag per node: true when the node lies on a face of one cell only.
pub fn boundary_nodes(mesh: &Mesh) -> Vec<bool> {
    let mut count: HashMap<[u32; 3], u32> = HashMap::with_capacity(mesh.num_cells() * 2);
    for c in 0..mesh.num_cells() {
        for face in faces(mesh.corners()) {
            *count.entry(face_key(mesh.cell(c), face)).or_default() += 1;
        }
    }
    let mut on = vec![false; mesh.num_nodes()];
    for (key, n) in count {
        if n == 1 {
            for &v in key.iter().filter(|&&v| v != u32::MAX) {
                on[v as usize] = true;
            }
        }
    }
    on
}

/// The face's nodes sorted, padded with u32::MAX (edges of triangles).
fn face_key(cell: &[u32], face: &[usize]) -> [u32; 3] {
    let mut key = [u32::MAX; 3];
    for (k, &corner) in face.iter().enumerate() {
        key[k] = cell[corner];
    }
    key.sort_unstable();
    key
}
