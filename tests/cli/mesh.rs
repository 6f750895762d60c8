//! `tessera mesh` under mpirun: a generated mesh written as VTKHDF (one piece per rank) and
//! read back unchanged;
//! smoothing identical at np = 1..4 with the rules kept (fixed nodes bitwise still, no
//! inverted cell, the minimum η never falls, F never rises for l2v); partitions identical
//! for every rank count, each node in one part within 1.02 N/k, the edge cut recounted here;
//! malformed input as one error line.

use crate::common::{self, one_clear_error, open_rw_unlocked, tessera, test_dir, write_file, H5};
use hdf5_metno::types::FixedAscii;
use std::path::Path;

fn mesh_run(np: usize, dir: &Path, name: &str, args: &[&str]) -> H5 {
    common::run_cpu(np, dir, "mesh", name, 1, args)
}

fn signed_volume(p: &[f64], c: &[i64]) -> f64 {
    let at = |k: usize, d: usize| p[3 * c[k] as usize + d];
    let e: Vec<[f64; 3]> = (1..4)
        .map(|k| [0, 1, 2].map(|d| at(k, d) - at(0, d)))
        .collect();
    (e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1])
        - e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0])
        + e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]))
        / 6.0
}

/// The whole mesh from a file's pieces (one per rank): each node's global id in file order,
/// and the connectivity numbering the whole mesh's nodes (each piece's numbers its own).
fn whole_numbering(h5: &H5) -> (Vec<u64>, Vec<i64>) {
    let ids: Vec<u64> = h5.ds("VTKHDF/PointData/global_id");
    let points: Vec<i64> = h5.ds("VTKHDF/NumberOfPoints");
    let cells: Vec<i64> = h5.ds("VTKHDF/NumberOfCells");
    let conn: Vec<i64> = h5.ds("VTKHDF/Connectivity");
    let (mut first, mut at, mut whole) = (0, 0, Vec::new());
    for (&np, &nc) in points.iter().zip(&cells) {
        let end = at + 4 * nc as usize;
        whole.extend(
            conn[at..end]
                .iter()
                .map(|&v| ids[first + v as usize] as i64),
        );
        (first, at) = (first + np as usize, end);
    }
    (ids, whole)
}

/// A node dataset of `width` items per node, in the whole mesh's node order (a node in
/// several pieces must carry the same items in each).
fn by_node<T: hdf5_metno::H5Type + Copy + PartialEq + std::fmt::Debug>(
    h5: &H5,
    name: &str,
    width: usize,
) -> Vec<T> {
    let (ids, _) = whole_numbering(h5);
    let data: Vec<T> = h5.ds(name);
    let n = *ids.iter().max().unwrap() as usize + 1;
    let mut out: Vec<Option<T>> = vec![None; n * width];
    for (i, &g) in ids.iter().enumerate() {
        for d in 0..width {
            let slot = &mut out[g as usize * width + d];
            assert!(
                slot.is_none_or(|v| v == data[i * width + d]),
                "{name}: node {g} differs between pieces"
            );
            *slot = Some(data[i * width + d]);
        }
    }
    out.into_iter()
        .map(|v| v.expect("every node in a piece"))
        .collect()
}

#[test]
fn mesh_generate_writes_vtkhdf_and_reads_back() {
    let dir = test_dir("mesh_generate");
    let g = mesh_run(
        1,
        &dir,
        "g",
        &["generate", "box", "3", "2", "4", "--perturb", "bar2"],
    );
    let ty: FixedAscii<16> = g.attr("VTKHDF", "Type");
    assert_eq!(ty.as_str(), "UnstructuredGrid");
    let points: Vec<f64> = g.ds("VTKHDF/Points");
    let conn: Vec<i64> = g.ds("VTKHDF/Connectivity");
    assert_eq!(g.ds::<i64>("VTKHDF/NumberOfPoints"), vec![4 * 3 * 5]);
    assert_eq!(g.ds::<i64>("VTKHDF/NumberOfCells"), vec![6 * 24]);
    assert_eq!(g.ds::<i64>("VTKHDF/Offsets").last(), Some(&(4 * 6 * 24)));
    let volume: Vec<f64> = g.ds("VTKHDF/CellData/volume");
    let mut total = 0.0;
    for (c, cell) in conn.chunks(4).enumerate() {
        let v = signed_volume(&points, cell);
        assert!(
            v > 0.0 && (v - volume[c]).abs() < 1e-14,
            "cell {c}: {v} vs {}",
            volume[c]
        );
        total += v;
    }
    assert!(
        (total - 1.0).abs() < 1e-12,
        "the bar keeps the box's volume: {total}"
    );
    // Reading the written mesh back gives the same mesh (no iteration moves nothing).
    let r = mesh_run(1, &dir, "r", &["smooth", "g.h5", "--iterations", "0"]);
    assert_eq!(
        r.ds::<f64>("VTKHDF/Points")
            .iter()
            .map(|v| v.to_bits())
            .collect::<Vec<_>>(),
        points.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    assert_eq!(r.ds::<i64>("VTKHDF/Connectivity"), conn);
    assert_eq!(
        r.ds::<u8>("VTKHDF/PointData/fixed"),
        g.ds::<u8>("VTKHDF/PointData/fixed")
    );
    // Three ranks write three pieces; read back, they are the one mesh again.
    let g3 = mesh_run(
        3,
        &dir,
        "g3",
        &["generate", "box", "3", "2", "4", "--perturb", "bar2"],
    );
    assert_eq!(g3.ds::<i64>("VTKHDF/NumberOfCells").len(), 3);
    assert_eq!(whole_numbering(&g3).1, conn);
    let r3 = mesh_run(1, &dir, "r3", &["smooth", "g3.h5", "--iterations", "0"]);
    assert_eq!(r3.ds::<f64>("VTKHDF/Points"), points);
    assert_eq!(r3.ds::<i64>("VTKHDF/Connectivity"), conn);
    // The same mesh as TetGen .node/.ele (1-based, a comment), read in parts by 3 ranks.
    let mut node = format!("{} 3 0 0\n", points.len() / 3);
    for (i, p) in points.chunks(3).enumerate() {
        node += &format!("{} {} {} {}\n# node {}\n", i + 1, p[0], p[1], p[2], i + 1);
    }
    let mut ele = format!("{} 4 0\n", conn.len() / 4);
    for (c, q) in conn.chunks(4).enumerate() {
        ele += &format!(
            "{} {} {} {} {}\n",
            c + 1,
            q[0] + 1,
            q[1] + 1,
            q[2] + 1,
            q[3] + 1
        );
    }
    write_file(&dir, "parts.node", &node);
    write_file(&dir, "parts.ele", &ele);
    let p3 = mesh_run(3, &dir, "p3", &["smooth", "parts.ele", "--iterations", "0"]);
    assert_eq!(by_node::<f64>(&p3, "VTKHDF/Points", 3), points);
    // The pieces hold each rank's cells: the same cells, in another order.
    let sorted = |c: Vec<i64>| {
        let mut cells: Vec<&[i64]> = c.chunks(4).collect();
        cells.sort_unstable();
        cells.concat()
    };
    assert_eq!(sorted(whole_numbering(&p3).1), sorted(conn.clone()));
    // Malformed input: one line naming the file, the line and what was expected (read by
    // 2 ranks: the error of the rank that holds the line).
    write_file(
        &dir,
        "bad.node",
        "4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n",
    );
    write_file(&dir, "bad.ele", "1 4 0\n1 1 2 3 7\n");
    let run = tessera(
        2,
        &["mesh", "smooth", "bad.ele", "--output", "bad.h5"],
        &dir,
    );
    one_clear_error(&run, &["bad.ele:2", "node 7 out of range", "expected 1..4"]);
}

/// A smoothing run as the tests compare it: the final points' bits (the whole mesh's, by
/// node) and the history's F, min η and inverted columns.
type Smoothed = (Vec<u64>, Vec<f64>, Vec<f64>, Vec<u64>);

/// History columns and final points (the whole mesh's) of a smoothing run.
fn smoothed(h5: &H5) -> Smoothed {
    let bits = by_node::<f64>(h5, "VTKHDF/Points", 3)
        .iter()
        .map(|v| v.to_bits())
        .collect();
    (
        bits,
        h5.ds("mesh/history/deformation"),
        h5.ds("mesh/history/min_eta"),
        h5.ds("mesh/history/inverted"),
    )
}

fn check_rules(h5: &H5, l2v: bool) {
    let (_, f, min_eta, inverted) = smoothed(h5);
    let f0: f64 = h5.attr("mesh/quality/before", "deformation");
    let eta0: f64 = h5.attr("mesh/quality/before", "min_eta");
    assert!(inverted.iter().all(|&i| i == 0));
    let (mut fp, mut ep) = (f0, eta0);
    for (&fi, &ei) in f.iter().zip(&min_eta) {
        assert!(ei >= ep, "min eta fell {ep} -> {ei}");
        assert!(!l2v || fi <= fp, "F rose {fp} -> {fi}");
        (fp, ep) = (fi, ei);
    }
    let fixed: Vec<u8> = h5.ds("VTKHDF/PointData/fixed");
    let moved: Vec<f64> = h5.ds("VTKHDF/PointData/displacement");
    for (i, _) in fixed.iter().enumerate().filter(|(_, &f)| f == 1) {
        assert!(
            moved[3 * i..3 * i + 3].iter().all(|&d| d.to_bits() == 0),
            "fixed node {i} moved"
        );
    }
}

/// The perturbed bar of 3 x 3 x 8 cubes the smoothing tests share.
const BAR: [&str; 8] = [
    "box",
    "3",
    "3",
    "8",
    "--extent",
    "1,1,3",
    "--perturb",
    "bar3",
];

/// A smoother's name, its flags and the rank counts it runs at.
type Case<'a> = (&'a str, &'a [&'a str], &'a [usize]);

/// Smooths the bar by each case at each of its rank counts: every run keeps the rules and
/// gives the same mesh as the case's first; returns each case's mesh.
fn smooth_cases(dir: &Path, cases: &[Case]) -> Vec<Smoothed> {
    let mut firsts = Vec::new();
    for &(name, flags, nps) in cases {
        let mut first = None;
        for &np in nps {
            let mut args = vec!["smooth"];
            args.extend(BAR);
            args.extend(flags);
            let h5 = mesh_run(np, dir, &format!("{name}{np}"), &args);
            check_rules(&h5, name.starts_with("l2v"));
            let result = smoothed(&h5);
            match &first {
                None => first = Some(result),
                Some(one) => assert!(*one == result, "{name}: np {np} differs from np {}", nps[0]),
            }
        }
        firsts.push(first.unwrap());
    }
    firsts
}

const L2V_BLOCK: &[&str] = &[
    "--method",
    "l2v",
    "--preconditioner",
    "block",
    "--iterations",
    "12",
];
const OPT_COLOUR: &[&str] = &["--method", "opt-colour", "--iterations", "3"];
const SMART: &[&str] = &["--method", "laplace", "--smart", "--iterations", "8"];
const LAPLACE: &[&str] = &["--method", "laplace", "--iterations", "8"];

#[test]
fn mesh_smooth_same_at_every_rank_count() {
    let dir = test_dir("mesh_smooth");
    let cases: [Case; 4] = [
        ("l2v", L2V_BLOCK, &[1, 2, 3, 4]),
        ("opt", OPT_COLOUR, &[1, 3]),
        ("smart", SMART, &[1, 2]),
        ("laplace", LAPLACE, &[1, 4]),
    ];
    let firsts = smooth_cases(&dir, &cases);
    // A generated mesh is made layer by layer on the ranks; a file is read whole by every
    // rank and split by the partitioner: the other road, the same smoothed mesh.
    let mut args = vec!["generate"];
    args.extend(BAR);
    mesh_run(1, &dir, "bar", &args);
    for (np, (name, flags, _)) in [(2, &cases[0]), (3, &cases[1])] {
        let mut args = vec!["smooth", "bar.h5"];
        args.extend(*flags);
        let h5 = mesh_run(np, &dir, &format!("{name}-file{np}"), &args);
        let same = smoothed(&h5) == firsts[if *name == "l2v" { 0 } else { 1 }];
        assert!(same, "{name}: the file at np {np} differs from the box");
    }
}

/// Every smoother (both l2v preconditioners) gives the same mesh at np = 1, 2, 3 and 4.
#[test]
#[ignore = "20 runs: scripts/test-long"]
fn mesh_every_smoother_same_at_np_1_to_4() {
    let dir = test_dir("mesh_smooth_all");
    let all = &[1, 2, 3, 4][..];
    let l2v_scalar: &[&str] = &[
        "--method",
        "l2v",
        "--preconditioner",
        "scalar",
        "--iterations",
        "12",
    ];
    smooth_cases(
        &dir,
        &[
            ("l2v-block", L2V_BLOCK, all),
            ("l2v-scalar", l2v_scalar, all),
            ("opt", OPT_COLOUR, all),
            ("smart", SMART, all),
            ("laplace", LAPLACE, all),
        ],
    );
}

/// A box and the ring (non-convex: its end faces are close in space, far in the mesh): the
/// same parts at np = 1..4, each node in one part, balance within 1.02, and the edge cut and
/// the disconnected parts the file reports equal to a recount from the written cells.
#[test]
fn mesh_partition_same_at_every_rank_count() {
    let dir = test_dir("mesh_partition");
    let k = 6;
    for (name, mesh) in [
        ("box", &["box", "7", "5", "4"][..]),
        ("ring", &["ring", "2"][..]),
    ] {
        let mut first: Option<Vec<u32>> = None;
        for np in 1..=4 {
            let mut args = vec!["partition"];
            args.extend(mesh);
            args.extend(["--parts", "6", "--refine"]);
            let h5 = mesh_run(np, &dir, &format!("{name}{np}"), &args);
            let part: Vec<u32> = by_node(&h5, "VTKHDF/PointData/part", 1);
            let n = part.len();
            let mut sizes = vec![0usize; k];
            for &p in &part {
                sizes[p as usize] += 1;
            }
            assert_eq!(sizes.iter().sum::<usize>(), n);
            let largest = *sizes.iter().max().unwrap() as f64;
            assert!(
                largest <= 1.02 * n as f64 / k as f64,
                "{name}: sizes {sizes:?}"
            );
            let edges = node_edges(&h5);
            let cut = edges.iter().filter(|(a, b)| part[*a] != part[*b]).count() as u64;
            assert_eq!(h5.attr::<u64>("mesh/partition", "edge_cut"), cut, "{name}");
            let disconnected = disconnected_parts(n, &edges, &part, k);
            assert_eq!(
                h5.attr::<u64>("mesh/partition", "disconnected_parts"),
                disconnected,
                "{name}"
            );
            match &first {
                None => first = Some(part),
                Some(one) => assert_eq!(one, &part, "{name}: np {np} differs from np 1"),
            }
        }
    }
}

/// The node graph's edges (a < b), from the written cells.
fn node_edges(h5: &H5) -> Vec<(usize, usize)> {
    let (_, conn) = whole_numbering(h5);
    let mut edges = std::collections::BTreeSet::new();
    for c in conn.chunks(4) {
        for a in 0..4 {
            for b in a + 1..4 {
                edges.insert((c[a].min(c[b]) as usize, c[a].max(c[b]) as usize));
            }
        }
    }
    edges.into_iter().collect()
}

/// Parts of more than one connected piece, by a union-find over the edges inside parts.
fn disconnected_parts(n: usize, edges: &[(usize, usize)], part: &[u32], k: usize) -> u64 {
    let mut root: Vec<usize> = (0..n).collect();
    fn find(root: &mut [usize], mut a: usize) -> usize {
        while root[a] != a {
            root[a] = root[root[a]];
            a = root[a];
        }
        a
    }
    for &(a, b) in edges.iter().filter(|(a, b)| part[*a] == part[*b]) {
        let (ra, rb) = (find(&mut root, a), find(&mut root, b));
        root[ra.max(rb)] = ra.min(rb);
    }
    let mut pieces = vec![std::collections::BTreeSet::new(); k];
    for i in 0..n {
        let r = find(&mut root, i);
        pieces[part[i] as usize].insert(r);
    }
    pieces.iter().filter(|p| p.len() > 1).count() as u64
}

/// Two tetrahedra as Gmsh MSH 2.2 (node ids 10..50, a tagged triangle) and 4.1.
const MSH2: &str = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n5\n10 0 0 0\n20 1 0 0\n30 0 1 0\n40 0 0 1\n50 1 1 1\n$EndNodes\n$Elements\n3\n1 2 2 7 1 10 20 30\n2 4 2 1 1 10 20 30 40\n3 4 2 1 1 20 30 40 50\n$EndElements\n";
const MSH4: &str = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 5 1 5\n3 1 0 5\n1\n2\n3\n4\n5\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 1 1\n$EndNodes\n$Elements\n1 2 1 2\n3 1 4 2\n1 1 2 3 4\n2 2 3 4 5\n$EndElements\n";

/// `tessera mesh --device cpu --output bad.h5 ARGS` (words split at spaces) in `dir` fails
/// with one error line holding every one of `needles`.
fn refused(dir: &Path, args: &str, needles: &[&str]) {
    let mut all = vec!["mesh", "--device", "cpu", "--output", "bad.h5"];
    all.extend(args.split_whitespace());
    one_clear_error(&tessera(1, &all, dir), needles);
}

/// Malformed mesh files, smoothed and partitioned: header counts no file could hold (refused
/// as the counts they are, never reserved), non-finite points and points past 1e40 in
/// magnitude (accepted before, and overflowed in the smoothers' sixth powers), global ids past
/// the points, a global id repeated in a piece or at two positions (named with both points);
/// each one error line naming the file, the line, block or point, and what was expected.
#[test]
fn mesh_bad_files_give_one_error_line() {
    let dir = test_dir("mesh_bad_files");
    let huge = "999999999999";
    let most = "18446744073709551615";
    let files = [
        (
            "nodes.msh",
            MSH2.replace("$Nodes\n5\n", &format!("$Nodes\n{huge}\n")),
            &[
                "nodes.msh:11",
                "$EndNodes found after 5 nodes",
                "promises 999999999999",
            ][..],
        ),
        (
            "nodes64.msh",
            MSH2.replace("$Nodes\n5\n", &format!("$Nodes\n{most}\n")),
            &["nodes64.msh:11", "promises 18446744073709551615"],
        ),
        (
            "cells.msh",
            MSH2.replace("$Elements\n3\n", &format!("$Elements\n{huge}\n")),
            &["cells.msh:17", "$EndElements found after 3 elements"],
        ),
        (
            "cells64.msh",
            MSH2.replace("$Elements\n3\n", &format!("$Elements\n{most}\n")),
            &["cells64.msh:17", "promises 18446744073709551615"],
        ),
        (
            "nodes4.msh",
            MSH4.replace("$Nodes\n1 5 1 5", &format!("$Nodes\n1 {huge} 1 5")),
            &["nodes4.msh", "$Nodes", "999999999999 nodes", "hold 5"],
        ),
        (
            "nan.msh",
            MSH2.replace("50 1 1 1", "50 1 nan 1"),
            &["nan.msh:10", "node 50", "'nan' is not finite"],
        ),
        (
            "huge.msh",
            MSH2.replace("50 1 1 1", "50 1 1e300 1"),
            &[
                "huge.msh:10",
                "node 50",
                "'1e300' is too large",
                "from -1e40 to 1e40",
            ],
        ),
        (
            "huge4.msh",
            MSH4.replace("1 1 1\n$EndNodes", "1 1 -1e300\n$EndNodes"),
            &[
                "huge4.msh",
                "node block 1",
                "node 5",
                "(1, 1, -1e300)",
                "from -1e40 to 1e40",
            ],
        ),
    ];
    for (name, text, needles) in files {
        write_file(&dir, name, &text);
        refused(&dir, &format!("smooth {name} --iterations 3"), needles);
        refused(&dir, &format!("partition {name} --parts 2"), needles);
    }
    // A mesh tessera wrote, spoiled: a coordinate NaN, a global id past the points.
    mesh_run(1, &dir, "g", &["generate", "box", "2", "2", "2"]);
    spoiled::<f64>(&dir, "nan.h5", "VTKHDF/Points", |p| p[4] = f64::NAN);
    spoiled::<u64>(&dir, "id.h5", "VTKHDF/PointData/global_id", |ids| {
        ids[3] = 4_000_000_000
    });
    spoiled::<f64>(&dir, "huge.h5", "VTKHDF/Points", |p| p[4] = 1e300);
    spoiled::<u64>(&dir, "twice.h5", "VTKHDF/PointData/global_id", |ids| {
        ids[5] = ids[2]
    });
    for (name, needles) in [
        (
            "nan.h5",
            &[
                "nan.h5",
                "/VTKHDF/Points: point 1 (from 0) has coordinate NaN",
            ][..],
        ),
        (
            "id.h5",
            &["id.h5", "global_id: id 4000000000 of point 3", "below 27"],
        ),
        (
            "huge.h5",
            &[
                "huge.h5",
                "/VTKHDF/Points: point 1 (from 0) has coordinate 1e300",
                "from -1e40 to 1e40",
            ],
        ),
        (
            "twice.h5",
            &[
                "twice.h5",
                "/VTKHDF/PointData/global_id: id 2 held by points 2 and 5 (from 0), both in piece 0",
                "expected each node once in a piece",
            ],
        ),
    ] {
        refused(&dir, &format!("smooth {name}"), needles);
        refused(&dir, &format!("partition {name} --parts 2"), needles);
    }
    // A node two pieces share, moved in the second.
    mesh_run(2, &dir, "g2", &["generate", "box", "2", "2", "2"]);
    std::fs::copy(dir.join("g2.h5"), dir.join("moved.h5")).unwrap();
    let (first, second, id) = {
        let file = open_rw_unlocked(&dir.join("moved.h5"));
        let ids: Vec<u64> = file
            .dataset("VTKHDF/PointData/global_id")
            .and_then(|d| d.read_raw())
            .unwrap();
        let second = (0..ids.len())
            .find(|&i| ids[..i].contains(&ids[i]))
            .expect("a node the two pieces share");
        let first = ids.iter().position(|&g| g == ids[second]).unwrap();
        let points = file.dataset("VTKHDF/Points").unwrap();
        let mut p: Vec<f64> = points.read_raw().unwrap();
        p[3 * second] += 0.25;
        points.write_raw(&p).unwrap();
        (first, second, ids[second])
    };
    let held = format!("global_id: id {id} held by points {first} and {second} (from 0) at (");
    let needles = [
        "moved.h5",
        &held,
        "expected a node shared by pieces at one position",
    ];
    refused(&dir, "smooth moved.h5", &needles);
}

/// `dir/g.h5` copied as `dir/name`, its dataset `dataset` changed by `change`.
fn spoiled<T: hdf5_metno::H5Type>(
    dir: &Path,
    name: &str,
    dataset: &str,
    change: impl FnOnce(&mut Vec<T>),
) {
    std::fs::copy(dir.join("g.h5"), dir.join(name)).unwrap();
    // Closed on return, so that the runs read what was written.
    let file = open_rw_unlocked(&dir.join(name));
    let ds = file.dataset(dataset).unwrap();
    let mut data = ds.read_raw().unwrap();
    change(&mut data);
    ds.write_raw(&data).unwrap();
}

/// Extents outside 1e-6..1e6 (infinite ones, ones whose volumes overflow), and flags the
/// action, the method or the mesh does not use (on the command line and in a deck): one error
/// line naming the key and what was expected or what it applies to.
#[test]
fn mesh_bad_flags_give_one_error_line() {
    let dir = test_dir("mesh_bad_flags");
    let extent = "[mesh] extent: expected three lengths from 1e-6 to 1e6";
    let parts = "[mesh] parts applies to action = \"partition\", not \"smooth\"";
    let cases = [
        ("generate box 2 2 2 --extent inf,1,1", extent),
        ("generate box 2 2 2 --extent 1e308,1e308,1e308", extent),
        ("smooth box 3 3 3 --extent 1,inf,1", extent),
        ("smooth box 3 3 3 --extent 1,1e-7,1", extent),
        ("smooth box 3 3 3 --parts 3", parts),
        (
            "partition box 3 3 3 --parts 2 --method laplace",
            "[mesh] method applies to action = \"smooth\", not \"partition\"",
        ),
        (
            "smooth box 3 3 3 --smart --method l2v",
            "[mesh] smart applies to method = \"laplace\", not \"l2v\"",
        ),
        (
            "smooth box 3 3 3 --preconditioner block --method laplace",
            "[mesh] preconditioner applies to method = \"l2v\", not \"laplace\"",
        ),
        (
            "generate box 2 2 2 --iterations 5",
            "[mesh] iterations applies to action = \"smooth\", not \"generate\"",
        ),
        (
            "partition box 2 2 2 --parts 2 --free 1",
            "[mesh] free applies to a mesh file's tagged patches, not `box`",
        ),
        (
            "smooth a.msh --extent 1,1,1",
            "--extent applies to `box NX NY NZ` meshes",
        ),
    ];
    for (args, needle) in cases {
        refused(&dir, args, &[needle]);
    }
    // The deck form: the same refusal, at the key's line.
    write_file(
        &dir,
        "deck.toml",
        "[mesh]\naction = \"smooth\"\nmesh = [\"box\", \"3\", \"3\", \"3\"]\nparts = 3\n",
    );
    refused(&dir, "--deck deck.toml", &["deck.toml", "line 4", parts]);
}
