//! Phase 1's mates on several ranks, on the devices: two all-to-alls through the device
//! exchange layer (`GpuExchange`: NCCL, or staged through the host), no slot on the host.
//! Each dart has a *home* rank by its id (blocks of an even number of darts, so both darts
//! of an edge share one). Every slot sends its dart and local slot to the dart's home; the
//! home, now holding both darts of each of its edges, answers each with the global slot of the
//! other dart, which goes back along the same runs (kernels/euler.cu `euler_mate_*`). The
//! bytes: 16 per slot (8 there, 8 back), whatever the partition. Device bytes at this step's
//! peak: about 36 per slot (darts and partners; the questions, the arrivals and the answers),
//! below the several ranks' labelling peak that `gpu::check_memory` counts (76).

use super::gpu::Paired;
use crate::comm::gpu::{GpuExchange, OwnerBuckets};
use crate::comm::ranges::Ranges;
use crate::comm::run_starts;
use crate::device::{grid, Gpu};
use crate::error::{Error, Result};
use cudarc::driver::{CudaSlice, PushKernelArg};

/// Each local slot's mate (the global slot of its edge's other end), for `m` edges in all
/// (collective: every rank enters both exchanges).
pub(super) fn mates(
    gpu: &Gpu,
    exchange: &GpuExchange,
    p: &Paired,
    slots: &Ranges,
    m: u64,
) -> Result<CudaSlice<u32>> {
    let ranks = slots.starts().len() - 1;
    let block = (2 * m).div_ceil(ranks as u64).next_multiple_of(2);
    let home_first = (exchange.rank() as u64 * block).min(2 * m);
    let home_count = ((exchange.rank() as u64 + 1) * block).min(2 * m) - home_first;
    let kernel = |name| gpu.function("euler.cu", name);
    let count = p.slots;

    let mut ask = gpu.zeros::<u64>("mate questions", count.max(1) as usize)?;
    gpu.launch(&kernel("euler_mate_ask")?, grid(count), |b| {
        b.arg(&p.dart).arg(&count).arg(&mut ask);
    })?;
    let mut bucketed = gpu.zeros::<u64>("mate questions", count.max(1) as usize)?;
    let mut owners = OwnerBuckets::new(gpu, ranks, block)?;
    let sent = owners.bucket(gpu, &ask, count, &mut bucketed)?;
    drop(ask);
    let mut got = gpu.zeros::<u64>("mate questions", home_count.max(1) as usize)?;
    let received = exchange.alltoallv_runs(&bucketed, (&run_starts(&sent), &sent), &mut got)?;
    let total: usize = received.iter().sum();
    if total as u64 != home_count {
        return Err(Error::Gpu(format!(
            "the mates' exchange brought {total} darts to a home of {home_count}"
        )));
    }

    let mut arrived = gpu.zeros::<u32>("dart arrivals", home_count.max(1) as usize)?;
    let total = total as u64;
    gpu.launch(&kernel("euler_mate_note")?, grid(total), |b| {
        b.arg(&got).arg(&total).arg(&home_first).arg(&mut arrived);
    })?;
    let mut starts: Vec<u64> = run_starts(&received).iter().map(|&s| s as u64).collect();
    starts.push(total);
    let run_start = gpu.upload("run starts", &starts)?;
    let slot_first = gpu.upload("slot starts", slots.starts())?;
    let mut answer = gpu.zeros::<u64>("mate answers", total.max(1) as usize)?;
    let ranks32 = ranks as u32;
    gpu.launch(&kernel("euler_mate_answer")?, grid(total), |b| {
        b.arg(&got)
            .arg(&total)
            .arg(&home_first)
            .arg(&arrived)
            .arg(&run_start)
            .arg(&slot_first)
            .arg(&ranks32)
            .arg(&mut answer);
    })?;
    drop((got, arrived));

    let back = run_starts(&received);
    exchange.alltoallv_runs(&answer, (&back, &received), &mut bucketed)?;
    drop(answer);
    let mut mate = gpu.zeros::<u32>("mates", count.max(1) as usize)?;
    gpu.launch(&kernel("euler_mate_store")?, grid(count), |b| {
        b.arg(&bucketed).arg(&count).arg(&mut mate);
    })?;
    gpu.sync("mates")?;
    Ok(mate)
}
