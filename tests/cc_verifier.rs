//! The components verifier (`workloads::cc::sizes::verify`) at 1 to 4 ranks: it accepts the
//! labelling of a grid (one component, every label 0) and rejects a vertex labelled apart,
//! inside a rank's rows and at a rank boundary (where the edges are cut edges, read through
//! the ghosts), and ghosts that miss a remote endpoint of the rows. It checks the graph's
//! rows, not the local/cut split the labelling read, so a wrong split cannot pass it.
//!
//! No libtest harness: run by `cargo test`, it starts itself under `mpirun -np N` (see
//! `common::run_as_ranks`).

mod common;

use tessera::comm::{Op, PhaseTimes, World};
use tessera::graph::generators::lattice::Lattice;
use tessera::graph::ghosts::{Ghosts, LocalRows};
use tessera::graph::{Block1D, DistGraph};
use tessera::workloads::cc::sizes::verify;

const ENV: &str = "TESSERA_CC_VERIFIER_RANK";
/// The grid's side: SIDE x SIDE vertices, open boundaries.
const SIDE: u64 = 12;

fn main() {
    common::run_as_ranks("cc_verifier", ENV, as_rank);
}

fn as_rank() -> i32 {
    let world = World::init().expect("MPI initialised twice");
    let failures = match cases(&world) {
        Ok(failures) => failures,
        Err(e) => vec![format!("{e}")],
    };
    for f in &failures {
        eprintln!("rank {}: {f}", world.rank());
    }
    let any = world.allreduce(failures.len() as u64, Op::Max);
    drop(world);
    i32::from(any != 0)
}

fn cases(world: &World) -> tessera::error::Result<Vec<String>> {
    let source = Lattice::new(vec![SIDE, SIDE], false, 0, world.size(), world.rank());
    let g = DistGraph::build(world, &source, &mut PhaseTimes::default())?;
    let rows = LocalRows::split(world, &g)?;
    let part = g.part;
    let mut failures = Vec::new();
    let mut expect = |what: &str, labels: &[u64], ghosts: &Ghosts, ok: bool| {
        let outcome = verify(world, &g, ghosts, labels);
        if outcome.is_ok() != ok {
            failures.push(format!("{what}: {outcome:?}, expected ok = {ok}"));
        }
    };
    let zeros = vec![0u64; part.local_n()];
    expect("one component labelled 0", &zeros, &rows.ghosts, true);
    // A vertex in the middle of the grid, and the first vertex of rank 1 (its row's edges to
    // rank 0 are cut edges; vertex 1 on one rank), labelled with their own ids.
    let second = Block1D::new(g.n(), world.size(), 1.min(world.size() - 1)).first();
    let boundary = second.max(1);
    for apart in [SIDE * SIDE / 2 + SIDE / 2, boundary] {
        let mut labels = zeros.clone();
        if part.is_local(apart) {
            labels[part.local(apart)] = apart;
        }
        expect(
            &format!("vertex {apart} labelled apart"),
            &labels,
            &rows.ghosts,
            false,
        );
    }
    // Ghosts that miss this rank's first remote endpoint (each rank with ghosts drops one).
    if world.allreduce(rows.ghosts.ids.len() as u64, Op::Max) > 0 {
        let ids = rows.ghosts.ids.iter().skip(1).copied().collect();
        let missing = Ghosts::plan(world, &part, ids)?;
        expect("a ghost missing", &zeros, &missing, false);
    }
    Ok(failures)
}
