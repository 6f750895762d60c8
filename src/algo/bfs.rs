//! Kernel 2: direction-optimising BFS on the 1D-partitioned CSR, written once for every device.
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
//! not yet explored); back when the frontier shrinks below N / beta.
//!
//! This module owns the level loop, the direction choice and the exchanges; the local scans
//! live behind `Frontiers`, implemented on the CPU (`bfs_cpu`) and on the GPU (`bfs_gpu`).

use crate::comm::{bucket_by_rank, Op, Pair, World};
use crate::error::Result;
use crate::graph::{Block1D, Vid};
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

/// The local part of a search on one device: parents, the current and next frontier, and the
/// scans over this rank's rows. Every method returns when its work is complete.
pub trait Frontiers {
    /// Start a search: every parent -1; if the root is local, it is its own parent and the
    /// whole frontier. Returns the local frontier's edge count.
    fn start(&mut self, root: Vid) -> Result<u64>;
    /// Scan the rows of the current frontier. Local neighbours are claimed into the next
    /// frontier; (neighbour, parent) pairs for other ranks are returned. Also returns the
    /// adjacency entries read.
    fn top_down(&mut self) -> Result<(Vec<Pair>, u64)>;
    /// Claim the vertices other ranks discovered (pairs of local vertex, parent).
    fn claim(&mut self, received: &[Pair]) -> Result<()>;
    /// This rank's frontier as a bitmap (`words_per_rank` words), for the allgather.
    fn frontier_bits(&mut self) -> Result<Vec<u64>>;
    /// Scan the rows of the unvisited local vertices against the global frontier bitmap
    /// (`None` on a single rank: the local bitmap is the global one). Returns entries read.
    fn bottom_up(&mut self, global: Option<&[u64]>) -> Result<u64>;
    /// Make the next frontier current; return its local vertex and edge counts.
    fn advance(&mut self) -> Result<(u64, u64)>;
    /// Copy the parents of the local vertices into `out`.
    fn parents(&mut self, out: &mut [i64]) -> Result<()>;
}

/// Run one BFS from `root` on `frontiers`. Collective.
pub fn bfs(
    world: &World,
    part: &Block1D,
    num_entries: u64,
    frontiers: &mut dyn Frontiers,
    root: Vid,
    params: &Params,
) -> Result<Vec<LevelStats>> {
    let local_edges = frontiers.start(root)?;
    let mut n_f = 1u64;
    let mut m_f = world.allreduce(local_edges, Op::Sum);
    let mut m_u = num_entries;
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
        let (mut t_local, mut t_exchange) = (0.0, 0.0);
        let mut timed = |on_local: bool, t: Instant| {
            let s = t.elapsed().as_secs_f64();
            if on_local {
                t_local += s
            } else {
                t_exchange += s
            }
        };
        let inspected = match direction {
            Direction::TopDown => {
                let t = Instant::now();
                let (remote, inspected) = frontiers.top_down()?;
                let (send, counts) = bucket_by_rank(world.size(), &remote, |p| part.owner(p.0));
                drop(remote);
                timed(true, t);
                let t = Instant::now();
                let received = world.alltoallv(&send, &counts)?;
                drop(send);
                timed(false, t);
                let t = Instant::now();
                frontiers.claim(&received)?;
                timed(true, t);
                inspected
            }
            Direction::BottomUp if world.size() == 1 => {
                let t = Instant::now();
                let inspected = frontiers.bottom_up(None)?;
                timed(true, t);
                inspected
            }
            Direction::BottomUp => {
                let t = Instant::now();
                let bits = frontiers.frontier_bits()?;
                timed(true, t);
                let t = Instant::now();
                world.allgather_into(&bits, &mut global_bits);
                timed(false, t);
                let t = Instant::now();
                let inspected = frontiers.bottom_up(Some(&global_bits))?;
                timed(true, t);
                inspected
            }
        };
        let t = Instant::now();
        let (next_n, next_m) = frontiers.advance()?;
        t_local += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut sums = [next_n, next_m, inspected];
        world.allreduce_slice(&mut sums, Op::Sum);
        levels.push(LevelStats {
            direction,
            frontier_vertices: n_f,
            frontier_edges: m_f,
            edges_inspected: sums[2],
            t_local,
            t_exchange,
            t_reduce: t.elapsed().as_secs_f64(),
        });
        m_u = m_u.saturating_sub(m_f);
        prev_n_f = n_f;
        n_f = sums[0];
        m_f = sums[1];
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
