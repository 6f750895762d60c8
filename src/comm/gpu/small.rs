//! Small all-to-alls through host memory and MPI, even where NCCL carries the big ones. An
//! NCCL group of sends and receives costs a fixed latency (the tiny first and last levels of
//! a 2-GPU BFS spent 0.24-0.28 ms each in their exchange, docs/benchmarks.md), while a few
//! kilobytes copied to the host, moved by MPI and copied back take tens of microseconds.

use super::{Channel, GpuExchange, Op};
use std::mem::size_of;

/// Bytes a rank may send and receive together in one all-to-all that goes through MPI
/// rather than NCCL (the largest over the ranks decides, so every rank takes the same path).
pub const SMALL_EXCHANGE_BYTES: usize = 1 << 16;

/// Whether an all-to-all whose largest part over the ranks (sent and received together) is
/// `most_bytes` is one of the small ones.
pub fn is_small(most_bytes: u64) -> bool {
    most_bytes <= SMALL_EXCHANGE_BYTES as u64
}

/// How an all-to-all travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// No rank moves an item.
    Nothing,
    /// Through host memory and MPI (the MPI channel, or a small exchange).
    Host,
    /// GPU to GPU (NCCL).
    Device,
}

impl GpuExchange<'_> {
    /// How this all-to-all (`sent` and `received` items of type T on this rank) travels: the
    /// same answer on every rank, since the largest part over the ranks decides. Collective
    /// over the exchange's ranks.
    pub(super) fn path<T>(&self, sent: usize, received: usize) -> Path {
        let mine = ((sent + received) * size_of::<T>()) as u64;
        let most = self.world.allreduce(mine, Op::Max);
        if most == 0 {
            Path::Nothing
        } else if is_small(most) || matches!(self.channel, Channel::Mpi) {
            Path::Host
        } else {
            Path::Device
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exchanges_up_to_64_kib_a_rank_are_small() {
        assert!(is_small(8000));
        assert!(is_small(1 << 16));
        assert!(!is_small((1 << 16) + 1));
    }
}
