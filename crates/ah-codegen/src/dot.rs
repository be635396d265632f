//! Graphviz view of the tree: readable split conditions, class shares per leaf, unsure
//! leaves marked.

use std::path::Path;
use std::process::Command;

use ah_core::model::{leaf_best_choices, Column, ModelKind, Node};
use ah_core::value::python_float_repr;
use serde::Serialize;

use crate::error::CodegenError;
use crate::escape::dot_str;
use crate::plan::Plan;

#[derive(Serialize)]
struct DotNode {
    id: usize,
    label: String,
    attrs: String,
}

#[derive(Serialize)]
struct DotEdge {
    from: usize,
    to: usize,
    label: String,
}

/// Renders the `.dot` file.
pub fn render(plan: &Plan<'_>, header: &[String]) -> Result<String, CodegenError> {
    let model = plan.model;
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    for (id, node) in model.tree.nodes.iter().enumerate() {
        match node {
            Node::Split {
                column,
                threshold,
                left,
                right,
            } => {
                let (label, yes_left) = match &model.columns[*column] {
                    Column::Numeric { name } => (
                        format!("{name} <= {}?", python_float_repr(*threshold)),
                        true,
                    ),
                    // Left is "not equal": ask the question whose "yes" goes right.
                    Column::OneHot { feature, value } => (format!("{feature} == {value}?"), false),
                };
                nodes.push(DotNode {
                    id,
                    label: dot_str(&label),
                    attrs: String::new(),
                });
                let (l, r) = if yes_left {
                    ("yes", "no")
                } else {
                    ("no", "yes")
                };
                edges.push(DotEdge {
                    from: id,
                    to: *left,
                    label: l.into(),
                });
                edges.push(DotEdge {
                    from: id,
                    to: *right,
                    label: r.into(),
                });
            }
            Node::Leaf {
                value,
                samples,
                unsafe_leaf,
            } => {
                let (label, attrs) = leaf_label(plan, value, *samples, *unsafe_leaf);
                nodes.push(DotNode { id, label, attrs });
            }
        }
    }
    let title = format!(
        "{} ({}), threshold {}",
        model.heuristic_name,
        model.name,
        python_float_repr(model.threshold)
    );
    let mut ctx = tera::Context::new();
    ctx.insert("header", header);
    ctx.insert("class_name", &model.heuristic_name);
    ctx.insert("title", &dot_str(&title));
    ctx.insert("nodes", &nodes);
    ctx.insert("edges", &edges);
    crate::templates::render("graph.dot", &ctx)
}

fn leaf_label(plan: &Plan<'_>, value: &[f64], samples: u64, unsafe_leaf: bool) -> (String, String) {
    let model = plan.model;
    let mut lines = Vec::new();
    let unsure_attrs = "fillcolor=\"#eeeeee\", style=\"rounded,filled,dashed\"".to_string();
    match model.kind {
        ModelKind::Decision => {
            let best = leaf_best_choices(value);
            if unsafe_leaf {
                lines.push("UNSURE (unsafe leaf)".to_string());
            } else if best.first().is_none_or(|(p, _)| *p <= model.threshold) {
                lines.push(format!(
                    "UNSURE (p <= {})",
                    python_float_repr(model.threshold)
                ));
            } else {
                lines.push(format!("-> {}", model.choices[best[0].1]));
            }
            for (p, i) in best.iter().take(5) {
                lines.push(format!("{}: {:.1}%", model.choices[*i], p * 100.0));
            }
            if best.len() > 5 {
                lines.push(format!("... {} more", best.len() - 5));
            }
            lines.push(format!("samples {samples}"));
            let unsure = lines[0].starts_with("UNSURE");
            let label = lines
                .iter()
                .map(|l| dot_str(l))
                .collect::<Vec<_>>()
                .join("\\n");
            let attrs = if unsure {
                unsure_attrs
            } else {
                "fillcolor=\"#d9f2d9\"".to_string()
            };
            (label, attrs)
        }
        ModelKind::Regression => {
            lines.push(format!("value {}", python_float_repr(value[0])));
            lines.push(format!("samples {samples}"));
            let label = lines
                .iter()
                .map(|l| dot_str(l))
                .collect::<Vec<_>>()
                .join("\\n");
            (label, "fillcolor=\"#dde8f7\"".to_string())
        }
    }
}

/// What [`render_svg`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SvgOutcome {
    /// The SVG was written.
    Written,
    /// Graphviz `dot` is not installed; nothing was written.
    DotNotFound,
}

/// Renders `dot_file` to `svg_file` with Graphviz `dot` when it is installed
/// (`apt-get install graphviz`); says [`SvgOutcome::DotNotFound`] when it is not.
pub fn render_svg(dot_file: &Path, svg_file: &Path) -> Result<SvgOutcome, CodegenError> {
    let out = match Command::new("dot")
        .arg("-Tsvg")
        .arg(dot_file)
        .arg("-o")
        .arg(svg_file)
        .output()
    {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(SvgOutcome::DotNotFound),
        Err(e) => return Err(CodegenError::io(dot_file, e)),
    };
    if !out.status.success() {
        return Err(CodegenError::Graphviz {
            path: dot_file.to_path_buf(),
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(SvgOutcome::Written)
}
