//! Replay: evaluate a trained heuristic against any log (ours or PyTorch's) without a GPU.
//!
//! The log is turned into one row per input by the evaluation layer ([`ah_eval::table`]), as
//! `ah-train` builds an extra `--data` set (median over repetitions, inputs with at least two
//! measured choices, the model's categorical encoding), and the model is evaluated with the
//! trainer's metrics ([`ah_eval::metrics`]), so the numbers are the ones
//! `ah-train --data NAME LOG` reports for the same rows. On top:
//! - the range guard of the model (a numeric feature outside the training range is unsure),
//!   which training metrics do not see;
//! - when the heuristic is linked into this build (the generated crate), its decision on
//!   every input is compared with the model's ([`ah_core::ModelEvaluator`], which decides as
//!   generated code does): a mismatch means stale generated code.
//! - the worst inputs: the wrong picks that lose the most time;
//! - with [`replay_with_decisions`], every input's decision and why it is unsure
//!   ([`crate::decisions`]).

use ah_core::model::{Column, Node};
use ah_core::UnsureReason;
use ah_core::{Context, Decision, LearnedHeuristic, Model, Value};
use ah_eval::metrics::{
    evaluate, outcomes, predict_rows, unsure_cause, EvalSettings, LeafModel, Metrics, Outcome,
    RowPredictions, UnsureCause,
};
use ah_eval::table::{build_table, BuildOptions, Encoding, Table};
use ah_log::Log;
use serde::Serialize;

use crate::decisions::{DecisionRow, Decisions};

/// A replay's result.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayReport {
    /// The heuristic.
    pub heuristic: String,
    /// The log replayed.
    pub log: String,
    /// Inputs evaluated.
    pub inputs: usize,
    /// Inputs made unsure by the range guard.
    pub out_of_range: usize,
    /// The trainer's metrics for these rows.
    pub metrics: Metrics,
    /// Inputs where the linked generated code decided differently from the model (`None` when
    /// the heuristic is not linked into this build).
    pub generated_mismatches: Option<usize>,
    /// The wrong picks that lose the most time, worst first.
    pub worst: Vec<WorstInput>,
    /// Warnings from building the table (malformed rows, single-choice inputs, ...).
    pub warnings: Vec<String>,
}

/// One wrong pick.
#[derive(Debug, Clone, Serialize)]
pub struct WorstInput {
    /// Logged features, `name=value` joined by spaces.
    pub input: String,
    /// The heuristic's pick.
    pub picked: String,
    /// The fastest choice.
    pub best: String,
    /// `time(picked) / time(best)`.
    pub slowdown: f64,
}

/// Errors of a replay.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The log is of another optimization.
    #[error("the log is for `{log}` but the heuristic decides `{model}`")]
    NameMismatch {
        /// The log's name.
        log: String,
        /// The model's name.
        model: String,
    },
    /// Building the table failed.
    #[error(transparent)]
    Eval(#[from] ah_eval::EvalError),
    /// A core error.
    #[error(transparent)]
    Core(#[from] ah_core::Error),
}

/// The model's tree as the evaluation layer sees it, with one extra leaf for inputs the
/// range guard rejects (treated as an unsafe leaf: unsure).
struct ModelLeaves<'a> {
    model: &'a Model,
    /// Per column: the training range when the range guard applies to it.
    ranges: Vec<Option<(f64, f64)>>,
    guard_leaf: usize,
    empty: Vec<f64>,
}

impl<'a> ModelLeaves<'a> {
    fn new(model: &'a Model) -> Self {
        let ranges = model
            .columns
            .iter()
            .map(|c| match c {
                Column::Numeric { name } if model.range_guard => model
                    .feature_ranges
                    .iter()
                    .find(|r| &r.name == name)
                    .map(|r| (r.min, r.max)),
                _ => None,
            })
            .collect();
        Self {
            model,
            ranges,
            guard_leaf: model.tree.nodes.len(),
            empty: vec![0.0; model.choices.len()],
        }
    }

    fn out_of_range(&self, row: &[f64]) -> bool {
        self.out_of_range_feature(row).is_some()
    }

    /// The first numeric feature of `row` outside its training range, if any.
    fn out_of_range_feature(&self, row: &[f64]) -> Option<&str> {
        self.ranges
            .iter()
            .zip(row)
            .zip(&self.model.columns)
            .find(|((r, v), _)| r.is_some_and(|(lo, hi)| !(lo..=hi).contains(*v)))
            .map(|(_, c)| match c {
                Column::Numeric { name } => name.as_str(),
                _ => "",
            })
    }

    fn is_unsafe(&self, leaf: usize) -> bool {
        leaf == self.guard_leaf
            || matches!(
                self.model.tree.nodes.get(leaf),
                Some(Node::Leaf {
                    unsafe_leaf: true,
                    ..
                })
            )
    }
}

impl LeafModel for ModelLeaves<'_> {
    fn leaf(&self, row: &[f64]) -> usize {
        if self.out_of_range(row) {
            self.guard_leaf
        } else {
            self.model.tree.route(row)
        }
    }

    fn leaf_value(&self, leaf: usize) -> &[f64] {
        match self.model.tree.nodes.get(leaf) {
            Some(Node::Leaf { value, .. }) => value,
            _ => &self.empty,
        }
    }

    fn classes(&self) -> &[String] {
        &self.model.choices
    }
}

/// Rebuilds the training encoding from the model: features, operations and the categories
/// of its one-hot columns.
pub fn encoding_of(model: &Model) -> Result<Encoding, ReplayError> {
    let operations = model.operations()?;
    let mut categories: Vec<(String, Vec<String>)> = Vec::new();
    for c in &model.columns {
        if let Column::OneHot { feature, value } = c {
            match categories.iter_mut().find(|(f, _)| f == feature) {
                Some((_, vals)) => vals.push(value.clone()),
                None => categories.push((feature.clone(), vec![value.clone()])),
            }
        }
    }
    Ok(Encoding {
        numerical: model.numerical_features.clone(),
        categorical: model.categorical_features.clone(),
        operations,
        categories,
        columns: model.columns.clone(),
    })
}

/// Replays `model` on `log`; `generated` is the same heuristic's generated code when it is
/// linked into this build. `worst` is how many wrong picks to list.
pub fn replay(
    model: &Model,
    log: &Log,
    generated: Option<&dyn LearnedHeuristic>,
    worst: usize,
) -> Result<ReplayReport, ReplayError> {
    replay_with_decisions(model, log, generated, worst).map(|(report, _)| report)
}

/// [`replay`], with every input's decision: one row per input of the report, a row without a
/// pick exactly where the report counts an unsure input.
pub fn replay_with_decisions(
    model: &Model,
    log: &Log,
    generated: Option<&dyn LearnedHeuristic>,
    worst: usize,
) -> Result<(ReplayReport, Decisions), ReplayError> {
    // A log of the cuBLASLt runner written under its former name `mm` replays as `cublaslt_mm`.
    let log_name =
        ah_core::optimization::log_name(&log.metadata.name, log.choices.iter().map(String::as_str));
    if log_name != model.name {
        return Err(ReplayError::NameMismatch {
            log: log_name.to_string(),
            model: model.name.clone(),
        });
    }
    let encoding = encoding_of(model)?;
    let upstream = model.training.mode == "upstream";
    let (table, _, build) = build_table(
        log,
        "replay",
        &encoding.operations,
        Some(&encoding),
        BuildOptions {
            keep_all_inf: upstream,
        },
    )?;
    let leaves = ModelLeaves::new(model);
    let rp = predict_rows(&leaves, &table);
    let settings = eval_settings(model, upstream);
    let unsafe_leaf = |l: usize| leaves.is_unsafe(l);
    let decisions = decisions_of(log, &leaves, &rp, &table, &unsafe_leaf, &settings);
    let metrics = evaluate(
        &leaves,
        &rp,
        &table,
        model.threshold,
        &unsafe_leaf,
        &settings,
    );
    let out_of_range = rp.leaf.iter().filter(|&&l| l == leaves.guard_leaf).count();
    let outcomes = outcomes(&rp, &table, model.threshold, &unsafe_leaf, &settings);

    let generated_mismatches = generated.map(|h| {
        let mut evaluator = ah_core::model::ModelEvaluator::new(model).ok();
        (0..table.len())
            .filter(|&i| {
                let ctx = context_of(model, &table, i);
                let want = match evaluator.as_mut() {
                    Some(e) => e.decide(&ctx),
                    None => model.decide(&ctx),
                };
                !same_decision(&h.decide(&ctx), &want)
            })
            .count()
    });

    let wrong = worst_inputs(model, &table, &rp, &outcomes, worst);
    let mut warnings = build.warnings();
    if model.precondition != log.metadata.device() {
        // The tree is evaluated all the same; at run time its precondition refuses this device.
        warnings.push(format!(
            "collected on another device than the model's ({:?} vs the model's {:?}): at run time `{}` does not decide on it",
            log.metadata.device(),
            model.precondition,
            model.heuristic_name
        ));
    }
    let report = ReplayReport {
        heuristic: model.heuristic_name.clone(),
        log: log.path.display().to_string(),
        inputs: table.len(),
        out_of_range,
        metrics,
        generated_mismatches,
        worst: wrong,
        warnings,
    };
    Ok((report, decisions))
}

/// The evaluation settings the model was trained with, so that a replay scores as training did.
fn eval_settings(model: &Model, upstream: bool) -> EvalSettings {
    EvalSettings {
        default_choice: model.default_choice.clone(),
        top_k: model.ranking.as_ref().map_or(1, |r| r.top_k),
        always_included: model
            .ranking
            .as_ref()
            .map(|r| r.always_included.clone())
            .unwrap_or_default(),
        exempt_certain: upstream,
        // The trainer's `--inf-unavailable`: a pick timed inf is unsure, as in its metrics.
        inf_unavailable: model
            .training
            .extra
            .get("inf_unavailable")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false),
    }
}

/// The `worst` wrong picks, the slowest against the best first (ties by input).
fn worst_inputs(
    model: &Model,
    table: &Table,
    rp: &RowPredictions,
    outcomes: &[Outcome],
    worst: usize,
) -> Vec<WorstInput> {
    let mut wrong: Vec<WorstInput> = (0..table.len())
        .filter(|&i| outcomes[i] == Outcome::Wrong)
        .filter_map(|i| {
            let class = rp.pred[i];
            let col = rp.class_col[class]?;
            let best = table.winner[i] as usize;
            Some(WorstInput {
                input: describe(model, table, i),
                picked: model.choices[class].clone(),
                best: table.choices[best].clone(),
                slowdown: table.time(i, col) / table.time(i, best),
            })
        })
        .collect();
    wrong.sort_by(|a, b| {
        b.slowdown
            .total_cmp(&a.slowdown)
            .then(a.input.cmp(&b.input))
    });
    wrong.truncate(worst);
    wrong
}

/// Every row's decision, with the reason of the evaluation layer's [`unsure_cause`] in the
/// runtime's terms (the range guard is this replay's extra leaf).
fn decisions_of(
    log: &Log,
    leaves: &ModelLeaves,
    rp: &RowPredictions,
    table: &Table,
    unsafe_leaf: &dyn Fn(usize) -> bool,
    settings: &EvalSettings,
) -> Decisions {
    let model = leaves.model;
    let k = table.choices.len();
    let rows = (0..table.len())
        .map(|i| {
            let leaf = rp.leaf[i];
            let guarded = leaf == leaves.guard_leaf;
            let out_of_range = || UnsureReason::OutOfRange {
                feature: leaves
                    .out_of_range_feature(table.row(i))
                    .unwrap_or_default()
                    .to_string(),
            };
            let unsure = unsure_cause(rp, table, i, model.threshold, unsafe_leaf, settings).map(
                |c| match c {
                    UnsureCause::Forced => out_of_range(),
                    UnsureCause::UnsafeLeaf if guarded => out_of_range(),
                    UnsureCause::UnsafeLeaf => UnsureReason::UnsafeLeaf,
                    UnsureCause::LowConfidence => UnsureReason::LowConfidence {
                        confidence: rp.max_prob[i],
                    },
                    UnsureCause::Unavailable => UnsureReason::NotInChoices,
                },
            );
            let best = table.winner[i] as usize;
            let decision = match unsure {
                Some(_) => None,
                None => rp.class_col[rp.pred[i]],
            };
            DecisionRow {
                input: table.keys[i].clone(),
                best,
                times_ms: table.times[i * k..(i + 1) * k].to_vec(),
                decision,
                unsure,
                loss: decision.map(|c| table.time(i, c) / table.time(i, best)),
                leaf: (!guarded).then_some(leaf),
            }
        })
        .collect();
    Decisions {
        features: log.metadata.features().map(str::to_string).collect(),
        choices: table.choices.clone(),
        rows,
    }
}

fn same_decision(a: &Decision, b: &Decision) -> bool {
    match (a, b) {
        (Decision::Choice(x), Decision::Choice(y)) => x == y,
        (Decision::Unsure(_), Decision::Unsure(_)) => true,
        _ => false,
    }
}

/// The logged features of row `i` as a context, kinds as logged.
fn context_of(model: &Model, table: &Table, i: usize) -> Context {
    let mut ctx = Context::with_capacity(table.keys[i].len());
    for (name, text) in model
        .numerical_features
        .iter()
        .chain(&model.categorical_features)
        .zip(table.keys[i].iter())
    {
        let categorical = model.categorical_features.contains(name);
        ctx.add_feature(name.clone(), Value::parse(text), categorical);
    }
    ctx
}

fn describe(model: &Model, table: &Table, i: usize) -> String {
    model
        .numerical_features
        .iter()
        .chain(&model.categorical_features)
        .zip(table.keys[i].iter())
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}
