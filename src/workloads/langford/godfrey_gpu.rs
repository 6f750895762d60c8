//! Godfrey's sum on a GPU (kernels/godfrey.cu): one launch per task, the kernel compiled for
//! this run's n and task split so the walk's shifts and masks are constants.
//!
//! Each thread's positions start with the four of the inner block J, put in the middle (from
//! n-2 up, as far as the walk fits; the thread's bits fill the free positions on both sides),
//! where the most odd S_i have both partners of every position of J, so the fewest zero-mask
//! tables are needed (kernels/godfrey.cu). The kernel tests every point (it skips no block),
//! so `prune` applies to the CPU walk only.

use super::godfrey::{self, Godfrey};
use super::job::Work;
use super::wide::Wide;
use crate::device::{blocks, gpu_error, Gpu, Kernel};
use crate::error::Result;
use crate::farm::Solver;
use cudarc::driver::{CudaSlice, PushKernelArg};

/// Threads per block (`THREADS` in the kernel).
const THREADS: u64 = 256;
/// At most 2^20 threads per task: enough to fill any GPU, each walking 2^(inner-20) points.
const MAX_THREAD_BITS: u32 = 20;
/// Walked positions whose flips are unrolled with constant positions (`UNROLL`). Measured on
/// an H100 at n = 23: 3 is the fastest; 2 is 4% slower, 5 is 2.3x slower (its unrolled code is
/// several times larger).
const UNROLL: u32 = 3;
/// Free positions a thread evaluates at once instead of walking them (J = Q..Q+3, 16 points a
/// step): the kernel needs tasks with at least this many free positions.
pub const PAIRED: u32 = 4;

pub struct GodfreyGpu<'a> {
    gpu: &'a Gpu,
    godfrey: &'a Godfrey,
    walk: Kernel,
    threads: u64,
    blocks: u64,
    partial: CudaSlice<u64>,
    /// Words per block in `partial`: the sum, then the points skipped.
    stride: usize,
}

impl<'a> GodfreyGpu<'a> {
    pub fn new(gpu: &'a Gpu, godfrey: &'a Godfrey) -> Result<Self> {
        let inner = godfrey.inner();
        // Each thread walks at least 2^(UNROLL+1) steps where the task is that large.
        let thread_bits = MAX_THREAD_BITS.min(inner.saturating_sub(PAIRED + UNROLL + 1));
        let walk_bits = inner - thread_bits;
        let words = godfrey::words(godfrey.n());
        let (n, first) = (godfrey.n(), godfrey.first_inner());
        // Positions Q..Q+WALK (J, then the walked ones): from n-2 up as far as they fit; the
        // thread's bits take the free positions below Q and above Q+WALK.
        let q = (n - 2).min(2 * n - first - walk_bits).max(first);
        let defines = [
            ("N", u64::from(n)),
            ("Q", u64::from(q)),
            ("FIRST", u64::from(first)),
            ("LOW", u64::from(q - first)),
            ("WORDS", words as u64),
            ("WALK", u64::from(walk_bits)),
            (
                "UNROLL",
                u64::from(UNROLL.min(walk_bits.saturating_sub(PAIRED))),
            ),
        ];
        let walk = gpu.specialised("godfrey.cu", &defines, "godfrey_walk")?;
        let threads = 1u64 << thread_bits;
        let blocks = threads.div_ceil(THREADS);
        let stride = words + 1;
        let partial = gpu
            .stream
            .alloc_zeros::<u64>((blocks as usize) * stride)
            .map_err(|e| gpu_error("allocate godfrey partial sums", e))?;
        log::info!(
            "godfrey on {}: {threads} threads per task, {} points each",
            gpu.describe(),
            1u64 << walk_bits
        );
        Ok(GodfreyGpu {
            gpu,
            godfrey,
            walk,
            threads,
            blocks,
            partial,
            stride,
        })
    }

    /// The task's weighted sum and the points the kernel skipped.
    fn run_words<const W: usize>(&mut self, task: usize) -> Result<(Vec<u64>, u64)> {
        let t = self.godfrey.tasks()[task];
        let cfg = blocks(self.blocks, THREADS.min(self.threads) as u32);
        // As godfrey_walk's parameters; `partial` holds per block its sum of WORDS words and
        // the points its threads skipped.
        self.gpu.launch(&self.walk, cfg, |b| {
            b.arg(&t.outer).arg(&self.threads).arg(&mut self.partial);
        })?;
        let partial =
            self.gpu
                .download("godfrey partial sums", &self.partial, self.partial.len())?;
        let sum = partial
            .chunks_exact(self.stride)
            .map(|b| Wide::<W>::from_words(&b[..W]))
            .fold(Wide::default(), Wide::wrapping_add);
        let skipped = partial.chunks_exact(self.stride).map(|b| b[W]).sum();
        Ok((sum.wrapping_mul_i64(t.weight as i64).0.to_vec(), skipped))
    }
}

impl Solver<Work> for GodfreyGpu<'_> {
    fn run(&mut self, task: usize) -> Result<Work> {
        let (words, skipped) = match godfrey::words(self.godfrey.n()) {
            2 => self.run_words::<2>(task)?,
            _ => self.run_words::<3>(task)?,
        };
        let points = 1u64 << self.godfrey.inner();
        Ok(Work {
            words,
            points,
            visited: points - skipped,
        })
    }
}
