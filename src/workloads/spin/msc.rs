//! Multi-spin coded Ising Metropolis on a GPU (kernels/spin.cu, "Multi-spin coded"): one bit
//! per spin, 32 spins of one colour per word, so a half-sweep reads and writes an eighth of
//! the byte field's memory and sums the neighbours of 32 sites with a few bitwise operations.
//! The sweeps take the byte kernel's decisions bit for bit (the same uniform per site,
//! `model::metropolis_accept`, and the same integer thresholds), so the trajectory,
//! checkpoints and measurements are the CPU's; a word's 32 lanes share their random planes
//! (the acceptance word is the packed word), decided together a plane at a time. Used for every Ising Metropolis run on a GPU whose side L is a multiple of 64 (whole
//! words per row); other sides take the byte kernel.
//!
//! `Layout` is the packing (host side, tested on the CPU): row ρ of the slab keeps its sites
//! of colour c at positions x = 2j + o as bit j mod 32 of word ((ρ + rpp)·2 + c)·wr + j / 32,
//! wr = L/64 words per colour and row, with a ghost plane of rpp = L^(d-2) rows on either side
//! exchanged through `halo::exchange_gpu_planes`.

use super::model::Model;
use crate::comm::gpu::GpuExchange;
use crate::device::{blocks, gpu_error, grid, Gpu, Kernel, THREADS};
use crate::error::Result;
use crate::lattice::{halo, Slab};
use cudarc::driver::{CudaSlice, LaunchArgs, PushKernelArg};
use rayon::prelude::*;

const FILE: &str = "spin.cu";

/// Spins per word.
const BITS: usize = 32;

/// The packed layout of a slab, as the kernels take it (`MSC_SLAB`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Rows (L sites along the fast axis) in the slab.
    rows: u32,
    /// Words per row and colour, L/64.
    wr: u32,
    l: u32,
    /// Rows per plane of axis 0, L^(d-2).
    rpp: u32,
    /// Parity of the slab's first plane.
    first_parity: u32,
    /// Global index of the slab's first site.
    offset: u64,
    dim: u32,
}

impl Layout {
    /// The packing of `slab`, where it has one: L a multiple of 64 and fewer than 2^32 words
    /// of each colour in the thickest slab (the kernels' 32-bit word indices; the same answer
    /// on every rank).
    pub fn of(slab: &Slab) -> Option<Layout> {
        let lattice = slab.lattice;
        let l = lattice.l;
        let thickest = l.div_ceil(slab.ranks as u64) * lattice.plane();
        let words = thickest / (2 * BITS as u64);
        if !(lattice.periodic && l.is_multiple_of(2 * BITS as u64) && words < 1 << 32) {
            return None;
        }
        Some(Layout {
            rows: (slab.sites() as u64 / l) as u32,
            wr: (l / (2 * BITS as u64)) as u32,
            l: l as u32,
            rpp: (lattice.plane() / l) as u32,
            first_parity: (slab.first % 2) as u32,
            offset: slab.offset(),
            dim: lattice.dim as u32,
        })
    }

    /// Words of one row (both colours).
    fn row_words(&self) -> usize {
        2 * self.wr as usize
    }

    /// Words of the slab's own rows.
    pub fn interior_words(&self) -> usize {
        self.rows as usize * self.row_words()
    }

    /// Words of one plane of axis 0 (a ghost plane).
    pub fn plane_words(&self) -> usize {
        self.rpp as usize * self.row_words()
    }

    /// Words of the field, ghost planes included.
    pub fn field_words(&self) -> usize {
        self.interior_words() + 2 * self.plane_words()
    }

    /// Position (0 or 1) along row `row` of its first site of colour `colour`.
    fn row_first(&self, row: usize, colour: usize) -> usize {
        let x0 = row / self.rpp as usize;
        let r = if self.dim == 3 {
            row % self.l as usize
        } else {
            0
        };
        (self.first_parity as usize + x0 + r + colour) & 1
    }

    /// The slab's byte spins (states 0 and 1, local order) packed: the field's interior.
    pub fn pack(&self, spins: &[u8]) -> Vec<u32> {
        let l = self.l as usize;
        let mut words = vec![0u32; self.interior_words()];
        words
            .par_chunks_mut(self.row_words()).with_min_len(crate::grain::min_rows(l))
            .zip(spins.par_chunks(l))
            .enumerate()
            .for_each(|(row, (out, sites))| {
                for colour in 0..2 {
                    let o = self.row_first(row, colour);
                    let half = &mut out[colour * self.wr as usize..][..self.wr as usize];
                    for (j, &s) in sites[o..].iter().step_by(2).enumerate() {
                        half[j / BITS] |= u32::from(s & 1) << (j % BITS);
                    }
                }
            });
        words
    }

    /// The byte spins of the packed interior `words` (`pack` undone).
    pub fn unpack(&self, words: &[u32]) -> Vec<u8> {
        let l = self.l as usize;
        let mut spins = vec![0u8; self.rows as usize * l];
        spins
            .par_chunks_mut(l).with_min_len(crate::grain::min_rows(l))
            .zip(words.par_chunks(self.row_words()))
            .enumerate()
            .for_each(|(row, (sites, got))| {
                for colour in 0..2 {
                    let o = self.row_first(row, colour);
                    let half = &got[colour * self.wr as usize..][..self.wr as usize];
                    for (j, s) in sites[o..].iter_mut().step_by(2).enumerate() {
                        *s = (half[j / BITS] >> (j % BITS) & 1) as u8;
                    }
                }
            });
        spins
    }

    /// The geometry parameters (`MSC_SLAB` in kernels/spin.cu).
    fn args<'a>(&'a self, b: &mut LaunchArgs<'a>) {
        b.arg(&self.rows)
            .arg(&self.wr)
            .arg(&self.l)
            .arg(&self.rpp)
            .arg(&self.first_parity)
            .arg(&self.offset);
    }
}

/// A slab of Ising spins, packed, in GPU memory.
pub struct GpuMsc<'h> {
    gpu: &'h Gpu,
    slab: Slab,
    layout: Layout,
    words: CudaSlice<u32>,
    metropolis: Kernel,
    tally: Kernel,
    start: Kernel,
}

impl<'h> GpuMsc<'h> {
    pub fn new(gpu: &'h Gpu, slab: Slab, layout: Layout) -> Result<Self> {
        let f = |name: &str| gpu.function(FILE, name);
        let d = layout.dim;
        Ok(GpuMsc {
            gpu,
            slab,
            layout,
            words: gpu.zeros("packed spins", layout.field_words())?,
            metropolis: f(&format!("spin_msc_metropolis_{d}d"))?,
            tally: f(&format!("spin_msc_tally_{d}d"))?,
            start: f("spin_msc_start")?,
        })
    }

    /// Words of one colour, a thread each in a half-sweep.
    fn colour_words(&self) -> u64 {
        self.layout.interior_words() as u64 / 2
    }

    /// Every site to its start state (`model::start_state`): 0, or the hot start's draw.
    pub fn reset(&mut self, hot: Option<u64>) -> Result<()> {
        let (key, hot) = (hot.unwrap_or(0), u32::from(hot.is_some()));
        let layout = &self.layout;
        self.gpu
            .launch(&self.start, grid(2 * self.colour_words()), |b| {
                b.arg(&mut self.words);
                layout.args(b);
                b.arg(&key).arg(&hot);
            })
    }

    /// The slab's spins as bytes, on the host.
    pub fn local(&self) -> Result<Vec<u8>> {
        let (plane, n) = (self.layout.plane_words(), self.layout.interior_words());
        let words = self
            .gpu
            .stream
            .clone_dtoh(&self.words.slice(plane..plane + n))
            .map_err(|e| gpu_error("copy the packed spins to the host", e))?;
        Ok(self.layout.unpack(&words))
    }

    /// Replace the slab's spins (a checkpoint's bytes).
    pub fn set_local(&mut self, spins: &[u8]) -> Result<()> {
        let (plane, words) = (self.layout.plane_words(), self.layout.pack(spins));
        self.gpu
            .stream
            .memcpy_htod(
                &words,
                &mut self.words.slice_mut(plane..plane + words.len()),
            )
            .map_err(|e| gpu_error("upload the packed spins", e))
    }

    fn exchange(&mut self, ex: &GpuExchange) -> Result<()> {
        let plane = self.layout.plane_words();
        halo::exchange_gpu_planes(ex, &self.slab, plane, &mut self.words, self.gpu)
    }

    /// One checkerboard sweep, as `CpuSpins::metropolis` (collective).
    pub fn metropolis(
        &mut self,
        ex: &GpuExchange,
        table: &CudaSlice<u64>,
        keys: [u64; 2],
    ) -> Result<()> {
        let cfg = grid(self.colour_words());
        for (colour, key) in keys.into_iter().enumerate() {
            self.exchange(ex)?;
            let colour = colour as u32;
            let layout = &self.layout;
            self.gpu.launch(&self.metropolis, cfg, |b| {
                b.arg(&mut self.words);
                layout.args(b);
                b.arg(&colour).arg(&key).arg(table);
            })?;
        }
        Ok(())
    }

    /// As `CpuSpins::tally` for q = 2 (collective: refreshes the ghost planes).
    pub fn tally(&mut self, ex: &GpuExchange, model: &Model) -> Result<Vec<u64>> {
        debug_assert!(model.q == 2);
        self.exchange(ex)?;
        let mut counts = self.gpu.zeros::<u64>("spin tallies", 3)?;
        let cfg = blocks(self.colour_words().div_ceil(u64::from(THREADS)), THREADS);
        let layout = &self.layout;
        self.gpu.launch(&self.tally, cfg, |b| {
            b.arg(&self.words);
            layout.args(b);
            b.arg(&mut counts);
        })?;
        self.gpu.download("spin tallies", &counts, 3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lattice::checkerboard;
    use crate::lattice::Lattice;
    use crate::rng::draw;
    use crate::spin::model::{acceptance_planes, metropolis_accept, PLANES};

    /// a + b + c of one-bit lanes (kernels/spin.cu full_add).
    fn full_add(a: u32, b: u32, c: u32) -> (u32, u32) {
        let t = a ^ b;
        (t ^ c, (a & b) | (t & c))
    }

    /// kernels/spin.cu msc_metropolis step for step (neighbour words, bit-sliced count, the
    /// drawing lanes' uniforms compared with their thresholds a plane at a time until every
    /// lane is decided) on a host copy of a one-slab packed field, its ghost planes filled by
    /// the periodic wrap first.
    fn kernel_half_sweep(
        layout: &Layout,
        field: &mut [u32],
        colour: usize,
        key: u64,
        table: &[u64],
    ) {
        let (wr, rpp, l) = (layout.wr as usize, layout.rpp as usize, layout.l as usize);
        let (plane, interior) = (layout.plane_words(), layout.interior_words());
        field.copy_within(interior..interior + plane, 0);
        field.copy_within(plane..2 * plane, interior + plane);
        let before = field.to_vec();
        let word = |frow: usize, c: usize, w: usize| (frow * 2 + c) * wr + w;
        let other = 1 - colour;
        for rho in 0..layout.rows as usize {
            let (frow, o) = (rho + rpp, layout.row_first(rho, colour));
            for w in 0..wr {
                let same = before[word(frow, other, w)];
                let mut n = vec![same];
                n.push(if o == 0 {
                    (same << 1) | (before[word(frow, other, (w + wr - 1) % wr)] >> 31)
                } else {
                    (same >> 1) | (before[word(frow, other, (w + 1) % wr)] << 31)
                });
                n.push(before[word(frow - rpp, other, w)]);
                n.push(before[word(frow + rpp, other, w)]);
                if layout.dim == 3 {
                    let r = rho % l;
                    n.push(before[word(if r > 0 { frow - 1 } else { frow + l - 1 }, other, w)]);
                    n.push(before[word(if r + 1 < l { frow + 1 } else { frow + 1 - l }, other, w)]);
                }
                let s = before[word(frow, colour, w)];
                let eq: Vec<u32> = n.iter().map(|&n| !(s ^ n)).collect();
                let (a, ka) = full_add(eq[0], eq[1], eq[2]);
                // The lanes that draw, by threshold (kernels/spin.cu msc_classes).
                let classes: [(u32, u64); 3] = if layout.dim == 2 {
                    let (e0, kb) = (a ^ eq[3], a & eq[3]);
                    let (e1, e2) = (ka ^ kb, ka & kb);
                    let need = e2 | (e1 & e0);
                    [(need & !e2, table[6]), (e2, table[8]), (0, 0)]
                } else {
                    let (b, kb) = full_add(eq[3], eq[4], eq[5]);
                    let (e0, kc) = (a ^ b, a & b);
                    let (e1, e2) = full_add(ka, kb, kc);
                    [
                        (e2 & !e1 & !e0, table[8]),
                        (e2 & !e1 & e0, table[10]),
                        (e2 & e1, table[12]),
                    ]
                };
                let need = classes.iter().fold(0, |m, c| m | c.0);
                let acceptance_word = (layout.offset >> 5) + ((rho * 2 + o) * wr + w) as u64;
                let mut flip = !need;
                let mut undecided = need;
                let mut k = 0;
                while undecided != 0 && k < PLANES {
                    let (low, high) = acceptance_planes(key, acceptance_word, k / 2);
                    for plane in [low, high] {
                        let bit = PLANES - 1 - k;
                        let wanted = classes
                            .iter()
                            .filter(|c| c.1 >> bit & 1 == 1)
                            .fold(0, |m, c| m | c.0);
                        let differ = (plane ^ wanted) & undecided;
                        flip |= differ & wanted;
                        undecided &= !differ;
                        k += 1;
                        if k == PLANES {
                            break;
                        }
                    }
                }
                field[word(frow, colour, w)] = s ^ flip;
            }
        }
    }

    /// The CPU's half-sweep for q = 2 (cpu.rs), site by site: ΔE = 2e - z from the e equal
    /// neighbours, flip when ΔE <= 0 or the site's uniform passes table[ΔE + z].
    fn site_half_sweep(lattice: &Lattice, spins: &mut [u8], colour: u8, key: u64, table: &[u64]) {
        let before = spins.to_vec();
        let z = 2 * lattice.dim;
        for g in 0..lattice.sites() {
            if checkerboard::colour(lattice, g) != colour {
                continue;
            }
            let s = before[g as usize];
            let e = (0..lattice.dim)
                .flat_map(|a| [lattice.up(g, a).unwrap(), lattice.down(g, a).unwrap()])
                .filter(|&n| before[n as usize] == s)
                .count();
            if 2 * e <= z || metropolis_accept(key, g, lattice.l, table[2 * e]) {
                spins[g as usize] = 1 - s;
            }
        }
    }

    /// The packed half-sweep's logic, run on the host, takes the CPU's decisions site for
    /// site over sweeps of a hot start, in 2D and 3D, at a high and a low temperature.
    #[test]
    fn the_packed_sweep_takes_the_site_by_site_decisions() {
        for (dim, l) in [(2, 128), (3, 64)] {
            let lattice = Lattice::new(dim, l, true).unwrap();
            let slab = Slab::new(lattice, 1, 0).unwrap();
            let layout = Layout::of(&slab).unwrap();
            let model = Model {
                q: 2,
                ising: true,
                dim,
            };
            for beta in [0.2, 0.6] {
                let table = model.metropolis_table(beta);
                let mut spins: Vec<u8> = (0..lattice.sites())
                    .map(|g| (draw(3, g) >> 63) as u8)
                    .collect();
                let mut field = vec![0u32; layout.field_words()];
                let plane = layout.plane_words();
                field[plane..plane + layout.interior_words()].copy_from_slice(&layout.pack(&spins));
                for sweep in 0..3u64 {
                    for colour in 0..2usize {
                        let key = draw(sweep, colour as u64);
                        site_half_sweep(&lattice, &mut spins, colour as u8, key, &table);
                        kernel_half_sweep(&layout, &mut field, colour, key, &table);
                    }
                    let packed = layout.unpack(&field[plane..plane + layout.interior_words()]);
                    assert!(packed == spins, "{dim}D beta {beta} sweep {sweep}");
                }
                // The chain moved: a start state that never changes would pass trivially.
                assert_ne!(
                    spins,
                    (0..lattice.sites())
                        .map(|g| (draw(3, g) >> 63) as u8)
                        .collect::<Vec<_>>()
                );
            }
        }
    }

    #[test]
    fn only_sides_of_whole_words_pack() {
        for (dim, l, packs) in [
            (2, 64, true),
            (2, 96, false),
            (3, 128, true),
            (2, 62, false),
        ] {
            let slab = Slab::new(Lattice::new(dim, l, true).unwrap(), 1, 0).unwrap();
            assert_eq!(Layout::of(&slab).is_some(), packs, "{dim}D L = {l}");
        }
    }

    /// Every site lands in a word of its own colour, at the bit the kernels read it from
    /// (bit j mod 32 of word j / 32 of its row and colour, x = 2j + o), and unpacking gives
    /// the spins back, for the slabs of 1 to 3 ranks.
    #[test]
    fn packing_puts_each_site_where_the_kernels_read_it_and_unpacks() {
        for (dim, l) in [(2, 128), (3, 64)] {
            let lattice = Lattice::new(dim, l, true).unwrap();
            for ranks in 1..=3 {
                for rank in 0..ranks {
                    let slab = Slab::new(lattice, ranks, rank).unwrap();
                    let layout = Layout::of(&slab).unwrap();
                    let spins: Vec<u8> = (0..slab.sites() as u64)
                        .map(|i| (draw(7, slab.global(i as usize)) >> 63) as u8)
                        .collect();
                    let words = layout.pack(&spins);
                    assert_eq!(words.len(), layout.interior_words());
                    assert_eq!(layout.unpack(&words), spins);
                    let l = l as usize;
                    for (i, &s) in spins.iter().enumerate() {
                        let (row, x) = (i / l, i % l);
                        let colour = checkerboard::colour(&lattice, slab.global(i)) as usize;
                        assert_eq!(x % 2, layout.row_first(row, colour));
                        let j = x / 2;
                        let word = (row * 2 + colour) * layout.wr as usize + j / BITS;
                        assert_eq!((words[word] >> (j % BITS) & 1) as u8, s);
                    }
                }
            }
        }
    }
}
