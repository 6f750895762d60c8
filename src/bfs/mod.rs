//! Graph500 BFS (spec steps 1-6) on the harness: the graph from `[graph]` (kernel 1 timed by
//! `graph::build`), the roots, one timed search per root (kernel 2, `algo::bfs` behind the
//! device's `Frontiers`), validation apart from the search, and the reference's statistics
//! block and the HDF5 file.

mod report;

pub use report::format_g;

use crate::algo::bfs::{self, LevelStats, Mode, Params};
use crate::algo::{bfs_gpu, roots, validate};
use crate::comm::{Op, World};
use crate::config::out_of_range;
use crate::device::Selected;
use crate::error::{Error, Result};
use crate::graph::build::{proc_kb, Built};
use crate::graph::source::GraphConfig;
use crate::graph::{Block1D, DistGraph, Vid};
use crate::harness::{Harness, Workload};

/// Default alphas: Beamer's on the CPU. On a GPU a top-down level costs more per edge than a
/// bottom-up one (atomic claims against sequential row scans), so switching earlier pays: at
/// 14, searches whose second frontier held a few thousand hubs stayed top-down over ~1.5e8
/// edges and took 17-19 ms instead of 3-8 (the bimodal times); 28, 56 and 112 gave harmonic
/// means of 2.33e11, 2.37e11 and 2.19e11 TEPS against 1.68e11 (one H100, Kronecker SCALE 26,
/// 64 roots, docs/benchmarks.md).
const CPU_ALPHA: f64 = 14.0;
const GPU_ALPHA: f64 = 56.0;

/// Bytes of the plain device copy whose rate the report sets beside the searches' traffic.
const COPY_TEST_BYTES: usize = 1 << 28;
use crate::stats::Teps;
use log::info;
use rayon::prelude::*;
use report::{format_line, statistics_block, write_trials};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// `[bfs]`: the searches. Also the `tessera bfs` flags (the graph is `[graph]`'s).
#[derive(Debug, Default, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct BfsTable {
    /// Number of search keys (Graph500 NBFS)
    #[arg(long)]
    pub roots: Option<u32>,
    /// Direction policy
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// Switch to bottom-up when frontier edges exceed unexplored edges / alpha (default 14 on
    /// the CPU, Beamer's; 56 on GPUs, measured)
    #[arg(long)]
    pub alpha: Option<f64>,
    /// Switch back to top-down when the frontier falls below N / beta
    #[arg(long)]
    pub beta: Option<f64>,
    /// Validate every search (default true; `--validate false` to skip)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub validate: Option<bool>,
    /// Store every search's depth array in the HDF5 file (for small graphs)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub write_depths: Option<bool>,
}

/// Graph500 BFS, configured.
pub struct Bfs {
    graph: GraphConfig,
    roots: u32,
    /// With the CPU's alpha where the deck sets none (`params` gives the device's).
    params: Params,
    alpha_given: bool,
    validate: bool,
    write_depths: bool,
}

impl Workload for Bfs {
    const NAME: &'static str = "bfs";
    const ABOUT: &'static str = "Graph500 BFS on a generated graph or a graph file";
    const GRAPH: bool = true;
    type Table = BfsTable;

    fn configure(source: &str, t: BfsTable, graph: Option<GraphConfig>) -> Result<Self> {
        let roots = t.roots.unwrap_or(64);
        if !(1..=1 << 16).contains(&roots) {
            return Err(out_of_range(
                source,
                "[bfs] roots",
                roots,
                "an integer in 1..=65536",
            ));
        }
        let alpha = t.alpha.unwrap_or(CPU_ALPHA);
        let beta = t.beta.unwrap_or(24.0);
        for (key, v) in [("[bfs] alpha", alpha), ("[bfs] beta", beta)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(out_of_range(source, key, v, "a finite number > 0"));
            }
        }
        Ok(Bfs {
            graph: graph.expect("bfs takes a graph"),
            roots,
            params: Params {
                mode: t.mode.unwrap_or(Mode::Hybrid),
                alpha,
                beta,
            },
            alpha_given: t.alpha.is_some(),
            validate: t.validate.unwrap_or(true),
            write_depths: t.write_depths.unwrap_or(false),
        })
    }

    fn execute(&self, h: &Harness) -> Result<()> {
        let world = h.world;
        let generated = self.graph.spec.scale().is_some();
        let fits = |part: &Block1D, entries: u64| match &h.device {
            Selected::Gpu(gpu) => bfs_gpu::check_memory(world, gpu, part, entries, true, generated),
            Selected::Cpu => Ok(()),
        };
        let mut built = h.build_graph(&self.graph, &fits)?;
        let device_csr = built.take_device_csr();
        let g = &built.graph;
        let roots = roots::pick_roots(world, g, h.run.seed, self.roots as usize)?;
        if roots.is_empty() {
            return Err(Error::Unavailable(format!(
                "the graph ({} vertices) has no vertex with an edge other than a self-loop: there is nothing to search",
                g.n()
            )));
        }
        if roots.len() < self.roots as usize {
            log::warn!(
                "only {} vertices have an edge other than a self-loop: running {} searches instead of {}",
                roots.len(),
                roots.len(),
                self.roots
            );
        }
        // Declared before the frontiers, so it outlives them: a GPU may have page-locked it.
        let mut parent = vec![-1i64; g.local_n()];
        // Measured before the search buffers take their memory; a failure costs only the figure.
        let copy_rate = match &h.device {
            Selected::Gpu(gpu) => gpu
                .copy_rate(COPY_TEST_BYTES)
                .inspect_err(|e| log::warn!("no device copy rate: {e}"))
                .ok(),
            Selected::Cpu => None,
        };
        let mut frontiers = bfs::frontiers(world, &h.device, h.run.gpu_transport, g, device_csr)?;
        let transport = frontiers.transport();
        if world.size() > 1 {
            info!("exchanges between ranks over {transport}");
        }
        // One untimed copy before the searches: a GPU page-locks `parent` on its first copy.
        frontiers.parents(&mut parent)?;
        let trials = h.trials("bfs", roots.len(), |i| {
            let root = roots[i];
            world.barrier();
            let t = Instant::now();
            let levels = bfs::bfs(
                world,
                g.n(),
                g.num_entries,
                frontiers.as_mut(),
                root,
                &self.params(&h.device),
            )?;
            // The Graph500 time: the search ends when its parent array is complete in the
            // memory of the device that computed it (every rank's, hence the barrier). The
            // copy to the host belongs to validation; its time is kept as a second figure.
            world.barrier();
            let time = t.elapsed().as_secs_f64();
            frontiers.parents(&mut parent)?;
            world.barrier();
            let with_copy = t.elapsed().as_secs_f64();
            let trial = self.verify(world, g, root, &parent, levels, (time, with_copy))?;
            info!(
                "root {}/{} ({root}): {} levels, nedge {}, {time:.6} s, {:.4e} TEPS{}",
                i + 1,
                roots.len(),
                trial.levels.len(),
                trial.nedge,
                trial.nedge as f64 / time,
                if self.validate { ", valid" } else { "" }
            );
            Ok(trial)
        })?;
        self.report(h, &built, &trials, (transport, copy_rate))
    }
}

/// One search's record.
pub struct Trial {
    root: Vid,
    /// Seconds until the parents are complete in the memory of the device that computed
    /// them (the Graph500 time).
    time: f64,
    /// Seconds until the parents are in host memory (`time` on the CPU, plus the copy on a GPU).
    with_copy: f64,
    nedge: u64,
    validate_time: f64,
    levels: Vec<LevelStats>,
    depths: Vec<i32>,
}

impl Bfs {
    /// The direction switches on `device`: a GPU's default alpha where the deck sets none.
    fn params(&self, device: &Selected) -> Params {
        match device {
            Selected::Gpu(_) if !self.alpha_given => Params {
                alpha: GPU_ALPHA,
                ..self.params
            },
            _ => self.params,
        }
    }

    /// Validate one search (when asked), count its edges and gather what the file keeps.
    fn verify(
        &self,
        world: &World,
        g: &DistGraph,
        root: Vid,
        parent: &[i64],
        levels: Vec<LevelStats>,
        (time, with_copy): (f64, f64),
    ) -> Result<Trial> {
        let t = Instant::now();
        let depths = if self.validate {
            validate::validate(world, g, root, parent)?
        } else if self.write_depths {
            validate::tree_levels(world, g, root, parent)?
        } else {
            Vec::new()
        };
        let validate_time = if self.validate {
            t.elapsed().as_secs_f64()
        } else {
            -1.0
        };
        let depths = if self.write_depths {
            world.gatherv_root(&depths)?
        } else {
            Vec::new()
        };
        Ok(Trial {
            root,
            time,
            with_copy,
            nedge: component_edges(world, g, parent),
            validate_time,
            levels: reduce_level_times(world, levels),
            depths,
        })
    }

    /// The statistics block on stdout and the result file.
    /// `copy_rate`: rank 0's GPU's plain copy rate (bytes per second), on a GPU run.
    fn report(
        &self,
        h: &Harness,
        built: &Built,
        trials: &[Trial],
        (transport, copy_rate): (&str, Option<f64>),
    ) -> Result<()> {
        let world = h.world;
        let g = &built.graph;
        let peak_rss = world.allreduce(peak_rss_bytes(), Op::Max);
        let csr_bytes = world.allreduce(g.csr_bytes(), Op::Max);
        let block = statistics_block(world.size(), built, trials);
        let with_copy: Vec<f64> = trials.iter().map(|t| t.with_copy).collect();
        let nedges: Vec<u64> = trials.iter().map(|t| t.nedge).collect();
        let teps_with_copy = Teps::of(&with_copy, &nedges).harmonic_mean;
        if world.is_root() {
            for (name, value) in &block {
                println!("{}", format_line(name, value));
            }
            println!(
                "harmonic_mean_TEPS_with_copy_to_host: {}",
                format_g(teps_with_copy, 6)
            );
            if let Some(rate) = copy_rate {
                println!("device_copy_bytes_per_second:   {}", format_g(rate, 4));
            }
            println!("peak_rss_max_rank_bytes:        {peak_rss}");
            println!("csr_bytes_max_rank:             {csr_bytes}");
        }
        h.write_results(|file| {
            built.write(file, &self.graph, h.run.seed)?;
            let group = file.group("bfs")?;
            let w = group.writer();
            for (name, value) in &block {
                w.attr(name, value.number())?;
            }
            w.attr_str("graph", self.graph.spec.kind())?;
            w.attr_str("graph_parameters", &self.graph.spec.parameters())?;
            w.attr("num_vertices", g.n())?;
            w.attr("num_input_edges", g.num_input_edges)?;
            w.attr("num_csr_entries", g.num_entries)?;
            w.attr("edge_checksum", built.edge_checksum)?;
            w.attr("csr_checksum", built.csr_checksum)?;
            w.attr_str("construction_device", built.built_on)?;
            w.attr("validated", u8::from(self.validate))?;
            let params = self.params(&h.device);
            w.attr_str("mode", &format!("{:?}", params.mode))?;
            w.attr("alpha", params.alpha)?;
            w.attr("beta", params.beta)?;
            w.attr("peak_rss_max_rank_bytes", peak_rss)?;
            w.attr("harmonic_mean_TEPS_with_copy_to_host", teps_with_copy)?;
            w.attr("csr_bytes_max_rank", csr_bytes)?;
            w.attr_str("transport", transport)?;
            if let Some(rate) = copy_rate {
                w.attr("device_copy_bytes_per_second", rate)?;
            }
            write_trials(&group, trials, g.n())?;
            let construction_phases = group.subgroup("construction_phases")?;
            for (name, secs) in &built.phases {
                construction_phases.writer().attr(name, *secs)?;
            }
            Ok(())
        })
    }
}

/// nedge: input tuples (duplicates and self-loops included) whose endpoints were reached.
fn component_edges(world: &World, g: &DistGraph, parent: &[i64]) -> u64 {
    let ends: u64 = parent
        .par_iter()
        .zip(&g.tuple_ends)
        .filter(|(&p, _)| p >= 0)
        .map(|(_, &e)| e)
        .sum();
    world.allreduce(ends, Op::Sum) / 2
}

/// Per-level times as the slowest rank saw them.
fn reduce_level_times(world: &World, mut levels: Vec<LevelStats>) -> Vec<LevelStats> {
    let mut times: Vec<f64> = levels
        .iter()
        .flat_map(|l| [l.t_local, l.t_exchange, l.t_reduce])
        .collect();
    world.allreduce_slice(&mut times, Op::Max);
    for (l, t) in levels.iter_mut().zip(times.chunks(3)) {
        (l.t_local, l.t_exchange, l.t_reduce) = (t[0], t[1], t[2]);
    }
    levels
}

/// Peak resident set size of this process (VmHWM), 0 where /proc is not available.
fn peak_rss_bytes() -> u64 {
    proc_kb("/proc/self/status", "VmHWM:").map_or(0, |kb| kb * 1024)
}
