//! Exchanges of data that lives in GPU memory, between ranks that each drive one GPU: through
//! NCCL, device to device, or staged through host memory and MPI. `gpu_transport` in `[run]`
//! picks one; the callers are the same for both.
//!
//! NCCL is opened at run time like the other CUDA libraries (cudarc, dynamic loading). Its
//! communicator is set up from a unique id that rank 0 makes and broadcasts over MPI. Counts
//! always travel over MPI: they are a few words, and the host needs them to size the transfers.

use super::{run_starts, Op, World};
use crate::config::GpuTransport;
use crate::device::{gpu_error, grid, Gpu};
use crate::error::{Error, Result};
use crate::graph::Block1D;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, PushKernelArg};
use cudarc::nccl::{group_end, group_start, Comm, Id};
use std::sync::Arc;

enum Via {
    Mpi,
    Nccl(Comm),
}

pub struct GpuExchange<'w> {
    world: &'w World,
    stream: Arc<CudaStream>,
    via: Via,
}

fn nccl_error(what: &str, e: impl std::fmt::Debug) -> Error {
    gpu_error(format!("NCCL {what}"), e)
}

fn nccl_present() -> bool {
    // SAFETY: only tries to dlopen the NCCL library.
    unsafe { cudarc::nccl::sys::is_culib_present() }
}

impl<'w> GpuExchange<'w> {
    /// Set up the transport `setting` asks for. Collective; every rank reaches the same choice
    /// (NCCL needs every rank, so one rank without it decides for all).
    pub fn open(world: &'w World, gpu: &Gpu, setting: GpuTransport) -> Result<Self> {
        let stream = gpu.stream.clone();
        let everywhere = || world.allreduce(u64::from(nccl_present()), Op::Min) == 1;
        let via = match setting {
            GpuTransport::Mpi => Via::Mpi,
            // One rank exchanges with nobody: no communicator needed.
            _ if world.size() == 1 => Via::Mpi,
            GpuTransport::Auto if !everywhere() => {
                log::info!(
                    "gpu_transport = \"auto\": NCCL (libnccl.so) cannot be loaded on every rank, exchanging through host memory and MPI"
                );
                Via::Mpi
            }
            GpuTransport::Nccl if !everywhere() => {
                return Err(Error::Unavailable(
                    "gpu_transport = \"nccl\" was requested, but NCCL (libnccl.so) cannot be loaded on every rank: put the directory holding libnccl.so on LD_LIBRARY_PATH, or set gpu_transport = \"mpi\"".into(),
                ))
            }
            GpuTransport::Auto | GpuTransport::Nccl => Via::Nccl(nccl_comm(world, gpu)?),
        };
        let exchange = GpuExchange { world, stream, via };
        if let Via::Nccl(_) = exchange.via {
            exchange.connect()?;
        }
        Ok(exchange)
    }

    /// NCCL connects peers on their first transfer, which took a third of a second on two
    /// H200s: one item to every other rank and one all-gather here keep that out of the
    /// timed searches.
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
        self.alltoallv(&send, &counts, &mut recv)?;
        self.allgather(&one, &mut recv)
    }

    /// The transport in use, for provenance: "nccl", "mpi", or "none" on one rank.
    pub fn name(&self) -> &'static str {
        match self.via {
            _ if self.world.size() == 1 => "none",
            Via::Mpi => "mpi",
            Via::Nccl(_) => "nccl",
        }
    }

    /// Personalised all-to-all: `send` holds the items for rank 0, then rank 1, ..., with
    /// `send_counts[r]` items for rank r. The items received land at the start of `recv` in
    /// source-rank order; returns how many. Collective; returns once `recv` is filled.
    pub fn alltoallv(
        &self,
        send: &CudaSlice<u64>,
        send_counts: &[usize],
        recv: &mut CudaSlice<u64>,
    ) -> Result<usize> {
        let recv_counts = self.world.alltoall_counts(send_counts);
        let total: usize = recv_counts.iter().sum();
        if total > recv.len() {
            return Err(Error::Gpu(format!(
                "{total} items to receive exceed the receive buffer of {}",
                recv.len()
            )));
        }
        let sent: usize = send_counts.iter().sum();
        match &self.via {
            Via::Mpi => {
                let host = self
                    .stream
                    .clone_dtoh(&send.slice(0..sent))
                    .map_err(|e| gpu_error("copy items to send to the host", e))?;
                let received = self
                    .world
                    .alltoallv_known(&host, send_counts, &recv_counts)?;
                if !received.is_empty() {
                    self.stream
                        .memcpy_htod(&received, &mut recv.slice_mut(0..total))
                        .map_err(|e| gpu_error("upload received items", e))?;
                }
            }
            Via::Nccl(comm) => {
                let send_at = run_starts(send_counts);
                let recv_at = run_starts(&recv_counts);
                group_start().map_err(|e| nccl_error("group start", e))?;
                for peer in 0..self.world.size() {
                    let (s, r) = (send_counts[peer], recv_counts[peer]);
                    if s > 0 {
                        comm.send(&send.slice(send_at[peer]..send_at[peer] + s), peer as i32)
                            .map_err(|e| nccl_error("send", e))?;
                    }
                    if r > 0 {
                        comm.recv(
                            &mut recv.slice_mut(recv_at[peer]..recv_at[peer] + r),
                            peer as i32,
                        )
                        .map_err(|e| nccl_error("receive", e))?;
                    }
                }
                group_end().map_err(|e| nccl_error("group end", e))?;
            }
        }
        self.stream
            .synchronize()
            .map_err(|e| gpu_error("wait for the exchange", e))?;
        Ok(total)
    }

    /// Every rank's `send` (all the same length), concatenated in rank order into `recv`.
    /// Collective; returns once `recv` is filled.
    pub fn allgather(&self, send: &CudaSlice<u64>, recv: &mut CudaSlice<u64>) -> Result<()> {
        let words = send.len();
        let recv = &mut recv.slice_mut(0..words * self.world.size());
        match &self.via {
            Via::Mpi => {
                let host = self
                    .stream
                    .clone_dtoh(send)
                    .map_err(|e| gpu_error("copy the bitmap to the host", e))?;
                let mut all = vec![0u64; words * self.world.size()];
                self.world.allgather_into(&host, &mut all);
                self.stream
                    .memcpy_htod(&all, recv)
                    .map_err(|e| gpu_error("upload the gathered bitmap", e))?;
            }
            Via::Nccl(comm) => {
                comm.all_gather(send, recv)
                    .map_err(|e| nccl_error("all-gather", e))?;
            }
        }
        self.stream
            .synchronize()
            .map_err(|e| gpu_error("wait for the all-gather", e))
    }
}

/// A communicator over all ranks, on this rank's stream.
fn nccl_comm(world: &World, gpu: &Gpu) -> Result<Comm> {
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

/// Puts packed pairs (a vertex in the high half, which names the owner rank) into runs by
/// owner on the GPU, as `GpuExchange::alltoallv` sends them (kernels `bfs_count_owners` and
/// `bfs_scatter_owners` in kernels/bfs.cu: warp-aggregated atomics per owner).
pub struct OwnerBuckets {
    count: CudaFunction,
    scatter: CudaFunction,
    /// Per owner rank: pair counts, then the scatter cursors.
    counts: CudaSlice<u64>,
    block: u64,
}

impl OwnerBuckets {
    pub fn new(gpu: &Gpu, part: &Block1D) -> Result<Self> {
        Ok(OwnerBuckets {
            count: gpu.function("bfs.cu", "bfs_count_owners")?,
            scatter: gpu.function("bfs.cu", "bfs_scatter_owners")?,
            counts: gpu
                .stream
                .alloc_zeros::<u64>(part.size)
                .map_err(|e| gpu_error("allocate owner counts", e))?,
            block: part.block,
        })
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
        let mut b = s.launch_builder(&self.count);
        b.arg(pairs)
            .arg(&count)
            .arg(&self.block)
            .arg(&mut self.counts);
        // SAFETY: argument types match the kernel's signature in kernels/bfs.cu.
        unsafe { b.launch(grid(count)) }.map_err(|e| gpu_error("launch bfs_count_owners", e))?;
        let counts: Vec<usize> = s
            .clone_dtoh(&self.counts)
            .map_err(|e| gpu_error("read owner counts", e))?
            .into_iter()
            .map(|c| c as usize)
            .collect();
        let cursors: Vec<u64> = run_starts(&counts).into_iter().map(|c| c as u64).collect();
        s.memcpy_htod(&cursors, &mut self.counts)
            .map_err(|e| gpu_error("upload owner cursors", e))?;
        let mut b = s.launch_builder(&self.scatter);
        b.arg(pairs)
            .arg(&count)
            .arg(&self.block)
            .arg(&mut self.counts)
            .arg(out);
        // SAFETY: argument types match the kernel's signature in kernels/bfs.cu.
        unsafe { b.launch(grid(count)) }.map_err(|e| gpu_error("launch bfs_scatter_owners", e))?;
        s.synchronize()
            .map_err(|e| gpu_error("bfs_scatter_owners", e))?;
        Ok(counts)
    }
}
