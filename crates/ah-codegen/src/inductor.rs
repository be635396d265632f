//! The `InductorChoices` handler module of a pruning heuristic (`ah-prune`'s model JSON):
//! one self-contained Python file that prunes Inductor's max-autotune GEMM choices before
//! any template code is generated.
//!
//! The file is the header, then the sources of `python/ah_inductor/naming.py` (the one owner
//! of choice names), `python/ah_inductor/ptxas.py` (one ptxas for Inductor's compile workers
//! and the compiling process), `python/ah_inductor/retime.py` (max-autotune's small-GEMM choices
//! timed again by CUDA graph, with `install(retime=True)`) and `python/ah_inductor/choices.py`
//! (the handler runtime: features from
//! Inductor's `KernelInputs`, `install()`/`uninstall()`/`stats()`, composition, guards), then
//! the heuristic's `HEURISTIC` description and its `decide(f)` tree rendered here, which the
//! runtime's functions read at call time. Every string that reaches
//! the file (feature names, categorical values, choice names, the heuristic's name) is
//! written as a JSON string literal, which Python reads as the same string whatever it holds.

use serde_json::Value as Json;

use crate::error::CodegenError;
use crate::prune_tree::{self, Node, Policy, Quantity, SharedLists, Test};

/// `python/ah_inductor/naming.py`.
pub const NAMING_PY: &str = include_str!("../../../python/ah_inductor/naming.py");
/// `python/ah_inductor/ptxas.py`.
pub const PTXAS_PY: &str = include_str!("../../../python/ah_inductor/ptxas.py");
/// `python/ah_inductor/retime.py`.
pub const RETIME_PY: &str = include_str!("../../../python/ah_inductor/retime.py");
/// `python/ah_inductor/choices.py`.
pub const CHOICES_PY: &str = include_str!("../../../python/ah_inductor/choices.py");
pub use crate::prune_tree::MAX_DEPTH;

/// The module's file name for heuristic `name` (`InductorMMH100` ->
/// `inductor_mm_h100_choices.py`).
pub fn file_name(name: &str) -> String {
    format!("{}_choices.py", crate::module_name(name))
}

/// Renders the module of a pruning model (its JSON); `header` is the comment block on top.
/// Refused when CPython would not compile the result (checked in-process, `python_check`).
pub fn render_module(model: &Json, header: &str) -> Result<String, CodegenError> {
    let learned = learned_source(model)?;
    let source = format!(
        "{header}\n{naming}\n\n{ptxas}\n\n{retime}\n\n{choices}\n\n{learned}",
        naming = strip_main(NAMING_PY),
        ptxas = strip_main(PTXAS_PY),
        retime = strip_main(RETIME_PY),
        choices = strip_main(CHOICES_PY),
    );
    // Compiled before it is written, like every Python artifact (`python_check`).
    let name = model["name"].as_str().unwrap_or_default();
    crate::python_check::check_compiles(&source, &file_name(name))?;
    Ok(source)
}

/// The error for an invalid pruning model `model`.
pub(crate) fn invalid(model: &Json, message: String) -> CodegenError {
    CodegenError::InvalidModel {
        heuristic: model["name"].as_str().unwrap_or_default().to_string(),
        message,
    }
}

/// The learned part every Python rendering of a pruning model ends with: `HEURISTIC` (name,
/// device capability and shared memory, PyTorch version, ops), the helpers its quantities call (`_align`,
/// `_lead_align`) and the `decide(f)` tree.
pub(crate) fn learned_source(model: &Json) -> Result<String, CodegenError> {
    if model["kind"] != "inductor_choices" {
        return Err(invalid(
            model,
            "not a pruning model (kind must be \"inductor_choices\"; train it with ah-prune)"
                .into(),
        ));
    }
    let capa = model["device_capa"]
        .as_array()
        .filter(|a| a.len() == 2 && a.iter().all(Json::is_u64));
    let capa = capa.ok_or_else(|| invalid(model, "device_capa must be two integers".into()))?;
    let ops: Vec<String> = model["ops"]
        .as_array()
        .into_iter()
        .flatten()
        .map(lit)
        .collect();
    let mut decide = String::from("def decide(f):\n    \"\"\"The learned policy for a GEMM's features `f` (see choices.py).\"\"\"\n");
    let tree = prune_tree::read(&model["tree"]).map_err(|m| invalid(model, m))?;
    let shared = SharedLists::of(&tree);
    node(&tree, 1, &shared, &mut decide);
    Ok(format!(
        "# ---- the learned heuristic ----\n\nHEURISTIC = {{\n    \"name\": {name},\n    \"device_capa\": ({c0}, {c1}),\n    \"shared_memory\": {shared_memory},\n    \"torch\": {torch},\n    \"ops\": ({ops},),\n}}\n\n{lists}\n{helpers}{decide}",
        lists = shared_source(&shared),
        name = lit(&model["name"]),
        c0 = capa[0],
        c1 = capa[1],
        shared_memory = model["shared_memory"].as_u64().unwrap_or(0),
        torch = lit(&model["torch"]),
        ops = ops.join(", "),
        helpers = helpers(&tree),
    ))
}

/// The helpers the tree's quantities call, each emitted only when a split uses it.
fn helpers(tree: &Node) -> String {
    prune_tree::Helpers::of(tree).source(ALIGN, LEAD_ALIGN)
}

/// `_align`, which a tree testing an alignment calls.
const ALIGN: &str = "def _align(x):
    \"\"\"The largest power of two, at most 128, that divides x.\"\"\"
    return min(128, x & -x) if x > 0 else 0


";

/// `_lead_align` (`prune_tree::lead_align`), over `naming.py`'s `DTYPE_BYTES` (every rendering
/// holds naming.py's source; a Rust test checks that table against `prune_tree::DTYPE_BYTES`).
const LEAD_ALIGN: &str = "def _lead_align(f):
    \"\"\"The smallest alignment in bytes, at most 128, of the leading dimensions of the operands
    (the larger of each one's strides) and the output (n): cuBLAS runs its fast kernels only
    when all three are 16-byte aligned.\"\"\"
    size = DTYPE_BYTES.get(f[\"mat1_dtype\"], 1)
    lds = (
        max(f[\"mat1_stride_0\"], f[\"mat1_stride_1\"]),
        max(f[\"mat2_stride_0\"], f[\"mat2_stride_1\"]),
        f[\"n\"],
    )
    return min(min(128, _align(ld) * size) for ld in lds)


";

/// A JSON value as a Python literal (strings as JSON string literals).
pub(crate) fn lit(v: &Json) -> String {
    match v {
        Json::Bool(true) => "True".into(),
        Json::Bool(false) => "False".into(),
        Json::Number(n) => n.to_string(),
        Json::String(s) => Json::String(s.clone()).to_string(),
        _ => "None".into(),
    }
}

fn quantity(q: Quantity) -> String {
    let f = |name: &str| format!("f[{}]", str_lit(name));
    match q {
        Quantity::Feature(n) => f(n),
        Quantity::Product(a, b) => format!("{} * {}", f(a), f(b)),
        Quantity::Align(n) => format!("_align({})", f(n)),
        Quantity::LeadAlign => "_lead_align(f)".into(),
        Quantity::KRatio => format!("{} / max({}, {}, 1)", f("k"), f("m"), f("n")),
        Quantity::MinSide => format!("min({}, {}, {})", f("m"), f("k"), f("n")),
        Quantity::Work => format!("{} * {} * {} * {}", f("batch"), f("m"), f("k"), f("n")),
    }
}

fn test(t: Test) -> String {
    match t {
        Test::Le(q, thr) => format!("{} <= {thr:?}", quantity(q)),
        Test::Eq(feat, value) => {
            format!("f[{}] == {}", str_lit(feat), lit(value))
        }
    }
}

/// The shared lists as module constants (`KEPT_1 = (...)`), each after a blank line, and a
/// blank line after the last (two before the next `def`); nothing when none is shared.
fn shared_source(shared: &SharedLists) -> String {
    let mut out: String = shared
        .iter()
        .map(|(kind, name, names, leaves)| {
            let items: String = names.iter().map(|n| format!("    {},\n", str_lit(n))).collect();
            let doing = kind.doing();
            format!("\n# Template choices {doing} at {leaves} leaves of the learned tree.\n{name} = (\n{items})\n")
        })
        .collect();
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// A string as a Python literal (a JSON string literal).
pub(crate) fn str_lit(s: &str) -> String {
    lit(&Json::String(s.into()))
}

fn policy(p: &Policy, shared: &SharedLists) -> String {
    match p {
        Policy::Extern => "(\"extern\", ())".into(),
        Policy::Default => "(\"default\", ())".into(),
        Policy::Keep(names) | Policy::Drop(names) => {
            let kind = if matches!(p, Policy::Keep(_)) {
                "keep"
            } else {
                "drop"
            };
            match shared.name(p) {
                Some(name) => format!("(\"{kind}\", {name})"),
                None => {
                    let names: Vec<String> = names.iter().map(|n| str_lit(n)).collect();
                    format!("(\"{kind}\", ({},))", names.join(", "))
                }
            }
        }
    }
}

fn node(n: &Node, depth: usize, shared: &SharedLists, out: &mut String) {
    let pad = "    ".repeat(depth);
    match n {
        Node::Leaf(p, samples) => out.push_str(&format!(
            "{pad}return {}{}\n",
            policy(p, shared),
            support(*samples)
        )),
        Node::Split(t, yes, no) => {
            out.push_str(&format!("{pad}if {}:\n", test(*t)));
            node(yes, depth + 1, shared, out);
            out.push_str(&format!("{pad}else:\n"));
            node(no, depth + 1, shared, out);
        }
    }
}

/// A leaf's count of training GEMMs as a comment after its decision (nothing when unknown).
fn support(samples: Option<u64>) -> String {
    match samples {
        Some(1) => "  # 1 training GEMM".into(),
        Some(n) => format!("  # {n} training GEMMs"),
        None => String::new(),
    }
}

/// A source without its `if __name__ == "__main__":` block.
pub(crate) fn strip_main(src: &str) -> &str {
    src.find("\nif __name__ == \"__main__\":")
        .map_or(src, |i| &src[..i])
}

#[cfg(test)]
pub(crate) mod tests {
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
            "test": {"kind": "eq", "feature": evil, "value": evil},
            "yes": {"node": "leaf", "policy": {"kind": "keep", "choices": [evil]}, "samples": 1},
            "no": {"node": "leaf", "policy": {"kind": "extern"}, "samples": 1}});
        let code = render_module(&model(tree), "# h").unwrap();
        let lit = serde_json::to_string(evil).unwrap();
        assert!(code.contains(&format!("if f[{lit}] == {lit}:")));
        assert!(code.contains(&format!("return (\"keep\", ({lit},))")));
        assert!(!code.contains("os.system('rm -rf /') #\n"));
    }

    /// `shared_memory` reaches the code as a number only: a hostile value (text, negative,
    /// fractional) is rendered as 0, which turns the unfit rule off.
    #[test]
    fn shared_memory_is_rendered_as_an_integer_or_zero() {
        let leaf = json!({"node": "leaf", "policy": {"kind": "extern"}, "samples": 1});
        let with = |v: Json| {
            let mut m = model(leaf.clone());
            m["shared_memory"] = v;
            (
                render_module(&m, "# h").unwrap(),
                crate::inductor_rust::render_module(&m, "//! h").unwrap(),
            )
        };
        let (py, rs) = with(json!(232448));
        assert!(py.contains("\"shared_memory\": 232448,"));
        assert!(rs.contains("pub const SHARED_MEMORY: u64 = 232448;"));
        for evil in [
            json!("1,\n    __import__(\"evil\")"),
            json!(-5),
            json!(1.5),
            json!([1]),
        ] {
            let (py, rs) = with(evil.clone());
            assert!(py.contains("\"shared_memory\": 0,"), "{evil}");
            assert!(rs.contains("pub const SHARED_MEMORY: u64 = 0;"), "{evil}");
            assert!(!py.contains("evil") && !rs.contains("evil"), "{evil}");
        }
    }

    /// A tree keeping `shared` at two leaves and `once` at one.
    pub(crate) fn shared_tree(shared: &str, once: &str) -> Json {
        let keep = |c: &str| json!({"node": "leaf", "policy": {"kind": "keep", "choices": [c, "b"]}, "samples": 2});
        let le = |name: &str| json!({"kind": "le", "quantity": {"kind": "feature", "name": name}, "threshold": 8.0});
        json!({"node": "split", "test": le("m"), "yes": keep(shared),
            "no": {"node": "split", "test": le("k"), "yes": keep(once),
                "no": {"node": "split", "test": le("n"), "yes": {"node": "leaf", "policy": {"kind": "extern"}},
                    "no": keep(shared)}}})
    }

    #[test]
    fn a_list_kept_at_several_leaves_is_named_once() {
        let evil = "x\"); import os #\n";
        let code = render_module(&model(shared_tree(evil, "once")), "# h").unwrap();
        let lit = serde_json::to_string(evil).unwrap();
        let constant = format!("# Template choices kept at 2 leaves of the learned tree.\nKEPT_1 = (\n    {lit},\n    \"b\",\n)\n\n\n");
        assert!(code.contains(&constant), "{code}");
        assert_eq!(
            code.matches("return (\"keep\", KEPT_1)  # 2 training GEMMs\n")
                .count(),
            2
        );
        assert!(code.contains("return (\"keep\", (\"once\", \"b\",))  # 2 training GEMMs\n"));
        assert_eq!(code.matches(&lit).count(), 1);
        // Without a shared list, nothing is added between HEURISTIC and the tree.
        let once =
            json!({"node": "leaf", "policy": {"kind": "keep", "choices": ["one"]}, "samples": 1});
        let plain = render_module(&model(once), "# h").unwrap();
        assert!(!plain.contains("KEPT_"));
        assert!(plain.contains("}\n\n\ndef decide(f):"), "{plain}");
    }

    /// A tree dropping `dropped` from the full list at two leaves and keeping the same names at
    /// a third.
    pub(crate) fn dropped_tree(dropped: &str) -> Json {
        let leaf = |kind: &str| json!({"node": "leaf", "policy": {"kind": kind, "choices": [dropped]}, "samples": 3});
        let le = |name: &str| json!({"kind": "le", "quantity": {"kind": "feature", "name": name}, "threshold": 8.0});
        json!({"node": "split", "test": le("m"), "yes": leaf("drop"),
            "no": {"node": "split", "test": le("k"), "yes": leaf("keep"), "no": leaf("drop")}})
    }

    #[test]
    fn a_list_dropped_at_several_leaves_is_named_apart_from_kept_ones() {
        let evil = "x\"); import os #\n";
        let code = render_module(&model(dropped_tree(evil)), "# h").unwrap();
        let lit = serde_json::to_string(evil).unwrap();
        let constant = format!("# Template choices dropped from the full list at 2 leaves of the learned tree.\nDROPPED_1 = (\n    {lit},\n)\n");
        assert!(code.contains(&constant), "{code}");
        assert_eq!(
            code.matches("return (\"drop\", DROPPED_1)  # 3 training GEMMs\n")
                .count(),
            2
        );
        assert!(
            code.contains(&format!(
                "return (\"keep\", ({lit},))  # 3 training GEMMs\n"
            )),
            "{code}"
        );
        assert!(!code.contains("KEPT_1"));
    }

    #[test]
    fn a_leaf_says_how_many_training_gemms_it_rests_on() {
        let tree = json!({"node": "split",
            "test": {"kind": "le", "quantity": {"kind": "feature", "name": "m"}, "threshold": 64.0},
            "yes": {"node": "leaf", "policy": {"kind": "extern"}, "samples": 1},
            "no": {"node": "split",
                "test": {"kind": "le", "quantity": {"kind": "feature", "name": "k"}, "threshold": 8.0},
                "yes": {"node": "leaf", "policy": {"kind": "extern"}, "samples": 523},
                "no": {"node": "leaf", "policy": {"kind": "default"}, "samples": "5\"\n; import evil_module"}}});
        let code = render_module(&model(tree), "# h").unwrap();
        assert!(code.contains("return (\"extern\", ())  # 1 training GEMM\n"));
        assert!(code.contains("return (\"extern\", ())  # 523 training GEMMs\n"));
        // A count that is no integer is left out, never written into the code.
        assert!(code.contains("return (\"default\", ())\n"));
        assert!(!code.contains("evil_module"));
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

    #[test]
    fn a_module_python_cannot_compile_is_refused() {
        let leaf = json!({"node": "leaf", "policy": {"kind": "extern"}, "samples": 1});
        assert!(render_module(&model(leaf.clone()), "# a comment").is_ok());
        let err = render_module(&model(leaf), "not a comment (").unwrap_err();
        assert!(
            matches!(err, CodegenError::ArtifactDoesNotCompile { line: 1, .. }),
            "{err}"
        );
    }
}
