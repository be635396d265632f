//! [`BenchError`]: why one measurement failed.

/// Why one measurement failed. The collection logs `inf` for it and goes on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BenchError {
    /// The device ran out of memory.
    #[error("out of memory: {0}")]
    OutOfMemory(String),
    /// A CUDA driver, cuBLAS or NVRTC call failed.
    #[error("cuda: {0}")]
    Cuda(String),
    /// The CUDA context is unusable (illegal address, launch failure, ...): every later call
    /// would fail too. The collection stops without logging the input; re-running resumes.
    #[error("CUDA context lost: {0}")]
    ContextLost(String),
    /// The runner does not support this backend.
    #[error("{0}")]
    Unsupported(String),
    /// Anything else.
    #[error("{0}")]
    Other(String),
}
