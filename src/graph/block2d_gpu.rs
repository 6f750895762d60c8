//! Kernel 1 of the 2D partition on the GPU, for generated graphs (the CPU build is
//! `block2d::Block2D::build`): the rounds of the 1D GPU build (`csr_gpu::Rounds`) generate
//! the edge messages and route each entry (u, v) straight to the rank of its block A(i, j);
//! there two passes count and fill the block's rows by u and by v (kernels/generators.cu
//! `csr2d_*`), and `csr_sort` sorts and de-duplicates both. The block stays on the GPU for
//! the search; nothing comes back to the host but its checksum.

use super::block2d::{Block2D, Layout2D};
use super::csr::row_offsets;
use super::csr_gpu::{round_sizes, DeviceCsr, Rounds};
use super::csr_sort;
use super::{EdgeSource, GpuEdges};
use crate::comm::gpu::OwnerBuckets;
use crate::comm::{GpuTransport, Op, PhaseTimes, World};
use crate::device::{gpu_error, grid, Gpu};
use crate::error::Result;
use cudarc::driver::{CudaSlice, PushKernelArg};

const FILE: &str = "generators.cu";

/// A rank's block A(i, j) in GPU memory: by column index of u (row indices of v) and by row
/// index of v (column indices of u), as `Block2D` holds them on the host.
pub struct DeviceBlocks {
    pub layout: Layout2D,
    pub out: DeviceCsr,
    pub into: DeviceCsr,
}

impl DeviceBlocks {
    /// Upload blocks built on the host.
    pub fn upload(gpu: &Gpu, b: &Block2D) -> Result<Self> {
        Ok(DeviceBlocks {
            layout: b.layout,
            out: DeviceCsr::upload(gpu, &b.out_offsets, &b.out_adj)?,
            into: DeviceCsr::upload(gpu, &b.in_offsets, &b.in_adj)?,
        })
    }

    /// Device bytes of these blocks.
    pub fn bytes(&self) -> u64 {
        DeviceBlocks::bytes_for(&self.layout, self.out.entries() as u64)
    }

    /// Device bytes of blocks of `entries` entries on `layout`.
    pub fn bytes_for(layout: &Layout2D, entries: u64) -> u64 {
        DeviceCsr::bytes(layout.col_len() as u64, entries)
            + DeviceCsr::bytes(layout.row_len() as u64, entries)
    }
}

/// Device bytes the build needs on a rank receiving `entries` entries (duplicates included):
/// the row lengths and both filled orientations, with the message buffers while they fill,
/// then with what sorting one orientation needs.
pub fn bytes_needed(layout: &Layout2D, entries: u64) -> u64 {
    let (per_rank, recv) = round_sizes(layout.part.size);
    let generated = if layout.part.size > 1 { 2 } else { 1 } * 2 * per_rank;
    let rows = (layout.col_len() + layout.row_len()) as u64;
    let held = 8 * rows + 2 * 4 * entries;
    let widest = layout.col_len().max(layout.row_len()) as u64;
    held + (8 * (generated + recv)).max(csr_sort::bytes_needed(widest, entries))
}

/// Build this rank's block of `source` (whose edges `edges` makes) on its GPU. Returns the
/// blocks and their entries' share of the CSR checksum. Collective.
pub fn build(
    world: &World,
    gpu: &Gpu,
    transport: GpuTransport,
    (source, edges): (&dyn EdgeSource, &GpuEdges),
    layout: Layout2D,
    timers: &mut PhaseTimes,
) -> Result<(DeviceBlocks, u64)> {
    let owners = OwnerBuckets::grid(gpu, world.size(), layout.cols, layout.part.block)?;
    let mut rounds = Rounds::new(world, gpu, transport, (source, edges), owners)?;
    let (cols, rows) = (layout.col_len(), layout.row_len());
    let (block, grid_cols) = (layout.part.block, layout.cols as u64);
    let row_first = layout.row_first();

    // Pass 1: the row lengths both ways.
    let count = gpu.function(FILE, "csr2d_count")?;
    let mut out_cursor = gpu.zeros::<u64>("row lengths", cols.max(1))?;
    let mut in_cursor = gpu.zeros::<u64>("row lengths", rows.max(1))?;
    rounds.place(timers, "csr2d_count", |msgs, n| {
        gpu.launch(&count, grid(n), |b| {
            b.arg(msgs)
                .arg(&n)
                .arg(&block)
                .arg(&grid_cols)
                .arg(&row_first)
                .arg(&mut out_cursor)
                .arg(&mut in_cursor);
        })
    })?;
    let out_offsets = row_offsets(&gpu.download("row lengths", &out_cursor, cols)?);
    let in_offsets = row_offsets(&gpu.download("row lengths", &in_cursor, rows)?);

    // Pass 2: both orientations filled through cursors that start at the row offsets.
    let s = &gpu.stream;
    let upload_starts = |offsets: &[u64], cursor: &mut CudaSlice<u64>| {
        let n = offsets.len() - 1;
        if n == 0 {
            return Ok(());
        }
        s.memcpy_htod(&offsets[..n], &mut cursor.slice_mut(0..n))
            .map_err(|e| gpu_error("upload row offsets", e))
    };
    upload_starts(&out_offsets, &mut out_cursor)?;
    upload_starts(&in_offsets, &mut in_cursor)?;
    let entries = out_offsets[cols] as usize;
    let what = format!("{entries} block entries");
    let mut out_rows = gpu.zeros::<u32>(&what, entries.max(1))?;
    let mut in_rows = gpu.zeros::<u32>(&what, entries.max(1))?;
    let fill = gpu.function(FILE, "csr2d_fill")?;
    rounds.place(timers, "csr2d_fill", |msgs, n| {
        gpu.launch(&fill, grid(n), |b| {
            b.arg(msgs)
                .arg(&n)
                .arg(&block)
                .arg(&grid_cols)
                .arg(&row_first)
                .arg(&mut out_cursor)
                .arg(&mut out_rows)
                .arg(&mut in_cursor)
                .arg(&mut in_rows);
        })
    })?;
    drop((rounds, out_cursor, in_cursor));

    let (out, into) = timers.time("sort_dedup", || -> Result<_> {
        let (out, _) = csr_sort::sort_dedup(gpu, &out_offsets, out_rows)?;
        let (into, _) = csr_sort::sort_dedup(gpu, &in_offsets, in_rows)?;
        Ok((out, into))
    })?;
    let blocks = DeviceBlocks { layout, out, into };
    let checksum = entry_checksum(gpu, &blocks)?;
    // Freed memory returns to the device at the next synchronisation (see csr_gpu::build).
    gpu.sync("free the build's buffers")?;
    world.barrier();
    Ok((blocks, checksum))
}

/// The block's entries' share of the CSR checksum (`Block2D::entry_checksum`).
fn entry_checksum(gpu: &Gpu, b: &DeviceBlocks) -> Result<u64> {
    let l = &b.layout;
    let (rows, block, cols, j) = (l.col_len() as u64, l.part.block, l.cols as u64, l.j as u64);
    let row_first = l.row_first();
    let mut sum = gpu.zeros::<u64>("block checksum", 1)?;
    gpu.launch(
        &gpu.function(FILE, "csr2d_checksum")?,
        grid(32 * rows),
        |a| {
            a.arg(&b.out.offsets)
                .arg(&b.out.adj)
                .arg(&rows)
                .arg(&block)
                .arg(&cols)
                .arg(&j)
                .arg(&row_first)
                .arg(&mut sum);
        },
    )?;
    Ok(gpu.download("block checksum", &sum, 1)?[0])
}

/// Entries all ranks' blocks hold (collective).
pub fn total_entries(world: &World, b: &DeviceBlocks) -> u64 {
    world.allreduce(b.out.entries() as u64, Op::Sum)
}
