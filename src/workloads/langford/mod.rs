//! Langford pair counting, L(2,n): Godfrey's algebraic sum and Miller's tree search, each on
//! the CPU (rayon) or a GPU, run as an MPI task farm with a resumable ledger.

pub mod godfrey;
pub mod godfrey_gpu;
pub mod job;
pub mod miller;
pub mod wide;

use crate::config::out_of_range;
use crate::device::memory::{check, host_available, Place};
use crate::device::Selected;
use crate::error::{Error, Result};
use crate::comm::Op;
use crate::farm::ledger::{stored_job, Entry, Job, Ledger};
use crate::farm::{self, Solver};
use crate::graph::source::GraphConfig;
use crate::harness::{Harness, Workload};
use crate::report::Report;
use godfrey::Godfrey;
use job::{Header, Work};
use miller::MillerTasks;
use serde::{Deserialize, Serialize};
use std::time::Instant;
use wide::Wide;

pub use crate::farm::FarmMode;

/// `[langford]`: Langford pair counting. Also the `tessera langford` flags.
#[derive(Debug, Default, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct LangfordTable {
    /// Count L(2,n) for this n (1 to 32)
    #[arg(long, allow_negative_numbers = true)]
    pub n: Option<i64>,
    /// Godfrey's algebraic sum or Miller's tree search
    #[arg(long, value_enum)]
    pub method: Option<LangfordMethod>,
    /// Task size: outer positions fixed per task (Godfrey, even, 4..=2n) or tree levels
    /// placed per task (Miller, 1..=n)
    #[arg(long)]
    pub depth: Option<u32>,
    /// Task farm: rank-strided (static) or served by rank 0 on request (dynamic)
    #[arg(long, value_enum)]
    pub farm: Option<FarmMode>,
    /// Godfrey: skip sub-cubes where an odd S_i is zero at every point (true), or zero test
    /// every point (false, the default: pruning measured slower on the CPU and the GPU)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub prune: Option<bool>,
    /// Continue from the task ledger in the output file, skipping finished tasks
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub resume: Option<bool>,
    /// Run at most this many tasks, spread evenly over the task range, then save the ledger
    /// and stop (a measured slice, projected to the whole run; continue later with --resume)
    #[arg(long)]
    pub stop_after: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LangfordMethod {
    Godfrey,
    Miller,
}

impl LangfordMethod {
    /// The name a ledger stores.
    fn name(self) -> String {
        format!("{self:?}").to_lowercase()
    }

    /// The method a ledger names, if any.
    fn named(name: &str) -> Option<LangfordMethod> {
        [LangfordMethod::Godfrey, LangfordMethod::Miller]
            .into_iter()
            .find(|m| m.name() == name)
    }
}

/// Largest Langford n: 2n positions in one 64-bit mask.
pub const MAX_N: u32 = 32;

/// Langford counting, configured.
#[derive(Debug, Clone)]
pub struct Langford {
    pub n: u32,
    pub method: LangfordMethod,
    /// The task depth given (checked against n), or None for the default (`task_depth`).
    pub depth: Option<u32>,
    pub farm: FarmMode,
    pub prune: bool,
    pub resume: bool,
    pub stop_after: Option<u64>,
}

impl Workload for Langford {
    const NAME: &'static str = "langford";
    const ABOUT: &'static str =
        "Count Langford pairings L(2,n) with an MPI task farm (Godfrey's sum or Miller's search)";
    type Table = LangfordTable;

    fn configure(source: &str, t: LangfordTable, _: Option<GraphConfig>) -> Result<Self> {
        let n = t.n.ok_or_else(|| Error::Config {
            file: source.to_string(),
            msg: "[langford] n is missing: expected an integer from 1 to 32 (--n N)".into(),
        })?;
        let expected_n = format!("an integer from 1 to {MAX_N}");
        let n = u32::try_from(n)
            .ok()
            .filter(|n| (1..=MAX_N).contains(n))
            .ok_or_else(|| out_of_range(source, "[langford] n", n, &expected_n))?;
        let method = t.method.unwrap_or(LangfordMethod::Godfrey);
        if let Some(depth) = t.depth {
            check_depth(source, n, method, depth)?;
        }
        if t.stop_after == Some(0) {
            return Err(out_of_range(
                source,
                "[langford] stop_after",
                0,
                "an integer >= 1",
            ));
        }
        Ok(Langford {
            n,
            method,
            depth: t.depth,
            farm: t.farm.unwrap_or(FarmMode::Dynamic),
            prune: t.prune.unwrap_or(false),
            resume: t.resume.unwrap_or(false),
            stop_after: t.stop_after,
        })
    }

    fn check_sizes(&self, h: &Harness) -> Result<()> {
        check_tasks(self, task_depth(self, h)?, h.world.local_size())
    }

    /// An existing output is this run's ledger to continue with `--resume` (without it, the
    /// harness refuses it unless `--force`).
    fn resumes_output(&self) -> bool {
        self.resume
    }

    fn execute(&self, h: &Harness) -> Result<Report> {
        count(h, self)
    }
}

/// Bytes a task costs: its entry in the task list (every rank), and on rank 0 its ledger
/// entry and its rows in the report (counted on every rank: rank 0 is the bound).
const TASK_BYTES: u64 = 16 + 256;

/// Tasks of Godfrey's method at `depth` (an upper bound: the 2^depth outer signatures in
/// orbits of mostly 8, the symmetric ones fewer).
fn godfrey_tasks(n: u32, depth: u32) -> u64 {
    if solvable(n) {
        (1u64 << depth.min(63)) / 4 + 1
    } else {
        0
    }
}

/// Miller's tasks are counted up to this many per depth; beyond, estimated.
const MILLER_COUNTED: u64 = 1 << 22;

/// Miller's task counts at depths 1..=depth: counted up to MILLER_COUNTED, beyond that
/// extrapolated by the last counted level's growth (an overestimate: the growth falls with
/// depth, as fewer positions are left), so the check stays within a second or two.
fn miller_tasks(n: u32, depth: u32) -> Vec<u64> {
    let mut counts: Vec<u64> = Vec::new();
    let mut growth = 1.0f64;
    for d in 1..=depth {
        let previous = counts.last().copied().unwrap_or(1);
        let count = MillerTasks::count(n, d, MILLER_COUNTED).unwrap_or_else(|| {
            let estimate = (previous as f64 * growth.max(1.0)).max(MILLER_COUNTED as f64 + 1.0);
            estimate.min(u64::MAX as f64) as u64
        });
        if previous > 0 && count <= MILLER_COUNTED {
            growth = count as f64 / previous as f64;
        }
        counts.push(count);
    }
    counts
}

/// Refuse a depth whose tasks cannot fit in the host memory of a node of `ranks` ranks,
/// naming the largest depth that fits.
fn check_tasks(cfg: &Langford, depth: u32, ranks: usize) -> Result<()> {
    let budget = host_available() / ranks.max(1) as u64;
    let cap = budget / TASK_BYTES;
    let what = format!(
        "L(2,{}) by {:?}'s method at depth {depth}",
        cfg.n, cfg.method
    );
    // (depth, tasks) for each depth up to the one asked for.
    let tasks: Vec<(u32, u64)> = match cfg.method {
        LangfordMethod::Godfrey => (4..=depth.max(4))
            .step_by(2)
            .map(|d| (d, godfrey_tasks(cfg.n, d)))
            .collect(),
        LangfordMethod::Miller => (1..=depth)
            .zip(miller_tasks(cfg.n, depth))
            .collect(),
    };
    let asked = tasks.last().map_or(0, |t| t.1);
    let fitting = || match tasks.iter().take_while(|t| t.1 <= cap).last() {
        Some((d, _)) => format!("the largest depth that fits is {d} (--depth {d})"),
        None => "no depth fits".into(),
    };
    let bytes = asked.saturating_mul(TASK_BYTES);
    check(&what, bytes, Place::Host { ranks }, |_| fitting())
}

/// A task depth given for `n`, checked (`depth_expected`).
fn check_depth(source: &str, n: u32, method: LangfordMethod, depth: u32) -> Result<()> {
    match depth_expected(n, method, u64::from(depth)) {
        Some(expected) => Err(out_of_range(source, "[langford] depth", depth, &expected)),
        None => Ok(()),
    }
}

/// What a task depth for `n` must be, where `depth` is not: Godfrey's even in 4..=2n (any
/// depth for the n whose sum is zero by symmetry: they need no tasks), Miller's in 1..=n.
fn depth_expected(n: u32, method: LangfordMethod, depth: u64) -> Option<String> {
    let n64 = u64::from(n);
    match method {
        LangfordMethod::Godfrey if !solvable(n) => None,
        LangfordMethod::Godfrey if depth.is_multiple_of(2) && (4..=2 * n64).contains(&depth) => {
            None
        }
        LangfordMethod::Godfrey => Some(format!(
            "an even integer from 4 to 2n = {} for Godfrey's method",
            2 * n
        )),
        LangfordMethod::Miller if (1..=n64).contains(&depth) => None,
        LangfordMethod::Miller => Some(format!("an integer from 1 to n = {n} for Miller's method")),
    }
}

/// Whether L(2,n) can be non-zero (n ≡ 0, 3 mod 4).
fn solvable(n: u32) -> bool {
    n.is_multiple_of(4) || n % 4 == 3
}

/// The run's task depth (collective): the one given; else, when resuming, the ledger's for
/// the same n and method (the
/// default depends on the ranks and devices, which may differ from the interrupted run's);
/// else the default for the slowest rank's device (`default_godfrey_depth`; Miller: 3 levels).
fn task_depth(cfg: &Langford, h: &Harness) -> Result<u32> {
    if let Some(depth) = cfg.depth {
        return Ok(depth);
    }
    if cfg.resume {
        let stored = h
            .world
            .is_root()
            .then(|| stored_job::<Header>(&h.run.output))
            .transpose();
        // A ledger of another n or method is refused when the farm opens it.
        let stored = h
            .world
            .agree(stored)?
            .flatten()
            .filter(|job| job.n == cfg.n && job.method == cfg.method.name())
            .map_or(0, |job| job.depth);
        let stored = h.world.allreduce(stored, Op::Max);
        if stored > 0 {
            return Ok(stored);
        }
    }
    Ok(match cfg.method {
        LangfordMethod::Godfrey => {
            let rate = h.world.allreduce(points_per_second(&h.device), Op::Min);
            default_godfrey_depth(cfg.n, h.world.size() as u64, rate)
        }
        LangfordMethod::Miller => cfg.n.min(3),
    })
}

/// Tasks the default depth gives each rank at least: enough for the dynamic farm to balance
/// the last tasks and for a killed run to lose little.
const TASKS_PER_RANK: u64 = 32;
/// Longest a task may take by default on the slowest rank, in seconds: a killed run loses
/// at most this much per rank, and progress moves at least this often.
const TASK_SECONDS: f64 = 60.0;
/// Most tasks the default makes: rank 0 keeps each in its ledger and rewrites it.
const MAX_DEFAULT_TASKS: u64 = 1 << 22;

/// Godfrey points a rank walks per second, for the default depth only (measured, unpruned:
/// 4.4e7 per thread on the 2-core CI host, 2.3e11 on one H100; docs/benchmarks.md).
fn points_per_second(device: &Selected) -> f64 {
    match device {
        Selected::Cpu => 4.4e7 * rayon::current_num_threads() as f64,
        Selected::Gpu(_) => 2.3e11,
    }
}

/// Godfrey's default depth: the smallest even depth giving TASKS_PER_RANK tasks per rank
/// whose tasks take at most TASK_SECONDS at `rate` points/s, within MAX_DEFAULT_TASKS.
/// (A depth d makes about 2^d / 8 tasks of 2^(2n-d) points.)
pub fn default_godfrey_depth(n: u32, ranks: u64, rate: f64) -> u32 {
    let tasks = |d: u32| (1u64 << d) / 8;
    let seconds = |d: u32| (2.0f64).powi((2 * n - d) as i32) / rate;
    let mut depth = 4;
    while depth + 2 <= 2 * n
        && tasks(depth + 2) <= MAX_DEFAULT_TASKS
        && (tasks(depth) < TASKS_PER_RANK * ranks || seconds(depth) > TASK_SECONDS)
    {
        depth += 2;
    }
    depth
}

struct GodfreyCpu<'a>(&'a Godfrey);

impl Solver<Work> for GodfreyCpu<'_> {
    fn run(&mut self, task: usize) -> Result<Work> {
        let sum = self.0.run_cpu(task);
        Ok(Work {
            words: sum.words,
            points: 1 << self.0.inner(),
            visited: sum.visited,
        })
    }
}

/// Miller's result as farm work: twice the count, and its tree nodes (all visited).
fn miller_work(count: u64, nodes: u64) -> Work {
    Work {
        words: vec![count, 0],
        points: nodes,
        visited: nodes,
    }
}

struct MillerCpu<'a>(&'a MillerTasks);

impl Solver<Work> for MillerCpu<'_> {
    fn run(&mut self, task: usize) -> Result<Work> {
        let (count, nodes) = self.0.count_cpu(task as u64);
        Ok(miller_work(count, nodes))
    }
}

struct MillerOnGpu<'a> {
    tasks: &'a MillerTasks,
    gpu: miller::MillerGpu<'a>,
}

impl Solver<Work> for MillerOnGpu<'_> {
    fn run(&mut self, task: usize) -> Result<Work> {
        let (count, nodes) = self.gpu.count(self.tasks, task as u64)?;
        Ok(miller_work(count, nodes))
    }
}

/// The method's tasks, and how their summed words become L(2,n).
enum Method {
    Godfrey(Godfrey),
    Miller(MillerTasks),
}

impl Method {
    fn tasks(&self) -> usize {
        match self {
            Method::Godfrey(g) => g.tasks().len(),
            Method::Miller(m) => m.len() as usize,
        }
    }

    fn words(&self) -> usize {
        match self {
            Method::Godfrey(g) => godfrey::words(g.n()),
            // Twice the count, which stays within a u64 for every n Miller can reach.
            Method::Miller(_) => 2,
        }
    }

    /// L(2,n) from the total, or why the total cannot be right.
    fn count(&self, n: u32, total: Wide<3>) -> std::result::Result<Wide<3>, String> {
        let (shift, what) = match self {
            Method::Godfrey(_) => (2 * n + 1, format!("2^{}", 2 * n + 1)),
            Method::Miller(_) => (1, "2".to_string()),
        };
        total.exact_shr(shift).ok_or_else(|| {
            format!(
                "the summed tasks ({}) are not divisible by {what}: the sum is wrong",
                total.unsigned_decimal()
            )
        })
    }

    fn solver<'a>(&'a self, selected: &'a Selected) -> Result<Box<dyn Solver<Work> + 'a>> {
        Ok(match (self, selected) {
            (Method::Godfrey(g), Selected::Cpu) => Box::new(GodfreyCpu(g)),
            (Method::Godfrey(g), Selected::Gpu(_)) if g.inner() < godfrey_gpu::PAIRED => {
                // depth 2n-2 or 2n: tasks of 4 points or 1, nothing for a GPU to do.
                log::info!("tasks of a few points: computing them on the CPU");
                Box::new(GodfreyCpu(g))
            }
            (Method::Godfrey(g), Selected::Gpu(gpu)) => {
                Box::new(godfrey_gpu::GodfreyGpu::new(gpu, g)?)
            }
            (Method::Miller(m), Selected::Cpu) => Box::new(MillerCpu(m)),
            (Method::Miller(m), Selected::Gpu(gpu)) => Box::new(MillerOnGpu {
                tasks: m,
                gpu: miller::MillerGpu::new(gpu, m)?,
            }),
        })
    }
}

/// Count L(2,n) as configured (collective): the farm runs the tasks not yet in the ledger,
/// rank 0 saving the ledger to the output file as they finish; the report holds the ledger
/// and, once every task is in, the count (only rank 0's is printed and written; the other
/// ranks' holds the job's figures).
fn count(h: &Harness, cfg: &Langford) -> Result<Report> {
    let world = h.world;
    let depth = task_depth(cfg, h)?;
    let method = h.timed("tasks", || {
        Ok(match cfg.method {
            LangfordMethod::Godfrey => {
                Method::Godfrey(Godfrey::new(cfg.n, depth).with_prune(cfg.prune))
            }
            LangfordMethod::Miller => Method::Miller(MillerTasks::new(cfg.n, depth)),
        })
    })?;
    let header = Header {
        n: cfg.n,
        method: cfg.method.name(),
        depth,
        words: method.words(),
        tasks: method.tasks(),
        prune: cfg.prune && cfg.method == LangfordMethod::Godfrey,
    };
    let ledger = world.is_root().then(|| {
        if cfg.resume {
            Ledger::resume(&h.run.output, header.clone())
        } else {
            Ok(Ledger::new(&h.run.output, header.clone()))
        }
    });
    let mut ledger = world.agree(ledger.transpose())?;
    let device = h.device_name();
    let devices = world.gather_strings(&device)?;
    // The ledger in progress carries the run's provenance as of its start.
    let provenance = h.provenance()?;
    log::info!(
        "langford: {header}, {:?} farm on {} ranks; rank 0 computes on {device}",
        cfg.farm,
        world.size()
    );
    let mut solver = method.solver(&h.device)?;
    let plan = farm::Plan {
        tasks: header.tasks,
        mode: cfg.farm,
        stop_after: cfg.stop_after.map(|k| k as usize),
    };
    let seconds = h.timed("farm", || {
        let started = Instant::now();
        let root = ledger
            .as_mut()
            .map(|l| (l, &provenance, devices.as_slice()));
        farm::run(world, &header, solver.as_mut(), plan, root, h.interrupt())?;
        Ok(started.elapsed().as_secs_f64())
    })?;
    let report = match &ledger {
        Some(ledger) => report(cfg, &method, ledger, &devices, seconds),
        None => {
            let mut report = Report::new();
            header.describe(&mut report.group(Header::GROUP));
            Ok(report)
        }
    };
    world.agree(report)
}

/// The finished count and this run's totals.
pub struct Totals {
    /// L(2,n) as little-endian words.
    pub count: Vec<u64>,
    pub count_decimal: String,
    /// Σ over the ledger before the final division, as words.
    pub total: Vec<u64>,
}

/// This run's share of one rank.
#[derive(Clone, Debug, Default)]
pub struct RankStats {
    pub device: String,
    pub points: u64,
    pub visited: u64,
    pub busy_seconds: f64,
    pub tasks: u64,
}

impl RankStats {
    pub fn points_per_second(&self) -> f64 {
        if self.busy_seconds > 0.0 {
            self.points as f64 / self.busy_seconds
        } else {
            0.0
        }
    }

    pub fn visited_per_second(&self) -> f64 {
        if self.busy_seconds > 0.0 {
            self.visited as f64 / self.busy_seconds
        } else {
            0.0
        }
    }
}

/// Rank 0's report: the ledger, this run's figures and each rank's share, and the count once
/// every task is in (a slice run by --stop-after gets the projected time of the whole run
/// instead).
fn report(
    cfg: &Langford,
    method: &Method,
    ledger: &Ledger<Header>,
    devices: &[String],
    seconds: f64,
) -> Result<Report> {
    let header = ledger.job();
    let fresh = &ledger.entries()[ledger.resumed()..];
    let mut report = Report::new();
    let done = ledger.entries().len();
    if done < header.tasks {
        // A slice (--stop-after): tasks spread over the range; the farm saved the ledger.
        report.headline(format!(
            "stopped after {} tasks (spread over the task range): {done} of {} done",
            fresh.len(),
            header.tasks
        ));
    } else {
        let totals = totals(method, header, ledger)?;
        report.headline(format!("L(2,{}) = {}", cfg.n, totals.count_decimal));
        if fresh.is_empty() {
            report.headline(format!(
                "every task ({done}) was already in the ledger {}: nothing left to run",
                ledger.path().display()
            ));
        }
        let mut r = report.group(Header::GROUP);
        r.text("count", &totals.count_decimal).stored_only();
        r.counts("count_words", &totals.count).stored_only();
        r.counts("total_words", &totals.total).stored_only();
    }
    ledger.report(&mut report);
    figures(&mut report, cfg, ledger, devices, seconds);
    Ok(report)
}

/// L(2,n) from the ledger's sum.
fn totals(method: &Method, header: &Header, ledger: &Ledger<Header>) -> Result<Totals> {
    let total = ledger
        .entries()
        .iter()
        .map(|e| Wide::<3>::from_words(&e.work.words))
        .fold(Wide::default(), Wide::wrapping_add);
    // Contributions are exact modulo 2^(64 words): keep that many words.
    let total = Wide::<3>::from_words(&total.0[..header.words]);
    let count = method.count(header.n, total).map_err(|e| {
        // The tasks read back are the ledger file's: name it, where the damage may be.
        Error::Unavailable(format!(
            "{e} ({} of the {} tasks read back from the ledger {})",
            ledger.resumed(),
            ledger.entries().len(),
            ledger.path().display()
        ))
    })?;
    Ok(Totals {
        count: count.0[..header.words].to_vec(),
        count_decimal: count.unsigned_decimal(),
        total: total.0[..header.words].to_vec(),
    })
}

/// This run's figures under /langford (tasks, seconds, points, visited, rates; a slice's
/// task times and projection) and /langford/ranks (each rank's share).
fn figures(
    report: &mut Report,
    cfg: &Langford,
    ledger: &Ledger<Header>,
    devices: &[String],
    seconds: f64,
) {
    let header = ledger.job();
    let fresh = &ledger.entries()[ledger.resumed()..];
    let ranks = rank_stats(devices, fresh);
    // (+ 0.0: an empty f64 sum is -0.0, printed with its sign)
    let points: f64 = fresh.iter().map(|e| e.work.points as f64).sum::<f64>() + 0.0;
    let visited: f64 = fresh.iter().map(|e| e.work.visited as f64).sum::<f64>() + 0.0;
    let (unit, rate) = match cfg.method {
        LangfordMethod::Godfrey => ("points", "points/s"),
        LangfordMethod::Miller => ("nodes", "nodes/s"),
    };
    let mut r = report.group(Header::GROUP);
    let resumed = ledger.resumed();
    r.count("tasks_run", fresh.len() as u64)
        .shown_as(format!("{} ({resumed} from the ledger)", fresh.len()));
    r.count("tasks_resumed", resumed as u64).stored_only();
    r.seconds("seconds", seconds);
    r.scientific("points", points, 4, unit);
    r.scientific("visited", visited, 4, unit);
    let miller = cfg.method == LangfordMethod::Miller;
    if miller {
        // Every tree node is visited: stored, not shown.
        r.stored_only();
    }
    r.fixed("visited_fraction", visited / points.max(1.0), 4, "");
    if miller {
        r.stored_only();
    }
    r.rate("points_per_second", points / seconds.max(1e-9), rate);
    if ledger.entries().len() < header.tasks {
        slice_figures(&mut r, header, fresh, ledger.entries().len(), seconds);
    }
    let mut g = r.subgroup("ranks");
    let column = |f: fn(&RankStats) -> f64| -> Vec<f64> { ranks.iter().map(f).collect() };
    g.data(
        "device",
        ranks.iter().map(|x| x.device.clone()).collect::<Vec<_>>(),
    );
    g.data("points", column(|x| x.points as f64));
    g.data("visited", column(|x| x.visited as f64));
    g.data("busy_seconds", column(|x| x.busy_seconds));
    g.data("tasks", column(|x| x.tasks as f64));
    g.data("points_per_second", column(RankStats::points_per_second));
    g.data("visited_per_second", column(RankStats::visited_per_second));
    for (i, s) in ranks.iter().enumerate() {
        g.shown_only(
            &format!("rank {i}"),
            format!(
                "{}: {} tasks, {} {unit} ({} visited) in {:.3} s busy, {:.4e} {unit}/s",
                s.device,
                s.tasks,
                s.points,
                s.visited,
                s.busy_seconds,
                s.points_per_second(),
            ),
        );
    }
}

/// A slice's task times and the projected time of the whole run.
fn slice_figures(
    r: &mut crate::report::Section,
    header: &Header,
    fresh: &[Entry<Work>],
    done: usize,
    seconds: f64,
) {
    let per_task = seconds / fresh.len().max(1) as f64;
    let busy: f64 = fresh.iter().map(|e| e.seconds).sum();
    let busy_per_task = busy / fresh.len().max(1) as f64;
    let fastest = fresh
        .iter()
        .map(|e| e.seconds)
        .fold(f64::INFINITY, f64::min);
    r.seconds("task_seconds_mean", busy_per_task);
    r.seconds(
        "task_seconds_min",
        if fresh.is_empty() { 0.0 } else { fastest },
    );
    r.seconds(
        "task_seconds_max",
        fresh.iter().map(|e| e.seconds).fold(0.0, f64::max),
    );
    r.seconds("projected_seconds", per_task * header.tasks as f64);
    r.seconds(
        "projected_seconds_left",
        per_task * (header.tasks - done) as f64,
    );
    r.seconds(
        "projected_device_seconds",
        busy_per_task * header.tasks as f64,
    );
}

/// This run's share of each rank, from the ledger entries it added.
fn rank_stats(devices: &[String], fresh: &[Entry<Work>]) -> Vec<RankStats> {
    let mut ranks: Vec<RankStats> = devices
        .iter()
        .map(|d| RankStats {
            device: d.clone(),
            ..Default::default()
        })
        .collect();
    for e in fresh {
        let r = &mut ranks[e.rank as usize];
        r.points += e.work.points;
        r.visited += e.work.visited;
        r.busy_seconds += e.seconds;
        r.tasks += 1;
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default depth gives every rank many tasks for every solvable n from 12 to 32, on
    /// 1 to 4 ranks of CPUs (1 to 64 threads) or GPUs, and tasks of at most TASK_SECONDS
    /// unless that would pass MAX_DEFAULT_TASKS. Task counts are Godfrey's own where the
    /// enumeration is quick, else 2^depth / 8 (orbits have at most 8 members: a lower bound).
    #[test]
    fn default_depth_gives_many_tasks_per_rank() {
        let rates = [4.4e7, 8.8e7, 64.0 * 4.4e7, 2.3e11];
        for n in (12..=32).filter(|&n| solvable(n)) {
            for ranks in 1..=4u64 {
                for &rate in &rates {
                    let depth = default_godfrey_depth(n, ranks, rate);
                    assert!(depth.is_multiple_of(2) && (4..=2 * n).contains(&depth));
                    let tasks = if depth <= 16 {
                        Godfrey::new(n, depth).tasks().len() as u64
                    } else {
                        (1u64 << depth) / 8
                    };
                    let what = format!("n {n}, {ranks} ranks at {rate:e} points/s: depth {depth}");
                    assert!(tasks >= TASKS_PER_RANK * ranks, "{what}: {tasks} tasks");
                    let seconds = 2f64.powi((2 * n - depth) as i32) / rate;
                    let capped = (1u64 << (depth + 2)) / 8 > MAX_DEFAULT_TASKS;
                    assert!(seconds <= TASK_SECONDS || capped, "{what}: {seconds} s a task");
                }
            }
        }
    }
}
