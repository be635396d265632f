//! The hostile model corpus (`tests/corpus/`, described in its README): hand-edited and
//! hostile model files, each given to the binary with every output on. What each does is one
//! snapshot (the whole message of a refusal); on the way it asserts that a refusal exits 2,
//! names the file (and, for the validator's problems, the line), says what to do, is short,
//! writes nothing and is the library's own message ([`ah_core::Model::load`]: one validator),
//! and that a model that is accepted gives code with every hostile character escaped.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use ah_core::value::is_unsafe_in_code;
use ah_test_support::files_under;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

fn corpus() -> Vec<PathBuf> {
    ah_test_support::corpus::files(&corpus_dir(), &[".model.json"])
}

/// Lines of generated code that a payload would have made code: none may start a line.
const INJECTED: [&str; 4] = ["import os", "fn pwned", "#!/bin/sh", "# coding"];

/// The generated files of an accepted model: no raw character that could end a comment or a
/// literal, no payload as code.
fn check_generated(name: &str, dir: &Path) {
    for rel in files_under(dir) {
        let path = dir.join(&rel);
        let is_code = ["rs", "py", "dot"]
            .iter()
            .any(|e| path.extension().is_some_and(|x| x == *e));
        if !is_code {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let raw: Vec<char> = text
            .chars()
            .filter(|c| *c != '\n' && is_unsafe_in_code(*c))
            .collect();
        assert!(raw.is_empty(), "{name}: {}: raw {raw:?}", rel.display());
        for line in text.lines() {
            let code = line.trim_start();
            assert!(
                !INJECTED.iter().any(|i| code.starts_with(i)),
                "{name}: {}: {line:?} as code",
                rel.display()
            );
        }
    }
    assert!(!dir.join("PWNED").exists(), "{name}: a payload ran");
}

fn one(file: &Path, scratch: &Path) -> String {
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    let dir = scratch.join(name.replace('.', "_"));
    std::fs::create_dir_all(dir.join("crate")).unwrap();
    std::fs::write(dir.join("crate/Cargo.toml"), "[package]\nname = \"h\"\n").unwrap();
    std::fs::copy(file, dir.join(&name)).unwrap();
    let before = files_under(&dir);
    let o = Command::new(env!("CARGO_BIN_EXE_ah-codegen"))
        .current_dir(&dir)
        .args([name.as_str(), "--rust", "crate", "--python", "py"])
        .args(["--dot", "tree.dot", "--quiet"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!err.contains("panicked"), "{name}: {err}");
    let mut out = format!("## {name}\n");
    match o.status.code() {
        Some(0) => {
            assert!(err.is_empty(), "{name}: {err}");
            let made = files_under(&dir);
            for want in ["crate/src/lib.rs", "tree.dot"] {
                assert!(made.contains(&PathBuf::from(want)), "{name}: {want}");
            }
            let py = made.iter().filter(|p| p.starts_with("py")).count();
            assert_eq!(py, 1, "{name}: the Python artifact");
            check_generated(&name, &dir);
            writeln!(
                out,
                "generated: Rust module, Python artifact, Graphviz tree"
            )
            .unwrap();
        }
        Some(2) => {
            for line in err.lines() {
                writeln!(out, "  | {line}").unwrap();
            }
            assert!(err.starts_with("error: "), "{name}: {err}");
            assert!(err.contains(&name), "{name}: names the file: {err}");
            assert!(err.contains("\nhint: "), "{name}: says what to do: {err}");
            assert!(err.len() < 1500, "{name}: a message of {} bytes", err.len());
            assert_eq!(files_under(&dir), before, "{name}: nothing written");
            // The library's message, whole: the validator is the loader's, the binary adds
            // nothing but `error: `.
            let lib = ah_core::Model::load(&dir.join(&name))
                .map(|_| ())
                .unwrap_err();
            let lib = ah_core::error::report(&lib).replace(&format!("{}/", dir.display()), "");
            assert_eq!(err, format!("error: {lib}\n"), "{name}");
            // The line of the offending value (`NAME:LINE: ` from the validator, serde's
            // `at line L column C`), unless the whole file is the problem (empty, truncated
            // at its end, a field missing).
            let line = lib[name.len()..].split(':').nth(1).unwrap_or_default();
            let whole_file = lib.contains("missing field") || lib.contains("EOF while parsing");
            assert!(
                line.parse::<usize>().is_ok() || lib.contains(" at line ") || whole_file,
                "{name}: no line: {lib}"
            );
        }
        code => panic!("{name}: exit {code:?}: {err}"),
    }
    out
}

#[test]
fn every_hostile_model_of_the_corpus_is_generated_safely_or_refused() {
    let scratch = tempfile::tempdir().unwrap();
    let files = corpus();
    assert!(files.len() >= 50, "{} corpus files", files.len());
    let mut all = String::new();
    for f in &files {
        all.push_str(&one(f, scratch.path()));
    }
    insta::assert_snapshot!("models", all);
}

#[test]
fn the_corpus_readme_describes_every_file() {
    ah_test_support::corpus::assert_readme_describes(&corpus_dir(), &corpus());
}
