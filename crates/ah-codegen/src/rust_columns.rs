//! The column steps of a generated Rust module: after the range guard, each column of the
//! model read in order, as the statements and the `Columns` literal of one path (the direct,
//! the fast, the `pad_mm` or the generic one). A path says where it finds a feature's value
//! ([`ValueSource`]); [`columns`] says how each column kind reads it: a numeric column as an
//! `f64`, a one-hot column as a `bool`, a lazy column (a used one-hot column over a context
//! feature) as the context's `&Value`, compared on the tree's path.

use std::collections::{BTreeMap, BTreeSet};

use ah_core::model::Column;
use serde::Serialize;

use crate::plan::{feature_of, Plan, Source};
use crate::rust_expr::{str_lit, typed_str_eq, Ty};

/// A statement of the column reading: `let field = expr;`, or `expr;` without a field.
#[derive(Serialize, Clone)]
pub struct Step {
    /// The local it binds, if any.
    pub field: Option<String>,
    /// The expression.
    pub expr: String,
    /// It binds a `Columns` field (not a helper local such as `p{i}`).
    #[serde(skip)]
    pub column: bool,
    /// It can return early (ends in `?`).
    #[serde(skip)]
    pub fallible: bool,
}

/// A field of the `Columns` literal: `name` (bound by a step), or `name: expr`.
#[derive(Serialize, Clone)]
pub struct FieldInit {
    /// The field (`c{column}`).
    pub name: String,
    /// Its expression, when it is written in the literal rather than bound by a step.
    pub expr: Option<String>,
}

/// Range guard, columns and the result of one path (fast or generic).
#[derive(Serialize, Default)]
pub struct Finish {
    /// Values given to `range_guard`, in `RANGES` order (empty: no guard).
    pub guard: Vec<String>,
    /// Typed locals (`v{k}`, `o{j}`) the steps read.
    #[serde(skip)]
    pub typed_reads: BTreeSet<String>,
    /// A column reads the guard's checked values (`g[k]`).
    pub guard_read: bool,
    /// Column statements, in column order.
    pub steps: Vec<Step>,
    /// The `Columns` fields, in order.
    pub fields: Vec<FieldInit>,
    /// The guard reads its values by name from `s` (`range_guard_by_name`), not from
    /// `guard`.
    pub guard_by_name: bool,
    /// A column that can never be read (a numeric column of the choice or of a string): the
    /// path ends unsure, naming it (a string literal).
    pub fail: Option<String>,
}

impl Finish {
    /// Every expression of the steps and of the literal.
    pub fn exprs(&self) -> impl Iterator<Item = &str> {
        let steps = self.steps.iter().map(|s| s.expr.as_str());
        steps.chain(self.fields.iter().filter_map(|f| f.expr.as_deref()))
    }

    /// Writes the fields' expressions in the `Columns` literal (`c0: v0 as f64`) rather than
    /// binding them first, wherever that keeps the order of the checks: an expression that
    /// cannot fail, or one that no other fallible statement follows (the literal is evaluated
    /// last, in field order, which is step order).
    pub fn inline_fields(&mut self) {
        if self.fail.is_some() {
            return;
        }
        let last_check = self
            .steps
            .iter()
            .rposition(|s| s.fallible && !s.column)
            .map_or(0, |i| i + 1);
        let mut kept = Vec::with_capacity(self.steps.len());
        for (i, step) in std::mem::take(&mut self.steps).into_iter().enumerate() {
            if !step.column || (step.fallible && i < last_check) {
                kept.push(step);
                continue;
            }
            let name = step
                .field
                .as_deref()
                .expect("a column step binds its field");
            let field = self.fields.iter_mut().find(|f| f.name == name);
            field.expect("a column step's field is in the literal").expr = Some(step.expr);
        }
        self.steps = kept;
    }
}

/// Where the column steps find a feature's value.
pub trait ValueSource {
    /// An `Option<&Value>` expression for context-or-operation feature `name`.
    fn value(&self, name: &str) -> String;
    /// What is statically known about `name` on this path: `Some(code)` when it is a typed
    /// number (`code` is its `f64`), or a typed string/boolean (`code` is its typed local
    /// and kind); `None` when it is an untyped `Option<&Value>`.
    fn typed(&self, name: &str) -> Option<(String, Ty)>;
    /// A `&Value` expression for `name` when it is known to be present on this path (no
    /// presence check is emitted), else `None`.
    fn present(&self, _name: &str) -> Option<String> {
        None
    }
}

/// What the column steps read of the generator (`crate::rust::Gen`).
pub(crate) struct ColumnKinds<'a> {
    /// The model, analysed.
    pub(crate) plan: &'a Plan<'a>,
    /// Columns the emitted tree splits on.
    pub(crate) used: &'a BTreeSet<usize>,
    /// Category constant of each used one-hot column.
    pub(crate) categories: &'a BTreeMap<usize, usize>,
    /// Used one-hot columns over a context feature.
    pub(crate) lazy: &'a BTreeSet<usize>,
}

/// A typed value as `f64`.
pub(crate) fn as_f64(code: &str, ty: Ty) -> String {
    match ty {
        Ty::I => format!("{code} as f64"),
        Ty::F => code.to_string(),
        Ty::B => format!("f64::from(u8::from({code}))"),
        Ty::S => unreachable!("strings are not numbers"),
    }
}

/// The column steps after the guard. `lazy(f)` is where a lazy column over `f` reads its
/// `Option<&'a Value>` when that differs from `src.value(f)`; `op(j)` is operation `j`'s
/// typed local, on the fast path.
pub(crate) fn columns(
    kinds: &ColumnKinds<'_>,
    src: &dyn ValueSource,
    guard: Vec<String>,
    lazy: &dyn Fn(&str) -> Option<String>,
    op: &dyn Fn(usize) -> Option<(String, Ty)>,
) -> Finish {
    let mut steps = Steps {
        kinds,
        src,
        lazy,
        op,
        present: Vec::new(),
        out: Finish {
            guard,
            ..Finish::default()
        },
    };
    for (c, col) in kinds.plan.model.columns.iter().enumerate() {
        let f = feature_of(col);
        let read = match col {
            Column::Numeric { .. } => steps.numeric(c, f),
            Column::OneHot { .. } if kinds.lazy.contains(&c) => Some((steps.lazy(f), None)),
            Column::OneHot { value, .. } => Some(steps.one_hot(c, f, value)),
        };
        let Some((value, typed)) = read else {
            // Never numeric on this path: unsure at this column.
            steps.out.fail = Some(str_lit(f));
            break;
        };
        steps.push(c, value, typed);
    }
    steps.finish()
}

/// The column steps of one path as they are written, column by column.
struct Steps<'a, 'k> {
    kinds: &'k ColumnKinds<'a>,
    src: &'k dyn ValueSource,
    lazy: &'k dyn Fn(&str) -> Option<String>,
    op: &'k dyn Fn(usize) -> Option<(String, Ty)>,
    /// Features whose presence was checked on this path, in order (`p{i}` holds the value).
    present: Vec<&'a str>,
    out: Finish,
}

impl<'a> Steps<'a, '_> {
    /// What is statically known of the value of column `c`'s feature `f` on this path.
    fn typed(&self, c: usize, f: &str) -> Option<(String, Ty)> {
        match self.kinds.plan.source(f) {
            Source::Op(j) => (self.op)(j),
            // A lazy column holds the context's `&Value`, typed or not.
            Source::Context if self.kinds.lazy.contains(&c) => None,
            Source::Context => self.src.typed(f),
            Source::Choice => None,
        }
    }

    /// Numeric column `c` over `f` as an `f64` and the typed local it reads, or `None` when
    /// it is never numeric on this path (the choice, or a string).
    fn numeric(&mut self, c: usize, f: &str) -> Option<(String, Option<String>)> {
        let model = self.kinds.plan.model;
        let typed = self.typed(c, f);
        if self.kinds.plan.source(f) == Source::Choice || matches!(typed, Some((_, Ty::S))) {
            return None;
        }
        let guarded = model.feature_ranges.iter().position(|r| r.name == f);
        let value = match (&typed, guarded.filter(|_| !self.out.guard.is_empty())) {
            (Some((code, ty)), _) => as_f64(code, *ty),
            (None, Some(k)) => {
                self.out.guard_read |= self.kinds.used.contains(&c);
                format!("g[{k}]")
            }
            (None, None) => format!("num({}, {})?", self.src.value(f), str_lit(f)),
        };
        Some((value, typed.map(|(code, _)| code)))
    }

    /// One-hot column `c` (`str(f) == value`, not lazy) as a `bool` and the typed local it
    /// reads; empty when nothing reads it.
    fn one_hot(&mut self, c: usize, f: &'a str, value: &str) -> (String, Option<String>) {
        let plan = self.kinds.plan;
        let source = plan.source(f);
        if source == Source::Choice {
            let eq = match plan.model.choices.iter().position(|choice| choice == value) {
                Some(j) => format!("choice == {j}"),
                None => "false".into(),
            };
            return (eq, None);
        }
        if let Some((code, ty)) = self.typed(c, f) {
            return match typed_str_eq(&code, ty, value) {
                Some(eq) => (eq, Some(code)),
                // Never equal: the typed value is not read.
                None => ("false".into(), None),
            };
        }
        if !self.kinds.used.contains(&c) && matches!(source, Source::Op(_)) {
            return (String::new(), None);
        }
        let present = self.value(f);
        let eq = match self.kinds.categories.get(&c) {
            Some(k) => format!("CATEGORY_{k}.matches({present})"),
            None => String::new(),
        };
        (eq, None)
    }

    /// A lazy column over `f`: the context's `&Value`, compared on the tree's path.
    fn lazy(&mut self, f: &'a str) -> String {
        self.value(f)
    }

    /// A `&Value` expression for `f`: the path's own when it is known present, else `p{i}`,
    /// bound by the first presence check of `f` (emitted here when it is the first).
    fn value(&mut self, f: &'a str) -> String {
        if let Some(known) = self.src.present(f) {
            return known;
        }
        if let Some(i) = self.present.iter().position(|p| *p == f) {
            return format!("p{i}");
        }
        let plan = self.kinds.plan;
        let model = plan.model;
        self.present.push(f);
        let i = self.present.len() - 1;
        let reads = self
            .kinds
            .used
            .iter()
            .any(|&u| feature_of(&model.columns[u]) == f && plan.source(f) != Source::Choice);
        let from = (self.lazy)(f).unwrap_or_else(|| self.src.value(f));
        self.out.steps.push(Step {
            field: reads.then(|| format!("p{i}")),
            expr: format!("present({from}, {})?", str_lit(f)),
            column: false,
            fallible: true,
        });
        format!("p{i}")
    }

    /// Column `c`'s statement: bound as field `c{c}` when the tree reads it, else kept only
    /// as a check when it can fail.
    fn push(&mut self, c: usize, value: String, typed: Option<String>) {
        let fallible = value.starts_with("num(");
        let out = &mut self.out;
        if self.kinds.used.contains(&c) {
            out.typed_reads.extend(typed);
            out.steps.push(Step {
                field: Some(format!("c{c}")),
                expr: value,
                column: true,
                fallible,
            });
            out.fields.push(FieldInit {
                name: format!("c{c}"),
                expr: None,
            });
        } else if fallible {
            out.steps.push(Step {
                field: None,
                expr: value,
                column: false,
                fallible,
            });
        }
    }

    /// The steps, and when the path ends unsure, only its checks (nothing is bound).
    fn finish(self) -> Finish {
        let mut out = self.out;
        if out.fail.is_some() {
            // The path ends unsure: the checks before the failing column still run, in order,
            // but nothing is bound (no `Columns` is built from them).
            out.steps.retain(|s| s.fallible);
            for s in &mut out.steps {
                s.field = None;
            }
            out.fields.clear();
            out.typed_reads.clear();
            out.guard_read = false;
        }
        out
    }
}
