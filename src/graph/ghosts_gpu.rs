//! `LocalRows` made on the rank's GPU from its rows already there (the `DeviceCsr` the GPU
//! build leaves, global ids as u32): the same split as `LocalRows::split`, entry for entry
//! (kernels/ghosts.cu: a count per row and the ghosts marked in a bitmap over all vertices,
//! the row offsets and the bitmap's word counts scanned on the host as `csr_sort` scans its
//! counts, then the rows filled), brought to the host in one transfer per array, where the
//! host split reads every entry on the CPU cores (11 s at SCALE 27 on 2 GPUs' hosts).

use super::csr::row_offsets;
use super::csr_gpu::DeviceCsr;
use super::ghosts::{narrow, Ghosts, LocalRows};
use super::DistGraph;
use crate::comm::{Op, World};
use crate::device::{grid, memory, Gpu};
use crate::error::Result;
use cudarc::driver::{CudaSlice, PushKernelArg};

const FILE: &str = "ghosts.cu";

/// Device bytes of the split beside the rows: the bitmap and its word offsets, two counts and
/// two offsets per row, and the split rows (4 bytes per local entry, 8 per cut one).
fn bytes_needed(n: u64, vertices: u64, entries: u64) -> u64 {
    2 * 8 * vertices.div_ceil(64) + 4 * 8 * (n + 1) + 8 * entries + 8 * vertices.min(entries)
}

/// This rank's rows split on its GPU, or None where that does not fit every rank's free GPU
/// memory (collective: every rank takes the same way, and the ghosts' owners learn who asks
/// for what).
pub fn split(
    world: &World,
    gpu: &Gpu,
    g: &DistGraph,
    csr: &DeviceCsr,
) -> Result<Option<LocalRows>> {
    let part = g.part;
    let n = g.local_n();
    narrow(n, "vertices")?;
    let needed = world.allreduce(bytes_needed(n as u64, g.n(), csr.entries() as u64), Op::Max);
    let free = world.allreduce(memory::gpu_free(gpu)?, Op::Min);
    if needed > free {
        log::info!("the local/cut split needs {needed} bytes of GPU memory per rank, {free} are free: splitting on the host");
        return Ok(None);
    }
    let (n32, first, local_n) = (n as u32, part.first(), n as u64);
    let words = g.n().div_ceil(64);
    let kernel = |name| gpu.function(FILE, name);
    let mut marks = gpu.zeros::<u64>("ghost marks", words as usize)?;
    let mut local_len = gpu.zeros::<u64>("local row lengths", n)?;
    let mut cut_len = gpu.zeros::<u64>("cut row lengths", n)?;
    gpu.launch(&kernel("ghosts_count")?, grid(local_n), |a| {
        a.arg(&csr.offsets)
            .arg(&csr.adj)
            .arg(&n32)
            .arg(&first)
            .arg(&local_n)
            .arg(&mut local_len)
            .arg(&mut cut_len)
            .arg(&mut marks);
    })?;
    let offsets = row_offsets(&gpu.download("local row lengths", &local_len, n)?);
    let cut_offsets = row_offsets(&gpu.download("cut row lengths", &cut_len, n)?);
    let (ids, before) = ghost_ids(gpu, &marks, words)?;
    narrow(ids.len(), "ghost vertices")?;
    let (local_at, cut_at) = (
        gpu.upload("local row offsets", &offsets)?,
        gpu.upload("cut row offsets", &cut_offsets)?,
    );
    let mut adj = gpu.zeros::<u32>("local edges", offsets[n] as usize)?;
    let cuts = cut_offsets[n] as usize;
    let mut cut_own = gpu.zeros::<u32>("cut edges", cuts)?;
    let mut cut_ghost = gpu.zeros::<u32>("cut edges", cuts)?;
    gpu.launch(&kernel("ghosts_fill")?, grid(local_n), |a| {
        a.arg(&csr.offsets)
            .arg(&csr.adj)
            .arg(&n32)
            .arg(&first)
            .arg(&local_n)
            .arg(&local_at)
            .arg(&cut_at)
            .arg(&marks)
            .arg(&before)
            .arg(&mut adj)
            .arg(&mut cut_own)
            .arg(&mut cut_ghost);
    })?;
    Ok(Some(LocalRows {
        adj: gpu.download("local edges", &adj, offsets[n] as usize)?,
        cut_own: gpu.download("cut edges", &cut_own, cuts)?,
        cut_ghost: gpu.download("cut edges", &cut_ghost, cuts)?,
        offsets,
        cut_offsets,
        ghosts: Ghosts::plan(world, &part, ids)?,
    }))
}

/// The marked vertices' ids, ascending, and (on the device) each bitmap word's first index
/// among them.
fn ghost_ids(gpu: &Gpu, marks: &CudaSlice<u64>, words: u64) -> Result<(Vec<u64>, CudaSlice<u64>)> {
    let mut counts = gpu.zeros::<u64>("ghost counts", words as usize)?;
    gpu.launch(
        &gpu.function(FILE, "ghosts_word_counts")?,
        grid(words),
        |a| {
            a.arg(marks).arg(&words).arg(&mut counts);
        },
    )?;
    let before = row_offsets(&gpu.download("ghost counts", &counts, words as usize)?);
    let total = before[words as usize] as usize;
    let before = gpu.upload("ghost word offsets", &before)?;
    let mut ids = gpu.zeros::<u64>("ghost ids", total)?;
    gpu.launch(&gpu.function(FILE, "ghosts_ids")?, grid(words), |a| {
        a.arg(marks).arg(&before).arg(&words).arg(&mut ids);
    })?;
    Ok((gpu.download("ghost ids", &ids, total)?, before))
}
