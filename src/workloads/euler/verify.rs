//! The checker, independent of the solver (it reads only the edge tuples and the output):
//! every edge id appears exactly once; edge i, travelled as its direction flag says, goes
//! from vertex i to vertex i + 1 of the vertex sequence (a digraph's arcs only forwards);
//! the walk closes (a trail: it runs from `ends.0` to `ends.1`); each vertex is left
//! deg/2 times (digraph: out-degree times).

use crate::graph::Edge;

/// The circuit as written: edge ids, directions (1: first -> second vertex of the tuple) and
/// the m + 1 vertices.
pub struct Circuit {
    pub edges: Vec<u64>,
    pub forward: Vec<u8>,
    pub vertices: Vec<u64>,
}

/// `Err` names the first rule broken.
pub fn check(
    n: u64,
    edges: &[Edge],
    directed: bool,
    trail: Option<(u64, u64)>,
    c: &Circuit,
) -> Result<(), String> {
    let m = edges.len();
    if c.edges.len() != m || c.forward.len() != m || c.vertices.len() != m + 1 {
        return Err(format!(
            "lengths {}, {}, {} for {m} edges",
            c.edges.len(),
            c.forward.len(),
            c.vertices.len()
        ));
    }
    let mut seen = vec![false; m];
    for (i, (&e, &fwd)) in c.edges.iter().zip(&c.forward).enumerate() {
        let Some(&(u, v)) = edges.get(e as usize) else {
            return Err(format!("position {i}: edge {e} does not exist"));
        };
        if std::mem::replace(&mut seen[e as usize], true) {
            return Err(format!("position {i}: edge {e} a second time"));
        }
        let (from, to) = if fwd == 1 { (u, v) } else { (v, u) };
        if directed && fwd != 1 {
            return Err(format!("position {i}: arc {e} travelled backwards"));
        }
        if (from, to) != (c.vertices[i], c.vertices[i + 1]) {
            return Err(format!(
                "position {i}: edge {e} goes {from} -> {to}, the walk {} -> {}",
                c.vertices[i],
                c.vertices[i + 1]
            ));
        }
    }
    let (first, last) = (c.vertices[0], c.vertices[m]);
    match trail {
        None if first != last => return Err(format!("the walk ends at {last}, not {first}")),
        Some(ends) if (first, last) != ends => {
            return Err(format!(
                "the trail runs {first} -> {last}, not {} -> {}",
                ends.0, ends.1
            ))
        }
        _ => {}
    }
    let mut need = vec![0i64; n as usize];
    for &(u, v) in edges {
        need[u as usize] += 1;
        if !directed {
            need[v as usize] += 1;
        }
    }
    let halve = if directed { 1 } else { 2 };
    let mut left = vec![0i64; n as usize];
    for &v in &c.vertices[..m] {
        left[v as usize] += 1;
    }
    // A trail leaves its start once more than it arrives, and arrives at its end once more.
    if trail.is_some() && !directed {
        need[first as usize] += 1;
        need[last as usize] -= 1;
    }
    match (0..n as usize).find(|&v| left[v] * halve != need[v]) {
        Some(v) => Err(format!(
            "vertex {v} is left {} times, expected {}",
            left[v],
            need[v] / halve
        )),
        None => Ok(()),
    }
}

/// An order-dependent checksum of the circuit (edge ids with their directions, in order).
pub fn checksum(edges: &[u64], forward: &[u8]) -> u64 {
    edges.iter().zip(forward).fold(0u64, |h, (&e, &f)| {
        crate::rng::mix64(h.rotate_left(5) ^ (e << 1 | u64::from(f)))
    })
}
