//! How a GEMM's operands are laid out: their strides ([`operand_strides`]), PyTorch's
//! contiguity ([`is_contiguous`]) and the layout features every GEMM runner logs
//! ([`add_mm_layout_features`]).

/// The strides of a GEMM operand that is `rows x cols`: `(cols, 1)` when it is row-major, `(1,
/// rows)` when it is a transposed view of a row-major `cols x rows` buffer. Every GEMM runner's
/// `mat1_strides` (`rows x cols` = `m x k`) and `mat2_strides` (`k x n`) is this.
pub fn operand_strides(rows: usize, cols: usize, transposed: bool) -> (usize, usize) {
    if transposed {
        (1, rows)
    } else {
        (cols, 1)
    }
}

/// Appends PyTorch's `mm` features that follow `m, k, n` (`kernel/mm.py:mm_autoheuristic`,
/// spec section 4), in its order: both operands' dtypes, strides ([`operand_strides`] of
/// `m x k` and `k x n`) and contiguity, then `using_tf32` (`tf32` for fp32, else
/// `not_float_32`).
pub fn add_mm_layout_features(
    c: &mut ah_core::Context,
    (m, k, n): (usize, usize, usize),
    (trans_a, trans_b): (bool, bool),
    dtype: crate::dtype::DType,
    tf32: bool,
) {
    let (s10, s11) = operand_strides(m, k, trans_a);
    let (s20, s21) = operand_strides(k, n, trans_b);
    c.add_categorical("mat1_dtype", dtype.torch_name());
    c.add_categorical("mat2_dtype", dtype.torch_name());
    c.add("mat1_stride_0", s10).add("mat1_stride_1", s11);
    c.add("mat2_stride_0", s20).add("mat2_stride_1", s21);
    c.add_categorical("mat1_iscontig", is_contiguous(m, k, s10, s11));
    c.add_categorical("mat2_iscontig", is_contiguous(k, n, s20, s21));
    let tf32: ah_core::Value = if dtype == crate::dtype::DType::F32 {
        tf32.into()
    } else {
        "not_float_32".into()
    };
    c.add_categorical("using_tf32", tf32);
}

/// PyTorch's `Tensor.is_contiguous` for a 2-D shape and strides.
pub fn is_contiguous(rows: usize, cols: usize, s0: usize, s1: usize) -> bool {
    let mut expected = 1;
    if cols != 1 {
        if s1 != 1 {
            return false;
        }
        expected = cols;
    }
    rows == 1 || s0 == expected
}
