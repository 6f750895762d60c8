//! Phases 1-5 on several ranks, one GPU each, giving the CPU path's circuit exactly. The work
//! at a rank's own vertices and slots runs on its GPU: the sort and pairing, the local runs
//! of the cycle minima and of the list ranking (chains of successors that stay on the rank,
//! cut at splitters, as `jump` cuts them), the trails' links and the splice. The mates cross
//! ranks on the devices through `GpuExchange`: the mates (`gpu_mates`), the jumping over the
//! run heads (`gpu_ruling`: a ruling set, as the CPU's `ruling`) and the spanning forest of
//! the trail graph (`gpu_forest`, as the CPU's `forest`). The circuit's order
//! (`order_circuit`: the cut, the placement) stays on the host, so the slots are copied there
//! after the pairing (`on_host`) and the partners after the splice.

use super::darts::Darts;
use super::gpu::{self, Kernels, Paired, Setup};
use super::gpu_forest;
use super::gpu_mates;
use super::gpu_ruling::{self, HeadState, Router};
use super::jump::{self, NIL};
use super::{Phases, Solved};
use crate::comm::ranges::Ranges;
use crate::comm::gpu::GpuExchange;
use crate::comm::{GpuTransport, Op, Triple, World};
use crate::device::{grid, Gpu};
use crate::error::Result;
use crate::graph::Block1D;
use cudarc::driver::{CudaSlice, PushKernelArg};
use rayon::prelude::*;

const NIL32: u32 = NIL as u32;

/// Run phases 1-5 on this rank's `ends` (Triple(vertex, dart, other end) of its own
/// vertices; collective), each through `phases`; the devices exchange by `transport`.
#[allow(clippy::too_many_arguments)]
pub fn solve(
    world: &World,
    gpu: &Gpu,
    transport: GpuTransport,
    part: &Block1D,
    ends: Vec<Triple>,
    s: &Setup,
    phases: &mut Phases,
    components: &dyn Fn() -> Result<()>,
) -> Result<Solved> {
    let slots = ends.len() as u64;
    let n = part.local_n() as u64;
    gpu::check_fits(s.n, s.m)?;
    world.agree(gpu::check_memory(gpu, (slots, n), s.m, world.size() as u64))?;
    let k = Kernels::load(gpu)?;
    // Untimed, as the graph: NCCL's set-up and first connection.
    let exchange = GpuExchange::open(world, gpu, transport)?;

    let (mut p, paired) = phases.run("pair", || {
        let first_vertex = part.first();
        let local: Vec<u32> = ends
            .par_iter()
            .map(|e| (e.0 - first_vertex) as u32)
            .collect();
        let end_vertex = gpu.upload("edge-ends", &local)?;
        let dart: Vec<u32> = ends.par_iter().map(|e| e.1 as u32).collect();
        let end_dart = gpu.upload("edge-ends", &dart)?;
        drop((local, dart));
        let p = gpu::pair(gpu, &k, (&end_vertex, Some(&end_dart)), (slots, n), s, None)?;
        drop((end_vertex, end_dart));
        drop(ends);
        let slot_ranges = Ranges::of_lengths(world, slots);
        let mate = gpu_mates::mates(gpu, &exchange, &p, &slot_ranges, s.m)?;
        let darts = on_host(gpu, &k, (&p, &mate), slot_ranges, part.first(), s.directed)?;
        Ok((p, (darts, mate)))
    })?;
    let (mut darts, mate) = paired;
    let router = Router::new(world, gpu, &k, &exchange, &darts.slots)?;

    let (label, label_rounds, initial_trails) = phases.run("label", || {
        let gnext = gpu::successors(gpu, &k, &p, &mate)?;
        drop(mate);
        let (label, label_rounds) = cycle_min(&router, &k, &gnext, &p.dart)?;
        // Two cycles per trail, one per direction of travel.
        let starts = gpu::trail_starts(gpu, &k, &p, &label)?;
        Ok((label, label_rounds, world.allreduce(starts, Op::Sum) / 2))
    })?;

    let (joined, tree_rounds) = phases.run("tree", || {
        let offers = gpu::offers(gpu, &k, &p, &label)?;
        let trail_ranges = Ranges::even(s.m, world.size(), world.rank());
        let trails = Router::new(world, gpu, &k, &exchange, &trail_ranges)?;
        let mut joined = gpu.zeros::<u8>("tree links", slots as usize)?;
        let (rounds, links) = gpu_forest::join((&router, &trails), (&offers.0, offers.1), &mut joined)?;
        super::one_tree(initial_trails, links, components)?;
        Ok((joined, rounds))
    })?;

    phases.run("splice", || {
        gpu::splice(gpu, &k, &mut p, &label, &joined, s.directed)?;
        drop((joined, label));
        let partner = gpu.download("partners", &p.partner, slots as usize)?;
        darts.partner = partner.into_par_iter().map(|q| q as usize).collect();
        Ok(())
    })?;

    let placed = phases.run("rank", || {
        super::order_circuit(world, &darts, s.m, s.start, |next| {
            rank_lists(&router, &k, next)
        })
    })?;
    Ok(Solved {
        placed,
        initial_trails,
        label_rounds,
        tree_rounds,
    })
}

/// The device's sorted, paired slots and their mates on the host, for the host-staged
/// phases (the `slots` of this rank; `first` its first vertex).
fn on_host(
    gpu: &Gpu,
    k: &Kernels,
    (p, mate): (&Paired, &CudaSlice<u32>),
    slots: Ranges,
    first: u64,
    directed: bool,
) -> Result<Darts> {
    let count = p.slots as usize;
    let widen = |v: Vec<u32>| -> Vec<u64> { v.into_par_iter().map(u64::from).collect() };
    let local = |v: Vec<u32>| -> Vec<usize> { v.into_par_iter().map(|x| x as usize).collect() };
    let vertex = gpu::slot_vertices(gpu, k, &p.vertex_start, p.n, p.slots)?;
    let vertex = gpu.download("slot vertices", &vertex, count)?;
    Ok(Darts {
        slots,
        vertex_start: local(gpu.download("vertex slots", &p.vertex_start, p.n as usize + 1)?),
        vertex: vertex.into_par_iter().map(|x| first + u64::from(x)).collect(),
        dart: widen(gpu.download("slots", &p.dart, count)?),
        mate: widen(gpu.download("mates", mate, count)?),
        partner: local(gpu.download("partners", &p.partner, count)?),
        directed,
    })
}

/// The local runs of the global successors `gnext` on the device: `next` as local slots (NIL
/// where the list ends or another rank's slot follows) and the heads (splitters and the slots
/// no local slot points at).
struct Runs {
    next: CudaSlice<u32>,
    heads: CudaSlice<u32>,
    count: u64,
}

impl Runs {
    fn of(gpu: &Gpu, k: &Kernels, first: u32, gnext: &CudaSlice<u32>, n: u64) -> Result<Runs> {
        let mut next = gpu.zeros::<u32>("successors", n as usize)?;
        gpu.launch(k.get("euler_local_next"), grid(n), |b| {
            b.arg(gnext).arg(&n).arg(&first).arg(&mut next);
        })?;
        let mut pointed = gpu.zeros::<u8>("list marks", n as usize)?;
        gpu.launch(k.get("euler_pointed"), grid(n), |b| {
            b.arg(&next).arg(&n).arg(&mut pointed);
        })?;
        let (heads, count) = gpu::heads(gpu, k, n, Some(&pointed), [NIL32; 2])?;
        Ok(Runs { next, heads, count })
    }

    /// Each head's next head (global; NIL at a list's end) into `hnext`, from its run's
    /// `run_next` and last slot `run_end`; with `lists`, the steps take the step to another
    /// rank and `run_end` becomes global.
    fn head_state(&self, (k, r): (&Kernels, &Router), gnext: &CudaSlice<u32>, lists: bool, run: RunArrays) -> Result<()> {
        let lists = u32::from(lists);
        r.gpu().launch(k.get("euler_head_state"), grid(self.count), |b| {
            b.arg(&self.heads)
                .arg(&self.count)
                .arg(gnext)
                .arg(&r.first)
                .arg(&lists)
                .arg(run.next)
                .arg(run.weight)
                .arg(run.end)
                .arg(run.hnext);
        })
    }
}

/// A head's run as the walk kernels leave it (per local slot).
struct RunArrays<'a> {
    next: &'a CudaSlice<u32>,
    weight: &'a mut CudaSlice<u32>,
    end: &'a mut CudaSlice<u32>,
    hnext: &'a mut CudaSlice<u32>,
}

/// For each local slot, the smallest edge (dart / 2) over its cycle of `gnext` (global
/// successors, a permutation of the global slots), on the devices; with the rounds of
/// exchange.
fn cycle_min(
    r: &Router,
    k: &Kernels,
    gnext: &CudaSlice<u32>,
    dart: &CudaSlice<u32>,
) -> Result<(CudaSlice<u32>, usize)> {
    let gpu = r.gpu();
    let n = u64::from(r.here);
    let runs = Runs::of(gpu, k, r.first, gnext, n)?;
    let alloc = |what: &str| gpu.zeros::<u32>(what, n as usize);
    let (mut run_min, mut run_next, mut run_end, mut hnext) = (
        alloc("run minima")?,
        alloc("run successors")?,
        alloc("run ends")?,
        alloc("next heads")?,
    );
    let open = 1u32;
    gpu.launch(k.get("euler_min_walk"), grid(runs.count), |b| {
        b.arg(&runs.heads)
            .arg(&runs.count)
            .arg(&runs.next)
            .arg(dart)
            .arg(&open)
            .arg(&mut run_min)
            .arg(&mut run_next)
            .arg(&mut run_end);
    })?;
    let run = RunArrays {
        next: &run_next,
        weight: &mut run_min,
        end: &mut run_end,
        hnext: &mut hnext,
    };
    runs.head_state((k, r), gnext, false, run)?;
    drop(run_next);
    let heads = HeadState {
        heads: (&runs.heads, runs.count),
        next: &mut hnext,
        weight: &mut run_min,
        end: &mut run_end,
    };
    let (rounds, _) = gpu_ruling::jump(r, heads, false)?;
    drop((run_end, hnext));
    let mut label = alloc("labels")?;
    gpu.launch(k.get("euler_fill"), grid(n), |b| {
        b.arg(&mut label).arg(&n).arg(&NIL32);
    })?;
    gpu.launch(k.get("euler_min_spread"), grid(runs.count), |b| {
        b.arg(&runs.heads)
            .arg(&runs.count)
            .arg(&runs.next)
            .arg(&run_min)
            .arg(&mut label);
    })?;
    // Cycles that never leave the rank and hold no splitter have no head.
    gpu.launch(k.get("euler_min_short"), grid(n), |b| {
        b.arg(&runs.next).arg(dart).arg(&n).arg(&mut label);
    })?;
    gpu.sync("cycle minima")?;
    Ok((label, rounds))
}

/// List ranking of `next` (global successors, NIL ending each list; collective): each local
/// slot's distance to its list's end and that end's global slot, as `jump::rank_lists`.
fn rank_lists(r: &Router, k: &Kernels, next: Vec<u64>) -> Result<(Vec<u64>, Vec<u64>)> {
    let gpu = r.gpu();
    let n = u64::from(r.here);
    let narrow: Vec<u32> = next.into_par_iter().map(|t| t as u32).collect();
    let gnext = gpu.upload("successors", &narrow)?;
    drop(narrow);
    let runs = Runs::of(gpu, k, r.first, &gnext, n)?;
    let alloc = |what: &str| gpu.zeros::<u32>(what, n as usize);
    let (mut run_dist, mut run_next, mut run_end, mut hnext) = (
        alloc("run distances")?,
        alloc("run successors")?,
        alloc("run ends")?,
        alloc("next heads")?,
    );
    let mut visited = gpu.zeros::<u64>("counter", 1)?;
    gpu.launch(k.get("euler_rank_walk"), grid(runs.count), |b| {
        b.arg(&runs.heads)
            .arg(&runs.count)
            .arg(&runs.next)
            .arg(&mut run_dist)
            .arg(&mut run_next)
            .arg(&mut run_end)
            .arg(&mut visited);
    })?;
    // A slot in no run lies on a cycle within the rank.
    let visited = gpu.download("counter", &visited, 1)?[0];
    if r.total(u64::from(visited != n)) > 0 {
        return Err(jump::no_end());
    }
    let run = RunArrays {
        next: &run_next,
        weight: &mut run_dist,
        end: &mut run_end,
        hnext: &mut hnext,
    };
    runs.head_state((k, r), &gnext, true, run)?;
    drop((run_next, gnext));
    let heads = HeadState {
        heads: (&runs.heads, runs.count),
        next: &mut hnext,
        weight: &mut run_dist,
        end: &mut run_end,
    };
    if !gpu_ruling::jump(r, heads, true)?.1 {
        return Err(jump::no_end());
    }
    let (mut dist, mut end) = (alloc("distances")?, alloc("list ends")?);
    gpu.launch(k.get("euler_rank_spread"), grid(runs.count), |b| {
        b.arg(&runs.heads)
            .arg(&runs.count)
            .arg(&runs.next)
            .arg(&run_dist)
            .arg(&run_end)
            .arg(&mut dist)
            .arg(&mut end);
    })?;
    let widen = |v: Vec<u32>| -> Vec<u64> { v.into_par_iter().map(u64::from).collect() };
    Ok((
        widen(gpu.download("distances", &dist, n as usize)?),
        widen(gpu.download("list ends", &end, n as usize)?),
    ))
}
