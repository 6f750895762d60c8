//! `tessera ssca2`: the four timed kernels of the HPCS SSCA#2 benchmark (v2.2; McGuinness,
//! MSc thesis, UMass Amherst, 2011, §2.3) on the SSCA#2 generator's weighted directed graph,
//! generated untimed first:
//! kernel 1 builds the weighted arc graph, out- and in-rows, parallel arcs kept (`graph::arcs`);
//! kernel 2 finds every maximum-weight arc and kernel 3 the vertices within 3 out-hops of
//! each one's end (`extract`); kernel 4 is betweenness centrality from 2^K4approx sources
//! among vertices with out-arcs, over the arcs whose weight is not divisible by 8, parallel
//! arcs as distinct paths (`graph::betweenness`, as `tessera bc`), rated as the reference
//! rates it: 7·N·2^K4approx edges over its seconds.

pub mod extract;

use crate::comm::Triple;
use crate::error::Result;
use crate::graph::arcs::{ArcGraph, ArcOptions};
use crate::graph::arcs_gpu;
use crate::graph::betweenness::view::Keep;
use crate::graph::betweenness::{self, bad_key, Distribution, Replicate};
use crate::graph::build::{self, Need};
use crate::graph::roots::pick_vertices;
use crate::graph::source::{Generator, GraphConfig, GraphSpec};
use crate::harness::{Harness, Workload};
use crate::report::Report;
use serde::{Deserialize, Serialize};

/// `[ssca2]`. Also the `tessera ssca2` flags (SCALE is `[graph]`'s: `--scale`).
#[derive(Debug, Default, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct Ssca2Table {
    /// log2 of kernel 4's sources, at most SCALE (default min(SCALE, 10), the reference's)
    #[arg(long)]
    pub k4approx: Option<u32>,
    /// full (whole graph on every rank, sources split), distributed (1D partition), or
    /// auto (full where it fits in half the memory, the GPU's on GPUs; default)
    #[arg(long, value_enum)]
    pub replicate: Option<Replicate>,
    /// Kernel 4's sources per batch, 1 to 64 (default: the most that fit, up to 64)
    #[arg(long)]
    pub batch: Option<u64>,
    /// Store every vertex's BC in the HDF5 file
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub write_vertex_values: Option<bool>,
}

pub struct Ssca2 {
    graph: GraphConfig,
    scale: u32,
    k4approx: u32,
    replicate: Replicate,
    batch: Option<usize>,
    write_vertex_values: bool,
}

/// Kernel 4 counts arcs whose weight is not divisible by 8 (the reference's filter).
fn kernel4_arc(weight: u64) -> bool {
    !weight.is_multiple_of(8)
}

impl Workload for Ssca2 {
    const NAME: &'static str = "ssca2";
    const ABOUT: &'static str =
        "SSCA#2 kernels 1-4: weighted graph, maximum-weight arcs, subgraphs, betweenness";
    const GRAPH: bool = true;
    const GENERATOR: Generator = Generator::Ssca2;
    type Table = Ssca2Table;

    fn configure(source: &str, t: Ssca2Table, graph: Option<GraphConfig>) -> Result<Self> {
        let graph = graph.expect("ssca2 takes a graph");
        let GraphSpec::Ssca2 { scale } = graph.spec else {
            return Err(bad_key(
                source,
                "graph",
                "generator",
                "tessera ssca2 runs on the SSCA#2 generator's weighted graph: set [graph] generator = \"ssca2\" (or leave it out)",
            ));
        };
        let k4approx = t.k4approx.unwrap_or(scale.min(10));
        if k4approx > scale {
            return Err(bad_key(
                source,
                "ssca2",
                "k4approx",
                &format!("k4approx = {k4approx} exceeds SCALE = {scale}: give at most {scale}"),
            ));
        }
        Ok(Ssca2 {
            graph,
            scale,
            k4approx,
            replicate: t.replicate.unwrap_or(Replicate::Auto),
            batch: betweenness::check_batch(source, "ssca2", t.batch)?,
            write_vertex_values: t.write_vertex_values.unwrap_or(false),
        })
    }

    fn check_sizes(&self, h: &Harness) -> Result<()> {
        build::check_before_making(h.world, &self.graph, &Need::arcs(&h.device, &self.graph))
    }

    fn execute(&self, h: &Harness) -> Result<Report> {
        let world = h.world;
        let seed = h.run.seed;
        let need = Need::arcs(&h.device, &self.graph);
        let source = build::open(world, &self.graph, seed, &need)?;
        let source = source.as_ref();
        let options = ArcOptions {
            directed: true,
            merge_parallel: false,
        };
        let (g, k1) = match build::arcs_on_gpu(world, &h.device, &self.graph, source)? {
            // The GPU makes the tuples inside kernel 1, in each of its passes.
            Some(on) => timed(h, "kernel1", || arcs_gpu::build(world, &on, source, options))?,
            None => {
                build::check_before_making(world, &self.graph, &Need::ARCS)?;
                let tuples = h.timed("generate", || Ok(build::edge_list_of(source)))?;
                timed(h, "kernel1", || ArcGraph::build(world, &tuples, options))?
            }
        };
        let (heavy, k2) = timed(h, "kernel2", || extract::max_weight_arcs(world, &g))?;
        let (sizes, k3) = timed(h, "kernel3", || extract::subgraph_sizes(world, &g, &heavy))?;
        let count = 1usize << self.k4approx;
        let sources = pick_vertices(world, &g.part, &|l| g.out.degree(l) > 0, seed, count)?;
        let distribution = self.replicate.resolve(world, &h.device, &g)?;
        let (c, k4) = timed(h, "kernel4", || {
            // The engine filters the arcs as it makes its rows' view, except where every
            // rank must gather the whole graph first (full on several ranks): then only the
            // kept arcs travel.
            let gathered = match distribution {
                Distribution::Full if world.size() > 1 => {
                    let started = std::time::Instant::now();
                    let whole = g.filtered(world, kernel4_arc).replicate(world)?;
                    let secs = started.elapsed().as_secs_f64();
                    log::info!("ssca2: kernel 4's arcs filtered and replicated in {secs:.3} s");
                    Some(whole)
                }
                _ => None,
            };
            let graph = match &gathered {
                Some(whole) => (whole, None),
                None => (&g, Some(&kernel4_arc as &Keep)),
            };
            let device = (&h.device, h.run.gpu_transport);
            betweenness::betweenness(world, device, graph, &sources, distribution, self.batch)
        })?;
        let arcs = c.arcs;
        let mut report = Report::new();
        report.headline(format!(
            "HPCS SSCA#2 v2.2: SCALE {}, K4approx {}, {} rank(s) on {}",
            self.scale,
            self.k4approx,
            world.size(),
            h.device_name()
        ));
        let mut r = report.group("ssca2");
        r.count("scale", self.scale);
        r.count("vertices", g.n());
        r.count("edges", g.num_arcs);
        r.seconds("kernel1_time", k1);
        r.count("max_weight", heavy.first().map_or(0, |t| t.2));
        r.count("max_weight_edges", heavy.len() as u64);
        r.seconds("kernel2_time", k2);
        let listed: Vec<String> = sizes.iter().map(u64::to_string).collect();
        r.shown_only("subgraph_vertices", listed.join(","));
        r.data("subgraph_vertices", sizes);
        r.seconds("kernel3_time", k3);
        r.count("k4approx", self.k4approx);
        r.count("kernel4_edges", arcs);
        r.text("replicate", distribution.name());
        r.seconds("kernel4_time", k4);
        let edges = 7.0 * g.n() as f64 * count as f64;
        r.rate("k4_teps", edges / k4, "TEPS");
        let col = |f: fn(&Triple) -> u64| heavy.iter().map(f).collect::<Vec<u64>>();
        r.data("max_weight_start", col(|t| t.0));
        r.data("max_weight_end", col(|t| t.1));
        betweenness::report(&mut r, &c, &sources, self.write_vertex_values);
        Ok(report)
    }
}

/// A phase through the harness, with its seconds.
fn timed<T>(h: &Harness, phase: &str, body: impl FnOnce() -> Result<T>) -> Result<(T, f64)> {
    let started = std::time::Instant::now();
    let out = h.timed(phase, body)?;
    Ok((out, started.elapsed().as_secs_f64()))
}
