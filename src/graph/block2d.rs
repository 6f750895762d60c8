//! Kernel 1 of the 2D partition (Buluç & Madduri 2011; Checconi et al. 2012): the adjacency
//! matrix cut into R × C blocks A(i, j), one per process (i, j) = rank i·C + j.
//!
//! Vertices keep the 1D layout: R·C blocks of `Block1D`, rank r owning block r (so parents
//! end at their 1D owners). Process row i's vertices are the C blocks of ranks i·C .. i·C+C-1
//! (one contiguous range), process column j's the R blocks of ranks j, C+j, 2C+j, ...
//! A(i, j) holds the directed entries (u, v) whose u lies in column j's vertices and v in row
//! i's: a top-down level gathers the frontier along the process column (the u side), finds
//! the v side in the block, and folds what it found along the process row to the owners.
//!
//! The block is kept twice in 32-bit local indices: by u (the top-down CSR) and by v (the
//! CSC a bottom-up level scans). Edges are streamed from the source and shuffled straight to
//! their block's rank, as the 1D build does, then sorted and de-duplicated there.

use super::csr::{entry_hash, stream_rounds, CHUNK};
use super::{Block1D, EdgeSource, Vid};
use crate::comm::{Op, Pair, PhaseTimes, World};
use crate::error::{Error, Result};
use rayon::prelude::*;

/// Where a vertex or an entry lives in an R × C grid over a 1D vertex partition.
#[derive(Clone, Copy, Debug)]
pub struct Layout2D {
    pub part: Block1D,
    pub rows: usize,
    pub cols: usize,
    /// This rank's process row and column.
    pub i: usize,
    pub j: usize,
}

impl Layout2D {
    pub fn new(part: Block1D, rows: usize, cols: usize) -> Self {
        Layout2D {
            part,
            rows,
            cols,
            i: part.rank / cols,
            j: part.rank % cols,
        }
    }

    /// The rank holding directed entry (u, v): the process row of v's owner, the process
    /// column of u's.
    #[inline]
    pub fn entry_rank(&self, u: Vid, v: Vid) -> usize {
        (self.part.owner(v) / self.cols) * self.cols + self.part.owner(u) % self.cols
    }

    /// Vertices (with padding) of this rank's process column and process row.
    pub fn col_len(&self) -> usize {
        self.rows * self.part.block as usize
    }
    pub fn row_len(&self) -> usize {
        self.cols * self.part.block as usize
    }

    /// Index of `u` (in this rank's process column) among the column's vertices.
    #[inline]
    pub fn col_index(&self, u: Vid) -> usize {
        let owner = self.part.owner(u);
        let block = self.part.block;
        (owner / self.cols) * block as usize + (u - owner as u64 * block) as usize
    }

    #[inline]
    pub fn col_vertex(&self, index: usize) -> Vid {
        let block = self.part.block as usize;
        ((index / block * self.cols + self.j) * block + index % block) as Vid
    }

    /// Index of `v` (in this rank's process row) among the row's vertices.
    #[inline]
    pub fn row_index(&self, v: Vid) -> usize {
        (v - self.row_first()) as usize
    }

    #[inline]
    pub fn row_vertex(&self, index: usize) -> Vid {
        self.row_first() + index as Vid
    }

    /// The first vertex of this rank's process row.
    pub fn row_first(&self) -> Vid {
        (self.i * self.cols) as Vid * self.part.block
    }
}

/// This rank's block A(i, j), by u and by v.
pub struct Block2D {
    pub layout: Layout2D,
    /// By column index of u (`col_len + 1` offsets): the row indices of its v.
    pub out_offsets: Vec<u64>,
    pub out_adj: Vec<u32>,
    /// By row index of v (`row_len + 1` offsets): the column indices of its u.
    pub in_offsets: Vec<u64>,
    pub in_adj: Vec<u32>,
    /// Directed entries over all blocks (equal to the 1D CSR's).
    pub num_entries: u64,
}

impl Block2D {
    /// Build the blocks (collective).
    pub fn build(
        world: &World,
        source: &(impl EdgeSource + ?Sized),
        layout: Layout2D,
        timers: &mut PhaseTimes,
    ) -> Result<Self> {
        let widest = layout.col_len().max(layout.row_len());
        if widest as u64 > 1 << 32 {
            return Err(Error::Unavailable(format!(
                "a process row or column of the 2D grid spans {widest} vertices, more than the 2^32 its 32-bit block indices hold: use more ranks or another grid"
            )));
        }
        let rounds = world.allreduce(source.local_len().div_ceil(CHUNK), Op::Max);
        // Each received entry packed as (column index of u) << 32 | (row index of v), so that
        // one sort orders the block by u, then v, and puts duplicates side by side.
        let mut entries: Vec<u64> = Vec::new();
        stream_rounds(
            world,
            source,
            rounds,
            timers,
            |&(u, v)| (u != v).then_some([Pair(u, v), Pair(v, u)]),
            |p: &Pair| layout.entry_rank(p.0, p.1),
            |received: Vec<Pair>| {
                entries.par_extend(received.par_iter().map(|&Pair(u, v)| {
                    ((layout.col_index(u) as u64) << 32) | layout.row_index(v) as u64
                }))
            },
        )?;
        timers.time("sort_dedup", || {
            entries.par_sort_unstable();
            entries.dedup();
        });
        let (out_offsets, out_adj, in_offsets, in_adj) =
            timers.time("index", || index_both_ways(&entries, &layout));
        let num_entries = world.allreduce(entries.len() as u64, Op::Sum);
        Ok(Block2D {
            layout,
            out_offsets,
            out_adj,
            in_offsets,
            in_adj,
            num_entries,
        })
    }

    /// The entries of column vertex `u` (row indices).
    #[inline]
    pub fn out_row(&self, u: usize) -> &[u32] {
        &self.out_adj[self.out_offsets[u] as usize..self.out_offsets[u + 1] as usize]
    }

    /// The entries of row vertex `v` (column indices).
    #[inline]
    pub fn in_row(&self, v: usize) -> &[u32] {
        &self.in_adj[self.in_offsets[v] as usize..self.in_offsets[v + 1] as usize]
    }

    /// This rank's block entries' share of the graph checksum (`DistGraph::checksum` adds
    /// the vertex terms): summed over ranks, it equals the 1D CSR's.
    pub fn entry_checksum(&self) -> u64 {
        let l = &self.layout;
        (0..l.col_len())
            .into_par_iter()
            .map(|u| {
                let uv = l.col_vertex(u);
                self.out_row(u)
                    .iter()
                    .map(|&v| entry_hash(uv, l.row_vertex(v as usize)))
                    .fold(0, u64::wrapping_add)
            })
            .reduce(|| 0, u64::wrapping_add)
    }

    /// Bytes of the block in both orientations.
    pub fn bytes(&self) -> u64 {
        (8 * (self.out_offsets.len() + self.in_offsets.len())
            + 4 * (self.out_adj.len() + self.in_adj.len())) as u64
    }
}

/// The sorted, unique packed entries as a CSR by u and a CSC by v (both in 32-bit indices).
fn index_both_ways(entries: &[u64], layout: &Layout2D) -> (Vec<u64>, Vec<u32>, Vec<u64>, Vec<u32>) {
    let (cols, rows) = (layout.col_len(), layout.row_len());
    let mut out_len = vec![0u64; cols];
    let mut in_len = vec![0u64; rows];
    for &e in entries {
        out_len[(e >> 32) as usize] += 1;
        in_len[(e as u32) as usize] += 1;
    }
    let out_offsets = super::csr::row_offsets(&out_len);
    let in_offsets = super::csr::row_offsets(&in_len);
    let out_adj: Vec<u32> = entries.par_iter().map(|&e| e as u32).collect();
    // Entries come sorted by u, so each v's sources land in ascending order.
    let mut in_adj = vec![0u32; entries.len()];
    let mut cursor = in_offsets[..rows].to_vec();
    for &e in entries {
        let v = (e as u32) as usize;
        in_adj[cursor[v] as usize] = (e >> 32) as u32;
        cursor[v] += 1;
    }
    (out_offsets, out_adj, in_offsets, in_adj)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every vertex's column and row indices map back to it, and every entry goes to the
    /// rank whose column holds its source and whose row holds its target.
    #[test]
    fn layout_indices_round_trip_for_every_grid() {
        let n = 1000u64;
        for (rows, cols) in [(1, 1), (1, 3), (3, 1), (2, 2), (2, 3), (3, 2)] {
            let ranks = rows * cols;
            let layouts: Vec<Layout2D> = (0..ranks)
                .map(|r| Layout2D::new(Block1D::new(n, ranks, r), rows, cols))
                .collect();
            for v in 0..n {
                let owner = layouts[0].part.owner(v);
                for l in &layouts {
                    if owner % cols == l.j {
                        assert_eq!(l.col_vertex(l.col_index(v)), v, "{rows}x{cols} col {v}");
                        assert!(l.col_index(v) < l.col_len());
                    }
                    if owner / cols == l.i {
                        assert_eq!(l.row_vertex(l.row_index(v)), v, "{rows}x{cols} row {v}");
                        assert!(l.row_index(v) < l.row_len());
                    }
                }
            }
            for (u, v) in [(0, n - 1), (n - 1, 0), (17, 600), (999, 998)] {
                let at = &layouts[layouts[0].entry_rank(u, v)];
                assert_eq!(at.part.owner(u) % cols, at.j, "{rows}x{cols} ({u}, {v})");
                assert_eq!(at.part.owner(v) / cols, at.i, "{rows}x{cols} ({u}, {v})");
            }
        }
    }
}
