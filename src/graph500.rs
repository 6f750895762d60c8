//! The Graph500 procedure, written once (spec steps 1-6): generate or read the graph, build
//! the CSR (kernel 1, timed), pick the roots, run and time one search per root (kernel 2),
//! validate, and report the statistics block and the HDF5 file. The device plugs in behind
//! `Backend` (which makes the search's `Frontiers`), so every device shares this procedure.

use crate::algo::bfs::{self, Direction, Frontiers, LevelStats};
use crate::algo::bfs_cpu::CpuFrontiers;
use crate::algo::bfs_gpu::{self, GpuFrontiers};
use crate::algo::{roots, validate};
use crate::comm::{Op, PhaseTimes, World};
use crate::config::{BfsConfig, Construction, GraphInput, RunConfig};
use crate::error::{Error, Result};
use crate::graph::csr_gpu;
use crate::graph::kronecker::Kronecker;
use crate::graph::readers::read_graph;
use crate::graph::{Block1D, DistGraph, EdgeSource, Vid};
use crate::output::{timestamp, Invocation, Provenance, ResultFile};
use crate::progress::Progress;
use crate::rng::mix64;
use crate::stats::{Summary, Teps};
use log::info;
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Instant;

/// Where the local part of the search runs: builds the graph (kernel 1) and makes the device
/// side of the search once it is built.
pub trait Backend {
    /// What runs the search, for logs and provenance.
    fn device(&self) -> String;
    /// Build the CSR where `choice` allows; returns it and where it was built ("cpu", "gpu").
    fn build(
        &self,
        world: &World,
        run: &RunConfig,
        choice: Construction,
        source: &dyn EdgeSource,
        timers: &mut PhaseTimes,
    ) -> Result<(DistGraph, &'static str)>;
    fn frontiers<'g>(
        &'g self,
        world: &'g World,
        run: &RunConfig,
        g: &'g DistGraph,
    ) -> Result<Box<dyn Frontiers + 'g>>;
    /// Fail early when a graph of about `entries` adjacency entries per rank, partitioned as
    /// `part`, clearly cannot fit on the device (before minutes are spent building it).
    fn check_fits(&self, _world: &World, _part: &Block1D, _entries: u64) -> Result<()> {
        Ok(())
    }
}

/// The CPU (rayon inside each rank).
pub struct Cpu;

impl Backend for Cpu {
    fn device(&self) -> String {
        format!("cpu ({} threads per rank)", rayon::current_num_threads())
    }
    fn build(
        &self,
        world: &World,
        _: &RunConfig,
        choice: Construction,
        source: &dyn EdgeSource,
        timers: &mut PhaseTimes,
    ) -> Result<(DistGraph, &'static str)> {
        if choice == Construction::Gpu {
            return Err(Error::Unavailable(
                "[bfs] construction = \"gpu\" needs a run on GPUs, and this one computes on the CPU"
                    .into(),
            ));
        }
        Ok((DistGraph::build(world, source, timers)?, "cpu"))
    }
    fn frontiers<'g>(
        &'g self,
        world: &'g World,
        _: &RunConfig,
        g: &'g DistGraph,
    ) -> Result<Box<dyn Frontiers + 'g>> {
        Ok(Box::new(CpuFrontiers::new(world, g)))
    }
}

impl Backend for crate::device::Gpu {
    fn device(&self) -> String {
        self.describe()
    }
    fn build(
        &self,
        world: &World,
        run: &RunConfig,
        choice: Construction,
        source: &dyn EdgeSource,
        timers: &mut PhaseTimes,
    ) -> Result<(DistGraph, &'static str)> {
        let on_cpu = |timers| Cpu.build(world, run, Construction::Cpu, source, timers);
        let kronecker = match (choice, source.as_kronecker()) {
            (Construction::Cpu, _) | (Construction::Auto, None) => return on_cpu(timers),
            (Construction::Gpu, None) => {
                return Err(Error::Unavailable(
                    "[bfs] construction = \"gpu\" builds generated (Kronecker) graphs only; a graph read from a file is built on the CPU".into(),
                ))
            }
            (_, Some(k)) => k,
        };
        let part = Block1D::new(source.num_vertices(), world.size(), world.rank());
        let entries = entries_per_rank_estimate(world, source);
        let needed = world.allreduce(csr_gpu::bytes_needed(&part, entries), Op::Max);
        let free = world.allreduce(self.memory()?.0 as u64, Op::Min);
        if needed > free {
            let why = format!(
                "building the CSR on the GPU needs about {needed} bytes per rank, but only {free} are free"
            );
            if choice == Construction::Gpu {
                return Err(Error::Unavailable(format!(
                    "{why}: set [bfs] construction = \"cpu\" or \"auto\""
                )));
            }
            info!("{why}: building it on the CPU");
            return on_cpu(timers);
        }
        let g = csr_gpu::build(world, self, run.gpu_transport, kronecker, timers)?;
        Ok((g, "gpu"))
    }
    fn frontiers<'g>(
        &'g self,
        world: &'g World,
        run: &RunConfig,
        g: &'g DistGraph,
    ) -> Result<Box<dyn Frontiers + 'g>> {
        Ok(Box::new(GpuFrontiers::new(
            world,
            self,
            run.gpu_transport,
            g,
        )?))
    }
    fn check_fits(&self, world: &World, part: &Block1D, entries: u64) -> Result<()> {
        bfs_gpu::check_memory(world, self, part, entries, true)
    }
}

/// One search's record.
struct Trial {
    root: Vid,
    /// Seconds until the parents are in host memory (the Graph500 time).
    time: f64,
    /// Seconds until the search ended, parents still on the device.
    on_device: f64,
    nedge: u64,
    validate_time: f64,
    levels: Vec<LevelStats>,
    depths: Vec<i32>,
}

pub fn run(
    world: &World,
    run: &RunConfig,
    cfg: &BfsConfig,
    backend: &dyn Backend,
    params: &bfs::Params,
    invocation: &Invocation,
) -> Result<PathBuf> {
    let start_time = timestamp();
    let started = Instant::now();
    match &cfg.graph {
        GraphInput::Kronecker { scale, edgefactor } => {
            let source = Kronecker::new(*scale, *edgefactor, run.seed, world.size(), world.rank());
            run_on(
                world, run, cfg, backend, params, invocation, &source, started, start_time,
            )
        }
        GraphInput::File(path) => {
            let source = read_graph(world, path)?;
            run_on(
                world, run, cfg, backend, params, invocation, &source, started, start_time,
            )
        }
    }
}

/// Adjacency entries a rank will hold, before the graph is built: each input edge gives two,
/// spread evenly over the ranks (duplicates and self-loops included, so at most a little high).
fn entries_per_rank_estimate(world: &World, source: &(impl EdgeSource + ?Sized)) -> u64 {
    2 * source.num_edges() / world.size() as u64
}

/// What the statistics block says about the graph.
struct GraphInfo {
    /// log2 N (a fraction for graphs read from files)
    scale: f64,
    edgefactor: f64,
    /// Seconds to generate (or read) the edge list and pass over it once
    generation: f64,
    /// Order-independent checksum of all edge tuples: equal graphs give equal checksums
    checksum: u64,
}

impl GraphInfo {
    /// One full pass over the edges (the generation or reading time ends with it).
    fn measure(world: &World, source: &impl EdgeSource, started: Instant) -> GraphInfo {
        let checksum = edge_checksum(world, source);
        let n = source.num_vertices() as f64;
        GraphInfo {
            scale: n.log2(),
            edgefactor: source.num_edges() as f64 / n,
            generation: started.elapsed().as_secs_f64(),
            checksum,
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn run_on(
    world: &World,
    run: &RunConfig,
    cfg: &BfsConfig,
    backend: &dyn Backend,
    params: &bfs::Params,
    invocation: &Invocation,
    source: &impl EdgeSource,
    started: Instant,
    start_time: String,
) -> Result<PathBuf> {
    let part = Block1D::new(source.num_vertices(), world.size(), world.rank());
    let entries = entries_per_rank_estimate(world, source);
    check_host_memory(world, &part, entries)?;
    backend.check_fits(world, &part, entries)?;
    let graph = GraphInfo::measure(world, source, started);
    let mut phases = PhaseTimes::default();
    world.barrier();
    let t = Instant::now();
    let (g, built_on) = backend.build(world, run, cfg.construction, source, &mut phases)?;
    world.barrier();
    let construction = t.elapsed().as_secs_f64();
    info!(
        "graph: {} vertices, {} input edges, {} CSR entries; construction {:.3} s on the {built_on}",
        g.n(),
        g.num_input_edges,
        g.num_entries,
        construction
    );
    let csr_checksum = g.checksum(world);

    let roots = roots::pick_roots(world, &g, run.seed, cfg.roots as usize)?;
    if roots.len() < cfg.roots as usize {
        log::warn!(
            "only {} vertices have an edge other than a self-loop: running {} searches instead of {}",
            roots.len(),
            roots.len(),
            cfg.roots
        );
    }

    // Declared before the frontiers, so it outlives them: a GPU may have page-locked it.
    let mut parent = vec![-1i64; g.local_n()];
    let mut frontiers = backend.frontiers(world, run, &g)?;
    let transport = frontiers.transport();
    if world.size() > 1 {
        info!("exchanges between ranks over {transport}");
    }
    // One untimed copy before the searches: a GPU page-locks `parent` on its first copy.
    frontiers.parents(&mut parent)?;
    let mut trials = Vec::with_capacity(roots.len());
    let mut progress = Progress::new(world.is_root(), "bfs", roots.len());
    for (i, &root) in roots.iter().enumerate() {
        world.barrier();
        let t = Instant::now();
        let levels = bfs::bfs(
            world,
            g.n(),
            g.num_entries,
            frontiers.as_mut(),
            root,
            params,
        )?;
        let on_device = t.elapsed().as_secs_f64();
        frontiers.parents(&mut parent)?;
        world.barrier();
        let time = t.elapsed().as_secs_f64();

        let t = Instant::now();
        let depths = if cfg.validate {
            validate::validate(world, &g, root, &parent)?
        } else if cfg.write_depths {
            validate::tree_levels(world, &g, root, &parent)?
        } else {
            Vec::new()
        };
        let validate_time = if cfg.validate {
            t.elapsed().as_secs_f64()
        } else {
            -1.0
        };
        let nedge = component_edges(world, &g, &parent);
        let levels = reduce_level_times(world, levels);
        let depths = if cfg.write_depths {
            world.gatherv_root(&depths)?
        } else {
            Vec::new()
        };
        info!(
            "root {}/{} ({root}): {} levels, nedge {nedge}, {:.6} s, {:.4e} TEPS{}",
            i + 1,
            roots.len(),
            levels.len(),
            time,
            nedge as f64 / time,
            if cfg.validate { ", valid" } else { "" }
        );
        progress.step();
        trials.push(Trial {
            root,
            time,
            on_device,
            nedge,
            validate_time,
            levels,
            depths,
        });
    }
    progress.finish();

    let peak_rss = world.allreduce(peak_rss_bytes(), Op::Max);
    let csr_bytes = world.allreduce(g.csr_bytes(), Op::Max);
    let phases = reduce_phases(world, &phases);
    let hostnames = world.hostnames()?;
    if !world.is_root() {
        return Ok(run.output.clone());
    }
    let block = statistics_block(world, &graph, construction, &trials);
    for (name, value) in &block {
        println!("{}", format_line(name, value));
    }
    let on_device: Vec<f64> = trials.iter().map(|t| t.on_device).collect();
    let nedges: Vec<u64> = trials.iter().map(|t| t.nedge).collect();
    let teps_on_device = Teps::of(&on_device, &nedges).harmonic_mean;
    println!(
        "harmonic_mean_TEPS_parents_on_device: {}",
        format_g(teps_on_device, 6)
    );
    println!("peak_rss_max_rank_bytes:        {peak_rss}");
    println!("csr_bytes_max_rank:             {csr_bytes}");

    let file = ResultFile::create(&run.output)?;
    Provenance {
        command_line: invocation.command_line.clone(),
        deck: invocation.deck.clone(),
        ranks: world.size(),
        threads_per_rank: rayon::current_num_threads(),
        hostnames,
        device: backend.device(),
        start_time,
        end_time: timestamp(),
    }
    .write(&file.root())?;
    let group = file.group("bfs")?;
    let w = group.writer();
    for (name, value) in &block {
        w.attr(name, value.number())?;
    }
    w.attr("num_vertices", g.n())?;
    w.attr("num_input_edges", g.num_input_edges)?;
    w.attr("num_csr_entries", g.num_entries)?;
    w.attr("edge_checksum", graph.checksum)?;
    w.attr("csr_checksum", csr_checksum)?;
    w.attr_str("construction_device", built_on)?;
    w.attr("validated", u8::from(cfg.validate))?;
    w.attr_str("mode", &format!("{:?}", cfg.mode))?;
    w.attr("alpha", cfg.alpha)?;
    w.attr("beta", cfg.beta)?;
    w.attr("peak_rss_max_rank_bytes", peak_rss)?;
    w.attr("harmonic_mean_TEPS_parents_on_device", teps_on_device)?;
    w.attr("csr_bytes_max_rank", csr_bytes)?;
    w.attr_str("transport", transport)?;
    write_trials(&group, &trials, g.n())?;
    let construction_phases = group.subgroup("construction_phases")?;
    for (name, secs) in &phases {
        construction_phases.writer().attr(name, *secs)?;
    }
    file.finish()
}

/// Order-independent checksum of the edge tuples (wrapping sum of hashed tuples), also one
/// full pass over the edges: its time is the generation time.
fn edge_checksum(world: &World, source: &impl EdgeSource) -> u64 {
    const CHUNK: u64 = 1 << 20;
    let mut sum = 0u64;
    let mut chunk = Vec::with_capacity(CHUNK as usize);
    let mut start = 0;
    while start < source.local_len() {
        let len = CHUNK.min(source.local_len() - start);
        chunk.clear();
        source.local_chunk(start, len, &mut chunk);
        let part = chunk
            .par_iter()
            .map(|&(u, v)| mix64(mix64(u) ^ v))
            .reduce(|| 0, u64::wrapping_add);
        sum = sum.wrapping_add(part);
        start += len;
    }
    world.allreduce(sum, Op::Sum)
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

fn reduce_phases(world: &World, phases: &PhaseTimes) -> Vec<(&'static str, f64)> {
    let names: Vec<&'static str> = phases.iter().map(|(n, _)| n).collect();
    let mut secs: Vec<f64> = phases.iter().map(|(_, s)| s).collect();
    world.allreduce_slice(&mut secs, Op::Max);
    names.into_iter().zip(secs).collect()
}

/// A value of the statistics block: printed as the reference prints it.
enum Value {
    Int(u64),
    /// printf's %g
    G(f64),
    /// printf's %.11g (edge counts)
    G11(f64),
}

impl Value {
    fn number(&self) -> f64 {
        match *self {
            Value::Int(i) => i as f64,
            Value::G(x) | Value::G11(x) => x,
        }
    }
}

/// The statistics block, with the Graph500 reference's field names, in its order.
fn statistics_block(
    world: &World,
    graph: &GraphInfo,
    construction: f64,
    trials: &[Trial],
) -> Vec<(&'static str, Value)> {
    let times: Vec<f64> = trials.iter().map(|t| t.time).collect();
    let nedges: Vec<u64> = trials.iter().map(|t| t.nedge).collect();
    let nedge_f: Vec<f64> = nedges.iter().map(|&m| m as f64).collect();
    let validate: Vec<f64> = trials.iter().map(|t| t.validate_time).collect();
    let (t, m, v) = (
        Summary::of(&times),
        Summary::of(&nedge_f),
        Summary::of(&validate),
    );
    let teps = Teps::of(&times, &nedges);
    let scale = if graph.scale.fract() == 0.0 {
        Value::Int(graph.scale as u64)
    } else {
        Value::G(graph.scale)
    };
    let edgefactor = if graph.edgefactor.fract() == 0.0 {
        Value::Int(graph.edgefactor as u64)
    } else {
        Value::G(graph.edgefactor)
    };
    use Value::*;
    vec![
        ("SCALE", scale),
        ("edgefactor", edgefactor),
        ("NBFS", Int(trials.len() as u64)),
        ("graph_generation", G(graph.generation)),
        ("num_mpi_processes", Int(world.size() as u64)),
        ("construction_time", G(construction)),
        ("bfs  min_time", G(t.min)),
        ("bfs  firstquartile_time", G(t.first_quartile)),
        ("bfs  median_time", G(t.median)),
        ("bfs  thirdquartile_time", G(t.third_quartile)),
        ("bfs  max_time", G(t.max)),
        ("bfs  mean_time", G(t.mean)),
        ("bfs  stddev_time", G(t.stddev)),
        ("min_nedge", G11(m.min)),
        ("firstquartile_nedge", G11(m.first_quartile)),
        ("median_nedge", G11(m.median)),
        ("thirdquartile_nedge", G11(m.third_quartile)),
        ("max_nedge", G11(m.max)),
        ("mean_nedge", G11(m.mean)),
        ("stddev_nedge", G11(m.stddev)),
        ("bfs  min_TEPS", G(teps.min)),
        ("bfs  firstquartile_TEPS", G(teps.first_quartile)),
        ("bfs  median_TEPS", G(teps.median)),
        ("bfs  thirdquartile_TEPS", G(teps.third_quartile)),
        ("bfs  max_TEPS", G(teps.max)),
        ("bfs  harmonic_mean_TEPS", G(teps.harmonic_mean)),
        ("bfs  harmonic_stddev_TEPS", G(teps.harmonic_stddev)),
        ("bfs  min_validate", G(v.min)),
        ("bfs  firstquartile_validate", G(v.first_quartile)),
        ("bfs  median_validate", G(v.median)),
        ("bfs  thirdquartile_validate", G(v.third_quartile)),
        ("bfs  max_validate", G(v.max)),
        ("bfs  mean_validate", G(v.mean)),
        ("bfs  stddev_validate", G(v.stddev)),
    ]
}

/// One line of the block, laid out as the reference's `fprintf` does (value at column 32; the
/// harmonic mean carries the reference's `!` marker).
fn format_line(name: &str, value: &Value) -> String {
    let text = match *value {
        Value::Int(i) => i.to_string(),
        Value::G(x) => format_g(x, 6),
        Value::G11(x) => format_g(x, 11),
    };
    if name == "bfs  harmonic_mean_TEPS" {
        format!("{:<29}!  {text}", format!("{name}:"))
    } else {
        format!("{:<32}{text}", format!("{name}:"))
    }
}

/// printf's `%.{precision}g`: shortest of fixed and scientific, trailing zeros removed.
pub fn format_g(x: f64, precision: usize) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x == 0.0 { "0".into() } else { format!("{x}") };
    }
    let sci = format!("{:.*e}", precision - 1, x);
    let (mantissa, exp) = sci.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    let trim = |s: &str| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= precision as i32 {
        format!(
            "{}e{}{:02}",
            trim(mantissa),
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    } else {
        trim(&format!("{:.*}", (precision as i32 - 1 - exp) as usize, x))
    }
}

fn write_trials(group: &crate::output::GroupWriter, trials: &[Trial], n: u64) -> Result<()> {
    let col = |f: &dyn Fn(&Trial) -> f64| trials.iter().map(f).collect::<Vec<f64>>();
    group.dataset("roots", &trials.iter().map(|t| t.root).collect::<Vec<_>>())?;
    group.dataset("time", &col(&|t| t.time))?;
    group.dataset("time_parents_on_device", &col(&|t| t.on_device))?;
    group.dataset("nedge", &trials.iter().map(|t| t.nedge).collect::<Vec<_>>())?;
    group.dataset("teps", &col(&|t| t.nedge as f64 / t.time))?;
    group.dataset("validate_time", &col(&|t| t.validate_time))?;
    group.dataset(
        "num_levels",
        &trials
            .iter()
            .map(|t| t.levels.len() as u32)
            .collect::<Vec<_>>(),
    )?;
    let rows: Vec<(u32, u32, &LevelStats)> = trials
        .iter()
        .enumerate()
        .flat_map(|(i, t)| {
            t.levels
                .iter()
                .enumerate()
                .map(move |(l, s)| (i as u32, l as u32, s))
        })
        .collect();
    let per_level = group.subgroup("per_level")?;
    per_level.dataset("root_index", &rows.iter().map(|r| r.0).collect::<Vec<_>>())?;
    per_level.dataset("level", &rows.iter().map(|r| r.1).collect::<Vec<_>>())?;
    per_level.dataset(
        "direction",
        &rows
            .iter()
            .map(|r| u8::from(r.2.direction == Direction::BottomUp))
            .collect::<Vec<_>>(),
    )?;
    let u = |f: fn(&LevelStats) -> u64| rows.iter().map(|r| f(r.2)).collect::<Vec<_>>();
    let s = |f: fn(&LevelStats) -> f64| rows.iter().map(|r| f(r.2)).collect::<Vec<_>>();
    per_level.dataset("frontier_vertices", &u(|l| l.frontier_vertices))?;
    per_level.dataset("frontier_edges", &u(|l| l.frontier_edges))?;
    per_level.dataset("edges_inspected", &u(|l| l.edges_inspected))?;
    per_level.dataset("time_local", &s(|l| l.t_local))?;
    per_level.dataset("time_exchange", &s(|l| l.t_exchange))?;
    per_level.dataset("bytes_exchanged", &u(|l| l.bytes_exchanged))?;
    per_level.dataset("time_reduce", &s(|l| l.t_reduce))?;
    if trials.iter().any(|t| !t.depths.is_empty()) {
        let depths: Vec<i32> = trials
            .iter()
            .flat_map(|t| t.depths.iter().copied())
            .collect();
        debug_assert_eq!(depths.len() as u64, n * trials.len() as u64);
        group.dataset_2d("depth", trials.len(), &depths)?;
    }
    Ok(())
}

/// Peak resident set size of this process (VmHWM), 0 where /proc is not available.
fn peak_rss_bytes() -> u64 {
    proc_kb("/proc/self/status", "VmHWM:").map_or(0, |kb| kb * 1024)
}

/// A "Key: N kB" line's N from a /proc file.
fn proc_kb(file: &str, key: &str) -> Option<u64> {
    std::fs::read_to_string(file).ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
    })
}

/// Host bytes a rank needs for its part of the graph (`entries` adjacency entries) and the
/// searches: 8 per entry, and about 48 per vertex (row offsets, tuple endpoint counts,
/// parents, the validator's levels and queues).
fn host_bytes_needed(part: &Block1D, entries: u64) -> u64 {
    8 * entries + 48 * part.local_n() as u64
}

/// Fail early, with one line on every rank, when the ranks on a node clearly cannot hold
/// their parts of the graph in its memory (instead of being killed for memory mid-build).
fn check_host_memory(world: &World, part: &Block1D, entries: u64) -> Result<()> {
    let available = proc_kb("/proc/meminfo", "MemAvailable:").map_or(u64::MAX, |kb| kb * 1024);
    let available = world.allreduce(available, Op::Min);
    let per_rank = world.allreduce(host_bytes_needed(part, entries), Op::Max);
    let needed = per_rank.saturating_mul(world.local_size() as u64);
    if needed <= available {
        return Ok(());
    }
    let nodes = world.size() as f64 / world.local_size() as f64;
    let per_vertex = per_rank as f64 / part.block as f64;
    let fitting = available as f64 / per_vertex / world.local_size() as f64 * world.size() as f64;
    Err(Error::Unavailable(format!(
        "the graph does not fit in host memory: the {} rank(s) on a node need about {needed} bytes but {available} are available (MemAvailable, /proc/meminfo); at this edge factor the largest SCALE that fits on {nodes} such node(s) is about {}",
        world.local_size(),
        fitting.log2().floor()
    )))
}

#[cfg(test)]
mod tests {
    use super::format_g;

    #[test]
    fn format_g_matches_printf() {
        assert_eq!(format_g(2.87e7, 6), "2.87e+07");
        assert_eq!(format_g(0.6, 6), "0.6");
        assert_eq!(format_g(3.8123456, 6), "3.81235");
        assert_eq!(format_g(123456.0, 6), "123456");
        assert_eq!(format_g(1234567.0, 6), "1.23457e+06");
        assert_eq!(format_g(0.0001234, 6), "0.0001234");
        assert_eq!(format_g(0.00001234, 6), "1.234e-05");
        assert_eq!(format_g(4294921166.0, 11), "4294921166");
        assert_eq!(format_g(-1.0, 6), "-1");
    }
}
