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

/// Items of a field with `depth` ghost planes on either side.
pub fn deep_field_len(slab: &Slab, depth: usize) -> usize {
    slab.sites() + 2 * depth * slab.plane()
}

/// `exchange` for `depth` ghost planes on either side, `[depth ghosts | the slab's planes |
/// depth ghosts]`, overlapped with `work`, which runs while the planes travel and may read the
/// field's own planes (not its ghosts, filled once it returns) (collective). The slab must be
/// at least `depth` planes thick, so that the ghosts come from the neighbouring slabs only;
/// a periodic lattice's.
pub fn exchange_deep_overlapped<T: Equivalence + Copy + Default, R>(
    world: &World,
    slab: &Slab,
    depth: usize,
    field: &mut [T],
    work: impl FnOnce(&[T]) -> R,
) -> R {
    let span = depth * slab.plane();
    let own = slab.sites();
    assert!(
        slab.thickness as usize >= depth,
        "a slab thinner than its halo"
    );
    assert_eq!(
        field.len(),
        deep_field_len(slab, depth),
        "a deep halo field's length"
    );
    let up = field[own..own + span].to_vec();
    let down = field[span..2 * span].to_vec();
    let (mut below, mut above) = (vec![T::default(); span], vec![T::default(); span]);
    let shared: &[T] = field;
    let out = world.shift_both_ways(
        (&up, &down),
        (&mut below, &mut above),
        (slab.below(), slab.above()),
        || work(shared),
    );
    field[..span].copy_from_slice(&below);
    field[own + span..].copy_from_slice(&above);
    out
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

/// Where row `row` of a slab (local sites row·L .. row·L + L, along the fast axis) and its
/// neighbouring rows sit in a field with ghost planes: the row starts at `start`; along slow
/// axis a (0, and 1 in 3D) the rows one step down and up start at `slow[a]`, through the ghost
/// planes along axis 0 and wrapping inside the plane along axis 1 (`None` past the end of an
/// open lattice). Along the fast axis a site's neighbours are its row's next positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowNeighbours {
    pub start: usize,
    pub slow: [(Option<usize>, Option<usize>); 2],
}

pub fn row_neighbours(slab: &Slab, row: usize) -> RowNeighbours {
    let lattice = slab.lattice;
    let (l, plane) = (lattice.l as usize, slab.plane());
    let start = row * l + plane;
    let mut slow = [(None, None); 2];
    for (axis, pair) in slow.iter_mut().enumerate().take(lattice.dim - 1) {
        let stride = lattice.stride(axis) as usize;
        let x = lattice.coord(slab.global(row * l), axis) as usize;
        // Along axis 0 the ghost planes hold the neighbours; along axis 1 the plane wraps.
        let wrap = if axis == 0 { 0 } else { l * stride };
        let down = if x > 0 {
            Some(start - stride)
        } else {
            lattice.periodic.then(|| start + wrap - stride)
        };
        let up = if x + 1 < lattice.side(axis) as usize {
            Some(start + stride)
        } else {
            lattice.periodic.then(|| start + stride - wrap)
        };
        *pair = (down, up);
    }
    RowNeighbours { start, slow }
}

/// `exchange` for a field in GPU memory (collective).
pub fn exchange_gpu<T: Item>(
    ex: &GpuExchange,
    slab: &Slab,
    field: &mut CudaSlice<T>,
    gpu: &Gpu,
) -> Result<()> {
    exchange_gpu_planes(ex, slab, slab.plane(), field, gpu)
}

/// `exchange_gpu` for a field that stores a plane of the slab in `plane` items (a packed
/// field: `spin::msc`), laid out alike: `[ghost | thickness planes | ghost]` (collective).
pub fn exchange_gpu_planes<T: Item>(
    ex: &GpuExchange,
    slab: &Slab,
    plane: usize,
    field: &mut CudaSlice<T>,
    gpu: &Gpu,
) -> Result<()> {
    let top = plane * slab.thickness as usize;
    if slab.ranks == 1 {
        return wrap_gpu(slab, plane, field, gpu);
    }
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

/// `exchange_deep_overlapped`'s exchange for a field in GPU memory whose `depth` ghost planes
/// on either side are buffers of their own (`below`, `above`: `depth` planes each), apart
/// from the slab's `own` planes, so that a kernel reading `own` on another stream runs while
/// they are filled (collective). A periodic lattice; the slab at least `depth` planes thick.
pub fn exchange_gpu_deep<T: Item>(
    ex: &GpuExchange,
    slab: &Slab,
    depth: usize,
    own: &CudaSlice<T>,
    (below, above): (&mut CudaSlice<T>, &mut CudaSlice<T>),
    gpu: &Gpu,
) -> Result<()> {
    let span = depth * slab.plane();
    let len = slab.sites();
    assert!(
        slab.thickness as usize >= depth,
        "a slab thinner than its halo"
    );
    let (top, bottom) = (own.slice(len - span..len), own.slice(0..span));
    let (mut below, mut above) = (below.slice_mut(0..span), above.slice_mut(0..span));
    if slab.ranks == 1 {
        let copy_error = |e| gpu_error("copy a ghost plane", e);
        gpu.stream
            .memcpy_dtod(&top, &mut below)
            .map_err(copy_error)?;
        return gpu
            .stream
            .memcpy_dtod(&bottom, &mut above)
            .map_err(copy_error);
    }
    ex.sendrecv(&top, slab.above(), &mut below, slab.below())?;
    ex.sendrecv(&bottom, slab.below(), &mut above, slab.above())
}

/// The ghost planes of the one slab of a lattice: the periodic wraps copied on the GPU (or
/// cleared on an open lattice), without the host round trip of a shift to itself.
fn wrap_gpu<T: Item>(slab: &Slab, plane: usize, field: &mut CudaSlice<T>, gpu: &Gpu) -> Result<()> {
    let top = plane * slab.thickness as usize;
    let copy_error = |e| gpu_error("copy a ghost plane", e);
    if !slab.lattice.periodic {
        for range in [0..plane, top + plane..top + 2 * plane] {
            gpu.stream
                .memset_zeros(&mut field.slice_mut(range))
                .map_err(|e| gpu_error("clear a ghost plane", e))?;
        }
        return Ok(());
    }
    {
        let (mut below, rest) = field.split_at_mut(plane);
        let send = rest.slice(top - plane..top);
        gpu.stream
            .memcpy_dtod(&send, &mut below)
            .map_err(copy_error)?;
    }
    let (rest, mut above) = field.split_at_mut(top + plane);
    let send = rest.slice(plane..2 * plane);
    gpu.stream
        .memcpy_dtod(&send, &mut above)
        .map_err(copy_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lattice::Lattice;

    #[test]
    fn row_neighbours_are_the_lattice_neighbours_of_the_row() {
        for (dim, l, periodic) in [(2, 5, true), (3, 4, true), (3, 4, false)] {
            let lattice = Lattice::new(dim, l, periodic).unwrap();
            let slab = Slab::new(lattice, 2, 1).unwrap();
            let plane = slab.plane();
            // The field of global indices, ghosts holding the neighbouring slabs' planes.
            let ghost = |x0: u64| (0..plane as u64).map(move |j| x0 * plane as u64 + j);
            let field: Vec<u64> = ghost((slab.first + l - 1) % l)
                .chain((0..slab.sites()).map(|i| slab.global(i)))
                .chain(ghost((slab.first + slab.thickness) % l))
                .collect();
            for row in 0..slab.sites() / l as usize {
                let rn = row_neighbours(&slab, row);
                let site = slab.global(row * l as usize);
                assert_eq!(field[rn.start], site);
                for axis in 0..dim - 1 {
                    let (down, up) = rn.slow[axis];
                    assert_eq!(down.map(|f| field[f]), lattice.down(site, axis));
                    assert_eq!(up.map(|f| field[f]), lattice.up(site, axis));
                }
            }
        }
    }
}
