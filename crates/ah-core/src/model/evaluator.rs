//! [`ModelEvaluator`]: one model evaluated on many contexts with reusable buffers.

use super::decision::{leaf_best_choices, regression_decision, Decision, UnsureReason};
use super::format::{Column, Model, ModelKind, Node, CHOICE_FEATURE};
use crate::context::Context;
use crate::error::Result;
use crate::ops::{CompiledOps, EvalError, Operation};
use crate::value::Value;

/// Evaluates one model on many contexts with parsed operations and reusable buffers.
///
/// The semantics, shared by [`Model::decide`], replay, the runtime and (by construction) the
/// generated code:
/// 1. the model's operations are computed, in order, on a copy of the context; a failure is
///    [`UnsureReason::MissingFeature`] (naming the missing input, or the failing operation);
/// 2. with `range_guard`, every feature of `feature_ranges` must be numeric and inside
///    `[min, max]` (NaN is outside), else [`UnsureReason::OutOfRange`];
/// 3. columns: numeric columns read the value as `f64` (booleans 0/1; a string or missing
///    value is [`UnsureReason::MissingFeature`]), a one-hot column is `1.0` when Python's
///    `str()` of the feature equals the category, else `0.0`;
/// 4. the tree is walked with [`Tree::route`](super::Tree::route) (`<=` goes left); an unsafe leaf is
///    [`UnsureReason::UnsafeLeaf`];
/// 5. decision models: the first entry of [`leaf_best_choices`] decides; an empty list is
///    [`UnsureReason::UnsafeLeaf`], `p <= threshold` is [`UnsureReason::LowConfidence`];
///    regression models: steps 3-4 run once per choice with the `choice` feature set to the
///    choice's name, then [`regression_decision`] decides.
#[derive(Debug, Clone)]
pub struct ModelEvaluator<'m> {
    model: &'m Model,
    ops: Vec<Operation>,
    plan: Option<Plan>,
    slots: Vec<Value>,
    columns: Vec<f64>,
}

/// Where each input of the model lives, for one context layout.
#[derive(Debug, Clone)]
struct Plan {
    ops: CompiledOps,
    /// Slot of each feature range's feature (`None`: missing).
    ranges: Vec<Option<usize>>,
    /// Slot of each column's feature (`None`: missing).
    columns: Vec<Option<usize>>,
    /// Which columns read the `choice` feature.
    choice_columns: Vec<bool>,
    /// Slot the regression's `choice` is written to.
    choice: usize,
}

impl Plan {
    fn new(model: &Model, ops: &[Operation], ctx: &Context) -> Self {
        let ops = CompiledOps::for_context(ops, ctx);
        let ranges = model
            .feature_ranges
            .iter()
            .map(|r| ops.slot(&r.name))
            .collect();
        let choice = ops.slot(CHOICE_FEATURE).unwrap_or(ops.slots());
        let feature = |c: &Column| match c {
            Column::Numeric { name } => name.clone(),
            Column::OneHot { feature, .. } => feature.clone(),
        };
        let columns = model
            .columns
            .iter()
            .map(|c| ops.slot(&feature(c)))
            .collect();
        let choice_columns = model
            .columns
            .iter()
            .map(|c| feature(c) == CHOICE_FEATURE)
            .collect();
        Self {
            ops,
            ranges,
            columns,
            choice_columns,
            choice,
        }
    }
}

impl<'m> ModelEvaluator<'m> {
    /// Parses the model's operations.
    pub fn new(model: &'m Model) -> Result<Self> {
        Ok(Self {
            model,
            ops: model.operations()?,
            plan: None,
            slots: Vec::new(),
            columns: Vec::new(),
        })
    }

    /// The model.
    pub fn model(&self) -> &'m Model {
        self.model
    }

    /// The parsed operations.
    pub fn operations(&self) -> &[Operation] {
        &self.ops
    }

    /// Steps 1-2: operations (compiled once per context layout) and the range guard.
    fn prepare(&mut self, ctx: &Context) -> std::result::Result<(), UnsureReason> {
        if !self.plan.as_ref().is_some_and(|p| p.ops.matches(ctx)) {
            self.plan = Some(Plan::new(self.model, &self.ops, ctx));
        }
        let plan = self.plan.as_ref().expect("set above");
        plan.ops
            .run(ctx, &mut self.slots)
            .map_err(|(i, e)| match e {
                EvalError::UnknownFeature(f) => UnsureReason::MissingFeature { feature: f },
                _ => UnsureReason::MissingFeature {
                    feature: self.ops[i].name.clone(),
                },
            })?;
        if self.slots.len() <= plan.choice {
            self.slots.resize(plan.choice + 1, Value::Bool(false));
        }
        if self.model.range_guard {
            for (r, slot) in self.model.feature_ranges.iter().zip(&plan.ranges) {
                r.check(slot.and_then(|s| self.slots[s].as_f64()))?;
            }
        }
        Ok(())
    }

    /// Step 3 from the slots; `regression` reads `choice` columns from the slot the
    /// regression loop writes the asked choice to.
    fn fill_columns(&mut self, regression: bool) -> std::result::Result<(), UnsureReason> {
        let plan = self.plan.as_ref().expect("prepared");
        self.columns.clear();
        for (i, (col, slot)) in self.model.columns.iter().zip(&plan.columns).enumerate() {
            let slot = if regression && plan.choice_columns[i] {
                &Some(plan.choice)
            } else {
                slot
            };
            let x =
                match col {
                    Column::Numeric { name } => slot
                        .and_then(|s| self.slots[s].as_f64())
                        .ok_or_else(|| UnsureReason::MissingFeature {
                            feature: name.clone(),
                        })?,
                    Column::OneHot { feature, value } => {
                        let s = slot.ok_or_else(|| UnsureReason::MissingFeature {
                            feature: feature.clone(),
                        })?;
                        if value_str_eq(&self.slots[s], value) {
                            1.0
                        } else {
                            0.0
                        }
                    }
                };
            self.columns.push(x);
        }
        Ok(())
    }

    /// The column values for a context (steps 1-3), in a reused buffer. For regression models
    /// the `choice` column is read from `ctx` (set it first).
    pub fn column_values(&mut self, ctx: &Context) -> std::result::Result<&[f64], UnsureReason> {
        self.prepare(ctx)?;
        self.fill_columns(false)?;
        Ok(&self.columns)
    }

    /// The leaf's node index for a context (steps 1-4, without the unsafe check). For
    /// regression models the `choice` feature is read from `ctx`.
    pub fn leaf(&mut self, ctx: &Context) -> std::result::Result<usize, UnsureReason> {
        self.column_values(ctx)?;
        Ok(self.model.tree.route(&self.columns))
    }

    fn leaf_value(&self) -> std::result::Result<&'m [f64], UnsureReason> {
        let i = self.model.tree.route(&self.columns);
        match &self.model.tree.nodes[i] {
            Node::Leaf {
                unsafe_leaf: true, ..
            } => Err(UnsureReason::UnsafeLeaf),
            Node::Leaf { value, .. } => Ok(value),
            Node::Split { .. } => unreachable!("route ends at a leaf"),
        }
    }

    /// The decision for a context (see the type's documentation).
    pub fn decide(&mut self, ctx: &Context) -> Decision {
        match self.try_decide(ctx) {
            Ok(d) => d,
            Err(r) => Decision::Unsure(r),
        }
    }

    fn try_decide(&mut self, ctx: &Context) -> std::result::Result<Decision, UnsureReason> {
        self.prepare(ctx)?;
        match self.model.kind {
            ModelKind::Decision => {
                self.fill_columns(false)?;
                let best = leaf_best_choices(self.leaf_value()?);
                Ok(match best.first() {
                    None => Decision::Unsure(UnsureReason::UnsafeLeaf),
                    Some(&(p, _)) if p <= self.model.threshold => {
                        Decision::Unsure(UnsureReason::LowConfidence { confidence: p })
                    }
                    Some(&(_, i)) => Decision::Choice(i),
                })
            }
            ModelKind::Regression => {
                let choice_slot = self.plan.as_ref().expect("prepared").choice;
                let mut scores = Vec::with_capacity(self.model.choices.len());
                for (i, choice) in self.model.choices.iter().enumerate() {
                    self.slots[choice_slot] = Value::Str(choice.clone());
                    self.fill_columns(true)?;
                    let v = self.leaf_value()?;
                    scores.push((v.first().copied().unwrap_or(f64::NAN), i));
                }
                Ok(regression_decision(&scores, self.model.threshold))
            }
        }
    }

    /// Ranked choice indices, no threshold (PyTorch's `get_decisions_ranked`); `None` when
    /// unsure (operations, range guard, missing feature, unsafe leaf) or for regression models.
    pub fn ranked(&mut self, ctx: &Context) -> Option<Vec<usize>> {
        if self.model.kind != ModelKind::Decision {
            return None;
        }
        self.prepare(ctx).ok()?;
        self.fill_columns(false).ok()?;
        let v = self.leaf_value().ok()?;
        Some(leaf_best_choices(v).into_iter().map(|(_, i)| i).collect())
    }
}

/// `str(v) == s` without allocating for strings.
pub(super) fn value_str_eq(v: &Value, s: &str) -> bool {
    match v {
        Value::Str(x) => x == s,
        Value::Bool(true) => s == "True",
        Value::Bool(false) => s == "False",
        other => other.to_string() == s,
    }
}
