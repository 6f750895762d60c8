//! Graph generators other than Kronecker. Like Kronecker, each one makes edge number e (or
//! the fixed chunk that holds it) a pure function of (seed, e) through the counter-based
//! generator of `crate::rng`, and each rank produces its contiguous range
//! `block_range(M, ranks, rank)` of the global edge list: the graph is the same for every
//! rank count.
//!
//! - `erdos_renyi`: G(n, m), KaGen's chunked hypergeometric splits.
//! - `watts_strogatz`: small world on a ring or a periodic 2D/3D lattice.
//! - `barabasi_albert`: Batagelj-Brandes copy model, communication-free (Sanders & Schulz).
//! - `lattice`: 2D/3D lattices, periodic or open.
//! - `ssca2`: the SSCA#2 v2.2 scalable data generator (noisy R-MAT, weighted, directed).
//! - `watts_alpha`: Watts' α-model (sequential, O(n²k): every rank builds the whole graph).
//! - `eulerian`: Eulerian multigraphs (unions of cycles, triangular lattice, hypercube,
//!   complete graphs of odd order, de Bruijn) for the Euler-circuit workload.

pub mod barabasi_albert;
pub mod erdos_renyi;
mod erdos_renyi_gpu;
pub mod eulerian;
pub mod lattice;
mod portable_math;
pub mod ssca2;
pub mod watts_alpha;
pub mod watts_strogatz;

// Stream purpose tags for `crate::rng::stream_key` (Kronecker uses 1 and 2, roots 3).
const ER_SPLIT: u64 = 0x6765_6e01;
const ER_SLOTS: u64 = 0x6765_6e02;
const WS_REWIRE: u64 = 0x6765_6e03;
const WS_TARGET: u64 = 0x6765_6e04;
const BA_TARGET: u64 = 0x6765_6e05;
const SSCA2_EDGE: u64 = 0x6765_6e06;
const SSCA2_WEIGHT: u64 = 0x6765_6e07;
const SSCA2_SCRAMBLE: u64 = 0x6765_6e08;
const WA_ORDER: u64 = 0x6765_6e09;
const WA_PICK: u64 = 0x6765_6e0a;
const WA_PAIR: u64 = 0x6765_6e0b;

/// A value in [0, n) from 64 random bits (multiply-high; bias below n / 2^64).
#[inline]
fn below(bits: u64, n: u64) -> u64 {
    ((bits as u128 * n as u128) >> 64) as u64
}

/// A uniform value in [0, 1) from the top 53 of 64 random bits.
#[inline]
fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Append `item(first) .. item(first + len - 1)` to `out`, computed in parallel (through
/// `lanes::append`, as the generators with batches of their own).
fn fill<T: Copy + Default + Send>(
    out: &mut Vec<T>,
    first: u64,
    len: u64,
    item: impl Fn(u64) -> T + Sync,
) {
    crate::lanes::append(&crate::lanes::Each(item), first, len, out);
}

#[cfg(test)]
use super::{Edge, EdgeSource};

/// The global edge list of a generator built by `make(ranks, rank)`, after checking that
/// ranks = 1..4 give the same list, each rank's range also read in two uneven pieces.
#[cfg(test)]
fn global_edges<S: EdgeSource>(make: impl Fn(usize, usize) -> S) -> Vec<Edge> {
    let whole = make(1, 0);
    let mut all = Vec::new();
    whole.local_chunk(0, whole.local_len(), &mut all);
    assert_eq!(all.len() as u64, whole.num_edges());
    for ranks in 2..=4 {
        let mut joined = Vec::new();
        for rank in 0..ranks {
            let part = make(ranks, rank);
            let (len, cut) = (part.local_len(), part.local_len() / 3);
            part.local_chunk(0, cut, &mut joined);
            part.local_chunk(cut, len - cut, &mut joined);
        }
        assert!(all == joined, "{ranks} ranks give another edge list");
    }
    all
}

/// `text` from the line starting `from` to the line starting `to`: a kernel file's section.
#[cfg(test)]
fn section(text: &str, from: &str, to: &str) -> String {
    let start = text.find(from).unwrap();
    let end = start + text[start..].find(to).unwrap();
    text[start..end].to_string()
}

/// A kernel's host emulation: `files` (name, text) written to a directory of their own,
/// `NAME.cpp` among them built by g++ and run with `input` on its standard input (through a
/// file: the harnesses write as they read, more than a pipe holds); its standard output.
#[cfg(test)]
fn emulate(name: &str, files: &[(&str, String)], input: &str) -> String {
    use std::process::Command;
    let dir = std::env::temp_dir().join(format!("tessera-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    let exe = dir.join(name);
    let built = Command::new("g++")
        .args(["-O1", "-std=c++17", "-o"])
        .arg(&exe)
        .arg(dir.join(format!("{name}.cpp")))
        .status()
        .expect("this test needs g++ (scripts/test installs it)");
    assert!(built.success());
    let stdin = dir.join("input.txt");
    std::fs::write(&stdin, input).unwrap();
    let out = Command::new(&exe)
        .stdin(std::fs::File::open(&stdin).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success());
    std::fs::remove_dir_all(&dir).unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// Vertex degrees of an edge list, a self-loop counted twice.
#[cfg(test)]
fn degrees(n: u64, edges: &[Edge]) -> Vec<u64> {
    let mut deg = vec![0u64; n as usize];
    for &(u, v) in edges {
        deg[u as usize] += 1;
        deg[v as usize] += 1;
    }
    deg
}
