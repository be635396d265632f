//! The model schema: what `ah-train` writes and `ah-codegen`, replay and the runtime read.
//!
//! A [`Model`] is a decision (or regression) tree over *columns*: numeric features (logged or
//! augmented) and one-hot columns of categorical features. Split semantics are those of
//! scikit-learn and PyTorch's generated code: a numeric split goes left when
//! `value <= threshold`; a one-hot split (`threshold` 0.5) goes left when the feature's string
//! form is **not** equal to the category, so a category never seen in training always goes left.
//!
//! The JSON is versioned by [`MODEL_SCHEMA_VERSION`]; readers refuse other versions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::context::Context;
use crate::error::{Error, Result};
use crate::heuristic::{regression_decision, HeuristicMetadata};
use crate::metadata::DeviceIdentity;
use crate::ops::{CompiledOps, EvalError, Operation};
use crate::value::Value;

/// Version of the model JSON schema this crate reads and writes.
pub const MODEL_SCHEMA_VERSION: u32 = 1;

/// Decision (classification over choices) or regression (predicted relative speed per choice).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    /// Leaves hold class distributions over [`Model::choices`].
    Decision,
    /// Leaves hold one predicted value; the tree takes the choice as a one-hot column `choice`.
    Regression,
}

/// An augment operation as recorded in the model: a name, the expression source (see
/// [`crate::ops`]) and whether the result is categorical.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperationSpec {
    /// Feature name the operation defines (`m*k`, `arith_intensity`, ...).
    pub name: String,
    /// Expression source over feature names.
    pub expr: String,
    /// Categorical results are one-hot encoded (compared as strings).
    pub categorical: bool,
}

/// One input column of the tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Column {
    /// A numeric feature, logged or augmented, compared as `f64`.
    Numeric {
        /// Feature name.
        name: String,
    },
    /// A one-hot column: 1 when `str(feature) == value`, else 0. Named `{feature}_{value}`.
    OneHot {
        /// Categorical feature name.
        feature: String,
        /// The category, as Python's `str()` prints it (`True`, `torch.float16`).
        value: String,
    },
}

impl Column {
    /// The column's name as PyTorch's training table names it (`m`, `mat1_dtype_torch.float16`).
    pub fn display_name(&self) -> String {
        match self {
            Column::Numeric { name } => name.clone(),
            Column::OneHot { feature, value } => format!("{feature}_{value}"),
        }
    }
}

/// A node of the tree; `nodes[0]` is the root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Node {
    /// Internal node: left when `column value <= threshold`.
    Split {
        /// Index into [`Model::columns`].
        column: usize,
        /// Split threshold.
        threshold: f64,
        /// Index of the left child (`<=`).
        left: usize,
        /// Index of the right child (`>`).
        right: usize,
    },
    /// Leaf.
    Leaf {
        /// Decision: class fractions over [`Model::choices`] (weighted, sum 1). Regression: one value.
        value: Vec<f64>,
        /// Training samples that reached the leaf.
        samples: u64,
        /// Unsafe leaves always answer unsure (PyTorch's `return None`).
        #[serde(default, rename = "unsafe")]
        unsafe_leaf: bool,
    },
}

/// The tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    /// Nodes, root first.
    pub nodes: Vec<Node>,
}

impl Tree {
    /// Follows the splits for the given column values and returns the leaf's node index.
    /// Column values are `f64` (one-hot columns 0.0/1.0). NaN compares false, so goes right.
    pub fn route(&self, columns: &[f64]) -> usize {
        let mut i = 0;
        loop {
            match &self.nodes[i] {
                Node::Split {
                    column,
                    threshold,
                    left,
                    right,
                } => {
                    i = if columns[*column] <= *threshold {
                        *left
                    } else {
                        *right
                    };
                }
                Node::Leaf { .. } => return i,
            }
        }
    }

    /// Depth of the tree (a single leaf has depth 0). Iterative, so a chain of any depth is
    /// fine; out-of-range children are skipped and at most `nodes.len()` nodes are visited, so
    /// an unvalidated graph (a cycle, a shared child) cannot make it loop or overflow.
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack = Vec::new();
        if !self.nodes.is_empty() {
            stack.push((0usize, 0usize));
        }
        let mut visits = 0;
        while let Some((i, d)) = stack.pop() {
            visits += 1;
            if visits > self.nodes.len() {
                break;
            }
            deepest = deepest.max(d);
            if let Some(Node::Split { left, right, .. }) = self.nodes.get(i) {
                stack.extend([(*left, d + 1), (*right, d + 1)]);
            }
        }
        deepest
    }

    /// Number of leaves.
    pub fn leaves(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| matches!(n, Node::Leaf { .. }))
            .count()
    }
}

/// Ranking settings: the heuristic returns the top `top_k` choices plus `always_included`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankingSpec {
    /// How many choices to return.
    pub top_k: usize,
    /// Choices appended when missing (`extern_mm`).
    pub always_included: Vec<String>,
}

/// Range of a numeric feature seen in training (for the range guard).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeatureRange {
    /// Feature name (logged or augmented numeric).
    pub name: String,
    /// Smallest value seen.
    pub min: f64,
    /// Largest value seen.
    pub max: f64,
}

impl FeatureRange {
    /// The range guard for one feature's value: missing (or not numeric) and outside the range
    /// (NaN is outside every range) are the two reasons to be unsure.
    fn check(&self, value: Option<f64>) -> std::result::Result<(), UnsureReason> {
        let v = value.ok_or_else(|| UnsureReason::MissingFeature {
            feature: self.name.clone(),
        })?;
        if !(self.min <= v && v <= self.max) {
            return Err(UnsureReason::OutOfRange {
                feature: self.name.clone(),
            });
        }
        Ok(())
    }
}

/// How the model was chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainingInfo {
    /// `upstream` (PyTorch's rule) or the name of our selection rule.
    pub mode: String,
    /// `cart` or `linfa-trees`.
    pub learner: String,
    /// `gini`, `entropy` or `squared_error`.
    pub criterion: String,
    /// Maximum depth of the chosen model (`None` = unlimited).
    pub max_depth: Option<usize>,
    /// `min_samples_leaf` as given (a count like `10` or a fraction like `0.01`).
    pub min_samples_leaf: f64,
    /// Seed of the split.
    pub seed: u64,
    /// Anything else the trainer wants to record (allowed wrong share, cost of autotuning, ...).
    #[serde(default)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// Where the model came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// sha256 of the training log's uncompressed bytes, hex.
    pub dataset_hash: String,
    /// The training log's file name as given.
    pub dataset: String,
    /// `ah-train` version.
    pub tool_version: String,
    /// The command line that produced the model.
    pub command: String,
}

/// A trained heuristic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    /// Always [`MODEL_SCHEMA_VERSION`] when written by this crate.
    pub schema_version: u32,
    /// The heuristic's identifier (class and module name), e.g. `PadMMH100`.
    pub heuristic_name: String,
    /// The optimization name from the log metadata, e.g. `pad_mm`.
    pub name: String,
    /// Decision or regression.
    pub kind: ModelKind,
    /// Device identity the heuristic is valid for.
    pub precondition: DeviceIdentity,
    /// Choices in class-index order.
    pub choices: Vec<String>,
    /// Default choice used for speedup metrics (not by the heuristic itself).
    pub default_choice: Option<String>,
    /// Logged numerical features, in metadata order.
    pub numerical_features: Vec<String>,
    /// Logged categorical features, in metadata order.
    pub categorical_features: Vec<String>,
    /// Augment operations to compute before the tree, in order (later ones may read earlier ones).
    pub operations: Vec<OperationSpec>,
    /// The tree's input columns.
    pub columns: Vec<Column>,
    /// The tree.
    pub tree: Tree,
    /// Decision: `max probability <= threshold` is unsure. Regression: `best / second <= threshold`.
    pub threshold: f64,
    /// Ranking settings when trained with `--ranking`.
    #[serde(default)]
    pub ranking: Option<RankingSpec>,
    /// Numeric feature ranges seen in training.
    #[serde(default)]
    pub feature_ranges: Vec<FeatureRange>,
    /// When true, a numeric feature outside its training range makes the heuristic unsure.
    #[serde(default)]
    pub range_guard: bool,
    /// How the model was chosen.
    pub training: TrainingInfo,
    /// Metrics per set (`train`, `val`, `test`, extra `--data` sets), key -> value.
    #[serde(default)]
    pub metrics: BTreeMap<String, BTreeMap<String, f64>>,
    /// Where it came from.
    pub provenance: Provenance,
}

/// Why a model or heuristic gave no choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum UnsureReason {
    /// The device or context precondition does not hold.
    Precondition,
    /// No registered heuristic matches.
    NoHeuristic,
    /// The leaf was marked unsafe in training.
    UnsafeLeaf,
    /// The best probability (decision) or ratio (regression) is at or below the threshold.
    LowConfidence {
        /// The probability or ratio that was too low.
        confidence: f64,
    },
    /// A numeric feature lies outside the range seen in training.
    OutOfRange {
        /// The feature.
        feature: String,
    },
    /// The context lacks a feature the model reads.
    MissingFeature {
        /// The feature.
        feature: String,
    },
    /// The answer is not among the caller's choices.
    NotInChoices,
}

/// A model's or heuristic's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Index into the choices.
    Choice(usize),
    /// No answer; the caller falls back (autotunes).
    Unsure(UnsureReason),
}

impl Decision {
    /// The chosen index, if any.
    pub fn choice(&self) -> Option<usize> {
        match self {
            Decision::Choice(i) => Some(*i),
            Decision::Unsure(_) => None,
        }
    }
}

/// Sorted leaf entries `(probability, class index)` as PyTorch's `get_best_choices` emits
/// them: probability descending, ties in class-index order, zero probabilities dropped.
pub fn leaf_best_choices(value: &[f64]) -> Vec<(f64, usize)> {
    let mut v: Vec<(f64, usize)> = value
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, p)| *p > 0.0)
        .map(|(i, p)| (p, i))
        .collect();
    v.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    v
}

/// Why a heuristic name cannot be used (see [`check_heuristic_name`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("heuristic name `{}` is not valid: {reason}", name.escape_debug())]
pub struct HeuristicNameError {
    /// The name as given.
    pub name: String,
    /// What is wrong with it.
    pub reason: String,
}

/// Names the generated code uses itself (the Rust module's imports, types, statics and the
/// prelude; the Python artifact's imports): a heuristic of one of these names would clash.
const TAKEN_NAMES: &[&str] = &[
    "Columns",
    "Context",
    "DeviceIdentity",
    "EvalError",
    "LearnedHeuristic",
    "ModelKind",
    "OnceLock",
    "Operation",
    "Prediction",
    "UnsureKind",
    "Value",
    "Option",
    "Result",
    "Some",
    "None",
    "Ok",
    "Err",
    "String",
    "Vec",
    "Box",
    "Self",
    "TreeNode",
    "TREE",
    "HEURISTIC",
    "CHOICES",
    "OPERATIONS",
    // Names the Python artifact imports.
    "Optional",
    "AHContext",
    "AHMetadata",
    "Choice",
    "LearnedHeuristicDecision",
    "LearnedHeuristicRegression",
];

/// Rust keywords (strict and reserved, all editions), which cannot name a module.
const RUST_KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

/// The one rule for heuristic names, shared by every tool (`ah-train --heuristic-name`
/// checks it before training, `ah-codegen` and model validation after): the name must be a
/// Python class name, a Rust type name and, in snake case ([`heuristic_module_name`]), a Rust
/// module and file name. That is UpperCamelCase ASCII letters and digits, starting with a
/// capital letter, not a name the generated module uses itself, and not mapping to a keyword.
pub fn check_heuristic_name(name: &str) -> std::result::Result<(), HeuristicNameError> {
    let bad = |reason: String| HeuristicNameError {
        name: name.to_string(),
        reason,
    };
    let first = name
        .chars()
        .next()
        .ok_or_else(|| bad("it is empty".into()))?;
    if !first.is_ascii_uppercase() {
        return Err(bad("it must start with an ASCII capital letter".into()));
    }
    if let Some(c) = name.chars().find(|c| !c.is_ascii_alphanumeric()) {
        return Err(bad(format!(
            "it contains `{}`; only ASCII letters and digits are allowed",
            c.escape_debug()
        )));
    }
    if TAKEN_NAMES.contains(&name) {
        return Err(bad(
            "the generated module already uses this name; pick a more specific one".into(),
        ));
    }
    let module = heuristic_module_name(name);
    if RUST_KEYWORDS.contains(&module.as_str()) || module == "lib" {
        return Err(bad(format!("its module name `{module}` is reserved")));
    }
    Ok(())
}

/// The Rust module (and file stem) of a heuristic: snake case of the UpperCamelCase name,
/// keeping runs of capitals together (`PadMMA100` -> `pad_mma100`,
/// `PadMMA100Decision` -> `pad_mma100_decision`).
pub fn heuristic_module_name(heuristic: &str) -> String {
    let chars: Vec<char> = heuristic.chars().collect();
    let mut out = String::with_capacity(chars.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if prev.is_ascii_lowercase()
                || (prev.is_ascii_uppercase() && next_lower)
                || (prev.is_ascii_digit() && next_lower)
            {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Name of the categorical column through which a regression tree sees the choice.
pub const CHOICE_FEATURE: &str = "choice";

impl Model {
    /// The model's augment operations, parsed.
    pub fn operations(&self) -> Result<Vec<Operation>> {
        self.operations.iter().map(Operation::from_spec).collect()
    }

    /// PyTorch's generated `check_precondition`: same optimization name and device identity.
    pub fn check_precondition(&self, metadata: &HeuristicMetadata<'_>) -> bool {
        metadata.name == self.name && metadata.device == self.precondition
    }

    /// Checks the model's internal consistency: the heuristic name ([`check_heuristic_name`]),
    /// schema version, operations parse and read only logged features or earlier operations,
    /// columns and child indices are in range (children after their parent, so the tree has no
    /// cycle), the tree is non-empty, leaves have the right number of values and the default
    /// choice is one of the choices.
    pub fn validate(&self) -> Result<()> {
        if let Err(e) = check_heuristic_name(&self.heuristic_name) {
            return Err(Error::Other(e.to_string()));
        }
        let bad = |m: String| {
            Err(Error::Other(format!(
                "model `{}`: {m}",
                self.heuristic_name
            )))
        };
        if self.schema_version != MODEL_SCHEMA_VERSION {
            return bad(format!(
                "schema version {} is not supported (this build reads version {MODEL_SCHEMA_VERSION}); regenerate the model with this version of ah-train",
                self.schema_version
            ));
        }
        let ops = self.operations()?;
        let mut available: Vec<String> = self
            .numerical_features
            .iter()
            .chain(&self.categorical_features)
            .cloned()
            .collect();
        // Operations run before the regression loop sets `choice`: they cannot read it.
        crate::ops::check_operations(&ops, &available)?;
        available.extend(ops.iter().map(|o| o.name.clone()));
        if self.kind == ModelKind::Regression {
            available.push(CHOICE_FEATURE.to_string());
        }
        for col in &self.columns {
            let f = match col {
                Column::Numeric { name } => name,
                Column::OneHot { feature, .. } => feature,
            };
            if !available.contains(f) {
                return bad(format!(
                    "column `{}` reads `{f}`, which is neither a logged feature nor an operation",
                    col.display_name()
                ));
            }
        }
        for r in &self.feature_ranges {
            if !available.contains(&r.name) {
                return bad(format!("feature range of unknown feature `{}`", r.name));
            }
        }
        if self.tree.nodes.is_empty() {
            return bad("the tree has no nodes".into());
        }
        let n = self.tree.nodes.len();
        for (i, node) in self.tree.nodes.iter().enumerate() {
            match node {
                Node::Split {
                    column,
                    left,
                    right,
                    ..
                } => {
                    if *column >= self.columns.len() {
                        return bad(format!(
                            "node {i} splits on column {column}, but there are {} columns",
                            self.columns.len()
                        ));
                    }
                    if *left >= n || *right >= n || *left <= i || *right <= i {
                        return bad(format!("node {i} has children {left}/{right} out of order or range (nodes: {n})"));
                    }
                }
                Node::Leaf { value, .. } => {
                    let want = match self.kind {
                        ModelKind::Decision => self.choices.len(),
                        ModelKind::Regression => 1,
                    };
                    if value.len() != want {
                        return bad(format!(
                            "leaf {i} has {} values, expected {want}",
                            value.len()
                        ));
                    }
                }
            }
        }
        if let Some(d) = &self.default_choice {
            if !self.choices.contains(d) {
                return bad(format!(
                    "the default choice {:?} is not among the choices {:?}",
                    d, self.choices
                ));
            }
        }
        Ok(())
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

/// `str(v) == s` without allocating for strings.
fn value_str_eq(v: &Value, s: &str) -> bool {
    match v {
        Value::Str(x) => x == s,
        Value::Bool(true) => s == "True",
        Value::Bool(false) => s == "False",
        other => other.to_string() == s,
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
/// 4. the tree is walked with [`Tree::route`] (`<=` goes left); an unsafe leaf is
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::heuristic::{LearnedHeuristic, Prediction, UnsureKind};

    fn leaf(value: Vec<f64>, unsafe_leaf: bool) -> Node {
        Node::Leaf {
            value,
            samples: 10,
            unsafe_leaf,
        }
    }

    fn split(column: usize, threshold: f64, left: usize, right: usize) -> Node {
        Node::Split {
            column,
            threshold,
            left,
            right,
        }
    }

    /// A decision model over `m*k` (an augment operation) and a one-hot `mat1_dtype` column.
    pub(crate) fn decision_model() -> Model {
        Model {
            schema_version: MODEL_SCHEMA_VERSION,
            heuristic_name: "TestMM".into(),
            name: "mm".into(),
            kind: ModelKind::Decision,
            precondition: DeviceIdentity::H100,
            choices: vec!["a".into(), "b".into(), "c".into()],
            default_choice: None,
            numerical_features: vec!["m".into(), "k".into(), "n".into()],
            categorical_features: vec!["mat1_dtype".into()],
            operations: crate::ops::builtin_operations("mm")
                .iter()
                .map(Operation::spec)
                .collect(),
            columns: vec![
                Column::Numeric { name: "m*k".into() },
                Column::OneHot {
                    feature: "mat1_dtype".into(),
                    value: "torch.float16".into(),
                },
                Column::Numeric { name: "n".into() },
            ],
            tree: Tree {
                nodes: vec![
                    split(0, 1000.5, 1, 2),
                    leaf(vec![0.0, 0.9, 0.1], false),
                    split(1, 0.5, 3, 4),
                    leaf(vec![1.0, 0.0, 0.0], true),
                    split(2, 64.0, 5, 6),
                    leaf(vec![0.25, 0.25, 0.5], false),
                    leaf(vec![0.4, 0.2, 0.4], false),
                ],
            },
            threshold: 0.45,
            ranking: None,
            feature_ranges: vec![FeatureRange {
                name: "m".into(),
                min: 1.0,
                max: 4096.0,
            }],
            range_guard: false,
            training: TrainingInfo {
                mode: "upstream".into(),
                learner: "cart".into(),
                criterion: "gini".into(),
                max_depth: Some(5),
                min_samples_leaf: 1.0,
                seed: 42,
                extra: BTreeMap::new(),
            },
            metrics: BTreeMap::new(),
            provenance: Provenance {
                dataset_hash: "0".repeat(64),
                dataset: "t.txt".into(),
                tool_version: crate::TOOL_VERSION.into(),
                command: "test".into(),
            },
        }
    }

    fn ctx(m: i64, k: i64, n: i64, dtype: &str) -> Context {
        let mut c = Context::new();
        c.add("m", m)
            .add("k", k)
            .add("n", n)
            .add_categorical("mat1_dtype", dtype);
        c
    }

    #[test]
    fn decision_rules() {
        let model = decision_model();
        model.validate().unwrap();
        // m*k = 100 <= 1000.5: leaf [0, .9, .1] -> b.
        assert_eq!(
            model.decide(&ctx(10, 10, 5, "torch.float16")),
            Decision::Choice(1)
        );
        assert_eq!(
            model.ranked(&ctx(10, 10, 5, "torch.float16")),
            Some(vec![1, 2])
        );
        // m*k = 1001 > 1000.5, not fp16: unsafe leaf.
        assert_eq!(
            model.decide(&ctx(7, 143, 5, "torch.bfloat16")),
            Decision::Unsure(UnsureReason::UnsafeLeaf)
        );
        assert_eq!(model.ranked(&ctx(7, 143, 5, "torch.bfloat16")), None);
        // fp16, n = 64 <= 64: [0.25, 0.25, 0.5] -> c with 0.5 > 0.45.
        assert_eq!(
            model.decide(&ctx(100, 100, 64, "torch.float16")),
            Decision::Choice(2)
        );
        assert_eq!(
            model.ranked(&ctx(100, 100, 64, "torch.float16")),
            Some(vec![2, 0, 1])
        );
        // n = 65: [0.4, 0.2, 0.4] -> 0.4 <= 0.45 is unsure; ties keep class order in ranking.
        assert_eq!(
            model.decide(&ctx(100, 100, 65, "torch.float16")),
            Decision::Unsure(UnsureReason::LowConfidence { confidence: 0.4 })
        );
        assert_eq!(
            model.ranked(&ctx(100, 100, 65, "torch.float16")),
            Some(vec![0, 2, 1])
        );
        // Missing feature: the operation's input is named.
        let mut c = Context::new();
        c.add("m", 1i64)
            .add("n", 1i64)
            .add_categorical("mat1_dtype", "torch.float16");
        assert_eq!(
            model.decide(&c),
            Decision::Unsure(UnsureReason::MissingFeature {
                feature: "k".into()
            })
        );
        // Column values: ops computed on a copy, one-hot by str().
        let ops = model.operations().unwrap();
        let c = ctx(3, 4, 5, "torch.float16");
        assert_eq!(model.column_values(&c, &ops).unwrap(), vec![12.0, 1.0, 5.0]);
        assert!(c.get("m*k").is_none(), "the caller's context is untouched");
    }

    #[test]
    fn range_guard_and_bad_operations() {
        let mut model = decision_model();
        assert_eq!(
            model.decide(&ctx(5000, 1, 5, "torch.float16")),
            Decision::Choice(2)
        );
        model.range_guard = true;
        assert_eq!(
            model.decide(&ctx(5000, 1, 5, "torch.float16")),
            Decision::Unsure(UnsureReason::OutOfRange {
                feature: "m".into()
            })
        );
        assert_eq!(
            model.decide(&ctx(4096, 0, 5, "torch.float16")),
            Decision::Choice(1)
        );
        // A failing operation (division by zero) makes the model unsure, naming it.
        model.operations.push(OperationSpec {
            name: "k/n".into(),
            expr: "k / n".into(),
            categorical: false,
        });
        model.columns[2] = Column::Numeric { name: "k/n".into() };
        model.validate().unwrap();
        assert_eq!(
            model.decide(&ctx(100, 100, 0, "torch.float16")),
            Decision::Unsure(UnsureReason::MissingFeature {
                feature: "k/n".into()
            })
        );
        let mut unknown = model.clone();
        unknown.columns.push(Column::OneHot {
            feature: "nope".into(),
            value: "1".into(),
        });
        let err = unknown.validate().unwrap_err().to_string();
        assert!(err.contains("column `nope_1` reads `nope`"), "{err}");
        model.operations.push(OperationSpec {
            name: "bad".into(),
            expr: "q +".into(),
            categorical: false,
        });
        assert!(model.validate().is_err());
        assert!(matches!(
            model.decide(&ctx(1, 1, 1, "x")),
            Decision::Unsure(_)
        ));
    }

    /// What generated code for `decision_model()` looks like; its `decide` (the trait's) must
    /// agree with the in-memory model on every context.
    struct Generated;
    static DIST_B: [(f64, u16); 2] = [(0.9, 1), (0.1, 2)];
    static DIST_C: [(f64, u16); 3] = [(0.5, 2), (0.25, 0), (0.25, 1)];
    static DIST_T: [(f64, u16); 3] = [(0.4, 0), (0.4, 2), (0.2, 1)];
    impl LearnedHeuristic for Generated {
        fn name(&self) -> &'static str {
            "mm"
        }
        fn heuristic_name(&self) -> &'static str {
            "TestMM"
        }
        fn choices(&self) -> &'static [&'static str] {
            &["a", "b", "c"]
        }
        fn device(&self) -> DeviceIdentity {
            DeviceIdentity::H100
        }
        fn confidence_threshold(&self) -> f64 {
            0.45
        }
        fn predict(&self, context: &Context, _choice: Option<usize>) -> Prediction {
            let (Some(m), Some(k), Some(n)) = (
                context.get("m").and_then(Value::as_f64),
                context.get("k").and_then(Value::as_f64),
                context.get("n").and_then(Value::as_f64),
            ) else {
                return Prediction::Unsure(UnsureKind::MissingFeature("m"));
            };
            let fp16 =
                context.get("mat1_dtype").map(|v| v.to_string()) == Some("torch.float16".into());
            if m * k <= 1000.5 {
                Prediction::Distribution(&DIST_B)
            } else if !fp16 {
                Prediction::Unsure(UnsureKind::UnsafeLeaf)
            } else if n <= 64.0 {
                Prediction::Distribution(&DIST_C)
            } else {
                Prediction::Distribution(&DIST_T)
            }
        }
    }

    #[test]
    fn model_and_generated_code_agree() {
        let model = decision_model();
        let mut eval = ModelEvaluator::new(&model).unwrap();
        for m in [1, 7, 10, 31, 32, 33, 100, 1000] {
            for k in [1, 31, 32, 33, 143, 1000] {
                for n in [1, 63, 64, 65, 1000] {
                    for dtype in ["torch.float16", "torch.bfloat16"] {
                        let c = ctx(m, k, n, dtype);
                        assert_eq!(eval.decide(&c), Generated.decide(&c), "{m} {k} {n} {dtype}");
                        assert_eq!(model.decide(&c), Generated.decide(&c));
                        let names = eval.ranked(&c).map(|v| {
                            v.iter()
                                .map(|&i| model.choices[i].clone())
                                .collect::<Vec<_>>()
                        });
                        let gen = Generated
                            .ranked(&c)
                            .map(|v| v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
                        assert_eq!(names, gen);
                    }
                }
            }
        }
    }

    #[test]
    fn regression_rules() {
        let mut model = decision_model();
        model.kind = ModelKind::Regression;
        model.choices = vec!["orig".into(), "pad".into()];
        model.operations.clear();
        model.columns = vec![
            Column::Numeric { name: "m".into() },
            Column::OneHot {
                feature: "choice".into(),
                value: "orig".into(),
            },
            Column::OneHot {
                feature: "choice".into(),
                value: "pad".into(),
            },
        ];
        model.tree = Tree {
            nodes: vec![
                split(0, 100.0, 1, 2),
                leaf(vec![3.0], true),
                split(1, 0.5, 3, 4),
                leaf(vec![2.0], false),
                leaf(vec![1.0], false),
            ],
        };
        model.threshold = 1.5;
        model.validate().unwrap();
        assert_eq!(model.decide(&ctx(200, 1, 1, "x")), Decision::Choice(1));
        assert_eq!(model.ranked(&ctx(200, 1, 1, "x")), None);
        assert_eq!(
            model.decide(&ctx(50, 1, 1, "x")),
            Decision::Unsure(UnsureReason::UnsafeLeaf)
        );
        model.threshold = 2.0;
        assert_eq!(
            model.decide(&ctx(200, 1, 1, "x")),
            Decision::Unsure(UnsureReason::LowConfidence { confidence: 2.0 })
        );
    }

    /// The dynamic reference: `Model::column_values` (context lookups by name) and the rules.
    fn reference_decide(model: &Model, ctx: &Context) -> Decision {
        let ops = model.operations().unwrap();
        let leaf_of = |c: &Context| -> std::result::Result<Vec<f64>, UnsureReason> {
            let cols = model.column_values(c, &ops)?;
            match &model.tree.nodes[model.tree.route(&cols)] {
                Node::Leaf {
                    unsafe_leaf: true, ..
                } => Err(UnsureReason::UnsafeLeaf),
                Node::Leaf { value, .. } => Ok(value.clone()),
                Node::Split { .. } => unreachable!(),
            }
        };
        match model.kind {
            ModelKind::Decision => match leaf_of(ctx) {
                Err(r) => Decision::Unsure(r),
                Ok(value) => match leaf_best_choices(&value).first() {
                    None => Decision::Unsure(UnsureReason::UnsafeLeaf),
                    Some(&(p, _)) if p <= model.threshold => {
                        Decision::Unsure(UnsureReason::LowConfidence { confidence: p })
                    }
                    Some(&(_, i)) => Decision::Choice(i),
                },
            },
            ModelKind::Regression => {
                let mut scores = Vec::new();
                for (i, choice) in model.choices.iter().enumerate() {
                    let mut c = ctx.clone();
                    c.set(CHOICE_FEATURE, Value::Str(choice.clone()), true);
                    match leaf_of(&c) {
                        Err(r) => return Decision::Unsure(r),
                        Ok(value) => scores.push((value[0], i)),
                    }
                }
                regression_decision(&scores, model.threshold)
            }
        }
    }

    /// Contexts with several layouts (orders, extra and duplicate features, a missing one),
    /// zero and huge dimensions, other dtypes, NaN.
    fn varied_contexts() -> Vec<Context> {
        let mut out = Vec::new();
        let dims = [0i64, 1, 7, 10, 31, 64, 65, 100, 143, 1000, 5000, 1 << 40];
        for (i, &m) in dims.iter().enumerate() {
            for (j, &k) in dims.iter().enumerate() {
                let n = dims[(i * 7 + j * 3) % dims.len()];
                let dtype = ["torch.float16", "torch.bfloat16", "True"][(i + j) % 3];
                let mut c = Context::new();
                match (i + 2 * j) % 5 {
                    0 => {
                        c.add("m", m).add("k", k).add("n", n);
                        c.add_categorical("mat1_dtype", dtype);
                    }
                    1 => {
                        c.add_categorical("mat1_dtype", dtype);
                        c.add("n", n).add("k", k).add("m", m);
                    }
                    2 => {
                        c.add("extra", 1.5)
                            .add("m", m)
                            .add("k", k)
                            .add("n", n)
                            .add("m", m + 1);
                        c.add_categorical("mat1_dtype", dtype)
                            .add_categorical("choice", "b");
                    }
                    3 => {
                        c.add("m", m)
                            .add("n", n)
                            .add_categorical("mat1_dtype", dtype);
                    }
                    _ => {
                        c.add("m", m as f64 + 0.5).add("k", k).add("n", f64::NAN);
                        c.add_categorical("mat1_dtype", dtype);
                    }
                }
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn compiled_evaluator_equals_the_dynamic_reference() {
        let mut decision = decision_model();
        let mut regression = decision_model();
        regression.kind = ModelKind::Regression;
        regression.choices = vec!["a".into(), "b".into()];
        regression.columns.push(Column::OneHot {
            feature: "choice".into(),
            value: "a".into(),
        });
        regression.tree = Tree {
            nodes: vec![
                split(3, 0.5, 1, 2),
                split(0, 1000.5, 3, 4),
                split(2, 64.0, 5, 6),
                leaf(vec![2.0], false),
                leaf(vec![1.0], true),
                leaf(vec![0.5], false),
                leaf(vec![3.0], false),
            ],
        };
        regression.threshold = 1.2;
        regression.validate().unwrap();
        let mut outcomes = std::collections::BTreeSet::new();
        for guard in [false, true] {
            decision.range_guard = guard;
            regression.range_guard = guard;
            for model in [&decision, &regression] {
                let ops = model.operations().unwrap();
                let mut eval = ModelEvaluator::new(model).unwrap();
                for c in varied_contexts() {
                    let got = eval.decide(&c);
                    assert_eq!(got, reference_decide(model, &c), "{:?} {c:?}", model.kind);
                    outcomes.insert(format!("{got:?}").chars().take(12).collect::<String>());
                    // Bitwise, so that NaN columns compare equal.
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    let want = model.column_values(&c, &ops).map(|v| bits(&v));
                    assert_eq!(eval.column_values(&c).map(bits), want, "{c:?}");
                    if model.kind == ModelKind::Decision {
                        let ranked = eval.ranked(&c);
                        assert_eq!(ranked, model.ranked(&c));
                    }
                }
            }
        }
        // Every kind of outcome was exercised.
        assert!(outcomes.len() >= 5, "{outcomes:?}");
    }

    #[test]
    fn validation_refuses_a_foreign_default_choice_and_bad_names() {
        let mut model = decision_model();
        model.validate().unwrap();
        model.default_choice = Some("nope".into());
        let err = model.validate().unwrap_err().to_string();
        assert!(
            err.contains("default choice \"nope\" is not among"),
            "{err}"
        );
        let mut model = decision_model();
        for (name, why) in [
            ("Pad_MM", "contains `_`"),
            ("padMM", "capital"),
            ("Self", "already uses"),
            ("TreeNode", "already uses"),
            ("Type", "reserved"),
            ("Lib", "reserved"),
            ("Pad\nMM", "contains `\\n`"),
        ] {
            model.heuristic_name = name.into();
            let err = model.validate().unwrap_err().to_string();
            assert!(err.contains("heuristic name") && err.contains(why), "{err}");
        }
        assert_eq!(
            heuristic_module_name("PadMMA100Decision"),
            "pad_mma100_decision"
        );
    }

    #[test]
    fn depth_of_a_deep_chain_needs_no_recursion() {
        let n = 300_000;
        let mut nodes = Vec::with_capacity(2 * n + 1);
        for i in 0..n {
            nodes.push(split(0, 1.0, 2 * i + 1, 2 * i + 2));
            nodes.push(leaf(vec![1.0], false));
        }
        nodes.push(leaf(vec![1.0], false));
        let tree = Tree { nodes };
        assert_eq!(tree.depth(), n);
        // A cycle (never valid) terminates too.
        let cyclic = Tree {
            nodes: vec![split(0, 1.0, 0, 0)],
        };
        assert!(cyclic.depth() <= 1);
    }
}
