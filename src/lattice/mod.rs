//! Lattices cut into slabs, one per rank, and the clusters on them: the layer that
//! percolation and the spin models' cluster updates share; it knows no workload.
//!
//! - `geometry`: 2D/3D lattices, periodic or open, slabs along axis 0, index mapping.
//! - `halo`: ghost planes filled from the neighbouring slabs (host or GPU fields; one plane,
//!   or `depth` of them while other work runs), and the neighbours of a row of sites in such
//!   a field.
//! - `checkerboard`: the two-colouring that lets all sites of a colour update at once.
//! - `occupation`: bond masks (the labelling's input) for site and bond percolation.
//! - `engine`: the labelling, one driver over a device's local phases (`cpu` with
//!   `unionfind`; `gpu` with kernels/lattice.cu), the slabs' `boundary` graphs and their
//!   pairwise `merge` up a tree of ranks.
//! - `clusters`: cluster statistics of a labelling.
//!
//! ```text
//! let slab = Slab::new(Lattice::new(2, l, true)?, world.size(), world.rank())?;
//! let mut labeller = Labeller::new(slab, CpuSlab::new(slab))?;
//! let labelled = labeller.label(world, &mask)?;      // labels: labeller.device.labels
//! let stats = labeller.statistics(world, &mask, &labelled)?;
//! ```

pub mod boundary;
pub mod checkerboard;
pub mod clusters;
pub mod cpu;
pub mod engine;
pub mod geometry;
pub mod gpu;
pub mod halo;
pub mod merge;
pub mod occupation;
pub mod unionfind;

pub use clusters::{Cluster, ClusterStats};
pub use cpu::CpuSlab;
pub use engine::{Labelled, Labeller, SlabDevice};
pub use geometry::{Lattice, LatticeKind, Slab};
pub use gpu::GpuSlab;
pub use occupation::{Occupation, NO_LABEL, VACANT};
