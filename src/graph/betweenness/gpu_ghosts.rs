//! The GPU twin of `sweep::push`: on a partitioned graph each level's new σ (forward) and
//! u = (1 + δ)/σ (backward) of the own vertices that other ranks hold as ghosts, in the
//! level's lanes only, packed on the device into one run per destination (kernels/bc.cu
//! `bc_pack`: forward a mask word per ghost, then the lanes' words; backward the words
//! alone), moved by the device exchange layer (`GpuExchange`: NCCL between GPUs, or staged
//! through host memory and MPI) and stored at the ghosts' slots (`bc_unpack`). Where each
//! vertex's words go on either side: the prelude's exclusive scan of their lane counts.

use super::view::View;
use super::Carried;
use crate::comm::gpu::GpuExchange;
use crate::comm::{run_starts, GpuTransport, World};
use crate::device::scan::exclusive_scan;
use crate::device::{grid, Gpu, Kernel};
use crate::error::Result;
use crate::graph::ghosts::Ghosts;
use cudarc::driver::{CudaSlice, PushKernelArg};

/// The kernels of a push.
struct Kernels {
    pack_words: Kernel,
    pack_totals: Kernel,
    pack: Kernel,
    unpack_words: Kernel,
    unpack: Kernel,
}

/// A rank's ghost plan on the device, its buffers and its exchange.
pub struct GhostPush<'w> {
    exchange: GpuExchange<'w>,
    kernels: Kernels,
    ranks: u32,
    local_n: u32,
    lanes: u32,
    /// Plan entries: own vertex and the rank that holds it as a ghost.
    send_local: CudaSlice<u32>,
    dest: CudaSlice<u32>,
    entries: u32,
    /// Per destination: entries before its group (host and device, ranks + 1).
    before: Vec<usize>,
    before_dev: CudaSlice<u64>,
    /// Per owner rank: its first ghost (ranks + 1); how many ghosts there are.
    ghost_first: CudaSlice<u64>,
    ghosts: u32,
    /// Words per entry (then where they start), per destination, and per ghost.
    entry_words: CudaSlice<u64>,
    totals: CudaSlice<u64>,
    ghost_words: CudaSlice<u64>,
    send: CudaSlice<u64>,
    recv: CudaSlice<u64>,
}

/// Device bytes of the plan and the buffers for `lanes` lanes.
pub fn bytes_needed(plan: &Ghosts, lanes: usize) -> u64 {
    let (entries, ghosts) = (plan.send_local.len() as u64, plan.ids.len() as u64);
    let record = 8 * (1 + lanes as u64);
    8 * entries + 8 * (entries + ghosts + 2) + record * (entries + ghosts)
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
        let with_end = |counts: &[usize]| {
            let mut starts = run_starts(counts);
            starts.push(counts.iter().sum());
            starts
        };
        let before = with_end(&plan.send_counts);
        let as_u64 = |v: &[usize]| v.iter().map(|&b| b as u64).collect::<Vec<_>>();
        let (entries, ghosts) = (plan.send_local.len(), plan.ids.len());
        let record = 1 + lanes;
        let kernel = |name| gpu.function("bc.cu", name);
        Ok(GhostPush {
            exchange: GpuExchange::open(world, gpu, transport)?,
            kernels: Kernels {
                pack_words: kernel("bc_pack_words")?,
                pack_totals: kernel("bc_pack_totals")?,
                pack: kernel("bc_pack")?,
                unpack_words: kernel("bc_unpack_words")?,
                unpack: kernel("bc_unpack")?,
            },
            ranks: world.size() as u32,
            local_n: view.local_n as u32,
            lanes: lanes as u32,
            send_local: gpu.upload("betweenness ghost plan", &plan.send_local)?,
            dest: gpu.upload("betweenness ghost plan", &dest)?,
            entries: entries as u32,
            before_dev: gpu.upload("betweenness ghost plan", &as_u64(&before))?,
            before,
            ghost_first: gpu.upload(
                "betweenness ghost plan",
                &as_u64(&with_end(&plan.recv_counts)),
            )?,
            ghosts: ghosts as u32,
            entry_words: gpu.zeros("betweenness words to send", entries + 1)?,
            totals: gpu.zeros("betweenness words to send", world.size())?,
            ghost_words: gpu.zeros("betweenness words received", ghosts + 1)?,
            send: gpu.zeros("betweenness values to send", (entries * record).max(1))?,
            recv: gpu.zeros("betweenness values received", (ghosts * record).max(1))?,
        })
    }

    /// The transport the exchange took ("nccl", "mpi", "none").
    pub fn transport(&self) -> &'static str {
        self.exchange.name()
    }

    /// Push `carried` of the own vertices in `level` (a level's masks) in its lanes
    /// (collective): `values` gains the ghosts' values, and for σ, `level` the ghosts' masks.
    pub fn push(
        &mut self,
        gpu: &Gpu,
        carried: Carried,
        level: &mut CudaSlice<u64>,
        values: &mut CudaSlice<f64>,
    ) -> Result<()> {
        let masks_sent = matches!(carried, Carried::Sigma) as u32;
        let k = &self.kernels;
        let (entries, ranks) = (self.entries, self.ranks);
        gpu.launch(&k.pack_words, grid(entries.into()), |a| {
            a.arg(&self.send_local).arg(&entries).arg(&*level);
            a.arg(&mut self.entry_words);
        })?;
        exclusive_scan(gpu, "bc.cu", &mut self.entry_words, u64::from(entries) + 1)?;
        gpu.launch(&k.pack_totals, grid(ranks.into()), |a| {
            a.arg(&self.before_dev).arg(&ranks).arg(&self.entry_words);
            a.arg(&mut self.totals);
        })?;
        gpu.launch(&k.pack, grid(entries.into()), |a| {
            a.arg(&self.send_local).arg(&self.dest).arg(&entries);
            a.arg(&self.before_dev).arg(&self.lanes).arg(&masks_sent);
            a.arg(&*level).arg(&*values).arg(&self.entry_words);
            a.arg(&mut self.send);
        })?;
        let totals = gpu.download("betweenness words to send", &self.totals, ranks as usize)?;
        let counts: Vec<usize> = (0..ranks as usize)
            .map(|d| match totals[d] {
                0 => 0,
                words => words as usize + masks_sent as usize * self.group(d),
            })
            .collect();
        let at: Vec<usize> = self.before[..ranks as usize]
            .iter()
            .map(|&b| b * (1 + self.lanes as usize))
            .collect();
        let came = self
            .exchange
            .alltoallv_runs(&self.send, (&at, &counts), &mut self.recv)?;
        if came.iter().all(|&c| c == 0) {
            return Ok(());
        }
        let runs: Vec<u64> = run_starts(&came)
            .iter()
            .chain(&came)
            .map(|&c| c as u64)
            .collect();
        let runs = gpu.upload("betweenness runs received", &runs)?;
        let (ghosts, local_n) = (self.ghosts, self.local_n);
        gpu.launch(&k.unpack_words, grid(ghosts.into()), |a| {
            a.arg(&self.recv).arg(&runs).arg(&self.ghost_first);
            a.arg(&ranks).arg(&ghosts).arg(&local_n).arg(&masks_sent);
            a.arg(&mut *level).arg(&mut self.ghost_words);
        })?;
        exclusive_scan(gpu, "bc.cu", &mut self.ghost_words, u64::from(ghosts) + 1)?;
        gpu.launch(&k.unpack, grid(ghosts.into()), |a| {
            a.arg(&self.recv).arg(&runs).arg(&self.ghost_first);
            a.arg(&ranks).arg(&ghosts).arg(&local_n).arg(&self.lanes);
            a.arg(&masks_sent).arg(&*level).arg(&self.ghost_words);
            a.arg(values);
        })
    }

    /// The plan's entries for rank `d`.
    fn group(&self, d: usize) -> usize {
        self.before[d + 1] - self.before[d]
    }
}
