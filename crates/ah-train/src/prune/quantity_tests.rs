//! The leading dimensions' alignment ([`Quantity::LeadAlign`]) and the contraction's ratio
//! ([`Quantity::KRatio`]): their values, when the tree may split on them, and the generated
//! handler computing the same values.

use super::data::{Choice, Sample};
use super::tree::{k_ratio, lead_align, min_side, Quantity, Test};
use ah_core::Value;
use serde_json::Value as Json;

const FEATURES: [&str; 6] = [
    "n",
    "mat1_dtype",
    "mat1_stride_0",
    "mat1_stride_1",
    "mat2_stride_0",
    "mat2_stride_1",
];

fn features() -> Vec<String> {
    FEATURES.map(String::from).to_vec()
}

/// A GEMM with these features (FEATURES order) and one cuBLAS choice.
fn sample(n: i64, dtype: &str, mat1: [i64; 2], mat2: [i64; 2]) -> Sample {
    let values = vec![
        Value::Int(n),
        Value::Str(dtype.into()),
        Value::Int(mat1[0]),
        Value::Int(mat1[1]),
        Value::Int(mat2[0]),
        Value::Int(mat2[1]),
    ];
    let cublas = Choice::new("extern_mm".into(), 1.0, 0.0);
    Sample::new(values, vec![cublas], 1.0, 1.0, 0.0)
}

#[test]
fn the_least_aligned_leading_dimension_in_bytes() {
    // bf16 q @ k.t of 1025 tokens x 130 keys: the output's 130 columns are 4-byte aligned.
    assert_eq!(lead_align([64, 1], [1, 64], 130, 2), 4);
    // p.t() @ do over 1025 tokens: the transposed operand's leading dimension is odd.
    assert_eq!(lead_align([1, 1025], [64, 1], 64, 2), 2);
    // Aligned everywhere, capped at 128 bytes.
    assert_eq!(lead_align([4096, 1], [1, 4096], 1024, 2), 128);
    // fp32 with 4-element alignment is 16 bytes; an unknown dtype counts 1 byte.
    assert_eq!(lead_align([12, 1], [1, 12], 20, 4), 16);
    assert_eq!(lead_align([12, 1], [1, 12], 20, 1), 4);
    // A zero stride (a broadcast operand) leaves the larger one as its leading dimension.
    assert_eq!(lead_align([0, 1], [64, 1], 64, 2), 2);
}

#[test]
fn a_tree_reads_it_from_the_logged_features() {
    let f = features();
    let s = sample(130, "torch.bfloat16", [64, 1], [1, 64]);
    assert_eq!(Quantity::LeadAlign.eval(&s, &f), Some(4.0));
    let s = sample(130, "torch.float32", [64, 1], [1, 64]);
    assert_eq!(Quantity::LeadAlign.eval(&s, &f), Some(8.0));
    // Without a dtype it has no value, and the tree then leaves the GEMM to Inductor.
    assert_eq!(Quantity::LeadAlign.eval(&s, &f[..1]), None);
}

#[test]
fn the_tree_may_split_on_it_only_when_the_log_has_its_features() {
    let f = features();
    let numeric: Vec<String> = f.iter().filter(|n| *n != "mat1_dtype").cloned().collect();
    assert!(Quantity::all(&f, &numeric, false, false).contains(&Quantity::LeadAlign));
    let without_dtype = &f[..1];
    assert!(
        !Quantity::all(without_dtype, &numeric[..1], false, false).contains(&Quantity::LeadAlign)
    );
}

/// Checks that the handler generated for a chain of `quantity <= threshold` splits sends each
/// GEMM of `cases` (its features, and the trainer's value of `quantity` on it) to the leaf the
/// trainer's value does: leaf `i` holds the values above `i` of the (ascending) thresholds.
pub(super) fn generated_handler_agrees(
    quantity: Quantity,
    thresholds: &[f64],
    cases: &[(Json, f64)],
) {
    let leaf = |i: usize| serde_json::json!({"node": "leaf", "policy": {"kind": "keep", "choices": [format!("l{i}")]}, "samples": 1});
    let mut tree = leaf(thresholds.len());
    for (i, &threshold) in thresholds.iter().enumerate().rev() {
        let test = Test::Le {
            quantity: quantity.clone(),
            threshold,
        };
        tree = serde_json::json!({"node": "split", "test": test, "yes": leaf(i), "no": tree});
    }
    let model = serde_json::json!({"kind": "inductor_choices", "name": "QuantityCheck",
        "device_capa": [9, 0], "torch": "2.11", "ops": ["mm"], "tree": tree});
    let code = ah_codegen::inductor::render_module(&model, "# test").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("quantity_check_choices.py");
    std::fs::write(&module, code).unwrap();
    let mut lines = String::new();
    for (f, value) in cases {
        let expected = format!(
            "l{}",
            thresholds.iter().take_while(|&&t| *value > t).count()
        );
        lines.push_str(&serde_json::json!({"f": f, "expected": expected}).to_string());
        lines.push('\n');
    }
    let script = "import importlib.util, json, sys\n\
        spec = importlib.util.spec_from_file_location('m', sys.argv[1]); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n\
        for line in sys.stdin:\n\
        \x20   c = json.loads(line); kind, names = m.decide(c['f'])\n\
        \x20   print(names[0] == c['expected'], names[0], c['expected'])\n";
    let out = super::parity_tests::run_python(&module, script, &lines);
    assert_eq!(out.lines().count(), cases.len(), "{out}");
    assert!(out.lines().all(|l| l.starts_with("True")), "{out}");
}

/// The generated handler's `_lead_align` gives the trainer's value on a grid of strides,
/// sizes and dtypes (each threshold of a chain of splits sends the GEMM to a leaf that names
/// the value). Skips without python3 (ah-test-support's policy).
#[test]
fn the_generated_handler_computes_the_same_value() {
    if ah_test_support::skip_without_python("the lead_align parity test") {
        return;
    }
    let levels = [0, 1, 2, 4, 8, 16, 32, 64, 128];
    let thresholds: Vec<f64> = levels
        .windows(2)
        .map(|w| (w[0] + w[1]) as f64 / 2.0)
        .collect();
    let mut cases = Vec::new();
    for dtype in ["torch.bfloat16", "torch.float32", "torch.float8_e4m3fn"] {
        for (a, b, n) in [
            (64, 1025, 130),
            (1, 77, 4096),
            (4096, 1, 1),
            (0, 48, 96),
            (6, 10, 24),
        ] {
            let f = serde_json::json!({"n": n, "mat1_dtype": dtype, "mat1_stride_0": a,
                "mat1_stride_1": 1, "mat2_stride_0": 1, "mat2_stride_1": b});
            let bytes = super::tree::dtype_bytes(dtype);
            cases.push((f, lead_align([a, 1], [1, b], n, bytes) as f64));
        }
    }
    generated_handler_agrees(Quantity::LeadAlign, &thresholds, &cases);
}

#[test]
fn the_contraction_ratio_is_k_over_the_larger_output_side() {
    // A Gram matrix over 512 x 512 pixels of 64 channels; slot attention's update.
    assert_eq!(k_ratio(64, 262144, 64), 4096.0);
    assert_eq!(k_ratio(7, 16384, 64), 256.0);
    // A wide output over a short k.
    assert_eq!(k_ratio(8192, 64, 1024), 0.0078125);
    // Empty sides divide by 1.
    assert_eq!(k_ratio(0, 5, 0), 5.0);
}

#[test]
fn a_tree_may_split_on_the_ratio_when_asked_and_the_log_has_m_k_and_n() {
    let names = |v: &[&str]| v.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    let f = names(&["m", "k", "n"]);
    assert!(Quantity::all(&f, &f, true, false).contains(&Quantity::KRatio));
    // Only when asked for (`ah-prune --k-ratio`): the shipped handler was trained without it.
    assert!(!Quantity::all(&f, &f, false, false).contains(&Quantity::KRatio));
    let s = Sample::new(
        vec![Value::Int(96), Value::Int(6161), Value::Int(24)],
        vec![Choice::new("extern_mm".into(), 1.0, 0.0)],
        1.0,
        1.0,
        0.0,
    );
    assert_eq!(Quantity::KRatio.eval(&s, &f), Some(6161.0 / 96.0));
    let without_k = names(&["m", "n"]);
    assert!(!Quantity::all(&without_k, &without_k, true, true).contains(&Quantity::KRatio));
}

/// [`generated_handler_agrees`]'s cases for a quantity of `m`, `k` and `n`: each GEMM's features
/// and the trainer's value of it.
fn mkn_cases(gemms: &[(i64, i64, i64)], value: fn(i64, i64, i64) -> f64) -> Vec<(Json, f64)> {
    gemms
        .iter()
        .map(|&(m, k, n)| (serde_json::json!({"m": m, "k": k, "n": n}), value(m, k, n)))
        .collect()
}

/// The generated handler's `k / max(m, n, 1)` sends every GEMM of a grid to the leaf the
/// trainer's value does, a GEMM exactly at a threshold included (Python's true division and
/// Rust's f64 division of the same integers round alike). Skips without python3.
#[test]
fn the_generated_handler_computes_the_same_ratio() {
    if ah_test_support::skip_without_python("the k_ratio parity test") {
        return;
    }
    let cases = mkn_cases(
        &[
            (96, 6161, 24),
            (96, 6162, 24),
            (64, 262144, 64),
            (64, 262145, 64),
            (8192, 64, 1024),
            (0, 1, 0),
            (3, 3, 1),
            (1, 3, 7),
        ],
        k_ratio,
    );
    generated_handler_agrees(Quantity::KRatio, &[0.5, 1.0, 6161.0 / 96.0, 4096.0], &cases);
}

#[test]
fn the_narrowest_side_is_the_smallest_of_m_k_and_n_and_split_on_only_when_asked() {
    // A router's forward over 32768 tokens into 64 experts; a LoRA B weight gradient of rank 4.
    assert_eq!(min_side(32768, 8192, 64), 64.0);
    assert_eq!(min_side(12288, 4096, 4), 4.0);
    let names = |v: &[&str]| v.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    let f = names(&["m", "k", "n"]);
    assert!(Quantity::all(&f, &f, false, true).contains(&Quantity::MinSide));
    // Only when asked for (`ah-prune --min-side`), and only with m, k and n logged.
    assert!(!Quantity::all(&f, &f, false, false).contains(&Quantity::MinSide));
    let without_k = names(&["m", "n"]);
    assert!(!Quantity::all(&without_k, &without_k, false, true).contains(&Quantity::MinSide));
    let s = Sample::new(
        vec![Value::Int(96), Value::Int(6161), Value::Int(24)],
        vec![Choice::new("extern_mm".into(), 1.0, 0.0)],
        1.0,
        1.0,
        0.0,
    );
    assert_eq!(Quantity::MinSide.eval(&s, &f), Some(24.0));
}

/// The generated handler's `min(m, k, n)` sends every GEMM of a grid to the leaf the trainer's
/// value does, a GEMM exactly at a threshold included. Skips without python3.
#[test]
fn the_generated_handler_computes_the_same_narrowest_side() {
    if ah_test_support::skip_without_python("the min_side parity test") {
        return;
    }
    let cases = mkn_cases(
        &[
            (32768, 8192, 64),
            (32768, 8192, 65),
            (4, 4096, 12288),
            (12288, 3, 4096),
            (0, 5, 7),
        ],
        min_side,
    );
    generated_handler_agrees(Quantity::MinSide, &[3.5, 4.0, 64.0, 64.5], &cases);
}

/// `--alignment-first`: the root splits on [`Test::cublas_aligned`] even where no split pays
/// (every GEMM here has cuBLAS only), unless a side would hold fewer than `min_leaf` GEMMs.
#[test]
fn alignment_first_makes_the_root_split_on_cublas_alignment() {
    use super::grow::Growth;
    use super::policy::{LeafRule, Weighing};
    use super::tree::Node;
    let f = features();
    let samples: Vec<Sample> = [130, 1024, 2730, 4096, 256, 512]
        .map(|n| sample(n, "torch.bfloat16", [64, 1], [1, 64]))
        .to_vec();
    let refs: Vec<&Sample> = samples.iter().collect();
    let grow = |min_leaf: usize| {
        Growth {
            features: &f,
            categorical: &["mat1_dtype".to_string()],
            weighing: Weighing {
                horizon: 1e5,
                harm: 0.03,
                harm_price_s: 20.0,
                op_harm_price_s: [None; 3],
            },
            min_leaf,
            max_depth: 3,
            leaf_rule: LeafRule {
                min_support: 1,
                min_extern_support: 0,
                full_list: true,
                grown: false,
                max_keep: 4,
            },
            first_split: Some(Test::cublas_aligned()),
            k_ratio: false,
            min_side: false,
            guard: None,
            drop: None,
        }
        .grow(&refs)
    };
    // n = 130, 2730: below 16 bytes; 1024, 4096, 256, 512: aligned.
    let Node::Split { test, yes, no } = grow(2) else {
        panic!("the root does not split");
    };
    assert_eq!(test, Test::cublas_aligned());
    assert_eq!((yes.leaves(), no.leaves()), (1, 1));
    // With 3 GEMMs a leaf at least, the 2 below 16 bytes cannot have one of their own.
    assert!(matches!(grow(3), Node::Leaf { samples: 6, .. }));
}
