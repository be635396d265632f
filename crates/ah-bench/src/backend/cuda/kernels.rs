//! The NVRTC kernels every CUDA runner may use (random fill, never zeros; the zero-padding
//! copies), compiled and loaded when the backend starts.

use std::collections::BTreeMap;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction};

use super::error::init_err;
use super::CudaInitError;

/// Kernels every CUDA runner may use: random fill (never zeros) and the zero-padding copy.
pub(super) const KERNELS: &str = r#"
__device__ __forceinline__ float ah_uniform(unsigned long long i, unsigned long long seed) {
    unsigned long long x = (i + 1ull) * 0x9E3779B97F4A7C15ull ^ (seed * 0xD1B54A32D192ED03ull);
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
    return (float)(x >> 40) * (2.0f / 16777216.0f) - 1.0f;
}
extern "C" __global__ void ah_fill_f32(unsigned int* out, unsigned long long n, unsigned long long seed) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        out[i] = __float_as_uint(ah_uniform(i, seed));
    }
}
extern "C" __global__ void ah_fill_f16(unsigned short* out, unsigned long long n, unsigned long long seed) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        unsigned short h;
        float v = ah_uniform(i, seed);
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
        out[i] = h;
    }
}
extern "C" __global__ void ah_fill_bf16(unsigned short* out, unsigned long long n, unsigned long long seed) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        out[i] = (unsigned short)(__float_as_uint(ah_uniform(i, seed)) >> 16);
    }
}
// The zero-padding copies. Each writes the `out_rows` x `out_cols` top-left block of a row-major
// destination of row pitch `dst_cols`: the strided `rows` x `cols` source where it lies, zeros
// elsewhere, so one pass fills a padded operand as Inductor's generated pad kernel does (eager
// PyTorch's constant_pad_nd fills with zeros first and then copies: out = the source's shape).
template <typename T>
__device__ __forceinline__ T ah_src_or_zero(const T* src, long long r, long long c, long long rows,
                                            long long cols, long long s0, long long s1) {
    return r < rows && c < cols ? src[r * s0 + c * s1] : (T)0;
}
template <typename T>
__device__ __forceinline__ void ah_copy2d(T* dst, const T* src, long long rows, long long cols,
                                          long long s0, long long s1, long long dst_cols,
                                          long long out_rows, long long out_cols) {
    for (long long r = blockIdx.y; r < out_rows; r += gridDim.y) {
        for (long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x; c < out_cols;
             c += (long long)gridDim.x * blockDim.x) {
            dst[r * dst_cols + c] = ah_src_or_zero(src, r, c, rows, cols, s0, s1);
        }
    }
}
// Vectorised: one thread writes V consecutive destination elements (16 bytes) with one store;
// the destination's row pitch is a multiple of 16 bytes (padded rows are aligned).
template <typename T, int V>
__device__ __forceinline__ void ah_copy2d_vec(T* dst, const T* src, long long rows, long long cols,
                                              long long s0, long long s1, long long dst_cols,
                                              long long out_rows, long long out_cols) {
    long long vcols = (out_cols + V - 1) / V;
    for (long long r = blockIdx.y; r < out_rows; r += gridDim.y) {
        for (long long vc = blockIdx.x * (long long)blockDim.x + threadIdx.x; vc < vcols;
             vc += (long long)gridDim.x * blockDim.x) {
            long long c0 = vc * V;
            union { uint4 v; T e[V]; } u;
#pragma unroll
            for (int j = 0; j < V; ++j) u.e[j] = ah_src_or_zero(src, r, c0 + j, rows, cols, s0, s1);
            *reinterpret_cast<uint4*>(dst + r * dst_cols + c0) = u.v;
        }
    }
}
// Transposed source (strides (1, s1): a column of the source is contiguous) into a row-major
// buffer (AH_PAD_COPY=tiled, distribution versions 2-3): a 32 x 32 tile is read along source
// columns and written along destination rows through shared memory, so both sides are
// coalesced. The gather kernels above read such a source with a stride of s1 elements per thread
// and ran at a fraction of the bandwidth (eager PyTorch's constant_pad_nd is as slow). The default
// pads a transposed operand into a transposed buffer instead, as Inductor does: a row copy.
template <typename T>
__device__ __forceinline__ void ah_copy2d_t(T* dst, const T* src, long long rows, long long cols,
                                            long long s1, long long dst_cols, long long out_rows,
                                            long long out_cols) {
    __shared__ T tile[32][33];
    for (long long tc = blockIdx.y * 32LL; tc < out_cols; tc += gridDim.y * 32LL) {
        for (long long tr = blockIdx.x * 32LL; tr < out_rows; tr += gridDim.x * 32LL) {
            for (int j = threadIdx.y; j < 32; j += blockDim.y) {
                tile[j][threadIdx.x] = ah_src_or_zero(src, tr + threadIdx.x, tc + j, rows, cols, 1LL, s1);
            }
            __syncthreads();
            for (int j = threadIdx.y; j < 32; j += blockDim.y) {
                long long r = tr + j, c = tc + threadIdx.x;
                if (r < out_rows && c < out_cols) dst[r * dst_cols + c] = tile[threadIdx.x][j];
            }
            __syncthreads();
        }
    }
}
#define AH_COPY_ARGS(T) T* dst, const T* src, long long rows, long long cols, long long s0, \
    long long s1, long long dst_cols, long long out_rows, long long out_cols
extern "C" __global__ void ah_copy2d_u16(AH_COPY_ARGS(unsigned short)) {
    ah_copy2d(dst, src, rows, cols, s0, s1, dst_cols, out_rows, out_cols);
}
extern "C" __global__ void ah_copy2d_u32(AH_COPY_ARGS(unsigned int)) {
    ah_copy2d(dst, src, rows, cols, s0, s1, dst_cols, out_rows, out_cols);
}
extern "C" __global__ void ah_copy2d_vec_u16(AH_COPY_ARGS(unsigned short)) {
    ah_copy2d_vec<unsigned short, 8>(dst, src, rows, cols, s0, s1, dst_cols, out_rows, out_cols);
}
extern "C" __global__ void ah_copy2d_vec_u32(AH_COPY_ARGS(unsigned int)) {
    ah_copy2d_vec<unsigned int, 4>(dst, src, rows, cols, s0, s1, dst_cols, out_rows, out_cols);
}
extern "C" __global__ void ah_copy2d_t_u16(AH_COPY_ARGS(unsigned short)) {
    ah_copy2d_t(dst, src, rows, cols, s1, dst_cols, out_rows, out_cols);
}
extern "C" __global__ void ah_copy2d_t_u32(AH_COPY_ARGS(unsigned int)) {
    ah_copy2d_t(dst, src, rows, cols, s1, dst_cols, out_rows, out_cols);
}
"#;

/// Compiles [`KERNELS`] with NVRTC and loads every kernel of it on `ctx`, by name.
pub(super) fn load(
    ctx: &Arc<CudaContext>,
) -> Result<BTreeMap<&'static str, CudaFunction>, CudaInitError> {
    let ptx = cudarc::nvrtc::compile_ptx(KERNELS)
        .map_err(|e| CudaInitError::Cuda(format!("NVRTC: {e:?}")))?;
    let module = ctx.load_module(ptx).map_err(init_err)?;
    let mut kernels = BTreeMap::new();
    for name in [
        "ah_fill_f32",
        "ah_fill_f16",
        "ah_fill_bf16",
        "ah_copy2d_u16",
        "ah_copy2d_u32",
        "ah_copy2d_vec_u16",
        "ah_copy2d_vec_u32",
        "ah_copy2d_t_u16",
        "ah_copy2d_t_u32",
    ] {
        kernels.insert(name, module.load_function(name).map_err(init_err)?);
    }
    Ok(kernels)
}
