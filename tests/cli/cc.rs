//! `tessera cc` under mpirun: labels equal a sequential union-find on the same edges at every
//! rank count (generated graphs with many components, a hand-made file of known pieces, graphs
//! that defeat label propagation with their ids shuffled across ranks, in few rounds),
//! statistics that follow from the labels, and one clear error for a bad value.

use crate::common;

use crate::common::{one_clear_error, tessera, test_dir, H5};
use std::collections::HashMap;
use std::path::Path;

const NPS: [usize; 4] = [1, 2, 3, 4];

/// Run `tessera cc` on the CPU, two threads per rank, and open its result file.
fn cc(np: usize, dir: &Path, name: &str, args: &[&str]) -> H5 {
    common::run_cpu(np, dir, "cc", name, 2, args)
}

/// Canonical labels (smallest id of each component) by a sequential union-find.
fn union_find_labels(n: u64, edges: &[(u64, u64)]) -> Vec<u64> {
    let mut parent: Vec<u64> = (0..n).collect();
    fn find(parent: &mut [u64], mut x: u64) -> u64 {
        while parent[x as usize] != x {
            parent[x as usize] = parent[parent[x as usize] as usize];
            x = parent[x as usize];
        }
        x
    }
    for &(u, v) in edges {
        let (a, b) = (find(&mut parent, u), find(&mut parent, v));
        let (low, high) = (a.min(b), a.max(b));
        parent[high as usize] = low;
    }
    (0..n).map(|v| find(&mut parent, v)).collect()
}

/// Edges of an edge-list file written by `tessera generate --write` (or by hand).
fn read_edges(path: &Path) -> Vec<(u64, u64)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut f = l.split_whitespace().map(|x| x.parse::<u64>().unwrap());
            (f.next().unwrap(), f.next().unwrap())
        })
        .collect()
}

/// Check a run's labels and figures against the union-find's.
fn check(h5: &H5, truth: &[u64], what: &str) {
    assert_eq!(h5.ds::<u64>("cc/labels"), truth, "{what}: labels");
    let mut sizes: HashMap<u64, u64> = HashMap::new();
    for &l in truth {
        *sizes.entry(l).or_default() += 1;
    }
    assert_eq!(
        h5.attr::<u64>("cc", "components"),
        sizes.len() as u64,
        "{what}"
    );
    let isolated = sizes.values().filter(|&&s| s == 1).count() as u64;
    assert_eq!(
        h5.attr::<u64>("cc", "isolated_vertices"),
        isolated,
        "{what}"
    );
    let largest = *sizes.values().max().unwrap();
    assert_eq!(h5.ds::<u64>("cc/largest/size")[0], largest, "{what}");
    let hist = h5.ds::<u64>("cc/size_histogram");
    assert_eq!(hist.iter().sum::<u64>(), sizes.len() as u64, "{what}");
    assert_eq!(h5.attr::<u8>("cc", "verified"), 1, "{what}");
}

#[test]
fn labels_equal_a_sequential_union_find_at_every_rank_count() {
    let dir = test_dir("cc_union_find");
    // Sparse G(n, m) (m = 0.6 n: many components of every size), a Watts-Strogatz ring
    // rewired a little (one component, long paths across ranks), and Kronecker (a giant
    // component and isolated vertices).
    let cases: [(&str, &[&str]); 3] = [
        (
            "er",
            &[
                "--generator",
                "erdos-renyi",
                "--vertices",
                "2000",
                "--edges",
                "1200",
            ],
        ),
        (
            "ws",
            &[
                "--generator",
                "watts-strogatz",
                "--vertices",
                "1000",
                "--k",
                "2",
                "--p",
                "0.01",
            ],
        ),
        ("kron", &["--scale", "10"]),
    ];
    for (name, args) in cases {
        let file = dir.join(format!("{name}.el"));
        let mut write = vec![
            "generate", "--device", "cpu", "--output", "made.h5", "--force",
        ];
        write.extend_from_slice(args);
        write.extend(["--write", file.to_str().unwrap()]);
        tessera(1, &write, &dir).assert_ok();
        let made = H5::open(&dir.join("made.h5"));
        let n: u64 = made.attr("graph", "vertices");
        let truth = union_find_labels(n, &read_edges(&file));
        for np in NPS {
            let h5 = cc(np, &dir, &format!("{name}-np{np}"), args);
            check(&h5, &truth, &format!("{name} np {np}"));
        }
    }
}

#[test]
fn known_pieces_give_their_count() {
    let dir = test_dir("cc_pieces");
    // 40 vertices: a path 0-1-...-9 written backwards, a cycle 12..20, a star centred on 35
    // over 21..29, duplicate edges and a self-loop at 30; the rest isolated. Pieces: path,
    // cycle, star (with 35), and 40 - 10 - 9 - 10 = 11 isolated vertices (10, 11, 30..34,
    // 36..39): 14 components.
    let mut edges: Vec<(u64, u64)> = (1..10).rev().map(|v| (v, v - 1)).collect();
    edges.extend((12..20).map(|v| (v, v + 1)));
    edges.push((20, 12));
    edges.extend((21..30).map(|v| (35, v)));
    edges.extend([(3, 2), (30, 30), (35, 21)]);
    let mut text = String::from("# tessera edge list: vertices 40 edges 0\n");
    text = text.replace("edges 0", &format!("edges {}", edges.len()));
    for (u, v) in &edges {
        text.push_str(&format!("{u} {v}\n"));
    }
    let file = dir.join("pieces.el");
    std::fs::write(&file, text).unwrap();
    let truth = union_find_labels(40, &edges);
    for np in NPS {
        let h5 = cc(
            np,
            &dir,
            &format!("pieces-np{np}"),
            &["--input", file.to_str().unwrap()],
        );
        assert_eq!(h5.attr::<u64>("cc", "components"), 14, "np {np}");
        check(&h5, &truth, &format!("pieces np {np}"));
        assert_eq!(
            h5.ds::<u64>("cc/largest/label"),
            [0, 21, 12, 10, 11, 30, 31, 32, 33, 34]
        );
    }
}

/// `--largest 0` lists no components, but the largest one's size is still known and reported
/// (it was reported as 0 with label 0).
#[test]
fn the_largest_component_is_reported_when_none_are_listed() {
    let dir = test_dir("cc_largest_zero");
    // A path of 6 vertices (label 0), a triangle (label 6), one isolated vertex: n = 10.
    let text = "# tessera edge list: vertices 10 edges 8\n0 1\n1 2\n2 3\n3 4\n4 5\n6 7\n7 8\n8 6\n";
    let file = dir.join("g.el");
    std::fs::write(&file, text).unwrap();
    for np in [1, 3] {
        let out = format!("z{np}.h5");
        let args = [
            "cc",
            "--input",
            file.to_str().unwrap(),
            "--largest",
            "0",
            "--output",
            &out,
        ];
        let run = tessera(np, &args, &dir);
        run.assert_ok();
        assert!(
            run.stdout
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>()
                    == ["largest_component:", "6", "(label", "0)"]),
            "np {np}:\n{}",
            run.stdout
        );
        let h5 = H5::open(&dir.join(&out));
        assert_eq!(h5.attr::<u64>("cc", "largest_component"), 6);
        assert_eq!(h5.attr::<u64>("cc", "largest_component_label"), 0);
        assert!(h5.ds::<u64>("cc/largest/size").is_empty());
    }
}

#[test]
fn zero_trials_is_one_clear_error() {
    let dir = test_dir("cc_errors");
    for np in [1, 3] {
        let run = tessera(
            np,
            &["cc", "--scale", "8", "--trials", "0", "--output", "x.h5"],
            &dir,
        );
        one_clear_error(
            &run,
            &["[cc] trials = 0 is out of range: expected at least 1"],
        );
    }
}

/// A small xorshift generator, so the shuffles are the same on every run.
struct Xorshift(u64);

impl Xorshift {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Pieces that defeat min-label propagation, on disjoint vertex ranges of one graph whose ids
/// are then shuffled (so neighbours mostly sit on different ranks): a path of 4096 vertices,
/// a 40 x 40 grid, 300 triangles and pairs, and a giant component (600 vertices, 2400 random
/// edges) with 200 isolated vertices as dust. Returns (n, edges).
fn adversarial_graph() -> (u64, Vec<(u64, u64)>) {
    let mut rng = Xorshift(0x9e37_79b9_7f4a_7c15);
    let mut edges = Vec::new();
    let path = 0..4096u64;
    edges.extend(path.clone().skip(1).map(|v| (v - 1, v)));
    let grid = |r: u64, c: u64| path.end + r * 40 + c;
    for r in 0..40 {
        for c in 0..40 {
            if c + 1 < 40 {
                edges.push((grid(r, c), grid(r, c + 1)));
            }
            if r + 1 < 40 {
                edges.push((grid(r, c), grid(r + 1, c)));
            }
        }
    }
    let small = grid(40, 0);
    for k in 0..300 {
        let v = small + 3 * k;
        edges.push((v, v + 1));
        if k % 2 == 0 {
            edges.extend([(v + 1, v + 2), (v + 2, v)]);
        }
    }
    let giant = small + 900;
    edges.extend((1..600).map(|i| (giant + rng.below(i), giant + i)));
    edges.extend((0..1800).map(|_| (giant + rng.below(600), giant + rng.below(600))));
    let n = giant + 600 + 200;
    // Fisher-Yates: vertex v becomes shuffle[v].
    let mut shuffle: Vec<u64> = (0..n).collect();
    for i in (1..n as usize).rev() {
        shuffle.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let edges = edges
        .into_iter()
        .map(|(u, v)| (shuffle[u as usize], shuffle[v as usize]))
        .collect();
    (n, edges)
}

#[test]
fn graphs_that_defeat_label_propagation_take_few_rounds() {
    let dir = test_dir("cc_adversarial");
    let (n, edges) = adversarial_graph();
    let mut text = format!("# tessera edge list: vertices {n} edges {}\n", edges.len());
    for (u, v) in &edges {
        text.push_str(&format!("{u} {v}\n"));
    }
    let file = dir.join("pieces.el");
    std::fs::write(&file, text).unwrap();
    let truth = union_find_labels(n, &edges);
    // One hop per round would take thousands of rounds on the path; hooking and
    // shortcutting take about log2 of its length.
    let bound = 2 * (64 - n.leading_zeros()) as usize;
    for np in NPS {
        let h5 = cc(
            np,
            &dir,
            &format!("pieces-np{np}"),
            &["--input", file.to_str().unwrap()],
        );
        check(&h5, &truth, &format!("adversarial np {np}"));
        let rounds = h5.ds::<u64>("cc/rounds/changed").len();
        assert!(
            rounds <= bound,
            "np {np}: {rounds} rounds for {n} vertices (at most {bound} expected)"
        );
        if np == 1 {
            assert_eq!(rounds, 1, "one rank has no cut edges");
        }
    }
}

/// Giants joined before the rounds skip the cut edges between them (src/graph/components), so
/// their labels must follow a fall they have no edge to. At 3 ranks (blocks of 64): each rank
/// holds a path (its giant: 1..=63, 64..=127, 128..=191), the paths joined by cut edges; vertex
/// 0, alone on rank 0, hangs on rank 1's giant only. Rank 1's giant falls to 0 (on vertex 0's
/// report: the giant does not read its own cut edges) and rank 0's with it; rank 2's giant
/// reads no cut edge and must still end with label 0. Every rank count gives one component
/// labelled 0.
#[test]
fn joined_giants_follow_a_fall_they_have_no_edge_to() {
    let dir = test_dir("cc_joined_giants");
    let mut edges: Vec<(u64, u64)> = Vec::new();
    for (first, last) in [(1, 63), (64, 127), (128, 191)] {
        edges.extend((first + 1..=last).map(|v| (v - 1, v)));
    }
    for k in 0..10 {
        edges.extend([(1 + 2 * k, 64 + 2 * k), (2 + 2 * k, 128 + 2 * k)]);
        edges.push((65 + 2 * k, 129 + 2 * k));
    }
    edges.push((0, 100));
    let mut text = format!("# tessera edge list: vertices 192 edges {}\n", edges.len());
    for (u, v) in &edges {
        text.push_str(&format!("{u} {v}\n"));
    }
    let file = dir.join("giants.el");
    std::fs::write(&file, text).unwrap();
    let truth = union_find_labels(192, &edges);
    assert!(truth.iter().all(|&l| l == 0), "one component");
    for np in [2, 3, 4] {
        let h5 = cc(
            np,
            &dir,
            &format!("giants-np{np}"),
            &["--input", file.to_str().unwrap()],
        );
        check(&h5, &truth, &format!("joined giants np {np}"));
    }
}

/// Only labels another rank reads travel (src/graph/components, `skip_giants`). At 2 ranks
/// (blocks of 128): each rank holds a path (its giant: 0..=99, 128..=227), the two joined by
/// the edge 50-150; 20 vertices of each hang on the other rank's giant alone (100..=119,
/// 228..=247), and 8 pairs cross the ranks (120 + j with 248 + j). A giant reads none of its
/// cut edges, so of the hanging vertices' labels nobody reads any: round 1 sends the 16 pair
/// ends, round 2 the 8 that took their partner's label, and no more (before, every label a
/// rank holds as a ghost went: 56 and 48). Labels equal the union-find's at every rank count.
#[test]
fn only_the_labels_read_are_sent() {
    let dir = test_dir("cc_labels_read");
    let mut edges: Vec<(u64, u64)> = Vec::new();
    for (first, last) in [(0, 99), (128, 227)] {
        edges.extend((first + 1..=last).map(|v| (v - 1, v)));
    }
    edges.push((50, 150));
    edges.extend((0..20).map(|j| (100 + j, 130 + j)));
    edges.extend((0..20).map(|j| (228 + j, j)));
    edges.extend((0..8).map(|j| (120 + j, 248 + j)));
    let mut text = format!("# tessera edge list: vertices 256 edges {}\n", edges.len());
    for (u, v) in &edges {
        text.push_str(&format!("{u} {v}\n"));
    }
    let file = dir.join("read.el");
    std::fs::write(&file, text).unwrap();
    let truth = union_find_labels(256, &edges);
    for np in NPS {
        let h5 = cc(
            np,
            &dir,
            &format!("read-np{np}"),
            &["--input", file.to_str().unwrap()],
        );
        check(&h5, &truth, &format!("labels read np {np}"));
        if np == 2 {
            assert_eq!(h5.ds::<u64>("cc/rounds/labels_sent"), [16, 8]);
            // The giants' join is timed in parts that add up to no more than it.
            let parts: f64 = ["find", "probe", "skip", "relabel"]
                .iter()
                .map(|p| h5.attr::<f64>("cc", &format!("giants_{p}_seconds")))
                .inspect(|&s| assert!(s > 0.0, "giants parts: {s}"))
                .sum();
            assert!(parts <= h5.attr::<f64>("cc", "giants_seconds"), "{parts}");
        }
    }
}
