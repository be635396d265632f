//! The generated code decides exactly like the in-memory model it was made from
//! (`ah_core::model::ModelEvaluator`, the reference), on every row of the training log and on
//! contexts built to hit the edges: ties at the threshold, unseen categories, out-of-range
//! values, missing features, unusual value kinds (the generic path).

use std::path::{Path, PathBuf};

use ah_core::log::{Log, ReadOptions};
use ah_core::model::{Model, ModelEvaluator};
use ah_core::{Context, Decision, LearnedHeuristic, Value};

fn models() -> Vec<(PathBuf, Model)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path).unwrap();
            let model: Model =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            out.push((path, model));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(!out.is_empty(), "no models in {}", dir.display());
    out
}

fn heuristic(name: &str) -> &'static dyn LearnedHeuristic {
    let registry = ah_heuristics::registry();
    let found = registry
        .heuristics()
        .iter()
        .copied()
        .find(|h| h.heuristic_name() == name);
    found.unwrap_or_else(|| panic!("heuristic {name} is not registered: regenerate the crate"))
}

/// Compares the generated heuristic with the model on `contexts`; returns how many decided.
fn assert_parity(model: &Model, contexts: &[Context]) -> usize {
    let h = heuristic(&model.heuristic_name);
    let mut reference = ModelEvaluator::new(model).unwrap();
    let mut decided = 0;
    for (i, ctx) in contexts.iter().enumerate() {
        let want = reference.decide(ctx);
        let got = h.decide(ctx);
        assert_eq!(
            got,
            want,
            "{}: context {i} differs: {:?}",
            model.heuristic_name,
            ctx.features()
        );
        if model.kind == ah_core::model::ModelKind::Decision {
            assert_eq!(
                h.ranked(ctx).map(|r| r
                    .iter()
                    .map(|c| model.choices.iter().position(|x| x == c).unwrap())
                    .collect::<Vec<_>>()),
                reference.ranked(ctx),
                "ranked, context {i}"
            );
        }
        decided += usize::from(matches!(got, Decision::Choice(_)));
    }
    decided
}

/// Contexts of every row of a log (features in header order, categorical per metadata).
fn log_contexts(log: &Log) -> Vec<Context> {
    let cats: Vec<bool> = log
        .features
        .iter()
        .map(|f| log.metadata.is_categorical(f))
        .collect();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for row in &log.rows {
        let mut ctx = Context::with_capacity(log.features.len());
        for ((name, v), cat) in log.features.iter().zip(&row.values).zip(&cats) {
            ctx.add_feature(name.clone(), v.clone(), *cat);
        }
        if seen.insert(ctx.feature_values_csv()) {
            out.push(ctx);
        }
    }
    out
}

/// The training log of a model: `$AH_PARITY_DATA` (the log itself, or a folder holding it),
/// else `../shared/data/pytorch/`, else the workspace's `data/` folder.
fn shared_log(file_name: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut candidates = Vec::new();
    if let Some(p) = std::env::var_os("AH_PARITY_DATA").map(PathBuf::from) {
        if p.is_file() && p.file_name().is_some_and(|n| n == file_name) {
            candidates.push(p.clone());
        }
        candidates.push(p.join(file_name));
    }
    candidates.push(root.join("../../../shared/data/pytorch").join(file_name));
    candidates.push(root.join("../../data").join(file_name));
    candidates.into_iter().find(|p| p.is_file())
}

#[test]
fn every_model_decides_like_the_generated_code_on_its_training_log() {
    for (path, model) in models() {
        if model.provenance.dataset == "none" {
            eprintln!(
                "{}: hand-written model, no training log (edge contexts only)",
                model.heuristic_name
            );
            continue;
        }
        let Some(log_path) = shared_log(&model.provenance.dataset) else {
            let expected = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared/data/pytorch")
                .join(&model.provenance.dataset);
            ah_core::test_support::skip_without(&expected);
            eprintln!(
                "skipped {}: training log {} not found (set AH_PARITY_DATA to it or its folder)",
                path.display(),
                model.provenance.dataset
            );
            continue;
        };
        let log = Log::read(&log_path, ReadOptions::default()).unwrap();
        let contexts = log_contexts(&log);
        let decided = assert_parity(&model, &contexts);
        eprintln!(
            "{}: {} inputs, {decided} decided, all equal to the model",
            model.heuristic_name,
            contexts.len()
        );
        assert!(decided > 0);
    }
}

/// A deterministic generator (no dependency): xorshift.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Perturbed contexts: values from the model's thresholds and neighbours, zeros, huge
/// integers, floats, booleans and strings where numbers are expected, unseen categories,
/// missing and duplicated features.
fn fuzz_contexts(model: &Model, n: usize, seed: u64) -> Vec<Context> {
    let mut rng = Rng(seed | 1);
    let mut numbers: Vec<f64> = vec![
        0.0, 1.0, 2.0, 3.0, 32.0, 512.0, 1024.0, 4096.0, 65536.0, 1e6,
    ];
    for node in &model.tree.nodes {
        if let ah_core::model::Node::Split { threshold, .. } = node {
            numbers.extend([threshold.floor(), threshold.ceil(), *threshold]);
        }
    }
    for r in &model.feature_ranges {
        numbers.extend([r.min, r.max, r.min - 1.0, r.max + 1.0]);
    }
    // Literals of the operations, and their neighbours.
    for spec in &model.operations {
        let op = ah_core::ops::Operation::from_spec(spec).unwrap();
        for token in op.source.split(|c: char| !(c.is_ascii_digit() || c == '.')) {
            if let Ok(x) = token.parse::<f64>() {
                numbers.extend([
                    x,
                    x.floor() - 1.0,
                    x.floor(),
                    x.ceil(),
                    x.ceil() + 1.0,
                    x * 4096.0,
                ]);
            }
        }
    }
    let mut cats: Vec<String> = vec![
        "True".into(),
        "False".into(),
        "torch.float16".into(),
        "torch.bfloat16".into(),
        "torch.float32".into(),
        "not_float_32".into(),
        "never_seen".into(),
    ];
    for c in &model.columns {
        if let ah_core::model::Column::OneHot { value, .. } = c {
            cats.push(value.clone());
        }
    }
    let mut out = Vec::new();
    for _ in 0..n {
        let mut ctx = Context::new();
        let weird = rng.below(4) == 0;
        for f in &model.numerical_features {
            if weird && rng.below(12) == 0 {
                continue; // missing
            }
            let x = numbers[rng.below(numbers.len() as u64) as usize];
            let v = match (weird, rng.below(10)) {
                (true, 0) => Value::Float(x),
                (true, 1) => Value::Bool(rng.below(2) == 0),
                (true, 2) => Value::Str("7".into()),
                (true, 3) => Value::Int(i64::MAX - rng.below(3) as i64),
                _ if x.fract() == 0.0 && x.abs() < 1e15 => Value::Int(x as i64),
                _ => Value::Float(x),
            };
            ctx.add(f.clone(), v);
        }
        for f in &model.categorical_features {
            if weird && rng.below(12) == 0 {
                continue;
            }
            let v = match rng.below(6) {
                0 => Value::Bool(true),
                1 => Value::Bool(false),
                2 if weird => Value::Int(8),
                _ => Value::Str(cats[rng.below(cats.len() as u64) as usize].clone()),
            };
            ctx.add_categorical(f.clone(), v);
        }
        if weird && rng.below(3) == 0 && !model.numerical_features.is_empty() {
            // A later feature of the same name shadows the first.
            ctx.add(
                model.numerical_features[0].clone(),
                Value::Int(rng.below(70000) as i64),
            );
        }
        out.push(ctx);
    }
    out
}

#[test]
fn every_model_decides_like_the_generated_code_on_edge_contexts() {
    for (_, model) in models() {
        let contexts = fuzz_contexts(&model, 20_000, 0x5eed);
        let decided = assert_parity(&model, &contexts);
        eprintln!(
            "{}: {} fuzzed contexts, {decided} decided, all equal to the model",
            model.heuristic_name,
            contexts.len()
        );
    }
}

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
    let (_, model) = models()
        .into_iter()
        .find(|(_, m)| m.heuristic_name == "CodegenSelfTest")
        .unwrap();
    let h = heuristic("CodegenSelfTest");
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
