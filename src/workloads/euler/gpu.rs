//! Phases 1-5 on one GPU (kernels/euler.cu), giving the CPU path's circuit exactly: the slots
//! sorted and paired per vertex (one thread per vertex), cycle minima and list ranking as the
//! CPU's jump.rs does them (runs between splitters walked by one thread each, pointer jumping
//! over the run heads only, so O(log m) short rounds whatever the number of trails), the
//! spanning forest by the same min-label hooking rounds as `forest`, and the splice at every
//! vertex at once. Slots, darts and vertices are u32 on the device (2m and N below 2^32);
//! the peak is about 30 bytes per edge-end (the tree), 60 per edge. The connectivity
//! check runs there too (gpu_ends.rs, on the graph uploaded with it). One rank; several ranks
//! (gpu_ranks.rs) share the per-vertex steps here (`pair`, `offers`, `splice`,
//! `trail_starts`) and the run kernels.

use super::gpu_ends::DeviceEnds;
use super::jump::{self, NIL};
use super::{Phases, Solved};
use crate::comm::Triple;
use crate::device::memory::{self, largest_fitting, Place};
use crate::device::scan::exclusive_scan;
use crate::device::{gpu_error, grid, Gpu, Kernel};
use crate::error::{Error, Result};
use cudarc::driver::{CudaSlice, PushKernelArg};
use rayon::prelude::*;
use std::collections::HashMap;

/// The run's choices, as the kernels take them.
pub struct Setup {
    pub n: u64,
    /// Edges (the circuit's length).
    pub m: u64,
    pub directed: bool,
    /// 0 adjacency, 1 random, 2 straight (kernels/euler.cu `pair_key`).
    pub pairing: u32,
    /// The random pairing's stream key, and a lattice's directions for the straight one.
    pub key: u64,
    pub axes: u64,
    /// The edge the circuit is cut after.
    pub start: u64,
}

/// Device bytes at the peak, per slot (one rank: the tree: darts, partners, mates and labels,
/// u32 each, the forest's roots and best offers over the trails, its offers, the links it
/// joins; the labelling and the ranking stay below) and per vertex (the slot starts and their
/// cursors).
const BYTES_PER_SLOT: u64 = 30;
const BYTES_PER_VERTEX: u64 = 12;

/// The same on several ranks, where every slot may head a run (gpu_ranks.rs, gpu_ruling.rs):
/// the labelling's peak is the heads' questions to their rulers (32 per head: the questions
/// sent, the answers twice, the results) over darts, partners, mates and successors (16),
/// the local runs (successors, heads, minima, ends, next heads: 20) and the walk's notes (8);
/// the mates' step (36, gpu_mates.rs) and the ranking stay below (darts and cut successors,
/// the runs and the heads' questions: 60; then the placement's positions, codes and
/// vertices over darts, distances and list ends: 32).
const BYTES_PER_SLOT_RANKS: u64 = 76;

fn bytes_per_slot(ranks: u64) -> u64 {
    if ranks > 1 {
        BYTES_PER_SLOT_RANKS
    } else {
        BYTES_PER_SLOT
    }
}

/// The end of a list (`jump::NIL`) in the kernels' 32-bit slots.
const NIL32: u32 = NIL as u32;
/// `successors` without a cut.
pub(super) const UNCUT: (u32, u32) = (NIL32, NIL32);

pub(super) struct Kernels(HashMap<&'static str, Kernel>);

impl Kernels {
    pub(super) fn load(gpu: &Gpu) -> Result<Kernels> {
        let mut kernels = HashMap::new();
        for name in [
            "euler_count",
            "euler_place",
            "euler_vertices",
            "euler_pair",
            "euler_mate",
            "euler_next",
            "euler_heads",
            "euler_pointed",
            "euler_min_walk",
            "euler_min_jump",
            "euler_min_store",
            "euler_min_spread",
            "euler_min_short",
            "euler_trail_starts",
            "euler_offers",
            "euler_forest_init",
            "euler_forest_offer",
            "euler_forest_hook",
            "euler_forest_jump",
            "euler_splice",
            "euler_rank_walk",
            "euler_rank_jump",
            "euler_rank_store",
            "euler_rank_spread",
            "euler_rank_place",
            "euler_fill",
            "euler_find",
            "euler_slot_place",
            "euler_local_next",
            "euler_owner_count",
            "euler_owner_scatter",
            "euler_head_state",
            "euler_walk_start",
            "euler_walk",
            "euler_walk_rulers",
            "euler_ask",
            "euler_answer",
            "euler_answered",
            "euler_rule_min",
            "euler_rule_rank",
            "euler_rule_spread",
            "euler_offer_insert",
            "euler_offer_take",
            "euler_forest_start",
            "euler_forest_ask",
            "euler_forest_between",
            "euler_forest_best",
            "euler_forest_hooks",
            "euler_forest_moved",
            "euler_forest_up",
            "euler_forest_joined",
        ] {
            kernels.insert(name, gpu.function("euler.cu", name)?);
        }
        Ok(Kernels(kernels))
    }

    pub(super) fn get(&self, name: &str) -> &Kernel {
        &self.0[name]
    }
}

/// A rank's slots on the device after phase 1's sort and pairing (u32; vertices local).
pub(super) struct Paired {
    pub vertex_start: CudaSlice<u32>,
    pub dart: CudaSlice<u32>,
    pub partner: CudaSlice<u32>,
    /// Own vertices.
    pub n: u32,
    pub slots: u64,
}

/// Refuse, with one line, before the graph is made, a graph of `n` vertices and `m` edges
/// that the GPU path cannot take on `ranks` ranks: the kernels' 32-bit slots and ids, and
/// each rank's share against its GPU's free memory (bytes needed, free, the most edges that
/// fit).
pub(super) fn check_device(gpu: &Gpu, (n, m): (u64, u64), ranks: u64) -> Result<()> {
    check_fits(n, m)?;
    let own = n.div_ceil(ranks);
    let per_slot = bytes_per_slot(ranks);
    let bytes = |m: u64| per_slot * 2 * m.div_ceil(ranks) + BYTES_PER_VERTEX * own;
    memory::check(
        "the GPU Euler path",
        bytes(m),
        Place::Gpu(gpu),
        |free| match largest_fitting(0, m, free, bytes) {
            Some(e) => {
                format!("the most edges that fit with these vertices on {ranks} GPU(s) is {e}")
            }
            None => format!("its {n} vertices alone do not fit on {ranks} GPU(s)"),
        },
    )
}

/// Fail unless `slots` edge-ends of `n` own vertices fit the free device memory, on one of
/// `ranks` ranks.
pub(super) fn check_memory(gpu: &Gpu, (slots, n): (u64, u64), m: u64, ranks: u64) -> Result<()> {
    let per_slot = bytes_per_slot(ranks);
    let needed = per_slot * slots + BYTES_PER_VERTEX * n;
    let place = Place::Gpu(gpu);
    memory::check(
        &format!("the GPU Euler path ({slots} edge-ends of {m} edges)"),
        needed,
        place,
        |free| {
            let edges = free.saturating_sub(BYTES_PER_VERTEX * n) / (2 * per_slot);
            format!("about {edges} edges fit; use more ranks or a GPU with more memory")
        },
    )
}

/// Phase 1's local part: sort the `slots` edge-ends at own vertices `end_vertex` (local ids,
/// `n` of them) with their darts `end_dart` (None: edge-end k is dart k, one rank's endpoint
/// array) into slots, and pair them at each vertex; with `slot_of` (one rank: indexed by
/// dart) note each dart's slot.
pub(super) fn pair(
    gpu: &Gpu,
    k: &Kernels,
    (end_vertex, end_dart): (&CudaSlice<u32>, Option<&CudaSlice<u32>>),
    (slots, n): (u64, u64),
    s: &Setup,
    slot_of: Option<&mut CudaSlice<u32>>,
) -> Result<Paired> {
    // The slot starts: the degrees' exclusive sums, the total last.
    let mut vertex_start = gpu.zeros::<u32>("vertex slots", n as usize + 1)?;
    gpu.launch(k.get("euler_count"), grid(slots), |b| {
        b.arg(end_vertex).arg(&slots).arg(&mut vertex_start);
    })?;
    exclusive_scan(gpu, "euler.cu", &mut vertex_start, n + 1)?;
    let mut cursor = gpu
        .stream
        .clone_dtod(&vertex_start)
        .map_err(|e| gpu_error("copy the slot starts", e))?;
    let mut dart = gpu.zeros::<u32>("slots", slots as usize)?;
    let unused = gpu.zeros::<u32>("no darts", 1)?;
    let identity = u32::from(end_dart.is_none());
    gpu.launch(k.get("euler_place"), grid(slots), |b| {
        b.arg(end_vertex)
            .arg(end_dart.unwrap_or(&unused))
            .arg(&identity)
            .arg(&slots)
            .arg(&mut cursor)
            .arg(&mut dart);
    })?;
    drop(cursor);
    let mut partner = gpu.zeros::<u32>("partners", slots as usize)?;
    let note = u32::from(slot_of.is_some());
    let mut unused = gpu.zeros::<u32>("no dart slots", 1)?;
    let (n32, directed) = (n as u32, u32::from(s.directed));
    gpu.launch(k.get("euler_pair"), grid(n), |b| {
        b.arg(&vertex_start)
            .arg(&n32)
            .arg(&directed)
            .arg(&s.pairing)
            .arg(&s.key)
            .arg(&s.axes)
            .arg(&note)
            .arg(&mut dart)
            .arg(&mut partner)
            .arg(slot_of.unwrap_or(&mut unused));
    })?;
    Ok(Paired {
        vertex_start,
        dart,
        partner,
        n: n32,
        slots,
    })
}

/// Each of the `slots` slots' (local) vertex, from the slot starts of the `n` own vertices.
pub(super) fn slot_vertices(
    gpu: &Gpu,
    k: &Kernels,
    vertex_start: &CudaSlice<u32>,
    n: u32,
    slots: u64,
) -> Result<CudaSlice<u32>> {
    let mut vertex = gpu.zeros::<u32>("slot vertices", slots as usize)?;
    gpu.launch(k.get("euler_vertices"), grid(u64::from(n)), |b| {
        b.arg(vertex_start).arg(&n).arg(&mut vertex);
    })?;
    Ok(vertex)
}

/// Slots at which a trail's smallest edge sits (two per trail, one per direction of travel).
/// Each slot's successor on its cycle: the slot after its mate's partner (`euler_next`), NIL
/// where that successor is one of the two slots of `cut` (`UNCUT`: none).
pub(super) fn successors(
    gpu: &Gpu,
    k: &Kernels,
    p: &Paired,
    mate: &CudaSlice<u32>,
    cut: (u32, u32),
) -> Result<CudaSlice<u32>> {
    let mut next = gpu.zeros::<u32>("successors", p.slots as usize)?;
    gpu.launch(k.get("euler_next"), grid(p.slots), |b| {
        b.arg(mate)
            .arg(&p.partner)
            .arg(&p.slots)
            .arg(&cut.0)
            .arg(&cut.1)
            .arg(&mut next);
    })?;
    Ok(next)
}

pub(super) fn trail_starts(
    gpu: &Gpu,
    k: &Kernels,
    p: &Paired,
    label: &CudaSlice<u32>,
) -> Result<u64> {
    let mut count = gpu.zeros::<u64>("counter", 1)?;
    gpu.launch(k.get("euler_trail_starts"), grid(p.slots), |b| {
        b.arg(label).arg(&p.dart).arg(&p.slots).arg(&mut count);
    })?;
    read_one(gpu, &count, 0)
}

/// Phase 3's offers at every own vertex: Triple(t_1, t_i, local slot of t_i's link) as three
/// u32 each, and their count (see splice.rs).
pub(super) fn offers(
    gpu: &Gpu,
    k: &Kernels,
    p: &Paired,
    label: &CudaSlice<u32>,
) -> Result<(CudaSlice<u32>, u64)> {
    let mut count = gpu.zeros::<u64>("counter", 1)?;
    let mut pass = |write: u32, offers: &mut CudaSlice<u32>| {
        gpu.clear("a counter", &mut count)?;
        gpu.launch(k.get("euler_offers"), grid(u64::from(p.n)), |b| {
            b.arg(&p.vertex_start)
                .arg(&p.n)
                .arg(&p.partner)
                .arg(label)
                .arg(&write)
                .arg(&mut *offers)
                .arg(&mut count);
        })?;
        read_one(gpu, &count, 0)
    };
    let mut offers = gpu.zeros::<u32>("trail offers", 1)?;
    let offer_count = pass(0, &mut offers)?;
    let mut offers = gpu.zeros::<u32>("trail offers", 3 * offer_count.max(1) as usize)?;
    pass(1, &mut offers)?;
    Ok((offers, offer_count))
}

/// Phase 4: re-pair the joined links at every own vertex at once (`joined` marks the links
/// the tree chose; see splice.rs).
pub(super) fn splice(
    gpu: &Gpu,
    k: &Kernels,
    p: &mut Paired,
    label: &CudaSlice<u32>,
    joined: &CudaSlice<u8>,
    directed: bool,
) -> Result<()> {
    let mut repaired = gpu
        .stream
        .clone_dtod(&p.partner)
        .map_err(|e| gpu_error("copy the partners", e))?;
    let directed = u32::from(directed);
    gpu.launch(k.get("euler_splice"), grid(u64::from(p.n)), |b| {
        b.arg(&p.vertex_start)
            .arg(&p.n)
            .arg(&p.partner)
            .arg(label)
            .arg(joined)
            .arg(&p.dart)
            .arg(&directed)
            .arg(&mut repaired);
    })?;
    p.partner = repaired;
    gpu.sync("splice")
}

/// Run phases 1-5 on the one rank's graph `g` (its memory was checked at its upload),
/// each through `phases`.
pub fn solve(gpu: &Gpu, g: DeviceEnds, s: &Setup, phases: &mut Phases) -> Result<Solved> {
    let slots = g.darts();
    let k = Kernels::load(gpu)?;

    // Phase 1: the darts' slots, sorted and paired per vertex, and each slot's mate.
    let (mut p, mate, head, tail) = phases.run("pair", || {
        let mut slot_of = gpu.zeros::<u32>("dart slots", slots as usize)?;
        let p = pair(
            gpu,
            &k,
            (&g.ends, None),
            (slots, s.n),
            s,
            Some(&mut slot_of),
        )?;
        drop(g);
        let mut mate = gpu.zeros::<u32>("mates", slots as usize)?;
        gpu.launch(k.get("euler_mate"), grid(slots), |b| {
            b.arg(&p.dart).arg(&slot_of).arg(&slots).arg(&mut mate);
        })?;
        // The circuit is cut after edge `start` travelled forwards (see `order_circuit`).
        let at = |i: u64| read_one(gpu, &slot_of, i);
        let (head, tail) = (at(2 * s.start + 1)?, at(2 * s.start)?);
        drop(slot_of);
        gpu.sync("pair")?;
        Ok((p, mate, head, tail))
    })?;

    // Phase 2: each slot labelled with the smallest edge of its cycle.
    let (label, label_rounds, initial_trails) = phases.run("label", || {
        let next = successors(gpu, &k, &p, &mate, UNCUT)?;
        let (label, label_rounds) = cycle_min(gpu, &k, &next, &p.dart, slots)?;
        drop(next);
        let initial_trails = trail_starts(gpu, &k, &p, &label)? / 2;
        Ok((label, label_rounds, initial_trails))
    })?;

    // Phase 3: a spanning forest of the trail graph; `joined` marks its links.
    let (joined, tree_rounds) = phases.run("tree", || forest(gpu, &k, &p, &label, s.m))?;

    // Phase 4: the splice, at every vertex at once.
    phases.run("splice", || {
        splice(gpu, &k, &mut p, &label, &joined, s.directed)?;
        drop((joined, label));
        Ok(())
    })?;

    // Phase 5: cut after edge `start` and rank the list.
    let (code, arrive) = phases.run("rank", || rank(gpu, &k, p, mate, (head, tail), s))?;

    // Untimed: the circuit to the host, as the CPU path leaves it.
    let code = gpu.download("circuit", &code, s.m as usize)?;
    let arrive = gpu.download("circuit vertices", &arrive, s.m as usize)?;
    let placed = code
        .into_par_iter()
        .zip(arrive)
        .enumerate()
        .map(|(p, (c, v))| Triple(p as u64, c, u64::from(v)))
        .collect();
    Ok(Solved {
        placed,
        initial_trails,
        label_rounds,
        tree_rounds,
    })
}

/// Phase 3: a spanning forest of the trail graph (`m` trail nodes at most), by min-label
/// hooking; returns the slots that link it and the rounds.
fn forest(
    gpu: &Gpu,
    k: &Kernels,
    p: &Paired,
    label: &CudaSlice<u32>,
    m: u64,
) -> Result<(CudaSlice<u8>, usize)> {
    let slots = p.slots;
    let (offers, offer_count) = offers(gpu, k, p, label)?;
    let nodes = m;
    let mut root = gpu.zeros::<u32>("trail roots", nodes as usize)?;
    let mut best = gpu.zeros::<u64>("trail offers", nodes as usize)?;
    let mut joined = gpu.zeros::<u8>("tree links", slots as usize)?;
    let mut count = gpu.zeros::<u64>("counter", 1)?;
    gpu.launch(k.get("euler_forest_init"), grid(nodes), |b| {
        b.arg(&mut root).arg(&mut best).arg(&nodes);
    })?;
    let mut tree_rounds = 0;
    loop {
        tree_rounds += 1;
        gpu.launch(k.get("euler_forest_offer"), grid(offer_count), |b| {
            b.arg(&offers).arg(&offer_count).arg(&root).arg(&mut best);
        })?;
        gpu.clear("a counter", &mut count)?;
        gpu.launch(k.get("euler_forest_hook"), grid(nodes), |b| {
            b.arg(&mut best)
                .arg(&nodes)
                .arg(&mut root)
                .arg(&mut joined)
                .arg(&mut count);
        })?;
        if read_one(gpu, &count, 0)? == 0 {
            break;
        }
        loop {
            gpu.clear("a counter", &mut count)?;
            gpu.launch(k.get("euler_forest_jump"), grid(nodes), |b| {
                b.arg(&mut root).arg(&nodes).arg(&mut count);
            })?;
            if read_one(gpu, &count, 0)? == 0 {
                break;
            }
        }
    }
    drop((offers, root, best));
    gpu.sync("tree")?;
    Ok((joined, tree_rounds))
}

/// Phase 5: cut the closed trail after edge `start` (its darts' slots `head` and `tail`) and
/// rank it; the circuit's edge codes and arrival vertices, on the device.
fn rank(
    gpu: &Gpu,
    k: &Kernels,
    p: Paired,
    mate: CudaSlice<u32>,
    (head, tail): (u32, u32),
    s: &Setup,
) -> Result<(CudaSlice<u64>, CudaSlice<u32>)> {
    let slots = p.slots;
    // The list's last slot is the one whose successor was `head`: next = mate ∘ partner,
    // both involutions, so it is partner[mate[head]].
    let last = read_one(
        gpu,
        &p.partner,
        u64::from(read_one(gpu, &mate, u64::from(head))?),
    )?;
    let next = successors(gpu, k, &p, &mate, (head, tail))?;
    drop(mate);
    let Paired {
        vertex_start,
        dart,
        partner,
        n,
        ..
    } = p;
    drop(partner);
    let runs = rank_lists(gpu, k, &next, slots, [head, tail])?;
    let vertex = slot_vertices(gpu, k, &vertex_start, n, slots)?;
    drop(vertex_start);
    let mut code = gpu.zeros::<u64>("circuit", s.m as usize)?;
    let mut arrive = gpu.zeros::<u32>("circuit vertices", s.m as usize)?;
    let mut count = gpu.zeros::<u64>("counter", 1)?;
    gpu.launch(k.get("euler_rank_place"), grid(runs.count), |b| {
        b.arg(&runs.heads)
            .arg(&runs.count)
            .arg(&next)
            .arg(&runs.dist)
            .arg(&runs.end)
            .arg(&dart)
            .arg(&vertex)
            .arg(&last)
            .arg(&s.m)
            .arg(&mut code)
            .arg(&mut arrive)
            .arg(&mut count);
    })?;
    let placed = read_one(gpu, &count, 0)?;
    if placed != s.m {
        return Err(Error::Check(format!(
            "splicing left more than one closed trail: the circuit holds {placed} of {} edges",
            s.m
        )));
    }
    Ok((code, arrive))
}

/// Fail when `m` edges or `n` vertices do not fit the kernels' 32-bit slots and ids.
pub(super) fn check_fits(n: u64, m: u64) -> Result<()> {
    if 2 * m < u64::from(NIL32) && n <= u64::from(u32::MAX) {
        return Ok(());
    }
    Err(Error::Unavailable(format!(
        "the GPU Euler path holds slots and vertices in 32 bits: {m} edges and {n} vertices are too many (at most 2^31 - 1 edges and 2^32 - 1 vertices)"
    )))
}

/// The heads of the runs (see kernels/euler.cu): the splitters, the slots `firsts` (NIL32:
/// none), and with `pointed` every slot it says no slot points at.
pub(super) fn heads(
    gpu: &Gpu,
    k: &Kernels,
    slots: u64,
    pointed: Option<&CudaSlice<u8>>,
    firsts: [u32; 2],
) -> Result<(CudaSlice<u32>, u64)> {
    let mut count = gpu.zeros::<u64>("counter", 1)?;
    let none = gpu.zeros::<u8>("no marks", 1)?;
    let lists = u32::from(pointed.is_some());
    // Counted first, then written into an array of that size.
    let mut pass = |write: u32, heads: &mut CudaSlice<u32>| {
        gpu.clear("a counter", &mut count)?;
        gpu.launch(k.get("euler_heads"), grid(slots), |b| {
            b.arg(&slots)
                .arg(&firsts[0])
                .arg(&firsts[1])
                .arg(&lists)
                .arg(pointed.unwrap_or(&none))
                .arg(&write)
                .arg(&mut *heads)
                .arg(&mut count);
        })?;
        read_one(gpu, &count, 0)
    };
    let mut heads = gpu.zeros::<u32>("run heads", 1)?;
    let total = pass(0, &mut heads)?;
    let mut heads = gpu.zeros::<u32>("run heads", total.max(1) as usize)?;
    pass(1, &mut heads)?;
    Ok((heads, total))
}

/// For each slot, the smallest edge (dart / 2) over its cycle of `next` (a permutation), and
/// the jumping rounds over the splitters.
fn cycle_min(
    gpu: &Gpu,
    k: &Kernels,
    next: &CudaSlice<u32>,
    dart: &CudaSlice<u32>,
    slots: u64,
) -> Result<(CudaSlice<u32>, usize)> {
    let (heads, count) = heads(gpu, k, slots, None, [NIL32; 2])?;
    let alloc = |what: &str| gpu.zeros::<u32>(what, slots as usize);
    let (mut run_min, mut run_next) = (alloc("run minima")?, alloc("run successors")?);
    let closed = 0u32;
    let mut no_ends = gpu.zeros::<u32>("no run ends", 1)?;
    gpu.launch(k.get("euler_min_walk"), grid(count), |b| {
        b.arg(&heads)
            .arg(&count)
            .arg(next)
            .arg(dart)
            .arg(&closed)
            .arg(&mut run_min)
            .arg(&mut run_next)
            .arg(&mut no_ends);
    })?;
    drop(no_ends);
    let mut changed = gpu.zeros::<u64>("counter", 1)?;
    let mut jumped = gpu.zeros::<u32>("jumped runs", 2 * count.max(1) as usize)?;
    let mut rounds = 0;
    loop {
        rounds += 1;
        gpu.clear("a counter", &mut changed)?;
        gpu.launch(k.get("euler_min_jump"), grid(count), |b| {
            b.arg(&heads)
                .arg(&count)
                .arg(&run_min)
                .arg(&run_next)
                .arg(&mut jumped)
                .arg(&mut changed);
        })?;
        gpu.launch(k.get("euler_min_store"), grid(count), |b| {
            b.arg(&heads)
                .arg(&count)
                .arg(&jumped)
                .arg(&mut run_min)
                .arg(&mut run_next);
        })?;
        if read_one(gpu, &changed, 0)? == 0 {
            break;
        }
    }
    drop((run_next, jumped));
    // Every label NIL first: slots on cycles without a splitter are left so by the spread.
    let mut label = alloc("labels")?;
    gpu.launch(k.get("euler_fill"), grid(slots), |b| {
        b.arg(&mut label).arg(&slots).arg(&NIL32);
    })?;
    gpu.launch(k.get("euler_min_spread"), grid(count), |b| {
        b.arg(&heads)
            .arg(&count)
            .arg(next)
            .arg(&run_min)
            .arg(&mut label);
    })?;
    gpu.launch(k.get("euler_min_short"), grid(slots), |b| {
        b.arg(next).arg(dart).arg(&slots).arg(&mut label);
    })?;
    gpu.sync("cycle minima")?;
    Ok((label, rounds))
}

/// The runs of a ranked list: each head's distance to its list's end and that end.
struct Ranked {
    heads: CudaSlice<u32>,
    count: u64,
    dist: CudaSlice<u32>,
    end: CudaSlice<u32>,
}

/// List ranking of `next`, whose lists start at `firsts` (one rank's cut circuit: every other
/// slot has a predecessor), by runs between heads and pointer jumping over the heads; the
/// slots take their head's result as they are placed. Fails when a slot lies on a cycle (none
/// of its run ends, or it is in no run).
fn rank_lists(
    gpu: &Gpu,
    k: &Kernels,
    next: &CudaSlice<u32>,
    slots: u64,
    firsts: [u32; 2],
) -> Result<Ranked> {
    let (heads, count) = heads(gpu, k, slots, None, firsts)?;
    let alloc = |what: &str, n: u64| gpu.zeros::<u32>(what, n as usize);
    let mut run_dist = alloc("run distances", slots)?;
    let mut run_next = alloc("run successors", slots)?;
    let mut run_end = alloc("run ends", slots)?;
    let mut visited = gpu.zeros::<u64>("counter", 1)?;
    gpu.launch(k.get("euler_rank_walk"), grid(count), |b| {
        b.arg(&heads)
            .arg(&count)
            .arg(next)
            .arg(&mut run_dist)
            .arg(&mut run_next)
            .arg(&mut run_end)
            .arg(&mut visited);
    })?;
    if read_one(gpu, &visited, 0)? != slots {
        return Err(jump::no_end());
    }
    let mut jumped = alloc("jumped runs", 3 * count.max(1))?;
    let mut active = gpu.zeros::<u64>("counter", 1)?;
    let limit = 66 - slots.max(1).leading_zeros();
    for _ in 0..limit {
        gpu.clear("a counter", &mut active)?;
        gpu.launch(k.get("euler_rank_jump"), grid(count), |b| {
            b.arg(&heads)
                .arg(&count)
                .arg(&run_dist)
                .arg(&run_next)
                .arg(&run_end)
                .arg(&mut jumped)
                .arg(&mut active);
        })?;
        gpu.launch(k.get("euler_rank_store"), grid(count), |b| {
            b.arg(&heads)
                .arg(&count)
                .arg(&jumped)
                .arg(&mut run_dist)
                .arg(&mut run_next)
                .arg(&mut run_end);
        })?;
        if read_one(gpu, &active, 0)? == 0 {
            return Ok(Ranked {
                heads,
                count,
                dist: run_dist,
                end: run_end,
            });
        }
    }
    Err(jump::no_end())
}

/// Element `i` of a device buffer.
pub(super) fn read_one<T: cudarc::driver::DeviceRepr + Default + Copy>(
    gpu: &Gpu,
    buffer: &CudaSlice<T>,
    i: u64,
) -> Result<T> {
    let mut one = [T::default()];
    gpu.stream
        .memcpy_dtoh(&buffer.slice(i as usize..i as usize + 1), &mut one)
        .map_err(|e| gpu_error("read a value from the GPU", e))?;
    gpu.sync("read a value from the GPU")?;
    Ok(one[0])
}
