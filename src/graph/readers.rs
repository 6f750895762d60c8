//! Graph file readers: plain edge lists and Matrix Market coordinate files.
//!
//! Each rank reads only its own byte range of the file's data region: the range is
//! `block_range(data_len, size, rank)`, and a rank owns exactly the lines whose first byte
//! lies in that range (it skips a partial first line and reads past its end to finish its
//! last one). The owned bytes are read in bounded chunks and each chunk is parsed in
//! parallel with rayon, directly from bytes.
//!
//! An edge list alone cannot say that its highest ids are isolated vertices, so a leading
//! comment `# tessera ... vertices N edges M` (what `writers` writes) declares N and M; files
//! without it keep N = largest id + 1.

use crate::comm::file_parts::{line_number, owned_span, ReadAt};
use crate::comm::{Op, World};
use crate::error::{Error, Result};
use crate::files::must_be_regular;
use crate::graph::{block_range, Edge, EdgeSource};
use rayon::prelude::*;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::ops::Range;
use std::path::Path;

/// Vertex ids must be below this (the Graph500 48-bit id limit).
const ID_LIMIT: u64 = 1 << 48;

/// Bytes of owned lines read and parsed at a time (grown for a single longer line).
const CHUNK_BYTES: usize = 64 << 20;

/// Longest excerpt of a bad line quoted in an error message.
const QUOTE_CHARS: usize = 80;

/// What the Matrix Market banner line must look like.
const MTX_EXPECTED: &str =
    "%%MatrixMarket matrix coordinate <pattern|real|integer> <general|symmetric>";

/// Result of parsing a byte chunk: the edges, or the byte offset (within the chunk) of the
/// first bad line and a message saying what was expected and what was found.
type ParseResult = std::result::Result<Vec<Edge>, (usize, String)>;

/// The edge tuples this rank read from a file, with the global vertex and edge counts.
#[derive(Debug)]
pub struct LoadedEdges {
    n: u64,
    m: u64,
    local: Vec<Edge>,
}

impl LoadedEdges {
    /// Edges already in memory: this rank's `local` share of a graph with `n` vertices and `m`
    /// edge tuples over all ranks (used by tests and by callers that build graphs themselves).
    pub fn new(n: u64, m: u64, local: Vec<Edge>) -> Self {
        LoadedEdges { n, m, local }
    }
}

impl EdgeSource for LoadedEdges {
    fn num_vertices(&self) -> u64 {
        self.n
    }

    fn num_edges(&self) -> u64 {
        self.m
    }

    fn local_len(&self) -> u64 {
        self.local.len() as u64
    }

    fn local_chunk(&self, start: u64, len: u64, out: &mut Vec<Edge>) {
        out.extend_from_slice(&self.local[start as usize..(start + len) as usize]);
    }
}

/// Read a graph collectively: `.mtx` files as Matrix Market coordinate, anything else as a
/// plain `u v [w]` edge list. Every rank must call this; each reads only its share of the
/// file. An error one rank finds (unreadable file, malformed line in its share) is shared
/// with every rank before the next collective (`World::agree`), so all return it alike.
pub fn read_graph(world: &World, path: &Path) -> Result<LoadedEdges> {
    let read = read_file(world, path);
    world.agree(read)
}

fn read_file(world: &World, path: &Path) -> Result<LoadedEdges> {
    let name = path.display().to_string();
    let file = must_be_regular(path)
        .and_then(|()| File::open(path))
        .map_err(|e| input_file(&name, format!("cannot open: {e}")));
    let file = world.agree(file)?;
    let is_mtx = path
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("mtx"));
    if is_mtx {
        read_mtx(world, &file, &name)
    } else {
        read_edge_list(world, &file, &name)
    }
}

/// Read a plain edge list. N is the vertex count a `# tessera` header comment declares
/// (every id must be below it), else the largest id plus one; M is the number of lines with
/// an edge, checked against the header's edge count when it gives one.
fn read_edge_list(world: &World, file: &File, name: &str) -> Result<LoadedEdges> {
    let header = world.agree(parse_edge_list_header(BufReader::new(file), name))?;
    let len = world.agree(file_len(file, name))?;
    let local = read_local_edges(world, file, name, 0..len, |bytes| {
        parse_edge_list(bytes, header.vertices)
    });
    let local = world.agree(local)?;
    let m = world.allreduce(local.len() as u64, Op::Sum);
    if let Some(edges) = header.edges.filter(|&edges| edges != m) {
        let msg = format!("header says {edges} edges, but the file has {m}");
        return Err(input_file(name, msg));
    }
    let n = match header.vertices {
        Some(n) => n,
        None if m == 0 => return Err(input_file(name, "no edges found".into())),
        None => {
            let local_n = local.par_iter().map(|&(u, v)| u.max(v) + 1).max();
            world.allreduce(local_n.unwrap_or(0), Op::Max)
        }
    };
    Ok(LoadedEdges { n, m, local })
}

/// Read a Matrix Market coordinate file: N is max(rows, cols), and the entry count summed
/// over all ranks must match the size line's nnz.
fn read_mtx(world: &World, file: &File, name: &str) -> Result<LoadedEdges> {
    let header = world.agree(parse_mtx_header(BufReader::new(file), name))?;
    let len = world.agree(file_len(file, name))?;
    let (rows, cols) = (header.rows, header.cols);
    let local = read_local_edges(world, file, name, header.data_start..len, |bytes| {
        parse_mtx_entries(bytes, rows, cols)
    });
    let local = world.agree(local)?;
    let m = world.allreduce(local.len() as u64, Op::Sum);
    if m != header.nnz {
        return Err(input_file(
            name,
            format!(
                "size line says {} entries, but the file has {m}",
                header.nnz
            ),
        ));
    }
    if m == 0 {
        return Err(input_file(name, "no edges found".into()));
    }
    Ok(LoadedEdges {
        n: rows.max(cols),
        m,
        local,
    })
}

/// Length of the file in bytes.
fn file_len(file: &File, name: &str) -> Result<u64> {
    file.metadata()
        .map(|meta| meta.len())
        .map_err(|e| input_file(name, format!("cannot read: {e}")))
}

/// Read and parse the lines this rank owns in the data region `data` of the file.
/// A bad line becomes an `Error::Input` carrying its 1-based line number in the file.
fn read_local_edges<F>(
    world: &World,
    file: &File,
    name: &str,
    data: Range<u64>,
    parse: F,
) -> Result<Vec<Edge>>
where
    F: Fn(&[u8]) -> ParseResult + Sync,
{
    let io_err = |e: io::Error| input_file(name, format!("cannot read: {e}"));
    let part = block_range(data.end - data.start, world.size(), world.rank());
    let part = data.start + part.start..data.start + part.end;
    let span = owned_span(file, &data, part).map_err(io_err)?;
    match read_span_edges(file, span, CHUNK_BYTES, &parse) {
        Ok(edges) => Ok(edges),
        Err(ReadFail::Io(e)) => Err(io_err(e)),
        Err(ReadFail::Line { offset, msg }) => Err(Error::Input {
            file: name.to_string(),
            line: line_number(file, offset).map_err(io_err)?,
            msg,
        }),
    }
}

/// An `Error::InputFile` for the named file.
fn input_file(name: &str, msg: String) -> Error {
    Error::InputFile {
        file: name.to_string(),
        msg,
    }
}

/// Why reading a span of lines failed.
#[derive(Debug)]
enum ReadFail {
    /// The bytes could not be read.
    Io(io::Error),
    /// The line starting at absolute byte `offset` is malformed.
    Line { offset: u64, msg: String },
}

/// Read the lines in `span` in chunks of about `chunk` bytes (each cut after a '\n', grown
/// when one line is longer) and parse each chunk in parallel.
fn read_span_edges<R, F>(
    src: &R,
    span: Range<u64>,
    chunk: usize,
    parse: &F,
) -> std::result::Result<Vec<Edge>, ReadFail>
where
    R: ReadAt + ?Sized,
    F: Fn(&[u8]) -> ParseResult + Sync,
{
    let mut edges = Vec::new();
    let mut buf = Vec::new();
    let mut want = chunk.max(1);
    let mut pos = span.start;
    while pos < span.end {
        let len = (span.end - pos).min(want as u64) as usize;
        buf.resize(len, 0);
        src.read_exact_at(&mut buf, pos).map_err(ReadFail::Io)?;
        let cut = if pos + len as u64 == span.end {
            len
        } else if let Some(i) = buf.iter().rposition(|&b| b == b'\n') {
            i + 1
        } else {
            want *= 2;
            continue;
        };
        parse_parallel(&buf[..cut], parse, &mut edges).map_err(|(at, msg)| ReadFail::Line {
            offset: pos + at as u64,
            msg,
        })?;
        pos += cut as u64;
        want = chunk.max(1);
    }
    Ok(edges)
}

/// Parse `bytes` (whole lines) in pieces, one rayon task each, appending the edges to `out`
/// in file order. On failure returns the first bad line's offset within `bytes`.
fn parse_parallel<F>(
    bytes: &[u8],
    parse: &F,
    out: &mut Vec<Edge>,
) -> std::result::Result<(), (usize, String)>
where
    F: Fn(&[u8]) -> ParseResult + Sync,
{
    let pieces = split_lines(bytes, rayon::current_num_threads() * 4);
    let parsed: Vec<ParseResult> = pieces
        .par_iter()
        .map(|r| parse(&bytes[r.clone()]).map_err(|(at, msg)| (r.start + at, msg)))
        .collect();
    let mut done = Vec::with_capacity(parsed.len());
    for piece in parsed {
        done.push(piece?);
    }
    out.reserve(done.iter().map(Vec::len).sum());
    for piece in done {
        out.extend_from_slice(&piece);
    }
    Ok(())
}

/// Split `bytes` into at most `pieces` non-empty consecutive ranges covering it, each
/// ending just after a '\n' or at the end of `bytes`.
fn split_lines(bytes: &[u8], pieces: usize) -> Vec<Range<usize>> {
    let pieces = pieces.max(1);
    let mut ranges = Vec::with_capacity(pieces);
    let mut start = 0;
    for k in 1..=pieces {
        let target = bytes.len() * k / pieces;
        if target <= start {
            continue;
        }
        let end = match bytes[target - 1..].iter().position(|&b| b == b'\n') {
            Some(i) => target + i,
            None => bytes.len(),
        };
        ranges.push(start..end);
        start = end;
    }
    ranges
}

/// The lines of `bytes` with the byte offset where each starts, without '\n' or a final
/// '\r'. A trailing '\n' yields a last empty line.
fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let base = bytes.as_ptr() as usize;
    bytes.split(|&b| b == b'\n').map(move |line| {
        let at = line.as_ptr() as usize - base;
        (at, line.strip_suffix(b"\r").unwrap_or(line))
    })
}

/// A cursor over one line's bytes.
struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn new(s: &'a [u8]) -> Self {
        Cursor { s, i: 0 }
    }

    /// The next byte, if any.
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// Skip spaces and tabs; true if at least one was skipped.
    fn skip_blanks(&mut self) -> bool {
        let from = self.i;
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
        self.i > from
    }

    /// A non-negative decimal integer (saturating at u64::MAX), or None if no digit follows.
    fn uint(&mut self) -> Option<u64> {
        let from = self.i;
        let mut x: u64 = 0;
        while let Some(d @ b'0'..=b'9') = self.peek() {
            x = x.saturating_mul(10).saturating_add(u64::from(d - b'0'));
            self.i += 1;
        }
        (self.i > from).then_some(x)
    }

    /// True if only blanks remain, or blanks and then a comment starting with `comment`.
    fn at_end(&mut self, comment: u8) -> bool {
        self.skip_blanks();
        self.peek().is_none_or(|b| b == comment)
    }
}

/// `line` as a quoted, escaped string for an error message, shortened if long.
fn quote(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    if text.chars().count() > QUOTE_CHARS {
        let short: String = text.chars().take(QUOTE_CHARS).collect();
        format!("{short:?}...")
    } else {
        format!("{text:?}")
    }
}

/// Parse whole lines of a plain edge list: `u v` per line (0-based ids below 2^48, and below
/// `vertices` when a header declares it, separated by spaces or tabs, optionally followed by
/// a `#` comment); blank lines and lines starting with `#` are skipped.
fn parse_edge_list(bytes: &[u8], vertices: Option<u64>) -> ParseResult {
    let limit = vertices.unwrap_or(ID_LIMIT);
    let mut edges = Vec::with_capacity(bytes.len() / 8);
    for (at, line) in lines(bytes) {
        let mut c = Cursor::new(line);
        if c.at_end(b'#') {
            continue;
        }
        let pair = edge_pair(&mut c).ok_or_else(|| {
            let msg = "expected 'u v' or 'u v w' (vertex ids and a weight: non-negative integers)";
            (at, format!("{msg}, found {}", quote(line)))
        })?;
        if pair.0 >= limit || pair.1 >= limit {
            let bound = match vertices {
                Some(n) => format!("must be below the header's vertex count {n}"),
                None => "must be < 2^48".into(),
            };
            let msg = format!("vertex id too large ({bound}), found {}", quote(line));
            return Err((at, msg));
        }
        edges.push(pair);
    }
    Ok(edges)
}

/// `u v`, an optional integer weight (read past: the graph is unweighted to its users), then
/// nothing but an optional `#` comment, from a cursor at the first non-blank.
fn edge_pair(c: &mut Cursor) -> Option<Edge> {
    let u = c.uint()?;
    if !c.skip_blanks() {
        return None;
    }
    let v = c.uint()?;
    if c.at_end(b'#') {
        return Some((u, v));
    }
    c.skip_blanks();
    c.uint()?;
    c.at_end(b'#').then_some((u, v))
}

/// Parse whole lines of Matrix Market coordinate entries `i j [value]` (1-based, value
/// ignored, `i` in 1..=rows, `j` in 1..=cols) into edges `(i-1, j-1)`; blank lines and `%`
/// comment lines are skipped.
fn parse_mtx_entries(bytes: &[u8], rows: u64, cols: u64) -> ParseResult {
    let mut edges = Vec::with_capacity(bytes.len() / 8);
    for (at, line) in lines(bytes) {
        let mut c = Cursor::new(line);
        if c.at_end(b'%') {
            continue;
        }
        let (i, j) = mtx_pair(&mut c).ok_or_else(|| {
            let msg = "expected 'i j [value]' (two positive integer indices)";
            (at, format!("{msg}, found {}", quote(line)))
        })?;
        if !(1..=rows).contains(&i) {
            let msg = format!("row index {i} outside 1..={rows}, found {}", quote(line));
            return Err((at, msg));
        }
        if !(1..=cols).contains(&j) {
            let msg = format!("column index {j} outside 1..={cols}, found {}", quote(line));
            return Err((at, msg));
        }
        edges.push((i - 1, j - 1));
    }
    Ok(edges)
}

/// `i j` then either the end of the line or blanks and anything (the ignored value).
fn mtx_pair(c: &mut Cursor) -> Option<(u64, u64)> {
    let i = c.uint()?;
    if !c.skip_blanks() {
        return None;
    }
    let j = c.uint()?;
    (c.peek().is_none() || c.skip_blanks()).then_some((i, j))
}

/// What the Matrix Market header says.
#[derive(Debug, PartialEq)]
struct MtxHeader {
    rows: u64,
    cols: u64,
    nnz: u64,
    /// Byte offset of the first line after the size line.
    data_start: u64,
}

/// Reads the header lines of a Matrix Market file one at a time, tracking where it is.
struct HeaderLines<B> {
    reader: B,
    /// The current line, without its line ending.
    line: Vec<u8>,
    /// Byte offset just after the current line.
    pos: u64,
    /// 1-based number of the current line.
    number: u64,
}

impl<B: BufRead> HeaderLines<B> {
    /// Read the next line; false at the end of the file.
    fn advance(&mut self, name: &str) -> Result<bool> {
        self.line.clear();
        let read = self
            .reader
            .read_until(b'\n', &mut self.line)
            .map_err(|e| input_file(name, format!("cannot read: {e}")))?;
        self.pos += read as u64;
        self.number += 1;
        while matches!(self.line.last(), Some(b'\n' | b'\r')) {
            self.line.pop();
        }
        Ok(read > 0)
    }
}

/// Read the banner, `%` comment lines and the size line `rows cols nnz` from the start of
/// a Matrix Market file.
fn parse_mtx_header<B: BufRead>(reader: B, name: &str) -> Result<MtxHeader> {
    let mut lines = HeaderLines {
        reader,
        line: Vec::new(),
        pos: 0,
        number: 0,
    };
    lines.advance(name)?;
    check_mtx_banner(&lines.line, name)?;
    loop {
        if !lines.advance(name)? {
            let msg = "missing size line 'rows cols nnz' after the header";
            return Err(input_file(name, msg.into()));
        }
        let mut c = Cursor::new(&lines.line);
        if c.at_end(b'%') {
            continue;
        }
        let (rows, cols, nnz) = mtx_size(&mut c).ok_or_else(|| Error::Input {
            file: name.to_string(),
            line: lines.number,
            msg: format!(
                "expected size line 'rows cols nnz' (three non-negative integers), found {}",
                quote(&lines.line)
            ),
        })?;
        if rows.max(cols) > ID_LIMIT {
            let msg = format!("matrix is {rows} x {cols}: more than 2^48 vertices");
            return Err(input_file(name, msg));
        }
        return Ok(MtxHeader {
            rows,
            cols,
            nnz,
            data_start: lines.pos,
        });
    }
}

/// What the `# tessera` header comment of an edge list declares.
#[derive(Debug, Default, PartialEq)]
struct EdgeListHeader {
    vertices: Option<u64>,
    edges: Option<u64>,
}

/// Scan the leading blank and `#` comment lines of an edge list (up to the first edge) for
/// the first comment whose first word is `tessera` and which has a `vertices N` pair, as
/// `writers` writes it: `# tessera edge list: vertices N edges M ...`. `vertices N` declares
/// the vertex count (isolated highest ids included), the optional `edges M` the edge count.
fn parse_edge_list_header<B: BufRead>(reader: B, name: &str) -> Result<EdgeListHeader> {
    let mut lines = HeaderLines {
        reader,
        line: Vec::new(),
        pos: 0,
        number: 0,
    };
    while lines.advance(name)? {
        if !Cursor::new(&lines.line).at_end(b'#') {
            break;
        }
        let words = comment_words(&lines.line);
        if words.first() != Some(&&b"tessera"[..]) || !words.contains(&&b"vertices"[..]) {
            continue;
        }
        return tessera_header(&words).map_err(|msg| Error::Input {
            file: name.to_string(),
            line: lines.number,
            msg: format!("{msg} in the header comment {}", quote(&lines.line)),
        });
    }
    Ok(EdgeListHeader::default())
}

/// The words of a comment line after its leading `#` marks.
fn comment_words(line: &[u8]) -> Vec<&[u8]> {
    let start = line.iter().position(|&b| b == b'#').map_or(0, |i| i + 1);
    let text = &line[start..];
    let start = text.iter().position(|&b| b != b'#').unwrap_or(text.len());
    text[start..]
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .collect()
}

/// The `vertices N` and `edges M` pairs of a `tessera` header comment's words.
fn tessera_header(words: &[&[u8]]) -> std::result::Result<EdgeListHeader, String> {
    let mut header = EdgeListHeader::default();
    for (i, &word) in words.iter().enumerate() {
        let slot = match word {
            b"vertices" => &mut header.vertices,
            b"edges" => &mut header.edges,
            _ => continue,
        };
        let count = words.get(i + 1).and_then(|w| {
            let mut c = Cursor::new(w);
            c.uint().filter(|_| c.peek().is_none())
        });
        let what = String::from_utf8_lossy(word);
        *slot = Some(count.ok_or(format!("expected a count after '{what}'"))?);
    }
    match header.vertices {
        Some(n) if n > ID_LIMIT => Err(format!("{n} vertices: more than 2^48")),
        _ => Ok(header),
    }
}

/// Check the banner line; only coordinate pattern/real/integer general/symmetric is read.
fn check_mtx_banner(line: &[u8], name: &str) -> Result<()> {
    let words: Vec<&[u8]> = line
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    let is = |k: usize, options: &[&str]| {
        words
            .get(k)
            .is_some_and(|w| options.iter().any(|o| w.eq_ignore_ascii_case(o.as_bytes())))
    };
    let ok = words.len() == 5
        && is(0, &["%%MatrixMarket"])
        && is(1, &["matrix"])
        && is(2, &["coordinate"])
        && is(3, &["pattern", "real", "integer"])
        && is(4, &["general", "symmetric"]);
    if ok {
        return Ok(());
    }
    let msg = format!(
        "unsupported Matrix Market header: expected '{MTX_EXPECTED}', found {}",
        quote(line)
    );
    Err(input_file(name, msg))
}

/// `rows cols nnz` and nothing else.
fn mtx_size(c: &mut Cursor) -> Option<(u64, u64, u64)> {
    let rows = c.uint()?;
    if !c.skip_blanks() {
        return None;
    }
    let cols = c.uint()?;
    if !c.skip_blanks() {
        return None;
    }
    let nnz = c.uint()?;
    c.at_end(b'%').then_some((rows, cols, nnz))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parse the edge list `text` through the chunked reader as one rank would.
    fn read_all(text: &[u8], chunk: usize) -> std::result::Result<Vec<Edge>, ReadFail> {
        read_span_edges(text, 0..text.len() as u64, chunk, &|b: &[u8]| {
            parse_edge_list(b, None)
        })
    }

    #[test]
    fn edge_list_basic() {
        let text = b"# header\n0 1\n\n  2\t3  \r\n4 5 # note\n   # indented comment\n6 7#x\n8 9";
        let edges = parse_edge_list(text, None).unwrap();
        assert_eq!(edges, vec![(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)]);
    }

    #[test]
    fn edge_list_rejects_bad_lines() {
        for bad in [
            "3 x", "3", "3 4 5 6", "3 4 x", "-1 2", "3,4", "3 4x", "a b", "34", "1.5 2",
        ] {
            let text = format!("0 1\n{bad}\n2 3\n");
            let (at, msg) = parse_edge_list(text.as_bytes(), None).unwrap_err();
            assert_eq!(at, 4, "{bad}");
            assert!(msg.contains(&format!("{bad:?}")), "{msg}");
            assert!(msg.starts_with("expected 'u v'"), "{msg}");
        }
    }

    #[test]
    fn edge_list_id_limit() {
        let max = format!("0 {}\n", ID_LIMIT - 1);
        assert_eq!(
            parse_edge_list(max.as_bytes(), None).unwrap(),
            vec![(0, ID_LIMIT - 1)]
        );
        for big in [ID_LIMIT.to_string(), "99999999999999999999999".into()] {
            let text = format!("{big} 1\n");
            let (at, msg) = parse_edge_list(text.as_bytes(), None).unwrap_err();
            assert_eq!(at, 0);
            assert!(msg.contains("2^48"), "{msg}");
        }
    }

    #[test]
    fn edge_list_header_declares_counts() {
        let text = b"# made by hand\n\n#tessera edge list: vertices 10 edges 2 undirected\n\
                     # tessera edge list: vertices 11\n0 1\n2 3\n";
        let expected = EdgeListHeader {
            vertices: Some(10),
            edges: Some(2),
        };
        assert_eq!(parse_edge_list_header(&text[..], "f").unwrap(), expected);
        let only_vertices = b"  # tessera vertices 7\n0 1\n";
        let header = parse_edge_list_header(&only_vertices[..], "f").unwrap();
        assert_eq!((header.vertices, header.edges), (Some(7), None));
        // No tessera line with `vertices` before the first edge: nothing declared.
        for text in [
            "0 1\n# tessera edge list: vertices 10\n",
            "# tessera 0.1.0, no counts here\n0 1\n",
            "# vertices 10\n0 1\n",
            "",
        ] {
            let header = parse_edge_list_header(text.as_bytes(), "f").unwrap();
            assert_eq!(header, EdgeListHeader::default(), "{text:?}");
        }
    }

    #[test]
    fn edge_list_header_errors() {
        for (bad, what) in [
            ("# tessera vertices x", "after 'vertices'"),
            ("# tessera vertices 5 edges", "after 'edges'"),
            ("# tessera vertices 5x", "after 'vertices'"),
            ("# tessera vertices 281474976710657", "more than 2^48"),
        ] {
            let text = format!("# c\n{bad}\n0 1\n");
            match parse_edge_list_header(text.as_bytes(), "f") {
                Err(Error::Input { line, msg, .. }) => {
                    assert_eq!(line, 2);
                    assert!(
                        msg.contains(what) && msg.contains(&format!("{bad:?}")),
                        "{msg}"
                    );
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn edge_list_ids_below_declared_vertices() {
        assert_eq!(parse_edge_list(b"0 4\n", Some(5)).unwrap(), vec![(0, 4)]);
        let (at, msg) = parse_edge_list(b"0 1\n5 0\n", Some(5)).unwrap_err();
        assert_eq!(at, 4);
        assert!(
            msg.contains("vertex count 5") && msg.contains("\"5 0\""),
            "{msg}"
        );
    }

    #[test]
    fn reads_back_what_the_writer_writes() {
        use crate::graph::writers::{graph_text, GraphFormat};
        // Vertices 7 and 8 are isolated; a self-loop and a repeated edge are kept.
        let edges = vec![(0, 1), (1, 0), (2, 2), (3, 6), (6, 4), (1, 0)];
        let source = LoadedEdges::new(9, 6, edges.clone());
        let comments = ["tessera generate --seed 1".to_string(), "% # odd".into()];

        let text = graph_text(GraphFormat::EdgeList, &source, &comments);
        let header = parse_edge_list_header(&text[..], "f").unwrap();
        let declared = EdgeListHeader {
            vertices: Some(9),
            edges: Some(6),
        };
        assert_eq!(header, declared);
        let span = 0..text.len() as u64;
        let parse = |b: &[u8]| parse_edge_list(b, header.vertices);
        assert_eq!(read_span_edges(&text[..], span, 7, &parse).unwrap(), edges);

        let text = graph_text(GraphFormat::MatrixMarket, &source, &comments);
        let header = parse_mtx_header(&text[..], "f").unwrap();
        assert_eq!((header.rows, header.cols, header.nnz), (9, 9, 6));
        let data = &text[header.data_start as usize..];
        let read = parse_mtx_entries(data, 9, 9).unwrap();
        let undirected =
            |es: &[Edge]| -> Vec<Edge> { es.iter().map(|&(u, v)| (u.min(v), u.max(v))).collect() };
        assert_eq!(undirected(&read), undirected(&edges));
        assert!(read.iter().all(|&(i, j)| i >= j), "lower triangle");
    }

    #[test]
    fn mtx_entries() {
        let text = b"1 2\n% c\n3 3 1.5e3\n\n2\t1 7\r\n";
        let edges = parse_mtx_entries(text, 3, 3).unwrap();
        assert_eq!(edges, vec![(0, 1), (2, 2), (1, 0)]);
        for (bad, what) in [
            ("0 1", "row index 0"),
            ("4 1", "row index 4"),
            ("1 3", "column index 3"),
            ("1", "expected 'i j"),
            ("1 2x", "expected 'i j"),
        ] {
            let text = format!("1 1\n{bad}\n");
            let (at, msg) = parse_mtx_entries(text.as_bytes(), 3, 2).unwrap_err();
            assert_eq!(at, 4);
            assert!(
                msg.starts_with(what) && msg.contains(&format!("{bad:?}")),
                "{msg}"
            );
        }
    }

    #[test]
    fn mtx_header() {
        let text = b"%%MatrixMarket MATRIX Coordinate pattern symmetric\n% c\n%\n\n 4 5 6 \n1 1\n";
        let header = parse_mtx_header(&text[..], "f").unwrap();
        let data_start = text.len() as u64 - 4;
        let expected = MtxHeader {
            rows: 4,
            cols: 5,
            nnz: 6,
            data_start,
        };
        assert_eq!(header, expected);
    }

    #[test]
    fn mtx_header_errors() {
        let banner = "%%MatrixMarket matrix array real general\n3 3\n";
        match parse_mtx_header(banner.as_bytes(), "f") {
            Err(Error::InputFile { msg, .. }) => {
                assert!(msg.contains(MTX_EXPECTED) && msg.contains("array"), "{msg}")
            }
            other => panic!("{other:?}"),
        }
        let size = "%%MatrixMarket matrix coordinate real general\n%\n3 3\n";
        match parse_mtx_header(size.as_bytes(), "f") {
            Err(Error::Input { line, msg, .. }) => {
                assert_eq!(line, 3);
                assert!(msg.contains("\"3 3\""), "{msg}");
            }
            other => panic!("{other:?}"),
        }
        let missing = "%%MatrixMarket matrix coordinate real general\n% only\n";
        assert!(matches!(
            parse_mtx_header(missing.as_bytes(), "f"),
            Err(Error::InputFile { .. })
        ));
        assert!(matches!(
            parse_mtx_header(&b""[..], "f"),
            Err(Error::InputFile { .. })
        ));
    }

    #[test]
    fn line_numbers() {
        let text = b"a\nb\n\nc\n";
        assert_eq!(line_number(&text[..], 0).unwrap(), 1);
        assert_eq!(line_number(&text[..], 2).unwrap(), 2);
        assert_eq!(line_number(&text[..], 5).unwrap(), 4);
    }

    /// The lines of `text[data]` as (start, end) byte positions, '\n' included.
    fn line_spans(text: &[u8], data: &Range<u64>) -> Vec<(u64, u64)> {
        let mut spans = Vec::new();
        let mut start = data.start;
        for i in data.start..data.end {
            if text[i as usize] == b'\n' {
                spans.push((start, i + 1));
                start = i + 1;
            }
        }
        if start < data.end {
            spans.push((start, data.end));
        }
        spans
    }

    #[test]
    fn ownership_covers_each_line_once() {
        let long = "9".repeat(40);
        let texts = [
            String::new(),
            "\n".into(),
            "1 2".into(),
            "1 2\n".into(),
            "1 2\n3 4\n\n5 6".into(),
            format!("1 2\n{long} 1\n3 4\n{long} {long}\n5 6\n"),
            format!("{long} 1\n\n\n2 3"),
            "\n\n\n\n\n\n\n".into(),
        ];
        for text in &texts {
            let text = text.as_bytes();
            for data_start in [0, text.len().min(4) as u64] {
                let data = data_start..text.len() as u64;
                let lines = line_spans(text, &data);
                for parts in 1..=5 {
                    let mut owned = Vec::new();
                    for rank in 0..parts {
                        let part = block_range(data.end - data.start, parts, rank);
                        let part = data.start + part.start..data.start + part.end;
                        let span = owned_span(text, &data, part.clone()).unwrap();
                        owned.extend(line_spans(text, &span));
                        // Every owned line starts inside this rank's part.
                        assert!(line_spans(text, &span).iter().all(|l| part.contains(&l.0)));
                    }
                    assert_eq!(
                        owned,
                        lines,
                        "{:?} parts {parts}",
                        String::from_utf8_lossy(text)
                    );
                }
            }
        }
    }

    #[test]
    fn split_lines_covers_bytes() {
        let text = b"0 1\n22 33\n4 5\n666666 7\n8 9";
        for pieces in 1..=40 {
            let ranges = split_lines(text, pieces);
            assert!(ranges.len() <= pieces);
            let mut at = 0;
            for r in &ranges {
                assert_eq!(r.start, at);
                assert!(r.end > r.start);
                assert!(r.end == text.len() || text[r.end - 1] == b'\n');
                at = r.end;
            }
            assert_eq!(at, text.len());
        }
        assert!(split_lines(b"", 4).is_empty());
    }

    #[test]
    fn chunked_reading_matches_whole_parse() {
        let mut text = String::new();
        for i in 0..500u64 {
            text.push_str(&format!("{i} {}\n", i * 7919 % 1000));
            if i % 37 == 0 {
                text.push_str(&format!("# {}\n", "c".repeat(i as usize)));
            }
        }
        let whole = parse_edge_list(text.as_bytes(), None).unwrap();
        assert_eq!(whole.len(), 500);
        for chunk in [1, 3, 16, 100, 1 << 20] {
            assert_eq!(read_all(text.as_bytes(), chunk).unwrap(), whole);
        }
    }

    #[test]
    fn chunked_reading_reports_file_offset() {
        let mut text = String::new();
        for i in 0..300 {
            text.push_str(&format!("{i} {i}\n"));
        }
        let bad_at = text.len() as u64;
        text.push_str("1 2 3 4\n4 5\nx\n");
        for chunk in [2, 50, 1 << 20] {
            match read_all(text.as_bytes(), chunk) {
                Err(ReadFail::Line { offset, msg }) => {
                    assert_eq!(offset, bad_at);
                    assert!(msg.contains("\"1 2 3 4\""), "{msg}");
                    assert_eq!(line_number(text.as_bytes(), offset).unwrap(), 301);
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn quote_shortens_long_lines() {
        let q = quote("x".repeat(500).as_bytes());
        assert!(q.len() < 100 && q.ends_with("..."));
        assert_eq!(quote(b"a\tb"), "\"a\\tb\"");
    }
}
