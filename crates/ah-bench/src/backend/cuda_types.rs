//! The CUDA backend's plain types, without cudarc: what a runner hands the backend (a GEMM's
//! and a padded copy's arguments) and why the backend could not start. The same in a build
//! with the `cuda` feature and in one without (`cuda_off.rs`).

use crate::dtype::DType;

/// A device address (`CUdeviceptr`).
pub type DevicePtr = u64;

/// One GEMM on raw device pointers, row-major semantics (PyTorch's `torch.mm`):
/// `C[m, n] = A[m, k] @ B[k, n]`, where A and B are either row-major (`trans_* == false`,
/// leading dimension = number of columns) or the transpose of a row-major buffer
/// (`trans_* == true`, PyTorch's `.t()` view, leading dimension = number of rows).
#[derive(Debug, Clone, Copy)]
pub struct GemmArgs {
    /// Rows of A and C.
    pub m: usize,
    /// Inner dimension.
    pub k: usize,
    /// Columns of B and C.
    pub n: usize,
    /// A's buffer.
    pub a: DevicePtr,
    /// A is a transposed view (strides `(1, lda)`).
    pub trans_a: bool,
    /// A's leading dimension (elements).
    pub lda: usize,
    /// B's buffer.
    pub b: DevicePtr,
    /// B is a transposed view.
    pub trans_b: bool,
    /// B's leading dimension.
    pub ldb: usize,
    /// C's buffer (row-major).
    pub c: DevicePtr,
    /// C's leading dimension.
    pub ldc: usize,
    /// Element type of A, B and C.
    pub dtype: DType,
    /// fp32 only: allow TF32 tensor cores (PyTorch's `allow_tf32`).
    pub tf32: bool,
}

/// A padded operand to fill (`CudaBackend::pad_copy`).
#[derive(Debug, Clone, Copy)]
pub struct PadCopyArgs {
    /// The padded buffer: row-major, rows `dst_pitch` elements apart.
    pub dst: DevicePtr,
    /// Its allocation's size (the eager modes zero all of it).
    pub dst_bytes: usize,
    /// Padded rows.
    pub dst_rows: usize,
    /// Padded columns.
    pub dst_cols: usize,
    /// Row stride of the padded buffer, in elements (`CudaBackend::padded_row_stride`).
    pub dst_pitch: usize,
    /// The source: element `(r, c)` at `src[r * s0 + c * s1]`.
    pub src: DevicePtr,
    /// Source rows.
    pub rows: usize,
    /// Source columns.
    pub cols: usize,
    /// Source row stride, in elements.
    pub s0: usize,
    /// Source column stride, in elements.
    pub s1: usize,
    /// Element size in bytes (2 or 4).
    pub elem: usize,
}

/// Why the CUDA backend could not start.
#[derive(Debug, thiserror::Error)]
pub enum CudaInitError {
    /// No CUDA driver library (`libcuda.so`) on this machine.
    #[error("no CUDA driver found (libcuda could not be loaded); use `--device cpu`, or `--device auto` to fall back to the CPU")]
    NoDriver,
    /// A CUDA library other than the driver is missing.
    #[error("{0} could not be loaded; add the folder that holds it (e.g. /usr/local/cuda/lib64) to LD_LIBRARY_PATH")]
    MissingLibrary(&'static str),
    /// The driver is there but has no such device.
    #[error("CUDA device {ordinal} not found ({count} device(s) visible)")]
    NoDevice {
        /// Requested ordinal.
        ordinal: usize,
        /// Devices visible.
        count: i32,
    },
    /// A measurement setting in the environment (`AH_PAD_COPY`, `AH_PAD_STRIDE`) has a value
    /// it does not know: refused rather than silently measuring the default.
    #[error("{variable}={value:?} is not a known setting; use one of: {expected} (or unset it for the default)")]
    Setting {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
        /// The values it takes.
        expected: &'static str,
    },
    /// This build has no CUDA backend (`ah-bench` without its `cuda` feature).
    #[error("this binary was built without CUDA support; rebuild with `--features cuda`, or use `--device cpu`")]
    NotBuilt,
    /// A CUDA call failed while starting.
    #[error("CUDA initialisation failed: {0}")]
    Cuda(String),
}
