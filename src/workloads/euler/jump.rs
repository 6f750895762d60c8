//! Cycle minima and list ranking over a permutation of slots held in `Ranges` layout
//! (collective), as the spec says: first each rank collapses its *local runs* (maximal chains
//! of successors that stay on the rank, walked with plain indexing, one rayon task per run),
//! then pointer jumping runs over the run heads only, each round reading the state of the head
//! a head points at, wherever it lives, in one `World::query` and doubling its reach; last,
//! each run's slots take their head's result. Chains that never leave the rank need no
//! jumping at all, so one rank jumps over nothing, and the rounds (O(log heads)) do not depend
//! on the number of cycles or lists.

use super::ruling;
use crate::comm::ranges::Ranges;
use crate::comm::{Op, Pair, Triple, World};
use crate::error::{Error, Result};
use rayon::prelude::*;

/// Marks the end of a list.
pub const NIL: u64 = u64::MAX;

/// The error of a list ranking that meets a cycle: splicing left more than one trail.
pub fn no_end() -> Error {
    Error::Check("splicing left more than one closed trail (a list without an end)".into())
}

/// Marks a slot that is no run head in `Runs::head_index`.
const NOT_A_HEAD: u32 = u32::MAX;

/// About one slot in this many also starts a run wherever it is (chosen by a hash of its
/// global number, so the same for any rank count): chains that never leave a rank are cut
/// into pieces that rayon walks in parallel, instead of one thread walking each cycle.
const SPLITTER_EVERY: u64 = 64;

fn splitter(slot: u64) -> bool {
    crate::rng::mix64(slot).is_multiple_of(SPLITTER_EVERY)
}

/// This rank's slots cut into local runs.
struct Runs {
    /// Each run's local slots in order, the first its head (no local slot points at it, or
    /// a splitter).
    runs: Vec<Vec<usize>>,
    /// Local slots on cycles that never leave the rank, each cycle in order.
    cycles: Vec<Vec<usize>>,
    /// For each local slot: its run's index if it is a run head.
    head_index: Vec<u32>,
}

impl Runs {
    fn of(slots: &Ranges, next: &[u64]) -> Runs {
        let n = next.len();
        let here = |s: u64| -> Option<usize> {
            let i = s.wrapping_sub(slots.first());
            (s != NIL && i < n as u64).then_some(i as usize)
        };
        let mut pointed_at = vec![false; n];
        for &s in next {
            if let Some(i) = here(s) {
                pointed_at[i] = true;
            }
        }
        let first = slots.first();
        let is_head = |i: usize| !pointed_at[i] || splitter(first + i as u64);
        let runs: Vec<Vec<usize>> = (0..n)
            .into_par_iter()
            .filter(|&i| is_head(i))
            .map(|head| {
                let mut run = vec![head];
                let mut at = head;
                while let Some(i) = here(next[at]).filter(|&i| !is_head(i)) {
                    run.push(i);
                    at = i;
                }
                run
            })
            .collect();
        let mut seen = vec![false; n];
        for run in &runs {
            for &i in run {
                seen[i] = true;
            }
        }
        let mut cycles = Vec::new();
        for start in 0..n {
            if seen[start] {
                continue;
            }
            let mut cycle = Vec::new();
            let mut at = start;
            while !seen[at] {
                seen[at] = true;
                cycle.push(at);
                at = here(next[at]).expect("a slot every local slot's successor is local to");
            }
            cycles.push(cycle);
        }
        let mut head_index = vec![NOT_A_HEAD; n];
        for (k, run) in runs.iter().enumerate() {
            head_index[run[0]] = k as u32;
        }
        Runs {
            runs,
            cycles,
            head_index,
        }
    }

    /// Each run's head as a global slot.
    fn head_slots(&self, slots: &Ranges) -> Vec<u64> {
        let first = slots.first();
        self.runs.par_iter().map(|r| first + r[0] as u64).collect()
    }

    /// The run index of global slot `s`, a run head on this rank.
    fn head(&self, slots: &Ranges, s: u64) -> usize {
        self.head_index[slots.local(s)] as usize
    }
}

/// For each local slot, the smallest `value` over its cycle of `next` (a permutation), and
/// the rounds of pointer jumping over run heads. Each run is reduced to its head, with the
/// run's minimum and the successor of its last slot (another run's head), and the heads
/// jump (`jump_minima`).
pub fn cycle_min(
    world: &World,
    slots: &Ranges,
    next: Vec<u64>,
    value: Vec<u64>,
) -> Result<(Vec<u64>, usize)> {
    let runs = Runs::of(slots, &next);
    let head_next: Vec<u64> = runs
        .runs
        .par_iter()
        .map(|run| next[*run.last().expect("a run has a head")])
        .collect();
    let mut head_value: Vec<u64> = runs
        .runs
        .par_iter()
        .map(|run| {
            run.iter()
                .map(|&i| value[i])
                .min()
                .expect("a run has a head")
        })
        .collect();
    let head_slot = runs.head_slots(slots);
    let rounds = jump_minima(
        world,
        slots,
        &head_slot,
        |s| runs.head(slots, s),
        head_next,
        &mut head_value,
    )?;
    let mut out = value;
    for (run, &min) in runs.runs.iter().zip(&head_value) {
        for &i in run {
            out[i] = min;
        }
    }
    for cycle in &runs.cycles {
        let min = cycle
            .iter()
            .map(|&i| out[i])
            .min()
            .expect("a cycle has a slot");
        for &i in cycle {
            out[i] = min;
        }
    }
    Ok((out, rounds))
}

/// Whether the cross-rank jumping runs over every run head (`TESSERA_EULER_JUMP=plain`, for
/// tests and comparisons) instead of over a ruling set (`ruling`), the default.
fn plain_jumping() -> bool {
    std::env::var("TESSERA_EULER_JUMP").is_ok_and(|v| v == "plain")
}

/// Cycle minima over run heads (collective): `head_slot[k]` is head k's global slot, the
/// rest as `plain_minima` says; over a ruling set unless `plain_jumping`. Returns the
/// rounds of exchange. The CPU path's; several GPUs jump on the devices (euler/gpu_ruling.rs),
/// always over the ruling set.
pub fn jump_minima(
    world: &World,
    slots: &Ranges,
    head_slot: &[u64],
    head_of: impl Fn(u64) -> usize + Sync,
    head_next: Vec<u64>,
    head_value: &mut [u64],
) -> Result<usize> {
    if plain_jumping() {
        return plain_minima(world, slots, head_of, head_next, head_value);
    }
    let heads = ruling::Heads {
        slot: head_slot,
        next: &head_next,
        weight: head_value,
        end: &mut [],
    };
    ruling::minima(world, slots, head_of, heads)
}

/// List ranking over run heads (collective), as `plain_ranks` says, with `head_slot[k]`
/// head k's global slot; over a ruling set unless `plain_jumping`.
pub fn jump_ranks(
    world: &World,
    slots: &Ranges,
    head_slot: &[u64],
    head_of: impl Fn(u64) -> usize + Sync,
    head_next: Vec<u64>,
    dist: &mut [u64],
    end: &mut [u64],
) -> Result<bool> {
    if plain_jumping() {
        return plain_ranks(world, slots, head_of, head_next, dist, end);
    }
    let heads = ruling::Heads {
        slot: head_slot,
        next: &head_next,
        weight: dist,
        end,
    };
    ruling::ranks(world, slots, head_of, heads)
}

/// Pointer jumping over run heads (collective): head k stands for its run, with the run's
/// smallest value `head_value[k]` and `head_next[k]`, the head its run's last slot leads to
/// (a global slot, held as a head by its owner, where `head_of` gives its index). Each round
/// takes `value[h] = min(value[h], value[next[h]])` and `next[h] = next[next[h]]`; once a
/// round changes no value every head holds its cycle's minimum (each is at most the one 2^k
/// heads on, so around the cycle all are equal, and their windows cover it). Returns the
/// rounds.
pub fn plain_minima(
    world: &World,
    slots: &Ranges,
    head_of: impl Fn(u64) -> usize + Sync,
    mut head_next: Vec<u64>,
    head_value: &mut [u64],
) -> Result<usize> {
    let mut rounds = 0;
    // No heads anywhere: every cycle stays on its rank, and no round is needed.
    let mut jumping = world.allreduce(head_next.len() as u64, Op::Sum) > 0;
    while jumping {
        rounds += 1;
        let ahead = world.query(
            &head_next,
            |s| slots.owner(s),
            |s| {
                let h = head_of(s);
                Pair(head_value[h], head_next[h])
            },
        )?;
        let changed: u64 = head_value
            .par_iter_mut()
            .zip(head_next.par_iter_mut())
            .zip(ahead.into_par_iter())
            .map(|((v, n), Pair(av, an))| {
                *n = an;
                if av < *v {
                    *v = av;
                    1
                } else {
                    0
                }
            })
            .sum();
        jumping = world.allreduce(changed, Op::Sum) > 0;
    }
    Ok(rounds)
}

/// List ranking: for each local slot, its distance to the end of its list (the slot whose
/// `next` is `NIL`) and that end's slot. Each run is reduced to its head, weighted by the steps
/// it stands for; pointer jumping over the heads sums the weights. Fails on every rank when a
/// slot is on a cycle (one within a rank, or no end within log2(total) + 2 rounds).
pub fn rank_lists(world: &World, slots: &Ranges, next: Vec<u64>) -> Result<(Vec<u64>, Vec<u64>)> {
    let runs = Runs::of(slots, &next);
    if world.allreduce(runs.cycles.len() as u64, Op::Sum) > 0 {
        return Err(no_end());
    }
    let first = slots.first();
    // Per head: the successor of its run's last slot, the steps from the head to that
    // successor (or to the list's end), and the end's slot where the run ends the list.
    let mut head_next = Vec::with_capacity(runs.runs.len());
    let mut dist = Vec::with_capacity(runs.runs.len());
    let mut end = Vec::with_capacity(runs.runs.len());
    for run in &runs.runs {
        let last = *run.last().expect("a run has a head");
        let after = next[last];
        head_next.push(after);
        dist.push(run.len() as u64 - u64::from(after == NIL));
        end.push(first + last as u64);
    }
    let head_slot = runs.head_slots(slots);
    if !jump_ranks(
        world,
        slots,
        &head_slot,
        |s| runs.head(slots, s),
        head_next,
        &mut dist,
        &mut end,
    )? {
        return Err(no_end());
    }
    let n = next.len();
    let (mut out_dist, mut out_end) = (vec![0; n], vec![0; n]);
    for (h, run) in runs.runs.iter().enumerate() {
        for (k, &i) in run.iter().enumerate() {
            out_dist[i] = dist[h] - k as u64;
            out_end[i] = end[h];
        }
    }
    Ok((out_dist, out_end))
}

/// Wyllie's pointer jumping over run heads (collective): head k stands for `dist[k]` steps to
/// `head_next[k]` (a global slot, held as a head by its owner, where `head_of` gives its
/// index; NIL once the run ends its list), and `end[k]` is the list's last slot once known.
/// Sums the steps to each list's end. False when some list has no end within
/// log2(slots) + 2 rounds (a cycle).
pub fn plain_ranks(
    world: &World,
    slots: &Ranges,
    head_of: impl Fn(u64) -> usize + Sync,
    mut head_next: Vec<u64>,
    dist: &mut [u64],
    end: &mut [u64],
) -> Result<bool> {
    let limit = 66 - slots.total().max(1).leading_zeros();
    for _ in 0..limit {
        let active: Vec<usize> = (0..head_next.len())
            .into_par_iter()
            .filter(|&h| head_next[h] != NIL)
            .collect();
        if world.allreduce(active.len() as u64, Op::Sum) == 0 {
            return Ok(true);
        }
        let keys: Vec<u64> = active.par_iter().map(|&h| head_next[h]).collect();
        let ahead = world.query(
            &keys,
            |s| slots.owner(s),
            |s| {
                let h = head_of(s);
                Triple(dist[h], head_next[h], end[h])
            },
        )?;
        for (&h, Triple(d, n, e)) in active.iter().zip(ahead) {
            dist[h] += d;
            head_next[h] = n;
            end[h] = e;
        }
    }
    Ok(false)
}
