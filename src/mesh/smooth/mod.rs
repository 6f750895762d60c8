//! Node-moving smoothers on a patch (spec: mesh.md, Smoothing): `l2v` (the seed's
//! preconditioned simultaneous moves minimising F = Σ S/(6V)), `laplace` (plain or smart) and
//! `opt-colour` (worst-cell optimisation one colour class at a time). Every iteration ends
//! with the guard (`guard`): no cell inverts, and, except for plain laplace, the global
//! minimum η does not fall; l2v also halves the whole step until F does not rise. Node sums
//! run over the node-to-cell CSR in ascending cell order and global sums are exact, so the
//! result is the same for any thread or rank count.

pub mod gpu;
pub mod guard;
pub mod l2v;
pub mod laplace;
pub mod optimise;

use super::exact::ExactSum;
use super::geometry;
use super::patch::{Exchange, Patch};
use super::quality::{summarize, Summary};
use rayon::prelude::*;
use std::time::Instant;

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    L2v,
    Laplace,
    OptColour,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Preconditioner {
    /// Half the trace of each node's Hessian block (the seed's eq. 13)
    Scalar,
    /// The 3x3 Hessian block (the seed's eq. 12), scalar where it is not positive definite
    Block,
}

#[derive(Clone, Debug)]
pub struct Settings {
    pub method: Method,
    pub iterations: usize,
    pub preconditioner: Preconditioner,
    /// Laplace: move only where the local worst η rises.
    pub smart: bool,
    /// Stop when the largest move is below this (absolute length).
    pub tolerance: f64,
    /// opt-colour: the colour of each local node (u32::MAX for fixed nodes).
    pub colours: Vec<u32>,
}

/// One iteration's statistics.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record {
    pub deformation: f64,
    pub min_eta: f64,
    pub mean_eta: f64,
    pub inverted: u64,
    pub max_move: f64,
    pub seconds_cell: f64,
    pub seconds_node: f64,
    pub seconds_exchange: f64,
}

impl Record {
    pub fn of(after: &Summary, max_move: f64, clock: &Clock) -> Record {
        Record {
            deformation: after.deformation.value(),
            min_eta: after.min_eta,
            mean_eta: after.mean_eta(),
            inverted: after.inverted,
            max_move,
            seconds_cell: clock.cell,
            seconds_node: clock.node,
            seconds_exchange: clock.exchange,
        }
    }
}

/// Time spent in each kind of step of one iteration.
#[derive(Default)]
pub struct Clock {
    pub cell: f64,
    pub node: f64,
    pub exchange: f64,
}

impl Clock {
    pub fn time<T>(slot: &mut f64, body: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = body();
        *slot += t.elapsed().as_secs_f64();
        out
    }
}

/// The global quality summary of the patch as it stands.
pub fn global_summary(patch: &Patch, ex: &dyn Exchange) -> Summary {
    ex.summary(summarize(&patch.mesh, |c| patch.counted[c]))
}

/// The mean edge length of the whole mesh (the scale of the tolerance), summed exactly over
/// the cells each rank counts, so the same for any rank count.
pub fn mean_edge_length(patch: &Patch, ex: &dyn Exchange) -> f64 {
    let m = &patch.mesh;
    let k = m.corners();
    let (sum, cells) = (0..m.num_cells())
        .into_par_iter()
        .filter(|&c| patch.counted[c])
        .map(|c| {
            let p = m.cell_points(c);
            let mut s = ExactSum::default();
            for a in 0..k {
                for b in a + 1..k {
                    s = s.plus(ExactSum::of(geometry::dist(&p[a], &p[b])));
                }
            }
            (s, 1u64)
        })
        .reduce(
            || (ExactSum::default(), 0),
            |a, b| (a.0.plus(b.0), a.1 + b.1),
        );
    let sum = ex.sum(sum).value();
    let edges = ex.sum(ExactSum::of(cells as f64)).value() * (k * (k - 1) / 2) as f64;
    sum / edges.max(1.0)
}

/// Smooth `patch` on the CPU for up to `s.iterations` iterations (`gpu::smooth` is the same
/// on a GPU); `each` sees every record as it is made (progress). Returns the records.
pub fn smooth(
    patch: &mut Patch,
    ex: &dyn Exchange,
    s: &Settings,
    mut each: impl FnMut(usize, &Record),
) -> Vec<Record> {
    let mut before = global_summary(patch, ex);
    let mut records = Vec::with_capacity(s.iterations);
    for it in 0..s.iterations {
        let mut clock = Clock::default();
        let (after, max_move) = match s.method {
            Method::L2v => {
                let moves = l2v::moves(patch, s.preconditioner, &mut clock);
                l2v::apply(patch, ex, &moves, &before, &mut clock)
            }
            Method::Laplace => {
                let moves = Clock::time(&mut clock.node, || laplace::moves(patch, s.smart));
                laplace::apply(patch, ex, &moves, s.smart, &before, &mut clock)
            }
            Method::OptColour => optimise::iteration(patch, ex, &s.colours, &mut clock),
        };
        let record = Record::of(&after, max_move, &clock);
        each(it, &record);
        records.push(record);
        before = after;
        if max_move <= s.tolerance {
            break;
        }
    }
    records
}

#[cfg(test)]
mod tests;
