//! Triangle counting on a GPU (kernels/triangles.cu), the twin of `triangles::count_range`:
//! the same degree-oriented graph (`triangles::orient`, made on the host) and the same vertex
//! range per rank (`triangles::rank_vertices`), so every count equals the CPU's exactly.
//!
//! The oriented rows go to the GPU once, as a `DeviceCsr` of 32-bit ids. The rank's vertices
//! are binned by out-degree as in TRUST (Pandey et al., 2021): a warp per vertex below
//! `BLOCK_DEGREE`, intersecting sorted rows by binary search; a block per vertex from there
//! on, probing a shared-memory hash table of N+(u). The trick that keeps t_v cheap: a
//! triangle's third corner is added by a warp-aggregated atomic (lanes hitting one hub share
//! one add), the edge's two ends once per edge. The kernels also count the triangles
//! themselves, which checks the corners: their sum must be three times that count.
//!
//! The kernels run twice: built without the corners (`CORNERS 0`), they count the triangles
//! alone, the figure GAP's tc and the spec's target time; then with them, for clustering.
//! Both totals must agree.

use super::triangles::{
    orient, rank_vertices, sum_over_ranks, triangle_stats, HostCsr, Oriented, TriangleStats,
};
use crate::comm::{Op, World};
use crate::device::memory::{self, Place};
use crate::device::{blocks, grid, Gpu, Kernel, THREADS};
use crate::error::{Error, Result};
use crate::graph::csr_gpu::DeviceCsr;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use rayon::prelude::*;
use std::ops::Range;

/// Out-degrees from which a vertex is counted by a block (`triangles_block`), not a warp.
const BLOCK_DEGREE: u64 = 128;

/// What one rank's range of vertices contributes.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeCount {
    /// Triangles found at the range's vertices (each triangle at its lowest vertex).
    pub triangles: u64,
    /// t_v of those triangles, for all n vertices (three corners per triangle).
    pub per_vertex: Vec<u64>,
    /// Kernel seconds of the count with the corners (t_v).
    pub seconds: f64,
    /// Kernel seconds of the count alone.
    pub count_seconds: f64,
}

/// Kernel seconds of the two passes, the most over ranks.
#[derive(Clone, Copy, Debug)]
pub struct KernelSeconds {
    /// The triangle count alone.
    pub count: f64,
    /// The count with every vertex's triangles (for clustering).
    pub corners: f64,
}

/// `triangles::count_triangles` on every rank's GPU (collective; identical on every rank),
/// with the most kernel seconds over ranks.
pub fn count_triangles_gpu(
    world: &World,
    gpu: &Gpu,
    csr: &HostCsr,
) -> Result<(TriangleStats, KernelSeconds)> {
    let oriented = orient(csr)?;
    let range = rank_vertices(&oriented, world.size(), world.rank());
    // One rank's failure (memory, say) is every rank's, before the sum they all join.
    let mut count = world.agree(count_range_gpu(gpu, &oriented, range))?;
    sum_over_ranks(world, &mut count.per_vertex);
    let seconds = KernelSeconds {
        count: world.allreduce(count.count_seconds, Op::Max),
        corners: world.allreduce(count.seconds, Op::Max),
    };
    let per_vertex = oriented.unrelabel(&count.per_vertex);
    Ok((triangle_stats(csr, per_vertex), seconds))
}

/// Count the triangles found at the vertices `range` of `oriented` (rows N+(u), sorted by id,
/// as `triangles::orient` makes them) on this GPU.
pub fn count_range_gpu(gpu: &Gpu, oriented: &Oriented, range: Range<u64>) -> Result<RangeCount> {
    let n = oriented.n();
    let (short, long) = bins(oriented, range);
    check_fits(gpu, oriented, short.len() + long.len())?;
    let csr = DeviceCsr::upload(gpu, &oriented.offsets, &oriented.adj)?;
    let mut counts = Counts {
        per_vertex: gpu.zeros("triangle counts", n as usize)?,
        total: gpu.zeros("triangle total", 1)?,
    };
    let mut pass = |corners: bool| -> Result<(f64, u64)> {
        let bins = [
            Bin::new(gpu, "triangles_warp", &short, corners)?,
            Bin::new(gpu, "triangles_block", &long, corners)?,
        ];
        gpu.stream
            .memset_zeros(&mut counts.total)
            .map_err(|e| crate::device::gpu_error("clear the triangle total", e))?;
        let seconds = gpu.timed(|| {
            bins.iter()
                .try_for_each(|bin| bin.launch(gpu, &csr, &mut counts))
        })?;
        Ok((
            seconds,
            gpu.download("triangle total", &counts.total, 1)?[0],
        ))
    };
    let (count_seconds, alone) = pass(false)?;
    let (seconds, triangles) = pass(true)?;
    if alone != triangles {
        return Err(Error::Gpu(format!(
            "triangle kernels: {alone} triangles counted alone, {triangles} with their corners"
        )));
    }
    let per_vertex = gpu.download("triangle counts", &counts.per_vertex, n as usize)?;
    let corners: u64 = per_vertex.par_iter().sum();
    if corners != 3 * triangles {
        return Err(Error::Gpu(format!(
            "triangle kernels: {corners} corners for {triangles} triangles (expected three each)"
        )));
    }
    Ok(RangeCount {
        triangles,
        per_vertex,
        seconds,
        count_seconds,
    })
}

/// The kernels' outputs: t_v and the triangle total.
struct Counts {
    per_vertex: CudaSlice<u64>,
    total: CudaSlice<u64>,
}

/// The vertices of `range` with out-edges, split at `BLOCK_DEGREE` into the warp and block
/// bins, each with the longest rows first (they finish last if started last).
fn bins(oriented: &Oriented, range: Range<u64>) -> (Vec<u32>, Vec<u32>) {
    let bin = |keep: &(dyn Fn(u64) -> bool + Sync)| {
        let mut vs: Vec<u32> = range
            .clone()
            .into_par_iter()
            .filter(|&u| keep(oriented.degree(u)))
            .map(|u| u as u32)
            .collect();
        vs.par_sort_by_key(|&u| std::cmp::Reverse(oriented.degree(u64::from(u))));
        vs
    };
    (
        bin(&|d| d > 0 && d < BLOCK_DEGREE),
        bin(&|d| d >= BLOCK_DEGREE),
    )
}

/// Fail with one line when the oriented graph, the counts and the bins do not fit on the GPU.
fn check_fits(gpu: &Gpu, oriented: &Oriented, binned: usize) -> Result<()> {
    let n = oriented.n();
    let needed = DeviceCsr::bytes(n, oriented.adj.len() as u64) + 8 * n + 4 * binned as u64 + 8;
    memory::check(
        &format!(
            "GPU triangle counting of the oriented graph ({n} vertices, {} edges)",
            oriented.adj.len()
        ),
        needed,
        Place::Gpu(gpu),
        |_| "count on the CPU (--device cpu)".into(),
    )
}

/// One bin of vertices on the GPU, with its kernel: `triangles_warp` takes a warp per
/// vertex, `triangles_block` a block.
struct Bin {
    kernel: Kernel,
    cfg: LaunchConfig,
    vertices: CudaSlice<u32>,
    count: u64,
}

impl Bin {
    /// `corners`: count every vertex's triangles too (the default build of the kernels).
    fn new(gpu: &Gpu, kernel: &str, vertices: &[u32], corners: bool) -> Result<Self> {
        let count = vertices.len() as u64;
        Ok(Bin {
            kernel: if corners {
                gpu.function("triangles.cu", kernel)?
            } else {
                gpu.specialised("triangles.cu", &[("CORNERS", 0)], kernel)?
            },
            cfg: match kernel {
                "triangles_warp" => grid(count * 32),
                _ => blocks(count, THREADS),
            },
            vertices: gpu.upload("binned vertices", vertices)?,
            count,
        })
    }

    fn launch(&self, gpu: &Gpu, csr: &DeviceCsr, counts: &mut Counts) -> Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        // As the kernels' parameters in kernels/triangles.cu.
        gpu.launch(&self.kernel, self.cfg, |b| {
            b.arg(&csr.offsets)
                .arg(&csr.adj)
                .arg(&self.vertices)
                .arg(&self.count)
                .arg(&mut counts.per_vertex)
                .arg(&mut counts.total);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warp_kernel_stages_rows_as_short_as_the_block_degree() {
        let source = include_str!("../../../kernels/triangles.cu");
        assert!(source.contains(&format!("#define SHORT_ROW {BLOCK_DEGREE} ")));
        let warps = crate::device::THREADS / 32;
        assert!(source.contains(&format!("#define WARPS_PER_BLOCK {warps} ")));
    }

    #[test]
    fn bins_split_the_range_at_the_block_degree_longest_first() {
        // A star on 0..200 (centre 0) and a triangle 200, 201, 202: the leaves, of degree 1,
        // point at the centre; 200 points at 201 and 202, 201 at 202; 202 and the centre
        // have no out-row.
        let mut edges: Vec<(u64, u64)> = (1..200).map(|v| (0, v)).collect();
        edges.extend([(200, 201), (201, 202), (200, 202)]);
        let oriented = orient(&HostCsr::from_edges(203, &edges)).unwrap();
        let (short, long) = bins(&oriented, 0..203);
        assert!(long.is_empty());
        assert_eq!(short.len(), 199 + 2);
        // Relabelled by (degree, id): leaves 0..=198, the triangle 199..=201, the centre 202.
        assert_eq!(short[0], 199, "out-degree 2 before 1");
        let (short, _) = bins(&oriented, 150..201);
        assert_eq!(short.first(), Some(&199));
        assert_eq!(short.len(), 51);
        // Vertex 0 joined to a clique on 1..=130: all of degree 130, so the order is the ids'
        // and 0 points at all 130, past the block degree.
        let mut edges: Vec<(u64, u64)> = (1..=130).map(|v| (0, v)).collect();
        edges.extend((1..=130).flat_map(|u| (u + 1..=130).map(move |v| (u, v))));
        let oriented = orient(&HostCsr::from_edges(131, &edges)).unwrap();
        assert_eq!(oriented.degree(0), 130);
        assert_eq!(bins(&oriented, 0..1), (vec![], vec![0]));
    }
}
