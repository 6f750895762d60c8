//! The local/cut split of a rank's rows (`ghosts::LocalRows`) made on its GPU (kernels/
//! ghosts.cu) from the CSR there, entry for entry `LocalRows::split`'s: the remote endpoints
//! marked in a bitmap (an atomic OR per entry, a grid-stride loop over the entries, so no row
//! is one thread's), each row's local entries counted, and then each row's local and cut
//! entries written in their CSR order. Rows are a thread's each, but long ones (Kronecker
//! hubs, millions of entries) go through a whole warp, which is what the split with a thread
//! per row, tried and dropped before, lacked. The host turns the counts into row offsets and
//! numbers the ghosts from the bitmap (a popcount scan of its words, as the host split does),
//! and makes the ghost plan (`Ghosts::plan`, collective). The rows stay on the GPU for the
//! components labelling (`DeviceRows`, taken instead of an upload); the host keeps their
//! offsets and the ghosts (`LocalRows` without its entries: no copy of them comes back, the
//! verifier reads the graph's rows).

use super::csr_gpu::{download_chunks, DeviceCsr};
use super::ghosts::{narrow, Ghosts, LocalRows, Numbering};
use super::DistGraph;
use crate::comm::{Op, World};
use crate::device::{blocks, grid, memory, Gpu, THREADS};
use crate::error::{Error, Result};
use cudarc::driver::{CudaSlice, PushKernelArg};
use rayon::prelude::*;
use std::time::Instant;

/// The kernel file of the split.
const FILE: &str = "ghosts.cu";

/// A rank's local rows on its GPU: `LocalRows`'s offsets, local edges, cut edges' ghosts and
/// cut offsets.
pub struct DeviceRows {
    pub offsets: CudaSlice<u64>,
    pub adj: CudaSlice<u32>,
    pub cut_ghost: CudaSlice<u32>,
    pub cut_offsets: CudaSlice<u64>,
}

/// Device bytes the split needs beside the CSR: the bitmap and its word counts, the row
/// counts and both offsets, and the local and cut entries (as many as the CSR's).
pub fn bytes_needed(g: &DistGraph) -> u64 {
    let (words, n) = (g.n().div_ceil(64) + 1, g.local_n() as u64 + 1);
    16 * words + (4 + 8 + 8) * n + 4 * g.adj.len() as u64
}

/// Split this rank's rows on `gpu` where every rank's GPU has room for it (the CSR
/// `csr` there, or uploaded from `g`; freed after), else on the host (collective). Returns
/// the rows, on the GPU too where split there.
pub fn split_where_it_fits(
    world: &World,
    gpu: &Gpu,
    g: &DistGraph,
    csr: Option<DeviceCsr>,
) -> Result<(LocalRows, Option<DeviceRows>)> {
    let upload = match &csr {
        Some(_) => 0,
        None => DeviceCsr::bytes(g.local_n() as u64, g.adj.len() as u64),
    };
    let needed = world.allreduce(bytes_needed(g) + upload, Op::Max);
    let free = world.allreduce(memory::gpu_free(gpu)?, Op::Min);
    // The kernels read global ids in 32 bits (the labelling refuses larger graphs on several
    // ranks anyway).
    if needed > free || g.n() > u64::from(u32::MAX) {
        log::warn!(
            "the local/cut split needs {needed} bytes of GPU memory per rank ({free} free) and ids below 2^32 ({} vertices): split on the host",
            g.n()
        );
        drop(csr);
        return Ok((LocalRows::split(world, g)?, None));
    }
    let csr = match csr {
        Some(csr) => csr,
        None => DeviceCsr::upload(gpu, &g.offsets, &g.adj)?,
    };
    let (rows, on_gpu) = split(world, gpu, g, &csr)?;
    Ok((rows, Some(on_gpu)))
}

/// Split this rank's rows, `csr` on `gpu` (collective: the ghost plan).
pub fn split(
    world: &World,
    gpu: &Gpu,
    g: &DistGraph,
    csr: &DeviceCsr,
) -> Result<(LocalRows, DeviceRows)> {
    let (first, local_n) = (g.part.first(), g.local_n());
    let n = narrow(local_n, "vertices")?;
    let own = u64::from(n);
    let entries = csr.entries() as u64;
    let mut laps = Laps::start();
    let [mark, count, scatter] =
        ["split_mark", "split_count", "split_scatter"].map(|name| gpu.function(FILE, name));
    let (mark, count, scatter) = (mark?, count?, scatter?);
    laps.lap("compile");
    let mut words = gpu.zeros::<u64>("the ghosts' bitmap", g.n().div_ceil(64) as usize)?;
    let resident = blocks(gpu.resident_blocks(THREADS)? as u64, THREADS);
    gpu.launch(&mark, resident, |b| {
        b.arg(&csr.adj)
            .arg(&entries)
            .arg(&first)
            .arg(&own)
            .arg(&mut words);
    })?;
    let mut local_len = gpu.zeros::<u32>("local entries per row", local_n)?;
    gpu.launch(&count, grid(own), |b| {
        b.arg(&csr.offsets)
            .arg(&csr.adj)
            .arg(&n)
            .arg(&first)
            .arg(&mut local_len);
    })?;
    gpu.sync("count the rows' entries")?;
    laps.lap("marks and counts");
    let (ids, numbering) =
        Numbering::of(gpu.download("the ghosts' bitmap", &words, g.n().div_ceil(64) as usize)?);
    narrow(ids.len(), "ghost vertices")?;
    let (offsets, cut_offsets) = offsets_of(
        g,
        &gpu.download("local entries per row", &local_len, local_n)?,
    );
    drop(local_len);
    let (local_entries, cut_entries) = (offsets[local_n] as usize, cut_offsets[local_n] as usize);
    let mut rows = DeviceRows {
        offsets: gpu.upload("row offsets", &offsets)?,
        adj: gpu.zeros("local edges", local_entries)?,
        cut_ghost: gpu.zeros("cut edges", cut_entries)?,
        cut_offsets: gpu.upload("cut edge offsets", &cut_offsets)?,
    };
    let before = gpu.upload("ghosts before each bitmap word", &numbering.before)?;
    laps.lap("ghost ids and offsets on the host");
    gpu.launch(&scatter, grid(own), |b| {
        b.arg(&csr.offsets)
            .arg(&csr.adj)
            .arg(&n)
            .arg(&first)
            .arg(&words)
            .arg(&before)
            .arg(&rows.offsets)
            .arg(&rows.cut_offsets)
            .arg(&mut rows.adj)
            .arg(&mut rows.cut_ghost);
    })?;
    gpu.sync("split the rows")?;
    drop((words, before));
    laps.lap("scatter");
    let ghosts = Ghosts::plan(world, &g.part, ids)?;
    laps.lap("ghost plan");
    log::info!("split on the GPU: {}", laps.line());
    // The entries stay on the GPU (see `LocalRows`).
    let host = LocalRows {
        offsets,
        adj: Vec::new(),
        cut_own: Vec::new(),
        cut_ghost: Vec::new(),
        cut_offsets,
        ghosts,
    };
    Ok((host, rows))
}

/// Seconds of the split's parts, for its log line.
struct Laps {
    clock: Instant,
    last: f64,
    parts: Vec<(&'static str, f64)>,
}

impl Laps {
    fn start() -> Self {
        Laps {
            clock: Instant::now(),
            last: 0.0,
            parts: Vec::new(),
        }
    }

    /// The part that ends now.
    fn lap(&mut self, part: &'static str) {
        let now = self.clock.elapsed().as_secs_f64();
        self.parts.push((part, now - self.last));
        self.last = now;
    }

    fn line(&self) -> String {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|(part, secs)| format!("{part} {secs:.3}"))
            .collect();
        format!("{:.3} s ({} s)", self.last, parts.join(", "))
    }
}

/// The row offsets of the local and of the cut entries, from each row's local count (one
/// pass over the rows).
fn offsets_of(g: &DistGraph, local_len: &[u32]) -> (Vec<u64>, Vec<u64>) {
    let n = local_len.len();
    let (mut local, mut cut) = (Vec::with_capacity(n + 1), Vec::with_capacity(n + 1));
    let (mut l, mut c) = (0u64, 0u64);
    for (u, &len) in local_len.iter().enumerate() {
        local.push(l);
        cut.push(c);
        l += u64::from(len);
        c += g.degree(u) - u64::from(len);
    }
    local.push(l);
    cut.push(c);
    (local, cut)
}

/// The first `n` items of `dev` on the host, through the page-locked staging of
/// `csr_gpu::download_chunks` (for the check).
fn download(gpu: &Gpu, dev: &CudaSlice<u32>, n: usize) -> Result<Vec<u32>> {
    let mut host = vec![0u32; n];
    download_chunks(
        gpu,
        dev,
        n,
        "copy the local rows to the host",
        |at, chunk| host[at..at + chunk.len()].copy_from_slice(chunk),
    )?;
    Ok(host)
}

/// Each cut edge's own vertex: u for the cut edges from `cut_offsets[u]` to
/// `cut_offsets[u + 1]`.
fn owners(cut_offsets: &[u64]) -> Vec<u32> {
    let mut own = vec![0u32; *cut_offsets.last().unwrap_or(&0) as usize];
    super::csr::split_at_offsets(&mut own, cut_offsets)
        .into_par_iter()
        .enumerate()
        .for_each(|(u, row)| row.fill(u as u32));
    own
}

/// With `TESSERA_SPLIT_CHECK` set (scripts/gpu-check): the host split made too (collective),
/// and an error naming the first part where the GPU's split (`rows`, its entries `on_gpu`)
/// differs from it.
pub fn check_against_host(
    world: &World,
    gpu: &Gpu,
    g: &DistGraph,
    rows: &LocalRows,
    on_gpu: &DeviceRows,
) -> Result<()> {
    if std::env::var_os(CHECK_VARIABLE).is_none() {
        return Ok(());
    }
    let host = LocalRows::split(world, g)?;
    let adj = download(
        gpu,
        &on_gpu.adj,
        host.adj.len().min(rows.offsets[g.local_n()] as usize),
    )?;
    let cut_ghost = download(
        gpu,
        &on_gpu.cut_ghost,
        host.cut_ghost.len().min(rows.cut_count()),
    )?;
    let parts = [
        ("offsets", rows.offsets == host.offsets),
        ("local edges", adj == host.adj),
        (
            "cut edges' own vertices",
            owners(&rows.cut_offsets) == host.cut_own,
        ),
        ("cut edges' ghosts", cut_ghost == host.cut_ghost),
        ("cut edge offsets", rows.cut_offsets == host.cut_offsets),
        ("ghosts", rows.ghosts == host.ghosts),
    ];
    let differ: Vec<&str> = parts.iter().filter(|p| !p.1).map(|p| p.0).collect();
    let bad = world.allreduce(u64::from(!differ.is_empty()), Op::Sum);
    match (differ.first(), bad) {
        (Some(part), _) => Err(Error::Gpu(format!(
            "{CHECK_VARIABLE}: rank {}'s split on the GPU differs from the host split in its {part}",
            world.rank()
        ))),
        (None, 0) => {
            log::info!("{CHECK_VARIABLE}: the GPU's split equals the host split");
            Ok(())
        }
        (None, ranks) => Err(Error::Gpu(format!(
            "{CHECK_VARIABLE}: {ranks} ranks' splits on the GPU differ from the host split"
        ))),
    }
}

/// The environment variable that turns on `check_against_host`.
pub const CHECK_VARIABLE: &str = "TESSERA_SPLIT_CHECK";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cut_edge_is_owned_by_its_row() {
        // Rows of 2, 0, 3 and 0 cut edges, a leading and a trailing empty row among them.
        assert_eq!(owners(&[0, 0, 2, 2, 5, 5]), vec![1, 1, 3, 3, 3]);
        assert_eq!(owners(&[0]), Vec::<u32>::new());
    }
}
