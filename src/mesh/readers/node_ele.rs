//! TetGen / Triangle `.node` + `.ele`. `.node`: a header `count dim attributes markers`, then
//! `id x y [z] [attributes] [marker]`; `.ele`: a header `count corners attributes`, then
//! `id n1 .. nk [attributes]`. Numbering is 0- or 1-based, as the first node's id says; a
//! node marker other than 0 marks a boundary node (its patch is the marker).
//!
//! Read in parts (spec: "read in parallel by byte ranges like edge lists"): every rank reads
//! the header, then parses only the lines whose first byte lies in its block of the bytes
//! after it (`comm::file_parts`), checking each row against the header and its position in
//! the file (the rows before it: a prefix sum of the ranks' row counts); the rows are then
//! gathered in rank order. Every rank ends with what one rank reading the whole file gets,
//! and a malformed file gives every rank the error of its first bad line.

use super::super::ranks::Ranks;
use super::{input_error, parse_coordinate, parse_word, unreadable, Origins, Raw};
use crate::comm::file_parts::owned_span;
use crate::error::{Error, Result};
use rayon::prelude::*;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::ops::Range;
use std::path::Path;

pub fn read(path: &Path, ranks: &dyn Ranks) -> Result<Raw> {
    let nodes = read_nodes(&Part::read(&path.with_extension("node"), ranks)?, ranks)?;
    let ele = Part::read(&path.with_extension("ele"), ranks)?;
    let (cells, lines) = read_elements(&ele, &nodes, ranks)?;
    Ok(Raw {
        dim: nodes.dim,
        points: nodes.points,
        cells,
        origins: Origins::Lines(lines),
        tagged: nodes.tagged,
        fixed: None,
    })
}

/// A rank's part of a file: the header (its first data line) and the lines this rank owns,
/// cut into pieces that are parsed in parallel.
struct Part {
    file: String,
    header: Option<(u64, Vec<String>)>,
    text: String,
    pieces: Vec<Piece>,
    /// Rows (data lines) on all ranks.
    rows_total: usize,
}

/// Whole lines of a part's text: `text[bytes]`, the first of them line `first_line + 1` of
/// the file, their first data line row `first_row` of the file.
struct Piece {
    bytes: Range<usize>,
    first_line: u64,
    first_row: usize,
}

impl Part {
    /// Read this rank's part of the file (collective).
    fn read(path: &Path, ranks: &dyn Ranks) -> Result<Part> {
        let file = path.display().to_string();
        // Reading is local; a rank that cannot read says so to all before the collectives.
        let read = read_span(path, ranks).map_err(|e| unreadable(&file, e));
        ranks.agree(agreed(&read))?;
        let (header, header_lines, bytes) = read?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let ranges = split_lines(text.as_bytes(), rayon::current_num_threads() * 4);
        // Lines and data lines per piece, then the places of the pieces' first ones.
        let counts: Vec<[usize; 2]> = ranges
            .par_iter()
            .map(|r| {
                let t = &text[r.clone()];
                let data = t.lines().filter(|l| is_data(l)).count();
                [t.bytes().filter(|&b| b == b'\n').count(), data]
            })
            .collect();
        let mine = counts
            .iter()
            .fold([0i64; 2], |a, c| [a[0] + c[0] as i64, a[1] + c[1] as i64]);
        let before = ranks.before(&mine);
        let mut total = [mine[1]];
        ranks.sum(&mut total);
        // The lines of the header and of the ranks before.
        let (mut line, mut row) = (header_lines + before[0] as u64, before[1] as usize);
        let mut pieces = Vec::with_capacity(ranges.len());
        for (bytes, [lines, rows]) in ranges.into_iter().zip(counts) {
            pieces.push(Piece {
                bytes,
                first_line: line,
                first_row: row,
            });
            line += lines as u64;
            row += rows;
        }
        Ok(Part {
            file,
            header,
            text,
            pieces,
            rows_total: total[0] as usize,
        })
    }

    /// `parse` on every piece's data lines (each with its line number and row in the file,
    /// in parallel); the outputs in file order, or the first bad line's error.
    fn parse<T: Send>(
        &self,
        parse: impl Fn(u64, usize, &[&str], &mut T) -> Result<()> + Sync,
        empty: impl Fn() -> T + Sync,
    ) -> Result<Vec<T>> {
        self.pieces
            .par_iter()
            .map(|p| {
                let mut out = empty();
                let lines = super::data_lines(&self.text[p.bytes.clone()]);
                for (k, (l, words)) in lines.enumerate() {
                    parse(p.first_line + l, p.first_row + k, &words, &mut out)?;
                }
                Ok(out)
            })
            .collect()
    }

    /// The header's words, or the error of an empty file.
    fn header(&self, expected: &str) -> Result<(u64, &[String])> {
        match &self.header {
            Some((l, words)) if words.len() >= 2 => Ok((*l, words)),
            Some((l, _)) => Err(input_error(
                &self.file,
                *l,
                format!("expected a header {expected}"),
            )),
            None => Err(Error::InputFile {
                file: self.file.clone(),
                msg: format!("empty: expected a header {expected}"),
            }),
        }
    }
}

/// Whether a line holds data (words before any `#`), as `super::data_lines` keeps it.
fn is_data(line: &str) -> bool {
    line.split('#').next().is_some_and(|l| !l.trim().is_empty())
}

/// `bytes` cut into at most `pieces` non-empty consecutive ranges covering it, each ending
/// just after a '\n' or at the end.
fn split_lines(bytes: &[u8], pieces: usize) -> Vec<Range<usize>> {
    let mut out = Vec::with_capacity(pieces);
    let mut start = 0;
    for k in 1..=pieces {
        let target = (bytes.len() * k / pieces).max(start);
        let end = match bytes[target..].iter().position(|&b| b == b'\n') {
            Some(i) if k < pieces => target + i + 1,
            _ => bytes.len(),
        };
        if end > start {
            out.push(start..end);
            start = end;
        }
    }
    out
}

type Span = (Option<(u64, Vec<String>)>, u64, Vec<u8>);

/// The header (the first data line: its number and words), the lines up to and including
/// it, and the bytes of the lines after it that this rank owns.
fn read_span(path: &Path, ranks: &dyn Ranks) -> std::io::Result<Span> {
    crate::files::must_be_regular(path)?;
    let f = File::open(path)?;
    let len = f.metadata()?.len();
    let (header, data_start, header_lines) = read_header(&f)?;
    let r = ranks.range(usize::try_from(len - data_start).unwrap_or(usize::MAX));
    let part = data_start + r.start as u64..data_start + r.end as u64;
    let span = owned_span(&f, &(data_start..len), part)?;
    let mut bytes = vec![0u8; (span.end - span.start) as usize];
    std::os::unix::fs::FileExt::read_exact_at(&f, &mut bytes, span.start)?;
    Ok((header, header_lines, bytes))
}

type Header = (Option<(u64, Vec<String>)>, u64, u64);

/// The first data line (its number and words), the byte just after it, and the lines up to
/// and including it.
/// A local outcome for `Ranks::agree` (which takes the error; the outcome keeps its value).
fn agreed<T>(outcome: &Result<T>) -> Result<()> {
    match outcome {
        Ok(_) => Ok(()),
        Err(e) => Err(Error::Agreed(e.to_string())),
    }
}

fn read_header(f: &File) -> std::io::Result<Header> {
    let mut reader = BufReader::new(f);
    let (mut line, mut at, mut number) = (Vec::new(), 0u64, 0u64);
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok((None, at, number));
        }
        at += n as u64;
        number += 1;
        let text = String::from_utf8_lossy(&line);
        let words: Option<Vec<String>> = super::data_lines(&text)
            .next()
            .map(|(_, words)| words.into_iter().map(String::from).collect());
        if let Some(words) = words {
            return Ok((Some((number, words)), at, number));
        }
    }
}

/// What the `.node` file gives.
struct Nodes {
    dim: usize,
    base: u64,
    points: Vec<[f64; 3]>,
    tagged: Option<Vec<(u32, i64)>>,
}

/// The `.node` header: count, dim, attributes, markers.
fn node_header(part: &Part) -> Result<[usize; 4]> {
    let file = &part.file;
    let (l, head) = part.header("'count dim attributes markers'")?;
    let count: usize = parse_word(file, l, &head[0], "a node count")?;
    if count == 0 {
        return Err(input_error(
            file,
            l,
            "node count 0: expected at least one node",
        ));
    }
    let dim: usize = parse_word(file, l, &head[1], "a dimension (2 or 3)")?;
    if dim != 2 && dim != 3 {
        return Err(input_error(
            file,
            l,
            format!("dimension {dim}: expected 2 or 3"),
        ));
    }
    let attrs: usize = head
        .get(2)
        .map_or(Ok(0), |w| parse_word(file, l, w, "an attribute count"))?;
    let markers: usize = head
        .get(3)
        .map_or(Ok(0), |w| parse_word(file, l, w, "a marker count (0 or 1)"))?;
    Ok([count, dim, attrs, markers])
}

fn read_nodes(part: &Part, ranks: &dyn Ranks) -> Result<Nodes> {
    let [count, dim, attrs, markers] = node_header(part)?;
    // The numbering's base: the first row's id (whoever holds it); its own rank checks it.
    let first_id = part
        .pieces
        .first()
        .and_then(|p| super::data_lines(&part.text[p.bytes.clone()]).next())
        .and_then(|(_, w)| w[0].parse::<u32>().ok());
    let base = ranks
        .gather(&[first_id.map_or(u32::MAX, |id| id.min(u32::MAX - 1))])
        .into_iter()
        .find(|&id| id != u32::MAX)
        .unwrap_or(0) as u64;
    let header = [count, dim, attrs, markers];
    let parsed = part.parse(
        |l, row, words, (coords, tagged): &mut (Vec<f64>, Vec<u32>)| {
            let (p, marker) = node_row(&part.file, (l, words), row, base, header)?;
            coords.extend_from_slice(&p);
            if let Some(m) = marker {
                tagged.extend_from_slice(&[row as u32, m as u32, (m >> 32) as u32]);
            }
            Ok(())
        },
        || (Vec::new(), Vec::new()),
    );
    ranks.agree(agreed(&parsed))?;
    if part.rows_total < count {
        return Err(Error::InputFile {
            file: part.file.clone(),
            msg: format!("{} nodes: the header promises {count}", part.rows_total),
        });
    }
    let (coords, tagged): (Vec<Vec<f64>>, Vec<Vec<u32>>) = parsed?.into_iter().unzip();
    let coords = ranks.gather_f64(&coords.concat());
    let tagged = ranks.gather(&tagged.concat());
    Ok(Nodes {
        dim,
        base,
        points: coords.chunks(3).map(|c| [c[0], c[1], c[2]]).collect(),
        tagged: (markers == 1).then(|| {
            tagged
                .chunks(3)
                .map(|t| (t[0], (u64::from(t[1]) | u64::from(t[2]) << 32) as i64))
                .collect()
        }),
    })
}

/// One `.node` row (`row`: its place among the rows): its point and, with markers, its
/// non-zero marker.
fn node_row(
    file: &str,
    (l, words): (u64, &[&str]),
    row: usize,
    base: u64,
    [count, dim, attrs, markers]: [usize; 4],
) -> Result<([f64; 3], Option<i64>)> {
    if row >= count {
        let msg = format!("more lines than the {count} nodes the header promises");
        return Err(input_error(file, l, msg));
    }
    let width = 1 + dim + attrs + markers;
    if words.len() != width {
        return Err(input_error(file, l, format!("{} values: expected {width} (id, {dim} coordinates, {attrs} attributes, {markers} markers)", words.len())));
    }
    let id: u64 = parse_word(file, l, words[0], "a node id")?;
    if row == 0 && id > 1 {
        return Err(input_error(
            file,
            l,
            format!("first node id {id}: expected 0 or 1"),
        ));
    } else if row > 0 && id != base + row as u64 {
        return Err(input_error(
            file,
            l,
            format!("node id {id}: expected {}", base + row as u64),
        ));
    }
    let mut p = [0.0; 3];
    for d in 0..dim {
        p[d] = parse_coordinate(file, l, words[1 + d], id)?;
    }
    let marker = if markers == 1 {
        let m: i64 = parse_word(file, l, words[width - 1], "a boundary marker")?;
        (m != 0).then_some(m)
    } else {
        None
    };
    Ok((p, marker))
}

/// The `.ele` rows: every cell's corners (0-based) and the line it was read from.
fn read_elements(part: &Part, nodes: &Nodes, ranks: &dyn Ranks) -> Result<(Vec<u32>, Vec<u64>)> {
    let file = &part.file;
    let (l, head) = part.header("'count corners attributes'")?;
    let count: usize = parse_word(file, l, &head[0], "an element count")?;
    let corners: usize = parse_word(file, l, &head[1], "a corner count")?;
    let dim = nodes.dim;
    if corners != dim + 1 {
        let shape = if dim == 3 { "tetrahedra" } else { "triangles" };
        let msg = format!(
            "{corners} corners per element: expected {} (linear {shape} in {dim}D)",
            dim + 1
        );
        return Err(input_error(file, l, msg));
    }
    let attrs: usize = head
        .get(2)
        .map_or(Ok(0), |w| parse_word(file, l, w, "an attribute count"))?;
    let parsed = part.parse(
        |l, row, words, (cells, lines): &mut (Vec<u32>, Vec<u32>)| {
            if row >= count {
                let msg = format!("more lines than the {count} elements the header promises");
                return Err(input_error(file, l, msg));
            }
            element_row(file, (l, words), (corners, attrs), nodes, cells)?;
            lines.extend_from_slice(&[l as u32, (l >> 32) as u32]);
            Ok(())
        },
        || (Vec::new(), Vec::new()),
    );
    ranks.agree(agreed(&parsed))?;
    if part.rows_total < count {
        return Err(Error::InputFile {
            file: file.clone(),
            msg: format!("{} elements: the header promises {count}", part.rows_total),
        });
    }
    let (cells, lines): (Vec<Vec<u32>>, Vec<Vec<u32>>) = parsed?.into_iter().unzip();
    let (cells, lines) = (cells.concat(), lines.concat());
    let lines = ranks.gather(&lines);
    let lines = lines
        .chunks(2)
        .map(|w| u64::from(w[0]) | u64::from(w[1]) << 32)
        .collect();
    Ok((ranks.gather(&cells), lines))
}

/// One `.ele` row's corners, 0-based, onto `cells`.
fn element_row(
    file: &str,
    (l, words): (u64, &[&str]),
    (corners, attrs): (usize, usize),
    nodes: &Nodes,
    cells: &mut Vec<u32>,
) -> Result<()> {
    let width = 1 + corners + attrs;
    if words.len() != width {
        let msg = format!(
            "{} values: expected {width} (id, {corners} nodes, {attrs} attributes)",
            words.len()
        );
        return Err(input_error(file, l, msg));
    }
    let (base, count) = (nodes.base, nodes.points.len() as u64);
    for w in &words[1..=corners] {
        let n: u64 = parse_word(file, l, w, "a node id")?;
        if n < base || n - base >= count {
            let msg = format!(
                "node {n} out of range: expected {base}..{}",
                base + count - 1
            );
            return Err(input_error(file, l, msg));
        }
        cells.push((n - base) as u32);
    }
    Ok(())
}
