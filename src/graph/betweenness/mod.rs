//! Betweenness centrality (Brandes, "A faster algorithm for betweenness centrality", 2001)
//! over the hop counts of an arc graph, from a list of sources: `tessera bc` and SSCA#2's
//! kernel 4.
//!
//! Sources go in batches of up to 64 lanes that share every row read (`sweep`; on a GPU
//! kernels/bc.cu). No value is summed in an order that depends on threads, ranks or the
//! device: each vertex pulls over its row in row order (a long row in pieces of `CHUNK`
//! entries, the pieces' sums added in order), and the per-source dependencies
//! δ_s(v), each an f64, are added over sources in 128-bit fixed point (64 fraction bits),
//! where addition is associative. So BC is bit-identical for every rank count, batch size,
//! distribution and device. Backward, δ_s(v) = σ(v)·ρ(v), ρ(v) the sum of u(w) = (1 +
//! δ_s(w))/σ(w) over v's successors w, u worked out once per vertex and source (Brandes'
//! dependencies with one value loaded and one add per arc, no division; the sums carry their
//! rounding errors: `sweep::backward_level`).
//!
//! Two distributions, as McGuinness's MSc thesis (UMass Amherst, 2011, §2.3.6) has them:
//! `Full`, the whole graph on every rank with the sources split between ranks and one final
//! reduction; `Partitioned`, the 1D partition, every rank running every batch over its own
//! vertices, with each level's new σ (forward) and u (backward) sent to the ranks that hold
//! them as ghosts, in the level's lanes only (`sweep::push`). Both run on the CPU and on GPUs (one per rank; the ghosts' values then go
//! through the device exchange layer, NCCL between GPUs or staged through MPI).

pub mod gpu;
pub mod gpu_ghosts;
pub mod gpu_pieces;
pub mod steps;
pub mod sweep;
mod trace;
pub mod view;

use crate::comm::{GpuTransport, Op, World};
use crate::device::{memory, Selected};
use crate::error::{Error, Result};
use crate::graph::arcs::ArcGraph;
use crate::graph::block_range;
use crate::graph::Vid;
use crate::report::Section;
use crate::rng::mix64;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use steps::Steps;
use sweep::Lanes;
use view::{Keep, View};

/// Most sources in one batch.
pub const MAX_LANES: usize = 64;

/// Rows longer than this many entries are summed in pieces of this many from the row's start:
/// each piece's sum in row order, then the pieces' sums in order (a row of at most `CHUNK`
/// entries is one piece, its sum the row-order sum). The CPU and the GPU cut the same pieces,
/// so the sums are the same bits; the GPU reads a hub's pieces with many warps at once.
pub const CHUNK: usize = 1024;

/// Bytes per vertex (and ghost) per lane: σ, δ.
pub const BYTES_PER_LANE: u64 = 8 + 8;

/// Which value a level's push to the ghosts carries, in the level's lanes only (`sweep::push`
/// on the CPU, `gpu_ghosts::GhostPush::push` on the GPU: the same words in the same order).
#[derive(Clone, Copy, PartialEq)]
pub enum Carried {
    /// Forward: σ, after a mask word per ghost; the ghosts' level masks become them.
    Sigma,
    /// Backward: u = (1 + δ)/σ (in σ's place), the words alone: the ghosts hold the masks
    /// from the forward push.
    Quotient,
}

/// A deck key of `table` outside its range: one line naming the deck, the table and the key.
pub fn bad_key(source: &str, table: &str, key: &str, msg: &str) -> Error {
    crate::error::config_error(source, &format!("[{table}] {key}: {msg}"))
}

/// `batch` of `table` checked: 1 to `MAX_LANES`.
pub fn check_batch(source: &str, table: &str, batch: Option<u64>) -> Result<Option<usize>> {
    match batch {
        Some(b) if !(1..=MAX_LANES as u64).contains(&b) => Err(bad_key(
            source,
            table,
            "batch",
            &format!("batch = {b} must be between 1 and {MAX_LANES}"),
        )),
        b => Ok(b.map(|b| b as usize)),
    }
}

/// Where the graph lives while the sweeps run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    /// Every rank holds the whole graph (`ArcGraph::replicate`); sources are split.
    Full,
    /// Every rank holds its part; every rank runs every source.
    Partitioned,
}

/// `replicate` as a deck says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Replicate {
    /// Full where the whole graph fits in half of each rank's memory (the GPU's on a GPU
    /// run), else distributed.
    Auto,
    Full,
    Distributed,
}

impl Replicate {
    /// The distribution for `g` (collective, for `Auto`: every rank's memory).
    pub fn resolve(self, world: &World, device: &Selected, g: &ArcGraph) -> Result<Distribution> {
        let whole = world.allreduce(g.bytes(), Op::Sum);
        let budget = memory_left(world, device)?;
        let fits = world.allreduce(u8::from(whole <= budget / 2), Op::Min) == 1;
        Ok(match self {
            Replicate::Full => Distribution::Full,
            Replicate::Distributed => Distribution::Partitioned,
            Replicate::Auto if fits => Distribution::Full,
            Replicate::Auto => Distribution::Partitioned,
        })
    }
}

impl Distribution {
    pub fn name(self) -> &'static str {
        match self {
            Distribution::Full => "full",
            Distribution::Partitioned => "distributed",
        }
    }
}

/// Betweenness from a run: the fixed-point sums of every vertex on rank 0.
pub struct Centrality {
    /// Σ_s δ_s(v) · 2^64, per vertex, on rank 0 (empty elsewhere).
    pub fixed: Vec<u128>,
    /// Arcs the sweeps ran over (those `keep` accepted).
    pub arcs: u64,
    /// Deepest BFS level of any source.
    pub deepest_level: u32,
    /// Sources per batch.
    pub lanes: usize,
    /// Seconds before the first batch (the rows' view, their upload and the exchange's
    /// set-up on a GPU), the most over the ranks.
    pub setup_seconds: f64,
    /// On a GPU: the seconds of each phase of the sweeps (`gpu::Phases`), the most over the
    /// ranks; empty on the CPU.
    pub phases: Vec<(&'static str, f64)>,
    /// The host's seconds of each step of the engine (`Steps`), the most over the ranks.
    pub steps: Vec<(&'static str, f64)>,
}

impl Centrality {
    /// BC of each vertex (rank 0).
    pub fn values(&self) -> Vec<f64> {
        self.fixed.iter().map(|&x| from_fixed(x)).collect()
    }
}

/// δ in fixed point with 64 fraction bits, truncated: the integer part and the fraction
/// converted apart (both exact in f64), as kernels/bc.cu `to_fixed` does.
#[inline]
pub fn to_fixed(x: f64) -> u128 {
    let whole = x as u64;
    let fraction = x - whole as f64;
    ((whole as u128) << 64) | (fraction * 18446744073709551616.0) as u64 as u128
}

/// A fixed-point sum as f64 (correctly rounded).
pub fn from_fixed(x: u128) -> f64 {
    x as f64 / 18446744073709551616.0
}

/// The most lanes (a power of two, at most `MAX_LANES`, at least 1) whose values for
/// `slots` vertices fit in `budget` bytes.
pub fn lanes_fitting(slots: u64, budget: u64) -> usize {
    let mut lanes = MAX_LANES;
    while lanes > 1 && slots * lanes as u64 * BYTES_PER_LANE > budget {
        lanes /= 2;
    }
    lanes
}

/// BC of `g` from `sources` (collective), over the arcs whose weight `keep` accepts (all
/// where None). `g` is the replicated graph for `Full`, the rank's part for `Partitioned`; `lanes` sources go in a batch (None: the most, up to
/// `MAX_LANES`, whose values fit in half the memory left; the same on every rank). On GPUs
/// a partitioned graph's ranks exchange through `transport`.
pub fn betweenness(
    world: &World,
    (device, transport): (&Selected, GpuTransport),
    (g, keep): (&ArcGraph, Option<&Keep>),
    sources: &[Vid],
    distribution: Distribution,
    lanes: Option<usize>,
) -> Result<Centrality> {
    let mut steps = Steps::start();
    let view = match (distribution, keep) {
        (Distribution::Full, _) => View::replicated(g, keep)?,
        (Distribution::Partitioned, None) => View::partitioned(world, g)?,
        (Distribution::Partitioned, Some(keep)) => {
            View::partitioned(world, &g.filtered(world, keep))?
        }
    };
    let arcs = match distribution {
        Distribution::Full => view.out.adj.len() as u64,
        Distribution::Partitioned => world.allreduce(view.out.adj.len() as u64, Op::Sum),
    };
    let lanes = match lanes {
        Some(l) => l.clamp(1, MAX_LANES),
        None => lanes_fitting(view.slots() as u64, memory_left(world, device)? / 2),
    };
    let lanes = world.allreduce(lanes as u64, Op::Min) as usize;
    steps.mark("view");
    let (mine, partitioned) = match distribution {
        Distribution::Full => {
            let share = block_range(sources.len() as u64, world.size(), world.rank());
            (&sources[share.start as usize..share.end as usize], None)
        }
        Distribution::Partitioned => (sources, Some((world, transport))),
    };
    let (sums, deepest, phases) = match device {
        Selected::Cpu => batches(&view, mine, lanes, partitioned.map(|p| p.0), &mut steps)?,
        Selected::Gpu(gpu) => gpu::batches(gpu, &view, mine, lanes, partitioned, &mut steps)?,
    };
    let setup = steps.before("sweeps");
    let fixed = match distribution {
        Distribution::Full => sum_over_ranks(world, sums),
        Distribution::Partitioned => gather_at_root(world, &sums)?,
    };
    steps.mark("reduce");
    // The rows' view (16 bytes an arc at most) is freed beside the report's making: at 2^31
    // arcs its release alone took 0.42 s (an H100's host, 2026-11-27).
    std::thread::spawn(move || drop(view));
    steps.mark("release_view");
    let most = |list: &[(&'static str, f64)]| -> Vec<(&'static str, f64)> {
        let most = |&(name, s): &(&'static str, f64)| (name, world.allreduce(s, Op::Max));
        list.iter().map(most).collect()
    };
    let phases = phases.map_or(Vec::new(), |p| most(&p.named()));
    let steps = most(steps.done());
    log::info!("betweenness: {setup:.3} s before the first batch (rows, exchange set-up)");
    log_seconds("betweenness host steps (most over ranks)", &steps);
    log_seconds("betweenness GPU phases (most over ranks)", &phases);
    Ok(Centrality {
        fixed,
        arcs,
        deepest_level: world.allreduce(deepest, Op::Max),
        lanes,
        setup_seconds: world.allreduce(setup, Op::Max),
        phases,
        steps,
    })
}

/// One log line `what: name s, ...` (none for an empty list).
fn log_seconds(what: &str, list: &[(&'static str, f64)]) {
    if list.is_empty() {
        return;
    }
    let listed: Vec<String> = list.iter().map(|(n, s)| format!("{n} {s:.3} s")).collect();
    log::info!("{what}: {}", listed.join(", "));
}

/// Bytes this rank may still use: its share of the node's available memory on the CPU, the
/// GPU's free memory on a GPU.
fn memory_left(world: &World, device: &Selected) -> Result<u64> {
    Ok(match device {
        Selected::Cpu => memory::host_available() / world.local_size() as u64,
        Selected::Gpu(gpu) => memory::gpu_free(gpu)?,
    })
}

/// Every batch of `sources` on the CPU: the sums of the view's own vertices and the deepest
/// level; `steps` gains the set-up and the sweeps.
fn batches(
    view: &View,
    sources: &[Vid],
    lanes: usize,
    world: Option<&World>,
    steps: &mut Steps,
) -> Result<(Vec<u128>, u32, Option<gpu::Phases>)> {
    let state = Lanes::new(view.slots(), lanes);
    let mut fixed = vec![0u128; view.local_n];
    steps.mark("setup");
    let mut deepest = 0;
    for batch in sources.chunks(lanes) {
        deepest = deepest.max(sweep::run_batch(view, &state, batch, world, &mut fixed)?);
    }
    steps.mark("sweeps");
    Ok((fixed, deepest, None))
}

/// Vertices listed with the largest values.
pub const TOP: usize = 100;

/// The figures and datasets of a run (rank 0's `c`): sources, the deepest level, the 100
/// largest values with their vertices (ties by id), a checksum of every vertex's fixed-point
/// sum (equal sums, equal checksum), and every value where `every_vertex`.
pub fn report(r: &mut Section, c: &Centrality, sources: &[Vid], every_vertex: bool) {
    let values = c.values();
    // The largest first, ties by id: a total order, so the first TOP are one set.
    let larger = |&a: &usize, &b: &usize| c.fixed[b].cmp(&c.fixed[a]).then(a.cmp(&b));
    let mut order: Vec<usize> = (0..c.fixed.len()).collect();
    if order.len() > TOP {
        order.select_nth_unstable_by(TOP, larger);
        order.truncate(TOP);
    }
    order.sort_by(larger);
    // A sum of per-vertex hashes (wrapping): the same in any order of addition.
    let checksum = c
        .fixed
        .par_iter()
        .enumerate()
        .map(|(v, &x)| mix64(v as u64 ^ mix64(x as u64 ^ mix64((x >> 64) as u64))))
        .reduce(|| 0, u64::wrapping_add);
    r.count("sources", sources.len() as u64);
    r.count("lanes", c.lanes as u64).stored_only();
    r.count("deepest_level", c.deepest_level);
    if let Some(&top) = order.first() {
        r.fixed("bc_max", values[top], 6, "");
        r.count("bc_max_vertex", top as u64);
    }
    r.count("bc_checksum", checksum);
    for (name, seconds) in &c.phases {
        r.seconds(&format!("bc_{name}_time"), *seconds)
            .stored_only();
    }
    for (name, seconds) in &c.steps {
        r.seconds(&format!("bc_step_{name}_time"), *seconds)
            .stored_only();
    }
    r.data("bc_sources", sources);
    r.data(
        "bc_top_vertex",
        order.iter().map(|&v| v as u64).collect::<Vec<u64>>(),
    );
    r.data(
        "bc_top",
        order.iter().map(|&v| values[v]).collect::<Vec<f64>>(),
    );
    if every_vertex {
        r.data("bc", values);
    }
}

/// Limbs of 32 bits, one per u64, so that an MPI sum of up to 2^32 ranks cannot carry out.
const LIMBS: usize = 4;

/// The sums of every rank's copy, on rank 0 (collective; exact).
fn sum_over_ranks(world: &World, sums: Vec<u128>) -> Vec<u128> {
    if world.size() == 1 {
        return sums;
    }
    let mut limbs = vec![0u64; sums.len() * LIMBS];
    limbs.par_chunks_mut(LIMBS).zip(&sums).for_each(|(l, &x)| {
        for (i, limb) in l.iter_mut().enumerate() {
            *limb = (x >> (32 * i)) as u32 as u64;
        }
    });
    world.allreduce_slice(&mut limbs, Op::Sum);
    if !world.is_root() {
        return Vec::new();
    }
    limbs
        .par_chunks(LIMBS)
        .map(|l| (0..LIMBS).fold(0u128, |acc, i| acc.wrapping_add((l[i] as u128) << (32 * i))))
        .collect()
}

/// Each rank's own vertices' sums, in vertex order, on rank 0 (collective).
fn gather_at_root(world: &World, sums: &[u128]) -> Result<Vec<u128>> {
    let mut words = vec![0u64; 2 * sums.len()];
    words.par_chunks_mut(2).zip(sums).for_each(|(w, &x)| {
        w[0] = x as u64;
        w[1] = (x >> 64) as u64;
    });
    let all = world.gatherv_root(&words)?;
    Ok(all
        .par_chunks(2)
        .map(|w| w[0] as u128 | (w[1] as u128) << 64)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_round_trips_and_truncates() {
        assert_eq!(to_fixed(0.0), 0);
        assert_eq!(to_fixed(1.0), 1u128 << 64);
        assert_eq!(to_fixed(2.5), 5u128 << 63);
        assert_eq!(from_fixed(to_fixed(1234.75)), 1234.75);
        let third = to_fixed(1.0 / 3.0);
        assert_eq!(third >> 64, 0);
        assert!((from_fixed(third) - 1.0 / 3.0).abs() < 1e-16);
        // Large values: integers, no fraction.
        assert_eq!(to_fixed(2f64.powi(60)), 1u128 << 124);
    }

    #[test]
    fn lanes_halve_until_they_fit() {
        assert_eq!(lanes_fitting(10, u64::MAX), MAX_LANES);
        assert_eq!(lanes_fitting(1000, 1000 * 16 * BYTES_PER_LANE), 16);
        assert_eq!(lanes_fitting(1000, 0), 1);
    }
}
