//! The updates on a GPU (kernels/spin.cu): the spins, their ghost planes, the bond masks and
//! the cluster labels stay in GPU memory; the ghost planes go GPU to GPU through the exchange
//! layer (`halo::exchange_gpu`: NCCL, or staged through MPI). Only the tallies (q + 1 words)
//! and checkpoints come to the host. The decisions are the CPU's (src/workloads/spin/cpu.rs) bit for
//! bit. Ising Metropolis on sides of whole words runs multi-spin coded (`msc`), Wolff grows
//! its clusters in the byte field (`wolff_gpu`).

use super::model::Model;
use super::msc::{GpuMsc, Layout};
use super::wolff_gpu::{self, GpuWolff};
use super::Update;
use crate::comm::gpu::GpuExchange;
use crate::comm::{GpuTransport, World};
use crate::device::{blocks, gpu_error, grid, Gpu, Kernel, THREADS};
use crate::error::Result;
use crate::lattice::{halo, GpuSlab, Labeller, Slab};
use cudarc::driver::{CudaSlice, PushKernelArg};

const FILE: &str = "spin.cu";

/// Blocks of the tally's grid-stride loop, at most.
const TALLY_BLOCKS: u64 = 4096;

/// A slab of spins in GPU memory.
pub struct GpuSpins<'h> {
    gpu: &'h Gpu,
    slab: Slab,
    exchange: GpuExchange<'h>,
    field: CudaSlice<u8>,
    metropolis: Kernel,
    bonds: Kernel,
    clusters: Kernel,
    tally: Kernel,
    start: Kernel,
    /// The Metropolis thresholds of the current β.
    table: CudaSlice<u64>,
    /// Swendsen-Wang: the labelling and its bond masks.
    labeller: Option<Box<Labeller<GpuSlab<'h>>>>,
    mask: CudaSlice<u8>,
    /// Ising Metropolis, multi-spin coded: the spins live there instead of `field`.
    packed: Option<GpuMsc<'h>>,
    wolff: Option<GpuWolff<'h>>,
}

impl<'h> GpuSpins<'h> {
    /// Device bytes the spins of `slab` need for `update` of `model` (checked by
    /// `spin::sizes` before any is allocated).
    pub fn bytes_needed(slab: &Slab, model: &Model, update: Update) -> u64 {
        let layout = Layout::of(slab).filter(|_| model.ising && update == Update::Metropolis);
        let sites = slab.sites() as u64;
        let field = halo::field_len(slab).next_multiple_of(4) as u64;
        match (update, layout) {
            (Update::SwendsenWang, _) => field + sites * (1 + GpuSlab::BYTES_PER_SITE),
            (Update::Wolff, _) => field + sites * wolff_gpu::BYTES_PER_SITE,
            (Update::Metropolis, Some(layout)) => 4 * layout.field_words() as u64,
            (Update::Metropolis, None) => field,
        }
    }

    /// Spins for `slab`, all in state 0, ready for `update` of `model` (the Swendsen-Wang
    /// labelling, Wolff's frontiers, or the packed spins of Ising Metropolis where the side
    /// allows). Collective (the exchange is opened).
    pub fn new(
        world: &'h World,
        gpu: &'h Gpu,
        transport: GpuTransport,
        slab: Slab,
        (model, update): (&Model, Update),
    ) -> Result<Self> {
        let clusters = update == Update::SwendsenWang;
        let layout = Layout::of(&slab).filter(|_| model.ising && update == Update::Metropolis);
        let f = |name: &str| gpu.function(FILE, name);
        let labeller = if clusters {
            Some(Box::new(Labeller::new(slab, GpuSlab::new(gpu, slab)?)?))
        } else {
            None
        };
        // Whole words for Wolff's compare-and-swap on bytes; no bytes when packed.
        let bytes = if layout.is_some() {
            1
        } else {
            halo::field_len(&slab).next_multiple_of(4)
        };
        Ok(GpuSpins {
            gpu,
            slab,
            exchange: GpuExchange::open(world, gpu, transport)?,
            field: gpu.zeros("spins", bytes)?,
            metropolis: f("spin_metropolis")?,
            bonds: f("spin_bonds")?,
            clusters: f("spin_clusters")?,
            tally: f("spin_tally")?,
            start: f("spin_start")?,
            table: gpu.zeros("metropolis thresholds", 1)?,
            labeller,
            mask: gpu.zeros("bond masks", if clusters { slab.sites() } else { 1 })?,
            packed: layout
                .map(|layout| GpuMsc::new(gpu, slab, layout))
                .transpose()?,
            wolff: (update == Update::Wolff)
                .then(|| GpuWolff::new(gpu, slab))
                .transpose()?,
        })
    }

    /// Every site to its start state (`model::start_state`; cold is the start stream of
    /// one state).
    pub fn reset(&mut self, hot: Option<u64>, q: u32) -> Result<()> {
        if let Some(packed) = &mut self.packed {
            return packed.reset(hot);
        }
        let (key, q) = hot.map_or((0, 1), |key| (key, q));
        let (n, plane, offset) = (self.n(), self.slab.plane() as u64, self.slab.offset());
        self.gpu.launch(&self.start, grid(n), |b| {
            b.arg(&mut self.field)
                .arg(&n)
                .arg(&plane)
                .arg(&offset)
                .arg(&key)
                .arg(&q);
        })
    }

    fn n(&self) -> u64 {
        self.slab.sites() as u64
    }

    /// The slab's spins, on the host.
    pub fn local(&self) -> Result<Vec<u8>> {
        if let Some(packed) = &self.packed {
            return packed.local();
        }
        let plane = self.slab.plane();
        self.gpu
            .stream
            .clone_dtoh(&self.field.slice(plane..plane + self.slab.sites()))
            .map_err(|e| gpu_error("copy the spins to the host", e))
    }

    /// Replace the slab's spins (a checkpoint's).
    pub fn set_local(&mut self, spins: &[u8]) -> Result<()> {
        if let Some(packed) = &mut self.packed {
            return packed.set_local(spins);
        }
        let plane = self.slab.plane();
        self.gpu
            .stream
            .memcpy_htod(spins, &mut self.field.slice_mut(plane..plane + spins.len()))
            .map_err(|e| gpu_error("upload the spins", e))
    }

    /// Use the Metropolis thresholds of a new β.
    pub fn set_table(&mut self, table: &[u64]) -> Result<()> {
        self.table = self.gpu.upload("metropolis thresholds", table)?;
        Ok(())
    }

    /// One checkerboard sweep: colour 0, then colour 1, each with its key (collective).
    pub fn metropolis(&mut self, model: &Model, keys: [u64; 2]) -> Result<()> {
        if let Some(packed) = &mut self.packed {
            return packed.metropolis(&self.exchange, &self.table, keys);
        }
        let lattice = self.slab.lattice;
        let (dim, l, plane) = (model.dim as u32, lattice.l, self.slab.plane() as u64);
        let (half, first, q) = (self.n() / 2, self.slab.first, model.q);
        for (colour, key) in keys.into_iter().enumerate() {
            halo::exchange_gpu(&self.exchange, &self.slab, &mut self.field, self.gpu)?;
            let colour = colour as u32;
            self.gpu.launch(&self.metropolis, grid(half), |b| {
                b.arg(&mut self.field)
                    .arg(&half)
                    .arg(&dim)
                    .arg(&l)
                    .arg(&plane)
                    .arg(&first)
                    .arg(&colour)
                    .arg(&key)
                    .arg(&self.table)
                    .arg(&q);
            })?;
        }
        Ok(())
    }

    /// One Swendsen-Wang sweep (collective), as `CpuSpins::swendsen_wang`.
    pub fn swendsen_wang(
        &mut self,
        world: &World,
        model: &Model,
        threshold: u64,
        bonds: u64,
        clusters: u64,
    ) -> Result<()> {
        halo::exchange_gpu(&self.exchange, &self.slab, &mut self.field, self.gpu)?;
        let (n, dim, l) = (self.n(), model.dim as u32, self.slab.lattice.l);
        let (plane, offset, q) = (self.slab.plane() as u64, self.slab.offset(), model.q);
        self.gpu.launch(&self.bonds, grid(n), |b| {
            b.arg(&self.field)
                .arg(&mut self.mask)
                .arg(&n)
                .arg(&dim)
                .arg(&l)
                .arg(&plane)
                .arg(&offset)
                .arg(&bonds)
                .arg(&threshold);
        })?;
        let labeller = self.labeller.as_mut().expect("spins made for clusters");
        labeller.label(world, &self.mask)?;
        let labels = &labeller.device.labels;
        self.gpu.launch(&self.clusters, grid(n), |b| {
            b.arg(&mut self.field)
                .arg(labels)
                .arg(&n)
                .arg(&plane)
                .arg(&clusters)
                .arg(&q);
        })
    }

    /// As `CpuSpins::tally` (collective: refreshes the ghost planes).
    pub fn tally(&mut self, model: &Model) -> Result<Vec<u64>> {
        if let Some(packed) = &mut self.packed {
            return packed.tally(&self.exchange, model);
        }
        halo::exchange_gpu(&self.exchange, &self.slab, &mut self.field, self.gpu)?;
        let (n, dim, l) = (self.n(), model.dim as u32, self.slab.lattice.l);
        let (plane, q) = (self.slab.plane() as u64, model.q);
        let mut counts = self.gpu.zeros::<u64>("spin tallies", q as usize + 1)?;
        let cfg = blocks(n.div_ceil(u64::from(THREADS)).min(TALLY_BLOCKS), THREADS);
        self.gpu.launch(&self.tally, cfg, |b| {
            b.arg(&self.field)
                .arg(&n)
                .arg(&dim)
                .arg(&l)
                .arg(&plane)
                .arg(&q)
                .arg(&mut counts);
        })?;
        self.gpu.download("spin tallies", &counts, q as usize + 1)
    }

    /// One Wolff sweep (collective), as `CpuSpins::wolff`; returns the sites flipped.
    pub fn wolff(
        &mut self,
        world: &World,
        model: &Model,
        threshold: u64,
        key: u64,
        clusters: u64,
    ) -> Result<u64> {
        let wolff = self.wolff.as_mut().expect("spins made for Wolff");
        wolff.sweep(world, &mut self.field, model, threshold, key, clusters)
    }

    /// Wait for the queued sweeps (for timing).
    pub fn sync(&self) -> Result<()> {
        self.gpu.sync("spin sweeps")
    }
}
