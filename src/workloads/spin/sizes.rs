//! What a spin run holds, checked before anything is allocated: per rank its slab's spins
//! and their per-site arrays (host memory on the CPU, device memory on a GPU; the rewired
//! lattice's graph), the checkpoint's copies of the spins, and every measurement of every β;
//! on rank 0 the boundary graph of the Swendsen-Wang labelling and the stored configurations.
//! Refused with one line naming the bytes needed and available and the largest L (or the
//! most sweeps) that fits.

use super::gpu::GpuSpins;
use super::{Spin, Update};
use crate::device::memory::{check, largest_fitting, Place};
use crate::device::Selected;
use crate::error::{Error, Result};
use crate::harness::Harness;
use crate::lattice::engine::{check_slab_fits, slabs_fit};
use crate::lattice::{Lattice, Slab};

/// Host bytes per slab site on the CPU: the spins and the field a Metropolis half-sweep
/// writes (or Swendsen-Wang's bond masks) (2), a checkpoint's copy of the spins and the
/// resumed ones (2).
const CPU_BYTES_PER_SITE: u64 = 2 + 2;

/// Host bytes per slab site of the Swendsen-Wang labelling on the CPU: labels (8), the
/// parents, the union-find's atomic parents and their compressed copy (12), the cluster
/// sizes (4).
const LABELLING_BYTES_PER_SITE: u64 = 8 + 12 + 4;

/// Host bytes per slab site on a GPU: a checkpoint's download of the spins, the resumed
/// ones, and the packing of multi-spin coded ones.
const GPU_HOST_BYTES_PER_SITE: u64 = 4;

/// Host bytes per site of a slab's two faces in the labelling (sites, roots, masks, ids, the
/// halo from above, the boundary's edges and nodes).
const FACE_BYTES: u64 = 64;

/// Rank 0's bytes per gathered face site of the labelling's boundary graph.
const BOUNDARY_BYTES: u64 = 128;

/// Host bytes per measurement of a β: the energy and order series (16), their padded copies
/// in the report (16), the powers and bins of the summaries (32).
const MEASUREMENT_BYTES: u64 = 64;

/// Host bytes per vertex of the rewired lattice of dimension `dim`: 8 per adjacency entry
/// (2·dim, each edge in both rows) and 48 per vertex as the graph layer counts them, the
/// colours, spins and cut offsets (16), and the checkpoint's copies (2).
fn rewired_bytes_per_site(dim: u64) -> u64 {
    16 * dim + 48 + 16 + 2
}

/// The sizes a run would hold on this rank.
struct Need<'a> {
    cfg: &'a Spin,
    ranks: usize,
    rank: usize,
    local_ranks: u64,
    gpu: bool,
}

impl Need<'_> {
    fn lattice(&self, l: u64) -> Option<Lattice> {
        Lattice::new(self.cfg.lattice.dim, l, true).ok()
    }

    /// This rank's slab of the lattice of side `l`, if there is one.
    fn slab(&self, l: u64) -> Option<Slab> {
        Slab::new(self.lattice(l)?, self.ranks, self.rank).ok()
    }

    fn clusters(&self) -> bool {
        self.cfg.update == Update::SwendsenWang && self.cfg.rewiring.is_none()
    }

    /// Host bytes per rank of this node at side `l` with `measurements` per β (rank 0's
    /// extra spread over its node's ranks); `u64::MAX` where side `l` cannot run.
    fn host(&self, l: u64, measurements: u64) -> u64 {
        let Some(lattice) = self.lattice(l) else {
            return u64::MAX;
        };
        let betas = self.cfg.betas.len() as u64;
        let records = betas
            .saturating_mul(measurements)
            .saturating_mul(MEASUREMENT_BYTES);
        let mut extra = 0u64;
        if self.cfg.write_configuration {
            extra = betas.saturating_mul(lattice.sites()).saturating_mul(2);
        }
        let own = if self.cfg.rewiring.is_some() {
            let sites = lattice.sites().div_ceil(self.ranks as u64);
            sites.saturating_mul(rewired_bytes_per_site(lattice.dim as u64))
        } else {
            let Some(slab) = self.slab(l) else {
                return u64::MAX;
            };
            let (sites, plane) = (slab.sites() as u64, slab.plane() as u64);
            let mut per_site = if self.gpu {
                GPU_HOST_BYTES_PER_SITE
            } else {
                CPU_BYTES_PER_SITE
            };
            let mut faces = 2 * plane;
            if self.clusters() {
                faces = faces.saturating_mul(FACE_BYTES);
                let boundary = (2 * plane).saturating_mul(self.ranks as u64);
                extra = extra.saturating_add(boundary.saturating_mul(BOUNDARY_BYTES));
                if !self.gpu {
                    per_site += LABELLING_BYTES_PER_SITE;
                }
            }
            sites.saturating_mul(per_site).saturating_add(faces)
        };
        let root = if self.rank == 0 {
            extra / self.local_ranks
        } else {
            0
        };
        own.saturating_add(records).saturating_add(root)
    }

    /// Device bytes at side `l` (a GPU run of the regular lattice).
    fn device(&self, l: u64) -> u64 {
        self.slab(l).map_or(u64::MAX, |slab| {
            GpuSpins::bytes_needed(&slab, &self.cfg.model, self.cfg.update)
        })
    }

    /// Whether side `l` gives a slab too thick for the labelling (2^31 sites per rank).
    fn too_thick(&self, l: u64) -> bool {
        self.clusters() && self.slab(l).is_none_or(|s| !slabs_fit(s.lattice, s.ranks))
    }

    /// The largest side below the run's with `bytes(side)` within `budget`, as advice.
    fn side_fitting(&self, budget: u64, bytes: impl Fn(u64) -> u64) -> String {
        let lo = (self.ranks as u64).max(2);
        let bytes = |x: u64| {
            if self.too_thick(x) {
                u64::MAX
            } else {
                bytes(x)
            }
        };
        let even = self.cfg.update == Update::Metropolis || self.cfg.rewiring.is_some();
        let side = largest_fitting(lo, self.cfg.lattice.l, budget, bytes)
            .map(|x| if even { x - x % 2 } else { x })
            .filter(|&x| x >= lo);
        match side {
            Some(x) => format!("the largest L that fits is {x} (at {} rank(s))", self.ranks),
            None => format!("not even L = {lo} fits at {} rank(s)", self.ranks),
        }
    }

    /// What fits in `budget` host bytes per rank: the most sweeps at this L, or the largest L.
    fn host_fitting(&self, budget: u64) -> String {
        let (l, measurements) = (self.cfg.lattice.l, self.cfg.measurements());
        if self.host(l, 0) <= budget {
            let most = largest_fitting(0, measurements, budget, |m| self.host(l, m)).unwrap_or(0);
            return format!(
                "at L = {l} the most sweeps per beta that fit are {}",
                most * self.cfg.measure_every
            );
        }
        self.side_fitting(budget, |x| self.host(x, measurements))
    }
}

/// Refuse a run whose lattice or measurements cannot be held (every rank checks its own
/// need; the harness agrees on the outcome).
pub fn check_sizes(cfg: &Spin, h: &Harness) -> Result<()> {
    let world = h.world;
    let slab = match cfg.rewiring {
        None => {
            Some(Slab::new(cfg.lattice, world.size(), world.rank()).map_err(Error::Unavailable)?)
        }
        Some(_) => None,
    };
    let need = Need {
        cfg,
        ranks: world.size(),
        rank: world.rank(),
        local_ranks: world.local_size() as u64,
        gpu: matches!(h.device, Selected::Gpu(_)),
    };
    let l = cfg.lattice.l;
    let what = format!(
        "spin at L = {l} ({} sites) with {} sweeps of {} beta(s)",
        cfg.lattice.sites(),
        cfg.chain_sweeps(),
        cfg.betas.len()
    );
    check(
        &what,
        need.host(l, cfg.measurements()),
        Place::Host {
            ranks: world.local_size(),
        },
        |budget| need.host_fitting(budget),
    )?;
    let Some(slab) = slab else {
        return Ok(());
    };
    if let Selected::Gpu(gpu) = &h.device {
        check(&what, need.device(l), Place::Gpu(gpu), |budget| {
            need.side_fitting(budget, |x| need.device(x))
        })?;
    }
    if need.clusters() {
        check_slab_fits(&slab)?;
    }
    Ok(())
}
