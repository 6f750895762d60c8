//! One Izhikevich neuron (IEEE TNN 2003): v' = 0.04v² + 5v + 140 − u + I, u' = a(bv − u), a
//! spike at v ≥ 30 mV resetting v ← c, u ← u + d; the three integration schemes; and the one
//! software normal deviate every device draws alike.
//!
//! Everything here is f64 arithmetic written as a fixed sequence of single IEEE operations
//! (no fused multiply-add: kernels/cortex.cu spells each with `__dmul_rn`/`__dadd_rn`), so the
//! CPU and the GPU compute the same bits. The single-neuron spike counts the spec lists for
//! each scheme (tests below) hold in f64; in f32 the half-step scheme gives other counts.

use crate::rng::draw;
use serde::{Deserialize, Serialize};

/// Threshold and peak of a spike, mV.
pub const PEAK: f64 = 30.0;

/// How a 1 ms step is integrated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Scheme {
    /// The seed's: one Euler step of v and u from the old v, v capped at 30, the reset at
    /// the start of the next step.
    Seed,
    /// Izhikevich's code: two 0.5 ms steps of v, then u from the new v (the overshoot
    /// enters u), the reset at the start of the next step (where his code records the spike:
    /// here it belongs to the step that crossed 30, as in the seed's scheme).
    HalfStep,
    /// n Euler steps of 1/n ms, each resetting at once.
    Substeps(u32),
}

impl Scheme {
    pub fn name(self) -> String {
        match self {
            Scheme::Seed => "seed".into(),
            Scheme::HalfStep => "half-step".into(),
            Scheme::Substeps(n) => format!("substeps ({n})"),
        }
    }

    /// The scheme's code in kernels/cortex.cu: 0 seed, 1 half-step, n ≥ 2 substeps.
    pub fn code(self) -> u32 {
        match self {
            Scheme::Seed => 0,
            Scheme::HalfStep => 1,
            Scheme::Substeps(n) => n.max(2),
        }
    }
}

/// A neuron's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub d: f64,
}

/// dv/dt, evaluated left to right as kernels/cortex.cu does.
#[inline]
fn dv(v: f64, u: f64, i: f64) -> f64 {
    0.04 * v * v + 5.0 * v + 140.0 - u + i
}

/// One 1 ms step of a neuron (v, u) that `fired` in the previous step, with external current
/// `i` and synaptic input `syn` (mV, added to v over the step). Returns whether it fires.
#[inline]
pub fn step(
    scheme: Scheme,
    cell: &Cell,
    v: &mut f64,
    u: &mut f64,
    fired: bool,
    i: f64,
    syn: f64,
) -> bool {
    match scheme {
        Scheme::Seed => {
            if fired {
                *v = cell.c;
                *u += cell.d;
            }
            let dv = dv(*v, *u, i);
            let du = cell.a * (cell.b * *v - *u);
            let next = *v + dv + syn;
            *v = if next > PEAK { PEAK } else { next };
            *u += du;
            *v >= PEAK
        }
        Scheme::HalfStep => {
            if fired {
                *v = cell.c;
                *u += cell.d;
            }
            let i = i + syn;
            *v += 0.5 * dv(*v, *u, i);
            *v += 0.5 * dv(*v, *u, i);
            *u += cell.a * (cell.b * *v - *u);
            let spike = *v >= PEAK;
            // Capped after u took the overshoot: the stored v (the pseudo-EEG's) stays finite.
            if spike {
                *v = PEAK;
            }
            spike
        }
        Scheme::Substeps(n) => {
            let h = 1.0 / f64::from(n);
            let i = i + syn;
            let mut spike = false;
            for _ in 0..n {
                let dv = dv(*v, *u, i);
                let du = cell.a * (cell.b * *v - *u);
                *v += h * dv;
                *u += h * du;
                if *v >= PEAK {
                    *v = cell.c;
                    *u += cell.d;
                    spike = true;
                }
            }
            spike
        }
    }
}

// The kernel writes these as the literals 0.6931471805599453 and 1.4142135623730951.
use std::f64::consts::{LN_2 as LN2, SQRT_2 as SQRT2};

/// ln x for a normal positive x, from + − × ÷ only: x = m·2^e with m in [√2/2, √2), then
/// ln m = 2 atanh t, t = (m − 1)/(m + 1) (|t| < 0.172), by its series to t^23 (error below
/// 1e-16 relative). The GPU runs the same operations in the same order.
pub fn soft_ln(x: f64) -> f64 {
    let bits = x.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52));
    if m > SQRT2 {
        m *= 0.5;
        e += 1;
    }
    let t = (m - 1.0) / (m + 1.0);
    let t2 = t * t;
    let mut p = 1.0 / 23.0;
    for k in (0..11).rev() {
        p = p * t2 + 1.0 / f64::from(2 * k + 1);
    }
    2.0 * t * p + e as f64 * LN2
}

/// Attempts of the polar method before giving up on a draw (each succeeds with π/4).
const POLAR_TRIES: u64 = 64;

/// A uniform on (−1, 1) from 32 bits: (k + ½)/2^31 − 1, exact in f64.
#[inline]
fn signed_unit(bits: u32) -> f64 {
    (f64::from(bits) + 0.5) * (1.0 / 2_147_483_648.0) - 1.0
}

/// Two independent standard normals for position `counter` of stream `key`, by Marsaglia's
/// polar method on counter-based draws (counters `counter·64 + try`).
pub fn normal_pair(key: u64, counter: u64) -> (f64, f64) {
    for t in 0..POLAR_TRIES {
        let bits = draw(key, counter.wrapping_mul(POLAR_TRIES).wrapping_add(t));
        let x = signed_unit((bits >> 32) as u32);
        let y = signed_unit(bits as u32);
        let s = x * x + y * y;
        if s < 1.0 {
            let f = (-2.0 * soft_ln(s) / s).sqrt();
            return (x * f, y * f);
        }
    }
    (0.0, 0.0)
}

/// A uniform on [0, 1) from 64 bits (their top 53).
#[inline]
pub fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Izhikevich's five regimes (RS, IB, CH, FS, LTS).
    const REGIMES: [(f64, f64, f64, f64); 5] = [
        (0.02, 0.2, -65.0, 8.0),
        (0.02, 0.2, -55.0, 4.0),
        (0.02, 0.2, -50.0, 2.0),
        (0.1, 0.2, -65.0, 2.0),
        (0.02, 0.25, -65.0, 2.0),
    ];

    /// Spikes of one neuron at I = 10 from v = −65, u = bv over 1000 ms. Izhikevich's code
    /// records a spike at the start of the ms after the crossing: over 1000 ms it records
    /// the crossings of the first 999 steps.
    fn spikes(scheme: Scheme, (a, b, c, d): (f64, f64, f64, f64)) -> u32 {
        let cell = Cell { a, b, c, d };
        let (mut v, mut u, mut fired, mut n) = (-65.0, b * -65.0, false, 0);
        let steps = if scheme == Scheme::HalfStep {
            999
        } else {
            1000
        };
        for _ in 0..steps {
            fired = step(scheme, &cell, &mut v, &mut u, fired, 10.0, 0.0);
            n += u32::from(fired);
        }
        n
    }

    #[test]
    fn the_five_regimes_spike_as_the_spec_lists_for_each_scheme() {
        let cases = [
            (Scheme::Seed, [22, 31, 75, 110, 69]),
            (Scheme::HalfStep, [20, 27, 43, 63, 44]),
            (Scheme::Substeps(10), [23, 34, 87, 131, 77]),
        ];
        for (scheme, want) in cases {
            let got: Vec<u32> = REGIMES.iter().map(|&r| spikes(scheme, r)).collect();
            assert_eq!(got, want, "{scheme:?}");
        }
    }

    #[test]
    fn soft_ln_agrees_with_the_library_logarithm() {
        for &x in &[
            1e-300, 2.3e-19, 0.001, 0.3, 0.5, 0.6, 0.7, 0.9999999, 1.0, 1.5, 7.0,
        ] {
            let (got, want) = (soft_ln(x), f64::ln(x));
            assert!(
                (got - want).abs() <= 4e-16 * want.abs().max(1.0),
                "{x}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn polar_normals_have_the_moments_of_a_standard_normal() {
        let n = 200_000;
        let (mut s1, mut s2, mut s4) = (0.0, 0.0, 0.0);
        for i in 0..n {
            let (x, y) = normal_pair(7, i);
            for z in [x, y] {
                s1 += z;
                s2 += z * z;
                s4 += z * z * z * z;
            }
        }
        let m = 2.0 * n as f64;
        assert!((s1 / m).abs() < 0.01, "mean {}", s1 / m);
        assert!((s2 / m - 1.0).abs() < 0.01, "variance {}", s2 / m);
        assert!((s4 / m - 3.0).abs() < 0.06, "fourth moment {}", s4 / m);
    }
}
