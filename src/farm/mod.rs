//! The MPI task farm. Rank 0 hands out task ids and records results; every rank, rank 0
//! included, computes. One protocol serves both modes: a rank sends its last result with a
//! request, rank 0 answers with its next task id, or with STOP. Only the choice of the next id
//! differs: static mode gives rank r the tasks r, r+P, r+2P, ...; dynamic mode gives the
//! lowest id not yet handed out, so faster ranks (GPU beside CPU) take more tasks.
//!
//! What a task computes is the job's (`Job`: its work, how it travels as words and how the
//! ledger stores it); the farm knows task ids, seconds, ranks and devices. Rank 0 keeps the
//! finished tasks in a resumable ledger (`ledger`).
//!
//! On rank 0 the computing runs in a second thread while the first serves the other ranks and
//! writes the ledger (MPI is called from the first thread only). SIGTERM or SIGINT (a
//! best-effort queue ending the job, or Ctrl-C) makes rank 0 say how to resume on stderr at
//! once, then save the ledger and end the job, so a killed run loses only the tasks in
//! flight. `mpirun` passes SIGTERM to the ranks and kills them a second later
//! (`odls_base_sigkill_timeout`), so the line comes before the save. The other ranks catch
//! the signal too and tell rank 0 with their current task's result, then wait for it to end
//! the job: a rank ending the job itself could kill rank 0 before it has saved.

pub mod ledger;

use crate::comm::World;
use crate::error::Result;
use crate::harness::OutputLock;
use crate::output::Provenance;
use crate::progress::Progress;
use crate::signals::{Interrupt, INTERRUPTED};
use ledger::{Entry, Job, Ledger};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, VecDeque};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// How tasks are handed out: rank-strided (static) or served by rank 0 on request (dynamic).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FarmMode {
    Static,
    Dynamic,
}

/// Computes one task of a job whose results are `W`.
pub trait Solver<W>: Send {
    fn run(&mut self, task: usize) -> Result<W>;
}

const TAG_REQUEST: i32 = 7101;
const TAG_TASK: i32 = 7102;
const STOP: u64 = u64::MAX;
/// Request layout: [flags, task, seconds (f64 bits), work words...].
const HEAD: usize = 3;
/// Request flags: a result comes with it; the rank caught a signal (rank 0 saves and ends
/// the job).
const HAS_RESULT: u64 = 1;
const INTERRUPT: u64 = 2;
/// How often rank 0 looks for messages while idle, and reports progress.
const POLL: Duration = Duration::from_millis(1);
const REPORT: Duration = Duration::from_secs(10);

/// What the farm runs: `tasks` tasks in `mode`, at most `stop_after` of them in this run.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub tasks: usize,
    pub mode: FarmMode,
    pub stop_after: Option<usize>,
}

/// Which task each rank gets next.
struct Allocator {
    queues: Vec<VecDeque<usize>>,
    /// Tasks this run may still hand out.
    budget: usize,
}

impl Allocator {
    /// Dynamic mode has one queue for every rank; static mode one per rank, rank-strided.
    /// A slice (`stop_after` K below the open tasks) takes K tasks spread evenly over the open
    /// ones, so that its time per task is that of the whole run's mix (task sizes and
    /// pruning vary along the task range), not that of the first tasks.
    fn new(plan: Plan, ranks: usize, done: &BTreeSet<u64>) -> Self {
        let open: Vec<usize> = (0..plan.tasks)
            .filter(|t| !done.contains(&(*t as u64)))
            .collect();
        let open = match plan.stop_after {
            Some(k) if k < open.len() => spread(&open, k),
            _ => open,
        };
        let mut queues = vec![
            VecDeque::new();
            if plan.mode == FarmMode::Static {
                ranks
            } else {
                1
            }
        ];
        let count = queues.len();
        for t in open {
            queues[t % count].push_back(t);
        }
        let open = queues.iter().map(VecDeque::len).sum::<usize>();
        Allocator {
            queues,
            budget: open,
        }
    }

    fn next(&mut self, rank: usize) -> Option<usize> {
        if self.budget == 0 {
            return None;
        }
        let count = self.queues.len();
        let task = self.queues[rank % count].pop_front()?;
        self.budget -= 1;
        Some(task)
    }
}

/// `k` of `items`, evenly spaced from the first (k < items.len()).
fn spread(items: &[usize], k: usize) -> Vec<usize> {
    (0..k).map(|j| items[j * items.len() / k]).collect()
}

/// A finished task on its way to rank 0.
struct Done<W> {
    task: usize,
    work: W,
    seconds: f64,
}

fn timed<W>(solver: &mut dyn Solver<W>, task: usize) -> Result<Done<W>> {
    let start = Instant::now();
    let work = solver.run(task)?;
    Ok(Done {
        task,
        work,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// What rank 0 alone holds: the ledger, the provenance written with it, each rank's device.
pub type RootPart<'a, J> = (&'a mut Ledger<J>, &'a Provenance, &'a [String]);

/// Run every task not yet in the ledger. Rank 0 passes the ledger (and appends to it); the
/// other ranks pass None and the job (which encodes their results). `devices` names each
/// rank's device (rank 0 only).
pub fn run<J: Job>(
    world: &World,
    job: &J,
    solver: &mut dyn Solver<J::Work>,
    plan: Plan,
    ledger: Option<RootPart<J>>,
    interrupt: &Interrupt,
) -> Result<()> {
    match ledger {
        Some(root) => serve(world, solver, plan, root, interrupt),
        None => work(world, job, solver, interrupt),
    }
}

/// Ranks other than 0: ask, compute, report, until told to stop. A rank that caught a signal
/// says so with its last result and waits: rank 0 saves the ledger and ends the job (a rank
/// that ended it itself could kill rank 0 before it has saved).
fn work<J: Job>(
    world: &World,
    job: &J,
    solver: &mut dyn Solver<J::Work>,
    interrupt: &Interrupt,
) -> Result<()> {
    let mut request = vec![0; HEAD];
    loop {
        if interrupt.raised() {
            request[0] |= INTERRUPT;
        }
        world.send_words(0, TAG_REQUEST, &request);
        let reply = world.receive_words(0, TAG_TASK);
        if reply[0] == STOP {
            return Ok(());
        }
        let done = timed(solver, reply[0] as usize)?;
        request = vec![HAS_RESULT, done.task as u64, done.seconds.to_bits()];
        request.extend(job.encode(&done.work));
    }
}

struct Server<'a, J: Job> {
    world: &'a World,
    ledger: &'a mut Ledger<J>,
    provenance: &'a Provenance,
    devices: &'a [String],
    progress: Progress,
    open: usize,
    finished: usize,
    points: f64,
    started: Instant,
    last_report: Instant,
}

impl<J: Job> Server<'_, J> {
    fn record(&mut self, rank: usize, done: Done<J::Work>) -> Result<()> {
        self.points += J::points(&done.work) as f64;
        self.ledger.push(Entry {
            task: done.task as u64,
            seconds: done.seconds,
            rank: rank as u32,
            device: self.devices.get(rank).cloned().unwrap_or_default(),
            work: done.work,
        });
        self.finished += 1;
        self.progress.step();
        self.ledger.save(self.provenance, false)
    }

    /// A progress line at info level every REPORT.
    fn report(&mut self) {
        if self.last_report.elapsed() < REPORT {
            return;
        }
        self.last_report = Instant::now();
        let elapsed = self.started.elapsed().as_secs_f64();
        if self.finished == 0 {
            log::info!(
                "{}: 0/{} tasks done after {elapsed:.0} s (first tasks running)",
                J::GROUP,
                self.open
            );
            return;
        }
        let left = elapsed / self.finished as f64 * (self.open - self.finished) as f64;
        log::info!(
            "{}: {}/{} tasks done, {:.3e} points/s, about {:.0} s left",
            J::GROUP,
            self.finished,
            self.open,
            self.points / elapsed,
            left
        );
    }

    /// A signal came: release the output's lock, say how to resume at once, save the ledger,
    /// and end the job.
    fn interrupted(&mut self) -> ! {
        // The lock goes first: mpirun kills the rank about a second after the signal, which
        // may fall inside the save, and a lock left behind stops a requeued job on another
        // node. The save is atomic (temp name, then rename), so no writer can see a torn file.
        OutputLock::release_before_abort(self.ledger.path());
        let path = self.ledger.path().display().to_string();
        eprintln!(
            "tessera: interrupted: saving the ledger {path}; rerun with --resume to continue"
        );
        let _ = std::io::stderr().flush();
        match self.ledger.save(self.provenance, true) {
            Ok(()) => eprintln!(
                "tessera: interrupted: {} tasks are in the ledger {path}; rerun with --resume to continue",
                self.ledger.entries().len()
            ),
            Err(e) => eprintln!("tessera: interrupted, and the ledger was not saved: {e}"),
        }
        let _ = std::io::stderr().flush();
        self.world.abort(INTERRUPTED)
    }
}

/// Rank 0: compute in a second thread, serve the other ranks in this one.
fn serve<J: Job>(
    world: &World,
    solver: &mut dyn Solver<J::Work>,
    plan: Plan,
    (ledger, provenance, devices): RootPart<J>,
    interrupt: &Interrupt,
) -> Result<()> {
    let done: BTreeSet<u64> = ledger.entries().iter().map(|e| e.task).collect();
    let allocator = Allocator::new(plan, world.size(), &done);
    let open = allocator.budget;
    let allocator = Mutex::new(allocator);
    let stop = AtomicBool::new(false);
    let mut server = Server {
        world,
        ledger,
        provenance,
        devices,
        progress: Progress::new(true, J::GROUP, open),
        open,
        finished: 0,
        points: 0.0,
        started: Instant::now(),
        last_report: Instant::now(),
    };
    let served = std::thread::scope(|scope| {
        let (sender, results) = mpsc::channel::<Result<Done<J::Work>>>();
        let (allocator, stop) = (&allocator, &stop);
        scope.spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let Some(task) = allocator.lock().expect("allocator").next(0) else {
                    break;
                };
                let result = timed(solver, task);
                let failed = result.is_err();
                if sender.send(result).is_err() || failed {
                    break;
                }
            }
        });
        let outcome = serve_loop(&mut server, allocator, &results, interrupt);
        stop.store(true, Ordering::Relaxed);
        outcome
    });
    server.progress.finish();
    served?;
    server.ledger.save(provenance, true)
}

fn serve_loop<J: Job>(
    s: &mut Server<J>,
    allocator: &Mutex<Allocator>,
    results: &mpsc::Receiver<Result<Done<J::Work>>>,
    interrupt: &Interrupt,
) -> Result<()> {
    let mut working = s.world.size() - 1;
    let mut own_running = true;
    while working > 0 || own_running {
        if interrupt.raised() {
            s.interrupted();
        }
        let mut idle = true;
        match results.try_recv() {
            Ok(done) => {
                s.record(0, done?)?;
                idle = false;
            }
            Err(mpsc::TryRecvError::Disconnected) => own_running = false,
            Err(mpsc::TryRecvError::Empty) => {}
        }
        if let Some((rank, request)) = s.world.try_receive_words(TAG_REQUEST) {
            if request[0] & HAS_RESULT != 0 {
                let work = s.ledger.job().decode(&request[HEAD..]);
                let done = Done {
                    task: request[1] as usize,
                    work,
                    seconds: f64::from_bits(request[2]),
                };
                s.record(rank, done)?;
            }
            if request[0] & INTERRUPT != 0 {
                s.interrupted();
            }
            let next = allocator.lock().expect("allocator").next(rank);
            s.world
                .send_words(rank, TAG_TASK, &[next.map_or(STOP, |t| t as u64)]);
            if next.is_none() {
                working -= 1;
            }
            idle = false;
        }
        s.report();
        if idle {
            s.ledger.save(s.provenance, false)?;
            std::thread::sleep(POLL);
        }
    }
    Ok(())
}
