//! Unit tests of the model schema, names and evaluator (shared fixtures are `pub(crate)`).

use std::collections::BTreeMap;

use super::*;
use crate::generated::{GeneratedHeuristic, Predict};
use crate::heuristic::{LearnedHeuristic, Prediction, UnsureKind};
use crate::metadata::DeviceIdentity;

fn leaf(value: Vec<f64>, unsafe_leaf: bool) -> Node {
    Node::Leaf {
        value,
        samples: 10,
        unsafe_leaf,
    }
}

fn split(column: usize, threshold: f64, left: usize, right: usize) -> Node {
    Node::Split {
        column,
        threshold,
        left,
        right,
    }
}

/// A decision model over `m*k` (an augment operation) and a one-hot `mat1_dtype` column.
pub(crate) fn decision_model() -> Model {
    Model {
        schema_version: MODEL_SCHEMA_VERSION,
        heuristic_name: "TestMM".into(),
        name: "mm".into(),
        kind: ModelKind::Decision,
        precondition: DeviceIdentity::H100,
        choices: vec!["a".into(), "b".into(), "c".into()],
        default_choice: None,
        numerical_features: vec!["m".into(), "k".into(), "n".into()],
        categorical_features: vec!["mat1_dtype".into()],
        operations: crate::ops::builtin_operations("mm")
            .iter()
            .map(Operation::spec)
            .collect(),
        columns: vec![
            Column::Numeric { name: "m*k".into() },
            Column::OneHot {
                feature: "mat1_dtype".into(),
                value: "torch.float16".into(),
            },
            Column::Numeric { name: "n".into() },
        ],
        tree: Tree {
            nodes: vec![
                split(0, 1000.5, 1, 2),
                leaf(vec![0.0, 0.9, 0.1], false),
                split(1, 0.5, 3, 4),
                leaf(vec![1.0, 0.0, 0.0], true),
                split(2, 64.0, 5, 6),
                leaf(vec![0.25, 0.25, 0.5], false),
                leaf(vec![0.4, 0.2, 0.4], false),
            ],
        },
        threshold: 0.45,
        ranking: None,
        feature_ranges: vec![FeatureRange {
            name: "m".into(),
            min: 1.0,
            max: 4096.0,
        }],
        range_guard: false,
        training: TrainingInfo {
            mode: "upstream".into(),
            learner: "cart".into(),
            criterion: "gini".into(),
            max_depth: Some(5),
            min_samples_leaf: 1.0,
            seed: 42,
            extra: BTreeMap::new(),
        },
        metrics: BTreeMap::new(),
        provenance: Provenance {
            dataset_hash: "0".repeat(64),
            dataset: "t.txt".into(),
            tool_version: crate::TOOL_VERSION.into(),
            command: "test".into(),
        },
    }
}

fn ctx(m: i64, k: i64, n: i64, dtype: &str) -> Context {
    let mut c = Context::new();
    c.add("m", m)
        .add("k", k)
        .add("n", n)
        .add_categorical("mat1_dtype", dtype);
    c
}

#[test]
fn decision_rules() {
    let model = decision_model();
    model.check().unwrap();
    // m*k = 100 <= 1000.5: leaf [0, .9, .1] -> b.
    assert_eq!(
        model.decide(&ctx(10, 10, 5, "torch.float16")),
        Decision::Choice(1)
    );
    assert_eq!(
        model.ranked(&ctx(10, 10, 5, "torch.float16")),
        Some(vec![1, 2])
    );
    // m*k = 1001 > 1000.5, not fp16: unsafe leaf.
    assert_eq!(
        model.decide(&ctx(7, 143, 5, "torch.bfloat16")),
        Decision::Unsure(UnsureReason::UnsafeLeaf)
    );
    assert_eq!(model.ranked(&ctx(7, 143, 5, "torch.bfloat16")), None);
    // fp16, n = 64 <= 64: [0.25, 0.25, 0.5] -> c with 0.5 > 0.45.
    assert_eq!(
        model.decide(&ctx(100, 100, 64, "torch.float16")),
        Decision::Choice(2)
    );
    assert_eq!(
        model.ranked(&ctx(100, 100, 64, "torch.float16")),
        Some(vec![2, 0, 1])
    );
    // n = 65: [0.4, 0.2, 0.4] -> 0.4 <= 0.45 is unsure; ties keep class order in ranking.
    assert_eq!(
        model.decide(&ctx(100, 100, 65, "torch.float16")),
        Decision::Unsure(UnsureReason::LowConfidence { confidence: 0.4 })
    );
    assert_eq!(
        model.ranked(&ctx(100, 100, 65, "torch.float16")),
        Some(vec![0, 2, 1])
    );
    // Missing feature: the operation's input is named.
    let mut c = Context::new();
    c.add("m", 1i64)
        .add("n", 1i64)
        .add_categorical("mat1_dtype", "torch.float16");
    assert_eq!(
        model.decide(&c),
        Decision::Unsure(UnsureReason::MissingFeature {
            feature: "k".into()
        })
    );
    // Column values: ops computed on a copy, one-hot by str().
    let ops = model.operations().unwrap();
    let c = ctx(3, 4, 5, "torch.float16");
    assert_eq!(model.column_values(&c, &ops).unwrap(), vec![12.0, 1.0, 5.0]);
    assert!(c.get("m*k").is_none(), "the caller's context is untouched");
}

#[test]
fn range_guard_and_bad_operations() {
    let mut model = decision_model();
    assert_eq!(
        model.decide(&ctx(5000, 1, 5, "torch.float16")),
        Decision::Choice(2)
    );
    model.range_guard = true;
    assert_eq!(
        model.decide(&ctx(5000, 1, 5, "torch.float16")),
        Decision::Unsure(UnsureReason::OutOfRange {
            feature: "m".into()
        })
    );
    assert_eq!(
        model.decide(&ctx(4096, 0, 5, "torch.float16")),
        Decision::Choice(1)
    );
    // A failing operation (division by zero) makes the model unsure, naming it.
    model.operations.push(OperationSpec {
        name: "k/n".into(),
        expr: "k / n".into(),
        categorical: false,
    });
    model.columns[2] = Column::Numeric { name: "k/n".into() };
    model.check().unwrap();
    assert_eq!(
        model.decide(&ctx(100, 100, 0, "torch.float16")),
        Decision::Unsure(UnsureReason::MissingFeature {
            feature: "k/n".into()
        })
    );
    let mut unknown = model.clone();
    unknown.columns.push(Column::OneHot {
        feature: "nope".into(),
        value: "1".into(),
    });
    let err = unknown.check().unwrap_err().to_string();
    assert!(err.contains("column `nope_1` reads `nope`"), "{err}");
    model.operations.push(OperationSpec {
        name: "bad".into(),
        expr: "q +".into(),
        categorical: false,
    });
    assert!(model.check().is_err());
    assert!(matches!(
        model.decide(&ctx(1, 1, 1, "x")),
        Decision::Unsure(_)
    ));
}

/// What generated code for `decision_model()` looks like; its `decide` (the trait's) must
/// agree with the in-memory model on every context.
static GENERATED: GeneratedHeuristic = GeneratedHeuristic {
    name: "mm",
    heuristic_name: "TestMM",
    choices: &["a", "b", "c"],
    device: DeviceIdentity::H100,
    confidence_threshold: 0.45,
    predict: Predict::Decision(predict),
};
static DIST_B: [(f64, u16); 2] = [(0.9, 1), (0.1, 2)];
static DIST_C: [(f64, u16); 3] = [(0.5, 2), (0.25, 0), (0.25, 1)];
static DIST_T: [(f64, u16); 3] = [(0.4, 0), (0.4, 2), (0.2, 1)];
fn predict(context: &Context) -> Prediction {
    let (Some(m), Some(k), Some(n)) = (
        context.get("m").and_then(Value::as_f64),
        context.get("k").and_then(Value::as_f64),
        context.get("n").and_then(Value::as_f64),
    ) else {
        return Prediction::Unsure(UnsureKind::MissingFeature("m"));
    };
    let fp16 = context.get("mat1_dtype").map(|v| v.to_string()) == Some("torch.float16".into());
    if m * k <= 1000.5 {
        Prediction::Distribution(&DIST_B)
    } else if !fp16 {
        Prediction::Unsure(UnsureKind::UnsafeLeaf)
    } else if n <= 64.0 {
        Prediction::Distribution(&DIST_C)
    } else {
        Prediction::Distribution(&DIST_T)
    }
}

#[test]
fn model_and_generated_code_agree() {
    let model = decision_model();
    let mut eval = ModelEvaluator::new(&model).unwrap();
    for m in [1, 7, 10, 31, 32, 33, 100, 1000] {
        for k in [1, 31, 32, 33, 143, 1000] {
            for n in [1, 63, 64, 65, 1000] {
                for dtype in ["torch.float16", "torch.bfloat16"] {
                    let c = ctx(m, k, n, dtype);
                    assert_eq!(eval.decide(&c), GENERATED.decide(&c), "{m} {k} {n} {dtype}");
                    assert_eq!(model.decide(&c), GENERATED.decide(&c));
                    let names = eval.ranked(&c).map(|v| {
                        v.iter()
                            .map(|&i| model.choices[i].clone())
                            .collect::<Vec<_>>()
                    });
                    let gen = GENERATED
                        .ranked(&c)
                        .map(|v| v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
                    assert_eq!(names, gen);
                }
            }
        }
    }
}

#[test]
fn regression_rules() {
    let mut model = decision_model();
    model.kind = ModelKind::Regression;
    model.choices = vec!["orig".into(), "pad".into()];
    model.operations.clear();
    model.columns = vec![
        Column::Numeric { name: "m".into() },
        Column::OneHot {
            feature: "choice".into(),
            value: "orig".into(),
        },
        Column::OneHot {
            feature: "choice".into(),
            value: "pad".into(),
        },
    ];
    model.tree = Tree {
        nodes: vec![
            split(0, 100.0, 1, 2),
            leaf(vec![3.0], true),
            split(1, 0.5, 3, 4),
            leaf(vec![2.0], false),
            leaf(vec![1.0], false),
        ],
    };
    model.threshold = 1.5;
    model.check().unwrap();
    assert_eq!(model.decide(&ctx(200, 1, 1, "x")), Decision::Choice(1));
    assert_eq!(model.ranked(&ctx(200, 1, 1, "x")), None);
    assert_eq!(
        model.decide(&ctx(50, 1, 1, "x")),
        Decision::Unsure(UnsureReason::UnsafeLeaf)
    );
    model.threshold = 2.0;
    assert_eq!(
        model.decide(&ctx(200, 1, 1, "x")),
        Decision::Unsure(UnsureReason::LowConfidence { confidence: 2.0 })
    );
}

/// The dynamic reference: `Model::column_values` (context lookups by name) and the rules.
fn reference_decide(model: &Model, ctx: &Context) -> Decision {
    let ops = model.operations().unwrap();
    let leaf_of = |c: &Context| -> std::result::Result<Vec<f64>, UnsureReason> {
        let cols = model.column_values(c, &ops)?;
        match &model.tree.nodes[model.tree.route(&cols)] {
            Node::Leaf {
                unsafe_leaf: true, ..
            } => Err(UnsureReason::UnsafeLeaf),
            Node::Leaf { value, .. } => Ok(value.clone()),
            Node::Split { .. } => unreachable!(),
        }
    };
    match model.kind {
        ModelKind::Decision => match leaf_of(ctx) {
            Err(r) => Decision::Unsure(r),
            Ok(value) => match leaf_best_choices(&value).first() {
                None => Decision::Unsure(UnsureReason::UnsafeLeaf),
                Some(&(p, _)) if p <= model.threshold => {
                    Decision::Unsure(UnsureReason::LowConfidence { confidence: p })
                }
                Some(&(_, i)) => Decision::Choice(i),
            },
        },
        ModelKind::Regression => {
            let mut scores = Vec::new();
            for (i, choice) in model.choices.iter().enumerate() {
                let mut c = ctx.clone();
                c.set(CHOICE_FEATURE, Value::Str(choice.clone()), true);
                match leaf_of(&c) {
                    Err(r) => return Decision::Unsure(r),
                    Ok(value) => scores.push((value[0], i)),
                }
            }
            regression_decision(&scores, model.threshold)
        }
    }
}

/// Contexts with several layouts (orders, extra and duplicate features, a missing one),
/// zero and huge dimensions, other dtypes, NaN.
fn varied_contexts() -> Vec<Context> {
    let mut out = Vec::new();
    let dims = [0i64, 1, 7, 10, 31, 64, 65, 100, 143, 1000, 5000, 1 << 40];
    for (i, &m) in dims.iter().enumerate() {
        for (j, &k) in dims.iter().enumerate() {
            let n = dims[(i * 7 + j * 3) % dims.len()];
            let dtype = ["torch.float16", "torch.bfloat16", "True"][(i + j) % 3];
            let mut c = Context::new();
            match (i + 2 * j) % 5 {
                0 => {
                    c.add("m", m).add("k", k).add("n", n);
                    c.add_categorical("mat1_dtype", dtype);
                }
                1 => {
                    c.add_categorical("mat1_dtype", dtype);
                    c.add("n", n).add("k", k).add("m", m);
                }
                2 => {
                    c.add("extra", 1.5)
                        .add("m", m)
                        .add("k", k)
                        .add("n", n)
                        .add("m", m + 1);
                    c.add_categorical("mat1_dtype", dtype)
                        .add_categorical("choice", "b");
                }
                3 => {
                    c.add("m", m)
                        .add("n", n)
                        .add_categorical("mat1_dtype", dtype);
                }
                _ => {
                    c.add("m", m as f64 + 0.5).add("k", k).add("n", f64::NAN);
                    c.add_categorical("mat1_dtype", dtype);
                }
            }
            out.push(c);
        }
    }
    out
}

#[test]
fn compiled_evaluator_equals_the_dynamic_reference() {
    let mut decision = decision_model();
    let mut regression = decision_model();
    regression.kind = ModelKind::Regression;
    regression.choices = vec!["a".into(), "b".into()];
    regression.columns.push(Column::OneHot {
        feature: "choice".into(),
        value: "a".into(),
    });
    regression.tree = Tree {
        nodes: vec![
            split(3, 0.5, 1, 2),
            split(0, 1000.5, 3, 4),
            split(2, 64.0, 5, 6),
            leaf(vec![2.0], false),
            leaf(vec![1.0], true),
            leaf(vec![0.5], false),
            leaf(vec![3.0], false),
        ],
    };
    regression.threshold = 1.2;
    regression.check().unwrap();
    let mut outcomes = std::collections::BTreeSet::new();
    for guard in [false, true] {
        decision.range_guard = guard;
        regression.range_guard = guard;
        for model in [&decision, &regression] {
            let ops = model.operations().unwrap();
            let mut eval = ModelEvaluator::new(model).unwrap();
            for c in varied_contexts() {
                let got = eval.decide(&c);
                assert_eq!(got, reference_decide(model, &c), "{:?} {c:?}", model.kind);
                outcomes.insert(format!("{got:?}").chars().take(12).collect::<String>());
                // Bitwise, so that NaN columns compare equal.
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                let want = model.column_values(&c, &ops).map(|v| bits(&v));
                assert_eq!(eval.column_values(&c).map(bits), want, "{c:?}");
                if model.kind == ModelKind::Decision {
                    let ranked = eval.ranked(&c);
                    assert_eq!(ranked, model.ranked(&c));
                }
            }
        }
    }
    // Every kind of outcome was exercised.
    assert!(outcomes.len() >= 5, "{outcomes:?}");
}

#[test]
fn validation_refuses_a_foreign_default_choice_and_bad_names() {
    let mut model = decision_model();
    model.check().unwrap();
    model.default_choice = Some("nope".into());
    let err = model.check().unwrap_err().to_string();
    assert!(
        err.contains("default choice \"nope\" is not among"),
        "{err}"
    );
    let mut model = decision_model();
    for (name, why) in [
        ("Pad_MM", "contains `_`"),
        ("padMM", "capital"),
        ("Self", "already uses"),
        ("TreeNode", "already uses"),
        ("Type", "reserved"),
        ("Lib", "reserved"),
        ("Pad\nMM", "contains `\\n`"),
    ] {
        model.heuristic_name = name.into();
        let err = model.check().unwrap_err().to_string();
        assert!(err.contains("heuristic name") && err.contains(why), "{err}");
    }
    assert_eq!(
        heuristic_module_name("PadMMA100Decision"),
        "pad_mma100_decision"
    );
}

#[test]
fn depth_of_a_deep_chain_needs_no_recursion() {
    let n = 300_000;
    let mut nodes = Vec::with_capacity(2 * n + 1);
    for i in 0..n {
        nodes.push(split(0, 1.0, 2 * i + 1, 2 * i + 2));
        nodes.push(leaf(vec![1.0], false));
    }
    nodes.push(leaf(vec![1.0], false));
    let tree = Tree { nodes };
    assert_eq!(tree.depth(), n);
    // A cycle (never valid) terminates too.
    let cyclic = Tree {
        nodes: vec![split(0, 1.0, 0, 0)],
    };
    assert!(cyclic.depth() <= 1);
}
