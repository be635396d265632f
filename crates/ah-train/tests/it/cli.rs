//! The `ah-train` binary on real files in temporary folders: outputs, determinism, reports (its
//! refusals and warnings on bad input are in `cli_refusals`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub(crate) const MD: &str = r#"{"shared_memory": 232448, "device_capa": [9, 0], "name": "toy", "numerical_features": ["m", "k"], "categorical_features": ["dtype"]}"#;

pub(crate) fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ah-train"))
}

pub(crate) fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("runs")
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A toy log: `a` wins when m <= 50 (mostly), `b` otherwise; 3 repetitions each.
pub(crate) fn toy_log(dir: &Path, n: usize, seed: u64) -> PathBuf {
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

pub(crate) fn files_in(dir: &Path) -> Vec<String> {
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

/// A log like the reduction multi-kernel's: `a` wins when m <= 50 and `b` otherwise, but on
/// about one in eight inputs with m <= 50 `a` cannot run (`inf`, unrelated to the features)
/// and `b` wins.
pub(crate) fn log_with_inf_picks(dir: &Path, n: usize) -> PathBuf {
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
