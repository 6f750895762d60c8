//! The one place a graph is made (as GAP's `Builder::MakeGraph`): open the `[graph]` source,
//! check the host (and, through the caller, the device) can hold it, pass over the edges once
//! (generation time and edge checksum: on the GPU on a GPU run of a generator that has a GPU
//! edge function, else on the CPU), build the 1D CSR on the GPU (where it stays, for the GPU
//! workload) or the CPU (kernel 1), and checksum the result. Every graph workload takes its graph from here.

use super::arcs::{ArcGraph, ArcOptions};
use super::arcs_gpu;
use super::block2d::{Block2D, Layout2D};
use super::block2d_gpu::{self, DeviceBlocks};
use super::csr_gpu::DeviceCsr;
use super::source::{Construction, GraphConfig, GraphSpec, MAX_SCALE};
use super::{csr_gpu, Block1D, DistGraph, Edge, EdgeSource, GpuEdges};
use crate::comm::{GpuTransport, Op, PhaseTimes, World};
use crate::device::memory::{self, largest_fitting, Place};
use crate::device::{Gpu, Selected};
use crate::error::{Error, Result};
use crate::report::Report;
use crate::rng::mix64;
use log::info;
use rayon::prelude::*;
use std::time::Instant;

/// A built graph and what was measured making it.
pub struct Built {
    pub graph: DistGraph,
    /// Seconds to generate (or read) the edges and pass over them once (on the GPU where
    /// it generates them).
    pub generation: f64,
    /// Where the edges were generated for that pass: "cpu" or "gpu".
    pub generated_on: &'static str,
    /// Order-independent checksum of all edge tuples: equal edge lists give equal checksums.
    pub edge_checksum: u64,
    /// Seconds of kernel 1, between barriers.
    pub construction: f64,
    /// Where kernel 1 ran: "cpu" or "gpu".
    pub built_on: &'static str,
    /// Checksum of the CSR (`DistGraph::checksum`): equal for every rank count and device.
    pub csr_checksum: u64,
    /// Kernel 1's phases, each the slowest rank's seconds.
    pub phases: Phases,
    /// The CSR in GPU memory where the GPU built it, for the workload to take
    /// (`take_device_csr`) instead of uploading `graph`.
    device_csr: Option<DeviceCsr>,
}

/// Named phases and their seconds.
pub type Phases = Vec<(&'static str, f64)>;

impl Built {
    /// The CSR the GPU built, still on the GPU (None where the CPU built it).
    pub fn take_device_csr(&mut self) -> Option<DeviceCsr> {
        self.device_csr.take()
    }

    /// `/graph` in a report, every figure stored only: the generator, its parameters and
    /// seed, sizes, checksums, times (every graph workload's result file carries it).
    pub fn report(&self, report: &mut Report, cfg: &GraphConfig, seed: u64) {
        let from = report.figures.len();
        self.report_shown(report, cfg, seed);
        for f in &mut report.figures[from..] {
            f.shown = None;
        }
    }

    /// `/graph` in a report, its main figures also printed (`tessera generate`).
    pub fn report_shown(&self, report: &mut Report, cfg: &GraphConfig, seed: u64) {
        let g = &self.graph;
        let mut r = report.group("graph");
        r.text("generator", cfg.spec.kind());
        r.text("parameters", cfg.spec.parameters());
        r.count("seed", seed).stored_only();
        r.count("vertices", g.n());
        r.count("edges", g.num_input_edges);
        r.count("csr_entries", g.num_entries);
        // Each kept undirected edge is two CSR entries; the rest were loops or duplicates.
        r.count(
            "loops_and_duplicates_dropped",
            g.num_input_edges - g.num_entries / 2,
        )
        .stored_only();
        r.count("edge_checksum", self.edge_checksum);
        r.count("csr_checksum", self.csr_checksum);
        r.seconds("generate_time", self.generation);
        r.text("generate_device", self.generated_on);
        r.rate(
            "edges_per_second",
            g.num_input_edges as f64 / self.generation,
            "edges/s",
        );
        r.seconds("construction_time", self.construction);
        r.text("construction_device", self.built_on).stored_only();
    }
}

/// A check the caller makes before the build, with the partition and this rank's estimated
/// adjacency entries (a search checks its own device memory here).
pub type FitCheck<'a> = &'a dyn Fn(&Block1D, u64) -> Result<()>;

/// Make the graph `cfg` describes on every rank (collective).
pub fn build(
    world: &World,
    cfg: &GraphConfig,
    seed: u64,
    device: &Selected,
    transport: GpuTransport,
    fits: FitCheck,
) -> Result<Built> {
    let (built, _) = build_keeping_source(world, cfg, seed, (device, transport), fits)?;
    Ok(built)
}

/// `build`, handing back the opened source too (`tessera generate` writes its edges to a
/// file from it, without opening the graph a second time).
pub fn build_keeping_source(
    world: &World,
    cfg: &GraphConfig,
    seed: u64,
    (device, transport): (&Selected, GpuTransport),
    fits: FitCheck,
) -> Result<(Built, Box<dyn EdgeSource>)> {
    let started = Instant::now();
    let opened = open(world, cfg, seed, &Need::CSR)?;
    let source = opened.as_ref();
    let opened_seconds = started.elapsed().as_secs_f64();
    let part = Block1D::new(source.num_vertices(), world.size(), world.rank());
    let entries = entries_per_rank_estimate(world, source);
    fits(&part, entries)?;
    let (on_gpu, prepared) = gpu_generator(world, device, cfg, source)?;
    let opened_seconds = opened_seconds + prepared;
    let (edge_checksum, pass) = match &on_gpu {
        Some((gpu, edges)) => csr_gpu::edge_checksum(world, gpu, source, edges)?,
        None => {
            let t = Instant::now();
            (edge_checksum(world, source), t.elapsed().as_secs_f64())
        }
    };
    let generation = opened_seconds + pass;
    let generated_on = if on_gpu.is_some() { "gpu" } else { "cpu" };
    info!(
        "graph: generation {generation:.4} s on the {generated_on}: the source opened in {opened_seconds:.4} s (GPU parameters included), one pass over the edges {pass:.4} s"
    );
    let mut timers = PhaseTimes::default();
    world.barrier();
    let t = Instant::now();
    let (graph, device_csr, built_on) = match device {
        Selected::Gpu(gpu) => build_for_gpu(
            world,
            gpu,
            transport,
            cfg,
            (source, on_gpu.as_ref().map(|(_, edges)| edges)),
            (&part, entries),
            &mut timers,
        )?,
        Selected::Cpu if cfg.construction == Construction::Gpu => return Err(Error::Unavailable(
            "[graph] construction = \"gpu\" needs a run on GPUs, and this one computes on the CPU"
                .into(),
        )),
        Selected::Cpu => (DistGraph::build(world, source, &mut timers)?, None, "cpu"),
    };
    world.barrier();
    let construction = t.elapsed().as_secs_f64();
    let phases = reduce_phases(world, &timers);
    info!(
        "graph: {} {}: {} vertices, {} input edges, {} CSR entries; construction {construction:.3} s on the {built_on} ({})",
        cfg.spec.kind(),
        cfg.spec.parameters(),
        graph.n(),
        graph.num_input_edges,
        graph.num_entries,
        phases
            .iter()
            .map(|(name, secs)| format!("{name} {secs:.3}"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    let csr_checksum = graph.checksum(world);
    let built = Built {
        graph,
        generation,
        generated_on,
        edge_checksum,
        construction,
        built_on,
        csr_checksum,
        phases,
        device_csr,
    };
    Ok((built, opened))
}

/// Open the `[graph]` source (collective), refusing first, with one line on every rank, a
/// graph whose `need` the hosts cannot hold: before it is generated where the spec names its
/// size, else (a file) as soon as its header is read.
pub fn open(
    world: &World,
    cfg: &GraphConfig,
    seed: u64,
    need: &Need,
) -> Result<Box<dyn EdgeSource>> {
    check_before_making(world, cfg, need)?;
    let source = cfg.spec.open(world, seed)?;
    if source.num_vertices() == 0 {
        return Err(Error::Unavailable(format!(
            "the graph ({} {}) has no vertices",
            cfg.spec.kind(),
            cfg.spec.parameters()
        )));
    }
    if cfg.spec.size().is_none() {
        let size = (source.num_vertices(), source.num_edges());
        check_host(world, cfg, size, need)?;
    }
    Ok(source)
}

/// The arc graph (`arcs`: out- and in-rows, weights, parallel arcs kept or merged) of the
/// `[graph]` source (collective), refused first with one line where the hosts cannot hold
/// `need` (see `open`); `options` chooses how tuples become arcs, knowing the source.
pub fn build_arcs(
    world: &World,
    cfg: &GraphConfig,
    (seed, device): (u64, &Selected),
    need: &Need,
    options: impl FnOnce(&dyn EdgeSource) -> Result<ArcOptions>,
) -> Result<ArcGraph> {
    let source = open(world, cfg, seed, need)?;
    let source = source.as_ref();
    let options = options(source)?;
    let (g, built_on) = match arcs_on_gpu(world, device, cfg, source)? {
        Some(on) => (arcs_gpu::build(world, &on, source, options)?, "gpu"),
        None => {
            check_before_making(world, cfg, &Need::ARCS)?;
            (ArcGraph::build(world, source, options)?, "cpu")
        }
    };
    info!(
        "graph: {} {}: {} vertices, {} input edges, {} arcs ({}, parallel arcs {}) built on the {}",
        cfg.spec.kind(),
        cfg.spec.parameters(),
        g.n(),
        g.num_input_edges,
        g.num_arcs,
        if options.directed {
            "directed"
        } else {
            "both ways"
        },
        if options.merge_parallel {
            "merged"
        } else {
            "kept"
        },
        built_on,
    );
    Ok(g)
}

/// How kernel 1 of the arc graph of `source` runs on the GPU: where the run has one,
/// `[graph] construction` allows, the generator makes its edges (and weights, where it has
/// them) there on every rank, and the build fits (`arcs_gpu`); else None, the CPU builds it
/// (with a log line saying why; an error where `construction = "gpu"` cannot be met).
/// Collective.
pub fn arcs_on_gpu<'a>(
    world: &World,
    device: &'a Selected,
    cfg: &GraphConfig,
    source: &dyn EdgeSource,
) -> Result<Option<arcs_gpu::OnGpu<'a>>> {
    if let (Selected::Cpu, Construction::Gpu) = (device, cfg.construction) {
        return Err(Error::Unavailable(
            "[graph] construction = \"gpu\" needs a run on GPUs, and this one computes on the CPU"
                .into(),
        ));
    }
    if cfg.construction == Construction::Cpu {
        return Ok(None);
    }
    let weights = source.device_weights();
    // Weights travel in the low half of a 64-bit key.
    let weights_fit = weights.is_some_and(|w| w.range < 1 << 32) || !source.is_weighted();
    let weights_fit = world.allreduce(u64::from(weights_fit), Op::Min) == 1;
    let Some((gpu, edges)) = gpu_generator(world, device, cfg, source)?
        .0
        .filter(|_| weights_fit)
    else {
        if cfg.construction == Construction::Gpu {
            return Err(Error::Unavailable(format!(
                "[graph] construction = \"gpu\" builds generated graphs whose edges (and weights) the GPU makes, and {} has none there: set construction = \"cpu\" or \"auto\"",
                cfg.spec.kind()
            )));
        }
        return Ok(None);
    };
    let part = Block1D::new(source.num_vertices(), world.size(), world.rank());
    let needed = arcs_gpu::bytes_needed(&part, entries_per_rank_estimate(world, source));
    if !builds_on_gpu(world, gpu, cfg, source, needed)? {
        return Ok(None);
    }
    Ok(Some(arcs_gpu::OnGpu {
        gpu,
        edges,
        weights,
    }))
}

/// A rank's share of the input edge tuples, in the order of the global list (an edge's id is
/// its index there), as generated or read, without a CSR: for a workload that needs every
/// tuple as it is, duplicates and self-loops kept (the Euler circuit).
pub struct EdgeList {
    /// Vertices of the graph.
    pub n: u64,
    /// True when each tuple (u, v) is an arc u -> v (`EdgeSource::is_directed`).
    pub directed: bool,
    /// This rank's contiguous range of the global list.
    pub local: Vec<Edge>,
    /// Edge tuples over all ranks.
    pub m: u64,
    /// True when the source has weights: then `weights` has one for each of `local`.
    pub weighted: bool,
    pub weights: Vec<u64>,
}

/// The tuples as a source again (kernel 1 of SSCA#2 builds from generated tuples, so that
/// it times the build alone).
impl EdgeSource for EdgeList {
    fn num_vertices(&self) -> u64 {
        self.n
    }
    fn num_edges(&self) -> u64 {
        self.m
    }
    fn local_len(&self) -> u64 {
        self.local.len() as u64
    }
    fn local_chunk(&self, start: u64, len: u64, out: &mut Vec<Edge>) {
        out.extend_from_slice(&self.local[start as usize..(start + len) as usize]);
    }
    fn is_directed(&self) -> bool {
        self.directed
    }
    fn is_weighted(&self) -> bool {
        self.weighted
    }
    fn local_weights(&self, start: u64, len: u64, out: &mut Vec<u64>) {
        if self.weighted {
            out.extend_from_slice(&self.weights[start as usize..(start + len) as usize]);
        }
    }
}

/// Make the graph `cfg` describes as this rank's edge tuples (collective), refused first
/// with one line where the hosts cannot hold `need` (see `open`).
pub fn edge_list(world: &World, cfg: &GraphConfig, seed: u64, need: &Need) -> Result<EdgeList> {
    let source = open(world, cfg, seed, need)?;
    Ok(edge_list_of(source.as_ref()))
}

/// This rank's edge tuples of an opened source.
pub fn edge_list_of(source: &dyn EdgeSource) -> EdgeList {
    let (mut local, mut weights) = (Vec::new(), Vec::new());
    source.local_chunk(0, source.local_len(), &mut local);
    source.local_weights(0, source.local_len(), &mut weights);
    EdgeList {
        n: source.num_vertices(),
        directed: source.is_directed(),
        local,
        m: source.num_edges(),
        weighted: source.is_weighted(),
        weights,
    }
}

/// The GPU and the generator's GPU edge function with its parameters there, on a GPU run
/// of a generator that has one on every rank; None otherwise (on a GPU run, with a log line
/// saying the CPU makes the edges). Also the seconds making the parameters took (host and
/// GPU; the kernels compiled apart). Collective.
fn gpu_generator<'a>(
    world: &World,
    device: &'a Selected,
    cfg: &GraphConfig,
    source: &dyn EdgeSource,
) -> Result<(Option<(&'a Gpu, GpuEdges)>, f64)> {
    let Selected::Gpu(gpu) = device else {
        return Ok((None, 0.0));
    };
    let t = Instant::now();
    let edges = source.device_edges();
    let mut seconds = t.elapsed().as_secs_f64();
    let on_gpu = match edges {
        Some(edges) => {
            gpu.function(csr_gpu::FILE, &format!("{}_checksum", edges.kernel))?;
            let t = Instant::now();
            let params = source.device_params(gpu, &edges)?;
            seconds += t.elapsed().as_secs_f64();
            params.map(|params| GpuEdges {
                kernel: edges.kernel,
                params,
                first_edge: edges.first_edge,
            })
        }
        None => None,
    };
    let everywhere = world.allreduce(on_gpu.is_some() as u64, Op::Min) == 1;
    let on_gpu = on_gpu.filter(|_| everywhere);
    if on_gpu.is_none() {
        info!(
            "graph: {} has no GPU generator for this graph on every rank: its edges are made on the CPU",
            cfg.spec.kind()
        );
    }
    Ok((on_gpu.map(|edges| (gpu, edges)), seconds))
}

/// A rank's block of the 2D partition, where kernel 1 left it.
pub enum Blocks2D {
    Host(Block2D),
    Device(DeviceBlocks),
}

/// Kernel 1 of the 2D partition, and what was measured making it.
pub struct Built2D {
    pub blocks: Blocks2D,
    /// Seconds between barriers.
    pub seconds: f64,
    /// Each the slowest rank's seconds.
    pub phases: Phases,
    /// This rank's entries' share of the CSR checksum.
    pub entry_checksum: u64,
    /// Entries of all ranks' blocks.
    pub num_entries: u64,
    /// Where it ran: "cpu" or "gpu".
    pub built_on: &'static str,
}

/// Kernel 1 of the 2D partition on `layout`'s grid: the rank's block A(i, j), from the
/// source opened again, built on the GPU (where it stays) as the 1D build would be, else on
/// the CPU (collective).
pub fn build_blocks(
    world: &World,
    cfg: &GraphConfig,
    seed: u64,
    layout: Layout2D,
    (device, transport): (&Selected, GpuTransport),
) -> Result<Built2D> {
    let source = cfg.spec.open(world, seed)?;
    let source = source.as_ref();
    let on_gpu = match gpu_generator(world, device, cfg, source)?.0 {
        Some((gpu, edges)) => {
            let entries = entries_per_rank_estimate(world, source);
            let needed = block2d_gpu::bytes_needed(&layout, entries)
                + DeviceBlocks::bytes_for(&layout, entries);
            builds_on_gpu(world, gpu, cfg, source, needed)?.then_some((gpu, edges))
        }
        None => None,
    };
    let mut timers = PhaseTimes::default();
    world.barrier();
    let t = Instant::now();
    let (blocks, entry_checksum, num_entries, built_on) = match on_gpu {
        Some((gpu, edges)) => {
            let (blocks, checksum) =
                block2d_gpu::build(world, gpu, transport, (source, &edges), layout, &mut timers)?;
            let entries = block2d_gpu::total_entries(world, &blocks);
            (Blocks2D::Device(blocks), checksum, entries, "gpu")
        }
        None => {
            let blocks = Block2D::build(world, source, layout, &mut timers)?;
            let checksum = blocks.entry_checksum();
            let entries = blocks.num_entries;
            (Blocks2D::Host(blocks), checksum, entries, "cpu")
        }
    };
    world.barrier();
    Ok(Built2D {
        blocks,
        seconds: t.elapsed().as_secs_f64(),
        phases: reduce_phases(world, &timers),
        entry_checksum,
        num_entries,
        built_on,
    })
}

/// Whether kernel 1 can run on the GPU, needing `needed` bytes per rank there: the ids must
/// fit 32 bits and the bytes the smallest free memory. When not, fails where `[graph]
/// construction = "gpu"` asked for it, else says why the CPU builds. Collective.
fn builds_on_gpu(
    world: &World,
    gpu: &Gpu,
    cfg: &GraphConfig,
    source: &dyn EdgeSource,
    needed: u64,
) -> Result<bool> {
    let needed = world.allreduce(needed, Op::Max);
    let free = world.allreduce(crate::device::memory::gpu_free(gpu)?, Op::Min);
    let why = if source.num_vertices() > 1 << 32 {
        Some(format!(
            "the GPU build packs vertex ids in 32 bits, and this graph has {} vertices",
            source.num_vertices()
        ))
    } else {
        (needed > free).then(|| format!(
            "building the graph on the GPU needs about {needed} bytes per rank, but only {free} are free"
        ))
    };
    let Some(why) = why else {
        return Ok(true);
    };
    if cfg.construction == Construction::Gpu {
        return Err(Error::Unavailable(format!(
            "{why}: set [graph] construction = \"cpu\" or \"auto\""
        )));
    }
    info!("{why}: building it on the CPU");
    Ok(false)
}

/// Kernel 1 for a GPU run: on the GPU where `[graph] construction` allows and the source's
/// edges have a GPU generator (`edges`), keeping the CSR there too, else on the CPU. `part` and `entries`: the
/// partition and the rank's estimated adjacency entries, as `build` made them.
fn build_for_gpu(
    world: &World,
    gpu: &Gpu,
    transport: GpuTransport,
    cfg: &GraphConfig,
    (source, edges): (&dyn EdgeSource, Option<&GpuEdges>),
    (part, entries): (&Block1D, u64),
    timers: &mut PhaseTimes,
) -> Result<(DistGraph, Option<DeviceCsr>, &'static str)> {
    let choice = cfg.construction;
    let on_cpu = |timers| Ok((DistGraph::build(world, source, timers)?, None, "cpu"));
    let edges = match (choice, edges) {
        (Construction::Cpu, _) | (Construction::Auto, None) => return on_cpu(timers),
        (Construction::Gpu, None) => {
            return Err(Error::Unavailable(format!(
                "[graph] construction = \"gpu\" builds generated graphs whose edges the GPU makes, and {} has no GPU generator: set construction = \"cpu\" or \"auto\"",
                cfg.spec.kind()
            )))
        }
        (_, Some(edges)) => edges,
    };
    if !builds_on_gpu(
        world,
        gpu,
        cfg,
        source,
        csr_gpu::bytes_needed(part, entries),
    )? {
        return on_cpu(timers);
    }
    let (graph, csr) = csr_gpu::build(world, gpu, transport, (source, edges), timers)?;
    Ok((graph, Some(csr), "gpu"))
}

/// Adjacency entries a rank will hold, before the graph is built: each input edge gives two,
/// spread evenly over the ranks (duplicates and self-loops included, so at most a little high).
pub fn entries_per_rank_estimate(world: &World, source: &dyn EdgeSource) -> u64 {
    2 * source.num_edges() / world.size() as u64
}

/// Order-independent checksum of the edge tuples (wrapping sum of hashed tuples), also one
/// full pass over the edges: its time is the generation time.
pub fn edge_checksum(world: &World, source: &dyn EdgeSource) -> u64 {
    const CHUNK: u64 = 1 << 20;
    let mut sum = 0u64;
    let mut chunk = Vec::with_capacity(CHUNK.min(source.local_len()) as usize);
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

fn reduce_phases(world: &World, phases: &PhaseTimes) -> Phases {
    let names: Vec<&'static str> = phases.iter().map(|(n, _)| n).collect();
    let mut secs: Vec<f64> = phases.iter().map(|(_, s)| s).collect();
    world.allreduce_slice(&mut secs, Op::Max);
    names.into_iter().zip(secs).collect()
}

/// Host bytes a workload needs for a graph of n vertices and m edge tuples: shares spread
/// over the ranks, copies every rank holds, and what one rank (rank 0) gathers.
#[derive(Clone, Copy, Debug)]
pub struct Need {
    /// What needs it, for the message ("the graph", "analyze's copy of the graph").
    pub what: &'static str,
    /// Bytes per vertex and per edge tuple, spread evenly over the ranks.
    pub shared: (u64, u64),
    /// Bytes per vertex and per edge tuple of the whole graph, on every rank.
    pub every_rank: (u64, u64),
    /// Bytes per edge tuple of the whole graph on one rank.
    pub one_rank: u64,
}

impl Need {
    /// The CSR and the searches: two 8-byte entries per tuple, and about 48 bytes per vertex
    /// (row offsets, tuple endpoint counts, parents, the validator's levels and queues).
    pub const CSR: Need = Need {
        what: "the graph",
        shared: (48, 16),
        every_rank: (0, 0),
        one_rank: 0,
    };

    /// The arc graph (`build_arcs`): the build's triples (24 bytes an arc, two arcs a
    /// tuple, sent and received) and the rows.
    pub const ARCS: Need = Need {
        what: "the graph's arcs",
        shared: (48, 64),
        every_rank: (0, 0),
        one_rank: 0,
    };

    /// The arc graph built on the GPU (`arcs_gpu`): only the rows come to the host, out and
    /// in, a neighbour and a weight per arc (4 bytes each).
    pub const ARCS_FROM_GPU: Need = Need {
        what: "the graph's arcs",
        shared: (48, 16),
        every_rank: (0, 0),
        one_rank: 0,
    };

    /// What the arc graph needs on the hosts: less where a GPU run builds a generated graph
    /// (`arcs_on_gpu` decides once the source is open; where it falls back to the CPU,
    /// `ARCS` is checked then).
    pub fn arcs(device: &Selected, cfg: &GraphConfig) -> Need {
        let generated = cfg.spec.size().is_some() && cfg.construction != Construction::Cpu;
        match device {
            Selected::Gpu(_) if generated => Need::ARCS_FROM_GPU,
            _ => Need::ARCS,
        }
    }

    /// Bytes on a node of `ranks` ranks, `local` of them there, per rank (rounded up).
    fn per_rank(&self, (n, m): (u64, u64), ranks: u64, local: u64) -> u64 {
        let mul = |a: u64, b: u64| a.saturating_mul(b);
        let spread = mul(self.shared.0, n.div_ceil(ranks))
            .saturating_add(mul(self.shared.1, m.div_ceil(ranks)));
        let every = mul(self.every_rank.0, n).saturating_add(mul(self.every_rank.1, m));
        let node = mul(spread.saturating_add(every), local).saturating_add(mul(self.one_rank, m));
        node.div_ceil(local)
    }
}

/// `check_host` before the graph is made, where the spec names its size (collective; a
/// file's size is known once its header is read).
pub fn check_before_making(world: &World, cfg: &GraphConfig, need: &Need) -> Result<()> {
    match cfg.spec.size() {
        Some(size) => check_host(world, cfg, size, need),
        None => Ok(()),
    }
}

/// Refuse, with one line on every rank, a graph of `size` (vertices, edge tuples) whose
/// `need` the ranks of a node cannot hold in its memory: the bytes needed and available, and
/// the largest SCALE (Kronecker, SSCA#2) or edge count that fits (collective).
pub fn check_host(world: &World, cfg: &GraphConfig, size: (u64, u64), need: &Need) -> Result<()> {
    let (ranks, local) = (world.size() as u64, world.local_size() as u64);
    let bytes = |size: (u64, u64)| need.per_rank(size, ranks, local);
    let (n, m) = size;
    let what = format!(
        "{} ({} {})",
        need.what,
        cfg.spec.kind(),
        cfg.spec.parameters()
    );
    let fitting = |budget: u64| match cfg.spec.scale() {
        Some(_) => {
            let factor = m / n.max(1);
            let scale = largest_fitting(1, MAX_SCALE as u64, budget, |s| {
                bytes((1 << s, factor << s))
            });
            match scale {
                Some(s) => format!("the largest SCALE that fits on {ranks} rank(s) is {s}"),
                None => "not even SCALE 1 fits".into(),
            }
        }
        None if matches!(cfg.spec, GraphSpec::File(_)) => format!(
            "about {:.1} times the ranks' memory would hold it, or run fewer ranks per node",
            bytes(size) as f64 / budget.max(1) as f64
        ),
        None => match largest_fitting(0, m, budget, |e| bytes((n, e))) {
            Some(e) => {
                format!("the most edges that fit with {n} vertices on {ranks} rank(s) is {e}")
            }
            None => format!("its {n} vertices alone do not fit on {ranks} rank(s)"),
        },
    };
    let place = Place::Host {
        ranks: local as usize,
    };
    world.agree(memory::check(&what, bytes(size), place, fitting))
}

/// The smallest `MemAvailable` of any rank's node, in bytes (collective; unlimited where
/// /proc/meminfo cannot be read).
pub fn host_memory_available(world: &World) -> u64 {
    world.allreduce(memory::host_available(), Op::Min)
}
