//! Items computed in lanes on the CPU: a batch of L independent items (a generator's edges)
//! written as loops over lane arrays, which the compiler turns into vector instructions where
//! the batch is compiled for a vector unit. The widest unit the CPU has is found at run time
//! (AVX-512 or AVX2 on x86-64, the base instruction set otherwise), so one binary uses what
//! each host offers. Every unit computes the same integers; only the speed differs.
//! `TESSERA_VECTORS=avx512|avx2|none` narrows the choice (to time one unit against another).

use rayon::prelude::*;
use std::mem::MaybeUninit;
use std::sync::OnceLock;

/// Items the caller computes L at a time.
pub trait Lanes: Sync {
    type Item: Copy + Default + Send;
    /// `out[i]` = item number `first + i`. Implementations are `#[inline(always)]`, so that
    /// each unit's batch loop compiles them with its own instructions.
    fn batch<const L: usize>(&self, first: u64, out: &mut [Self::Item; L]);
}

/// Items given one at a time by a function: its batch is a loop over the lanes (which the
/// compiler may still vectorise where the function allows).
pub struct Each<F>(pub F);

impl<T: Copy + Default + Send, F: Fn(u64) -> T + Sync> Lanes for Each<F> {
    type Item = T;
    #[inline(always)]
    fn batch<const L: usize>(&self, first: u64, out: &mut [T; L]) {
        for (l, slot) in out.iter_mut().enumerate() {
            *slot = (self.0)(first + l as u64);
        }
    }
}

/// A vector unit of the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unit {
    Base,
    Avx2,
    Avx512,
}

impl Unit {
    /// Every unit this CPU has, narrowest first.
    pub fn available() -> Vec<Unit> {
        [Unit::Base, Unit::Avx2, Unit::Avx512]
            .into_iter()
            .filter(|u| u.present())
            .collect()
    }

    fn present(self) -> bool {
        match self {
            Unit::Base => true,
            #[cfg(target_arch = "x86_64")]
            Unit::Avx2 => is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Unit::Avx512 => {
                is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512dq")
                    && is_x86_feature_detected!("avx512vl")
                    && is_x86_feature_detected!("avx512bw")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The widest unit present, no wider than `TESSERA_VECTORS` names (read once).
    pub fn chosen() -> Unit {
        static CHOSEN: OnceLock<Unit> = OnceLock::new();
        *CHOSEN.get_or_init(|| {
            let cap = match std::env::var("TESSERA_VECTORS").as_deref() {
                Ok("none") => Unit::Base,
                Ok("avx2") => Unit::Avx2,
                _ => Unit::Avx512,
            };
            Unit::available()
                .into_iter()
                .filter(|&u| u <= cap)
                .max()
                .unwrap_or(Unit::Base)
        })
    }
}

/// Items per task of the parallel fill: enough to amortise a task, few enough to balance.
const TASK: usize = 1 << 14;

/// Appends items `first .. first + len - 1` of `items` to `out`, on every worker thread,
/// with the chosen unit.
pub fn append<K: Lanes>(items: &K, first: u64, len: u64, out: &mut Vec<K::Item>) {
    append_with(Unit::chosen(), items, first, len, out)
}

/// `append` with a given unit (present on this CPU). The items are written straight into
/// the vector's spare capacity: no zeroing pass over memory they then overwrite.
pub fn append_with<K: Lanes>(unit: Unit, items: &K, first: u64, len: u64, out: &mut Vec<K::Item>) {
    assert!(unit.present(), "{unit:?} is not present on this CPU");
    let (at, len) = (out.len(), len as usize);
    out.reserve(len);
    out.spare_capacity_mut()[..len]
        .par_chunks_mut(TASK)
        .enumerate()
        .for_each(|(task, slice)| {
            let first = first + (task * TASK) as u64;
            match unit {
                // Safety: the unit's instructions are present (asserted above).
                #[cfg(target_arch = "x86_64")]
                Unit::Avx512 => unsafe { batches_avx512(items, first, slice) },
                #[cfg(target_arch = "x86_64")]
                Unit::Avx2 => unsafe { batches_avx2(items, first, slice) },
                _ => batches::<K, 4>(items, first, slice),
            }
        });
    // Safety: the tasks wrote every one of the `len` slots after `at` (`batches` writes
    // each slot of its slice once).
    unsafe { out.set_len(at + len) };
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw")]
unsafe fn batches_avx512<K: Lanes>(items: &K, first: u64, out: &mut [MaybeUninit<K::Item>]) {
    batches::<K, 32>(items, first, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn batches_avx2<K: Lanes>(items: &K, first: u64, out: &mut [MaybeUninit<K::Item>]) {
    batches::<K, 16>(items, first, out)
}

/// Writes every slot of `out`: batches of L items, the tail one at a time.
#[inline(always)]
fn batches<K: Lanes, const L: usize>(items: &K, first: u64, out: &mut [MaybeUninit<K::Item>]) {
    let mut whole = out.chunks_exact_mut(L);
    let mut at = first;
    let mut batch = [K::Item::default(); L];
    for slots in &mut whole {
        items.batch::<L>(at, &mut batch);
        for (slot, &item) in slots.iter_mut().zip(&batch) {
            slot.write(item);
        }
        at += L as u64;
    }
    for slot in whole.into_remainder() {
        let mut one = [K::Item::default()];
        items.batch::<1>(at, &mut one);
        slot.write(one[0]);
        at += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::draw;

    struct Draws(u64);

    impl Lanes for Draws {
        type Item = u64;
        #[inline(always)]
        fn batch<const L: usize>(&self, first: u64, out: &mut [u64; L]) {
            for (l, slot) in out.iter_mut().enumerate() {
                *slot = draw(self.0, first + l as u64);
            }
        }
    }

    #[test]
    fn every_unit_appends_every_item_in_place() {
        // Lengths around the task size and the batch widths, from an odd start, after what
        // the vector held.
        for len in [0, 1, 31, 33, TASK - 1, TASK + 17, 3 * TASK + 5] {
            let mut want = vec![7, 8];
            want.extend((0..len as u64).map(|i| draw(9, 1001 + i)));
            for unit in Unit::available() {
                let mut got = vec![7, 8];
                append_with(unit, &Draws(9), 1001, len as u64, &mut got);
                assert!(got == want, "{unit:?}, {len} items");
            }
        }
        assert!(Unit::available().contains(&Unit::chosen()));
    }
}
