//! Small all-to-alls through host memory and MPI, even where NCCL carries the big ones. An
//! NCCL group of sends and receives costs a fixed latency (the tiny first and last levels of
//! a 2-GPU BFS spent 0.24-0.28 ms each in their exchange, docs/benchmarks.md), while a few
//! kilobytes copied to the host, moved by MPI and copied back take tens of microseconds.

use super::{Channel, GpuExchange};
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
    /// What this rank receives from each rank in an all-to-all that sends `send_counts[r]`
    /// items of type T to rank r, and how the exchange travels: the same path on every rank,
    /// since the largest part over the ranks decides. One collective over the exchange's
    /// ranks: every rank's counts are gathered (ranks² words), so that the receive counts and
    /// the path need no second one.
    pub(super) fn plan<T>(&self, send_counts: &[usize]) -> (Vec<usize>, Path) {
        let mine: Vec<u64> = send_counts.iter().map(|&c| c as u64).collect();
        let mut matrix = vec![0u64; mine.len() * self.world.size()];
        self.world.allgather_into(&mine, &mut matrix);
        let me = (self.world.rank(), self.world.size());
        let (recv_counts, most) = read_counts(&matrix, me, size_of::<T>());
        let path = if most == 0 {
            Path::Nothing
        } else if is_small(most) || matches!(self.channel, Channel::Mpi) {
            Path::Host
        } else {
            Path::Device
        };
        (recv_counts, path)
    }
}

/// From the gathered counts of `ranks` ranks (`matrix[s * ranks + d]`: items rank s sends
/// rank d), what rank `me` receives from each rank, and the most bytes (`item_bytes` an
/// item) any rank sends and receives together.
fn read_counts(
    matrix: &[u64],
    (me, ranks): (usize, usize),
    item_bytes: usize,
) -> (Vec<usize>, u64) {
    let recv = |r: usize| (0..ranks).map(|s| matrix[s * ranks + r]).sum::<u64>();
    let sent = |r: usize| matrix[r * ranks..(r + 1) * ranks].iter().sum::<u64>();
    let most = (0..ranks).map(|r| sent(r) + recv(r)).max().unwrap_or(0);
    let mine = (0..ranks)
        .map(|s| matrix[s * ranks + me] as usize)
        .collect();
    (mine, most * item_bytes as u64)
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

    #[test]
    fn gathered_counts_give_each_rank_its_receipts_and_the_busiest_rank() {
        // Rank 0 sends 1 to rank 1 and 2 to rank 2; rank 1 sends 5 to rank 0; rank 2 none.
        let matrix = [0, 1, 2, 5, 0, 0, 0, 0, 0];
        assert_eq!(read_counts(&matrix, (0, 3), 8), (vec![0, 5, 0], 8 * 8));
        assert_eq!(read_counts(&matrix, (1, 3), 8).0, vec![1, 0, 0]);
        assert_eq!(read_counts(&matrix, (2, 3), 4), (vec![2, 0, 0], 8 * 4));
        assert_eq!(read_counts(&[0], (0, 1), 8), (vec![0], 0));
    }
}
