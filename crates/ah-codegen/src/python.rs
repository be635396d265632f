//! The PyTorch artifact: `_NAME.py`, in the format of PyTorch's trainer (spec section 8),
//! droppable into `torch/_inductor/autoheuristic/artifacts/`.
//!
//! One deliberate difference: leaf probabilities, the threshold and split thresholds are
//! printed as Python's shortest round-trip `repr` of the model's `f64`, not PyTorch's
//! `{p:.3f}`, so the artifact decides exactly as the model does (a leaf at
//! `0.9615384615384616 <= threshold` stays unsure instead of printing as `0.962`).

use ah_core::model::{leaf_best_choices, Column, Model, ModelKind, Node};
use ah_core::value::python_float_repr;

use crate::error::CodegenError;
use crate::plan::{feature_of, Plan, Source};

/// Renders the artifact.
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
                op.name, op.source
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
    emit_node(plan, 0, 1, &mut body);
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
    crate::templates::render(template, &ctx)
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
    let model = plan.model;
    let mut out = Vec::new();
    if !model.range_guard {
        return out;
    }
    for r in &model.feature_ranges {
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

fn emit_node(plan: &Plan<'_>, node: usize, depth: usize, lines: &mut Vec<String>) {
    let model = plan.model;
    let indent = "    ".repeat(depth + 1);
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
        } => match model.kind {
            ModelKind::Decision => {
                if *unsafe_leaf {
                    lines.push(format!("{indent}return None"));
                } else {
                    let items: Vec<String> = leaf_best_choices(value)
                        .iter()
                        .map(|(p, i)| format!("({}, {i})", python_float_repr(*p)))
                        .collect();
                    lines.push(format!("{indent}return [{}]", items.join(", ")));
                }
            }
            ModelKind::Regression => {
                lines.push(format!("{indent}return {}", py_float(value[0])));
            }
        },
    }
}

/// A Python string literal in PyTorch's style (single quotes).
pub fn py_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// The artifact's file name.
pub fn file_name(model: &Model) -> String {
    crate::names::python_file_name(&model.heuristic_name)
}
