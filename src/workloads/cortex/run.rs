//! The run: the network built (or a checkpoint's state restored), then the steps in blocks
//! of 512, each block's per-step sums kept on the slab's device and reduced over the ranks
//! once at its end, with the raster gathered on rank 0 and a progress line per tenth; the
//! schedule's settings applied before their steps; after a block, a checkpoint when one is
//! due (seconds), on SIGTERM/SIGINT (then the run ends, exit status 143) and at `stop_after`.

use super::checkpoint::{self, Snapshot};
use super::cpu::CpuCortex;
use super::gpu::GpuCortex;
use super::network::{BOOST, NOISE};
use super::schedule::{Setting, Settings};
use super::slab::{washout, Layout, StepInput, Sums, V_SCALE};
use super::timing::PhaseTimes;
use super::Cortex;
use crate::comm::{Op, World};
use crate::device::Selected;
use crate::error::{Error, Result};
use crate::harness::{Checkpoints, Harness};
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
    /// v and u of the probed neurons, step by step (steps × probes).
    pub probe_v: Vec<f64>,
    pub probe_u: Vec<f64>,
    pub applied: Vec<Setting>,
    pub excitatory: u64,
    pub inhibitory: u64,
    /// Seconds of the steps (the network's build excluded).
    pub seconds: f64,
    /// With `timing`: each block's first step and its phases' seconds (the slowest rank's).
    pub timing: Vec<(u64, PhaseTimes)>,
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

    /// The settings of the steps before `first` applied (a resumed run).
    fn skip_to(&mut self, first: u64) {
        while self
            .cfg
            .schedule
            .get(self.next)
            .is_some_and(|s| s.step < first)
        {
            let s = self.cfg.schedule[self.next];
            self.settings.set(s.key, s.value);
            self.next += 1;
        }
        self.refresh();
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

/// The slab on this rank's device.
enum Neurons<'h> {
    Cpu(Box<CpuCortex>, Vec<Sums>),
    Gpu(Box<GpuCortex<'h>>),
}

impl<'h> Neurons<'h> {
    /// The slab's network, drawn on the run's device (collective).
    fn new(h: &'h Harness, layout: Layout, cfg: &Cortex) -> Result<Self> {
        let seed = h.run.seed;
        match &h.device {
            Selected::Cpu => Ok(Neurons::Cpu(
                Box::new(CpuCortex::new(layout, seed, &cfg.wiring, cfg.table)),
                Vec::new(),
            )),
            Selected::Gpu(gpu) => {
                let made = GpuCortex::new(
                    h.world,
                    gpu,
                    h.run.gpu_transport,
                    layout,
                    seed,
                    &cfg.wiring,
                    cfg.table,
                );
                h.world
                    .agree(made)
                    .map(|g| Neurons::Gpu(Box::new(g.timed(cfg.timing))))
            }
        }
    }

    fn excitatory(&self) -> Result<u64> {
        match self {
            Neurons::Cpu(c, _) => Ok(c.inhibitory.iter().filter(|&&i| !i).count() as u64),
            Neurons::Gpu(g) => g.excitatory(),
        }
    }

    /// One step (collective); `changed` when the settings changed before it.
    fn step(&mut self, world: &World, input: &StepInput, changed: bool) -> Result<()> {
        match self {
            Neurons::Cpu(c, sums) => {
                sums.push(c.step(world, input));
                Ok(())
            }
            Neurons::Gpu(g) => {
                if changed || input.step == 0 {
                    g.set_washout(&input.washout)?;
                }
                g.step(input)
            }
        }
    }

    /// This slab's sums of the block's `steps` steps.
    fn take_sums(&mut self, steps: usize) -> Result<Vec<Sums>> {
        match self {
            Neurons::Cpu(_, sums) => Ok(std::mem::take(sums)),
            Neurons::Gpu(g) => g.take_sums(steps),
        }
    }

    /// The phases' seconds since they were last taken.
    fn take_times(&mut self) -> Result<PhaseTimes> {
        match self {
            Neurons::Cpu(c, _) => Ok(std::mem::take(&mut c.times)),
            Neurons::Gpu(g) => g.take_times(),
        }
    }

    fn snapshot(&self) -> Result<Snapshot> {
        match self {
            Neurons::Cpu(c, _) => Ok(c.snapshot()),
            Neurons::Gpu(g) => g.snapshot(),
        }
    }

    fn restore(&mut self, snap: Snapshot) -> Result<()> {
        match self {
            Neurons::Cpu(c, _) => {
                c.restore(snap);
                Ok(())
            }
            Neurons::Gpu(g) => g.restore(&snap),
        }
    }

    /// (v, u) of neuron `gid` where this slab holds it, else zeros.
    fn probe(&self, gid: u64) -> Result<[f64; 2]> {
        let layout = match self {
            Neurons::Cpu(c, _) => c.layout,
            Neurons::Gpu(g) => g.layout,
        };
        let Some(i) = layout.slab.local(gid) else {
            return Ok([0.0; 2]);
        };
        match self {
            Neurons::Cpu(c, _) => Ok([c.v[i], c.u[i]]),
            Neurons::Gpu(g) => g.probe(i),
        }
    }

    fn fired(&self) -> Result<Vec<u64>> {
        match self {
            Neurons::Cpu(c, _) => Ok(c.fired().collect()),
            Neurons::Gpu(g) => g.fired(),
        }
    }
}

/// Run the steps (or what a checkpoint left of them) (collective): the outcome, or `None`
/// when the run stopped at `stop_after` (its checkpoint is then the output).
pub fn run(h: &Harness, cfg: &Cortex) -> Result<Option<Outcome>> {
    let world = h.world;
    let lattice = Lattice::new(2, cfg.l, true).map_err(Error::Unavailable)?;
    let slab = Slab::new(lattice, world.size(), world.rank()).map_err(Error::Unavailable)?;
    let owns = slab.offset()..slab.offset() + slab.sites() as u64;
    let layout = Layout {
        slab,
        l: cfg.l,
        r: cfg.r,
        k: cfg.k,
        all_to_all: cfg.wiring.all_to_all,
    };
    let (mut cortex, mut out, first) = start(h, cfg, layout, owns.clone())?;
    let mut inputs = Inputs::new(cfg, h.run.seed);
    inputs.skip_to(first);
    let before = out.seconds;
    let started = Instant::now();
    let mut control = Checkpoints::new(cfg.checkpoint_seconds);
    let stopped = h.timed("steps", || {
        for block in first / BLOCK..cfg.steps.div_ceil(BLOCK) {
            let steps = block * BLOCK..((block + 1) * BLOCK).min(cfg.steps);
            run_block(world, cfg, &mut cortex, &mut inputs, steps.clone(), &mut out, first)?;
            progress(cfg, &out);
            let due = control.poll(h, steps.end - steps.start, None, cfg.stop_after);
            if steps.end == cfg.steps || !due.any() {
                continue;
            }
            out.seconds = before + started.elapsed().as_secs_f64();
            checkpoint::write(h, cfg, &out, steps.end, &cortex.snapshot()?, owns.clone())?;
            control.saved();
            if due.interrupted {
                return Err(Error::Interrupted(format!(
                    "cortex: interrupted by a signal at step {}: checkpoint in {}; rerun with --resume to continue",
                    steps.end,
                    h.run.output.display()
                )));
            }
            if due.stop {
                if world.is_root() {
                    println!(
                        "cortex: stopped after {} steps (at step {}): checkpoint in {}; continue with --resume",
                        control.done,
                        steps.end,
                        h.run.output.display()
                    );
                }
                return Ok(true);
            }
        }
        Ok(false)
    })?;
    out.seconds = before + started.elapsed().as_secs_f64();
    Ok((!stopped).then_some(out))
}

/// The slab's network on the run's device, and where the run starts: a checkpoint's step,
/// series and neuron state (`resume`), or step 0 (collective).
fn start<'h>(
    h: &'h Harness,
    cfg: &Cortex,
    layout: Layout,
    owns: std::ops::Range<u64>,
) -> Result<(Neurons<'h>, Outcome, u64)> {
    let world = h.world;
    let resumed = if cfg.resume {
        checkpoint::read(h, cfg, owns)?
    } else {
        None
    };
    let mut cortex = h.timed("network", || Neurons::new(h, layout, cfg))?;
    let (out, first) = match resumed {
        Some((out, step, snap)) => {
            world.agree(cortex.restore(snap))?;
            (out, step)
        }
        None => {
            let excitatory = world.allreduce(world.agree(cortex.excitatory())?, Op::Sum);
            let out = Outcome {
                excitatory,
                inhibitory: cfg.neurons() - excitatory,
                ..Outcome::default()
            };
            (out, 0)
        }
    };
    log::info!(
        "cortex: {} neurons ({} excitatory), k = {}, r = {}, {} synapses, {} integration, steps {first} to {}",
        cfg.neurons(),
        out.excitatory,
        cfg.k,
        cfg.r,
        if cfg.table { "table" } else { "exp" },
        cfg.scheme.name(),
        cfg.steps
    );
    Ok((cortex, out, first))
}

/// The steps of one block, their sums reduced over the ranks and the raster gathered.
fn run_block(
    world: &World,
    cfg: &Cortex,
    cortex: &mut Neurons,
    inputs: &mut Inputs,
    steps: std::ops::Range<u64>,
    out: &mut Outcome,
    first: u64,
) -> Result<()> {
    let count = (steps.end - steps.start) as usize;
    let block_start = steps.start;
    let mut spikes = Vec::new();
    let mut probed = Vec::with_capacity(2 * count * cfg.probes.len());
    for t in steps {
        let (input, applied) = inputs.at(t);
        let changed = !applied.is_empty() || t == first;
        out.applied.extend(applied);
        cortex.step(world, input, changed)?;
        if cfg.raster {
            spikes.extend(cortex.fired()?.into_iter().map(|gid| [t, gid]));
        }
        for &id in &cfg.probes {
            probed.extend(cortex.probe(id)?);
        }
    }
    if !cfg.probes.is_empty() {
        // Each value is one rank's, the others add zeros: the sum is exact.
        world.allreduce_slice(&mut probed, Op::Sum);
        out.probe_v.extend(probed.iter().step_by(2));
        out.probe_u.extend(probed.iter().skip(1).step_by(2));
    }
    let sums = cortex.take_sums(count)?;
    reduce(world, &sums, out)?;
    if cfg.timing {
        let mut times = cortex.take_times()?.as_array();
        world.allreduce_slice(&mut times, Op::Max);
        out.timing.push((block_start, PhaseTimes::from_array(times)));
    }
    if cfg.raster {
        gather_raster(world, &spikes, &mut out.raster)?;
    }
    Ok(())
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
        out.rate_exc
            .extend(fired.chunks(2).map(|f| f[0] as f64 / exc * 1000.0));
        out.rate_inh
            .extend(fired.chunks(2).map(|f| f[1] as f64 / inh * 1000.0));
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
fn progress(cfg: &Cortex, out: &Outcome) {
    let done = out.eeg.len() as u64;
    let tenth = cfg.steps.div_ceil(10).next_multiple_of(BLOCK);
    if !done.is_multiple_of(tenth) && done != cfg.steps {
        return;
    }
    let last = out.eeg.len().saturating_sub(BLOCK as usize);
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len().max(1) as f64;
    log::info!(
        "cortex: step {done} of {}: last 512 steps: EEG {:.3} mV, excitatory {:.2} Hz, inhibitory {:.2} Hz",
        cfg.steps,
        mean(&out.eeg[last..]),
        mean(&out.rate_exc[last..]),
        mean(&out.rate_inh[last..])
    );
}
