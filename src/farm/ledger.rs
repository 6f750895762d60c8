//! The task ledger: one row per finished task (task id, seconds, rank, device, and the job's
//! columns of its result), kept in the run's HDF5 result file under the job's group. Rank 0
//! rewrites the whole file (temp name, then rename) as tasks finish, so a run killed at any
//! moment leaves the last complete ledger behind, and `--resume` reads it back and skips
//! those tasks. The ledger is also part of the run's final report (`Ledger::report`), so the
//! result file the harness writes at the end has the same layout and resumes the same way.

use crate::error::{Error, Result};
use crate::output::{open_to_read, read_stored, Provenance, ResultFile};
use crate::report::{Report, Section};
use hdf5::H5Type;
use hdf5_metno as hdf5;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a ledger belongs to, and how its tasks' results are carried and stored. A ledger is
/// only resumed by a run of an equal job (`PartialEq`: what makes the tasks' results the
/// same), and `Display` names the job in messages.
pub trait Job: Clone + PartialEq + std::fmt::Display {
    /// One task's result.
    type Work: Clone + Send;
    /// The job's group in the result file ("langford"), also the progress label.
    const GROUP: &'static str;
    fn tasks(&self) -> usize;
    /// The attributes that name the job, as figures of its group.
    fn describe(&self, group: &mut Section);
    /// The job a ledger's group names (from `describe`'s attributes), or what is wrong.
    fn read(group: &hdf5::Group) -> std::result::Result<Self, String>;
    /// A result as words (one length for every task of the job), as rank 0 receives it.
    fn encode(&self, work: &Self::Work) -> Vec<u64>;
    fn decode(&self, words: &[u64]) -> Self::Work;
    /// The ledger's columns of these results, beside the farm's (task, seconds, rank, device).
    fn columns(&self, work: &[&Self::Work], ledger: &mut Section);
    /// The results of the ledger's `rows` rows, read back from its group, or what is wrong.
    fn read_columns(
        &self,
        ledger: &hdf5::Group,
        rows: usize,
    ) -> std::result::Result<Vec<Self::Work>, String>;
    /// A result's size, for the progress line's rate (points, tree nodes).
    fn points(work: &Self::Work) -> u64;
}

/// One finished task.
#[derive(Clone, Debug)]
pub struct Entry<W> {
    pub task: u64,
    pub seconds: f64,
    pub rank: u32,
    pub device: String,
    pub work: W,
}

pub struct Ledger<J: Job> {
    path: PathBuf,
    job: J,
    entries: Vec<Entry<J::Work>>,
    /// Entries read back from an earlier run.
    resumed: usize,
    last_write: Option<Instant>,
    /// How long the last rewrite took.
    write_time: Duration,
    dirty: bool,
}

/// Tasks finishing faster than this share one rewrite of the file; so do tasks finishing
/// within ten times the last rewrite's duration, which bounds the time spent rewriting a
/// long ledger to a tenth of the run.
const WRITE_INTERVAL: Duration = Duration::from_millis(100);

fn read_error(path: &Path, msg: impl std::fmt::Display) -> Error {
    Error::Config {
        file: path.display().to_string(),
        msg: format!("cannot resume from this ledger: {msg}"),
    }
}

/// The scalar attribute `name` of `group`, or what is wrong (for `Job::read`).
pub fn read_attr<T: H5Type>(group: &hdf5::Group, name: &str) -> std::result::Result<T, String> {
    group
        .attr(name)
        .and_then(|a| a.read_scalar::<T>())
        .map_err(|e| format!("attribute {}/{name}: {e}", group.name()))
}

/// The dataset `name` of `group`, all of it, or what is wrong (the farm's task ids, whose
/// count gives the rows the other columns are checked against).
pub fn read_column<T: H5Type>(
    group: &hdf5::Group,
    name: &str,
) -> std::result::Result<Vec<T>, String> {
    group
        .dataset(name)
        .and_then(|d| d.read_raw())
        .map_err(|e| format!("dataset {}/{name}: {e}", group.name()))
}

impl<J: Job> Ledger<J> {
    pub fn new(path: &Path, job: J) -> Self {
        Ledger {
            path: path.to_path_buf(),
            job,
            entries: Vec::new(),
            resumed: 0,
            last_write: None,
            write_time: Duration::ZERO,
            dirty: true,
        }
    }

    /// The ledger of an earlier run of the same job at `path`; refused when its job differs.
    /// A missing file starts an empty ledger.
    pub fn resume(path: &Path, job: J) -> Result<Self> {
        let mut ledger = Ledger::new(path, job);
        if !path.exists() {
            log::info!(
                "no ledger at {}: starting from the first task",
                path.display()
            );
            return Ok(ledger);
        }
        ledger.entries = read_entries(path, &ledger.job)?;
        ledger.resumed = ledger.entries.len();
        log::info!(
            "resuming from {}: {} of {} tasks already done",
            path.display(),
            ledger.resumed,
            ledger.job.tasks()
        );
        Ok(ledger)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn job(&self) -> &J {
        &self.job
    }

    pub fn entries(&self) -> &[Entry<J::Work>] {
        &self.entries
    }

    /// How many entries were read back from an earlier run (they come first).
    pub fn resumed(&self) -> usize {
        self.resumed
    }

    /// Whether every task is in.
    pub fn complete(&self) -> bool {
        self.entries.len() >= self.job.tasks()
    }

    pub fn push(&mut self, entry: Entry<J::Work>) {
        self.entries.push(entry);
        self.dirty = true;
    }

    /// Rewrite the file if something changed and the last write is old enough (or `now`).
    pub fn save(&mut self, provenance: &Provenance, now: bool) -> Result<()> {
        // The interval the constant's comment promises: at least ten rewrites' durations.
        let interval = WRITE_INTERVAL.max(self.write_time * 10);
        let due = self.last_write.is_none_or(|t| t.elapsed() >= interval);
        if self.dirty && (now || due) {
            self.write(provenance)?;
        }
        Ok(())
    }

    /// The ledger as report content: under the job's group, the job's attributes,
    /// `tasks_done` and `complete`, and `ledger/{task,seconds,rank,device,...}` (the job's
    /// columns after the farm's).
    pub fn report(&self, report: &mut Report) {
        let mut group = report.group(J::GROUP);
        self.job.describe(&mut group);
        group.count("tasks_done", self.entries.len() as u64);
        group.flag("complete", self.complete(), "no");
        let e = &self.entries;
        let mut ledger = group.subgroup("ledger");
        ledger.data("task", e.iter().map(|x| x.task).collect::<Vec<_>>());
        ledger.data("seconds", e.iter().map(|x| x.seconds).collect::<Vec<_>>());
        ledger.data("rank", e.iter().map(|x| x.rank).collect::<Vec<_>>());
        ledger.data(
            "device",
            e.iter().map(|x| x.device.clone()).collect::<Vec<_>>(),
        );
        let work: Vec<&J::Work> = e.iter().map(|x| &x.work).collect();
        self.job.columns(&work, &mut ledger);
    }

    /// Write the file as it stands: provenance and the ledger's report.
    fn write(&mut self, provenance: &Provenance) -> Result<PathBuf> {
        let started = Instant::now();
        let mut report = Report::new();
        self.report(&mut report);
        let file = ResultFile::create(&self.path)?;
        provenance.write(&file.root())?;
        report.write(&file)?;
        let path = file.finish()?;
        self.last_write = Some(Instant::now());
        self.write_time = started.elapsed();
        self.dirty = false;
        Ok(path)
    }
}

/// The job of the ledger at `path`, or None when there is no file (a run that resumes takes
/// what it left unsaid, such as a default task depth, from there).
pub fn stored_job<J: Job>(path: &Path) -> Result<Option<J>> {
    if !path.exists() {
        return Ok(None);
    }
    let file = open_to_read(path).map_err(|e| read_error(path, e))?;
    let (_, job) = job_group::<J>(path, &file)?;
    Ok(Some(job))
}

/// The job's group in `file` and the job it names.
fn job_group<J: Job>(path: &Path, file: &hdf5::File) -> Result<(hdf5::Group, J)> {
    let group = file.group(J::GROUP).map_err(|_| {
        read_error(
            path,
            format!(
                "it is not a tessera {} result (no /{} group)",
                J::GROUP,
                J::GROUP
            ),
        )
    })?;
    let job = J::read(&group).map_err(|e| read_error(path, e))?;
    Ok((group, job))
}

fn read_entries<J: Job>(path: &Path, want: &J) -> Result<Vec<Entry<J::Work>>> {
    let file = open_to_read(path).map_err(|e| read_error(path, e))?;
    let (group, found) = job_group::<J>(path, &file)?;
    if &found != want {
        return Err(read_error(
            path,
            format!("it holds {found}, but this run is {want}: give another output file, or drop --resume to start over"),
        ));
    }
    let ledger = group
        .group("ledger")
        .map_err(|e| read_error(path, format!("group /{}/ledger: {e}", J::GROUP)))?;
    // The task ids give the rows; every other column is refused unless it holds one item of
    // the type written per row (HDF5 would read a shorter one, or convert a float quietly).
    let columns = || -> std::result::Result<_, String> {
        let task: Vec<u64> = read_column(&ledger, "task")?;
        let rows = [task.len()];
        let form = "one per task of the ledger, as /task";
        let seconds: Vec<f64> = read_stored(&ledger, "seconds", &rows, form)?;
        let rank: Vec<u32> = read_stored(&ledger, "rank", &rows, form)?;
        let device: Vec<hdf5::types::VarLenUnicode> = read_stored(&ledger, "device", &rows, form)?;
        let work = want.read_columns(&ledger, task.len())?;
        Ok((task, seconds, rank, device, work))
    };
    let (task, seconds, rank, device, work) = columns().map_err(|e| read_error(path, e))?;
    check_task_ids::<J>(&task, want.tasks()).map_err(|e| read_error(path, e))?;
    Ok(work
        .into_iter()
        .enumerate()
        .map(|(i, work)| Entry {
            task: task[i],
            seconds: seconds[i],
            rank: rank[i],
            device: device[i].as_str().to_string(),
            work,
        })
        .collect())
}

/// Refuse a ledger's task ids unless each is a task of the job (below `tasks`) and none
/// repeats: the farm would skip a task listed twice and sum the other's result twice.
fn check_task_ids<J: Job>(ids: &[u64], tasks: usize) -> std::result::Result<(), String> {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    let name = format!("/{}/ledger/task", J::GROUP);
    if let Some(&last) = sorted.last().filter(|&&t| t >= tasks as u64) {
        return Err(format!(
            "{name} holds task {last}: expected ids below {tasks}, the job's tasks"
        ));
    }
    match sorted.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(format!(
            "{name} holds task {} twice: expected each task at most once",
            w[0]
        )),
        None => Ok(()),
    }
}
