//! The cortex on the CPU (rayon): a slab of whole rows with r ghost rows on either side of
//! its state bytes (type and fired bits). Per step: phase 1 updates every neuron; phase 2
//! counts each neuron's firing sources, on the inner core (rows at least r from the slab's
//! edges, which read no ghost) while the r border rows of fired bits travel to both
//! neighbouring slabs (`lattice::halo::exchange_deep_overlapped`), then on the border rows.

use super::checkpoint::{neuron_major, slot_major, Snapshot};
use super::model::{normal_pair, step, unit, Cell};
use super::network::{cell, unpack, Neuron, Wiring, INHIBITORY};
use super::slab::{Layout, StepInput, Sums, Synapses};
use super::timing::PhaseTimes;
use crate::comm::World;
use crate::lattice::halo;
use rayon::prelude::*;
use std::ops::Range;
use std::time::Instant;

/// A slab of neurons in host memory.
pub struct CpuCortex {
    pub layout: Layout,
    pub inhibitory: Vec<bool>,
    pub varying: Vec<[f64; 2]>,
    pub delay: Vec<u8>,
    pub v: Vec<f64>,
    pub u: Vec<f64>,
    /// State bytes, `[r ghost rows | the slab's rows | r ghost rows]`.
    pub state: Vec<u8>,
    /// Source j of local neuron i at `j·n + i`.
    pub offsets: Vec<u16>,
    pub synapses: Synapses,
    /// The phases' seconds since they were last taken (`timing`).
    pub times: PhaseTimes,
}

impl CpuCortex {
    /// The slab's neurons as drawn, at rest between their first steps.
    pub fn new(layout: Layout, seed: u64, wiring: &Wiring, table: bool) -> CpuCortex {
        let n = layout.n();
        let neurons: Vec<Neuron> = (0..n)
            .into_par_iter()
            .map(|i| Neuron::draw(seed, layout.gid(i), wiring))
            .collect();
        let ghost = layout.ghost_items();
        let mut state = vec![0u8; n + 2 * ghost];
        for (s, nr) in state[ghost..].iter_mut().zip(&neurons) {
            *s = if nr.inhibitory { INHIBITORY } else { 0 };
        }
        CpuCortex {
            inhibitory: neurons.iter().map(|n| n.inhibitory).collect(),
            varying: neurons.iter().map(|n| n.varying).collect(),
            delay: neurons.iter().map(|n| n.delay).collect(),
            v: neurons.iter().map(|n| n.v0).collect(),
            u: neurons.iter().map(|n| n.cell().b * n.v0).collect(),
            state,
            offsets: layout.offsets(seed),
            synapses: Synapses::new(n, table),
            layout,
            times: PhaseTimes::default(),
        }
    }

    /// One step (collective): phase 1, then phase 2 with the exchange; returns this slab's
    /// sums of the step.
    pub fn step(&mut self, world: &World, input: &StepInput) -> Sums {
        let started = Instant::now();
        let sums = self.update(input);
        let neurons = started.elapsed().as_secs_f64();
        let CpuCortex {
            layout,
            state,
            offsets,
            synapses,
            delay,
            times,
            ..
        } = self;
        let (inner, border) = layout.inner_and_border();
        let mut counts = vec![0u32; layout.n()];
        let overlapped = Instant::now();
        let inner_seconds = halo::exchange_deep_overlapped(
            world,
            &layout.slab,
            layout.r as usize,
            state,
            |field| {
                let at = Instant::now();
                count_rows(layout, field, offsets, &mut counts, inner.clone());
                at.elapsed().as_secs_f64()
            },
        );
        let wait = (overlapped.elapsed().as_secs_f64() - inner_seconds).max(0.0);
        let at = Instant::now();
        for rows in border {
            count_rows(layout, state, offsets, &mut counts, rows);
        }
        synapses.deposit(input, &counts, delay);
        times.add(&PhaseTimes {
            neurons,
            inner: inner_seconds,
            exchange: wait,
            exposed: wait,
            border: at.elapsed().as_secs_f64(),
            step: started.elapsed().as_secs_f64(),
        });
        sums
    }

    /// The neurons' dynamic state.
    pub fn snapshot(&self) -> Snapshot {
        let (n, ghost) = (self.layout.n(), self.layout.ghost_items());
        let mut snap = Snapshot {
            v: self.v.clone(),
            u: self.u.clone(),
            state: self.state[ghost..ghost + n].to_vec(),
            ..Snapshot::default()
        };
        match &self.synapses {
            Synapses::Exp { ring, trace } => {
                snap.ring = neuron_major(ring, n);
                snap.trace = trace.iter().flatten().copied().collect();
            }
            Synapses::Table { ring } => snap.table = neuron_major(ring, n),
        }
        snap
    }

    /// Continue from a snapshot.
    pub fn restore(&mut self, snap: Snapshot) {
        let (n, ghost) = (self.layout.n(), self.layout.ghost_items());
        self.v = snap.v;
        self.u = snap.u;
        self.state[ghost..ghost + n].copy_from_slice(&snap.state);
        self.synapses = match &self.synapses {
            Synapses::Exp { .. } => Synapses::Exp {
                ring: slot_major(&snap.ring, n),
                trace: snap.trace.chunks(2).map(|t| [t[0], t[1]]).collect(),
            },
            Synapses::Table { .. } => Synapses::Table {
                ring: slot_major(&snap.table, n),
            },
        };
    }

    /// Global ids of the neurons that fired in the last step.
    pub fn fired(&self) -> impl Iterator<Item = u64> + '_ {
        let ghost = self.layout.ghost_items();
        self.state[ghost..ghost + self.layout.n()]
            .iter()
            .enumerate()
            .filter(|(_, s)| *s & 1 == 1)
            .map(|(i, _)| self.layout.gid(i))
    }

    /// Phase 1: every neuron's step with its delayed input; the state bytes' fired bits.
    fn update(&mut self, input: &StepInput) -> Sums {
        let ghost = self.layout.ghost_items();
        let n = self.layout.n();
        let arrivals = self.synapses.arrivals(input, &self.delay);
        let layout = &self.layout;
        let (inhibitory, varying) = (&self.inhibitory, &self.varying);
        self.v
            .par_iter_mut()
            .zip(self.u.par_iter_mut())
            .zip(self.state[ghost..ghost + n].par_iter_mut())
            .enumerate()
            .map(|(i, ((v, u), s))| {
                let inh = inhibitory[i];
                let c: Cell = cell(inh, varying[i]);
                let current = input.current(layout.gid(i), inh);
                let fired = step(input.scheme, &c, v, u, *s & 1 == 1, current, arrivals[i]);
                *s = if inh { INHIBITORY } else { 0 } | u8::from(fired);
                Sums::of(inh, fired, *v)
            })
            .reduce(Sums::default, Sums::add)
    }
}

/// Phase 2 on `rows` of the slab: the firing excitatory and inhibitory sources of each
/// neuron, packed as `e | i << 16`.
fn count_rows(
    layout: &Layout,
    field: &[u8],
    offsets: &[u16],
    counts: &mut [u32],
    rows: Range<usize>,
) {
    let (l, n, k) = (layout.l as usize, layout.n(), layout.k as usize);
    let r = layout.r as i64;
    counts[rows.start * l..rows.end * l]
        .par_iter_mut()
        .enumerate()
        .for_each(|(at, out)| {
            let i = rows.start * l + at;
            let (x, y) = ((i % l) as i64, (i / l) as i64);
            let (mut e, mut inh) = (0u32, 0u32);
            for j in 0..k {
                let (dx, dy) = unpack(offsets[j * n + i]);
                let sx = (x + dx).rem_euclid(l as i64) as usize;
                let s = field[(y + dy + r) as usize * l + sx];
                let fired = u32::from(s & 1);
                if s & INHIBITORY != 0 {
                    inh += fired;
                } else {
                    e += fired;
                }
            }
            *out = e | (inh << 16);
        });
}

/// The external current of a neuron at a step: base + noise·N(0,1) (+ the boost), clamped at
/// 0 unless the run says otherwise.
impl StepInput {
    pub fn current(&self, gid: u64, inhibitory: bool) -> f64 {
        let t = usize::from(inhibitory);
        let (z, _) = normal_pair(self.noise_key, gid);
        let mut i = self.base_i[t] + self.noise[t] * z;
        if self.boost_fraction > 0.0
            && unit(crate::rng::draw(self.boost_key, gid)) < self.boost_fraction
        {
            i += super::schedule::BOOST_CURRENT;
        }
        if self.clamp && i < 0.0 {
            0.0
        } else {
            i
        }
    }
}
