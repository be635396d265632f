//! Integration tests of `ah-use`: replay agrees with `ah-train`'s metrics on the same rows, and a
//! CPU workload autotunes once and then hits the pick cache.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn ah_use() -> Command {
    ah_use_via(None)
}

/// `ah-use`, or `launcher ah-use` (e.g. `taskset -c 0`).
fn ah_use_via(launcher: Option<&[&str]>) -> Command {
    let mut c = match launcher {
        Some([program, args @ ..]) => {
            let mut c = Command::new(program);
            c.args(args).arg(env!("CARGO_BIN_EXE_ah-use"));
            c
        }
        _ => Command::new(env!("CARGO_BIN_EXE_ah-use")),
    };
    c.current_dir(repo());
    c.env_remove("AUTOHEURISTIC_USE")
        .env_remove("AUTOHEURISTIC_DISABLE_CACHE");
    c
}

/// The committed PadMMA100 model was trained on PyTorch's pad_mm_a100 log with --upstream: its
/// train + val + test metrics cover every input of that log, so replaying the log must give
/// their sums, and the generated code linked into ah-use must decide like the model.
#[test]
fn replay_agrees_with_training_metrics() {
    let log = repo().join("../shared/data/pytorch/pad_mm_a100.txt");
    if ah_test_support::skip_without(&log) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("replay.json");
    let out = ah_test_support::run_ok(
        ah_use()
            .args(["replay", "--heuristic", "PadMMA100"])
            .arg(&log)
            .arg("--json")
            .arg(&json),
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let model: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            repo().join("generated/ah-heuristics/models/PadMMA100.model.json"),
        )
        .unwrap(),
    )
    .unwrap();
    for key in [
        "correct",
        "wrong",
        "unsure",
        "total",
        "harmful_wrong",
        "non_default_predictions",
    ] {
        let sum: f64 = ["train", "val", "test"]
            .iter()
            .map(|s| model["metrics"][s][key].as_f64().unwrap())
            .sum();
        assert_eq!(report["metrics"][key].as_f64().unwrap(), sum, "{key}");
    }
    assert_eq!(report["generated_mismatches"], 0);
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"\S*/shared/data/pytorch/", "[DATA]/");
    settings.bind(|| {
        insta::assert_snapshot!("replay_pad_mm_a100", String::from_utf8_lossy(&out.stdout))
    });
}

#[test]
fn replay_refuses_a_log_of_another_optimization() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("mm.txt");
    std::fs::write(
        &log,
        "{\"shared_memory\": 0, \"device_capa\": [0, 0], \"name\": \"mm\", \"numerical_features\": [\"m\"], \"categorical_features\": []}\nm,choice,feedback\n1,a,1.0\n1,b,2.0\n",
    )
    .unwrap();
    let out = ah_use()
        .args(["replay", "--heuristic", "PadMMA100"])
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the log is for `mm` but the heuristic decides `pad_mm`"),
        "{err}"
    );
}

/// Replaying a heuristic on a log of another device works (the tree is evaluated) but warns:
/// at run time the heuristic's precondition would refuse that device.
#[test]
fn replay_on_a_log_of_another_device_warns() {
    let out = ah_use()
        .args(["replay", "--heuristic", "PadMMA100"])
        .arg(repo().join("data/pad_mm_h100_fresh.txt"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("collected on another device than the model's"),
        "{err}"
    );
}

/// On the CPU, a workload in use mode: inputs the heuristic is unsure of are benchmarked and
/// cached; the same workload again takes those picks from the cache, also when pinned to one
/// CPU with `taskset` (the CPU count is not part of the cache's guard).
///
/// The heuristic is a fixture (`tests/fixtures/PadMMCpuFixture.model.json`, a frozen copy of an
/// earlier PadMMCpu, through `--model`), not the shipped PadMMCpu: `make pipeline` users may
/// retrain and ship that one, and this test must not depend on where it is unsure.
#[test]
fn cpu_workload_autotunes_then_hits_the_cache() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/PadMMCpuFixture.model.json");
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("picks.json");
    let run_via = |json: &Path, launcher: Option<&[&str]>| {
        let out = ah_test_support::run_ok(
            ah_use_via(launcher)
                .env("AUTOHEURISTIC_USE", "pad_mm")
                .args([
                    "run",
                    "--name",
                    "pad_mm",
                    "--device",
                    "cpu",
                    "--num-samples",
                    "6",
                    "--seed",
                    "3",
                    "--max-dim",
                    "256",
                    "-q",
                ])
                .arg("--model")
                .arg(&fixture)
                .arg("--cache")
                .arg(&cache)
                .arg("--json")
                .arg(json),
        );
        // -q: no decisions and no summary (the report is in --json).
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
        v["summary"].clone()
    };
    let run = |json: &Path| run_via(json, None);
    let first = run(&dir.path().join("a.json"));
    let second = run(&dir.path().join("b.json"));
    assert_eq!(first["inputs"], 6);
    let tuned = first["autotuned"].as_u64().unwrap();
    let decided = first["heuristic"].as_u64().unwrap();
    assert_eq!(tuned + decided, 6, "{first}");
    assert!(
        tuned > 0,
        "the fixture is unsure on some of these inputs: {first}"
    );
    assert!(
        decided > 0,
        "the fixture decides some of these inputs: {first}"
    );
    assert_eq!(second["cache_hits"].as_u64().unwrap(), tuned, "{second}");
    assert_eq!(second["autotuned"], 0, "{second}");
    assert!(cache.exists());
    if Command::new("taskset").arg("-V").output().is_err() {
        eprintln!("skipped the pinned run: no taskset");
        return;
    }
    let pinned = run_via(&dir.path().join("c.json"), Some(&["taskset", "-c", "0"]));
    assert_eq!(pinned["cache_hits"].as_u64().unwrap(), tuned, "{pinned}");
    assert_eq!(pinned["autotuned"], 0, "{pinned}");
}

/// `--cache` pointing at a file that is not a pick cache (here a model JSON): exit 2 before
/// measuring anything, naming the file and what to do; the file is left as it was.
#[test]
fn run_refuses_a_cache_that_is_not_a_pick_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("PadMMA100.model.json");
    std::fs::copy(
        repo().join("generated/ah-heuristics/models/PadMMA100.model.json"),
        &cache,
    )
    .unwrap();
    let before = std::fs::read(&cache).unwrap();
    let out = ah_use()
        .args(["run", "--device", "cpu", "--num-samples", "2", "-q"])
        .arg("--cache")
        .arg(&cache)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}: not a pick cache", cache.display())),
        "{err}"
    );
    assert!(err.contains("pass another cache file (--cache"), "{err}");
    assert_eq!(std::fs::read(&cache).unwrap(), before);
}

/// `--cache` naming a FIFO (whose open would block until a writer comes) or a folder: exit 2
/// at once, naming it, as every tool refuses a path that is not a regular file.
#[cfg(unix)]
#[test]
fn run_refuses_a_cache_that_is_not_a_regular_file_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("cache.fifo");
    if ah_test_support::skip_without_fifo(&fifo) {
        return;
    }
    for (cache, want) in [
        (fifo.as_path(), "a FIFO (named pipe), not a regular file"),
        (dir.path(), "a folder, not a regular file"),
    ] {
        let child = ah_use()
            .args(["run", "--device", "cpu", "--num-samples", "2", "-q"])
            .arg("--cache")
            .arg(cache)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let out = ah_test_support::wait_at_most(
            child,
            std::time::Duration::from_secs(30),
            &format!("--cache {cache:?}"),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "{err}");
    }
}

/// A model trained with `--inf-unavailable` (recorded as `training.extra.inf_unavailable`):
/// replaying its own training log counts a pick of a choice timed `inf` as unsure, as the
/// trainer did, so the replay gives the sums of the trainer's train + val + test metrics.
/// Without the setting the same picks would be wrong.
///
/// The model is `tests/fixtures/ToyInf.model.json`, trained by `ah-train` on the log of
/// [`toy_inf_training_log`] (ah-use does not depend on the trainer): `ah-train inf.txt
/// --heuristic-name ToyInf --default-choice b --autotune-cost 0.1 --max-harmful 0.02
/// --inf-unavailable --no-codegen`.
#[test]
fn replay_of_an_inf_unavailable_model_agrees_with_training_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let log = toy_inf_training_log(dir.path());
    let model = ah_core::Model::load(&toy_inf_model()).unwrap();
    assert_eq!(model.training.extra["inf_unavailable"], true);
    let replay = |model: &ah_core::model::Model, name: &str| {
        let path = dir.path().join(format!("{name}.model.json"));
        std::fs::write(&path, serde_json::to_string_pretty(model).unwrap()).unwrap();
        let json = dir.path().join(format!("{name}.replay.json"));
        let out = ah_test_support::run_ok(
            ah_use()
                .arg("replay")
                .arg("--model")
                .arg(&path)
                .arg(&log)
                .arg("--json")
                .arg(&json),
        );
        // The report on stdout, its temporary folder replaced.
        let mut settings = insta::Settings::clone_current();
        settings.add_filter(r"\S*/\.tmp[0-9A-Za-z]{6}", "[TMP]");
        settings.bind(|| {
            insta::assert_snapshot!(
                format!("replay_toy_inf_{name}"),
                String::from_utf8_lossy(&out.stdout)
            )
        });
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        v["metrics"].clone()
    };
    let got = replay(&model, "on");
    // -q: no report on stdout, the same JSON.
    let quiet_json = dir.path().join("quiet.replay.json");
    let out = ah_test_support::run_ok(
        ah_use()
            .args(["replay", "-q", "--model"])
            .arg(dir.path().join("on.model.json"))
            .arg(&log)
            .arg("--json")
            .arg(&quiet_json),
    );
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        std::fs::read(&quiet_json).unwrap(),
        std::fs::read(dir.path().join("on.replay.json")).unwrap()
    );
    for key in [
        "correct",
        "wrong",
        "unsure",
        "total",
        "harmful_wrong",
        "non_default_predictions",
    ] {
        let sum: f64 = ["train", "val", "test"]
            .iter()
            .map(|s| model.metrics[*s][key])
            .sum();
        assert_eq!(got[key].as_f64().unwrap(), sum, "{key}");
    }
    // The same tree read with PyTorch's semantics: the picks of a failed `a` become wrong.
    let mut plain = model.clone();
    plain.training.extra.remove("inf_unavailable");
    let old = replay(&plain, "off");
    assert!(
        old["wrong"].as_f64().unwrap() > got["wrong"].as_f64().unwrap(),
        "{old} vs {got}"
    );
    assert_eq!(old["regret"].as_f64().unwrap(), f64::MAX);
}

/// The log `ToyInf` was trained on: `a` wins when m <= 50, `b` otherwise; on about one in
/// eight inputs with m <= 50 `a` cannot run (`inf`, unrelated to the features) and `b` wins.
fn toy_inf_training_log(dir: &Path) -> PathBuf {
    let mut s = String::from(
        "{\"shared_memory\": 0, \"device_capa\": [9, 0], \"name\": \"toy_inf\", \"numerical_features\": [\"m\", \"k\"], \"categorical_features\": []}\nm,k,choice,feedback\n",
    );
    let mut x = 11u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..600 {
        let m = next() % 100 + 1;
        let k = (next() % 64) * 16 + i % 7;
        let failed = next() % 8 == 0;
        let (ta, tb) = match (m > 50, failed) {
            (true, _) => ("1.4", "1.0"),
            (false, true) => ("inf", "1.3"),
            (false, false) => ("1.0", "1.3"),
        };
        s.push_str(&format!("{m},{k},a,{ta}\n{m},{k},b,{tb}\n"));
    }
    let log = dir.join("inf.txt");
    std::fs::write(&log, s).unwrap();
    log
}

/// A `toy_inf` log for the `ToyInf` fixture model (numeric `m`, `k`; choices `a`, `b`; trained
/// on `m` in 2..=100): some inputs outside the training range (`m` 0, 1 and above 100), and
/// `a` failing (`inf`) on some small `m`, which the model's `--inf-unavailable` makes unsure.
fn toy_inf_replay_log(dir: &Path) -> PathBuf {
    let mut s = String::from(
        "{\"shared_memory\": 0, \"device_capa\": [9, 0], \"name\": \"toy_inf\", \"numerical_features\": [\"m\", \"k\"], \"categorical_features\": []}\nm,k,choice,feedback\n",
    );
    for i in 0..120u64 {
        let m = (i * 7) % 130;
        let k = (i * 37) % 1000;
        let (ta, tb) = match (m > 50, i % 5 == 0) {
            (true, _) => ("1.4", "1.0"),
            (false, true) => ("inf", "1.3"),
            (false, false) => ("1.0", "1.3"),
        };
        s.push_str(&format!("{m},{k},a,{ta}\n{m},{k},b,{tb}\n"));
    }
    let log = dir.join("toy.txt");
    std::fs::write(&log, s).unwrap();
    log
}

fn toy_inf_model() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ToyInf.model.json")
}

/// `--decisions`: one CSV row per input of the report, a row without a pick exactly for each
/// unsure input, the runtime's reason for each; the report and the JSON are as without it.
#[test]
fn replay_decisions_csv_matches_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let log = toy_inf_replay_log(dir.path());
    let replay = |extra: &[&Path]| {
        let json = dir.path().join(format!("r{}.json", extra.len()));
        let mut c = ah_use();
        c.arg("replay")
            .arg("--model")
            .arg(toy_inf_model())
            .arg(&log);
        c.arg("--json").arg(&json);
        if let [csv] = extra {
            c.arg("--decisions").arg(csv);
        }
        let out = ah_test_support::run_ok(&mut c);
        (out.stdout, std::fs::read(&json).unwrap())
    };
    let csv_path = dir.path().join("out/decisions.csv");
    let (stdout, json) = replay(&[&csv_path]);
    assert_eq!((stdout.clone(), json.clone()), replay(&[]));
    let report: serde_json::Value = serde_json::from_slice(&json).unwrap();

    let mut reader = csv::Reader::from_path(&csv_path).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header.join(","),
        "m,k,best,a_ms,b_ms,decision,unsure_reason,loss,leaf"
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len() as u64, report["inputs"].as_u64().unwrap());
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (decision, reason, loss) = (col("decision"), col("unsure_reason"), col("loss"));
    let unsure = rows.iter().filter(|r| r[decision].is_empty()).count();
    assert_eq!(unsure as f64, report["metrics"]["unsure"].as_f64().unwrap());
    let count = |tag: &str| rows.iter().filter(|r| &r[reason] == tag).count();
    // Both kinds this log was made for are there, and the guard's count is the report's.
    assert!(count("out_of_range") > 0 && count("not_in_choices") > 0);
    assert_eq!(
        count("out_of_range") as u64,
        report["out_of_range"].as_u64().unwrap()
    );
    let wrong = rows
        .iter()
        .filter(|r| !r[decision].is_empty() && r[decision] != r[col("best")])
        .count();
    assert_eq!(wrong as f64, report["metrics"]["wrong"].as_f64().unwrap());
    for r in &rows {
        // A reason exactly when there is no pick; a loss (>= 1) exactly when there is one.
        assert_eq!(r[decision].is_empty(), !r[reason].is_empty(), "{r:?}");
        assert_eq!(r[decision].is_empty(), r[loss].is_empty(), "{r:?}");
        if !r[loss].is_empty() {
            assert!(r[loss].parse::<f64>().unwrap() >= 1.0, "{r:?}");
        }
    }
}

/// `--decisions` where no file can be written: a clear error, exit code 2, and nothing left
/// behind (not even the `--json` report of the same run).
#[test]
fn replay_decisions_to_an_unwritable_path_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let log = toy_inf_replay_log(dir.path());
    let listing = || {
        let mut v: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let before = listing();
    let json = dir.path().join("r.json");
    // The error names the folder, or the file that stands where a folder is needed.
    for (target, message, named) in [
        (folder.clone(), "--decisions", &folder),
        (
            file.join("d.csv"),
            "cannot write the replay's output",
            &file,
        ),
    ] {
        let out = ah_use()
            .arg("replay")
            .arg("--model")
            .arg(toy_inf_model())
            .arg(&log)
            .arg("--json")
            .arg(&json)
            .arg("--decisions")
            .arg(&target)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(message), "{err}");
        assert!(err.contains(&named.display().to_string()), "{err}");
        assert_eq!(listing(), before);
        assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
        assert_eq!(std::fs::read(&file).unwrap(), b"x");
    }
}

/// `--heuristic NAME` finds a shipped heuristic from any folder: the models are compiled into
/// ah-use. A typo lists the known names with a suggestion, exit 2; a missing file is named once.
#[test]
fn replay_by_name_works_from_any_folder_and_typos_are_helped() {
    let dir = tempfile::tempdir().unwrap();
    let log = repo().join("data/pad_mm_h100_fullrange_seed13.txt");
    ah_test_support::run_ok(
        ah_use()
            .current_dir(dir.path())
            .args(["replay", "--heuristic", "PadMMH100", "-q"])
            .arg(&log),
    );
    let out = ah_use()
        .current_dir(dir.path())
        .args(["replay", "--heuristic", "PadMMH1OO"])
        .arg(&log)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no heuristic called `PadMMH1OO`"), "{err}");
    assert!(err.contains("did you mean `PadMMH100`?"), "{err}");
    assert!(err.contains("known (compiled in): "), "{err}");
    // Each shipped name, whatever else a user ships beside them.
    for name in ["PadMMA100", "PadMMCpu", "PadMMH100"] {
        assert!(err.contains(name), "{name}: {err}");
    }
    // --models DIR: looked up there; a name that is not there lists what is.
    let out = ah_use()
        .current_dir(dir.path())
        .args(["replay", "--heuristic", "ToyInff", "--models"])
        .arg(repo().join("crates/ah-use/tests/fixtures"))
        .arg(&log)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("did you mean `ToyInf`?"), "{err}");
    // A model file that is not there: the OS error once, with the path and a hint.
    let out = ah_use()
        .current_dir(dir.path())
        .args(["replay", "--model", "Nope.model.json"])
        .arg(&log)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.starts_with("error: Nope.model.json: "), "{err}");
    assert_eq!(err.matches("os error").count(), 1, "{err}");
    assert!(err.contains("hint: "), "{err}");
}

/// A runner that cannot run on this machine's backend (cublaslt_mm needs CUDA): exit 2 with the reason,
/// not "0 inputs, 2 skipped".
#[test]
fn run_of_a_gpu_runner_on_the_cpu_says_why() {
    for name in ["cublaslt_mm", "reduction"] {
        let out = ah_use()
            .args([
                "run",
                "--name",
                name,
                "--device",
                "cpu",
                "--num-samples",
                "2",
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        // A build with CUDA knows the runner and refuses the backend; one without (`cargo
        // test -p ah-use` alone) says it needs CUDA.
        assert!(
            err.contains("does not run on the cpu backend")
                || err.contains("runs on a CUDA GPU only, and this ah-use was built without CUDA"),
            "{name}: {err}"
        );
        assert!(out.stdout.is_empty(), "{name}");
    }
}

/// `--max-dim` with a runner it does not scale is refused with the reason (exit 2), not
/// silently dropped.
#[test]
fn run_refuses_a_max_dim_the_runner_ignores() {
    let out = ah_use()
        .args([
            "run",
            "--name",
            "inductor_mm",
            "--device",
            "cpu",
            "--max-dim",
            "64",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--max-dim scales the shapes of pad_mm and cublaslt_mm only"),
        "{err}"
    );
}

/// Issue 28: hand-edited or hostile models (an operation 5,000 parentheses deep or a flat sum
/// of 10,000 terms, which overflowed the stack; duplicate choices, duplicate features, leaf
/// probabilities outside [0, 1]) are refused before replay: exit 2, the file and the line,
/// a short message, nothing written.
#[test]
fn replay_refuses_hostile_models_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = toy_inf_replay_log(dir.path());
    let base: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(toy_inf_model()).unwrap()).unwrap();
    let op = |expr: String| {
        move |m: &mut serde_json::Value| {
            m["operations"]
                .as_array_mut()
                .unwrap()
                .push(serde_json::json!({"name": "deep", "expr": expr, "categorical": false}));
        }
    };
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let edits: Vec<(&str, Edit)> = vec![
        (
            "nests deeper than 100",
            Box::new(op(format!("{}m{}", "(".repeat(5000), ")".repeat(5000)))),
        ),
        (
            "nests deeper than 100",
            Box::new(op(format!("m{}", " + m".repeat(10_000)))),
        ),
        (
            "is listed twice",
            Box::new(|m| m["choices"][1] = m["choices"][0].clone()),
        ),
        (
            "is listed twice",
            Box::new(|m| m["numerical_features"][1] = "m".into()),
        ),
        (
            "must lie in [0, 1]",
            Box::new(|m| {
                let leaf = m["tree"]["nodes"]
                    .as_array_mut()
                    .unwrap()
                    .iter_mut()
                    .find(|n| n["type"] == "leaf")
                    .unwrap();
                leaf["value"] = serde_json::json!([-0.5, 1.5]);
            }),
        ),
    ];
    for (i, (why, edit)) in edits.into_iter().enumerate() {
        let mut model = base.clone();
        edit(&mut model);
        let path = dir.path().join(format!("hostile{i}.model.json"));
        std::fs::write(&path, serde_json::to_string_pretty(&model).unwrap()).unwrap();
        let json = dir.path().join(format!("hostile{i}.json"));
        let out = ah_use()
            .args(["replay", "--model"])
            .arg(&path)
            .arg(&log)
            .arg("--json")
            .arg(&json)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        let located = format!("{}:", path.display());
        assert!(stderr.contains(&located), "{stderr}");
        let line: usize = stderr
            .split(&located)
            .nth(1)
            .and_then(|r| r.split(':').next())
            .and_then(|l| l.parse().ok())
            .unwrap_or_else(|| panic!("no line: {stderr}"));
        assert!(line > 1, "{stderr}");
        assert!(stderr.contains(why), "{stderr}");
        assert!(stderr.len() < 1200, "{stderr}");
        assert!(!json.exists(), "nothing written");
    }
}
