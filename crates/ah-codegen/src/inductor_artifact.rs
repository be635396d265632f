//! The `mm` AutoHeuristic artifact of a pruning heuristic (`ah-prune`'s model JSON): a PyTorch
//! artifact (`_<Name>.py`) for users of `autoheuristic_use="mm"`, droppable into
//! `torch/_inductor/autoheuristic/artifacts/`.
//!
//! The file is the header, the sources of `python/ah_inductor/naming.py` (PyTorch's choice ids,
//! `pytorch_mm_id`) and `python/ah_inductor/artifact.py` (the hook's runtime: features from
//! PyTorch's `AHContext`, the variable-length ranking, the guard), the same learned part as
//! the handler module ([`crate::inductor`]), and a `LearnedHeuristicDecision` subclass whose
//! methods call that runtime. Names from the model reach the file as JSON string literals; the
//! class name must be an identifier.

use serde_json::Value as Json;

use crate::error::CodegenError;
use crate::inductor::{invalid, learned_source, lit, str_lit, strip_main, NAMING_PY};
use crate::prune_tree::{self, Node, Policy};

/// `python/ah_inductor/artifact.py`.
pub const ARTIFACT_PY: &str = include_str!("../../../python/ah_inductor/artifact.py");

/// The artifact's file name for heuristic `name` (PyTorch discovers `_`-prefixed modules).
pub fn file_name(name: &str) -> String {
    format!("_{name}.py")
}

/// Renders the artifact of a pruning model (its JSON); `header` is the comment block on top.
/// Refused when the name is no Python identifier or CPython would not compile the result
/// (checked in-process, `python_check`).
pub fn render_artifact(model: &Json, header: &str) -> Result<String, CodegenError> {
    let name = model["name"].as_str().unwrap_or_default();
    if !is_class_name(name) {
        return Err(invalid(
            model,
            "the name must be ASCII letters and digits, starting with a capital letter (it is the \
             artifact's class name)"
                .into(),
        ));
    }
    let learned = learned_source(model)?;
    let tree = prune_tree::read(&model["tree"]).map_err(|m| invalid(model, m))?;
    let mut kept = Vec::new();
    keep_names(&tree, &mut kept);
    let features: Vec<String> = model["features"]
        .as_array()
        .into_iter()
        .flatten()
        .map(lit)
        .collect();
    let source = format!(
        "{header}\n{naming}\n\n{runtime}\n\n{learned}\n\n{class}",
        naming = strip_main(NAMING_PY),
        runtime = strip_main(ARTIFACT_PY),
        class = class(name, &features, &kept),
    );
    crate::python_check::check_compiles(&source, &file_name(name))?;
    Ok(source)
}

/// The `LearnedHeuristicDecision` subclass.
fn class(name: &str, features: &[String], kept: &[&str]) -> String {
    let kept: Vec<String> = kept.iter().map(|n| str_lit(n)).collect();
    format!(
        "# Every template choice a leaf keeps (as large GEMMs are offered it), and the features
# `decide` reads.
KEPT = ({kept},)
FEATURES = ({features},)

from torch._inductor.autoheuristic.learnedheuristic_interface import (  # noqa: E402
    LearnedHeuristicDecision,
)


class {name}(LearnedHeuristicDecision):
    \"\"\"`decide` as PyTorch's `mm` hook asks it (see the runtime above).\"\"\"

    def __init__(self) -> None:
        super().__init__()
        self.choices = mm_known_ids(KEPT)

    def check_precondition(self, metadata, context) -> bool:
        return mm_precondition(HEURISTIC, metadata)

    def get_choice(self, idx):
        return self.choices[idx] if 0 <= idx < len(self.choices) else None

    def get_confidence_threshold(self) -> float:
        return 0.0

    def get_name(self) -> str:
        return \"mm\"

    def get_best_choices(self, context):
        return mm_best_choices(decide, FEATURES, context, self.choices, HEURISTIC.get(\"shared_memory\", 0))
",
        kept = kept.join(", "),
        features = features.join(", "),
    )
}

/// The template names the leaves of `n` keep, each once, first occurrence first.
fn keep_names<'a>(n: &Node<'a>, out: &mut Vec<&'a str>) {
    match n {
        Node::Leaf(Policy::Keep(names), _) => {
            for name in names {
                if !out.contains(name) {
                    out.push(name);
                }
            }
        }
        Node::Leaf(..) => {}
        Node::Split(_, yes, no) => {
            keep_names(yes, out);
            keep_names(no, out);
        }
    }
}

fn is_class_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn model(name: &str, tree: Json) -> Json {
        json!({"kind": "inductor_choices", "name": name, "device_capa": [9, 0], "torch": "2.11",
               "ops": ["mm"], "features": ["m", "k", "n"], "tree": tree})
    }

    #[test]
    fn keep_names_are_listed_once_in_tree_order() {
        let keep = |c: Json| json!({"node": "leaf", "policy": {"kind": "keep", "choices": c}});
        let tree = json!({"node": "split",
            "test": {"kind": "le", "quantity": {"kind": "feature", "name": "m"}, "threshold": 64.0},
            "yes": keep(json!(["a", "b"])), "no": keep(json!(["b", "c"]))});
        let code = render_artifact(&model("T", tree), "# t").unwrap();
        assert!(code.contains("KEPT = (\"a\", \"b\", \"c\",)"), "{code}");
        assert!(code.contains("class T(LearnedHeuristicDecision):"));
    }

    /// Choice and feature names reach the file only as JSON string literals (the file is
    /// checked to compile as it is rendered).
    #[test]
    fn hostile_names_stay_string_literals() {
        let payload = "x\"\"\"\nimport os; os.system('boom')\n#\u{202e}";
        let tree = json!({"node": "leaf", "policy": {"kind": "keep", "choices": [payload]}});
        let mut m = model("T", tree);
        m["features"] = json!([payload]);
        let code = render_artifact(&m, "# t").unwrap();
        let literal = Json::String(payload.into()).to_string();
        assert!(code.contains(&format!("KEPT = ({literal},)")), "{code}");
        assert!(code.contains(&format!("FEATURES = ({literal},)")));
        assert!(!code.contains("\nimport os; os.system"));
    }

    #[test]
    fn a_name_that_is_no_class_name_is_refused() {
        for name in ["", "t", "T-1", "T\nimport os", "Ünicode"] {
            let err = render_artifact(
                &model(name, json!({"node": "leaf", "policy": {"kind": "extern"}})),
                "# t",
            );
            assert!(err.is_err(), "{name:?}");
        }
    }
}
