//! The CUDA backend: cudarc with dynamic loading (builds without CUDA, loads `libcuda`,
//! `libcublas` and `libnvrtc` at run time).
//!
//! Timing follows PyTorch's `InductorBenchmarker.benchmark_gpu`: CUDA events around each call
//! on one stream, an L2 flush (a memset of a buffer of the device's L2 size) before every timed
//! call, one warm-up call, 5 estimation runs, then up to 100 timed runs within 25 ms after 100
//! memory warm-up flushes. Buffers are plain `cuMemAlloc` allocations; failures (out of
//! memory, launch errors) come back as [`BenchError`](super::BenchError) so the collection logs `inf` and goes on.
//!
//! One file per job: `device.rs` holds the backend's state; [`CudaBackend::new`] starts it
//! (`init.rs`) with the NVRTC kernels of `kernels.rs`; `buffer.rs` allocates, `copy.rs` fills, zeroes and copies, `blas.rs` runs
//! GEMMs, `layout.rs` lays out padded operands, `timing.rs` times, `error.rs` maps failures.

mod blas;
mod buffer;
mod copy;
mod device;
mod error;
mod init;
mod kernels;
mod layout;
mod timing;

pub use super::cuda_types::{CudaInitError, DevicePtr, GemmArgs, PadCopyArgs};
pub use buffer::DeviceBuffer;
pub use device::CudaBackend;

#[cfg(test)]
mod tests;
