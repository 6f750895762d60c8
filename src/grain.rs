//! The grain of a rank's parallel loops over sites, vertices or rows.
//!
//! A rayon loop called from the rank's main thread (which is not one of the pool's workers)
//! is handed to a worker, and the main thread sleeps until it is done: a futex wake and two
//! context switches, tens of microseconds and far more on a loaded node. A loop whose items
//! all fit one task is never split and runs on the calling thread instead, so small lattices
//! and graphs pay nothing (a 4x4 Swendsen-Wang sweep took 300 µs before, 2026-12-05).

/// Fewest sites (vertices, edges) one task of a parallel loop takes.
pub const MIN_ITEMS: usize = 4096;

/// `MIN_ITEMS` in rows of `l` sites.
pub fn min_rows(l: usize) -> usize {
    MIN_ITEMS.div_ceil(l.max(1))
}
