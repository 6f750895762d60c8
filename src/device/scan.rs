//! Exclusive prefix sums in place on the GPU (kernels/prelude.cuh `scan_tiles`, `scan_add`), of
//! u64 or u32 items: row offsets from row lengths (kernels/csr.cu), Euler slot starts from
//! degrees (euler.cu), the local/cut split's ghost numbers and row offsets (ghosts.cu). Each of
//! those files declares the entries (`SCAN_KERNELS`), so the scan is compiled with the kernels
//! around it. A warp scans each tile and writes its sum; the sums are scanned the same way while
//! more than one tile remains, and added back.

use super::{grid, Gpu};
use crate::error::Result;
use cudarc::driver::{CudaSlice, DeviceRepr, PushKernelArg, ValidAsZeroBits};

/// A tile: this many rounds of a warp's 32 items.
const ROUNDS: u32 = 16;
const TILE: u64 = ROUNDS as u64 * 32;

/// The item types scanned (`SCAN_KERNELS(T)`'s entries `scan_tiles_T`, `scan_add_T`).
pub trait ScanItem: DeviceRepr + ValidAsZeroBits + Copy {
    const TILES: &'static str;
    const ADD: &'static str;
}

impl ScanItem for u64 {
    const TILES: &'static str = "scan_tiles_u64";
    const ADD: &'static str = "scan_add_u64";
}

impl ScanItem for u32 {
    const TILES: &'static str = "scan_tiles_u32";
    const ADD: &'static str = "scan_add_u32";
}

/// The exclusive prefix sums of the first `len` items of `a`, in place, by the entries of
/// kernels/`file`.
pub fn exclusive_scan<T: ScanItem>(
    gpu: &Gpu,
    file: &str,
    a: &mut CudaSlice<T>,
    len: u64,
) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let tiles = len.div_ceil(TILE);
    let mut sums = gpu.zeros::<T>("a scan's tile sums", tiles as usize)?;
    gpu.launch(&gpu.function(file, T::TILES)?, grid(tiles * 32), |b| {
        b.arg(&mut *a).arg(&len).arg(&ROUNDS).arg(&mut sums);
    })?;
    if tiles > 1 {
        // Each tile's first sum: the scan of the sums before it.
        exclusive_scan(gpu, file, &mut sums, tiles)?;
        gpu.launch(&gpu.function(file, T::ADD)?, grid(len), |b| {
            b.arg(&mut *a).arg(&len).arg(&TILE).arg(&sums);
        })?;
    }
    Ok(())
}
