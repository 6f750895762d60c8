//! Graph algorithms, one module each, with their verifiers.

pub mod bfs;
pub mod bfs2d_cpu;
pub mod bfs2d_gpu;
pub mod bfs_cpu;
pub mod bfs_gpu;
pub mod bfs_gpu_vertices;
pub mod comm_model;
pub mod roots;
pub mod validate;
