//! A spanning forest that does not depend on the order of anything (collective): min-label
//! hooking. Nodes are global ids in `Ranges` layout, links Triple(a, b, id) with unique ids,
//! held by any rank. Each round every link reads its ends' roots; every root with a link to
//! a smaller root hooks onto the smallest such root, ties broken by the smallest link id,
//! and that link joins the forest; then every node's pointer jumps to its root. Hooks go
//! from larger to smaller roots only, so they make no cycle, a root stays the smallest node
//! of its tree, and the links chosen depend only on the graph. Of parallel links (the same
//! two nodes) only the smallest id can ever be chosen: they see the same roots every round
//! and lose to it on the id, so each rank keeps only that one of those it holds (`distinct`)
//! before the rounds, which chooses the same links in the same rounds. That makes a graph
//! of few trails cheap: its every vertex offers the same link between the same two trails.

use crate::comm::ranges::Ranges;
use crate::comm::{Op, Pair, Triple, World};
use crate::error::Result;
use rayon::prelude::*;

pub struct Forest {
    /// Each local node's root: the smallest node of its component.
    pub root: Vec<u64>,
    /// Ids of the links that joined the forest, each held by the rank owning the root it
    /// hooked.
    pub chosen: Vec<u64>,
    pub rounds: usize,
}

pub fn spanning_forest(world: &World, nodes: &Ranges, links: &[Triple]) -> Result<Forest> {
    let links = &distinct(links)[..];
    let first = nodes.first();
    let mut root: Vec<u64> = (0..nodes.local_len() as u64)
        .into_par_iter()
        .map(|i| first + i)
        .collect();
    let mut chosen = Vec::new();
    let mut rounds = 0;
    loop {
        rounds += 1;
        let ends: Vec<u64> = links.par_iter().flat_map_iter(|t| [t.0, t.1]).collect();
        let roots = world.query(&ends, |v| nodes.owner(v), |v| root[nodes.local(v)])?;
        // Triple(larger root, smaller root, link id) for every link between two trees.
        let offers: Vec<Triple> = links
            .par_iter()
            .zip(roots.par_chunks(2))
            .filter(|(_, r)| r[0] != r[1])
            .map(|(t, r)| Triple(r[0].max(r[1]), r[0].min(r[1]), t.2))
            .collect();
        let offers = world.route(&offers, |t| nodes.owner(t.0))?;
        let mut best = vec![Pair(u64::MAX, u64::MAX); nodes.local_len()];
        for t in &offers {
            let b = &mut best[nodes.local(t.0)];
            if (t.1, t.2) < (b.0, b.1) {
                *b = Pair(t.1, t.2);
            }
        }
        let hooked: Vec<(usize, Pair)> = best
            .into_iter()
            .enumerate()
            .filter(|(_, b)| b.0 != u64::MAX)
            .collect();
        if world.allreduce(hooked.len() as u64, Op::Sum) == 0 {
            return Ok(Forest {
                root,
                chosen,
                rounds,
            });
        }
        for (i, Pair(to, link)) in hooked {
            root[i] = to;
            chosen.push(link);
        }
        shortcut(world, nodes, &mut root)?;
    }
}

/// Of the links between the same two nodes (either way round), the one with the smallest
/// id; in no particular order.
pub fn distinct(links: &[Triple]) -> Vec<Triple> {
    let ends = |t: &Triple| (t.0.min(t.1), t.0.max(t.1));
    let mut sorted = links.to_vec();
    sorted.par_sort_unstable_by_key(|t| (ends(t), t.2));
    sorted.dedup_by_key(|t| ends(t));
    sorted
}

/// Jump every node's pointer to the root of its tree. Only the nodes that hooked somewhere
/// ask (the rest are roots, most of the trail graph's nodes being no trail at all).
fn shortcut(world: &World, nodes: &Ranges, root: &mut [u64]) -> Result<()> {
    let first = nodes.first();
    let moved: Vec<usize> = (0..root.len())
        .into_par_iter()
        .filter(|&i| root[i] != first + i as u64)
        .collect();
    loop {
        let keys: Vec<u64> = moved.par_iter().map(|&i| root[i]).collect();
        let up = world.query(&keys, |v| nodes.owner(v), |v| root[nodes.local(v)])?;
        let mut changed = 0u64;
        for (&i, u) in moved.iter().zip(up) {
            changed += u64::from(root[i] != u);
            root[i] = u;
        }
        if world.allreduce(changed, Op::Sum) == 0 {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_keeps_the_smallest_id_of_parallel_links() {
        let links = [
            Triple(3, 7, 40),
            Triple(1, 2, 9),
            Triple(7, 3, 12),
            Triple(3, 7, 25),
            Triple(2, 1, 30),
            Triple(5, 6, 1),
        ];
        let mut kept = distinct(&links);
        kept.sort_unstable_by_key(|t| t.2);
        assert_eq!(
            kept,
            [Triple(5, 6, 1), Triple(1, 2, 9), Triple(7, 3, 12)]
        );
    }
}
