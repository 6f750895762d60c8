//! The `tessera` command line: starts MPI, parses the arguments (one subcommand per workload,
//! from `workloads::WORKLOADS`) and hands over to the harness. Every error ends here as one
//! line: from rank 0 alone with exit status 1 when every rank agrees on it, else from the rank
//! that saw it, which then ends the job through `MPI_Abort`.

use clap::{Arg, ArgAction, ArgMatches, Command};
use std::io::Write;
use std::path::PathBuf;
use tessera::comm::World;
use tessera::config::{config_error, types_in_words, DeckText};
use tessera::device;
use tessera::error::{Error, Result};
use tessera::signals::INTERRUPTED;
use tessera::workloads::{self, WORKLOADS};

fn cli() -> Command {
    let run = Command::new("run")
        .about("Run the workload a deck describes (flags after the deck override it)")
        .arg(
            Arg::new("deck")
                .required(true)
                .value_parser(clap::value_parser!(PathBuf)),
        )
        .arg(
            Arg::new("flags")
                .num_args(0..)
                .trailing_var_arg(true)
                .allow_hyphen_values(true)
                .help("The deck's workload's flags"),
        );
    let kernels = Command::new("kernels")
        .about("Compile every CUDA kernel with NVRTC (no GPU needed) and report")
        .arg(
            Arg::new("arch")
                .long("arch")
                .default_value("sm_90")
                .help("Target architecture"),
        );
    Command::new("tessera")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Irregular graph and lattice workloads on MPI ranks (GPU or CPU)")
        .arg(
            Arg::new("verbose")
                .short('v')
                .long("verbose")
                .global(true)
                .action(ArgAction::SetTrue)
                .help(
                    "Log at info level on every rank (default: rank 0 at info, the others at warn)",
                ),
        )
        .subcommand_required(true)
        .subcommand(run)
        .subcommands(WORKLOADS.iter().map(|w| w.command()))
        .subcommand(Command::new("info").about("Version, build and machine information"))
        .subcommand(kernels)
}

fn main() {
    let Some(world) = World::init() else {
        eprintln!("tessera: error: MPI was already initialised");
        std::process::exit(1);
    };
    let matches = match cli().try_get_matches() {
        Ok(matches) => matches,
        Err(e) if !e.use_stderr() => {
            // --help or --version: clap's text from rank 0 only.
            if world.is_root() {
                let _ = e.print();
            }
            drop(world);
            std::process::exit(0);
        }
        Err(e) => {
            // A usage error: one line from rank 0, the exit status of every other error.
            if world.is_root() {
                eprintln!(
                    "tessera: error: command line: {}",
                    usage_message(&e, called_workload())
                );
            }
            drop(world);
            std::process::exit(1);
        }
    };
    init_logging(world.rank(), matches.get_flag("verbose"));
    match execute(&world, &matches) {
        Ok(()) => {}
        Err(e) if e.is_collective() => {
            // Every rank hit the same error: one line from rank 0, a clean non-zero exit.
            if world.is_root() {
                eprintln!("tessera: error: {e}");
            }
            let code = if matches!(e, Error::Interrupted(_)) {
                INTERRUPTED
            } else {
                1
            };
            drop(world);
            std::process::exit(code);
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

fn execute(world: &World, matches: &ArgMatches) -> Result<()> {
    let (name, sub) = matches.subcommand().expect("a subcommand is required");
    match name {
        "run" => run_deck(world, sub),
        "info" => {
            info(world);
            Ok(())
        }
        "kernels" => compile_kernels(world, sub.get_one::<String>("arch").expect("default")),
        workload => {
            let entry = workloads::find(workload).expect("subcommands come from the list");
            let deck = match sub.get_one::<PathBuf>("deck") {
                Some(path) => DeckText::load(world, path)?,
                None => DeckText::none(),
            };
            entry.run(world, deck, sub)
        }
    }
}

/// `tessera run DECK [FLAGS]`: the deck's one workload table picks the workload, whose own
/// flags are then the only ones accepted.
fn run_deck(world: &World, sub: &ArgMatches) -> Result<()> {
    let path = sub.get_one::<PathBuf>("deck").expect("required");
    let deck = DeckText::load(world, path)?;
    let named: Vec<&str> = WORKLOADS
        .iter()
        .map(|w| w.name())
        .filter(|n| deck.tables.iter().any(|t| t == n))
        .collect();
    let [name] = named[..] else {
        let all: Vec<String> = WORKLOADS
            .iter()
            .map(|w| format!("[{}]", w.name()))
            .collect();
        return Err(config_error(
            &deck.source,
            &format!(
                "expected exactly one workload table, one of {}",
                all.join(", ")
            ),
        ));
    };
    let entry = workloads::find(name).expect("named from the list");
    let flags = sub.get_many::<String>("flags").into_iter().flatten();
    let args = std::iter::once(name.to_string()).chain(flags.cloned());
    let command = entry.command().bin_name(format!("tessera {name}"));
    let matches = match command.try_get_matches_from(args) {
        Ok(matches) => matches,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => {
            // `tessera run DECK FLAGS --help`: the help of the deck's workload.
            if world.is_root() {
                let _ = e.print();
            }
            return Ok(());
        }
        Err(e) => {
            return Err(config_error(
                "command line",
                &format!(
                    "{} (the deck runs {name}: see `tessera {name} --help`)",
                    usage_message(&e, Some(name))
                ),
            ));
        }
    };
    if matches.get_one::<PathBuf>("deck").is_some() {
        return Err(config_error(
            "command line",
            "--deck given after `run DECK`",
        ));
    }
    entry.run(world, deck, &matches)
}

/// One line for a usage error: a negative number as a range error, a flag of another
/// workload naming that workload, types in words; otherwise clap's own first line and tip.
/// `workload`: the one the command runs, if known.
fn usage_message(e: &clap::Error, workload: Option<&str>) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let flag = context(ContextKind::InvalidArg).map(|a| {
        // "--scale <SCALE>" is the flag --scale.
        a.split_whitespace().next().unwrap_or_default().to_string()
    });
    let value = context(ContextKind::InvalidValue);
    match (e.kind(), flag, value) {
        (ErrorKind::ValueValidation, Some(flag), Some(value))
            if value.starts_with('-') && value[1..].parse::<f64>().is_ok() =>
        {
            format!("{flag} = {value} is out of range: expected a number >= 0")
        }
        (ErrorKind::ValueValidation, Some(flag), Some(value)) => {
            let why = std::error::Error::source(e)
                .map(|s| s.to_string())
                .unwrap_or_default();
            format!(
                "{flag} = {value:?} is not valid: {}",
                parse_error_in_words(&why)
            )
        }
        (ErrorKind::UnknownArgument, Some(flag), _) => match flag_owners(&flag) {
            Some(owners) => format!(
                "{flag} is not a flag of {}: it belongs to {owners} (see `tessera {} --help`)",
                workload.unwrap_or("this command"),
                owners.split(", ").next().unwrap_or_default()
            ),
            None => first_line_and_tip(e),
        },
        _ => first_line_and_tip(e),
    }
}

/// A value parser's complaint in words ("invalid digit found in string": not an integer).
fn parse_error_in_words(why: &str) -> String {
    match why {
        "invalid digit found in string" => "expected a non-negative integer".into(),
        "cannot parse integer from empty string" => "expected an integer, found nothing".into(),
        "number too large to fit in target type" => "too large for this key".into(),
        "invalid float literal" => "expected a number".into(),
        _ => types_in_words(why),
    }
}

/// clap's message as one line: its first line and its tip, if any.
fn first_line_and_tip(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines
        .next()
        .unwrap_or("bad arguments")
        .trim_start_matches("error: ")
        .to_string();
    match lines.find(|l| l.starts_with("tip:")) {
        Some(tip) => format!("{first} ({tip})"),
        None => first,
    }
}

/// The workloads (comma-separated) that take the long flag `flag` ("--n"), if any.
fn flag_owners(flag: &str) -> Option<String> {
    let long = flag.strip_prefix("--")?;
    let owners: Vec<&str> = WORKLOADS
        .iter()
        .filter(|w| {
            w.command()
                .get_arguments()
                .any(|a| a.get_long() == Some(long))
        })
        .map(|w| w.name())
        .collect();
    (!owners.is_empty()).then(|| owners.join(", "))
}

/// The workload named on this process's command line, if any.
fn called_workload() -> Option<&'static str> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    WORKLOADS
        .iter()
        .map(|w| w.name())
        .find(|n| args.iter().any(|a| a == n))
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

fn info(world: &World) {
    let hosts = world.hostnames().unwrap_or_default();
    if world.is_root() {
        println!(
            "tessera {} ({})",
            env!("CARGO_PKG_VERSION"),
            env!("TESSERA_GIT_REVISION")
        );
        println!("ranks: {} on {}", world.size(), hosts.join(", "));
        // The node's cores, not this rank's binding (mpirun binds a rank to one core).
        let allowed = std::thread::available_parallelism().map_or(1, |n| n.get());
        println!(
            "cores on this node: {} ({allowed} bound to rank 0)",
            tessera::harness::online_cores().unwrap_or(allowed)
        );
        match device::visible_gpus() {
            None => println!("gpus: none (the CUDA driver library cannot be loaded)"),
            Some(n) => println!("gpus visible on this node: {n}"),
        }
        let names: Vec<&str> = WORKLOADS.iter().map(|w| w.name()).collect();
        println!("workloads: {}", names.join(", "));
    }
}
