//! The labelling's local steps on the CPU cores: a lock-free union-find over the rank's local
//! edges (rayon threads; a root is linked under the smaller root, so every root is the
//! smallest local index, hence the smallest global id, of its tree), then the cut-edge steps
//! of the driver in `super`. The same steps as kernels/cc.cu, so both give the same labels.
//! With an `EdgeMask` only the edges it marks count (the spin models' Swendsen-Wang bonds).

use super::Labeller;
use crate::comm::World;
use crate::error::Result;
use crate::graph::ghosts::LocalRows;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// The edges that count, one flag per entry of `LocalRows::adj` (`local`) and of its cut
/// edges (`cut`); both entries of a local edge must agree.
#[derive(Clone, Copy)]
pub struct EdgeMask<'a> {
    pub local: &'a [bool],
    pub cut: &'a [bool],
}

pub struct CpuLabeller<'a> {
    rows: &'a LocalRows,
    first: u64,
    mask: Option<EdgeMask<'a>>,
    parent: Vec<AtomicU32>,
    labels: Vec<u64>,
    comp_min: Vec<AtomicU64>,
    ghost_labels: Vec<u64>,
    /// Each ghost's label as last absorbed (u64::MAX: not yet).
    absorbed: Vec<u64>,
}

impl<'a> CpuLabeller<'a> {
    /// `first`: the global id of the rank's first vertex.
    pub fn new(rows: &'a LocalRows, first: u64) -> Self {
        let n = rows.local_n();
        CpuLabeller {
            rows,
            first,
            mask: None,
            parent: (0..n as u32).map(AtomicU32::new).collect(),
            labels: vec![0; n],
            comp_min: (0..n).map(|_| AtomicU64::new(0)).collect(),
            ghost_labels: Vec::new(),
            absorbed: Vec::new(),
        }
    }

    /// A labeller of the components of the edges `mask` marks.
    pub fn masked(rows: &'a LocalRows, first: u64, mask: EdgeMask<'a>) -> Self {
        CpuLabeller {
            mask: Some(mask),
            ..CpuLabeller::new(rows, first)
        }
    }
}

/// The root of `x`, halving the path on the way (each node pointed at its grandparent: both
/// are ancestors, so racing writers can only shorten paths, never cut a tree).
fn find(parent: &[AtomicU32], mut x: u32) -> u32 {
    loop {
        let p = parent[x as usize].load(Relaxed);
        if p == x {
            return x;
        }
        let grand = parent[p as usize].load(Relaxed);
        if grand != p {
            parent[x as usize].store(grand, Relaxed);
        }
        x = grand;
    }
}

/// Join the trees of `a` and `b`, the larger root under the smaller.
fn unite(parent: &[AtomicU32], a: u32, b: u32) {
    let (mut a, mut b) = (find(parent, a), find(parent, b));
    while a != b {
        let (high, low) = if a > b { (a, b) } else { (b, a) };
        match parent[high as usize].compare_exchange(high, low, Relaxed, Relaxed) {
            Ok(_) => return,
            // Another thread linked `high` meanwhile: start again from both roots.
            Err(_) => (a, b) = (find(parent, high), find(parent, low)),
        }
    }
}

impl Labeller for CpuLabeller<'_> {
    fn link_local(&mut self) -> Result<()> {
        let (rows, parent) = (self.rows, &self.parent);
        parent
            .par_iter()
            .enumerate()
            .for_each(|(v, p)| p.store(v as u32, Relaxed));
        let mask = self.mask;
        (0..rows.local_n()).into_par_iter().for_each(|u| {
            let (start, end) = (rows.offsets[u] as usize, rows.offsets[u + 1] as usize);
            // Each local edge is in both rows: link it once, from its larger end.
            for (i, &v) in rows.adj[start..end].iter().enumerate() {
                if v < u as u32 && mask.is_none_or(|m| m.local[start + i]) {
                    unite(parent, u as u32, v);
                }
            }
        });
        // Roots first, stored after: a find halving paths meanwhile could overwrite a stored
        // root with a mere ancestor.
        let roots: Vec<u32> = (0..rows.local_n() as u32)
            .into_par_iter()
            .map(|v| find(parent, v))
            .collect();
        let first = self.first;
        self.labels
            .par_iter_mut()
            .zip(self.comp_min.par_iter())
            .zip(roots.into_par_iter())
            .enumerate()
            .for_each(|(v, ((label, min), root))| {
                parent[v].store(root, Relaxed);
                *label = first + u64::from(root);
                min.store(*label, Relaxed);
            });
        self.absorbed = vec![u64::MAX; self.rows.ghosts.ids.len()];
        Ok(())
    }

    fn boundary_roots(&mut self) -> Result<Vec<u32>> {
        let parent = &self.parent;
        let mut roots: Vec<u32> = self
            .rows
            .cut_own
            .par_iter()
            .map(|&u| parent[u as usize].load(Relaxed))
            .collect();
        roots.par_sort_unstable();
        roots.dedup();
        Ok(roots)
    }

    fn refresh_ghosts(&mut self, world: &World) -> Result<u64> {
        self.ghost_labels = self.rows.ghosts.refresh(world, &self.labels)?;
        Ok(self.rows.ghosts.refresh_bytes(8))
    }

    fn absorb_cut_edges(&mut self) -> Result<()> {
        let (rows, parent, min) = (self.rows, &self.parent, &self.comp_min);
        let (ghost_labels, mask) = (&self.ghost_labels, self.mask);
        // Only cut edges to ghosts whose label changed: what the others gave is already in
        // `comp_min`, which only falls.
        let changed: Vec<bool> = self
            .absorbed
            .par_iter_mut()
            .zip(ghost_labels.par_iter())
            .map(|(seen, &label)| std::mem::replace(seen, label) != label)
            .collect();
        rows.cut_own
            .par_iter()
            .zip(rows.cut_ghost.par_iter())
            .enumerate()
            .filter(|&(i, (_, &g))| changed[g as usize] && mask.is_none_or(|m| m.cut[i]))
            .for_each(|(_, (&u, &g))| {
                let (root, label) = (parent[u as usize].load(Relaxed), ghost_labels[g as usize]);
                let min = &min[root as usize];
                // A read first: most edges lower nothing, and a failed fetch_min still writes.
                if label < min.load(Relaxed) {
                    min.fetch_min(label, Relaxed);
                }
            });
        Ok(())
    }

    fn component_labels(&mut self, vertices: &[u32]) -> Result<Vec<u64>> {
        let (parent, min) = (&self.parent, &self.comp_min);
        Ok(vertices
            .par_iter()
            .map(|&v| min[parent[v as usize].load(Relaxed) as usize].load(Relaxed))
            .collect())
    }

    fn lower(&mut self, vertices: &[u32], labels: &[u64]) -> Result<()> {
        let (parent, min) = (&self.parent, &self.comp_min);
        vertices.par_iter().zip(labels).for_each(|(&v, &label)| {
            min[parent[v as usize].load(Relaxed) as usize].fetch_min(label, Relaxed);
        });
        Ok(())
    }

    fn relabel(&mut self) -> Result<u64> {
        let (parent, min) = (&self.parent, &self.comp_min);
        Ok(self
            .labels
            .par_iter_mut()
            .enumerate()
            .map(|(v, label)| {
                let root = parent[v].load(Relaxed) as usize;
                let new = min[root].load(Relaxed);
                let changed = new != *label;
                *label = new;
                u64::from(changed)
            })
            .sum())
    }

    fn labels(&self) -> Result<Vec<u64>> {
        Ok(self.labels.clone())
    }
}
