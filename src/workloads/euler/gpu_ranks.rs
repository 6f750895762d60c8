//! Phases 1-5 on several ranks, one GPU each, giving the CPU path's circuit exactly. The work
//! at a rank's own vertices and slots runs on its GPU: the sort and pairing, the local runs
//! of the cycle minima and of the list ranking (chains of successors that stay on the rank,
//! cut at splitters, as `jump` cuts them), the trails' links and the splice. The mates cross
//! ranks on the devices through `GpuExchange`: the mates (`gpu_mates`), the jumping over the
//! run heads (`gpu_ruling`: a ruling set, as the CPU's `ruling`) and the spanning forest of
//! the trail graph (`gpu_forest`, as the CPU's `forest`). The circuit's order (the cut, the
//! list ranking, the placement: `rank`, as the host's `order_circuit`) runs on the devices
//! too; only each rank's placed slots come to the host, untimed, as on one GPU.

use super::gpu::{self, Kernels, Paired, Setup};
use super::gpu_forest;
use super::gpu_mates;
use super::gpu_ruling::{self, HeadState, Router};
use super::gpu_spread::SpreadEnds;
use super::jump::{self, NIL};
use super::{Phases, Solved};
use crate::comm::ranges::Ranges;
use crate::comm::{Op, Triple, World};
use crate::device::{grid, Gpu};
use crate::error::{Error, Result};
use crate::graph::Block1D;
use cudarc::driver::{CudaSlice, PushKernelArg};
use rayon::prelude::*;

const NIL32: u32 = NIL as u32;

/// Run phases 1-5 on this rank's `ends` (at its own vertices, on its GPU, since the check;
/// collective), each through `phases`; the devices exchange through the ends' exchange.
pub fn solve(
    world: &World,
    gpu: &Gpu,
    part: &Block1D,
    ends: SpreadEnds,
    s: &Setup,
    phases: &mut Phases,
    components: &dyn Fn() -> Result<()>,
) -> Result<Solved> {
    let slots = ends.count;
    let n = part.local_n() as u64;
    gpu::check_fits(s.n, s.m)?;
    world.agree(gpu::check_memory(gpu, (slots, n), s.m, world.size() as u64))?;
    let k = Kernels::load(gpu)?;
    let SpreadEnds {
        exchange,
        vertex: end_vertex,
        dart: end_dart,
        shuffle,
        ..
    } = ends;

    let (mut p, mate, slot_ranges, cut) = phases.run("pair", || {
        let p = gpu::pair(gpu, &k, (&end_vertex, Some(&end_dart)), (slots, n), s, None)?;
        drop((end_vertex, end_dart));
        let slot_ranges = Ranges::of_lengths(world, slots);
        let mate = gpu_mates::mates(gpu, &exchange, &p, &slot_ranges, s.m)?;
        // The circuit is cut after edge `start` travelled forwards (see `order_circuit`).
        let at = |dart: u64| find(world, (gpu, &k), (&p.dart, slots), slot_ranges.first(), dart as u32);
        let cut = (at(2 * s.start + 1)?, at(2 * s.start)?);
        Ok((p, mate, slot_ranges, cut))
    })?;
    let router = Router::new(world, gpu, &k, &exchange, &slot_ranges)?;

    let (label, label_rounds, initial_trails) = phases.run("label", || {
        let gnext = gpu::successors(gpu, &k, &p, &mate, gpu::UNCUT)?;
        let (label, label_rounds) = cycle_min(&router, &k, &gnext, &p.dart)?;
        drop(gnext);
        // Two cycles per trail, one per direction of travel.
        let starts = gpu::trail_starts(gpu, &k, &p, &label)?;
        Ok((label, label_rounds, world.allreduce(starts, Op::Sum) / 2))
    })?;

    let (joined, tree_rounds) = phases.run("tree", || {
        let offers = gpu::offers(gpu, &k, &p, &label)?;
        let trail_ranges = Ranges::even(s.m, world.size(), world.rank());
        let trails = Router::new(world, gpu, &k, &exchange, &trail_ranges)?;
        let mut joined = gpu.zeros::<u8>("tree links", slots as usize)?;
        let (rounds, links) = gpu_forest::join((&router, &trails), offers, &mut joined)?;
        super::one_tree(initial_trails, links, components)?;
        Ok((joined, rounds))
    })?;

    phases.run("splice", || {
        gpu::splice(gpu, &k, &mut p, &label, &joined, s.directed)?;
        drop((joined, label));
        gpu.sync("splice")
    })?;

    let (pos, code, vertex) = phases.run("rank", || rank(&router, &k, p, mate, cut, s.m))?;
    // Untimed, as on one GPU: this rank's part of the circuit to the host.
    let (pos, code, vertex) = (
        gpu.download("circuit", &pos, slots as usize)?,
        gpu.download("circuit", &code, slots as usize)?,
        gpu.download("circuit vertices", &vertex, slots as usize)?,
    );
    let first = part.first();
    let id = |v: u32| {
        let v = first + u64::from(v);
        shuffle.map_or(v, |s| s.undo(v))
    };
    let placed = (pos, code, vertex)
        .into_par_iter()
        .filter(|&(at, _, _)| at != u64::MAX)
        .map(|(at, c, v)| Triple(at, c, id(v)))
        .collect();
    Ok(Solved {
        placed,
        initial_trails,
        label_rounds,
        tree_rounds,
    })
}

/// The global slot holding `value` in `a` (this rank's slots from global slot `first`; NIL32
/// where no rank holds it; collective).
fn find(
    world: &World,
    (gpu, k): (&Gpu, &Kernels),
    (a, count): (&CudaSlice<u32>, u64),
    first: u64,
    value: u32,
) -> Result<u32> {
    let first = first as u32;
    let mut found = gpu.upload("found slot", &[NIL32])?;
    gpu.launch(k.get("euler_find"), grid(count), |b| {
        b.arg(a).arg(&count).arg(&value).arg(&first).arg(&mut found);
    })?;
    let here = gpu::read_one(gpu, &found, 0)?;
    Ok(world.allreduce(u64::from(here), Op::Min) as u32)
}

/// Phase 5 on the devices, as `order_circuit` on the host: cut after the slot `head` (and
/// before `tail`), rank the list and place each slot of the list that ends at the cut: its
/// circuit position (u64::MAX: on the other direction's list), code and own vertex, per
/// local slot.
fn rank(
    r: &Router,
    k: &Kernels,
    p: Paired,
    mate: CudaSlice<u32>,
    (head, tail): (u32, u32),
    m: u64,
) -> Result<(CudaSlice<u64>, CudaSlice<u64>, CudaSlice<u32>)> {
    let gpu = r.gpu();
    let slots = p.slots;
    // The list's last slot: the one whose successor was `head`.
    let gnext = gpu::successors(gpu, k, &p, &mate, gpu::UNCUT)?;
    let last = find(r.world(), (gpu, k), (&gnext, slots), u64::from(r.first), head)?;
    drop(gnext);
    let next = gpu::successors(gpu, k, &p, &mate, (head, tail))?;
    drop((mate, p.partner));
    let (dist, end) = rank_lists(r, k, next)?;
    let vertex = gpu::slot_vertices(gpu, k, &p.vertex_start, p.n, slots)?;
    let alloc = |what: &str| gpu.zeros::<u64>(what, slots as usize);
    let (mut pos, mut code) = (alloc("circuit positions")?, alloc("circuit")?);
    let mut count = gpu.zeros::<u64>("counter", 1)?;
    gpu.launch(k.get("euler_slot_place"), grid(slots), |b| {
        b.arg(&dist)
            .arg(&end)
            .arg(&p.dart)
            .arg(&slots)
            .arg(&last)
            .arg(&m)
            .arg(&mut pos)
            .arg(&mut code)
            .arg(&mut count);
    })?;
    let placed = r.total(gpu::read_one(gpu, &count, 0)?);
    if placed != m {
        return Err(Error::Check(format!(
            "splicing left more than one closed trail: the circuit holds {placed} of {m} edges"
        )));
    }
    Ok((pos, code, vertex))
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
fn rank_lists(
    r: &Router,
    k: &Kernels,
    gnext: CudaSlice<u32>,
) -> Result<(CudaSlice<u32>, CudaSlice<u32>)> {
    let gpu = r.gpu();
    let n = u64::from(r.here);
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
    Ok((dist, end))
}
