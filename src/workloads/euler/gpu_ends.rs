//! One rank's graph on its GPU, uploaded once with the graph (untimed, as the BFS's graph
//! build is): the endpoint array, edge e = (ends[2e], ends[2e + 1]), so dart d sits at vertex
//! ends[d] and needs no id of its own. The Eulerian check (degrees and connectivity) and the
//! pairing (gpu.rs) read it there, so no edge-end crosses the bus during the timed phases.

use super::gpu::{check_fits, check_memory, read_one};
use crate::device::{gpu_error, grid, Gpu};
use crate::error::Result;
use crate::graph::Edge;
use cudarc::driver::{CudaSlice, PushKernelArg};
use rayon::prelude::*;

/// Edges converted and copied at a time (bounds the host's staging buffer).
const UPLOAD_EDGES: usize = 1 << 26;

pub struct DeviceEnds {
    pub ends: CudaSlice<u32>,
    /// Edges held (the array's length is twice this).
    pub edges: u64,
    pub n: u64,
}

impl DeviceEnds {
    /// Upload `edges` of a graph on `n` vertices, for a run of `planned` edges in all (the
    /// added ones come by `extend`), after checking that the run fits the device.
    pub fn upload(gpu: &Gpu, n: u64, edges: &[Edge], planned: u64) -> Result<DeviceEnds> {
        check_fits(n, planned)?;
        check_memory(gpu, (2 * planned, n), planned, 1)?;
        // Compile the kernel files now, untimed with the graph: a cold compile (about a
        // second) would otherwise land in the check phase.
        gpu.function("euler.cu", "euler_degrees")?;
        gpu.function("cc.cu", "cc_init")?;
        let mut out = DeviceEnds {
            ends: gpu.zeros::<u32>("edge ends", 2 * edges.len())?,
            edges: 0,
            n,
        };
        out.copy_in(gpu, edges)?;
        Ok(out)
    }

    /// Append `more` edges (eulerize's, the trail's virtual edge).
    pub fn extend(&mut self, gpu: &Gpu, more: &[Edge]) -> Result<()> {
        if more.is_empty() {
            return Ok(());
        }
        let held = 2 * self.edges as usize;
        check_fits(self.n, self.edges + more.len() as u64)?;
        let mut grown = gpu.zeros::<u32>("edge ends", held + 2 * more.len())?;
        gpu.stream
            .memcpy_dtod(&self.ends.slice(0..held), &mut grown.slice_mut(0..held))
            .map_err(|e| gpu_error("copy the edge ends", e))?;
        self.ends = grown;
        self.copy_in(gpu, more)
    }

    fn copy_in(&mut self, gpu: &Gpu, edges: &[Edge]) -> Result<()> {
        for chunk in edges.chunks(UPLOAD_EDGES) {
            let flat: Vec<u32> = chunk
                .par_iter()
                .flat_map_iter(|&(u, v)| [u as u32, v as u32])
                .collect();
            let at = 2 * self.edges as usize;
            gpu.stream
                .memcpy_htod(&flat, &mut self.ends.slice_mut(at..at + flat.len()))
                .map_err(|e| gpu_error("upload the edge ends", e))?;
            self.edges += chunk.len() as u64;
        }
        Ok(())
    }

    pub fn darts(&self) -> u64 {
        2 * self.edges
    }

    /// Per vertex its degree, or for a digraph out-degree minus in-degree.
    fn degrees(&self, gpu: &Gpu, directed: bool) -> Result<CudaSlice<i32>> {
        let mut degree = gpu.zeros::<i32>("degrees", self.n as usize)?;
        let f = gpu.function("euler.cu", "euler_degrees")?;
        let (darts, directed) = (self.darts(), u32::from(directed));
        gpu.launch(&f, grid(darts), |b| {
            b.arg(&self.ends)
                .arg(&darts)
                .arg(&directed)
                .arg(&mut degree);
        })?;
        Ok(degree)
    }

    /// The degrees on the host, as `darts::degrees` gives them.
    pub fn host_degrees(&self, gpu: &Gpu, directed: bool) -> Result<Vec<i64>> {
        let degree = self.degrees(gpu, directed)?;
        let degree = gpu.download("degrees", &degree, self.n as usize)?;
        Ok(degree.into_par_iter().map(i64::from).collect())
    }

    /// Whether every degree is even (digraph: every vertex balanced), decided on the device.
    pub fn balanced(&self, gpu: &Gpu, directed: bool) -> Result<bool> {
        let degree = self.degrees(gpu, directed)?;
        let mut count = gpu.zeros::<u64>("counter", 1)?;
        let f = gpu.function("euler.cu", "euler_uneven")?;
        let (n, directed) = (self.n, u32::from(directed));
        gpu.launch(&f, grid(n), |b| {
            b.arg(&degree).arg(&n).arg(&directed).arg(&mut count);
        })?;
        Ok(read_one(gpu, &count, 0)? == 0)
    }

    /// Whether all edges lie in one component (the CPU check names them when not).
    pub fn connected(&self, gpu: &Gpu) -> Result<bool> {
        if self.edges == 0 {
            return Ok(true);
        }
        let nodes = self.n as u32;
        let mut parent = gpu.zeros::<u32>("components", self.n as usize)?;
        let f = |file, name| gpu.function(file, name);
        gpu.launch(&f("cc.cu", "cc_init")?, grid(self.n), |b| {
            b.arg(&nodes).arg(&mut parent);
        })?;
        gpu.launch(&f("euler.cu", "euler_link")?, grid(self.edges), |b| {
            b.arg(&self.ends).arg(&self.edges).arg(&mut parent);
        })?;
        gpu.launch(&f("cc.cu", "cc_compress")?, grid(self.n), |b| {
            b.arg(&nodes).arg(&mut parent);
        })?;
        let first = read_one(gpu, &self.ends, 0)?;
        let mut apart = gpu.zeros::<u64>("counter", 1)?;
        let darts = self.darts();
        gpu.launch(&f("euler.cu", "euler_apart")?, grid(darts), |b| {
            b.arg(&self.ends)
                .arg(&darts)
                .arg(&parent)
                .arg(&first)
                .arg(&mut apart);
        })?;
        Ok(read_one(gpu, &apart, 0)? == 0)
    }
}
