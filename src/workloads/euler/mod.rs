//! `tessera euler`: an Euler circuit of a multigraph (graph or digraph) from the `[graph]`
//! source, every input tuple an edge whose id is its index (duplicates and self-loops kept).
//!
//! Algorithm (spec: euler-circuits.md; the blog post "Zooming Through Euler Path:
//! Supercharging with GPU"; Tucker's method, after Awerbuch, Israeli and
//! Shiloach): (1) pair the edge-ends at each vertex, which cuts the edges into closed trails
//! (`darts`); (2) label each trail with its smallest edge id by pointer jumping (`jump`);
//! (3) a spanning tree of the trail–vertex graph by min-label hooking (`forest`, `splice`);
//! (4) splice the trails along the tree at every vertex at once (`splice`); (5) cut the one
//! closed trail at edge 0 and order it by list ranking (`jump`). Every phase is flat over
//! slots (edge-ends) or vertices, so its time follows the edge count, not the number of
//! trails, and each is one GPU kernel away. Distributed: 1D vertex blocks, each edge-end at
//! its vertex's owner, so pairing and splicing are local and the rest exchanges through
//! `World::query`/`route` (the jumping across ranks over a ruling set, `ruling`); no step
//! depends on the rank count, so neither does the circuit. Each rank keeps its piece of the
//! circuit (`pieces`): checked, checksummed and written where it lies.
//! Before any work, a non-Eulerian graph is refused with one line (`check`). The circuit is
//! checked by `verify`, which knows nothing of the solver.

pub mod check;
pub mod darts;
pub mod forest;
pub mod gpu;
pub mod gpu_ends;
mod gpu_forest;
mod gpu_mates;
pub mod gpu_ranks;
mod gpu_ruling;
pub mod gpu_spread;
pub mod hierholzer;
pub mod jump;
pub mod pieces;
pub mod ruling;
pub mod splice;
pub mod verify;

use crate::comm::ranges::Ranges;
use crate::comm::{Op, Triple, World};
use crate::device::{Gpu, Selected};
use crate::error::{Error, Result};
use crate::graph::build::{self, EdgeList, Need};
use crate::graph::source::{GraphConfig, GraphSpec};
use crate::graph::{Block1D, Edge};
use crate::harness::{Harness, Workload};
use crate::report::Report;
use crate::rng::{draw, stream_key};
use darts::Darts;
use gpu_ends::DeviceEnds;
use gpu_spread::{Shuffle, SpreadEnds};
use jump::NIL;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// The circuit is written by default up to this many edges.
const WRITE_CIRCUIT_UP_TO: u64 = 1 << 26;

/// Stream tag of the random pairing.
const PAIRING_STREAM: u64 = 0x6575_6c01;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Pairing {
    /// Consecutive edge-ends in edge-id order
    Adjacency,
    /// Edge-ends shuffled by (seed, edge-end)
    Random,
    /// Opposite directions of a periodic lattice
    Straight,
}

/// `[euler]`. Also the `tessera euler` flags (the graph is `[graph]`'s).
#[derive(Debug, Default, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct EulerTable {
    /// Read each tuple (u, v) as an arc u -> v (default: as the source says; de-bruijn is)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub directed: Option<bool>,
    /// How edge-ends are paired at each vertex (default adjacency)
    #[arg(long, value_enum)]
    pub pairing: Option<Pairing>,
    /// With exactly two odd (directed: unbalanced by one) vertices, an Euler trail between them
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub trail: Option<bool>,
    /// Add edges that make the graph Eulerian (odd vertices paired in id order, components
    /// joined by a cycle through their smallest vertices; undirected only)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub eulerize: Option<bool>,
    /// Check the circuit (default true; untimed)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub verify: Option<bool>,
    /// Store the circuit in the HDF5 file (default: up to 2^26 edges; a checksum always)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub write_circuit: Option<bool>,
    /// Also time a sequential Hierholzer on rank 0 (the benchmark's baseline)
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub hierholzer: Option<bool>,
}

pub struct Euler {
    graph: GraphConfig,
    /// `directed`, by default as the source says (`GraphSpec::is_directed`).
    directed: bool,
    pairing: Pairing,
    trail: bool,
    eulerize: bool,
    verify: bool,
    write_circuit: Option<bool>,
    hierholzer: bool,
}

/// Phase seconds, in the order of the attributes.
const PHASES: [&str; 7] = [
    "check", "pair", "label", "tree", "splice", "rank", "validate",
];

/// What phases 1-5 found, on either device.
pub struct Solved {
    /// This rank's slots on the circuit: Triple(position, edge << 1 | forward, vertex
    /// arrived at).
    pub placed: Vec<Triple>,
    pub initial_trails: u64,
    pub label_rounds: usize,
    pub tree_rounds: usize,
}

/// What a run found.
struct Findings {
    n: u64,
    /// Edges of the input (before any added by `eulerize`, and without `--trail`'s).
    input_edges: u64,
    /// Edges the circuit uses: the input's and those `eulerize` added.
    edges: u64,
    added: Vec<Edge>,
    directed: bool,
    trail: Option<(u64, u64)>,
    initial_trails: u64,
    label_rounds: usize,
    tree_rounds: usize,
    seconds: Vec<(&'static str, f64)>,
    bytes: Vec<(&'static str, u64)>,
    /// This rank's piece of the circuit.
    piece: Option<pieces::Piece>,
    checksum: u64,
    valid: Option<bool>,
    hierholzer_seconds: Option<f64>,
}

impl Workload for Euler {
    const NAME: &'static str = "euler";
    const ABOUT: &'static str =
        "Euler circuit (or trail) of a multigraph: pair, label trails, tree, splice, rank";
    const GRAPH: bool = true;
    type Table = EulerTable;

    fn configure(source: &str, t: EulerTable, graph: Option<GraphConfig>) -> Result<Self> {
        let graph = graph.expect("euler takes a graph");
        let pairing = t.pairing.unwrap_or(Pairing::Adjacency);
        if pairing == Pairing::Straight && lattice_axes(&graph.spec).is_none() {
            return Err(crate::config::config_error(
                source,
                "[euler] pairing = \"straight\" needs a periodic lattice (generator lattice)",
            ));
        }
        let eulerize = t.eulerize.unwrap_or(false);
        let directed = t.directed.unwrap_or(graph.spec.is_directed());
        if eulerize && directed {
            let why = match t.directed {
                Some(_) => "directed = true".into(),
                None => format!("{} graphs are directed", graph.spec.kind()),
            };
            return Err(crate::config::config_error(
                source,
                &format!("[euler] eulerize applies to undirected graphs only ({why})"),
            ));
        }
        Ok(Euler {
            graph,
            directed,
            pairing,
            trail: t.trail.unwrap_or(false),
            eulerize,
            verify: t.verify.unwrap_or(true),
            write_circuit: t.write_circuit,
            hierholzer: t.hierholzer.unwrap_or(false),
        })
    }

    /// The edge tuples and the solver's slots against host memory (and, on one GPU, the
    /// device's), before the graph is made.
    fn check_sizes(&self, h: &Harness) -> Result<()> {
        build::check_before_making(h.world, &self.graph, &HOST_NEED)?;
        match (&h.device, self.graph.spec.size()) {
            (Selected::Gpu(gpu), Some(size)) => {
                let ranks = h.world.size() as u64;
                h.world.agree(gpu::check_device(gpu, size, ranks))
            }
            _ => Ok(()),
        }
    }

    fn execute(&self, h: &Harness) -> Result<Report> {
        let f = self.solve(h)?;
        let mut report = Report::new();
        self.report(&mut report, h.run.seed, &f);
        Ok(report)
    }
}

/// Host bytes per edge tuple: the tuples (16), their two ends at the owners (2 x 24), the
/// darts' slots with their vertex, partner, successor, label and tree marks (2 x 56), and
/// the placed slots and the pieces of the circuit they make (24 + 24 + 17); per vertex
/// about 48. Nothing is gathered on one rank (but for `hierholzer`'s tuples).
const HOST_NEED: Need = Need {
    what: "the Euler circuit's edge-ends",
    shared: (48, 16 + 48 + 112 + 65),
    every_rank: (0, 0),
    one_rank: 0,
};

/// The solver's phases, each run through the harness (`Harness::timed`: between barriers,
/// recorded in `/phases`), their seconds also kept for `/euler`'s `NAME_seconds`.
/// The bytes all ranks sent each other in each phase too (`NAME_bytes`).
pub struct Phases<'a, 'w> {
    h: &'a Harness<'w>,
    seconds: Vec<(&'static str, f64)>,
    bytes: Vec<(&'static str, u64)>,
}

impl Phases<'_, '_> {
    /// Run phase `name` (collective).
    pub fn run<T>(&mut self, name: &'static str, body: impl FnOnce() -> Result<T>) -> Result<T> {
        let t = Instant::now();
        let sent = crate::comm::bytes_sent();
        let out = self.h.timed(name, body)?;
        self.seconds.push((name, t.elapsed().as_secs_f64()));
        let moved = crate::comm::bytes_sent() - sent;
        self.bytes
            .push((name, self.h.world.allreduce(moved, Op::Sum)));
        Ok(out)
    }
}

/// Directions of a periodic lattice's sites (edge e has axis e mod this), if it is one.
fn lattice_axes(spec: &GraphSpec) -> Option<u64> {
    match spec {
        GraphSpec::Lattice {
            dims,
            periodic: true,
        } => Some(dims.len() as u64),
        GraphSpec::Eulerian(crate::graph::generators::eulerian::Kind::Triangular { .. }) => Some(3),
        _ => None,
    }
}

impl Euler {
    fn solve(&self, h: &Harness) -> Result<Findings> {
        let (world, seed) = (h.world, h.run.seed);
        let mut phases = Phases {
            h,
            seconds: Vec::new(),
            bytes: Vec::new(),
        };
        // The graph: this rank's tuples with their global ids, and their ends at the owners.
        let (list, mut ends) = phases.run("graph", || {
            let list = build::edge_list(world, &self.graph, seed, &HOST_NEED)?;
            let ends = self.place_ends(h, &list)?;
            Ok((list, ends))
        })?;
        let directed = self.directed;
        let (n, local) = (list.n, list.local);
        let input = Ranges::of_lengths(world, local.len() as u64);
        let m_input = input.total();
        let part = Block1D::new(n, world.size(), world.rank());
        let vertices = Ranges::of_lengths(world, part.local_n() as u64);

        let links = |extra: &[Edge], first: u64| -> Vec<Triple> {
            let own = local
                .iter()
                .enumerate()
                .map(|(i, &(u, v))| Triple(u, v, input.first() + i as u64));
            let more = extra
                .iter()
                .enumerate()
                .map(|(i, &(u, v))| Triple(u, v, first + i as u64));
            own.chain(more).collect()
        };
        // Added edges (eulerize; the trail's virtual edge) are known to every rank; each
        // rank takes its block of them.
        let added: Vec<Edge> = if self.eulerize {
            phases.run("eulerize", || {
                let deg = ends.degrees(&part, false)?;
                check::eulerize(world, &part, &vertices, &deg, &links(&[], 0))
            })?
        } else {
            Vec::new()
        };
        let share = |list: &[Edge], first: u64| -> (u64, Vec<Edge>) {
            let r = crate::graph::block_range(list.len() as u64, world.size(), world.rank());
            (
                first + r.start,
                list[r.start as usize..r.end as usize].to_vec(),
            )
        };
        let (added_first, added_mine) = share(&added, m_input);
        // The CPU check, naming the components where there are several.
        let components = || check::connected_ok(world, &vertices, &links(&added_mine, added_first));
        let (trail, m) = phases.run("check", || {
            ends.extend(world, &part, added_first, &added_mine)?;
            let trail = ends.degrees_ok(world, &part, directed, self.trail)?;
            let m_graph = m_input + added.len() as u64;
            // One GPU tells here; on the host ends the tree phase does (`one_tree`).
            if !ends.connected()? {
                components()?;
            }
            // The trail's virtual edge end -> start, the last edge: the circuit is cut
            // after it.
            let virtual_edge: Vec<Edge> = trail.map(|(a, b)| (b, a)).into_iter().collect();
            let (v_first, v_mine) = share(&virtual_edge, m_graph);
            ends.extend(world, &part, v_first, &v_mine)?;
            Ok((trail, m_graph + virtual_edge.len() as u64))
        })?;

        let key = stream_key(seed, PAIRING_STREAM);
        let axes = lattice_axes(&self.graph.spec).unwrap_or(1);
        let start = if trail.is_some() { m - 1 } else { 0 };
        let setup = gpu::Setup {
            n,
            m,
            directed,
            pairing: self.pairing as u32,
            key,
            axes,
            start,
        };
        let solved = match (ends, &h.device) {
            (Ends::Device(gpu, g), _) => gpu::solve(gpu, g, &setup, &mut phases)?,
            (Ends::Spread(gpu, ends), _) => {
                gpu_ranks::solve(world, gpu, &part, *ends, &setup, &mut phases, &components)?
            }
            (Ends::Host(ends), _) => {
                let pairing = self.pairing;
                let order = move |dart: u64| match pairing {
                    Pairing::Adjacency => dart,
                    Pairing::Random => draw(key, dart) >> 1,
                    Pairing::Straight => (dart / 2) % axes,
                };
                solve_on_cpu(world, &part, ends, &setup, order, &mut phases, &components)?
            }
        };
        let Solved {
            placed,
            initial_trails,
            label_rounds,
            tree_rounds,
        } = solved;

        // Untimed from here: each rank keeps its piece of the circuit; only a Hierholzer
        // baseline gathers the edge tuples on rank 0.
        let mut piece = pieces::cut(world, &placed, m, trail.is_some())?;
        drop(placed);
        let checksum = pieces::checksum(world, &piece);
        let mut f = Findings {
            n,
            input_edges: m_input,
            edges: m_input + added.len() as u64,
            added: added.clone(),
            directed,
            trail,
            initial_trails,
            label_rounds,
            tree_rounds,
            seconds: Vec::new(),
            bytes: Vec::new(),
            piece: None,
            checksum,
            valid: None,
            hierholzer_seconds: None,
        };
        if self.verify {
            verify::corrupt(&mut piece, n);
            let tuples = verify::Tuples {
                input: &input,
                local: &local,
                added: &added,
            };
            phases.run("validate", || {
                let outcome = verify::check(world, &tuples, directed, trail, &piece);
                world.agree(outcome.map_err(Error::Check))
            })?;
            f.valid = Some(true);
        }
        if self.hierholzer {
            let pairs: Vec<crate::comm::Pair> =
                local.iter().map(|&(u, v)| crate::comm::Pair(u, v)).collect();
            let gathered = world.gather_owned(pairs)?;
            if world.is_root() {
                let mut edges: Vec<Edge> = gathered.into_iter().map(|p| (p.0, p.1)).collect();
                edges.extend_from_slice(&added);
                let t = Instant::now();
                let found = hierholzer::circuit(n, &edges, directed);
                f.hierholzer_seconds = Some(t.elapsed().as_secs_f64());
                if found.is_none() && trail.is_none() {
                    return Err(Error::Check("Hierholzer found no circuit".into()));
                }
            }
        }
        f.piece = Some(piece);
        f.seconds = phases.seconds;
        f.bytes = phases.bytes;
        Ok(f)
    }

    /// This rank's edge-ends where the solver takes them: on one rank's GPU, this rank's
    /// tuples on its GPU (several ranks: routed in the first timed phase), or at their
    /// vertices' owners on the host. A graph without edges is refused.
    fn place_ends<'h>(&self, h: &'h Harness, list: &EdgeList) -> Result<Ends<'h>> {
        let world = h.world;
        let m = world.allreduce(list.local.len() as u64, Op::Sum);
        if m == 0 {
            return Err(Error::NotEulerian("the graph has no edges".into()));
        }
        let part = Block1D::new(list.n, world.size(), world.rank());
        Ok(match &h.device {
            Selected::Gpu(gpu) if world.size() == 1 => {
                Ends::Device(gpu, DeviceEnds::upload(gpu, list.n, &list.local, m)?)
            }
            Selected::Gpu(gpu) => {
                let first = Ranges::of_lengths(world, list.local.len() as u64).first();
                let shuffle = Shuffle::asked(list.n);
                if shuffle.is_some() && (self.eulerize || self.trail) {
                    return Err(Error::Unavailable(
                        "TESSERA_EULER_BLOCKS=random takes neither eulerize nor trail".into(),
                    ));
                }
                let (local, transport) = (&list.local[..], h.run.gpu_transport);
                let ends = SpreadEnds::upload(world, gpu, transport, (local, first), shuffle)?;
                Ends::Spread(gpu, Box::new(ends))
            }
            Selected::Cpu => {
                let first = Ranges::of_lengths(world, list.local.len() as u64).first();
                Ends::Host(darts::distribute(world, &part, &[(first, &list.local)])?)
            }
        })
    }

    /// `/graph` parameters and `/euler`: the figures, each phase's seconds, the added
    /// edges and the circuit.
    fn report(&self, report: &mut Report, seed: u64, f: &Findings) {
        let mut g = report.group("graph");
        g.text("generator", self.graph.spec.kind()).stored_only();
        g.text("parameters", self.graph.spec.parameters())
            .stored_only();
        g.count("seed", seed).stored_only();
        let mut r = report.group("euler");
        let m = f.edges;
        r.count("num_vertices", f.n).stored_only();
        r.count("num_edges", m);
        r.count("input_edges", f.input_edges).stored_only();
        // Rank 0 holds the edges (the report it prints and writes is rank 0's).
        r.count("added_edges", m.saturating_sub(f.input_edges))
            .stored_only();
        r.flag("directed", f.directed, "no").stored_only();
        r.text("pairing", pairing_name(self.pairing)).stored_only();
        r.flag("trail", f.trail.is_some(), "no").stored_only();
        r.count("initial_trails", f.initial_trails);
        r.count("label_rounds", f.label_rounds as u64);
        r.count("tree_rounds", f.tree_rounds as u64);
        for (name, s) in &f.seconds {
            r.seconds(&format!("{name}_seconds"), *s);
        }
        for (name, b) in &f.bytes {
            r.count(&format!("{name}_bytes"), *b).stored_only();
        }
        let solve = solve_seconds(f);
        r.seconds("solve_seconds", solve);
        r.rate("edges_per_second", m as f64 / solve, "edges/s");
        if let Some(s) = f.hierholzer_seconds {
            r.seconds("hierholzer_seconds", s)
                .shown_as(format!("{s:.6} s ({:.2}x)", s / solve));
        }
        r.count("checksum", f.checksum)
            .shown_as(format!("{:016x}", f.checksum));
        r.flag("valid", f.valid == Some(true), "no").stored_only();
        r.flag("verified", f.valid.is_some(), "skipped");
        if !f.added.is_empty() {
            let added: Vec<u64> = f.added.iter().flat_map(|&(u, v)| [u, v]).collect();
            r.data_2d("added_edge_tuples", added.len() / 2, added);
        }
        match &f.piece {
            Some(p) if self.write_circuit.unwrap_or(m <= WRITE_CIRCUIT_UP_TO) => {
                let (start, total) = (p.start as usize, p.total as usize);
                r.data_part("circuit_edges", total, start, p.edges.as_slice());
                r.data_part("circuit_forward", total, start, p.forward.as_slice());
                r.data_part("circuit_vertices", total + 1, start, p.vertices.as_slice());
            }
            _ => {}
        }
    }
}

fn pairing_name(p: Pairing) -> &'static str {
    match p {
        Pairing::Adjacency => "adjacency",
        Pairing::Random => "random",
        Pairing::Straight => "straight",
    }
}

/// Seconds of the solve: the check and phases 1-5 (the checker excluded).
fn solve_seconds(f: &Findings) -> f64 {
    f.seconds
        .iter()
        .filter(|(name, _)| PHASES[..6].contains(name))
        .map(|p| p.1)
        .sum()
}

/// Where the edge-ends live: at their vertices' owners on the host (the CPU), as one rank's
/// endpoint array on its GPU, or on several ranks' GPUs (tuples, then ends at the owners).
enum Ends<'g> {
    Host(Vec<Triple>),
    Device(&'g Gpu, DeviceEnds),
    Spread(&'g Gpu, Box<SpreadEnds<'g>>),
}

impl Ends<'_> {
    /// Add this rank's share of added edges, numbered from `first` (collective).
    fn extend(&mut self, world: &World, part: &Block1D, first: u64, edges: &[Edge]) -> Result<()> {
        match self {
            Ends::Host(ends) => {
                ends.extend(darts::distribute(world, part, &[(first, edges)])?);
                Ok(())
            }
            Ends::Device(gpu, g) => g.extend(gpu, edges),
            Ends::Spread(gpu, g) => g.extend(world, gpu, part, first, edges),
        }
    }

    /// Per own vertex its degree, or for a digraph out-degree minus in-degree.
    fn degrees(&mut self, part: &Block1D, directed: bool) -> Result<Vec<i64>> {
        match self {
            Ends::Host(ends) => Ok(darts::degrees(part, ends, directed)),
            Ends::Device(gpu, g) => g.host_degrees(gpu, directed),
            Ends::Spread(gpu, g) => g.host_degrees(gpu, part, directed),
        }
    }

    /// `check::degrees_ok`; a GPU settles the common case (all even) without the host
    /// (collective).
    fn degrees_ok(
        &mut self,
        world: &World,
        part: &Block1D,
        directed: bool,
        trail: bool,
    ) -> Result<Option<(u64, u64)>> {
        let balanced = match self {
            Ends::Host(_) => false,
            Ends::Device(gpu, g) => g.balanced(gpu, directed)?,
            Ends::Spread(gpu, g) => g.balanced(world, gpu, part, directed)?,
        };
        if balanced {
            return Ok(None);
        }
        if matches!(self, Ends::Spread(_, g) if g.shuffle.is_some()) {
            return Err(Error::NotEulerian(
                "unbalanced degrees (random vertex blocks, TESSERA_EULER_BLOCKS, name no vertex)"
                    .into(),
            ));
        }
        check::degrees_ok(world, part, &self.degrees(part, directed)?, directed, trail)
    }

    /// Whether all edges lie in one component, where one GPU tells; false runs the CPU check.
    /// The ends of several ranks answer true: their tree phase tells (`one_tree`).
    fn connected(&self) -> Result<bool> {
        match self {
            Ends::Host(_) | Ends::Spread(..) => Ok(true),
            Ends::Device(gpu, g) => g.connected(gpu),
        }
    }
}

/// Phases 1-5 on the CPU, any rank count (collective): `order` is the pairing's sort key;
/// each runs through `phases`; `components` names the pieces of a graph that is not connected.
fn solve_on_cpu(
    world: &World,
    part: &Block1D,
    ends: Vec<Triple>,
    s: &gpu::Setup,
    order: impl Fn(u64) -> u64 + Sync,
    phases: &mut Phases,
    components: &dyn Fn() -> Result<()>,
) -> Result<Solved> {
    let (m, start, directed) = (s.m, s.start, s.directed);
    let mut darts = phases.run("pair", || Darts::pair(world, part, ends, directed, order))?;

    let (label, label_rounds, initial_trails) = phases.run("label", || {
        let edge_of: Vec<u64> = darts.dart.par_iter().map(|d| d / 2).collect();
        let (label, label_rounds) =
            jump::cycle_min(world, &darts.slots, darts.next(), edge_of.clone())?;
        // Two cycles per trail: count each trail at the slots of its smallest edge.
        let starts = label
            .par_iter()
            .zip(&edge_of)
            .filter(|(l, e)| l == e)
            .count() as u64;
        Ok((label, label_rounds, world.allreduce(starts, Op::Sum) / 2))
    })?;

    let (joined, tree_rounds) = phases.run("tree", || {
        let trails = Ranges::even(m, world.size(), world.rank());
        let (joined, rounds, links) = splice::spanning_tree(world, &darts, &label, &trails)?;
        one_tree(initial_trails, links, components)?;
        Ok((joined, rounds))
    })?;

    phases.run("splice", || {
        splice::splice(&mut darts, &label, &joined);
        Ok(())
    })?;

    let placed = phases.run("rank", || {
        order_circuit(world, &darts, m, start, |next| {
            jump::rank_lists(world, &darts.slots, next)
        })
    })?;
    Ok(Solved {
        placed,
        initial_trails,
        label_rounds,
        tree_rounds,
    })
}

/// After the tree (collective): where the graph is connected, the trails' forest is one tree
/// (`trails` less one links chosen); else `components` (the CPU check) names the pieces. On
/// the host ends (CPU, several GPUs) this is the connectivity check: no pass of its own.
fn one_tree(trails: u64, links: u64, components: &dyn Fn() -> Result<()>) -> Result<()> {
    if trails == links + 1 {
        return Ok(());
    }
    components()?;
    Err(Error::Check(format!(
        "the trails form {} trees, yet the edges lie in one component",
        trails - links
    )))
}

/// Phase 5 (collective): cut the closed trail after edge `start` travelled forwards and rank
/// it. Returns, for this rank's slots on it, Triple(position, edge << 1 | forward, vertex
/// arrived at). The reverse cycle (the same trail travelled backwards) is cut at the same
/// edge's other end and ranked alongside, then left out. `rank_lists` ranks the cut lists
/// (`jump::rank_lists`, or on GPUs `gpu_ranks`'s).
fn order_circuit(
    world: &World,
    darts: &Darts,
    m: u64,
    start: u64,
    rank_lists: impl FnOnce(Vec<u64>) -> Result<(Vec<u64>, Vec<u64>)>,
) -> Result<Vec<Triple>> {
    let at = |dart: u64| world.allreduce(darts.find(dart).unwrap_or(NIL), Op::Min);
    let (head, tail) = (at(2 * start + 1), at(2 * start));
    let mut next = darts.next();
    // The list's last slot: the one whose successor was `head`.
    let first = darts.slots.first();
    let last_here = next
        .par_iter()
        .position_any(|&n| n == head)
        .map_or(NIL, |i| first + i as u64);
    let last = world.allreduce(last_here, Op::Min);
    next.par_iter_mut().for_each(|n| {
        if *n == head || *n == tail {
            *n = NIL;
        }
    });
    let (dist, end) = rank_lists(next)?;
    let placed: Vec<Triple> = (0..darts.slot_count())
        .into_par_iter()
        .filter(|&i| end[i] == last)
        .map(|i| {
            let d = darts.dart[i];
            Triple(m - 1 - dist[i], (d / 2) << 1 | (d & 1), darts.vertex[i])
        })
        .collect();
    let count = world.allreduce(placed.len() as u64, Op::Sum);
    if count != m {
        return Err(Error::Check(format!(
            "splicing left more than one closed trail: the circuit holds {count} of {m} edges"
        )));
    }
    Ok(placed)
}
