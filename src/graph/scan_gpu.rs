//! Row offsets from row lengths on the GPU (`device::scan`, kernels/csr.cu's entries):
//! the exclusive scan that turns the counted lengths of kernel 1's rows into their offsets,
//! kept on the GPU for the fill and the sort, and brought to the host once, through
//! page-locked staging (`csr_gpu::download_whole`). A serial sum on the host and two
//! 8-byte-per-row copies through pageable memory cost more than the counting pass itself at
//! SCALE 24.

use super::csr_gpu::download_whole;
use crate::device::scan::exclusive_scan;
use crate::device::Gpu;
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
    // Through the small page-locked staging buffers, the host's threads writing the fresh
    // pages: locking the offsets themselves (128 MB at SCALE 24) costs the driver a fault
    // and a lock per page on one thread.
    let offsets = download_whole(gpu, &lengths, n + 1, "copy row offsets to the host")?;
    Ok((lengths, offsets))
}
