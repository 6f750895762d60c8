//! End-to-end tests of `tessera bfs` / `tessera run` under `mpirun` at 1 to 4 ranks: results
//! identical across rank counts and equal to a sequential BFS, both graph file formats, the
//! three direction modes, clear one-line errors for bad input and sizes that cannot fit, the
//! Graph500 statistics block on stdout, and the HDF5 result file. The harness's own checks
//! sit apart at the end, to move to tests/cli/harness.rs.

use crate::common::outcome::*;
use crate::common::*;
use std::collections::BTreeSet;
use std::path::Path;

/// Rank counts every multi-rank test covers.
const NPS: [usize; 4] = [1, 2, 3, 4];

/// The graph500 statistics fields every result file carries as /bfs attributes.
const STAT_FIELDS: [&str; 34] = [
    "SCALE",
    "edgefactor",
    "NBFS",
    "graph_generation",
    "num_mpi_processes",
    "construction_time",
    "bfs  min_time",
    "bfs  firstquartile_time",
    "bfs  median_time",
    "bfs  thirdquartile_time",
    "bfs  max_time",
    "bfs  mean_time",
    "bfs  stddev_time",
    "min_nedge",
    "firstquartile_nedge",
    "median_nedge",
    "thirdquartile_nedge",
    "max_nedge",
    "mean_nedge",
    "stddev_nedge",
    "bfs  min_TEPS",
    "bfs  firstquartile_TEPS",
    "bfs  median_TEPS",
    "bfs  thirdquartile_TEPS",
    "bfs  max_TEPS",
    "bfs  harmonic_mean_TEPS",
    "bfs  harmonic_stddev_TEPS",
    "bfs  min_validate",
    "bfs  firstquartile_validate",
    "bfs  median_validate",
    "bfs  thirdquartile_validate",
    "bfs  max_validate",
    "bfs  mean_validate",
    "bfs  stddev_validate",
];

/// Vertices with at least one edge other than a self-loop (the eligible roots).
fn eligible_roots(edges: &[(u64, u64)]) -> BTreeSet<u64> {
    edges
        .iter()
        .filter(|(u, v)| u != v)
        .flat_map(|&(u, v)| [u, v])
        .collect()
}

/// Edge tuples of a plain edge-list file, as the test reads it (independently of tessera).
fn read_edge_list(path: &Path) -> Vec<(u64, u64)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|line| {
            let data = line.split('#').next().unwrap().trim();
            (!data.is_empty()).then(|| {
                let mut it = data.split_whitespace().map(|w| w.parse::<u64>().unwrap());
                (it.next().unwrap(), it.next().unwrap())
            })
        })
        .collect()
}

/// Edge tuples (0-based) and N of a Matrix Market coordinate file.
fn read_mtx(path: &Path) -> (u64, Vec<(u64, u64)>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('%'));
    let size: Vec<u64> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    let edges: Vec<(u64, u64)> = lines
        .map(|l| {
            let mut it = l.split_whitespace().map(|w| w.parse::<u64>().unwrap());
            (it.next().unwrap() - 1, it.next().unwrap() - 1)
        })
        .collect();
    assert_eq!(edges.len() as u64, size[2], "{}: nnz", path.display());
    (size[0].max(size[1]), edges)
}

// ---------------------------------------------------------------------------------------
// a. Kronecker graph: every rank count validates and gives the same answers.

#[test]
fn kronecker_results_identical_across_rank_counts() {
    let dir = test_dir("kronecker_identical");
    let args = [
        "--scale",
        "10",
        "--edgefactor",
        "16",
        "--roots",
        "16",
        "--seed",
        "7",
        "--write-depths",
        "true",
    ];
    let outcomes: Vec<Outcome> = NPS
        .iter()
        .map(|&np| bfs_ok(np, &dir, &format!("np{np}.h5"), &args))
        .collect();
    let first = &outcomes[0];
    assert_eq!(first.n, 1 << 10);
    assert_eq!(first.roots.len(), 16);
    assert_eq!(
        first.roots.iter().collect::<BTreeSet<_>>().len(),
        16,
        "roots must be distinct"
    );
    assert!(first.nedge.iter().all(|&m| m > 0));
    for (np, o) in NPS.iter().zip(&outcomes).skip(1) {
        assert_same(first, o, &format!("np 1 vs np {np}"));
    }
}

// ---------------------------------------------------------------------------------------
// b. Kronecker graph: the depths are those of a sequential BFS on the same edge list.

#[test]
fn kronecker_depths_match_sequential_bfs() {
    let dir = test_dir("kronecker_sequential");
    let (scale, edgefactor, seed) = (11, 16, 5);
    let out = bfs_ok(
        3,
        &dir,
        "kron.h5",
        &[
            "--scale",
            &scale.to_string(),
            "--edgefactor",
            &edgefactor.to_string(),
            "--roots",
            "12",
            "--seed",
            &seed.to_string(),
            "--write-depths",
            "true",
        ],
    );
    let edges = kronecker_edges(scale, edgefactor, seed);
    assert_eq!(out.n, 1 << scale);
    assert_eq!(out.roots.len(), 12);
    let eligible = eligible_roots(&edges);
    assert!(
        out.roots.iter().all(|r| eligible.contains(r)),
        "every root must have an edge other than a self-loop"
    );
    out.check_against_sequential(&edges, "SCALE 11 at np 3");
}

// ---------------------------------------------------------------------------------------
// c. A hand-made graph file with several components, isolated ids, self-loops, duplicates
//    and comments; the same graph as Matrix Market.

#[test]
fn components_file_matches_sequential_bfs_at_every_rank_count() {
    let dir = test_dir("components");
    let edges_path = repo_file("inputs/tests/components.edges");
    let mtx_path = repo_file("inputs/tests/components.mtx");
    let edges = read_edge_list(&edges_path);
    let (mtx_n, mtx_edges) = read_mtx(&mtx_path);
    assert_eq!(
        mtx_edges, edges,
        "components.mtx must hold the tuples of components.edges"
    );
    let eligible = eligible_roots(&edges);

    let mut first: Option<Outcome> = None;
    for np in NPS {
        let common = ["--roots", "64", "--seed", "3", "--write-depths", "true"];
        let list = bfs_ok(
            np,
            &dir,
            &format!("list{np}.h5"),
            &[&["--input", edges_path.to_str().unwrap()], &common[..]].concat(),
        );
        let what = format!("components.edges at np {np}");
        assert_eq!(list.n, 251, "{what}: N is the largest id plus one");
        assert_eq!(mtx_n, list.n);
        // Fewer eligible vertices than requested roots: every one of them is searched.
        let roots: BTreeSet<u64> = list.roots.iter().copied().collect();
        assert_eq!(
            roots, eligible,
            "{what}: the roots are all eligible vertices"
        );
        assert_eq!(list.roots.len(), eligible.len(), "{what}: distinct roots");
        list.check_against_sequential(&edges, &what);

        let mtx = bfs_ok(
            np,
            &dir,
            &format!("mtx{np}.h5"),
            &[&["--input", mtx_path.to_str().unwrap()], &common[..]].concat(),
        );
        assert_same(
            &list,
            &mtx,
            &format!("edge list vs Matrix Market at np {np}"),
        );

        match &first {
            None => first = Some(list),
            Some(f) => assert_same(f, &list, &format!("components: np 1 vs np {np}")),
        }
    }
}

// ---------------------------------------------------------------------------------------
// d. The three direction modes give the same depths.

#[test]
fn all_modes_give_the_same_depths() {
    let dir = test_dir("modes");
    let kron = [
        "--scale",
        "10",
        "--edgefactor",
        "16",
        "--roots",
        "8",
        "--seed",
        "9",
        "--write-depths",
        "true",
    ];
    let components = repo_file("inputs/tests/components.edges");
    let file = [
        "--input",
        components.to_str().unwrap(),
        "--roots",
        "64",
        "--write-depths",
        "true",
    ];
    let mut inspected = Vec::new();
    for (graph, args) in [("kron", &kron[..]), ("components", &file[..])] {
        let mut outcomes = Vec::new();
        for mode in ["hybrid", "top-down", "bottom-up"] {
            let name = format!("{graph}-{mode}.h5");
            let out = bfs_ok(2, &dir, &name, &[args, &["--mode", mode]].concat());
            let f = H5::open(&dir.join(&name));
            let direction: Vec<u8> = f.ds("bfs/per_level/direction");
            let edges_inspected: Vec<u64> = f.ds("bfs/per_level/edges_inspected");
            assert!(direction.iter().all(|&d| d <= 1), "{name}: direction codes");
            match mode {
                "top-down" => assert!(direction.iter().all(|&d| d == 0), "{name}: {direction:?}"),
                "bottom-up" => assert!(direction.iter().all(|&d| d == 1), "{name}: {direction:?}"),
                _ => {}
            }
            if graph == "kron" {
                inspected.push((mode, edges_inspected.iter().sum::<u64>(), direction));
            }
            outcomes.push((mode, out));
        }
        for (mode, out) in &outcomes[1..] {
            assert_same(&outcomes[0].1, out, &format!("{graph}: hybrid vs {mode}"));
        }
    }
    // On a Kronecker graph the hybrid switches to bottom-up for the big middle levels and
    // inspects fewer edges than top-down alone.
    let (hybrid, top_down) = (&inspected[0], &inspected[1]);
    assert!(
        hybrid.2.contains(&0) && hybrid.2.contains(&1),
        "hybrid should use both directions: {:?}",
        hybrid.2
    );
    assert!(
        hybrid.1 < top_down.1,
        "hybrid inspected {} edges, top-down {}",
        hybrid.1,
        top_down.1
    );
}

// ---------------------------------------------------------------------------------------
// e. Bad input: one clear line naming the file and the key or line, a non-zero exit, no hang.
#[test]
fn malformed_edge_line_near_the_end_is_reported_once() {
    let dir = test_dir("bad_edge_line");
    // 400 good lines (with comments and a blank line), then the bad one, then two more good
    // lines: at every rank count the bad line falls in the last rank's byte range.
    let mut text = String::from("# generated by tests/cli/bfs.rs\n\n");
    for i in 0..400u64 {
        text.push_str(&format!("{i} {}\n", (i * 37 + 1) % 400));
        if i % 100 == 50 {
            text.push_str("# a comment\n");
        }
    }
    let bad_offset = text.len() as u64;
    let bad_line = text.lines().count() as u64 + 1;
    text.push_str("17 x9\n");
    text.push_str("3 4\n5 6\n");
    let file = write_file(&dir, "bad.edges", &text);
    for np in NPS {
        let owner = (0..np)
            .find(|&r| tessera::graph::block_range(text.len() as u64, np, r).contains(&bad_offset))
            .unwrap();
        assert_eq!(
            owner,
            np - 1,
            "test design: the last rank should read the bad line"
        );
        let run = tessera(np, &["bfs", "--input", &file, "--output", "never.h5"], &dir);
        let line = one_clear_error(
            &run,
            &[
                &format!("{file}:{bad_line}:"),
                "\"17 x9\"",
                "expected 'u v'",
            ],
        );
        // Found by one rank, printed once: the ranks agree on it before any collective.
        assert!(line.starts_with("tessera: error: "), "np {np}: {line}");
        assert!(files_ending(&dir, ".h5").is_empty() && files_ending(&dir, ".tmp").is_empty());
    }
}

#[test]
fn missing_graph_file_is_reported() {
    let dir = test_dir("missing_graph_file");
    let file = dir.join("no-such-graph.edges");
    let file = file.to_str().unwrap();
    for np in NPS {
        let run = tessera(np, &["bfs", "--input", file], &dir);
        // Every rank fails to open the file; the line is printed once.
        one_clear_error(&run, &["tessera: error: ", file, "cannot open: "]);
    }
}

/// Sizes a flag can name that cannot fit are refused before any edge or search buffer exists:
/// one line and exit status 1, before any phase, at one rank and at an odd count.
#[test]
fn too_large_sizes_are_refused_within_seconds() {
    let dir = test_dir("bfs_too_large");
    let cases: [(&[&str], &[&str]); 2] = [
        // SCALE 40: some 2^40 vertices and 2^44 edges (the graph builder's check).
        (
            &["--scale", "40"],
            &["does not fit", "of host memory", "largest SCALE"],
        ),
        // The depth matrix of 65536 searches over 2^24 vertices: 4 TiB on rank 0.
        (
            &[
                "--scale",
                "24",
                "--roots",
                "65536",
                "--write-depths",
                "true",
            ],
            &["depth matrix", "does not fit", "roots fit"],
        ),
    ];
    for np in [1, 3] {
        for (flags, needles) in cases {
            let mut args = vec!["bfs", "--output", "never.h5"];
            args.extend_from_slice(flags);
            let run = tessera(np, &args, &dir);
            one_clear_error(&run, needles);
            assert_eq!(run.status.code(), Some(1), "{}: exit status", run.what);
            // Refused before any phase ended (the harness logs "PHASE took S s"); no timing
            // is asserted, as the machine may be loaded.
            assert!(
                !run.stderr.contains(" took "),
                "{}: {}",
                run.what,
                run.stderr
            );
        }
    }
    assert!(files_ending(&dir, ".h5").is_empty() && files_ending(&dir, ".tmp").is_empty());
}

// ---------------------------------------------------------------------------------------
// f. The statistics block on stdout: the reference's lines byte for byte (value at column
//    33, `!` before the harmonic mean), then tessera's own figures with their units.

#[test]
fn statistics_block_keeps_the_reference_layout() {
    let dir = test_dir("bfs_stdout");
    let run = tessera(
        2,
        &["bfs", "--scale", "7", "--roots", "4", "--output", "out.h5"],
        &dir,
    );
    run.assert_ok();
    let lines: Vec<&str> = run.stdout.lines().collect();
    let first = lines
        .iter()
        .position(|l| l.starts_with("SCALE:"))
        .unwrap_or_else(|| panic!("no SCALE line\n{}", run.stdout));
    let block = &lines[first..first + STAT_FIELDS.len()];
    let f = H5::open(&dir.join("out.h5"));
    for (line, field) in block.iter().zip(STAT_FIELDS) {
        let label = format!("{field}:");
        let head = if field == "bfs  harmonic_mean_TEPS" {
            format!("{label:<29}!  ")
        } else {
            format!("{label:<32}")
        };
        assert!(
            line.starts_with(&head),
            "{line:?} is not laid out as {head:?}"
        );
        let text = &line[head.len()..];
        assert!(!text.contains(' '), "{line:?}: one value, no unit");
        let stored: f64 = f.attr("bfs", field);
        let shown: f64 = text.parse().unwrap();
        assert!(
            (shown - stored).abs() <= 1e-5 * stored.abs(),
            "{field}: shown {shown}, stored {stored}"
        );
    }
    assert_eq!(block[0], format!("{:<32}7", "SCALE:"));
    assert_eq!(block[2], format!("{:<32}4", "NBFS:"));
    assert_eq!(block[4], format!("{:<32}2", "num_mpi_processes:"));
    // Then tessera's lines, `name: value unit`, as scripts/bench reads them.
    let rest = &lines[first + STAT_FIELDS.len()..];
    let value_of = |name: &str| -> (String, String) {
        let line = rest
            .iter()
            .find(|l| l.starts_with(&format!("{name}:")))
            .unwrap_or_else(|| panic!("no {name} line after the block\n{}", run.stdout));
        let mut words = line[name.len() + 1..].split_whitespace();
        let value = words.next().unwrap().to_string();
        (value, words.collect::<Vec<_>>().join(" "))
    };
    let (teps, unit) = value_of("harmonic_mean_TEPS_with_copy_to_host");
    assert_eq!(unit, "TEPS");
    let stored: f64 = f.attr("bfs", "harmonic_mean_TEPS_with_copy_to_host");
    assert!((teps.parse::<f64>().unwrap() - stored).abs() <= 1e-5 * stored);
    for name in ["peak_rss_max_rank_bytes", "csr_bytes_max_rank"] {
        let (value, unit) = value_of(name);
        assert_eq!(unit, "bytes", "{name}");
        assert_eq!(value.parse::<u64>().unwrap(), f.attr::<u64>("bfs", name));
    }
    assert!(rest.contains(&"results: out.h5"), "{}", run.stdout);
}

// ---------------------------------------------------------------------------------------
// g. The HDF5 result file read back.

/// Leading number of a `timestamp()` string ("1700000000.123 (unix seconds, UTC)").
fn unix_seconds(stamp: &str) -> f64 {
    stamp
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not a timestamp: {stamp:?}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// Everything a validated run's file must hold, for `np` ranks and `nbfs` searches.
fn check_result_file(path: &Path, np: usize, nbfs: usize, validated: bool) {
    let f = H5::open(path);
    let what = path.display().to_string();

    // Provenance.
    assert_eq!(f.attr_str("/", "program"), "tessera");
    assert_eq!(f.attr_str("/", "version"), env!("CARGO_PKG_VERSION"));
    assert!(!f.attr_str("/", "git_revision").is_empty());
    assert!(f.attr_str("/", "command_line").contains("tessera"));
    assert_eq!(f.attr::<u64>("/", "ranks"), np as u64, "{what}: ranks");
    assert!(f.attr::<u64>("/", "threads_per_rank") >= 1);
    let hosts = f.attr_str("/", "hostnames");
    let hosts: Vec<&str> = hosts.split(',').collect();
    assert_eq!(hosts.len(), np, "{what}: one host name per rank: {hosts:?}");
    assert!(hosts.iter().all(|h| !h.trim().is_empty()), "{hosts:?}");
    assert!(f.attr_str("/", "device").starts_with("cpu"));
    let (start, end) = (
        unix_seconds(&f.attr_str("/", "start_time")),
        unix_seconds(&f.attr_str("/", "end_time")),
    );
    assert!(start > 1.5e9 && end >= start, "{what}: times {start} {end}");

    // Statistics block.
    let names = f.attr_names("bfs");
    for field in STAT_FIELDS
        .iter()
        .chain(&["num_vertices", "num_input_edges", "num_csr_entries"])
        .chain(&["edge_checksum", "csr_checksum", "validated"])
    {
        assert!(
            names.iter().any(|n| n == field),
            "{what}: /bfs has no {field:?}"
        );
    }
    let stat = |name: &str| f.attr::<f64>("bfs", name);
    assert_eq!(stat("NBFS"), nbfs as f64);
    assert_eq!(stat("num_mpi_processes"), np as f64);
    assert!(stat("construction_time") > 0.0);
    assert!(stat("bfs  harmonic_mean_TEPS") > 0.0);
    assert_eq!(f.attr::<u8>("bfs", "validated"), u8::from(validated));
    assert_eq!(f.attr_str("bfs", "construction_device"), "cpu");
    // The graph's own group, as every graph workload writes it, describes the same graph.
    assert_eq!(
        f.attr::<u64>("graph", "csr_checksum"),
        f.attr::<u64>("bfs", "csr_checksum")
    );
    assert_eq!(
        f.attr::<u64>("graph", "vertices"),
        f.attr::<u64>("bfs", "num_vertices")
    );
    let phases = f.attr_names("phases");
    assert!(
        phases.iter().any(|p| p == "graph"),
        "{what}: /phases {phases:?}"
    );

    // Per-root datasets.
    let roots: Vec<u64> = f.ds("bfs/roots");
    let time: Vec<f64> = f.ds("bfs/time");
    let nedge: Vec<u64> = f.ds("bfs/nedge");
    let teps: Vec<f64> = f.ds("bfs/teps");
    let validate_time: Vec<f64> = f.ds("bfs/validate_time");
    let num_levels: Vec<u32> = f.ds("bfs/num_levels");
    for (name, len) in [
        ("roots", roots.len()),
        ("time", time.len()),
        ("nedge", nedge.len()),
        ("teps", teps.len()),
        ("validate_time", validate_time.len()),
        ("num_levels", num_levels.len()),
    ] {
        assert_eq!(len, nbfs, "{what}: /bfs/{name} has one entry per root");
    }
    for i in 0..nbfs {
        assert!(time[i] > 0.0);
        assert!(
            close(teps[i], nedge[i] as f64 / time[i]),
            "{what}: teps[{i}] = {} but nedge/time = {}",
            teps[i],
            nedge[i] as f64 / time[i]
        );
        if validated {
            assert!(validate_time[i] >= 0.0, "{what}: validate_time[{i}]");
        } else {
            assert_eq!(validate_time[i], -1.0, "{what}: validate_time[{i}]");
        }
    }
    let max = |xs: &[f64]| xs.iter().copied().fold(f64::MIN, f64::max);
    let min = |xs: &[f64]| xs.iter().copied().fold(f64::MAX, f64::min);
    assert!(close(stat("bfs  max_time"), max(&time)));
    assert!(close(stat("bfs  min_time"), min(&time)));
    let nedge_f: Vec<f64> = nedge.iter().map(|&m| m as f64).collect();
    assert!(close(stat("max_nedge"), max(&nedge_f)));
    assert!(close(stat("min_nedge"), min(&nedge_f)));
    let mean_per_edge = time
        .iter()
        .zip(&nedge)
        .map(|(t, &m)| t / m as f64)
        .sum::<f64>()
        / nbfs as f64;
    assert!(
        close(stat("bfs  harmonic_mean_TEPS"), 1.0 / mean_per_edge),
        "{what}: harmonic mean TEPS"
    );

    // Per-level rows: one per level of each root, in order, starting from the root alone.
    let root_index: Vec<u32> = f.ds("bfs/per_level/root_index");
    let level: Vec<u32> = f.ds("bfs/per_level/level");
    let frontier_vertices: Vec<u64> = f.ds("bfs/per_level/frontier_vertices");
    let rows = root_index.len();
    assert_eq!(
        rows as u64,
        num_levels.iter().map(|&l| l as u64).sum::<u64>()
    );
    for name in [
        "direction",
        "frontier_vertices",
        "frontier_edges",
        "edges_inspected",
        "time_local",
        "time_exchange",
        "time_reduce",
        "bytes_exchanged",
    ] {
        assert_eq!(
            f.shape(&format!("bfs/per_level/{name}")),
            vec![rows],
            "{what}: per_level/{name}"
        );
    }
    let expected_rows: Vec<(u32, u32)> = num_levels
        .iter()
        .enumerate()
        .flat_map(|(i, &k)| (0..k).map(move |l| (i as u32, l)))
        .collect();
    let got_rows: Vec<(u32, u32)> = root_index
        .iter()
        .copied()
        .zip(level.iter().copied())
        .collect();
    assert_eq!(
        got_rows, expected_rows,
        "{what}: per_level (root_index, level)"
    );
    for (r, &(_, l)) in got_rows.iter().enumerate() {
        if l == 0 {
            assert_eq!(frontier_vertices[r], 1, "{what}: first level of row {r}");
        }
    }

    // Exchanges: none on one rank; a bottom-up level sends every rank's bitmap (a block of
    // vertices rounded up to 64, 8 bytes a word) to every other rank.
    let direction: Vec<u8> = f.ds("bfs/per_level/direction");
    let bytes: Vec<u64> = f.ds("bfs/per_level/bytes_exchanged");
    let n: u64 = f.attr("bfs", "num_vertices");
    let words = n.div_ceil(np as u64).div_ceil(64);
    let p = np as u64;
    for (r, (&d, &b)) in direction.iter().zip(&bytes).enumerate() {
        if np == 1 {
            assert_eq!(b, 0, "{what}: row {r}: bytes exchanged on one rank");
        } else if d == 1 {
            assert_eq!(
                b,
                p * (p - 1) * 8 * words,
                "{what}: row {r}: bottom-up bytes"
            );
        }
    }
    let transport = f.attr_str("bfs", "transport");
    assert_eq!(transport, if np == 1 { "none" } else { "mpi" }, "{what}");

    // With depths: level k's frontier holds exactly the vertices at depth k.
    if f.has("bfs/depth") {
        let n: u64 = f.attr("bfs", "num_vertices");
        let depth: Vec<i32> = f.ds("bfs/depth");
        assert_eq!(f.shape("bfs/depth"), vec![nbfs, n as usize]);
        for (r, &(i, l)) in got_rows.iter().enumerate() {
            let row = &depth[i as usize * n as usize..(i as usize + 1) * n as usize];
            let at_level = row.iter().filter(|&&d| d == l as i32).count() as u64;
            assert_eq!(
                frontier_vertices[r], at_level,
                "{what}: root #{i} level {l}: frontier size vs depth array"
            );
            if l == 0 {
                assert_eq!(row[roots[i as usize] as usize], 0, "{what}: root depth");
            }
        }
    }

    let phases = f.attr_names("bfs/construction_phases");
    assert!(!phases.is_empty(), "{what}: no construction phases");
}

#[test]
fn hdf5_result_file_from_a_deck() {
    let dir = test_dir("hdf5_deck");
    let deck_text = r#"# tessera test deck
[run]
output = "from_deck.h5"
seed = 11
threads = 1

[graph]
scale = 9
edgefactor = 8

[bfs]
roots = 12
write_depths = true
"#;
    let deck = write_file(&dir, "deck.toml", deck_text);
    let np = 3;
    let run = tessera(np, &["run", &deck], &dir);
    run.assert_ok();
    let path = dir.join("from_deck.h5");
    assert!(
        path.exists(),
        "{}: no from_deck.h5\n{}",
        run.what,
        run.stdout
    );
    assert!(
        files_ending(&dir, ".tmp").is_empty(),
        "temporary file left behind"
    );
    check_result_file(&path, np, 12, true);
    let f = H5::open(&path);
    assert_eq!(
        f.attr_str("/", "deck"),
        deck_text,
        "deck attr is the deck's text"
    );
    let command = f.attr_str("/", "command_line");
    assert!(
        command.contains(" run ") && command.contains(&deck),
        "{command}"
    );
    assert_eq!(f.attr::<u64>("/", "threads_per_rank"), 1);
    assert_eq!(f.attr::<f64>("bfs", "SCALE"), 9.0);
    assert_eq!(f.attr::<f64>("bfs", "edgefactor"), 8.0);
    assert_eq!(f.attr::<u64>("bfs", "num_vertices"), 512);
    assert_eq!(f.attr::<u64>("bfs", "num_input_edges"), 8 * 512);
    // The same deck with a flag overriding it.
    let run = tessera(
        np,
        &["run", &deck, "--roots", "5", "--output", "override.h5"],
        &dir,
    );
    run.assert_ok();
    check_result_file(&dir.join("override.h5"), np, 5, true);
    assert!(files_ending(&dir, ".tmp").is_empty());
}

#[test]
fn hdf5_result_file_without_validation_and_default_name() {
    let dir = test_dir("hdf5_flags");
    let np = 2;
    let run = tessera(
        np,
        &[
            "bfs",
            "--scale",
            "8",
            "--roots",
            "8",
            "--validate",
            "false",
            "--write-depths",
            "true",
        ],
        &dir,
    );
    run.assert_ok();
    // No --output and no deck: tessera.h5 in the working directory.
    let path = dir.join("tessera.h5");
    assert!(path.exists(), "{}\n{}", run.what, run.stdout);
    assert!(files_ending(&dir, ".tmp").is_empty());
    check_result_file(&path, np, 8, false);
    let f = H5::open(&path);
    assert_eq!(f.attr_str("/", "deck"), "", "no deck: empty deck attr");
    // Depths written without validation still match a sequential BFS.
    let out = Outcome::read(&path);
    out.check_against_sequential(&kronecker_edges(8, 16, 1), "SCALE 8, default seed");
}

#[test]
fn a_graph_with_nothing_to_search_is_a_clear_error() {
    let dir = test_dir("nothing_to_search");
    let file = dir.join("loops.el");
    std::fs::write(&file, "0 0\n1 1\n2 2\n").unwrap();
    for np in NPS {
        let run = tessera(
            np,
            &[
                "bfs",
                "--input",
                file.to_str().unwrap(),
                "--output",
                "never.h5",
            ],
            &dir,
        );
        one_clear_error(&run, &["nothing to search"]);
    }
}

/// SIGTERM during the searches (as a preemptible queue sends it): the search in flight ends,
/// every rank stops, one line says so, the ranks exit with 143 and leave no result file.
#[test]
fn a_signal_ends_the_searches_cleanly() {
    use std::io::{BufRead, BufReader};
    let dir = test_dir("bfs_signal");
    let mut child = mpirun_command()
        .args(["-np", "2", "--oversubscribe"])
        .arg(tessera_bin())
        .args([
            "bfs", "--scale", "15", "--roots", "4096", "--device", "cpu", "--output", "never.h5",
        ])
        .current_dir(&dir)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start mpirun");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let first_search = line.contains("root 1/4096");
        seen.push(line);
        if first_search {
            break;
        }
    }
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    seen.extend(lines.map(|l| l.unwrap()));
    let status = child.wait().unwrap();
    let stderr = seen.join("\n");
    // Each rank exits with 143; mpirun, signalled itself, reports its own non-zero status.
    assert!(!status.success(), "{stderr}");
    let errors: Vec<&String> = seen.iter().filter(|l| l.starts_with("tessera:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("interrupted by a signal"), "{stderr}");
    assert!(files_ending(&dir, ".h5").is_empty() && files_ending(&dir, ".tmp").is_empty());
}
