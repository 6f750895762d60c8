//! `tessera percolation`: site or bond percolation on the square or simple cubic lattice,
//! periodic or open, for one or several occupation probabilities p in one job. Each sample
//! draws an occupation (counter-based: keyed by the seed, the sample and the global site or
//! bond index, so it is the same for any rank count and device; the same sample at two p is
//! the same random field thresholded twice, the usual coupling of a sweep), labels its
//! clusters with the lattice layer, and records their statistics: whether some cluster wraps
//! (periodic) or spans (open) each axis, the largest cluster, the mean cluster size without
//! it. Per p: the percolation probability per axis with its binomial error, the mean largest
//! cluster fraction and the mean cluster size, with their standard errors.

mod report;
mod sampler;
mod sizes;

use crate::config::{config_error, distinct, out_of_range, Numbers};
use crate::error::{Error, Result};
use crate::graph::source::GraphConfig;
use crate::harness::{Harness, Workload};
use crate::lattice::{Lattice, LatticeKind, Occupation, Slab};
use crate::report::Report;
use crate::rng::stream_key;
use report::Row;
use sampler::Sampler;
use serde::{Deserialize, Serialize};

/// `[percolation]`. Also the `tessera percolation` flags.
#[derive(Debug, Default, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct PercolationTable {
    /// Square (2d) or simple cubic (3d) lattice (default 2d)
    #[arg(long, value_enum)]
    pub lattice: Option<LatticeKind>,
    /// Side L of the lattice (at least 2, and at least the number of ranks; default 64)
    #[arg(long, allow_negative_numbers = true)]
    pub l: Option<i64>,
    /// Sites along axis 0, the axis the ranks' slabs cut, where it differs from L: a strip
    /// length x L (2d) or a bar length x L x L (3d) (at least 2, and at least the number of
    /// ranks; default L)
    #[arg(long, allow_negative_numbers = true)]
    pub length: Option<i64>,
    /// Occupation probability, or several comma-separated for a sweep (default: the
    /// lattice's threshold)
    #[arg(long, allow_negative_numbers = true)]
    pub p: Option<Numbers>,
    /// Occupy sites or bonds (default site)
    #[arg(long, value_enum)]
    pub kind: Option<Kind>,
    /// Boundary conditions: periodic (clusters wrap) or open (clusters span) (default periodic)
    #[arg(long, value_enum)]
    pub boundary: Option<Boundary>,
    /// Samples per p (default 16)
    #[arg(long)]
    pub samples: Option<u64>,
    /// Store the labels of each p's last sample (lattices of at most 2^24 sites)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub write_labels: Option<bool>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Site,
    Bond,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Boundary {
    Periodic,
    Open,
}

/// Largest lattice whose labels `write_labels` stores.
const MAX_WRITTEN_SITES: u64 = 1 << 24;

/// Thresholds (Jacobsen 2015; Wang et al. 2013; Xu et al. 2014), the default p.
fn threshold(lattice: LatticeKind, kind: Kind) -> f64 {
    match (lattice, kind) {
        (LatticeKind::Square, Kind::Site) => 0.592_746_050_792_10,
        (LatticeKind::Square, Kind::Bond) => 0.5,
        (LatticeKind::Cubic, Kind::Site) => 0.311_607_7,
        (LatticeKind::Cubic, Kind::Bond) => 0.248_812_6,
    }
}

/// Percolation runs, configured.
#[derive(Debug, Clone)]
pub struct Percolation {
    pub lattice: Lattice,
    pub kind: Occupation,
    pub p: Vec<f64>,
    pub samples: u64,
    pub write_labels: bool,
}

/// The name a probability's results are stored under (as the report's line).
fn p_name(p: f64) -> String {
    format!("p = {p}")
}

impl Workload for Percolation {
    const NAME: &'static str = "percolation";
    const ABOUT: &'static str =
        "Site or bond percolation on 2D/3D lattices: cluster labelling, wrapping/spanning probabilities, cluster sizes";
    type Table = PercolationTable;

    fn configure(source: &str, t: PercolationTable, _: Option<GraphConfig>) -> Result<Self> {
        let key = |k: &str| format!("[percolation] {k}");
        let shape = t.lattice.unwrap_or(LatticeKind::Square);
        let dim = shape.dim();
        let l = t.l.unwrap_or(64);
        let l = u64::try_from(l)
            .ok()
            .filter(|&l| l >= 2)
            .ok_or_else(|| out_of_range(source, &key("l"), l, "an integer >= 2"))?;
        let length = t.length.map_or(Ok(l), |length| {
            u64::try_from(length)
                .ok()
                .filter(|&length| length >= 2)
                .ok_or_else(|| out_of_range(source, &key("length"), length, "an integer >= 2"))
        })?;
        let periodic = t.boundary.unwrap_or(Boundary::Periodic) == Boundary::Periodic;
        let lattice = Lattice::with_length(dim, length, l, periodic)
            .map_err(|m| config_error(source, &key(&m)))?;
        let kind = t.kind.unwrap_or(Kind::Site);
        let p = t.p.map_or(vec![threshold(shape, kind)], |p| p.0);
        if p.is_empty() {
            return Err(config_error(
                source,
                &key("p is an empty list: expected at least one probability"),
            ));
        }
        if let Some(bad) = p.iter().find(|p| !(0.0..=1.0).contains(*p)) {
            return Err(out_of_range(
                source,
                &key("p"),
                bad,
                "a probability in [0, 1]",
            ));
        }
        distinct(source, &key("p"), &p, |p| p_name(*p))?;
        let samples = t.samples.unwrap_or(16);
        if samples == 0 {
            return Err(out_of_range(source, &key("samples"), 0, "an integer >= 1"));
        }
        let write_labels = t.write_labels.unwrap_or(false);
        if write_labels && lattice.sites() > MAX_WRITTEN_SITES {
            return Err(config_error(
                source,
                &format!(
                    "[percolation] write_labels stores every site's label: {} sites is more than the {MAX_WRITTEN_SITES} it allows",
                    lattice.sites()
                ),
            ));
        }
        Ok(Percolation {
            lattice,
            kind: match kind {
                Kind::Site => Occupation::Site,
                Kind::Bond => Occupation::Bond,
            },
            p,
            samples,
            write_labels,
        })
    }

    fn check_sizes(&self, h: &Harness) -> Result<()> {
        sizes::check_sizes(self, h)
    }

    fn execute(&self, h: &Harness) -> Result<Report> {
        let world = h.world;
        let slab =
            Slab::new(self.lattice, world.size(), world.rank()).map_err(Error::Unavailable)?;
        let mut sampler = h.timed("setup", || Sampler::new(h, slab))?;
        let mut rows = Vec::new();
        let mut labels = Vec::new();
        for (index, &p) in self.p.iter().enumerate() {
            let phase = format!("samples p={p}");
            let block = self.samples.div_ceil(10);
            let mut percolating = 0;
            let found = h.timed(&phase, || {
                h.trials("percolation", self.samples as usize, |s| {
                    let key = stream_key(h.run.seed, SAMPLE_STREAM + s as u64);
                    let (stats, timing) = sampler.sample(world, self.kind, key, p)?;
                    percolating += u64::from(stats.percolates_any != 0);
                    let done = s as u64 + 1;
                    if done.is_multiple_of(block) || done == self.samples {
                        log::info!(
                            "percolation: p = {p}: {done} of {} samples, {percolating} with a percolating cluster",
                            self.samples
                        );
                    }
                    Ok(Row {
                        p_index: index,
                        sample: s as u64,
                        stats,
                        timing,
                    })
                })
            })?;
            rows.extend(found);
            if self.write_labels {
                labels.extend(sampler.gather_labels(world)?);
            }
        }
        let floor = sampler.floor(world, self.lattice.sites());
        let mut report = Report::new();
        report::report(&mut report, self, h.run.seed, (&rows, floor), &labels);
        Ok(report)
    }
}

/// Purpose tag of the samples' random streams (`rng::stream_key`); sample s uses tag + s.
const SAMPLE_STREAM: u64 = 0x7065_7263_0000_0000;
