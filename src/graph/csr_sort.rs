//! The rows kernel 1 filled on the GPU, sorted and de-duplicated there (kernels/csr.cu), so
//! that the GPU-built CSR stays on the GPU for the workload that runs on it (u32 ids), and
//! the arc graph's rows (u64 keys, `arcs_gpu`): a segmented sort
//! by row length class (a warp per short row, a block per medium row or per chunk of a long
//! row, then merge rounds over the long rows), a count of each row's distinct ids, and their
//! copy into the final rows.

use super::csr_gpu::DeviceCsr;
use super::scan_gpu::offsets_from_lengths;
use crate::device::{blocks, grid, Gpu, Kernel};
use crate::error::Result;
use cudarc::driver::{CudaSlice, DeviceRepr, PushKernelArg, ValidAsZeroBits};
use rayon::prelude::*;

const FILE: &str = "csr.cu";
/// Entries a block sorts in shared memory (kernels/csr.cu SORT_TILE).
const TILE: u64 = 4096;
/// Outputs each thread of a merge round places (kernels/csr.cu MERGE_ITEMS).
const MERGE_ITEMS: u64 = 16;
/// Threads of the block that sorts a tile.
const TILE_THREADS: u32 = 512;
/// Rows up to this long are sorted by one warp.
const WARP_ROW: u64 = 32;

/// Device bytes the sort needs beyond the filled rows, for `entries` entries in `rows` rows
/// (at most): the merge buffer, the final rows, the row offsets and counts.
pub fn bytes_needed(rows: u64, entries: u64) -> u64 {
    4 * entries + 4 * entries + 3 * 8 * (rows + 1)
}

/// Which rows each kernel sorts, from the row offsets.
#[derive(Debug, Default, PartialEq)]
struct Classes {
    /// Rows of 2..=32 entries (a warp each).
    warp_rows: Vec<u32>,
    /// Segments (start, length) of at most `TILE` entries a block sorts: the medium rows
    /// whole, and the long rows in chunks.
    tiles: (Vec<u64>, Vec<u32>),
    /// The rows longer than `TILE`.
    long_rows: Vec<u32>,
}

fn classify(offsets: &[u64]) -> Classes {
    let len = |r: usize| offsets[r + 1] - offsets[r];
    let rows = 0..offsets.len() - 1;
    let pick = |keep: &(dyn Fn(u64) -> bool + Sync)| -> Vec<u32> {
        rows.clone()
            .into_par_iter()
            .filter(|&r| keep(len(r)))
            .map(|r| r as u32)
            .collect()
    };
    let warp_rows = pick(&|l| (2..=WARP_ROW).contains(&l));
    let medium = pick(&|l| l > WARP_ROW && l <= TILE);
    let long_rows = pick(&|l| l > TILE);
    let mut tiles = (Vec::new(), Vec::new());
    for &r in medium.iter().chain(&long_rows) {
        let (start, end) = (offsets[r as usize], offsets[r as usize + 1]);
        for at in (start..end).step_by(TILE as usize) {
            tiles.0.push(at);
            tiles.1.push((end - at).min(TILE) as u32);
        }
    }
    Classes {
        warp_rows,
        tiles,
        long_rows,
    }
}

/// Row entries the sort kernels take: u32 ids (the CSR) or u64 keys (neighbour << 32 |
/// weight: the arc graph's rows, whose duplicates are keys of one neighbour).
pub trait SortKey: DeviceRepr + ValidAsZeroBits + Copy + Unpin + 'static {
    /// The suffix of its kernels' names (kernels/csr.cu `SORT_KERNELS`).
    const SUFFIX: &'static str;
}

impl SortKey for u32 {
    const SUFFIX: &'static str = "";
}

impl SortKey for u64 {
    const SUFFIX: &'static str = "_64";
}

fn kernel<K: SortKey>(gpu: &Gpu, name: &str) -> Result<Kernel> {
    gpu.function(FILE, &format!("{name}{}", K::SUFFIX))
}

/// Sort and de-duplicate the rows of `adj` (row r at `offsets[r]..offsets[r + 1]`, ids
/// unique once sorted are kept); returns the final CSR on the GPU and its row offsets.
pub fn sort_dedup(
    gpu: &Gpu,
    offsets: &[u64],
    mut adj: CudaSlice<u32>,
) -> Result<(DeviceCsr, Vec<u64>)> {
    let dev_offsets = gpu.upload("row offsets", offsets)?;
    sort_rows(gpu, offsets, &dev_offsets, &mut adj)?;
    let (out, fresh, dev_fresh) = dedup(gpu, offsets, &dev_offsets, &adj)?;
    let entries = fresh[offsets.len() - 1] as usize;
    Ok((DeviceCsr::from_parts(dev_fresh, out, entries), fresh))
}

/// Sort each row of `adj` (row r at `offsets[r]..offsets[r + 1]`, `dev_offsets` on the GPU).
pub fn sort_rows<K: SortKey>(
    gpu: &Gpu,
    offsets: &[u64],
    dev_offsets: &CudaSlice<u64>,
    adj: &mut CudaSlice<K>,
) -> Result<()> {
    let classes = classify(offsets);
    if !classes.warp_rows.is_empty() {
        let rows = gpu.upload("short rows", &classes.warp_rows)?;
        let count = classes.warp_rows.len() as u64;
        let sort = kernel::<K>(gpu, "csr_sort_warp")?;
        gpu.launch(&sort, grid(32 * count), |b| {
            b.arg(&mut *adj).arg(dev_offsets).arg(&rows).arg(&count);
        })?;
    }
    if !classes.tiles.0.is_empty() {
        let starts = gpu.upload("tile starts", &classes.tiles.0)?;
        let lens = gpu.upload("tile lengths", &classes.tiles.1)?;
        let sort = kernel::<K>(gpu, "csr_sort_tile")?;
        let cfg = blocks(classes.tiles.0.len() as u64, TILE_THREADS);
        gpu.launch(&sort, cfg, |b| {
            b.arg(&mut *adj).arg(&starts).arg(&lens);
        })?;
    }
    merge_long_rows(gpu, offsets, &classes.long_rows, adj)
}

/// The first entry of each distinct id of every sorted row, in new rows: those rows, their
/// offsets, and the offsets on the GPU.
pub fn dedup<K: SortKey>(
    gpu: &Gpu,
    offsets: &[u64],
    dev_offsets: &CudaSlice<u64>,
    adj: &CudaSlice<K>,
) -> Result<(CudaSlice<K>, Vec<u64>, CudaSlice<u64>)> {
    let n = offsets.len() as u64 - 1;
    // n + 1 counts, the last left 0: their scan ends in the entries' count.
    let mut counts = gpu.zeros::<u64>("distinct ids per row", n as usize + 1)?;
    gpu.launch(&kernel::<K>(gpu, "csr_unique_count")?, grid(32 * n), |b| {
        b.arg(adj).arg(dev_offsets).arg(&n).arg(&mut counts);
    })?;
    let (dev_fresh, fresh) = offsets_from_lengths(gpu, counts, n as usize)?;
    let entries = fresh[n as usize] as usize;
    let mut out = gpu.zeros::<K>(&format!("{entries} adjacency entries"), entries)?;
    gpu.launch(&kernel::<K>(gpu, "csr_compact")?, grid(32 * n), |b| {
        b.arg(adj)
            .arg(dev_offsets)
            .arg(&dev_fresh)
            .arg(&n)
            .arg(&mut out);
    })?;
    gpu.sync("sort and de-duplicate the rows")?;
    Ok((out, fresh, dev_fresh))
}

/// Merge the sorted `TILE` chunks of each long row into one sorted row, through a buffer the
/// size of the long rows (rounds alternate between `adj` and it; an odd count copies back).
fn merge_long_rows<K: SortKey>(
    gpu: &Gpu,
    offsets: &[u64],
    long_rows: &[u32],
    adj: &mut CudaSlice<K>,
) -> Result<()> {
    let Some(longest) = long_rows
        .iter()
        .map(|&r| offsets[r as usize + 1] - offsets[r as usize])
        .max()
    else {
        return Ok(());
    };
    let in_adj: Vec<u64> = long_rows.iter().map(|&r| offsets[r as usize]).collect();
    let mut flat = Vec::with_capacity(long_rows.len() + 1);
    flat.push(0u64);
    for &r in long_rows {
        flat.push(flat.last().unwrap() + offsets[r as usize + 1] - offsets[r as usize]);
    }
    let total = *flat.last().unwrap();
    let rows = long_rows.len() as u32;
    let merge = kernel::<K>(gpu, "csr_merge")?;
    let in_adj = gpu.upload("long row starts", &in_adj)?;
    let dev_flat = gpu.upload("long row starts", &flat)?;
    let mut buffer = gpu.zeros::<K>("merge buffer", total as usize)?;
    let cfg = grid(total.div_ceil(MERGE_ITEMS));
    let mut width = TILE;
    let mut in_buffer = false;
    // A last round of width `longest` copies the rows back to `adj` when they end in the buffer.
    while width < longest || in_buffer {
        let w = width.min(longest);
        gpu.launch(&merge, cfg, |b| {
            if in_buffer {
                b.arg(&buffer).arg(&mut *adj).arg(&dev_flat).arg(&in_adj);
            } else {
                b.arg(&*adj).arg(&mut buffer).arg(&in_adj).arg(&dev_flat);
            }
            b.arg(&dev_flat).arg(&rows).arg(&total).arg(&w);
        })?;
        in_buffer = !in_buffer;
        width *= 2;
    }
    gpu.sync("merge the long rows")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::csr::row_offsets;

    /// Each key type's kernels exist in kernels/csr.cu under its suffix.
    #[test]
    fn every_key_type_has_its_kernels() {
        let (_, source) = crate::device::KERNELS
            .iter()
            .find(|(f, _)| *f == FILE)
            .unwrap();
        assert!(source.contains(&format!("\nSORT_KERNELS({}, u32)\n", u32::SUFFIX)));
        assert!(source.contains(&format!("\nSORT_KERNELS({}, u64)\n", u64::SUFFIX)));
    }

    #[test]
    fn rows_go_to_the_kernel_of_their_length() {
        // Row lengths 0, 1, 2, 32, 33, 4096, 4097, 10000.
        let lengths = [0u64, 1, 2, 32, 33, 4096, 4097, 10000];
        let offsets = row_offsets(&lengths);
        let c = classify(&offsets);
        assert_eq!(c.warp_rows, vec![2, 3]);
        assert_eq!(c.long_rows, vec![6, 7]);
        let (o, l) = (offsets.as_slice(), c.tiles);
        assert_eq!(
            l.0,
            vec![
                o[4],
                o[5],
                o[6],
                o[6] + 4096,
                o[7],
                o[7] + 4096,
                o[7] + 8192
            ]
        );
        assert_eq!(l.1, vec![33, 4096, 4096, 1, 4096, 4096, 1808]);
    }
}
