//! One GEMM that [`super::InductorMmRunner`] draws and its worker compiles: the operation, its
//! dimensions, dtype and operand layouts, where it came from, and whether a draw is kept
//! ([`Gemm::fits`]). [`super::shapes`] decides which GEMMs are drawn.

use crate::dtype::DType;
use crate::runner::Target;
use crate::runners::pad_mm::real_models::GemmKind;

/// The GEMM operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `torch.mm(a, b)`.
    Mm,
    /// `torch.addmm(bias, a, b)`, bias of length n.
    Addmm,
    /// `torch.bmm(a, b)`.
    Bmm,
}

impl Op {
    /// The name the worker and the log use.
    pub fn name(self) -> &'static str {
        match self {
            Op::Mm => "mm",
            Op::Addmm => "addmm",
            Op::Bmm => "bmm",
        }
    }
}

/// Where a GEMM came from (described, not logged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A training step's GEMM of a linear layer.
    Training(GemmKind),
    /// Inference, one token per sequence.
    Decode,
    /// Inference, whole prompts.
    Prefill,
    /// Attention's batched GEMMs.
    Attention,
    /// PyTorch-style random shapes.
    Generator,
}

/// One GEMM: `a (m x k) @ b (k x n)`, `batch` of them for bmm.
#[derive(Debug, Clone, PartialEq)]
pub struct Gemm {
    /// The operation.
    pub op: Op,
    /// Batch (1 unless bmm).
    pub batch: usize,
    /// Rows of a.
    pub m: usize,
    /// Inner dimension.
    pub k: usize,
    /// Columns of b.
    pub n: usize,
    /// Element type of both operands.
    pub dtype: DType,
    /// fp32 with TF32 allowed (`torch.backends.cuda.matmul.allow_tf32`).
    pub tf32: bool,
    /// a is stored transposed (`randn(k, m).t()`).
    pub trans_a: bool,
    /// b is stored transposed (`randn(n, k).t()`).
    pub trans_b: bool,
    /// Where it came from.
    pub source: Source,
}

impl Gemm {
    /// Strides of a's last two dimensions.
    pub fn mat1_strides(&self) -> (usize, usize) {
        crate::runners::operand_strides(self.m, self.k, self.trans_a)
    }

    /// Strides of b's last two dimensions.
    pub fn mat2_strides(&self) -> (usize, usize) {
        crate::runners::operand_strides(self.k, self.n, self.trans_b)
    }

    /// Multiply-adds times two.
    pub fn flops(&self) -> f64 {
        2.0 * (self.batch * self.m) as f64 * self.k as f64 * self.n as f64
    }

    /// Bytes of both operands, the bias and the output.
    pub fn bytes(&self) -> u64 {
        let elems = self.batch * (self.m * self.k + self.k * self.n + self.m * self.n) + self.n;
        (elems * self.dtype.itemsize()) as u64
    }

    /// Whether the draw is kept: its operands and output take at most an eighth of the
    /// device, and its work is under a flop cap per dtype (about what cuBLAS runs in a few
    /// milliseconds), since autotuning time grows with the GEMM's run time.
    pub fn fits(&self, target: &Target) -> bool {
        let cap = match (self.dtype, self.tf32) {
            (DType::F32, false) => 1.5e11,
            (DType::F32, true) => 1.5e12,
            _ => 3.0e12,
        };
        self.flops() <= cap && self.bytes() <= target.total_memory / 8
    }
}
