//! Every operation the expression language accepts gets generated code that builds. The
//! operations come from the language's own table (`ah_core::ops::Operator::all`, which the
//! parser reads), so a new operator or function is covered as soon as it parses:
//!
//! - per operator, per operand kind (integers, floats, booleans, strings) and as a numerical
//!   and a categorical feature, a model whose tree splits on the operation;
//! - per operator, the deepest chain of it the parser accepts (`ah_core::ops::MAX_DEPTH`),
//!   nested and, for infix operators, flat;
//! - small random models (random trees over random operations).
//!
//! Every model's Rust module goes into one temporary crate, built with
//! `cargo clippy -- -D warnings` (as `make lint` builds the generated crates); every Python
//! artifact is checked by the generator itself (in-process), then imported (against the torch stub) and
//! asked for a decision, which must be the model's.
//!
//! The clippy build of every operation's crate (a few hundred modules, over a minute and a
//! half on 2 cores) is `#[ignore]`d: the nightly job runs it (`.ci/nightly`, `--ignored`).
//! `make test` generates and imports every operation's artifact, and builds the random small
//! models' crate with clippy (the same path, on a few dozen modules).

use std::path::{Path, PathBuf};
use std::process::Command;

use ah_codegen::{generate, Mode, Options};
use ah_core::model::{Column, Model, Node, OperationSpec, Tree};
use ah_core::ops::{parse_expr, Operator};
use ah_core::{Context, Decision};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Operands of each kind, for the context `m = 64, k = 3, n = 2, mat1_dtype = 'torch.float16'`.
const OPERANDS: [(&str, [&str; 3]); 4] = [
    ("I", ["m", "k", "n"]),
    ("F", ["m / 3", "2.5", "k * 0.5"]),
    ("B", ["m > 64", "True", "n == 2"]),
    ("S", ["mat1_dtype", "'torch.float16'", "str(m > 1)"]),
];

fn base() -> Model {
    Model::load(&manifest().join("tests/fixtures/selftest_ops.model.json")).unwrap()
}

fn leaf(value: Vec<f64>) -> Node {
    Node::Leaf {
        value,
        samples: 1,
        unsafe_leaf: false,
    }
}

/// A model named `name` computing `ops` (name, source, categorical), whose tree splits on
/// each in turn (a chain, so every one is read), leaves alternating between the choices.
fn model(name: &str, ops: &[(String, String, bool)]) -> Model {
    let mut m = base();
    m.heuristic_name = name.to_string();
    m.feature_ranges.clear();
    m.range_guard = false;
    m.operations = ops
        .iter()
        .map(|(n, e, c)| OperationSpec {
            name: n.clone(),
            expr: e.clone(),
            categorical: *c,
        })
        .collect();
    m.columns = ops
        .iter()
        .map(|(n, _, c)| match c {
            true => Column::OneHot {
                feature: n.clone(),
                value: "True".into(),
            },
            false => Column::Numeric { name: n.clone() },
        })
        .collect();
    let mut nodes = Vec::new();
    for (i, (_, _, c)) in ops.iter().enumerate() {
        let threshold = if *c { 0.5 } else { 1.5 };
        let at = nodes.len();
        nodes.push(Node::Split {
            column: i,
            threshold,
            left: at + 1,
            right: at + 2,
        });
        nodes.push(leaf(if i % 2 == 0 {
            vec![1.0, 0.0]
        } else {
            vec![0.0, 1.0]
        }));
    }
    nodes.push(leaf(vec![0.25, 0.75]));
    m.tree = Tree { nodes };
    m.check().unwrap_or_else(|e| panic!("{name}: {e}"));
    m
}

/// An upper-camel name part for an operator.
fn label(op: Operator) -> String {
    let raw = format!("{op:?}");
    raw.chars().filter(char::is_ascii_alphanumeric).collect()
}

/// The deepest chain of `op` the parser accepts: each step puts the chain so far in the
/// first operand (`flat`: as a left-associative chain without parentheses).
fn deepest(op: Operator, flat: bool) -> String {
    let mut src = "m".to_string();
    loop {
        let next = if flat {
            let symbol = op.apply(&["X", "m", "m"][..op.arity()]);
            format!("{src}{}", symbol.trim_start_matches("(X)"))
        } else {
            let mut operands = vec![src.as_str(), "m", "m"];
            operands.truncate(op.arity().max(1));
            op.apply(&operands)
        };
        if parse_expr(&next).is_err() {
            return src;
        }
        src = next;
    }
}

fn every_operation_models() -> Vec<Model> {
    let mut out = Vec::new();
    for op in Operator::all() {
        for (kind, operands) in OPERANDS {
            for categorical in [false, true] {
                let expr = op.apply(&operands[..op.arity()]);
                let suffix = if categorical { "Cat" } else { "Num" };
                let name = format!("Op{}{kind}{suffix}", label(op));
                out.push(model(&name, &[("op".into(), expr, categorical)]));
            }
        }
        let infix = matches!(
            op,
            Operator::Binary(_) | Operator::Compare(_) | Operator::Bool(_)
        );
        for flat in [false, true].into_iter().filter(|f| !f || infix) {
            let expr = deepest(op, flat);
            assert!(expr.len() > 150, "{op:?}: {expr}");
            let name = format!("Deep{}{}", label(op), if flat { "Flat" } else { "" });
            out.push(model(&name, &[("deep".into(), expr, false)]));
        }
    }
    out
}

/// A crate in `dir` depending on this workspace's ah-core, with the workspace's lock file.
fn new_crate(dir: &Path) -> PathBuf {
    let krate = dir.join("crate");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    let core = manifest().join("../ah-core").canonicalize().unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        format!(
            "[package]\nname = \"every-operation\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\nah-core = {{ path = {:?} }}\n\n[workspace]\n",
            core.display().to_string()
        ),
    )
    .unwrap();
    std::fs::copy(
        manifest().join("../../Cargo.lock"),
        krate.join("Cargo.lock"),
    )
    .unwrap();
    krate
}

/// Generates every model into one crate (Rust) and one folder (Python).
fn generate_all(models: &[Model], krate: &Path, py: &Path) {
    for m in models {
        let options = Options {
            rust_crate: Some(krate.to_path_buf()),
            python_dir: Some(py.to_path_buf()),
            dot_file: None,
            mode: Mode::Write,
            command: None,
        };
        generate(m, &options).unwrap_or_else(|e| panic!("{}: {e}", m.heuristic_name));
    }
}

/// `cargo clippy -- -D warnings` on the crate (a target folder of its own under this test
/// binary's temporary folder, so ah-core is built once across runs).
fn clippy_deny_warnings(krate: &Path) {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("every_operation");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let o = Command::new(cargo)
        .args([
            "clippy",
            "--quiet",
            "--offline",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ])
        .current_dir(krate)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success(),
        "{}",
        &stderr[..stderr.len().min(20_000)]
    );
}

/// The context every artifact is asked about.
fn context() -> Context {
    let mut c = Context::new();
    c.add("m", 64i64).add("k", 3i64).add("n", 2i64);
    c.add_categorical("mat1_dtype", "torch.float16");
    c
}

/// Imports every artifact in `py` (against the torch stub) and asks each for a decision on
/// [`context`]: each must import, and decide as its model does where Python does not raise
/// (a type error of an operation outside the `try`, where the model is unsure).
fn import_and_decide(models: &[Model], py: &Path) {
    let script = r#"
import importlib.util, inspect, json, os, sys
sys.path.insert(0, sys.argv[2])
from torch._inductor.autoheuristic.autoheuristic_utils import AHContext
from torch._inductor.autoheuristic.learnedheuristic_interface import LearnedHeuristic
out = {}
for name in sorted(os.listdir(sys.argv[1])):
    spec = importlib.util.spec_from_file_location(name[:-3], os.path.join(sys.argv[1], name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    [cls] = [o for _, o in inspect.getmembers(module) if inspect.isclass(o) and issubclass(o, LearnedHeuristic) and o.__module__ == module.__name__]
    h = cls()
    ctx = AHContext()
    for f, v in [("m", 64), ("k", 3), ("n", 2)]:
        ctx.add_feature(f, v)
    ctx.add_feature("mat1_dtype", "torch.float16", is_categorical=True)
    try:
        out[cls.__name__] = h.get_decision(ctx, h.choices)
    except Exception as e:
        out[cls.__name__] = "raised " + type(e).__name__
print(json.dumps(out))
"#;
    let o = ah_test_support::run_ok(
        Command::new("python3")
            .args(["-c", script])
            .arg(py)
            .arg(manifest().join("tests/python_stub")),
    );
    let got: std::collections::BTreeMap<String, Option<String>> =
        serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(got.len(), models.len());
    for m in models {
        let python = &got[&m.heuristic_name];
        let want = match m.decide(&context()) {
            Decision::Choice(i) => Some(m.choices[i].clone()),
            Decision::Unsure(_) => None,
        };
        let raised = python.as_deref().is_some_and(|p| p.starts_with("raised"));
        if raised {
            assert_eq!(
                python.as_deref(),
                Some("raised TypeError"),
                "{}",
                m.heuristic_name
            );
            assert!(want.is_none(), "{}: {python:?}", m.heuristic_name);
        } else {
            assert_eq!(python, &want, "{}", m.heuristic_name);
        }
    }
}

/// Generates `models`; builds their crate with clippy when `clippy`, and imports their
/// artifacts in Python.
fn check_builds(models: &[Model], clippy: bool) {
    let python = !ah_test_support::skip_without_python("importing the artifacts");
    let dir = tempfile::tempdir().unwrap();
    let py = dir.path().join("py");
    if clippy {
        let krate = new_crate(dir.path());
        generate_all(models, &krate, &py);
        clippy_deny_warnings(&krate);
    } else {
        // No crate is built: the models are generated into two crates at once (each model
        // runs rustfmt and python3, most of this test's time).
        std::thread::scope(|s| {
            for (i, part) in models.chunks(models.len().div_ceil(2)).enumerate() {
                let krate = new_crate(&dir.path().join(format!("part{i}")));
                let py = &py;
                s.spawn(move || generate_all(part, &krate, py));
            }
        });
    }
    if python {
        import_and_decide(models, &py);
    }
}

#[test]
fn every_operation_generates_and_imports_in_python() {
    check_builds(&every_operation_models(), false);
}

#[test]
#[ignore = "nightly (.ci/nightly): cargo clippy over a crate of every operation, 1.5 min on 2 cores"]
fn every_operation_builds_with_deny_warnings() {
    check_builds(&every_operation_models(), true);
}

/// Small random models: a random tree (depth up to 4) over up to four random operations.
#[test]
fn random_small_models_build_with_deny_warnings_and_import_in_python() {
    let op_source = proptest::sample::select(Operator::all()).prop_flat_map(|op| {
        let operand =
            proptest::sample::select(OPERANDS.iter().flat_map(|(_, o)| *o).collect::<Vec<_>>());
        (proptest::collection::vec(operand, 3), proptest::bool::ANY)
            .prop_map(move |(args, cat)| (op.apply(&args[..op.arity()]), cat))
    });
    let strategy = (
        proptest::collection::vec(op_source, 1..4),
        proptest::collection::vec((0usize..4, 0usize..8, 0.0f64..1.0), 1..8),
    );
    let mut runner = TestRunner::deterministic();
    let mut models = Vec::new();
    for case in 0..24 {
        let (ops, splits) = strategy.new_tree(&mut runner).unwrap().current();
        let ops: Vec<(String, String, bool)> = ops
            .into_iter()
            .enumerate()
            .map(|(i, (e, c))| (format!("r{i}"), e, c))
            .collect();
        let mut m = model(&format!("Random{case}"), &ops);
        m.tree = random_tree(&splits, &m);
        m.check().unwrap_or_else(|e| panic!("{e}"));
        models.push(m);
    }
    check_builds(&models, true);
}

/// A tree from `splits` (column, shape, threshold): each split's left child is a leaf or the
/// next split, depending on `shape`; leaves of random two-choice distributions.
fn random_tree(splits: &[(usize, usize, f64)], m: &Model) -> Tree {
    let mut nodes = Vec::new();
    for (i, &(column, shape, p)) in splits.iter().take(4).enumerate() {
        let column = column % m.columns.len();
        let threshold = match m.columns[column] {
            Column::OneHot { .. } => 0.5,
            Column::Numeric { .. } => p * 100.0 - 10.0,
        };
        let at = nodes.len();
        nodes.push(Node::Split {
            column,
            threshold,
            left: at + 1,
            right: at + 2,
        });
        let q = if shape % 2 == 0 { p } else { (i % 2) as f64 };
        nodes.push(leaf(vec![q, 1.0 - q]));
    }
    nodes.push(leaf(vec![0.5, 0.5]));
    Tree { nodes }
}
