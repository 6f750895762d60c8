//! Several ranks, one GPU each: the edge-ends made on the devices. Each rank's edge tuples
//! are uploaded with the graph (untimed, as one GPU's `DeviceEnds`); the first timed phase
//! that needs the ends at their vertices' owners sends them there through the device
//! exchange (kernels/euler.cu `euler_end_pairs`, `OwnerBuckets`, `euler_end_split`: 8
//! bytes per edge-end, GPU to GPU), so no edge-end crosses the bus in the timed phases. The
//! degree check counts there too; only a graph that fails it brings its degrees to the host,
//! where `check::degrees_ok` names the vertices (or finds a trail's two ends).

use super::darts;
use super::gpu::read_one;
use crate::comm::gpu::{GpuExchange, OwnerBuckets};
use crate::comm::{run_starts, GpuTransport, Op, World};
use crate::device::{gpu_error, grid, Gpu};
use crate::error::Result;
use crate::graph::{Block1D, Edge};
use cudarc::driver::{CudaSlice, PushKernelArg};
use rayon::prelude::*;

/// This rank's edge-ends on its GPU.
pub struct SpreadEnds<'w> {
    /// The exchange the solver goes on with (opened with the graph: NCCL's set-up untimed).
    pub exchange: GpuExchange<'w>,
    /// This rank's tuples (u, v) as u32 pairs and the id of the first, until routed.
    tuples: Option<(CudaSlice<u32>, u64, u64)>,
    /// The ends at this rank's own vertices: local vertex and dart, `count` of them.
    pub vertex: CudaSlice<u32>,
    pub dart: CudaSlice<u32>,
    pub count: u64,
    /// Random vertex blocks: the vertices the ends name are shuffled ids.
    pub shuffle: Option<Shuffle>,
}

impl<'w> SpreadEnds<'w> {
    /// Upload this rank's `edges`, the first with id `first`, their vertices shuffled by
    /// `shuffle` where given (collective: opens the exchange).
    pub fn upload(
        world: &'w World,
        gpu: &Gpu,
        transport: GpuTransport,
        (edges, first): (&[Edge], u64),
        shuffle: Option<Shuffle>,
    ) -> Result<Self> {
        // Compile the kernel files now, untimed with the graph.
        gpu.function("euler.cu", "euler_end_pairs")?;
        gpu.function("exchange.cu", "exchange_count_owners")?;
        let exchange = GpuExchange::open(world, gpu, transport)?;
        let id = |v: u64| shuffle.map_or(v, |s| s.apply(v)) as u32;
        let flat: Vec<u32> = edges
            .par_iter()
            .flat_map_iter(|&(u, v)| [id(u), id(v)])
            .collect();
        let tuples = gpu.upload("edge tuples", &flat)?;
        Ok(SpreadEnds {
            exchange,
            tuples: Some((tuples, edges.len() as u64, first)),
            vertex: gpu.zeros("edge-ends", 1)?,
            dart: gpu.zeros("edge-ends", 1)?,
            count: 0,
            shuffle,
        })
    }

    /// Send the uploaded tuples' ends to their vertices' owners, once (collective).
    pub fn route(&mut self, gpu: &Gpu, part: &Block1D) -> Result<()> {
        let Some((tuples, edges, first)) = self.tuples.take() else {
            return Ok(());
        };
        let ends = 2 * edges;
        let mut pairs = gpu.zeros::<u64>("edge-ends", ends as usize)?;
        gpu.launch(&gpu.function("euler.cu", "euler_end_pairs")?, grid(ends), |b| {
            b.arg(&tuples).arg(&edges).arg(&first).arg(&mut pairs);
        })?;
        drop(tuples);
        let mut bucketed = gpu.zeros::<u64>("edge-ends", ends as usize)?;
        let mut owners = OwnerBuckets::new(gpu, part.size, part.block)?;
        let sent = owners.bucket(gpu, &pairs, ends, &mut bucketed)?;
        drop(pairs);
        let mut got = gpu.zeros::<u64>("edge-ends", 1)?;
        let received = self
            .exchange
            .alltoallv_runs(&bucketed, (&run_starts(&sent), &sent), &mut got)?;
        drop(bucketed);
        let count = received.iter().sum::<usize>() as u64;
        let (mut vertex, mut dart) = (gpu.zeros("edge-ends", count as usize)?, gpu.zeros("edge-ends", count as usize)?);
        let first_vertex = part.first();
        gpu.launch(&gpu.function("euler.cu", "euler_end_split")?, grid(count), |b| {
            b.arg(&got).arg(&count).arg(&first_vertex).arg(&mut vertex).arg(&mut dart);
        })?;
        gpu.sync("the edge-ends' exchange")?;
        (self.vertex, self.dart, self.count) = (vertex, dart, count);
        Ok(())
    }

    /// Append `edges` numbered from `first` (eulerize's, the trail's virtual edge: few),
    /// sent to their owners through the host (collective).
    pub fn extend(
        &mut self,
        world: &World,
        gpu: &Gpu,
        part: &Block1D,
        first: u64,
        edges: &[Edge],
    ) -> Result<()> {
        self.route(gpu, part)?;
        let total = world.allreduce(edges.len() as u64, Op::Sum);
        if total == 0 {
            return Ok(());
        }
        let id = |v: u64| self.shuffle.map_or(v, |s| s.apply(v));
        let edges: Vec<Edge> = edges.iter().map(|&(u, v)| (id(u), id(v))).collect();
        let more = darts::distribute(world, part, &[(first, &edges)])?;
        let vertex: Vec<u32> = more.iter().map(|t| part.local(t.0) as u32).collect();
        let dart: Vec<u32> = more.iter().map(|t| t.1 as u32).collect();
        self.vertex = append(gpu, &self.vertex, self.count, &vertex)?;
        self.dart = append(gpu, &self.dart, self.count, &dart)?;
        self.count += more.len() as u64;
        Ok(())
    }

    /// Per own vertex its degree, or for a digraph out-degree minus in-degree.
    fn degrees(&mut self, gpu: &Gpu, part: &Block1D, directed: bool) -> Result<CudaSlice<i32>> {
        self.route(gpu, part)?;
        let mut degree = gpu.zeros::<i32>("degrees", part.local_n())?;
        let (count, directed) = (self.count, u32::from(directed));
        gpu.launch(&gpu.function("euler.cu", "euler_end_degrees")?, grid(count), |b| {
            b.arg(&self.vertex)
                .arg(&self.dart)
                .arg(&count)
                .arg(&directed)
                .arg(&mut degree);
        })?;
        Ok(degree)
    }

    /// The degrees on the host, as `darts::degrees` gives them.
    pub fn host_degrees(&mut self, gpu: &Gpu, part: &Block1D, directed: bool) -> Result<Vec<i64>> {
        let degree = self.degrees(gpu, part, directed)?;
        let degree = gpu.download("degrees", &degree, part.local_n())?;
        Ok(degree.into_par_iter().map(i64::from).collect())
    }

    /// Whether every degree on every rank is even (digraph: every vertex balanced), decided
    /// on the devices (collective).
    pub fn balanced(&mut self, world: &World, gpu: &Gpu, part: &Block1D, directed: bool) -> Result<bool> {
        let degree = self.degrees(gpu, part, directed)?;
        let mut count = gpu.zeros::<u64>("counter", 1)?;
        let (n, directed) = (part.local_n() as u64, u32::from(directed));
        gpu.launch(&gpu.function("euler.cu", "euler_uneven")?, grid(n), |b| {
            b.arg(&degree).arg(&n).arg(&directed).arg(&mut count);
        })?;
        Ok(world.allreduce(read_one(gpu, &count, 0)?, Op::Sum) == 0)
    }
}

/// `held` items of `a` followed by `more`, in a new device array.
fn append(gpu: &Gpu, a: &CudaSlice<u32>, held: u64, more: &[u32]) -> Result<CudaSlice<u32>> {
    let held = held as usize;
    let mut grown = gpu.zeros::<u32>("edge-ends", held + more.len())?;
    if held > 0 {
        gpu.stream
            .memcpy_dtod(&a.slice(0..held), &mut grown.slice_mut(0..held))
            .map_err(|e| gpu_error("copy the edge-ends", e))?;
    }
    if !more.is_empty() {
        gpu.stream
            .memcpy_htod(more, &mut grown.slice_mut(held..held + more.len()))
            .map_err(|e| gpu_error("upload the added edge-ends", e))?;
    }
    Ok(grown)
}

/// Random vertex blocks, for comparison with the contiguous ones (`TESSERA_EULER_BLOCKS=random`):
/// the several GPUs' path works on the ids v' = a v + b mod n (a coprime to n), so that
/// each rank's block of v' is a scattered set of the graph's vertices; the circuit's
/// vertices go back by the inverse. Only an Eulerian graph's circuit is found this way
/// (eulerize and the trail are refused; a failed degree check names no vertex).
#[derive(Clone, Copy, Debug)]
pub struct Shuffle {
    n: u64,
    a: u64,
    b: u64,
    a_inverse: u64,
}

impl Shuffle {
    /// The shuffle `TESSERA_EULER_BLOCKS=random` asks for on `n` vertices, or None.
    pub fn asked(n: u64) -> Option<Shuffle> {
        let random = std::env::var("TESSERA_EULER_BLOCKS").is_ok_and(|v| v == "random");
        (random && n > 1).then(|| Shuffle::new(n))
    }

    fn new(n: u64) -> Shuffle {
        let mut a = crate::rng::GOLDEN % n;
        while gcd(a, n) != 1 {
            a += 1;
        }
        let a_inverse = inverse(a, n);
        Shuffle {
            n,
            a,
            b: n / 3,
            a_inverse,
        }
    }

    pub fn apply(&self, v: u64) -> u64 {
        ((u128::from(v) * u128::from(self.a) + u128::from(self.b)) % u128::from(self.n)) as u64
    }

    pub fn undo(&self, w: u64) -> u64 {
        let shifted = (w + self.n - self.b) % self.n;
        ((u128::from(shifted) * u128::from(self.a_inverse)) % u128::from(self.n)) as u64
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// x with a x = 1 mod n (a coprime to n).
fn inverse(a: u64, n: u64) -> u64 {
    let (mut r0, mut r1) = (i128::from(n), i128::from(a));
    let (mut t0, mut t1) = (0i128, 1i128);
    while r1 != 0 {
        let q = r0 / r1;
        (r0, r1) = (r1, r0 - q * r1);
        (t0, t1) = (t1, t0 - q * t1);
    }
    t0.rem_euclid(i128::from(n)) as u64
}

#[cfg(test)]
mod tests {
    use super::Shuffle;

    #[test]
    fn shuffles_are_bijections_undone_by_their_inverse() {
        for n in [2u64, 3, 64, 1000, 4096, 99_991] {
            let s = Shuffle::new(n);
            let mut seen = vec![false; n as usize];
            for v in 0..n {
                let w = s.apply(v);
                assert!(!seen[w as usize], "n {n}: {w} twice");
                seen[w as usize] = true;
                assert_eq!(s.undo(w), v);
            }
        }
    }
}
