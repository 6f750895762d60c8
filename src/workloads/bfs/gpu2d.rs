//! The GPU side of the 2D-partitioned BFS (`search::Frontiers` over the blocks A(i, j) of
//! `graph::block2d`), the same algorithm as `cpu2d` (see there): the block lives on the
//! GPU in both orientations; the expand gathers the frontier along the process column, the
//! fold sends the (vertex, parent) pairs found along the process row to their owners, and a
//! bottom-up level hands the owners' unvisited bitmaps round the row in C sub-steps. The
//! exchanges go through one `GpuExchange` per grid row and column (NCCL sub-communicators,
//! or host memory and MPI). Kernels `bfs2d_*` in kernels/bfs.cu; launches pass their
//! arguments in the order of the kernel's parameters there.

use super::gpu::{
    check_fit, check_ids, heavy_capacity, heavy_degree, queue_grid, scan_kernel,
};
use super::gpu_vertices::{FrontierLayout, OwnVertices};
use super::search::{Frontiers, LevelClock};
use super::validate_depths::DeviceVerdict;
use super::validate_gpu::Rows1D;
use crate::comm::gpu::{remote_runs, GpuExchange, OwnerBuckets};
use crate::comm::{GpuTransport, Grid, World};
use crate::device::{filling_grid, gpu_error, grid, Gpu, Kernel};
use crate::error::{Error, Result};
use crate::graph::block2d::{Block2D, Layout2D};
use crate::graph::block2d_gpu::DeviceBlocks;
use crate::graph::{DistGraph, Vid};
use cudarc::driver::{CudaSlice, PushKernelArg};

struct Kernels {
    column_queue: Kernel,
    top_down: Kernel,
    top_down_heavy: Kernel,
    unvisited: Kernel,
    bottom_up_own: Kernel,
    bottom_up_remote: Kernel,
    claim_bits: Kernel,
    /// Blocks of each grid-stride scan that fill the GPU (its own occupancy; the two
    /// bottom-up scans' least).
    top_down_blocks: u32,
    heavy_blocks: u32,
    bottom_up_blocks: u32,
}

pub struct Gpu2dFrontiers<'a> {
    own: OwnVertices<'a>,
    layout: Layout2D,
    row: GpuExchange<'a>,
    col: GpuExchange<'a>,
    k: Kernels,
    /// The block by column index of u (row indices of v), and by row index of v.
    blocks: &'a DeviceBlocks,
    /// The own vertices' rows of the 1D graph: their full degrees.
    degrees: CudaSlice<u64>,
    /// The own frontier as column indices, and the column's frontier gathered.
    own_column: CudaSlice<u32>,
    column_queue: CudaSlice<u32>,
    column_bits: CudaSlice<u64>,
    /// Vertices of the process row sent to their owners in this search.
    sent: CudaSlice<u64>,
    /// The unvisited bitmap of the row segment being scanned, and the next one arriving.
    segment: CudaSlice<u64>,
    arriving: CudaSlice<u64>,
    /// Whether `segment` holds the own unvisited vertices: true after a bottom-up level
    /// (the last hand-over brings the own segment home, cleared of every vertex the row
    /// found), until a top-down level visits more.
    segment_current: bool,
    /// Pairs found, the same in runs by owner, and the pairs received from the row.
    found: CudaSlice<u64>,
    send: CudaSlice<u64>,
    received: CudaSlice<u64>,
    owners: OwnerBuckets,
    heavy: CudaSlice<u32>,
    world: &'a World,
    transport: GpuTransport,
    /// Made at the first validation on the device.
    validation: Option<Rows1D<'a>>,
}

/// Device bytes of the search on a rank of `layout` whose block holds `out_entries`,
/// besides the block itself.
fn search_bytes(l: &Layout2D, out_entries: u64) -> u64 {
    let local_n = l.part.local_n() as u64;
    let words = l.part.words_per_rank() as u64;
    let (col, row) = (l.col_len() as u64, l.row_len() as u64);
    let degrees = 8 * (local_n + 1);
    let queues = 4 * local_n + 4 * col;
    let bitmaps = col / 8 + row / 8 + 2 * 8 * words;
    let pairs = 2 * 8 * row + 8 * local_n * l.cols as u64;
    let heavy = 4 * heavy_capacity(out_entries) as u64;
    OwnVertices::bytes(local_n, words) + degrees + queues + bitmaps + pairs + heavy
}

/// Blocks built on the host, uploaded for the search after checking that they and the
/// search fit (collective).
pub fn upload_blocks(world: &World, gpu: &Gpu, g: &DistGraph, b: &Block2D) -> Result<DeviceBlocks> {
    let entries = b.out_adj.len() as u64;
    let needed = DeviceBlocks::bytes_for(&b.layout, entries) + search_bytes(&b.layout, entries);
    check_fit(world, gpu, needed, &g.part, false, false)?;
    DeviceBlocks::upload(gpu, b)
}

impl<'a> Gpu2dFrontiers<'a> {
    /// Allocate the search buffers over `blocks`, after checking they fit.
    pub fn new(
        world: &'a World,
        gpu: &'a Gpu,
        transport: GpuTransport,
        g: &DistGraph,
        blocks: &'a DeviceBlocks,
        grid: &'a Grid,
    ) -> Result<Self> {
        check_ids(g)?;
        let layout = blocks.layout;
        let out_entries = blocks.out.entries() as u64;
        check_fit(
            world,
            gpu,
            search_bytes(&layout, out_entries),
            &g.part,
            false,
            false,
        )?;
        let f = |name| gpu.function("bfs.cu", name);
        let fill = |k| gpu.resident_blocks(k);
        let (top_down, top_down_heavy) = (
            scan_kernel(gpu, "bfs2d_top_down")?,
            scan_kernel(gpu, "bfs2d_top_down_heavy")?,
        );
        let (bottom_up_own, bottom_up_remote) =
            (f("bfs2d_bottom_up_own")?, f("bfs2d_bottom_up_remote")?);
        let k = Kernels {
            column_queue: f("bfs2d_column_queue")?,
            top_down_blocks: fill(&top_down)?,
            heavy_blocks: fill(&top_down_heavy)?,
            bottom_up_blocks: fill(&bottom_up_own)?.min(fill(&bottom_up_remote)?),
            top_down,
            top_down_heavy,
            unvisited: f("bfs2d_unvisited")?,
            bottom_up_own,
            bottom_up_remote,
            claim_bits: f("bfs2d_claim_bits")?,
        };
        let words = g.part.words_per_rank();
        let local_n = g.local_n();
        let (col, row) = (layout.col_len(), layout.row_len());
        let some = |n: usize| n.max(1);
        Ok(Gpu2dFrontiers {
            own: OwnVertices::new(gpu, g.n(), (g.part.first(), local_n), words, 0)?,
            layout,
            row: GpuExchange::open(&grid.row, gpu, transport)?,
            col: GpuExchange::open(&grid.col, gpu, transport)?,
            k,
            blocks,
            degrees: gpu.upload("row offsets", &g.offsets)?,
            own_column: gpu.zeros("column queue", some(local_n))?,
            column_queue: gpu.zeros("column queue", some(col))?,
            column_bits: gpu.zeros("column bitmap", some(col / 64))?,
            sent: gpu.zeros("sent bitmap", some(row / 64))?,
            segment: gpu.zeros("segment bitmap", some(words))?,
            arriving: gpu.zeros("segment bitmap", some(words))?,
            segment_current: false,
            found: gpu.zeros("pairs found", some(row))?,
            send: gpu.zeros("exchange buffer", some(row))?,
            received: gpu.zeros("exchange buffer", some(local_n * layout.cols))?,
            owners: OwnerBuckets::new(gpu, layout.cols, g.part.block)?,
            heavy: gpu.zeros("heavy list", heavy_capacity(out_entries))?,
            world,
            transport,
            validation: None,
        })
    }

    /// The column's frontier as a queue of column indices (gathered along the process
    /// column); returns which buffer holds it and its length.
    fn expand_queue(&mut self, clock: &mut LevelClock) -> Result<(bool, u64)> {
        let len = clock.local(|| self.own.current_queue())?;
        let offset = self.layout.i as u64 * self.layout.part.block;
        let own = &self.own;
        clock.local(|| {
            own.gpu.launch(&self.k.column_queue, grid(len), |b| {
                b.arg(&own.queue)
                    .arg(&len)
                    .arg(&offset)
                    .arg(&mut self.own_column);
            })
        })?;
        let rows = self.layout.rows;
        if rows == 1 {
            return Ok((false, len));
        }
        let total = clock.exchange(|| {
            self.col
                .allgatherv(&self.own_column, len as usize, &mut self.column_queue)
        })? as u64;
        clock.bytes_sent += 4 * len * (rows as u64 - 1);
        clock.bytes_received += 4 * (total - len);
        Ok((true, total))
    }

    /// Send the first `count` pairs of `found` to their owners along the process row and
    /// claim the pairs received: into the next queue, or after a bottom-up level (`bits`)
    /// into the next bitmap.
    fn fold(&mut self, count: u64, bits: bool, clock: &mut LevelClock) -> Result<()> {
        // In a row of one every vertex found is own, and was claimed where it was found.
        if self.layout.cols == 1 {
            return Ok(());
        }
        let (block, j) = (self.layout.part.block, self.layout.j);
        let gpu = self.own.gpu;
        let (moved, counts) = clock.local(|| {
            let pairs = (&self.found, count);
            remote_runs(
                gpu,
                &mut self.owners,
                pairs,
                &mut self.send,
                (j, self.layout.cols),
            )
        })?;
        let send = if moved { &self.send } else { &self.found };
        let received =
            clock.exchange(|| self.row.alltoallv(send, &counts, &mut self.received))? as u64;
        clock.bytes_sent += 8 * count;
        clock.bytes_received += 8 * received;
        let key_first = j as u64 * block;
        let own = &mut self.own;
        if !bits {
            return clock.local(|| own.claim(&self.received, received, key_first, &self.degrees));
        }
        clock.local(|| {
            if received > 0 {
                gpu.launch(&self.k.claim_bits, grid(received), |b| {
                    b.arg(&self.received)
                        .arg(&received)
                        .arg(&key_first)
                        .arg(&mut own.parent)
                        .arg(&self.degrees)
                        .arg(&mut own.next_bits)
                        .arg(&mut own.counters);
                })?;
            }
            gpu.sync("bfs2d_claim_bits")
        })
    }

    /// The pairs found (counter 3) and entries read (counter 2), failing if the pairs
    /// overflowed `found`.
    fn found_count(&self, what: &str) -> Result<(u64, u64)> {
        let [_, _, inspected, found] = self.own.counters()?;
        let capacity = self.found.len() as u64;
        if found > capacity {
            return Err(Error::Gpu(format!(
                "{what}: {found} pairs found exceed the buffer of {capacity}"
            )));
        }
        Ok((found, inspected))
    }
}

impl Frontiers for Gpu2dFrontiers<'_> {
    fn start(&mut self, root: Vid) -> Result<u64> {
        self.segment_current = false;
        let degree = self.own.start(root, &self.degrees)?;
        self.own
            .gpu
            .stream
            .memset_zeros(&mut self.sent)
            .map_err(|e| gpu_error("clear sent bitmap", e))?;
        Ok(degree)
    }

    fn top_down(&mut self, clock: &mut LevelClock) -> Result<u64> {
        self.segment_current = false;
        let (gathered, len) = self.expand_queue(clock)?;
        let l = self.layout;
        let (block, cols, j) = (l.part.block, l.cols as u64, l.j as u64);
        let capacity = self.found.len() as u64;
        let queue = if gathered {
            &self.column_queue
        } else {
            &self.own_column
        };
        let own = &mut self.own;
        let gpu = own.gpu;
        own.zero_counters()?;
        clock.local(|| {
            // The light rows (a lane or a warp each), then the heavy ones over the whole
            // grid; both kernels take the same arguments.
            let (light_grid, per_warp) = queue_grid(len, self.k.top_down_blocks);
            let heavy_degree = heavy_degree(len);
            let light = (&self.k.top_down, light_grid);
            let heavy = (&self.k.top_down_heavy, filling_grid(self.k.heavy_blocks));
            for (kernel, cfg) in [light, heavy] {
                gpu.launch(kernel, cfg, |b| {
                    b.arg(&self.blocks.out.offsets)
                        .arg(&self.blocks.out.adj)
                        .arg(queue)
                        .arg(&len)
                        .arg(&block)
                        .arg(&cols)
                        .arg(&j)
                        .arg(&mut own.parent)
                        .arg(&own.local_n)
                        .arg(&self.degrees)
                        .arg(&mut own.next_queue)
                        .arg(&mut self.sent)
                        .arg(&mut self.found)
                        .arg(&capacity)
                        .arg(&mut own.counters)
                        .arg(&mut self.heavy)
                        .arg(&per_warp)
                        .arg(&heavy_degree);
                })?;
            }
            gpu.sync("bfs2d_top_down")
        })?;
        let (found, inspected) = self.found_count("bfs2d_top_down")?;
        self.own.next = FrontierLayout::Queue(0);
        self.fold(found, false, clock)?;
        Ok(inspected)
    }

    fn bottom_up(&mut self, clock: &mut LevelClock) -> Result<u64> {
        let l = self.layout;
        let (block, cols, j) = (l.part.block, l.cols, l.j);
        let words = self.own.words;
        clock.local(|| self.own.current_bits())?;
        if l.rows > 1 {
            clock.exchange(|| self.col.allgather(&self.own.bits, &mut self.column_bits))?;
            clock.bytes_sent += (8 * words * (l.rows - 1)) as u64;
            clock.bytes_received += (8 * words * (l.rows - 1)) as u64;
        }
        let own = &mut self.own;
        let gpu = own.gpu;
        own.zero_counters()?;
        let local_n = own.local_n;
        if !self.segment_current {
            clock.local(|| {
                gpu.launch(&self.k.unvisited, grid(block), |b| {
                    b.arg(&own.parent)
                        .arg(&local_n)
                        .arg(&block)
                        .arg(&mut self.segment);
                })
            })?;
        }
        let capacity = self.found.len() as u64;
        let (cols64, j64) = (cols as u64, j as u64);
        // Step 0 scans the own segment, whose found vertices fill the next bitmap directly.
        for step in 0..cols {
            let seg_first = ((j + step) % cols) as u64 * block;
            let scan = match step {
                0 => &self.k.bottom_up_own,
                _ => &self.k.bottom_up_remote,
            };
            let frontier = if l.rows > 1 {
                &self.column_bits
            } else {
                &own.bits
            };
            clock.local(|| {
                gpu.launch(scan, filling_grid(self.k.bottom_up_blocks), |b| {
                    b.arg(&self.blocks.into.offsets)
                        .arg(&self.blocks.into.adj)
                        .arg(frontier)
                        .arg(&mut self.segment)
                        .arg(&seg_first)
                        .arg(&block)
                        .arg(&cols64)
                        .arg(&j64)
                        .arg(&mut own.parent)
                        .arg(&self.degrees)
                        .arg(&mut own.next_bits)
                        .arg(&mut self.found)
                        .arg(&capacity)
                        .arg(&mut own.counters);
                })?;
                gpu.sync("bfs2d_bottom_up")
            })?;
            if cols > 1 {
                // Hand the segment on to (i, j - 1), which scans it next; the last hand-over
                // brings each segment home to its owner (see `segment_current`).
                let (to, from) = ((j + cols - 1) % cols, (j + 1) % cols);
                clock.exchange(|| {
                    self.row.sendrecv(
                        &self.segment.slice(0..words),
                        to,
                        &mut self.arriving.slice_mut(0..words),
                        from,
                    )
                })?;
                clock.bytes_sent += 8 * words as u64;
                clock.bytes_received += 8 * words as u64;
                std::mem::swap(&mut self.segment, &mut self.arriving);
            }
        }
        self.segment_current = true;
        let (found, inspected) = self.found_count("bfs2d_bottom_up")?;
        self.own.next = FrontierLayout::Bits;
        self.fold(found, true, clock)?;
        Ok(inspected)
    }

    fn advance(&mut self) -> Result<(u64, u64)> {
        self.own.advance()
    }

    fn fetch_parents(&mut self) -> Result<()> {
        self.own.fetch_parents()
    }

    fn parents(&mut self, out: &mut [i64]) -> Result<()> {
        self.own.parents(out)
    }

    fn depths(&mut self, out: &mut [i32]) -> Result<()> {
        self.own.depths(out)
    }

    fn set_parent(&mut self, l: usize, p: i64) -> Result<()> {
        self.own.set_parent(l, p)
    }

    fn check_on_device(&mut self, g: &DistGraph, root: Vid) -> Result<Option<DeviceVerdict>> {
        if self.validation.is_none() {
            let rows = Rows1D::new(self.world, self.own.gpu, self.transport, g)?;
            self.validation = Some(rows);
        }
        let rows = self.validation.as_mut().expect("made above");
        Ok(Some(rows.check(&self.own, root, g.n())?))
    }

    fn transport(&self) -> &'static str {
        if self.layout.cols > 1 {
            self.row.name()
        } else {
            self.col.name()
        }
    }
}
