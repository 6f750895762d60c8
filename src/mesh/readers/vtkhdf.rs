//! A mesh tessera wrote: the `/VTKHDF` UnstructuredGrid group of a result file (one piece
//! per rank that wrote it; tetrahedra, VTK type 10, or triangles, type 5), with the fixed
//! flags it stored per node; the pieces are put back together by their nodes' and cells'
//! global ids (without them, the pieces' nodes and cells in file order).

use super::{coordinate_form, shown_coordinate, usable_coordinate, Origins, Raw};
use crate::error::{Error, Result};
use crate::mesh::Index;
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
    let h5 =
        crate::output::open_to_read(path).map_err(|e| fail(format!("cannot open as HDF5: {e}")))?;
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
    let ids = |name: &str, len: usize, of: &str| match group.dataset(name) {
        Ok(d) => match d.read_raw::<u64>() {
            Ok(ids) if ids.len() == len => Ok(ids),
            Ok(ids) => Err(fail(format!(
                "/VTKHDF/{name} holds {} ids: expected {len}, one per {of}",
                ids.len()
            ))),
            Err(e) => Err(fail(format!("/VTKHDF/{name}: {e}"))),
        },
        Err(_) => Ok((0..len as u64).collect()),
    };
    let node_ids = ids("PointData/global_id", n, "point")?;
    // The whole mesh has at most as many nodes as the pieces hold (a node may be in several).
    if let Some((i, g)) = node_ids.iter().enumerate().find(|(_, &g)| g >= n as u64) {
        return Err(fail(format!(
            "/VTKHDF/PointData/global_id: id {g} of point {i} (from 0) out of range: expected ids below {n}, the points' count"
        )));
    }
    let cell_ids = ids("CellData/global_id", types.len(), "cell")?;
    let whole = assemble(
        (&points, &fixed, &pieces.points),
        &cells,
        (&node_ids, &cell_ids),
        k,
    )
    .map_err(fail)?;
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

/// The whole mesh from pieces (their points with their fixed flags, and each piece's count
/// of them): nodes at their global ids (a node in several pieces is the same node, at the same
/// position in each), cells at theirs. What is wrong, naming the id, where the ids repeat a
/// node within a piece or at two positions, repeat a cell, or leave a gap.
fn assemble(
    (points, fixed, pieces): (&[f64], &[u8], &[i64]),
    cells: &[usize],
    (node_ids, cell_ids): (&[u64], &[u64]),
    k: usize,
) -> std::result::Result<Whole, String> {
    // `read` checked every id below the points' count and one per point and cell.
    let n = node_ids.iter().max().map_or(0, |&m| m + 1) as usize;
    if n > u32::MAX as usize {
        return Err(format!(
            "/VTKHDF/PointData/global_id numbers {n} nodes: expected at most {}",
            u32::MAX
        ));
    }
    // Each point's piece (`connectivity` checked the counts sum to the points').
    let piece: Vec<usize> = pieces
        .iter()
        .enumerate()
        .flat_map(|(p, &count)| std::iter::repeat_n(p, count as usize))
        .collect();
    let at = |i: usize| [points[3 * i], points[3 * i + 1], points[3 * i + 2]];
    let mut xyz = vec![[f64::NAN; 3]; n];
    let mut flags = vec![false; n];
    // The first point holding each id.
    let mut holder = vec![usize::MAX; n];
    for (i, &g) in node_ids.iter().enumerate() {
        let g = g as usize;
        let j = holder[g];
        if j == usize::MAX {
            (xyz[g], flags[g], holder[g]) = (at(i), fixed[i] != 0, i);
        } else if piece[j] == piece[i] {
            return Err(format!(
                "/VTKHDF/PointData/global_id: id {g} held by points {j} and {i} (from 0), both in piece {}: expected each node once in a piece",
                piece[i]
            ));
        } else if at(j) != at(i) {
            let (p, q) = (at(j).map(shown_coordinate), at(i).map(shown_coordinate));
            return Err(format!(
                "/VTKHDF/PointData/global_id: id {g} held by points {j} and {i} (from 0) at ({}) and ({}): expected a node shared by pieces at one position",
                p.join(", "),
                q.join(", ")
            ));
        }
    }
    if let Some(g) = holder.iter().position(|&j| j == usize::MAX) {
        return Err(format!(
            "/VTKHDF/PointData/global_id: no point holds id {g}: expected ids numbering the nodes from 0 to {} without a gap",
            n - 1
        ));
    }
    let mut out = vec![Index::MAX; cells.len()];
    let mut cell_at = vec![usize::MAX; cell_ids.len()];
    for (c, &g) in cell_ids.iter().enumerate() {
        let Some(g) = usize::try_from(g).ok().filter(|&g| g < cell_ids.len()) else {
            return Err(format!(
                "/VTKHDF/CellData/global_id: id {g} of cell {c} (from 0) out of range: expected ids below {}, the cells' count",
                cell_ids.len()
            ));
        };
        if cell_at[g] != usize::MAX {
            return Err(format!(
                "/VTKHDF/CellData/global_id: id {g} held by cells {} and {c} (from 0): expected each cell once",
                cell_at[g]
            ));
        }
        cell_at[g] = c;
        let slot = &mut out[g * k..(g + 1) * k];
        for (o, &v) in slot.iter_mut().zip(&cells[c * k..(c + 1) * k]) {
            *o = node_ids[v] as Index;
        }
    }
    Ok((xyz, flags, out))
}
