//! The self-test heuristic `CodegenSelfTest` on its edges, one by one, with the answers written
//! out: a leaf exactly at the threshold, an unseen category, a 0.5/0.5 tie, the range guard,
//! division by zero, an unsafe leaf, a missing feature, the generic path. (Parity with the
//! model on fuzzed contexts, for every fixture of this crate, is in
//! `generated/ah-heuristics/tests/parity.rs`.)

use std::path::Path;

use ah_core::model::Model;
use ah_core::{Context, Decision, Value};

fn pad_ctx(pairs: &[(&str, Value)], model: &Model) -> Context {
    let mut c = Context::new();
    for (n, v) in pairs {
        c.add_feature(
            n.to_string(),
            v.clone(),
            model.categorical_features.iter().any(|x| x == n),
        );
    }
    c
}

/// The self-test model's edges, one by one, with the answers written out.
#[test]
fn self_test_heuristic_edges() {
    let model = Model::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("models/CodegenSelfTest.model.json"),
    )
    .unwrap();
    let registry = ah_heuristics_selftest::registry();
    let h = registry
        .heuristics()
        .iter()
        .copied()
        .find(|h| h.heuristic_name() == "CodegenSelfTest")
        .expect("CodegenSelfTest is registered");
    let base = |m: i64, n: i64, tf32: Value, dtype: &str| -> Vec<(&'static str, Value)> {
        vec![
            ("m", Value::Int(m)),
            ("k", Value::Int(64)),
            ("n", Value::Int(n)),
            ("mat1_stride_0", Value::Int(64)),
            ("mat1_stride_1", Value::Int(1)),
            ("mat2_stride_0", Value::Int(1)),
            ("mat2_stride_1", Value::Int(64)),
            ("m_padded_length", Value::Int(0)),
            ("k_padded_length", Value::Int(0)),
            ("n_padded_length", Value::Int(0)),
            ("mat1_align_size", Value::Int(8)),
            ("mat2_align_size", Value::Int(8)),
            ("mat1_dtype", Value::Str(dtype.into())),
            ("mat2_dtype", Value::Str(dtype.into())),
            ("prepadded_mat1", Value::Bool(false)),
            ("prepadded_mat2", Value::Bool(false)),
            ("using_tf32", tf32),
        ]
    };
    use ah_core::UnsureReason as U;
    // using_tf32 != False, m*n small, mat2 needs no padding: the leaf sits exactly at the
    // threshold (0.9615384615384616 <= threshold): unsure, not a decision.
    let c = pad_ctx(
        &base(64, 64, Value::Str("not_float_32".into()), "torch.float16"),
        &model,
    );
    assert_eq!(
        h.decide(&c),
        Decision::Unsure(U::LowConfidence {
            confidence: model.threshold
        })
    );
    // Same with a category never seen in training: `str(v) != 'False'` still holds.
    let c = pad_ctx(
        &base(64, 64, Value::Str("something_new".into()), "torch.float16"),
        &model,
    );
    assert_eq!(
        h.decide(&c),
        Decision::Unsure(U::LowConfidence {
            confidence: model.threshold
        })
    );
    // using_tf32 == False (a bool), fp16, m/n ratio 1 <= 3.5: leaf [1.0, 0.0] -> orig.
    let c = pad_ctx(&base(64, 64, Value::Bool(false), "torch.float16"), &model);
    assert_eq!(h.decide(&c), Decision::Choice(0));
    // The string "False" prints like the bool: same answer.
    let c = pad_ctx(
        &base(64, 64, Value::Str("False".into()), "torch.float16"),
        &model,
    );
    assert_eq!(h.decide(&c), Decision::Choice(0));
    // Ratio 16 > 3.5: a 0.5/0.5 tie: unsure at any threshold >= 0.5.
    let c = pad_ctx(&base(1024, 64, Value::Bool(false), "torch.float16"), &model);
    assert_eq!(
        h.decide(&c),
        Decision::Unsure(U::LowConfidence { confidence: 0.5 })
    );
    // Range guard: m outside [1, 65536].
    let c = pad_ctx(
        &base(70000, 64, Value::Bool(false), "torch.float16"),
        &model,
    );
    assert_eq!(
        h.decide(&c),
        Decision::Unsure(U::OutOfRange {
            feature: "m".into()
        })
    );
    // Division by zero in `k/(m*n)` (m = 0): unsure naming the operation (Python raises).
    let c = pad_ctx(&base(0, 64, Value::Bool(false), "torch.float16"), &model);
    assert_eq!(
        h.decide(&c),
        Decision::Unsure(U::MissingFeature {
            feature: "k/(m*n)".into()
        })
    );
    // Unsafe leaf: mat2 innermost needs padding.
    let mut v = base(64, 63, Value::Str("not_float_32".into()), "torch.float16");
    v[9] = ("n_padded_length", Value::Int(1));
    v[6] = ("mat2_stride_1", Value::Int(1));
    let c = pad_ctx(&v, &model);
    assert_eq!(h.decide(&c), Decision::Unsure(U::UnsafeLeaf));
    // A missing feature.
    let mut v = base(64, 64, Value::Bool(false), "torch.float16");
    v.retain(|(n, _)| *n != "using_tf32");
    assert_eq!(
        h.decide(&pad_ctx(&v, &model)),
        Decision::Unsure(U::MissingFeature {
            feature: "using_tf32".into()
        })
    );
    // Floats where integers are logged take the generic path and agree.
    let mut v = base(64, 64, Value::Bool(false), "torch.float16");
    v[0] = ("m", Value::Float(64.0));
    assert_eq!(h.decide(&pad_ctx(&v, &model)), Decision::Choice(0));
}
