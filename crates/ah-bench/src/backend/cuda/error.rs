//! The CUDA backend's errors: why it could not start ([`CudaInitError`]) and how driver and
//! cuBLAS failures map to a [`BenchError`].

use cudarc::cublas::sys as blas_sys;
use cudarc::driver::sys as drv;

use super::CudaInitError;
use crate::backend::BenchError;

pub(super) fn drv_err(e: cudarc::driver::DriverError) -> BenchError {
    use drv::CUresult as R;
    match e.0 {
        R::CUDA_ERROR_OUT_OF_MEMORY => BenchError::OutOfMemory(format!("{e:?}")),
        // Sticky errors: the context cannot be used any more.
        R::CUDA_ERROR_ILLEGAL_ADDRESS
        | R::CUDA_ERROR_LAUNCH_FAILED
        | R::CUDA_ERROR_ILLEGAL_INSTRUCTION
        | R::CUDA_ERROR_MISALIGNED_ADDRESS
        | R::CUDA_ERROR_INVALID_ADDRESS_SPACE
        | R::CUDA_ERROR_INVALID_PC
        | R::CUDA_ERROR_HARDWARE_STACK_ERROR
        | R::CUDA_ERROR_ECC_UNCORRECTABLE => BenchError::ContextLost(format!("{e:?}")),
        _ => BenchError::Cuda(format!("{e:?}")),
    }
}

pub(super) fn check(r: drv::CUresult) -> Result<(), BenchError> {
    r.result().map_err(drv_err)
}

pub(super) fn blas_err(e: cudarc::cublas::result::CublasError) -> BenchError {
    if e.0 == blas_sys::cublasStatus_t::CUBLAS_STATUS_ALLOC_FAILED {
        BenchError::OutOfMemory(format!("cuBLAS {e:?}"))
    } else {
        BenchError::Cuda(format!("cuBLAS {e:?}"))
    }
}

/// A driver failure while starting the backend.
pub(super) fn init_err(e: cudarc::driver::DriverError) -> CudaInitError {
    CudaInitError::Cuda(format!("{e:?}"))
}
