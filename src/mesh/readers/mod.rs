//! Mesh readers: TetGen/Triangle `.node` + `.ele`, Gmsh MSH 2.2 ASCII (our own reader), Gmsh
//! MSH 4.1 ASCII and binary (through `mshio`), and a `/VTKHDF` group tessera wrote. Each
//! reader yields the points (a coordinate that is not finite or past `MAX_COORDINATE` in
//! magnitude is refused with its node and line or block), the cells with where each came from
//! (line or element tag), and the boundary patches if the file tags them; `finish` then
//! checks every cell (degenerate or inverted cells are refused with their line) and marks the
//! fixed nodes: those of tagged boundary patches not freed, or, without tags, those on faces
//! of one cell.

pub mod msh2;
pub mod msh4;
pub mod node_ele;
pub mod vtkhdf;

use super::ranks::Ranks;
use super::{boundary, geometry, Index, Mesh};
use crate::error::{Error, Result};
use crate::files::must_be_regular;
use std::path::Path;

/// What a reader found, before the checks.
pub struct Raw {
    pub dim: usize,
    pub points: Vec<[f64; 3]>,
    pub cells: Vec<Index>,
    /// Where each cell was read, for the error that refuses it.
    pub origins: Origins,
    /// Boundary nodes with their patch (physical tag), when the file tags them.
    pub tagged: Option<Vec<(Index, i64)>>,
    /// Fixed flags carried by the file itself (a VTKHDF mesh tessera wrote).
    pub fixed: Option<Vec<bool>>,
}

/// Where a reader found each cell: its line, its element tag (binary and MSH 4.1 files,
/// whose blocks are not line based), or nothing beyond its place in the file.
pub enum Origins {
    Lines(Vec<u64>),
    ElementTags(Vec<u64>),
    None,
}

impl Origins {
    /// The error refusing cell `c` (0-based) for `what`.
    fn error(&self, file: &str, c: usize, what: &str) -> Error {
        let msg = format!(
            "cell {} is {what}: expected positively oriented cells",
            c + 1
        );
        match self {
            Origins::Lines(lines) => input_error(file, lines[c], msg),
            Origins::ElementTags(tags) => Error::InputFile {
                file: file.into(),
                msg: format!("element {}: {msg}", tags[c]),
            },
            Origins::None => Error::InputFile {
                file: file.into(),
                msg,
            },
        }
    }
}

/// Read a mesh (collective: `.node`/`.ele` are read in parts, every other format whole by
/// every rank); `free` lists the boundary patches (physical tags) whose nodes may move.
pub fn read(path: &Path, free: &[i64], ranks: &dyn Ranks) -> Result<Mesh> {
    let file = path.display().to_string();
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let raw = match ext {
        "node" | "ele" => node_ele::read(path, ranks)?,
        "msh" => {
            let bytes = must_be_regular(path)
                .and_then(|()| std::fs::read(path))
                .map_err(|e| unreadable(&file, e))?;
            if msh2::is_version_2(&bytes) {
                msh2::parse(&file, &String::from_utf8_lossy(&bytes))?
            } else {
                msh4::parse(&file, &bytes)?
            }
        }
        "h5" | "hdf" | "hdf5" | "vtkhdf" => vtkhdf::read(path)?,
        _ => {
            return Err(Error::InputFile {
                file,
                msg: "unknown mesh format: expected .node/.ele (TetGen, Triangle), .msh (Gmsh 2.2 or 4.1) or .h5/.vtkhdf (a tessera mesh)".into(),
            })
        }
    };
    finish(&file, raw, free)
}

pub fn unreadable(file: &str, e: std::io::Error) -> Error {
    Error::InputFile {
        file: file.to_string(),
        msg: format!("cannot read: {e}"),
    }
}

/// Check the cells and mark the fixed nodes.
pub fn finish(file: &str, raw: Raw, free: &[i64]) -> Result<Mesh> {
    let k = raw.dim + 1;
    if raw.cells.is_empty() {
        let what = if raw.dim == 3 {
            "tetrahedra"
        } else {
            "triangles"
        };
        return Err(Error::InputFile {
            file: file.into(),
            msg: format!("no cells: expected {what}"),
        });
    }
    let mesh = Mesh {
        dim: raw.dim,
        x: raw.points.iter().map(|p| p[0]).collect(),
        y: raw.points.iter().map(|p| p[1]).collect(),
        z: raw.points.iter().map(|p| p[2]).collect(),
        cells: raw.cells,
        fixed: vec![false; raw.points.len()],
    };
    let scale = mesh.mean_edge_length().powi(raw.dim as i32);
    for c in 0..mesh.num_cells() {
        let v = geometry::volume(&mesh.cell_points(c), k);
        let bad = if v.abs() <= 1e-12 * scale {
            Some("degenerate (zero volume)")
        } else if v < 0.0 {
            Some("inverted (negative volume)")
        } else {
            None
        };
        if let Some(bad) = bad {
            return Err(raw.origins.error(file, c, bad));
        }
    }
    let fixed = match (raw.fixed, raw.tagged) {
        (Some(fixed), _) => fixed,
        (None, Some(tagged)) if !tagged.is_empty() => {
            let mut f = vec![false; mesh.num_nodes()];
            for (n, tag) in tagged {
                if !free.contains(&tag) {
                    f[n as usize] = true;
                }
            }
            f
        }
        _ => boundary::boundary_nodes(&mesh),
    };
    Ok(Mesh { fixed, ..mesh })
}

/// Splits text into lines with their numbers, skipping blank lines and `#` comments.
pub fn data_lines(text: &str) -> impl Iterator<Item = (u64, Vec<&str>)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let l = l.split('#').next().unwrap_or("");
        let words: Vec<&str> = l.split_whitespace().collect();
        (!words.is_empty()).then_some((i as u64 + 1, words))
    })
}

/// Parse `word` as T, or an error naming the line and what was expected.
pub fn parse_word<T: std::str::FromStr>(
    file: &str,
    line: u64,
    word: &str,
    what: &str,
) -> Result<T> {
    word.parse().map_err(|_| Error::Input {
        file: file.into(),
        line,
        msg: format!("'{word}' is not {what}"),
    })
}

/// The greatest magnitude of a coordinate a mesh file may hold. The smoothers' highest power
/// of a length is the sixth: η³ = 432 W² / S³ (W = 6V, S the sum of the cell's squared edge
/// lengths), and the safeguard's trials compare K W^p with floor · S³ (mesh::corner and
/// kernels/mesh.cu alike). With every coordinate within ±1e40, an edge's component is at
/// most 2e40, S at most 7.2e81 (six edges of at most 1.2e81) and S³ at most 3.8e245; W is at
/// most 4.2e121 and 432 W² at most 7.5e245: far below f64's 1.8e308, so volumes, squared
/// lengths and η³ stay finite, and so do the trials of a step 1e10 times the mesh's size.
/// 1e150 would not do: a volume (a length cubed) overflows past about 5e102, and W² and S³
/// of a cell past about 1e50 (η³ is then inf / inf = NaN, and a trial inf ≥ inf passes).
/// Generated meshes (extents 1e-6 to 1e6, workloads::mesh's EXTENT_RANGE) and the files
/// tessera writes of them lie well inside.
pub const MAX_COORDINATE: f64 = 1e40;

/// What a coordinate must be, for the messages refusing one.
pub fn coordinate_form() -> String {
    format!("finite numbers from -{MAX_COORDINATE:e} to {MAX_COORDINATE:e}")
}

/// Whether `x` can be a coordinate: finite and at most `MAX_COORDINATE` in magnitude.
pub fn usable_coordinate(x: f64) -> bool {
    x.abs() <= MAX_COORDINATE
}

/// A coordinate as a message shows it: past 1e16 in magnitude with an exponent (1e300, not
/// its 301 digits).
pub fn shown_coordinate(x: f64) -> String {
    if x.abs() >= 1e16 {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// The error refusing a node's coordinates (`at` names the node and where it is), which are
/// not `usable_coordinate`s.
pub fn coordinate_error(file: &str, at: &str, p: &[f64]) -> Error {
    let p: Vec<String> = p.iter().map(|&x| shown_coordinate(x)).collect();
    Error::InputFile {
        file: file.into(),
        msg: format!(
            "{at}: coordinates ({}): expected {}",
            p.join(", "),
            coordinate_form()
        ),
    }
}

/// Parse `word` as a coordinate of `node`: a finite number (`nan`, `inf` and numbers past
/// f64's range parse as floats but make no point) of magnitude at most `MAX_COORDINATE`.
pub fn parse_coordinate(file: &str, line: u64, word: &str, node: u64) -> Result<f64> {
    let x: f64 = parse_word(file, line, word, "a coordinate")?;
    let what = if !x.is_finite() {
        "not finite"
    } else if !usable_coordinate(x) {
        "too large"
    } else {
        return Ok(x);
    };
    let form = coordinate_form();
    let msg = format!("node {node}: coordinate '{word}' is {what}: expected {form}");
    Err(input_error(file, line, msg))
}

pub fn input_error(file: &str, line: u64, msg: impl Into<String>) -> Error {
    Error::Input {
        file: file.into(),
        line,
        msg: msg.into(),
    }
}

#[cfg(test)]
mod tests;
