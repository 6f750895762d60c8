//! The one place a graph is made (as GAP's `Builder::MakeGraph`): open the `[graph]` source,
//! check the host (and, through the caller, the device) can hold it, pass over the edges once
//! (generation time and edge checksum: on the GPU on a GPU run of a generator that has a GPU
//! edge function, else on the CPU), build the 1D CSR on the GPU (where it stays, for the GPU
//! workload) or the CPU (kernel 1), and checksum the result. Every graph workload takes its graph from here.

use super::block2d::{Block2D, Layout2D};
use super::block2d_gpu::{self, DeviceBlocks};
use super::csr_gpu::DeviceCsr;
use super::source::{Construction, GraphConfig};
use super::{csr_gpu, Block1D, DeviceEdges, DistGraph, EdgeSource};
use crate::comm::{GpuTransport, Op, PhaseTimes, World};
use crate::device::{Gpu, Selected};
use crate::error::{Error, Result};
use crate::output::ResultFile;
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

    /// The `/graph` group every graph workload's result file carries.
    /// `/graph` in a report: the generator, its parameters and seed, sizes, checksums, times.
    pub fn report(&self, report: &mut Report, cfg: &GraphConfig, seed: u64) {
        let g = &self.graph;
        let mut r = report.group("graph");
        r.text("generator", cfg.spec.kind()).stored_only();
        r.text("parameters", cfg.spec.parameters()).stored_only();
        r.count("seed", seed).stored_only();
        r.count("vertices", g.n()).stored_only();
        r.count("edges", g.num_input_edges).stored_only();
        r.count("csr_entries", g.num_entries).stored_only();
        // Each kept undirected edge is two CSR entries; the rest were loops or duplicates.
        r.count(
            "loops_and_duplicates_dropped",
            g.num_input_edges - g.num_entries / 2,
        )
        .stored_only();
        r.count("edge_checksum", self.edge_checksum).stored_only();
        r.count("csr_checksum", self.csr_checksum).stored_only();
        r.seconds("generate_time", self.generation).stored_only();
        r.text("generate_device", self.generated_on).stored_only();
        r.rate(
            "edges_per_second",
            g.num_input_edges as f64 / self.generation,
            "edges/s",
        )
        .stored_only();
        r.seconds("construction_time", self.construction)
            .stored_only();
        r.text("construction_device", self.built_on).stored_only();
    }

    pub fn write(&self, file: &ResultFile, cfg: &GraphConfig, seed: u64) -> Result<()> {
        let g = &self.graph;
        let group = file.group("graph")?;
        let w = group.writer();
        w.attr_str("generator", cfg.spec.kind())?;
        w.attr_str("parameters", &cfg.spec.parameters())?;
        w.attr("seed", seed)?;
        w.attr("vertices", g.n())?;
        w.attr("edges", g.num_input_edges)?;
        w.attr("csr_entries", g.num_entries)?;
        // Each kept undirected edge is two CSR entries; the rest were loops or duplicates.
        w.attr(
            "loops_and_duplicates_dropped",
            g.num_input_edges - g.num_entries / 2,
        )?;
        w.attr("edge_checksum", self.edge_checksum)?;
        w.attr("csr_checksum", self.csr_checksum)?;
        w.attr("generate_time", self.generation)?;
        w.attr_str("generate_device", self.generated_on)?;
        w.attr(
            "edges_per_second",
            g.num_input_edges as f64 / self.generation,
        )?;
        w.attr("construction_time", self.construction)?;
        w.attr_str("construction_device", self.built_on)
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
    let started = Instant::now();
    let source = cfg.spec.open(world, seed)?;
    let source = source.as_ref();
    let opened = started.elapsed().as_secs_f64();
    if source.num_vertices() == 0 {
        return Err(Error::Unavailable(format!(
            "the graph ({} {}) has no vertices",
            cfg.spec.kind(),
            cfg.spec.parameters()
        )));
    }
    let part = Block1D::new(source.num_vertices(), world.size(), world.rank());
    let entries = entries_per_rank_estimate(world, source);
    check_host_memory(world, &part, entries, cfg.spec.scale().is_some())?;
    fits(&part, entries)?;
    let on_gpu = gpu_generator(world, device, cfg, source);
    let (edge_checksum, pass) = match &on_gpu {
        Some((gpu, edges)) => csr_gpu::edge_checksum(world, gpu, source, edges)?,
        None => {
            let t = Instant::now();
            (edge_checksum(world, source), t.elapsed().as_secs_f64())
        }
    };
    let generation = opened + pass;
    let generated_on = if on_gpu.is_some() { "gpu" } else { "cpu" };
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
    info!(
        "graph: {} {}: {} vertices, {} input edges, {} CSR entries; construction {construction:.3} s on the {built_on}",
        cfg.spec.kind(),
        cfg.spec.parameters(),
        graph.n(),
        graph.num_input_edges,
        graph.num_entries,
    );
    let csr_checksum = graph.checksum(world);
    Ok(Built {
        graph,
        generation,
        generated_on,
        edge_checksum,
        construction,
        built_on,
        csr_checksum,
        phases: reduce_phases(world, &timers),
        device_csr,
    })
}

/// The GPU and the generator's GPU edge function, on a GPU run of a generator that has
/// one on every rank; None otherwise (on a GPU run, with a log line saying the CPU makes the
/// edges). Collective.
fn gpu_generator<'a>(
    world: &World,
    device: &'a Selected,
    cfg: &GraphConfig,
    source: &dyn EdgeSource,
) -> Option<(&'a Gpu, DeviceEdges)> {
    let Selected::Gpu(gpu) = device else {
        return None;
    };
    let edges = source.device_edges();
    let everywhere = world.allreduce(edges.is_some() as u64, Op::Min) == 1;
    let edges = edges.filter(|_| everywhere);
    if edges.is_none() {
        info!(
            "graph: {} has no GPU generator: its edges are made on the CPU",
            cfg.spec.kind()
        );
    }
    Some((gpu, edges?))
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
    let on_gpu = match gpu_generator(world, device, cfg, source) {
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
    let free = world.allreduce(gpu.memory()?.0 as u64, Op::Min);
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
    (source, edges): (&dyn EdgeSource, Option<&DeviceEdges>),
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

/// The smallest `MemAvailable` of any rank's node, in bytes (collective; unlimited where
/// /proc/meminfo cannot be read).
pub fn host_memory_available(world: &World) -> u64 {
    world.allreduce(crate::device::memory::host_available(), Op::Min)
}

/// Host bytes a rank needs for its part of the graph (`entries` adjacency entries) and the
/// searches: 8 per entry, and about 48 per vertex (row offsets, tuple endpoint counts,
/// parents, the validator's levels and queues).
fn host_bytes_needed(part: &Block1D, entries: u64) -> u64 {
    8 * entries + 48 * part.local_n() as u64
}

/// Fail early, with one line on every rank, when the ranks on a node clearly cannot hold
/// their parts of the graph in its memory (instead of being killed for memory mid-build).
/// `scaled`: the graph has a SCALE, so the line can name the largest one that fits.
fn check_host_memory(world: &World, part: &Block1D, entries: u64, scaled: bool) -> Result<()> {
    let available = host_memory_available(world);
    let per_rank = world.allreduce(host_bytes_needed(part, entries), Op::Max);
    let needed = per_rank.saturating_mul(world.local_size() as u64);
    if needed <= available {
        return Ok(());
    }
    let nodes = world.size() as f64 / world.local_size() as f64;
    let fitting = if scaled {
        let per_vertex = per_rank as f64 / part.block as f64;
        let vertices =
            available as f64 / per_vertex / world.local_size() as f64 * world.size() as f64;
        format!(
            "; at this edge factor the largest SCALE that fits on {nodes} such node(s) is about {}",
            vertices.log2().floor()
        )
    } else {
        format!(
            "; this input needs about {:.1} such node(s), or fewer ranks per node",
            needed as f64 * nodes / available as f64
        )
    };
    Err(Error::Unavailable(format!(
        "the graph does not fit in host memory: the {} rank(s) on a node need about {needed} bytes but {available} are available (MemAvailable, /proc/meminfo){fitting}",
        world.local_size(),
    )))
}
