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
use crate::model::{check_heuristic_name, Model};

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
        /// 1-based line of `schema_version`, when found.
        line: Option<usize>,
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
    /// length, a duplicate choice, a probability outside [0, 1], ...).
    Invalid {
        /// The heuristic name.
        heuristic: String,
        /// Where in the model JSON (`tree.nodes[3].value[1]`); empty for the whole model.
        at: String,
        /// What is wrong.
        message: String,
    },
    /// An [`Invalid`](Self::Invalid) or [`InvalidName`](Self::InvalidName) model read from a
    /// file: the file and the line of the offending value.
    InFile {
        /// The model file.
        path: PathBuf,
        /// 1-based line of the offending value, when found.
        line: Option<usize>,
        /// The problem.
        error: Box<ModelFileError>,
    },
}

impl std::fmt::Display for ModelFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelFileError::Io { path, source } => crate::error::write_io(f, path, source),
            ModelFileError::Json { path, message } => write!(
                f,
                "{}: {message}\nhint: the model JSON is written by `ah-train`; regenerate it rather than editing it by hand",
                crate::error::shown(path)
            ),
            ModelFileError::SchemaVersion {
                path,
                line,
                found,
                expected,
            } => write!(
                f,
                "{}{}: model schema_version {found} is not supported (this build reads version {expected})\nhint: retrain with the matching ah-train, or use the tools of the same release",
                crate::error::shown(path),
                line.map(|l| format!(":{l}")).unwrap_or_default()
            ),
            ModelFileError::InvalidName { name, reason } => write!(
                f,
                "heuristic name `{}` is not valid: {reason}\nhint: use UpperCamelCase letters and digits, starting with a capital letter, like `PadMMH100` (ah-train --heuristic-name)",
                crate::error::clip_to(&name.escape_debug().to_string(), 60)
            ),
            ModelFileError::Invalid {
                heuristic,
                at,
                message,
            } => {
                write!(f, "model `{}` is invalid", crate::error::clip_to(heuristic, 60))?;
                if !at.is_empty() {
                    write!(f, " at `{at}`")?;
                }
                write!(f, ": {message}\nhint: the model JSON is written by `ah-train`; retrain, or correct this value")
            }
            ModelFileError::InFile { path, line, error } => match line {
                Some(line) => write!(f, "{}:{line}: {error}", crate::error::shown(path)),
                None => write!(f, "{}: {error}", crate::error::shown(path)),
            },
        }
    }
}

impl std::error::Error for ModelFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ModelFileError::Io { source, .. } => Some(source),
            // The inner error's message is already part of this one's: skip to its cause.
            ModelFileError::InFile { error, .. } => error.source(),
            _ => None,
        }
    }
}

impl ModelFileError {
    /// Where in the model JSON the problem is, when known (`heuristic_name`, `choices[2]`).
    pub fn json_path(&self) -> Option<&str> {
        match self {
            ModelFileError::Invalid { at, .. } if !at.is_empty() => Some(at),
            ModelFileError::InvalidName { .. } => Some("heuristic_name"),
            ModelFileError::InFile { error, .. } => error.json_path(),
            _ => None,
        }
    }
}

#[cfg(feature = "json")]
impl Model {
    /// Reads and [`check`](Model::check)s a model JSON written by `ah-train`.
    pub fn load(path: &Path) -> Result<Model, ModelFileError> {
        let bytes = std::fs::read(path).map_err(|source| ModelFileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let bytes = e.as_bytes();
            let at = e.utf8_error().valid_up_to();
            let line_start = bytes[..at].iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            let column = String::from_utf8_lossy(&bytes[line_start..at]).chars().count() + 1;
            ModelFileError::Json {
                path: path.to_path_buf(),
                message: format!(
                    "the byte 0x{:02X} is not UTF-8 (a model JSON is UTF-8 text) at line {} column {column}",
                    bytes[at],
                    bytes[..at].iter().filter(|b| **b == b'\n').count() + 1
                ),
            }
        })?;
        Model::from_json(path, &text)
    }

    /// [`Model::load`] over text already read; `path` is used in messages only.
    pub fn from_json(path: &Path, text: &str) -> Result<Model, ModelFileError> {
        let json_err = |e: serde_json::Error| ModelFileError::Json {
            path: path.to_path_buf(),
            message: json_message(&e),
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
                        line: crate::model::json_line(text, "schema_version"),
                        found,
                        expected: MODEL_SCHEMA_VERSION,
                    })
                }
                None => {
                    let line = crate::model::json_line(text, "schema_version")
                        .map(|l| format!(" at line {l}"))
                        .unwrap_or_default();
                    return Err(ModelFileError::Json {
                        path: path.to_path_buf(),
                        message: format!(
                            "`schema_version` must be an integer, found {}{line}",
                            crate::error::clip_to(&v.to_string(), 60)
                        ),
                    });
                }
            },
        }
        // Deserialize from the text (not the Value) so that errors carry line and column.
        let model: Model = serde_json::from_str(text).map_err(json_err)?;
        model.check().map_err(|error| ModelFileError::InFile {
            path: path.to_path_buf(),
            line: error
                .json_path()
                .and_then(|at| crate::model::json_line(text, at)),
            error: Box::new(error),
        })?;
        Ok(model)
    }

    /// The model file's text, as every tool writes it: pretty JSON and a final newline (the
    /// one writer; [`Model::load`] reads it back).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a model serializes to JSON") + "\n"
    }
}

/// serde's message, short whatever the file holds (it quotes the offending value), with
/// the line and column.
#[cfg(feature = "json")]
fn json_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    let inner = full.strip_suffix(&position).unwrap_or(&full);
    let inner = crate::error::clip_to(inner, 200);
    if e.line() == 0 {
        inner.into_owned()
    } else {
        format!("{inner}{position}")
    }
}

impl Model {
    /// Checks the model's internal consistency: the name, then everything a hand-edited
    /// model can get wrong (duplicate choices or features, operations that do not parse or
    /// exceed the expression language's limits, unknown columns, indices out of range, a
    /// graph that is not a tree, leaves of the wrong length or with probabilities outside
    /// [0, 1] or not summing to 1, non-finite thresholds), each with its JSON path.
    /// Iterative: a chain of any depth is fine.
    pub fn check(&self) -> Result<(), ModelFileError> {
        check_heuristic_name(&self.heuristic_name).map_err(|e| ModelFileError::InvalidName {
            name: e.name,
            reason: e.reason,
        })?;
        match self.problem() {
            None => Ok(()),
            Some(p) => Err(ModelFileError::Invalid {
                heuristic: self.heuristic_name.clone(),
                at: p.at,
                message: p.message,
            }),
        }
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
            err.contains("M.model.json:2: model schema_version 2 is not supported"),
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
    fn check_refuses_a_nan_threshold_and_bad_names() {
        let mut model = crate::model::tests::decision_model();
        model.check().unwrap();
        model.threshold = f64::NAN;
        let err = model.check().unwrap_err().to_string();
        assert!(
            err.contains("is invalid at `threshold`: threshold is NaN"),
            "{err}"
        );
        model.threshold = 0.0;
        model.heuristic_name = "lower".into();
        assert!(matches!(
            model.check().unwrap_err(),
            ModelFileError::InvalidName { .. }
        ));
    }

    /// A hand edit of the model's JSON: `edit` changes the parsed value, the text is written
    /// pretty, as ah-train writes it.
    fn edited(edit: impl FnOnce(&mut serde_json::Value)) -> String {
        let model = crate::model::tests::decision_model();
        let mut v: serde_json::Value = serde_json::from_str(&json_of(&model)).unwrap();
        edit(&mut v);
        serde_json::to_string_pretty(&v).unwrap()
    }

    #[test]
    fn hand_edits_are_refused_with_file_line_and_json_path() {
        let path = Path::new("dir/M.model.json");
        type Edit = Box<dyn FnOnce(&mut serde_json::Value)>;
        let cases: Vec<(&str, Edit, &str)> = vec![
            (
                "choices[2]",
                Box::new(|v| v["choices"][2] = "a".into()),
                "listed twice",
            ),
            (
                "numerical_features[2]",
                Box::new(|v| v["numerical_features"][2] = "m".into()),
                "listed twice",
            ),
            (
                "categorical_features[0]",
                Box::new(|v| v["categorical_features"][0] = "k".into()),
                "also as numerical",
            ),
            (
                "tree.nodes[1].value[1]",
                Box::new(|v| v["tree"]["nodes"][1]["value"] = serde_json::json!([0.5, -0.5, 1.0])),
                "must lie in [0, 1]",
            ),
            (
                "tree.nodes[5].value[2]",
                Box::new(|v| v["tree"]["nodes"][5]["value"] = serde_json::json!([0.0, 0.0, 1.5])),
                "must lie in [0, 1]",
            ),
            (
                "tree.nodes[6].value",
                Box::new(|v| v["tree"]["nodes"][6]["value"] = serde_json::json!([0.5, 0.5, 0.5])),
                "sum to 1.5",
            ),
            (
                "tree.nodes[0].right",
                Box::new(|v| v["tree"]["nodes"][0]["right"] = 1.into()),
                "already another node's child",
            ),
            (
                "operations[1].expr",
                Box::new(|v| v["operations"][1]["expr"] = format!("{}m", "-".repeat(500)).into()),
                "nests deeper than 100",
            ),
            (
                "operations[0].expr",
                Box::new(|v| v["operations"][0]["expr"] = "m * q".into()),
                "unknown feature `q`",
            ),
            (
                "columns[2]",
                Box::new(|v| v["columns"][2]["name"] = "zz".into()),
                "neither a logged feature",
            ),
            (
                "operations[3].name",
                Box::new(|v| v["operations"][3]["name"] = "m*k".into()),
                "\"m*k\" is defined twice (also operations[0])",
            ),
            (
                "columns[2]",
                Box::new(|v| v["columns"][2]["name"] = "m*k".into()),
                "`m*k` is listed twice (also columns[0])",
            ),
            (
                "feature_ranges[1].name",
                Box::new(|v| {
                    v["feature_ranges"]
                        .as_array_mut()
                        .unwrap()
                        .push(serde_json::json!({"name": "m", "min": 0.0, "max": 1.0}));
                }),
                "range of \"m\" is given twice",
            ),
            (
                "numerical_features[3]",
                Box::new(|v| {
                    v["kind"] = "regression".into();
                    v["numerical_features"]
                        .as_array_mut()
                        .unwrap()
                        .push("choice".into());
                }),
                "a second `choice`",
            ),
            (
                "heuristic_name",
                Box::new(|v| v["heuristic_name"] = "lower\ncase".into()),
                "capital",
            ),
        ];
        for (at, edit, why) in cases {
            let text = edited(edit);
            let err = Model::from_json(path, &text).unwrap_err();
            assert_eq!(err.json_path(), Some(at));
            let message = err.to_string();
            let line = crate::model::json_line(&text, at).unwrap();
            let prefix = format!("dir/M.model.json:{line}: ");
            assert!(message.starts_with(&prefix), "{prefix} {message}");
            assert!(message.contains(why), "{message}");
            assert!(message.len() < 700, "{message}");
            // The line holds the offending key or value.
            let key = at.rsplit(['.', '[']).next().unwrap().trim_end_matches(']');
            let held = text.lines().nth(line - 1).unwrap();
            assert!(
                held.contains(key) || key.parse::<usize>().is_ok(),
                "{at}: line {line} is {held:?}"
            );
        }
    }
}
