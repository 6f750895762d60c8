//! The Graph500 statistics block (the reference's field names, order and number formats) and
//! the per-search datasets, as parts of the run's one `Report`.

use super::comm_model::{bytes_1d, bytes_2d, LevelLoad};
use super::search::{Direction, LevelStats};
use super::Trial;
use crate::graph::build::Built;
use crate::report::{Report, Section};
use crate::stats::{Summary, Teps};

/// A value of the statistics block: printed as the reference prints it.
pub enum Value {
    Int(u64),
    /// printf's %g
    G(f64),
    /// printf's %.11g (edge counts)
    G11(f64),
}

impl Value {
    pub fn number(&self) -> f64 {
        match *self {
            Value::Int(i) => i as f64,
            Value::G(x) | Value::G11(x) => x,
        }
    }
}

/// The statistics block, with the Graph500 reference's field names, in its order.
pub fn statistics_block(
    ranks: usize,
    built: &Built,
    trials: &[Trial],
) -> Vec<(&'static str, Value)> {
    let times: Vec<f64> = trials.iter().map(|t| t.time).collect();
    let nedges: Vec<u64> = trials.iter().map(|t| t.nedge).collect();
    let nedge_f: Vec<f64> = nedges.iter().map(|&m| m as f64).collect();
    let validate: Vec<f64> = trials.iter().map(|t| t.validate_time).collect();
    let (t, m, v) = (
        Summary::of(&times),
        Summary::of(&nedge_f),
        Summary::of(&validate),
    );
    let teps = Teps::of(&times, &nedges);
    // log2 N and M / N: fractions for graphs that are not Kronecker's.
    let n = built.graph.n() as f64;
    let whole_or_g = |x: f64| {
        if x.fract() == 0.0 {
            Value::Int(x as u64)
        } else {
            Value::G(x)
        }
    };
    let scale = whole_or_g(n.log2());
    let edgefactor = whole_or_g(built.graph.num_input_edges as f64 / n);
    use Value::*;
    vec![
        ("SCALE", scale),
        ("edgefactor", edgefactor),
        ("NBFS", Int(trials.len() as u64)),
        ("graph_generation", G(built.generation)),
        ("num_mpi_processes", Int(ranks as u64)),
        ("construction_time", G(built.construction)),
        ("bfs  min_time", G(t.min)),
        ("bfs  firstquartile_time", G(t.first_quartile)),
        ("bfs  median_time", G(t.median)),
        ("bfs  thirdquartile_time", G(t.third_quartile)),
        ("bfs  max_time", G(t.max)),
        ("bfs  mean_time", G(t.mean)),
        ("bfs  stddev_time", G(t.stddev)),
        ("min_nedge", G11(m.min)),
        ("firstquartile_nedge", G11(m.first_quartile)),
        ("median_nedge", G11(m.median)),
        ("thirdquartile_nedge", G11(m.third_quartile)),
        ("max_nedge", G11(m.max)),
        ("mean_nedge", G11(m.mean)),
        ("stddev_nedge", G11(m.stddev)),
        ("bfs  min_TEPS", G(teps.min)),
        ("bfs  firstquartile_TEPS", G(teps.first_quartile)),
        ("bfs  median_TEPS", G(teps.median)),
        ("bfs  thirdquartile_TEPS", G(teps.third_quartile)),
        ("bfs  max_TEPS", G(teps.max)),
        ("bfs  harmonic_mean_TEPS", G(teps.harmonic_mean)),
        ("bfs  harmonic_stddev_TEPS", G(teps.harmonic_stddev)),
        ("bfs  min_validate", G(v.min)),
        ("bfs  firstquartile_validate", G(v.first_quartile)),
        ("bfs  median_validate", G(v.median)),
        ("bfs  thirdquartile_validate", G(v.third_quartile)),
        ("bfs  max_validate", G(v.max)),
        ("bfs  mean_validate", G(v.mean)),
        ("bfs  stddev_validate", G(v.stddev)),
    ]
}

/// The reference's block into `report`: each figure stored as an attribute of `/bfs` (as a
/// number) and printed as the reference prints it, at its fixed column with its `!` marker.
/// The `Report`'s own block aligns its values on its longest name, so the reference's lines
/// are its headlines, printed before it, and the figures are stored only.
pub fn graph500_block(report: &mut Report, ranks: usize, built: &Built, trials: &[Trial]) {
    let block = statistics_block(ranks, built, trials);
    for (name, value) in &block {
        report.headline(format_line(name, value));
    }
    let mut r = report.group("bfs");
    for (name, value) in &block {
        r.number(name, value.number(), "").stored_only();
    }
}

/// One line of the block, laid out as the reference's `fprintf` does (value at column 32; the
/// harmonic mean carries the reference's `!` marker).
pub fn format_line(name: &str, value: &Value) -> String {
    let text = match *value {
        Value::Int(i) => i.to_string(),
        Value::G(x) => format_g(x, 6),
        Value::G11(x) => format_g(x, 11),
    };
    if name == "bfs  harmonic_mean_TEPS" {
        format!("{:<29}!  {text}", format!("{name}:"))
    } else {
        format!("{:<32}{text}", format!("{name}:"))
    }
}

/// printf's `%.{precision}g`: shortest of fixed and scientific, trailing zeros removed.
pub fn format_g(x: f64, precision: usize) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x == 0.0 { "0".into() } else { format!("{x}") };
    }
    let sci = format!("{:.*e}", precision - 1, x);
    let (mantissa, exp) = sci.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    let trim = |s: &str| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= precision as i32 {
        format!(
            "{}e{}{:02}",
            trim(mantissa),
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    } else {
        trim(&format!("{:.*}", (precision as i32 - 1 - exp) as usize, x))
    }
}

/// The per-search and per-level datasets into `/bfs` (`r`). `grid`: the process grid the 2D
/// model assumes (the run's, or the most square one of its ranks for a 1D run).
pub fn trial_datasets(r: &mut Section, trials: &[Trial], n: u64, grid: (usize, usize)) {
    let col = |f: &dyn Fn(&Trial) -> f64| trials.iter().map(f).collect::<Vec<f64>>();
    r.data("roots", trials.iter().map(|t| t.root).collect::<Vec<_>>());
    r.data("time", col(&|t| t.time));
    r.data("time_with_copy_to_host", col(&|t| t.with_copy));
    r.data("nedge", trials.iter().map(|t| t.nedge).collect::<Vec<_>>());
    r.data("teps", col(&|t| t.nedge as f64 / t.time));
    r.data("validate_time", col(&|t| t.validate_time));
    r.data(
        "num_levels",
        trials
            .iter()
            .map(|t| t.levels.len() as u32)
            .collect::<Vec<_>>(),
    );
    let rows: Vec<(u32, u32, &LevelStats)> = trials
        .iter()
        .enumerate()
        .flat_map(|(i, t)| {
            t.levels
                .iter()
                .enumerate()
                .map(move |(l, s)| (i as u32, l as u32, s))
        })
        .collect();
    let mut per_level = r.subgroup("per_level");
    per_level.data("root_index", rows.iter().map(|r| r.0).collect::<Vec<_>>());
    per_level.data("level", rows.iter().map(|r| r.1).collect::<Vec<_>>());
    per_level.data(
        "direction",
        rows.iter()
            .map(|r| u8::from(r.2.direction == Direction::BottomUp))
            .collect::<Vec<_>>(),
    );
    let u = |f: fn(&LevelStats) -> u64| rows.iter().map(|r| f(r.2)).collect::<Vec<_>>();
    let s = |f: fn(&LevelStats) -> f64| rows.iter().map(|r| f(r.2)).collect::<Vec<_>>();
    per_level.data("frontier_vertices", u(|l| l.frontier_vertices));
    per_level.data("frontier_edges", u(|l| l.frontier_edges));
    per_level.data("edges_inspected", u(|l| l.edges_inspected));
    per_level.data("time_local", s(|l| l.t_local));
    per_level.data("time_exchange", s(|l| l.t_exchange));
    per_level.data("bytes_exchanged", u(|l| l.bytes_exchanged));
    per_level.data("bytes_sent_max_rank", u(|l| l.bytes_sent));
    per_level.data("bytes_received_max_rank", u(|l| l.bytes_received));
    let loads = level_loads(trials);
    let (rows, cols) = grid;
    let model = |f: &dyn Fn(&LevelLoad) -> u64| loads.iter().map(f).collect::<Vec<u64>>();
    per_level.data("model_bytes_1d", model(&|l| bytes_1d(n, rows * cols, l)));
    per_level.data("model_bytes_2d", model(&|l| bytes_2d(n, rows, cols, l)));
    per_level.data("time_reduce", s(|l| l.t_reduce));
    per_level.data("time_local_mean", s(|l| l.t_local_mean));
    per_level.data("time_exchange_min", s(|l| l.t_exchange_min));
    if trials.iter().any(|t| !t.depths.is_empty()) {
        let depths: Vec<i32> = trials
            .iter()
            .flat_map(|t| t.depths.iter().copied())
            .collect();
        debug_assert_eq!(depths.len() as u64, n * trials.len() as u64);
        r.data_2d("depth", trials.len(), depths);
    }
}

/// Every level of every search as the communication model reads it, in the order of the
/// per-level rows.
fn level_loads(trials: &[Trial]) -> Vec<LevelLoad> {
    trials
        .iter()
        .flat_map(|t| {
            t.levels.iter().enumerate().map(|(k, l)| LevelLoad {
                direction: l.direction,
                frontier_vertices: l.frontier_vertices,
                frontier_edges: l.frontier_edges,
                found: t.levels.get(k + 1).map_or(0, |next| next.frontier_vertices),
            })
        })
        .collect()
}

/// Where a search's time goes and what it moves, as means per search over `trials`, shown
/// beside the statistics block (the weak-scaling study, scripts/weak-scaling-bfs.sh): each
/// level's local work (slowest rank; its excess over the ranks' mean is load imbalance),
/// exchanges (slowest rank; the least rank's is mostly transfer, the difference mostly
/// waiting), the reduction that agrees on the next direction; the bytes the busiest rank
/// sent against the communication model's share of one rank (`grid`: the model's 2D grid,
/// `two_d`: whether the run was 2D).
pub fn phase_summary(r: &mut Section, trials: &[Trial], n: u64, grid: (usize, usize), two_d: bool) {
    let searches = trials.len().max(1) as f64;
    let levels = || trials.iter().flat_map(|t| t.levels.iter());
    let per_search = |f: fn(&LevelStats) -> f64| levels().map(f).sum::<f64>() / searches;
    let local = per_search(|l| l.t_local);
    let imbalance = per_search(|l| l.t_local - l.t_local_mean);
    let exchange = per_search(|l| l.t_exchange);
    let wait = per_search(|l| l.t_exchange - l.t_exchange_min);
    let reduce = per_search(|l| l.t_reduce);
    let sent = per_search(|l| l.bytes_sent as f64);
    let (rows, cols) = grid;
    let ranks = (rows * cols) as f64;
    let model: u64 = level_loads(trials)
        .iter()
        .map(|l| match two_d {
            true => bytes_2d(n, rows, cols, l),
            false => bytes_1d(n, rows * cols, l),
        })
        .sum();
    let model = model as f64 / ranks / searches;
    let level_count = levels().count() as f64 / searches;
    let figures = [
        ("search_local_seconds", local, "s"),
        ("search_imbalance_seconds", imbalance, "s"),
        ("search_exchange_seconds", exchange, "s"),
        ("search_exchange_wait_seconds", wait, "s"),
        ("search_direction_agreement_seconds", reduce, "s"),
        ("search_levels", level_count, ""),
        ("bytes_sent_per_rank_per_search", sent, "bytes"),
        ("model_bytes_per_rank_per_search", model, "bytes"),
    ];
    for (name, value, unit) in figures {
        r.number(name, value, unit).shown_as(format_g(value, 4));
    }
}

#[cfg(test)]
mod tests {
    use super::format_g;

    #[test]
    fn format_g_matches_printf() {
        assert_eq!(format_g(2.87e7, 6), "2.87e+07");
        assert_eq!(format_g(0.6, 6), "0.6");
        assert_eq!(format_g(3.8123456, 6), "3.81235");
        assert_eq!(format_g(123456.0, 6), "123456");
        assert_eq!(format_g(1234567.0, 6), "1.23457e+06");
        assert_eq!(format_g(0.0001234, 6), "0.0001234");
        assert_eq!(format_g(0.00001234, 6), "1.234e-05");
        assert_eq!(format_g(4294921166.0, 11), "4294921166");
        assert_eq!(format_g(-1.0, 6), "-1");
    }
}
