//! Watts-Strogatz small-world graphs (Watts & Strogatz 1998), on a ring (k/2 neighbours a
//! side) or a periodic 2D/3D lattice, without communication.
//!
//! Base edge e has a source u (ring: e = u·k/2 + j - 1 joins u to u + j; lattice: e = u·d +
//! direction, the lattice generator's order), so the h base edges with source u are
//! u·h .. u·h + h. With probability p (a keyed draw for e) the edge is rewired to (u, w):
//! candidates c_0, c_1, .. c_{A-1} (A = `ATTEMPTS`) are keyed by (e, attempt), and the first
//! acceptable one is w. A candidate c is rejected if it is u or a base neighbour of u (so a
//! rewired edge never repeats a base edge), or if some other rewired edge e' < e with source
//! u or c has, among its own A raw candidates, c (respectively u): raw lists, so no
//! recursion. Of two rewired edges that could meet, the later one thus avoids every pair the
//! earlier one might take, and rewired edges never coincide. When all A candidates are
//! rejected the edge keeps its base pair (never a duplicate either, where the last candidate
//! could be one), which takes a high rejection rate, i.e. a small or dense graph (about 5% of
//! rewired edges at n = 100, k = 20, p = 1; none seen at n = 2000, k = 10, p = 0.3 over 300
//! seeds). The graph is therefore always simple, with exactly the base's edge count (nk/2 on
//! the ring); w is uniform over the vertices outside u's neighbourhood that no earlier
//! rewired edge could pair with u.
//!
//! `WattsStrogatz::keeping_colours` is the small-world lattice of Leist's thesis, §7.1.1 (A.
//! Leist, "Experiences in Data-Parallel Simulation and Analysis of Complex Systems with
//! Irregular Graph Structures", PhD thesis, Massey University, 2011; the rewired Ising model's): on a periodic lattice of even sides, each end of each base edge e
//! is independently moved, with probability p/2 (draw 2e for the source end, 2e + 1 for the
//! other), to a uniform vertex of the checkerboard colour it had, so about a fraction p of
//! the edges is rewired, the edge count is kept, vertex degrees are not (one end loses an
//! edge, another vertex gains it), and no edge ever joins two vertices of one colour: the
//! colouring stays proper, which lets a checkerboard update run on the rewired graph. No
//! loops can arise; a rewired edge may repeat another (rarely: about p²·d/N of them), and
//! the CSR keeps one copy.

use super::super::{block_range, DeviceEdges, Edge, EdgeSource};
use super::lattice::{self, Lattice};
use super::{below, fill, WS_REWIRE, WS_TARGET};
use crate::rng::{draw, stream_key};

/// Candidates tried for a rewired edge before it keeps its base pair.
const ATTEMPTS: u64 = 4;

/// Most edges (the candidate counter e·ATTEMPTS must fit in 64 bits).
const MAX_EDGES: u64 = 1 << 58;

/// The base graph: a ring of n vertices with k/2 neighbours a side, or a periodic lattice.
#[derive(Clone, Debug, PartialEq)]
pub enum Base {
    Ring { n: u64, k: u64 },
    Lattice { dims: Vec<u64> },
}

/// Checks the base (ring: k even, 2 ≤ k < n; lattice: as `lattice::check`, periodic) and
/// the rewiring probability p in [0, 1].
pub fn check(base: &Base, p: f64) -> Result<(), String> {
    if !(0.0..=1.0).contains(&p) {
        return Err(format!("p = {p} must be between 0 and 1"));
    }
    match base {
        Base::Ring { n, k } => {
            if k % 2 == 1 || *k < 2 || k >= n {
                return Err(format!(
                    "k = {k} must be even, at least 2 and less than vertices = {n}"
                ));
            }
            if n.checked_mul(k / 2).is_none_or(|m| m > MAX_EDGES) {
                return Err(format!("vertices·k/2 = {n}·{k}/2 edges is more than 2^58"));
            }
            Ok(())
        }
        Base::Lattice { dims } => lattice::check(dims, true),
    }
}

/// The base graph, as the generator uses it.
enum Shape {
    Ring { n: u64, half: u64 },
    Torus(Lattice),
}

impl Shape {
    fn n(&self) -> u64 {
        match self {
            Shape::Ring { n, .. } => *n,
            Shape::Torus(t) => t.num_vertices(),
        }
    }

    /// Base edges per source vertex.
    fn half(&self) -> u64 {
        match self {
            Shape::Ring { half, .. } => *half,
            Shape::Torus(t) => t.dim() as u64,
        }
    }

    /// Base edge `e` as (source, other end).
    fn edge(&self, e: u64) -> Edge {
        match self {
            Shape::Ring { n, half } => {
                let u = e / half;
                (u, (u + e % half + 1) % n)
            }
            Shape::Torus(t) => t.edge(e),
        }
    }

    fn adjacent(&self, u: u64, v: u64) -> bool {
        match self {
            Shape::Ring { n, half } => {
                let gap = u.abs_diff(v);
                gap != 0 && gap.min(n - gap) <= *half
            }
            Shape::Torus(t) => t.adjacent(u, v),
        }
    }
}

pub struct WattsStrogatz {
    shape: Shape,
    /// An edge is rewired when the top 53 bits of its draw are below this (p·2^53).
    rewire_below: u64,
    rewire_key: u64,
    target_key: u64,
    /// Leist's rule (PhD thesis, 2011, §7.1.1: `keeping_colours`) rather than Watts-Strogatz's.
    keep_colours: bool,
    local: std::ops::Range<u64>,
}

/// Checks a base for `WattsStrogatz::keeping_colours`: periodic sides (as `lattice::check`),
/// each even (else the checkerboard colouring is not proper), and p in [0, 1].
pub fn check_keeping_colours(dims: &[u64], p: f64) -> Result<(), String> {
    check(
        &Base::Lattice {
            dims: dims.to_vec(),
        },
        p,
    )?;
    match dims.iter().find(|&&side| side % 2 == 1) {
        Some(side) => Err(format!(
            "side {side} is odd: rewiring that keeps the checkerboard colours needs even sides"
        )),
        None => Ok(()),
    }
}

impl WattsStrogatz {
    /// The base rewired with probability p (see `check` for the valid values).
    pub fn new(base: Base, p: f64, seed: u64, ranks: usize, rank: usize) -> Self {
        let shape = match base {
            Base::Ring { n, k } => Shape::Ring { n, half: k / 2 },
            Base::Lattice { dims } => Shape::Torus(Lattice::new(dims, true, seed, 1, 0)),
        };
        let m = shape.n() * shape.half();
        WattsStrogatz {
            shape,
            rewire_below: (p * (1u64 << 53) as f64).round() as u64,
            rewire_key: stream_key(seed, WS_REWIRE),
            target_key: stream_key(seed, WS_TARGET),
            keep_colours: false,
            local: block_range(m, ranks, rank),
        }
    }

    /// The periodic lattice `dims` with each edge end moved to a vertex of its own colour
    /// with probability p/2 (Leist's thesis, §7.1.1; see the module comment and
    /// `check_keeping_colours`).
    pub fn keeping_colours(dims: Vec<u64>, p: f64, seed: u64, ranks: usize, rank: usize) -> Self {
        let mut ws = WattsStrogatz::new(Base::Lattice { dims }, p / 2.0, seed, ranks, rank);
        ws.keep_colours = true;
        ws
    }

    /// Base edge `e` with each end moved or not (`keeping_colours`): end i (0 the source, 1
    /// the other) is decided by draw 2e + i of the rewiring stream and placed by the same
    /// draw of the target stream, as the `k`-th vertex of its colour: of the pair 2k, 2k + 1
    /// (one row, differing in colour as the fastest side is even), the one of that colour.
    fn colour_kept_edge(&self, torus: &Lattice, e: u64) -> Edge {
        let half = torus.num_vertices() / 2;
        let end = |vertex: u64, i: u64| {
            if !self.rewired(2 * e + i) {
                return vertex;
            }
            let first = 2 * below(draw(self.target_key, 2 * e + i), half);
            first + u64::from(torus.colour(first) != torus.colour(vertex))
        };
        let (u, v) = torus.edge(e);
        (end(u, 0), end(v, 1))
    }

    fn rewired(&self, e: u64) -> bool {
        draw(self.rewire_key, e) >> 11 < self.rewire_below
    }

    fn candidate(&self, e: u64, attempt: u64) -> u64 {
        below(
            draw(self.target_key, e * ATTEMPTS + attempt),
            self.shape.n(),
        )
    }

    /// Edge number `e` of the global list.
    fn edge(&self, e: u64) -> Edge {
        if let (true, Shape::Torus(torus)) = (self.keep_colours, &self.shape) {
            return self.colour_kept_edge(torus, e);
        }
        let (u, v) = self.shape.edge(e);
        if !self.rewired(e) {
            return (u, v);
        }
        (0..ATTEMPTS)
            .map(|attempt| self.candidate(e, attempt))
            .find(|&c| self.acceptable(e, u, c))
            .map_or((u, v), |c| (u, c))
    }

    /// Whether rewired edge `e` with source `u` may take candidate `c`.
    fn acceptable(&self, e: u64, u: u64, c: u64) -> bool {
        c != u
            && !self.shape.adjacent(u, c)
            && !self.earlier_may_pair(e, u, c)
            && !self.earlier_may_pair(e, c, u)
    }

    /// True when a rewired edge e' < e with source `s` has `t` among its candidates.
    fn earlier_may_pair(&self, e: u64, s: u64, t: u64) -> bool {
        let h = self.shape.half();
        (s * h..(s * h + h).min(e)).any(|other| {
            self.rewired(other) && (0..ATTEMPTS).any(|attempt| self.candidate(other, attempt) == t)
        })
    }
}

impl EdgeSource for WattsStrogatz {
    fn num_vertices(&self) -> u64 {
        self.shape.n()
    }
    fn num_edges(&self) -> u64 {
        self.shape.n() * self.shape.half()
    }
    fn local_len(&self) -> u64 {
        self.local.end - self.local.start
    }
    fn local_chunk(&self, start: u64, len: u64, out: &mut Vec<Edge>) {
        fill(out, self.local.start + start, len, |e| self.edge(e));
    }
    /// kernels/generators.cu `ws_edge` (which has no `keeping_colours` rule).
    fn device_edges(&self) -> Option<DeviceEdges> {
        if self.keep_colours {
            return None;
        }
        let mut params = vec![
            self.shape.n(),
            self.shape.half(),
            self.rewire_below,
            self.rewire_key,
            self.target_key,
            ATTEMPTS,
        ];
        match &self.shape {
            Shape::Ring { .. } => params.extend([1, 0, 0, 0, 0, 0]),
            Shape::Torus(t) => params.extend([0].into_iter().chain(t.device_params())),
        }
        Some(DeviceEdges {
            kernel: "ws",
            params,
            first_edge: self.local.start,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{degrees, global_edges};
    use super::*;

    fn edges(base: &Base, p: f64, seed: u64) -> Vec<Edge> {
        global_edges(|ranks, rank| WattsStrogatz::new(base.clone(), p, seed, ranks, rank))
    }

    /// Number of pairs that repeat an earlier one (either orientation).
    fn duplicates(list: &[Edge]) -> usize {
        let mut pairs: Vec<Edge> = list.iter().map(|&(u, v)| (u.min(v), u.max(v))).collect();
        pairs.sort_unstable();
        pairs.windows(2).filter(|w| w[0] == w[1]).count()
    }

    #[test]
    fn without_rewiring_the_base_is_exact() {
        let ring = edges(&Base::Ring { n: 50, k: 6 }, 0.0, 1);
        assert_eq!(ring.len(), 150);
        assert_eq!(&ring[..4], &[(0, 1), (0, 2), (0, 3), (1, 2)]);
        assert_eq!(ring[149], (49, 2));
        assert!(degrees(50, &ring).iter().all(|&d| d == 6));
        assert_eq!(duplicates(&ring), 0);
        let dims = vec![4, 3, 5];
        let torus = edges(&Base::Lattice { dims: dims.clone() }, 0.0, 1);
        let mut plain = Vec::new();
        let lattice = Lattice::new(dims, true, 1, 1, 0);
        lattice.local_chunk(0, lattice.local_len(), &mut plain);
        assert_eq!(torus, plain);
    }

    #[test]
    fn rewired_edges_are_distinct_and_leave_the_neighbourhood() {
        let (n, k) = (2000u64, 10u64);
        for p in [0.3, 1.0] {
            let list = edges(&Base::Ring { n, k }, p, 7);
            assert_eq!(list.len() as u64, n * k / 2);
            assert_eq!(duplicates(&list), 0, "p = {p}");
            assert!(list.iter().all(|&(u, v)| u != v));
            let ws = WattsStrogatz::new(Base::Ring { n, k }, p, 7, 1, 0);
            let moved = list
                .iter()
                .filter(|&&(u, v)| !ws.shape.adjacent(u, v))
                .count();
            // Binomial(10^4, p): within 5 standard deviations (no fallbacks at this size).
            let (want, sd) = (p * 1e4, (1e4 * p * (1.0 - p)).sqrt());
            assert!(
                (moved as f64 - want).abs() <= 5.0 * sd + 0.5,
                "p = {p}: {moved}"
            );
        }
        let torus = edges(
            &Base::Lattice {
                dims: vec![20, 20, 5],
            },
            0.5,
            3,
        );
        assert_eq!(torus.len(), 6000);
        assert_eq!(duplicates(&torus), 0);
    }

    #[test]
    fn small_dense_graphs_stay_simple() {
        for (n, k) in [(12, 8), (7, 6), (30, 10)] {
            let list = edges(&Base::Ring { n, k }, 1.0, 9);
            assert_eq!(list.len() as u64, n * k / 2);
            assert_eq!(duplicates(&list), 0, "n = {n}, k = {k}");
            assert!(list.iter().all(|&(u, v)| u != v));
        }
    }

    /// kernels/generators.cu `ws_edge`'s layout: n, base edges per source, rewiring
    /// threshold and keys, candidates, ring or lattice (then the lattice's own layout).
    #[test]
    fn device_params_follow_the_kernels_layout() {
        let ring = WattsStrogatz::new(Base::Ring { n: 100, k: 6 }, 0.25, 3, 3, 2);
        let d = ring.device_edges().unwrap();
        assert_eq!((d.kernel, d.first_edge), ("ws", 200));
        let keys = [stream_key(3, WS_REWIRE), stream_key(3, WS_TARGET)];
        assert_eq!(d.params[..6], [100, 3, 1 << 51, keys[0], keys[1], ATTEMPTS]);
        assert_eq!(d.params[6..], [1, 0, 0, 0, 0, 0]);
        let dims = vec![5, 4, 3];
        let torus = WattsStrogatz::new(Base::Lattice { dims: dims.clone() }, 0.5, 3, 1, 0);
        let d = torus.device_edges().unwrap();
        assert_eq!(d.params[..3], [60, 3, 1 << 52]);
        let lattice = Lattice::new(dims, true, 3, 1, 0);
        assert_eq!(d.params[6], 0);
        assert_eq!(d.params[7..], lattice.device_params());
    }

    #[test]
    fn keeping_colours_moves_each_end_within_its_colour() {
        let dims = vec![8u64, 6, 4];
        let torus = Lattice::new(dims.clone(), true, 5, 1, 0);
        let mut base = Vec::new();
        torus.local_chunk(0, torus.local_len(), &mut base);
        let kept = |p| {
            global_edges(|ranks, rank| {
                WattsStrogatz::keeping_colours(dims.clone(), p, 5, ranks, rank)
            })
        };
        assert_eq!(kept(0.0), base);
        let (m, p) = (base.len(), 0.4);
        let rewired = kept(p);
        assert_eq!(rewired.len(), m);
        let mut moved = 0;
        for (&(u, v), &(a, b)) in base.iter().zip(&rewired) {
            assert_eq!(torus.colour(a), torus.colour(u));
            assert_eq!(torus.colour(b), torus.colour(v));
            moved += usize::from(a != u) + usize::from(b != v);
        }
        // Binomial(2m, p/2) ends moved (a move to the same vertex, 2/N of them, aside).
        let (want, sd) = (m as f64 * p, (m as f64 * p * (1.0 - p / 2.0)).sqrt());
        assert!((moved as f64 - want).abs() <= 5.0 * sd, "{moved} of {m}");
        assert!(check_keeping_colours(&[4, 6], 0.5).is_ok());
        let odd = check_keeping_colours(&[4, 5], 0.5).unwrap_err();
        assert!(odd.contains("side 5 is odd"), "{odd}");
        assert!(check_keeping_colours(&[4, 4], -0.1)
            .unwrap_err()
            .contains("p = -0.1"));
    }

    #[test]
    fn check_names_the_rule() {
        let ring = |n, k| Base::Ring { n, k };
        assert!(check(&ring(100, 4), 0.5).is_ok());
        let e = check(&ring(100, 5), 0.1).unwrap_err();
        assert!(e.contains("k = 5 must be even"), "{e}");
        assert!(check(&ring(100, 100), 0.1)
            .unwrap_err()
            .contains("less than vertices = 100"));
        assert!(check(&ring(100, 4), 1.5).unwrap_err().contains("p = 1.5"));
        assert!(check(&ring(100, 4), f64::NAN).is_err());
        let torus = |dims: &[u64]| Base::Lattice {
            dims: dims.to_vec(),
        };
        assert!(check(&torus(&[3, 3]), 0.2).is_ok());
        assert!(check(&torus(&[2, 3]), 0.2).is_err());
    }
}
