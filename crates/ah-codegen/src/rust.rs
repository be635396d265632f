//! The Rust module of one heuristic in the generated heuristics crate, and the crate's
//! `lib.rs`.
//!
//! Decision semantics are `ah_core::model::ModelEvaluator`'s, step for step: every
//! operation is computed in order (a failure is unsure, naming the missing input or the
//! operation), then the range guard, then every column in order (a missing or non-numeric
//! value is unsure), then the tree. Only the values the tree reads are kept.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use ah_core::model::{leaf_best_choices, Column, ModelKind, Node};
use ah_core::value::python_float_repr;

use crate::error::CodegenError;
use crate::escape::comment;
use crate::plan::{feature_of, Plan, Source};
use crate::rust_expr::{
    f64_lit, str_lit, typed_str_eq, value_str_eq, Code, Renderer, Ty, HELPERS, P_ATOM,
};

/// Trees deeper than this are emitted as a table and a loop rather than nested `if`s (in
/// Rust and Python alike), so the generated code is valid, and its generation iterative, at
/// any depth.
pub const MAX_NESTED_DEPTH: usize = 50;

/// Renders the module (unformatted; the caller runs rustfmt).
pub fn render_module(plan: &Plan<'_>, header: &[String]) -> Result<String, CodegenError> {
    let model = plan.model;
    let g = Gen::new(plan);
    let mut uses = vec![
        "ah_core::heuristic::{LearnedHeuristic, Prediction, UnsureKind}".to_string(),
        "ah_core::model::ModelKind".to_string(),
        "ah_core::{Context, DeviceIdentity, Value}".to_string(),
    ];
    if !plan.ops.is_empty() {
        uses.push("ah_core::ops::{EvalError, Operation}".into());
        uses.push("std::sync::OnceLock".into());
    }
    let (body, helpers) = g.body()?;
    let mut body = body;
    for (name, src) in HELPERS {
        if helpers.contains(name) {
            body.push('\n');
            body.push_str(src);
        }
    }
    let predict_body = match model.kind {
        ModelKind::Decision => "match columns(context, None) { Ok(c) => walk(&c), Err(k) => Prediction::Unsure(k) }".to_string(),
        ModelKind::Regression => "let Some(choice) = choice else { return Prediction::Unsure(UnsureKind::MissingFeature(\"choice\")); };\nmatch columns(context, Some(choice)) { Ok(c) => walk(&c), Err(k) => Prediction::Unsure(k) }".to_string(),
    };
    let mut ctx = tera::Context::new();
    ctx.insert("header", header);
    ctx.insert("uses", &uses);
    ctx.insert("heuristic_name", &model.heuristic_name);
    ctx.insert("heuristic_name_lit", &str_lit(&model.heuristic_name));
    ctx.insert("name", &comment(&model.name));
    ctx.insert("name_lit", &str_lit(&model.name));
    let (kind, kind_doc) = match model.kind {
        ModelKind::Decision => (
            "Decision",
            format!("decision over {} choices", model.choices.len()),
        ),
        ModelKind::Regression => (
            "Regression",
            format!("regression over {} choices", model.choices.len()),
        ),
    };
    ctx.insert("kind", kind);
    ctx.insert("kind_doc", &kind_doc);
    ctx.insert(
        "choices",
        &model.choices.iter().map(|c| str_lit(c)).collect::<Vec<_>>(),
    );
    ctx.insert("shared_memory", &model.precondition.shared_memory);
    ctx.insert("capa0", &model.precondition.device_capa.0);
    ctx.insert("capa1", &model.precondition.device_capa.1);
    ctx.insert("threshold", &f64_lit(model.threshold));
    ctx.insert("predict_body", &predict_body);
    ctx.insert(
        "choice_param",
        if model.kind == ModelKind::Decision {
            "_choice"
        } else {
            "choice"
        },
    );
    ctx.insert("body", &body);
    crate::templates::render("rust_module.rs", &ctx)
}

/// Renders `lib.rs` for the given module names (sorted, deduplicated).
pub fn render_lib(modules: &BTreeSet<String>, command: &str) -> Result<String, CodegenError> {
    let mut ctx = tera::Context::new();
    ctx.insert("modules", &modules.iter().collect::<Vec<_>>());
    ctx.insert("command", command);
    ctx.insert("version", ah_core::TOOL_VERSION);
    crate::templates::render("rust_lib.rs", &ctx)
}

struct Gen<'p, 'm> {
    plan: &'p Plan<'m>,
    /// Context features gathered from the context (`x{i}`).
    gathered: Vec<String>,
    /// Columns the tree splits on.
    used: BTreeSet<usize>,
}

impl<'p, 'm> Gen<'p, 'm> {
    fn new(plan: &'p Plan<'m>) -> Self {
        let gathered = plan.all_context_features();
        Gen {
            plan,
            gathered,
            used: plan.used_columns(),
        }
    }

    fn x(&self, name: &str) -> String {
        let i = self
            .gathered
            .iter()
            .position(|n| n == name)
            .expect("gathered feature");
        format!("x{i}")
    }

    /// Names read by the range guard and the columns, in that order (generic path inputs).
    fn finish_names(&self) -> Vec<String> {
        let model = self.plan.model;
        let mut out: Vec<String> = Vec::new();
        let mut add = |n: &str| {
            if !out.iter().any(|o| o == n) {
                out.push(n.to_string());
            }
        };
        if model.range_guard {
            for r in &model.feature_ranges {
                add(&r.name);
            }
        }
        for col in &model.columns {
            let f = feature_of(col);
            if self.plan.source(f) != Source::Choice {
                add(f);
            }
        }
        out
    }

    /// A used one-hot column over a context feature: the tree compares lazily, on its path.
    fn lazy(&self, c: usize) -> bool {
        let col = &self.plan.model.columns[c];
        self.used.contains(&c)
            && matches!(col, Column::OneHot { .. })
            && self.plan.source(feature_of(col)) == Source::Context
    }

    /// Context features of the lazy columns, in column order.
    fn lazy_names(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for c in 0..self.plan.model.columns.len() {
            if self.lazy(c) {
                let f = feature_of(&self.plan.model.columns[c]);
                if !out.iter().any(|o| o == f) {
                    out.push(f.to_string());
                }
            }
        }
        out
    }

    /// Reads the context features into `x{i}`: by position when the context has exactly the
    /// logged layout (what PyTorch builds), else by one scan (a later feature of a name wins).
    fn gather(&self) -> String {
        let model = self.plan.model;
        let mut s = String::new();
        if self.gathered.is_empty() {
            return s;
        }
        for (i, n) in self.gathered.iter().enumerate() {
            let _ = writeln!(s, "let mut x{i}: Option<&Value> = None; // {}", comment(n));
        }
        s.push_str("let features = ctx.features();\n");
        let layout: Vec<&String> = model
            .numerical_features
            .iter()
            .chain(&model.categorical_features)
            .collect();
        let distinct = layout
            .iter()
            .enumerate()
            .all(|(i, n)| !layout[..i].contains(n));
        if distinct && !layout.is_empty() {
            let checks: Vec<String> = layout
                .iter()
                .enumerate()
                .map(|(p, n)| format!("features[{p}].name == {}", str_lit(n)))
                .collect();
            let _ = writeln!(
                s,
                "if features.len() == {} && {} {{",
                layout.len(),
                checks.join(" && ")
            );
            for (i, n) in self.gathered.iter().enumerate() {
                if let Some(p) = layout.iter().position(|l| *l == n) {
                    let _ = writeln!(s, "x{i} = Some(&features[{p}].value);");
                }
            }
            s.push_str("} else {\n");
        }
        s.push_str("for f in features {\nmatch f.name.as_ref() {\n");
        for (i, n) in self.gathered.iter().enumerate() {
            let _ = writeln!(s, "{} => x{i} = Some(&f.value),", str_lit(n));
        }
        s.push_str("_ => {}\n}\n}\n");
        if distinct && !layout.is_empty() {
            s.push_str("}\n");
        }
        s
    }

    fn body(&self) -> Result<(String, BTreeSet<&'static str>), CodegenError> {
        let model = self.plan.model;
        let mut out = String::new();
        let mut helpers = BTreeSet::new();
        helpers.insert("num");
        // Leaves.
        if model.kind == ModelKind::Decision {
            for (i, node) in model.tree.nodes.iter().enumerate() {
                if let Node::Leaf {
                    value,
                    unsafe_leaf: false,
                    ..
                } = node
                {
                    let best = leaf_best_choices(value);
                    let items: Vec<String> = best
                        .iter()
                        .map(|(p, c)| format!("({}, {c})", f64_lit(*p)))
                        .collect();
                    let _ = writeln!(
                        out,
                        "static LEAF_{i}: [(f64, u16); {}] = [{}];",
                        items.len(),
                        items.join(", ")
                    );
                }
            }
            out.push('\n');
        }
        // Columns struct.
        out.push_str("/// The tree's inputs: numeric columns as `f64`, one-hot columns as \"equals the category\".\n");
        out.push_str("struct Columns<'a> {\n");
        for &c in &self.used {
            let col = &model.columns[c];
            let ty = match col {
                Column::Numeric { .. } => "f64",
                Column::OneHot { .. } if self.lazy(c) => "&'a Value",
                Column::OneHot { .. } => "bool",
            };
            let _ = writeln!(out, "    /// `{}`\n    c{c}: {ty},", doc_name(col));
        }
        out.push_str("/// Keeps the lifetime when no column borrows the context.\n_ctx: core::marker::PhantomData<&'a Value>,\n");
        out.push_str("}\n\n");
        for &c in &self.used {
            if let Column::OneHot { value, .. } = &model.columns[c] {
                if self.lazy(c) {
                    let _ = writeln!(
                        out,
                        "/// `{}`, without formatting.\n#[inline]\nfn is_c{c}(v: &Value) -> bool {{\n{}\n}}\n",
                        doc_name(&model.columns[c]),
                        value_str_eq("v", value)
                    );
                }
            }
        }
        // columns().
        out.push_str(&self.columns_fn(&mut helpers)?);
        if !self.plan.ops.is_empty() {
            out.push_str(&self.slow_fn());
        }
        out.push_str(&self.finish_fn());
        out.push_str(&self.walk_fn());
        Ok((out, helpers))
    }

    fn columns_fn(&self, helpers: &mut BTreeSet<&'static str>) -> Result<String, CodegenError> {
        let plan = self.plan;
        let mut s = String::new();
        s.push_str("/// Computes the operations, checks the range guard and reads the columns.\n");
        let ctx_param = if self.gathered.is_empty() && plan.ops.is_empty() {
            "_ctx"
        } else {
            "ctx"
        };
        let _ = writeln!(
            s,
            "fn columns({ctx_param}: &Context, choice: Option<usize>) -> Result<Columns<'_>, UnsureKind> {{"
        );
        s.push_str(&self.gather());
        if plan.ops.is_empty() {
            let v: Vec<String> = self.finish_names().iter().map(|n| self.x(n)).collect();
            let w: Vec<String> = self.lazy_names().iter().map(|n| self.x(n)).collect();
            let _ = writeln!(
                s,
                "finish([{}], [{}], choice)\n}}\n",
                v.join(", "),
                w.join(", ")
            );
            return Ok(s);
        }
        match self.fast_path(helpers)? {
            Some(fast) => {
                s.push_str(&fast);
                s.push_str("slow(ctx, choice)\n}\n\n");
            }
            None => {
                // No typed fast path: every context goes through `ah_core::ops`.
                let mut s = String::new();
                s.push_str("/// Computes the operations (generic path only: they cannot be typed statically).\n");
                s.push_str("fn columns(ctx: &Context, choice: Option<usize>) -> Result<Columns<'_>, UnsureKind> {\n");
                s.push_str("slow(ctx, choice)\n}\n\n");
                return Ok(s);
            }
        }
        Ok(s)
    }

    /// The typed fast path: `if let (Some(Value::Int(..)), ..) = (..) { ...; return ... }`, or
    /// `None` when an operation cannot be typed.
    fn fast_path(
        &self,
        helpers: &mut BTreeSet<&'static str>,
    ) -> Result<Option<String>, CodegenError> {
        let plan = self.plan;
        let model = plan.model;
        // Typed context inputs of the operations.
        let mut inputs: Vec<(String, Ty)> = Vec::new();
        for (i, op) in plan.ops.iter().enumerate() {
            for input in op.inputs() {
                if plan.source_before(input, i) == Source::Context
                    && !inputs.iter().any(|(n, _)| n == input)
                {
                    let ty = if model.categorical_features.iter().any(|c| c == input) {
                        Ty::S
                    } else {
                        Ty::I
                    };
                    inputs.push((input.to_string(), ty));
                }
            }
        }
        let mut op_code: Vec<Code> = Vec::new();
        let mut local_helpers = BTreeSet::new();
        for (i, op) in plan.ops.iter().enumerate() {
            let lookup = |n: &str| -> Option<(String, Ty)> {
                match plan.source_before(n, i) {
                    Source::Op(j) => Some((format!("o{j}"), op_code[j].ty)),
                    _ => {
                        let k = inputs.iter().position(|(m, _)| m == n)?;
                        Some((format!("v{k}"), inputs[k].1))
                    }
                }
            };
            let mut r = Renderer {
                lookup: &lookup,
                fail: format!("UnsureKind::MissingFeature({})", str_lit(&op.name)),
                helpers: BTreeSet::new(),
            };
            match r.render(&op.expr) {
                Ok(c) => {
                    local_helpers.extend(r.helpers);
                    op_code.push(c);
                }
                Err(_) => return Ok(None),
            }
        }
        helpers.extend(local_helpers);
        let mut s = String::new();
        s.push_str("// Fast path: the kinds PyTorch logs, typed operations.\n");
        let pats: Vec<String> = inputs
            .iter()
            .enumerate()
            .map(|(k, (_, ty))| match ty {
                Ty::S => format!("Some(Value::Str(v{k}))"),
                _ => format!("Some(Value::Int(v{k}))"),
            })
            .collect();
        let scrut: Vec<String> = inputs.iter().map(|(n, _)| self.x(n)).collect();
        if inputs.len() == 1 {
            let _ = writeln!(s, "if let {} = {} {{", pats[0], scrut[0]);
        } else if inputs.is_empty() {
            s.push_str("{\n");
        } else {
            let _ = writeln!(
                s,
                "if let ({}) = ({}) {{",
                pats.join(", "),
                scrut.join(", ")
            );
        }
        for (k, (_, ty)) in inputs.iter().enumerate() {
            match ty {
                Ty::S => {
                    let _ = writeln!(s, "let v{k} = v{k}.as_str();");
                }
                _ => {
                    let _ = writeln!(s, "let v{k} = *v{k};");
                }
            }
        }
        // Which operation values are read later (by an operation, the guard or a used column)?
        let mut read = vec![false; plan.ops.len()];
        for (i, op) in plan.ops.iter().enumerate() {
            for input in op.inputs() {
                if let Source::Op(j) = plan.source_before(input, i) {
                    read[j] = true;
                }
            }
        }
        if model.range_guard {
            for r in &model.feature_ranges {
                if let Source::Op(j) = plan.guard_source(&r.name) {
                    read[j] = true;
                }
            }
        }
        for &c in &self.used {
            if let Source::Op(j) = plan.source(feature_of(&model.columns[c])) {
                read[j] = true;
            }
        }
        for (i, (op, code)) in plan.ops.iter().zip(&op_code).enumerate() {
            let var = if read[i] {
                format!("o{i}")
            } else {
                format!("_o{i}")
            };
            let _ = writeln!(s, "// `{}` = {}", comment(&op.name), comment(&op.source));
            let _ = writeln!(s, "let {var}: {} = {};", code.ty.rust(), code.code);
        }
        // Range guard.
        let typed = |source: Source| -> Option<Code> {
            match source {
                Source::Op(j) => Some(Code {
                    code: format!("o{j}"),
                    ty: op_code[j].ty,
                    prec: P_ATOM,
                }),
                _ => None,
            }
        };
        if model.range_guard {
            for r in &model.feature_ranges {
                let src = plan.guard_source(&r.name);
                let name = str_lit(&r.name);
                let v = match typed(src) {
                    Some(c) => match c.ty {
                        Ty::I => format!("{} as f64", c.code),
                        Ty::F => c.code,
                        Ty::B => format!("f64::from(u8::from({}))", c.code),
                        Ty::S => {
                            let _ =
                                writeln!(s, "return Err(UnsureKind::MissingFeature({name}));\n}}");
                            return Ok(Some(s));
                        }
                    },
                    None => format!("num({}, {name})?", self.x(&r.name)),
                };
                let v = if v.contains(" as ") {
                    format!("({v})")
                } else {
                    v
                };
                let _ = writeln!(
                    s,
                    "if !({}..={}).contains(&{v}) {{ return Err(UnsureKind::OutOfRange({name})); }}",
                    f64_lit(r.min),
                    f64_lit(r.max)
                );
            }
        }
        // Columns, in order.
        let mut fields = Vec::new();
        for (c, col) in model.columns.iter().enumerate() {
            let f = feature_of(col);
            let src = plan.source(f);
            let used = self.used.contains(&c);
            let value = match (col, src) {
                (Column::Numeric { .. }, Source::Choice) => {
                    let _ = writeln!(
                        s,
                        "return Err(UnsureKind::MissingFeature({}));\n}}",
                        str_lit(f)
                    );
                    return Ok(Some(s));
                }
                (Column::OneHot { value, .. }, Source::Choice) => self.choice_eq(value),
                (Column::Numeric { .. }, Source::Op(j)) => match op_code[j].ty {
                    Ty::I => format!("o{j} as f64"),
                    Ty::F => format!("o{j}"),
                    Ty::B => format!("f64::from(u8::from(o{j}))"),
                    Ty::S => {
                        let _ = writeln!(
                            s,
                            "return Err(UnsureKind::MissingFeature({}));\n}}",
                            str_lit(f)
                        );
                        return Ok(Some(s));
                    }
                },
                (Column::OneHot { value, .. }, Source::Op(j)) => {
                    typed_str_eq(&format!("o{j}"), op_code[j].ty, value)
                }
                (Column::Numeric { .. }, Source::Context) => {
                    format!("num({}, {})?", self.x(f), str_lit(f))
                }
                (Column::OneHot { .. }, Source::Context) => {
                    format!("match {} {{ Some(v) => v, None => return Err(UnsureKind::MissingFeature({})) }}", self.x(f), str_lit(f))
                }
            };
            if used {
                let _ = writeln!(s, "let c{c} = {value};");
                fields.push(format!("c{c}"));
            } else if matches!((col, src), (_, Source::Context)) {
                match col {
                    Column::Numeric { .. } => {
                        let _ = writeln!(s, "num({}, {})?;", self.x(f), str_lit(f));
                    }
                    Column::OneHot { .. } => {
                        let _ = writeln!(
                            s,
                            "if {}.is_none() {{ return Err(UnsureKind::MissingFeature({})); }}",
                            self.x(f),
                            str_lit(f)
                        );
                    }
                }
            }
        }
        fields.push("_ctx: core::marker::PhantomData".into());
        let _ = writeln!(s, "return Ok(Columns {{ {} }});\n}}", fields.join(", "));
        Ok(Some(s))
    }

    fn choice_eq(&self, value: &str) -> String {
        match self.plan.model.choices.iter().position(|c| c == value) {
            Some(j) => format!("choice == Some({j})"),
            None => "false".into(),
        }
    }

    /// The generic path: the operations evaluated by `ah_core::ops` on a copy of the context.
    fn slow_fn(&self) -> String {
        let plan = self.plan;
        let mut s = String::new();
        let n = plan.ops.len();
        let _ = writeln!(
            s,
            "/// The model's operations: (name, expression, categorical)."
        );
        let _ = writeln!(s, "const OPERATIONS: [(&str, &str, bool); {n}] = [");
        for op in &plan.ops {
            let _ = writeln!(
                s,
                "    ({}, {}, {}),",
                str_lit(&op.name),
                str_lit(&op.source),
                op.is_categorical
            );
        }
        s.push_str("];\n\n");
        let mut names: Vec<&str> = Vec::new();
        for op in &plan.ops {
            for i in op.inputs() {
                if !names.contains(&i) {
                    names.push(i);
                }
            }
        }
        let _ = writeln!(
            s,
            "/// Every name the operations read (for allocation-free unsure reasons)."
        );
        let _ = writeln!(
            s,
            "const OPERATION_INPUTS: [&str; {}] = [{}];\n",
            names.len(),
            names
                .iter()
                .map(|n| str_lit(n))
                .collect::<Vec<_>>()
                .join(", ")
        );
        s.push_str(
            "/// The operations, parsed once.
fn operations() -> &'static [Operation] {
    static OPS: OnceLock<Vec<Operation>> = OnceLock::new();
    OPS.get_or_init(|| {
        OPERATIONS
            .iter()
            .map(|(name, expr, categorical)| {
                Operation::parse(name, expr, *categorical).expect(\"generated operations parse\")
            })
            .collect()
    })
}

/// The generic path (any value kinds): `ah_core::ops` evaluates the operations on a copy of
/// the context, exactly as `ah_core::model::ModelEvaluator` does.
#[cold]
fn slow(ctx: &Context, choice: Option<usize>) -> Result<Columns<'_>, UnsureKind> {
    let mut s = ctx.clone();
    for (op, (name, _, _)) in operations().iter().zip(OPERATIONS) {
        let v = op.expr.eval(&|n| s.get(n).cloned()).map_err(|e| match e {
            EvalError::UnknownFeature(f) => UnsureKind::MissingFeature(
                OPERATION_INPUTS.iter().copied().find(|n| *n == f).unwrap_or(name),
            ),
            _ => UnsureKind::MissingFeature(name),
        })?;
        s.set(op.name.clone(), v, op.is_categorical);
    }
",
        );
        let args: Vec<String> = self
            .finish_names()
            .iter()
            .map(|n| format!("s.get({})", str_lit(n)))
            .collect();
        let w: Vec<String> = self
            .lazy_names()
            .iter()
            .map(|n| format!("ctx.get({})", str_lit(n)))
            .collect();
        let _ = writeln!(
            s,
            "finish([{}], [{}], choice)\n}}\n",
            args.join(", "),
            w.join(", ")
        );
        s
    }

    /// Range guard and columns over values of any kind.
    fn finish_fn(&self) -> String {
        let plan = self.plan;
        let model = plan.model;
        let names = self.finish_names();
        let idx = |n: &str| names.iter().position(|m| m == n).expect("finish name");
        let mut s = String::new();
        let _ = writeln!(s, "/// The range guard and the columns, from values of any kind (in `finish_names` order).");
        let choice_used = model
            .columns
            .iter()
            .any(|c| plan.source(feature_of(c)) == Source::Choice);
        let choice_param = if choice_used { "choice" } else { "_choice" };
        let v_param = if names.is_empty() { "_v" } else { "v" };
        let lazy = self.lazy_names();
        let w_param = if lazy.is_empty() { "_w" } else { "w" };
        let _ = writeln!(
            s,
            "fn finish<'a>({v_param}: [Option<&Value>; {}], {w_param}: [Option<&'a Value>; {}], {choice_param}: Option<usize>) -> Result<Columns<'a>, UnsureKind> {{",
            names.len(),
            lazy.len()
        );
        if model.range_guard {
            for r in &model.feature_ranges {
                let name = str_lit(&r.name);
                let _ = writeln!(
                    s,
                    "if !({}..={}).contains(&num(v[{}], {name})?) {{ return Err(UnsureKind::OutOfRange({name})); }}",
                    f64_lit(r.min),
                    f64_lit(r.max),
                    idx(&r.name)
                );
            }
        }
        let mut fields = Vec::new();
        for (c, col) in model.columns.iter().enumerate() {
            let f = feature_of(col);
            let used = self.used.contains(&c);
            let value = match (col, plan.source(f)) {
                (Column::Numeric { .. }, Source::Choice) => {
                    let _ = writeln!(s, "Err(UnsureKind::MissingFeature({}))\n}}\n", str_lit(f));
                    return s;
                }
                (Column::OneHot { value, .. }, Source::Choice) => self.choice_eq(value),
                (Column::Numeric { .. }, _) => format!("num(v[{}], {})?", idx(f), str_lit(f)),
                (Column::OneHot { .. }, _) if self.lazy(c) => format!(
                    "match w[{}] {{ Some(v) => v, None => return Err(UnsureKind::MissingFeature({})) }}",
                    lazy.iter().position(|n| n == f).expect("lazy name"),
                    str_lit(f)
                ),
                (Column::OneHot { value, .. }, _) => format!(
                    "match v[{}] {{ Some(v) => {}, None => return Err(UnsureKind::MissingFeature({})) }}",
                    idx(f),
                    value_str_eq("v", value),
                    str_lit(f)
                ),
            };
            if used {
                let _ = writeln!(s, "let c{c} = {value};");
                fields.push(format!("c{c}"));
            } else if plan.source(f) != Source::Choice {
                match col {
                    Column::Numeric { .. } => {
                        let _ = writeln!(s, "num(v[{}], {})?;", idx(f), str_lit(f));
                    }
                    Column::OneHot { .. } => {
                        let _ = writeln!(
                            s,
                            "if v[{}].is_none() {{ return Err(UnsureKind::MissingFeature({})); }}",
                            idx(f),
                            str_lit(f)
                        );
                    }
                }
            }
        }
        fields.push("_ctx: core::marker::PhantomData".into());
        let _ = writeln!(s, "Ok(Columns {{ {} }})\n}}\n", fields.join(", "));
        let needs_num = (model.range_guard && !model.feature_ranges.is_empty())
            || model.columns.iter().any(|c| {
                matches!(c, Column::Numeric { .. }) && plan.source(feature_of(c)) != Source::Choice
            });
        if !needs_num {
            return s;
        }
        s.push_str(
            "/// A numeric value (booleans count as 0/1), else unsure naming the feature.
#[inline]
fn num(v: Option<&Value>, name: &'static str) -> Result<f64, UnsureKind> {
    match v {
        Some(Value::Int(i)) => Ok(*i as f64),
        Some(Value::Float(f)) => Ok(*f),
        Some(Value::Bool(b)) => Ok(f64::from(u8::from(*b))),
        _ => Err(UnsureKind::MissingFeature(name)),
    }
}

",
        );
        s
    }

    fn walk_fn(&self) -> String {
        if self.plan.model.tree.depth() > MAX_NESTED_DEPTH {
            return self.table_walk_fn();
        }
        let mut s = String::new();
        let param = if self.used.is_empty() { "_c" } else { "c" };
        let _ = writeln!(s, "/// Walks the tree (`<=` goes left; a one-hot split goes left when the value differs).");
        let _ = writeln!(s, "fn walk({param}: &Columns<'_>) -> Prediction {{");
        self.emit_node(0, &mut s);
        s.push_str("}\n");
        s
    }

    /// The condition under which split `column` goes left (`threshold` is a literal or a
    /// variable name).
    fn goes_left(&self, column: usize, threshold: &str) -> String {
        match &self.plan.model.columns[column] {
            Column::Numeric { .. } => format!("c.c{column} <= {threshold}"),
            // One-hot values are 0/1 and the threshold lies in [0, 1): left is "not equal".
            Column::OneHot { .. } if self.lazy(column) => format!("!is_c{column}(c.c{column})"),
            Column::OneHot { .. } => format!("!c.c{column}"),
        }
    }

    /// A leaf's prediction.
    fn leaf_expr(&self, i: usize) -> String {
        let model = self.plan.model;
        match (&model.tree.nodes[i], model.kind) {
            (
                Node::Leaf {
                    unsafe_leaf: true, ..
                },
                ModelKind::Decision,
            ) => "Prediction::Unsure(UnsureKind::UnsafeLeaf)".to_string(),
            (Node::Leaf { .. }, ModelKind::Decision) => {
                format!("Prediction::Distribution(&LEAF_{i})")
            }
            (Node::Leaf { value, .. }, ModelKind::Regression) => {
                format!("Prediction::Value({})", f64_lit(value[0]))
            }
            (Node::Split { .. }, _) => unreachable!("leaf_expr of a split"),
        }
    }

    /// A tree deeper than [`MAX_NESTED_DEPTH`]: a table of nodes and a loop, deciding exactly
    /// like the nested `if`s (`split_goes_left` is the same condition), valid at any depth.
    fn table_walk_fn(&self) -> String {
        let model = self.plan.model;
        let mut s = String::new();
        s.push_str("/// A node of the tree: a split (column, threshold, left, right) or a leaf.\n");
        s.push_str("#[derive(Clone, Copy)]\nenum TreeNode {\n    Split(u16, f64, u32, u32),\n    Leaf(Prediction),\n}\n\n");
        let _ = writeln!(
            s,
            "/// The tree, root first (deeper than {MAX_NESTED_DEPTH} levels, so a table instead of nested `if`s).\nstatic TREE: [TreeNode; {}] = [",
            model.tree.nodes.len()
        );
        for (i, node) in model.tree.nodes.iter().enumerate() {
            match node {
                Node::Split {
                    column,
                    threshold,
                    left,
                    right,
                } => {
                    let _ = writeln!(
                        s,
                        "TreeNode::Split({column}, {}, {left}, {right}),",
                        f64_lit(*threshold)
                    );
                }
                Node::Leaf { .. } => {
                    let _ = writeln!(s, "TreeNode::Leaf({}),", self.leaf_expr(i));
                }
            }
        }
        s.push_str("];\n\n");
        s.push_str("/// Walks the tree (`<=` goes left; a one-hot split goes left when the value differs).\n");
        s.push_str("fn walk(c: &Columns<'_>) -> Prediction {\n    let mut n = 0usize;\n    loop {\n        match TREE[n] {\n            TreeNode::Leaf(p) => return p,\n            TreeNode::Split(column, threshold, left, right) => {\n                n = (if split_goes_left(c, column, threshold) { left } else { right }) as usize;\n            }\n        }\n    }\n}\n\n");
        let param = if self.used.is_empty() { "_c" } else { "c" };
        let thr = if self
            .used
            .iter()
            .any(|c| matches!(model.columns[*c], Column::Numeric { .. }))
        {
            "threshold"
        } else {
            "_threshold"
        };
        s.push_str("/// Whether split on `column` at `threshold` goes left.\n");
        let _ = writeln!(
            s,
            "fn split_goes_left({param}: &Columns<'_>, column: u16, {thr}: f64) -> bool {{\nmatch column {{"
        );
        for &c in &self.used {
            let _ = writeln!(s, "{c} => {},", self.goes_left(c, "threshold"));
        }
        s.push_str("_ => unreachable!(\"the tree splits only on the columns above\"),\n}\n}\n");
        s
    }

    /// Nested `if`s; only for trees of at most [`MAX_NESTED_DEPTH`] levels, so the recursion
    /// is bounded.
    fn emit_node(&self, i: usize, s: &mut String) {
        let model = self.plan.model;
        match &model.tree.nodes[i] {
            Node::Split {
                column,
                threshold,
                left,
                right,
            } => {
                let col = &model.columns[*column];
                let cond = self.goes_left(*column, &f64_lit(*threshold));
                let _ = writeln!(s, "if {cond} {{ // {}", split_doc(col, *threshold));
                self.emit_node(*left, s);
                s.push_str("} else ");
                if matches!(model.tree.nodes[*right], Node::Split { .. }) {
                    self.emit_node(*right, s);
                } else {
                    s.push_str("{\n");
                    self.emit_node(*right, s);
                    s.push_str("}\n");
                }
            }
            Node::Leaf { .. } => {
                let _ = writeln!(s, "{}", self.leaf_expr(i));
            }
        }
    }
}

/// A column as comment text.
fn doc_name(col: &Column) -> String {
    comment(&match col {
        Column::Numeric { name } => name.clone(),
        Column::OneHot { feature, value } => format!("str({feature}) == {value:?}"),
    })
}

/// A split as comment text.
fn split_doc(col: &Column, threshold: f64) -> String {
    comment(&match col {
        Column::Numeric { name } => format!("{name} <= {}", python_float_repr(threshold)),
        Column::OneHot { feature, value } => format!("str({feature}) != {value:?}"),
    })
}
