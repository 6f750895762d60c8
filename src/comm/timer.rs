//! Per-phase wall-clock timers: named phases accumulate seconds.

use std::time::Instant;

#[derive(Default, Debug, Clone)]
pub struct PhaseTimes {
    phases: Vec<(&'static str, f64)>,
}

impl PhaseTimes {
    /// Run `f`, adding its wall-clock time to `phase`.
    pub fn time<R>(&mut self, phase: &'static str, f: impl FnOnce() -> R) -> R {
        let t = Instant::now();
        let r = f();
        self.add(phase, t.elapsed().as_secs_f64());
        r
    }

    pub fn add(&mut self, phase: &'static str, secs: f64) {
        match self.phases.iter_mut().find(|(p, _)| *p == phase) {
            Some((_, s)) => *s += secs,
            None => self.phases.push((phase, secs)),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        self.phases.iter().copied()
    }
}
