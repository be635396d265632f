//! What generated heuristics call (`ah-codegen`'s Rust modules): [`GeneratedHeuristic`], the
//! [`crate::LearnedHeuristic`] a module fills in with its names, choices, device, threshold
//! and tree walk; the check that a context holds the logged layout, once per
//! [`crate::Schema`] ([`VerifiedSchema`]), reading a value as a number, the range guard over a
//! table of training ranges, `str(value) == category` without formatting, and the generic
//! path that evaluates a model's operations with [`crate::ops`].
//!
//! [`pad_mm`] is PyTorch's `pad_mm` feature set with its 26 operations, typed: the fast path
//! that every heuristic of that optimisation shares.
//!
//! It lives in the core, next to the semantics it mirrors ([`crate::model::ModelEvaluator`]),
//! so that every crate ah-codegen writes into has it without copying it into each module, and
//! so that one test suite pins it. Python's arithmetic on typed scalars is
//! [`crate::ops::scalar`]'s.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::heuristic::UnsureKind;
use crate::ops::{EvalError, Operation};
use crate::{Context, Feature, Value};

mod heuristic;
pub mod pad_mm;

pub use heuristic::{GeneratedHeuristic, Predict};

/// The id of the last [`crate::Schema`] whose contexts a generated module found to hold its
/// logged layout (0: none yet), so that the names are compared once per schema.
///
/// Exact: schema ids are never reused and a context carries an id only while it holds that
/// schema's names in order ([`Context::schema_id`]), so a context with the stored id holds
/// the layout. Threads deciding with different schemas each fall back to the comparison (the
/// last one stored wins), never to a wrong answer.
#[derive(Debug, Default)]
pub struct VerifiedSchema(AtomicU64);

impl VerifiedSchema {
    /// No schema verified yet.
    pub const fn new() -> Self {
        VerifiedSchema(AtomicU64::new(0))
    }

    /// `ctx`'s features when they are named `layout`, exactly and in order, else `None`:
    /// without comparing names when its schema was verified before; else comparing them, and
    /// remembering its schema (if any) when they match.
    #[inline]
    pub fn laid_out<'c, const N: usize>(
        &self,
        ctx: &'c Context,
        layout: &[&str; N],
    ) -> Option<&'c [Feature; N]> {
        let features: &[Feature; N] = ctx.features().try_into().ok()?;
        let id = ctx.schema_id();
        if let Some(id) = id {
            if self.0.load(Ordering::Relaxed) == id.get() {
                return Some(features);
            }
        }
        if features.iter().zip(layout).any(|(f, n)| f.name != *n) {
            return None;
        }
        if let Some(id) = id {
            self.0.store(id.get(), Ordering::Relaxed);
        }
        Some(features)
    }

    /// The values of the features named `layout`: by position when `ctx` holds them in
    /// order ([`VerifiedSchema::laid_out`]), else by name ([`read_by_name`]).
    #[inline(always)]
    pub fn read<'c, const N: usize>(
        &self,
        ctx: &'c Context,
        layout: &[&str; N],
    ) -> [Option<&'c Value>; N] {
        let Some(features) = self.laid_out(ctx, layout) else {
            return read_by_name(ctx, layout);
        };
        // A loop, not `each_ref().map(..)`: the array's `map` is not inlined, and costs a
        // decision as much as its tree.
        let mut out = [None; N];
        for (o, f) in out.iter_mut().zip(features) {
            *o = Some(&f.value);
        }
        out
    }
}

/// The values of the features named `names`, by name: a feature missing from `ctx` is
/// `None`; of several of one name, the last (it shadows the others, as in
/// [`Context::get`]).
#[inline]
pub fn read_by_name<'c, const N: usize>(
    ctx: &'c Context,
    names: &[&str; N],
) -> [Option<&'c Value>; N] {
    let mut out = [None; N];
    for f in ctx.features() {
        if let Some(i) = names.iter().position(|n| f.name == *n) {
            out[i] = Some(&f.value);
        }
    }
    out
}

/// A numeric value (booleans count as 0/1); `None` when missing or a string.
#[inline]
pub fn number(v: Option<&Value>) -> Option<f64> {
    match v {
        Some(Value::Int(i)) => Some(*i as f64),
        Some(Value::Float(f)) => Some(*f),
        Some(Value::Bool(b)) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

/// [`number`], else unsure naming the feature.
#[inline]
pub fn num(v: Option<&Value>, name: &'static str) -> Result<f64, UnsureKind> {
    number(v).ok_or(UnsureKind::MissingFeature(name))
}

/// A value that must be present, else unsure naming the feature.
#[inline]
pub fn present<'a>(v: Option<&'a Value>, name: &'static str) -> Result<&'a Value, UnsureKind> {
    v.ok_or(UnsureKind::MissingFeature(name))
}

/// A feature's range in the training data (both ends included).
#[derive(Debug, Clone, Copy)]
pub struct FeatureRange {
    /// The feature.
    pub name: &'static str,
    /// Smallest value seen in training.
    pub min: f64,
    /// Largest value seen in training.
    pub max: f64,
}

/// The range guard: in table order, a feature whose value is not numeric (`None`) is missing,
/// one outside its range is out of range; the first failure wins. Gives the checked values.
#[inline]
pub fn range_guard<const N: usize>(
    ranges: &[FeatureRange; N],
    values: [Option<f64>; N],
) -> Result<[f64; N], UnsureKind> {
    let mut out = [0.0; N];
    for ((r, v), o) in ranges.iter().zip(values).zip(&mut out) {
        let v = v.ok_or(UnsureKind::MissingFeature(r.name))?;
        if !(r.min..=r.max).contains(&v) {
            return Err(UnsureKind::OutOfRange(r.name));
        }
        *o = v;
    }
    Ok(out)
}

/// [`range_guard`] on the generic path: each feature's value is read by name from `s`, the
/// context with the operations' values.
#[inline]
pub fn range_guard_by_name<const N: usize>(
    ranges: &[FeatureRange; N],
    s: &Context,
) -> Result<[f64; N], UnsureKind> {
    range_guard(ranges, ranges.each_ref().map(|r| number(s.get(r.name))))
}

/// A one-hot column's category: Python's `str(value) == text`, decided without formatting
/// (the generator works out which integer, float or boolean prints as `text`).
#[derive(Debug, Clone, Copy)]
pub struct Category {
    /// The category as logged.
    pub text: &'static str,
    /// The integer whose `str()` is `text`, if any.
    pub int: Option<i64>,
    /// The bits of the float whose `str()` is `text`, if any (`nan` is [`Category::nan`]).
    pub float_bits: Option<u64>,
    /// `text` is `nan`.
    pub nan: bool,
}

impl Category {
    /// A category that no integer, float or NaN prints as (`torch.float16`, `False`).
    pub const fn text(text: &'static str) -> Self {
        Category {
            text,
            int: None,
            float_bits: None,
            nan: false,
        }
    }

    /// Whether `str(v) == self.text`.
    #[inline]
    pub fn matches(&self, v: &Value) -> bool {
        match v {
            Value::Str(s) => s == self.text,
            Value::Bool(b) => self.text == if *b { "True" } else { "False" },
            Value::Int(i) => self.int == Some(*i),
            Value::Float(f) if f.is_nan() => self.nan,
            Value::Float(f) => self.float_bits == Some(f.to_bits()),
        }
    }
}

/// A model's operations for the generic path: parsed once, evaluated with [`crate::ops`] on a
/// copy of the context, as [`crate::model::ModelEvaluator`] does.
#[derive(Debug)]
pub struct Operations {
    /// (name, expression, categorical), in order.
    specs: &'static [(&'static str, &'static str, bool)],
    /// Every name the operations read (for allocation-free unsure reasons).
    inputs: &'static [&'static str],
    parsed: OnceLock<Vec<Operation>>,
}

impl Operations {
    /// The operations of a generated module.
    pub const fn new(
        specs: &'static [(&'static str, &'static str, bool)],
        inputs: &'static [&'static str],
    ) -> Self {
        Operations {
            specs,
            inputs,
            parsed: OnceLock::new(),
        }
    }

    fn parsed(&self) -> &[Operation] {
        self.parsed.get_or_init(|| {
            self.specs
                .iter()
                .map(|(name, expr, categorical)| {
                    Operation::parse(name, expr, *categorical).expect("generated operations parse")
                })
                .collect()
        })
    }

    /// The context with every operation's value set; a failure is unsure, naming the
    /// missing input or the operation.
    pub fn apply(&self, ctx: &Context) -> Result<Context, UnsureKind> {
        let mut s = ctx.clone();
        for (op, (name, _, _)) in self.parsed().iter().zip(self.specs) {
            let v = op.expr.eval(&|n| s.get(n).cloned()).map_err(|e| match e {
                EvalError::UnknownFeature(f) => UnsureKind::MissingFeature(
                    self.inputs
                        .iter()
                        .copied()
                        .find(|n| *n == f)
                        .unwrap_or(name),
                ),
                _ => UnsureKind::MissingFeature(name),
            })?;
            s.set(op.name.clone(), v, op.is_categorical);
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verified_schema_compares_names_once_per_schema_and_exactly() {
        use crate::Schema;
        static VERIFIED: VerifiedSchema = VerifiedSchema::new();
        let values = || vec![Value::Int(1), Value::Int(2)];
        let ab = Schema::new([("a", false), ("b", false)]);
        let ba = Schema::new([("b", false), ("a", false)]);
        let c = Context::from_schema(&ab, values()).unwrap();
        assert!(VERIFIED.laid_out(&c, &["a", "b"]).is_some());
        assert_eq!(VERIFIED.0.load(Ordering::Relaxed), ab.id().get());
        // Verified: held without comparing names (a layout it does not hold shows it).
        assert!(VERIFIED.laid_out(&c, &["x", "y"]).is_some());
        // Another schema with other names is compared, and does not replace the verified one.
        let swapped = Context::from_schema(&ba, values()).unwrap();
        assert!(VERIFIED.laid_out(&swapped, &["a", "b"]).is_none());
        assert_eq!(VERIFIED.0.load(Ordering::Relaxed), ab.id().get());
        // A mutated context has no id: compared by name.
        let mut grown = c.clone();
        grown.add("z", 3i64);
        assert!(VERIFIED.laid_out(&grown, &["a", "b"]).is_none());
        let mut added = Context::new();
        added.add("a", 1i64).add("b", 2i64);
        assert!(VERIFIED.laid_out(&added, &["a", "b"]).is_some());
        assert!(VERIFIED.laid_out(&added, &["a", "c"]).is_none());
    }

    #[test]
    fn range_guard_reports_the_first_failure() {
        let ranges = [
            FeatureRange {
                name: "a",
                min: 0.0,
                max: 1.0,
            },
            FeatureRange {
                name: "b",
                min: 0.0,
                max: 1.0,
            },
        ];
        assert_eq!(range_guard(&ranges, [Some(0.5), Some(1.0)]), Ok([0.5, 1.0]));
        assert_eq!(
            range_guard(&ranges, [Some(2.0), None]),
            Err(UnsureKind::OutOfRange("a"))
        );
        assert_eq!(
            range_guard(&ranges, [None, Some(2.0)]),
            Err(UnsureKind::MissingFeature("a"))
        );
        assert_eq!(
            range_guard(&ranges, [Some(f64::NAN), Some(0.0)]),
            Err(UnsureKind::OutOfRange("a"))
        );
    }

    #[test]
    fn range_guard_by_name_reads_the_context() {
        let ranges = [FeatureRange {
            name: "a",
            min: 0.0,
            max: 1.0,
        }];
        let mut s = Context::new();
        assert_eq!(
            range_guard_by_name(&ranges, &s),
            Err(UnsureKind::MissingFeature("a"))
        );
        s.add("a", true);
        assert_eq!(range_guard_by_name(&ranges, &s), Ok([1.0]));
        static VERIFIED: VerifiedSchema = VerifiedSchema::new();
        assert_eq!(VERIFIED.read(&s, &["a"]), [Some(&Value::Bool(true))]);
        assert_eq!(VERIFIED.read(&s, &["b"]), [None]);
        let names = read_by_name(&s, &["b", "a"]);
        assert_eq!(names, [None, Some(&Value::Bool(true))]);
    }

    #[test]
    fn category_matches_like_python_str() {
        let one = Category {
            text: "1",
            int: Some(1),
            float_bits: None,
            nan: false,
        };
        assert!(one.matches(&Value::Int(1)));
        assert!(one.matches(&Value::Str("1".into())));
        assert!(!one.matches(&Value::Bool(true)));
        let f = Category::text("False");
        assert!(f.matches(&Value::Bool(false)));
        assert!(!f.matches(&Value::Int(0)));
        let nan = Category {
            text: "nan",
            int: None,
            float_bits: None,
            nan: true,
        };
        assert!(nan.matches(&Value::Float(f64::NAN)));
        let half = Category {
            text: "0.5",
            int: None,
            float_bits: Some(0.5f64.to_bits()),
            nan: false,
        };
        assert!(half.matches(&Value::Float(0.5)));
        assert_eq!(number(Some(&Value::Bool(true))), Some(1.0));
        assert_eq!(num(None, "x"), Err(UnsureKind::MissingFeature("x")));
    }

    #[test]
    fn operations_fail_like_the_evaluator() {
        static OPS: Operations = Operations::new(&[("q", "a / b", false)], &["a", "b"]);
        let mut ctx = Context::new();
        ctx.add("a", Value::Int(1));
        assert_eq!(OPS.apply(&ctx).err(), Some(UnsureKind::MissingFeature("b")));
        ctx.add("b", Value::Int(0));
        assert_eq!(OPS.apply(&ctx).err(), Some(UnsureKind::MissingFeature("q")));
        ctx.set("b".to_string(), Value::Int(4), false);
        assert_eq!(OPS.apply(&ctx).unwrap().get("q"), Some(&Value::Float(0.25)));
    }
}
