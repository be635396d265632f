//! Reading a model file: [`Model::load`] reads and checks the JSON that `ah-train` writes, and
//! [`Model::check`] is the full consistency check every tool runs before it trusts a model
//! (`ah-codegen` before generating code, `ah-use replay`, the case studies' examples).
//!
//! The schema version is checked before the rest of the file is deserialized, so a model of
//! another version gets a version error rather than a confusing missing-field one; serde's
//! errors carry the line and column. Every [`ModelFileError`] names the file or the heuristic
//! and says what to do.

#[cfg(feature = "json")]
use std::path::Path;
use std::path::PathBuf;

#[cfg(feature = "json")]
use crate::model::MODEL_SCHEMA_VERSION;
use crate::model::{check_heuristic_name, Column, Model, ModelKind, Node};

/// Why a model file cannot be used.
#[derive(Debug)]
#[non_exhaustive]
pub enum ModelFileError {
    /// Reading the file failed.
    Io {
        /// The model file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The model JSON is not valid JSON or lacks a field.
    Json {
        /// The model file.
        path: PathBuf,
        /// serde's message, with the line and column.
        message: String,
    },
    /// The model JSON has another schema version than this build reads.
    SchemaVersion {
        /// The model file.
        path: PathBuf,
        /// The version in the file.
        found: u64,
        /// The version this crate reads ([`MODEL_SCHEMA_VERSION`]).
        expected: u32,
    },
    /// The heuristic name cannot be a Python class name, a Rust type name and a module name
    /// ([`check_heuristic_name`]).
    InvalidName {
        /// The name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The model is inconsistent (a child or column index out of range, a leaf of the wrong
    /// length, ...).
    Invalid {
        /// The heuristic name.
        heuristic: String,
        /// What is wrong.
        message: String,
    },
}

impl std::fmt::Display for ModelFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelFileError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            ModelFileError::Json { path, message } => write!(
                f,
                "{}: {message}\nhint: the model JSON is written by `ah-train`; regenerate it rather than editing it by hand",
                path.display()
            ),
            ModelFileError::SchemaVersion {
                path,
                found,
                expected,
            } => write!(
                f,
                "{}: model schema_version {found} is not supported (this ah-codegen reads version {expected})\nhint: retrain with the matching ah-train, or use the ah-codegen of the same release",
                path.display()
            ),
            ModelFileError::InvalidName { name, reason } => write!(
                f,
                "heuristic name `{name}` is not valid: {reason}\nhint: use UpperCamelCase letters and digits, starting with a capital letter, like `PadMMH100` (ah-train --heuristic-name)"
            ),
            ModelFileError::Invalid { heuristic, message } => {
                write!(f, "model `{heuristic}` is invalid: {message}")
            }
        }
    }
}

impl std::error::Error for ModelFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ModelFileError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(feature = "json")]
impl Model {
    /// Reads and [`check`](Model::check)s a model JSON written by `ah-train`.
    pub fn load(path: &Path) -> Result<Model, ModelFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| ModelFileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Model::from_json(path, &text)
    }

    /// [`Model::load`] over text already read; `path` is used in messages only.
    pub fn from_json(path: &Path, text: &str) -> Result<Model, ModelFileError> {
        let json_err = |e: serde_json::Error| ModelFileError::Json {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let raw: serde_json::Value = serde_json::from_str(text).map_err(json_err)?;
        match raw.get("schema_version") {
            None => return Err(ModelFileError::Json {
                path: path.to_path_buf(),
                message:
                    "missing field `schema_version`: this is not a model JSON written by ah-train"
                        .into(),
            }),
            Some(v) => match v.as_u64() {
                Some(found) if found == u64::from(MODEL_SCHEMA_VERSION) => {}
                Some(found) => {
                    return Err(ModelFileError::SchemaVersion {
                        path: path.to_path_buf(),
                        found,
                        expected: MODEL_SCHEMA_VERSION,
                    })
                }
                None => {
                    return Err(ModelFileError::Json {
                        path: path.to_path_buf(),
                        message: format!("`schema_version` must be an integer, found {v}"),
                    })
                }
            },
        }
        // Deserialize from the text (not the Value) so that errors carry line and column.
        let model: Model = serde_json::from_str(text).map_err(json_err)?;
        model.check()?;
        Ok(model)
    }

    /// The model file's text, as every tool writes it: pretty JSON and a final newline (the
    /// one writer; [`Model::load`] reads it back).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a model serializes to JSON") + "\n"
    }
}

impl Model {
    /// Checks the model's internal consistency: the name, child and column indices, leaf
    /// lengths, one-hot thresholds and the tree's shape (every node reached once from the root),
    /// then the semantic checks (operations, columns' features, the default
    /// choice). Iterative: a chain of any depth is fine.
    pub fn check(&self) -> Result<(), ModelFileError> {
        let model = self;
        check_heuristic_name(&model.heuristic_name).map_err(|e| ModelFileError::InvalidName {
            name: e.name,
            reason: e.reason,
        })?;
        let invalid = |message: String| ModelFileError::Invalid {
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
}

#[cfg(all(test, feature = "json"))]
mod tests {
    use super::*;

    fn json_of(model: &Model) -> String {
        serde_json::to_string_pretty(model).unwrap()
    }

    #[test]
    fn a_written_model_loads_back_and_errors_name_the_file() {
        let model = crate::model::tests::decision_model();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("M.model.json");
        std::fs::write(&path, json_of(&model)).unwrap();
        let back = Model::load(&path).unwrap();
        assert_eq!(json_of(&back), json_of(&model));

        let missing = Model::load(&dir.path().join("nope.json")).unwrap_err();
        assert!(matches!(missing, ModelFileError::Io { .. }));
        assert!(missing.to_string().contains("nope.json"), "{missing}");

        let v2 = json_of(&model).replacen("\"schema_version\": 1", "\"schema_version\": 2", 1);
        let err = Model::from_json(&path, &v2).unwrap_err().to_string();
        assert!(
            err.contains("M.model.json: model schema_version 2 is not supported"),
            "{err}"
        );

        let err = Model::from_json(&path, "[]").unwrap_err().to_string();
        assert!(err.contains("missing field `schema_version`"), "{err}");
        assert!(
            err.contains("hint: the model JSON is written by `ah-train`"),
            "{err}"
        );
    }

    #[test]
    fn check_refuses_what_validate_lets_through() {
        let mut model = crate::model::tests::decision_model();
        model.check().unwrap();
        model.threshold = f64::NAN;
        assert!(model.validate().is_ok());
        let err = model.check().unwrap_err().to_string();
        assert!(err.contains("is invalid: threshold is NaN"), "{err}");
        model.threshold = 0.0;
        model.heuristic_name = "lower".into();
        assert!(matches!(
            model.check().unwrap_err(),
            ModelFileError::InvalidName { .. }
        ));
    }
}
