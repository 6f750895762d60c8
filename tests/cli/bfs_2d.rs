//! The 2D-partitioned BFS (`[bfs] partition = "2d"`) under mpirun: the same answers as the 1D
//! search (depths, nedge, level counts, CSR entries and checksum) on every grid of 1 to 4
//! ranks, with validation on and in every direction mode; measured bytes within the
//! communication model; impossible grids refused with one clear line. The `#[ignore]` test
//! (scripts/test-long) does the same on a larger graph, every grid and every mode.

use crate::common::outcome::*;
use crate::common::*;
use std::path::Path;

/// A Kronecker graph small enough for debug builds, with both directions in its searches.
const GRAPH: [&str; 10] = [
    "--scale",
    "10",
    "--edgefactor",
    "16",
    "--roots",
    "8",
    "--seed",
    "11",
    "--write-depths",
    "true",
];

/// The per-level bytes of a result file against its model dataset `model`: every level's
/// measured total at most the model's; equal on bottom-up levels when `exact_bottom_up`
/// (bitmap exchanges only: 1D, or 2D with one column). The busiest rank sends at most the
/// total. Returns the directions of the levels.
fn check_bytes_against_model(path: &Path, model: &str, exact_bottom_up: bool) -> Vec<u8> {
    let f = H5::open(path);
    let measured: Vec<u64> = f.ds("bfs/per_level/bytes_exchanged");
    let bound: Vec<u64> = f.ds(&format!("bfs/per_level/{model}"));
    let most: Vec<u64> = f.ds("bfs/per_level/bytes_sent_max_rank");
    let direction: Vec<u8> = f.ds("bfs/per_level/direction");
    for (k, ((&m, &b), &d)) in measured.iter().zip(&bound).zip(&direction).enumerate() {
        let what = format!("{}: level row {k} (direction {d})", path.display());
        assert!(
            m <= b,
            "{what}: {m} bytes measured, model {model} says at most {b}"
        );
        if d == 1 && exact_bottom_up {
            assert_eq!(m, b, "{what}: bottom-up bytes");
        }
        assert!(most[k] <= m, "{what}: a rank sent more than all ranks");
    }
    direction
}

#[test]
fn two_d_matches_one_d_on_every_grid() {
    let dir = test_dir("bfs2d_grids");
    let reference = bfs_ok(2, &dir, "1d.h5", &GRAPH);
    reference.check_against_sequential(&kronecker_edges(10, 16, 11), "1D at np 2");
    let directions = check_bytes_against_model(&dir.join("1d.h5"), "model_bytes_1d", true);
    assert!(
        directions.contains(&0) && directions.contains(&1),
        "the graph's searches should go both top-down and bottom-up: {directions:?}"
    );
    // (ranks, --grid, the grid expected, --mode); no --grid: the most square grid.
    let runs = [
        (1, Some("1,1"), (1, 1), "hybrid"),
        (2, Some("1,2"), (1, 2), "hybrid"),
        (2, Some("2,1"), (2, 1), "top-down"),
        (3, Some("1,3"), (1, 3), "bottom-up"),
        (3, Some("3,1"), (3, 1), "hybrid"),
        (4, None, (2, 2), "hybrid"),
    ];
    for (np, grid, (rows, cols), mode) in runs {
        let name = format!("2d_np{np}_{rows}x{cols}_{mode}.h5");
        let mut args = GRAPH.to_vec();
        args.extend(["--partition", "2d", "--mode", mode]);
        if let Some(grid) = grid {
            args.extend(["--grid", grid]);
        }
        let out = bfs_ok(np, &dir, &name, &args);
        let what = format!("2D {rows}x{cols} {mode} at np {np} vs 1D at np 2");
        assert_same(&reference, &out, &what);
        let path = dir.join(&name);
        let f = H5::open(&path);
        assert_eq!(f.attr_str("bfs", "partition"), "2d", "{what}");
        let grid: (u64, u64) = (f.attr("bfs", "grid_rows"), f.attr("bfs", "grid_cols"));
        assert_eq!(grid, (rows as u64, cols as u64), "{what}: grid");
        check_bytes_against_model(&path, "model_bytes_2d", cols == 1);
    }
}

#[test]
fn impossible_grid_is_one_clear_error() {
    let dir = test_dir("bfs2d_bad_grid");
    let bfs = |np: usize, extra: &[&str]| {
        let mut args = vec![
            "bfs", "--scale", "6", "--roots", "2", "--output", "never.h5",
        ];
        args.extend_from_slice(extra);
        tessera(np, &args, &dir)
    };
    for np in 1..=4 {
        let ranks = format!("{np} rank(s)");
        let run = bfs(np, &["--partition", "2d", "--grid", "2,3"]);
        one_clear_error(&run, &["[bfs] grid = [2, 3]", &ranks, "R x C"]);
        let run = bfs(np, &["--partition", "2d", "--grid", "0,2"]);
        one_clear_error(&run, &["[bfs] grid = [0, 2]", "two positive integers"]);
    }
    let run = bfs(2, &["--partition", "2d", "--grid", "-1,-2"]);
    one_clear_error(&run, &["[bfs] grid = [-1, -2]", "two positive integers"]);
    let run = bfs(3, &["--partition", "2d", "--grid", "1,3,1"]);
    one_clear_error(&run, &["[bfs] grid = [1, 3, 1]", "two positive integers"]);
    let run = bfs(2, &["--grid", "1,2"]);
    one_clear_error(&run, &["[bfs] grid", "partition = \"2d\""]);
    assert!(files_ending(&dir, ".h5").is_empty(), "no result file");
}

/// scripts/test-long: a larger graph (SCALE 16, 32 roots), every grid of 2 to 4 ranks, all
/// three direction modes, against 1D at 4 ranks.
#[test]
#[ignore]
fn two_d_matches_one_d_at_scale_16_on_every_grid_and_mode() {
    let dir = test_dir("bfs2d_long");
    let graph = [
        "--scale",
        "16",
        "--roots",
        "32",
        "--seed",
        "3",
        "--write-depths",
        "true",
    ];
    let reference = bfs_ok(4, &dir, "1d.h5", &graph);
    check_bytes_against_model(&dir.join("1d.h5"), "model_bytes_1d", true);
    let grids = [
        (2, "1,2"),
        (2, "2,1"),
        (3, "1,3"),
        (3, "3,1"),
        (4, "1,4"),
        (4, "4,1"),
        (4, "2,2"),
    ];
    for (np, grid) in grids {
        for mode in ["hybrid", "top-down", "bottom-up"] {
            let name = format!("2d_np{np}_{grid}_{mode}.h5");
            let mut args = graph.to_vec();
            args.extend(["--partition", "2d", "--grid", grid, "--mode", mode]);
            let out = bfs_ok(np, &dir, &name, &args);
            assert_same(
                &reference,
                &out,
                &format!("2D {grid} {mode} vs 1D, np {np}"),
            );
            let cols: u64 = H5::open(&dir.join(&name)).attr("bfs", "grid_cols");
            check_bytes_against_model(&dir.join(&name), "model_bytes_2d", cols == 1);
        }
    }
}
