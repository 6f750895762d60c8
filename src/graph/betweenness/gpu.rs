//! The sweeps on the rank's GPU (kernels/bc.cu) over the whole graph (`Distribution::Full`):
//! the rows uploaded once, each batch's distances, σ and δ kept on the device, one flag
//! read back per forward level, and the fixed-point sums downloaded at the end.

use super::view::{LocalRows, View};
use crate::device::{grid, memory, Gpu, Kernel};
use crate::error::Result;
use crate::graph::Vid;
use cudarc::driver::{CudaSlice, PushKernelArg};

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
    reset: Kernel,
    sources: Kernel,
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
        reset: f("bc_reset")?,
        sources: f("bc_sources")?,
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
    let len = n * lanes;
    let mut dist = gpu.zeros::<u32>("betweenness distances", len)?;
    let mut sigma = gpu.zeros::<f64>("betweenness sigma", len)?;
    let mut delta = gpu.zeros::<f64>("betweenness delta", len)?;
    let mut lo = gpu.zeros::<u64>("betweenness sums", n)?;
    let mut hi = gpu.zeros::<u64>("betweenness sums", n)?;
    let mut found = gpu.zeros::<u32>("betweenness flag", 1)?;
    let (n32, lanes32) = (n as u32, lanes as u32);
    let len64 = len as u64;
    let mut deepest = 0;
    for batch in sources.chunks(lanes) {
        let kb = batch.len() as u32;
        let on_gpu = gpu.upload("betweenness sources", batch)?;
        gpu.launch(&k.reset, grid(len as u64), |a| {
            a.arg(&len64).arg(&mut dist).arg(&mut sigma).arg(&mut delta);
        })?;
        gpu.launch(&k.sources, grid(kb as u64), |a| {
            a.arg(&on_gpu)
                .arg(&kb)
                .arg(&lanes32)
                .arg(&mut dist)
                .arg(&mut sigma);
        })?;
        let mut level = 0u32;
        loop {
            gpu.clear("betweenness flag", &mut found)?;
            gpu.launch(&k.forward, grid(len as u64), |a| {
                a.arg(&inc.offsets)
                    .arg(&inc.adj)
                    .arg(&n32)
                    .arg(&lanes32)
                    .arg(&kb);
                a.arg(&level).arg(&mut dist).arg(&mut sigma).arg(&mut found);
            })?;
            if gpu.download("betweenness flag", &found, 1)?[0] == 0 {
                break;
            }
            level += 1;
        }
        for at in (0..level).rev() {
            gpu.launch(&k.backward, grid(len as u64), |a| {
                a.arg(&out.offsets)
                    .arg(&out.adj)
                    .arg(&n32)
                    .arg(&lanes32)
                    .arg(&kb);
                a.arg(&at).arg(&dist).arg(&sigma).arg(&mut delta);
            })?;
        }
        gpu.launch(&k.accumulate, grid(n as u64), |a| {
            a.arg(&n32).arg(&lanes32).arg(&kb).arg(&dist).arg(&delta);
            a.arg(&mut lo).arg(&mut hi);
        })?;
        deepest = deepest.max(level);
    }
    let lo = gpu.download("betweenness sums", &lo, n)?;
    let hi = gpu.download("betweenness sums", &hi, n)?;
    let sums = lo
        .iter()
        .zip(&hi)
        .map(|(&l, &h)| l as u128 | (h as u128) << 64)
        .collect();
    Ok((sums, deepest))
}
