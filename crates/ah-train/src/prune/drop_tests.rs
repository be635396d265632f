//! The pass that trims strict-fp32 full lists ([`NeverNear`]): which configs it learns to drop,
//! which leaves it splits, and what a trimmed list costs and picks.

use super::data::{Choice, Sample};
use super::drop::NeverNear;
use super::guard::SearchGuard;
use super::policy::{Policy, Weighing};
use super::tree::{Node, Test};
use ah_core::Value;

const FEATURES: [&str; 2] = ["mat1_dtype", "using_tf32"];

fn features() -> Vec<String> {
    FEATURES.map(String::from).to_vec()
}

/// A GEMM whose choices are cuBLAS then templates `a`, `b`, `c`, `d` at these benchmark times,
/// each template priced 1 s and precompiled in 2 s (`d` in 6 s); Inductor picks the fastest.
fn gemm(dtype: &str, tf32: &str, bench: [f64; 5]) -> Sample {
    let names = ["extern_mm", "triton_a", "triton_b", "triton_c", "triton_d"];
    let choices = names
        .iter()
        .zip(bench)
        .map(|(n, ms)| {
            let compile = if *n == "triton_d" { 6.0 } else { 2.0 };
            let mut c = Choice::new(
                n.to_string(),
                ms,
                if n.starts_with("extern") { 0.1 } else { 1.0 },
            );
            c.compile_s = if n.starts_with("extern") {
                0.0
            } else {
                compile
            };
            c
        })
        .collect();
    let values = vec![Value::Str(format!("torch.{dtype}")), Value::parse(tf32)];
    let winner_ms = bench.iter().copied().fold(f64::INFINITY, f64::min);
    // The full list's price as `pricing::list_s` reckons it: 4.1 s of prices, `d`'s 6 s of
    // precompile, 2 s to compile the pick.
    Sample::new(values, choices, bench[0], winner_ms, 4.1 + 6.0 + 2.0)
}

const NEVER_NEAR: NeverNear = NeverNear {
    min_seen: 2,
    bound: 0.03,
};

fn strict(bench: [f64; 5]) -> Sample {
    gemm("float32", "False", bench)
}

#[test]
fn it_drops_configs_offered_often_enough_that_never_came_near_the_best() {
    let f = features();
    let samples = [
        // `c` comes within 3 % of the best once; `d` never does; `b` wins.
        strict([1.0, 1.5, 0.8, 0.82, 2.0]),
        strict([1.0, 1.2, 0.9, 1.5, 1.4]),
        // Not strict fp32: `d` is the best here, and counts for nothing.
        gemm("float32", "True", [1.0, 1.0, 1.0, 1.0, 0.5]),
        gemm("bfloat16", "not_float_32", [1.0, 1.0, 1.0, 1.0, 0.5]),
    ];
    let refs: Vec<&Sample> = samples.iter().collect();
    assert_eq!(NEVER_NEAR.learn(&refs, &f), ["triton_a", "triton_d"]);
    // Offered on fewer strict-fp32 GEMMs than `min_seen`: too little seen to be judged.
    let rare = NeverNear {
        min_seen: 3,
        ..NEVER_NEAR
    };
    assert!(rare.learn(&refs, &f).is_empty());
}

#[test]
fn a_trimmed_list_picks_as_the_full_list_for_less_unless_it_drops_the_pick() {
    let w = Weighing {
        horizon: 0.0,
        harm: 0.03,
        harm_price_s: f64::INFINITY,
        op_harm_price_s: [None; 3],
    };
    let s = strict([1.0, 1.5, 0.8, 0.82, 2.0]);
    let full = Policy::Default.outcome(&s);
    let drop = |names: &[&str]| Policy::Drop {
        choices: names.iter().map(|n| n.to_string()).collect(),
    };
    let trimmed = drop(&["triton_d"]).outcome(&s);
    assert_eq!(trimmed.run_ms, full.run_ms);
    // One template less to price, and the slowest precompile (`d`'s 6 s) gone: 2 s.
    assert!(
        (full.cost_s - trimmed.cost_s - 5.0).abs() < 1e-9,
        "{full:?} {trimmed:?}"
    );
    // Dropping Inductor's pick leaves it `c`, within the bound; dropping both, `a`: harmful.
    assert!(!w.harmful(drop(&["triton_b"]).outcome(&s), &s));
    assert!(w.harmful(drop(&["triton_b", "triton_c"]).outcome(&s), &s));
}

fn leaf(policy: Policy, samples: usize) -> Box<Node> {
    Box::new(Node::Leaf { policy, samples })
}

fn on_tf32(value: Value, yes: Box<Node>, no: Box<Node>) -> Node {
    Node::Split {
        test: Test::Eq {
            feature: "using_tf32".into(),
            value,
        },
        yes,
        no,
    }
}

#[test]
fn full_list_leaves_are_split_where_strict_fp32_gemms_reach_them() {
    let f = features();
    let samples = [
        strict([1.0, 1.5, 0.8, 0.82, 2.0]),
        gemm("bfloat16", "not_float_32", [1.0, 1.0, 1.0, 1.0, 0.5]),
    ];
    let refs: Vec<&Sample> = samples.iter().collect();
    let dropped = vec!["triton_d".to_string()];
    let trimmed = Policy::Drop {
        choices: dropped.clone(),
    };
    let tree = NEVER_NEAR.apply(*leaf(Policy::Default, 2), &refs, &f, &dropped);
    let expected = Node::Split {
        test: SearchGuard::fp32_without_tf32(),
        yes: leaf(trimmed.clone(), 1),
        no: leaf(Policy::Default, 1),
    };
    assert_eq!(tree, expected);
    assert_eq!(tree.decide(&samples[0], &f), &trimmed);
    assert_eq!(tree.decide(&samples[1], &f), &Policy::Default);
    // Nothing learned, nothing changed.
    assert_eq!(
        NEVER_NEAR.apply(*leaf(Policy::Default, 2), &refs, &f, &[]),
        *leaf(Policy::Default, 2)
    );
}

#[test]
fn leaves_the_path_rules_out_or_in_are_split_no_more_than_needed() {
    let f = features();
    let dropped = vec!["triton_d".to_string()];
    let trimmed = Policy::Drop {
        choices: dropped.clone(),
    };
    let on_bf16 = |yes: Box<Node>, no: Box<Node>| Node::Split {
        test: Test::Eq {
            feature: "mat1_dtype".into(),
            value: Value::Str("torch.bfloat16".into()),
        },
        yes,
        no,
    };
    // Under a bf16 test and under `using_tf32 == True` the full list is left alone, under
    // `using_tf32 == False` it is trimmed at once, and other policies are never touched.
    let tree = on_bf16(
        leaf(Policy::Default, 0),
        Box::new(on_tf32(
            Value::Bool(true),
            leaf(Policy::Default, 0),
            Box::new(on_tf32(
                Value::Bool(false),
                leaf(Policy::Default, 0),
                leaf(Policy::Extern, 0),
            )),
        )),
    );
    let expected = on_bf16(
        leaf(Policy::Default, 0),
        Box::new(on_tf32(
            Value::Bool(true),
            leaf(Policy::Default, 0),
            Box::new(on_tf32(
                Value::Bool(false),
                leaf(trimmed, 0),
                leaf(Policy::Extern, 0),
            )),
        )),
    );
    assert_eq!(NEVER_NEAR.apply(tree, &[], &f, &dropped), expected);
}

#[test]
fn a_trimmed_policy_round_trips_through_the_model_json() {
    let p = Policy::Drop {
        choices: vec!["triton_mm_BLOCK-M=128".into()],
    };
    let json = serde_json::to_string(&p).unwrap();
    assert_eq!(
        json,
        r#"{"kind":"drop","choices":["triton_mm_BLOCK-M=128"]}"#
    );
    assert_eq!(serde_json::from_str::<Policy>(&json).unwrap(), p);
}
