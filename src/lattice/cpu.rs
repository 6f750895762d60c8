//! The labelling's local phases on the CPU (rayon): the union-find of `unionfind`, then
//! relabelling and size counting in parallel loops over the sites.

use super::boundary::{Faces, NO_ROOT};
use super::clusters::{Cluster, ClusterStats};
use super::engine::{SlabDevice, ROOT_FLAG};
use super::occupation::{NO_LABEL, VACANT};
use super::{unionfind, Slab};
use crate::error::Result;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// Sites per parallel task of the cluster tally.
const TALLY_CHUNK: usize = 1 << 16;

/// A slab's parents and labels in host memory.
pub struct CpuSlab {
    slab: Slab,
    parent: Vec<u32>,
    pub labels: Vec<u64>,
}

impl CpuSlab {
    pub fn new(slab: Slab) -> Self {
        CpuSlab {
            slab,
            parent: Vec::new(),
            labels: vec![NO_LABEL; slab.sites()],
        }
    }

    /// The root of site `i` (its parent, or itself when its parent is flagged).
    fn root(&self, i: usize) -> usize {
        let p = self.parent[i];
        if p & ROOT_FLAG != 0 {
            i
        } else {
            p as usize
        }
    }
}

impl SlabDevice for CpuSlab {
    type Mask = [u8];

    fn label_box(&mut self, mask: &[u8]) -> Result<()> {
        self.parent = unionfind::label_box(&self.slab, mask);
        Ok(())
    }

    fn face_roots(&mut self, mask: &[u8], faces: &Faces) -> Result<(Vec<u32>, Vec<u8>)> {
        Ok(faces
            .sites
            .iter()
            .map(|&s| {
                let m = mask[s as usize];
                let root = if m & VACANT != 0 {
                    NO_ROOT
                } else {
                    self.parent[s as usize]
                };
                (root, m)
            })
            .unzip())
    }

    fn relabel(&mut self, mask: &[u8], roots: &[u32], labels: &[u64]) -> Result<()> {
        for (k, &r) in roots.iter().enumerate() {
            self.parent[r as usize] = ROOT_FLAG | k as u32;
        }
        let offset = self.slab.offset();
        let parent = &self.parent;
        self.labels
            .par_iter_mut()
            .with_min_len(crate::grain::MIN_ITEMS)
            .enumerate()
            .for_each(|(i, label)| {
                let p = parent[i];
                let root = if p & ROOT_FLAG != 0 { i } else { p as usize };
                let q = parent[root];
                *label = if mask[i] & VACANT != 0 {
                    NO_LABEL
                } else if q & ROOT_FLAG != 0 {
                    labels[(q & !ROOT_FLAG) as usize]
                } else {
                    offset + root as u64
                };
            });
        Ok(())
    }

    fn tally(&mut self, mask: &[u8], roots: &[u32]) -> Result<(ClusterStats, Vec<u64>)> {
        let n = self.slab.sites();
        let sizes: Vec<AtomicU32> = (0..n)
            .into_par_iter()
            .with_min_len(crate::grain::MIN_ITEMS)
            .map(|_| AtomicU32::new(0))
            .collect();
        (0..n)
            .into_par_iter()
            .with_min_len(crate::grain::MIN_ITEMS)
            .for_each(|i| {
                if mask[i] & VACANT == 0 {
                    sizes[self.root(i)].fetch_add(1, Relaxed);
                }
            });
        let offset = self.slab.offset();
        // A tally per chunk of sites, updated in place, then merged.
        let stats = mask
            .par_chunks(TALLY_CHUNK)
            .enumerate()
            .map(|(c, chunk)| {
                let mut t = ClusterStats::default();
                for (j, &m) in chunk.iter().enumerate() {
                    let i = c * TALLY_CHUNK + j;
                    if m & VACANT == 0 && self.parent[i] == i as u32 {
                        t.add(Cluster {
                            size: u64::from(sizes[i].load(Relaxed)),
                            label: offset + i as u64,
                            percolates: 0,
                        });
                    }
                }
                t
            })
            .reduce(ClusterStats::default, |mut a, b| {
                a.merge(&b);
                a
            });
        let node_sizes = roots
            .iter()
            .map(|&r| u64::from(sizes[r as usize].load(Relaxed)))
            .collect();
        Ok((stats, node_sizes))
    }
}
