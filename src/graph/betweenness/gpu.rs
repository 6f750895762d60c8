//! The sweeps on the rank's GPU (kernels/bc.cu) over the whole graph (`Distribution::Full`):
//! the rows uploaded once, each batch's levels (lane masks and vertex lists), σ and δ kept on
//! the device, the next level's size read back per forward level, and the fixed-point sums
//! downloaded at the end.

use super::view::{LocalRows, View};
use crate::device::{gpu_error, grid, memory, Gpu, Kernel};
use crate::error::Result;
use crate::graph::Vid;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

/// Threads per frontier vertex in `bc_expand` (kernels/bc.cu's WARP).
const WARP: u32 = 32;

/// Device bytes for the view's rows and `lanes` lanes of values.
pub fn bytes_needed(view: &View, lanes: usize) -> u64 {
    let rows = |r: &LocalRows| 8 * r.offsets.len() as u64 + 4 * r.adj.len() as u64;
    let n = view.local_n as u64;
    rows(&view.out)
        + view.inc.as_ref().map_or(0, rows)
        + n * lanes as u64 * super::BYTES_PER_LANE
        + 16 * n
}

struct DeviceRows {
    offsets: CudaSlice<u64>,
    adj: CudaSlice<u32>,
}

fn upload_rows(gpu: &Gpu, rows: &LocalRows) -> Result<DeviceRows> {
    Ok(DeviceRows {
        offsets: gpu.upload("betweenness row offsets", &rows.offsets)?,
        adj: gpu.upload("betweenness rows", &rows.adj)?,
    })
}

struct Kernels {
    sources: Kernel,
    expand: Kernel,
    forward: Kernel,
    backward: Kernel,
    accumulate: Kernel,
}

/// Every batch of `sources` on the GPU: the sums of every vertex and the deepest level.
pub fn batches(gpu: &Gpu, view: &View, sources: &[Vid], lanes: usize) -> Result<(Vec<u128>, u32)> {
    let needed = bytes_needed(view, lanes);
    let free = memory::gpu_free(gpu)?;
    if needed > free {
        return Err(memory::refusal(
            "betweenness on the whole graph",
            needed,
            free,
            "GPU memory",
            "set a smaller batch, or replicate = \"distributed\" on the CPU",
        ));
    }
    let f = |name| gpu.function("bc.cu", name);
    let k = Kernels {
        sources: f("bc_sources")?,
        expand: f("bc_expand")?,
        forward: f("bc_forward")?,
        backward: f("bc_backward")?,
        accumulate: f("bc_accumulate")?,
    };
    let out = upload_rows(gpu, &view.out)?;
    let inc = match &view.inc {
        Some(rows) => Some(upload_rows(gpu, rows)?),
        None => None,
    };
    let inc = inc.as_ref().unwrap_or(&out);
    let n = view.local_n;
    let mut state = State {
        sigma: gpu.zeros::<f64>("betweenness sigma", n * lanes)?,
        delta: gpu.zeros::<f64>("betweenness delta", n * lanes)?,
        reached: gpu.zeros::<u64>("betweenness masks", n)?,
        levels: Vec::new(),
        lists: Vec::new(),
        counts: Vec::new(),
        lo: gpu.zeros::<u64>("betweenness sums", n)?,
        hi: gpu.zeros::<u64>("betweenness sums", n)?,
        count: gpu.zeros::<u32>("betweenness level size", 1)?,
    };
    let mut deepest = 0;
    for batch in sources.chunks(lanes) {
        let depth = run_batch(gpu, &k, (inc, &out), n, lanes, batch, &mut state)?;
        deepest = deepest.max(depth);
    }
    let lo = gpu.download("betweenness sums", &state.lo, n)?;
    let hi = gpu.download("betweenness sums", &state.hi, n)?;
    let sums = lo
        .iter()
        .zip(&hi)
        .map(|(&l, &h)| l as u128 | (h as u128) << 64)
        .collect();
    Ok((sums, deepest))
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
}

impl State {
    /// Level `d`'s masks, cleared, and room for its list (allocated the first time a batch
    /// goes that deep).
    fn level(&mut self, gpu: &Gpu, d: usize, n: usize) -> Result<()> {
        if self.levels.len() <= d {
            self.levels
                .push(gpu.zeros::<u64>("betweenness level masks", n)?);
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

/// One batch: forward levels until none is reached, backward from the deepest, then the
/// sums. Returns the deepest level.
fn run_batch(
    gpu: &Gpu,
    k: &Kernels,
    (inc, out): (&DeviceRows, &DeviceRows),
    n: usize,
    lanes: usize,
    batch: &[Vid],
    st: &mut State,
) -> Result<u32> {
    let (n32, lanes32, kb) = (n as u32, lanes as u32, batch.len() as u32);
    gpu.clear("betweenness sigma", &mut st.sigma)?;
    gpu.clear("betweenness delta", &mut st.delta)?;
    gpu.clear("betweenness masks", &mut st.reached)?;
    st.level(gpu, 0, n)?;
    let on_gpu = gpu.upload("betweenness sources", batch)?;
    gpu.launch(&k.sources, grid(kb as u64), |a| {
        a.arg(&on_gpu).arg(&kb).arg(&lanes32).arg(&mut st.sigma);
        a.arg(&mut st.levels[0]).arg(&mut st.reached);
    })?;
    let mut first: Vec<u32> = batch.iter().map(|&v| v as u32).collect();
    first.sort_unstable();
    first.dedup();
    gpu.stream
        .memcpy_htod(&first, &mut st.lists[0].slice_mut(0..first.len()))
        .map_err(|e| gpu_error("upload the betweenness sources' list", e))?;
    st.counts.clear();
    st.counts.push(first.len() as u32);
    let mut level = 0;
    loop {
        st.level(gpu, level + 1, n)?;
        gpu.clear("betweenness level size", &mut st.count)?;
        let count = st.counts[level];
        let (done, rest) = st.levels.split_at_mut(level + 1);
        let (lists, next_list) = st.lists.split_at_mut(level + 1);
        gpu.launch(&k.expand, spread(count, WARP), |a| {
            a.arg(&out.offsets)
                .arg(&out.adj)
                .arg(&lists[level])
                .arg(&count);
            a.arg(&done[level]).arg(&st.reached).arg(&mut rest[0]);
            a.arg(&mut next_list[0]).arg(&mut st.count);
        })?;
        let next = gpu.download("betweenness level size", &st.count, 1)?[0];
        if next == 0 {
            break;
        }
        gpu.launch(&k.forward, spread(next, lanes32), |a| {
            a.arg(&inc.offsets)
                .arg(&inc.adj)
                .arg(&next_list[0])
                .arg(&next)
                .arg(&lanes32);
            a.arg(&done[level]).arg(&rest[0]).arg(&mut st.reached);
            a.arg(&mut st.sigma);
        })?;
        st.counts.push(next);
        level += 1;
    }
    for at in (0..level).rev() {
        let count = st.counts[at];
        gpu.launch(&k.backward, spread(count, lanes32), |a| {
            a.arg(&out.offsets)
                .arg(&out.adj)
                .arg(&st.lists[at])
                .arg(&count)
                .arg(&lanes32);
            a.arg(&st.levels[at]).arg(&st.levels[at + 1]);
            a.arg(&st.sigma).arg(&mut st.delta);
        })?;
    }
    gpu.launch(&k.accumulate, grid(n as u64), |a| {
        a.arg(&n32)
            .arg(&lanes32)
            .arg(&st.reached)
            .arg(&st.levels[0]);
        a.arg(&st.delta).arg(&mut st.lo).arg(&mut st.hi);
    })?;
    Ok(level as u32)
}
