//! The host's clock over the engine's steps (the rows' view, the device set-up, the sweeps,
//! the sums' trip to the host, the reduction over ranks, the release of the buffers): where
//! a run's seconds go beyond the GPU phases (`gpu::Phases`), which time only the kernels.

use std::time::Instant;

/// Steps done so far, each with its seconds, in order.
pub struct Steps {
    started: Instant,
    last: Instant,
    done: Vec<(&'static str, f64)>,
}

impl Steps {
    /// The clock started now.
    pub fn start() -> Steps {
        let now = Instant::now();
        Steps {
            started: now,
            last: now,
            done: Vec::new(),
        }
    }

    /// The seconds since the last mark (or the start), as step `name`.
    pub fn mark(&mut self, name: &'static str) {
        let now = Instant::now();
        self.done.push((name, (now - self.last).as_secs_f64()));
        self.last = now;
    }

    /// Seconds since the start.
    pub fn elapsed(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Seconds of the steps before the first one named `name` (all of them where none is).
    pub fn before(&self, name: &str) -> f64 {
        let until = self.done.iter().position(|d| d.0 == name);
        self.done[..until.unwrap_or(self.done.len())]
            .iter()
            .map(|d| d.1)
            .sum()
    }

    /// (name, seconds) of each step, in order.
    pub fn done(&self) -> &[(&'static str, f64)] {
        &self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_split_the_elapsed_time_in_order() {
        let mut steps = Steps::start();
        steps.mark("first");
        std::thread::sleep(std::time::Duration::from_millis(5));
        steps.mark("second");
        let done = steps.done();
        assert_eq!(
            done.iter().map(|d| d.0).collect::<Vec<_>>(),
            ["first", "second"]
        );
        assert!(done[1].1 >= 0.005);
        assert!(done.iter().map(|d| d.1).sum::<f64>() <= steps.elapsed());
        assert_eq!(steps.before("second"), done[0].1);
        assert_eq!(steps.before("none"), done[0].1 + done[1].1);
    }
}
