//! Cluster statistics of one labelling over the whole lattice: the number of clusters, the
//! occupied sites, the sum of squared sizes, a histogram of sizes in power-of-two bins, the
//! largest cluster (ties: the smallest label) with the axes it wraps or spans, and the axes
//! any cluster wraps or spans.
//!
//! Each rank tallies its interior clusters (those touching no face of its slab, final as the
//! local labelling left them); rank 0 tallies the clusters of the boundary graph, whose sizes
//! are the sums of their nodes' local sizes; one reduction adds the tallies. Squared sizes are
//! summed modulo 2^64, which keeps the sum exact for what is reported: the sum without the
//! largest cluster, below 2^64 for any lattice of fewer than 2^33 sites.

use crate::comm::{Op, World};

/// Bins of the size histogram: bin k counts clusters of 2^k to 2^(k+1) - 1 sites.
pub const SIZE_BINS: usize = 64;

/// A cluster as a candidate for the largest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cluster {
    pub size: u64,
    pub label: u64,
    /// Bit a: wraps (periodic lattice) or spans (open lattice) axis a.
    pub percolates: u8,
}

impl Cluster {
    /// Larger, or as large with a smaller label (so the choice is the same on any ranks).
    fn beats(&self, other: &Cluster) -> bool {
        (self.size, std::cmp::Reverse(self.label)) > (other.size, std::cmp::Reverse(other.label))
    }
}

/// Clusters counted so far (one rank's share before `reduce`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterStats {
    pub clusters: u64,
    /// Occupied sites (the sum of the sizes).
    pub sites: u64,
    /// Sum of squared sizes, modulo 2^64.
    pub sum_squares: u64,
    pub histogram: Vec<u64>,
    pub largest: Cluster,
    /// Bit a: some cluster wraps or spans axis a.
    pub percolates_any: u8,
}

impl Default for ClusterStats {
    fn default() -> Self {
        ClusterStats {
            clusters: 0,
            sites: 0,
            sum_squares: 0,
            histogram: vec![0; SIZE_BINS],
            largest: Cluster::default(),
            percolates_any: 0,
        }
    }
}

/// The histogram bin of a cluster of `size` >= 1 sites.
pub fn size_bin(size: u64) -> usize {
    63 - size.leading_zeros() as usize
}

impl ClusterStats {
    pub fn add(&mut self, c: Cluster) {
        self.clusters += 1;
        self.sites += c.size;
        self.sum_squares = self.sum_squares.wrapping_add(c.size.wrapping_mul(c.size));
        self.histogram[size_bin(c.size)] += 1;
        self.percolates_any |= c.percolates;
        if c.beats(&self.largest) {
            self.largest = c;
        }
    }

    /// Add another tally (counts and histogram; the larger of the largest).
    pub fn merge(&mut self, other: &ClusterStats) {
        self.clusters += other.clusters;
        self.sites += other.sites;
        self.sum_squares = self.sum_squares.wrapping_add(other.sum_squares);
        for (a, b) in self.histogram.iter_mut().zip(&other.histogram) {
            *a += b;
        }
        self.percolates_any |= other.percolates_any;
        if other.largest.beats(&self.largest) {
            self.largest = other.largest;
        }
    }

    /// The tallies of all ranks added, on every rank (collective).
    pub fn reduce(&self, world: &World) -> ClusterStats {
        let mut sums = vec![self.clusters, self.sites, self.sum_squares];
        sums.extend(&self.histogram);
        world.allreduce_slice(&mut sums, Op::Sum);
        let l = self.largest;
        let mut all = vec![0; 3 * world.size()];
        world.allgather_into(&[l.size, l.label, u64::from(l.percolates)], &mut all);
        let largest = all
            .chunks(3)
            .map(|c| Cluster {
                size: c[0],
                label: c[1],
                percolates: c[2] as u8,
            })
            .fold(
                Cluster::default(),
                |best, c| if c.beats(&best) { c } else { best },
            );
        ClusterStats {
            clusters: sums[0],
            sites: sums[1],
            sum_squares: sums[2],
            histogram: sums[3..].to_vec(),
            largest,
            percolates_any: world.allreduce(self.percolates_any, Op::BitOr),
        }
    }

    /// Mean size of the cluster of an occupied site outside the largest cluster,
    /// sum' s^2 / sum' s (the percolation susceptibility's mean cluster size); 0 when the
    /// largest cluster holds every occupied site.
    pub fn mean_size_without_largest(&self) -> f64 {
        let s = self.largest.size;
        let rest = self.sites - s;
        if rest == 0 {
            return 0.0;
        }
        self.sum_squares.wrapping_sub(s.wrapping_mul(s)) as f64 / rest as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_is_the_biggest_then_the_first() {
        let mut t = ClusterStats::default();
        for (size, label) in [(3, 9), (5, 7), (5, 2), (1, 0)] {
            t.add(Cluster {
                size,
                label,
                percolates: 0,
            });
        }
        assert_eq!((t.largest.size, t.largest.label), (5, 2));
        assert_eq!((t.clusters, t.sites, t.sum_squares), (4, 14, 60));
        assert_eq!(t.histogram[..4], [1, 1, 2, 0]);
        assert_eq!(t.mean_size_without_largest(), 35.0 / 9.0);
    }
}
