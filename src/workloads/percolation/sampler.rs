//! One percolation sample on this rank's device: draw the occupation, label it (timed, the
//! slowest rank's seconds), and take the cluster statistics.

use crate::comm::{Op, World};
use crate::device::{Gpu, Selected};
use crate::error::Result;
use crate::harness::Harness;
use crate::lattice::gpu::draw_mask_gpu;
use crate::lattice::occupation::{draw_mask, threshold};
use crate::lattice::{ClusterStats, CpuSlab, GpuSlab, Labeller, Occupation, Slab};
use cudarc::driver::CudaSlice;
use std::time::Instant;

/// A sample's labelling time (the slowest rank's), with its boundary merge's seconds, the
/// most bytes one rank received in it, and the most seconds one rank spent on its own part
/// of it (the joins, without the waits for other ranks).
#[derive(Clone, Copy)]
pub struct Timing {
    pub seconds: f64,
    pub merge_seconds: f64,
    pub merge_bytes: u64,
    pub merge_join_seconds: f64,
}

pub enum Sampler<'g> {
    Cpu {
        labeller: Labeller<CpuSlab>,
        mask: Vec<u8>,
    },
    Gpu {
        gpu: &'g Gpu,
        labeller: Box<Labeller<GpuSlab<'g>>>,
        mask: CudaSlice<u8>,
        /// The device's copy rate (`Gpu::copy_rate`), measured before the buffers.
        copy_rate: Option<f64>,
    },
}

/// Bytes per site a labelling moves at the least: the site's occupation mask read (one
/// byte) and its label written (eight).
pub const LABEL_FLOOR_BYTES: f64 = 9.0;

/// The labelling's memory floor: its least traffic at the device's measured copy rate.
#[derive(Clone, Copy)]
pub struct Floor {
    /// The slowest device's copy rate (bytes per second, read plus written).
    pub copy_rate: f64,
    /// Nanoseconds per lattice site the slowest rank needs to move `LABEL_FLOOR_BYTES` for
    /// each of its sites at that rate.
    pub ns_per_site: f64,
}

impl<'g> Sampler<'g> {
    /// The buffers for `slab` on the run's device (collective: a GPU short of memory fails
    /// every rank alike).
    pub fn new(h: &'g Harness, slab: Slab) -> Result<Self> {
        let made = match &h.device {
            Selected::Cpu => Labeller::new(slab, CpuSlab::new(slab)).map(|labeller| Sampler::Cpu {
                labeller,
                mask: Vec::new(),
            }),
            Selected::Gpu(gpu) => Self::on_gpu(gpu, slab),
        };
        h.world.agree(made)
    }

    /// The GPU's buffers (`sizes::check_sizes` checked that they fit).
    fn on_gpu(gpu: &'g Gpu, slab: Slab) -> Result<Self> {
        let copy_rate = gpu.copy_rate();
        Ok(Sampler::Gpu {
            copy_rate,
            gpu,
            labeller: Box::new(Labeller::new(slab, GpuSlab::new(gpu, slab)?)?),
            mask: gpu.zeros("lattice masks", slab.sites())?,
        })
    }

    /// Draw sample `key` at probability `p`, label it and count its clusters: the statistics
    /// and the labelling's timing (slowest rank). Collective.
    pub fn sample(
        &mut self,
        world: &World,
        kind: Occupation,
        key: u64,
        p: f64,
    ) -> Result<(ClusterStats, Timing)> {
        let t = threshold(p);
        let (stats, seconds, labelled) = match self {
            Sampler::Cpu { labeller, mask } => {
                *mask = draw_mask(&labeller.slab, kind, key, t);
                let started = Instant::now();
                let labelled = labeller.label(world, mask)?;
                let seconds = started.elapsed().as_secs_f64();
                (labeller.statistics(world, mask, &labelled)?, seconds, labelled)
            }
            Sampler::Gpu {
                gpu,
                labeller,
                mask,
                ..
            } => {
                draw_mask_gpu(gpu, &labeller.slab, kind, key, t, mask)?;
                gpu.sync("draw the occupation")?;
                let started = Instant::now();
                let labelled = labeller.label(world, mask)?;
                let seconds = started.elapsed().as_secs_f64();
                (labeller.statistics(world, mask, &labelled)?, seconds, labelled)
            }
        };
        let timing = Timing {
            seconds: world.allreduce(seconds, Op::Max),
            merge_seconds: world.allreduce(labelled.merge_seconds, Op::Max),
            merge_bytes: world.allreduce(labelled.merge_bytes, Op::Max),
            merge_join_seconds: world.allreduce(labelled.merge_join_seconds, Op::Max),
        };
        Ok((stats, timing))
    }

    /// The labelling's memory floor on GPUs (None on the CPU, or where a device could not
    /// measure its copy rate). Collective.
    pub fn floor(&self, world: &World, lattice_sites: u64) -> Option<Floor> {
        let Sampler::Gpu {
            labeller,
            copy_rate,
            ..
        } = self
        else {
            return None;
        };
        let rate = world.allreduce(copy_rate.unwrap_or(0.0), Op::Min);
        let sites = world.allreduce(labeller.slab.sites() as u64, Op::Max);
        (rate > 0.0).then(|| Floor {
            copy_rate: rate,
            ns_per_site: LABEL_FLOOR_BYTES * sites as f64 / rate / lattice_sites as f64 * 1e9,
        })
    }

    /// The last sample's labels, gathered on rank 0 in site order (empty elsewhere).
    pub fn gather_labels(&self, world: &World) -> Result<Vec<u64>> {
        match self {
            Sampler::Cpu { labeller, .. } => world.gatherv_root(&labeller.device.labels),
            Sampler::Gpu { gpu, labeller, .. } => {
                let n = labeller.slab.sites();
                world.gatherv_root(&gpu.download("labels", &labeller.device.labels, n)?)
            }
        }
    }
}
