//! What the labels say, and the check that they are a labelling: component count, sizes
//! (summed at the rank owning each component's label vertex), their log2 histogram, the
//! largest components; and the verifier (every edge joins equal labels, every label is the
//! label of its own vertex and no larger than any vertex carrying it).

use crate::comm::{bucket_by_rank, Op, World};
use crate::error::{Error, Result};
use crate::graph::ghosts::{Ghosts, Numbering};
use crate::graph::{Block1D, DistGraph};
use rayon::prelude::*;
use std::collections::HashMap;

/// Log2 bins of component sizes: bin b holds sizes in [2^b, 2^(b+1)).
pub const SIZE_BINS: usize = 64;

pub struct ComponentStats {
    pub components: u64,
    /// Components of one vertex.
    pub isolated: u64,
    pub size_histogram: Vec<u64>,
    /// (size, label) of the largest component (ties: the smaller label), known however
    /// many are listed; on rank 0 only.
    pub largest_one: (u64, u64),
    /// (size, label) of the `keep` largest components, largest first (ties: smaller label
    /// first); complete on rank 0 only.
    pub largest: Vec<(u64, u64)>,
}

/// Component figures from every rank's labels (collective).
pub fn component_stats(
    world: &World,
    part: &Block1D,
    labels: &[u64],
    keep: usize,
) -> Result<ComponentStats> {
    let sizes = sizes_at_owners(world, part, labels)?;
    // At least one is gathered: the largest component is a figure of its own.
    let listed = keep;
    let keep = keep.max(1);
    let mut histogram = vec![0u64; SIZE_BINS];
    for &(size, _) in &sizes {
        histogram[size.ilog2() as usize] += 1;
    }
    world.allreduce_slice(&mut histogram, Op::Sum);
    let mut mine = sizes;
    mine.par_sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    mine.truncate(keep);
    let flat: Vec<u64> = mine.iter().flat_map(|&(s, l)| [s, l]).collect();
    let all = world.gatherv_root(&flat)?;
    let mut largest: Vec<(u64, u64)> = all.chunks(2).map(|p| (p[0], p[1])).collect();
    largest.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let largest_one = largest.first().copied().unwrap_or((0, 0));
    largest.truncate(listed);
    Ok(ComponentStats {
        components: histogram.iter().sum(),
        isolated: histogram[0],
        size_histogram: histogram,
        largest_one,
        largest,
    })
}

/// (size, label) of each component whose label vertex this rank owns.
fn sizes_at_owners(world: &World, part: &Block1D, labels: &[u64]) -> Result<Vec<(u64, u64)>> {
    let mut own = vec![0u64; part.local_n()];
    let mut remote: HashMap<u64, u64> = HashMap::new();
    for &l in labels {
        if part.is_local(l) {
            own[part.local(l)] += 1;
        } else {
            *remote.entry(l).or_default() += 1;
        }
    }
    // Counts of labels owned elsewhere go to their owners, as (label, count) word pairs.
    let pairs: Vec<(u64, u64)> = remote.into_iter().collect();
    let (pairs, counts) = bucket_by_rank(world.size(), &pairs, |&(l, _)| part.owner(l));
    let words: Vec<u64> = pairs.iter().flat_map(|&(l, c)| [l, c]).collect();
    let word_counts: Vec<usize> = counts.iter().map(|c| 2 * c).collect();
    let (received, _) = world.alltoallv_counted(&words, &word_counts)?;
    for pair in received.chunks(2) {
        own[part.local(pair[0])] += pair[1];
    }
    Ok(own
        .iter()
        .enumerate()
        .filter(|&(_, &size)| size > 0)
        .map(|(v, &size)| (size, part.global(v)))
        .collect())
}

/// Check that `labels` label components (collective; every rank returns the same outcome):
/// both ends of every edge carry the same label, each vertex's label is at most its id, and
/// a label's vertex carries that label. Together: labels are constant on components and
/// each is a vertex of the components it labels. That the components were not merged is
/// what the tests check against a sequential union-find. The edges are the graph's rows (not
/// the local/cut split the labelling read), the other ranks' labels those of `ghosts` (every
/// remote endpoint of the rows).
pub fn verify(world: &World, g: &DistGraph, ghosts: &Ghosts, labels: &[u64]) -> Result<()> {
    let part = &g.part;
    let ghost_labels = ghosts.refresh(world, labels)?;
    let numbering = Numbering::of_ids(g.n(), &ghosts.ids);
    // None: a remote endpoint that is no ghost (a split that missed it).
    let label_of = |v: u64| match part.is_local(v) {
        true => Some(labels[part.local(v)]),
        false => numbering.get(v).map(|i| ghost_labels[i as usize]),
    };
    let mut broken = (0..g.local_n())
        .into_par_iter()
        .find_map_any(|u| {
            g.row(u)
                .iter()
                .find(|&&v| label_of(v) != Some(labels[u]))
                .map(|&v| (part.global(u), v))
        })
        .map(|(u, v)| format!("the edge ({u}, {v}) joins vertices labelled differently"));
    if broken.is_none() {
        broken = labels.iter().enumerate().find_map(|(v, &l)| {
            let id = part.global(v);
            (l > id).then(|| format!("vertex {id} carries the larger label {l}"))
        });
    }
    let mut remote: Vec<u64> = labels
        .iter()
        .copied()
        .filter(|&l| !part.is_local(l))
        .collect();
    remote.sort_unstable();
    remote.dedup();
    let theirs = world.query(&remote, |l| part.owner(l), |l| labels[part.local(l)])?;
    if broken.is_none() {
        broken = labels
            .iter()
            .filter(|&&l| part.is_local(l))
            .map(|&l| (l, labels[part.local(l)]))
            .chain(remote.iter().copied().zip(theirs))
            .find(|&(l, of_l)| l != of_l)
            .map(|(l, of_l)| format!("label {l} is not its own vertex's label ({of_l})"));
    }
    world.agree(broken.map_or(Ok(()), |why| Err(Error::Check(why))))
}
