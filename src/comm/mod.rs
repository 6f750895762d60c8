//! The MPI layer: the world (rank, size, node-local rank), typed collectives for the
//! workloads, per-phase timers and the abort path. Algorithms talk to MPI only through here.

pub mod file_parts;
pub mod gpu;
mod grid;
pub mod ranges;
mod timer;

pub use grid::Grid;

pub use timer::PhaseTimes;

use crate::error::{Error, Result};
use mpi::collective::SystemOperation;
pub use mpi::datatype::Equivalence;
use mpi::datatype::{Partition, PartitionMut};
use mpi::environment::Universe;
use mpi::point_to_point::MatchedReceiveVec;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use mpi::Count;
use rayon::prelude::*;

/// Where each run starts in a buffer of consecutive runs of `counts` items (exclusive sum).
pub fn run_starts(counts: &[usize]) -> Vec<usize> {
    counts
        .iter()
        .scan(0, |at, &c| {
            let start = *at;
            *at += c;
            Some(start)
        })
        .collect()
}

/// How GPU ranks exchange device data: NCCL device to device, or staged through host memory
/// and MPI. `auto` takes NCCL when it can be loaded on every rank.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum GpuTransport {
    Auto,
    Nccl,
    Mpi,
}

/// Two ids travelling together in one message: (vertex, parent), (source, target).
#[derive(Equivalence, Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Pair(pub u64, pub u64);

/// Three ids travelling together in one message: (vertex, dart, other end), (position, edge,
/// vertex).
#[derive(Equivalence, Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Triple(pub u64, pub u64, pub u64);

/// Four ids travelling together in one message: a walker's (position, origin, sum, end).
#[derive(Equivalence, Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Quad(pub u64, pub u64, pub u64, pub u64);

/// Bytes this process has sent to other ranks: the host all-to-alls (`route`, `query`, the
/// host-staged GPU exchanges) and NCCL's; read before and after a phase for its traffic.
static SENT_BYTES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Bytes this process has sent to other ranks so far (`SENT_BYTES`).
pub fn bytes_sent() -> u64 {
    SENT_BYTES.load(std::sync::atomic::Ordering::Relaxed)
}

/// Count `items` of `T` sent to ranks other than `me`, `counts[r]` to rank r.
fn count_sent<T>(counts: &[usize], me: usize) {
    let items: usize = counts
        .iter()
        .enumerate()
        .filter(|&(r, _)| r != me)
        .map(|(_, &c)| c)
        .sum();
    let bytes = (items * std::mem::size_of::<T>()) as u64;
    SENT_BYTES.fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
}

/// Reduction operations offered to the algorithms.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    Sum,
    Max,
    Min,
    BitOr,
}

impl Op {
    fn system(self) -> SystemOperation {
        match self {
            Op::Sum => SystemOperation::sum(),
            Op::Max => SystemOperation::max(),
            Op::Min => SystemOperation::min(),
            Op::BitOr => SystemOperation::bitwise_or(),
        }
    }
}

/// A communicator and this rank's place in it, with the typed collectives the algorithms use:
/// the world's (through `World`), or a row or column of the 2D process grid (`grid::Grid`).
pub struct Comm {
    comm: SimpleCommunicator,
    rank: usize,
    size: usize,
}

pub struct World {
    // Dropping the universe finalises MPI; it must outlive every communicator use.
    _universe: Universe,
    comm: Comm,
    local_rank: usize,
    local_size: usize,
}

impl std::ops::Deref for World {
    type Target = Comm;
    fn deref(&self) -> &Comm {
        &self.comm
    }
}

impl World {
    /// Initialise MPI (once per process). Returns None if MPI was already initialised.
    pub fn init() -> Option<World> {
        let universe = mpi::initialize()?;
        let comm = Comm::of(universe.world());
        // Ranks sharing a node: used to split the cores (and later the GPUs) between them.
        let node = comm.comm.split_shared(comm.rank as i32);
        let local_rank = node.rank() as usize;
        let local_size = node.size() as usize;
        Some(World {
            _universe: universe,
            comm,
            local_rank,
            local_size,
        })
    }

    /// This rank's index among the ranks on its node (selects its GPU).
    pub fn local_rank(&self) -> usize {
        self.local_rank
    }
    /// How many ranks share this node.
    pub fn local_size(&self) -> usize {
        self.local_size
    }
}

impl crate::device::Ranks for World {
    fn rank(&self) -> usize {
        self.comm.rank()
    }
    fn size(&self) -> usize {
        self.comm.size()
    }
    fn local_rank(&self) -> usize {
        self.local_rank
    }
    fn local_size(&self) -> usize {
        self.local_size
    }
    fn all(&self, yes: bool) -> bool {
        self.comm.allreduce(u64::from(yes), Op::Min) == 1
    }
}

impl Comm {
    fn of(comm: SimpleCommunicator) -> Comm {
        let (rank, size) = (comm.rank() as usize, comm.size() as usize);
        Comm { comm, rank, size }
    }

    /// The ranks of this communicator that give the same `color`, ordered by `key`
    /// (collective: MPI_Comm_split).
    pub fn split(&self, color: usize, key: usize) -> Comm {
        let comm = self
            .comm
            .split_by_color_with_key(
                mpi::topology::Color::with_value(color as i32),
                key as mpi::topology::Key,
            )
            .expect("a split with a defined colour returns a communicator");
        Comm::of(comm)
    }

    pub fn rank(&self) -> usize {
        self.rank
    }
    pub fn size(&self) -> usize {
        self.size
    }
    pub fn is_root(&self) -> bool {
        self.rank == 0
    }

    pub fn barrier(&self) {
        self.comm.barrier();
    }

    /// End the whole job from this rank: used when only this rank knows something failed.
    pub fn abort(&self, code: i32) -> ! {
        self.comm.abort(code)
    }

    pub fn allreduce<T: Equivalence + Copy + Default>(&self, x: T, op: Op) -> T {
        let mut out = T::default();
        self.comm.all_reduce_into(&x, &mut out, op.system());
        out
    }

    /// Element-wise reduction of a slice, in place (on one rank nothing to do: no copy of
    /// what may be gigabytes).
    pub fn allreduce_slice<T: Equivalence + Copy>(&self, xs: &mut [T], op: Op) {
        if self.size == 1 {
            return;
        }
        let send = xs.to_vec();
        self.comm.all_reduce_into(&send[..], xs, op.system());
    }

    pub fn allgather<T: Equivalence + Copy + Default>(&self, x: T) -> Vec<T> {
        let mut out = vec![T::default(); self.size];
        self.comm.all_gather_into(&x, &mut out[..]);
        out
    }

    /// Every rank contributes `send.len()` elements, the same count everywhere.
    pub fn allgather_into<T: Equivalence>(&self, send: &[T], recv: &mut [T]) {
        debug_assert_eq!(send.len() * self.size, recv.len());
        self.comm.all_gather_into(send, recv);
    }

    /// Every rank contributes any number of elements; all receive the concatenation in rank order.
    pub fn allgatherv<T: Equivalence + Copy + Default>(&self, send: &[T]) -> Result<Vec<T>> {
        let counts: Vec<Count> = self.allgather(to_count(send.len())?);
        let displs = displacements(&counts)?;
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        let mut recv = receive_buffer(total);
        let spare = [T::default()];
        let send = not_in_place(send, &spare);
        {
            let mut part = PartitionMut::new(&mut recv[..], &counts[..], &displs[..]);
            self.comm.all_gather_varcount_into(send, &mut part);
        }
        Ok(recv)
    }

    /// Gather variable-length contributions on rank 0 (others get an empty vector).
    /// `gatherv_root` of owned items: one rank's come back as they are, with no copy.
    pub fn gather_owned<T: Equivalence + Copy + Default>(&self, send: Vec<T>) -> Result<Vec<T>> {
        if self.size == 1 {
            return Ok(send);
        }
        self.gatherv_root(&send)
    }

    pub fn gatherv_root<T: Equivalence + Copy + Default>(&self, send: &[T]) -> Result<Vec<T>> {
        let root = self.comm.process_at_rank(0);
        let n = to_count(send.len())?;
        let spare = [T::default()];
        let send = not_in_place(send, &spare);
        if self.is_root() {
            let mut counts = vec![0 as Count; self.size];
            root.gather_into_root(&n, &mut counts[..]);
            let displs = displacements(&counts)?;
            let total: usize = counts.iter().map(|&c| c as usize).sum();
            let mut recv = receive_buffer(total);
            {
                let mut part = PartitionMut::new(&mut recv[..], &counts[..], &displs[..]);
                root.gather_varcount_into_root(send, &mut part);
            }
            Ok(recv)
        } else {
            root.gather_into(&n);
            root.gather_varcount_into(send);
            Ok(Vec::new())
        }
    }

    /// Personalised all-to-all: `send` holds the items for rank 0, then rank 1, ... with
    /// `send_counts[r]` items for rank r. Returns the received items in source-rank order.
    pub fn alltoallv<T: Equivalence + Copy + Default>(
        &self,
        send: &[T],
        send_counts: &[usize],
    ) -> Result<Vec<T>> {
        Ok(self.alltoallv_counted(send, send_counts)?.0)
    }

    /// Counts for every rank: element r of the result is the count rank r sent to this one.
    pub fn alltoall_counts(&self, send: &[usize]) -> Vec<usize> {
        let sc: Vec<u64> = send.iter().map(|&c| c as u64).collect();
        let mut rc = vec![0u64; self.size];
        self.comm.all_to_all_into(&sc[..], &mut rc[..]);
        rc.into_iter().map(|c| c as usize).collect()
    }

    /// `alltoallv` that also returns how many items came from each rank.
    pub fn alltoallv_counted<T: Equivalence + Copy + Default>(
        &self,
        send: &[T],
        send_counts: &[usize],
    ) -> Result<(Vec<T>, Vec<usize>)> {
        let recv_counts = self.alltoall_counts(send_counts);
        let recv = self.alltoallv_known(send, send_counts, &recv_counts)?;
        Ok((recv, recv_counts))
    }

    /// `alltoallv` when every rank already knows how many items each rank sends it
    /// (`recv_counts`, as `alltoall_counts` returns them).
    pub fn alltoallv_known<T: Equivalence + Copy + Default>(
        &self,
        send: &[T],
        send_counts: &[usize],
        recv_counts: &[usize],
    ) -> Result<Vec<T>> {
        let sd = run_starts(send_counts);
        self.alltoallv_from(send, send_counts, &sd, recv_counts)
    }

    /// `alltoallv` of every rank's segment of `send` but this rank's own, which the caller
    /// uses where it lies (no copy of it through MPI): what the other ranks sent this one.
    pub fn alltoallv_others<T: Equivalence + Copy + Default>(
        &self,
        send: &[T],
        send_counts: &[usize],
    ) -> Result<Vec<T>> {
        let sd = run_starts(send_counts);
        let mut others = send_counts.to_vec();
        others[self.rank] = 0;
        let recv_counts = self.alltoall_counts(&others);
        self.alltoallv_from(send, &others, &sd, &recv_counts)
    }

    /// `alltoallv` of `send_counts[r]` items from `send_starts[r]` of `send` to each rank r.
    fn alltoallv_from<T: Equivalence + Copy + Default>(
        &self,
        send: &[T],
        send_counts: &[usize],
        send_starts: &[usize],
        recv_counts: &[usize],
    ) -> Result<Vec<T>> {
        let to_counts = |counts: &[usize]| -> Result<Vec<Count>> {
            counts.iter().map(|&c| to_count(c)).collect()
        };
        let (sc, rc) = (to_counts(send_counts)?, to_counts(recv_counts)?);
        count_sent::<T>(send_counts, self.rank);
        let sd = to_counts(send_starts)?;
        let rd = displacements(&rc)?;
        let total: usize = rc.iter().map(|&c| c as usize).sum();
        let mut recv = receive_buffer(total);
        let spare = [T::default()];
        let send = not_in_place(send, &spare);
        {
            let sp = Partition::new(send, &sc[..], &sd[..]);
            let mut rp = PartitionMut::new(&mut recv[..], &rc[..], &rd[..]);
            self.comm.all_to_all_varcount_into(&sp, &mut rp);
        }
        Ok(recv)
    }

    /// Remote lookup: each key is sent to the rank `owner(key)` names, which computes
    /// `answer(key)`; the answers come back in the order of `keys`. Collective.
    pub fn query<A: Equivalence + Copy + Default + Send>(
        &self,
        keys: &[u64],
        owner: impl Fn(u64) -> usize + Sync,
        answer: impl Fn(u64) -> A + Sync,
    ) -> Result<Vec<A>> {
        if self.size == 1 {
            return Ok(keys.par_iter().map(|&k| answer(k)).collect());
        }
        let owners: Vec<u32> = keys.par_iter().map(|&k| owner(k) as u32).collect();
        self.query_at(keys, &owners, answer)
    }

    /// `query` where the caller names each key's rank (`owners[i]` for `keys[i]`), for keys
    /// whose owner does not follow from the key alone. Collective.
    pub fn query_at<A: Equivalence + Copy + Default + Send>(
        &self,
        keys: &[u64],
        owners: &[u32],
        answer: impl Fn(u64) -> A + Sync,
    ) -> Result<Vec<A>> {
        self.query_batch_at(keys, owners, |asked| {
            Ok(asked.par_iter().map(|&k| answer(k)).collect())
        })
    }

    /// `query` with every key this rank is asked answered in one call (`answer(asked)` gives
    /// the answers in the order of `asked`), for answers that live on a device. Collective.
    pub fn query_batch<A: Equivalence + Copy + Default + Send>(
        &self,
        keys: &[u64],
        owner: impl Fn(u64) -> usize + Sync,
        answer: impl FnOnce(&[u64]) -> Result<Vec<A>>,
    ) -> Result<Vec<A>> {
        let owners: Vec<u32> = keys.par_iter().map(|&k| owner(k) as u32).collect();
        self.query_batch_at(keys, &owners, answer)
    }

    fn query_batch_at<A: Equivalence + Copy + Default + Send>(
        &self,
        keys: &[u64],
        owners: &[u32],
        answer: impl FnOnce(&[u64]) -> Result<Vec<A>>,
    ) -> Result<Vec<A>> {
        if self.size == 1 {
            return answer(keys);
        }
        let indexed: Vec<(u64, usize)> = keys.par_iter().copied().zip(0..keys.len()).collect();
        let (ordered, counts) = bucket_by_rank(self.size, &indexed, |&(_, i)| owners[i] as usize);
        let send: Vec<u64> = ordered.par_iter().map(|&(k, _)| k).collect();
        let (asked, asked_counts) = self.alltoallv_counted(&send, &counts)?;
        // Every rank reaches the replies' exchange, also one whose answer failed.
        let replies = self.agree(answer(&asked))?;
        let answers = self.alltoallv(&replies, &asked_counts)?;
        let mut out = vec![A::default(); keys.len()];
        let out_ptr = SharedSlice(out.as_mut_ptr());
        ordered
            .par_iter()
            .zip(answers.into_par_iter())
            .for_each(|(&(_, i), a)| {
                // SAFETY: each key carries its own index below keys.len(), and the bucketing
                // only reorders them, so every index is written once.
                unsafe { out_ptr.write(i, a) }
            });
        Ok(out)
    }

    /// Send each item to the rank `dest` names (collective); returns the items this rank
    /// received, in source-rank order and, from each source, in the sender's order.
    pub fn route<T: Equivalence + Copy + Default + Send + Sync>(
        &self,
        items: &[T],
        dest: impl Fn(&T) -> usize + Sync,
    ) -> Result<Vec<T>> {
        let (ordered, counts) = bucket_by_rank(self.size, items, dest);
        if self.size == 1 {
            return Ok(ordered);
        }
        self.alltoallv(&ordered, &counts)
    }

    /// Broadcast a byte string from rank 0 (its length too: other ranks' vectors are resized).
    pub fn broadcast_bytes(&self, bytes: &mut Vec<u8>) {
        self.broadcast_bytes_from(0, bytes);
    }

    /// Make an outcome that some ranks may not share common to all (collective): when any
    /// rank failed, every rank returns the error of the lowest failing rank, which `main`
    /// prints once, so no rank goes on into a collective the failed one never joins.
    pub fn agree<T>(&self, outcome: Result<T>) -> Result<T> {
        let mine = if outcome.is_err() {
            self.rank as u64
        } else {
            u64::MAX
        };
        let failed = self.allreduce(mine, Op::Min);
        if failed == u64::MAX {
            return outcome;
        }
        let mut bytes = match &outcome {
            Err(e) if failed == self.rank as u64 => e.to_string().into_bytes(),
            _ => Vec::new(),
        };
        self.broadcast_bytes_from(failed as usize, &mut bytes);
        Err(Error::Agreed(String::from_utf8_lossy(&bytes).into_owned()))
    }

    /// Broadcast a byte string from rank `from` (its length too).
    pub fn broadcast_bytes_from(&self, from: usize, bytes: &mut Vec<u8>) {
        let root = self.comm.process_at_rank(from as i32);
        let mut len = bytes.len() as u64;
        root.broadcast_into(&mut len);
        bytes.resize(len as usize, 0);
        // An empty buffer has a null pointer, which MPI refuses.
        if len > 0 {
            root.broadcast_into(&mut bytes[..]);
        }
    }

    /// Send `data` to rank `dest` (point to point, for task farms).
    pub fn send_words(&self, dest: usize, tag: i32, data: &[u64]) {
        self.comm
            .process_at_rank(dest as i32)
            .send_with_tag(data, tag);
    }

    /// One shift of a halo exchange: `send` goes to rank `to` while `recv` is filled from rank
    /// `from`, which sends exactly `recv.len()` items (MPI_Sendrecv, so a ring of ranks
    /// shifting together cannot deadlock). A periodic lattice calls it once per direction.
    pub fn sendrecv<T: Equivalence>(&self, send: &[T], to: usize, recv: &mut [T], from: usize) {
        mpi::point_to_point::send_receive_into_with_tags(
            send,
            &self.comm.process_at_rank(to as i32),
            HALO_TAG,
            recv,
            &self.comm.process_at_rank(from as i32),
            HALO_TAG,
        );
    }

    /// Both shifts of a halo exchange at once, overlapped with `work`: `up` goes to rank
    /// `above` and `down` to rank `below` while `from_below` and `from_above` are filled from
    /// them (non-blocking sends and receives, a tag per direction so that two ranks that are
    /// each other's both neighbours, or one rank alone, keep the directions apart); `work`
    /// runs while the messages travel, and the call returns once they have arrived.
    pub fn shift_both_ways<T: Equivalence, R>(
        &self,
        (up, down): (&[T], &[T]),
        (from_below, from_above): (&mut [T], &mut [T]),
        (below, above): (usize, usize),
        work: impl FnOnce() -> R,
    ) -> R {
        let (below, above) = (
            self.comm.process_at_rank(below as i32),
            self.comm.process_at_rank(above as i32),
        );
        mpi::request::scope(|scope| {
            let got_below = below.immediate_receive_into_with_tag(scope, from_below, HALO_TAG);
            let got_above = above.immediate_receive_into_with_tag(scope, from_above, HALO_TAG + 1);
            let sent_up = above.immediate_send_with_tag(scope, up, HALO_TAG);
            let sent_down = below.immediate_send_with_tag(scope, down, HALO_TAG + 1);
            let out = work();
            got_below.wait();
            got_above.wait();
            sent_up.wait();
            sent_down.wait();
            out
        })
    }

    /// Receive words with `tag` from rank `source`, waiting for them.
    pub fn receive_words(&self, source: usize, tag: i32) -> Vec<u64> {
        self.comm
            .process_at_rank(source as i32)
            .receive_vec_with_tag(tag)
            .0
    }

    /// Receive words with `tag` from any rank if a message is waiting: (source, words).
    pub fn try_receive_words(&self, tag: i32) -> Option<(usize, Vec<u64>)> {
        let matched = self
            .comm
            .any_process()
            .immediate_matched_probe_with_tag(tag)?;
        let (words, status) = matched.matched_receive_vec();
        Some((status.source_rank() as usize, words))
    }

    /// Each rank's string, gathered on rank 0 in rank order (empty elsewhere).
    pub fn gather_strings(&self, mine: &str) -> Result<Vec<String>> {
        Ok(split_lines(&self.gatherv_root(&as_line(mine))?))
    }

    /// Host names of all ranks, in rank order (for provenance).
    pub fn hostnames(&self) -> Result<Vec<String>> {
        let me = mpi::environment::processor_name().unwrap_or_else(|_| "unknown".into());
        Ok(split_lines(&self.allgatherv(&as_line(&me))?))
    }
}

fn to_count(n: usize) -> Result<Count> {
    Count::try_from(n).map_err(|_| {
        Error::Comm(format!(
            "{n} elements in one message exceed MPI's count limit of {}",
            Count::MAX
        ))
    })
}

fn displacements(counts: &[Count]) -> Result<Vec<Count>> {
    let counts: Vec<usize> = counts.iter().map(|&c| c as usize).collect();
    run_starts(&counts).into_iter().map(to_count).collect()
}

/// A rank's string as one newline-terminated line, for gathering.
fn as_line(s: &str) -> Vec<u8> {
    let mut bytes = s.as_bytes().to_vec();
    bytes.push(b'\n');
    bytes
}

/// Gathered lines back into strings.
fn split_lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Split `items` (each tagged with its destination rank) into the send layout `alltoallv` takes.
pub fn bucket_by_rank<T: Copy + Default + Send + Sync>(
    size: usize,
    items: &[T],
    dest: impl Fn(&T) -> usize + Sync,
) -> (Vec<T>, Vec<usize>) {
    if size == 1 {
        return (items.to_vec(), vec![items.len()]);
    }
    // Destinations are computed once: `dest` may cost a division per item.
    let dests: Vec<u32> = items.par_iter().map(|it| dest(it) as u32).collect();
    let mut out = Vec::new();
    let counts = scatter_by_rank(
        size,
        items.len(),
        &Tagged {
            items,
            dests: &dests,
        },
        &mut out,
    );
    (out, counts)
}

/// `bucket_by_rank` of the items `expand` makes of each element of `from`, in order, each with
/// its destination rank, without gathering them first (each is made twice, once counted and
/// once placed), into `out` (its old items dropped, its memory reused): the counts.
pub fn bucket_expanded<E, T, I>(
    size: usize,
    from: &[E],
    expand: impl Fn(&E) -> I + Sync,
    out: &mut Vec<T>,
) -> Vec<usize>
where
    E: Sync,
    T: Copy + Default + Send + Sync,
    I: IntoIterator<Item = (T, usize)>,
{
    scatter_by_rank(size, from.len(), &Expanded { from, expand }, out)
}

/// What `scatter_by_rank` buckets: the items of source element `i`, each with its rank.
trait Emit<T>: Sync {
    fn emit(&self, i: usize, f: impl FnMut(T, usize));
}

/// Items with their destinations worked out beforehand.
struct Tagged<'a, T> {
    items: &'a [T],
    dests: &'a [u32],
}

impl<T: Copy + Sync> Emit<T> for Tagged<'_, T> {
    #[inline]
    fn emit(&self, i: usize, mut f: impl FnMut(T, usize)) {
        f(self.items[i], self.dests[i] as usize)
    }
}

/// The items each element of `from` expands to, with their destinations.
struct Expanded<'a, E, X> {
    from: &'a [E],
    expand: X,
}

impl<E, T, I, X> Emit<T> for Expanded<'_, E, X>
where
    E: Sync,
    I: IntoIterator<Item = (T, usize)>,
    X: Fn(&E) -> I + Sync,
{
    #[inline]
    fn emit(&self, i: usize, mut f: impl FnMut(T, usize)) {
        for (item, d) in (self.expand)(&self.from[i]) {
            f(item, d)
        }
    }
}

/// The send layout of the items that `items` emits for source elements `0..len`, grouped by
/// destination rank, in source order within each destination, into `out` (replacing what it
/// held): the counts.
fn scatter_by_rank<T: Copy + Default + Send + Sync>(
    size: usize,
    len: usize,
    items: &impl Emit<T>,
    out: &mut Vec<T>,
) -> Vec<usize> {
    // Chunks of elements are counted and scattered in parallel; within a destination the
    // chunks stay in order, so the layout is the same as a sequential pass. Many destinations
    // (thousands of ranks) would make the per-chunk counts too large: then one chunk.
    let chunk = if size <= BUCKET_MAX_PARALLEL_DESTINATIONS {
        BUCKET_CHUNK
    } else {
        len.max(1)
    };
    let chunks = len.div_ceil(chunk);
    let range = |k: usize| k * chunk..((k + 1) * chunk).min(len);
    let chunk_counts: Vec<Vec<usize>> = (0..chunks)
        .into_par_iter()
        .map(|k| {
            let mut counts = vec![0usize; size];
            for i in range(k) {
                items.emit(i, |_, d| counts[d] += 1);
            }
            counts
        })
        .collect();
    let mut counts = vec![0usize; size];
    for c in &chunk_counts {
        for (total, &n) in counts.iter_mut().zip(c) {
            *total += n;
        }
    }
    // Where each chunk starts writing for each destination.
    let mut starts = vec![vec![0usize; size]; chunks];
    let mut offset = 0;
    for d in 0..size {
        for (k, c) in chunk_counts.iter().enumerate() {
            starts[k][d] = offset;
            offset += c[d];
        }
    }
    out.clear();
    out.reserve(offset);
    let out_ptr = SharedSlice(out.as_mut_ptr());
    starts
        .into_par_iter()
        .enumerate()
        .for_each(|(k, mut cursor)| {
            for i in range(k) {
                items.emit(i, |item, d| {
                    // SAFETY: the ranges [starts[k][d], starts[k][d] + chunk_counts[k][d]) are
                    // disjoint across chunks and destinations and lie within `out`'s capacity.
                    unsafe { out_ptr.write(cursor[d], item) };
                    cursor[d] += 1;
                });
            }
        });
    // SAFETY: every one of the `offset` slots was written above (the chunks' ranges cover
    // [0, offset)), within the capacity reserved.
    unsafe { out.set_len(offset) };
    counts
}

/// The tag of `World::sendrecv`'s messages, apart from the task farm's.
const HALO_TAG: i32 = 0x4a10;

/// Items per parallel chunk of `bucket_by_rank`, and the most destinations it splits for.
const BUCKET_CHUNK: usize = 1 << 16;
const BUCKET_MAX_PARALLEL_DESTINATIONS: usize = 1 << 12;

/// A slice's base pointer shared by threads that write disjoint elements.
#[derive(Clone, Copy)]
struct SharedSlice<T>(*mut T);
// SAFETY: used only for writes to disjoint indices (see `bucket_by_rank`).
unsafe impl<T: Send> Send for SharedSlice<T> {}
unsafe impl<T: Send> Sync for SharedSlice<T> {}

impl<T> SharedSlice<T> {
    /// SAFETY: `i` is in bounds and no other thread touches index `i`.
    unsafe fn write(&self, i: usize, value: T) {
        unsafe { self.0.add(i).write(value) }
    }
}

/// An empty slice of one-byte items points at address 1, which Open MPI takes for
/// MPI_IN_PLACE (an error in a gather or an all-to-all): an empty `send` is replaced by an
/// empty slice of `spare`, which points into real memory.
fn not_in_place<'a, T>(send: &'a [T], spare: &'a [T; 1]) -> &'a [T] {
    if send.is_empty() {
        &spare[..0]
    } else {
        send
    }
}

/// `total` default items in a buffer that points into real memory even when empty (see
/// `not_in_place`).
fn receive_buffer<T: Copy + Default>(total: usize) -> Vec<T> {
    let mut recv = Vec::with_capacity(total.max(1));
    recv.resize(total, T::default());
    recv
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain sequential counting sort the parallel one must match.
    fn sequential(size: usize, items: &[u64]) -> (Vec<u64>, Vec<usize>) {
        let mut counts = vec![0; size];
        let mut out: Vec<Vec<u64>> = vec![Vec::new(); size];
        for &x in items {
            counts[(x % size as u64) as usize] += 1;
            out[(x % size as u64) as usize].push(x);
        }
        (out.concat(), counts)
    }

    #[test]
    fn parallel_bucketing_keeps_the_sequential_layout() {
        let mut r: u64 = 0x2545_f491_4f6c_dd1d;
        let items: Vec<u64> = (0..300_000)
            .map(|_| {
                r ^= r << 13;
                r ^= r >> 7;
                r ^= r << 17;
                r
            })
            .collect();
        for size in [2, 3, 7, 64, 5000] {
            for len in [0, 1, 1000, items.len()] {
                let got = bucket_by_rank(size, &items[..len], |&x| (x % size as u64) as usize);
                assert_eq!(
                    got,
                    sequential(size, &items[..len]),
                    "size {size}, {len} items"
                );
            }
        }
    }
}
