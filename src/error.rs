//! Typed errors. Every variant renders as one line that names what failed and why;
//! `main` prints it and either exits (errors every rank agrees on) or aborts the job
//! (errors seen by one rank only, which would otherwise leave the others hanging).

use std::fmt;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A deck or CLI value is wrong. Every rank parses the same deck, so every rank sees it.
    #[error("{file}: {msg}")]
    Config { file: String, msg: String },
    /// A line of a graph input file is malformed. Seen only by the rank that read that line.
    #[error("{file}:{line}: {msg}")]
    Input {
        file: String,
        line: u64,
        msg: String,
    },
    /// A whole input file is wrong (missing, unreadable, inconsistent header).
    #[error("{file}: {msg}")]
    InputFile { file: String, msg: String },
    /// A BFS parent array broke one of the Graph500 validation rules (agreed on by all ranks).
    #[error(
        "validation failed for root {root}: rule '{rule}' broken at vertex {vertex}: {detail}"
    )]
    Validation {
        root: u64,
        rule: Rule,
        vertex: u64,
        detail: String,
    },
    /// A result broke one of its workload's checks (agreed on by all ranks).
    #[error("check failed: {0}")]
    Check(String),
    /// The input graph has no Euler circuit (agreed on by all ranks): says why and where.
    #[error("not Eulerian: {0}")]
    NotEulerian(String),
    /// The requested device or resource is not available.
    #[error("{0}")]
    Unavailable(String),
    /// A CUDA call failed (the message names the call or kernel).
    #[error("GPU: {0}")]
    Gpu(String),
    /// Writing results failed.
    #[error("output {path}: {msg}")]
    Output { path: String, msg: String },
    /// SIGTERM or SIGINT ended the run (agreed on by all ranks); the job exits with 143.
    #[error("{0}")]
    Interrupted(String),
    /// An error one rank found, made common to all ranks by `World::agree`.
    #[error("{0}")]
    Agreed(String),
    /// A message would exceed what one MPI call can carry.
    #[error("communication: {0}")]
    Comm(String),
}

impl Error {
    /// True when every rank reaches the same error at the same point, so the job can end
    /// with a normal non-zero exit instead of MPI_Abort.
    pub fn is_collective(&self) -> bool {
        matches!(
            self,
            Error::Config { .. }
                | Error::Validation { .. }
                | Error::Check(_)
                | Error::NotEulerian(_)
                | Error::Unavailable(_)
                | Error::Agreed(_)
                | Error::Interrupted(_)
        )
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// A deck or CLI value is wrong: `source: msg`.
pub fn config_error(source: &str, msg: &str) -> Error {
    Error::Config {
        file: source.to_string(),
        msg: msg.to_string(),
    }
}

/// `key = value is out of range: expected ...`
pub fn out_of_range(
    source: &str,
    key: &str,
    value: impl std::fmt::Display,
    expected: &str,
) -> Error {
    config_error(
        source,
        &format!("{key} = {value} is out of range: expected {expected}"),
    )
}

/// The Graph500 validation rules (spec step 5), in the order the validator checks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Every parent is -1 or a vertex id in [0, N).
    ParentRange,
    /// The root is its own parent.
    RootSelfParent,
    /// No vertex other than the root is its own parent.
    OtherSelfParent,
    /// Following parents from any reached vertex ends at the root (no cycles, no chain into
    /// an unreached vertex). Levels are derived along these chains, so each tree edge joins
    /// levels that differ by exactly one by construction.
    TreeLevels,
    /// Each (v, parent(v)) is an edge of the input.
    ParentIsEdge,
    /// Every input edge joins vertices whose levels differ by at most one.
    EdgeLevelGap,
    /// The tree spans the root's component: no input edge joins a reached and an unreached vertex.
    Spanning,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rule::ParentRange => "parent in [-1, N)",
            Rule::RootSelfParent => "root is its own parent",
            Rule::OtherSelfParent => "only the root is its own parent",
            Rule::TreeLevels => "parents form a tree rooted at the root",
            Rule::ParentIsEdge => "tree edges are input edges",
            Rule::EdgeLevelGap => "input edges join levels differing by at most 1",
            Rule::Spanning => "tree spans the connected component",
        })
    }
}
