//! The regression variant (spec 7.4, PyTorch's `train_regression.py`): one row per (input,
//! choice) with the choice as a one-hot column, target = mean of the input's median times over
//! this choice's median (higher is better), a regression tree, and a decision by comparing the
//! predicted values of the choices.
//!
//! Steps: keep (input, choice) pairs measured at least 3 times with a relative standard
//! deviation of at most 5%, then inputs with two or more such choices; split inputs 60/20/20
//! (test 0.2, then validation 0.25 of the rest, scikit-learn's split); grid `max_depth [5, 6,
//! 7] x min_samples_leaf [1, 2, 5, 10]` of squared-error trees; per input the choice with the
//! highest prediction, `ratio = best / second`, unsure when `ratio <= threshold`; the threshold
//! is the largest ratio among wrong validation predictions; best = most correct on validation.
//! Exact ties between predicted values go to the later choice, as the runtime
//! ([`ah_core::heuristic::regression_decision`]) decides.

use std::collections::BTreeMap;

use ah_core::model::{self, Column, FeatureRange, Model, ModelKind, Tree};
use ah_core::ops::Operation;
use rayon::prelude::*;

use crate::cart::{CartParams, CartTree};
use crate::config::Grid;
use crate::dataset::dataset_hash;
use crate::error::{Result, TrainError};
use crate::guard::GuardPolicy;
use crate::learner::TrainMatrix;
use crate::train::output::{
    model_nodes, out_of_range, provenance, set_rows, split_sets, training_info,
};
use crate::train::prepare::{prepare, Prepared, Variant};
use crate::train::{GridRow, TrainOptions, TrainOutput};
use ah_eval::metrics::{self as eval, EvalSettings, Metrics, Outcome, RowAnswer};
use ah_eval::table::Table;

pub use crate::dataset::{MAX_REL_STD, MIN_COUNT};

/// The per-(input, choice) rows of one set.
struct Expanded {
    /// Row-major columns (input columns, then one-hot choice columns).
    x: Vec<f64>,
    n_cols: usize,
    target: Vec<f64>,
    /// Per input: (first row, choice table columns of its rows).
    inputs: Vec<(usize, Vec<usize>)>,
}

fn expand(t: &Table, choices: &[String]) -> Expanded {
    let k = choices.len();
    let n_cols = t.n_cols + k;
    let mut e = Expanded {
        x: Vec::new(),
        n_cols,
        target: Vec::new(),
        inputs: Vec::new(),
    };
    for i in 0..t.len() {
        let meds: Vec<(usize, f64)> = (0..t.choices.len())
            .filter_map(|c| Some((c, t.time(i, c))).filter(|(_, v)| !v.is_nan()))
            .collect();
        let mean = meds.iter().map(|(_, v)| v).sum::<f64>() / meds.len() as f64;
        let first = e.target.len();
        let mut cols = Vec::new();
        for (c, v) in meds {
            let Ok(ci) = choices.binary_search(&t.choices[c]) else {
                continue;
            };
            e.x.extend_from_slice(t.row(i));
            e.x.extend((0..k).map(|j| if j == ci { 1.0 } else { 0.0 }));
            e.target.push(mean / v);
            cols.push(c);
        }
        e.inputs.push((first, cols));
    }
    e
}

/// One input's regression decision.
struct Prediction {
    /// Table column of the choice predicted fastest (`None`: no measured choice).
    pick: Option<usize>,
    /// Predicted value of the best over the second best (infinite with one choice).
    ratio: f64,
    /// Table columns, best first.
    ranked: Vec<usize>,
}

/// Per input of `e`, its decision by `tree`.
fn predict(tree: &CartTree, e: &Expanded) -> Vec<Prediction> {
    e.inputs
        .iter()
        .map(|(first, cols)| {
            let mut scores: Vec<(f64, usize)> = cols
                .iter()
                .enumerate()
                .map(|(j, &c)| {
                    let r = first + j;
                    let row = &e.x[r * e.n_cols..(r + 1) * e.n_cols];
                    (tree.nodes[tree.apply(row)].value[0], c)
                })
                .collect();
            // Ascending and stable, as the runtime sorts: the last is the best.
            scores.sort_by(|a, b| a.0.total_cmp(&b.0));
            let ranked: Vec<usize> = scores.iter().rev().map(|s| s.1).collect();
            let (pick, ratio) = match scores.len() {
                0 => (None, 0.0),
                1 => (Some(scores[0].1), f64::INFINITY),
                n => (Some(scores[n - 1].1), scores[n - 1].0 / scores[n - 2].0),
            };
            Prediction {
                pick,
                ratio,
                ranked,
            }
        })
        .collect()
}

/// Metrics of one set's predictions at `threshold`; `forced[i]` (the range guard) makes row `i`
/// unsure.
fn evaluate(
    t: &Table,
    preds: &[Prediction],
    threshold: f64,
    forced: &[bool],
    s: &EvalSettings,
) -> Metrics {
    let answers: Vec<RowAnswer> = (0..t.len())
        .map(|i| {
            let p = &preds[i];
            let outcome = match p.pick {
                _ if forced.get(i).copied().unwrap_or(false) => Outcome::Unsure,
                None => Outcome::Unsure,
                Some(_) if p.ratio <= threshold => Outcome::Unsure,
                Some(c) if c == t.actual_winner[i] as usize => Outcome::Correct,
                Some(_) => Outcome::Wrong,
            };
            RowAnswer {
                outcome,
                pred_col: p.pick,
            }
        })
        .collect();
    eval::metrics_from(
        t,
        &answers,
        |i, sel| sel.extend(preds[i].ranked.iter().take(s.top_k)),
        s,
    )
}

/// One grid model of the regression variant.
struct RegressionFit {
    tree: CartTree,
    row: GridRow,
}

/// Trains the regression variant with PyTorch's rule. Preparation is the classification
/// trainer's ([`crate::train`]): `--split`, `--data`, the config's row filter and extra
/// training sets, `--default-choice` and the range guard (`--range-guard`, `--guard`) apply
/// alike; `--ranking` is refused.
pub fn train_regression(
    opts: &TrainOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<TrainOutput> {
    opts.check()?;
    let t0 = std::time::Instant::now();
    let (p, hash) = rayon::join(
        || prepare(opts, Variant::Regression),
        || dataset_hash(&opts.log),
    );
    let (p, hash) = (p?, hash?);
    let choices = p.choices.clone();
    let expanded: Vec<Expanded> = p.sets.iter().map(|(_, t)| expand(t, &choices)).collect();
    let es = EvalSettings {
        default_choice: p.settings.default_choice.clone(),
        top_k: 5,
        always_included: p.settings.always_included.clone(),
        exempt_certain: false,
        // `filter_log` drops every (input, choice) pair with a failed (`inf`) measurement: a
        // failed choice is never measured, so never picked, whatever the setting.
        inf_unavailable: false,
    };
    let t_prep = t0.elapsed().as_secs_f64();
    let results = fit_grid(opts, &p, &expanded, &es, progress);
    let t_grid = t0.elapsed().as_secs_f64();
    let mut best = None;
    let mut best_correct = 0;
    for (i, r) in results.iter().enumerate() {
        if r.row.metrics["val"].correct > best_correct {
            best = Some(i);
            best_correct = r.row.metrics["val"].correct;
        }
    }
    let Some(best) = best else {
        return Err(TrainError::NoModel(
            "no regression model predicts any validation input correctly".into(),
        ));
    };
    let RegressionFit { tree, row } = &results[best];
    let tested = tree
        .nodes
        .iter()
        .filter_map(|n| n.feature)
        .filter(|&c| c < p.encoding.columns.len());
    let ranges = opts.guard.ranges(&p.encoding, &p.sets[0].1, tested);
    let mut rows = BTreeMap::new();
    let mut sizes = BTreeMap::new();
    let mut metrics = BTreeMap::new();
    for (j, (name, t)) in p.sets.iter().enumerate() {
        let preds = predict(tree, &expanded[j]);
        let forced = if opts.range_guard {
            out_of_range(t, &ranges)
        } else {
            Vec::new()
        };
        let picks: Vec<Option<usize>> = (0..t.len())
            .map(|i| {
                preds[i].pick.filter(|_| {
                    preds[i].ratio > row.threshold && !forced.get(i).copied().unwrap_or(false)
                })
            })
            .collect();
        rows.insert(name.clone(), set_rows(t, &picks, &es));
        sizes.insert(name.clone(), t.len());
        metrics.insert(
            name.clone(),
            evaluate(t, &preds, row.threshold, &forced, &es),
        );
    }
    let model = build_model(opts, &p, tree, row, &ranges, &metrics, &hash);
    let t_end = t0.elapsed().as_secs_f64();
    Ok(TrainOutput {
        metrics,
        model,
        grid: results.iter().map(|r| r.row.clone()).collect(),
        best,
        warnings: p.warnings.clone(),
        rows,
        sizes,
        split_sets: split_sets(&p),
        timings: vec![
            ("prepare", t_prep),
            ("grid", t_grid - t_prep),
            ("final", t_end - t_grid),
        ],
    })
}

/// Fits and evaluates the regression grid; each model's threshold is the largest ratio among
/// its wrong validation predictions (at least 0.99).
fn fit_grid(
    opts: &TrainOptions,
    p: &Prepared,
    expanded: &[Expanded],
    es: &EvalSettings,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<RegressionFit> {
    let tr = &expanded[0];
    let n_rows = tr.target.len();
    let m = TrainMatrix::new(
        &tr.x[..],
        tr.n_cols,
        vec![0; n_rows],
        0,
        tr.target.clone(),
        vec![1.0; n_rows],
    );
    let grid = if opts.overrides.max_depth.is_some() || opts.overrides.min_samples_leaf.is_some() {
        Grid {
            criterion: vec![crate::cart::Criterion::SquaredError],
            ..p.settings.grid.clone()
        }
    } else {
        Grid::regression()
    };
    let configs = grid.configs();
    let params: Vec<CartParams> = configs.iter().map(|c| c.params(opts.seed)).collect();
    let trees = m.fit_many(opts.learner, &params);
    configs
        .par_iter()
        .zip(trees.into_par_iter())
        .map(|(&cfg, tree)| {
            let val = &p.sets[1].1;
            let mut thr = 0.99;
            for (i, pr) in predict(&tree, &expanded[1]).iter().enumerate() {
                if let Some(c) = pr.pick {
                    if c != val.actual_winner[i] as usize && pr.ratio.is_finite() && pr.ratio > thr
                    {
                        thr = pr.ratio;
                    }
                }
            }
            let mut metrics = BTreeMap::new();
            for (j, (name, t)) in p.sets.iter().enumerate() {
                let preds = predict(&tree, &expanded[j]);
                metrics.insert(name.clone(), evaluate(t, &preds, thr, &[], es));
            }
            progress(1);
            let row = GridRow {
                criterion: cfg.criterion,
                max_depth: cfg.max_depth,
                min_samples_leaf: cfg.min_samples_leaf,
                weighting: "uniform",
                threshold: thr,
                n_leaves: tree.n_leaves(),
                n_unsafe: 0,
                cv_cost: None,
                metrics,
            };
            RegressionFit { tree, row }
        })
        .collect()
}

/// The regression model: the input columns plus one one-hot column per choice.
fn build_model(
    opts: &TrainOptions,
    p: &Prepared,
    tree: &CartTree,
    row: &GridRow,
    ranges: &[(usize, FeatureRange)],
    metrics: &BTreeMap<String, Metrics>,
    hash: &str,
) -> Model {
    let choices = &p.choices;
    let mut columns = p.encoding.columns.clone();
    columns.extend(choices.iter().map(|c| Column::OneHot {
        feature: model::CHOICE_FEATURE.into(),
        value: c.clone(),
    }));
    let md = &p.log.metadata;
    let mut extra = BTreeMap::new();
    extra.insert("variant".into(), serde_json::json!("regression"));
    extra.insert(
        "pairs_dropped_by_filters".into(),
        serde_json::json!(p.pairs_dropped),
    );
    if opts.guard != GuardPolicy::BOX {
        // Only when set: models trained with the default stay byte-identical.
        extra.insert("guard".into(), serde_json::json!(opts.guard.to_string()));
    }
    Model {
        schema_version: model::MODEL_SCHEMA_VERSION,
        heuristic_name: opts.heuristic_name.clone(),
        name: md.name.clone(),
        kind: ModelKind::Regression,
        precondition: md.device(),
        choices: choices.clone(),
        default_choice: p.settings.default_choice.clone(),
        numerical_features: md.numerical_features.clone(),
        categorical_features: md.categorical_features.clone(),
        operations: p.settings.operations.iter().map(Operation::spec).collect(),
        columns,
        tree: Tree {
            nodes: model_nodes(tree, &vec![false; tree.nodes.len()]),
        },
        threshold: row.threshold,
        ranking: None,
        feature_ranges: ranges.iter().map(|(_, r)| r.clone()).collect(),
        range_guard: opts.range_guard,
        training: training_info("upstream_regression", opts, row, extra),
        metrics: eval::model_metrics(metrics),
        provenance: provenance(opts, hash),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Overrides;
    use crate::learner::Learner;
    use crate::train::{CostAwareParams, Mode};
    use ah_core::model::Decision;
    use ah_core::model::Node;
    use ah_core::Context;
    use ah_eval::table::{build_table, BuildOptions};
    use ah_log::Log;
    use std::path::PathBuf;

    /// A toy log (`a` wins for m <= 50, 3 consistent repetitions) in `dir`, and options
    /// training on it.
    fn toy(dir: &std::path::Path) -> TrainOptions {
        let path = dir.join("reg.txt");
        let mut s = String::from(
            "{\"shared_memory\": 0, \"device_capa\": [0, 0], \"name\": \"toy\", \"numerical_features\": [\"m\"], \"categorical_features\": [\"dtype\"]}\nm,dtype,choice,feedback\n",
        );
        let mut rs = crate::split::RandomState::new(3);
        for _ in 0..300 {
            let m = rs.next_u32() % 100 + 1;
            let dtype = if rs.next_u32() & 1 == 0 {
                "torch.float16"
            } else {
                "torch.bfloat16"
            };
            let (ta, tb) = if m <= 50 { (1.0, 1.3) } else { (1.3, 1.0) };
            for rep in 0..3 {
                let j = f64::from(rep) * 0.001;
                s.push_str(&format!(
                    "{m},{dtype},a,{}\n{m},{dtype},b,{}\n",
                    ta + j,
                    tb + j
                ));
            }
        }
        std::fs::write(&path, s).unwrap();
        TrainOptions {
            log: path,
            heuristic_name: "R".into(),
            data: vec![],
            learner: Learner::Cart,
            ranking: None,
            default_choice: None,
            seed: 42,
            split_file: None,
            mode: Mode::Upstream,
            cost: CostAwareParams::default(),
            overrides: Overrides::default(),
            config_dir: PathBuf::from("."),
            extra_operations: vec![],
            command: "test".into(),
            range_guard: false,
            inf_unavailable: false,
            guard: crate::guard::GuardPolicy::BOX,
            category_guard: Vec::new(),
        }
    }

    /// `Model::decide` on contexts built from the log equals the evaluation's decision
    /// (highest prediction, unsure when best / second <= threshold) for every input.
    #[test]
    fn model_decide_agrees_with_the_regression_evaluation() {
        let dir = tempfile::tempdir().unwrap();
        let opts = toy(dir.path());
        let path = opts.log.clone();
        let out = train_regression(&opts, &|_| {}).unwrap();
        let model = &out.model;
        let log = Log::read(&path, ah_log::ReadOptions::default()).unwrap();
        let (full, _, _) = build_table(&log, "all", &[], None, BuildOptions::default()).unwrap();
        let e = expand(&full, &model.choices);
        let tree = CartTree {
            nodes: model
                .tree
                .nodes
                .iter()
                .map(|n| match n {
                    Node::Split {
                        column,
                        threshold,
                        left,
                        right,
                    } => crate::cart::CartNode {
                        feature: Some(*column),
                        threshold: *threshold,
                        left: *left,
                        right: *right,
                        value: vec![],
                        n_samples: 0,
                        weighted_n_samples: 0.0,
                        counts: vec![],
                        impurity: 0.0,
                    },
                    Node::Leaf { value, .. } => crate::cart::CartNode {
                        feature: None,
                        threshold: 0.0,
                        left: 0,
                        right: 0,
                        value: value.clone(),
                        n_samples: 0,
                        weighted_n_samples: 0.0,
                        counts: vec![],
                        impurity: 0.0,
                    },
                })
                .collect(),
            n_features: e.n_cols,
        };
        let preds = predict(&tree, &e);
        let mut checked = 0;
        for (i, key) in full.keys.iter().enumerate() {
            let mut ctx = Context::new();
            ctx.add("m", key.get(0).unwrap().parse::<i64>().unwrap());
            ctx.add_categorical("dtype", key.get(1).unwrap());
            let want = match &preds[i] {
                Prediction {
                    pick: Some(c),
                    ratio,
                    ..
                } if *ratio > model.threshold => Some(
                    model
                        .choices
                        .iter()
                        .position(|x| *x == full.choices[*c])
                        .unwrap(),
                ),
                _ => None,
            };
            let got = match model.decide(&ctx) {
                Decision::Choice(c) => Some(c),
                Decision::Unsure(_) => None,
            };
            assert_eq!(got, want, "input {key:?}");
            checked += 1;
        }
        assert!(checked == full.len() && checked > 100, "{checked}");
    }

    /// With the range guard, inputs outside the training ranges are unsure at run time and in
    /// the final metrics alike.
    #[test]
    fn the_range_guard_makes_a_regression_model_unsure_outside_the_training_ranges() {
        let dir = tempfile::tempdir().unwrap();
        let opts = toy(dir.path());
        let model = train_regression(&opts, &|_| {}).unwrap().model;
        let guarded = TrainOptions {
            range_guard: true,
            ..opts
        };
        let out = train_regression(&guarded, &|_| {}).unwrap();
        assert!(out.model.range_guard && !out.model.feature_ranges.is_empty());
        for m in [0i64, 5000] {
            let mut ctx = Context::new();
            ctx.add("m", m);
            ctx.add_categorical("dtype", "torch.float16");
            assert!(
                matches!(
                    out.model.decide(&ctx),
                    Decision::Unsure(ah_core::UnsureReason::OutOfRange { .. })
                ),
                "m = {m}"
            );
        }
        let unguarded: f64 = ["train", "val", "test"]
            .iter()
            .map(|s| model.metrics[*s]["unsure"])
            .sum();
        let with_guard: f64 = ["train", "val", "test"]
            .iter()
            .map(|s| out.model.metrics[*s]["unsure"])
            .sum();
        assert!(with_guard >= unguarded, "{with_guard} < {unguarded}");
        // Training inputs lie inside the ranges: the guard leaves the training set alone.
        assert_eq!(
            out.model.metrics["train"], model.metrics["train"],
            "training set"
        );
    }
}
