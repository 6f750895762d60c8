//! The tree merge on 1..7 slabs, each slab a thread and the tree's messages channels: every
//! site's label and every cluster's wrapping (spanning) bits equal a breadth-first search of
//! the whole lattice that follows each site's unwrapped position (independent of the
//! union-find with offsets).

use super::*;
use crate::lattice::boundary::{slab_boundary, Faces};
use crate::lattice::engine::SlabDevice;
use crate::lattice::occupation::{bond_bit, NO_LABEL, VACANT};
use crate::lattice::CpuSlab;
use std::collections::HashMap;
use std::sync::mpsc::{channel, Receiver, Sender};

/// One thread's ends of the channels to and from every other.
struct Channels {
    to: Vec<Sender<(i32, Vec<u64>)>>,
    from: Vec<Receiver<(i32, Vec<u64>)>>,
}

impl Link for Channels {
    fn send(&self, to: usize, tag: i32, words: &[u64]) {
        self.to[to].send((tag, words.to_vec())).unwrap();
    }
    fn receive(&self, from: usize, tag: i32) -> Vec<u64> {
        let (got, words) = self.from[from].recv().unwrap();
        assert_eq!(got, tag, "messages from one rank come in the order sent");
        words
    }
}

fn channels(ranks: usize) -> Vec<Channels> {
    let mut to: Vec<Vec<_>> = (0..ranks).map(|_| Vec::new()).collect();
    let mut from: Vec<Vec<_>> = (0..ranks).map(|_| Vec::new()).collect();
    for sender in to.iter_mut() {
        for receiver in from.iter_mut() {
            let (s, r) = channel();
            sender.push(s);
            receiver.push(r);
        }
    }
    to.into_iter()
        .zip(from)
        .map(|(to, from)| Channels { to, from })
        .collect()
}

/// Masks of site percolation on the whole lattice from its occupied sites.
fn site_masks(lattice: Lattice, occupied: &[bool]) -> Vec<u8> {
    (0..lattice.sites())
        .map(|s| match occupied[s as usize] {
            false => VACANT,
            true => (0..lattice.dim)
                .filter(|&a| lattice.up(s, a).is_some_and(|n| occupied[n as usize]))
                .fold(0, |m, a| m | bond_bit(a)),
        })
        .collect()
}

/// Labels of all sites and each cluster's bits by the tree merge over `ranks` slabs.
fn by_merge(lattice: Lattice, ranks: usize, whole: &[u8]) -> (Vec<u64>, HashMap<u64, u8>) {
    let parts: Vec<(Vec<u64>, Vec<Final>)> = std::thread::scope(|scope| {
        let runs: Vec<_> = channels(ranks)
            .into_iter()
            .enumerate()
            .map(|(rank, link)| {
                scope.spawn(move || {
                    let slab = Slab::new(lattice, ranks, rank).unwrap();
                    let at = slab.offset() as usize;
                    let mask = &whole[at..at + slab.sites()];
                    let mut device = CpuSlab::new(slab);
                    let faces = Faces::new(&slab);
                    device.label_box(mask).unwrap();
                    let (roots, masks) = device.face_roots(mask, &faces).unwrap();
                    let part = slab_boundary(&slab, &faces, &roots, &masks);
                    let (finals, _) = solve(&link, &slab, &part);
                    let labels: Vec<u64> = finals.iter().map(|f| f.0).collect();
                    device.relabel(mask, &part.roots, &labels).unwrap();
                    (device.labels, finals)
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let mut bits = HashMap::new();
    let mut labels = Vec::new();
    for (slab_labels, finals) in parts {
        labels.extend(slab_labels);
        for (label, b) in finals {
            assert_eq!(
                *bits.entry(label).or_insert(b),
                b,
                "one cluster, one answer"
            );
        }
    }
    (labels, bits)
}

/// Labels and bits by a breadth-first search over the whole lattice, each site reached at
/// an unwrapped position: reaching a site again elsewhere wraps the axes where they differ.
fn by_search(lattice: Lattice, whole: &[u8]) -> (Vec<u64>, HashMap<u64, u8>) {
    let n = lattice.sites() as usize;
    let mut labels = vec![NO_LABEL; n];
    let mut at: Vec<[i64; 3]> = vec![[0; 3]; n];
    let mut bits = HashMap::new();
    let bonded = |s: u64, a: usize| whole[s as usize] & bond_bit(a) != 0;
    for start in 0..n as u64 {
        if whole[start as usize] & VACANT != 0 || labels[start as usize] != NO_LABEL {
            continue;
        }
        let (mut wraps, mut lows, mut highs) = (0u8, 0u8, 0u8);
        labels[start as usize] = start;
        let mut queue = vec![start];
        while let Some(s) = queue.pop() {
            for a in 0..lattice.dim {
                let c = lattice.coord(s, a);
                lows |= u8::from(c == 0) << a;
                highs |= u8::from(c == lattice.side(a) - 1) << a;
                let mut steps = Vec::new();
                if let Some(up) = lattice.up(s, a).filter(|_| bonded(s, a)) {
                    steps.push((up, 1));
                }
                if let Some(down) = lattice.down(s, a).filter(|&d| bonded(d, a)) {
                    steps.push((down, -1));
                }
                for (next, step) in steps {
                    let mut p = at[s as usize];
                    p[a] += step;
                    if labels[next as usize] == NO_LABEL {
                        labels[next as usize] = start;
                        at[next as usize] = p;
                        queue.push(next);
                    } else {
                        // Positions count sites, so a whole wrap moves by a multiple of L.
                        for (axis, (&x, &y)) in p.iter().zip(&at[next as usize]).enumerate() {
                            wraps |= u8::from(x != y) << axis;
                        }
                    }
                }
            }
        }
        let spans = lows & highs;
        bits.insert(start, if lattice.periodic { wraps } else { spans });
    }
    (labels, bits)
}

/// Check the merge against the search at every rank count up to `most`.
fn check(lattice: Lattice, occupied: &[bool], most: usize, what: &str) -> HashMap<u64, u8> {
    let whole = site_masks(lattice, occupied);
    let (labels, bits) = by_search(lattice, &whole);
    for ranks in 1..=most {
        let (got, got_bits) = by_merge(lattice, ranks, &whole);
        assert_eq!(got, labels, "{what}: labels on {ranks} slabs");
        for (label, b) in &got_bits {
            assert_eq!(bits[label], *b, "{what}: cluster {label} on {ranks} slabs");
        }
        for (label, b) in bits.iter().filter(|(_, &b)| b != 0) {
            assert_eq!(
                got_bits.get(label),
                Some(b),
                "{what}: {label} on {ranks} slabs"
            );
        }
    }
    bits
}

/// Occupied sites at random (xorshift), each with probability about `p`.
fn random_sites(lattice: Lattice, p: f64, mut seed: u64) -> Vec<bool> {
    (0..lattice.sites())
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            ((seed >> 11) as f64) < p * (1u64 << 53) as f64
        })
        .collect()
}

#[test]
fn a_spiral_across_every_slab_wraps_both_axes() {
    // A staircase of one step along axis 0 and two along axis 1, repeated L times: one
    // cluster winding (1, 2) around the torus, through every slab.
    let lattice = Lattice::new(2, 12, true).unwrap();
    let mut occupied = vec![false; 144];
    let (mut x0, mut x1) = (0u64, 0u64);
    for _ in 0..12 {
        for _ in 0..2 {
            occupied[(x0 * 12 + x1) as usize] = true;
            x1 = (x1 + 1) % 12;
        }
        occupied[(x0 * 12 + x1) as usize] = true;
        x0 = (x0 + 1) % 12;
    }
    let bits = check(lattice, &occupied, 7, "spiral");
    assert_eq!(bits[&0], 0b11, "the spiral wraps both axes");
    // A straight line along axis 0 wraps only it.
    let mut line = vec![false; 144];
    for x0 in 0..12 {
        line[x0 * 12 + 5] = true;
    }
    let bits = check(lattice, &line, 5, "line");
    assert_eq!(bits[&5], 0b01);
}

#[test]
fn random_lattices_match_a_search_at_every_slab_count() {
    for (dim, l, periodic, p) in [
        (2, 16, true, 0.6),
        (2, 16, false, 0.6),
        (2, 9, true, 0.75),
        (3, 6, true, 0.35),
        (3, 5, false, 0.4),
    ] {
        let lattice = Lattice::new(dim, l, periodic).unwrap();
        for seed in [1, 2, 3] {
            let occupied = random_sites(lattice, p, 0x2545_f491_4f6c_dd1d * seed);
            let what = format!("{dim}D L={l} periodic={periodic} seed {seed}");
            check(lattice, &occupied, 5, &what);
        }
    }
}

#[test]
fn strips_and_bars_match_a_search_at_every_slab_count() {
    // Axis 0 (the slabs' axis) longer or shorter than the others: windings count in each
    // axis's own side, slabs cut L_0 planes.
    for (dim, length, l, periodic, p) in [
        (2, 40, 6, true, 0.6),
        (2, 40, 6, false, 0.65),
        (2, 5, 14, true, 0.6),
        (3, 17, 4, true, 0.35),
        (3, 11, 5, false, 0.4),
    ] {
        let lattice = Lattice::with_length(dim, length, l, periodic).unwrap();
        for seed in [4, 5, 6] {
            let occupied = random_sites(lattice, p, 0x2545_f491_4f6c_dd1d * seed);
            let what = format!("{dim}D L_0={length} L={l} periodic={periodic} seed {seed}");
            check(lattice, &occupied, 5, &what);
        }
    }
    // A (1, 3) spiral round a 9 x 4 torus: 9 steps along axis 0 and 27 along axis 1 close it,
    // winding axis 0 once and axis 1 three times.
    let lattice = Lattice::with_length(2, 9, 4, true).unwrap();
    let mut occupied = vec![false; 36];
    let (mut x0, mut x1) = (0u64, 0u64);
    for _ in 0..9 {
        for _ in 0..3 {
            occupied[(x0 * 4 + x1) as usize] = true;
            x1 = (x1 + 1) % 4;
        }
        occupied[(x0 * 4 + x1) as usize] = true;
        x0 = (x0 + 1) % 9;
    }
    let bits = check(lattice, &occupied, 7, "strip spiral");
    assert_eq!(bits[&0], 0b11, "the spiral wraps both axes");
}

#[test]
fn a_range_survives_its_encoding_and_the_model_bounds_it() {
    let lattice = Lattice::new(2, 16, true).unwrap();
    let whole = site_masks(lattice, &random_sites(lattice, 0.6, 99));
    let slab = Slab::new(lattice, 2, 1).unwrap();
    let at = slab.offset() as usize;
    let mask = &whole[at..at + slab.sites()];
    let mut device = CpuSlab::new(slab);
    let faces = Faces::new(&slab);
    device.label_box(mask).unwrap();
    let (roots, masks) = device.face_roots(mask, &faces).unwrap();
    let (range, _) = leaf(&slab, &slab_boundary(&slab, &faces, &roots, &masks));
    let words = encode(&range);
    assert_eq!(encode(&decode(&words)), words);
    let cost = merge_cost(lattice, 2);
    assert_eq!(cost.steps, 2);
    assert!(words.len() as u64 <= cost.words, "{} words", words.len());
}

#[test]
fn a_loop_wraps_only_the_axes_its_winding_moves() {
    let open = |n| {
        vec![
            Open {
                label: 0,
                touches: 0,
                wraps: 0
            };
            n
        ]
    };
    // Four nodes in a ring with windings (1, 0) and (0, 2) on the way round and back: none.
    let mut w = Windings::new(&open(4));
    w.unite(3, 2, [0, 1, 0]);
    w.unite(2, 1, [1, 0, 0]);
    w.unite(1, 0, [0, 1, 0]);
    w.unite(0, 3, [-1, -2, 0]);
    assert_eq!(w.wraps[0], 0, "the loop closes without winding");
    let mut w = Windings::new(&open(3));
    w.unite(2, 1, [0, 1, 0]);
    w.unite(1, 0, [0, 1, 0]);
    w.unite(0, 2, [0, 0, 0]);
    assert_eq!(w.wraps[0], 0b10, "winding (0, 2) wraps axis 1 only");
    assert!((0..3).all(|x| w.find(x).0 == 0));
}
