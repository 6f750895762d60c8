//! The spin models as the updates see them, shared by the CPU and the GPU (kernels/spin.cu
//! follows it bit for bit). Spins are q-state Potts states 0..q in one byte; Ising is q = 2
//! with s = 2·state - 1. Every update works with the Potts weight exp(K Σ δ(s_i, s_j)):
//! Ising's exp(β Σ s_i s_j) is that with K = 2β (up to a constant), Potts' exp(-βH) with
//! K = β. Energies and order parameters are reported in each model's own convention.
//!
//! Every random decision compares a 53-bit uniform from the counter-based draws (`rng::draw`)
//! with an integer threshold computed once on the host, so the CPU and the GPU take the same
//! decisions without any floating-point arithmetic on the device.
//!
//! Metropolis acceptance is bit-sliced (`metropolis_accept`): the 32 sites of one colour that
//! the multi-spin coded kernel keeps in one word (`acceptance_lane`) share their random bits,
//! site j's uniform being bit j of the word's planes 0..53, most significant first, two
//! planes per 64-bit draw (`acceptance_plane`). A site compares its uniform with its threshold
//! from the top bit down and is decided at the first bit where they differ: after 2 bits on
//! average, so the CPU and the byte kernel draw about one number per site, and the packed
//! kernel, deciding its 32 lanes together, about 3 per word where it drew one per site (the
//! price that bound it, docs/benchmarks.md). The statistics are those of a uniform drawn per
//! site: the draws are SplitMix64's outputs (a Weyl sequence through its finaliser, which
//! passes BigCrush on all 64 bits), every bit of each used once, by one site, and a site's
//! decision is u < t with u its 53 bits: P = t / 2^53 exactly, as before.

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

/// Bits of a Metropolis uniform: planes per acceptance word.
pub const PLANES: u32 = 53;

/// The acceptance word of global site `g` on a lattice of side `l` and its lane: the sites of
/// one row at positions of one parity, x = 2j + o, 32 consecutive j to a word (the packed
/// kernel's words of one colour), numbered (row·2 + o)·⌈l/64⌉ + x/64.
#[inline]
pub fn acceptance_lane(g: u64, l: u64) -> (u64, u32) {
    let (row, x) = (g / l, g % l);
    let word = (row * 2 + (x & 1)) * l.div_ceil(64) + x / 64;
    (word, ((x >> 1) & 31) as u32)
}

/// Planes 2m and 2m + 1 of acceptance word `word` under `key`: the low and high halves of
/// the draw at the even counter 2(32·word + m) (the odd counters 2g + 1 are the Potts
/// proposals').
#[inline]
pub fn acceptance_planes(key: u64, word: u64, m: u32) -> (u32, u32) {
    let r = draw(key, 2 * (32 * word + u64::from(m)));
    (r as u32, (r >> 32) as u32)
}

/// Whether site `g` (lattice side `l`) takes its Metropolis proposal at `threshold`: its
/// 53-bit uniform, bit k from plane k of its word, is below the threshold (2^53 accepts
/// all). Decided at the first bit that differs from the threshold's.
pub fn metropolis_accept(key: u64, g: u64, l: u64, threshold: u64) -> bool {
    if threshold >> PLANES != 0 {
        return true;
    }
    let (word, lane) = acceptance_lane(g, l);
    for k in 0..PLANES {
        let (low, high) = acceptance_planes(key, word, k / 2);
        let plane = if k % 2 == 0 { low } else { high };
        let bit = plane >> lane & 1;
        let wanted = (threshold >> (PLANES - 1 - k) & 1) as u32;
        if bit != wanted {
            return bit < wanted;
        }
    }
    false
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

    /// A site's bit-sliced uniform, assembled from its 53 planes, decides as `accept` would
    /// with it; thresholds 0 and 2^53 never and always accept; acceptance runs near t / 2^53.
    #[test]
    fn bit_sliced_acceptance_compares_the_sites_uniform_with_the_threshold() {
        let l = 200;
        let thresholds = [0, 1, threshold(0.1353), threshold(0.5), (1 << 53) - 1, 1 << 53];
        let mut accepted = [0u32; 6];
        for g in 0..4000u64 {
            let (word, lane) = acceptance_lane(g, l);
            let u = (0..PLANES).fold(0u64, |u, k| {
                let (low, high) = acceptance_planes(5, word, k / 2);
                let plane = if k % 2 == 0 { low } else { high };
                u << 1 | u64::from(plane >> lane & 1)
            });
            for (i, &t) in thresholds.iter().enumerate() {
                let got = metropolis_accept(5, g, l, t);
                assert_eq!(got, t >> 53 != 0 || accept(u << 11, t), "site {g}, t {t}");
                accepted[i] += u32::from(got);
            }
        }
        assert_eq!((accepted[0], accepted[5]), (0, 4000));
        assert!((accepted[3] as i32 - 2000).abs() < 200, "{accepted:?}");
        // Two sites of one word use different bits; sites of the two parities other words.
        assert_eq!(acceptance_lane(2, l), (0, 1));
        assert_eq!(acceptance_lane(3, l), (4, 1));
        assert_eq!(acceptance_lane(64, l), (1, 0));
        assert_eq!(acceptance_lane(l, l), (8, 0));
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
