//! tessera: irregular graph and lattice workloads on MPI ranks, each computing on its GPU or,
//! where none is present, on its CPU cores.

pub mod comm;
pub mod config;
pub mod device;
pub mod error;
pub mod farm;
pub mod files;
pub mod grain;
pub mod graph;
pub mod harness;
pub mod lanes;
pub mod large_pages;
pub mod lattice;
pub mod mesh;
pub mod output;
pub mod progress;
pub mod report;
pub mod rng;
pub mod signals;
pub mod stats;
pub mod workloads;

// The workloads' modules at the crate's root (`crate::bfs`), as `workloads` declares them.
pub use workloads::*;
