use super::super::ranks::threads::on_ranks;
use super::super::{adjacency, generate};
use super::*;

/// The block-wise search against trying every seed at every point: scattered points,
/// clustered ones (small blocks, most seeds pruned), seeds on points and equal weights
/// (ties go to the smaller part in both).
/// Per part: its node count and coordinate sums, point by point (nearest_all's reference).
fn part_sums(points: &[[f64; 3]], labels: &[u32], k: usize) -> Vec<i64> {
    points
        .par_iter()
        .zip(labels)
        .fold(
            || vec![0i64; 4 * k],
            |mut sums, (p, &j)| {
                add_point(&mut sums, p, j);
                sums
            },
        )
        .reduce(|| vec![0i64; 4 * k], add_sums)
}

#[test]
fn pruned_nearest_seed_is_the_full_search() {
    let r = |i: u64| (crate::rng::draw(11, i) >> 11) as f64 / (1u64 << 53) as f64;
    let scattered: Vec<[f64; 3]> = (0..3000)
        .map(|i| [r(3 * i), r(3 * i + 1), r(3 * i + 2)])
        .collect();
    let mut sorted = scattered.clone();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    for (k, points) in [(7, &scattered), (64, &sorted), (33, &sorted)] {
        let mut seeds: Vec<[f64; 3]> = (0..k as u64)
            .map(|j| [r(9000 + 3 * j), r(9001 + 3 * j), r(9002 + 3 * j)])
            .collect();
        seeds[0] = points[5];
        for equal in [false, true] {
            let weights: Vec<f64> = (0..k as u64)
                .map(|j| if equal { 1.0 } else { 0.5 + r(20000 + j) })
                .collect();
            let full: Vec<u32> = points
                .iter()
                .map(|p| nearest(p, &seeds, &weights))
                .collect();
            let (labels, sums) = nearest_all(points, &seeds, &weights);
            assert_eq!(labels, full, "k = {k}");
            assert_eq!(sums, part_sums(points, &full, k), "k = {k}");
        }
    }
}

#[test]
fn every_node_in_one_part_within_the_bound() {
    let mesh = generate::kuhn_box([12, 9, 7], [1.0, 1.0, 1.0]);
    let n2c = adjacency::node_to_cell(&mesh.cells, mesh.num_nodes());
    let graph = adjacency::node_graph(&mesh, &n2c);
    for k in [2, 5, 8] {
        let (mut parts, _) = geometric(&mesh, &graph, k, &Serial);
        let limit = bound(mesh.num_nodes(), k);
        let before = measure(&graph, &parts, k);
        refine(&graph, &mut parts, k, limit, 4);
        let after = measure(&graph, &parts, k);
        for m in [&before, &after] {
            assert_eq!(parts.len(), mesh.num_nodes());
            assert!(parts.iter().all(|&p| (p as usize) < k));
            assert_eq!(m.sizes.iter().sum::<u64>(), mesh.num_nodes() as u64);
            assert!(
                m.imbalance <= 1.02 + 1e-12,
                "k={k} imbalance {}",
                m.imbalance
            );
        }
        assert!(after.edge_cut <= before.edge_cut);
    }
}

/// The distributed Hilbert split against one sort of all (key, id) pairs: run j holds the
/// positions ⌊jN/k⌋ .. ⌊(j+1)N/k⌋ of the sorted list, at np = 1..4, with many equal keys
/// (points on a coarse grid) and runs shorter than a key's nodes.
#[test]
fn hilbert_runs_are_those_of_one_sort_at_every_rank_count() {
    let n = 997;
    let r = |i: u64| (crate::rng::draw(5, i) % 6) as f64 / 5.0;
    let points: Vec<[f64; 3]> = (0..n as u64)
        .map(|i| [r(3 * i), r(3 * i + 1), r(3 * i + 2)])
        .collect();
    let curve = super::curve::Curve::new([1.0; 3]);
    let key = |p: [f64; 3]| curve.key(p);
    for k in [1, 7, 64, 500] {
        let mut sorted: Vec<(u64, usize)> = (0..n).map(|i| (key(points[i]), i)).collect();
        sorted.sort_unstable();
        let mut truth = vec![0usize; n];
        for j in 0..k {
            for &(_, i) in &sorted[j * n / k..(j + 1) * n / k] {
                truth[i] = j;
            }
        }
        for np in 1..=4 {
            let runs = on_ranks(np, |ranks| {
                let mine = ranks.range(n);
                let keyed: Vec<(u64, u32)> = mine
                    .clone()
                    .map(|i| (key(points[i]), (i - mine.start) as u32))
                    .collect();
                let mut order = split::Grouped::new(keyed);
                let cuts = split::run_cuts(&mut order, n, k, ranks);
                let mut run = vec![0usize; mine.len()];
                for j in 0..k {
                    for &(_, i) in &order.pairs[cuts[j]..cuts[j + 1]] {
                        run[i as usize] = j;
                    }
                }
                run
            });
            assert_eq!(runs.concat(), truth, "k {k}, np {np}");
        }
    }
}

/// The whole partitioner at np = 1..4 (threads as ranks) gives the single rank's parts.
#[test]
fn geometric_parts_same_at_every_rank_count() {
    let mesh = generate::kuhn_box([12, 9, 7], [1.0, 1.0, 3.0]);
    let n2c = adjacency::node_to_cell(&mesh.cells, mesh.num_nodes());
    let graph = adjacency::node_graph(&mesh, &n2c);
    for k in [3, 8] {
        let (one, _) = geometric(&mesh, &graph, k, &Serial);
        for np in 1..=4 {
            for (rank, (parts, _)) in on_ranks(np, |ranks| geometric(&mesh, &graph, k, ranks))
                .into_iter()
                .enumerate()
            {
                assert_eq!(parts, one, "k {k}, np {np}, rank {rank}");
            }
        }
    }
}

/// The greedy pass on slabs too large for the bound (x slabs of 38%, 24% and 38%: both
/// outer parts push into the middle one, which has room for both; 60% / 40%; and 40%, 36%,
/// 24%, where the first part's one neighbour is full itself and passes the excess on):
/// every part within the bound after it, each node in one part, the same parts at np = 1..4.
#[test]
fn greedy_balance_fits_and_is_the_same_at_every_rank_count() {
    let mesh = generate::kuhn_box([24, 5, 4], [1.0, 1.0, 1.0]);
    let n2c = adjacency::node_to_cell(&mesh.cells, mesh.num_nodes());
    let graph = adjacency::node_graph(&mesh, &n2c);
    let n = mesh.num_nodes();
    for (k, ends) in [
        (3, vec![0.37, 0.62]),
        (2, vec![0.59]),
        (3, vec![0.39, 0.76]),
    ] {
        let slab = |i: usize| ends.iter().filter(|&&e| mesh.x[i] > e).count() as u32;
        let limit = bound(n, k);
        let balanced = |ranks: &dyn Ranks| {
            let share = Share::of_mesh(&mesh, &graph, ranks.range(n));
            let mut labels: Vec<u32> = (share.first..share.first + share.len()).map(slab).collect();
            balance::greedy(&share, &mut labels, k, limit, ranks);
            ranks.gather(&labels)
        };
        let start = sizes(&(0..n).map(slab).collect::<Vec<_>>(), k);
        assert!(
            start.iter().any(|&s| s > limit),
            "k {k}: {start:?} fit already"
        );
        let one = balanced(&Serial);
        let size = sizes(&one, k);
        assert!(
            size.iter().all(|&s| s <= limit),
            "k {k}: {size:?} above {limit}"
        );
        assert_eq!(size.iter().sum::<usize>(), n);
        for np in 1..=4 {
            for parts in on_ranks(np, balanced) {
                assert_eq!(parts, one, "k {k}, np {np}");
            }
        }
    }
}

/// Grouping (Hilbert key, index) pairs keeps every pair, orders the groups by key and keeps
/// index order inside a group; `below` after `sort_inside` counts as a plain sort does, at
/// group edges and inside: keys spread over the whole range, crowded in one group, and equal.
#[test]
fn grouped_keys_count_as_the_plain_sort() {
    let draw = |i: u64| crate::rng::draw(11, i);
    for keys in [
        (0..300_000u64).map(|i| draw(i) >> 1).collect::<Vec<u64>>(),
        (0..100_000u64)
            .map(|i| (5 << 51) | (draw(i) >> 20))
            .collect(),
        (0..70_000u64).map(|i| draw(i) % 3).collect(),
    ] {
        let keyed: Vec<(u64, u32)> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| (k, i as u32))
            .collect();
        let mut plain = keyed.clone();
        plain.sort_unstable();
        let mut grouped = super::split::Grouped::new(keyed);
        let mut listed = grouped.pairs.clone();
        listed.sort_unstable();
        assert_eq!(listed, plain);
        let group = |key: u64| key >> 51;
        for w in grouped.pairs.windows(2) {
            let (a, b) = (w[0], w[1]);
            assert!(group(a.0) < group(b.0) || (group(a.0) == group(b.0) && a.1 < b.1));
        }
        let probes: Vec<u64> = (0..200u64)
            .map(|i| draw(1_000_000 + i) >> 1)
            .chain([0, 1, 2, 3, 5 << 51, (5 << 51) + 1, 6 << 51, 1 << 63])
            .chain(keys.iter().take(50).copied())
            .collect();
        grouped.sort_inside(&probes);
        for key in probes {
            let truth = plain.partition_point(|&(h, _)| h < key);
            assert_eq!(grouped.below(key), truth, "key {key:#x}");
        }
    }
}

/// The measures of a partition counted by hand: a ring of 6 nodes, parts [0, 0, 1, 1, 0, 2]
/// (part 0 in two pieces, {0, 1} and {4}).
#[test]
fn measures_of_a_ring_counted_by_hand() {
    let rows = [[1, 5], [0, 2], [1, 3], [2, 4], [3, 5], [0, 4]];
    let graph = Csr {
        offsets: (0..=6).map(|i| 2 * i).collect(),
        items: rows.concat(),
    };
    let m = measure(&graph, &[0, 0, 1, 1, 0, 2], 3);
    assert_eq!(m.sizes, vec![3, 2, 1]);
    // Cut edges: 1-2, 3-4, 4-5, 5-0.
    assert_eq!(m.edge_cut, 4);
    // Other parts next to each node: 0 {2}, 1 {1}, 2 {0}, 3 {0}, 4 {1, 2}, 5 {0}.
    assert_eq!(m.communication_volume, 7);
    // Nodes of other parts next to part 0: 2, 3, 5; part 1: 1, 4; part 2: 0, 4.
    assert_eq!(m.halo, vec![3, 2, 2]);
    assert_eq!(m.disconnected_parts, 1);
    assert_eq!(m.imbalance, 1.5);
}
