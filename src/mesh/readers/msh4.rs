//! Gmsh MSH 4.1, ASCII or binary, parsed by `mshio`. Tetrahedra (type 4) make a 3D mesh;
//! without them, triangles (2) a 2D one; element blocks of lower dimension whose entity has
//! a physical group mark boundary patches. Other element types are refused with their block.
//! A parse error names the line (ASCII) or byte offset (binary) and what was expected.

use super::{coordinate_error, input_error, usable_coordinate, Origins, Raw};
use crate::error::{Error, Result};
use mshio::{ElementType, MshFile, Node, NodeBlock};
use std::collections::HashMap;

type Msh = MshFile<u64, i32, f64>;

pub fn parse(file: &str, bytes: &[u8]) -> Result<Raw> {
    let msh = mshio::parse_msh_bytes(bytes).map_err(|e| parse_error(file, bytes, &e))?;
    let (points, index) = nodes(file, &msh)?;
    let physical = physical_groups(&msh);
    let Some(elements) = &msh.data.elements else {
        return Err(Error::InputFile {
            file: file.into(),
            msg: "no $Elements section: expected tetrahedra or triangles".into(),
        });
    };
    let blocks = &elements.element_blocks;
    let listed: usize = blocks.iter().map(|b| b.elements.len()).sum();
    check_count(file, "$Elements", elements.num_elements, listed, "elements")?;
    let dim = if blocks.iter().any(|b| b.element_type == ElementType::Tet4) {
        3
    } else {
        2
    };
    let (mut cells, mut tags, mut tagged) = (Vec::new(), Vec::new(), Vec::new());
    for (b, block) in blocks.iter().enumerate() {
        let corners = match block.element_type {
            ElementType::Pnt => 1,
            ElementType::Lin2 => 2,
            ElementType::Tri3 => 3,
            ElementType::Tet4 => 4,
            other => {
                return Err(Error::InputFile {
                    file: file.into(),
                    msg: format!("element block {} (entity {} of dimension {}): unsupported element type {:?}: expected Tet4, Tri3, Lin2 or Pnt", b + 1, block.entity_tag, block.entity_dim, other),
                })
            }
        };
        let is_cell = corners == dim + 1;
        let tag = physical.get(&(block.entity_dim, block.entity_tag)).copied();
        for e in &block.elements {
            if is_cell {
                tags.push(e.element_tag);
            }
            for n in &e.nodes {
                let local = index(*n).ok_or_else(|| Error::InputFile {
                    file: file.into(),
                    msg: format!(
                        "element block {}, element {}: node {n} out of range: not in $Nodes",
                        b + 1,
                        e.element_tag
                    ),
                })?;
                if is_cell {
                    cells.push(local);
                } else if let Some(t) = tag.filter(|_| corners <= dim) {
                    tagged.push((local, t));
                }
            }
        }
    }
    Ok(Raw {
        dim,
        points,
        cells,
        origins: Origins::ElementTags(tags),
        tagged: Some(tagged),
        fixed: None,
    })
}

/// The nodes in file order and a map from node tag to local index.
#[allow(clippy::type_complexity)]
fn nodes(file: &str, msh: &Msh) -> Result<(Vec<[f64; 3]>, Box<dyn Fn(u64) -> Option<u32>>)> {
    let Some(section) = &msh.data.nodes else {
        return Err(Error::InputFile {
            file: file.into(),
            msg: "no $Nodes section".into(),
        });
    };
    // The blocks' own counts, not the header's, size the points: mshio read that many.
    let held = section.node_blocks.iter().map(|b| b.nodes.len()).sum();
    check_count(file, "$Nodes", section.num_nodes, held, "nodes")?;
    let mut points = Vec::with_capacity(held);
    let mut sparse: HashMap<u64, u32> = HashMap::new();
    let mut any_sparse = false;
    let min = section.min_node_tag;
    for (b, block) in section.node_blocks.iter().enumerate() {
        usable(file, (b, block), (min, points.len()))?;
        if let Some(tags) = &block.node_tags {
            any_sparse = true;
            let base = points.len() as u32;
            sparse.extend(tags.iter().map(|(&t, &i)| (t, base + i as u32)));
        }
        points.extend(block.nodes.iter().map(|n| [n.x, n.y, n.z]));
    }
    let count = points.len() as u64;
    let index: Box<dyn Fn(u64) -> Option<u32>> = if any_sparse {
        Box::new(move |t| sparse.get(&t).copied())
    } else {
        Box::new(move |t| (t >= min && t - min < count).then(|| (t - min) as u32))
    };
    Ok((points, index))
}

/// Node block `b`'s coordinates are usable (finite, at most `MAX_COORDINATE` in magnitude),
/// or the error naming its first node whose are not (`min`, the section's least tag, and
/// `before`, the nodes of the blocks before, give its tag where the tags are dense).
fn usable(
    file: &str,
    (b, block): (usize, &NodeBlock<u64, i32, f64>),
    (min, before): (u64, usize),
) -> Result<()> {
    let usable = |n: &Node<f64>| [n.x, n.y, n.z].into_iter().all(usable_coordinate);
    let Some(at) = block.nodes.iter().position(|n| !usable(n)) else {
        return Ok(());
    };
    let tag = match &block.node_tags {
        Some(tags) => tags.iter().find(|(_, &i)| i == at).map_or(0, |(&t, _)| t),
        None => min + (before + at) as u64,
    };
    let n = &block.nodes[at];
    let at = format!(
        "node block {} (entity {} of dimension {}), node {tag}",
        b + 1,
        block.entity_tag,
        block.entity_dim
    );
    Err(coordinate_error(file, &at, &[n.x, n.y, n.z]))
}

/// A section header's count against what its blocks hold (`mshio` reads the blocks by their
/// own counts and does not compare the two).
fn check_count(file: &str, section: &str, header: u64, held: usize, what: &str) -> Result<()> {
    if header == held as u64 {
        return Ok(());
    }
    Err(Error::InputFile {
        file: file.into(),
        msg: format!("{section}: the header gives {header} {what} but its blocks hold {held}: expected the two to agree"),
    })
}

/// The first physical tag of each (dimension, entity) that has one.
fn physical_groups(msh: &Msh) -> HashMap<(i32, i32), i64> {
    let mut out = HashMap::new();
    if let Some(e) = &msh.data.entities {
        let mut put = |dim: i32, tag: i32, phys: &[i32]| {
            if let Some(&p) = phys.first() {
                out.insert((dim, tag), p as i64);
            }
        };
        e.points
            .iter()
            .for_each(|x| put(0, x.tag, &x.physical_tags));
        e.curves
            .iter()
            .for_each(|x| put(1, x.tag, &x.physical_tags));
        e.surfaces
            .iter()
            .for_each(|x| put(2, x.tag, &x.physical_tags));
        e.volumes
            .iter()
            .for_each(|x| put(3, x.tag, &x.physical_tags));
    }
    out
}

/// One line from mshio's error: where (line for ASCII, byte offset for binary) and what.
fn parse_error(file: &str, bytes: &[u8], e: &mshio::MshParserError<&[u8]>) -> Error {
    let trace = e.filtered_backtrace();
    let Some((at, kind)) = trace.first() else {
        return Error::InputFile {
            file: file.into(),
            msg: "not a Gmsh MSH 4.1 file".into(),
        };
    };
    let offset = bytes.len() - at.len();
    let contexts: Vec<String> = trace[1..]
        .iter()
        .rev()
        .map(|(_, k)| k.to_string())
        .collect();
    let what = format!("{kind} (in {})", contexts.join(" / ")).replace(" (in )", "");
    let binary = bytes.windows(6).take(200).any(|w| w.starts_with(b"4.1 1"));
    if binary {
        Error::InputFile {
            file: file.into(),
            msg: format!("byte {offset}: {what}"),
        }
    } else {
        let line = bytes[..offset].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        input_error(file, line, what)
    }
}
