//! The report of a run, `/cortex`: the settings; per step the pseudo-EEG and the firing
//! rates; the schedule as applied; the Welch spectra every 512 steps with their qEEG figures;
//! the raster and the probes; the rates of the run (neuron updates/s, synapse visits/s, wall
//! seconds per biological second).

use super::run::Outcome;
use super::spectrum::{self, figures, frequency, welch_rows, Figures, BANDS, SEGMENT};
use super::timing::{PhaseTimes, PHASES};
use super::Cortex;
use crate::report::{Report, Section};

pub fn report(report: &mut Report, cfg: &Cortex, seed: u64, out: &Outcome) {
    let mut g = report.group("cortex");
    settings(&mut g, cfg, seed, out);
    let steps = out.eeg.len() as f64;
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len().max(1) as f64;
    g.fixed("eeg_mean", mean(&out.eeg), 3, "mV");
    g.fixed("rate_exc_mean", mean(&out.rate_exc), 3, "Hz");
    g.fixed("rate_inh_mean", mean(&out.rate_inh), 3, "Hz");
    let n = cfg.neurons() as f64;
    g.seconds("step_seconds", out.seconds);
    g.rate("neuron_updates_per_s", n * steps / out.seconds, "1/s");
    g.rate(
        "synapse_visits_per_s",
        n * f64::from(cfg.k) * steps / out.seconds,
        "1/s",
    );
    g.fixed(
        "wall_per_biological_s",
        out.seconds / (steps / 1000.0),
        4,
        "s",
    );
    g.data("eeg", out.eeg.as_slice());
    g.data("rate_exc", out.rate_exc.as_slice());
    g.data("rate_inh", out.rate_inh.as_slice());
    schedule(&mut g.subgroup("schedule"), out);
    spectra(&mut g.subgroup("psd"), cfg, &out.eeg);
    if !cfg.welch.is_empty() {
        let mut w = g.subgroup("welch");
        for &window in &cfg.welch {
            let (at, rows) = welch_rows(&out.eeg, window);
            let mut one = w.subgroup(window.name());
            one.data("step", at);
            one.data_2d("psd", rows.len(), rows.concat());
        }
    }
    if cfg.timing {
        timing(&mut g.subgroup("timing"), out);
    }
    if !cfg.probes.is_empty() {
        let mut p = g.subgroup("probe");
        let width = cfg.probes.len();
        p.data("id", cfg.probes.clone());
        p.data_2d("v", out.probe_v.len() / width, out.probe_v.as_slice());
        p.data_2d("u", out.probe_u.len() / width, out.probe_u.as_slice());
    }
    if cfg.raster {
        let mut r = g.subgroup("raster");
        r.count("spikes", out.raster.len() as u64);
        r.data(
            "step",
            out.raster.iter().map(|p| p[0]).collect::<Vec<u64>>(),
        );
        r.data("id", out.raster.iter().map(|p| p[1]).collect::<Vec<u64>>());
    }
}

fn settings(g: &mut Section, cfg: &Cortex, seed: u64, out: &Outcome) {
    g.count("l", cfg.l).stored_only();
    g.count("neurons", cfg.neurons()).shown_as(format!(
        "{} on a periodic {} x {} lattice ({} excitatory, {} inhibitory)",
        cfg.neurons(),
        cfg.l,
        cfg.l,
        out.excitatory,
        out.inhibitory
    ));
    g.count("excitatory", out.excitatory).stored_only();
    g.count("k", cfg.k).stored_only();
    g.count("r", cfg.r).stored_only();
    g.number("ratio", cfg.wiring.ratio, "").stored_only();
    g.counts("delays", &cfg.wiring.delays.map(u64::from))
        .stored_only();
    g.flag("all_to_all", cfg.wiring.all_to_all, "no")
        .stored_only();
    g.count("steps", cfg.steps);
    g.count("seed", seed).stored_only();
    g.text("synapses", if cfg.table { "table" } else { "exp" });
    g.text("integration", cfg.scheme.name());
    g.flag("clamp", cfg.clamp, "no").stored_only();
    g.text("window", cfg.window.name()).stored_only();
    g.shown_only(
        "inputs",
        format!("k = {}, r = {} (sigma = r/3)", cfg.k, cfg.r),
    );
}

/// Each block's phase seconds (the slowest rank's), and the run's shares.
fn timing(s: &mut Section, out: &Outcome) {
    s.data(
        "block_step",
        out.timing.iter().map(|t| t.0).collect::<Vec<u64>>(),
    );
    let mut total = PhaseTimes::default();
    for (_, t) in &out.timing {
        total.add(t);
    }
    for (i, name) in PHASES.iter().enumerate() {
        s.data(
            name,
            out.timing
                .iter()
                .map(|t| t.1.as_array()[i])
                .collect::<Vec<f64>>(),
        );
    }
    let share = |x: f64| 100.0 * x / total.step.max(f64::MIN_POSITIVE);
    s.shown_only(
        "phases",
        format!(
            "neurons {:.1}%, inner core {:.1}%, border {:.1}% of the steps' {:.3} s; exchange {:.3} s, {:.3} s of it not hidden ({:.1}% of the steps)",
            share(total.neurons),
            share(total.inner),
            share(total.border),
            total.step,
            total.exchange,
            total.exposed,
            share(total.exposed)
        ),
    );
}

fn schedule(s: &mut Section, out: &Outcome) {
    s.data(
        "step",
        out.applied.iter().map(|a| a.step).collect::<Vec<u64>>(),
    );
    s.data(
        "key",
        out.applied
            .iter()
            .map(|a| a.key.name())
            .collect::<Vec<String>>(),
    );
    s.data(
        "value",
        out.applied.iter().map(|a| a.value).collect::<Vec<f64>>(),
    );
}

/// The spectra (one row per 512 steps from step 1024 on) and their figures; the last row's
/// figures printed.
fn spectra(s: &mut Section, cfg: &Cortex, eeg: &[f64]) {
    let (at, rows) = welch_rows(eeg, cfg.window);
    let figs: Vec<Figures> = rows.iter().map(|p| figures(p)).collect();
    s.data(
        "frequency",
        (0..=SEGMENT / 2).map(frequency).collect::<Vec<f64>>(),
    );
    s.data("step", at);
    s.data_2d("psd", rows.len(), rows.concat());
    let col = |f: &dyn Fn(&Figures) -> f64| figs.iter().map(f).collect::<Vec<f64>>();
    s.data("entropy", col(&|f| f.entropy));
    s.data("peak", col(&|f| f.peak));
    s.data("median", col(&|f| f.median));
    for (e, frac) in spectrum::EDGES.iter().enumerate() {
        s.data(
            &format!("sef{}", (frac * 100.0).round()),
            col(&|f| f.edge[e]),
        );
    }
    for (b, (name, _, _)) in BANDS.iter().enumerate() {
        s.data(name, col(&|f| f.bands[b]));
    }
    if let Some(last) = figs.last() {
        s.shown_only(
            "spectrum",
            format!(
                "peak {:.2} Hz, median {:.2} Hz, SEF95 {:.2} Hz, entropy {:.3}; delta {:.2} theta {:.2} alpha {:.2} beta {:.2} gamma {:.2}",
                last.peak, last.median, last.edge[2], last.entropy, last.bands[0], last.bands[1], last.bands[2], last.bands[3], last.bands[4]
            ),
        );
    } else {
        s.shown_only("spectrum", format!("none (fewer than {SEGMENT} steps)"));
    }
}
