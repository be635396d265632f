//! Issue 24, item 4: both operands transposed with k the only misaligned dimension. For mat1 =
//! A^T the innermost dimension is m, for mat2 = B^T it is k, so only mat2's innermost dimension
//! needs padding, a layout none of the training rows of the leaf these inputs reach had. On the
//! H100 padding is 1.68x (fp32, TF32) and 2.00x (bf16) faster for the two inputs below
//! (`data/pad_mm_h100.txt`); the tree answered `orig` with a Wilson bound of 0.990 until the
//! category guard. `PadMMH100` may answer `pad` or be unsure there, never `orig`.

use ah_core::{Context, Decision, LearnedHeuristic, Value};

/// A pad_mm context with both operands transposed (stride 1 along the first dimension).
fn both_transposed(m: i64, k: i64, n: i64, dtype: &str, tf32: Option<bool>) -> Context {
    let align = if dtype == "torch.float32" { 4 } else { 8 };
    let pad = |x: i64| if x % align == 0 { 0 } else { align - x % align };
    let mut c = Context::new();
    for (name, v) in [
        ("m", m),
        ("k", k),
        ("n", n),
        ("mat1_stride_0", 1),
        ("mat1_stride_1", m),
        ("mat2_stride_0", 1),
        ("mat2_stride_1", k),
        ("m_padded_length", pad(m)),
        ("k_padded_length", pad(k)),
        ("n_padded_length", pad(n)),
        ("mat1_align_size", align),
        ("mat2_align_size", align),
    ] {
        c.add(name, Value::Int(v));
    }
    c.add_categorical("mat1_dtype", dtype)
        .add_categorical("mat2_dtype", dtype)
        .add_categorical("prepadded_mat1", false)
        .add_categorical("prepadded_mat2", false);
    match tf32 {
        Some(t) => c.add_categorical("using_tf32", t),
        None => c.add_categorical("using_tf32", "not_float_32"),
    };
    c
}

#[test]
fn pad_mmh100_never_answers_orig_for_both_transposed_with_only_k_misaligned() {
    let h: &dyn LearnedHeuristic = &ah_heuristics::pad_mmh100::HEURISTIC;
    for (m, k, n, dtype, tf32) in [
        (5044, 1585, 3840, "torch.float32", Some(true)),
        (1936, 3777, 7424, "torch.bfloat16", None),
    ] {
        let d = h.decide(&both_transposed(m, k, n, dtype, tf32));
        assert!(
            !matches!(d, Decision::Choice(c) if h.choices()[c] == "orig"),
            "{m}x{k}x{n} {dtype}: {d:?}"
        );
    }
}
