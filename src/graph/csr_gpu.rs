//! Generated graphs on the GPU (kernels/generators.cu), for every generator whose
//! `EdgeSource::device_edges` names its GPU edge function: the edge checksum pass that times
//! generation, and kernel 1, the two passes of `DistGraph::build` with the edge generation,
//! the routing of entries to their owners and the counting and placing done on the GPUs,
//! ranks exchanging through `GpuExchange`. The filled rows are sorted and de-duplicated on
//! the GPU (`csr_sort`), where the CSR stays for the workload; a copy comes to the host (the
//! CPU build's CSR, entry for entry: the checksums compare them). The trick
//! that makes one driver serve every generator: each edge is a pure function of its global
//! index and a parameter array, so a generator is a kernel name and a `Vec<u64>`.
//!
//! Also the CSR as the GPU kernels read it (`DeviceCsr`: u64 offsets, u32 ids), uploaded
//! once per graph and handed to each GPU workload.

use super::csr::{row_offsets, DistGraph};
use super::csr_sort;
use super::{Block1D, EdgeSource, GpuEdges, Vid};
use crate::comm::gpu::{GpuExchange, OwnerBuckets};
use crate::comm::GpuTransport;
use crate::comm::{Op, PhaseTimes, World};
use crate::device::{filling_grid, gpu_error, grid, Gpu, Kernel};
use crate::error::{Error, Result};
use crate::large_pages;
use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr, PushKernelArg};
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;

/// Edge tuples generated per round over all ranks (each rank makes its share), two messages
/// each: bounds the message buffers, and what one rank can receive in a round.
const ROUND_TUPLES: u64 = 1 << 24;
/// The kernel file of the generators and of kernel 1's passes.
pub(super) const FILE: &str = "generators.cu";
/// Adjacency entries copied between host and GPU per transfer (bounds the host staging buffer).
const COPY_CHUNK: usize = 1 << 26;
/// Bytes of each of a download's two page-locked staging buffers. Small: locking fresh pages
/// costs the driver a fault and a lock per page, every call, and 32 MB chunks already keep
/// the link ahead of the host taking the chunk before (two 256 MB buffers were locked for
/// each gigabyte of SSCA#2 kernel 1's rows).
const STAGE_BYTES: usize = 1 << 25;

/// Tuples a rank generates per round, and its receive buffer's length (0 on one rank, which
/// keeps its messages where they were generated).
pub(super) fn round_sizes(ranks: usize) -> (u64, u64) {
    let per_rank = (ROUND_TUPLES / ranks as u64).max(1);
    let recv = if ranks > 1 {
        2 * per_rank * ranks as u64
    } else {
        0
    };
    (per_rank, recv)
}

/// Device bytes the build needs on a rank whose rows hold `entries` entries (duplicates
/// included): two counters per local vertex and 4 bytes per entry, with the message buffers
/// while the rows are filled, then with what the sort needs.
pub fn bytes_needed(part: &Block1D, entries: u64) -> u64 {
    let (per_rank, recv) = round_sizes(part.size);
    let generated = if part.size > 1 { 2 } else { 1 } * 2 * per_rank;
    let local_n = part.local_n() as u64;
    let held = 16 * local_n + 4 * entries;
    held + (8 * (generated + recv)).max(csr_sort::bytes_needed(local_n, entries))
}

/// The edge checksum of `build::edge_checksum`, with this rank's edges generated and
/// hashed on its GPU (collective), and the seconds that took (the kernel compiled before).
pub fn edge_checksum(
    world: &World,
    gpu: &Gpu,
    source: &dyn EdgeSource,
    edges: &GpuEdges,
) -> Result<(u64, f64)> {
    let name = format!("{}_checksum", edges.kernel);
    let kernel = gpu.function(FILE, &name)?;
    let mut sum = gpu.zeros::<u64>("edge checksum", 1)?;
    let (cfg, count) = (
        filling_grid(gpu.resident_blocks(&kernel)?),
        source.local_len(),
    );
    world.barrier();
    let t = Instant::now();
    gpu.launch(&kernel, cfg, |b| {
        b.arg(&edges.params)
            .arg(&edges.first_edge)
            .arg(&count)
            .arg(&mut sum);
    })?;
    let local = gpu.download("edge checksum", &sum, 1)?[0];
    let checksum = world.allreduce(local, Op::Sum);
    Ok((checksum, t.elapsed().as_secs_f64()))
}

/// Build this rank's part of the CSR of `source`, whose edges `edges` makes, on its GPU
/// (collective): the CSR stays there, and a copy comes to the host.
pub fn build(
    world: &World,
    gpu: &Gpu,
    transport: GpuTransport,
    (source, edges): (&dyn EdgeSource, &GpuEdges),
    timers: &mut PhaseTimes,
) -> Result<(DistGraph, DeviceCsr)> {
    let part = Block1D::new(source.num_vertices(), world.size(), world.rank());
    let local_n = part.local_n();
    let first = part.first();
    let s = &gpu.stream;
    let owners = OwnerBuckets::new(gpu, part.size, part.block)?;
    let mut rounds = Rounds::new(world, gpu, transport, (source, edges), owners)?;

    // Pass 1: tuple endpoints and row lengths.
    let count = gpu.function(FILE, "csr_count")?;
    let mut ends = gpu.zeros::<u64>("tuple endpoint counts", local_n)?;
    let mut lengths = gpu.zeros::<u64>("row lengths", local_n)?;
    rounds.place(timers, "csr_count", |msgs, n| {
        gpu.launch(&count, grid(n), |b| {
            b.arg(msgs)
                .arg(&n)
                .arg(&first)
                .arg(&mut ends)
                .arg(&mut lengths);
        })
    })?;
    let offsets = row_offsets(&gpu.download("row lengths", &lengths, local_n)?);

    // Pass 2: the rows, filled through cursors that start at the row offsets.
    let fill = gpu.function(FILE, "csr_fill")?;
    let mut cursor = lengths;
    if local_n > 0 {
        s.memcpy_htod(&offsets[..local_n], &mut cursor.slice_mut(0..local_n))
            .map_err(|e| gpu_error("upload row offsets", e))?;
    }
    let entries = offsets[local_n] as usize;
    let mut rows = gpu.zeros::<u32>(&format!("{entries} adjacency entries"), entries)?;
    rounds.place(timers, "csr_fill", |msgs, n| {
        gpu.launch(&fill, grid(n), |b| {
            b.arg(msgs)
                .arg(&n)
                .arg(&first)
                .arg(&mut cursor)
                .arg(&mut rows);
        })
    })?;
    drop(rounds);
    drop(cursor);

    let (csr, offsets) = timers.time("sort_dedup", || csr_sort::sort_dedup(gpu, &offsets, rows))?;
    let (adj, tuple_ends) = timers.time("copy_back", || -> Result<_> {
        Ok((
            download_rows(gpu, &csr.adj, csr.entries())?,
            gpu.download("tuple endpoint counts", &ends, local_n)?,
        ))
    })?;
    // Device memory is freed asynchronously into the stream's pool, which hands it back to
    // the device at the next synchronisation: the workload's memory check must see it free.
    drop(ends);
    gpu.sync("free the build's buffers")?;
    let graph =
        DistGraph::from_sorted_rows(world, part, offsets, adj, tuple_ends, source.num_edges());
    Ok((graph, csr))
}

/// The rounds of one pass: each generates this rank's next tuples on the GPU as messages
/// and, on several ranks, routes them to their owners.
pub(super) struct Rounds<'a> {
    gpu: &'a Gpu,
    local_len: u64,
    first_edge: u64,
    messages: Kernel,
    params: &'a CudaSlice<u64>,
    per_rank: u64,
    /// Rounds every rank runs (the most any rank needs).
    count: u64,
    generated: CudaSlice<u64>,
    routing: Option<Routing<'a>>,
}

/// What several ranks need to send messages to their owners.
struct Routing<'a> {
    owners: OwnerBuckets,
    exchange: GpuExchange<'a>,
    send: CudaSlice<u64>,
    received: CudaSlice<u64>,
}

impl<'a> Rounds<'a> {
    /// Rounds over this rank's share of `source`, whose messages `owners` routes.
    pub fn new(
        world: &'a World,
        gpu: &'a Gpu,
        transport: GpuTransport,
        (source, edges): (&dyn EdgeSource, &'a GpuEdges),
        owners: OwnerBuckets,
    ) -> Result<Self> {
        let (per_rank, recv) = round_sizes(world.size());
        let alloc = |n: u64| gpu.zeros::<u64>("message buffer", n as usize);
        let routing = if world.size() > 1 {
            Some(Routing {
                owners,
                exchange: GpuExchange::open(world, gpu, transport)?,
                send: alloc(2 * per_rank)?,
                received: alloc(recv)?,
            })
        } else {
            None
        };
        Ok(Rounds {
            gpu,
            local_len: source.local_len(),
            first_edge: edges.first_edge,
            messages: gpu.function(FILE, &format!("{}_messages", edges.kernel))?,
            params: &edges.params,
            per_rank,
            count: world.allreduce(source.local_len().div_ceil(per_rank), Op::Max),
            generated: alloc(2 * per_rank)?,
            routing,
        })
    }

    /// Every round in turn: `place(messages, count)` launches the pass's kernel over the
    /// messages this rank owns, timed as "place" with the wait for it (`what` names it).
    pub fn place(
        &mut self,
        timers: &mut PhaseTimes,
        what: &str,
        mut place: impl FnMut(&CudaSlice<u64>, u64) -> Result<()>,
    ) -> Result<()> {
        let gpu = self.gpu;
        for r in 0..self.count {
            let (msgs, n) = self.round(r, timers)?;
            timers.time("place", || {
                place(msgs, n)?;
                gpu.sync(what)
            })?;
        }
        Ok(())
    }

    /// Round `r`: the messages this rank owns, and how many.
    fn round(&mut self, r: u64, timers: &mut PhaseTimes) -> Result<(&CudaSlice<u64>, u64)> {
        let start = (r * self.per_rank).min(self.local_len);
        let tuples = self.per_rank.min(self.local_len - start);
        let first_edge = self.first_edge + start;
        let gpu = self.gpu;
        timers.time("generate", || {
            gpu.launch(&self.messages, grid(tuples), |b| {
                b.arg(self.params)
                    .arg(&first_edge)
                    .arg(&tuples)
                    .arg(&mut self.generated);
            })?;
            gpu.sync("generate edge messages")
        })?;
        let Some(routing) = &mut self.routing else {
            return Ok((&self.generated, 2 * tuples));
        };
        let counts = timers.time("bucket", || {
            routing
                .owners
                .bucket(self.gpu, &self.generated, 2 * tuples, &mut routing.send)
        })?;
        let received = timers.time("exchange", || {
            routing
                .exchange
                .alltoallv(&routing.send, &counts, &mut routing.received)
        })?;
        Ok((&routing.received, received as u64))
    }
}

/// A CSR in GPU memory, as the GPU kernels read it: `offsets` (one per row, and one more: u64)
/// into `adj` (u32 vertex ids). Made once per graph and lent to each GPU workload.
pub struct DeviceCsr {
    pub offsets: CudaSlice<u64>,
    pub adj: CudaSlice<u32>,
    entries: usize,
}

impl DeviceCsr {
    pub(super) fn from_parts(offsets: CudaSlice<u64>, adj: CudaSlice<u32>, entries: usize) -> Self {
        DeviceCsr {
            offsets,
            adj,
            entries,
        }
    }

    /// Upload a host CSR, its ids narrowed to 32 bits a chunk at a time (fails on an id of
    /// 2^32 or more).
    pub fn upload<T: Copy + Sync + Into<u64>>(
        gpu: &Gpu,
        offsets: &[u64],
        adj: &[T],
    ) -> Result<Self> {
        let mut dev = gpu.zeros::<u32>("adjacency", adj.len())?;
        let mut staged = vec![0u32; COPY_CHUNK.min(adj.len())];
        for (i, chunk) in adj.chunks(COPY_CHUNK).enumerate() {
            let staged = &mut staged[..chunk.len()];
            staged
                .par_iter_mut()
                .zip(chunk.par_iter())
                .try_for_each(|(s, &v)| u32::try_from(v.into()).map(|v| *s = v))
                .map_err(|_| Error::Unavailable("the GPU kernels store vertex ids in 32 bits: this graph has ids of 2^32 or more".into()))?;
            let at = i * COPY_CHUNK;
            gpu.stream
                .memcpy_htod(staged, &mut dev.slice_mut(at..at + chunk.len()))
                .map_err(|e| gpu_error("upload adjacency", e))?;
        }
        Ok(DeviceCsr {
            offsets: gpu.upload("row offsets", offsets)?,
            adj: dev,
            entries: adj.len(),
        })
    }

    pub fn entries(&self) -> usize {
        self.entries
    }

    /// Device bytes of a CSR of `rows` rows and `entries` entries.
    pub fn bytes(rows: u64, entries: u64) -> u64 {
        8 * (rows + 1) + 4 * entries
    }
}

/// The first `n` adjacency entries of `dev`, widened to host ids.
fn download_rows(gpu: &Gpu, dev: &CudaSlice<u32>, n: usize) -> Result<Vec<Vid>> {
    let mut adj = large_pages::zeroed::<Vid>(n);
    download_chunks(gpu, dev, n, "copy adjacency to the host", |at, chunk| {
        adj[at..at + chunk.len()]
            .par_iter_mut()
            .zip(chunk.par_iter())
            .for_each(|(o, &v)| *o = v as Vid);
    })?;
    Ok(adj)
}

/// The first `n` items of `dev`, a chunk at a time through two page-locked staging buffers
/// (`STAGE_BYTES` each): `each(at, chunk)` for items `at .. at + chunk.len()`,
/// while the next chunk is copied into the other buffer; `what` names the copy in an error.
pub(super) fn download_chunks<K: DeviceRepr + Default + Copy>(
    gpu: &Gpu,
    dev: &CudaSlice<K>,
    n: usize,
    what: &str,
    mut each: impl FnMut(usize, &[K]),
) -> Result<()> {
    let s = &gpu.stream;
    let chunk = (STAGE_BYTES / std::mem::size_of::<K>()).max(1);
    let mut first = vec![K::default(); chunk.min(n)];
    let mut second = vec![K::default(); chunk.min(n.saturating_sub(chunk))];
    // Dropped in reverse: the stream waited for (a copy may be in flight when `each` panics
    // or a call fails), the buffers unlocked, then freed.
    let _pinned = (gpu.pin(&mut first), gpu.pin(&mut second));
    let _drained = Drained(s);
    // Into page-locked memory a copy is asynchronous: it runs on while the host takes the
    // chunk before it.
    let copy = |at: usize, staged: &mut [K]| {
        let len = chunk.min(n - at);
        s.memcpy_dtoh(&dev.slice(at..at + len), &mut staged[..len])
            .map_err(|e| gpu_error(what, e))
    };
    let (mut ready, mut spare) = (&mut first[..], &mut second[..]);
    if n > 0 {
        copy(0, ready)?;
    }
    for at in (0..n).step_by(chunk) {
        s.synchronize().map_err(|e| gpu_error(what, e))?;
        if at + chunk < n {
            copy(at + chunk, spare)?;
        }
        each(at, &ready[..chunk.min(n - at)]);
        std::mem::swap(&mut ready, &mut spare);
    }
    Ok(())
}

/// The first `n` items of `dev` on the host, through `download_chunks`, into a fresh buffer
/// on huge pages (`large_pages`) that the host's threads fill; `what` names the copy.
pub(super) fn download_whole<K: DeviceRepr + Default + Copy + Send + Sync>(
    gpu: &Gpu,
    dev: &CudaSlice<K>,
    n: usize,
    what: &str,
) -> Result<Vec<K>> {
    let mut host = large_pages::zeroed::<K>(n);
    download_chunks(gpu, dev, n, what, |at, chunk| {
        (host[at..at + chunk.len()].par_iter_mut())
            .zip(chunk.par_iter())
            .for_each(|(h, &x)| *h = x);
    })?;
    Ok(host)
}

/// Waits for its stream when dropped.
struct Drained<'a>(&'a Arc<CudaStream>);

impl Drop for Drained<'_> {
    fn drop(&mut self) {
        // An error here was met, and reported, by the call that failed.
        let _ = self.0.synchronize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::generators::watts_strogatz::{Base, WattsStrogatz};
    use crate::graph::generators::{barabasi_albert, erdos_renyi, lattice, ssca2};
    use crate::graph::kronecker::Kronecker;

    /// Every generator with a GPU edge function names kernels that generators.cu makes.
    #[test]
    fn every_device_generator_has_its_kernels() {
        let (_, source) = crate::device::KERNELS
            .iter()
            .find(|(f, _)| *f == FILE)
            .unwrap();
        let sources: Vec<Box<dyn EdgeSource>> = vec![
            Box::new(Kronecker::new(8, 16, 1, 1, 0)),
            Box::new(ssca2::Ssca2::new(8, 1, 1, 0)),
            Box::new(barabasi_albert::BarabasiAlbert::new(100, 2, 1, 1, 0)),
            Box::new(lattice::Lattice::new(vec![4, 4], true, 1, 1, 0)),
            Box::new(WattsStrogatz::new(Base::Ring { n: 50, k: 4 }, 0.1, 1, 1, 0)),
            Box::new(erdos_renyi::ErdosRenyi::new(100, 1000, 1, 1, 0)),
        ];
        for s in &sources {
            let edges = s.device_edges().unwrap();
            let name = edges.kernel;
            for kernel in ["messages", "checksum"] {
                // Made by GENERATOR(name), by the kernel's own macro (MESSAGES), or by hand.
                let makers = [
                    format!("\nGENERATOR({name})\n"),
                    format!("\n{}({name})\n", kernel.to_uppercase()),
                    format!(" {name}_{kernel}(const u64 *p,"),
                ];
                assert!(
                    makers.iter().any(|m| source.contains(m)),
                    "no {name}_{kernel} in kernels/{FILE}"
                );
            }
        }
    }

    #[test]
    fn one_rank_needs_no_send_or_receive_buffers() {
        let one = Block1D::new(1 << 20, 1, 0);
        assert_eq!(
            bytes_needed(&one, 1000),
            16 * (1 << 20) + 4 * 1000 + 8 * 2 * ROUND_TUPLES
        );
        // Four ranks: a quarter of the tuples each per round, sent once, received from all.
        let four = Block1D::new(1 << 20, 4, 0);
        let per_rank = ROUND_TUPLES / 4;
        assert_eq!(
            bytes_needed(&four, 1000),
            16 * (1 << 18) + 4 * 1000 + 8 * (2 * 2 * per_rank + 2 * per_rank * 4)
        );
    }
}
