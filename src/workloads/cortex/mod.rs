//! `tessera cortex`: the cortical spiking network of Leist's thesis (2011), chapter 8 (with
//! appendix D): Izhikevich neurons (IEEE TNN 2003) on a periodic L×L lattice, each pulling k
//! delayed inputs from a Gaussian neighbourhood of radius r, driven by noisy currents that a
//! timed schedule changes mid-run (drugs: the λ factors), read out as a pseudo-EEG (the mean
//! excitatory potential) and its Welch spectrum with the qEEG figures.
//!
//! - `model`: one neuron, the three integration schemes, the software normal deviate.
//! - `network`: neuron draws and sources, a pure function of (seed, neuron, j).
//! - `slab`: a rank's rows, the step's inputs and sums, the `exp` and `table` synapses.
//! - `cpu`, `gpu`: the two phases on each device, the border exchange overlapped with the
//!   inner core (kernels/cortex.cu on the GPU).
//! - `schedule`: the settings, `[[cortex.schedule]]` and the seed's schedule files.
//! - `run`: the steps, their per-512-step reduction, the raster.
//! - `spectrum`: Welch's periodograms and the qEEG figures.
//! - `record`: the report (`/cortex`); `checkpoint`: checkpoint and restart.
//!
//! Every random number is a counter-based draw keyed by the seed, the step and the global
//! neuron id, normals from one software routine (`model::normal_pair`), and the sums are
//! integers: the raster and the pseudo-EEG are the same bits on any number of ranks.

mod checkpoint;
mod cpu;
mod gpu;
mod model;
mod network;
mod record;
mod run;
mod schedule;
mod slab;
mod spectrum;
mod timing;

use crate::config::{config_error, distinct, out_of_range};
use crate::device::memory::{self, Place};
use crate::device::Selected;
use crate::error::Result;
use crate::files::must_be_regular;
use crate::graph::source::GraphConfig;
use crate::harness::{Harness, Workload};
use crate::report::Report;
use gpu::GpuCortex;
use model::Scheme;
use network::{Wiring, DELAY_MAX, DELAY_MIN};
use schedule::Setting;
use serde::{Deserialize, Serialize};
use spectrum::Window;
use std::path::{Path, PathBuf};

/// `[cortex]`. Also the `tessera cortex` flags.
#[derive(Debug, Default, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct CortexTable {
    /// Side L of the periodic lattice: L² neurons (default 64)
    #[arg(long, allow_negative_numbers = true)]
    pub l: Option<i64>,
    /// Inputs per neuron, 1 to 65535 (default 100)
    #[arg(long, allow_negative_numbers = true)]
    pub k: Option<i64>,
    /// Largest distance of an input, 1 to 127 and at most L/2 (σ = r/3) (default 16)
    #[arg(long, allow_negative_numbers = true)]
    pub r: Option<i64>,
    /// Fraction of excitatory neurons (default 0.8)
    #[arg(long, allow_negative_numbers = true)]
    pub ratio: Option<f64>,
    /// Steps of 1 ms (default 10000)
    #[arg(long, allow_negative_numbers = true)]
    pub steps: Option<i64>,
    /// Sources: gaussian (k draws within r) or all (every other neuron: Izhikevich's
    /// all-to-all network; k = L² − 1, r = L/2, L at most 254) (default gaussian)
    #[arg(long, value_enum)]
    pub sources: Option<Sources>,
    /// Shortest delay of a neuron's inputs, ms, 0 to 15 (default 5)
    #[arg(long, allow_negative_numbers = true)]
    pub delay_min: Option<i64>,
    /// Longest delay, ms, delay_min to 15 (default 15)
    #[arg(long, allow_negative_numbers = true)]
    pub delay_max: Option<i64>,
    /// Synapses: exp (a trace per type) or table (the seed's washout table) (default exp)
    #[arg(long, value_enum)]
    pub synapses: Option<SynapseScheme>,
    /// Integration: seed (one 1 ms Euler step), half-step (Izhikevich's two 0.5 ms steps of v)
    /// or substeps (default seed)
    #[arg(long, value_enum)]
    pub integration: Option<Integration>,
    /// Euler steps per ms of integration = "substeps", 2 to 1000 (default 10)
    #[arg(long, allow_negative_numbers = true)]
    pub substeps: Option<i64>,
    /// Clamp the external current at 0 (default true)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub clamp: Option<bool>,
    /// Window of the spectrum: blackman, hann, welch or rectangular (default blackman)
    #[arg(long, value_enum)]
    pub window: Option<Window>,
    /// Also store the spectra under these windows, each in /cortex/welch/<window>
    /// (comma-separated)
    #[arg(long, value_enum, value_delimiter = ',')]
    pub welch: Option<Vec<Window>>,
    /// Time each phase of the steps (the GPU's by CUDA events), per block in /cortex/timing
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub timing: Option<bool>,
    /// Store the raster (step, neuron id) of every spike (at most 2^22 neurons)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub raster: Option<bool>,
    /// Record v and u of these neuron ids every step (comma-separated; at most 64)
    #[arg(long, value_delimiter = ',')]
    pub probe: Option<Vec<u64>>,
    /// A schedule in the seed's `STEP KEY VALUE` lines (relative to the deck's folder)
    #[arg(long)]
    pub schedule_file: Option<PathBuf>,
    /// Write a checkpoint when this many seconds passed since the last (default 600)
    #[arg(long, allow_negative_numbers = true)]
    pub checkpoint_seconds: Option<f64>,
    /// Continue from the checkpoint in the output file
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub resume: Option<bool>,
    /// Run at most this many steps in this job (rounded up to whole blocks of 512), then
    /// write a checkpoint and stop (continue with --resume)
    #[arg(long, allow_negative_numbers = true)]
    pub stop_after: Option<i64>,
    /// Timed settings: [[cortex.schedule]] entries {step, set, value} (deck only)
    #[arg(skip)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Vec<schedule::Entry>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SynapseScheme {
    Exp,
    Table,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Sources {
    Gaussian,
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Integration {
    Seed,
    HalfStep,
    Substeps,
}

/// Most neurons a run probes.
const MAX_PROBES: usize = 64;

/// Most neurons whose raster a run stores.
const MAX_RASTER_NEURONS: u64 = 1 << 22;

/// A cortex run, configured.
#[derive(Debug, Clone)]
pub struct Cortex {
    pub l: u64,
    pub k: u32,
    pub r: u32,
    pub wiring: Wiring,
    pub steps: u64,
    pub table: bool,
    pub scheme: Scheme,
    pub clamp: bool,
    pub window: Window,
    /// Further windows whose spectra are stored beside the main one's.
    pub welch: Vec<Window>,
    /// Time the phases of every block.
    pub timing: bool,
    pub raster: bool,
    /// Neuron ids whose v and u are recorded every step.
    pub probes: Vec<u64>,
    pub schedule: Vec<Setting>,
    pub checkpoint_seconds: f64,
    pub resume: bool,
    pub stop_after: Option<u64>,
}

impl Cortex {
    pub fn neurons(&self) -> u64 {
        self.l * self.l
    }

    /// What a checkpoint must agree on to be resumed (the schedule: its settings).
    pub fn job(&self, seed: u64) -> String {
        let schedule: Vec<String> = self
            .schedule
            .iter()
            .map(|s| format!("{} {} {}", s.step, s.key.name(), s.value))
            .collect();
        format!(
            "L={} k={} r={} ratio={} delays={:?} all_to_all={} steps={} synapses={} integration={} clamp={} raster={} probes={:?} seed={seed} schedule=[{}]",
            self.l,
            self.k,
            self.r,
            self.wiring.ratio,
            self.wiring.delays,
            self.wiring.all_to_all,
            self.steps,
            if self.table { "table" } else { "exp" },
            self.scheme.name(),
            self.clamp,
            self.raster,
            self.probes,
            schedule.join(", ")
        )
    }
}

/// An integer key in `lo..=hi`.
fn int(
    source: &str,
    key: &str,
    value: Option<i64>,
    default: i64,
    (lo, hi): (i64, i64),
    expected: &str,
) -> Result<i64> {
    let v = value.unwrap_or(default);
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(out_of_range(
            source,
            &format!("[cortex] {key}"),
            v,
            expected,
        ))
    }
}

fn scheme_of(source: &str, t: &CortexTable) -> Result<Scheme> {
    let integration = t.integration.unwrap_or(Integration::Seed);
    if t.substeps.is_some() && integration != Integration::Substeps {
        return Err(config_error(
            source,
            "[cortex] substeps applies to integration = \"substeps\"",
        ));
    }
    Ok(match integration {
        Integration::Seed => Scheme::Seed,
        Integration::HalfStep => Scheme::HalfStep,
        Integration::Substeps => {
            let n = int(
                source,
                "substeps",
                t.substeps,
                10,
                (2, 1000),
                "an integer from 2 to 1000",
            )?;
            Scheme::Substeps(n as u32)
        }
    })
}

/// The raster switch and the probed ids, checked against the lattice.
fn outputs_of(source: &str, t: &CortexTable, l: u64) -> Result<(bool, Vec<u64>)> {
    let raster = t.raster.unwrap_or(false);
    let probes = t.probe.clone().unwrap_or_default();
    if let Some(bad) = probes.iter().find(|&&id| id >= l * l) {
        return Err(out_of_range(
            source,
            "[cortex] probe",
            bad,
            &format!("neuron ids below L² = {}", l * l),
        ));
    }
    if probes.len() > MAX_PROBES {
        return Err(config_error(
            source,
            &format!(
                "[cortex] probe lists {} ids: at most {MAX_PROBES}",
                probes.len()
            ),
        ));
    }
    if raster && l * l > MAX_RASTER_NEURONS {
        let n = l * l;
        return Err(config_error(
            source,
            &format!("[cortex] raster stores every spike: {n} neurons is more than the {MAX_RASTER_NEURONS} it allows"),
        ));
    }
    Ok((raster, probes))
}

/// The windows of `welch`, each stored in a group of its name (so each at most once).
fn welch_of(source: &str, t: &CortexTable) -> Result<Vec<Window>> {
    let welch = t.welch.clone().unwrap_or_default();
    let names: Vec<&str> = welch.iter().map(|w| w.name()).collect();
    distinct(source, "[cortex] welch", &names, |n| format!("welch/{n}"))?;
    Ok(welch)
}

/// The excitatory fraction, the delays and the kind of sources.
fn wiring_of(source: &str, t: &CortexTable) -> Result<Wiring> {
    let ratio = t.ratio.unwrap_or(0.8);
    if !(0.0..=1.0).contains(&ratio) {
        return Err(out_of_range(
            source,
            "[cortex] ratio",
            ratio,
            "a fraction from 0 to 1",
        ));
    }
    let most = i64::from(DELAY_MAX);
    let lo = int(
        source,
        "delay_min",
        t.delay_min,
        i64::from(DELAY_MIN),
        (0, most),
        "an integer from 0 to 15",
    )?;
    let hi = int(
        source,
        "delay_max",
        t.delay_max,
        most.max(lo),
        (lo, most),
        &format!("an integer from delay_min = {lo} to 15"),
    )?;
    Ok(Wiring {
        ratio,
        delays: [lo as u8, hi as u8],
        all_to_all: t.sources == Some(Sources::All),
    })
}

/// k and r: given (Gaussian sources), or L² − 1 and L/2 (all-to-all).
fn sources_of(source: &str, t: &CortexTable, l: u64, all: bool) -> Result<(u32, u32)> {
    if all {
        if l > 254
            || t.k.is_some_and(|k| k as u64 != l * l - 1)
            || t.r.is_some_and(|r| r as u64 != l / 2)
        {
            return Err(config_error(
                source,
                &format!("[cortex] sources = \"all\" takes every other neuron: L at most 254, k = L² − 1 = {} and r = L/2 = {} (or leave k and r out)", (l * l).saturating_sub(1), l / 2),
            ));
        }
        return Ok(((l * l - 1) as u32, (l / 2) as u32));
    }
    let r = int(source, "r", t.r, 16, (1, 127), "an integer from 1 to 127")? as u32;
    if u64::from(r) > l / 2 {
        return Err(out_of_range(
            source,
            "[cortex] r",
            r,
            &format!("at most L/2 = {}", l / 2),
        ));
    }
    let k = int(
        source,
        "k",
        t.k,
        100,
        (1, 65535),
        "an integer from 1 to 65535",
    )? as u32;
    Ok((k, r))
}

fn seconds_of(source: &str, value: Option<f64>) -> Result<f64> {
    let secs = value.unwrap_or(600.0);
    if secs.is_finite() && secs > 0.0 {
        Ok(secs)
    } else {
        Err(out_of_range(
            source,
            "[cortex] checkpoint_seconds",
            secs,
            "a finite number > 0",
        ))
    }
}

/// The schedule: the deck's entries or the file's lines (not both), checked whole.
fn schedule_of(source: &str, t: &CortexTable, steps: u64) -> Result<Vec<Setting>> {
    match (&t.schedule, &t.schedule_file) {
        (Some(_), Some(_)) => Err(config_error(
            source,
            "[cortex] give [[cortex.schedule]] entries or schedule_file, not both",
        )),
        (Some(entries), None) => schedule::from_entries(entries, steps).map_err(|(at, msg)| {
            let line = entry_line(source, &at).map_or(String::new(), |l| format!("line {l}: "));
            config_error(source, &format!("{line}[[cortex.schedule]] {at}: {msg}"))
        }),
        (None, Some(file)) => {
            let path = beside_deck(source, file);
            let name = path.display().to_string();
            let text = must_be_regular(&path)
                .and_then(|()| std::fs::read_to_string(&path))
                .map_err(|e| config_error(&name, &format!("cannot read the schedule file: {e}")))?;
            schedule::from_file_text(&text, steps)
                .map_err(|(at, msg)| config_error(&name, &format!("{at}: {msg}")))
        }
        (None, None) => Ok(Vec::new()),
    }
}

/// A relative path from a deck taken from the deck's folder (from the working directory for
/// a flag).
fn beside_deck(source: &str, file: &Path) -> PathBuf {
    let deck = Path::new(source);
    match deck.parent() {
        Some(dir) if file.is_relative() && deck.is_file() => dir.join(file),
        _ => file.to_path_buf(),
    }
}

/// The deck line of schedule entry "entry N", where the deck is a file.
fn entry_line(source: &str, at: &str) -> Option<usize> {
    let n: usize = at.strip_prefix("entry ")?.parse().ok()?;
    let text = std::fs::read_to_string(source).ok()?;
    let mut seen = 0;
    for (i, line) in text.lines().enumerate() {
        if line.trim().starts_with("[[cortex.schedule]]") {
            seen += 1;
            if seen == n {
                return Some(i + 1);
            }
        }
    }
    None
}

impl Workload for Cortex {
    const NAME: &'static str = "cortex";
    const ABOUT: &'static str =
        "Cortical spiking network (Izhikevich neurons on lattice slabs): pseudo-EEG, its spectrum, timed drug schedules";
    type Table = CortexTable;

    fn configure(source: &str, t: CortexTable, _: Option<GraphConfig>) -> Result<Self> {
        let l = int(
            source,
            "l",
            t.l,
            64,
            (2, 1 << 20),
            "an integer from 2 to 2^20",
        )? as u64;
        let wiring = wiring_of(source, &t)?;
        let (k, r) = sources_of(source, &t, l, wiring.all_to_all)?;
        let steps = int(
            source,
            "steps",
            t.steps,
            10_000,
            (1, 1 << 40),
            "an integer from 1 to 2^40",
        )? as u64;
        let (raster, probes) = outputs_of(source, &t, l)?;
        Ok(Cortex {
            l,
            k,
            r,
            wiring,
            steps,
            table: t.synapses == Some(SynapseScheme::Table),
            scheme: scheme_of(source, &t)?,
            clamp: t.clamp.unwrap_or(true),
            window: t.window.unwrap_or(Window::Blackman),
            welch: welch_of(source, &t)?,
            timing: t.timing.unwrap_or(false),
            raster,
            probes,
            schedule: schedule_of(source, &t, steps)?,
            checkpoint_seconds: seconds_of(source, t.checkpoint_seconds)?,
            resume: t.resume.unwrap_or(false),
            stop_after: t
                .stop_after
                .map(|s| {
                    int(
                        source,
                        "stop_after",
                        Some(s),
                        0,
                        (1, 1 << 40),
                        "an integer from 1 to 2^40",
                    )
                })
                .transpose()?
                .map(|s| s as u64),
        })
    }

    fn check_sizes(&self, h: &Harness) -> Result<()> {
        let ranks = h.world.size() as u64;
        let thinnest = self.l / ranks;
        if thinnest < u64::from(self.r) {
            return Err(crate::error::Error::Unavailable(format!(
                "cortex: every rank holds whole rows, at least r = {} of them (its border reaches only the neighbouring slabs): L = {} over {ranks} ranks leaves {thinnest}; use at most {} ranks or a smaller r",
                self.r,
                self.l,
                self.l / u64::from(self.r)
            )));
        }
        let rows = self.l.div_ceil(ranks);
        let neurons = rows * self.l;
        let (k, table) = (self.k, self.table);
        match &h.device {
            Selected::Cpu => {
                // The CPU's arrays are the GPU's, with the synapse rings and a per-step copy
                // of the arrivals and counts (16 bytes) beside them.
                let bytes = neurons * (GpuCortex::bytes_per_neuron(k, table) + 16);
                memory::check(
                    "cortex: the slab",
                    bytes,
                    Place::Host {
                        ranks: h.world.local_size(),
                    },
                    |_| String::new(),
                )
            }
            Selected::Gpu(gpu) => {
                let bytes = neurons * GpuCortex::bytes_per_neuron(k, table);
                memory::check("cortex: the slab", bytes, Place::Gpu(gpu), |_| {
                    String::new()
                })
            }
        }
    }

    /// `--resume` continues the checkpoint in the output file.
    fn resumes_output(&self) -> bool {
        self.resume
    }

    fn execute(&self, h: &Harness) -> Result<Report> {
        // A run stopped at `stop_after` leaves its checkpoint as the output.
        let Some(outcome) = run::run(h, self)? else {
            return Ok(Report::checkpointed());
        };
        let mut report = Report::new();
        if h.world.is_root() {
            record::report(&mut report, self, h.run.seed, &outcome);
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(t: CortexTable) -> String {
        Cortex::configure("d.toml", t, None)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn bad_values_are_refused_with_the_key_and_the_expected_form() {
        let t = |f: fn(&mut CortexTable)| {
            let mut t = CortexTable {
                l: Some(16),
                r: Some(4),
                steps: Some(100),
                ..Default::default()
            };
            f(&mut t);
            t
        };
        let cases: [(CortexTable, &str); 7] = [
            (
                t(|t| t.r = Some(9)),
                "[cortex] r = 9 is out of range: expected at most L/2 = 8",
            ),
            (t(|t| t.k = Some(0)), "[cortex] k = 0 is out of range"),
            (
                t(|t| t.ratio = Some(1.5)),
                "[cortex] ratio = 1.5 is out of range",
            ),
            (
                t(|t| (t.delay_min, t.delay_max) = (Some(9), Some(7))),
                "delay_max = 7 is out of range: expected an integer from delay_min = 9 to 15",
            ),
            (
                t(|t| t.substeps = Some(4)),
                "substeps applies to integration = \"substeps\"",
            ),
            (
                t(|t| (t.l, t.sources) = (Some(300), Some(Sources::All))),
                "L at most 254",
            ),
            (
                t(|t| t.checkpoint_seconds = Some(0.0)),
                "checkpoint_seconds = 0 is out of range",
            ),
        ];
        for (table, want) in cases {
            let got = refused(table);
            assert!(got.contains("d.toml") && got.contains(want), "{got}");
        }
        let probe = refused(t(|t| t.probe = Some(vec![3, 256])));
        assert!(
            probe.contains("[cortex] probe = 256 is out of range"),
            "{probe}"
        );
        let missing = t(|t| t.schedule_file = Some("no-such-file.txt".into()));
        let got = refused(missing);
        assert!(
            got.contains("no-such-file.txt") && got.contains("cannot read"),
            "{got}"
        );
        let all = Cortex::configure(
            "d.toml",
            t(|t| (t.r, t.sources) = (None, Some(Sources::All))),
            None,
        )
        .unwrap();
        assert_eq!((all.k, all.r), (255, 8));
    }
}
