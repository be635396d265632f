//! A small cuBLASLt layer for the mm runner: one handle, one matmul plan (descriptor and
//! layouts) per GEMM shape, the library's heuristic candidates for that plan, the stable
//! configuration id of each candidate, and launches of a chosen candidate on a stream.
//!
//! Everything goes through cudarc's `cublaslt::sys` bindings (loaded at run time like the rest
//! of the CUDA backend). Row-major `C[m, n] = A[m, k] @ B[k, n]` (PyTorch's `torch.mm`) is
//! column-major `C^T = B^T A^T`, so cuBLASLt's "A" is our B and its "B" our A, exactly as the
//! backend's cuBLAS GEMM does it.

use std::ffi::c_void;

use cudarc::cublaslt::sys as lt;
use cudarc::driver::sys as drv;

use crate::backend::BenchError;
use crate::dtype::DType;

/// Workspace offered to every algorithm (split-K and stream-K need one); NVIDIA's Hopper
/// recommendation.
pub const WORKSPACE_BYTES: usize = 32 << 20;

/// `cublasOperation_t` values (the cuBLASLt bindings do not re-export the enum).
const OP_N: i32 = 0;
const OP_T: i32 = 1;

fn lt_err(what: &str, s: lt::cublasStatus_t) -> BenchError {
    if s == lt::cublasStatus_t::CUBLAS_STATUS_ALLOC_FAILED {
        BenchError::OutOfMemory(format!("cuBLASLt {what}: {s:?}"))
    } else {
        BenchError::Cuda(format!("cuBLASLt {what}: {s:?}"))
    }
}

fn check(what: &str, s: lt::cublasStatus_t) -> Result<(), BenchError> {
    if s == lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(lt_err(what, s))
    }
}

/// True when `libcublasLt` can be loaded.
pub fn library_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { lt::is_culib_present() }
}

/// The cuBLASLt version as `major.minor.patch` (from `cublasLtGetVersion`).
pub fn version() -> Option<String> {
    if !library_present() {
        return None;
    }
    // SAFETY: a plain query.
    let v = unsafe { lt::cublasLtGetVersion() };
    Some(format!("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100))
}

/// A cuBLASLt handle, destroyed on drop.
#[derive(Debug)]
pub struct LtHandle(lt::cublasLtHandle_t);

// SAFETY: a cuBLASLt handle may be used from any thread as long as calls do not race; the
// runner uses it from the one worker thread that owns the input.
unsafe impl Send for LtHandle {}

impl LtHandle {
    /// Creates a handle (the CUDA context must be current on this thread).
    pub fn new() -> Result<Self, BenchError> {
        if !library_present() {
            return Err(BenchError::Unsupported(
                "libcublasLt could not be loaded; add the folder that holds it (e.g. /usr/local/cuda/lib64) to LD_LIBRARY_PATH".into(),
            ));
        }
        let mut h: lt::cublasLtHandle_t = std::ptr::null_mut();
        // SAFETY: writes a handle into a local.
        check("create", unsafe { lt::cublasLtCreate(&mut h) })?;
        Ok(Self(h))
    }
}

impl Drop for LtHandle {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: created by cublasLtCreate, destroyed once.
            unsafe {
                let _ = lt::cublasLtDestroy(self.0);
            }
        }
    }
}

/// The configuration attributes of an algorithm (`cublasLtMatmulAlgoConfigGetAttribute`):
/// what makes two candidates different kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AlgoConfig {
    /// `CUBLASLT_ALGO_CONFIG_ID`.
    pub algo: i64,
    /// `CUBLASLT_ALGO_CONFIG_TILE_ID`.
    pub tile: i64,
    /// `CUBLASLT_ALGO_CONFIG_STAGES_ID`.
    pub stages: i64,
    /// `CUBLASLT_ALGO_CONFIG_SPLITK_NUM`.
    pub splitk: i64,
    /// `CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME`.
    pub reduction: i64,
    /// `CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING`.
    pub swizzle: i64,
    /// `CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION`.
    pub custom: i64,
    /// `CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID`.
    pub inner: i64,
    /// `CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID`.
    pub cluster: i64,
}

impl AlgoConfig {
    /// The stable choice id logged for this configuration, e.g.
    /// `algo66-tile20-stages8-splitk1-red0-swz0-cus0-in0-cl0`: letters, digits and `-` only (no
    /// commas for the log, no underscores for PyTorch's regression choice parsing).
    pub fn choice_id(&self) -> String {
        format!(
            "algo{}-tile{}-stages{}-splitk{}-red{}-swz{}-cus{}-in{}-cl{}",
            self.algo,
            self.tile,
            self.stages,
            self.splitk,
            self.reduction,
            self.swizzle,
            self.custom,
            self.inner,
            self.cluster
        )
    }

    /// Parses a [`choice_id`](Self::choice_id) back (`None` for anything else, `extern_mm`
    /// included).
    pub fn parse(id: &str) -> Option<AlgoConfig> {
        let mut vals = [0i64; 9];
        let keys = [
            "algo", "tile", "stages", "splitk", "red", "swz", "cus", "in", "cl",
        ];
        // Values may be negative (`splitk-1`), so `-` both separates fields and signs values:
        // read each key, an optional `-`, then digits.
        let mut rest = id;
        for (n, (key, v)) in keys.iter().zip(vals.iter_mut()).enumerate() {
            if n > 0 {
                rest = rest.strip_prefix('-')?;
            }
            rest = rest.strip_prefix(key)?;
            let neg = rest.starts_with('-');
            let body = if neg { &rest[1..] } else { rest };
            let len = body.bytes().take_while(u8::is_ascii_digit).count();
            if len == 0 {
                return None;
            }
            let x: i64 = body[..len].parse().ok()?;
            *v = if neg { -x } else { x };
            rest = &body[len..];
        }
        if !rest.is_empty() {
            return None;
        }
        Some(AlgoConfig {
            algo: vals[0],
            tile: vals[1],
            stages: vals[2],
            splitk: vals[3],
            reduction: vals[4],
            swizzle: vals[5],
            custom: vals[6],
            inner: vals[7],
            cluster: vals[8],
        })
    }

    /// Reads the attributes of `algo`.
    pub fn of(algo: &lt::cublasLtMatmulAlgo_t) -> Result<Self, BenchError> {
        use lt::cublasLtMatmulAlgoConfigAttributes_t as A;
        let get = |attr: A| -> Result<i64, BenchError> {
            // Ask the attribute's size first: the getter insists on the exact size.
            let mut size = 0usize;
            // SAFETY: size query (null buffer, zero size) into a local.
            check("algo config size", unsafe {
                lt::cublasLtMatmulAlgoConfigGetAttribute(
                    algo,
                    attr,
                    std::ptr::null_mut(),
                    0,
                    &mut size,
                )
            })?;
            if size == 0 || size > 8 {
                return Err(BenchError::Cuda(format!(
                    "cuBLASLt algo attribute {attr:?} has size {size}"
                )));
            }
            let mut buf = [0u8; 8];
            let mut written = 0usize;
            // SAFETY: `buf` holds `size` <= 8 bytes.
            check("algo config", unsafe {
                lt::cublasLtMatmulAlgoConfigGetAttribute(
                    algo,
                    attr,
                    buf.as_mut_ptr().cast::<c_void>(),
                    size,
                    &mut written,
                )
            })?;
            // Little-endian, sign-extended from the attribute's width.
            let raw = u64::from_le_bytes(buf);
            let bits = 8 * size as u32;
            Ok(if bits == 64 {
                raw as i64
            } else {
                let shift = 64 - bits;
                ((raw << shift) as i64) >> shift
            })
        };
        Ok(AlgoConfig {
            algo: get(A::CUBLASLT_ALGO_CONFIG_ID)?,
            tile: get(A::CUBLASLT_ALGO_CONFIG_TILE_ID)?,
            stages: get(A::CUBLASLT_ALGO_CONFIG_STAGES_ID)?,
            splitk: get(A::CUBLASLT_ALGO_CONFIG_SPLITK_NUM)?,
            reduction: get(A::CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME)?,
            swizzle: get(A::CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING)?,
            custom: get(A::CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION)?,
            inner: get(A::CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID)?,
            cluster: get(A::CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID)?,
        })
    }
}

/// One candidate of cuBLASLt's heuristic.
#[derive(Debug, Clone, Copy)]
pub struct Candidate {
    /// The opaque algorithm.
    pub algo: lt::cublasLtMatmulAlgo_t,
    /// Its configuration.
    pub config: AlgoConfig,
    /// Workspace it needs (bytes).
    pub workspace: usize,
    /// cuBLASLt's estimated wave count.
    pub waves: f32,
}

/// The shape of one GEMM, row-major semantics (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GemmShape {
    /// Rows of A and C.
    pub m: usize,
    /// Inner dimension.
    pub k: usize,
    /// Columns of B and C.
    pub n: usize,
    /// A is a transposed view of a row-major `k x m` buffer (strides `(1, m)`).
    pub trans_a: bool,
    /// B is a transposed view of a row-major `n x k` buffer (strides `(1, k)`).
    pub trans_b: bool,
    /// Element type of A, B and C; fp32 runs with TF32 tensor cores.
    pub dtype: DType,
}

impl GemmShape {
    /// Leading dimension of A's buffer.
    pub fn lda(&self) -> usize {
        if self.trans_a {
            self.m
        } else {
            self.k
        }
    }
    /// Leading dimension of B's buffer.
    pub fn ldb(&self) -> usize {
        if self.trans_b {
            self.k
        } else {
            self.n
        }
    }
}

/// A matmul descriptor, the four layouts and a preference with the workspace limit, for one
/// [`GemmShape`]; destroyed on drop.
#[derive(Debug)]
pub struct MatmulPlan {
    desc: lt::cublasLtMatmulDesc_t,
    // cuBLASLt's A (our B), cuBLASLt's B (our A), C = D.
    lt_a: lt::cublasLtMatrixLayout_t,
    lt_b: lt::cublasLtMatrixLayout_t,
    lt_c: lt::cublasLtMatrixLayout_t,
    pref: lt::cublasLtMatmulPreference_t,
    shape: GemmShape,
}

// SAFETY: plain descriptors, used by one thread at a time.
unsafe impl Send for MatmulPlan {}

impl Drop for MatmulPlan {
    fn drop(&mut self) {
        // SAFETY: each object was created once by `MatmulPlan::new` (null when creation stopped
        // early) and is destroyed once.
        unsafe {
            if !self.pref.is_null() {
                let _ = lt::cublasLtMatmulPreferenceDestroy(self.pref);
            }
            for l in [self.lt_a, self.lt_b, self.lt_c] {
                if !l.is_null() {
                    let _ = lt::cublasLtMatrixLayoutDestroy(l);
                }
            }
            if !self.desc.is_null() {
                let _ = lt::cublasLtMatmulDescDestroy(self.desc);
            }
        }
    }
}

fn data_type(d: DType) -> lt::cudaDataType {
    match d {
        DType::F16 => lt::cudaDataType::CUDA_R_16F,
        DType::BF16 => lt::cudaDataType::CUDA_R_16BF,
        DType::F32 => lt::cudaDataType::CUDA_R_32F,
    }
}

impl MatmulPlan {
    /// Describes `shape`: fp32 accumulation (TF32 tensor cores for fp32 inputs), fp32 scale,
    /// at most [`WORKSPACE_BYTES`] of workspace.
    pub fn new(shape: GemmShape) -> Result<Self, BenchError> {
        let mut plan = MatmulPlan {
            desc: std::ptr::null_mut(),
            lt_a: std::ptr::null_mut(),
            lt_b: std::ptr::null_mut(),
            lt_c: std::ptr::null_mut(),
            pref: std::ptr::null_mut(),
            shape,
        };
        let compute = match shape.dtype {
            DType::F32 => lt::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32,
            DType::F16 | DType::BF16 => lt::cublasComputeType_t::CUBLAS_COMPUTE_32F,
        };
        let dt = data_type(shape.dtype);
        let (m, k, n) = (shape.m as u64, shape.k as u64, shape.n as u64);
        // SAFETY: every call writes into the plan's fields or reads locals of the right size;
        // partially built plans are cleaned up by Drop.
        unsafe {
            check(
                "matmul desc",
                lt::cublasLtMatmulDescCreate(&mut plan.desc, compute, lt::cudaDataType::CUDA_R_32F),
            )?;
            let op_a: i32 = if shape.trans_b { OP_T } else { OP_N };
            let op_b: i32 = if shape.trans_a { OP_T } else { OP_N };
            for (attr, v) in [
                (
                    lt::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSA,
                    &op_a,
                ),
                (
                    lt::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSB,
                    &op_b,
                ),
            ] {
                check(
                    "matmul desc transpose",
                    lt::cublasLtMatmulDescSetAttribute(
                        plan.desc,
                        attr,
                        (v as *const i32).cast::<c_void>(),
                        std::mem::size_of::<i32>(),
                    ),
                )?;
            }
            // cuBLASLt's A = our B: op(A) is n x k; stored n x k (N) or k x n (T).
            let (ar, ac) = if shape.trans_b { (k, n) } else { (n, k) };
            check(
                "layout",
                lt::cublasLtMatrixLayoutCreate(&mut plan.lt_a, dt, ar, ac, shape.ldb() as i64),
            )?;
            // cuBLASLt's B = our A: op(B) is k x m; stored k x m (N) or m x k (T).
            let (br, bc) = if shape.trans_a { (m, k) } else { (k, m) };
            check(
                "layout",
                lt::cublasLtMatrixLayoutCreate(&mut plan.lt_b, dt, br, bc, shape.lda() as i64),
            )?;
            check(
                "layout",
                lt::cublasLtMatrixLayoutCreate(&mut plan.lt_c, dt, n, m, n as i64),
            )?;
            check(
                "preference",
                lt::cublasLtMatmulPreferenceCreate(&mut plan.pref),
            )?;
            let ws = WORKSPACE_BYTES as u64;
            check(
                "preference workspace",
                lt::cublasLtMatmulPreferenceSetAttribute(
                    plan.pref,
                    lt::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                    (&ws as *const u64).cast::<c_void>(),
                    std::mem::size_of::<u64>(),
                ),
            )?;
        }
        Ok(plan)
    }

    /// The shape.
    pub fn shape(&self) -> GemmShape {
        self.shape
    }

    /// cuBLASLt's heuristic candidates (`cublasLtMatmulAlgoGetHeuristic`, up to `requested`),
    /// in its ranking order, only those it reports as usable. The first is what a cuBLASLt
    /// user gets by default.
    pub fn candidates(
        &self,
        handle: &LtHandle,
        requested: usize,
    ) -> Result<Vec<Candidate>, BenchError> {
        let requested = requested.clamp(1, 1024);
        // SAFETY: the result struct is plain data; zeroes are a valid (empty) value.
        let mut results: Vec<lt::cublasLtMatmulHeuristicResult_t> =
            vec![unsafe { std::mem::zeroed() }; requested];
        let mut count: i32 = 0;
        // SAFETY: descriptors are live; `results` has `requested` slots.
        check("heuristic", unsafe {
            lt::cublasLtMatmulAlgoGetHeuristic(
                handle.0,
                self.desc,
                self.lt_a,
                self.lt_b,
                self.lt_c,
                self.lt_c,
                self.pref,
                requested as i32,
                results.as_mut_ptr(),
                &mut count,
            )
        })?;
        let count = (count.max(0) as usize).min(requested);
        let mut out = Vec::with_capacity(count);
        for r in &results[..count] {
            if r.state != lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
                continue;
            }
            out.push(Candidate {
                algo: r.algo,
                config: AlgoConfig::of(&r.algo)?,
                workspace: r.workspaceSize,
                waves: r.wavesCount,
            });
        }
        Ok(out)
    }

    /// Enqueues `D = A @ B` with algorithm `algo` on `stream`. `a`, `b`, `c` are device
    /// buffers of the plan's shape (A `m x k` or its transposed storage, B likewise, C
    /// row-major `m x n`); `workspace` holds `workspace_bytes`.
    #[allow(clippy::too_many_arguments)]
    pub fn launch(
        &self,
        handle: &LtHandle,
        algo: &lt::cublasLtMatmulAlgo_t,
        a: drv::CUdeviceptr,
        b: drv::CUdeviceptr,
        c: drv::CUdeviceptr,
        workspace: drv::CUdeviceptr,
        workspace_bytes: usize,
        stream: drv::CUstream,
    ) -> Result<(), BenchError> {
        let alpha: f32 = 1.0;
        let beta: f32 = 0.0;
        // SAFETY: pointers describe live buffers of the plan's shape (caller contract); the
        // driver's and cuBLASLt's stream types are the same CUstream_st.
        check("matmul", unsafe {
            lt::cublasLtMatmul(
                handle.0,
                self.desc,
                (&alpha as *const f32).cast::<c_void>(),
                b as *const c_void,
                self.lt_a,
                a as *const c_void,
                self.lt_b,
                (&beta as *const f32).cast::<c_void>(),
                c as *const c_void,
                self.lt_c,
                c as *mut c_void,
                self.lt_c,
                algo,
                workspace as *mut c_void,
                workspace_bytes,
                stream.cast::<lt::CUstream_st>(),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choice_id_round_trips_and_has_no_separators() {
        let c = AlgoConfig {
            algo: 66,
            tile: 20,
            stages: 8,
            splitk: 1,
            reduction: 0,
            swizzle: 1,
            custom: 2,
            inner: 3,
            cluster: 4,
        };
        let id = c.choice_id();
        assert_eq!(id, "algo66-tile20-stages8-splitk1-red0-swz1-cus2-in3-cl4");
        assert!(!id.contains(',') && !id.contains('_'));
        assert_eq!(AlgoConfig::parse(&id), Some(c));
        let neg = AlgoConfig { splitk: -1, ..c };
        assert_eq!(
            neg.choice_id(),
            "algo66-tile20-stages8-splitk-1-red0-swz1-cus2-in3-cl4"
        );
        assert_eq!(AlgoConfig::parse(&neg.choice_id()), Some(neg));
        assert_eq!(AlgoConfig::parse(&format!("{id}-x")), None);
        assert_eq!(AlgoConfig::parse("extern_mm"), None);
        assert_eq!(AlgoConfig::parse("algo1-tile2"), None);
        assert_eq!(
            AlgoConfig::parse("algox-tile20-stages8-splitk1-red0-swz1-cus2-in3-cl4"),
            None
        );
    }

    #[test]
    fn leading_dimensions_follow_the_views() {
        let s = GemmShape {
            m: 3,
            k: 5,
            n: 7,
            trans_a: false,
            trans_b: false,
            dtype: DType::F16,
        };
        assert_eq!((s.lda(), s.ldb()), (5, 7));
        let t = GemmShape {
            trans_a: true,
            trans_b: true,
            ..s
        };
        assert_eq!((t.lda(), t.ldb()), (3, 5));
    }
}
