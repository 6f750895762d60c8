//! Small all-to-alls through host memory and MPI, even where NCCL carries the big ones. An
//! NCCL group of sends and receives costs a fixed latency (the tiny first and last levels of
//! a 2-GPU BFS spent 0.24-0.28 ms each in their exchange, docs/benchmarks.md), while a few
//! kilobytes copied to the host, moved by MPI and copied back take tens of microseconds.

use super::{GpuExchange, Op};
use std::mem::size_of;

/// Bytes a rank may send and receive together in one all-to-all that goes through MPI
/// rather than NCCL (the largest over the ranks decides, so every rank takes the same path).
pub const SMALL_EXCHANGE_BYTES: usize = 1 << 16;

/// Whether an all-to-all of `items` items of `item_bytes` each (this rank's sent and
/// received together) is one of the small ones on every rank.
pub fn is_small(items: usize, item_bytes: usize, most_over_ranks: impl Fn(u64) -> u64) -> bool {
    most_over_ranks((items * item_bytes) as u64) <= SMALL_EXCHANGE_BYTES as u64
}

impl GpuExchange<'_> {
    /// Whether this all-to-all (`sent` and `received` items of type T on this rank) goes
    /// through host memory and MPI on the NCCL channel: where it is small on every rank.
    /// Collective over the exchange's ranks.
    pub(super) fn through_host<T>(&self, sent: usize, received: usize) -> bool {
        is_small(sent + received, size_of::<T>(), |bytes| {
            self.world.allreduce(bytes, Op::Max)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_rank_decides_whether_an_exchange_is_small() {
        assert!(is_small(1000, 8, |b| b));
        assert!(is_small(8192, 8, |b| b));
        assert!(!is_small(8193, 8, |b| b));
        // This rank's few items do not decide when another rank moves many.
        assert!(!is_small(1, 8, |_| 1 << 20));
    }
}
