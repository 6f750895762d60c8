//! Summary statistics as the Graph500 reference computes them: quartiles of the sorted sample
//! (the mean of the two middle order statistics when the split falls between them), sample
//! standard deviation, and the harmonic mean of TEPS with its standard deviation per Norris (1940).

#[derive(Clone, Copy, Debug, Default)]
pub struct Summary {
    pub min: f64,
    pub first_quartile: f64,
    pub median: f64,
    pub third_quartile: f64,
    pub max: f64,
    pub mean: f64,
    pub stddev: f64,
}

impl Summary {
    pub fn of(sample: &[f64]) -> Summary {
        if sample.is_empty() {
            return Summary::default();
        }
        let mut s = sample.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len() as f64;
        let mean = s.iter().sum::<f64>() / n;
        let var = if s.len() > 1 {
            s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        Summary {
            min: s[0],
            first_quartile: split_point(&s, 1, 4),
            median: split_point(&s, 1, 2),
            third_quartile: split_point(&s, 3, 4),
            max: s[s.len() - 1],
            mean,
            stddev: var.sqrt(),
        }
    }
}

/// The point `num/den` of the way through a sorted sample, as the reference's
/// `get_statistics` takes it: `data[k]` with k = n*num/den, or the mean of `data[k-1]` and
/// `data[k]` when `den` divides n.
fn split_point(sorted: &[f64], num: usize, den: usize) -> f64 {
    let n = sorted.len();
    let k = n * num / den;
    if n.is_multiple_of(den) {
        (sorted[k - 1] + sorted[k]) / 2.0
    } else {
        sorted[k]
    }
}

/// TEPS statistics from per-search seconds and edge counts. Quartiles of TEPS come from the
/// quartiles of seconds-per-edge (so the first TEPS quartile is 1 / the third s/e quartile).
#[derive(Clone, Copy, Debug, Default)]
pub struct Teps {
    pub min: f64,
    pub first_quartile: f64,
    pub median: f64,
    pub third_quartile: f64,
    pub max: f64,
    pub harmonic_mean: f64,
    pub harmonic_stddev: f64,
}

impl Teps {
    pub fn of(times: &[f64], nedges: &[u64]) -> Teps {
        let per_edge: Vec<f64> = times
            .iter()
            .zip(nedges)
            .map(|(&t, &m)| t / m as f64)
            .collect();
        let s = Summary::of(&per_edge);
        let k = per_edge.len() as f64;
        Teps {
            min: 1.0 / s.max,
            first_quartile: 1.0 / s.third_quartile,
            median: 1.0 / s.median,
            third_quartile: 1.0 / s.first_quartile,
            max: 1.0 / s.min,
            harmonic_mean: 1.0 / s.mean,
            harmonic_stddev: if k > 1.0 {
                s.stddev / (s.mean * s.mean * (k - 1.0).sqrt())
            } else {
                0.0
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_sample() {
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0, 5.0]);
        assert_eq!((s.min, s.first_quartile, s.median), (1.0, 2.0, 3.0));
        assert_eq!((s.third_quartile, s.max, s.mean), (4.0, 5.0, 3.0));
        assert!((s.stddev - 2.5f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn quartiles_of_an_even_sample_average_the_middle_pair() {
        let s = Summary::of(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
        assert_eq!(
            (s.first_quartile, s.median, s.third_quartile),
            (2.5, 4.5, 6.5)
        );
    }

    #[test]
    fn harmonic_mean_is_edges_over_mean_time_per_edge() {
        // Two searches: 100 edges in 1 s and 100 edges in 3 s -> mean s/e 0.02 -> 50 TEPS.
        let t = Teps::of(&[1.0, 3.0], &[100, 100]);
        assert!((t.harmonic_mean - 50.0).abs() < 1e-9);
        assert!((t.max - 100.0).abs() < 1e-9);
        assert!((t.min - 100.0 / 3.0).abs() < 1e-9);
        // Norris: std(s/e) / (mean^2 sqrt(n-1)) = 0.0141421 / (0.0004 * 1)
        assert!((t.harmonic_stddev - 2f64.sqrt() * 0.01 / 0.0004).abs() < 1e-6);
    }
}
