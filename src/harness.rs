//! The one driver of every workload (as GAP's `BenchmarkKernel`). A workload states its deck
//! table (which is also its flags), whether it takes a graph, how to check its settings, and
//! its procedure; the harness does the rest once: the deck and flags (merged, checked, a flag
//! of another workload refused by the parser), the `[run]` table, worker threads, device
//! choice, the output path checked writable before any compute, signals, timed phases,
//! trials with progress, the result file with provenance, and errors (see `main`).

use crate::comm::{Op, World};
use crate::config::{config_error, merge, DeckText, Numbers, RunArgs, RunConfig};
use crate::device::{self, Selected};
use crate::error::{Error, Result};
use crate::files::must_be_regular;
use crate::graph::build::{self, Built, FitCheck};
use crate::graph::source::{Generator, GraphArgs, GraphConfig};
use crate::output::{timestamp, Invocation, Provenance, ResultFile, Unfinished};
use crate::progress::Progress;
use crate::report::Report;
use crate::signals::Interrupt;
use clap::{ArgMatches, FromArgMatches};
use serde::de::{DeserializeOwned, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::cell::RefCell;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One workload: a module with its deck table, its checks and its procedure. The harness
/// runs it in one loop: `check_sizes` before anything is allocated, then `execute`, whose
/// phases go through the harness (`timed` for preparing, `trials` for the timed trials with
/// progress and signals, `verify`), and whose one `Report` the harness both prints and
/// writes to the result file. A workload never prints its results or opens the file itself.
pub trait Workload: Sized {
    /// Subcommand and deck table name.
    const NAME: &'static str;
    /// One line for `--help`.
    const ABOUT: &'static str;
    /// True when the workload takes its graph from the `[graph]` table (and its flags).
    const GRAPH: bool = false;
    /// The generator when `[graph]` names neither a generator nor a file.
    const GENERATOR: Generator = Generator::Kronecker;
    /// The deck table as written (every key optional, unknown keys refused); also the
    /// subcommand's own flags.
    type Table: clap::Args + Serialize + DeserializeOwned + Default;
    /// Check the merged table and fill defaults; `source` names the deck for messages.
    fn configure(source: &str, table: Self::Table, graph: Option<GraphConfig>) -> Result<Self>;
    /// Refuse sizes that cannot fit, before any allocation (every rank reaches the same
    /// verdict; `device::memory` has the checks and their one-line message).
    fn check_sizes(&self, _h: &Harness) -> Result<()> {
        Ok(())
    }
    /// True when an existing output file is this run's own to continue (a ledger or a
    /// checkpoint resumed), so the harness does not refuse it.
    fn resumes_output(&self) -> bool {
        false
    }
    /// The procedure: its phases and trials through the harness, and its one report.
    fn execute(&self, h: &Harness) -> Result<Report>;
}

/// A workload with its type erased, as the list of workloads holds it.
pub trait Entry: Sync {
    fn name(&self) -> &'static str;
    /// The subcommand: `--deck`, the `[run]` flags, the `[graph]` flags where the workload
    /// takes a graph, and its own.
    fn command(&self) -> clap::Command;
    /// Run with the deck (if any) and parsed flags (collective).
    fn run(&self, world: &World, deck: DeckText, flags: &ArgMatches) -> Result<()>;
}

/// A workload type as an `Entry`.
pub struct Registered<W>(PhantomData<fn() -> W>);

impl<W> Registered<W> {
    pub const ENTRY: Registered<W> = Registered(PhantomData);
}

impl<W: Workload> Entry for Registered<W> {
    fn name(&self) -> &'static str {
        W::NAME
    }

    fn command(&self) -> clap::Command {
        let deck = clap::Arg::new("deck")
            .long("deck")
            .value_parser(clap::value_parser!(PathBuf))
            .help("Deck to start from (flags override it)");
        // Negative numbers parse as values, so that they reach the range checks.
        let cmd = clap::Command::new(W::NAME)
            .arg(deck)
            .allow_negative_numbers(true);
        let cmd = <RunArgs as clap::Args>::augment_args(cmd);
        let cmd = if W::GRAPH {
            <GraphArgs as clap::Args>::augment_args(cmd)
        } else {
            cmd
        };
        // After the tables: a derived `Args` sets the about from its doc comment.
        let cmd = <W::Table as clap::Args>::augment_args(cmd).about(W::ABOUT);
        // `allow_negative_numbers` knows plain numbers only: "-inf" or a list "-4,4" would be
        // taken for flags. Their flags take any value, which the flag's check then judges.
        cmd.mut_args(|a| {
            if takes_hyphen_numbers(&a) {
                a.allow_hyphen_values(true)
            } else {
                a
            }
        })
    }

    fn run(&self, world: &World, deck: DeckText, flags: &ArgMatches) -> Result<()> {
        refuse_foreign_tables::<W>(&deck)?;
        let parsed: DeckTables<W> = deck.parse()?;
        let source = deck.source.as_str();
        let run = merge(parsed.run, from_flags::<RunArgs>(flags)?).resolve(source)?;
        let graph = if W::GRAPH {
            let table = merge(parsed.graph.unwrap_or_default(), from_flags(flags)?);
            Some(table.resolve_defaulting(source, W::GENERATOR)?)
        } else {
            None
        };
        let table = merge(parsed.table.unwrap_or_default(), from_flags(flags)?);
        let workload = W::configure(source, table, graph).map_err(|e| deck.locate(e))?;
        let harness = Harness::start(world, run, deck.text, W::NAME, workload.resumes_output())?;
        harness.run_workload(&workload)
    }
}

/// Whether `arg` takes numbers that may start with '-' and are not plain numbers: reals
/// ("-inf") and lists ("-4,4"). A plain integer flag does not: `--scale --roots 4` keeps
/// clap's "a value is required for --scale" (taking "--roots" would leave "4" unexpected).
fn takes_hyphen_numbers(arg: &clap::Arg) -> bool {
    use std::any::TypeId;
    let parses = arg.get_value_parser().type_id();
    let any_of = |types: &[TypeId]| types.iter().any(|&t| parses == t);
    let reals = [TypeId::of::<f64>(), TypeId::of::<Numbers>()];
    let integers = [
        TypeId::of::<i64>(),
        TypeId::of::<u32>(),
        TypeId::of::<u64>(),
        TypeId::of::<usize>(),
    ];
    any_of(&reals) || (any_of(&integers) && arg.get_value_delimiter().is_some())
}

/// The tables a deck of `W` may hold, as `[run], [graph], [W]`.
fn tables_of<W: Workload>() -> String {
    let graph = if W::GRAPH { " [graph]," } else { "" };
    format!("[run],{graph} [{}]", W::NAME)
}

/// Refuse a table that `W` does not read, naming the line of its header.
fn refuse_foreign_tables<W: Workload>(deck: &DeckText) -> Result<()> {
    let known = |t: &str| t == "run" || (t == "graph" && W::GRAPH) || t == W::NAME;
    let Some(table) = deck.tables.iter().find(|t| !known(t)) else {
        return Ok(());
    };
    let header = format!("[{table}]");
    let line = deck
        .text
        .lines()
        .position(|l| l.trim_start().starts_with(&header))
        .map_or(String::new(), |i| format!("line {}: ", i + 1));
    Err(config_error(
        &deck.source,
        &format!(
            "{line}unknown table {header}: a {} deck has {}",
            W::NAME,
            tables_of::<W>()
        ),
    ))
}

fn from_flags<T: FromArgMatches>(flags: &ArgMatches) -> Result<T> {
    T::from_arg_matches(flags).map_err(|e| config_error("command line", e.to_string().trim()))
}

/// A deck of workload `W`: `[run]`, `[graph]` when `W` takes a graph, and `[W::NAME]`; any
/// other table is refused with its line.
struct DeckTables<W: Workload> {
    run: RunArgs,
    graph: Option<GraphArgs>,
    table: Option<W::Table>,
}

impl<W: Workload> Default for DeckTables<W> {
    fn default() -> Self {
        DeckTables {
            run: RunArgs::default(),
            graph: None,
            table: None,
        }
    }
}

impl<'de, W: Workload> Deserialize<'de> for DeckTables<W> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_map(TablesVisitor::<W>(PhantomData))
    }
}

struct TablesVisitor<W>(PhantomData<fn() -> W>);

impl<'de, W: Workload> Visitor<'de> for TablesVisitor<W> {
    type Value = DeckTables<W>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "the tables of a {} deck", W::NAME)
    }

    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let mut deck = DeckTables::<W>::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "run" => deck.run = map.next_value()?,
                "graph" if W::GRAPH => deck.graph = Some(map.next_value()?),
                name if name == W::NAME => deck.table = Some(map.next_value()?),
                other => {
                    return Err(serde::de::Error::custom(format!(
                        "unknown table [{other}]: a {} deck has {}",
                        W::NAME,
                        tables_of::<W>()
                    )));
                }
            }
        }
        Ok(deck)
    }
}

/// What a running workload gets from the harness.
pub struct Harness<'w> {
    pub world: &'w World,
    pub run: RunConfig,
    pub device: Selected,
    workload: &'static str,
    invocation: Invocation,
    start_time: String,
    phases: RefCell<Vec<(String, f64)>>,
    interrupt: Interrupt,
    /// Rank 0's claim on the output (`NAME.lock`), released when the run ends.
    _lock: Option<OutputLock>,
}

impl<'w> Harness<'w> {
    fn start(
        world: &'w World,
        run: RunConfig,
        deck: String,
        workload: &'static str,
        resumes: bool,
    ) -> Result<Self> {
        let start_time = timestamp();
        // The output first: a run that cannot keep its result must not compute it.
        let lock = world.agree(claim_output(world, &run.output, run.force || resumes))?;
        start_threads(world, run.threads)?;
        let device = device::select(world, run.device)?;
        Ok(Harness {
            world,
            device,
            workload,
            invocation: Invocation::current(deck),
            start_time,
            phases: RefCell::new(Vec::new()),
            interrupt: Interrupt::watch()?,
            run,
            _lock: lock,
        })
    }

    /// The one loop: sizes checked, the procedure run, its report printed and written.
    fn run_workload<W: Workload>(&self, w: &W) -> Result<()> {
        self.world.agree(w.check_sizes(self))?;
        let report = w.execute(self)?;
        self.publish(&report)
    }

    /// Print the report's statistics block (rank 0) and write it with the provenance and
    /// the phase times (collective), unless the output is the run's checkpoint.
    fn publish(&self, report: &Report) -> Result<()> {
        if self.world.is_root() {
            print!("{}", report.render());
        }
        if report.kept_in_checkpoint {
            return Ok(());
        }
        let parted = !report.parts.is_empty();
        self.write_results(|file| report.write(file), parted.then_some(report))
    }

    /// Check the results (collective), as the phase "verify", unless `enabled` is false;
    /// returns whether it ran.
    pub fn verify(&self, enabled: bool, check: impl FnOnce() -> Result<()>) -> Result<bool> {
        if enabled {
            self.timed("verify", check)?;
        }
        Ok(enabled)
    }

    /// What this rank computes on, for logs and provenance.
    pub fn device_name(&self) -> String {
        match &self.device {
            Selected::Cpu => format!("cpu ({} threads per rank)", rayon::current_num_threads()),
            Selected::Gpu(gpu) => gpu.describe(),
        }
    }

    pub fn interrupt(&self) -> &Interrupt {
        &self.interrupt
    }

    /// Run one phase between barriers and record its seconds (written to `/phases`).
    pub fn timed<T>(&self, phase: &str, body: impl FnOnce() -> Result<T>) -> Result<T> {
        self.world.barrier();
        let t = Instant::now();
        let out = body()?;
        self.world.barrier();
        let secs = t.elapsed().as_secs_f64();
        log::info!("{}: {phase} took {secs:.3} s", self.workload);
        self.phases.borrow_mut().push((phase.to_string(), secs));
        Ok(out)
    }

    /// Make the run's graph (see `graph::build`), as the phase "graph".
    pub fn build_graph(&self, cfg: &GraphConfig, fits: FitCheck) -> Result<Built> {
        self.timed("graph", || {
            build::build(
                self.world,
                cfg,
                self.run.seed,
                &self.device,
                self.run.gpu_transport,
                fits,
            )
        })
    }

    /// Run `count` trials in order (collective), with a progress bar on a terminal; a
    /// SIGTERM/SIGINT on any rank ends the loop after the trial in flight, as an error.
    pub fn trials<T>(
        &self,
        label: &'static str,
        count: usize,
        mut trial: impl FnMut(usize) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut progress = Progress::new(self.world.is_root(), label, count);
        let mut records = Vec::with_capacity(count);
        for i in 0..count {
            records.push(trial(i)?);
            progress.step();
            let raised = u8::from(self.interrupt.raised());
            if self.world.allreduce(raised, crate::comm::Op::Max) > 0 {
                progress.finish();
                return Err(Error::Interrupted(format!(
                    "{label}: interrupted by a signal after {} of {count} trials; no result file written",
                    i + 1
                )));
            }
        }
        progress.finish();
        Ok(records)
    }

    /// The run's provenance, ended now (collective: gathers the host names).
    pub fn provenance(&self) -> Result<Provenance> {
        Ok(Provenance {
            command_line: self.invocation.command_line.clone(),
            deck: self.invocation.deck.clone(),
            ranks: self.world.size(),
            threads_per_rank: rayon::current_num_threads(),
            hostnames: self.world.hostnames()?,
            device: self.device_name(),
            start_time: self.start_time.clone(),
            end_time: timestamp(),
        })
    }

    /// Write the result file (collective): rank 0 creates it under a temporary name, writes
    /// the provenance, the phase times and what `write` adds; where reports hold dataset
    /// parts, every other rank adds its own in turn; then rank 0 renames it. Every rank
    /// returns the same outcome.
    fn write_results(
        &self,
        write: impl FnOnce(&ResultFile) -> Result<()>,
        parts: Option<&Report>,
    ) -> Result<()> {
        let provenance = self.provenance()?;
        let phases = self.phases.borrow().clone();
        let written = if self.world.is_root() {
            write_file(&self.run.output, &provenance, &phases, write).map(Some)
        } else {
            Ok(None)
        };
        let unfinished = self.world.agree(written)?;
        let parted = self.world.allreduce(u64::from(parts.is_some()), Op::Max) == 1;
        for rank in (1..self.world.size()).filter(|_| parted) {
            let added = match parts {
                Some(report) if self.world.rank() == rank => report.add_parts(&self.run.output),
                _ => Ok(()),
            };
            self.world.agree(added)?;
        }
        let finished = unfinished.map(|u| u.finish()).transpose();
        if let Some(path) = self.world.agree(finished)? {
            println!("results: {}", path.display());
        }
        Ok(())
    }
}

fn write_file(
    path: &Path,
    provenance: &Provenance,
    phases: &[(String, f64)],
    write: impl FnOnce(&ResultFile) -> Result<()>,
) -> Result<Unfinished> {
    let file = ResultFile::create(path)?;
    provenance.write(&file.root())?;
    let group = file.group("phases")?;
    for (name, secs) in phases {
        group.writer().attr(name, *secs)?;
    }
    write(&file)?;
    file.close_unfinished()
}

/// Rank 0 claims the output before any compute (`check_output`), refusing an output another
/// run is writing (its lock beside it); then the temporary file is created and removed again,
/// proving the path writable.
fn claim_output(world: &World, path: &Path, overwrite: bool) -> Result<Option<OutputLock>> {
    if !world.is_root() {
        return Ok(None);
    }
    check_output(path, overwrite)?;
    let lock = OutputLock::claim(path)?;
    ResultFile::create(path)?.discard()?;
    Ok(Some(lock))
}

/// A file a run is to write (its result, `generate --write`), before any compute: anything
/// but a regular file is refused (a directory, a device, a FIFO), and an existing file
/// unless `overwrite`.
pub fn check_output(path: &Path, overwrite: bool) -> Result<()> {
    let refuse = |msg: String| Error::Output {
        path: path.display().to_string(),
        msg,
    };
    must_be_regular(path).map_err(|e| refuse(e.to_string()))?;
    if path.exists() && !overwrite {
        return Err(refuse(
            "exists: pass --force (or `force = true` in [run]) to overwrite it".into(),
        ));
    }
    Ok(())
}

/// `NAME.lock` beside an output while a run writes it: its host and process id. A lock left by
/// a process that is gone from this host is taken over.
pub struct OutputLock {
    path: PathBuf,
}

impl OutputLock {
    fn path_for(output: &Path) -> PathBuf {
        let mut name = output.as_os_str().to_owned();
        name.push(".lock");
        PathBuf::from(name)
    }

    /// What this process writes into its lock: "HOST PID".
    fn owner_line() -> String {
        format!("{} {}\n", hostname(), std::process::id())
    }

    /// Remove this process's lock on `output` now: for a run that ends through `MPI_Abort`,
    /// which runs no destructors. Left behind, the lock would stop a requeued job on another
    /// node from resuming (only a lock of this host is taken over).
    pub fn release_before_abort(output: &Path) {
        let path = Self::path_for(output);
        if std::fs::read_to_string(&path).is_ok_and(|held| held == Self::owner_line()) {
            let _ = std::fs::remove_file(&path);
        }
    }

    fn claim(output: &Path) -> Result<OutputLock> {
        let path = Self::path_for(output);
        let host = hostname();
        let owner = Self::owner_line();
        let err = |msg: String| Error::Output {
            path: output.display().to_string(),
            msg,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| err(format!("cannot create directory {}: {e}", dir.display())))?;
        }
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut file) => {
                    use std::io::Write;
                    file.write_all(owner.as_bytes())
                        .map_err(|e| err(format!("cannot write {}: {e}", path.display())))?;
                    return Ok(OutputLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let held = std::fs::read_to_string(&path).unwrap_or_default();
                    let mut words = held.split_whitespace();
                    let (by_host, pid) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
                    let gone = by_host == host && !pid.is_empty() && !running(pid);
                    if !gone {
                        return Err(err(format!(
                            "another run is writing it (process {pid} on {by_host}, per {}); if that run is gone, remove the lock",
                            path.display()
                        )));
                    }
                    log::warn!(
                        "taking over {} left by process {pid}, which is gone",
                        path.display()
                    );
                    let _ = std::fs::remove_file(&path);
                }
                Err(e) => return Err(err(format!("cannot create {}: {e}", path.display()))),
            }
        }
        Err(err(format!("cannot claim {}", path.display())))
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether process `pid` of this host is still running (a zombie, killed but not yet
/// reaped, is not).
fn running(pid: &str) -> bool {
    std::fs::read_to_string(Path::new("/proc").join(pid).join("stat")).is_ok_and(|stat| {
        // "PID (COMM) STATE ...": the state follows the last ')'.
        let state = stat.rsplit(')').next().unwrap_or("").trim_start();
        !state.starts_with(['Z', 'X'])
    })
}

/// This node's name, as the lock records it.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown-host".into())
}

/// One rayon pool per rank. By default: the cores the launcher bound the rank to, or, when it
/// is not bound (it may use every core of the node), the node's cores shared among its ranks.
fn start_threads(world: &World, threads: Option<usize>) -> Result<()> {
    let allowed = std::thread::available_parallelism().map_or(1, |n| n.get());
    let bound = online_cores().is_some_and(|online| allowed < online);
    let threads = threads.unwrap_or(if bound {
        allowed
    } else {
        (allowed / world.local_size()).max(1)
    });
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .map_err(|e| Error::Unavailable(format!("cannot start {threads} worker threads: {e}")))?;
    log::info!("{threads} worker threads per rank");
    Ok(())
}

/// What the ranks agreed to do after a step of a long run (`Checkpoints::poll`).
pub struct Due {
    /// A signal came (SIGTERM, SIGINT): save and end the job.
    pub interrupted: bool,
    /// A checkpoint is due by the clock or the workload's step count.
    pub checkpoint: bool,
    /// The job ran the steps it was asked to (`stop_after`): save and stop.
    pub stop: bool,
}

impl Due {
    /// Whether anything is to be saved.
    pub fn any(&self) -> bool {
        self.interrupted || self.checkpoint || self.stop
    }
}

/// A long run's checkpoint cadence: the steps done in this job, and a checkpoint due every
/// `seconds` by rank 0's clock (the ranks' clocks differ, so one decides for all).
pub struct Checkpoints {
    pub done: u64,
    seconds: f64,
    last: Instant,
}

impl Checkpoints {
    pub fn new(seconds: f64) -> Self {
        Checkpoints {
            done: 0,
            seconds,
            last: Instant::now(),
        }
    }

    /// After `steps` more steps (collective: one reduction of the signal and rank 0's clock).
    /// A checkpoint is also due where `every` divides the steps done; the job stops once it
    /// has done `stop_after`.
    pub fn poll(
        &mut self,
        h: &Harness,
        steps: u64,
        every: Option<u64>,
        stop_after: Option<u64>,
    ) -> Due {
        self.done += steps;
        let timed_out = h.world.is_root() && self.last.elapsed().as_secs_f64() >= self.seconds;
        let flags = u8::from(h.interrupt().raised()) | (u8::from(timed_out) << 1);
        let flags = h.world.allreduce(flags, crate::comm::Op::BitOr);
        Due {
            interrupted: flags & 1 != 0,
            checkpoint: flags & 2 != 0 || every.is_some_and(|k| self.done.is_multiple_of(k)),
            stop: stop_after.is_some_and(|s| self.done >= s),
        }
    }

    /// A checkpoint was written: the clock starts again.
    pub fn saved(&mut self) {
        self.last = Instant::now();
    }
}

/// Rank 0's reading of the checkpoint in the run's output (collective: the outcome is
/// agreed; the other ranks get None). A missing file is no checkpoint: the run starts from
/// `start`, which the log names.
pub fn read_checkpoint_on_root<T>(
    h: &Harness,
    start: &str,
    read: impl FnOnce(&Path) -> Result<T>,
) -> Result<Option<T>> {
    let path = &h.run.output;
    let head = match (h.world.is_root(), path.exists()) {
        (true, true) => read(path).map(Some),
        (true, false) => {
            log::info!("no checkpoint at {}: starting from {start}", path.display());
            Ok(None)
        }
        (false, _) => Ok(None),
    };
    h.world.agree(head)
}

/// Cores online on this node (from /sys, e.g. "0-63" or "0-3,8-11"), if known.
pub fn online_cores() -> Option<usize> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?;
    text.trim().split(',').try_fold(0, |count, range| {
        let (lo, hi) = range.split_once('-').unwrap_or((range, range));
        Some(count + hi.parse::<usize>().ok()? - lo.parse::<usize>().ok()? + 1)
    })
}
