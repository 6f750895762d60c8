//! The GPU side of the BFS (`search::Frontiers`): the rank's CSR (a `DeviceCsr`), parents and
//! frontiers live on its GPU for the whole run; the kernels are in `kernels/bfs.cu`, and every
//! launch below passes its arguments in the order of the kernel's parameters there. What goes
//! to other ranks the top-down scan writes straight into runs by owner, and `GpuExchange`
//! moves them (NCCL, or host memory and MPI).

use super::gpu_vertices::{FrontierLayout, OwnVertices, COUNTERS};
use super::search::{Frontiers, LevelClock};
use super::validate_depths::DeviceVerdict;
use super::validate_gpu::DeviceValidator;
use crate::comm::gpu::GpuExchange;
use crate::comm::{GpuTransport, Op, World};
use crate::device::{blocks, filling_grid, gpu_error, memory, Gpu, Kernel, THREADS};
use crate::error::{Error, Result};
use crate::graph::csr_gpu::DeviceCsr;
use crate::graph::{Block1D, DistGraph, Vid};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

/// Rows this long or longer are scanned by the whole grid (kernels/bfs.cu
/// `scan_heavy_rows`), not by one warp.
pub const HEAVY_DEGREE: usize = 4096;

/// Queues this short (the hubs of the first levels) send rows of `SHORT_HEAVY_DEGREE` or
/// more to the whole grid: a warp alone walks a row of d entries in d / 32 dependent steps
/// (claim, slot, match), so with few rows the longest light one set the level's time, while
/// the grid takes each heavy row in about a step. The heavy list has room for them
/// (`heavy_capacity`).
pub const SHORT_QUEUE: u64 = 64;
pub const SHORT_HEAVY_DEGREE: u64 = 256;

/// Rows at least this long go to the heavy list in a top-down scan of `len` queue entries.
pub fn heavy_degree(len: u64) -> u64 {
    if len <= SHORT_QUEUE {
        SHORT_HEAVY_DEGREE
    } else {
        HEAVY_DEGREE as u64
    }
}

/// Entries of the heavy list for a CSR of `entries` adjacency entries: every row of
/// HEAVY_DEGREE or more, or a whole short queue.
pub fn heavy_capacity(entries: u64) -> usize {
    (entries / HEAVY_DEGREE as u64 + 1 + SHORT_QUEUE) as usize
}

/// A top-down scan kernel of kernels/bfs.cu: compiled for TESSERA_BFS_MIN_BLOCKS (1 to 8)
/// blocks of THREADS a multiprocessor, its registers capped to match, where that measurement
/// switch is set (each such kernel compiles the file again); else as the compiler chooses.
pub fn scan_kernel(gpu: &Gpu, name: &str) -> Result<Kernel> {
    let min_blocks = std::env::var("TESSERA_BFS_MIN_BLOCKS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|b| (1..=8).contains(b));
    match min_blocks {
        Some(b) => gpu.specialised("bfs.cu", &[("SCAN_MIN_BLOCKS", b)], name),
        None => gpu.function("bfs.cu", name),
    }
}

struct Kernels {
    top_down: Kernel,
    top_down_heavy: Kernel,
    bottom_up: Kernel,
    /// Blocks of each that fill the GPU (its own occupancy), for the grid-stride loops.
    top_down_blocks: u32,
    heavy_blocks: u32,
    bottom_up_blocks: u32,
}

impl Kernels {
    fn new(gpu: &Gpu) -> Result<Self> {
        let (top_down, top_down_heavy) = (
            scan_kernel(gpu, "bfs_top_down")?,
            scan_kernel(gpu, "bfs_top_down_heavy")?,
        );
        let bottom_up = gpu.function("bfs.cu", "bfs_bottom_up")?;
        let fill = |k| gpu.resident_blocks(k);
        Ok(Kernels {
            top_down_blocks: fill(&top_down)?,
            heavy_blocks: fill(&top_down_heavy)?,
            bottom_up_blocks: fill(&bottom_up)?,
            top_down,
            top_down_heavy,
            bottom_up,
        })
    }
}

pub struct GpuFrontiers<'a> {
    own: OwnVertices<'a>,
    exchange: GpuExchange<'a>,
    k: Kernels,
    ranks: usize,
    csr: DeviceCsr,
    global_bits: CudaSlice<u64>,
    /// Packed (vertex, parent) pairs for other ranks, as the top-down scan found them: one
    /// run of `run_capacity` pairs per other rank, in rank order.
    remote: CudaSlice<u64>,
    run_capacity: u64,
    /// Where each rank's run starts in `remote` (this rank's: 0, empty).
    run_at: Vec<usize>,
    /// Vertices per rank: the owner of vertex v is v / block.
    block: u64,
    /// Pairs other ranks sent here.
    received: CudaSlice<u64>,
    /// Global bitmap of the vertices already sent to their owners in this search.
    sent: CudaSlice<u64>,
    /// Frontier vertices whose rows the whole grid scans (see kernels/bfs.cu).
    heavy: CudaSlice<u32>,
    /// Made at the first validation on the device.
    validator: Option<DeviceValidator>,
    world: &'a World,
}

/// Pairs a rank may send to each other rank (its run in the send buffer) and receive in all
/// in one level. The `sent` bitmap lets a rank send each remote vertex once per search, so
/// it sends an owner at most its `block` vertices, and at most one pair per entry; each pair
/// received stands for one adjacency entry of a local vertex (the graph is symmetric), and
/// at most one comes from each other rank.
fn exchange_capacities(part: &Block1D, entries: u64) -> (usize, usize) {
    if part.size == 1 {
        return (1, 1);
    }
    let local_n = part.local_n() as u64;
    let run = entries.min(part.block).max(1);
    let recv = entries.min(local_n * (part.size as u64 - 1)).max(1);
    (run as usize, recv as usize)
}

/// Where the runs for each of `ranks` ranks start in the send buffer: the other ranks' in
/// rank order, `run` pairs each; `me`'s is empty (0).
fn run_starts(run: usize, (me, ranks): (usize, usize)) -> Vec<usize> {
    (0..ranks)
        .map(|r| match r.cmp(&me) {
            std::cmp::Ordering::Less => r * run,
            std::cmp::Ordering::Equal => 0,
            std::cmp::Ordering::Greater => (r - 1) * run,
        })
        .collect()
}

/// Device bytes a rank needs for the search besides its CSR (`entries` adjacency entries).
fn search_bytes(part: &Block1D, entries: u64) -> u64 {
    let n = part.local_n() as u64;
    let words = part.words_per_rank() as u64;
    let ranks = part.size as u64;
    let (run, recv) = exchange_capacities(part, entries);
    let runs = (ranks - 1).max(1);
    let exchange = 8 * (run as u64 * runs + recv as u64) + 8 * ranks;
    let heavy = 4 * heavy_capacity(entries) as u64;
    // Global frontier and sent bitmaps.
    let bitmaps = 2 * 8 * words * ranks;
    OwnVertices::bytes(n, words) + bitmaps + exchange + heavy
}

/// Device bytes a rank needs for its part of the graph (`entries` adjacency entries) and
/// for the search.
pub fn bytes_needed(part: &Block1D, entries: u64) -> u64 {
    DeviceCsr::bytes(part.local_n() as u64, entries) + search_bytes(part, entries)
}

impl<'a> GpuFrontiers<'a> {
    /// Allocate the search buffers, after checking they fit, with the rank's CSR: `csr`
    /// where the GPU built it, else uploaded from `g`.
    pub fn new(
        world: &'a World,
        gpu: &'a Gpu,
        transport: GpuTransport,
        g: &DistGraph,
        csr: Option<DeviceCsr>,
    ) -> Result<Self> {
        check_ids(g)?;
        let entries = g.adj.len() as u64;
        let needed = match csr {
            Some(_) => search_bytes(&g.part, entries),
            None => bytes_needed(&g.part, entries),
        };
        check_fit(world, gpu, needed, &g.part, false, false)?;
        let csr = match csr {
            Some(csr) => csr,
            None => DeviceCsr::upload(gpu, &g.offsets, &g.adj)?,
        };
        let entries = csr.entries() as u64;
        let exchange = GpuExchange::open(world, gpu, transport)?;
        let words = g.part.words_per_rank();
        let local_n = g.local_n();
        let ranks = world.size();
        let (run, recv_capacity) = exchange_capacities(&g.part, entries);
        let runs = (ranks - 1).max(1);
        Ok(GpuFrontiers {
            own: OwnVertices::new(gpu, g.n(), (g.part.first(), local_n), words, ranks)?,
            exchange,
            k: Kernels::new(gpu)?,
            ranks,
            csr,
            global_bits: gpu.zeros("global bitmap", words * ranks)?,
            remote: gpu.zeros("exchange buffer", run * runs)?,
            run_capacity: run as u64,
            run_at: run_starts(run, (world.rank(), ranks)),
            block: g.part.block,
            received: gpu.zeros("exchange buffer", recv_capacity)?,
            sent: gpu.zeros("sent bitmap", words * ranks)?,
            heavy: gpu.zeros("heavy list", heavy_capacity(entries))?,
            validator: None,
            world,
        })
    }
}

/// The GPU kernels store vertex ids in 32 bits.
pub fn check_ids(g: &DistGraph) -> Result<()> {
    if g.n() > u32::MAX as u64 + 1 {
        return Err(Error::Unavailable(format!(
            "the GPU path stores vertex ids in 32 bits, so N must be at most 2^32; this graph has {} vertices",
            g.n()
        )));
    }
    Ok(())
}

/// Fail with one line (on every rank alike) when a rank's part of the graph (`entries`
/// adjacency entries) and its search buffers do not fit on the GPUs. `estimated`: `entries`
/// was counted before the graph was built (two per input edge, duplicates included), so the
/// message says "about". The advice names how many such GPUs the graph needs and, for a
/// `generated` one, the largest SCALE that fits (from the bytes per vertex).
pub fn check_memory(
    world: &World,
    gpu: &Gpu,
    part: &Block1D,
    entries: u64,
    estimated: bool,
    generated: bool,
) -> Result<()> {
    let needed = bytes_needed(part, entries);
    check_fit(world, gpu, needed, part, estimated, generated)
}

/// `check_memory` for `needed` bytes per rank.
pub fn check_fit(
    world: &World,
    gpu: &Gpu,
    needed: u64,
    part: &Block1D,
    estimated: bool,
    generated: bool,
) -> Result<()> {
    let (free, total) = gpu.memory()?;
    let needed = world.allreduce(needed, Op::Max);
    let free = world.allreduce(free as u64, Op::Min);
    if !estimated {
        log::info!(
            "GPU memory: {:.2} GB needed per rank, {:.2} GB free (smallest over ranks), {:.2} GB total on rank 0's GPU",
            needed as f64 / 1e9,
            free as f64 / 1e9,
            total as f64 / 1e9
        );
    }
    if needed <= free {
        return Ok(());
    }
    let ranks = world.size() as u64;
    let mut advice = format!(
        "the graph ({} vertices) needs about {} such GPUs",
        part.n,
        (needed * ranks).div_ceil(free.max(1))
    );
    if generated {
        let fitting = free as f64 / (needed as f64 / part.block as f64) * ranks as f64;
        advice += &format!(
            "; at this edge factor the largest SCALE that fits on {ranks} is about {}",
            fitting.log2().floor()
        );
    }
    Err(memory::refusal(
        "the graph",
        needed,
        free,
        &format!("GPU memory per rank (the least free over ranks; {})", gpu.describe()),
        &advice,
    ))
}

impl Frontiers for GpuFrontiers<'_> {
    fn start(&mut self, root: Vid) -> Result<u64> {
        let degree = self.own.start(root, &self.csr.offsets)?;
        self.own
            .gpu
            .stream
            .memset_zeros(&mut self.sent)
            .map_err(|e| gpu_error("clear sent bitmap", e))?;
        Ok(degree)
    }

    fn top_down(&mut self, clock: &mut LevelClock) -> Result<u64> {
        let (inspected, counts) = clock.local(|| self.scan_frontier())?;
        if self.ranks == 1 {
            return Ok(inspected);
        }
        clock.bytes_sent += 8 * counts.iter().sum::<usize>() as u64;
        let runs = (self.run_at.as_slice(), counts.as_slice());
        let received = clock.exchange(|| {
            self.exchange
                .alltoallv_runs(&self.remote, runs, &mut self.received)
        })?;
        let received: usize = received.iter().sum();
        clock.bytes_received += 8 * received as u64;
        let first = self.own.first;
        clock.local(|| {
            self.own
                .claim(&self.received, received as u64, first, &self.csr.offsets)
        })?;
        Ok(inspected)
    }

    fn bottom_up(&mut self, clock: &mut LevelClock) -> Result<u64> {
        clock.local(|| self.own.current_bits())?;
        if self.ranks > 1 {
            let words = self.own.words;
            clock.bytes_sent += (8 * words * (self.ranks - 1)) as u64;
            clock.bytes_received += (8 * words * (self.ranks - 1)) as u64;
            clock.exchange(|| {
                self.exchange
                    .allgather(&self.own.bits, &mut self.global_bits)
            })?;
        }
        clock.local(|| self.scan_unvisited())
    }

    fn advance(&mut self) -> Result<(u64, u64)> {
        self.own.advance()
    }

    fn fetch_parents(&mut self) -> Result<()> {
        self.own.fetch_parents()
    }

    fn parents(&mut self, out: &mut [i64]) -> Result<()> {
        self.own.parents(out)
    }

    fn transport(&self) -> &'static str {
        self.exchange.name()
    }

    fn depths(&mut self, out: &mut [i32]) -> Result<()> {
        self.own.depths(out)
    }

    fn set_parent(&mut self, l: usize, p: i64) -> Result<()> {
        self.own.set_parent(l, p)
    }

    fn check_on_device(&mut self, g: &DistGraph, root: Vid) -> Result<Option<DeviceVerdict>> {
        if self.validator.is_none() {
            self.validator = Some(DeviceValidator::new(self.world, self.own.gpu, g, 0)?);
        }
        let validator = self.validator.as_mut().expect("made above");
        let verdict = validator.check(&self.exchange, &self.csr, &self.own, root, g.n())?;
        Ok(Some(verdict))
    }
}

impl GpuFrontiers<'_> {
    /// Top-down scan of the current frontier's rows: local neighbours are claimed into the
    /// next queue, packed pairs for other ranks written to their runs in `remote`. Returns
    /// the entries read and the runs' lengths by rank.
    fn scan_frontier(&mut self) -> Result<(u64, Vec<usize>)> {
        let len = self.own.current_queue()?;
        self.own.zero_counters()?;
        let capacity = self.run_capacity;
        let (block, me) = (self.block, self.exchange.rank() as u64);
        let (own, csr) = (&mut self.own, &self.csr);
        let gpu = own.gpu;
        // The light rows (a lane or a warp each), then the heavy ones over the whole grid;
        // both kernels take the same arguments.
        let (light_grid, per_warp) = queue_grid(len, self.k.top_down_blocks);
        let heavy_degree = heavy_degree(len);
        let light = (&self.k.top_down, light_grid);
        let heavy = (&self.k.top_down_heavy, filling_grid(self.k.heavy_blocks));
        for (kernel, cfg) in [light, heavy] {
            gpu.launch(kernel, cfg, |b| {
                b.arg(&csr.offsets)
                    .arg(&csr.adj)
                    .arg(&mut own.parent)
                    .arg(&own.queue)
                    .arg(&len)
                    .arg(&own.first)
                    .arg(&own.local_n)
                    .arg(&mut own.next_queue)
                    .arg(&mut own.counters)
                    .arg(&mut self.remote)
                    .arg(&capacity)
                    .arg(&block)
                    .arg(&me)
                    .arg(&mut self.sent)
                    .arg(&mut self.heavy)
                    .arg(&per_warp)
                    .arg(&heavy_degree);
            })?;
        }
        let counters = own.all_counters()?;
        if let Some(most) = counters[COUNTERS..].iter().find(|&&c| c > capacity) {
            return Err(Error::Gpu(format!(
                "bfs_top_down: {most} pairs for one rank exceed its run of {capacity} in the exchange buffer"
            )));
        }
        own.next = FrontierLayout::Queue(0);
        let runs = counters[COUNTERS..].iter().map(|&c| c as usize).collect();
        Ok((counters[2], runs))
    }

    /// Bottom-up scan of the unvisited local vertices against the frontier (the gathered
    /// global bitmap, or on one rank the local one). Returns the entries read.
    fn scan_unvisited(&mut self) -> Result<u64> {
        let own = &mut self.own;
        own.zero_counters()?;
        let frontier = if self.ranks > 1 {
            &self.global_bits
        } else {
            &own.bits
        };
        own.gpu
            .launch(&self.k.bottom_up, filling_grid(self.k.bottom_up_blocks), |b| {
                b.arg(&self.csr.offsets)
                    .arg(&self.csr.adj)
                    .arg(&mut own.parent)
                    .arg(frontier)
                    .arg(&own.local_n)
                    .arg(&mut own.next_bits)
                    .arg(&mut own.counters);
            })?;
        own.next = FrontierLayout::Bits;
        Ok(own.counters()?[2])
    }
}

/// The grid of a top-down scan of a queue of `len` entries, and the entries a warp takes at
/// a step (kernels/bfs.cu `scan_rows`, grid-stride): the most of 1, 2, 4, ... 32 that still
/// gives every resident warp (`resident_blocks` of the scan kernel) an entry, so a warp each
/// while the queue is shorter than twice the resident warps; at most a filling grid. (32 a
/// warp on queues of 1e4-3e4 entries, from one resident warp's worth on, ran them on a
/// tenth of the GPU: 0.25 ms at level 5 against 0.09 a warp each, SCALE 26 on one H200.)
pub fn queue_grid(len: u64, resident_blocks: u32) -> (LaunchConfig, u64) {
    let warp = 32;
    let resident_warps = (u64::from(resident_blocks) * u64::from(THREADS) / warp).max(1);
    let mut per_warp = 1;
    while per_warp < warp && len >= 2 * per_warp * resident_warps {
        per_warp *= 2;
    }
    let threads = len.div_ceil(per_warp) * warp;
    let grid = threads.div_ceil(u64::from(THREADS));
    (blocks(grid.min(u64::from(resident_blocks)), THREADS), per_warp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exchange_buffers_are_bounded_by_vertices_and_entries() {
        assert_eq!(
            exchange_capacities(&Block1D::new(1024, 1, 0), 1 << 20),
            (1, 1)
        );
        // Four ranks of 256 vertices: at most 256 remote vertices to send each other rank,
        // 3 x 256 to receive.
        let part = Block1D::new(1024, 4, 1);
        assert_eq!(exchange_capacities(&part, 100), (100, 100));
        assert_eq!(exchange_capacities(&part, 1 << 20), (256, 768));
        // Past the caps, each further entry costs its 4 bytes of adjacency (and the heavy list).
        let more =
            bytes_needed(&part, (1 << 20) + HEAVY_DEGREE as u64) - bytes_needed(&part, 1 << 20);
        assert_eq!(more, 4 * HEAVY_DEGREE as u64 + 4);
    }

    #[test]
    fn queues_take_the_most_entries_a_warp_that_keep_every_warp_busy() {
        // 10 resident blocks of THREADS threads: 80 warps of 32 at 256 threads a block.
        let warps = 10 * u64::from(THREADS) / 32;
        let (cfg, per_warp) = queue_grid(warps, 10);
        assert_eq!((per_warp, cfg.grid_dim.0), (1, 10));
        let (cfg, per_warp) = queue_grid(3, 10);
        assert_eq!((per_warp, cfg.grid_dim.0), (1, 1));
        assert_eq!(queue_grid(2 * warps - 1, 10).1, 1);
        let (cfg, per_warp) = queue_grid(2 * warps, 10);
        assert_eq!((per_warp, cfg.grid_dim.0), (2, 10));
        assert_eq!(queue_grid(9 * warps, 10).1, 8);
        assert_eq!(queue_grid(32 * warps, 10).1, 32);
        let (cfg, per_warp) = queue_grid(1 << 30, 10);
        assert_eq!((per_warp, cfg.grid_dim.0), (32, 10));
    }

    #[test]
    fn short_queues_send_shorter_rows_to_the_grid_and_have_room_for_them() {
        assert_eq!(heavy_degree(1), SHORT_HEAVY_DEGREE);
        assert_eq!(heavy_degree(SHORT_QUEUE), SHORT_HEAVY_DEGREE);
        assert_eq!(heavy_degree(SHORT_QUEUE + 1), HEAVY_DEGREE as u64);
        // A tiny graph: no row reaches HEAVY_DEGREE, yet a short queue may all be heavy.
        assert!(heavy_capacity(100) as u64 > SHORT_QUEUE);
    }

    #[test]
    fn runs_follow_rank_order_without_this_rank() {
        assert_eq!(run_starts(10, (0, 1)), vec![0]);
        assert_eq!(run_starts(10, (1, 4)), vec![0, 0, 10, 20]);
        assert_eq!(run_starts(10, (3, 4)), vec![0, 10, 20, 0]);
    }
}
