//! Halo exchange of a field over the slabs: one ghost plane on either side of a rank's
//! planes, `[ghost below | the slab's planes | ghost above]`, filled from the neighbouring
//! ranks by two `sendrecv` shifts (up, then down) around the ring of ranks, so the last and
//! the first rank exchange the periodic wrap. A single rank shifts to itself; a slab one plane
//! thick sends the same plane both ways. On an open lattice the ghosts beyond the lattice's
//! ends hold `T::default()` (the wrap is exchanged and then overwritten: the ring keeps every
//! rank in the same two calls). Host fields (`exchange`) and GPU fields (`exchange_gpu`,
//! through `GpuExchange::sendrecv`) are laid out alike.

use super::Slab;
use crate::comm::gpu::{GpuExchange, Item};
use crate::comm::{Equivalence, World};
use crate::device::{gpu_error, Gpu};
use crate::error::Result;
use cudarc::driver::CudaSlice;

/// Items of a field with its two ghost planes.
pub fn field_len(slab: &Slab) -> usize {
    slab.sites() + 2 * slab.plane()
}

/// Fill the ghost planes of `field` (`field_len` items) from the neighbouring slabs
/// (collective).
pub fn exchange<T: Equivalence + Copy + Default>(world: &World, slab: &Slab, field: &mut [T]) {
    let plane = slab.plane();
    let top = slab.sites(); // first item of the top plane, counting the ghost below
    assert_eq!(field.len(), field_len(slab), "a halo field's length");
    let up = field[top..top + plane].to_vec();
    world.sendrecv(&up, slab.above(), &mut field[..plane], slab.below());
    let down = field[plane..2 * plane].to_vec();
    world.sendrecv(&down, slab.below(), &mut field[top + plane..], slab.above());
    if !slab.lattice.periodic {
        if slab.is_bottom() {
            field[..plane].fill(T::default());
        }
        if slab.is_top() {
            field[top + plane..].fill(T::default());
        }
    }
}

/// The bottom plane of the slab above (the periodic wrap for the top slab), given this
/// slab's bottom plane (collective). The labelling's one exchange.
pub fn from_above<T: Equivalence + Copy + Default>(
    world: &World,
    slab: &Slab,
    bottom: &[T],
) -> Vec<T> {
    let mut got = vec![T::default(); bottom.len()];
    world.sendrecv(bottom, slab.below(), &mut got, slab.above());
    got
}

/// `exchange` for a field in GPU memory (collective).
pub fn exchange_gpu<T: Item>(
    ex: &GpuExchange,
    slab: &Slab,
    field: &mut CudaSlice<T>,
    gpu: &Gpu,
) -> Result<()> {
    let plane = slab.plane();
    let top = slab.sites();
    {
        let (mut below, rest) = field.split_at_mut(plane);
        let send = rest.slice(top - plane..top);
        ex.sendrecv(&send, slab.above(), &mut below, slab.below())?;
    }
    {
        let (rest, mut above) = field.split_at_mut(top + plane);
        let send = rest.slice(plane..2 * plane);
        ex.sendrecv(&send, slab.below(), &mut above, slab.above())?;
    }
    if !slab.lattice.periodic {
        let zero = |range: std::ops::Range<usize>, field: &mut CudaSlice<T>| {
            gpu.stream
                .memset_zeros(&mut field.slice_mut(range))
                .map_err(|e| gpu_error("clear a ghost plane", e))
        };
        if slab.is_bottom() {
            zero(0..plane, field)?;
        }
        if slab.is_top() {
            zero(top + plane..top + 2 * plane, field)?;
        }
    }
    Ok(())
}
