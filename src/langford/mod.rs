//! Langford pair counting, L(2,n): Godfrey's algebraic sum and Miller's tree search, each on
//! the CPU (rayon) or a GPU, run as an MPI task farm with a resumable ledger.

pub mod farm;
pub mod godfrey;
pub mod godfrey_gpu;
pub mod ledger;
pub mod miller;
pub mod wide;

use crate::config::out_of_range;
use crate::device::Selected;
use crate::error::{Error, Result};
use crate::graph::source::GraphConfig;
use crate::harness::{Harness, Workload};
use crate::output::{timestamp, Provenance};
use crate::report::Report;
use farm::{Solver, Work};
use godfrey::Godfrey;
use ledger::{Header, Ledger, RankStats, Totals};
use miller::MillerTasks;
use serde::{Deserialize, Serialize};
use std::time::Instant;
use wide::Wide;

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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FarmMode {
    Static,
    Dynamic,
}

/// Largest Langford n: 2n positions in one 64-bit mask.
pub const MAX_N: u32 = 32;

/// Langford counting, configured.
#[derive(Debug, Clone)]
pub struct Langford {
    pub n: u32,
    pub method: LangfordMethod,
    pub depth: u32,
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
        let depth = task_depth(source, n, method, t.depth)?;
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
            depth,
            farm: t.farm.unwrap_or(FarmMode::Dynamic),
            prune: t.prune.unwrap_or(false),
            resume: t.resume.unwrap_or(false),
            stop_after: t.stop_after,
        })
    }

    fn execute(&self, h: &Harness) -> Result<Report> {
        self.execute_unreported(h)?;
        Ok(Report::new())
    }
}

impl Langford {
    fn execute_unreported(&self, h: &Harness) -> Result<()> {
        count(h, self)
    }
}

/// The task depth given, or the method's default, checked against n.
fn task_depth(source: &str, n: u32, method: LangfordMethod, depth: Option<u32>) -> Result<u32> {
    match method {
        LangfordMethod::Godfrey => {
            // Default: tasks of about 2^38 points, a few seconds each on a GPU.
            let depth = depth.unwrap_or((2 * n).saturating_sub(38).max(4).min(2 * n));
            // n = 1, 2 (mod 4) need no tasks (the sum is zero by symmetry): any depth will do.
            let solvable = n.is_multiple_of(4) || n % 4 == 3;
            if !solvable || (depth.is_multiple_of(2) && (4..=2 * n).contains(&depth)) {
                return Ok(depth);
            }
            let expected = format!(
                "an even integer from 4 to 2n = {} for Godfrey's method",
                2 * n
            );
            Err(out_of_range(source, "[langford] depth", depth, &expected))
        }
        LangfordMethod::Miller => {
            let depth = depth.unwrap_or(n.min(3));
            if (1..=n).contains(&depth) {
                return Ok(depth);
            }
            let expected = format!("an integer from 1 to n = {n} for Miller's method");
            Err(out_of_range(source, "[langford] depth", depth, &expected))
        }
    }
}

struct GodfreyCpu<'a>(&'a Godfrey);

impl Solver for GodfreyCpu<'_> {
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

impl Solver for MillerCpu<'_> {
    fn run(&mut self, task: usize) -> Result<Work> {
        let (count, nodes) = self.0.count_cpu(task as u64);
        Ok(miller_work(count, nodes))
    }
}

struct MillerOnGpu<'a> {
    tasks: &'a MillerTasks,
    gpu: miller::MillerGpu<'a>,
}

impl Solver for MillerOnGpu<'_> {
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
    fn count(&self, n: u32, total: Wide<3>) -> Result<Wide<3>> {
        let (shift, what) = match self {
            Method::Godfrey(_) => (2 * n + 1, format!("2^{}", 2 * n + 1)),
            Method::Miller(_) => (1, "2".to_string()),
        };
        total.exact_shr(shift).ok_or_else(|| {
            Error::Unavailable(format!(
                "the summed tasks ({}) are not divisible by {what}: the sum is wrong",
                total.unsigned_decimal()
            ))
        })
    }

    fn solver<'a>(&'a self, selected: &'a Selected) -> Result<Box<dyn Solver + 'a>> {
        Ok(match (self, selected) {
            (Method::Godfrey(g), Selected::Cpu) => Box::new(GodfreyCpu(g)),
            (Method::Godfrey(g), Selected::Gpu(_)) if g.inner() < godfrey_gpu::PAIRED => {
                // depth = 2n: every task is a single point, nothing for a GPU to do.
                log::info!("tasks of a single point: computing them on the CPU");
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

/// Count L(2,n) as configured; rank 0 prints the count and writes the ledger file.
fn count(h: &Harness, cfg: &Langford) -> Result<()> {
    let world = h.world;
    let method = match cfg.method {
        LangfordMethod::Godfrey => {
            Method::Godfrey(Godfrey::new(cfg.n, cfg.depth).with_prune(cfg.prune))
        }
        LangfordMethod::Miller => Method::Miller(MillerTasks::new(cfg.n, cfg.depth)),
    };
    let header = Header {
        n: cfg.n,
        method: format!("{:?}", cfg.method).to_lowercase(),
        depth: cfg.depth,
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
    let mut provenance = h.provenance()?;
    log::info!(
        "langford: {header}, {:?} farm on {} ranks; rank 0 computes on {device}",
        cfg.farm,
        world.size()
    );
    let mut solver = method.solver(&h.device)?;
    let started = Instant::now();
    let root_part = ledger
        .as_mut()
        .map(|l| (l, &provenance, devices.as_slice()));
    let plan = farm::Plan {
        tasks: header.tasks,
        mode: cfg.farm,
        stop_after: cfg.stop_after.map(|k| k as usize),
    };
    farm::run(world, solver.as_mut(), plan, root_part, h.interrupt())?;
    let seconds = started.elapsed().as_secs_f64();
    let Some(ledger) = ledger else {
        return Ok(());
    };
    provenance.end_time = timestamp();
    report(
        cfg,
        &method,
        &header,
        ledger,
        &provenance,
        &devices,
        seconds,
    )
}

/// Rank 0: this run's figures on stdout, and the count in the ledger file once every task is
/// in (a slice run by --stop-after gets the projected time of the whole run instead).
fn report(
    cfg: &Langford,
    method: &Method,
    header: &Header,
    mut ledger: Ledger,
    provenance: &Provenance,
    devices: &[String],
    seconds: f64,
) -> Result<()> {
    let fresh = &ledger.entries()[ledger.resumed()..];
    let ranks = rank_stats(devices, fresh);
    // (+ 0.0: an empty f64 sum is -0.0, printed with its sign)
    let points: f64 = fresh.iter().map(|e| e.points as f64).sum::<f64>() + 0.0;
    let visited: f64 = fresh.iter().map(|e| e.visited as f64).sum::<f64>() + 0.0;
    let busy: f64 = fresh.iter().map(|e| e.seconds).sum();
    let summary = match cfg.method {
        LangfordMethod::Godfrey => format!(
            "{header}: {} tasks run here ({} from the ledger) in {seconds:.3} s: {points:.4e} points \
             in the space (symmetry-reduced), {visited:.4e} visited ({:.4} of them; prune {})",
            fresh.len(),
            ledger.resumed(),
            visited / points.max(1.0),
            header.prune
        ),
        LangfordMethod::Miller => format!(
            "{header}: {} tasks run here ({} from the ledger), {points:.4e} tree nodes in {seconds:.3} s",
            fresh.len(),
            ledger.resumed(),
        ),
    };
    let done = ledger.entries().len();
    if done < header.tasks {
        // A slice (--stop-after): tasks spread over the range; the farm saved the ledger.
        let per_task = seconds / fresh.len().max(1) as f64;
        let busy_per_task = busy / fresh.len().max(1) as f64;
        println!(
            "stopped after {} tasks (spread over the task range): {done} of {} done",
            fresh.len(),
            header.tasks
        );
        println!("{summary}");
        print_ranks(&ranks);
        println!(
            "task time in this sample: mean {busy_per_task:.4} s of one device, {:.4} s fastest, {:.4} s slowest",
            fresh.iter().map(|e| e.seconds).fold(f64::INFINITY, f64::min),
            fresh.iter().map(|e| e.seconds).fold(0.0, f64::max),
        );
        println!(
            "projected at this run's rate: {:.0} s for all {} tasks, {:.0} s for the {} left \
             ({:.0} device-seconds in all)",
            per_task * header.tasks as f64,
            header.tasks,
            per_task * (header.tasks - done) as f64,
            header.tasks - done,
            busy_per_task * header.tasks as f64,
        );
        println!("results: {}", ledger.path().display());
        return Ok(());
    }
    let total = ledger
        .entries()
        .iter()
        .map(|e| Wide::<3>::from_words(&e.words))
        .fold(Wide::default(), Wide::wrapping_add);
    // Contributions are exact modulo 2^(64 words): keep that many words.
    let total = Wide::<3>::from_words(&total.0[..header.words]);
    let count = method.count(cfg.n, total)?;
    let result = Totals {
        count: count.0[..header.words].to_vec(),
        count_decimal: count.unsigned_decimal(),
        total: total.0[..header.words].to_vec(),
        points,
        visited,
        seconds,
        ranks,
    };
    let path = ledger.write(provenance, Some(&result))?;
    println!("L(2,{}) = {}", cfg.n, result.count_decimal);
    println!("{summary}");
    print_ranks(&result.ranks);
    println!("results: {}", path.display());
    Ok(())
}

/// This run's share of each rank, from the ledger entries it added.
fn rank_stats(devices: &[String], fresh: &[ledger::Entry]) -> Vec<RankStats> {
    let mut ranks: Vec<RankStats> = devices
        .iter()
        .map(|d| RankStats {
            device: d.clone(),
            ..Default::default()
        })
        .collect();
    for e in fresh {
        let r = &mut ranks[e.rank as usize];
        r.points += e.points;
        r.visited += e.visited;
        r.busy_seconds += e.seconds;
        r.tasks += 1;
    }
    ranks
}

fn print_ranks(ranks: &[RankStats]) {
    for (r, s) in ranks.iter().enumerate() {
        println!(
            "  rank {r}: {}: {} tasks, {} points ({} visited) in {:.3} s busy, {:.4e} points/s \
             ({:.4e} visited/s)",
            s.device,
            s.tasks,
            s.points,
            s.visited,
            s.busy_seconds,
            s.points_per_second(),
            s.visited_per_second()
        );
    }
}
