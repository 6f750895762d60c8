//! `tessera spin` under mpirun: the same chain (spins after k sweeps, every measurement) at
//! 1, 2, 3 and 4 ranks for each update; a run stopped and resumed, or killed by SIGTERM and
//! resumed, equals the uninterrupted run bit for bit; 2D Ising on a 4x4 torus against exact
//! enumeration of its 2^16 states (energy, |m|, specific heat within 3 error bars) for
//! Metropolis, Swendsen-Wang and Wolff, which also agree with each other; bad values and
//! damaged checkpoints give one error line. The rewired lattice: the same chain at 1 to 4
//! ranks for each update, and after a stop at 3 ranks and a resume at 2 (Wolff); at p = 0
//! Metropolis is the lattice's chain bit for bit, and Swendsen-Wang and Wolff match exact
//! enumeration; at p = 0.3 the three updates agree. Ignored (scripts/test-long): the Binder
//! cumulants of L = 16, 32, 64 cross within 1% of the 2D Ising β_c, and those of the 2D
//! 3-state Potts model near ln(1+√3); those of the rewired 3D lattice at p = 0.01 within 1%
//! of Leist's (PhD thesis, 2011) T_c(p).

use crate::common::{
    one_clear_error, refuse_damaged, terminate_once_written, tessera, test_dir, Damage, H5,
};
use std::path::Path;
use std::time::{Duration, Instant};

/// Run `tessera spin --device cpu --threads 1 --output NAME.h5 ARGS...` and open the file.
fn run_ok(np: usize, dir: &Path, name: &str, args: &[&str]) -> H5 {
    let out = format!("{name}.h5");
    let mut all = vec![
        "spin",
        "--device",
        "cpu",
        "--threads",
        "1",
        "--output",
        &out,
    ];
    all.extend_from_slice(args);
    tessera(np, &all, dir).assert_ok();
    H5::open(&dir.join(out))
}

/// The per-β series and the configurations are identical.
fn assert_same_chain(a: &H5, b: &H5, what: &str) {
    for ds in ["spin/energy", "spin/m"] {
        let (x, y) = (a.ds::<f64>(ds), b.ds::<f64>(ds));
        let same = x.len() == y.len() && x.iter().zip(&y).all(|(p, q)| p.to_bits() == q.to_bits());
        assert!(same, "{what}: {ds} differs");
    }
    assert_eq!(
        a.ds::<u8>("spin/configuration"),
        b.ds::<u8>("spin/configuration"),
        "{what}: configurations differ"
    );
}

#[test]
fn every_rank_count_gives_the_same_chain() {
    let dir = test_dir("spin_ranks");
    let cases: &[(&str, &[&str])] = &[
        ("metropolis-2d-ising", &["--l", "12", "--beta", "0.4,0.5"]),
        ("sw-2d-ising", &["--l", "10", "--update", "swendsen-wang"]),
        (
            "metropolis-3d-potts",
            &[
                "--lattice",
                "3d",
                "--l",
                "6",
                "--model",
                "potts",
                "--beta",
                "0.5",
                "--start",
                "hot",
            ],
        ),
        (
            "sw-3d-potts",
            &[
                "--lattice",
                "3d",
                "--l",
                "5",
                "--model",
                "potts",
                "--q",
                "4",
                "--beta",
                "0.6",
                "--update",
                "swendsen-wang",
            ],
        ),
        (
            "wolff-2d-ising",
            &["--l", "9", "--update", "wolff", "--clusters-per-sweep", "3"],
        ),
    ];
    for &(name, args) in cases {
        let mut all = args.to_vec();
        all.extend([
            "--equilibration",
            "5",
            "--sweeps",
            "20",
            "--write-configuration",
            "--seed",
            "3",
        ]);
        let one = run_ok(1, &dir, &format!("{name}-np1"), &all);
        let config = one.ds::<u8>("spin/configuration");
        assert!(
            config.iter().any(|&s| s != config[0]),
            "{name}: a uniform configuration"
        );
        for np in [2, 3, 4] {
            let h5 = run_ok(np, &dir, &format!("{name}-np{np}"), &all);
            assert_same_chain(&one, &h5, &format!("{name} at np {np}"));
        }
    }
}

#[test]
fn a_stopped_run_resumes_to_the_same_chain() {
    let dir = test_dir("spin_resume");
    for update in ["metropolis", "swendsen-wang"] {
        let args = [
            "--l",
            "8",
            "--update",
            update,
            "--beta",
            "0.3,0.44",
            "--equilibration",
            "10",
            "--sweeps",
            "40",
            "--measure-every",
            "2",
            "--write-configuration",
        ];
        let whole = run_ok(1, &dir, &format!("{update}-whole"), &args);
        assert!(
            !whole.has("spin/checkpoint"),
            "a finished run has a checkpoint"
        );
        // Stopped inside the first chain's measurements, and inside the second's equilibration.
        for stop in ["37", "55"] {
            let name = format!("{update}-stop{stop}");
            let mut first = args.to_vec();
            first.extend(["--stop-after", stop]);
            let part = run_ok(2, &dir, &name, &first);
            assert_eq!(part.attr::<u8>("spin", "complete"), 0);
            assert!(part.has("spin/checkpoint/spins"));
            drop(part);
            let mut rest = args.to_vec();
            rest.push("--resume");
            let resumed = run_ok(3, &dir, &name, &rest);
            assert_eq!(resumed.attr::<u8>("spin", "complete"), 1);
            assert!(
                !resumed.has("spin/checkpoint"),
                "{name}: a finished run keeps its checkpoint"
            );
            assert_same_chain(&whole, &resumed, &name);
        }
    }
}

#[test]
fn sigterm_writes_a_checkpoint_that_resumes_to_the_same_chain() {
    let dir = test_dir("spin_sigterm");
    let args = [
        "spin",
        "--device",
        "cpu",
        "--threads",
        "1",
        "--l",
        "16",
        "--equilibration",
        "100",
        "--sweeps",
        "60000",
        "--measure-every",
        "10",
        "--checkpoint-sweeps",
        "200",
        "--write-configuration",
        "--output",
    ];
    let out = dir.join("killed.h5");
    let out_arg = out.to_str().unwrap();
    let mut killed = args.to_vec();
    killed.push(out_arg);
    terminate_once_written(2, &killed, &out);
    let h5 = H5::open(&out);
    assert_eq!(h5.attr::<u8>("spin", "complete"), 0, "the run ended early");
    drop(h5);
    let rest: Vec<&str> = args[5..args.len() - 1].to_vec();
    let mut resume = rest.clone();
    resume.push("--resume");
    let resumed = run_ok(3, &dir, "killed", &resume);
    let whole = run_ok(1, &dir, "whole", &rest);
    assert_same_chain(&whole, &resumed, "killed and resumed");
}

/// Exact 2D Ising figures of the 4x4 torus at β by enumeration: (e, |m|, C) per site.
fn exact_4x4(beta: f64) -> (f64, f64, f64) {
    let (l, n) = (4usize, 16usize);
    let (mut z, mut se, mut se2, mut sm) = (0.0, 0.0, 0.0, 0.0);
    for state in 0u32..1 << n {
        let s = |x: usize, y: usize| {
            if state >> ((x % l) * l + y % l) & 1 == 1 {
                1
            } else {
                -1
            }
        };
        let (mut e, mut m) = (0i32, 0i32);
        for x in 0..l {
            for y in 0..l {
                e -= s(x, y) * (s(x + 1, y) + s(x, y + 1));
                m += s(x, y);
            }
        }
        let w = (-beta * f64::from(e + 32)).exp();
        z += w;
        se += w * f64::from(e);
        se2 += w * f64::from(e * e);
        sm += w * f64::from(m.abs());
    }
    let (e, e2) = (se / z, se2 / z);
    (e / 16.0, sm / z / 16.0, beta * beta * (e2 - e * e) / 16.0)
}

/// (value, error) of `summary/NAME` for β index b.
fn figure(h5: &H5, name: &str, b: usize) -> (f64, f64) {
    let v = h5.ds::<f64>(&format!("spin/summary/{name}"))[b];
    let e = h5.ds::<f64>(&format!("spin/summary/{name}_error"))[b];
    (v, e)
}

/// 18 comparisons with exact values at 3 error bars (and 30 between updates): with a fixed
/// seed the test is deterministic, and one comparison in 370 would fail by chance.
#[test]
fn small_ising_lattice_matches_exact_enumeration_with_every_update() {
    let dir = test_dir("spin_exact");
    let betas = [0.3, 0.44];
    let runs: Vec<(&str, H5)> = [
        ("metropolis", &["--sweeps", "60000"][..]),
        ("swendsen-wang", &["--sweeps", "30000"][..]),
        (
            "wolff",
            &["--sweeps", "30000", "--clusters-per-sweep", "2"][..],
        ),
    ]
    .into_iter()
    .map(|(update, extra)| {
        let mut args = vec![
            "--l",
            "4",
            "--beta",
            "0.3,0.44",
            "--update",
            update,
            "--equilibration",
            "1000",
            "--seed",
            "2",
        ];
        args.extend_from_slice(extra);
        (update, run_ok(1, &dir, update, &args))
    })
    .collect();
    for (b, &beta) in betas.iter().enumerate() {
        let (e, m, c) = exact_4x4(beta);
        for (update, h5) in &runs {
            for (name, exact) in [("energy", e), ("m", m), ("specific_heat", c)] {
                let (v, err) = figure(h5, name, b);
                assert!(
                    (v - exact).abs() <= 3.0 * err && err > 0.0,
                    "{update} beta {beta}: {name} = {v} ± {err}, exact {exact}"
                );
            }
        }
        for name in ["energy", "m", "specific_heat", "susceptibility", "binder"] {
            for i in 0..runs.len() {
                for j in i + 1..runs.len() {
                    let (a, ea) = figure(&runs[i].1, name, b);
                    let (x, ex) = figure(&runs[j].1, name, b);
                    assert!(
                        (a - x).abs() <= 3.0 * (ea * ea + ex * ex).sqrt(),
                        "beta {beta}: {name} {} = {a} ± {ea}, {} = {x} ± {ex}",
                        runs[i].0,
                        runs[j].0
                    );
                }
            }
        }
    }
}

/// ln Z of the L×L Ising torus at coupling K (Kaufman 1949, in Ferdinand and Fisher's form,
/// Phys. Rev. 185 (1969) 832): Z = ½ (2 sinh 2K)^(N/2) (Z1 + Z2 + Z3 + Z4), products over
/// r < L of 2cosh and 2sinh of L·γ_(2r+1)/2 and L·γ_(2r)/2, cosh γ_j = cosh 2K coth 2K -
/// cos(πj/L), γ_0 = 2K + ln tanh K (negative below T_c: Z4 changes sign).
fn kaufman_log_z(l: usize, k: f64) -> f64 {
    let n = l as f64;
    let gamma = |j: usize| {
        if j == 0 {
            2.0 * k + k.tanh().ln()
        } else {
            ((2.0 * k).cosh() / (2.0 * k).tanh() - (std::f64::consts::PI * j as f64 / n).cos())
                .acosh()
        }
    };
    // (ln |product|, sign) of Z1..Z4.
    let mut z = [(0.0f64, 1.0f64); 4];
    for r in 0..l {
        for (i, x) in [gamma(2 * r + 1), gamma(2 * r)].into_iter().enumerate() {
            let x = x * n / 2.0;
            let far = (-2.0 * x.abs()).exp();
            z[2 * i].0 += x.abs() + far.ln_1p();
            z[2 * i + 1].0 += x.abs() + (-far).ln_1p();
            z[2 * i + 1].1 *= x.signum();
        }
    }
    let top = z.iter().map(|t| t.0).fold(f64::MIN, f64::max);
    let sum: f64 = z.iter().map(|(lz, sign)| sign * (lz - top).exp()).sum();
    n * n / 2.0 * (2.0 * (2.0 * k).sinh()).ln() - 2f64.ln() + top + sum.ln()
}

/// Exact energy per site of the L×L torus, -(1/N) d ln Z / dK (a central difference).
fn kaufman_energy(l: usize, k: f64) -> f64 {
    let h = 1e-5;
    -(kaufman_log_z(l, k + h) - kaufman_log_z(l, k - h)) / (2.0 * h) / (l * l) as f64
}

/// Mean energy per site and its error (blocks of 500 sweeps) of a sequential Metropolis chain
/// on the L×L torus driven by a reference generator, xoshiro256** (Blackman and Vigna),
/// independent of tessera's counter-based draws.
fn reference_metropolis(l: usize, beta: f64, sweeps: usize, seed: u64) -> (f64, f64) {
    let mut state = [0u64; 4];
    let mut z = seed;
    for word in &mut state {
        z = z.wrapping_add(0x9e3779b97f4a7c15);
        let mut x = z;
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
        *word = x ^ (x >> 31);
    }
    let mut uniform = || {
        let result = state[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = state[1] << 17;
        state[2] ^= state[0];
        state[3] ^= state[1];
        state[1] ^= state[2];
        state[0] ^= state[3];
        state[2] ^= t;
        state[3] = state[3].rotate_left(45);
        (result >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut s = vec![1i32; l * l];
    let at = |x: usize, y: usize| (x % l) * l + y % l;
    let weights: Vec<f64> = (0..=8).map(|de| (-beta * de as f64).exp()).collect();
    let (block, mut blocks) = (500, Vec::new());
    let mut sum = 0.0;
    for sweep in 0..sweeps + 2000 {
        for x in 0..l {
            for y in 0..l {
                let around =
                    s[at(x + 1, y)] + s[at(x + l - 1, y)] + s[at(x, y + 1)] + s[at(x, y + l - 1)];
                let de = 2 * s[at(x, y)] * around;
                if de <= 0 || uniform() < weights[de as usize] {
                    s[at(x, y)] *= -1;
                }
            }
        }
        if sweep < 2000 {
            continue;
        }
        let bonds: i32 = (0..l * l)
            .map(|i| s[i] * (s[at(i / l + 1, i % l)] + s[at(i / l, i % l + 1)]))
            .sum();
        sum += -f64::from(bonds) / (l * l) as f64;
        if (sweep - 1999) % block == 0 {
            blocks.push(sum / block as f64);
            sum = 0.0;
        }
    }
    let mean = blocks.iter().sum::<f64>() / blocks.len() as f64;
    let var = blocks.iter().map(|b| (b - mean).powi(2)).sum::<f64>() / (blocks.len() - 1) as f64;
    (mean, (var / blocks.len() as f64).sqrt())
}

/// The bit-sliced Metropolis draw against exact finite-size physics and a reference
/// generator: the energy per site at L = 64 on either side of T_c equals Kaufman's exact
/// value, as does a chain driven by xoshiro256** (which checks the test's own machinery),
/// and the two chains agree; 4 error bars each, a fixed seed. Kaufman's formula is checked
/// first against the 4x4 enumeration.
#[test]
#[ignore = "minutes: scripts/test-long"]
fn metropolis_energy_at_l64_matches_kaufmans_exact_value_and_a_reference_generator() {
    for beta in [0.3, 0.44, 0.6] {
        let (enumerated, _, _) = exact_4x4(beta);
        let kaufman = kaufman_energy(4, beta);
        assert!(
            (kaufman - enumerated).abs() < 1e-8,
            "beta {beta}: {kaufman} vs {enumerated}"
        );
    }
    let dir = test_dir("spin_kaufman");
    let betas = [0.4, 0.5];
    let args = [
        "--l",
        "64",
        "--beta",
        "0.4,0.5",
        "--update",
        "metropolis",
        "--sweeps",
        "100000",
        "--equilibration",
        "2000",
        "--seed",
        "11",
    ];
    let h5 = run_ok(2, &dir, "metropolis", &args);
    for (b, &beta) in betas.iter().enumerate() {
        let exact = kaufman_energy(64, beta);
        let (e, err) = figure(&h5, "energy", b);
        let (r, rerr) = reference_metropolis(64, beta, 40000, 5 + b as u64);
        let what =
            format!("beta {beta}: tessera {e} ± {err}, reference {r} ± {rerr}, exact {exact}");
        println!("{what}");
        assert!(err > 0.0 && (e - exact).abs() <= 4.0 * err, "{what}");
        assert!((r - exact).abs() <= 4.0 * rerr, "{what}");
        assert!(
            (e - r).abs() <= 4.0 * (err * err + rerr * rerr).sqrt(),
            "{what}"
        );
    }
}

#[test]
fn bad_values_give_one_error_line() {
    let dir = test_dir("spin_errors");
    let cases: &[(usize, &[&str], &[&str])] = &[
        (
            1,
            &["--model", "potts", "--q", "1"],
            &["[spin] q = 1", "2 to 256"],
        ),
        (1, &["--q", "3"], &["q applies to model = \"potts\""]),
        (1, &["--l", "7"], &["[spin] l = 7", "even"]),
        (
            1,
            &["--temperature", "-1"],
            &["[spin] temperature = -1", "> 0"],
        ),
        (
            1,
            &["--beta", "0.4", "--temperature", "2"],
            &["beta or temperature"],
        ),
        (3, &["--l", "2"], &["fewer planes than the 3 ranks"]),
        (1, &["--sweeps", "0"], &["[spin] sweeps = 0"]),
        (
            1,
            &["--measure-every", "20", "--sweeps", "10"],
            &["measure_every = 20"],
        ),
        (
            1,
            &["--l", "8192", "--write-configuration"],
            &["write_configuration"],
        ),
        (
            1,
            &["--clusters-per-sweep", "2"],
            &["clusters_per_sweep applies"],
        ),
        (
            1,
            &["--lattice", "3d", "--model", "potts"],
            &["no default beta"],
        ),
        (
            1,
            &["--lattice", "rewired", "--p", "1.5"],
            &["[spin] p = 1.5", "from 0 to 1"],
        ),
        (1, &["--p", "0.1"], &["p apply to lattice = \"rewired\""]),
        (
            1,
            &["--lattice", "rewired", "--p", "0.1", "--l", "7"],
            &["side 7 is odd"],
        ),
    ];
    for &(np, args, needles) in cases {
        let mut all = vec!["spin", "--device", "cpu", "--output", "bad.h5"];
        all.extend_from_slice(args);
        one_clear_error(&tessera(np, &all, &dir), needles);
    }
    // A checkpoint of another job is refused, naming both.
    run_ok(
        1,
        &dir,
        "other",
        &["--l", "4", "--sweeps", "10", "--equilibration", "0"],
    );
    let run = tessera(
        1,
        &[
            "spin", "--device", "cpu", "--l", "6", "--output", "other.h5", "--resume",
        ],
        &dir,
    );
    one_clear_error(&run, &["cannot resume", "L=4", "L=6"]);
}

/// A damaged checkpoint (spins no state of the model, spins stored as floats, which HDF5
/// converted quietly, series of the wrong shape or count, a position past the run's chains, no
/// spins) is refused with one error line at 2 ranks: no
/// panic, no hang of the rank that did not read it, no run from a state it cannot hold.
#[test]
fn damaged_checkpoints_give_one_error_line() {
    let dir = test_dir("spin_damaged");
    let args = [
        "--model",
        "potts",
        "--q",
        "3",
        "--beta",
        "1",
        "--l",
        "4",
        "--equilibration",
        "0",
        "--sweeps",
        "100",
    ];
    let mut stop = args.to_vec();
    stop.extend(["--stop-after", "5"]);
    drop(run_ok(1, &dir, "stopped", &stop));
    let damage: &[Damage] = &[
        (
            &|f| f.dataset("spin/checkpoint/spins", &[16], &[3u8; 16]),
            &["spin/checkpoint/spins", "spin 3", "states 0 to 2"],
        ),
        (
            &|f| f.dataset("spin/checkpoint/spins", &[16], &[1.0f64; 16]),
            &["/spin/checkpoint/spins holds float64", "expected uint8"],
        ),
        (
            &|f| f.dataset("spin/measured", &[1], &[99999u64]),
            &["spin/measured", "99999", "at most 100"],
        ),
        (
            &|f| f.dataset("spin/measured", &[1], &[50u64]),
            &["spin/measured", "is 50", "expected 5"],
        ),
        (
            &|f| f.dataset("spin/energy", &[1, 3], &[0.0f64; 3]),
            &["spin/energy", "shape [1, 3]", "expected [1, 100]"],
        ),
        (
            &|f| f.attr("spin/checkpoint", "sweep", 1000u64),
            &["sweep = 1000", "at most 100", "does not belong to this run"],
        ),
        (
            &|f| f.attr("spin/checkpoint", "sweep", 1_000_000_000_000_000_000u64),
            &["sweep = 1000000000000000000", "does not belong to this run"],
        ),
        (
            &|f| f.remove("spin/checkpoint/spins"),
            &["spin/checkpoint/spins", "malformed"],
        ),
    ];
    let mut resume = vec!["spin", "--device", "cpu", "--output", "damaged.h5"];
    resume.extend(args);
    resume.push("--resume");
    refuse_damaged(&dir, "stopped.h5", 2, &resume, damage);
}

/// The summaries' means use every measurement (the jackknife's 32 bins only give the
/// errors): 40 measurements, of which the bins hold 32.
#[test]
fn summaries_average_every_measurement() {
    let dir = test_dir("spin_means");
    let h5 = run_ok(
        2,
        &dir,
        "means",
        &[
            "--l",
            "6",
            "--beta",
            "0.3",
            "--equilibration",
            "3",
            "--sweeps",
            "40",
            "--seed",
            "4",
        ],
    );
    for (series, name) in [("spin/energy", "energy"), ("spin/m", "m")] {
        let xs = h5.ds::<f64>(series);
        assert_eq!(xs.len(), 40);
        let mean = xs.iter().sum::<f64>() / 40.0;
        let (v, _) = figure(&h5, name, 0);
        assert!(
            (v - mean).abs() <= 1e-12 * mean.abs().max(1.0),
            "{name}: summary {v}, mean of the 40 measurements {mean}"
        );
        let binned = xs[..32].iter().sum::<f64>() / 32.0;
        assert!(
            (binned - mean).abs() > 1e-12,
            "{name}: a test that cannot tell"
        );
    }
    assert!(
        !h5.has("spin/checkpoint"),
        "a finished run has a checkpoint"
    );
}

/// Sizes that cannot be held are refused before any allocation, in seconds, with one line
/// naming the bytes needed and available and what fits (the largest L, or the most sweeps),
/// at one rank and at three: never an allocation failure with a backtrace per rank.
#[test]
fn too_large_sizes_are_refused_at_once() {
    let dir = test_dir("spin_sizes");
    let cases: &[(&[&str], &str)] = &[
        (&["--l", "300000"], "the largest L that fits is"),
        (
            &["--lattice", "3d", "--l", "20000"],
            "the largest L that fits is",
        ),
        (
            &["--update", "swendsen-wang", "--l", "300000"],
            "the largest L that fits is",
        ),
        (
            &["--sweeps", "10000000000000"],
            "the most sweeps per beta that fit are",
        ),
    ];
    for np in [1, 3] {
        for &(flags, fits) in cases {
            let mut all = vec!["spin", "--device", "cpu", "--output", "never.h5"];
            all.extend_from_slice(flags);
            let started = Instant::now();
            let run = tessera(np, &all, &dir);
            let line = one_clear_error(&run, &["does not fit", "bytes", "available", fits]);
            assert_eq!(run.status.code(), Some(1), "{flags:?} at np {np}: {line}");
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "{flags:?} at np {np} took {:?}",
                started.elapsed()
            );
        }
    }
    assert!(!dir.join("never.h5").exists());
}

/// U4 at each β of one run.
fn binder_at(dir: &Path, name: &str, args: &[&str]) -> Vec<f64> {
    let h5 = run_ok(2, dir, name, args);
    h5.ds::<f64>("spin/summary/binder")
}

/// Whether the Binder cumulants of the larger lattices cross those of the smaller between
/// the two β (below: smaller L has the larger U4; above: the larger L has).
fn assert_crossing(dir: &Path, base: &[&str], sides: &[&str], betas: &str) {
    let curves: Vec<Vec<f64>> = sides
        .iter()
        .map(|l| {
            let mut args = base.to_vec();
            args.extend(["--l", l, "--beta", betas]);
            binder_at(dir, &format!("binder-{l}"), &args)
        })
        .collect();
    for pair in curves.windows(2) {
        let (small, large) = (&pair[0], &pair[1]);
        assert!(small[0] > large[0], "below: U4 {small:?} vs {large:?}");
        assert!(small[1] < large[1], "above: U4 {small:?} vs {large:?}");
    }
}

#[test]
#[ignore = "minutes: scripts/test-long"]
fn binder_cumulants_cross_at_the_2d_ising_critical_point() {
    let dir = test_dir("spin_binder_ising");
    let bc = (1.0 + 2f64.sqrt()).ln() / 2.0;
    let betas = format!("{},{}", bc * 0.99, bc * 1.01);
    let base = [
        "--update",
        "swendsen-wang",
        "--equilibration",
        "2000",
        "--sweeps",
        "40000",
    ];
    assert_crossing(&dir, &base, &["16", "32", "64"], &betas);
}

#[test]
#[ignore = "minutes: scripts/test-long"]
fn binder_cumulants_cross_near_the_3_state_potts_critical_point() {
    let dir = test_dir("spin_binder_potts");
    let bc = (1.0 + 3f64.sqrt()).ln();
    let betas = format!("{},{}", bc * 0.98, bc * 1.02);
    let base = [
        "--model",
        "potts",
        "--q",
        "3",
        "--update",
        "swendsen-wang",
        "--equilibration",
        "2000",
        "--sweeps",
        "40000",
    ];
    assert_crossing(&dir, &base, &["16", "32", "64"], &betas);
}

#[test]
fn rewired_chains_are_the_same_for_every_rank_count() {
    let dir = test_dir("spin_rewired_ranks");
    let cases: &[(&str, &[&str])] = &[
        (
            "metropolis",
            &["--l", "32", "--p", "0.2", "--beta", "0.3", "--start", "hot"],
        ),
        (
            "sw-3d-potts",
            &[
                "--base",
                "3d",
                "--l",
                "8",
                "--p",
                "0.5",
                "--model",
                "potts",
                "--beta",
                "0.6",
                "--update",
                "swendsen-wang",
            ],
        ),
        (
            "wolff",
            &[
                "--l",
                "32",
                "--p",
                "0.2",
                "--beta",
                "0.3",
                "--update",
                "wolff",
                "--clusters-per-sweep",
                "3",
            ],
        ),
    ];
    for &(name, args) in cases {
        let mut all = vec!["--lattice", "rewired"];
        all.extend_from_slice(args);
        all.extend([
            "--equilibration",
            "3",
            "--sweeps",
            "12",
            "--write-configuration",
            "--seed",
            "5",
        ]);
        let one = run_ok(1, &dir, &format!("{name}-np1"), &all);
        assert_eq!(one.attr_str("spin", "lattice"), "rewired");
        let config = one.ds::<u8>("spin/configuration");
        assert!(
            config.iter().any(|&s| s != config[0]),
            "{name}: a uniform configuration"
        );
        for np in [2, 3, 4] {
            let h5 = run_ok(np, &dir, &format!("{name}-np{np}"), &all);
            assert_same_chain(&one, &h5, &format!("rewired {name} at np {np}"));
        }
        if name == "wolff" {
            // Stopped at 3 ranks, resumed at 2: the checkpoint holds the graph's partition.
            let mut first = all.clone();
            first.extend(["--stop-after", "8"]);
            run_ok(3, &dir, "wolff-stopped", &first);
            let mut rest = all.clone();
            rest.push("--resume");
            let resumed = run_ok(2, &dir, "wolff-stopped", &rest);
            assert_same_chain(&one, &resumed, "rewired wolff stopped and resumed");
        }
    }
}

/// Whether two runs' figures agree within 3 combined error bars.
fn assert_agree(a: (&str, &H5), b: (&str, &H5), names: &[&str]) {
    for name in names {
        let (x, ex) = figure(a.1, name, 0);
        let (y, ey) = figure(b.1, name, 0);
        assert!(
            (x - y).abs() <= 3.0 * (ex * ex + ey * ey).sqrt(),
            "{name}: {} = {x} ± {ex}, {} = {y} ± {ey}",
            a.0,
            b.0
        );
    }
}

/// At p = 0 the rewired lattice is the torus: Metropolis gives the lattice's chain bit for
/// bit (the same draws), Swendsen-Wang and Wolff (other bond numbers) its exact figures; at
/// p = 0.3 the three updates agree with each other.
#[test]
fn rewired_updates_agree_and_p0_is_the_lattice() {
    let dir = test_dir("spin_rewired_physics");
    let run = |name: &str, lattice: &[&str], update: &str, sweeps: &str| {
        let mut args = lattice.to_vec();
        args.extend([
            "--update",
            update,
            "--equilibration",
            "300",
            "--sweeps",
            sweeps,
            "--seed",
            "6",
        ]);
        if update == "wolff" {
            args.extend(["--clusters-per-sweep", "2"]);
        }
        run_ok(1, &dir, name, &args)
    };
    let torus = ["--l", "4", "--beta", "0.44", "--start", "hot"];
    let p0 = [&torus[..], &["--lattice", "rewired", "--p", "0"]].concat();
    let lattice = run(
        "lattice",
        &[&torus[..], &["--write-configuration"]].concat(),
        "metropolis",
        "300",
    );
    let rewired = run(
        "p0",
        &[&p0[..], &["--write-configuration"]].concat(),
        "metropolis",
        "300",
    );
    assert_same_chain(&lattice, &rewired, "p = 0 against the lattice");
    let (e, m, c) = exact_4x4(0.44);
    for (update, sweeps) in [("swendsen-wang", "5000"), ("wolff", "6000")] {
        let h5 = run(&format!("p0-{update}"), &p0, update, sweeps);
        for (name, exact) in [("energy", e), ("m", m), ("specific_heat", c)] {
            let (v, err) = figure(&h5, name, 0);
            assert!(
                (v - exact).abs() <= 3.0 * err && err > 0.0,
                "p = 0 {update}: {name} = {v} ± {err}, exact {exact}"
            );
        }
    }
    let small_world = [
        "--lattice",
        "rewired",
        "--p",
        "0.3",
        "--l",
        "6",
        "--beta",
        "0.3",
    ];
    let runs = [
        (
            "metropolis",
            run("p03-m", &small_world, "metropolis", "6000"),
        ),
        (
            "swendsen-wang",
            run("p03-sw", &small_world, "swendsen-wang", "3000"),
        ),
        ("wolff", run("p03-w", &small_world, "wolff", "4000")),
    ];
    for i in 0..runs.len() {
        for j in i + 1..runs.len() {
            let (a, b) = (&runs[i], &runs[j]);
            assert_agree((a.0, &a.1), (b.0, &b.1), &["energy", "m", "susceptibility"]);
        }
    }
}

/// Leist's PhD thesis (2011), Table 7.5: T_c(p = 0.01) = 4.593754 for the rewired 3D Ising
/// model (T_c(0) = 4.5115, outside the bracket): the Binder cumulants of L = 12, 16, 24 cross within 1%.
#[test]
#[ignore = "minutes: scripts/test-long"]
fn rewired_binder_cumulants_cross_at_leists_critical_temperature() {
    let dir = test_dir("spin_binder_rewired");
    let bc = 1.0 / 4.593754;
    let betas = format!("{},{}", bc * 0.99, bc * 1.01);
    let base = [
        "--lattice",
        "rewired",
        "--base",
        "3d",
        "--p",
        "0.01",
        "--update",
        "swendsen-wang",
        "--equilibration",
        "2000",
        "--sweeps",
        "20000",
    ];
    assert_crossing(&dir, &base, &["12", "16", "24"], &betas);
}
