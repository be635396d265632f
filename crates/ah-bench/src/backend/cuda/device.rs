//! [`CudaBackend`]: the CUDA backend of one device, its state (context, stream, cuBLAS handle,
//! kernels, L2 flush buffer, events, settings) and what reads it directly; the other files of
//! `cuda/` add what it does.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::Arc;

use cudarc::cublas::sys as blas_sys;
use cudarc::driver::sys as drv;
use cudarc::driver::{CudaContext, CudaEvent, CudaFunction, CudaStream};

use super::buffer::{alloc_raw, DeviceBuffer};
use super::error::{check, drv_err};
use super::layout::{PadCopy, PadStride};
use crate::backend::{BackendInfo, BenchError, TimingConfig};

/// The CUDA backend of one device.
pub struct CudaBackend {
    pub(super) ctx: Arc<CudaContext>,
    pub(super) stream: Arc<CudaStream>,
    pub(super) blas: cudarc::cublas::CudaBlas,
    pub(super) kernels: BTreeMap<&'static str, CudaFunction>,
    pub(super) flush: DeviceBuffer,
    pub(super) events: Vec<(CudaEvent, CudaEvent)>,
    pub(super) timing: TimingConfig,
    pub(super) info: BackendInfo,
    pub(super) fill_seed: u64,
    pub(super) pad_copy: PadCopy,
    pub(super) pad_stride: PadStride,
    /// Whether the last benchmark ended with a long call ([`TimingConfig::rest_ms`]).
    pub(super) after_long: bool,
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

impl CudaBackend {
    /// Allocates `bytes` of device memory.
    pub fn alloc(&mut self, bytes: usize) -> Result<DeviceBuffer, BenchError> {
        self.ctx.bind_to_thread().map_err(drv_err)?;
        alloc_raw(bytes)
    }

    /// Waits for the stream, then copies `bytes` bytes at `ptr` to a host vector.
    pub fn download(&mut self, ptr: drv::CUdeviceptr, bytes: usize) -> Result<Vec<u8>, BenchError> {
        self.synchronize()?;
        let mut host = vec![0u8; bytes];
        // SAFETY: `host` has `bytes` bytes; the device range is the caller's.
        check(unsafe { drv::cuMemcpyDtoH_v2(host.as_mut_ptr().cast::<c_void>(), ptr, bytes) })?;
        Ok(host)
    }
}

impl CudaBackend {
    /// Whether a transposed operand is padded into a transposed buffer (`AH_PAD_COPY`
    /// default) rather than copied into a row-major one.
    pub fn pad_keeps_layout(&self) -> bool {
        self.pad_copy == PadCopy::OnePass
    }

    /// The row stride, in elements, of a padded operand of `cols` columns of `elem` bytes, as
    /// the program the collection stands for allocates it (`AH_PAD_STRIDE`).
    pub fn padded_row_stride(&self, cols: usize, elem: usize) -> usize {
        self.pad_stride.row_stride(cols, elem)
    }
}
