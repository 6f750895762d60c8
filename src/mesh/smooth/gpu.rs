//! The smoothers' iterations resident on a GPU (kernels/mesh.cu): positions, the
//! connectivity, the moves and the guard's flags stay on the device for the whole run. Per
//! iteration: the node steps (l2v: one node kernel summing its cells' corner terms, computed
//! where they are summed, then the safeguard; laplace: the centroid moves), then the guard
//! as kernels (apply, flag the moved corners of bad cells, undo, until no rank undoes
//! anything), the largest move and the quality sums reduced on the device in exact fixed
//! point in the same pass as the flags (the last round's are the iteration's), and, for l2v,
//! whole-step halving until F does not rise. Only a few scalars per round cross to the host (and the ranks' reductions), so the CPU path
//! (`super::smooth`) and this one take the same decisions; ghost positions go to neighbour
//! ranks only, through `GpuExchange` (NCCL or staged through the host).

use super::super::exact::ExactSum;
use super::super::patch::{Exchange, Patch};
use super::super::quality::Summary;
use super::{Clock, Method, Preconditioner, Record, Settings};
use crate::comm::gpu::GpuExchange;
use crate::device::{blocks, grid, Gpu, Kernel, THREADS};
use crate::error::Result;
use cudarc::driver::{CudaSlice, PushKernelArg};
use std::time::Instant;

const FILE: &str = "mesh.cu";

/// The whole step's halvings, as on the CPU (the node's own are in the kernel).
const GLOBAL_HALVINGS: u32 = super::l2v::GLOBAL_HALVINGS;

/// The reduction words: [0..6] the quality sums (mesh_summary, mesh_guard_pass), [6] the
/// largest move, [7] the nodes a guard round sent back.
const WORDS: usize = 8;
/// The words a guard round starts from (the minimum η at +inf).
const CLEAR: [u64; WORDS] = [0, 0, 0, 0, 0, 0x7ff0_0000_0000_0000, 0, 0];

/// Ghost exchange lists on the device: per neighbour rank (ascending), the ranges of its
/// nodes in the concatenated send and receive lists.
pub struct DeviceHalo<'w> {
    exchange: GpuExchange<'w>,
    peers: Vec<(usize, std::ops::Range<usize>, std::ops::Range<usize>)>,
    send: CudaSlice<u32>,
    recv: CudaSlice<u32>,
    send_buf: CudaSlice<f64>,
    recv_buf: CudaSlice<f64>,
}

impl<'w> DeviceHalo<'w> {
    /// From the host exchange lists (`MpiExchange::neighbours`: rank, local nodes sent, local
    /// ghosts received, both in the order both ends agree on).
    pub fn new(
        gpu: &Gpu,
        exchange: GpuExchange<'w>,
        lists: &[(usize, Vec<u32>, Vec<u32>)],
    ) -> Result<DeviceHalo<'w>> {
        let (mut send, mut recv, mut peers) = (Vec::new(), Vec::new(), Vec::new());
        for (q, s, r) in lists {
            let (s0, r0) = (send.len(), recv.len());
            send.extend_from_slice(s);
            recv.extend_from_slice(r);
            peers.push((*q, s0..send.len(), r0..recv.len()));
        }
        Ok(DeviceHalo {
            exchange,
            peers,
            send_buf: gpu.zeros("ghost positions to send", 3 * send.len())?,
            recv_buf: gpu.zeros("ghost positions received", 3 * recv.len())?,
            send: gpu.upload("ghost send list", &send)?,
            recv: gpu.upload("ghost receive list", &recv)?,
        })
    }
}

struct Functions {
    pack_points: Kernel,
    l2v_node: Kernel,
    laplace_node: Kernel,
    apply: Kernel,
    guard_pass: Kernel,
    undo: Kernel,
    summary: Kernel,
    pack: Kernel,
    unpack: Kernel,
    opt_class: Kernel,
}

impl Functions {
    /// The kernels; opt-colour's class kernel for `corners` a cell and `lanes` a node.
    fn load(gpu: &Gpu, corners: u32, lanes: u32) -> Result<Functions> {
        let f = |name: &str| gpu.function(FILE, name);
        Ok(Functions {
            pack_points: f("mesh_pack_points")?,
            l2v_node: f("mesh_l2v_node")?,
            laplace_node: f("mesh_laplace_node")?,
            apply: f("mesh_apply")?,
            guard_pass: f("mesh_guard_pass")?,
            undo: f("mesh_undo")?,
            summary: f("mesh_summary")?,
            pack: f("mesh_pack")?,
            unpack: f("mesh_unpack")?,
            opt_class: f(opt_class_kernel(corners, lanes))?,
        })
    }
}

/// A patch on the GPU: connectivity, positions (now and saved), moves and flags.
struct Resident<'g> {
    gpu: &'g Gpu,
    k: Functions,
    nodes: u32,
    ncells: u64,
    corners: u32,
    counted_cells: u64,
    cells: CudaSlice<u32>,
    n2c_offsets: CudaSlice<u64>,
    n2c: CudaSlice<u32>,
    graph_offsets: CudaSlice<u64>,
    graph: CudaSlice<u32>,
    active: CudaSlice<u8>,
    counted: CudaSlice<u8>,
    moves: CudaSlice<f64>,
    pos: [CudaSlice<f64>; 3],
    /// The positions packed as (x, y, z, unused) per node, for the cell passes' and the node
    /// kernels' loads (two loads from one 32-byte sector where x, y, z take three sectors).
    /// Every kernel that writes x, y, z writes this copy too.
    points: CudaSlice<f64>,
    old: [CudaSlice<f64>; 3],
    moved: CudaSlice<u8>,
    flag: CudaSlice<u8>,
    words: CudaSlice<u64>,
    /// opt-colour: the active nodes of each colour class, class after class, ascending within
    /// a class; class c is `class_nodes[class_start[c]..class_start[c + 1]]`.
    class_nodes: CudaSlice<u32>,
    class_start: Vec<u64>,
    local_classes: f64,
    /// Lanes per node in opt-colour's class kernel (a power of two, at most 32).
    opt_lanes: u32,
}

fn offsets(o: &[usize]) -> Vec<u64> {
    o.iter().map(|&v| v as u64).collect()
}

fn flags(n: usize, f: impl Fn(usize) -> bool) -> Vec<u8> {
    (0..n).map(|i| u8::from(f(i))).collect()
}

/// Lanes per node of opt-colour's class kernel: TESSERA_MESH_OPT_LANES (1, 2, 4, 8, 16 or
/// 32; for measuring), else 8 (one H200, the 9.94M-node bar2 box, 2026-12-04: 1.748e8 node
/// updates/s at 8 lanes, 1.251e8 at 16, 8.33e7 at 32 with a kernel per views held; 1.602e8 at
/// 4 with one kernel for all; the moves are the same at any lanes: every group reduction is a
/// min).
fn opt_lanes() -> u32 {
    std::env::var("TESSERA_MESH_OPT_LANES")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|l| l.is_power_of_two() && *l <= 32)
        .unwrap_or(8)
}

/// opt-colour's class kernel for `corners` a cell and `lanes` a node: kernels/mesh.cu has one
/// per number of cell views a lane holds in registers (the rest are taken again from the
/// corners: the same numbers), each compiled for its own registers. Tets: a Kuhn box's node
/// has 24 cells, so 24 / lanes rounded up, at most 6; triangles: 4.
fn opt_class_kernel(corners: u32, lanes: u32) -> &'static str {
    match (corners, lanes) {
        (3, _) => "mesh_opt_class_tri4",
        (_, 32) => "mesh_opt_class_tet1",
        (_, 16) => "mesh_opt_class_tet2",
        (_, 8) => "mesh_opt_class_tet3",
        _ => "mesh_opt_class_tet6",
    }
}

/// The active nodes grouped by colour (ascending within a class) and where each class starts
/// (one more entry than classes): a launch per class then has a thread per node of the class
/// (one over all nodes left ~1 thread in 20 of each warp busy).
pub(super) fn colour_classes(patch: &Patch, colours: &[u32]) -> (Vec<u32>, Vec<u64>) {
    let class = |i: usize| (patch.active(i) && colours[i] != u32::MAX).then(|| colours[i] as usize);
    let classes = (0..colours.len())
        .filter_map(class)
        .max()
        .map_or(0, |c| c + 1);
    let mut start = vec![0u64; classes + 1];
    for c in (0..colours.len()).filter_map(class) {
        start[c + 1] += 1;
    }
    for c in 0..classes {
        start[c + 1] += start[c];
    }
    // A counting sort: nodes in ascending order within each class.
    let mut next = start.clone();
    let mut nodes = vec![0u32; start[classes] as usize];
    for i in 0..colours.len() {
        if let Some(c) = class(i) {
            nodes[next[c] as usize] = i as u32;
            next[c] += 1;
        }
    }
    (nodes, start)
}

impl<'g> Resident<'g> {
    fn new(gpu: &'g Gpu, patch: &Patch, s: &Settings) -> Result<Resident<'g>> {
        let m = &patch.mesh;
        let n = m.num_nodes();
        let (class_nodes, class_start) = colour_classes(patch, &s.colours);
        let lanes = opt_lanes();
        Ok(Resident {
            gpu,
            k: Functions::load(gpu, m.corners() as u32, lanes)?,
            nodes: n as u32,
            ncells: m.num_cells() as u64,
            corners: m.corners() as u32,
            counted_cells: patch.counted.iter().filter(|&&c| c).count() as u64,
            cells: gpu.upload("mesh cells", &m.cells)?,
            n2c_offsets: gpu.upload("node-to-cell offsets", &offsets(&patch.n2c.offsets))?,
            n2c: gpu.upload("node-to-cell slots", &patch.n2c.items)?,
            graph_offsets: gpu.upload("node graph offsets", &offsets(&patch.graph.offsets))?,
            graph: gpu.upload("node graph", &patch.graph.items)?,
            active: gpu.upload("active nodes", &flags(n, |i| patch.active(i)))?,
            counted: gpu.upload("counted cells", &flags(m.num_cells(), |c| patch.counted[c]))?,
            moves: gpu.zeros("node moves", 3 * n)?,
            pos: [
                gpu.upload("x", &m.x)?,
                gpu.upload("y", &m.y)?,
                gpu.upload("z", &m.z)?,
            ],
            points: gpu.zeros("packed positions", 4 * n)?,
            old: [
                gpu.zeros("saved x", n)?,
                gpu.zeros("saved y", n)?,
                gpu.zeros("saved z", n)?,
            ],
            moved: gpu.zeros("moved nodes", n)?,
            flag: gpu.zeros("nodes to send back", n)?,
            words: gpu.zeros("reduction words", WORDS)?,
            class_nodes: gpu.upload("colour classes", &class_nodes)?,
            class_start,
            // The largest colour here (-1: none), as optimise::iteration takes it.
            local_classes: s
                .colours
                .iter()
                .filter(|&&c| c != u32::MAX)
                .max()
                .map_or(-1.0, |&c| c as f64),
            opt_lanes: lanes,
        })
    }

    /// Refresh the ghosts' positions from their owners.
    fn ghosts(&mut self, halo: Option<&mut DeviceHalo>) -> Result<()> {
        let Some(h) = halo else { return Ok(()) };
        let gpu = self.gpu;
        let (ns, nr) = (h.send.len() as u64, h.recv.len() as u64);
        let [x, y, z] = &mut self.pos;
        gpu.launch(&self.k.pack, grid(ns), |b| {
            b.arg(&*x)
                .arg(&*y)
                .arg(&*z)
                .arg(&h.send)
                .arg(&ns)
                .arg(&mut h.send_buf);
        })?;
        for (q, s, r) in &h.peers {
            let send = h.send_buf.slice(3 * s.start..3 * s.end);
            let mut recv = h.recv_buf.slice_mut(3 * r.start..3 * r.end);
            h.exchange.sendrecv(&send, *q, &mut recv, *q)?;
        }
        gpu.launch(&self.k.unpack, grid(nr), |b| {
            b.arg(&h.recv_buf)
                .arg(&h.recv)
                .arg(&nr)
                .arg(x)
                .arg(y)
                .arg(z)
                .arg(&mut self.points);
        })
    }

    fn save(&mut self) -> Result<()> {
        for (p, o) in self.pos.iter().zip(self.old.iter_mut()) {
            self.gpu
                .stream
                .memcpy_dtod(p, o)
                .map_err(|e| crate::device::gpu_error("save positions", e))?;
        }
        Ok(())
    }

    /// A grid-stride launch of `kernel` over `items`: at most its blocks resident at once.
    fn spread(&self, kernel: &Kernel, items: u64) -> Result<cudarc::driver::LaunchConfig> {
        let resident = u64::from(self.gpu.resident_blocks(kernel)?);
        Ok(blocks(
            resident.min(items.div_ceil(THREADS as u64)),
            THREADS,
        ))
    }

    /// A few words from the device (waits for the queued work).
    fn words(&self, n: usize) -> Result<Vec<u64>> {
        self.gpu.download("reduction words", &self.words, n)
    }

    fn set_words(&mut self, w: &[u64]) -> Result<()> {
        self.gpu
            .stream
            .memcpy_htod(w, &mut self.words.slice_mut(0..w.len()))
            .map_err(|e| crate::device::gpu_error("reset reduction words", e))
    }

    /// The quality summary over all ranks (the fields the iterations use: cells, minimum η,
    /// η sum, F, inverted cells).
    fn summary(&mut self, ex: &dyn Exchange) -> Result<Summary> {
        self.set_words(&CLEAR[..6])?;
        let cfg = self.spread(&self.k.summary, self.ncells)?;
        self.gpu.launch(&self.k.summary, cfg, |b| {
            b.arg(&self.points)
                .arg(&self.cells)
                .arg(&self.ncells)
                .arg(&self.corners)
                .arg(&self.counted)
                .arg(&mut self.words);
        })?;
        let w = self.words(6)?;
        Ok(ex.summary(self.summary_of(&w)))
    }

    /// This rank's summary from the reduction words [0..6].
    fn summary_of(&self, w: &[u64]) -> Summary {
        let inverted = w[4];
        Summary {
            cells: self.counted_cells,
            min_eta: f64::from_bits(w[5]),
            eta_sum: ExactSum::from_words([w[0], w[1]]),
            // An inverted cell's f is infinite: the CPU's sum saturates.
            deformation: if inverted > 0 {
                ExactSum(i128::MAX)
            } else {
                ExactSum::from_words([w[2], w[3]])
            },
            inverted,
            ..Summary::default()
        }
    }

    fn timed_summary(&mut self, ex: &dyn Exchange, clock: &mut Clock) -> Result<Summary> {
        let t = Instant::now();
        let after = self.summary(ex)?;
        clock.cell += t.elapsed().as_secs_f64();
        Ok(after)
    }

    /// One opt-colour iteration (optimise::iteration): the colour classes in turn, each
    /// node of a class moved in place, ghosts refreshed after each class. Returns the
    /// largest move over all ranks.
    fn opt_colour(
        &mut self,
        ex: &dyn Exchange,
        mut halo: Option<&mut DeviceHalo>,
        clock: &mut Clock,
    ) -> Result<f64> {
        let classes = (ex.max(self.local_classes) + 1.0) as usize;
        self.set_words(&[0])?;
        for class in 0..classes {
            // A class this rank lacks has no nodes here; the ghost exchange still runs.
            let start = self.class_start.get(class).copied().unwrap_or(0);
            let count = self
                .class_start
                .get(class + 1)
                .map_or(0, |&end| end - start);
            if count > 0 {
                clock.node += self.gpu.timed(|| self.opt_class(start, count))?;
            }
            self.timed_ghosts(halo.as_deref_mut(), clock)?;
        }
        let largest = f64::from_bits(self.words(1)?[0]);
        let t = Instant::now();
        let largest = ex.max(largest);
        clock.exchange += t.elapsed().as_secs_f64();
        Ok(largest)
    }

    /// The packed copy of the positions from x, y, z (after the upload and a restore).
    fn pack_points(&mut self) -> Result<()> {
        let nodes = self.nodes;
        let [x, y, z] = &self.pos;
        self.gpu
            .launch(&self.k.pack_points, grid(nodes as u64), |b| {
                b.arg(x).arg(y).arg(z).arg(&nodes).arg(&mut self.points);
            })
    }

    /// One colour class's moves: class_nodes[start..start + count]. (The mesh_opt_class
    /// kernels are compiled for blocks of at most 256 threads, THREADS, two resident an SM.)
    fn opt_class(&mut self, start: u64, count: u64) -> Result<()> {
        let [x, y, z] = &mut self.pos;
        self.gpu.launch(
            &self.k.opt_class,
            grid(count * u64::from(self.opt_lanes)),
            |b| {
                b.arg(x)
                    .arg(y)
                    .arg(z)
                    .arg(&mut self.points)
                    .arg(&self.cells)
                    .arg(&self.n2c_offsets)
                    .arg(&self.n2c)
                    .arg(&self.graph_offsets)
                    .arg(&self.graph)
                    .arg(&self.class_nodes)
                    .arg(&start)
                    .arg(&count)
                    .arg(&self.opt_lanes)
                    .arg(&mut self.words);
            },
        )
    }

    /// l2v's moves: one node kernel (each node sums its cells' corner terms, computed in
    /// place, then steps with the safeguard).
    fn l2v_moves(&mut self, pre: Preconditioner, clock: &mut Clock) -> Result<()> {
        let gpu = self.gpu;
        let (n, nodes) = (self.corners, self.nodes);
        let block = u32::from(pre == Preconditioner::Block);
        clock.node += gpu.timed(|| {
            gpu.launch(&self.k.l2v_node, grid(nodes as u64), |b| {
                b.arg(&self.points)
                    .arg(&self.cells)
                    .arg(&n)
                    .arg(&self.n2c_offsets)
                    .arg(&self.n2c)
                    .arg(&self.active)
                    .arg(&nodes)
                    .arg(&block)
                    .arg(&mut self.moves);
            })
        })?;
        Ok(())
    }

    fn laplace_moves(&mut self, smart: bool, clock: &mut Clock) -> Result<()> {
        let gpu = self.gpu;
        let (n, nodes, smart) = (self.corners, self.nodes, u32::from(smart));
        let [x, y, z] = &self.pos;
        clock.node += gpu.timed(|| {
            gpu.launch(&self.k.laplace_node, grid(nodes as u64), |b| {
                b.arg(x)
                    .arg(y)
                    .arg(z)
                    .arg(&self.cells)
                    .arg(&n)
                    .arg(&self.n2c_offsets)
                    .arg(&self.n2c)
                    .arg(&self.graph_offsets)
                    .arg(&self.graph)
                    .arg(&self.active)
                    .arg(&nodes)
                    .arg(&smart)
                    .arg(&mut self.moves);
            })
        })?;
        Ok(())
    }

    /// Move every mover from its saved position by `scale` times its move, then send back the
    /// moved nodes of bad cells until none is left on any rank (super::guard::apply). Returns
    /// the quality summary after and the largest move kept, over all ranks: both from the
    /// last round's pass, which saw the final positions (it sent nothing back anywhere).
    fn guard(
        &mut self,
        ex: &dyn Exchange,
        mut halo: Option<&mut DeviceHalo>,
        scale: f64,
        floor: Option<f64>,
        clock: &mut Clock,
    ) -> Result<(Summary, f64)> {
        let gpu = self.gpu;
        let nodes = self.nodes;
        clock.node += gpu.timed(|| {
            let [xo, yo, zo] = &self.old;
            let [x, y, z] = &mut self.pos;
            gpu.launch(&self.k.apply, grid(nodes as u64), |b| {
                b.arg(xo)
                    .arg(yo)
                    .arg(zo)
                    .arg(&self.moves)
                    .arg(&self.active)
                    .arg(&nodes)
                    .arg(&scale)
                    .arg(x)
                    .arg(y)
                    .arg(z)
                    .arg(&mut self.points)
                    .arg(&mut self.moved);
            })
        })?;
        self.timed_ghosts(halo.as_deref_mut(), clock)?;
        let words = loop {
            self.set_words(&CLEAR)?;
            clock.cell += gpu.timed(|| self.guard_round(floor))?;
            let words = self.words(WORDS)?;
            self.timed_ghosts(halo.as_deref_mut(), clock)?;
            let t = Instant::now();
            let again = ex.any(words[7] > 0);
            clock.exchange += t.elapsed().as_secs_f64();
            if !again {
                break words;
            }
        };
        let t = Instant::now();
        let largest = ex.max(f64::from_bits(words[6]));
        let after = ex.summary(self.summary_of(&words));
        clock.exchange += t.elapsed().as_secs_f64();
        Ok((after, largest))
    }

    /// One round of the guard: flag the moved corners of bad cells (with the round's quality
    /// sums and largest move, words[0..7]), send them back; the count of nodes sent back
    /// goes to words[7].
    fn guard_round(&mut self, floor: Option<f64>) -> Result<()> {
        let (ncells, n, nodes) = (self.ncells, self.corners, self.nodes);
        let (level, has_floor) = (floor.unwrap_or(0.0), u32::from(floor.is_some()));
        let cfg = self.spread(&self.k.guard_pass, ncells.max(nodes as u64))?;
        let [xo, yo, zo] = &self.old;
        self.gpu.launch(&self.k.guard_pass, cfg, |b| {
            b.arg(&self.points)
                .arg(xo)
                .arg(yo)
                .arg(zo)
                .arg(&self.cells)
                .arg(&ncells)
                .arg(&n)
                .arg(&nodes)
                .arg(&self.counted)
                .arg(&self.moved)
                .arg(&level)
                .arg(&has_floor)
                .arg(&mut self.flag)
                .arg(&mut self.words);
        })?;
        let mut count = self.words.slice_mut(7..8);
        let [x, y, z] = &mut self.pos;
        self.gpu.launch(&self.k.undo, grid(nodes as u64), |b| {
            b.arg(xo)
                .arg(yo)
                .arg(zo)
                .arg(&nodes)
                .arg(&mut self.moved)
                .arg(&mut self.flag)
                .arg(x)
                .arg(y)
                .arg(z)
                .arg(&mut self.points)
                .arg(&mut count);
        })
    }

    fn timed_ghosts(&mut self, halo: Option<&mut DeviceHalo>, clock: &mut Clock) -> Result<()> {
        if halo.is_none() {
            return Ok(());
        }
        let t = Instant::now();
        self.ghosts(halo)?;
        self.gpu.sync("ghost exchange")?;
        clock.exchange += t.elapsed().as_secs_f64();
        Ok(())
    }

    /// Back to the saved positions (every halving of the whole step failed).
    fn restore(&mut self) -> Result<()> {
        for (o, p) in self.old.iter().zip(self.pos.iter_mut()) {
            self.gpu
                .stream
                .memcpy_dtod(o, p)
                .map_err(|e| crate::device::gpu_error("restore positions", e))?;
        }
        self.pack_points()
    }

    /// One l2v iteration's guard with whole-step halving (super::l2v::apply).
    fn l2v_apply(
        &mut self,
        ex: &dyn Exchange,
        mut halo: Option<&mut DeviceHalo>,
        before: &Summary,
        clock: &mut Clock,
    ) -> Result<(Summary, f64)> {
        let mut scale = 1.0;
        for _ in 0..=GLOBAL_HALVINGS {
            let (after, largest) =
                self.guard(ex, halo.as_deref_mut(), scale, Some(before.min_eta), clock)?;
            if after.deformation <= before.deformation {
                return Ok((after, largest));
            }
            scale *= 0.5;
        }
        self.restore()?;
        self.timed_ghosts(halo, clock)?;
        Ok((before.clone(), 0.0))
    }

    fn positions(&self, patch: &mut Patch) -> Result<()> {
        let n = self.nodes as usize;
        let m = &mut patch.mesh;
        m.x = self.gpu.download("x", &self.pos[0], n)?;
        m.y = self.gpu.download("y", &self.pos[1], n)?;
        m.z = self.gpu.download("z", &self.pos[2], n)?;
        Ok(())
    }
}

/// A patch and its ghost exchange set up on the GPU (kernels compiled, arrays uploaded),
/// ready to smooth: `super::smooth` on the device.
pub struct GpuSmoother<'g> {
    dev: Resident<'g>,
    halo: Option<DeviceHalo<'g>>,
}

impl<'g> GpuSmoother<'g> {
    /// `halo` carries ghost positions between ranks (None on one rank).
    pub fn new(
        gpu: &'g Gpu,
        patch: &Patch,
        halo: Option<DeviceHalo<'g>>,
        s: &Settings,
    ) -> Result<GpuSmoother<'g>> {
        let dev = Resident::new(gpu, patch, s)?;
        Ok(GpuSmoother { dev, halo })
    }

    /// The same iterations and records as `super::smooth`; the positions stay on the device
    /// (`download` brings them into `patch`).
    pub fn smooth(
        &mut self,
        ex: &dyn Exchange,
        s: &Settings,
        mut each: impl FnMut(usize, &Record),
    ) -> Result<Vec<Record>> {
        let (dev, mut halo) = (&mut self.dev, self.halo.as_mut());
        dev.pack_points()?;
        let mut before = dev.summary(ex)?;
        let mut records = Vec::with_capacity(s.iterations);
        for it in 0..s.iterations {
            let mut clock = Clock::default();
            dev.save()?;
            let (after, max_move) = match s.method {
                Method::L2v => {
                    dev.l2v_moves(s.preconditioner, &mut clock)?;
                    dev.l2v_apply(ex, halo.as_deref_mut(), &before, &mut clock)?
                }
                Method::Laplace => {
                    dev.laplace_moves(s.smart, &mut clock)?;
                    let floor = s.smart.then_some(before.min_eta);
                    dev.guard(ex, halo.as_deref_mut(), 1.0, floor, &mut clock)?
                }
                Method::OptColour => {
                    let largest = dev.opt_colour(ex, halo.as_deref_mut(), &mut clock)?;
                    (dev.timed_summary(ex, &mut clock)?, largest)
                }
            };
            let record = Record::of(&after, max_move, &clock);
            each(it, &record);
            records.push(record);
            before = after;
            if max_move <= s.tolerance {
                break;
            }
        }
        Ok(records)
    }

    /// The smoothed positions into `patch` (after `smooth`).
    pub fn download(&self, patch: &mut Patch) -> Result<()> {
        self.dev.positions(patch)
    }
}
