//! `tessera analyze`: degree distribution, triangles and clustering, sampled path lengths.

pub mod degrees;
pub mod paths;
pub mod triangles;
pub mod triangles_gpu;
