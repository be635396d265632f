//! The Rust module of one heuristic in the generated heuristics crate, and the crate's
//! `lib.rs`. The generator prepares data (names, typed expressions, the column steps of
//! `crate::rust_columns`, the tree); `templates/rust_module.rs.tera` lays the module out.
//!
//! Decision semantics are `ah_core::model::ModelEvaluator`'s, step for step: the operations in
//! order (a failure is unsure, naming the missing input or the operation), then the range
//! guard, then every column in order (a missing or non-numeric value is unsure), then the
//! tree. Each check is emitted once (a value known to be present or numeric is not checked
//! again), an operation that no later step reads and that cannot fail is not computed, and
//! only the values the tree reads are kept. Shared helpers are `ah_core::generated`'s and
//! `ah_core::ops::scalar`'s.

use std::collections::BTreeSet;

use ah_core::model::{Column, ModelKind};
use ah_core::DeviceIdentity;
use serde::Serialize;

use crate::error::CodegenError;
use crate::escape::comment;
use crate::plan::{feature_of, Plan, Source};
use crate::rust_columns::{Finish, ValueSource};
use crate::rust_expr::{category_fields, f64_lit, str_lit, Ty};
use crate::rust_fast::{fast_path, is_pad_mm_operation, pad_mm_path, Fast, PadMmPath};
use crate::rust_gen::{Gen, Leaf};

/// A field of `Columns`.
#[derive(Serialize)]
struct Field {
    name: String,
    ty: &'static str,
    doc: String,
}

/// A category constant (`ah_core::generated::Category`).
#[derive(Serialize)]
struct Category {
    doc: String,
    text: String,
    int: String,
    float_bits: String,
    nan: bool,
}

/// A range guard entry.
#[derive(Serialize)]
struct Range {
    name: String,
    min: String,
    max: String,
}

/// The logged layout, checked once per schema (`ah_core::generated::VerifiedSchema`) and then
/// read by position.
#[derive(Serialize)]
struct Layout {
    len: usize,
    names: Vec<String>,
}

/// Everything the template lays out.
#[derive(Serialize)]
struct Module<'g> {
    uses: Vec<String>,
    leaves: &'g [Leaf],
    fields: Vec<Field>,
    categories: Vec<Category>,
    ranges: Vec<Range>,
    /// The features `columns` reads into `x` (empty: it reads none), as literals.
    slots: Vec<String>,
    layout: Option<Layout>,
    /// `direct` (no operations), `pad_mm` (`ah_core::generated::pad_mm`, then generic),
    /// `fast` (typed fast path, then generic) or `generic`.
    path: &'static str,
    pad_mm: Option<PadMmPath>,
    fast: Option<Fast>,
    operations: Vec<(String, String, bool)>,
    operation_inputs: Vec<String>,
    /// The arguments of `finish` from `columns` (no operations).
    direct_call: String,
    finish: Finish,
    /// `finish`'s parameters: those it reads of `v`, `w` and `choice`.
    finish_params: String,
    /// `finish` reads its `v` and `w` parameters.
    finish_reads: (bool, bool),
    /// `slow` reads `s`, the context with the operations' values.
    slow_reads_s: bool,
    tree: crate::rust_tree::Tree,
}

/// The generic path, prepared for the template.
struct Generic {
    /// Its guard and columns.
    finish: Finish,
    /// `finish` reads its `v` and `w` parameters.
    reads: (bool, bool),
    /// `finish`'s parameters: those it reads of `v`, `w` and `choice`.
    params: String,
    /// The arguments of `finish` from `columns` (no operations).
    direct_call: String,
}

/// The lints a module allows when its fast path renders operations of the model's own (not
/// PyTorch's): the code mirrors each expression as written, and clippy would rewrite some
/// that a model may hold. Other modules allow nothing.
const MIRRORED_EXPRESSION_LINTS: &str = "\
//!
//! The operations are rendered as the model writes them, so this module allows the lints
//! that would rewrite an expression a model may hold:
#![allow(
    clippy::absurd_extreme_comparisons, // `x <= 9223372036854775807`
    clippy::approx_constant, // a literal such as `3.14`
    clippy::bool_comparison, // `x == True`
    clippy::eq_op, // `x == x`, `x - x`
    clippy::excessive_precision, // a literal with more digits than `f64` holds
    clippy::identity_op, // `x * 1`, `x + 0`
    clippy::if_same_then_else, // `if(c, x, x)`
    clippy::ifs_same_cond, // `if(c, x, if(c, y, z))`
    clippy::manual_range_contains, // `x >= 1 and x <= 8`
    clippy::match_like_matches_macro, // `if(c, True, False)` of a comparison
    clippy::needless_bool, // `if(c, True, False)`
    clippy::needless_match, // a `match` that returns its operand
    clippy::neg_cmp_op_on_partial_ord, // `not x < y` of floats (NaN: not `x >= y`)
    clippy::nonminimal_bool, // `not (a and b)`, `x or not x`
    clippy::overly_complex_bool_expr, // `x and not x`
    clippy::single_match, // a `match` with one arm that matters
    clippy::unnecessary_cast, // `float(x)` of a float
)]
";

/// Renders the module (unformatted; the caller runs rustfmt).
pub fn render_module(plan: &Plan<'_>, header: &[String]) -> Result<String, CodegenError> {
    let model = plan.model;
    let g = Gen::new(plan);
    let mut ctx = tera::Context::new();
    ctx.insert("header", header);
    ctx.insert("heuristic_name", &model.heuristic_name);
    ctx.insert("heuristic_name_lit", &str_lit(&model.heuristic_name));
    ctx.insert("name", &comment(&model.name));
    ctx.insert("name_lit", &str_lit(&model.name));
    let kind = match model.kind {
        ModelKind::Decision => "Decision",
        ModelKind::Regression => "Regression",
    };
    ctx.insert("kind", kind);
    ctx.insert("n_choices", &model.choices.len());
    ctx.insert(
        "choices",
        &model.choices.iter().map(|c| str_lit(c)).collect::<Vec<_>>(),
    );
    ctx.insert("device", &device_lit(model.precondition));
    ctx.insert("threshold", &f64_lit(model.threshold));
    let module = g.module()?;
    // Only a regression model reads the choice it scores; only a column that holds the
    // context's value borrows it.
    let (choice_param, choice_arg) = match model.kind {
        ModelKind::Decision => ("", ""),
        ModelKind::Regression => (", choice: usize", ", choice"),
    };
    ctx.insert("choice_param", choice_param);
    ctx.insert("choice_arg", choice_arg);
    let borrows = !g.lazy.is_empty();
    ctx.insert("columns", if borrows { "Columns<'a>" } else { "Columns" });
    ctx.insert(
        "columns_ref",
        if borrows { "Columns<'_>" } else { "Columns" },
    );
    ctx.insert(
        "allows",
        if module.fast.is_some() && !plan.ops.iter().all(is_pad_mm_operation) {
            MIRRORED_EXPRESSION_LINTS
        } else {
            ""
        },
    );
    ctx.insert("m", &module);
    crate::templates::render("rust_module.rs", &ctx)
}

/// The device identity as Rust: the core's name for a known device (`DeviceIdentity::H100`),
/// else the literal.
fn device_lit(device: DeviceIdentity) -> String {
    let known = [
        (DeviceIdentity::A100, "A100"),
        (DeviceIdentity::H100, "H100"),
        (DeviceIdentity::NONE, "NONE"),
    ];
    match known.iter().find(|(d, _)| *d == device) {
        Some((_, name)) => format!("DeviceIdentity::{name}"),
        None => format!(
            "DeviceIdentity {{ shared_memory: {}, device_capa: ({}, {}) }}",
            device.shared_memory, device.device_capa.0, device.device_capa.1
        ),
    }
}

/// Renders `lib.rs` for the given module names (sorted, deduplicated).
pub fn render_lib(modules: &BTreeSet<String>, command: &str) -> Result<String, CodegenError> {
    let mut ctx = tera::Context::new();
    ctx.insert("modules", &modules.iter().collect::<Vec<_>>());
    ctx.insert("command", command);
    ctx.insert("version", ah_core::TOOL_VERSION);
    crate::templates::render("rust_lib.rs", &ctx)
}

impl Gen<'_, '_> {
    /// Names read by the range guard and the columns, in that order (generic path inputs).
    fn finish_names(&self) -> Vec<String> {
        let model = self.plan.model;
        let mut out: Vec<String> = Vec::new();
        let guarded = self.plan.guarded_ranges().iter().map(|r| r.name.as_str());
        // An operation's value is always present: a one-hot column over it is read only when
        // the tree uses it.
        let columns = model
            .columns
            .iter()
            .enumerate()
            .filter(|(c, col)| match self.plan.source(feature_of(col)) {
                Source::Choice => false,
                Source::Op(_) => matches!(col, Column::Numeric { .. }) || self.used.contains(c),
                Source::Context => true,
            })
            .map(|(_, col)| feature_of(col));
        for n in guarded.chain(columns) {
            if !out.iter().any(|o| o == n) {
                out.push(n.to_string());
            }
        }
        out
    }

    /// Context features of the lazy columns, in column order.
    fn lazy_names(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for &c in &self.lazy {
            let f = feature_of(&self.plan.model.columns[c]);
            if !out.iter().any(|o| o == f) {
                out.push(f.to_string());
            }
        }
        out
    }

    /// The module's `use` lines: the prediction and value types, then the `ah_core::generated`
    /// helpers (`GeneratedHeuristic` always) and the `ah_core::ops::scalar` functions the
    /// paths call.
    fn uses(
        &self,
        finish: &Finish,
        fast: Option<&Fast>,
        pad_mm: Option<&PadMmPath>,
        layout: bool,
        slots: bool,
        names_value: bool,
    ) -> Vec<String> {
        let core = if names_value {
            "ah_core::{Context, DeviceIdentity, Value}"
        } else {
            "ah_core::{Context, DeviceIdentity}"
        };
        let mut uses = vec![
            "ah_core::heuristic::{Prediction, UnsureKind}".to_string(),
            core.to_string(),
        ];
        let mut generated: BTreeSet<&str> = BTreeSet::from(["GeneratedHeuristic", "Predict"]);
        let fast_finish = fast.map(|f| &f.finish);
        let pad_mm_finish = pad_mm.map(|p| &p.finish);
        for fin in std::iter::once(finish)
            .chain(fast_finish)
            .chain(pad_mm_finish)
        {
            if !fin.guard.is_empty() {
                generated.extend(["range_guard", "FeatureRange"]);
            }
            if fin.guard_by_name {
                generated.extend(["range_guard_by_name", "FeatureRange"]);
            }
            for e in fin.exprs() {
                for f in ["num", "number", "present"] {
                    if e.starts_with(&format!("{f}(")) || e.contains(&format!("({f}(")) {
                        generated.insert(f);
                    }
                }
            }
            for g in &fin.guard {
                if g.starts_with("number(") {
                    generated.insert("number");
                }
            }
        }
        if !self.categories.is_empty() {
            generated.insert("Category");
        }
        if !self.plan.ops.is_empty() && pad_mm.is_none() {
            generated.insert("Operations");
        }
        if layout {
            generated.insert("VerifiedSchema");
        } else if slots {
            generated.insert("read_by_name");
        }
        let list: Vec<&str> = generated.into_iter().collect();
        uses.push(format!("ah_core::generated::{{{}}}", list.join(", ")));
        if pad_mm.is_some() {
            uses.push("ah_core::generated::pad_mm::{self, PadMm}".to_string());
        }
        if let Some(f) = fast {
            if !f.scalar.is_empty() {
                let list: Vec<&str> = f.scalar.iter().copied().collect();
                uses.push(format!("ah_core::ops::scalar::{{{}}}", list.join(", ")));
            }
        }
        uses
    }

    /// The typed path tried before the generic one: the shared `pad_mm` path, else the fast
    /// path (`None` when no operation is computed, or when one cannot be typed).
    fn typed_paths(&self) -> Result<(Option<PadMmPath>, Option<Fast>), CodegenError> {
        let pad_mm = pad_mm_path(self);
        let fast = if self.plan.ops.is_empty() || pad_mm.is_some() {
            None
        } else {
            fast_path(self)?
        };
        Ok((pad_mm, fast))
    }

    /// The generic path: its guard and columns, and how `finish` is declared and called.
    fn generic_path(&self) -> Generic {
        let plan = self.plan;
        let names = self.finish_names();
        // `finish` by position (no operations: `columns` reads the context into slots), else
        // inside `slow` by name.
        let finish = if plan.ops.is_empty() {
            self.finish(&names)
        } else {
            self.finish_by_name()
        };
        let reads = |var: &str| {
            let guard = finish.guard.iter().map(String::as_str);
            finish.exprs().chain(guard).any(|e| reads_index(e, var))
        };
        let reads = (reads("v"), reads("w"));
        let lazy = self.lazy_names();
        let reads_choice = plan
            .model
            .columns
            .iter()
            .any(|c| plan.source(feature_of(c)) == Source::Choice);
        // `finish(v, w, choice)`, with only the arguments it reads.
        let call = |get: &dyn Fn(&str) -> String| -> String {
            let mut args = Vec::new();
            if reads.0 {
                let v: Vec<String> = names.iter().map(|n| get(n)).collect();
                args.push(format!("[{}]", v.join(", ")));
            }
            if reads.1 {
                let w: Vec<String> = lazy.iter().map(|n| get(n)).collect();
                args.push(format!("[{}]", w.join(", ")));
            }
            if reads_choice {
                args.push("choice".to_string());
            }
            args.join(", ")
        };
        let mut params = Vec::new();
        if reads.0 {
            params.push(format!("v: [Option<&Value>; {}]", names.len()));
        }
        if reads.1 {
            params.push(format!("w: [Option<&'a Value>; {}]", lazy.len()));
        }
        if reads_choice {
            params.push("choice: usize".to_string());
        }
        let direct_call = if plan.ops.is_empty() {
            call(&|n| self.x(n))
        } else {
            String::new()
        };
        Generic {
            finish,
            reads,
            params: params.join(", "),
            direct_call,
        }
    }

    /// The context features the operations read, in order of first use, as literals.
    fn operation_inputs(&self) -> Vec<String> {
        let mut inputs: Vec<&str> = Vec::new();
        for op in &self.plan.ops {
            for i in op.inputs() {
                if !inputs.contains(&i) {
                    inputs.push(i);
                }
            }
        }
        inputs.iter().map(|n| str_lit(n)).collect()
    }

    fn module(&self) -> Result<Module<'_>, CodegenError> {
        let plan = self.plan;
        let (pad_mm, fast) = self.typed_paths()?;
        let generic = self.generic_path();
        // Only `columns` reads by position; the generic path alone never does.
        let layout = self
            .layout()
            .filter(|_| plan.ops.is_empty() || fast.is_some());
        // `Value` is named by the columns that hold the context's value, by `finish`'s
        // parameters and by the slots `columns` reads the context into.
        let slots = !self.gathered.is_empty() && (plan.ops.is_empty() || fast.is_some());
        let names_value = !self.lazy.is_empty() || generic.reads.0 || generic.reads.1 || slots;
        let uses = self.uses(
            &generic.finish,
            fast.as_ref(),
            pad_mm.as_ref(),
            layout.is_some(),
            slots,
            names_value,
        );
        let finish = generic.finish;
        Ok(Module {
            uses,
            leaves: &self.leaves.tables,
            fields: self.fields(),
            categories: self.category_consts(),
            ranges: self.ranges(),
            slots: if slots {
                self.read_names().iter().map(|n| str_lit(n)).collect()
            } else {
                Vec::new()
            },
            layout,
            path: match (&fast, plan.ops.is_empty()) {
                (_, true) => "direct",
                _ if pad_mm.is_some() => "pad_mm",
                (Some(_), false) => "fast",
                (None, false) => "generic",
            },
            pad_mm,
            direct_call: generic.direct_call,
            fast,
            operations: plan
                .ops
                .iter()
                .map(|op| (str_lit(&op.name), str_lit(&op.source), op.is_categorical))
                .collect(),
            operation_inputs: self.operation_inputs(),
            finish_params: generic.params,
            slow_reads_s: finish.guard_by_name || finish.exprs().any(|e| e.contains("s.get(")),
            finish_reads: generic.reads,
            finish,
            tree: crate::rust_tree::tree(
                plan,
                &|c| self.categories.get(&c).copied().filter(|_| self.lazy(c)),
                &self.leaves.of_node,
            ),
        })
    }

    fn fields(&self) -> Vec<Field> {
        let model = self.plan.model;
        self.used
            .iter()
            .map(|&c| {
                let col = &model.columns[c];
                Field {
                    name: format!("c{c}"),
                    ty: match col {
                        Column::Numeric { .. } => "f64",
                        Column::OneHot { .. } if self.lazy(c) => "&'a Value",
                        Column::OneHot { .. } => "bool",
                    },
                    doc: doc_name(col),
                }
            })
            .collect()
    }

    fn category_consts(&self) -> Vec<Category> {
        self.category_texts
            .iter()
            .map(|text| {
                let (int, float_bits, nan) = category_fields(text);
                Category {
                    doc: comment(&format!("{text:?}")),
                    text: str_lit(text),
                    int,
                    float_bits,
                    nan,
                }
            })
            .collect()
    }

    fn ranges(&self) -> Vec<Range> {
        self.plan
            .guarded_ranges()
            .iter()
            .map(|r| Range {
                name: str_lit(&r.name),
                min: f64_lit(r.min),
                max: f64_lit(r.max),
            })
            .collect()
    }

    /// [`Gen::logged_layout`] for the template.
    fn layout(&self) -> Option<Layout> {
        let layout = self.logged_layout()?;
        Some(Layout {
            len: layout.len(),
            names: layout.iter().map(|n| str_lit(n)).collect(),
        })
    }

    /// The generic path's guard and columns, over `v` (values of `names`) and `w` (the lazy
    /// columns' context values).
    fn finish(&self, names: &[String]) -> Finish {
        struct Generic<'a> {
            names: &'a [String],
            lazy: Vec<String>,
        }
        impl ValueSource for Generic<'_> {
            fn value(&self, name: &str) -> String {
                let i = self.names.iter().position(|m| m == name).expect("name");
                format!("v[{i}]")
            }
            fn typed(&self, _: &str) -> Option<(String, Ty)> {
                None
            }
        }
        let src = Generic {
            names,
            lazy: self.lazy_names(),
        };
        let guard = self.guard_values(&|n| format!("number({})", src.value(n)));
        let lazy = |f: &str| {
            let i = src.lazy.iter().position(|n| n == f)?;
            Some(format!("w[{i}]"))
        };
        self.columns(&src, guard, &lazy, &|_| None)
    }

    /// The generic path's guard and columns in `slow`, by name: from `s` (the context with
    /// the operations' values), the columns that hold the context's value from `ctx`.
    fn finish_by_name(&self) -> Finish {
        struct ByName;
        impl ValueSource for ByName {
            fn value(&self, name: &str) -> String {
                format!("s.get({})", str_lit(name))
            }
            fn typed(&self, _: &str) -> Option<(String, Ty)> {
                None
            }
        }
        let guard = self.guard_values(&|n| format!("number({})", ByName.value(n)));
        let lazy_names = self.lazy_names();
        let lazy = |f: &str| {
            let lazy = lazy_names.iter().any(|n| n == f);
            lazy.then(|| format!("ctx.get({})", str_lit(f)))
        };
        let mut finish = self.columns(&ByName, guard, &lazy, &|_| None);
        finish.guard_by_name = !finish.guard.is_empty();
        finish.guard.clear();
        finish
    }
}

/// Whether Rust code `code` indexes `var` (`v[0]`), outside its string literals.
fn reads_index(code: &str, var: &str) -> bool {
    let mut outside = String::with_capacity(code.len());
    let (mut quoted, mut escaped) = (false, false);
    for c in code.chars() {
        match (quoted, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (_, false, '"') => quoted = !quoted,
            (false, _, c) => outside.push(c),
            _ => {}
        }
    }
    outside
        .match_indices(&format!("{var}["))
        .any(|(i, _)| !outside[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
}

/// A column as comment text.
fn doc_name(col: &Column) -> String {
    comment(&match col {
        Column::Numeric { name } => name.clone(),
        Column::OneHot { feature, value } => format!("str({feature}) == {value:?}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_device_is_named_and_another_is_written_out() {
        assert_eq!(device_lit(DeviceIdentity::H100), "DeviceIdentity::H100");
        let other = DeviceIdentity {
            shared_memory: 101376,
            device_capa: (8, 6),
        };
        assert_eq!(
            device_lit(other),
            "DeviceIdentity { shared_memory: 101376, device_capa: (8, 6) }"
        );
    }
}
