//! `tessera generate` and the graph sources under mpirun: every generator gives one graph
//! for every rank count, exact sizes of each, files written and read back to the same CSR,
//! one clear error line for bad parameters, and graphs too large for memory refused before
//! anything is generated.

use crate::common;

use crate::common::{one_clear_error, tessera, test_dir, H5};
use std::path::Path;
use std::time::{Duration, Instant};

const NPS: [usize; 4] = [1, 2, 3, 4];

/// Run `tessera WORKLOAD` on the CPU, one thread per rank, and open its result file.
fn run_ok(np: usize, dir: &Path, workload: &str, name: &str, args: &[&str]) -> H5 {
    common::run_cpu(np, dir, workload, name, 1, args)
}

fn generate(np: usize, dir: &Path, name: &str, args: &[&str]) -> H5 {
    run_ok(np, dir, "generate", name, args)
}

fn checksum(h5: &H5) -> u64 {
    h5.attr("graph", "csr_checksum")
}

/// Small instances of every generator.
const GENERATORS: &[(&str, &[&str])] = &[
    ("kronecker", &["--scale", "8"]),
    (
        "er",
        &[
            "--generator",
            "erdos-renyi",
            "--vertices",
            "300",
            "--edges",
            "1000",
        ],
    ),
    (
        "ws-ring",
        &[
            "--generator",
            "watts-strogatz",
            "--vertices",
            "200",
            "--k",
            "6",
            "--p",
            "0.2",
        ],
    ),
    (
        "ws-lattice",
        &[
            "--generator",
            "watts-strogatz",
            "--dims",
            "8,8",
            "--p",
            "0.1",
        ],
    ),
    (
        "ba",
        &[
            "--generator",
            "barabasi-albert",
            "--vertices",
            "300",
            "--d",
            "3",
        ],
    ),
    (
        "lattice-open",
        &[
            "--generator",
            "lattice",
            "--dims",
            "6,5",
            "--periodic",
            "false",
        ],
    ),
    ("lattice-3d", &["--generator", "lattice", "--dims", "4,4,4"]),
    ("ssca2", &["--generator", "ssca2", "--scale", "7"]),
    (
        "watts-alpha",
        &[
            "--generator",
            "watts-alpha",
            "--vertices",
            "200",
            "--k",
            "6",
            "--exponent",
            "1.5",
        ],
    ),
];

#[test]
fn every_generator_gives_one_graph_for_every_rank_count() {
    let dir = test_dir("generators_ranks");
    for &(name, args) in GENERATORS {
        let one = generate(1, &dir, &format!("{name}-np1"), args);
        assert_eq!(one.attr_str("graph", "generate_device"), "cpu", "{name}");
        for np in [2, 3, 4] {
            let h5 = generate(np, &dir, &format!("{name}-np{np}"), args);
            for attr in [
                "csr_checksum",
                "edge_checksum",
                "vertices",
                "edges",
                "csr_entries",
            ] {
                assert_eq!(
                    h5.attr::<u64>("graph", attr),
                    one.attr::<u64>("graph", attr),
                    "{name}: {attr} at np {np}"
                );
            }
        }
    }
}

#[test]
fn generators_have_their_exact_sizes() {
    let dir = test_dir("generators_exact");
    let size = |h5: &H5| {
        let a = |k| h5.attr::<u64>("graph", k);
        (a("vertices"), a("edges"), a("csr_entries"))
    };
    // G(n, m): exactly m distinct edges, none dropped.
    let h5 = generate(2, &dir, "er", GENERATORS[1].1);
    assert_eq!(size(&h5), (300, 1000, 2000));
    // Watts-Strogatz keeps the ring's n k / 2 edges (none lost to duplicates here).
    let h5 = generate(3, &dir, "ws", GENERATORS[2].1);
    assert_eq!(size(&h5), (200, 600, 1200));
    // Lattices: 6x5 open has 5*5 + 6*4 edges; 4x4x4 periodic 3 * 64, degree 6 everywhere.
    let h5 = generate(2, &dir, "open", GENERATORS[5].1);
    assert_eq!(size(&h5), (30, 49, 98));
    let h5 = generate(2, &dir, "3d", GENERATORS[6].1);
    assert_eq!(size(&h5), (64, 192, 384));
    // Barabasi-Albert: n d edge slots; SSCA#2: 8 N directed edges.
    let h5 = generate(2, &dir, "ba", GENERATORS[4].1);
    assert_eq!(h5.attr::<u64>("graph", "edges"), 900);
    let h5 = generate(2, &dir, "ssca2", GENERATORS[7].1);
    assert_eq!(h5.attr::<u64>("graph", "edges"), 8 * 128);
    // Watts' α-model: n k / 2 distinct edges, none dropped.
    let h5 = generate(3, &dir, "watts-alpha", GENERATORS[8].1);
    assert_eq!(size(&h5), (200, 600, 1200));
}

#[test]
fn written_files_read_back_to_the_same_csr() {
    let dir = test_dir("generate_round_trip");
    for &(name, args) in GENERATORS {
        for ext in ["el", "mtx"] {
            let file = format!("{name}.{ext}");
            let mut write = args.to_vec();
            write.extend(["--write", &file]);
            let made = generate(3, &dir, &format!("{name}-{ext}-made"), &write);
            let path = dir.join(&file);
            assert!(path.exists(), "{name}: {file} not written");
            let read = generate(
                2,
                &dir,
                &format!("{name}-{ext}-read"),
                &["--input", path.to_str().unwrap()],
            );
            assert_eq!(checksum(&read), checksum(&made), "{name}: {file} read back");
            assert_eq!(
                read.attr::<u64>("graph", "vertices"),
                made.attr::<u64>("graph", "vertices"),
                "{name}: {file}"
            );
        }
    }
}

/// Every case at one rank, and each at one more rank count in turn (2, 3, 4, 2, ...): every
/// rank count sees three cases. The whole matrix is the ignored test below (scripts/test-long);
/// 36 launches cost a minute of CI time.
#[test]
fn bad_generator_parameters_give_one_clear_error() {
    check_generator_errors("generator_errors", |case| vec![1, 2 + case % 3]);
}

#[test]
#[ignore = "every case at every rank count: run by scripts/test-long"]
fn bad_generator_parameters_give_one_clear_error_at_every_rank_count() {
    check_generator_errors("generator_errors_all", |_| NPS.to_vec());
}

/// Each bad generator setting, at the rank counts `nps(case index)`, gives one clear line.
fn check_generator_errors(name: &str, nps: impl Fn(usize) -> Vec<usize>) {
    let dir = test_dir(name);
    // (flags, what the one error line must say)
    let cases = [
        (
            "watts-strogatz --vertices 100 --k 5 --p 0.1",
            "[graph] k = 5 must be even",
        ),
        (
            "watts-strogatz --vertices 10 --k 10 --p 0.1",
            "less than vertices = 10",
        ),
        (
            "watts-strogatz --vertices 100 --k 4 --p 1.5",
            "[graph] p = 1.5 must be between 0 and 1",
        ),
        (
            "watts-strogatz --vertices 100 --k 4 --p -0.5",
            "[graph] p = -0.5",
        ),
        (
            "barabasi-albert --vertices 5 --d 5",
            "[graph] d = 5 must be at least 1 and less than vertices = 5",
        ),
        (
            "lattice --dims 8,8 --k 4",
            "[graph] k does not apply to generator lattice",
        ),
        ("erdos-renyi --vertices 10 --edges 46", "[graph] edges = 46"),
        (
            "watts-alpha --vertices 11 --k 3 --exponent 1",
            "[graph] k = 3 must be at least 1, less than vertices = 11, with vertices·k even",
        ),
        (
            "watts-alpha --vertices 10 --k 2",
            "[graph] exponent is missing: generator watts-alpha needs it",
        ),
    ];
    for (case, (flags, needle)) in cases.into_iter().enumerate() {
        for np in nps(case) {
            let mut all = vec!["generate", "--output", "never.h5", "--generator"];
            all.extend(flags.split_whitespace());
            let run = tessera(np, &all, &dir);
            let line = one_clear_error(&run, &[needle]);
            assert!(line.starts_with("tessera: error: command line: "), "{line}");
        }
    }
    assert!(common::files_ending(&dir, ".h5").is_empty());
}

#[test]
fn a_file_too_large_for_memory_is_refused_by_its_size() {
    let dir = test_dir("file_host_memory");
    let file = dir.join("huge.el");
    std::fs::write(
        &file,
        "# tessera edge list: vertices 100000000000000 edges 1\n0 1\n",
    )
    .unwrap();
    for np in [1, 3] {
        let run = tessera(np, &["bfs", "--input", file.to_str().unwrap()], &dir);
        let line = one_clear_error(
            &run,
            &["does not fit", "bytes of host memory", "would hold it"],
        );
        assert!(!line.contains("SCALE"), "{line}");
    }
}

#[test]
fn the_written_file_is_reported_and_its_directory_made() {
    let dir = test_dir("generate_write_dir");
    let h5 = generate(
        3,
        &dir,
        "made",
        &["--scale", "6", "--write", "out/deeper/k6.mtx"],
    );
    let path = dir.join("out/deeper/k6.mtx");
    let bytes = std::fs::metadata(&path).expect("the file written").len();
    assert_eq!(h5.attr::<u64>("", "written_bytes"), bytes);
    assert_eq!(h5.attr_str("", "written_file"), "out/deeper/k6.mtx");
    // A write path that cannot be written is refused before the graph is made.
    for np in [1, 3] {
        let args = [
            "generate",
            "--scale",
            "6",
            "--output",
            "never.h5",
            "--write",
            "/proc/tessera/k6.el",
        ];
        let run = tessera(np, &args, &dir);
        one_clear_error(&run, &["/proc/tessera/k6.el"]);
        assert!(!run.stderr.contains("graph: "), "{}", run.stderr);
    }
}

/// `--write` is checked as `--output` is, before the graph is made: a FIFO or a device (a
/// scratch node like /dev/full, never a real one) is refused and left as it was, not renamed
/// over; an existing file is kept unless `--force`; the result file itself is refused.
#[test]
fn write_paths_are_refused_as_outputs_are() {
    use std::os::unix::fs::FileTypeExt;
    let dir = test_dir("generate_write_refused");
    common::mknod(&dir.join("pipe.el"), &["p"]);
    common::mknod(&dir.join("full.el"), &["c", "1", "7"]);
    std::fs::write(dir.join("kept.el"), "0 1\n").unwrap();
    let cases: [(usize, &str, &str, &[&str]); 5] = [
        (
            1,
            "pipe.el",
            "x.h5",
            &["output pipe.el: it is a FIFO, not a regular file"],
        ),
        (
            2,
            "full.el",
            "x.h5",
            &["output full.el: it is a character device, not a regular file"],
        ),
        (
            1,
            "kept.el",
            "x.h5",
            &["output kept.el: exists: pass --force"],
        ),
        (
            2,
            "same.h5",
            "same.h5",
            &["output same.h5: it is the result file (--output) too"],
        ),
        (
            1,
            "out/../same.h5",
            "same.h5",
            &["output out/../same.h5: it is the result file"],
        ),
    ];
    for (np, write, output, needles) in cases {
        let args = [
            "generate", "--device", "cpu", "--scale", "4", "--write", write, "--output", output,
        ];
        let run = tessera(np, &args, &dir);
        one_clear_error(&run, needles);
        assert!(!run.stderr.contains("graph: "), "{}", run.stderr);
    }
    let kind = |name: &str| std::fs::metadata(dir.join(name)).unwrap().file_type();
    assert!(kind("pipe.el").is_fifo() && kind("full.el").is_char_device());
    assert_eq!(
        std::fs::read_to_string(dir.join("kept.el")).unwrap(),
        "0 1\n"
    );
    assert!(!dir.join("same.h5").exists() && !dir.join("x.h5").exists());
    generate(
        1,
        &dir,
        "forced",
        &["--scale", "4", "--write", "kept.el", "--force"],
    );
    assert!(std::fs::read_to_string(dir.join("kept.el"))
        .unwrap()
        .starts_with("# tessera"));
}

/// Sizes no host holds are refused before anything is generated (an Erdős–Rényi graph of
/// 10^11 edges takes minutes to open, a complete graph on 2^24 - 1 vertices has 1.4·10^14
/// edges): one line naming the bytes needed and available and the most that fits, exit
/// status 1, within seconds, at one and three ranks.
#[test]
fn graphs_too_large_for_memory_are_refused_before_generating() {
    let dir = test_dir("graph_too_large");
    let er = [
        "--generator",
        "erdos-renyi",
        "--vertices",
        "1000000",
        "--edges",
        "100000000000",
    ];
    let er_line: &[&str] = &[
        "does not fit",
        "bytes of host memory",
        "are available",
        "the most edges that fit with 1000000 vertices",
    ];
    let complete = ["--generator", "complete", "--vertices", "16777215"];
    let cases: [(&str, &[&str], &[&str]); 4] = [
        ("generate", &er, er_line),
        ("cc", &er, er_line),
        ("analyze", &er, er_line),
        (
            "euler",
            &complete,
            &[
                "the Euler circuit's edge-ends",
                "does not fit",
                "the most edges that fit",
            ],
        ),
    ];
    for np in [1, 3] {
        for (workload, args, needles) in cases {
            let mut all = vec![workload, "--device", "cpu", "--output", "never.h5"];
            all.extend(args);
            let started = Instant::now();
            let run = tessera(np, &all, &dir);
            let took = started.elapsed();
            one_clear_error(&run, needles);
            assert_eq!(
                run.status.code(),
                Some(1),
                "{workload} np {np}: {}",
                run.status
            );
            assert!(!run.stderr.contains("memory allocation"), "{}", run.stderr);
            assert!(
                took < Duration::from_secs(30),
                "{workload} np {np}: refused after {took:?}"
            );
        }
    }
    assert!(common::files_ending(&dir, ".h5").is_empty());
}
