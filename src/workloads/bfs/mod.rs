//! Graph500 BFS (spec steps 1-6) on the harness: the graph from `[graph]` (kernel 1 timed by
//! `graph::build`), the roots, one timed search per root (kernel 2, `search::bfs` behind the
//! device's `Frontiers`), validation apart from the search, and one report: the reference's
//! statistics block, tessera's own figures and the per-search datasets.

pub mod comm_model;
mod corrupt;
pub mod cpu;
pub mod cpu2d;
pub mod gpu;
pub mod gpu2d;
pub mod gpu_vertices;
mod report;
pub mod search;
pub mod validate;
pub mod validate_depths;
pub mod validate_gpu;

pub use report::format_g;

use crate::comm::{Grid, Op, World};
use crate::config::{config_error, out_of_range};
use crate::device::memory::{self, largest_fitting, Place};
use crate::device::Selected;
use crate::error::{Error, Result};
use crate::graph::block2d::Layout2D;
use crate::graph::build::{self, Blocks2D, Built};
use crate::graph::roots;
use crate::graph::source::GraphConfig;
use crate::graph::{Block1D, DistGraph, Vid};
use crate::harness::{Harness, Workload};
use crate::report::Report;
use cpu2d::Cpu2dFrontiers;
use gpu2d::Gpu2dFrontiers;
use search::{Frontiers, LevelStats, Mode, Params};

/// Default alphas: Beamer's on the CPU. On a GPU a top-down level costs more per edge than a
/// bottom-up one (atomic claims against sequential row scans), so switching earlier pays: at
/// 14, searches whose second frontier held a few thousand hubs stayed top-down over ~1.5e8
/// edges and took 17-19 ms instead of 3-8 (the bimodal times); 28, 56 and 112 gave harmonic
/// means of 2.33e11, 2.37e11 and 2.19e11 TEPS against 1.68e11 (one H100, Kronecker SCALE 26,
/// 64 roots, docs/benchmarks.md).
const CPU_ALPHA: f64 = 14.0;
const GPU_ALPHA: f64 = 56.0;

use crate::stats::Teps;
use log::info;
use rayon::prelude::*;
use report::{graph500_block, trial_datasets};
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
    /// Where validation runs: device (the search's device, its depths as a witness, one
    /// exchange per root) or host (parents copied to the host, levels found by following them)
    #[arg(long, value_enum)]
    pub validator: Option<Validator>,
    /// Store every search's depth array in the HDF5 file (for small graphs)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub write_depths: Option<bool>,
    /// How the graph is split between ranks: 1d (vertex blocks) or 2d (R x C edge blocks)
    #[arg(long, value_enum)]
    pub partition: Option<Partition>,
    /// The 2D process grid R,C (R x C = ranks; default the most square, R <= C)
    #[arg(long, value_delimiter = ',')]
    pub grid: Option<Vec<i64>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Validator {
    Device,
    Host,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
pub enum Partition {
    #[serde(rename = "1d")]
    #[value(name = "1d")]
    OneD,
    #[serde(rename = "2d")]
    #[value(name = "2d")]
    TwoD,
}

/// Graph500 BFS, configured.
pub struct Bfs {
    graph: GraphConfig,
    roots: u32,
    /// With the CPU's alpha where the deck sets none (`params` gives the device's).
    params: Params,
    alpha_given: bool,
    validate: bool,
    validator: Validator,
    write_depths: bool,
    partition: Partition,
    /// `[bfs] grid` as given (checked against the rank count when the run starts).
    grid: Option<(usize, usize)>,
    /// The deck's name, for the grid's message.
    source: String,
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
        let partition = t.partition.unwrap_or(Partition::OneD);
        let grid = match t.grid.as_deref() {
            None => None,
            Some(&[r, c]) if r > 0 && c > 0 => Some((r as usize, c as usize)),
            Some(other) => {
                return Err(out_of_range(
                    source,
                    "[bfs] grid",
                    format!("{other:?}"),
                    "two positive integers [R, C] with R x C = ranks",
                ))
            }
        };
        if grid.is_some() && partition == Partition::OneD {
            return Err(config_error(
                source,
                "[bfs] grid is the process grid of partition = \"2d\": set partition = \"2d\" or leave grid out",
            ));
        }
        Ok(Bfs {
            partition,
            grid,
            source: source.to_string(),
            graph: graph.expect("bfs takes a graph"),
            roots,
            params: Params {
                mode: t.mode.unwrap_or(Mode::Hybrid),
                alpha,
                beta,
            },
            alpha_given: t.alpha.is_some(),
            validate: t.validate.unwrap_or(true),
            validator: t.validator.unwrap_or(Validator::Device),
            write_depths: t.write_depths.unwrap_or(false),
        })
    }

    /// The graph's own memory is checked where it is made (`graph::build`, before any edge
    /// exists); here the depth matrix of a generated graph, whose vertex count is known now.
    fn check_sizes(&self, h: &Harness) -> Result<()> {
        match self.graph.spec.scale() {
            Some(scale) => self.check_depths_fit(h.world, 1 << scale),
            None => Ok(()),
        }
    }

    fn execute(&self, h: &Harness) -> Result<Report> {
        let world = h.world;
        let shape = self.grid_shape(world.size())?;
        let generated = self.graph.spec.scale().is_some();
        let fits = |part: &Block1D, entries: u64| match &h.device {
            Selected::Gpu(gpu) => gpu::check_memory(world, gpu, part, entries, true, generated),
            Selected::Cpu => Ok(()),
        };
        let mut built = h.build_graph(&self.graph, &fits)?;
        let mut device_csr = built.take_device_csr();
        if shape.is_some() {
            // The 2D search does not read the 1D CSR a GPU may have built: free its memory.
            device_csr = None;
            if let Selected::Gpu(gpu) = &h.device {
                gpu.sync("free the 1D CSR")?;
            }
        }
        let two_d = match shape {
            Some((rows, cols)) => Some(self.build_blocks(h, &mut built, rows, cols)?),
            None => None,
        };
        let layout = SearchLayout::of(&built.graph, two_d.as_ref());
        let g = &built.graph;
        self.check_depths_fit(world, g.n())?;
        let corruption = corrupt::from_env()?;
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
            Selected::Gpu(gpu) => gpu.copy_rate(),
            Selected::Cpu => None,
        };
        let transport = h.run.gpu_transport;
        let mut frontiers: Box<dyn Frontiers> = match (&two_d, &h.device) {
            (None, device) => search::frontiers(world, device, transport, g, device_csr)?,
            (Some((Blocks2D::Host(blocks), grid)), Selected::Cpu) => {
                Box::new(Cpu2dFrontiers::new(g, blocks, grid))
            }
            (Some((Blocks2D::Device(blocks), grid)), Selected::Gpu(gpu)) => {
                Box::new(Gpu2dFrontiers::new(world, gpu, transport, g, blocks, grid)?)
            }
            _ => unreachable!("build_blocks leaves the blocks on the device that searches"),
        };
        let transport = frontiers.transport();
        if world.size() > 1 {
            info!("exchanges between ranks over {transport}");
        }
        // One untimed copy before the searches, so none of them pays for a first transfer.
        frontiers.fetch_parents()?;
        let trials = h.trials("bfs", roots.len(), |i| {
            let root = roots[i];
            world.barrier();
            let t = Instant::now();
            let levels = search::bfs(
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
            frontiers.fetch_parents()?;
            world.barrier();
            let with_copy = t.elapsed().as_secs_f64();
            if let Some(kind) = corruption.filter(|_| i == 0) {
                corrupt::apply(world, g, root, frontiers.as_mut(), kind)?;
            }
            let searched = (frontiers.as_mut(), &mut parent[..]);
            let trial = self.verify(world, g, root, searched, levels, (time, with_copy))?;
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
        drop(frontiers);
        Ok(self.report(h, &built, &trials, (transport, copy_rate), &layout))
    }
}

/// How the search saw the graph, for the result file.
struct SearchLayout {
    partition: &'static str,
    rows: usize,
    cols: usize,
    /// Bytes of this rank's search structure (1D CSR, or the 2D block both ways).
    bytes: u64,
}

impl SearchLayout {
    /// The grid of the 2D communication model: the run's, or the most square one.
    fn model_grid(&self) -> (usize, usize) {
        match self.partition {
            "2d" => (self.rows, self.cols),
            _ => Grid::most_square(self.rows * self.cols),
        }
    }

    fn of(g: &DistGraph, two_d: Option<&(Blocks2D, Grid)>) -> Self {
        match two_d {
            None => SearchLayout {
                partition: "1d",
                rows: 1,
                cols: g.part.size,
                bytes: g.csr_bytes(),
            },
            Some((blocks, grid)) => SearchLayout {
                partition: "2d",
                rows: grid.rows,
                cols: grid.cols,
                bytes: match blocks {
                    Blocks2D::Host(b) => b.bytes(),
                    Blocks2D::Device(b) => b.bytes(),
                },
            },
        }
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

    /// Validate one search (when asked) where `validator` says, count its edges and gather
    /// what the file keeps. `parent`: room for the parents in host memory, filled where the
    /// validator or the edge count needs them there.
    fn verify(
        &self,
        world: &World,
        g: &DistGraph,
        root: Vid,
        (frontiers, parent): (&mut (dyn Frontiers + '_), &mut [i64]),
        levels: Vec<LevelStats>,
        (time, with_copy): (f64, f64),
    ) -> Result<Trial> {
        let t = Instant::now();
        let nedge = match (self.validate, self.validator) {
            (true, Validator::Device) => {
                validate_depths::validate_where_searched(world, g, root, frontiers, parent)?
            }
            (true, Validator::Host) => {
                frontiers.parents(parent)?;
                validate::validate(world, g, root, parent)?;
                component_edges(world, g, parent)
            }
            (false, _) => {
                frontiers.parents(parent)?;
                component_edges(world, g, parent)
            }
        };
        let validate_time = if self.validate {
            t.elapsed().as_secs_f64()
        } else {
            -1.0
        };
        // The search's depths: once validated, its tree's levels.
        let depths = if self.write_depths {
            let mut depths = vec![-1; g.local_n()];
            frontiers.depths(&mut depths)?;
            world.gatherv_root(&depths)?
        } else {
            Vec::new()
        };
        Ok(Trial {
            root,
            time,
            with_copy,
            nedge,
            validate_time,
            levels: reduce_level_times(world, levels),
            depths,
        })
    }

    /// The 2D process grid of this run: None for a 1D search; `[bfs] grid`, or the most
    /// square grid of the ranks, for a 2D one.
    fn grid_shape(&self, ranks: usize) -> Result<Option<(usize, usize)>> {
        match (self.partition, self.grid) {
            (Partition::OneD, _) => Ok(None),
            (Partition::TwoD, None) => Ok(Some(Grid::most_square(ranks))),
            (Partition::TwoD, Some((r, c))) if r.checked_mul(c) == Some(ranks) => Ok(Some((r, c))),
            (Partition::TwoD, Some((r, c))) => Err(config_error(
                &self.source,
                &format!("[bfs] grid = [{r}, {c}] does not fit the run's {ranks} rank(s): expected [R, C] with R x C = {ranks}"),
            )),
        }
    }

    /// Kernel 1 of the 2D search: the process grid and its blocks. `built` keeps the 1D
    /// CSR (the validator's copy of the input, as the Graph500 reference keeps its edge
    /// list); its construction time, phases and checksum become the blocks' (collective).
    fn build_blocks(
        &self,
        h: &Harness,
        built: &mut Built,
        rows: usize,
        cols: usize,
    ) -> Result<(Blocks2D, Grid)> {
        let world = h.world;
        let grid = Grid::new(world, rows, cols);
        let layout = Layout2D::new(built.graph.part, rows, cols);
        let made = h.timed("graph_2d", || {
            let device = (&h.device, h.run.gpu_transport);
            build::build_blocks(world, &self.graph, h.run.seed, layout, device)
        })?;
        info!(
            "2D blocks on a {rows} x {cols} grid: {} entries, construction {:.3} s on the {}",
            made.num_entries, made.seconds, made.built_on
        );
        let local = made
            .entry_checksum
            .wrapping_add(built.graph.vertex_checksum());
        built.csr_checksum = world.allreduce(local, Op::Sum);
        built.graph.num_entries = made.num_entries;
        built.phases = made.phases;
        built.phases.push(("validation_csr_1d", built.construction));
        built.construction = made.seconds;
        built.built_on = made.built_on;
        let blocks = match (made.blocks, &h.device) {
            // Built on the CPU (a source without a GPU generator), searched on the GPU.
            (Blocks2D::Host(b), Selected::Gpu(gpu)) => {
                Blocks2D::Device(gpu2d::upload_blocks(world, gpu, &built.graph, &b)?)
            }
            (blocks, _) => blocks,
        };
        Ok((blocks, grid))
    }

    /// `--write-depths` keeps every search's depths on rank 0 (4 bytes a vertex a search):
    /// refused before the searches where that matrix cannot fit in host memory.
    fn check_depths_fit(&self, world: &World, n: u64) -> Result<()> {
        if !self.write_depths || !world.is_root() {
            return world.agree(Ok(()));
        }
        let bytes = |roots: u64| roots.saturating_mul(n).saturating_mul(4);
        let fits = memory::check(
            &format!(
                "the depth matrix of --write-depths ({} roots x {n} vertices)",
                self.roots
            ),
            bytes(u64::from(self.roots)),
            Place::Host { ranks: 1 },
            |available| match largest_fitting(1, u64::from(self.roots), available, bytes) {
                Some(roots) => format!("at most {roots} roots fit, or leave write_depths off"),
                None => "leave write_depths off".into(),
            },
        );
        world.agree(fits)
    }

    /// The run's one report: `/graph`, the reference's statistics block, tessera's own
    /// figures (after the block) and the per-search datasets, all under `/bfs`.
    /// `copy_rate`: rank 0's GPU's plain copy rate (bytes per second), on a GPU run.
    fn report(
        &self,
        h: &Harness,
        built: &Built,
        trials: &[Trial],
        (transport, copy_rate): (&str, Option<f64>),
        layout: &SearchLayout,
    ) -> Report {
        let world = h.world;
        let g = &built.graph;
        let peak_rss = world.allreduce(peak_rss_bytes(), Op::Max);
        let csr_bytes = world.allreduce(layout.bytes, Op::Max);
        let with_copy: Vec<f64> = trials.iter().map(|t| t.with_copy).collect();
        let nedges: Vec<u64> = trials.iter().map(|t| t.nedge).collect();
        let teps_with_copy = Teps::of(&with_copy, &nedges).harmonic_mean;
        let mut report = Report::new();
        built.report(&mut report, &self.graph, h.run.seed);
        graph500_block(&mut report, world.size(), built, trials);
        let mut r = report.group("bfs");
        r.rate(
            "harmonic_mean_TEPS_with_copy_to_host",
            teps_with_copy,
            "TEPS",
        )
        .shown_as(format_g(teps_with_copy, 6));
        if let Some(rate) = copy_rate {
            r.rate("device_copy_bytes_per_second", rate, "bytes/s")
                .shown_as(format_g(rate, 4));
        }
        r.count("peak_rss_max_rank_bytes", peak_rss)
            .shown_as(format!("{peak_rss} bytes"));
        r.count("csr_bytes_max_rank", csr_bytes)
            .shown_as(format!("{csr_bytes} bytes"));
        r.text("graph", self.graph.spec.kind()).stored_only();
        r.text("graph_parameters", self.graph.spec.parameters())
            .stored_only();
        r.count("num_vertices", g.n()).stored_only();
        r.count("num_input_edges", g.num_input_edges).stored_only();
        r.count("num_csr_entries", g.num_entries).stored_only();
        r.count("edge_checksum", built.edge_checksum).stored_only();
        r.count("csr_checksum", built.csr_checksum).stored_only();
        r.text("construction_device", built.built_on).stored_only();
        r.flag("validated", self.validate, "skipped").stored_only();
        let validator = match self.validator {
            Validator::Device => "device",
            Validator::Host => "host",
        };
        r.text("validator", validator).stored_only();
        let params = self.params(&h.device);
        r.text("mode", format!("{:?}", params.mode)).stored_only();
        r.number("alpha", params.alpha, "").stored_only();
        r.number("beta", params.beta, "").stored_only();
        r.text("transport", transport).stored_only();
        r.text("partition", layout.partition).stored_only();
        r.count("grid_rows", layout.rows as u64).stored_only();
        r.count("grid_cols", layout.cols as u64).stored_only();
        trial_datasets(&mut r, trials, g.n(), layout.model_grid());
        report::phase_summary(
            &mut r,
            trials,
            g.n(),
            layout.model_grid(),
            layout.partition == "2d",
        );
        let mut phases = r.subgroup("construction_phases");
        for (name, secs) in &built.phases {
            phases.seconds(name, *secs).stored_only();
        }
        report
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

/// Per-level times as the slowest rank saw them, bytes as the busiest rank moved them, and
/// the bytes all ranks sent together.
fn reduce_level_times(world: &World, mut levels: Vec<LevelStats>) -> Vec<LevelStats> {
    let mut times: Vec<f64> = levels
        .iter()
        .flat_map(|l| [l.t_local, l.t_exchange, l.t_reduce])
        .collect();
    world.allreduce_slice(&mut times, Op::Max);
    let mut local_sum: Vec<f64> = levels.iter().map(|l| l.t_local_mean).collect();
    world.allreduce_slice(&mut local_sum, Op::Sum);
    let mut exchange_min: Vec<f64> = levels.iter().map(|l| l.t_exchange_min).collect();
    world.allreduce_slice(&mut exchange_min, Op::Min);
    let ranks = world.size() as f64;
    for ((l, sum), least) in levels.iter_mut().zip(local_sum).zip(exchange_min) {
        (l.t_local_mean, l.t_exchange_min) = (sum / ranks, least);
    }
    let mut most: Vec<u64> = levels
        .iter()
        .flat_map(|l| [l.bytes_sent, l.bytes_received])
        .collect();
    world.allreduce_slice(&mut most, Op::Max);
    let mut total: Vec<u64> = levels.iter().map(|l| l.bytes_exchanged).collect();
    world.allreduce_slice(&mut total, Op::Sum);
    for (((l, t), b), sent) in levels
        .iter_mut()
        .zip(times.chunks(3))
        .zip(most.chunks(2))
        .zip(total)
    {
        (l.t_local, l.t_exchange, l.t_reduce) = (t[0], t[1], t[2]);
        (l.bytes_sent, l.bytes_received, l.bytes_exchanged) = (b[0], b[1], sent);
    }
    levels
}

/// Peak resident set size of this process (VmHWM), 0 where /proc is not available.
fn peak_rss_bytes() -> u64 {
    crate::device::memory::peak_rss()
}
