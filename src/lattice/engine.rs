//! The labelling engine: one driver for both devices (as the seed's hierarchical scheme,
//! with the slab as the tile): label each slab locally (`SlabDevice::label_box`), bring the
//! roots of its face sites to the host, join the slabs and the periodic wraps through their
//! boundary graphs (`boundary`), merged pairwise up a tree of ranks (`merge`), and relabel
//! each slab from the labels of its nodes.
//! Labels are canonical: the smallest global site index in the cluster (`NO_LABEL` for a
//! vacant site), so they are the same for every rank count and device.
//!
//! The relabelling's trick: a local root needs no table of its own. The root of node k gets
//! the parent `ROOT_FLAG | k` (a root's parent is itself, so nothing is lost); a site whose
//! root's parent carries the flag takes entry k of the nodes' labels, any other site the
//! global index of its root. Slabs therefore hold fewer than 2^31 sites.

use super::boundary::{self, Faces};
use super::clusters::ClusterStats;
use super::merge::{self, Final};
use super::{Lattice, Slab};
use crate::comm::World;
use crate::error::{Error, Result};

/// Marks the parent entry of a root that is a node of the boundary graph (see the header).
pub const ROOT_FLAG: u32 = 1 << 31;

/// The local phases of the labelling on one device; the parents and labels stay on it.
pub trait SlabDevice {
    /// The bond masks as this device holds them (see `occupation`).
    type Mask: ?Sized;
    /// Unite the bonds inside the slab and compress: every site's parent is its root, the
    /// smallest local index of its cluster within the slab.
    fn label_box(&mut self, mask: &Self::Mask) -> Result<()>;
    /// The root (`boundary::NO_ROOT` when vacant) and the mask of each face site.
    fn face_roots(&mut self, mask: &Self::Mask, faces: &Faces) -> Result<(Vec<u32>, Vec<u8>)>;
    /// Final labels: sites under node root `roots[k]` take `labels[k]`, the others the global
    /// index of their root, vacant sites `NO_LABEL`. Flags the node roots' parents.
    fn relabel(&mut self, mask: &Self::Mask, roots: &[u32], labels: &[u64]) -> Result<()>;
    /// The slab's interior clusters (roots not flagged) tallied, and the local size of each
    /// node root in `roots`.
    fn tally(&mut self, mask: &Self::Mask, roots: &[u32]) -> Result<(ClusterStats, Vec<u64>)>;
}

/// A labelling's boundary graph, kept for its statistics.
pub struct Labelled {
    /// This rank's node roots (local indices, ascending).
    roots: Vec<u32>,
    /// Each node's cluster label and percolation bits.
    finals: Vec<Final>,
    /// Seconds of the boundary merge, the bytes this rank received in it, and the seconds of
    /// its own work in it (`merge::MergeWork`: the waits for other ranks excluded).
    pub merge_seconds: f64,
    pub merge_bytes: u64,
    pub merge_join_seconds: f64,
}

/// Labels the clusters of a slab's occupations, again and again with the same buffers.
pub struct Labeller<D: SlabDevice> {
    pub slab: Slab,
    pub device: D,
    faces: Faces,
}

/// Sites of the thickest slab of `lattice` over `ranks` ranks.
fn thickest_slab_sites(lattice: Lattice, ranks: usize) -> u64 {
    let thickest = lattice.length.div_ceil(ranks as u64);
    thickest.saturating_mul(lattice.plane())
}

/// Whether the labelling can take every slab of `lattice` over `ranks` ranks (fewer than
/// 2^31 sites each): for naming the largest side that fits.
pub fn slabs_fit(lattice: Lattice, ranks: usize) -> bool {
    thickest_slab_sites(lattice, ranks) < u64::from(ROOT_FLAG)
}

/// Fail alike on every rank when the largest slab has 2^31 sites or more.
pub fn check_slab_fits(slab: &Slab) -> Result<()> {
    let lattice = slab.lattice;
    if slabs_fit(lattice, slab.ranks) {
        return Ok(());
    }
    let sites = thickest_slab_sites(lattice, slab.ranks);
    let least = (lattice.sites()).div_ceil(u64::from(ROOT_FLAG) - 1);
    Err(Error::Unavailable(format!(
        "a slab of {sites} sites is too large for the labelling (at most 2^31 - 1 per rank): use at least {least} ranks"
    )))
}

impl<D: SlabDevice> Labeller<D> {
    pub fn new(slab: Slab, device: D) -> Result<Self> {
        check_slab_fits(&slab)?;
        Ok(Labeller {
            faces: Faces::new(&slab),
            slab,
            device,
        })
    }

    /// Label `mask`'s clusters; the labels are then the device's (collective).
    pub fn label(&mut self, world: &World, mask: &D::Mask) -> Result<Labelled> {
        self.device.label_box(mask)?;
        let (roots, masks) = self.device.face_roots(mask, &self.faces)?;
        let part = boundary::slab_boundary(&self.slab, &self.faces, &roots, &masks);
        let started = std::time::Instant::now();
        let (finals, work) = merge::solve(world, &self.slab, &part);
        let merge_seconds = started.elapsed().as_secs_f64();
        let labels: Vec<u64> = finals.iter().map(|f| f.0).collect();
        self.device.relabel(mask, &part.roots, &labels)?;
        Ok(Labelled {
            roots: part.roots,
            finals,
            merge_seconds,
            merge_bytes: 8 * work.words,
            merge_join_seconds: work.join_seconds,
        })
    }

    /// The cluster statistics of the labelling `labelled` of `mask`, on every rank
    /// (collective).
    pub fn statistics(
        &mut self,
        world: &World,
        mask: &D::Mask,
        labelled: &Labelled,
    ) -> Result<ClusterStats> {
        let (mut stats, node_sizes) = self.device.tally(mask, &labelled.roots)?;
        stats.merge(&merge::boundary_clusters(
            world,
            &self.slab,
            &labelled.finals,
            &node_sizes,
        )?);
        Ok(stats.reduce(world))
    }
}
