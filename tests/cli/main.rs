//! Every test that runs the `tessera` binary (most of them under `mpirun -np 1..4`), one
//! module per area, built as one test binary: one link instead of one per area, and one pool
//! of test threads over all of them.

#[path = "../common/mod.rs"]
mod common;

mod analyze;
mod bc;
mod bfs;
mod bfs_2d;
mod bfs_validate;
mod cc;
mod cortex;
mod euler;
mod generate;
mod harness;
mod langford;
mod mesh;
mod percolation;
mod spin;
