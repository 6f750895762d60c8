//! The greedy pass after the seed iterations, in rounds with collective counts: each round,
//! every node of a part above the bound that has a neighbour in a part below it may move to
//! the smallest such part (ties: the smaller part number; sizes as at the round's start).
//! Of these candidates, in global node order, a part gives at most its excess and a part
//! takes at most its room; ranks learn how many candidates the earlier ranks had per part by
//! an exclusive prefix sum. Rounds repeat until every part fits or none moves a node. The
//! moves depend only on the labels and the node order, not on the rank count.

use super::{Ranks, Share};

/// One candidate move: a share index, its part and the part it may go to.
type Move = (usize, u32, u32);

/// Move boundary nodes out of parts above `limit` (collective; `labels`: the share's).
pub fn greedy(share: &Share, labels: &mut [u32], k: usize, limit: usize, ranks: &dyn Ranks) {
    let limit = limit as i64;
    loop {
        let mut size = super::counts(labels, k);
        ranks.sum(&mut size);
        if size.iter().all(|&s| s <= limit) {
            return;
        }
        // Neighbours' parts: every rank's labels (only while some part is too full).
        let all = ranks.gather(labels);
        let moves = candidates(share, labels, &all, &size, limit);
        let moves = first_of_each(moves, |m| m.1, |p| size[p] - limit, k, ranks);
        let moves = first_of_each(moves, |m| m.2, |q| limit - size[q], k, ranks);
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

/// This share's nodes in too-full parts with a neighbour in a part below `limit`, in order.
fn candidates(share: &Share, labels: &[u32], all: &[u32], size: &[i64], limit: i64) -> Vec<Move> {
    (0..labels.len())
        .filter(|&i| size[labels[i] as usize] > limit)
        .filter_map(|i| {
            let p = labels[i];
            share
                .row(i)
                .iter()
                .map(|&j| all[j as usize])
                .filter(|&q| q != p && size[q as usize] < limit)
                .min_by_key(|&q| (size[q as usize], q))
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
