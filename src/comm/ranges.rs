//! A global index space 0..total split into one contiguous range per rank, in rank order
//! (ranges may be empty): the layout of distributed arrays whose lengths differ per rank.

use super::World;

/// The `rank`-th of `parts` contiguous, nearly equal ranges of `0..total`.
pub fn block_range(total: u64, parts: usize, rank: usize) -> std::ops::Range<u64> {
    let at = |r: usize| ((total as u128 * r as u128) / parts as u128) as u64;
    at(rank)..at(rank + 1)
}

#[derive(Clone, Debug)]
pub struct Ranges {
    /// `starts[r]` is rank r's first index; `starts[size]` is the total.
    starts: Vec<u64>,
    rank: usize,
}

impl Ranges {
    /// The layout of arrays of `local_len` items on each rank (collective).
    pub fn of_lengths(world: &World, local_len: u64) -> Ranges {
        let lens = world.allgather(local_len);
        let mut starts = Vec::with_capacity(lens.len() + 1);
        let mut at = 0;
        starts.push(0);
        for len in lens {
            at += len;
            starts.push(at);
        }
        Ranges {
            starts,
            rank: world.rank(),
        }
    }

    /// `total` indices split as `block_range` splits them.
    pub fn even(total: u64, size: usize, rank: usize) -> Ranges {
        let starts = (0..=size)
            .map(|r| block_range(total, size, r.min(size - 1)))
            .enumerate()
            .map(|(r, range)| if r == size { range.end } else { range.start })
            .collect();
        Ranges { starts, rank }
    }

    /// Every rank's first index, then the total.
    pub fn starts(&self) -> &[u64] {
        &self.starts
    }

    pub fn total(&self) -> u64 {
        *self.starts.last().expect("at least one rank")
    }

    /// The rank holding index `i` (< total).
    #[inline]
    pub fn owner(&self, i: u64) -> usize {
        self.starts.partition_point(|&s| s <= i) - 1
    }

    /// This rank's first index.
    #[inline]
    pub fn first(&self) -> u64 {
        self.starts[self.rank]
    }

    pub fn local_len(&self) -> usize {
        (self.starts[self.rank + 1] - self.starts[self.rank]) as usize
    }

    /// This rank's position of global index `i` (which it must hold).
    #[inline]
    pub fn local(&self, i: u64) -> usize {
        (i - self.first()) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_skip_empty_ranges() {
        let r = Ranges {
            starts: vec![0, 0, 5, 5, 9],
            rank: 1,
        };
        assert_eq!(
            (0..9).map(|i| r.owner(i)).collect::<Vec<_>>(),
            [1, 1, 1, 1, 1, 3, 3, 3, 3]
        );
        assert_eq!((r.first(), r.local_len(), r.local(3)), (0, 5, 3));
        let e = Ranges::even(10, 3, 2);
        assert_eq!(e.starts, [0, 3, 6, 10]);
    }
}
