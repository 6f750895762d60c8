//! The updates on the CPU (rayon): a slab of spins with a ghost plane on either side
//! (`lattice::halo`), refreshed before every step that reads across the slab's faces.
//!
//! - Metropolis, checkerboard: each half-sweep reads the field and writes every site of the
//!   next field (the sites of the other colour copied), then the two swap; rows in parallel.
//! - Swendsen-Wang: the bond mask of activated satisfied bonds, the lattice layer's labelling
//!   (`Labeller<CpuSlab>`), a new state per cluster drawn at its canonical label.
//! - Wolff: a fixed number of clusters per sweep, each grown from a seed site, a level at a time; sites reached across a slab
//!   face go to the rank that holds them (an all-to-all per level, as a distributed BFS). A
//!   bond's activation is a draw keyed by the bond, so the cluster is the seed's component of
//!   the activated satisfied bonds whatever the order of growth or the rank count.

use super::model::{
    bond_active, lattice_bond, metropolis_accept, proposal, start_state, uniform_state, wolff_seed,
    wolff_state, wolff_sweep, Model,
};
use crate::comm::{Op, World};
use crate::error::Result;
use crate::lattice::checkerboard::row_first;
use crate::lattice::halo::{self, RowNeighbours};
use crate::lattice::{CpuSlab, Labeller, Slab};
use crate::rng::draw;
use rayon::prelude::*;

/// A slab of spins in host memory.
pub struct CpuSpins {
    slab: Slab,
    /// Slab sites between two ghost planes (`halo::field_len`).
    field: Vec<u8>,
    /// The field a Metropolis half-sweep writes.
    next: Vec<u8>,
    /// Swendsen-Wang: the labelling and its bond masks.
    labeller: Option<Labeller<CpuSlab>>,
    mask: Vec<u8>,
}

/// The old state of the Wolff cluster keyed by `key` (its seed's: `held` on the rank that
/// holds the seed) and its new state (`model::wolff_state`) (collective).
pub fn wolff_states(world: &World, key: u64, held: Option<u8>, q: u32) -> (u8, u8) {
    let held = held.map_or(0, |s| u32::from(s) + 1);
    let old = (world.allreduce(held, Op::Max) - 1) as u8;
    (old, wolff_state(key, old, q))
}

/// The values of a site's 2d neighbours in a periodic field: along the fast axis, then down
/// and up along each slow axis.
#[inline]
fn neighbour_values(field: &[u8], rn: &RowNeighbours, x: usize, l: usize, dim: usize) -> [u8; 6] {
    let mut v = [0u8; 6];
    v[0] = field[rn.start + if x + 1 < l { x + 1 } else { 0 }];
    v[1] = field[rn.start + if x > 0 { x - 1 } else { l - 1 }];
    for (a, &(down, up)) in rn.slow.iter().enumerate().take(dim - 1) {
        v[2 + 2 * a] = field[down.expect("a periodic lattice") + x];
        v[3 + 2 * a] = field[up.expect("a periodic lattice") + x];
    }
    v
}

/// The field index of the neighbour up along `axis` of position x of a row.
#[inline]
fn up_index(rn: &RowNeighbours, x: usize, l: usize, axis: usize, dim: usize) -> usize {
    if axis + 1 == dim {
        rn.start + if x + 1 < l { x + 1 } else { 0 }
    } else {
        rn.slow[axis].1.expect("a periodic lattice") + x
    }
}

impl CpuSpins {
    /// Spins for `slab`, all in state 0; `clusters` readies the Swendsen-Wang labelling.
    pub fn new(slab: Slab, clusters: bool) -> Result<Self> {
        let field = vec![0u8; halo::field_len(&slab)];
        let labeller = if clusters {
            Some(Labeller::new(slab, CpuSlab::new(slab))?)
        } else {
            None
        };
        Ok(CpuSpins {
            slab,
            next: if clusters { Vec::new() } else { field.clone() },
            field,
            labeller,
            mask: vec![0; if clusters { slab.sites() } else { 0 }],
        })
    }

    /// Every site to its start state (`model::start_state`).
    pub fn reset(&mut self, hot: Option<u64>, q: u32) {
        let (slab, plane) = (self.slab, self.slab.plane());
        self.field[plane..plane + slab.sites()]
            .par_iter_mut().with_min_len(crate::grain::MIN_ITEMS)
            .enumerate()
            .for_each(|(i, s)| *s = start_state(hot, slab.global(i), q));
    }

    /// The slab's spins (without ghosts).
    pub fn local(&self) -> &[u8] {
        let plane = self.slab.plane();
        &self.field[plane..plane + self.slab.sites()]
    }

    /// Replace the slab's spins (a checkpoint's).
    pub fn set_local(&mut self, spins: &[u8]) {
        let plane = self.slab.plane();
        self.field[plane..plane + self.slab.sites()].copy_from_slice(spins);
    }

    fn rows(&self) -> usize {
        self.slab.sites() / self.slab.lattice.l as usize
    }

    /// One checkerboard sweep: colour 0, then colour 1, each with its key (collective).
    pub fn metropolis(&mut self, world: &World, model: &Model, table: &[u64], keys: [u64; 2]) {
        for (colour, key) in keys.into_iter().enumerate() {
            halo::exchange(world, &self.slab, &mut self.field);
            self.half_sweep(model, table, colour as u8, key);
            std::mem::swap(&mut self.field, &mut self.next);
        }
    }

    fn half_sweep(&mut self, model: &Model, table: &[u64], colour: u8, key: u64) {
        let slab = self.slab;
        let (l, dim, plane) = (slab.lattice.l as usize, model.dim, slab.plane());
        let (z, q) = (model.neighbours() as i32, model.q);
        let field = &self.field;
        self.next[plane..plane + slab.sites()]
            .par_chunks_mut(l).with_min_len(crate::grain::min_rows(l))
            .enumerate()
            .for_each(|(row, out)| {
                let rn = halo::row_neighbours(&slab, row);
                out.copy_from_slice(&field[rn.start..rn.start + l]);
                let g0 = slab.global(row * l);
                for x in (row_first(&slab, row, colour)..l).step_by(2) {
                    let s = out[x];
                    let g = g0 + x as u64;
                    let new = if q == 2 {
                        1 - s
                    } else {
                        proposal(s, draw(key, 2 * g + 1), q)
                    };
                    let v = neighbour_values(field, &rn, x, l, dim);
                    let de: i32 = v[..2 * dim]
                        .iter()
                        .map(|&n| i32::from(n == s) - i32::from(n == new))
                        .sum();
                    let threshold = table[(de + z) as usize];
                    if metropolis_accept(key, g, l as u64, threshold) {
                        out[x] = new;
                    }
                }
            });
    }

    /// One Swendsen-Wang sweep (collective): activate each satisfied bond (g, axis) as
    /// `model::bond_active` decides under `bonds`, label the clusters, give each cluster the state
    /// drawn at its label under `clusters`.
    pub fn swendsen_wang(
        &mut self,
        world: &World,
        model: &Model,
        threshold: u64,
        bonds: u64,
        clusters: u64,
    ) -> Result<()> {
        halo::exchange(world, &self.slab, &mut self.field);
        let slab = self.slab;
        let (l, dim) = (slab.lattice.l as usize, model.dim);
        let field = &self.field;
        self.mask
            .par_chunks_mut(l).with_min_len(crate::grain::min_rows(l))
            .enumerate()
            .for_each(|(row, masks)| {
                let rn = halo::row_neighbours(&slab, row);
                let g0 = slab.global(row * l);
                for (x, m) in masks.iter_mut().enumerate() {
                    let s = field[rn.start + x];
                    let g = g0 + x as u64;
                    *m = (0..dim)
                        .filter(|&a| {
                            field[up_index(&rn, x, l, a, dim)] == s
                                && bond_active(bonds, lattice_bond(g, a, dim), threshold)
                        })
                        .fold(0, |m, a| m | 1 << a);
                }
            });
        let labeller = self.labeller.as_mut().expect("spins made for clusters");
        labeller.label(world, &self.mask)?;
        let plane = slab.plane();
        let q = model.q;
        self.field[plane..plane + slab.sites()]
            .par_iter_mut().with_min_len(crate::grain::MIN_ITEMS)
            .zip(&labeller.device.labels)
            .for_each(|(s, &label)| *s = uniform_state(draw(clusters, label), q));
        Ok(())
    }

    /// One Wolff sweep (collective, `model::wolff_sweep`); returns the sites flipped.
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

    /// Grow and flip one cluster: its seed site and new state come from the stream
    /// `model::wolff_seed` and `wolff_states`, its bonds (g, axis) from `model::bond_active` under
    /// `key`. Returns its size.
    fn wolff_cluster(
        &mut self,
        world: &World,
        model: &Model,
        threshold: u64,
        key: u64,
    ) -> Result<u64> {
        let (slab, lattice, plane) = (self.slab, self.slab.lattice, self.slab.plane());
        let (dim, q) = (model.dim, model.q);
        let seed = wolff_seed(key, lattice.sites());
        let mine = slab.local(seed);
        let (old, new) = wolff_states(world, key, mine.map(|i| self.field[plane + i]), q);
        let active =
            |bond: u64, axis: usize| bond_active(key, lattice_bond(bond, axis, dim), threshold);
        let mut frontier: Vec<usize> = mine.into_iter().collect();
        if let Some(i) = mine {
            self.field[plane + i] = new;
        }
        let mut size = frontier.len() as u64;
        loop {
            let mut next = Vec::new();
            let mut outbox: Vec<Vec<u64>> = vec![Vec::new(); world.size()];
            for &i in &frontier {
                let g = slab.global(i);
                for axis in 0..dim {
                    let up = lattice.up(g, axis).expect("a periodic lattice");
                    let down = lattice.down(g, axis).expect("a periodic lattice");
                    for (n, bond, owner) in [(up, g, slab.above()), (down, down, slab.below())] {
                        if !active(bond, axis) {
                            continue;
                        }
                        match slab.local(n) {
                            Some(j) if self.field[plane + j] == old => {
                                self.field[plane + j] = new;
                                next.push(j);
                            }
                            Some(_) => {}
                            None => outbox[owner].push(n),
                        }
                    }
                }
            }
            let counts: Vec<usize> = outbox.iter().map(Vec::len).collect();
            for g in world.alltoallv(&outbox.concat(), &counts)? {
                let j = slab.local(g).expect("a site sent to its slab");
                if self.field[plane + j] == old {
                    self.field[plane + j] = new;
                    next.push(j);
                }
            }
            size += next.len() as u64;
            frontier = next;
            if world.allreduce(frontier.len() as u64, Op::Sum) == 0 {
                return Ok(world.allreduce(size, Op::Sum));
            }
        }
    }

    /// This slab's satisfied bonds (each counted from its lower site) and sites per state,
    /// as [satisfied, count of state 0, ..., count of state q-1] (collective: refreshes the
    /// ghost planes).
    pub fn tally(&mut self, world: &World, model: &Model) -> Vec<u64> {
        halo::exchange(world, &self.slab, &mut self.field);
        let slab = self.slab;
        let (l, dim, q) = (slab.lattice.l as usize, model.dim, model.q as usize);
        let field = &self.field;
        (0..self.rows())
            .into_par_iter().with_min_len(crate::grain::min_rows(l))
            .fold(
                || vec![0u64; q + 1],
                |mut t, row| {
                    let rn = halo::row_neighbours(&slab, row);
                    for x in 0..l {
                        let s = field[rn.start + x];
                        t[1 + s as usize] += 1;
                        t[0] += (0..dim)
                            .filter(|&a| field[up_index(&rn, x, l, a, dim)] == s)
                            .count() as u64;
                    }
                    t
                },
            )
            .reduce(
                || vec![0u64; q + 1],
                |mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                    a
                },
            )
    }
}
