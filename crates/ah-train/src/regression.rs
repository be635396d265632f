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

use std::collections::{BTreeMap, HashMap};

use ah_core::model::{
    self, Column, FeatureRange, Model, ModelKind, Node, Provenance, TrainingInfo, Tree,
};
use ah_core::ops::Operation;
use ah_core::Log;
use rayon::prelude::*;

use crate::cart::{CartParams, CartTree};
use crate::config::{config_for, Grid, Settings};
use crate::dataset::dataset_hash;
use crate::error::{Result, TrainError};
use crate::learner::TrainMatrix;
use crate::split::upstream_split;
use crate::train::{GridRow, SetRows, TrainOptions, TrainOutput};
use ah_eval::metrics::{self as eval, EvalSettings, Metrics, Outcome, RowAnswer};
use ah_eval::table::{build_table, BuildOptions, Table};

/// Minimum repetitions per (input, choice).
pub const MIN_COUNT: usize = 3;
/// Maximum relative standard deviation (%) per (input, choice).
pub const MAX_REL_STD: f64 = 5.0;

/// Drops the rows of (input, choice) pairs measured fewer than [`MIN_COUNT`] times or with a
/// relative standard deviation above [`MAX_REL_STD`]%. Returns the filtered log and the
/// number of pairs dropped.
fn filter_log(log: &Log) -> (Log, usize) {
    let md = &log.metadata;
    let cols: Vec<usize> = md
        .features()
        .map(|f| log.column(f).expect("checked by the reader"))
        .collect();
    let mut groups: HashMap<(String, u32), Vec<f64>> = HashMap::new();
    let key_of = |r: &ah_core::LogRow| {
        cols.iter()
            .map(|&c| r.values[c].to_string())
            .collect::<Vec<_>>()
            .join("\u{1f}")
    };
    for r in &log.rows {
        groups
            .entry((key_of(r), r.choice))
            .or_default()
            .push(r.feedback);
    }
    let keep: HashMap<&(String, u32), bool> = groups
        .iter()
        .map(|(k, v)| {
            let n = v.len() as f64;
            let mean = v.iter().sum::<f64>() / n;
            let ok = if v.len() < MIN_COUNT || v.iter().any(|x| !x.is_finite()) || mean == 0.0 {
                false
            } else {
                let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
                var.sqrt() / mean * 100.0 <= MAX_REL_STD
            };
            (k, ok)
        })
        .collect();
    let dropped = keep.values().filter(|k| !**k).count();
    let mut out = log.clone();
    out.rows = log
        .rows
        .iter()
        .filter(|r| keep[&(key_of(r), r.choice)])
        .cloned()
        .collect();
    (out, dropped)
}

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

/// Per input: (predicted table column, ratio best/second, ranked table columns).
fn predict(tree: &CartTree, e: &Expanded) -> Vec<(Option<usize>, f64, Vec<usize>)> {
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
            match scores.len() {
                0 => (None, 0.0, ranked),
                1 => (Some(scores[0].1), f64::INFINITY, ranked),
                n => (
                    Some(scores[n - 1].1),
                    scores[n - 1].0 / scores[n - 2].0,
                    ranked,
                ),
            }
        })
        .collect()
}

fn evaluate(
    t: &Table,
    preds: &[(Option<usize>, f64, Vec<usize>)],
    threshold: f64,
    s: &EvalSettings,
) -> Metrics {
    let answers: Vec<RowAnswer> = (0..t.len())
        .map(|i| {
            let (pc, ratio, _) = &preds[i];
            let outcome = match pc {
                None => Outcome::Unsure,
                Some(_) if *ratio <= threshold => Outcome::Unsure,
                Some(c) if *c == t.actual_winner[i] as usize => Outcome::Correct,
                Some(_) => Outcome::Wrong,
            };
            RowAnswer {
                outcome,
                pred_col: *pc,
            }
        })
        .collect();
    eval::metrics_from(
        t,
        &answers,
        |i, sel| sel.extend(preds[i].2.iter().take(s.top_k)),
        s,
    )
}

/// Trains the regression variant with PyTorch's rule.
pub fn train_regression(
    opts: &TrainOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<TrainOutput> {
    let t0 = std::time::Instant::now();
    let raw = crate::dataset::read_log(&opts.log)?;
    let cfg = config_for(&raw.metadata.name);
    let mut settings = Settings::resolve(cfg.as_ref(), &opts.overrides, &opts.config_dir)?;
    settings
        .operations
        .extend(opts.extra_operations.iter().cloned());
    if let Some(d) = &opts.default_choice {
        settings.default_choice = Some(d.clone());
    }
    let (log, dropped) = filter_log(&raw);
    let mut warnings = Vec::new();
    if dropped > 0 {
        warnings.push(format!(
            "{dropped} (input, choice) pairs dropped: fewer than {MIN_COUNT} measurements or relative std above {MAX_REL_STD}% (the regression trainer's filters)"
        ));
    }
    if log.rows.is_empty() {
        return Err(TrainError::Input {
            path: opts.log.clone(),
            message: format!("no (input, choice) pair has {MIN_COUNT} or more consistent measurements; the regression variant needs repetitions (collect with --num-reps 3)"),
        });
    }
    let (full, encoding, report) = build_table(
        &log,
        "all",
        &settings.operations,
        None,
        BuildOptions::default(),
    )?;
    warnings.extend(report.warnings());
    let choices = full.choices.clone();
    if settings.default_choice.is_none() {
        settings.default_choice = Some(choices[0].clone());
        warnings.push(format!(
            "no default choice is known for `{}`; using `{}` for the metrics",
            raw.metadata.name, choices[0]
        ));
    }
    let split = upstream_split(full.len(), 0.2, 0.2, opts.seed);
    let mut sets = vec![
        ("train".to_string(), full.take(&split.train, "train")),
        ("val".to_string(), full.take(&split.val, "val")),
        ("test".to_string(), full.take(&split.test, "test")),
    ];
    for (name, path) in &opts.data {
        let dlog = crate::dataset::read_log(path)?;
        let (dlog, _) = filter_log(&dlog);
        let (t, _, _) = build_table(
            &dlog,
            name,
            &settings.operations,
            Some(&encoding),
            BuildOptions::default(),
        )?;
        sets.push((name.clone(), t));
    }
    let expanded: Vec<Expanded> = sets.iter().map(|(_, t)| expand(t, &choices)).collect();
    let tr = &expanded[0];
    let n_rows = tr.target.len();
    let m = TrainMatrix::new(
        tr.x.clone(),
        tr.n_cols,
        vec![0; n_rows],
        0,
        tr.target.clone(),
        vec![1.0; n_rows],
    );
    let grid_cfg =
        if opts.overrides.max_depth.is_some() || opts.overrides.min_samples_leaf.is_some() {
            Grid {
                criterion: vec![crate::cart::Criterion::SquaredError],
                ..settings.grid.clone()
            }
        } else {
            Grid::regression()
        };
    let configs = grid_cfg.configs();
    let params: Vec<CartParams> = configs
        .iter()
        .map(|&(d, msl, c)| CartParams {
            criterion: c,
            max_depth: d,
            min_samples_leaf: msl,
            seed: opts.seed,
        })
        .collect();
    let es = EvalSettings {
        default_choice: settings.default_choice.clone(),
        top_k: opts.ranking.unwrap_or(5),
        always_included: settings.always_included.clone(),
        exempt_certain: false,
        // `filter_log` drops every (input, choice) pair with a failed (`inf`) measurement: a
        // failed choice is never measured, so never picked, whatever the setting.
        inf_unavailable: false,
    };
    let t_prep = t0.elapsed().as_secs_f64();
    let trees = m.fit_many(opts.learner, &params);
    let results: Vec<(CartTree, GridRow)> = configs
        .par_iter()
        .zip(trees.into_par_iter())
        .map(|(&cfg, tree)| {
            let val_preds = predict(&tree, &expanded[1]);
            let val = &sets[1].1;
            let mut thr = 0.99;
            for (i, (pc, ratio, _)) in val_preds.iter().enumerate() {
                if let Some(c) = pc {
                    if *c != val.actual_winner[i] as usize && ratio.is_finite() && *ratio > thr {
                        thr = *ratio;
                    }
                }
            }
            let mut metrics = BTreeMap::new();
            for (j, (name, t)) in sets.iter().enumerate() {
                metrics.insert(
                    name.clone(),
                    evaluate(t, &predict(&tree, &expanded[j]), thr, &es),
                );
            }
            progress(1);
            let row = GridRow {
                criterion: cfg.2,
                max_depth: cfg.0,
                min_samples_leaf: cfg.1,
                weighting: "uniform",
                threshold: thr,
                n_leaves: tree.n_leaves(),
                n_unsafe: 0,
                cv_cost: None,
                metrics,
            };
            (tree, row)
        })
        .collect();
    let t_grid = t0.elapsed().as_secs_f64();
    let mut best = None;
    let mut best_correct = 0;
    for (i, (_, r)) in results.iter().enumerate() {
        if r.metrics["val"].correct > best_correct {
            best = Some(i);
            best_correct = r.metrics["val"].correct;
        }
    }
    let Some(best) = best else {
        return Err(TrainError::NoModel(
            "no regression model predicts any validation input correctly".into(),
        ));
    };
    let (tree, row) = &results[best];
    let mut columns = encoding.columns.clone();
    columns.extend(choices.iter().map(|c| Column::OneHot {
        feature: model::CHOICE_FEATURE.into(),
        value: c.clone(),
    }));
    let nodes = tree
        .nodes
        .iter()
        .map(|n| match n.feature {
            Some(c) => Node::Split {
                column: c,
                threshold: n.threshold,
                left: n.left,
                right: n.right,
            },
            None => Node::Leaf {
                value: n.value.clone(),
                samples: n.n_samples as u64,
                unsafe_leaf: false,
            },
        })
        .collect();
    let mut ranges = Vec::new();
    for (c, col) in encoding.columns.iter().enumerate() {
        if let Column::Numeric { name } = col {
            let t = &sets[0].1;
            let (lo, hi) = (0..t.len()).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), i| {
                let v = t.row(i)[c];
                (a.min(v), b.max(v))
            });
            ranges.push(FeatureRange {
                name: name.clone(),
                min: lo,
                max: hi,
            });
        }
    }
    let mut rows = BTreeMap::new();
    let mut sizes = BTreeMap::new();
    for (j, (name, t)) in sets.iter().enumerate() {
        let preds = predict(tree, &expanded[j]);
        let dc = es.default_choice.as_deref().and_then(|d| t.choice_index(d));
        let mut s = SetRows::default();
        for (i, (pc, ratio, _)) in preds.iter().enumerate() {
            let best_t = t.best_time(i);
            let decided = pc.is_some() && *ratio > row.threshold;
            let picked = if decided {
                t.time(i, pc.expect("decided"))
            } else {
                best_t
            };
            if best_t.is_finite() && best_t > 0.0 {
                s.regret_ratio.push(picked / best_t);
            }
            if let (true, Some(dc)) = (decided, dc) {
                let td = t.time(i, dc);
                if td.is_finite() {
                    s.speedup_over_default.push(td / picked);
                }
            }
        }
        rows.insert(name.clone(), s);
        sizes.insert(name.clone(), t.len());
    }
    let md = &raw.metadata;
    let mut extra = BTreeMap::new();
    extra.insert("variant".into(), serde_json::json!("regression"));
    extra.insert(
        "pairs_dropped_by_filters".into(),
        serde_json::json!(dropped),
    );
    let model = Model {
        schema_version: model::MODEL_SCHEMA_VERSION,
        heuristic_name: opts.heuristic_name.clone(),
        name: md.name.clone(),
        kind: ModelKind::Regression,
        precondition: md.device(),
        choices: choices.clone(),
        default_choice: settings.default_choice.clone(),
        numerical_features: md.numerical_features.clone(),
        categorical_features: md.categorical_features.clone(),
        operations: settings.operations.iter().map(Operation::spec).collect(),
        columns,
        tree: Tree { nodes },
        threshold: row.threshold,
        ranking: None,
        feature_ranges: ranges,
        range_guard: false,
        training: TrainingInfo {
            mode: "upstream_regression".into(),
            learner: opts.learner.name().into(),
            criterion: row.criterion.name().into(),
            max_depth: row.max_depth,
            min_samples_leaf: row.min_samples_leaf.as_f64(),
            seed: u64::from(opts.seed),
            extra,
        },
        metrics: eval::model_metrics(&row.metrics),
        provenance: Provenance {
            dataset_hash: dataset_hash(&opts.log)?,
            dataset: opts.log.file_name().map_or_else(
                || opts.log.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            tool_version: ah_core::TOOL_VERSION.into(),
            command: opts.command.clone(),
        },
    };
    let feats: Vec<String> = md.features().map(str::to_string).collect();
    let keys_of = |rows: &[usize]| {
        rows.iter()
            .map(|&i| full.keys[i].clone())
            .collect::<Vec<_>>()
    };
    let split_sets = (
        feats,
        [
            keys_of(&split.train),
            keys_of(&split.val),
            keys_of(&split.test),
        ],
    );
    let t_end = t0.elapsed().as_secs_f64();
    Ok(TrainOutput {
        metrics: row.metrics.clone(),
        model,
        grid: results.iter().map(|r| r.1.clone()).collect(),
        best,
        warnings,
        rows,
        sizes,
        split_sets,
        timings: vec![
            ("prepare", t_prep),
            ("grid", t_grid - t_prep),
            ("final", t_end - t_grid),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Overrides;
    use crate::learner::Learner;
    use crate::train::{CostAwareParams, Mode};
    use ah_core::model::Decision;
    use ah_core::Context;
    use std::path::PathBuf;

    /// `Model::decide` on contexts built from the log equals the evaluation's decision
    /// (highest prediction, unsure when best / second <= threshold) for every input.
    #[test]
    fn model_decide_agrees_with_the_regression_evaluation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reg.txt");
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
        let opts = TrainOptions {
            log: path.clone(),
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
        };
        let out = train_regression(&opts, &|_| {}).unwrap();
        let model = &out.model;
        let log = Log::read(&path, ah_core::ReadOptions::default()).unwrap();
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
            ctx.add("m", key[0].parse::<i64>().unwrap());
            ctx.add_categorical("dtype", key[1].as_str());
            let want = match &preds[i] {
                (Some(c), ratio, _) if *ratio > model.threshold => Some(
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
}
