//! Graphs: where edges come from (generators, file readers), how vertices are split
//! between ranks, and the distributed CSR built from them.

pub mod arcs;
pub mod arcs_gpu;
pub mod betweenness;
pub mod block2d;
pub mod block2d_gpu;
pub mod build;
pub mod components;
pub mod csr;
pub mod csr_gpu;
pub mod csr_sort;
pub mod generators;
pub mod ghosts;
pub mod ghosts_gpu;
pub mod kronecker;
pub mod readers;
pub mod roots;
pub mod scan_gpu;
pub mod source;
pub mod writers;

pub use csr::DistGraph;

use strength_reduce::StrengthReducedU64;

/// A global vertex id (Graph500 needs at least 48 bits).
pub type Vid = u64;

/// An undirected input edge tuple, as generated or read (self-loops and duplicates kept).
pub type Edge = (Vid, Vid);

/// Where the edge tuples of a graph come from. Each rank sees its own contiguous range of
/// the global edge list and can produce any slice of that range on demand, so kernel 1 can
/// stream the edges in bounded chunks (twice) instead of holding the whole list.
pub trait EdgeSource: Sync {
    /// Number of vertices N (ids are 0..N).
    fn num_vertices(&self) -> u64;
    /// Number of input edge tuples M over all ranks (duplicates and self-loops counted).
    fn num_edges(&self) -> u64;
    /// Number of edge tuples in this rank's range.
    fn local_len(&self) -> u64;
    /// Append this rank's edges `start .. start + len` (relative to its range) to `out`.
    fn local_chunk(&self, start: u64, len: u64, out: &mut Vec<Edge>);
    /// How a GPU generates this rank's edges, for generators that have a GPU edge function.
    fn device_edges(&self) -> Option<DeviceEdges> {
        None
    }
    /// `edges.params` on `gpu`, as the edge function reads them: uploaded, unless the
    /// generator makes them there (None where it finds that it cannot).
    fn device_params(
        &self,
        gpu: &crate::device::Gpu,
        edges: &DeviceEdges,
    ) -> crate::error::Result<Option<cudarc::driver::CudaSlice<u64>>> {
        gpu.upload("generator constants", &edges.params).map(Some)
    }
    /// True when each tuple (u, v) is an arc u -> v (SSCA#2); BFS and the analyses treat
    /// every graph as undirected.
    fn is_directed(&self) -> bool {
        false
    }
    /// Append the integer weights of this rank's edges `start .. start + len`, in the order
    /// of `local_chunk`; sources of unweighted graphs append nothing.
    fn local_weights(&self, _start: u64, _len: u64, _out: &mut Vec<u64>) {}
    /// True when `local_weights` gives a weight per edge.
    fn is_weighted(&self) -> bool {
        false
    }
    /// How a GPU makes the weights (`local_weights`), for weighted generators that can.
    fn device_weights(&self) -> Option<DeviceWeights> {
        None
    }
}

/// A generator as kernels/generators.cu runs it: its kernels `{kernel}_messages` and
/// `{kernel}_checksum` read `params` (laid out as that file states above the generator's
/// edge function) and make edge e of the global list, as the generator's `EdgeSource` does,
/// for this rank's edges `first_edge ..` (`local_len` of them). Where the generator makes
/// them on the GPU (`EdgeSource::device_params`), `params` is what it makes them from.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceEdges {
    pub kernel: &'static str,
    pub params: Vec<u64>,
    pub first_edge: u64,
}

/// `DeviceEdges` with its parameters on the GPU, as the edge function reads them.
pub struct GpuEdges {
    pub kernel: &'static str,
    pub params: cudarc::driver::CudaSlice<u64>,
    pub first_edge: u64,
}

/// Weights a GPU makes (kernels/generators.cu `arcs_fill`): edge e's is
/// 1 + below(draw(key, e), range), uniform in [1, range].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceWeights {
    pub key: u64,
    pub range: u64,
}

/// Edge lists, files and vertex blocks are split between ranks as index ranges are.
pub use crate::comm::ranges::block_range;

/// 1D vertex partition: rank r owns the vertices `r*block .. (r+1)*block` (clipped to N).
/// The block is a multiple of 64 so that the ranks' frontier bitmaps concatenate word by word.
#[derive(Clone, Copy, Debug)]
pub struct Block1D {
    pub n: u64,
    pub block: u64,
    pub rank: usize,
    pub size: usize,
    /// `block` as a multiply-and-shift divisor: `owner` runs once per edge in every phase.
    divisor: StrengthReducedU64,
    first: u64,
    local_n: u64,
}

impl Block1D {
    pub fn new(n: u64, size: usize, rank: usize) -> Self {
        let per = n.div_ceil(size as u64).max(1);
        let block = per.div_ceil(64) * 64;
        let first = (rank as u64 * block).min(n);
        let local_n = ((rank as u64 + 1) * block).min(n) - first;
        Block1D {
            n,
            block,
            rank,
            size,
            divisor: StrengthReducedU64::new(block),
            first,
            local_n,
        }
    }

    #[inline]
    pub fn owner(&self, v: Vid) -> usize {
        (v / self.divisor) as usize
    }

    #[inline]
    pub fn first(&self) -> u64 {
        self.first
    }

    /// Number of vertices this rank owns (zero is possible when N is small).
    #[inline]
    pub fn local_n(&self) -> usize {
        self.local_n as usize
    }

    #[inline]
    pub fn local(&self, v: Vid) -> usize {
        (v - self.first) as usize
    }

    #[inline]
    pub fn global(&self, local: usize) -> Vid {
        self.first + local as u64
    }

    #[inline]
    pub fn is_local(&self, v: Vid) -> bool {
        v.wrapping_sub(self.first) < self.local_n
    }

    /// Words of a per-rank bitmap (the same for every rank).
    pub fn words_per_rank(&self) -> usize {
        (self.block / 64) as usize
    }
}
