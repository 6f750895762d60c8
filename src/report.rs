//! A run's one report: named figures with units, and datasets, each at a path in the result
//! file ("cc/components", "cc/rounds/seconds"). A workload builds it once; the harness prints
//! the figures as the statistics block (rank 0, `name: value unit`, aligned) and writes the
//! same value to HDF5 (figures as attributes of their group, datasets below it), so what is
//! shown and what is stored cannot drift apart.

use crate::error::Result;
use crate::output::{add_part, add_rows, GroupWriter, ResultFile, Writer};
use std::collections::BTreeMap;
use std::path::Path;

/// A figure's stored value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    U64(u64),
    F64(f64),
    Text(String),
    /// A short ASCII name, stored as a fixed-length string (VTKHDF's `Type`).
    Ascii(String),
    U64s(Vec<u64>),
    F64s(Vec<f64>),
}

/// One named figure: its path in the file, its stored value (`None`: printed only), its unit
/// ("" for counts), and what the statistics block prints for it (`None`: stored only).
#[derive(Debug, Clone)]
pub struct Figure {
    pub path: String,
    pub value: Option<Value>,
    pub unit: &'static str,
    pub shown: Option<String>,
}

/// A dataset's items.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    U8(Vec<u8>),
    U32(Vec<u32>),
    I32(Vec<i32>),
    U64(Vec<u64>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Text(Vec<String>),
}

macro_rules! column_from {
    ($($t:ty => $arm:ident),*) => {$(
        impl From<Vec<$t>> for Column {
            fn from(v: Vec<$t>) -> Column {
                Column::$arm(v)
            }
        }
        impl From<&[$t]> for Column {
            fn from(v: &[$t]) -> Column {
                Column::$arm(v.to_vec())
            }
        }
    )*};
}
column_from!(u8 => U8, u32 => U32, i32 => I32, u64 => U64, i64 => I64, f64 => F64, String => Text);

impl Column {
    fn len(&self) -> usize {
        match self {
            Column::U8(v) => v.len(),
            Column::U32(v) => v.len(),
            Column::I32(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Text(v) => v.len(),
        }
    }
}

/// A dataset at a path: 1-D, or 2-D with `rows` rows stored row-major.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub path: String,
    pub column: Column,
    pub rows: Option<usize>,
}

/// This rank's items `start ..` of a 1-D dataset of `len` items that every rank fills in part
/// (with `width` > 1: rows `start ..` of a 2-D dataset of `len` rows of `width` items).
#[derive(Debug, Clone)]
pub struct DatasetPart {
    pub path: String,
    pub len: usize,
    pub start: usize,
    pub width: usize,
    pub column: Column,
}

/// Everything a run reports.
#[derive(Debug, Default, Clone)]
pub struct Report {
    /// Lines printed before the statistics block (a headline such as "L(2,12) = 108144").
    pub headlines: Vec<String>,
    pub figures: Vec<Figure>,
    pub datasets: Vec<Dataset>,
    /// This rank's parts of datasets written by every rank (rank 0 makes them).
    pub parts: Vec<DatasetPart>,
    /// The output already holds this run's state to resume from (a run stopped early wrote
    /// its checkpoint or ledger there): the report is printed, and the file left as it is.
    pub kept_in_checkpoint: bool,
}

impl Report {
    pub fn new() -> Report {
        Report::default()
    }

    /// The report of a run that stopped early, its output being the checkpoint it wrote.
    pub fn checkpointed() -> Report {
        Report {
            kept_in_checkpoint: true,
            ..Report::default()
        }
    }

    /// Figures and datasets under the group `group` ("cc", "bfs/levels").
    pub fn group(&mut self, group: &str) -> Section<'_> {
        Section {
            report: self,
            group: group.trim_matches('/').to_string(),
        }
    }

    /// A line printed before the statistics block (not stored).
    pub fn headline(&mut self, line: impl Into<String>) {
        self.headlines.push(line.into());
    }

    /// The headlines, then the statistics block: `name: value unit`, values aligned.
    pub fn render(&self) -> String {
        let rows: Vec<(&str, String)> = self
            .figures
            .iter()
            .filter_map(|f| {
                let shown = f.shown.as_ref()?;
                let name = f.path.rsplit('/').next().unwrap_or(&f.path);
                let text = if f.unit.is_empty() {
                    shown.clone()
                } else {
                    format!("{shown} {}", f.unit)
                };
                Some((name, text))
            })
            .collect();
        let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0) + 2;
        let mut out = String::new();
        for line in &self.headlines {
            out.push_str(line);
            out.push('\n');
        }
        for (name, value) in rows {
            out.push_str(&format!("{:<width$}{value}\n", format!("{name}:")));
        }
        out
    }

    /// Write every figure and dataset into `file` (groups made as needed).
    pub fn write(&self, file: &ResultFile) -> Result<()> {
        let mut groups: BTreeMap<String, GroupWriter<'_>> = BTreeMap::new();
        for f in &self.figures {
            let Some(value) = &f.value else { continue };
            let (group, name) = split(&f.path);
            if group.is_empty() {
                write_value(&file.root(), name, value)?;
            } else {
                let g = open_group(file, &mut groups, group)?;
                write_value(&g.writer(), name, value)?;
            }
        }
        for d in &self.datasets {
            let (group, name) = split(&d.path);
            let g = open_group(file, &mut groups, group)?;
            write_column(g, name, &d.column, d.rows)?;
        }
        for d in &self.parts {
            let (group, name) = split(&d.path);
            let g = open_group(file, &mut groups, group)?;
            macro_rules! put {
                ($v:expr) => {
                    match d.width {
                        1 => g.dataset_part(name, d.len, d.start, $v),
                        w => g.dataset_rows_part(name, (d.len, w), d.start, $v),
                    }
                };
            }
            match_part!(d.column, put, &d.path)?;
        }
        Ok(())
    }

    /// Add this rank's dataset parts to the unfinished result file for `path`, whose
    /// datasets rank 0's `write` made.
    pub fn add_parts(&self, path: &Path) -> Result<()> {
        for d in self.parts.iter().filter(|d| d.column.len() > 0) {
            macro_rules! put {
                ($v:expr) => {
                    match d.width {
                        1 => add_part(path, &d.path, d.start, $v),
                        w => add_rows(path, &d.path, d.start, w, $v),
                    }
                };
            }
            match_part!(d.column, put, &d.path)?;
        }
        Ok(())
    }
}

/// `$put` on a numeric column's items; text has no parts.
macro_rules! match_part {
    ($column:expr, $put:ident, $path:expr) => {
        match &$column {
            Column::U8(v) => $put!(v),
            Column::U32(v) => $put!(v),
            Column::I32(v) => $put!(v),
            Column::U64(v) => $put!(v),
            Column::I64(v) => $put!(v),
            Column::F64(v) => $put!(v),
            Column::Text(_) => Err(crate::error::Error::Output {
                path: $path.to_string(),
                msg: "a text dataset cannot be written in parts".into(),
            }),
        }
    };
}
use match_part;

/// (group, name) of a path: "cc/rounds/seconds" is ("cc/rounds", "seconds").
fn split(path: &str) -> (&str, &str) {
    path.rsplit_once('/').unwrap_or(("", path))
}

/// The group at `path`, made (with its parents) on first use.
fn open_group<'f, 'm>(
    file: &'f ResultFile,
    groups: &'m mut BTreeMap<String, GroupWriter<'f>>,
    path: &str,
) -> Result<&'m GroupWriter<'f>> {
    let mut made = String::new();
    for part in path.split('/') {
        let parent = made.clone();
        if !made.is_empty() {
            made.push('/');
        }
        made.push_str(part);
        if !groups.contains_key(&made) {
            let group = if parent.is_empty() {
                file.group(part)?
            } else {
                groups[&parent].subgroup(part)?
            };
            groups.insert(made.clone(), group);
        }
    }
    Ok(&groups[&made])
}

fn write_value(w: &Writer, name: &str, value: &Value) -> Result<()> {
    match value {
        Value::U64(v) => w.attr(name, *v),
        Value::F64(v) => w.attr(name, *v),
        Value::Text(s) => w.attr_str(name, s),
        Value::Ascii(s) => w.attr_ascii(name, s),
        Value::U64s(v) => w.attr_array(name, v),
        Value::F64s(v) => w.attr_array(name, v),
    }
}

fn write_column(g: &GroupWriter, name: &str, column: &Column, rows: Option<usize>) -> Result<()> {
    macro_rules! put {
        ($v:expr) => {
            match rows {
                Some(rows) => g.dataset_2d(name, rows, $v),
                None => g.dataset(name, $v),
            }
        };
    }
    match column {
        Column::U8(v) => put!(v),
        Column::U32(v) => put!(v),
        Column::I32(v) => put!(v),
        Column::U64(v) => put!(v),
        Column::I64(v) => put!(v),
        Column::F64(v) => put!(v),
        Column::Text(v) => g.string_dataset(name, v),
    }
}

/// `values` as the statistics block prints a list: "1,2,3".
fn comma_separated<T: ToString>(values: &[T]) -> String {
    let texts: Vec<String> = values.iter().map(T::to_string).collect();
    texts.join(",")
}

/// Figures and datasets under one group of a report.
pub struct Section<'r> {
    report: &'r mut Report,
    group: String,
}

impl Section<'_> {
    fn path(&self, name: &str) -> String {
        if self.group.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.group)
        }
    }

    fn push(&mut self, name: &str, value: Value, unit: &'static str, shown: String) -> &mut Self {
        let path = self.path(name);
        self.report.figures.push(Figure {
            path,
            value: Some(value),
            unit,
            shown: Some(shown),
        });
        self
    }

    /// A count (an integer without a unit).
    pub fn count(&mut self, name: &str, value: impl Into<u64>) -> &mut Self {
        let v = value.into();
        self.push(name, Value::U64(v), "", v.to_string())
    }

    /// Seconds, printed to the microsecond.
    pub fn seconds(&mut self, name: &str, value: f64) -> &mut Self {
        self.push(name, Value::F64(value), "s", format!("{value:.6}"))
    }

    /// A rate, printed with five significant digits.
    pub fn rate(&mut self, name: &str, value: f64, unit: &'static str) -> &mut Self {
        self.push(name, Value::F64(value), unit, format!("{value:.4e}"))
    }

    /// Any number with its unit, printed as Rust prints it.
    pub fn number(&mut self, name: &str, value: f64, unit: &'static str) -> &mut Self {
        self.push(name, Value::F64(value), unit, value.to_string())
    }

    /// Any number with its unit, printed with `digits` after the point.
    pub fn fixed(
        &mut self,
        name: &str,
        value: f64,
        digits: usize,
        unit: &'static str,
    ) -> &mut Self {
        self.push(name, Value::F64(value), unit, format!("{value:.digits$}"))
    }

    /// A number with its unit, printed in scientific notation with `digits` after the point.
    pub fn scientific(
        &mut self,
        name: &str,
        value: f64,
        digits: usize,
        unit: &'static str,
    ) -> &mut Self {
        self.push(name, Value::F64(value), unit, format!("{value:.digits$e}"))
    }

    /// Text.
    pub fn text(&mut self, name: &str, value: impl Into<String>) -> &mut Self {
        let v = value.into();
        self.push(name, Value::Text(v.clone()), "", v)
    }

    /// A short ASCII name stored as a fixed-length string attribute, not printed.
    pub fn ascii(&mut self, name: &str, value: &str) -> &mut Self {
        self.push(name, Value::Ascii(value.into()), "", String::new())
            .stored_only()
    }

    /// A yes/no figure: stored as 0 or 1, printed as `yes` or `no_text` ("no", "skipped").
    pub fn flag(&mut self, name: &str, value: bool, no_text: &str) -> &mut Self {
        let shown = if value { "yes" } else { no_text };
        self.push(name, Value::U64(u64::from(value)), "", shown.to_string())
    }

    /// A list of numbers stored as one attribute, printed comma-separated.
    pub fn list(&mut self, name: &str, values: &[f64], unit: &'static str) -> &mut Self {
        self.push(
            name,
            Value::F64s(values.to_vec()),
            unit,
            comma_separated(values),
        )
    }

    /// A list of counts stored as one attribute, printed comma-separated.
    pub fn counts(&mut self, name: &str, values: &[u64]) -> &mut Self {
        self.push(
            name,
            Value::U64s(values.to_vec()),
            "",
            comma_separated(values),
        )
    }

    /// Print the last figure as `text` instead (its stored value unchanged).
    pub fn shown_as(&mut self, text: impl Into<String>) -> &mut Self {
        let last = self.report.figures.last_mut().expect("a figure to show");
        last.shown = Some(text.into());
        self
    }

    /// Store the last figure without printing it.
    pub fn stored_only(&mut self) -> &mut Self {
        let last = self.report.figures.last_mut().expect("a figure to hide");
        last.shown = None;
        self
    }

    /// A line of the statistics block that is not stored (`name: text`; its value lives in
    /// datasets, as the largest components do).
    pub fn shown_only(&mut self, name: &str, text: impl Into<String>) -> &mut Self {
        let path = self.path(name);
        self.report.figures.push(Figure {
            path,
            value: None,
            unit: "",
            shown: Some(text.into()),
        });
        self
    }

    /// A 1-D dataset.
    pub fn data(&mut self, name: &str, column: impl Into<Column>) -> &mut Self {
        let path = self.path(name);
        self.report.datasets.push(Dataset {
            path,
            column: column.into(),
            rows: None,
        });
        self
    }

    /// This rank's items from `start` of a 1-D dataset of `len` items, every rank giving its
    /// part (their parts are written one rank after another into the one file).
    pub fn data_part(
        &mut self,
        name: &str,
        len: usize,
        start: usize,
        column: impl Into<Column>,
    ) -> &mut Self {
        self.rows_part(name, (len, 1), start, column)
    }

    /// `data_part` of a 2-D dataset of `rows` rows of `width` items: this rank's whole rows
    /// from row `start`, row-major.
    pub fn rows_part(
        &mut self,
        name: &str,
        (rows, width): (usize, usize),
        start: usize,
        column: impl Into<Column>,
    ) -> &mut Self {
        let path = self.path(name);
        self.report.parts.push(DatasetPart {
            path,
            len: rows,
            start,
            width,
            column: column.into(),
        });
        self
    }

    /// A 2-D dataset of `rows` rows, row-major.
    pub fn data_2d(&mut self, name: &str, rows: usize, column: impl Into<Column>) -> &mut Self {
        let column = column.into();
        debug_assert!(rows == 0 || column.len().is_multiple_of(rows));
        let path = self.path(name);
        self.report.datasets.push(Dataset {
            path,
            column,
            rows: Some(rows),
        });
        self
    }

    /// Figures and datasets in the subgroup `name` of this one.
    pub fn subgroup(&mut self, name: &str) -> Section<'_> {
        let group = self.path(name);
        Section {
            report: self.report,
            group,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdf5_metno as hdf5;

    fn sample() -> Report {
        let mut report = Report::new();
        report.headline("L(2,3) = 1");
        let mut r = report.group("cc");
        r.count("components", 3u64);
        r.seconds("cc_seconds", 0.25);
        r.rate("edges_per_second", 1234.5, "edges/s");
        r.flag("verified", false, "skipped");
        r.count("trials", 2u64).stored_only();
        r.shown_only("largest_component", "5 (label 0)");
        r.data("labels", vec![0u64, 0, 2]);
        r.subgroup("rounds")
            .data_2d("bytes", 2, vec![1.0f64, 2.0, 3.0, 4.0]);
        report
    }

    #[test]
    fn the_block_prints_shown_figures_aligned_with_units() {
        let text = sample().render();
        assert_eq!(
            text,
            "L(2,3) = 1\n\
             components:        3\n\
             cc_seconds:        0.250000 s\n\
             edges_per_second:  1.2345e3 edges/s\n\
             verified:          skipped\n\
             largest_component: 5 (label 0)\n"
        );
    }

    #[test]
    fn the_file_holds_stored_figures_and_datasets() {
        let dir = std::env::temp_dir().join(format!("tessera-report-{}", std::process::id()));
        let path = dir.join("r.h5");
        let file = ResultFile::create(&path).unwrap();
        sample().write(&file).unwrap();
        file.finish().unwrap();
        let f = hdf5::File::open(&path).unwrap();
        let cc = f.group("cc").unwrap();
        let attr = |name: &str| cc.attr(name).unwrap();
        assert_eq!(attr("components").read_scalar::<u64>().unwrap(), 3);
        assert_eq!(attr("trials").read_scalar::<u64>().unwrap(), 2);
        assert_eq!(attr("verified").read_scalar::<u64>().unwrap(), 0);
        assert_eq!(attr("cc_seconds").read_scalar::<f64>().unwrap(), 0.25);
        assert!(cc.attr("largest_component").is_err(), "printed only");
        let labels = f.dataset("cc/labels").unwrap().read_raw::<u64>().unwrap();
        assert_eq!(labels, [0, 0, 2]);
        let bytes = f.dataset("cc/rounds/bytes").unwrap();
        assert_eq!(bytes.shape(), [2, 2]);
        drop(f);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
