//! The one model validator's checks: everything a hand-edited (or hostile) model JSON can
//! get wrong that would reach generated code, evaluation or replay, each found at its place
//! in the JSON (`tree.nodes[3].value[1]`) so that the file's reader can name the line.
//!
//! Iterative: a tree of any depth is checked without recursion. [`Model::check`] (in
//! `model_file.rs`) turns the first [`Problem`] into a `ModelFileError`.

use super::format::{Column, Model, ModelKind, Node, CHOICE_FEATURE, MODEL_SCHEMA_VERSION};
use crate::duplicates::first_duplicate;
use crate::error::clip_to;
use crate::ops::Operation;

/// How far a decision leaf's probabilities may sum away from 1 (rounding of weighted counts).
const SUM_TOLERANCE: f64 = 1e-6;

/// What is wrong with a model and where in its JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The JSON path of the offending value (`choices[2]`, `tree.nodes[3].value[1]`).
    pub at: String,
    /// What is wrong.
    pub message: String,
}

type Checked = Result<(), Problem>;

fn problem(at: impl Into<String>, message: impl Into<String>) -> Checked {
    Err(Problem {
        at: at.into(),
        message: message.into(),
    })
}

/// `text` quoted and shortened for a message.
fn q(text: &str) -> String {
    format!("{:?}", clip_to(text, 60))
}

impl Model {
    /// The first problem of the model, in JSON order of the fields checked; `None` when it is
    /// consistent. The heuristic name is checked separately ([`super::check_heuristic_name`]).
    pub(crate) fn problem(&self) -> Option<Problem> {
        self.check_header()
            .and_then(|()| self.check_features())
            .and_then(|()| self.check_operations())
            .and_then(|()| self.check_columns())
            .and_then(|()| self.check_tree())
            .and_then(|()| self.check_threshold())
            .err()
    }

    fn check_header(&self) -> Checked {
        if self.schema_version != MODEL_SCHEMA_VERSION {
            return problem(
                "schema_version",
                format!(
                    "schema version {} is not supported (this build reads version {MODEL_SCHEMA_VERSION}); regenerate the model with this version of ah-train",
                    self.schema_version
                ),
            );
        }
        if self.name.is_empty() {
            return problem("name", "the optimization `name` is empty");
        }
        if self.choices.is_empty() {
            return problem("choices", "`choices` is empty");
        }
        if self.choices.len() > usize::from(u16::MAX) {
            return problem(
                "choices",
                format!("{} choices is more than 65535", self.choices.len()),
            );
        }
        if let Some((i, first)) = first_duplicate(&self.choices) {
            return problem(
                format!("choices[{i}]"),
                format!(
                    "the choice {} is listed twice (also choices[{first}])",
                    q(&self.choices[i])
                ),
            );
        }
        if let Some(d) = &self.default_choice {
            if !self.choices.contains(d) {
                return problem(
                    "default_choice",
                    format!("the default choice {} is not among the choices", q(d)),
                );
            }
        }
        Ok(())
    }

    fn check_features(&self) -> Checked {
        if let Some((i, first)) = first_duplicate(&self.numerical_features) {
            return problem(
                format!("numerical_features[{i}]"),
                format!(
                    "the feature {} is listed twice (also numerical_features[{first}])",
                    q(&self.numerical_features[i])
                ),
            );
        }
        if self.kind == ModelKind::Regression {
            for (list, names) in [
                ("numerical_features", &self.numerical_features),
                ("categorical_features", &self.categorical_features),
            ] {
                if let Some(i) = names.iter().position(|f| f == CHOICE_FEATURE) {
                    return problem(format!("{list}[{i}]"), choice_taken("a feature"));
                }
            }
        }
        for (i, f) in self.categorical_features.iter().enumerate() {
            let numerical = self.numerical_features.iter().position(|n| n == f);
            let earlier = self.categorical_features[..i].iter().position(|c| c == f);
            if numerical.is_some() || earlier.is_some() {
                let also = match (numerical, earlier) {
                    (Some(j), _) => format!(" (also as numerical, numerical_features[{j}])"),
                    (None, Some(j)) => format!(" (also categorical_features[{j}])"),
                    (None, None) => String::new(),
                };
                return problem(
                    format!("categorical_features[{i}]"),
                    format!("the feature {} is listed twice{also}", q(f)),
                );
            }
        }
        Ok(())
    }

    /// Every operation parses (within the language's limits) and reads only logged features
    /// or earlier operations.
    fn check_operations(&self) -> Checked {
        let mut ops = Vec::with_capacity(self.operations.len());
        let redefined = first_duplicate(self.operations.iter().map(|o| o.name.as_str()));
        for (i, spec) in self.operations.iter().enumerate() {
            if let Some((_, first)) = redefined.filter(|(again, _)| *again == i) {
                return problem(
                    format!("operations[{i}].name"),
                    format!(
                        "the operation {} is defined twice (also operations[{first}]): which one a later operation or the tree reads would depend on their order",
                        q(&spec.name)
                    ),
                );
            }
            if self.kind == ModelKind::Regression && spec.name == CHOICE_FEATURE {
                return problem(
                    format!("operations[{i}].name"),
                    choice_taken("an operation"),
                );
            }
            match Operation::from_spec(spec) {
                Ok(op) => ops.push(op),
                Err(e @ crate::Error::Expression { .. }) => {
                    return problem(format!("operations[{i}].expr"), e.to_string())
                }
                Err(e) => return problem(format!("operations[{i}].name"), e.to_string()),
            }
        }
        let logged = self.logged_features();
        if let Some((i, e)) = crate::ops::first_unknown_input(&ops, &logged) {
            return problem(format!("operations[{i}].expr"), e.to_string());
        }
        Ok(())
    }

    fn logged_features(&self) -> Vec<String> {
        self.numerical_features
            .iter()
            .chain(&self.categorical_features)
            .cloned()
            .collect()
    }

    /// The columns and the range guard read known features.
    fn check_columns(&self) -> Checked {
        if self.columns.len() > usize::from(u16::MAX) {
            return problem(
                "columns",
                format!("{} columns is more than 65535", self.columns.len()),
            );
        }
        let mut available = self.logged_features();
        available.extend(self.operations.iter().map(|o| o.name.clone()));
        if self.kind == ModelKind::Regression {
            available.push(CHOICE_FEATURE.to_string());
        }
        for (i, col) in self.columns.iter().enumerate() {
            let f = match col {
                Column::Numeric { name } => name,
                Column::OneHot { feature, .. } => feature,
            };
            if !available.contains(f) {
                return problem(
                    format!("columns[{i}]"),
                    format!(
                        "column `{}` reads `{}`, which is neither a logged feature nor an operation",
                        clip_to(&col.display_name(), 60),
                        clip_to(f, 60)
                    ),
                );
            }
            if let (ModelKind::Regression, Column::OneHot { feature, value }) = (self.kind, col) {
                if feature == CHOICE_FEATURE && !self.choices.contains(value) {
                    return problem(
                        format!("columns[{i}].value"),
                        format!("column `choice_{}` names no choice", clip_to(value, 60)),
                    );
                }
            }
        }
        fn key(c: &Column) -> (&str, Option<&str>) {
            match c {
                Column::Numeric { name } => (name, None),
                Column::OneHot { feature, value } => (feature, Some(value)),
            }
        }
        if let Some((i, first)) = first_duplicate(self.columns.iter().map(key)) {
            return problem(
                format!("columns[{i}]"),
                format!(
                    "the column `{}` is listed twice (also columns[{first}])",
                    clip_to(&self.columns[i].display_name(), 60)
                ),
            );
        }
        if let Some((i, first)) = first_duplicate(self.feature_ranges.iter().map(|r| &r.name)) {
            return problem(
                format!("feature_ranges[{i}].name"),
                format!(
                    "the feature range of {} is given twice (also feature_ranges[{first}])",
                    q(&self.feature_ranges[i].name)
                ),
            );
        }
        for (i, r) in self.feature_ranges.iter().enumerate() {
            if !available.contains(&r.name) {
                return problem(
                    format!("feature_ranges[{i}].name"),
                    format!("feature range of unknown feature {}", q(&r.name)),
                );
            }
            if r.min.is_nan() || r.max.is_nan() || r.min > r.max {
                return problem(
                    format!("feature_ranges[{i}]"),
                    format!("feature range of {} is [{}, {}]", q(&r.name), r.min, r.max),
                );
            }
        }
        Ok(())
    }

    /// The tree: indices in range, children after their parent, every node reached exactly
    /// once from the root, leaves of the right length holding valid values.
    fn check_tree(&self) -> Checked {
        let nodes = &self.tree.nodes;
        if nodes.is_empty() {
            return problem("tree.nodes", "the tree has no nodes");
        }
        let mut parents = vec![0u8; nodes.len()];
        for (i, node) in nodes.iter().enumerate() {
            let at = format!("tree.nodes[{i}]");
            match node {
                Node::Split {
                    column,
                    threshold,
                    left,
                    right,
                } => {
                    self.check_split(&at, *column, *threshold)?;
                    for (side, child) in [("left", *left), ("right", *right)] {
                        if child >= nodes.len() || child <= i {
                            return problem(
                                format!("{at}.{side}"),
                                format!(
                                    "node {i} has child {child}: children must come after their parent and exist (nodes: {})",
                                    nodes.len()
                                ),
                            );
                        }
                        if parents[child] > 0 {
                            return problem(
                                format!("{at}.{side}"),
                                format!(
                                    "node {i} has child {child}, which is already another node's child (the tree must be a tree)"
                                ),
                            );
                        }
                        parents[child] += 1;
                    }
                }
                Node::Leaf { value, .. } => self.check_leaf(&at, i, value)?,
            }
        }
        match parents.iter().skip(1).position(|n| *n == 0) {
            Some(i) => problem(
                format!("tree.nodes[{}]", i + 1),
                format!("node {} is not reachable from the root", i + 1),
            ),
            None => Ok(()),
        }
    }

    fn check_split(&self, at: &str, column: usize, threshold: f64) -> Checked {
        let Some(col) = self.columns.get(column) else {
            return problem(
                format!("{at}.column"),
                format!(
                    "the split reads column {column}, but there are {} columns",
                    self.columns.len()
                ),
            );
        };
        if !threshold.is_finite() {
            return problem(
                format!("{at}.threshold"),
                format!("the split's threshold is {threshold}"),
            );
        }
        if matches!(col, Column::OneHot { .. }) && !(0.0..1.0).contains(&threshold) {
            return problem(
                format!("{at}.threshold"),
                format!(
                    "the split of the one-hot column `{}` is at {threshold}; one-hot splits must lie in [0, 1)",
                    clip_to(&col.display_name(), 60)
                ),
            );
        }
        Ok(())
    }

    /// A leaf holds one value per choice (decision: probabilities in [0, 1] summing to 1) or
    /// one finite value (regression).
    fn check_leaf(&self, at: &str, i: usize, value: &[f64]) -> Checked {
        let want = match self.kind {
            ModelKind::Decision => self.choices.len(),
            ModelKind::Regression => 1,
        };
        if value.len() != want {
            return problem(
                format!("{at}.value"),
                format!("leaf {i} has {} values, expected {want}", value.len()),
            );
        }
        for (j, v) in value.iter().enumerate() {
            let bad = match self.kind {
                ModelKind::Decision => !(0.0..=1.0).contains(v),
                ModelKind::Regression => !v.is_finite(),
            };
            if bad {
                let what = match self.kind {
                    ModelKind::Decision => "a probability must lie in [0, 1]",
                    ModelKind::Regression => "a prediction must be finite",
                };
                return problem(
                    format!("{at}.value[{j}]"),
                    format!("leaf {i} holds the value {v}: {what}"),
                );
            }
        }
        let sum: f64 = value.iter().sum();
        if self.kind == ModelKind::Decision && (sum - 1.0).abs() > SUM_TOLERANCE {
            return problem(
                format!("{at}.value"),
                format!("leaf {i}'s probabilities sum to {sum}, not 1"),
            );
        }
        Ok(())
    }

    fn check_threshold(&self) -> Checked {
        if !self.threshold.is_finite() {
            return problem("threshold", format!("threshold is {}", self.threshold));
        }
        Ok(())
    }
}

/// Why a regression model's feature or operation may not be named `choice`.
fn choice_taken(what: &str) -> String {
    format!(
        "a regression tree reads the choice being scored as the column `{CHOICE_FEATURE}`: \
         {what} of that name would be a second `{CHOICE_FEATURE}`; rename it"
    )
}
