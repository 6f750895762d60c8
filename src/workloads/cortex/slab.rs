//! What every device shares about a rank's slab of the cortex: its layout (whole rows of the
//! L×L lattice, r ghost rows of state bytes on either side, the inner core and the border),
//! the inputs of one step, the per-step sums, and the two synapse schemes on the host.
//!
//! - `exp`: a ring of 16 delayed spike counts per neuron (packed e | i << 16, written at the
//!   arrival step, t + 1 + δ) and one trace per type, decayed by e^(−1/τ) and raised by A per
//!   arriving spike: the untruncated exponential, with one word written per step.
//! - `table`: the seed's ring of 75 = W_max + δ_max slots per neuron, into whose next w slots
//!   phase 2 adds counts × the washout table A·e^(−m/τ), w = min(60, ⌈3 max τ⌉); phase 1 reads
//!   the slot of its delay and clears it. Old deposits keep their decay when τ changes.

use super::model::Scheme;
use super::network::{all_source, source};
use crate::lattice::Slab;
use rayon::prelude::*;
use std::ops::Range;

/// Slots of the `exp` ring: δ_max + 1.
pub const EXP_SLOTS: usize = 16;
/// Slots of the `table` ring (W_max + δ_max) and the longest washout.
pub const TABLE_SLOTS: usize = 75;
pub const MAX_WASHOUT: usize = 60;
/// Fixed-point scale of the potential sums (2^24 per mV): integer sums, the same for any
/// order of addition, so the pseudo-EEG is the same for any rank count and device.
pub const V_SCALE: f64 = 16_777_216.0;

#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub slab: Slab,
    pub l: u64,
    pub r: u32,
    pub k: u32,
    /// Every other neuron a source (`network::all_source`) instead of Gaussian draws.
    pub all_to_all: bool,
}

impl Layout {
    pub fn rows(&self) -> usize {
        self.slab.thickness as usize
    }

    /// Neurons of the slab.
    pub fn n(&self) -> usize {
        self.slab.sites()
    }

    pub fn gid(&self, local: usize) -> u64 {
        self.slab.global(local)
    }

    /// State bytes of the ghost rows on one side.
    pub fn ghost_items(&self) -> usize {
        self.r as usize * self.l as usize
    }

    /// Rows of the inner core (at least r from both edges: they read no ghost row), and the
    /// border's row ranges.
    pub fn inner_and_border(&self) -> (Range<usize>, [Range<usize>; 2]) {
        let (rows, r) = (self.rows(), self.r as usize);
        if rows >= 2 * r {
            (r..rows - r, [0..r, rows - r..rows])
        } else {
            (r..r, [0..r.min(rows), r.min(rows)..rows])
        }
    }

    /// The slab's sources, interleaved: source j of neuron i at j·n + i.
    pub fn offsets(&self, seed: u64) -> Vec<u16> {
        let n = self.n();
        let mut out = vec![0u16; self.k as usize * n];
        out.par_chunks_mut(n).enumerate().for_each(|(j, row)| {
            for (i, o) in row.iter_mut().enumerate() {
                *o = if self.all_to_all {
                    all_source(self.l, j as u32)
                } else {
                    source(seed, self.gid(i), self.k, j as u32, self.r)
                };
            }
        });
        out
    }
}

/// What one step needs: the scheme, the step's random-stream keys and the settings in force.
#[derive(Clone, Debug)]
pub struct StepInput {
    pub scheme: Scheme,
    pub step: u64,
    pub noise_key: u64,
    pub boost_key: u64,
    pub base_i: [f64; 2],
    pub noise: [f64; 2],
    pub boost_fraction: f64,
    pub clamp: bool,
    pub amplitude: [f64; 2],
    pub decay: [f64; 2],
    /// The washout table (A·e^(−m/τ) per type), w entries.
    pub washout: Vec<[f32; 2]>,
}

/// A slab's sums of one step: the excitatory potentials (fixed point, `V_SCALE`) and the
/// firing neurons of each type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sums {
    pub v_exc: i64,
    pub fired: [u64; 2],
}

impl Sums {
    #[inline]
    pub fn of(inhibitory: bool, fired: bool, v: f64) -> Sums {
        let mut s = Sums::default();
        if inhibitory {
            s.fired[1] = u64::from(fired);
        } else {
            s.fired[0] = u64::from(fired);
            s.v_exc = (v * V_SCALE).round_ties_even() as i64;
        }
        s
    }

    pub fn add(a: Sums, b: Sums) -> Sums {
        Sums {
            v_exc: a.v_exc + b.v_exc,
            fired: [a.fired[0] + b.fired[0], a.fired[1] + b.fired[1]],
        }
    }
}

/// The synapses of a slab on the host.
pub enum Synapses {
    Exp {
        ring: Vec<u32>,
        trace: Vec<[f64; 2]>,
    },
    Table {
        ring: Vec<f32>,
    },
}

impl Synapses {
    pub fn new(n: usize, table: bool) -> Synapses {
        if table {
            Synapses::Table {
                ring: vec![0.0; TABLE_SLOTS * n],
            }
        } else {
            Synapses::Exp {
                ring: vec![0; EXP_SLOTS * n],
                trace: vec![[0.0; 2]; n],
            }
        }
    }

    /// Phase 1's input: what arrives at each neuron this step (mV).
    pub fn arrivals(&mut self, input: &StepInput, delay: &[u8]) -> Vec<f64> {
        let n = delay.len();
        let t = input.step as usize;
        match self {
            Synapses::Exp { ring, trace } => {
                let slot = &ring[(t % EXP_SLOTS) * n..][..n];
                trace
                    .par_iter_mut()
                    .zip(slot.par_iter())
                    .map(|(tr, &c)| {
                        let (e, i) = (f64::from(c & 0xffff), f64::from(c >> 16));
                        tr[0] = tr[0] * input.decay[0] + e * input.amplitude[0];
                        tr[1] = tr[1] * input.decay[1] + i * input.amplitude[1];
                        tr[0] + tr[1]
                    })
                    .collect()
            }
            Synapses::Table { ring } => {
                let base = t % TABLE_SLOTS + TABLE_SLOTS;
                (0..n)
                    .map(|i| {
                        let at = ((base - delay[i] as usize) % TABLE_SLOTS) * n + i;
                        let x = f64::from(ring[at]);
                        ring[at] = 0.0;
                        x
                    })
                    .collect()
            }
        }
    }

    /// Phase 2's output: each neuron's counts (`e | i << 16`) into its ring.
    pub fn deposit(&mut self, input: &StepInput, counts: &[u32], delay: &[u8]) {
        let n = counts.len();
        let t = input.step as usize;
        match self {
            Synapses::Exp { ring, .. } => {
                for (i, &c) in counts.iter().enumerate() {
                    ring[((t + 1 + delay[i] as usize) % EXP_SLOTS) * n + i] = c;
                }
            }
            Synapses::Table { ring } => {
                for (m, w) in input.washout.iter().enumerate() {
                    let slot = &mut ring[((t + 1 + m) % TABLE_SLOTS) * n..][..n];
                    slot.par_iter_mut()
                        .zip(counts.par_iter())
                        .for_each(|(ev, &c)| {
                            if c != 0 {
                                *ev = *ev + (c & 0xffff) as f32 * w[0] + (c >> 16) as f32 * w[1];
                            }
                        });
                }
            }
        }
    }
}

/// The washout table for effective amplitudes and time constants: w = ⌈3 max τ⌉ entries,
/// at most `MAX_WASHOUT` (then `cut` is true).
pub fn washout(amplitude: [f64; 2], tau: [f64; 2]) -> (Vec<[f32; 2]>, bool) {
    let want = (3.0 * tau[0].max(tau[1])).ceil() as usize;
    let w = want.clamp(1, MAX_WASHOUT);
    let table = (0..w)
        .map(|m| {
            let m = m as f64;
            [
                (amplitude[0] * (-m / tau[0]).exp()) as f32,
                (amplitude[1] * (-m / tau[1]).exp()) as f32,
            ]
        })
        .collect();
    (table, want > MAX_WASHOUT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(step: u64, washout: Vec<[f32; 2]>) -> StepInput {
        StepInput {
            scheme: Scheme::Seed,
            step,
            noise_key: 0,
            boost_key: 0,
            base_i: [0.0; 2],
            noise: [0.0; 2],
            boost_fraction: 0.0,
            clamp: true,
            amplitude: [0.25, -0.5],
            decay: [(-0.1f64).exp(); 2],
            washout,
        }
    }

    /// One excitatory and two inhibitory spikes at step 3, delay 7: both schemes deliver
    /// A·e^(−m/τ) from step 3 + 1 + 7 on, the table for its w steps.
    #[test]
    fn both_schemes_deliver_the_same_delayed_exponential() {
        let (table, cut) = washout([0.25, -0.5], [10.0, 10.0]);
        assert!(!cut && table.len() == 30);
        for mut syn in [Synapses::new(1, false), Synapses::new(1, true)] {
            let mut got = Vec::new();
            for t in 0..60 {
                let inp = input(t, table.clone());
                got.push(syn.arrivals(&inp, &[7])[0]);
                let c = if t == 3 { 1 | (2 << 16) } else { 0 };
                syn.deposit(&inp, &[c], &[7]);
            }
            for (t, &x) in got.iter().enumerate() {
                let want = if t >= 11 {
                    -0.75 * (-((t - 11) as f64) / 10.0).exp()
                } else {
                    0.0
                };
                let want = if matches!(syn, Synapses::Table { .. }) && t >= 41 {
                    0.0
                } else {
                    want
                };
                assert!((x - want).abs() < 1e-6, "step {t}: {x} vs {want}");
            }
        }
    }
}
