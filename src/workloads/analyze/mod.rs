//! `tessera analyze`: the structure of any `[graph]` graph, as Leist's PhD thesis (2011),
//! §2.4-2.6 and §6.2, uses it: the degree distribution (`degrees`), triangles, local clustering and transitivity
//! (`triangles` on the CPU, `triangles_gpu` on the GPU, over the CSR copied to every rank:
//! the spec's `replicate = full`), and the mean shortest-path length and a diameter lower
//! bound from sampled BFS sources (`paths`, on the existing search). Every figure is the same
//! for every rank count and device.

pub mod degrees;
pub mod paths;
pub mod triangle_plan;
pub mod triangles;
pub mod triangles_gpu;

use crate::bfs::search::{self, Mode, Params};
use crate::device::Selected;
use crate::error::Result;
use crate::graph::build::{self, Need};
use crate::graph::source::GraphConfig;
use crate::harness::{Harness, Workload};
use crate::report::Report;
use degrees::{bin_start, DegreeStats};
use paths::PathStats;
use serde::{Deserialize, Serialize};
use triangles::TriangleStats;

/// `[analyze]`. Also the `tessera analyze` flags (the graph is `[graph]`'s).
#[derive(Debug, Default, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct AnalyzeTable {
    /// BFS sources sampled for path lengths (default 16; 0 skips them)
    #[arg(long)]
    pub sources: Option<u32>,
    /// Store each vertex's triangles and local clustering in the HDF5 file
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub write_vertex_values: Option<bool>,
}

pub struct Analyze {
    graph: GraphConfig,
    sources: u32,
    write_vertex_values: bool,
}

/// What the analysis found.
struct Findings {
    degrees: DegreeStats,
    triangles: TriangleStats,
    /// Seconds of the triangle count (kernel time on a GPU, the phase on a CPU).
    triangle_seconds: f64,
    /// Seconds of the count with every vertex's triangles (the same phase on a CPU).
    clustering_seconds: f64,
    /// Undirected edges counted per second.
    triangle_rate: f64,
    /// On a GPU: probes, bytes read and the device's copy rate (`triangles_gpu`).
    kernel: Option<triangles_gpu::KernelSeconds>,
    /// C_v of every vertex, when the file keeps them.
    vertex_clustering: Option<Vec<f64>>,
    paths: Option<PathStats>,
}

impl Workload for Analyze {
    const NAME: &'static str = "analyze";
    const ABOUT: &'static str =
        "Degree distribution, triangles and clustering, and sampled path lengths of a graph";
    const GRAPH: bool = true;
    type Table = AnalyzeTable;

    fn configure(_: &str, t: AnalyzeTable, graph: Option<GraphConfig>) -> Result<Self> {
        Ok(Analyze {
            graph: graph.expect("analyze takes a graph"),
            sources: t.sources.unwrap_or(16),
            write_vertex_values: t.write_vertex_values.unwrap_or(false),
        })
    }

    /// The graph and the copy of it every rank holds for the triangle count, against host
    /// memory before the graph is made (a file's once its header is read: see `execute`).
    fn check_sizes(&self, h: &Harness) -> Result<()> {
        build::check_before_making(h.world, &self.graph, &replica_need())
    }

    fn execute(&self, h: &Harness) -> Result<Report> {
        let world = h.world;
        let mut built = h.build_graph(&self.graph, &|_, _| Ok(()))?;
        // For the sampled searches, which run on it; the triangles run on their own form.
        let device_csr = built.take_device_csr();
        let g = &built.graph;
        let degrees = h.timed("degrees", || degrees::dist_degree_stats(world, g))?;
        if self.graph.spec.size().is_none() {
            let size = (g.n(), g.num_entries / 2);
            build::check_host(world, &self.graph, size, &replica_need())?;
        }
        let csr = h.timed("replicate", || triangles::replicate(world, g))?;
        let started = std::time::Instant::now();
        let (triangles, kernel) = h.timed("triangles", || match &h.device {
            Selected::Cpu => Ok((triangles::count_triangles(world, &csr)?, None)),
            Selected::Gpu(gpu) => {
                let (stats, secs) = triangles_gpu::count_triangles_gpu(world, gpu, &csr)?;
                Ok((stats, Some(secs)))
            }
        })?;
        // On the CPU one pass counts both; on the GPU the kernels' own seconds.
        let phase = started.elapsed().as_secs_f64();
        let (triangle_seconds, clustering_seconds) =
            kernel.map_or((phase, phase), |k| (k.count, k.corners));
        let vertex_clustering = self.write_vertex_values.then(|| {
            (0..csr.n())
                .map(|v| {
                    triangles::local_clustering(triangles.per_vertex[v as usize], csr.degree(v))
                })
                .collect()
        });
        drop(csr);
        let paths = match self.sources {
            0 => None,
            count => Some(h.timed("paths", || {
                let mut frontiers =
                    search::frontiers(world, &h.device, h.run.gpu_transport, g, device_csr)?;
                let params = Params {
                    mode: Mode::Hybrid,
                    alpha: 14.0,
                    beta: 24.0,
                };
                paths::sample_paths(
                    world,
                    g,
                    frontiers.as_mut(),
                    &params,
                    h.run.seed,
                    count as usize,
                )
            })?),
        };
        let findings = Findings {
            degrees,
            triangles,
            triangle_seconds,
            clustering_seconds,
            triangle_rate: g.num_entries as f64 / 2.0 / triangle_seconds,
            kernel,
            vertex_clustering,
            paths,
        };
        let mut report = Report::new();
        built.report(&mut report, &self.graph, h.run.seed);
        report_findings(&mut report, &findings);
        Ok(report)
    }
}

/// Host memory for the graph and, on every rank, the copy of it the triangle count takes
/// (`replicate = full`): about 10 bytes per CSR entry (the copy, 8, and its oriented half
/// in 32 bits, 2), two entries per tuple, 12 more per tuple for the GPU count's work plan
/// (`triangle_plan`: its sorted pairs and partner lists), and 44 bytes per vertex plus 4 per vertex per
/// worker thread (offsets, order, counts, slot arrays).
fn replica_need() -> Need {
    let threads = rayon::current_num_threads() as u64;
    Need {
        what: "the graph with its copy on every rank for the triangle count (fewer ranks per node need fewer copies)",
        every_rank: (44 + 4 * threads, 32),
        ..Need::CSR
    }
}

/// `/analyze`: the figures, the histograms and the per-source rows.
fn report_findings(report: &mut Report, f: &Findings) {
    let mut r = report.group("analyze");
    let d = &f.degrees;
    r.shown_only("vertices", d.vertices.to_string());
    r.shown_only("csr_entries", d.total.to_string());
    r.fixed("degree_mean", d.mean, 6, "");
    r.fixed("degree_variance", d.variance, 6, "");
    r.fixed("degree_skewness", d.skewness, 6, "").stored_only();
    r.fixed("degree_excess_kurtosis", d.excess_kurtosis, 6, "")
        .stored_only();
    r.count("degree_max", d.max);
    r.count("isolated_vertices", d.isolated);
    // The histogram up to its last non-empty bin, with each bin's smallest degree.
    let bins = d
        .histogram
        .iter()
        .rposition(|&c| c > 0)
        .map_or(0, |b| b + 1);
    r.data("degree_histogram", &d.histogram[..bins]);
    r.data(
        "degree_bin_start",
        (0..bins).map(bin_start).collect::<Vec<u64>>(),
    );
    let t = &f.triangles;
    r.count("triangles", t.triangles);
    r.number("wedges", t.wedges as f64, "").stored_only();
    r.fixed("transitivity", t.transitivity, 6, "");
    r.fixed("mean_local_clustering", t.mean_local_clustering, 6, "");
    r.seconds("triangle_seconds", f.triangle_seconds);
    r.seconds("clustering_seconds", f.clustering_seconds);
    r.rate("triangle_edges_per_second", f.triangle_rate, "edges/s");
    if let Some(k) = &f.kernel {
        report_traffic(&mut r, k, d.total / 2, f.triangle_seconds);
    }
    r.data("clustering_histogram", t.clustering_histogram.as_slice());
    if let Some(clustering) = &f.vertex_clustering {
        r.data("vertex_triangles", t.per_vertex.as_slice());
        r.data("vertex_clustering", clustering.as_slice());
    }
    if let Some(p) = &f.paths {
        report_paths(&mut r, p);
    }
}

/// The GPU count's probes per undirected edge and bytes read per second, beside the
/// device's own copy rate (read plus written): how near the memory's pace the count runs.
fn report_traffic(
    r: &mut crate::report::Section,
    k: &triangles_gpu::KernelSeconds,
    edges: u64,
    seconds: f64,
) {
    r.count("triangle_probes", k.probes).stored_only();
    r.fixed(
        "triangle_probes_per_edge",
        k.probes as f64 / edges.max(1) as f64,
        1,
        "",
    );
    r.count("triangle_bytes_read", k.bytes).stored_only();
    let rate = k.bytes as f64 / seconds;
    r.rate("triangle_bytes_per_second", rate, "bytes/s");
    if k.copy_rate > 0.0 {
        r.rate("device_copy_bytes_per_second", k.copy_rate, "bytes/s");
        r.fixed("triangle_bandwidth_fraction", rate / k.copy_rate, 3, "");
    }
}

fn report_paths(r: &mut crate::report::Section, p: &PathStats) {
    r.shown_only("sources", p.sources.len().to_string());
    r.fixed("mean_distance", p.mean_distance, 6, "");
    r.count("diameter_lower_bound", p.diameter_lower_bound);
    r.count("distance_pairs", p.pairs).stored_only();
    r.data("distance_histogram", p.distance_histogram.as_slice());
    let mut rows = r.subgroup("sources");
    let col = |f: fn(&paths::SourceRow) -> u64| p.sources.iter().map(f).collect::<Vec<u64>>();
    rows.data("source", col(|r| r.source));
    rows.data("reached", col(|r| r.reached));
    rows.data("eccentricity", col(|r| r.eccentricity));
    rows.data("distance_sum", col(|r| r.distance_sum));
}
