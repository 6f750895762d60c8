//! Percolation results: per-p summaries (percolation probability per axis with its binomial
//! error sqrt(R(1-R)/n); means with standard errors), rendered once into the run's report:
//! the statistics block and the `/percolation` group of the result file.

use super::sampler::{Floor, Timing, LABEL_FLOOR_BYTES};
use super::{p_name, Percolation};
use crate::lattice::clusters::SIZE_BINS;
use crate::lattice::{ClusterStats, Occupation};
use crate::report::{Report, Section};

/// One sample's figures.
pub struct Row {
    pub p_index: usize,
    pub sample: u64,
    pub stats: ClusterStats,
    /// The labelling's seconds (slowest rank), its boundary merge's among them.
    pub timing: Timing,
}

impl Row {
    fn largest_fraction(&self, sites: u64) -> f64 {
        self.stats.largest.size as f64 / sites as f64
    }
}

/// Mean and standard error of the mean.
fn mean_error(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// The figures of one p over its samples.
struct Summary {
    p: f64,
    /// Per axis: the share of samples where some cluster percolates, and its error.
    probability: Vec<(f64, f64)>,
    /// Per axis: the share where the largest cluster does.
    largest_probability: Vec<f64>,
    largest_fraction: (f64, f64),
    mean_cluster_size: (f64, f64),
    ns_per_site: f64,
}

fn summarise(cfg: &Percolation, p_index: usize, rows: &[&Row]) -> Summary {
    let n = rows.len() as f64;
    let share = |bit: &dyn Fn(&Row) -> bool| rows.iter().filter(|r| bit(r)).count() as f64 / n;
    let axes = 0..cfg.lattice.dim;
    let probability = axes
        .clone()
        .map(|a| {
            let r = share(&|row| row.stats.percolates_any & (1 << a) != 0);
            (r, (r * (1.0 - r) / n).sqrt())
        })
        .collect();
    let largest_probability = axes
        .map(|a| share(&|row| row.stats.largest.percolates & (1 << a) != 0))
        .collect();
    let sites = cfg.lattice.sites();
    let fractions: Vec<f64> = rows.iter().map(|r| r.largest_fraction(sites)).collect();
    let sizes: Vec<f64> = rows
        .iter()
        .map(|r| r.stats.mean_size_without_largest())
        .collect();
    let seconds = rows.iter().map(|r| r.timing.seconds).sum::<f64>() / n;
    Summary {
        p: cfg.p[p_index],
        probability,
        largest_probability,
        largest_fraction: mean_error(&fractions),
        mean_cluster_size: mean_error(&sizes),
        ns_per_site: seconds / sites as f64 * 1e9,
    }
}

fn kind_name(kind: Occupation) -> &'static str {
    match kind {
        Occupation::Site => "site",
        Occupation::Bond => "bond",
    }
}

fn boundary_name(cfg: &Percolation) -> &'static str {
    if cfg.lattice.periodic {
        "periodic"
    } else {
        "open"
    }
}

/// `/percolation`: the settings (printed as the lattice line and the samples per p), one
/// line per p, one row per (p, sample), `summary/` one row per p, the labelling's memory
/// floor on GPUs, and `labels` (p, site) when asked for.
pub fn report(
    report: &mut Report,
    cfg: &Percolation,
    seed: u64,
    (rows, floor): (&[Row], Option<Floor>),
    labels: &[u64],
) {
    let summaries: Vec<Summary> = (0..cfg.p.len())
        .map(|i| {
            let mine: Vec<&Row> = rows.iter().filter(|r| r.p_index == i).collect();
            summarise(cfg, i, &mine)
        })
        .collect();
    let lattice = cfg.lattice;
    let mut g = report.group("percolation");
    g.text("lattice", if lattice.dim == 2 { "2d" } else { "3d" })
        .shown_as(format!(
            "{}D {} ({} sites), {} percolation, {} boundaries",
            lattice.dim,
            lattice.sides(),
            lattice.sites(),
            kind_name(cfg.kind),
            boundary_name(cfg)
        ));
    g.count("dim", lattice.dim as u64).stored_only();
    g.count("l", lattice.l).stored_only();
    g.count("length", lattice.length).stored_only();
    g.count("sites", lattice.sites()).stored_only();
    g.text("kind", kind_name(cfg.kind)).stored_only();
    g.text("boundary", boundary_name(cfg)).stored_only();
    g.count("samples", cfg.samples).stored_only();
    g.shown_only("samples per p", cfg.samples.to_string());
    g.count("seed", seed).stored_only();
    g.list("p_values", &cfg.p, "").stored_only();
    let word = if lattice.periodic {
        "wrapping"
    } else {
        "spanning"
    };
    for s in &summaries {
        let per_axis: Vec<String> = s
            .probability
            .iter()
            .map(|(r, e)| format!("{r:.4} ± {e:.4}"))
            .collect();
        let against_floor = floor
            .map(|f| {
                format!(
                    " ({:.1}x the memory floor: the time to move {:.0} bytes a site at the copy rate of {:.3e} bytes/s)",
                    s.ns_per_site / f.ns_per_site,
                    s.ns_per_site / f.ns_per_site * LABEL_FLOOR_BYTES,
                    f.copy_rate
                )
            })
            .unwrap_or_default();
        g.shown_only(
            &p_name(s.p),
            format!(
                "{word} per axis [{}], largest cluster fraction {:.5} ± {:.5}, mean cluster size {:.4} ± {:.4}, labelling {:.4} ns/site{against_floor}",
                per_axis.join(", "),
                s.largest_fraction.0,
                s.largest_fraction.1,
                s.mean_cluster_size.0,
                s.mean_cluster_size.1,
                s.ns_per_site
            ),
        );
    }
    if let Some(f) = floor {
        g.rate("device_copy_bytes_per_second", f.copy_rate, "bytes/s");
        g.fixed("label_floor_ns_per_site", f.ns_per_site, 4, "ns/site");
    }
    samples(&mut g, cfg, rows);
    summary(&mut g.subgroup("summary"), &summaries);
    if !labels.is_empty() {
        g.data_2d("labels", cfg.p.len(), labels);
    }
}

/// One row per (p, sample).
fn samples(g: &mut Section, cfg: &Percolation, rows: &[Row]) {
    let col = |f: &dyn Fn(&Row) -> u64| rows.iter().map(f).collect::<Vec<u64>>();
    let colf = |f: &dyn Fn(&Row) -> f64| rows.iter().map(f).collect::<Vec<f64>>();
    let bits = |f: &dyn Fn(&Row) -> u8| rows.iter().map(f).collect::<Vec<u8>>();
    let sites = cfg.lattice.sites();
    g.data("p", colf(&|r| cfg.p[r.p_index]));
    g.data("sample", col(&|r| r.sample));
    g.data("clusters", col(&|r| r.stats.clusters));
    g.data("occupied_sites", col(&|r| r.stats.sites));
    g.data("largest", col(&|r| r.stats.largest.size));
    g.data("largest_label", col(&|r| r.stats.largest.label));
    g.data("sum_squares", col(&|r| r.stats.sum_squares));
    g.data("largest_fraction", colf(&|r| r.largest_fraction(sites)));
    g.data(
        "mean_cluster_size",
        colf(&|r| r.stats.mean_size_without_largest()),
    );
    g.data("percolates_any", bits(&|r| r.stats.percolates_any));
    g.data("percolates_largest", bits(&|r| r.stats.largest.percolates));
    g.data("label_seconds", colf(&|r| r.timing.seconds));
    g.data("merge_seconds", colf(&|r| r.timing.merge_seconds));
    g.data("merge_bytes", col(&|r| r.timing.merge_bytes));
    g.data("merge_join_seconds", colf(&|r| r.timing.merge_join_seconds));
    debug_assert!(rows.iter().all(|r| r.stats.histogram.len() == SIZE_BINS));
    let histograms: Vec<u64> = rows
        .iter()
        .flat_map(|r| r.stats.histogram.iter().copied())
        .collect();
    g.data_2d("size_histogram", rows.len(), histograms);
}

/// `summary/`: one row per p (per axis: one column per axis).
fn summary(s: &mut Section, summaries: &[Summary]) {
    let n = summaries.len();
    let per_axis =
        |f: &dyn Fn(&Summary) -> Vec<f64>| summaries.iter().flat_map(f).collect::<Vec<f64>>();
    let per_p = |f: &dyn Fn(&Summary) -> f64| summaries.iter().map(f).collect::<Vec<f64>>();
    s.data("p", per_p(&|s| s.p));
    s.data_2d(
        "probability",
        n,
        per_axis(&|s| s.probability.iter().map(|x| x.0).collect()),
    );
    s.data_2d(
        "probability_error",
        n,
        per_axis(&|s| s.probability.iter().map(|x| x.1).collect()),
    );
    s.data_2d(
        "largest_probability",
        n,
        per_axis(&|s| s.largest_probability.clone()),
    );
    s.data("largest_fraction", per_p(&|s| s.largest_fraction.0));
    s.data("largest_fraction_error", per_p(&|s| s.largest_fraction.1));
    s.data("mean_cluster_size", per_p(&|s| s.mean_cluster_size.0));
    s.data("mean_cluster_size_error", per_p(&|s| s.mean_cluster_size.1));
    s.data("ns_per_site", per_p(&|s| s.ns_per_site));
}
