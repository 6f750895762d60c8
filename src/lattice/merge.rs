//! Joining the slabs' boundary graphs without gathering them: ranges of consecutive slabs are
//! merged pairwise up a binary tree, in ceil(log2 P) steps, then each cluster's final label
//! and percolation bits come back down the same tree.
//!
//! A range holds only what can still join: its open clusters (those touching its bottom or top
//! plane) and, for each site of those two planes, its cluster and its position relative to the
//! cluster's root in the unwrapped lattice, in units of the side along each axis (Machta et al.;
//! Newman & Ziff 2001). Merging range A with the range B above it unites A's top plane with B's
//! bottom plane in a union-find that carries those offsets (`Windings`): a bond that closes a cycle
//! whose offsets disagree by a non-zero vector w closes a loop winding w, so wrapping is found
//! exactly, whatever the winding (a (1, 2) spiral across several slabs included): a cluster wraps
//! axis a iff a cycle of it winds along a, and the fundamental cycles of the forest generate all
//! cycles. Clusters that no longer touch the merged range's bottom or top are closed there: their
//! label and bits are final. The last step (rank 0, the whole lattice) joins the top plane to the
//! bottom across the wrap of axis 0 (periodic lattices) and closes everything. Open lattices span
//! axis a where a cluster touches both of its end faces. Clusters are kept in label order, so a
//! root is always the smallest label: each cluster's label is its smallest site.
//!
//! Cost (`merge_cost`): a range is sent as one word per site of its two planes, the labels of
//! its open clusters and the offsets of the sites away from their root's image, so each step
//! moves O(L^(d-1)) words between a pair of ranks and the tree takes 2 ceil(log2 P) steps of
//! latency, where the gather brought P L^(d-1) words to one rank and solved them there.

use super::boundary::{touches_low, SlabBoundary, NO_NODE};
use super::clusters::{Cluster, ClusterStats};
use super::{Lattice, Slab};
use crate::comm::{Triple, World};
use crate::error::Result;

/// Message tags of the tree's two sweeps.
const TAG_UP: i32 = 7301;
const TAG_DOWN: i32 = 7302;

/// A face site's cluster when the site is vacant.
const VACANT: u32 = u32::MAX;

/// Point-to-point messages of words between the ranks of the tree (MPI; channels in tests).
pub trait Link {
    fn send(&self, to: usize, tag: i32, words: &[u64]);
    fn receive(&self, from: usize, tag: i32) -> Vec<u64>;
}

impl Link for World {
    fn send(&self, to: usize, tag: i32, words: &[u64]) {
        self.send_words(to, tag, words);
    }
    fn receive(&self, from: usize, tag: i32) -> Vec<u64> {
        self.receive_words(from, tag)
    }
}

/// A cluster of a range that may still join others.
#[derive(Clone, Copy, Debug)]
struct Open {
    label: u64,
    touches: u8,
    wraps: u8,
}

/// A site of a range's bottom or top plane: its cluster (`VACANT`: none) and its position
/// relative to the cluster's root, in units of the side along each axis.
#[derive(Clone, Copy, Debug)]
struct FaceSite {
    cluster: u32,
    offset: [i64; 3],
}

/// What a range passes up the tree.
#[derive(Debug)]
struct Range {
    open: Vec<Open>,
    bottom: Vec<FaceSite>,
    top: Vec<FaceSite>,
    /// Per top site, whether it bonds to the plane above.
    up: Vec<bool>,
}

/// A cluster's final label and percolation bits (bit a: wraps, or spans, axis a).
pub type Final = (u64, u8);

/// What became of a cluster at a join: open as cluster k of the joined range, or closed.
#[derive(Clone, Copy, Debug)]
enum Fate {
    Open(u32),
    Closed(Final),
}

/// Union-find over clusters with each one's offset from its parent, in units of the sides.
struct Windings {
    parent: Vec<u32>,
    offset: Vec<[i64; 3]>,
    touches: Vec<u8>,
    wraps: Vec<u8>,
}

fn add(a: [i64; 3], b: [i64; 3]) -> [i64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn sub(a: [i64; 3], b: [i64; 3]) -> [i64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// One side along `axis` (L_0 along axis 0, L along the others).
fn unit(axis: usize) -> [i64; 3] {
    let mut w = [0; 3];
    w[axis] = 1;
    w
}

impl Windings {
    fn new(clusters: &[Open]) -> Windings {
        Windings {
            parent: (0..clusters.len() as u32).collect(),
            offset: vec![[0; 3]; clusters.len()],
            touches: clusters.iter().map(|c| c.touches).collect(),
            wraps: clusters.iter().map(|c| c.wraps).collect(),
        }
    }

    /// The root of `x` and x's offset from it; compresses the path. Two walks and no
    /// allocation: the join calls it once per face site, so a path buffer per call would
    /// cost more than the walk.
    fn find(&mut self, x: u32) -> (u32, [i64; 3]) {
        let mut root = x;
        let mut to_root = [0; 3];
        while self.parent[root as usize] != root {
            to_root = add(to_root, self.offset[root as usize]);
            root = self.parent[root as usize];
        }
        // Point every node of the path at the root, with its own offset to it: x's is the
        // whole sum, and each next node's is what is left after the step from the one before.
        let mut v = x;
        let mut left = to_root;
        while v != root {
            let (next, step) = (self.parent[v as usize], self.offset[v as usize]);
            self.parent[v as usize] = root;
            self.offset[v as usize] = left;
            left = sub(left, step);
            v = next;
        }
        (root, to_root)
    }

    /// A bond with b at a's position plus `w`; the smaller root becomes the root.
    fn unite(&mut self, a: u32, b: u32, w: [i64; 3]) {
        let (ra, oa) = self.find(a);
        let (rb, ob) = self.find(b);
        let rb_from_ra = sub(add(oa, w), ob);
        if ra == rb {
            for (axis, &c) in rb_from_ra.iter().enumerate() {
                if c != 0 {
                    self.wraps[ra as usize] |= 1 << axis;
                }
            }
            return;
        }
        let (lo, hi, offset) = if ra < rb {
            (ra, rb, rb_from_ra)
        } else {
            (rb, ra, sub([0; 3], rb_from_ra))
        };
        self.parent[hi as usize] = lo;
        self.offset[hi as usize] = offset;
        self.touches[lo as usize] |= self.touches[hi as usize];
        self.wraps[lo as usize] |= self.wraps[hi as usize];
    }
}

/// The percolation bits of a closed cluster: the axes it wraps (periodic) or spans (open).
fn percolates(lattice: Lattice, touches: u8, wraps: u8) -> u8 {
    (0..lattice.dim).fold(0u8, |bits, axis| {
        let ends = touches_low(axis) | touches_low(axis) << 1;
        let spans = touches & ends == ends;
        let wraps = wraps & (1 << axis) != 0;
        bits | (u8::from(if lattice.periodic { wraps } else { spans }) << axis)
    })
}

/// The faces a join keeps open: bottom and top sites (cluster indices of the join) and the
/// top's up-bonds; `None` closes everything.
type Faces = Option<(Vec<FaceSite>, Vec<FaceSite>, Vec<bool>)>;

/// Unite `clusters` (in label order) along `bonds` (a, b, w: b at a's position plus w); the
/// clusters `faces` reach stay open, in label order, the others close.
fn join(
    lattice: Lattice,
    clusters: &[Open],
    bonds: &[(u32, u32, [i64; 3])],
    faces: Faces,
) -> (Option<Range>, Vec<Fate>) {
    let mut w = Windings::new(clusters);
    for &(a, b, offset) in bonds {
        w.unite(a, b, offset);
    }
    let n = clusters.len();
    let mut index = vec![VACANT; n];
    let range = faces.map(|(bottom, top, up)| {
        let mut rebase = |sites: Vec<FaceSite>| -> Vec<FaceSite> {
            // Neighbouring face sites mostly share a cluster: its root is looked up once.
            let mut last: Option<(u32, u32, [i64; 3])> = None;
            sites
                .into_iter()
                .map(|s| match s.cluster {
                    VACANT => s,
                    c => {
                        let (root, offset) = match last {
                            Some((lc, root, offset)) if lc == c => (root, offset),
                            _ => {
                                let (root, offset) = w.find(c);
                                index[root as usize] = 0;
                                last = Some((c, root, offset));
                                (root, offset)
                            }
                        };
                        FaceSite {
                            cluster: root,
                            offset: add(s.offset, offset),
                        }
                    }
                })
                .collect()
        };
        let (mut bottom, mut top) = (rebase(bottom), rebase(top));
        let mut open = Vec::new();
        for root in 0..n {
            if index[root] != VACANT {
                index[root] = open.len() as u32;
                open.push(Open {
                    label: clusters[root].label,
                    touches: w.touches[root],
                    wraps: w.wraps[root],
                });
            }
        }
        for s in bottom.iter_mut().chain(top.iter_mut()) {
            if s.cluster != VACANT {
                s.cluster = index[s.cluster as usize];
            }
        }
        Range {
            open,
            bottom,
            top,
            up,
        }
    });
    let fates = (0..n as u32)
        .map(|c| {
            let root = w.find(c).0 as usize;
            match index[root] {
                VACANT => Fate::Closed((
                    clusters[root].label,
                    percolates(lattice, w.touches[root], w.wraps[root]),
                )),
                k => Fate::Open(k),
            }
        })
        .collect();
    (range, fates)
}

/// A slab's range: its nodes joined by the side wraps inside it.
fn leaf(slab: &Slab, part: &SlabBoundary) -> (Range, Vec<Fate>) {
    let nodes: Vec<Open> = part
        .roots
        .iter()
        .zip(&part.touches)
        .map(|(&r, &touches)| Open {
            label: slab.global(r as usize),
            touches,
            wraps: 0,
        })
        .collect();
    let bonds: Vec<_> = part
        .wraps
        .iter()
        .map(|&(from, to, axis)| (from, to, unit(axis)))
        .collect();
    let sites = |nodes: &[u32]| -> Vec<FaceSite> {
        let site = |&cluster: &u32| FaceSite {
            cluster: if cluster == NO_NODE { VACANT } else { cluster },
            offset: [0; 3],
        };
        nodes.iter().map(site).collect()
    };
    let faces = (sites(&part.bottom), sites(&part.top), part.up.clone());
    let (range, fates) = join(slab.lattice, &nodes, &bonds, Some(faces));
    (range.expect("a leaf keeps its faces"), fates)
}

/// Range `a` joined with range `b` right above it (`None`: `a` is the whole lattice, joined
/// across the wrap of axis 0 and closed).
fn merge(lattice: Lattice, a: Range, b: Option<Range>) -> (Option<Range>, Vec<Fate>) {
    let shift = a.open.len() as u32;
    let (clusters, above, winding, faces) = match b {
        Some(b) => {
            let moved = |sites: &[FaceSite]| -> Vec<FaceSite> {
                let moved = |s: &FaceSite| FaceSite {
                    cluster: if s.cluster == VACANT {
                        VACANT
                    } else {
                        s.cluster + shift
                    },
                    ..*s
                };
                sites.iter().map(moved).collect()
            };
            let clusters = [a.open.as_slice(), &b.open].concat();
            let above = moved(&b.bottom);
            let faces = Some((a.bottom, moved(&b.top), b.up));
            (clusters, above, [0; 3], faces)
        }
        None => (a.open, a.bottom, unit(0), None),
    };
    let mut bonds: Vec<_> = a
        .top
        .iter()
        .zip(&above)
        .zip(&a.up)
        .filter(|&((t, s), &up)| up && t.cluster != VACANT && s.cluster != VACANT)
        .map(|((t, s), _)| (t.cluster, s.cluster, sub(add(t.offset, winding), s.offset)))
        .collect();
    // Neighbouring bonds mostly repeat one another, and a repeated bond changes nothing.
    bonds.dedup();
    join(lattice, &clusters, &bonds, faces)
}

/// The finals of a join's clusters from those of the joined range's open clusters.
fn resolve(fates: &[Fate], open_finals: &[Final]) -> Vec<Final> {
    fates
        .iter()
        .map(|f| match *f {
            Fate::Open(k) => open_finals[k as usize],
            Fate::Closed(fin) => fin,
        })
        .collect()
}

/// What one rank's part of the merge cost: the words it received, and the seconds of its own
/// work (the joins, their encoding and the resolves; the waits for its partners excluded,
/// so that the cost model's per-site join cost can be read from it).
#[derive(Clone, Copy, Debug, Default)]
pub struct MergeWork {
    pub words: u64,
    pub join_seconds: f64,
}

/// Each node's final label and percolation bits, in the order of `part.roots`, through the
/// tree of ranks (collective over `link`'s ranks); and what this rank's part cost.
pub fn solve(link: &dyn Link, slab: &Slab, part: &SlabBoundary) -> (Vec<Final>, MergeWork) {
    let (rank, ranks, lattice) = (slab.rank, slab.ranks, slab.lattice);
    let mut clock = JoinClock::start();
    let (mut range, leaf_fates) = leaf(slab, part);
    // (partner, fates of this side's and the partner's clusters, this side's count).
    let mut merges: Vec<(usize, Vec<Fate>, usize)> = Vec::new();
    let mut step = 1;
    let mut parent = None;
    while step < ranks {
        if rank % (2 * step) != 0 {
            let words = encode(&range);
            clock.off(|| link.send(rank - step, TAG_UP, &words));
            parent = Some(rank - step);
            break;
        }
        if rank + step < ranks {
            let words = clock.off(|| link.receive(rank + step, TAG_UP));
            clock.work.words += words.len() as u64;
            let b = decode(&words);
            let mine = range.open.len();
            let (joined, fates) = merge(lattice, range, Some(b));
            merges.push((rank + step, fates, mine));
            range = joined.expect("a merge keeps the faces");
        }
        step *= 2;
    }
    let mut finals = match parent {
        Some(p) => {
            let words = clock.off(|| link.receive(p, TAG_DOWN));
            clock.work.words += words.len() as u64;
            decode_finals(&words)
        }
        None => resolve(&merge(lattice, range, None).1, &[]),
    };
    for (partner, fates, mine) in merges.into_iter().rev() {
        let both = resolve(&fates, &finals);
        let words = encode_finals(&both[mine..]);
        clock.off(|| link.send(partner, TAG_DOWN, &words));
        finals = both[..mine].to_vec();
    }
    let finals = resolve(&leaf_fates, &finals);
    (finals, clock.stop())
}

/// Times a rank's own work in the merge: running, but for the messages (`off`).
struct JoinClock {
    work: MergeWork,
    since: std::time::Instant,
}

impl JoinClock {
    fn start() -> JoinClock {
        JoinClock {
            work: MergeWork::default(),
            since: std::time::Instant::now(),
        }
    }

    /// Run `message` (a send or a receive) with the clock stopped.
    fn off<T>(&mut self, message: impl FnOnce() -> T) -> T {
        self.work.join_seconds += self.since.elapsed().as_secs_f64();
        let out = message();
        self.since = std::time::Instant::now();
        out
    }

    fn stop(mut self) -> MergeWork {
        self.work.join_seconds += self.since.elapsed().as_secs_f64();
        self.work
    }
}

/// A range as words: [open, plane, dim], each open cluster as (label, touches | wraps << 8),
/// each bottom then top site as its cluster | up << 32 | moved << 33, and the offsets of the
/// sites whose offset is not zero (`dim` words each) in that order.
fn encode(r: &Range) -> Vec<u64> {
    let dim = 3;
    let mut words = vec![r.open.len() as u64, r.bottom.len() as u64, dim];
    for c in &r.open {
        words.extend([c.label, u64::from(c.touches) | u64::from(c.wraps) << 8]);
    }
    let ups = std::iter::repeat_n(&false, r.bottom.len()).chain(&r.up);
    let mut moved = Vec::new();
    for (s, &up) in r.bottom.iter().chain(&r.top).zip(ups) {
        let shifted = s.offset != [0; 3];
        words.push(u64::from(s.cluster) | u64::from(up) << 32 | u64::from(shifted) << 33);
        if shifted {
            moved.extend(s.offset.iter().map(|&o| o as u64));
        }
    }
    words.extend(moved);
    words
}

fn decode(words: &[u64]) -> Range {
    let (open, plane, dim) = (words[0] as usize, words[1] as usize, words[2] as usize);
    let mut at = 3;
    let open: Vec<Open> = words[at..at + 2 * open]
        .chunks(2)
        .map(|c| Open {
            label: c[0],
            touches: c[1] as u8,
            wraps: (c[1] >> 8) as u8,
        })
        .collect();
    at += 2 * open.len();
    let site_words = &words[at..at + 2 * plane];
    let mut offsets = words[at + 2 * plane..].chunks(dim);
    let mut sites = site_words.iter().map(|&w| {
        let mut offset = [0; 3];
        if w >> 33 & 1 != 0 {
            let o = offsets.next().expect("an offset per moved site");
            for (d, &v) in offset.iter_mut().zip(o) {
                *d = v as i64;
            }
        }
        let site = FaceSite {
            cluster: w as u32,
            offset,
        };
        (site, w >> 32 & 1 != 0)
    });
    let bottom = sites.by_ref().take(plane).map(|(s, _)| s).collect();
    let (top, up) = sites.unzip();
    Range {
        open,
        bottom,
        top,
        up,
    }
}

fn encode_finals(finals: &[Final]) -> Vec<u64> {
    finals
        .iter()
        .flat_map(|&(label, bits)| [label, u64::from(bits)])
        .collect()
}

fn decode_finals(words: &[u64]) -> Vec<Final> {
    words.chunks(2).map(|c| (c[0], c[1] as u8)).collect()
}

/// The rank whose slab holds global site `site` (slabs: planes floor(L_0 r / P) ..).
fn slab_owner(lattice: Lattice, ranks: usize, site: u64) -> usize {
    let plane = u128::from(site / lattice.plane());
    (((plane + 1) * ranks as u128 - 1) / u128::from(lattice.length)) as usize
}

/// The clusters that reach a face, tallied once each at the rank owning their label, from
/// each node's final and local size (collective).
pub fn boundary_clusters(
    world: &World,
    slab: &Slab,
    finals: &[Final],
    node_sizes: &[u64],
) -> Result<ClusterStats> {
    let mut parts: Vec<Triple> = finals
        .iter()
        .zip(node_sizes)
        .map(|(&(label, bits), &size)| Triple(label, size, u64::from(bits)))
        .collect();
    let owner = |t: &Triple| slab_owner(slab.lattice, slab.ranks, t.0);
    let mut parts = world.route(&sum_by_label(&mut parts), owner)?;
    let mut stats = ClusterStats::default();
    for t in sum_by_label(&mut parts) {
        stats.add(Cluster {
            size: t.1,
            label: t.0,
            percolates: t.2 as u8,
        });
    }
    Ok(stats)
}

/// (label, size, bits) summed over equal labels.
fn sum_by_label(parts: &mut [Triple]) -> Vec<Triple> {
    parts.sort_unstable_by_key(|t| t.0);
    let mut out: Vec<Triple> = Vec::new();
    for &t in parts.iter() {
        match out.last_mut() {
            Some(last) if last.0 == t.0 => last.1 += t.1,
            _ => out.push(t),
        }
    }
    out
}

/// The boundary merge's cost on `ranks` ranks of an L_0 x L^(d-1) lattice: steps (messages in a row on
/// the critical path, both sweeps) and the most words one rank receives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MergeCost {
    pub steps: u32,
    pub words: u64,
}

/// The cost model, an upper bound: each of the ceil(log2 P) upward steps receives one range
/// of 3 + 2 open + (1 + d m) 2 L^(d-1) words, where its open clusters (open) are at most
/// one per face site and the sites that sit away from their cluster's root's image (m, a share
/// of the face sites, wrapping clusters' only) at most all: 3 + (6 + 2d) L^(d-1). The
/// downward sweep sends back two words per open cluster. Rank 0 receives the most: one
/// range per step.
pub fn merge_cost(lattice: Lattice, ranks: usize) -> MergeCost {
    let levels = usize::BITS - (ranks.max(1) - 1).leading_zeros();
    let per_step = 3 + (6 + 2 * lattice.dim as u64) * lattice.plane();
    MergeCost {
        steps: 2 * levels,
        words: u64::from(levels) * per_step,
    }
}

#[cfg(test)]
mod tests;
