//! Hostile models: text that could break out of a comment or a string literal in every field
//! that reaches generated code, trees deeper than any nesting limit, a crate folder that is
//! not a crate, a closed stdout pipe. Each gives valid code that decides like the model, or a
//! clear error (exit 2), never a panic, invalid code or a destroyed file.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use ah_codegen::{render, Mode, Options};
use ah_core::model::{Model, Node};
use ah_core::value::is_unsafe_in_code;

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> Model {
    Model::load(&manifest().join("tests/fixtures").join(name)).unwrap()
}

fn python3() -> bool {
    !ah_test_support::skip_without_python("the Python checks")
}

/// A folder with a `Cargo.toml`: what `--rust` must point at.
fn new_crate(dir: &Path) -> PathBuf {
    let krate = dir.join("crate");
    std::fs::create_dir_all(&krate).unwrap();
    std::fs::write(krate.join("Cargo.toml"), "[package]\nname = \"h\"\n").unwrap();
    krate
}

trait JsonPath {
    fn ends_with_json(&self) -> bool;
}

impl JsonPath for PathBuf {
    fn ends_with_json(&self) -> bool {
        self.extension().is_some_and(|e| e == "json")
    }
}

/// Renders the Rust module, the Python artifact and the `.dot` file of `model`.
fn render_all(model: &Model, dir: &Path) -> Vec<(PathBuf, String)> {
    let options = Options {
        rust_crate: Some(new_crate(dir)),
        python_dir: Some(dir.join("py")),
        dot_file: Some(dir.join("tree.dot")),
        mode: Mode::Write,
        command: None,
    };
    render(model, &options)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|f| (f.path, f.contents))
        .collect()
}

fn file<'a>(files: &'a [(PathBuf, String)], ext: &str) -> &'a str {
    files
        .iter()
        .find(|(p, _)| p.extension().is_some_and(|e| e == ext) && !p.ends_with("lib.rs"))
        .map(|(_, c)| c.as_str())
        .unwrap()
}

/// Python parses the artifact, and importing it (against the torch stub) runs no payload and
/// gives back the model's name and choices exactly.
fn check_python(model: &Model, source: &str, dir: &Path, marker: &Path) {
    let path = dir.join("_artifact_check.py");
    std::fs::write(&path, source).unwrap();
    let o = Command::new("python3")
        .args([
            "-c",
            "import ast,sys; ast.parse(open(sys.argv[1], encoding='utf-8').read())",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}\n{source}",
        String::from_utf8_lossy(&o.stderr)
    );
    let script = format!(
        "import importlib.util, json, sys\n\
         sys.path.insert(0, sys.argv[2])\n\
         spec = importlib.util.spec_from_file_location('artifact', sys.argv[1])\n\
         m = importlib.util.module_from_spec(spec)\n\
         spec.loader.exec_module(m)\n\
         h = m.{}()\n\
         names = [h.get_name()]\n\
         if hasattr(h, 'choices'):\n    names += h.choices\n\
         sys.stdout.write(json.dumps(names))\n",
        model.heuristic_name
    );
    let o = ah_test_support::run_ok(
        Command::new("python3")
            .args(["-c", &script])
            .arg(&path)
            .arg(manifest().join("tests/python_stub")),
    );
    let names: Vec<String> = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(names[0], model.name);
    if names.len() > 1 {
        assert_eq!(names[1..], model.choices[..]);
    }
    assert!(!marker.exists(), "the payload ran on import");
}

/// Lexical check of a `.dot` file: every double-quoted string closes on its line.
fn check_dot(source: &str) {
    for line in source.lines().filter(|l| !l.starts_with("//")) {
        let (mut quoted, mut escaped) = (false, false);
        for c in line.chars() {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') if quoted => escaped = true,
                (false, '"') => quoted = !quoted,
                _ => {}
            }
        }
        assert!(!quoted, "unterminated string in the .dot line {line:?}");
    }
}

/// The payloads: each tries to end a comment or a string literal and run code.
fn payloads(marker: &Path) -> Vec<String> {
    let m = marker.display().to_string();
    vec![
        format!("x\nimport pathlib; pathlib.Path({m:?}).write_text('pwned')\n#"),
        format!("x\rimport pathlib; pathlib.Path({m:?}).write_text('pwned')\r#"),
        format!("x\r\nfn pwned() {{}}\r\n//"),
        "q'\"\\'\\\"\\\\".into(),
        "\"\"\"\nimport os\n\"\"\"".into(),
        "*/ fn pwned() {} /* \\".into(),
        "nul\0byte\x1bescape\x7fdel\u{85}nel".into(),
        "sep\u{2028}line\u{2029}para\u{feff}bom".into(),
        "bidi\u{202e}gnp.\u{2066}x\u{2069}\u{200f}".into(),
        "größe µs 行 🙂".into(),
        "\\".into(),
        "trailing backslash \\".into(),
    ]
}

/// Puts `h` into every field of the self-test model that reaches generated code as text.
fn hostile_model(h: &str) -> Model {
    let mut model = fixture("selftest.model.json");
    let op_name = format!("m*n{}", h.replace(['\n', '\r', ',', '`'], ""));
    model.provenance.dataset = format!("logs/{h}.txt");
    model.provenance.command = format!("ah-train {h}");
    model.provenance.tool_version = format!("0.1.0{h}");
    model.provenance.dataset_hash = format!("00{h}");
    model.training.learner = format!("cart{h}");
    model.name = format!("pad_mm{h}");
    model.choices[0] = format!("orig{h}");
    model.default_choice = Some(model.choices[0].clone());
    // A category (and the categorical feature `using_tf32`, read by no operation).
    let feature = format!("using_tf32{h}");
    for f in &mut model.categorical_features {
        if f == "using_tf32" {
            *f = feature.clone();
        }
    }
    for c in &mut model.columns {
        match c {
            ah_core::model::Column::OneHot { feature: f, value } => {
                if f == "using_tf32" {
                    *f = feature.clone();
                }
                if value == "torch.float16" {
                    *value = format!("torch.float16{h}");
                }
            }
            ah_core::model::Column::Numeric { name } if name == "m*n" => {
                *name = op_name.clone();
            }
            ah_core::model::Column::Numeric { .. } => {}
        }
    }
    for r in &mut model.feature_ranges {
        if r.name == "m*n" {
            r.name = op_name.clone();
        }
    }
    // An operation's name (operation names cannot hold line breaks, commas or backticks: they
    // become CSV columns), and a string literal in an expression (written in the
    // expression language, which escapes `\`, quotes and newlines; other characters raw).
    let lit: String = h
        .chars()
        .map(|c| match c {
            '\\' => "\\\\".to_string(),
            '\'' => "\\'".to_string(),
            '\n' => "\\n".to_string(),
            c => c.to_string(),
        })
        .collect();
    for op in &mut model.operations {
        if op.name == "m*n" {
            op.name = op_name.clone();
        }
        op.expr = op
            .expr
            .replace("'torch.bfloat16'", &format!("'torch.bfloat16{lit}'"));
    }
    model
}

#[test]
fn hostile_text_in_every_field_is_escaped_for_rust_python_and_dot() {
    let python = python3();
    for k in 0..payloads(Path::new("x")).len() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("pwned");
        let h = payloads(&marker).swap_remove(k);
        let model = hostile_model(&h);
        let files = render_all(&model, dir.path());
        // (The model's JSON copy is data, not code: serde_json escapes what JSON needs.)
        for (path, text) in files.iter().filter(|(p, _)| !p.ends_with_json()) {
            let bad: Vec<char> = text
                .chars()
                .filter(|c| *c != '\n' && is_unsafe_in_code(*c))
                .collect();
            assert!(
                bad.is_empty(),
                "{}: raw {bad:?} for payload {h:?}",
                path.display()
            );
            for code in ["\nimport pathlib", "\nfn pwned", "\nimport os"] {
                assert!(!text.contains(code), "{}: {code:?} as code", path.display());
            }
        }
        // The hostile feature name also reaches the logged layout's string table.
        assert!(
            file(&files, "rs").contains("const LAYOUT"),
            "no layout for {h:?}"
        );
        // The Rust module went through rustfmt: `render` fails when rustfmt rejects it.
        check_dot(file(&files, "dot"));
        if python {
            check_python(&model, file(&files, "py"), dir.path(), &marker);
        }
    }
}

#[test]
fn hostile_regression_model_is_escaped_too() {
    let h = "r\n\"\"\"\r\0\u{202e}'\\";
    let mut model = fixture("selftest_regression.model.json");
    model.name = format!("reg{h}");
    model.provenance.dataset = format!("{h}.txt");
    let dir = tempfile::tempdir().unwrap();
    let files = render_all(&model, dir.path());
    for (path, text) in files.iter().filter(|(p, _)| !p.ends_with_json()) {
        assert!(
            !text.chars().any(|c| c != '\n' && is_unsafe_in_code(c)),
            "{}",
            path.display()
        );
    }
    check_dot(file(&files, "dot"));
    if python3() {
        check_python(
            &model,
            file(&files, "py"),
            dir.path(),
            &dir.path().join("x"),
        );
    }
}

/// A chain `depth` splits deep: split `i` (node `2i`) has a leaf on the left (`2i + 1`) and
/// the next split on the right, cycling through the deep fixture's splits and leaves.
fn chain(depth: usize) -> Model {
    let mut model = fixture("selftest_deep.model.json");
    let base = model.tree.nodes.clone();
    let mut nodes = Vec::with_capacity(2 * depth + 1);
    for i in 0..depth {
        let j = i % (base.len() / 2);
        match &base[2 * j] {
            Node::Split {
                column, threshold, ..
            } => nodes.push(Node::Split {
                column: *column,
                // Numeric thresholds grow along the chain; one-hot ones stay at 0.5.
                threshold: if *threshold == 0.5 {
                    0.5
                } else {
                    *threshold + (i / (base.len() / 2)) as f64
                },
                left: 2 * i + 1,
                right: 2 * i + 2,
            }),
            Node::Leaf { .. } => unreachable!("the fixture is a chain"),
        }
        nodes.push(base[2 * j + 1].clone());
    }
    nodes.push(base[base.len() - 1].clone());
    model.tree.nodes = nodes;
    model
}

fn run_codegen(model: &Model, dir: &Path) -> Output {
    let path = dir.join("deep.model.json");
    std::fs::write(&path, serde_json::to_string(model).unwrap()).unwrap();
    let krate = new_crate(dir);
    Command::new(env!("CARGO_BIN_EXE_ah-codegen"))
        .arg(&path)
        .arg("--rust")
        .arg(&krate)
        .arg("--python")
        .arg(dir.join("py"))
        .arg("--dot")
        .arg(dir.join("tree.dot"))
        .output()
        .unwrap()
}

#[test]
fn a_chain_deeper_than_pythons_nesting_limit_gives_valid_table_driven_code() {
    let model = fixture("selftest_deep.model.json");
    assert_eq!(model.tree.depth(), 150);
    let dir = tempfile::tempdir().unwrap();
    let o = run_codegen(&model, dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let py = std::fs::read_to_string(dir.path().join("py/_CodegenDeepSelfTest.py")).unwrap();
    assert!(py.contains("_tree = ("), "table form expected");
    let rs =
        std::fs::read_to_string(dir.path().join("crate/src/codegen_deep_self_test.rs")).unwrap();
    assert!(
        rs.contains("static TREE: [TreeNode; 301]"),
        "table form expected"
    );
    if python3() {
        check_python(&model, &py, dir.path(), &dir.path().join("x"));
    }
}

#[test]
fn a_chain_of_200000_splits_loads_validates_decides_and_generates_without_overflow() {
    let model = chain(200_000);
    assert_eq!(model.tree.depth(), 200_000);
    model.check().unwrap();
    // Evaluation walks the whole chain: large values of every feature go right every time.
    let mut ctx = ah_core::Context::new();
    for f in &model.numerical_features {
        ctx.add(f.clone(), ah_core::Value::Int(1 << 40));
    }
    for f in &model.categorical_features {
        ctx.add_categorical(f.clone(), ah_core::Value::Str("torch.float16".into()));
    }
    let _ = model.decide(&ctx);
    let dir = tempfile::tempdir().unwrap();
    let o = run_codegen(&model, dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The same table form as at depth 150 (whose artifact is imported and checked above and
    // in python_artifact.rs); parsing 18 MB of Python here would take a minute.
    let py = std::fs::read_to_string(dir.path().join("py/_CodegenDeepSelfTest.py")).unwrap();
    assert!(py.contains("_tree = (") && py.lines().count() > 400_000);
    let rs =
        std::fs::read_to_string(dir.path().join("crate/src/codegen_deep_self_test.rs")).unwrap();
    assert!(rs.contains("static TREE: [TreeNode; 400001]"));
    check_dot(&std::fs::read_to_string(dir.path().join("tree.dot")).unwrap());
}

#[test]
fn a_rust_folder_that_is_not_a_crate_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let nowhere = dir.path().join("nowhere");
    let model = manifest().join("tests/fixtures/selftest.model.json");
    let o = Command::new(env!("CARGO_BIN_EXE_ah-codegen"))
        .arg(&model)
        .arg("--rust")
        .arg(&nowhere)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("not a generated heuristics crate") && err.contains("nowhere"),
        "{err}"
    );
    assert!(!nowhere.exists(), "nothing may be created");
    // An existing folder without Cargo.toml is refused too, its files untouched.
    std::fs::create_dir_all(nowhere.join("src")).unwrap();
    std::fs::write(nowhere.join("src/lib.rs"), "// mine\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_ah-codegen"))
        .arg(&model)
        .arg("--rust")
        .arg(&nowhere)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(nowhere.join("src/lib.rs")).unwrap(),
        "// mine\n"
    );
}

#[test]
fn a_default_choice_outside_the_choices_is_refused() {
    let mut model = fixture("selftest.model.json");
    model.default_choice = Some("nope".into());
    let err = model.check().unwrap_err().to_string();
    assert!(
        err.contains("default choice \"nope\" is not among the choices"),
        "{err}"
    );
}

/// Spawns `cmd` with its stdout a pipe whose reader is gone before it writes.
fn with_closed_stdout(mut cmd: Command) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let _ = child.stdin.take().map(|mut s| s.flush());
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_stdout_pipe_ends_quietly() {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ah-codegen"));
    cmd.arg(manifest().join("tests/fixtures/selftest.model.json"))
        .args(["--no-rust", "--python", "unused", "--dry-run"]);
    let o = with_closed_stdout(cmd);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        !err.contains("Broken pipe") && !err.contains("panicked"),
        "{err}"
    );
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ah-codegen"));
    cmd.arg("--help");
    let o = with_closed_stdout(cmd);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Issue 28: a split whose two branches answer the same (both `return None`, or equal
/// distributions) is written as that one answer, in Python as in Rust (the plan decides for
/// both), and the code still decides like the model.
#[test]
fn splits_whose_branches_agree_are_one_answer_in_both_languages() {
    let mut model = fixture("selftest.model.json");
    let nodes = &mut model.tree.nodes;
    // The root's right subtree: every leaf unsafe; its left subtree untouched.
    let Node::Split { right, .. } = nodes[0] else {
        panic!("the fixture's root splits")
    };
    let mut todo = vec![right];
    let mut splits_below = 0;
    while let Some(i) = todo.pop() {
        match &mut nodes[i] {
            Node::Split { left, right, .. } => {
                splits_below += 1;
                todo.extend([*left, *right]);
            }
            Node::Leaf { unsafe_leaf, .. } => *unsafe_leaf = true,
        }
    }
    assert!(splits_below > 0, "the subtree must have splits to prune");
    let dir = tempfile::tempdir().unwrap();
    let files = render_all(&model, dir.path());
    let python = file(&files, "py");
    let rust = file(&files, "rs");
    let body = python.split("def get_best_choices").nth(1).unwrap();
    // The root's `else:` is one `return None`, not a subtree of them.
    let nones = body.matches("return None").count();
    let unpruned = fixture_returns(&fixture("selftest.model.json"), dir.path());
    assert!(nones < unpruned + splits_below, "{body}");
    let else_block: Vec<&str> = body.lines().skip_while(|l| *l != "        else:").collect();
    assert_eq!(else_block[1].trim(), "return None", "{body}");
    // Rust: the root's right subtree is the unsafe answer, no split below it.
    let walk = rust.split("fn walk").nth(1).unwrap();
    assert!(
        walk.contains("} else {\n        Prediction::Unsure(UnsureKind::UnsafeLeaf)\n    }"),
        "{walk}"
    );
}

/// How many `return None` the artifact of `model` has.
fn fixture_returns(model: &Model, dir: &Path) -> usize {
    let files = render_all(model, &dir.join("plain"));
    file(&files, "py").matches("return None").count()
}
