//! The sweeps on the rank's GPU (kernels/bc.cu), over the whole graph (`Distribution::Full`)
//! or the rank's part of the 1D partition (`Distribution::Partitioned`): the rows uploaded
//! once, each batch's levels (lane masks and vertex lists), σ and δ kept on the device, the
//! next level's size read back per forward level, and the fixed-point sums downloaded at the
//! end. On a partitioned graph a level's frontier may hold ghosts, whose out-rows other
//! ranks hold, so each own vertex pulls its next-level lanes over its in-row (`bc_discover`)
//! instead of the frontier pushing along out-rows (`bc_expand`), and each level ends with
//! its σ (forward) or u = (1 + δ)/σ (backward, kept in σ's place) pushed to the ghosts
//! (`gpu_ghosts`), as `sweep` does.
//! Rows longer than `CHUNK` go to the `_chunks` kernels a piece a warp (`gpu_pieces`).

use super::gpu_ghosts::{self, GhostPush};
use super::gpu_pieces::{self, DevicePieces};
use super::steps::Steps;
use super::trace::LevelTrace;
use super::view::{LocalRows, View};
use super::Carried;
use crate::comm::{GpuTransport, Op, World};
use crate::device::{gpu_error, grid, memory, Gpu, Kernel};
use crate::error::Result;
use crate::graph::Vid;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use rayon::prelude::*;

/// Threads per vertex (or piece of a long row) in every level kernel: a warp (kernels/bc.cu's
/// WARP), which serves all 64 lanes in `bc_forward` and `bc_backward`.
const WARP: u32 = 32;

/// Device bytes for the view's rows (with their long rows' pieces, and the pieces' sums for
/// `lanes` lanes), `lanes` lanes of values over its slots (own vertices and ghosts) and, on
/// a partitioned graph, the ghost plan and its buffers.
pub fn bytes_needed(view: &View, lanes: usize) -> u64 {
    let pieces = |r: &LocalRows| gpu_pieces::count(r, view.local_n);
    let rows = |r: &LocalRows| 8 * r.offsets.len() as u64 + 4 * r.adj.len() as u64 + 16 * pieces(r);
    let most_pieces = pieces(&view.out).max(view.inc.as_ref().map_or(0, pieces));
    let slots = view.slots() as u64;
    rows(&view.out)
        + view.inc.as_ref().map_or(0, rows)
        + most_pieces * lanes as u64 * 8
        + slots * lanes as u64 * super::BYTES_PER_LANE
        + 16 * slots
        + view
            .ghosts
            .as_ref()
            .map_or(0, |g| gpu_ghosts::bytes_needed(g, lanes))
}

struct DeviceRows {
    offsets: CudaSlice<u64>,
    adj: CudaSlice<u32>,
    /// The pieces of the own vertices' long rows.
    pieces: DevicePieces,
}

fn upload_rows(gpu: &Gpu, rows: &LocalRows, n: usize) -> Result<DeviceRows> {
    Ok(DeviceRows {
        offsets: gpu.upload("betweenness row offsets", &rows.offsets)?,
        adj: gpu.upload("betweenness rows", &rows.adj)?,
        pieces: DevicePieces::upload(gpu, rows, n)?,
    })
}

struct Kernels {
    sources: Kernel,
    expand: Kernel,
    expand_chunks: Kernel,
    discover: Kernel,
    discover_chunks: Kernel,
    forward: Kernel,
    forward_chunks: Kernel,
    backward: Kernel,
    backward_chunks: Kernel,
    combine: Kernel,
    accumulate: Kernel,
}

/// A row's length above which the kernels leave it to its pieces (kernels/bc.cu `chunk`).
const CHUNK: u64 = super::CHUNK as u64;

/// Every batch of `sources` on the GPU: the sums of the view's own vertices, the deepest
/// level and the GPU seconds of each phase; `steps` gains the device set-up (uploads, the
/// exchange), the sweeps, the sums' download and the release of the device buffers. With
/// `world`, the view is the rank's part of a partitioned graph and every rank runs every
/// batch (collective; ghosts' values through `transport`).
pub fn batches(
    gpu: &Gpu,
    view: &View,
    sources: &[Vid],
    lanes: usize,
    world: Option<(&World, GpuTransport)>,
    steps: &mut Steps,
) -> Result<(Vec<u128>, u32, Option<Phases>)> {
    check_memory(gpu, view, lanes, world.map(|w| w.0))?;
    let f = |name| gpu.function("bc.cu", name);
    // The row sums' loads ahead (kernels/bc.cu AHEAD), where a measurement sets them.
    let rows_kernel = |name| match ahead() {
        Some(a) => gpu.specialised("bc.cu", &[("AHEAD", a)], name),
        None => f(name),
    };
    let k = Kernels {
        sources: f("bc_sources")?,
        expand: f("bc_expand")?,
        expand_chunks: f("bc_expand_chunks")?,
        discover: f("bc_discover")?,
        discover_chunks: f("bc_discover_chunks")?,
        forward: rows_kernel("bc_forward")?,
        forward_chunks: rows_kernel("bc_forward_chunks")?,
        backward: rows_kernel("bc_backward")?,
        backward_chunks: rows_kernel("bc_backward_chunks")?,
        combine: f("bc_combine")?,
        accumulate: f("bc_accumulate")?,
    };
    let mut push = match world {
        Some((world, transport)) => Some(GhostPush::new(world, gpu, transport, view, lanes)?),
        None => None,
    };
    let (n, slots) = (view.local_n, view.slots());
    let out = upload_rows(gpu, &view.out, n)?;
    let inc = match &view.inc {
        Some(rows) => Some(upload_rows(gpu, rows, n)?),
        None => None,
    };
    let in_rows = inc.as_ref().unwrap_or(&out);
    let pieces = out.pieces.count.max(in_rows.pieces.count) as usize;
    let mut state = State::new(gpu, (n, slots), lanes, pieces)?;
    gpu.sync("the betweenness set-up")?;
    steps.mark("setup");
    let mut deepest = 0;
    for (b, batch) in sources.chunks(lanes).enumerate() {
        let batch = Batch::of(view, batch);
        let rows = (in_rows, &out);
        let world = world.map(|w| w.0).zip(push.as_mut());
        let depth = run_batch(gpu, &k, rows, (n, slots), lanes, &batch, &mut state, world)?;
        state.trace.log(b);
        deepest = deepest.max(depth);
    }
    gpu.sync("the betweenness sweeps")?;
    steps.mark("sweeps");
    let sums = download_sums(gpu, &state, n)?;
    steps.mark("download");
    let phases = std::mem::take(&mut state.phases);
    drop((state, out, inc, push));
    gpu.sync("the betweenness release")?;
    steps.mark("release_device");
    Ok((sums, deepest, Some(phases)))
}

/// The `n` fixed-point sums (lo and hi words on the device) on the host. The words land in
/// host memory touched first by every core: the copy's own first touch of 16 bytes a vertex,
/// on one core, took most of its 0.9 s at 2^26 vertices (an H100, batch A of 2026-11-27).
fn download_sums(gpu: &Gpu, state: &State, n: usize) -> Result<Vec<u128>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut words = vec![0u64; 2 * n];
    words.par_chunks_mut(512).for_each(|page| page[0] = 0);
    let (lo, hi) = words.split_at_mut(n);
    for (dev, host) in [(&state.lo, lo), (&state.hi, hi)] {
        gpu.stream
            .memcpy_dtoh(&dev.slice(0..n), host)
            .map_err(|e| gpu_error("copy the betweenness sums to the host", e))?;
    }
    gpu.sync("the betweenness sums' copy")?;
    let (lo, hi) = words.split_at(n);
    Ok(lo
        .par_iter()
        .zip(hi)
        .map(|(&l, &h)| l as u128 | (h as u128) << 64)
        .collect())
}

/// `TESSERA_BC_AHEAD=N` (1 to 64): the row sums load N neighbours' values ahead instead of
/// kernels/bc.cu's AHEAD (a measurement switch; the sums are the same for every N).
fn ahead() -> Option<u64> {
    let n = std::env::var("TESSERA_BC_AHEAD").ok()?.parse().ok()?;
    (1..=64).contains(&n).then_some(n)
}

/// Refuse, before allocating, where the view and its lanes do not fit in the GPU's free
/// memory (on a partitioned graph, on every rank alike where any rank's does not).
fn check_memory(gpu: &Gpu, view: &View, lanes: usize, world: Option<&World>) -> Result<()> {
    let needed = bytes_needed(view, lanes);
    let free = memory::gpu_free(gpu)?;
    let short = match world {
        Some(world) => world.allreduce(u8::from(needed > free), Op::Max) == 1,
        None => needed > free,
    };
    if !short {
        return Ok(());
    }
    let (what, advice) = match world {
        Some(_) => (
            "betweenness on the rank's part of the graph (on this or another rank)",
            "set a smaller batch, or run on more GPUs",
        ),
        None => (
            "betweenness on the whole graph",
            "set a smaller batch, or replicate = \"distributed\"",
        ),
    };
    Err(memory::refusal(what, needed, free, "GPU memory", advice))
}

/// A batch's sources as the device starts them: per lane its value index (all ones where
/// another rank owns it), and level 0's list (the own sources, ascending, once each).
struct Batch {
    lanes: Vec<u64>,
    first: Vec<u32>,
}

impl Batch {
    fn of(view: &View, sources: &[Vid]) -> Batch {
        let own = |v: Vid| {
            let l = v.wrapping_sub(view.first);
            (l < view.local_n as u64).then_some(l)
        };
        let lanes: Vec<u64> = sources
            .iter()
            .map(|&v| own(v).unwrap_or(u64::MAX))
            .collect();
        let mut first: Vec<u32> = lanes
            .iter()
            .filter(|&&l| l != u64::MAX)
            .map(|&l| l as u32)
            .collect();
        first.sort_unstable();
        first.dedup();
        Batch { lanes, first }
    }
}

/// The device values of the batches: σ, δ, lane masks (reached, and per level, kept
/// between batches and cleared), per level the list of its vertices (level 0's: the batch's
/// sources) and its length, the sums, and the next level's length as the GPU counts it.
struct State {
    sigma: CudaSlice<f64>,
    delta: CudaSlice<f64>,
    reached: CudaSlice<u64>,
    levels: Vec<CudaSlice<u64>>,
    lists: Vec<CudaSlice<u32>>,
    counts: Vec<u32>,
    lo: CudaSlice<u64>,
    hi: CudaSlice<u64>,
    count: CudaSlice<u32>,
    /// Per piece of a long row and lane, the piece's sum.
    partial: CudaSlice<f64>,
    phases: Phases,
    trace: LevelTrace,
}

impl State {
    /// Values for `lanes` lanes of every slot, sums of the `n` own vertices, and the sums of
    /// `pieces` pieces of long rows.
    fn new(gpu: &Gpu, (n, slots): (usize, usize), lanes: usize, pieces: usize) -> Result<State> {
        Ok(State {
            sigma: gpu.zeros::<f64>("betweenness sigma", slots * lanes)?,
            delta: gpu.zeros::<f64>("betweenness delta", slots * lanes)?,
            reached: gpu.zeros::<u64>("betweenness masks", slots)?,
            levels: Vec::new(),
            lists: Vec::new(),
            counts: Vec::new(),
            lo: gpu.zeros::<u64>("betweenness sums", n)?,
            hi: gpu.zeros::<u64>("betweenness sums", n)?,
            count: gpu.zeros::<u32>("betweenness level size", 1)?,
            partial: gpu.zeros::<f64>("betweenness pieces' sums", pieces * lanes)?,
            phases: Phases::default(),
            trace: LevelTrace::from_env(),
        })
    }

    /// Level `d`'s masks, cleared, and room for its list (allocated the first time a batch
    /// goes that deep).
    fn level(&mut self, gpu: &Gpu, d: usize, (n, slots): (usize, usize)) -> Result<()> {
        if self.levels.len() <= d {
            self.levels
                .push(gpu.zeros::<u64>("betweenness level masks", slots)?);
            self.lists
                .push(gpu.zeros::<u32>("betweenness level lists", n)?);
        } else {
            gpu.clear("betweenness level masks", &mut self.levels[d])?;
        }
        Ok(())
    }
}

/// Threads for `count` items of `per` threads each.
fn spread(count: u32, per: u32) -> LaunchConfig {
    grid(u64::from(count) * u64::from(per))
}

/// GPU seconds per phase of the sweeps, summed over batches and levels (CUDA events around
/// each launch; the ghost pushes by the host's clock): where the time goes.
#[derive(Default)]
pub struct Phases {
    pub clear: f64,
    pub expand: f64,
    pub forward: f64,
    pub backward: f64,
    pub accumulate: f64,
    pub push: f64,
}

impl Phases {
    /// (name, seconds) of each phase, in sweep order.
    pub fn named(&self) -> [(&'static str, f64); 6] {
        [
            ("clear", self.clear),
            ("expand", self.expand),
            ("forward", self.forward),
            ("backward", self.backward),
            ("accumulate", self.accumulate),
            ("push", self.push),
        ]
    }
}

/// The ghost push of a level's σ or u, timed into `phases.push`.
fn timed_push(
    gpu: &Gpu,
    push: &mut GhostPush,
    carried: Carried,
    (level, values): (&mut CudaSlice<u64>, &mut CudaSlice<f64>),
    phases: &mut Phases,
) -> Result<()> {
    let started = std::time::Instant::now();
    push.push(gpu, carried, level, values)?;
    phases.push += started.elapsed().as_secs_f64();
    Ok(())
}

/// The rows a batch reads: in-rows (forward) and out-rows (backward).
type Rows<'a> = (&'a DeviceRows, &'a DeviceRows);

/// On a partitioned graph: the ranks and the push of ghosts' values.
type Partitioned<'a, 'w> = Option<(&'a World, &'a mut GhostPush<'w>)>;

/// One batch: forward levels until none is reached (on any rank), backward from the
/// deepest, then the sums. Returns the deepest level.
#[allow(clippy::too_many_arguments)]
fn run_batch(
    gpu: &Gpu,
    k: &Kernels,
    rows: Rows,
    (n, slots): (usize, usize),
    lanes: usize,
    batch: &Batch,
    st: &mut State,
    mut part: Partitioned,
) -> Result<u32> {
    let (lanes32, kb) = (lanes as u32, batch.lanes.len() as u32);
    st.trace.begin();
    let on_gpu = gpu.upload("betweenness sources", &batch.lanes)?;
    // σ and δ keep what the last batch left: every read of them is masked by a level mask
    // whose lanes this batch wrote (tests/emulate/bc_levels.cpp starts them as NaN). Their
    // clears took 0.085 s of SSCA#2 SCALE 24's kernel 4 (16 batches, 17 GB each).
    st.phases.clear += gpu.timed(|| {
        gpu.clear("betweenness masks", &mut st.reached)?;
        st.level(gpu, 0, (n, slots))?;
        gpu.launch(&k.sources, grid(kb as u64), |a| {
            a.arg(&on_gpu).arg(&kb).arg(&lanes32).arg(&mut st.sigma);
            a.arg(&mut st.levels[0]).arg(&mut st.reached);
        })
    })?;
    if !batch.first.is_empty() {
        gpu.stream
            .memcpy_htod(
                &batch.first,
                &mut st.lists[0].slice_mut(0..batch.first.len()),
            )
            .map_err(|e| gpu_error("upload the betweenness sources' list", e))?;
    }
    st.counts.clear();
    st.counts.push(batch.first.len() as u32);
    if let Some((_, push)) = part.as_mut() {
        let values = (&mut st.levels[0], &mut st.sigma);
        timed_push(gpu, push, Carried::Sigma, values, &mut st.phases)?;
    }
    let mut level = 0;
    while forward_level(gpu, k, rows, (n, slots), lanes32, level, st, &mut part)? {
        level += 1;
    }
    // From the deepest level (whose successors' level is empty: δ = 0, u = 1/σ) up.
    for at in (0..=level).rev() {
        let count = st.counts[at];
        let out = rows.1;
        let seconds = gpu.timed(|| {
            gpu.launch(&k.backward, spread(count, WARP), |a| {
                a.arg(&out.offsets)
                    .arg(&out.adj)
                    .arg(&st.lists[at])
                    .arg(&count)
                    .arg(&lanes32)
                    .arg(&CHUNK);
                a.arg(&st.levels[at]).arg(&st.levels[at + 1]);
                a.arg(&mut st.sigma).arg(&mut st.delta);
            })?;
            let p = &out.pieces;
            if p.count == 0 {
                return Ok(());
            }
            gpu.launch(&k.backward_chunks, spread(p.count, WARP), |a| {
                a.arg(&out.offsets).arg(&out.adj);
                a.arg(&p.row_of).arg(&p.rank).arg(&p.count).arg(&CHUNK);
                a.arg(&lanes32).arg(&st.levels[at]).arg(&st.levels[at + 1]);
                a.arg(&st.sigma).arg(&mut st.partial);
            })?;
            let values = (&mut st.sigma, &mut st.delta);
            combine(gpu, k, p, (lanes32, 1), &st.levels[at], &st.partial, values)
        })?;
        st.phases.backward += seconds;
        st.trace.backward(at, seconds);
        if let (Some((_, push)), true) = (part.as_mut(), at > 0) {
            let values = (&mut st.levels[at], &mut st.sigma);
            timed_push(gpu, push, Carried::Quotient, values, &mut st.phases)?;
        }
    }
    let n32 = n as u32;
    st.phases.accumulate += gpu.timed(|| {
        gpu.launch(&k.accumulate, grid(n as u64), |a| {
            a.arg(&n32)
                .arg(&lanes32)
                .arg(&st.reached)
                .arg(&st.levels[0]);
            a.arg(&st.delta).arg(&mut st.lo).arg(&mut st.hi);
        })
    })?;
    Ok(level as u32)
}

/// The long rows' pieces' sums added in piece order, for the lanes of each long row's
/// vertex in `masks` (`bc_combine`): into σ (`backward` 0), or finishing δ and u in σ's place
/// (`backward` 1).
fn combine(
    gpu: &Gpu,
    k: &Kernels,
    p: &DevicePieces,
    (lanes32, backward): (u32, u32),
    masks: &CudaSlice<u64>,
    partial: &CudaSlice<f64>,
    (sigma, delta): (&mut CudaSlice<f64>, &mut CudaSlice<f64>),
) -> Result<()> {
    gpu.launch(&k.combine, spread(p.long, lanes32), |a| {
        a.arg(&p.rows).arg(&p.first).arg(&p.long).arg(&lanes32);
        a.arg(&backward)
            .arg(masks)
            .arg(partial)
            .arg(sigma)
            .arg(delta);
    })
}

/// Level `level + 1` of a batch: its masks and list (`bc_expand` on the
/// whole graph, `bc_discover` on a part), its σ, and on a part its σ pushed to the ghosts.
/// False where no rank reached a vertex.
#[allow(clippy::too_many_arguments)]
fn forward_level(
    gpu: &Gpu,
    k: &Kernels,
    (inc, out): Rows,
    (n, slots): (usize, usize),
    lanes32: u32,
    level: usize,
    st: &mut State,
    part: &mut Partitioned,
) -> Result<bool> {
    let clear = gpu.timed(|| {
        st.level(gpu, level + 1, (n, slots))?;
        gpu.clear("betweenness level size", &mut st.count)
    })?;
    st.phases.clear += clear;
    let count = st.counts[level];
    let (done, rest) = st.levels.split_at_mut(level + 1);
    let (lists, next_list) = st.lists.split_at_mut(level + 1);
    let expand = gpu.timed(|| match part {
        None => {
            gpu.launch(&k.expand, spread(count, WARP), |a| {
                a.arg(&out.offsets)
                    .arg(&out.adj)
                    .arg(&lists[level])
                    .arg(&count)
                    .arg(&CHUNK);
                a.arg(&done[level]).arg(&st.reached).arg(&mut rest[0]);
                a.arg(&mut next_list[0]).arg(&mut st.count);
            })?;
            let p = &out.pieces;
            if p.count == 0 {
                return Ok(());
            }
            gpu.launch(&k.expand_chunks, spread(p.count, WARP), |a| {
                a.arg(&out.offsets).arg(&out.adj);
                a.arg(&p.row_of).arg(&p.rank).arg(&p.count).arg(&CHUNK);
                a.arg(&done[level]).arg(&st.reached).arg(&mut rest[0]);
                a.arg(&mut next_list[0]).arg(&mut st.count);
            })
        }
        Some(_) => {
            let n32 = n as u32;
            gpu.launch(&k.discover, spread(n32, WARP), |a| {
                a.arg(&inc.offsets).arg(&inc.adj).arg(&n32).arg(&CHUNK);
                a.arg(&done[level]).arg(&st.reached).arg(&mut rest[0]);
                a.arg(&mut next_list[0]).arg(&mut st.count);
            })?;
            let p = &inc.pieces;
            if p.count == 0 {
                return Ok(());
            }
            gpu.launch(&k.discover_chunks, spread(p.count, WARP), |a| {
                a.arg(&inc.offsets).arg(&inc.adj);
                a.arg(&p.row_of).arg(&p.rank).arg(&p.count).arg(&CHUNK);
                a.arg(&done[level]).arg(&st.reached).arg(&mut rest[0]);
                a.arg(&mut next_list[0]).arg(&mut st.count);
            })
        }
    })?;
    st.phases.expand += expand;
    let next = gpu.download("betweenness level size", &st.count, 1)?[0];
    let mut forward = 0.0;
    if next > 0 {
        forward = gpu.timed(|| {
            gpu.launch(&k.forward, spread(next, WARP), |a| {
                a.arg(&inc.offsets)
                    .arg(&inc.adj)
                    .arg(&next_list[0])
                    .arg(&next)
                    .arg(&lanes32)
                    .arg(&CHUNK);
                a.arg(&done[level]).arg(&rest[0]).arg(&mut st.reached);
                a.arg(&mut st.sigma);
            })?;
            let p = &inc.pieces;
            if p.count == 0 {
                return Ok(());
            }
            gpu.launch(&k.forward_chunks, spread(p.count, WARP), |a| {
                a.arg(&inc.offsets).arg(&inc.adj);
                a.arg(&p.row_of).arg(&p.rank).arg(&p.count).arg(&CHUNK);
                a.arg(&lanes32).arg(&done[level]).arg(&rest[0]);
                a.arg(&st.sigma).arg(&mut st.partial);
            })?;
            let values = (&mut st.sigma, &mut st.delta);
            combine(gpu, k, p, (lanes32, 0), &rest[0], &st.partial, values)
        })?;
        st.phases.forward += forward;
    }
    st.trace.forward(level + 1, next, clear + expand + forward);
    let found = match part {
        None => next > 0,
        Some((world, push)) => {
            let values = (&mut rest[0], &mut st.sigma);
            timed_push(gpu, push, Carried::Sigma, values, &mut st.phases)?;
            world.allreduce(u8::from(next > 0), Op::Max) == 1
        }
    };
    if found {
        st.counts.push(next);
    }
    Ok(found)
}
