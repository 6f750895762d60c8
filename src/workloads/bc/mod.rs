//! `tessera bc`: betweenness centrality of any `[graph]` graph over hop counts (Brandes
//! 2001), exact (every vertex a source) or from sampled sources drawn as BFS roots are,
//! directed or both ways, on the whole graph on every rank or on the 1D partition. The
//! engine is `graph::betweenness`, shared with SSCA#2's kernel 4: BC is bit-identical for
//! every rank count, batch size, distribution and device.

use crate::comm::Op;
use crate::error::{Error, Result};
use crate::graph::arcs::ArcOptions;
use crate::graph::betweenness::{self, bad_key, Distribution, Replicate};
use crate::graph::build::{self, Need};
use crate::graph::roots::pick_vertices;
use crate::graph::source::GraphConfig;
use crate::graph::Vid;
use crate::harness::{Harness, Workload};
use crate::report::Report;
use serde::{Deserialize, Serialize};

/// `[bc]`. Also the `tessera bc` flags (the graph is `[graph]`'s).
#[derive(Debug, Default, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct BcTable {
    /// Sources drawn among vertices with out-edges, as BFS roots are (default 64)
    #[arg(long)]
    pub sources: Option<u64>,
    /// Every vertex a source: exact BC (then `sources` is not given)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub exact: Option<bool>,
    /// Each edge tuple u v is the arc u -> v only (default: as the graph is; SSCA#2 graphs
    /// are directed, the rest undirected)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub directed: Option<bool>,
    /// Parallel edges as distinct shortest paths (default false: merged into one)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub parallel_paths: Option<bool>,
    /// full (whole graph on every rank, sources split), distributed (1D partition), or
    /// auto (full where it fits in half the memory, the GPU's on GPUs; default)
    #[arg(long, value_enum)]
    pub replicate: Option<Replicate>,
    /// Sources per batch, 1 to 64 (default: the most that fit, up to 64)
    #[arg(long)]
    pub batch: Option<u64>,
    /// Store every vertex's BC in the HDF5 file
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub write_vertex_values: Option<bool>,
}

/// Which sources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sources {
    All,
    Sampled(u64),
}

pub struct Bc {
    graph: GraphConfig,
    sources: Sources,
    directed: Option<bool>,
    parallel_paths: bool,
    replicate: Replicate,
    batch: Option<usize>,
    write_vertex_values: bool,
}

impl Workload for Bc {
    const NAME: &'static str = "bc";
    const ABOUT: &'static str =
        "Betweenness centrality (Brandes), exact or from sampled sources, on any graph";
    const GRAPH: bool = true;
    type Table = BcTable;

    fn configure(source: &str, t: BcTable, graph: Option<GraphConfig>) -> Result<Self> {
        let sources = match (t.exact.unwrap_or(false), t.sources) {
            (true, Some(_)) => {
                return Err(bad_key(
                    source,
                    "bc",
                    "sources",
                    "exact = true takes every vertex as a source: give one or the other",
                ))
            }
            (true, None) => Sources::All,
            (false, Some(0)) => {
                return Err(bad_key(source, "bc", "sources", "sources = 0: give at least 1"))
            }
            (false, k) => Sources::Sampled(k.unwrap_or(64)),
        };
        Ok(Bc {
            graph: graph.expect("bc takes a graph"),
            sources,
            directed: t.directed,
            parallel_paths: t.parallel_paths.unwrap_or(false),
            replicate: t.replicate.unwrap_or(Replicate::Auto),
            batch: betweenness::check_batch(source, "bc", t.batch)?,
            write_vertex_values: t.write_vertex_values.unwrap_or(false),
        })
    }

    fn check_sizes(&self, h: &Harness) -> Result<()> {
        build::check_before_making(h.world, &self.graph, &Need::arcs(&h.device, &self.graph))
    }

    fn execute(&self, h: &Harness) -> Result<Report> {
        let world = h.world;
        let g = h.timed("graph", || {
            let need = Need::arcs(&h.device, &self.graph);
            build::build_arcs(world, &self.graph, (h.run.seed, &h.device), &need, |s| {
                Ok(ArcOptions {
                    directed: self.directed.unwrap_or(s.is_directed()),
                    merge_parallel: !self.parallel_paths,
                })
            })
        })?;
        let sources: Vec<Vid> = match self.sources {
            Sources::All => (0..g.n()).collect(),
            Sources::Sampled(k) if k > g.n() => {
                return Err(Error::Unavailable(format!(
                    "[bc] sources = {k} exceeds the graph's {} vertices: give at most {0}, or exact = true",
                    g.n()
                )))
            }
            Sources::Sampled(k) => pick_vertices(
                world,
                &g.part,
                &|l| g.out.degree(l) > 0,
                h.run.seed,
                k as usize,
            )?,
        };
        let distribution = self.replicate.resolve(world, &h.device, &g)?;
        let whole;
        let graph = match distribution {
            // One rank holds the whole graph already.
            Distribution::Full if world.size() > 1 => {
                whole = h.timed("replicate", || g.replicate(world))?;
                &whole
            }
            _ => &g,
        };
        let (started, sent) = (std::time::Instant::now(), crate::comm::bytes_sent());
        let c = h.timed("betweenness", || {
            let device = (&h.device, h.run.gpu_transport);
            let graph = (graph, None);
            betweenness::betweenness(world, device, graph, &sources, distribution, self.batch)
        })?;
        // The sweeps' seconds: the set-up before the first batch (the rows' views and
        // uploads, the exchange's NCCL communicator) is reported apart.
        let seconds = started.elapsed().as_secs_f64() - c.setup_seconds;
        // Bytes each rank sent the others in the sweeps' exchanges, the mean over ranks.
        let sent = world.allreduce(crate::comm::bytes_sent() - sent, Op::Sum) / world.size() as u64;
        let mut report = Report::new();
        let mut r = report.group("bc");
        r.text("generator", self.graph.spec.kind()).stored_only();
        r.text("parameters", self.graph.spec.parameters()).stored_only();
        r.count("vertices", g.n());
        r.count("arcs", g.num_arcs);
        r.flag("directed", g.options.directed, "no");
        r.flag("exact", self.sources == Sources::All, "no");
        r.text("replicate", distribution.name());
        r.seconds("bc_time", seconds);
        r.seconds("bc_setup_time", c.setup_seconds);
        r.count("bytes_sent_per_rank", sent);
        r.rate(
            "traversed_arcs_per_second",
            g.num_arcs as f64 * sources.len() as f64 / seconds,
            "arcs/s",
        );
        betweenness::report(&mut r, &c, &sources, self.write_vertex_values);
        Ok(report)
    }
}
