//! The communication model of a BFS level: the bytes all ranks together send to other ranks,
//! in the 1D partition and in the 2D one, from what the level did (direction, frontier
//! vertices n_f and edges m_f, vertices found n_next). Sent and received totals are equal;
//! a rank's share is about total / P.
//!
//! Bitmap phases are exact: 1D bottom-up allgathers every rank's bitmap (N/P bits rounded up
//! to 64) to the P - 1 others, P (P - 1) · 8 · words; 2D bottom-up allgathers them along the
//! column only, (R - 1) · P · 8 · words, and passes each rank's segment C times round its row,
//! C · P · 8 · words. Queue phases are bounded: a top-down level sends at most one 16-byte
//! (vertex, parent) pair per frontier edge (1D: 16 m_f; 2D fold: the same, only when C > 1),
//! plus in 2D the expand of the frontier ids along the column, 8 n_f (R - 1), exact; the 2D
//! bottom-up fold sends at most one pair per vertex found, 16 n_next.
//!
//! So at P ranks with N/P vertices each, a 1D bottom-up level moves N/8 bytes into every rank
//! (growing with P), a 2D one about (R + C) · N/(8P), growing with √P.

use super::search::Direction;
use crate::graph::Block1D;

/// What a level did, as the model reads it (global counts).
#[derive(Clone, Copy, Debug)]
pub struct LevelLoad {
    pub direction: Direction,
    pub frontier_vertices: u64,
    pub frontier_edges: u64,
    /// Vertices the level found (the next level's frontier).
    pub found: u64,
}

/// Words of one rank's frontier bitmap for N vertices over `ranks` ranks.
fn words(n: u64, ranks: usize) -> u64 {
    Block1D::new(n, ranks, 0).words_per_rank() as u64
}

/// Bytes all ranks send in one 1D level over `ranks` ranks (bottom-up exact, top-down a bound).
pub fn bytes_1d(n: u64, ranks: usize, l: &LevelLoad) -> u64 {
    let p = ranks as u64;
    if p == 1 {
        return 0;
    }
    match l.direction {
        Direction::TopDown => 16 * l.frontier_edges,
        Direction::BottomUp => p * (p - 1) * 8 * words(n, ranks),
    }
}

/// Bytes all ranks send in one 2D level on a `rows` × `cols` grid (bitmaps and the expand
/// exact, folds a bound).
pub fn bytes_2d(n: u64, rows: usize, cols: usize, l: &LevelLoad) -> u64 {
    let (r, c) = (rows as u64, cols as u64);
    let p = r * c;
    let w = words(n, rows * cols);
    let folds = c > 1;
    match l.direction {
        Direction::TopDown => {
            8 * l.frontier_vertices * (r - 1) + u64::from(folds) * 16 * l.frontier_edges
        }
        Direction::BottomUp => {
            8 * w * (r - 1) * p + u64::from(folds) * (c * p * 8 * w + 16 * l.found)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(direction: Direction) -> LevelLoad {
        LevelLoad {
            direction,
            frontier_vertices: 1000,
            frontier_edges: 50_000,
            found: 20_000,
        }
    }

    #[test]
    fn one_rank_and_one_by_one_send_nothing() {
        for d in [Direction::TopDown, Direction::BottomUp] {
            assert_eq!(bytes_1d(1 << 20, 1, &level(d)), 0);
            assert_eq!(bytes_2d(1 << 20, 1, 1, &level(d)), 0);
        }
    }

    /// Weak scaling (N/P fixed): a 1D bottom-up level's bytes per rank grow like P, a 2D
    /// one's like R + C.
    #[test]
    fn bottom_up_bytes_per_rank_grow_like_p_in_1d_and_sqrt_p_in_2d() {
        let per_rank = 1u64 << 20;
        let l = level(Direction::BottomUp);
        let at = |p: usize, r: usize| {
            let n = per_rank * p as u64;
            (
                bytes_1d(n, p, &l) / p as u64,
                bytes_2d(n, r, p / r, &l) / p as u64,
            )
        };
        let (one_64, two_64) = at(64, 8);
        let (one_4096, two_4096) = at(4096, 64);
        assert_eq!(one_4096 / one_64, 4095 / 63, "1D grows with P - 1");
        let ratio = two_4096 as f64 / two_64 as f64;
        assert!((7.0..9.5).contains(&ratio), "2D grows with R + C: {ratio}");
    }
}
