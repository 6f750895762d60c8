//! The spin models as the updates see them, shared by the CPU and the GPU (kernels/spin.cu
//! follows it bit for bit). Spins are q-state Potts states 0..q in one byte; Ising is q = 2
//! with s = 2·state - 1. Every update works with the Potts weight exp(K Σ δ(s_i, s_j)):
//! Ising's exp(β Σ s_i s_j) is that with K = 2β (up to a constant), Potts' exp(-βH) with
//! K = β. Energies and order parameters are reported in each model's own convention.
//!
//! Every random decision compares the top 53 bits of a counter-based draw (`rng::draw`) with
//! an integer threshold computed once on the host, so the CPU and the GPU take the same
//! decisions without any floating-point arithmetic on the device.

use crate::lattice::occupation::threshold;
use crate::rng::{draw, mix64, stream_key};

/// Spins per site state and coupling convention.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Model {
    /// States per spin (2 for Ising).
    pub q: u32,
    /// Ising conventions (H = -Σ s_i s_j, m = Σ s / N) rather than Potts' (H = -Σ δ).
    pub ising: bool,
    pub dim: usize,
}

impl Model {
    /// Neighbours per site, z = 2d.
    pub fn neighbours(&self) -> u32 {
        2 * self.dim as u32
    }

    /// K of the Potts weight exp(K Σ δ) at inverse temperature `beta`.
    pub fn coupling(&self, beta: f64) -> f64 {
        if self.ising {
            2.0 * beta
        } else {
            beta
        }
    }

    /// Metropolis thresholds on the lattice: `metropolis_table_to(beta, z)`.
    pub fn metropolis_table(&self, beta: f64) -> Vec<u64> {
        self.metropolis_table_to(beta, self.neighbours())
    }

    /// Metropolis thresholds for sites of at most `z` neighbours: entry ΔE + z, for ΔE =
    /// (neighbours equal to the old state) - (neighbours equal to the proposed one) in
    /// -z..=z, is 2^53 when ΔE <= 0 (always accepted), else 2^53 exp(-K ΔE) rounded.
    pub fn metropolis_table_to(&self, beta: f64, z: u32) -> Vec<u64> {
        let z = z as i32;
        let k = self.coupling(beta);
        (-z..=z)
            .map(|de| threshold((-k * f64::from(de.max(0))).exp()))
            .collect()
    }

    /// Threshold of a satisfied bond's activation in a cluster update, p = 1 - exp(-K).
    pub fn bond_threshold(&self, beta: f64) -> u64 {
        threshold(-(-self.coupling(beta)).exp_m1())
    }

    /// Energy per site from the satisfied bonds (equal neighbours; every bond counted once)
    /// of all `bonds` (d·N on the lattice).
    pub fn energy(&self, satisfied: u64, bonds: u64, sites: u64) -> f64 {
        if self.ising {
            // -Σ s s = -(satisfied - unsatisfied).
            (bonds as f64 - 2.0 * satisfied as f64) / sites as f64
        } else {
            -(satisfied as f64) / sites as f64
        }
    }

    /// Order parameter from the sites in each state: Ising |m| = |N1 - N0| / N; Potts
    /// (q ρ_max - 1) / (q - 1), ρ_max the largest state's share (equal to |m| at q = 2).
    pub fn order(&self, counts: &[u64], sites: u64) -> f64 {
        let largest = counts.iter().copied().max().unwrap_or(0) as f64 / sites as f64;
        let q = f64::from(self.q);
        (q * largest - 1.0) / (q - 1.0)
    }
}

/// Whether a draw accepts at `threshold` (see `metropolis_table`).
#[inline]
pub fn accept(draw: u64, threshold: u64) -> bool {
    draw >> 11 < threshold
}

/// The one bond decision of the cluster updates (Swendsen-Wang and Wolff; on the CPU and
/// the GPU, on the lattice and the rewired graph): a bond whose two ends are in one state is
/// activated when draw(`key`, `bond`) passes `threshold` (`Model::bond_threshold`). The
/// bond's number is `lattice_bond` or `graph_bond`, the key the sweep's `Stream::Bonds`
/// (Swendsen-Wang) or cluster k's draw(`Stream::Wolff` key, k) (Wolff). A pure function of
/// the key and the bond, so a cluster does not depend on the order it is grown in, nor on
/// the rank count or the device.
#[inline]
pub fn bond_active(key: u64, bond: u64, threshold: u64) -> bool {
    accept(draw(key, bond), threshold)
}

/// The number of lattice bond (site g, axis): g·d + axis (the bond from g one step up).
#[inline]
pub fn lattice_bond(site: u64, axis: usize, dim: usize) -> u64 {
    site * dim as u64 + axis as u64
}

/// The number of the rewired graph's edge {u, v} among `n` vertices (n <= 2^32):
/// min·n + max, the same from either end.
#[inline]
pub fn graph_bond(u: u64, v: u64, n: u64) -> u64 {
    u.min(v) * n + u.max(v)
}

/// The seed site of the Wolff cluster keyed by `key`, of `sites`: draw 0 of mix64(key).
#[inline]
/// One Wolff sweep: `clusters` clusters, cluster k keyed by draw(key, k) (a fixed count:
/// stopping once the sizes add up to the sites would weight the measured states by their
/// cluster sizes), each grown and flipped by `cluster`, which returns its size. Returns the
/// sites flipped.
pub fn wolff_sweep(
    key: u64,
    clusters: u64,
    mut cluster: impl FnMut(u64) -> crate::error::Result<u64>,
) -> crate::error::Result<u64> {
    (0..clusters).try_fold(0, |flipped, k| Ok(flipped + cluster(draw(key, k))?))
}

pub fn wolff_seed(key: u64, sites: u64) -> u64 {
    draw(mix64(key), 0) % sites
}

/// The new state of the Wolff cluster keyed by `key` whose seed is in state `old`: a
/// `proposal` by draw 1 of mix64(key).
#[inline]
pub fn wolff_state(key: u64, old: u8, q: u32) -> u8 {
    proposal(old, draw(mix64(key), 1), q)
}

/// A state drawn uniformly from 0..q (the draw's top 32 bits, multiplied and shifted).
#[inline]
pub fn uniform_state(draw: u64, q: u32) -> u8 {
    (((draw >> 32) * u64::from(q)) >> 32) as u8
}

/// A Metropolis proposal: one of the q - 1 states other than `s`, uniformly (1 - s for
/// q = 2, whatever the draw).
#[inline]
pub fn proposal(s: u8, draw: u64, q: u32) -> u8 {
    let step = ((draw >> 32) * u64::from(q - 1)) >> 32;
    ((u64::from(s) + 1 + step) % u64::from(q)) as u8
}

/// What a sweep's random numbers are for (the last part of their stream's name).
#[derive(Clone, Copy, Debug)]
pub enum Stream {
    /// Metropolis half-sweep of colour 0 or 1: draw 2g decides, draw 2g + 1 proposes (Potts).
    Colour(u8),
    /// Swendsen-Wang bonds (`bond_active`).
    Bonds,
    /// Swendsen-Wang cluster with canonical label c at draw c.
    Clusters,
    /// Wolff: cluster k of the sweep keyed by draw k (see `cpu::wolff`, `bond_active`).
    Wolff,
    /// The hot start, site g at draw g (sweep 0).
    Start,
}

impl Stream {
    fn tag(self) -> u64 {
        match self {
            Stream::Colour(c) => u64::from(c),
            Stream::Bonds => 2,
            Stream::Clusters => 3,
            Stream::Wolff => 4,
            Stream::Start => 5,
        }
    }
}

/// Purpose tag of the spin models' streams (`rng::stream_key`).
const SPIN_STREAM: u64 = 0x7370_696e_0000_0000;

/// The key of a stream: keyed by the seed, the β's index in the run, the sweep (counted from
/// 0 at the start of that β's chain, below 2^45) and the use, so a chain's numbers depend on
/// neither the rank count nor the device nor a restart.
pub fn sweep_key(seed: u64, beta_index: usize, sweep: u64, stream: Stream) -> u64 {
    let name = ((beta_index as u64) << 48) ^ (sweep << 3) ^ stream.tag();
    stream_key(seed, SPIN_STREAM ^ name)
}

/// The start state of global site g: 0 (cold) or uniform (hot, from the `Start` stream).
pub fn start_state(hot: Option<u64>, site: u64, q: u32) -> u8 {
    hot.map_or(0, |key| uniform_state(draw(key, site), q))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_accept_downhill_always_and_uphill_with_the_boltzmann_weight() {
        let ising = Model {
            q: 2,
            ising: true,
            dim: 2,
        };
        let t = ising.metropolis_table(0.5);
        assert_eq!(t.len(), 9);
        assert!(t[..=4].iter().all(|&x| x == 1 << 53));
        // ΔE = 2 equal neighbours lost, at K = 2β = 1: exp(-2).
        assert_eq!(t[6], threshold((-2.0f64).exp()));
        assert!(accept(u64::MAX, 1 << 53));
        assert_eq!(ising.bond_threshold(0.5), threshold(1.0 - (-1.0f64).exp()));
        assert_eq!(ising.energy(32, 32, 16), -2.0);
        assert_eq!(ising.metropolis_table_to(0.5, 4), t);
        assert_eq!(
            ising.metropolis_table_to(0.5, 6)[1..12],
            ising.metropolis_table_to(0.5, 5)
        );
        assert_eq!(graph_bond(7, 3, 10), graph_bond(3, 7, 10));
        assert_eq!(ising.order(&[4, 12], 16), 0.5);
    }

    #[test]
    fn proposals_never_keep_the_state_and_cover_the_others() {
        for q in [2, 3, 7] {
            for s in 0..q as u8 {
                let mut seen = vec![false; q as usize];
                for k in 0..200 {
                    let p = proposal(s, draw(9, k), q);
                    assert_ne!(p, s);
                    seen[p as usize] = true;
                }
                assert_eq!(seen.iter().filter(|&&x| x).count(), q as usize - 1);
            }
        }
        assert!((0..100).all(|k| uniform_state(draw(3, k), 5) < 5));
    }
}
