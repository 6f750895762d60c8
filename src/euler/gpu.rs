//! Phases 1-5 on one GPU (kernels/euler.cu), giving the CPU path's circuit exactly: the slots
//! sorted and paired per vertex, cycle minima and list ranking by pointer jumping over every
//! slot (Wyllie: O(log m) rounds of one kernel each, whatever the number of trails), the
//! spanning forest by the same min-label hooking rounds as `forest`, and the splice at every
//! vertex at once. Slots, darts and vertices are u32 on the device (2m and N below 2^32), about
//! 45 bytes per edge-end at the peak (the ranking). One rank: the distributed phases of the
//! CPU path have no GPU form yet.

use super::jump::NIL;
use super::Solved;
use crate::comm::Triple;
use crate::device::{gpu_error, grid, Gpu, Kernel};
use crate::error::{Error, Result};
use cudarc::driver::{CudaSlice, PushKernelArg};
use rayon::prelude::*;
use std::collections::HashMap;
use std::time::Instant;

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

/// The end of a list (`jump::NIL`) in the kernels' 32-bit slots.
const NIL32: u32 = NIL as u32;

struct Kernels(HashMap<&'static str, Kernel>);

impl Kernels {
    fn get(&self, name: &str) -> &Kernel {
        &self.0[name]
    }
}

/// Run phases 1-5 on `ends` (Triple(vertex, dart, other end), this one rank's: all of them),
/// calling `phase(name, started)` as each ends.
pub fn solve(
    gpu: &Gpu,
    ends: &[Triple],
    s: &Setup,
    phase: &mut dyn FnMut(&'static str, Instant),
) -> Result<Solved> {
    let slots = ends.len() as u64;
    if slots >= u64::from(NIL32) || s.n > u64::from(u32::MAX) {
        return Err(Error::Unavailable(format!(
            "the GPU Euler path holds slots and vertices in 32 bits: {} edges and {} vertices are too many (at most 2^31 - 1 edges and 2^32 - 1 vertices)",
            s.m, s.n
        )));
    }
    let mut kernels = HashMap::new();
    for name in [
        "euler_count",
        "euler_place",
        "euler_pair",
        "euler_mate",
        "euler_next",
        "euler_min_round",
        "euler_trail_starts",
        "euler_offers",
        "euler_forest_init",
        "euler_forest_offer",
        "euler_forest_hook",
        "euler_forest_jump",
        "euler_splice",
        "euler_rank_init",
        "euler_rank_round",
        "euler_place_circuit",
    ] {
        kernels.insert(name, gpu.function("euler.cu", name)?);
    }
    let k = Kernels(kernels);
    let n = s.n as u32;
    let directed = u32::from(s.directed);

    // Phase 1: the darts' slots, sorted and paired per vertex, and each slot's mate.
    let t = Instant::now();
    let vertex_of: Vec<u32> = ends.par_iter().map(|e| e.0 as u32).collect();
    let dart_of: Vec<u32> = ends.par_iter().map(|e| e.1 as u32).collect();
    let end_vertex = gpu.upload("edge-ends", &vertex_of)?;
    let end_dart = gpu.upload("edge-ends", &dart_of)?;
    drop((vertex_of, dart_of));
    let mut degree = gpu.zeros::<u32>("degrees", s.n as usize)?;
    gpu.launch(k.get("euler_count"), grid(slots), |b| {
        b.arg(&end_vertex).arg(&slots).arg(&mut degree);
    })?;
    let vertex_start = starts(&gpu.download("degrees", &degree, s.n as usize)?);
    drop(degree);
    let mut cursor = gpu.upload("slot cursors", &vertex_start)?;
    let vertex_start = gpu.upload("vertex slots", &vertex_start)?;
    let mut dart = gpu.zeros::<u32>("slots", slots as usize)?;
    gpu.launch(k.get("euler_place"), grid(slots), |b| {
        b.arg(&end_vertex)
            .arg(&end_dart)
            .arg(&slots)
            .arg(&mut cursor)
            .arg(&mut dart);
    })?;
    drop((end_vertex, end_dart, cursor));
    let mut vertex = gpu.zeros::<u32>("slot vertices", slots as usize)?;
    let mut partner = gpu.zeros::<u32>("partners", slots as usize)?;
    let mut slot_of = gpu.zeros::<u32>("dart slots", slots as usize)?;
    gpu.launch(k.get("euler_pair"), grid(s.n), |b| {
        b.arg(&vertex_start)
            .arg(&n)
            .arg(&directed)
            .arg(&s.pairing)
            .arg(&s.key)
            .arg(&s.axes)
            .arg(&mut dart)
            .arg(&mut vertex)
            .arg(&mut partner)
            .arg(&mut slot_of);
    })?;
    let mut mate = gpu.zeros::<u32>("mates", slots as usize)?;
    gpu.launch(k.get("euler_mate"), grid(slots), |b| {
        b.arg(&dart).arg(&slot_of).arg(&slots).arg(&mut mate);
    })?;
    // The circuit is cut after edge `start` travelled forwards (see `order_circuit`).
    let at = |i: u64| read_one(gpu, &slot_of, i);
    let (head, tail) = (at(2 * s.start + 1)?, at(2 * s.start)?);
    drop(slot_of);
    gpu.sync("pair")?;
    phase("pair", t);

    // Phase 2: each slot labelled with the smallest edge of its cycle.
    let t = Instant::now();
    let mut next = gpu.zeros::<u32>("successors", slots as usize)?;
    let mut label = gpu.zeros::<u32>("labels", slots as usize)?;
    gpu.launch(k.get("euler_next"), grid(slots), |b| {
        b.arg(&mate)
            .arg(&partner)
            .arg(&dart)
            .arg(&slots)
            .arg(&NIL32)
            .arg(&NIL32)
            .arg(&mut next)
            .arg(&mut label);
    })?;
    let mut next_out = gpu.zeros::<u32>("successors", slots as usize)?;
    let mut label_out = gpu.zeros::<u32>("labels", slots as usize)?;
    let mut count = gpu.zeros::<u64>("counter", 1)?;
    let mut label_rounds = 0;
    loop {
        label_rounds += 1;
        zero(gpu, &mut count)?;
        gpu.launch(k.get("euler_min_round"), grid(slots), |b| {
            b.arg(&next)
                .arg(&label)
                .arg(&slots)
                .arg(&mut next_out)
                .arg(&mut label_out)
                .arg(&mut count);
        })?;
        std::mem::swap(&mut next, &mut next_out);
        std::mem::swap(&mut label, &mut label_out);
        if read_one(gpu, &count, 0)? == 0 {
            break;
        }
    }
    drop((label_out, next_out));
    zero(gpu, &mut count)?;
    gpu.launch(k.get("euler_trail_starts"), grid(slots), |b| {
        b.arg(&label).arg(&dart).arg(&slots).arg(&mut count);
    })?;
    // Two cycles per trail, one per direction of travel.
    let initial_trails = read_one(gpu, &count, 0)? / 2;
    phase("label", t);

    // Phase 3: a spanning forest of the trail graph; `joined` marks its links.
    let t = Instant::now();
    let offer_pass = |write: u32, offers: &mut CudaSlice<u32>, count: &mut CudaSlice<u64>| {
        zero(gpu, count)?;
        gpu.launch(k.get("euler_offers"), grid(s.n), |b| {
            b.arg(&vertex_start)
                .arg(&n)
                .arg(&partner)
                .arg(&label)
                .arg(&write)
                .arg(&mut *offers)
                .arg(&mut *count);
        })?;
        read_one(gpu, count, 0)
    };
    let mut offers = gpu.zeros::<u32>("trail offers", 1)?;
    let offer_count = offer_pass(0, &mut offers, &mut count)?;
    let mut offers = gpu.zeros::<u32>("trail offers", 3 * offer_count.max(1) as usize)?;
    offer_pass(1, &mut offers, &mut count)?;
    let nodes = s.m;
    let mut root = gpu.zeros::<u32>("trail roots", nodes as usize)?;
    let mut best = gpu.zeros::<u64>("trail offers", nodes as usize)?;
    let mut joined = gpu.zeros::<u8>("tree links", slots as usize)?;
    gpu.launch(k.get("euler_forest_init"), grid(nodes), |b| {
        b.arg(&mut root).arg(&mut best).arg(&nodes);
    })?;
    let mut tree_rounds = 0;
    loop {
        tree_rounds += 1;
        gpu.launch(k.get("euler_forest_offer"), grid(offer_count), |b| {
            b.arg(&offers).arg(&offer_count).arg(&root).arg(&mut best);
        })?;
        zero(gpu, &mut count)?;
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
            zero(gpu, &mut count)?;
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
    phase("tree", t);

    // Phase 4: the splice, at every vertex at once.
    let t = Instant::now();
    let mut repaired = gpu
        .stream
        .clone_dtod(&partner)
        .map_err(|e| gpu_error("copy the partners", e))?;
    gpu.launch(k.get("euler_splice"), grid(s.n), |b| {
        b.arg(&vertex_start)
            .arg(&n)
            .arg(&partner)
            .arg(&label)
            .arg(&joined)
            .arg(&dart)
            .arg(&directed)
            .arg(&mut repaired);
    })?;
    let partner = repaired;
    drop((joined, label));
    gpu.sync("splice")?;
    phase("splice", t);

    // Phase 5: cut after edge `start` and rank the list.
    let t = Instant::now();
    // The list's last slot is the one whose successor was `head`: next = mate ∘ partner,
    // both involutions, so it is partner[mate[head]].
    let last = read_one(
        gpu,
        &partner,
        u64::from(read_one(gpu, &mate, u64::from(head))?),
    )?;
    let mut scratch = gpu.zeros::<u32>("edge labels", slots as usize)?;
    gpu.launch(k.get("euler_next"), grid(slots), |b| {
        b.arg(&mate)
            .arg(&partner)
            .arg(&dart)
            .arg(&slots)
            .arg(&head)
            .arg(&tail)
            .arg(&mut next)
            .arg(&mut scratch);
    })?;
    drop((mate, partner, scratch));
    let (dist, end) = rank_lists(gpu, &k, next, slots)?;
    let mut code = gpu.zeros::<u64>("circuit", s.m as usize)?;
    let mut arrive = gpu.zeros::<u32>("circuit vertices", s.m as usize)?;
    zero(gpu, &mut count)?;
    gpu.launch(k.get("euler_place_circuit"), grid(slots), |b| {
        b.arg(&dist)
            .arg(&end)
            .arg(&dart)
            .arg(&vertex)
            .arg(&slots)
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
    phase("rank", t);

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

/// List ranking over every slot (Wyllie): each slot's distance to its list's end and that
/// end. Fails when a list has no end within log2(slots) + 2 rounds (a cycle is left).
fn rank_lists(
    gpu: &Gpu,
    k: &Kernels,
    mut next: CudaSlice<u32>,
    slots: u64,
) -> Result<(CudaSlice<u32>, CudaSlice<u32>)> {
    let alloc = |what: &str| gpu.zeros::<u32>(what, slots as usize);
    let (mut dist, mut end) = (alloc("distances")?, alloc("list ends")?);
    gpu.launch(k.get("euler_rank_init"), grid(slots), |b| {
        b.arg(&next).arg(&slots).arg(&mut dist).arg(&mut end);
    })?;
    let (mut next_out, mut dist_out, mut end_out) = (
        alloc("successors")?,
        alloc("distances")?,
        alloc("list ends")?,
    );
    let mut active = gpu.zeros::<u64>("counter", 1)?;
    let limit = 66 - slots.max(1).leading_zeros();
    for _ in 0..limit {
        zero(gpu, &mut active)?;
        gpu.launch(k.get("euler_rank_round"), grid(slots), |b| {
            b.arg(&next)
                .arg(&dist)
                .arg(&end)
                .arg(&slots)
                .arg(&mut next_out)
                .arg(&mut dist_out)
                .arg(&mut end_out)
                .arg(&mut active);
        })?;
        std::mem::swap(&mut next, &mut next_out);
        std::mem::swap(&mut dist, &mut dist_out);
        std::mem::swap(&mut end, &mut end_out);
        if read_one(gpu, &active, 0)? == 0 {
            return Ok((dist, end));
        }
    }
    Err(Error::Check(
        "splicing left more than one closed trail (a list without an end)".into(),
    ))
}

/// Exclusive prefix sums of the degrees, with the total last.
fn starts(degree: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(degree.len() + 1);
    let mut sum = 0u32;
    out.push(0);
    for &d in degree {
        sum += d;
        out.push(sum);
    }
    out
}

fn zero(gpu: &Gpu, buffer: &mut CudaSlice<u64>) -> Result<()> {
    gpu.stream
        .memset_zeros(buffer)
        .map_err(|e| gpu_error("reset a counter", e))
}

/// Element `i` of a device buffer.
fn read_one<T: cudarc::driver::DeviceRepr + Default + Copy>(
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

#[cfg(test)]
mod tests {
    use super::starts;

    #[test]
    fn slot_starts_are_the_exclusive_sums_with_the_total_last() {
        assert_eq!(starts(&[2, 0, 4, 2]), vec![0, 2, 2, 6, 8]);
        assert_eq!(starts(&[]), vec![0]);
    }
}
