//! Per-level GPU seconds of each batch, logged where `TESSERA_BC_LEVELS=1` (a measurement
//! switch, docs/decks.md): each level's size, its forward seconds (clear, expand or discover,
//! σ) and its backward seconds (δ), beside the batch's seconds on the host's clock, so that a
//! level the GPU waits on, or host time between the kernels, shows.

use std::time::Instant;

pub struct LevelTrace {
    on: bool,
    started: Instant,
    sizes: Vec<u32>,
    forward: Vec<f64>,
    backward: Vec<f64>,
}

impl LevelTrace {
    /// On where the environment asks for it.
    pub fn from_env() -> LevelTrace {
        LevelTrace {
            on: std::env::var("TESSERA_BC_LEVELS").is_ok_and(|v| v == "1"),
            started: Instant::now(),
            sizes: Vec::new(),
            forward: Vec::new(),
            backward: Vec::new(),
        }
    }

    /// A batch starts: the lists emptied, the clock restarted.
    pub fn begin(&mut self) {
        self.started = Instant::now();
        self.sizes.clear();
        self.forward.clear();
        self.backward.clear();
    }

    /// Forward level `d` (made of `size` vertices) took `seconds` more on the GPU.
    pub fn forward(&mut self, d: usize, size: u32, seconds: f64) {
        if self.forward.len() <= d {
            self.forward.resize(d + 1, 0.0);
            self.sizes.resize(d + 1, 0);
        }
        self.forward[d] += seconds;
        self.sizes[d] = size;
    }

    /// Backward level `d` took `seconds` more on the GPU.
    pub fn backward(&mut self, d: usize, seconds: f64) {
        if self.backward.len() <= d {
            self.backward.resize(d + 1, 0.0);
        }
        self.backward[d] += seconds;
    }

    /// Log batch `b`'s levels (where on).
    pub fn log(&self, b: usize) {
        if !self.on {
            return;
        }
        let ms = |xs: &[f64]| {
            xs.iter()
                .map(|x| format!("{:.2}", x * 1e3))
                .collect::<Vec<_>>()
        };
        let gpu: f64 = self.forward.iter().chain(&self.backward).sum();
        log::info!(
            "betweenness batch {b}: {:.3} s on the host's clock, {gpu:.3} s in the GPU's levels; level sizes {:?}; forward ms {:?}; backward ms {:?}",
            self.started.elapsed().as_secs_f64(),
            self.sizes,
            ms(&self.forward),
            ms(&self.backward)
        );
    }
}
