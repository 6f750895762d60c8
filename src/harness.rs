//! The one driver of every workload (as GAP's `BenchmarkKernel`). A workload states its deck
//! table (which is also its flags), whether it takes a graph, how to check its settings, and
//! its procedure; the harness does the rest once: the deck and flags (merged, checked, a flag
//! of another workload refused by the parser), the `[run]` table, worker threads, device
//! choice, the output path checked writable before any compute, signals, timed phases,
//! trials with progress, the result file with provenance, and errors (see `main`).

use crate::comm::World;
use crate::config::{config_error, merge, DeckText, RunArgs, RunConfig};
use crate::device::{self, Selected};
use crate::error::{Error, Result};
use crate::graph::build::{self, Built, FitCheck};
use crate::graph::source::{GraphArgs, GraphConfig};
use crate::output::{timestamp, Invocation, Provenance, ResultFile};
use crate::progress::Progress;
use crate::signals::Interrupt;
use clap::{ArgMatches, FromArgMatches};
use serde::de::{DeserializeOwned, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::cell::RefCell;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One workload: a module with its deck table, its checks and its procedure.
pub trait Workload: Sized {
    /// Subcommand and deck table name.
    const NAME: &'static str;
    /// One line for `--help`.
    const ABOUT: &'static str;
    /// True when the workload takes its graph from the `[graph]` table (and its flags).
    const GRAPH: bool = false;
    /// The deck table as written (every key optional, unknown keys refused); also the
    /// subcommand's own flags.
    type Table: clap::Args + Serialize + DeserializeOwned + Default;
    /// Check the merged table and fill defaults; `source` names the deck for messages.
    fn configure(source: &str, table: Self::Table, graph: Option<GraphConfig>) -> Result<Self>;
    /// The procedure: its phases, trials and results, through the harness.
    fn execute(&self, h: &Harness) -> Result<()>;
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
        let cmd = clap::Command::new(W::NAME).arg(deck);
        let cmd = <RunArgs as clap::Args>::augment_args(cmd);
        let cmd = if W::GRAPH {
            <GraphArgs as clap::Args>::augment_args(cmd)
        } else {
            cmd
        };
        // After the tables: a derived `Args` sets the about from its doc comment.
        <W::Table as clap::Args>::augment_args(cmd).about(W::ABOUT)
    }

    fn run(&self, world: &World, deck: DeckText, flags: &ArgMatches) -> Result<()> {
        refuse_foreign_tables::<W>(&deck)?;
        let parsed: DeckTables<W> = deck.parse()?;
        let source = deck.source.as_str();
        let run = merge(parsed.run, from_flags::<RunArgs>(flags)?).resolve(source)?;
        let graph = if W::GRAPH {
            let table = merge(parsed.graph.unwrap_or_default(), from_flags(flags)?);
            Some(table.resolve(source)?)
        } else {
            None
        };
        let table = merge(parsed.table.unwrap_or_default(), from_flags(flags)?);
        let workload = W::configure(source, table, graph)?;
        let harness = Harness::start(world, run, deck.text, W::NAME)?;
        workload.execute(&harness)
    }
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
}

impl<'w> Harness<'w> {
    fn start(
        world: &'w World,
        run: RunConfig,
        deck: String,
        workload: &'static str,
    ) -> Result<Self> {
        let start_time = timestamp();
        start_threads(world, run.threads)?;
        let device = device::select(world, run.device)?;
        world.agree(check_writable(world, &run.output))?;
        Ok(Harness {
            world,
            device,
            workload,
            invocation: Invocation::current(deck),
            start_time,
            phases: RefCell::new(Vec::new()),
            interrupt: Interrupt::watch()?,
            run,
        })
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
    /// the provenance, the phase times and what `write` adds, and renames it; every rank
    /// returns the same outcome.
    pub fn write_results(&self, write: impl FnOnce(&ResultFile) -> Result<()>) -> Result<()> {
        let provenance = self.provenance()?;
        let phases = self.phases.borrow().clone();
        let written = if self.world.is_root() {
            write_file(&self.run.output, &provenance, &phases, write).map(Some)
        } else {
            Ok(None)
        };
        if let Some(path) = self.world.agree(written)? {
            println!("results: {}", path.display());
        }
        Ok(())
    }

    /// Print `name: value` lines on rank 0, values aligned (the statistics block).
    pub fn summary(&self, rows: &[(&str, String)]) {
        if !self.world.is_root() {
            return;
        }
        let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0) + 2;
        for (name, value) in rows {
            println!("{:<width$}{value}", format!("{name}:"));
        }
    }
}

fn write_file(
    path: &Path,
    provenance: &Provenance,
    phases: &[(String, f64)],
    write: impl FnOnce(&ResultFile) -> Result<()>,
) -> Result<PathBuf> {
    let file = ResultFile::create(path)?;
    provenance.write(&file.root())?;
    let group = file.group("phases")?;
    for (name, secs) in phases {
        group.writer().attr(name, *secs)?;
    }
    write(&file)?;
    file.finish()
}

/// Rank 0 makes sure the result file can be created before any compute starts: it creates
/// the directory and the temporary file, and removes the temporary file again.
fn check_writable(world: &World, path: &Path) -> Result<()> {
    if !world.is_root() {
        return Ok(());
    }
    let probe = ResultFile::create(path)?;
    probe.discard()
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

/// Cores online on this node (from /sys, e.g. "0-63" or "0-3,8-11"), if known.
fn online_cores() -> Option<usize> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?;
    text.trim().split(',').try_fold(0, |count, range| {
        let (lo, hi) = range.split_once('-').unwrap_or((range, range));
        Some(count + hi.parse::<usize>().ok()? - lo.parse::<usize>().ok()? + 1)
    })
}
