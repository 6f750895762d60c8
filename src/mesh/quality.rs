//! Mesh quality per cell (signed volume, mean ratio η, L2V deformation) and its summary:
//! minimum and mean η, a 20-bin histogram over [0, 1], counts below 0.1/0.2/0.3, inverted
//! cells, the volume range and F = Σ f. Summaries merge exactly (order-free sums), so a
//! distributed mesh's summary equals the whole mesh's.

use super::exact::ExactSum;
use super::geometry;
use super::Mesh;
use rayon::prelude::*;

pub const BINS: usize = 20;

/// Per-cell measures.
#[derive(Debug, Clone, Default)]
pub struct CellQuality {
    pub volume: Vec<f64>,
    pub eta: Vec<f64>,
}

pub fn cell_quality(mesh: &Mesh) -> CellQuality {
    let n = mesh.corners();
    let (volume, eta) = (0..mesh.num_cells())
        .into_par_iter()
        .map(|c| {
            let p = mesh.cell_points(c);
            let v = geometry::volume(&p, n);
            (v, geometry::mean_ratio_of(v, geometry::edge_sum(&p, n), n))
        })
        .unzip();
    CellQuality { volume, eta }
}

/// A quality summary over a set of cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub cells: u64,
    pub min_eta: f64,
    pub eta_sum: ExactSum,
    pub deformation: ExactSum,
    pub histogram: [u64; BINS],
    /// Cells with η below 0.1, 0.2, 0.3.
    pub below: [u64; 3],
    pub inverted: u64,
    pub min_volume: f64,
    pub max_volume: f64,
}

impl Default for Summary {
    fn default() -> Self {
        Summary {
            cells: 0,
            min_eta: f64::INFINITY,
            eta_sum: ExactSum::default(),
            deformation: ExactSum::default(),
            histogram: [0; BINS],
            below: [0; 3],
            inverted: 0,
            min_volume: f64::INFINITY,
            max_volume: f64::NEG_INFINITY,
        }
    }
}

impl Summary {
    /// One cell with volume v, edge sum s and η.
    pub fn of_cell(v: f64, s: f64, eta: f64) -> Summary {
        let mut out = Summary {
            cells: 1,
            min_eta: eta,
            eta_sum: ExactSum::of(eta),
            deformation: ExactSum::of(if v > 0.0 {
                s / (6.0 * v)
            } else {
                f64::INFINITY
            }),
            min_volume: v,
            max_volume: v,
            inverted: u64::from(v <= 0.0),
            ..Summary::default()
        };
        out.histogram[((eta * BINS as f64) as usize).min(BINS - 1)] = 1;
        for (k, t) in [0.1, 0.2, 0.3].into_iter().enumerate() {
            out.below[k] = u64::from(eta < t);
        }
        out
    }

    pub fn merge(mut self, o: &Summary) -> Summary {
        self.cells += o.cells;
        self.min_eta = self.min_eta.min(o.min_eta);
        self.eta_sum = self.eta_sum.plus(o.eta_sum);
        self.deformation = self.deformation.plus(o.deformation);
        for (a, b) in self.histogram.iter_mut().zip(&o.histogram) {
            *a += b;
        }
        for (a, b) in self.below.iter_mut().zip(&o.below) {
            *a += b;
        }
        self.inverted += o.inverted;
        self.min_volume = self.min_volume.min(o.min_volume);
        self.max_volume = self.max_volume.max(o.max_volume);
        self
    }

    pub fn mean_eta(&self) -> f64 {
        self.eta_sum.value() / self.cells.max(1) as f64
    }

    /// The summary as words (f64 as bits), for gathering over ranks.
    pub fn to_words(&self) -> Vec<u64> {
        let mut w = vec![self.cells, self.min_eta.to_bits()];
        w.extend(self.eta_sum.to_words());
        w.extend(self.deformation.to_words());
        w.extend(self.histogram);
        w.extend(self.below);
        w.extend([
            self.inverted,
            self.min_volume.to_bits(),
            self.max_volume.to_bits(),
        ]);
        w
    }

    pub fn from_words(w: &[u64]) -> Summary {
        let h = 6;
        Summary {
            cells: w[0],
            min_eta: f64::from_bits(w[1]),
            eta_sum: ExactSum::from_words([w[2], w[3]]),
            deformation: ExactSum::from_words([w[4], w[5]]),
            histogram: std::array::from_fn(|i| w[h + i]),
            below: std::array::from_fn(|i| w[h + BINS + i]),
            inverted: w[h + BINS + 3],
            min_volume: f64::from_bits(w[h + BINS + 4]),
            max_volume: f64::from_bits(w[h + BINS + 5]),
        }
    }

    pub const WORDS: usize = 6 + BINS + 6;
}

/// The summary of the cells `c` of `mesh` with `counted(c)`.
pub fn summarize(mesh: &Mesh, counted: impl Fn(usize) -> bool + Sync) -> Summary {
    let n = mesh.corners();
    (0..mesh.num_cells())
        .into_par_iter()
        .filter(|&c| counted(c))
        .map(|c| {
            let p = mesh.cell_points(c);
            let (v, s) = (geometry::volume(&p, n), geometry::edge_sum(&p, n));
            Summary::of_cell(v, s, geometry::mean_ratio_of(v, s, n))
        })
        .reduce(Summary::default, |a, b| a.merge(&b))
}
