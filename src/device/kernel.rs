//! Kernels: the CUDA C files in `kernels/`, built into the binary and compiled by NVRTC for
//! the GPU found, each file on its first use, and the one place they are launched.
//!
//! Every file is compiled as one program with `kernels/prelude.cuh` put before it (types, warp
//! helpers, the counter-based RNG); NVRTC takes no in-memory headers through cudarc, so the
//! prelude is prepended, and a `#line 1` directive after it keeps the compiler's line numbers
//! those of the file.

use super::{gpu_error, Gpu};
use crate::error::{Error, Result};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    CudaFunction, CudaModule, CudaSlice, CudaStream, DeviceRepr, LaunchArgs, LaunchConfig,
    ValidAsZeroBits,
};
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};
use std::sync::{Arc, OnceLock};

/// The prelude of every kernel file.
const PRELUDE: &str = include_str!("../../kernels/prelude.cuh");

/// Every kernel source, by file name: each `kernels/*.cu`, listed by build.rs.
pub const KERNELS: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

/// Kernel files compiled without FMA contraction (`--fmad=false`): their results must match
/// the CPU twin bit for bit (the mesh smoothers compare sums and take the same decisions;
/// the Erdős–Rényi split tree's draws invert sums of probabilities), and a fused
/// multiply-add rounds once where the CPU rounds twice.
const STRICT_FLOAT: &[&str] = &["mesh.cu", "generators.cu"];

/// Threads per block of the one-thread-per-item kernels.
pub const THREADS: u32 = 256;

/// A launch of one thread per item, `items` of them (at least one block).
pub fn grid(items: u64) -> LaunchConfig {
    blocks(items.div_ceil(THREADS as u64), THREADS)
}

/// A grid of as many blocks of THREADS as the GPU holds at once (`Gpu::resident_blocks` of
/// the kernel), for grid-stride kernels.
pub fn filling_grid(resident_blocks: u32) -> LaunchConfig {
    blocks(u64::from(resident_blocks), THREADS)
}

/// A launch of `count` blocks (at least one) of `threads` threads.
pub fn blocks(count: u64, threads: u32) -> LaunchConfig {
    LaunchConfig {
        // The most blocks a grid's x dimension takes.
        grid_dim: (count.clamp(1, i32::MAX as u64) as u32, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// A kernel function, with its name for errors.
pub struct Kernel {
    func: CudaFunction,
    name: String,
    /// `Gpu::resident_blocks`, once asked.
    resident: OnceLock<u32>,
}

/// A kernel file's name and source, from `KERNELS`, or (a measurement switch, for comparing
/// kernel variants with one binary) from the file of that name in `TESSERA_KERNELS_DIR`.
fn kernel_source(file: &str) -> Result<(&'static str, &'static str)> {
    let (file, source) = KERNELS
        .iter()
        .find(|(f, _)| *f == file)
        .copied()
        .ok_or_else(|| Error::Gpu(format!("no kernel file kernels/{file}")))?;
    let Some(dir) = std::env::var_os("TESSERA_KERNELS_DIR") else {
        return Ok((file, source));
    };
    let path = std::path::Path::new(&dir).join(file);
    match std::fs::read_to_string(&path) {
        // Read once per compile; the few programs of a run keep their text.
        Ok(text) => {
            log::info!("kernels/{file}: compiled from {}", path.display());
            Ok((file, Box::leak(text.into_boxed_str())))
        }
        Err(_) => Ok((file, source)),
    }
}

fn load_function(module: &Arc<CudaModule>, file: &str, name: &str) -> Result<Kernel> {
    let func = module
        .load_function(name)
        .map_err(|e| gpu_error(format!("kernel {name} in kernels/{file}"), e))?;
    Ok(Kernel {
        func,
        name: name.to_string(),
        resident: OnceLock::new(),
    })
}

/// The program NVRTC compiles for kernels/`file`: `#define` lines for `defines`, the
/// prelude, then the file, numbered from its first line.
fn program(file: &str, defines: &[(&str, u64)], source: &str) -> String {
    let mut text: String = defines
        .iter()
        .map(|(k, v)| format!("#define {k} {v}\n"))
        .collect();
    text.push_str(PRELUDE);
    text.push_str(&format!("\n#line 1 \"{file}\"\n"));
    text.push_str(source);
    text
}

/// Compile one kernel file (with the prelude) to PTX for `arch` (e.g. "sm_90"). Needs NVRTC
/// only, no GPU.
pub fn compile(file: &str, source: &str, arch: &str) -> Result<Ptx> {
    compile_program(file, &program(file, &[], source), arch)
}

fn compile_program(file: &str, text: &str, arch: &str) -> Result<Ptx> {
    if !super::nvrtc_present() {
        return Err(Error::Unavailable(
            "the NVRTC library (libnvrtc.so) cannot be loaded: put CUDA's lib directory on LD_LIBRARY_PATH".into(),
        ));
    }
    let mut flags = vec!["--std=c++17".to_string()];
    if STRICT_FLOAT.contains(&file) {
        flags.push("--fmad=false".into());
    }
    let options = CompileOptions {
        // NVRTC wants the architecture as a static string; one per process and arch is fine.
        arch: Some(Box::leak(arch.to_string().into_boxed_str())),
        options: flags,
        name: Some(file.to_string()),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(text, options).map_err(|e| {
        let why = match e {
            // The compiler's log, folded onto one line.
            CompileError::CompileError { log, .. } => log
                .to_string_lossy()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            other => format!("{other:?}"),
        };
        Error::Gpu(format!(
            "NVRTC could not compile kernels/{file} for {arch}: {why}"
        ))
    })
}

/// Bytes of the copy test (`Gpu::copy_rate`): well beyond any L2 cache, small beside a
/// device's memory.
const COPY_TEST_BYTES: usize = 1 << 28;

impl Gpu {
    /// A kernel by file and function name; the file is compiled on its first use.
    pub fn function(&self, file: &str, name: &str) -> Result<Kernel> {
        let (file, source) = kernel_source(file)?;
        let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        let module = match modules.iter().find(|(f, _)| *f == file) {
            Some((_, m)) => m.clone(),
            None => {
                let m = self.load(file, &program(file, &[], source))?;
                modules.push((file, m.clone()));
                m
            }
        };
        load_function(&module, file, name)
    }

    /// A kernel from `file` compiled again with `defines` set (`#define NAME VALUE` lines put
    /// before the prelude and the source), for kernels specialised to one run.
    pub fn specialised(&self, file: &str, defines: &[(&str, u64)], name: &str) -> Result<Kernel> {
        let (file, source) = kernel_source(file)?;
        let module = self.load(file, &program(file, defines, source))?;
        load_function(&module, file, name)
    }

    /// Compile a program made from kernels/`file` for this GPU and load it.
    fn load(&self, file: &str, text: &str) -> Result<Arc<CudaModule>> {
        let ptx = compile_program(file, text, &self.arch)?;
        self.ctx
            .load_module(ptx)
            .map_err(|e| gpu_error(format!("load kernels/{file}"), e))
    }

    /// Launch `kernel` on this GPU's stream (asynchronously); `args` pushes its arguments
    /// with `LaunchArgs::arg`, in the order of the kernel's parameters.
    ///
    /// The caller's one duty, which nothing can check (an NVRTC kernel has no signature the
    /// host can read): the arguments have the types of the parameters (`&u64` for `u64`,
    /// `&CudaSlice<T>` for `const T *`, `&mut CudaSlice<T>` for `T *`), and the buffers are as
    /// long as the kernel's indices reach. Each caller names the kernel file it follows.
    pub fn launch<'a>(
        &'a self,
        kernel: &'a Kernel,
        cfg: LaunchConfig,
        args: impl FnOnce(&mut LaunchArgs<'a>),
    ) -> Result<()> {
        self.launch_on(&self.stream, kernel, cfg, args)
    }

    /// `launch` on another stream of this GPU's context (work overlapped with the run's
    /// stream; the buffers' events order the two where they share a buffer).
    pub fn launch_on<'a>(
        &'a self,
        stream: &'a CudaStream,
        kernel: &'a Kernel,
        cfg: LaunchConfig,
        args: impl FnOnce(&mut LaunchArgs<'a>),
    ) -> Result<()> {
        let mut builder = stream.launch_builder(&kernel.func);
        args(&mut builder);
        // SAFETY: the argument list matches the kernel's parameters (the duty stated above).
        unsafe { builder.launch(cfg) }
            .map(drop)
            .map_err(|e| gpu_error(format!("launch {}", kernel.name), e))
    }

    /// Blocks of THREADS threads of `kernel` that fit on the GPU at once: multiprocessors x
    /// the blocks its registers and shared memory let one hold. The grid of a grid-stride
    /// kernel: the device's threads per multiprocessor overstate it for a kernel past 32
    /// registers a thread (64 K registers for 2048 threads), and its loop then runs in two
    /// waves, the second a fraction of the GPU (the SSCA#2 generator's, at 40 registers, took
    /// 1.33 waves' time and more, 2026-12-05).
    pub fn resident_blocks(&self, kernel: &Kernel) -> Result<u32> {
        if let Some(&blocks) = kernel.resident.get() {
            return Ok(blocks);
        }
        let what = |e| gpu_error(format!("occupancy of {}", kernel.name), e);
        self.ctx.bind_to_thread().map_err(what)?;
        let per_sm = kernel
            .func
            .occupancy_max_active_blocks_per_multiprocessor(THREADS, 0, None)
            .map_err(what)?;
        let registers = kernel.func.num_regs().map_err(what)?;
        log::info!(
            "{}: {registers} registers a thread, {per_sm} blocks of {THREADS} a multiprocessor",
            kernel.name
        );
        let blocks = self.multiprocessors()? * per_sm.max(1);
        Ok(*kernel.resident.get_or_init(|| blocks))
    }

    /// Wait for everything queued on this GPU's stream; `after` names it in an error.
    pub fn sync(&self, after: &str) -> Result<()> {
        self.stream.synchronize().map_err(|e| gpu_error(after, e))
    }

    /// Seconds the GPU spends on the work `queue` puts on this stream (CUDA events on either
    /// side); waits for that work.
    pub fn timed(&self, queue: impl FnOnce() -> Result<()>) -> Result<f64> {
        let event = || {
            self.stream
                .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| gpu_error("record a timing event", e))
        };
        let start = event()?;
        queue()?;
        let end = event()?;
        end.synchronize()
            .map_err(|e| gpu_error("wait for the timed work", e))?;
        let ms = start
            .elapsed_ms(&end)
            .map_err(|e| gpu_error("read a timing event", e))?;
        Ok(f64::from(ms) / 1e3)
    }

    /// Bytes per second a plain device-to-device copy of `COPY_TEST_BYTES` moves (each byte
    /// read once and written once, so twice the bytes over the time; best of three), to
    /// compare a kernel's memory traffic with: the memory bandwidth this device reaches in
    /// practice. None, with a warning, where it cannot be measured (memory, say): it is only
    /// a figure beside a run's own, not worth stopping the run for. Workloads report it as
    /// `device_copy_bytes_per_second`.
    pub fn copy_rate(&self) -> Option<f64> {
        let bytes = COPY_TEST_BYTES;
        let measure = || -> Result<f64> {
            let src = self.zeros::<u8>("copy test source", bytes)?;
            let mut dst = self.zeros::<u8>("copy test target", bytes)?;
            let mut best = f64::INFINITY;
            for _ in 0..3 {
                let secs = self.timed(|| {
                    self.stream
                        .memcpy_dtod(&src, &mut dst)
                        .map_err(|e| gpu_error("copy test", e))
                })?;
                best = best.min(secs);
            }
            Ok(2.0 * bytes as f64 / best)
        };
        measure()
            .inspect_err(|e| log::warn!("no device copy rate: {e}"))
            .ok()
    }

    /// `n` zeroed items (at least one, so that empty parts still have a buffer to pass).
    pub fn zeros<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        what: &str,
        n: usize,
    ) -> Result<CudaSlice<T>> {
        self.stream
            .alloc_zeros::<T>(n.max(1))
            .map_err(|e| gpu_error(format!("allocate {what}"), e))
    }

    /// Zero `buffer` on this GPU's stream (a counter reset between launches, say); `what`
    /// names it in an error.
    pub fn clear<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        what: &str,
        buffer: &mut CudaSlice<T>,
    ) -> Result<()> {
        self.stream
            .memset_zeros(buffer)
            .map_err(|e| gpu_error(format!("clear {what}"), e))
    }

    /// A copy of `host` on the GPU (at least one item long).
    pub fn upload<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        what: &str,
        host: &[T],
    ) -> Result<CudaSlice<T>> {
        let mut dev = self.zeros(what, host.len())?;
        if !host.is_empty() {
            self.stream
                .memcpy_htod(host, &mut dev.slice_mut(0..host.len()))
                .map_err(|e| gpu_error(format!("upload {what}"), e))?;
        }
        Ok(dev)
    }

    /// The first `n` items of `dev`, on the host.
    pub fn download<T: DeviceRepr>(
        &self,
        what: &str,
        dev: &CudaSlice<T>,
        n: usize,
    ) -> Result<Vec<T>> {
        if n == 0 {
            return Ok(Vec::new());
        }
        self.stream
            .clone_dtoh(&dev.slice(0..n))
            .map_err(|e| gpu_error(format!("copy {what} to the host"), e))
    }

    /// Item `at` of `dev`, on the host.
    pub fn item<T: DeviceRepr + Copy>(
        &self,
        what: &str,
        dev: &CudaSlice<T>,
        at: usize,
    ) -> Result<T> {
        let one = self
            .stream
            .clone_dtoh(&dev.slice(at..at + 1))
            .map_err(|e| gpu_error(format!("copy {what} to the host"), e))?;
        Ok(one[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_the_defines_the_prelude_and_the_file_from_its_first_line() {
        let text = program("x.cu", &[("N", 23)], "body\n");
        assert!(text.starts_with("#define N 23\n"));
        assert!(text.contains(PRELUDE));
        assert!(text.ends_with("\n#line 1 \"x.cu\"\nbody\n"));
    }

    #[test]
    fn kernel_files_take_the_shared_helpers_from_the_prelude() {
        let shared = [
            "typedef unsigned long long u64",
            "#define WARP ",
            "#define FULL ",
            "u64 mix64(",
            "u64 draw(",
            "u64 warp_slot(",
            "void block_add(",
            "u32 uf_find(",
            "void uf_unite(",
        ];
        for (file, source) in KERNELS {
            for helper in shared {
                assert!(
                    !source.contains(helper),
                    "kernels/{file} defines {helper} again"
                );
            }
        }
        assert!(shared.iter().all(|h| PRELUDE.contains(h)));
    }
}
