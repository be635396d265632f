//! The generated code decides exactly like the in-memory model it was made from
//! (`ah_core::model::ModelEvaluator`, the reference), on every row of the training log and on
//! contexts built to hit the edges: ties at the threshold, unseen categories, out-of-range
//! values, missing features, unusual value kinds (the generic path). Covers this crate and the
//! test-only crate of hand-written fixtures (`generated/ah-heuristics-selftest`, a
//! dev-dependency), whose heuristics production `register_all` must not register.

use std::path::{Path, PathBuf};

use ah_core::model::{Model, ModelEvaluator};
use ah_core::{Context, Decision, LearnedHeuristic, Value};
use ah_log::{Log, ReadOptions};

/// The models folder of the self-test crate.
fn self_test_models_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ah-heuristics-selftest/models")
}

/// The models of one crate's `models/` folder, sorted by path.
fn models_in(dir: &Path) -> Vec<(PathBuf, Model)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
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

/// The models of this crate, then those of the self-test crate.
fn models() -> Vec<(PathBuf, Model)> {
    let mut out = models_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("models"));
    out.extend(models_in(&self_test_models_dir()));
    out
}

fn heuristic(name: &str) -> &'static dyn LearnedHeuristic {
    let registries = [
        ah_heuristics::registry(),
        ah_heuristics_selftest::registry(),
    ];
    let found = registries
        .iter()
        .flat_map(|r| r.heuristics().iter().copied())
        .find(|h| h.heuristic_name() == name);
    found.unwrap_or_else(|| panic!("heuristic {name} is not registered: regenerate the crate"))
}

/// Production `register_all` registers exactly the trained models of this crate; the
/// hand-written fixtures (dataset `none`) are only in the self-test crate.
#[test]
fn production_registry_holds_the_trained_models_and_no_fixture() {
    let production = ah_heuristics::registry();
    let mut registered: Vec<&str> = production
        .heuristics()
        .iter()
        .map(|h| h.heuristic_name())
        .collect();
    registered.sort_unstable();
    let own = models_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("models"));
    let mut trained: Vec<&str> = own.iter().map(|(_, m)| m.heuristic_name.as_str()).collect();
    trained.sort_unstable();
    assert_eq!(registered, trained);
    for (path, model) in &own {
        assert_ne!(
            model.provenance.dataset,
            "none",
            "{}: a hand-written model belongs in generated/ah-heuristics-selftest",
            path.display()
        );
    }
    let fixtures = ah_heuristics_selftest::registry();
    assert!(!fixtures.heuristics().is_empty());
    for h in fixtures.heuristics() {
        assert!(
            !registered.contains(&h.heuristic_name()),
            "{} is registered by production register_all",
            h.heuristic_name()
        );
    }
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
        for ((name, v), cat) in log.features.iter().zip(row.values.iter()).zip(&cats) {
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
            // Without ../shared, the log may be one of PyTorch's there: skip (the policy says
            // so, or fails with AH_REQUIRE_SHARED). With it, the log is missing: a shipped
            // model's training log is committed to data/.
            let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
            if ah_test_support::skip_without(&shared) {
                eprintln!(
                    "skipped {}: training log {} not found (set AH_PARITY_DATA to it or its folder)",
                    path.display(),
                    model.provenance.dataset
                );
                continue;
            }
            panic!(
                "{}: its training log {} is neither in data/ nor in ../shared/data/pytorch/ \
                 (nor at AH_PARITY_DATA): commit the log the model was trained on as data/{} \
                 (docs/adding-a-heuristic.md, step 4)",
                path.display(),
                model.provenance.dataset,
                model.provenance.dataset
            );
        };
        let log = Log::read(&log_path, ReadOptions::default()).unwrap();
        let contexts = log_contexts(&log);
        let decided = assert_parity(&model, &contexts);
        eprintln!(
            "{}: {} inputs, {decided} decided, all equal to the model",
            model.heuristic_name,
            contexts.len()
        );
        assert!(
            decided > 0,
            "{}: decides none of the {} inputs of its training log: a heuristic that is always \
             unsure is not worth shipping (collect more inputs, see ah-train's warnings)",
            model.heuristic_name,
            contexts.len()
        );
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
