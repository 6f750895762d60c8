//! Langford's job as the task farm sees it (`farm::ledger::Job`): the header that names a
//! ledger (n, method, depth, sum words, tasks), each task's work (its partial sum as exact
//! words, its points and the points visited), and how the ledger stores them
//! (`/langford/ledger/{partial_sum_words,points,visited}` beside the farm's columns).

use super::{depth_expected, LangfordMethod, MAX_N};
use crate::farm::ledger::{read_attr, Job};
use crate::output::read_stored;
use crate::report::Section;
use hdf5::types::VarLenUnicode;
use hdf5_metno as hdf5;

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

/// One task's result: its contribution as words (modulo 2^(64 words), little-endian), the
/// points of its share of the symmetry-reduced space (Godfrey; Miller: tree nodes) and those
/// the walk visited (zero tested; fewer where it pruned).
#[derive(Clone, Debug)]
pub struct Work {
    pub words: Vec<u64>,
    pub points: u64,
    pub visited: u64,
}

/// A ledger's n and task depth, refused outside their ranges (the depth's for n and the
/// ledger's `method`, where that is one: another method's ledger is refused as another job's).
fn read_n_and_depth(group: &hdf5::Group, method: &str) -> Result<(u32, u32), String> {
    let (n, depth) = (read_attr::<u64>(group, "n")?, read_attr::<u64>(group, "depth")?);
    let out_of_range = |key: &str, value: u64, expected: String| {
        format!(
            "attribute {}/{key} = {value} is out of range: expected {expected}",
            group.name()
        )
    };
    let n = u32::try_from(n)
        .ok()
        .filter(|n| (1..=MAX_N).contains(n))
        .ok_or_else(|| out_of_range("n", n, format!("an integer from 1 to {MAX_N}")))?;
    let expected = LangfordMethod::named(method).and_then(|m| depth_expected(n, m, depth));
    match (expected, u32::try_from(depth)) {
        (None, Ok(depth)) => Ok((n, depth)),
        (expected, _) => Err(out_of_range(
            "depth",
            depth,
            expected.unwrap_or("an integer below 2^32".into()),
        )),
    }
}

impl Job for Header {
    type Work = Work;
    const GROUP: &'static str = "langford";

    fn tasks(&self) -> usize {
        self.tasks
    }

    fn describe(&self, group: &mut Section) {
        group.count("n", self.n);
        group.text("method", &self.method);
        group.count("depth", self.depth);
        group.count("words", self.words as u64).stored_only();
        group.count("tasks", self.tasks as u64);
        group.flag("prune", self.prune, "no");
    }

    fn read(group: &hdf5::Group) -> Result<Self, String> {
        let method: VarLenUnicode = read_attr(group, "method")?;
        let (n, depth) = read_n_and_depth(group, method.as_str())?;
        Ok(Header {
            n,
            method: method.as_str().to_string(),
            depth,
            words: read_attr::<u64>(group, "words")? as usize,
            tasks: read_attr::<u64>(group, "tasks")? as usize,
            prune: read_attr::<u64>(group, "prune").unwrap_or(0) != 0,
        })
    }

    fn encode(&self, work: &Work) -> Vec<u64> {
        let mut words = vec![work.points, work.visited];
        words.extend(&work.words);
        words
    }

    fn decode(&self, words: &[u64]) -> Work {
        Work {
            points: words[0],
            visited: words[1],
            words: words[2..].to_vec(),
        }
    }

    fn columns(&self, work: &[&Work], ledger: &mut Section) {
        let words: Vec<u64> = work.iter().flat_map(|w| w.words.iter().copied()).collect();
        ledger.data_2d("partial_sum_words", work.len(), words);
        ledger.data("points", work.iter().map(|w| w.points).collect::<Vec<_>>());
        ledger.data(
            "visited",
            work.iter().map(|w| w.visited).collect::<Vec<_>>(),
        );
    }

    /// Each column refused unless it holds u64 in the shape of the ledger's rows (HDF5 read a
    /// truncated one as it was, and converted floats quietly).
    fn read_columns(&self, ledger: &hdf5::Group, rows: usize) -> Result<Vec<Work>, String> {
        let form = "one row per task of the ledger, one column per word of its sum";
        // A ledger of no task is stored as [0, 0] (no row to take the width from).
        let width = if rows == 0 { 0 } else { self.words };
        let words: Vec<u64> = read_stored(ledger, "partial_sum_words", &[rows, width], form)?;
        let per_task = "one per task of the ledger";
        let points: Vec<u64> = read_stored(ledger, "points", &[rows], per_task)?;
        // Ledgers written before pruning have no `visited`: they visited every point.
        let visited: Vec<u64> = match ledger.dataset("visited") {
            Ok(_) => read_stored(ledger, "visited", &[rows], per_task)?,
            Err(_) => points.clone(),
        };
        Ok((0..rows)
            .map(|i| Work {
                words: words[i * self.words..(i + 1) * self.words].to_vec(),
                points: points[i],
                visited: visited[i],
            })
            .collect())
    }

    fn points(work: &Work) -> u64 {
        work.points
    }
}
