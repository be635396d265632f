//! The shipped handler's forms agree with the model they were generated from: the Python
//! handler, the Rust module and the `mm` artifact decide like the tree that the command in
//! their header grows again; and the helper that runs such checks with python3.

use super::policy::Policy;
use super::*;

/// The model trained on the shipped log's first 48 GEMMs with default parameters, and its
/// samples: what the parity tests of the generated forms render and compare against.
fn first_48() -> (PruneModel, data::Samples) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let params = PruneParams {
        first: vec![48],
        ..Default::default()
    };
    let logs = [root.join("data/inductor_mm_h100.txt")];
    train(&logs, "ParityCheck", &params, &|_| {}).unwrap()
}

/// The generated handler module decides like the model on every GEMM of the shipped log's
/// first 48 (rule 5: generated code equals the in-memory model), run by python3 without
/// PyTorch (`decide` needs none). Skips without python3 (ah-test-support's policy: a failure
/// when AH_REQUIRE_PYTHON is set).
#[test]
fn generated_python_decides_like_the_model() {
    if ah_test_support::skip_without_python("the generated handler's parity test") {
        return;
    }
    let (model, data) = first_48();
    let code =
        ah_codegen::inductor::render_module(&serde_json::to_value(&model).unwrap(), "# test")
            .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("parity_check_choices.py");
    std::fs::write(&module, code).unwrap();
    let mut cases = String::new();
    for s in &data.samples {
        let f: serde_json::Map<String, serde_json::Value> = model
            .features
            .iter()
            .zip(&s.values)
            .map(|(n, v)| (n.clone(), serde_json::to_value(v).unwrap()))
            .collect();
        let expected = match model.tree.decide(s, &model.features) {
            Policy::Extern => serde_json::json!(["extern", []]),
            Policy::Default => serde_json::json!(["default", []]),
            Policy::Keep { choices } => serde_json::json!(["keep", choices]),
            Policy::Drop { choices } => serde_json::json!(["drop", choices]),
        };
        cases.push_str(&serde_json::json!({"f": f, "expected": expected}).to_string());
        cases.push('\n');
    }
    let script = "import importlib.util, json, sys\n\
        spec = importlib.util.spec_from_file_location('m', sys.argv[1]); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n\
        bad = 0\n\
        for line in sys.stdin:\n\
        \x20   c = json.loads(line); f = {k: (list(v.values())[0] if isinstance(v, dict) else v) for k, v in c['f'].items()}\n\
        \x20   kind, names = m.decide(f)\n\
        \x20   bad += [kind, list(names)] != c['expected']\n\
        print(bad)\n";
    let out = run_python(&module, script, &cases);
    assert_eq!(out.trim(), "0", "decisions that differ");
    assert_eq!(data.samples.len(), 48);
}

/// The logs and training parameters of an `ah-prune` command line as a generated header
/// spells it (`//!   ah-prune LOG... --first N ...`); output options are skipped.
fn shipped_command(line: &str) -> (Vec<String>, PruneParams) {
    let mut words = line
        .split_whitespace()
        .skip_while(|w| *w != "ah-prune")
        .skip(1);
    let mut logs = Vec::new();
    let mut p = PruneParams::default();
    while let Some(w) = words.next() {
        let mut value = || words.next().expect("an option's value").to_string();
        match w {
            "--first" => p.first = value().split(',').map(|n| n.parse().unwrap()).collect(),
            "--min-leaf" => p.min_leaf = value().parse().unwrap(),
            "--max-depth" => p.max_depth = value().parse().unwrap(),
            "--min-support" => p.min_support = value().parse().unwrap(),
            "--min-extern-support" => p.min_extern_support = value().parse().unwrap(),
            "--horizon" => p.horizon = value().parse().unwrap(),
            "--harm" => p.harm = value().parse().unwrap(),
            "--harm-price" => p.harm_price_s = value().parse().unwrap(),
            "--folds" => p.folds = value().parse().unwrap(),
            "--no-full-list" => p.full_list = false,
            "--max-keep" => p.max_keep = value().parse().unwrap(),
            "--no-grown-lists" => p.grown_lists = false,
            "--alignment-first" => p.alignment_first = true,
            "--k-ratio" => p.k_ratio = true,
            "--min-side" => p.min_side = true,
            "--fp32-full-list-above" => p.fp32_full_list_above = Some(value().parse().unwrap()),
            "--fp32-guard-list" => p.fp32_guard_list = true,
            "--fp32-guard-price" => p.fp32_guard_price_s = Some(value().parse().unwrap()),
            "--fp32-drop-never-near" => p.fp32_drop_never_near = Some(value().parse().unwrap()),
            "--prices" => {
                p.pricing = match value().as_str() {
                    "logged" => Pricing::Logged,
                    "one-ptxas" => Pricing::OnePtxas,
                    other => panic!("--prices {other}: a pricing this test does not know"),
                }
            }
            "--output-dir" | "--python-dir" | "--rust-dir" | "--artifact-dir" => {
                value();
            }
            "--heuristic-name" => assert_eq!(value(), "InductorMMH100"),
            w if w.starts_with('-') => panic!("{w}: an option this test does not know"),
            log => logs.push(log.to_string()),
        }
    }
    (logs, p)
}

/// The shipped Rust module (`generated/ah-inductor-choices`) decides like the tree it was
/// generated from (trained again by the command in its header) on every logged GEMM; with the Python parity test above, the handler, the
/// Rust module and the model agree.
#[test]
fn the_shipped_rust_module_decides_like_the_model() {
    use super::sizing::sized_config;
    use ah_inductor_choices::inductor_mmh100 as shipped;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let module = root.join("generated/ah-inductor-choices/src/inductor_mmh100.rs");
    let header = std::fs::read_to_string(&module).unwrap();
    let command = header.lines().nth(2).unwrap();
    let (logs, params) = shipped_command(command);
    let logs: Vec<_> = logs.iter().map(|l| root.join(l)).collect();
    // The tree alone, grown as `train` grows it: the cross-validation, which this test does
    // not read, would double its time (`make test` on 2 cores).
    let data = super::load_for_training(&logs, &params).unwrap();
    let categorical = data.metadata.categorical_features.clone();
    let tree = params
        .growth(&data.features, &categorical)
        .grow(&data.samples.iter().collect::<Vec<_>>());
    let mut universe = super::data::universe(data.samples.iter());
    universe.extend(
        [
            "triton_mm_BLOCK-M=-64_BLOCK-K=32_BLOCK-N=64",
            "triton_mm_BLOCK-M=064_BLOCK-K=32_BLOCK-N=64_numwarps=8",
            "triton_mm_BLOCK-M=99999999999999999999_BLOCK-K=32_BLOCK-N=64",
            "triton_mm_BLOCK-M=64_BLOCK-M=32_BLOCK-K=32_BLOCK-N=64_numwarps=8",
            "triton_mm_BLOCK-M=64_BLOCK-N=64",
        ]
        .map(String::from),
    );
    for s in &data.samples {
        let get = |n: &str| {
            let i = data.features.iter().position(|f| f == n).unwrap();
            s.values[i].clone()
        };
        let int = |n: &str| get(n).as_f64().unwrap() as i64;
        // The module's `&str` fields, in its order: op, the dtypes, contiguity, TF32.
        let text: Vec<String> = ah_codegen::inductor_rust::CATEGORICAL
            .iter()
            .map(|n| get(n).to_string())
            .collect();
        let g = shipped::Gemm {
            m: int("m"),
            k: int("k"),
            n: int("n"),
            batch: int("batch"),
            op: &text[0],
            mat1_dtype: &text[1],
            mat2_dtype: &text[2],
            mat1_stride_0: int("mat1_stride_0"),
            mat1_stride_1: int("mat1_stride_1"),
            mat2_stride_0: int("mat2_stride_0"),
            mat2_stride_1: int("mat2_stride_1"),
            mat1_iscontig: &text[3],
            mat2_iscontig: &text[4],
            using_tf32: &text[5],
        };
        let width = |d: &str| {
            let bytes = ah_codegen::prune_tree::DTYPE_BYTES
                .iter()
                .find(|(x, _)| *x == d);
            bytes.map(|&(_, b)| b)
        };
        let widths = width(g.mat1_dtype).zip(width(g.mat2_dtype));
        for name in &universe {
            let (m, n, k) = (g.m, g.n, g.k);
            assert_eq!(
                shipped::sized_config(name, &g),
                sized_config(name, m, n, k),
                "{g:?}"
            );
            let need = widths.and_then(|(a, b)| super::sizing::pipeline_bytes(name, a, b));
            assert_eq!(shipped::pipeline_bytes(name, &g), need, "{name} {g:?}");
        }
        assert_eq!(shipped::SHARED_MEMORY, data.metadata.shared_memory);
        let same = match (tree.decide(s, &data.features), shipped::decide(&g)) {
            (Policy::Extern, shipped::Policy::Extern) => true,
            (Policy::Default, shipped::Policy::Default) => true,
            (Policy::Keep { choices }, shipped::Policy::Keep(names)) => choices == names,
            (Policy::Drop { choices }, shipped::Policy::Drop(names)) => choices == names,
            _ => false,
        };
        assert!(same, "{g:?}");
    }
}

/// The `mm` AutoHeuristic artifact ranks like the handler decides, on every `mm` GEMM of the
/// shipped log's first 48: `extern` -> `[extern_mm]`, `keep` -> `extern_mm` and the kept
/// configs as PyTorch names them, `default` -> None. Run by python3 against the torch stub of
/// ah-codegen's tests (no PyTorch); with the handler's parity test above, the artifact, the
/// handler, the Rust module and the model agree. Its precondition holds on the heuristic's GPU
/// and PyTorch only.
#[test]
fn the_mm_artifact_ranks_like_the_handler_decides() {
    if ah_test_support::skip_without_python("the mm artifact's parity test") {
        return;
    }
    let (model, data) = first_48();
    let json = serde_json::to_value(&model).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let handler = ah_codegen::inductor::render_module(&json, "# test").unwrap();
    std::fs::write(dir.path().join("parity_handler.py"), handler).unwrap();
    let artifact = ah_codegen::inductor_artifact::render_artifact(&json, "# test").unwrap();
    std::fs::write(dir.path().join("_ParityCheck.py"), artifact).unwrap();
    let op = model.features.iter().position(|f| f == "op").unwrap();
    let cases: String = data
        .samples
        .iter()
        .filter(|s| s.values[op].to_string() == "mm")
        .map(|s| {
            let f: serde_json::Map<String, serde_json::Value> = model
                .features
                .iter()
                .zip(&s.values)
                .map(|(n, v)| (n.clone(), serde_json::to_value(v).unwrap()))
                .collect();
            serde_json::Value::Object(f).to_string() + "\n"
        })
        .collect();
    let out = run_python(dir.path(), ARTIFACT_PARITY, &cases);
    let n = cases.lines().count();
    assert!(n >= 20, "{n} mm GEMMs");
    assert_eq!(
        out.lines().last().unwrap_or_default(),
        format!("0 mismatches of {n}; kinds extern keep"),
        "{out}"
    );
}

/// Compares the artifact with the handler, case by case from stdin; prints the mismatches,
/// then their count, the cases and the kinds of decision seen (a failed guard check counts as
/// a mismatch).
const ARTIFACT_PARITY: &str = r#"
import importlib.util, json, sys, types, warnings
import torch
from torch._inductor.autoheuristic.autoheuristic_utils import AHContext, AHMetadata

def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m

handler = load("parity_handler", sys.argv[1] + "/parity_handler.py")
art = load("_ParityCheck", sys.argv[1] + "/_ParityCheck.py")
h = art.ParityCheck()
bad, n, kinds = 0, 0, set()
for line in sys.stdin:
    f = {k: (list(v.values())[0] if isinstance(v, dict) else v) for k, v in json.loads(line).items()}
    ctx = AHContext()
    for k, v in f.items():
        if k not in ("batch", "op"):
            ctx.add_feature(k, v, is_categorical=isinstance(v, str))
    kind, names = handler.decide(f)
    n += 1
    kinds.add(kind)
    kept = handler.sized_configs(names, f["m"], f["n"], f["k"]) if kind == "keep" else ()
    want = None if kind == "default" else art.mm_choice_ids(kept)
    got = h.get_decisions_ranked(ctx)
    if got != want:
        bad += 1
        print(f, kind, got, want)
torch.__version__ = "2.11.0+cu130"
meta = lambda capa: AHMetadata(232448, capa, [], "mm")
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    ok = [h.check_precondition(meta((9, 0)), None), h.check_precondition(meta((8, 0)), None),
          h.check_precondition(meta((8, 0)), None)]
bad += ok != [True, False, False] or len(w) != 1
torch.__version__ = "2.12.0"
bad += h.check_precondition(meta((9, 0)), None)
print(f"{int(bad)} mismatches of {n}; kinds {' '.join(sorted(kinds))}")
"#;

/// Runs `script` with python3 (argument: `arg`), ah-codegen's torch stub on the path (what
/// generated artifacts import; no PyTorch) and `stdin` as its input; its stdout. Panics with
/// stderr when it fails.
pub(super) fn run_python(arg: &std::path::Path, script: &str, stdin: &str) -> String {
    use std::io::Write;
    let stub =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ah-codegen/tests/python_stub");
    let mut child = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(arg)
        .env("PYTHONPATH", stub)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
