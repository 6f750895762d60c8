//! The collectives the mesh layer's distributed parts call (the partitioner, the readers of
//! files in parts): `Serial` for one rank, `distributed::MpiRanks` over MPI, and in tests
//! threads as ranks (`threads`).

use crate::error::Result;
use std::ops::Range;

/// What the partitioner and the readers need of the ranks: collectives over them, which
/// every rank calls in the same order.
pub trait Ranks {
    /// The nodes whose part this rank computes.
    fn range(&self, n: usize) -> Range<usize>;
    /// Element-wise sums over the ranks, in place.
    fn sum(&self, values: &mut [i64]);
    /// Element-wise maxima over the ranks, in place.
    fn max(&self, values: &mut [f64]);
    /// Element-wise sums over the ranks before this one (exclusive prefix).
    fn before(&self, values: &[i64]) -> Vec<i64>;
    /// Every rank's labels concatenated in rank order.
    fn gather(&self, mine: &[u32]) -> Vec<u32>;
    /// Every rank's values concatenated in rank order.
    fn gather_f64(&self, mine: &[f64]) -> Vec<f64>;
    /// The error of the lowest failing rank on every rank, or Ok where none failed.
    fn agree(&self, mine: Result<()>) -> Result<()>;
}

/// One rank computing everything.
pub struct Serial;

impl Ranks for Serial {
    fn range(&self, n: usize) -> Range<usize> {
        0..n
    }
    fn sum(&self, _values: &mut [i64]) {}
    fn max(&self, _values: &mut [f64]) {}
    fn before(&self, values: &[i64]) -> Vec<i64> {
        vec![0; values.len()]
    }
    fn gather(&self, mine: &[u32]) -> Vec<u32> {
        mine.to_vec()
    }
    fn gather_f64(&self, mine: &[f64]) -> Vec<f64> {
        mine.to_vec()
    }
    fn agree(&self, mine: Result<()>) -> Result<()> {
        mine
    }
}

/// Ranks as threads of one process, for tests of the distributed code without MPI.
#[cfg(test)]
pub mod threads {
    use super::Ranks;
    use crate::error::Result;
    use std::ops::Range;

    /// Ranks as threads of one process: each collective puts every rank's words on a board.
    pub struct Board {
        barrier: std::sync::Barrier,
        slots: std::sync::Mutex<Vec<Vec<u64>>>,
    }

    struct Threads<'b> {
        rank: usize,
        size: usize,
        board: &'b Board,
    }

    impl Threads<'_> {
        fn all(&self, mine: Vec<u64>) -> Vec<Vec<u64>> {
            self.board.slots.lock().unwrap()[self.rank] = mine;
            self.board.barrier.wait();
            let all = self.board.slots.lock().unwrap().clone();
            self.board.barrier.wait();
            all
        }
    }

    impl Ranks for Threads<'_> {
        fn range(&self, n: usize) -> Range<usize> {
            let r = crate::comm::ranges::block_range(n as u64, self.size, self.rank);
            r.start as usize..r.end as usize
        }
        fn sum(&self, values: &mut [i64]) {
            let all = self.all(values.iter().map(|&v| v as u64).collect());
            for (i, v) in values.iter_mut().enumerate() {
                *v = all.iter().map(|a| a[i] as i64).sum();
            }
        }
        fn max(&self, values: &mut [f64]) {
            let all = self.all(values.iter().map(|v| v.to_bits()).collect());
            for (i, v) in values.iter_mut().enumerate() {
                *v = all
                    .iter()
                    .map(|a| f64::from_bits(a[i]))
                    .fold(f64::NEG_INFINITY, f64::max);
            }
        }
        fn before(&self, values: &[i64]) -> Vec<i64> {
            let all = self.all(values.iter().map(|&v| v as u64).collect());
            (0..values.len())
                .map(|i| all[..self.rank].iter().map(|a| a[i] as i64).sum())
                .collect()
        }
        fn gather(&self, mine: &[u32]) -> Vec<u32> {
            let all = self.all(mine.iter().map(|&v| u64::from(v)).collect());
            all.concat().into_iter().map(|v| v as u32).collect()
        }
        fn gather_f64(&self, mine: &[f64]) -> Vec<f64> {
            let all = self.all(mine.iter().map(|v| v.to_bits()).collect());
            all.concat().into_iter().map(f64::from_bits).collect()
        }
        fn agree(&self, mine: Result<()>) -> Result<()> {
            let words = match &mine {
                Ok(()) => vec![0],
                Err(e) => std::iter::once(1)
                    .chain(e.to_string().bytes().map(u64::from))
                    .collect(),
            };
            match self.all(words).into_iter().find(|w| w[0] == 1) {
                None => Ok(()),
                Some(w) => {
                    let bytes: Vec<u8> = w[1..].iter().map(|&b| b as u8).collect();
                    Err(crate::error::Error::Agreed(
                        String::from_utf8_lossy(&bytes).into_owned(),
                    ))
                }
            }
        }
    }

    /// `f` on `np` threads as ranks: every rank's result, in rank order.
    pub fn on_ranks<T: Send>(np: usize, f: impl Fn(&dyn Ranks) -> T + Sync) -> Vec<T> {
        let board = Board {
            barrier: std::sync::Barrier::new(np),
            slots: std::sync::Mutex::new(vec![Vec::new(); np]),
        };
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..np)
                .map(|rank| {
                    let (board, f) = (&board, &f);
                    s.spawn(move || {
                        f(&Threads {
                            rank,
                            size: np,
                            board,
                        })
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }
}
