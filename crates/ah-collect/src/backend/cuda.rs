//! The CUDA backend: cudarc with dynamic loading (builds without CUDA, loads `libcuda`,
//! `libcublas` and `libnvrtc` at run time).
//!
//! Timing follows PyTorch's `InductorBenchmarker.benchmark_gpu`: CUDA events around each call
//! on one stream, an L2 flush (a memset of a buffer of the device's L2 size) before every timed
//! call, one warm-up call, 5 estimation runs, then up to 100 timed runs within 25 ms after 100
//! memory warm-up flushes. Buffers are plain `cuMemAlloc` allocations; failures (out of
//! memory, launch errors) come back as [`BenchError`] so the collection logs `inf` and goes on.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::Arc;

use ah_core::DeviceIdentity;
use cudarc::cublas::sys as blas_sys;
use cudarc::driver::sys as drv;
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaStream, LaunchConfig, PushKernelArg,
};

use super::{BackendInfo, BackendKind, BenchCalls, BenchError, Measurement, TimingConfig};
use crate::dtype::DType;

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
    /// A CUDA call failed while starting.
    #[error("CUDA initialisation failed: {0}")]
    Cuda(String),
}

/// Kernels every CUDA runner may use: random fill (never zeros) and the zero-padding copy.
const KERNELS: &str = r#"
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
template <typename T>
__device__ __forceinline__ void ah_copy2d(T* dst, const T* src, long long rows, long long cols,
                                          long long s0, long long s1, long long dst_cols) {
    for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
        for (long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x; c < cols;
             c += (long long)gridDim.x * blockDim.x) {
            dst[r * dst_cols + c] = src[r * s0 + c * s1];
        }
    }
}
// Vectorised: one thread writes V consecutive destination elements (16 bytes) with one store;
// the destination's row pitch is a multiple of 16 bytes (padded rows are aligned).
template <typename T, int V>
__device__ __forceinline__ void ah_copy2d_vec(T* dst, const T* src, long long rows, long long cols,
                                              long long s0, long long s1, long long dst_cols) {
    long long vcols = (cols + V - 1) / V;
    for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
        for (long long vc = blockIdx.x * (long long)blockDim.x + threadIdx.x; vc < vcols;
             vc += (long long)gridDim.x * blockDim.x) {
            long long c0 = vc * V;
            union { uint4 v; T e[V]; } u;
#pragma unroll
            for (int j = 0; j < V; ++j) {
                long long c = c0 + j;
                u.e[j] = c < cols ? src[r * s0 + c * s1] : (T)0;
            }
            *reinterpret_cast<uint4*>(dst + r * dst_cols + c0) = u.v;
        }
    }
}
extern "C" __global__ void ah_copy2d_vec_u16(unsigned short* dst, const unsigned short* src, long long rows,
                                             long long cols, long long s0, long long s1, long long dst_cols) {
    ah_copy2d_vec<unsigned short, 8>(dst, src, rows, cols, s0, s1, dst_cols);
}
extern "C" __global__ void ah_copy2d_vec_u32(unsigned int* dst, const unsigned int* src, long long rows,
                                             long long cols, long long s0, long long s1, long long dst_cols) {
    ah_copy2d_vec<unsigned int, 4>(dst, src, rows, cols, s0, s1, dst_cols);
}
// Transposed source (strides (1, s1): a column of the source is contiguous): a 32 x 32 tile is
// read along source columns and written along destination rows through shared memory, so both
// sides are coalesced, as the tiled copy Inductor generates in a compiled program. The gather
// kernels above read such a source with a stride of s1 elements per thread and ran at a fraction
// of the bandwidth (eager PyTorch's constant_pad_nd is as slow: docs/collection.md).
template <typename T>
__device__ __forceinline__ void ah_copy2d_t(T* dst, const T* src, long long rows, long long cols,
                                            long long s1, long long dst_cols) {
    __shared__ T tile[32][33];
    for (long long tc = blockIdx.y * 32LL; tc < cols; tc += gridDim.y * 32LL) {
        for (long long tr = blockIdx.x * 32LL; tr < rows; tr += gridDim.x * 32LL) {
            for (int j = threadIdx.y; j < 32; j += blockDim.y) {
                long long r = tr + threadIdx.x, c = tc + j;
                if (r < rows && c < cols) tile[j][threadIdx.x] = src[c * s1 + r];
            }
            __syncthreads();
            for (int j = threadIdx.y; j < 32; j += blockDim.y) {
                long long r = tr + j, c = tc + threadIdx.x;
                if (r < rows && c < cols) dst[r * dst_cols + c] = tile[threadIdx.x][j];
            }
            __syncthreads();
        }
    }
}
extern "C" __global__ void ah_copy2d_t_u16(unsigned short* dst, const unsigned short* src, long long rows,
                                           long long cols, long long s1, long long dst_cols) {
    ah_copy2d_t(dst, src, rows, cols, s1, dst_cols);
}
extern "C" __global__ void ah_copy2d_t_u32(unsigned int* dst, const unsigned int* src, long long rows,
                                           long long cols, long long s1, long long dst_cols) {
    ah_copy2d_t(dst, src, rows, cols, s1, dst_cols);
}
extern "C" __global__ void ah_copy2d_u16(unsigned short* dst, const unsigned short* src, long long rows,
                                         long long cols, long long s0, long long s1, long long dst_cols) {
    ah_copy2d(dst, src, rows, cols, s0, s1, dst_cols);
}
extern "C" __global__ void ah_copy2d_u32(unsigned int* dst, const unsigned int* src, long long rows,
                                         long long cols, long long s0, long long s1, long long dst_cols) {
    ah_copy2d(dst, src, rows, cols, s0, s1, dst_cols);
}
"#;

/// A device allocation, freed on drop.
#[derive(Debug)]
pub struct DeviceBuffer {
    ptr: drv::CUdeviceptr,
    bytes: usize,
}

impl DeviceBuffer {
    /// The device address.
    pub fn ptr(&self) -> drv::CUdeviceptr {
        self.ptr
    }
    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if self.ptr != 0 {
            // SAFETY: `ptr` came from cuMemAlloc in this process's context and is freed once.
            unsafe {
                let _ = drv::cuMemFree_v2(self.ptr);
            }
        }
    }
}

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
    pub a: drv::CUdeviceptr,
    /// A is a transposed view (strides `(1, lda)`).
    pub trans_a: bool,
    /// A's leading dimension (elements).
    pub lda: usize,
    /// B's buffer.
    pub b: drv::CUdeviceptr,
    /// B is a transposed view.
    pub trans_b: bool,
    /// B's leading dimension.
    pub ldb: usize,
    /// C's buffer (row-major).
    pub c: drv::CUdeviceptr,
    /// C's leading dimension.
    pub ldc: usize,
    /// Element type of A, B and C.
    pub dtype: DType,
    /// fp32 only: allow TF32 tensor cores (PyTorch's `allow_tf32`).
    pub tf32: bool,
}

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

/// One GPU benchmark's calls, for [`TimingConfig::measure`]: each timed call brackets `f`
/// with its own pair of events.
struct CudaCalls<'a, 'f> {
    backend: &'a mut CudaBackend,
    f: &'f mut dyn FnMut(&mut CudaBackend) -> Result<(), BenchError>,
    /// Events used so far.
    used: usize,
}

impl BenchCalls for CudaCalls<'_, '_> {
    fn timed(&mut self, n: usize) -> Result<Vec<f64>, BenchError> {
        let runs = self.backend.timed_runs(self.used, n, self.f)?;
        self.used += runs.len();
        Ok(runs)
    }

    fn settle(&mut self) -> Result<(), BenchError> {
        let warmups = self.backend.timing.memory_warmup;
        (0..warmups).try_for_each(|_| self.backend.flush_l2())
    }

    fn rest(&mut self, ms: f64) -> Result<(), BenchError> {
        self.backend.synchronize()?;
        std::thread::sleep(std::time::Duration::from_secs_f64(ms / 1e3));
        Ok(())
    }
}

/// The row stride of a padded buffer (`AH_PAD_STRIDE`, recorded in the provenance as
/// `pad_row_stride`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PadStride {
    /// Rows packed: the stride is the padded column count (`AH_PAD_STRIDE=contiguous`), as
    /// eager PyTorch's `constant_pad_nd` allocates (distribution versions before 3 / 4).
    Contiguous,
    /// The default: Inductor's comprehensive padding (`ir.Layout._pad_strides`), as a compiled
    /// program allocates the padded operands: a row of more than 1024 elements whose stride is
    /// not a multiple of 128 bytes gets its stride rounded up to one. cuBLAS runs up to 1.7x
    /// faster on such rows (measured on the H100: docs/collection.md).
    Inductor,
}

impl PadStride {
    fn from_env() -> PadStride {
        match std::env::var("AH_PAD_STRIDE").as_deref() {
            Ok("contiguous") => PadStride::Contiguous,
            _ => PadStride::Inductor,
        }
    }

    fn name(self) -> &'static str {
        match self {
            PadStride::Contiguous => "contiguous",
            PadStride::Inductor => "inductor_128_bytes_above_1024",
        }
    }

    /// The row stride, in elements, of a row-major buffer of `cols` columns of `elem` bytes.
    fn row_stride(self, cols: usize, elem: usize) -> usize {
        let align = 128 / elem;
        match self {
            PadStride::Inductor if cols > 1024 && !cols.is_multiple_of(align) => {
                cols.next_multiple_of(align)
            }
            _ => cols,
        }
    }
}

/// Which kernels copy an operand into its padded buffer (`AH_PAD_COPY`, recorded in the
/// provenance as `pad_copy_kernel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PadCopy {
    /// One element per thread, gathered through the strides (`AH_PAD_COPY=scalar`).
    Scalar,
    /// 16-byte stores, gathered through the strides (`AH_PAD_COPY=vector16`): what eager
    /// PyTorch pays; slow for a transposed source.
    Vector16,
    /// The default: `Vector16` for a row-major source, a tiled transpose through shared memory
    /// for a transposed one, as a compiled program's Triton copy pays.
    Tiled,
}

impl PadCopy {
    fn from_env() -> PadCopy {
        match std::env::var("AH_PAD_COPY").as_deref() {
            Ok("scalar") => PadCopy::Scalar,
            Ok("vector16") => PadCopy::Vector16,
            _ => PadCopy::Tiled,
        }
    }

    fn name(self) -> &'static str {
        match self {
            PadCopy::Scalar => "scalar",
            PadCopy::Vector16 => "vector16",
            PadCopy::Tiled => "vector16+tiled_transpose",
        }
    }
}

fn drv_err(e: cudarc::driver::DriverError) -> BenchError {
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

fn check(r: drv::CUresult) -> Result<(), BenchError> {
    r.result().map_err(drv_err)
}

fn blas_err(e: cudarc::cublas::result::CublasError) -> BenchError {
    if e.0 == blas_sys::cublasStatus_t::CUBLAS_STATUS_ALLOC_FAILED {
        BenchError::OutOfMemory(format!("cuBLAS {e:?}"))
    } else {
        BenchError::Cuda(format!("cuBLAS {e:?}"))
    }
}

impl CudaBackend {
    /// True when the CUDA driver library can be loaded (no context is created).
    pub fn driver_present() -> bool {
        // SAFETY: only tries to dlopen the driver library.
        unsafe { drv::is_culib_present() }
    }

    /// Number of visible CUDA devices (0 without a driver).
    pub fn device_count() -> usize {
        if !Self::driver_present() {
            return 0;
        }
        CudaContext::device_count()
            .map(|c| c.max(0) as usize)
            .unwrap_or(0)
    }

    /// Starts the backend on device `ordinal`: context, stream, cuBLAS handle, NVRTC kernels,
    /// the L2 flush buffer and the timing events. Binds the context to the calling thread.
    pub fn new(ordinal: usize, timing: TimingConfig) -> Result<Self, CudaInitError> {
        if !Self::driver_present() {
            return Err(CudaInitError::NoDriver);
        }
        // SAFETY: dlopen probes only.
        if !unsafe { blas_sys::is_culib_present() } {
            return Err(CudaInitError::MissingLibrary("libcublas (cuBLAS 13)"));
        }
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err(CudaInitError::MissingLibrary("libnvrtc (NVRTC 13)"));
        }
        let count =
            CudaContext::device_count().map_err(|e| CudaInitError::Cuda(format!("{e:?}")))?;
        if ordinal as i64 >= i64::from(count) {
            return Err(CudaInitError::NoDevice { ordinal, count });
        }
        let cu = |e: cudarc::driver::DriverError| CudaInitError::Cuda(format!("{e:?}"));
        let ctx = CudaContext::new(ordinal).map_err(cu)?;
        // We synchronise by hand (one stream, events we record ourselves).
        // SAFETY: called before any CudaSlice exists; all work goes to one stream.
        unsafe { ctx.disable_event_tracking() };
        ctx.bind_to_thread().map_err(cu)?;
        let stream = ctx.default_stream();
        let blas = cudarc::cublas::CudaBlas::new(stream.clone())
            .map_err(|e| CudaInitError::Cuda(format!("cuBLAS: {e:?}")))?;
        let ptx = cudarc::nvrtc::compile_ptx(KERNELS)
            .map_err(|e| CudaInitError::Cuda(format!("NVRTC: {e:?}")))?;
        let module = ctx.load_module(ptx).map_err(cu)?;
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
            kernels.insert(name, module.load_function(name).map_err(cu)?);
        }
        let attr = |a| ctx.attribute(a).map_err(cu);
        let l2 = attr(drv::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?.max(0) as usize;
        let smem =
            attr(drv::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?;
        let (major, minor) = ctx.compute_capability().map_err(cu)?;
        let total_memory = ctx.total_mem().map_err(cu)? as u64;
        let name = ctx.name().map_err(cu)?;
        // PyTorch flushes with a buffer of the L2 size (256 MiB when unknown).
        let flush_bytes = if l2 > 0 { l2 } else { 256 << 20 };
        let flush = alloc_raw(flush_bytes).map_err(|e| CudaInitError::Cuda(e.to_string()))?;
        // One pair per run: the warm-up, the estimation runs and the timed runs.
        let n_events = (timing.estimation_runs.max(1) + timing.max_runs) as usize + 1;
        let mut events = Vec::with_capacity(n_events);
        for _ in 0..n_events {
            let flags = Some(drv::CUevent_flags::CU_EVENT_DEFAULT);
            events.push((
                ctx.new_event(flags).map_err(cu)?,
                ctx.new_event(flags).map_err(cu)?,
            ));
        }
        let mut versions = BTreeMap::new();
        let mut v: i32 = 0;
        // SAFETY: plain version queries into a local.
        if unsafe { drv::cuDriverGetVersion(&mut v) } == drv::CUresult::CUDA_SUCCESS {
            versions.insert(
                "cuda_driver_api".into(),
                format!("{}.{}", v / 1000, (v % 1000) / 10),
            );
        }
        let mut bv: i32 = 0;
        if unsafe { blas_sys::cublasGetVersion_v2(*blas.handle(), &mut bv) }
            == blas_sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS
        {
            versions.insert(
                "cublas".into(),
                format!("{}.{}.{}", bv / 10000, (bv % 10000) / 100, bv % 100),
            );
        }
        let (mut nmaj, mut nmin) = (0, 0);
        if unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut nmaj, &mut nmin) }
            == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS
        {
            versions.insert("nvrtc".into(), format!("{nmaj}.{nmin}"));
        }
        if let Ok(text) = std::fs::read_to_string("/proc/driver/nvidia/version") {
            // "NVRM version: NVIDIA UNIX ... Kernel Module ... 580.159.04 ...": the first x.y.z.
            let is_version = |w: &&str| {
                w.split('.').count() >= 2
                    && w.split('.')
                        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            };
            if let Some(ver) = text
                .lines()
                .next()
                .and_then(|l| l.split_whitespace().find(is_version))
            {
                versions.insert("nvidia_driver".into(), ver.to_string());
            }
        }
        versions.insert("cudarc".into(), "0.19".into());
        let pad_copy = PadCopy::from_env();
        versions.insert("pad_copy_kernel".into(), pad_copy.name().into());
        let pad_stride = PadStride::from_env();
        versions.insert("pad_row_stride".into(), pad_stride.name().into());
        let info = BackendInfo {
            kind: BackendKind::Cuda,
            device_name: name,
            ordinal,
            capability: (major as u32, minor as u32),
            identity: DeviceIdentity {
                shared_memory: smem.max(0) as u64,
                device_capa: (major as u32, minor as u32),
            },
            total_memory,
            l2_bytes: flush_bytes as u64,
            versions,
        };
        Ok(Self {
            ctx,
            stream,
            blas,
            kernels,
            flush,
            events,
            timing,
            info,
            fill_seed: 0,
            pad_copy,
            pad_stride,
            after_long: false,
        })
    }

    /// Device facts.
    pub fn info(&self) -> &BackendInfo {
        &self.info
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

    /// The row stride, in elements, of a padded operand of `cols` columns of `elem` bytes, as
    /// the program the collection stands for allocates it ([`PadStride`]).
    pub fn padded_row_stride(&self, cols: usize, elem: usize) -> usize {
        self.pad_stride.row_stride(cols, elem)
    }

    /// Allocates `bytes` of device memory.
    pub fn alloc(&mut self, bytes: usize) -> Result<DeviceBuffer, BenchError> {
        self.ctx.bind_to_thread().map_err(drv_err)?;
        alloc_raw(bytes)
    }

    /// Fills `n` elements at `ptr` with uniform random values in [-1, 1) (never zeros).
    pub fn fill_random(
        &mut self,
        ptr: drv::CUdeviceptr,
        n: usize,
        dtype: DType,
    ) -> Result<(), BenchError> {
        self.fill_seed = self.fill_seed.wrapping_add(1);
        let name = match dtype {
            DType::F32 => "ah_fill_f32",
            DType::F16 => "ah_fill_f16",
            DType::BF16 => "ah_fill_bf16",
        };
        let f = &self.kernels[name];
        let n64 = n as u64;
        let blocks = n.div_ceil(256).clamp(1, 65_535 * 8) as u32;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let seed = self.fill_seed;
        let mut b = self.stream.launch_builder(f);
        b.arg(&ptr).arg(&n64).arg(&seed);
        // SAFETY: the kernel writes n elements of the dtype's size at ptr, which the caller
        // allocated with at least that size.
        unsafe { b.launch(cfg) }.map_err(drv_err)?;
        Ok(())
    }

    /// Sets `bytes` bytes at `ptr` to zero (stream-ordered).
    pub fn zero(&mut self, ptr: drv::CUdeviceptr, bytes: usize) -> Result<(), BenchError> {
        let s = self.stream.cu_stream();
        // SAFETY: the caller owns `bytes` bytes at `ptr` (allocations are 256-byte aligned).
        check(unsafe {
            if bytes.is_multiple_of(4) {
                drv::cuMemsetD32Async(ptr, 0, bytes / 4, s)
            } else {
                drv::cuMemsetD8Async(ptr, 0, bytes, s)
            }
        })
    }

    /// Zeroes a `height` x `width` rectangle of `elem` byte elements in a row-major buffer
    /// of row pitch `pitch_bytes` (PyTorch's `mat[-r:, -c:].fill_(0)`).
    pub fn zero_rect(
        &mut self,
        ptr: drv::CUdeviceptr,
        pitch_bytes: usize,
        elem: usize,
        width: usize,
        height: usize,
    ) -> Result<(), BenchError> {
        if width == 0 || height == 0 {
            return Ok(());
        }
        let s = self.stream.cu_stream();
        // SAFETY: the rectangle lies inside the caller's buffer.
        check(unsafe {
            match elem {
                2 => drv::cuMemsetD2D16Async(ptr, pitch_bytes, 0, width, height, s),
                4 => drv::cuMemsetD2D32Async(ptr, pitch_bytes, 0, width, height, s),
                _ => drv::cuMemsetD2D8Async(ptr, pitch_bytes, 0, width * elem, height, s),
            }
        })
    }

    /// Copies a `rows` x `cols` strided matrix (`src[r * s0 + c * s1]`) into the top-left of
    /// a row-major buffer with `dst_cols` columns. Element size 2 or 4 bytes.
    #[allow(clippy::too_many_arguments)]
    pub fn copy2d(
        &mut self,
        dst: drv::CUdeviceptr,
        src: drv::CUdeviceptr,
        rows: usize,
        cols: usize,
        s0: usize,
        s1: usize,
        dst_cols: usize,
        elem: usize,
    ) -> Result<(), BenchError> {
        if rows == 0 || cols == 0 {
            return Ok(());
        }
        if self.pad_copy == PadCopy::Tiled && s0 == 1 && s1 != 1 {
            return self.copy2d_transposed(dst, src, rows, cols, s1, dst_cols, elem);
        }
        let vec = self.pad_copy != PadCopy::Scalar && (dst_cols * elem).is_multiple_of(16);
        let name = match (elem, vec) {
            (2, false) => "ah_copy2d_u16",
            (4, false) => "ah_copy2d_u32",
            (2, true) => "ah_copy2d_vec_u16",
            (4, true) => "ah_copy2d_vec_u32",
            _ => return Err(BenchError::Other(format!("copy2d: element size {elem}"))),
        };
        let f = &self.kernels[name];
        let per_thread = if vec { 16 / elem } else { 1 };
        let gx = cols.div_ceil(per_thread).div_ceil(256).clamp(1, 1024) as u32;
        let gy = rows.clamp(1, 65_535) as u32;
        let cfg = LaunchConfig {
            grid_dim: (gx, gy, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let (rows, cols, s0, s1, dst_cols) = (
            rows as i64,
            cols as i64,
            s0 as i64,
            s1 as i64,
            dst_cols as i64,
        );
        let mut b = self.stream.launch_builder(f);
        b.arg(&dst)
            .arg(&src)
            .arg(&rows)
            .arg(&cols)
            .arg(&s0)
            .arg(&s1)
            .arg(&dst_cols);
        // SAFETY: the caller guarantees both buffers cover the addressed elements.
        unsafe { b.launch(cfg) }.map_err(drv_err)?;
        Ok(())
    }

    /// [`Self::copy2d`] of a transposed source (`src[r + c * s1]`): 32 x 32 tiles, 32 x 8
    /// threads a block.
    #[allow(clippy::too_many_arguments)]
    fn copy2d_transposed(
        &mut self,
        dst: drv::CUdeviceptr,
        src: drv::CUdeviceptr,
        rows: usize,
        cols: usize,
        s1: usize,
        dst_cols: usize,
        elem: usize,
    ) -> Result<(), BenchError> {
        let name = match elem {
            2 => "ah_copy2d_t_u16",
            4 => "ah_copy2d_t_u32",
            _ => return Err(BenchError::Other(format!("copy2d: element size {elem}"))),
        };
        let f = &self.kernels[name];
        let cfg = LaunchConfig {
            grid_dim: (
                rows.div_ceil(32).clamp(1, 1 << 20) as u32,
                cols.div_ceil(32).clamp(1, 65_535) as u32,
                1,
            ),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        let (rows, cols, s1, dst_cols) = (rows as i64, cols as i64, s1 as i64, dst_cols as i64);
        let mut b = self.stream.launch_builder(f);
        b.arg(&dst)
            .arg(&src)
            .arg(&rows)
            .arg(&cols)
            .arg(&s1)
            .arg(&dst_cols);
        // SAFETY: the caller guarantees both buffers cover the addressed elements.
        unsafe { b.launch(cfg) }.map_err(drv_err)?;
        Ok(())
    }

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

    /// Waits for the stream and reports any asynchronous error.
    pub fn synchronize(&mut self) -> Result<(), BenchError> {
        self.stream.synchronize().map_err(drv_err)
    }

    fn flush_l2(&mut self) -> Result<(), BenchError> {
        // PyTorch: `buffer.zero_()` on an int32 buffer of the L2 size.
        let n = self.flush.bytes / 4;
        // SAFETY: the flush buffer is owned by the backend.
        check(unsafe { drv::cuMemsetD32Async(self.flush.ptr, 0, n, self.stream.cu_stream()) })
    }

    /// Times `f` (which enqueues work on [`Self::stream`]) the way PyTorch's
    /// `InductorBenchmarker` does and returns the minimum and median of all timed calls.
    pub fn bench(
        &mut self,
        warmup: bool,
        f: &mut dyn FnMut(&mut CudaBackend) -> Result<(), BenchError>,
    ) -> Result<Measurement, BenchError> {
        let timing = self.timing;
        let mut after_long = self.after_long;
        let mut calls = CudaCalls {
            backend: self,
            f,
            used: 0,
        };
        let m = timing.measure(warmup, &mut after_long, &mut calls);
        self.after_long = after_long;
        m
    }

    fn timed_runs(
        &mut self,
        first_event: usize,
        n: usize,
        f: &mut dyn FnMut(&mut CudaBackend) -> Result<(), BenchError>,
    ) -> Result<Vec<f64>, BenchError> {
        let n = n.min(self.events.len() - first_event);
        for i in 0..n {
            self.flush_l2()?;
            self.events[first_event + i]
                .0
                .record(&self.stream)
                .map_err(drv_err)?;
            f(self)?;
            self.events[first_event + i]
                .1
                .record(&self.stream)
                .map_err(drv_err)?;
        }
        self.synchronize()?;
        let mut out = Vec::with_capacity(n);
        for (start, end) in &self.events[first_event..first_event + n] {
            out.push(f64::from(start.elapsed_ms(end).map_err(drv_err)?));
        }
        Ok(out)
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

fn alloc_raw(bytes: usize) -> Result<DeviceBuffer, BenchError> {
    let mut ptr: drv::CUdeviceptr = 0;
    // SAFETY: plain allocation into a local; freed by DeviceBuffer's Drop.
    check(unsafe { drv::cuMemAlloc_v2(&mut ptr, bytes.max(1)) })?;
    Ok(DeviceBuffer { ptr, bytes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_driver_is_reported_not_a_panic() {
        if CudaBackend::driver_present() {
            eprintln!("skipped: a CUDA driver is present (the GPU tests cover this machine)");
            return;
        }
        let err = CudaBackend::new(0, TimingConfig::PYTORCH)
            .err()
            .expect("no driver");
        assert!(matches!(err, CudaInitError::NoDriver), "{err}");
        assert!(err.to_string().contains("--device cpu"));
        assert_eq!(CudaBackend::device_count(), 0);
    }

    #[test]
    fn padded_row_strides_are_the_ones_inductor_allocated() {
        // Buffers of Inductor's compiled pad function on the H100 (PyTorch 2.11,
        // scripts/probe_pad_strides.py): (columns, element size) -> row stride.
        for (cols, elem, stride) in [
            (62552, 2, 62592),
            (45240, 2, 45248),
            (30664, 2, 30720),
            (6088, 2, 6144),
            (2056, 2, 2112),
            (5376, 2, 5376),
            (41864, 2, 41920),
            (1024, 2, 1024),
            (1000, 2, 1000),
            (4082, 4, 4096),
            (4096, 4, 4096),
        ] {
            assert_eq!(
                PadStride::Inductor.row_stride(cols, elem),
                stride,
                "{cols} x {elem} B"
            );
            assert_eq!(PadStride::Contiguous.row_stride(cols, elem), cols);
        }
    }
}
