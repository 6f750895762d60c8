//! Exchanges of data that lives in GPU memory, between ranks that each drive one GPU: through
//! NCCL, device to device, or staged through host memory and MPI. `GpuTransport` picks one;
//! the callers are the same for both. The collectives (`alltoallv`, `allgather`) and the
//! point-to-point shift of a halo exchange (`sendrecv`) take any `Item` type: the plain
//! numbers that the GPU, NCCL and MPI all know (pairs of 32-bit ids travel packed in a u64).
//!
//! NCCL is opened at run time like the other CUDA libraries (cudarc, dynamic loading). Its
//! communicator is set up from a unique id that rank 0 makes and broadcasts over MPI. Counts
//! always travel over MPI: they are a few words, and the host needs them to size the transfers.

use super::{run_starts, Comm as MpiComm, Equivalence, GpuTransport, Op};
use crate::device::{gpu_error, grid, Gpu, Kernel};
use crate::error::{Error, Result};
use cudarc::driver::{
    CudaSlice, CudaStream, CudaView, CudaViewMut, DeviceRepr, PushKernelArg, ValidAsZeroBits,
};
use cudarc::nccl::{group_end, group_start, Comm, Id, NcclType};
use std::ops::Range;
use std::sync::Arc;

mod small;

use small::Path;

/// What the GPU exchanges move: u8, u32, u64, i32, i64, f32, f64.
pub trait Item: DeviceRepr + ValidAsZeroBits + NcclType + Equivalence + Copy + Default {}
impl<T: DeviceRepr + ValidAsZeroBits + NcclType + Equivalence + Copy + Default> Item for T {}

/// How an exchange moves its data: staged through host memory over MPI, or GPU to GPU by NCCL.
enum Channel {
    Mpi,
    Nccl(Comm),
}

/// Exchanges among the ranks of one communicator: the world's, or a row or column of the 2D
/// process grid (each with its own NCCL communicator).
pub struct GpuExchange<'w> {
    world: &'w MpiComm,
    stream: Arc<CudaStream>,
    channel: Channel,
    /// The path of the last `alltoallv_runs`, which `reply_runs` takes back.
    last_path: std::cell::Cell<Path>,
}

fn nccl_error(what: &str, e: impl std::fmt::Debug) -> Error {
    gpu_error(format!("NCCL {what}"), e)
}

fn nccl_present() -> bool {
    // SAFETY: only tries to dlopen the NCCL library.
    unsafe { cudarc::nccl::sys::is_culib_present() }
}

/// One peer's share of an all-to-all: its items' places in the send and receive buffers.
#[derive(Debug, PartialEq)]
struct Transfer {
    peer: usize,
    send: Range<usize>,
    recv: Range<usize>,
}

/// The transfers of an all-to-all that sends `send_counts[r]` items to rank r and receives
/// `recv_counts[r]` from it, each run placed after the previous rank's.
fn transfers(send_counts: &[usize], recv_counts: &[usize]) -> Vec<Transfer> {
    let (send_at, recv_at) = (run_starts(send_counts), run_starts(recv_counts));
    (0..send_counts.len())
        .map(|peer| Transfer {
            peer,
            send: send_at[peer]..send_at[peer] + send_counts[peer],
            recv: recv_at[peer]..recv_at[peer] + recv_counts[peer],
        })
        .collect()
}

impl<'w> GpuExchange<'w> {
    /// Set up the transport `setting` asks for. Collective; every rank reaches the same choice
    /// (NCCL needs every rank, so one rank without it decides for all).
    pub fn open(world: &'w MpiComm, gpu: &Gpu, setting: GpuTransport) -> Result<Self> {
        let stream = gpu.stream.clone();
        let everywhere = || world.allreduce(u64::from(nccl_present()), Op::Min) == 1;
        let channel = match setting {
            GpuTransport::Mpi => Channel::Mpi,
            // One rank exchanges with nobody: no communicator needed.
            _ if world.size() == 1 => Channel::Mpi,
            GpuTransport::Auto if !everywhere() => {
                log::info!(
                    "gpu_transport = \"auto\": NCCL (libnccl.so) cannot be loaded on every rank, exchanging through host memory and MPI"
                );
                Channel::Mpi
            }
            GpuTransport::Nccl if !everywhere() => {
                return Err(Error::Unavailable(
                    "gpu_transport = \"nccl\" was requested, but NCCL (libnccl.so) cannot be loaded on every rank: put the directory holding libnccl.so on LD_LIBRARY_PATH, or set gpu_transport = \"mpi\"".into(),
                ))
            }
            GpuTransport::Auto | GpuTransport::Nccl => Channel::Nccl(nccl_comm(world, gpu)?),
        };
        let exchange = GpuExchange {
            world,
            stream,
            channel,
            last_path: std::cell::Cell::new(Path::Nothing),
        };
        if let Channel::Nccl(_) = exchange.channel {
            exchange.connect()?;
        }
        Ok(exchange)
    }

    /// NCCL connects peers on their first transfer, which took a third of a second on two
    /// H200s: one item to every other rank (GPU to GPU, though small exchanges otherwise go
    /// through the host) and one all-gather here keep that out of the timed searches.
    fn connect(&self) -> Result<()> {
        let ranks = self.world.size();
        let alloc = |n| {
            self.stream
                .alloc_zeros::<u64>(n)
                .map_err(|e| gpu_error("allocate NCCL warm-up buffers", e))
        };
        let (send, one, mut recv) = (alloc(ranks)?, alloc(1)?, alloc(ranks)?);
        let mut counts = vec![1; ranks];
        counts[self.world.rank()] = 0;
        let recv_counts = self.world.alltoall_counts(&counts);
        let at = run_starts(&counts);
        self.exchange_runs(&send, (&at, &counts), &recv_counts, &mut recv, Path::Device)?;
        self.allgather(&one, &mut recv)
    }

    /// This rank's place among the exchange's ranks.
    pub fn rank(&self) -> usize {
        self.world.rank()
    }

    /// The transport in use, for provenance: "nccl", "mpi", or "none" on one rank.
    pub fn name(&self) -> &'static str {
        match self.channel {
            _ if self.world.size() == 1 => "none",
            Channel::Mpi => "mpi",
            Channel::Nccl(_) => "nccl",
        }
    }

    fn wait(&self, what: &str) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| gpu_error(format!("wait for the {what}"), e))
    }

    /// Personalised all-to-all: `send` holds the items for rank 0, then rank 1, ..., with
    /// `send_counts[r]` items for rank r. The items received land at the start of `recv` in
    /// source-rank order; returns how many. Collective; returns once `recv` is filled.
    pub fn alltoallv<T: Item>(
        &self,
        send: &CudaSlice<T>,
        send_counts: &[usize],
        recv: &mut CudaSlice<T>,
    ) -> Result<usize> {
        let (recv_counts, path) = self.plan::<T>(send_counts);
        let total: usize = recv_counts.iter().sum();
        fits_receive_buffer(total, recv.len(), "items")?;
        let send_at = run_starts(send_counts);
        self.exchange_runs(send, (&send_at, send_counts), &recv_counts, recv, path)?;
        Ok(total)
    }

    /// `alltoallv` where the run for rank r starts at `send_at[r]` (runs may leave gaps, as
    /// where each rank's items were compacted in place), and `recv` grows to what arrives.
    /// Returns how many items came from each rank. Collective.
    pub fn alltoallv_runs<T: Item>(
        &self,
        send: &CudaSlice<T>,
        (send_at, send_counts): (&[usize], &[usize]),
        recv: &mut CudaSlice<T>,
    ) -> Result<Vec<usize>> {
        let (recv_counts, path) = self.plan::<T>(send_counts);
        self.last_path.set(path);
        let total: usize = recv_counts.iter().sum();
        if total > recv.len() {
            *recv = self
                .stream
                .alloc_zeros(total.next_power_of_two())
                .map_err(|e| gpu_error("grow the receive buffer", e))?;
        }
        self.exchange_runs(send, (send_at, send_counts), &recv_counts, recv, path)?;
        Ok(recv_counts)
    }

    /// Whether any rank sent an item in the last `alltoallv_runs` (every rank knows it from
    /// the counts it gathered: the same answer on all).
    pub fn last_moved(&self) -> bool {
        self.last_path.get() != Path::Nothing
    }

    /// One answer per item of the last `alltoallv_runs` (of the same item type), sent back to
    /// where the item came from: `send` holds `got[r]` answers for rank r (what came from it),
    /// in rank order; rank r's `asked[r]` answers (what went to it) land at the start of
    /// `recv`, in rank order. The counts are that exchange's, transposed, so every rank knows
    /// them and the path is the same: no counts travel. Collective.
    pub fn reply_runs<T: Item>(
        &self,
        send: &CudaSlice<T>,
        got: &[usize],
        asked: &[usize],
        recv: &mut CudaSlice<T>,
    ) -> Result<()> {
        let total: usize = asked.iter().sum();
        fits_receive_buffer(total, recv.len(), "answers")?;
        let at = run_starts(got);
        self.exchange_runs(send, (&at, got), asked, recv, self.last_path.get())
    }

    /// The transfers of an all-to-all whose counts every rank knows, by `path` (every rank
    /// giving the same: a rank that skipped a collective another rank enters would hang them
    /// both).
    fn exchange_runs<T: Item>(
        &self,
        send: &CudaSlice<T>,
        (send_at, send_counts): (&[usize], &[usize]),
        recv_counts: &[usize],
        recv: &mut CudaSlice<T>,
        path: Path,
    ) -> Result<()> {
        let total: usize = recv_counts.iter().sum();
        let sent: usize = send_counts.iter().sum();
        if path == Path::Nothing {
            return Ok(());
        }
        let runs = transfers(send_counts, recv_counts);
        let send_run = |t: &Transfer| send_at[t.peer]..send_at[t.peer] + t.send.len();
        match &self.channel {
            Channel::Nccl(comm) if path == Path::Device => {
                super::count_sent::<T>(send_counts, self.world.rank());
                group_start().map_err(|e| nccl_error("group start", e))?;
                for t in runs {
                    if !t.send.is_empty() {
                        comm.send(&send.slice(send_run(&t)), t.peer as i32)
                            .map_err(|e| nccl_error("send", e))?;
                    }
                    if !t.recv.is_empty() {
                        comm.recv(&mut recv.slice_mut(t.recv), t.peer as i32)
                            .map_err(|e| nccl_error("receive", e))?;
                    }
                }
                group_end().map_err(|e| nccl_error("group end", e))?;
            }
            _ => {
                let mut host = Vec::with_capacity(sent);
                for t in runs.iter().filter(|t| !t.send.is_empty()) {
                    let run = self
                        .stream
                        .clone_dtoh(&send.slice(send_run(t)))
                        .map_err(|e| gpu_error("copy items to send to the host", e))?;
                    host.extend(run);
                }
                let received = self
                    .world
                    .alltoallv_known(&host, send_counts, recv_counts)?;
                if !received.is_empty() {
                    self.stream
                        .memcpy_htod(&received, &mut recv.slice_mut(0..total))
                        .map_err(|e| gpu_error("upload received items", e))?;
                }
            }
        }
        self.wait("exchange")
    }

    /// Every rank's `send` (all the same length), concatenated in rank order into `recv`.
    /// Collective; returns once `recv` is filled.
    pub fn allgather<T: Item>(&self, send: &CudaSlice<T>, recv: &mut CudaSlice<T>) -> Result<()> {
        let items = send.len();
        let recv = &mut recv.slice_mut(0..items * self.world.size());
        match &self.channel {
            Channel::Mpi => {
                let host = self
                    .stream
                    .clone_dtoh(send)
                    .map_err(|e| gpu_error("copy items to gather to the host", e))?;
                let mut all = vec![T::default(); items * self.world.size()];
                self.world.allgather_into(&host, &mut all);
                self.stream
                    .memcpy_htod(&all, recv)
                    .map_err(|e| gpu_error("upload the gathered items", e))?;
            }
            Channel::Nccl(comm) => {
                comm.all_gather(send, recv)
                    .map_err(|e| nccl_error("all-gather", e))?;
            }
        }
        self.wait("all-gather")
    }

    /// Every rank's first `count` items of `send` (counts may differ), concatenated in rank
    /// order at the start of `recv`; returns how many items that is. Collective; returns
    /// once `recv` is filled.
    pub fn allgatherv<T: Item>(
        &self,
        send: &CudaSlice<T>,
        count: usize,
        recv: &mut CudaSlice<T>,
    ) -> Result<usize> {
        let counts: Vec<usize> = self
            .world
            .allgather(count as u64)
            .into_iter()
            .map(|c| c as usize)
            .collect();
        let total: usize = counts.iter().sum();
        if total > recv.len() {
            return Err(Error::Gpu(format!(
                "{total} items to gather exceed the receive buffer of {}",
                recv.len()
            )));
        }
        let at = run_starts(&counts);
        match &self.channel {
            Channel::Mpi => {
                let host = self
                    .stream
                    .clone_dtoh(&send.slice(0..count))
                    .map_err(|e| gpu_error("copy items to gather to the host", e))?;
                let all = self.world.allgatherv(&host)?;
                if total > 0 {
                    self.stream
                        .memcpy_htod(&all, &mut recv.slice_mut(0..total))
                        .map_err(|e| gpu_error("upload the gathered items", e))?;
                }
            }
            Channel::Nccl(comm) => {
                // The own part is copied on the device; every peer gets the same items.
                let me = self.world.rank();
                if count > 0 {
                    self.stream
                        .memcpy_dtod(
                            &send.slice(0..count),
                            &mut recv.slice_mut(at[me]..at[me] + count),
                        )
                        .map_err(|e| gpu_error("copy the own gathered items", e))?;
                }
                group_start().map_err(|e| nccl_error("group start", e))?;
                for peer in (0..counts.len()).filter(|&p| p != me) {
                    if count > 0 {
                        comm.send(&send.slice(0..count), peer as i32)
                            .map_err(|e| nccl_error("send", e))?;
                    }
                    if counts[peer] > 0 {
                        comm.recv(
                            &mut recv.slice_mut(at[peer]..at[peer] + counts[peer]),
                            peer as i32,
                        )
                        .map_err(|e| nccl_error("receive", e))?;
                    }
                }
                group_end().map_err(|e| nccl_error("group end", e))?;
            }
        }
        self.wait("all-gather")?;
        Ok(total)
    }

    /// One shift of a halo exchange: `send` goes to rank `to` while `recv` is filled from
    /// rank `from`, which sends exactly `recv.len()` items (a periodic lattice calls it once
    /// per direction, every rank alike). Returns once `recv` is filled.
    pub fn sendrecv<T: Item>(
        &self,
        send: &CudaView<'_, T>,
        to: usize,
        recv: &mut CudaViewMut<'_, T>,
        from: usize,
    ) -> Result<()> {
        match &self.channel {
            Channel::Mpi => {
                let host = self
                    .stream
                    .clone_dtoh(send)
                    .map_err(|e| gpu_error("copy the halo to send to the host", e))?;
                let mut got = vec![T::default(); recv.len()];
                self.world.sendrecv(&host, to, &mut got, from);
                self.stream
                    .memcpy_htod(&got, recv)
                    .map_err(|e| gpu_error("upload the received halo", e))?;
            }
            Channel::Nccl(comm) => {
                group_start().map_err(|e| nccl_error("group start", e))?;
                comm.send(send, to as i32)
                    .map_err(|e| nccl_error("send", e))?;
                comm.recv(recv, from as i32)
                    .map_err(|e| nccl_error("receive", e))?;
                group_end().map_err(|e| nccl_error("group end", e))?;
            }
        }
        self.wait("halo exchange")
    }
}

/// An NCCL communicator over the ranks of `world`, on this rank's stream.
fn nccl_comm(world: &MpiComm, gpu: &Gpu) -> Result<Comm> {
    // Rank 0 sends the id, or nothing when it could not make one (then every rank fails).
    let mut bytes = if world.is_root() {
        match Id::new() {
            Ok(id) => id.internal().iter().map(|&c| c as u8).collect(),
            Err(e) => {
                log::error!("NCCL unique id: {e:?}");
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    world.broadcast_bytes(&mut bytes);
    let internal: [std::ffi::c_char; 128] = bytes
        .iter()
        .map(|&b| b as std::ffi::c_char)
        .collect::<Vec<_>>()
        .try_into()
        .map_err(|_| Error::Gpu("NCCL: rank 0 could not make a unique id".into()))?;
    gpu.ctx
        .bind_to_thread()
        .map_err(|e| gpu_error("bind the GPU to this thread", e))?;
    Comm::from_rank(
        gpu.stream.clone(),
        world.rank(),
        world.size(),
        Id::uninit(internal),
    )
    .map_err(|e| nccl_error("communicator set-up", e))
}

/// Puts packed pairs (a key in the high half, whose owner rank is key / divisor: a 1D block
/// partition; or entries (u, v) of a 2D grid over those blocks) into runs by owner on the
/// GPU, as `GpuExchange::alltoallv` sends them (kernels in kernels/exchange.cu:
/// warp-aggregated atomics per owner).
pub struct OwnerBuckets {
    count: Kernel,
    cursors: Kernel,
    scatter: Kernel,
    /// Per owner rank its pair count, then per owner rank its scatter cursor (2 × ranks).
    counts: CudaSlice<u64>,
    ranks: u32,
    divisor: u64,
    /// Columns of the 2D grid; 0 for a 1D partition.
    cols: u64,
}

impl OwnerBuckets {
    /// Buckets for `ranks` owners, rank r owning the keys `r * divisor .. (r + 1) * divisor`.
    pub fn new(gpu: &Gpu, ranks: usize, divisor: u64) -> Result<Self> {
        Ok(OwnerBuckets {
            count: gpu.function("exchange.cu", "exchange_count_owners")?,
            cursors: gpu.function("exchange.cu", "exchange_owner_cursors")?,
            scatter: gpu.function("exchange.cu", "exchange_scatter_owners")?,
            counts: gpu.zeros("owner counts", 2 * ranks)?,
            ranks: ranks as u32,
            divisor,
            cols: 0,
        })
    }

    /// Buckets for the entries (u, v) of an R × `cols` grid of `ranks` processes over blocks
    /// of `divisor` vertices: each goes to `Layout2D::entry_rank(u, v)`.
    pub fn grid(gpu: &Gpu, ranks: usize, cols: usize, divisor: u64) -> Result<Self> {
        let mut buckets = OwnerBuckets::new(gpu, ranks, divisor)?;
        buckets.cols = cols as u64;
        Ok(buckets)
    }

    /// Put the first `count` pairs of `pairs` into runs by owner rank in `out`; returns the
    /// runs' lengths.
    pub fn bucket(
        &mut self,
        gpu: &Gpu,
        pairs: &CudaSlice<u64>,
        count: u64,
        out: &mut CudaSlice<u64>,
    ) -> Result<Vec<usize>> {
        let s = &gpu.stream;
        s.memset_zeros(&mut self.counts)
            .map_err(|e| gpu_error("reset owner counts", e))?;
        // Argument lists as in kernels/exchange.cu.
        gpu.launch(&self.count, grid(count), |b| {
            b.arg(pairs)
                .arg(&count)
                .arg(&self.divisor)
                .arg(&self.cols)
                .arg(&mut self.counts);
        })?;
        gpu.launch(&self.cursors, grid(1), |b| {
            b.arg(&mut self.counts).arg(&self.ranks);
        })?;
        let ranks = self.ranks as usize;
        let mut cursors = self.counts.slice_mut(ranks..);
        gpu.launch(&self.scatter, grid(count), |b| {
            b.arg(pairs)
                .arg(&count)
                .arg(&self.divisor)
                .arg(&self.cols)
                .arg(&mut cursors)
                .arg(out);
        })?;
        // One host round trip: the counts, after the scatter (the download waits for it).
        let counts: Vec<usize> = gpu
            .download("owner counts", &self.counts, ranks)?
            .into_iter()
            .map(|c| c as usize)
            .collect();
        Ok(counts)
    }
}

/// The runs of `count` pairs that are all for ranks other than `me`, out of `ranks`: with
/// one other rank, or no pairs, they are already its run (nothing to move, `false`); else
/// `owners` puts them into runs in `out` (`true`). Returns the runs' lengths too.
pub fn remote_runs(
    gpu: &Gpu,
    owners: &mut OwnerBuckets,
    (pairs, count): (&CudaSlice<u64>, u64),
    out: &mut CudaSlice<u64>,
    (me, ranks): (usize, usize),
) -> Result<(bool, Vec<usize>)> {
    if ranks == 2 || count == 0 {
        let mut counts = vec![0; ranks];
        counts[(me + 1) % ranks] = count as usize;
        return Ok((false, counts));
    }
    Ok((true, owners.bucket(gpu, pairs, count, out)?))
}

/// An error unless `total` received `what` fit a receive buffer of `len`.
fn fits_receive_buffer(total: usize, len: usize, what: &str) -> Result<()> {
    if total > len {
        return Err(Error::Gpu(format!(
            "{total} {what} to receive exceed the receive buffer of {len}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfers_place_each_peer_after_the_ranks_before_it() {
        let t = transfers(&[2, 0, 3], &[1, 4, 0]);
        assert_eq!(
            t,
            vec![
                Transfer {
                    peer: 0,
                    send: 0..2,
                    recv: 0..1
                },
                Transfer {
                    peer: 1,
                    send: 2..2,
                    recv: 1..5
                },
                Transfer {
                    peer: 2,
                    send: 2..5,
                    recv: 5..5
                },
            ]
        );
    }

    /// The element types the exchanges promise, checked at compile time.
    #[test]
    fn exchanges_take_the_plain_number_types() {
        fn item<T: Item>() {}
        item::<u8>();
        item::<u32>();
        item::<u64>();
        item::<i64>();
        item::<f32>();
        item::<f64>();
    }
}
