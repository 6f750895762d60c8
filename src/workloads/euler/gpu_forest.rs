//! Phase 3 on several ranks, on the devices: the spanning forest of the trail graph by
//! `forest`'s min-label hooking (the same links chosen, the same rounds), the trails' roots
//! in even blocks of labels over the ranks (`Ranges::even`), every crossing through the
//! device exchange (kernels/euler.cu `euler_forest_*`): per round, the offers' questions for
//! their trails' roots and the answers, the offers between two trees to their larger root's
//! owner, and the shortcut's questions; at the end the chosen links to their slots' owners.
//! Before the rounds each rank keeps, of its offers between the same two trails, only the one
//! with the smallest link (`distinct`, as forest.rs's), which chooses the same links.

use super::gpu::read_one;
use super::gpu_ruling::Router;
use crate::device::grid;
use crate::error::Result;
use cudarc::driver::{CudaSlice, PushKernelArg};

/// Marks the slots whose links the forest chose in `joined` (per local slot), from this
/// rank's `offers` (`count` triples: smallest trail at the vertex, another trail, the local
/// slot of its link); `slots` routes to the slots' owners, `trails` to the trails'
/// (collective). Returns the rounds and the links chosen on all ranks.
pub(super) fn join(
    (slots, trails): (&Router, &Router),
    (offers, count): (CudaSlice<u32>, u64),
    joined: &mut CudaSlice<u8>,
) -> Result<(usize, u64)> {
    let gpu = trails.gpu();
    // The offers of all vertices are dropped here, the distinct ones kept.
    let (offers, count) = distinct(trails, (offers, count))?;
    let offers = &offers;
    let nodes = u64::from(trails.here);
    let mut root = gpu.zeros::<u32>("trail roots", nodes as usize)?;
    let mut best = gpu.zeros::<u64>("best offers", nodes as usize)?;
    gpu.launch(trails.kernel("euler_forest_start"), grid(nodes), |b| {
        b.arg(&mut root).arg(&mut best).arg(&nodes).arg(&trails.first);
    })?;
    let mut chosen = gpu.zeros::<u32>("chosen links", nodes as usize)?;
    let mut chosen_count = gpu.zeros::<u64>("counter", 1)?;
    let mut rounds = 0;
    loop {
        rounds += 1;
        let between = offers_between(slots, trails, (offers, count), &root)?;
        let arrived = trails.route(&between.0, between.1, 3)?;
        gpu.launch(trails.kernel("euler_forest_best"), grid(arrived.count), |b| {
            b.arg(&arrived.arrived)
                .arg(&arrived.count)
                .arg(&trails.first)
                .arg(&mut best);
        })?;
        let before = read_one(gpu, &chosen_count, 0)?;
        gpu.launch(trails.kernel("euler_forest_hooks"), grid(nodes), |b| {
            b.arg(&mut best)
                .arg(&nodes)
                .arg(&mut root)
                .arg(&mut chosen)
                .arg(&mut chosen_count);
        })?;
        let hooked = read_one(gpu, &chosen_count, 0)? - before;
        if trails.total(hooked) == 0 {
            break;
        }
        shortcut(trails, &mut root)?;
    }
    let chosen_count = read_one(gpu, &chosen_count, 0)?;
    let links = trails.total(chosen_count);
    let arrived = slots.route(&chosen, chosen_count, 1)?;
    gpu.launch(slots.kernel("euler_forest_joined"), grid(arrived.count), |b| {
        b.arg(&arrived.arrived)
            .arg(&arrived.count)
            .arg(&slots.first)
            .arg(joined);
    })?;
    Ok((rounds, links))
}

/// Of this rank's offers (t1, t, link) between the same two trails, the one with the smallest
/// link, through a hash table (kernels/euler.cu `euler_offer_insert`) at most half full: the
/// offers and their count. Its 12 bytes an entry, at most 4 entries an offer and an offer at
/// most every other slot, stay below the labelling's peak (`gpu.rs` `BYTES_PER_SLOT_RANKS`).
fn distinct(trails: &Router, (offers, count): (CudaSlice<u32>, u64)) -> Result<(CudaSlice<u32>, u64)> {
    let gpu = trails.gpu();
    let capacity = (2 * count).next_power_of_two();
    let mask = capacity - 1;
    let mut keys = gpu.zeros::<u64>("offers' table", capacity as usize)?;
    let mut links = gpu.zeros::<u32>("offers' table", capacity as usize)?;
    let nil = u32::MAX;
    gpu.launch(trails.kernel("euler_fill"), grid(capacity), |b| {
        b.arg(&mut links).arg(&capacity).arg(&nil);
    })?;
    gpu.launch(trails.kernel("euler_offer_insert"), grid(count), |b| {
        b.arg(&offers).arg(&count).arg(&mask).arg(&mut keys).arg(&mut links);
    })?;
    let mut kept = gpu.zeros::<u32>("distinct offers", 3 * count as usize)?;
    let mut kept_count = gpu.zeros::<u64>("counter", 1)?;
    gpu.launch(trails.kernel("euler_offer_take"), grid(capacity), |b| {
        b.arg(&keys)
            .arg(&links)
            .arg(&capacity)
            .arg(&mut kept)
            .arg(&mut kept_count);
    })?;
    Ok((kept, read_one(gpu, &kept_count, 0)?))
}

/// The offers between two trees this round: (larger root, smaller root, link's global
/// slot), and how many.
fn offers_between(
    slots: &Router,
    trails: &Router,
    (offers, count): (&CudaSlice<u32>, u64),
    root: &CudaSlice<u32>,
) -> Result<(CudaSlice<u32>, u64)> {
    let gpu = trails.gpu();
    let mut asks = gpu.zeros::<u32>("questions", 4 * count as usize)?;
    gpu.launch(trails.kernel("euler_forest_ask"), grid(count), |b| {
        b.arg(offers).arg(&count).arg(&mut asks);
    })?;
    let mut roots = gpu.zeros::<u32>("offers' roots", 2 * count as usize)?;
    trails.ask((asks, 2 * count), [root, root, root], 1, &mut roots)?;
    let mut between = gpu.zeros::<u32>("offers between trees", 3 * count as usize)?;
    let mut between_count = gpu.zeros::<u64>("counter", 1)?;
    gpu.launch(trails.kernel("euler_forest_between"), grid(count), |b| {
        b.arg(offers)
            .arg(&count)
            .arg(&roots)
            .arg(&slots.first)
            .arg(&mut between)
            .arg(&mut between_count);
    })?;
    Ok((between, read_one(gpu, &between_count, 0)?))
}

/// Every node that is no root jumps to its tree's root (forest.rs `shortcut`).
fn shortcut(trails: &Router, root: &mut CudaSlice<u32>) -> Result<()> {
    let gpu = trails.gpu();
    let nodes = u64::from(trails.here);
    let mut moved = gpu.zeros::<u32>("moved trails", nodes as usize)?;
    let mut count = gpu.zeros::<u64>("counter", 1)?;
    gpu.launch(trails.kernel("euler_forest_moved"), grid(nodes), |b| {
        b.arg(&*root)
            .arg(&nodes)
            .arg(&trails.first)
            .arg(&mut moved)
            .arg(&mut count);
    })?;
    let count = read_one(gpu, &count, 0)?;
    let mut up = gpu.zeros::<u32>("roots' roots", count as usize)?;
    let mut changed = gpu.zeros::<u64>("counter", 1)?;
    loop {
        let r = &*root;
        trails.query((&moved, count), r, [r, r, r], 1, &mut up)?;
        gpu.clear("a counter", &mut changed)?;
        gpu.launch(trails.kernel("euler_forest_up"), grid(count), |b| {
            b.arg(&moved)
                .arg(&count)
                .arg(&up)
                .arg(&mut *root)
                .arg(&mut changed);
        })?;
        if trails.total(read_one(gpu, &changed, 0)?) == 0 {
            return Ok(());
        }
    }
}
