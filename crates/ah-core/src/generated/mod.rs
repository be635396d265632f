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

mod category;
mod guard;
mod heuristic;
mod operations;
pub mod pad_mm;
mod read;

pub use category::Category;
pub use guard::{range_guard, range_guard_by_name, FeatureRange};
pub use heuristic::{GeneratedHeuristic, Predict};
pub use operations::Operations;
pub use read::{num, number, present, read_by_name, VerifiedSchema};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heuristic::UnsureKind;
    use crate::{Context, Value};

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
