//! `tessera spin`: Ising and q-state Potts models on periodic square and simple cubic
//! lattices, by checkerboard Metropolis, Swendsen-Wang or Wolff updates, at one or several β
//! in one job (each β its own chain from the same start), with measurements, error bars,
//! autocorrelation times, and checkpoints that a later run resumes bit for bit.
//!
//! The lattice is cut into slabs (`lattice::Slab`), one per rank, each with a ghost plane on
//! either side refreshed through `lattice::halo` before every step that reads across a slab
//! face. Every random number is a counter-based draw keyed by the seed, the β, the sweep, the
//! step and a global index (site, bond or canonical cluster label; `model::sweep_key`), and
//! every decision compares integers, so a chain is the same bit for bit on any rank count,
//! on the CPU or a GPU, and across a restart: the checkpoint holds only the spins and the
//! sweep counter.
//!
//! `lattice = "rewired"`: the small-world lattice of Leist's thesis (2011), §7.1, a `base` lattice with a
//! fraction `p` of its edges rewired keeping the checkerboard colours, as a distributed CSR
//! graph (`graph`; CPU only).

mod chain;
mod cpu;
mod gpu;
mod graph;
pub mod model;
mod msc;
mod record;
mod sizes;
mod wolff_gpu;

use crate::config::{config_error, distinct, out_of_range, Numbers};
use crate::error::Result;
use crate::graph::generators::watts_strogatz::check_keeping_colours;
use crate::graph::source::GraphConfig;
use crate::harness::{Harness, Workload};
use crate::lattice::checkerboard;
use crate::lattice::{Lattice, LatticeKind};
use crate::report::Report;
use model::Model;
use serde::{Deserialize, Serialize};

/// `[spin]`. Also the `tessera spin` flags.
#[derive(Debug, Default, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct SpinTable {
    /// Ising (H = -Σ s_i s_j) or q-state Potts (H = -Σ δ(s_i, s_j)) (default ising)
    #[arg(long, value_enum)]
    pub model: Option<ModelKind>,
    /// States of a Potts spin, 2 to 256 (default 3; Ising is q = 2)
    #[arg(long, allow_negative_numbers = true)]
    pub q: Option<i64>,
    /// Square (2d) or simple cubic (3d) lattice, periodic, or the base lattice rewired
    /// (rewired) (default 2d)
    #[arg(long, value_enum)]
    pub lattice: Option<SpinLattice>,
    /// The lattice that lattice = "rewired" rewires: 2d or 3d (default 2d)
    #[arg(long, value_enum)]
    pub base: Option<LatticeKind>,
    /// Rewiring probability of lattice = "rewired", 0 to 1 (each edge end moves to a random
    /// site of its own checkerboard colour with probability p/2)
    #[arg(long, allow_negative_numbers = true)]
    pub p: Option<f64>,
    /// Side L (at least 2 and the number of ranks; even for metropolis; default 32)
    #[arg(long, allow_negative_numbers = true)]
    pub l: Option<i64>,
    /// Update: checkerboard metropolis, swendsen-wang or wolff (default metropolis)
    #[arg(long, value_enum)]
    pub update: Option<Update>,
    /// Inverse temperature, or several comma-separated (default: the critical point where
    /// known)
    #[arg(long, allow_negative_numbers = true)]
    pub beta: Option<Numbers>,
    /// Temperature, or several comma-separated (instead of beta)
    #[arg(long, allow_negative_numbers = true)]
    pub temperature: Option<Numbers>,
    /// Wolff: clusters flipped per sweep (default 1)
    #[arg(long, allow_negative_numbers = true)]
    pub clusters_per_sweep: Option<i64>,
    /// Start of each chain: all spins in state 0 (cold) or random (hot) (default cold)
    #[arg(long, value_enum)]
    pub start: Option<Start>,
    /// Sweeps before measuring, per beta (default 1000)
    #[arg(long, allow_negative_numbers = true)]
    pub equilibration: Option<i64>,
    /// Sweeps measured, per beta (default 10000)
    #[arg(long, allow_negative_numbers = true)]
    pub sweeps: Option<i64>,
    /// Measure every this many sweeps (default 1)
    #[arg(long, allow_negative_numbers = true)]
    pub measure_every: Option<i64>,
    /// Write a checkpoint every this many sweeps (default: by time only)
    #[arg(long, allow_negative_numbers = true)]
    pub checkpoint_sweeps: Option<i64>,
    /// Write a checkpoint when this many seconds passed since the last (default 600)
    #[arg(long, allow_negative_numbers = true)]
    pub checkpoint_seconds: Option<f64>,
    /// Store each beta's last spins (lattices of at most 2^24 sites)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub write_configuration: Option<bool>,
    /// Continue from the checkpoint in the output file
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub resume: Option<bool>,
    /// Run at most this many sweeps, then write a checkpoint and stop (continue with --resume)
    #[arg(long, allow_negative_numbers = true)]
    pub stop_after: Option<i64>,
}

/// `[spin] lattice`: one of the lattice layer's, or a base lattice rewired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
pub enum SpinLattice {
    #[serde(rename = "2d")]
    #[value(name = "2d")]
    Square,
    #[serde(rename = "3d")]
    #[value(name = "3d")]
    Cubic,
    #[serde(rename = "rewired")]
    Rewired,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ModelKind {
    Ising,
    Potts,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Update {
    Metropolis,
    SwendsenWang,
    Wolff,
}

impl Update {
    pub fn name(self) -> &'static str {
        match self {
            Update::Metropolis => "metropolis",
            Update::SwendsenWang => "swendsen-wang",
            Update::Wolff => "wolff",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Start {
    Cold,
    Hot,
}

/// Largest lattice whose configurations `write_configuration` stores.
const MAX_WRITTEN_SITES: u64 = 1 << 24;

/// Sweeps per chain below this (the sweep counter's share of a stream name).
const MAX_SWEEPS: u64 = 1 << 45;

/// A spin-model run, configured.
#[derive(Debug, Clone)]
pub struct Spin {
    pub model: Model,
    /// The lattice, or the base of the rewired one.
    pub lattice: Lattice,
    /// The rewiring probability p on the rewired lattice.
    pub rewiring: Option<f64>,
    pub update: Update,
    pub betas: Vec<f64>,
    pub hot: bool,
    /// Wolff clusters per sweep.
    pub clusters_per_sweep: u64,
    pub equilibration: u64,
    pub sweeps: u64,
    pub measure_every: u64,
    pub checkpoint_sweeps: Option<u64>,
    pub checkpoint_seconds: f64,
    pub write_configuration: bool,
    pub resume: bool,
    pub stop_after: Option<u64>,
}

impl Spin {
    /// Sweeps of one chain, equilibration included.
    pub fn chain_sweeps(&self) -> u64 {
        self.equilibration + self.sweeps
    }

    /// Measurements of one chain.
    pub fn measurements(&self) -> u64 {
        self.sweeps / self.measure_every
    }

    /// What a checkpoint must agree on to be resumed (with the seed).
    pub fn job(&self, seed: u64) -> String {
        let rewired = self
            .rewiring
            .map_or(String::new(), |p| format!(" rewired p={p}"));
        format!(
            "{} q={} {}D L={}{rewired} {} clusters_per_sweep={} start={} betas={:?} equilibration={} sweeps={} measure_every={} seed={seed}",
            if self.model.ising { "ising" } else { "potts" },
            self.model.q,
            self.lattice.dim,
            self.lattice.l,
            self.update.name(),
            self.clusters_per_sweep,
            if self.hot { "hot" } else { "cold" },
            self.betas,
            self.equilibration,
            self.sweeps,
            self.measure_every
        )
    }
}

/// The critical β where it is known: 2D Ising ln(1+√2)/2, 3D Ising 0.2216546 (Ferrenberg,
/// Xu & Landau 2018), 2D Potts ln(1+√q).
fn critical_beta(model: &Model) -> Option<f64> {
    match (model.ising, model.dim) {
        (true, 2) => Some((1.0 + 2f64.sqrt()).ln() / 2.0),
        (true, _) => Some(0.221_654_6),
        (false, 2) => Some((1.0 + f64::from(model.q).sqrt()).ln()),
        (false, _) => None,
    }
}

/// A count key: an integer >= `least` (`default` when absent).
fn count(source: &str, key: &str, value: Option<i64>, default: u64, least: u64) -> Result<u64> {
    let v = value.unwrap_or(default as i64);
    u64::try_from(v)
        .ok()
        .filter(|&v| v >= least && v < MAX_SWEEPS)
        .ok_or_else(|| {
            out_of_range(
                source,
                &format!("[spin] {key}"),
                v,
                &format!("an integer >= {least} and below 2^45"),
            )
        })
}

/// The dimension and, on the rewired lattice, the rewiring probability.
fn lattice_of(source: &str, t: &SpinTable) -> Result<(usize, Option<f64>)> {
    let lattice = t.lattice.unwrap_or(SpinLattice::Square);
    let rewired = lattice == SpinLattice::Rewired;
    if !rewired && (t.base.is_some() || t.p.is_some()) {
        return Err(config_error(
            source,
            "[spin] base and p apply to lattice = \"rewired\"",
        ));
    }
    match lattice {
        SpinLattice::Square => Ok((2, None)),
        SpinLattice::Cubic => Ok((3, None)),
        SpinLattice::Rewired => {
            let p = t.p.ok_or_else(|| {
                config_error(
                    source,
                    "[spin] lattice = \"rewired\" needs p, the rewiring probability (0 to 1)",
                )
            })?;
            if !(0.0..=1.0).contains(&p) {
                return Err(out_of_range(source, "[spin] p", p, "a number from 0 to 1"));
            }
            Ok((t.base.unwrap_or(LatticeKind::Square).dim(), Some(p)))
        }
    }
}

fn model_of(source: &str, t: &SpinTable, dim: usize) -> Result<Model> {
    let ising = t.model.unwrap_or(ModelKind::Ising) == ModelKind::Ising;
    let q = match (ising, t.q) {
        (true, None | Some(2)) => 2,
        (true, Some(_)) => {
            return Err(config_error(
                source,
                "[spin] q applies to model = \"potts\" (ising is q = 2)",
            ))
        }
        (false, q) => {
            let q = q.unwrap_or(3);
            u32::try_from(q)
                .ok()
                .filter(|q| (2..=256).contains(q))
                .ok_or_else(|| out_of_range(source, "[spin] q", q, "an integer from 2 to 256"))?
        }
    };
    Ok(Model { q, ising, dim })
}

/// The name a β's results are stored under (as the report's line and the phase name it).
fn beta_name(beta: f64) -> String {
    format!("beta = {beta}")
}

fn betas_of(source: &str, t: &SpinTable, model: &Model) -> Result<Vec<f64>> {
    let betas = match (&t.beta, &t.temperature) {
        (Some(_), Some(_)) => {
            return Err(config_error(
                source,
                "[spin] give beta or temperature, not both",
            ))
        }
        (Some(b), None) => {
            if let Some(bad) = b.0.iter().find(|b| !(b.is_finite() && **b >= 0.0)) {
                return Err(out_of_range(
                    source,
                    "[spin] beta",
                    bad,
                    "a finite number >= 0",
                ));
            }
            distinct(source, "[spin] beta", &b.0, |b| beta_name(*b))?;
            b.0.clone()
        }
        (None, Some(t)) => {
            if let Some(bad) = t.0.iter().find(|t| !(t.is_finite() && **t > 0.0)) {
                return Err(out_of_range(
                    source,
                    "[spin] temperature",
                    bad,
                    "a finite number > 0",
                ));
            }
            distinct(source, "[spin] temperature", &t.0, |t| beta_name(1.0 / t))?;
            t.0.iter().map(|t| 1.0 / t).collect()
        }
        (None, None) => vec![critical_beta(model).ok_or_else(|| {
            config_error(
                source,
                "[spin] the 3D Potts model has no default beta: give beta or temperature",
            )
        })?],
    };
    if betas.is_empty() {
        return Err(config_error(
            source,
            "[spin] beta (or temperature) is an empty list: expected at least one value",
        ));
    }
    Ok(betas)
}

impl Workload for Spin {
    const NAME: &'static str = "spin";
    const ABOUT: &'static str =
        "Ising and Potts models on 2D/3D lattices: Metropolis, Swendsen-Wang and Wolff updates, measurements with errors, checkpoints";
    type Table = SpinTable;

    fn configure(source: &str, t: SpinTable, _: Option<GraphConfig>) -> Result<Self> {
        let (dim, rewiring) = lattice_of(source, &t)?;
        let model = model_of(source, &t, dim)?;
        let update = t.update.unwrap_or(Update::Metropolis);
        let l = t.l.unwrap_or(32);
        let l = u64::try_from(l)
            .ok()
            .filter(|&l| l >= 2)
            .ok_or_else(|| out_of_range(source, "[spin] l", l, "an integer >= 2"))?;
        let lattice =
            Lattice::new(dim, l, true).map_err(|m| config_error(source, &format!("[spin] {m}")))?;
        if let Some(p) = rewiring {
            check_keeping_colours(&vec![l; dim], p)
                .map_err(|m| config_error(source, &format!("[spin] lattice = \"rewired\": {m}")))?;
            if lattice.sites() > 1 << 32 {
                return Err(config_error(
                    source,
                    "[spin] lattice = \"rewired\" numbers its bonds in 64 bits: at most 2^32 sites",
                ));
            }
        }
        if update == Update::Metropolis && !checkerboard::is_proper(&lattice) {
            return Err(out_of_range(
                source,
                "[spin] l",
                l,
                "an even side (the checkerboard of update = \"metropolis\" needs one)",
            ));
        }
        let betas = betas_of(source, &t, &model)?;
        if t.clusters_per_sweep.is_some() && update != Update::Wolff {
            return Err(config_error(
                source,
                "[spin] clusters_per_sweep applies to update = \"wolff\"",
            ));
        }
        let sweeps = count(source, "sweeps", t.sweeps, 10_000, 1)?;
        let measure_every = count(source, "measure_every", t.measure_every, 1, 1)?;
        if measure_every > sweeps {
            return Err(out_of_range(
                source,
                "[spin] measure_every",
                measure_every,
                &format!("at most sweeps = {sweeps}"),
            ));
        }
        let checkpoint_seconds = t.checkpoint_seconds.unwrap_or(600.0);
        if !(checkpoint_seconds.is_finite() && checkpoint_seconds > 0.0) {
            return Err(out_of_range(
                source,
                "[spin] checkpoint_seconds",
                checkpoint_seconds,
                "a finite number > 0",
            ));
        }
        let write_configuration = t.write_configuration.unwrap_or(false);
        if write_configuration && lattice.sites() > MAX_WRITTEN_SITES {
            return Err(config_error(
                source,
                &format!(
                    "[spin] write_configuration stores every spin: {} sites is more than the {MAX_WRITTEN_SITES} it allows",
                    lattice.sites()
                ),
            ));
        }
        Ok(Spin {
            model,
            lattice,
            rewiring,
            update,
            betas,
            hot: t.start == Some(Start::Hot),
            clusters_per_sweep: count(source, "clusters_per_sweep", t.clusters_per_sweep, 1, 1)?,
            equilibration: count(source, "equilibration", t.equilibration, 1000, 0)?,
            sweeps,
            measure_every,
            checkpoint_sweeps: t
                .checkpoint_sweeps
                .map(|c| count(source, "checkpoint_sweeps", Some(c), 0, 1))
                .transpose()?,
            checkpoint_seconds,
            write_configuration,
            resume: t.resume.unwrap_or(false),
            stop_after: t
                .stop_after
                .map(|c| count(source, "stop_after", Some(c), 0, 1))
                .transpose()?,
        })
    }

    fn check_sizes(&self, h: &Harness) -> Result<()> {
        sizes::check_sizes(self, h)
    }

    /// `--resume` continues the checkpoint in the output file.
    fn resumes_output(&self) -> bool {
        self.resume
    }

    fn execute(&self, h: &Harness) -> Result<Report> {
        // A run stopped at `stop_after` leaves its checkpoint as the output.
        let Some(record) = chain::run(h, self)? else {
            return Ok(Report::checkpointed());
        };
        let mut report = Report::new();
        record::report(&mut report, self, h.run.seed, &record, true);
        Ok(report)
    }
}
