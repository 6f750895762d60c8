//! Checkpoint and restart: at a block's end (512 steps), when `checkpoint_seconds` passed,
//! at `stop_after`, or on SIGTERM/SIGINT, the result file is written as it stands (the report
//! of the steps so far) with `/cortex/checkpoint`: the step, the run's identity, and every
//! neuron's dynamic state (v, u, state byte, synapse ring and traces) neuron-major, so that a
//! run resumed on any number of ranks, on either device, continues bit for bit. Rank 0 writes
//! the report and its slab; each other rank then adds its slab (no rank gathers the lattice).

use super::record;
use super::run::Outcome;
use super::network::INHIBITORY;
use super::schedule::{Key, Setting};
use super::Cortex;
use crate::error::{Error, Result};
use crate::harness::{read_checkpoint_on_root, Harness};
use crate::output::{add_part, open_to_read, read_stored, stored_dataset, ResultFile};
use crate::report::Report;
use hdf5::types::VarLenUnicode;
use hdf5_metno as hdf5;
use std::ops::Range;
use std::path::Path;

/// A slab's dynamic state, neuron-major: `ring` holds the `exp` ring's 16 slots of each
/// neuron (or nothing), `trace` its two traces, `table` the `table` ring's 75 slots.
#[derive(Default, Debug, PartialEq)]
pub struct Snapshot {
    pub v: Vec<f64>,
    pub u: Vec<f64>,
    pub state: Vec<u8>,
    pub ring: Vec<u32>,
    pub trace: Vec<f64>,
    pub table: Vec<f32>,
}

/// Slot-major (slot·n + i) to neuron-major (i·slots + slot), and back.
pub fn neuron_major<T: Copy>(slot_major: &[T], n: usize) -> Vec<T> {
    let slots = slot_major.len() / n.max(1);
    (0..n * slots)
        .map(|q| slot_major[(q % slots) * n + q / slots])
        .collect()
}

pub fn slot_major<T: Copy>(neuron_major: &[T], n: usize) -> Vec<T> {
    let slots = neuron_major.len() / n.max(1);
    (0..n * slots)
        .map(|q| neuron_major[(q % n) * slots + q / n])
        .collect()
}

const GROUP: &str = "cortex/checkpoint";

/// Write the output as it stands after `step` steps, with this rank's `snap` of the neurons
/// `owns` (collective).
pub fn write(
    h: &Harness,
    cfg: &Cortex,
    out: &Outcome,
    step: u64,
    snap: &Snapshot,
    owns: Range<u64>,
) -> Result<()> {
    let world = h.world;
    let provenance = h.provenance()?;
    let path = &h.run.output;
    let n = cfg.neurons() as usize;
    let parts =
        |snap: &Snapshot, each: &mut dyn FnMut(&str, usize, Part) -> Result<()>| -> Result<()> {
            let at = owns.start as usize;
            each("v", n, Part::F64(&snap.v, at))?;
            each("u", n, Part::F64(&snap.u, at))?;
            each("state", n, Part::U8(&snap.state, at))?;
            if cfg.table {
                each("table", n * 75, Part::F32(&snap.table, at * 75))
            } else {
                each("ring", n * 16, Part::U32(&snap.ring, at * 16))?;
                each("trace", n * 2, Part::F64(&snap.trace, at * 2))
            }
        };
    let started = if world.is_root() {
        let mut so_far = Report::new();
        record::report(&mut so_far, cfg, h.run.seed, out);
        ResultFile::create(path)
            .and_then(|file| {
                provenance.write(&file.root())?;
                so_far.write(&file)?;
                let c = file.group(GROUP)?;
                c.writer().attr("step", step)?;
                c.writer().attr_str("job", &cfg.job(h.run.seed))?;
                parts(snap, &mut |name, len, part| match part {
                    Part::F64(d, at) => c.dataset_part(name, len, at, d),
                    Part::F32(d, at) => c.dataset_part(name, len, at, d),
                    Part::U32(d, at) => c.dataset_part(name, len, at, d),
                    Part::U8(d, at) => c.dataset_part(name, len, at, d),
                })?;
                file.close_unfinished()
            })
            .map(Some)
    } else {
        Ok(None)
    };
    let unfinished = world.agree(started)?;
    let mut added = Ok(());
    for rank in 1..world.size() {
        world.barrier();
        if rank == world.rank() {
            added = parts(snap, &mut |name, _, part| {
                let name = format!("{GROUP}/{name}");
                match part {
                    Part::F64(d, at) => add_part(path, &name, at, d),
                    Part::F32(d, at) => add_part(path, &name, at, d),
                    Part::U32(d, at) => add_part(path, &name, at, d),
                    Part::U8(d, at) => add_part(path, &name, at, d),
                }
            });
        }
    }
    world.agree(added)?;
    let finished = unfinished.map_or(Ok(None), |u| u.finish().map(Some));
    world.agree(finished)?;
    log::info!("cortex: checkpoint at step {step} in {}", path.display());
    Ok(())
}

/// A slab's part of one checkpoint dataset: the items and the first neuron's position.
enum Part<'a> {
    F64(&'a [f64], usize),
    F32(&'a [f32], usize),
    U32(&'a [u32], usize),
    U8(&'a [u8], usize),
}

fn resume_error(path: &Path, msg: impl std::fmt::Display) -> Error {
    Error::Config {
        file: path.display().to_string(),
        msg: format!("cannot resume from this checkpoint: {msg}"),
    }
}

/// The series so far, the step and this rank's snapshot of the neurons `owns`, from the
/// checkpoint in the output (collective); none when there is no file (start from step 0).
pub fn read(
    h: &Harness,
    cfg: &Cortex,
    owns: Range<u64>,
) -> Result<Option<(Outcome, u64, Snapshot)>> {
    let world = h.world;
    let path = &h.run.output;
    let head = read_checkpoint_on_root(h, "the first step", |path| {
        read_series(path, cfg, h.run.seed)
    })?;
    let mut word = head
        .as_ref()
        .map_or(Vec::new(), |(_, step)| step.to_le_bytes().to_vec());
    world.broadcast_bytes(&mut word);
    if word.is_empty() {
        return Ok(None);
    }
    let step = u64::from_le_bytes(word[..8].try_into().expect("8 bytes"));
    let snap = world.agree(read_slab(path, cfg, owns))?;
    log::info!("cortex: resuming at step {step}");
    let out = head.map_or_else(Outcome::default, |(out, _)| out);
    Ok(Some((out, step, snap)))
}

/// The checkpoint's neurons `owns`, each dataset refused unless it holds the type this run
/// writes in the shape of this run's neurons (before a slice of it is read).
fn read_slab(path: &Path, cfg: &Cortex, owns: Range<u64>) -> Result<Snapshot> {
    let bad = |e: hdf5::Error| resume_error(path, e);
    let file = open_to_read(path).map_err(bad)?;
    let g = file.group(GROUP).map_err(bad)?;
    let n = cfg.neurons() as usize;
    let mut snap = Snapshot {
        v: slab(path, &g, "v", (n, 1, "value"), &owns)?,
        u: slab(path, &g, "u", (n, 1, "value"), &owns)?,
        state: slab(path, &g, "state", (n, 1, "byte"), &owns)?,
        ..Snapshot::default()
    };
    if cfg.table {
        snap.table = slab(path, &g, "table", (n, 75, "slots"), &owns)?;
    } else {
        snap.ring = slab(path, &g, "ring", (n, 16, "slots"), &owns)?;
        snap.trace = slab(path, &g, "trace", (n, 2, "traces"), &owns)?;
    }
    check_slab(path, &snap, owns.start)?;
    Ok(snap)
}

/// The items of neurons `owns` of dataset `name` of `g`, which holds `per` `items` for each of
/// the `n` neurons, neuron-major; refused, naming the shape or type expected, where it does
/// not (a ring cut short, traces as rows).
fn slab<T: hdf5::H5Type + Clone>(
    path: &Path,
    g: &hdf5::Group,
    name: &str,
    (n, per, items): (usize, usize, &str),
    owns: &Range<u64>,
) -> Result<Vec<T>> {
    let each = if per == 1 {
        format!("one {items} per neuron")
    } else {
        format!("{per} {items} per neuron")
    };
    let form = format!("{each}, {n} neurons");
    let (a, b) = (owns.start as usize * per, owns.end as usize * per);
    stored_dataset::<T>(g, name, &[n * per], &form)
        .and_then(|d| {
            d.read_slice_1d::<T, _>(a..b)
                .map_err(|e| format!("{}: {e}", d.name()))
        })
        .map(|items| items.to_vec())
        .map_err(|e| resume_error(path, e))
}

/// Refuse a snapshot the steps cannot continue: a value that is not finite (the steps keep v
/// at most 30 mV, the others decay), or a state byte with more than its fired and type bits.
/// `first` is the snapshot's first neuron.
fn check_slab(path: &Path, snap: &Snapshot, first: u64) -> Result<()> {
    let not_finite = |name: &str, item: usize, per: usize, x: f64| {
        let neuron = first + (item / per) as u64;
        resume_error(
            path,
            format!("{GROUP}/{name} of neuron {neuron} is {x}: expected a finite number"),
        )
    };
    for (name, xs, per) in [("v", &snap.v, 1), ("u", &snap.u, 1), ("trace", &snap.trace, 2)] {
        if let Some(at) = xs.iter().position(|x| !x.is_finite()) {
            return Err(not_finite(name, at, per, xs[at]));
        }
    }
    if let Some(at) = snap.table.iter().position(|x| !x.is_finite()) {
        return Err(not_finite("table", at, 75, snap.table[at].into()));
    }
    let bits = 1 | INHIBITORY;
    if let Some(at) = snap.state.iter().position(|s| s & !bits != 0) {
        return Err(resume_error(
            path,
            format!(
                "{GROUP}/state of neuron {} is {}: expected 0 to {bits} (bit 0 fired, bit 1 inhibitory)",
                first + at as u64,
                snap.state[at]
            ),
        ));
    }
    Ok(())
}

/// The series and the step of a checkpoint (rank 0), checked against this run.
fn read_series(path: &Path, cfg: &Cortex, seed: u64) -> Result<(Outcome, u64)> {
    let bad = |e: hdf5::Error| resume_error(path, e);
    let file = open_to_read(path).map_err(bad)?;
    let g = file
        .group(GROUP)
        .map_err(|_| resume_error(path, "it holds no cortex checkpoint (no /cortex/checkpoint): drop --resume to start over, or give another output"))?;
    let job: VarLenUnicode = g.attr("job").and_then(|a| a.read_scalar()).map_err(bad)?;
    let want = cfg.job(seed);
    if job.as_str() != want {
        return Err(resume_error(
            path,
            format!("it holds {job}, but this run is {want}"),
        ));
    }
    let step: u64 = g.attr("step").and_then(|a| a.read_scalar()).map_err(bad)?;
    let c = file.group("cortex").map_err(bad)?;
    let f64s = |name: &str| -> Result<Vec<f64>> {
        c.dataset(name).and_then(|d| d.read_raw()).map_err(bad)
    };
    let u64s = |name: &str| -> Result<Vec<u64>> {
        c.dataset(name).and_then(|d| d.read_raw()).map_err(bad)
    };
    let keys: Vec<VarLenUnicode> = c
        .dataset("schedule/key")
        .and_then(|d| d.read_raw())
        .map_err(bad)?;
    let applied = u64s("schedule/step")?
        .into_iter()
        .zip(keys)
        .zip(f64s("schedule/value")?)
        .map(|((step, key), value)| {
            let key = Key::parse(key.as_str())
                .ok_or_else(|| resume_error(path, format!("unknown setting {key}")))?;
            Ok(Setting { step, key, value })
        })
        .collect::<Result<Vec<Setting>>>()?;
    let raster = if cfg.raster {
        u64s("raster/step")?
            .into_iter()
            .zip(u64s("raster/id")?)
            .map(|(s, i)| [s, i])
            .collect()
    } else {
        Vec::new()
    };
    let (probe_v, probe_u) = if cfg.probes.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        (f64s("probe/v")?, f64s("probe/u")?)
    };
    let attr = |name: &str| {
        c.attr(name)
            .and_then(|a| a.read_scalar::<u64>())
            .map_err(bad)
    };
    // The series of one value per step so far, each of that length (a rate cut short was
    // read as it was, and written back beside a longer EEG).
    let series = |name: &str| -> Result<Vec<f64>> {
        read_stored(&c, name, &[step as usize], "one per step so far")
            .map_err(|e| resume_error(path, e))
    };
    let excitatory = attr("excitatory")?;
    let seconds = c
        .attr("step_seconds")
        .and_then(|a| a.read_scalar::<f64>())
        .map_err(bad)?;
    let out = Outcome {
        eeg: series("eeg")?,
        rate_exc: series("rate_exc")?,
        rate_inh: series("rate_inh")?,
        raster,
        probe_v,
        probe_u,
        applied,
        excitatory,
        inhibitory: cfg.neurons() - excitatory,
        seconds,
        // Timing is of this job's blocks only (the wall clock of another job says nothing
        // about this one's phases).
        timing: Vec::new(),
    };
    Ok((out, step))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rings_go_neuron_major_and_back() {
        let n = 5;
        let slots: Vec<u32> = (0..3 * n as u32).collect();
        let by_neuron = neuron_major(&slots, n);
        assert_eq!(&by_neuron[..6], &[0, 5, 10, 1, 6, 11]);
        assert_eq!(slot_major(&by_neuron, n), slots);
    }
}
