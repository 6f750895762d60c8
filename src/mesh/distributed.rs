//! The MPI side of the mesh layer: the ghost exchange of a rank's patch with its neighbour
//! ranks only (one MPI_Sendrecv per neighbour, neighbours in ascending order, which cannot
//! deadlock: the smallest pending pair always has both ends waiting on each other), the
//! exact global reductions, and the partitioner's sums and label gathering.

use super::exact::ExactSum;
use super::partition::Ranks;
use super::patch::{Exchange, Patch};
use super::quality::Summary;
use super::Mesh;
use crate::comm::{ranges::block_range, Op, World};
use std::ops::Range;

/// Per neighbour rank: the local nodes sent to it and the local ghosts filled from it, both
/// in ascending global id (so both ends agree on the order without telling each other).
pub struct MpiExchange<'w> {
    world: &'w World,
    neighbours: Vec<(usize, Vec<u32>, Vec<u32>)>,
}

impl<'w> MpiExchange<'w> {
    /// The exchange lists of `patch`, given the owner of each global node id: an owned
    /// node's row of the patch's node graph is complete (the patch holds all its cells).
    pub fn new(world: &'w World, patch: &Patch, owner: impl Fn(u64) -> u32) -> MpiExchange<'w> {
        let me = world.rank() as u32;
        let mut send: Vec<Vec<(u64, u32)>> = vec![Vec::new(); world.size()];
        let mut recv: Vec<Vec<(u64, u32)>> = vec![Vec::new(); world.size()];
        for (local, &g) in patch.global.iter().enumerate() {
            if patch.owned[local] {
                // Owned nodes some other rank's patch holds: they neighbour its owned nodes.
                let mut to: Vec<u32> = patch
                    .graph
                    .row(local)
                    .iter()
                    .map(|&j| owner(patch.global[j as usize]))
                    .filter(|&q| q != me)
                    .collect();
                to.sort_unstable();
                to.dedup();
                for q in to {
                    send[q as usize].push((g, local as u32));
                }
            } else {
                recv[owner(g) as usize].push((g, local as u32));
            }
        }
        let sorted = |mut v: Vec<(u64, u32)>| {
            v.sort_unstable();
            v.into_iter().map(|(_, l)| l).collect::<Vec<u32>>()
        };
        let neighbours = send
            .into_iter()
            .zip(recv)
            .enumerate()
            .filter(|(_, (s, r))| !s.is_empty() || !r.is_empty())
            .map(|(q, (s, r))| (q, sorted(s), sorted(r)))
            .collect();
        MpiExchange { world, neighbours }
    }

    /// Per neighbour rank (ascending): the local nodes sent to it and the local ghosts
    /// filled from it.
    pub fn neighbours(&self) -> &[(usize, Vec<u32>, Vec<u32>)] {
        &self.neighbours
    }

    /// Neighbour ranks and the ghost count received from each.
    pub fn halo(&self) -> Vec<(usize, usize)> {
        self.neighbours
            .iter()
            .map(|(q, _, r)| (*q, r.len()))
            .collect()
    }
}

impl Exchange for MpiExchange<'_> {
    fn ghosts(&self, mesh: &mut Mesh) {
        for (q, send, recv) in &self.neighbours {
            let out: Vec<f64> = send.iter().flat_map(|&l| mesh.point(l as usize)).collect();
            let mut back = vec![0.0; 3 * recv.len()];
            self.world.sendrecv(&out, *q, &mut back, *q);
            for (k, &l) in recv.iter().enumerate() {
                let l = l as usize;
                (mesh.x[l], mesh.y[l], mesh.z[l]) = (back[3 * k], back[3 * k + 1], back[3 * k + 2]);
            }
        }
    }

    fn ghost_labels(&self, labels: &mut [u32]) {
        for (q, send, recv) in &self.neighbours {
            let out: Vec<u32> = send.iter().map(|&l| labels[l as usize]).collect();
            let mut back = vec![0u32; recv.len()];
            self.world.sendrecv(&out, *q, &mut back, *q);
            for (&l, &v) in recv.iter().zip(&back) {
                labels[l as usize] = v;
            }
        }
    }

    fn sum(&self, mine: ExactSum) -> ExactSum {
        let mut all = vec![0u64; 2 * self.world.size()];
        self.world.allgather_into(&mine.to_words(), &mut all);
        all.chunks(2)
            .map(|w| ExactSum::from_words([w[0], w[1]]))
            .sum()
    }

    fn summary(&self, mine: Summary) -> Summary {
        let words = mine.to_words();
        let mut all = vec![0u64; words.len() * self.world.size()];
        self.world.allgather_into(&words, &mut all);
        all.chunks(Summary::WORDS)
            .map(Summary::from_words)
            .fold(Summary::default(), |a, b| a.merge(&b))
    }

    fn max(&self, mine: f64) -> f64 {
        self.world.allreduce(mine, Op::Max)
    }

    fn any(&self, mine: bool) -> bool {
        self.world.allreduce(u8::from(mine), Op::Max) > 0
    }
}

/// The partitioner's ranks: node blocks, sums by MPI_Allreduce (integers, so exact), prefix
/// sums from one MPI_Allgather.
pub struct MpiRanks<'w>(pub &'w World);

impl Ranks for MpiRanks<'_> {
    fn range(&self, n: usize) -> Range<usize> {
        let r = block_range(n as u64, self.0.size(), self.0.rank());
        r.start as usize..r.end as usize
    }

    fn sum(&self, values: &mut [i64]) {
        self.0.allreduce_slice(values, Op::Sum);
    }

    fn max(&self, values: &mut [f64]) {
        self.0.allreduce_slice(values, Op::Max);
    }

    fn before(&self, values: &[i64]) -> Vec<i64> {
        let mut all = vec![0i64; values.len() * self.0.size()];
        self.0.allgather_into(values, &mut all);
        let mut sum = vec![0i64; values.len()];
        for earlier in all.chunks(values.len().max(1)).take(self.0.rank()) {
            sum.iter_mut().zip(earlier).for_each(|(s, v)| *s += v);
        }
        sum
    }

    fn gather(&self, mine: &[u32]) -> Vec<u32> {
        self.0.allgatherv(mine).expect("labels fit one MPI call")
    }

    fn gather_f64(&self, mine: &[f64]) -> Vec<f64> {
        self.0.allgatherv(mine).expect("values fit one MPI call")
    }

    fn agree(&self, mine: crate::error::Result<()>) -> crate::error::Result<()> {
        self.0.agree(mine)
    }
}
