//! Graph files out: `u v [w]` edge lists and Matrix Market coordinate files, written by all
//! ranks at once into one file.
//!
//! Each rank passes over its own edges twice, in bounded chunks. The first pass only sums
//! the lengths its lines will have (digit counts: nothing is formatted); an allgather of
//! those sums is the exclusive scan that gives each rank the byte offset of its lines, after
//! the header rank 0 writes. The second pass formats each chunk in parallel (rayon, one
//! buffer per piece) and writes the pieces at their offsets with positional writes, so no
//! rank waits for another and no bytes cross the network.
//!
//! Everything goes to `PATH.tmp`, which rank 0 renames to `PATH` once every rank has written
//! and synced its bytes: a file under the final name is always whole. Each step that may
//! fail on some ranks only (create, write, rename) ends with `World::agree`, so every rank
//! returns the same error and none waits in a collective another has left.
//!
//! An edge list begins `# tessera edge list: vertices N edges M ...`, which the reader
//! honours (isolated highest ids survive the round trip). Matrix Market files are 1-based;
//! undirected graphs are `symmetric` with each entry in the lower triangle (row ≥ column),
//! directed ones `general`; weighted graphs are `integer`, the others `pattern`.

use crate::comm::{Pair, World};
use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::graph::{Edge, EdgeSource};
use crate::harness::check_output;
use crate::output::tmp_path;
use rayon::prelude::*;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Edge tuples read, measured and formatted at a time per rank (bounds memory).
const CHUNK: u64 = 1 << 20;

/// Edges formatted by one rayon task.
const PIECE: usize = 1 << 14;

/// Which text format a graph file is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphFormat {
    /// `u v` or `u v w` per line, 0-based, after `#` comment lines.
    EdgeList,
    /// Matrix Market coordinate, 1-based.
    MatrixMarket,
}

impl GraphFormat {
    /// Matrix Market for a `.mtx` file (any case), an edge list for anything else.
    pub fn from_path(path: &Path) -> Self {
        let is_mtx = path
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("mtx"));
        if is_mtx {
            GraphFormat::MatrixMarket
        } else {
            GraphFormat::EdgeList
        }
    }
}

/// Write the graph of `source` to `path` in `format`, with `comments` (the same on every
/// rank; one or more lines each) as comment lines after the format's first line. Returns
/// the file's size in bytes. Collective.
pub fn write_graph(
    world: &World,
    source: &dyn EdgeSource,
    path: &Path,
    format: GraphFormat,
    comments: &[String],
) -> Result<u64> {
    let style = LineStyle::new(format, source);
    let header = header(format, source, comments);
    let body = body_len(source, style);
    let sizes = world.allgather(Pair(header.len() as u64, body));
    let header_len = sizes[0].0;
    let offset = header_len + sizes[..world.rank()].iter().map(|s| s.1).sum::<u64>();
    let total = header_len + sizes.iter().map(|s| s.1).sum::<u64>();

    let name = path.display().to_string();
    let tmp = tmp_path(path);
    let on_root = |step: &dyn Fn() -> std::io::Result<()>| {
        if world.is_root() {
            step().map_err(|e| output_error(&name, e))
        } else {
            Ok(())
        }
    };
    world.agree(on_root(&|| create_with_header(&tmp, header.as_bytes())))?;
    let written = write_body(source, style, &tmp, offset).map_err(|e| output_error(&name, e));
    if let Err(e) = world.agree(written) {
        if world.is_root() {
            let _ = std::fs::remove_file(&tmp);
        }
        return Err(e);
    }
    world.agree(on_root(&|| std::fs::rename(&tmp, path)))?;
    Ok(total)
}

/// Make sure `write_graph` can write `path` before anything is computed (collective): rank 0
/// refuses what `check_output` refuses for the run's result (an existing file only without
/// `--force`), creates the directory if missing, refuses the result file itself, then
/// creates and removes `PATH.tmp`. Every rank returns the same outcome.
pub fn check_writable(world: &World, path: &Path, run: &RunConfig) -> Result<()> {
    let probe = || -> Result<()> {
        check_output(path, run.force)?;
        let refuse = |e| output_error(&path.display().to_string(), e);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(refuse)?;
        }
        // After making the directory, through which `path` may lead back to the result.
        if same_file(path, &run.output) {
            let msg = "it is the result file (--output) too: name another file";
            return Err(refuse(std::io::Error::other(msg)));
        }
        let tmp = tmp_path(path);
        File::create(&tmp)
            .and_then(|_| std::fs::remove_file(&tmp))
            .map_err(refuse)
    };
    let outcome = if world.is_root() { probe() } else { Ok(()) };
    world.agree(outcome)
}

/// Whether `a` and `b` name one file, which need not exist yet: each path resolved (links,
/// `..`) where it exists, else its folder.
fn same_file(a: &Path, b: &Path) -> bool {
    let resolved = |p: &Path| {
        p.canonicalize().ok().or_else(|| {
            let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
            Some(
                dir.unwrap_or(Path::new("."))
                    .canonicalize()
                    .ok()?
                    .join(p.file_name()?),
            )
        })
    };
    matches!((resolved(a), resolved(b)), (Some(a), Some(b)) if a == b)
}

fn output_error(name: &str, e: std::io::Error) -> Error {
    Error::Output {
        path: name.to_string(),
        msg: e.to_string(),
    }
}

/// Create (or truncate) the file and write the header at its start.
fn create_with_header(tmp: &Path, header: &[u8]) -> std::io::Result<()> {
    File::create(tmp)?.write_all_at(header, 0)
}

/// Total bytes of this rank's edge lines (first pass).
fn body_len(source: &dyn EdgeSource, style: LineStyle) -> u64 {
    let (mut edges, mut weights) = (Vec::new(), Vec::new());
    let mut total = 0;
    for start in (0..source.local_len()).step_by(CHUNK as usize) {
        read_chunk(source, style, start, &mut edges, &mut weights);
        total += edges
            .par_iter()
            .enumerate()
            .map(|(i, &e)| style.line_len(e, style.weight(&weights, i)))
            .sum::<u64>();
    }
    total
}

/// Format this rank's edge lines and write them from byte `offset` on (second pass), then
/// sync them to storage.
fn write_body(
    source: &dyn EdgeSource,
    style: LineStyle,
    tmp: &Path,
    mut offset: u64,
) -> std::io::Result<()> {
    let file = OpenOptions::new().write(true).open(tmp)?;
    let (mut edges, mut weights) = (Vec::new(), Vec::new());
    for start in (0..source.local_len()).step_by(CHUNK as usize) {
        read_chunk(source, style, start, &mut edges, &mut weights);
        for piece in format_lines(style, &edges, &weights) {
            file.write_all_at(&piece, offset)?;
            offset += piece.len() as u64;
        }
    }
    file.sync_all()
}

/// This rank's edges `start .. start + CHUNK` (clipped) and, if weighted, their weights.
fn read_chunk(
    source: &dyn EdgeSource,
    style: LineStyle,
    start: u64,
    edges: &mut Vec<Edge>,
    weights: &mut Vec<u64>,
) {
    let len = CHUNK.min(source.local_len() - start);
    edges.clear();
    weights.clear();
    source.local_chunk(start, len, edges);
    if style.weighted {
        source.local_weights(start, len, weights);
    }
}

/// The lines of `edges` (with `weights` when weighted), formatted in pieces in parallel.
fn format_lines(style: LineStyle, edges: &[Edge], weights: &[u64]) -> Vec<Vec<u8>> {
    edges
        .par_chunks(PIECE)
        .enumerate()
        .map(|(k, piece)| {
            let mut out = Vec::with_capacity(piece.len() * 16);
            for (i, &e) in piece.iter().enumerate() {
                style.push_line(&mut out, e, style.weight(weights, k * PIECE + i));
            }
            out
        })
        .collect()
}

/// The header: the format's first line, the comment lines, and Matrix Market's size line.
fn header(format: GraphFormat, source: &dyn EdgeSource, comments: &[String]) -> String {
    let (n, m) = (source.num_vertices(), source.num_edges());
    let comment_lines = |mark: &str| -> String {
        let lines = comments.iter().flat_map(|c| c.lines()).map(str::trim_end);
        lines
            .map(|l| {
                if l.is_empty() {
                    format!("{mark}\n")
                } else {
                    format!("{mark} {l}\n")
                }
            })
            .collect()
    };
    match format {
        GraphFormat::EdgeList => {
            let kind = if source.is_directed() {
                "directed"
            } else {
                "undirected"
            };
            let value = if source.is_weighted() {
                "weighted"
            } else {
                "unweighted"
            };
            let first = format!("# tessera edge list: vertices {n} edges {m} {kind} {value}\n");
            first + &comment_lines("#")
        }
        GraphFormat::MatrixMarket => {
            let field = if source.is_weighted() {
                "integer"
            } else {
                "pattern"
            };
            let symmetry = if source.is_directed() {
                "general"
            } else {
                "symmetric"
            };
            let banner = format!("%%MatrixMarket matrix coordinate {field} {symmetry}\n");
            banner + &comment_lines("%") + &format!("{n} {n} {m}\n")
        }
    }
}

/// How an edge becomes a line: which base the ids take, whether the endpoints are put in
/// the lower triangle (larger first), whether a weight follows.
#[derive(Clone, Copy, Debug)]
struct LineStyle {
    base: u64,
    lower_triangle: bool,
    weighted: bool,
}

impl LineStyle {
    fn new(format: GraphFormat, source: &dyn EdgeSource) -> Self {
        let mtx = format == GraphFormat::MatrixMarket;
        LineStyle {
            base: u64::from(mtx),
            lower_triangle: mtx && !source.is_directed(),
            weighted: source.is_weighted(),
        }
    }

    /// The weight of edge `i` of a chunk, when the graph has weights.
    fn weight(&self, weights: &[u64], i: usize) -> Option<u64> {
        self.weighted.then(|| weights[i])
    }

    /// The two ids as written.
    fn ends(&self, (u, v): Edge) -> (u64, u64) {
        let (a, b) = if self.lower_triangle && u < v {
            (v, u)
        } else {
            (u, v)
        };
        (a + self.base, b + self.base)
    }

    /// Bytes of the edge's line, newline included.
    fn line_len(&self, e: Edge, weight: Option<u64>) -> u64 {
        let (a, b) = self.ends(e);
        let w = weight.map_or(0, |w| 1 + digits(w));
        digits(a) + 1 + digits(b) + w + 1
    }

    fn push_line(&self, out: &mut Vec<u8>, e: Edge, weight: Option<u64>) {
        let (a, b) = self.ends(e);
        push_uint(out, a);
        out.push(b' ');
        push_uint(out, b);
        if let Some(w) = weight {
            out.push(b' ');
            push_uint(out, w);
        }
        out.push(b'\n');
    }
}

/// Decimal digits of `x`.
fn digits(x: u64) -> u64 {
    x.checked_ilog10().map_or(1, |l| u64::from(l) + 1)
}

/// Append `x` in decimal.
fn push_uint(out: &mut Vec<u8>, mut x: u64) {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (x % 10) as u8;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[at..]);
}

/// The whole file one rank would write for `source` (its local edges), for tests.
#[cfg(test)]
pub(crate) fn graph_text(
    format: GraphFormat,
    source: &dyn EdgeSource,
    comments: &[String],
) -> Vec<u8> {
    let style = LineStyle::new(format, source);
    let mut text = header(format, source, comments).into_bytes();
    let (mut edges, mut weights) = (Vec::new(), Vec::new());
    for start in (0..source.local_len()).step_by(CHUNK as usize) {
        read_chunk(source, style, start, &mut edges, &mut weights);
        format_lines(style, &edges, &weights)
            .iter()
            .for_each(|piece| text.extend_from_slice(piece));
    }
    assert_eq!(
        text.len() as u64,
        header(format, source, comments).len() as u64 + body_len(source, style)
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::readers::LoadedEdges;

    /// A weighted directed source (SSCA#2-like) over `edges` with weight `3 * i + 1`.
    struct Weighted {
        n: u64,
        edges: Vec<Edge>,
    }

    impl EdgeSource for Weighted {
        fn num_vertices(&self) -> u64 {
            self.n
        }
        fn num_edges(&self) -> u64 {
            self.edges.len() as u64
        }
        fn local_len(&self) -> u64 {
            self.edges.len() as u64
        }
        fn local_chunk(&self, start: u64, len: u64, out: &mut Vec<Edge>) {
            out.extend_from_slice(&self.edges[start as usize..(start + len) as usize]);
        }
        fn is_directed(&self) -> bool {
            true
        }
        fn local_weights(&self, start: u64, len: u64, out: &mut Vec<u64>) {
            out.extend((start..start + len).map(|i| 3 * i + 1));
        }
        fn is_weighted(&self) -> bool {
            true
        }
    }

    fn text(format: GraphFormat, source: &dyn EdgeSource, comments: &[&str]) -> String {
        let comments: Vec<String> = comments.iter().map(|c| c.to_string()).collect();
        String::from_utf8(graph_text(format, source, &comments)).unwrap()
    }

    #[test]
    fn format_from_path() {
        assert_eq!(
            GraphFormat::from_path(Path::new("a/g.MTX")),
            GraphFormat::MatrixMarket
        );
        for p in ["g.el", "g", "g.mtx.gz", "mtx"] {
            assert_eq!(GraphFormat::from_path(Path::new(p)), GraphFormat::EdgeList);
        }
        assert_eq!(
            tmp_path(Path::new("d/g.el")),
            std::path::PathBuf::from("d/g.el.tmp")
        );
    }

    #[test]
    fn edge_list_text() {
        let source = LoadedEdges::new(12, 3, vec![(0, 1), (5, 5), (10, 2)]);
        let got = text(GraphFormat::EdgeList, &source, &["made by\n\ntest ", ""]);
        let expected = "# tessera edge list: vertices 12 edges 3 undirected unweighted\n\
                        # made by\n#\n# test\n0 1\n5 5\n10 2\n";
        assert_eq!(got, expected);
    }

    #[test]
    fn matrix_market_text() {
        let source = LoadedEdges::new(12, 3, vec![(0, 1), (5, 5), (10, 2)]);
        let got = text(GraphFormat::MatrixMarket, &source, &["seed 7"]);
        let expected = "%%MatrixMarket matrix coordinate pattern symmetric\n% seed 7\n\
                        12 12 3\n2 1\n6 6\n11 3\n";
        assert_eq!(got, expected);
        let weighted = Weighted {
            n: 4,
            edges: vec![(0, 3), (3, 0), (2, 1)],
        };
        let got = text(GraphFormat::MatrixMarket, &weighted, &[]);
        let expected = "%%MatrixMarket matrix coordinate integer general\n4 4 3\n\
                        1 4 1\n4 1 4\n3 2 7\n";
        assert_eq!(got, expected);
        let got = text(GraphFormat::EdgeList, &weighted, &[]);
        let expected = "# tessera edge list: vertices 4 edges 3 directed weighted\n\
                        0 3 1\n3 0 4\n2 1 7\n";
        assert_eq!(got, expected);
    }

    #[test]
    fn line_lengths_match_formatting() {
        let style = LineStyle {
            base: 1,
            lower_triangle: true,
            weighted: true,
        };
        let values = [0, 1, 8, 9, 10, 99, 100, 12345, u64::MAX / 2, u64::MAX - 1];
        for &u in &values {
            for &v in &values {
                let mut out = Vec::new();
                style.push_line(&mut out, (u, v), Some(u ^ v));
                assert_eq!(out.len() as u64, style.line_len((u, v), Some(u ^ v)));
                let (a, b) = (u.max(v) + 1, u.min(v) + 1);
                assert_eq!(out, format!("{a} {b} {}\n", u ^ v).into_bytes());
            }
        }
    }

    #[test]
    fn many_chunks_and_pieces_stay_in_order() {
        let edges: Vec<Edge> = (0..(2 * PIECE as u64 + 7))
            .map(|i| (i, i * 7 % 1000))
            .collect();
        let source = LoadedEdges::new(1 << 20, edges.len() as u64, edges.clone());
        let got = text(GraphFormat::EdgeList, &source, &[]);
        let lines: Vec<&str> = got.lines().skip(1).collect();
        assert_eq!(lines.len(), edges.len());
        for (line, (u, v)) in lines.iter().zip(edges) {
            assert_eq!(*line, format!("{u} {v}"));
        }
    }
}
