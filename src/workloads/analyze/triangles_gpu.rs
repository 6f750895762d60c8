//! Triangle counting on a GPU (kernels/triangles.cu), the twin of `triangles::count_range`:
//! the same degree-oriented graph (`triangles::orient`, made on the host), so every count
//! equals the CPU's exactly.
//!
//! The oriented rows go to the GPU once, as a `DeviceCsr` of 32-bit ids, with the work laid
//! out by `triangle_plan`: every edge given to the endpoint with the longer out-row, whose
//! row sits in shared memory while the shorter rows of its partners are probed against it
//! (min(|N+(u)|, |N+(v)|) probes an edge), in items of bounded probes, binned by the owner's
//! out-degree (a warp per item of a short owner, a block per item of a long one). Ranks take
//! every size-th item of each bin. The kernels also count the triangles themselves, which
//! checks the corners: their sum must be three times that count.
//!
//! The kernels run twice: built without the corners (`CORNERS 0`), they count the triangles
//! alone, the figure GAP's tc and the spec's target time; then with them, for clustering.
//! Both totals must agree.

use super::triangle_plan::{rank_items, Item, Plan};
use super::triangles::{orient, sum_over_ranks, triangle_stats, HostCsr, Oriented, TriangleStats};
use crate::comm::{Op, World};
use crate::device::memory::{self, Place};
use crate::device::{blocks, grid, Gpu, Kernel, THREADS};
use crate::error::{Error, Result};
use crate::graph::csr_gpu::DeviceCsr;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use rayon::prelude::*;

/// What one rank's items contribute.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeCount {
    /// Triangles found at the items' edges.
    pub triangles: u64,
    /// t_v of those triangles, for all n vertices (three corners per triangle).
    pub per_vertex: Vec<u64>,
    /// Kernel seconds of the count with the corners (t_v).
    pub seconds: f64,
    /// Kernel seconds of the count alone.
    pub count_seconds: f64,
}

/// Kernel seconds of the two passes (the most over ranks) and what the count moved.
#[derive(Clone, Copy, Debug)]
pub struct KernelSeconds {
    /// The triangle count alone.
    pub count: f64,
    /// The count with every vertex's triangles (for clustering).
    pub corners: f64,
    /// Probes of the whole count (all ranks): Σ over edges of min(|N+(u)|, |N+(v)|).
    pub probes: u64,
    /// Bytes the count alone reads, all ranks (`bytes_read`).
    pub bytes: u64,
    /// The device-to-device copy rate, bytes per second (read plus written), the least over
    /// ranks; 0 where it could not be measured.
    pub copy_rate: f64,
}

/// `triangles::count_triangles` on every rank's GPU (collective; identical on every rank),
/// with the most kernel seconds over ranks.
pub fn count_triangles_gpu(
    world: &World,
    gpu: &Gpu,
    csr: &HostCsr,
) -> Result<(TriangleStats, KernelSeconds)> {
    let clock = std::time::Instant::now();
    let oriented = orient(csr)?;
    let oriented_at = clock.elapsed().as_secs_f64();
    let plan = Plan::new(&oriented);
    log::info!(
        "triangles: oriented in {oriented_at:.2} s, planned in {:.2} s (host)",
        clock.elapsed().as_secs_f64() - oriented_at
    );
    let [alone, corners] = plan.bitmap_shares(&oriented);
    log::info!(
        "triangles: {:.1}% of the block items' probes against bitmap rows counting alone, {:.1}% with t_v",
        100.0 * alone,
        100.0 * corners
    );
    // Measured before the count's buffers take their memory; a failure costs only the figure.
    let copy_rate = gpu.copy_rate().unwrap_or(0.0);
    let (short, long) = (
        rank_items(&plan.short, world.size(), world.rank()),
        rank_items(&plan.long, world.size(), world.rank()),
    );
    // One rank's failure (memory, say) is every rank's, before the sum they all join.
    let mut count = world.agree(count_items_gpu(gpu, &oriented, &plan.partners, [&short, &long]))?;
    sum_over_ranks(world, &mut count.per_vertex);
    let seconds = KernelSeconds {
        count: world.allreduce(count.count_seconds, Op::Max),
        corners: world.allreduce(count.seconds, Op::Max),
        probes: plan.probes(),
        bytes: bytes_read(&oriented, &plan),
        copy_rate: world.allreduce(copy_rate, Op::Min),
    };
    let per_vertex = oriented.unrelabel(&count.per_vertex);
    Ok((triangle_stats(csr, per_vertex), seconds))
}

/// Bytes the count alone reads, each once, modelled: every probed entry (4), each partner's
/// id and row bounds (4 + 16), each item's owner, bounds and row (4 + 16 + 16 + 4 per
/// entry). Partner rows read by several owners count each time (the L2 cache may serve
/// them), so this is the traffic the kernels ask for, not what reaches DRAM. The probes are
/// the spec's count, min(|N+(u)|, |N+(v)|) an edge; the kernels skip a partner's entries
/// below the owner row's first (`partner_row` in kernels/triangles.cu: about a third of the
/// probes at Kronecker SCALE 22), so they read less than this.
fn bytes_read(oriented: &Oriented, plan: &Plan) -> u64 {
    let items = plan.short.par_iter().chain(&plan.long);
    let per_item: u64 = items
        .map(|i| 36 + 4 * oriented.degree(i.owner.into()))
        .sum();
    4 * plan.probes() + 20 * plan.partners.len() as u64 + per_item
}

/// Count the triangles of the items `bins` (the warp bin, then the block bin) of `oriented`'s
/// plan, whose partner lists are `partners`, on this GPU.
pub fn count_items_gpu(
    gpu: &Gpu,
    oriented: &Oriented,
    partners: &[u32],
    bins: [&[Item]; 2],
) -> Result<RangeCount> {
    let n = oriented.n();
    check_fits(gpu, oriented, partners.len(), bins[0].len() + bins[1].len())?;
    let csr = DeviceCsr::upload(gpu, &oriented.offsets, &oriented.adj)?;
    let partners = gpu.upload("triangle partners", partners)?;
    let mut counts = Counts {
        per_vertex: gpu.zeros("triangle counts", n as usize)?,
        total: gpu.zeros("triangle total", 1)?,
    };
    let mut pass = |corners: bool| -> Result<(f64, u64)> {
        let bins = [
            Bin::new(gpu, "triangles_warp", bins[0], corners)?,
            Bin::new(gpu, "triangles_block", bins[1], corners)?,
        ];
        gpu.clear("the triangle total", &mut counts.total)?;
        // Each bin timed on its own (the kernels' seconds are their sum): where the time goes.
        let mut each = [0.0; 2];
        for (bin, secs) in bins.iter().zip(&mut each) {
            *secs = gpu.timed(|| bin.launch(gpu, &csr, &partners, &mut counts))?;
        }
        log::info!(
            "triangles{}: warp bin {:.4} s ({} items), block bin {:.4} s ({} items)",
            if corners { " with t_v" } else { " alone" },
            each[0],
            bins[0].count,
            each[1],
            bins[1].count
        );
        Ok((
            each[0] + each[1],
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

/// Fail with one line when the oriented graph, the partners, the counts and the items do not
/// fit on the GPU.
fn check_fits(gpu: &Gpu, oriented: &Oriented, partners: usize, items: usize) -> Result<()> {
    let n = oriented.n();
    let needed = DeviceCsr::bytes(n, oriented.adj.len() as u64)
        + 4 * partners as u64
        + 8 * n
        + 20 * items as u64
        + 8;
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

/// One bin of items on the GPU, with its kernel: `triangles_warp` takes a warp per item,
/// `triangles_block` a block.
struct Bin {
    kernel: Kernel,
    cfg: LaunchConfig,
    owners: CudaSlice<u32>,
    spans: CudaSlice<u64>,
    count: u64,
}

impl Bin {
    /// `corners`: count every vertex's triangles too (the default build of the kernels).
    fn new(gpu: &Gpu, kernel: &str, items: &[Item], corners: bool) -> Result<Self> {
        let count = items.len() as u64;
        let owners: Vec<u32> = items.iter().map(|i| i.owner).collect();
        let spans: Vec<u64> = items.iter().flat_map(|i| [i.begin, i.end]).collect();
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
            owners: gpu.upload("triangle items' owners", &owners)?,
            spans: gpu.upload("triangle items' partners", &spans)?,
            count,
        })
    }

    fn launch(
        &self,
        gpu: &Gpu,
        csr: &DeviceCsr,
        partners: &CudaSlice<u32>,
        counts: &mut Counts,
    ) -> Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        // As the kernels' parameters in kernels/triangles.cu.
        gpu.launch(&self.kernel, self.cfg, |b| {
            b.arg(&csr.offsets)
                .arg(&csr.adj)
                .arg(partners)
                .arg(&self.owners)
                .arg(&self.spans)
                .arg(&self.count)
                .arg(&mut counts.per_vertex)
                .arg(&mut counts.total);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::triangle_plan::SHORT_ROW;

    #[test]
    fn the_kernels_take_the_plans_row_bound_and_the_launch_block_size() {
        let source = include_str!("../../../kernels/triangles.cu");
        assert!(source.contains(&format!("#define SHORT_ROW {SHORT_ROW} ")));
        let warps = crate::device::THREADS / 32;
        assert!(source.contains(&format!("#define WARPS_PER_BLOCK {warps} ")));
    }
}
