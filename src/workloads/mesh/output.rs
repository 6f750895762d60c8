//! The report of a mesh run: `/mesh` (sizes, quality before and after with histograms, the
//! smoothing history, partition measures) and the mesh itself as a `/VTKHDF`
//! UnstructuredGrid (VTKHDF 1.0, one piece per rank, each rank writing its own; `Type` a
//! fixed-length ASCII attribute, as VTK reads it), which ParaView and the `vtk` package open
//! when the file is named `.vtkhdf` or `.hdf`. Point data: fixed, displacement, part,
//! global_id; cell data: quality (η), volume, part, global_id (the ids put the pieces back
//! together into the whole mesh: `mesh::readers::vtkhdf`).

use super::piece::Piece;
use super::{Action, MeshWorkload};
use crate::comm::Op;
use crate::harness::Harness;
use crate::mesh::patch::Patch;
use crate::mesh::partition::Measures;
use crate::mesh::quality::{self, Summary};
use crate::mesh::readers::vtkhdf::{VTK_TETRA, VTK_TRIANGLE};
use crate::mesh::smooth::{Method, Record};
use crate::mesh::Mesh;
use crate::report::{Report, Section};

/// What the action found, for the report.
#[derive(Default)]
pub struct Outcome {
    pub before: Option<Summary>,
    pub after: Option<Summary>,
    pub records: Vec<Record>,
    pub smooth_seconds: f64,
    /// This rank's piece of the mesh, where it is written.
    pub piece: Option<Piece>,
    /// The part of each node (partition).
    pub owner: Vec<u32>,
    /// This rank's neighbour ranks and the ghosts it receives from each.
    pub halo: Vec<(usize, usize)>,
    pub geometric: Option<Measures>,
    pub measures: Option<Measures>,
    pub partition_seconds: f64,
    pub partition_iterations: usize,
    pub refine_moves: usize,
    pub refine_seconds: f64,
}

/// The whole mesh's sizes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Totals {
    pub nodes: u64,
    pub cells: u64,
    pub fixed: u64,
}

impl Totals {
    pub fn of(mesh: &Mesh) -> Totals {
        Totals {
            nodes: mesh.num_nodes() as u64,
            cells: mesh.num_cells() as u64,
            fixed: mesh.fixed.iter().filter(|&&f| f).count() as u64,
        }
    }

    /// Summed over the ranks' owned nodes and counted cells.
    pub fn of_patch(h: &Harness, patch: &Patch) -> Totals {
        let owned = |keep: &dyn Fn(usize) -> bool| (0..patch.global.len()).filter(|&i| patch.owned[i] && keep(i)).count() as u64;
        let mut sums = [owned(&|_| true), patch.counted.iter().filter(|&&c| c).count() as u64, owned(&|i| patch.mesh.fixed[i])];
        h.world.allreduce_slice(&mut sums, Op::Sum);
        Totals { nodes: sums[0], cells: sums[1], fixed: sums[2] }
    }
}

impl Outcome {
    pub fn new(mesh: &Mesh) -> Outcome {
        Outcome {
            owner: vec![0; mesh.num_nodes()],
            ..Outcome::default()
        }
    }
}

/// The report; `input` is the whole input mesh where every rank holds it.
pub fn report(w: &MeshWorkload, h: &Harness, totals: &Totals, input: Option<&Mesh>, out: &Outcome) -> Report {
    let mut report = Report::new();
    let mut g = report.group("mesh");
    let action = match w.action {
        Action::Generate => "generate",
        Action::Smooth => "smooth",
        Action::Partition => "partition",
    };
    g.text("action", action)
        .count("nodes", totals.nodes)
        .count("cells", totals.cells)
        .count("fixed_nodes", totals.fixed);
    match (&out.before, &out.after, input) {
        (Some(b), Some(a), _) => {
            quality_section(&mut report.group("mesh/quality/before"), b, "_before");
            quality_section(&mut report.group("mesh/quality/after"), a, "_after");
            history(&mut report, w, out, h.world.size(), totals);
        }
        (_, _, Some(mesh)) => quality_section(&mut report.group("mesh/quality"), &quality::summarize(mesh, |_| true), ""),
        _ => {}
    }
    if let Some(m) = &out.measures {
        partition_section(&mut report, w, out, m);
    }
    if let Some(p) = &out.piece {
        vtkhdf(&mut report, p, h.world.rank());
    }
    report
}

fn quality_section(g: &mut Section, s: &Summary, label: &str) {
    let line = format!(
        "min eta {:.6}, mean eta {:.6}, inverted {}, F {:.9e}",
        s.min_eta,
        s.mean_eta(),
        s.inverted,
        s.deformation.value()
    );
    g.shown_only(&format!("quality{label}"), line);
    g.number("min_eta", s.min_eta, "").stored_only();
    g.number("mean_eta", s.mean_eta(), "").stored_only();
    g.count("inverted", s.inverted).stored_only();
    g.number("deformation", s.deformation.value(), "").stored_only();
    g.counts("below_0.1_0.2_0.3", &s.below).stored_only();
    g.number("min_volume", s.min_volume, "").stored_only();
    g.number("max_volume", s.max_volume, "").stored_only();
    g.data("histogram", s.histogram.to_vec());
}

fn history(report: &mut Report, w: &MeshWorkload, out: &Outcome, ranks: usize, totals: &Totals) {
    let r = &out.records;
    let col = |f: fn(&Record) -> f64| r.iter().map(f).collect::<Vec<f64>>();
    // Node updates: every free node once per iteration.
    let updates = (totals.nodes - totals.fixed) as usize * r.len();
    let mut g = report.group("mesh/history");
    g.text(
        "method",
        match w.method {
            Method::L2v => "l2v",
            Method::Laplace => "laplace",
            Method::OptColour => "opt-colour",
        },
    )
        .count("iterations", r.len() as u64)
        .seconds("seconds", out.smooth_seconds)
        .count("ranks", ranks as u64)
        .rate("node_updates_per_second", updates as f64 / out.smooth_seconds.max(1e-12), "updates/s")
        .data("deformation", col(|x| x.deformation))
        .data("min_eta", col(|x| x.min_eta))
        .data("mean_eta", col(|x| x.mean_eta))
        .data("inverted", r.iter().map(|x| x.inverted).collect::<Vec<u64>>())
        .data("max_move", col(|x| x.max_move))
        .data("seconds_cell", col(|x| x.seconds_cell))
        .data("seconds_node", col(|x| x.seconds_node))
        .data("seconds_exchange", col(|x| x.seconds_exchange));
    let ghosts: usize = out.halo.iter().map(|&(_, n)| n).sum();
    g.count("ghosts_rank0", ghosts as u64).stored_only();
}

fn partition_section(report: &mut Report, w: &MeshWorkload, out: &Outcome, m: &Measures) {
    let mut g = report.group("mesh/partition");
    g.count("parts", w.parts as u64)
        .count("iterations", out.partition_iterations as u64)
        .seconds("seconds", out.partition_seconds)
        .count("edge_cut", m.edge_cut)
        .count("communication_volume", m.communication_volume)
        .fixed("imbalance", m.imbalance, 4, "")
        .count("disconnected_parts", m.disconnected_parts)
        .data("sizes", m.sizes.clone())
        .data("halo", m.halo.clone());
    if let Some(geo) = out.geometric.as_ref().filter(|_| w.refine) {
        g.count("refine_moves", out.refine_moves as u64)
            .seconds("refine_seconds", out.refine_seconds)
            .count("geometric_edge_cut", geo.edge_cut)
            .fixed("geometric_imbalance", geo.imbalance, 4, "");
    }
}

/// The `/VTKHDF` group: every rank's piece written by that rank (VTKHDF 1.0 pieces: the
/// per-piece counts, then each piece's points, cells and data one after another, each
/// piece's connectivity numbering its own points).
fn vtkhdf(report: &mut Report, p: &Piece, rank: usize) {
    let k = p.mesh.corners();
    let before = |i: usize| p.sizes[..rank].iter().map(|s| s[i]).sum::<u64>() as usize;
    let total = |i: usize| p.sizes.iter().map(|s| s[i]).sum::<u64>() as usize;
    let (n0, c0, n, c) = (before(0), before(1), total(0), total(1));
    let (mine, pieces) = (p.mesh.num_cells(), p.sizes.len());
    let points: Vec<f64> = (0..p.mesh.num_nodes()).flat_map(|i| p.mesh.point(i)).collect();
    let q = quality::cell_quality(&p.mesh);
    let kind = if k == 4 { VTK_TETRA } else { VTK_TRIANGLE };
    let counts = |f: fn(&[u64; 2]) -> u64| p.sizes.iter().map(|s| f(s) as i64).collect::<Vec<i64>>();
    let mut g = report.group("VTKHDF");
    g.counts("Version", &[1, 0]).stored_only();
    g.ascii("Type", "UnstructuredGrid");
    g.data("NumberOfPoints", counts(|s| s[0]))
        .data("NumberOfCells", counts(|s| s[1]))
        .data("NumberOfConnectivityIds", p.sizes.iter().map(|s| (s[1] * k as u64) as i64).collect::<Vec<i64>>())
        .rows_part("Points", (n, 3), n0, points)
        .data_part("Connectivity", c * k, c0 * k, p.mesh.cells.iter().map(|&v| v as i64).collect::<Vec<i64>>())
        .data_part("Offsets", c + pieces, c0 + rank, (0..=mine).map(|i| (i * k) as i64).collect::<Vec<i64>>())
        .data_part("Types", c, c0, vec![kind; mine]);
    report
        .group("VTKHDF/PointData")
        .rows_part("displacement", (n, 3), n0, p.displacement.clone())
        .data_part("part", n, n0, p.node_part.clone())
        .data_part("fixed", n, n0, p.mesh.fixed.iter().map(|&f| u8::from(f)).collect::<Vec<u8>>())
        .data_part("global_id", n, n0, p.node_global.clone());
    report
        .group("VTKHDF/CellData")
        .data_part("quality", c, c0, q.eta)
        .data_part("volume", c, c0, q.volume)
        .data_part("part", c, c0, p.cell_part.clone())
        .data_part("global_id", c, c0, p.cell_global.clone());
}
