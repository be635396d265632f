//! The `ah-codegen` binary on real files in temporary folders: outputs, determinism,
//! `--check`, `--dry-run`, bad input (exit 2, nothing written) and snapshots of files and messages.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ah-codegen"))
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/selftest.model.json")
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every file under `dir`, relative, with contents, sorted.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    ah_test_support::files_under(dir)
        .into_iter()
        .map(|rel| {
            let bytes = std::fs::read(dir.join(&rel)).unwrap();
            (rel, bytes)
        })
        .collect()
}

/// `dir/crate` with a `Cargo.toml`: what `--rust` must point at.
fn new_crate(dir: &Path) -> PathBuf {
    let krate = dir.join("crate");
    std::fs::create_dir_all(&krate).unwrap();
    std::fs::write(krate.join("Cargo.toml"), "[package]\nname = \"h\"\n").unwrap();
    krate
}

/// Snapshot settings that replace the temporary folders and the fixtures' folder, whose
/// absolute paths differ between machines and runs.
fn redacted() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"\S*/\.tmp[0-9A-Za-z]{6}", "[TMP]");
    settings.add_filter(r"\S*/tests/fixtures/", "[FIXTURES]/");
    settings
}

fn generate_all(dir: &Path) -> Output {
    let krate = new_crate(dir);
    let py = dir.join("py");
    let dot = dir.join("tree.dot");
    run(&[
        fixture().to_str().unwrap(),
        "--rust",
        krate.to_str().unwrap(),
        "--python",
        py.to_str().unwrap(),
        "--dot",
        dot.to_str().unwrap(),
    ])
}

#[test]
fn generates_deterministic_files_and_check_catches_hand_edits() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let o = generate_all(a.path());
    assert!(o.status.success(), "{}", stderr(&o));
    redacted().bind(|| insta::assert_snapshot!("generate_messages", stderr(&o)));
    let o = generate_all(b.path());
    assert!(o.status.success(), "{}", stderr(&o));
    // Same model, same bytes.
    let ta = tree(a.path());
    assert_eq!(ta, tree(b.path()));
    let names: Vec<String> = ta.iter().map(|(p, _)| p.display().to_string()).collect();
    assert_eq!(
        names,
        [
            "crate/Cargo.toml",
            "crate/models/CodegenSelfTest.model.json",
            "crate/rustfmt.toml",
            "crate/src/codegen_self_test.rs",
            "crate/src/lib.rs",
            "py/_CodegenSelfTest.py",
            "tree.dot"
        ]
    );
    // A second run changes nothing.
    let o = generate_all(a.path());
    assert!(o.status.success());
    assert!(!stderr(&o).contains("Updated:"), "{}", stderr(&o));
    // --check passes, then fails after a hand edit, naming the file and the line.
    let krate = a.path().join("crate");
    let check = |extra: &[&str]| {
        let mut args = vec![
            fixture().to_str().unwrap().to_string(),
            "--rust".into(),
            krate.to_str().unwrap().into(),
            "--check".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        bin().args(&args).output().unwrap()
    };
    let o = check(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let module = krate.join("src/codegen_self_test.rs");
    let text = std::fs::read_to_string(&module).unwrap();
    let edited = text.replace(
        "confidence_threshold: 0.9615384615384616,",
        "confidence_threshold: 0.95,",
    );
    assert_ne!(edited, text);
    std::fs::write(&module, edited).unwrap();
    let o = check(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // The stale file named, the others up to date, and the lines that differ.
    redacted().bind(|| insta::assert_snapshot!("check_stale_messages", stderr(&o)));
    // --check wrote nothing.
    assert!(std::fs::read_to_string(&module).unwrap().contains("0.95"));
    // A missing file is stale too.
    std::fs::remove_file(krate.join("src/lib.rs")).unwrap();
    let o = check(&[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("missing"), "{}", stderr(&o));
}

/// `-q`: the same files, no list of them on stderr; `--dry-run -q` still prints the files.
#[test]
fn quiet_writes_the_same_files_silently() {
    let loud = tempfile::tempdir().unwrap();
    let quiet = tempfile::tempdir().unwrap();
    assert!(generate_all(loud.path()).status.success());
    let krate = new_crate(quiet.path());
    let args = |extra: &str| {
        run(&[
            fixture().to_str().unwrap(),
            "--rust",
            krate.to_str().unwrap(),
            "--python",
            quiet.path().join("py").to_str().unwrap(),
            "--dot",
            quiet.path().join("tree.dot").to_str().unwrap(),
            "-q",
            extra,
        ])
    };
    let o = args("--check");
    assert_eq!(o.status.code(), Some(1));
    assert!(!stderr(&o).contains("Stale: "), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
    let o = run(&[
        fixture().to_str().unwrap(),
        "--rust",
        krate.to_str().unwrap(),
        "--python",
        quiet.path().join("py").to_str().unwrap(),
        "--dot",
        quiet.path().join("tree.dot").to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert_eq!(tree(loud.path()), tree(quiet.path()));
    let o = args("--dry-run");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert!(String::from_utf8_lossy(&o.stdout).contains("==> "));
}

#[test]
fn dry_run_prints_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let krate = new_crate(dir.path());
    let o = run(&[
        fixture().to_str().unwrap(),
        "--rust",
        krate.to_str().unwrap(),
        "--dry-run",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains("==> ") && out.contains("heuristic_name: \"CodegenSelfTest\","),
        "{out}"
    );
    assert_eq!(
        std::fs::read_dir(&krate).unwrap().count(),
        1,
        "only Cargo.toml"
    );
}

#[test]
fn regenerating_one_heuristic_leaves_the_others_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let krate = new_crate(dir.path());
    let text = std::fs::read_to_string(fixture()).unwrap();
    let other = dir.path().join("other.model.json");
    std::fs::write(
        &other,
        text.replace("\"CodegenSelfTest\"", "\"OtherSelfTest\""),
    )
    .unwrap();
    for m in [fixture(), other.clone()] {
        let o = run(&[m.to_str().unwrap(), "--rust", krate.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let lib = std::fs::read_to_string(krate.join("src/lib.rs")).unwrap();
    assert!(
        lib.contains("pub mod codegen_self_test;\npub mod other_self_test;"),
        "{lib}"
    );
    assert!(lib.contains("registry.register(&codegen_self_test::HEURISTIC);\n    registry.register(&other_self_test::HEURISTIC);"), "{lib}");
    let before = std::fs::read(krate.join("src/other_self_test.rs")).unwrap();
    let mtime = std::fs::metadata(krate.join("src/other_self_test.rs"))
        .unwrap()
        .modified()
        .unwrap();
    // Change the first model only (a split's threshold).
    let changed = dir.path().join("changed.model.json");
    std::fs::write(&changed, text.replace("4480256.0", "4480000.0")).unwrap();
    let o = run(&[changed.to_str().unwrap(), "--rust", krate.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("Updated:") && stderr(&o).contains("codegen_self_test.rs"));
    assert_eq!(
        std::fs::read(krate.join("src/other_self_test.rs")).unwrap(),
        before
    );
    assert_eq!(
        std::fs::metadata(krate.join("src/other_self_test.rs"))
            .unwrap()
            .modified()
            .unwrap(),
        mtime
    );
    // Another heuristic whose name maps to an existing module is refused, the module kept.
    let clash = dir.path().join("clash.model.json");
    std::fs::write(
        &clash,
        text.replace("\"CodegenSelfTest\"", "\"OtherSelfTEST\""),
    )
    .unwrap();
    let o = run(&[clash.to_str().unwrap(), "--rust", krate.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("maps to the same module"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read(krate.join("src/other_self_test.rs")).unwrap(),
        before
    );
    // A folder of models checks all of them.
    let o = run(&[
        krate.join("models").to_str().unwrap(),
        "--rust",
        krate.to_str().unwrap(),
        "--check",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

fn assert_bad_input(model_text: &str, want: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("bad.model.json");
    std::fs::write(&model, model_text).unwrap();
    let out = dir.path().join("out");
    let o = run(&[
        model.to_str().unwrap(),
        "--rust",
        out.join("crate").to_str().unwrap(),
        "--python",
        out.join("py").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.starts_with("error: "), "{err}");
    for w in want {
        assert!(err.contains(w), "expected {w:?} in:\n{err}");
    }
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.len() < 1500, "a message of {} bytes:\n{err}", err.len());
    assert!(!out.exists(), "nothing may be written on bad input");
}

#[test]
fn bad_models_are_errors_with_exit_2_and_no_output() {
    let text = std::fs::read_to_string(fixture()).unwrap();
    assert_bad_input(
        &text.replacen("\"schema_version\": 1", "\"schema_version\": 2", 1),
        &[
            "bad.model.json",
            "schema_version 2 is not supported",
            "version 1",
        ],
    );
    // A missing field: serde names it, with the line.
    let no_threshold: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("\"threshold\""))
        .collect::<Vec<_>>()
        .join("\n");
    assert_bad_input(
        &no_threshold,
        &["bad.model.json", "missing field `threshold`", "line"],
    );
    assert_bad_input(
        "{\"schema_version\": 1,",
        &["bad.model.json", "EOF while parsing", "line 1"],
    );
    assert_bad_input("[]", &["missing field `schema_version`"]);
    for (name, why) in [
        ("pad_mm", "capital"),
        ("Pad-MM", "contains `-`"),
        ("Self", "already uses"),
        ("Context", "already uses"),
        ("Type", "reserved"),
        ("", "empty"),
    ] {
        assert_bad_input(
            &text.replace("\"CodegenSelfTest\"", &format!("\"{name}\"")),
            &["heuristic name", why],
        );
    }
    // An inconsistent tree.
    assert_bad_input(
        &text.replacen("\"left\": 1", "\"left\": 99", 1),
        &["model `CodegenSelfTest` is invalid", "child 99"],
    );
    // A default choice that is not a choice.
    assert_bad_input(
        &text.replacen(
            "\"default_choice\": \"orig\"",
            "\"default_choice\": \"gone\"",
            1,
        ),
        &["default choice \"gone\" is not among the choices"],
    );
    // An operation that does not parse.
    assert_bad_input(&text.replace("\"m * k\"", "\"m *\""), &["operation `m*k`"]);
    // Issue 28: operations deep or long enough to overflow the stack (5,000 parentheses, a
    // flat sum of 10,000 terms, 200 nested `if`s), duplicate choices, probabilities outside
    // [0, 1]: refused with the file, the line and the JSON path.
    for expr in [
        format!("{}m{}", "(".repeat(5000), ")".repeat(5000)),
        format!("m{}", " + m".repeat(10_000)),
        format!("{}1{}", "if(m > 1, ".repeat(200), ", 0)".repeat(200)),
    ] {
        assert_bad_input(
            &text.replace("\"m * k\"", &format!("{expr:?}")),
            &[
                "bad.model.json:",
                "at `operations[0].expr`",
                "nests deeper than 100",
            ],
        );
    }
    assert_bad_input(
        &text.replacen("\"pad\"\n  ]", "\"orig\"\n  ]", 1),
        &["bad.model.json:15: ", "at `choices[1]`", "listed twice"],
    );
    assert_bad_input(
        &text.replacen("0.9615384615384616", "-0.9615384615384616", 1),
        &["bad.model.json:", "must lie in [0, 1]"],
    );
}

#[test]
fn unwritable_output_is_an_error_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not_a_folder");
    std::fs::write(&blocker, "a file").unwrap();
    let krate = new_crate(dir.path());
    // The Rust crate is fine, the Python folder cannot be created: nothing at all is written.
    let o = run(&[
        fixture().to_str().unwrap(),
        "--rust",
        krate.to_str().unwrap(),
        "--python",
        blocker.join("py").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not_a_folder"), "{}", stderr(&o));
    assert!(
        !krate.join("src/codegen_self_test.rs").exists(),
        "no partial output"
    );
    let leftovers: Vec<_> = tree(dir.path()).into_iter().map(|(p, _)| p).collect();
    assert_eq!(
        leftovers,
        [
            PathBuf::from("crate/Cargo.toml"),
            PathBuf::from("not_a_folder")
        ],
        "no temporary files left"
    );
}

#[test]
fn missing_model_file_is_an_error() {
    let o = run(&["/nonexistent/x.model.json", "--check"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("/nonexistent/x.model.json"),
        "{}",
        stderr(&o)
    );
}

/// Issue 28: an I/O error of ah-codegen says what to do on a `hint:` line, as every tool's
/// does (`ah_core::error::io_text`), and names its cause once.
#[test]
fn io_errors_end_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("gone.model.json");
    let o = run(&[missing.to_str().unwrap(), "--check"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("gone.model.json: "), "{err}");
    assert!(
        err.ends_with("\nhint: check the path: the file, or a folder on the way, does not exist\n"),
        "{err}"
    );
    assert_eq!(err.matches("No such file").count(), 1, "{err}");
    // The Rust crate's folder a file where a folder must be: the write fails with a hint.
    let krate = new_crate(dir.path());
    std::fs::write(krate.join("src"), "a file").unwrap();
    let o = run(&[
        fixture().to_str().unwrap(),
        "--rust",
        krate.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("\nhint: "), "{err}");
    assert_eq!(
        std::fs::read_to_string(krate.join("src")).unwrap(),
        "a file"
    );
}

/// Snapshots of the self-test model's Python artifact, Graphviz file and Rust module, under
/// `tests/snapshots/`. After a reviewed change, `cargo insta review` (or
/// `INSTA_UPDATE=always cargo test -p ah-codegen --test cli`) updates them.
#[test]
fn generated_files_match_their_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let o = generate_all(dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    for (got, name) in [
        ("py/_CodegenSelfTest.py", "python_artifact"),
        ("tree.dot", "graphviz"),
        ("crate/src/codegen_self_test.rs", "rust_module"),
    ] {
        let got = std::fs::read_to_string(dir.path().join(got)).unwrap();
        // insta compares without trailing whitespace: pin the final newline here.
        assert!(
            got.ends_with("\n") && !got.ends_with("\n\n"),
            "{name}: not one final newline"
        );
        insta::assert_snapshot!(name, got);
    }
}

/// The headers' regenerate command names the crate by its path in its Cargo workspace (with
/// `--rust` unless it is the default crate), whatever the working directory and spelling.
#[test]
fn headers_name_the_crate_path_in_its_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("Cargo.toml"), "[workspace]\nresolver = \"2\"\n").unwrap();
    let generate = |krate: &Path, cwd: &Path, spelled: &Path| {
        std::fs::create_dir_all(krate).unwrap();
        std::fs::write(krate.join("Cargo.toml"), "[package]\nname = \"h\"\n").unwrap();
        let o = bin()
            .current_dir(cwd)
            .arg(fixture())
            .arg("--rust")
            .arg(spelled)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let module = std::fs::read_to_string(krate.join("src/codegen_self_test.rs")).unwrap();
        let lib = std::fs::read_to_string(krate.join("src/lib.rs")).unwrap();
        (module, lib)
    };
    let fixtures = ws.join("gen/fixtures");
    let (module, lib) = generate(&fixtures, dir.path(), &fixtures);
    assert!(
        module.lines().nth(1)
            == Some("//! Regenerate: ah-codegen gen/fixtures/models/CodegenSelfTest.model.json --rust gen/fixtures"),
        "{module}"
    );
    assert!(
        lib.contains("regenerate with `ah-codegen gen/fixtures/models/ --rust gen/fixtures`"),
        "{lib}"
    );
    // Relative, from inside the workspace, with a trailing separator: the same bytes.
    let again = generate(&fixtures, &ws.join("gen"), Path::new("./fixtures/"));
    assert_eq!(again, (module, lib));
    // A stale file: the suggested command writes into the crate that was checked.
    let edited = format!("{}// hand edit\n", again.0);
    std::fs::write(fixtures.join("src/codegen_self_test.rs"), edited).unwrap();
    let o = bin()
        .current_dir(ws.join("gen"))
        .arg(fixture())
        .args(["--rust", "./fixtures/", "--check"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("selftest.model.json --rust ./fixtures/` to regenerate"),
        "{}",
        stderr(&o)
    );
    // The default crate's path needs no `--rust`.
    let default = ws.join("generated/ah-heuristics");
    let (module, lib) = generate(&default, &ws, Path::new("generated/ah-heuristics"));
    assert!(
        module.lines().nth(1)
            == Some("//! Regenerate: ah-codegen generated/ah-heuristics/models/CodegenSelfTest.model.json"),
        "{module}"
    );
    assert!(lib.contains("regenerate with `ah-codegen generated/ah-heuristics/models/`."));
}

/// A Python artifact named after a PyTorch hook (`mm`, `pad_mm`, `mixed_mm`) whose choices are
/// not that hook's is refused: exit 2, the model and the hook named, nothing written. The same
/// choices under a name of their own, and the Rust module alone, are fine.
#[test]
fn python_artifact_claiming_a_pytorch_hook_it_does_not_fit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let base: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    let choices = base["choices"].clone();
    for (name, new_choices) in [
        ("mm", serde_json::json!(["extern_mm", "lt2"])),
        ("pad_mm", serde_json::json!(["orig", "lt2"])),
        (
            "mixed_mm",
            serde_json::json!(["extern_fallback_mixed_mm", "lt2"]),
        ),
    ] {
        // Only the names change: the same number of choices keeps the tree's leaves valid.
        assert_eq!(choices.as_array().unwrap().len(), 2);
        let mut model = base.clone();
        model["name"] = serde_json::json!(name);
        model["choices"] = new_choices;
        model["default_choice"] = serde_json::Value::Null;
        let path = dir.path().join(format!("{name}.model.json"));
        std::fs::write(&path, serde_json::to_string_pretty(&model).unwrap()).unwrap();
        let py = dir.path().join(format!("py_{name}"));
        let o = run(&[
            path.to_str().unwrap(),
            "--no-rust",
            "--python",
            py.to_str().unwrap(),
        ]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains("model `CodegenSelfTest` decides `")
                && err.contains(&format!("PyTorch's `{name}` hook"))
                && err.contains("`lt2`"),
            "{name}: {err}"
        );
        assert!(!py.exists() || tree(&py).is_empty(), "{name}: wrote output");
        // The same model under a name of its own is written.
        model["name"] = serde_json::json!(format!("own_{name}"));
        std::fs::write(&path, serde_json::to_string_pretty(&model).unwrap()).unwrap();
        let o = run(&[
            path.to_str().unwrap(),
            "--no-rust",
            "--python",
            py.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
    }
    // PyTorch's own choice names under `mm` pass.
    let mut model = base.clone();
    model["name"] = serde_json::json!("mm");
    model["choices"] = serde_json::json!([
        "extern_mm",
        "type=triton_BLOCK-M=64_BLOCK-K=32_BLOCK-N=64_numstages=3_numwarps=4"
    ]);
    model["default_choice"] = serde_json::Value::Null;
    let path = dir.path().join("inductor.model.json");
    std::fs::write(&path, serde_json::to_string_pretty(&model).unwrap()).unwrap();
    let py = dir.path().join("py_inductor");
    let o = run(&[
        path.to_str().unwrap(),
        "--no-rust",
        "--python",
        py.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}
