//! The long rows of a view's rows on the GPU, cut into pieces of `CHUNK` entries (see
//! `super::CHUNK`): the rows longer than `CHUNK` (ascending), each one's first piece, and per
//! piece its row and its rank in the row. A hub's row, read by one warp, held up a whole level
//! (backward level 1 of Kronecker SCALE 26, 3,363 vertices: 267 ms on an H200, 11 ms in
//! pieces; docs/benchmarks.md); its pieces go to as many warps, and `bc_combine` adds their
//! sums in piece order.

use super::view::LocalRows;
use super::CHUNK;
use crate::device::Gpu;
use crate::error::Result;
use cudarc::driver::CudaSlice;
use rayon::prelude::*;

/// The pieces of one direction's long rows, on the host.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Pieces {
    /// The long rows' vertices (value indices), ascending.
    pub rows: Vec<u32>,
    /// Per long row its first piece, and the piece count at the end.
    pub first: Vec<u32>,
    /// Per piece, its row's vertex and its rank in that row.
    pub row_of: Vec<u32>,
    pub rank: Vec<u32>,
}

impl Pieces {
    /// The pieces of the rows of vertices 0..n longer than `CHUNK`.
    pub fn of(rows: &LocalRows, n: usize) -> Pieces {
        let len = |v: usize| (rows.offsets[v + 1] - rows.offsets[v]) as usize;
        let long: Vec<u32> = (0..n)
            .into_par_iter()
            .filter(|&v| len(v) > CHUNK)
            .map(|v| v as u32)
            .collect();
        let mut pieces = Pieces {
            first: Vec::with_capacity(long.len() + 1),
            ..Pieces::default()
        };
        for &v in &long {
            pieces.first.push(pieces.row_of.len() as u32);
            for r in 0..len(v as usize).div_ceil(CHUNK) {
                pieces.row_of.push(v);
                pieces.rank.push(r as u32);
            }
        }
        pieces.first.push(pieces.row_of.len() as u32);
        pieces.rows = long;
        pieces
    }

    /// Pieces in all.
    pub fn count(&self) -> usize {
        self.row_of.len()
    }
}

/// Pieces of the rows of vertices 0..n longer than `CHUNK`, counted without listing them.
pub fn count(rows: &LocalRows, n: usize) -> u64 {
    (0..n)
        .into_par_iter()
        .map(|v| (rows.offsets[v + 1] - rows.offsets[v]) as usize)
        .filter(|&len| len > CHUNK)
        .map(|len| len.div_ceil(CHUNK) as u64)
        .sum()
}

/// `Pieces` on the GPU.
pub struct DevicePieces {
    pub rows: CudaSlice<u32>,
    pub first: CudaSlice<u32>,
    pub row_of: CudaSlice<u32>,
    pub rank: CudaSlice<u32>,
    /// Long rows.
    pub long: u32,
    /// Pieces.
    pub count: u32,
}

impl DevicePieces {
    pub fn upload(gpu: &Gpu, rows: &LocalRows, n: usize) -> Result<DevicePieces> {
        let p = Pieces::of(rows, n);
        let arcs = rows.offsets[n] - rows.offsets[0];
        let long_arcs: u64 = p
            .rows
            .iter()
            .map(|&v| rows.offsets[v as usize + 1] - rows.offsets[v as usize])
            .sum();
        log::info!(
            "betweenness: {} rows longer than {CHUNK} arcs hold {long_arcs} of {arcs} arcs, in {} pieces",
            p.rows.len(),
            p.count()
        );
        Ok(DevicePieces {
            rows: gpu.upload("betweenness long rows", &p.rows)?,
            first: gpu.upload("betweenness long rows' pieces", &p.first)?,
            row_of: gpu.upload("betweenness pieces' rows", &p.row_of)?,
            rank: gpu.upload("betweenness pieces' ranks", &p.rank)?,
            long: p.rows.len() as u32,
            count: p.count() as u32,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_longer_than_a_chunk_are_cut_from_their_start() {
        // Rows of 0, CHUNK, CHUNK + 1, 3 CHUNK and 5 entries.
        let lens = [0, CHUNK, CHUNK + 1, 3 * CHUNK, 5];
        let mut offsets = vec![0u64];
        for len in lens {
            offsets.push(offsets.last().unwrap() + len as u64);
        }
        let total = *offsets.last().unwrap() as usize;
        let rows = LocalRows {
            offsets,
            adj: vec![0; total],
        };
        let p = Pieces::of(&rows, lens.len());
        assert_eq!(p.rows, [2, 3]);
        assert_eq!(p.first, [0, 2, 5]);
        assert_eq!(p.row_of, [2, 2, 3, 3, 3]);
        assert_eq!(p.rank, [0, 1, 0, 1, 2]);
        assert_eq!(count(&rows, lens.len()), 5);
        // Only the first n vertices' rows (a partitioned view's own vertices).
        assert_eq!(Pieces::of(&rows, 3).rows, [2]);
    }
}
