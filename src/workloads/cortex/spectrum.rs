//! The pseudo-EEG's power spectrum (seed §8.6): every 512 steps, the periodogram of the last
//! 1024 samples (linearly detrended, windowed), averaged with the nine before it (Welch's
//! method, half overlap); normalised as eq. 8.6, so that with a rectangular window the bins
//! sum to the segment's mean square (scipy.signal.welch's `scaling = "spectrum"`); and the
//! quantitative EEG figures of each average: spectral entropy (1–47 Hz), peak, median and
//! edge (75/90/95%) frequencies, and the relative δ θ α β γ power (Table 8.4, bins rounded).

use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// Samples per segment, and the step between segments.
pub const SEGMENT: usize = 1024;
pub const HOP: usize = SEGMENT / 2;
/// Periodograms averaged.
pub const AVERAGED: usize = 10;
/// Samples per second: one per 1 ms step.
pub const RATE: f64 = 1000.0;
/// Upper end of the γ band and of the power the figures share.
pub const CUTOFF: f64 = 65.0;
/// Band edges (Hz): δ < 3.5 ≤ θ < 7 ≤ α < 13 ≤ β < 30 ≤ γ ≤ 65.
pub const BANDS: [(&str, f64, f64); 5] = [
    ("delta", 0.0, 3.5),
    ("theta", 3.5, 7.0),
    ("alpha", 7.0, 13.0),
    ("beta", 13.0, 30.0),
    ("gamma", 30.0, CUTOFF),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Window {
    Blackman,
    Hann,
    /// Press et al.'s parabolic window.
    Welch,
    Rectangular,
}

impl Window {
    /// The periodic window of `n` points (scipy's `get_window(name, n)`).
    pub fn values(self, n: usize) -> Vec<f64> {
        let x = |k: usize| 2.0 * PI * k as f64 / n as f64;
        (0..n)
            .map(|k| match self {
                Window::Hann => 0.5 - 0.5 * x(k).cos(),
                Window::Blackman => 0.42 - 0.5 * x(k).cos() + 0.08 * (2.0 * x(k)).cos(),
                Window::Welch => {
                    let half = n as f64 / 2.0;
                    1.0 - ((k as f64 - half) / half).powi(2)
                }
                Window::Rectangular => 1.0,
            })
            .collect()
    }

    pub fn name(self) -> &'static str {
        match self {
            Window::Blackman => "blackman",
            Window::Hann => "hann",
            Window::Welch => "welch",
            Window::Rectangular => "rectangular",
        }
    }
}

/// In-place radix-2 FFT of (re, im), length a power of two.
fn fft(re: &mut [f64], im: &mut [f64]) {
    let n = re.len();
    let mut j = 0;
    for i in 1..n {
        let mut bit = n >> 1;
        while j & bit != 0 {
            j ^= bit;
            bit >>= 1;
        }
        j |= bit;
        if i < j {
            re.swap(i, j);
            im.swap(i, j);
        }
    }
    let mut len = 2;
    while len <= n {
        let ang = -2.0 * PI / len as f64;
        for start in (0..n).step_by(len) {
            for k in 0..len / 2 {
                let (s, c) = (ang * k as f64).sin_cos();
                let (a, b) = (start + k, start + k + len / 2);
                let (tr, ti) = (re[b] * c - im[b] * s, re[b] * s + im[b] * c);
                re[b] = re[a] - tr;
                im[b] = im[a] - ti;
                re[a] += tr;
                im[a] += ti;
            }
        }
        len <<= 1;
    }
}

/// `x` less its least-squares line.
pub fn detrend(x: &[f64]) -> Vec<f64> {
    let n = x.len() as f64;
    let tm = (n - 1.0) / 2.0;
    let xm = x.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (t, v) in x.iter().enumerate() {
        let dt = t as f64 - tm;
        sxy += dt * (v - xm);
        sxx += dt * dt;
    }
    let slope = sxy / sxx;
    x.iter()
        .enumerate()
        .map(|(t, v)| v - xm - slope * (t as f64 - tm))
        .collect()
}

/// One-sided periodogram of one segment: |C_k|²/(Σw)², doubled but at 0 and N/2 (eq. 8.6).
pub fn periodogram(segment: &[f64], window: &[f64]) -> Vec<f64> {
    let n = segment.len();
    let mut re: Vec<f64> = detrend(segment)
        .iter()
        .zip(window)
        .map(|(x, w)| x * w)
        .collect();
    let mut im = vec![0.0; n];
    fft(&mut re, &mut im);
    let norm = window.iter().sum::<f64>().powi(2);
    (0..=n / 2)
        .map(|k| {
            let p = (re[k] * re[k] + im[k] * im[k]) / norm;
            if k == 0 || k == n / 2 {
                p
            } else {
                2.0 * p
            }
        })
        .collect()
}

/// The averaged spectra of a series: one row every `HOP` samples from the first full
/// segment on, each the mean of the last (up to) `AVERAGED` periodograms. Returns (the
/// sample count at each row, the rows).
pub fn welch_rows(series: &[f64], window: Window) -> (Vec<u64>, Vec<Vec<f64>>) {
    let w = window.values(SEGMENT);
    let mut grams: Vec<Vec<f64>> = Vec::new();
    let (mut at, mut rows) = (Vec::new(), Vec::new());
    let mut end = SEGMENT;
    while end <= series.len() {
        grams.push(periodogram(&series[end - SEGMENT..end], &w));
        let last = &grams[grams.len().saturating_sub(AVERAGED)..];
        let mean = (0..=SEGMENT / 2)
            .map(|k| last.iter().map(|g| g[k]).sum::<f64>() / last.len() as f64)
            .collect();
        at.push(end as u64);
        rows.push(mean);
        end += HOP;
    }
    (at, rows)
}

/// Frequency of bin k.
pub fn frequency(k: usize) -> f64 {
    k as f64 * RATE / SEGMENT as f64
}

/// The bin nearest frequency f.
fn bin(f: f64) -> usize {
    (f * SEGMENT as f64 / RATE).round() as usize
}

/// The figures of one spectrum.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Figures {
    pub entropy: f64,
    pub peak: f64,
    pub median: f64,
    pub edge: [f64; 3],
    pub bands: [f64; 5],
}

/// Edge fractions of the spectral edge frequencies.
pub const EDGES: [f64; 3] = [0.75, 0.90, 0.95];

pub fn figures(p: &[f64]) -> Figures {
    let top = bin(CUTOFF).min(p.len() - 1);
    let total: f64 = p[..=top].iter().sum();
    let below = |q: f64| {
        let mut acc = 0.0;
        for (k, x) in p[..=top].iter().enumerate() {
            acc += x;
            if acc >= q * total {
                return frequency(k);
            }
        }
        frequency(top)
    };
    let peak = (1..=top).fold(1, |best, k| if p[k] > p[best] { k } else { best });
    let mut bands = [0.0; 5];
    for (b, &(_, lo, hi)) in BANDS.iter().enumerate() {
        let end = if b == BANDS.len() - 1 {
            bin(hi) + 1
        } else {
            bin(hi)
        };
        bands[b] = p[bin(lo)..end.min(top + 1)].iter().sum::<f64>() / total;
    }
    Figures {
        entropy: entropy(&p[bin(1.0)..=bin(47.0)]),
        peak: frequency(peak),
        median: below(0.5),
        edge: EDGES.map(below),
        bands,
    }
}

/// Shannon entropy of `p` normalised to unit sum, over the log of its length (0 to 1).
fn entropy(p: &[f64]) -> f64 {
    let sum: f64 = p.iter().sum();
    let h: f64 = p
        .iter()
        .filter(|&&x| x > 0.0)
        .map(|&x| -(x / sum) * (x / sum).ln())
        .sum();
    h / (p.len() as f64).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The periodogram by the direct DFT, C_k = Σ x_j e^(−2πijk/N), detrended by a
    /// separate least-squares solve (normal equations in t = 0..N−1).
    fn direct(segment: &[f64], w: &[f64]) -> Vec<f64> {
        let n = segment.len();
        let (s0, s1, s2) = (
            n as f64,
            (0..n).map(|t| t as f64).sum::<f64>(),
            (0..n).map(|t| (t * t) as f64).sum::<f64>(),
        );
        let (y0, y1) = (
            segment.iter().sum::<f64>(),
            segment
                .iter()
                .enumerate()
                .map(|(t, y)| t as f64 * y)
                .sum::<f64>(),
        );
        let slope = (s0 * y1 - s1 * y0) / (s0 * s2 - s1 * s1);
        let icpt = (y0 - slope * s1) / s0;
        let x: Vec<f64> = (0..n)
            .map(|t| (segment[t] - icpt - slope * t as f64) * w[t])
            .collect();
        let norm = w.iter().sum::<f64>().powi(2);
        let c = |k: usize| {
            let (mut re, mut im) = (0.0, 0.0);
            for (j, v) in x.iter().enumerate() {
                let a = -2.0 * PI * ((j * k) % n) as f64 / n as f64;
                re += v * a.cos();
                im += v * a.sin();
            }
            re * re + im * im
        };
        (0..=n / 2)
            .map(|k| {
                if k == 0 || k == n / 2 {
                    c(k) / norm
                } else {
                    (c(k) + c(n - k)) / norm
                }
            })
            .collect()
    }

    /// Sines at 10 and 40 Hz in noise (a counter-based normal), over a linear drift.
    fn signal(len: usize) -> Vec<f64> {
        (0..len)
            .map(|t| {
                let s = t as f64 / RATE;
                let (z, _) = super::super::model::normal_pair(11, t as u64);
                -66.0
                    + 0.001 * t as f64
                    + (2.0 * PI * 10.0 * s).sin()
                    + 0.5 * (2.0 * PI * 40.0 * s).sin()
                    + 0.3 * z
            })
            .collect()
    }

    #[test]
    fn welch_equals_the_mean_of_direct_dft_periodograms() {
        let x = signal(4 * SEGMENT);
        for window in [
            Window::Hann,
            Window::Blackman,
            Window::Welch,
            Window::Rectangular,
        ] {
            let (at, rows) = welch_rows(&x, window);
            assert_eq!(at, [1024, 1536, 2048, 2560, 3072, 3584, 4096]);
            let w = window.values(SEGMENT);
            let grams: Vec<Vec<f64>> = at
                .iter()
                .map(|&e| direct(&x[e as usize - SEGMENT..e as usize], &w))
                .collect();
            for k in 0..=SEGMENT / 2 {
                let want = grams.iter().map(|g| g[k]).sum::<f64>() / grams.len() as f64;
                let got = rows.last().unwrap()[k];
                assert!(
                    (got - want).abs() <= 1e-9 * want.abs().max(1e-6),
                    "{window:?} bin {k}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn a_rectangular_periodogram_sums_to_the_mean_square() {
        let x = detrend(&signal(SEGMENT));
        let p = periodogram(&x, &Window::Rectangular.values(SEGMENT));
        let ms = x.iter().map(|v| v * v).sum::<f64>() / SEGMENT as f64;
        assert!((p.iter().sum::<f64>() - ms).abs() < 1e-12 * ms);
    }

    #[test]
    fn sines_in_noise_peak_in_their_bins() {
        let (_, rows) = welch_rows(&signal(6 * SEGMENT), Window::Blackman);
        let p = rows.last().unwrap();
        let f = figures(p);
        assert_eq!(f.peak, frequency(bin(10.0)));
        let second =
            (bin(20.0)..=bin(60.0)).fold(bin(20.0), |b, k| if p[k] > p[b] { k } else { b });
        assert_eq!(second, bin(40.0));
        // 10 Hz is α, 40 Hz γ, with a quarter of its power.
        assert!(
            f.bands[2] > 0.7 && f.bands[4] > 0.15 && f.bands[4] < 0.3,
            "{:?}",
            f.bands
        );
        assert!(
            f.median > 9.0 && f.median < 11.0 && f.edge[2] > 39.0 && f.edge[2] < 41.0,
            "{f:?}"
        );
        assert!(f.entropy > 0.0 && f.entropy < 0.6, "{}", f.entropy);
    }
}
