//! The task ledger: one row per finished task (task id, partial sum as exact words, seconds,
//! rank, device, points of the space, points visited), kept in the run's HDF5 result file. Rank 0 rewrites the whole file
//! (temp name, then rename) as tasks finish, so a run killed at any moment leaves the last
//! complete ledger behind, and `--resume` reads it back and skips those tasks.

use crate::error::{Error, Result};
use crate::output::{Provenance, ResultFile};
use hdf5::types::VarLenUnicode;
use hdf5_metno as hdf5;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a ledger belongs to; a ledger is only resumed by a run with the same header, `prune`
/// aside (pruned and unpruned task sums are equal, so either may continue the other's ledger).
#[derive(Clone, Debug)]
pub struct Header {
    pub n: u32,
    pub method: String,
    pub depth: u32,
    pub words: usize,
    pub tasks: usize,
    /// Whether this run's walk prunes (Godfrey), written as an attribute.
    pub prune: bool,
}

impl PartialEq for Header {
    fn eq(&self, o: &Self) -> bool {
        (self.n, &self.method, self.depth, self.words, self.tasks)
            == (o.n, &o.method, o.depth, o.words, o.tasks)
    }
}

impl std::fmt::Display for Header {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "n = {}, method {}, depth {} ({} tasks, {}-word sums)",
            self.n, self.method, self.depth, self.tasks, self.words
        )
    }
}

#[derive(Clone, Debug)]
pub struct Entry {
    pub task: u64,
    /// The task's contribution, modulo 2^(64 words), little-endian words.
    pub words: Vec<u64>,
    pub seconds: f64,
    pub rank: u32,
    pub device: String,
    /// Points of the task's share of the symmetry-reduced space (Miller: tree nodes).
    pub points: u64,
    /// Points the walk visited (zero tested); the rest lay in pruned sub-cubes.
    pub visited: u64,
}

/// The finished result, written once every task is in the ledger.
pub struct Final {
    /// L(2,n) as little-endian words.
    pub count: Vec<u64>,
    pub count_decimal: String,
    /// Σ over the ledger before the final division, as words.
    pub total: Vec<u64>,
    pub points: f64,
    pub visited: f64,
    pub seconds: f64,
    /// This run's share of each rank.
    pub ranks: Vec<RankStats>,
}

#[derive(Clone, Debug, Default)]
pub struct RankStats {
    pub device: String,
    pub points: u64,
    pub visited: u64,
    pub busy_seconds: f64,
    pub tasks: u64,
}

impl RankStats {
    pub fn points_per_second(&self) -> f64 {
        if self.busy_seconds > 0.0 {
            self.points as f64 / self.busy_seconds
        } else {
            0.0
        }
    }

    pub fn visited_per_second(&self) -> f64 {
        if self.busy_seconds > 0.0 {
            self.visited as f64 / self.busy_seconds
        } else {
            0.0
        }
    }
}

pub struct Ledger {
    path: PathBuf,
    header: Header,
    entries: Vec<Entry>,
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

impl Ledger {
    pub fn new(path: &Path, header: Header) -> Self {
        Ledger {
            path: path.to_path_buf(),
            header,
            entries: Vec::new(),
            resumed: 0,
            last_write: None,
            write_time: Duration::ZERO,
            dirty: true,
        }
    }

    /// The ledger of an earlier run of the same job at `path`; refused when its header
    /// differs. A missing file starts an empty ledger.
    pub fn resume(path: &Path, header: Header) -> Result<Self> {
        let mut ledger = Ledger::new(path, header);
        if !path.exists() {
            log::info!(
                "no ledger at {}: starting from the first task",
                path.display()
            );
            return Ok(ledger);
        }
        ledger.entries = read_entries(path, &ledger.header)?;
        ledger.resumed = ledger.entries.len();
        log::info!(
            "resuming from {}: {} of {} tasks already done",
            path.display(),
            ledger.resumed,
            ledger.header.tasks
        );
        Ok(ledger)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn resumed(&self) -> usize {
        self.resumed
    }

    pub fn push(&mut self, entry: Entry) {
        self.entries.push(entry);
        self.dirty = true;
    }

    /// Rewrite the file if something changed and the last write is old enough (or `now`).
    pub fn save(&mut self, provenance: &Provenance, now: bool) -> Result<()> {
        // The interval the constant's comment promises: at least ten rewrites' durations.
        let interval = WRITE_INTERVAL.max(self.write_time * 10);
        let due = self.last_write.is_none_or(|t| t.elapsed() >= interval);
        if self.dirty && (now || due) {
            self.write(provenance, None)?;
        }
        Ok(())
    }

    /// Write the file: header, ledger, provenance and, once complete, the result.
    pub fn write(&mut self, provenance: &Provenance, result: Option<&Final>) -> Result<PathBuf> {
        let started = Instant::now();
        let file = ResultFile::create(&self.path)?;
        provenance.write(&file.root())?;
        let group = file.group("langford")?;
        let w = group.writer();
        w.attr("n", u64::from(self.header.n))?;
        w.attr_str("method", &self.header.method)?;
        w.attr("depth", u64::from(self.header.depth))?;
        w.attr("words", self.header.words as u64)?;
        w.attr("tasks", self.header.tasks as u64)?;
        w.attr("prune", u8::from(self.header.prune))?;
        w.attr("tasks_done", self.entries.len() as u64)?;
        w.attr("complete", u8::from(result.is_some()))?;
        if let Some(r) = result {
            w.attr_str("count", &r.count_decimal)?;
            w.attr_array("count_words", &r.count)?;
            w.attr_array("total_words", &r.total)?;
            w.attr("points", r.points)?;
            w.attr("visited", r.visited)?;
            w.attr("seconds", r.seconds)?;
            let ranks = group.subgroup("ranks")?;
            let column = |f: fn(&RankStats) -> f64| -> Vec<f64> { r.ranks.iter().map(f).collect() };
            let devices: Vec<String> = r.ranks.iter().map(|x| x.device.clone()).collect();
            ranks.string_dataset("device", &devices)?;
            ranks.dataset("points", &column(|x| x.points as f64))?;
            ranks.dataset("visited", &column(|x| x.visited as f64))?;
            ranks.dataset("busy_seconds", &column(|x| x.busy_seconds))?;
            ranks.dataset("tasks", &column(|x| x.tasks as f64))?;
            ranks.dataset("points_per_second", &column(RankStats::points_per_second))?;
            ranks.dataset("visited_per_second", &column(RankStats::visited_per_second))?;
        }
        let ledger = group.subgroup("ledger")?;
        let e = &self.entries;
        ledger.dataset("task", &e.iter().map(|x| x.task).collect::<Vec<_>>())?;
        let words: Vec<u64> = e.iter().flat_map(|x| x.words.iter().copied()).collect();
        ledger.dataset_2d("partial_sum_words", e.len(), &words)?;
        ledger.dataset("seconds", &e.iter().map(|x| x.seconds).collect::<Vec<_>>())?;
        ledger.dataset("rank", &e.iter().map(|x| x.rank).collect::<Vec<_>>())?;
        ledger.string_dataset(
            "device",
            &e.iter().map(|x| x.device.clone()).collect::<Vec<_>>(),
        )?;
        ledger.dataset("points", &e.iter().map(|x| x.points).collect::<Vec<_>>())?;
        ledger.dataset("visited", &e.iter().map(|x| x.visited).collect::<Vec<_>>())?;
        let path = file.finish()?;
        self.last_write = Some(Instant::now());
        self.write_time = started.elapsed();
        self.dirty = false;
        Ok(path)
    }
}

fn read_entries(path: &Path, want: &Header) -> Result<Vec<Entry>> {
    let file = hdf5::File::open(path).map_err(|e| read_error(path, e))?;
    let group = file.group("langford").map_err(|_| {
        read_error(
            path,
            "it is not a tessera Langford result (no /langford group)",
        )
    })?;
    let attr_u64 = |name: &str| -> Result<u64> {
        group
            .attr(name)
            .and_then(|a| a.read_scalar::<u64>())
            .map_err(|e| read_error(path, format!("attribute /langford/{name}: {e}")))
    };
    let method: VarLenUnicode = group
        .attr("method")
        .and_then(|a| a.read_scalar())
        .map_err(|e| read_error(path, format!("attribute /langford/method: {e}")))?;
    let found = Header {
        n: attr_u64("n")? as u32,
        method: method.as_str().to_string(),
        depth: attr_u64("depth")? as u32,
        words: attr_u64("words")? as usize,
        tasks: attr_u64("tasks")? as usize,
        prune: want.prune,
    };
    if &found != want {
        return Err(read_error(
            path,
            format!("it holds {found}, but this run is {want}: give another output file, or drop --resume to start over"),
        ));
    }
    let read = |name: &str| -> Result<hdf5::Dataset> {
        group
            .dataset(&format!("ledger/{name}"))
            .map_err(|e| read_error(path, format!("dataset /langford/ledger/{name}: {e}")))
    };
    let bad = |name: &'static str| {
        move |e: hdf5::Error| read_error(path, format!("/langford/ledger/{name}: {e}"))
    };
    let task: Vec<u64> = read("task")?.read_raw().map_err(bad("task"))?;
    let words: Vec<u64> = read("partial_sum_words")?
        .read_raw()
        .map_err(bad("partial_sum_words"))?;
    let seconds: Vec<f64> = read("seconds")?.read_raw().map_err(bad("seconds"))?;
    let rank: Vec<u32> = read("rank")?.read_raw().map_err(bad("rank"))?;
    let device: Vec<VarLenUnicode> = read("device")?.read_raw().map_err(bad("device"))?;
    let points: Vec<u64> = read("points")?.read_raw().map_err(bad("points"))?;
    // Ledgers written before pruning have no `visited`: they visited every point.
    let visited: Vec<u64> = match group.dataset("ledger/visited") {
        Ok(d) => d.read_raw().map_err(bad("visited"))?,
        Err(_) => points.clone(),
    };
    let rows = task.len();
    let consistent = [
        seconds.len(),
        rank.len(),
        device.len(),
        points.len(),
        visited.len(),
    ]
    .iter()
    .all(|&l| l == rows)
        && words.len() == rows * want.words
        && task.iter().all(|&t| (t as usize) < want.tasks);
    if !consistent {
        return Err(read_error(
            path,
            "its ledger datasets disagree in length or name tasks that do not exist",
        ));
    }
    Ok((0..rows)
        .map(|i| Entry {
            task: task[i],
            words: words[i * want.words..(i + 1) * want.words].to_vec(),
            seconds: seconds[i],
            rank: rank[i],
            device: device[i].as_str().to_string(),
            points: points[i],
            visited: visited[i],
        })
        .collect())
}
