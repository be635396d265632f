//! The output step: the chosen model's guarded ranges, its final metrics and per-row results
//! on every set (with the range guard applied as at run time), and the [`Model`] itself. The
//! node conversion, provenance and split record are shared with the regression variant.

use std::collections::BTreeMap;

use ah_core::model::{
    self, FeatureRange, Model, ModelKind, Node, Provenance, RankingSpec, TrainingInfo, Tree,
};
use ah_core::ops::Operation;

use crate::cart::CartTree;
use crate::error::Result;
use crate::guard::GuardPolicy;
use ah_eval::metrics::{self as eval, EvalSettings, Metrics, Outcome};
use ah_eval::table::Table;

use super::grid::{GridInput, Selection};
use super::params::TrainOptions;
use super::prepare::Prepared;
use super::results::{GridRow, SetRows, SplitSets};

/// The chosen model's results on every set.
pub(super) struct FinalResults {
    /// Metrics per set.
    pub(super) metrics: BTreeMap<String, Metrics>,
    /// Per-row results per set.
    pub(super) rows: BTreeMap<String, SetRows>,
    /// Set sizes.
    pub(super) sizes: BTreeMap<String, usize>,
}

/// The guarded ranges of the chosen model, `(column, range)`, over the rows it was fitted on.
pub(super) fn ranges_of(
    opts: &TrainOptions,
    p: &Prepared,
    sel: &Selection<'_>,
) -> Vec<(usize, FeatureRange)> {
    let tested = sel
        .chosen
        .fitted
        .tree
        .nodes
        .iter()
        .filter_map(|n| n.feature);
    opts.guard.ranges(&p.encoding, &sel.fit_table, tested)
}

/// Per row of `t`: a guarded feature outside its range (the runtime's range guard).
pub(crate) fn out_of_range(t: &Table, ranges: &[(usize, FeatureRange)]) -> Vec<bool> {
    (0..t.len())
        .map(|i| {
            let row = t.row(i);
            ranges
                .iter()
                .any(|(c, r)| !(r.min <= row[*c] && row[*c] <= r.max))
        })
        .collect()
}

/// Final metrics and per-row results of the chosen model.
pub(super) fn final_results(
    g: &GridInput<'_>,
    sel: &Selection<'_>,
    ranges: &[(usize, FeatureRange)],
) -> FinalResults {
    let f = &sel.chosen.fitted;
    let is_bad = |l: usize| sel.chosen.unsafe_leaf[l];
    let mut out = FinalResults {
        metrics: BTreeMap::new(),
        rows: BTreeMap::new(),
        sizes: BTreeMap::new(),
    };
    for (name, t) in &g.views {
        let mut rp = eval::predict_rows(f, t);
        if g.opts.range_guard {
            rp.forced_unsure = out_of_range(t, ranges);
        }
        let thr = sel.threshold;
        let outcomes = eval::outcomes(&rp, t, thr, &is_bad, &g.es);
        let picks: Vec<Option<usize>> = (0..t.len())
            .map(|i| match outcomes[i] {
                Outcome::Unsure => None,
                _ => Some(rp.class_col[rp.pred[i]].expect("decided")),
            })
            .collect();
        out.metrics
            .insert(name.clone(), eval::evaluate(f, &rp, t, thr, &is_bad, &g.es));
        out.rows.insert(name.clone(), set_rows(t, &picks, &g.es));
        out.sizes.insert(name.clone(), t.len());
    }
    out
}

/// Per-row results on `t` given each row's pick (a table column; `None`: unsure).
pub(crate) fn set_rows(t: &Table, picks: &[Option<usize>], es: &EvalSettings) -> SetRows {
    let dc = es.default_choice.as_deref().and_then(|d| t.choice_index(d));
    let mut s = SetRows::default();
    for i in 0..t.len() {
        let best = t.best_time(i);
        let picked = picks[i].map_or(best, |c| t.time(i, c));
        if best.is_finite() && best > 0.0 {
            s.regret_ratio.push(picked / best);
        }
        if let (Some(_), Some(dc)) = (picks[i], dc) {
            let td = t.time(i, dc);
            if td.is_finite() {
                s.speedup_over_default.push(td / picked);
            }
        }
    }
    s
}

/// The model of a classification run.
pub(super) fn build_model(
    g: &GridInput<'_>,
    sel: &Selection<'_>,
    ranges: &[(usize, FeatureRange)],
    metrics: &BTreeMap<String, Metrics>,
    hash: &str,
) -> Result<Model> {
    let (opts, p) = (g.opts, g.p);
    let mut extra = sel.extra.clone();
    if opts.inf_unavailable {
        // Only when set: models trained without it stay byte-identical.
        extra.insert("inf_unavailable".into(), serde_json::json!(true));
    }
    if opts.guard != GuardPolicy::BOX {
        // Only when set: models trained with the default stay byte-identical.
        extra.insert("guard".into(), serde_json::json!(opts.guard.to_string()));
    }
    extra.insert("grid_models".into(), serde_json::json!(g.configs.len()));
    extra.insert("inputs".into(), serde_json::json!(p.keys.len()));
    let md = &p.log.metadata;
    let row = &sel.grid[sel.best];
    let f = &sel.chosen.fitted;
    Ok(Model {
        schema_version: model::MODEL_SCHEMA_VERSION,
        heuristic_name: opts.heuristic_name.clone(),
        name: md.name.clone(),
        kind: ModelKind::Decision,
        precondition: md.device(),
        choices: f.classes.clone(),
        default_choice: p.settings.default_choice.clone(),
        numerical_features: md.numerical_features.clone(),
        categorical_features: md.categorical_features.clone(),
        operations: p.settings.operations.iter().map(Operation::spec).collect(),
        columns: p.encoding.columns.clone(),
        tree: Tree {
            nodes: model_nodes(&f.tree, &sel.chosen.unsafe_leaf),
        },
        threshold: sel.threshold,
        ranking: opts.ranking.map(|k| RankingSpec {
            top_k: k,
            always_included: p.settings.always_included.clone(),
        }),
        feature_ranges: ranges.iter().map(|(_, r)| r.clone()).collect(),
        range_guard: opts.range_guard,
        training: training_info(opts.mode.name(), opts, row, extra),
        metrics: eval::model_metrics(metrics),
        provenance: provenance(opts, hash),
    })
}

/// How a model was trained: the mode, the learner, the chosen grid row and the seed, with
/// the mode's `extra` facts.
pub(crate) fn training_info(
    mode: &str,
    opts: &TrainOptions,
    row: &GridRow,
    extra: BTreeMap<String, serde_json::Value>,
) -> TrainingInfo {
    TrainingInfo {
        mode: mode.into(),
        learner: opts.learner.name().into(),
        criterion: row.criterion.name().into(),
        max_depth: row.max_depth,
        min_samples_leaf: row.min_samples_leaf.as_f64(),
        seed: u64::from(opts.seed),
        extra,
    }
}

/// A fitted tree's nodes as the model stores them.
pub(crate) fn model_nodes(tree: &CartTree, unsafe_leaf: &[bool]) -> Vec<Node> {
    tree.nodes
        .iter()
        .enumerate()
        .map(|(i, n)| match n.feature {
            Some(c) => Node::Split {
                column: c,
                threshold: n.threshold,
                left: n.left,
                right: n.right,
            },
            None => Node::Leaf {
                value: n.value.clone(),
                samples: n.n_samples as u64,
                unsafe_leaf: unsafe_leaf[i],
            },
        })
        .collect()
}

/// Where a model comes from.
pub(crate) fn provenance(opts: &TrainOptions, hash: &str) -> Provenance {
    Provenance {
        dataset_hash: hash.to_string(),
        dataset: opts.log.file_name().map_or_else(
            || opts.log.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
        tool_version: ah_core::TOOL_VERSION.into(),
        command: opts.command.clone(),
    }
}

/// The split as the logged features and each set's inputs.
pub(crate) fn split_sets(p: &Prepared) -> SplitSets {
    let keys_of = |rows: &[usize]| rows.iter().map(|&i| p.keys[i].clone()).collect::<Vec<_>>();
    SplitSets {
        features: p.log.metadata.features().map(str::to_string).collect(),
        train: keys_of(&p.split.train),
        val: keys_of(&p.split.val),
        test: keys_of(&p.split.test),
    }
}
