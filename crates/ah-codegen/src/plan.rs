//! What a model reads: the tree's columns, where each feature comes from (the context or
//! an augment operation), which operations the tree needs, and the tree as both languages
//! emit it: nested or as a table ([`MAX_NESTED_DEPTH`]), with the subtrees that decide
//! nothing written as one leaf ([`Plan::settled`]).

use std::collections::BTreeSet;

use ah_core::model::{leaf_best_choices, Column, FeatureRange, Model, ModelKind, Node};
use ah_core::ops::{builtin_operations, Operation};

use crate::error::CodegenError;

/// Trees deeper than this are emitted as a table and a loop rather than nested `if`s (in
/// Rust and Python alike: Python allows 100 nested blocks, rustc and rustfmt have limits of
/// their own), so the generated code is valid, and its generation iterative, at any depth.
pub const MAX_NESTED_DEPTH: usize = 50;

/// Where a feature's value comes from at decision time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Read from the context (a logged feature).
    Context,
    /// Computed by the model's operation of this index.
    Op(usize),
    /// The choice being scored (regression models' `choice` column).
    Choice,
}

/// A model, analysed for code generation.
#[derive(Debug)]
pub struct Plan<'m> {
    /// The model.
    pub model: &'m Model,
    /// The model's operations, parsed, in order.
    pub ops: Vec<Operation>,
    /// Per operation: PyTorch computes it itself (same name and expression as one of
    /// PyTorch's built-in operations for the model's optimization name).
    pub builtin: Vec<bool>,
    /// The tree is emitted as nested `if`s (else as a table and a loop).
    pub nested: bool,
    /// Per node of a nested tree: `Some(leaf)` when every leaf of its subtree predicts what
    /// node `leaf` predicts, so that both languages write the subtree as that one leaf (its
    /// splits decide nothing); `None` otherwise, and for every node of a table.
    pub settled: Vec<Option<usize>>,
}

impl<'m> Plan<'m> {
    /// Parses the model's operations and marks those PyTorch computes itself.
    pub fn new(model: &'m Model) -> Result<Self, CodegenError> {
        let mut ops = Vec::with_capacity(model.operations.len());
        for spec in &model.operations {
            let op = Operation::from_spec(spec).map_err(|e| CodegenError::Operation {
                heuristic: model.heuristic_name.clone(),
                operation: spec.name.clone(),
                message: e.to_string(),
            })?;
            ops.push(op);
        }
        let known = builtin_operations(&model.name);
        let builtin = ops
            .iter()
            .map(|op| {
                known.iter().any(|k| {
                    k.name == op.name && k.expr == op.expr && k.is_categorical == op.is_categorical
                })
            })
            .collect();
        let nested = model.tree.depth() <= MAX_NESTED_DEPTH;
        Ok(Plan {
            model,
            ops,
            builtin,
            nested,
            settled: if nested {
                settled(model)
            } else {
                vec![None; model.tree.nodes.len()]
            },
        })
    }

    /// Where `name` comes from when read by the tree (after all operations).
    pub fn source(&self, name: &str) -> Source {
        self.source_before(name, self.ops.len())
    }

    /// Where `name` comes from when read by operation `before` (only earlier operations
    /// count; a later operation of the same name shadows a context feature, as
    /// PyTorch's `context_dict` assignment does).
    pub fn source_before(&self, name: &str, before: usize) -> Source {
        if let Some(i) = self.ops[..before].iter().rposition(|o| o.name == name) {
            return Source::Op(i);
        }
        // Only the tree's columns see the choice being scored; operations and the range
        // guard run on the context before it is set (as in `ah_core::model::ModelEvaluator`).
        if self.model.kind == ModelKind::Regression && name == "choice" && before == self.ops.len()
        {
            return Source::Choice;
        }
        Source::Context
    }

    /// Where a range-guarded feature comes from (operations or the context, never the choice).
    pub fn guard_source(&self, name: &str) -> Source {
        match self.source(name) {
            Source::Choice => Source::Context,
            s => s,
        }
    }

    /// The feature ranges the range guard checks, in order: the model's, or none when it
    /// has no guard.
    pub fn guarded_ranges(&self) -> &'m [FeatureRange] {
        if self.model.range_guard {
            &self.model.feature_ranges
        } else {
            &[]
        }
    }

    /// Context features read by any operation, any column or the range guard, in
    /// first-use order: operations' inputs first, then columns, then guarded features.
    pub fn all_context_features(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut add = |n: &str| {
            if !out.iter().any(|o| o == n) {
                out.push(n.to_string());
            }
        };
        for (i, op) in self.ops.iter().enumerate() {
            for input in op.inputs() {
                if self.source_before(input, i) == Source::Context {
                    add(input);
                }
            }
        }
        for col in &self.model.columns {
            let f = feature_of(col);
            if self.source(f) == Source::Context {
                add(f);
            }
        }
        for r in self.guarded_ranges() {
            if self.guard_source(&r.name) == Source::Context {
                add(&r.name);
            }
        }
        out
    }

    /// Distinct columns the tree splits on, by index.
    pub fn used_columns(&self) -> BTreeSet<usize> {
        self.model
            .tree
            .nodes
            .iter()
            .filter_map(|n| match n {
                Node::Split { column, .. } => Some(*column),
                Node::Leaf { .. } => None,
            })
            .collect()
    }
}

impl Plan<'_> {
    /// The columns the emitted tree splits on: every split's in a table; in nested `if`s
    /// those above the settled subtrees (see [`Plan::settled`]).
    pub fn read_columns(&self) -> BTreeSet<usize> {
        let nodes = &self.model.tree.nodes;
        if !self.nested {
            return self.used_columns();
        }
        let mut out = BTreeSet::new();
        let mut todo = vec![0];
        while let Some(i) = todo.pop() {
            if let (
                Node::Split {
                    column,
                    left,
                    right,
                    ..
                },
                None,
            ) = (&nodes[i], self.settled[i])
            {
                out.insert(*column);
                todo.extend([*left, *right]);
            }
        }
        out
    }
}

/// [`Plan::settled`] of a checked model, whose children come after their parent: one pass
/// from the last node to the root, no recursion.
fn settled(model: &Model) -> Vec<Option<usize>> {
    let nodes = &model.tree.nodes;
    let mut out = vec![None; nodes.len()];
    for i in (0..nodes.len()).rev() {
        out[i] = match &nodes[i] {
            Node::Leaf { .. } => Some(i),
            Node::Split { left, right, .. } => match (out[*left], out[*right]) {
                (Some(a), Some(b)) if same_prediction(model, a, b) => Some(a),
                _ => None,
            },
        };
    }
    out
}

/// Whether leaves `a` and `b` predict the same: both unsafe, or the same sorted
/// distribution (decision); the same value, bit for bit (regression).
fn same_prediction(model: &Model, a: usize, b: usize) -> bool {
    let (
        Node::Leaf {
            value: va,
            unsafe_leaf: ua,
            ..
        },
        Node::Leaf {
            value: vb,
            unsafe_leaf: ub,
            ..
        },
    ) = (&model.tree.nodes[a], &model.tree.nodes[b])
    else {
        return false;
    };
    match model.kind {
        ModelKind::Decision if *ua || *ub => ua == ub,
        ModelKind::Decision => leaf_best_choices(va) == leaf_best_choices(vb),
        ModelKind::Regression => va[0].to_bits() == vb[0].to_bits(),
    }
}

/// The feature a column reads.
pub fn feature_of(column: &Column) -> &str {
    match column {
        Column::Numeric { name } => name,
        Column::OneHot { feature, .. } => feature,
    }
}
