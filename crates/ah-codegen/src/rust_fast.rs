//! The typed fast path of a generated Rust module: when the context holds the kinds PyTorch
//! logs (integers for numerical features, strings for categorical ones), the operations are
//! computed as typed Rust (`crate::rust_expr`), allocation-free.

use std::cell::RefCell;
use std::collections::BTreeSet;

use serde::Serialize;

use ah_core::ops::Operation;

use crate::error::CodegenError;
use crate::escape::comment;
use crate::plan::{Plan, Source};
use crate::rust_columns::{as_f64, Finish, ValueSource};
use crate::rust_expr::{str_lit, Code, Renderer, Ty};
use crate::rust_gen::Gen;

/// An operation computed on the fast path.
#[derive(Serialize)]
pub struct OpLine {
    doc: String,
    /// Statements binding its hoisted subexpressions, before it.
    stmts: Vec<String>,
    var: String,
    ty: &'static str,
    code: String,
}

/// A typed context input: matched as `pattern`, bound as `var` when read.
#[derive(Serialize)]
pub struct Input {
    pattern: String,
    scrutinee: String,
    /// `let {binding};` after the match (`None`: not read, matched only).
    binding: Option<String>,
}

/// The fast path, ready for the template.
#[derive(Serialize)]
pub struct Fast {
    inputs: Vec<Input>,
    ops: Vec<OpLine>,
    /// Guard and columns.
    pub finish: Finish,
    /// Functions of `ah_core::ops::scalar` the operations call.
    #[serde(skip)]
    pub scalar: BTreeSet<&'static str>,
}

/// The fast path of `g`'s model, or `None` when an operation cannot be typed (every context
/// then goes through the generic path).
pub fn fast_path(g: &Gen<'_, '_>) -> Result<Option<Fast>, CodegenError> {
    let plan = g.plan;
    let inputs = typed_inputs(plan);
    let Some(rendered) = render_ops(plan, &inputs) else {
        return Ok(None);
    };
    let (finish, typed_reads) = finish(g, &inputs, &rendered);
    let (read, computed) = liveness(plan, &rendered, &typed_reads);
    let mut read_inputs = BTreeSet::new();
    let ops = op_lines(plan, &rendered, &read, &computed, &mut read_inputs);
    for code in &typed_reads {
        if let Some(k) = code.strip_prefix('v').and_then(|k| k.parse().ok()) {
            read_inputs.insert(k);
        }
    }
    Ok(Some(Fast {
        inputs: input_lines(g, &inputs, &read_inputs),
        ops,
        finish,
        scalar: rendered.scalar,
    }))
}

/// The context inputs of the operations, typed: categorical features as strings, the others
/// as integers, in order of first use.
fn typed_inputs(plan: &Plan<'_>) -> Vec<(String, Ty)> {
    let mut inputs: Vec<(String, Ty)> = Vec::new();
    for (i, op) in plan.ops.iter().enumerate() {
        for input in op.inputs() {
            if plan.source_before(input, i) == Source::Context
                && !inputs.iter().any(|(n, _)| n == input)
            {
                let categorical = plan.model.categorical_features.iter().any(|c| c == input);
                inputs.push((input.to_string(), if categorical { Ty::S } else { Ty::I }));
            }
        }
    }
    inputs
}

/// Every operation rendered over typed values, with what each one reads.
struct Rendered {
    /// Each operation's code and whether it can fail.
    code: Vec<(Code, bool)>,
    /// Each operation's statements (hoisted subexpressions), run before its code.
    stmts: Vec<Vec<String>>,
    /// The earlier operations each one reads.
    reads: Vec<BTreeSet<usize>>,
    /// The typed inputs each one reads.
    input_reads: Vec<BTreeSet<usize>>,
    /// Functions of `ah_core::ops::scalar` the operations call.
    scalar: BTreeSet<&'static str>,
}

/// Renders the operations, or `None` when one cannot be typed.
fn render_ops(plan: &Plan<'_>, inputs: &[(String, Ty)]) -> Option<Rendered> {
    let mut out = Rendered {
        code: Vec::new(),
        stmts: Vec::new(),
        reads: Vec::new(),
        input_reads: Vec::new(),
        scalar: BTreeSet::new(),
    };
    for (i, op) in plan.ops.iter().enumerate() {
        let reads: RefCell<BTreeSet<usize>> = RefCell::new(BTreeSet::new());
        let input_reads: RefCell<BTreeSet<usize>> = RefCell::new(BTreeSet::new());
        let code = &out.code;
        let lookup = |n: &str| -> Option<(String, Ty)> {
            match plan.source_before(n, i) {
                Source::Op(j) => {
                    reads.borrow_mut().insert(j);
                    Some((format!("o{j}"), code[j].0.ty))
                }
                _ => {
                    let k = inputs.iter().position(|(m, _)| m == n)?;
                    input_reads.borrow_mut().insert(k);
                    Some((format!("v{k}"), inputs[k].1))
                }
            }
        };
        let mut r = Renderer {
            lookup: &lookup,
            fail: format!("UnsureKind::MissingFeature({})", str_lit(&op.name)),
            helpers: BTreeSet::new(),
            fallible: false,
            prefix: i.to_string(),
            scopes: vec![Vec::new()],
            temps: 0,
        };
        let rendered = r.render(&op.expr).ok()?;
        let (helpers, fallible) = (r.helpers, r.fallible);
        out.stmts
            .push(r.scopes.pop().expect("the operation's scope"));
        out.scalar.extend(helpers);
        out.code.push((rendered, fallible));
        out.reads.push(reads.into_inner());
        out.input_reads.push(input_reads.into_inner());
    }
    Some(out)
}

/// Which operations are read (by the guard or a column, whose code reads `o{j}`, see
/// `typed_reads`, or by a computed operation) and which are computed: an operation nobody
/// reads is computed only when it can fail (the model is unsure then). Only what is read is
/// bound, so the module has no unused variable.
fn liveness(plan: &Plan<'_>, r: &Rendered, typed_reads: &[String]) -> (Vec<bool>, Vec<bool>) {
    let mut read: Vec<bool> = (0..plan.ops.len())
        .map(|j| typed_reads.contains(&format!("o{j}")))
        .collect();
    let mut computed = vec![false; plan.ops.len()];
    for i in (0..plan.ops.len()).rev() {
        computed[i] = read[i] || r.code[i].1;
        if computed[i] {
            for &j in &r.reads[i] {
                read[j] = true;
            }
        }
    }
    (read, computed)
}

/// The lines of the computed operations; adds the inputs they read to `read_inputs`.
fn op_lines(
    plan: &Plan<'_>,
    r: &Rendered,
    read: &[bool],
    computed: &[bool],
    read_inputs: &mut BTreeSet<usize>,
) -> Vec<OpLine> {
    let mut ops = Vec::new();
    for (i, (op, (code, _))) in plan.ops.iter().zip(&r.code).enumerate() {
        if !computed[i] {
            continue;
        }
        read_inputs.extend(&r.input_reads[i]);
        ops.push(OpLine {
            doc: format!("`{}` = {}", comment(&op.name), comment(&op.source)),
            stmts: r.stmts[i].clone(),
            var: if read[i] {
                format!("o{i}")
            } else {
                format!("_o{i}")
            },
            ty: code.ty.rust(),
            code: code.code.clone(),
        });
    }
    ops
}

/// Guard and columns over typed values where known; also returns the typed locals (`v{k}`
/// inputs, `o{j}` operations) their code reads.
fn finish(g: &Gen<'_, '_>, inputs: &[(String, Ty)], r: &Rendered) -> (Finish, Vec<String>) {
    struct Typed<'a> {
        g: &'a Gen<'a, 'a>,
        inputs: &'a [(String, Ty)],
    }
    impl ValueSource for Typed<'_> {
        fn value(&self, name: &str) -> String {
            self.g.x(name)
        }
        fn typed(&self, name: &str) -> Option<(String, Ty)> {
            let k = self.inputs.iter().position(|(n, _)| n == name)?;
            Some((format!("v{k}"), self.inputs[k].1))
        }
    }
    let plan = g.plan;
    let src = Typed { g, inputs };
    let op_typed = |j: usize| Some((format!("o{j}"), r.code[j].0.ty));
    let guard_reads: RefCell<BTreeSet<String>> = RefCell::new(BTreeSet::new());
    let guard = g.guard_values(&|n| match plan.guard_source(n) {
        Source::Op(j) => match r.code[j].0.ty {
            Ty::S => "None".to_string(),
            ty => {
                guard_reads.borrow_mut().insert(format!("o{j}"));
                format!("Some({})", as_f64(&format!("o{j}"), ty))
            }
        },
        _ => match src.typed(n) {
            Some((code, Ty::I)) => {
                guard_reads.borrow_mut().insert(code.clone());
                format!("Some({})", as_f64(&code, Ty::I))
            }
            Some(_) => "None".to_string(),
            None => format!("number({})", g.x(n)),
        },
    });
    let mut finish = g.columns(&src, guard, &|_| None, &op_typed);
    // The generic path binds every field first; the fast path writes what it can in the
    // literal, so the two do not repeat one block.
    finish.inline_fields();
    let mut typed_reads: Vec<String> = guard_reads.into_inner().into_iter().collect();
    typed_reads.extend(finish.typed_reads.iter().cloned());
    (finish, typed_reads)
}

/// The match arms that read the typed inputs from the context (`_` for one nothing reads).
fn input_lines(
    g: &Gen<'_, '_>,
    inputs: &[(String, Ty)],
    read_inputs: &BTreeSet<usize>,
) -> Vec<Input> {
    inputs
        .iter()
        .enumerate()
        .map(|(k, (name, ty))| {
            let bound = read_inputs.contains(&k);
            let var = if bound { format!("v{k}") } else { "_".into() };
            Input {
                pattern: match ty {
                    Ty::S => format!("Some(Value::Str({var}))"),
                    _ => format!("Some(Value::Int({var}))"),
                },
                scrutinee: g.x(name),
                binding: bound.then(|| match ty {
                    Ty::S => format!("v{k} = v{k}.as_str()"),
                    _ => format!("v{k} = *v{k}"),
                }),
            }
        })
        .collect()
}

/// The shared `pad_mm` path: for a model with PyTorch's logged `pad_mm` features and exactly
/// its operations, `ah_core::generated::pad_mm` reads the context (`x`) and computes the
/// operations (`o`), typed; the module keeps only its range guard and columns.
#[derive(Serialize)]
pub struct PadMmPath {
    /// Guard and columns over `x` and `o`.
    pub finish: Finish,
    /// The guard or a column reads an operation (`let o = ...`; else the operations are
    /// computed only for their failures).
    reads_ops: bool,
    /// The range guard is `ah_core::generated::pad_mm::Guard`'s (`GUARD`).
    guard: bool,
}

/// The shared `pad_mm` path of `g`'s model, or `None` when its features or operations are not
/// PyTorch's `pad_mm` ones (or a column reads a feature outside them).
pub fn pad_mm_path(g: &Gen<'_, '_>) -> Option<PadMmPath> {
    use ah_core::generated::pad_mm::{PadMmOps, FEATURES, NUMBERS, OPERATION_SPECS};
    let plan = g.plan;
    let model = plan.model;
    let layout = model
        .numerical_features
        .iter()
        .chain(&model.categorical_features);
    if !layout.map(String::as_str).eq(FEATURES)
        || plan.ops.len() != OPERATION_SPECS.len()
        || !g.gathered.iter().all(|n| FEATURES.contains(&n.as_str()))
        || (model.range_guard
            && !model
                .feature_ranges
                .iter()
                .all(|r| NUMBERS.contains(&r.name.as_str())))
    {
        return None;
    }
    let specs = OPERATION_SPECS.iter().map(|(name, _, _)| *name);
    if !plan.ops.iter().map(|op| op.name.as_str()).eq(specs)
        || !plan.ops.iter().all(is_pad_mm_operation)
    {
        return None;
    }
    let rendered = render_ops(plan, &typed_inputs(plan))?;
    struct Logged<'a> {
        categorical: &'a [String],
    }
    impl ValueSource for Logged<'_> {
        fn value(&self, name: &str) -> String {
            format!("Some(x.{name})")
        }
        fn typed(&self, name: &str) -> Option<(String, Ty)> {
            let numerical = !self.categorical.iter().any(|c| c == name);
            numerical.then(|| (format!("x.{name}"), Ty::I))
        }
        fn present(&self, name: &str) -> Option<String> {
            let categorical = self.categorical.iter().any(|c| c == name);
            categorical.then(|| format!("x.{name}"))
        }
    }
    let src = Logged {
        categorical: &model.categorical_features,
    };
    let op = |j: usize| {
        (
            format!("o.{}", PadMmOps::field(&plan.ops[j].name)),
            rendered.code[j].0.ty,
        )
    };
    let guard = g.guard_values(&|n| match plan.guard_source(n) {
        Source::Op(j) => match op(j) {
            (_, Ty::S) => "None".to_string(),
            (code, ty) => format!("Some({})", as_f64(&code, ty)),
        },
        _ => match src.typed(n) {
            Some((code, ty)) => format!("Some({})", as_f64(&code, ty)),
            None => format!("number({})", src.value(n)),
        },
    });
    let mut finish = g.columns(&src, guard, &|_| None, &|j| Some(op(j)));
    finish.inline_fields();
    // `GUARD` checks the same values, in the same order.
    let guard = !finish.guard.is_empty();
    finish.guard.clear();
    let reads_ops = finish
        .exprs()
        .chain(finish.guard.iter().map(String::as_str))
        .any(|e| {
            e.match_indices("o.")
                .any(|(i, _)| !e[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
        });
    Some(PadMmPath {
        finish,
        reads_ops,
        guard,
    })
}

/// Whether `op` is one of PyTorch's `pad_mm` operations (which include `mm`'s), name,
/// expression and kind: its typed code is clippy-clean (the generated crate is linted with
/// `-D warnings`), unlike what a user's operation may hold.
pub fn is_pad_mm_operation(op: &Operation) -> bool {
    ah_core::generated::pad_mm::OPERATION_SPECS
        .iter()
        .any(|(name, expr, categorical)| {
            op.name == *name
                && op.is_categorical == *categorical
                && ah_core::ops::parse_expr(expr).is_ok_and(|e| e == op.expr)
        })
}
