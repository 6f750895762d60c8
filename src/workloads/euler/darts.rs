//! Edge-ends ("darts") at their vertices' owners, and the pairing of phase 1.
//!
//! Edge e = (u, v) has two darts: 2e, its end at u, and 2e + 1, its end at v (for an arc
//! u -> v: its tail and its head). Each dart is stored once, on the rank owning its vertex
//! (1D vertex blocks), so an edge whose ends live on two ranks is stored at both. A rank's
//! darts, sorted by (vertex, pairing order), are its *slots*; slots are numbered globally in
//! rank order (`Ranges`), so a slot number says where the dart lives for any rank count.
//!
//! A slot is read as "the walk arrives at this vertex by this dart". Pairing joins two slots
//! of one vertex; the walk leaves by the partner's edge and arrives at that edge's other end,
//! its `mate`: `next(s) = mate[partner[s]]`. This permutation of the slots has two cycles
//! per closed trail, one for each direction of travel (for a digraph: the arcs forwards on
//! the head slots, backwards on the tail slots), so directed and undirected graphs share
//! every later phase.

use crate::comm::ranges::Ranges;
use crate::comm::{Triple, World};
use crate::error::Result;
use crate::graph::{Block1D, Edge};
use rayon::prelude::*;
use std::sync::atomic::{AtomicI64, Ordering::Relaxed};

/// The edge lists a rank contributes: each a first global edge id and its tuples.
pub type EdgeLists<'a> = [(u64, &'a [Edge])];

/// Send each dart of this rank's edges to its vertex's owner (collective). The result holds
/// Triple(vertex, dart, other end's vertex), in no particular order.
pub fn distribute(world: &World, part: &Block1D, lists: &EdgeLists) -> Result<Vec<Triple>> {
    let mut ends = Vec::new();
    for &(first, edges) in lists {
        ends.par_extend(edges.par_iter().enumerate().flat_map_iter(|(i, &(u, v))| {
            let dart = 2 * (first + i as u64);
            [Triple(u, dart, v), Triple(v, dart + 1, u)]
        }));
    }
    if world.size() == 1 {
        return Ok(ends);
    }
    world.route(&ends, |t| part.owner(t.0))
}

/// Per own vertex: its degree (a self-loop counts twice), or for a digraph its out-degree
/// minus its in-degree.
pub fn degrees(part: &Block1D, ends: &[Triple], directed: bool) -> Vec<i64> {
    // Counted by all threads at once: the ends come in no order, so one thread's adds
    // would each miss the cache (20 s for 2^30 ends).
    let deg: Vec<AtomicI64> = (0..part.local_n()).map(|_| AtomicI64::new(0)).collect();
    ends.par_iter().for_each(|t| {
        let add = match (directed, t.1 % 2) {
            (false, _) => 1,
            (true, 0) => 1,
            (true, _) => -1,
        };
        deg[part.local(t.0)].fetch_add(add, Relaxed);
    });
    deg.into_iter().map(AtomicI64::into_inner).collect()
}

/// A rank's slots sorted by (vertex, pairing order) and paired: local indices, except
/// `vertex` and `other` (the vertex of the edge's other end), which are global ids.
pub struct Sorted {
    pub vertex_start: Vec<usize>,
    pub vertex: Vec<u64>,
    pub dart: Vec<u64>,
    pub other: Vec<u64>,
    pub partner: Vec<usize>,
}

/// A rank's slots after pairing.
pub struct Darts {
    pub slots: Ranges,
    /// Slots of own vertex i: `vertex_start[i] .. vertex_start[i + 1]` (local indices).
    pub vertex_start: Vec<usize>,
    pub vertex: Vec<u64>,
    pub dart: Vec<u64>,
    /// Global slot of the other end of the slot's edge.
    pub mate: Vec<u64>,
    /// Local slot paired with this one at its vertex.
    pub partner: Vec<usize>,
    pub directed: bool,
}

impl Darts {
    /// Phase 1 (collective): sort each vertex's darts by `order` (< 2^63; for a digraph the heads
    /// first, then the tails) and pair them, consecutive pairs for a graph, the i-th head
    /// with the i-th tail for a digraph. The degrees must be even (balanced).
    pub fn pair(
        world: &World,
        part: &Block1D,
        ends: Vec<Triple>,
        directed: bool,
        order: impl Fn(u64) -> u64 + Sync,
    ) -> Result<Darts> {
        // One sort key per dart, computed once: (vertex, class in the top bit above the
        // order, which is below 2^63, dart).
        let class = |dart: u64| u64::from(directed && dart.is_multiple_of(2)) << 63;
        let mut keyed: Vec<(u64, u64, Triple)> = ends
            .into_par_iter()
            .map(|t| (t.0, class(t.1) | order(t.1), t))
            .collect();
        keyed.par_sort_unstable_by_key(|k| (k.0, k.1, k.2 .1));
        let ends: Vec<Triple> = keyed.into_par_iter().map(|k| k.2).collect();
        let mut vertex_start = vec![0usize; part.local_n() + 1];
        for t in &ends {
            vertex_start[part.local(t.0) + 1] += 1;
        }
        for i in 0..part.local_n() {
            vertex_start[i + 1] += vertex_start[i];
        }
        let mut partner = vec![0usize; ends.len()];
        pair_within_vertices(&vertex_start, &mut partner, directed);
        let sorted = Sorted {
            vertex_start,
            vertex: ends.par_iter().map(|t| t.0).collect(),
            dart: ends.par_iter().map(|t| t.1).collect(),
            other: ends.par_iter().map(|t| t.2).collect(),
            partner,
        };
        Darts::with_mates(world, part, sorted, directed)
    }

    /// The rest of phase 1 once the slots are sorted and paired, on either device: each
    /// slot's mate, asked of the owner of its edge's other end (collective).
    pub fn with_mates(
        world: &World,
        part: &Block1D,
        sorted: Sorted,
        directed: bool,
    ) -> Result<Darts> {
        let Sorted {
            vertex_start,
            vertex,
            dart,
            other,
            partner,
        } = sorted;
        let slots = Ranges::of_lengths(world, dart.len() as u64);
        let mut by_dart: Vec<(u64, usize)> = dart.par_iter().copied().zip(0..dart.len()).collect();
        by_dart.par_sort_unstable();
        // The global slot of a dart the answering rank holds.
        let slot_here = |d: u64| {
            let i = by_dart.partition_point(|&(x, _)| x < d);
            slots.first() + by_dart[i].1 as u64
        };
        // Asked in dart order, so each owner's binary searches walk its sorted darts nearly
        // in order (a dart's mate is its neighbour id) instead of jumping at random.
        let owners: Vec<u32> = by_dart
            .par_iter()
            .map(|&(_, i)| part.owner(other[i]) as u32)
            .collect();
        let keys: Vec<u64> = by_dart.par_iter().map(|&(d, _)| d ^ 1).collect();
        let found = world.query_at(&keys, &owners, slot_here)?;
        let mut mate = vec![0; dart.len()];
        for (&(_, i), slot) in by_dart.iter().zip(found) {
            mate[i] = slot;
        }
        Ok(Darts {
            vertex,
            dart,
            mate,
            slots,
            vertex_start,
            partner,
            directed,
        })
    }

    /// Global slot of `dart`, if this rank holds it (a scan: asked for a few darts only).
    pub fn find(&self, dart: u64) -> Option<u64> {
        let i = self.dart.par_iter().position_any(|&d| d == dart)?;
        Some(self.slots.first() + i as u64)
    }

    /// The successor of every local slot: `mate[partner[s]]`.
    pub fn next(&self) -> Vec<u64> {
        self.partner.par_iter().map(|&p| self.mate[p]).collect()
    }

    pub fn slot_count(&self) -> usize {
        self.dart.len()
    }

    /// The local slots of own vertex i.
    pub fn at_vertex(&self, i: usize) -> std::ops::Range<usize> {
        self.vertex_start[i]..self.vertex_start[i + 1]
    }

    /// Number of own vertices.
    pub fn vertices(&self) -> usize {
        self.vertex_start.len() - 1
    }
}

/// Pair the slots of each vertex in their sorted order.
fn pair_within_vertices(vertex_start: &[usize], partner: &mut [usize], directed: bool) {
    let starts = &vertex_start[..vertex_start.len() - 1];
    let mut rest = partner;
    let mut pieces = Vec::with_capacity(starts.len());
    for (i, &lo) in starts.iter().enumerate() {
        let (piece, tail) = rest.split_at_mut(vertex_start[i + 1] - lo);
        pieces.push((lo, piece));
        rest = tail;
    }
    pieces.into_par_iter().for_each(|(lo, piece)| {
        let half = piece.len() / 2;
        for j in 0..half {
            let (a, b) = if directed {
                (j, half + j)
            } else {
                (2 * j, 2 * j + 1)
            };
            piece[a] = lo + b;
            piece[b] = lo + a;
        }
    });
}
