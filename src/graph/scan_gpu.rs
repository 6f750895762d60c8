//! Row offsets from row lengths on the GPU (kernels/csr.cu `csr_scan_tiles`, `csr_scan_add`):
//! the exclusive scan that turns the counted lengths of kernel 1's rows into their offsets,
//! kept on the GPU for the fill and the sort, and brought to the host once, page-locked. A
//! serial sum on the host and two 8-byte-per-row copies through pageable memory cost more
//! than the counting pass itself at SCALE 24.

use crate::device::{blocks, gpu_error, grid, Gpu};
use crate::error::Result;
use cudarc::driver::{CudaSlice, PushKernelArg};

const FILE: &str = "csr.cu";
/// Threads of a scan block, and values each block scans (kernels/prelude.cuh SCAN_THREADS, SCAN_TILE).
const THREADS: u32 = 1024;
const TILE: u64 = 8 * THREADS as u64;

/// The exclusive prefix sums of the first `count` values of `a`, in place.
pub fn exclusive_scan(gpu: &Gpu, a: &mut CudaSlice<u64>, count: u64) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    let tiles = count.div_ceil(TILE);
    let mut totals = gpu.zeros::<u64>("scan tile totals", tiles as usize)?;
    gpu.launch(
        &gpu.function(FILE, "csr_scan_tiles")?,
        blocks(tiles, THREADS),
        |b| {
            b.arg(&mut *a).arg(&count).arg(&mut totals);
        },
    )?;
    if tiles > 1 {
        // Each tile's first sum: the scan of the totals before it.
        exclusive_scan(gpu, &mut totals, tiles)?;
        gpu.launch(&gpu.function(FILE, "csr_scan_add")?, grid(count), |b| {
            b.arg(&mut *a).arg(&count).arg(&totals);
        })?;
    }
    Ok(())
}

/// The offsets of `n` rows whose lengths are the first `n` values of `lengths` (`n + 1`
/// long, its last value 0): scanned in place into the `n + 1` offsets on the GPU (the last
/// is the entries' count), returned with their copy on the host.
pub fn offsets_from_lengths(
    gpu: &Gpu,
    mut lengths: CudaSlice<u64>,
    n: usize,
) -> Result<(CudaSlice<u64>, Vec<u64>)> {
    exclusive_scan(gpu, &mut lengths, n as u64 + 1)?;
    let mut offsets = vec![0u64; n + 1];
    // Straight into the host offsets, page-locked for the copy: one pass over their memory,
    // not a staging buffer's and then theirs.
    let pinned = gpu.pin(&mut offsets);
    let what = "copy row offsets to the host";
    (gpu.stream
        .memcpy_dtoh(&lengths.slice(0..n + 1), &mut offsets[..]))
    .map_err(|e| gpu_error(what, e))?;
    // Into page-locked memory the copy is asynchronous: waited for before the unlock.
    gpu.sync(what)?;
    drop(pinned);
    Ok((lengths, offsets))
}
