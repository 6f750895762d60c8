//! The cortex on a GPU (kernels/cortex.cu): the slab's neurons, sources and synapses stay in
//! GPU memory, built there by the same draws as the CPU's. Per step: phase 1 on the run's
//! stream; phase 2 on the inner core on a second stream while the r border rows of state
//! bytes travel to both neighbouring slabs (`lattice::halo::exchange_gpu_deep`: NCCL or
//! staged through MPI, into ghost-row buffers of their own), then phase 2 on the border. The
//! per-step sums stay on the GPU, 512 steps of them, copied to the host once per block.
//! Phase 2 gathers from a shared-memory copy of each tile's window of state bytes
//! (`phase2_tiled`) where the radius lets the window fit.

use super::checkpoint::{neuron_major, slot_major, Snapshot};
use super::network::{Wiring, CELLS, SOURCES};
use super::run::BLOCK;
use super::slab::{Layout, StepInput, Sums, EXP_SLOTS, MAX_WASHOUT, TABLE_SLOTS};
use super::timing::{PhaseTimes, StepEvents};
use crate::comm::gpu::GpuExchange;
use crate::comm::{GpuTransport, World};
use crate::device::{gpu_error, grid, Gpu, Kernel, THREADS};
use crate::error::Result;
use crate::lattice::halo;
use crate::rng::stream_key;
use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg};
use std::sync::Arc;

const FILE: &str = "cortex.cu";

/// kernels/cortex.cu's `Step`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct StepArgs {
    step: u64,
    noise_key: u64,
    boost_key: u64,
    base_i: [f64; 2],
    noise: [f64; 2],
    boost_fraction: f64,
    amplitude: [f64; 2],
    decay: [f64; 2],
    scheme: u32,
    clamp: u32,
    table: u32,
    w: u32,
}

// SAFETY: a plain #[repr(C)] struct of numbers, laid out as the kernels' `Step`.
unsafe impl DeviceRepr for StepArgs {}

/// Side of phase2_tiled's square tiles of neurons (kernels/cortex.cu's TILE).
const TILE: u64 = 32;

/// Shared memory a block takes without asking for more.
const SHARED_BYTES: u64 = 48 * 1024;

/// The bytes of phase2_tiled's window of state bytes at radius `r`, where they fit a block's
/// shared memory (radii up to 94); phase 2 reads the state from global memory beyond.
fn tile_window(r: u64) -> Option<u32> {
    let bytes = (TILE + 2 * r).pow(2);
    (bytes <= SHARED_BYTES).then_some(bytes as u32)
}

/// A slab of neurons in GPU memory.
pub struct GpuCortex<'h> {
    gpu: &'h Gpu,
    side: Arc<CudaStream>,
    exchange: GpuExchange<'h>,
    pub layout: Layout,
    table: bool,
    phase1: Kernel,
    phase2: Kernel,
    c_or_a: CudaSlice<f64>,
    d_or_b: CudaSlice<f64>,
    delay: CudaSlice<u8>,
    v: CudaSlice<f64>,
    u: CudaSlice<f64>,
    state: CudaSlice<u8>,
    below: CudaSlice<u8>,
    above: CudaSlice<u8>,
    offsets: CudaSlice<u16>,
    ring: CudaSlice<u32>,
    trace: CudaSlice<f64>,
    ring_table: CudaSlice<f32>,
    washout: CudaSlice<f32>,
    /// Three words per step of the block (`phase1`).
    sums: CudaSlice<u64>,
    /// The steps' timing events, where the run times its phases.
    events: Option<StepEvents>,
}

impl<'h> GpuCortex<'h> {
    /// Device bytes per neuron: v, u, the varying constants (32), delay and state (2), the
    /// sources (2k), and the synapses (`exp` ring and traces 80, `table` ring 300).
    pub fn bytes_per_neuron(k: u32, table: bool) -> u64 {
        34 + 2 * u64::from(k) + if table { 300 } else { 80 }
    }

    /// The slab's neurons and sources drawn on the GPU (collective: the exchange is opened).
    pub fn new(
        world: &'h World,
        gpu: &'h Gpu,
        transport: GpuTransport,
        layout: Layout,
        seed: u64,
        wiring: &Wiring,
        table: bool,
    ) -> Result<Self> {
        let n = layout.n();
        let ghost = layout.ghost_items();
        let f = |name: &str| gpu.function(FILE, name);
        let side = gpu
            .ctx
            .new_stream()
            .map_err(|e| gpu_error("create a stream", e))?;
        let mut me = GpuCortex {
            gpu,
            side,
            exchange: GpuExchange::open(world, gpu, transport)?,
            layout,
            table,
            phase1: f("phase1")?,
            phase2: f(if tile_window(u64::from(layout.r)).is_some() {
                "phase2_tiled"
            } else {
                "phase2"
            })?,
            c_or_a: gpu.zeros("constants", n)?,
            d_or_b: gpu.zeros("constants", n)?,
            delay: gpu.zeros("delays", n)?,
            v: gpu.zeros("potentials", n)?,
            u: gpu.zeros("recovery", n)?,
            state: gpu.zeros("state bytes", n)?,
            below: gpu.zeros("ghost rows", ghost)?,
            above: gpu.zeros("ghost rows", ghost)?,
            offsets: gpu.zeros("sources", n * layout.k as usize)?,
            ring: gpu.zeros("spike ring", if table { 1 } else { EXP_SLOTS * n })?,
            trace: gpu.zeros("traces", if table { 1 } else { 2 * n })?,
            ring_table: gpu.zeros("washout ring", if table { TABLE_SLOTS * n } else { 1 })?,
            washout: gpu.zeros("washout table", 2 * MAX_WASHOUT)?,
            sums: gpu.zeros("step sums", 3 * BLOCK as usize)?,
            events: None,
        };
        me.draw(seed, wiring)?;
        Ok(me)
    }

    fn draw(&mut self, seed: u64, wiring: &Wiring) -> Result<()> {
        let (n, gid0) = (self.layout.n() as u64, self.layout.gid(0));
        let (k, r) = (self.layout.k, self.layout.r);
        let (key, l, all) = (
            stream_key(seed, SOURCES),
            self.layout.l,
            u32::from(wiring.all_to_all),
        );
        let sources = self.gpu.function(FILE, "sources")?;
        self.gpu.launch(&sources, grid(n * u64::from(k)), |a| {
            a.arg(&key)
                .arg(&n)
                .arg(&gid0)
                .arg(&k)
                .arg(&r)
                .arg(&l)
                .arg(&all)
                .arg(&mut self.offsets);
        })?;
        let (ratio, delay_min) = (wiring.ratio, u32::from(wiring.delays[0]));
        let delay_span = f64::from(wiring.delays[1] - wiring.delays[0] + 1);
        let key = stream_key(seed, CELLS);
        let neurons = self.gpu.function(FILE, "neurons")?;
        self.gpu.launch(&neurons, grid(n), |a| {
            a.arg(&key)
                .arg(&n)
                .arg(&gid0)
                .arg(&ratio)
                .arg(&delay_min)
                .arg(&delay_span)
                .arg(&mut self.state)
                .arg(&mut self.c_or_a)
                .arg(&mut self.d_or_b)
                .arg(&mut self.v)
                .arg(&mut self.u)
                .arg(&mut self.delay);
        })?;
        self.gpu.sync("draw the network")
    }

    /// Excitatory neurons of the slab.
    pub fn excitatory(&self) -> Result<u64> {
        let state = self
            .gpu
            .download("state bytes", &self.state, self.layout.n())?;
        Ok(state
            .iter()
            .filter(|&&s| s & super::network::INHIBITORY == 0)
            .count() as u64)
    }

    fn args(&self, input: &StepInput) -> StepArgs {
        StepArgs {
            step: input.step,
            noise_key: input.noise_key,
            boost_key: input.boost_key,
            base_i: input.base_i,
            noise: input.noise,
            boost_fraction: input.boost_fraction,
            amplitude: input.amplitude,
            decay: input.decay,
            scheme: input.scheme.code(),
            clamp: u32::from(input.clamp),
            table: u32::from(self.table),
            w: input.washout.len() as u32,
        }
    }

    /// The washout table of the settings in force (after a change).
    pub fn set_washout(&mut self, washout: &[[f32; 2]]) -> Result<()> {
        let flat: Vec<f32> = washout.iter().flatten().copied().collect();
        self.gpu
            .stream
            .memcpy_htod(&flat, &mut self.washout.slice_mut(0..flat.len()))
            .map_err(|e| gpu_error("upload the washout table", e))
    }

    /// One step (collective); its sums stay on the GPU until `take_sums`.
    pub fn step(&mut self, input: &StepInput) -> Result<()> {
        let s = self.args(input);
        if input.step.is_multiple_of(BLOCK) {
            self.gpu.clear("step sums", &mut self.sums)?;
        }
        let (n, gid0) = (self.layout.n() as u64, self.layout.gid(0));
        self.mark(false, true)?;
        self.gpu.launch(&self.phase1, grid(n), |a| {
            a.arg(&s)
                .arg(&n)
                .arg(&gid0)
                .arg(&self.c_or_a)
                .arg(&self.d_or_b)
                .arg(&self.delay)
                .arg(&mut self.v)
                .arg(&mut self.u)
                .arg(&mut self.state)
                .arg(&mut self.ring)
                .arg(&mut self.trace)
                .arg(&mut self.ring_table)
                .arg(&mut self.sums);
        })?;
        self.mark(false, false)?;
        let (inner, border) = self.layout.inner_and_border();
        self.side
            .join(&self.gpu.stream)
            .map_err(|e| gpu_error("order the streams", e))?;
        self.phase2_on(&s, inner, true)?;
        self.mark(true, false)?;
        halo::exchange_gpu_deep(
            &self.exchange,
            &self.layout.slab,
            self.layout.r as usize,
            &self.state,
            (&mut self.below, &mut self.above),
            self.gpu,
        )?;
        self.mark(false, false)?;
        for rows in border {
            self.phase2_on(&s, rows, false)?;
        }
        self.mark(false, false)?;
        self.gpu
            .stream
            .join(&self.side)
            .map_err(|e| gpu_error("order the streams", e))?;
        self.mark(false, false)
    }

    /// The slab with its steps' phases timed (`timing`).
    pub fn timed(mut self, on: bool) -> Self {
        self.events = on.then(StepEvents::default);
        self
    }

    /// A timing mark on the side stream or the run's (`timing`); `first` opens a step.
    fn mark(&mut self, side: bool, first: bool) -> Result<()> {
        let stream = if side { &self.side } else { &self.gpu.stream };
        match &mut self.events {
            Some(events) => events.mark(stream, first),
            None => Ok(()),
        }
    }

    /// The phases' seconds since they were last taken (zeros unless timed); waits for them.
    pub fn take_times(&mut self) -> Result<PhaseTimes> {
        match &mut self.events {
            Some(events) => {
                self.gpu.sync("the timed steps")?;
                events.take()
            }
            None => Ok(PhaseTimes::default()),
        }
    }

    /// Phase 2 on local rows `rows`, on the side stream (the inner core) or the run's.
    fn phase2_on(&mut self, s: &StepArgs, rows: std::ops::Range<usize>, side: bool) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let l = self.layout.l;
        let (n, r, k) = (
            self.layout.n() as u64,
            u64::from(self.layout.r),
            self.layout.k,
        );
        let (row0, row1) = (rows.start as u64, rows.end as u64);
        let stream = if side { &self.side } else { &self.gpu.stream };
        let GpuCortex {
            gpu,
            phase2,
            offsets,
            state,
            below,
            above,
            delay,
            ring,
            ring_table,
            washout,
            ..
        } = self;
        let config = match tile_window(r) {
            Some(bytes) => LaunchConfig {
                grid_dim: (
                    l.div_ceil(TILE) as u32,
                    (row1 - row0).div_ceil(TILE) as u32,
                    1,
                ),
                block_dim: (THREADS, 1, 1),
                shared_mem_bytes: bytes,
            },
            None => grid((row1 - row0) * l),
        };
        gpu.launch_on(stream, phase2, config, |a| {
            a.arg(s)
                .arg(&n)
                .arg(&l)
                .arg(&r)
                .arg(&k)
                .arg(&row0)
                .arg(&row1)
                .arg(&*offsets)
                .arg(&*state)
                .arg(&*below)
                .arg(&*above)
                .arg(&*delay)
                .arg(ring)
                .arg(ring_table)
                .arg(&*washout);
        })
    }

    /// The sums of the block's `steps` steps, from the GPU.
    pub fn take_sums(&self, steps: usize) -> Result<Vec<Sums>> {
        let words = self.gpu.download("step sums", &self.sums, 3 * steps)?;
        Ok(words
            .chunks(3)
            .map(|w| Sums {
                v_exc: w[0] as i64,
                fired: [w[1], w[2]],
            })
            .collect())
    }

    /// The neurons' dynamic state, on the host.
    pub fn snapshot(&self) -> Result<Snapshot> {
        let n = self.layout.n();
        let mut snap = Snapshot {
            v: self.gpu.download("potentials", &self.v, n)?,
            u: self.gpu.download("recovery", &self.u, n)?,
            state: self.gpu.download("state bytes", &self.state, n)?,
            ..Snapshot::default()
        };
        if self.table {
            snap.table = neuron_major(
                &self
                    .gpu
                    .download("washout ring", &self.ring_table, TABLE_SLOTS * n)?,
                n,
            );
        } else {
            snap.ring = neuron_major(
                &self.gpu.download("spike ring", &self.ring, EXP_SLOTS * n)?,
                n,
            );
            snap.trace = self.gpu.download("traces", &self.trace, 2 * n)?;
        }
        Ok(snap)
    }

    /// Continue from a snapshot.
    pub fn restore(&mut self, snap: &Snapshot) -> Result<()> {
        let n = self.layout.n();
        let put = |host: &[f64], dev: &mut CudaSlice<f64>, gpu: &Gpu| {
            gpu.stream
                .memcpy_htod(host, &mut dev.slice_mut(0..host.len()))
                .map_err(|e| gpu_error("upload a checkpoint", e))
        };
        put(&snap.v, &mut self.v, self.gpu)?;
        put(&snap.u, &mut self.u, self.gpu)?;
        let err = |e| gpu_error("upload a checkpoint", e);
        self.gpu
            .stream
            .memcpy_htod(&snap.state, &mut self.state.slice_mut(0..n))
            .map_err(err)?;
        if self.table {
            let ring = slot_major(&snap.table, n);
            self.gpu
                .stream
                .memcpy_htod(&ring, &mut self.ring_table.slice_mut(0..ring.len()))
                .map_err(err)?;
        } else {
            let ring = slot_major(&snap.ring, n);
            self.gpu
                .stream
                .memcpy_htod(&ring, &mut self.ring.slice_mut(0..ring.len()))
                .map_err(err)?;
            put(&snap.trace, &mut self.trace, self.gpu)?;
        }
        self.gpu.sync("upload a checkpoint")
    }

    /// (v, u) of local neuron `i`.
    pub fn probe(&self, i: usize) -> Result<[f64; 2]> {
        let get = |x: &CudaSlice<f64>| self.gpu.item("a probe", x, i);
        Ok([get(&self.v)?, get(&self.u)?])
    }

    /// Global ids of the neurons that fired in the last step.
    pub fn fired(&self) -> Result<Vec<u64>> {
        let state = self
            .gpu
            .download("state bytes", &self.state, self.layout.n())?;
        Ok(state
            .iter()
            .enumerate()
            .filter(|(_, s)| *s & 1 == 1)
            .map(|(i, _)| self.layout.gid(i))
            .collect())
    }
}
