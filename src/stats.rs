//! Summary statistics as the Graph500 reference computes them: quartiles of the sorted sample
//! (the mean of the two middle order statistics when the split falls between them), sample
//! standard deviation, and the harmonic mean of TEPS with its standard deviation per Norris (1940).
//! And for Monte Carlo time series: jackknife errors over bins, the integrated autocorrelation
//! time with Sokal's automatic window, and the Binder cumulant.

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

/// Means of `series` over `bins` consecutive bins of equal length (samples past the last
/// whole bin are dropped).
pub fn bin_means(series: &[f64], bins: usize) -> Vec<f64> {
    let len = series.len() / bins.max(1);
    if len == 0 {
        return Vec::new();
    }
    series
        .chunks_exact(len)
        .take(bins)
        .map(|c| c.iter().sum::<f64>() / len as f64)
        .collect()
}

/// The jackknife estimate of `f` (a function of the means of several observables) and its
/// error, over `bins` bins of the series `columns` (one per observable, all as long; at most
/// one bin per sample). The estimate is `f` of the whole means; the error is
/// sqrt((B-1)/B Σ (f_b - mean f_b)²) over the leave-one-bin-out estimates f_b, 0 with fewer
/// than 2 bins.
pub fn jackknife(columns: &[&[f64]], bins: usize, f: impl Fn(&[f64]) -> f64) -> (f64, f64) {
    let n = columns.first().map_or(0, |c| c.len());
    let binned: Vec<Vec<f64>> = columns.iter().map(|c| bin_means(c, bins.min(n))).collect();
    let b = binned.first().map_or(0, Vec::len);
    let totals: Vec<f64> = binned.iter().map(|m| m.iter().sum()).collect();
    let whole: Vec<f64> = totals.iter().map(|t| t / b.max(1) as f64).collect();
    let estimate = f(&whole);
    if b < 2 {
        return (estimate, 0.0);
    }
    let leave_out: Vec<f64> = (0..b)
        .map(|k| {
            let means: Vec<f64> = totals
                .iter()
                .zip(&binned)
                .map(|(t, m)| (t - m[k]) / (b - 1) as f64)
                .collect();
            f(&means)
        })
        .collect();
    let mean = leave_out.iter().sum::<f64>() / b as f64;
    let var = leave_out.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
    (estimate, (var * (b - 1) as f64 / b as f64).sqrt())
}

/// Sokal's window factor: the sum stops at the first W >= C·τ(W).
const WINDOW_FACTOR: f64 = 6.0;

/// The integrated autocorrelation time τ = 1/2 + Σ_{t=1..W} ρ(t) of a series, with the
/// automatic window of Madras & Sokal (1988): the smallest W with W >= 6 τ(W). Returns
/// (τ, W); a constant series gives (0.5, 0); NaN when the series is too short for the
/// window to close within its first half (or the sum turns non-positive, which only a few
/// samples give). In units of the series' spacing.
pub fn tau_int(series: &[f64]) -> (f64, usize) {
    let n = series.len();
    let mean = series.iter().sum::<f64>() / n.max(1) as f64;
    let d: Vec<f64> = series.iter().map(|x| x - mean).collect();
    let c0 = d.iter().map(|x| x * x).sum::<f64>() / n.max(1) as f64;
    if n < 2 || c0 <= 0.0 {
        return (0.5, 0);
    }
    let mut tau = 0.5;
    for w in 1..=n / 2 {
        let c: f64 = d[..n - w]
            .iter()
            .zip(&d[w..])
            .map(|(a, b)| a * b)
            .sum::<f64>();
        tau += c / (n - w) as f64 / c0;
        if tau <= 0.0 {
            break;
        }
        if w as f64 >= WINDOW_FACTOR * tau {
            return (tau, w);
        }
    }
    (f64::NAN, n / 2)
}

/// The Binder cumulant U4 = 1 - <m^4> / (3 <m^2>^2).
pub fn binder(m2: f64, m4: f64) -> f64 {
    1.0 - m4 / (3.0 * m2 * m2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jackknife_of_a_mean_is_the_standard_error_of_the_bins() {
        let xs: Vec<f64> = (0..40).map(|i| f64::from(i % 7)).collect();
        let (est, err) = jackknife(&[&xs], 8, |m| m[0]);
        let bins = bin_means(&xs, 8);
        let mean = bins.iter().sum::<f64>() / 8.0;
        let var = bins.iter().map(|b| (b - mean).powi(2)).sum::<f64>() / 7.0;
        assert!((est - mean).abs() < 1e-12);
        assert!((err - (var / 8.0).sqrt()).abs() < 1e-12);
        // A variance from two columns: <x^2> - <x>^2 on bins of one sample is the sample's.
        let sq: Vec<f64> = xs.iter().map(|x| x * x).collect();
        let (v, _) = jackknife(&[&xs, &sq], 40, |m| m[1] - m[0] * m[0]);
        let direct = xs.iter().map(|x| (x - est).powi(2)).sum::<f64>() / 40.0;
        assert!((v - direct).abs() < 1e-12);
    }

    #[test]
    fn tau_int_of_an_ar1_series_is_near_its_exact_value() {
        // x_t = a x_{t-1} + noise: ρ(t) = a^t, τ = 1/2 + a/(1-a) = 4.5 for a = 0.8.
        let mut state: u64 = 12345;
        let mut x = 0.0;
        let series: Vec<f64> = (0..200_000)
            .map(|_| {
                state = crate::rng::mix64(state);
                x = 0.8 * x + (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                x
            })
            .collect();
        let (tau, window) = tau_int(&series);
        assert!((tau - 4.5).abs() < 0.3, "tau {tau}");
        assert!((27..60).contains(&window), "window {window}");
        assert_eq!(tau_int(&[1.0; 10]), (0.5, 0));
        assert!(
            tau_int(&[1.0, 2.0, 3.0, 4.0, 5.0]).0.is_nan(),
            "a trend has no window"
        );
        assert!((binder(1.0, 3.0)).abs() < 1e-12);
    }

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
