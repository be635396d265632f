//! The `reduction` runner: persistent or looped row-wise reduction (spec section 13's
//! multi-kernel decision), as a learned choice.
//!
//! Inputs are `rows x cols` row-major tensors in float32, float16 or bfloat16, reduced along
//! the row by `sum` or `softmax` (fp32 accumulation). The choices are the kernel variants of
//! [`kernels`]: `persistent-{128,256,512,1024}` (one block per row, the row held in registers,
//! one read) and `looped-{128,256,512,1024}` (the row walked in chunks; softmax reads it twice).
//! A persistent variant whose row does not fit is logged as `inf`.
//!
//! Logged features, in this order: `rows`, `cols`, `row_bytes` (= cols * itemsize),
//! `total_bytes` (= rows * row_bytes) numerical; `dtype` (`torch.float16` style) and `op`
//! (`sum`, `softmax`) categorical.
//!
//! Shapes: `cols` from 32 to 131072 and `rows` from 1 to 65536, each a power of two with
//! probability 0.6 and otherwise log-uniform in between (so most rows are not multiples of the
//! block); `rows` is redrawn until the tensor fits in `min(256 MiB, memory / 8)`.

pub mod kernels;
pub mod reference;

use std::sync::{Arc, Mutex};

use ah_core::Context;
use rand::Rng;

use self::kernels::{Op, ReductionKernels, Variant};
use crate::backend::cuda::DeviceBuffer;
use crate::backend::{Backend, BackendKind, BenchError, Measurement};
use crate::dtype::DType;
use crate::runner::{BenchmarkRunner, SampleRng, Target};

/// Smallest and largest `log2(cols)`.
const COLS_LOG2: (u32, u32) = (5, 17);
/// Smallest and largest `log2(rows)`.
const ROWS_LOG2: (u32, u32) = (0, 16);
/// Largest input tensor, bytes.
const MAX_TENSOR_BYTES: u64 = 256 << 20;

/// One drawn input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReductionInput {
    /// Rows (one block each).
    pub rows: usize,
    /// Elements per row (the reduced dimension).
    pub cols: usize,
    /// Element type of input and output.
    pub dtype: DType,
    /// Sum or softmax.
    pub op: Op,
}

impl ReductionInput {
    /// Bytes of one row.
    pub fn row_bytes(&self) -> usize {
        self.cols * self.dtype.itemsize()
    }

    /// Bytes of the input tensor.
    pub fn total_bytes(&self) -> usize {
        self.rows * self.row_bytes()
    }
}

/// The decision context of a reduction, as the runner logs it and the runtime asks with it.
pub fn reduction_context(rows: usize, cols: usize, dtype: DType, op: Op) -> Context {
    let input = ReductionInput {
        rows,
        cols,
        dtype,
        op,
    };
    let mut c = Context::with_capacity(6);
    c.add("rows", rows)
        .add("cols", cols)
        .add("row_bytes", input.row_bytes())
        .add("total_bytes", input.total_bytes())
        .add_categorical("dtype", dtype.torch_name())
        .add_categorical("op", op.name());
    c
}

/// Device state of one input: the input and output buffers and the compiled kernels.
#[derive(Debug)]
pub struct Prepared {
    x: DeviceBuffer,
    y: DeviceBuffer,
    kernels: Arc<ReductionKernels>,
}

/// The `reduction` runner.
#[derive(Debug, Default)]
pub struct ReductionRunner {
    /// Compiled kernels per (context, dtype): NVRTC runs once per device and element type.
    compiled: Mutex<Vec<(usize, DType, Arc<ReductionKernels>)>>,
}

impl ReductionRunner {
    /// A runner with nothing compiled yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn kernels(
        &self,
        cuda: &crate::backend::CudaBackend,
        dtype: DType,
    ) -> Result<Arc<ReductionKernels>, BenchError> {
        let ctx_id = cuda.context().cu_ctx() as usize;
        let mut compiled = self.compiled.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, _, k)) = compiled
            .iter()
            .find(|(c, d, _)| *c == ctx_id && *d == dtype)
        {
            return Ok(Arc::clone(k));
        }
        let k = Arc::new(
            ReductionKernels::compile(cuda.context(), dtype)
                .map_err(|e| BenchError::Cuda(e.to_string()))?,
        );
        compiled.push((ctx_id, dtype, Arc::clone(&k)));
        Ok(k)
    }
}

/// Draws a dimension in `[2^lo, 2^hi]`: a power of two with probability 0.6, else log-uniform.
fn draw_dim(rng: &mut SampleRng, (lo, hi): (u32, u32)) -> usize {
    if rng.random_bool(0.6) {
        1usize << rng.random_range(lo..=hi)
    } else {
        let e: f64 = rng.random_range(f64::from(lo)..f64::from(hi));
        (e.exp2().round() as usize).clamp(1 << lo, 1 << hi)
    }
}

impl BenchmarkRunner for ReductionRunner {
    type Input = ReductionInput;
    type Prepared = Prepared;

    fn name(&self) -> &'static str {
        "reduction"
    }

    fn description(&self) -> &'static str {
        "row-wise sum/softmax: persistent (row on chip) or looped kernel, block size 128..1024 (NVRTC)"
    }

    fn choices(&self) -> Vec<String> {
        Variant::all().iter().map(Variant::name).collect()
    }

    fn supports(&self, kind: BackendKind) -> bool {
        kind == BackendKind::Cuda
    }

    fn create_input(&self, rng: &mut SampleRng, target: &Target) -> ReductionInput {
        let op = if rng.random_bool(0.5) {
            Op::Sum
        } else {
            Op::Softmax
        };
        let dtype = [DType::F32, DType::F16, DType::BF16][rng.random_range(0..3usize)];
        let cols = draw_dim(rng, COLS_LOG2);
        let cap = if target.total_memory > 0 {
            MAX_TENSOR_BYTES.min(target.total_memory / 8)
        } else {
            MAX_TENSOR_BYTES
        };
        let row_bytes = (cols * dtype.itemsize()) as u64;
        // rows = 1 always fits (at most 512 KiB), so this ends.
        let rows = loop {
            let rows = draw_dim(rng, ROWS_LOG2);
            if rows as u64 * row_bytes <= cap.max(row_bytes) {
                break rows;
            }
        };
        ReductionInput {
            rows,
            cols,
            dtype,
            op,
        }
    }

    fn context(&self, input: &ReductionInput) -> Context {
        reduction_context(input.rows, input.cols, input.dtype, input.op)
    }

    fn prepare(
        &self,
        input: &ReductionInput,
        backend: &mut Backend,
    ) -> Result<Prepared, BenchError> {
        let cuda = backend.cuda()?;
        let kernels = self.kernels(cuda, input.dtype)?;
        let n = input.rows * input.cols;
        let x = cuda.alloc(input.total_bytes())?;
        let y = cuda.alloc(input.op.output_len(input.rows, input.cols) * input.dtype.itemsize())?;
        cuda.fill_random(x.ptr(), n, input.dtype)?;
        cuda.synchronize()?;
        Ok(Prepared { x, y, kernels })
    }

    fn run(
        &self,
        input: &ReductionInput,
        prepared: &mut Prepared,
        choice: &str,
        warmup: bool,
        backend: &mut Backend,
    ) -> Result<Measurement, BenchError> {
        let variant = Variant::parse(choice)
            .ok_or_else(|| BenchError::Other(format!("unknown reduction choice `{choice}`")))?;
        let (rows, cols, op) = (input.rows, input.cols, input.op);
        if !variant.fits(cols) {
            return Err(BenchError::Unsupported(format!(
                "{choice} cannot hold a row of {cols} elements"
            )));
        }
        let cuda = backend.cuda()?;
        let (x, y) = (prepared.x.ptr(), prepared.y.ptr());
        let kernels = Arc::clone(&prepared.kernels);
        cuda.bench(warmup, &mut |b| {
            kernels
                .launch(b.stream(), variant, op, x, y, rows, cols)
                .map_err(|e| BenchError::Cuda(e.to_string()))
        })
    }
}

#[cfg(test)]
mod tests {
    use ah_core::DeviceIdentity;
    use rand::SeedableRng;

    use super::*;

    fn target() -> Target {
        crate::runners::test_target(BackendKind::Cuda, DeviceIdentity::H100)
    }

    #[test]
    fn context_is_logged_in_order_with_python_values() {
        let r = ReductionRunner::new();
        let input = ReductionInput {
            rows: 3,
            cols: 1000,
            dtype: DType::BF16,
            op: Op::Softmax,
        };
        let c = r.context(&input);
        assert_eq!(
            c.feature_names_csv(),
            "rows,cols,row_bytes,total_bytes,dtype,op"
        );
        assert_eq!(
            c.feature_values_csv(),
            "3,1000,2000,6000,torch.bfloat16,softmax"
        );
        let (num, cat) = c.numerical_and_categorical();
        assert_eq!(num, ["rows", "cols", "row_bytes", "total_bytes"]);
        assert_eq!(cat, ["dtype", "op"]);
        assert_eq!(r.choices().len(), 8);
        assert!(r.choices().iter().all(|c| !c.contains('_')));
        assert!(r.supports(BackendKind::Cuda) && !r.supports(BackendKind::Cpu));
    }

    #[test]
    fn draws_are_seeded_and_cover_the_range() {
        let r = ReductionRunner::new();
        let draw = |seed| {
            let mut rng = SampleRng::seed_from_u64(seed);
            (0..2000)
                .map(|_| r.create_input(&mut rng, &target()))
                .collect::<Vec<_>>()
        };
        let a = draw(7);
        assert_eq!(a, draw(7));
        assert_ne!(a, draw(8));
        let cols: Vec<usize> = a.iter().map(|i| i.cols).collect();
        let rows: Vec<usize> = a.iter().map(|i| i.rows).collect();
        assert_eq!(cols.iter().min(), Some(&32));
        assert_eq!(cols.iter().max(), Some(&131_072));
        assert_eq!(rows.iter().min(), Some(&1));
        assert!(rows.iter().any(|&r| r >= 32_768), "large row counts drawn");
        assert!(
            cols.iter().any(|c| !c.is_power_of_two()),
            "ragged rows drawn"
        );
        for i in &a {
            assert!(i.total_bytes() as u64 <= MAX_TENSOR_BYTES, "{i:?}");
        }
        for dtype in [DType::F32, DType::F16, DType::BF16] {
            assert!(a.iter().any(|i| i.dtype == dtype));
        }
        assert!(a.iter().any(|i| i.op == Op::Sum) && a.iter().any(|i| i.op == Op::Softmax));
        // Both families must matter: many rows fit the persistent kernels, many do not.
        let fit = a.iter().filter(|i| i.cols <= 16_384).count();
        assert!(
            fit > 500 && fit < 1800,
            "{fit} of 2000 rows fit a persistent kernel"
        );
    }

    #[test]
    fn small_memory_caps_the_tensor() {
        let r = ReductionRunner::new();
        let t = Target {
            total_memory: 64 << 20,
            ..target()
        };
        let mut rng = SampleRng::seed_from_u64(1);
        for _ in 0..500 {
            let i = r.create_input(&mut rng, &t);
            assert!(i.total_bytes() <= (8 << 20).max(i.row_bytes()), "{i:?}");
        }
    }
}
