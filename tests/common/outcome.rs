//! The parts of a BFS result file that must not depend on the rank count, the partition or
//! the device, read back and compared (tests/cli/bfs.rs, tests/cli/bfs_2d.rs).

use super::{files_ending, seq_depths, seq_nedge, tessera, H5};
use std::collections::BTreeSet;
use std::path::Path;

/// The parts of a result file that must not depend on the rank count.
#[derive(Debug, PartialEq)]
pub struct Outcome {
    pub n: u64,
    pub roots: Vec<u64>,
    pub nedge: Vec<u64>,
    pub num_levels: Vec<u32>,
    /// Row-major [roots, n]
    pub depth: Vec<i32>,
    pub num_input_edges: u64,
    pub num_csr_entries: u64,
    pub edge_checksum: u64,
    pub csr_checksum: u64,
}

impl Outcome {
    pub fn read(path: &Path) -> Outcome {
        let f = H5::open(path);
        let n: u64 = f.attr("bfs", "num_vertices");
        let roots: Vec<u64> = f.ds("bfs/roots");
        let depth: Vec<i32> = f.ds("bfs/depth");
        assert_eq!(
            f.shape("bfs/depth"),
            vec![roots.len(), n as usize],
            "{}: /bfs/depth shape",
            path.display()
        );
        Outcome {
            n,
            nedge: f.ds("bfs/nedge"),
            num_levels: f.ds("bfs/num_levels"),
            depth,
            roots,
            num_input_edges: f.attr("bfs", "num_input_edges"),
            num_csr_entries: f.attr("bfs", "num_csr_entries"),
            edge_checksum: f.attr("bfs", "edge_checksum"),
            csr_checksum: f.attr("bfs", "csr_checksum"),
        }
    }

    pub fn depth_row(&self, i: usize) -> &[i32] {
        &self.depth[i * self.n as usize..(i + 1) * self.n as usize]
    }

    /// Every row's depths, nedge and level count against a sequential BFS of `edges`.
    pub fn check_against_sequential(&self, edges: &[(u64, u64)], what: &str) {
        assert_eq!(
            self.num_input_edges,
            edges.len() as u64,
            "{what}: num_input_edges"
        );
        assert_eq!(
            self.num_csr_entries,
            csr_entries(edges),
            "{what}: num_csr_entries (both directions of each distinct non-loop edge)"
        );
        for (i, &root) in self.roots.iter().enumerate() {
            let expected = seq_depths(self.n, edges, root);
            let got = self.depth_row(i);
            if let Some(v) = (0..self.n as usize).find(|&v| got[v] != expected[v]) {
                panic!(
                    "{what}: root {root} (#{i}): vertex {v} has depth {} but a sequential BFS gives {}",
                    got[v], expected[v]
                );
            }
            assert_eq!(
                self.nedge[i],
                seq_nedge(edges, &expected),
                "{what}: nedge of root {root} (#{i})"
            );
            let max_depth = *expected.iter().max().unwrap();
            assert_eq!(
                self.num_levels[i] as i32,
                max_depth + 1,
                "{what}: num_levels of root {root} (#{i})"
            );
        }
    }
}

/// Directed CSR entries the graph should have: both directions of each distinct edge that is
/// not a self-loop.
pub fn csr_entries(edges: &[(u64, u64)]) -> u64 {
    let distinct: BTreeSet<(u64, u64)> = edges
        .iter()
        .filter(|(u, v)| u != v)
        .map(|&(u, v)| (u.min(v), u.max(v)))
        .collect();
    2 * distinct.len() as u64
}

pub fn assert_same(a: &Outcome, b: &Outcome, what: &str) {
    assert_eq!(a.n, b.n, "{what}: num_vertices");
    assert_eq!(a.roots, b.roots, "{what}: roots");
    assert_eq!(a.nedge, b.nedge, "{what}: nedge");
    assert_eq!(a.num_levels, b.num_levels, "{what}: num_levels");
    assert_eq!(
        a.num_input_edges, b.num_input_edges,
        "{what}: num_input_edges"
    );
    assert_eq!(
        a.num_csr_entries, b.num_csr_entries,
        "{what}: num_csr_entries"
    );
    assert_eq!(a.edge_checksum, b.edge_checksum, "{what}: edge_checksum");
    assert_eq!(a.csr_checksum, b.csr_checksum, "{what}: csr_checksum");
    if let Some(k) = (0..a.depth.len()).find(|&k| a.depth[k] != b.depth[k]) {
        let n = a.n as usize;
        panic!(
            "{what}: depth matrices differ first at root #{} vertex {}: {} vs {}",
            k / n,
            k % n,
            a.depth[k],
            b.depth[k]
        );
    }
    assert_eq!(a, b, "{what}");
}

/// Run `tessera bfs ARGS... --output NAME` at `np` ranks in `dir`; it must exit 0.
pub fn bfs_ok(np: usize, dir: &Path, name: &str, args: &[&str]) -> Outcome {
    let mut all = vec!["bfs"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--output", name]);
    let run = tessera(np, &all, dir);
    run.assert_ok();
    assert!(
        run.stdout.contains(&format!("results: {name}")),
        "{}: no 'results:' line\n{}",
        run.what,
        run.stdout
    );
    assert!(
        files_ending(dir, ".tmp").is_empty(),
        "{}: temporary file left behind",
        run.what
    );
    let out = Outcome::read(&dir.join(name));
    let validated: u8 = H5::open(&dir.join(name)).attr("bfs", "validated");
    let expect_validated = !args.windows(2).any(|w| w == ["--validate", "false"]);
    assert_eq!(
        validated == 1,
        expect_validated,
        "{}: validated attr",
        run.what
    );
    out
}
