//! The labelling's steps on the rank's GPU (kernels/cc.cu): the local rows, cut edges and
//! ghost plan uploaded once; labels stay on the device between rounds, and ghost labels
//! travel GPU to GPU through the exchange layer (NCCL, or staged through MPI).

use super::Labeller;
use crate::comm::gpu::GpuExchange;
use crate::comm::{GpuTransport, Op, World};
use crate::device::{grid, memory, Gpu, Kernel};
use crate::error::Result;
use crate::graph::csr_gpu::DeviceCsr;
use crate::graph::ghosts::LocalRows;
use cudarc::driver::{CudaSlice, PushKernelArg};
use rayon::prelude::*;
use std::collections::HashMap;

/// Neighbours per vertex linked before the giant component is sampled (Afforest's 2).
const SAMPLE_NEIGHBOURS: u32 = 2;
/// Vertices whose roots are sampled to find the giant component.
const SAMPLE_VERTICES: u32 = 1024;

pub struct GpuLabeller<'a> {
    gpu: &'a Gpu,
    exchange: GpuExchange<'a>,
    rows: &'a LocalRows,
    n: u32,
    first: u64,
    offsets: CudaSlice<u64>,
    adj: CudaSlice<u32>,
    cut_own: CudaSlice<u32>,
    cut_ghost: CudaSlice<u32>,
    send_local: CudaSlice<u32>,
    parent: CudaSlice<u32>,
    labels: CudaSlice<u64>,
    comp_min: CudaSlice<u64>,
    send: CudaSlice<u64>,
    ghost_labels: CudaSlice<u64>,
    /// Per ghost, its label as last absorbed plus one (0: none yet).
    absorbed: CudaSlice<u64>,
    /// Per ghost, whether its label changed in this round.
    changed_ghosts: CudaSlice<u8>,
    changed: CudaSlice<u64>,
    kernels: HashMap<&'static str, Kernel>,
}

/// Device bytes the labelling needs for `rows`, with their local edges (`with_edges`) or
/// without (already on the GPU).
fn bytes_needed(rows: &LocalRows, with_edges: bool) -> u64 {
    let n = rows.local_n() as u64;
    let edges = match with_edges {
        true => DeviceCsr::bytes(n, rows.adj.len() as u64),
        false => 0,
    };
    edges
        + 8 * rows.cut_own.len() as u64
        + (4 + 8 + 8) * n
        + 12 * rows.ghosts.send_local.len() as u64
        + (8 + 8 + 1) * rows.ghosts.ids.len() as u64
}

impl<'a> GpuLabeller<'a> {
    /// Upload `rows` (collective: opens the exchange and checks every rank's memory); their
    /// local edges are `local`'s where they are already on the GPU.
    pub fn new(
        world: &'a World,
        gpu: &'a Gpu,
        transport: GpuTransport,
        rows: &'a LocalRows,
        first: u64,
        local: Option<DeviceCsr>,
    ) -> Result<Self> {
        let needed = world.allreduce(bytes_needed(rows, local.is_none()), Op::Max);
        let free = world.allreduce(memory::gpu_free(gpu)?, Op::Min);
        if needed > free {
            return Err(memory::refusal(
                "the components labelling",
                needed,
                free,
                "GPU memory per rank (the least free over ranks)",
                "run on more GPUs, or on the CPU",
            ));
        }
        let n = rows.local_n();
        let mut kernels = HashMap::new();
        for name in [
            "cc_init",
            "cc_link_nth",
            "cc_link_rest",
            "cc_compress",
            "cc_sample_roots",
            "cc_label",
            "cc_gather",
            "cc_changed_ghosts",
            "cc_cut_min",
            "cc_relabel",
            "cc_component_labels",
            "cc_lower",
            "cc_mark_boundary",
            "cc_list_flagged",
        ] {
            kernels.insert(name, gpu.function("cc.cu", name)?);
        }
        let (offsets, adj) = match local {
            Some(csr) => {
                debug_assert_eq!(csr.entries(), rows.adj.len());
                (csr.offsets, csr.adj)
            }
            None => (
                gpu.upload("row offsets", &rows.offsets)?,
                gpu.upload("local edges", &rows.adj)?,
            ),
        };
        Ok(GpuLabeller {
            gpu,
            exchange: GpuExchange::open(world, gpu, transport)?,
            rows,
            n: n as u32,
            first,
            offsets,
            adj,
            cut_own: gpu.upload("cut edges", &rows.cut_own)?,
            cut_ghost: gpu.upload("cut edges", &rows.cut_ghost)?,
            send_local: gpu.upload("ghost plan", &rows.ghosts.send_local)?,
            parent: gpu.zeros("parents", n)?,
            labels: gpu.zeros("labels", n)?,
            comp_min: gpu.zeros("component labels", n)?,
            send: gpu.zeros("labels to send", rows.ghosts.send_local.len())?,
            ghost_labels: gpu.zeros("ghost labels", rows.ghosts.ids.len())?,
            absorbed: gpu.zeros("absorbed ghost labels", rows.ghosts.ids.len())?,
            changed_ghosts: gpu.zeros("changed ghosts", rows.ghosts.ids.len())?,
            changed: gpu.zeros("change count", 1)?,
            kernels,
        })
    }

    /// One thread per own vertex: `cc_compress`, or `cc_init` (no other arguments).
    fn per_vertex(&mut self, name: &str) -> Result<()> {
        let (gpu, n) = (self.gpu, self.n);
        gpu.launch(&self.kernels[name], grid(n.into()), |b| {
            b.arg(&n).arg(&mut self.parent);
        })
    }

    /// The root most sampled vertices have (the giant component's, on the graphs CC is
    /// run on; any root is correct, only slower).
    fn giant_root(&mut self) -> Result<u32> {
        let (gpu, n) = (self.gpu, self.n);
        let mut sample = gpu.zeros::<u32>("root sample", SAMPLE_VERTICES as usize)?;
        gpu.launch(
            &self.kernels["cc_sample_roots"],
            grid(SAMPLE_VERTICES.into()),
            |b| {
                b.arg(&self.parent)
                    .arg(&n)
                    .arg(&SAMPLE_VERTICES)
                    .arg(&mut sample);
            },
        )?;
        let roots = gpu.download("root sample", &sample, SAMPLE_VERTICES as usize)?;
        let mut counts: HashMap<u32, u32> = HashMap::new();
        for r in roots {
            *counts.entry(r).or_default() += 1;
        }
        Ok(counts
            .into_iter()
            .max_by_key(|&(root, count)| (count, std::cmp::Reverse(root)))
            .map_or(0, |(root, _)| root))
    }
}

impl Labeller for GpuLabeller<'_> {
    fn link_local(&mut self) -> Result<()> {
        if self.n == 0 {
            return Ok(());
        }
        let (gpu, n, first) = (self.gpu, self.n, self.first);
        self.per_vertex("cc_init")?;
        for k in 0..SAMPLE_NEIGHBOURS {
            gpu.launch(&self.kernels["cc_link_nth"], grid(n.into()), |b| {
                b.arg(&self.offsets)
                    .arg(&self.adj)
                    .arg(&n)
                    .arg(&k)
                    .arg(&mut self.parent);
            })?;
        }
        self.per_vertex("cc_compress")?;
        let giant = self.giant_root()?;
        gpu.launch(&self.kernels["cc_link_rest"], grid(n.into()), |b| {
            b.arg(&self.offsets)
                .arg(&self.adj)
                .arg(&n)
                .arg(&SAMPLE_NEIGHBOURS)
                .arg(&giant)
                .arg(&mut self.parent);
        })?;
        self.per_vertex("cc_compress")?;
        gpu.launch(&self.kernels["cc_label"], grid(n.into()), |b| {
            b.arg(&n)
                .arg(&first)
                .arg(&self.parent)
                .arg(&mut self.labels)
                .arg(&mut self.comp_min);
        })?;
        gpu.clear("the absorbed ghost labels", &mut self.absorbed)?;
        gpu.sync("cc local labelling")
    }

    fn boundary_roots(&mut self) -> Result<Vec<u32>> {
        let cuts = self.rows.cut_own.len() as u64;
        if cuts == 0 {
            return Ok(Vec::new());
        }
        let (gpu, n) = (self.gpu, self.n);
        let mut flags = gpu.zeros::<u32>("boundary flags", n as usize)?;
        let mut roots = gpu.zeros::<u32>("boundary roots", n as usize)?;
        let mut count = gpu.zeros::<u64>("boundary count", 1)?;
        gpu.launch(&self.kernels["cc_mark_boundary"], grid(cuts), |b| {
            b.arg(&self.cut_own)
                .arg(&cuts)
                .arg(&self.parent)
                .arg(&mut flags);
        })?;
        gpu.launch(&self.kernels["cc_list_flagged"], grid(n.into()), |b| {
            b.arg(&flags).arg(&n).arg(&mut roots).arg(&mut count);
        })?;
        let count = gpu.download("boundary count", &count, 1)?[0] as usize;
        let mut roots = gpu.download("boundary roots", &roots, count)?;
        roots.par_sort_unstable();
        Ok(roots)
    }

    fn refresh_ghosts(&mut self, _: &World) -> Result<u64> {
        let gpu = self.gpu;
        let plan = &self.rows.ghosts;
        let count = plan.send_local.len() as u64;
        if count > 0 {
            gpu.launch(&self.kernels["cc_gather"], grid(count), |b| {
                b.arg(&self.send_local)
                    .arg(&count)
                    .arg(&self.labels)
                    .arg(&mut self.send);
            })?;
        }
        self.exchange
            .alltoallv(&self.send, &plan.send_counts, &mut self.ghost_labels)?;
        Ok(plan.refresh_bytes(8))
    }

    fn absorb_cut_edges(&mut self) -> Result<()> {
        let (gpu, ghosts) = (self.gpu, self.rows.ghosts.ids.len() as u64);
        let cuts = self.rows.cut_own.len() as u64;
        if cuts == 0 {
            return Ok(());
        }
        // Only cut edges to ghosts whose label changed: what the others gave is already in
        // `comp_min`, which only falls.
        gpu.launch(&self.kernels["cc_changed_ghosts"], grid(ghosts), |b| {
            b.arg(&self.ghost_labels)
                .arg(&ghosts)
                .arg(&mut self.absorbed)
                .arg(&mut self.changed_ghosts);
        })?;
        gpu.launch(&self.kernels["cc_cut_min"], grid(cuts), |b| {
            b.arg(&self.cut_own)
                .arg(&self.cut_ghost)
                .arg(&cuts)
                .arg(&self.changed_ghosts)
                .arg(&self.parent)
                .arg(&self.ghost_labels)
                .arg(&mut self.comp_min);
        })
    }

    fn component_labels(&mut self, vertices: &[u32]) -> Result<Vec<u64>> {
        if vertices.is_empty() {
            return Ok(Vec::new());
        }
        let gpu = self.gpu;
        let count = vertices.len() as u64;
        let asked = gpu.upload("vertices", vertices)?;
        let mut out = gpu.zeros::<u64>("component labels", vertices.len())?;
        gpu.launch(&self.kernels["cc_component_labels"], grid(count), |b| {
            b.arg(&asked)
                .arg(&count)
                .arg(&self.parent)
                .arg(&self.comp_min)
                .arg(&mut out);
        })?;
        gpu.download("component labels", &out, vertices.len())
    }

    fn lower(&mut self, vertices: &[u32], labels: &[u64]) -> Result<()> {
        if vertices.is_empty() {
            return Ok(());
        }
        let gpu = self.gpu;
        let count = vertices.len() as u64;
        let (vertices, labels) = (
            gpu.upload("vertices", vertices)?,
            gpu.upload("labels", labels)?,
        );
        gpu.launch(&self.kernels["cc_lower"], grid(count), |b| {
            b.arg(&vertices)
                .arg(&labels)
                .arg(&count)
                .arg(&self.parent)
                .arg(&mut self.comp_min);
        })?;
        // The uploads are freed on return: wait for the kernel that reads them.
        gpu.sync("lower component labels")
    }

    fn relabel(&mut self) -> Result<u64> {
        if self.n == 0 {
            return Ok(0);
        }
        let (gpu, n) = (self.gpu, self.n);
        gpu.clear("the change count", &mut self.changed)?;
        gpu.launch(&self.kernels["cc_relabel"], grid(n.into()), |b| {
            b.arg(&n)
                .arg(&self.parent)
                .arg(&self.comp_min)
                .arg(&mut self.labels)
                .arg(&mut self.changed);
        })?;
        Ok(gpu.download("change count", &self.changed, 1)?[0])
    }

    fn labels(&self) -> Result<Vec<u64>> {
        self.gpu.download("labels", &self.labels, self.n as usize)
    }
}
