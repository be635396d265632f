//! The model's types, as its JSON holds them: the [`Model`], its tree over [`Column`]s, the
//! training ranges and provenance. Versioned by [`MODEL_SCHEMA_VERSION`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::decision::UnsureReason;
use crate::metadata::DeviceIdentity;
use crate::ops::OperationSpec;

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
    pub(crate) fn check(&self, value: Option<f64>) -> std::result::Result<(), UnsureReason> {
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
    /// Only with the `json` feature (the tools'); without it, as in the generated heuristics,
    /// the entries are skipped when a model is read.
    #[cfg(feature = "json")]
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

/// Name of the categorical column through which a regression tree sees the choice.
pub const CHOICE_FEATURE: &str = "choice";
