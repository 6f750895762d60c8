//! `tessera cc`: connected components of any `[graph]` graph, each vertex labelled with the
//! smallest global id in its component (canonical, so labels compare exactly across rank
//! counts and devices), with the component count, the size histogram and the largest
//! components.
//!
//! Algorithm: `graph::components` (the cross-rank labelling engine, shared with spin's
//! Swendsen-Wang and Wolff on graphs); this module runs it as a workload and checks it.

pub mod sizes;

use crate::device::Selected;
use crate::error::Result;
use crate::graph::components::{cpu, gpu, label_components, Labeller, Labelling};
use crate::graph::ghosts::LocalRows;
use crate::graph::ghosts_gpu;
use crate::graph::source::GraphConfig;
use crate::harness::{Harness, Workload};
use crate::report::Report;
use crate::stats::Summary;
use serde::{Deserialize, Serialize};
use sizes::ComponentStats;
use std::time::Instant;

/// Labels are written by default up to this many vertices (8 bytes each).
const WRITE_LABELS_UP_TO: u64 = 1 << 24;

/// `[cc]`. Also the `tessera cc` flags (the graph is `[graph]`'s).
#[derive(Debug, Default, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct CcTable {
    /// Times the labelling runs (the median time is reported; default 1)
    #[arg(long)]
    pub trials: Option<u32>,
    /// Check the labels after the last trial (default true; untimed)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub verify: Option<bool>,
    /// Store every vertex's label in the HDF5 file (default: up to 2^24 vertices)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub write_labels: Option<bool>,
    /// How many of the largest components to list (default 10)
    #[arg(long)]
    pub largest: Option<u32>,
}

pub struct Cc {
    graph: GraphConfig,
    trials: u32,
    verify: bool,
    write_labels: Option<bool>,
    largest: u32,
}

/// The local/cut split of the rows: its seconds (between barriers) and where it ran.
struct Split {
    seconds: f64,
    on: &'static str,
}

/// What a run found.
struct Findings {
    split: Split,
    stats: ComponentStats,
    last: Labelling,
    /// Median seconds of the labelling over the trials.
    seconds: f64,
    /// Undirected edges (CSR entries / 2) per median second.
    rate: f64,
    labels: Option<Vec<u64>>,
    verified: bool,
}

impl Workload for Cc {
    const NAME: &'static str = "cc";
    const ABOUT: &'static str =
        "Connected components of a graph: canonical labels, count, sizes, largest components";
    const GRAPH: bool = true;
    type Table = CcTable;

    fn configure(source: &str, t: CcTable, graph: Option<GraphConfig>) -> Result<Self> {
        let trials = t.trials.unwrap_or(1);
        if trials == 0 {
            return Err(crate::config::out_of_range(
                source,
                "[cc] trials",
                trials,
                "at least 1",
            ));
        }
        Ok(Cc {
            graph: graph.expect("cc takes a graph"),
            trials,
            verify: t.verify.unwrap_or(true),
            write_labels: t.write_labels,
            largest: t.largest.unwrap_or(10),
        })
    }

    fn execute(&self, h: &Harness) -> Result<Report> {
        let world = h.world;
        let mut built = h.build_graph(&self.graph, &|_, _| Ok(()))?;
        // On a GPU the rows are split there, from the CSR the GPU built (or an upload of the
        // host's), and stay there for the labelling.
        let device_csr = built.take_device_csr();
        let g = &built.graph;
        let clock = Instant::now();
        let (rows, rows_on_gpu) = h.timed("split", || match &h.device {
            Selected::Cpu => Ok((LocalRows::split(world, g)?, None)),
            Selected::Gpu(gpu) => ghosts_gpu::split_where_it_fits(world, gpu, g, device_csr),
        })?;
        let split = Split {
            seconds: clock.elapsed().as_secs_f64(),
            on: if rows_on_gpu.is_some() { "gpu" } else { "cpu" },
        };
        if let (Selected::Gpu(gpu), Some(on_gpu)) = (&h.device, &rows_on_gpu) {
            ghosts_gpu::check_against_host(world, gpu, g, &rows, on_gpu)?;
        }
        let mut labeller: Box<dyn Labeller + '_> = match &h.device {
            Selected::Cpu => Box::new(cpu::CpuLabeller::new(&rows, g.part.first())),
            Selected::Gpu(gpu) => h.timed("upload", || {
                Ok(Box::new(gpu::GpuLabeller::new(
                    world,
                    gpu,
                    h.run.gpu_transport,
                    &rows,
                    &g.part,
                    rows_on_gpu,
                )?) as Box<dyn Labeller>)
            })?,
        };
        let mut runs = h.trials("cc", self.trials as usize, |_| {
            label_components(world, &g.part, labeller.as_mut())
        })?;
        let labels = labeller.labels()?;
        drop(labeller);
        let verified = h.verify(self.verify, || {
            sizes::verify(world, g, &rows.ghosts, &labels)
        })?;
        let stats = h.timed("sizes", || {
            sizes::component_stats(world, &g.part, &labels, self.largest as usize)
        })?;
        let write = self.write_labels.unwrap_or(g.n() <= WRITE_LABELS_UP_TO);
        let labels = if write {
            Some(world.gatherv_root(&labels)?)
        } else {
            None
        };
        let seconds = Summary::of(&runs.iter().map(|r| r.seconds).collect::<Vec<_>>()).median;
        let last = runs.pop().expect("at least one trial");
        let findings = Findings {
            split,
            stats,
            last,
            seconds,
            rate: g.num_entries as f64 / 2.0 / seconds,
            labels,
            verified,
        };
        let mut report = Report::new();
        built.report(&mut report, &self.graph, h.run.seed);
        self.report(&mut report, &findings);
        Ok(report)
    }
}

impl Cc {
    /// `/cc`: the figures, rounds, size histogram, largest components and labels.
    fn report(&self, report: &mut Report, f: &Findings) {
        let s = &f.stats;
        let mut r = report.group("cc");
        r.count("components", s.components);
        r.count("isolated_vertices", s.isolated);
        let (size, label) = s.largest_one;
        r.count("largest_component", size)
            .shown_as(format!("{size} (label {label})"));
        r.count("largest_component_label", label).stored_only();
        r.count("rounds", f.last.rounds.len() as u64);
        r.count("trials", self.trials).stored_only();
        r.seconds("local_seconds", f.last.local_seconds);
        r.seconds("link_seconds", f.last.link_seconds).stored_only();
        r.seconds("giants_seconds", f.last.giants_seconds)
            .stored_only();
        let giants = &f.last.giants;
        for (name, seconds) in [
            ("giants_find_seconds", giants.find),
            ("giants_probe_seconds", giants.probe),
            ("giants_skip_seconds", giants.skip),
            ("giants_relabel_seconds", giants.relabel),
        ] {
            r.seconds(name, seconds).stored_only();
        }
        let phases = &f.last.phases;
        for (name, seconds) in [
            ("refresh_seconds", phases.refresh),
            ("absorb_seconds", phases.absorb),
            ("hook_seconds", phases.hook),
            ("shortcut_seconds", phases.shortcut),
            ("relabel_seconds", phases.relabel),
        ] {
            r.seconds(name, seconds).stored_only();
        }
        r.seconds("split_seconds", f.split.seconds);
        r.text("split_device", f.split.on);
        r.seconds("cc_seconds", f.seconds);
        r.rate("edges_per_second", f.rate, "edges/s");
        r.flag("verified", f.verified, "skipped");
        let bins = s
            .size_histogram
            .iter()
            .rposition(|&c| c > 0)
            .map_or(0, |b| b + 1);
        r.data("size_histogram", &s.size_histogram[..bins]);
        let mut largest = r.subgroup("largest");
        largest.data("size", s.largest.iter().map(|p| p.0).collect::<Vec<_>>());
        largest.data("label", s.largest.iter().map(|p| p.1).collect::<Vec<_>>());
        let rounds = &f.last.rounds;
        let mut g = r.subgroup("rounds");
        g.data(
            "changed",
            rounds.iter().map(|r| r.changed).collect::<Vec<_>>(),
        );
        g.data("bytes", rounds.iter().map(|r| r.bytes).collect::<Vec<_>>());
        g.data(
            "labels_sent",
            rounds.iter().map(|r| r.labels_sent).collect::<Vec<_>>(),
        );
        g.data(
            "seconds",
            rounds.iter().map(|r| r.seconds).collect::<Vec<_>>(),
        );
        g.data(
            "shortcuts",
            rounds.iter().map(|r| r.shortcuts).collect::<Vec<_>>(),
        );
        if let Some(labels) = &f.labels {
            r.data("labels", labels.as_slice());
        }
    }
}
