//! `tessera langford` under mpirun: known counts with both methods, independence from the task
//! depth, the rank count and the farm mode, the HDF5 result and ledger, resuming a killed run,
//! an existing ledger refused without --resume or --force, too many tasks refused before any
//! compute, and clear errors for bad n, foreign ledgers and damaged ones.

use crate::common::{
    one_clear_error, refuse_damaged, tessera, tessera_bin, test_dir, Damage, H5Edit, H5,
};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Known L(2,n) (the spec's table), and the zero classes n ≡ 1, 2 (mod 4): the counts
/// small enough for CI (each a second or less on two cores).
const KNOWN: &[(u32, u64)] = &[
    (1, 0),
    (2, 0),
    (3, 1),
    (4, 1),
    (5, 0),
    (6, 0),
    (7, 26),
    (8, 150),
    (9, 0),
    (10, 0),
    (11, 17_792),
    (12, 108_144),
];

/// Known counts that take minutes on the CPU by Miller's search (L(2,16): about 200 s on two
/// cores): `scripts/test-long` runs them.
const KNOWN_LARGE: &[(u32, u64)] = &[(15, 39_809_640), (16, 326_721_800)];

/// Run one count and return the printed L(2,n) and the result file.
fn count(np: usize, dir: &Path, name: &str, args: &[&str]) -> (String, H5) {
    let out = format!("{name}.h5");
    let mut all = vec!["langford", "--device", "cpu", "--output", &out];
    all.extend_from_slice(args);
    let run = tessera(np, &all, dir);
    run.assert_ok();
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("L(2,"))
        .unwrap_or_else(|| panic!("no count printed:\n{}", run.stdout));
    let value = line.split(" = ").nth(1).unwrap().to_string();
    let h5 = H5::open(&dir.join(&out));
    assert_eq!(
        h5.attr_str("langford", "count"),
        value,
        "{name}: file and stdout"
    );
    (value, h5)
}

#[test]
fn both_methods_give_every_known_count() {
    check_known_counts("langford_known", KNOWN);
}

#[test]
#[ignore = "minutes on a CPU: run by scripts/test-long"]
fn both_methods_give_the_large_known_counts() {
    check_known_counts("langford_known_large", KNOWN_LARGE);
}

/// Godfrey's method unpruned (the default) and pruned, and Miller's.
const VARIANTS: &[(&str, &[&str])] = &[
    ("godfrey", &["--method", "godfrey"]),
    (
        "godfrey-pruned",
        &["--method", "godfrey", "--prune", "true"],
    ),
    ("miller", &["--method", "miller"]),
];

fn check_known_counts(test: &str, known: &[(u32, u64)]) {
    let dir = test_dir(test);
    for &(n, want) in known {
        let n_arg = n.to_string();
        for &(method, flags) in VARIANTS {
            let mut args = vec!["--n", &n_arg];
            args.extend_from_slice(flags);
            let (got, h5) = count(1, &dir, &format!("{method}{n}"), &args);
            assert_eq!(got, want.to_string(), "L(2,{n}) by {method}");
            let words: Vec<u64> = h5
                .file
                .group("langford")
                .unwrap()
                .attr("count_words")
                .unwrap()
                .read_raw()
                .unwrap();
            assert_eq!(words[0], want, "count_words of L(2,{n}) by {method}");
            assert!(words[1..].iter().all(|&w| w == 0));
            assert_eq!(h5.attr::<u8>("langford", "complete"), 1);
        }
    }
}

/// Pruned Godfrey counts at 1 to 4 ranks: every known count up to n = 15 at one rank, and
/// each at one more rank count in turn (2, 3, 4, 2, ...) (launches, not counts, are what this
/// costs: the whole matrix is the ignored test below, in scripts/test-long;
/// L(2,16) is finished pruned at 2 ranks by the resume test, and counted pruned at 1 by
/// scripts/test-long); the HDF5 file reports the points visited apart from the points of the
/// space.
#[test]
#[ignore = "CI time; the whole matrix is its ignored neighbour: run by scripts/test-long"]
fn pruned_godfrey_gives_the_known_counts_at_1_to_4_ranks() {
    check_pruned_counts("langford_pruned_ranks", |i| vec![1, 2 + i % 3]);
}

#[test]
#[ignore = "every known count at every rank count: run by scripts/test-long"]
fn pruned_godfrey_gives_every_known_count_at_every_rank_count() {
    check_pruned_counts("langford_pruned_all", |_| (1..=4).collect());
}

/// Pruned counts of the known n up to 15 (the i-th at the rank counts `nps(i)`).
fn check_pruned_counts(test: &str, nps: impl Fn(usize) -> Vec<usize>) {
    let dir = test_dir(test);
    let mut cases: Vec<(usize, u32, u64)> = Vec::new();
    for (i, &(n, want)) in KNOWN.iter().chain(&KNOWN_LARGE[..1]).enumerate() {
        for np in nps(i) {
            cases.push((np, n, want));
        }
    }
    for (np, n, want) in cases {
        let name = format!("pruned-n{n}-np{np}");
        let (got, h5) = count(np, &dir, &name, &["--n", &n.to_string(), "--prune", "true"]);
        assert_eq!(got, want.to_string(), "{name}");
        if want == 0 && n % 4 != 0 && n % 4 != 3 {
            continue;
        }
        assert_eq!(h5.attr::<u8>("langford", "prune"), 1, "{name}");
        let points: Vec<u64> = h5.ds("langford/ledger/points");
        let visited: Vec<u64> = h5.ds("langford/ledger/visited");
        assert!(points.iter().zip(&visited).all(|(p, v)| v <= p), "{name}");
        let (p, v): (u64, u64) = (points.iter().sum(), visited.iter().sum());
        assert_eq!(h5.attr::<f64>("langford", "points"), p as f64, "{name}");
        assert_eq!(h5.attr::<f64>("langford", "visited"), v as f64, "{name}");
        if n >= 11 {
            assert!(v < p, "{name}: nothing pruned");
        }
    }
}

/// A slice (--stop-after K) runs K tasks spread over the task range and projects the run.
#[test]
fn stop_after_samples_tasks_across_the_range() {
    let dir = test_dir("langford_slice");
    let out = "slice.h5";
    let run = tessera(
        2,
        &[
            "langford",
            "--n",
            "12",
            "--depth",
            "12",
            "--device",
            "cpu",
            "--output",
            out,
            "--stop-after",
            "8",
        ],
        &dir,
    );
    run.assert_ok();
    assert!(run.stdout.contains("projected_seconds:"), "{}", run.stdout);
    let h5 = H5::open(&dir.join(out));
    let tasks = h5.attr::<u64>("langford", "tasks");
    let mut ids: Vec<u64> = h5.ds("langford/ledger/task");
    ids.sort_unstable();
    let want: Vec<u64> = (0..8).map(|k| k * tasks / 8).collect();
    assert_eq!(ids, want, "8 of {tasks} tasks, evenly spaced");
    let seconds: Vec<f64> = h5.ds("langford/ledger/seconds");
    assert!(seconds.iter().all(|&s| s >= 0.0) && seconds.len() == 8);
    drop(h5);
    // The rest, resumed, gives the count.
    let run = tessera(
        2,
        &[
            "langford", "--n", "12", "--depth", "12", "--device", "cpu", "--output", out,
            "--resume",
        ],
        &dir,
    );
    run.assert_ok();
    assert!(run.stdout.contains("L(2,12) = 108144"), "{}", run.stdout);
}

/// Every depth at every rank count, the farm modes alternating (so each mode meets every
/// depth and every rank count: launches are what this costs).
#[test]
#[ignore = "CI time (about 15 s of launches): run by scripts/test-long"]
fn count_does_not_depend_on_depth_ranks_or_farm_mode() {
    let dir = test_dir("langford_independent");
    let cases: &[(&str, &[&str])] = &[("godfrey", &["4", "8", "14"]), ("miller", &["1", "2", "3"])];
    for &(method, depths) in cases {
        for np in 1..=4 {
            for (d, &depth) in depths.iter().enumerate() {
                let farm = ["static", "dynamic"][(np + d) % 2];
                let name = format!("{method}-np{np}-d{depth}-{farm}");
                let args = [
                    "--n", "12", "--method", method, "--depth", depth, "--farm", farm,
                ];
                let (got, h5) = count(np, &dir, &name, &args);
                assert_eq!(got, "108144", "{name}");
                // Every task is in the ledger exactly once.
                let mut tasks: Vec<u64> = h5.ds("langford/ledger/task");
                tasks.sort_unstable();
                let expected: Vec<u64> = (0..h5.attr::<u64>("langford", "tasks")).collect();
                assert_eq!(tasks, expected, "{name}");
                let ranks: Vec<u32> = h5.ds("langford/ledger/rank");
                assert!(ranks.iter().all(|&r| (r as usize) < np), "{name}");
                if farm == "static" {
                    // Rank-strided: task t ran on rank t mod np.
                    let ids: Vec<u64> = h5.ds("langford/ledger/task");
                    assert!(
                        ids.iter()
                            .zip(&ranks)
                            .all(|(&t, &r)| t % np as u64 == u64::from(r)),
                        "{name}"
                    );
                }
            }
        }
    }
}

#[test]
fn godfrey_ledger_sums_to_the_total_and_stores_exact_words() {
    let dir = test_dir("langford_ledger");
    let (_, h5) = count(2, &dir, "g11", &["--n", "11", "--depth", "10"]);
    let words: Vec<u64> = h5.ds("langford/ledger/partial_sum_words");
    assert_eq!(h5.shape("langford/ledger/partial_sum_words")[1], 2);
    // Partial sums are exact 128-bit two's complement: their sum is 2^23 L(2,11).
    let total = words
        .chunks(2)
        .map(|w| (u128::from(w[1]) << 64) | u128::from(w[0]))
        .fold(0u128, u128::wrapping_add);
    assert_eq!(total, 17_792u128 << 23);
    let points: Vec<u64> = h5.ds("langford/ledger/points");
    assert!(points.iter().all(|&p| p == 1 << 12));
    let devices: Vec<hdf5_metno::types::VarLenUnicode> = h5.ds("langford/ledger/device");
    assert!(devices.iter().all(|d| d.as_str().starts_with("cpu")));
    assert_eq!(h5.attr_str("", "program"), "tessera");
}

/// Wait until the ledger at `path` holds at least `tasks` tasks; returns how many it holds.
fn wait_for_ledger(path: &Path, tasks: u64, limit: Duration) -> u64 {
    let start = Instant::now();
    while start.elapsed() < limit {
        // The file is replaced by renames; an open may meet it mid-swap, so retry.
        if let Ok(file) = hdf5_metno::File::open(path) {
            if let Ok(done) = file
                .group("langford")
                .and_then(|g| g.attr("tasks_done"))
                .and_then(|a| a.read_scalar::<u64>())
            {
                if done >= tasks {
                    return done;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the ledger {} never reached {tasks} tasks", path.display());
}

/// Wait until the lock `path` is gone: an interrupted run removes its own lock before it
/// ends the job, or a requeued job on another node could not resume.
fn wait_until_unlocked(path: &std::path::Path, limit: Duration) {
    let start = std::time::Instant::now();
    while path.exists() {
        assert!(
            start.elapsed() < limit,
            "the interrupted run left its lock {}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn killed_run_resumes_to_the_same_count() {
    let dir = test_dir("langford_resume");
    let out = dir.join("killed.h5");
    let child = crate::common::mpirun_command()
        .args(["-np", "2", "--oversubscribe"])
        .arg(tessera_bin())
        // The default depth: many tasks per rank, so some are in the ledger within seconds.
        .args(["langford", "--n", "16", "--device", "cpu", "--output"])
        .arg(&out)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mpirun");
    let seen = wait_for_ledger(&out, 20, Duration::from_secs(120));
    // SIGTERM, as a best-effort SLURM queue or `scancel` sends it; mpirun passes it on.
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(!output.status.success(), "a killed run must not exit 0");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("rerun with --resume"), "{stderr}");
    let h5 = H5::open(&out);
    let done = h5.attr::<u64>("langford", "tasks_done");
    let total = h5.attr::<u64>("langford", "tasks");
    assert_eq!(h5.attr::<u8>("langford", "complete"), 0);
    assert!(!h5.attr_names("langford").contains(&"count".to_string()));
    assert!(
        done >= seen && done < total,
        "ledger holds {done} of {total} tasks (saw {seen})"
    );
    drop(h5);
    // The interrupted ledger is never wiped by a run without --resume.
    let before = std::fs::read(&out).unwrap();
    one_error(
        2,
        &dir,
        &[
            "langford",
            "--n",
            "16",
            "--depth",
            "12",
            "--device",
            "cpu",
            "--output",
            "killed.h5",
        ],
        &["killed.h5", "exists", "--force"],
    );
    assert_eq!(std::fs::read(&out).unwrap(), before, "the ledger changed");
    // mpirun may exit while its killed ranks are still going away; until then their lock
    // rightly refuses another writer, and then it must be gone.
    wait_until_unlocked(&dir.join("killed.h5.lock"), Duration::from_secs(60));
    // On one rank, whose default depth differs: a resumed run takes the ledger's.
    let run = tessera(
        1,
        &[
            "langford",
            "--n",
            "16",
            "--device",
            "cpu",
            "--output",
            "killed.h5",
            "--resume",
            // The rest pruned: a ledger resumes in either mode (the task sums are the same).
            "--prune",
            "true",
        ],
        &dir,
    );
    run.assert_ok();
    assert!(run.stdout.contains("L(2,16) = 326721800"), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!("({done} from the ledger)")),
        "{}",
        run.stdout
    );
    let h5 = H5::open(&out);
    assert_eq!(h5.attr::<u64>("langford", "tasks_done"), total);
    assert_eq!(h5.attr::<u8>("langford", "complete"), 1);
    let mut tasks: Vec<u64> = h5.ds("langford/ledger/task");
    tasks.sort_unstable();
    tasks.dedup();
    assert_eq!(tasks.len() as u64, total, "no task twice, none missing");
}

/// `tessera ARGS` on `np` ranks fails with one clear error line containing every needle.
fn one_error(np: usize, dir: &Path, args: &[&str], needles: &[&str]) {
    one_clear_error(&tessera(np, args, dir), needles);
}

#[test]
fn bad_n_and_depth_are_refused_clearly() {
    let dir = test_dir("langford_bad_n");
    for np in [1, 3] {
        for n in ["0", "-3", "33"] {
            one_error(
                np,
                &dir,
                &["langford", "--n", n],
                &["[langford] n", n, "1 to 32"],
            );
        }
        one_error(
            np,
            &dir,
            &["langford", "--n", "12", "--depth", "5"],
            &["[langford] depth = 5", "even"],
        );
        one_error(
            np,
            &dir,
            &[
                "langford", "--n", "12", "--method", "miller", "--depth", "13",
            ],
            &["depth = 13", "1 to n = 12"],
        );
        one_error(np, &dir, &["langford"], &["[langford] n is missing"]);
    }
    let deck = dir.join("bad.toml");
    std::fs::write(&deck, "[langford]\nn = 40\n").unwrap();
    one_error(
        2,
        &dir,
        &["run", deck.to_str().unwrap()],
        &["bad.toml", "[langford] n = 40"],
    );
}

#[test]
fn ledger_of_another_job_is_refused() {
    let dir = test_dir("langford_foreign");
    count(1, &dir, "seven", &["--n", "7"]);
    for np in [1, 2] {
        one_error(
            np,
            &dir,
            &["langford", "--n", "8", "--output", "seven.h5", "--resume"],
            &["seven.h5", "holds n = 7", "this run is n = 8"],
        );
        one_error(
            np,
            &dir,
            &[
                "langford", "--n", "7", "--method", "miller", "--output", "seven.h5", "--resume",
            ],
            &["method godfrey", "method miller"],
        );
    }
    std::fs::write(dir.join("junk.h5"), "not hdf5").unwrap();
    one_error(
        1,
        &dir,
        &["langford", "--n", "7", "--output", "junk.h5", "--resume"],
        &["junk.h5", "cannot resume"],
    );
}

/// A damaged ledger is refused with one line naming the file and the key: a task listed
/// twice or no task of the job (the farm would skip the one and sum the other twice) and a
/// depth outside n's range (which sized the tasks, or panicked) when it is read, partial sums
/// truncated, of another shape or of another type (HDF5's own text, or a quiet conversion),
/// naming the shape or type expected; a partial sum changed, found only once every task is
/// summed, names the ledger too.
#[test]
fn damaged_ledgers_are_refused_naming_the_file() {
    let dir = test_dir("langford_damaged");
    let stop = [
        "langford",
        "--device",
        "cpu",
        "--n",
        "11",
        "--depth",
        "10",
        "--stop-after",
        "3",
        "--output",
        "stopped.h5",
    ];
    tessera(1, &stop, &dir).assert_ok();
    let h5 = H5::open(&dir.join("stopped.h5"));
    let tasks: Vec<u64> = h5.ds("langford/ledger/task");
    let shape = h5.shape("langford/ledger/partial_sum_words");
    let mut words: Vec<u64> = h5.ds("langford/ledger/partial_sum_words");
    words[0] = words[0].wrapping_add(1);
    let seconds: Vec<f64> = h5.ds("langford/ledger/seconds");
    drop(h5);
    assert_eq!(tasks.len(), 3);
    let task = |ids: [u64; 3]| move |f: &H5Edit| f.dataset("langford/ledger/task", &[3], &ids);
    let sums = "langford/ledger/partial_sum_words";
    let width = shape[1];
    let expected = format!(
        "expected [3, {width}] (one row per task of the ledger, one column per word of its sum)"
    );
    let short = format!("/{sums} has shape [2, {width}]");
    let flat = format!("/{sums} has shape [{}]", 3 * width);
    let floats: Vec<f64> = words.iter().map(|&w| w as f64).collect();
    let held = format!("/{sums} holds float64");
    let damage: &[Damage] = &[
        (
            &task([tasks[0], tasks[1], tasks[1]]),
            &["/langford/ledger/task", &format!("task {} twice", tasks[1])],
        ),
        (
            &task([tasks[0], tasks[1], 136]),
            &["/langford/ledger/task", "task 136", "below 136"],
        ),
        (
            &|f| f.attr("langford", "depth", 200u64),
            &["/langford/depth = 200", "even integer from 4 to 2n = 22"],
        ),
        (
            &|f| f.attr("langford", "depth", 9u64),
            &["/langford/depth = 9", "even integer from 4 to 2n = 22"],
        ),
        (
            &|f| f.dataset("langford/ledger/partial_sum_words", &shape, &words),
            &["the sum is wrong", "3 of the 136 tasks read back"],
        ),
        (
            &|f| f.dataset(sums, &[2, width], &words[..2 * width]),
            &[&short, &expected],
        ),
        (
            &|f| f.dataset(sums, &[3 * width], &words),
            &[&flat, &expected],
        ),
        (
            &|f| f.dataset(sums, &shape, &floats),
            &[&held, "expected uint64"],
        ),
        (
            &|f| f.dataset("langford/ledger/seconds", &[2], &seconds[..2]),
            &[
                "/langford/ledger/seconds has shape [2]",
                "expected [3] (one per task of the ledger, as /task)",
            ],
        ),
        (
            &|f| f.dataset("langford/ledger/rank", &[3], &[0.0f64; 3]),
            &["/langford/ledger/rank holds float64", "expected uint32"],
        ),
    ];
    let resume = [
        "langford",
        "--device",
        "cpu",
        "--n",
        "11",
        "--resume",
        "--output",
        "damaged.h5",
    ];
    refuse_damaged(&dir, "stopped.h5", 2, &resume, damage);
}

/// A ledger cut short (an interrupted copy) or not HDF5 at all is refused in plain words
/// naming the file, not in the HDF5 library's, and the other rank does not hang.
#[test]
fn cut_or_foreign_ledgers_are_refused_in_plain_words() {
    let dir = test_dir("langford_cut");
    count(1, &dir, "whole", &["--n", "11", "--depth", "10"]);
    let bytes = std::fs::read(dir.join("whole.h5")).unwrap();
    let half = bytes.len() / 2;
    let resume = [
        "langford", "--device", "cpu", "--n", "11", "--resume", "--output", "bad.h5",
    ];
    std::fs::write(dir.join("bad.h5"), &bytes[..half]).unwrap();
    let size = format!("{half} bytes of the {}", bytes.len());
    one_error(2, &dir, &resume, &["bad.h5", "cut short", &size]);
    std::fs::write(dir.join("bad.h5"), b"not a ledger").unwrap();
    one_error(2, &dir, &resume, &["bad.h5", "not an HDF5 file"]);
}

/// An existing result is refused before any compute unless --resume (which continues it) or
/// --force (which starts over); a finished ledger resumed says every task is done.
#[test]
fn existing_ledger_needs_resume_or_force() {
    let dir = test_dir("langford_existing");
    let args = ["--n", "11", "--depth", "10"];
    count(2, &dir, "done", &args);
    let path = dir.join("done.h5");
    let before = std::fs::read(&path).unwrap();
    for np in [1, 2] {
        let mut all = vec!["langford", "--device", "cpu", "--output", "done.h5"];
        all.extend_from_slice(&args);
        one_error(np, &dir, &all, &["done.h5", "exists", "--force"]);
        assert_eq!(std::fs::read(&path).unwrap(), before, "the ledger changed");
    }
    // Resumed, the finished ledger runs nothing and gives the count again.
    let (got, h5) = count(2, &dir, "done", &["--n", "11", "--depth", "10", "--resume"]);
    assert_eq!(got, "17792");
    assert_eq!(h5.attr::<u64>("langford", "tasks_run"), 0);
    assert_eq!(
        h5.attr::<u64>("langford", "tasks_resumed"),
        h5.attr::<u64>("langford", "tasks")
    );
    assert_eq!(h5.attr::<u8>("langford", "complete"), 1);
    drop(h5);
    // --force starts over.
    let (got, h5) = count(1, &dir, "done", &["--n", "11", "--depth", "10", "--force"]);
    assert_eq!(got, "17792");
    assert_eq!(h5.attr::<u64>("langford", "tasks_resumed"), 0);
    assert!(h5.attr_names("phases").contains(&"farm".to_string()));
}

/// A depth whose tasks cannot fit is refused within seconds with one line naming the
/// largest depth that fits, at 1 and 3 ranks.
#[test]
fn too_many_tasks_are_refused_quickly() {
    let dir = test_dir("langford_sizes");
    for np in [1, 3] {
        let started = Instant::now();
        one_error(
            np,
            &dir,
            &[
                "langford", "--n", "32", "--depth", "64", "--device", "cpu", "--output", "big.h5",
            ],
            &["depth 64", "does not fit", "largest depth that fits"],
        );
        assert!(started.elapsed() < Duration::from_secs(60));
    }
    one_error(
        1,
        &dir,
        &[
            "langford", "--n", "32", "--method", "miller", "--depth", "20", "--device", "cpu",
            "--output", "big.h5",
        ],
        &["depth 20", "does not fit", "largest depth that fits"],
    );
    assert!(!dir.join("big.h5").exists());
}

#[test]
fn deck_runs_langford() {
    let dir = test_dir("langford_deck");
    let deck = dir.join("l.toml");
    std::fs::write(&deck, "[run]\noutput = \"deck.h5\"\ndevice = \"cpu\"\n[langford]\nn = 8\nmethod = \"miller\"\nfarm = \"static\"\n").unwrap();
    let run = tessera(2, &["run", deck.to_str().unwrap()], &dir);
    run.assert_ok();
    assert!(run.stdout.contains("L(2,8) = 150"), "{}", run.stdout);
    let h5 = H5::open(&dir.join("deck.h5"));
    assert_eq!(h5.attr_str("langford", "method"), "miller");
    assert!(h5.attr_str("", "deck").contains("[langford]"));
}
