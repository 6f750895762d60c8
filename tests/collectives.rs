//! The communication layer from inside the ranks, at 1 to 4 ranks: halo exchange with
//! `World::sendrecv` around a ring, and `World::agree` sharing one rank's error with all.
//!
//! No libtest harness: run by `cargo test`, it starts itself under `mpirun -np N` (see
//! `common::run_as_ranks`).

mod common;

use tessera::comm::{Op, World};
use tessera::error::Error;

const ENV: &str = "TESSERA_COLLECTIVES_RANK";

fn main() {
    common::run_as_ranks("collectives", ENV, as_rank);
}

fn as_rank() -> i32 {
    let world = World::init().expect("MPI initialised twice");
    let mut failures = Vec::new();
    if let Err(e) = halo_ring(&world) {
        failures.push(e);
    }
    if let Err(e) = agree(&world) {
        failures.push(e);
    }
    for f in &failures {
        eprintln!("rank {}: {f}", world.rank());
    }
    let any = world.allreduce(failures.len() as u64, Op::Max);
    drop(world);
    i32::from(any != 0)
}

/// Each rank sends its slab's last layer up the ring and its first layer down, as a lattice
/// halo exchange does, and checks both ghost layers hold its neighbours' values.
fn halo_ring(world: &World) -> Result<(), String> {
    let (rank, size) = (world.rank(), world.size());
    let (up, down) = ((rank + 1) % size, (rank + size - 1) % size);
    let layer = |r: usize, which: u64| -> Vec<f64> {
        (0..5)
            .map(|i| (r as u64 * 100 + which * 10 + i) as f64)
            .collect()
    };
    let mut from_down = vec![0.0; 5];
    world.sendrecv(&layer(rank, 1), up, &mut from_down, down);
    let mut from_up = vec![0.0; 5];
    world.sendrecv(&layer(rank, 0), down, &mut from_up, up);
    if from_down != layer(down, 1) || from_up != layer(up, 0) {
        return Err(format!("halo: got {from_down:?} and {from_up:?}"));
    }
    Ok(())
}

/// Only the last rank fails; every rank must return its message, and success stays success.
fn agree(world: &World) -> Result<(), String> {
    let last = world.size() - 1;
    let mine = if world.rank() == last {
        Err(Error::Unavailable(format!("rank {last} failed")))
    } else {
        Ok(world.rank())
    };
    match world.agree(mine) {
        Err(Error::Agreed(msg)) if msg == format!("rank {last} failed") => {}
        other => return Err(format!("agree on a failure gave {other:?}")),
    }
    match world.agree(Ok::<usize, Error>(world.rank())) {
        Ok(r) if r == world.rank() => Ok(()),
        other => Err(format!("agree on success gave {other:?}")),
    }
}
