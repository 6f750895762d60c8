//! The network, a pure function of (seed, neuron, j), so that every rank and device builds
//! the same one: each neuron's type (excitatory with probability `ratio`), its varying
//! constants (excitatory c = −65 + 15r², d = 8 − 6r²; inhibitory a = 0.02 + 0.08r,
//! b = 0.25 − 0.05r), its start (v uniform on (−65, 30], u = bv, as the seed) and its delay
//! (5–15 ms uniform); and its k sources, each drawn from a normal of σ = r/3 around it,
//! rounded to the lattice, redrawn when farther than r or on itself, stored as one (dx, dy)
//! pair of signed bytes (r < 128).

use super::model::{normal_pair, unit, Cell};
use crate::rng::{draw, stream_key};

/// Stream purposes (`rng::stream_key`).
pub const CELLS: u64 = 0xc0_0001;
pub const SOURCES: u64 = 0xc0_0002;
pub const NOISE: u64 = 0xc0_0003;
pub const BOOST: u64 = 0xc0_0004;

/// The seed's delays, ms, and the longest any ring holds.
pub const DELAY_MIN: u8 = 5;
pub const DELAY_MAX: u8 = 15;

/// How a network is drawn: the excitatory fraction, the range of the delays, and whether
/// each neuron's sources are every other neuron (Izhikevich's all-to-all network) instead of
/// Gaussian draws.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wiring {
    pub ratio: f64,
    pub delays: [u8; 2],
    pub all_to_all: bool,
}

/// Redraws of a source before the fallback (each fails with about 1.1%).
const SOURCE_TRIES: u64 = 16;

/// Type bit of a state byte (bit 0: fired this step).
pub const INHIBITORY: u8 = 2;

/// One neuron as drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Neuron {
    pub inhibitory: bool,
    /// The two constants that vary: (c, d) excitatory, (a, b) inhibitory.
    pub varying: [f64; 2],
    pub v0: f64,
    pub delay: u8,
}

impl Neuron {
    /// Neuron `gid` of the run with `seed`.
    pub fn draw(seed: u64, gid: u64, wiring: &Wiring) -> Neuron {
        let key = stream_key(seed, CELLS);
        let u = |k: u64| unit(draw(key, gid * 4 + k));
        let inhibitory = u(0) >= wiring.ratio;
        let r = u(1);
        let varying = if inhibitory {
            [0.02 + 0.08 * r, 0.25 - 0.05 * r]
        } else {
            [-65.0 + 15.0 * (r * r), 8.0 - 6.0 * (r * r)]
        };
        let [lo, hi] = wiring.delays;
        let span = f64::from(hi - lo + 1);
        Neuron {
            inhibitory,
            varying,
            v0: 30.0 - u(2) * 95.0,
            delay: lo + (u(3) * span) as u8,
        }
    }

    pub fn cell(&self) -> Cell {
        cell(self.inhibitory, self.varying)
    }
}

/// The constants of a neuron of this type with these varying ones.
#[inline]
pub fn cell(inhibitory: bool, varying: [f64; 2]) -> Cell {
    if inhibitory {
        Cell {
            a: varying[0],
            b: varying[1],
            c: -65.0,
            d: 2.0,
        }
    } else {
        Cell {
            a: 0.02,
            b: 0.2,
            c: varying[0],
            d: varying[1],
        }
    }
}

/// Source j of neuron `gid` as (dx, dy) packed in 16 bits: dx in the low byte, dy in the
/// high one, each a two's-complement offset of at most r.
pub fn source(seed: u64, gid: u64, k: u32, j: u32, r: u32) -> u16 {
    let key = stream_key(seed, SOURCES);
    let sigma = f64::from(r) / 3.0;
    let r2 = i64::from(r) * i64::from(r);
    let base = (gid * u64::from(k) + u64::from(j)) * SOURCE_TRIES;
    for t in 0..SOURCE_TRIES {
        let (x, y) = normal_pair(key, base + t);
        let (dx, dy) = ((x * sigma).round() as i64, (y * sigma).round() as i64);
        if (dx, dy) != (0, 0) && dx * dx + dy * dy <= r2 {
            return pack(dx as i8, dy as i8);
        }
    }
    pack(1, 0)
}

/// Source j of a neuron of the all-to-all network on an L×L torus: the j-th of the other
/// neurons of the window [−L/2, L/2)² around it, row by row.
pub fn all_source(l: u64, j: u32) -> u16 {
    let h = (l / 2) as i64;
    let centre = (h * l as i64 + h) as u64;
    let q = if u64::from(j) < centre {
        u64::from(j)
    } else {
        u64::from(j) + 1
    };
    pack(((q % l) as i64 - h) as i8, ((q / l) as i64 - h) as i8)
}

pub fn pack(dx: i8, dy: i8) -> u16 {
    u16::from(dx as u8) | (u16::from(dy as u8) << 8)
}

pub fn unpack(offset: u16) -> (i64, i64) {
    (
        i64::from(offset as u8 as i8),
        i64::from((offset >> 8) as u8 as i8),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_lie_within_r_off_the_neuron_with_sigma_r_over_3() {
        let (r, k) = (12u32, 100u32);
        let (mut n, mut s2) = (0.0, 0.0);
        for gid in 0..200 {
            for j in 0..k {
                let (dx, dy) = unpack(source(3, gid, k, j, r));
                assert!((dx, dy) != (0, 0) && dx * dx + dy * dy <= i64::from(r * r));
                n += 2.0;
                s2 += (dx * dx + dy * dy) as f64;
            }
        }
        // σ = 4 per axis, the tail beyond r cut: about 15.5.
        let var = s2 / n;
        assert!((14.5..16.5).contains(&var), "variance {var}");
        assert_eq!(source(3, 5, k, 7, r), source(3, 5, k, 7, r));
        assert_ne!(source(3, 5, k, 7, r), source(4, 5, k, 7, r));
    }

    #[test]
    fn types_delays_and_constants_follow_their_draws() {
        let wiring = Wiring {
            ratio: 0.8,
            delays: [DELAY_MIN, DELAY_MAX],
            all_to_all: false,
        };
        let all: Vec<Neuron> = (0..20_000).map(|g| Neuron::draw(9, g, &wiring)).collect();
        let inh = all.iter().filter(|n| n.inhibitory).count() as f64 / all.len() as f64;
        assert!((inh - 0.2).abs() < 0.015, "inhibitory fraction {inh}");
        for d in DELAY_MIN..=DELAY_MAX {
            let c = all.iter().filter(|n| n.delay == d).count();
            assert!((1500..2150).contains(&c), "delay {d}: {c}");
        }
        for n in &all {
            let c = n.cell();
            assert!((-65.0..=-50.0).contains(&c.c) && (2.0..=8.0).contains(&c.d));
            assert!((0.02..=0.1).contains(&c.a) && (0.2..=0.25).contains(&c.b));
            assert!(n.v0 > -65.0 && n.v0 <= 30.0);
        }
    }

    #[test]
    fn all_to_all_sources_are_every_other_neuron_once() {
        let l = 6u64;
        let mut seen: Vec<(i64, i64)> = (0..l * l - 1)
            .map(|j| unpack(all_source(l, j as u32)))
            .collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len() as u64, l * l - 1);
        assert!(seen
            .iter()
            .all(|&(dx, dy)| (dx, dy) != (0, 0) && (-3..3).contains(&dx) && (-3..3).contains(&dy)));
    }
}
