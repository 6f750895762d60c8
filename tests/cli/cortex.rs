//! `tessera cortex` under mpirun: the raster, the pseudo-EEG and the rates are the same bits at
//! 1, 2, 3 and 4 ranks (both synapse schemes, all three integration schemes, a schedule file
//! applied mid-run); the schedule as applied is stored; bad decks, schedules and rank counts
//! give one error line naming the file and line.

use crate::common::{self, one_clear_error, tessera, test_dir, write_file, H5};
use std::path::Path;

fn run_ok(np: usize, dir: &Path, name: &str, args: &[&str]) -> H5 {
    common::run_cpu(np, dir, "cortex", name, 1, args)
}

fn assert_same(a: &H5, b: &H5, what: &str) {
    for name in ["cortex/eeg", "cortex/rate_exc", "cortex/rate_inh"] {
        let (x, y): (Vec<f64>, Vec<f64>) = (a.ds(name), b.ds(name));
        assert_eq!(x.len(), 520, "{what}: {name}");
        let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<u64>>();
        assert_eq!(bits(&x), bits(&y), "{what}: {name} differs");
    }
    for name in ["cortex/raster/step", "cortex/raster/id"] {
        let (x, y): (Vec<u64>, Vec<u64>) = (a.ds(name), b.ds(name));
        assert!(x.len() > 100, "{what}: {name} has {} items", x.len());
        assert_eq!(x, y, "{what}: {name} differs");
    }
}

/// A drug (λ_τ of the excitatory cells) and a boost in the seed's schedule-file format.
const SCHEDULE: &str = "# the seed's format\n0 SET_E.BASE_I 3.0\n0 SET_I.NOISE 3.0\n\
    20 SET_BOOST_I 0.1\n40 SET_BOOST_I 0.0\n200 SET_E.LAMBDA_TAU 3.0\n350 SET_E.LAMBDA_TAU 1.0\n";

#[test]
fn every_rank_count_gives_the_same_raster_and_eeg() {
    let dir = test_dir("cortex_ranks");
    write_file(&dir, "drug.txt", SCHEDULE);
    let base = ["--l", "24", "--r", "6", "--k", "40", "--steps", "520", "--raster"];
    let cases: [(&str, &[&str], &[usize]); 3] = [
        ("exp-seed", &[], &[1, 2, 3, 4]),
        ("table-half", &["--synapses", "table", "--integration", "half-step", "--schedule-file", "drug.txt"], &[1, 3]),
        ("exp-substeps", &["--integration", "substeps", "--substeps", "4", "--schedule-file", "drug.txt"], &[1, 2]),
    ];
    for (name, args, ranks) in cases {
        let all: Vec<&str> = base.iter().chain(args.iter()).copied().collect();
        let one = run_ok(1, &dir, &format!("{name}-np1"), &all);
        for &np in &ranks[1..] {
            let other = run_ok(np, &dir, &format!("{name}-np{np}"), &all);
            assert_same(&one, &other, &format!("{name} at np {np}"));
        }
        // The raster holds every spike the rates count.
        let spikes: Vec<u64> = one.ds("cortex/raster/step");
        let exc = one.attr::<u64>("cortex", "excitatory") as f64;
        let inh = 576.0 - exc;
        let sum = |n: &str| one.ds::<f64>(n).iter().sum::<f64>() / 1000.0;
        let counted = sum("cortex/rate_exc") * exc + sum("cortex/rate_inh") * inh;
        assert_eq!(spikes.len() as f64, counted.round(), "{name}");
        if name != "exp-seed" {
            let steps: Vec<u64> = one.ds("cortex/schedule/step");
            let values: Vec<f64> = one.ds("cortex/schedule/value");
            assert_eq!(steps, [0, 0, 20, 40, 200, 350], "{name}");
            assert_eq!(values, [3.0, 3.0, 0.1, 0.0, 3.0, 1.0], "{name}");
            let keys: Vec<String> = one
                .ds::<hdf5_metno::types::VarLenUnicode>("cortex/schedule/key")
                .iter()
                .map(|k| k.as_str().to_string())
                .collect();
            let want = ["e.base_i", "i.noise", "boost_i", "boost_i", "e.lambda_tau", "e.lambda_tau"];
            assert_eq!(keys, want, "{name}");
        }
    }
}

#[test]
fn bad_decks_and_schedules_give_one_error_line() {
    let dir = test_dir("cortex_errors");
    write_file(&dir, "unordered.txt", "0 SET_E.NOISE 4\n30 SET_I.NOISE 2\n10 SET_E.TAU 5\n");
    write_file(&dir, "unknown.txt", "0 SET_E.LAMDA_TAU 2\n");
    write_file(&dir, "late.txt", "# after the end\n\n500 SET_BOOST_I 0.1\n");
    write_file(
        &dir,
        "deck.toml",
        "[cortex]\nl = 16\nr = 4\nsteps = 100\n\n[[cortex.schedule]]\nstep = 0\nset = \"e.noise\"\nvalue = 2.0\n\n[[cortex.schedule]]\nstep = 10\nset = \"e.volume\"\nvalue = 1.0\n",
    );
    let cases: [(&[&str], &[&str]); 6] = [
        (&["--schedule-file", "unordered.txt"], &["unordered.txt", "line 3", "in order"]),
        (&["--schedule-file", "unknown.txt"], &["unknown.txt", "line 1", "unknown setting", "e.lambda_tau"]),
        (&["--schedule-file", "late.txt"], &["late.txt", "line 3", "past the run"]),
        (&["--schedule-file", "missing.txt"], &["missing.txt", "cannot read"]),
        (&["--deck", "deck.toml"], &["deck.toml", "line 11", "entry 2", "unknown setting \"e.volume\""]),
        (&["--r", "9"], &["[cortex] r = 9", "at most L/2 = 8"]),
    ];
    for (args, needles) in cases {
        let mut all = vec!["cortex", "--l", "16", "--r", "4", "--steps", "100", "--output", "x.h5"];
        all.extend_from_slice(args);
        one_clear_error(&tessera(1, &all, &dir), needles);
    }
    // Five ranks would hold 3 rows each of a lattice whose inputs reach 4 rows.
    let run = tessera(5, &["cortex", "--l", "16", "--r", "4", "--steps", "10", "--output", "y.h5"], &dir);
    one_clear_error(&run, &["at least r = 4", "use at most 4 ranks"]);
}

#[test]
fn a_stopped_run_resumes_to_the_same_series_on_other_ranks() {
    let dir = test_dir("cortex_resume");
    write_file(&dir, "drug.txt", SCHEDULE);
    let args = [
        "--l", "24", "--r", "6", "--k", "40", "--steps", "1100", "--raster", "--synapses", "table", "--schedule-file", "drug.txt",
    ];
    let whole = run_ok(1, &dir, "whole", &args);
    let mut first: Vec<&str> = args.to_vec();
    first.extend(["--stop-after", "300"]);
    let stopped = tessera(2, &[&["cortex", "--device", "cpu", "--threads", "1", "--output", "split.h5"], &first[..]].concat(), &dir);
    stopped.assert_ok();
    assert!(stopped.stdout.contains("stopped after 512 steps"), "{}", stopped.stdout);
    let mut second: Vec<&str> = args.to_vec();
    second.push("--resume");
    let resumed = run_ok(3, &dir, "split", &second);
    for name in ["cortex/eeg", "cortex/rate_exc", "cortex/rate_inh"] {
        let (a, b): (Vec<f64>, Vec<f64>) = (whole.ds(name), resumed.ds(name));
        assert_eq!(a.len(), 1100, "{name}");
        assert_eq!(a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), b.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), "{name}");
    }
    for name in ["cortex/raster/step", "cortex/raster/id", "cortex/schedule/step"] {
        assert_eq!(whole.ds::<u64>(name), resumed.ds::<u64>(name), "{name}");
    }
    assert!(!resumed.has("cortex/checkpoint"), "the finished file keeps no checkpoint");
}
