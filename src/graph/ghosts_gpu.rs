//! The local/cut split of a rank's rows (`ghosts::LocalRows`) made on its GPU (kernels/
//! ghosts.cu) from the CSR there, entry for entry `LocalRows::split`'s: the remote endpoints
//! marked in a bitmap (an atomic OR per entry, a grid-stride loop over the entries, so no row
//! is one thread's), each row's local entries counted, both numbered by exclusive scans on the
//! GPU (the bitmap words' marks: the ghosts' indices; the rows' counts: the row offsets), and
//! then each row's local and cut entries written in their CSR order. Rows are a thread's each,
//! but long ones (Kronecker hubs, millions of entries) go through a whole warp, which is what
//! the split with a thread per row, tried and dropped before, lacked. The host receives the
//! ghosts' global ids (listed on the GPU, for the ghost plan: `Ghosts::plan`, collective) and
//! two counts (local and cut entries), nothing per row: the rows stay on the GPU for the
//! components labelling (`DeviceRows`, taken instead of an upload), and the host keeps their
//! counts and the ghosts (`LocalRows` without its entries or offsets; the verifier reads the
//! graph's rows).

use super::csr_gpu::{download_whole, DeviceCsr};
use super::ghosts::{narrow, Ghosts, LocalRows};
use super::DistGraph;
use crate::comm::{Op, World};
use crate::device::scan::exclusive_scan;
use crate::device::{filling_grid, grid, memory, Gpu, Kernel};
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

/// Device bytes the split needs beside the CSR: the bitmap, its word counts and the ghost
/// ids (at most one per remote vertex and per entry), both offsets, and the local and cut
/// entries (as many as the CSR's), with a scan's tile sums counted as a tenth more offsets.
pub fn bytes_needed(g: &DistGraph) -> u64 {
    let (words, n) = (g.n().div_ceil(64) + 1, g.local_n() as u64 + 1);
    let entries = g.adj.len() as u64;
    let ghosts = (g.n() - g.local_n() as u64).min(entries);
    16 * words + 8 * ghosts + (8 + 8) * n + (8 * n).div_ceil(10) + 4 * entries
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

/// The split's kernels (kernels/ghosts.cu).
struct Kernels {
    mark: Kernel,
    count: Kernel,
    word_counts: Kernel,
    cut_offsets: Kernel,
    ghost_ids: Kernel,
    scatter: Kernel,
}

impl Kernels {
    fn load(gpu: &Gpu) -> Result<Self> {
        let f = |name| gpu.function(FILE, name);
        Ok(Kernels {
            mark: f("split_mark")?,
            count: f("split_count")?,
            word_counts: f("split_word_counts")?,
            cut_offsets: f("split_cut_offsets")?,
            ghost_ids: f("split_ghost_ids")?,
            scatter: f("split_scatter")?,
        })
    }
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
    let word_count = g.n().div_ceil(64);
    let mut laps = Laps::start();
    let k = Kernels::load(gpu)?;
    laps.lap("compile");
    let mut words = gpu.zeros::<u64>("the ghosts' bitmap", word_count as usize)?;
    let resident = filling_grid(gpu.resident_blocks(&k.mark)?);
    gpu.launch(&k.mark, resident, |b| {
        b.arg(&csr.adj)
            .arg(&entries)
            .arg(&first)
            .arg(&own)
            .arg(&mut words);
    })?;
    // Each row's local count, then (scanned) where its local entries start, the last item
    // all of them.
    let mut local_at = gpu.zeros::<u64>("row offsets", local_n + 1)?;
    gpu.launch(&k.count, grid(own), |b| {
        b.arg(&csr.offsets)
            .arg(&csr.adj)
            .arg(&n)
            .arg(&first)
            .arg(&mut local_at);
    })?;
    gpu.sync("count the rows' entries")?;
    laps.lap("marks and counts");
    // The ghosts: each word's marks, scanned (a ghost's index is the marks below it), and
    // their global ids listed for the plan.
    let mut before = gpu.zeros::<u64>("ghosts before each bitmap word", word_count as usize + 1)?;
    gpu.launch(&k.word_counts, grid(word_count), |b| {
        b.arg(&words).arg(&word_count).arg(&mut before);
    })?;
    exclusive_scan(gpu, FILE, &mut before, word_count + 1)?;
    let ghost_count = gpu.item("the ghost count", &before, word_count as usize)?;
    narrow(ghost_count as usize, "ghost vertices")?;
    let mut ids = gpu.zeros::<u64>("ghost ids", ghost_count as usize)?;
    gpu.launch(&k.ghost_ids, grid(word_count), |b| {
        b.arg(&words).arg(&word_count).arg(&before).arg(&mut ids);
    })?;
    let ids = gpu.download("ghost ids", &ids, ghost_count as usize)?;
    // The row offsets, local and cut.
    exclusive_scan(gpu, FILE, &mut local_at, own + 1)?;
    let local_entries = gpu.item("the local entries' count", &local_at, local_n)?;
    let cut_entries = entries - local_entries;
    let mut cut_at = gpu.zeros::<u64>("cut edge offsets", local_n + 1)?;
    gpu.launch(&k.cut_offsets, grid(own + 1), |b| {
        b.arg(&csr.offsets).arg(&local_at).arg(&n).arg(&mut cut_at);
    })?;
    let mut rows = DeviceRows {
        offsets: local_at,
        adj: gpu.zeros("local edges", local_entries as usize)?,
        cut_ghost: gpu.zeros("cut edges", cut_entries as usize)?,
        cut_offsets: cut_at,
    };
    gpu.sync("number the ghosts and the rows")?;
    laps.lap("ghost ids and offsets");
    gpu.launch(&k.scatter, grid(own), |b| {
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
    // The entries and offsets stay on the GPU (see `LocalRows`).
    let host = LocalRows {
        own: local_n,
        cuts: cut_entries as usize,
        offsets: Vec::new(),
        adj: Vec::new(),
        cut_own: Vec::new(),
        cut_ghost: Vec::new(),
        cut_offsets: Vec::new(),
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
    let rows_n = g.local_n() + 1;
    // The check's copies: the local rows as the GPU split them.
    let what = "copy the local rows to the host";
    let offsets = download_whole(gpu, &on_gpu.offsets, rows_n, what)?;
    let cut_offsets = download_whole(gpu, &on_gpu.cut_offsets, rows_n, what)?;
    let adj_n = host.adj.len().min(offsets[g.local_n()] as usize);
    let adj = download_whole(gpu, &on_gpu.adj, adj_n, what)?;
    let cut_n = host.cut_ghost.len().min(rows.cut_count());
    let cut_ghost = download_whole(gpu, &on_gpu.cut_ghost, cut_n, what)?;
    let parts = [
        (
            "counts of rows and cut edges",
            (rows.local_n(), rows.cut_count()) == (host.local_n(), host.cut_count()),
        ),
        ("offsets", offsets == host.offsets),
        ("local edges", adj == host.adj),
        (
            "cut edges' own vertices",
            owners(&cut_offsets) == host.cut_own,
        ),
        ("cut edges' ghosts", cut_ghost == host.cut_ghost),
        ("cut edge offsets", cut_offsets == host.cut_offsets),
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
