//! The greedy pass after the seed iterations, in rounds with collective counts. Each round
//! every part gets a level: 0 for a part below the bound, else one more than its lowest
//! neighbouring part (parts meet where a node graph edge joins them). Every node of a part
//! above the bound that has a neighbour in a lower-levelled part may move to the lowest such
//! part (ties: the smaller part, then the smaller part number; sizes as at the round's
//! start). So a full part with no room next to it passes its excess through full parts
//! towards one with room, a level a round. Of these candidates, in global node order, a part
//! gives at most its excess and a part with room takes at most its room (a full part takes
//! what comes, to pass it on); ranks learn how many candidates the earlier ranks had per part
//! by an exclusive prefix sum. Rounds repeat until every part fits, none moves a node, or
//! `MAX_ROUNDS`. The moves depend only on the labels and the node order, not on the rank
//! count.

use super::{Ranks, Share};
use std::collections::VecDeque;

/// One candidate move: a share index, its part and the part it may go to.
type Move = (usize, u32, u32);

/// Rounds at most (the excess crosses a part a round).
const MAX_ROUNDS: usize = 200;

/// Move boundary nodes out of parts above `limit` (collective; `labels`: the share's).
pub fn greedy(share: &Share, labels: &mut [u32], k: usize, limit: usize, ranks: &dyn Ranks) {
    let limit = limit as i64;
    for _ in 0..MAX_ROUNDS {
        let mut size = super::counts(labels, k);
        ranks.sum(&mut size);
        if size.iter().all(|&s| s <= limit) {
            return;
        }
        // Neighbours' parts: every rank's labels (only while some part is too full).
        let all = ranks.gather(labels);
        let level = levels(share, labels, &all, &size, limit, ranks);
        let moves = candidates(share, labels, &all, (&size, &level), limit);
        let moves = first_of_each(moves, |m| m.1, |p| size[p] - limit, k, ranks);
        let room = |q: usize| {
            if size[q] < limit {
                limit - size[q]
            } else {
                i64::MAX
            }
        };
        let moves = first_of_each(moves, |m| m.2, room, k, ranks);
        let mut moved = [moves.len() as i64];
        ranks.sum(&mut moved);
        if moved[0] == 0 {
            return;
        }
        for (i, _, q) in moves {
            labels[i] = q;
        }
    }
}

/// Each part's distance, over the parts that meet, to a part below `limit` (u32::MAX where
/// none can be reached): a breadth-first search on the pairs of meeting parts every rank
/// finds among its nodes' edges (gathered, so every rank has them all).
fn levels(
    share: &Share,
    labels: &[u32],
    all: &[u32],
    size: &[i64],
    limit: i64,
    ranks: &dyn Ranks,
) -> Vec<u32> {
    let mut pairs: Vec<(u32, u32)> = (0..labels.len())
        .flat_map(|i| {
            share
                .row(i)
                .iter()
                .map(move |&j| (labels[i], all[j as usize]))
        })
        .filter(|(p, q)| p != q)
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    let flat: Vec<u32> = pairs.iter().flat_map(|&(p, q)| [p, q]).collect();
    let mut meets = vec![Vec::new(); size.len()];
    for pair in ranks.gather(&flat).chunks(2) {
        meets[pair[0] as usize].push(pair[1]);
    }
    let mut level = vec![u32::MAX; size.len()];
    let mut queue: VecDeque<usize> = (0..size.len()).filter(|&p| size[p] < limit).collect();
    for &p in &queue {
        level[p] = 0;
    }
    while let Some(p) = queue.pop_front() {
        for &q in &meets[p] {
            if level[q as usize] == u32::MAX {
                level[q as usize] = level[p] + 1;
                queue.push_back(q as usize);
            }
        }
    }
    level
}

/// This share's nodes in too-full parts with a neighbour in a lower-levelled part, in order.
fn candidates(
    share: &Share,
    labels: &[u32],
    all: &[u32],
    (size, level): (&[i64], &[u32]),
    limit: i64,
) -> Vec<Move> {
    (0..labels.len())
        .filter(|&i| size[labels[i] as usize] > limit)
        .filter_map(|i| {
            let p = labels[i];
            share
                .row(i)
                .iter()
                .map(|&j| all[j as usize])
                .filter(|&q| level[q as usize] < level[p as usize])
                .min_by_key(|&q| (level[q as usize], size[q as usize], q))
                .map(|q| (i, p, q))
        })
        .collect()
}

/// The moves among the first `allowed(part)` of their `part` (counted over all ranks in
/// node order).
fn first_of_each(
    moves: Vec<Move>,
    part: impl Fn(&Move) -> u32,
    allowed: impl Fn(usize) -> i64,
    k: usize,
    ranks: &dyn Ranks,
) -> Vec<Move> {
    let mut count = vec![0i64; k];
    for m in &moves {
        count[part(m) as usize] += 1;
    }
    let mut seen = ranks.before(&count);
    moves
        .into_iter()
        .filter(|m| {
            let j = part(m) as usize;
            seen[j] += 1;
            seen[j] <= allowed(j)
        })
        .collect()
}
