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
//! This module owns the level loop and the direction choice; the scans and the exchanges live
//! behind `Frontiers`, implemented on the CPU (`cpu`, host MPI) and on the GPU (`gpu`,
//! NCCL or host-staged MPI as `gpu_transport` says), so the loop is the same for every device
//! and transport.

use super::cpu::CpuFrontiers;
use super::gpu::GpuFrontiers;
use super::validate_depths::DeviceVerdict;
use crate::comm::{GpuTransport, Op, World};
use crate::device::Selected;
use crate::error::Result;
use crate::graph::csr_gpu::DeviceCsr;
use crate::graph::{DistGraph, Vid};
use std::time::Instant;

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, clap::ValueEnum,
)]
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
    /// Bytes all ranks together sent to other ranks in this level.
    pub bytes_exchanged: u64,
    /// Bytes this rank sent to and received from other ranks (the driver makes them the
    /// largest of any rank).
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub t_local: f64,
    pub t_exchange: f64,
    pub t_reduce: f64,
    /// The ranks' mean local time and least exchange time (set by the driver's reduction;
    /// this rank's own before): the slowest rank's local time less the mean is the load
    /// imbalance, and the most exchange time less the least is mostly waiting for it.
    pub t_local_mean: f64,
    pub t_exchange_min: f64,
}

/// One level's time split into local work and exchanges between ranks, and the bytes this
/// rank sent and received; the `Frontiers` methods charge their phases to it.
#[derive(Default)]
pub struct LevelClock {
    pub local: f64,
    pub exchange: f64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
}

impl LevelClock {
    /// Run `f` as local work.
    pub fn local<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        self.local += t.elapsed().as_secs_f64();
        out
    }

    /// Run `f` as an exchange between ranks.
    pub fn exchange<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        self.exchange += t.elapsed().as_secs_f64();
        out
    }
}

/// The local part of a search on one device, with its exchanges: parents, the current and
/// next frontier, the scans over this rank's rows, and the transport that carries what the
/// scans find to the other ranks. Every method returns when its work is complete.
pub trait Frontiers {
    /// Start a search: every parent -1; if the root is local, it is its own parent and the
    /// whole frontier. Returns the local frontier's edge count.
    fn start(&mut self, root: Vid) -> Result<u64>;
    /// A top-down level: scan the rows of the current frontier, claim local neighbours into
    /// the next frontier, send (neighbour, parent) pairs to the neighbours' owners and claim
    /// the pairs received. Collective. Returns the adjacency entries read.
    fn top_down(&mut self, clock: &mut LevelClock) -> Result<u64>;
    /// A bottom-up level: gather every rank's frontier bitmap into one global bitmap (no
    /// exchange on one rank), then scan the rows of the unvisited local vertices against it.
    /// Collective. Returns the adjacency entries read.
    fn bottom_up(&mut self, clock: &mut LevelClock) -> Result<u64>;
    /// Make the next frontier current; return its local vertex and edge counts.
    fn advance(&mut self) -> Result<(u64, u64)>;
    /// Bring the parents of the local vertices into host memory where they are elsewhere
    /// (the copy that the time "with copy to host" adds to the search).
    fn fetch_parents(&mut self) -> Result<()> {
        Ok(())
    }
    /// The parents of the local vertices, as i64 (-1: none), into `out` (fetched first if
    /// `fetch_parents` was not called since the search).
    fn parents(&mut self, out: &mut [i64]) -> Result<()>;
    /// What carries the exchanges ("mpi", "nccl", "none" on one rank), for provenance.
    fn transport(&self) -> &'static str;
    /// The level at which the search reached each local vertex (-1: not reached), into
    /// `out`: the witness of the depth validator (`validate_depths`).
    fn depths(&mut self, out: &mut [i32]) -> Result<()>;
    /// Overwrite the parent of local vertex `l` (the debug corruption of `corrupt`).
    fn set_parent(&mut self, l: usize, p: i64) -> Result<()>;
    /// Check the Graph500 rules on the device that searched, the parents staying there
    /// (`validate_gpu`); None where that device is the host's cores.
    fn check_on_device(&mut self, _g: &DistGraph, _root: Vid) -> Result<Option<DeviceVerdict>> {
        Ok(None)
    }
}

/// Run one BFS from `root` on `frontiers`. Collective.
pub fn bfs(
    world: &World,
    n: u64,
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
    let mut levels = Vec::new();

    while n_f > 0 {
        if params.mode == Mode::Hybrid {
            direction = choose_direction(direction, params, n_f, prev_n_f, m_f, m_u, n);
        }
        let mut clock = LevelClock::default();
        let inspected = match direction {
            Direction::TopDown => frontiers.top_down(&mut clock)?,
            Direction::BottomUp => frontiers.bottom_up(&mut clock)?,
        };
        let (next_n, next_m) = clock.local(|| frontiers.advance())?;
        let t = Instant::now();
        let mut sums = [next_n, next_m, inspected];
        world.allreduce_slice(&mut sums, Op::Sum);
        levels.push(LevelStats {
            direction,
            frontier_vertices: n_f,
            frontier_edges: m_f,
            edges_inspected: sums[2],
            bytes_exchanged: clock.bytes_sent,
            bytes_sent: clock.bytes_sent,
            bytes_received: clock.bytes_received,
            t_local: clock.local,
            t_exchange: clock.exchange,
            t_reduce: t.elapsed().as_secs_f64(),
            t_local_mean: clock.local,
            t_exchange_min: clock.exchange,
        });
        m_u = m_u.saturating_sub(m_f);
        prev_n_f = n_f;
        n_f = sums[0];
        m_f = sums[1];
    }
    Ok(levels)
}

/// Beamer's switch: go bottom-up once the growing frontier's edges outweigh the unexplored
/// edges divided by alpha; return top-down once the frontier is shrinking and below N / beta.
/// Only a growing frontier goes bottom-up: at the last levels the unexplored edges are few, so
/// a frontier of a few hundred vertices outweighed them and took a bottom-up level (a scan of
/// every unvisited vertex, 0.45 ms at SCALE 26) where a top-down one costs 0.05 ms.
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
        Direction::TopDown if n_f > prev_n_f && m_f as f64 > m_u as f64 / params.alpha => {
            Direction::BottomUp
        }
        Direction::BottomUp if n_f < prev_n_f && (n_f as f64) < n as f64 / params.beta => {
            Direction::TopDown
        }
        d => d,
    }
}

/// The search's scans and exchanges for this rank's device.
pub fn frontiers<'g>(
    world: &'g World,
    device: &'g Selected,
    transport: GpuTransport,
    g: &'g DistGraph,
    csr: Option<DeviceCsr>,
) -> Result<Box<dyn Frontiers + 'g>> {
    Ok(match device {
        Selected::Cpu => Box::new(CpuFrontiers::new(world, g)),
        Selected::Gpu(gpu) => Box::new(GpuFrontiers::new(world, gpu, transport, g, csr)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_growing_frontier_goes_bottom_up() {
        let p = Params {
            mode: Mode::Hybrid,
            alpha: 14.0,
            beta: 24.0,
        };
        let n = 1 << 20;
        // 500 frontier edges outweigh 1000 unexplored edges / 14 either way.
        let growing = choose_direction(Direction::TopDown, &p, 400, 10, 500, 1000, n);
        let shrinking = choose_direction(Direction::TopDown, &p, 400, 9000, 500, 1000, n);
        assert_eq!(growing, Direction::BottomUp);
        assert_eq!(shrinking, Direction::TopDown);
        // Back top-down once shrinking below N / beta.
        let back = choose_direction(Direction::BottomUp, &p, 1000, 5000, 10, 10, n);
        assert_eq!(back, Direction::TopDown);
    }
}
