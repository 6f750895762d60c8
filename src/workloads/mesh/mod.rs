//! `tessera mesh generate|smooth|partition`: tetrahedral (and triangle) meshes — the seed's
//! smoothing and partitioning (spec: mesh.md; seed 001 §2.1-2.2).
//!
//! One workload with an action: `generate box NX NY NZ [--extent ..] [--perturb barK]` makes a
//! Kuhn-split box (6 tets per cube) or one of the seed's perturbed bars (`generate ball N`: the
//! unit ball, a Kuhn box mapped radially; `generate ring N`: a thick ring sector of 330
//! degrees, non-convex, a box mapped around its axis); `smooth MESH` runs
//! `l2v`, `laplace` or `opt-colour` (mesh::smooth); `partition MESH --parts K [--refine]` runs
//! the geometric partitioner (mesh::partition). MESH is a file (`.node`/`.ele`, `.msh` 2.2 or
//! 4.1, or a tessera result `.h5`) or a generated one. To smooth a generated mesh, each rank
//! makes only its run of node layers and one ghost layer; otherwise every rank holds the
//! input mesh and, on several ranks, the partition into one part per rank decides which rank
//! owns which nodes. Each rank keeps its cells and one ghost layer (mesh::patch) and swaps
//! ghost positions with its neighbour ranks only (mesh::distributed). Results: the mesh as a
//! `/VTKHDF` UnstructuredGrid beside `/mesh` (history, quality before and after, partition
//! measures), see `output`.

mod output;
mod piece;
mod run;

use crate::config::{config_error, out_of_range};
use crate::error::Result;
use crate::device::memory::{self, Place};
use crate::harness::{Harness, Workload};
use crate::mesh::generate::{Perturbation, Shape};
use crate::mesh::smooth::{Method, Preconditioner};
use crate::report::Report;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Make a mesh (box or perturbed bar) and write it
    Generate,
    /// Smooth a mesh
    Smooth,
    /// Partition a mesh's nodes
    Partition,
}

/// `[mesh]`. Also the `tessera mesh` arguments and flags.
#[derive(Debug, Default, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct MeshTable {
    /// generate, smooth or partition
    #[arg(value_enum)]
    pub action: Option<Action>,
    /// The mesh: a file (.node/.ele, .msh, tessera .h5), `box NX NY NZ`, `ball N` or `ring N`
    #[arg(num_args = 0..)]
    pub mesh: Option<Vec<String>>,
    /// Box extent, comma-separated (default 1,1,1; the seed's bar is 1,1,10)
    #[arg(long, value_delimiter = ',')]
    pub extent: Option<Vec<f64>>,
    /// Perturb the interior nodes as one of the seed's bars
    #[arg(long, value_enum)]
    pub perturb: Option<Perturbation>,
    /// Smoother (default l2v)
    #[arg(long, value_enum)]
    pub method: Option<Method>,
    /// Smoothing iterations (default 100)
    #[arg(long)]
    pub iterations: Option<usize>,
    /// l2v preconditioner (default scalar)
    #[arg(long, value_enum)]
    pub preconditioner: Option<Preconditioner>,
    /// laplace: move a node only where its worst cell improves
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub smart: Option<bool>,
    /// Stop when no node moves more than this fraction of the mean edge length (default 1e-9)
    #[arg(long)]
    pub tolerance: Option<f64>,
    /// Physical tags (or .node markers) of boundary patches whose nodes may move
    #[arg(long, value_delimiter = ',')]
    pub free: Option<Vec<i64>>,
    /// partition: number of parts
    #[arg(long)]
    pub parts: Option<usize>,
    /// partition: refine by label propagation within the balance bound
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub refine: Option<bool>,
    /// Store the mesh (VTKHDF) in the result file (default: up to 2^24 nodes)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub write_mesh: Option<bool>,
}

/// Where the mesh comes from.
#[derive(Debug, Clone)]
pub enum Source {
    Box { cubes: [usize; 3], extent: [f64; 3], perturb: Option<Perturbation>, shape: Option<Shape> },
    File { path: PathBuf, free: Vec<i64> },
}

pub struct MeshWorkload {
    action: Action,
    source: Source,
    method: Method,
    iterations: usize,
    preconditioner: Preconditioner,
    smart: bool,
    tolerance: f64,
    parts: usize,
    refine: bool,
    write_mesh: Option<bool>,
}

impl Workload for MeshWorkload {
    const NAME: &'static str = "mesh";
    const ABOUT: &'static str =
        "Tetrahedral meshes: generate (Kuhn box, perturbed bars), smooth (l2v, laplace, opt-colour), partition";
    type Table = MeshTable;

    fn configure(source: &str, t: MeshTable, _: Option<crate::graph::source::GraphConfig>) -> Result<Self> {
        let err = |msg: &str| config_error(source, &format!("[mesh] {msg}"));
        let action = t.action.ok_or_else(|| err("action: expected generate, smooth or partition"))?;
        let words = t.mesh.clone().unwrap_or_default();
        let mesh = parse_source(source, &words, &t)?;
        if action == Action::Generate && !matches!(mesh, Source::Box { .. }) {
            return Err(err("generate makes `box NX NY NZ`, `ball N` and `ring N` meshes (a file is read by smooth or partition)"));
        }
        refuse_inapplicable(source, &t)?;
        let iterations = t.iterations.unwrap_or(100);
        if iterations > 1_000_000 {
            return Err(out_of_range(source, "[mesh] iterations", iterations, "0..=1000000"));
        }
        let parts = t.parts.unwrap_or(0);
        if action == Action::Partition && !(1..=1 << 20).contains(&parts) {
            return Err(err("partition needs parts = K, 1 <= K <= 2^20 (--parts K)"));
        }
        let tolerance = t.tolerance.unwrap_or(1e-9);
        if !(tolerance >= 0.0 && tolerance.is_finite()) {
            return Err(out_of_range(source, "[mesh] tolerance", tolerance, "a number >= 0"));
        }
        Ok(MeshWorkload {
            action,
            source: mesh,
            method: t.method.unwrap_or(Method::L2v),
            iterations,
            preconditioner: t.preconditioner.unwrap_or(Preconditioner::Scalar),
            smart: t.smart.unwrap_or(false),
            tolerance,
            parts,
            refine: t.refine.unwrap_or(false),
            write_mesh: t.write_mesh,
        })
    }

    /// A generated box against host memory, before it is made (every rank holds the mesh,
    /// but when smoothing, where each holds its layers; a file's size is known only once read).
    fn check_sizes(&self, h: &Harness) -> Result<()> {
        let Source::Box { cubes: cubes @ [nx, ny, nz], .. } = self.source else {
            return Ok(());
        };
        // A parsed box's counts fit (`fits_32_bits`).
        let (nodes, cells) = box_counts(cubes).unwrap_or((u64::MAX, u64::MAX));
        let share = if self.action == Action::Smooth { h.world.size() as u64 } else { 1 };
        let bytes = nodes.saturating_mul(HOST_BYTES_PER_NODE)
            .saturating_add(cells.saturating_mul(HOST_BYTES_PER_CELL)) / share;
        let place = Place::Host { ranks: h.world.local_size() };
        memory::check(&format!("a box of {nx} x {ny} x {nz} cubes"), bytes, place, |_| {
            "fewer cubes, or ranks on more nodes".into()
        })
    }

    fn execute(&self, h: &Harness) -> Result<Report> {
        run::execute(self, h)
    }
}

/// Host bytes per node: coordinates and flags of the mesh and of the rank's patch, the node
/// graphs (about 14 neighbours), positions saved by the guard and the moves.
const HOST_BYTES_PER_NODE: u64 = 2 * 25 + 2 * 14 * 4 + 3 * 8 + 3 * 8 + 2 * 8;

/// Host bytes per cell: corners and node-to-cell slots of the mesh and the patch (4 x 4
/// bytes each).
const HOST_BYTES_PER_CELL: u64 = 4 * 16;


/// The nodes and cells of a Kuhn box of `cubes` (None where they pass 2^64).
fn box_counts(cubes: [usize; 3]) -> Option<(u64, u64)> {
    let product = |add: u64| cubes.iter().try_fold(1u64, |p, &c| p.checked_mul((c as u64).checked_add(add)?));
    Some((product(1)?, product(0)?.checked_mul(6)?))
}

/// A box of `cubes` (each count positive) has fewer than 2^32 nodes and cells.
fn fits_32_bits(cubes: [usize; 3]) -> bool {
    let fit = |(nodes, cells): (u64, u64)| nodes.max(cells) < u32::MAX as u64;
    cubes.iter().all(|&c| c > 0) && box_counts(cubes).is_some_and(fit)
}

/// Refuse a key that the action (or smooth's method, or the mesh) does not use, as `[graph]`
/// refuses a key its generator does not take: one line naming the key and what it applies to.
fn refuse_inapplicable(source: &str, t: &MeshTable) -> Result<()> {
    let table = toml::Table::try_from(t).expect("a table of optional values serialises");
    let word = |key: &str| table.get(key).and_then(|v| v.as_str()).map(String::from);
    let action = word("action").unwrap_or_default();
    let method = word("method").unwrap_or("l2v".into());
    let mesh = t.mesh.as_ref().and_then(|m| m.first()).map_or("", |w| w.as_str());
    let needs_action = |a: &str| (action != a).then(|| format!("action = \"{a}\", not \"{action}\""));
    let needs_method = |m: &str| (method != m).then(|| format!("method = \"{m}\", not \"{method}\""));
    for key in table.keys() {
        let wrong = match key.as_str() {
            "method" | "iterations" | "tolerance" => needs_action("smooth"),
            "preconditioner" => needs_action("smooth").or_else(|| needs_method("l2v")),
            "smart" => needs_action("smooth").or_else(|| needs_method("laplace")),
            "parts" | "refine" => needs_action("partition"),
            // A generated mesh tags no patches.
            "free" if ["box", "ball", "ring"].contains(&mesh) => Some(format!("a mesh file's tagged patches, not `{mesh}`")),
            _ => None,
        };
        if let Some(wrong) = wrong {
            return Err(config_error(source, &format!("[mesh] {key} applies to {wrong}")));
        }
    }
    Ok(())
}

/// The least and greatest box extent. The deformation f = S / (6V) scales as 1 / length and
/// its sums are fixed point (2^-32 steps, saturating at 2^95: mesh::exact), so past this range
/// F loses its digits or saturates; further out, volumes and η leave f64's range.
const EXTENT_RANGE: std::ops::RangeInclusive<f64> = 1e-6..=1e6;

/// `box NX NY NZ`, `ball N`, `ring N` or a file name.
fn parse_source(deck: &str, words: &[String], t: &MeshTable) -> Result<Source> {
    let err = |msg: &str| config_error(deck, &format!("[mesh] mesh: {msg}"));
    match words {
        [] => Err(err("expected a file, `box NX NY NZ`, `ball N` or `ring N`")),
        [b, rest @ ..] if b == "box" => {
            let cubes: Vec<usize> = rest.iter().map(|w| w.parse().unwrap_or(0)).collect();
            let [nx, ny, nz] = cubes[..] else {
                return Err(err("box takes three cube counts: box NX NY NZ"));
            };
            if !fits_32_bits([nx, ny, nz]) {
                return Err(err("box NX NY NZ: positive counts with fewer than 2^32 nodes and cells"));
            }
            let extent = t.extent.clone().unwrap_or(vec![1.0; 3]);
            let [lx, ly, lz] = extent[..] else {
                return Err(config_error(deck, "[mesh] extent: expected three lengths LX,LY,LZ"));
            };
            if !extent.iter().all(|l| EXTENT_RANGE.contains(l)) {
                return Err(config_error(deck, "[mesh] extent: expected three lengths from 1e-6 to 1e6"));
            }
            Ok(Source::Box { cubes: [nx, ny, nz], extent: [lx, ly, lz], perturb: t.perturb, shape: None })
        }
        [b, n] if b == "ball" || b == "ring" => {
            let shape = if b == "ball" { Shape::Ball } else { Shape::Ring };
            let (cubes, extent) = shape.cubes_and_extent(n.parse().unwrap_or(0));
            if !fits_32_bits(cubes) {
                return Err(err(&format!("{b} N: a positive cube count with fewer than 2^32 nodes and cells")));
            }
            if t.perturb.is_some() || t.extent.is_some() {
                return Err(err(&format!("{b} N takes neither --perturb nor --extent (its shape is fixed)")));
            }
            Ok(Source::Box { cubes, extent, perturb: None, shape: Some(shape) })
        }
        [_] if t.perturb.is_some() => Err(err("--perturb applies to `box NX NY NZ` meshes")),
        [_] if t.extent.is_some() => Err(err("--extent applies to `box NX NY NZ` meshes")),
        [file] => Ok(Source::File { path: PathBuf::from(file), free: t.free.clone().unwrap_or_default() }),
        _ => Err(err("expected one file, `box NX NY NZ`, `ball N` or `ring N`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(words: &[&str]) -> Result<Source> {
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        parse_source("deck.toml", &words, &MeshTable::default())
    }

    /// Generated meshes of 2^32 nodes or cells or more, or of no cubes, are one clear error,
    /// however large the counts (no overflow); the shapes make the boxes they map.
    #[test]
    fn generated_sizes_are_checked_without_overflow() {
        for words in [
            &["box", "0", "3", "3"][..],
            &["box", "4294967296", "4294967296", "2"],
            &["box", "18446744073709551615", "1", "1"],
            &["box", "2000", "2000", "1100"],
            &["ball", "0"],
            &["ball", "1626"],
            &["ring", "3000000000000000000"],
            &["ring", "800"],
        ] {
            let e = source(words).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains("fewer than 2^32 nodes and cells"), "{words:?}: {e:?}");
        }
        assert!(fits_32_bits([1625, 1, 1]) && fits_32_bits([1, 1, 715_827_881]));
        let Ok(Source::Box { cubes, extent, shape, .. }) = source(&["ring", "3"]) else {
            panic!("ring 3")
        };
        assert_eq!((cubes, extent, shape), ([3, 24, 3], [1.0; 3], Some(Shape::Ring)));
    }
}
