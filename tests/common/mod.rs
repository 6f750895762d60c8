//! Shared helpers of the integration tests: running a program under `mpirun` with a hard
//! timeout, reading result files back, and a plain sequential BFS to compare against.
//!
//! Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

pub mod outcome;

use hdf5::types::VarLenUnicode;
use hdf5::H5Type;
use hdf5_metno as hdf5;
use std::collections::VecDeque;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Longest a single `mpirun` may take before the test calls it hung: 420 s, or
/// `TESSERA_TEST_TIMEOUT` seconds (`scripts/test-long` raises it for its runs of minutes).
/// The longest run in `scripts/test` takes a few seconds on two cores, far inside it.
pub fn mpi_timeout() -> Duration {
    let secs = std::env::var("TESSERA_TEST_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(420);
    Duration::from_secs(secs)
}

/// The `tessera` binary the tests run: `TESSERA_TEST_BIN` where set (`scripts/test` points it
/// at the optimised dev build, so that the tests themselves can compile unoptimised; a
/// relative path is taken from the repository's root, as the runs start in their own
/// directories), else the one cargo built for these tests.
pub fn tessera_bin() -> PathBuf {
    match std::env::var_os("TESSERA_TEST_BIN") {
        Some(bin) => Path::new(env!("CARGO_MANIFEST_DIR")).join(bin),
        None => PathBuf::from(env!("CARGO_BIN_EXE_tessera")),
    }
}

/// What one `mpirun` job left behind.
#[derive(Debug)]
pub struct Run {
    /// What was run, for messages.
    pub what: String,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn ok(&self) -> bool {
        self.status.success()
    }

    /// Panic with the whole output unless the job exited 0.
    pub fn assert_ok(&self) -> &Self {
        assert!(
            self.ok(),
            "{} failed with {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.what,
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }

    /// The lines tessera itself printed to stderr as errors (`tessera: ...`), without
    /// mpirun's banners and the log lines.
    pub fn error_lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| l.starts_with("tessera:"))
            .collect()
    }
}

/// `mpirun`, with Open MPI's session directory under a directory of the calling thread's own
/// (removed when the thread, a test, ends). Jobs otherwise share /tmp/ompi.<host>.<uid>, and
/// one starting while another ends there can fail in orte_init ("A call to mkdir was unable to
/// create the desired directory", open-mpi/ompi#8510); the tests run their jobs on parallel
/// threads.
pub fn mpirun_command() -> Command {
    use std::sync::atomic::{AtomicUsize, Ordering};
    struct Sessions(PathBuf);
    impl Drop for Sessions {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    static THREADS: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SESSIONS: Sessions = {
            let n = THREADS.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!("tessera-ompi-{}-{n}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            Sessions(dir)
        };
    }
    let mut cmd = Command::new("mpirun");
    SESSIONS.with(|dir| cmd.env("OMPI_MCA_orte_tmpdir_base", &dir.0));
    cmd
}

/// Run `mpirun -np N --oversubscribe PROGRAM ARGS...` in `dir` with the root-allow variables
/// and the extra environment `env`; kill it and fail the test if it runs past `mpi_timeout()`.
pub fn mpirun_program(
    np: usize,
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    dir: &Path,
) -> Run {
    let mut cmd = mpirun_command();
    cmd.arg("-np")
        .arg(np.to_string())
        .arg("--oversubscribe")
        .current_dir(dir)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        // When a rank exits non-zero, mpirun waits this long between its SIGTERM and SIGKILL
        // to the job (1 s by default, 2 s for the whole job to end): most runs here end in an
        // error on purpose. The tests that signal a run themselves keep the default.
        .env("OMPI_MCA_odls_base_sigkill_timeout", "0")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v).arg("-x").arg(k);
    }
    cmd.arg(program).args(args);
    let what = format!(
        "mpirun -np {np} {} {}",
        program
            .file_name()
            .map_or("?".into(), |f| f.to_string_lossy()),
        args.join(" ")
    );
    run_with_timeout(cmd, &what, mpi_timeout())
}

/// The job failed cleanly: non-zero exit, no panic, exactly one `tessera:` error line, which
/// contains every one of `needles`. Returns that line.
pub fn one_clear_error<'a>(run: &'a Run, needles: &[&str]) -> &'a str {
    assert!(!run.ok(), "{} should have failed\n{}", run.what, run.stderr);
    assert!(
        !run.stderr.contains("panicked"),
        "{}: a rank panicked\n{}",
        run.what,
        run.stderr
    );
    let lines = run.error_lines();
    assert_eq!(
        lines.len(),
        1,
        "{}: expected one error line, got {lines:?}\n--- stderr ---\n{}",
        run.what,
        run.stderr
    );
    for needle in needles {
        assert!(
            lines[0].contains(needle),
            "{}: error line does not mention {needle:?}: {}",
            run.what,
            lines[0]
        );
    }
    lines[0]
}

/// The `main` of a test without a libtest harness that checks MPI code from inside the ranks:
/// run as a rank (when `env` is set) it returns `as_rank()` as its exit code; otherwise it
/// starts itself under `mpirun -np N` for N = 1..=4 with `env` set, prints each job's output,
/// and exits 1 if any job failed.
pub fn run_as_ranks(name: &str, env: &str, as_rank: fn() -> i32) {
    if std::env::args().any(|a| a == "--list") {
        // `cargo test -- --list`: nothing to list without a harness.
        return;
    }
    if std::env::var_os(env).is_some() {
        std::process::exit(as_rank());
    }
    let exe = std::env::current_exe().expect("path of this test binary");
    let dir = test_dir(name);
    let mut failed = Vec::new();
    for np in 1..=4 {
        let run = mpirun_program(np, &exe, &[], &[(env, "1")], &dir);
        print!("{}", run.stdout);
        if run.ok() {
            println!("{name} at np {np}: ok");
        } else {
            eprintln!(
                "{name} at np {np}: FAILED ({})\n--- stderr ---\n{}",
                run.status, run.stderr
            );
            failed.push(np);
        }
    }
    if !failed.is_empty() {
        eprintln!("{name} failed at np {failed:?}");
        std::process::exit(1);
    }
}

/// `mpirun -np N tessera ARGS...` in `dir`.
pub fn tessera(np: usize, args: &[&str], dir: &Path) -> Run {
    mpirun_program(np, &tessera_bin(), args, &[], dir)
}

/// `tessera WORKLOAD --device cpu --threads THREADS --output NAME.h5 ARGS...` under mpirun in
/// `dir`, which must succeed; its result file.
pub fn run_cpu(
    np: usize,
    dir: &Path,
    workload: &str,
    name: &str,
    threads: usize,
    args: &[&str],
) -> H5 {
    let (out, threads) = (format!("{name}.h5"), threads.to_string());
    let mut all = vec![
        workload,
        "--device",
        "cpu",
        "--threads",
        &threads,
        "--output",
        &out,
    ];
    all.extend_from_slice(args);
    tessera(np, &all, dir).assert_ok();
    H5::open(&dir.join(out))
}

/// Spawn `cmd`, collect its output, and enforce `limit`: on expiry it gets SIGTERM (mpirun
/// passes that on to its ranks), then SIGKILL, and the calling test panics saying it hung.
pub fn run_with_timeout(mut cmd: Command, what: &str, limit: Duration) -> Run {
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e} (is mpirun on PATH?)"));
    let out = collect(child.stdout.take().unwrap());
    let err = collect(child.stderr.take().unwrap());
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for mpirun") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let grace = Instant::now();
            while grace.elapsed() < Duration::from_secs(10) {
                if child.try_wait().ok().flatten().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{what} hung: still running after {} s, killed\n--- stdout ---\n{}\n--- stderr ---\n{}",
                limit.as_secs(),
                out.snapshot(),
                err.snapshot()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        what: what.to_string(),
        status,
        stdout: out.finish(),
        stderr: err.finish(),
    }
}

/// A pipe drained by a thread into a shared buffer (so a full pipe never blocks the child).
struct Collected {
    buf: Arc<Mutex<Vec<u8>>>,
    done: Arc<Mutex<bool>>,
}

fn collect(mut pipe: impl Read + Send + 'static) -> Collected {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let done = Arc::new(Mutex::new(false));
    let (b, d) = (buf.clone(), done.clone());
    std::thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        while let Ok(n) = pipe.read(&mut chunk) {
            if n == 0 {
                break;
            }
            b.lock().unwrap().extend_from_slice(&chunk[..n]);
        }
        *d.lock().unwrap() = true;
    });
    Collected { buf, done }
}

impl Collected {
    fn snapshot(&self) -> String {
        String::from_utf8_lossy(&self.buf.lock().unwrap()).into_owned()
    }

    /// The whole output once the pipe closes (or what arrived within 10 s of the exit, if a
    /// stray process still holds the pipe open).
    fn finish(self) -> String {
        let start = Instant::now();
        while !*self.done.lock().unwrap() && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.snapshot()
    }
}

/// Start `tessera ARGS` (its `--output` among them, `out`) on `np` ranks, send SIGTERM as a
/// preemptible SLURM queue would once `out` exists (a checkpoint), and return the run's
/// stderr, after checking that it ended with a non-zero status and said how to resume.
pub fn terminate_once_written(np: usize, args: &[&str], out: &Path) -> String {
    let child = mpirun_command()
        .args(["-np", &np.to_string(), "--oversubscribe"])
        .arg(tessera_bin())
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mpirun");
    let started = Instant::now();
    while !out.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no checkpoint appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // mpirun passes SIGTERM on to the ranks.
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        !output.status.success(),
        "a killed run must not exit 0\n{stderr}"
    );
    assert!(stderr.contains("rerun with --resume"), "{stderr}");
    stderr
}

/// A fresh, empty directory for one test's files (under cargo's per-target scratch space).
pub fn test_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("tessera-tests")
        .join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Write `text` as `dir/name` and return its path as a string.
pub fn write_file(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// A special file at `path`, made by `mknod path KIND...`: `["p"]` a FIFO, `["c", "1", "5"]`
/// a character device like /dev/zero (the tests run as root; never a real /dev node).
pub fn mknod(path: &Path, kind: &[&str]) {
    let made = Command::new("mknod").arg(path).args(kind).status().unwrap();
    assert!(made.success(), "mknod {} {kind:?}", path.display());
}

/// A file of the repository (e.g. `inputs/tests/components.edges`), absolute.
pub fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Files under `dir` whose name ends with `suffix`.
pub fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect()
}

/// A result file opened for reading.
pub struct H5 {
    pub path: PathBuf,
    pub file: hdf5::File,
}

impl H5 {
    pub fn open(path: &Path) -> H5 {
        let file = hdf5::File::open(path)
            .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
        H5 {
            path: path.to_path_buf(),
            file,
        }
    }

    /// A dataset (e.g. "bfs/nedge"), flattened row-major.
    pub fn ds<T: H5Type>(&self, name: &str) -> Vec<T> {
        self.file
            .dataset(name)
            .and_then(|d| d.read_raw::<T>())
            .unwrap_or_else(|e| panic!("{}: dataset {name}: {e}", self.path.display()))
    }

    pub fn has(&self, name: &str) -> bool {
        self.file.link_exists(name)
    }

    pub fn shape(&self, name: &str) -> Vec<usize> {
        self.file
            .dataset(name)
            .unwrap_or_else(|e| panic!("{}: dataset {name}: {e}", self.path.display()))
            .shape()
    }

    fn location(&self, group: &str) -> hdf5::Group {
        if group.is_empty() || group == "/" {
            self.file.as_group().unwrap()
        } else {
            self.file
                .group(group)
                .unwrap_or_else(|e| panic!("{}: group {group}: {e}", self.path.display()))
        }
    }

    /// A scalar attribute of `group` ("" or "/" for the file's root).
    pub fn attr<T: H5Type>(&self, group: &str, name: &str) -> T {
        self.location(group)
            .attr(name)
            .and_then(|a| a.read_scalar::<T>())
            .unwrap_or_else(|e| panic!("{}: attribute {group}/{name}: {e}", self.path.display()))
    }

    pub fn attr_str(&self, group: &str, name: &str) -> String {
        self.attr::<VarLenUnicode>(group, name).as_str().to_string()
    }

    pub fn attr_names(&self, group: &str) -> Vec<String> {
        self.location(group).attr_names().unwrap()
    }
}

/// Depth of every vertex from `root` (-1: unreached) by a plain sequential BFS over the
/// edge tuples (undirected; self-loops and duplicates allowed).
pub fn seq_depths(n: u64, edges: &[(u64, u64)], root: u64) -> Vec<i32> {
    seq_bfs(n, edges, root).0
}

/// Sequential BFS: (depth, parent) of every vertex; the root is its own parent, unreached
/// vertices have depth and parent -1. Neighbours are visited in input order.
pub fn seq_bfs(n: u64, edges: &[(u64, u64)], root: u64) -> (Vec<i32>, Vec<i64>) {
    let adj = adjacency(n, edges);
    let mut depth = vec![-1i32; n as usize];
    let mut parent = vec![-1i64; n as usize];
    depth[root as usize] = 0;
    parent[root as usize] = root as i64;
    let mut queue = VecDeque::from([root as usize]);
    while let Some(u) = queue.pop_front() {
        for &v in &adj[u] {
            if depth[v] < 0 {
                depth[v] = depth[u] + 1;
                parent[v] = u as i64;
                queue.push_back(v);
            }
        }
    }
    (depth, parent)
}

/// Undirected adjacency lists in input order (self-loops dropped, duplicates kept).
pub fn adjacency(n: u64, edges: &[(u64, u64)]) -> Vec<Vec<usize>> {
    let mut adj = vec![Vec::new(); n as usize];
    for &(u, v) in edges {
        assert!(u < n && v < n, "edge ({u}, {v}) outside 0..{n}");
        if u != v {
            adj[u as usize].push(v as usize);
            adj[v as usize].push(u as usize);
        }
    }
    adj
}

/// Graph500 nedge: input tuples (duplicates and self-loops included) whose endpoints were
/// reached (an edge's endpoints are both reached or both unreached).
pub fn seq_nedge(edges: &[(u64, u64)], depth: &[i32]) -> u64 {
    edges
        .iter()
        .filter(|&&(u, v)| depth[u as usize] >= 0 && depth[v as usize] >= 0)
        .count() as u64
}

/// The whole Kronecker edge list, as one rank would generate it.
pub fn kronecker_edges(scale: u32, edgefactor: u64, seed: u64) -> Vec<(u64, u64)> {
    use tessera::graph::EdgeSource;
    let g = tessera::graph::kronecker::Kronecker::new(scale, edgefactor, seed, 1, 0);
    let mut edges = Vec::new();
    g.local_chunk(0, g.local_len(), &mut edges);
    edges
}

/// A copy of a result file opened for writing, for tests that damage a checkpoint or a
/// `path` opened to edit, without HDF5's file lock. This process forks mpirun from other
/// test threads at any time; a child inherits the open descriptor (HDF5 does not set
/// close-on-exec), and with it the exclusive lock, for as long as it runs, so a tessera run
/// here could find the file locked ("unable to lock file, errno = 11"). tessera's own opens
/// keep their locks.
pub fn open_rw_unlocked(path: &Path) -> hdf5::File {
    hdf5::File::with_options()
        .with_fapl(|p| p.file_locking(false))
        .open_rw(path)
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()))
}

/// ledger on purpose; closed when dropped.
pub struct H5Edit {
    path: PathBuf,
    file: hdf5::File,
}

impl H5Edit {
    /// Copy `from` to `to` and open the copy.
    pub fn copy(from: &Path, to: &Path) -> H5Edit {
        std::fs::copy(from, to)
            .unwrap_or_else(|e| panic!("cannot copy {} to {}: {e}", from.display(), to.display()));
        let file = open_rw_unlocked(to);
        H5Edit {
            path: to.to_path_buf(),
            file,
        }
    }

    fn fail(&self, what: &str, e: hdf5::Error) -> ! {
        panic!("{}: {what}: {e}", self.path.display())
    }

    /// Replace dataset `name` by `data` (row-major) in `shape`.
    pub fn dataset<T: H5Type>(&self, name: &str, shape: &[usize], data: &[T]) {
        self.remove(name);
        self.file
            .new_dataset::<T>()
            .shape(shape)
            .create(name)
            .and_then(|d| d.write_raw(data))
            .unwrap_or_else(|e| self.fail(name, e));
    }

    /// Remove the dataset or group `name`.
    pub fn remove(&self, name: &str) {
        self.file
            .unlink(name)
            .unwrap_or_else(|e| self.fail(name, e));
    }

    /// Set the scalar attribute `name` of `group` to `value` (of type `T`).
    pub fn attr<T: H5Type>(&self, group: &str, name: &str, value: T) {
        let g = self
            .file
            .group(group)
            .unwrap_or_else(|e| self.fail(group, e));
        if g.attr(name).is_ok() {
            g.delete_attr(name).unwrap_or_else(|e| self.fail(name, e));
        }
        g.new_attr::<T>()
            .create(name)
            .and_then(|a| a.write_scalar(&value))
            .unwrap_or_else(|e| self.fail(name, e));
    }
}

/// A damage done to a result file, and what the error line refusing it must contain.
pub type Damage<'a> = (&'a dyn Fn(&H5Edit), &'a [&'a str]);

/// For each damage: `dir/from` copied to `dir/damaged.h5` and damaged, then `args` (which
/// resume from damaged.h5) run on `np` ranks must fail with one error line that names the
/// file and holds every needle.
pub fn refuse_damaged(dir: &Path, from: &str, np: usize, args: &[&str], damage: &[Damage]) {
    for &(edit, needles) in damage {
        edit(&H5Edit::copy(&dir.join(from), &dir.join("damaged.h5")));
        let run = tessera(np, args, dir);
        let line = one_clear_error(&run, needles);
        assert!(line.contains("damaged.h5"), "{line}");
    }
}
