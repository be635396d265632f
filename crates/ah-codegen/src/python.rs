//! The PyTorch artifact: `_NAME.py`, in the format of PyTorch's trainer (spec section 8),
//! droppable into `torch/_inductor/autoheuristic/artifacts/`.
//!
//! One deliberate difference: leaf probabilities, the threshold and split thresholds are
//! printed as Python's shortest round-trip `repr` of the model's `f64`, not PyTorch's
//! `{p:.3f}`, so the artifact decides exactly as the model does (a leaf at
//! `0.9615384615384616 <= threshold` stays unsure instead of printing as `0.962`).

use ah_core::model::{leaf_best_choices, Column, Model, ModelKind, Node};
use ah_core::value::{python_float_repr, python_str_literal};

use crate::error::CodegenError;
use crate::escape::comment;
use crate::plan::MAX_NESTED_DEPTH;
use crate::plan::{feature_of, Plan, Source};

/// Renders the artifact, checked to compile (see [`crate::python_check`]).
pub fn render(plan: &Plan<'_>, header: &[String]) -> Result<String, CodegenError> {
    let model = plan.model;
    let mut preamble = Vec::new();
    let base = "        ";
    // User-defined operations PyTorch does not know: computed here, all of them, in order (as
    // the model computes every operation); a failing one makes the artifact unsure (`None`),
    // as the model is.
    let user: Vec<usize> = (0..plan.ops.len()).filter(|i| !plan.builtin[*i]).collect();
    if !user.is_empty() {
        preamble.push(format!("{base}try:"));
        for &i in &user {
            let op = &plan.ops[i];
            let expr = op.expr.to_python(&|n| feature_ref(plan, n, i));
            preamble.push(format!(
                "{base}    # augment operation `{}` = {}",
                comment(&op.name),
                comment(&op.source)
            ));
            preamble.push(format!("{base}    {} = {expr}", op_var(i)));
        }
        preamble.push(format!(
            "{base}except (ArithmeticError, TypeError, ValueError, KeyError):"
        ));
        preamble.push(format!("{base}    return None"));
    }
    let guard = range_guard_lines(plan, base);
    let mut body = preamble.clone();
    // Regression: the guard goes into `get_decision` (a `predict` cannot answer unsure).
    let mut guard_block = Vec::new();
    match model.kind {
        ModelKind::Decision => body.extend(guard),
        ModelKind::Regression if !guard.is_empty() => {
            guard_block = preamble;
            guard_block.extend(guard);
        }
        ModelKind::Regression => {}
    }
    if plan.nested {
        emit_node(plan, 0, 1, &mut body);
    } else {
        emit_table(plan, &mut body);
    }
    let mut ctx = tera::Context::new();
    ctx.insert("header", header);
    ctx.insert("class_name", &model.heuristic_name);
    ctx.insert("shared_memory", &model.precondition.shared_memory);
    ctx.insert("device_capa", &model.precondition.capa_repr());
    ctx.insert("threshold", &python_float_repr(model.threshold));
    ctx.insert("name", &py_str(&model.name));
    ctx.insert(
        "choices",
        &model.choices.iter().map(|c| py_str(c)).collect::<Vec<_>>(),
    );
    ctx.insert("body", &body.join("\n"));
    ctx.insert("range_guard", &guard_block.join("\n"));
    let template = match model.kind {
        ModelKind::Decision => "python_decision.py",
        ModelKind::Regression => "python_regression.py",
    };
    let source = crate::templates::render(template, &ctx)?;
    crate::python_check::check_compiles(&source, &file_name(model))?;
    Ok(source)
}

fn op_var(i: usize) -> String {
    format!("_op{i}")
}

/// How the artifact reads `name` from inside operation `before` (or the tree, when
/// `before` is the number of operations).
fn feature_ref(plan: &Plan<'_>, name: &str, before: usize) -> String {
    match plan.source_before(name, before) {
        Source::Op(j) if !plan.builtin[j] => op_var(j),
        _ => format!("context.get_value({})", py_str(name)),
    }
}

fn tree_ref(plan: &Plan<'_>, name: &str) -> String {
    feature_ref(plan, name, plan.ops.len())
}

/// `if not (min <= v <= max): return None` per guarded feature.
fn range_guard_lines(plan: &Plan<'_>, base: &str) -> Vec<String> {
    let mut out = Vec::new();
    for r in plan.guarded_ranges() {
        let v = tree_ref(plan, &r.name);
        // `not (lo <= v <= hi)`: NaN is outside, as in the model.
        out.push(format!(
            "{base}if not ({} <= {v} <= {}):",
            py_float(r.min),
            py_float(r.max)
        ));
        out.push(format!("{base}    return None"));
    }
    out
}

fn py_float(x: f64) -> String {
    if x.is_finite() {
        python_float_repr(x)
    } else {
        format!("float('{}')", python_float_repr(x))
    }
}

/// A leaf's return value: `[(p, i), ...]` or `None` (decision), the value (regression);
/// `tuple` writes the decision list as a tuple (a constant in the table form).
fn leaf_value(plan: &Plan<'_>, value: &[f64], unsafe_leaf: bool, tuple: bool) -> String {
    match plan.model.kind {
        ModelKind::Decision if unsafe_leaf => "None".into(),
        ModelKind::Decision => {
            let items: Vec<String> = leaf_best_choices(value)
                .iter()
                .map(|(p, i)| format!("({}, {i})", python_float_repr(*p)))
                .collect();
            match (tuple, items.len()) {
                (false, _) => format!("[{}]", items.join(", ")),
                (true, 1) => format!("({},)", items[0]),
                (true, _) => format!("({})", items.join(", ")),
            }
        }
        ModelKind::Regression => py_float(value[0]),
    }
}

/// A tree deeper than [`MAX_NESTED_DEPTH`] (Python's nesting limit is 100 blocks): a
/// constant table of nodes and a loop, deciding exactly like the nested `if`s (each split
/// reads its feature when the walk reaches it, as they do). Valid at any depth.
fn emit_table(plan: &Plan<'_>, lines: &mut Vec<String>) {
    let model = plan.model;
    let b = "        ";
    lines.push(format!(
        "{b}# The tree is deeper than {MAX_NESTED_DEPTH} levels: a table and a loop instead of nested ifs."
    ));
    lines.push(format!("{b}_read = {{"));
    for c in plan.used_columns() {
        let v = tree_ref(plan, feature_of(&model.columns[c]));
        lines.push(format!("{b}    {c}: lambda: {v},"));
    }
    lines.push(format!("{b}}}"));
    lines.push(format!(
        "{b}# (column, one-hot, category or threshold, left, right), or (leaf value,)"
    ));
    lines.push(format!("{b}_tree = ("));
    for node in &model.tree.nodes {
        let entry = match node {
            Node::Split {
                column,
                threshold,
                left,
                right,
            } => match &model.columns[*column] {
                Column::OneHot { value, .. } => {
                    format!("({column}, True, {}, {left}, {right}),", py_str(value))
                }
                Column::Numeric { .. } => {
                    format!(
                        "({column}, False, {}, {left}, {right}),",
                        py_float(*threshold)
                    )
                }
            },
            Node::Leaf {
                value, unsafe_leaf, ..
            } => format!("({},),", leaf_value(plan, value, *unsafe_leaf, true)),
        };
        lines.push(format!("{b}    {entry}"));
    }
    lines.push(format!("{b})"));
    let leaf = match model.kind {
        ModelKind::Decision => "None if _e[0] is None else list(_e[0])",
        ModelKind::Regression => "_e[0]",
    };
    for line in [
        "_n = 0".to_string(),
        "while True:".into(),
        "    _e = _tree[_n]".into(),
        "    if len(_e) == 1:".into(),
        format!("        return {leaf}"),
        "    _c, _onehot, _x, _left, _right = _e".into(),
        "    _v = _read[_c]()".into(),
        "    _n = _left if ((str(_v) != _x) if _onehot else (_v <= _x)) else _right".into(),
    ] {
        lines.push(format!("{b}{line}"));
    }
}

/// Nested `if`s; only for trees of at most [`MAX_NESTED_DEPTH`] levels, so the recursion
/// is bounded. A subtree whose leaves all predict the same is that one leaf
/// ([`Plan::settled`]), as in the Rust module.
fn emit_node(plan: &Plan<'_>, node: usize, depth: usize, lines: &mut Vec<String>) {
    let model = plan.model;
    let indent = "    ".repeat(depth + 1);
    let node = plan.settled[node].unwrap_or(node);
    match &model.tree.nodes[node] {
        Node::Split {
            column,
            threshold,
            left,
            right,
        } => {
            let col = &model.columns[*column];
            let v = tree_ref(plan, feature_of(col));
            match col {
                Column::OneHot { value, .. } => {
                    lines.push(format!("{indent}if str({v}) != {}:", py_str(value)));
                }
                Column::Numeric { .. } => {
                    lines.push(format!("{indent}if {v} <= {}:", py_float(*threshold)));
                }
            }
            emit_node(plan, *left, depth + 1, lines);
            lines.push(format!("{indent}else:"));
            emit_node(plan, *right, depth + 1, lines);
        }
        Node::Leaf {
            value, unsafe_leaf, ..
        } => lines.push(format!(
            "{indent}return {}",
            leaf_value(plan, value, *unsafe_leaf, false)
        )),
    }
}

/// A Python string literal in PyTorch's style (single quotes), safely escaped.
fn py_str(s: &str) -> String {
    python_str_literal(s)
}

/// The artifact's file name.
pub fn file_name(model: &Model) -> String {
    crate::names::python_file_name(&model.heuristic_name)
}
