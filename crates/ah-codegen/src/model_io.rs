//! Reading and checking a model JSON before anything is generated from it.

use std::path::Path;

use ah_core::model::{Column, Model, ModelKind, Node, MODEL_SCHEMA_VERSION};

use crate::error::CodegenError;

/// Reads a model JSON written by `ah-train`.
///
/// The schema version is checked first, so a model of another version gets a version
/// error rather than a confusing missing-field one; serde's errors carry the line and
/// column. The model is then [`validate`]d.
pub fn load_model(path: &Path) -> Result<Model, CodegenError> {
    let text = std::fs::read_to_string(path).map_err(|e| CodegenError::io(path, e))?;
    parse_model(path, &text)
}

/// [`load_model`] over text already read; `path` is used in messages only.
pub fn parse_model(path: &Path, text: &str) -> Result<Model, CodegenError> {
    let json_err = |e: serde_json::Error| CodegenError::ModelJson {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let raw: serde_json::Value = serde_json::from_str(text).map_err(json_err)?;
    match raw.get("schema_version") {
        None => {
            return Err(CodegenError::ModelJson {
                path: path.to_path_buf(),
                message:
                    "missing field `schema_version`: this is not a model JSON written by ah-train"
                        .into(),
            })
        }
        Some(v) => match v.as_u64() {
            Some(found) if found == u64::from(MODEL_SCHEMA_VERSION) => {}
            Some(found) => {
                return Err(CodegenError::SchemaVersion {
                    path: path.to_path_buf(),
                    found,
                    expected: MODEL_SCHEMA_VERSION,
                })
            }
            None => {
                return Err(CodegenError::ModelJson {
                    path: path.to_path_buf(),
                    message: format!("`schema_version` must be an integer, found {v}"),
                })
            }
        },
    }
    // Deserialize from the text (not the Value) so that errors carry line and column.
    let model: Model = serde_json::from_str(text).map_err(json_err)?;
    validate(&model)?;
    Ok(model)
}

/// Checks a heuristic name by the one rule every tool shares,
/// [`ah_core::model::check_heuristic_name`] (`ah-train` checks it before training).
pub fn check_name(name: &str) -> Result<(), CodegenError> {
    ah_core::model::check_heuristic_name(name).map_err(|e| CodegenError::InvalidName {
        name: e.name,
        reason: e.reason,
    })
}

/// Checks the model's internal consistency: the name, child and column indices, leaf
/// lengths, one-hot thresholds and the tree's shape (every node reached once from the root),
/// then everything [`Model::validate`] checks (operations, columns' features, the default
/// choice). Iterative: a chain of any depth is fine.
pub fn validate(model: &Model) -> Result<(), CodegenError> {
    check_name(&model.heuristic_name)?;
    let invalid = |message: String| CodegenError::InvalidModel {
        heuristic: model.heuristic_name.clone(),
        message,
    };
    if model.name.is_empty() {
        return Err(invalid("the optimization `name` is empty".into()));
    }
    if model.choices.is_empty() {
        return Err(invalid("`choices` is empty".into()));
    }
    if model.choices.len() > usize::from(u16::MAX) {
        return Err(invalid(format!(
            "{} choices is more than 65535",
            model.choices.len()
        )));
    }
    let nodes = &model.tree.nodes;
    if nodes.is_empty() {
        return Err(invalid("the tree has no nodes".into()));
    }
    let mut seen = vec![false; nodes.len()];
    let mut stack = vec![0usize];
    while let Some(i) = stack.pop() {
        if seen[i] {
            return Err(invalid(format!(
                "node {i} is reached twice (the tree must be a tree)"
            )));
        }
        seen[i] = true;
        match &nodes[i] {
            Node::Split {
                column,
                threshold,
                left,
                right,
            } => {
                let col = model.columns.get(*column).ok_or_else(|| {
                    invalid(format!(
                        "node {i} splits on column {column}, but there are {} columns",
                        model.columns.len()
                    ))
                })?;
                if !threshold.is_finite() {
                    return Err(invalid(format!("node {i} has threshold {threshold}")));
                }
                if let Column::OneHot { .. } = col {
                    if !(0.0..1.0).contains(threshold) {
                        return Err(invalid(format!(
                            "node {i} splits the one-hot column `{}` at {threshold}; one-hot splits must lie in [0, 1)",
                            col.display_name()
                        )));
                    }
                }
                for child in [left, right] {
                    if *child >= nodes.len() {
                        return Err(invalid(format!(
                            "node {i} has child {child}, but there are {} nodes",
                            nodes.len()
                        )));
                    }
                    stack.push(*child);
                }
            }
            Node::Leaf { value, .. } => {
                let want = match model.kind {
                    ModelKind::Decision => model.choices.len(),
                    ModelKind::Regression => 1,
                };
                if value.len() != want {
                    return Err(invalid(format!(
                        "leaf {i} has {} values, expected {want}",
                        value.len()
                    )));
                }
                if let Some(v) = value.iter().find(|v| !v.is_finite()) {
                    return Err(invalid(format!("leaf {i} holds the value {v}")));
                }
            }
        }
    }
    if let Some(i) = seen.iter().position(|s| !s) {
        return Err(invalid(format!("node {i} is not reachable from the root")));
    }
    if !model.threshold.is_finite() {
        return Err(invalid(format!("threshold is {}", model.threshold)));
    }
    if model.kind == ModelKind::Regression {
        for col in &model.columns {
            if let Column::OneHot { feature, value } = col {
                if feature == "choice" && !model.choices.contains(value) {
                    return Err(invalid(format!("column `choice_{value}` names no choice")));
                }
            }
        }
    }
    for range in &model.feature_ranges {
        if range.min.is_nan() || range.max.is_nan() || range.min > range.max {
            return Err(invalid(format!(
                "feature range of `{}` is [{}, {}]",
                range.name, range.min, range.max
            )));
        }
    }
    model.validate().map_err(|e| {
        let message = e.to_string();
        let own = format!("model `{}`: ", model.heuristic_name);
        invalid(message.strip_prefix(&own).unwrap_or(&message).to_string())
    })
}
