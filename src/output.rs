//! HDF5 result files: one file per run, written by rank 0 from gathered data, first under
//! `NAME.tmp` and renamed on success, so an interrupted run never leaves a file that looks
//! complete. Also the provenance every file carries as root attributes.

use crate::error::{Error, Result};
use hdf5::types::VarLenUnicode;
use hdf5::{Group, H5Type, Location};
use hdf5_metno as hdf5;
use std::path::{Path, PathBuf};

pub struct ResultFile {
    file: hdf5::File,
    tmp: PathBuf,
    path: PathBuf,
}

fn h5err(path: &Path) -> impl Fn(hdf5::Error) -> Error + '_ {
    move |e| Error::Output {
        path: path.display().to_string(),
        msg: e.to_string(),
    }
}

impl ResultFile {
    pub fn create(path: &Path) -> Result<ResultFile> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::Output {
                path: path.display().to_string(),
                msg: format!("cannot create directory {}: {e}", dir.display()),
            })?;
        }
        let tmp = tmp_path(path);
        let file = hdf5::File::create(&tmp).map_err(h5err(path))?;
        Ok(ResultFile {
            file,
            tmp,
            path: path.to_path_buf(),
        })
    }

    pub fn root(&self) -> Writer<'_> {
        Writer {
            loc: &self.file,
            path: &self.path,
        }
    }

    pub fn group(&self, name: &str) -> Result<GroupWriter<'_>> {
        let group = self.file.create_group(name).map_err(h5err(&self.path))?;
        Ok(GroupWriter {
            group,
            path: &self.path,
        })
    }

    /// Close and remove the temporary file (a probe that the path is writable).
    pub fn discard(self) -> Result<()> {
        let ResultFile { file, tmp, path } = self;
        file.close().map_err(h5err(&path))?;
        std::fs::remove_file(&tmp).map_err(|e| Error::Output {
            path: path.display().to_string(),
            msg: format!("cannot remove {}: {e}", tmp.display()),
        })
    }

    /// Close the file and move it to its final name.
    pub fn finish(self) -> Result<PathBuf> {
        self.close_unfinished()?.finish()
    }

    /// Close the file under its temporary name, so that other ranks can add their parts of
    /// its datasets (`add_part`, one rank after another); `Unfinished::finish` renames it.
    pub fn close_unfinished(self) -> Result<Unfinished> {
        let ResultFile { file, tmp, path } = self;
        file.close().map_err(h5err(&path))?;
        Ok(Unfinished { tmp, path })
    }
}

/// A result file closed under its temporary name.
pub struct Unfinished {
    tmp: PathBuf,
    path: PathBuf,
}

impl Unfinished {
    /// Move the file to its final name.
    pub fn finish(self) -> Result<PathBuf> {
        let Unfinished { tmp, path } = self;
        std::fs::rename(&tmp, &path).map_err(|e| Error::Output {
            path: path.display().to_string(),
            msg: format!("cannot rename {} to it: {e}", tmp.display()),
        })?;
        Ok(path)
    }
}

/// Write `data` from item `start` of the 1-D dataset `name` (its path from the root) of the
/// unfinished result file for `path` (a rank adding its part of a dataset it holds alone).
pub fn add_part<T: H5Type>(path: &Path, name: &str, start: usize, data: &[T]) -> Result<()> {
    let file = hdf5::File::open_rw(tmp_path(path)).map_err(h5err(path))?;
    file.dataset(name)
        .and_then(|d| d.write_slice(data, start..start + data.len()))
        .map_err(h5err(path))?;
    file.close().map_err(h5err(path))
}

/// `add_part` for a 2-D dataset of rows of `width` items: `data` fills rows from `start`.
pub fn add_rows<T: H5Type>(
    path: &Path,
    name: &str,
    start: usize,
    width: usize,
    data: &[T],
) -> Result<()> {
    let file = hdf5::File::open_rw(tmp_path(path)).map_err(h5err(path))?;
    file.dataset(name)
        .and_then(|d| write_rows(&d, start, width, data))
        .map_err(h5err(path))?;
    file.close().map_err(h5err(path))
}

/// Rows `start ..` of a 2-D dataset from `data` (whole rows of `width` items, row-major).
fn write_rows<T: H5Type>(
    d: &hdf5::Dataset,
    start: usize,
    width: usize,
    data: &[T],
) -> hdf5::Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    let rows = data.len() / width;
    let view = ndarray::ArrayView2::from_shape((rows, width), data)
        .map_err(|e| hdf5::Error::from(e.to_string()))?;
    d.write_slice(view, (start..start + rows, 0..width))
}

/// Dataset `name` of `group` in a result file read back (a checkpoint, a ledger), refused
/// unless it holds items of type `T` in `shape` (`form` says what that shape is): the message
/// names the dataset by its path in the file and the shape or type expected. Unchecked, HDF5
/// converts a float to an integer quietly, reads a dataset of another shape as its items in
/// order, and refuses a slice past a shorter one in words that name neither.
pub fn stored_dataset<T: H5Type>(
    group: &Group,
    name: &str,
    shape: &[usize],
    form: &str,
) -> std::result::Result<hdf5::Dataset, String> {
    let path = format!("{}/{name}", group.name().trim_end_matches('/'));
    let want = T::type_descriptor();
    let d = group.dataset(name).map_err(|_| {
        format!("it has no dataset {path}: expected {want} in shape {shape:?} ({form})")
    })?;
    if d.shape() != shape {
        return Err(format!(
            "{path} has shape {:?}: expected {shape:?} ({form})",
            d.shape()
        ));
    }
    match d.dtype().and_then(|t| t.to_descriptor()) {
        Ok(t) if t == want => Ok(d),
        Ok(t) => Err(format!("{path} holds {t}: expected {want} ({form})")),
        Err(_) => Err(format!(
            "{path} holds a type HDF5 cannot describe: expected {want} ({form})"
        )),
    }
}

/// All of `stored_dataset`'s items (row-major).
pub fn read_stored<T: H5Type>(
    group: &Group,
    name: &str,
    shape: &[usize],
    form: &str,
) -> std::result::Result<Vec<T>, String> {
    let d = stored_dataset::<T>(group, name, shape, form)?;
    d.read_raw().map_err(|e| format!("{}: {e}", d.name()))
}

/// An existing HDF5 file opened to read, with the two common failures in plain words: a file
/// cut short (an interrupted copy or write) and a file that is not HDF5 at all; any other in
/// the library's.
pub fn open_to_read(path: &Path) -> hdf5::Result<hdf5::File> {
    hdf5::File::open(path).map_err(|e| {
        let text = e.to_string();
        let after = |key: &str| -> Option<u64> {
            let rest = &text[text.find(key)? + key.len()..];
            let digits = rest.split(|c: char| !c.is_ascii_digit()).next()?;
            digits.parse().ok()
        };
        if text.contains("file signature not found") {
            "not an HDF5 file (no HDF5 signature in it)".into()
        } else if let (true, Some(size), Some(stored)) = (
            text.contains("truncated file"),
            after("eof = "),
            after("stored_eof = "),
        ) {
            format!(
                "the file is cut short: {size} bytes of the {stored} its header records (an interrupted copy or write?)"
            )
            .into()
        } else {
            e
        }
    })
}

/// `PATH.tmp`: where a result is written before it is renamed to `PATH`.
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".tmp");
    PathBuf::from(name)
}

pub struct GroupWriter<'a> {
    group: Group,
    path: &'a Path,
}

impl<'a> GroupWriter<'a> {
    pub fn writer(&self) -> Writer<'_> {
        Writer {
            loc: &self.group,
            path: self.path,
        }
    }

    pub fn subgroup(&self, name: &str) -> Result<GroupWriter<'a>> {
        let group = self.group.create_group(name).map_err(h5err(self.path))?;
        Ok(GroupWriter {
            group,
            path: self.path,
        })
    }

    /// A 1-D dataset.
    /// A 1-D dataset of strings.
    pub fn string_dataset(&self, name: &str, data: &[String]) -> Result<()> {
        let strings: Vec<VarLenUnicode> = data
            .iter()
            .map(|s| {
                let clean: String = s.chars().filter(|&c| c != '\0').collect();
                clean.parse().expect("NUL-free string")
            })
            .collect();
        self.dataset(name, &strings)
    }

    pub fn dataset<T: H5Type>(&self, name: &str, data: &[T]) -> Result<()> {
        self.group
            .new_dataset_builder()
            .with_data(data)
            .create(name)
            .map_err(h5err(self.path))?;
        Ok(())
    }

    /// A 1-D dataset of `len` items, of which `data` fills those from `start` (the others
    /// are added with `add_part`).
    pub fn dataset_part<T: H5Type>(
        &self,
        name: &str,
        len: usize,
        start: usize,
        data: &[T],
    ) -> Result<()> {
        self.group
            .new_dataset::<T>()
            .shape(len)
            .create(name)
            .and_then(|d| match data.is_empty() {
                true => Ok(()),
                false => d.write_slice(data, start..start + data.len()),
            })
            .map_err(h5err(self.path))
    }

    /// `dataset_part` of a 2-D dataset of `rows` rows of `width` items: `data` fills whole
    /// rows from row `start`.
    pub fn dataset_rows_part<T: H5Type>(
        &self,
        name: &str,
        (rows, width): (usize, usize),
        start: usize,
        data: &[T],
    ) -> Result<()> {
        self.group
            .new_dataset::<T>()
            .shape((rows, width))
            .create(name)
            .and_then(|d| write_rows(&d, start, width, data))
            .map_err(h5err(self.path))
    }

    /// A 2-D dataset of `rows` rows, stored row-major from `data`.
    pub fn dataset_2d<T: H5Type>(&self, name: &str, rows: usize, data: &[T]) -> Result<()> {
        let cols = data.len().checked_div(rows).unwrap_or(0);
        let ds = self
            .group
            .new_dataset::<T>()
            .shape((rows, cols))
            .create(name)
            .map_err(h5err(self.path))?;
        ds.write_raw(data).map_err(h5err(self.path))
    }
}

/// Attribute writer for a file's root or a group.
pub struct Writer<'a> {
    loc: &'a Location,
    path: &'a Path,
}

impl Writer<'_> {
    pub fn attr<T: H5Type>(&self, name: &str, value: T) -> Result<()> {
        self.loc
            .new_attr::<T>()
            .create(name)
            .and_then(|a| a.write_scalar(&value))
            .map_err(h5err(self.path))
    }

    pub fn attr_array<T: H5Type>(&self, name: &str, values: &[T]) -> Result<()> {
        self.loc
            .new_attr_builder()
            .with_data(values)
            .create(name)
            .map(|_| ())
            .map_err(h5err(self.path))
    }

    /// A fixed-length ASCII string attribute exactly as long as `value` (up to 32 bytes):
    /// the form readers such as VTK's need for names like VTKHDF's `Type`.
    pub fn attr_ascii(&self, name: &str, value: &str) -> Result<()> {
        use hdf5::types::FixedAscii;
        macro_rules! fixed {
            ($($n:literal)*) => {
                match value.len() {
                    $($n => self.attr(name, FixedAscii::<$n>::from_ascii(value.as_bytes())
                        .map_err(|e| Error::Output { path: self.path.display().to_string(), msg: e.to_string() })?),)*
                    _ => Err(Error::Output {
                        path: self.path.display().to_string(),
                        msg: format!("attribute {name}: an ASCII name of 1 to 32 bytes expected"),
                    }),
                }
            };
        }
        fixed!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32)
    }

    pub fn attr_str(&self, name: &str, value: &str) -> Result<()> {
        // HDF5 strings cannot hold NUL; decks and command lines never should either.
        let clean: String = value.chars().filter(|&c| c != '\0').collect();
        let s: VarLenUnicode = clean.parse().expect("NUL-free string");
        self.attr(name, s)
    }
}

/// How a run was started: its command line and deck text, for provenance.
pub struct Invocation {
    pub command_line: String,
    pub deck: String,
}

impl Invocation {
    /// This process's command line, with the deck text (empty without a deck).
    pub fn current(deck: String) -> Self {
        Invocation {
            command_line: std::env::args().collect::<Vec<_>>().join(" "),
            deck,
        }
    }
}

/// Where and how a result was made; stored as root attributes of every result file.
pub struct Provenance {
    pub command_line: String,
    pub deck: String,
    pub ranks: usize,
    pub threads_per_rank: usize,
    pub hostnames: Vec<String>,
    pub device: String,
    pub start_time: String,
    pub end_time: String,
}

impl Provenance {
    pub fn write(&self, w: &Writer) -> Result<()> {
        w.attr_str("program", "tessera")?;
        w.attr_str("version", env!("CARGO_PKG_VERSION"))?;
        w.attr_str("git_revision", env!("TESSERA_GIT_REVISION"))?;
        w.attr_str("command_line", &self.command_line)?;
        w.attr_str("deck", &self.deck)?;
        w.attr("ranks", self.ranks as u64)?;
        w.attr("threads_per_rank", self.threads_per_rank as u64)?;
        w.attr_str("hostnames", &self.hostnames.join(","))?;
        w.attr_str("device", &self.device)?;
        w.attr_str("start_time", &self.start_time)?;
        w.attr_str("end_time", &self.end_time)
    }
}

/// Seconds since the Unix epoch, as text (UTC), for provenance.
pub fn timestamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!(
        "{}.{:03} (unix seconds, UTC)",
        now.as_secs(),
        now.subsec_millis()
    )
}
