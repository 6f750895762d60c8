//! The smoothers against independent truths: the rules every step keeps (fixed nodes
//! bitwise unchanged, no inverted cell, the minimum η never falls, F never rises for l2v),
//! plain laplace against the discrete harmonic positions from a conjugate-gradient solve
//! written here, and the seed's four bars smoothing to one mesh.

use super::*;
use crate::mesh::adjacency;
use crate::mesh::colour::jones_plassmann;
use crate::mesh::generate::{kuhn_box, perturb, Perturbation};
use crate::mesh::patch::{Alone, Patch};
use crate::mesh::Mesh;

fn settings(method: Method) -> Settings {
    Settings {
        method,
        iterations: 30,
        preconditioner: Preconditioner::Scalar,
        smart: false,
        tolerance: 0.0,
        colours: Vec::new(),
    }
}

/// A box with its interior nodes moved by a deterministic pseudo-random amount (< h/4).
fn jittered_box(n: usize) -> Mesh {
    let mut m = kuhn_box([n, n, n], [1.0; 3]);
    let h = 1.0 / n as f64;
    for i in 0..m.num_nodes() {
        if !m.fixed[i] {
            let r = |k: u64| {
                (crate::rng::draw(7, 3 * i as u64 + k) >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            };
            m.x[i] += 0.45 * h * r(0);
            m.y[i] += 0.45 * h * r(1);
            m.z[i] += 0.45 * h * r(2);
        }
    }
    m
}

fn check_rules(method: Method, pre: Preconditioner, smart: bool) {
    let mesh = jittered_box(5);
    let mut s = settings(method);
    s.preconditioner = pre;
    s.smart = smart;
    if method == Method::OptColour {
        let n2c = adjacency::node_to_cell(&mesh.cells, mesh.num_nodes());
        let graph = adjacency::node_graph(&mesh, &n2c);
        let free: Vec<bool> = mesh.fixed.iter().map(|f| !f).collect();
        s.colours = jones_plassmann(&graph, &free, 1);
    }
    let mut patch = Patch::whole(mesh.clone());
    let before = global_summary(&patch, &Alone);
    let records = smooth(&mut patch, &Alone, &s, |_, _| {});
    let m = &patch.mesh;
    for i in (0..m.num_nodes()).filter(|&i| mesh.fixed[i]) {
        assert_eq!(
            m.point(i).map(f64::to_bits),
            mesh.point(i).map(f64::to_bits),
            "fixed node {i} moved"
        );
    }
    let mut min = before.min_eta;
    let mut f = before.deformation.value();
    for r in &records {
        assert_eq!(r.inverted, 0, "{method:?}");
        assert!(
            r.min_eta >= min,
            "{method:?}: min eta fell {min} -> {}",
            r.min_eta
        );
        if method == Method::L2v {
            assert!(
                r.deformation <= f,
                "{method:?}: F rose {f} -> {}",
                r.deformation
            );
        }
        (min, f) = (r.min_eta, r.deformation);
    }
    assert!(
        records.last().unwrap().mean_eta > before.mean_eta(),
        "{method:?} did not improve"
    );
}

#[test]
fn every_smoother_keeps_the_rules() {
    check_rules(Method::L2v, Preconditioner::Scalar, false);
    check_rules(Method::L2v, Preconditioner::Block, false);
    check_rules(Method::Laplace, Preconditioner::Scalar, true);
    check_rules(Method::OptColour, Preconditioner::Scalar, false);
}

/// Colour classes are independent sets and cover every free node.
#[test]
fn colouring_is_proper() {
    let mesh = jittered_box(4);
    let n2c = adjacency::node_to_cell(&mesh.cells, mesh.num_nodes());
    let graph = adjacency::node_graph(&mesh, &n2c);
    let free: Vec<bool> = mesh.fixed.iter().map(|f| !f).collect();
    let colour = jones_plassmann(&graph, &free, 3);
    for i in 0..mesh.num_nodes() {
        assert_eq!(colour[i] != u32::MAX, free[i]);
        for &j in graph.row(i) {
            assert!(!free[i] || colour[i] != colour[j as usize]);
        }
    }
}

/// Plain laplace with the boundary fixed converges to the discrete harmonic positions: the
/// solution of L_II x_I = -L_IB x_B (graph Laplacian), here by conjugate gradients.
#[test]
fn plain_laplace_converges_to_the_harmonic_solution() {
    let mesh = jittered_box(5);
    let mut s = settings(Method::Laplace);
    s.iterations = 3000;
    let mut patch = Patch::whole(mesh.clone());
    smooth(&mut patch, &Alone, &s, |_, _| {});
    let graph = patch.graph.clone();
    let interior: Vec<usize> = (0..mesh.num_nodes()).filter(|&i| !mesh.fixed[i]).collect();
    let mut slot = vec![usize::MAX; mesh.num_nodes()];
    for (k, &i) in interior.iter().enumerate() {
        slot[i] = k;
    }
    for axis in [&mesh.x, &mesh.y, &mesh.z] {
        // b = sum of fixed neighbours' coordinates; A = degree I - interior adjacency.
        let b: Vec<f64> = interior
            .iter()
            .map(|&i| {
                graph
                    .row(i)
                    .iter()
                    .filter(|&&j| mesh.fixed[j as usize])
                    .map(|&j| axis[j as usize])
                    .sum()
            })
            .collect();
        let apply = |x: &[f64]| -> Vec<f64> {
            interior
                .iter()
                .map(|&i| {
                    let row = graph.row(i);
                    let off: f64 = row
                        .iter()
                        .filter(|&&j| !mesh.fixed[j as usize])
                        .map(|&j| x[slot[j as usize]])
                        .sum();
                    row.len() as f64 * x[slot[i]] - off
                })
                .collect()
        };
        let exact = conjugate_gradients(apply, &b);
        let smoothed = [&patch.mesh.x, &patch.mesh.y, &patch.mesh.z][[&mesh.x, &mesh.y, &mesh.z]
            .iter()
            .position(|a| std::ptr::eq(*a, axis))
            .unwrap()];
        for (k, &i) in interior.iter().enumerate() {
            assert!(
                (smoothed[i] - exact[k]).abs() < 1e-8,
                "node {i}: {} vs {}",
                smoothed[i],
                exact[k]
            );
        }
    }
}

fn conjugate_gradients(apply: impl Fn(&[f64]) -> Vec<f64>, b: &[f64]) -> Vec<f64> {
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let mut x = vec![0.0; b.len()];
    let mut r = b.to_vec();
    let mut p = r.clone();
    let mut rr = dot(&r, &r);
    for _ in 0..10 * b.len() {
        if rr.sqrt() < 1e-14 {
            break;
        }
        let ap = apply(&p);
        let alpha = rr / dot(&p, &ap);
        for k in 0..x.len() {
            x[k] += alpha * p[k];
            r[k] -= alpha * ap[k];
        }
        let next = dot(&r, &r);
        for k in 0..p.len() {
            p[k] = r[k] + next / rr * p[k];
        }
        rr = next;
    }
    x
}

/// The seed's four perturbed bars (`cubes` a side across, 10 x along) smoothed by l2v with the
/// block preconditioner: every node within 1% of the mean edge length of the first bar's.
fn bars_smooth_to_one_mesh(cubes: usize, iterations: usize) {
    let mut s = settings(Method::L2v);
    s.preconditioner = Preconditioner::Block;
    s.iterations = iterations;
    let results: Vec<Mesh> = [
        Perturbation::Bar1,
        Perturbation::Bar2,
        Perturbation::Bar3,
        Perturbation::Bar4,
    ]
    .into_iter()
    .map(|kind| {
        let mut m = kuhn_box([cubes, cubes, 10 * cubes], [1.0, 1.0, 10.0]);
        perturb(&mut m, kind);
        let mut patch = Patch::whole(m);
        smooth(&mut patch, &Alone, &s, |_, _| {});
        patch.mesh
    })
    .collect();
    let h = results[0].mean_edge_length();
    for m in &results[1..] {
        for i in 0..m.num_nodes() {
            let d = crate::mesh::geometry::dist(&m.point(i), &results[0].point(i));
            assert!(d < 0.01 * h, "node {i} differs by {d} (h = {h})");
        }
    }
}

#[test]
fn the_four_bars_smooth_to_one_mesh() {
    bars_smooth_to_one_mesh(3, 200);
}

/// The GPU's opt-colour launch lists (one per colour class) against a plain sort: every
/// active coloured node once, by (colour, id), and no two nodes of a class sharing a cell
/// (the kernel moves a class in place).
#[test]
fn colour_class_lists_hold_each_class_in_order() {
    let mesh = jittered_box(4);
    let patch = Patch::whole(mesh.clone());
    let free: Vec<bool> = mesh.fixed.iter().map(|f| !f).collect();
    let colours = jones_plassmann(&patch.graph, &free, 3);
    let (nodes, start) = gpu::colour_classes(&patch, &colours);
    let mut expected: Vec<u32> = (0..colours.len() as u32)
        .filter(|&i| patch.active(i as usize) && colours[i as usize] != u32::MAX)
        .collect();
    expected.sort_by_key(|&i| (colours[i as usize], i));
    assert_eq!(nodes, expected);
    assert_eq!(
        start.len() as u32,
        colours.iter().filter(|&&c| c != u32::MAX).max().unwrap() + 2
    );
    for c in 0..start.len() - 1 {
        let class = &nodes[start[c] as usize..start[c + 1] as usize];
        assert!(class.iter().all(|&i| colours[i as usize] == c as u32));
        for cell in mesh.cells.chunks(4) {
            let inside = cell
                .iter()
                .filter(|&&i| class.binary_search(&i).is_ok())
                .count();
            assert!(inside <= 1, "class {c}: two nodes share a cell");
        }
    }
}
