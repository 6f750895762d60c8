//! tessera: irregular graph and lattice workloads on MPI ranks, each computing on its GPU or,
//! where none is present, on its CPU cores.

pub mod analyze;
pub mod bfs;
pub mod cc;
pub mod comm;
pub mod config;
pub mod device;
pub mod error;
pub mod euler;
pub mod farm;
pub mod generate;
pub mod graph;
pub mod harness;
pub mod langford;
pub mod lattice;
pub mod output;
pub mod percolation;
pub mod progress;
pub mod report;
pub mod rng;
pub mod signals;
pub mod spin;
pub mod stats;
pub mod workloads;
