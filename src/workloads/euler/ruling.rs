//! Pointer jumping across ranks over a random ruling set (collective): of the run heads
//! (`jump`), about one in `RULER_EVERY` is sampled as a *ruler*. A walker leaves every ruler
//! and follows the heads after it, hop by hop, until it meets the next ruler or the list's
//! end; all walkers move at once, one `World::route` a round, and a walker goes on without
//! an exchange while its next head is on the same rank. Each head it passes records the
//! ruler and how far it was from it. Heads no walker reached (those before a list's first
//! ruler, cycles without one, and those beyond `WALK_ROUNDS` hops) become rulers too: each leads straight to a ruler or the
//! end, because a reached head's predecessor was reached or is a ruler. The rulers' short
//! list is then ranked by plain pointer jumping (`jump::plain_minima`, `jump::plain_ranks`)
//! and each reached head takes its ruler's result, less its distance. So each head crosses
//! ranks about twice, not once per round of jumping (22-25 rounds), and only the rulers, a
//! few percent of the heads, take part in the jumping. The result equals plain jumping's.

use super::jump::{self, NIL};
use crate::comm::ranges::Ranges;
use crate::comm::{Op, Pair, Quad, World};
use crate::error::Result;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// About one run head in this many is sampled as a ruler.
const RULER_EVERY: u64 = 32;

/// Walkers stop after this many rounds (the longest gap between rulers grows as the log of
/// their number): the heads beyond, about e^-4 of them, become rulers.
const WALK_ROUNDS: usize = 4 * RULER_EVERY as usize;

/// Salt of the rulers' hash (apart from `jump`'s splitters).
const RULER_SALT: u64 = 0x7275_6c65_7273;

/// Marks a head that is a ruler in `Walk::ruler_of`.
const RULES: u64 = NIL;

fn sampled(slot: u64) -> bool {
    crate::rng::mix64(slot ^ RULER_SALT).is_multiple_of(RULER_EVERY)
}

/// How the heads of a segment combine: the smallest value (cycle minima) or the sum of
/// steps (list ranking).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    Min,
    Sum,
}

impl Fold {
    fn combine(self, acc: u64, weight: u64) -> u64 {
        match self {
            Fold::Min => acc.min(weight),
            Fold::Sum => acc + weight,
        }
    }
}

/// This rank's run heads: global slot, the head (global slot) or NIL after each, its weight
/// (smallest value, or steps to the next head) and, for list ranking, its run's last slot
/// (empty for cycle minima).
pub struct Heads<'a> {
    pub slot: &'a [u64],
    pub next: &'a [u64],
    pub weight: &'a mut [u64],
    pub end: &'a mut [u64],
}

impl Heads<'_> {
    /// Head k's run's last slot (0 for cycle minima).
    fn last(&self, k: usize) -> u64 {
        self.end.get(k).copied().unwrap_or(0)
    }
}

/// What the walks found at this rank's heads.
struct Walk {
    /// Per head: the ruler whose walker reached it, or `RULES`.
    ruler_of: Vec<u64>,
    /// Per head: the steps from its ruler to it (Sum).
    before: Vec<u64>,
    /// Per head: its index among the rulers, where it is one.
    ruler_index: Vec<u32>,
    /// Per ruler: the ruler (global slot) or NIL its segment leads to, the segment's
    /// combined weight and, where it ends a list, the list's last slot.
    next: Vec<u64>,
    weight: Vec<u64>,
    end: Vec<u64>,
    rounds: usize,
}

/// A walker arriving at head `.0`, sent by ruler `.1`, with the combined weight `.2` of the
/// heads from the ruler up to before `.0`. Finished: Quad(ruler, ruler reached or NIL,
/// combined weight, list's last slot).
type Walker = Quad;

/// Walk from every sampled ruler to the next (collective).
fn walk(
    world: &World,
    slots: &Ranges,
    head_of: &(impl Fn(u64) -> usize + Sync),
    heads: &Heads,
    fold: Fold,
) -> Result<Walk> {
    let count = heads.slot.len();
    let is_ruler: Vec<bool> = heads.slot.par_iter().map(|&s| sampled(s)).collect();
    // Each head is reached by one walker at most: the walkers write them from many threads.
    let ruler_of: Vec<AtomicU64> = (0..count).map(|_| AtomicU64::new(RULES)).collect();
    let before: Vec<AtomicU64> = (0..count).map(|_| AtomicU64::new(0)).collect();
    let mut finished: Vec<Quad> = Vec::new();
    let mut moving: Vec<Walker> = Vec::new();
    for k in (0..count).filter(|&k| is_ruler[k]) {
        let w = Quad(heads.next[k], heads.slot[k], heads.weight[k], heads.last(k));
        if w.0 == NIL {
            finished.push(Quad(w.1, NIL, w.2, w.3));
        } else {
            moving.push(w);
        }
    }
    let me = world.rank();
    // On along the heads of this rank, until a ruler, the end (true: the walker finished)
    // or another rank's head (false: it moves on).
    let advance = |mut w: Walker| -> (bool, Quad) {
        loop {
            let k = head_of(w.0);
            if is_ruler[k] {
                return (true, Quad(w.1, w.0, w.2, NIL));
            }
            ruler_of[k].store(w.1, Relaxed);
            before[k].store(w.2, Relaxed);
            let (next, acc) = (heads.next[k], fold.combine(w.2, heads.weight[k]));
            if next == NIL {
                return (true, Quad(w.1, NIL, acc, heads.last(k)));
            }
            w = Quad(next, w.1, acc, 0);
            if slots.owner(next) != me {
                return (false, w);
            }
        }
    };
    let mut rounds = 0;
    while rounds < WALK_ROUNDS && world.allreduce(moving.len() as u64, Op::Sum) > 0 {
        rounds += 1;
        let arrived = world.route(&moving, |w| slots.owner(w.0))?;
        let outcomes: Vec<(bool, Quad)> = arrived.into_par_iter().map(advance).collect();
        moving.clear();
        for (done, q) in outcomes {
            if done {
                finished.push(q);
            } else {
                moving.push(q);
            }
        }
    }
    let ruler_of: Vec<u64> = ruler_of.into_iter().map(AtomicU64::into_inner).collect();
    let before: Vec<u64> = before.into_iter().map(AtomicU64::into_inner).collect();
    // Walkers still on the way stop before their next head, which no walker reached.
    finished.extend(moving.iter().map(|w| Quad(w.1, w.0, w.2, NIL)));
    // The heads no walker reached rule their own one-head segments.
    finished.par_extend(
        (0..count)
            .into_par_iter()
            .filter(|&k| !is_ruler[k] && ruler_of[k] == RULES)
            .map(|k| Quad(heads.slot[k], heads.next[k], heads.weight[k], heads.last(k))),
    );
    let finished = world.route(&finished, |q| slots.owner(q.0))?;
    let mut ruler_index = vec![u32::MAX; count];
    let (mut next, mut weight, mut end) = (Vec::new(), Vec::new(), Vec::new());
    for q in finished {
        ruler_index[head_of(q.0)] = next.len() as u32;
        next.push(q.1);
        weight.push(q.2);
        end.push(q.3);
    }
    Ok(Walk {
        ruler_of,
        before,
        ruler_index,
        next,
        weight,
        end,
        rounds,
    })
}

/// Cycle minima over the heads (collective): every head's weight becomes its cycle's
/// smallest. Returns the rounds of exchange (walk, jumping over rulers, one to spread).
pub fn minima(
    world: &World,
    slots: &Ranges,
    head_of: impl Fn(u64) -> usize + Sync,
    heads: Heads,
) -> Result<usize> {
    let mut walk = walk(world, slots, &head_of, &heads, Fold::Min)?;
    let ruler = |s: u64| walk.ruler_index[head_of(s)] as usize;
    let rounds = jump::plain_minima(world, slots, ruler, walk.next.clone(), &mut walk.weight)?;
    let me = world.rank();
    let got = world.query(
        &walk.ruler_of,
        |s| if s == RULES { me } else { slots.owner(s) },
        |s| if s == RULES { 0 } else { walk.weight[ruler(s)] },
    )?;
    heads.weight.par_iter_mut().enumerate().for_each(|(k, w)| {
        *w = match walk.ruler_index[k] {
            u32::MAX => got[k],
            r => walk.weight[r as usize],
        }
    });
    Ok(walk.rounds + rounds + 1)
}

/// List ranking over the heads (collective): every head's weight becomes its steps to its
/// list's end and `end` that end's slot. False when some list has no end (a cycle).
pub fn ranks(
    world: &World,
    slots: &Ranges,
    head_of: impl Fn(u64) -> usize + Sync,
    heads: Heads,
) -> Result<bool> {
    let mut walk = walk(world, slots, &head_of, &heads, Fold::Sum)?;
    let ruler = |s: u64| walk.ruler_index[head_of(s)] as usize;
    let (next, weight, end) = (walk.next.clone(), &mut walk.weight, &mut walk.end);
    if !jump::plain_ranks(world, slots, ruler, next, weight, end)? {
        return Ok(false);
    }
    let me = world.rank();
    let got = world.query(
        &walk.ruler_of,
        |s| if s == RULES { me } else { slots.owner(s) },
        |s| {
            if s == RULES {
                Pair(0, 0)
            } else {
                Pair(walk.weight[ruler(s)], walk.end[ruler(s)])
            }
        },
    )?;
    heads
        .weight
        .par_iter_mut()
        .zip(heads.end.par_iter_mut())
        .enumerate()
        .for_each(|(k, (w, e))| {
            (*w, *e) = match walk.ruler_index[k] {
                u32::MAX => (got[k].0 - walk.before[k], got[k].1),
                r => (walk.weight[r as usize], walk.end[r as usize]),
            }
        });
    Ok(true)
}
