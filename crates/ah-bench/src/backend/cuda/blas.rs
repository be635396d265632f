//! One GEMM through cuBLAS (`cublasGemmEx`), as PyTorch's `at::cuda::blas::gemm` runs it.

use std::ffi::c_void;

use cudarc::cublas::sys as blas_sys;

use super::device::CudaBackend;
use super::error::blas_err;
use super::GemmArgs;
use crate::backend::BenchError;
use crate::dtype::DType;

impl CudaBackend {
    /// Enqueues one GEMM through cuBLAS `cublasGemmEx`, as PyTorch's `at::cuda::blas::gemm`
    /// does: fp16/bf16 with fp32 accumulation (reduced-precision reductions allowed),
    /// fp32 with `CUBLAS_TF32_TENSOR_OP_MATH` when TF32 is allowed, default math otherwise.
    pub fn gemm(&mut self, g: &GemmArgs) -> Result<(), BenchError> {
        use blas_sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
        let handle = *self.blas.handle();
        let (dt, compute) = match g.dtype {
            DType::F16 => (
                blas_sys::cudaDataType::CUDA_R_16F,
                blas_sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            ),
            DType::BF16 => (
                blas_sys::cudaDataType::CUDA_R_16BF,
                blas_sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            ),
            DType::F32 => (
                blas_sys::cudaDataType::CUDA_R_32F,
                blas_sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            ),
        };
        let math = if g.dtype == DType::F32 && g.tf32 {
            blas_sys::cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH
        } else {
            blas_sys::cublasMath_t::CUBLAS_DEFAULT_MATH
        };
        let alpha: f32 = 1.0;
        let beta: f32 = 0.0;
        // Row-major C = A B is column-major C^T = B^T A^T: cuBLAS gets (B, A) and (n, m).
        let op_b = if g.trans_b { CUBLAS_OP_T } else { CUBLAS_OP_N };
        let op_a = if g.trans_a { CUBLAS_OP_T } else { CUBLAS_OP_N };
        // SAFETY: pointers and leading dimensions describe live buffers (caller contract).
        unsafe {
            blas_sys::cublasSetMathMode(handle, math)
                .result()
                .map_err(blas_err)?;
            cudarc::cublas::result::gemm_ex(
                handle,
                op_b,
                op_a,
                g.n as i32,
                g.m as i32,
                g.k as i32,
                (&alpha as *const f32).cast::<c_void>(),
                g.b as *const c_void,
                dt,
                g.ldb as i32,
                g.a as *const c_void,
                dt,
                g.lda as i32,
                (&beta as *const f32).cast::<c_void>(),
                g.c as *mut c_void,
                dt,
                g.ldc as i32,
                compute,
                blas_sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT_TENSOR_OP,
            )
            .map_err(blas_err)
        }
    }
}
