//! The model schema: what `ah-train` writes and `ah-codegen`, replay and the runtime read.
//!
//! A [`Model`] is a decision (or regression) tree over *columns*: numeric features (logged or
//! augmented) and one-hot columns of categorical features. Split semantics are those of
//! scikit-learn and PyTorch's generated code: a numeric split goes left when
//! `value <= threshold`; a one-hot split (`threshold` 0.5) goes left when the feature's string
//! form is **not** equal to the category, so a category never seen in training always goes left.
//!
//! The JSON is versioned by [`MODEL_SCHEMA_VERSION`]; readers refuse other versions.

use crate::context::Context;
use crate::error::{Error, Result};
use crate::ops::{EvalError, Operation};
use crate::value::Value;

mod check;
mod decision;
mod evaluator;
mod format;
#[cfg(feature = "json")]
mod locate;
mod names;

pub use crate::ops::OperationSpec;
pub use decision::{leaf_best_choices, regression_decision, Decision, UnsureReason};
use evaluator::value_str_eq;
pub use evaluator::ModelEvaluator;
pub use format::{
    Column, FeatureRange, Model, ModelKind, Node, Provenance, RankingSpec, TrainingInfo, Tree,
    CHOICE_FEATURE, MODEL_SCHEMA_VERSION,
};
#[cfg(feature = "json")]
pub(crate) use locate::json_line;
pub use names::{
    check_heuristic_name, heuristic_module_name, HeuristicNameError, MAX_HEURISTIC_NAME,
};

impl Model {
    /// The model's augment operations, parsed.
    pub fn operations(&self) -> Result<Vec<Operation>> {
        self.operations.iter().map(Operation::from_spec).collect()
    }

    /// The tree's input column values for a context: computes the operations on a copy of
    /// `ctx`, applies the range guard, then reads the columns (see [`ModelEvaluator`]).
    pub fn column_values(
        &self,
        ctx: &Context,
        ops: &[Operation],
    ) -> std::result::Result<Vec<f64>, UnsureReason> {
        let mut scratch = ctx.clone();
        apply_ops_unsure(ops, &mut scratch)?;
        self.range_guard(&scratch)?;
        let mut out = Vec::with_capacity(self.columns.len());
        self.fill_columns(&scratch, &mut out)?;
        Ok(out)
    }

    /// The model's decision for a context, exactly as [`crate::LearnedHeuristic::decide`]
    /// decides for the generated code of this model. Parses the operations on every call; use a
    /// [`ModelEvaluator`] in loops.
    pub fn decide(&self, ctx: &Context) -> Decision {
        match ModelEvaluator::new(self) {
            Ok(mut e) => e.decide(ctx),
            Err(e) => Decision::Unsure(invalid_model(e)),
        }
    }

    /// Ranked choice indices (PyTorch's `get_decisions_ranked`): the leaf's classes by
    /// probability, no threshold. `None` when unsure or for regression models.
    pub fn ranked(&self, ctx: &Context) -> Option<Vec<usize>> {
        ModelEvaluator::new(self).ok()?.ranked(ctx)
    }

    fn range_guard(&self, ctx: &Context) -> std::result::Result<(), UnsureReason> {
        if !self.range_guard {
            return Ok(());
        }
        for r in &self.feature_ranges {
            r.check(ctx.get(&r.name).and_then(Value::as_f64))?;
        }
        Ok(())
    }

    fn fill_columns(
        &self,
        ctx: &Context,
        out: &mut Vec<f64>,
    ) -> std::result::Result<(), UnsureReason> {
        out.clear();
        for col in &self.columns {
            let x = match col {
                Column::Numeric { name } => {
                    ctx.get(name).and_then(Value::as_f64).ok_or_else(|| {
                        UnsureReason::MissingFeature {
                            feature: name.clone(),
                        }
                    })?
                }
                Column::OneHot { feature, value } => {
                    let v = ctx
                        .get(feature)
                        .ok_or_else(|| UnsureReason::MissingFeature {
                            feature: feature.clone(),
                        })?;
                    if value_str_eq(v, value) {
                        1.0
                    } else {
                        0.0
                    }
                }
            };
            out.push(x);
        }
        Ok(())
    }
}

fn invalid_model(e: Error) -> UnsureReason {
    match e {
        Error::Operation { name, .. } | Error::Expression { name, .. } => {
            UnsureReason::MissingFeature { feature: name }
        }
        _ => UnsureReason::NoHeuristic,
    }
}

/// Applies operations; a failure makes the model unsure: an unknown input names that input,
/// any other failure (division by zero, overflow, kinds) names the operation.
fn apply_ops_unsure(ops: &[Operation], ctx: &mut Context) -> std::result::Result<(), UnsureReason> {
    for op in ops {
        let v = op
            .expr
            .eval(&|n| ctx.get(n).cloned())
            .map_err(|e| match e {
                EvalError::UnknownFeature(f) => UnsureReason::MissingFeature { feature: f },
                _ => UnsureReason::MissingFeature {
                    feature: op.name.clone(),
                },
            })?;
        ctx.set(op.name.clone(), v, op.is_categorical);
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests;
