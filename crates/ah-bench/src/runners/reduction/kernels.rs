//! The reduction kernels on the device: NVRTC compilation of `kernels/reduction.cu`, the
//! variant names, and launches on raw device pointers.
//!
//! A [`Variant`] is a family (persistent or looped) and a block size; its choice name has no
//! underscore (`persistent-256`, `looped-1024`), so PyTorch's regression parser, which splits
//! on `_`, reads it whole. A persistent variant holds the row in registers, so it exists only
//! for `cols <= block * max_items(block)`; launching it on a longer row is
//! [`KernelError::RowTooLong`], which the runner logs as `inf`.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use cudarc::driver::sys as drv;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};

use crate::dtype::DType;

/// The CUDA C source of every reduction kernel (compiled once per element type).
pub const REDUCTION_SOURCE: &str = include_str!("../../kernels/reduction.cu");

/// Block sizes every family is instantiated with.
pub const BLOCK_SIZES: [u32; 4] = [128, 256, 512, 1024];

/// Largest power-of-two items per thread of the persistent kernels for a block size, as
/// instantiated in `reduction.cu`: `block * max_items` is 16384 for every block size, so all
/// persistent variants hold the same rows (one validity bound on `cols`, which a tree learns
/// with one split).
pub fn max_items(block: u32) -> u32 {
    match block {
        0..=128 => 128,
        129..=256 => 64,
        257..=512 => 32,
        _ => 16,
    }
}

/// The longest row a persistent variant holds.
pub const PERSISTENT_MAX_COLS: usize = 16_384;

/// The reduction computed over each row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// `y[r] = sum(x[r, :])`, one value per row.
    Sum,
    /// `y[r, :] = softmax(x[r, :])`.
    Softmax,
}

impl Op {
    /// Both ops.
    pub const ALL: [Op; 2] = [Op::Sum, Op::Softmax];

    /// The logged name (`sum`, `softmax`), also the kernel name prefix.
    pub fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::Softmax => "softmax",
        }
    }

    /// Parses a logged name.
    pub fn parse(s: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.name() == s)
    }

    /// Number of output elements for a `rows x cols` input.
    pub fn output_len(self, rows: usize, cols: usize) -> usize {
        match self {
            Op::Sum => rows,
            Op::Softmax => rows * cols,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Kernel family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// One pass, the row held on chip.
    Persistent,
    /// The row walked in chunks (softmax: an online max/sum pass, then a write pass).
    Looped,
}

impl Family {
    /// `persistent` or `looped`.
    pub fn name(self) -> &'static str {
        match self {
            Family::Persistent => "persistent",
            Family::Looped => "looped",
        }
    }
}

/// One sub-kernel: a family and a block size (threads per block, one block per row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Variant {
    /// Persistent or looped.
    pub family: Family,
    /// Threads per block.
    pub block: u32,
}

impl Variant {
    /// Every variant, in logging order: persistent 128..1024, then looped 128..1024.
    pub fn all() -> Vec<Variant> {
        [Family::Persistent, Family::Looped]
            .into_iter()
            .flat_map(|family| {
                BLOCK_SIZES
                    .into_iter()
                    .map(move |block| Variant { family, block })
            })
            .collect()
    }

    /// The choice name: `persistent-256`, `looped-1024`.
    pub fn name(&self) -> String {
        format!("{}-{}", self.family.name(), self.block)
    }

    /// Parses a choice name; `None` for anything that is not one of [`Variant::all`].
    pub fn parse(s: &str) -> Option<Variant> {
        Variant::all().into_iter().find(|v| v.name() == s)
    }

    /// Items per thread the persistent kernel needs for a row of `cols` (the smallest power
    /// of two with `block * items >= cols`), or `None` when the row does not fit. Looped
    /// variants take any row: `Some(0)`.
    pub fn items_for(&self, cols: usize) -> Option<u32> {
        match self.family {
            Family::Looped => Some(0),
            Family::Persistent => {
                let need = cols
                    .div_ceil(self.block as usize)
                    .max(1)
                    .next_power_of_two();
                (need <= max_items(self.block) as usize).then_some(need as u32)
            }
        }
    }

    /// True when the variant can run a row of `cols` elements.
    pub fn fits(&self, cols: usize) -> bool {
        self.items_for(cols).is_some()
    }

    /// The `extern "C"` kernel name for an op and row length, or `None` when it does not fit.
    pub fn kernel_name(&self, op: Op, cols: usize) -> Option<String> {
        match (self.family, self.items_for(cols)?) {
            (Family::Looped, _) => Some(format!("{}_looped_{}", op.name(), self.block)),
            (Family::Persistent, items) => {
                Some(format!("{}_persistent_{}_{}", op.name(), self.block, items))
            }
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.family.name(), self.block)
    }
}

/// Why a reduction kernel could not be built or launched.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KernelError {
    /// NVRTC rejected the source.
    #[error("NVRTC could not compile the reduction kernels for {dtype}: {message}")]
    Compile {
        /// Element type of the module.
        dtype: &'static str,
        /// Compiler log.
        message: String,
    },
    /// A persistent variant was asked to run a row longer than it can hold.
    #[error("{variant} cannot hold a row of {cols} elements (at most {max})")]
    RowTooLong {
        /// The variant's name.
        variant: String,
        /// The row length.
        cols: usize,
        /// The longest row it holds.
        max: usize,
    },
    /// The shape is empty or exceeds the launch limits.
    #[error("invalid shape {rows}x{cols}: {reason}")]
    Shape {
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// A CUDA driver call failed (module load, launch).
    #[error("cuda: {0}")]
    Driver(String),
}

/// The reduction kernels of one element type, loaded into one context.
pub struct ReductionKernels {
    dtype: DType,
    functions: BTreeMap<String, CudaFunction>,
}

impl fmt::Debug for ReductionKernels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReductionKernels")
            .field("dtype", &self.dtype)
            .field("kernels", &self.functions.len())
            .finish()
    }
}

/// The `-DAH_DTYPE=` value of an element type.
fn dtype_define(dtype: DType) -> u32 {
    match dtype {
        DType::F32 => 0,
        DType::F16 => 1,
        DType::BF16 => 2,
    }
}

/// The NVRTC virtual architecture for a compute capability (bf16 conversions need 8.0+).
fn arch_for(capability: (i32, i32)) -> &'static str {
    match capability {
        (9, _) => "compute_90",
        (10, _) => "compute_100",
        (12, _) => "compute_120",
        (8, 6) => "compute_86",
        (8, 9) => "compute_89",
        _ => "compute_80",
    }
}

/// Every kernel name the source defines for an op (persistent for each block and items
/// count, looped for each block).
fn kernel_names() -> Vec<String> {
    let mut names = Vec::new();
    for op in Op::ALL {
        for block in BLOCK_SIZES {
            let mut items = 1;
            while items <= max_items(block) {
                names.push(format!("{}_persistent_{block}_{items}", op.name()));
                items *= 2;
            }
            names.push(format!("{}_looped_{block}", op.name()));
        }
    }
    names
}

impl ReductionKernels {
    /// Compiles [`REDUCTION_SOURCE`] for `dtype` with NVRTC and loads every kernel into `ctx`.
    pub fn compile(ctx: &Arc<CudaContext>, dtype: DType) -> Result<Self, KernelError> {
        Self::compile_source(ctx, dtype, REDUCTION_SOURCE)
    }

    /// Compiles a given source (the same kernels, e.g. an edited copy) for `dtype`.
    pub fn compile_source(
        ctx: &Arc<CudaContext>,
        dtype: DType,
        source: &str,
    ) -> Result<Self, KernelError> {
        let drv_err = |e: cudarc::driver::DriverError| KernelError::Driver(format!("{e:?}"));
        let capability = ctx.compute_capability().map_err(drv_err)?;
        let opts = cudarc::nvrtc::CompileOptions {
            arch: Some(arch_for(capability)),
            options: vec![
                format!("-DAH_DTYPE={}", dtype_define(dtype)),
                "-std=c++17".into(),
            ],
            ..Default::default()
        };
        let ptx = cudarc::nvrtc::compile_ptx_with_opts(source, opts).map_err(|e| {
            let message = match &e {
                cudarc::nvrtc::CompileError::CompileError { log, .. } => {
                    log.to_string_lossy().into_owned()
                }
                other => format!("{other:?}"),
            };
            KernelError::Compile {
                dtype: dtype.torch_name(),
                message,
            }
        })?;
        let module = ctx.load_module(ptx).map_err(drv_err)?;
        let mut functions = BTreeMap::new();
        for name in kernel_names() {
            let f = module.load_function(&name).map_err(drv_err)?;
            functions.insert(name, f);
        }
        Ok(Self { dtype, functions })
    }

    /// The element type these kernels read and write.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Enqueues one reduction of the `rows x cols` row-major tensor at `x` into `y`
    /// (`rows` elements for sum, `rows * cols` for softmax), on `stream`.
    ///
    /// The caller guarantees that `x` and `y` are device buffers of this context holding at
    /// least that many elements of [`Self::dtype`].
    #[allow(clippy::too_many_arguments)]
    pub fn launch(
        &self,
        stream: &CudaStream,
        variant: Variant,
        op: Op,
        x: drv::CUdeviceptr,
        y: drv::CUdeviceptr,
        rows: usize,
        cols: usize,
    ) -> Result<(), KernelError> {
        if rows == 0 || cols == 0 {
            return Err(KernelError::Shape {
                rows,
                cols,
                reason: "no elements",
            });
        }
        if rows > i32::MAX as usize || cols > i32::MAX as usize {
            return Err(KernelError::Shape {
                rows,
                cols,
                reason: "a dimension exceeds 2^31 - 1",
            });
        }
        let name = variant
            .kernel_name(op, cols)
            .ok_or_else(|| KernelError::RowTooLong {
                variant: variant.name(),
                cols,
                max: (variant.block * max_items(variant.block)) as usize,
            })?;
        let f = self
            .functions
            .get(&name)
            .ok_or_else(|| KernelError::Driver(format!("kernel {name} is not loaded")))?;
        let cfg = LaunchConfig {
            grid_dim: (rows as u32, 1, 1),
            block_dim: (variant.block, 1, 1),
            shared_mem_bytes: 0,
        };
        let cols_i32 = cols as i32;
        let mut b = stream.launch_builder(f);
        b.arg(&x).arg(&y).arg(&cols_i32);
        // SAFETY: the kernel reads rows * cols elements at x and writes op.output_len elements
        // at y; the caller guarantees both buffers are that large (see the doc comment).
        unsafe { b.launch(cfg) }.map_err(|e| KernelError::Driver(format!("{e:?}")))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_have_no_underscore_and_round_trip() {
        let all = Variant::all();
        assert_eq!(all.len(), 8);
        for v in &all {
            let name = v.name();
            assert!(!name.contains('_'), "{name}");
            assert_eq!(Variant::parse(&name), Some(*v));
            assert_eq!(v.to_string(), name);
        }
        assert_eq!(all[0].name(), "persistent-128");
        assert_eq!(all[7].name(), "looped-1024");
        assert_eq!(Variant::parse("persistent-64"), None);
        assert_eq!(Op::parse("softmax"), Some(Op::Softmax));
        assert_eq!(Op::parse("max"), None);
    }

    #[test]
    fn persistent_fits_only_rows_it_can_hold() {
        let p256 = Variant::parse("persistent-256").unwrap();
        assert_eq!(p256.items_for(1), Some(1));
        assert_eq!(p256.items_for(256), Some(1));
        assert_eq!(p256.items_for(257), Some(2));
        assert_eq!(p256.items_for(5000), Some(32));
        assert_eq!(p256.items_for(16384), Some(64));
        assert_eq!(p256.items_for(16385), None);
        let p1024 = Variant::parse("persistent-1024").unwrap();
        assert_eq!(p1024.items_for(16384), Some(16));
        assert_eq!(p1024.items_for(16385), None);
        let p128 = Variant::parse("persistent-128").unwrap();
        assert_eq!(p128.items_for(8192), Some(64));
        assert_eq!(p128.items_for(8193), Some(128));
        assert_eq!(p128.items_for(16385), None);
        for v in Variant::all()
            .into_iter()
            .filter(|v| v.family == Family::Persistent)
        {
            assert_eq!((v.block * max_items(v.block)) as usize, PERSISTENT_MAX_COLS);
            assert!(
                v.fits(PERSISTENT_MAX_COLS) && !v.fits(PERSISTENT_MAX_COLS + 1),
                "{v}"
            );
        }
        let l128 = Variant::parse("looped-128").unwrap();
        assert!(l128.fits(1 << 20));
        assert_eq!(
            p256.kernel_name(Op::Softmax, 300).as_deref(),
            Some("softmax_persistent_256_2")
        );
        assert_eq!(
            l128.kernel_name(Op::Sum, 3).as_deref(),
            Some("sum_looped_128")
        );
        assert_eq!(p128.kernel_name(Op::Sum, 17_000), None);
    }

    #[test]
    fn every_kernel_name_is_defined_in_the_source() {
        let names = kernel_names();
        // 2 ops x (8 + 7 + 6 + 5 persistent + 4 looped).
        assert_eq!(names.len(), 60);
        for name in &names {
            // The source defines them through PERSISTENT(B, I) and LOOPED(B).
            let parts: Vec<&str> = name.split('_').collect();
            let defined = match parts.as_slice() {
                [_, "persistent", b, i] => {
                    REDUCTION_SOURCE.contains(&format!("PERSISTENT({b}, {i})"))
                }
                [_, "looped", b] => REDUCTION_SOURCE.contains(&format!("LOOPED({b})")),
                _ => false,
            };
            assert!(defined, "{name} is not instantiated in reduction.cu");
        }
        // Every variant and every fitting row length maps to a loaded kernel name.
        for v in Variant::all() {
            for cols in [1, 31, 128, 1000, 8192, 16384, 100_000] {
                for op in Op::ALL {
                    if let Some(k) = v.kernel_name(op, cols) {
                        assert!(names.contains(&k), "{k}");
                    }
                }
            }
        }
    }
}
