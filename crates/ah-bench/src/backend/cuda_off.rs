//! The CUDA backend of a build without the `cuda` feature (no cudarc): [`CudaBackend::new`]
//! always fails with [`CudaInitError::NotBuilt`] and no driver is ever seen, so no value of
//! [`CudaBackend`] or [`DeviceBuffer`] can exist. The methods are here so that the runners'
//! CUDA paths compile unchanged; none of them can be called.

use super::{BackendInfo, BenchError, Measurement, TimingConfig};
use crate::dtype::DType;

pub use super::cuda_types::{CudaInitError, DevicePtr, GemmArgs, PadCopyArgs};

/// No value: this build has no CUDA backend.
#[derive(Debug, Clone, Copy)]
enum Never {}

/// The CUDA backend of one device; uninhabited in this build.
#[derive(Debug)]
pub struct CudaBackend(Never);

/// A device allocation; uninhabited in this build.
#[derive(Debug)]
pub struct DeviceBuffer(Never);

impl DeviceBuffer {
    /// The device address.
    pub fn ptr(&self) -> DevicePtr {
        match self.0 {}
    }
    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        match self.0 {}
    }
}

impl CudaBackend {
    /// Does nothing in this build (there is no driver to configure).
    pub fn prefer_eager_module_loading() {}

    /// `CUDA_MODULE_LOADING` as this process sees it.
    pub fn module_loading() -> Option<String> {
        std::env::var("CUDA_MODULE_LOADING").ok()
    }

    /// Always false: this build does not load the driver.
    pub fn driver_present() -> bool {
        false
    }

    /// Always 0.
    pub fn device_count() -> usize {
        0
    }

    /// Always [`CudaInitError::NotBuilt`].
    pub fn new(_ordinal: usize, _timing: TimingConfig) -> Result<Self, CudaInitError> {
        Err(CudaInitError::NotBuilt)
    }

    /// Device facts.
    pub fn info(&self) -> &BackendInfo {
        match self.0 {}
    }

    /// How this device times a benchmark.
    pub fn timing(&self) -> &TimingConfig {
        match self.0 {}
    }

    /// Waits for the stream.
    pub fn synchronize(&mut self) -> Result<(), BenchError> {
        match self.0 {}
    }

    /// Allocates device memory.
    pub fn alloc(&mut self, _bytes: usize) -> Result<DeviceBuffer, BenchError> {
        match self.0 {}
    }

    /// Copies device memory to the host.
    pub fn download(&mut self, _ptr: DevicePtr, _bytes: usize) -> Result<Vec<u8>, BenchError> {
        match self.0 {}
    }

    /// Fills `n` elements with random values.
    pub fn fill_random(
        &mut self,
        _ptr: DevicePtr,
        _n: usize,
        _dtype: DType,
    ) -> Result<(), BenchError> {
        match self.0 {}
    }

    /// Zeroes a rectangle.
    pub fn zero_rect(
        &mut self,
        _ptr: DevicePtr,
        _pitch_bytes: usize,
        _elem: usize,
        _cols: usize,
        _rows: usize,
    ) -> Result<(), BenchError> {
        match self.0 {}
    }

    /// Fills a padded operand.
    pub fn pad_copy(&mut self, _a: &PadCopyArgs) -> Result<(), BenchError> {
        match self.0 {}
    }

    /// Enqueues one GEMM.
    pub fn gemm(&mut self, _g: &GemmArgs) -> Result<(), BenchError> {
        match self.0 {}
    }

    /// Times `f`.
    pub fn bench(
        &mut self,
        _warmup: bool,
        _f: &mut dyn FnMut(&mut CudaBackend) -> Result<(), BenchError>,
    ) -> Result<Measurement, BenchError> {
        match self.0 {}
    }

    /// Whether a transposed operand is padded into a transposed buffer.
    pub fn pad_keeps_layout(&self) -> bool {
        match self.0 {}
    }

    /// The row stride of a padded operand.
    pub fn padded_row_stride(&self, _cols: usize, _elem: usize) -> usize {
        match self.0 {}
    }
}
