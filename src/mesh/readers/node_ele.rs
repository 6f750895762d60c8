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
use super::{input_error, parse_word, unreadable, Raw};
use crate::comm::file_parts::owned_span;
use crate::error::{Error, Result};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

pub fn read(path: &Path, ranks: &dyn Ranks) -> Result<Raw> {
    let nodes = read_nodes(&Part::read(&path.with_extension("node"), ranks)?, ranks)?;
    let ele = Part::read(&path.with_extension("ele"), ranks)?;
    let (cells, lines) = read_elements(&ele, &nodes, ranks)?;
    Ok(Raw {
        dim: nodes.dim,
        points: nodes.points,
        cells,
        lines,
        tagged: nodes.tagged,
        fixed: None,
    })
}

/// A rank's part of a file: the header (its first data line) and the data lines this rank
/// owns, with their line numbers in the file.
struct Part {
    file: String,
    header: Option<(u64, Vec<String>)>,
    /// The owned lines, the first of them line `first + 1` of the file.
    text: String,
    first: u64,
    /// Rows on the ranks before this one.
    rows_before: usize,
    /// Rows on all ranks.
    rows_total: usize,
}

impl Part {
    /// Read this rank's part of the file (collective).
    fn read(path: &Path, ranks: &dyn Ranks) -> Result<Part> {
        let file = path.display().to_string();
        // Reading is local; a rank that cannot read says so to all before the collectives.
        let read = read_span(path, ranks).map_err(|e| unreadable(&file, e));
        ranks.agree(match &read {
            Ok(_) => Ok(()),
            Err(e) => Err(Error::Agreed(e.to_string())),
        })?;
        let (header, header_lines, bytes) = read?;
        let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
        let mut part = Part {
            file,
            header,
            text: String::from_utf8_lossy(&bytes).into_owned(),
            // The lines of the header and of the ranks before.
            first: header_lines + ranks.before(&[newlines as i64])[0] as u64,
            rows_before: 0,
            rows_total: 0,
        };
        let mut counts = [part.rows().count() as i64];
        part.rows_before = ranks.before(&counts)[0] as usize;
        ranks.sum(&mut counts);
        part.rows_total = counts[0] as usize;
        Ok(part)
    }

    /// The owned data lines: their line numbers in the file and their words.
    fn rows(&self) -> impl Iterator<Item = (u64, Vec<&str>)> {
        super::data_lines(&self.text).map(|(l, words)| (self.first + l, words))
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

type Span = (Option<(u64, Vec<String>)>, u64, Vec<u8>);

/// The header (the first data line: its number and words), the lines up to and including
/// it, and the bytes of the lines after it that this rank owns.
fn read_span(path: &Path, ranks: &dyn Ranks) -> std::io::Result<Span> {
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
        .rows()
        .next()
        .and_then(|(_, w)| w[0].parse::<u32>().ok());
    let base = ranks
        .gather(&[first_id.map_or(u32::MAX, |id| id.min(u32::MAX - 1))])
        .into_iter()
        .find(|&id| id != u32::MAX)
        .unwrap_or(0) as u64;
    let mut coords = Vec::new();
    let mut tagged = Vec::new();
    let parsed = (|| {
        for (k, (l, words)) in part.rows().enumerate() {
            let row = part.rows_before + k;
            let p = node_row(
                &part.file,
                (l, &words),
                row,
                base,
                [count, dim, attrs, markers],
            )?;
            coords.extend_from_slice(&p.0);
            if let Some(m) = p.1 {
                tagged.extend_from_slice(&[row as u32, m as u32, (m >> 32) as u32]);
            }
        }
        Ok(())
    })();
    ranks.agree(parsed)?;
    if part.rows_total < count {
        return Err(Error::InputFile {
            file: part.file.clone(),
            msg: format!("{} nodes: the header promises {count}", part.rows_total),
        });
    }
    let coords = ranks.gather_f64(&coords);
    let tagged = ranks.gather(&tagged);
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
        p[d] = parse_word(file, l, words[1 + d], "a coordinate")?;
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
    let mut cells = Vec::new();
    let mut lines = Vec::new();
    let parsed = (|| {
        for (k, (l, words)) in part.rows().enumerate() {
            if part.rows_before + k >= count {
                let msg = format!("more lines than the {count} elements the header promises");
                return Err(input_error(file, l, msg));
            }
            element_row(file, (l, &words), (corners, attrs), nodes, &mut cells)?;
            lines.extend_from_slice(&[l as u32, (l >> 32) as u32]);
        }
        Ok(())
    })();
    ranks.agree(parsed)?;
    if part.rows_total < count {
        return Err(Error::InputFile {
            file: file.clone(),
            msg: format!("{} elements: the header promises {count}", part.rows_total),
        });
    }
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
