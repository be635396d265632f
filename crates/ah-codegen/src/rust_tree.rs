//! The tree of a generated Rust module, as data for the template: nested `if`s, or for trees
//! deeper than [`MAX_NESTED_DEPTH`] a table of nodes walked by a loop (the plan decides
//! which, and which subtrees are one leaf, for both languages).

use std::collections::BTreeMap;

use ah_core::model::{Column, ModelKind, Node};
use ah_core::value::python_float_repr;
use serde::Serialize;

use crate::escape::comment;
use crate::plan::Plan;
pub use crate::plan::MAX_NESTED_DEPTH;
use crate::rust_expr::f64_lit;

/// One line of the nested `if`s.
#[derive(Serialize)]
pub struct TreeLine {
    /// `if`, `else_if`, `else`, `end` or `leaf`.
    kind: &'static str,
    /// The condition (`if`, `else_if`) or the prediction (`leaf`).
    code: String,
    /// The split as the model states it (`if`, `else_if`).
    doc: String,
}

/// An arm of `split_goes_left` (table form).
#[derive(Serialize)]
pub struct SplitArm {
    column: usize,
    cond: String,
}

/// The tree, ready for the template.
#[derive(Serialize)]
pub struct Tree {
    /// Nested `if`s (empty in the table form).
    lines: Vec<TreeLine>,
    /// Table form: the nodes, root first, one `TreeNode` per line as rustfmt writes it (empty
    /// when nested). Rendered here rather than by a template loop, and skipped by rustfmt:
    /// a tree of 400,001 nodes took 16 s to generate, 8 s of it rustfmt on this table.
    table: String,
    /// Table form: how many nodes `table` holds.
    table_len: usize,
    /// Table form: one arm per column the tree splits on.
    arms: Vec<SplitArm>,
    /// Table form: some split is numeric (the threshold is read).
    numeric: bool,
    /// The columns parameter is read.
    reads_columns: bool,
    /// Depth beyond which the table form is used.
    max_nested_depth: usize,
    /// Nested form: a chain of `else if`s tests a condition it tested before (the tree splits
    /// again where its path already decided; clippy's `ifs_same_cond`).
    repeats_condition: bool,
}

/// The tree of `plan`'s model; `lazy(c)` says whether one-hot column `c` holds the context's
/// `&Value` (compared with its category `CATEGORY_{category(c)}`) rather than a `bool`;
/// `tables` maps each safe decision leaf to its distribution's table (`DIST_{k}`).
pub fn tree(
    plan: &Plan<'_>,
    lazy: &dyn Fn(usize) -> Option<usize>,
    tables: &BTreeMap<usize, usize>,
) -> Tree {
    let model = plan.model;
    let used = plan.read_columns();
    let goes_left = |column: usize, threshold: &str| match &model.columns[column] {
        Column::Numeric { .. } => format!("c.c{column} <= {threshold}"),
        // One-hot values are 0/1 and the threshold lies in [0, 1): left is "not equal".
        Column::OneHot { .. } => match lazy(column) {
            Some(k) => format!("!CATEGORY_{k}.matches(c.c{column})"),
            None => format!("!c.c{column}"),
        },
    };
    let mut out = Tree {
        lines: Vec::new(),
        table: String::new(),
        table_len: model.tree.nodes.len(),
        arms: Vec::new(),
        numeric: used
            .iter()
            .any(|c| matches!(model.columns[*c], Column::Numeric { .. })),
        reads_columns: !used.is_empty(),
        max_nested_depth: MAX_NESTED_DEPTH,
        repeats_condition: false,
    };
    if plan.nested {
        nested(plan, tables, &goes_left, 0, "if", &mut out.lines);
        out.repeats_condition = repeats_condition(&out.lines);
        return out;
    }
    for (i, node) in model.tree.nodes.iter().enumerate() {
        let row = match node {
            Node::Split {
                column,
                threshold,
                left,
                right,
            } => format!(
                "    TreeNode::Split({column}, {}, {left}, {right}),\n",
                f64_lit(*threshold)
            ),
            Node::Leaf { .. } => format!("    TreeNode::Leaf({}),\n", leaf_expr(plan, tables, i)),
        };
        out.table.push_str(&row);
    }
    out.arms = used
        .iter()
        .map(|&c| SplitArm {
            column: c,
            cond: goes_left(c, "threshold"),
        })
        .collect();
    out
}

/// Nested `if`s from node `i` (`kind` is `if`, or `else_if` for a right child that splits);
/// only for trees of at most [`MAX_NESTED_DEPTH`] levels, so the recursion is bounded.
fn nested(
    plan: &Plan<'_>,
    tables: &BTreeMap<usize, usize>,
    goes_left: &dyn Fn(usize, &str) -> String,
    i: usize,
    kind: &'static str,
    lines: &mut Vec<TreeLine>,
) {
    let model = plan.model;
    let line = |kind, code| TreeLine {
        kind,
        code,
        doc: String::new(),
    };
    if let Some(leaf) = plan.settled[i] {
        lines.push(line("leaf", leaf_expr(plan, tables, leaf)));
        return;
    }
    match &model.tree.nodes[i] {
        Node::Split {
            column,
            threshold,
            left,
            right,
        } => {
            lines.push(TreeLine {
                kind,
                code: goes_left(*column, &f64_lit(*threshold)),
                doc: split_doc(&model.columns[*column], *threshold),
            });
            nested(plan, tables, goes_left, *left, "if", lines);
            if plan.settled[*right].is_none() {
                nested(plan, tables, goes_left, *right, "else_if", lines);
            } else {
                lines.push(line("else", String::new()));
                nested(plan, tables, goes_left, *right, "if", lines);
                lines.push(line("end", String::new()));
            }
        }
        Node::Leaf { .. } => unreachable!("every leaf of the nested form is settled"),
    }
}

/// Whether an `if`/`else if` chain of `lines` tests one condition twice.
fn repeats_condition(lines: &[TreeLine]) -> bool {
    let mut chains: Vec<Vec<&str>> = Vec::new();
    for line in lines {
        match line.kind {
            "if" => chains.push(vec![&line.code]),
            "else_if" => {
                let chain = chains.last_mut().expect("an `else if` follows an `if`");
                if chain.contains(&line.code.as_str()) {
                    return true;
                }
                chain.push(&line.code);
            }
            "end" => {
                chains.pop();
            }
            _ => {}
        }
    }
    false
}

/// A leaf's prediction.
fn leaf_expr(plan: &Plan<'_>, tables: &BTreeMap<usize, usize>, i: usize) -> String {
    let model = plan.model;
    match (&model.tree.nodes[i], model.kind) {
        (
            Node::Leaf {
                unsafe_leaf: true, ..
            },
            ModelKind::Decision,
        ) => "Prediction::Unsure(UnsureKind::UnsafeLeaf)".to_string(),
        (Node::Leaf { .. }, ModelKind::Decision) => {
            format!("Prediction::Distribution(&DIST_{})", tables[&i])
        }
        (Node::Leaf { value, .. }, ModelKind::Regression) => {
            format!("Prediction::Value({})", f64_lit(value[0]))
        }
        (Node::Split { .. }, _) => unreachable!("leaf_expr of a split"),
    }
}

/// A split as comment text.
fn split_doc(col: &Column, threshold: f64) -> String {
    comment(&match col {
        Column::Numeric { name } => format!("{name} <= {}", python_float_repr(threshold)),
        Column::OneHot { feature, value } => format!("str({feature}) != {value:?}"),
    })
}
