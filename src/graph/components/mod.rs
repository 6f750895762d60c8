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
//! forest whose roots label themselves). First, Afforest's giant-component skip across ranks
//! (`join_giants`): each rank's giant local component takes the smallest label of the giants
//! found joined to it. From then on the giants' vertices are never refreshed one by one (the
//! giant's label, one per rank, stands for all of them at their ghosts) and the giants' cut
//! edges are not read (most of a Kronecker graph's cut edges), but those to a rank whose giant
//! is of another class: an edge to a joined giant joins two vertices known to be in one
//! component, and an edge to a vertex outside the giants is read from that vertex's side,
//! which reports the labels below the giant's it holds. Only the labels some rank reads
//! travel: the owners learn which from a bitmask per rank before the rounds. After each round's steps each giant takes the
//! smallest label reported for it, then the smallest among its class (`sync_giants`), so the
//! unread edges join equal labels in the end.
//! Then rounds, every step of them on the device that holds the labels (the GPU's exchanges
//! go GPU to GPU through `comm::gpu`, NCCL or staged MPI):
//! - refresh: each owner sends the labels of its vertices that other ranks read as ghosts
//!   (as they told it before the rounds: `skip_giants`), only those that changed since it
//!   last sent them, as (ghost, label), its giant's apart;
//! - hooking on edges: each local component takes the smallest label over its cut edges to
//!   ghosts whose label came in;
//! - tree hooking: a component whose label fell from L to m sends (L, m) to L's owner, which
//!   lowers the label of the component holding vertex L to m, so whole trees join at once;
//! - shortcutting: pointer jumping, a label L naming vertex L, whose own label is L's parent.
//!   Each component with a cut edge that is not done follows its label's chain through its
//!   rank's vertices; where the chain ends at a root (there, or after a component already
//!   done, whose label is a root) it takes the end and is done, else it asks the owner of the
//!   other rank's vertex L the chain reached; the owner follows L's chain through its own
//!   vertices likewise and answers where it ends, and whether that is final. Repeated until no
//!   rank asks (each rank asks each distinct L once, however many of its components point at
//!   it): chains within a rank cost no step, and the step that confirmed that nothing fell
//!   any more is gone (roots stay roots while shortcutting). A step depends only on the
//!   labels and flags before it, so CPU and GPU take the same steps.
//!
//! Rounds end when no label changes anywhere. Then every cut edge read joins equal labels
//! (each saw the other end's last label), and so does every skipped one (joined giants'
//! labels are equal after the sync; a giant is at most the label of every component across
//! its unread edges, since that component reported any lower one, and at least it, since the
//! component read the giant's label over the same edge), so all vertices of a component share one label; a label
//! is always a vertex of the component and at most the vertex it labels, so that of the
//! component's smallest vertex, hence all, is the component's smallest id. Hooking and shortcutting bound the rounds by
//! the logarithm of the component graph's diameter, where min-label propagation alone needs
//! the diameter itself (57 rounds on a sparse G(n, m) at 2 ranks before).

pub mod cpu;
pub mod gpu;

use crate::comm::{Op, World};
use crate::error::Result;
use crate::graph::ghosts::LocalRows;
use crate::graph::Block1D;
use std::time::Instant;

/// The device half of the labelling (`cpu` or `gpu`): the same steps on either. Local
/// components are named by their roots (local indices); a vertex's component label is its
/// root's. Each collective step returns the bytes this rank sent to other ranks.
pub trait Labeller {
    /// Label each own vertex with the smallest global id of its component over local edges;
    /// list the components with a cut edge; forget what was sent before.
    fn link_local(&mut self) -> Result<()>;
    /// Send the own labels that other ranks read as ghosts and that changed since last sent;
    /// take in the ghosts' (collective). Returns how many labels this rank sent, and the bytes.
    fn refresh_ghosts(&mut self, world: &World) -> Result<(u64, u64)>;
    /// Lower each local component's label to the smallest ghost label over its cut edges to
    /// ghosts whose label came in (remembering the labels before, for `hook_trees`); returns
    /// whether a label fell here.
    fn absorb_cut_edges(&mut self) -> Result<bool>;
    /// Tree hooking: each component whose label fell from L to m lowers the component of
    /// vertex L, at its owner, to m (collective). Starts the round's shortcutting: no
    /// component is done.
    fn hook_trees(&mut self, world: &World, part: &Block1D) -> Result<u64>;
    /// One shortcutting step (collective): each component with a cut edge that is not yet
    /// done follows its label's chain (a label names a vertex, whose own label is the next)
    /// through this rank's vertices, to a root (done) or to another rank's vertex, whose owner
    /// answers where the chain leaves its own vertices, final at a root of its own (done).
    /// Returns whether any rank asked (if none, the round's shortcutting is over: every
    /// component with a cut edge points at a root), and the bytes.
    fn shortcut(&mut self, world: &World, part: &Block1D) -> Result<(bool, u64)>;
    /// Hand each vertex its component's label; returns how many own vertices changed.
    fn relabel(&mut self) -> Result<u64>;
    /// The own vertices' labels, on the host.
    fn labels(&self) -> Result<Vec<u64>>;
    /// The rank's rows (local edges, cut edges, ghosts; see `LocalRows` for a GPU's).
    fn rows(&self) -> &LocalRows;
    /// Cut edges number `picks` (in row order): their own vertices and ghosts.
    fn cut_edges(&mut self, picks: &[usize]) -> Result<Vec<(u32, u32)>>;
    /// The roots of own vertices' local components (after `link_local`).
    fn roots_of(&mut self, vertices: &[u32]) -> Result<Vec<u32>>;
    /// The root of the local component most of a sample of vertices fall in (the giant
    /// component's, on the graphs labelled here), if the rank has vertices.
    fn giant(&mut self) -> Result<Option<u32>>;
    /// Lower the label of the local component rooted at `root` to `label` (not yet handed to
    /// its vertices: `relabel` does that).
    fn lower_component(&mut self, root: u32, label: u64) -> Result<()>;
    /// The label of the local component rooted at `root`.
    fn root_label(&mut self, root: u32) -> Result<u64>;
    /// Afforest's skip across ranks, after `join_giants` (before the first refresh; collective):
    /// `root` is this rank's giant local component, `joined[s]` whether rank s's giant is
    /// joined to it, `labels[s]` rank s's giant label (u64::MAX: none). Lists the cut edges
    /// read from now on: all but the giant's, except those to a ghost of a rank whose giant is
    /// not joined to it (`sync_giants` keeps the joined giants' labels equal; an edge from the
    /// giant to any other vertex is read from that vertex's side, see `giant_reports`). Then
    /// only labels someone reads travel: each rank tells the owners the ghosts its listed
    /// edges reach (a bitmask per owner), and an owner never sends the others, nor its giant's
    /// vertices (their giant's label, `giant_labels`, stands for them at the ghosts). The
    /// first refresh sends every label read: a ghost read that no label came for is in its
    /// owner's giant. Returns the bytes this rank sent.
    fn skip_giants(
        &mut self,
        world: &World,
        root: Option<u32>,
        joined: &[bool],
        labels: &[u64],
    ) -> Result<u64>;
    /// Each rank's giant label after the round: the ghosts in giants take them at the next
    /// refresh.
    fn giant_labels(&mut self, labels: &[u64]);
    /// Per rank s, the smallest label of this rank's components below the label of a ghost in
    /// s's giant they have a cut edge to (u64::MAX: none). The giant does not read its cut
    /// edges to them (`skip_giants`): these reports lower it instead (`sync_giants`).
    fn giant_reports(&mut self) -> Result<Vec<u64>>;
}

/// Vertices whose roots are sampled to find the giant component.
pub const SAMPLE_VERTICES: u64 = 1024;

/// The value most frequent in `values` (ties: the smallest), if any.
pub fn most_frequent(values: Vec<u32>) -> Option<u32> {
    let mut counts: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    for v in values {
        *counts.entry(v).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|&(v, count)| (count, std::cmp::Reverse(v)))
        .map(|(v, _)| v)
}

/// Cut edges probed per rank for the ghosts of its giant component.
const GIANT_PROBES: usize = 64;

/// The giants joined before the rounds: this rank's giant root and each rank's class (the
/// smallest rank whose giant is joined to its).
struct Giants {
    root: Option<u32>,
    class: Vec<usize>,
}

impl Giants {
    /// Each rank's label lowered to the smallest over its class (`labels[s]`: rank s's).
    fn class_minima(&self, labels: &[u64]) -> Vec<u64> {
        let class = &self.class;
        (0..class.len())
            .map(|r| {
                (0..class.len())
                    .filter(|&s| class[s] == class[r])
                    .map(|s| labels[s])
                    .min()
                    .unwrap_or(u64::MAX)
            })
            .collect()
    }
}

/// Afforest's giant-component skip across ranks: before the rounds, each rank's giant local
/// component takes the smallest label of the giants joined to it. Giants found joined (a
/// probed cut edge from one to a vertex of another, asked of its owner) are in one component,
/// so the label is a valid pointer; the giants' boundary vertices are then never refreshed
/// and the cut edges between joined giants never read (`Labeller::skip_giants`), their
/// labels kept equal by `sync_giants` each round. Collective; returns how many ranks' giants
/// took a smaller label, the classes, and the bytes this rank sent in `skip_giants`; `phases`
/// takes the seconds of its parts.
fn join_giants(
    world: &World,
    part: &Block1D,
    labeller: &mut dyn Labeller,
    phases: &mut GiantsPhases,
) -> Result<(u64, Giants, u64)> {
    let ranks = world.size();
    let mut mark = Instant::now();
    let giant = labeller.giant()?;
    phases.find = lap(&mut mark);
    let none = u64::MAX;
    let giants = world.allgather(giant.map_or(none, |g| part.global(g as usize)));
    let pairs = probe_giants(world, part, labeller, giant, &giants)?;
    let mut class: Vec<usize> = (0..ranks).collect();
    fn find(class: &mut [usize], mut r: usize) -> usize {
        while class[r] != r {
            class[r] = class[class[r]];
            r = class[r];
        }
        r
    }
    for pair in world.allgatherv(&pairs)? {
        let (a, b) = (
            find(&mut class, pair as usize / ranks),
            find(&mut class, pair as usize % ranks),
        );
        class[a.max(b)] = a.min(b);
    }
    let class: Vec<usize> = (0..ranks).map(|r| find(&mut class, r)).collect();
    let me = world.rank();
    let joined: Vec<bool> = (0..ranks)
        .map(|s| s != me && class[s] == class[me])
        .collect();
    let giants_now = Giants { root: giant, class };
    let labels = giants_now.class_minima(&giants);
    phases.probe = lap(&mut mark);
    let lowered = match giant {
        Some(g) if labels[me] < giants[me] => {
            labeller.lower_component(g, labels[me])?;
            1
        }
        _ => 0,
    };
    let bytes = labeller.skip_giants(world, giant, &joined, &labels)?;
    phases.skip = lap(&mut mark);
    labeller.relabel()?;
    phases.relabel = lap(&mut mark);
    Ok((world.allreduce(lowered, Op::Sum), giants_now, bytes))
}

/// Probe up to `GIANT_PROBES` cut edges of this rank's giant at the ghosts' owners (collective):
/// the pairs of ranks (me * ranks + owner) whose giants an edge joins.
fn probe_giants(
    world: &World,
    part: &Block1D,
    labeller: &mut dyn Labeller,
    giant: Option<u32>,
    giants: &[u64],
) -> Result<Vec<u64>> {
    let ranks = world.size();
    let cuts = labeller.rows().cut_count();
    let probes = GIANT_PROBES.min(cuts);
    let picks: Vec<usize> = (0..probes).map(|k| k * cuts / probes).collect();
    let (own, ghosts): (Vec<u32>, Vec<u32>) = labeller.cut_edges(&picks)?.into_iter().unzip();
    let ids = &labeller.rows().ghosts.ids;
    let ghosts: Vec<u64> = ghosts.iter().map(|&g| ids[g as usize]).collect();
    let roots = labeller.roots_of(&own)?;
    let asked: Vec<u64> = ghosts
        .iter()
        .zip(&roots)
        .filter(|&(_, &r)| Some(r) == giant)
        .map(|(&v, _)| v)
        .collect();
    let answers = world.query_batch(
        &asked,
        |v| part.owner(v),
        |keys| {
            let local: Vec<u32> = keys.iter().map(|&v| part.local(v) as u32).collect();
            let roots = labeller.roots_of(&local)?;
            Ok(roots.iter().map(|&r| part.global(r as usize)).collect())
        },
    )?;
    let me = world.rank();
    let mut pairs: Vec<u64> = asked
        .iter()
        .zip(&answers)
        .filter(|&(&v, &root)| root == giants[part.owner(v)])
        .map(|(&v, _)| (me * ranks + part.owner(v)) as u64)
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    Ok(pairs)
}

/// After a round's steps: each giant takes the smallest label reported for it by the
/// components across its unread cut edges, then the smallest over its class (one component,
/// so valid pointers), which keeps every skipped cut edge joining equal labels at the end; the
/// labels go to the ghosts in giants (collective). Returns whether any rank's giant label fell
/// (every rank knows the same).
fn sync_giants(world: &World, giants: &Giants, labeller: &mut dyn Labeller) -> Result<bool> {
    let ranks = world.size();
    let mine = match giants.root {
        Some(root) => labeller.root_label(root)?,
        None => u64::MAX,
    };
    // One gather: per rank r, its reports for each rank s's giant, then its giant's label
    // (all[r * (ranks + 1) + s], all[r * (ranks + 1) + ranks]).
    let mut mine_all = labeller.giant_reports()?;
    mine_all.push(mine);
    let mut all = vec![0u64; ranks * (ranks + 1)];
    world.allgather_into(&mine_all, &mut all);
    let at = |r: usize, s: usize| all[r * (ranks + 1) + s];
    let reported: Vec<u64> = (0..ranks)
        .map(|s| (0..ranks).map(|r| at(r, s)).fold(at(s, ranks), u64::min))
        .collect();
    let labels = giants.class_minima(&reported);
    if let Some(root) = giants.root {
        if labels[world.rank()] < mine {
            labeller.lower_component(root, labels[world.rank()])?;
        }
    }
    labeller.giant_labels(&labels);
    Ok((0..ranks).any(|s| labels[s] < at(s, ranks)))
}

/// One round of the label exchange, over all ranks.
#[derive(Clone, Copy, Default)]
pub struct Round {
    pub changed: u64,
    /// Labels sent by the refresh, summed over ranks.
    pub labels_sent: u64,
    /// Bytes sent between ranks, summed over ranks (the first round's with those of the
    /// bitmasks `skip_giants` sends before it).
    pub bytes: u64,
    /// Shortcutting steps in the round that asked (queries of where the labels' chains end;
    /// a last gather of the queries' counts, which finds none, is not counted).
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

/// The parts of `join_giants` (seconds, rank 0): `find` the giant's root (a sample's roots),
/// `probe` the giants joined (the first collectives, so any wait for a slower rank's
/// union-find is here), `skip` the cut edges read listed and the read masks sent
/// (`Labeller::skip_giants`), `relabel` the giant's lowered label handed to its vertices.
#[derive(Clone, Copy, Default)]
pub struct GiantsPhases {
    pub find: f64,
    pub probe: f64,
    pub skip: f64,
    pub relabel: f64,
}

/// One run of the labelling: its local step and rounds.
pub struct Labelling {
    pub local_seconds: f64,
    /// The slowest rank's local union-find (`link_local`).
    pub link_seconds: f64,
    /// Rank 0's part of `local_seconds` after its local union-find: the giants joined across
    /// ranks and the cut edges read listed (`join_giants`), with any wait for a slower
    /// rank's union-find at its first collective.
    pub giants_seconds: f64,
    /// `giants_seconds` split (rank 0).
    pub giants: GiantsPhases,
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
    let linked = Instant::now();
    let link_seconds = (linked - started).as_secs_f64();
    let (mut giants, mut setup_bytes) = (None, 0);
    let mut giants_phases = GiantsPhases::default();
    if world.size() > 1 {
        let (joined, classes, bytes) = join_giants(world, part, labeller, &mut giants_phases)?;
        log::debug!("cc: {joined} ranks' giant components joined before the rounds");
        (giants, setup_bytes) = (Some(classes), bytes);
    }
    let giants_seconds = linked.elapsed().as_secs_f64();
    world.barrier();
    let local_seconds = started.elapsed().as_secs_f64();
    let mut rounds: Vec<Round> = Vec::new();
    let mut p = Phases::default();
    // Whether a label may point at a vertex that is no root (before the first shortcutting).
    let mut stale = true;
    loop {
        let t = Instant::now();
        let mut mark = t;
        let (labels_sent, sent) = labeller.refresh_ghosts(world)?;
        let mut bytes = sent + std::mem::take(&mut setup_bytes);
        p.refresh += lap(&mut mark);
        let fell = labeller.absorb_cut_edges()?;
        p.absorb += lap(&mut mark);
        bytes += labeller.hook_trees(world, part)?;
        p.hook += lap(&mut mark);
        // Every component with a cut edge points at a root after a shortcutting, so another
        // changes nothing unless a label fell since (in the absorb, hence any hook, or a
        // giant's in the sync): all ranks learn that from one reduction and skip it together.
        if !stale {
            stale = world.allreduce(u64::from(fell), Op::Max) > 0;
        }
        let mut shortcuts = 0;
        if stale {
            let sent;
            (shortcuts, sent) = shortcutting(world, part, labeller)?;
            bytes += sent;
        }
        stale = match &giants {
            Some(giants) => sync_giants(world, giants, labeller)?,
            None => false,
        };
        p.shortcut += lap(&mut mark);
        let changed = world.allreduce(labeller.relabel()?, Op::Sum);
        p.relabel += lap(&mut mark);
        // This rank's labels and bytes; summed over ranks after the rounds.
        rounds.push(Round {
            changed,
            labels_sent,
            bytes,
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
    let seconds = started.elapsed().as_secs_f64();
    sum_over_ranks(world, &mut rounds);
    Ok(Labelling {
        local_seconds,
        link_seconds: world.allreduce(link_seconds, Op::Max),
        giants_seconds,
        giants: giants_phases,
        seconds,
        rounds,
        phases: p,
    })
}

/// Shortcut steps until no rank asks (collective); returns the steps that asked and the bytes
/// this rank sent.
fn shortcutting(world: &World, part: &Block1D, labeller: &mut dyn Labeller) -> Result<(u32, u64)> {
    let (mut steps, mut bytes) = (0, 0);
    loop {
        let (asked, sent) = labeller.shortcut(world, part)?;
        bytes += sent;
        if !asked {
            return Ok((steps, bytes));
        }
        steps += 1;
    }
}

/// Each round's labels sent and bytes, this rank's, summed over ranks (one collective for all
/// the rounds, where one a round held them back).
fn sum_over_ranks(world: &World, rounds: &mut [Round]) {
    let mut sums: Vec<u64> = rounds
        .iter()
        .flat_map(|r| [r.labels_sent, r.bytes])
        .collect();
    world.allreduce_slice(&mut sums, Op::Sum);
    for (round, pair) in rounds.iter_mut().zip(sums.chunks(2)) {
        (round.labels_sent, round.bytes) = (pair[0], pair[1]);
    }
}

/// How many of `vertices` another rank owns.
fn remote(part: &Block1D, vertices: impl Iterator<Item = u64>) -> u64 {
    vertices.filter(|&v| part.owner(v) != part.rank).count() as u64
}
