//! TetGen / Triangle `.node` + `.ele`. `.node`: a header `count dim attributes markers`, then
//! `id x y [z] [attributes] [marker]`; `.ele`: a header `count corners attributes`, then
//! `id n1 .. nk [attributes]`. Numbering is 0- or 1-based, as the first node's id says; a
//! node marker other than 0 marks a boundary node (its patch is the marker).

use super::{input_error, parse_word, unreadable, Raw};
use crate::error::{Error, Result};
use std::path::Path;

pub fn read(path: &Path) -> Result<Raw> {
    let node_path = path.with_extension("node");
    let ele_path = path.with_extension("ele");
    let text =
        |p: &Path| std::fs::read_to_string(p).map_err(|e| unreadable(&p.display().to_string(), e));
    let (nodes, base, dim, tagged) =
        parse_nodes(&node_path.display().to_string(), &text(&node_path)?)?;
    let (cells, lines) = parse_elements(
        &ele_path.display().to_string(),
        &text(&ele_path)?,
        dim,
        base,
        nodes.len(),
    )?;
    Ok(Raw {
        dim,
        points: nodes,
        cells,
        lines,
        tagged,
        fixed: None,
    })
}

type Nodes = (Vec<[f64; 3]>, u64, usize, Option<Vec<(u32, i64)>>);

fn parse_nodes(file: &str, text: &str) -> Result<Nodes> {
    let mut lines = super::data_lines(text);
    let Some((l, head)) = lines.next() else {
        return Err(Error::InputFile {
            file: file.into(),
            msg: "empty: expected a header 'count dim attributes markers'".into(),
        });
    };
    if head.len() < 2 {
        return Err(input_error(
            file,
            l,
            "expected a header 'count dim attributes markers'",
        ));
    }
    let count: usize = parse_word(file, l, head[0], "a node count")?;
    let dim: usize = parse_word(file, l, head[1], "a dimension (2 or 3)")?;
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
    let width = 1 + dim + attrs + markers;
    let mut points = Vec::with_capacity(count);
    let mut tagged = Vec::new();
    let mut base = 0;
    for (row, (l, words)) in lines.by_ref().take(count).enumerate() {
        if words.len() != width {
            return Err(input_error(file, l, format!("{} values: expected {width} (id, {dim} coordinates, {attrs} attributes, {markers} markers)", words.len())));
        }
        let id: u64 = parse_word(file, l, words[0], "a node id")?;
        if row == 0 {
            if id > 1 {
                return Err(input_error(
                    file,
                    l,
                    format!("first node id {id}: expected 0 or 1"),
                ));
            }
            base = id;
        } else if id != base + row as u64 {
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
        points.push(p);
        if markers == 1 {
            let m: i64 = parse_word(file, l, words[width - 1], "a boundary marker")?;
            if m != 0 {
                tagged.push((row as u32, m));
            }
        }
    }
    if points.len() != count {
        return Err(Error::InputFile {
            file: file.into(),
            msg: format!("{} nodes: the header promises {count}", points.len()),
        });
    }
    if let Some((l, _)) = lines.next() {
        return Err(input_error(
            file,
            l,
            format!("more lines than the {count} nodes the header promises"),
        ));
    }
    Ok((points, base, dim, (markers == 1).then_some(tagged)))
}

fn parse_elements(
    file: &str,
    text: &str,
    dim: usize,
    base: u64,
    nodes: usize,
) -> Result<(Vec<u32>, Vec<u64>)> {
    let mut lines = super::data_lines(text);
    let Some((l, head)) = lines.next() else {
        return Err(Error::InputFile {
            file: file.into(),
            msg: "empty: expected a header 'count corners attributes'".into(),
        });
    };
    if head.len() < 2 {
        return Err(input_error(
            file,
            l,
            "expected a header 'count corners attributes'",
        ));
    }
    let count: usize = parse_word(file, l, head[0], "an element count")?;
    let corners: usize = parse_word(file, l, head[1], "a corner count")?;
    if corners != dim + 1 {
        return Err(input_error(
            file,
            l,
            format!(
                "{corners} corners per element: expected {} (linear {} in {dim}D)",
                dim + 1,
                if dim == 3 { "tetrahedra" } else { "triangles" }
            ),
        ));
    }
    let attrs: usize = head
        .get(2)
        .map_or(Ok(0), |w| parse_word(file, l, w, "an attribute count"))?;
    let width = 1 + corners + attrs;
    let mut cells = Vec::with_capacity(count * corners);
    let mut where_read = Vec::with_capacity(count);
    for (l, words) in lines.by_ref().take(count) {
        if words.len() != width {
            return Err(input_error(
                file,
                l,
                format!(
                    "{} values: expected {width} (id, {corners} nodes, {attrs} attributes)",
                    words.len()
                ),
            ));
        }
        for w in &words[1..=corners] {
            let n: u64 = parse_word(file, l, w, "a node id")?;
            if n < base || n - base >= nodes as u64 {
                return Err(input_error(
                    file,
                    l,
                    format!(
                        "node {n} out of range: expected {base}..{}",
                        base + nodes as u64 - 1
                    ),
                ));
            }
            cells.push((n - base) as u32);
        }
        where_read.push(l);
    }
    if where_read.len() != count {
        return Err(Error::InputFile {
            file: file.into(),
            msg: format!("{} elements: the header promises {count}", where_read.len()),
        });
    }
    if let Some((l, _)) = lines.next() {
        return Err(input_error(
            file,
            l,
            format!("more lines than the {count} elements the header promises"),
        ));
    }
    Ok((cells, where_read))
}
