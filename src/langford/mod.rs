//! Langford pair counting, L(2,n): Godfrey's algebraic sum and Miller's tree search, each on
//! the CPU (rayon) or a GPU, run as an MPI task farm with a resumable ledger.

pub mod farm;
pub mod godfrey;
pub mod godfrey_gpu;
pub mod ledger;
pub mod miller;
pub mod wide;

use crate::comm::World;
use crate::config::{LangfordConfig, LangfordMethod, RunConfig};
use crate::device::Selected;
use crate::error::{Error, Result};
use crate::output::{timestamp, Invocation, Provenance};
use farm::Solver;
use godfrey::Godfrey;
use ledger::{Final, Header, Ledger, RankStats};
use miller::MillerTasks;
use std::path::PathBuf;
use std::time::Instant;
use wide::Wide;

struct GodfreyCpu<'a>(&'a Godfrey);

impl Solver for GodfreyCpu<'_> {
    fn run(&mut self, task: usize) -> Result<(Vec<u64>, u64)> {
        Ok((self.0.run_cpu(task), 1 << self.0.inner()))
    }
}

struct MillerCpu<'a>(&'a MillerTasks);

impl Solver for MillerCpu<'_> {
    fn run(&mut self, task: usize) -> Result<(Vec<u64>, u64)> {
        let (count, nodes) = self.0.count_cpu(task as u64);
        Ok((vec![count, 0], nodes))
    }
}

struct MillerOnGpu<'a> {
    tasks: &'a MillerTasks,
    gpu: miller::MillerGpu<'a>,
}

impl Solver for MillerOnGpu<'_> {
    fn run(&mut self, task: usize) -> Result<(Vec<u64>, u64)> {
        let (count, nodes) = self.gpu.count(self.tasks, task as u64)?;
        Ok((vec![count, 0], nodes))
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

fn device_name(selected: &Selected) -> String {
    match selected {
        Selected::Cpu => format!("cpu ({} threads)", rayon::current_num_threads()),
        Selected::Gpu(gpu) => gpu.describe(),
    }
}

/// Rank 0's verdict on something only it can check, shared so every rank returns the same
/// error (and the job ends with one line instead of an abort).
fn agree<T>(world: &World, verdict: Result<T>) -> Result<Option<T>> {
    let mut bytes = match &verdict {
        Err(Error::Config { file, msg }) => format!("{file}\0{msg}").into_bytes(),
        Err(other) => format!("\0{other}").into_bytes(),
        Ok(_) => Vec::new(),
    };
    world.broadcast_bytes(&mut bytes);
    if bytes.is_empty() {
        return Ok(verdict.ok());
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (file, msg) = text.split_once('\0').unwrap_or(("", &text));
    Err(Error::Config {
        file: file.to_string(),
        msg: msg.to_string(),
    })
}

/// Count L(2,n) as the config says; rank 0 prints the count and writes the result file.
pub fn run(
    world: &World,
    run: &RunConfig,
    cfg: &LangfordConfig,
    selected: &Selected,
    invocation: &Invocation,
) -> Result<Option<PathBuf>> {
    let start_time = timestamp();
    let method = match cfg.method {
        LangfordMethod::Godfrey => Method::Godfrey(Godfrey::new(cfg.n, cfg.depth)),
        LangfordMethod::Miller => Method::Miller(MillerTasks::new(cfg.n, cfg.depth)),
    };
    let header = Header {
        n: cfg.n,
        method: format!("{:?}", cfg.method).to_lowercase(),
        depth: cfg.depth,
        words: method.words(),
        tasks: method.tasks(),
    };
    let ledger = world.is_root().then(|| {
        if cfg.resume {
            Ledger::resume(&run.output, header.clone())
        } else {
            Ok(Ledger::new(&run.output, header.clone()))
        }
    });
    let mut ledger = agree(world, ledger.transpose())?.flatten();
    let device = device_name(selected);
    let devices = world.gather_strings(&device)?;
    let hostnames = world.hostnames()?;
    let mut provenance = Provenance {
        command_line: invocation.command_line.clone(),
        deck: invocation.deck.clone(),
        ranks: world.size(),
        threads_per_rank: rayon::current_num_threads(),
        hostnames,
        device: device.clone(),
        start_time,
        end_time: String::new(),
    };
    log::info!(
        "langford: {header}, {:?} farm on {} ranks; rank 0 computes on {device}",
        cfg.farm,
        world.size()
    );
    let mut solver = method.solver(selected)?;
    let started = Instant::now();
    let root_part = ledger
        .as_mut()
        .map(|l| (l, &provenance, devices.as_slice()));
    let plan = farm::Plan {
        tasks: header.tasks,
        mode: cfg.farm,
        stop_after: cfg.stop_after.map(|k| k as usize),
    };
    farm::run(world, solver.as_mut(), plan, root_part)?;
    let seconds = started.elapsed().as_secs_f64();
    let Some(mut ledger) = ledger else {
        return Ok(None);
    };
    provenance.end_time = timestamp();
    let fresh = &ledger.entries()[ledger.resumed()..];
    let ranks = rank_stats(&devices, fresh);
    let points: f64 = fresh.iter().map(|e| e.points as f64).sum();
    let unit = match cfg.method {
        LangfordMethod::Godfrey => "points (symmetry-reduced space, skipped points included)",
        LangfordMethod::Miller => "tree nodes",
    };
    let summary = format!(
        "{header}: {} tasks run here ({} from the ledger), {points:.4e} {unit} in {seconds:.3} s",
        fresh.len(),
        ledger.resumed(),
    );
    let done = ledger.entries().len();
    if done < header.tasks {
        // A slice (--stop-after): the farm saved the ledger; project the whole run.
        let per_task = seconds / fresh.len().max(1) as f64;
        println!(
            "stopped after {} tasks: {done} of {} done",
            fresh.len(),
            header.tasks
        );
        println!("{summary}");
        print_ranks(&ranks);
        println!(
            "projected at this run's rate: {:.0} s for all {} tasks, {:.0} s for the {} left",
            per_task * header.tasks as f64,
            header.tasks,
            per_task * (header.tasks - done) as f64,
            header.tasks - done
        );
        return Ok(Some(ledger.path().to_path_buf()));
    }
    let total = ledger
        .entries()
        .iter()
        .map(|e| Wide::<3>::from_words(&e.words))
        .fold(Wide::default(), Wide::wrapping_add);
    // Contributions are exact modulo 2^(64 words): keep that many words.
    let total = Wide::<3>::from_words(&total.0[..header.words]);
    let count = method.count(cfg.n, total)?;
    let result = Final {
        count: count.0[..header.words].to_vec(),
        count_decimal: count.unsigned_decimal(),
        total: total.0[..header.words].to_vec(),
        points,
        seconds,
        ranks,
    };
    let path = ledger.write(&provenance, Some(&result))?;
    println!("L(2,{}) = {}", cfg.n, result.count_decimal);
    println!("{summary}");
    print_ranks(&result.ranks);
    Ok(Some(path))
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
        r.busy_seconds += e.seconds;
        r.tasks += 1;
    }
    ranks
}

fn print_ranks(ranks: &[RankStats]) {
    for (r, s) in ranks.iter().enumerate() {
        println!(
            "  rank {r}: {}: {} tasks, {} points in {:.3} s busy, {:.4e} points/s",
            s.device,
            s.tasks,
            s.points,
            s.busy_seconds,
            s.points_per_second()
        );
    }
}
