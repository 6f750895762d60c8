//! The GPU side of the BFS (`bfs::Frontiers`): the rank's CSR (a `DeviceCsr`), parents and
//! frontiers live on its GPU for the whole run; the kernels are in `kernels/bfs.cu`, and every
//! launch below passes its arguments in the order of the kernel's parameters there. What goes
//! to other ranks is bucketed by owner on the GPU and moved by `GpuExchange` (NCCL, or host
//! memory and MPI).

use super::bfs::{Frontiers, LevelClock};
use crate::comm::gpu::{GpuExchange, OwnerBuckets};
use crate::comm::{GpuTransport, Op, World};
use crate::device::{blocks, gpu_error, grid, Gpu, Kernel, Pinned, THREADS};
use crate::error::{Error, Result};
use crate::graph::csr_gpu::DeviceCsr;
use crate::graph::{Block1D, DistGraph, Vid};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use rayon::prelude::*;

/// Rows this long or longer are scanned by the whole grid (`HEAVY_DEGREE` in kernels/bfs.cu).
const HEAVY_DEGREE: usize = 4096;

/// Which buffer holds the current frontier.
#[derive(Clone, Copy, PartialEq)]
enum Form {
    /// `queue`, with this many local ids.
    Queue(u64),
    /// `bits`.
    Bits,
}

struct Kernels {
    start: Kernel,
    top_down: Kernel,
    top_down_heavy: Kernel,
    claim: Kernel,
    bottom_up: Kernel,
    queue_to_bits: Kernel,
    bits_to_queue: Kernel,
    narrow_parents: Kernel,
}

impl Kernels {
    fn new(gpu: &Gpu) -> Result<Self> {
        let f = |name| gpu.function("bfs.cu", name);
        Ok(Kernels {
            start: f("bfs_start")?,
            top_down: f("bfs_top_down")?,
            top_down_heavy: f("bfs_top_down_heavy")?,
            claim: f("bfs_claim")?,
            bottom_up: f("bfs_bottom_up")?,
            queue_to_bits: f("bfs_queue_to_bits")?,
            bits_to_queue: f("bfs_bits_to_queue")?,
            narrow_parents: f("bfs_narrow_parents")?,
        })
    }
}

pub struct GpuFrontiers<'a> {
    gpu: &'a Gpu,
    exchange: GpuExchange<'a>,
    k: Kernels,
    first: u64,
    local_n: u64,
    ranks: usize,
    words: usize,
    csr: DeviceCsr,
    parent: CudaSlice<i64>,
    queue: CudaSlice<u32>,
    next_queue: CudaSlice<u32>,
    bits: CudaSlice<u64>,
    next_bits: CudaSlice<u64>,
    global_bits: CudaSlice<u64>,
    /// Packed (vertex, parent) pairs for other ranks, as the top-down scan found them.
    remote: CudaSlice<u64>,
    /// The same pairs in runs by owner rank, for the exchange.
    send: CudaSlice<u64>,
    /// Pairs other ranks sent here.
    received: CudaSlice<u64>,
    owners: OwnerBuckets,
    /// Global bitmap of the vertices already sent to their owners in this search.
    sent: CudaSlice<u64>,
    /// Frontier vertices whose rows the whole grid scans (see kernels/bfs.cu).
    heavy: CudaSlice<u32>,
    counters: CudaSlice<u64>,
    /// Blocks that fill the GPU, for the grid-stride kernels.
    resident_blocks: u32,
    current: Form,
    next: Form,
    /// Page-locks `host_parents` (declared first: unregistered before that memory is freed).
    pinned_parents: Option<Pinned>,
    host_parents: HostParents,
    /// Whether `host_parents` holds this search's parents.
    fetched: bool,
}

/// The parents' copy in host memory: u32 where every id is below u32::MAX (half the bytes of
/// the device's i64s; u32::MAX stands for none), else i64.
enum HostParents {
    Narrow(Vec<u32>),
    Wide(Vec<i64>),
}

/// Pairs a rank may send and receive in one level. The `sent` bitmap lets a rank send each
/// remote vertex once per search, so it sends at most N - local_n pairs; each pair received
/// stands for one adjacency entry of a local vertex (the graph is symmetric), and at most
/// one comes from each other rank.
fn exchange_capacities(part: &Block1D, entries: u64) -> (usize, usize) {
    if part.size == 1 {
        return (1, 1);
    }
    let local_n = part.local_n() as u64;
    let send = entries.min(part.n - local_n).max(1);
    let recv = entries.min(local_n * (part.size as u64 - 1)).max(1);
    (send as usize, recv as usize)
}

/// Device bytes a rank needs for the search besides its CSR (`entries` adjacency entries).
fn search_bytes(part: &Block1D, entries: u64) -> u64 {
    let n = part.local_n() as u64;
    let words = part.words_per_rank() as u64;
    let ranks = part.size as u64;
    let (send, recv) = exchange_capacities(part, entries);
    let exchange = 8 * (2 * send as u64 + recv as u64) + 8 * ranks;
    let heavy = 4 * (entries / HEAVY_DEGREE as u64 + 1);
    let parents_and_queues = 8 * n + 2 * 4 * n;
    // Current and next local bitmaps; global frontier and sent bitmaps.
    let bitmaps = 2 * 8 * words + 2 * 8 * words * ranks;
    parents_and_queues + bitmaps + exchange + heavy + 8 * 5
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
        let (send_capacity, recv_capacity) = exchange_capacities(&g.part, entries);
        let mut frontiers = GpuFrontiers {
            gpu,
            exchange,
            k: Kernels::new(gpu)?,
            first: g.part.first(),
            local_n: local_n as u64,
            ranks,
            words,
            csr,
            parent: gpu.zeros("parents", local_n)?,
            queue: gpu.zeros("queue", local_n)?,
            next_queue: gpu.zeros("queue", local_n)?,
            bits: gpu.zeros("frontier bitmap", words)?,
            next_bits: gpu.zeros("frontier bitmap", words)?,
            global_bits: gpu.zeros("global bitmap", words * ranks)?,
            remote: gpu.zeros("exchange buffer", send_capacity)?,
            send: gpu.zeros("exchange buffer", send_capacity)?,
            received: gpu.zeros("exchange buffer", recv_capacity)?,
            owners: OwnerBuckets::new(gpu, ranks, g.part.block)?,
            sent: gpu.zeros("sent bitmap", words * ranks)?,
            heavy: gpu.zeros("heavy list", entries as usize / HEAVY_DEGREE + 1)?,
            counters: gpu.zeros("counters", 5)?,
            resident_blocks: gpu.resident_blocks(THREADS)?,
            current: Form::Queue(0),
            next: Form::Queue(0),
            pinned_parents: None,
            host_parents: match g.n() < u64::from(u32::MAX) {
                true => HostParents::Narrow(vec![0; local_n]),
                false => HostParents::Wide(vec![0; local_n]),
            },
            fetched: false,
        };
        frontiers.pinned_parents = match &mut frontiers.host_parents {
            HostParents::Narrow(host) => gpu.pin(host),
            HostParents::Wide(host) => gpu.pin(host),
        };
        if frontiers.pinned_parents.is_none() && local_n > 0 {
            log::warn!("cannot page-lock the host parent array: copies back run slower");
        }
        Ok(frontiers)
    }

    /// A grid of as many blocks as the GPU holds at once, for grid-stride kernels.
    fn filling_grid(&self) -> LaunchConfig {
        blocks(self.resident_blocks as u64, THREADS)
    }

    fn zero_counters(&mut self) -> Result<()> {
        self.gpu
            .stream
            .memset_zeros(&mut self.counters)
            .map_err(|e| gpu_error("reset counters", e))
    }

    fn counters(&self) -> Result<[u64; 4]> {
        let c = self.gpu.download("counters", &self.counters, 4)?;
        Ok([c[0], c[1], c[2], c[3]])
    }

    /// The current frontier as a queue; returns its length.
    fn current_queue(&mut self) -> Result<u64> {
        if let Form::Queue(len) = self.current {
            return Ok(len);
        }
        self.zero_counters()?;
        let words = self.words as u64;
        self.gpu.launch(&self.k.bits_to_queue, grid(words), |b| {
            b.arg(&self.bits)
                .arg(&words)
                .arg(&mut self.queue)
                .arg(&mut self.counters);
        })?;
        let len = self.counters()?[0];
        self.current = Form::Queue(len);
        Ok(len)
    }

    /// The current frontier as a bitmap in `bits`.
    fn current_bits(&mut self) -> Result<()> {
        let Form::Queue(len) = self.current else {
            return Ok(());
        };
        self.gpu
            .stream
            .memset_zeros(&mut self.bits)
            .map_err(|e| gpu_error("clear bitmap", e))?;
        self.gpu.launch(&self.k.queue_to_bits, grid(len), |b| {
            b.arg(&self.queue).arg(&len).arg(&mut self.bits);
        })?;
        self.current = Form::Bits;
        Ok(())
    }
}

/// The GPU kernels store vertex ids in 32 bits.
fn check_ids(g: &DistGraph) -> Result<()> {
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
fn check_fit(
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
    Err(Error::Unavailable(format!(
        "the graph does not fit on the GPU: a rank needs {}{needed} bytes but only {free} are free ({}): {advice}",
        if estimated { "about " } else { "" },
        gpu.describe(),
    )))
}

impl Frontiers for GpuFrontiers<'_> {
    fn start(&mut self, root: Vid) -> Result<u64> {
        let local = root.wrapping_sub(self.first);
        let is_local = local < self.local_n;
        let root_local: i64 = if is_local { local as i64 } else { -1 };
        self.fetched = false;
        self.gpu.launch(&self.k.start, grid(self.local_n), |b| {
            b.arg(&mut self.parent)
                .arg(&self.local_n)
                .arg(&root_local)
                .arg(&root);
        })?;
        let s = &self.gpu.stream;
        s.memset_zeros(&mut self.sent)
            .map_err(|e| gpu_error("clear sent bitmap", e))?;
        self.next = Form::Queue(0);
        if !is_local {
            self.current = Form::Queue(0);
            self.gpu.sync("bfs_start")?;
            return Ok(0);
        }
        s.memcpy_htod(&[local as u32], &mut self.queue.slice_mut(0..1))
            .map_err(|e| gpu_error("upload root", e))?;
        let at = local as usize;
        let degree = s
            .clone_dtoh(&self.csr.offsets.slice(at..at + 2))
            .map_err(|e| gpu_error("read root degree", e))?;
        self.current = Form::Queue(1);
        Ok(degree[1] - degree[0])
    }

    fn top_down(&mut self, clock: &mut LevelClock) -> Result<u64> {
        let (inspected, remote) = clock.local(|| self.scan_frontier())?;
        if self.ranks == 1 {
            return Ok(inspected);
        }
        let counts = clock.local(|| {
            self.owners
                .bucket(self.gpu, &self.remote, remote, &mut self.send)
        })?;
        clock.bytes_sent += 8 * remote;
        let received = clock.exchange(|| {
            self.exchange
                .alltoallv(&self.send, &counts, &mut self.received)
        })?;
        clock.bytes_received += 8 * received as u64;
        clock.local(|| self.claim_received(received as u64))?;
        Ok(inspected)
    }

    fn bottom_up(&mut self, clock: &mut LevelClock) -> Result<u64> {
        clock.local(|| self.current_bits())?;
        if self.ranks > 1 {
            clock.bytes_sent += (8 * self.words * (self.ranks - 1)) as u64;
            clock.bytes_received += (8 * self.words * (self.ranks - 1)) as u64;
            clock.exchange(|| self.exchange.allgather(&self.bits, &mut self.global_bits))?;
        }
        clock.local(|| self.scan_unvisited())
    }

    fn advance(&mut self) -> Result<(u64, u64)> {
        let [n, m, _, _] = self.counters()?;
        match self.next {
            Form::Queue(_) => {
                std::mem::swap(&mut self.queue, &mut self.next_queue);
                self.current = Form::Queue(n);
            }
            Form::Bits => {
                std::mem::swap(&mut self.bits, &mut self.next_bits);
                self.current = Form::Bits;
            }
        }
        Ok((n, m))
    }

    fn fetch_parents(&mut self) -> Result<()> {
        let n = self.local_n as usize;
        let copied = match &mut self.host_parents {
            HostParents::Narrow(host) => {
                // Narrowed into the next queue, which is free once a search has ended.
                self.gpu
                    .launch(&self.k.narrow_parents, grid(self.local_n), |b| {
                        b.arg(&self.parent)
                            .arg(&self.local_n)
                            .arg(&mut self.next_queue);
                    })?;
                self.gpu
                    .stream
                    .memcpy_dtoh(&self.next_queue.slice(0..n), host.as_mut_slice())
            }
            HostParents::Wide(host) => self
                .gpu
                .stream
                .memcpy_dtoh(&self.parent.slice(0..n), host.as_mut_slice()),
        };
        copied.map_err(|e| gpu_error("copy parents to the host", e))?;
        // Into page-locked memory the copy is asynchronous: wait for it.
        self.gpu.sync("copy parents to the host")?;
        self.fetched = true;
        Ok(())
    }

    fn parents(&mut self, out: &mut [i64]) -> Result<()> {
        if !self.fetched {
            self.fetch_parents()?;
        }
        match &self.host_parents {
            HostParents::Narrow(host) => out
                .par_iter_mut()
                .zip(host.par_iter())
                .for_each(|(p, &q)| *p = if q == u32::MAX { -1 } else { i64::from(q) }),
            HostParents::Wide(host) => out.copy_from_slice(host),
        }
        Ok(())
    }

    fn transport(&self) -> &'static str {
        self.exchange.name()
    }
}

impl GpuFrontiers<'_> {
    /// Top-down scan of the current frontier's rows: local neighbours are claimed into the
    /// next queue, packed pairs for other ranks written to `remote`. Returns the entries read
    /// and the pairs written.
    fn scan_frontier(&mut self) -> Result<(u64, u64)> {
        let len = self.current_queue()?;
        self.zero_counters()?;
        let capacity = self.remote.len() as u64;
        let (gpu, csr) = (self.gpu, &self.csr);
        gpu.launch(&self.k.top_down, grid(len * 32), |b| {
            b.arg(&csr.offsets)
                .arg(&csr.adj)
                .arg(&mut self.parent)
                .arg(&self.queue)
                .arg(&len)
                .arg(&self.first)
                .arg(&self.local_n)
                .arg(&mut self.next_queue)
                .arg(&mut self.counters)
                .arg(&mut self.remote)
                .arg(&capacity)
                .arg(&mut self.sent)
                .arg(&mut self.heavy);
        })?;
        gpu.launch(&self.k.top_down_heavy, self.filling_grid(), |b| {
            b.arg(&csr.offsets)
                .arg(&csr.adj)
                .arg(&mut self.parent)
                .arg(&self.heavy)
                .arg(&self.first)
                .arg(&self.local_n)
                .arg(&mut self.next_queue)
                .arg(&mut self.counters)
                .arg(&mut self.remote)
                .arg(&capacity)
                .arg(&mut self.sent);
        })?;
        let [_, _, inspected, remote] = self.counters()?;
        if remote > capacity {
            return Err(Error::Gpu(format!(
                "bfs_top_down: {remote} pairs for other ranks exceed the exchange buffer of {capacity}"
            )));
        }
        self.next = Form::Queue(0);
        Ok((inspected, remote))
    }

    /// Claim the first `count` pairs of `received` (vertices other ranks discovered).
    fn claim_received(&mut self, count: u64) -> Result<()> {
        if count > 0 {
            self.gpu.launch(&self.k.claim, grid(count), |b| {
                b.arg(&self.received)
                    .arg(&count)
                    .arg(&self.first)
                    .arg(&mut self.parent)
                    .arg(&self.csr.offsets)
                    .arg(&mut self.next_queue)
                    .arg(&mut self.counters);
            })?;
        }
        self.gpu.sync("bfs_claim")
    }

    /// Bottom-up scan of the unvisited local vertices against the frontier (the gathered
    /// global bitmap, or on one rank the local one). Returns the entries read.
    fn scan_unvisited(&mut self) -> Result<u64> {
        self.zero_counters()?;
        let frontier = if self.ranks > 1 {
            &self.global_bits
        } else {
            &self.bits
        };
        self.gpu
            .launch(&self.k.bottom_up, self.filling_grid(), |b| {
                b.arg(&self.csr.offsets)
                    .arg(&self.csr.adj)
                    .arg(&mut self.parent)
                    .arg(frontier)
                    .arg(&self.local_n)
                    .arg(&mut self.next_bits)
                    .arg(&mut self.counters);
            })?;
        self.next = Form::Bits;
        Ok(self.counters()?[2])
    }
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
        // Four ranks of 256 vertices: at most 768 remote vertices to send, 3 x 256 to receive.
        let part = Block1D::new(1024, 4, 1);
        assert_eq!(exchange_capacities(&part, 100), (100, 100));
        assert_eq!(exchange_capacities(&part, 1 << 20), (768, 768));
        // Past the caps, each further entry costs its 4 bytes of adjacency (and the heavy list).
        let more =
            bytes_needed(&part, (1 << 20) + HEAVY_DEGREE as u64) - bytes_needed(&part, 1 << 20);
        assert_eq!(more, 4 * HEAVY_DEGREE as u64 + 4);
    }
}
