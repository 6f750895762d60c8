//! Row offsets from row lengths on the GPU (`device::scan`, kernels/csr.cu's entries):
//! the exclusive scan that turns the counted lengths of kernel 1's rows into their offsets,
//! kept on the GPU for the fill and the sort, and brought to the host once, page-locked. A
//! serial sum on the host and two 8-byte-per-row copies through pageable memory cost more
//! than the counting pass itself at SCALE 24.

use crate::device::scan::exclusive_scan;
use crate::device::{gpu_error, Gpu};
use crate::error::Result;
use cudarc::driver::CudaSlice;

/// The offsets of `n` rows whose lengths are the first `n` values of `lengths` (`n + 1`
/// long, its last value 0): scanned in place into the `n + 1` offsets on the GPU (the last
/// is the entries' count), returned with their copy on the host.
pub fn offsets_from_lengths(
    gpu: &Gpu,
    mut lengths: CudaSlice<u64>,
    n: usize,
) -> Result<(CudaSlice<u64>, Vec<u64>)> {
    exclusive_scan(gpu, "csr.cu", &mut lengths, n as u64 + 1)?;
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
