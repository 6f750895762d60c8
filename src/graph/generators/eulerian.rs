//! Eulerian multigraphs (every vertex of even degree, or balanced when directed, and
//! connected), for the Euler-circuit workload and any other. Edge e is a pure function of
//! (seed, e), so the list is the same for every rank count; duplicates and self-loops are
//! part of the graph (edge id = index in the list).
//!
//! - `union-cycles`: k Hamiltonian cycles, cycle j visiting the vertices in the order of a
//!   seeded bijection π_j (a Feistel network with cycle walking): edge j·n + i joins
//!   π_j(i) and π_j(i + 1 mod n). 2k-regular and connected.
//! - `random-cycles`: one Hamiltonian cycle (edges 0..n), then cycles of geometric length
//!   (mean k) through uniform random vertices: position i of the remaining list visits a
//!   random vertex w(i) and closes its cycle with probability 1/k (the last always does).
//! - `triangular`: the periodic triangular lattice, site (x, y) = x + Lx·y, edges site by
//!   site in the directions +x, +y, +x+y (so e mod 3 is the direction's axis).
//! - `hypercube`: Q_d; edge e flips bit e / 2^(d-1) of the vertex whose other bits are
//!   e mod 2^(d-1). Eulerian for even d.
//! - `complete`: K_N for odd N as a circulant: edge u·(N-1)/2 + j joins u and u + 1 + j mod N.
//! - `de-bruijn`: the directed de Bruijn graph B(q, n): vertices are words of length n - 1,
//!   edge w (a word of length n) goes from its prefix w / q to its suffix w mod q^(n-1).

use super::super::{block_range, Edge, EdgeSource};
use super::{below, fill, unit};
use crate::rng::{draw, stream_key};

const CYCLE_ORDER: u64 = 0x6765_6e10;
const CYCLE_VISIT: u64 = 0x6765_6e11;
const CYCLE_CLOSE: u64 = 0x6765_6e12;

/// Which Eulerian graph.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    UnionCycles { n: u64, k: u64 },
    RandomCycles { n: u64, m: u64, mean: u64 },
    Triangular { lx: u64, ly: u64 },
    Hypercube { d: u32 },
    Complete { n: u64 },
    DeBruijn { q: u64, word: u32 },
}

impl Kind {
    /// Vertices and edges of the graph.
    pub fn size(&self) -> (u64, u64) {
        match *self {
            Kind::UnionCycles { n, k } => (n, n * k),
            Kind::RandomCycles { n, m, .. } => (n, m),
            Kind::Triangular { lx, ly } => (lx * ly, 3 * lx * ly),
            Kind::Hypercube { d } => (1 << d, u64::from(d) << (d - 1)),
            Kind::Complete { n } => (n, n * (n - 1) / 2),
            Kind::DeBruijn { q, word } => (q.pow(word - 1), q.pow(word)),
        }
    }

    /// Checks the parameters; the message names the rule broken.
    pub fn check(&self) -> Result<(), String> {
        const MAX: u64 = 1 << 48;
        let fits = |n: Option<u64>| n.is_some_and(|n| n <= MAX);
        match *self {
            Kind::UnionCycles { n, k } if n < 3 || k < 1 || !fits(n.checked_mul(k)) => Err(
                format!("vertices = {n}, k = {k}: need vertices >= 3, k >= 1, vertices * k <= 2^48"),
            ),
            Kind::RandomCycles { n, m, mean } if n < 3 || m < n || mean < 1 || m > MAX => {
                Err(format!(
                    "vertices = {n}, edges = {m}, k = {mean}: need vertices >= 3, vertices <= edges <= 2^48, k >= 1"
                ))
            }
            Kind::Triangular { lx, ly } if lx < 3 || ly < 3 || !fits(lx.checked_mul(ly)) => Err(
                format!("dims = [{lx}, {ly}]: a triangular lattice has 2 periodic sides of at least 3"),
            ),
            Kind::Hypercube { d } if d == 0 || d % 2 == 1 || d > 40 => Err(format!(
                "d = {d}: a hypercube is Eulerian for even d, 2 <= d <= 40"
            )),
            Kind::Complete { n } if n < 3 || n % 2 == 0 || n > 1 << 24 => Err(format!(
                "vertices = {n}: K_n is Eulerian for odd n, 3 <= n <= 2^24"
            )),
            Kind::DeBruijn { q, word }
                if q < 2 || word < 2 || !fits(q.checked_pow(word)) =>
            {
                Err(format!(
                    "alphabet = {q}, word = {word}: need alphabet >= 2, word >= 2, alphabet^word <= 2^48"
                ))
            }
            _ => Ok(()),
        }
    }
}

pub struct Eulerian {
    kind: Kind,
    n: u64,
    m: u64,
    seed: u64,
    local: std::ops::Range<u64>,
}

impl Eulerian {
    pub fn new(kind: Kind, seed: u64, ranks: usize, rank: usize) -> Self {
        let (n, m) = kind.size();
        Eulerian {
            kind,
            n,
            m,
            seed,
            local: block_range(m, ranks, rank),
        }
    }

    /// Edge `e` of the global list.
    pub fn edge(&self, e: u64) -> Edge {
        match self.kind {
            Kind::UnionCycles { n, .. } => {
                let (j, i) = (e / n, e % n);
                let key = stream_key(self.seed, CYCLE_ORDER ^ (j << 32));
                (permute(key, n, i), permute(key, n, (i + 1) % n))
            }
            Kind::RandomCycles { n, m, mean } => self.random_cycles_edge(n, m, mean, e),
            Kind::Triangular { lx, ly } => {
                let (site, axis) = (e / 3, e % 3);
                let (x, y) = (site % lx, site / lx);
                let (dx, dy) = [(1, 0), (0, 1), (1, 1)][axis as usize];
                (site, (x + dx) % lx + lx * ((y + dy) % ly))
            }
            Kind::Hypercube { d } => {
                let half = 1u64 << (d - 1);
                let (bit, rest) = (e / half, e % half);
                let low = rest & ((1 << bit) - 1);
                let v = ((rest >> bit) << (bit + 1)) | low;
                (v, v | 1 << bit)
            }
            Kind::Complete { n } => {
                let half = (n - 1) / 2;
                let (u, j) = (e / half, e % half);
                (u, (u + 1 + j) % n)
            }
            Kind::DeBruijn { q, .. } => (e / q, e % self.n),
        }
    }

    fn random_cycles_edge(&self, n: u64, m: u64, mean: u64, e: u64) -> Edge {
        if e < n {
            let key = stream_key(self.seed, CYCLE_ORDER);
            return (permute(key, n, e), permute(key, n, (e + 1) % n));
        }
        let extra = m - n;
        let visit = stream_key(self.seed, CYCLE_VISIT);
        let close = stream_key(self.seed, CYCLE_CLOSE);
        let closes = |i: u64| i + 1 == extra || unit(draw(close, i)) * (mean as f64) < 1.0;
        let at = |i: u64| below(draw(visit, i), n);
        let i = e - n;
        if !closes(i) {
            return (at(i), at(i + 1));
        }
        // The cycle's first position follows the previous closing one.
        let mut start = i;
        while start > 0 && !closes(start - 1) {
            start -= 1;
        }
        (at(i), at(start))
    }
}

/// A seeded bijection of 0..n: a 4-round Feistel network on the smallest even number of
/// bits covering n, applied again while the value falls outside 0..n (cycle walking).
pub fn permute(key: u64, n: u64, x: u64) -> u64 {
    let bits = (64 - (n - 1).max(1).leading_zeros()).div_ceil(2);
    let mask = (1u64 << bits) - 1;
    let mut y = x;
    loop {
        let (mut left, mut right) = (y >> bits, y & mask);
        for round in 0..4 {
            let f = draw(key, (round << 40) | right) & mask;
            (left, right) = (right, left ^ f);
        }
        y = (left << bits) | right;
        if y < n {
            return y;
        }
    }
}

impl EdgeSource for Eulerian {
    fn num_vertices(&self) -> u64 {
        self.n
    }
    fn num_edges(&self) -> u64 {
        self.m
    }
    fn local_len(&self) -> u64 {
        self.local.end - self.local.start
    }
    fn local_chunk(&self, start: u64, len: u64, out: &mut Vec<Edge>) {
        fill(out, self.local.start + start, len, |e| self.edge(e));
    }
    fn is_directed(&self) -> bool {
        matches!(self.kind, Kind::DeBruijn { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{degrees, global_edges};
    use super::*;

    fn edges(kind: Kind) -> Vec<Edge> {
        global_edges(|ranks, rank| Eulerian::new(kind, 7, ranks, rank))
    }

    #[test]
    fn permute_is_a_bijection() {
        for n in [3u64, 4, 5, 17, 1000] {
            let mut seen: Vec<u64> = (0..n).map(|x| permute(99, n, x)).collect();
            seen.sort_unstable();
            assert!(seen.iter().copied().eq(0..n), "n = {n}");
        }
    }

    #[test]
    fn undirected_kinds_have_even_degrees() {
        for kind in [
            Kind::UnionCycles { n: 50, k: 3 },
            Kind::RandomCycles {
                n: 40,
                m: 300,
                mean: 5,
            },
            Kind::Triangular { lx: 4, ly: 3 },
            Kind::Hypercube { d: 4 },
            Kind::Complete { n: 7 },
        ] {
            let list = edges(kind);
            let (n, m) = kind.size();
            assert_eq!(list.len() as u64, m, "{kind:?}");
            let deg = degrees(n, &list);
            assert!(deg.iter().all(|&d| d % 2 == 0 && d > 0), "{kind:?}");
        }
        let k5: std::collections::BTreeSet<Edge> = edges(Kind::Complete { n: 5 })
            .into_iter()
            .map(|(u, v)| (u.min(v), u.max(v)))
            .collect();
        assert_eq!(k5.len(), 10);
        assert!(edges(Kind::Triangular { lx: 3, ly: 3 })
            .iter()
            .all(|&(u, v)| u != v));
    }

    #[test]
    fn de_bruijn_is_balanced() {
        let list = edges(Kind::DeBruijn { q: 3, word: 3 });
        assert_eq!(list.len(), 27);
        let mut balance = [0i64; 9];
        for &(u, v) in &list {
            balance[u as usize] += 1;
            balance[v as usize] -= 1;
        }
        assert_eq!(balance, [0; 9]);
    }

    #[test]
    fn check_names_the_rule() {
        assert!(Kind::Hypercube { d: 3 }
            .check()
            .unwrap_err()
            .contains("even"));
        assert!(Kind::Complete { n: 6 }.check().unwrap_err().contains("odd"));
        assert!(Kind::UnionCycles { n: 10, k: 2 }.check().is_ok());
    }
}
