//! The distributed Graph500 validator against the real BFS and against parent arrays broken
//! one rule at a time, at 1 to 4 ranks.
//!
//! This test has no libtest harness: run by `cargo test`, it starts itself under
//! `mpirun -np N` for N = 1..=4 (with TESSERA_RULES_RANK set) and fails if any job fails.
//! As an MPI rank it builds a small hand-made graph, checks that the BFS in every mode is
//! accepted and gives the sequential depths, then feeds the validator a correct parent
//! array corrupted so as to break exactly one rule (and no rule checked before it) and
//! checks that the validator names that rule.

mod common;

use common::seq_bfs;
use tessera::bfs::cpu::CpuFrontiers;
use tessera::bfs::search::{bfs, Frontiers, Mode, Params};
use tessera::bfs::validate::{validate, validate_with, RemoteLevels};
use tessera::comm::{Op, PhaseTimes, World};
use tessera::error::{Error, Rule};
use tessera::graph::readers::LoadedEdges;
use tessera::graph::{block_range, DistGraph};

const ENV: &str = "TESSERA_RULES_RANK";

fn main() {
    common::run_as_ranks("validator_rules", ENV, as_rank);
}

/// Vertices of the test graph.
const N: u64 = 500;

/// Global id of the graph's logical vertex `k`: a bijection of 0..N that scatters the
/// logical vertices over the ranks' blocks, so that tree and non-tree edges cross ranks.
fn id(k: u64) -> u64 {
    (k * 173 + 11) % N
}

/// The test graph in logical labels (mapped through `id` by `edges`):
///
/// component A, the searches' main root 0 (levels in brackets):
///   0[0] - 1[1], 2[1], 3[1];  1 - 4[2], 5[2];  2 - 6[2];  3 - 7[2];  4 - 8[3] - 9[4] (a leaf)
///   a 4-cycle 2 - 10[2] - 11[3] - 12[2] - 2 (for the edge-level-gap case)
///   a binary tree of 13..300 hanging from 7, plus extra edges among its vertices
///   self-loops on 0, 5 and 200; the edge 1-4 three times, in both orientations
/// component B: a ring on 300..=319;  C: a clique on 330..=335;  a star 340 - 341..=360;
/// a path 370..=399;  400 and 401 have only self-loops;  402..500 are isolated.
fn logical_edges() -> Vec<(u64, u64)> {
    let mut e = vec![
        (0, 1),
        (0, 2),
        (3, 0),
        (1, 4),
        (5, 1),
        (2, 6),
        (3, 7),
        (4, 8),
        (9, 8),
        (2, 10),
        (10, 11),
        (11, 12),
        (12, 2),
        (0, 0),
        (5, 5),
        (4, 1),
        (1, 4),
    ];
    for k in 13..300 {
        let parent = if k < 15 { 7 } else { (k - 15) / 2 + 13 };
        e.push((parent, k));
    }
    e.extend((13..299).step_by(5).map(|k| (k, k + 1)));
    e.extend((13..290).step_by(7).map(|k| (k + 9, k)));
    e.push((200, 200));
    e.extend((300..319).map(|k| (k, k + 1)));
    e.push((319, 300));
    for a in 330..=335 {
        e.extend((a + 1..=335).map(|b| (a, b)));
    }
    e.extend((341..=360).map(|k| (340, k)));
    e.extend((370..399).map(|k| (k + 1, k)));
    e.extend([(400, 400), (401, 401)]);
    e
}

fn edges() -> Vec<(u64, u64)> {
    logical_edges()
        .into_iter()
        .map(|(u, v)| (id(u), id(v)))
        .collect()
}

/// One broken parent array and what the validator must say about it.
#[derive(Clone)]
struct Case {
    name: &'static str,
    rule: Rule,
    /// The vertex the error must name, where only one vertex breaks the rule.
    vertex: Option<u64>,
    /// (logical vertex, new parent as a global id or -1) changes to the correct array.
    changes: Vec<(u64, i64)>,
}

fn cases() -> Vec<Case> {
    let g = |k: u64| id(k) as i64;
    vec![
        Case {
            name: "ParentRange (parent = N)",
            rule: Rule::ParentRange,
            vertex: Some(id(7)),
            changes: vec![(7, N as i64)],
        },
        Case {
            name: "ParentRange (parent = -2)",
            rule: Rule::ParentRange,
            vertex: Some(id(9)),
            changes: vec![(9, -2)],
        },
        Case {
            name: "RootSelfParent (root's parent is a neighbour)",
            rule: Rule::RootSelfParent,
            vertex: Some(id(0)),
            changes: vec![(0, g(1))],
        },
        Case {
            name: "OtherSelfParent (a reached vertex is its own parent)",
            rule: Rule::OtherSelfParent,
            vertex: Some(id(6)),
            changes: vec![(6, g(6))],
        },
        Case {
            name: "TreeLevels (8 and 9 each other's parents)",
            rule: Rule::TreeLevels,
            vertex: None,
            changes: vec![(8, g(9)), (9, g(8))],
        },
        Case {
            name: "TreeLevels (parent is an unreached vertex of another component)",
            rule: Rule::TreeLevels,
            vertex: Some(id(5)),
            changes: vec![(5, g(305))],
        },
        Case {
            name: "ParentIsEdge (4 re-parented to 3, one level up, not a neighbour)",
            rule: Rule::ParentIsEdge,
            vertex: Some(id(4)),
            changes: vec![(4, g(3))],
        },
        Case {
            name: "EdgeLevelGap (12 hung below 11: edge 2-12 spans levels 1 and 4)",
            rule: Rule::EdgeLevelGap,
            vertex: Some(id(2).min(id(12))),
            changes: vec![(11, g(10)), (12, g(11))],
        },
        Case {
            name: "Spanning (the leaf 9 marked unreached)",
            rule: Rule::Spanning,
            vertex: Some(id(8).min(id(9))),
            changes: vec![(9, -1)],
        },
    ]
}

/// Everything one rank does; returns the process exit code (the same on every rank).
fn as_rank() -> i32 {
    let world = World::init().expect("MPI initialised twice");
    let failures = rank_checks(&world);
    let any = world.allreduce(failures, Op::Max);
    if world.is_root() && any == 0 {
        println!("all validator checks passed (np {})", world.size());
    }
    drop(world);
    i32::from(any != 0)
}

/// Run every check on this rank; returns how many failed here (the checks are collective, so
/// every rank sees the same outcomes).
fn rank_checks(world: &World) -> u64 {
    let edges = edges();
    let m = edges.len() as u64;
    let mine = block_range(m, world.size(), world.rank());
    let local = edges[mine.start as usize..mine.end as usize].to_vec();
    let source = LoadedEdges::new(N, m, local);
    let g =
        DistGraph::build(world, &source, &mut PhaseTimes::default()).expect("building the graph");
    let (first, local_n) = (g.part.first() as usize, g.part.local_n());
    let slice = |global: &[i64]| global[first..first + local_n].to_vec();
    let say = |msg: &str| {
        if world.is_root() {
            println!("{msg} (np {})", world.size());
        }
    };
    let mut failures = 0;
    let mut fail = |msg: String| {
        eprintln!("{msg} (np {} rank {})", world.size(), world.rank());
        failures += 1;
    };

    // The real BFS is accepted and gives the sequential depths, in every mode, from roots in
    // every kind of component (including a vertex with only a self-loop and an isolated one).
    let roots = [0, 300, 330, 340, 370, 400, 450].map(id);
    for mode in [Mode::Hybrid, Mode::TopDown, Mode::BottomUp] {
        let params = Params {
            mode,
            alpha: 14.0,
            beta: 24.0,
        };
        for &root in &roots {
            let mut parent = vec![0i64; local_n];
            let mut frontiers = CpuFrontiers::new(world, &g);
            let searched = bfs(world, g.n(), g.num_entries, &mut frontiers, root, &params)
                .and_then(|_| frontiers.parents(&mut parent));
            if let Err(e) = searched {
                fail(format!("{mode:?} BFS from {root} failed: {e}"));
                continue;
            }
            let (depth, _) = seq_bfs(N, &edges, root);
            match validate(world, &g, root, &parent) {
                Ok(levels) => {
                    let expected = &depth[first..first + local_n];
                    if levels != expected {
                        fail(format!(
                            "{mode:?} BFS from {root}: levels differ from a sequential BFS"
                        ));
                    }
                }
                Err(e) => fail(format!("{mode:?} BFS from {root} rejected: {e}")),
            }
        }
    }
    say("BFS from 7 roots in 3 modes: accepted, depths equal a sequential BFS");

    // The sequential parent array of root 0 is accepted as it is.
    let root = id(0);
    let (depth, correct) = seq_bfs(N, &edges, root);
    const BOTH: [RemoteLevels; 2] = [RemoteLevels::Gather, RemoteLevels::Query];
    for remote in BOTH {
        if let Err(e) = validate_with(world, &g, root, &slice(&correct), remote) {
            fail(format!(
                "the sequential parent array was rejected ({remote:?}): {e}"
            ));
        }
    }
    // The test's premises about the levels of the hand-made graph.
    for (k, level) in [(0, 0), (1, 1), (2, 1), (3, 1), (4, 2), (8, 3), (9, 4)] {
        assert_eq!(depth[id(k) as usize], level, "level of logical vertex {k}");
    }
    assert_eq!((depth[id(10) as usize], depth[id(12) as usize]), (2, 2));
    assert_eq!(depth[id(305) as usize], -1);

    // One case per rule, each breaking that rule and none checked before it, with the far
    // ends' levels gathered and queried.
    for (case, remote) in cases()
        .into_iter()
        .flat_map(|case| BOTH.map(|remote| (case.clone(), remote)))
    {
        let mut parent = correct.clone();
        for &(k, p) in &case.changes {
            parent[id(k) as usize] = p;
        }
        match validate_with(world, &g, root, &slice(&parent), remote) {
            Err(Error::Validation {
                rule,
                root: r,
                vertex,
                ..
            }) if rule == case.rule && r == root && case.vertex.is_none_or(|v| v == vertex) => {
                say(&format!(
                    "rule {} ({remote:?}): rejected as expected",
                    case.name
                ));
            }
            other => fail(format!(
                "rule {} ({remote:?}): expected Validation {{ rule: {:?}, vertex: {:?} }}, got {other:?}",
                case.name, case.rule, case.vertex
            )),
        }
    }
    failures
}
