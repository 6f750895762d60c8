//! The lattice layer from inside the ranks, at 1 to 4 ranks: halo exchange, and cluster
//! labels and statistics against a sequential union-find over the whole lattice (labels)
//! and a breadth-first search with unwrapped coordinates (wrapping and spanning), on random
//! 2D and 3D lattices, periodic and open, site and bond, and on hand-made clusters whose
//! answer is known: a (1, 2) spiral round a torus, a row and a column that reach both ends
//! without wrapping, a line wrapping the third axis.
//!
//! No libtest harness: run by `cargo test`, it starts itself under `mpirun -np N` (see
//! `common::run_as_ranks`).

mod common;

use std::collections::VecDeque;
use tessera::comm::{Op, World};
use tessera::lattice::clusters::{size_bin, SIZE_BINS};
use tessera::lattice::occupation::{bond_bit, draw_mask, threshold};
use tessera::lattice::{
    halo, ClusterStats, CpuSlab, Labeller, Lattice, Occupation, Slab, NO_LABEL, VACANT,
};

const ENV: &str = "TESSERA_LATTICE_RANK";

fn main() {
    common::run_as_ranks("lattice", ENV, as_rank);
}

fn as_rank() -> i32 {
    let world = World::init().expect("MPI initialised twice");
    let mut failures = Vec::new();
    halo_fills_the_ghosts(&world, &mut failures);
    random_lattices(&world, &mut failures);
    hand_made(&world, &mut failures);
    for f in &failures {
        eprintln!("rank {}: {f}", world.rank());
    }
    let any = world.allreduce(failures.len() as u64, Op::Max);
    if world.is_root() && any == 0 {
        println!("lattice: every case agrees at {} ranks", world.size());
    }
    drop(world);
    i32::from(any != 0)
}

/// Ghost planes hold the neighbouring slabs' planes (their global indices + 1), wrapped on
/// a torus and zero beyond the ends of an open lattice.
fn halo_fills_the_ghosts(world: &World, failures: &mut Vec<String>) {
    for (dim, l, periodic) in [(2, 7, true), (3, 5, false), (2, 4, true)] {
        let lattice = Lattice::new(dim, l, periodic).unwrap();
        let Ok(slab) = Slab::new(lattice, world.size(), world.rank()) else {
            continue;
        };
        let plane = slab.plane();
        let mut field = vec![0u64; halo::field_len(&slab)];
        for i in 0..slab.sites() {
            field[plane + i] = slab.global(i) + 1;
        }
        halo::exchange(world, &slab, &mut field);
        for j in 0..plane {
            let below = slab.neighbours(j, 0).0.map_or(0, |g| g + 1);
            let above = slab
                .neighbours(slab.sites() - plane + j, 0)
                .1
                .map_or(0, |g| g + 1);
            if field[j] != below || field[plane + slab.sites() + j] != above {
                failures.push(format!(
                    "halo {dim}D L={l} periodic={periodic}: ghost site {j}"
                ));
                return;
            }
        }
    }
}

/// Labels and statistics computed independently on the whole lattice.
struct Reference {
    labels: Vec<u64>,
    stats: ClusterStats,
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

fn reference(lattice: &Lattice, mask: &[u8]) -> Reference {
    let n = lattice.sites() as usize;
    let mut parent: Vec<usize> = (0..n).collect();
    for (g, &m) in mask.iter().enumerate() {
        for a in 0..lattice.dim {
            if m & bond_bit(a) != 0 {
                let (x, y) = (
                    find(&mut parent, g),
                    find(&mut parent, lattice.up(g as u64, a).unwrap() as usize),
                );
                parent[x.max(y)] = x.min(y);
            }
        }
    }
    let labels: Vec<u64> = (0..n)
        .map(|g| {
            if mask[g] & VACANT != 0 {
                NO_LABEL
            } else {
                find(&mut parent, g) as u64
            }
        })
        .collect();
    let mut stats = ClusterStats::default();
    for (g, &label) in labels.iter().enumerate() {
        if label == g as u64 {
            let (size, percolates) = explore(lattice, mask, g);
            stats.add(tessera::lattice::Cluster {
                size,
                label: g as u64,
                percolates,
            });
        }
    }
    Reference { labels, stats }
}

/// Breadth-first search of the cluster of `start` with unwrapped coordinates: its size and
/// the axes it wraps (a site reached at two positions that differ along the axis) or spans
/// (sites at both ends of the axis on an open lattice).
fn explore(lattice: &Lattice, mask: &[u8], start: usize) -> (u64, u8) {
    let mut pos: std::collections::HashMap<usize, [i64; 3]> = std::collections::HashMap::new();
    let coords = |g: usize| -> [i64; 3] {
        let mut c = [0; 3];
        for (a, c) in c.iter_mut().enumerate().take(lattice.dim) {
            *c = lattice.coord(g as u64, a) as i64;
        }
        c
    };
    pos.insert(start, coords(start));
    let mut queue = VecDeque::from([start]);
    let (mut wraps, mut low, mut high) = (0u8, 0u8, 0u8);
    while let Some(u) = queue.pop_front() {
        let pu = pos[&u];
        for a in 0..lattice.dim {
            let c = lattice.coord(u as u64, a) as i64;
            low |= u8::from(c == 0) << a;
            high |= u8::from(c == lattice.side(a) as i64 - 1) << a;
            let up = lattice.up(u as u64, a).map(|v| (v as usize, 1));
            let down = lattice.down(u as u64, a).map(|v| (v as usize, -1));
            for (v, step) in up.into_iter().chain(down) {
                let bonded = if step == 1 {
                    mask[u] & bond_bit(a)
                } else {
                    mask[v] & bond_bit(a)
                };
                if bonded == 0 {
                    continue;
                }
                let mut pv = pu;
                pv[a] += step;
                match pos.get(&v) {
                    Some(seen) => {
                        for (b, (x, y)) in seen.iter().zip(&pv).enumerate() {
                            if x != y {
                                wraps |= 1 << b;
                            }
                        }
                    }
                    None => {
                        pos.insert(v, pv);
                        queue.push_back(v);
                    }
                }
            }
        }
    }
    let percolates = if lattice.periodic { wraps } else { low & high };
    (pos.len() as u64, percolates)
}

/// Label `mask` (the whole lattice's) on the ranks and compare with the reference.
fn check(
    world: &World,
    what: &str,
    lattice: Lattice,
    mask: &[u8],
    expected: Option<(u64, u8)>,
    failures: &mut Vec<String>,
) {
    let Ok(slab) = Slab::new(lattice, world.size(), world.rank()) else {
        return;
    };
    let part = &mask[slab.offset() as usize..][..slab.sites()];
    let mut labeller = Labeller::new(slab, CpuSlab::new(slab)).unwrap();
    let labelled = labeller.label(world, part).unwrap();
    let stats = labeller.statistics(world, part, &labelled).unwrap();
    let labels = world.gatherv_root(&labeller.device.labels).unwrap();
    let want = reference(&lattice, mask);
    if world.is_root() && labels != want.labels {
        let at = labels
            .iter()
            .zip(&want.labels)
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        failures.push(format!(
            "{what}: label of site {at} is {} (sequential: {})",
            labels[at], want.labels[at]
        ));
    }
    if stats != want.stats {
        failures.push(format!(
            "{what}: statistics {stats:?}, sequential {:?}",
            want.stats
        ));
    }
    if let Some((size, percolates)) = expected {
        if (stats.largest.size, stats.largest.percolates) != (size, percolates) {
            failures.push(format!(
                "{what}: largest cluster of {} sites percolating {:#b}, expected {size} and {percolates:#b}",
                stats.largest.size, stats.largest.percolates
            ));
        }
    }
    assert_eq!(stats.histogram.len(), SIZE_BINS);
}

fn random_lattices(world: &World, failures: &mut Vec<String>) {
    let shapes: [(usize, &[u64]); 2] = [(2, &[2, 3, 5, 9, 16]), (3, &[2, 4, 5])];
    for (dim, sides) in shapes {
        for &l in sides {
            for periodic in [true, false] {
                for kind in [Occupation::Site, Occupation::Bond] {
                    for (k, p) in [0.3, 0.5, 0.6, 0.8].into_iter().enumerate() {
                        let lattice = Lattice::new(dim, l, periodic).unwrap();
                        let whole = Slab::new(lattice, 1, 0).unwrap();
                        let mask = draw_mask(&whole, kind, 1000 + k as u64 + l, threshold(p));
                        let what = format!("{dim}D L={l} periodic={periodic} {kind:?} p={p}");
                        check(world, &what, lattice, &mask, None, failures);
                    }
                }
            }
        }
    }
    // Strips and bars: axis 0, the slabs' axis, longer or shorter than the others.
    for (dim, length, l) in [(2, 23, 4), (2, 3, 11), (3, 9, 3)] {
        for periodic in [true, false] {
            for kind in [Occupation::Site, Occupation::Bond] {
                for (k, p) in [0.5, 0.7].into_iter().enumerate() {
                    let lattice = Lattice::with_length(dim, length, l, periodic).unwrap();
                    let whole = Slab::new(lattice, 1, 0).unwrap();
                    let mask = draw_mask(&whole, kind, 2000 + k as u64 + length, threshold(p));
                    let what =
                        format!("{dim}D L_0={length} L={l} periodic={periodic} {kind:?} p={p}");
                    check(world, &what, lattice, &mask, None, failures);
                }
            }
        }
    }
}

fn hand_made(world: &World, failures: &mut Vec<String>) {
    let l = 8u64;
    let torus = Lattice::new(2, l, true).unwrap();
    let open = Lattice {
        periodic: false,
        ..torus
    };
    let at = |x0: u64, x1: u64| (x0 * l + x1 % l) as usize;
    // A (1, 2) spiral: each row k holds (k, 2k), (k, 2k+1), (k, 2k+2), then a step up.
    let mut spiral = vec![0u8; 64];
    for k in 0..l {
        spiral[at(k, 2 * k)] |= bond_bit(1);
        spiral[at(k, 2 * k + 1)] |= bond_bit(1);
        spiral[at(k, 2 * k + 2)] |= bond_bit(0);
    }
    check(
        world,
        "spiral (1, 2)",
        torus,
        &spiral,
        Some((3 * l, 0b11)),
        failures,
    );
    // Row 0 and column 3, reaching every end without a wrap bond.
    let mut cross = vec![0u8; 64];
    for x in 0..l - 1 {
        cross[at(0, x)] |= bond_bit(1);
        cross[at(x, 3)] |= bond_bit(0);
    }
    check(
        world,
        "cross, periodic",
        torus,
        &cross,
        Some((2 * l - 1, 0)),
        failures,
    );
    check(
        world,
        "cross, open",
        open,
        &cross,
        Some((2 * l - 1, 0b11)),
        failures,
    );
    cross[at(l - 1, 3)] |= bond_bit(0);
    check(
        world,
        "cross with its column's wrap",
        torus,
        &cross,
        Some((2 * l - 1, 0b01)),
        failures,
    );
    // 3D: a line along axis 2 with its wrap bond.
    let cube = Lattice::new(3, 4, true).unwrap();
    let mut line = vec![0u8; 64];
    for x2 in 0..4 {
        line[16 + 2 * 4 + x2] |= bond_bit(2);
    }
    check(
        world,
        "3D line along axis 2",
        cube,
        &line,
        Some((4, 0b100)),
        failures,
    );
    // Site percolation's vacant sites stay unlabelled and uncounted.
    let mut vacant = vec![VACANT; 64];
    vacant[at(2, 7)] = bond_bit(1);
    vacant[at(2, 0)] = 0;
    check(
        world,
        "two sites joined by a wrap",
        torus,
        &vacant,
        Some((2, 0)),
        failures,
    );
    let stats_sizes = [(1u64, 0usize), (2, 1), (3, 1), (1 << 40, 40)];
    for (size, bin) in stats_sizes {
        assert_eq!(size_bin(size), bin);
    }
}
