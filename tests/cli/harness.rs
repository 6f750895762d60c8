//! The harness's promises, for every workload at np 1 and 3 (each refusal at one of them,
//! alternating, so that every workload meets both): the output is claimed before any
//! compute (a directory, a FIFO, an existing result without `--force`, an output another run
//! is writing: each refused with one line and no phase run), an input that is no regular file
//! is refused before it is opened, sizes too large are refused before anything is allocated,
//! usage errors share one exit status and one line, and a list value given twice (two
//! results of one name) is refused before any compute.

use crate::common::{files_ending, mknod, one_clear_error, tessera, test_dir, write_file, Run, H5};
use std::path::Path;

const NPS: [usize; 2] = [1, 3];

/// The rank count of case `case` (0, 1, ...) for the `i`-th workload: the refusals alternate
/// between np 1 and 3 so that each workload meets both over the cases, at half the runs.
fn np_for(case: usize, i: usize) -> usize {
    NPS[(case + i) % 2]
}

/// A small, valid run of each workload (without `--output`).
const WORKLOADS: [(&str, &[&str]); 12] = [
    ("bfs", &["bfs", "--scale", "8", "--roots", "4"]),
    ("langford", &["langford", "--n", "8"]),
    (
        "generate",
        &[
            "generate",
            "--generator",
            "erdos-renyi",
            "--vertices",
            "1000",
            "--edges",
            "2000",
        ],
    ),
    (
        "analyze",
        &[
            "analyze",
            "--generator",
            "erdos-renyi",
            "--vertices",
            "1000",
            "--edges",
            "2000",
        ],
    ),
    (
        "cc",
        &[
            "cc",
            "--generator",
            "erdos-renyi",
            "--vertices",
            "1000",
            "--edges",
            "600",
        ],
    ),
    (
        "percolation",
        &["percolation", "--l", "64", "--p", "0.5", "--samples", "2"],
    ),
    ("spin", &["spin", "--l", "16", "--sweeps", "20"]),
    (
        "euler",
        &[
            "euler",
            "--generator",
            "union-cycles",
            "--vertices",
            "1000",
            "--k",
            "2",
        ],
    ),
    ("mesh", &["mesh", "generate", "box", "2", "2", "2"]),
    (
        "cortex",
        &["cortex", "--l", "16", "--r", "4", "--steps", "20"],
    ),
    ("bc", &["bc", "--scale", "6"]),
    ("ssca2", &["ssca2", "--scale", "6"]),
];

/// `args` with `--output OUTPUT` at `np` ranks in `dir`.
fn run_to(np: usize, args: &[&str], output: &str, dir: &Path) -> Run {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--output", output]);
    tessera(np, &all, dir)
}

/// Nothing was computed: no phase reached its end (the harness logs "PHASE took S s").
fn assert_no_phase_ran(run: &Run) {
    assert!(
        !run.stderr.contains(" took "),
        "{}: a phase ran before the refusal\n{}",
        run.what,
        run.stderr
    );
}

#[test]
fn a_directory_as_output_is_refused_before_compute() {
    let dir = test_dir("harness_output_directory");
    std::fs::create_dir(dir.join("results")).unwrap();
    for (i, (name, args)) in WORKLOADS.into_iter().enumerate() {
        let run = run_to(np_for(0, i), args, "results", &dir);
        one_clear_error(&run, &["output results", "is a directory"]);
        assert_no_phase_ran(&run);
        assert_eq!(run.status.code(), Some(1), "{name}");
    }
    assert!(files_ending(&dir, ".tmp").is_empty());
    assert!(dir.join("results").is_dir());
}

#[test]
#[ignore = "CI time; its directory twin stays in CI: run by scripts/test-long"]
fn a_fifo_as_output_is_refused_before_compute() {
    let dir = test_dir("harness_output_fifo");
    let fifo = dir.join("pipe.h5");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for (i, (_, args)) in WORKLOADS.into_iter().enumerate() {
        let run = run_to(np_for(1, i), args, "pipe.h5", &dir);
        one_clear_error(&run, &["output pipe.h5", "not a regular file"]);
        assert_no_phase_ran(&run);
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn an_existing_result_is_kept_unless_forced() {
    let dir = test_dir("harness_output_exists");
    let kept = dir.join("kept.h5");
    for (i, (name, args)) in WORKLOADS.into_iter().enumerate() {
        std::fs::write(&kept, "a result of an earlier run").unwrap();
        let run = run_to(np_for(0, i), args, "kept.h5", &dir);
        one_clear_error(&run, &["output kept.h5", "exists", "--force"]);
        assert_no_phase_ran(&run);
        assert_eq!(
            std::fs::read_to_string(&kept).unwrap(),
            "a result of an earlier run",
            "{name} touched the existing file"
        );
        // --force overwrites it with this run's result.
        let mut forced = args.to_vec();
        forced.push("--force");
        run_to(np_for(1, i), &forced, "kept.h5", &dir).assert_ok();
        assert_ne!(
            std::fs::read(&kept).unwrap(),
            b"a result of an earlier run",
            "{name} --force"
        );
        assert!(!dir.join("kept.h5.lock").exists(), "{name} left its lock");
    }
}

#[test]
fn an_output_another_run_is_writing_is_refused() {
    let dir = test_dir("harness_output_locked");
    std::fs::write(dir.join("busy.h5.lock"), "another-node 4242\n").unwrap();
    for (i, (_, args)) in WORKLOADS.into_iter().enumerate() {
        let run = run_to(np_for(1, i), args, "busy.h5", &dir);
        one_clear_error(
            &run,
            &[
                "output busy.h5",
                "another run is writing it",
                "another-node",
            ],
        );
        assert_no_phase_ran(&run);
    }
    assert!(!dir.join("busy.h5").exists());
    assert!(
        dir.join("busy.h5.lock").exists(),
        "someone else's lock removed"
    );
}

#[test]
fn a_lock_left_by_a_dead_process_of_this_host_is_taken_over() {
    let dir = test_dir("harness_output_stale_lock");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    // Process ids above the kernel's pid_max are never alive.
    std::fs::write(
        dir.join("stale.h5.lock"),
        format!("{} 99999999\n", host.trim()),
    )
    .unwrap();
    let run = run_to(2, WORKLOADS[4].1, "stale.h5", &dir);
    run.assert_ok();
    assert!(dir.join("stale.h5").exists());
    assert!(!dir.join("stale.h5.lock").exists());
}

/// A size each workload cannot hold, and a word of its one-line refusal.
const TOO_LARGE: [(&str, &[&str], &str); 9] = [
    ("bfs", &["bfs", "--scale", "40"], "does not fit"),
    ("langford", &["langford", "--n", "1000"], "out of range"),
    (
        "generate",
        &[
            "generate",
            "--generator",
            "erdos-renyi",
            "--vertices",
            "1000000",
            "--edges",
            "100000000000",
        ],
        "does not fit",
    ),
    (
        "analyze",
        &[
            "analyze",
            "--generator",
            "erdos-renyi",
            "--vertices",
            "1000000",
            "--edges",
            "100000000000",
        ],
        "does not fit",
    ),
    (
        "cc",
        &[
            "cc",
            "--generator",
            "erdos-renyi",
            "--vertices",
            "1000000",
            "--edges",
            "100000000000",
        ],
        "does not fit",
    ),
    (
        "percolation",
        &["percolation", "--l", "200000", "--p", "0.5"],
        "does not fit",
    ),
    ("spin", &["spin", "--l", "300000"], "does not fit"),
    (
        "euler",
        &[
            "euler",
            "--generator",
            "union-cycles",
            "--vertices",
            "100000000000",
            "--k",
            "2",
        ],
        "does not fit",
    ),
    (
        "mesh",
        &["mesh", "generate", "box", "800", "800", "800"],
        "does not fit",
    ),
];

#[test]
fn sizes_too_large_are_refused_before_allocating() {
    let dir = test_dir("harness_too_large");
    // The workloads' own test files refuse their sizes at np 1 and 3 each; here one of them.
    for (i, (name, args, needle)) in TOO_LARGE.into_iter().enumerate() {
        let run = run_to(np_for(0, i), args, &format!("{name}.h5"), &dir);
        one_clear_error(&run, &[needle]);
        assert_no_phase_ran(&run);
        assert_eq!(run.status.code(), Some(1), "{}", run.what);
    }
    assert!(files_ending(&dir, ".h5").is_empty());
}

/// Usage errors: one line from rank 0, exit status 1 (as every other error).
#[test]
fn usage_errors_are_one_line_with_exit_status_1() {
    let dir = test_dir("harness_usage");
    let cases: [(&[&str], &[&str]); 5] = [
        (&["bfs", "--scale", "-3"], &["--scale = -3 is out of range"]),
        (
            &["bfs", "--n", "5"],
            &["--n is not a flag of bfs", "it belongs to langford"],
        ),
        (
            &["cc", "--trials", "abc"],
            &["--trials = \"abc\" is not valid", "expected"],
        ),
        (&["no-such-workload"], &["unrecognized subcommand"]),
        (&["bfs", "--scale"], &["--scale"]),
    ];
    for (args, needles) in cases {
        for np in NPS {
            let run = tessera(np, args, &dir);
            let line = one_clear_error(&run, needles);
            assert!(line.starts_with("tessera: error: command line: "), "{line}");
            assert_eq!(run.status.code(), Some(1), "{}", run.what);
        }
    }
    let help = tessera(1, &["bfs", "--help"], &dir);
    help.assert_ok();
    assert!(help.stdout.contains("--scale"));
}

/// A deck's errors name the line, whatever their kind: parse, type and range errors.
#[test]
fn deck_errors_name_their_line() {
    let dir = test_dir("harness_deck_lines");
    let cases: [(&str, &[&str]); 3] = [
        (
            "[cc]\ntrials = 0\n",
            &["line 2 (trials = 0)", "out of range"],
        ),
        (
            "[run]\nseed = 1\n[cc]\ntrials = \"many\"\n",
            &["line 4", "expected an integer"],
        ),
        (
            "[cc]\nlargest = -1\n",
            &["line 2 (largest = -1)", "an integer from 0"],
        ),
    ];
    for (i, (text, needles)) in cases.into_iter().enumerate() {
        let deck = dir.join(format!("deck{i}.toml"));
        std::fs::write(&deck, text).unwrap();
        for np in NPS {
            let run = tessera(np, &["run", deck.to_str().unwrap()], &dir);
            one_clear_error(&run, needles);
            assert_eq!(run.status.code(), Some(1), "{}", run.what);
        }
    }
}

#[test]
fn info_counts_the_nodes_cores() {
    let dir = test_dir("harness_info");
    let run = tessera(2, &["info"], &dir);
    run.assert_ok();
    let online = std::thread::available_parallelism().unwrap().get();
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("cores on this node: "))
        .unwrap_or_else(|| panic!("no cores line\n{}", run.stdout));
    let cores: usize = line["cores on this node: ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(cores >= online, "{line}: the test sees {online}");
}

// Deck errors (unknown key, wrong type, out of range, missing deck), [run] gpu_transport and
// device checks, and the graph builder's host-memory refusal.

#[test]
fn deck_with_unknown_key_is_rejected() {
    let dir = test_dir("deck_unknown_key");
    let deck = write_file(
        &dir,
        "unknown.toml",
        "[run]\nseed = 1\n\n[bfs]\nscal = 3\nroots = 4\n",
    );
    for np in NPS {
        let run = tessera(np, &["run", &deck], &dir);
        let line = one_clear_error(&run, &[&deck, "`scal`", "unknown field"]);
        assert!(line.starts_with("tessera: error: "), "{line}");
    }
    assert!(files_ending(&dir, ".h5").is_empty());
}

/// The error for an unknown key quotes the line that holds the key (not the table header or
/// the line before it, where the parser's error span may start).
#[test]
fn deck_with_unknown_key_names_its_line() {
    let dir = test_dir("deck_unknown_key_line");
    let deck = write_file(
        &dir,
        "unknown.toml",
        "[run]\nseed = 1\n\n[bfs]\nscal = 3\nroots = 4\n",
    );
    let run = tessera(2, &["run", &deck], &dir);
    one_clear_error(&run, &[&deck, "line 5 (scal = 3)"]);
}

#[test]
fn deck_with_wrong_type_is_rejected() {
    let dir = test_dir("deck_wrong_type");
    let deck = write_file(&dir, "type.toml", "[graph]\nscale = \"big\"\n[bfs]\n");
    for np in NPS {
        let run = tessera(np, &["run", &deck], &dir);
        one_clear_error(&run, &[&deck, "line 2", "scale = \"big\"", "invalid type"]);
    }
}

#[test]
fn deck_with_out_of_range_value_is_rejected() {
    let dir = test_dir("deck_out_of_range");
    let deck = write_file(
        &dir,
        "range.toml",
        "[graph]\nscale = 99\n[bfs]\nroots = 4\n",
    );
    for np in NPS {
        let run = tessera(np, &["run", &deck], &dir);
        one_clear_error(&run, &[&deck, "[graph] scale = 99", "out of range"]);
        // The same value given as a flag names the command line as its source.
        let run = tessera(np, &["bfs", "--scale", "99"], &dir);
        one_clear_error(&run, &["command line", "[graph] scale = 99"]);
    }
}

#[test]
fn missing_deck_is_reported() {
    let dir = test_dir("deck_missing");
    let deck = dir.join("no-such-deck.toml");
    let deck = deck.to_str().unwrap();
    for np in NPS {
        let run = tessera(np, &["run", deck], &dir);
        one_clear_error(&run, &[deck, "cannot read deck"]);
        let run = tessera(np, &["bfs", "--deck", deck, "--scale", "5"], &dir);
        one_clear_error(&run, &[deck, "cannot read deck"]);
    }
}

#[test]
fn gpu_transport_is_checked_and_the_cpu_path_ignores_it() {
    let dir = test_dir("gpu_transport");
    let deck = write_file(
        &dir,
        "transport.toml",
        "[run]\ngpu_transport = \"infiniband\"\n[graph]\nscale = 5\n[bfs]\n",
    );
    for np in NPS {
        let run = tessera(np, &["run", &deck], &dir);
        one_clear_error(&run, &[&deck, "line 2", "gpu_transport", "unknown variant"]);
    }
    // On the CPU the setting is read and left unused: exchanges go over MPI.
    let out = dir.join("cpu.h5");
    let run = tessera(
        2,
        &[
            "bfs",
            "--scale",
            "6",
            "--roots",
            "2",
            "--device",
            "cpu",
            "--gpu-transport",
            "nccl",
            "--output",
            out.to_str().unwrap(),
        ],
        &dir,
    );
    run.assert_ok();
    assert_eq!(H5::open(&out).attr_str("bfs", "transport"), "mpi");
}

#[test]
fn gpu_device_is_refused_clearly() {
    let dir = test_dir("device_gpu");
    let deck = write_file(
        &dir,
        "gpu.toml",
        "[run]\ndevice = \"gpu\"\n[graph]\nscale = 5\n[bfs]\n",
    );
    for np in NPS {
        let run = tessera(np, &["bfs", "--scale", "5", "--device", "gpu"], &dir);
        let line = one_clear_error(&run, &["device = \"gpu\" was requested, but"]);
        assert!(line.starts_with("tessera: error: "), "{line}");
        let run = tessera(np, &["run", &deck], &dir);
        one_clear_error(&run, &["device = \"gpu\" was requested, but"]);
        let run = tessera(np, &["bfs", "--scale", "5", "--construction", "gpu"], &dir);
        one_clear_error(&run, &["construction = \"gpu\" needs a run on GPUs"]);
    }
    assert!(files_ending(&dir, ".h5").is_empty());
}

#[test]
fn graph_too_large_for_host_memory_is_refused_clearly() {
    let dir = test_dir("host_memory");
    for np in NPS {
        // SCALE 36 needs terabytes: refused before any edge is generated.
        let run = tessera(np, &["bfs", "--scale", "36"], &dir);
        one_clear_error(&run, &["does not fit", "of host memory", "largest SCALE"]);
    }
    assert!(files_ending(&dir, ".h5").is_empty());
}

#[test]
fn a_flag_of_another_workload_is_refused() {
    let dir = test_dir("foreign_flag");
    let deck = dir.join("langford.toml");
    std::fs::write(&deck, "[langford]\nn = 7\n").unwrap();
    for np in [1, 3] {
        let run = tessera(np, &["run", deck.to_str().unwrap(), "--scale", "5"], &dir);
        one_clear_error(&run, &["--scale", "tessera langford --help"]);
        one_clear_error(
            &run,
            &["--scale is not a flag of langford", "it belongs to bfs"],
        );
        let run = tessera(np, &["langford", "--n", "7", "--scale", "5"], &dir);
        one_clear_error(
            &run,
            &["--scale is not a flag of langford", "it belongs to bfs"],
        );
    }
}

#[test]
fn an_unwritable_output_is_refused_before_any_compute() {
    let dir = test_dir("unwritable_output");
    for np in [1, 2] {
        let run = tessera(
            np,
            &["bfs", "--scale", "12", "--output", "/proc/tessera/x.h5"],
            &dir,
        );
        one_clear_error(&run, &["/proc/tessera/x.h5"]);
        assert!(
            !run.stderr.contains(" took "),
            "the graph was built first:\n{}",
            run.stderr
        );
    }
}

/// Every file named as an input (deck, graph, mesh, a `.ele`'s `.node`, schedule) is refused
/// unless it is a regular file, before anything opens it: a FIFO blocked the reader forever,
/// a device like /dev/zero was read until memory ran out.
#[test]
fn an_input_that_is_no_regular_file_is_refused_before_opening() {
    let dir = test_dir("harness_input_special");
    for name in [
        "pipe.el",
        "pipe.mtx",
        "pipe.msh",
        "cells.node",
        "pipe.h5",
        "pipe.toml",
        "pipe.txt",
    ] {
        mknod(&dir.join(name), &["p"]);
    }
    mknod(&dir.join("zero.el"), &["c", "1", "5"]);
    write_file(&dir, "cells.ele", "1 4 0\n1 1 2 3 4\n");
    let cases: [(&[&str], &str); 10] = [
        (
            &["bfs", "--input", "pipe.el"],
            "pipe.el: cannot open: it is a FIFO",
        ),
        (
            &["cc", "--input", "pipe.mtx"],
            "pipe.mtx: cannot open: it is a FIFO",
        ),
        (
            &["bfs", "--input", "zero.el"],
            "zero.el: cannot open: it is a character device",
        ),
        (
            &["bfs", "--input", "."],
            ".: cannot open: it is a directory",
        ),
        (
            &["mesh", "smooth", "pipe.msh"],
            "pipe.msh: cannot read: it is a FIFO",
        ),
        (
            &["mesh", "smooth", "cells.ele"],
            "cells.node: cannot read: it is a FIFO",
        ),
        (
            &["mesh", "smooth", "pipe.h5"],
            "pipe.h5: cannot open: it is a FIFO",
        ),
        (
            &["cortex", "--schedule-file", "pipe.txt"],
            "pipe.txt: cannot read the schedule file: it is a FIFO",
        ),
        (
            &["run", "pipe.toml"],
            "pipe.toml: cannot read deck: it is a FIFO",
        ),
        (
            &["bfs", "--deck", "pipe.toml"],
            "pipe.toml: cannot read deck: it is a FIFO",
        ),
    ];
    for (i, (args, said)) in cases.into_iter().enumerate() {
        let mut all = args.to_vec();
        all.extend(["--device", "cpu", "--output", "never.h5"]);
        let run = tessera(np_for(0, i), &all, &dir);
        one_clear_error(&run, &[said, "not a regular file"]);
        assert_eq!(run.status.code(), Some(1), "{}", run.what);
    }
    assert!(!dir.join("never.h5").exists());
}

/// Numbers that start with '-' but are not plain numbers to clap (a list, "-inf") reach the
/// flag's range check instead of being taken for flags; an integer flag left without its
/// value still says so.
#[test]
fn numbers_starting_with_a_minus_reach_the_range_checks() {
    let dir = test_dir("harness_minus_numbers");
    let cases: [(&[&str], &str); 6] = [
        (
            &["bfs", "--alpha", "-inf"],
            "[bfs] alpha = -inf is out of range",
        ),
        (
            &["generate", "--generator", "lattice", "--dims", "-4,4"],
            "--dims = -4 is out of range",
        ),
        (
            &[
                "mesh", "generate", "box", "2", "2", "2", "--extent", "-1,1,1",
            ],
            "[mesh] extent: expected three lengths from 1e-6 to 1e6",
        ),
        (
            &["cortex", "--probe", "-1,3"],
            "--probe = -1 is out of range",
        ),
        (
            &["spin", "--beta", "-0.5,1"],
            "[spin] beta = -0.5 is out of range",
        ),
        (
            &["bfs", "--scale", "--roots", "4"],
            "a value is required for '--scale <SCALE>'",
        ),
    ];
    for (i, (args, said)) in cases.into_iter().enumerate() {
        let run = tessera(np_for(0, i), args, &dir);
        let line = one_clear_error(&run, &[said]);
        assert!(line.starts_with("tessera: error: command line: "), "{line}");
    }
}

/// Two values of a list flag that would store their results under one name (equal as
/// parsed, or as the name formats them) are refused before any compute, with one line naming
/// the key; the output is never begun.
#[test]
fn repeated_list_values_are_refused_before_any_compute() {
    let dir = test_dir("repeated_values");
    let spin = ["spin", "--l", "4", "--equilibration", "0", "--sweeps", "10"];
    let cases: [(&[&str], &[&str], &str); 5] = [
        (&spin, &["--beta", "0.4,0.4"], "[spin] beta = 0.4, 0.4"),
        (
            &spin,
            &["--temperature", "2,2"],
            "[spin] temperature = 2, 2",
        ),
        (
            &spin,
            &["--beta", "0.3,0.4,0.40000000000000002"],
            "[spin] beta = 0.4, 0.4",
        ),
        (
            &["percolation", "--l", "8", "--samples", "2"],
            &["--p", "0.5,0.5"],
            "[percolation] p = 0.5, 0.5",
        ),
        (
            &[
                "cortex", "--l", "16", "--r", "4", "--k", "10", "--steps", "20",
            ],
            &["--welch", "hann,blackman,hann"],
            "[cortex] welch = hann, hann",
        ),
    ];
    for (case, (workload, values, key)) in cases.into_iter().enumerate() {
        let mut all = workload.to_vec();
        all.extend(["--device", "cpu", "--output", "o.h5"]);
        all.extend(values);
        let run = tessera(np_for(case, 0), &all, &dir);
        one_clear_error(&run, &[key, "must be distinct"]);
        assert!(
            !run.stderr.contains(" took "),
            "a phase ran:\n{}",
            run.stderr
        );
        assert!(files_ending(&dir, "o.h5.tmp").is_empty() && !dir.join("o.h5").exists());
    }
}

#[test]
fn a_table_another_workload_reads_is_refused_with_its_line() {
    let dir = test_dir("foreign_table");
    let deck = dir.join("langford.toml");
    std::fs::write(
        &deck,
        "[run]\nseed = 2\n\n[graph]\nscale = 5\n\n[langford]\nn = 7\n",
    )
    .unwrap();
    let deck = deck.to_str().unwrap();
    for np in [1, 2] {
        for args in [vec!["run", deck], vec!["langford", "--deck", deck]] {
            let run = tessera(np, &args, &dir);
            one_clear_error(
                &run,
                &[
                    deck,
                    "line 4: unknown table [graph]: a langford deck has [run], [langford]",
                ],
            );
        }
    }
}
