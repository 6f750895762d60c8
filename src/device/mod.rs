//! Devices: the CPU (rayon, always there) and CUDA GPUs through cudarc.
//!
//! cudarc loads libcuda and libnvrtc at run time ("dynamic-loading"), so tessera builds and
//! runs where there is no CUDA at all. Its entry points panic when a library is missing, so
//! every path first asks whether the library can be loaded and turns absence into an error.
//! Kernels (`kernel`) are the CUDA C files in `kernels/`, built into the binary, compiled by
//! NVRTC for the GPU found with the shared prelude before them, and launched through
//! `Gpu::launch`.

mod kernel;
pub mod memory;
pub mod scan;

pub use kernel::{blocks, compile, filling_grid, grid, Kernel, KERNELS, THREADS};

use crate::error::{Error, Result};
use cudarc::driver::sys::CUdevice_attribute as A;
use cudarc::driver::{CudaContext, CudaModule, CudaStream};
use std::sync::{Arc, Mutex};

/// What a run computes on, once chosen.
pub enum Selected {
    Cpu,
    Gpu(Gpu),
}

/// Where a rank computes: `auto` takes its GPU when one is there, else the CPU.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Device {
    Cpu,
    Gpu,
    Auto,
}

/// A GPU opened for this rank.
pub struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub ordinal: usize,
    pub name: String,
    pub arch: String,
    /// Kernel files compiled so far, by name.
    modules: Mutex<Vec<(&'static str, Arc<CudaModule>)>>,
}

/// A failed CUDA or NCCL call as an error naming what was being done.
pub fn gpu_error(what: impl std::fmt::Display, e: impl std::fmt::Debug) -> Error {
    Error::Gpu(format!("{what}: {e:?}"))
}

/// Number of CUDA GPUs visible, or None when the CUDA driver library cannot be loaded.
pub fn visible_gpus() -> Option<usize> {
    // SAFETY: only tries to dlopen the driver library.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return None;
    }
    CudaContext::device_count().ok().map(|n| n.max(0) as usize)
}

fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the NVRTC library.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// What choosing a device needs of the ranks: where this one sits on its node, and a vote.
/// `comm::World` implements it (comm sits above this layer: its GPU exchanges use `Gpu`).
pub trait Ranks {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// This rank's index among the ranks on its node (selects its GPU).
    fn local_rank(&self) -> usize;
    /// How many ranks share this node.
    fn local_size(&self) -> usize;
    /// Whether `yes` holds on every rank (collective).
    fn all(&self, yes: bool) -> bool;
}

/// Choose the device for this rank. `Auto` takes a GPU when one is visible and NVRTC can be
/// loaded; `Gpu` insists. Collective: the ranks agree, so a node without a GPU fails the job
/// with one line instead of leaving the others waiting.
pub fn select(world: &impl Ranks, requested: Device) -> Result<Selected> {
    if requested == Device::Cpu {
        // Every rank read the same setting: no probe, no collective.
        return Ok(Selected::Cpu);
    }
    let gpus = visible_gpus().unwrap_or(0);
    let usable = gpus > 0 && nvrtc_present();
    let everywhere = world.all(usable);
    match requested {
        Device::Cpu => Ok(Selected::Cpu),
        Device::Auto if !everywhere => {
            log::info!("device = \"auto\": no usable GPU on every rank, computing on the CPU");
            Ok(Selected::Cpu)
        }
        Device::Gpu if !everywhere => Err(Error::Unavailable(format!(
            "device = \"gpu\" was requested, but {}",
            if world.size() == 1 {
                unusable_reason(gpus)
            } else {
                "at least one rank has no usable GPU (CUDA driver, a visible GPU and NVRTC are all needed)".into()
            }
        ))),
        Device::Auto | Device::Gpu => open(world, gpus).map(Selected::Gpu),
    }
}

fn unusable_reason(gpus: usize) -> String {
    if visible_gpus().is_none() {
        "the CUDA driver library (libcuda.so) cannot be loaded".into()
    } else if gpus == 0 {
        "no CUDA GPU is visible".into()
    } else {
        "the NVRTC library (libnvrtc.so) cannot be loaded".into()
    }
}

/// One rank per GPU: the rank's index on its node picks the GPU (a launcher that gives each
/// rank one GPU, such as `srun --gpus-per-task=1`, leaves one visible: that one).
fn open(world: &impl Ranks, gpus: usize) -> Result<Gpu> {
    let ordinal = if gpus == 1 { 0 } else { world.local_rank() };
    if ordinal >= gpus {
        return Err(Error::Gpu(format!(
            "{} ranks share this node but it has {gpus} GPUs: start one rank per GPU",
            world.local_size()
        )));
    }
    let ctx = CudaContext::new(ordinal).map_err(|e| gpu_error(format!("open GPU {ordinal}"), e))?;
    let name = ctx.name().map_err(|e| gpu_error("device name", e))?;
    let (major, minor) = ctx
        .compute_capability()
        .map_err(|e| gpu_error("compute capability", e))?;
    let arch = format!("sm_{major}{minor}");
    // A stream of our own: the legacy default stream serialises with every other stream,
    // NCCL's included.
    let stream = ctx
        .new_stream()
        .map_err(|e| gpu_error("create a stream", e))?;
    // The first allocation and copy set up the stream-ordered memory pool and the copy
    // path (about 8 ms on an H200): made here, with the context, so no timed phase pays
    // them.
    let mut warm = stream
        .alloc_zeros::<u64>(1)
        .map_err(|e| gpu_error("allocate on the GPU", e))?;
    stream
        .memcpy_htod(&[0u64], &mut warm)
        .and_then(|_| stream.synchronize())
        .map_err(|e| gpu_error("copy to the GPU", e))?;
    log::info!("rank {} uses GPU {ordinal}: {name} ({arch})", world.rank());
    Ok(Gpu {
        ctx,
        stream,
        ordinal,
        name,
        arch,
        modules: Mutex::new(Vec::new()),
    })
}

/// Host memory page-locked by `Gpu::pin`; unlocked on drop, which must come before the memory
/// is freed.
pub struct Pinned {
    ptr: *mut std::ffi::c_void,
}

impl Pinned {
    /// Whether this is the memory that starts at `ptr`.
    pub fn holds<T>(&self, ptr: *const T) -> bool {
        self.ptr as *const T == ptr
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: `ptr` was registered by `Gpu::pin` and is still allocated (see the type's doc).
        unsafe { cudarc::driver::sys::cuMemHostUnregister(self.ptr) };
    }
}

impl Gpu {
    /// Free and total bytes of this GPU's memory.
    pub fn memory(&self) -> Result<(usize, usize)> {
        self.ctx
            .mem_get_info()
            .map_err(|e| gpu_error("memory info", e))
    }

    /// Threads the GPU can hold at once (multiprocessors x threads each), registers aside.
    /// (`resident_blocks` counts the blocks of one kernel, its registers included.)
    pub fn resident_threads(&self) -> Result<u32> {
        let per_sm = self.attribute(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?;
        Ok(self.multiprocessors()? * per_sm.max(1) as u32)
    }

    /// The GPU's streaming multiprocessors.
    pub fn multiprocessors(&self) -> Result<u32> {
        let sms = self.attribute(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        Ok(sms.max(1) as u32)
    }

    fn attribute(&self, a: A) -> Result<i32> {
        self.ctx
            .attribute(a)
            .map_err(|e| gpu_error("device attribute", e))
    }

    /// Page-lock host memory that device copies will land in, so they run at full link speed
    /// instead of through the driver's staging buffers. None when the driver refuses.
    pub fn pin<T>(&self, host: &mut [T]) -> Option<Pinned> {
        let ptr = host.as_mut_ptr() as *mut std::ffi::c_void;
        let bytes = std::mem::size_of_val(host);
        self.ctx.bind_to_thread().ok()?;
        // SAFETY: `host` is a live allocation of `bytes` bytes; `Pinned`'s owner must drop it
        // before freeing that memory (its doc says so).
        let result = unsafe { cudarc::driver::sys::cuMemHostRegister_v2(ptr, bytes, 0) };
        (result == cudarc::driver::sys::CUresult::CUDA_SUCCESS).then_some(Pinned { ptr })
    }

    pub fn describe(&self) -> String {
        format!("gpu {} ({}, {})", self.ordinal, self.name, self.arch)
    }
}
