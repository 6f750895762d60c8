//! Phases 1-5 on several ranks, one GPU each, giving the CPU path's circuit exactly. The work
//! at a rank's own vertices and slots runs on its GPU: the sort and pairing, the local runs
//! of the cycle minima and of the list ranking (chains of successors that stay on the rank,
//! cut at splitters, as `jump` cuts them), the trails' links and the splice. The mates cross
//! ranks on the devices (`gpu_mates`, through `GpuExchange`); the rest that crosses ranks is
//! host-staged through the CPU path's collectives: pointer jumping over the run heads
//! (`jump::jump_minima`, `jump::jump_ranks`: a ruling set) and the spanning forest of the
//! trail graph (`splice::join`).

use super::darts::Darts;
use super::gpu::{self, Kernels, Paired, Setup};
use super::gpu_mates;
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
    world.agree(gpu::check_memory(gpu, slots, n, s.m))?;
    let k = Kernels::load(gpu)?;
    // Untimed, as the graph: NCCL's set-up and first connection.
    let exchange = GpuExchange::open(world, gpu, transport)?;

    let (mut p, mut darts) = phases.run("pair", || {
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
        Ok((p, darts))
    })?;

    let (label, label_rounds, initial_trails) = phases.run("label", || {
        let (label, label_rounds) =
            cycle_min(world, gpu, &k, &darts.slots, &darts.next(), &p.dart)?;
        // Two cycles per trail, one per direction of travel.
        let starts = gpu::trail_starts(gpu, &k, &p, &label)?;
        Ok((label, label_rounds, world.allreduce(starts, Op::Sum) / 2))
    })?;

    let (joined, tree_rounds) = phases.run("tree", || {
        let (offers, count) = gpu::offers(gpu, &k, &p, &label)?;
        let first = darts.slots.first();
        let offers: Vec<Triple> = gpu
            .download("trail offers", &offers, 3 * count as usize)?
            .chunks(3)
            .map(|o| Triple(o[0].into(), o[1].into(), first + u64::from(o[2])))
            .collect();
        let trails = Ranges::even(s.m, world.size(), world.rank());
        let (joined, rounds, links) = super::splice::join(world, &darts.slots, &offers, &trails)?;
        super::one_tree(initial_trails, links, components)?;
        Ok((joined, rounds))
    })?;

    phases.run("splice", || {
        let joined: Vec<u8> = joined.into_par_iter().map(u8::from).collect();
        let joined = gpu.upload("tree links", &joined)?;
        gpu::splice(gpu, &k, &mut p, &label, &joined, s.directed)?;
        drop((joined, label));
        let partner = gpu.download("partners", &p.partner, slots as usize)?;
        darts.partner = partner.into_par_iter().map(|q| q as usize).collect();
        Ok(())
    })?;

    let placed = phases.run("rank", || {
        super::order_circuit(world, &darts, s.m, s.start, |next| {
            rank_lists(world, gpu, &k, &darts.slots, next)
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

/// The local runs of `next` (global successors) on the device: `next` as local slots (NIL
/// where the list ends or another rank's slot follows) and the heads (splitters and the slots
/// no local slot points at).
struct Runs {
    next: CudaSlice<u32>,
    heads: CudaSlice<u32>,
    count: u64,
    /// For each local slot: its head index, where it is one.
    head_of: Vec<u32>,
    heads_host: Vec<u32>,
}

impl Runs {
    fn of(gpu: &Gpu, k: &Kernels, slots: &Ranges, next: &[u64]) -> Result<Runs> {
        let n = next.len() as u64;
        let first = slots.first();
        let local: Vec<u32> = next
            .par_iter()
            .map(|&t| match t.wrapping_sub(first) {
                i if i < n => i as u32,
                _ => NIL32,
            })
            .collect();
        let next = gpu.upload("successors", &local)?;
        let mut pointed = gpu.zeros::<u8>("list marks", n as usize)?;
        gpu.launch(k.get("euler_pointed"), grid(n), |b| {
            b.arg(&next).arg(&n).arg(&mut pointed);
        })?;
        let (heads, count) = gpu::heads(gpu, k, n, Some(&pointed), [NIL32; 2])?;
        let heads_host = gpu.download("run heads", &heads, count as usize)?;
        let mut head_of = vec![u32::MAX; n as usize];
        for (i, &h) in heads_host.iter().enumerate() {
            head_of[h as usize] = i as u32;
        }
        Ok(Runs {
            next,
            heads,
            count,
            head_of,
            heads_host,
        })
    }

    /// Each head's global slot.
    fn head_slots(&self, first: u64) -> Vec<u64> {
        self.heads_host.par_iter().map(|&h| first + u64::from(h)).collect()
    }

    /// The index of the head at global slot `s` (held here).
    fn head(&self, slots: &Ranges, s: u64) -> usize {
        self.head_of[slots.local(s)] as usize
    }

    /// Where head h's run goes after its last slot `last` (global; NIL at a list's end):
    /// the next local head, or the successor `next` names.
    fn after(&self, first: u64, run_next: u32, last: u32, next: &[u64]) -> u64 {
        if run_next != NIL32 {
            first + u64::from(run_next)
        } else {
            next[last as usize]
        }
    }
}

/// For each local slot, the smallest edge (dart / 2) over its cycle of `next` (a permutation
/// of the global slots), on the device; with the jumping rounds.
fn cycle_min(
    world: &World,
    gpu: &Gpu,
    k: &Kernels,
    slots: &Ranges,
    next: &[u64],
    dart: &CudaSlice<u32>,
) -> Result<(CudaSlice<u32>, usize)> {
    let n = next.len() as u64;
    let runs = Runs::of(gpu, k, slots, next)?;
    let alloc = |what: &str| gpu.zeros::<u32>(what, n as usize);
    let (mut run_min, mut run_next, mut run_end) = (
        alloc("run minima")?,
        alloc("run successors")?,
        alloc("run ends")?,
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
    let mut minima = gpu.download("run minima", &run_min, n as usize)?;
    let run_next = gpu.download("run successors", &run_next, n as usize)?;
    let run_end = gpu.download("run ends", &run_end, n as usize)?;
    let first = slots.first();
    let (head_next, mut head_min): (Vec<u64>, Vec<u64>) = runs
        .heads_host
        .par_iter()
        .map(|&h| {
            let h = h as usize;
            let after = runs.after(first, run_next[h], run_end[h], next);
            (after, u64::from(minima[h]))
        })
        .unzip();
    let head_slot = runs.head_slots(first);
    let rounds = jump::jump_minima(
        world,
        slots,
        &head_slot,
        |s| runs.head(slots, s),
        head_next,
        &mut head_min,
    )?;
    for (&h, &m) in runs.heads_host.iter().zip(&head_min) {
        minima[h as usize] = m as u32;
    }
    let run_min = gpu.upload("run minima", &minima)?;
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
    world: &World,
    gpu: &Gpu,
    k: &Kernels,
    slots: &Ranges,
    next: Vec<u64>,
) -> Result<(Vec<u64>, Vec<u64>)> {
    let n = next.len() as u64;
    let runs = Runs::of(gpu, k, slots, &next)?;
    let alloc = |what: &str| gpu.zeros::<u32>(what, n as usize);
    let (mut run_dist, mut run_next, mut run_end) = (
        alloc("run distances")?,
        alloc("run successors")?,
        alloc("run ends")?,
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
    if world.allreduce(u64::from(visited != n), Op::Sum) > 0 {
        return Err(jump::no_end());
    }
    let mut steps = gpu.download("run distances", &run_dist, n as usize)?;
    let run_next = gpu.download("run successors", &run_next, n as usize)?;
    let mut ends = gpu.download("run ends", &run_end, n as usize)?;
    let first = slots.first();
    // A run that stops where another rank's slot follows takes that step too.
    type Head = (u64, (u64, u64));
    let (head_next, (mut dist, mut end)): (Vec<u64>, (Vec<u64>, Vec<u64>)) = runs
        .heads_host
        .par_iter()
        .map(|&h| -> Head {
            let h = h as usize;
            let after = runs.after(first, run_next[h], ends[h], &next);
            let remote = run_next[h] == NIL32 && after != NIL;
            let d = u64::from(steps[h]) + u64::from(remote);
            (after, (d, first + u64::from(ends[h])))
        })
        .unzip();
    let head_slot = runs.head_slots(first);
    if !jump::jump_ranks(
        world,
        slots,
        &head_slot,
        |s| runs.head(slots, s),
        head_next,
        &mut dist,
        &mut end,
    )? {
        return Err(jump::no_end());
    }
    for (i, &h) in runs.heads_host.iter().enumerate() {
        steps[h as usize] = dist[i] as u32;
        ends[h as usize] = end[i] as u32;
    }
    let (run_dist, run_end) = (
        gpu.upload("run distances", &steps)?,
        gpu.upload("run ends", &ends)?,
    );
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
