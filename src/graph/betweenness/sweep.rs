//! Brandes' two sweeps for a batch of sources on the CPU, each vertex pulling in row order,
//! so that no value is ever summed in an order that depends on threads or ranks:
//! forward, level by level, an undiscovered vertex sums σ over its predecessors at the
//! current level; backward, from the deepest level, a vertex's δ is σ(v)·ρ(v), ρ(v) the sum of
//! u(w) over its successors one level deeper (a row longer than `CHUNK` in pieces, their sums
//! added in order), u(w) = 1/σ(w) + ρ(w) = (1 + δ(w))/σ(w) worked out once per vertex and lane
//! and kept in σ's place (read by no one after): no division per arc (see `backward_level`).
//! The lanes of a batch (one per source) share each row
//! read, and a bit mask per vertex and level says which lanes have it at that level, so a
//! neighbour that matters to no lane costs one load (as multi-source BFS, Then et al.,
//! VLDB 2014). On a partitioned graph each level ends with the new values sent to the ranks that
//! hold them as ghosts (`push`): σ forward, u backward, in the level's lanes only (before
//! 2026-12-05 every lane's word went at every level a vertex had any lane: Kronecker SCALE 18,
//! 64 sources, 2 ranks sent 206 MB a rank, now 81 MB). kernels/bc.cu does the same steps.

use super::view::View;
use super::{to_fixed, Carried, CHUNK, MAX_LANES};
use crate::comm::{Op, World};
use crate::error::{Error, Result};
use crate::graph::Vid;
use rayon::prelude::*;
use std::borrow::Cow;
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

/// Per value slot and lane: σ (u = 1/σ + ρ in its place once the backward sweep has been
/// there) and δ, a slot's lanes adjacent (slot·lanes + s); per slot the lanes that reached
/// it. Atomics with relaxed order so that threads read slots that others
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
        push(world, view, lanes, &levels[0], Carried::Sigma)?;
    }
    loop {
        let next = masks(lanes.slots);
        let mut found = forward_level(view, lanes, k, &levels[levels.len() - 1], &next);
        if let Some(world) = world {
            push(world, view, lanes, &next, Carried::Sigma)?;
            found = world.allreduce(found as u8, Op::Max) == 1;
        }
        // The last one is empty: the deepest level's successors (δ = 0 there, u = 1/σ).
        levels.push(next);
        if !found {
            break;
        }
    }
    for at in (0..levels.len() - 1).rev() {
        backward_level(view, lanes, &levels[at], &levels[at + 1]);
        if let (Some(world), true) = (world, at > 0) {
            push(world, view, lanes, &levels[at], Carried::Quotient)?;
        }
    }
    accumulate(view, lanes, k, &levels[0], fixed);
    Ok(levels.len() as u32 - 2)
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

/// Per lane, the sum of a row's terms: `piece` adds the terms of a run of the row's entries
/// into its sums in row order and returns the lanes it added to; a row of more than `CHUNK`
/// entries goes in pieces of `CHUNK` from its start, the pieces' sums added in order (as
/// kernels/bc.cu's `_chunks` kernels and `bc_combine` do). Also the lanes added to.
#[inline]
fn row_sums(row: &[u32], piece: impl Fn(&[u32], &mut [f64; MAX_LANES]) -> u64) -> Sums {
    let mut total = [0f64; MAX_LANES];
    if row.len() <= CHUNK {
        let hit = piece(row, &mut total);
        return (total, hit);
    }
    let mut hit = 0;
    for run in row.chunks(CHUNK) {
        let mut sum = [0f64; MAX_LANES];
        let lanes = piece(run, &mut sum);
        for s in lanes_of(lanes) {
            total[s] += sum[s];
        }
        hit |= lanes;
    }
    (total, hit)
}

/// Per lane a sum, and the lanes with terms.
type Sums = ([f64; MAX_LANES], u64);

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
            let (sum, hit) = row_sums(inc.row(v), |run, sum| {
                let mut hit = 0u64;
                for &w in run {
                    let m = current[w as usize].load(Relaxed) & open;
                    hit |= m;
                    for s in lanes_of(m) {
                        sum[s] += lanes.sigma(w as usize * b + s);
                    }
                }
                hit
            });
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
/// deeper (`deeper`): ρ, the sum of their u = 1/σ + ρ (in σ's place), in row order
/// (`row_sums`' pieces), each piece summed with its rounding errors carried (`two_sum`) and
/// added back at its end; then δ = σ·ρ and the vertex's own u in its σ's place.
/// Why this form: Brandes' σ(v)/σ(w)·(1 + δ(w)) costs a division per arc and lane (the GPU's
/// backward sweep was bound by it); ρ needs only an add, and with the errors carried it is
/// as accurate: the SSCA#2 torus closed forms come out exact at SCALE 4-11 (a sum of
/// σ(v)/q(w), q = σ/(1 + δ), missed SCALE 11 by an ulp; ρ summed plainly missed SCALE 10).
fn backward_level(view: &View, lanes: &Lanes, here: &Masks, deeper: &Masks) {
    let b = lanes.lanes;
    (0..view.local_n).into_par_iter().for_each(|v| {
        let mine = here[v].load(Relaxed);
        if mine == 0 {
            return;
        }
        let (rho, _) = row_sums(view.out.row(v), |run, sum| {
            let mut carried = [0f64; MAX_LANES];
            let mut hit = 0u64;
            for &w in run {
                let w = w as usize;
                let m = deeper[w].load(Relaxed) & mine;
                hit |= m;
                for s in lanes_of(m) {
                    let (total, error) = two_sum(sum[s], lanes.sigma(w * b + s));
                    sum[s] = total;
                    carried[s] += error;
                }
            }
            for s in lanes_of(hit) {
                sum[s] += carried[s];
            }
            hit
        });
        for s in lanes_of(mine) {
            let sigma = lanes.sigma(v * b + s);
            let u = 1.0 / sigma + rho[s];
            lanes.delta[v * b + s].store((sigma * rho[s]).to_bits(), Relaxed);
            lanes.sigma[v * b + s].store(u.to_bits(), Relaxed);
        }
    });
}

/// a + b and its rounding error, exactly: a + b = total + error (Knuth's TwoSum, any order
/// of magnitudes), as kernels/bc.cu `two_sum`.
#[inline]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let total = a + b;
    let b_part = total - a;
    let a_part = total - b_part;
    (total, (a - a_part) + (b - b_part))
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

/// Send σ's place in the lanes of `level` (a level's masks) of each own vertex that another
/// rank holds as a ghost, and store what arrives at the ghosts' slots (collective): σ forward,
/// u = 1/σ + ρ backward once the sweep has been there. To each rank that gets anything: for
/// `Carried::Sigma`, one mask word per ghost of the plan in its order (the ghosts' masks are
/// set from them), then the set lanes' words, ghost after ghost, lane after lane; for
/// `Carried::Quotient`, the words alone. A lane not at the level costs nothing, so a boundary
/// vertex's σ and u each travel once per lane over the whole batch, besides one mask word per
/// level forward.
fn push(world: &World, view: &View, lanes: &Lanes, level: &Masks, carried: Carried) -> Result<()> {
    let plan = view.ghosts.as_ref().expect("a partitioned view");
    let b = lanes.lanes;
    let mut send = Vec::new();
    let mut counts = Vec::with_capacity(world.size());
    let mut at = 0;
    for &count in &plan.send_counts {
        let group = &plan.send_local[at..at + count];
        at += count;
        let own: Vec<u64> = group
            .par_iter()
            .map(|&v| level[v as usize].load(Relaxed))
            .collect();
        let words: Vec<u64> = group
            .par_iter()
            .zip(&own)
            .flat_map_iter(|(&v, &mask)| {
                lanes_of(mask).map(move |s| lanes.sigma[v as usize * b + s].load(Relaxed))
            })
            .collect();
        let before = send.len();
        if !words.is_empty() {
            if carried == Carried::Sigma {
                send.extend(own);
            }
            send.extend(words);
        }
        counts.push(send.len() - before);
    }
    let (recv, from) = world.alltoallv_counted(&send, &counts)?;
    let mut at = 0;
    let mut first_ghost = view.local_n;
    for (&words, &ghosts) in from.iter().zip(&plan.recv_counts) {
        let run = &recv[at..at + words];
        let slots = first_ghost..first_ghost + ghosts;
        (at, first_ghost) = (at + words, first_ghost + ghosts);
        if words == 0 {
            continue;
        }
        let (masks_of, values): (Cow<[u64]>, _) = match carried {
            Carried::Sigma => {
                let (sent, values) = run.split_at(ghosts.min(words));
                (sent.into(), values)
            }
            Carried::Quotient => {
                let held = slots.clone().map(|g| level[g].load(Relaxed)).collect();
                (Cow::Owned(held), run)
            }
        };
        // Where each ghost's words start: the set lanes before it.
        let mut starts = Vec::with_capacity(ghosts);
        let mut total = 0;
        for m in masks_of.iter() {
            starts.push(total);
            total += m.count_ones() as usize;
        }
        if masks_of.len() != ghosts || total != values.len() {
            return Err(Error::Comm(format!(
                "betweenness: a rank sent {words} words for {ghosts} ghosts, not the \
                 {total} values their lanes need"
            )));
        }
        slots
            .into_par_iter()
            .zip(masks_of.par_iter())
            .zip(&starts)
            .for_each(|((slot, &mask), &start)| {
                for (i, s) in lanes_of(mask).enumerate() {
                    lanes.sigma[slot * b + s].store(values[start + i], Relaxed);
                }
                if carried == Carried::Sigma {
                    level[slot].fetch_or(mask, Relaxed);
                }
            });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lane 0 takes 1/(w+1) of every entry w, lane 1 of the even ones; the sums as `row_sums`
    /// must make them: in row order within pieces of `CHUNK` from the row's start, the pieces'
    /// sums added in order.
    #[test]
    fn a_long_row_is_summed_in_pieces_and_a_short_one_in_row_order() {
        let piece = |run: &[u32], sum: &mut [f64; MAX_LANES]| {
            let mut hit = 0;
            for &w in run {
                sum[0] += 1.0 / (w as f64 + 1.0);
                hit |= 1;
                if w % 2 == 0 {
                    sum[1] += 1.0 / (w as f64 + 1.0);
                    hit |= 2;
                }
            }
            hit
        };
        for len in [5, CHUNK, 3 * CHUNK + 1] {
            let row: Vec<u32> = (0..len as u32).collect();
            let (sum, hit) = row_sums(&row, piece);
            let mut want = [0f64; 2];
            for run in row.chunks(CHUNK) {
                let mut part = [0f64; 2];
                for &w in run {
                    part[0] += 1.0 / (w as f64 + 1.0);
                    if w % 2 == 0 {
                        part[1] += 1.0 / (w as f64 + 1.0);
                    }
                }
                want[0] += part[0];
                want[1] += part[1];
            }
            assert_eq!(hit, 3);
            assert_eq!(sum[0].to_bits(), want[0].to_bits(), "{len} entries, lane 0");
            assert_eq!(sum[1].to_bits(), want[1].to_bits(), "{len} entries, lane 1");
            assert!(sum[2..].iter().all(|&s| s == 0.0));
        }
        // The pieces change the bits (so the test can tell): the harmonic sum over 3 CHUNK + 1
        // entries differs from its plain row-order sum.
        let row: Vec<u32> = (0..3 * CHUNK as u32 + 1).collect();
        let plain: f64 = row.iter().map(|&w| 1.0 / (w as f64 + 1.0)).sum();
        assert_ne!(row_sums(&row, piece).0[0].to_bits(), plain.to_bits());
    }
}
