//! A rank's rows as the sweeps read them: 32-bit columns into one value space, the rank's
//! own vertices first (local index), then its ghosts (the other ranks' vertices its rows
//! reach, ascending global id, so grouped by owner in rank order), with the plan that sends
//! the owners' values to the ranks holding them as ghosts. A replicated graph has no ghosts.

use crate::comm::World;
use crate::error::{Error, Result};
use crate::graph::arcs::{ArcGraph, Rows};
use crate::graph::ghosts::Ghosts;
use crate::graph::Vid;
use rayon::prelude::*;

/// Which arcs count, by weight.
pub type Keep = dyn Fn(u64) -> bool + Sync;

/// One direction's rows in value-space columns.
pub struct LocalRows {
    pub offsets: Vec<u64>,
    pub adj: Vec<u32>,
}

impl LocalRows {
    #[inline]
    pub fn row(&self, v: usize) -> &[u32] {
        &self.adj[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }
}

pub struct View {
    /// Own vertices: value indices 0..local_n.
    pub local_n: usize,
    /// Global id of own vertex 0.
    pub first: Vid,
    /// Out-rows (the backward sweep pulls from successors through them).
    pub out: LocalRows,
    /// In-rows (the forward sweep pulls from predecessors); None where they are the out-rows.
    pub inc: Option<LocalRows>,
    /// Ghosts (value indices local_n..) and who sends their values; None when replicated.
    pub ghosts: Option<Ghosts>,
}

impl View {
    pub fn inc(&self) -> &LocalRows {
        self.inc.as_ref().unwrap_or(&self.out)
    }

    /// Value slots: own vertices and ghosts.
    pub fn slots(&self) -> usize {
        self.local_n + self.ghosts.as_ref().map_or(0, |g| g.ids.len())
    }

    /// The view of a graph every rank holds whole (no ghosts), of only the arcs whose weight
    /// `keep` accepts where it is given (filtered as the columns are written: SSCA#2's
    /// kernel 4 makes no filtered copy of the graph first).
    pub fn replicated(g: &ArcGraph, keep: Option<&Keep>) -> Result<View> {
        narrow(g.n(), "vertices")?;
        let columns = |rows: &Rows| {
            let (offsets, adj) = rows.kept(keep, |v| v as u32);
            LocalRows { offsets, adj }
        };
        Ok(View {
            local_n: g.local_n(),
            first: 0,
            out: columns(&g.out),
            inc: (!g.symmetric()).then(|| columns(g.inc())),
            ghosts: None,
        })
    }

    /// The view of the rank's part of a 1D-partitioned graph (collective: the owners of
    /// its ghosts learn who holds them).
    pub fn partitioned(world: &World, g: &ArcGraph) -> Result<View> {
        let part = g.part;
        let remote = |rows: &Rows| -> Vec<Vid> {
            rows.adj
                .par_iter()
                .map(|&v| Vid::from(v))
                .filter(|&v| !part.is_local(v))
                .collect()
        };
        let mut ids = remote(&g.out);
        if !g.symmetric() {
            ids.extend(remote(g.inc()));
        }
        ids.par_sort_unstable();
        ids.dedup();
        narrow(g.local_n() as u64 + ids.len() as u64, "vertices and ghosts")?;
        let local_n = g.local_n();
        let column = |v: Vid| -> u32 {
            if part.is_local(v) {
                part.local(v) as u32
            } else {
                (local_n + ids.binary_search(&v).expect("every remote id is a ghost")) as u32
            }
        };
        let columns = |rows: &Rows| LocalRows {
            offsets: rows.offsets.clone(),
            adj: rows.adj.par_iter().map(|&v| column(v.into())).collect(),
        };
        let out = columns(&g.out);
        let inc = (!g.symmetric()).then(|| columns(g.inc()));
        Ok(View {
            local_n,
            first: part.first(),
            out,
            inc,
            ghosts: Some(Ghosts::plan(world, &part, ids)?),
        })
    }
}

/// Refuse value spaces beyond 32-bit columns.
fn narrow(count: u64, what: &str) -> Result<()> {
    if count >= u32::MAX as u64 {
        return Err(Error::Unavailable(format!(
            "betweenness indexes {what} in 32 bits, and a rank would hold {count}: use replicate = \"distributed\" on more ranks"
        )));
    }
    Ok(())
}
