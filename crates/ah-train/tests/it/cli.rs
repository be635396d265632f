//! The `ah-train` binary on real files in temporary folders: outputs, determinism, bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const MD: &str = r#"{"shared_memory": 232448, "device_capa": [9, 0], "name": "toy", "numerical_features": ["m", "k"], "categorical_features": ["dtype"]}"#;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ah-train"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A toy log: `a` wins when m <= 50 (mostly), `b` otherwise; 3 repetitions each.
fn toy_log(dir: &Path, n: usize, seed: u64) -> PathBuf {
    let mut s = format!("{MD}\nm,k,dtype,choice,feedback\n");
    let mut x = seed;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..n {
        let m = (next() % 100) as i64 + 1;
        let k = (next() % 64) as i64 * 16 + i as i64 % 7;
        let dtype = if next() % 2 == 0 {
            "torch.float16"
        } else {
            "torch.bfloat16"
        };
        let noise = (next() % 10) == 0;
        let a_wins = (m <= 50) != noise;
        for _ in 0..3 {
            let jitter = (next() % 100) as f64 / 10000.0;
            // Noisy inputs are near ties (5%), the others clear (30-40%).
            let gap = if noise { 0.05 } else { 0.3 };
            let (ta, tb) = if a_wins {
                (1.0 + jitter, 1.0 + gap + jitter)
            } else {
                (1.1 + gap + jitter, 1.1 + jitter)
            };
            s.push_str(&format!("{m},{k},{dtype},a,{ta}\n{m},{k},{dtype},b,{tb}\n"));
        }
    }
    let p = dir.join("toy.txt");
    std::fs::write(&p, s).unwrap();
    p
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn trains_writes_every_output_and_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let log = toy_log(dir.path(), 400, 7);
    let out = dir.path().join("out");
    let args = [
        "--heuristic-name",
        "Toy",
        "--output-dir",
        out.to_str().unwrap(),
        "-q",
        log.to_str().unwrap(),
    ];
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in [
        "Toy.model.json",
        "Toy.metrics.json",
        "Toy.report.md",
        "Toy.dot",
        "Toy.speedup.svg",
        "Toy.regret.svg",
        "_Toy.py",
    ] {
        assert!(out.join(f).exists(), "{f} missing: {:?}", files_in(&out));
    }
    let metrics: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("Toy.metrics.json")).unwrap())
            .unwrap();
    for set in ["train", "val", "test"] {
        for k in ah_eval::metrics::UPSTREAM_METRICS
            .iter()
            .chain(ah_eval::metrics::EXTRA_METRICS.iter())
        {
            assert!(metrics[set][k].is_number(), "{set}.{k} missing");
        }
    }
    // The toy rule is learnable: most test inputs are decided and right.
    assert!(
        metrics["test"]["correct"].as_f64().unwrap() > 30.0,
        "{metrics}"
    );
    let first: Vec<Vec<u8>> = [
        "Toy.model.json",
        "Toy.metrics.json",
        "Toy.report.md",
        "Toy.dot",
    ]
    .iter()
    .map(|f| std::fs::read(out.join(f)).unwrap())
    .collect();
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let second: Vec<Vec<u8>> = [
        "Toy.model.json",
        "Toy.metrics.json",
        "Toy.report.md",
        "Toy.dot",
    ]
    .iter()
    .map(|f| std::fs::read(out.join(f)).unwrap())
    .collect();
    assert_eq!(first, second, "a second run must give identical files");
    assert!(!files_in(&out).iter().any(|f| f.ends_with(".tmp")));
}

#[test]
fn upstream_and_linfa_trees_and_split_files() {
    let dir = tempfile::tempdir().unwrap();
    let log = toy_log(dir.path(), 600, 11);
    let out = dir.path().join("out");
    let split = dir.path().join("split.json");
    // PyTorch's rule allows 1% wrong on validation: 0 of these 90 noisy inputs, which every
    // grid model gets wrong at least once: no model, a clean error.
    let o = run(&[
        log.to_str().unwrap(),
        "--heuristic-name",
        "Toy",
        "--output-dir",
        out.to_str().unwrap(),
        "-q",
        "--upstream",
        "--no-codegen",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "too many wrong predictions, so no heuristic was generated (upstream rule: at most 1% wrong on the 90 validation inputs, i.e. 0 mistakes;"
        ),
        "{}",
        stderr(&o)
    );
    assert!(files_in(&out).is_empty(), "{:?}", files_in(&out));
    let o = run(&[
        log.to_str().unwrap(),
        "--heuristic-name",
        "Toy",
        "--output-dir",
        out.to_str().unwrap(),
        "-q",
        "--no-codegen",
        "--write-split",
        split.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let m1 = std::fs::read(out.join("Toy.metrics.json")).unwrap();
    let o = run(&[
        log.to_str().unwrap(),
        "--heuristic-name",
        "Toy",
        "--output-dir",
        out.to_str().unwrap(),
        "-q",
        "--no-codegen",
        "--split",
        split.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(m1, std::fs::read(out.join("Toy.metrics.json")).unwrap());
    let o = run(&[
        log.to_str().unwrap(),
        "--heuristic-name",
        "Toy",
        "--output-dir",
        out.to_str().unwrap(),
        "-q",
        "--learner",
        "linfa-trees",
        "--no-codegen",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let model = std::fs::read_to_string(out.join("Toy.model.json")).unwrap();
    assert!(model.contains("\"learner\": \"linfa-trees\""));
}

#[test]
fn regression_variant_writes_a_regression_model() {
    let dir = tempfile::tempdir().unwrap();
    let log = toy_log(dir.path(), 300, 9);
    let out = dir.path().join("out");
    let o = run(&[
        log.to_str().unwrap(),
        "--heuristic-name",
        "ToyReg",
        "--output-dir",
        out.to_str().unwrap(),
        "-q",
        "--regression",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("ToyReg.model.json")).unwrap())
            .unwrap();
    assert_eq!(model["kind"], "regression");
    assert!(out.join("_ToyReg.py").exists());
}

/// `--regression` prepares its sets as the classification trainer does: it takes `--split`
/// (not its own 60/20/20 split), stores the range guard and its policy when asked (off by
/// default, as PyTorch's), checks `--data` names, and refuses `--ranking`.
#[test]
fn regression_honours_split_and_range_guard_and_refuses_ranking() {
    let dir = tempfile::tempdir().unwrap();
    let log = toy_log(dir.path(), 300, 9);
    let out = dir.path().join("out");
    let split = dir.path().join("split.json");
    let written = dir.path().join("written.json");
    let train = |extra: &[&str]| {
        let mut args = vec![
            log.to_str().unwrap(),
            "--heuristic-name",
            "ToyReg",
            "--output-dir",
            out.to_str().unwrap(),
            "-q",
            "--no-codegen",
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    let model = || -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(out.join("ToyReg.model.json")).unwrap())
            .unwrap()
    };
    // The default mode's split (15% test, 15% validation) differs from the regression's.
    let o = train(&["--write-split", split.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = train(&["--regression", "--write-split", written.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let own = std::fs::read_to_string(&written).unwrap();
    assert_ne!(own, std::fs::read_to_string(&split).unwrap());
    assert_eq!(model()["range_guard"], false);
    let o = train(&[
        "--regression",
        "--split",
        split.to_str().unwrap(),
        "--write-split",
        written.to_str().unwrap(),
        "--range-guard",
        "--guard",
        "tested",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&written).unwrap(),
        std::fs::read_to_string(&split).unwrap()
    );
    let sf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&split).unwrap()).unwrap();
    let m = model();
    assert_eq!(m["kind"], "regression");
    for set in ["train", "val", "test"] {
        assert_eq!(
            m["metrics"][set]["total"].as_f64().unwrap() as usize,
            sf[set].as_array().unwrap().len(),
            "{set}"
        );
    }
    assert_eq!(m["range_guard"], true);
    assert_eq!(m["training"]["extra"]["guard"], "tested");
    assert!(!m["feature_ranges"].as_array().unwrap().is_empty());
    let o = train(&["--regression", "--ranking", "2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("'--ranking <K>' cannot be used with '--regression'")
            || stderr(&o).contains("'--regression' cannot be used with '--ranking <K>'"),
        "{}",
        stderr(&o)
    );
    let o = train(&["--regression", "--data", "train", log.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--data set name `train` is reserved"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn ranking_reports_top_k_metrics() {
    let dir = tempfile::tempdir().unwrap();
    // Three choices; `c` is always within 1% of the best, so it is a near-best copy too.
    let mut s = format!("{MD}\nm,k,dtype,choice,feedback\n");
    for i in 0..200 {
        let m = i % 100 + 1;
        let (ta, tb) = if m <= 50 { (1.0, 1.5) } else { (1.5, 1.0) };
        s.push_str(&format!("{m},{i},torch.float16,a,{ta}\n{m},{i},torch.float16,b,{tb}\n{m},{i},torch.float16,c,1.005\n"));
    }
    let log = dir.path().join("rank.txt");
    std::fs::write(&log, s).unwrap();
    let out = dir.path().join("out");
    let o = run(&[
        log.to_str().unwrap(),
        "--heuristic-name",
        "Rank",
        "--output-dir",
        out.to_str().unwrap(),
        "-q",
        "--no-codegen",
        "--ranking",
        "2",
        "--upstream",
        "--config",
        dir.path().join("cfg.json").to_str().unwrap(),
    ]);
    // The config file is missing: a clear error first.
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cfg.json"), "{}", stderr(&o));
    std::fs::write(dir.path().join("cfg.json"), r#"{"allowed_wrong_pct": 1.0}"#).unwrap();
    let o = run(&[
        log.to_str().unwrap(),
        "--heuristic-name",
        "Rank",
        "--output-dir",
        out.to_str().unwrap(),
        "-q",
        "--no-codegen",
        "--ranking",
        "2",
        "--upstream",
        "--config",
        dir.path().join("cfg.json").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("Rank.metrics.json")).unwrap())
            .unwrap();
    // Every input's best is in its top 2 (its winner and `c`).
    assert_eq!(m["test"]["top_k_correct"], m["test"]["total"]);
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("Rank.model.json")).unwrap())
            .unwrap();
    assert_eq!(model["ranking"]["top_k"], 2);
}

/// Runs on a bad input; expects exit code 2, a message containing `needle`, and no outputs.
fn expect_error(log_text: &str, extra: &[&str], needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("bad.txt");
    std::fs::write(&log, log_text).unwrap();
    let out = dir.path().join("out");
    let mut args = vec![
        log.to_str().unwrap(),
        "--output-dir",
        out.to_str().unwrap(),
        "-q",
    ];
    // A test of the name gives its own (the flag may be given once).
    if !extra.contains(&"--heuristic-name") {
        args.extend_from_slice(&["--heuristic-name", "Bad"]);
    }
    args.extend_from_slice(extra);
    let o = run(&args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(needle), "expected `{needle}` in: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.len() < 2000, "a message of {} bytes", err.len());
    assert!(
        files_in(&out).is_empty(),
        "partial output: {:?}",
        files_in(&out)
    );
}

#[test]
fn bad_inputs_are_clear_errors_without_output() {
    expect_error("", &[], "the file is empty");
    expect_error(
        &format!("{MD}\nm,k,dtype,choice,feedback\n"),
        &[],
        "no data rows",
    );
    let one_choice: String = (0..50)
        .map(|i| format!("{i},16,torch.float16,a,1.0\n"))
        .collect();
    expect_error(
        &format!("{MD}\nm,k,dtype,choice,feedback\n{one_choice}"),
        &[],
        "two or more",
    );
    let dir = tempfile::tempdir().unwrap();
    let ops = dir.path().join("ops.txt");
    std::fs::write(&ops, "m_plus_q = m + q\n").unwrap();
    let text = std::fs::read_to_string(toy_log(dir.path(), 100, 3)).unwrap();
    expect_error(
        &text,
        &["--operations", ops.to_str().unwrap()],
        "unknown feature `q`",
    );
    // Issue 28: expressions deep or long enough to overflow the stack are refused by the
    // parser, with the file and line, a short message and no output.
    for (line, expr) in [
        (2, format!("{}m{}", "(".repeat(5000), ")".repeat(5000))),
        (2, format!("m{}", " + m".repeat(10_000))),
        (
            2,
            format!("{}1{}", "if(m > 1, ".repeat(200), ", 0)".repeat(200)),
        ),
    ] {
        std::fs::write(&ops, format!("ok = m + 1\ndeep = {expr}\n")).unwrap();
        let needle = format!("ops.txt:{line}: column ");
        expect_error(&text, &["--operations", ops.to_str().unwrap()], &needle);
        expect_error(
            &text,
            &["--operations", ops.to_str().unwrap()],
            "nests deeper than 100 levels",
        );
    }
    expect_error(&text, &["--default-choice", "zzz"], "default choice `zzz`");
    expect_error(
        &text,
        &["--heuristic-name", "bad name"],
        "--heuristic-name: ",
    );
    // docs/training.md: no `_` in a heuristic name.
    expect_error(&text, &["--heuristic-name", "Pad_MM"], "contains `_`");
    // Code generation off and a crate to generate into: say so rather than ignore the crate.
    expect_error(
        &text,
        &["--no-codegen", "--rust-crate", "generated/ah-heuristics"],
        "--no-codegen",
    );
    expect_error("not json\nm,choice,feedback\n", &[], "bad.txt:1");
    let nan_feature = format!("{MD}\nm,k,dtype,choice,feedback\nnan,16,torch.float16,a,1.0\nnan,16,torch.float16,b,2.0\n{}", text.lines().skip(2).collect::<Vec<_>>().join("\n"));
    expect_error(&nan_feature, &[], "trees need finite features");
    // The message names the line of the input's first row.
    expect_error(
        &nan_feature,
        &[],
        "bad.txt:3: numerical feature `m` is `nan`",
    );
    let overflow = format!(
        "{MD}\nm,k,dtype,choice,feedback\n{}\n9223372036854775807,16,torch.float16,a,1.0\n9223372036854775807,16,torch.float16,b,2.0\n",
        text.lines().skip(2).collect::<Vec<_>>().join("\n")
    );
    let line = overflow.lines().count() - 1;
    let mul = dir.path().join("mul.txt");
    std::fs::write(&mul, "mk = m * k\n").unwrap();
    expect_error(
        &overflow,
        &["--operations", mul.to_str().unwrap()],
        &format!("bad.txt:{line}: augment operation failed on input m=9223372036854775807"),
    );
}

#[test]
fn odd_data_gives_warnings_with_counts() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = std::fs::read_to_string(toy_log(dir.path(), 300, 5)).unwrap();
    text.push_str("7,16,torch.float16,a,nan\n7,16,torch.float16,a,nan\n");
    text.push_str("999,16,torch.float16,a,inf\n999,16,torch.float16,b,inf\n");
    let log = dir.path().join("odd.txt");
    std::fs::write(&log, text).unwrap();
    let out = dir.path().join("out");
    let o = run(&[
        log.to_str().unwrap(),
        "--heuristic-name",
        "Odd",
        "--output-dir",
        out.to_str().unwrap(),
        "-q",
        "--no-codegen",
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("2 rows with NaN feedback"), "{err}");
    assert!(
        err.contains("1 inputs where every choice failed (inf) dropped"),
        "{err}"
    );
    // `toy` has no known default choice: a warning names the one used.
    assert!(
        err.contains("no default choice is known for `toy`"),
        "{err}"
    );
    // --upstream keeps the all-inf input, as PyTorch does. With PyTorch's 1% of wrong
    // validation picks (0 of these 45 noisy inputs) no grid model qualifies.
    let upstream = |extra: &[&str]| {
        let mut args = vec![
            log.to_str().unwrap(),
            "--heuristic-name",
            "Odd",
            "--output-dir",
            out.to_str().unwrap(),
            "-q",
            "--no-codegen",
            "--upstream",
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    let o = upstream(&[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("at most 1% wrong on the 45 validation inputs, i.e. 0 mistakes"),
        "{err}"
    );
    // Allowing every pick to be wrong, a model is chosen; the JSON stays valid (no null).
    let cfg = dir.path().join("cfg.json");
    std::fs::write(&cfg, r#"{"allowed_wrong_pct": 1.0}"#).unwrap();
    let o = upstream(&["--config", cfg.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("kept as PyTorch keeps them"), "{err}");
    let text = std::fs::read_to_string(out.join("Odd.metrics.json")).unwrap();
    assert!(!text.contains("null"), "{text}");
    let model: ah_core::model::Model =
        serde_json::from_str(&std::fs::read_to_string(out.join("Odd.model.json")).unwrap())
            .unwrap();
    assert_eq!(model.metrics.len(), 3);
    assert_eq!(model.training.mode, "upstream");
}

#[test]
fn non_positive_times_and_data_of_another_device_are_warned_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let train = toy_log(dir.path(), 300, 5);
    let mut text = std::fs::read_to_string(&train).unwrap();
    let line = text.lines().count() + 1;
    text.push_str("7,16,torch.float16,a,-1.0\n7,16,torch.float16,b,0.0\n");
    std::fs::write(&train, &text).unwrap();
    let other = dir.path().join("a100.txt");
    let md_a100 = MD.replace(
        "\"shared_memory\": 232448, \"device_capa\": [9, 0]",
        "\"shared_memory\": 166912, \"device_capa\": [8, 0]",
    );
    std::fs::write(&other, text.replacen(MD, &md_a100, 1)).unwrap();
    let out = dir.path().join("out");
    let o = run(&[
        train.to_str().unwrap(),
        "--heuristic-name",
        "Toy",
        "--output-dir",
        out.to_str().unwrap(),
        "--data",
        "a100",
        other.to_str().unwrap(),
        "-q",
        "--no-codegen",
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("2 malformed lines skipped"), "{err}");
    assert!(
        err.contains(&format!("toy.txt:{line}: feedback `-1.0` is not a time")),
        "{err}"
    );
    assert!(
        err.contains("--data a100:")
            && err.contains("another device")
            && err.contains("shared_memory 232448 vs 166912"),
        "{err}"
    );
}

#[test]
fn one_winner_class_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = format!("{MD}\nm,k,dtype,choice,feedback\n");
    for i in 0..200 {
        s.push_str(&format!(
            "{i},16,torch.float16,a,1.0\n{i},16,torch.float16,b,2.0\n"
        ));
    }
    let log = dir.path().join("one.txt");
    std::fs::write(&log, s).unwrap();
    let out = dir.path().join("out");
    let o = run(&[
        log.to_str().unwrap(),
        "--heuristic-name",
        "One",
        "--output-dir",
        out.to_str().unwrap(),
        "-q",
        "--no-codegen",
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("same winner `a`"), "{err}");
}

/// A log like the reduction multi-kernel's: `a` wins when m <= 50 and `b` otherwise, but on
/// about one in eight inputs with m <= 50 `a` cannot run (`inf`, unrelated to the features)
/// and `b` wins.
fn log_with_inf_picks(dir: &Path, n: usize) -> PathBuf {
    let mut s = format!("{MD}\nm,k,dtype,choice,feedback\n");
    let mut x = 11u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..n {
        let m = (next() % 100) as i64 + 1;
        let k = (next() % 64) as i64 * 16 + i as i64 % 7;
        let failed = next() % 8 == 0;
        let (ta, tb) = if m > 50 {
            ("1.4".to_string(), "1.0")
        } else if failed {
            ("inf".to_string(), "1.3")
        } else {
            ("1.0".to_string(), "1.3")
        };
        s.push_str(&format!(
            "{m},{k},torch.float16,a,{ta}\n{m},{k},torch.float16,b,{tb}\n"
        ));
    }
    let p = dir.join("inf.txt");
    std::fs::write(&p, s).unwrap();
    p
}

#[test]
fn inf_unavailable_lets_the_cost_aware_rule_decide_past_failed_picks() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_with_inf_picks(dir.path(), 600);
    let train = |flag: &[&str]| {
        let out = dir.path().join(if flag.is_empty() { "off" } else { "on" });
        let mut args = vec![
            log.to_str().unwrap(),
            "--heuristic-name",
            "Inf",
            "--output-dir",
            out.to_str().unwrap(),
            "-q",
            "--no-codegen",
            "--default-choice",
            "b",
            "--autotune-cost",
            "0.1",
            "--max-harmful",
            "0.02",
        ];
        args.extend_from_slice(flag);
        let o = run(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let model: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("Inf.model.json")).unwrap())
                .unwrap();
        (model, stderr(&o))
    };
    let (off, off_err) = train(&[]);
    let (on, on_err) = train(&["--inf-unavailable"]);
    // Without the flag the trainer says why so much stays unsure, and what to do.
    assert!(
        off_err.contains("picked a choice timed `inf`") && off_err.contains("--inf-unavailable"),
        "{off_err}"
    );
    assert!(!on_err.contains("timed `inf`"), "{on_err}");
    // Recorded only when set (models trained without it keep their bytes).
    assert!(off["training"]["extra"].get("inf_unavailable").is_none());
    assert_eq!(on["training"]["extra"]["inf_unavailable"], true);
    let share =
        |m: &serde_json::Value, set: &str| m["metrics"][set]["decided_share"].as_f64().unwrap();
    // Without the flag an out-of-fold pick of a failed `a` is an infinite loss: no cut at or
    // below the `a` leaves' confidence is ever taken, so those inputs (about half) stay unsure.
    // With it, such a pick is an autotune, and the `a` leaves are decided too.
    for set in ["train", "test"] {
        assert!(share(&off, set) < 0.6, "{set}: {}", share(&off, set));
        assert!(share(&on, set) > 0.8, "{set}: {}", share(&on, set));
    }
    let test = &on["metrics"]["test"];
    assert_eq!(test["harmful_wrong"], 0.0);
    assert!(
        test["pct_of_oracle_autotune"].as_f64().unwrap() > 99.9,
        "{test}"
    );
}

/// Conflicts and value ranges are clap's (usage errors, exit 2, before the log is read); the
/// reasons for the conflicts are in `--help`.
#[test]
fn conflicting_flags_and_values_out_of_range_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(log_with_inf_picks(dir.path(), 100)).unwrap();
    for (extra, needle) in [
        (
            &["--inf-unavailable", "--upstream"][..],
            "'--inf-unavailable' cannot be used with '--upstream'",
        ),
        (
            &["--upstream", "--inf-unavailable"],
            "'--upstream' cannot be used with '--inf-unavailable'",
        ),
        (
            &["--inf-unavailable", "--regression"],
            "'--inf-unavailable' cannot be used with '--regression'",
        ),
        (&["--folds", "1"], "invalid value '1' for '--folds <FOLDS>'"),
        (
            &["--max-harmful", "1.5"],
            "'--max-harmful <MAX_HARMFUL>': give a number between 0 and 1",
        ),
        (
            &["--autotune-cost", "nan"],
            "'--autotune-cost <AUTOTUNE_COST>': give a number >= 0",
        ),
    ] {
        expect_error(&text, extra, needle);
    }
    let help = String::from_utf8_lossy(&run(&["--help"]).stdout).into_owned();
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("counts a pick timed inf as a failed, wrong pick"),
        "{help}"
    );
}

/// The guard policy chooses the stored ranges: `tested` keeps only the numeric columns the
/// tree splits on, a margin widens them in log space, and the model records the policy.
#[test]
fn guard_policies_choose_the_stored_ranges() {
    let dir = tempfile::tempdir().unwrap();
    // The toy log plus a constant numeric feature `z`, which no tree can split on.
    let toy = std::fs::read_to_string(toy_log(dir.path(), 400, 7)).unwrap();
    let mut lines = toy.lines();
    let md = lines
        .next()
        .unwrap()
        .replace(r#"["m", "k"]"#, r#"["m", "k", "z"]"#);
    assert!(md.contains(r#""z""#), "{md}");
    let mut text = format!("{md}\n");
    for line in lines {
        let (mk, rest) = line.split_at(line.match_indices(',').nth(1).unwrap().0);
        let z = if mk == "m,k" { "z" } else { "7" };
        text.push_str(&format!("{mk},{z}{rest}\n"));
    }
    let log = dir.path().join("toy_z.txt");
    std::fs::write(&log, text).unwrap();
    let model = |policy: &str| -> serde_json::Value {
        let out = dir.path().join(policy.replace(':', "_"));
        let o = run(&[
            "--heuristic-name",
            "Toy",
            "--output-dir",
            out.to_str().unwrap(),
            "--no-codegen",
            "-q",
            "--guard",
            policy,
            log.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{policy}: {}", stderr(&o));
        let text = std::fs::read_to_string(out.join("Toy.model.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    let boxed = model("box");
    assert!(
        boxed["training"]["extra"].get("guard").is_none(),
        "box stays byte-identical"
    );
    let tested = model("tested:2");
    assert_eq!(tested["training"]["extra"]["guard"], "tested:2");
    let columns = tested["columns"].as_array().unwrap();
    let split_names: std::collections::BTreeSet<&str> = tested["tree"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["type"] == "split")
        .filter_map(|n| n["column"].as_u64())
        .filter(|&c| columns[c as usize]["kind"] == "numeric")
        .filter_map(|c| columns[c as usize]["name"].as_str())
        .collect();
    let ranges = |m: &serde_json::Value| -> Vec<(String, f64, f64)> {
        m["feature_ranges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["name"].as_str().unwrap().to_string(),
                    r["min"].as_f64().unwrap(),
                    r["max"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let (all, guarded) = (ranges(&boxed), ranges(&tested));
    assert!(
        !guarded.is_empty() && guarded.len() < all.len(),
        "{guarded:?} of {all:?}"
    );
    for (name, lo, hi) in &guarded {
        assert!(
            split_names.contains(name.as_str()),
            "{name} is not tested: {split_names:?}"
        );
        let (_, blo, bhi) = all.iter().find(|(n, _, _)| n == name).unwrap();
        assert_eq!(*hi, bhi * 2.0, "{name}");
        assert!(*lo == blo / 2.0 || (*blo <= 0.0 && lo == blo), "{name}");
    }
    let o = run(&[
        "--guard",
        "tested:0.5",
        "--heuristic-name",
        "Toy",
        log.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("margin"), "{}", stderr(&o));
}

/// Every markdown table of the report has as many cells in each row as in its header (the grid
/// table once lacked its `weights` header, shifting every label after it by one column).
#[test]
fn report_tables_have_one_label_per_column() {
    let dir = tempfile::tempdir().unwrap();
    let log = toy_log(dir.path(), 400, 7);
    let out = dir.path().join("out");
    let o = run(&[
        "--heuristic-name",
        "Toy",
        "--output-dir",
        out.to_str().unwrap(),
        "--no-codegen",
        "-q",
        log.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report = std::fs::read_to_string(out.join("Toy.report.md")).unwrap();
    let mut header: Option<usize> = None;
    let mut tables = 0;
    for line in report.lines() {
        if !line.starts_with('|') {
            header = None;
            continue;
        }
        let cells = line.matches('|').count();
        match header {
            None => {
                header = Some(cells);
                tables += 1;
            }
            Some(h) => assert_eq!(cells, h, "row and header differ:\n{line}"),
        }
    }
    assert!(tables >= 2, "{report}");
}

/// Without `-q` the grid and metrics tables go to stdout and the written files to stderr; both
/// are deterministic (the temporary folder aside) and pinned by snapshots.
#[test]
fn tables_and_written_files_match_their_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let log = toy_log(dir.path(), 400, 7);
    let out = dir.path().join("out");
    let o = run(&[
        "--heuristic-name",
        "Toy",
        "--output-dir",
        out.to_str().unwrap(),
        "--no-codegen",
        log.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    insta::assert_snapshot!("tables", String::from_utf8_lossy(&o.stdout));
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"\S*/\.tmp[0-9A-Za-z]{6}", "[TMP]");
    settings.bind(|| insta::assert_snapshot!("written_files", stderr(&o)));
}

/// Our cuBLASLt runner's logs written before its rename carry PyTorch's name `mm`; they train
/// as `cublaslt_mm` (the model's name, hence its Python artifact does not claim PyTorch's `mm`
/// hook). PyTorch's own mm log (Inductor's choice names) still trains as `mm`, artifact included.
#[test]
fn former_mm_logs_train_as_cublaslt_mm_and_pytorch_mm_logs_as_mm() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    let name_of = |model: &Path| -> String {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(model).unwrap()).unwrap();
        v["name"].as_str().unwrap().to_string()
    };
    let ours = dir.path().join("ours");
    let o = run(&[
        repo.join("data/mm_h100_rank.txt").to_str().unwrap(),
        "--heuristic-name",
        "CublasLtRankingH100",
        "--ranking",
        "5",
        "--upstream",
        "--output-dir",
        ours.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        name_of(&ours.join("CublasLtRankingH100.model.json")),
        "cublaslt_mm"
    );
    assert!(ours.join("_CublasLtRankingH100.py").is_file());
    let pytorch = repo.join("../shared/data/pytorch/mm_a100_random.txt.gz");
    if ah_test_support::skip_without(&pytorch) {
        return;
    }
    let theirs = dir.path().join("theirs");
    let o = run(&[
        pytorch.to_str().unwrap(),
        "--heuristic-name",
        "MMA100",
        "--ranking",
        "10",
        "--upstream",
        "--output-dir",
        theirs.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(name_of(&theirs.join("MMA100.model.json")), "mm");
    assert!(theirs.join("_MMA100.py").is_file());
}
