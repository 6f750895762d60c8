//! What a percolation run holds, checked before anything is allocated: per rank its slab's
//! per-site arrays (host memory on the CPU, device memory on a GPU), its face buffers, and
//! the rows of every sample it keeps; on rank 0 the gathered boundary graph. Refused with one
//! line naming the bytes needed and available and the largest L (or sample count) that fits.

use super::report::Row;
use super::Percolation;
use crate::device::memory::{check, largest_fitting, Place};
use crate::device::Selected;
use crate::error::{Error, Result};
use crate::harness::Harness;
use crate::lattice::clusters::SIZE_BINS;
use crate::lattice::engine::{check_slab_fits, slabs_fit};
use crate::lattice::{GpuSlab, Lattice, Slab};

/// Host bytes per slab site on the CPU: labels (8), the occupation mask and the next one
/// drawn while it is alive (2), the parents, the union-find's atomic parents and their
/// compressed copy (12), the cluster sizes of the tally (4).
const CPU_BYTES_PER_SITE: u64 = 8 + 2 + 12 + 4;

/// Device bytes per slab site on a GPU: the labelling's arrays and the mask.
const GPU_BYTES_PER_SITE: u64 = GpuSlab::BYTES_PER_SITE + 1;

/// Host bytes per site of a slab's two faces (their sites, roots, masks, ids, the halo from
/// above, the boundary's edges and nodes).
const FACE_BYTES: u64 = 64;

/// Rank 0's bytes per gathered face site: the boundary graph's nodes and edges as gathered,
/// and its union-find (ids, windings, touches, clusters, labels sent back).
const BOUNDARY_BYTES: u64 = 128;

/// Host bytes per kept sample: its row (grown by doubling, with the trials' copy) and the
/// histogram, and the report's columns of it.
const ROW_BYTES: u64 = 3 * std::mem::size_of::<Row>() as u64 + 2 * SIZE_BINS as u64 * 8 + 128;

/// The sizes a run would hold on this rank.
struct Need<'a> {
    cfg: &'a Percolation,
    ranks: u64,
    local_ranks: u64,
    root: bool,
    gpu: bool,
}

impl Need<'_> {
    /// The deck's lattice with side `l`: along every axis for a square or cubic lattice,
    /// along the axes other than 0 for a strip or bar (its length L_0 kept).
    fn lattice(&self, l: u64) -> Lattice {
        let lattice = self.cfg.lattice;
        let length = if lattice.length == lattice.l {
            l
        } else {
            lattice.length
        };
        Lattice {
            l,
            length,
            ..lattice
        }
    }

    /// Sites of the thickest slab and of a plane of the lattice of side `l`.
    fn slab(&self, l: u64) -> (u64, u64) {
        let lattice = self.lattice(l);
        let plane = l.saturating_pow(lattice.dim as u32 - 1);
        (
            lattice.length.div_ceil(self.ranks).saturating_mul(plane),
            plane,
        )
    }

    /// Host bytes per rank of this node at side `l` with `samples` per p (rank 0's share of
    /// the boundary graph and the written labels spread over its node's ranks).
    fn host(&self, l: u64, samples: u64) -> u64 {
        let (sites, plane) = self.slab(l);
        let per_site = if self.gpu { 0 } else { CPU_BYTES_PER_SITE };
        let rows = (self.cfg.p.len() as u64)
            .saturating_mul(samples)
            .saturating_mul(ROW_BYTES);
        let mut bytes = sites
            .saturating_mul(per_site)
            .saturating_add(plane.saturating_mul(2 * FACE_BYTES))
            .saturating_add(rows);
        if self.root {
            let faces = plane.saturating_mul(2 * self.ranks);
            let mut extra = faces.saturating_mul(BOUNDARY_BYTES);
            if self.cfg.write_labels {
                let plane = l.saturating_pow(self.cfg.lattice.dim as u32 - 1);
                let all = plane.saturating_mul(self.lattice(l).length);
                extra = extra.saturating_add(all.saturating_mul(8 * (self.cfg.p.len() as u64 + 1)));
            }
            bytes = bytes.saturating_add(extra / self.local_ranks);
        }
        bytes
    }

    /// Device bytes at side `l` (a GPU run).
    fn device(&self, l: u64) -> u64 {
        self.slab(l).0.saturating_mul(GPU_BYTES_PER_SITE)
    }

    /// Whether side `l` is too thick a slab for the labelling (2^31 sites per rank).
    fn too_thick(&self, l: u64) -> bool {
        !slabs_fit(self.lattice(l), self.ranks as usize)
    }

    /// What fits in `budget` host bytes per rank: the most samples at this L, or the largest
    /// L at this sample count.
    fn host_fitting(&self, budget: u64) -> String {
        let (l, samples) = (self.cfg.lattice.l, self.cfg.samples);
        if self.host(l, 1) <= budget {
            let most = largest_fitting(1, samples, budget, |s| self.host(l, s)).unwrap_or(1);
            return format!("at L = {l} the most samples per p that fit are {most}");
        }
        let bytes = |x: u64| {
            if self.too_thick(x) {
                u64::MAX
            } else {
                self.host(x, samples)
            }
        };
        self.side_fitting(
            largest_fitting(2, self.cfg.lattice.l, budget, bytes),
            samples,
        )
    }

    fn side_fitting(&self, side: Option<u64>, samples: u64) -> String {
        match side {
            Some(side) => format!(
                "the largest L that fits is {side} (at {} rank(s))",
                self.ranks
            ),
            None => format!("not even L = 2 fits with {samples} samples per p"),
        }
    }
}

/// Refuse a run whose lattice or samples cannot be held (every rank checks its own need;
/// the harness agrees on the outcome).
pub fn check_sizes(cfg: &Percolation, h: &Harness) -> Result<()> {
    let world = h.world;
    let slab = Slab::new(cfg.lattice, world.size(), world.rank()).map_err(Error::Unavailable)?;
    let need = Need {
        cfg,
        ranks: world.size() as u64,
        local_ranks: world.local_size() as u64,
        root: world.is_root(),
        gpu: matches!(h.device, Selected::Gpu(_)),
    };
    let (l, samples) = (cfg.lattice.l, cfg.samples);
    let what = format!(
        "percolation at {} ({} sites) with {samples} samples per p",
        cfg.lattice.sides(),
        cfg.lattice.sites()
    );
    check(
        &what,
        need.host(l, samples),
        Place::Host {
            ranks: world.local_size(),
        },
        |budget| need.host_fitting(budget),
    )?;
    if let Selected::Gpu(gpu) = &h.device {
        check(&what, need.device(l), Place::Gpu(gpu), |budget| {
            let bytes = |x: u64| {
                if need.too_thick(x) {
                    u64::MAX
                } else {
                    need.device(x)
                }
            };
            need.side_fitting(largest_fitting(2, l, budget, bytes), samples)
        })?;
    }
    check_slab_fits(&slab)
}
