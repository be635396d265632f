//! The CUDA backend: cudarc with dynamic loading (builds without CUDA, loads `libcuda`,
//! `libcublas` and `libnvrtc` at run time).
//!
//! Timing follows PyTorch's `InductorBenchmarker.benchmark_gpu`: CUDA events around each call
//! on one stream, an L2 flush (a memset of a buffer of the device's L2 size) before every timed
//! call, one warm-up call, 5 estimation runs, then up to 100 timed runs within 25 ms after 100
//! memory warm-up flushes. Buffers are plain `cuMemAlloc` allocations; failures (out of
//! memory, launch errors) come back as [`BenchError`] so the collection logs `inf` and goes on.
//!
//! One file per job: [`CudaBackend::new`] starts it (`init.rs`) with the NVRTC kernels of
//! `kernels.rs`; `buffer.rs` allocates, `copy.rs` fills, zeroes and copies, `blas.rs` runs
//! GEMMs, `layout.rs` lays out padded operands, `timing.rs` times, `error.rs` maps failures.

mod blas;
mod buffer;
mod copy;
mod error;
mod init;
mod kernels;
mod layout;
mod timing;

use std::collections::BTreeMap;
use std::sync::Arc;

use cudarc::cublas::sys as blas_sys;
use cudarc::driver::{CudaContext, CudaEvent, CudaFunction, CudaStream};

pub use super::cuda_types::{CudaInitError, DevicePtr, GemmArgs, PadCopyArgs};
pub use buffer::DeviceBuffer;

use super::{BackendInfo, BenchError, TimingConfig};
use error::{blas_err, check, drv_err, init_err};
use layout::{PadCopy, PadStride};

/// The CUDA backend of one device.
pub struct CudaBackend {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    blas: cudarc::cublas::CudaBlas,
    kernels: BTreeMap<&'static str, CudaFunction>,
    flush: DeviceBuffer,
    events: Vec<(CudaEvent, CudaEvent)>,
    timing: TimingConfig,
    info: BackendInfo,
    fill_seed: u64,
    pad_copy: PadCopy,
    pad_stride: PadStride,
    /// Whether the last benchmark ended with a long call ([`TimingConfig::rest_ms`]).
    after_long: bool,
}

impl CudaBackend {
    /// Device facts.
    pub fn info(&self) -> &BackendInfo {
        &self.info
    }

    /// How this device times a benchmark.
    pub fn timing(&self) -> &TimingConfig {
        &self.timing
    }

    /// The stream all work goes to.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The context (for runners that load their own NVRTC modules).
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The cuBLAS handle (bound to [`Self::stream`]).
    pub fn cublas_handle(&self) -> blas_sys::cublasHandle_t {
        *self.blas.handle()
    }

    /// Waits for the stream and reports any asynchronous error.
    pub fn synchronize(&mut self) -> Result<(), BenchError> {
        self.stream.synchronize().map_err(drv_err)
    }
}

#[cfg(test)]
mod tests;
