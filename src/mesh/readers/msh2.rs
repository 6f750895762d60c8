//! Gmsh MSH 2.2 ASCII: `$MeshFormat` (2.2 0 8), `$Nodes` (count, then `id x y z`, ids any
//! distinct positive integers), `$Elements` (count, then `id type ntags tags.. nodes..`, the
//! first tag the physical group). Tetrahedra (type 4) make a 3D mesh; without them,
//! triangles (2) make a 2D one. Lower-dimension elements (points 15, lines 1, triangles of a
//! 3D mesh) with a physical tag mark boundary patches. Other types are refused.

use super::{input_error, parse_coordinate, parse_word, Origins, Raw};
use crate::error::{Error, Result};
use std::collections::HashMap;

pub fn is_version_2(bytes: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(64)]);
    head.lines()
        .nth(1)
        .is_some_and(|l| l.trim_start().starts_with('2'))
}

/// An element as read: its line, type, physical tag and node ids.
struct Element {
    line: u64,
    kind: u32,
    physical: i64,
    nodes: Vec<u64>,
}

fn corners_of(kind: u32) -> Option<usize> {
    match kind {
        15 => Some(1),
        1 => Some(2),
        2 => Some(3),
        4 => Some(4),
        _ => None,
    }
}

pub fn parse(file: &str, text: &str) -> Result<Raw> {
    let lines: Vec<(u64, Vec<&str>)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i as u64 + 1, l.split_whitespace().collect::<Vec<_>>()))
        .filter(|(_, w)| !w.is_empty())
        .collect();
    let section = |name: &str| lines.iter().position(|(_, w)| w[0] == name);
    let (Some(nodes_at), Some(elements_at)) = (section("$Nodes"), section("$Elements")) else {
        return Err(Error::InputFile {
            file: file.into(),
            msg: "expected $Nodes and $Elements sections".into(),
        });
    };
    let (points, index) = parse_nodes(file, &lines[nodes_at + 1..])?;
    let elements = parse_elements(file, &lines[elements_at + 1..])?;
    assemble(file, points, &index, elements)
}

fn count_line(file: &str, rest: &[(u64, Vec<&str>)], what: &str) -> Result<(u64, usize)> {
    let (l, w) = rest.first().ok_or_else(|| Error::InputFile {
        file: file.into(),
        msg: format!("truncated: expected the {what} count"),
    })?;
    Ok((*l, parse_word(file, *l, w[0], &format!("a {what} count"))?))
}

/// The nodes in file order and each node id's index.
type Nodes = (Vec<[f64; 3]>, HashMap<u64, u32>);

fn parse_nodes(file: &str, rest: &[(u64, Vec<&str>)]) -> Result<Nodes> {
    let (cl, count) = count_line(file, rest, "node")?;
    // A node a line: the lines left bound what to reserve, whatever the count says.
    let mut points = Vec::with_capacity(count.min(rest.len()));
    let mut index = HashMap::with_capacity(count.min(rest.len()));
    for (l, w) in rest[1..].iter().take(count) {
        if w[0].starts_with('$') {
            return Err(input_error(
                file,
                *l,
                format!(
                    "{} found after {} nodes: the count on line {cl} promises {count}",
                    w[0],
                    points.len()
                ),
            ));
        }
        if w.len() != 4 {
            return Err(input_error(
                file,
                *l,
                format!("{} values: expected 'id x y z'", w.len()),
            ));
        }
        let id: u64 = parse_word(file, *l, w[0], "a node id")?;
        let p: [f64; 3] = [
            parse_coordinate(file, *l, w[1], id)?,
            parse_coordinate(file, *l, w[2], id)?,
            parse_coordinate(file, *l, w[3], id)?,
        ];
        if index.insert(id, points.len() as u32).is_some() {
            return Err(input_error(
                file,
                *l,
                format!("node id {id} repeated: expected distinct ids"),
            ));
        }
        points.push(p);
    }
    end_of(file, rest, count, "$EndNodes", cl)?;
    Ok((points, index))
}

/// The section must end right after `count` items.
fn end_of(file: &str, rest: &[(u64, Vec<&str>)], count: usize, end: &str, cl: u64) -> Result<()> {
    // rest[0] is the count line (`count` may be as large as usize::MAX).
    match rest[1..].get(count) {
        Some((_, w)) if w[0] == end => Ok(()),
        Some((l, _)) => Err(input_error(
            file,
            *l,
            format!("expected {end} after the {count} items the count on line {cl} promises"),
        )),
        None => Err(Error::InputFile {
            file: file.into(),
            msg: format!("truncated: expected {count} items and {end} after line {cl}"),
        }),
    }
}

fn parse_elements(file: &str, rest: &[(u64, Vec<&str>)]) -> Result<Vec<Element>> {
    let (cl, count) = count_line(file, rest, "element")?;
    let mut out = Vec::with_capacity(count.min(rest.len()));
    for (l, w) in rest[1..].iter().take(count) {
        if w[0].starts_with('$') {
            return Err(input_error(
                file,
                *l,
                format!(
                    "{} found after {} elements: the count on line {cl} promises {count}",
                    w[0],
                    out.len()
                ),
            ));
        }
        if w.len() < 3 {
            return Err(input_error(
                file,
                *l,
                "expected 'id type ntags tags.. nodes..'",
            ));
        }
        let kind: u32 = parse_word(file, *l, w[1], "an element type")?;
        let corners = corners_of(kind).ok_or_else(|| input_error(file, *l, format!("unsupported element type {kind}: expected 4 (tetrahedron), 2 (triangle), 1 (line) or 15 (point)")))?;
        let ntags: usize = parse_word(file, *l, w[2], "a tag count")?;
        // Saturating: a tag count near usize::MAX still compares as more than the line holds.
        let width = ntags.saturating_add(3 + corners);
        if w.len() != width {
            return Err(input_error(
                file,
                *l,
                format!(
                    "{} values: expected {width} for type {kind} with {ntags} tags",
                    w.len()
                ),
            ));
        }
        let physical = if ntags > 0 {
            parse_word(file, *l, w[3], "a physical tag")?
        } else {
            0
        };
        let nodes = w[3 + ntags..]
            .iter()
            .map(|s| parse_word(file, *l, s, "a node id"))
            .collect::<Result<_>>()?;
        out.push(Element {
            line: *l,
            kind,
            physical,
            nodes,
        });
    }
    end_of(file, rest, count, "$EndElements", cl)?;
    Ok(out)
}

fn assemble(
    file: &str,
    points: Vec<[f64; 3]>,
    index: &HashMap<u64, u32>,
    elements: Vec<Element>,
) -> Result<Raw> {
    let dim = if elements.iter().any(|e| e.kind == 4) {
        3
    } else {
        2
    };
    let cell_kind = if dim == 3 { 4 } else { 2 };
    let (mut cells, mut lines, mut tagged) = (Vec::new(), Vec::new(), Vec::new());
    for e in &elements {
        let local = e.nodes.iter().map(|n| {
            index.get(n).copied().ok_or_else(|| {
                input_error(
                    file,
                    e.line,
                    format!("node {n} out of range: not in $Nodes"),
                )
            })
        });
        let local: Vec<u32> = local.collect::<Result<_>>()?;
        if e.kind == cell_kind {
            cells.extend(local);
            lines.push(e.line);
        } else if e.physical != 0 && corners_of(e.kind).unwrap() <= dim {
            tagged.extend(local.into_iter().map(|n| (n, e.physical)));
        }
    }
    Ok(Raw {
        dim,
        points,
        cells,
        origins: Origins::Lines(lines),
        tagged: Some(tagged),
        fixed: None,
    })
}
