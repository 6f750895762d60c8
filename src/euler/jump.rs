//! Pointer jumping over a permutation of slots held in `Ranges` layout (collective): each
//! round every slot reads the state of the slot it points at, wherever that lives, in one
//! `World::query`, and doubles its reach. Rounds are O(log length); the work per round is
//! flat over the slots, whatever the number of cycles or lists.

use crate::comm::ranges::Ranges;
use crate::comm::{Op, Pair, Triple, World};
use crate::error::{Error, Result};
use rayon::prelude::*;

/// Marks the end of a list.
pub const NIL: u64 = u64::MAX;

/// For each local slot, the smallest `value` over its cycle of `next`. A round takes
/// `value[s] = min(value[s], value[next[s]])` and `next[s] = next[next[s]]`; once a round
/// changes no value, every value is its cycle's minimum (each value is at most the one
/// 2^k steps on, so around the cycle all are equal, and their windows cover it).
pub fn cycle_min(
    world: &World,
    slots: &Ranges,
    mut next: Vec<u64>,
    mut value: Vec<u64>,
) -> Result<(Vec<u64>, usize)> {
    let mut rounds = 0;
    loop {
        rounds += 1;
        let ahead = world.query(
            &next,
            |s| slots.owner(s),
            |s| {
                let i = slots.local(s);
                Pair(value[i], next[i])
            },
        )?;
        let changed: u64 = value
            .par_iter_mut()
            .zip(next.par_iter_mut())
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
        if world.allreduce(changed, Op::Sum) == 0 {
            return Ok((value, rounds));
        }
    }
}

/// List ranking: for each local slot, its distance to the end of its list (the slot whose
/// `next` is `NIL`) and that end's slot. Fails when a slot is on a cycle (no end within
/// log2(total) + 2 rounds).
pub fn rank_lists(
    world: &World,
    slots: &Ranges,
    mut next: Vec<u64>,
) -> Result<(Vec<u64>, Vec<u64>)> {
    let first = slots.first();
    let mut dist: Vec<u64> = next.par_iter().map(|&n| u64::from(n != NIL)).collect();
    let mut end: Vec<u64> = (0..next.len() as u64)
        .into_par_iter()
        .map(|i| first + i)
        .collect();
    let limit = 66 - slots.total().max(1).leading_zeros();
    for _ in 0..limit {
        let active: Vec<usize> = (0..next.len())
            .into_par_iter()
            .filter(|&i| next[i] != NIL)
            .collect();
        if world.allreduce(active.len() as u64, Op::Sum) == 0 {
            return Ok((dist, end));
        }
        let keys: Vec<u64> = active.par_iter().map(|&i| next[i]).collect();
        let ahead = world.query(
            &keys,
            |s| slots.owner(s),
            |s| {
                let i = slots.local(s);
                Triple(dist[i], next[i], end[i])
            },
        )?;
        let mut state: Vec<(&mut u64, (&mut u64, &mut u64))> = dist
            .iter_mut()
            .zip(next.iter_mut().zip(end.iter_mut()))
            .filter(|(_, (n, _))| **n != NIL)
            .collect();
        state.par_iter_mut().zip(ahead.into_par_iter()).for_each(
            |((dist, (next, end)), Triple(d, n, e))| {
                **dist += d;
                **next = n;
                **end = e;
            },
        );
    }
    Err(Error::Check(
        "splicing left more than one closed trail (a list without an end)".into(),
    ))
}
