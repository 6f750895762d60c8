//! The updates on the rewired lattice (Leist's thesis (2011), §7.1), on the CPU: the periodic lattice with
//! each edge end moved with probability p/2 to a random vertex of its own checkerboard
//! colour (`graph::generators::watts_strogatz`, `WattsStrogatz::keeping_colours`), made by
//! `graph::build` (on the CPU) as the graph layer's 1D-partitioned CSR and split into local rows, cut edges and ghosts
//! (`graph::ghosts`). Vertex ids are the lattice's global site indices, so a site's draws,
//! its start state and its place in a checkpoint are the lattice's.
//!
//! - Metropolis in the two checkerboard colour classes: rewiring keeps the colours, so no
//!   edge joins two sites of one class, and all sites of a class update at once from the
//!   other class's spins (ghosts refreshed before each class). The draws are the lattice's
//!   (site g, colour), so the trajectory is the same for every rank count, and at p = 0 it is
//!   the lattice path's bit for bit.
//! - Swendsen-Wang: satisfied edges activated by `model::bond_active` at `graph_bond`, the
//!   components of the active edges labelled by the components layer (`cc`, masked; each
//!   labelled with its smallest vertex id), a new state per cluster drawn at that label.
//! - Wolff: the cluster grown a frontier at a time from the seed site; vertices reached
//!   across a cut edge go to their owner (an all-to-all per level, as in BFS). Edges are
//!   activated by `model::bond_active`, so the cluster is the seed's component of the
//!   active satisfied edges, whatever the order of growth or the rank count.

use super::model::{
    bond_active, graph_bond, metropolis_accept, proposal, start_state, uniform_state, wolff_seed, wolff_sweep,
    Model,
};
use crate::comm::{GpuTransport, Op, World};
use crate::device::Selected;
use crate::error::{Error, Result};
use crate::graph::build::build;
use crate::graph::components::cpu::{CpuLabeller, EdgeMask};
use crate::graph::components::{label_components, Labeller};
use crate::graph::ghosts::LocalRows;
use crate::graph::source::{Construction, GraphConfig, GraphSpec};
use crate::graph::Block1D;
use crate::lattice::{checkerboard, Lattice};
use crate::rng::draw;
use rayon::prelude::*;

/// This rank's vertices of the rewired lattice and their spins.
pub struct GraphSpins {
    part: Block1D,
    rows: LocalRows,
    /// Checkerboard colour of each own vertex.
    colour: Vec<u8>,
    spins: Vec<u8>,
    /// The ghosts' spins as last refreshed.
    ghost_spins: Vec<u8>,
    /// Largest degree over all vertices.
    max_degree: u32,
    /// Edges of the graph.
    bonds: u64,
    /// The lattice's side (a site's Metropolis draws are the lattice's).
    side: u64,
}

/// A neighbour of an own vertex: its global id and its spin.
type Neighbour = (u64, u8);

/// The sites this rank owns on the rewired lattice: the graph layer's 1D partition.
pub fn owned_sites(lattice: &Lattice, world: &World) -> std::ops::Range<u64> {
    let part = Block1D::new(lattice.sites(), world.size(), world.rank());
    part.first()..part.first() + part.local_n() as u64
}

impl GraphSpins {
    /// The rewired `lattice` at probability `p`, graph seed `seed`, all spins 0 (collective).
    pub fn new(world: &World, lattice: &Lattice, p: f64, seed: u64) -> Result<Self> {
        let spec = GraphSpec::RewiredLattice {
            dims: vec![lattice.l; lattice.dim],
            p,
        };
        let cfg = GraphConfig {
            spec,
            construction: Construction::Cpu,
        };
        let no_device_check = |_: &Block1D, _: u64| Ok(());
        let graph = build(
            world,
            &cfg,
            seed,
            &Selected::Cpu,
            GpuTransport::Auto,
            &no_device_check,
        )?
        .graph;
        let rows = LocalRows::split(world, &graph)?;
        let part = graph.part;
        let n = part.local_n();
        let local_max = (0..n).map(|u| graph.degree(u)).max().unwrap_or(0);
        let max_degree = world.allreduce(local_max, Op::Max);
        let max_degree = u32::try_from(max_degree).map_err(|_| {
            Error::Unavailable(format!(
                "spin: the rewired lattice has a vertex of degree {max_degree}, more than 2^32"
            ))
        })?;
        Ok(GraphSpins {
            colour: (0..n)
                .map(|u| checkerboard::colour(lattice, part.global(u)))
                .collect(),
            spins: vec![0; n],
            ghost_spins: vec![0; rows.ghosts.ids.len()],
            max_degree,
            bonds: graph.num_entries / 2,
            side: lattice.l,
            part,
            rows,
        })
    }

    pub fn max_degree(&self) -> u32 {
        self.max_degree
    }

    /// Edges of the graph (its bonds).
    pub fn bonds(&self) -> u64 {
        self.bonds
    }

    /// Every site to its start state (`model::start_state`).
    pub fn reset(&mut self, hot: Option<u64>, q: u32) {
        let part = self.part;
        self.spins
            .par_iter_mut().with_min_len(crate::grain::MIN_ITEMS)
            .enumerate()
            .for_each(|(u, s)| *s = start_state(hot, part.global(u), q));
    }

    pub fn local(&self) -> &[u8] {
        &self.spins
    }

    pub fn set_local(&mut self, spins: &[u8]) {
        self.spins.copy_from_slice(spins);
    }

    fn refresh(&mut self, world: &World) -> Result<()> {
        self.ghost_spins = self.rows.ghosts.refresh(world, &self.spins)?;
        Ok(())
    }

    /// The neighbours of own vertex `u` (local rows, then cut edges), with their spins.
    fn neighbours(&self, u: usize) -> impl Iterator<Item = Neighbour> + '_ {
        let rows = &self.rows;
        let local = &rows.adj[rows.offsets[u] as usize..rows.offsets[u + 1] as usize];
        let cut = &rows.cut_ghost[rows.cut_offsets[u] as usize..rows.cut_offsets[u + 1] as usize];
        let local = local
            .iter()
            .map(|&v| (self.part.global(v as usize), self.spins[v as usize]));
        let cut = cut
            .iter()
            .map(|&g| (rows.ghosts.ids[g as usize], self.ghost_spins[g as usize]));
        local.chain(cut)
    }

    /// One sweep: colour class 0, then 1, each with its key (collective); `table` is
    /// `Model::metropolis_table_to(β, max_degree)`.
    pub fn metropolis(
        &mut self,
        world: &World,
        model: &Model,
        table: &[u64],
        keys: [u64; 2],
    ) -> Result<()> {
        let (q, z) = (model.q, self.max_degree as i32);
        for (class, key) in keys.into_iter().enumerate() {
            self.refresh(world)?;
            let this = &*self;
            let next: Vec<u8> = (0..this.spins.len())
                .into_par_iter().with_min_len(crate::grain::MIN_ITEMS)
                .map(|u| {
                    let s = this.spins[u];
                    if usize::from(this.colour[u]) != class {
                        return s;
                    }
                    let g = this.part.global(u);
                    let new = if q == 2 {
                        1 - s
                    } else {
                        proposal(s, draw(key, 2 * g + 1), q)
                    };
                    let de: i32 = this
                        .neighbours(u)
                        .map(|(_, n)| i32::from(n == s) - i32::from(n == new))
                        .sum();
                    let threshold = table[(de + z) as usize];
                    if metropolis_accept(key, g, this.side, threshold) {
                        new
                    } else {
                        s
                    }
                })
                .collect();
            self.spins = next;
        }
        Ok(())
    }

    /// One Swendsen-Wang sweep (collective): satisfied edges activated by `bond_active`
    /// under `bonds`, their components labelled, each given the state drawn at its label
    /// under `clusters`.
    pub fn swendsen_wang(
        &mut self,
        world: &World,
        model: &Model,
        threshold: u64,
        bonds: u64,
        clusters: u64,
    ) -> Result<()> {
        self.refresh(world)?;
        let (rows, part, n) = (&self.rows, self.part, self.part.n);
        let (spins, ghost_spins) = (&self.spins, &self.ghost_spins);
        let active = |u: usize, (v, t): Neighbour| {
            spins[u] == t && bond_active(bonds, graph_bond(part.global(u), v, n), threshold)
        };
        let local: Vec<bool> = (0..spins.len())
            .into_par_iter().with_min_len(crate::grain::MIN_ITEMS)
            .flat_map_iter(|u| {
                let row = &rows.adj[rows.offsets[u] as usize..rows.offsets[u + 1] as usize];
                row.iter()
                    .map(move |&v| active(u, (part.global(v as usize), spins[v as usize])))
            })
            .collect();
        let cut: Vec<bool> = rows
            .cut_own
            .par_iter().with_min_len(crate::grain::MIN_ITEMS)
            .zip(&rows.cut_ghost)
            .map(|(&u, &g)| {
                let g = g as usize;
                active(u as usize, (rows.ghosts.ids[g], ghost_spins[g]))
            })
            .collect();
        let mask = EdgeMask {
            local: &local,
            cut: &cut,
        };
        let mut labeller = CpuLabeller::masked(rows, part.first(), mask);
        label_components(world, &part, &mut labeller)?;
        let labels = labeller.labels()?;
        let q = model.q;
        self.spins
            .par_iter_mut().with_min_len(crate::grain::MIN_ITEMS)
            .zip(labels)
            .for_each(|(s, label)| *s = uniform_state(draw(clusters, label), q));
        Ok(())
    }

    /// One Wolff sweep (collective): `clusters` clusters, cluster k keyed by draw(key, k)
    /// (as on the lattice, `cpu::CpuSpins::wolff`). Returns the sites flipped.
    pub fn wolff(
        &mut self,
        world: &World,
        model: &Model,
        threshold: u64,
        key: u64,
        clusters: u64,
    ) -> Result<u64> {
        wolff_sweep(key, clusters, |k| {
            self.wolff_cluster(world, model, threshold, k)
        })
    }

    /// Grow and flip one cluster (`model::wolff_seed`, `cpu::wolff_states`,
    /// `model::bond_active` under `key`). Returns its size.
    fn wolff_cluster(
        &mut self,
        world: &World,
        model: &Model,
        threshold: u64,
        key: u64,
    ) -> Result<u64> {
        let (part, n) = (self.part, self.part.n);
        let seed = wolff_seed(key, n);
        let mine = part.is_local(seed).then(|| part.local(seed));
        let held = mine.map(|u| self.spins[u]);
        let (old, new) = super::cpu::wolff_states(world, key, held, model.q);
        let mut frontier: Vec<usize> = mine.into_iter().collect();
        if let Some(u) = mine {
            self.spins[u] = new;
        }
        let mut size = frontier.len() as u64;
        loop {
            let mut next = Vec::new();
            let mut outbox: Vec<Vec<u64>> = vec![Vec::new(); world.size()];
            for &u in &frontier {
                let g = part.global(u);
                let reached: Vec<u64> = self
                    .neighbours(u)
                    .filter(|&(v, _)| bond_active(key, graph_bond(g, v, n), threshold))
                    .map(|(v, _)| v)
                    .collect();
                for v in reached {
                    if !part.is_local(v) {
                        outbox[part.owner(v)].push(v);
                    } else if self.spins[part.local(v)] == old {
                        self.spins[part.local(v)] = new;
                        next.push(part.local(v));
                    }
                }
            }
            let counts: Vec<usize> = outbox.iter().map(Vec::len).collect();
            for v in world.alltoallv(&outbox.concat(), &counts)? {
                let u = part.local(v);
                if self.spins[u] == old {
                    self.spins[u] = new;
                    next.push(u);
                }
            }
            size += next.len() as u64;
            frontier = next;
            if world.allreduce(frontier.len() as u64, Op::Sum) == 0 {
                return Ok(world.allreduce(size, Op::Sum));
            }
        }
    }

    /// This rank's satisfied edges (each counted from its lower end) and sites per state,
    /// as [satisfied, count of state 0, ..., count of state q-1] (collective: refreshes the
    /// ghosts).
    pub fn tally(&mut self, world: &World, model: &Model) -> Result<Vec<u64>> {
        self.refresh(world)?;
        let q = model.q as usize;
        let this = &*self;
        Ok((0..this.spins.len())
            .into_par_iter().with_min_len(crate::grain::MIN_ITEMS)
            .fold(
                || vec![0u64; q + 1],
                |mut t, u| {
                    let (g, s) = (this.part.global(u), this.spins[u]);
                    t[1 + s as usize] += 1;
                    t[0] += this
                        .neighbours(u)
                        .filter(|&(v, spin)| v > g && spin == s)
                        .count() as u64;
                    t
                },
            )
            .reduce(
                || vec![0u64; q + 1],
                |mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                    a
                },
            ))
    }
}
