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
//! forest whose roots label themselves). Each round, every step on the device that holds the
//! labels (the GPU's exchanges go GPU to GPU through `comm::gpu`, NCCL or staged MPI):
//! - refresh: each owner sends the labels of its vertices that other ranks hold as ghosts,
//!   only those that changed since it last sent them, as (ghost, label);
//! - hooking on edges: each local component takes the smallest label over its cut edges to
//!   ghosts whose label came in;
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

use crate::comm::{Op, World};
use crate::error::Result;
use crate::graph::Block1D;
use std::time::Instant;

/// The device half of the labelling (`cpu` or `gpu`): the same steps on either. Local
/// components are named by their roots (local indices); a vertex's component label is its
/// root's. Each collective step returns the bytes this rank sent to other ranks.
pub trait Labeller {
    /// Label each own vertex with the smallest global id of its component over local edges;
    /// list the components with a cut edge; forget what was sent before.
    fn link_local(&mut self) -> Result<()>;
    /// Send the own labels that other ranks hold as ghosts and that changed since last sent;
    /// take in the ghosts' (collective).
    fn refresh_ghosts(&mut self, world: &World) -> Result<u64>;
    /// Lower each local component's label to the smallest ghost label over its cut edges to
    /// ghosts whose label came in (remembering the labels before, for `hook_trees`).
    fn absorb_cut_edges(&mut self) -> Result<()>;
    /// Tree hooking: each component whose label fell from L to m lowers the component of
    /// vertex L, at its owner, to m (collective).
    fn hook_trees(&mut self, world: &World, part: &Block1D) -> Result<u64>;
    /// One shortcutting step: each component with a cut edge takes the label of the vertex
    /// its label names (collective); returns how many labels fell here, and the bytes.
    fn shortcut(&mut self, world: &World, part: &Block1D) -> Result<(u64, u64)>;
    /// Hand each vertex its component's label; returns how many own vertices changed.
    fn relabel(&mut self) -> Result<u64>;
    /// The own vertices' labels, on the host.
    fn labels(&self) -> Result<Vec<u64>>;
}

/// One round of the label exchange, over all ranks.
#[derive(Clone, Copy, Default)]
pub struct Round {
    pub changed: u64,
    /// Bytes sent between ranks, summed over ranks.
    pub bytes: u64,
    /// Shortcutting steps (queries of the labels' own labels) in the round.
    pub shortcuts: u32,
    pub seconds: f64,
}

/// The phases of the rounds, their seconds summed over the rounds (on rank 0).
#[derive(Clone, Copy, Default)]
pub struct Phases {
    pub refresh: f64,
    pub absorb: f64,
    pub hook: f64,
    pub shortcut: f64,
    pub relabel: f64,
}

/// One run of the labelling: its local step and rounds.
pub struct Labelling {
    pub local_seconds: f64,
    pub seconds: f64,
    pub rounds: Vec<Round>,
    pub phases: Phases,
}

/// Seconds since `*mark`, which moves on to now.
fn lap(mark: &mut Instant) -> f64 {
    let now = Instant::now();
    let seconds = (now - *mark).as_secs_f64();
    *mark = now;
    seconds
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
    let mut rounds: Vec<Round> = Vec::new();
    let mut p = Phases::default();
    loop {
        let t = Instant::now();
        let mut mark = t;
        let mut bytes = labeller.refresh_ghosts(world)?;
        p.refresh += lap(&mut mark);
        labeller.absorb_cut_edges()?;
        p.absorb += lap(&mut mark);
        bytes += labeller.hook_trees(world, part)?;
        p.hook += lap(&mut mark);
        let mut shortcuts = 0;
        loop {
            let (lowered, sent) = labeller.shortcut(world, part)?;
            (shortcuts, bytes) = (shortcuts + 1, bytes + sent);
            if world.allreduce(lowered, Op::Sum) == 0 {
                break;
            }
        }
        p.shortcut += lap(&mut mark);
        let changed = world.allreduce(labeller.relabel()?, Op::Sum);
        p.relabel += lap(&mut mark);
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
        phases: p,
    })
}

/// How many of `vertices` another rank owns.
fn remote(part: &Block1D, vertices: impl Iterator<Item = u64>) -> u64 {
    vertices.filter(|&v| part.owner(v) != part.rank).count() as u64
}
