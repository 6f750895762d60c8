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
use crate::output::{timestamp, Provenance};
use farm::Solver;
use godfrey::Godfrey;
use ledger::{Final, Header, Ledger};
use miller::MillerTasks;
use std::path::PathBuf;
use std::time::Instant;
use wide::Wide;

/// How the run was started, for provenance.
pub struct Invocation {
    pub command_line: String,
    pub deck: String,
}

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
        if total != Wide::default() && total.trailing_zeros() < shift {
            return Err(Error::Unavailable(format!(
                "the summed tasks ({}) are not divisible by {what}: the sum is wrong",
                total.unsigned_decimal()
            )));
        }
        Ok(total.shr(shift))
    }

    fn solver<'a>(&'a self, selected: &'a Selected) -> Result<Box<dyn Solver + 'a>> {
        Ok(match (self, selected) {
            (Method::Godfrey(g), Selected::Cpu) => Box::new(GodfreyCpu(g)),
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
    farm::run(world, solver.as_mut(), header.tasks, cfg.farm, root_part)?;
    let seconds = started.elapsed().as_secs_f64();
    let Some(mut ledger) = ledger else {
        return Ok(None);
    };
    let total = ledger
        .entries()
        .iter()
        .map(|e| Wide::<3>::from_words(&e.words))
        .fold(Wide::default(), Wide::wrapping_add);
    // Contributions are exact modulo 2^(64 words): keep that many words.
    let total = Wide::<3>::from_words(&total.0[..header.words]);
    let count = method.count(cfg.n, total)?;
    provenance.end_time = timestamp();
    let fresh = ledger.entries()[ledger.resumed()..].to_vec();
    let ranks: Vec<(String, u64, f64, u64)> = (0..world.size())
        .map(|r| {
            let mine = fresh.iter().filter(|e| e.rank as usize == r);
            let (points, busy, tasks) = mine.fold((0, 0.0, 0), |(p, s, t), e| {
                (p + e.points, s + e.seconds, t + 1)
            });
            (
                devices.get(r).cloned().unwrap_or_default(),
                points,
                busy,
                tasks,
            )
        })
        .collect();
    let points: f64 = fresh.iter().map(|e| e.points as f64).sum();
    let result = Final {
        count: count.0[..header.words].to_vec(),
        count_decimal: count.unsigned_decimal(),
        total: total.0[..header.words].to_vec(),
        points,
        seconds,
        ranks: ranks.clone(),
    };
    let path = ledger.write(&provenance, Some(&result))?;
    println!("L(2,{}) = {}", cfg.n, result.count_decimal);
    println!(
        "{header}: {} tasks run here ({} from the ledger), {points:.4e} {} in {seconds:.3} s",
        fresh.len(),
        ledger.resumed(),
        match cfg.method {
            LangfordMethod::Godfrey => "points (symmetry-reduced space, skipped points included)",
            LangfordMethod::Miller => "tree nodes",
        },
    );
    for (r, (device, points, busy, tasks)) in ranks.iter().enumerate() {
        let rate = if *busy > 0.0 {
            *points as f64 / busy
        } else {
            0.0
        };
        println!("  rank {r}: {device}: {tasks} tasks, {points} points in {busy:.3} s busy, {rate:.4e} points/s");
    }
    Ok(Some(path))
}
