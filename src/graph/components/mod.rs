//! Connected-component labelling across ranks, on the 1D partition: each vertex labelled with
//! the smallest global id in its component. Used by `cc` (the workload) and by spin's cluster
//! updates on graphs (`spin::graph`, through an `EdgeMask` of active bonds).
//!
//! Algorithm (spec: components.md; after Weigel (2011), "Connected component identification and
//! cluster update on GPU", Phys. Rev. E 84, 036709): each rank splits its rows into local edges and
//! cut edges (`graph::ghosts`). Local step: union-find over the local edges (`cpu`: lock-free
//! over rayon threads; `gpu`: ECL-CC-style hooking with intermediate pointer jumping and
//! Afforest's neighbour sampling, kernels/cc.cu), each local component labelled with its
//! smallest id. Across ranks, Shiloach-Vishkin on the graph of local components, a label
//! being a pointer to the vertex of that id (label(x) <= x always, so the pointers form a
//! forest whose roots label themselves). Each round:
//! - ghosts' labels are refreshed from their owners (one all-to-all in a fixed order), and
//!   each local component takes the smallest label over its cut edges (hooking on edges);
//! - tree hooking: a component whose label fell from L to m sends (L, m) to L's owner, which
//!   lowers the label of the component holding vertex L to m, so whole trees join at once;
//! - shortcutting: each component with a cut edge asks the owner of its label L for L's own
//!   label and takes it, repeated until no component anywhere changes.
//!
//! Rounds end when no label changes anywhere. Then every cut edge joins equal labels and every
//! label labels itself, so a component's label is a vertex that labels itself; the smallest
//! vertex of the component does (its label is at most itself and in its component), hence
//! every label is the component's smallest id. Hooking and shortcutting bound the rounds by
//! the logarithm of the component graph's diameter, where min-label propagation alone needs
//! the diameter itself (57 rounds on a sparse G(n, m) at 2 ranks before).

pub mod cpu;
pub mod gpu;

use crate::comm::{Op, Pair, World};
use crate::error::Result;
use crate::graph::Block1D;
use rayon::prelude::*;
use std::time::Instant;

/// The device half of the labelling (`cpu` or `gpu`): the same steps on either. Local
/// components are named by their roots (local indices); a vertex's component label is its
/// root's.
pub trait Labeller {
    /// Label each own vertex with the smallest global id of its component over local edges.
    fn link_local(&mut self) -> Result<()>;
    /// The roots of the local components with a cut edge (after `link_local`).
    fn boundary_roots(&mut self) -> Result<Vec<u32>>;
    /// Refresh the ghosts' labels from their owners (collective); returns bytes sent.
    fn refresh_ghosts(&mut self, world: &World) -> Result<u64>;
    /// Lower each local component's label to the smallest ghost label over its cut edges.
    fn absorb_cut_edges(&mut self) -> Result<()>;
    /// The component labels of own vertices (local indices).
    fn component_labels(&mut self, vertices: &[u32]) -> Result<Vec<u64>>;
    /// Lower the component label of each `vertices[i]` to `labels[i]` where that is smaller.
    fn lower(&mut self, vertices: &[u32], labels: &[u64]) -> Result<()>;
    /// Hand each vertex its component's label; returns how many own vertices changed.
    fn relabel(&mut self) -> Result<u64>;
    /// The own vertices' labels, on the host.
    fn labels(&self) -> Result<Vec<u64>>;
}

/// One round of the label exchange, over all ranks.
#[derive(Clone, Copy, Default)]
pub struct Round {
    pub changed: u64,
    pub bytes: u64,
    /// Shortcutting steps (queries of the labels' own labels) in the round.
    pub shortcuts: u32,
    pub seconds: f64,
}

/// One run of the labelling: its local step and rounds.
pub struct Labelling {
    pub local_seconds: f64,
    pub seconds: f64,
    pub rounds: Vec<Round>,
}

/// Label the components (collective); `part` places the vertices (a label is a vertex id).
pub fn label_components(
    world: &World,
    part: &Block1D,
    labeller: &mut dyn Labeller,
) -> Result<Labelling> {
    world.barrier();
    let started = Instant::now();
    labeller.link_local()?;
    world.barrier();
    let local_seconds = started.elapsed().as_secs_f64();
    // The boundary components, listed on the first round that hooks and shortcuts.
    let mut boundary: Option<Vec<u32>> = None;
    let mut rounds: Vec<Round> = Vec::new();
    loop {
        let t = Instant::now();
        let hooking = slow_decay(&rounds);
        if hooking && boundary.is_none() {
            boundary = Some(labeller.boundary_roots()?);
        }
        let boundary = boundary.as_deref().filter(|_| hooking);
        let before = match boundary {
            Some(b) => labeller.component_labels(b)?,
            None => Vec::new(),
        };
        let mut bytes = labeller.refresh_ghosts(world)?;
        labeller.absorb_cut_edges()?;
        let mut shortcuts = 0;
        if let Some(boundary) = boundary {
            let absorbed = labeller.component_labels(boundary)?;
            bytes += hook_trees(world, part, labeller, boundary, &before, &absorbed)?;
            let (steps, shortcut_bytes) = shortcut(world, part, labeller, boundary)?;
            (shortcuts, bytes) = (steps, bytes + shortcut_bytes);
        }
        let changed = world.allreduce(labeller.relabel()?, Op::Sum);
        rounds.push(Round {
            changed,
            bytes: world.allreduce(bytes, Op::Sum),
            shortcuts,
            seconds: t.elapsed().as_secs_f64(),
        });
        log::debug!(
            "cc: round {}: {changed} labels changed, {shortcuts} shortcut steps",
            rounds.len()
        );
        if changed == 0 {
            break;
        }
    }
    Ok(Labelling {
        local_seconds,
        seconds: started.elapsed().as_secs_f64(),
        rounds,
    })
}

/// Whether the next round should hook and shortcut: after two rounds of plain propagation
/// in which the labels changed did not fall at least fourfold (a long component graph).
/// Where they do (a giant component and short paths, as in Kronecker graphs) propagation
/// ends in a few rounds that stay on the device, while hooking and shortcutting pass over
/// every boundary component on the host each round.
fn slow_decay(rounds: &[Round]) -> bool {
    match rounds {
        [.., before, last] => last.shortcuts > 0 || last.changed * 4 > before.changed,
        _ => false,
    }
}

/// Tree hooking: each boundary component whose label fell from `before[i]` to `after[i]`
/// lowers the component holding vertex `before[i]` (at its owner) to `after[i]`, unless that
/// is the component itself (its own root's id: already lowered). Collective; returns the
/// bytes this rank sent.
fn hook_trees(
    world: &World,
    part: &Block1D,
    labeller: &mut dyn Labeller,
    boundary: &[u32],
    before: &[u64],
    after: &[u64],
) -> Result<u64> {
    let hooks: Vec<Pair> = boundary
        .par_iter()
        .zip(before)
        .zip(after)
        .filter(|&((&root, &b), &a)| a < b && b != part.global(root as usize))
        .map(|((_, &b), &a)| Pair(b, a))
        .collect();
    let received = world.route(&hooks, |h| part.owner(h.0))?;
    let vertices: Vec<u32> = received.iter().map(|h| part.local(h.0) as u32).collect();
    let labels: Vec<u64> = received.iter().map(|h| h.1).collect();
    labeller.lower(&vertices, &labels)?;
    Ok(remote_bytes(world, part, hooks.iter().map(|h| h.0), 16))
}

/// Shortcutting: each boundary component takes the label of the vertex its label names,
/// until no component anywhere changes. Collective; returns the steps and the bytes this
/// rank sent.
fn shortcut(
    world: &World,
    part: &Block1D,
    labeller: &mut dyn Labeller,
    boundary: &[u32],
) -> Result<(u32, u64)> {
    let (mut steps, mut bytes) = (0, 0);
    loop {
        let labels = labeller.component_labels(boundary)?;
        let asked = distinct_pointers(part, boundary, &labels);
        let answers = world.query_batch(
            &asked,
            |l| part.owner(l),
            |keys| {
                let local: Vec<u32> = keys.iter().map(|&l| part.local(l) as u32).collect();
                labeller.component_labels(&local)
            },
        )?;
        bytes += remote_bytes(world, part, asked.iter().copied(), 16);
        let (vertices, lower): (Vec<u32>, Vec<u64>) = boundary
            .iter()
            .zip(&labels)
            .filter_map(|(&v, l)| {
                let jumped = answers[asked.binary_search(l).ok()?];
                (jumped < *l).then_some((v, jumped))
            })
            .unzip();
        steps += 1;
        if world.allreduce(vertices.len() as u64, Op::Sum) == 0 {
            return Ok((steps, bytes));
        }
        labeller.lower(&vertices, &lower)?;
    }
}

/// The labels that point at another component (not their own root's id), each once, in
/// order. Neighbouring components mostly share a label, so runs are dropped before the sort.
fn distinct_pointers(part: &Block1D, boundary: &[u32], labels: &[u64]) -> Vec<u64> {
    let points_away = |i: usize| labels[i] != part.global(boundary[i] as usize);
    let mut asked: Vec<u64> = (0..labels.len())
        .into_par_iter()
        .filter(|&i| {
            points_away(i) && (i == 0 || labels[i - 1] != labels[i] || !points_away(i - 1))
        })
        .map(|i| labels[i])
        .collect();
    asked.par_sort_unstable();
    asked.dedup();
    asked
}

/// Bytes of `per_item` each for the items whose vertex another rank owns.
fn remote_bytes(
    world: &World,
    part: &Block1D,
    vertices: impl Iterator<Item = u64>,
    per_item: u64,
) -> u64 {
    let me = world.rank();
    per_item * vertices.filter(|&v| part.owner(v) != me).count() as u64
}
