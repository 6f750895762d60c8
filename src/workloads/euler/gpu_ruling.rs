//! The jumping across ranks over the run heads, on the devices (collective): the CPU's
//! `ruling` walk and `jump::plain_minima` / `jump::plain_ranks` over the rulers, with the
//! heads' state in device arrays indexed by local slot and every crossing through the device
//! exchange (`GpuExchange`): one all-to-all a round for all walkers (kernels/euler.cu
//! `euler_walk`), two per round of the rulers' jumping and two to hand the reached heads
//! their rulers' results (a question to the slot's owner and its answer back). The result
//! equals the CPU's; only the device's heads and their arrays are touched.

use super::gpu::{read_one, Kernels};
use super::jump::NIL;
use crate::comm::gpu::GpuExchange;
use crate::comm::ranges::Ranges;
use crate::comm::{run_starts, Op, World};
use crate::device::{grid, Gpu, Kernel};
use crate::error::Result;
use cudarc::driver::{CudaSlice, PushKernelArg};

const NIL32: u32 = NIL as u32;

/// u32 per item of the walk (kernels/euler.cu ITEM).
const ITEM: u32 = 5;

/// About one run head in this many is sampled as a ruler; walkers stop after 4 times as
/// many rounds (the heads beyond, about e^-4 of them, rule too), as the CPU's
/// (`ruling::RULER_EVERY`). One in 8 (walks of 32 rounds) was measured slower on 2 and 4
/// H200s (label 0.065 s against 0.048 at 2^24 edges per GPU, 50% more bytes):
/// docs/benchmarks.md, Euler circuits, step 5. The result does not depend on it.
const RULER_EVERY: u32 = 32;

/// `RULER_EVERY`, or `TESSERA_EULER_RULERS` where set (for comparisons).
fn ruler_every() -> u32 {
    std::env::var("TESSERA_EULER_RULERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&e: &u32| (1..=1 << 16).contains(&e))
        .unwrap_or(RULER_EVERY)
}

/// Sends device items to the owners of the global slots they start with.
pub(super) struct Router<'a, 'w> {
    world: &'a World,
    gpu: &'a Gpu,
    k: &'a Kernels,
    exchange: &'a GpuExchange<'w>,
    starts: CudaSlice<u64>,
    ranks: u32,
    /// This rank's first global slot and its slot count.
    pub first: u32,
    pub here: u32,
}

/// Items routed to their owners: what arrived here, and the runs both ways (for answers).
pub(super) struct Routed {
    sent: CudaSlice<u32>,
    sent_counts: Vec<usize>,
    pub arrived: CudaSlice<u32>,
    recv_counts: Vec<usize>,
    pub count: u64,
}

impl<'a, 'w> Router<'a, 'w> {
    pub fn new(
        world: &'a World,
        gpu: &'a Gpu,
        k: &'a Kernels,
        exchange: &'a GpuExchange<'w>,
        slots: &Ranges,
    ) -> Result<Self> {
        Ok(Router {
            world,
            gpu,
            k,
            exchange,
            starts: gpu.upload("slot starts", slots.starts())?,
            ranks: (slots.starts().len() - 1) as u32,
            first: slots.first() as u32,
            here: slots.local_len() as u32,
        })
    }

    pub fn gpu(&self) -> &'a Gpu {
        self.gpu
    }

    pub fn world(&self) -> &'a World {
        self.world
    }

    pub fn kernel(&self, name: &str) -> &'a Kernel {
        self.k.get(name)
    }

    /// Every rank's count summed (collective).
    pub fn total(&self, count: u64) -> u64 {
        self.world.allreduce(count, Op::Sum)
    }

    /// Send `count` items of `width` u32 to their slots' owners (collective).
    pub fn route(&self, items: &CudaSlice<u32>, count: u64, width: u32) -> Result<Routed> {
        let (gpu, ranks) = (self.gpu, self.ranks);
        let mut counts = gpu.zeros::<u64>("owner counts", ranks as usize)?;
        gpu.launch(self.k.get("euler_owner_count"), grid(count), |b| {
            b.arg(items)
                .arg(&count)
                .arg(&width)
                .arg(&self.starts)
                .arg(&ranks)
                .arg(&mut counts);
        })?;
        let counts = gpu.download("owner counts", &counts, ranks as usize)?;
        let cursor: Vec<u64> = run_starts(&counts.iter().map(|&c| c as usize).collect::<Vec<_>>())
            .iter()
            .map(|&s| s as u64)
            .collect();
        let mut cursor = gpu.upload("owner cursors", &cursor)?;
        let mut sent = gpu.zeros::<u32>("routed items", (count * u64::from(width)) as usize)?;
        gpu.launch(self.k.get("euler_owner_scatter"), grid(count), |b| {
            b.arg(items)
                .arg(&count)
                .arg(&width)
                .arg(&self.starts)
                .arg(&ranks)
                .arg(&mut cursor)
                .arg(&mut sent);
        })?;
        let sent_counts: Vec<usize> = counts.iter().map(|&c| (c * u64::from(width)) as usize).collect();
        let mut arrived = gpu.zeros::<u32>("routed items", 1)?;
        let recv_counts = self.exchange.alltoallv_runs(
            &sent,
            (&run_starts(&sent_counts), &sent_counts),
            &mut arrived,
        )?;
        let count = recv_counts.iter().sum::<usize>() as u64 / u64::from(width);
        Ok(Routed {
            sent,
            sent_counts,
            arrived,
            recv_counts,
            count,
        })
    }

    /// For entries i of `list` (local slots) whose `table` entry is a global slot (not NIL),
    /// that slot's values in the first `width` of `tables`, into `out[width * i..]`
    /// (collective). Returns how many asked on all ranks (none: nothing moved).
    pub fn query(
        &self,
        (list, count): (&CudaSlice<u32>, u64),
        table: &CudaSlice<u32>,
        tables: [&CudaSlice<u32>; 3],
        width: u32,
        out: &mut CudaSlice<u32>,
    ) -> Result<u64> {
        let gpu = self.gpu;
        let mut asks = gpu.zeros::<u32>("questions", 2 * count as usize)?;
        let mut asked = gpu.zeros::<u64>("counter", 1)?;
        gpu.launch(self.k.get("euler_ask"), grid(count), |b| {
            b.arg(list).arg(&count).arg(table).arg(&mut asks).arg(&mut asked);
        })?;
        let asked = read_one(gpu, &asked, 0)?;
        self.ask((asks, asked), tables, width, out)
    }

    /// The questions `asks` (`count` pairs: a global slot, the asker's entry i), answered by
    /// the slot's owner from the first `width` of `tables`, into `out[width * i..]`
    /// (collective). Returns how many asked on all ranks (none: nothing moved).
    pub fn ask(
        &self,
        (asks, asked): (CudaSlice<u32>, u64),
        tables: [&CudaSlice<u32>; 3],
        width: u32,
        out: &mut CudaSlice<u32>,
    ) -> Result<u64> {
        let gpu = self.gpu;
        let total = self.total(asked);
        if total == 0 {
            return Ok(0);
        }
        let q = self.route(&asks, asked, 2)?;
        drop(asks);
        let mut answer = gpu.zeros::<u32>("answers", (q.count * u64::from(width)) as usize)?;
        gpu.launch(self.k.get("euler_answer"), grid(q.count), |b| {
            b.arg(&q.arrived)
                .arg(&q.count)
                .arg(&self.first)
                .arg(tables[0])
                .arg(tables[1])
                .arg(tables[2])
                .arg(&width)
                .arg(&mut answer);
        })?;
        let Routed {
            sent,
            sent_counts,
            arrived,
            recv_counts,
            ..
        } = q;
        drop(arrived);
        // Back along the runs the questions came by: 2 u32 per question, `width` per answer.
        let scale = |c: &Vec<usize>| -> Vec<usize> { c.iter().map(|&x| x / 2 * width as usize).collect() };
        let (back_counts, expect) = (scale(&recv_counts), scale(&sent_counts));
        let mut back = gpu.zeros::<u32>("answers", 1)?;
        let got = self.exchange.alltoallv_runs(
            &answer,
            (&run_starts(&back_counts), &back_counts),
            &mut back,
        )?;
        debug_assert_eq!(got, expect);
        drop(answer);
        gpu.launch(self.k.get("euler_answered"), grid(asked), |b| {
            b.arg(&sent).arg(&back).arg(&asked).arg(&width).arg(out);
        })?;
        Ok(total)
    }
}

/// The heads' state on the device, per local slot: `next` the head (global slot) each head's
/// run leads to (NIL at a list's end), `weight` its run's smallest edge or steps, `end` its
/// run's last slot (lists). Each head's `weight` (and `end`) become its cycle's smallest
/// edge, or its steps to its list's end (and that end).
pub(super) struct HeadState<'h> {
    pub heads: (&'h CudaSlice<u32>, u64),
    pub next: &'h mut CudaSlice<u32>,
    pub weight: &'h mut CudaSlice<u32>,
    pub end: &'h mut CudaSlice<u32>,
}

/// Cycle minima (`sum` false) or list ranking (`sum` true) over the heads (collective).
/// Returns the rounds of exchange (walk, jumping over the rulers, one to spread) and, for
/// lists, false where some list has no end.
pub(super) fn jump(r: &Router, mut h: HeadState, sum: bool) -> Result<(usize, bool)> {
    let gpu = r.gpu;
    let n = u64::from(r.here);
    let mut ruler_of = gpu.zeros::<u32>("rulers of heads", n as usize)?;
    gpu.launch(r.k.get("euler_fill"), grid(n), |b| {
        b.arg(&mut ruler_of).arg(&n).arg(&NIL32);
    })?;
    let mut before = gpu.zeros::<u32>("steps from rulers", n as usize)?;
    let walk_rounds = walk(r, &mut h, sum, &mut ruler_of, &mut before)?;
    let (heads, count) = h.heads;
    let mut rulers = gpu.zeros::<u32>("rulers", count as usize)?;
    let mut ruler_count = gpu.zeros::<u64>("counter", 1)?;
    gpu.launch(r.k.get("euler_walk_rulers"), grid(count), |b| {
        b.arg(heads).arg(&count).arg(&ruler_of).arg(&mut rulers).arg(&mut ruler_count);
    })?;
    let rulers = (&rulers, read_one(gpu, &ruler_count, 0)?);
    let (rounds, ended) = if sum {
        rule_ranks(r, rulers, &mut *h.next, &mut *h.weight, &mut *h.end)?
    } else {
        (rule_minima(r, rulers, &mut *h.next, &mut *h.weight)?, true)
    };
    if !ended {
        return Ok((walk_rounds + rounds, false));
    }
    // Each reached head asks its ruler for the result.
    let mut got = gpu.zeros::<u32>("rulers' results", 2 * count as usize)?;
    r.query((heads, count), &ruler_of, [&*h.weight, &*h.end, &*h.end], 2, &mut got)?;
    let sum32 = u32::from(sum);
    gpu.launch(r.k.get("euler_rule_spread"), grid(count), |b| {
        b.arg(heads)
            .arg(&count)
            .arg(&ruler_of)
            .arg(&before)
            .arg(&got)
            .arg(&sum32)
            .arg(&mut *h.weight)
            .arg(&mut *h.end);
    })?;
    Ok((walk_rounds + rounds + 1, true))
}

/// The walk from every sampled ruler to the next (collective): notes at each reached head
/// its ruler and the combined weight before it, and leaves each ruler's segment (the ruler
/// or NIL it leads to, its weight, its list's last slot) in the heads' arrays. Returns the
/// rounds.
fn walk(
    r: &Router,
    h: &mut HeadState,
    sum: bool,
    ruler_of: &mut CudaSlice<u32>,
    before: &mut CudaSlice<u32>,
) -> Result<usize> {
    let gpu = r.gpu;
    let (heads, count) = h.heads;
    let mut items_count = gpu.zeros::<u64>("counter", 1)?;
    let every = ruler_every();
    // Counted first, then written into an array of that size.
    let mut start = |write: u32, items: &mut CudaSlice<u32>| {
        gpu.clear("a counter", &mut items_count)?;
        gpu.launch(r.k.get("euler_walk_start"), grid(count), |b| {
            b.arg(heads)
                .arg(&count)
                .arg(&r.first)
                .arg(&every)
                .arg(&*h.next)
                .arg(&*h.weight)
                .arg(&write)
                .arg(items)
                .arg(&mut items_count);
        })?;
        read_one(gpu, &items_count, 0)
    };
    let mut items = gpu.zeros::<u32>("walkers", 1)?;
    let walkers = start(0, &mut items)?;
    items = gpu.zeros::<u32>("walkers", (u64::from(ITEM) * walkers) as usize)?;
    start(1, &mut items)?;
    let mut moving = read_one(gpu, &items_count, 0)?;
    let (mut rounds, sum32) = (0, u32::from(sum));
    while r.total(moving) > 0 {
        rounds += 1;
        let arrived = r.route(&items, moving, ITEM)?;
        // The walkers past the last round stop before their heads (finishes still arrive).
        let go_on = u32::from(rounds <= 4 * every as usize);
        let n = arrived.count;
        if items.len() < (ITEM as u64 * n) as usize {
            items = gpu.zeros::<u32>("walkers", (ITEM as u64 * n) as usize)?;
        }
        gpu.clear("a counter", &mut items_count)?;
        gpu.launch(r.k.get("euler_walk"), grid(n), |b| {
            b.arg(&arrived.arrived)
                .arg(&n)
                .arg(&r.first)
                .arg(&r.here)
                .arg(&every)
                .arg(&sum32)
                .arg(&go_on)
                .arg(&mut *h.next)
                .arg(&mut *h.weight)
                .arg(&mut *h.end)
                .arg(&mut *ruler_of)
                .arg(&mut *before)
                .arg(&mut items)
                .arg(&mut items_count);
        })?;
        moving = read_one(gpu, &items_count, 0)?;
    }
    Ok(rounds)
}

/// Plain pointer jumping over the rulers' segments for cycle minima (jump.rs
/// `plain_minima`); returns the rounds.
fn rule_minima(
    r: &Router,
    (rulers, count): (&CudaSlice<u32>, u64),
    next: &mut CudaSlice<u32>,
    weight: &mut CudaSlice<u32>,
) -> Result<usize> {
    let gpu = r.gpu;
    let mut got = gpu.zeros::<u32>("rulers' successors", 2 * count as usize)?;
    let mut changed = gpu.zeros::<u64>("counter", 1)?;
    let mut rounds = 0;
    while r.query((rulers, count), next, [&*weight, &*next, &*next], 2, &mut got)? > 0 {
        rounds += 1;
        gpu.clear("a counter", &mut changed)?;
        gpu.launch(r.k.get("euler_rule_min"), grid(count), |b| {
            b.arg(rulers)
                .arg(&count)
                .arg(&got)
                .arg(&mut *weight)
                .arg(&mut *next)
                .arg(&mut changed);
        })?;
        if r.total(read_one(gpu, &changed, 0)?) == 0 {
            break;
        }
    }
    Ok(rounds)
}

/// Wyllie's ranking over the rulers' segments (jump.rs `plain_ranks`): the rounds, and
/// false when some list has no end within log2(slots) + 2 rounds.
fn rule_ranks(
    r: &Router,
    (rulers, count): (&CudaSlice<u32>, u64),
    next: &mut CudaSlice<u32>,
    dist: &mut CudaSlice<u32>,
    end: &mut CudaSlice<u32>,
) -> Result<(usize, bool)> {
    let gpu = r.gpu;
    let total_slots = r.total(u64::from(r.here));
    let limit = 66 - total_slots.max(1).leading_zeros() as usize;
    let mut got = gpu.zeros::<u32>("rulers' successors", 3 * count as usize)?;
    for round in 0..limit {
        if r.query((rulers, count), next, [&*dist, &*next, &*end], 3, &mut got)? == 0 {
            return Ok((round, true));
        }
        gpu.launch(r.k.get("euler_rule_rank"), grid(count), |b| {
            b.arg(rulers)
                .arg(&count)
                .arg(&got)
                .arg(&mut *dist)
                .arg(&mut *next)
                .arg(&mut *end);
        })?;
    }
    Ok((limit, false))
}
