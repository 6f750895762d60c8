//! The two BFS validators (issue 31): the depth validator (`--validator device`, the default:
//! on the CPU the twin of the GPU's kernel, the search's depths as a witness and one exchange
//! per root) and the host validator (`--validator host`, levels found by following parents)
//! reach the same verdicts. Both accept the searches of a Kronecker graph, with the same
//! depths and edge counts, in 1D and 2D; both reject a parent array corrupted on purpose
//! (TESSERA_BFS_CORRUPT: a cycle, a wrong depth, a parent that is no neighbour, an unreached
//! vertex of the component), for the same root, at np 1 to 4.

use crate::common::outcome::*;
use crate::common::*;

const KINDS: [&str; 4] = ["cycle", "depth", "edge", "unreached"];

/// The root a validation error line names.
fn failed_root(line: &str) -> u64 {
    let rest = line
        .split("validation failed for root ")
        .nth(1)
        .unwrap_or_else(|| panic!("no root in {line:?}"));
    rest.split(':').next().unwrap().trim().parse().unwrap()
}

/// The root whose validation failed, for each validator, with TESSERA_BFS_CORRUPT=`kind`.
fn rejected_roots(np: usize, kind: &str, dir: &std::path::Path) -> Vec<u64> {
    ["device", "host"]
        .iter()
        .map(|validator| {
            let args = [
                "bfs",
                "--scale",
                "9",
                "--roots",
                "2",
                "--seed",
                "4",
                "--validator",
                validator,
                "--output",
                "corrupt.h5",
            ];
            let env = [("TESSERA_BFS_CORRUPT", kind)];
            let run = mpirun_program(np, &tessera_bin(), &args, &env, dir);
            let line = one_clear_error(&run, &["validation failed for root", "rule '"]);
            failed_root(line)
        })
        .collect()
}

#[test]
fn both_validators_reject_each_corruption_at_every_rank_count() {
    // One kind per rank count (each kind at some count, every count run), both validators;
    // the rank counts side by side (the runs mostly wait on start-up).
    std::thread::scope(|scope| {
        for (np, kind) in (1..=4).zip(KINDS) {
            scope.spawn(move || {
                let dir = test_dir(&format!("bfs_validate_corrupt_np{np}"));
                let roots = rejected_roots(np, kind, &dir);
                assert_eq!(
                    roots[0], roots[1],
                    "np {np}, {kind}: the validators failed different searches"
                );
            });
        }
    });
}

#[test]
fn both_validators_accept_the_same_searches_in_1d_and_2d() {
    let dir = test_dir("bfs_validate_accept");
    let common = [
        "--scale",
        "10",
        "--roots",
        "8",
        "--seed",
        "9",
        "--write-depths",
        "true",
    ];
    for (np, partition) in [(2, "1d"), (4, "2d")] {
        let run = |validator: &str| {
            let name = format!("{partition}_{validator}.h5");
            let more = ["--partition", partition, "--validator", validator];
            bfs_ok(np, &dir, &name, &[&common[..], &more[..]].concat())
        };
        let (device, host) = (run("device"), run("host"));
        assert_same(
            &device,
            &host,
            &format!("np {np} {partition}: device vs host"),
        );
    }
}

/// The whole matrix (scripts/test-long): every corruption at every rank count.
#[test]
#[ignore = "long: 32 runs; scripts/test-long"]
fn every_corruption_rejected_by_both_validators_at_every_rank_count() {
    std::thread::scope(|scope| {
        for np in 1..=4 {
            scope.spawn(move || {
                for kind in KINDS {
                    let dir = test_dir(&format!("bfs_validate_all_np{np}_{kind}"));
                    let roots = rejected_roots(np, kind, &dir);
                    assert_eq!(roots[0], roots[1], "np {np}, {kind}");
                }
            });
        }
    });
}
