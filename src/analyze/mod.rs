//! `tessera analyze`: the structure of any `[graph]` graph, as Leist's PhD thesis (2011),
//! §2.4-2.6 and §6.2, uses it: the degree distribution (`degrees`), triangles, local clustering and transitivity
//! (`triangles` on the CPU, `triangles_gpu` on the GPU, over the CSR copied to every rank:
//! the spec's `replicate = full`), and the mean shortest-path length and a diameter lower
//! bound from sampled BFS sources (`paths`, on the existing search). Every figure is the same
//! for every rank count and device.

pub mod degrees;
pub mod paths;
pub mod triangles;
pub mod triangles_gpu;

use crate::bfs::search::{self, Mode, Params};
use crate::comm::World;
use crate::device::Selected;
use crate::error::{Error, Result};
use crate::graph::build::host_memory_available;
use crate::graph::source::GraphConfig;
use crate::graph::DistGraph;
use crate::harness::{Harness, Workload};
use crate::output::ResultFile;
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

    fn execute(&self, h: &Harness) -> Result<Report> {
        self.execute_unreported(h)?;
        Ok(Report::new())
    }
}

impl Analyze {
    fn execute_unreported(&self, h: &Harness) -> Result<()> {
        let world = h.world;
        let mut built = h.build_graph(&self.graph, &|_, _| Ok(()))?;
        // For the sampled searches, which run on it; the triangles run on their own form.
        let device_csr = built.take_device_csr();
        let g = &built.graph;
        let degrees = h.timed("degrees", || degrees::dist_degree_stats(world, g))?;
        check_replica_fits(world, g)?;
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
            vertex_clustering,
            paths,
        };
        h.summary(&summary_rows(&findings));
        h.write_results(|file| {
            built.write(file, &self.graph, h.run.seed)?;
            self.write(file, &findings)
        })
    }
}

/// Fail with one line (on every rank alike) when the node cannot hold a copy of the whole
/// graph per rank for the triangle count (`replicate = full`): per rank about 10 bytes per
/// CSR entry (the copy, 8, and its oriented half in 32 bits, 2) and 44 bytes per vertex plus
/// 4 per vertex per worker thread (offsets, order, counts, slot arrays).
fn check_replica_fits(world: &World, g: &DistGraph) -> Result<()> {
    let threads = rayon::current_num_threads() as u64;
    let per_rank = 10 * g.num_entries + (44 + 4 * threads) * g.n();
    let needed = per_rank.saturating_mul(world.local_size() as u64);
    let available = host_memory_available(world);
    if needed <= available {
        return Ok(());
    }
    Err(Error::Unavailable(format!(
        "analyze copies the whole graph to every rank to count triangles: the {} rank(s) on a node need about {needed} bytes but {available} are available (MemAvailable, /proc/meminfo); run fewer ranks per node (their threads share one copy)",
        world.local_size()
    )))
}

fn summary_rows(f: &Findings) -> Vec<(&'static str, String)> {
    let d = &f.degrees;
    let t = &f.triangles;
    let mut rows = vec![
        ("vertices", d.vertices.to_string()),
        ("csr_entries", d.total.to_string()),
        ("degree_mean", format!("{:.6}", d.mean)),
        ("degree_variance", format!("{:.6}", d.variance)),
        ("degree_max", d.max.to_string()),
        ("isolated_vertices", d.isolated.to_string()),
        ("triangles", t.triangles.to_string()),
        ("transitivity", format!("{:.6}", t.transitivity)),
        (
            "mean_local_clustering",
            format!("{:.6}", t.mean_local_clustering),
        ),
        ("triangle_seconds", format!("{:.6}", f.triangle_seconds)),
        ("clustering_seconds", format!("{:.6}", f.clustering_seconds)),
        (
            "triangle_edges_per_second",
            format!("{:.4e}", f.triangle_rate),
        ),
    ];
    if let Some(p) = &f.paths {
        rows.push(("sources", p.sources.len().to_string()));
        rows.push(("mean_distance", format!("{:.6}", p.mean_distance)));
        rows.push(("diameter_lower_bound", p.diameter_lower_bound.to_string()));
    }
    rows
}

impl Analyze {
    /// `/analyze`: the figures as attributes, the histograms and per-source rows as datasets.
    fn write(&self, file: &ResultFile, f: &Findings) -> Result<()> {
        let group = file.group("analyze")?;
        let w = group.writer();
        let d = &f.degrees;
        w.attr("degree_mean", d.mean)?;
        w.attr("degree_variance", d.variance)?;
        w.attr("degree_skewness", d.skewness)?;
        w.attr("degree_excess_kurtosis", d.excess_kurtosis)?;
        w.attr("degree_max", d.max)?;
        w.attr("isolated_vertices", d.isolated)?;
        // The histogram up to its last non-empty bin, with each bin's smallest degree.
        let bins = d
            .histogram
            .iter()
            .rposition(|&c| c > 0)
            .map_or(0, |b| b + 1);
        group.dataset("degree_histogram", &d.histogram[..bins])?;
        let starts: Vec<u64> = (0..bins).map(bin_start).collect();
        group.dataset("degree_bin_start", &starts)?;
        let t = &f.triangles;
        w.attr("triangles", t.triangles)?;
        w.attr("wedges", t.wedges as f64)?;
        w.attr("transitivity", t.transitivity)?;
        w.attr("mean_local_clustering", t.mean_local_clustering)?;
        w.attr("triangle_seconds", f.triangle_seconds)?;
        w.attr("clustering_seconds", f.clustering_seconds)?;
        w.attr("triangle_edges_per_second", f.triangle_rate)?;
        group.dataset("clustering_histogram", &t.clustering_histogram)?;
        if let Some(clustering) = &f.vertex_clustering {
            group.dataset("vertex_triangles", &t.per_vertex)?;
            group.dataset("vertex_clustering", clustering)?;
        }
        if let Some(p) = &f.paths {
            write_paths(&group, p)?;
        }
        Ok(())
    }
}

fn write_paths(group: &crate::output::GroupWriter, p: &PathStats) -> Result<()> {
    let w = group.writer();
    w.attr("mean_distance", p.mean_distance)?;
    w.attr("diameter_lower_bound", p.diameter_lower_bound)?;
    w.attr("distance_pairs", p.pairs)?;
    group.dataset("distance_histogram", &p.distance_histogram)?;
    let rows = group.subgroup("sources")?;
    let col = |f: fn(&paths::SourceRow) -> u64| p.sources.iter().map(f).collect::<Vec<u64>>();
    rows.dataset("source", &col(|r| r.source))?;
    rows.dataset("reached", &col(|r| r.reached))?;
    rows.dataset("eccentricity", &col(|r| r.eccentricity))?;
    rows.dataset("distance_sum", &col(|r| r.distance_sum))
}
