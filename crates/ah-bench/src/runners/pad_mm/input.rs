//! One pad_mm input ([`PadMmInput`]) and what PyTorch's pad_mm derives from it: strides,
//! padded lengths, "prepadded", the memory and device preconditions, and the padded shapes.

use ah_core::DeviceIdentity;

use crate::dtype::DType;
use crate::runners::layout::{is_contiguous, operand_strides};

/// One pad_mm input: `mat1 (m x k) @ mat2 (k x n)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PadMmInput {
    /// Rows of mat1.
    pub m: usize,
    /// Inner dimension.
    pub k: usize,
    /// Columns of mat2.
    pub n: usize,
    /// Element type of both operands.
    pub dtype: DType,
    /// `torch.backends.cuda.matmul.allow_tf32` ("high" precision); only fp32 uses it.
    pub allow_tf32: bool,
    /// mat1 is `randn(k, m).t()`.
    pub transpose_left: bool,
    /// mat2 is `randn(n, k).t()`.
    pub transpose_right: bool,
    /// The generator asked for mat1 to be computed (`a + 1`) before the mm.
    pub prepadded_left: bool,
    /// Same for mat2.
    pub prepadded_right: bool,
    /// mat1 is produced in the compiled graph even when it is a transposed view (the gradient
    /// `dy.t()` of a weight's backward GEMM): Inductor fuses its padding into the producer, so
    /// `pad` is timed without mat1's padding copy, as for a pre-padded operand. Not a feature:
    /// PyTorch logs such an operand as not prepadded. Only the real-model sampler sets it.
    pub fuse_mat1_pad: bool,
}

/// PyTorch's `get_padded_length`.
pub fn padded_length(x: usize, align: usize) -> usize {
    if align == 0 || x.is_multiple_of(align) || x == 1 {
        0
    } else {
        (x / align + 1) * align - x
    }
}

impl PadMmInput {
    /// Strides of mat1: `(k, 1)`, or `(1, m)` when transposed.
    pub fn mat1_strides(&self) -> (usize, usize) {
        operand_strides(self.m, self.k, self.transpose_left)
    }
    /// Strides of mat2: `(n, 1)`, or `(1, k)` when transposed.
    pub fn mat2_strides(&self) -> (usize, usize) {
        operand_strides(self.k, self.n, self.transpose_right)
    }
    /// `(m, k, n)` padded lengths.
    pub fn padded_lengths(&self) -> (usize, usize, usize) {
        let a = self.dtype.align_size();
        (
            padded_length(self.m, a),
            padded_length(self.k, a),
            padded_length(self.n, a),
        )
    }
    /// PyTorch's `mat1_pre_padded` (`should_exclude_padding_time`): computed and contiguous.
    pub fn mat1_pre_padded(&self) -> bool {
        let (s0, s1) = self.mat1_strides();
        self.prepadded_left && is_contiguous(self.m, self.k, s0, s1)
    }
    /// mat1's padding is outside the timed `pad` choice: pre-padded (PyTorch's flag) or fused
    /// into its producer ([`Self::fuse_mat1_pad`]).
    pub fn mat1_padding_excluded(&self) -> bool {
        self.mat1_pre_padded() || self.fuse_mat1_pad
    }
    /// PyTorch's `mat2_pre_padded`.
    pub fn mat2_pre_padded(&self) -> bool {
        let (s0, s1) = self.mat2_strides();
        self.prepadded_right && is_contiguous(self.k, self.n, s0, s1)
    }
    /// Some dimension is unaligned for the dtype: PyTorch's pad_mm considers only such inputs.
    pub fn needs_padding(&self) -> bool {
        self.padded_lengths() != (0, 0, 0)
    }
    /// The value of the `using_tf32` feature.
    pub fn using_tf32(&self) -> ah_core::Value {
        if self.dtype == DType::F32 {
            self.allow_tf32.into()
        } else {
            "not_float_32".into()
        }
    }
}

/// PyTorch's `fits_in_memory`: the three operands take less than a quarter of the device.
pub fn fits_in_memory(dtype: DType, m: usize, k: usize, n: usize, total_memory: u64) -> bool {
    let bytes = dtype.itemsize() as f64 * (m * k + k * n + m * n) as f64;
    bytes < total_memory as f64 / 4.0
}

/// PyTorch's `pad_mm_precondition`: A100 needs all dims >= 512, H100/H200 >= 768, other
/// devices (and the CPU) always pass.
pub fn precondition(device: DeviceIdentity, m: usize, k: usize, n: usize) -> bool {
    let min = |x: usize| m >= x && k >= x && n >= x;
    if device == DeviceIdentity::A100 {
        min(512)
    } else if device == DeviceIdentity::H100 {
        min(768)
    } else {
        true
    }
}

/// Shapes derived from an input.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shapes {
    pub(super) mp: usize,
    pub(super) kp: usize,
    pub(super) np: usize,
    pub(super) pad1: bool,
    pub(super) pad2: bool,
}

pub(super) fn shapes(i: &PadMmInput) -> Shapes {
    let (mpad, kpad, npad) = i.padded_lengths();
    Shapes {
        mp: i.m + mpad,
        kp: i.k + kpad,
        np: i.n + npad,
        pad1: mpad != 0 || kpad != 0,
        pad2: kpad != 0 || npad != 0,
    }
}

/// The rectangle PyTorch's `write_pad` zeroes: `mat[-rp:, -cp:]`, where a zero length means
/// the whole dimension (`[-0:]` is `[0:]`). Returns (first row, first col, rows, cols).
pub(super) fn write_pad_rect(
    rows: usize,
    cols: usize,
    rp: usize,
    cp: usize,
) -> (usize, usize, usize, usize) {
    let (r0, nr) = if rp == 0 { (0, rows) } else { (rows - rp, rp) };
    let (c0, nc) = if cp == 0 { (0, cols) } else { (cols - cp, cp) };
    (r0, c0, nr, nc)
}
