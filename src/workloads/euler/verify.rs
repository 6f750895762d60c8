//! The checker, independent of the solver (it reads only the edge tuples and the circuit as
//! written, each rank its piece where it lies, `pieces::Piece`): every edge id appears exactly
//! once (each position asks the edge's holder for its tuple, and the holder counts the
//! asks); edge i, travelled as its direction flag says, goes from vertex i to vertex i + 1
//! of the vertex sequence (a digraph's arcs only forwards), the pieces meeting at their
//! seams (one all-gather of each piece's first and last vertex); the walk closes (a trail:
//! it runs from `ends.0` to `ends.1`). A closed walk that uses every edge once leaves each
//! vertex deg/2 times (digraph: out-degree times), so that rule needs no check of its own.
//!
//! `TESSERA_EULER_CORRUPT=swap|drop|break` (for tests) spoils the middle of the circuit
//! before it is checked: two neighbouring edges swapped, one edge replaced by its neighbour
//! (so one is missing), or one vertex of the walk moved.

use super::pieces::Piece;
use crate::comm::ranges::Ranges;
use crate::comm::{Pair, World};
use crate::graph::Edge;

use super::jump::NIL;

/// The edge tuples the checker reads: this rank's block of the input edges (layout
/// `input`), and the added edges, which every rank holds (rank 0 answers for them).
pub struct Tuples<'a> {
    pub input: &'a Ranges,
    pub local: &'a [Edge],
    pub added: &'a [Edge],
}

impl Tuples<'_> {
    fn total(&self) -> u64 {
        self.input.total() + self.added.len() as u64
    }

    fn owner(&self, e: u64) -> usize {
        if e < self.input.total() {
            self.input.owner(e)
        } else {
            0
        }
    }

    /// The edges this rank answers for: (first id, tuples).
    fn held(&self, rank: usize) -> Vec<(u64, &[Edge])> {
        let mut held = vec![(self.input.first(), self.local)];
        if rank == 0 {
            held.push((self.input.total(), self.added));
        }
        held
    }
}

/// Check this rank's piece (collective: every rank reaches every exchange, whatever it
/// finds). `Err` names the first rule this rank finds broken; the caller agrees on it.
pub fn check(
    world: &World,
    tuples: &Tuples,
    directed: bool,
    trail: Option<(u64, u64)>,
    piece: &Piece,
) -> Result<(), String> {
    let (found, counts) = look_up(world, tuples, &piece.edges);
    let seams = world.allgather(Pair(
        piece.vertices.first().copied().unwrap_or(NIL),
        piece.vertices.last().copied().unwrap_or(NIL),
    ));
    let lengths = piece.vertices.len() as u64 - piece.edges.len() as u64;
    if world.allreduce(lengths, crate::comm::Op::Sum) != 1 {
        return Err(format!(
            "the pieces hold {} edges and not one vertex more",
            piece.total
        ));
    }
    counts?;
    walk(world, &seams, directed, piece, &found)?;
    let first = seams.iter().map(|p| p.0).find(|&v| v != NIL);
    let last = seams.iter().rev().map(|p| p.1).find(|&v| v != NIL);
    match (trail, first, last) {
        (None, Some(a), Some(b)) if a != b => Err(format!("the walk ends at {b}, not {a}")),
        (Some(ends), Some(a), Some(b)) if (a, b) != ends => Err(format!(
            "the trail runs {a} -> {b}, not {} -> {}",
            ends.0, ends.1
        )),
        _ => Ok(()),
    }
}

/// Each position's edge tuple (NIL where the id names no edge), from the rank holding it;
/// and whether every held edge was asked for exactly once.
fn look_up(
    world: &World,
    tuples: &Tuples,
    edges: &[u64],
) -> (Vec<Pair>, Result<(), String>) {
    let mut verdict = Ok(());
    let total = tuples.total();
    let found = world.query_batch(
        edges,
        |e| tuples.owner(e),
        |asked| {
            let held = tuples.held(world.rank());
            let mut counts: Vec<Vec<u32>> = held.iter().map(|h| vec![0; h.1.len()]).collect();
            let answers = asked
                .iter()
                .map(|&e| {
                    let at = held.iter().position(|h| e >= h.0 && e - h.0 < h.1.len() as u64);
                    match at.filter(|_| e < total) {
                        Some(k) => {
                            let i = (e - held[k].0) as usize;
                            counts[k][i] += 1;
                            Pair(held[k].1[i].0, held[k].1[i].1)
                        }
                        None => Pair(NIL, NIL),
                    }
                })
                .collect();
            for (h, c) in held.iter().zip(&counts) {
                if let Some(i) = c.iter().position(|&k| k != 1) {
                    verdict = Err(format!("edge {} appears {} times", h.0 + i as u64, c[i]));
                    break;
                }
            }
            Ok(answers)
        },
    );
    match found {
        Ok(found) => (found, verdict),
        Err(e) => (Vec::new(), Err(e.to_string())),
    }
}

/// Every edge of the piece goes from its vertex to the next (across the seam to the next
/// rank's first vertex).
fn walk(
    world: &World,
    seams: &[Pair],
    directed: bool,
    piece: &Piece,
    found: &[Pair],
) -> Result<(), String> {
    let next_first = seams[world.rank() + 1..]
        .iter()
        .map(|p| p.0)
        .find(|&v| v != NIL);
    for (i, (&e, &fwd)) in piece.edges.iter().zip(&piece.forward).enumerate() {
        let at = piece.start + i as u64;
        let Pair(u, v) = found[i];
        if u == NIL {
            return Err(format!("position {at}: edge {e} does not exist"));
        }
        if directed && fwd != 1 {
            return Err(format!("position {at}: arc {e} travelled backwards"));
        }
        let (from, to) = if fwd == 1 { (u, v) } else { (v, u) };
        let here = piece.vertices[i];
        let after = match piece.vertices.get(i + 1) {
            Some(&w) => w,
            None => next_first.unwrap_or(NIL),
        };
        if (from, to) != (here, after) {
            return Err(format!(
                "position {at}: edge {e} goes {from} -> {to}, the walk {here} -> {after}"
            ));
        }
    }
    Ok(())
}

/// Spoil the circuit as `TESSERA_EULER_CORRUPT` says (see the module's note), at the middle
/// position, on the rank holding it; `n` vertices.
pub fn corrupt(piece: &mut Piece, n: u64) {
    let Ok(how) = std::env::var("TESSERA_EULER_CORRUPT") else {
        return;
    };
    let mid = piece.total / 2;
    let len = piece.edges.len() as u64;
    if mid < piece.start || mid >= piece.start + len {
        return;
    }
    let i = (mid - piece.start) as usize;
    // The neighbour within the piece.
    let j = if i + 1 < piece.edges.len() { i + 1 } else { i.saturating_sub(1) };
    match how.as_str() {
        "swap" => {
            piece.edges.swap(i, j);
            piece.forward.swap(i, j);
        }
        "drop" => piece.edges[i] = piece.edges[j],
        "break" => piece.vertices[i] = (piece.vertices[i] + 1) % n.max(2),
        _ => {}
    }
}

/// An order-dependent checksum of the circuit (edge ids with their directions, in order),
/// carried on from `h` (0 at the circuit's start) over more of it.
pub fn fold(h: u64, edges: &[u64], forward: &[u8]) -> u64 {
    edges.iter().zip(forward).fold(h, |h, (&e, &f)| {
        crate::rng::mix64(h.rotate_left(5) ^ (e << 1 | u64::from(f)))
    })
}
