//! `tessera generate`: make the `[graph]` graph, report its size, checksums and generation
//! rate, and optionally write it as an edge list or Matrix Market file (every rank its own
//! byte range of one file), so it can be taken into networkx, cuGraph or the Graph500
//! reference. Reading the file back gives the same `csr_checksum`.

use crate::error::Result;
use crate::graph::source::GraphConfig;
use crate::graph::writers::{write_graph, GraphFormat};
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

    fn execute(&self, h: &Harness) -> Result<Report> {
        self.execute_unreported(h)?;
        Ok(Report::new())
    }
}

impl Generate {
    fn execute_unreported(&self, h: &Harness) -> Result<()> {
        let built = h.build_graph(&self.graph, &|_, _| Ok(()))?;
        let written = match &self.write {
            Some(path) => Some(h.timed("write", || self.write_file(h, path))?),
            None => None,
        };
        let g = &built.graph;
        let mut rows = vec![
            ("generator", self.graph.spec.kind().to_string()),
            ("parameters", self.graph.spec.parameters()),
            ("vertices", g.n().to_string()),
            ("input_edges", g.num_input_edges.to_string()),
            ("csr_entries", g.num_entries.to_string()),
            ("edge_checksum", built.edge_checksum.to_string()),
            ("csr_checksum", built.csr_checksum.to_string()),
            ("generate_time", format!("{:.6}", built.generation)),
            ("generate_device", built.generated_on.to_string()),
            (
                "edges_per_second",
                format!("{:.4e}", g.num_input_edges as f64 / built.generation),
            ),
            ("construction_time", format!("{:.6}", built.construction)),
        ];
        if let (Some(path), Some(bytes)) = (&self.write, written) {
            rows.push(("written", format!("{} ({bytes} bytes)", path.display())));
        }
        h.summary(&rows);
        h.write_results(|file| {
            built.write(file, &self.graph, h.run.seed)?;
            if let (Some(path), Some(bytes)) = (&self.write, written) {
                let w = file.root();
                w.attr_str("written_file", &path.display().to_string())?;
                w.attr("written_bytes", bytes)?;
            }
            Ok(())
        })
    }
}

impl Generate {
    /// The graph's edges to `path`, with the generator and seed in comment lines.
    fn write_file(&self, h: &Harness, path: &std::path::Path) -> Result<u64> {
        let source = self.graph.spec.open(h.world, h.run.seed)?;
        let comments = vec![
            format!(
                "tessera {} graph: {} {}",
                env!("CARGO_PKG_VERSION"),
                self.graph.spec.kind(),
                self.graph.spec.parameters()
            ),
            format!("seed {}", h.run.seed),
        ];
        write_graph(
            h.world,
            source.as_ref(),
            path,
            GraphFormat::from_path(path),
            &comments,
        )
    }
}
