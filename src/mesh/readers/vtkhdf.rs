//! A mesh tessera wrote: the `/VTKHDF` UnstructuredGrid group of a result file (one piece;
//! tetrahedra, VTK type 10, or triangles, type 5), with the fixed flags it stored per node.

use super::Raw;
use crate::error::{Error, Result};
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
    if fixed.len() != n || connectivity.iter().any(|&c| c < 0 || c as usize >= n) {
        return Err(fail(
            "/VTKHDF: connectivity or PointData/fixed does not match Points".into(),
        ));
    }
    Ok(Raw {
        dim,
        points: points.chunks(3).map(|p| [p[0], p[1], p[2]]).collect(),
        cells: connectivity.iter().map(|&c| c as u32).collect(),
        lines: vec![0; types.len()],
        tagged: None,
        fixed: Some(fixed.iter().map(|&f| f != 0).collect()),
    })
}
