//! Godfrey's algebraic method on the CPU:
//!
//!   Σ_{x ∈ {-1,+1}^{2n}} (Π_k x_k) Π_{i=1..n} S_i(x) = 2^{2n+1} L(2,n),
//!   S_i(x) = Σ_{k=1}^{2n-i-1} x_k x_{k+i+1}.
//!
//! Positions are 0-based here (x_k is position k-1); an assignment is a u64 mask whose bit k
//! is set when position k holds -1.
//!
//! Symmetry. Three maps leave the summand f unchanged and generate a group of order 8:
//! - global negation x ↦ -x (always: 2n factors x_k, and S_i is quadratic);
//! - the alternating flip x_k ↦ (-1)^k x_k: S_i picks up (-1)^(i+1) and Π x_k picks up
//!   (-1)^n, so f picks up (-1)^(n + ⌊n/2⌋): a symmetry exactly when n ≡ 0, 3 (mod 4); for
//!   other n it proves the sum zero, so those n stop before any walk;
//! - the reflection k ↦ 2n+1-k, which maps each S_i onto itself.
//!
//! Each task fixes the `depth` outer positions (depth/2 from each end); the group maps outer
//! positions to outer positions, so it acts on these outer signatures, and the fibres of
//! signatures in one orbit have equal sums. Only one signature per orbit is walked, weighted
//! by the orbit's size: negation and the flip together remove a factor 4 (the first two
//! variables are as good as pinned), the reflection nearly 2 more (signatures it fixes, the
//! palindromes, are walked once with their smaller weight).
//!
//! Walk. The free (inner) positions are visited in Gray-code order, one flip per step, and
//! every S_i is updated from the flipped position's neighbours. S_i ≡ i+1 (mod 2), so only
//! odd i can vanish; a point with a zero odd factor is skipped before its product is formed.
//!
//! Packed lanes. S_i values live in byte lanes of u64 words, biased by 128 so no lane ever
//! borrows from its neighbour: odd i in one set of words (tested for zero with one word
//! trick), even i in another. Splitting positions by parity makes the neighbours that move
//! the odd S_i (at even distance) consecutive bits of one parity class, and those that move
//! the even S_i consecutive bits of the other, so a flip updates all lanes with a few shifts.
//! kernels/godfrey.cu walks the positions differently: four free positions (an inner block)
//! are not walked, and each walk step finds which of their 16 points have a zero odd S_i by
//! one table read per odd i; the S_i of the points whose product is due are recomputed from
//! the parity classes by popcounts.
//!
//! Pruning (`prune = true`; off by default: measured slower, see below). Take a sub-cube: a set U of free positions, every
//! other position fixed. For odd i split S_i by its terms x_k x_{k+i+1}:
//!
//!   S_i = A_i + Σ_{p ∈ U} c_p x_p + Σ_{p, q ∈ U, q = p+i+1} x_p x_q,
//!
//! A_i the sum of the terms with both positions fixed, c_p = x_{p-i-1} + x_{p+i+1} over the
//! partners of p that exist and are fixed (c_p ∈ {-2, 0, 2}, or ±1 when one partner is past
//! an end). Each monomial has its own coefficient, so over the 2^|U| completions
//! |S_i - A_i| ≤ B_i = Σ |c_p| + #(free pairs at distance i+1) ≤ the number of terms with a
//! free position, S_i ≡ i+1 ≡ 0 (mod 2) for odd i, and S_i is constant exactly when B_i = 0.
//! Hence the exact rule: **S_i = 0 for every completion iff B_i = 0 and A_i = 0**, i.e. no two
//! free positions lie i+1 apart, every free position's two partners at distance i+1 are
//! fixed with opposite signs or both missing, and S_i is 0 at the current point (it is then
//! 0 at every point). Such a sub-cube contributes 0 and is skipped whole. (|A_i| > B_i, i.e.
//! |A_i| ≥ B_i + 2 by parity, proves S_i ≠ 0 on the whole sub-cube: it never skips anything.)
//! Counting only the free terms (B_i replaced by their number) proves a zero only where U is
//! empty: for i < n every position has a partner, so that weaker bound never skips more than
//! the point test already does; the cancelling partners are what make sub-cubes prunable.
//!
//! Order. The pruned walk is the reflected Gray code written as a recursion over the free
//! positions in a fixed order, fastest first: block(w) is the sub-cube of the first w
//! positions free; it is tested by the rule (for w ≤ PRUNE_LEVELS) and, when not pruned, walks
//! block(w-1), flips position w-1 of the order, walks block(w-1). The order is middle-out
//! (n-1, n, n-2, n+1, ...): the middle positions have both partners for the most i, and for
//! odd n positions n-1 and n have no partner at distance n+1, so S_n alone decides the
//! 4-point sub-cube {n-1, n}. A sub-cube of w free positions passes on a given i with
//! probability about 2^-w P(S_i = 0) (each position's partners must cancel), so prunes are
//! of 2 to 8 points: the fraction of points visited falls to 0.37 (n = 15) or 0.55 (n = 16),
//! but every point pruned is a point the point test skips anyway (a zero odd factor): what
//! pruning saves is flips and zero tests, never a product, and on the CPU (where products
//! and flips each take about 40% of the time) the tests cost a little more than they save.
//! On one H100 an earlier, pruned GPU kernel visited 0.9997 of the points of L(2,27) and took
//! L(2,23) in 42.9 s against 40.4 s unpruned (a warp skips a block only when all 32 threads
//! agree), so the default is the unpruned walk, and the GPU kernel tests every point.

use super::wide::Wide;
use rayon::prelude::*;

/// Largest n: 2n positions fit one u64 mask.
pub const MAX_N: u32 = 32;

/// Words of the wrap-around sum: 128 bits hold 2^(2n+1) L(2,n) up to n = 28, 192 up to 32.
pub fn words(n: u32) -> usize {
    if n <= 28 {
        2
    } else {
        3
    }
}

/// Whether L(2,n) can be non-zero (n ≡ 0, 3 mod 4); the alternating flip proves the rest zero.
pub fn solvable(n: u32) -> bool {
    n.is_multiple_of(4) || n % 4 == 3
}

/// Bits of the u32 lanes-index masks for up to 16 lanes per parity.
const LANES: usize = 16;
const BIAS: u64 = 0x8080_8080_8080_8080;
const ONES: u64 = 0x0101_0101_0101_0101;

/// One walked signature of the outer positions, with the size of its orbit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Task {
    /// Assignment of the outer positions (inner bits zero).
    pub outer: u64,
    pub weight: u64,
}

/// Levels of the pruned walk tested by the rule: sub-cubes of 2 and 4 points. Testing larger
/// ones never visits fewer points (a prunable sub-cube's halves are prunable) and saves
/// fewer flips than the tests cost: n = 15 on one core, 3.90 s unpruned, 4.10 s at 2 levels,
/// 4.30 s at 4, 4.40 s at 6.
pub const PRUNE_LEVELS: u32 = 2;

/// Godfrey's sum for one n, cut into tasks by the outer `depth` positions.
pub struct Godfrey {
    n: u32,
    depth: u32,
    tasks: Vec<Task>,
    prune: bool,
}

/// A task's result: its weighted sum and the points of its fibre the walk visited (zero
/// tested); the fibre holds 2^inner points, those not visited lie in pruned sub-cubes.
pub struct TaskSum {
    pub words: Vec<u64>,
    pub visited: u64,
}

impl Godfrey {
    /// `n` in 1..=MAX_N and, where L(2,n) can be non-zero, `depth` even in 4..=2n (checked
    /// by the caller). Other n have no tasks: their sum is zero by symmetry.
    pub fn new(n: u32, depth: u32) -> Self {
        let tasks = if solvable(n) {
            debug_assert!(n <= MAX_N && depth.is_multiple_of(2) && (4..=2 * n).contains(&depth));
            orbit_representatives(n, depth)
        } else {
            Vec::new()
        };
        Godfrey {
            n,
            depth,
            tasks,
            prune: false,
        }
    }

    /// Walk with pruning or without (the default: every point zero tested).
    pub fn with_prune(mut self, prune: bool) -> Self {
        self.prune = prune;
        self
    }

    pub fn prune(&self) -> bool {
        self.prune
    }

    pub fn n(&self) -> u32 {
        self.n
    }

    pub fn depth(&self) -> u32 {
        self.depth
    }

    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    /// Free positions per task; each task walks 2^inner points.
    pub fn inner(&self) -> u32 {
        2 * self.n - self.depth
    }

    /// First free position (the walk starts there).
    pub fn first_inner(&self) -> u32 {
        self.depth / 2
    }

    /// Free positions in the pruned walk's order, fastest first: middle-out (n-1, n, n-2,
    /// n+1, ...), which covers exactly the free range first_inner..2n-first_inner.
    pub fn walk_order(&self) -> Vec<u32> {
        (0..self.inner())
            .map(|k| {
                let step = k / 2;
                if k % 2 == 0 {
                    self.n - 1 - step
                } else {
                    self.n + step
                }
            })
            .collect()
    }

    /// The task's weighted fibre sum, as `words(n)` words modulo 2^(64 words), and the
    /// points visited.
    pub fn run_cpu(&self, id: usize) -> TaskSum {
        let (sum, visited) = match words(self.n) {
            2 => {
                let (s, v) = self.run_words::<2>(id);
                (s.0.to_vec(), v)
            }
            _ => {
                let (s, v) = self.run_words::<3>(id);
                (s.0.to_vec(), v)
            }
        };
        TaskSum {
            words: sum,
            visited,
        }
    }

    fn run_words<const W: usize>(&self, id: usize) -> (Wide<W>, u64) {
        let task = self.tasks[id];
        let inner = self.inner();
        // The top `split` free positions are fixed per rayon job, the rest are walked.
        let split = inner.min(10);
        let walked = inner - split;
        let first = self.first_inner();
        let order = self.walk_order();
        let (sum, visited) = (0..1u64 << split)
            .into_par_iter()
            .map(|high| {
                if self.prune {
                    let start = order[walked as usize..]
                        .iter()
                        .enumerate()
                        .fold(task.outer, |x, (b, &p)| x | (high >> b & 1) << p);
                    walk_pruned::<W>(self.n, start, &order[..walked as usize])
                } else {
                    let start = task.outer | (high << (first + walked));
                    (walk::<W>(self.n, start, first, walked), 1u64 << walked)
                }
            })
            .reduce(
                || (Wide::default(), 0),
                |a, b| (a.0.wrapping_add(b.0), a.1 + b.1),
            );
        (sum.wrapping_mul_i64(task.weight as i64), visited)
    }
}

/// Apply one of the 8 group elements to an assignment of the 2n positions:
/// bit 0 reflects, bit 1 negates, bit 2 flips alternate positions.
fn act(n: u32, g: u32, x: u64) -> u64 {
    let positions = 2 * n;
    let all = if positions == 64 {
        u64::MAX
    } else {
        (1 << positions) - 1
    };
    // 1-based odd positions are the 0-based even ones.
    let alternate = 0x5555_5555_5555_5555 & all;
    let mut y = if g & 1 == 1 {
        x.reverse_bits() >> (64 - positions)
    } else {
        x
    };
    if g & 2 != 0 {
        y ^= all;
    }
    if g & 4 != 0 {
        y ^= alternate;
    }
    y
}

/// Signatures of the outer `depth` positions, one per orbit of the group, in increasing
/// order, each with its orbit size.
fn orbit_representatives(n: u32, depth: u32) -> Vec<Task> {
    let half = depth / 2;
    let outer_positions: Vec<u32> = (0..half).chain(2 * n - half..2 * n).collect();
    let outer_mask: u64 = outer_positions.iter().map(|&p| 1u64 << p).sum();
    let spread = |bits: u64| -> u64 {
        outer_positions
            .iter()
            .enumerate()
            .filter(|(i, _)| bits >> i & 1 == 1)
            .map(|(_, &p)| 1u64 << p)
            .sum()
    };
    let mut tasks = Vec::new();
    for bits in 0..1u64 << depth {
        let x = spread(bits);
        let images: Vec<u64> = (0..8).map(|g| act(n, g, x) & outer_mask).collect();
        if images.iter().all(|&y| y >= x) {
            let mut distinct = images;
            distinct.sort_unstable();
            distinct.dedup();
            tasks.push(Task {
                outer: x,
                weight: distinct.len() as u64,
            });
        }
    }
    tasks
}

/// S_i(x) for i = 1..=n, computed directly (index 0 unused).
pub fn correlations(n: u32, x: u64) -> Vec<i32> {
    let mut s = vec![0; n as usize + 1];
    for (i, si) in s.iter_mut().enumerate().skip(1) {
        let terms = 2 * n - i as u32 - 1;
        let differ = (x ^ (x >> (i + 1))) & ((1u64 << terms) - 1);
        *si = terms as i32 - 2 * differ.count_ones() as i32;
    }
    s
}

/// The summand f(x) = (Π x_k) Π S_i, as an exact (wrapping) wide integer.
fn summand<const W: usize>(x: u64, s: impl Iterator<Item = i32>) -> Wide<W> {
    // Blocks of 10 factors (|S_i| < 64) fit an i64 exactly.
    let mut product = Wide::from_i64(if x.count_ones() % 2 == 1 { -1 } else { 1 });
    let mut block: i64 = 1;
    for (k, v) in s.enumerate() {
        block = block.wrapping_mul(i64::from(v)); // exact: see above
        if k % 10 == 9 {
            product = product.wrapping_mul_i64(block);
            block = 1;
        }
    }
    product.wrapping_mul_i64(block)
}

/// Expand the low 16 bits of `bits` into 16 byte lanes (0 or 1) of two words.
fn expand(bits: u64) -> [u64; 2] {
    [
        BYTE_LANES[(bits & 0xff) as usize],
        BYTE_LANES[(bits >> 8 & 0xff) as usize],
    ]
}

/// BYTE_LANES[b] has byte k equal to bit k of b.
static BYTE_LANES: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        while k < 8 {
            t[b] |= ((b as u64 >> k) & 1) << (8 * k);
            k += 1;
        }
        b += 1;
    }
    t
};

fn lanes_below(k: i64) -> u64 {
    let k = k.clamp(0, LANES as i64);
    (1u64 << k) - 1
}

/// What flipping one position does to the lanes of one parity of i (precomputed per position).
#[derive(Clone, Copy)]
struct LaneUpdate {
    /// Parity class the neighbours are read from (0: even positions, 1: odd positions).
    class: usize,
    up_shift: u32,
    up_valid: u64,
    down_shift: u32,
    down_valid: u64,
    /// E(up_valid) + E(down_valid): the neighbours that exist, per lane.
    present: [u64; 2],
}

impl LaneUpdate {
    fn new(class: usize, up_shift: u32, up_valid: u64, down_shift: u32, down_valid: u64) -> Self {
        let (u, d) = (expand(up_valid), expand(down_valid));
        LaneUpdate {
            class,
            up_shift,
            up_valid,
            down_shift,
            down_valid,
            present: [u[0] + d[0], u[1] + d[1]],
        }
    }

    /// S_i += -2 y_old (c_up + c_down), with c = ±1 for a neighbour that exists, 0 otherwise:
    /// in lanes, T += y_old (4 E(up & valid) + 4 E(down & valid) - 2 E(present)). The order of
    /// the two steps keeps every lane within 0..255 (|S_i| < 64 around the bias 128).
    fn apply(&self, lanes: &mut [u64; 2], classes: &[u64; 2], reversed: &[u64; 2], plus: bool) {
        let up = expand(classes[self.class] >> self.up_shift & self.up_valid);
        let down = expand(reversed[self.class] >> self.down_shift & self.down_valid);
        // Lane arithmetic: no lane leaves 0..255, so no word can overflow; the wrapping
        // forms only spare the hot loop the overflow checks of the tests' build.
        for w in 0..2 {
            let moved = (up[w].wrapping_add(down[w])).wrapping_mul(4);
            let present = self.present[w].wrapping_mul(2);
            lanes[w] = if plus {
                lanes[w].wrapping_add(moved).wrapping_sub(present)
            } else {
                lanes[w].wrapping_add(present).wrapping_sub(moved)
            };
        }
    }
}

/// The walk state: the assignment by parity class (and each class bit-reversed within n
/// bits), and the biased S_i lanes.
struct Walker {
    n: u32,
    classes: [u64; 2],
    reversed: [u64; 2],
    odd: [u64; 2],
    even: [u64; 2],
    /// Per flippable position: updates of the odd-i and even-i lanes.
    plans: Vec<(LaneUpdate, LaneUpdate)>,
    first: u32,
}

impl Walker {
    fn new(n: u32, x: u64, first: u32, walked: u32) -> Self {
        let mut classes = [0u64; 2];
        for p in 0..2 * n {
            classes[(p % 2) as usize] |= (x >> p & 1) << (p / 2);
        }
        let reversed = classes.map(|c| c.reverse_bits() >> (64 - n));
        let s = correlations(n, x);
        let (mut odd, mut even) = ([0u64; 2], [0u64; 2]);
        for (i, &v) in s.iter().enumerate().skip(1) {
            let lane = (i - 1) / 2;
            let target = if i % 2 == 1 { &mut odd } else { &mut even };
            target[lane / 8] |= ((v + 128) as u64) << (8 * (lane % 8));
        }
        let plans = (first..first + walked).map(|p| plan(n, p)).collect();
        Walker {
            n,
            classes,
            reversed,
            odd,
            even,
            plans,
            first,
        }
    }

    fn flip(&mut self, position: u32) {
        let (odd_update, even_update) = self.plans[(position - self.first) as usize];
        let class = (position % 2) as usize;
        let h = position / 2;
        let plus = self.classes[class] >> h & 1 == 0;
        odd_update.apply(&mut self.odd, &self.classes, &self.reversed, plus);
        even_update.apply(&mut self.even, &self.classes, &self.reversed, plus);
        self.classes[class] ^= 1 << h;
        self.reversed[class] ^= 1 << (self.n - 1 - h);
    }

    /// Whether some odd S_i is zero (lane equal to the bias).
    fn has_zero_factor(&self, odd_lanes: &[u64; 2]) -> bool {
        self.odd.iter().zip(odd_lanes).any(|(&w, &mask)| {
            let v = w ^ BIAS;
            (v.wrapping_sub(ONES) & !v & BIAS & mask) != 0
        })
    }

    fn values(&self) -> impl Iterator<Item = i32> + '_ {
        let lane = |words: &[u64; 2], l: usize| (words[l / 8] >> (8 * (l % 8)) & 0xff) as i32 - 128;
        (1..=self.n as usize).map(move |i| {
            let l = (i - 1) / 2;
            if i % 2 == 1 {
                lane(&self.odd, l)
            } else {
                lane(&self.even, l)
            }
        })
    }

    fn assignment(&self) -> u64 {
        (0..2 * self.n).fold(0, |x, p| {
            x | (self.classes[(p % 2) as usize] >> (p / 2) & 1) << p
        })
    }
}

/// Lane updates for flipping position p (see LaneUpdate::apply and the module comment).
/// Odd i = 2l+1 (lane l) moves with positions p ± (2l+2): same class, index h ± (l+1).
/// Even i = 2l (lane l-1) moves with positions p ± (2l+1): other class, index h+l+c going
/// up and h-l-1+c going down, c being p's class. Downward neighbours are read from the
/// reversed class, where they are consecutive upward bits.
fn plan(n: u32, p: u32) -> (LaneUpdate, LaneUpdate) {
    let (c, h) = ((p % 2) as usize, p / 2);
    let (n_, h_, c_) = (i64::from(n), i64::from(h), c as i64);
    let odd_lanes = (n_ + 1) / 2;
    let even_lanes = n_ / 2;
    let odd = LaneUpdate::new(
        c,
        h + 1,
        lanes_below((n_ - h_ - 1).min(odd_lanes)),
        n - h,
        lanes_below(h_.min(odd_lanes)),
    );
    let even = LaneUpdate::new(
        1 - c,
        h + 1 + c as u32,
        lanes_below((n_ - h_ - 1 - c_).min(even_lanes)),
        n + 1 - h - c as u32,
        lanes_below((h_ + c_ - 1).min(even_lanes)),
    );
    (odd, even)
}

/// Byte masks (high bit per lane) of the odd-i lanes that exist.
fn odd_lane_mask(n: u32) -> [u64; 2] {
    let lanes = expand(lanes_below(i64::from(n + 1) / 2));
    lanes.map(|w| w * 0x80)
}

/// Σ f over the 2^walked assignments that agree with `start` outside positions
/// first..first+walked, visited in Gray-code order.
fn walk<const W: usize>(n: u32, start: u64, first: u32, walked: u32) -> Wide<W> {
    let mut w = Walker::new(n, start, first, walked);
    let odd_lanes = odd_lane_mask(n);
    let mut x = start;
    let mut sum = Wide::<W>::default();
    for step in 0..1u64 << walked {
        if step > 0 {
            let position = first + step.trailing_zeros();
            w.flip(position);
            x ^= 1 << position;
        }
        if !w.has_zero_factor(&odd_lanes) {
            sum = sum.wrapping_add(summand::<W>(x, w.values()));
        }
    }
    debug_assert_eq!(x, w.assignment());
    sum
}

/// Where the partners at distance i+1 of one position lie, for every odd i = 2l+1 (bit l).
#[derive(Clone, Copy)]
struct Partners {
    class: usize,
    up_shift: u32,
    up_valid: u32,
    down_shift: u32,
    down_valid: u32,
    /// Lanes where the position has no partner at all.
    neither: u32,
}

impl Partners {
    /// Same neighbours as `plan`'s odd update: class index h ± (l+1).
    fn new(n: u32, p: u32) -> Self {
        let (n_, h) = (i64::from(n), p / 2);
        let odd_lanes = (n_ + 1) / 2;
        let up_valid = lanes_below((n_ - i64::from(h) - 1).min(odd_lanes)) as u32;
        let down_valid = lanes_below(i64::from(h).min(odd_lanes)) as u32;
        let all = lanes_below(odd_lanes) as u32;
        Partners {
            class: (p % 2) as usize,
            up_shift: h + 1,
            up_valid,
            down_shift: n - h,
            down_valid,
            neither: all & !up_valid & !down_valid,
        }
    }

    /// Lanes l where c_p = x_{p-i-1} + x_{p+i+1} = 0 at the current assignment: both partners
    /// exist with opposite signs, or neither exists.
    fn cancel(&self, w: &Walker) -> u32 {
        let up = (w.classes[self.class] >> self.up_shift) as u32 & self.up_valid;
        let down = (w.reversed[self.class] >> self.down_shift) as u32 & self.down_valid;
        (self.up_valid & self.down_valid & (up ^ down)) | self.neither
    }
}

/// Bit l set where odd lane l holds S_{2l+1} = 0 (byte equal to the bias 128).
fn zero_lanes(odd: &[u64; 2]) -> u32 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let mut bits = 0;
    for (k, &word) in odd.iter().enumerate() {
        let v = word ^ BIAS;
        // 0x80 in exactly the zero bytes of v (no borrows between bytes).
        let zero = !(((v & LOW7) + LOW7) | v) & BIAS;
        // Gather bit 8j+7 to bit j: each product bit lands on its own position.
        let packed = ((zero >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32;
        bits |= packed << (8 * k);
    }
    bits
}

/// The pruned walk over one job's free positions: a recursion over `order` (fastest first)
/// that tests each sub-cube of up to PRUNE_LEVELS free positions by the module comment's rule.
struct PrunedWalk<'a, const W: usize> {
    w: Walker,
    x: u64,
    order: &'a [u32],
    partners: Vec<Partners>,
    /// Per level w: lanes with no two of order[..w] at distance i+1 (no free-free term).
    no_free_pairs: Vec<u32>,
    odd_lanes: [u64; 2],
    all_lanes: u32,
    sum: Wide<W>,
    visited: u64,
}

impl<const W: usize> PrunedWalk<'_, W> {
    fn flip(&mut self, position: u32) {
        self.w.flip(position);
        self.x ^= 1 << position;
    }

    fn visit(&mut self) {
        self.visited += 1;
        if !self.w.has_zero_factor(&self.odd_lanes) {
            self.sum = self.sum.wrapping_add(summand::<W>(self.x, self.w.values()));
        }
    }

    /// Whether the sub-cube of the first `level` positions of the order (the others as they
    /// are now) has an odd S_i equal to 0 at every point.
    fn prunable(&self, level: usize) -> bool {
        let mut lanes = zero_lanes(&self.w.odd) & self.no_free_pairs[level] & self.all_lanes;
        for partners in &self.partners[..level] {
            if lanes == 0 {
                return false;
            }
            lanes &= partners.cancel(&self.w);
        }
        lanes != 0
    }

    fn block(&mut self, level: usize) {
        if level == 0 {
            self.visit();
            return;
        }
        if self.prunable(level) {
            return;
        }
        self.block(level - 1);
        self.flip(self.order[level - 1]);
        self.block(level - 1);
    }
}

/// Lanes l (i = 2l+1) where no two of the `free` positions lie i+1 apart.
fn no_free_pair_lanes(free: &[u32]) -> u32 {
    (0..LANES as u32)
        .filter(|l| {
            free.iter()
                .all(|&p| free.iter().all(|&q| q != p + 2 * l + 2))
        })
        .fold(0, |m, l| m | 1 << l)
}

/// Σ f over the 2^|order| assignments that agree with `start` outside the positions of
/// `order`, with pruning; also the points visited.
fn walk_pruned<const W: usize>(n: u32, start: u64, order: &[u32]) -> (Wide<W>, u64) {
    let levels = order.len().min(PRUNE_LEVELS as usize);
    let no_free_pairs = (0..=levels)
        .map(|level| no_free_pair_lanes(&order[..level]))
        .collect();
    let mut walk = PrunedWalk::<W> {
        w: Walker::new(n, start, 0, 2 * n),
        x: start,
        order,
        partners: order[..levels]
            .iter()
            .map(|&p| Partners::new(n, p))
            .collect(),
        no_free_pairs,
        odd_lanes: odd_lane_mask(n),
        all_lanes: lanes_below(i64::from(n + 1) / 2) as u32,
        sum: Wide::default(),
        visited: 0,
    };
    let top = order.len() - levels;
    for step in 0..1u64 << top {
        if step > 0 {
            walk.flip(order[levels + step.trailing_zeros() as usize]);
        }
        walk.block(levels);
    }
    debug_assert_eq!(walk.x, walk.w.assignment());
    (walk.sum, walk.visited)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Σ f over all 2^(2n) assignments, directly, as i128 (small n only).
    fn brute_force_total(n: u32) -> i128 {
        (0..1u64 << (2 * n))
            .map(|x| {
                let s = correlations(n, x);
                let sign: i128 = if x.count_ones() % 2 == 1 { -1 } else { 1 };
                s[1..].iter().fold(sign, |p, &v| p * i128::from(v))
            })
            .sum()
    }

    fn total(n: u32, depth: u32, prune: bool) -> Wide<2> {
        let g = Godfrey::new(n, depth).with_prune(prune);
        (0..g.tasks().len())
            .map(|id| Wide::<2>::from_words(&g.run_cpu(id).words))
            .fold(Wide::default(), Wide::wrapping_add)
    }

    #[test]
    fn tasks_sum_to_the_brute_force_total() {
        for n in [3, 4, 7] {
            let want = brute_force_total(n);
            assert_eq!(want % (1 << (2 * n + 1)), 0);
            for depth in (4..=2 * n).step_by(2) {
                for prune in [false, true] {
                    assert_eq!(
                        total(n, depth, prune).to_string(),
                        want.to_string(),
                        "n {n} depth {depth} prune {prune}"
                    );
                }
            }
        }
    }

    /// Pruned and unpruned walks of the given tasks: equal words, bit for bit; the pruned
    /// walk visits fewer points. Returns (points in the space, points visited pruned, sum).
    fn compare_tasks(
        g: &Godfrey,
        plain: &Godfrey,
        ids: impl Iterator<Item = usize>,
    ) -> (u64, u64, Wide<2>) {
        let (mut space, mut visited, mut total) = (0, 0, Wide::default());
        for id in ids {
            let (a, b) = (g.run_cpu(id), plain.run_cpu(id));
            assert_eq!(
                a.words,
                b.words,
                "n {} depth {} task {id}",
                g.n(),
                g.depth()
            );
            assert_eq!(b.visited, 1 << g.inner());
            assert!(a.visited <= b.visited);
            space += b.visited;
            visited += a.visited;
            total = total.wrapping_add(Wide::from_words(&a.words));
        }
        (space, visited, total)
    }

    const KNOWN: [(u32, i64); 6] = [
        (3, 1),
        (4, 1),
        (7, 26),
        (8, 150),
        (11, 17_792),
        (12, 108_144),
    ];
    const KNOWN_LARGE: [(u32, i64); 2] = [(15, 39_809_640), (16, 326_721_800)];

    /// Every task of n at two depths (4, and tasks of 2^20 points): pruned words equal the
    /// unpruned ones, and their total is 2^(2n+1) L(2,n).
    fn every_task_agrees(n: u32, l: i64) {
        for depth in [4, (2 * n).saturating_sub(20).max(6).min(2 * n)] {
            let g = Godfrey::new(n, depth).with_prune(true);
            let plain = Godfrey::new(n, depth).with_prune(false);
            let (space, visited, total) = compare_tasks(&g, &plain, 0..g.tasks().len());
            if n >= 11 {
                assert!(visited < space, "n {n}: nothing pruned");
            }
            let count = total.exact_shr(2 * n + 1).expect("divisible");
            assert_eq!(count, Wide::from_i64(l), "L(2,{n}) depth {depth}");
        }
    }

    #[test]
    fn pruned_task_sums_equal_unpruned_for_every_task_up_to_12() {
        for (n, l) in KNOWN {
            every_task_agrees(n, l);
        }
    }

    /// Tasks of n = 15 and 16 spread over the range (CI); every task is in the long test.
    #[test]
    fn pruned_task_sums_equal_unpruned_for_sampled_tasks_of_15_and_16() {
        for (n, _) in KNOWN_LARGE {
            let depth = 2 * n - 18;
            let g = Godfrey::new(n, depth).with_prune(true);
            let plain = Godfrey::new(n, depth).with_prune(false);
            let tasks = g.tasks().len();
            let (space, visited, _) = compare_tasks(&g, &plain, (0..16).map(|k| k * tasks / 16));
            assert!(visited < space);
        }
    }

    #[test]
    #[ignore = "minutes on two cores: run by scripts/test-long"]
    fn pruned_task_sums_equal_unpruned_for_every_task_of_15_and_16() {
        for (n, l) in KNOWN_LARGE {
            every_task_agrees(n, l);
        }
    }

    /// Sampled tasks of n = 19 and 20, spread over the task range (64 each, 2^24 points).
    #[test]
    #[ignore = "minutes on two cores: run by scripts/test-long"]
    fn pruned_task_sums_equal_unpruned_for_sampled_tasks_of_19_and_20() {
        for n in [19, 20] {
            let depth = 2 * n - 24;
            let g = Godfrey::new(n, depth).with_prune(true);
            let plain = Godfrey::new(n, depth).with_prune(false);
            let tasks = g.tasks().len();
            let (space, visited, _) = compare_tasks(&g, &plain, (0..64).map(|k| k * tasks / 64));
            eprintln!("n {n}: visited {visited} of {space} points");
        }
    }

    #[test]
    fn prune_rule_holds_on_every_sub_cube_of_small_n() {
        // Brute force: wherever the rule says a sub-cube of the first `level` positions of
        // the order is prunable, some odd S_i is 0 at every one of its points.
        for n in [7u32, 8] {
            let g = Godfrey::new(n, 4);
            let order = g.walk_order();
            for level in 1..=6 {
                let mut fired = 0;
                for x in (0..1u64 << (2 * n)).step_by(7) {
                    let walk = PrunedWalk::<2> {
                        w: Walker::new(n, x, 0, 2 * n),
                        x,
                        order: &order,
                        partners: order[..level]
                            .iter()
                            .map(|&p| Partners::new(n, p))
                            .collect(),
                        no_free_pairs: (0..=level)
                            .map(|l| no_free_pair_lanes(&order[..l]))
                            .collect(),
                        odd_lanes: odd_lane_mask(n),
                        all_lanes: lanes_below(i64::from(n + 1) / 2) as u32,
                        sum: Wide::default(),
                        visited: 0,
                    };
                    if !walk.prunable(level) {
                        continue;
                    }
                    fired += 1;
                    let zero_everywhere = (1..=n).step_by(2).any(|i| {
                        (0..1u64 << level).all(|bits| {
                            let y = order[..level]
                                .iter()
                                .enumerate()
                                .fold(x, |y, (b, &p)| y ^ ((bits >> b & 1) << p));
                            correlations(n, y)[i as usize] == 0
                        })
                    });
                    assert!(zero_everywhere, "n {n} level {level} x {x:b}");
                }
                assert!(
                    fired > 0 || level > 2,
                    "n {n} level {level}: the rule never fired"
                );
            }
        }
    }

    #[test]
    fn orbit_weights_cover_every_signature() {
        for (n, depth) in [(7, 4), (8, 6), (12, 10), (4, 8)] {
            let weights: u64 = orbit_representatives(n, depth)
                .iter()
                .map(|t| t.weight)
                .sum();
            assert_eq!(weights, 1 << depth, "n {n} depth {depth}");
        }
    }

    #[test]
    fn walked_lanes_equal_direct_correlations() {
        for n in [3, 4, 7, 8, 12, 15, 16, 31, 32] {
            let first = 2;
            let walked = 2 * n - 4;
            let start: u64 = 0b11 | (1 << (2 * n - 1));
            let mut w = Walker::new(n, start, first, walked);
            let mut x = start;
            // A fixed pseudo-random sequence of flips over the walked positions.
            let mut r: u64 = 0x9e37_79b9_7f4a_7c15;
            for _ in 0..500 {
                r ^= r << 13;
                r ^= r >> 7;
                r ^= r << 17;
                let p = first + (r % u64::from(walked)) as u32;
                w.flip(p);
                x ^= 1 << p;
                let direct = correlations(n, x);
                assert_eq!(w.values().collect::<Vec<_>>(), direct[1..], "n {n}");
                let zero = direct.iter().skip(1).step_by(2).any(|&v| v == 0);
                assert_eq!(w.has_zero_factor(&odd_lane_mask(n)), zero);
            }
        }
    }

    #[test]
    fn known_counts_and_zero_classes() {
        for (n, l) in [(3u32, 1i64), (4, 1), (7, 26), (8, 150), (11, 17_792)] {
            let depth = if n > 8 { 8 } else { 4 };
            let count = total(n, depth, true)
                .exact_shr(2 * n + 1)
                .expect("divisible");
            assert_eq!(count, Wide::from_i64(l), "L(2,{n})");
        }
        for n in [5, 6, 9, 10] {
            assert!(Godfrey::new(n, 4).tasks().is_empty());
        }
    }
}
