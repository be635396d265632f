//! Contexts built from an `ah_core::Schema` decide exactly as the same features added one by
//! one: the generated layout check is skipped only for a schema verified to hold the logged
//! layout, and a schema with other names (same count) is read by name, never by position.

use std::path::Path;
use std::sync::Arc;

use ah_core::{Context, LearnedHeuristic, Schema, Value};
use ah_log::{Log, ReadOptions};

/// PadMMA100's logged layout: (name, categorical), numerical features first.
const LAYOUT: [(&str, bool); 17] = [
    ("m", false),
    ("k", false),
    ("n", false),
    ("mat1_stride_0", false),
    ("mat1_stride_1", false),
    ("mat2_stride_0", false),
    ("mat2_stride_1", false),
    ("m_padded_length", false),
    ("k_padded_length", false),
    ("n_padded_length", false),
    ("mat1_align_size", false),
    ("mat2_align_size", false),
    ("mat1_dtype", true),
    ("mat2_dtype", true),
    ("prepadded_mat1", true),
    ("prepadded_mat2", true),
    ("using_tf32", true),
];

/// Values of pad_mm contexts in `LAYOUT` order over a grid of shapes.
fn grid_values() -> Vec<Vec<Value>> {
    let dims = [64i64, 513, 1024, 4095, 8191, 29088, 41523];
    let mut out = Vec::new();
    for (i, &m) in dims.iter().enumerate() {
        for &k in &dims {
            for &n in &dims {
                let dtype = if (i + out.len()) % 2 == 0 {
                    "torch.float16"
                } else {
                    "torch.bfloat16"
                };
                let pad = |d: i64| (8 - d % 8) % 8;
                let mut v: Vec<Value> = [m, k, n, k, 1, n, 1, pad(m), pad(k), pad(n), 8, 8]
                    .into_iter()
                    .map(Value::Int)
                    .collect();
                v.extend([
                    Value::Str(dtype.into()),
                    Value::Str(dtype.into()),
                    Value::Bool(false),
                    Value::Bool(n % 3 == 0),
                    Value::Str("not_float_32".into()),
                ]);
                out.push(v);
            }
        }
    }
    out
}

/// The same features added one by one (no schema id).
fn added(schema: &Schema, values: &[Value]) -> Context {
    let mut ctx = Context::new();
    for ((name, categorical), v) in schema.features().iter().zip(values) {
        ctx.add_feature(name.clone(), v.clone(), *categorical);
    }
    assert_eq!(ctx.schema_id(), None);
    ctx
}

#[test]
fn schema_contexts_decide_like_added_ones() {
    let h: &dyn LearnedHeuristic = &ah_heuristics::pad_mma100::HEURISTIC;
    let schema = Arc::new(Schema::new(LAYOUT));
    for values in grid_values() {
        let ctx = Context::from_schema(&schema, values.clone()).unwrap();
        let plain = added(&schema, &values);
        assert_eq!(
            h.decide(&ctx),
            h.decide(&plain),
            "{}",
            plain.feature_values_csv()
        );
        // Twice: the second decision takes the verified-schema path.
        assert_eq!(
            h.decide(&ctx),
            h.decide(&plain),
            "{}",
            plain.feature_values_csv()
        );
    }
    // The training log's rows, when the shared data is present, through the log's own header.
    let log =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/pytorch/pad_mm_a100.txt");
    if !ah_test_support::skip_without(&log) {
        // Present, it must parse: a broken file fails the test instead of skipping it.
        let log = Log::read(&log, ReadOptions::default()).unwrap();
        let schema = Arc::new(Schema::new(
            log.features
                .iter()
                .map(|f| (f.clone(), log.metadata.is_categorical(f))),
        ));
        for row in &log.rows {
            let ctx = Context::from_schema(&schema, row.values.to_vec()).unwrap();
            let plain = added(&schema, &row.values);
            assert_eq!(
                h.decide(&ctx),
                h.decide(&plain),
                "{}",
                plain.feature_values_csv()
            );
        }
    }
}

#[test]
fn a_schema_with_other_names_is_read_by_name() {
    let h: &dyn LearnedHeuristic = &ah_heuristics::pad_mma100::HEURISTIC;
    let logged = Arc::new(Schema::new(LAYOUT));
    let mut names = LAYOUT;
    names.swap(0, 1);
    let swapped = Arc::new(Schema::new(names));
    let mut differ = 0;
    for values in grid_values() {
        // Verify the logged schema first, so a wrong shortcut would have something to reuse.
        let right = Context::from_schema(&logged, values.clone()).unwrap();
        let expected_right = h.decide(&right);
        let wrong = Context::from_schema(&swapped, values.clone()).unwrap();
        let by_name = h.decide(&added(&swapped, &values));
        assert_eq!(h.decide(&wrong), by_name, "{}", wrong.feature_values_csv());
        assert_eq!(h.decide(&wrong), by_name, "{}", wrong.feature_values_csv());
        assert_eq!(h.decide(&right), expected_right);
        differ += usize::from(by_name != expected_right);
    }
    // Swapping `m` and `k` changes some decisions, so reading the swapped contexts by position
    // would have failed the assertions above.
    assert!(differ > 0, "no decision depends on the order of m and k");
}
