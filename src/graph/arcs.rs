//! Arc graphs: the 1D-partitioned CSR of a directed multigraph, out-rows and in-rows, with
//! an integer weight per arc where the source has them (SSCA#2's kernel 1). An undirected
//! source gives both arcs of each tuple, and then the in-rows are the out-rows (kept once).
//! Self-loops are dropped; parallel arcs are kept as distinct arcs (SSCA#2 counts them as
//! distinct paths) or merged into one. Rows are sorted by (neighbour, weight), so every rank
//! count gives the same rows and every scan in row order the same result. Neighbours and
//! weights are held in 32 bits (`partition` refuses larger graphs): half the host pages of
//! 64-bit entries, which kernel 1 on the GPU writes as it downloads the rows.
//!
//! `DistGraph` (`csr`) is the simple undirected graph of BFS and the analyses; this is the
//! form of the centrality and the SSCA#2 kernels.

use super::csr::CHUNK;
use super::{Block1D, Edge, EdgeSource, Vid};
use crate::comm::{bucket_by_rank, Op, Triple, World};
use crate::error::{Error, Result};
use rayon::prelude::*;

/// One direction's rows of the rank's vertices.
#[derive(Clone, Debug, Default)]
pub struct Rows {
    /// `local_n + 1` offsets into `adj`.
    pub offsets: Vec<u64>,
    /// Neighbours (global ids), each row sorted by (neighbour, weight).
    pub adj: Vec<u32>,
    /// The weight of each entry of `adj` (empty for an unweighted graph).
    pub weights: Vec<u32>,
}

impl Rows {
    #[inline]
    pub fn row(&self, local: usize) -> &[u32] {
        &self.adj[self.offsets[local] as usize..self.offsets[local + 1] as usize]
    }

    #[inline]
    pub fn row_weights(&self, local: usize) -> &[u32] {
        &self.weights[self.offsets[local] as usize..self.offsets[local + 1] as usize]
    }

    #[inline]
    pub fn degree(&self, local: usize) -> u64 {
        self.offsets[local + 1] - self.offsets[local]
    }

    /// Rows from (row, neighbour, weight) triples of this rank's vertices, in any order.
    fn from_triples(part: &Block1D, mut arcs: Vec<Triple>, merge: bool, weighted: bool) -> Rows {
        arcs.par_sort_unstable_by_key(|t| (t.0, t.1, t.2));
        if merge {
            arcs.dedup_by_key(|t| (t.0, t.1));
        }
        let mut lengths = vec![0u64; part.local_n()];
        for t in &arcs {
            lengths[part.local(t.0)] += 1;
        }
        Rows {
            offsets: super::csr::row_offsets(&lengths),
            // `partition` bounds the ids, and the weights (the SSCA#2 generator's, at most
            // its vertex count) with them.
            adj: arcs.par_iter().map(|t| t.1 as u32).collect(),
            weights: if weighted {
                let narrow = |w: u64| u32::try_from(w).expect("arc weights fit in 32 bits");
                arcs.par_iter().map(|t| narrow(t.2)).collect()
            } else {
                Vec::new()
            },
        }
    }

    /// Only the entries whose weight `keep` accepts, without weights.
    fn filtered(&self, keep: &(impl Fn(u64) -> bool + Sync)) -> Rows {
        let (offsets, adj) = self.kept(Some(keep), |v| v as u32);
        Rows {
            offsets,
            adj,
            weights: Vec::new(),
        }
    }

    /// The rows' offsets and entries, each neighbour as `column` writes it, of only the
    /// entries whose weight `keep` accepts (every entry where `keep` is None). Blocks of
    /// rows fill their own parts of the new rows in parallel (a parallel collect of the kept
    /// entries took 2.5 s of SSCA#2 SCALE 24's kernel 4 on 64 cores).
    pub fn kept<T: Copy + Default + Send>(
        &self,
        keep: Option<&(dyn Fn(u64) -> bool + Sync)>,
        column: impl Fn(Vid) -> T + Sync,
    ) -> (Vec<u64>, Vec<T>) {
        let Some(keep) = keep else {
            return (
                self.offsets.clone(),
                self.adj.par_iter().map(|&v| column(Vid::from(v))).collect(),
            );
        };
        const BLOCK: usize = 4096;
        let rows = self.offsets.len() - 1;
        let kept = |l: usize| {
            let entries = self.row(l).iter().zip(self.row_weights(l));
            entries
                .filter(|(_, &w)| keep(u64::from(w)))
                .map(|(&v, _)| Vid::from(v))
        };
        let lengths: Vec<u64> = (0..rows)
            .into_par_iter()
            .map(|l| kept(l).count() as u64)
            .collect();
        let offsets = super::csr::row_offsets(&lengths);
        let mut adj = vec![T::default(); offsets[rows] as usize];
        let mut blocks = Vec::with_capacity(rows.div_ceil(BLOCK));
        let mut rest = adj.as_mut_slice();
        for start in (0..rows).step_by(BLOCK) {
            let end = (start + BLOCK).min(rows);
            let length = (offsets[end] - offsets[start]) as usize;
            let (block, tail) = std::mem::take(&mut rest).split_at_mut(length);
            blocks.push((start..end, block));
            rest = tail;
        }
        blocks.into_par_iter().for_each(|(block, out)| {
            for (slot, v) in out.iter_mut().zip(block.flat_map(kept)) {
                *slot = column(v);
            }
        });
        (offsets, adj)
    }

    /// Every rank's rows, concatenated in rank (that is vertex) order (collective).
    fn gathered(&self, world: &World) -> Result<Rows> {
        let lengths: Vec<u64> = self.offsets.windows(2).map(|w| w[1] - w[0]).collect();
        Ok(Rows {
            offsets: super::csr::row_offsets(&world.allgatherv(&lengths)?),
            adj: world.allgatherv(&self.adj)?,
            weights: world.allgatherv(&self.weights)?,
        })
    }
}

/// How tuples become arcs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArcOptions {
    /// Each tuple (u, v) is the one arc u -> v; else both arcs.
    pub directed: bool,
    /// Parallel arcs merged into one (the lowest weight kept); else each kept.
    pub merge_parallel: bool,
}

/// The rank's part of an arc graph.
pub struct ArcGraph {
    pub part: Block1D,
    pub out: Rows,
    /// In-rows; None where they equal the out-rows (an undirected source).
    inc: Option<Rows>,
    pub options: ArcOptions,
    /// True when each arc has a weight (`Rows::weights`).
    pub weighted: bool,
    /// Input edge tuples over all ranks.
    pub num_input_edges: u64,
    /// Arcs over all ranks.
    pub num_arcs: u64,
    /// Self-loops dropped over all ranks.
    pub loops_dropped: u64,
}

impl ArcGraph {
    pub fn n(&self) -> u64 {
        self.part.n
    }

    pub fn local_n(&self) -> usize {
        self.part.local_n()
    }

    /// The in-rows (the out-rows of an undirected graph).
    pub fn inc(&self) -> &Rows {
        self.inc.as_ref().unwrap_or(&self.out)
    }

    /// True when the in-rows are the out-rows.
    pub fn symmetric(&self) -> bool {
        self.inc.is_none()
    }

    /// Build the arc graph of `source` (collective): tuples streamed in bounded chunks,
    /// each arc sent with its weight to the owner of its tail (out-rows) and of its head
    /// (in-rows), then the rows sorted.
    pub fn build(world: &World, source: &dyn EdgeSource, options: ArcOptions) -> Result<Self> {
        let part = partition(world, source)?;
        let weighted = source.is_weighted();
        let rounds = world.allreduce(source.local_len().div_ceil(CHUNK), Op::Max);
        let (mut out, mut inc) = (Vec::new(), Vec::new());
        let (mut edges, mut weights) = (Vec::new(), Vec::new());
        let mut loops = 0u64;
        for round in 0..rounds {
            let start = (round * CHUNK).min(source.local_len());
            let len = CHUNK.min(source.local_len() - start);
            edges.clear();
            weights.clear();
            source.local_chunk(start, len, &mut edges);
            source.local_weights(start, len, &mut weights);
            loops += edges.iter().filter(|(u, v)| u == v).count() as u64;
            let arcs = tuple_arcs(&edges, &weights);
            let reversed: Vec<Triple> = arcs.par_iter().map(|t| Triple(t.1, t.0, t.2)).collect();
            out.extend(exchange(world, &part, arcs)?);
            let backward = if options.directed { &mut inc } else { &mut out };
            backward.extend(exchange(world, &part, reversed)?);
        }
        let merge = options.merge_parallel;
        let out = Rows::from_triples(&part, out, merge, weighted);
        let inc = options
            .directed
            .then(|| Rows::from_triples(&part, inc, merge, weighted));
        let rows = (part, out, inc);
        Ok(Self::from_rows(world, rows, options, source, loops))
    }

    /// The graph of the rank's rows (in-rows only where directed) of `source`'s arcs built
    /// as `options` says, `loops` of its self-loops dropped by this rank (collective).
    pub(super) fn from_rows(
        world: &World,
        (part, out, inc): (Block1D, Rows, Option<Rows>),
        options: ArcOptions,
        source: &dyn EdgeSource,
        loops: u64,
    ) -> ArcGraph {
        let num_arcs = world.allreduce(out.adj.len() as u64, Op::Sum);
        ArcGraph {
            part,
            out,
            inc,
            options,
            weighted: source.is_weighted(),
            num_input_edges: source.num_edges(),
            num_arcs,
            loops_dropped: world.allreduce(loops, Op::Sum),
        }
    }

    /// The whole graph on every rank, as a one-rank partition (collective): the spec's
    /// `replicate = full`.
    pub fn replicate(&self, world: &World) -> Result<ArcGraph> {
        let inc = match &self.inc {
            Some(rows) => Some(rows.gathered(world)?),
            None => None,
        };
        Ok(ArcGraph {
            part: Block1D::new(self.n(), 1, 0),
            out: self.out.gathered(world)?,
            inc,
            options: self.options,
            weighted: self.weighted,
            num_input_edges: self.num_input_edges,
            num_arcs: self.num_arcs,
            loops_dropped: self.loops_dropped,
        })
    }

    /// The arcs whose weight `keep` accepts, unweighted (collective: the arc count).
    pub fn filtered(&self, world: &World, keep: impl Fn(u64) -> bool + Sync) -> ArcGraph {
        let out = self.out.filtered(&keep);
        let inc = self.inc.as_ref().map(|rows| rows.filtered(&keep));
        ArcGraph {
            part: self.part,
            num_arcs: world.allreduce(out.adj.len() as u64, Op::Sum),
            out,
            inc,
            options: self.options,
            weighted: false,
            num_input_edges: self.num_input_edges,
            loops_dropped: self.loops_dropped,
        }
    }

    /// Bytes of this rank's rows.
    pub fn bytes(&self) -> u64 {
        let rows =
            |r: &Rows| 8 * r.offsets.len() as u64 + 4 * (r.adj.len() + r.weights.len()) as u64;
        rows(&self.out) + self.inc.as_ref().map_or(0, rows)
    }
}

/// The rank's part of the vertices of an arc graph of `source`, refused where their ids do
/// not fit the rows' 32 bits.
pub(super) fn partition(world: &World, source: &dyn EdgeSource) -> Result<Block1D> {
    let n = source.num_vertices();
    if n > u32::MAX as u64 {
        return Err(Error::Unavailable(format!(
            "arc graphs (bc, ssca2) hold vertex ids in 32 bits, and this graph has {n} vertices: at most {} can be held",
            u32::MAX
        )));
    }
    Ok(Block1D::new(n, world.size(), world.rank()))
}

/// The arcs u -> v of the tuples, self-loops dropped, with their weights (0 where none).
fn tuple_arcs(edges: &[Edge], weights: &[u64]) -> Vec<Triple> {
    edges
        .par_iter()
        .enumerate()
        .filter(|(_, (u, v))| u != v)
        .map(|(i, &(u, v))| Triple(u, v, weights.get(i).copied().unwrap_or(0)))
        .collect()
}

/// Each arc to the owner of its first id (collective).
fn exchange(world: &World, part: &Block1D, arcs: Vec<Triple>) -> Result<Vec<Triple>> {
    if world.size() == 1 {
        return Ok(arcs);
    }
    let (send, counts) = bucket_by_rank(world.size(), &arcs, |t| part.owner(t.0));
    drop(arcs);
    world.alltoallv(&send, &counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filtered_rows_keep_the_accepted_entries_in_order_across_blocks() {
        // 10,000 rows (three blocks of the parallel fill), row r of r % 7 entries.
        let lengths: Vec<u64> = (0..10_000u64).map(|r| r % 7).collect();
        let offsets = crate::graph::csr::row_offsets(&lengths);
        let total = offsets[lengths.len()] as usize;
        let rows = Rows {
            offsets,
            adj: (0..total as u32).map(|e| e * 3 + 1).collect(),
            weights: (0..total as u32).map(|e| e % 5).collect(),
        };
        let keep = |w: u64| !w.is_multiple_of(5);
        let got = rows.filtered(&keep);
        for r in 0..lengths.len() {
            let want: Vec<u32> = rows
                .row(r)
                .iter()
                .zip(rows.row_weights(r))
                .filter(|(_, &w)| keep(u64::from(w)))
                .map(|(&v, _)| v)
                .collect();
            assert_eq!(got.row(r), &want[..], "row {r}");
        }
        assert!(got.weights.is_empty());
    }
}
