//! PyTorch's built-in augment operations (spec section 4), written in the expression language.
//!
//! Which optimisation has which operations is the registry's ([`crate::optimization`]).

use super::operation::Operation;

fn op(name: &str, source: &str, is_categorical: bool) -> Operation {
    Operation::parse(name, source, is_categorical).expect("built-in operations parse")
}

/// `mm`'s operations (4).
pub(crate) fn mm_operations() -> Vec<Operation> {
    vec![
        op("m*k", "m * k", false),
        op("m*n", "m * n", false),
        op("k*n", "k * n", false),
        op(
            "arith_intensity",
            "if(m == 0 or k == 0 or n == 0, 0.0, m * k * n / (m * k + k * n + m * n))",
            false,
        ),
    ]
}

/// `mixed_mm`'s operations: `mm`'s and 15 size buckets (19).
pub(crate) fn mixed_mm_operations() -> Vec<Operation> {
    let mut ops = mm_operations();
    for dim in ["m", "k", "n"] {
        for (lo, hi) in [(1, 16), (17, 32), (33, 64), (65, 128), (129, 256)] {
            ops.push(op(
                &format!("{lo}LEQ{dim}LEQ{hi}"),
                &format!("{dim} >= {lo} and {dim} <= {hi}"),
                true,
            ));
        }
    }
    ops
}

/// `pad_mm`'s operations (26).
pub(crate) fn pad_mm_operations() -> Vec<Operation> {
    let mut ops = mm_operations();
    let arith = ops.pop().expect("mm ops end with arith_intensity");
    ops.push(op("k/(m*n)", "k / (m * n)", false));
    ops.push(op(
        "bfloat_perf_hit",
        "k > m * 1024 and k > n * 1024 and str(mat1_dtype) == 'torch.bfloat16'",
        true,
    ));
    ops.push(arith);
    ops.push(op(
                "mat1_innermost_needs_padding",
                "(mat1_stride_0 == 1 and m_padded_length != 0) or (mat1_stride_1 == 1 and k_padded_length != 0)",
                true,
            ));
    ops.push(op(
                "mat2_innermost_needs_padding",
                "(mat2_stride_0 == 1 and k_padded_length != 0) or (mat2_stride_1 == 1 and n_padded_length != 0)",
                true,
            ));
    ops.push(op(
                "num_dims_needs_padding",
                "if(m_padded_length != 0, 1, 0) + if(k_padded_length != 0, 1, 0) + if(n_padded_length != 0, 1, 0)",
                false,
            ));
    for dim in ["m", "k", "n"] {
        for mult in [2, 4, 8, 16, 32] {
            ops.push(op(
                &format!("{dim}_multiple_{mult}"),
                &format!("{dim} % {mult} == 0"),
                true,
            ));
        }
    }
    ops.push(op(
        "mat1_iscontig",
        "mat1_stride_0 == k and mat1_stride_1 == 1",
        true,
    ));
    ops.push(op(
        "mat2_iscontig",
        "mat2_stride_0 == n and mat2_stride_1 == 1",
        true,
    ));
    ops
}
