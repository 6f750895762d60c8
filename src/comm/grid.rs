//! The 2D process grid of an R×C partition: rank r is process (i, j) = (r / C, r % C), with a
//! communicator for its process row (the C ranks of row i, ordered by j) and one for its
//! process column (the R ranks of column j, ordered by i).

use super::Comm;

pub struct Grid {
    pub rows: usize,
    pub cols: usize,
    /// This rank's process row i and column j.
    pub i: usize,
    pub j: usize,
    /// The ranks of row i; this rank is `row.rank() == j` in it.
    pub row: Comm,
    /// The ranks of column j; this rank is `col.rank() == i` in it.
    pub col: Comm,
}

impl Grid {
    /// Split `world` into rows and columns of a `rows` × `cols` grid (collective; the caller
    /// has checked rows · cols = world.size()).
    pub fn new(world: &Comm, rows: usize, cols: usize) -> Grid {
        debug_assert_eq!(rows * cols, world.size());
        let (i, j) = (world.rank() / cols, world.rank() % cols);
        let row = world.split(i, j);
        let col = world.split(j, i);
        Grid {
            rows,
            cols,
            i,
            j,
            row,
            col,
        }
    }

    /// The most square grid of `ranks` processes, R ≤ C: R is the largest divisor of
    /// `ranks` not above its square root (a prime count gives 1 × ranks).
    pub fn most_square(ranks: usize) -> (usize, usize) {
        let rows = (1..=ranks)
            .take_while(|r| r * r <= ranks)
            .filter(|&r| ranks.is_multiple_of(r))
            .last()
            .unwrap_or(1);
        (rows, ranks / rows)
    }
}

#[cfg(test)]
mod tests {
    use super::Grid;

    #[test]
    fn most_square_grid_is_the_divisor_pair_closest_to_a_square() {
        let expected = [
            (1, (1, 1)),
            (2, (1, 2)),
            (3, (1, 3)),
            (4, (2, 2)),
            (6, (2, 3)),
            (8, (2, 4)),
            (12, (3, 4)),
            (16, (4, 4)),
            (64, (8, 8)),
            (1024, (32, 32)),
            (8192, (64, 128)),
            (7, (1, 7)),
        ];
        for (ranks, grid) in expected {
            assert_eq!(Grid::most_square(ranks), grid, "{ranks} ranks");
        }
    }
}
