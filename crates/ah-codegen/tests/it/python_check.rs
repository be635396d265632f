//! The in-process compile check (`ah_codegen::check_compiles`) against its oracle, CPython:
//! both give the same answer, accept or refuse, on generated artifacts as written and on the
//! same artifacts pushed over each limit the check enforces (nested brackets, indentation,
//! nesting without brackets) or given a line CPython's compiler refuses after parsing.
//!
//! Between the check's own syntax-depth limit (`MAX_SYNTAX_DEPTH`, 500) and CPython's (about
//! 3,000; 6,000 on 3.9 and 3.13) the check is stricter by design: no case sits there.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use ah_codegen::{
    check_compiles, render, CodegenError, Mode, Options, MAX_INDENT_LEVELS, MAX_NESTED_BRACKETS,
};
use ah_core::model::Model;

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The Python artifact ah-codegen writes for a fixture model.
fn artifact(fixture: &str) -> String {
    let model = Model::load(&manifest().join("tests/fixtures").join(fixture)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        python_dir: Some(dir.path().to_path_buf()),
        mode: Mode::DryRun,
        ..Options::default()
    };
    let files = render(&model, &options).unwrap_or_else(|e| panic!("{fixture}: {e}"));
    assert_eq!(files.len(), 1);
    files.into_iter().next().unwrap().contents
}

/// `source` with `lines` (at the method body's indentation, two levels) put first in its
/// `get_best_choices`.
fn in_method(source: &str, lines: &[String]) -> String {
    let def = "    def get_best_choices(self, context: AHContext)";
    let at = source.find(def).expect("a decision artifact");
    let at = at + source[at..].find('\n').unwrap() + 1;
    let body: String = lines.iter().map(|l| format!("        {l}\n")).collect();
    format!("{}{body}{}", &source[..at], &source[at..])
}

/// `n` nested `if`s inside the method body (two levels deep already), then a statement.
fn nested_ifs(n: usize) -> Vec<String> {
    let mut lines: Vec<String> = (0..n)
        .map(|i| format!("{}if context:", "    ".repeat(i)))
        .collect();
    lines.push(format!("{}pass", "    ".repeat(n)));
    lines
}

/// CPython's answer for each source: `None` when it compiles, else the exception and its line.
fn cpython(sources: &[(String, String)]) -> Vec<Option<(String, Option<usize>)>> {
    let script = "import json, sys\n\
        out = []\n\
        for name, src in json.load(sys.stdin):\n\
        \x20   try:\n\
        \x20       compile(src, name, 'exec')\n\
        \x20       out.append(None)\n\
        \x20   except (SyntaxError, ValueError, RecursionError, MemoryError) as e:\n\
        \x20       out.append([f'{type(e).__name__}: {e}'[:300], getattr(e, 'lineno', None)])\n\
        json.dump(out, sys.stdout)\n";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::to_vec(sources).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "python3 failed");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_in_process_check_and_cpython_agree_on_generated_artifacts() {
    if ah_test_support::skip_without_python("holding the in-process check to CPython") {
        return;
    }
    let nested = artifact("selftest.model.json");
    let parens = |n: usize| vec![format!("_x = {}1{}", "(".repeat(n), ")".repeat(n))];
    // The method body is two levels deep: n nested ifs reach n + 2 levels.
    let ifs = MAX_INDENT_LEVELS - 2;
    // (name, source, whether both must name the same line when they refuse)
    let mut cases: Vec<(String, String, bool)> = vec![
        ("nested".into(), nested.clone(), true),
        ("ops".into(), artifact("selftest_ops.model.json"), true),
        ("plain".into(), artifact("selftest_plain.model.json"), true),
        (
            "regression".into(),
            artifact("selftest_regression.model.json"),
            true,
        ),
        (
            "table (150 levels)".into(),
            artifact("selftest_deep.model.json"),
            true,
        ),
        (
            "committed _InductorMMH100.py".into(),
            std::fs::read_to_string(manifest().join("../../generated/python/_InductorMMH100.py"))
                .unwrap(),
            true,
        ),
    ];
    for (name, lines, same_line) in [
        ("200 parentheses", parens(MAX_NESTED_BRACKETS), true),
        ("201 parentheses", parens(MAX_NESTED_BRACKETS + 1), true),
        (
            "201 mixed brackets",
            vec![format!("_x = {}1{}", "([{".repeat(67), "}])".repeat(67))],
            true,
        ),
        ("99 indentation levels", nested_ifs(ifs), true),
        ("100 indentation levels", nested_ifs(ifs + 1), true),
        (
            "400 nested `not`",
            vec![format!("_x = {}1", "not ".repeat(400))],
            true,
        ),
        // Beyond every CPython's limit (the most: 5,967 on 3.9); CPython gives no line.
        (
            "10000 nested `-`",
            vec![format!("_x = {}1", "-".repeat(10_000))],
            false,
        ),
        (
            "a 300-level conditional chain",
            vec![format!("_x = {}1", "1 if context else ".repeat(300))],
            true,
        ),
        ("break outside a loop", vec!["break".into()], true),
        ("assignment to a call", vec!["_x() = 1".into()], true),
        ("unclosed parenthesis", vec!["_x = (1,".into()], false),
        ("a null byte", vec!["# \0".into()], false),
    ] {
        cases.push((name.into(), in_method(&nested, &lines), same_line));
    }
    cases.push((
        "return outside the method".into(),
        format!("{nested}return None\n"),
        true,
    ));
    let sources: Vec<(String, String)> = cases
        .iter()
        .map(|(n, s, _)| (format!("_{}.py", n.replace(' ', "_")), s.clone()))
        .collect();
    let oracle = cpython(&sources);
    let mut refused = 0;
    for ((name, source, same_line), want) in cases.iter().zip(&oracle) {
        let got = check_compiles(source, "_T.py");
        match (&got, want) {
            (Ok(()), None) => {}
            (
                Err(CodegenError::ArtifactDoesNotCompile { line, message, .. }),
                Some((cpython, cpython_line)),
            ) => {
                refused += 1;
                if *same_line {
                    assert_eq!(
                        Some(*line),
                        *cpython_line,
                        "{name}: line of {message:?} vs CPython's {cpython:?}"
                    );
                }
            }
            _ => panic!("{name}: the check says {got:?}, CPython {want:?}"),
        }
    }
    assert_eq!(refused, 9, "{oracle:?}");
}
