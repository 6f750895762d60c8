//! The `tessera` command line. Parses arguments, starts MPI and hands over to the workload.

use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use tessera::algo::bfs;
use tessera::comm::World;
use tessera::config::{self, BfsArgs, LangfordArgs, LoadedDeck, RunArgs};
use tessera::device::{self, Selected};
use tessera::error::{Error, Result};
use tessera::graph500::{self, Cpu};
use tessera::langford;
use tessera::output::Invocation;

#[derive(Parser)]
#[command(
    name = "tessera",
    version,
    about = "Irregular graph and lattice workloads on MPI ranks (GPU or CPU)"
)]
struct Cli {
    /// Log at info level on every rank (default: rank 0 at info, the others at warn)
    #[arg(short, long, global = true)]
    verbose: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the workload a deck describes (flags override the deck)
    Run {
        deck: PathBuf,
        #[command(flatten)]
        run: RunArgs,
        #[command(flatten)]
        bfs: BfsFlags,
        #[command(flatten)]
        langford: LangfordArgs,
    },
    /// Graph500 BFS on a Kronecker graph or a graph file
    Bfs {
        /// Deck to start from (flags override it)
        #[arg(long)]
        deck: Option<PathBuf>,
        #[command(flatten)]
        run: RunArgs,
        #[command(flatten)]
        bfs: BfsFlags,
    },
    /// Count Langford pairings L(2,n) with an MPI task farm (Godfrey's sum or Miller's search)
    Langford {
        /// Deck to start from (flags override it)
        #[arg(long)]
        deck: Option<PathBuf>,
        #[command(flatten)]
        run: RunArgs,
        #[command(flatten)]
        langford: LangfordArgs,
    },
    /// Version, build and machine information
    Info,
    /// Compile every CUDA kernel with NVRTC (no GPU needed) and report
    Kernels {
        /// Target architecture
        #[arg(long, default_value = "sm_90")]
        arch: String,
    },
}

#[derive(clap::Args)]
struct BfsFlags {
    #[command(flatten)]
    args: BfsArgs,
    /// Skip validation of the searches
    #[arg(long)]
    no_validate: bool,
}

fn main() {
    let cli = Cli::parse();
    let Some(world) = World::init() else {
        eprintln!("tessera: error: MPI was already initialised");
        std::process::exit(1);
    };
    init_logging(world.rank(), cli.verbose);
    match execute(&world, cli) {
        Ok(()) => {}
        Err(e) if e.is_collective() => {
            // Every rank hit the same error: one line from rank 0, a clean non-zero exit.
            if world.is_root() {
                eprintln!("tessera: error: {e}");
            }
            drop(world);
            std::process::exit(1);
        }
        Err(e) => {
            // One write per line, so lines of ranks failing together do not interleave.
            let line = format!("tessera: rank {}: error: {e}\n", world.rank());
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
            world.abort(1);
        }
    }
}

fn init_logging(rank: usize, verbose: bool) {
    let level = if rank == 0 || verbose { "info" } else { "warn" };
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(level))
        .format(move |buf, record| {
            writeln!(buf, "[rank {rank}] {}: {}", record.level(), record.args())
        })
        .init();
}

fn execute(world: &World, cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run {
            deck,
            run,
            bfs,
            langford,
        } => {
            let deck = config::load_deck(world, &deck)?;
            match (&deck.deck.bfs, &deck.deck.langford) {
                (Some(_), None) => run_bfs(world, Some(deck), &run, bfs),
                (None, Some(_)) => run_langford(world, Some(deck), &run, &langford),
                _ => Err(Error::Config {
                    file: deck.path,
                    msg: "expected exactly one workload table: [bfs] or [langford]".into(),
                }),
            }
        }
        Command::Langford {
            deck,
            run,
            langford,
        } => {
            let deck = deck.map(|d| config::load_deck(world, &d)).transpose()?;
            run_langford(world, deck, &run, &langford)
        }
        Command::Bfs { deck, run, bfs } => {
            let deck = deck.map(|d| config::load_deck(world, &d)).transpose()?;
            run_bfs(world, deck, &run, bfs)
        }
        Command::Info => {
            info(world);
            Ok(())
        }
        Command::Kernels { arch } => compile_kernels(world, &arch),
    }
}

/// Compile every kernel for `arch`; any compile error is an error of the run.
fn compile_kernels(world: &World, arch: &str) -> Result<()> {
    for &(file, source) in device::KERNELS {
        let ptx = device::compile(file, source, arch)?;
        if world.is_root() {
            println!(
                "kernels/{file}: compiled for {arch} ({} bytes of PTX)",
                ptx.to_src().len()
            );
        }
    }
    Ok(())
}

/// Where the settings come from (the deck's path, or the command line) and the deck's tables
/// (empty without a deck).
fn deck_parts(deck: &Option<LoadedDeck>) -> (String, config::Deck) {
    match deck {
        Some(d) => (d.path.clone(), d.deck.clone()),
        None => ("command line".to_string(), config::Deck::default()),
    }
}

/// Start the rank's worker threads and choose its device.
fn start(world: &World, run: &config::RunConfig) -> Result<Selected> {
    start_threads(world, run.threads)?;
    device::select(world, run.device)
}

fn run_bfs(
    world: &World,
    deck: Option<LoadedDeck>,
    run_cli: &RunArgs,
    flags: BfsFlags,
) -> Result<()> {
    let (source, parsed) = deck_parts(&deck);
    let mut bfs_cli = flags.args;
    if flags.no_validate {
        bfs_cli.validate = Some(false);
    }
    let run = config::resolve_run(&source, &parsed.run, run_cli)?;
    let cfg = config::resolve_bfs(&source, &parsed.bfs.clone().unwrap_or_default(), &bfs_cli)?;
    let selected = start(world, &run)?;
    let invocation = Invocation::current(deck.map(|d| d.text).unwrap_or_default());
    let params = bfs::Params {
        mode: cfg.mode,
        alpha: cfg.alpha,
        beta: cfg.beta,
    };
    let path = match &selected {
        Selected::Cpu => graph500::run(world, &run, &cfg, &Cpu, &params, &invocation)?,
        Selected::Gpu(gpu) => graph500::run(world, &run, &cfg, gpu, &params, &invocation)?,
    };
    if world.is_root() {
        println!("results: {}", path.display());
    }
    Ok(())
}

fn run_langford(
    world: &World,
    deck: Option<LoadedDeck>,
    run_cli: &RunArgs,
    cli: &LangfordArgs,
) -> Result<()> {
    let (source, parsed) = deck_parts(&deck);
    let run = config::resolve_run(&source, &parsed.run, run_cli)?;
    let cfg = config::resolve_langford(&source, &parsed.langford.clone().unwrap_or_default(), cli)?;
    let selected = start(world, &run)?;
    let invocation = Invocation::current(deck.map(|d| d.text).unwrap_or_default());
    if let Some(path) = langford::run(world, &run, &cfg, &selected, &invocation)? {
        println!("results: {}", path.display());
    }
    Ok(())
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

fn info(world: &World) {
    let hosts = world.hostnames().unwrap_or_default();
    if world.is_root() {
        println!(
            "tessera {} ({})",
            env!("CARGO_PKG_VERSION"),
            env!("TESSERA_GIT_REVISION")
        );
        println!("ranks: {} on {}", world.size(), hosts.join(", "));
        println!(
            "cores on this node: {}",
            std::thread::available_parallelism().map_or(1, |n| n.get())
        );
        match device::visible_gpus() {
            None => println!("gpus: none (the CUDA driver library cannot be loaded)"),
            Some(n) => println!("gpus visible on this node: {n}"),
        }
    }
}
