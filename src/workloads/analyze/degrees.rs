//! Degree statistics: the histogram (one bin per degree below 1024, log2 bins above), the
//! mean, variance, skewness and excess kurtosis, the largest degree and the isolated count.
//! A vertex's degree is its CSR row length: distinct neighbours, self-loops left out.
//!
//! The moments are the same for every rank count, to the last bit. Floating-point sums
//! change with the order of their terms, so only integers are summed: the degree total Σd,
//! and the power sums T_k = Σ (d - c)^k (k = 2, 3, 4) in i128 around c, the mean rounded to
//! an integer. With δ = mean - c (|δ| ≤ 1/2, so the correction cancels little) and
//! a_k = T_k / N, the population central moments are
//!   m2 = a2 - δ², m3 = a3 - 3δ a2 + 2δ³, m4 = a4 - 4δ a3 + 6δ² a2 - 3δ⁴,
//! skewness m3 / m2^1.5 and excess kurtosis m4 / m2² - 3 (both 0 when every degree is the
//! same). The moments are NaN only if a T_k leaves i128 (Σ (d - c)^4 ≥ 2^127, beyond any
//! graph a CSR of u64 offsets can hold in practice).

use crate::comm::{Op, World};
use crate::error::Result;
use crate::graph::DistGraph;
use rayon::prelude::*;

/// Degrees below this have a histogram bin each.
pub const EXACT_DEGREES: u64 = 1024;

/// Histogram bins: `EXACT_DEGREES` exact ones, then one per power of two [2^k, 2^(k+1)) for
/// k = 10 ..= 63.
pub const DEGREE_BINS: usize = EXACT_DEGREES as usize + (64 - EXACT_LOG2 as usize);

/// log2 of `EXACT_DEGREES`.
const EXACT_LOG2: u32 = EXACT_DEGREES.ilog2();

/// Degree statistics over all vertices of a graph.
#[derive(Clone, Debug, PartialEq)]
pub struct DegreeStats {
    pub vertices: u64,
    /// Vertices of degree 0.
    pub isolated: u64,
    pub max: u64,
    /// Σ d: the directed CSR entries.
    pub total: u64,
    pub mean: f64,
    /// Population variance m2.
    pub variance: f64,
    pub skewness: f64,
    pub excess_kurtosis: f64,
    /// `DEGREE_BINS` counts; bin `degree_bin(d)` holds degree d.
    pub histogram: Vec<u64>,
}

/// The histogram bin of degree `d`.
pub fn degree_bin(d: u64) -> usize {
    if d < EXACT_DEGREES {
        d as usize
    } else {
        EXACT_DEGREES as usize + (d.ilog2() - EXACT_LOG2) as usize
    }
}

/// The smallest degree of histogram bin `bin` (bins are contiguous, so bin `b` ends where
/// bin `b + 1` starts).
pub fn bin_start(bin: usize) -> u64 {
    if bin < EXACT_DEGREES as usize {
        bin as u64
    } else {
        1 << (bin - EXACT_DEGREES as usize + EXACT_LOG2 as usize)
    }
}

/// Degree statistics of a whole graph given all its degrees.
pub fn degree_stats(degrees: &[u64]) -> DegreeStats {
    let counts = Counts::of(degrees);
    let shift = counts.shift();
    finish(counts, shifted_sums(degrees, shift))
}

/// Degree statistics of a distributed graph (collective; identical on every rank).
pub fn dist_degree_stats(world: &World, g: &DistGraph) -> Result<DegreeStats> {
    let degrees: Vec<u64> = (0..g.local_n()).map(|l| g.degree(l)).collect();
    let mut counts = Counts::of(&degrees);
    let mut sums = [counts.vertices, counts.isolated, counts.total];
    world.allreduce_slice(&mut sums, Op::Sum);
    [counts.vertices, counts.isolated, counts.total] = sums;
    world.allreduce_slice(&mut counts.histogram, Op::Sum);
    counts.max = world.allreduce(counts.max, Op::Max);
    let local = encode_sums(shifted_sums(&degrees, counts.shift()));
    let all = world.allgatherv(&local)?;
    Ok(finish(counts, add_encoded_sums(&all)))
}

/// What one pass over the degrees counts exactly.
#[derive(Clone, Debug, PartialEq)]
struct Counts {
    vertices: u64,
    isolated: u64,
    max: u64,
    total: u64,
    histogram: Vec<u64>,
}

impl Counts {
    fn of(degrees: &[u64]) -> Self {
        let empty = || Counts {
            vertices: 0,
            isolated: 0,
            max: 0,
            total: 0,
            histogram: vec![0; DEGREE_BINS],
        };
        degrees
            .par_iter()
            .fold(empty, |mut c, &d| {
                c.vertices += 1;
                c.isolated += u64::from(d == 0);
                c.max = c.max.max(d);
                c.total += d;
                c.histogram[degree_bin(d)] += 1;
                c
            })
            .reduce(empty, |mut a, b| {
                a.vertices += b.vertices;
                a.isolated += b.isolated;
                a.max = a.max.max(b.max);
                a.total += b.total;
                a.histogram
                    .iter_mut()
                    .zip(&b.histogram)
                    .for_each(|(x, y)| *x += y);
                a
            })
    }

    /// The mean rounded to the nearest integer (0 for no vertices).
    fn shift(&self) -> u64 {
        let n = u128::from(self.vertices.max(1));
        ((u128::from(self.total) + n / 2) / n) as u64
    }
}

/// Σ (d - shift)^k for k = 2, 3, 4, exactly; None if one leaves i128.
fn shifted_sums(degrees: &[u64], shift: u64) -> Option<[i128; 3]> {
    degrees
        .par_iter()
        .map(|&d| {
            let x = i128::from(d) - i128::from(shift);
            let x2 = x.checked_mul(x)?;
            Some([x2, x2.checked_mul(x)?, x2.checked_mul(x2)?])
        })
        .try_reduce(|| [0; 3], add_sums)
}

fn add_sums(a: [i128; 3], b: [i128; 3]) -> Option<[i128; 3]> {
    Some([
        a[0].checked_add(b[0])?,
        a[1].checked_add(b[1])?,
        a[2].checked_add(b[2])?,
    ])
}

/// Words carried per rank when the power sums are gathered: a flag (1: present), then each
/// sum as its low and high 64 bits.
const SUM_WORDS: usize = 7;

fn encode_sums(sums: Option<[i128; 3]>) -> [u64; SUM_WORDS] {
    let mut words = [0u64; SUM_WORDS];
    if let Some(sums) = sums {
        words[0] = 1;
        for (k, s) in sums.iter().enumerate() {
            words[1 + 2 * k] = *s as u64;
            words[2 + 2 * k] = (*s >> 64) as u64;
        }
    }
    words
}

/// The sum over ranks of the power sums gathered as `encode_sums` words, in rank order.
fn add_encoded_sums(words: &[u64]) -> Option<[i128; 3]> {
    words.chunks(SUM_WORDS).try_fold([0; 3], |acc, w| {
        if w[0] != 1 {
            return None;
        }
        let sum = |k: usize| ((u128::from(w[2 + 2 * k]) << 64) | u128::from(w[1 + 2 * k])) as i128;
        add_sums(acc, [sum(0), sum(1), sum(2)])
    })
}

/// The statistics from the exact counts and power sums.
fn finish(counts: Counts, sums: Option<[i128; 3]>) -> DegreeStats {
    let n = counts.vertices.max(1) as f64;
    let shift = counts.shift();
    let excess = i128::from(counts.total) - i128::from(counts.vertices) * i128::from(shift);
    let delta = excess as f64 / n;
    let [m2, m3, m4] = match sums {
        Some([t2, t3, t4]) => {
            let (a2, a3, a4) = (t2 as f64 / n, t3 as f64 / n, t4 as f64 / n);
            let d2 = delta * delta;
            [
                (a2 - d2).max(0.0),
                a3 - 3.0 * delta * a2 + 2.0 * d2 * delta,
                a4 - 4.0 * delta * a3 + 6.0 * d2 * a2 - 3.0 * d2 * d2,
            ]
        }
        None => [f64::NAN; 3],
    };
    let (skewness, excess_kurtosis) = if m2 == 0.0 {
        (0.0, 0.0)
    } else {
        (m3 / m2.powf(1.5), m4 / (m2 * m2) - 3.0)
    };
    DegreeStats {
        vertices: counts.vertices,
        isolated: counts.isolated,
        max: counts.max,
        total: counts.total,
        mean: counts.total as f64 / n,
        variance: m2,
        skewness,
        excess_kurtosis,
        histogram: counts.histogram,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Moments by the textbook two-pass formulas in f64.
    fn reference(degrees: &[u64]) -> (f64, f64, f64, f64) {
        let n = degrees.len() as f64;
        let mean = degrees.iter().sum::<u64>() as f64 / n;
        let m = |k: i32| {
            degrees
                .iter()
                .map(|&d| (d as f64 - mean).powi(k))
                .sum::<f64>()
                / n
        };
        let m2 = m(2);
        (mean, m2, m(3) / m2.powf(1.5), m(4) / (m2 * m2) - 3.0)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
    }

    #[test]
    fn bins() {
        for (d, bin) in [
            (0, 0),
            (1023, 1023),
            (1024, 1024),
            (2047, 1024),
            (2048, 1025),
            (u64::MAX, DEGREE_BINS - 1),
        ] {
            assert_eq!(degree_bin(d), bin, "{d}");
        }
        for bin in 0..DEGREE_BINS {
            assert_eq!(degree_bin(bin_start(bin)), bin);
            assert_eq!(
                degree_bin(bin_start(bin) - u64::from(bin > 0)),
                bin.max(1) - 1
            );
        }
    }

    #[test]
    fn stats_match_two_pass_formulas() {
        let degrees = [0, 1, 2, 2, 3, 10, 0, 5000, 1024, 7, 7, 7];
        let s = degree_stats(&degrees);
        assert_eq!(
            (s.vertices, s.isolated, s.max, s.total),
            (12, 2, 5000, 6063)
        );
        let (mean, var, skew, kurt) = reference(&degrees);
        assert!(close(s.mean, mean) && close(s.variance, var), "{s:?}");
        assert!(
            close(s.skewness, skew) && close(s.excess_kurtosis, kurt),
            "{s:?}"
        );
        assert_eq!(s.histogram.iter().sum::<u64>(), 12);
        assert_eq!(s.histogram[7], 3);
        assert_eq!(s.histogram[degree_bin(5000)], 1);
        assert_eq!(s.histogram[1024], 1);
    }

    #[test]
    fn regular_graph_has_no_spread() {
        let s = degree_stats(&[4; 100]);
        assert_eq!(
            (s.mean, s.variance, s.skewness, s.excess_kurtosis),
            (4.0, 0.0, 0.0, 0.0)
        );
        // Two values, equally often: variance 1, skewness 0, excess kurtosis -2.
        let s = degree_stats(&[3, 5, 3, 5]);
        assert_eq!(
            (s.mean, s.variance, s.skewness, s.excess_kurtosis),
            (4.0, 1.0, 0.0, -2.0)
        );
    }

    #[test]
    fn rank_sums_add_up_exactly() {
        let degrees: Vec<u64> = (0..5000u64).map(|i| i * i % 977 + (i % 13) * 100).collect();
        let whole = degree_stats(&degrees);
        let shift = Counts::of(&degrees).shift();
        for parts in [1, 2, 3, 7] {
            let words: Vec<u64> = degrees
                .chunks(degrees.len().div_ceil(parts))
                .flat_map(|piece| encode_sums(shifted_sums(piece, shift)))
                .collect();
            let sums = add_encoded_sums(&words);
            assert_eq!(sums, shifted_sums(&degrees, shift));
            assert_eq!(finish(Counts::of(&degrees), sums), whole);
        }
        let negative = encode_sums(Some([-5, i128::MIN / 2, 1 << 100]));
        assert_eq!(
            add_encoded_sums(&negative),
            Some([-5, i128::MIN / 2, 1 << 100])
        );
    }

    #[test]
    fn overflow_gives_nan_moments() {
        let s = degree_stats(&[0, 1 << 40]);
        assert!(s.variance.is_nan() && s.skewness.is_nan());
        assert_eq!((s.max, s.mean), (1 << 40, (1u64 << 39) as f64));
        let words = [encode_sums(Some([1; 3])), encode_sums(None)].concat();
        assert_eq!(add_encoded_sums(&words), None);
    }
}
