//! Job decks (`inputs/*.toml`): loading, parsing with errors that name the file, the line and
//! the key, merging command-line flags over a deck's table, and the `[run]` table shared by
//! every workload. A workload's own table lives in its module; the `[graph]` table in
//! `graph::source`.

use crate::comm::{GpuTransport, World};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::files::must_be_regular;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// `[run]`: settings shared by every workload. Also the shared command-line flags.
#[derive(Debug, Default, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// HDF5 result file (written as NAME.tmp, then renamed)
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Seed of every random stream (graph, roots, samples)
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
    /// Overwrite an existing result file (default false: an existing output is refused)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub force: Option<bool>,
}

/// Most worker threads a rank may start (`[run] threads`): far above any node's cores, yet
/// a count the operating system can start at once, unlike the billions a typo can ask for.
pub const MAX_THREADS: usize = 4096;

/// Settings shared by every workload, resolved.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub output: PathBuf,
    pub seed: u64,
    pub device: Device,
    pub threads: Option<usize>,
    pub gpu_transport: GpuTransport,
    pub force: bool,
}

impl RunArgs {
    /// Fill the defaults and check the values (`source` names where they came from).
    pub fn resolve(self, source: &str) -> Result<RunConfig> {
        if let Some(threads) = self.threads.filter(|t| !(1..=MAX_THREADS).contains(t)) {
            let expected = format!("an integer from 1 to {MAX_THREADS}");
            return Err(out_of_range(source, "[run] threads", threads, &expected));
        }
        Ok(RunConfig {
            output: self.output.unwrap_or_else(|| PathBuf::from("tessera.h5")),
            seed: self.seed.unwrap_or(1),
            device: self.device.unwrap_or(Device::Auto),
            threads: self.threads,
            gpu_transport: self.gpu_transport.unwrap_or(GpuTransport::Auto),
            force: self.force.unwrap_or(false),
        })
    }
}

/// A deck's text, where it came from, and its top-level tables by name.
pub struct DeckText {
    /// The file name, or "command line" when there is no deck.
    pub source: String,
    pub text: String,
    pub tables: Vec<String>,
}

impl DeckText {
    /// No deck: every setting comes from the command line.
    pub fn none() -> DeckText {
        DeckText {
            source: "command line".into(),
            text: String::new(),
            tables: Vec::new(),
        }
    }

    /// Read a deck (collective): rank 0 reads the file and broadcasts its text, so a large
    /// job does not send every rank to the file system; every rank then parses the same text
    /// and so reaches the same verdict.
    pub fn load(world: &World, path: &Path) -> Result<DeckText> {
        let source = path.display().to_string();
        // Rank 0 sends the text, or an error message behind a leading NUL (decks never hold NUL).
        let mut bytes = if world.is_root() {
            must_be_regular(path)
                .and_then(|()| std::fs::read_to_string(path))
                .map_or_else(
                    |e| format!("\0cannot read deck: {e}").into_bytes(),
                    String::into_bytes,
                )
        } else {
            Vec::new()
        };
        world.broadcast_bytes(&mut bytes);
        let text = String::from_utf8(bytes)
            .map_err(|_| config_error(&source, "deck is not UTF-8 text"))?;
        if let Some(msg) = text.strip_prefix('\0') {
            return Err(config_error(&source, msg));
        }
        let table: toml::Table = parse(&source, &text)?;
        Ok(DeckText {
            tables: table.keys().cloned().collect(),
            source,
            text,
        })
    }

    /// `e` with the deck line of the key it names, where it is a deck error that names a key
    /// (`[table] key ...`) but no line: range checks run after parsing, on merged values.
    pub fn locate(&self, e: Error) -> Error {
        let Error::Config { file, msg } = &e else {
            return e;
        };
        if *file != self.source {
            return e;
        }
        match key_line(&self.text, msg) {
            Some(line) => config_error(
                file,
                &format!(
                    "line {line} ({}): {msg}",
                    self.text.lines().nth(line - 1).unwrap_or("").trim()
                ),
            ),
            None => e,
        }
    }

    /// Parse the whole deck as `T` (errors name the line).
    pub fn parse<T: DeserializeOwned + Default>(&self) -> Result<T> {
        if self.text.is_empty() {
            return Ok(T::default());
        }
        parse(&self.source, &self.text)
    }
}

/// The line (from 1) of the key a message starts with (`[table] key`), inside that table.
fn key_line(text: &str, msg: &str) -> Option<usize> {
    let rest = msg.strip_prefix('[')?;
    let (table, rest) = rest.split_once(']')?;
    let key = rest.split_whitespace().next()?;
    let header = format!("[{table}]");
    let mut inside = false;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line.starts_with(&header);
        } else if inside
            && line
                .split_once('=')
                .is_some_and(|(k, _)| k.trim().trim_matches('"') == key)
        {
            return Some(i + 1);
        }
    }
    None
}

/// Parse TOML text as `T`; an error names the file, the line and what was expected.
pub fn parse<T: DeserializeOwned>(name: &str, text: &str) -> Result<T> {
    toml::from_str(text).map_err(|e| {
        // The span of an unknown key can start at the newline before it: skip white space.
        let line = e.span().map(|s| {
            let rest = &text[s.start..];
            let start = s.start + rest.len() - rest.trim_start().len();
            text[..start].matches('\n').count() + 1
        });
        let msg = types_in_words(e.message().trim());
        config_error(
            name,
            &match line {
                Some(l) => format!(
                    "line {l} ({}): {msg}",
                    text.lines().nth(l - 1).unwrap_or("").trim()
                ),
                None => msg,
            },
        )
    })
}

/// A parser's message with Rust's type names said in words: "expected u32" becomes "expected
/// an integer from 0 to 4294967295".
pub fn types_in_words(msg: &str) -> String {
    const WORDS: [(&str, &str); 11] = [
        ("u8", "an integer from 0 to 255"),
        ("u16", "an integer from 0 to 65535"),
        ("u32", "an integer from 0 to 4294967295"),
        ("u64", "an integer from 0 to 18446744073709551615"),
        ("usize", "an integer from 0 to 18446744073709551615"),
        ("i32", "an integer"),
        ("i64", "an integer"),
        ("f32", "a number"),
        ("f64", "a number"),
        ("a boolean", "true or false"),
        ("bool", "true or false"),
    ];
    let mut out = msg.to_string();
    for (name, words) in WORDS {
        let from = format!("expected {name}");
        let mut at = 0;
        while let Some(found) = out[at..].find(&from) {
            let start = at + found;
            let end = start + from.len();
            // A whole name only: "expected u32" but not "expected u32s".
            if out[end..].starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                at = end;
                continue;
            }
            let replacement = format!("expected {words}");
            out.replace_range(start..end, &replacement);
            at = start + replacement.len();
        }
    }
    out
}

/// A table's keys from the command line over the same table's keys from the deck: the flags
/// and the deck table are one type, every key optional, so one serde round trip merges them.
pub fn merge<T: Serialize + DeserializeOwned>(deck: T, flags: T) -> T {
    let table = |t: &T| toml::Table::try_from(t).expect("a table of optional values serialises");
    let mut merged = table(&deck);
    merged.extend(table(&flags));
    merged
        .try_into()
        .expect("keys of one table type deserialise")
}

pub use crate::error::{config_error, out_of_range};

/// Refuse a list with two values that `name` stores under one name in the result file (a
/// group or attribute per value, e.g. "beta = 0.4"), which HDF5 would refuse only once the
/// run is done: `key = a, b: the values must be distinct (both are stored as "NAME")`.
pub fn distinct<T: std::fmt::Display>(
    source: &str,
    key: &str,
    values: &[T],
    name: impl Fn(&T) -> String,
) -> Result<()> {
    let mut seen = std::collections::HashMap::new();
    for (j, value) in values.iter().enumerate() {
        if let Some(&i) = seen.get(&name(value)) {
            let msg = format!(
                "{key} = {}, {value}: the values must be distinct (both are stored as \"{}\")",
                values[i],
                name(value)
            );
            return Err(config_error(source, &msg));
        }
        seen.insert(name(value), j);
    }
    Ok(())
}

/// A deck value that is one number or a list (`beta = 0.44` or `beta = [0.4, 0.44]`), or
/// comma-separated as a flag (`--beta 0.4,0.44`): parameter sweeps.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Numbers(pub Vec<f64>);

impl std::str::FromStr for Numbers {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        s.split(',')
            .map(|v| {
                v.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("{v:?} is not a number"))
            })
            .collect::<std::result::Result<_, _>>()
            .map(Numbers)
    }
}

impl<'de> Deserialize<'de> for Numbers {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum OneOrMany {
            One(f64),
            Many(Vec<f64>),
        }
        match OneOrMany::deserialize(d) {
            Ok(OneOrMany::One(x)) => Ok(Numbers(vec![x])),
            Ok(OneOrMany::Many(xs)) => Ok(Numbers(xs)),
            Err(_) => Err(serde::de::Error::custom(
                "expected a number or a list of numbers",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, Deserialize, Serialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Table {
        scale: Option<u32>,
        roots: Option<u32>,
        flag: Option<bool>,
    }

    /// A deck with a `[run]` table beside the test's table (read for its errors only).
    #[derive(Debug, Default, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Deck {
        #[serde(default)]
        run: RunArgs,
        bfs: Option<Table>,
    }

    fn err(text: &str) -> String {
        parse::<Deck>("d.toml", text).unwrap_err().to_string()
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
    fn flags_override_the_deck_key_by_key() {
        let deck: Deck = parse("d.toml", "[bfs]\nscale = 10\nroots = 8\n").unwrap();
        let flags = Table {
            scale: Some(12),
            flag: Some(false),
            ..Default::default()
        };
        let merged = merge(deck.bfs.unwrap(), flags);
        assert_eq!(
            merged,
            Table {
                scale: Some(12),
                roots: Some(8),
                flag: Some(false)
            }
        );
    }

    #[test]
    fn thread_counts_out_of_range_are_refused() {
        for threads in [0, MAX_THREADS + 1, 4294967297] {
            let run = RunArgs {
                threads: Some(threads),
                ..Default::default()
            };
            let e = run.resolve("d.toml").unwrap_err().to_string();
            let said = format!(
                "[run] threads = {threads} is out of range: expected an integer from 1 to 4096"
            );
            assert!(e.contains(&said), "{e}");
        }
        let most = RunArgs {
            threads: Some(MAX_THREADS),
            ..Default::default()
        };
        assert_eq!(most.resolve("d.toml").unwrap().threads, Some(MAX_THREADS));
    }
}
