//! A mesh tessera wrote: the `/VTKHDF` UnstructuredGrid group of a result file (one piece
//! per rank that wrote it; tetrahedra, VTK type 10, or triangles, type 5), with the fixed
//! flags it stored per node; the pieces are put back together by their nodes' and cells'
//! global ids (without them, the pieces' nodes and cells in file order).

use super::{coordinate_form, shown_coordinate, usable_coordinate, Origins, Raw};
use crate::error::{Error, Result};
use crate::mesh::Index;
use hdf5_metno as hdf5;
use std::path::Path;

pub const VTK_TRIANGLE: u8 = 5;
pub const VTK_TETRA: u8 = 10;

pub fn read(path: &Path) -> Result<Raw> {
    let file = path.display().to_string();
    let fail = |msg: String| Error::InputFile {
        file: file.clone(),
        msg,
    };
    crate::files::must_be_regular(path).map_err(|e| fail(format!("cannot open: {e}")))?;
    let h5 = hdf5::File::open(path).map_err(|e| fail(format!("cannot open as HDF5: {e}")))?;
    let group = h5
        .group("VTKHDF")
        .map_err(|_| fail("no /VTKHDF group: expected a mesh tessera wrote".into()))?;
    let read_u8 = |name: &str| {
        group
            .dataset(name)
            .and_then(|d| d.read_raw::<u8>())
            .map_err(|e| fail(format!("/VTKHDF/{name}: {e}")))
    };
    let read_i64 = |name: &str| {
        group
            .dataset(name)
            .and_then(|d| d.read_raw::<i64>())
            .map_err(|e| fail(format!("/VTKHDF/{name}: {e}")))
    };
    let points = group
        .dataset("Points")
        .and_then(|d| d.read_raw::<f64>())
        .map_err(|e| fail(format!("/VTKHDF/Points: {e}")))?;
    if let Some(i) = points.iter().position(|&x| !usable_coordinate(x)) {
        let (p, x) = (i / 3, shown_coordinate(points[i]));
        return Err(fail(format!(
            "/VTKHDF/Points: point {p} (from 0) has coordinate {x}: expected {}",
            coordinate_form()
        )));
    }
    let types = read_u8("Types")?;
    let connectivity = read_i64("Connectivity")?;
    let fixed = read_u8("PointData/fixed")?;
    let dim = match types.first() {
        Some(&VTK_TETRA) => 3,
        Some(&VTK_TRIANGLE) => 2,
        _ => {
            return Err(fail(
                "/VTKHDF/Types: expected tetrahedra (10) or triangles (5)".into(),
            ))
        }
    };
    let wanted = if dim == 3 { VTK_TETRA } else { VTK_TRIANGLE };
    if types.iter().any(|&t| t != wanted) || connectivity.len() != types.len() * (dim + 1) {
        return Err(fail(
            "/VTKHDF: expected cells of one type, 3 or 4 corners each".into(),
        ));
    }
    let n = points.len() / 3;
    if fixed.len() != n {
        return Err(fail(
            "/VTKHDF: PointData/fixed does not match Points".into(),
        ));
    }
    let pieces = Pieces {
        points: read_i64("NumberOfPoints")?,
        cells: read_i64("NumberOfCells")?,
    };
    let k = dim + 1;
    let cells = pieces.connectivity(&connectivity, n, k).ok_or_else(|| {
        fail("/VTKHDF: connectivity does not match the pieces' points and cells".into())
    })?;
    let ids = |name: &str, len: usize| match group.dataset(name) {
        Ok(d) => d
            .read_raw::<u64>()
            .map_err(|e| fail(format!("/VTKHDF/{name}: {e}"))),
        Err(_) => Ok((0..len as u64).collect()),
    };
    let node_ids = ids("PointData/global_id", n)?;
    // The whole mesh has at most as many nodes as the pieces hold (a node may be in several).
    if let Some((i, g)) = node_ids.iter().enumerate().find(|(_, &g)| g >= n as u64) {
        return Err(fail(format!(
            "/VTKHDF/PointData/global_id: id {g} of point {i} (from 0) out of range: expected ids below {n}, the points' count"
        )));
    }
    let cell_ids = ids("CellData/global_id", types.len())?;
    let whole = assemble(&points, &fixed, &cells, (&node_ids, &cell_ids), k).ok_or_else(|| {
        fail("/VTKHDF: global ids that do not number each node and cell once".into())
    })?;
    Ok(Raw {
        dim,
        origins: Origins::None,
        points: whole.0,
        cells: whole.2,
        tagged: None,
        fixed: Some(whole.1),
    })
}

/// The per-piece point and cell counts of a VTKHDF UnstructuredGrid.
struct Pieces {
    points: Vec<i64>,
    cells: Vec<i64>,
}

impl Pieces {
    /// Connectivity numbering the file's points (each piece's numbers its own), or None where
    /// the counts or an index do not fit.
    fn connectivity(&self, conn: &[i64], n: usize, k: usize) -> Option<Vec<usize>> {
        let total = |c: &[i64]| {
            c.iter()
                .try_fold(0usize, |s, &v| s.checked_add(usize::try_from(v).ok()?))
        };
        let fits = self.points.len() == self.cells.len()
            && total(&self.points)? == n
            && total(&self.cells)?.checked_mul(k)? == conn.len();
        if !fits {
            return None;
        }
        let (mut first, mut at) = (0usize, 0usize);
        let mut out = Vec::with_capacity(conn.len());
        for (&np, &nc) in self.points.iter().zip(&self.cells) {
            let (np, ids) = (np as usize, nc as usize * k);
            for &v in &conn[at..at + ids] {
                let v = usize::try_from(v).ok().filter(|&v| v < np)?;
                out.push(first + v);
            }
            (first, at) = (first + np, at + ids);
        }
        Some(out)
    }
}

/// A whole mesh's points, fixed flags and cells.
type Whole = (Vec<[f64; 3]>, Vec<bool>, Vec<Index>);

/// The whole mesh from pieces: nodes at their global ids (a node in several pieces is the
/// same node), cells at theirs. None where the ids leave a gap or repeat a cell.
fn assemble(
    points: &[f64],
    fixed: &[u8],
    cells: &[usize],
    (node_ids, cell_ids): (&[u64], &[u64]),
    k: usize,
) -> Option<Whole> {
    // `read` checked every id below the points' count.
    let n = node_ids.iter().max().map_or(0, |&m| m + 1) as usize;
    if node_ids.len() != fixed.len() || cell_ids.len() * k != cells.len() || n > u32::MAX as usize {
        return None;
    }
    let mut xyz = vec![[f64::NAN; 3]; n];
    let mut flags = vec![false; n];
    let mut seen = vec![false; n];
    for (i, &g) in node_ids.iter().enumerate() {
        let g = g as usize;
        (xyz[g], flags[g], seen[g]) = (
            [points[3 * i], points[3 * i + 1], points[3 * i + 2]],
            fixed[i] != 0,
            true,
        );
    }
    let mut out = vec![Index::MAX; cells.len()];
    for (c, &g) in cell_ids.iter().enumerate() {
        let g = usize::try_from(g).ok().filter(|&g| g < cell_ids.len())?;
        let slot = &mut out[g * k..(g + 1) * k];
        if slot[0] != Index::MAX {
            return None;
        }
        for (o, &v) in slot.iter_mut().zip(&cells[c * k..(c + 1) * k]) {
            *o = node_ids[v] as Index;
        }
    }
    (seen.iter().all(|&s| s)).then_some((xyz, flags, out))
}
