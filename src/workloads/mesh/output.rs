//! The report of a mesh run: `/mesh` (sizes, quality before and after with histograms, the
//! smoothing history, partition measures) and the mesh itself as a `/VTKHDF`
//! UnstructuredGrid (VTKHDF 1.0: one piece; `Type` a fixed-length ASCII attribute, as VTK
//! reads it), which ParaView and the `vtk` package open when the file is named `.vtkhdf` or
//! `.hdf`. Point data: fixed, displacement, part; cell data: quality (η), volume, part.

use super::{Action, MeshWorkload};
use crate::harness::Harness;
use crate::mesh::partition::Measures;
use crate::mesh::quality::{self, Summary};
use crate::mesh::readers::vtkhdf::{VTK_TETRA, VTK_TRIANGLE};
use crate::mesh::smooth::{Method, Record};
use crate::mesh::{geometry, Mesh};
use crate::report::{Report, Section};

/// What the action found, for the report.
#[derive(Default)]
pub struct Outcome {
    pub before: Option<Summary>,
    pub after: Option<Summary>,
    pub records: Vec<Record>,
    pub smooth_seconds: f64,
    /// Smoothed positions (rank 0 only).
    pub positions: Option<[Vec<f64>; 3]>,
    /// The part (or owning rank) of each node.
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

impl Outcome {
    pub fn new(mesh: &Mesh) -> Outcome {
        Outcome {
            owner: vec![0; mesh.num_nodes()],
            ..Outcome::default()
        }
    }
}

pub fn report(w: &MeshWorkload, h: &Harness, mesh: &Mesh, out: &Outcome, write_mesh: bool) -> Report {
    let mut report = Report::new();
    let mut g = report.group("mesh");
    let action = match w.action {
        Action::Generate => "generate",
        Action::Smooth => "smooth",
        Action::Partition => "partition",
    };
    g.text("action", action)
        .count("nodes", mesh.num_nodes() as u64)
        .count("cells", mesh.num_cells() as u64)
        .count("fixed_nodes", mesh.fixed.iter().filter(|&&f| f).count() as u64);
    let final_mesh = smoothed(mesh, out);
    match (&out.before, &out.after) {
        (Some(b), Some(a)) => {
            quality_section(&mut report.group("mesh/quality/before"), b, "_before");
            quality_section(&mut report.group("mesh/quality/after"), a, "_after");
            history(&mut report, w, out, h.world.size(), mesh);
        }
        _ => quality_section(&mut report.group("mesh/quality"), &quality::summarize(mesh, |_| true), ""),
    }
    if let Some(m) = &out.measures {
        partition_section(&mut report, w, out, m);
    }
    if write_mesh {
        vtkhdf(&mut report, mesh, &final_mesh, &out.owner);
    }
    report
}

/// The mesh with the smoothed positions (the input where nothing was smoothed).
fn smoothed(mesh: &Mesh, out: &Outcome) -> Mesh {
    match &out.positions {
        Some([x, y, z]) => Mesh { x: x.clone(), y: y.clone(), z: z.clone(), ..mesh.clone() },
        None => mesh.clone(),
    }
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

fn history(report: &mut Report, w: &MeshWorkload, out: &Outcome, ranks: usize, mesh: &Mesh) {
    let r = &out.records;
    let col = |f: fn(&Record) -> f64| r.iter().map(f).collect::<Vec<f64>>();
    // Node updates: every free node once per iteration.
    let free = mesh.fixed.iter().filter(|&&f| !f).count();
    let updates = free * r.len();
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

/// The `/VTKHDF` group: `mesh` positions as points, displacement from `input`.
fn vtkhdf(report: &mut Report, input: &Mesh, mesh: &Mesh, part: &[u32]) {
    let (n, c, k) = (mesh.num_nodes(), mesh.num_cells(), mesh.corners());
    let points: Vec<f64> = (0..n).flat_map(|i| mesh.point(i)).collect();
    let displacement: Vec<f64> = (0..n)
        .flat_map(|i| geometry::sub(&mesh.point(i), &input.point(i)))
        .collect();
    let q = quality::cell_quality(mesh);
    let cell_part: Vec<u32> = (0..c).map(|i| part[*mesh.cell(i).iter().min().unwrap() as usize]).collect();
    let kind = if k == 4 { VTK_TETRA } else { VTK_TRIANGLE };
    let mut g = report.group("VTKHDF");
    g.counts("Version", &[1, 0]).stored_only();
    g.ascii("Type", "UnstructuredGrid");
    g.data("NumberOfPoints", vec![n as i64])
        .data("NumberOfCells", vec![c as i64])
        .data("NumberOfConnectivityIds", vec![(c * k) as i64])
        .data_2d("Points", n, points)
        .data("Connectivity", mesh.cells.iter().map(|&v| v as i64).collect::<Vec<i64>>())
        .data("Offsets", (0..=c).map(|i| (i * k) as i64).collect::<Vec<i64>>())
        .data("Types", vec![kind; c]);
    report
        .group("VTKHDF/PointData")
        .data_2d("displacement", n, displacement)
        .data("part", part.to_vec())
        .data("fixed", mesh.fixed.iter().map(|&f| u8::from(f)).collect::<Vec<u8>>());
    report
        .group("VTKHDF/CellData")
        .data("quality", q.eta)
        .data("volume", q.volume)
        .data("part", cell_part);
}
