//! Progress of long loops: a bar on stderr when it is a terminal (rank 0 only). Per-item log
//! lines at `info` are the callers' own.

use std::io::{IsTerminal, Write};
use std::time::Instant;

pub struct Progress {
    label: &'static str,
    total: usize,
    done: usize,
    started: Instant,
    show: bool,
}

impl Progress {
    pub fn new(is_rank0: bool, label: &'static str, total: usize) -> Self {
        Progress {
            label,
            total,
            done: 0,
            started: Instant::now(),
            show: is_rank0 && std::io::stderr().is_terminal(),
        }
    }

    pub fn step(&mut self) {
        self.done += 1;
        if self.show {
            const WIDTH: usize = 30;
            let filled = WIDTH * self.done / self.total.max(1);
            let elapsed = self.started.elapsed().as_secs_f64();
            let left = elapsed / self.done as f64 * (self.total - self.done) as f64;
            eprint!(
                "\r{} [{}{}] {}/{} {:.1}s left ",
                self.label,
                "#".repeat(filled),
                " ".repeat(WIDTH - filled),
                self.done,
                self.total,
                left
            );
            let _ = std::io::stderr().flush();
        }
    }

    pub fn finish(&self) {
        if self.show {
            eprintln!();
        }
    }
}
