//! Wolff clusters on a GPU (kernels/spin.cu, "Wolff cluster growth"): the cluster grows a
//! level at a time from the seed site, a thread per frontier site, in the byte field of
//! `GpuSpins`; sites reached across a slab face go to their rank through the host (an
//! all-to-all per level, as `CpuSpins::wolff` does). The seed site, the new state and every
//! bond's activation are the CPU's draws, and the cluster (the seed's component of the active
//! satisfied bonds) does not depend on the order of growth, so each cluster, and the chain, is
//! the CPU's bit for bit on any rank count.

use super::cpu::wolff_states;
use super::model::{wolff_seed, wolff_sweep, Model};
use crate::comm::{Op, World};
use crate::device::{gpu_error, grid, Gpu, Kernel};
use crate::error::Result;
use crate::lattice::Slab;
use cudarc::driver::{CudaSlice, PushKernelArg};

const FILE: &str = "spin.cu";

/// A slab's frontiers and outboxes for Wolff growth on a GPU.
pub struct GpuWolff<'h> {
    gpu: &'h Gpu,
    slab: Slab,
    /// Local indices of the sites claimed in the last level, and of the next level's.
    frontier: CudaSlice<u64>,
    next: CudaSlice<u64>,
    /// Global indices for the rank below (the first plane's worth) and above (the second).
    out: CudaSlice<u64>,
    /// [next frontier, to the rank below, to the rank above].
    counts: CudaSlice<u64>,
    grow: Kernel,
    receive: Kernel,
}

/// Bytes of GPU memory per site of the slab that Wolff's frontiers take.
pub const BYTES_PER_SITE: u64 = 16;

impl<'h> GpuWolff<'h> {
    pub fn new(gpu: &'h Gpu, slab: Slab) -> Result<Self> {
        let f = |name: &str| gpu.function(FILE, name);
        // A site joins a frontier once per cluster, and crosses each face at most once.
        Ok(GpuWolff {
            gpu,
            slab,
            frontier: gpu.zeros("Wolff frontier", slab.sites())?,
            next: gpu.zeros("Wolff frontier", slab.sites())?,
            out: gpu.zeros("Wolff outboxes", 2 * slab.plane())?,
            counts: gpu.zeros("Wolff counts", 3)?,
            grow: f("spin_wolff_grow")?,
            receive: f("spin_wolff_receive")?,
        })
    }

    /// One Wolff sweep of the byte `field` (collective), as `CpuSpins::wolff`: `clusters`
    /// clusters, cluster k keyed by draw(key, k). Returns the sites flipped.
    pub fn sweep(
        &mut self,
        world: &World,
        field: &mut CudaSlice<u8>,
        model: &Model,
        threshold: u64,
        key: u64,
        clusters: u64,
    ) -> Result<u64> {
        wolff_sweep(key, clusters, |k| {
            self.cluster(world, field, model, threshold, k)
        })
    }

    /// Grow and flip one cluster (as `CpuSpins::wolff_cluster`); returns its size.
    fn cluster(
        &mut self,
        world: &World,
        field: &mut CudaSlice<u8>,
        model: &Model,
        threshold: u64,
        key: u64,
    ) -> Result<u64> {
        let (slab, gpu) = (self.slab, self.gpu);
        let (lattice, plane) = (slab.lattice, slab.plane());
        let seed = wolff_seed(key, lattice.sites());
        let mine = slab.local(seed);
        let held = match mine {
            Some(i) => Some(gpu.item("the Wolff seed's spin", field, plane + i)?),
            None => None,
        };
        let (old, new) = wolff_states(world, key, held, model.q);
        let mut level = 0u64;
        if let Some(i) = mine {
            let upload = |what: &str, e| gpu_error(format!("upload the Wolff seed's {what}"), e);
            gpu.stream
                .memcpy_htod(&[new], &mut field.slice_mut(plane + i..plane + i + 1))
                .map_err(|e| upload("spin", e))?;
            gpu.stream
                .memcpy_htod(&[i as u64], &mut self.frontier.slice_mut(0..1))
                .map_err(|e| upload("site", e))?;
            level = 1;
        }
        let mut size = level;
        let (old, new) = (u32::from(old), u32::from(new));
        loop {
            gpu.stream
                .memset_zeros(&mut self.counts)
                .map_err(|e| gpu_error("clear the Wolff counts", e))?;
            if level > 0 {
                self.level(field, model, level, (threshold, key), (old, new))?;
            }
            let counts = gpu.download("Wolff counts", &self.counts, 3)?;
            level = counts[0];
            if slab.ranks > 1 {
                level = self.trade(world, field, [counts[1], counts[2]], (old, new))?;
            }
            size += level;
            std::mem::swap(&mut self.frontier, &mut self.next);
            if world.allreduce(level, Op::Sum) == 0 {
                return Ok(world.allreduce(size, Op::Sum));
            }
        }
    }

    /// Queue one level of growth from the `size` sites of the frontier.
    fn level(
        &mut self,
        field: &mut CudaSlice<u8>,
        model: &Model,
        size: u64,
        (threshold, key): (u64, u64),
        (old, new): (u32, u32),
    ) -> Result<()> {
        let slab = self.slab;
        let (dim, l, plane) = (model.dim as u32, slab.lattice.l, slab.plane() as u64);
        let (offset, sites, all) = (slab.offset(), slab.sites() as u64, slab.lattice.sites());
        self.gpu.launch(&self.grow, grid(size), |b| {
            b.arg(field)
                .arg(&self.frontier)
                .arg(&size)
                .arg(&mut self.next)
                .arg(&mut self.out)
                .arg(&mut self.counts)
                .arg(&dim)
                .arg(&l)
                .arg(&plane)
                .arg(&offset)
                .arg(&sites)
                .arg(&all)
                .arg(&key)
                .arg(&threshold)
                .arg(&old)
                .arg(&new);
        })
    }

    /// Send the outboxes (`sent` sites to the rank below and above) to their ranks, claim
    /// what came here (collective). Returns the next frontier's size.
    fn trade(
        &mut self,
        world: &World,
        field: &mut CudaSlice<u8>,
        sent: [u64; 2],
        (old, new): (u32, u32),
    ) -> Result<u64> {
        let (slab, gpu, plane) = (self.slab, self.gpu, self.slab.plane());
        let mut outbox: Vec<Vec<u64>> = vec![Vec::new(); world.size()];
        for (face, (rank, count)) in [(slab.below(), sent[0]), (slab.above(), sent[1])]
            .into_iter()
            .enumerate()
        {
            if count > 0 {
                let from = face * plane;
                let got = gpu
                    .stream
                    .clone_dtoh(&self.out.slice(from..from + count as usize))
                    .map_err(|e| gpu_error("copy a Wolff outbox to the host", e))?;
                outbox[rank].extend(got);
            }
        }
        let counts: Vec<usize> = outbox.iter().map(Vec::len).collect();
        let got = world.alltoallv(&outbox.concat(), &counts)?;
        if !got.is_empty() {
            let size = got.len() as u64;
            let got = gpu.upload("Wolff sites from other ranks", &got)?;
            let (plane, offset) = (plane as u64, slab.offset());
            gpu.launch(&self.receive, grid(size), |b| {
                b.arg(field)
                    .arg(&got)
                    .arg(&size)
                    .arg(&mut self.next)
                    .arg(&mut self.counts)
                    .arg(&plane)
                    .arg(&offset)
                    .arg(&old)
                    .arg(&new);
            })?;
        }
        Ok(gpu.download("Wolff counts", &self.counts, 1)?[0])
    }
}
