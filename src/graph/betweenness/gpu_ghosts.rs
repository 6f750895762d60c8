//! The GPU twin of `sweep::push`: on a partitioned graph each level's new σ (forward) and
//! u = (1 + δ)/σ (backward) of the own vertices that other ranks hold as ghosts, packed on
//! the device into one run of records per destination (kernels/bc.cu `bc_pack`: the ghost's
//! index, then one word per lane), moved by the device exchange layer (`GpuExchange`: NCCL
//! between GPUs, or staged through host memory and MPI) and stored at the ghosts' slots
//! (`bc_unpack`).

use super::view::View;
use crate::comm::gpu::GpuExchange;
use crate::comm::{GpuTransport, World};
use crate::device::{grid, Gpu, Kernel};
use crate::error::Result;
use crate::graph::ghosts::Ghosts;
use cudarc::driver::{CudaSlice, PushKernelArg};

/// Which value a push carries.
#[derive(Clone, Copy)]
pub enum Carried {
    /// σ of the lanes at the level (0 elsewhere); the ghosts' level masks gain those lanes.
    Sigma,
    /// Every lane's word of σ's place: u = (1 + δ)/σ where the backward sweep has been, σ
    /// where it has not yet (as the ghost holds it).
    Quotient,
}

/// A rank's ghost plan on the device, its buffers and its exchange.
pub struct GhostPush<'w> {
    exchange: GpuExchange<'w>,
    pack: Kernel,
    unpack: Kernel,
    local_n: u32,
    lanes: u32,
    /// Plan entries: own vertex, its index among the destination's ghosts, the destination.
    send_local: CudaSlice<u32>,
    targets: CudaSlice<u32>,
    dest: CudaSlice<u32>,
    entries: u32,
    /// Per destination: entries before its group (host and device), and records packed.
    before: Vec<usize>,
    before_dev: CudaSlice<u64>,
    cursor: CudaSlice<u32>,
    send: CudaSlice<u64>,
    recv: CudaSlice<u64>,
}

/// Device bytes of the plan and the buffers for `lanes` lanes.
pub fn bytes_needed(plan: &Ghosts, lanes: usize) -> u64 {
    let entries = plan.send_local.len() as u64;
    let record = 8 * (1 + lanes as u64);
    12 * entries + record * (entries + plan.ids.len() as u64)
}

impl<'w> GhostPush<'w> {
    /// The plan of `view` (a partitioned one) uploaded and the exchange opened (collective).
    pub fn new(
        world: &'w World,
        gpu: &Gpu,
        transport: GpuTransport,
        view: &View,
        lanes: usize,
    ) -> Result<Self> {
        let plan = view.ghosts.as_ref().expect("a partitioned view");
        let dest: Vec<u32> = (0..world.size() as u32)
            .flat_map(|r| std::iter::repeat_n(r, plan.send_counts[r as usize]))
            .collect();
        let record = 1 + lanes;
        let before = crate::comm::run_starts(&plan.send_counts);
        let before_u64: Vec<u64> = before.iter().map(|&b| b as u64).collect();
        Ok(GhostPush {
            exchange: GpuExchange::open(world, gpu, transport)?,
            pack: gpu.function("bc.cu", "bc_pack")?,
            unpack: gpu.function("bc.cu", "bc_unpack")?,
            local_n: view.local_n as u32,
            lanes: lanes as u32,
            send_local: gpu.upload("betweenness ghost plan", &plan.send_local)?,
            targets: gpu.upload("betweenness ghost plan", &plan.targets)?,
            dest: gpu.upload("betweenness ghost plan", &dest)?,
            entries: plan.send_local.len() as u32,
            before_dev: gpu.upload("betweenness ghost plan", &before_u64)?,
            before,
            cursor: gpu.zeros("betweenness send counts", world.size())?,
            send: gpu.zeros(
                "betweenness values to send",
                (plan.send_local.len() * record).max(1),
            )?,
            recv: gpu.zeros(
                "betweenness values received",
                (plan.ids.len() * record).max(1),
            )?,
        })
    }

    /// The transport the exchange took ("nccl", "mpi", "none").
    pub fn transport(&self) -> &'static str {
        self.exchange.name()
    }

    /// Push `carried` of the own vertices in `level` (a level's masks) for the batch's `k`
    /// lanes (collective): `values` gains the ghosts' values, and for σ, `level` the ghosts'
    /// lanes.
    pub fn push(
        &mut self,
        gpu: &Gpu,
        carried: Carried,
        k: usize,
        level: &mut CudaSlice<u64>,
        values: &mut CudaSlice<f64>,
    ) -> Result<()> {
        let (k32, mode) = (k as u32, matches!(carried, Carried::Sigma) as u32);
        let record = 1 + k;
        gpu.clear("betweenness send counts", &mut self.cursor)?;
        gpu.launch(&self.pack, grid(self.entries.into()), |a| {
            a.arg(&self.send_local).arg(&self.targets).arg(&self.dest);
            a.arg(&self.entries)
                .arg(&self.before_dev)
                .arg(&k32)
                .arg(&self.lanes);
            a.arg(&mode).arg(&*level).arg(&*values);
            a.arg(&mut self.cursor).arg(&mut self.send);
        })?;
        let packed = gpu.download("betweenness send counts", &self.cursor, self.cursor.len())?;
        let counts: Vec<usize> = packed.iter().map(|&c| c as usize * record).collect();
        let at: Vec<usize> = self.before.iter().map(|&b| b * record).collect();
        let came = self
            .exchange
            .alltoallv_runs(&self.send, (&at, &counts), &mut self.recv)?;
        let records = (came.iter().sum::<usize>() / record) as u32;
        if records == 0 {
            return Ok(());
        }
        gpu.launch(&self.unpack, grid(records.into()), |a| {
            a.arg(&self.recv).arg(&records).arg(&k32).arg(&self.lanes);
            a.arg(&self.local_n).arg(&mode).arg(level).arg(values);
        })
    }
}
