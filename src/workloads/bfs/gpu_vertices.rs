//! The own vertices' side of a GPU search, shared by the 1D (`gpu`) and 2D (`gpu2d`)
//! partitions: the parents (i64 on the device), the current and next frontier as a queue of
//! local ids or a bitmap, claiming vertices found by other ranks, and the copy of the parents
//! to the host. Kernels in kernels/bfs.cu; every launch passes its arguments in the order of
//! the kernel's parameters there.

use crate::device::{gpu_error, grid, Gpu, Kernel, Pinned};
use crate::error::Result;
use crate::graph::Vid;
use cudarc::driver::{CudaSlice, PushKernelArg};
use rayon::prelude::*;

/// Which buffer holds a frontier.
#[derive(Clone, Copy, PartialEq)]
pub enum FrontierLayout {
    /// `queue`, with this many local ids.
    Queue(u64),
    /// `bits`.
    Bits,
}

struct Kernels {
    start: Kernel,
    claim: Kernel,
    queue_to_bits: Kernel,
    bits_to_queue: Kernel,
    narrow_parents: Kernel,
    depth_queue: Kernel,
    depth_bits: Kernel,
}

/// The parents' copy in host memory: u32 where every id is below u32::MAX (half the bytes of
/// the device's i64s; u32::MAX stands for none), else i64.
enum HostParents {
    Narrow(Vec<u32>),
    Wide(Vec<i64>),
}

/// Counters before the owners' runs (see `OwnVertices::counters`).
pub const COUNTERS: usize = 5;

pub struct OwnVertices<'a> {
    pub gpu: &'a Gpu,
    k: Kernels,
    /// Global id of the first own vertex, and how many there are.
    pub first: u64,
    pub local_n: u64,
    /// Words of a frontier bitmap (the 1D block / 64).
    pub words: usize,
    pub parent: CudaSlice<i64>,
    /// The level at which the search reached each own vertex (-1: not reached): recorded as
    /// each frontier becomes current, the device validator's witness (validate_gpu.rs).
    pub depth: CudaSlice<i32>,
    /// The current frontier's level.
    level: i32,
    pub queue: CudaSlice<u32>,
    pub next_queue: CudaSlice<u32>,
    pub bits: CudaSlice<u64>,
    pub next_bits: CudaSlice<u64>,
    /// [0] next frontier vertices, [1] their edges, [2] entries inspected, [3] pairs for
    /// other ranks (2D), [4] heavy frontier vertices, then per owner rank the pairs the 1D
    /// top-down scan put in its run (kernels/bfs.cu).
    pub counters: CudaSlice<u64>,
    pub current: FrontierLayout,
    pub next: FrontierLayout,
    /// Page-locks `host_parents` (declared first: unregistered before that memory is freed).
    pinned_parents: Option<Pinned>,
    host_parents: HostParents,
    /// Whether `host_parents` holds this search's parents.
    fetched: bool,
}

impl<'a> OwnVertices<'a> {
    /// Device bytes for `local_n` own vertices and `words` bitmap words.
    pub fn bytes(local_n: u64, words: u64) -> u64 {
        8 * local_n + 3 * 4 * local_n + 2 * 8 * words + 8 * COUNTERS as u64
    }

    /// Buffers for the vertices `first .. first + local_n` of a graph of `n` vertices, with
    /// `owners` run counters after the five others.
    pub fn new(
        gpu: &'a Gpu,
        n: u64,
        (first, local_n): (u64, usize),
        words: usize,
        owners: usize,
    ) -> Result<Self> {
        let f = |name| gpu.function("bfs.cu", name);
        let mut own = OwnVertices {
            gpu,
            k: Kernels {
                start: f("bfs_start")?,
                claim: f("bfs_claim")?,
                queue_to_bits: f("bfs_queue_to_bits")?,
                bits_to_queue: f("bfs_bits_to_queue")?,
                narrow_parents: f("bfs_narrow_parents")?,
                depth_queue: f("bfs_depth_queue")?,
                depth_bits: f("bfs_depth_bits")?,
            },
            first,
            local_n: local_n as u64,
            words,
            parent: gpu.zeros("parents", local_n)?,
            depth: gpu.zeros("depths", local_n)?,
            level: 0,
            queue: gpu.zeros("queue", local_n)?,
            next_queue: gpu.zeros("queue", local_n)?,
            bits: gpu.zeros("frontier bitmap", words)?,
            next_bits: gpu.zeros("frontier bitmap", words)?,
            counters: gpu.zeros("counters", COUNTERS + owners)?,
            current: FrontierLayout::Queue(0),
            next: FrontierLayout::Queue(0),
            pinned_parents: None,
            host_parents: match n < u64::from(u32::MAX) {
                true => HostParents::Narrow(vec![0; local_n]),
                false => HostParents::Wide(vec![0; local_n]),
            },
            fetched: false,
        };
        own.pinned_parents = match &mut own.host_parents {
            HostParents::Narrow(host) => gpu.pin(host),
            HostParents::Wide(host) => gpu.pin(host),
        };
        if own.pinned_parents.is_none() && local_n > 0 {
            log::warn!("cannot page-lock the host parent array: copies back run slower");
        }
        Ok(own)
    }

    /// Start a search from `root`: parents reset, the root alone in the frontier if it is
    /// own. Returns its degree there (`offsets`: the own vertices' full rows), else 0.
    pub fn start(&mut self, root: Vid, offsets: &CudaSlice<u64>) -> Result<u64> {
        let local = root.wrapping_sub(self.first);
        let is_local = local < self.local_n;
        let root_local: i64 = if is_local { local as i64 } else { -1 };
        self.fetched = false;
        self.gpu.launch(&self.k.start, grid(self.local_n), |b| {
            b.arg(&mut self.parent)
                .arg(&mut self.depth)
                .arg(&self.local_n)
                .arg(&root_local)
                .arg(&root);
        })?;
        self.next = FrontierLayout::Queue(0);
        self.level = 0;
        if !is_local {
            self.current = FrontierLayout::Queue(0);
            self.gpu.sync("bfs_start")?;
            return Ok(0);
        }
        let s = &self.gpu.stream;
        s.memcpy_htod(&[local as u32], &mut self.queue.slice_mut(0..1))
            .map_err(|e| gpu_error("upload root", e))?;
        let at = local as usize;
        let degree = s
            .clone_dtoh(&offsets.slice(at..at + 2))
            .map_err(|e| gpu_error("read root degree", e))?;
        self.current = FrontierLayout::Queue(1);
        Ok(degree[1] - degree[0])
    }

    pub fn zero_counters(&mut self) -> Result<()> {
        self.gpu
            .stream
            .memset_zeros(&mut self.counters)
            .map_err(|e| gpu_error("reset counters", e))
    }

    /// Every counter: the five of `counters()`'s kind, then the owners' runs.
    pub fn all_counters(&self) -> Result<Vec<u64>> {
        self.gpu
            .download("counters", &self.counters, self.counters.len())
    }

    pub fn counters(&self) -> Result<[u64; 4]> {
        let c = self.gpu.download("counters", &self.counters, 4)?;
        Ok([c[0], c[1], c[2], c[3]])
    }

    /// The current frontier as a queue; returns its length.
    pub fn current_queue(&mut self) -> Result<u64> {
        if let FrontierLayout::Queue(len) = self.current {
            return Ok(len);
        }
        self.zero_counters()?;
        let words = self.words as u64;
        self.gpu.launch(&self.k.bits_to_queue, grid(words), |b| {
            b.arg(&self.bits)
                .arg(&words)
                .arg(&mut self.queue)
                .arg(&mut self.counters);
        })?;
        let len = self.counters()?[0];
        self.current = FrontierLayout::Queue(len);
        Ok(len)
    }

    /// The current frontier as a bitmap in `bits`.
    pub fn current_bits(&mut self) -> Result<()> {
        let FrontierLayout::Queue(len) = self.current else {
            return Ok(());
        };
        self.gpu
            .stream
            .memset_zeros(&mut self.bits)
            .map_err(|e| gpu_error("clear bitmap", e))?;
        self.gpu.launch(&self.k.queue_to_bits, grid(len), |b| {
            b.arg(&self.queue).arg(&len).arg(&mut self.bits);
        })?;
        self.current = FrontierLayout::Bits;
        Ok(())
    }

    /// Claim the first `count` packed pairs of `pairs` (key << 32 | parent, the own vertex
    /// being key - `key_first`) into the next queue; `offsets` gives their degrees. Returns
    /// without waiting: `advance` reads the counters next, which waits for the claim.
    pub fn claim(
        &mut self,
        pairs: &CudaSlice<u64>,
        count: u64,
        key_first: u64,
        offsets: &CudaSlice<u64>,
    ) -> Result<()> {
        if count > 0 {
            self.gpu.launch(&self.k.claim, grid(count), |b| {
                b.arg(pairs)
                    .arg(&count)
                    .arg(&key_first)
                    .arg(&mut self.parent)
                    .arg(offsets)
                    .arg(&mut self.next_queue)
                    .arg(&mut self.counters);
            })?;
        }
        Ok(())
    }

    /// Make the next frontier current; its local vertex and edge counts. Its vertices'
    /// depths are recorded (one small kernel, no wait).
    pub fn advance(&mut self) -> Result<(u64, u64)> {
        let [n, m, _, _] = self.counters()?;
        self.level += 1;
        let level = self.level;
        match self.next {
            FrontierLayout::Queue(_) => {
                std::mem::swap(&mut self.queue, &mut self.next_queue);
                self.current = FrontierLayout::Queue(n);
                if n > 0 {
                    self.gpu.launch(&self.k.depth_queue, grid(n), |b| {
                        b.arg(&self.queue).arg(&n).arg(&mut self.depth).arg(&level);
                    })?;
                }
            }
            FrontierLayout::Bits => {
                std::mem::swap(&mut self.bits, &mut self.next_bits);
                self.current = FrontierLayout::Bits;
                let words = self.words as u64;
                self.gpu.launch(&self.k.depth_bits, grid(words), |b| {
                    b.arg(&self.bits)
                        .arg(&words)
                        .arg(&self.local_n)
                        .arg(&mut self.depth)
                        .arg(&level);
                })?;
            }
        }
        Ok((n, m))
    }

    /// The search's depths of the own vertices (-1: not reached), into `out`.
    pub fn depths(&self, out: &mut [i32]) -> Result<()> {
        let got = self.gpu.download("depths", &self.depth, self.local_n as usize)?;
        out.copy_from_slice(&got);
        Ok(())
    }

    /// Overwrite the parent of own vertex `l` (the debug corruption of `corrupt.rs`).
    pub fn set_parent(&mut self, l: usize, p: i64) -> Result<()> {
        self.gpu
            .stream
            .memcpy_htod(&[p], &mut self.parent.slice_mut(l..l + 1))
            .map_err(|e| gpu_error("overwrite a parent", e))?;
        self.fetched = false;
        self.gpu.sync("overwrite a parent")
    }

    /// Copy the parents to host memory (narrowed on the device where ids allow).
    pub fn fetch_parents(&mut self) -> Result<()> {
        let n = self.local_n as usize;
        let copied = match &mut self.host_parents {
            HostParents::Narrow(host) => {
                // Narrowed into the next queue, which is free once a search has ended.
                self.gpu
                    .launch(&self.k.narrow_parents, grid(self.local_n), |b| {
                        b.arg(&self.parent)
                            .arg(&self.local_n)
                            .arg(&mut self.next_queue);
                    })?;
                self.gpu
                    .stream
                    .memcpy_dtoh(&self.next_queue.slice(0..n), host.as_mut_slice())
            }
            HostParents::Wide(host) => self
                .gpu
                .stream
                .memcpy_dtoh(&self.parent.slice(0..n), host.as_mut_slice()),
        };
        copied.map_err(|e| gpu_error("copy parents to the host", e))?;
        // Into page-locked memory the copy is asynchronous: wait for it.
        self.gpu.sync("copy parents to the host")?;
        self.fetched = true;
        Ok(())
    }

    /// The parents as i64 (-1: none), fetched first if they were not since the search.
    pub fn parents(&mut self, out: &mut [i64]) -> Result<()> {
        if !self.fetched {
            self.fetch_parents()?;
        }
        match &self.host_parents {
            HostParents::Narrow(host) => out
                .par_iter_mut()
                .zip(host.par_iter())
                .for_each(|(p, &q)| *p = if q == u32::MAX { -1 } else { i64::from(q) }),
            HostParents::Wide(host) => out.copy_from_slice(host),
        }
        Ok(())
    }
}
