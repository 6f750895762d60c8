//! Kernel 1 on the GPU, for generated (Kronecker) graphs: the two passes of
//! `DistGraph::build` with the edge generation, the routing of entries to their owners and
//! the counting and placing done on the GPUs (kernels/kron.cu), ranks exchanging through
//! `GpuExchange`. The filled rows come back to the host, which sorts and de-duplicates them
//! as the CPU build does, so both builds give the same CSR.
//!
//! Also the CSR as the GPU kernels read it (`DeviceCsr`: u64 offsets, u32 ids), uploaded
//! once per graph and handed to each GPU workload.

use super::csr::{row_offsets, DistGraph};
use super::kronecker::Kronecker;
use super::{Block1D, EdgeSource, Vid};
use crate::comm::gpu::{GpuExchange, OwnerBuckets};
use crate::comm::GpuTransport;
use crate::comm::{Op, PhaseTimes, World};
use crate::device::{gpu_error, grid, Gpu, Kernel};
use crate::error::{Error, Result};
use cudarc::driver::{CudaSlice, PushKernelArg};
use rayon::prelude::*;

/// Edge tuples generated per round over all ranks (each rank makes its share), two messages
/// each: bounds the message buffers, and what one rank can receive in a round.
const ROUND_TUPLES: u64 = 1 << 24;
/// Adjacency entries copied between host and GPU per transfer (bounds the host staging buffer).
const COPY_CHUNK: usize = 1 << 26;

/// Tuples a rank generates per round, and its receive buffer's length (0 on one rank, which
/// keeps its messages where they were generated).
fn round_sizes(ranks: usize) -> (u64, u64) {
    let per_rank = (ROUND_TUPLES / ranks as u64).max(1);
    let recv = if ranks > 1 {
        2 * per_rank * ranks as u64
    } else {
        0
    };
    (per_rank, recv)
}

/// Device bytes the build needs on a rank whose rows hold `entries` entries (duplicates
/// included): two counters per local vertex, 4 bytes per entry, the message buffers.
pub fn bytes_needed(part: &Block1D, entries: u64) -> u64 {
    let (per_rank, recv) = round_sizes(part.size);
    let generated = if part.size > 1 { 2 } else { 1 } * 2 * per_rank;
    16 * part.local_n() as u64 + 4 * entries + 8 * (generated + recv)
}

/// Build this rank's part of the CSR of `source` on its GPU (collective).
pub fn build(
    world: &World,
    gpu: &Gpu,
    transport: GpuTransport,
    source: &Kronecker,
    timers: &mut PhaseTimes,
) -> Result<DistGraph> {
    let part = Block1D::new(source.num_vertices(), world.size(), world.rank());
    let local_n = part.local_n();
    let first = part.first();
    let s = &gpu.stream;
    let mut rounds = Rounds::new(world, gpu, transport, source, &part)?;

    // Pass 1: tuple endpoints and row lengths.
    let count = gpu.function("kron.cu", "kron_count")?;
    let mut ends = gpu.zeros::<u64>("tuple endpoint counts", local_n)?;
    let mut lengths = gpu.zeros::<u64>("row lengths", local_n)?;
    for r in 0..rounds.count {
        let (msgs, n) = rounds.round(r, timers)?;
        timers.time("place", || {
            gpu.launch(&count, grid(n), |b| {
                b.arg(msgs)
                    .arg(&n)
                    .arg(&first)
                    .arg(&mut ends)
                    .arg(&mut lengths);
            })?;
            gpu.sync("kron_count")
        })?;
    }
    let offsets = row_offsets(&gpu.download("row lengths", &lengths, local_n)?);

    // Pass 2: the rows, filled through cursors that start at the row offsets.
    let fill = gpu.function("kron.cu", "kron_fill")?;
    let mut cursor = lengths;
    if local_n > 0 {
        s.memcpy_htod(&offsets[..local_n], &mut cursor.slice_mut(0..local_n))
            .map_err(|e| gpu_error("upload row offsets", e))?;
    }
    let entries = offsets[local_n] as usize;
    let mut rows = gpu.zeros::<u32>(&format!("{entries} adjacency entries"), entries)?;
    for r in 0..rounds.count {
        let (msgs, n) = rounds.round(r, timers)?;
        timers.time("place", || {
            gpu.launch(&fill, grid(n), |b| {
                b.arg(msgs)
                    .arg(&n)
                    .arg(&first)
                    .arg(&mut cursor)
                    .arg(&mut rows);
            })?;
            gpu.sync("kron_fill")
        })?;
    }
    drop(rounds);
    drop(cursor);

    let (adj, tuple_ends) = timers.time("copy_back", || -> Result<_> {
        Ok((
            download_rows(gpu, &rows, entries)?,
            gpu.download("tuple endpoint counts", &ends, local_n)?,
        ))
    })?;
    // Device memory is freed asynchronously into the stream's pool, which hands it back to
    // the device at the next synchronisation: the search's memory check must see it free.
    drop((rows, ends));
    gpu.sync("free the build's buffers")?;
    Ok(DistGraph::from_rows(
        world,
        part,
        offsets,
        adj,
        tuple_ends,
        source.num_edges(),
        timers,
    ))
}

/// The rounds of one pass: each generates this rank's next tuples on the GPU as messages
/// and, on several ranks, routes them to their owners.
struct Rounds<'a> {
    gpu: &'a Gpu,
    source: &'a Kronecker,
    messages: Kernel,
    params: CudaSlice<u64>,
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
    fn new(
        world: &'a World,
        gpu: &'a Gpu,
        transport: GpuTransport,
        source: &'a Kronecker,
        part: &Block1D,
    ) -> Result<Self> {
        let (per_rank, recv) = round_sizes(world.size());
        let alloc = |n: u64| gpu.zeros::<u64>("message buffer", n as usize);
        let routing = if world.size() > 1 {
            Some(Routing {
                owners: OwnerBuckets::new(gpu, part.size, part.block)?,
                exchange: GpuExchange::open(world, gpu, transport)?,
                send: alloc(2 * per_rank)?,
                received: alloc(recv)?,
            })
        } else {
            None
        };
        Ok(Rounds {
            gpu,
            source,
            messages: gpu.function("kron.cu", "kron_messages")?,
            params: gpu.upload("generator constants", &source.device_params())?,
            per_rank,
            count: world.allreduce(source.local_len().div_ceil(per_rank), Op::Max),
            generated: alloc(2 * per_rank)?,
            routing,
        })
    }

    /// Round `r`: the messages this rank owns, and how many.
    fn round(&mut self, r: u64, timers: &mut PhaseTimes) -> Result<(&CudaSlice<u64>, u64)> {
        let local_len = self.source.local_len();
        let start = (r * self.per_rank).min(local_len);
        let tuples = self.per_rank.min(local_len - start);
        let first_edge = self.source.first_local_edge() + start;
        let gpu = self.gpu;
        timers.time("generate", || {
            gpu.launch(&self.messages, grid(tuples), |b| {
                b.arg(&self.params)
                    .arg(&first_edge)
                    .arg(&tuples)
                    .arg(&mut self.generated);
            })?;
            gpu.sync("kron_messages")
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

/// The first `n` adjacency entries of `dev`, widened to host ids, through a page-locked
/// staging buffer.
fn download_rows(gpu: &Gpu, dev: &CudaSlice<u32>, n: usize) -> Result<Vec<Vid>> {
    let s = &gpu.stream;
    let mut adj = vec![0 as Vid; n];
    let mut staged = vec![0u32; COPY_CHUNK.min(n)];
    let pinned = gpu.pin(&mut staged);
    for (i, out) in adj.chunks_mut(COPY_CHUNK).enumerate() {
        let at = i * COPY_CHUNK;
        let staged = &mut staged[..out.len()];
        s.memcpy_dtoh(&dev.slice(at..at + out.len()), staged)
            .map_err(|e| gpu_error("copy adjacency to the host", e))?;
        // Into page-locked memory the copy is asynchronous: wait for it.
        s.synchronize()
            .map_err(|e| gpu_error("copy adjacency to the host", e))?;
        out.par_iter_mut()
            .zip(staged.par_iter())
            .for_each(|(o, &v)| *o = v as Vid);
    }
    // Unlocked before the staging buffer is freed.
    drop(pinned);
    Ok(adj)
}

#[cfg(test)]
mod tests {
    use super::*;

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
