//! The Rust module of a pruning heuristic (`ah-prune`'s model JSON): the same tree as the
//! `InductorChoices` handler's `decide(f)` ([`crate::inductor`]), as a dependency-free Rust
//! function over a GEMM's features, for tools that plan or audit max-autotune without Python.
//!
//! The features are the ones the handler computes from Inductor's `KernelInputs`
//! (`python/ah_inductor/choices.py`): sizes and strides as integers, the categorical ones
//! (`op`, dtypes, contiguity, `using_tf32`) as the text PyTorch's log holds (`"torch.float16"`,
//! `"True"`, `"not_float_32"`). Every string from the model reaches the file as a Rust string
//! literal (`{:?}` of the string), whatever it holds.

use serde_json::Value as Json;

use ah_core::Value;

use crate::error::CodegenError;
use crate::prune_tree::{self, Node, Policy, Quantity, SharedLists, Test};

/// The handler's integer features (struct fields of type `i64`), in its order.
const INTEGER: [&str; 8] = [
    "m",
    "k",
    "n",
    "batch",
    "mat1_stride_0",
    "mat1_stride_1",
    "mat2_stride_0",
    "mat2_stride_1",
];
/// The handler's categorical features (struct fields of type `&str`), in its order.
pub const CATEGORICAL: [&str; 6] = [
    "op",
    "mat1_dtype",
    "mat2_dtype",
    "mat1_iscontig",
    "mat2_iscontig",
    "using_tf32",
];

/// The module's file name for heuristic `name` (`InductorMMH100` -> `inductor_mmh100.rs`).
pub fn file_name(name: &str) -> String {
    format!("{}.rs", crate::module_name(name))
}

/// Renders the Rust module of a pruning model (its JSON); `header` is its `//!` doc block.
pub fn render_module(model: &Json, header: &str) -> Result<String, CodegenError> {
    let invalid = |message: String| CodegenError::InvalidModel {
        heuristic: model["name"].as_str().unwrap_or_default().to_string(),
        message,
    };
    let mut body = String::new();
    let tree = prune_tree::read(&model["tree"]).map_err(&invalid)?;
    let shared = SharedLists::of(&tree);
    node(&tree, 1, &shared, &mut body).map_err(invalid)?;
    let ops: Vec<String> = model["ops"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| o.as_str().map(|s| format!("{s:?}")))
        .collect::<Option<_>>()
        .ok_or_else(|| invalid("ops must be strings".into()))?;
    let capa: Vec<u64> = model["device_capa"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_u64)
        .collect();
    let [c0, c1] = capa[..] else {
        return Err(invalid("device_capa must be two integers".into()));
    };
    let text = |k: &str| model[k].as_str().unwrap_or_default().to_string();
    crate::rustfmt::rustfmt(&format!(
        "{header}\n{PRELUDE}{table}{helpers}\n/// The heuristic's name.\npub const NAME: &str = {name:?};\n/// The CUDA device capability it was trained on.\npub const DEVICE_CAPA: (u32, u32) = ({c0}, {c1});\n/// Bytes of shared memory a block may use on that device (the training log's; 0: not known).\npub const SHARED_MEMORY: u64 = {shared_memory};\n/// The PyTorch major.minor it was trained with.\npub const TORCH: &str = {torch:?};\n/// The Inductor ops it decides (`baddbmm` is decided as `bmm`).\npub const OPS: &[&str] = &[{ops}];\n{lists}\n/// The learned policy for GEMM `g`.\npub fn decide(g: &Gemm) -> Policy {{\n{body}}}\n",
        name = text("name"),
        torch = text("torch"),
        ops = ops.join(", "),
        helpers = helpers(&tree),
        lists = shared_source(&shared),
        table = dtype_table(),
        shared_memory = model["shared_memory"].as_u64().unwrap_or(0),
    ))
}

/// The helpers the tree's quantities call, each emitted only when a split uses it (an unused
/// private function is a warning in the user's build).
fn helpers(tree: &Node) -> String {
    prune_tree::Helpers::of(tree).source(ALIGN, LEAD_ALIGN)
}

/// The module's `DTYPE_BYTES`: `prune_tree::DTYPE_BYTES` as a Rust slice.
fn dtype_table() -> String {
    let entries: Vec<String> = prune_tree::DTYPE_BYTES
        .iter()
        .map(|&(d, b)| format!("({d:?}, {b})"))
        .collect();
    format!(
        "\n/// Bytes of an element of each dtype `pipeline_bytes` and `lead_align` know.\nconst DTYPE_BYTES: &[(&str, i64)] = &[{}];\n",
        entries.join(", ")
    )
}

/// The types every module defines (one self-contained file, no dependency).
const PRELUDE: &str = "/// A GEMM as Inductor's handler sees it before templates are generated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gemm<'a> {
    /// Rows of the output.
    pub m: i64,
    /// The reduction dimension.
    pub k: i64,
    /// Columns of the output.
    pub n: i64,
    /// Batch size (1 for `mm` and `addmm`).
    pub batch: i64,
    /// `mm`, `addmm` or `bmm`.
    pub op: &'a str,
    /// The first operand's dtype as PyTorch logs it: `torch.bfloat16`, ...
    pub mat1_dtype: &'a str,
    /// The second operand's dtype.
    pub mat2_dtype: &'a str,
    /// Strides of the operands' last two dimensions, in elements.
    pub mat1_stride_0: i64,
    /// See `mat1_stride_0`.
    pub mat1_stride_1: i64,
    /// See `mat1_stride_0`.
    pub mat2_stride_0: i64,
    /// See `mat1_stride_0`.
    pub mat2_stride_1: i64,
    /// Whether the first operand is contiguous: `True` or `False`.
    pub mat1_iscontig: &'a str,
    /// Whether the second operand is contiguous: `True` or `False`.
    pub mat2_iscontig: &'a str,
    /// `True` or `False` for float32, `not_float_32` otherwise.
    pub using_tf32: &'a str,
}

/// What to keep of Inductor's max-autotune choice list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// One cuBLAS choice only: nothing is generated or benchmarked.
    Extern,
    /// One cuBLAS choice and these template choices (names as `naming.py` spells them), each
    /// as Inductor sizes it to the GEMM: see [`sized_config`]; Inductor's full list where those
    /// it offers cannot run: see [`none_fit`].
    Keep(&'static [&'static str]),
    /// Unsure: Inductor's full list.
    Default,
    /// Unsure, but not about these template choices: Inductor's full list without them,
    /// matched by the names Inductor offers this GEMM (configs that never came near the best
    /// on the training GEMMs of their kind; not sized).
    Drop(&'static [&'static str]),
}

/// The choice Inductor offers GEMM `g` for the kept config `name`: Inductor clamps a Triton
/// `mm` config's blocks to the GEMM (each to its dimension rounded up to a power of two, at
/// least 16) and its warps to `BLOCK_M * BLOCK_N / 256`, so a config learned on large GEMMs is
/// offered smaller-tiled to a small one. Other names are returned as they are. The same rule
/// as `sized_config` in `naming.py` and in `ah_train::prune::sizing`.
pub fn sized_config(name: &str, g: &Gemm) -> String {
    let Some(mut values) = config_values(name) else {
        return name.to_string();
    };
    let get = |key: &str| values.iter().find(|(k, _)| *k == key).map(|&(_, v)| v);
    let clamp = |block: i64, dim: i64| {
        let dim = u64::try_from(dim.max(1)).unwrap_or(1).next_power_of_two();
        block.min(i64::try_from(dim).unwrap_or(i64::MAX).max(16)).max(16)
    };
    let (Some(bm), Some(bn), Some(bk)) = (get(\"BLOCK-M\"), get(\"BLOCK-N\"), get(\"BLOCK-K\")) else {
        return name.to_string();
    };
    let (bm, bn, bk) = (clamp(bm, g.m), clamp(bn, g.n), clamp(bk, g.k));
    for (key, v) in values.iter_mut() {
        *v = match *key {
            \"BLOCK-M\" => bm,
            \"BLOCK-N\" => bn,
            \"BLOCK-K\" => bk,
            \"numwarps\" => (*v).min(bm.saturating_mul(bn) / 256),
            _ => *v,
        };
    }
    let parts: Vec<String> = values.iter().map(|(k, v)| format!(\"{k}={v}\")).collect();
    format!(\"triton_mm_{}\", parts.join(\"_\"))
}

/// The `KEY=VALUE` parts of a `triton_mm_` config's name, in order; `None` for another name,
/// or unless every value is 1 to 18 ASCII digits and no key repeats.
fn config_values(name: &str) -> Option<Vec<(&str, i64)>> {
    let values: Vec<(&str, i64)> = name
        .strip_prefix(\"triton_mm_\")?
        .split('_')
        .map(|part| {
            let (key, value) = part.split_once('=')?;
            let digits = (1..=18).contains(&value.len()) && value.bytes().all(|b| b.is_ascii_digit());
            Some((key, value.parse().ok().filter(|_| digits)?))
        })
        .collect::<Option<_>>()?;
    let repeats = (1..values.len()).any(|i| values[..i].iter().any(|(k, _)| *k == values[i].0));
    (!repeats).then_some(values)
}

/// Shared memory, in bytes, that the offered (sized) `triton_mm_` config `name` asks for in
/// GEMM `g`'s operand dtypes: its pipeline holds `numstages` tiles of each operand,
/// `numstages * (BLOCK-M * BLOCK-K * a + BLOCK-K * BLOCK-N * b)` with `a` and `b` their
/// element bytes. `None` for another name or an unknown dtype. Where it exceeds
/// [`SHARED_MEMORY`] the config mostly fails to run. The same rule as `pipeline_bytes` in
/// `naming.py` and in `ah_train::prune::sizing`.
pub fn pipeline_bytes(name: &str, g: &Gemm) -> Option<i64> {
    let bytes = |d: &str| DTYPE_BYTES.iter().find(|(x, _)| *x == d).map(|&(_, b)| b);
    let (a, b) = (bytes(g.mat1_dtype)?, bytes(g.mat2_dtype)?);
    let values = config_values(name)?;
    let get = |key: &str| values.iter().find(|(k, _)| *k == key).map(|&(_, v)| v);
    let (bm, bn, bk) = (get(\"BLOCK-M\")?, get(\"BLOCK-N\")?, get(\"BLOCK-K\")?);
    let tiles = bm.checked_mul(bk)?.checked_mul(a)?.checked_add(bk.checked_mul(bn)?.checked_mul(b)?)?;
    get(\"numstages\")?.checked_mul(tiles)
}

/// Whether the template choices of a [`Policy::Keep`] that Inductor offers GEMM `g` (`offered`,
/// names as `naming.py` spells them) are one or more `triton_mm_` configs that each need more
/// than [`SHARED_MEMORY`]: they would fail to run and leave cuBLAS alone, so the handler leaves
/// the GEMM to Inductor's full list instead (never when [`SHARED_MEMORY`] is 0, not known).
pub fn none_fit(offered: &[&str], g: &Gemm) -> bool {
    let limit = i64::try_from(SHARED_MEMORY).unwrap_or(i64::MAX);
    SHARED_MEMORY > 0
        && !offered.is_empty()
        && offered
            .iter()
            .all(|name| pipeline_bytes(name, g).is_some_and(|need| need > limit))
}
";

/// The helper a tree that tests a feature's alignment calls (emitted only then: an unused
/// private function is a warning in the user's build).
const ALIGN: &str = "
/// The largest power of two, at most 128, that divides `x` (0 for `x <= 0`).
fn align(x: i64) -> i64 {
    if x > 0 {
        (x & -x).min(128)
    } else {
        0
    }
}
";

/// The helper a tree that tests the leading dimensions' alignment calls (`prune_tree::lead_align`),
/// over the module's `DTYPE_BYTES` (a dtype not there counts 1).
const LEAD_ALIGN: &str = "
/// The smallest alignment in bytes, at most 128, of the leading dimensions of `g`'s operands
/// (the larger of each one's strides) and output (`n`): cuBLAS runs its fast kernels only when
/// all three are 16-byte aligned.
fn lead_align(g: &Gemm) -> i64 {
    let bytes = DTYPE_BYTES
        .iter()
        .find(|(d, _)| *d == g.mat1_dtype)
        .map_or(1, |&(_, b)| b);
    [
        g.mat1_stride_0.max(g.mat1_stride_1),
        g.mat2_stride_0.max(g.mat2_stride_1),
        g.n,
    ]
    .into_iter()
    .map(|ld| align(ld).saturating_mul(bytes).min(128))
    .min()
    .unwrap_or(0)
}
";

fn integer(name: &str) -> Result<String, String> {
    INTEGER
        .contains(&name)
        .then(|| format!("g.{name}"))
        .ok_or_else(|| format!("{name:?} is not one of the handler's integer features"))
}

fn quantity(q: Quantity) -> Result<String, String> {
    Ok(match q {
        Quantity::Feature(n) => format!("{} as f64", integer(n)?),
        Quantity::Product(a, b) => format!("({} as f64) * ({} as f64)", integer(a)?, integer(b)?),
        Quantity::Align(n) => format!("align({}) as f64", integer(n)?),
        Quantity::LeadAlign => "lead_align(g) as f64".into(),
        Quantity::KRatio => format!(
            "{} as f64 / {}.max({}).max(1) as f64",
            integer("k")?,
            integer("m")?,
            integer("n")?
        ),
        Quantity::MinSide => format!(
            "{}.min({}).min({}) as f64",
            integer("m")?,
            integer("k")?,
            integer("n")?
        ),
        Quantity::Work => format!(
            "({} as f64) * ({} as f64) * ({} as f64) * ({} as f64)",
            integer("batch")?,
            integer("m")?,
            integer("k")?,
            integer("n")?
        ),
    })
}

fn test(t: Test) -> Result<String, String> {
    match t {
        Test::Le(q, thr) => Ok(format!("{} <= {thr:?}", quantity(q)?)),
        Test::Eq(feat, value) => {
            if !CATEGORICAL.contains(&feat) {
                return Err(format!(
                    "{feat:?} is not one of the handler's categorical features"
                ));
            }
            let value: Value = serde_json::from_value(value.clone())
                .map_err(|e| format!("a categorical value that is not a logged value: {e}"))?;
            Ok(format!("g.{feat} == {:?}", value.to_string()))
        }
    }
}

/// The shared lists as constants (`const KEPT_1: &[&str] = &[...];`), each documented.
fn shared_source(shared: &SharedLists) -> String {
    shared
        .iter()
        .map(|(kind, name, names, leaves)| {
            format!(
                "\n/// Template choices {} at {leaves} leaves of the learned tree.\nconst {name}: &[&str] = &[{}];\n",
                kind.doing(),
                str_lits(names)
            )
        })
        .collect()
}

fn str_lits(names: &[&str]) -> String {
    let names: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
    names.join(", ")
}

fn policy(p: &Policy, shared: &SharedLists) -> String {
    match p {
        Policy::Extern => "Policy::Extern".into(),
        Policy::Default => "Policy::Default".into(),
        Policy::Keep(names) | Policy::Drop(names) => {
            let kind = if matches!(p, Policy::Keep(_)) {
                "Keep"
            } else {
                "Drop"
            };
            match shared.name(p) {
                Some(name) => format!("Policy::{kind}({name})"),
                None => format!("Policy::{kind}(&[{}])", str_lits(names)),
            }
        }
    }
}

fn node(n: &Node, depth: usize, shared: &SharedLists, out: &mut String) -> Result<(), String> {
    let pad = "    ".repeat(depth);
    match n {
        Node::Leaf(p, _) => out.push_str(&format!("{pad}{}\n", policy(p, shared))),
        Node::Split(t, yes, no) => {
            let (cond, no) = condition(*t, yes, no)?;
            out.push_str(&format!("{pad}if {cond} {{\n"));
            node(yes, depth + 1, shared, out)?;
            otherwise(no, depth, shared, out)?;
        }
    }
    Ok(())
}

/// The condition of a split whose yes-branch is `yes`, with the tests of the splits down its
/// no-branch that lead to the same subtree (`if a { X } else if b { X }` is `if a || b { X }`,
/// which clippy asks for), and the no-branch left after them.
fn condition<'n, 'a>(
    t: Test<'a>,
    yes: &Node<'a>,
    mut no: &'n Node<'a>,
) -> Result<(String, &'n Node<'a>), String> {
    let mut tests = vec![test(t)?];
    while let Node::Split(t, same, rest) = no {
        if **same != *yes {
            break;
        }
        tests.push(test(*t)?);
        no = rest;
    }
    Ok((tests.join(" || "), no))
}

/// The `else` of a split at `depth`: an `else if` chain while the no-branch splits.
fn otherwise(n: &Node, depth: usize, shared: &SharedLists, out: &mut String) -> Result<(), String> {
    let pad = "    ".repeat(depth);
    if let Node::Split(t, yes, no) = n {
        let (cond, no) = condition(*t, yes, no)?;
        out.push_str(&format!("{pad}}} else if {cond} {{\n"));
        node(yes, depth + 1, shared, out)?;
        return otherwise(no, depth, shared, out);
    }
    out.push_str(&format!("{pad}}} else {{\n"));
    node(n, depth + 1, shared, out)?;
    out.push_str(&format!("{pad}}}\n"));
    Ok(())
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
    fn hostile_strings_become_rust_string_literals() {
        let evil = "x\"); std::process::exit(1); (\"\n\\";
        let tree = json!({"node": "split",
            "test": {"kind": "eq", "feature": "op", "value": evil},
            "yes": {"node": "leaf", "policy": {"kind": "keep", "choices": [evil]}, "samples": 1},
            "no": {"node": "leaf", "policy": {"kind": "extern"}, "samples": 1}});
        let code = render_module(&model(tree), "//! h").unwrap();
        let lit = format!("{evil:?}");
        assert!(code.contains(&format!("if g.op == {lit} {{")));
        assert!(code.contains(&format!("Policy::Keep(&[{lit}])")));
        assert!(!code.contains("exit(1); (\"\n"));
    }

    #[test]
    fn a_list_dropped_at_several_leaves_is_named_apart_from_kept_ones() {
        let evil = "x\"); std::process::exit(1); (\"";
        let tree = crate::inductor::tests::dropped_tree(evil);
        let code = render_module(&model(tree), "//! h").unwrap();
        let lit = format!("{evil:?}");
        let constant = format!("/// Template choices dropped from the full list at 2 leaves of the learned tree.\nconst DROPPED_1: &[&str] = &[{lit}];");
        assert!(code.contains(&constant), "{code}");
        assert_eq!(code.matches("Policy::Drop(DROPPED_1)").count(), 2, "{code}");
        assert!(code.contains(&format!("Policy::Keep(&[{lit}])")), "{code}");
    }

    #[test]
    fn a_list_kept_at_several_leaves_is_named_once() {
        let evil = "x\"); std::process::exit(1); (\"";
        let tree = crate::inductor::tests::shared_tree(evil, "once");
        let code = render_module(&model(tree), "//! h").unwrap();
        let lit = format!("{evil:?}");
        assert!(code.contains("/// Template choices kept at 2 leaves of the learned tree.\nconst KEPT_1: &[&str] = &["), "{code}");
        assert_eq!(code.matches("Policy::Keep(KEPT_1)").count(), 2, "{code}");
        assert!(code.contains("Policy::Keep(&[\"once\", \"b\"])"), "{code}");
        assert_eq!(code.matches(&lit).count(), 1);
    }

    #[test]
    fn splits_down_a_no_branch_to_the_same_subtree_share_one_condition() {
        // Leaves that decide alike are the same subtree whatever their counts of training GEMMs.
        let leaf = |kind: &str, samples: u64| json!({"node": "leaf", "policy": {"kind": kind}, "samples": samples});
        let le = |name: &str, t: f64| json!({"kind": "le", "quantity": {"kind": "feature", "name": name}, "threshold": t});
        let inner = json!({"node": "split", "test": le("n", 8.0), "yes": leaf("extern", 7), "no": leaf("default", 1)});
        let tree = json!({"node": "split", "test": le("m", 16.0), "yes": leaf("extern", 5),
            "no": {"node": "split", "test": le("k", 32.0), "yes": leaf("extern", 523), "no": inner}});
        let code = render_module(&model(tree), "").unwrap();
        assert!(code.contains("if g.m as f64 <= 16.0 || g.k as f64 <= 32.0 || g.n as f64 <= 8.0 {\n        Policy::Extern\n    } else {\n        Policy::Default\n    }"), "{code}");
    }

    #[test]
    fn features_the_handler_does_not_compute_are_refused() {
        let leaf = json!({"node": "leaf", "policy": {"kind": "default"}, "samples": 1});
        let le = json!({"node": "split", "test": {"kind": "le", "quantity": {"kind": "feature", "name": "m; panic!()"}, "threshold": 1.0}, "yes": leaf, "no": leaf});
        assert!(render_module(&model(le), "").is_err());
        let eq = json!({"node": "split", "test": {"kind": "eq", "feature": "m", "value": 1}, "yes": leaf, "no": leaf});
        assert!(render_module(&model(eq), "").is_err());
    }

    /// The module of a tree with one split, `quantity <= 64.5`, between two leaves.
    fn one_split_on(quantity: &str) -> String {
        let leaf = json!({"node": "leaf", "policy": {"kind": "extern"}, "samples": 1});
        let tree = json!({"node": "split",
            "test": {"kind": "le", "quantity": {"kind": quantity}, "threshold": 64.5},
            "yes": leaf, "no": {"node": "leaf", "policy": {"kind": "default"}, "samples": 1}});
        render_module(&model(tree), "").unwrap()
    }

    #[test]
    fn the_narrowest_side_is_the_integer_minimum() {
        let code = one_split_on("min_side");
        assert!(
            code.contains("if g.m.min(g.k).min(g.n) as f64 <= 64.5 {"),
            "{code}"
        );
    }

    #[test]
    fn the_contraction_ratio_divides_k_by_the_larger_side() {
        let code = one_split_on("k_ratio");
        assert!(
            code.contains("if g.k as f64 / g.m.max(g.n).max(1) as f64 <= 64.5 {"),
            "{code}"
        );
        assert!(!code.contains("fn align("));
    }

    #[test]
    fn the_work_multiplies_batch_and_the_three_sides_as_floats() {
        let leaf = json!({"node": "leaf", "policy": {"kind": "extern"}, "samples": 1});
        let tree = json!({"node": "split",
            "test": {"kind": "le", "quantity": {"kind": "work"}, "threshold": 1e9},
            "yes": leaf, "no": {"node": "leaf", "policy": {"kind": "default"}, "samples": 1}});
        let code = render_module(&model(tree), "").unwrap();
        assert!(
            code.contains(
                "if (g.batch as f64) * (g.m as f64) * (g.k as f64) * (g.n as f64) <= 1000000000.0 {"
            ),
            "{code}"
        );
    }

    #[test]
    fn an_alignment_helper_is_emitted_only_for_a_tree_that_tests_it() {
        let leaf = json!({"node": "leaf", "policy": {"kind": "extern"}, "samples": 1});
        let split = |quantity: Json| {
            json!({"node": "split",
            "test": {"kind": "le", "quantity": quantity, "threshold": 12.0},
            "yes": leaf, "no": {"node": "leaf", "policy": {"kind": "default"}, "samples": 1}})
        };
        let plain =
            render_module(&model(split(json!({"kind": "feature", "name": "m"}))), "").unwrap();
        assert!(!plain.contains("fn align(") && !plain.contains("fn lead_align("));
        let one = render_module(&model(split(json!({"kind": "align", "name": "k"}))), "").unwrap();
        assert!(one.contains("fn align(") && !one.contains("fn lead_align("));
        let lead = render_module(&model(split(json!({"kind": "lead_align"}))), "").unwrap();
        assert!(lead.contains("fn align(") && lead.contains("fn lead_align(g: &Gemm) -> i64"));
        assert!(lead.contains("if lead_align(g) as f64 <= 12.0 {"), "{lead}");
        assert!(lead.contains(r#"("torch.bfloat16", 2)"#));
    }
}
