//! A rank's rows in local form, for workloads that iterate a per-vertex value to a fixed
//! point (components labels today): the edges between two of its own vertices as a CSR of
//! 32-bit local indices, the cut edges (to a vertex another rank owns) as pairs (own vertex,
//! ghost), and the plan that refreshes the ghosts' values from their owners (and that tells
//! them which ghosts a rank reads: `Ghosts::ask_owners`).
//!
//! Ghosts are the distinct remote endpoints of the rank's rows, numbered in global id order,
//! so they come grouped by owner in rank order, which is the receive order of an all-to-all.
//! They are found with a bitmap over all vertices (one bit each, N/8 bytes per rank) rather
//! than by sorting the remote entries: a rank of a 2^26-vertex Kronecker graph holds about
//! 10^9 of them, and marking bits is one pass where a sort is several.

use super::csr::split_at_offsets;
use super::{Block1D, DistGraph, Vid};
use crate::comm::World;
use crate::error::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A rank's rows split into local edges and cut edges, with its ghosts. Split on a GPU
/// (`ghosts_gpu`), the entries and both offsets stay there and the host keeps their counts and
/// the ghosts only: `offsets`, `adj`, `cut_own`, `cut_ghost` and `cut_offsets` are then empty
/// (the labelling reads them on the GPU).
#[derive(Debug, PartialEq)]
pub struct LocalRows {
    /// Own vertices (rows), and cut edges, wherever the rows are.
    pub own: usize,
    pub cuts: usize,
    /// Row offsets of the local edges (one per own vertex, and one more).
    pub offsets: Vec<u64>,
    /// Local edges: the local index of the other endpoint.
    pub adj: Vec<u32>,
    /// Cut edges: the own vertex (local index) ...
    pub cut_own: Vec<u32>,
    /// ... and its ghost (index into `ghosts.ids`), row by row:
    pub cut_ghost: Vec<u32>,
    /// own vertex u's cut edges are those from `cut_offsets[u]` to `cut_offsets[u + 1]`.
    pub cut_offsets: Vec<u64>,
    pub ghosts: Ghosts,
}

/// The remote vertices a rank's rows reach, and who sends their values.
#[derive(Debug, PartialEq)]
pub struct Ghosts {
    /// Global ids, ascending.
    pub ids: Vec<Vid>,
    /// How many of `ids` each rank owns (the receive counts of a refresh).
    pub recv_counts: Vec<usize>,
    /// Local indices of own vertices that other ranks hold as ghosts, grouped by the
    /// asking rank in rank order, each group in the order that rank holds them.
    pub send_local: Vec<u32>,
    /// How many of `send_local` go to each rank.
    pub send_counts: Vec<usize>,
    /// For each of `send_local`, its index among the asking rank's ghosts: a changed value
    /// travels as (target, value), and only changed values travel.
    pub targets: Vec<u32>,
}

/// A local index as the 32 bits the local form stores.
pub(super) fn narrow(i: usize, what: &str) -> Result<u32> {
    u32::try_from(i).map_err(|_| {
        Error::Unavailable(format!(
            "a rank holds more than 2^32 {what}: run on more ranks"
        ))
    })
}

impl LocalRows {
    /// Split this rank's rows (collective: the ghosts' owners learn who asks for what).
    pub fn split(world: &World, g: &DistGraph) -> Result<Self> {
        let part = g.part;
        let local_n = g.local_n();
        narrow(local_n, "vertices")?;
        let (ids, rank_of_ghost) = remote_endpoints(g);
        narrow(ids.len(), "ghost vertices")?;
        let (local_len, cut_len): (Vec<u64>, Vec<u64>) = (0..local_n)
            .into_par_iter()
            .map(|u| {
                let local = g.row(u).iter().filter(|&&v| part.is_local(v)).count() as u64;
                (local, g.degree(u) - local)
            })
            .unzip();
        let offsets = super::csr::row_offsets(&local_len);
        let cut_at = super::csr::row_offsets(&cut_len);
        let mut adj = vec![0u32; offsets[local_n] as usize];
        let mut cut_own = vec![0u32; cut_at[local_n] as usize];
        let mut cut_ghost = vec![0u32; cut_at[local_n] as usize];
        let local_rows = split_at_offsets(&mut adj, &offsets);
        let own_rows = split_at_offsets(&mut cut_own, &cut_at);
        let ghost_rows = split_at_offsets(&mut cut_ghost, &cut_at);
        local_rows
            .into_par_iter()
            .zip(own_rows)
            .zip(ghost_rows)
            .enumerate()
            .for_each(|(u, ((local, own), ghost))| {
                let (mut l, mut c) = (0, 0);
                for &v in g.row(u) {
                    if part.is_local(v) {
                        local[l] = part.local(v) as u32;
                        l += 1;
                    } else {
                        own[c] = u as u32;
                        ghost[c] = rank_of_ghost.index(v) as u32;
                        c += 1;
                    }
                }
            });
        let ghosts = Ghosts::plan(world, &g.part, ids)?;
        Ok(LocalRows {
            own: local_n,
            cuts: cut_at[local_n] as usize,
            offsets,
            adj,
            cut_own,
            cut_ghost,
            cut_offsets: cut_at,
            ghosts,
        })
    }

    pub fn local_n(&self) -> usize {
        self.own
    }

    /// How many cut edges the rows hold (wherever their entries are).
    pub fn cut_count(&self) -> usize {
        self.cuts
    }
}

/// The rank's remote endpoints, ascending, and the bitmap that numbers them.
fn remote_endpoints(g: &DistGraph) -> (Vec<Vid>, Numbering) {
    let words: Vec<AtomicU64> = (0..g.n().div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
    (0..g.local_n()).into_par_iter().for_each(|u| {
        for &v in g.row(u) {
            if !g.part.is_local(v) {
                words[(v / 64) as usize].fetch_or(1 << (v % 64), Relaxed);
            }
        }
    });
    Numbering::of(words.into_iter().map(AtomicU64::into_inner).collect())
}

/// Ghost numbering: a remote vertex's index is the number of marked vertices below it.
pub struct Numbering {
    /// One bit per vertex, set for the remote endpoints.
    pub(super) words: Vec<u64>,
    /// Per word, the bits set in the words before it (and one more: all of them).
    pub(super) before: Vec<u64>,
}

impl Numbering {
    /// The marked vertices of `words` (bit v % 64 of word v / 64 for vertex v), ascending,
    /// and their numbering.
    pub(super) fn of(words: Vec<u64>) -> (Vec<Vid>, Numbering) {
        let counts: Vec<u64> = words.iter().map(|w| u64::from(w.count_ones())).collect();
        let before = super::csr::row_offsets(&counts);
        let mut ids = vec![0 as Vid; before[words.len()] as usize];
        let slots = split_at_offsets(&mut ids, &before);
        slots
            .into_par_iter()
            .zip(words.par_iter())
            .enumerate()
            .for_each(|(w, (slot, &bits))| {
                let mut bits = bits;
                for s in slot.iter_mut() {
                    *s = w as u64 * 64 + u64::from(bits.trailing_zeros());
                    bits &= bits - 1;
                }
            });
        (ids, Numbering { words, before })
    }

    /// The numbering of `ids` (ascending vertex ids below `n`): each id's index among them.
    pub fn of_ids(n: u64, ids: &[Vid]) -> Numbering {
        let mut words = vec![0u64; n.div_ceil(64) as usize];
        for &v in ids {
            words[(v / 64) as usize] |= 1 << (v % 64);
        }
        Numbering::of(words).1
    }

    /// The index of `v`, if marked.
    pub fn get(&self, v: Vid) -> Option<u64> {
        let marked = self.words[(v / 64) as usize] >> (v % 64) & 1 == 1;
        marked.then(|| self.index(v))
    }

    /// The index of marked vertex `v`.
    pub fn index(&self, v: Vid) -> u64 {
        let w = (v / 64) as usize;
        let below = self.words[w] & ((1u64 << (v % 64)) - 1);
        self.before[w] + u64::from(below.count_ones())
    }
}

impl Ghosts {
    /// Tell each owner which of its vertices this rank holds as ghosts, `ids` (ascending
    /// global ids of other ranks' vertices) (collective).
    pub fn plan(world: &World, part: &Block1D, ids: Vec<Vid>) -> Result<Self> {
        let mut recv_counts = vec![0usize; world.size()];
        for &v in &ids {
            recv_counts[part.owner(v)] += 1;
        }
        let (asked, send_counts) = world.alltoallv_counted(&ids, &recv_counts)?;
        let send_local = asked.iter().map(|&v| part.local(v) as u32).collect();
        // Each asking rank's first ghost from this rank: its targets follow on from there.
        let starts: Vec<u64> = crate::comm::run_starts(&recv_counts)
            .into_iter()
            .map(|s| s as u64)
            .collect();
        let first_target = world.alltoallv(&starts, &vec![1; world.size()])?;
        let mut targets = Vec::with_capacity(asked.len());
        for (&count, &first) in send_counts.iter().zip(&first_target) {
            targets.extend((0..count as u64).map(|j| (first + j) as u32));
        }
        Ok(Ghosts {
            ids,
            recv_counts,
            send_local,
            send_counts,
            targets,
        })
    }

    /// The owners' `values` of this rank's ghosts, in ghost order (collective).
    pub fn refresh<T: crate::comm::Equivalence + Copy + Default + Send + Sync>(
        &self,
        world: &World,
        values: &[T],
    ) -> Result<Vec<T>> {
        let send: Vec<T> = self
            .send_local
            .par_iter()
            .map(|&u| values[u as usize])
            .collect();
        world.alltoallv_known(&send, &self.send_counts, &self.recv_counts)
    }
}

/// Bits per mask word of `Ghosts::ask_owners`.
const WORD: usize = 64;

/// How many mask words a run of `count` ghosts takes.
pub fn mask_words(count: usize) -> usize {
    count.div_ceil(WORD)
}

impl Ghosts {
    /// Tell each owner which of its vertices this rank wants the values of (`wanted`: one
    /// flag per ghost), as a bitmask per owner's run, one bit a ghost (collective). Returns,
    /// per entry of `send_local`, whether its asking rank wants it, and the bytes sent.
    pub fn ask_owners(&self, world: &World, wanted: &[bool]) -> Result<(Vec<bool>, u64)> {
        let mut words = Vec::new();
        let mut counts = Vec::with_capacity(self.recv_counts.len());
        let mut at = 0;
        for &count in &self.recv_counts {
            let run = &wanted[at..at + count];
            words.extend(run.chunks(WORD).map(|bits| {
                let set = bits.iter().enumerate().filter(|(_, &b)| b);
                set.fold(0u64, |w, (j, _)| w | 1 << j)
            }));
            counts.push(mask_words(count));
            at += count;
        }
        let received = world.alltoallv(&words, &counts)?;
        let mut wants = Vec::with_capacity(self.send_local.len());
        let mut from = 0;
        for &count in &self.send_counts {
            let run = &received[from..from + mask_words(count)];
            wants.extend((0..count).map(|j| run[j / WORD] >> (j % WORD) & 1 == 1));
            from += mask_words(count);
        }
        Ok((wants, 8 * words.len() as u64))
    }
}
