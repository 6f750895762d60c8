//! The labelling's local steps on the CPU cores: a lock-free union-find over the rank's local
//! edges (rayon threads; a root is linked under the smaller root, so every root is the
//! smallest local index, hence the smallest global id, of its tree), then the cut-edge steps
//! of the driver in `super`. The same steps as kernels/cc.cu, so both give the same labels.
//! With an `EdgeMask` only the edges it marks count (the spin models' Swendsen-Wang bonds).

use super::{most_frequent, remote, Labeller, SAMPLE_VERTICES};
use crate::comm::{Op, Pair, World};
use crate::error::Result;
use crate::graph::ghosts::LocalRows;
use crate::graph::Block1D;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

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
    /// Per ghost, whether its label came in this round.
    changed_ghosts: Vec<bool>,
    /// Per entry of the ghost plan, the label last sent (`NONE_SENT`, or `NEVER`: in the giant
    /// or not read by the asking rank).
    sent: Vec<u64>,
    /// The root of this rank's giant local component (`skip_giants`).
    giant: Option<u32>,
    /// Per ghost: `SAME_GIANT` (in a joined giant), `OTHER_GIANT` or 0 (no giant).
    ghost_giant: Vec<u8>,
    /// Per rank, its giant's label to hand its giant's ghosts, and the label last handed.
    giant_labels: Vec<u64>,
    handed: Vec<u64>,
    /// The cut edges read (indices): all but the giant's (except to a rank whose giant is of
    /// another class) and those the mask drops; listed by `skip_giants` (on one rank, at the
    /// first absorb after `link_local`).
    active: Option<Vec<u32>>,
    /// The roots of the local components with a cut edge read, and their labels before the
    /// round's cut edges were absorbed.
    boundary: Vec<u32>,
    before: Vec<u64>,
    /// Per own vertex, for the roots of boundary components: whether the component's label is
    /// a root for the rest of the round's shortcutting (as kernels/cc.cu's `chain_end`).
    done: Vec<AtomicBool>,
}

/// `sent` entries: nothing sent yet, or never sent (an own vertex in the giant, or one the
/// asking rank does not read).
const NONE_SENT: u64 = u64::MAX;
/// A chain end's flag: the label is a root (a shortcut step's answer final).
const FINAL: u64 = 1 << 63;
const NEVER: u64 = u64::MAX - 1;
/// `ghost_giant` values: a ghost in the giant of a rank whose giant is joined to this rank's,
/// or of another.
pub(super) const SAME_GIANT: u8 = 2;
pub(super) const OTHER_GIANT: u8 = 1;

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
            ghost_labels: vec![u64::MAX; rows.ghosts.ids.len()],
            changed_ghosts: vec![false; rows.ghosts.ids.len()],
            sent: vec![NONE_SENT; rows.ghosts.send_local.len()],
            giant: None,
            ghost_giant: vec![0; rows.ghosts.ids.len()],
            giant_labels: Vec::new(),
            handed: Vec::new(),
            active: None,
            boundary: Vec::new(),
            before: Vec::new(),
            done: (0..n).map(|_| AtomicBool::new(false)).collect(),
        }
    }

    /// A labeller of the components of the edges `mask` marks.
    pub fn masked(rows: &'a LocalRows, first: u64, mask: EdgeMask<'a>) -> Self {
        CpuLabeller {
            mask: Some(mask),
            ..CpuLabeller::new(rows, first)
        }
    }

    /// Lower the component label of own vertex `v` to `label`.
    fn lower(&self, v: u32, label: u64) {
        let root = self.parent[v as usize].load(Relaxed) as usize;
        self.comp_min[root].fetch_min(label, Relaxed);
    }

    /// Where the label chain from vertex `l` (each label names a vertex, whose own label is
    /// the next) leaves this rank's vertices, or the root it ends at here; `FINAL` set where
    /// that is a root (here, or after a component that is done). kernels/cc.cu's `chain_end`.
    fn chain_end(&self, mut l: u64) -> u64 {
        let mut final_ = false;
        while self.owns(l) {
            let root = self.parent[(l - self.first) as usize].load(Relaxed) as usize;
            let next = self.comp_min[root].load(Relaxed);
            if next == l {
                return l | FINAL;
            }
            final_ = self.done[root].load(Relaxed);
            l = next;
        }
        match final_ {
            true => l | FINAL,
            false => l,
        }
    }

    /// Whether vertex `l` is this rank's.
    fn owns(&self, l: u64) -> bool {
        l.wrapping_sub(self.first) < self.rows.local_n() as u64
    }

    /// The cut edges to read: all but those of the giant (except to a ghost of a rank whose
    /// giant is of another class), and those the mask drops.
    fn active_edges(&self) -> Vec<u32> {
        let (rows, parent, kinds, mask) = (self.rows, &self.parent, &self.ghost_giant, self.mask);
        let giant = self.giant.unwrap_or(u32::MAX);
        let any_other = kinds.par_iter().any(|&k| k == OTHER_GIANT);
        // Row by row: a giant row is not even looked at unless ghosts of another class exist.
        (0..rows.local_n())
            .into_par_iter()
            .flat_map_iter(|u| {
                let cuts = rows.cut_offsets[u] as usize..rows.cut_offsets[u + 1] as usize;
                let whole = parent[u].load(Relaxed) != giant;
                let look = match whole || any_other {
                    true => cuts,
                    false => 0..0,
                };
                look.filter(move |&i| {
                    let read = whole || kinds[rows.cut_ghost[i] as usize] == OTHER_GIANT;
                    read && mask.is_none_or(|m| m.cut[i])
                })
                .map(|i| i as u32)
            })
            .collect()
    }

    /// The roots of the local components with a cut edge read (ascending).
    fn boundary_roots(&self, active: &[u32]) -> Vec<u32> {
        let (parent, cut_own) = (&self.parent, &self.rows.cut_own);
        let mut roots: Vec<u32> = active
            .par_iter()
            .map(|&i| parent[cut_own[i as usize] as usize].load(Relaxed))
            .collect();
        roots.par_sort_unstable();
        roots.dedup();
        roots
    }

    /// Per ghost, whether a cut edge of `active` reaches it.
    fn ghosts_read(&self, active: &[u32]) -> Vec<bool> {
        let read: Vec<AtomicBool> = (0..self.rows.ghosts.ids.len())
            .map(|_| AtomicBool::new(false))
            .collect();
        let cut_ghost = &self.rows.cut_ghost;
        active
            .par_iter()
            .for_each(|&i| read[cut_ghost[i as usize] as usize].store(true, Relaxed));
        read.into_iter().map(AtomicBool::into_inner).collect()
    }

    /// Hand the ghosts in giants their owners' giant labels where these changed.
    fn hand_giant_labels(&mut self) {
        let mut at = 0;
        for (s, &count) in self.rows.ghosts.recv_counts.iter().enumerate() {
            let run = at..at + count;
            at += count;
            let label = self.giant_labels.get(s).copied().unwrap_or(u64::MAX);
            if label == u64::MAX || self.handed[s] == label {
                continue;
            }
            self.handed[s] = label;
            self.ghost_labels[run.clone()]
                .par_iter_mut()
                .zip(&mut self.changed_ghosts[run.clone()])
                .zip(&self.ghost_giant[run])
                .filter(|(_, &kind)| kind != 0)
                .for_each(|((ghost, changed), _)| (*ghost, *changed) = (label, true));
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
        self.sent.par_iter_mut().for_each(|s| *s = NONE_SENT);
        self.ghost_giant.par_iter_mut().for_each(|k| *k = 0);
        (self.giant, self.active) = (None, None);
        self.giant_labels.clear();
        Ok(())
    }

    fn refresh_ghosts(&mut self, world: &World) -> Result<(u64, u64)> {
        let plan = &self.rows.ghosts;
        let labels = &self.labels;
        // Only labels that changed since they were last sent, as (target ghost, label), run
        // by run in the plan's rank order.
        let mut send = Vec::new();
        let mut counts = Vec::with_capacity(world.size());
        let mut at = 0;
        for &count in &plan.send_counts {
            let run = at..at + count;
            let before = send.len();
            send.par_extend(
                plan.send_local[run.clone()]
                    .par_iter()
                    .zip(&plan.targets[run.clone()])
                    .zip(&mut self.sent[run])
                    .filter_map(|((&u, &target), sent)| {
                        let label = labels[u as usize];
                        (*sent != NEVER && std::mem::replace(sent, label) != label)
                            .then_some(Pair(u64::from(target), label))
                    }),
            );
            counts.push(send.len() - before);
            at += count;
        }
        let received = world.alltoallv(&send, &counts)?;
        self.changed_ghosts.par_iter_mut().for_each(|c| *c = false);
        self.hand_giant_labels();
        // A ghost a label came for is not in a giant (the first refresh sends every other
        // ghost read).
        for p in received {
            self.ghost_labels[p.0 as usize] = p.1;
            self.changed_ghosts[p.0 as usize] = true;
            self.ghost_giant[p.0 as usize] = 0;
        }
        Ok((send.len() as u64, 16 * send.len() as u64))
    }

    fn absorb_cut_edges(&mut self) -> Result<bool> {
        if self.active.is_none() {
            let active = self.active_edges();
            self.boundary = self.boundary_roots(&active);
            self.active = Some(active);
        }
        self.before = self
            .boundary
            .par_iter()
            .map(|&r| self.comp_min[r as usize].load(Relaxed))
            .collect();
        let (rows, parent, min) = (self.rows, &self.parent, &self.comp_min);
        let (ghost_labels, changed) = (&self.ghost_labels, &self.changed_ghosts);
        let active = self.active.as_deref().unwrap_or_default();
        let fell = AtomicBool::new(false);
        // Only cut edges to ghosts whose label changed: what the others gave is already in
        // `comp_min`, which only falls.
        active
            .par_iter()
            .map(|&i| (rows.cut_own[i as usize], rows.cut_ghost[i as usize]))
            .filter(|&(_, g)| changed[g as usize])
            .for_each(|(u, g)| {
                let (root, label) = (parent[u as usize].load(Relaxed), ghost_labels[g as usize]);
                let min = &min[root as usize];
                // A read first: most edges lower nothing, and a failed fetch_min still writes.
                if label < min.load(Relaxed) {
                    min.fetch_min(label, Relaxed);
                    fell.store(true, Relaxed);
                }
            });
        Ok(fell.into_inner())
    }

    fn hook_trees(&mut self, world: &World, part: &Block1D) -> Result<u64> {
        // A new round's trees: no component is known to point at a root.
        let done = &self.done;
        self.boundary
            .par_iter()
            .for_each(|&root| done[root as usize].store(false, Relaxed));
        let hooks: Vec<Pair> = self
            .boundary
            .par_iter()
            .zip(&self.before)
            .filter_map(|(&root, &before)| {
                let after = self.comp_min[root as usize].load(Relaxed);
                (after < before && before != part.global(root as usize))
                    .then_some(Pair(before, after))
            })
            .collect();
        let received = world.route(&hooks, |h| part.owner(h.0))?;
        received.par_iter().for_each(|h| {
            self.lower(part.local(h.0) as u32, h.1);
        });
        Ok(16 * remote(part, hooks.iter().map(|h| h.0)))
    }

    fn shortcut(&mut self, world: &World, part: &Block1D) -> Result<(bool, u64)> {
        // Every boundary component's chain end, from the labels and flags before the step.
        let (comp_min, done) = (&self.comp_min, &self.done);
        let ends: Vec<u64> = self
            .boundary
            .par_iter()
            .map(|&root| {
                let label = comp_min[root as usize].load(Relaxed);
                match done[root as usize].load(Relaxed) {
                    true => label | FINAL,
                    false => self.chain_end(label),
                }
            })
            .collect();
        // The ends not final are other ranks' vertices: each is asked once (many components
        // point at one label, a giant's).
        let mut asked: Vec<u64> = ends
            .par_iter()
            .copied()
            .filter(|&e| e & FINAL == 0)
            .collect();
        asked.par_sort_unstable();
        asked.dedup();
        let any = world.allreduce(asked.len() as u64, Op::Sum) > 0;
        let answers = match any {
            true => world.query(&asked, |l| part.owner(l), |l| self.chain_end(l))?,
            false => Vec::new(),
        };
        self.boundary
            .par_iter()
            .zip(&ends)
            .for_each(|(&root, &end)| {
                let end = match end & FINAL {
                    0 => answers[asked.binary_search(&end).expect("asked")],
                    _ => end,
                };
                comp_min[root as usize].fetch_min(end & !FINAL, Relaxed);
                if end & FINAL != 0 {
                    done[root as usize].store(true, Relaxed);
                }
            });
        Ok((any, 16 * asked.len() as u64))
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

    fn rows(&self) -> &LocalRows {
        self.rows
    }

    fn cut_edges(&mut self, picks: &[usize]) -> Result<Vec<(u32, u32)>> {
        let rows = self.rows;
        Ok(picks
            .iter()
            .map(|&i| (rows.cut_own[i], rows.cut_ghost[i]))
            .collect())
    }

    fn roots_of(&mut self, vertices: &[u32]) -> Result<Vec<u32>> {
        Ok(vertices
            .iter()
            .map(|&v| self.parent[v as usize].load(Relaxed))
            .collect())
    }

    fn giant(&mut self) -> Result<Option<u32>> {
        let n = self.rows.local_n() as u64;
        let sample: Vec<u32> = (0..SAMPLE_VERTICES.min(n))
            .map(|i| (i * 2_654_435_761 % n) as u32)
            .collect();
        Ok(most_frequent(self.roots_of(&sample)?))
    }

    fn lower_component(&mut self, root: u32, label: u64) -> Result<()> {
        self.comp_min[root as usize].fetch_min(label, Relaxed);
        Ok(())
    }

    fn root_label(&mut self, root: u32) -> Result<u64> {
        Ok(self.comp_min[root as usize].load(Relaxed))
    }

    fn skip_giants(
        &mut self,
        world: &World,
        root: Option<u32>,
        joined: &[bool],
        labels: &[u64],
    ) -> Result<u64> {
        self.giant = root;
        if let Some(root) = root {
            let parent = &self.parent;
            self.sent
                .par_iter_mut()
                .zip(&self.rows.ghosts.send_local)
                .filter(|(_, &u)| parent[u as usize].load(Relaxed) == root)
                .for_each(|(sent, _)| *sent = NEVER);
        }
        let mut at = 0;
        for (s, &count) in self.rows.ghosts.recv_counts.iter().enumerate() {
            let kind = match (labels[s], joined[s]) {
                (u64::MAX, _) => 0,
                (_, true) => SAME_GIANT,
                (_, false) => OTHER_GIANT,
            };
            self.ghost_giant[at..at + count].fill(kind);
            at += count;
        }
        let active = self.active_edges();
        self.boundary = self.boundary_roots(&active);
        let read = self.ghosts_read(&active);
        self.active = Some(active);
        // A ghost no edge reads takes no giant label either.
        self.ghost_giant
            .par_iter_mut()
            .zip(&read)
            .filter(|(_, &r)| !r)
            .for_each(|(kind, _)| *kind = 0);
        let (wanted, bytes) = self.rows.ghosts.ask_owners(world, &read)?;
        self.sent
            .par_iter_mut()
            .zip(wanted)
            .filter(|(_, w)| !w)
            .for_each(|(sent, _)| *sent = NEVER);
        self.giant_labels = labels.to_vec();
        self.handed = vec![u64::MAX; labels.len()];
        Ok(bytes)
    }

    fn giant_labels(&mut self, labels: &[u64]) {
        self.giant_labels = labels.to_vec();
    }

    fn giant_reports(&mut self) -> Result<Vec<u64>> {
        let recv = &self.rows.ghosts.recv_counts;
        let ranks = recv.len();
        let starts = crate::comm::run_starts(recv);
        let (rows, parent, min) = (self.rows, &self.parent, &self.comp_min);
        let (kinds, ghost_labels) = (&self.ghost_giant, &self.ghost_labels);
        let active = self.active.as_deref().unwrap_or_default();
        Ok(active
            .par_iter()
            .map(|&i| {
                (
                    rows.cut_own[i as usize],
                    rows.cut_ghost[i as usize] as usize,
                )
            })
            .filter(|&(_, g)| kinds[g] != 0)
            .fold(
                || vec![u64::MAX; ranks],
                |mut reports, (u, g)| {
                    let label = min[parent[u as usize].load(Relaxed) as usize].load(Relaxed);
                    if label < ghost_labels[g] {
                        let owner = starts.partition_point(|&s| s <= g) - 1;
                        reports[owner] = reports[owner].min(label);
                    }
                    reports
                },
            )
            .reduce(
                || vec![u64::MAX; ranks],
                |a, b| a.iter().zip(&b).map(|(x, y)| *x.min(y)).collect(),
            ))
    }
}
