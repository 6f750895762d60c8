//! `tessera bc` and `tessera ssca2` under mpirun: betweenness equal to a sequential Brandes
//! written here (and to closed forms: paths, a star, the karate club, the SSCA#2 torus
//! check; `scripts/plot bc` reading it), bit-identical for np = 1..4 and both distributions;
//! SSCA#2 kernels 2 and 3 equal
//! to a sequential scan and a depth-limited search; bad parameters refused in one line.

use crate::common::{self, one_clear_error, test_dir, write_file, H5};
use std::collections::VecDeque;
use std::path::Path;

/// Sequential Brandes over arcs (parallel arcs as distinct paths), from `sources`: BC over
/// ordered pairs.
fn brandes(n: usize, arcs: &[(usize, usize)], sources: &[usize]) -> Vec<f64> {
    let mut out = vec![Vec::new(); n];
    for &(u, v) in arcs {
        out[u].push(v);
    }
    let mut bc = vec![0.0; n];
    for &s in sources {
        let mut dist = vec![usize::MAX; n];
        let mut sigma = vec![0.0f64; n];
        let mut order = Vec::new();
        let mut queue = VecDeque::from([s]);
        dist[s] = 0;
        sigma[s] = 1.0;
        while let Some(v) = queue.pop_front() {
            order.push(v);
            for &w in &out[v] {
                if dist[w] == usize::MAX {
                    dist[w] = dist[v] + 1;
                    queue.push_back(w);
                }
                if dist[w] == dist[v] + 1 {
                    sigma[w] += sigma[v];
                }
            }
        }
        let mut delta = vec![0.0; n];
        for &w in order.iter().rev() {
            for &x in &out[w] {
                if dist[x] == dist[w] + 1 {
                    delta[w] += sigma[w] / sigma[x] * (1.0 + delta[x]);
                }
            }
            if w != s {
                bc[w] += delta[w];
            }
        }
    }
    bc
}

/// The arcs of edge tuples: both ways unless `directed`, loops dropped, parallel tuples
/// merged unless `parallel`.
fn arcs_of(edges: &[(usize, usize)], directed: bool, parallel: bool) -> Vec<(usize, usize)> {
    let mut arcs: Vec<(usize, usize)> = edges
        .iter()
        .filter(|(u, v)| u != v)
        .flat_map(|&(u, v)| {
            let back = (!directed).then_some((v, u));
            std::iter::once((u, v)).chain(back)
        })
        .collect();
    if !parallel {
        arcs.sort_unstable();
        arcs.dedup();
    }
    arcs
}

const KARATE: &str = "0:1,2,3,4,5,6,7,8,10,11,12,13,17,19,21,31 1:2,3,7,13,17,19,21,30 \
    2:3,7,8,9,13,27,28,32 3:7,12,13 4:6,10 5:6,10,16 6:16 8:30,32,33 9:33 13:33 14:32,33 \
    15:32,33 18:32,33 19:33 20:32,33 22:32,33 23:25,27,29,32,33 24:25,27,31 25:31 26:29,33 \
    27:33 28:31,33 29:32,33 30:32,33 31:32,33 32:33";

/// Disjoint pieces, each with its first vertex: a path P_10, a star of 6 leaves, Zachary's
/// karate club, a pair with a parallel edge and a loop beside a triangle, an isolated vertex.
fn hand_made() -> (usize, Vec<(usize, usize)>, [usize; 4]) {
    let (path, star, karate, rest) = (0, 10, 17, 51);
    let mut edges: Vec<(usize, usize)> = (0..9).map(|i| (path + i, path + i + 1)).collect();
    edges.extend((1..=6).map(|i| (star, star + i)));
    for group in KARATE.split_whitespace() {
        let (u, vs) = group.split_once(':').unwrap();
        for v in vs.split(',') {
            edges.push((
                karate + u.parse::<usize>().unwrap(),
                karate + v.parse::<usize>().unwrap(),
            ));
        }
    }
    // A square 51-52-53-54 with 51-52 three times (so 51 reaches 53 by 3 paths counted
    // apart, 2 merged), a loop at 52, and 55 isolated.
    edges.extend([
        (51, 52),
        (52, 53),
        (53, 54),
        (54, 51),
        (51, 52),
        (52, 51),
        (52, 52),
    ]);
    (56, edges, [path, star, karate, rest])
}

fn edge_list_text(n: usize, edges: &[(usize, usize)]) -> String {
    let mut text = format!("# tessera vertices {n}\n");
    for (u, v) in edges {
        text.push_str(&format!("{u} {v}\n"));
    }
    text
}

fn run(np: usize, dir: &Path, workload: &str, name: &str, args: &[&str]) -> H5 {
    common::run_cpu(np, dir, workload, name, 1, args)
}

fn assert_close(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (v, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-10 * w.abs().max(1.0),
            "{what}: vertex {v}: {g} vs {w}"
        );
    }
}

#[test]
fn bc_equals_sequential_brandes_and_closed_forms_at_every_rank_count() {
    let dir = test_dir("bc_hand_made");
    let (n, edges, [path, star, karate, _]) = hand_made();
    let file = write_file(&dir, "pieces.el", &edge_list_text(n, &edges));
    let all: Vec<usize> = (0..n).collect();
    let want = brandes(n, &arcs_of(&edges, false, false), &all);
    // Closed forms: P_n 2i(n-1-i); a star's centre k(k-1); karate 0 and 33.
    for i in 0..10 {
        assert_eq!(want[path + i], (2 * i * (9 - i)) as f64);
    }
    assert_eq!(want[star], 30.0);
    assert!((want[karate] - 462.142857).abs() < 1e-6);
    assert!((want[karate + 33] - 321.103175).abs() < 1e-6);
    let base = ["--input", &file, "--exact", "--write-vertex-values"];
    let mut first: Option<Vec<f64>> = None;
    for np in 1..=4 {
        for replicate in ["full", "distributed"] {
            let mut args = base.to_vec();
            // Batches of 7 and 64 lanes: the batch never changes a bit.
            let batch = if np % 2 == 0 { "7" } else { "64" };
            args.extend(["--replicate", replicate, "--batch", batch]);
            let h5 = run(np, &dir, "bc", &format!("np{np}-{replicate}"), &args);
            let got = h5.ds::<f64>("bc/bc");
            assert_close(&got, &want, &format!("np {np} {replicate}"));
            assert_eq!(h5.attr::<u64>("bc", "sources"), n as u64);
            // Only a partitioned graph's sweeps exchange, and only between ranks.
            let sent = h5.attr::<u64>("bc", "bytes_sent_per_rank");
            assert_eq!(
                sent > 0,
                np > 1 && replicate == "distributed",
                "np {np} {replicate}: {sent} bytes sent"
            );
            match &first {
                None => first = Some(got),
                Some(f) => assert!(
                    f.iter().zip(&got).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "np {np} {replicate} differs in some bit from np 1 full"
                ),
            }
        }
    }
    // Parallel edges as distinct paths, and arcs as the tuples give them.
    let parallel = brandes(n, &arcs_of(&edges, false, true), &all);
    assert_ne!(parallel[52], want[52], "the parallel edges count");
    // (name, flags, directed, parallel, np, replicate)
    type Variant<'a> = (&'a str, &'a [&'a str], bool, bool, usize, &'a str);
    let variants: [Variant; 2] = [
        (
            "parallel",
            &["--parallel-paths"],
            false,
            true,
            3,
            "distributed",
        ),
        ("directed", &["--directed"], true, false, 2, "full"),
    ];
    for (name, flags, directed, parallel, np, replicate) in variants {
        let want = brandes(n, &arcs_of(&edges, directed, parallel), &all);
        let mut args = base.to_vec();
        args.extend(flags);
        args.extend(["--replicate", replicate]);
        let h5 = run(np, &dir, "bc", &format!("{name}-np{np}"), &args);
        assert_close(&h5.ds::<f64>("bc/bc"), &want, &format!("{name} np {np}"));
    }
}

#[test]
fn bc_from_sampled_sources_matches_brandes_from_the_same_sources() {
    let dir = test_dir("bc_sampled");
    let edges: Vec<(usize, usize)> = common::kronecker_edges(7, 8, 3)
        .into_iter()
        .map(|(u, v)| (u as usize, v as usize))
        .collect();
    let args = [
        "--scale",
        "7",
        "--edgefactor",
        "8",
        "--seed",
        "3",
        "--sources",
        "20",
    ];
    let mut top: Option<(Vec<u64>, Vec<f64>)> = None;
    for (np, replicate) in [
        (1, "full"),
        (2, "distributed"),
        (3, "full"),
        (4, "distributed"),
    ] {
        let mut a = args.to_vec();
        a.extend(["--replicate", replicate, "--write-vertex-values"]);
        let h5 = run(np, &dir, "bc", &format!("np{np}"), &a);
        let sources: Vec<usize> = h5
            .ds::<u64>("bc/bc_sources")
            .iter()
            .map(|&s| s as usize)
            .collect();
        assert_eq!(sources.len(), 20);
        let want = brandes(128, &arcs_of(&edges, false, false), &sources);
        assert_close(&h5.ds::<f64>("bc/bc"), &want, &format!("np {np}"));
        let got = (h5.ds::<u64>("bc/bc_top_vertex"), h5.ds::<f64>("bc/bc_top"));
        assert_eq!(got.0.len(), 100);
        match &top {
            None => top = Some(got),
            Some(t) => assert_eq!(t, &got, "np {np}: top 100 differ"),
        }
    }
}

/// The SSCA#2 torus check: on the 2^⌈S/2⌉ × 2^⌊S/2⌋ torus, every vertex has
/// 2^(3S/2-1) - 2^S + 1 (S even), 3·2^((3S-5)/2) - 2^S + 1 (S odd).
#[test]
fn torus_check_every_vertex_has_the_closed_form() {
    let dir = test_dir("bc_torus");
    for (s, want) in [(4u32, 17.0), (5, 65.0), (6, 193.0), (7, 641.0), (8, 1793.0)] {
        let dims = format!("{},{}", 1u64 << s.div_ceil(2), 1u64 << (s / 2));
        let np = [2, 3, 4][s as usize % 3];
        let replicate = ["full", "distributed"][s as usize % 2];
        let args = [
            "--generator",
            "lattice",
            "--dims",
            &dims,
            "--exact",
            "--replicate",
            replicate,
            "--write-vertex-values",
        ];
        let h5 = run(np, &dir, "bc", &format!("s{s}"), &args);
        let bc = h5.ds::<f64>("bc/bc");
        assert_eq!(bc.len(), 1 << s);
        assert!(bc.iter().all(|&b| b == want), "S = {s}: {:?}", &bc[..4]);
    }
    // `scripts/plot bc` reads every vertex's value of two of them and draws one PNG.
    let plot = plot_bc(&dir, &["s4.h5", "s5.h5", "-o", "torus.png"]);
    assert!(plot.ok(), "{}\n{}", plot.what, plot.stderr);
    for (file, n, want) in [("s4.h5", 16, 17), ("s5.h5", 32, 65)] {
        let line = format!("{file}: {n} values, max {want}, median of the positive {want}");
        assert!(plot.stdout.contains(&line), "{line:?} in {}", plot.stdout);
    }
    let png = std::fs::read(dir.join("torus.png")).expect("the plot's PNG");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 1000);
    // A file that is no HDF5 result: one line naming it, exit 1.
    write_file(&dir, "junk.h5", "not hdf5\n");
    let bad = plot_bc(&dir, &["junk.h5", "-o", "junk.png"]);
    assert!(!bad.ok() && !dir.join("junk.png").exists());
    let lines: Vec<&str> = bad
        .stderr
        .lines()
        .filter(|l| l.contains("junk.h5"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", bad.stderr);
    assert!(lines[0].contains("not an HDF5 file"), "{}", lines[0]);
}

/// `scripts/plot bc ARGS` run in `dir`.
fn plot_bc(dir: &Path, args: &[&str]) -> common::Run {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/plot");
    let mut cmd = std::process::Command::new(script);
    cmd.arg("bc")
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let limit = std::time::Duration::from_secs(300);
    common::run_with_timeout(cmd, &format!("scripts/plot bc {}", args.join(" ")), limit)
}

/// An SSCA#2 graph's weighted arcs from `tessera generate --write` (u v w lines).
fn read_weighted(path: &Path) -> Vec<(usize, usize, u64)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let w: Vec<u64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            (w[0] as usize, w[1] as usize, w[2])
        })
        .collect()
}

/// Vertices within `hops` out-hops of `from`.
fn within_hops(out: &[Vec<usize>], from: usize, hops: usize) -> Vec<bool> {
    let mut depth = vec![usize::MAX; out.len()];
    depth[from] = 0;
    let mut queue = VecDeque::from([from]);
    while let Some(v) = queue.pop_front() {
        for &w in &out[v] {
            if depth[w] == usize::MAX && depth[v] < hops {
                depth[w] = depth[v] + 1;
                queue.push_back(w);
            }
        }
    }
    depth.iter().map(|&d| d != usize::MAX).collect()
}

#[test]
fn ssca2_kernels_equal_a_sequential_scan_search_and_brandes() {
    let dir = test_dir("ssca2_kernels");
    let scale = 8;
    let file = dir.join("g.el");
    let gen = [
        "generate",
        "--device",
        "cpu",
        "--generator",
        "ssca2",
        "--scale",
        "8",
        "--seed",
        "5",
        "--output",
        "gen.h5",
        "--write",
        file.to_str().unwrap(),
    ];
    common::tessera(2, &gen, &dir).assert_ok();
    let arcs = read_weighted(&file);
    assert_eq!(arcs.len(), 8 << scale);
    let n = 1 << scale;
    // Kernel 2: every arc of the largest weight, by (start, end).
    let max = arcs.iter().map(|a| a.2).max().unwrap();
    let mut heavy: Vec<(usize, usize)> = arcs
        .iter()
        .filter(|a| a.2 == max)
        .map(|a| (a.0, a.1))
        .collect();
    heavy.sort_unstable();
    // Kernel 3: the start and the vertices within 3 out-hops of the end.
    let mut out = vec![Vec::new(); n];
    for &(u, v, _) in &arcs {
        out[u].push(v);
    }
    let sizes: Vec<u64> = heavy
        .iter()
        .map(|&(u, v)| {
            let mut reached = within_hops(&out, v, 3);
            reached[u] = true;
            reached.iter().filter(|&&r| r).count() as u64
        })
        .collect();
    let kept: Vec<(usize, usize)> = arcs
        .iter()
        .filter(|a| a.2 % 8 != 0)
        .map(|a| (a.0, a.1))
        .collect();
    let mut first: Option<Vec<f64>> = None;
    for np in 1..=4 {
        let replicate = ["full", "distributed"][np % 2];
        let args = [
            "--scale",
            "8",
            "--seed",
            "5",
            "--k4approx",
            "5",
            "--replicate",
            replicate,
            "--write-vertex-values",
        ];
        let h5 = run(np, &dir, "ssca2", &format!("np{np}"), &args);
        let starts = h5.ds::<u64>("ssca2/max_weight_start");
        let ends = h5.ds::<u64>("ssca2/max_weight_end");
        let got: Vec<(usize, usize)> = starts
            .iter()
            .zip(&ends)
            .map(|(&u, &v)| (u as usize, v as usize))
            .collect();
        assert_eq!(got, heavy, "np {np}: kernel 2");
        assert_eq!(h5.attr::<u64>("ssca2", "max_weight"), max);
        assert_eq!(
            h5.ds::<u64>("ssca2/subgraph_vertices"),
            sizes,
            "np {np}: kernel 3"
        );
        let sources: Vec<usize> = h5
            .ds::<u64>("ssca2/bc_sources")
            .iter()
            .map(|&s| s as usize)
            .collect();
        assert_eq!(sources.len(), 32);
        assert!(sources.iter().all(|&s| !out[s].is_empty()));
        let bc = h5.ds::<f64>("ssca2/bc");
        assert_close(
            &bc,
            &brandes(n, &kept, &sources),
            &format!("np {np}: kernel 4"),
        );
        match &first {
            None => first = Some(bc),
            Some(f) => assert!(f.iter().zip(&bc).all(|(a, b)| a.to_bits() == b.to_bits())),
        }
    }
}

#[test]
fn bad_parameters_give_one_clear_line() {
    let dir = test_dir("bc_bad");
    let negative = write_file(&dir, "negative.el", "0 1 2\n1 2 -3\n");
    let tiny = write_file(&dir, "tiny.el", "0 1\n1 2\n");
    let cases: [(&str, Vec<&str>, Vec<&str>); 3] = [
        (
            "ssca2",
            vec!["--scale", "6", "--k4approx", "7"],
            vec!["k4approx", "SCALE = 6"],
        ),
        (
            "bc",
            vec!["--input", &tiny, "--sources", "4"],
            vec!["sources = 4", "3 vertices"],
        ),
        (
            "bc",
            vec!["--input", &negative],
            vec!["negative.el:2", "non-negative"],
        ),
    ];
    for (i, (workload, args, needles)) in cases.into_iter().enumerate() {
        let out = format!("bad{i}.h5");
        let mut all = vec![workload, "--device", "cpu", "--output", &out];
        all.extend(args);
        let run = common::tessera(1 + i % 2, &all, &dir);
        one_clear_error(&run, &needles);
    }
}

/// Long (scripts/test-long): exact BC of a Kronecker SCALE 10 graph against the sequential
/// Brandes, and the same bits at np 1..4 in both distributions and every batch size tried.
#[test]
#[ignore]
fn exact_bc_of_a_kronecker_graph_at_every_rank_count_and_batch() {
    let dir = test_dir("bc_exact_kron");
    let edges: Vec<(usize, usize)> = common::kronecker_edges(10, 16, 2)
        .into_iter()
        .map(|(u, v)| (u as usize, v as usize))
        .collect();
    let all: Vec<usize> = (0..1024).collect();
    let want = brandes(1024, &arcs_of(&edges, false, false), &all);
    let mut first: Option<Vec<f64>> = None;
    for np in 1..=4 {
        for (replicate, batch) in [("full", "64"), ("distributed", "13"), ("distributed", "1")] {
            let args = [
                "--scale",
                "10",
                "--seed",
                "2",
                "--exact",
                "--write-vertex-values",
                "--replicate",
                replicate,
                "--batch",
                batch,
            ];
            let h5 = run(
                np,
                &dir,
                "bc",
                &format!("np{np}-{replicate}-{batch}"),
                &args,
            );
            let got = h5.ds::<f64>("bc/bc");
            assert_close(&got, &want, &format!("np {np} {replicate} batch {batch}"));
            match &first {
                None => first = Some(got),
                Some(f) => assert!(f.iter().zip(&got).all(|(a, b)| a.to_bits() == b.to_bits())),
            }
        }
    }
}
