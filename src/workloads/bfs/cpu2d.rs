//! The CPU side of the 2D-partitioned BFS (`search::Frontiers` over the blocks A(i, j) of
//! `graph::block2d`): rayon over the block, MPI along the grid's rows and columns.
//!
//! - top-down level (Buluç & Madduri 2011): expand = allgather of the frontier queues along
//!   the process column; scan the block's rows of those vertices; fold = all-to-all of the
//!   (vertex, parent) pairs found along the process row to the vertices' owners, who claim
//!   them. A rank sends each vertex of its row at most once per search (the `sent` bitmap),
//!   which bounds the fold by the row's vertices.
//! - bottom-up level (Beamer, Asanović & Patterson, "Distributed memory breadth-first search
//!   revisited", IPDPSW 2013): expand = allgather of the frontier bitmaps along the column;
//!   the owners' bitmaps of unvisited vertices then travel round the process row in C
//!   sub-steps, each rank scanning its block's in-edges of the segment it holds and clearing
//!   the vertices it finds a parent for, so a vertex found by one rank is not searched by the
//!   next. The (vertex, parent) pairs found go to the owners in one fold, as top-down's do.

use super::cpu::{
    as_atomic, claim, frontier_size, into_bits, into_queue, set_bits, Depths, Frontier,
};
use super::search::{Frontiers, LevelClock};
use crate::comm::{bucket_by_rank, Comm, Grid, Pair};
use crate::error::Result;
use crate::graph::block2d::Block2D;
use crate::graph::{DistGraph, Vid};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

pub struct Cpu2dFrontiers<'g> {
    /// The 1D graph: the full degrees of the owned vertices (a frontier's edge count).
    g: &'g DistGraph,
    blocks: &'g Block2D,
    grid: &'g Grid,
    parent: Vec<i64>,
    depths: Depths,
    current: Frontier,
    next: Frontier,
    /// Vertices of the process row this rank has sent to their owners in this search.
    sent: Vec<AtomicU64>,
}

impl<'g> Cpu2dFrontiers<'g> {
    pub fn new(g: &'g DistGraph, blocks: &'g Block2D, grid: &'g Grid) -> Self {
        Cpu2dFrontiers {
            g,
            blocks,
            grid,
            parent: vec![-1; g.local_n()],
            depths: Depths::new(g.local_n()),
            current: Frontier::Queue(Vec::new()),
            next: Frontier::Queue(Vec::new()),
            sent: (0..blocks.layout.row_len() / 64)
                .map(|_| AtomicU64::new(0))
                .collect(),
        }
    }

    fn take_current(&mut self) -> Frontier {
        std::mem::replace(&mut self.current, Frontier::Queue(Vec::new()))
    }

    /// Top-down scan of the column's frontier over the block: the (vertex, parent) pairs of
    /// row vertices not sent before, and the entries read.
    fn scan_frontier(&self, frontier: &[Vid]) -> (Vec<Pair>, u64) {
        let (l, sent) = (&self.blocks.layout, &self.sent);
        let found = frontier
            .par_iter()
            .fold(Vec::new, |mut found, &u| {
                for &v in self.blocks.out_row(l.col_index(u)) {
                    if first_mark(sent, v as usize) {
                        found.push(Pair(l.row_vertex(v as usize), u));
                    }
                }
                found
            })
            .reduce(Vec::new, |mut a, b| {
                a.extend_from_slice(&b);
                a
            });
        let inspected = frontier
            .par_iter()
            .map(|&u| self.blocks.out_row(l.col_index(u)).len() as u64)
            .sum();
        (found, inspected)
    }

    /// Send each pair to its vertex's owner in the process row; return the pairs received.
    fn fold(&self, found: Vec<Pair>, clock: &mut LevelClock) -> Result<Vec<Pair>> {
        let row = &self.grid.row;
        if row.size() == 1 {
            return Ok(found);
        }
        let (part, cols) = (self.g.part, self.grid.cols);
        let (send, counts) =
            clock.local(|| bucket_by_rank(cols, &found, |p| part.owner(p.0) % cols));
        drop(found);
        let (received, from) = clock.exchange(|| row.alltoallv_counted(&send, &counts))?;
        let pair = size_of::<Pair>();
        clock.bytes_sent += ((send.len() - counts[row.rank()]) * pair) as u64;
        clock.bytes_received += ((received.len() - from[row.rank()]) * pair) as u64;
        Ok(received)
    }

    /// Claim received pairs of own vertices into the next frontier.
    fn claim_received(&mut self, received: &[Pair]) {
        let part = self.g.part;
        let parent = as_atomic(&mut self.parent);
        let claimed = received
            .par_iter()
            .filter(|&&Pair(v, p)| claim(parent, part.local(v), p))
            .map(|&Pair(v, _)| part.local(v) as u32)
            .collect();
        self.next = Frontier::Queue(claimed);
    }

    /// One bottom-up sub-step on segment `k` of the process row (rank (i, k)'s vertices):
    /// each unvisited vertex in `segment` looks for a neighbour in the column's `frontier`;
    /// found ones leave `segment` and join `found`. Returns the entries read.
    fn scan_segment(
        &self,
        k: usize,
        frontier: &[u64],
        segment: &mut [u64],
        found: &mut Vec<Pair>,
    ) -> u64 {
        let l = &self.blocks.layout;
        let first = k * l.part.block as usize;
        let (pairs, inspected) = segment
            .par_iter_mut()
            .enumerate()
            .fold(
                || (Vec::new(), 0u64),
                |(mut pairs, mut inspected), (w, word)| {
                    for b in set_bits(*word) {
                        let v = first + w * 64 + b;
                        for &u in self.blocks.in_row(v) {
                            inspected += 1;
                            if frontier[u as usize / 64] >> (u % 64) & 1 == 1 {
                                pairs.push(Pair(l.row_vertex(v), l.col_vertex(u as usize)));
                                *word &= !(1 << b);
                                break;
                            }
                        }
                    }
                    (pairs, inspected)
                },
            )
            .reduce(
                || (Vec::new(), 0),
                |(mut a, n), (b, m)| {
                    a.extend_from_slice(&b);
                    (a, n + m)
                },
            );
        found.extend_from_slice(&pairs);
        inspected
    }

    /// Bitmap of the own vertices without a parent yet.
    fn unvisited(&self) -> Vec<u64> {
        let mut bits = vec![0u64; self.g.part.words_per_rank()];
        bits.par_iter_mut()
            .zip(self.parent.par_chunks(64))
            .for_each(|(word, parents)| {
                for (b, &p) in parents.iter().enumerate() {
                    *word |= u64::from(p < 0) << b;
                }
            });
        bits
    }

    /// The found pairs (of own vertices, each once) as parents and the next frontier.
    fn adopt(&mut self, found: &[Pair]) {
        let part = self.g.part;
        let mut next = vec![0u64; part.words_per_rank()];
        for &Pair(v, u) in found {
            let l = part.local(v);
            self.parent[l] = u as i64;
            next[l / 64] |= 1 << (l % 64);
        }
        self.next = Frontier::Bits(next);
    }
}

impl Frontiers for Cpu2dFrontiers<'_> {
    fn start(&mut self, root: Vid) -> Result<u64> {
        let part = self.g.part;
        self.parent.par_iter_mut().for_each(|p| *p = -1);
        self.sent.par_iter().for_each(|w| w.store(0, Relaxed));
        self.current = Frontier::Queue(Vec::new());
        self.next = Frontier::Queue(Vec::new());
        let root_local = part.is_local(root).then(|| part.local(root));
        self.depths.start(root_local);
        let Some(l) = root_local else {
            return Ok(0);
        };
        self.parent[l] = root as i64;
        self.current = Frontier::Queue(vec![l as u32]);
        Ok(self.g.degree(l))
    }

    fn top_down(&mut self, clock: &mut LevelClock) -> Result<u64> {
        let part = self.g.part;
        let queue = clock.local(|| into_queue(self.take_current()));
        let mine: Vec<Vid> = queue.iter().map(|&l| part.global(l as usize)).collect();
        let frontier = expand(&self.grid.col, mine, clock, |col, mine| {
            col.allgatherv(mine)
        })?;
        let (found, inspected) = clock.local(|| self.scan_frontier(&frontier));
        drop(frontier);
        let received = self.fold(found, clock)?;
        clock.local(|| self.claim_received(&received));
        Ok(inspected)
    }

    fn bottom_up(&mut self, clock: &mut LevelClock) -> Result<u64> {
        let words = self.g.part.words_per_rank();
        let own = clock.local(|| into_bits(self.take_current(), words));
        let frontier = expand(&self.grid.col, own, clock, |col, own| {
            let mut all = vec![0u64; words * col.size()];
            col.allgather_into(own, &mut all);
            Ok(all)
        })?;
        let (row, cols, j) = (&self.grid.row, self.grid.cols, self.grid.j);
        let mut segment = clock.local(|| self.unvisited());
        let mut found = Vec::new();
        let mut inspected = 0;
        for step in 0..cols {
            let k = (j + step) % cols;
            inspected += clock.local(|| self.scan_segment(k, &frontier, &mut segment, &mut found));
            if cols > 1 {
                // Hand the segment on to (i, j - 1), which scans it next; the last hand-over
                // brings each segment home to its owner (where it is no longer needed).
                let mut got = vec![0u64; words];
                let to = (j + cols - 1) % cols;
                clock.exchange(|| row.sendrecv(&segment, to, &mut got, (j + 1) % cols));
                clock.bytes_sent += 8 * words as u64;
                clock.bytes_received += 8 * words as u64;
                segment = got;
            }
        }
        let received = self.fold(found, clock)?;
        clock.local(|| self.adopt(&received));
        Ok(inspected)
    }

    fn advance(&mut self) -> Result<(u64, u64)> {
        self.current = std::mem::replace(&mut self.next, Frontier::Queue(Vec::new()));
        self.depths.advance(&self.current);
        Ok(frontier_size(self.g, &self.current))
    }

    fn parents(&mut self, out: &mut [i64]) -> Result<()> {
        out.copy_from_slice(&self.parent);
        Ok(())
    }

    fn depths(&mut self, out: &mut [i32]) -> Result<()> {
        out.copy_from_slice(&self.depths.depth);
        Ok(())
    }

    fn set_parent(&mut self, l: usize, p: i64) -> Result<()> {
        self.parent[l] = p;
        Ok(())
    }

    fn transport(&self) -> &'static str {
        if self.grid.rows * self.grid.cols == 1 {
            "none"
        } else {
            "mpi"
        }
    }
}

/// The expand of a level: `gather` this rank's part of the frontier along the process
/// column, counting the bytes that cross between ranks (nothing to gather in a column of one).
fn expand<T: Copy>(
    col: &Comm,
    mine: Vec<T>,
    clock: &mut LevelClock,
    gather: impl FnOnce(&Comm, &[T]) -> Result<Vec<T>>,
) -> Result<Vec<T>> {
    if col.size() == 1 {
        return Ok(mine);
    }
    let all = clock.exchange(|| gather(col, &mine))?;
    let item = size_of::<T>() as u64;
    clock.bytes_sent += item * mine.len() as u64 * (col.size() as u64 - 1);
    clock.bytes_received += item * (all.len() - mine.len()) as u64;
    Ok(all)
}

/// Set bit `i` of `bits`; true when this call set it.
fn first_mark(bits: &[AtomicU64], i: usize) -> bool {
    let (word, bit) = (&bits[i / 64], 1u64 << (i % 64));
    word.load(Relaxed) & bit == 0 && word.fetch_or(bit, Relaxed) & bit == 0
}
