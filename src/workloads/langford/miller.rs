//! Miller's tree search for Langford pairings L(2,n): sequences of 2n numbers in which the
//! two copies of each k in 1..=n have exactly k numbers between them, a sequence and its
//! reverse counted once.
//!
//! A state is a u64 mask of the occupied positions 0..2n-1 (n <= 32). Numbers are placed
//! largest first, because the large ones have the fewest positions and so cut the tree
//! earliest: number k at position a occupies bits a and a+k+1. The reverse of a sequence
//! puts n at n-2-a instead of a, so only first placements with a <= n-2-a are searched:
//! those with a < n-2-a count twice (for themselves and their reverses), the centre one
//! (n even) once, since its reverse also has n at the centre and is searched too. The
//! weighted sum over the whole tree is therefore exactly 2·L(2,n).
//!
//! The task farm hands out `MillerTasks`: the placements of the `depth` largest numbers.
//! Each task is finished on the CPU (`count_cpu`, rayon) or a GPU (`MillerGpu`,
//! kernels/miller.cu); both first split the task's subtree a few levels further on the host
//! (`split`) so that the cores or GPU threads have many independent subtrees to share.
//! "Nodes" are the successful placements made below a task, counted alike on both paths.

use crate::device::{gpu_error, grid, Gpu, Kernel};
use crate::error::Result;
use cudarc::driver::{CudaSlice, PushKernelArg};
use rayon::prelude::*;

/// Sub-prefixes per task on the CPU: many per rayon thread, so that the very uneven
/// subtrees even out between threads.
const CPU_SPLIT: usize = 4096;
/// At least this many sub-prefixes per task on the GPU (one per thread); more when the
/// GPU holds more threads at once.
const GPU_SPLIT: usize = 1 << 16;

/// The task farm's tasks for Miller's search: every consistent placement of the `depth`
/// largest numbers (n, n-1, ..., n-depth+1), in a fixed deterministic order, each with its
/// mirror weight (2 or 1, see the module doc).
pub struct MillerTasks {
    n: u32,
    depth: u32,
    /// (occupied positions, mirror weight) per task, in generation order.
    tasks: Vec<(u64, u64)>,
}

/// Positions 0..2n-1 all set.
fn full_mask(n: u32) -> u64 {
    u64::MAX >> (64 - 2 * n)
}

/// Positions a where number k fits in `mask`: bits a and a+k+1 both free. `free` has no
/// bits at or above 2n, so the shift also rules out a+k+1 >= 2n.
fn candidates(mask: u64, full: u64, k: u32) -> u64 {
    let free = full & !mask;
    free & (free >> (k + 1))
}

/// The two positions number k occupies when its first copy is at a.
fn pair(a: u32, k: u32) -> u64 {
    (1 << a) | (1 << (a + k + 1))
}

/// The set bits of `c`, lowest first.
fn bits(mut c: u64) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        (c != 0).then(|| {
            let a = c.trailing_zeros();
            c &= c - 1;
            a
        })
    })
}

/// Push every placement of k, k-1, ..., last+1 onto `mask`, depth first, lowest position first.
fn prefixes(mask: u64, full: u64, k: u32, last: u32, weight: u64, out: &mut Vec<(u64, u64)>) {
    if k == last {
        out.push((mask, weight));
        return;
    }
    for a in bits(candidates(mask, full, k)) {
        prefixes(mask | pair(a, k), full, k - 1, last, weight, out);
    }
}

/// (solutions, nodes) below `mask` with k, k-1, ..., 1 still to place (k >= 1).
fn finish(mask: u64, full: u64, k: u32) -> (u64, u64) {
    let mut solutions = 0;
    let mut nodes = 0;
    for a in bits(candidates(mask, full, k)) {
        nodes += 1;
        if k == 1 {
            solutions += 1;
        } else {
            let (s, v) = finish(mask | pair(a, k), full, k - 1);
            solutions += s;
            nodes += v;
        }
    }
    (solutions, nodes)
}

/// A prefix expanded level by level into sub-prefixes.
struct Split {
    prefixes: Vec<u64>,
    /// The number each sub-prefix places next; 0 when they are complete sequences.
    next: u32,
    /// Placements made by the expansion.
    nodes: u64,
}

impl Split {
    /// When nothing is left to search below the sub-prefixes: they are complete sequences
    /// (each one solution) or there are none. Then `prefixes.len()` is the solution count.
    fn is_final(&self) -> bool {
        self.next == 0 || self.prefixes.is_empty()
    }
}

/// Expand `mask`, with k, k-1, ..., 1 still to place, a whole level at a time until there
/// are at least `target` sub-prefixes or nothing is left to place. Whole levels keep every
/// sub-prefix at the same depth, which the GPU kernel needs (one k0 per launch).
fn split(mask: u64, full: u64, k: u32, target: usize) -> Split {
    let mut prefixes = vec![mask];
    let mut k = k;
    let mut nodes = 0;
    while k > 0 && !prefixes.is_empty() && prefixes.len() < target {
        prefixes = prefixes
            .iter()
            .flat_map(|&m| bits(candidates(m, full, k)).map(move |a| m | pair(a, k)))
            .collect();
        nodes += prefixes.len() as u64;
        k -= 1;
    }
    Split {
        prefixes,
        next: k,
        nodes,
    }
}

impl MillerTasks {
    /// `1 <= depth <= n <= 32` is checked by the caller.
    pub fn new(n: u32, depth: u32) -> Self {
        debug_assert!(
            1 <= depth && depth <= n && n <= 32,
            "n = {n}, depth = {depth}"
        );
        let full = full_mask(n);
        let mut tasks = Vec::new();
        // n fits at 0..=n-2 only, so its mirror n-2-a does not underflow.
        for a in bits(candidates(0, full, n)) {
            let mirror = n - 2 - a;
            if a > mirror {
                break;
            }
            let weight = if a < mirror { 2 } else { 1 };
            prefixes(pair(a, n), full, n - 1, n - depth, weight, &mut tasks);
        }
        MillerTasks { n, depth, tasks }
    }

    /// How many tasks `new(n, depth)` makes, counted without keeping them; `None` once the
    /// count passes `cap` (for refusing a depth whose tasks cannot fit, in about `cap` steps).
    pub fn count(n: u32, depth: u32, cap: u64) -> Option<u64> {
        fn walk(mask: u64, full: u64, k: u32, last: u32, count: &mut u64, cap: u64) -> bool {
            if k == last {
                *count += 1;
                return *count <= cap;
            }
            bits(candidates(mask, full, k))
                .all(|a| walk(mask | pair(a, k), full, k - 1, last, count, cap))
        }
        let full = full_mask(n);
        let mut count = 0;
        for a in bits(candidates(0, full, n)) {
            if a > n - 2 - a {
                break;
            }
            if !walk(pair(a, n), full, n - 1, n - depth, &mut count, cap) {
                return None;
            }
        }
        Some(count)
    }

    /// Number of tasks; 0 when n cannot be placed at all (n = 1).
    pub fn len(&self) -> u64 {
        self.tasks.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// The task's prefix (mask, weight) and the number placed next below it.
    fn task(&self, id: u64) -> (u64, u64, u32) {
        let (mask, weight) = self.tasks[id as usize];
        (mask, weight, self.n - self.depth)
    }

    /// (weighted solutions below task `id`, tree nodes visited) on the CPU with rayon.
    /// Weighted: solutions times the task's weight, so the sum over all tasks is 2·L(2,n).
    /// Nodes: successful placements made below the task. Panics when `id >= len()`.
    pub fn count_cpu(&self, id: u64) -> (u64, u64) {
        let (mask, weight, k) = self.task(id);
        let full = full_mask(self.n);
        let s = split(mask, full, k, CPU_SPLIT);
        let (solutions, nodes) = if s.is_final() {
            (s.prefixes.len() as u64, 0)
        } else {
            s.prefixes
                .par_iter()
                .map(|&m| finish(m, full, s.next))
                .reduce(|| (0, 0), |x, y| (x.0 + y.0, x.1 + y.1))
        };
        (solutions * weight, s.nodes + nodes)
    }
}

/// The same search on a GPU: per task, the host splits the task's prefix into at least as
/// many sub-prefixes as the GPU holds threads (or until the tree is exhausted), uploads
/// them, and each thread of `miller_count` (kernels/miller.cu) finishes one by iterative
/// backtracking. Counts are summed per block and added atomically to `totals`.
pub struct MillerGpu<'a> {
    gpu: &'a Gpu,
    kernel: Kernel,
    /// The n the tasks were made for (the kernel's mask of positions depends on it).
    n: u32,
    /// Sub-prefixes per task to aim for.
    target: usize,
    /// The current task's sub-prefixes; reallocated larger when a split overshoots it.
    prefixes: CudaSlice<u64>,
    /// [0] solutions (unweighted), [1] nodes, as the kernel adds them.
    totals: CudaSlice<u64>,
}

impl<'a> MillerGpu<'a> {
    pub fn new(gpu: &'a Gpu, tasks: &MillerTasks) -> Result<Self> {
        let target = (gpu.resident_threads()? as usize).max(GPU_SPLIT);
        let s = &gpu.stream;
        Ok(MillerGpu {
            gpu,
            kernel: gpu.function("miller.cu", "miller_count")?,
            n: tasks.n,
            target,
            prefixes: s
                .alloc_zeros::<u64>(target)
                .map_err(|e| gpu_error("allocate miller prefixes", e))?,
            totals: s
                .alloc_zeros::<u64>(2)
                .map_err(|e| gpu_error("allocate miller totals", e))?,
        })
    }

    /// Same result as `count_cpu` for the same id. `tasks` must be the ones `new` was given
    /// (or others for the same n).
    pub fn count(&mut self, tasks: &MillerTasks, id: u64) -> Result<(u64, u64)> {
        debug_assert_eq!(tasks.n, self.n, "MillerGpu was made for another n");
        let (mask, weight, k) = tasks.task(id);
        let full = full_mask(self.n);
        let s = split(mask, full, k, self.target);
        if s.is_final() {
            return Ok((s.prefixes.len() as u64 * weight, s.nodes));
        }
        let stream = &self.gpu.stream;
        let count = s.prefixes.len();
        if count > self.prefixes.len() {
            self.prefixes = stream
                .alloc_zeros::<u64>(count)
                .map_err(|e| gpu_error("allocate miller prefixes", e))?;
        }
        stream
            .memcpy_htod(&s.prefixes, &mut self.prefixes.slice_mut(0..count))
            .map_err(|e| gpu_error("upload miller prefixes", e))?;
        stream
            .memset_zeros(&mut self.totals)
            .map_err(|e| gpu_error("reset miller totals", e))?;
        let count = count as u64;
        // As miller_count's parameters in kernels/miller.cu; `prefixes` holds `count` entries.
        self.gpu.launch(&self.kernel, grid(count), |b| {
            b.arg(&self.prefixes)
                .arg(&count)
                .arg(&full)
                .arg(&s.next)
                .arg(&mut self.totals);
        })?;
        let totals = self.gpu.download("miller totals", &self.totals, 2)?;
        Ok((totals[0] * weight, s.nodes + totals[1]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counted_tasks_are_the_tasks_made() {
        for n in [3, 7, 8, 11, 12] {
            for depth in 1..=n.min(5) {
                let made = MillerTasks::new(n, depth).len();
                assert_eq!(
                    MillerTasks::count(n, depth, made),
                    Some(made),
                    "n {n} d {depth}"
                );
                if made > 0 {
                    assert_eq!(MillerTasks::count(n, depth, made - 1), None);
                }
            }
        }
    }

    /// 2·L(2,n) by a different search: fill the first empty slot with any unused number
    /// whose partner slot is free, counting every sequence (no mirror trick).
    fn brute_force_doubled(n: usize) -> u64 {
        fn fill(slots: &mut [usize], used: &mut [bool]) -> u64 {
            let Some(i) = slots.iter().position(|&s| s == 0) else {
                return 1;
            };
            let mut count = 0;
            for k in 1..used.len() {
                let j = i + k + 1;
                if !used[k] && j < slots.len() && slots[j] == 0 {
                    used[k] = true;
                    slots[i] = k;
                    slots[j] = k;
                    count += fill(slots, used);
                    slots[i] = 0;
                    slots[j] = 0;
                    used[k] = false;
                }
            }
            count
        }
        fill(&mut vec![0; 2 * n], &mut vec![false; n + 1])
    }

    /// (sum of weighted solutions, sum of nodes) over all tasks.
    fn totals(n: u32, depth: u32) -> (u64, u64) {
        let tasks = MillerTasks::new(n, depth);
        (0..tasks.len())
            .map(|id| tasks.count_cpu(id))
            .fold((0, 0), |x, y| (x.0 + y.0, x.1 + y.1))
    }

    /// L(2,n) from the task sum, checking the sum is even.
    fn langford(n: u32, depth: u32) -> u64 {
        let (doubled, _) = totals(n, depth);
        assert_eq!(
            doubled % 2,
            0,
            "odd task sum {doubled} for n = {n}, depth = {depth}"
        );
        doubled / 2
    }

    #[test]
    fn matches_brute_force_at_every_depth() {
        for n in 1..=8u32 {
            let expected = brute_force_doubled(n as usize);
            assert_eq!(expected % 2, 0);
            for depth in 1..=n {
                assert_eq!(totals(n, depth).0, expected, "n = {n}, depth = {depth}");
            }
        }
    }

    #[test]
    fn known_values() {
        for (n, l) in [(3, 1), (4, 1), (7, 26), (8, 150), (11, 17792), (12, 108144)] {
            for depth in [1, 2, 3] {
                assert_eq!(langford(n, depth), l, "n = {n}, depth = {depth}");
            }
        }
    }

    #[test]
    fn zero_when_n_is_1_or_2_mod_4() {
        for n in [1, 2, 5, 6, 9, 10] {
            for depth in 1..=3.min(n) {
                assert_eq!(langford(n, depth), 0, "n = {n}, depth = {depth}");
            }
        }
    }

    #[test]
    fn depth_moves_nodes_into_tasks() {
        // One level deeper, the placements of that level become tasks instead of nodes
        // below them, and the solutions stay the same.
        for n in [7, 8, 11] {
            for depth in 1..=3 {
                let (s, v) = totals(n, depth);
                let (s2, v2) = totals(n, depth + 1);
                assert_eq!(s, s2, "n = {n}, depth = {depth}");
                assert_eq!(v, v2 + MillerTasks::new(n, depth + 1).len(), "n = {n}");
            }
        }
    }

    #[test]
    fn split_then_finish_matches_plain_search() {
        // The GPU path's host side: any split, finished below, gives the plain counts.
        let n = 8;
        let full = full_mask(n);
        let tasks = MillerTasks::new(n, 2);
        for id in 0..tasks.len() {
            let (mask, _, k) = tasks.task(id);
            let plain = finish(mask, full, k);
            for target in [1, 2, 10, 100, 1 << 20] {
                let s = split(mask, full, k, target);
                let below = if s.is_final() {
                    (s.prefixes.len() as u64, 0)
                } else {
                    s.prefixes
                        .iter()
                        .map(|&m| finish(m, full, s.next))
                        .fold((0, 0), |x, y| (x.0 + y.0, x.1 + y.1))
                };
                assert_eq!(
                    (below.0, s.nodes + below.1),
                    plain,
                    "task {id}, target {target}"
                );
            }
        }
    }

    #[test]
    fn mirror_weights() {
        // n odd: no centre placement, every task weighs 2; n even: the centre ones weigh 1.
        assert!(MillerTasks::new(7, 1).tasks.iter().all(|&(_, w)| w == 2));
        let even = MillerTasks::new(8, 1);
        assert_eq!(even.len(), 4);
        assert_eq!(even.tasks[3], (pair(3, 8), 1));
        assert!(MillerTasks::new(1, 1).is_empty());
    }
}
