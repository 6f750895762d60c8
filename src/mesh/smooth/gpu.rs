//! The smoothers' node steps on a GPU (kernels/mesh.cu): the l2v cell kernel then node
//! kernel, and the laplace node kernel, over the patch's arrays uploaded once; positions go
//! up and the proposed moves come back each iteration, and the host applies them through the
//! same guard as the CPU path (so both paths keep the same rules and give the same mesh).

use super::super::patch::Patch;
use super::{Clock, Kernels, Preconditioner};
use crate::device::grid;
use crate::device::Gpu;
use crate::error::Result;
use cudarc::driver::{CudaSlice, PushKernelArg};

const FILE: &str = "mesh.cu";

/// A patch's connectivity on the GPU.
pub struct GpuKernels<'g> {
    gpu: &'g Gpu,
    cells: CudaSlice<u32>,
    n2c_offsets: CudaSlice<u64>,
    n2c: CudaSlice<u32>,
    graph_offsets: CudaSlice<u64>,
    graph: CudaSlice<u32>,
    active: CudaSlice<u8>,
    terms: CudaSlice<f64>,
    moves: CudaSlice<f64>,
}

fn offsets(o: &[usize]) -> Vec<u64> {
    o.iter().map(|&v| v as u64).collect()
}

impl<'g> GpuKernels<'g> {
    pub fn new(gpu: &'g Gpu, patch: &Patch) -> Result<GpuKernels<'g>> {
        let m = &patch.mesh;
        let active: Vec<u8> = (0..m.num_nodes())
            .map(|i| u8::from(patch.active(i)))
            .collect();
        Ok(GpuKernels {
            gpu,
            cells: gpu.upload("mesh cells", &m.cells)?,
            n2c_offsets: gpu.upload("node-to-cell offsets", &offsets(&patch.n2c.offsets))?,
            n2c: gpu.upload("node-to-cell slots", &patch.n2c.items)?,
            graph_offsets: gpu.upload("node graph offsets", &offsets(&patch.graph.offsets))?,
            graph: gpu.upload("node graph", &patch.graph.items)?,
            active: gpu.upload("active nodes", &active)?,
            terms: gpu.zeros("l2v corner terms", 9 * m.cells.len())?,
            moves: gpu.zeros("node moves", 3 * m.num_nodes())?,
        })
    }

    fn positions(&self, patch: &Patch) -> Result<[CudaSlice<f64>; 3]> {
        let m = &patch.mesh;
        Ok([
            self.gpu.upload("x", &m.x)?,
            self.gpu.upload("y", &m.y)?,
            self.gpu.upload("z", &m.z)?,
        ])
    }

    fn moves_to_host(&self, n: usize) -> Result<Vec<[f64; 3]>> {
        let flat = self.gpu.download("node moves", &self.moves, 3 * n)?;
        Ok(flat.chunks(3).map(|c| [c[0], c[1], c[2]]).collect())
    }
}

impl Kernels for GpuKernels<'_> {
    fn l2v(
        &mut self,
        patch: &Patch,
        pre: Preconditioner,
        clock: &mut Clock,
    ) -> Result<Vec<[f64; 3]>> {
        let m = &patch.mesh;
        let [x, y, z] = Clock::time(&mut clock.exchange, || self.positions(patch))?;
        let (ncells, corners, nodes) = (
            m.num_cells() as u64,
            m.corners() as u32,
            m.num_nodes() as u32,
        );
        let gpu = self.gpu;
        let cell = gpu.function(FILE, "mesh_l2v_cell")?;
        clock.cell += gpu.timed(|| {
            gpu.launch(&cell, grid(ncells), |b| {
                b.arg(&x)
                    .arg(&y)
                    .arg(&z)
                    .arg(&self.cells)
                    .arg(&ncells)
                    .arg(&corners)
                    .arg(&mut self.terms);
            })
        })?;
        let node = gpu.function(FILE, "mesh_l2v_node")?;
        let block = u32::from(pre == Preconditioner::Block);
        clock.node += gpu.timed(|| {
            gpu.launch(&node, grid(nodes as u64), |b| {
                b.arg(&x)
                    .arg(&y)
                    .arg(&z)
                    .arg(&self.cells)
                    .arg(&corners)
                    .arg(&self.n2c_offsets)
                    .arg(&self.n2c)
                    .arg(&self.active)
                    .arg(&nodes)
                    .arg(&block)
                    .arg(&self.terms)
                    .arg(&mut self.moves);
            })
        })?;
        Clock::time(&mut clock.exchange, || self.moves_to_host(nodes as usize))
    }

    fn laplace(&mut self, patch: &Patch, smart: bool, clock: &mut Clock) -> Result<Vec<[f64; 3]>> {
        let m = &patch.mesh;
        let [x, y, z] = Clock::time(&mut clock.exchange, || self.positions(patch))?;
        let (corners, nodes, smart) = (m.corners() as u32, m.num_nodes() as u32, u32::from(smart));
        let gpu = self.gpu;
        let node = gpu.function(FILE, "mesh_laplace_node")?;
        clock.node += gpu.timed(|| {
            gpu.launch(&node, grid(nodes as u64), |b| {
                b.arg(&x)
                    .arg(&y)
                    .arg(&z)
                    .arg(&self.cells)
                    .arg(&corners)
                    .arg(&self.n2c_offsets)
                    .arg(&self.n2c)
                    .arg(&self.graph_offsets)
                    .arg(&self.graph)
                    .arg(&self.active)
                    .arg(&nodes)
                    .arg(&smart)
                    .arg(&mut self.moves);
            })
        })?;
        Clock::time(&mut clock.exchange, || self.moves_to_host(nodes as usize))
    }
}
