//! Job decks (`inputs/*.toml`) and command-line overrides.
//!
//! A deck has a `[run]` table and one table per workload. Every key is checked: unknown keys,
//! wrong types and out-of-range values are reported with the file, the key and the expected
//! form. A value given on the command line replaces the deck's.

use crate::algo::bfs::Mode;
use crate::comm::World;
use crate::error::{Error, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Device {
    Cpu,
    Gpu,
    Auto,
}

/// Where kernel 1 (building the CSR) runs. `auto`: on the GPU when the run computes on GPUs,
/// the graph is generated (Kronecker; files are read on the CPU) and the build fits in GPU
/// memory; otherwise on the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Construction {
    Auto,
    Cpu,
    Gpu,
}

/// How GPU ranks exchange device data: NCCL device to device, or staged through host memory
/// and MPI. `auto` takes NCCL when it can be loaded on every rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum GpuTransport {
    Auto,
    Nccl,
    Mpi,
}

/// The deck as written: every key optional, unknown keys rejected.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Deck {
    #[serde(default)]
    pub run: RunArgs,
    pub bfs: Option<BfsArgs>,
    pub langford: Option<LangfordArgs>,
}

/// `[run]`: settings shared by every workload. Also the shared command-line flags.
#[derive(Debug, Default, Clone, Deserialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// HDF5 result file (written as NAME.tmp, then renamed)
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Seed of every random stream (graph, roots)
    #[arg(long)]
    pub seed: Option<u64>,
    /// Where the local compute runs
    #[arg(long, value_enum)]
    pub device: Option<Device>,
    /// Worker threads per rank (default: the node's cores divided by the ranks on it)
    #[arg(long)]
    pub threads: Option<usize>,
    /// How GPU ranks exchange device data (default auto: NCCL where it loads, else MPI)
    #[arg(long, value_enum)]
    pub gpu_transport: Option<GpuTransport>,
}

/// `[bfs]`: Graph500 BFS. Also the `tessera bfs` flags.
#[derive(Debug, Default, Clone, Deserialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct BfsArgs {
    /// log2 of the number of vertices of the Kronecker graph
    #[arg(long)]
    pub scale: Option<u32>,
    /// Edge tuples per vertex of the Kronecker graph
    #[arg(long)]
    pub edgefactor: Option<u64>,
    /// Read the graph from this file instead (edge list `u v`, or Matrix Market `.mtx`)
    #[arg(long)]
    pub input: Option<PathBuf>,
    /// Number of search keys (Graph500 NBFS)
    #[arg(long)]
    pub roots: Option<u32>,
    /// Direction policy
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// Switch to bottom-up when frontier edges exceed unexplored edges / alpha
    #[arg(long)]
    pub alpha: Option<f64>,
    /// Switch back to top-down when the frontier falls below N / beta
    #[arg(long)]
    pub beta: Option<f64>,
    /// Where the CSR is built (default auto: on the GPU for generated graphs on GPU runs)
    #[arg(long, value_enum)]
    pub construction: Option<Construction>,
    /// Validate every search (on by default; `--no-validate` on the command line)
    #[arg(skip)]
    pub validate: Option<bool>,
    /// Store every search's depth array in the HDF5 file (for small graphs)
    #[arg(long)]
    pub write_depths: Option<bool>,
}

/// `[langford]`: Langford pair counting. Also the `tessera langford` flags.
#[derive(Debug, Default, Clone, Deserialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct LangfordArgs {
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
    /// Continue from the task ledger in the output file, skipping finished tasks
    #[arg(long)]
    #[serde(skip)]
    pub resume: bool,
    /// Run at most this many tasks, then save the ledger and stop (a measured slice; continue
    /// later with --resume)
    #[arg(long)]
    pub stop_after: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LangfordMethod {
    Godfrey,
    Miller,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FarmMode {
    Static,
    Dynamic,
}

/// Langford counting, resolved.
#[derive(Debug, Clone)]
pub struct LangfordConfig {
    pub n: u32,
    pub method: LangfordMethod,
    pub depth: u32,
    pub farm: FarmMode,
    pub resume: bool,
    pub stop_after: Option<u64>,
}

/// Largest Langford n: 2n positions in one 64-bit mask.
pub const MAX_LANGFORD_N: u32 = 32;

/// Settings shared by every workload, resolved.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub output: PathBuf,
    pub seed: u64,
    pub device: Device,
    pub threads: Option<usize>,
    pub gpu_transport: GpuTransport,
}

#[derive(Debug, Clone)]
pub enum GraphInput {
    Kronecker { scale: u32, edgefactor: u64 },
    File(PathBuf),
}

/// Graph500 BFS, resolved.
#[derive(Debug, Clone)]
pub struct BfsConfig {
    pub graph: GraphInput,
    pub roots: u32,
    pub mode: Mode,
    pub alpha: f64,
    pub beta: f64,
    pub construction: Construction,
    pub validate: bool,
    pub write_depths: bool,
}

/// Largest SCALE: Graph500 ids need 48 bits, and 2^SCALE * edgefactor must fit in u64.
pub const MAX_SCALE: u32 = 42;

/// The deck's text and its parsed contents.
pub struct LoadedDeck {
    pub path: String,
    pub text: String,
    pub deck: Deck,
}

/// Read and parse a deck (collective): rank 0 reads the file and broadcasts its text, so a
/// large job does not send every rank to the file system; every rank then parses the same text
/// and so reaches the same verdict.
pub fn load_deck(world: &World, path: &Path) -> Result<LoadedDeck> {
    let name = path.display().to_string();
    // Rank 0 sends the text, or an error message behind a leading NUL (decks never hold NUL).
    let mut bytes = if world.is_root() {
        std::fs::read_to_string(path).map_or_else(
            |e| format!("\0cannot read deck: {e}").into_bytes(),
            String::into_bytes,
        )
    } else {
        Vec::new()
    };
    world.broadcast_bytes(&mut bytes);
    let text = String::from_utf8(bytes).map_err(|_| Error::Config {
        file: name.clone(),
        msg: "deck is not UTF-8 text".into(),
    })?;
    if let Some(msg) = text.strip_prefix('\0') {
        return Err(Error::Config {
            file: name,
            msg: msg.to_string(),
        });
    }
    let deck = parse_deck(&name, &text)?;
    Ok(LoadedDeck {
        path: name,
        text,
        deck,
    })
}

pub fn parse_deck(name: &str, text: &str) -> Result<Deck> {
    toml::from_str(text).map_err(|e| {
        // The span of an unknown key can start at the newline before it: skip white space.
        let line = e.span().map(|s| {
            let rest = &text[s.start..];
            let start = s.start + rest.len() - rest.trim_start().len();
            text[..start].matches('\n').count() + 1
        });
        let msg = e.message().trim().to_string();
        Error::Config {
            file: name.to_string(),
            msg: match line {
                Some(l) => format!(
                    "line {l} ({}): {msg}",
                    text.lines().nth(l - 1).unwrap_or("").trim()
                ),
                None => msg,
            },
        }
    })
}

fn range_error(source: &str, key: &str, value: impl std::fmt::Display, expected: &str) -> Error {
    Error::Config {
        file: source.to_string(),
        msg: format!("{key} = {value} is out of range: expected {expected}"),
    }
}

/// Merge the command line over the deck (`source` names where the deck came from).
pub fn resolve_run(source: &str, deck: &RunArgs, cli: &RunArgs) -> Result<RunConfig> {
    let threads = cli.threads.or(deck.threads);
    if threads == Some(0) {
        return Err(range_error(source, "[run] threads", 0, "an integer >= 1"));
    }
    Ok(RunConfig {
        output: cli
            .output
            .clone()
            .or(deck.output.clone())
            .unwrap_or_else(|| PathBuf::from("tessera.h5")),
        seed: cli.seed.or(deck.seed).unwrap_or(1),
        device: cli.device.or(deck.device).unwrap_or(Device::Auto),
        threads,
        gpu_transport: cli
            .gpu_transport
            .or(deck.gpu_transport)
            .unwrap_or(GpuTransport::Auto),
    })
}

pub fn resolve_bfs(source: &str, deck: &BfsArgs, cli: &BfsArgs) -> Result<BfsConfig> {
    let pick = |c: Option<u64>, d: Option<u64>| c.or(d);
    let input = cli.input.clone().or(deck.input.clone());
    let scale = cli.scale.or(deck.scale);
    let edgefactor = pick(cli.edgefactor, deck.edgefactor);
    let graph = match (input, scale) {
        (Some(path), None) if edgefactor.is_none() => GraphInput::File(path),
        (Some(_), _) => {
            return Err(Error::Config {
                file: source.to_string(),
                msg: "[bfs] input names a graph file; scale and edgefactor describe a generated graph: give one or the other".into(),
            })
        }
        (None, scale) => {
            let scale = scale.unwrap_or(16);
            let edgefactor = edgefactor.unwrap_or(16);
            if !(1..=MAX_SCALE).contains(&scale) {
                return Err(range_error(source, "[bfs] scale", scale, &format!("an integer in 1..={MAX_SCALE}")));
            }
            if !(1..=1 << 20).contains(&edgefactor) {
                return Err(range_error(source, "[bfs] edgefactor", edgefactor, "an integer in 1..=1048576"));
            }
            GraphInput::Kronecker { scale, edgefactor }
        }
    };
    let roots = cli.roots.or(deck.roots).unwrap_or(64);
    if !(1..=1 << 16).contains(&roots) {
        return Err(range_error(
            source,
            "[bfs] roots",
            roots,
            "an integer in 1..=65536",
        ));
    }
    let alpha = cli.alpha.or(deck.alpha).unwrap_or(14.0);
    let beta = cli.beta.or(deck.beta).unwrap_or(24.0);
    for (key, v) in [("[bfs] alpha", alpha), ("[bfs] beta", beta)] {
        if !(v.is_finite() && v > 0.0) {
            return Err(range_error(source, key, v, "a finite number > 0"));
        }
    }
    Ok(BfsConfig {
        graph,
        roots,
        mode: cli.mode.or(deck.mode).unwrap_or(Mode::Hybrid),
        alpha,
        beta,
        construction: cli
            .construction
            .or(deck.construction)
            .unwrap_or(Construction::Auto),
        validate: cli.validate.or(deck.validate).unwrap_or(true),
        write_depths: cli.write_depths.or(deck.write_depths).unwrap_or(false),
    })
}

pub fn resolve_langford(
    source: &str,
    deck: &LangfordArgs,
    cli: &LangfordArgs,
) -> Result<LangfordConfig> {
    let n = cli.n.or(deck.n).ok_or_else(|| Error::Config {
        file: source.to_string(),
        msg: "[langford] n is missing: expected an integer from 1 to 32 (--n N)".into(),
    })?;
    let expected_n = format!("an integer from 1 to {MAX_LANGFORD_N}");
    let n = u32::try_from(n)
        .ok()
        .filter(|n| (1..=MAX_LANGFORD_N).contains(n))
        .ok_or_else(|| range_error(source, "[langford] n", n, &expected_n))?;
    let method = cli
        .method
        .or(deck.method)
        .unwrap_or(LangfordMethod::Godfrey);
    let depth = cli.depth.or(deck.depth);
    let depth = match method {
        LangfordMethod::Godfrey => {
            // Default: tasks of about 2^38 points, a few seconds each on a GPU.
            let depth = depth.unwrap_or((2 * n).saturating_sub(38).max(4).min(2 * n));
            // n = 1, 2 (mod 4) need no tasks (the sum is zero by symmetry): any depth will do.
            let solvable = n.is_multiple_of(4) || n % 4 == 3;
            if !solvable || (depth.is_multiple_of(2) && (4..=2 * n).contains(&depth)) {
                depth
            } else {
                let expected = format!(
                    "an even integer from 4 to 2n = {} for Godfrey's method",
                    2 * n
                );
                return Err(range_error(source, "[langford] depth", depth, &expected));
            }
        }
        LangfordMethod::Miller => {
            let depth = depth.unwrap_or(n.min(3));
            if (1..=n).contains(&depth) {
                depth
            } else {
                let expected = format!("an integer from 1 to n = {n} for Miller's method");
                return Err(range_error(source, "[langford] depth", depth, &expected));
            }
        }
    };
    let stop_after = cli.stop_after.or(deck.stop_after);
    if stop_after == Some(0) {
        return Err(range_error(
            source,
            "[langford] stop_after",
            0,
            "an integer >= 1",
        ));
    }
    Ok(LangfordConfig {
        n,
        method,
        depth,
        farm: cli.farm.or(deck.farm).unwrap_or(FarmMode::Dynamic),
        resume: cli.resume,
        stop_after,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        let deck = parse_deck("d.toml", text);
        let e = match deck {
            Err(e) => e,
            Ok(d) => {
                resolve_bfs("d.toml", d.bfs.as_ref().unwrap(), &BfsArgs::default()).unwrap_err()
            }
        };
        e.to_string()
    }

    #[test]
    fn unknown_key_is_named_with_file_and_line() {
        let e = err("[run]\nseed = 1\n[bfs]\nscal = 3\n");
        assert!(
            e.starts_with("d.toml: line 4 (scal = 3): unknown field `scal`"),
            "{e}"
        );
    }

    #[test]
    fn wrong_type_is_named() {
        let e = err("[bfs]\nscale = \"big\"\n");
        assert!(
            e.contains("line 2 (scale = \"big\")") && e.contains("invalid type"),
            "{e}"
        );
    }

    #[test]
    fn out_of_range_values_are_named() {
        assert!(err("[bfs]\nscale = 50\n")
            .contains("[bfs] scale = 50 is out of range: expected an integer in 1..=42"));
        assert!(err("[bfs]\nalpha = -1.0\n").contains("[bfs] alpha = -1 is out of range"));
        assert!(err("[bfs]\nroots = 0\n").contains("[bfs] roots = 0"));
    }

    #[test]
    fn command_line_overrides_deck() {
        let deck = parse_deck("d.toml", "[bfs]\nscale = 10\nroots = 8\n").unwrap();
        let cli = BfsArgs {
            scale: Some(12),
            ..Default::default()
        };
        let c = resolve_bfs("d.toml", deck.bfs.as_ref().unwrap(), &cli).unwrap();
        assert!(matches!(
            c.graph,
            GraphInput::Kronecker {
                scale: 12,
                edgefactor: 16
            }
        ));
        assert_eq!(c.roots, 8);
    }
}
