//! `tessera generate`: make the `[graph]` graph, report its size, checksums and generation
//! rate, and optionally write it as an edge list or Matrix Market file (every rank its own
//! byte range of one file), so it can be taken into networkx, cuGraph or the Graph500
//! reference. Reading the file back gives the same `csr_checksum`.

use crate::error::Result;
use crate::graph::build::{self, Need};
use crate::graph::source::GraphConfig;
use crate::graph::writers::{check_writable, write_graph, GraphFormat};
use crate::harness::{Harness, Workload};
use crate::report::Report;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `[generate]`. Also the `tessera generate` flags.
#[derive(Debug, Default, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct GenerateTable {
    /// Write the graph to this file: `.mtx` as Matrix Market, anything else as an edge list
    #[arg(long)]
    pub write: Option<PathBuf>,
}

pub struct Generate {
    graph: GraphConfig,
    write: Option<PathBuf>,
}

impl Workload for Generate {
    const NAME: &'static str = "generate";
    const ABOUT: &'static str =
        "Generate a graph (or read one), report it, and write it as an edge list or Matrix Market file";
    const GRAPH: bool = true;
    type Table = GenerateTable;

    fn configure(_: &str, t: GenerateTable, graph: Option<GraphConfig>) -> Result<Self> {
        Ok(Generate {
            graph: graph.expect("generate takes a graph"),
            write: t.write,
        })
    }

    /// The graph against host memory, and the file to write (its directory made) writable,
    /// and not the result file, before anything is generated.
    fn check_sizes(&self, h: &Harness) -> Result<()> {
        build::check_before_making(h.world, &self.graph, &Need::CSR)?;
        match &self.write {
            Some(path) => check_writable(h.world, path, &h.run),
            None => Ok(()),
        }
    }

    fn execute(&self, h: &Harness) -> Result<Report> {
        let (built, source) = h.timed("graph", || {
            build::build_keeping_source(
                h.world,
                &self.graph,
                h.run.seed,
                (&h.device, h.run.gpu_transport),
                &|_, _| Ok(()),
            )
        })?;
        let mut report = Report::new();
        built.report_shown(&mut report, &self.graph, h.run.seed);
        if let Some(path) = &self.write {
            let comments = vec![
                format!(
                    "tessera {} graph: {} {}",
                    env!("CARGO_PKG_VERSION"),
                    self.graph.spec.kind(),
                    self.graph.spec.parameters()
                ),
                format!("seed {}", h.run.seed),
            ];
            let format = GraphFormat::from_path(path);
            let bytes = h.timed("write", || {
                write_graph(h.world, source.as_ref(), path, format, &comments)
            })?;
            let shown = path.display().to_string();
            let mut r = report.group("");
            r.text("written_file", shown.clone())
                .shown_as(format!("{shown} ({bytes} bytes)"));
            r.count("written_bytes", bytes).stored_only();
        }
        Ok(report)
    }
}
