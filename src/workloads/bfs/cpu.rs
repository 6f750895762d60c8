//! The CPU side of the BFS (`search::Frontiers`): rayon over the rank's rows, MPI between ranks.

use super::search::{Frontiers, LevelClock};
use crate::comm::{bucket_by_rank, Pair, World};
use crate::error::Result;
use crate::graph::{DistGraph, Vid};
use rayon::prelude::*;
use std::sync::atomic::{AtomicI64, Ordering};

/// A rank's part of a frontier.
pub(super) enum Frontier {
    /// Local ids of the frontier vertices.
    Queue(Vec<u32>),
    /// One bit per local vertex, `words_per_rank` words.
    Bits(Vec<u64>),
}

/// The level at which a search reached each own vertex (-1: not reached), recorded as each
/// frontier becomes current: the witness the depth validator checks (validate_depths.rs).
pub(super) struct Depths {
    pub depth: Vec<i32>,
    level: i32,
}

impl Depths {
    pub fn new(local_n: usize) -> Self {
        Depths {
            depth: vec![-1; local_n],
            level: 0,
        }
    }

    /// A new search: only `root_local` (if the root is own) at depth 0.
    pub fn start(&mut self, root_local: Option<usize>) {
        self.depth.par_iter_mut().for_each(|d| *d = -1);
        self.level = 0;
        if let Some(l) = root_local {
            self.depth[l] = 0;
        }
    }

    /// `frontier` has just become current: one level deeper than the last.
    pub fn advance(&mut self, frontier: &Frontier) {
        self.level += 1;
        let level = self.level;
        match frontier {
            Frontier::Queue(q) => q.iter().for_each(|&l| self.depth[l as usize] = level),
            Frontier::Bits(bits) => self
                .depth
                .par_chunks_mut(64)
                .zip(bits.par_iter())
                .for_each(|(d, &word)| set_bits(word).for_each(|i| d[i] = level)),
        }
    }
}

pub struct CpuFrontiers<'g> {
    world: &'g World,
    g: &'g DistGraph,
    parent: Vec<i64>,
    depths: Depths,
    current: Frontier,
    next: Frontier,
}

impl<'g> CpuFrontiers<'g> {
    pub fn new(world: &'g World, g: &'g DistGraph) -> Self {
        CpuFrontiers {
            world,
            g,
            parent: vec![-1; g.local_n()],
            depths: Depths::new(g.local_n()),
            current: Frontier::Queue(Vec::new()),
            next: Frontier::Queue(Vec::new()),
        }
    }

    fn take_current(&mut self) -> Frontier {
        std::mem::replace(&mut self.current, Frontier::Queue(Vec::new()))
    }

    /// Scan the frontier's rows: claim local neighbours into the next frontier; return the
    /// (vertex, parent) pairs for other ranks and the entries read.
    fn scan_frontier(&mut self) -> (Vec<Pair>, u64) {
        let queue = into_queue(self.take_current());
        let (g, part) = (self.g, self.g.part);
        let parent = as_atomic(&mut self.parent);
        // Per-thread pieces: newly claimed local vertices, and (vertex, parent) pairs for others.
        let pieces: Vec<(Vec<u32>, Vec<Pair>)> = queue
            .par_iter()
            .fold(
                || (Vec::new(), Vec::new()),
                |(mut next, mut remote), &u| {
                    let ug = part.global(u as usize);
                    for &v in g.row(u as usize) {
                        if !part.is_local(v) {
                            remote.push(Pair(v, ug));
                        } else if claim(parent, part.local(v), ug) {
                            next.push(part.local(v) as u32);
                        }
                    }
                    (next, remote)
                },
            )
            .collect();
        let inspected = queue.iter().map(|&u| g.degree(u as usize)).sum();
        let mut next = Vec::new();
        let mut remote = Vec::new();
        for (n, r) in pieces {
            next.extend_from_slice(&n);
            remote.extend_from_slice(&r);
        }
        self.next = Frontier::Queue(next);
        (remote, inspected)
    }

    /// Claim the vertices other ranks discovered (pairs of local vertex, parent).
    fn claim_received(&mut self, received: &[Pair]) {
        let part = self.g.part;
        let parent = as_atomic(&mut self.parent);
        let claimed: Vec<u32> = received
            .par_iter()
            .filter(|&&Pair(v, p)| claim(parent, part.local(v), p))
            .map(|&Pair(v, _)| part.local(v) as u32)
            .collect();
        if let Frontier::Queue(next) = &mut self.next {
            next.extend_from_slice(&claimed);
        }
    }

    /// Bottom-up scan of the unvisited local vertices against the global frontier bitmap;
    /// returns the entries read.
    fn scan_unvisited(&mut self, global: &[u64]) -> u64 {
        let g = self.g;
        let mut next = vec![0u64; g.part.words_per_rank()];
        let inspected = self
            .parent
            .par_chunks_mut(64)
            .zip(next.par_iter_mut())
            .enumerate()
            .map(|(w, (parents, next_word))| {
                let mut inspected = 0u64;
                for (i, p) in parents.iter_mut().enumerate() {
                    if *p >= 0 {
                        continue;
                    }
                    for &v in g.row(w * 64 + i) {
                        inspected += 1;
                        if global[(v / 64) as usize] >> (v % 64) & 1 == 1 {
                            *p = v as i64;
                            *next_word |= 1 << i;
                            break;
                        }
                    }
                }
                inspected
            })
            .sum();
        self.next = Frontier::Bits(next);
        inspected
    }
}

impl Frontiers for CpuFrontiers<'_> {
    fn start(&mut self, root: Vid) -> Result<u64> {
        let part = self.g.part;
        self.parent.par_iter_mut().for_each(|p| *p = -1);
        self.current = Frontier::Queue(Vec::new());
        self.next = Frontier::Queue(Vec::new());
        let root_local = part.is_local(root).then(|| part.local(root));
        self.depths.start(root_local);
        let Some(l) = root_local else {
            return Ok(0);
        };
        self.parent[l] = root as i64;
        self.current = Frontier::Queue(vec![l as u32]);
        Ok(self.g.degree(l))
    }

    fn top_down(&mut self, clock: &mut LevelClock) -> Result<u64> {
        let (remote, inspected) = clock.local(|| self.scan_frontier());
        let world = self.world;
        if world.size() == 1 {
            return Ok(inspected);
        }
        let part = self.g.part;
        let (send, counts) =
            clock.local(|| bucket_by_rank(world.size(), &remote, |p| part.owner(p.0)));
        drop(remote);
        // Only other ranks' vertices are in `send`: own ones were claimed in the scan.
        clock.bytes_sent += size_of_val(&send[..]) as u64;
        let received = clock.exchange(|| world.alltoallv(&send, &counts))?;
        clock.bytes_received += size_of_val(&received[..]) as u64;
        drop(send);
        clock.local(|| self.claim_received(&received));
        Ok(inspected)
    }

    fn bottom_up(&mut self, clock: &mut LevelClock) -> Result<u64> {
        let world = self.world;
        let words = self.g.part.words_per_rank();
        let own = clock.local(|| into_bits(self.take_current(), words));
        let gathered;
        let global = if world.size() == 1 {
            &own
        } else {
            clock.bytes_sent += (8 * words * (world.size() - 1)) as u64;
            clock.bytes_received += (8 * words * (world.size() - 1)) as u64;
            gathered = clock.exchange(|| {
                let mut all = vec![0u64; words * world.size()];
                world.allgather_into(&own, &mut all);
                all
            });
            &gathered
        };
        Ok(clock.local(|| self.scan_unvisited(global)))
    }

    fn advance(&mut self) -> Result<(u64, u64)> {
        self.current = std::mem::replace(&mut self.next, Frontier::Queue(Vec::new()));
        self.depths.advance(&self.current);
        Ok(frontier_size(self.g, &self.current))
    }

    fn parents(&mut self, out: &mut [i64]) -> Result<()> {
        out.copy_from_slice(&self.parent);
        Ok(())
    }

    fn depths(&mut self, out: &mut [i32]) -> Result<()> {
        out.copy_from_slice(&self.depths.depth);
        Ok(())
    }

    fn set_parent(&mut self, l: usize, p: i64) -> Result<()> {
        self.parent[l] = p;
        Ok(())
    }

    fn transport(&self) -> &'static str {
        if self.world.size() == 1 {
            "none"
        } else {
            "mpi"
        }
    }
}

/// View a parent array as atomics so several threads can claim vertices with compare-and-swap.
pub(super) fn as_atomic(parent: &mut [i64]) -> &[AtomicI64] {
    // SAFETY: AtomicI64 has the size and alignment of i64, and the exclusive borrow guarantees
    // no non-atomic access overlaps the atomic view's lifetime.
    unsafe { &*(parent as *mut [i64] as *const [AtomicI64]) }
}

pub(super) fn claim(parent: &[AtomicI64], l: usize, p: Vid) -> bool {
    parent[l].load(Ordering::Relaxed) < 0
        && parent[l]
            .compare_exchange(-1, p as i64, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
}

pub(super) fn into_queue(frontier: Frontier) -> Vec<u32> {
    match frontier {
        Frontier::Queue(q) => q,
        Frontier::Bits(bits) => bits
            .par_iter()
            .enumerate()
            .flat_map_iter(|(w, &word)| set_bits(word).map(move |i| (w * 64 + i) as u32))
            .collect(),
    }
}

pub(super) fn into_bits(frontier: Frontier, words: usize) -> Vec<u64> {
    match frontier {
        Frontier::Bits(bits) => bits,
        Frontier::Queue(q) => {
            let mut bits = vec![0u64; words];
            for l in q {
                bits[l as usize / 64] |= 1 << (l % 64);
            }
            bits
        }
    }
}

pub(super) fn set_bits(mut word: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (word != 0).then(|| {
            let i = word.trailing_zeros() as usize;
            word &= word - 1;
            i
        })
    })
}

/// Vertices and edges (sum of degrees) of this rank's part of a frontier.
pub(super) fn frontier_size(g: &DistGraph, frontier: &Frontier) -> (u64, u64) {
    match frontier {
        Frontier::Queue(q) => (
            q.len() as u64,
            q.par_iter().map(|&l| g.degree(l as usize)).sum(),
        ),
        Frontier::Bits(bits) => bits
            .par_iter()
            .enumerate()
            .map(|(w, &word)| {
                set_bits(word).fold((0, 0), |(n, m), i| (n + 1, m + g.degree(w * 64 + i)))
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1)),
    }
}
