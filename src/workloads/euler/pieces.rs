//! The circuit in pieces, one per rank (collective): the solver's placed slots go to the
//! rank owning their position (even blocks of the m positions), which holds that stretch of
//! the circuit as written (`circuit_edges`, `circuit_forward`, `circuit_vertices`). Nothing
//! is gathered on one rank: each writes its piece into the one file, the checker reads the
//! pieces where they are, and the checksum is folded rank after rank.

use crate::comm::ranges::Ranges;
use crate::comm::{Triple, World};
use crate::error::{Error, Result};
use rayon::prelude::*;

use super::jump::NIL;

/// Positions `start ..` of the circuit as written: `edges` and `forward` one per edge,
/// `vertices` the vertex each edge leaves from, and on the rank holding the last edge the
/// vertex the walk ends at too (`vertices` has `total + 1` items in all).
pub struct Piece {
    pub start: u64,
    /// Edges of the whole circuit.
    pub total: u64,
    pub edges: Vec<u64>,
    pub forward: Vec<u8>,
    pub vertices: Vec<u64>,
}

/// Tag of the checksum's messages.
const CHECKSUM_TAG: i32 = 0x6575;

/// This rank's piece from the placed slots Triple(position, edge << 1 | forward, vertex
/// arrived at) of a walk of `m` edges; a trail leaves out its first edge (the virtual one).
pub fn cut(world: &World, placed: &[Triple], m: u64, trail: bool) -> Result<Piece> {
    let walk = Ranges::even(m, world.size(), world.rank());
    let mut mine = world.route(placed, |t| walk.owner(t.0))?;
    mine.par_sort_unstable_by_key(|t| t.0);
    if mine.len() != walk.local_len() {
        return Err(Error::Check(format!(
            "the circuit's positions {}.. hold {} edges, not {}",
            walk.first(),
            mine.len(),
            walk.local_len()
        )));
    }
    // The seam: the vertex the walk reached just before this block (cyclically).
    let last = mine.last().map_or(NIL, |t| t.2);
    let lasts = world.allgather(last);
    let me = world.rank();
    let before = (1..=lasts.len())
        .map(|k| lasts[(me + lasts.len() - k) % lasts.len()])
        .find(|&v| v != NIL)
        .unwrap_or(NIL);
    let skip = usize::from(trail).saturating_sub(walk.first() as usize);
    let kept = &mine[skip.min(mine.len())..];
    let mut vertices: Vec<u64> = Vec::with_capacity(kept.len() + 1);
    let arrived = |i: usize| if i == 0 { before } else { mine[i - 1].2 };
    vertices.extend((skip..mine.len()).map(arrived));
    if walk.first() + mine.len() as u64 == m && !mine.is_empty() {
        vertices.push(mine[mine.len() - 1].2);
    }
    let t = u64::from(trail);
    Ok(Piece {
        start: (walk.first() + skip as u64).saturating_sub(t),
        total: m - t,
        edges: kept.iter().map(|p| p.1 >> 1).collect(),
        forward: kept.iter().map(|p| (p.1 & 1) as u8).collect(),
        vertices,
    })
}

/// `verify::fold` of the whole circuit, folded on rank 0, then rank 1, ..., without
/// gathering it; the last rank's result comes back to rank 0 (collective; others get 0).
pub fn checksum(world: &World, piece: &Piece) -> u64 {
    let (me, ranks) = (world.rank(), world.size());
    let mut h = if me == 0 {
        0
    } else {
        world.receive_words(me - 1, CHECKSUM_TAG)[0]
    };
    h = super::verify::fold(h, &piece.edges, &piece.forward);
    if ranks == 1 {
        return h;
    }
    if me + 1 < ranks {
        world.send_words(me + 1, CHECKSUM_TAG, &[h]);
        if me == 0 {
            return world.receive_words(ranks - 1, CHECKSUM_TAG)[0];
        }
        return 0;
    }
    world.send_words(0, CHECKSUM_TAG, &[h]);
    0
}
