//! The depth validator (`validate_depths`, which says why its checks are the Graph500
//! rules) on the GPU that searched: the own depths are all-gathered once per root into every
//! rank's GPU (NCCL, or host memory and MPI), then one kernel (`bfs_validate` in
//! kernels/bfs.cu, a warp per own vertex) checks the own parents and rows, and adds up the
//! input tuple ends of the reached vertices for nedge. The parents stay on the GPU; only the
//! per-rule lowest failing vertex and that sum come back.

use super::gpu_vertices::OwnVertices;
use super::validate_depths::DeviceVerdict;
use crate::comm::gpu::GpuExchange;
use crate::comm::{GpuTransport, Op, World};
use crate::device::{filling_grid, gpu_error, memory, Gpu, Kernel};
use crate::error::Result;
use crate::graph::csr_gpu::DeviceCsr;
use crate::graph::{DistGraph, Vid};
use cudarc::driver::{CudaSlice, PushKernelArg};

pub struct DeviceValidator {
    kernel: Kernel,
    /// Input tuple ends of each own vertex (`DistGraph::tuple_ends`).
    tuple_ends: CudaSlice<u64>,
    /// The own depths padded to the 1D block, and every rank's (index: global id).
    own: CudaSlice<i32>,
    all: CudaSlice<i32>,
    /// The kernel's failure slots and tuple-end sum.
    failures: CudaSlice<u64>,
    resident_blocks: u32,
    ranks: usize,
}

/// Device bytes of the validator of a rank of `g`.
fn bytes(g: &DistGraph) -> u64 {
    let block = g.part.block;
    8 * g.local_n() as u64 + 4 * block * (g.part.size as u64 + 1) + 8 * 8
}

impl DeviceValidator {
    /// Allocate after checking the buffers, and `extra` bytes the caller needs beside them,
    /// fit on every rank's GPU (collective).
    pub fn new(world: &World, gpu: &Gpu, g: &DistGraph, extra: u64) -> Result<Self> {
        let needed = world.allreduce(bytes(g) + extra, Op::Max);
        let free = world.allreduce(gpu.memory()?.0 as u64, Op::Min);
        if needed > free {
            return Err(memory::refusal(
                "the device validator (every vertex's depth on each GPU, and a 2D search's 1D rows)",
                needed,
                free,
                "free GPU memory per rank",
                "validate on the host: [bfs] validator = \"host\"",
            ));
        }
        let block = g.part.block as usize;
        let kernel = gpu.function("bfs.cu", "bfs_validate")?;
        Ok(DeviceValidator {
            resident_blocks: gpu.resident_blocks(&kernel)?,
            kernel,
            tuple_ends: gpu.upload("tuple ends", &g.tuple_ends)?,
            own: gpu.zeros("validator depths", block)?,
            all: gpu.zeros("validator depths", block * g.part.size)?,
            failures: gpu.zeros("validator failures", 8)?,
            ranks: g.part.size,
        })
    }

    /// Check the search from `root` whose parents and depths are in `own`, over the rank's
    /// rows `csr`, the depths gathered through `exchange` (over the whole world). Collective.
    pub fn check(
        &mut self,
        exchange: &GpuExchange,
        csr: &DeviceCsr,
        own: &OwnVertices,
        root: Vid,
        n: u64,
    ) -> Result<DeviceVerdict> {
        let gpu = own.gpu;
        let s = &gpu.stream;
        let local_n = own.local_n as usize;
        if local_n > 0 && self.ranks > 1 {
            s.memcpy_dtod(&own.depth.slice(0..local_n), &mut self.own.slice_mut(0..local_n))
                .map_err(|e| gpu_error("copy the depths to gather", e))?;
        }
        if self.ranks > 1 {
            exchange.allgather(&self.own, &mut self.all)?;
        } else if local_n > 0 {
            s.memcpy_dtod(&own.depth.slice(0..local_n), &mut self.all.slice_mut(0..local_n))
                .map_err(|e| gpu_error("copy the depths", e))?;
        }
        let mut slots = [u64::MAX; 8];
        slots[7] = 0;
        s.memcpy_htod(&slots, &mut self.failures)
            .map_err(|e| gpu_error("reset validator failures", e))?;
        gpu.launch(&self.kernel, filling_grid(self.resident_blocks), |b| {
            b.arg(&csr.offsets)
                .arg(&csr.adj)
                .arg(&own.parent)
                .arg(&own.depth)
                .arg(&self.all)
                .arg(&self.tuple_ends)
                .arg(&own.first)
                .arg(&own.local_n)
                .arg(&n)
                .arg(&root)
                .arg(&mut self.failures);
        })?;
        let got = gpu.download("validator failures", &self.failures, 8)?;
        let mut failures = [0; 7];
        failures.copy_from_slice(&got[..7]);
        Ok(DeviceVerdict {
            failures,
            tuple_ends: got[7],
        })
    }
}

/// What a 2D search validates with: the 1D rows (the 2D blocks hold other edges), uploaded
/// from the host at the first validation, and an exchange over the whole world.
pub struct Rows1D<'a> {
    exchange: GpuExchange<'a>,
    csr: DeviceCsr,
    validator: DeviceValidator,
}

impl<'a> Rows1D<'a> {
    /// Collective.
    pub fn new(world: &'a World, gpu: &Gpu, transport: GpuTransport, g: &DistGraph) -> Result<Self> {
        let csr_bytes = DeviceCsr::bytes(g.local_n() as u64, g.adj.len() as u64);
        let validator = DeviceValidator::new(world, gpu, g, csr_bytes)?;
        Ok(Rows1D {
            exchange: GpuExchange::open(world, gpu, transport)?,
            csr: DeviceCsr::upload(gpu, &g.offsets, &g.adj)?,
            validator,
        })
    }

    pub fn check(&mut self, own: &OwnVertices, root: Vid, n: u64) -> Result<DeviceVerdict> {
        self.validator
            .check(&self.exchange, &self.csr, own, root, n)
    }
}
