//! The `InductorChoices` handler module of a pruning heuristic (`ah-prune`'s model JSON):
//! one self-contained Python file that prunes Inductor's max-autotune GEMM choices before
//! any template code is generated.
//!
//! The file is the header, then the sources of `python/ah_inductor/naming.py` (the one owner
//! of choice names) and `python/ah_inductor/choices.py` (the handler runtime: features from
//! Inductor's `KernelInputs`, `install()`/`uninstall()`/`stats()`, composition, guards), then
//! the heuristic's `HEURISTIC` description and its `decide(f)` tree rendered here, which the
//! runtime's functions read at call time. Every string that reaches
//! the file (feature names, categorical values, choice names, the heuristic's name) is
//! written as a JSON string literal, which Python reads as the same string whatever it holds.

use serde_json::Value as Json;

use crate::error::CodegenError;

/// `python/ah_inductor/naming.py`.
pub const NAMING_PY: &str = include_str!("../../../python/ah_inductor/naming.py");
/// `python/ah_inductor/choices.py`.
pub const CHOICES_PY: &str = include_str!("../../../python/ah_inductor/choices.py");
/// Deepest tree rendered (Python refuses 100 levels of indentation).
pub const MAX_DEPTH: usize = 64;

/// The module's file name for heuristic `name` (`InductorMMH100` ->
/// `inductor_mm_h100_choices.py`).
pub fn file_name(name: &str) -> String {
    format!("{}_choices.py", crate::module_name(name))
}

/// Renders the module of a pruning model (its JSON); `header` is the comment block on top.
pub fn render_module(model: &Json, header: &str) -> Result<String, CodegenError> {
    let name = model["name"].as_str().unwrap_or_default().to_string();
    let invalid = |message: String| CodegenError::InvalidModel {
        heuristic: name.clone(),
        message,
    };
    if model["kind"] != "inductor_choices" {
        return Err(invalid(
            "not a pruning model (kind must be \"inductor_choices\"; train it with ah-prune)"
                .into(),
        ));
    }
    let capa = model["device_capa"]
        .as_array()
        .filter(|a| a.len() == 2 && a.iter().all(Json::is_u64));
    let capa = capa.ok_or_else(|| invalid("device_capa must be two integers".into()))?;
    let ops: Vec<String> = model["ops"]
        .as_array()
        .into_iter()
        .flatten()
        .map(lit)
        .collect();
    let mut decide = String::from("def decide(f):\n    \"\"\"The learned policy for a GEMM's features `f` (see choices.py).\"\"\"\n");
    node(&model["tree"], 1, &mut decide).map_err(invalid)?;
    Ok(format!(
        "{header}\n{naming}\n\n{choices}\n\n# ---- the learned heuristic ----\n\nHEURISTIC = {{\n    \"name\": {name},\n    \"device_capa\": ({c0}, {c1}),\n    \"torch\": {torch},\n    \"ops\": ({ops},),\n}}\n\n\ndef _align(x):\n    \"\"\"The largest power of two, at most 128, that divides x.\"\"\"\n    return min(128, x & -x) if x > 0 else 0\n\n\n{decide}",
        naming = strip_main(NAMING_PY),
        choices = strip_main(CHOICES_PY),
        name = lit(&model["name"]),
        c0 = capa[0],
        c1 = capa[1],
        torch = lit(&model["torch"]),
        ops = ops.join(", "),
    ))
}

/// A JSON value as a Python literal (strings as JSON string literals).
fn lit(v: &Json) -> String {
    match v {
        Json::Bool(true) => "True".into(),
        Json::Bool(false) => "False".into(),
        Json::Number(n) => n.to_string(),
        Json::String(s) => Json::String(s.clone()).to_string(),
        _ => "None".into(),
    }
}

/// A logged value (ah_core's serde form) as a Python literal.
fn value_lit(v: &Json) -> Result<String, String> {
    let inner = v
        .as_object()
        .and_then(|o| o.iter().next())
        .map(|(_, x)| x)
        .unwrap_or(v);
    match inner {
        Json::Number(n) if n.as_f64().is_some_and(f64::is_finite) => Ok(n.to_string()),
        Json::Bool(_) | Json::String(_) => Ok(lit(inner)),
        other => Err(format!(
            "a categorical value that is not a bool, number or string: {other}"
        )),
    }
}

fn quantity(q: &Json) -> Result<String, String> {
    let f = |k: &str| {
        q[k].as_str()
            .map(|s| format!("f[{}]", lit(&Json::String(s.into()))))
            .ok_or("a quantity without its feature name")
    };
    Ok(match q["kind"].as_str() {
        Some("feature") => f("name")?,
        Some("product") => format!("{} * {}", f("a")?, f("b")?),
        Some("align") => format!("_align({})", f("name")?),
        _ => return Err(format!("unknown quantity {q}")),
    })
}

fn test(t: &Json) -> Result<String, String> {
    match t["kind"].as_str() {
        Some("le") => {
            let thr = t["threshold"]
                .as_f64()
                .filter(|x| x.is_finite())
                .ok_or("a threshold that is not a finite number")?;
            Ok(format!("{} <= {thr:?}", quantity(&t["quantity"])?))
        }
        Some("eq") => {
            let feat = t["feature"]
                .as_str()
                .ok_or("an equality test without its feature")?;
            Ok(format!(
                "f[{}] == {}",
                lit(&Json::String(feat.into())),
                value_lit(&t["value"])?
            ))
        }
        _ => Err(format!("unknown test {t}")),
    }
}

fn policy(p: &Json) -> Result<String, String> {
    match p["kind"].as_str() {
        Some("extern") => Ok("(\"extern\", ())".into()),
        Some("default") => Ok("(\"default\", ())".into()),
        Some("keep") => {
            let names = p["choices"]
                .as_array()
                .ok_or("a keep policy without choices")?;
            let names: Vec<String> = names
                .iter()
                .map(|n| {
                    n.as_str()
                        .map(|s| lit(&Json::String(s.into())))
                        .ok_or("a choice that is not a string")
                })
                .collect::<Result<_, _>>()?;
            Ok(format!("(\"keep\", ({},))", names.join(", ")))
        }
        _ => Err(format!("unknown policy {p}")),
    }
}

fn node(n: &Json, depth: usize, out: &mut String) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "the tree is deeper than {MAX_DEPTH} levels, more than generated Python can nest"
        ));
    }
    let pad = "    ".repeat(depth);
    match n["node"].as_str() {
        Some("leaf") => out.push_str(&format!("{pad}return {}\n", policy(&n["policy"])?)),
        Some("split") => {
            out.push_str(&format!("{pad}if {}:\n", test(&n["test"])?));
            node(&n["yes"], depth + 1, out)?;
            out.push_str(&format!("{pad}else:\n"));
            node(&n["no"], depth + 1, out)?;
        }
        _ => return Err(format!("unknown node {n}")),
    }
    Ok(())
}

/// A source without its `if __name__ == "__main__":` block.
fn strip_main(src: &str) -> &str {
    src.find("\nif __name__ == \"__main__\":")
        .map_or(src, |i| &src[..i])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn model(tree: Json) -> Json {
        json!({"kind": "inductor_choices", "name": "T", "device_capa": [9, 0], "torch": "2.11",
               "ops": ["mm"], "tree": tree})
    }

    #[test]
    fn hostile_strings_become_python_string_literals() {
        let evil = "x\"); import os; os.system('rm -rf /') #\n";
        let tree = json!({"node": "split",
            "test": {"kind": "eq", "feature": evil, "value": {"Str": evil}},
            "yes": {"node": "leaf", "policy": {"kind": "keep", "choices": [evil]}, "samples": 1},
            "no": {"node": "leaf", "policy": {"kind": "extern"}, "samples": 1}});
        let code = render_module(&model(tree), "# h").unwrap();
        let lit = serde_json::to_string(evil).unwrap();
        assert!(code.contains(&format!("if f[{lit}] == {lit}:")));
        assert!(code.contains(&format!("return (\"keep\", ({lit},))")));
        assert!(!code.contains("os.system('rm -rf /') #\n"));
    }

    #[test]
    fn bad_models_are_refused() {
        let leaf = json!({"node": "leaf", "policy": {"kind": "default"}, "samples": 1});
        let mut deep = leaf.clone();
        for _ in 0..=MAX_DEPTH {
            deep = json!({"node": "split", "test": {"kind": "le", "quantity": {"kind": "feature", "name": "m"}, "threshold": 1.0}, "yes": deep, "no": leaf});
        }
        assert!(render_module(&model(deep), "").is_err());
        let nan = json!({"node": "split", "test": {"kind": "le", "quantity": {"kind": "feature", "name": "m"}, "threshold": null}, "yes": leaf, "no": leaf});
        assert!(render_module(&model(nan), "").is_err());
        let mut other = model(leaf);
        other["kind"] = json!("decision");
        assert!(render_module(&other, "").is_err());
    }
}
