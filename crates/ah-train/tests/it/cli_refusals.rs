//! The `ah-train` binary refusing bad input and warning about odd input: exit code 2 with a
//! message that names the file and line, or a warning with counts, and no half-written outputs.

use std::path::Path;
use std::process::Output;

use crate::cli::{files_in, log_with_inf_picks, run, stderr, toy_log, MD};

/// Trains `log` as `name` into `out`, quietly and without code generation, with `extra`
/// arguments after; the output and its stderr.
fn train_quietly(log: &Path, name: &str, out: &Path, extra: &[&str]) -> (Output, String) {
    let mut args = vec![
        log.to_str().unwrap(),
        "--heuristic-name",
        name,
        "--output-dir",
        out.to_str().unwrap(),
        "-q",
        "--no-codegen",
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    let err = stderr(&o);
    (o, err)
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
    let (o, err) = train_quietly(&log, "Odd", &out, &[]);
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
    let (o, err) = train_quietly(
        &train,
        "Toy",
        &out,
        &["--data", "a100", other.to_str().unwrap()],
    );
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
    let (o, err) = train_quietly(&log, "One", &out, &[]);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("same winner `a`"), "{err}");
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
