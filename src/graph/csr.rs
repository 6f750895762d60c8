//! Kernel 1: the 1D-partitioned distributed CSR.
//!
//! Edge tuples are streamed from the `EdgeSource` in bounded chunks, twice: the first pass
//! sends each directed entry's source to its owner, which counts row lengths; the second
//! sends (source, target) pairs, which the owner writes straight into its preallocated rows.
//! Rows are then sorted and de-duplicated in place. Received messages are placed by all the
//! rank's threads at once through atomic counters and cursors; the order they land in
//! within a row does not matter, since rows are sorted afterwards. Peak memory is the CSR
//! with duplicates plus one chunk's buffers, instead of the edge list plus send and receive
//! copies.

use super::{Block1D, Edge, EdgeSource, Vid};
use crate::comm::{bucket_expanded, Equivalence, Op, Pair, PhaseTimes, World};
use crate::error::Result;
use crate::rng::mix64;

use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Edge tuples per rank per exchange round (each becomes two directed entries).
pub(super) const CHUNK: u64 = 1 << 20;

/// Flag bit on a counting-pass message: the entry is a self-loop (counts for nedge, not in CSR).
const SELF_LOOP: u64 = 1 << 63;

pub struct DistGraph {
    pub part: Block1D,
    /// Row offsets into `adj`, `local_n + 1` entries.
    pub offsets: Vec<u64>,
    /// Sorted, unique neighbour ids (global), self-loops removed.
    pub adj: Vec<Vid>,
    /// Per local vertex: how many input tuple endpoints fall on it, duplicates and self-loops
    /// included (a self-loop counts twice). Half the sum over a component is its nedge.
    pub tuple_ends: Vec<u64>,
    /// Input edge tuples M over all ranks.
    pub num_input_edges: u64,
    /// Directed CSR entries over all ranks.
    pub num_entries: u64,
}

impl DistGraph {
    pub fn n(&self) -> u64 {
        self.part.n
    }

    pub fn local_n(&self) -> usize {
        self.part.local_n()
    }

    #[inline]
    pub fn row(&self, local: usize) -> &[Vid] {
        &self.adj[self.offsets[local] as usize..self.offsets[local + 1] as usize]
    }

    #[inline]
    pub fn degree(&self, local: usize) -> u64 {
        self.offsets[local + 1] - self.offsets[local]
    }

    /// Bytes of this rank's CSR (offsets + adjacency), the "raw CSR size".
    pub fn csr_bytes(&self) -> u64 {
        (self.offsets.len() * 8 + self.adj.len() * 8) as u64
    }

    /// Checksum of the rows and tuple endpoint counts (wrapping sum of hashes, per row and
    /// per entry): equal graphs give equal checksums, whatever the rank count (collective).
    pub fn checksum(&self, world: &World) -> u64 {
        let local = (0..self.local_n())
            .into_par_iter()
            .map(|l| {
                let v = self.part.global(l);
                self.row(l)
                    .iter()
                    .fold(vertex_hash(v, self.tuple_ends[l]), |h, &w| {
                        h.wrapping_add(entry_hash(v, w))
                    })
            })
            .reduce(|| 0, u64::wrapping_add);
        world.allreduce(local, Op::Sum)
    }

    /// This rank's share of `checksum` that is not in its rows: the vertex terms (collective
    /// parts are the caller's). A 2D partition adds its blocks' entry hashes to it.
    pub fn vertex_checksum(&self) -> u64 {
        (0..self.local_n())
            .into_par_iter()
            .map(|l| vertex_hash(self.part.global(l), self.tuple_ends[l]))
            .reduce(|| 0, u64::wrapping_add)
    }

    /// Build the distributed CSR (collective).
    pub fn build(
        world: &World,
        source: &(impl EdgeSource + ?Sized),
        timers: &mut PhaseTimes,
    ) -> Result<Self> {
        let part = Block1D::new(source.num_vertices(), world.size(), world.rank());
        let local_n = part.local_n();
        let rounds = world.allreduce(source.local_len().div_ceil(CHUNK), Op::Max);

        // Pass 1: tuple endpoint counts, and the self-loop endpoints among them (few: one
        // atomic add a message, not two). A row's length is its endpoints less its loops'.
        let mut tuple_ends = vec![0u64; local_n];
        let mut loop_ends = vec![0u64; local_n];
        {
            let (ends, loops) = (as_atomic(&mut tuple_ends), as_atomic(&mut loop_ends));
            stream_rounds_placing(
                world,
                source,
                rounds,
                timers,
                |&(u, v)| {
                    let flag = if u == v { SELF_LOOP } else { 0 };
                    Some([u | flag, v | flag])
                },
                |msg| part.owner(msg & !SELF_LOOP),
                |msg| {
                    let l = part.local(msg & !SELF_LOOP);
                    ends[l].fetch_add(1, Relaxed);
                    if msg & SELF_LOOP != 0 {
                        loops[l].fetch_add(1, Relaxed);
                    }
                },
            )?;
        }
        let lengths: Vec<u64> = tuple_ends
            .par_iter()
            .zip(loop_ends)
            .map(|(ends, loops)| ends - loops)
            .collect();

        let offsets = row_offsets(&lengths);
        drop(lengths);

        // Pass 2: fill rows. Entries arrive in any order; rows are sorted afterwards, so the
        // result does not depend on arrival order or thread timing.
        let mut adj = vec![0u64; *offsets.last().unwrap() as usize];
        let mut cursor: Vec<u64> = offsets[..local_n].to_vec();
        {
            let (slots, cursor) = (as_atomic(&mut adj), as_atomic(&mut cursor));
            stream_rounds_placing(
                world,
                source,
                rounds,
                timers,
                |&(u, v)| (u != v).then_some([Pair(u, v), Pair(v, u)]),
                |pair: &Pair| part.owner(pair.0),
                |&Pair(u, v)| {
                    let slot = cursor[part.local(u)].fetch_add(1, Relaxed);
                    slots[slot as usize].store(v, Relaxed);
                },
            )?;
        }
        drop(cursor);

        Ok(Self::from_rows(
            world,
            part,
            offsets,
            adj,
            tuple_ends,
            source.num_edges(),
            timers,
        ))
    }

    /// The graph from filled rows (`offsets`, `adj`: unsorted, with duplicates): sorts and
    /// de-duplicates them (collective).
    pub(super) fn from_rows(
        world: &World,
        part: Block1D,
        mut offsets: Vec<u64>,
        mut adj: Vec<Vid>,
        tuple_ends: Vec<u64>,
        num_input_edges: u64,
        timers: &mut PhaseTimes,
    ) -> Self {
        timers.time("sort_dedup", || sort_dedup_rows(&mut offsets, &mut adj));
        Self::from_sorted_rows(world, part, offsets, adj, tuple_ends, num_input_edges)
    }

    /// A rank's part from rows already sorted and de-duplicated (collective).
    pub(super) fn from_sorted_rows(
        world: &World,
        part: Block1D,
        offsets: Vec<u64>,
        adj: Vec<Vid>,
        tuple_ends: Vec<u64>,
        num_input_edges: u64,
    ) -> Self {
        let num_entries = world.allreduce(adj.len() as u64, Op::Sum);
        DistGraph {
            part,
            offsets,
            adj,
            tuple_ends,
            num_input_edges,
            num_entries,
        }
    }
}

/// A CSR entry's term of the graph checksum (a wrapping sum, so any partition of the
/// entries gives the same total).
#[inline]
pub fn entry_hash(v: Vid, w: Vid) -> u64 {
    mix64(mix64(v) ^ w)
}

/// A vertex's term of the graph checksum: its id and its tuple endpoint count.
#[inline]
fn vertex_hash(v: Vid, tuple_ends: u64) -> u64 {
    mix64(v ^ mix64(tuple_ends))
}

/// Row offsets (`lengths.len() + 1` of them) of rows of the given lengths.
pub(super) fn row_offsets(lengths: &[u64]) -> Vec<u64> {
    let mut offsets = Vec::with_capacity(lengths.len() + 1);
    offsets.push(0u64);
    for &len in lengths {
        offsets.push(offsets.last().unwrap() + len);
    }
    offsets
}

/// Stream the local edges in `rounds` chunks; expand each tuple into two messages (or none),
/// route each message to the rank `dest` names, exchange, and hand each round's received
/// messages to `consume`.
pub(super) fn stream_rounds<M: Equivalence + Copy + Default + Send + Sync>(
    world: &World,
    source: &(impl EdgeSource + ?Sized),
    rounds: u64,
    timers: &mut PhaseTimes,
    expand: impl Fn(&Edge) -> Option<[M; 2]> + Sync,
    dest: impl Fn(&M) -> usize + Sync,
    mut consume: impl FnMut(Vec<M>),
) -> Result<()> {
    let messages = |e: &Edge| expand(e).into_iter().flatten();
    let mut send = Vec::new();
    each_chunk(source, rounds, timers, |chunk, timers| {
        // One rank keeps everything: no bucketing, no copy through MPI.
        let received = if world.size() == 1 {
            chunk.par_iter().flat_map_iter(messages).collect()
        } else {
            let counts = bucket(world, chunk, messages, &dest, &mut send, timers);
            timers.time("exchange", || world.alltoallv(&send, &counts))?
        };
        timers.time("place", || consume(received));
        Ok(())
    })
}

/// `stream_rounds` with each message handed on its own to `place`, from any thread. A rank's
/// own messages are placed where they lie, never gathered in a vector of their own or copied
/// through MPI: on one rank straight from the chunk (a fresh vector each round, 16-32 MB,
/// written, read back and page-faulted, was half of the CSR build of 2^22 Watts-Strogatz edges
/// on 2 threads: 0.36 s with it, 0.18 without), on several from their segment of the bucketed
/// send buffer, itself filled straight from the chunk.
pub(super) fn stream_rounds_placing<M: Equivalence + Copy + Default + Send + Sync>(
    world: &World,
    source: &(impl EdgeSource + ?Sized),
    rounds: u64,
    timers: &mut PhaseTimes,
    expand: impl Fn(&Edge) -> Option<[M; 2]> + Sync,
    dest: impl Fn(&M) -> usize + Sync,
    place: impl Fn(&M) + Sync,
) -> Result<()> {
    let messages = |e: &Edge| expand(e).into_iter().flatten();
    let mut send = Vec::new();
    each_chunk(source, rounds, timers, |chunk, timers| {
        if world.size() == 1 {
            let each = |e: &Edge| messages(e).for_each(|m| place(&m));
            timers.time("place", || chunk.par_iter().for_each(each));
            return Ok(());
        }
        let counts = bucket(world, chunk, messages, &dest, &mut send, timers);
        let me = world.rank();
        let own_start: usize = counts[..me].iter().sum();
        let own = &send[own_start..own_start + counts[me]];
        timers.time("place", || own.par_iter().for_each(&place));
        let received = timers.time("exchange", || world.alltoallv_others(&send, &counts))?;
        timers.time("place", || received.par_iter().for_each(&place));
        Ok(())
    })
}

/// Each of `rounds` chunks of the local edges, read in turn into one buffer, handed to
/// `each` with the timers.
fn each_chunk(
    source: &(impl EdgeSource + ?Sized),
    rounds: u64,
    timers: &mut PhaseTimes,
    mut each: impl FnMut(&[Edge], &mut PhaseTimes) -> Result<()>,
) -> Result<()> {
    let mut chunk = Vec::with_capacity(CHUNK as usize);
    for round in 0..rounds {
        chunk.clear();
        timers.time("generate", || read_chunk(source, round, &mut chunk));
        each(&chunk, timers)?;
    }
    Ok(())
}

/// The messages of `chunk`'s edges bucketed by destination into `send`, as `alltoallv`
/// takes them (the buffer reused round after round: no fresh pages to fault): the counts.
fn bucket<M: Copy + Default + Send + Sync, I: Iterator<Item = M>>(
    world: &World,
    chunk: &[Edge],
    messages: impl Fn(&Edge) -> I + Sync,
    dest: impl Fn(&M) -> usize + Sync,
    send: &mut Vec<M>,
    timers: &mut PhaseTimes,
) -> Vec<usize> {
    let routed = |e: &Edge| messages(e).map(|m| (m, dest(&m)));
    timers.time("bucket", || {
        bucket_expanded(world.size(), chunk, routed, send)
    })
}

/// `data` cut into the rows that `offsets` delimit.
pub(super) fn split_at_offsets<'a, T>(mut data: &'a mut [T], offsets: &[u64]) -> Vec<&'a mut [T]> {
    let mut rows = Vec::with_capacity(offsets.len() - 1);
    for w in offsets.windows(2) {
        let (row, rest) = data.split_at_mut((w[1] - w[0]) as usize);
        rows.push(row);
        data = rest;
    }
    rows
}

// `as_atomic` reinterprets u64 storage as AtomicU64.
const _: () = assert!(std::mem::align_of::<AtomicU64>() == std::mem::align_of::<u64>());

/// `v` as atomics, so that many threads can count into it or fill it at once.
fn as_atomic(v: &mut [u64]) -> &[AtomicU64] {
    // SAFETY: AtomicU64 has the size and bit validity of u64, and the alignment too (asserted
    // above); the exclusive borrow of `v` lasts as long as the returned one, so nothing else
    // reads or writes it non-atomically meanwhile (what the unstable
    // `AtomicU64::from_mut_slice` does).
    unsafe { &*(v as *mut [u64] as *const [AtomicU64]) }
}

fn read_chunk(source: &(impl EdgeSource + ?Sized), round: u64, chunk: &mut Vec<Edge>) {
    let start = (round * CHUNK).min(source.local_len());
    let len = CHUNK.min(source.local_len() - start);
    source.local_chunk(start, len, chunk);
}

/// Sort each row, drop repeated neighbours, and compact the rows to the front of `adj`.
fn sort_dedup_rows(offsets: &mut [u64], adj: &mut Vec<Vid>) {
    let unique: Vec<u64> = split_at_offsets(adj, offsets)
        .into_par_iter()
        .map(|row| {
            row.sort_unstable();
            let mut kept = 0;
            for i in 0..row.len() {
                if i == 0 || row[i] != row[kept - 1] {
                    row[kept] = row[i];
                    kept += 1;
                }
            }
            kept as u64
        })
        .collect();
    let mut write = 0u64;
    for (i, &kept) in unique.iter().enumerate() {
        let read = offsets[i];
        adj.copy_within(read as usize..(read + kept) as usize, write as usize);
        offsets[i] = write;
        write += kept;
    }
    if let Some(last) = offsets.last_mut() {
        *last = write;
    }
    adj.truncate(write as usize);
    adj.shrink_to_fit();
}
