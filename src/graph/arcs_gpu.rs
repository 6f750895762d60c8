//! Kernel 1 of arc graphs (`arcs::ArcGraph`: `tessera bc`'s graph, SSCA#2's kernel 1) on the
//! GPU, for a generated graph whose edges (and weights) the GPU makes (kernels/generators.cu).
//!
//! Each rank generates every tuple of the global list, in rounds, and keeps the arcs of its
//! own rows: no exchange between ranks (generating a tuple costs about as much as reading
//! it back, well under routing it). Per direction (the out-rows, then a directed graph's
//! in-rows), pass 1 counts each row's arcs (`arcs_count`), pass 2 places each arc's key,
//! neighbour << 32 | weight, at its row's cursor (`arcs_fill`), and the rows are sorted by
//! key (`csr_sort`, u64 keys): the CPU build's (neighbour, weight) order. Where parallel
//! arcs merge, the first key of each neighbour is kept (the lowest weight, as the CPU
//! keeps). The rows come to the host as `Rows`, entry for entry those of `ArcGraph::build`.

use super::arcs::{ArcGraph, ArcOptions, Rows};
use super::betweenness::steps::Steps;
use super::csr_gpu::download_chunks;
use super::csr_sort;
use super::scan_gpu::offsets_from_lengths;
use super::{Block1D, DeviceWeights, EdgeSource, GpuEdges};
use crate::comm::World;
use crate::device::{gpu_error, grid, Gpu, Kernel};
use crate::error::Result;
use crate::large_pages;
use cudarc::driver::{CudaSlice, PushKernelArg};
use rayon::prelude::*;

/// Edge tuples generated per round.
const ROUND: u64 = 1 << 24;
/// The kernel file of the generators and of these passes.
const FILE: &str = "generators.cu";

/// Which messages of a tuple a direction's rows take (kernels/generators.cu `arcs_count`).
const OUT_ARCS: u32 = 1;
const IN_ARCS: u32 = 2;
const BOTH_ARCS: u32 = OUT_ARCS | IN_ARCS;

/// Device bytes the build needs on a rank whose rows of one direction hold `arcs` arcs: the
/// round's messages, two counters per row, and per arc its key, the sort's merge buffer
/// and the de-duplicated copy.
pub fn bytes_needed(part: &Block1D, arcs: u64) -> u64 {
    16 * ROUND + 16 * (part.local_n() as u64 + 1) + 24 * arcs
}

/// How the GPU makes the graph's tuples and weights.
pub struct OnGpu<'a> {
    pub gpu: &'a Gpu,
    pub edges: GpuEdges,
    pub weights: Option<DeviceWeights>,
}

/// The rank's part of the arc graph of `source`, built on its GPU as `on` makes the tuples
/// (collective).
pub fn build(
    world: &World,
    on: &OnGpu,
    source: &dyn EdgeSource,
    options: ArcOptions,
) -> Result<ArcGraph> {
    let part = super::arcs::partition(world, source)?;
    let gpu = on.gpu;
    let mut pass = Pass {
        gpu,
        messages: gpu.function(FILE, &format!("{}_messages", on.edges.kernel))?,
        params: &on.edges.params,
        tuples: source.num_edges(),
        msgs: gpu.zeros::<u64>("edge messages", 2 * ROUND.min(source.num_edges()) as usize)?,
        first: part.first(),
        local_n: part.local_n() as u64,
        weights: on.weights,
        merge: options.merge_parallel,
        steps: Steps::start(),
    };
    let mut loops = gpu.zeros::<u64>("self-loops", 1)?;
    let take = if options.directed {
        OUT_ARCS
    } else {
        BOTH_ARCS
    };
    let out = pass.rows(take, &mut loops)?;
    let inc = match options.directed {
        true => Some(pass.rows(IN_ARCS, &mut loops)?),
        false => None,
    };
    let loops = gpu.download("self-loops", &loops, 1)?[0];
    let steps = std::mem::replace(&mut pass.steps, Steps::start());
    drop(pass);
    // Freed memory returns to the device at the next synchronisation: the workload's memory
    // check must see it free.
    gpu.sync("free the arc build's buffers")?;
    let listed: Vec<String> = (steps.done().iter())
        .map(|(name, s)| format!("{name} {s:.3} s"))
        .collect();
    log::info!("arc rows built on the GPU: {}", listed.join(", "));
    Ok(ArcGraph::from_rows(
        world,
        (part, out, inc),
        options,
        source,
        loops,
    ))
}

/// The passes over the generated tuples.
struct Pass<'a> {
    gpu: &'a Gpu,
    messages: Kernel,
    params: &'a CudaSlice<u64>,
    /// Tuples of the global list.
    tuples: u64,
    msgs: CudaSlice<u64>,
    first: u64,
    local_n: u64,
    weights: Option<DeviceWeights>,
    merge: bool,
    /// The host's clock over each direction's count, fill, sort and trip to the host.
    steps: Steps,
}

impl Pass<'_> {
    /// Every round: tuples `start .. start + count` generated as messages, then
    /// `each(messages, count, start)`.
    fn rounds(
        &mut self,
        mut each: impl FnMut(&CudaSlice<u64>, u64, u64) -> Result<()>,
    ) -> Result<()> {
        for start in (0..self.tuples).step_by(ROUND as usize) {
            let count = ROUND.min(self.tuples - start);
            self.gpu.launch(&self.messages, grid(count), |b| {
                b.arg(self.params)
                    .arg(&start)
                    .arg(&count)
                    .arg(&mut self.msgs);
            })?;
            each(&self.msgs, count, start)?;
        }
        self.gpu.sync("generate the arcs")
    }

    /// One direction's rows: the arcs of the messages `take` names, sorted, merged where
    /// parallel arcs merge, on the host. Self-loops (out-arcs' passes) count into `loops`.
    fn rows(&mut self, take: u32, loops: &mut CudaSlice<u64>) -> Result<Rows> {
        let gpu = self.gpu;
        let (first, n) = (self.first, self.local_n);
        let names = match take {
            IN_ARCS => ["in count", "in fill", "in sort", "in download"],
            _ => ["out count", "out fill", "out sort", "out download"],
        };
        let count = gpu.function(FILE, "arcs_count")?;
        // n + 1 counters, the last left 0: their scan ends in the arcs' count.
        let mut lengths = gpu.zeros::<u64>("arc row lengths", n as usize + 1)?;
        self.rounds(|msgs, tuples, _| {
            gpu.launch(&count, grid(2 * tuples), |b| {
                b.arg(msgs).arg(&tuples).arg(&take).arg(&first).arg(&n);
                b.arg(&mut lengths).arg(&mut *loops);
            })
        })?;
        let (dev_offsets, offsets) = offsets_from_lengths(gpu, lengths, n as usize)?;
        self.steps.mark(names[0]);
        let mut cursor = gpu
            .stream
            .clone_dtod(&dev_offsets)
            .map_err(|e| gpu_error("copy the arc row offsets", e))?;
        let entries = offsets[n as usize] as usize;
        let mut keys = gpu.zeros::<u64>(&format!("{entries} arc keys"), entries)?;
        let fill = gpu.function(FILE, "arcs_fill")?;
        let (key, range) = self.weights.map_or((0, 0), |w| (w.key, w.range));
        self.rounds(|msgs, tuples, start| {
            gpu.launch(&fill, grid(2 * tuples), |b| {
                b.arg(msgs).arg(&tuples).arg(&take).arg(&first).arg(&n);
                b.arg(&start).arg(&key).arg(&range);
                b.arg(&mut cursor).arg(&mut keys);
            })
        })?;
        drop(cursor);
        self.steps.mark(names[1]);
        csr_sort::sort_rows(gpu, &offsets, &dev_offsets, &mut keys)?;
        let (keys, offsets) = match self.merge {
            true => {
                let (merged, offsets, _) = csr_sort::dedup(gpu, &offsets, &dev_offsets, &keys)?;
                (merged, offsets)
            }
            false => (keys, offsets),
        };
        gpu.sync("sort the arc rows")?;
        self.steps.mark(names[2]);
        let weighted = self.weights.is_some();
        let rows = download_rows(gpu, &keys, offsets, weighted);
        self.steps.mark(names[3]);
        rows
    }
}

/// Rows of `offsets` from their keys on the GPU: neighbours and, where `weighted`, weights.
fn download_rows(
    gpu: &Gpu,
    keys: &CudaSlice<u64>,
    offsets: Vec<u64>,
    weighted: bool,
) -> Result<Rows> {
    let entries = *offsets.last().unwrap_or(&0) as usize;
    let mut adj = large_pages::zeroed::<u32>(entries);
    let mut weights = large_pages::zeroed::<u32>(if weighted { entries } else { 0 });
    download_chunks(
        gpu,
        keys,
        entries,
        "copy the arcs to the host",
        |at, chunk| {
            let end = at + chunk.len();
            let adj = adj[at..end].par_iter_mut().zip(chunk.par_iter());
            if weighted {
                adj.zip(weights[at..end].par_iter_mut())
                    .for_each(|((v, &k), w)| (*v, *w) = ((k >> 32) as u32, k as u32));
            } else {
                adj.for_each(|(v, &k)| *v = (k >> 32) as u32);
            }
        },
    )?;
    Ok(Rows {
        offsets,
        adj,
        weights,
    })
}
