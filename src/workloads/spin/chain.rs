//! The run: for each β, one chain of sweeps from the start state (equilibration, then
//! measurement sweeps, measuring every `measure_every`), on this rank's device, with a
//! progress line per tenth of a chain, a checkpoint when one is due (sweeps or seconds), on
//! SIGTERM/SIGINT (then the run ends, exit status 143) and at `stop_after`.

use super::cpu::CpuSpins;
use super::gpu::GpuSpins;
use super::graph::{self, GraphSpins};
use super::model::{sweep_key, Model, Stream};
use super::record::{self, Position, Record};
use super::{Spin, Update};
use crate::comm::{Op, World};
use crate::device::Selected;
use crate::error::{Error, Result};
use crate::harness::{Checkpoints, Harness};
use crate::lattice::Slab;
use std::ops::Range;
use std::time::Instant;

/// The spins on this rank's device.
pub enum Spins<'h> {
    Cpu(Box<CpuSpins>),
    Gpu(Box<GpuSpins<'h>>),
    /// The rewired lattice (CPU).
    Graph(Box<GraphSpins>),
}

/// A β's thresholds (`Model::metropolis_table_to`, `Model::bond_threshold`).
struct Params {
    table: Vec<u64>,
    bonds: u64,
}

/// What one sweep needs: the β's thresholds and the sweep's random streams.
struct Sweep<'a> {
    world: &'a World,
    model: &'a Model,
    params: &'a Params,
    keys: &'a dyn Fn(Stream) -> u64,
    clusters_per_sweep: u64,
}

impl Sweep<'_> {
    fn colours(&self) -> [u64; 2] {
        [
            (self.keys)(Stream::Colour(0)),
            (self.keys)(Stream::Colour(1)),
        ]
    }
}

/// A device's three updates; `sweep` picks one, so each device dispatches its own.
trait Updates {
    fn metropolis(&mut self, s: &Sweep) -> Result<()>;
    fn swendsen_wang(&mut self, s: &Sweep) -> Result<()>;
    /// Returns the sites the clusters flipped.
    fn wolff(&mut self, s: &Sweep) -> Result<u64>;

    /// One sweep of `update` (collective); returns the sites Wolff clusters flipped (else 0).
    fn sweep(&mut self, update: Update, s: &Sweep) -> Result<u64> {
        match update {
            Update::Metropolis => self.metropolis(s).map(|()| 0),
            Update::SwendsenWang => self.swendsen_wang(s).map(|()| 0),
            Update::Wolff => self.wolff(s),
        }
    }
}

impl Updates for CpuSpins {
    fn metropolis(&mut self, s: &Sweep) -> Result<()> {
        CpuSpins::metropolis(self, s.world, s.model, &s.params.table, s.colours());
        Ok(())
    }
    fn swendsen_wang(&mut self, s: &Sweep) -> Result<()> {
        let (bonds, clusters) = ((s.keys)(Stream::Bonds), (s.keys)(Stream::Clusters));
        CpuSpins::swendsen_wang(self, s.world, s.model, s.params.bonds, bonds, clusters)
    }
    fn wolff(&mut self, s: &Sweep) -> Result<u64> {
        let key = (s.keys)(Stream::Wolff);
        CpuSpins::wolff(
            self,
            s.world,
            s.model,
            s.params.bonds,
            key,
            s.clusters_per_sweep,
        )
    }
}

impl Updates for GpuSpins<'_> {
    fn metropolis(&mut self, s: &Sweep) -> Result<()> {
        GpuSpins::metropolis(self, s.model, s.colours())
    }
    fn swendsen_wang(&mut self, s: &Sweep) -> Result<()> {
        let (bonds, clusters) = ((s.keys)(Stream::Bonds), (s.keys)(Stream::Clusters));
        GpuSpins::swendsen_wang(self, s.world, s.model, s.params.bonds, bonds, clusters)
    }
    fn wolff(&mut self, s: &Sweep) -> Result<u64> {
        let key = (s.keys)(Stream::Wolff);
        GpuSpins::wolff(
            self,
            s.world,
            s.model,
            s.params.bonds,
            key,
            s.clusters_per_sweep,
        )
    }
}

impl Updates for GraphSpins {
    fn metropolis(&mut self, s: &Sweep) -> Result<()> {
        GraphSpins::metropolis(self, s.world, s.model, &s.params.table, s.colours())
    }
    fn swendsen_wang(&mut self, s: &Sweep) -> Result<()> {
        let (bonds, clusters) = ((s.keys)(Stream::Bonds), (s.keys)(Stream::Clusters));
        GraphSpins::swendsen_wang(self, s.world, s.model, s.params.bonds, bonds, clusters)
    }
    fn wolff(&mut self, s: &Sweep) -> Result<u64> {
        let key = (s.keys)(Stream::Wolff);
        GraphSpins::wolff(
            self,
            s.world,
            s.model,
            s.params.bonds,
            key,
            s.clusters_per_sweep,
        )
    }
}

impl<'h> Spins<'h> {
    /// Spins for `slab` on the run's device, or for the rewired lattice where there is no
    /// slab (collective).
    fn new(h: &'h Harness, slab: Option<Slab>, cfg: &Spin) -> Result<Self> {
        let clusters = cfg.update == Update::SwendsenWang;
        match (slab, &h.device) {
            (Some(slab), _) => Self::on_lattice(h, slab, cfg, clusters),
            (None, Selected::Cpu) => {
                let p = cfg.rewiring.unwrap_or(0.0);
                let made = GraphSpins::new(h.world, &cfg.lattice, p, h.run.seed);
                h.world.agree(made).map(|s| Spins::Graph(Box::new(s)))
            }
            (None, Selected::Gpu(_)) => Err(Error::Unavailable(
                "spin: lattice = \"rewired\" runs on the CPU only: give --device cpu".into(),
            )),
        }
    }

    /// Spins for `slab` of the regular lattice (collective).
    fn on_lattice(h: &'h Harness, slab: Slab, cfg: &Spin, clusters: bool) -> Result<Self> {
        match &h.device {
            Selected::Cpu => h
                .world
                .agree(CpuSpins::new(slab, clusters))
                .map(|s| Spins::Cpu(Box::new(s))),
            Selected::Gpu(gpu) => {
                let kind = (&cfg.model, cfg.update);
                let made = GpuSpins::new(h.world, gpu, h.run.gpu_transport, slab, kind);
                h.world.agree(made).map(|s| Spins::Gpu(Box::new(s)))
            }
        }
    }

    fn reset(&mut self, hot: Option<u64>, q: u32) -> Result<()> {
        match self {
            Spins::Cpu(c) => {
                c.reset(hot, q);
                Ok(())
            }
            Spins::Gpu(g) => g.reset(hot, q),
            Spins::Graph(g) => {
                g.reset(hot, q);
                Ok(())
            }
        }
    }

    /// The slab's spins, on the host.
    pub fn local(&self) -> Result<Vec<u8>> {
        match self {
            Spins::Cpu(c) => Ok(c.local().to_vec()),
            Spins::Gpu(g) => g.local(),
            Spins::Graph(g) => Ok(g.local().to_vec()),
        }
    }

    fn set_local(&mut self, spins: &[u8]) -> Result<()> {
        match self {
            Spins::Cpu(c) => {
                c.set_local(spins);
                Ok(())
            }
            Spins::Gpu(g) => g.set_local(spins),
            Spins::Graph(g) => {
                g.set_local(spins);
                Ok(())
            }
        }
    }

    /// One sweep of `update` (collective); returns the sites Wolff clusters flipped (else 0).
    fn sweep(
        &mut self,
        world: &World,
        cfg: &Spin,
        p: &Params,
        keys: impl Fn(Stream) -> u64,
    ) -> Result<u64> {
        let sweep = Sweep {
            world,
            model: &cfg.model,
            params: p,
            keys: &keys,
            clusters_per_sweep: cfg.clusters_per_sweep,
        };
        let backend: &mut dyn Updates = match self {
            Spins::Cpu(c) => c.as_mut(),
            Spins::Gpu(g) => g.as_mut(),
            Spins::Graph(g) => g.as_mut(),
        };
        backend.sweep(cfg.update, &sweep)
    }

    /// Neighbours of the best-connected site.
    fn max_neighbours(&self, model: &Model) -> u32 {
        match self {
            Spins::Graph(g) => g.max_degree(),
            _ => model.neighbours(),
        }
    }

    /// Energy per site and order parameter of the whole lattice (collective).
    fn measure(&mut self, world: &World, model: &Model, sites: u64) -> Result<(f64, f64)> {
        let (mut counts, bonds) = match self {
            Spins::Cpu(c) => (c.tally(world, model), model.dim as u64 * sites),
            Spins::Gpu(g) => (g.tally(model)?, model.dim as u64 * sites),
            Spins::Graph(g) => (g.tally(world, model)?, g.bonds()),
        };
        world.allreduce_slice(&mut counts, Op::Sum);
        Ok((
            model.energy(counts[0], bonds, sites),
            model.order(&counts[1..], sites),
        ))
    }

    fn sync(&self) -> Result<()> {
        match self {
            Spins::Cpu(_) | Spins::Graph(_) => Ok(()),
            Spins::Gpu(g) => g.sync(),
        }
    }
}

/// The global sites whose spins this rank holds: its slab, or its part of the rewired
/// lattice's vertices.
pub fn owned_sites(cfg: &Spin, world: &World) -> Result<Range<u64>> {
    if cfg.rewiring.is_some() {
        return Ok(graph::owned_sites(&cfg.lattice, world));
    }
    let slab = Slab::new(cfg.lattice, world.size(), world.rank()).map_err(Error::Unavailable)?;
    Ok(slab.offset()..slab.offset() + slab.sites() as u64)
}

/// Run every chain (or what a checkpoint left of them) (collective): the record, or `None`
/// when the run stopped at `stop_after` (its checkpoint is then the output).
pub fn run(h: &Harness, cfg: &Spin) -> Result<Option<Record>> {
    let world = h.world;
    let slab = match cfg.rewiring {
        None => {
            Some(Slab::new(cfg.lattice, world.size(), world.rank()).map_err(Error::Unavailable)?)
        }
        Some(_) => None,
    };
    let (mut record, at) = if cfg.resume {
        record::resume(h, cfg, owned_sites(cfg, world)?)?
    } else {
        (Record::new(cfg), Position::default())
    };
    let mut spins = h.timed("setup", || Spins::new(h, slab, cfg))?;
    if let Some(local) = &at.spins {
        spins.set_local(local)?;
    }
    let mut control = Checkpoints::new(cfg.checkpoint_seconds);
    for b in at.beta..cfg.betas.len() {
        let (first, fresh) = if b == at.beta && at.spins.is_some() {
            (at.sweep, false)
        } else {
            (0, true)
        };
        let phase = format!("beta {}", cfg.betas[b]);
        let go = h.timed(&phase, || {
            chain(
                h,
                cfg,
                &mut spins,
                &mut record,
                (b, first, fresh),
                &mut control,
            )
        })?;
        if !go {
            return Ok(None);
        }
    }
    Ok(Some(record))
}

/// Chain `b` from sweep `first` (from the start state when `fresh`). False when the run
/// stopped at `stop_after` (collective).
fn chain(
    h: &Harness,
    cfg: &Spin,
    spins: &mut Spins,
    record: &mut Record,
    (b, first, fresh): (usize, u64, bool),
    control: &mut Checkpoints,
) -> Result<bool> {
    let (world, model, seed) = (h.world, cfg.model, h.run.seed);
    let beta = cfg.betas[b];
    if fresh {
        let hot = cfg.hot.then(|| sweep_key(seed, b, 0, Stream::Start));
        spins.reset(hot, model.q)?;
    }
    let params = Params {
        table: model.metropolis_table_to(beta, spins.max_neighbours(&model)),
        bonds: model.bond_threshold(beta),
    };
    if let Spins::Gpu(g) = spins {
        g.set_table(&params.table)?;
    }
    let (total, sites) = (cfg.chain_sweeps(), cfg.lattice.sites());
    let block = (total / 10).max(1);
    let (mut segment, mut timed_from) = (Instant::now(), first);
    for sweep in first..total {
        record.flipped[b] += spins.sweep(world, cfg, &params, |s| sweep_key(seed, b, sweep, s))?;
        let done = sweep + 1;
        let measuring = done > cfg.equilibration
            && (done - cfg.equilibration).is_multiple_of(cfg.measure_every);
        let due = control.poll(h, 1, cfg.checkpoint_sweeps, cfg.stop_after);
        let report = done.is_multiple_of(block) || done == total;
        let pause = measuring || report || due.any();
        if !pause {
            continue;
        }
        spins.sync()?;
        record.seconds[b] += segment.elapsed().as_secs_f64();
        record.sweeps_timed[b] += done - timed_from;
        timed_from = done;
        if measuring {
            let (e, m) = spins.measure(world, &model, sites)?;
            record.energy[b].push(e);
            record.order[b].push(m);
        }
        if report {
            record.progress(cfg, b, done);
        }
        if due.any() {
            record::checkpoint(h, cfg, record, b, done, spins)?;
            control.saved();
        }
        if due.interrupted {
            return Err(Error::Interrupted(format!(
                "spin: interrupted by a signal at beta = {beta}, sweep {done}: checkpoint in {}; rerun with --resume to continue",
                h.run.output.display()
            )));
        }
        if due.stop {
            if world.is_root() {
                println!(
                    "spin: stopped after {} sweeps (beta = {beta}, sweep {done}): checkpoint in {}; continue with --resume",
                    control.done,
                    h.run.output.display()
                );
            }
            return Ok(false);
        }
        segment = Instant::now();
    }
    if cfg.write_configuration {
        record.configurations[b] = world.gatherv_root(&spins.local()?)?;
    }
    Ok(true)
}
