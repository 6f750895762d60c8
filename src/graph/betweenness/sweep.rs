//! Brandes' two sweeps for a batch of sources on the CPU, each vertex pulling in row order,
//! so that no value is ever summed in an order that depends on threads or ranks:
//! forward, level by level, an undiscovered vertex sums σ over its predecessors at the
//! current level; backward, from the deepest level, a vertex sums σ(v)/σ(w)·(1 + δ(w)) over
//! its successors one level deeper. The lanes of a batch (one per source) share each row
//! read, and a bit mask per vertex and level says which lanes have it at that level, so a
//! neighbour that matters to no lane costs one load (as multi-source BFS, Then et al.,
//! VLDB 2014). On a partitioned graph each level ends with the new values sent to the ranks that
//! hold them as ghosts (`push`): σ forward, δ backward. kernels/bc.cu does the same steps.

use super::view::View;
use super::{to_fixed, MAX_LANES};
use crate::comm::{Op, World};
use crate::error::Result;
use crate::graph::Vid;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Lane masks of every value slot: bit s set where lane s has the vertex (at a level).
type Masks = Vec<AtomicU64>;

fn masks(slots: usize) -> Masks {
    (0..slots).map(|_| AtomicU64::new(0)).collect()
}

/// The lanes set in `mask`, lowest first.
#[inline]
fn lanes_of(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let s = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            s
        })
    })
}

/// Per value slot and lane: σ and δ, a slot's lanes adjacent (slot·lanes + s); per slot the
/// lanes that reached it. Atomics with relaxed order so that threads read slots that others
/// write; a level writes only lanes that no thread of that level reads.
pub struct Lanes {
    lanes: usize,
    slots: usize,
    sigma: Vec<AtomicU64>,
    delta: Vec<AtomicU64>,
    reached: Masks,
}

impl Lanes {
    pub fn new(slots: usize, lanes: usize) -> Lanes {
        let len = slots * lanes;
        Lanes {
            lanes,
            slots,
            sigma: (0..len).map(|_| AtomicU64::new(0)).collect(),
            delta: (0..len).map(|_| AtomicU64::new(0)).collect(),
            reached: masks(slots),
        }
    }

    fn reset(&self) {
        self.sigma.par_iter().for_each(|s| s.store(0, Relaxed));
        self.delta.par_iter().for_each(|d| d.store(0, Relaxed));
        self.reached.par_iter().for_each(|m| m.store(0, Relaxed));
    }

    #[inline]
    fn sigma(&self, i: usize) -> f64 {
        f64::from_bits(self.sigma[i].load(Relaxed))
    }
    #[inline]
    fn delta(&self, i: usize) -> f64 {
        f64::from_bits(self.delta[i].load(Relaxed))
    }
}

/// One batch's sweeps and its dependencies added to `fixed` (one sum per own vertex);
/// `sources.len()` ≤ the lanes. With `world`, the view is one rank's part of a partitioned
/// graph and every rank runs the same batch (collective); without, the view is the whole
/// graph. Returns the deepest level reached.
pub fn run_batch(
    view: &View,
    lanes: &Lanes,
    sources: &[Vid],
    world: Option<&World>,
    fixed: &mut [u128],
) -> Result<u32> {
    let k = sources.len();
    let b = lanes.lanes;
    lanes.reset();
    // levels[d]: per slot, the lanes that have it at level d.
    let mut levels = vec![masks(lanes.slots)];
    for (s, &src) in sources.iter().enumerate() {
        if let Some(v) = own(view, src) {
            lanes.sigma[v * b + s].store(1f64.to_bits(), Relaxed);
            levels[0][v].fetch_or(1 << s, Relaxed);
            lanes.reached[v].fetch_or(1 << s, Relaxed);
        }
    }
    if let Some(world) = world {
        push_sigma(world, view, lanes, k, &levels[0])?;
    }
    loop {
        let next = masks(lanes.slots);
        let mut found = forward_level(view, lanes, k, &levels[levels.len() - 1], &next);
        if let Some(world) = world {
            push_sigma(world, view, lanes, k, &next)?;
            found = world.allreduce(found as u8, Op::Max) == 1;
        }
        if !found {
            break;
        }
        levels.push(next);
    }
    for at in (0..levels.len() - 1).rev() {
        backward_level(view, lanes, &levels[at], &levels[at + 1]);
        if let (Some(world), true) = (world, at > 0) {
            push_delta(world, view, lanes, k, &levels[at])?;
        }
    }
    accumulate(view, lanes, k, &levels[0], fixed);
    Ok(levels.len() as u32 - 1)
}

fn own(view: &View, v: Vid) -> Option<usize> {
    let l = v.wrapping_sub(view.first);
    (l < view.local_n as u64).then_some(l as usize)
}

/// The mask of lanes 0..k.
fn first_lanes(k: usize) -> u64 {
    if k >= 64 {
        u64::MAX
    } else {
        (1 << k) - 1
    }
}

/// The next level (`next`): each own vertex, in each lane where it is unreached, sums σ over
/// its predecessors at the current level (`current`). True when any lane reached any.
fn forward_level(view: &View, lanes: &Lanes, k: usize, current: &Masks, next: &Masks) -> bool {
    let b = lanes.lanes;
    let inc = view.inc();
    let all = first_lanes(k);
    (0..view.local_n)
        .into_par_iter()
        .map(|v| {
            let open = !lanes.reached[v].load(Relaxed) & all;
            if open == 0 {
                return false;
            }
            let mut sum = [0f64; MAX_LANES];
            let mut hit = 0u64;
            for &w in inc.row(v) {
                let m = current[w as usize].load(Relaxed) & open;
                hit |= m;
                for s in lanes_of(m) {
                    sum[s] += lanes.sigma(w as usize * b + s);
                }
            }
            for s in lanes_of(hit) {
                lanes.sigma[v * b + s].store(sum[s].to_bits(), Relaxed);
            }
            next[v].store(hit, Relaxed);
            lanes.reached[v].fetch_or(hit, Relaxed);
            hit != 0
        })
        .reduce(|| false, |a, b| a || b)
}

/// δ of each own vertex in its lanes at this level (`here`), from its successors one level
/// deeper (`deeper`): the sum of σ(v)/σ(w)·(1 + δ(w)) in row order.
fn backward_level(view: &View, lanes: &Lanes, here: &Masks, deeper: &Masks) {
    let b = lanes.lanes;
    (0..view.local_n).into_par_iter().for_each(|v| {
        let mine = here[v].load(Relaxed);
        if mine == 0 {
            return;
        }
        let mut sum = [0f64; MAX_LANES];
        for &w in view.out.row(v) {
            let w = w as usize;
            for s in lanes_of(deeper[w].load(Relaxed) & mine) {
                let ratio = lanes.sigma(v * b + s) / lanes.sigma(w * b + s);
                sum[s] += ratio * (1.0 + lanes.delta(w * b + s));
            }
        }
        for s in lanes_of(mine) {
            lanes.delta[v * b + s].store(sum[s].to_bits(), Relaxed);
        }
    });
}

/// Each own vertex's δ over the lanes where it is reached and not the source (`sources`:
/// level 0), added in fixed point.
fn accumulate(view: &View, lanes: &Lanes, k: usize, sources: &Masks, fixed: &mut [u128]) {
    let b = lanes.lanes;
    let all = first_lanes(k);
    fixed[..view.local_n]
        .par_iter_mut()
        .enumerate()
        .for_each(|(v, sum)| {
            let counted = lanes.reached[v].load(Relaxed) & !sources[v].load(Relaxed) & all;
            for s in lanes_of(counted) {
                *sum += to_fixed(lanes.delta(v * b + s));
            }
        });
}

/// σ of the own vertices in `level` (a level's masks), to the ranks holding them as
/// ghosts, where each lane not at that level reads 0; the ghosts' masks set (collective).
fn push_sigma(world: &World, view: &View, lanes: &Lanes, k: usize, level: &Masks) -> Result<()> {
    let b = lanes.lanes;
    push(
        world,
        view,
        k,
        |v| level[v].load(Relaxed) != 0,
        |v, s| match level[v].load(Relaxed) >> s & 1 {
            1 => lanes.sigma[v * b + s].load(Relaxed),
            _ => 0,
        },
        |slot, s, word| {
            if word != 0 {
                lanes.sigma[slot * b + s].store(word, Relaxed);
                level[slot].fetch_or(1 << s, Relaxed);
            }
        },
    )
}

/// δ of the own vertices in `level` (every lane: a δ sent is final or still 0), to the
/// ranks holding them as ghosts (collective).
fn push_delta(world: &World, view: &View, lanes: &Lanes, k: usize, level: &Masks) -> Result<()> {
    let b = lanes.lanes;
    push(
        world,
        view,
        k,
        |v| level[v].load(Relaxed) != 0,
        |v, s| lanes.delta[v * b + s].load(Relaxed),
        |slot, s, word| lanes.delta[slot * b + s].store(word, Relaxed),
    )
}

/// Send, for each own vertex another rank holds as a ghost and `pick` selects, its index in
/// that rank's request and one word per lane (`word`); store what arrives at the ghosts'
/// slots (`store`). Collective.
fn push(
    world: &World,
    view: &View,
    k: usize,
    pick: impl Fn(usize) -> bool + Sync,
    word: impl Fn(usize, usize) -> u64 + Sync + Send,
    store: impl Fn(usize, usize, u64) + Sync,
) -> Result<()> {
    let plan = view.ghosts.as_ref().expect("a partitioned view");
    let record = 1 + k;
    let mut send = Vec::new();
    let mut counts = Vec::with_capacity(world.size());
    let mut at = 0;
    for &count in &plan.send_counts {
        let group = &plan.send_local[at..at + count];
        at += count;
        let words: Vec<u64> = group
            .par_iter()
            .enumerate()
            .filter(|(_, &v)| pick(v as usize))
            .flat_map_iter(|(i, &v)| {
                let word = &word;
                std::iter::once(i as u64).chain((0..k).map(move |s| word(v as usize, s)))
            })
            .collect();
        counts.push(words.len());
        send.extend(words);
    }
    let (recv, from) = world.alltoallv_counted(&send, &counts)?;
    let mut at = 0;
    let mut first_ghost = view.local_n;
    for (&words, &ghosts) in from.iter().zip(&plan.recv_counts) {
        recv[at..at + words].par_chunks(record).for_each(|r| {
            let slot = first_ghost + r[0] as usize;
            for s in 0..k {
                store(slot, s, r[1 + s]);
            }
        });
        at += words;
        first_ghost += ghosts;
    }
    Ok(())
}
