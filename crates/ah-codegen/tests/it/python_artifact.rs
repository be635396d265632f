//! The generated PyTorch artifact decides like the in-memory model: run with `python3` against
//! the torch stub in `tests/python_stub/` (no torch needed) on every input of the training log
//! (when `../shared` is present) and on generated edge contexts. Skips with a message when
//! `python3` is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use ah_codegen::{generate, Mode, Options};
use ah_core::model::{Model, ModelEvaluator, ModelKind};
use ah_core::ops::{apply_operations, builtin_operations};
use ah_core::{Context, Decision, UnsureReason, Value};
use ah_log::{Log, ReadOptions};
use serde_json::{json, Value as Json};

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn python3() -> Option<&'static str> {
    (!ah_test_support::skip_without_python("the Python artifact parity test")).then_some("python3")
}

fn tagged(v: &Value) -> Json {
    match v {
        Value::Int(i) => json!({ "i": i }),
        Value::Float(f) => json!({ "f": ah_core::value::python_float_repr(*f) }),
        Value::Bool(b) => json!({ "b": b }),
        Value::Str(s) => json!({ "s": s }),
    }
}

/// Runs the artifact over `contexts` and checks every decision (and ranking) against the
/// model. Contexts where PyTorch itself would fail first (a built-in augment operation
/// raising) are left out; so are contexts the model finds unsure for a missing feature
/// (PyTorch raises `KeyError` there).
fn check_python(model: &Model, contexts: &[Context]) -> usize {
    let Some(py) = python3() else { return 0 };
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        python_dir: Some(dir.path().to_path_buf()),
        mode: Mode::Write,
        ..Default::default()
    };
    generate(model, &options).unwrap();
    let artifact = dir.path().join(format!("_{}.py", model.heuristic_name));
    let builtin = builtin_operations(&model.name);
    let mut reference = ModelEvaluator::new(model).unwrap();
    let user_ops: Vec<String> = reference
        .operations()
        .iter()
        .filter(|op| {
            !builtin.iter().any(|b| {
                b.name == op.name && b.expr == op.expr && b.is_categorical == op.is_categorical
            })
        })
        .map(|op| op.name.clone())
        .collect();
    let mut failed_ops = 0;
    let mut cases = Vec::new();
    let mut expected: Vec<Expected> = Vec::new();
    for ctx in contexts {
        let want = reference.decide(ctx);
        // A failing user-defined operation: the artifact computes it inline and answers None,
        // as the model is unsure. Other missing features: PyTorch raises (KeyError), skip.
        if let Decision::Unsure(UnsureReason::MissingFeature { feature }) = &want {
            if !user_ops.contains(feature) || overflows(reference.operations(), ctx) {
                continue;
            }
        }
        // What PyTorch's AutoHeuristic computes before asking the heuristic.
        let mut augmented = ctx.clone();
        if apply_operations(&builtin, &mut augmented).is_err() {
            continue;
        }
        let aug: Vec<Json> = builtin
            .iter()
            .map(|op| json!([op.name, tagged(augmented.get(&op.name).unwrap())]))
            .collect();
        let features: Vec<Json> = ctx
            .features()
            .iter()
            .map(|f| json!([f.name, tagged(&f.value), f.is_categorical]))
            .collect();
        cases.push(json!({ "features": features, "augmented": aug }));
        let ranked = if model.kind == ModelKind::Decision {
            reference.ranked(ctx).map(|r| {
                r.into_iter()
                    .map(|i| model.choices[i].clone())
                    .collect::<Vec<_>>()
            })
        } else {
            None
        };
        if matches!(&want, Decision::Unsure(UnsureReason::MissingFeature { .. })) {
            failed_ops += 1;
        }
        expected.push((
            ctx.clone(),
            want.choice().map(|i| model.choices[i].clone()),
            ranked,
        ));
    }
    let input = json!({
        "shared_memory": model.precondition.shared_memory,
        "device_capa": [model.precondition.device_capa.0, model.precondition.device_capa.1],
        "name": model.name,
        "choices": model.choices,
        "contexts": cases,
    });
    let cases_path = dir.path().join("cases.json");
    std::fs::write(&cases_path, input.to_string()).unwrap();
    let got = run_artifact(py, &artifact, &cases_path);
    let decided = check_answers(model, &got, &expected);
    if failed_ops > 0 {
        eprintln!(
            "{}: {failed_ops} contexts where a user-defined operation fails: None, as the model",
            model.heuristic_name
        );
    }
    decided
}

/// A context with the model's decision and ranking for it (choice names).
type Expected = (Context, Option<String>, Option<Vec<String>>);

/// What `tests/python_stub/run_artifact.py` answers for the artifact over the cases file.
fn run_artifact(py: &str, artifact: &Path, cases: &Path) -> Json {
    let runner = manifest().join("tests/python_stub/run_artifact.py");
    let out = Command::new(py)
        .arg(&runner)
        .arg(artifact)
        .arg(cases)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python3 failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Asserts that the artifact's answers `got` are the model's `expected` ones; how many were
/// decided.
fn check_answers(model: &Model, got: &Json, expected: &[Expected]) -> usize {
    assert_eq!(
        got["precondition"],
        json!(true),
        "check_precondition on the model's own device"
    );
    let decisions = got["decisions"].as_array().unwrap();
    let ranked = got["ranked"].as_array().unwrap();
    assert_eq!(decisions.len(), expected.len());
    let mut decided = 0;
    for (i, (ctx, want, want_ranked)) in expected.iter().enumerate() {
        let want_json = want.as_ref().map_or(Json::Null, |c| json!(c));
        assert_eq!(
            decisions[i],
            want_json,
            "{}: context {i}: {:?}",
            model.heuristic_name,
            ctx.features()
        );
        if model.kind == ModelKind::Decision {
            let want_r = want_ranked.as_ref().map_or(Json::Null, |r| json!(r));
            assert_eq!(
                ranked[i], want_r,
                "{}: ranked, context {i}",
                model.heuristic_name
            );
        }
        decided += usize::from(want.is_some());
    }
    decided
}

/// True when an operation fails by integer overflow: the model (64-bit integers) is unsure,
/// Python (big integers) computes the exact value; a documented difference, left out here.
fn overflows(ops: &[ah_core::ops::Operation], ctx: &Context) -> bool {
    let mut scratch = ctx.clone();
    for op in ops {
        match op.eval_context(&scratch) {
            Ok(v) => scratch.set(op.name.clone(), v, op.is_categorical),
            Err(ah_core::Error::Operation {
                source: ah_core::ops::EvalError::Overflow,
                ..
            }) => return true,
            Err(_) => return false,
        }
    }
    false
}

fn log_contexts(path: &Path) -> Vec<Context> {
    let log = Log::read(path, ReadOptions::default()).unwrap();
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

/// Well-formed contexts around the model's thresholds (the kinds PyTorch logs, integers
/// within 2^53, categories seen and unseen).
fn edge_contexts(model: &Model, n: usize) -> Vec<Context> {
    let mut numbers: Vec<f64> = vec![
        0.0, 1.0, 2.0, 3.0, 7.0, 32.0, 64.0, 512.0, 1024.0, 4096.0, 65536.0,
    ];
    for node in &model.tree.nodes {
        if let ah_core::model::Node::Split { threshold, .. } = node {
            numbers.extend([threshold.floor(), threshold.ceil()]);
        }
    }
    for r in &model.feature_ranges {
        numbers.extend([r.min, r.max, r.min - 1.0, r.max + 1.0]);
    }
    numbers.retain(|x| x.abs() < 9e15);
    let mut cats: Vec<String> = vec![
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
    let mut state = 0x9e3779b97f4a7c15u64;
    let mut next = move |k: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % k as u64) as usize
    };
    (0..n)
        .map(|_| {
            let mut ctx = Context::new();
            for f in &model.numerical_features {
                let x = numbers[next(numbers.len())];
                let v = if x.fract() == 0.0 && next(8) != 0 {
                    Value::Int(x as i64)
                } else {
                    Value::Float(x)
                };
                ctx.add(f.clone(), v);
            }
            for f in &model.categorical_features {
                let v = match next(4) {
                    0 => Value::Bool(true),
                    1 => Value::Bool(false),
                    _ => Value::Str(cats[next(cats.len())].clone()),
                };
                ctx.add_categorical(f.clone(), v);
            }
            ctx
        })
        .collect()
}

#[test]
fn self_test_artifact_decides_like_the_model() {
    let model = Model::load(&manifest().join("tests/fixtures/selftest.model.json")).unwrap();
    let decided = check_python(&model, &edge_contexts(&model, 3000));
    eprintln!("CodegenSelfTest: python artifact equal to the model, {decided} decided");
}

/// A chain of depth 150 (past Python's nesting limit): the table-driven artifact decides like
/// the model, every leaf of the chain reached.
#[test]
fn deep_chain_artifact_decides_like_the_model() {
    let model = Model::load(&manifest().join("tests/fixtures/selftest_deep.model.json")).unwrap();
    assert_eq!(model.tree.depth(), 150);
    let decided = check_python(&model, &edge_contexts(&model, 3000));
    assert!(decided > 0);
    eprintln!("CodegenDeepSelfTest: python artifact equal to the model, {decided} decided");
}

#[test]
fn committed_models_artifacts_decide_like_the_models_on_their_logs() {
    // The production crate's models and the self-test crate's hand-written fixtures.
    let mut paths: Vec<PathBuf> = Vec::new();
    for krate in ["ah-heuristics", "ah-heuristics-selftest"] {
        let dir = manifest()
            .join("../../generated")
            .join(krate)
            .join("models");
        let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        found.sort();
        paths.extend(found);
    }
    for path in paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
    {
        let model = Model::load(path).unwrap();
        let mut contexts = edge_contexts(&model, 2000);
        let candidates = [
            manifest()
                .join("../../../shared/data/pytorch")
                .join(&model.provenance.dataset),
            manifest()
                .join("../../data")
                .join(&model.provenance.dataset),
        ];
        match candidates.iter().find(|p| p.is_file()) {
            Some(log) => contexts.extend(log_contexts(log)),
            // Hand-written models (`none`) have no log; a trained one's log is in ../shared or data/.
            None if model.provenance.dataset == "none"
                || ah_test_support::skip_without(&candidates[0]) =>
            {
                eprintln!(
                "{}: training log {} not found under ../shared/data/pytorch or data/: edge contexts only",
                    model.heuristic_name, model.provenance.dataset
                )
            }
            None => {}
        }
        let decided = check_python(&model, &contexts);
        eprintln!(
            "{}: python artifact equal to the model on {} contexts, {decided} decided",
            model.heuristic_name,
            contexts.len()
        );
    }
}

/// Splits a line into its text skeleton (numbers replaced by `#`) and its numbers.
fn skeleton(line: &str) -> (String, Vec<String>) {
    let mut text = String::new();
    let mut numbers = Vec::new();
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let starts_number = c.is_ascii_digit()
            && (i == 0 || !(chars[i - 1].is_ascii_alphanumeric() || chars[i - 1] == '_'));
        if starts_number {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || chars[i] == '.'
                    || chars[i] == 'e'
                    || (matches!(chars[i], '-' | '+') && chars[i - 1] == 'e'))
            {
                i += 1;
            }
            numbers.push(chars[start..i].iter().collect());
            text.push('#');
        } else {
            text.push(c);
            i += 1;
        }
    }
    (text, numbers)
}

/// PyTorch's own artifact for the same log and algorithm (`../shared/reference/artifacts/
/// _PadMMA100Decision.py`, made by PyTorch's trainer) and ours are the same file, line for line,
/// but for our header lines, the class name, and numbers: leaf probabilities PyTorch rounds to
/// three decimals (we print them exactly), split thresholds equal to 1e-12 (the trainer's float
/// arithmetic may differ in the last bit).
#[test]
fn artifact_has_the_shape_of_pytorchs_own() {
    let reference = manifest().join("../../../shared/reference/artifacts/_PadMMA100Decision.py");
    if ah_test_support::skip_without(&reference) {
        return;
    }
    let want = std::fs::read_to_string(&reference).unwrap();
    let model =
        Model::load(&manifest().join("../../generated/ah-heuristics/models/PadMMA100.model.json"))
            .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        python_dir: Some(dir.path().to_path_buf()),
        mode: Mode::Write,
        ..Default::default()
    };
    generate(&model, &options).unwrap();
    let got = std::fs::read_to_string(dir.path().join("_PadMMA100.py")).unwrap();
    let got: Vec<String> = got
        .lines()
        .enumerate()
        .filter(|(i, l)| *i < 3 || !l.starts_with("# "))
        .map(|(_, l)| l.replace("class PadMMA100(", "class PadMMA100Decision("))
        .collect();
    let want: Vec<&str> = want
        .lines()
        .filter(|l| !l.starts_with("# To regenerate"))
        .collect();
    assert_eq!(got.len(), want.len(), "line count");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let ((gs, gn), (ws, wn)) = (skeleton(g), skeleton(w));
        assert_eq!(gs, ws, "line {}: {g:?} vs PyTorch's {w:?}", i + 1);
        for (k, (a, b)) in gn.iter().zip(&wn).enumerate() {
            let (x, y): (f64, f64) = (a.parse().unwrap(), b.parse().unwrap());
            // In `return [(p, i), ...]` even numbers are probabilities, odd ones class indices.
            let same = if w.trim_start().starts_with("return [") && k % 2 == 0 {
                format!("{x:.3}") == *b
            } else {
                a == b || (x - y).abs() <= 1e-12 * y.abs().max(1e-300)
            };
            assert!(same, "line {}: {a} vs PyTorch's {b}", i + 1);
        }
    }
}
