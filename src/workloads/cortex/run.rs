//! The run: the network built, then the steps in blocks of 512 (the harness's trials: a
//! progress line and a signal check per block), each block's per-step sums kept on the
//! slab's device and reduced over the ranks once at its end, with the raster gathered on
//! rank 0; the schedule's settings applied before their steps.

use super::cpu::CpuCortex;
use super::network::{BOOST, NOISE};
use super::schedule::{Setting, Settings};
use super::slab::{washout, Layout, StepInput, Sums, V_SCALE};
use super::Cortex;
use crate::comm::{Op, World};
use crate::error::{Error, Result};
use crate::harness::Harness;
use crate::lattice::{Lattice, Slab};
use crate::rng::{draw, stream_key};
use std::time::Instant;

/// Steps per reduction over the ranks.
pub const BLOCK: u64 = 512;

/// What a run measured (the series on rank 0).
#[derive(Default)]
pub struct Outcome {
    pub eeg: Vec<f64>,
    pub rate_exc: Vec<f64>,
    pub rate_inh: Vec<f64>,
    /// (step, neuron id) of every spike, by step then id (with `raster`).
    pub raster: Vec<[u64; 2]>,
    pub applied: Vec<Setting>,
    pub excitatory: u64,
    pub inhibitory: u64,
    /// Seconds of the steps (the network's build excluded).
    pub seconds: f64,
}

/// The settings in force at a step and the inputs they give.
struct Inputs<'c> {
    cfg: &'c Cortex,
    seed: u64,
    settings: Settings,
    next: usize,
    input: StepInput,
}

impl<'c> Inputs<'c> {
    fn new(cfg: &'c Cortex, seed: u64) -> Inputs<'c> {
        let mut me = Inputs {
            cfg,
            seed,
            settings: Settings::default(),
            next: 0,
            input: StepInput {
                scheme: cfg.scheme,
                step: 0,
                noise_key: 0,
                boost_key: 0,
                base_i: [0.0; 2],
                noise: [0.0; 2],
                boost_fraction: 0.0,
                clamp: cfg.clamp,
                amplitude: [0.0; 2],
                decay: [0.0; 2],
                washout: Vec::new(),
            },
        };
        me.refresh();
        me
    }

    /// The effective values of the settings in force.
    fn refresh(&mut self) {
        let eff = self.settings.effective();
        let (table, cut) = washout(eff.amplitude, eff.tau);
        if cut && self.cfg.table {
            log::warn!(
                "cortex: 3τ = {:.1} steps is longer than the washout table's {} slots: spikes are cut off early",
                3.0 * eff.tau[0].max(eff.tau[1]),
                table.len()
            );
        }
        let i = &mut self.input;
        i.base_i = eff.base_i;
        i.noise = eff.noise;
        i.boost_fraction = eff.boost_fraction;
        i.amplitude = eff.amplitude;
        i.decay = eff.decay();
        i.washout = table;
    }

    /// The inputs of step `t`, the settings due before it applied (returned for the record).
    fn at(&mut self, t: u64) -> (&StepInput, Vec<Setting>) {
        let mut applied = Vec::new();
        while let Some(s) = self.cfg.schedule.get(self.next).filter(|s| s.step == t) {
            self.settings.set(s.key, s.value);
            applied.push(*s);
            self.next += 1;
        }
        if !applied.is_empty() {
            self.refresh();
        }
        self.input.step = t;
        self.input.noise_key = draw(stream_key(self.seed, NOISE), t);
        self.input.boost_key = draw(stream_key(self.seed, BOOST), t);
        (&self.input, applied)
    }
}

pub fn run(h: &Harness, cfg: &Cortex) -> Result<Outcome> {
    let world = h.world;
    let lattice = Lattice::new(2, cfg.l, true).map_err(Error::Unavailable)?;
    let slab = Slab::new(lattice, world.size(), world.rank()).map_err(Error::Unavailable)?;
    let layout = Layout { slab, l: cfg.l, r: cfg.r, k: cfg.k };
    let mut cortex = h.timed("network", || Ok(CpuCortex::new(layout, h.run.seed, cfg.ratio, cfg.table)))?;
    let mine = cortex.inhibitory.iter().filter(|&&i| !i).count() as u64;
    let excitatory = world.allreduce(mine, Op::Sum);
    let mut out = Outcome {
        excitatory,
        inhibitory: cfg.neurons() - excitatory,
        ..Outcome::default()
    };
    log::info!(
        "cortex: {} neurons ({} excitatory), k = {}, r = {}, {} synapses, {} integration, {} steps",
        cfg.neurons(),
        out.excitatory,
        cfg.k,
        cfg.r,
        if cfg.table { "table" } else { "exp" },
        cfg.scheme.name(),
        cfg.steps
    );
    let mut inputs = Inputs::new(cfg, h.run.seed);
    let blocks = cfg.steps.div_ceil(BLOCK) as usize;
    let started = Instant::now();
    h.timed("steps", || {
        h.trials("cortex", blocks, |b| {
            let steps = b as u64 * BLOCK..((b as u64 + 1) * BLOCK).min(cfg.steps);
            let mut sums = Vec::with_capacity(BLOCK as usize);
            let mut spikes = Vec::new();
            for t in steps {
                let (input, applied) = inputs.at(t);
                out.applied.extend(applied);
                sums.push(cortex.step(world, input));
                if cfg.raster {
                    spikes.extend(cortex.fired().map(|gid| [t, gid]));
                }
            }
            reduce(world, &sums, &mut out)?;
            if cfg.raster {
                gather_raster(world, &spikes, &mut out.raster)?;
            }
            progress(cfg, &out, b, blocks);
            Ok(())
        })
    })?;
    out.seconds = started.elapsed().as_secs_f64();
    Ok(out)
}

/// One reduction of a block's per-step sums over the ranks; rank 0 appends the series.
fn reduce(world: &World, sums: &[Sums], out: &mut Outcome) -> Result<()> {
    let mut v: Vec<i64> = sums.iter().map(|s| s.v_exc).collect();
    let mut fired: Vec<u64> = sums.iter().flat_map(|s| s.fired).collect();
    world.allreduce_slice(&mut v, Op::Sum);
    world.allreduce_slice(&mut fired, Op::Sum);
    if world.is_root() {
        let exc = out.excitatory.max(1) as f64;
        let inh = out.inhibitory.max(1) as f64;
        out.eeg.extend(v.iter().map(|&x| x as f64 / V_SCALE / exc));
        out.rate_exc.extend(fired.chunks(2).map(|f| f[0] as f64 / exc * 1000.0));
        out.rate_inh.extend(fired.chunks(2).map(|f| f[1] as f64 / inh * 1000.0));
    }
    Ok(())
}

/// The block's spikes of every rank on rank 0, by step then id.
fn gather_raster(world: &World, spikes: &[[u64; 2]], raster: &mut Vec<[u64; 2]>) -> Result<()> {
    let flat: Vec<u64> = spikes.iter().flatten().copied().collect();
    let all = world.gatherv_root(&flat)?;
    let mut pairs: Vec<[u64; 2]> = all.chunks(2).map(|p| [p[0], p[1]]).collect();
    pairs.sort_unstable();
    raster.extend(pairs);
    Ok(())
}

/// A progress line per tenth of the run (rank 0).
fn progress(cfg: &Cortex, out: &Outcome, b: usize, blocks: usize) {
    let tenth = blocks.div_ceil(10);
    if (b + 1) % tenth != 0 && b + 1 != blocks {
        return;
    }
    let last = out.eeg.len().saturating_sub(BLOCK as usize);
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len().max(1) as f64;
    log::info!(
        "cortex: step {} of {}: last 512 steps: EEG {:.3} mV, excitatory {:.2} Hz, inhibitory {:.2} Hz",
        out.eeg.len(),
        cfg.steps,
        mean(&out.eeg[last..]),
        mean(&out.rate_exc[last..]),
        mean(&out.rate_inh[last..])
    );
}
