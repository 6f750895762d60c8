//! The labelling's local phases on a GPU (kernels/lattice.cu), and the occupation draw there.
//! The masks, parents and labels stay in GPU memory; only the face sites' roots and masks
//! come to the host (and the nodes' labels and sizes go back and forth), so a labelling moves
//! O(L^(d-1)) bytes over the bus, not O(L^d).

use super::boundary::Faces;
use super::clusters::{Cluster, ClusterStats, SIZE_BINS};
use super::engine::SlabDevice;
use super::occupation::Occupation;
use super::Slab;
use crate::device::{blocks, gpu_error, grid, Gpu, Kernel};
use crate::error::Result;
use cudarc::driver::{CudaSlice, PushKernelArg};

const FILE: &str = "lattice.cu";
/// Sites along each side of the tiles `lattice_tile` labels (its TILE), and the tiles (a warp
/// each) of one of its blocks (TILE_WARPS).
const TILE: u32 = 32;
const TILE_WARPS: u32 = 4;

/// A slab's parents and labels in GPU memory, with the kernels that work on them.
pub struct GpuSlab<'g> {
    gpu: &'g Gpu,
    slab: Slab,
    n: u32,
    tile: Kernel,
    seams: Kernel,
    compress_roots: Kernel,
    compress: Kernel,
    faces: Kernel,
    mark: Kernel,
    remap: Kernel,
    sizes: Kernel,
    tally: Kernel,
    node_sizes: Kernel,
    parent: CudaSlice<u32>,
    /// lattice_tile's marks of the tiles' roots, and how many words.
    tile_roots: CudaSlice<u32>,
    tile_words: u32,
    /// The labels of the last labelling (`occupation::NO_LABEL` at vacant sites).
    pub labels: CudaSlice<u64>,
    face_sites: Option<CudaSlice<u32>>,
    /// Sites per root, counted by `tally`.
    size: CudaSlice<u32>,
    /// The last labelling's node roots, and how many.
    node_roots: CudaSlice<u32>,
    nodes: u32,
}

impl<'g> GpuSlab<'g> {
    pub fn new(gpu: &'g Gpu, slab: Slab) -> Result<Self> {
        let f = |name: &str| gpu.function(FILE, name);
        let n = slab.sites();
        Ok(GpuSlab {
            gpu,
            slab,
            n: n as u32,
            tile: f("lattice_tile")?,
            seams: f(if slab.lattice.dim == 2 {
                "lattice_seams_2d"
            } else {
                "lattice_seams"
            })?,
            compress_roots: f("lattice_compress_roots")?,
            compress: f("lattice_compress")?,
            faces: f("lattice_faces")?,
            mark: f("lattice_mark")?,
            remap: f("lattice_remap")?,
            sizes: f("lattice_sizes")?,
            tally: f("lattice_tally")?,
            node_sizes: f("lattice_node_sizes")?,
            parent: gpu.zeros("lattice parents", n)?,
            tile_roots: gpu.zeros("tile roots", tile_words(&slab) as usize)?,
            tile_words: tile_words(&slab),
            labels: gpu.zeros("lattice labels", n)?,
            size: gpu.zeros("cluster sizes", n)?,
            face_sites: None,
            node_roots: gpu.zeros("node roots", 1)?,
            nodes: 0,
        })
    }

    /// Bytes of GPU memory per site of a slab: mask, parent, label, the size count, and the
    /// tile roots' marks (a bit, counted as a byte).
    pub const BYTES_PER_SITE: u64 = 1 + 4 + 8 + 4 + 1;

    /// Each tile labelled by a warp (lattice_tile): TILE rows of TILE sites.
    fn label_tiles(&mut self, mask: &CudaSlice<u8>) -> Result<()> {
        let (n, dim, l, plane, thickness) = self.shape();
        let tiles = u64::from(self.tile_words / TILE);
        let launch = blocks(tiles.div_ceil(u64::from(TILE_WARPS)), TILE_WARPS * 32);
        self.gpu.launch(&self.tile, launch, |b| {
            b.arg(mask)
                .arg(&mut self.parent)
                .arg(&mut self.tile_roots)
                .arg(&n)
                .arg(&dim)
                .arg(&l)
                .arg(&plane)
                .arg(&thickness);
        })
    }

    /// The bonds the tiles left: in 2D a thread per tile-border site (lattice_seams_2d), in 3D
    /// a thread per site.
    fn unite_seams(&mut self, mask: &CudaSlice<u8>) -> Result<()> {
        let (n, dim, l, plane, thickness) = self.shape();
        if dim != 2 {
            return self.gpu.launch(&self.seams, grid(u64::from(n)), |b| {
                b.arg(mask)
                    .arg(&mut self.parent)
                    .arg(&n)
                    .arg(&dim)
                    .arg(&l)
                    .arg(&plane)
                    .arg(&thickness);
            });
        }
        let rows = n / l;
        let border =
            u64::from(rows) * u64::from((l - 1) / TILE) + u64::from(rows / TILE) * u64::from(l);
        self.gpu.launch(&self.seams, grid(border), |b| {
            b.arg(mask)
                .arg(&mut self.parent)
                .arg(&n)
                .arg(&l)
                .arg(&plane)
                .arg(&thickness);
        })
    }

    /// Sites, dimension, side, plane and thickness of the slab, as the kernels take them.
    fn shape(&self) -> (u32, u32, u32, u32, u32) {
        let lattice = self.slab.lattice;
        let (plane, thickness) = (self.slab.plane() as u32, self.slab.thickness as u32);
        (
            self.n,
            lattice.dim as u32,
            lattice.l as u32,
            plane,
            thickness,
        )
    }
}

/// Words of tile-root marks of `slab` (lattice_tile's `roots`): TILE per tile.
fn tile_words(slab: &Slab) -> u32 {
    let (l, n) = (slab.lattice.l, slab.sites() as u64);
    (l.div_ceil(u64::from(TILE)) * (n / l).div_ceil(u64::from(TILE))) as u32 * TILE
}

/// Draw the slab's bond masks into `mask` on the GPU (as `occupation::draw_mask`).
pub fn draw_mask_gpu(
    gpu: &Gpu,
    slab: &Slab,
    kind: Occupation,
    key: u64,
    threshold: u64,
    mask: &mut CudaSlice<u8>,
) -> Result<()> {
    let name = match kind {
        Occupation::Site => "lattice_draw_sites",
        Occupation::Bond => "lattice_draw_bonds",
    };
    let kernel = gpu.function(FILE, name)?;
    let lattice = slab.lattice;
    let (n, offset, dim) = (slab.sites() as u32, slab.offset(), lattice.dim as u32);
    let periodic = u32::from(lattice.periodic);
    // As lattice_draw_sites / lattice_draw_bonds.
    gpu.launch(&kernel, grid(u64::from(n)), |b| {
        b.arg(mask)
            .arg(&n)
            .arg(&offset)
            .arg(&dim)
            .arg(&lattice.length)
            .arg(&lattice.l)
            .arg(&periodic)
            .arg(&key)
            .arg(&threshold);
    })
}

impl SlabDevice for GpuSlab<'_> {
    type Mask = CudaSlice<u8>;

    fn label_box(&mut self, mask: &CudaSlice<u8>) -> Result<()> {
        self.label_tiles(mask)?;
        self.unite_seams(mask)?;
        // The marked tile roots first, then every site (four a thread) one step on.
        let (gpu, n, words) = (self.gpu, self.n, self.tile_words);
        let l = self.slab.lattice.l as u32;
        gpu.launch(&self.compress_roots, grid(u64::from(words)), |b| {
            b.arg(&mut self.parent)
                .arg(&self.tile_roots)
                .arg(&words)
                .arg(&l);
        })?;
        gpu.launch(&self.compress, grid(u64::from(n).div_ceil(4)), |b| {
            b.arg(&mut self.parent).arg(&n);
        })
    }

    fn face_roots(&mut self, mask: &CudaSlice<u8>, faces: &Faces) -> Result<(Vec<u32>, Vec<u8>)> {
        let gpu = self.gpu;
        if self.face_sites.is_none() {
            self.face_sites = Some(gpu.upload("face sites", &faces.sites)?);
        }
        let sites = self.face_sites.as_ref().expect("uploaded");
        let count = faces.sites.len() as u32;
        let mut roots = gpu.zeros::<u32>("face roots", count as usize)?;
        let mut masks = gpu.zeros::<u8>("face masks", count as usize)?;
        gpu.launch(&self.faces, grid(u64::from(count)), |b| {
            b.arg(mask)
                .arg(&self.parent)
                .arg(sites)
                .arg(&count)
                .arg(&mut roots)
                .arg(&mut masks);
        })?;
        Ok((
            gpu.download("face roots", &roots, count as usize)?,
            gpu.download("face masks", &masks, count as usize)?,
        ))
    }

    fn relabel(&mut self, mask: &CudaSlice<u8>, roots: &[u32], labels: &[u64]) -> Result<()> {
        let gpu = self.gpu;
        self.node_roots = gpu.upload("node roots", roots)?;
        self.nodes = roots.len() as u32;
        let table = gpu.upload("node labels", labels)?;
        let (n, count, offset) = (self.n, self.nodes, self.slab.offset());
        gpu.launch(&self.mark, grid(u64::from(count)), |b| {
            b.arg(&mut self.parent).arg(&self.node_roots).arg(&count);
        })?;
        gpu.launch(&self.remap, grid(u64::from(n).div_ceil(4)), |b| {
            b.arg(mask)
                .arg(&self.parent)
                .arg(&table)
                .arg(&mut self.labels)
                .arg(&n)
                .arg(&offset);
        })?;
        gpu.sync("relabel the lattice")
    }

    fn tally(&mut self, mask: &CudaSlice<u8>, roots: &[u32]) -> Result<(ClusterStats, Vec<u64>)> {
        debug_assert_eq!(
            roots.len(),
            self.nodes as usize,
            "the last labelling's nodes"
        );
        let gpu = self.gpu;
        let (n, count) = (self.n, self.nodes);
        let cfg = grid(u64::from(n));
        gpu.stream
            .memset_zeros(&mut self.size)
            .map_err(|e| gpu_error("clear the cluster sizes", e))?;
        let mut totals = gpu.zeros::<u64>("cluster totals", 3)?;
        let mut histogram = gpu.zeros::<u64>("size histogram", SIZE_BINS)?;
        let mut largest = gpu.zeros::<u64>("largest cluster", 1)?;
        let mut node_sizes = gpu.zeros::<u64>("node sizes", count as usize)?;
        gpu.launch(&self.sizes, cfg, |b| {
            b.arg(mask).arg(&self.parent).arg(&mut self.size).arg(&n);
        })?;
        gpu.launch(&self.tally, cfg, |b| {
            b.arg(mask)
                .arg(&self.parent)
                .arg(&self.size)
                .arg(&n)
                .arg(&mut totals)
                .arg(&mut histogram)
                .arg(&mut largest);
        })?;
        gpu.launch(&self.node_sizes, grid(u64::from(count)), |b| {
            b.arg(&self.size)
                .arg(&self.node_roots)
                .arg(&count)
                .arg(&mut node_sizes);
        })?;
        let totals = gpu.download("cluster totals", &totals, 3)?;
        let key = gpu.download("largest cluster", &largest, 1)?[0];
        let largest = match key >> 32 {
            0 => Cluster::default(),
            size => Cluster {
                size,
                label: self.slab.offset() + u64::from(u32::MAX - key as u32),
                percolates: 0,
            },
        };
        let stats = ClusterStats {
            clusters: totals[0],
            sites: totals[1],
            sum_squares: totals[2],
            histogram: gpu.download("size histogram", &histogram, SIZE_BINS)?,
            largest,
            percolates_any: 0,
        };
        Ok((
            stats,
            gpu.download("node sizes", &node_sizes, count as usize)?,
        ))
    }
}
