//! Upstream mode against the Python reference's anchors (every grid model's metrics on every
//! set). Skips with a message when `../shared` is absent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ah_train::config::Overrides;
use ah_train::learner::Learner;
use ah_train::train::{train, CostAwareParams, Mode, TrainOptions};

fn shared(rel: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared")
        .join(rel);
    (!ah_test_support::skip_without(&p)).then_some(p)
}

fn options(log: PathBuf, split: Option<PathBuf>) -> TrainOptions {
    TrainOptions {
        log,
        heuristic_name: "T".into(),
        data: vec![],
        learner: Learner::Cart,
        ranking: None,
        default_choice: None,
        seed: 42,
        split_file: split,
        mode: Mode::Upstream,
        cost: CostAwareParams::default(),
        overrides: Overrides::default(),
        config_dir: PathBuf::from("."),
        extra_operations: vec![],
        command: "test".into(),
        range_guard: false,
        inf_unavailable: false,
        guard: ah_train::guard::GuardPolicy::BOX,
        category_guard: Vec::new(),
    }
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// Compares every grid model's metrics; returns (models matching exactly, total, details).
fn compare(anchor: &Path, opts: &TrainOptions) -> (usize, usize, Vec<String>) {
    let a: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(anchor).unwrap()).unwrap();
    let out = train(opts, &|_| {}).unwrap();
    let mut by_model: BTreeMap<(String, u64, String), BTreeMap<String, serde_json::Value>> =
        BTreeMap::new();
    for row in a["grid"].as_array().unwrap() {
        let key = (
            row["crit"].as_str().unwrap().to_string(),
            row["max_depth"].as_u64().unwrap(),
            format!("{}", row["min_samples_leaf"]),
        );
        by_model
            .entry(key)
            .or_default()
            .insert(row["set"].as_str().unwrap().to_string(), row.clone());
    }
    let mut matching = 0;
    let mut diffs = Vec::new();
    for g in &out.grid {
        let key = (
            g.criterion.name().to_string(),
            g.max_depth.unwrap() as u64,
            g.min_samples_leaf.to_string(),
        );
        let sets = &by_model[&key];
        let mut ok = true;
        for (set, want) in sets {
            let got = &g.metrics[set];
            for k in ah_eval::metrics::UPSTREAM_METRICS {
                let w = want[k].as_f64().unwrap();
                if !close(got.get(k).unwrap(), w) {
                    ok = false;
                    diffs.push(format!(
                        "{key:?} {set} {k}: ours {} reference {w}",
                        got.get(k).unwrap()
                    ));
                }
            }
            let thr = want["safe_proba"].as_f64().unwrap();
            if !close(g.threshold, thr) {
                ok = false;
                diffs.push(format!(
                    "{key:?} threshold: ours {} reference {thr}",
                    g.threshold
                ));
            }
            if want["n_leaves"].as_u64().unwrap() as usize != g.n_leaves {
                ok = false;
                diffs.push(format!(
                    "{key:?} leaves: ours {} reference {}",
                    g.n_leaves, want["n_leaves"]
                ));
            }
        }
        if ok {
            matching += 1;
        }
    }
    (matching, out.grid.len(), diffs)
}

#[test]
fn pad_mm_a100_grid_matches_the_reference() {
    let (Some(log), Some(anchor)) = (
        shared("data/pytorch/pad_mm_a100.txt"),
        shared("reference/anchors/pad_mm_a100.json"),
    ) else {
        return;
    };
    let (matching, total, diffs) = compare(&anchor, &options(log, None));
    eprintln!("pad_mm_a100: {matching} of {total} grid models match the reference exactly");
    for d in diffs.iter().take(20) {
        eprintln!("  {d}");
    }
    assert_eq!(total, 36);
    assert_eq!(matching, 36, "differences: {diffs:#?}");
}

#[test]
fn pad_mm_a100_split_file_gives_the_same_sets() {
    let (Some(log), Some(split)) = (
        shared("data/pytorch/pad_mm_a100.txt"),
        shared("reference/anchors/pad_mm_a100.split.json"),
    ) else {
        return;
    };
    let ours = train(&options(log.clone(), None), &|_| {}).unwrap();
    let theirs: ah_train::split::SplitFile =
        serde_json::from_str(&std::fs::read_to_string(&split).unwrap()).unwrap();
    let ours_split = ours.split_file();
    assert_eq!(ours_split.train, theirs.train);
    assert_eq!(ours_split.val, theirs.val);
    assert_eq!(ours_split.test, theirs.test);
    let with_file = train(&options(log, Some(split)), &|_| {}).unwrap();
    assert_eq!(with_file.metrics, ours.metrics);
}

/// mixed_mm has 54 choices; on 8 inputs two choices share the best median time and numpy's
/// unstable `argsort(kind="quicksort")` (a SIMD sort on AVX-512 machines) labels 3 of them
/// with a later choice, where we take the first in name order. Those 3 labels change the
/// tree slightly; with the reference's argsort made stable every metric matches exactly
/// (docs/training.md). Here: same sets and sizes, correct counts within 2%.
#[test]
fn mixed_mm_a100_matches_the_reference_up_to_tied_winners() {
    let (Some(log), Some(anchor)) = (
        shared("data/pytorch/mixed_mm_a100.txt.gz"),
        shared("reference/anchors/mixed_mm_a100.json"),
    ) else {
        return;
    };
    let a: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&anchor).unwrap()).unwrap();
    let out = train(&options(log, None), &|_| {}).unwrap();
    assert_eq!(out.grid.len(), 1);
    for row in a["grid"].as_array().unwrap() {
        let set = row["set"].as_str().unwrap();
        let got = &out.grid[0].metrics[set];
        assert_eq!(got.total as f64, row["total"].as_f64().unwrap(), "{set}");
        let (c, w) = (got.correct as f64, row["correct"].as_f64().unwrap());
        assert!(
            (c - w).abs() <= 0.02 * w.max(50.0),
            "{set}: correct {c} vs {w}"
        );
    }
}

/// The regression variant on pad_mm_a100 finds the threshold of PyTorch's shipped
/// `_PadMMA100.py` (`get_confidence_threshold` returns 1.7025303314066).
#[test]
fn pad_mm_a100_regression_reproduces_the_shipped_threshold() {
    let Some(log) = shared("data/pytorch/pad_mm_a100.txt") else {
        return;
    };
    let out = ah_train::regression::train_regression(&options(log, None), &|_| {}).unwrap();
    assert_eq!(out.grid.len(), 12);
    assert!(
        (out.model.threshold - 1.7025303314066).abs() < 1e-12,
        "{}",
        out.model.threshold
    );
    assert_eq!(out.model.kind, ah_core::model::ModelKind::Regression);
}

/// Our extra metrics of the chosen model equal the reference's: `pct_of_oracle` is its
/// `pct_of_oracle_unsure_default`, `pct_of_oracle_autotune` its `pct_of_oracle_unsure_oracle`,
/// `regret` its `regret_pct_unsure_oracle / 100`.
#[test]
fn pad_mm_a100_extra_metrics_match_the_reference() {
    let (Some(log), Some(anchor)) = (
        shared("data/pytorch/pad_mm_a100.txt"),
        shared("reference/anchors/pad_mm_a100.json"),
    ) else {
        return;
    };
    let a: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&anchor).unwrap()).unwrap();
    let out = train(&options(log, None), &|_| {}).unwrap();
    for set in ["train", "val", "test"] {
        let r = &a["best"]["results"][set];
        let m = &out.metrics[set];
        let pairs = [
            (
                "oracle_gmean_speedup_over_default",
                r["oracle_gmean_speedup_over_default"].as_f64().unwrap(),
            ),
            (
                "pct_of_oracle",
                r["pct_of_oracle_unsure_default"].as_f64().unwrap(),
            ),
            (
                "pct_of_oracle_autotune",
                r["pct_of_oracle_unsure_oracle"].as_f64().unwrap(),
            ),
            (
                "regret",
                r["regret_pct_unsure_oracle"].as_f64().unwrap() / 100.0,
            ),
        ];
        for (k, want) in pairs {
            assert!(
                close(m.get(k).unwrap(), want),
                "{set}.{k}: ours {} reference {want}",
                m.get(k).unwrap()
            );
        }
    }
}
