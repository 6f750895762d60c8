//! Generated meshes: the Kuhn split of a box of nx × ny × nz cubes (6 tetrahedra per cube,
//! conforming across cubes because every cube is split along its main diagonal in the same
//! way), and the seed's four perturbed bars (001 §3.1.2), which move interior nodes only so
//! that all four share the boundary and smooth towards one mesh.

use super::{geometry, Index, Mesh};
use rayon::prelude::*;
use std::ops::Range;

/// The box [0, lx] × [0, ly] × [0, lz] in nx × ny × nz cubes; boundary nodes fixed.
/// Nodes are numbered i + (nx+1) (j + (ny+1) k); every size that fits u32 indices works.
pub fn kuhn_box(n: [usize; 3], extent: [f64; 3]) -> Mesh {
    box_layers(n, extent, 0..n[2] + 1)
}

/// The node layers k ∈ `layers` of `kuhn_box(n, extent)` and the cubes between them: the
/// whole box's nodes numbered from `layers.start * (nx+1)(ny+1)` on (local = global - that),
/// its cells in the same (ascending) order. Each node and cell is a pure function of its
/// index, so a rank makes its own layers without the rest of the box.
pub fn box_layers(n: [usize; 3], extent: [f64; 3], layers: Range<usize>) -> Mesh {
    let [nx, ny, nz] = n;
    let (px, py) = (nx + 1, ny + 1);
    let first = layers.start * px * py;
    let nodes = layers.len() * px * py;
    let coord = |i: usize, m: usize, l: f64| l * i as f64 / m as f64;
    let layer = |v: usize| (first + v) / (px * py);
    let x: Vec<f64> = (0..nodes)
        .into_par_iter()
        .map(|v| coord(v % px, nx, extent[0]))
        .collect();
    let y: Vec<f64> = (0..nodes)
        .into_par_iter()
        .map(|v| coord(v / px % py, ny, extent[1]))
        .collect();
    let z: Vec<f64> = (0..nodes)
        .into_par_iter()
        .map(|v| coord(layer(v), nz, extent[2]))
        .collect();
    let fixed = (0..nodes)
        .into_par_iter()
        .map(|v| {
            let (i, j, k) = (v % px, v / px % py, layer(v));
            i == 0 || j == 0 || k == 0 || i == nx || j == ny || k == nz
        })
        .collect();
    let pattern = kuhn_pattern();
    let cubes = nx * ny * layers.len().saturating_sub(1);
    let cells = (0..cubes)
        .into_par_iter()
        .flat_map_iter(|cube| {
            // Local cube and node numbers: the slab's first layer is local layer 0.
            let (i, j, k) = (cube % nx, cube / nx % ny, cube / (nx * ny));
            let corner = move |b: usize| {
                ((i + (b & 1)) + px * ((j + (b >> 1 & 1)) + py * (k + (b >> 2 & 1)))) as Index
            };
            pattern.into_iter().flatten().map(corner)
        })
        .collect();
    Mesh {
        dim: 3,
        x,
        y,
        z,
        cells,
        fixed,
    }
}

/// The extent of each axis of `kuhn_box(n, extent)` as its nodes span it (the perturbed
/// bars' frame, known without the nodes).
pub fn box_spans(n: [usize; 3], extent: [f64; 3]) -> [(f64, f64); 3] {
    // The largest coordinate is l * n / n, as the generator computes it.
    std::array::from_fn(|d| (0.0, extent[d] * n[d] as f64 / n[d] as f64))
}

/// The 6 tets of the unit cube as corner bit patterns (bit 0: x, 1: y, 2: z): for each order
/// of the axes, the path 0 → e_a → e_a + e_b → 7, positively oriented.
fn kuhn_pattern() -> [[usize; 4]; 6] {
    super::AXIS_ORDERS.map(|[a, b, _]| {
        let mut t = [0, 1 << a, (1 << a) | (1 << b), 7];
        let p = t.map(|bits| {
            [
                (bits & 1) as f64,
                (bits >> 1 & 1) as f64,
                (bits >> 2 & 1) as f64,
            ]
        });
        if geometry::volume(&[p[0], p[1], p[2], p[3]], 4) < 0.0 {
            t.swap(1, 2);
        }
        t
    })
}

/// A map of a generated box's nodes onto another shape (the box's boundary onto the shape's,
/// so the box's fixed nodes are the shape's boundary).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// The unit ball from the box of extent 2 (`ball N`).
    Ball,
    /// The thick ring sector from the unit box (`ring N`).
    Ring,
}

impl Shape {
    /// The box (cubes, extent) that `ball N` or `ring N` maps.
    pub fn cubes_and_extent(self, n: usize) -> ([usize; 3], [f64; 3]) {
        match self {
            Shape::Ball => ([n; 3], [2.0; 3]),
            Shape::Ring => ([n, RING_AROUND.saturating_mul(n), n], [1.0; 3]),
        }
    }

    /// Move the nodes of (layers of) the box onto the shape.
    pub fn map(self, mesh: &mut Mesh) {
        let place: fn([f64; 3]) -> [f64; 3] = match self {
            Shape::Ball => ball_point,
            Shape::Ring => ring_point,
        };
        let (x, y, z) = (&mut mesh.x, &mut mesh.y, &mut mesh.z);
        x.par_iter_mut()
            .zip(y.par_iter_mut())
            .zip(z.par_iter_mut())
            .for_each(|((x, y), z)| [*x, *y, *z] = place([*x, *y, *z]));
    }
}

/// The unit ball from a Kuhn box of n cubes a side on [-1, 1]^3, every node moved along its
/// ray from the centre by |p|_inf / |p|_2 (the cube's surface onto the sphere, each cube
/// shell onto a sphere); boundary nodes (on the sphere) fixed. A sphere-like mesh for the
/// partitioner, graded towards the cube's corner directions; every cell stays positive
/// (checked in the tests for small and larger n).
fn ball_point([x, y, z]: [f64; 3]) -> [f64; 3] {
    let p = [x - 1.0, y - 1.0, z - 1.0];
    let inf = p.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let two = geometry::dot(&p, &p).sqrt();
    let s = if two > 0.0 { inf / two } else { 0.0 };
    p.map(|v| s * v)
}

/// The ring's sweep: 330 degrees, so its two end faces stand 30 degrees apart (0.26 to 0.52
/// across the gap), a non-convex domain whose ends are close in space and far in the mesh.
const RING_SWEEP: f64 = 330.0 * std::f64::consts::PI / 180.0;
/// Cubes around the ring per cube across it: about as long as they are wide at mid-radius.
const RING_AROUND: usize = 8;

/// The thick ring sector from the unit box: x across the ring (radius 0.5 to 1), y around
/// it (angle 0 to `RING_SWEEP`), z along its axis (height 0.5). The map keeps orientation
/// (its Jacobian is 0.5 r · sweep · 0.5 > 0), so every cell stays positive (checked in the
/// tests); cells are twice as long around the outside as around the inside.
fn ring_point([x, y, z]: [f64; 3]) -> [f64; 3] {
    let (r, angle) = (0.5 + 0.5 * x, RING_SWEEP * y);
    [r * angle.cos(), r * angle.sin(), 0.5 * z]
}

/// The seed's perturbed bars. With u, v ∈ [-1, 1] across the bar and w ∈ [-1, 1] along it:
/// bar1 pulls nodes towards the axis in y and pushes them away in x; bar2 pulls in x and y;
/// bar3 is bar2 with a moderate push away from the centre along the bar, bar4 a strong one.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Perturbation {
    Bar1,
    Bar2,
    Bar3,
    Bar4,
}

/// Move the interior (non-fixed) nodes of a box mesh as `kind` says; boundary nodes stay.
pub fn perturb(mesh: &mut Mesh, kind: Perturbation) {
    let lo = |a: &[f64]| a.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = |a: &[f64]| a.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = |a: &[f64]| (lo(a), hi(a));
    let axes = [span(&mesh.x), span(&mesh.y), span(&mesh.z)];
    perturb_in(mesh, kind, axes);
}

/// `perturb` in the frame `axes` (each axis's low and high end): the whole box's, also for
/// a rank's layers of it (`box_spans`).
pub fn perturb_in(mesh: &mut Mesh, kind: Perturbation, axes: [(f64, f64); 3]) {
    let pull = |t: f64| t * t.abs();
    let push = |t: f64, e: f64| t.signum() * t.abs().powf(e);
    let map = |p: [f64; 3]| -> [f64; 3] {
        let [u, v, w] = p;
        match kind {
            Perturbation::Bar1 => [push(u, 0.5), pull(v), w],
            Perturbation::Bar2 => [pull(u), pull(v), w],
            Perturbation::Bar3 => [pull(u), pull(v), push(w, 0.6)],
            Perturbation::Bar4 => [pull(u), pull(v), push(w, 0.3)],
        }
    };
    let (x, y, z) = (&mut mesh.x, &mut mesh.y, &mut mesh.z);
    x.par_iter_mut()
        .zip(y.par_iter_mut())
        .zip(z.par_iter_mut())
        .zip(mesh.fixed.par_iter())
        .filter(|(_, &fixed)| !fixed)
        .for_each(|(((x, y), z), _)| {
            let p = [*x, *y, *z];
            let unit: [f64; 3] =
                std::array::from_fn(|d| 2.0 * (p[d] - axes[d].0) / (axes[d].1 - axes[d].0) - 1.0);
            let q = map(unit);
            let back: [f64; 3] =
                std::array::from_fn(|d| axes[d].0 + 0.5 * (q[d] + 1.0) * (axes[d].1 - axes[d].0));
            (*x, *y, *z) = (back[0], back[1], back[2]);
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kuhn_box_fills_the_box_with_positive_tets() {
        let m = kuhn_box([3, 2, 4], [1.5, 1.0, 2.0]);
        assert_eq!(m.num_nodes(), 4 * 3 * 5);
        assert_eq!(m.num_cells(), 6 * 24);
        let mut total = 0.0;
        for c in 0..m.num_cells() {
            let v = geometry::volume(&m.cell_points(c), 4);
            assert!(v > 0.0);
            total += v;
        }
        assert!((total - 3.0).abs() < 1e-12);
        // Conforming: every interior face is shared by two cells, so the tagless boundary
        // is exactly the box's surface.
        let on = super::super::boundary::boundary_nodes(&m);
        assert_eq!(on, m.fixed);
    }

    #[test]
    fn layers_are_the_whole_box_cut_out() {
        let (n, extent) = ([3, 4, 5], [1.0, 1.0, 3.0]);
        let mut whole = kuhn_box(n, extent);
        perturb(&mut whole, Perturbation::Bar4);
        let layer = 4 * 5;
        for layers in [0..6, 0..2, 2..5, 4..6, 3..4] {
            let mut part = box_layers(n, extent, layers.clone());
            perturb_in(&mut part, Perturbation::Bar4, box_spans(n, extent));
            let nodes = layers.start * layer..layers.end * layer;
            let bits = |a: &[f64]| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&part.x), bits(&whole.x[nodes.clone()]));
            assert_eq!(bits(&part.y), bits(&whole.y[nodes.clone()]));
            assert_eq!(bits(&part.z), bits(&whole.z[nodes.clone()]));
            assert_eq!(part.fixed, whole.fixed[nodes.clone()]);
            // Cells of cubes in layers [start, end - 1), renumbered from the first node.
            let cells = 6 * 3 * 4 * layers.start..6 * 3 * 4 * (layers.end - 1);
            let shifted: Vec<Index> = whole.cells[4 * cells.start..4 * cells.end]
                .iter()
                .map(|&v| v - nodes.start as Index)
                .collect();
            assert_eq!(part.cells, shifted, "layers {layers:?}");
        }
    }

    fn shape(shape: Shape, n: usize) -> Mesh {
        let (cubes, extent) = shape.cubes_and_extent(n);
        let mut mesh = kuhn_box(cubes, extent);
        shape.map(&mut mesh);
        mesh
    }

    fn volume(m: &Mesh, what: &str) -> f64 {
        (0..m.num_cells())
            .map(|c| geometry::volume(&m.cell_points(c), 4))
            .inspect(|&v| assert!(v > 0.0, "{what}"))
            .sum()
    }

    #[test]
    fn the_ball_has_positive_cells_inside_the_unit_sphere() {
        for n in [2, 7, 24] {
            let m = shape(Shape::Ball, n);
            let volume = volume(&m, &format!("ball {n}"));
            for i in 0..m.num_nodes() {
                let r = geometry::dot(&m.point(i), &m.point(i)).sqrt();
                assert!(r <= 1.0 + 1e-12);
                assert_eq!(m.fixed[i], (r - 1.0).abs() < 1e-12, "node {i}");
            }
            // An inscribed polyhedron: below the ball's volume, close to it when fine.
            let ball = 4.0 / 3.0 * std::f64::consts::PI;
            assert!(
                volume < ball && volume > ball * (1.0 - 2.0 / n as f64),
                "n = {n}: {volume}"
            );
        }
    }

    /// The ring: positive cells, nodes within its radii and height, the boundary fixed (the
    /// radii, the top and bottom and the two end faces), and a volume below the sector's
    /// (an inscribed polyhedron) and close to it when fine.
    #[test]
    fn the_ring_has_positive_cells_inside_its_sector() {
        for n in [1, 3, 10] {
            let m = shape(Shape::Ring, n);
            let volume = volume(&m, &format!("ring {n}"));
            let end_sine = RING_SWEEP.sin();
            for i in 0..m.num_nodes() {
                let [x, y, z] = m.point(i);
                let r = x.hypot(y);
                assert!(
                    (0.5 - 1e-12..=1.0 + 1e-12).contains(&r) && (-1e-12..=0.5 + 1e-12).contains(&z)
                );
                let on_end = x > 0.0 && (y.abs() < 1e-12 || (y / r - end_sine).abs() < 1e-12);
                let outside = (r - 0.5).abs() < 1e-12 || (r - 1.0).abs() < 1e-12;
                let capped = z.abs() < 1e-12 || (z - 0.5).abs() < 1e-12;
                assert_eq!(
                    m.fixed[i],
                    on_end || outside || capped,
                    "ring {n}, node {i}"
                );
            }
            let sector = RING_SWEEP / 2.0 * (1.0 - 0.25) * 0.5;
            assert!(
                volume < sector && volume > sector * (1.0 - 0.5 / (n * n) as f64),
                "ring {n}: {volume} against {sector}"
            );
        }
    }

    #[test]
    fn perturbed_bars_stay_valid() {
        for kind in [
            Perturbation::Bar1,
            Perturbation::Bar2,
            Perturbation::Bar3,
            Perturbation::Bar4,
        ] {
            let mut m = kuhn_box([4, 4, 40], [1.0, 1.0, 10.0]);
            perturb(&mut m, kind);
            for c in 0..m.num_cells() {
                assert!(
                    geometry::volume(&m.cell_points(c), 4) > 0.0,
                    "{kind:?} cell {c}"
                );
            }
        }
    }
}
