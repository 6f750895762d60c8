//! Kernel 2: direction-optimising BFS on the 1D-partitioned CSR (CPU path, rayon inside a rank).
//!
//! Beamer, Asanović & Patterson, "Direction-Optimizing Breadth-First Search" (SC 2012), in the
//! distributed form of the Graph500 1D codes:
//! - top-down level: each rank scans the rows of its frontier vertices; neighbours it owns are
//!   claimed with a compare-and-swap on `parent`, the others travel as (vertex, parent) pairs to
//!   their owners in one alltoallv (sparse queue exchange);
//! - bottom-up level: the ranks' frontier bitmaps are allgathered into one N-bit map; each rank
//!   scans the rows of its unvisited vertices and stops at the first neighbour in the frontier.
//!   No exchange follows: a vertex only ever writes its own parent.
//!
//! Switching: top-down -> bottom-up when the frontier's edges m_f exceed m_u / alpha (m_u: edges
//! not yet explored); back when the frontier shrinks below N / beta. The frontier is a queue of
//! local ids in top-down and a bitmap in bottom-up; it is converted when the direction changes.

use crate::comm::{bucket_by_rank, Op, Pair, World};
use crate::error::Result;
use crate::graph::{DistGraph, Vid};
use rayon::prelude::*;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Hybrid,
    TopDown,
    BottomUp,
}

#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub mode: Mode,
    pub alpha: f64,
    pub beta: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    TopDown = 0,
    BottomUp = 1,
}

/// What one level did. Counts are global; times are this rank's (the driver reduces them).
#[derive(Clone, Debug)]
pub struct LevelStats {
    pub direction: Direction,
    pub frontier_vertices: u64,
    pub frontier_edges: u64,
    pub edges_inspected: u64,
    pub t_local: f64,
    pub t_exchange: f64,
    pub t_reduce: f64,
}

/// A rank's part of the frontier.
enum Frontier {
    /// Local ids of the frontier vertices.
    Queue(Vec<u32>),
    /// One bit per local vertex, `words_per_rank` words.
    Bits(Vec<u64>),
}

/// Run one BFS from `root`. On return `parent[l]` holds the parent of local vertex `l`
/// (the root is its own parent, unreached vertices -1). Collective.
pub fn bfs(
    world: &World,
    g: &DistGraph,
    root: Vid,
    params: &Params,
    parent: &mut [i64],
) -> Result<Vec<LevelStats>> {
    let part = g.part;
    parent.par_iter_mut().for_each(|p| *p = -1);
    let mut frontier = Frontier::Queue(Vec::new());
    let mut local_edges = 0;
    if part.is_local(root) {
        let l = part.local(root);
        parent[l] = root as i64;
        frontier = Frontier::Queue(vec![l as u32]);
        local_edges = g.degree(l);
    }
    let mut n_f = 1u64;
    let mut m_f = world.allreduce(local_edges, Op::Sum);
    let mut m_u = g.num_entries;
    let mut direction = match params.mode {
        Mode::BottomUp => Direction::BottomUp,
        _ => Direction::TopDown,
    };
    let mut prev_n_f = 0u64;
    let mut global_bits = vec![0u64; part.words_per_rank() * world.size()];
    let mut levels = Vec::new();

    while n_f > 0 {
        if params.mode == Mode::Hybrid {
            direction = choose_direction(direction, params, n_f, prev_n_f, m_f, m_u, part.n);
        }
        let step = match direction {
            Direction::TopDown => top_down(world, g, into_queue(frontier), parent)?,
            Direction::BottomUp => bottom_up(world, g, frontier, &mut global_bits, parent),
        };
        let t = Instant::now();
        let (next_n, next_m) = frontier_size(g, &step.next);
        let mut sums = [next_n, next_m, step.inspected];
        world.allreduce_slice(&mut sums, Op::Sum);
        levels.push(LevelStats {
            direction,
            frontier_vertices: n_f,
            frontier_edges: m_f,
            edges_inspected: sums[2],
            t_local: step.t_local,
            t_exchange: step.t_exchange,
            t_reduce: t.elapsed().as_secs_f64(),
        });
        m_u = m_u.saturating_sub(m_f);
        prev_n_f = n_f;
        n_f = sums[0];
        m_f = sums[1];
        frontier = step.next;
    }
    Ok(levels)
}

/// Beamer's switch: go bottom-up once the frontier's edges outweigh the unexplored edges
/// divided by alpha; return top-down once the frontier is shrinking and below N / beta.
fn choose_direction(
    current: Direction,
    params: &Params,
    n_f: u64,
    prev_n_f: u64,
    m_f: u64,
    m_u: u64,
    n: u64,
) -> Direction {
    match current {
        Direction::TopDown if m_f as f64 > m_u as f64 / params.alpha => Direction::BottomUp,
        Direction::BottomUp if n_f < prev_n_f && (n_f as f64) < n as f64 / params.beta => {
            Direction::TopDown
        }
        d => d,
    }
}

/// One level's result on this rank.
struct Step {
    next: Frontier,
    /// Adjacency entries this rank read.
    inspected: u64,
    t_local: f64,
    t_exchange: f64,
}

/// View a parent array as atomics so several threads can claim vertices with compare-and-swap.
fn as_atomic(parent: &mut [i64]) -> &[AtomicI64] {
    // SAFETY: AtomicI64 has the size and alignment of i64, and the exclusive borrow guarantees
    // no non-atomic access overlaps the atomic view's lifetime.
    unsafe { &*(parent as *mut [i64] as *const [AtomicI64]) }
}

fn claim(parent: &[AtomicI64], l: usize, p: Vid) -> bool {
    parent[l].load(Ordering::Relaxed) < 0
        && parent[l]
            .compare_exchange(-1, p as i64, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
}

fn top_down(world: &World, g: &DistGraph, queue: Vec<u32>, parent: &mut [i64]) -> Result<Step> {
    let part = g.part;
    let parent = as_atomic(parent);
    let t = Instant::now();
    // Per-thread pieces: newly claimed local vertices, and (vertex, parent) pairs for other ranks.
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
    let mut next: Vec<u32> = Vec::new();
    let mut remote: Vec<Pair> = Vec::new();
    for (n, r) in pieces {
        next.extend_from_slice(&n);
        remote.extend_from_slice(&r);
    }
    let (send, counts) = bucket_by_rank(world.size(), &remote, |p| part.owner(p.0));
    drop(remote);
    let t_scan = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let received = world.alltoallv(&send, &counts)?;
    drop(send);
    let t_exchange = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let claimed: Vec<u32> = received
        .par_iter()
        .filter(|&&Pair(v, p)| claim(parent, part.local(v), p))
        .map(|&Pair(v, _)| part.local(v) as u32)
        .collect();
    next.extend_from_slice(&claimed);
    Ok(Step {
        next: Frontier::Queue(next),
        inspected,
        t_local: t_scan + t.elapsed().as_secs_f64(),
        t_exchange,
    })
}

fn bottom_up(
    world: &World,
    g: &DistGraph,
    frontier: Frontier,
    global_bits: &mut [u64],
    parent: &mut [i64],
) -> Step {
    let words = g.part.words_per_rank();
    let t = Instant::now();
    let bits = into_bits(frontier, words);
    let t_convert = t.elapsed().as_secs_f64();

    let t = Instant::now();
    world.allgather_into(&bits, global_bits);
    let t_exchange = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let global_bits = &*global_bits;
    let mut next = vec![0u64; words];
    let inspected = parent
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
                    if global_bits[(v / 64) as usize] >> (v % 64) & 1 == 1 {
                        *p = v as i64;
                        *next_word |= 1 << i;
                        break;
                    }
                }
            }
            inspected
        })
        .sum();
    Step {
        next: Frontier::Bits(next),
        inspected,
        t_local: t_convert + t.elapsed().as_secs_f64(),
        t_exchange,
    }
}

fn into_queue(frontier: Frontier) -> Vec<u32> {
    match frontier {
        Frontier::Queue(q) => q,
        Frontier::Bits(bits) => bits
            .par_iter()
            .enumerate()
            .flat_map_iter(|(w, &word)| set_bits(word).map(move |i| (w * 64 + i) as u32))
            .collect(),
    }
}

fn into_bits(frontier: Frontier, words: usize) -> Vec<u64> {
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

fn set_bits(mut word: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (word != 0).then(|| {
            let i = word.trailing_zeros() as usize;
            word &= word - 1;
            i
        })
    })
}

/// Vertices and edges (sum of degrees) of this rank's part of a frontier.
fn frontier_size(g: &DistGraph, frontier: &Frontier) -> (u64, u64) {
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
