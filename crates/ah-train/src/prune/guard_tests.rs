//! The guard on cuBLAS-only leaves ([`SearchGuard`]): which leaves it splits, what the new
//! leaves decide and count, and the handler generated from a guarded tree.

use super::data::{Choice, Sample};
use super::guard::SearchGuard;
use super::policy::{LeafRule, Policy, Weighing};
use super::tree::{Node, Quantity, Test};
use ah_core::Value;

const FEATURES: [&str; 6] = ["m", "k", "n", "batch", "mat1_dtype", "using_tf32"];

fn features() -> Vec<String> {
    FEATURES.map(String::from).to_vec()
}

/// A GEMM of one cuBLAS choice; `tf32` is the log's `using_tf32` cell.
fn gemm(m: i64, k: i64, n: i64, dtype: &str, tf32: &str) -> Sample {
    let values = vec![
        Value::Int(m),
        Value::Int(k),
        Value::Int(n),
        Value::Int(1),
        Value::Str(format!("torch.{dtype}")),
        Value::parse(tf32),
    ];
    Sample::new(
        values,
        vec![Choice::new("extern_mm".into(), 1.0, 0.0)],
        1.0,
        1.0,
        0.0,
    )
}

fn leaf(policy: Policy, samples: usize) -> Box<Node> {
    Box::new(Node::Leaf { policy, samples })
}

const GUARD: SearchGuard = SearchGuard {
    above_work: 1e9,
    learned_list: false,
    harm_price_s: None,
};

#[test]
fn a_cublas_only_leaf_leaves_large_fp32_without_tf32_to_the_full_list() {
    let f = features();
    let samples = [
        gemm(4096, 1024, 1024, "float32", "False"), // 4.3e9 multiply-adds: guarded
        gemm(64, 64, 64, "float32", "False"),       // small
        gemm(4096, 1024, 1024, "float32", "True"),  // TF32
        gemm(4096, 1024, 1024, "bfloat16", "not_float_32"),
    ];
    let refs: Vec<&Sample> = samples.iter().collect();
    let tree = GUARD.apply(*leaf(Policy::Extern, 4), &refs, &f, &Policy::Default);
    let expected = Node::Split {
        test: SearchGuard::fp32_without_tf32(),
        yes: Box::new(Node::Split {
            test: GUARD.small(),
            yes: leaf(Policy::Extern, 1),
            no: leaf(Policy::Default, 1),
        }),
        no: leaf(Policy::Extern, 2),
    };
    assert_eq!(tree, expected);
    let decided: Vec<&Policy> = samples.iter().map(|s| tree.decide(s, &f)).collect();
    assert_eq!(
        decided,
        [
            &Policy::Default,
            &Policy::Extern,
            &Policy::Extern,
            &Policy::Extern
        ]
    );
    // The counts of a leaf's training GEMMs survive a round trip through the model JSON.
    let json = serde_json::to_string(&tree).unwrap();
    assert!(json.contains(r#""quantity":{"kind":"work"}"#), "{json}");
    assert_eq!(serde_json::from_str::<Node>(&json).unwrap(), tree);
}

#[test]
fn leaves_the_path_rules_out_or_in_are_split_no_more_than_needed() {
    let f = features();
    let on = |value: Value, yes: Box<Node>, no: Box<Node>| Node::Split {
        test: Test::Eq {
            feature: "using_tf32".into(),
            value,
        },
        yes,
        no,
    };
    let keep = || {
        leaf(
            Policy::Keep {
                choices: vec!["t".into()],
            },
            0,
        )
    };
    // Under `using_tf32 == False` the size alone is tested; under `== True` and under a bf16
    // test nothing is; other policies are never touched.
    let tree = on(
        Value::Bool(false),
        leaf(Policy::Extern, 0),
        Box::new(on(
            Value::Bool(true),
            leaf(Policy::Extern, 0),
            Box::new(Node::Split {
                test: Test::Eq {
                    feature: "mat1_dtype".into(),
                    value: Value::Str("torch.bfloat16".into()),
                },
                yes: leaf(Policy::Extern, 0),
                no: keep(),
            }),
        )),
    );
    let guarded = GUARD.apply(tree.clone(), &[], &f, &Policy::Default);
    let Node::Split { yes, no, .. } = &guarded else {
        panic!("the root is no longer a split");
    };
    let by_size = Node::Split {
        test: GUARD.small(),
        yes: leaf(Policy::Extern, 0),
        no: leaf(Policy::Default, 0),
    };
    assert_eq!(**yes, by_size);
    let Node::Split { no: original, .. } = &tree else {
        unreachable!()
    };
    assert_eq!(no, original);
}

#[test]
fn work_is_the_product_of_batch_and_the_three_sides() {
    let f = features();
    let s = gemm(4096, 1000, 3, "float32", "False");
    assert_eq!(Quantity::Work.eval(&s, &f), Some(4096.0 * 1000.0 * 3.0));
    assert_eq!(Quantity::Work.eval(&s, &f[..3]), None);
}

/// The generated handler's `f["batch"] * f["m"] * f["k"] * f["n"]` sends GEMMs on both sides
/// of a threshold, and exactly at it, where the trainer's value does. Skips without python3.
#[test]
fn the_generated_handler_computes_the_same_work() {
    if ah_test_support::skip_without_python("the work parity test") {
        return;
    }
    let cases: Vec<(serde_json::Value, f64)> = [
        (1_i64, 1000, 1000, 1000),
        (1, 1000, 1000, 1001),
        (8, 21347, 64, 64),
        (1, 2449029, 100, 256),
        (64, 64, 16641, 16),
    ]
    .into_iter()
    .map(|(b, m, k, n)| {
        let work = (b * m * k * n) as f64;
        (
            serde_json::json!({"batch": b, "m": m, "k": k, "n": n}),
            work,
        )
    })
    .collect();
    super::quantity_tests::generated_handler_agrees(Quantity::Work, &[1e9, 1.2e10], &cases);
}

#[test]
fn a_threshold_that_cannot_guard_is_refused() {
    use super::PruneParams;
    let with = |work: f64, full_list: bool| PruneParams {
        fp32_full_list_above: Some(work),
        full_list,
        ..PruneParams::default()
    };
    assert!(with(1e9, true).check().is_ok());
    for bad in [f64::NAN, f64::INFINITY, -1.0] {
        assert!(with(bad, true).check().is_err(), "{bad}");
    }
    // The guard leaves GEMMs to the full list, which --no-full-list forbids.
    let err = with(1e9, false).check().unwrap_err().to_string();
    assert!(err.contains("--no-full-list"), "{err}");
}

#[test]
fn a_guard_price_needs_the_guard_list_and_finite_seconds() {
    use super::PruneParams;
    let with = |list: bool, price: f64| PruneParams {
        fp32_full_list_above: Some(1e9),
        fp32_guard_list: list,
        fp32_guard_price_s: Some(price),
        ..PruneParams::default()
    };
    assert!(with(true, 40.0).check().is_ok());
    let err = with(false, 40.0).check().unwrap_err().to_string();
    assert!(err.contains("--fp32-guard-list"), "{err}");
    for bad in [f64::NAN, f64::INFINITY, -1.0] {
        assert!(with(true, bad).check().is_err(), "{bad}");
    }
}

/// The weighing of the guard's tests: the horizon and harm bound `ah-prune` defaults to.
fn weighing(harm_price_s: f64) -> Weighing {
    Weighing {
        horizon: 1e5,
        harm: 0.03,
        harm_price_s,
        op_harm_price_s: [None; 3],
    }
}

/// A leaf rule keeping at most `max_keep` templates, each on at least two GEMMs.
fn rule(max_keep: usize) -> LeafRule {
    LeafRule {
        min_support: 2,
        min_extern_support: 0,
        full_list: true,
        grown: true,
        max_keep,
    }
}

/// A guarded GEMM: cuBLAS at 1 ms, templates `t1` and `t2` at these benchmark times (ms), each
/// 0.1 s to keep, against 10 s for the full list, whose pick runs 0.5 ms.
fn guarded(m: i64, t1_ms: f64, t2_ms: f64) -> Sample {
    let values = gemm(m, 1024, 1024, "float32", "False").values;
    let choices = vec![
        Choice::new("extern_mm".into(), 1.0, 0.0),
        Choice::new("triton_mm_t1".into(), t1_ms, 0.1),
        Choice::new("triton_mm_t2".into(), t2_ms, 0.1),
    ];
    Sample::new(values, choices, 1.0, 0.5, 10.0)
}

/// A guarded GEMM on which `t1` beats cuBLAS by half.
fn guarded_win(m: i64) -> Sample {
    guarded(m, 0.5, 0.9)
}

#[test]
fn a_learned_guard_keeps_the_list_that_wins_on_the_guarded_gemms_together() {
    let f = features();
    let (w, rule) = (weighing(40.0), rule(4));
    let samples = [
        guarded_win(4096),
        guarded_win(8192),
        guarded_win(2048),
        gemm(64, 64, 64, "float32", "False"),
        gemm(4096, 1024, 1024, "bfloat16", "not_float_32"),
    ];
    let refs: Vec<&Sample> = samples.iter().collect();
    let learned = SearchGuard {
        learned_list: true,
        ..GUARD
    };
    let keep_t1 = Policy::Keep {
        choices: vec!["triton_mm_t1".into()],
    };
    assert_eq!(learned.policy(&refs, &f, &w, rule), keep_t1);
    // Without --fp32-guard-list, or with no guarded training GEMM, the full list.
    assert_eq!(GUARD.policy(&refs, &f, &w, rule), Policy::Default);
    assert_eq!(learned.policy(&refs[3..], &f, &w, rule), Policy::Default);
    // Never cuBLAS only, even where cuBLAS alone is safe on every guarded GEMM.
    let safe = [gemm(4096, 1024, 1024, "float32", "False")];
    let safe: Vec<&Sample> = safe.iter().collect();
    assert_ne!(learned.policy(&safe, &f, &w, rule), Policy::Extern);
}

/// A guarded GEMM on which `t2` wins and `t1`, the list's choice, runs 4 % behind it: a harmful
/// pick that costs 2 s of run-time loss over the horizon, where the full list costs 10 s.
fn guarded_near_miss(m: i64) -> Sample {
    guarded(m, 0.52, 0.5)
}

#[test]
fn the_guard_weighs_its_list_at_its_own_price_where_given() {
    let f = features();
    let w = weighing;
    // One choice at most: the list keeps t1, which wins three GEMMs and misses on the fourth.
    let rule = rule(1);
    let samples = [
        guarded_win(2048),
        guarded_win(4096),
        guarded_win(8192),
        guarded_near_miss(16384),
    ];
    let refs: Vec<&Sample> = samples.iter().collect();
    let keep_t1 = Policy::Keep {
        choices: vec!["triton_mm_t1".into()],
    };
    let guard = |harm_price_s| SearchGuard {
        learned_list: true,
        harm_price_s,
        ..GUARD
    };
    // The list costs 0.4 s and 2 s of loss plus the miss's price; the full list 40 s.
    assert_eq!(
        guard(None).policy(&refs, &f, &w(160.0), rule),
        Policy::Default
    );
    assert_eq!(
        guard(Some(20.0)).policy(&refs, &f, &w(160.0), rule),
        keep_t1
    );
    assert_eq!(guard(None).policy(&refs, &f, &w(20.0), rule), keep_t1);
    assert_eq!(
        guard(Some(160.0)).policy(&refs, &f, &w(20.0), rule),
        Policy::Default
    );
}
