//! Brandes' two sweeps for a batch of sources on the CPU, each vertex pulling in row order,
//! so that no value is ever summed in an order that depends on threads or ranks:
//! forward, level by level, an undiscovered vertex sums σ over its predecessors at the
//! current level; backward, from the deepest level, a vertex sums σ(v)/σ(w)·(1 + δ(w)) over
//! its successors one level deeper. The lanes of a batch (one per source) share each row
//! read. On a partitioned graph each level ends with the new values sent to the ranks that
//! hold them as ghosts (`push`): σ forward, δ backward. kernels/bc.cu does the same steps.

use super::view::View;
use super::{to_fixed, MAX_LANES};
use crate::comm::{Op, World};
use crate::error::Result;
use crate::graph::Vid;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// Distance of a vertex not reached (yet).
pub const UNREACHED: u32 = u32::MAX;

/// Per value slot and lane: distance, σ and δ. A slot's lanes are adjacent (slot·lanes + s).
/// Atomics with relaxed order so that threads read slots that others write; a level writes
/// only lanes that no thread of that level reads.
pub struct Lanes {
    lanes: usize,
    dist: Vec<AtomicU32>,
    sigma: Vec<AtomicU64>,
    delta: Vec<AtomicU64>,
}

impl Lanes {
    pub fn new(slots: usize, lanes: usize) -> Lanes {
        let len = slots * lanes;
        Lanes {
            lanes,
            dist: (0..len).map(|_| AtomicU32::new(UNREACHED)).collect(),
            sigma: (0..len).map(|_| AtomicU64::new(0)).collect(),
            delta: (0..len).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn reset(&self) {
        self.dist
            .par_iter()
            .for_each(|d| d.store(UNREACHED, Relaxed));
        self.sigma.par_iter().for_each(|s| s.store(0, Relaxed));
        self.delta.par_iter().for_each(|d| d.store(0, Relaxed));
    }

    #[inline]
    fn dist(&self, i: usize) -> u32 {
        self.dist[i].load(Relaxed)
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
    for (s, &src) in sources.iter().enumerate() {
        if let Some(v) = own(view, src) {
            lanes.dist[v * b + s].store(0, Relaxed);
            lanes.sigma[v * b + s].store(1f64.to_bits(), Relaxed);
        }
    }
    let mut level = 0;
    if let Some(world) = world {
        push_sigma(world, view, lanes, k, 0)?;
    }
    loop {
        let mut found = forward_level(view, lanes, k, level);
        if let Some(world) = world {
            push_sigma(world, view, lanes, k, level + 1)?;
            found = world.allreduce(found as u8, Op::Max) == 1;
        }
        if !found {
            break;
        }
        level += 1;
    }
    for at in (0..level).rev() {
        backward_level(view, lanes, k, at);
        if let (Some(world), true) = (world, at > 0) {
            push_delta(world, view, lanes, k, at)?;
        }
    }
    accumulate(view, lanes, k, fixed);
    Ok(level)
}

fn own(view: &View, v: Vid) -> Option<usize> {
    let l = v.wrapping_sub(view.first);
    (l < view.local_n as u64).then_some(l as usize)
}

/// Level `level` + 1: each own vertex, in each lane where it is unreached, sums σ over its
/// predecessors at `level`. True when any lane of any own vertex was reached.
fn forward_level(view: &View, lanes: &Lanes, k: usize, level: u32) -> bool {
    let b = lanes.lanes;
    let inc = view.inc();
    (0..view.local_n)
        .into_par_iter()
        .map(|v| {
            let mut open = [false; MAX_LANES];
            let mut any = false;
            for s in 0..k {
                open[s] = lanes.dist(v * b + s) == UNREACHED;
                any |= open[s];
            }
            if !any {
                return false;
            }
            let mut sum = [0f64; MAX_LANES];
            for &w in inc.row(v) {
                let w = w as usize * b;
                for s in 0..k {
                    if open[s] && lanes.dist(w + s) == level {
                        sum[s] += lanes.sigma(w + s);
                    }
                }
            }
            let mut found = false;
            for s in 0..k {
                if open[s] && sum[s] > 0.0 {
                    lanes.dist[v * b + s].store(level + 1, Relaxed);
                    lanes.sigma[v * b + s].store(sum[s].to_bits(), Relaxed);
                    found = true;
                }
            }
            found
        })
        .reduce(|| false, |a, b| a || b)
}

/// δ of each own vertex at `level`, in its lanes at that level, from its successors one
/// level deeper: the sum of σ(v)/σ(w)·(1 + δ(w)) in row order.
fn backward_level(view: &View, lanes: &Lanes, k: usize, level: u32) {
    let b = lanes.lanes;
    (0..view.local_n).into_par_iter().for_each(|v| {
        let mut here = [false; MAX_LANES];
        let mut any = false;
        for s in 0..k {
            here[s] = lanes.dist(v * b + s) == level;
            any |= here[s];
        }
        if !any {
            return;
        }
        let mut sum = [0f64; MAX_LANES];
        for &w in view.out.row(v) {
            let w = w as usize * b;
            for s in 0..k {
                if here[s] && lanes.dist(w + s) == level + 1 {
                    let ratio = lanes.sigma(v * b + s) / lanes.sigma(w + s);
                    sum[s] += ratio * (1.0 + lanes.delta(w + s));
                }
            }
        }
        for s in 0..k {
            if here[s] {
                lanes.delta[v * b + s].store(sum[s].to_bits(), Relaxed);
            }
        }
    });
}

/// Each own vertex's δ over the lanes where it is reached and not the source, added in
/// fixed point.
fn accumulate(view: &View, lanes: &Lanes, k: usize, fixed: &mut [u128]) {
    let b = lanes.lanes;
    fixed[..view.local_n]
        .par_iter_mut()
        .enumerate()
        .for_each(|(v, sum)| {
            for s in 0..k {
                let d = lanes.dist(v * b + s);
                if d != UNREACHED && d > 0 {
                    *sum += to_fixed(lanes.delta(v * b + s));
                }
            }
        });
}

/// σ of the own vertices newly at `level`, to the ranks holding them as ghosts, where
/// each lane not at that level reads 0 (collective).
fn push_sigma(world: &World, view: &View, lanes: &Lanes, k: usize, level: u32) -> Result<()> {
    let b = lanes.lanes;
    push(
        world,
        view,
        k,
        |v| (0..k).any(|s| lanes.dist(v * b + s) == level),
        |v, s| match lanes.dist(v * b + s) == level {
            true => lanes.sigma[v * b + s].load(Relaxed),
            false => 0,
        },
        |slot, s, word| {
            if word != 0 {
                lanes.dist[slot * b + s].store(level, Relaxed);
                lanes.sigma[slot * b + s].store(word, Relaxed);
            }
        },
    )
}

/// δ of the own vertices at `level` (every lane: a δ sent is final or still 0), to the
/// ranks holding them as ghosts (collective).
fn push_delta(world: &World, view: &View, lanes: &Lanes, k: usize, level: u32) -> Result<()> {
    let b = lanes.lanes;
    push(
        world,
        view,
        k,
        |v| (0..k).any(|s| lanes.dist(v * b + s) == level),
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
