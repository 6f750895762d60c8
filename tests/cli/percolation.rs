//! `tessera percolation` under mpirun: every per-sample figure and the labels are the same at
//! 1, 2, 3 and 4 ranks (2D and 3D, periodic and open, site and bond); a deck with a list of p
//! runs them all; bad values give one clear error line; and a statistical check of bond
//! percolation on the square lattice at p = 1/2 (spanning probability 1/2 by self-duality).

use crate::common;

use crate::common::{one_clear_error, tessera, test_dir, H5};
use std::path::Path;

/// Run `tessera percolation` on the CPU, one thread per rank, and open its result file.
fn run_ok(np: usize, dir: &Path, name: &str, args: &[&str]) -> H5 {
    common::run_cpu(np, dir, "percolation", name, 1, args)
}

/// Every per-sample dataset but the timing, and the labels.
const SAME: &[&str] = &[
    "clusters",
    "occupied_sites",
    "largest",
    "largest_label",
    "sum_squares",
    "percolates_any",
    "percolates_largest",
    "size_histogram",
    "labels",
];

#[test]
fn every_rank_count_gives_the_same_samples_and_labels() {
    let dir = test_dir("percolation_ranks");
    let cases: &[(&str, &[&str])] = &[
        ("2d-site-periodic", &["--l", "13", "--p", "0.5,0.6,0.75"]),
        (
            "2d-bond-open",
            &[
                "--l",
                "12",
                "--kind",
                "bond",
                "--boundary",
                "open",
                "--p",
                "0.45,0.55",
            ],
        ),
        (
            "3d-site-open",
            &[
                "--lattice",
                "3d",
                "--l",
                "7",
                "--boundary",
                "open",
                "--p",
                "0.25,0.35",
            ],
        ),
        (
            "3d-bond-periodic",
            &[
                "--lattice",
                "3d",
                "--l",
                "6",
                "--kind",
                "bond",
                "--p",
                "0.2,0.3",
            ],
        ),
        // A strip and a bar: axis 0, the axis the slabs cut, longer than the others.
        (
            "2d-site-strip",
            &["--length", "31", "--l", "6", "--p", "0.55,0.7,1"],
        ),
        (
            "3d-bond-bar-open",
            &[
                "--lattice",
                "3d",
                "--length",
                "9",
                "--l",
                "4",
                "--kind",
                "bond",
                "--boundary",
                "open",
                "--p",
                "0.3,0.45",
            ],
        ),
    ];
    for &(name, args) in cases {
        let mut all = args.to_vec();
        all.extend(["--samples", "6", "--write-labels", "--seed", "5"]);
        let one = run_ok(1, &dir, &format!("{name}-np1"), &all);
        let sites: u64 = one.attr("percolation", "sites");
        assert_eq!(one.shape("percolation/labels")[1] as u64, sites, "{name}");
        let largest: Vec<u64> = one.ds("percolation/largest");
        assert!(
            largest.iter().any(|&s| s > 1),
            "{name}: no cluster larger than a site"
        );
        if name == "2d-site-strip" {
            assert_eq!(sites, 31 * 6);
            assert_eq!(one.attr::<u64>("percolation", "length"), 31);
            // p = 1: one cluster of every site.
            assert_eq!(largest[12..], [sites; 6], "{name}: p = 1");
        }
        for np in [2, 3, 4] {
            let h5 = run_ok(np, &dir, &format!("{name}-np{np}"), &all);
            for ds in SAME {
                let path = format!("percolation/{ds}");
                assert_eq!(
                    h5.ds::<u64>(&path).len(),
                    one.ds::<u64>(&path).len(),
                    "{name}: {ds} at np {np}"
                );
                let same = if *ds == "percolates_any" || *ds == "percolates_largest" {
                    h5.ds::<u8>(&path) == one.ds::<u8>(&path)
                } else {
                    h5.ds::<u64>(&path) == one.ds::<u64>(&path)
                };
                assert!(same, "{name}: {ds} differs at np {np}");
            }
        }
    }
}

#[test]
fn a_deck_sweeps_its_list_of_p() {
    let dir = test_dir("percolation_deck");
    let deck = dir.join("sweep.toml");
    std::fs::write(
        &deck,
        "[run]\noutput = \"sweep.h5\"\n[percolation]\nlattice = \"2d\"\nl = 16\np = [0.3, 1]\nsamples = 3\n",
    )
    .unwrap();
    tessera(2, &["run", deck.to_str().unwrap(), "--device", "cpu"], &dir).assert_ok();
    let h5 = H5::open(&dir.join("sweep.h5"));
    assert_eq!(h5.ds::<f64>("percolation/summary/p"), [0.3, 1.0]);
    // p = 1: one cluster of every site, wrapping both axes.
    assert_eq!(h5.ds::<u64>("percolation/largest")[3..], [256, 256, 256]);
    assert_eq!(
        h5.ds::<f64>("percolation/summary/probability")[2..],
        [1.0, 1.0]
    );
}

#[test]
fn bad_values_give_one_clear_error() {
    let dir = test_dir("percolation_errors");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--p", "1.5"],
            "[percolation] p = 1.5 is out of range: expected a probability in [0, 1]",
        ),
        (
            &["--p", "0.5,-0.1"],
            "[percolation] p = -0.1 is out of range",
        ),
        (
            &["--l", "1"],
            "[percolation] l = 1 is out of range: expected an integer >= 2",
        ),
        (
            &["--samples", "0"],
            "[percolation] samples = 0 is out of range",
        ),
        (&["--l", "5000", "--write-labels"], "write_labels"),
        (
            &["--l", "3", "--boundary", "open"],
            "every rank needs a plane",
        ),
        (
            &["--length", "1"],
            "[percolation] length = 1 is out of range: expected an integer >= 2",
        ),
        (
            &["--length", "3", "--l", "50"],
            "length = 3 gives fewer planes than the 4 ranks: every rank needs a plane",
        ),
    ];
    for &(flags, needle) in cases {
        let mut all = vec!["percolation", "--device", "cpu", "--output", "never.h5"];
        all.extend_from_slice(flags);
        let np = if needle.contains("plane") { 4 } else { 2 };
        one_clear_error(&tessera(np, &all, &dir), &[needle]);
    }
    let deck = dir.join("bad.toml");
    std::fs::write(&deck, "[percolation]\np = \"high\"\n").unwrap();
    one_clear_error(
        &tessera(1, &["run", deck.to_str().unwrap()], &dir),
        &["line 2", "expected a number or a list of numbers"],
    );
    assert!(common::files_ending(&dir, ".h5").is_empty());
}

/// Bond percolation on the open L x L square lattice at p = 1/2 spans with probability
/// close to 1/2 (exactly 1/2 on an L x (L+1) lattice, by self-duality).
#[test]
fn square_bond_percolation_spans_half_the_time_at_one_half() {
    let dir = test_dir("percolation_square_bond");
    let h5 = run_ok(
        2,
        &dir,
        "square",
        &[
            "--l",
            "32",
            "--kind",
            "bond",
            "--boundary",
            "open",
            "--p",
            "0.5",
            "--samples",
            "400",
        ],
    );
    let r: Vec<f64> = h5.ds("percolation/summary/probability");
    for (axis, r) in r.iter().enumerate() {
        assert!(
            (r - 0.5).abs() < 0.1,
            "spanning probability along axis {axis}: {r}"
        );
    }
}

/// The thresholds: below p_c - 0.05 clusters wrap rarely, above p_c + 0.05 nearly always
/// (site square 0.5927, site cubic 0.3116, bond cubic 0.2488). About 5 s on two cores.
#[test]
fn thresholds_separate_wrapping_from_not() {
    let dir = test_dir("percolation_thresholds");
    let cases: &[(&str, &str, &str, f64)] = &[
        ("2d", "site", "256", 0.592_746),
        ("3d", "site", "48", 0.311_608),
        ("3d", "bond", "48", 0.248_813),
        ("2d", "bond", "256", 0.5),
    ];
    for &(lattice, kind, l, pc) in cases {
        let p = format!("{},{pc},{}", pc - 0.05, pc + 0.05);
        let name = format!("{lattice}-{kind}");
        let args = [
            "--lattice",
            lattice,
            "--kind",
            kind,
            "--l",
            l,
            "--p",
            &p,
            "--samples",
            "100",
        ];
        let h5 = run_ok(2, &dir, &name, &args);
        let r: Vec<f64> = h5.ds("percolation/summary/probability");
        let dim = if lattice == "2d" { 2 } else { 3 };
        let (below, at, above) = (r[0], r[dim], r[2 * dim]);
        assert!(
            below < 0.2 && above > 0.8 && (0.1..0.9).contains(&at),
            "{name}: R = {below}, {at}, {above}"
        );
    }
}

/// Sizes that cannot be held are refused before any allocation, in seconds, with one line
/// naming the bytes needed and available and what fits (the largest L, or the most samples),
/// at one rank and at three: never an allocation failure with a backtrace per rank.
#[test]
fn too_large_sizes_are_refused_at_once() {
    let dir = test_dir("percolation_sizes");
    let cases: &[(&[&str], &str)] = &[
        (&["--l", "200000"], "the largest L that fits is"),
        (
            &["--lattice", "3d", "--l", "20000"],
            "the largest L that fits is",
        ),
        (
            &["--samples", "1000000000000"],
            "the most samples per p that fit are",
        ),
    ];
    for np in [1, 3] {
        for &(flags, fits) in cases {
            let mut all = vec!["percolation", "--device", "cpu", "--output", "never.h5"];
            all.extend_from_slice(flags);
            let started = std::time::Instant::now();
            let run = tessera(np, &all, &dir);
            let line = one_clear_error(&run, &["does not fit", "bytes", "available", fits]);
            assert_eq!(run.status.code(), Some(1), "{flags:?} at np {np}: {line}");
            assert!(
                started.elapsed() < std::time::Duration::from_secs(30),
                "{flags:?} at np {np} took {:?}",
                started.elapsed()
            );
        }
    }
    assert!(common::files_ending(&dir, ".h5").is_empty());
}
